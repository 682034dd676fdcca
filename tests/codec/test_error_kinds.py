"""Every error amber raises says what kind of problem it is: `DecodeError.kind` and
`EncodeError.kind`, so callers act on the kind rather than on the message."""

from __future__ import annotations

import collections
import dataclasses
import datetime as dt
import enum
import fractions
import io
import os
import pickle
import struct
import typing
import zoneinfo
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import amber

DECODE_KINDS = {
    "truncated",
    "not_amber",
    "unsupported",
    "malformed",
    "limit",
    "refused",
    "buffer",
    "raised",
}
ENCODE_KINDS = {"unsupported", "cycle", "limit", "mutated", "raised"}


def frame(body: bytes) -> bytes:
    return b"\xab\x01\x00\x00" + struct.pack("<I", len(body)) + body


def decode_kind(data: bytes, **kw: Any) -> amber.DecodeError:
    with pytest.raises(amber.DecodeError) as ei:
        amber.loads(data, **kw)
    err = ei.value
    assert err.kind in DECODE_KINDS
    assert isinstance(err.offset, int) and f"at byte {err.offset}" in str(err)
    return err


def encode_kind(obj: Any, **kw: Any) -> amber.EncodeError:
    with pytest.raises(amber.EncodeError) as ei:
        amber.dumps(obj, **kw)
    err = ei.value
    assert err.kind in ENCODE_KINDS
    assert isinstance(err.path, str) and f"(at {err.path})" in str(err)
    return err


@pytest.fixture
def registered() -> Iterator[list[type]]:
    """Classes a test registers, unregistered afterwards."""
    classes: list[type] = []
    yield classes
    for cls in classes:
        amber.unregister(cls)


# --- decoding -------------------------------------------------------------------------------


def test_every_truncation_is_truncated() -> None:
    data = amber.dumps({"a": [1, 2.5, "x" * 40], "b": (None, b"yz")})
    for n in range(len(data)):
        assert decode_kind(data[:n]).kind == "truncated", n


def test_a_stream_cut_short_is_truncated() -> None:
    data = amber.dumps(list(range(100)))
    for n in (3, 8, len(data) - 1):
        with pytest.raises(amber.DecodeError) as ei:
            amber.load(io.BytesIO(data[:n]))
        assert ei.value.kind == "truncated", n


@pytest.mark.parametrize(
    "data", [pickle.dumps({"a": 1}), b'{"a": 1}', b"\x00" * 16, pickle.dumps(1)[:4]]
)
def test_other_data_is_not_amber(data: bytes) -> None:
    assert decode_kind(data).kind == "not_amber"
    with pytest.raises(amber.DecodeError) as ei:
        amber.load(io.BytesIO(data))
    assert ei.value.kind == "not_amber"


def test_a_newer_format_is_unsupported() -> None:
    data = bytearray(amber.dumps(1))
    data[1] = 2  # format version
    assert decode_kind(bytes(data)).kind == "unsupported"
    data = bytearray(amber.dumps(1))
    data[2] |= 0x40  # a header flag this build does not know
    assert decode_kind(bytes(data)).kind == "unsupported"


def test_broken_bytes_are_malformed() -> None:
    assert decode_kind(amber.dumps(1) + b"\x00").kind == "malformed"  # bytes after the frame
    assert decode_kind(frame(b"\x61\x01\x02")).kind == "malformed"  # bytes after the item
    assert decode_kind(frame(b"\x61")).kind == "malformed"  # a list missing its item


def test_a_value_python_refuses_is_malformed_with_the_cause() -> None:
    class Pair(typing.NamedTuple):
        a: int
        b: int

    amber.register(Pair, name="test.kinds.Pair")
    try:
        name = b"test.kinds.Pair"
        body = b"\xcc" + bytes([0x40 + len(name)]) + name + b"\xa3\x01\x02\x03"
        err = decode_kind(frame(body))
    finally:
        amber.unregister(Pair)
    assert err.kind == "malformed" and "2 fields" in str(err)


def test_nesting_past_max_depth_is_a_limit() -> None:
    data = amber.dumps([[[[1]]]])
    assert decode_kind(data, max_depth=2).kind == "limit"


def test_unregistered_classes_are_refused(registered: list[type]) -> None:
    @dataclasses.dataclass
    class Point:
        x: int

    amber.register(Point, name="test.kinds.Point")
    data = amber.dumps([Point(1)])
    amber.unregister(Point)
    err = decode_kind(data)
    assert err.kind == "refused" and err.path == "$[0]"


def test_a_class_registered_otherwise_is_refused(registered: list[type]) -> None:
    class Color(enum.Enum):
        RED = 1

    @dataclasses.dataclass
    class Other:
        x: int = 0

    amber.register(Color, name="test.kinds.Shape")
    data = amber.dumps(Color.RED)
    amber.unregister(Color)
    amber.register(Other, name="test.kinds.Shape")
    registered.append(Other)
    assert decode_kind(data).kind == "refused"


def test_unknown_time_zones_and_object_dtypes_are_refused() -> None:
    data = amber.dumps(dt.datetime(2020, 1, 1, tzinfo=zoneinfo.ZoneInfo("Europe/Paris")))
    assert decode_kind(data.replace(b"Europe/Paris", b"Europe/Parix")).kind == "refused"
    data = amber.dumps(np.zeros(2, dtype="i8"))
    assert b"<i8" in data
    assert decode_kind(data.replace(b"<i8", b"|O8")).kind == "refused"


