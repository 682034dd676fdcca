"""Reading archives and the zips amber did not write, as an attacker and an unlucky user would
have them: every checksum that exists is checked (the manifest's CRC-32 at open, `.npz` and
DataZip entries on every read and by `verify`), the manifest is never inflated or trusted
beyond what it says once, keys the zip cannot hold are refused before a write starts, a file
cut or rewritten under an open archive is an error rather than a crash, and every error about
one entry names it."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import struct
import subprocess
import sys
import textwrap
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import amber
from amber import Archive, ArchiveError, _native
from amber.archive._manifest import MAX_KEY_BYTES, NAME, check_key


def digest(data: bytes) -> str:
    return _native.archive_digest(data)[1]


def npy_bytes(arr: np.ndarray) -> bytes:
    b = io.BytesIO()
    np.save(b, arr)
    return b.getvalue()


def crafted(
    path: Path,
    entries: dict[str, bytes],
    manifest: str | bytes | None,
    method: int = zipfile.ZIP_STORED,
    manifest_method: int = zipfile.ZIP_STORED,
) -> Path:
    """A zip written by Python's zipfile: `entries`, then the manifest (if any)."""
    with zipfile.ZipFile(path, "w") as z:
        for name, data in entries.items():
            z.writestr(zipfile.ZipInfo(name), data, compress_type=method)
        if manifest is not None:
            z.writestr(zipfile.ZipInfo(NAME), manifest, compress_type=manifest_method)
    return path


def manifest_for(keys: dict[str, Any], entries: dict[str, bytes]) -> dict[str, Any]:
    return {
        "amber_archive": 1,
        "keys": keys,
        "entries": {
            n: {"size": len(d), "method": "stored", "blake3": digest(d)} for n, d in entries.items()
        },
    }


def small_archive(path: Path) -> bytes:
    with Archive(path, "w") as a:
        a["config"] = {"lr": 0.1}
        a["df"] = pd.DataFrame({"x": [1, 2]})
        a["w"] = np.arange(4.0)
    return path.read_bytes()


def manifest_span(raw: bytes) -> tuple[int, int]:
    """Where the manifest's stored bytes lie in the file."""
    with zipfile.ZipFile(io.BytesIO(raw)) as z:
        info = z.getinfo(NAME)
    n, m = struct.unpack("<HH", raw[info.header_offset + 26 : info.header_offset + 30])
    start = info.header_offset + 30 + n + m
    return start, start + info.compress_size


# --- the manifest's CRC-32 ---------------------------------------------------------------------


