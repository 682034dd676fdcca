"""The compatibility promise (docs/compatibility.md) for archives, tested on the archives each
release wrote. Today's amber reads them back exactly, still writes the newest release's archives
as they are (byte for byte, or in what amber decides where a table's bytes are pyarrow's), and
refuses an archive or an entry that claims a version it does not know.

`tests/golden/v<release>/` holds what that release of amber wrote (made by
`tests/golden/make_files.py`); tests/golden/releases.py lists the releases."""

from __future__ import annotations

import io
import json
import struct
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import amber
from amber import _native
from tests.golden import make_files as golden
from tests.golden.releases import NEWEST, RELEASES, assert_value, release_id

MANIFEST = ".amber/manifest.json"
TABLE_SUFFIXES = (".arrow", ".parquet")


@pytest.fixture(autouse=True, scope="module")
def _registered() -> Iterator[None]:
    golden.register()
    yield
    golden.unregister()


# --- archives --------------------------------------------------------------------------------

ARCHIVE_FILES = [(r, n) for r in RELEASES for n in sorted(golden.ARCHIVES) if (r / n).exists()]


def _manifest(path: Path | bytes) -> dict[str, Any]:
    source = io.BytesIO(path) if isinstance(path, bytes) else path
    with zipfile.ZipFile(source) as z:
        return json.loads(z.read(MANIFEST))


@pytest.mark.parametrize(
    ("release", "name"), ARCHIVE_FILES, ids=[release_id(*a) for a in ARCHIVE_FILES]
)
def test_archive_reads_back(release: Path, name: str) -> None:
    want = golden.archive_values(golden.ARCHIVES[name]())
    with amber.Archive(release / name) as a:
        assert list(a) == list(want)
        for key, value in want.items():
            assert_value(a[key], value, f"{name}[{key!r}]")
        assert a.verify() == []


@pytest.mark.parametrize(
    ("release", "name"), ARCHIVE_FILES, ids=[release_id(*a) for a in ARCHIVE_FILES]
)
def test_archive_is_a_zip_other_tools_read(release: Path, name: str) -> None:
    """Every entry but zstd ones (Python's zipfile reads zstd from 3.14) extracts with zipfile,
    its CRC-32 checked; the manifest names the archive version this release wrote."""
    with zipfile.ZipFile(release / name) as z:
        for info in z.infolist():
            if info.compress_type != 93:
                z.read(info)
    version = _manifest(release / name)["amber_archive"]
    assert version == int(name.split("-v")[1].split(".")[0])


def _zip_picture(data: bytes) -> list[tuple[Any, ...]]:
    """What the zip's records say, without what the compressors decide (compressed sizes and
    so offsets), and without the CRC-32 and size of table entries (pyarrow's bytes) and of the
    manifest (which holds their hashes; `_manifest_picture` compares the rest of it); stored
    entries also give where their data starts modulo 64 (they are 64-aligned)."""
    out = []
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        for i in z.infolist():
            row: tuple[Any, ...] = (i.filename, i.compress_type, i.flag_bits, i.date_time)
            row += (i.create_system, i.create_version, i.extract_version, i.external_attr)
            if not i.filename.endswith(TABLE_SUFFIXES) and i.filename != MANIFEST:
                row += (i.CRC, i.file_size)
            if i.compress_type == zipfile.ZIP_STORED:
                n, m = struct.unpack_from("<HH", data, i.header_offset + 26)
                row += ((i.header_offset + 30 + n + m) % 64,)
            out.append(row)
    return out


def _manifest_picture(data: bytes) -> str:
    """The manifest, in its order, without the size and hash of table entries."""
    doc = _manifest(data)
    for entry, info in doc["entries"].items():
        if entry.endswith(TABLE_SUFFIXES):
            del info["size"], info["blake3"]
    for info in doc["keys"].values():
        if info.get("kind") in (2, 3):
            # 0.1 counted a pandas index stored as a column among the columns; later amber
            # counts the frame's columns (tests/codec/test_frames_matrix.py checks them), and marks
            # the frames its extras describe, which makes the archive version 3.
            info.pop("columns", None)
            info.pop("described", None)
            doc.pop("amber_archive", None)
    return json.dumps(doc, indent=1)


@pytest.mark.parametrize("name", sorted(golden.ARCHIVES))
def test_archive_is_what_amber_writes(name: str, tmp_path: Path) -> None:
    path = tmp_path / name
    golden.write_archive(path, golden.ARCHIVES[name]())
    got, want = path.read_bytes(), (NEWEST / name).read_bytes()
    if name not in golden.NOT_DETERMINISTIC:
        assert got == want, f"amber now writes {name} differently from {NEWEST.name}"
        return
    # Compare what amber decides: the manifest (every hash and size of what amber encodes),
    # the zip records (names, order, methods, CRC-32 and sizes of the uncompressed content,
    # dates, attributes) and the alignment of stored entries.
    assert _manifest_picture(got) == _manifest_picture(want)
    assert _zip_picture(got) == _zip_picture(want)


