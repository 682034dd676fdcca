"""Zips that amber did not write, opened read-only and safely: NumPy's `.npz` files and DataZip
files. Nothing in them runs: `.npy` arrays of Python objects (which need pickle) and DataZip's
pickled entries are refused, and a class that DataZip would import by the name the file gives
is rebuilt only if it is registered with `amber.register` (found by its module and name).
"""

from __future__ import annotations

import collections
import datetime
import json
import pathlib
from collections.abc import Callable
from typing import Any

from amber import _registry
from amber._native import ArchiveError
from amber.archive import _entries
from amber.archive._errors import archive_error

DATAZIP_ATTRIBUTES = "__attributes__.json"
# How deep DataZip values may nest: each level takes a few of Python's stack frames, and the
# JSON parser itself stops near Python's recursion limit.
_MAX_DEPTH = 200
_FACTORIES = {
    "list": list,
    "dict": dict,
    "set": set,
    "int": int,
    "float": float,
    "str": str,
    "tuple": tuple,
    "bool": bool,
    "bytes": bytes,
    "frozenset": frozenset,
    "complex": complex,
}


def refused(msg: str, entry: str | None) -> ArchiveError:
    return archive_error("refused", msg, entry=entry)


def detect(names: list[str]) -> str | None:
    """`"datazip"`, `"npz"` or None for a zip without an amber manifest."""
    if DATAZIP_ATTRIBUTES in names:
        return "datazip"
    if names and all(n.endswith(".npy") for n in names):
        return "npz"
    return None


def npz_keys(names: list[str]) -> dict[str, dict[str, Any]]:
    return {
        n[: -len(".npy")]: {"type": "numpy.ndarray", "encoding": "npy", "entries": [n]}
        for n in names
    }