def test_every_bit_flip_of_the_manifest_is_refused_at_open(tmp_path: Path) -> None:
    raw = small_archive(tmp_path / "a.zip")
    start, end = manifest_span(raw)
    assert end - start > 200
    for bit in range((end - start) * 8):
        bad = bytearray(raw)
        bad[start + bit // 8] ^= 1 << (bit % 8)
        with pytest.raises(ArchiveError) as e:
            Archive(bytes(bad))
        assert e.value.kind in ("checksum", "malformed"), (bit, e.value)
        assert e.value.entry == NAME, (bit, e.value)


def test_a_flipped_kind_is_refused_not_read_as_another_type(tmp_path: Path) -> None:
    raw = bytearray(small_archive(tmp_path / "a.zip"))
    i = raw.find(b'"kind": 2')
    raw[i + len('"kind": ')] ^= 0x02  # 2 -> 0: a DataFrame would come back a pyarrow Table
    path = tmp_path / "flipped.zip"
    path.write_bytes(raw)
    with pytest.raises(ArchiveError, match="CRC-32") as e:
        Archive(path)
    assert e.value.kind == "checksum" and str(path) in str(e.value)
    cli = subprocess.run(
        [sys.executable, "-m", "amber", "verify", str(path)], capture_output=True, text=True
    )
    assert cli.returncode != 0


# --- the manifest is stored, and parsed strictly -----------------------------------------------


@pytest.mark.parametrize("method", [zipfile.ZIP_DEFLATED, "zstd"])
@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="peak memory from /proc")
def test_a_compressed_manifest_is_refused_before_it_is_inflated(
    tmp_path: Path, method: Any
) -> None:
    """A manifest of 256 MiB of spaces fits in a few kB compressed: opening must not inflate
    it (the child process's peak memory stays far below it)."""
    body = b'{"amber_archive": 1, "keys": {}, "entries": {}}'
    body += b" " * ((256 << 20) - len(body))
    path = tmp_path / "bomb.zip"
    if method == "zstd":
        z = bytes(_native.archive_compress(body, "zstd", 3))
        name = NAME.encode()
        crc = zlib.crc32(body)
        local = struct.pack(
            "<IHHHHHIIIHH", 0x04034B50, 63, 0x800, 93, 0, 33, crc, len(z), len(body), len(name), 0
        )
        cd = struct.pack(
            "<IHHHHHHIIIHHHHHII",
            *(0x02014B50, 0x33F, 63, 0x800, 93, 0, 33, crc, len(z), len(body), len(name)),
            *(0, 0, 0, 0, 0o100644 << 16, 0),
        )
        end = struct.pack(
            "<IHHHHIIH",
            0x06054B50,
            0,
            0,
            1,
            1,
            len(cd) + len(name),
            len(local) + len(name) + len(z),
            0,
        )
        path.write_bytes(local + name + z + cd + name + end)
    else:
        crafted(path, {}, body, manifest_method=method)
    del body
    assert path.stat().st_size < 2 << 20
    child = textwrap.dedent(
        f"""
        import amber
        try:
            amber.Archive({str(path)!r})
            print("opened")
        except amber.ArchiveError as e:
            print(e.kind, e.entry)
        status = open("/proc/self/status").read().split("VmHWM:")[1].split()[0]
        print(int(status) // 1024)
        """
    )
    out = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, check=True)
    result, peak = out.stdout.splitlines()
    assert result == f"unsupported {NAME}"
    assert int(peak) < 200  # MiB: the interpreter with numpy and pyarrow, nothing inflated


ENT = {"config.amber": amber.dumps({"a": 1}), "b.amber": amber.dumps({"b": 2})}
KEY = {"type": "dict", "encoding": "amber", "entries": ["config.amber"]}


def manifest_cases() -> dict[str, str]:
    entries = json.dumps(manifest_for({}, ENT)["entries"])
    key = json.dumps(KEY)
    other = json.dumps({**KEY, "entries": ["b.amber"]})
    head = '{"amber_archive": 1, "keys": {"config": ' + key + "}, "
    return {
        "deep nesting": head
        + '"entries": '
        + entries
        + ', "x": '
        + "[" * 100_000
        + "]" * 100_000
        + "}",
        "deep objects": head
        + '"entries": '
        + entries
        + ', "x": '
        + '{"a":' * 50_000
        + "1"
        + "}" * 50_001,
        "5000-digit int": head + '"entries": ' + entries + ', "x": ' + "9" * 5000 + "}",
        "huge size": head.replace("1", "1", 1)
        + '"entries": '
        + entries.replace(f'"size": {len(ENT["config.amber"])}', '"size": ' + "1" * 5000)
        + "}",
        "version 0": json.dumps({**manifest_for({"config": KEY}, ENT), "amber_archive": 0}),
        "version -7": json.dumps({**manifest_for({"config": KEY}, ENT), "amber_archive": -7}),
        "version 99": json.dumps({**manifest_for({"config": KEY}, ENT), "amber_archive": 99}),
        "version true": json.dumps({**manifest_for({"config": KEY}, ENT), "amber_archive": True}),
        "version '1'": json.dumps({**manifest_for({"config": KEY}, ENT), "amber_archive": "1"}),
        "key twice": '{"amber_archive": 1, "keys": {"config": '
        + key
        + ', "config": '
        + other
        + '}, "entries": '
        + entries
        + "}",
        "top-level name twice": head + '"entries": ' + entries + ', "keys": {}}',
        "entry field twice": head
        + '"entries": '
        + entries.replace('"method": "stored"', '"method": "stored", "method": "zstd"', 1)
        + "}",
        "not UTF-8": head + '"entries": ' + entries + ', "x": "\xff"}',
        "not an object": "[1, 2]",
    }


