"""The class registry, and the classifier the encoder asks about types outside its hot set.

Decoding builds user classes only from this registry: an explicit allow-list keyed by a
name that travels in the data. Nothing here imports a module or resolves a name that data
supplies.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import sys
from collections.abc import Callable
from typing import Any, TypeVar

from amber import _native

_K = _native.KINDS
_M = _native.MODES

T = TypeVar("T", bound=type)

# name, mode, class, encode hook, decode hook, field names (SLOTS mode)
Entry = tuple[str, int, type, Any, Any, "tuple[str, ...] | None"]

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


def _is_namedtuple(cls: type) -> bool:
    return issubclass(cls, tuple) and isinstance(getattr(cls, "_fields", None), tuple)


def _slot_names(cls: type) -> tuple[str, ...]:
    names: list[str] = []
    for klass in reversed(cls.__mro__):
        slots = klass.__dict__.get("__slots__", ())
        if isinstance(slots, str):
            slots = (slots,)
        for s in slots:
            if s not in ("__dict__", "__weakref__") and s not in names:
                names.append(s)
    return tuple(names)


def register(
    cls: T,
    *,
    name: str | None = None,
    encode: Callable[[Any], Any] | None = None,
    decode: Callable[[Any], Any] | None = None,
) -> T:
    """Allow instances of `cls` to be encoded and decoded; returns `cls` (usable as a decorator).

    Enum, IntEnum and Flag classes travel as their member values; NamedTuple classes as their
    fields; dataclasses and other classes as their instance `__dict__` (or their slots), rebuilt
    with `cls.__new__(cls)` and no `__init__` call, as pickle does. `encode(obj) -> state` and
    `decode(state) -> obj` replace that for any class. `name` (default `module.qualname`) is
    what the data carries; decoding looks it up here and never imports anything.
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
    if encode is not None:
        if not callable(encode) or not callable(decode):
            raise TypeError("encode and decode must be callable")
        mode = _M["HOOK"]
    elif issubclass(cls, enum.Enum):
        mode = _M["ENUM"]
    elif _is_namedtuple(cls):
        mode = _M["NAMEDTUPLE"]
    elif issubclass(cls, _BUILTIN_BASES):
        base = next(b for b in _BUILTIN_BASES if issubclass(cls, b))
        raise TypeError(
            f"{cls.__qualname__} subclasses {base.__name__}; register it with encode= and "
            "decode= hooks so its contents and its type both survive"
        )
    elif getattr(cls, "__dictoffset__", 0):
        mode = _M["DICT"]
    else:
        mode = _M["SLOTS"]
        if dataclasses.is_dataclass(cls):
            fields = tuple(f.name for f in dataclasses.fields(cls))
        else:
            fields = _slot_names(cls)

    entry: Entry = (name, mode, cls, encode, decode, fields)
    known = _by_name.get(name)
    if known is not None and known[2] is not cls:
        raise ValueError(f"name {name!r} is already registered for {known[2]!r}")
    old = _by_type.get(cls)
    if old is not None and old[0] != name:
        raise ValueError(f"{cls!r} is already registered as {old[0]!r}")
    _by_type[cls] = entry
    _by_name[name] = entry
    _native._clear_type_cache()
    return cls


def unregister(cls: type) -> None:
    """Remove `cls` from the registry (a no-op if it is not there)."""
    entry = _by_type.pop(cls, None)
    if entry is not None:
        _by_name.pop(entry[0], None)
        _native._clear_type_cache()


def registered() -> dict[str, type]:
    """A snapshot of the registry: name -> class."""
    return {name: entry[2] for name, entry in _by_name.items()}


def _unsupported(tp: type) -> tuple[int, str]:
    qual = tp.__qualname__ if tp.__module__ == "builtins" else f"{tp.__module__}.{tp.__qualname__}"
    if issubclass(tp, enum.Enum):
        why = f"Enum {qual} is not registered; call amber.register({tp.__qualname__})"
    elif dataclasses.is_dataclass(tp) or _is_namedtuple(tp):
        why = f"{qual} is not registered; call amber.register({tp.__qualname__})"
    elif issubclass(tp, _BUILTIN_BASES):
        base = next(b for b in _BUILTIN_BASES if issubclass(tp, b))
        why = (
            f"{qual} is a subclass of {base.__name__}; amber keeps types exactly, so register "
            "it with amber.register(cls, encode=..., decode=...)"
        )
    else:
        why = f"cannot encode objects of type {qual}; register the class with amber.register()"
    return (_K["UNSUPPORTED"], why)


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
    return _unsupported(tp)


_native._install(classify, _by_name)