def _patch_stored(data: bytes, name: str, content: bytes) -> bytes:
    """`data`, a zip, with its stored entry `name` holding `content` (of the same length), the
    CRC-32 fixed in the local header and the central directory."""
    out = bytearray(data)
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        info = z.getinfo(name)
    assert info.compress_type == zipfile.ZIP_STORED and info.file_size == len(content)
    crc = struct.pack("<I", zlib.crc32(content))
    local = info.header_offset
    n, m = struct.unpack_from("<HH", out, local + 26)
    start = local + 30 + n + m
    out[start : start + len(content)] = content
    out[local + 14 : local + 18] = crc
    end = out.rfind(b"PK\x05\x06")
    at = struct.unpack_from("<I", out, end + 16)[0]
    while out[at : at + 4] == b"PK\x01\x02":
        n, m, k = struct.unpack_from("<HHH", out, at + 28)
        if out[at + 46 : at + 46 + n] == name.encode():
            out[at + 16 : at + 20] = crc
        at += 46 + n + m + k
    return bytes(out)


def _patch_manifest(data: bytes, old: bytes, new: bytes) -> bytes:
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        manifest = z.read(MANIFEST)
    assert manifest.count(old) == 1 and len(old) == len(new)
    return _patch_stored(data, MANIFEST, manifest.replace(old, new))


@pytest.mark.parametrize("name", sorted(golden.ARCHIVES))
def test_archive_of_a_newer_version_is_refused(name: str, tmp_path: Path) -> None:
    data = (NEWEST / name).read_bytes()
    version = _manifest(data)["amber_archive"]
    newest = 3  # the archive version this release reads (docs/spec/archive.md)
    for newer in (newest + 1, 9):
        patched = _patch_manifest(
            data, f'"amber_archive": {version},'.encode(), f'"amber_archive": {newer},'.encode()
        )
        path = tmp_path / f"newer-{newer}.zip"
        path.write_bytes(patched)
        for target in (path, patched):
            with pytest.raises(amber.ArchiveError) as e:
                amber.Archive(target)
            assert e.value.kind == "unsupported"
            assert e.value.entry == MANIFEST
            assert str(e.value) == (
                f"{path if target is path else '<memory>'}: "
                f"archive format version {newer}: this amber reads version {newest}; upgrade it"
            )


@pytest.mark.parametrize("name", sorted(golden.ARCHIVES))
def test_archive_of_a_version_that_never_existed_is_refused(name: str) -> None:
    data = (NEWEST / name).read_bytes()
    version = _manifest(data)["amber_archive"]
    for bad in (0, -1):
        patched = _patch_manifest(
            data,
            f'"amber_archive": {version},'.encode(),
            f'"amber_archive":{bad:>2},'.encode(),
        )
        with pytest.raises(amber.ArchiveError) as e:
            amber.Archive(patched)
        assert e.value.kind == "malformed" and e.value.entry == MANIFEST
        assert f"archive format version {bad} does not exist" in str(e.value)


def test_archive_entry_of_a_newer_format_version_is_refused(tmp_path: Path) -> None:
    """An amber entry's frame is refused as any frame is (once its hash is right): an
    ArchiveError naming the entry, caused by the frame's DecodeError. Other keys still read."""
    name = "archive-v1.amber.zip"
    data = (NEWEST / name).read_bytes()
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        frame = z.read("config.amber")
    newer = bytes([frame[0], amber.FORMAT_VERSION + 1]) + frame[2:]
    old_hash, new_hash = _native.archive_digest(frame)[1], _native.archive_digest(newer)[1]
    patched = _patch_manifest(
        _patch_stored(data, "config.amber", newer), old_hash.encode(), new_hash.encode()
    )
    path = tmp_path / name
    path.write_bytes(patched)
    with amber.Archive(path) as a:
        assert a["records"] == golden.archive_values(golden.archive_v1_steps())["records"]
        with pytest.raises(amber.ArchiveError) as e:
            a["config"]
    assert e.value.entry == "config.amber"
    assert str(e.value) == (
        "entry 'config.amber' does not hold a valid amber value: unsupported format version "
        f"{amber.FORMAT_VERSION + 1} (this build reads version {amber.FORMAT_VERSION}) (at byte 1, $)"
    )
    cause = e.value.__cause__
    assert isinstance(cause, amber.DecodeError) and cause.kind == "unsupported"