@pytest.mark.parametrize("case", list(manifest_cases()))
def test_manifest_json_edge_cases_are_archive_errors(tmp_path: Path, case: str) -> None:
    text = manifest_cases()[case]
    data = text.encode("latin-1") if case == "not UTF-8" else text.encode()
    path = crafted(tmp_path / "m.zip", ENT, data)
    if case == "deep objects" and sys.version_info >= (3, 14):
        # CPython 3.14's json parses 50,000 nested objects without running out of stack: the
        # manifest is then valid, and the field amber does not know is ignored.
        with Archive(path) as a:
            assert a["config"] == {"a": 1}
        return
    with pytest.raises(ArchiveError) as e:
        Archive(path)
    assert e.value.kind in ("malformed", "unsupported", "size_mismatch"), e.value
    assert e.value.entry == NAME or e.value.entry in ENT


# --- .npz and DataZip files: their CRC-32s ------------------------------------------------------


def corrupt_stored(raw: bytes, name: str, flip_at: int) -> bytes:
    """`raw` (a zip) with one bit flipped in entry `name`'s stored data; CRCs left as they were."""
    with zipfile.ZipFile(io.BytesIO(raw)) as z:
        info = z.getinfo(name)
    n, m = struct.unpack("<HH", raw[info.header_offset + 26 : info.header_offset + 30])
    start = info.header_offset + 30 + n + m
    bad = bytearray(raw)
    bad[start + flip_at] ^= 0x10
    return bytes(bad)


def test_every_corrupt_byte_of_a_stored_npz_entry_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "ok.npz"
    np.savez(path, w=np.arange(40.0), i=np.arange(7))
    raw = path.read_bytes()
    with Archive(path) as a:
        assert a.verify() == []
        assert np.array_equal(a["w"], np.arange(40.0))
    size = len(npy_bytes(np.arange(40.0)))
    for at in range(size):  # header and data alike
        bad = corrupt_stored(raw, "w.npy", at)
        with Archive(bad) as a:
            with pytest.raises(ArchiveError) as e:
                a["w"]
            assert e.value.kind == "checksum" and e.value.entry == "w.npy"
            problems = a.verify()
            assert len(problems) == 1 and "w.npy" in problems[0] and "CRC-32" in problems[0]
            assert np.array_equal(a["i"], np.arange(7))  # the other entry is fine


def test_a_corrupt_npz_is_not_migrated(tmp_path: Path) -> None:
    path = tmp_path / "old.npz"
    np.savez(path, w=np.arange(6.0))
    path.write_bytes(corrupt_stored(path.read_bytes(), "w.npy", 130))
    with (
        pytest.raises(ArchiveError, match="CRC-32"),
        Archive(path) as old,
        Archive(tmp_path / "new.zip", "w") as new,
    ):
        for key in old:
            new[key] = old[key]
    assert not (tmp_path / "new.zip").exists()


@pytest.mark.parametrize("compressed", [False, True])
def test_verify_checks_npz_files_without_key_errors(tmp_path: Path, compressed: bool) -> None:
    path = tmp_path / "ok.npz"
    (np.savez_compressed if compressed else np.savez)(path, a=np.arange(3), b=np.ones((2, 2)))
    with Archive(path) as a:
        assert a.verify() == []
    cli = subprocess.run([sys.executable, "-m", "amber", "verify", str(path)], capture_output=True)
    assert cli.returncode == 0, cli.stderr


def datazip_file(path: Path, attrs: Any, extra: dict[str, bytes], method: int) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(zipfile.ZipInfo("__attributes__.json"), json.dumps(attrs), compress_type=method)
        for n, data in extra.items():
            z.writestr(zipfile.ZipInfo(n), data, compress_type=method)
        z.writestr(zipfile.ZipInfo("__metadata__.json"), json.dumps({"__rev__": 2}))
    return path


def test_datazip_entries_are_checked_against_their_crc(tmp_path: Path) -> None:
    attrs = {"__state__": {}, "w": {"__type__": "ndarray", "__loc__": "w.npy"}, "n": 3}
    path = datazip_file(tmp_path / "dz.zip", attrs, {"w.npy": npy_bytes(np.arange(5.0))}, 0)
    raw = path.read_bytes()
    with Archive(path) as a:
        assert a.verify() == [] and a["n"] == 3
    with Archive(corrupt_stored(raw, "w.npy", 140)) as a:
        with pytest.raises(ArchiveError) as e:
            a["w"]
        assert e.value.kind == "checksum" and e.value.entry == "w.npy"
        assert any("w.npy" in p for p in a.verify())
    with pytest.raises(ArchiveError) as e:  # the attributes, read at open
        Archive(corrupt_stored(raw, "__attributes__.json", 3))
    assert e.value.kind == "checksum"


