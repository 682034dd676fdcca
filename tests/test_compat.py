"""The compatibility promise (docs/compatibility.md), tested on files each release wrote.

`tests/golden/v<release>/` holds what that release of amber wrote (made by
`tests/golden/make_files.py`): codec frames of every type family, two archives and a
PostgreSQL COPY BINARY stream. This module checks that today's amber

- reads every release's files back to exactly the values they were written from;
- still writes the newest release's files byte for byte where the bytes are amber's alone
  (`NOT_DETERMINISTIC` says which are not, and why: for those the structure and content
  amber controls are compared instead);
- refuses a frame, an archive or a COPY stream that claims a version or a feature it does not
  know, with the error docs/compatibility.md documents.
"""

from __future__ import annotations

import io
import json
import re
import struct
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import amber
from amber import _native
from tests.golden import make_files as golden
from tests.support.exact import assert_exact

GOLDEN = Path(__file__).parent / "golden"


def _release_key(folder: Path) -> tuple[int, ...]:
    return tuple(int(part) for part in folder.name[1:].split("."))


RELEASES = sorted(
    (p for p in GOLDEN.iterdir() if p.is_dir() and re.fullmatch(r"v\d+\.\d+", p.name)),
    key=_release_key,
)
NEWEST = RELEASES[-1]
MANIFEST = ".amber/manifest.json"
TABLE_SUFFIXES = (".arrow", ".parquet")


@pytest.fixture(autouse=True, scope="module")
def _registered() -> Iterator[None]:
    golden.register()
    yield
    golden.unregister()


def _families(release: Path) -> list[str]:
    names = sorted(p.name[: -len(".amber")] for p in (release / "codec").glob("*.amber"))
    return [n for n in names if n != "stream"]


def _buffers(release: Path, family: str) -> list[bytes]:
    out = []
    while (path := release / "codec" / f"{family}.amber.{len(out)}").exists():
        out.append(path.read_bytes())
    return out


CODEC_FILES = [(r, f) for r in RELEASES for f in _families(r)]


def _id(release: Path, name: str) -> str:
    return f"{release.name}/{name}"


# --- exact comparison ------------------------------------------------------------------------


def _is_table(value: Any) -> bool:
    module = type(value).__module__.split(".")[0]
    return module in ("pandas", "polars", "pyarrow")


def assert_table(got: Any, want: Any, path: str) -> None:
    """Same table type, values, dtypes, labels, order and metadata."""
    assert type(got) is type(want), f"{path}: {type(got).__name__} != {type(want).__name__}"
    module = type(want).__module__.split(".")[0]
    if module == "pandas":
        import pandas as pd

        # A RangeIndex (of rows or columns) comes back today as an int64 Index of the same
        # labels; every other index keeps its exact type.
        def index_type(index: Any) -> Any:
            return "equiv" if isinstance(index, pd.RangeIndex) else True

        if isinstance(want, pd.DataFrame):
            pd.testing.assert_frame_equal(
                got,
                want,
                check_exact=True,
                check_index_type=index_type(want.index),
                check_column_type=index_type(want.columns),
                check_freq=True,
                check_flags=True,
                obj=path,
            )
            assert [type(c) for c in got.columns] == [type(c) for c in want.columns], path
        else:
            pd.testing.assert_series_equal(
                got,
                want,
                check_exact=True,
                check_index_type=index_type(want.index),
                check_freq=True,
                check_flags=True,
                obj=path,
            )
            assert type(got.name) is type(want.name), f"{path}: name type"
        assert_exact(got.attrs, want.attrs, path + ".attrs")
    elif module == "polars":
        import polars.testing

        if isinstance(want, polars.Series):
            assert (got.name, got.dtype) == (want.name, want.dtype), f"{path}: name or dtype"
            polars.testing.assert_series_equal(got, want, check_exact=True)
        else:
            assert got.schema == want.schema, f"{path}: schema"
            polars.testing.assert_frame_equal(got, want, check_exact=True)
    else:
        assert got.schema.equals(want.schema, check_metadata=True), f"{path}: schema"
        assert got.equals(want, check_metadata=True), f"{path}: values"


