"""The archive container against other tools: zips amber writes are read by Python's zipfile
and `unzip`, zips zipfile writes (ZIP64 too) are read by amber, and .npy headers are byte for
byte NumPy's."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import warnings
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import amber
from amber import Archive, _native
from amber.archive._source import MemorySource
from amber.archive._zip import ZipSink, read_directory, read_entry, unpack


def amber_zip(path: Path, entries: dict[str, bytes], method: Any = "stored") -> None:
    with open(path, "wb") as f:
        sink = ZipSink(f, 0)
        for name, data in entries.items():
            sink.add(name, data, method)
        sink.finish()


ENTRIES = {"a.txt": b"hello " * 1000, "dir/b.bin": bytes(range(256)) * 64, "empty": b""}


@pytest.mark.parametrize("method", ["stored", "deflate"])
def test_python_zipfile_reads_what_amber_writes(tmp_path: Path, method: Any) -> None:
    path = tmp_path / "z.zip"
    amber_zip(path, ENTRIES, method)
    with zipfile.ZipFile(path) as z:
        assert z.testzip() is None
        assert z.namelist() == list(ENTRIES)
        for name, data in ENTRIES.items():
            assert z.read(name) == data
    out = subprocess.run([sys.executable, "-m", "zipfile", "-t", str(path)], capture_output=True)
    assert out.returncode == 0


@pytest.mark.skipif(sys.version_info < (3, 14), reason="zipfile reads zstd from Python 3.14")
def test_python_zipfile_reads_amber_zstd(tmp_path: Path) -> None:
    amber_zip(tmp_path / "z.zip", ENTRIES, "zstd")
    with zipfile.ZipFile(tmp_path / "z.zip") as z:
        assert z.testzip() is None


@pytest.mark.skipif(shutil.which("unzip") is None, reason="no unzip binary")
def test_unzip_reads_what_amber_writes(tmp_path: Path) -> None:
    amber_zip(tmp_path / "z.zip", ENTRIES, "deflate")
    assert subprocess.run(["unzip", "-tq", str(tmp_path / "z.zip")]).returncode == 0
    listing = subprocess.run(
        ["unzip", "-l", str(tmp_path / "z.zip")], capture_output=True, text=True
    )
    assert "dir/b.bin" in listing.stdout


@pytest.mark.parametrize("zip64", [False, True])
@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_amber_reads_what_python_zipfile_writes(
    tmp_path: Path, zip64: bool, compression: int
) -> None:
    path = tmp_path / "p.zip"
    with zipfile.ZipFile(path, "w", compression=compression) as z:
        for name, data in ENTRIES.items():
            with z.open(name, "w", force_zip64=zip64) as f:
                f.write(data)
    source = MemorySource(path.read_bytes())
    entries = read_directory(source, None)
    assert list(entries) == list(ENTRIES)
    for name, data in ENTRIES.items():
        entry = entries[name]
        assert bytes(unpack(entry, read_entry(source, entry))) == data


def test_written_entries_are_aligned_and_deterministic(tmp_path: Path) -> None:
    amber_zip(tmp_path / "1.zip", ENTRIES)
    amber_zip(tmp_path / "2.zip", ENTRIES)
    data = (tmp_path / "1.zip").read_bytes()
    assert data == (tmp_path / "2.zip").read_bytes()
    with zipfile.ZipFile(tmp_path / "1.zip") as z:
        for info in z.infolist():
            assert info.date_time == (1980, 1, 1, 0, 0, 0)
    source = MemorySource(data)
    for entry in read_directory(source, None).values():
        head = data[entry.header_offset : entry.header_offset + 30]
        local = data[entry.header_offset : entry.header_offset + _native.zip_local_need(head)]
        assert _native.zip_data_offset(local, entry) % 64 == 0, entry.name


DTYPES = ["<f8", ">i4", "|u1", "<U7", "|S3", "|b1", "<c16", "<M8[ns]", "<m8[s]", "<f2"]
STRUCTURED = [
    [("a", "<i4"), ("b", "<f8", (2, 3))],
    [("nested", [("x", "|u1"), ("y", "<U2")]), ("z", ">f4")],
    np.dtype({"names": ["a", "b"], "formats": ["<i2", "<i8"], "offsets": [0, 8], "itemsize": 24}),
    [("é", "|u1")],
    [("Ω", "|u1")],
]


@pytest.mark.parametrize("dtype", DTYPES + STRUCTURED, ids=str)
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 5), (1, 2, 3)], ids=str)
@pytest.mark.parametrize("fortran", [False, True])
def test_npy_headers_are_numpys(dtype: Any, shape: tuple[int, ...], fortran: bool) -> None:
    arr = np.zeros(shape, dtype=dtype, order="F" if fortran else "C")
    expected = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.lib.format.write_array(expected, arr, allow_pickle=False)
    numpy_fortran = arr.flags.f_contiguous and not arr.flags.c_contiguous
    descr = repr(np.lib.format.dtype_to_descr(arr.dtype))
    header = _native.npy_header(descr, numpy_fortran, arr.shape)
    assert expected.getvalue()[: len(header)] == header
    parsed_descr, parsed_fortran, parsed_shape, offset = _native.npy_parse_header(header)
    assert offset == len(header) and parsed_shape == arr.shape
    assert parsed_fortran == numpy_fortran
    assert np.lib.format.descr_to_dtype(parsed_descr) == arr.dtype


def test_archive_npy_entries_load_with_numpy(tmp_path: Path) -> None:
    arr = np.arange(24, dtype=">i8").reshape(2, 3, 4)
    with Archive(tmp_path / "a.zip", "w") as a:
        a["arr"] = arr
        a["f"] = np.asfortranarray(arr)
    with zipfile.ZipFile(tmp_path / "a.zip") as z:
        for name in ("arr.npy", "f.npy"):
            with z.open(name) as f:
                assert np.array_equal(np.load(io.BytesIO(f.read()), allow_pickle=False), arr)


def test_streamed_entries_are_the_same_through_any_file(tmp_path: Path) -> None:
    from amber.archive._zip import Stream

    pieces = [os.urandom(300_000), b"", bytes(1 << 20), b"tail"]

    def stream(out: Any) -> None:
        for p in pieces:
            out.write(memoryview(p))

    def unbuffered() -> Any:
        return open(tmp_path / "raw", "w+b", buffering=0)

    outputs = []
    for opener in (io.BytesIO, unbuffered):
        with opener() as f:
            sink = ZipSink(f, 0)
            written = sink.add("s.bin", Stream(sum(map(len, pieces)), stream))
            sink.finish()
            f.seek(0)
            outputs.append((f.read(), written.crc32, written.blake3))
    assert outputs[0] == outputs[1]
    with zipfile.ZipFile(io.BytesIO(outputs[0][0])) as z:
        assert z.read("s.bin") == b"".join(pieces)


def test_zstd_levels_default_by_kind_of_data(tmp_path: Path) -> None:
    arr = np.random.default_rng(1).integers(0, 10_000, 300_000)
    rec = [{"id": i, "name": f"n{i % 50}"} for i in range(20_000)]
    with Archive(tmp_path / "z.zip", "w", compression="zstd") as a:
        a["arr"] = arr
        a["rec"] = rec
        a.put("arr3", arr, level=3)
    with zipfile.ZipFile(tmp_path / "z.zip") as z:
        sizes = {i.filename: i.compress_size for i in z.infolist()}
    out = io.BytesIO()
    np.save(out, arr)  # amber's .npy entries are byte for byte NumPy's
    npy = out.getvalue()
    frame = amber.dumps(rec, deterministic=True)
    # int64 arrays are shuffled by 8 bytes before they are compressed.
    assert sizes["arr.npy"] == len(_streamed(npy, "zstd", _native.ZSTD_BINARY_LEVEL, 8))
    assert sizes["arr3.npy"] == len(_streamed(npy, "zstd", 3, 8))
    assert sizes["rec.amber"] == len(_native.archive_compress(frame, "zstd", None))


def _streamed(data: bytes, method: str, level: int | None, shuffle: int = 0) -> bytes:
    """`data` compressed as arrays and tables are written: streamed, in one piece."""
    c = _native.StreamCompressor(method, level, len(data), shuffle)  # type: ignore[arg-type]
    head = c.write(data)
    tail, crc, _ = c.finish()
    assert (crc == zlib.crc32(data)) == (shuffle == 0)
    return head + tail


@pytest.mark.parametrize("method", ["zstd", "deflate"])
def test_streamed_compression_is_the_same_whatever_the_pieces(method: str) -> None:
    """Arrays and tables are compressed as their pieces are written: the output depends only on
    the content (archives stay byte-identical), it decompresses to the content, and a stream
    that does not give its declared size is refused."""
    rng = np.random.default_rng(3)
    data = rng.integers(0, 1000, 1_200_000).tobytes() + rng.standard_normal(100_000).tobytes()
    whole = _streamed(data, method, None)
    for split in (4096, 77_777, 1 << 20):
        c = _native.StreamCompressor(method, None, len(data))  # type: ignore[arg-type]
        parts = [c.write(data[i : i + split]) for i in range(0, len(data), split)]
        tail, crc, digest = c.finish()
        assert b"".join(parts) + tail == whole
        assert (crc, digest) == _native.archive_digest(data)
    size, crc = len(data), zlib.crc32(data)
    assert _native.archive_decompress(whole, method, size, crc, "x") == data
    short = _native.StreamCompressor(method, None, 10)  # type: ignore[arg-type]
    with pytest.raises(amber.AmberError, match="declared size"):
        short.write(b"x" * 11)
    unfinished = _native.StreamCompressor(method, None, 10)  # type: ignore[arg-type]
    unfinished.write(b"x" * 9)
    with pytest.raises(amber.AmberError, match="not its declared"):
        unfinished.finish()
