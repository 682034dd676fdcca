"""The registry: an explicit allow-list of user classes, and precise errors outside it."""

from __future__ import annotations

import collections
import dataclasses
import enum
import typing
from typing import Any

import pytest

import amber


class Unregistered:
    pass


class MyDict(dict):  # type: ignore[type-arg]
    pass


@dataclasses.dataclass
class Plain:
    a: int


class Shape(enum.Enum):
    SQUARE = "sq"


class Temperature:
    def __init__(self, kelvin: float) -> None:
        self.kelvin = kelvin

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Temperature) and other.kelvin == self.kelvin


class Slotted:
    __slots__ = ("x", "y")

    def __init__(self, x: int, y: int) -> None:
        self.x, self.y = x, y


def test_unregistered_class_names_type_and_path() -> None:
    with pytest.raises(amber.EncodeError) as ei:
        amber.dumps({"rows": [1, {"obj": Unregistered()}]})
    err = ei.value
    assert isinstance(err, TypeError)
    assert "Unregistered" in str(err) and "amber.register" in str(err)
    assert err.path == "$.rows[1].obj"


def test_builtin_subclass_is_refused_not_converted() -> None:
    with pytest.raises(amber.EncodeError, match="subclass of dict"):
        amber.dumps([MyDict(a=1)])
    with pytest.raises(TypeError, match="encode= and decode= hooks"):
        amber.register(MyDict)


def test_unregistered_dataclass_and_enum_say_so() -> None:
    with pytest.raises(amber.EncodeError, match=r"register\(Plain\)"):
        amber.dumps(Plain(1))
    with pytest.raises(amber.EncodeError, match=r"Enum .*Shape is not registered"):
        amber.dumps(Shape.SQUARE)


def test_registered_roundtrip_and_decode_needs_registration() -> None:
    amber.register(Plain)
    try:
        data = amber.dumps(Plain(5))
        assert amber.loads(data) == Plain(5)
    finally:
        amber.unregister(Plain)
    with pytest.raises(amber.DecodeError, match="not registered"):
        amber.loads(data)
    with pytest.raises(amber.EncodeError):
        amber.dumps(Plain(5))


def test_hooks() -> None:
    amber.register(
        Temperature,
        name="weather.Temperature",
        encode=lambda t: t.kelvin,
        decode=lambda k: Temperature(k),
    )
    try:
        data = amber.dumps([Temperature(300.5)])
        assert b"weather.Temperature" in data
        assert amber.loads(data) == [Temperature(300.5)]
    finally:
        amber.unregister(Temperature)


def test_hook_errors_become_encode_errors_with_cause() -> None:
    def bad(_: Any) -> Any:
        raise RuntimeError("boom")

    amber.register(Temperature, encode=bad, decode=lambda s: s)
    try:
        with pytest.raises(amber.EncodeError, match="boom") as ei:
            amber.dumps({"t": Temperature(1)})
        assert isinstance(ei.value.__cause__, RuntimeError)
        assert ei.value.path == "$.t"
    finally:
        amber.unregister(Temperature)


def test_slots_class() -> None:
    amber.register(Slotted)
    try:
        out = amber.loads(amber.dumps(Slotted(1, 2)))
        assert type(out) is Slotted and (out.x, out.y) == (1, 2)
    finally:
        amber.unregister(Slotted)


def test_decorator_form_and_custom_name() -> None:
    @amber.register
    @dataclasses.dataclass
    class Deco:
        v: int

    @dataclasses.dataclass
    class Named:
        v: int

    amber.register(Named, name="app.v1.Named")
    assert amber.loads(amber.dumps(Deco(1))) == Deco(1)
    assert b"app.v1.Named" in amber.dumps(Named(2))
    assert amber.registered()["app.v1.Named"] is Named
    amber.unregister(Deco)
    amber.unregister(Named)


def test_name_conflicts() -> None:
    @dataclasses.dataclass
    class A:
        pass

    @dataclasses.dataclass
    class B:
        pass

    amber.register(A, name="same")
    try:
        with pytest.raises(ValueError, match="already registered"):
            amber.register(B, name="same")
        with pytest.raises(ValueError, match="already registered as"):
            amber.register(A, name="other")
        amber.register(A, name="same")  # idempotent
    finally:
        amber.unregister(A)


def test_register_argument_checks() -> None:
    with pytest.raises(TypeError):
        amber.register(Plain(1))  # type: ignore[type-var]
    with pytest.raises(TypeError, match="both"):
        amber.register(Temperature, encode=lambda t: t)


def test_named_tuple_keeps_type_and_skips_custom_new() -> None:
    class P(typing.NamedTuple):
        x: int
        y: int = 0

    amber.register(P)
    try:
        out = amber.loads(amber.dumps([P(1, 2), P(3)]))
        assert out == [P(1, 2), P(3)] and type(out[0]) is P
    finally:
        amber.unregister(P)


def test_defaultdict_with_non_builtin_factory_is_refused() -> None:
    with pytest.raises(amber.EncodeError, match="factory"):
        amber.dumps(collections.defaultdict(lambda: 0))


def test_other_unsupported_objects() -> None:
    for obj in (object(), len, lambda: 0, type, iter([]), Ellipsis):
        with pytest.raises(amber.EncodeError):
            amber.dumps(obj)