def assert_value(got: Any, want: Any, path: str) -> None:
    """Exactly the value: type and value at every depth (assert_exact), and the same
    deterministic encoding, which also pins what == cannot see (the types of set items, NaN
    payloads)."""
    if _is_table(want):
        assert_table(got, want, path)
        return
    assert_exact(got, want, path)
    assert amber.dumps(got, deterministic=True) == amber.dumps(want, deterministic=True), path


_SHARED_TYPES = (list, tuple, dict, set, frozenset, bytes, bytearray, np.ndarray)


def assert_graph(
    got: Any, want: Any, path: str, seen: dict[int, Any], back: dict[int, int]
) -> None:
    """The same values and the same sharing: an object shared (or reached again through a
    cycle) in `want` is one object in `got`, and nothing else is shared in `got`."""
    tracked = isinstance(want, (*_SHARED_TYPES, golden.Node))
    if tracked and not (isinstance(want, tuple) and not want):
        if id(want) in seen:
            assert got is seen[id(want)], f"{path}: a shared object came back as a copy"
            return
        assert back.setdefault(id(got), id(want)) == id(want), f"{path}: shared in the result"
        seen[id(want)] = got
    assert type(got) is type(want), f"{path}: {type(got).__name__} != {type(want).__name__}"
    if isinstance(want, (list, tuple)):
        assert len(got) == len(want), f"{path}: length"
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            assert_graph(g, w, f"{path}[{i}]", seen, back)
    elif isinstance(want, dict):
        assert list(got) == list(want), f"{path}: keys"
        for k in want:
            assert_graph(got[k], want[k], f"{path}[{k!r}]", seen, back)
    elif isinstance(want, golden.Node):
        assert_graph(vars(got), vars(want), f"{path}.__dict__", seen, back)
    else:
        assert_exact(got, want, path)


def check_family(family: str, got: Any, release: Path) -> None:
    want = golden.FAMILIES[family].make()
    assert type(got) is dict, f"{family}: the frame holds {type(got).__name__}"
    if release == NEWEST:
        assert list(got) == list(want), f"{family}: the cases differ from make_files.py's"
    else:  # later releases may add cases; an older file holds some of them
        assert set(got) <= set(want), f"{family}: cases unknown to make_files.py"
    for case, value in got.items():
        path = f"{family}[{case!r}]"
        if family == "identity":
            assert_graph(value, want[case], path, {}, {})
        else:
            assert_value(value, want[case], path)


# --- codec frames ----------------------------------------------------------------------------


def test_every_family_has_a_file() -> None:
    assert _families(NEWEST) == sorted(golden.FAMILIES)


@pytest.mark.parametrize(("release", "family"), CODEC_FILES, ids=[_id(*c) for c in CODEC_FILES])
def test_codec_file_reads_back(release: Path, family: str) -> None:
    frame = (release / "codec" / f"{family}.amber").read_bytes()
    assert frame[1] <= amber.FORMAT_VERSION
    buffers = _buffers(release, family)
    got = amber.loads(frame, buffers=buffers) if buffers else amber.loads(frame)
    check_family(family, got, release)


@pytest.mark.parametrize(("release", "family"), CODEC_FILES, ids=[_id(*c) for c in CODEC_FILES])
def test_codec_file_reads_back_in_place(release: Path, family: str) -> None:
    """From any buffer, at any offset (a bytea value, a mapped file): the same values; with
    zero_copy=True too."""
    frame = (release / "codec" / f"{family}.amber").read_bytes()
    buffers = _buffers(release, family) or None
    data = memoryview(b"head" + frame + b"tail")[4 : 4 + len(frame)]
    check_family(family, amber.loads(data, buffers=buffers), release)
    views = amber.loads(data, buffers=buffers, zero_copy=True)
    assert list(views) == list(golden.FAMILIES[family].make())