def test_missing_or_wrong_buffers_are_buffer_errors() -> None:
    buffers: list[pickle.PickleBuffer] = []
    data = amber.dumps(np.arange(10_000), buffer_callback=buffers.append)
    assert decode_kind(data).kind == "buffer"
    assert decode_kind(data, buffers=[]).kind == "buffer"
    assert decode_kind(data, buffers=[b"short"]).kind == "buffer"
    assert amber.loads(data, buffers=buffers).sum() == sum(range(10_000))


def test_a_decode_hook_that_raises_is_raised_with_its_cause(registered: list[type]) -> None:
    class Boom:
        pass

    def decode(state: Any) -> Boom:
        raise LookupError("no such thing")

    amber.register(Boom, name="test.kinds.Boom", encode=lambda b: 1, decode=decode)
    registered.append(Boom)
    err = decode_kind(amber.dumps({"k": Boom()}))
    assert err.kind == "raised" and err.path == "$.k"
    assert isinstance(err.__cause__, LookupError)


def test_a_setstate_that_raises_is_raised(registered: list[type]) -> None:
    class Stateful:
        def __init__(self) -> None:
            self.x = 1

        def __getstate__(self) -> Any:
            return ("x", self.x)

        def __setstate__(self, state: Any) -> None:
            raise ArithmeticError(state)

    amber.register(Stateful, name="test.kinds.Stateful")
    registered.append(Stateful)
    err = decode_kind(amber.dumps([Stateful()]))
    assert err.kind == "raised" and isinstance(err.__cause__, ArithmeticError)


def test_keyboard_interrupt_in_a_hook_passes_through(registered: list[type]) -> None:
    class Stop:
        pass

    def decode(state: Any) -> Stop:
        raise KeyboardInterrupt

    amber.register(Stop, name="test.kinds.Stop", encode=lambda s: 0, decode=decode)
    registered.append(Stop)
    with pytest.raises(KeyboardInterrupt):
        amber.loads(amber.dumps(Stop()))


def test_a_frame_length_beyond_any_memory_is_a_limit() -> None:
    header = b"\xab\x01\x01\x00" + b"\x00" * 4 + struct.pack("<Q", 2**63)
    with pytest.raises(amber.DecodeError) as ei:
        amber.load(io.BytesIO(header))
    assert ei.value.kind == "limit"
    assert decode_kind(header).kind == "truncated"  # the whole input, shorter than its frame


def test_errors_users_raise_have_no_kind() -> None:
    err = amber.DecodeError("mine")
    assert (err.kind, err.offset, err.path) == (None, None, None)
    assert amber.EncodeError("mine").kind is None


# --- encoding -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        object(),
        [1, {"a": object()}],
        collections.defaultdict(lambda: 0),
        np.array([object()], dtype=object),
        range(3),
    ],
)
def test_types_amber_does_not_encode_are_unsupported(value: Any) -> None:
    assert encode_kind(value).kind == "unsupported"


def test_a_zoneinfo_without_a_key_is_unsupported() -> None:
    path = next(
        (os.path.join(p, "UTC") for p in zoneinfo.TZPATH if os.path.exists(os.path.join(p, "UTC"))),
        None,
    )
    if path is None:
        pytest.skip("no zone files on this system")
    with open(path, "rb") as f:
        zone = zoneinfo.ZoneInfo.from_file(f)
    assert encode_kind(dt.datetime(2020, 1, 1, tzinfo=zone)).kind == "unsupported"


def test_a_cycle_without_identity_is_a_cycle() -> None:
    a: list[Any] = [1]
    a.append({"back": a})
    err = encode_kind(a)
    assert err.kind == "cycle" and err.path == "$[1].back"
    assert amber.loads(amber.dumps(a, identity=True))[1]["back"][0] == 1


def test_deep_nesting_and_big_fractions_are_limits() -> None:
    deep: list[Any] = []
    for _ in range(50):
        deep = [deep]
    assert encode_kind(deep, max_depth=10).kind == "limit"
    assert encode_kind(fractions.Fraction(2**40_000, 3)).kind == "limit"


def test_an_encode_hook_that_raises_is_raised_with_its_cause(registered: list[type]) -> None:
    class Fails:
        pass

    def encode(obj: Fails) -> Any:
        raise OSError("disk gone")

    amber.register(Fails, name="test.kinds.Fails", encode=encode, decode=lambda s: Fails())
    registered.append(Fails)
    err = encode_kind({"x": [Fails()]})
    assert err.kind == "raised" and err.path == "$.x[0]"
    assert isinstance(err.__cause__, OSError)


def test_a_container_changed_by_a_hook_is_mutated(registered: list[type]) -> None:
    target: list[Any] = [None]

    class Clear:
        pass

    def encode(obj: Clear) -> int:
        target[0].clear()
        return 0

    amber.register(Clear, name="test.kinds.Clear", encode=encode, decode=lambda s: Clear())
    registered.append(Clear)
    makers: list[Any] = [set, collections.deque, lambda xs: collections.OrderedDict(enumerate(xs))]
    makers += [list, dict.fromkeys]
    for make in makers:
        target[0] = container = make([Clear() for _ in range(5)])
        with pytest.raises(amber.EncodeError) as ei:
            amber.dumps(container)
        assert ei.value.kind == "mutated", (make, ei.value)