# --- DataZip: names kept, malformed files refused as ArchiveError ------------------------------


def test_datazip_series_keep_their_names(tmp_path: Path) -> None:
    pl = pytest.importorskip("polars")
    b = io.BytesIO()
    pl.Series("speed", [1.0, 2.0]).to_frame("IGNORE").write_parquet(b)
    attrs = {
        "__state__": {},
        "none": {"__type__": "pdSeries", "__loc__": "s.parquet", "no_pqt_cols": [None, None]},
        "named": {"__type__": "pdSeries", "__loc__": "t.parquet", "no_pqt_cols": ["x", None]},
        "tuple": {"__type__": "pdSeries", "__loc__": "u.parquet", "no_pqt_cols": [["a", 1], None]},
        "p": {"__type__": "plSeries", "__loc__": "p.parquet", "col_name": "speed"},
    }
    s = pd.Series([1, 2])
    extra = {
        "s.parquet": s.to_frame().to_parquet(),
        "t.parquet": s.rename("x").to_frame().to_parquet(),
        "u.parquet": s.rename("ignored").to_frame().to_parquet(),
        "p.parquet": b.getvalue(),
    }
    with Archive(datazip_file(tmp_path / "dz.zip", attrs, extra, zipfile.ZIP_DEFLATED)) as a:
        assert a["none"].name is None and list(a["none"]) == [1, 2]
        assert a["named"].name == "x"
        assert a["tuple"].name == ("a", 1)
        assert a["p"].name == "speed" and a["p"].to_list() == [1.0, 2.0]


class Thing:
    pass