#: Families whose frames are amber's bytes alone (tables hold pyarrow's: NOT_DETERMINISTIC).
DETERMINISTIC = [
    f for f in sorted(golden.FAMILIES) if f"codec/{f}.amber" not in golden.NOT_DETERMINISTIC
]


@pytest.mark.parametrize("family", DETERMINISTIC)
def test_codec_file_is_what_amber_writes(family: str) -> None:
    name = f"codec/{family}.amber"
    frame, buffers = golden.encode_family(family)
    assert frame.hex() == (NEWEST / name).read_bytes().hex(), (
        f"amber now writes {name} differently from {NEWEST.name}'s file: a change to the format "
        "needs a new version (docs/compatibility.md); a new encoder choice within it needs the "
        "next release's golden files (tests/golden/make_files.py), next to the old ones"
    )
    assert buffers == _buffers(NEWEST, family)


@pytest.mark.parametrize("release", RELEASES, ids=[r.name for r in RELEASES])
def test_stream_reads_back(release: Path) -> None:
    with open(release / "codec" / "stream.amber", "rb") as f:
        got = []
        while True:
            try:
                got.append(amber.load(f))
            except EOFError:
                break
    assert_exact(got, golden.stream())


def test_stream_is_what_amber_writes() -> None:
    out = io.BytesIO()
    for value in golden.stream():
        amber.dump(value, out)
    assert out.getvalue() == (NEWEST / "codec" / "stream.amber").read_bytes()


# --- archives --------------------------------------------------------------------------------

ARCHIVE_FILES = [(r, n) for r in RELEASES for n in sorted(golden.ARCHIVES) if (r / n).exists()]


def _manifest(path: Path | bytes) -> dict[str, Any]:
    source = io.BytesIO(path) if isinstance(path, bytes) else path
    with zipfile.ZipFile(source) as z:
        return json.loads(z.read(MANIFEST))


@pytest.mark.parametrize(("release", "name"), ARCHIVE_FILES, ids=[_id(*a) for a in ARCHIVE_FILES])
def test_archive_reads_back(release: Path, name: str) -> None:
    want = golden.archive_values(golden.ARCHIVES[name]())
    with amber.Archive(release / name) as a:
        assert list(a) == list(want)
        for key, value in want.items():
            assert_value(a[key], value, f"{name}[{key!r}]")
        assert a.verify() == []


@pytest.mark.parametrize(("release", "name"), ARCHIVE_FILES, ids=[_id(*a) for a in ARCHIVE_FILES])
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
            # counts the frame's columns (tests/test_frames_matrix.py checks them), and marks
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


# --- PostgreSQL COPY -------------------------------------------------------------------------

PG_FILES = [r for r in RELEASES if (r / "pg" / "copy.pgcopy").exists()]


@pytest.mark.parametrize("release", PG_FILES, ids=[r.name for r in PG_FILES])
def test_copy_stream_parses(release: Path) -> None:
    got = golden.pg_parse((release / "pg" / "copy.pgcopy").read_bytes())
    assert_exact(got, golden.pg_rows())


def test_copy_stream_is_what_amber_writes() -> None:
    assert golden.pg_stream(golden.pg_rows()) == (NEWEST / "pg" / "copy.pgcopy").read_bytes()


