"""dump/load: several frames one after another in one stream."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

import amber


def test_several_objects_in_one_stream(tmp_path: object) -> None:
    buf = io.BytesIO()
    objs = [1, "two", {"three": (3,)}, [None] * 1000]
    for o in objs:
        amber.dump(o, buf)
    buf.seek(0)
    assert [amber.load(buf) for _ in objs] == objs
    with pytest.raises(EOFError):
        amber.load(buf)


def test_truncated_stream_is_a_decode_error() -> None:
    data = amber.dumps(list(range(100)))
    for n in (3, 8, 20, len(data) - 1):
        with pytest.raises(amber.DecodeError, match="truncated") as ei:
            amber.load(io.BytesIO(data[:n]))
        assert ei.value.offset == n


def test_garbage_stream_names_the_problem() -> None:
    with pytest.raises(amber.DecodeError, match="not amber data"):
        amber.load(io.BytesIO(b"\x80\x05garbage"))


def test_file_without_readinto(tmp_path: object) -> None:
    class ReadOnly:
        def __init__(self, data: bytes) -> None:
            self._b = io.BytesIO(data)

        def read(self, n: int = -1) -> bytes:
            return self._b.read(min(n, 3) if n > 0 else n)  # short reads

    data = amber.dumps({"k": "v"}) + amber.dumps([1])
    f = ReadOnly(data)
    assert amber.load(f) == {"k": "v"}  # type: ignore[arg-type]
    assert amber.load(f) == [1]  # type: ignore[arg-type]


def test_options_pass_through() -> None:
    d = {"x": 1}
    buf = io.BytesIO()
    amber.dump([d, d], buf, identity=True)
    buf.seek(0)
    out = amber.load(buf, max_depth=5)
    assert out[0] is out[1]


def test_lying_length_does_not_allocate_it() -> None:
    import struct
    import tracemalloc

    # A long header claiming 2**40 bytes, followed by 10 bytes of data.
    header = b"\xab\x01\x01\x00\x00\x00\x00\x00" + struct.pack("<Q", 2**40)
    tracemalloc.start()
    with pytest.raises(amber.DecodeError, match="truncated"):
        amber.load(io.BytesIO(header + b"x" * 10))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 64 << 20


def test_absurd_length_is_a_decode_error() -> None:
    import struct

    header = b"\xab\x01\x01\x00\x00\x00\x00\x00" + struct.pack("<Q", 2**64 - 3)
    with pytest.raises(amber.DecodeError, match="too large"):
        amber.load(io.BytesIO(header))
    with pytest.raises(amber.DecodeError, match="too large"):
        amber.loads(header)


@pytest.mark.parametrize("data", [b"\x80\x04K\x01.", b"\x80", b"{}", b"\xab\x07"])
def test_short_stream_of_other_data_is_named_for_what_it_is(data: bytes) -> None:
    with pytest.raises(amber.DecodeError) as ei:
        amber.load(io.BytesIO(data))
    assert "truncated" not in str(ei.value)
    if data[0] == 0x80:
        assert "looks like a pickle" in str(ei.value)


def test_text_stream_is_refused_clearly(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="binary mode"):
        amber.load(io.StringIO("text"))
    # A file of frames opened in text mode: refused before the text decoder sees the bytes.
    path = tmp_path / "frames.amb"
    with open(path, "wb") as f:
        amber.dump({"k": "é"}, f)
    with open(path) as f, pytest.raises(TypeError, match=r"binary mode \(open\(path, 'rb'\)\)"):
        amber.load(f)
    with open(path, "w") as f, pytest.raises(TypeError, match=r"open\(path, 'wb'\)"):
        amber.dump([1], f)  # type: ignore[arg-type]
    # Options are dumps'/loads' own, by name.
    with open(path, "wb") as f, pytest.raises(TypeError, match="idenity"):
        amber.dump([1], f, idenity=True)  # type: ignore[call-arg]


def test_non_blocking_stream_without_data_says_so() -> None:
    import socket

    a, b = socket.socketpair()
    try:
        b.setblocking(False)
        reader = b.makefile("rb", buffering=0)
        with pytest.raises(BlockingIOError):
            amber.load(reader)
        data = amber.dumps([1, 2, 3])
        a.sendall(data[:5])
        with pytest.raises(BlockingIOError, match="5 bytes of this frame"):
            amber.load(reader)
    finally:
        a.close()
        b.close()


def test_frame_length_of_a_partial_header() -> None:
    from amber._native import frame_length

    assert frame_length(b"") == -8
    assert frame_length(b"\xab\x01") == -6
    assert frame_length(b"\xab\x01\x01\x00\x00\x00\x00\x00") == -8  # long: 8 more
    assert frame_length(amber.dumps(None)) == 9
    with pytest.raises(amber.DecodeError, match="version"):
        frame_length(b"\xab\x09")
