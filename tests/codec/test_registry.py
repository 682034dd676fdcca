"""The registry: an explicit allow-list of user classes, and precise errors outside it."""

from __future__ import annotations

import array
import collections
import dataclasses
import datetime as dt
import decimal
import enum
import fractions
import io
import pickle
import re
import sys
import threading
import types
import typing
import uuid
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


def _gen() -> Any:
    yield 1


@pytest.mark.parametrize(
    "value",
    [
        lambda: 1,
        len,
        _gen(),
        threading.Lock(),
        threading.Thread(),
        io.BytesIO(),
        sys,
        (lambda: 1).__code__,
    ],
    ids=lambda v: type(v).__name__,
)
def test_code_and_running_state_are_not_data(value: Any) -> None:
    with pytest.raises(amber.EncodeError, match="are not data") as ei:
        amber.dumps({"k": [value]})
    assert ei.value.path == "$.k[0]"
    assert "register" not in str(ei.value)


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


class MyFraction(fractions.Fraction):
    pass


class MyUUID(uuid.UUID):
    pass


@pytest.mark.parametrize(
    "obj",
    [MyFraction(1, 3), MyUUID(int=5, is_safe=uuid.SafeUUID.safe), MyUUID(int=2**128 - 1)],
    ids=repr,
)
def test_stdlib_subclasses_with_state_in_slots_round_trip(obj: Any) -> None:
    # Fraction keeps its parts in __slots__, UUID defines __getstate__/__setstate__.
    cls = type(obj)
    amber.register(cls)
    try:
        for identity in (False, True):
            out = amber.loads(amber.dumps(obj, identity=identity))
            assert type(out) is cls and out == obj and repr(out) == repr(obj)
            assert state_of(out) == state_of(obj) == state_of(pickle_round_trip(obj))
    finally:
        amber.unregister(cls)


def advice(obj: Any) -> str:
    with pytest.raises(amber.EncodeError) as ei:
        amber.dumps(obj)
    return str(ei.value)


ADVICE = [MY[decimal.Decimal]("3.14"), MY[collections.deque]([1]), MY[dt.timedelta](1)]
ADVICE += [array.array("i", [1]), range(3), slice(1, 2), re.compile("a"), int]
ADVICE += [MY[Exception]("x"), Unregistered(), object(), Ellipsis, NotImplemented]
ADVICE += [MyFraction(1, 3), MyUUID(int=1), types.SimpleNamespace(a=1)]


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


def pickle_round_trip(obj: Any) -> Any:
    return pickle.loads(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))


class SlotBase:
    __slots__ = ("a",)


class SlotSub(SlotBase):  # has a __dict__ as well
    pass


class DictInSlots:
    __slots__ = ("__dict__", "a")


class Private:
    __slots__ = ("__secret", "plain")


class _Underscored(Private):
    __slots__ = ("__hidden",)


class PrivateSub(_Underscored):
    pass


class NTBase(typing.NamedTuple):
    x: int
    y: int


class NTSub(NTBase):
    pass


CollNTSub = type("CollNTSub", (collections.namedtuple("CollNT", "x y"),), {})


def _slot_sub() -> Any:
    s = SlotSub()
    s.a, s.b = 1, [2]
    return s


def _dict_in_slots() -> Any:
    d = DictInSlots()
    d.a, d.b = "slot", "dict"
    return d


def _private() -> Any:
    p = PrivateSub()
    p._Private__secret, p._Underscored__hidden, p.extra = 42, "h", 3  # type: ignore[attr-defined]
    return p


def _private_unset() -> Any:
    p = Private()
    p._Private__secret = 7  # type: ignore[attr-defined]
    return p


def _nt_sub() -> Any:
    n = NTSub(1, 2)
    n.extra = {"k": 3}  # type: ignore[attr-defined]
    return n


def _coll_nt_sub() -> Any:
    n = CollNTSub(1, 2)
    n.extra = 3
    return n


LAYOUTS = [_slot_sub, _dict_in_slots, _private, _private_unset, _nt_sub, _coll_nt_sub]


