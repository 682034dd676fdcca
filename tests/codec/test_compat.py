"""The compatibility promise (docs/compatibility.md) for codec frames, tested on the frames and
the stream each release wrote. Today's amber

- reads every release's frames back to exactly the values they were written from;
- still writes the newest release's frames byte for byte where the bytes are amber's alone
  (`NOT_DETERMINISTIC` says which are not);
- refuses a frame that claims a version, a header flag or an item it does not know, with the
  error docs/compatibility.md documents.

`tests/golden/v<release>/` holds what that release of amber wrote (made by
`tests/golden/make_files.py`); tests/golden/releases.py lists the releases."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import amber
from tests.golden import make_files as golden
from tests.golden.releases import NEWEST, RELEASES, assert_value, release_id
from tests.support.exact import assert_exact


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


@pytest.mark.parametrize(
    ("release", "family"), CODEC_FILES, ids=[release_id(*c) for c in CODEC_FILES]
)
def test_codec_file_reads_back(release: Path, family: str) -> None:
    frame = (release / "codec" / f"{family}.amber").read_bytes()
    assert frame[1] <= amber.FORMAT_VERSION
    buffers = _buffers(release, family)
    got = amber.loads(frame, buffers=buffers) if buffers else amber.loads(frame)
    check_family(family, got, release)


@pytest.mark.parametrize(
    ("release", "family"), CODEC_FILES, ids=[release_id(*c) for c in CODEC_FILES]
)
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