@pytest.mark.parametrize("release", PG_FILES, ids=[r.name for r in PG_FILES])
def test_copy_stream_loads_into_postgres(release: Path, conn: Any) -> None:
    """The stream is what PostgreSQL reads: COPY it into a table, read it back with amber.pg."""
    from psycopg import sql

    import amber.pg

    columns = sql.SQL(", ").join(
        sql.SQL("{} {}").format(sql.Identifier(name), sql.SQL(kind))
        for name, kind, _ in golden.PG_COLUMNS
    )
    table = sql.Identifier(golden.PG_TABLE)
    conn.execute(sql.SQL("CREATE TEMP TABLE {} ({})").format(table, columns))
    with (
        conn.cursor() as cur,
        cur.copy(sql.SQL("COPY {} FROM STDIN (FORMAT BINARY)").format(table)) as copy,
    ):
        copy.write((release / "pg" / "copy.pgcopy").read_bytes())
    query = f"SELECT * FROM {golden.PG_TABLE} ORDER BY id"
    assert_exact(amber.pg.copy_out(conn, query), golden.pg_rows())
    assert_exact(amber.pg.fetch(conn, query), golden.pg_rows())


# --- what this amber does not know -----------------------------------------------------------


def _golden_frames() -> list[bytes]:
    return [(NEWEST / "codec" / f"{f}.amber").read_bytes() for f in _families(NEWEST)]


def test_frame_of_a_newer_format_version_is_refused() -> None:
    for frame in _golden_frames():
        newer = bytes([frame[0], amber.FORMAT_VERSION + 1]) + frame[2:]
        with pytest.raises(amber.DecodeError) as e:
            amber.loads(newer)
        assert e.value.kind == "unsupported" and e.value.offset == 1
        assert str(e.value) == (
            f"unsupported format version {amber.FORMAT_VERSION + 1} "
            f"(this build reads version {amber.FORMAT_VERSION}) (at byte 1, $)"
        )


def test_stream_frame_of_a_newer_format_version_is_refused() -> None:
    """`load` reads the frames before it, then refuses the newer one."""
    frame = amber.dumps({"a": 1})
    stream = io.BytesIO(frame + bytes([frame[0], amber.FORMAT_VERSION + 1]) + frame[2:])
    assert amber.load(stream) == {"a": 1}
    with pytest.raises(amber.DecodeError, match="unsupported format version") as e:
        amber.load(stream)
    assert e.value.kind == "unsupported"


def test_frame_with_an_unknown_header_flag_is_refused() -> None:
    frame = bytearray(amber.dumps(None))
    for bit in range(1, 8):
        frame[2] = 1 << bit
        with pytest.raises(amber.DecodeError) as e:
            amber.loads(bytes(frame))
        assert e.value.kind == "unsupported" and e.value.offset == 2
        assert str(e.value) == f"unknown header flags 0x{1 << bit:02x} (at byte 2, $)"


def test_frame_with_a_reserved_tag_is_refused() -> None:
    """Items a later release may add within format version 1 use the reserved first bytes
    0xD9-0xDF (spec §12): this release refuses them as unsupported, naming the tag."""
    for tag in range(0xD9, 0xE0):
        frame = bytes.fromhex("ab01000002000000") + bytes([0x61, tag])  # a list of one <tag>
        with pytest.raises(amber.DecodeError) as e:
            amber.loads(frame)
        assert e.value.kind == "unsupported" and e.value.offset == 9 and e.value.path == "$[0]"
        assert str(e.value) == (
            f"tag 0x{tag:02x} is reserved for a later amber (upgrade amber, or the bytes are "
            "not amber data) (at byte 9, $[0])"
        )


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


def test_copy_stream_with_an_unknown_critical_flag_is_refused() -> None:
    """PostgreSQL's COPY header: flag bits 16-31 are critical (bit 16, OIDs, is not read by
    amber), bits 0-15 are not and are ignored."""
    data = bytearray((NEWEST / "pg" / "copy.pgcopy").read_bytes())
    flags = slice(11, 15)
    data[flags] = (1 << 3).to_bytes(4, "big")
    assert_exact(golden.pg_parse(bytes(data)), golden.pg_rows())
    for bit, message in ((16, "OIDs"), (17, "unknown critical flags 0x00020000")):
        data[flags] = (1 << bit).to_bytes(4, "big")
        with pytest.raises(amber.DecodeError, match=message) as e:
            golden.pg_parse(bytes(data))
        assert e.value.kind == "unsupported"