class DataZip:
    """A DataZip file's keys, decoded from its `__attributes__.json` without importing or
    unpickling anything."""

    def __init__(self, attributes: Any, read: Callable[[str], Any]) -> None:
        try:
            doc = json.loads(bytes(attributes).decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as e:
            raise _bad(f"not JSON: {e}") from None
        if not isinstance(doc, dict):
            raise _bad("not a JSON object")
        state = doc.pop("__state__", {})
        if not isinstance(state, dict):
            raise _bad("__state__ is not an object")
        self.attributes: dict[str, Any] = doc
        self._state = state
        self._read = read
        self._made: dict[str, Any] = {}
        self._entry = DATAZIP_ATTRIBUTES  # the entry being decoded, for errors

    def keys(self) -> dict[str, dict[str, Any]]:
        out = {}
        for key, value in self.attributes.items():
            kind = (
                value.get("__type__", "dict") if isinstance(value, dict) else type(value).__name__
            )
            out[key] = {"type": str(kind), "encoding": "datazip", "entries": [DATAZIP_ATTRIBUTES]}
        return out

    def read(self, key: str) -> Any:
        """The value of `key`; anything in the file that does not make one is an ArchiveError
        naming the entry at fault."""
        self._made = {}
        self._entry = DATAZIP_ATTRIBUTES
        try:
            return self._decode(self.attributes[key], 0)
        except (ArchiveError, MemoryError):
            raise
        except RecursionError:
            raise _bad(f"key {key!r}: values nested too deeply", self._entry) from None
        except Exception as e:
            raise _bad(f"key {key!r}: {type(e).__name__}: {e}", self._entry) from e

    def _decode(self, obj: Any, depth: int) -> Any:
        if depth > _MAX_DEPTH:
            raise _bad(f"values nested deeper than {_MAX_DEPTH}")
        if isinstance(obj, list):
            return [self._decode(v, depth + 1) for v in obj]
        if not isinstance(obj, dict):
            return obj
        kind = obj.get("__type__")
        if kind is None:
            return {k: self._decode(v, depth + 1) for k, v in obj.items()}
        if not isinstance(kind, str):
            raise _bad(f"__type__ {kind!r} is not a str")
        simple = _SIMPLE.get(kind)
        if simple is not None:
            return simple(self, obj, depth + 1)
        return self._located(kind, obj, depth + 1)

    def _items(self, obj: dict[str, Any], depth: int) -> Any:
        return self._decode(obj.get("items"), depth)

    def _located(self, kind: str, obj: dict[str, Any], depth: int) -> Any:
        loc = obj.get("__loc__")
        if not isinstance(loc, str):
            raise _bad(f"a {kind} without a __loc__")
        if loc in self._made:
            return self._made[loc]
        if kind == "ndarray":
            value = _entries.decode({"encoding": "npy"}, [self._read(loc)], loc)
        elif kind in ("pdDataFrame", "pdSeries", "plDataFrame", "plLazyFrame", "plSeries"):
            self._entry = loc
            value = _parquet(kind, self._read(loc), obj, loc)
            self._entry = DATAZIP_ATTRIBUTES
        elif kind in ("pgoFigure",) or loc.endswith(".pkl"):
            raise refused(f"entry {loc!r} is a pickle ({kind}); amber does not unpickle", loc)
        else:
            value = self._object(kind, loc, depth)
        self._made[loc] = value
        return value

    def _object(self, kind: str, loc: str, depth: int) -> Any:
        cls: Any = _registered_class(kind, loc)
        if loc not in self._state:
            raise _bad(f"object {loc!r} has no state")
        # Made before its state is decoded, so that a state that refers to the object (a cycle)
        # finds it, as pickle and DataZip do.
        obj = cls.__new__(cls)
        self._made[loc] = obj
        state = self._decode(self._state[loc], depth)
        if getattr(cls, "__setstate__", None) is not None:
            obj.__setstate__(state)
            return obj
        if state is None:
            attrs, slots = None, None
        elif isinstance(state, dict):
            attrs, slots = state, None
        elif (
            isinstance(state, (tuple, list))
            and len(state) == 2
            and isinstance(state[0], (dict, type(None)))
            and isinstance(state[1], dict)
        ):
            attrs, slots = state
        else:
            raise _bad(f"object {loc!r} has a state of type {type(state).__name__}")
        if attrs:
            obj.__dict__.update(attrs)
        for name, value in (slots or {}).items():
            object.__setattr__(obj, name, value)
        return obj


def _bad(msg: str, entry: str = DATAZIP_ATTRIBUTES) -> ArchiveError:
    return archive_error("malformed", f"{entry}: {msg}", entry=entry)


def _registered_class(kind: str, loc: str) -> type:
    module, _, qualname = kind.partition("|")
    qualname = qualname.partition("|")[0]
    cls = _registry.find_class(module, qualname)
    if cls is None:
        raise refused(
            f"DataZip would import {module}.{qualname} to rebuild {loc!r}; amber rebuilds only "
            f"registered classes: amber.register({qualname}) first",
            DATAZIP_ATTRIBUTES,
        )
    return cls


def _parquet(kind: str, data: Any, obj: dict[str, Any], loc: str) -> Any:
    """A table DataZip wrote as Parquet; a Series named as DataZip recorded beside it (its
    Parquet column has another name: `0` for pandas, "IGNORE" for polars)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(pa.BufferReader(pa.py_buffer(data)))
    table.validate(full=True)
    if kind in ("pdSeries", "plSeries") and table.num_columns != 1:
        raise _bad(f"a {kind} stored as {table.num_columns} columns, not 1", loc)
    if kind.startswith("pd"):
        df = table.to_pandas()
        if kind != "pdSeries":
            return df
        series = df.iloc[:, 0]
        name, _ = _pair(obj.get("no_pqt_cols"))
        series.name = tuple(name) if isinstance(name, list) else name
        return series
    import polars as pl

    frame: Any = pl.from_arrow(table)
    if kind == "plSeries":
        out = frame.to_series()
        name = obj.get("col_name")
        if name is not None:
            if not isinstance(name, str):
                raise _bad(f"a polars Series named {name!r}, not a str", DATAZIP_ATTRIBUTES)
            out = out.alias(name)
        return out
    return frame.lazy() if kind == "plLazyFrame" else frame


def _pair(value: Any) -> tuple[Any, Any]:
    """DataZip's `no_pqt_cols`: [the Series' name, None], or nothing (a Series named None)."""
    if value is None:
        return None, None
    if not isinstance(value, list) or len(value) != 2:
        raise _bad(f"no_pqt_cols {value!r} is not a pair")
    return value[0], value[1]


def _factory(z: DataZip, obj: dict[str, Any], depth: int) -> Any:
    spec = obj.get("default_factory")
    if spec is None:
        return None
    items = spec.get("items") if isinstance(spec, dict) and spec.get("__type__") == "type" else None
    builtin = _builtin_type(items)
    if builtin is not None:
        return builtin
    raise refused(f"a defaultdict factory {spec!r} that amber would have to import", None)


def _complex(z: DataZip, obj: dict[str, Any], depth: int) -> complex:
    items = obj.get("items")
    if not (
        isinstance(items, list)
        and len(items) == 2
        and all(isinstance(x, (int, float)) for x in items)
    ):
        raise _bad(f"complex {items!r}")
    return complex(items[0], items[1])


def _text(obj: dict[str, Any]) -> str:
    text = obj.get("items")
    if not isinstance(text, str):
        raise _bad(f"{obj.get('__type__')} {text!r} is not text")
    return text.strip("'\"")


def _namedtuple(z: DataZip, obj: dict[str, Any], depth: int) -> Any:
    kind = obj.get("objinfo")
    items = z._decode(obj.get("items"), depth)
    if not isinstance(kind, str) or not isinstance(items, dict):
        raise _bad("a namedtuple without objinfo or items")
    return _registered_class(kind, "namedtuple")(**items)


def _builtin_type(items: Any) -> type | None:
    """The builtin type DataZip names as `["builtins", name]`, if it is one amber allows."""
    if isinstance(items, list) and len(items) == 2 and items[0] == "builtins":
        return _FACTORIES.get(items[1]) if isinstance(items[1], str) else None
    return None


def _type(z: DataZip, obj: dict[str, Any], depth: int) -> type:
    items = obj.get("items")
    builtin = _builtin_type(items)
    if builtin is not None:
        return builtin
    if isinstance(items, list) and len(items) == 2:
        return _registered_class(f"{items[0]}|{items[1]}", "type")
    raise _bad(f"type {items!r}")


_SIMPLE: dict[str, Callable[[DataZip, dict[str, Any], int], Any]] = {
    "tuple": lambda z, o, d: tuple(z._items(o, d)),
    "set": lambda z, o, d: set(z._items(o, d)),
    "frozenset": lambda z, o, d: frozenset(z._items(o, d)),
    "complex": _complex,
    "dict_aslist": lambda z, o, d: dict(z._items(o, d)),
    "Counter": lambda z, o, d: collections.Counter(z._items(o, d)),
    "OrderedDict": lambda z, o, d: collections.OrderedDict(z._items(o, d)),
    "deque": lambda z, o, d: collections.deque(z._items(o, d)),
    "defaultdict": lambda z, o, d: collections.defaultdict(_factory(z, o, d), z._items(o, d)),
    "datetime": lambda z, o, d: datetime.datetime.fromisoformat(_text(o)),
    "Path": lambda z, o, d: pathlib.Path(_text(o)),
    "namedtuple": _namedtuple,
    "type": _type,
}
