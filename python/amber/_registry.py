"""The class registry, and the classifier the encoder asks about types outside its hot set.

Decoding builds user classes only from this registry: an explicit allow-list keyed by a
name that travels in the data. Nothing here imports a module or resolves a name that data
supplies.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import io
import struct
import sys
import threading
import types
from collections.abc import Callable
from typing import Any, Literal, TypeVar

from amber import _frames, _native

_K = _native.KINDS

T = TypeVar("T", bound=type)

# A frozen record: name, mode, cls, encode and decode hooks, fields and state flags. `fields`
# is the slot names (DICT mode), the dataclass fields and slot names (SLOTS mode) or
# `_fields` (NAMEDTUPLE).
Entry = _native.RegistryEntry
Mode = Literal["ENUM", "DICT", "SLOTS", "NAMEDTUPLE", "HOOK"]

# State flags: the class defines its own __getstate__ / __setstate__; its instances (of a
# NamedTuple class) have a __dict__.
GETSTATE, SETSTATE, HAS_DICT = 1, 2, 4

_by_type: dict[type, Entry] = {}
_by_name: dict[str, Entry] = {}

_BUILTIN_BASES: tuple[type, ...] = (
    bool,
    int,
    float,
    complex,
    str,
    bytes,
    bytearray,
    list,
    tuple,
    dict,
    set,
    frozenset,
)

_PTR = struct.calcsize("P")
_MANAGED_DICT = 1 << 4  # Py_TPFLAGS_MANAGED_DICT (3.11+); unused before
_OBJECT_GETSTATE = getattr(object, "__getstate__", None)  # 3.11+


def _is_namedtuple(cls: type) -> bool:
    return issubclass(cls, tuple) and isinstance(getattr(cls, "_fields", None), tuple)


def _slots_over_mro(cls: type) -> list[str]:
    """Every slot that holds a value, as its attribute name (private names mangled, as Python
    stores them), bases first; a name declared twice is counted twice."""
    names: list[str] = []
    for klass in reversed(cls.__mro__):
        slots = klass.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name in ("__dict__", "__weakref__"):
                continue
            if name.startswith("__") and not name.endswith("__") and klass.__name__.strip("_"):
                name = f"_{klass.__name__.lstrip('_')}{name}"
            names.append(name)
    return names


def _hidden_state_base(cls: type) -> type | None:
    """The builtin or C base whose instance struct holds data that is neither in `__dict__`
    nor in `__slots__` (None if there is none). This is the test CPython applies before
    pickling an object with `object.__reduce_ex__`: the instance is larger than `object`
    plus its dict and weakref pointers and its slots, or it has variable-size items."""

    def hidden(klass: type) -> bool:
        if klass.__itemsize__:
            return True
        size = object.__basicsize__ + _PTR * len(_slots_over_mro(klass))
        if klass.__dictoffset__ and not klass.__flags__ & _MANAGED_DICT:
            size += _PTR
        if klass.__weakrefoffset__ > 0:
            size += _PTR
        return klass.__basicsize__ > size

    if not hidden(cls):
        return None
    # The nearest base that has such data (Decimal for a Decimal subclass), or cls itself.
    return next((klass for klass in cls.__mro__[1:] if hidden(klass)), cls)


def _qualname(tp: type) -> str:
    return tp.__qualname__ if tp.__module__ == "builtins" else f"{tp.__module__}.{tp.__qualname__}"


def _slot_names(cls: type) -> tuple[str, ...]:
    return tuple(dict.fromkeys(_slots_over_mro(cls)))


def _state_flags(cls: type) -> int:
    """Whether `cls` defines its own __getstate__ / __setstate__, as pickle would see them.
    The pair dataclasses adds to frozen slotted classes only restates the fields (which
    SLOTS mode writes anyway) and is ignored."""

    def own(method: Any) -> bool:
        return getattr(method, "__module__", None) != "dataclasses"

    getstate = getattr(cls, "__getstate__", None)
    setstate = getattr(cls, "__setstate__", None)
    flags = 0
    if getstate is not None and getstate is not _OBJECT_GETSTATE and own(getstate):
        flags |= GETSTATE
    if setstate is not None and own(setstate):
        flags |= SETSTATE
    return flags


def register(
    cls: T,
    *,
    name: str | None = None,
    encode: Callable[[Any], Any] | None = None,
    decode: Callable[[Any], Any] | None = None,
) -> T:
    """Allow instances of `cls` to be encoded and decoded; returns `cls` (usable as a decorator).

    Enum, IntEnum and Flag classes travel as their member values; NamedTuple classes as their
    fields (plus their instance `__dict__`, if they have one); dataclasses and other classes as
    pickle writes them: their `__dict__` and slot values, or what `__getstate__()` returns,
    rebuilt with `cls.__new__(cls)` and no `__init__` call, then `__setstate__(state)` if the
    class defines it. Classes whose instances keep data elsewhere (subclasses of `Decimal`,
    `deque`, `datetime`, `Exception`, C types such as `array.array`) are refused: they need
    `encode(obj) -> state` and `decode(state) -> obj` hooks, which replace all of this for any
    class. `name` (default `module.qualname`) is what the data carries; decoding looks it up
    here and never imports anything.
    """
    if not isinstance(cls, type):
        raise TypeError(f"register() takes a class, not {type(cls).__name__}")
    if (encode is None) != (decode is None):
        raise TypeError("give both encode and decode hooks, or neither")
    if name is None:
        name = f"{cls.__module__}.{cls.__qualname__}"
    if not isinstance(name, str) or not name:
        raise TypeError("name must be a non-empty str")

    fields: tuple[str, ...] | None = None
    flags = 0
    mode: Mode
    if encode is not None:
        if not callable(encode) or not callable(decode):
            raise TypeError("encode and decode must be callable")
        mode = "HOOK"
    elif issubclass(cls, enum.Enum):
        mode = "ENUM"
    elif _is_namedtuple(cls):
        mode = "NAMEDTUPLE"
        fields = tuple(cls._fields)  # type: ignore[attr-defined]
        flags = _state_flags(cls) | (HAS_DICT if cls.__dictoffset__ else 0)
    elif issubclass(cls, _BUILTIN_BASES):
        base = next(b for b in _BUILTIN_BASES if issubclass(cls, b))
        raise TypeError(
            f"{cls.__qualname__} subclasses {base.__name__}; register it with encode= and "
            "decode= hooks so its contents and its type both survive"
        )
    elif (hidden := _hidden_state_base(cls)) is not None:
        where = "" if hidden is cls else f" (in its base {_qualname(hidden)})"
        raise TypeError(
            f"{cls.__qualname__} instances keep data outside __dict__ and __slots__{where}, "
            "which amber cannot write; register it with encode= and decode= hooks"
        )
    else:
        flags = _state_flags(cls)
        if cls.__dictoffset__:
            mode = "DICT"
            fields = _slot_names(cls)
        else:
            mode = "SLOTS"
            fields = _slot_names(cls)
            if dataclasses.is_dataclass(cls):
                names = tuple(f.name for f in dataclasses.fields(cls))
                fields = names + tuple(n for n in fields if n not in names)

    entry = Entry(name, mode, cls, encode=encode, decode=decode, fields=fields, flags=flags)
    known = _by_name.get(name)
    if known is not None and known.cls is not cls:
        raise ValueError(f"name {name!r} is already registered for {known.cls!r}")
    old = _by_type.get(cls)
    if old is not None and old.name != name:
        raise ValueError(f"{cls!r} is already registered as {old.name!r}")
    _by_type[cls] = entry
    _by_name[name] = entry
    _native._clear_type_cache()
    return cls


def unregister(cls: type) -> None:
    """Remove `cls` from the registry (a no-op if it is not there)."""
    entry = _by_type.pop(cls, None)
    if entry is not None:
        _by_name.pop(entry.name, None)
        _native._clear_type_cache()


def registered() -> dict[str, type]:
    """A snapshot of the registry: name -> class."""
    return {name: entry.cls for name, entry in _by_name.items()}


# Code and running state, not data: no registration makes sense for them.
_NOT_DATA: tuple[type, ...] = (
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    types.LambdaType,
    types.GeneratorType,
    types.CoroutineType,
    types.AsyncGeneratorType,
    types.ModuleType,
    types.CodeType,
    types.FrameType,
    types.TracebackType,
    type(threading.Lock()),
    type(threading.RLock()),
    threading.Thread,
    io.IOBase,
)


def _unsupported(tp: type) -> tuple[int, str]:
    qual = _qualname(tp)
    if issubclass(tp, _NOT_DATA):
        why = (
            f"cannot encode objects of type {qual}: functions, generators, locks, threads, "
            "modules and open files are not data; encode the data they hold or produce instead"
        )
    elif issubclass(tp, enum.Enum):
        why = f"Enum {qual} is not registered; call amber.register({tp.__qualname__})"
    elif dataclasses.is_dataclass(tp) or _is_namedtuple(tp):
        why = f"{qual} is not registered; call amber.register({tp.__qualname__})"
    elif issubclass(tp, _BUILTIN_BASES):
        base = next(b for b in _BUILTIN_BASES if issubclass(tp, b))
        why = (
            f"{qual} is a subclass of {base.__name__}; amber keeps types exactly, so register "
            "it with amber.register(cls, encode=..., decode=...)"
        )
    elif _hidden_state_base(tp) is not None:
        why = (
            f"cannot encode objects of type {qual}, which keep data outside __dict__ and "
            "__slots__; register the class with amber.register(cls, encode=..., decode=...)"
        )
    else:
        why = (
            f"cannot encode objects of type {qual}; register the class with "
            f"amber.register({tp.__qualname__})"
        )
    return (_K["UNSUPPORTED"], why)


def find_class(module: str, qualname: str) -> type | None:
    """The registered class defined as `module.qualname`, or None: how readers of other
    formats that name classes by module (DataZip) find the ones the user allowed."""
    for tp in _by_type:
        if tp.__module__ == module and tp.__qualname__ == qualname:
            return tp
    return None


def classify(tp: type) -> tuple[int, Any]:
    """(kind, extra) for a type the encoder does not dispatch on directly."""
    entry = _by_type.get(tp)
    if entry is not None:
        return (_K["REGISTERED"], entry)
    simple: dict[Any, str] = {
        datetime.time: "TIME",
        datetime.timedelta: "TIMEDELTA",
        datetime.timezone: "TIMEZONE",
    }
    mods = sys.modules
    for module, attr, kind in (
        ("zoneinfo", "ZoneInfo", "ZONEINFO"),
        ("decimal", "Decimal", "DECIMAL"),
        ("uuid", "UUID", "UUID"),
        ("fractions", "Fraction", "FRACTION"),
        ("collections", "OrderedDict", "ORDERED_DICT"),
        ("collections", "deque", "DEQUE"),
        ("collections", "Counter", "COUNTER"),
        ("collections", "defaultdict", "DEFAULTDICT"),
    ):
        mod = mods.get(module)
        if mod is not None:
            simple[getattr(mod, attr)] = kind
    if tp in simple:
        return (_K[simple[tp]], None)
    np = mods.get("numpy")
    if np is not None:
        if tp is np.ndarray:
            return (_K["NDARRAY"], None)
        if issubclass(tp, np.generic) and tp.__module__ == "numpy":
            return (_K["NPSCALAR"], None)
    table = _frames.kind_of(tp)
    if table is not None:
        return (_K["TABLE"], table)
    return _unsupported(tp)


_native._install(classify, _by_name)