def malformed_datazips() -> dict[str, tuple[Any, dict[str, bytes], str]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    empty = io.BytesIO()
    pq.write_table(pa.table({"a": pa.array([], pa.int64())}).drop(["a"]), empty)
    two = io.BytesIO()
    pq.write_table(pa.table({"a": [1], "b": [2]}), two)
    att = "__attributes__.json"
    return {
        "missing ndarray entry": (
            {"k": {"__type__": "ndarray", "__loc__": "nope.npy"}},
            {},
            "nope.npy",
        ),
        "ndarray entry not npy": (
            {"k": {"__type__": "ndarray", "__loc__": "x.npy"}},
            {"x.npy": b"junk"},
            "x.npy",
        ),
        "parquet entry not parquet": (
            {"k": {"__type__": "pdDataFrame", "__loc__": "x.parquet"}},
            {"x.parquet": b"PAR1junkPAR1"},
            "x.parquet",
        ),
        "set of lists": ({"k": {"__type__": "set", "items": [[1, 2]]}}, {}, att),
        "frozenset of dicts": ({"k": {"__type__": "frozenset", "items": [{}]}}, {}, att),
        "bad datetime": ({"k": {"__type__": "datetime", "items": "not a date"}}, {}, att),
        "tuple items 5": ({"k": {"__type__": "tuple", "items": 5}}, {}, att),
        "Counter of an int": ({"k": {"__type__": "Counter", "items": 5}}, {}, att),
        "dict_aslist of ints": ({"k": {"__type__": "dict_aslist", "items": [1, 2]}}, {}, att),
        "deque of a float": ({"k": {"__type__": "deque", "items": 1.5}}, {}, att),
        "900-deep list": ('{"k": ' + "[" * 900 + "]" * 900 + "}", {}, att),
        "5000-deep list": ('{"k": ' + "[" * 5000 + "]" * 5000 + "}", {}, att),
        "900-deep dicts": ('{"k": ' + '{"a": ' * 900 + "1" + "}" * 901, {}, att),
        "Series from 0 columns": (
            {"k": {"__type__": "pdSeries", "__loc__": "k.parquet"}},
            {"k.parquet": empty.getvalue()},
            "k.parquet",
        ),
        "Series from 2 columns": (
            {"k": {"__type__": "plSeries", "__loc__": "k.parquet"}},
            {"k.parquet": two.getvalue()},
            "k.parquet",
        ),
        "no_pqt_cols not a pair": (
            {"k": {"__type__": "pdSeries", "__loc__": "k.parquet", "no_pqt_cols": 7}},
            {"k.parquet": pd.Series([1]).to_frame().to_parquet()},
            att,
        ),
        "object without state": ({"k": {"__type__": f"{__name__}|Thing", "__loc__": "x"}}, {}, att),
        "state of an int": (
            {"__state__": {"x": 5}, "k": {"__type__": f"{__name__}|Thing", "__loc__": "x"}},
            {},
            att,
        ),
    }


@pytest.mark.parametrize("case", list(malformed_datazips()))
def test_malformed_datazip_files_raise_archive_errors_naming_the_entry(
    tmp_path: Path, case: str
) -> None:
    amber.register(Thing)
    attrs, extra, entry = malformed_datazips()[case]
    path = tmp_path / "dz.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("__attributes__.json", attrs if isinstance(attrs, str) else json.dumps(attrs))
        for n, data in extra.items():
            z.writestr(n, data)
    with pytest.raises(ArchiveError) as e, Archive(path) as a:
        a["k"]
    assert e.value.entry == entry, e.value


def test_a_datazip_object_whose_state_refers_to_itself_is_a_cycle(tmp_path: Path) -> None:
    amber.register(Thing)
    attrs = {
        "__state__": {"x": {"me": {"__type__": f"{__name__}|Thing", "__loc__": "x"}, "n": 1}},
        "k": {"__type__": f"{__name__}|Thing", "__loc__": "x"},
    }
    with Archive(datazip_file(tmp_path / "dz.zip", attrs, {}, 0)) as a:
        thing = a["k"]
    assert isinstance(thing, Thing) and thing.me is thing and thing.n == 1  # type: ignore[attr-defined]


# --- keys the zip cannot hold are refused before the write -------------------------------------


@pytest.mark.parametrize(
    "key",
    ["q:1", "Z:", "c:/x", "a" * 70_000, "é" * (MAX_KEY_BYTES // 2 + 1), "bad\ud800", "x/", "/x"],
)
def test_keys_the_zip_cannot_hold_are_refused_before_writing(tmp_path: Path, key: str) -> None:
    path = tmp_path / "a.zip"
    with Archive(path, "w") as a:
        a["results"] = list(range(100))
        with pytest.raises(ValueError):
            a[key] = 2
        a["more"] = 3  # the archive is not broken
    with Archive(path) as a:
        assert sorted(a) == ["more", "results"]


@pytest.mark.parametrize(
    "key",
    ["ab:c", "1:x", "é:1", "x/q:1", ":", "a" * MAX_KEY_BYTES, "ü" * (MAX_KEY_BYTES // 2), "\u202e"],
)
def test_every_key_check_key_passes_can_be_written(tmp_path: Path, key: str) -> None:
    check_key(key)
    big = np.arange(20_000.0)
    value = {"big": big, "small": 1}  # an amber entry with a buffer entry
    with Archive(tmp_path / "a.zip", "w") as a:
        a[key] = value
    with Archive(tmp_path / "b.zip", "w") as b:
        b.put(key, pd.DataFrame({"a": [1]}), encoding="parquet")
    with Archive(tmp_path / "a.zip") as a, Archive(tmp_path / "b.zip") as b:
        assert np.array_equal(a[key]["big"], big)
        assert list(b[key]["a"]) == [1]


# --- errors name the entry ---------------------------------------------------------------------


def npy_raw(text: str, data: bytes = b"") -> bytes:
    h = text.encode("latin1")
    h += b" " * ((-(10 + len(h) + 1)) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h + data


NPY_CASES = {
    "negative dimension": npy_raw("{'descr': '<f8', 'fortran_order': False, 'shape': (-1,), }"),
    "2**64 dimension": npy_raw(
        "{'descr': '<f8', 'fortran_order': False, 'shape': (18446744073709551616,), }"
    ),
    "version 9": b"\x93NUMPY\x09\x00" + struct.pack("<I", 4) + b"{}  ",
    "header is code": npy_raw(
        "{'descr': __import__('os').getcwd(), 'fortran_order': False, 'shape': (1,), }"
    ),
    "cut header": npy_raw("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }")[:20],
    "not UTF-8 v3": b"\x93NUMPY\x03\x00" + struct.pack("<I", 4) + b"\xff\xfe  ",
    "empty": b"",
    "not npy": b"hello world, not an array",
    "short data": npy_raw("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", b"\0" * 8),
    "bad descr": npy_raw("{'descr': '<q9', 'fortran_order': False, 'shape': (1,), }", b"\0" * 8),
    "object dtype": npy_raw("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", b"\0" * 8),
}


@pytest.mark.parametrize("case", list(NPY_CASES))
def test_npy_header_errors_name_the_entry(tmp_path: Path, case: str) -> None:
    content = NPY_CASES[case]
    keys = {"w": {"type": "numpy.ndarray", "encoding": "npy", "entries": ["w.npy"]}}
    path = crafted(
        tmp_path / "x.zip", {"w.npy": content}, json.dumps(manifest_for(keys, {"w.npy": content}))
    )
    with pytest.raises(ArchiveError) as e:
        Archive(path)["w"]
    assert e.value.entry == "w.npy" and "w.npy" in str(e.value)
    if case == "object dtype":
        assert e.value.kind == "refused"


def test_an_npz_with_an_object_array_is_refused_not_malformed(tmp_path: Path) -> None:
    path = tmp_path / "obj.npz"
    np.savez(path, o=np.array([{"a": 1}, None], dtype=object), f=np.arange(2))
    with Archive(path) as a:
        assert list(a["f"]) == [0, 1]
        with pytest.raises(ArchiveError) as e:
            a["o"]
    assert e.value.kind == "refused" and e.value.entry == "o.npy" and "pickle" in str(e.value)


def test_local_header_errors_name_the_entry(tmp_path: Path) -> None:
    content = npy_bytes(np.arange(3.0))
    keys = {"w": {"type": "numpy.ndarray", "encoding": "npy", "entries": ["w.npy"]}}
    good = crafted(
        tmp_path / "x.zip", {"w.npy": content}, json.dumps(manifest_for(keys, {"w.npy": content}))
    )
    raw = good.read_bytes()
    bad_sig = bytearray(raw)
    bad_sig[0:4] = b"PK\x09\x09"
    bzip2 = crafted(
        tmp_path / "b.zip",
        {"w.npy": content},
        json.dumps(manifest_for(keys, {"w.npy": content})),
        zipfile.ZIP_BZIP2,
    )
    for raw_case, kind in ((bytes(bad_sig), "malformed"), (bzip2.read_bytes(), "unsupported")):
        with pytest.raises(ArchiveError) as e:
            Archive(raw_case)["w"]
        assert e.value.entry == "w.npy" and e.value.kind == kind, e.value


def _local_header(name: bytes, content: bytes, extra: bytes = b"") -> bytes:
    """A stored entry's local header (zip version 2.0, UTF-8 name, 1980-01-01), then its
    extra field."""
    fields = (0x04034B50, 20, 0x800, 0, 0, 33, zlib.crc32(content), len(content), len(content))
    return struct.pack("<IHHHHHIIIHH", *fields, len(name), len(extra)) + name + extra


def test_entries_sharing_bytes_through_a_long_local_extra_field_are_refused(tmp_path: Path) -> None:
    b_content = npy_bytes(np.arange(6.0))
    b_local = _local_header(b"b.npy", b_content) + b_content
    m = 1000
    a_content = npy_bytes(np.frombuffer(b_local + b"\0" * (m - len(b_local)), np.uint8))
    extra = struct.pack("<HH", 0xCAFE, m - 4) + b"\0" * (m - 4)
    out = _local_header(b"a.npy", a_content, extra) + a_content
    b_off = 30 + 5 + len(a_content)
    assert out[b_off : b_off + 4] == b"PK\x03\x04"
    cd_at = len(out)
    for name, off, c in ((b"a.npy", 0, a_content), (b"b.npy", b_off, b_content)):
        out += (
            struct.pack(
                "<IHHHHHHIIIHHHHHII",
                0x02014B50,
                0x314,
                20,
                0x800,
                0,
                0,
                33,
                zlib.crc32(c),
                len(c),
                len(c),
                5,
                0,
                0,
                0,
                0,
                0,
                off,
            )
            + name
        )
    out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 2, 2, len(out) - cd_at, cd_at, 0)
    with Archive(out) as a:
        with pytest.raises(ArchiveError) as e:
            a["a"]
        assert e.value.entry == "a.npy" and "next entry" in str(e.value)
        assert any("a.npy" in p for p in a.verify())


# --- a file changed under an open archive -------------------------------------------------------


CHANGED = """
import os, shutil, sys
import numpy as np
import amber
path, newer, attack = sys.argv[1:]
a = amber.Archive(path)
if attack == "truncate":
    os.truncate(path, os.path.getsize(path) // 2)
elif attack == "empty":
    os.truncate(path, 0)
elif attack == "copy":
    shutil.copy(newer, path)
elif attack == "same size":  # another archive of the same size, written over it in place
    with amber.Archive(newer, "w") as b:
        b["w"] = np.arange(200_000.0)[::-1].copy()
    data = open(newer, "rb").read()
    assert len(data) == os.path.getsize(path)
    with open(path, "r+b") as f:
        f.write(data)
elif attack == "rename":
    os.replace(newer, path)
elif attack == "append":
    with amber.Archive(path, "a") as b:
        b["later"] = 1
try:
    print("read", float(a["w"].sum()))
except amber.ArchiveError as e:
    print(e.kind, path in str(e))
"""


@pytest.mark.parametrize(
    ("attack", "expected"),
    [
        ("truncate", "changed True"),
        ("empty", "changed True"),
        ("copy", "changed True"),
        ("same size", "changed True"),
        ("rename", f"read {float(np.arange(200_000.0).sum())}"),
        ("append", f"read {float(np.arange(200_000.0).sum())}"),
    ],
)
def test_a_file_changed_under_an_open_archive(tmp_path: Path, attack: str, expected: str) -> None:
    path, newer = tmp_path / "run.zip", tmp_path / "newer.zip"
    with Archive(path, "w") as a:
        a["w"] = np.arange(200_000.0)
    with Archive(newer, "w") as a:
        a["w"] = np.zeros(3)
    out = subprocess.run(
        [sys.executable, "-c", CHANGED, str(path), str(newer), attack],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == expected


# --- naming files, and what a file that is not an archive looks like ----------------------------


@pytest.mark.parametrize(
    ("content", "looks"),
    [
        (amber.dumps({"a": 1}), "amber format"),
        (b"\x80\x05\x95" + b"\0" * 20, "pickle"),
        (b"just some notes\n", "text"),
        (npy_bytes(np.arange(3)), ".npy"),
        (b"", "empty"),
    ],
)
def test_a_file_that_is_not_an_archive_is_named_and_described(
    tmp_path: Path, content: bytes, looks: str
) -> None:
    path = tmp_path / "notes.bin"
    path.write_bytes(content)
    with pytest.raises(ArchiveError) as e:
        Archive(path)
    assert e.value.kind == "not_zip" and str(path) in str(e.value) and looks in str(e.value)


def test_file_urls_are_local_paths(tmp_path: Path) -> None:
    path = tmp_path / "run.zip"
    with Archive(path.as_uri(), "w") as a:
        a["x"] = [1, 2]
    with Archive(path.as_uri()) as a:
        assert a["x"] == [1, 2]
    assert Archive(str(path)).keys() == {"x"}
    with pytest.raises(ValueError, match="other hosts"):
        Archive("file://example.com/run.zip")


def test_copying_an_archive_keeps_what_verify_checks(tmp_path: Path) -> None:
    small_archive(tmp_path / "a.zip")
    shutil.copy(tmp_path / "a.zip", tmp_path / "b.zip")
    with Archive(tmp_path / "b.zip") as a:
        assert a.verify() == []


# --- Arrow entries: compressed bodies and field names ------------------------------------------


def arrow_archive(path: Path, data: bytes) -> Path:
    keys = {"t": {"type": "pyarrow.Table", "encoding": "arrow", "kind": 0, "entries": ["t.arrow"]}}
    return crafted(path, {"t.arrow": data}, json.dumps(manifest_for(keys, {"t.arrow": data})))


def compressed_ipc(table: Any, codec: str) -> bytes:
    import pyarrow as pa

    s = pa.BufferOutputStream()
    options = pa.ipc.IpcWriteOptions(compression=codec)
    with pa.ipc.new_file(s, table.schema, options=options) as w:
        w.write_table(table)
    return bytes(s.getvalue().to_pybytes())


@pytest.mark.parametrize("codec", ["zstd", "lz4"])
def test_arrow_entries_with_compressed_bodies_are_refused_before_allocation(
    tmp_path: Path, codec: str
) -> None:
    import pyarrow as pa

    table = pa.table({"x": pa.array(range(1000), pa.int64()), "s": [str(i) for i in range(1000)]})
    data = bytearray(compressed_ipc(table, codec))
    i = data.find(struct.pack("<q", 8000))  # the values buffer's declared length
    cases = [bytes(data)]
    if i >= 0:
        data[i : i + 8] = struct.pack("<q", 4 << 30)  # 4 GiB declared
        cases.append(bytes(data))
    for n, case in enumerate(cases):
        path = arrow_archive(tmp_path / f"c{n}.zip", case)
        child = (
            f"import amber\ntry:\n    amber.Archive({str(path)!r})['t']\n"
            "except amber.ArchiveError as e:\n    print(e.kind, e.entry)\n"
        )
        out = subprocess.run(
            [sys.executable, "-c", child],
            capture_output=True,
            text=True,
            preexec_fn=lambda: __import__("resource").setrlimit(
                __import__("resource").RLIMIT_AS, (2 << 30, 2 << 30)
            ),
        )
        assert out.stdout.strip() == "unsupported t.arrow", out.stderr[-500:]


def test_mutated_dictionary_batches_with_compression_are_refused(tmp_path: Path) -> None:
    import pyarrow as pa

    table = pa.table({"d": pa.array(["a", "b", "a"] * 100).dictionary_encode()})
    path = arrow_archive(tmp_path / "d.zip", compressed_ipc(table, "zstd"))
    with pytest.raises(ArchiveError) as e:
        Archive(path)["t"]
    assert e.value.kind == "unsupported"


@pytest.mark.parametrize("depth", [1, 2, 5])
def test_nested_field_names_that_are_not_utf8_are_refused(tmp_path: Path, depth: int) -> None:
    import pyarrow as pa

    value: Any = 1
    for _ in range(depth):
        value = {"zqxj": value}
    table = pa.table({"s": pa.array([value, value])})
    s = pa.BufferOutputStream()
    with pa.ipc.new_file(s, table.schema) as w:
        w.write_table(table)
    data = s.getvalue().to_pybytes()
    assert b"zqxj" in data
    path = arrow_archive(tmp_path / "n.zip", data.replace(b"zqxj", b"\xff\xfe\xfd\xfc"))
    with pytest.raises(ArchiveError) as e:
        Archive(path)["t"]
    assert e.value.kind == "malformed" and e.value.entry == "t.arrow" and "UTF-8" in str(e.value)
    ok = arrow_archive(tmp_path / "ok.zip", data)
    assert Archive(ok)["t"].to_pylist() == table.to_pylist()


def test_every_byte_smash_of_an_arrow_footer_is_checked_without_a_crash(tmp_path: Path) -> None:
    import pyarrow as pa

    table = pa.table({"x": [1, 2, 3], "s": [{"a": 1}, {"a": 2}, None]})
    s = pa.BufferOutputStream()
    with pa.ipc.new_file(s, table.schema) as w:
        w.write_table(table)
    data = s.getvalue().to_pybytes()
    footer_len = struct.unpack("<i", data[-10:-6])[0]
    start = len(data) - 10 - footer_len
    for at in range(start, len(data)):
        for value in (0x00, 0xFF, 0x7F):
            bad = bytearray(data)
            bad[at] = value
            with contextlib.suppress(ArchiveError):  # anything else (a panic) fails
                _native.arrow_check_file(bytes(bad))