@pytest.mark.parametrize("make", LAYOUTS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("identity", [False, True])
def test_slots_dict_and_named_tuple_attributes_are_all_kept(make: Any, identity: bool) -> None:
    obj = make()
    amber.register(type(obj))
    try:
        out = amber.loads(amber.dumps(obj, identity=identity))
        assert state_of(out) == state_of(obj) == state_of(pickle_round_trip(obj))
    finally:
        amber.unregister(type(obj))


def test_cycles_through_slots_and_named_tuple_attributes() -> None:
    s = SlotSub()
    s.a, s.b = None, None
    s.a = s.b = s
    n = NTSub(1, [])
    n.me = n  # type: ignore[attr-defined]
    n[1].append(n)
    for obj in (s, n):
        amber.register(type(obj))
        try:
            out = amber.loads(amber.dumps(obj, identity=True))
            assert type(out) is type(obj)
            if isinstance(out, SlotSub):
                assert out.a is out and out.b is out
            else:
                assert out.me is out and out[1][0] is out and out.x == 1
        finally:
            amber.unregister(type(obj))


# __getstate__ and __setstate__ are honoured as pickle honours them.


class Conn:
    def __init__(self) -> None:
        self.host, self.password = "db", "hunter2"

    def __getstate__(self) -> Any:
        return {"host": self.host}

    def __setstate__(self, state: Any) -> None:
        self.__dict__.update(state)
        self.password = None


class Locked:
    def __init__(self) -> None:
        self.n = 1
        self.lock = threading.Lock()

    def __getstate__(self) -> Any:
        return {k: v for k, v in self.__dict__.items() if k != "lock"}

    def __setstate__(self, state: Any) -> None:
        self.__dict__.update(state)
        self.lock = threading.Lock()


class AsTuple:
    """Any state value, here a tuple, when the class has its own __setstate__."""

    __slots__ = ("a", "b", "cache")

    def __init__(self, a: Any, b: Any) -> None:
        self.a, self.b, self.cache = a, b, {"big": a}

    def __getstate__(self) -> Any:
        return (self.b, self.a)

    def __setstate__(self, state: Any) -> None:
        self.b, self.a = state
        self.cache = None


class SeesState:
    """Only __setstate__: it is given pickle's default state and records it."""

    __slots__ = ("__dict__", "s", "seen")

    def __setstate__(self, state: Any) -> None:
        self.seen = state


class GetOnly:
    """Only __getstate__: its dict or (dict, slots) result is applied as pickle does."""

    __slots__ = ("__dict__", "a")

    def __init__(self) -> None:
        self.a, self.b, self.c = 1, 2, 3

    def __getstate__(self) -> Any:
        return ({"b": self.b}, {"a": self.a})


class NoneState:
    def __init__(self) -> None:
        self.x = 1

    def __getstate__(self) -> Any:
        return None

    def __setstate__(self, state: Any) -> None:  # pragma: no cover - must not be called
        raise AssertionError("__setstate__ called for a None state")


class NTState(typing.NamedTuple):
    x: int

    def __getstate__(self) -> Any:
        return {"note": "from getstate"}

    def __setstate__(self, state: Any) -> None:
        raise AssertionError("a NamedTuple without __dict__ cannot take this state")


def _seen_sees_state(s: Any) -> Any:
    out = SeesState()
    if s is not None:
        out.s = s
        out.k = "v"
    return out


STATEFUL = [
    Conn,
    Locked,
    lambda: AsTuple(1, [2]),
    lambda: _seen_sees_state(None),
    lambda: _seen_sees_state(5),
    GetOnly,
    NoneState,
]


@pytest.mark.parametrize("make", STATEFUL, ids=range(len(STATEFUL)))
@pytest.mark.parametrize("identity", [False, True])
def test_getstate_and_setstate_as_pickle(make: Any, identity: bool) -> None:
    obj = make()
    cls = type(obj)
    amber.register(cls)
    try:
        want = pickle_round_trip(obj)
        out = amber.loads(amber.dumps(obj, identity=identity))
        got_state, want_state = state_of(out), state_of(want)
        if isinstance(obj, Locked):
            assert type(out.lock) is type(obj.lock) and not out.lock.locked()
            del got_state[2]["lock"], want_state[2]["lock"]
        assert got_state == want_state
    finally:
        amber.unregister(cls)


def test_getstate_decides_what_is_written() -> None:
    amber.register(Conn)
    try:
        data = amber.dumps([Conn(), Conn()])
        assert b"hunter2" not in data
        assert [c.__dict__ for c in amber.loads(data)] == [{"host": "db", "password": None}] * 2
    finally:
        amber.unregister(Conn)


class BadState:
    def __getstate__(self) -> Any:
        return [1, 2]


class SlotsDictState:
    __slots__ = ("a",)

    def __getstate__(self) -> Any:
        return {"a": 1}


def test_getstate_without_setstate_must_give_a_state_amber_can_apply() -> None:
    for cls, why in ((BadState, "list"), (SlotsDictState, "no __dict__")):
        amber.register(cls)
        try:
            with pytest.raises(amber.EncodeError, match=why) as ei:
                amber.dumps({"x": cls()})
            assert ei.value.path == "$.x" and "__setstate__" in str(ei.value)
        finally:
            amber.unregister(cls)


def test_getstate_results_are_owned_while_encoded() -> None:
    # Each call returns fresh objects that only the encoder holds; in identity mode a freed
    # state must not be mistaken for a later one at the same address.
    class Fresh:
        def __init__(self, i: int) -> None:
            self.i = i

        def __getstate__(self) -> Any:
            shared = [self.i, str(self.i)]
            return {"a": shared, "b": shared, "c": [self.i] * 3}

        def __setstate__(self, state: Any) -> None:
            assert state["a"] is state["b"]
            self.__dict__.update(state)

    amber.register(Fresh)
    try:
        objs = [Fresh(i) for i in range(2000)]
        out = amber.loads(amber.dumps(objs, identity=True))
        assert [o.__dict__["c"] for o in out] == [[i] * 3 for i in range(2000)]
        assert [o.a for o in out] == [[i, str(i)] for i in range(2000)]
    finally:
        amber.unregister(Fresh)


def test_named_tuple_getstate_is_applied_to_its_dict() -> None:
    class NTWithState(NTBase):
        def __getstate__(self) -> Any:
            return {"note": self.x + self.y}

    amber.register(NTWithState)
    amber.register(NTState)
    try:
        out = amber.loads(amber.dumps(NTWithState(1, 2)))
        assert type(out) is NTWithState and out == (1, 2) and out.note == 3
        with pytest.raises(amber.DecodeError, match="AssertionError"):
            amber.loads(amber.dumps(NTState(1)))
    finally:
        amber.unregister(NTWithState)
        amber.unregister(NTState)


# Instances made through a subscripted generic class carry __orig_class__ (set by typing);
# it names a type, not data, and is not kept.

T = typing.TypeVar("T")


@dataclasses.dataclass
class Box(typing.Generic[T]):
    item: T


def test_generic_instances_made_through_an_alias() -> None:
    amber.register(Box)
    try:
        box = Box[int](1)
        assert box.__orig_class__ == Box[int]  # type: ignore[attr-defined]
        for identity in (False, True):
            out = amber.loads(amber.dumps(box, identity=identity))
            assert out == Box(1) and out.__dict__ == {"item": 1}
        assert box.__dict__ == {"item": 1, "__orig_class__": Box[int]}
    finally:
        amber.unregister(Box)


@pytest.mark.parametrize("make", [_slot_sub, _nt_sub, lambda: AsTuple(1, [[2]])], ids=range(3))
def test_object_states_count_the_same_depth_both_ways(make: Any) -> None:
    obj = make()
    amber.register(type(obj))
    try:
        data = amber.dumps(obj)
        for depth in range(6):
            try:
                amber.dumps(obj, max_depth=depth)
                written = True
            except amber.EncodeError:
                written = False
            try:
                amber.loads(data, max_depth=depth)
                read = True
            except amber.DecodeError:
                read = False
            assert written == read, depth
    finally:
        amber.unregister(type(obj))


def test_registry_entries_are_frozen_records_checked_when_made() -> None:
    from amber import _native

    class Point:
        pass

    entry = _native.RegistryEntry("pt", "DICT", Point, fields=("a",), flags=1)
    assert (entry.name, entry.mode, entry.cls, entry.fields, entry.flags) == (
        "pt",
        "DICT",
        Point,
        ("a",),
        1,
    )
    assert entry.encode is None and entry.decode is None
    with pytest.raises(AttributeError):
        entry.mode = "HOOK"  # type: ignore[misc]
    with pytest.raises(ValueError, match="unknown mode"):
        _native.RegistryEntry("pt", "PICKLE", Point)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="HOOK mode"):
        _native.RegistryEntry("pt", "HOOK", Point)
    with pytest.raises(TypeError, match="HOOK mode"):
        _native.RegistryEntry("pt", "DICT", Point, encode=repr, decode=repr)
    with pytest.raises(ValueError, match="unknown flags"):
        _native.RegistryEntry("pt", "DICT", Point, flags=64)
    with pytest.raises(TypeError, match="tuple of str"):
        _native.RegistryEntry("pt", "DICT", Point, fields=("a", 1))  # type: ignore[arg-type]
