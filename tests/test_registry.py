"""The registry: an explicit allow-list of user classes, and precise errors outside it."""

from __future__ import annotations

import array
import collections
import dataclasses
import datetime as dt
import decimal
import enum
import re
import threading
import types
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


# Classes whose instances keep their state outside __dict__ and __slots__ (in a builtin or
# C base) cannot be rebuilt as `cls.__new__(cls)` plus attributes: registering them without
# hooks is refused, and the encoder's advice says to give hooks.


def subclass(base: type) -> type:
    return type(f"My{base.__name__}", (base,), {"__module__": __name__})


_HIDDEN_BASES = (decimal.Decimal, collections.deque, dt.timedelta, dt.datetime, dt.date)
_HIDDEN_BASES += (dt.time, Exception, threading.local, collections.OrderedDict)
MY = {base: subclass(base) for base in _HIDDEN_BASES}
HIDDEN_STATE = [*MY.values(), array.array, range, slice, re.Pattern, type, types.FunctionType]
HIDDEN_STATE += [types.ModuleType, types.GeneratorType, property, memoryview]


@pytest.mark.parametrize("cls", HIDDEN_STATE, ids=lambda c: c.__qualname__)
def test_register_refuses_classes_whose_state_it_cannot_carry(cls: type) -> None:
    with pytest.raises(TypeError, match=r"encode= and decode="):
        amber.register(cls)
    assert cls not in amber.registered().values()
    amber.register(cls, encode=repr, decode=str)  # with hooks it is accepted
    amber.unregister(cls)


def advice(obj: Any) -> str:
    with pytest.raises(amber.EncodeError) as ei:
        amber.dumps(obj)
    return str(ei.value)


ADVICE = [MY[decimal.Decimal]("3.14"), MY[collections.deque]([1]), MY[dt.timedelta](1)]
ADVICE += [array.array("i", [1]), range(3), slice(1, 2), re.compile("a"), int, len]
ADVICE += [MY[Exception]("x"), Unregistered(), object(), Ellipsis, NotImplemented]
ADVICE += [types.SimpleNamespace(a=1)]


@pytest.mark.parametrize("obj", ADVICE, ids=lambda o: type(o).__qualname__)
def test_encoder_advice_can_be_followed(obj: Any) -> None:
    cls = type(obj)
    msg = advice(obj)
    if "encode=" in msg:
        with pytest.raises(TypeError, match="encode= and decode="):
            amber.register(cls)
        return
    assert f"register the class with amber.register({cls.__qualname__})" in msg
    amber.register(cls)
    try:
        out = amber.loads(amber.dumps(obj))
        assert type(out) is cls
        assert state_of(out) == state_of(obj)
        if obj is Ellipsis or obj is NotImplemented:
            assert out is obj
    finally:
        amber.unregister(cls)


# What pickle keeps of an instance: its __dict__, every slot that is set (private names
# mangled), and for tuple subclasses the items. `state_of` collects exactly that.


def slot_names(cls: type) -> list[str]:
    names: list[str] = []
    for klass in cls.__mro__:
        slots = klass.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name.startswith("__") and not name.endswith("__"):
                name = f"_{klass.__name__.lstrip('_')}{name}"
            if name not in ("__dict__", "__weakref__") and name not in names:
                names.append(name)
    return names


def state_of(obj: Any) -> Any:
    missing = object()
    slots = {n: getattr(obj, n, missing) for n in slot_names(type(obj))}
    return (
        type(obj),
        tuple(obj) if isinstance(obj, tuple) else None,
        getattr(obj, "__dict__", None),
        {k: v for k, v in slots.items() if v is not missing},
    )
