"""psycopg 3 adapters that keep Python objects in `bytea` in amber format.

Parameters go as binary `bytea` (no escaping); results are decoded with `amber.loads` straight
from the bytes psycopg hands over, which for binary results is a view of the result buffer
(no copy). Decoding runs no code and builds only what the codec's registry allows, so a row
written by someone else cannot run anything here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from psycopg import adapters as global_adapters
from psycopg.abc import AdaptContext, Buffer
from psycopg.adapt import Dumper, Loader
from psycopg.postgres import types as pg_types
from psycopg.pq import Escaping, Format

from amber._native import DecodeError
from amber.codec import dumps, loads

BYTEA_OID: int = pg_types["bytea"].oid


class Amber:
    """Wraps a value so that it is sent as amber-format `bytea`, whatever its type:
    `cur.execute("insert into t values (%s)", [Amber({"a": 1})])`. Every connection made
    after `amber.pg` is imported sends it (its dumper is on psycopg's global adapters, for
    this class only); on a connection made before, call `register(conn)` first."""

    __slots__ = ("obj",)

    def __init__(self, obj: Any) -> None:
        self.obj = obj

    def __repr__(self) -> str:
        return f"Amber({self.obj!r})"


class AmberDumper(Dumper):
    """Dumps a value (or an `Amber` wrapper's value) as amber-format bytea, in binary."""

    format = Format.BINARY
    oid = BYTEA_OID

    def dump(self, obj: Any) -> Buffer:
        return dumps(obj.obj if type(obj) is Amber else obj)


#: Said after "not amber data" where a registered loader read the bytes.
RAW_HINT = (
    "this connection reads bytea as amber (amber.pg.register): read raw bytes through a "
    "connection or cursor without it"
)


def _not_amber(err: DecodeError) -> DecodeError:
    """`err` with the hint that amber was asked to decode this bytea (same kind and place)."""
    new = DecodeError(f"{err}; {RAW_HINT}")
    new.kind, new.offset, new.path = err.kind, err.offset, err.path
    return new


class AmberLoader(Loader):
    """Loads a binary bytea value with `amber.loads`, from a view of the result buffer."""

    format = Format.BINARY

    def load(self, data: Buffer) -> Any:
        try:
            return loads(data)
        except DecodeError as e:
            if e.kind == "not_amber":
                raise _not_amber(e) from None
            raise


class AmberTextLoader(Loader):
    """Loads a text-format bytea value (hex-escaped) with `amber.loads`."""

    format = Format.TEXT

    def __init__(self, oid: int, context: AdaptContext | None = None) -> None:
        super().__init__(oid, context)
        self._escaping = Escaping()

    def load(self, data: Buffer) -> Any:
        try:
            return loads(self._escaping.unescape_bytea(bytes(data)))
        except DecodeError as e:
            if e.kind == "not_amber":
                raise _not_amber(e) from None
            raise


def register(
    context: AdaptContext | None = None, *, dump: Iterable[type] = (), load: bool = True
) -> None:
    """Store and read Python objects as amber-format `bytea` in `context`: a connection, a
    cursor, or None for every connection made afterwards (psycopg's global adapters).

    `Amber(value)` is always sent as amber; each class in `dump` is too, without a wrapper (for
    instance `dump=[dict, MyRecord]`). With `load` (the default), every `bytea` result read
    through `context` is decoded with `amber.loads`: use it on the connections or cursors that
    read amber columns, and another one for raw `bytea`.
    """
    adapters = context.adapters if context is not None else global_adapters
    adapters.register_dumper(Amber, AmberDumper)
    for cls in dump:
        adapters.register_dumper(cls, AmberDumper)
    if load:
        adapters.register_loader(BYTEA_OID, AmberLoader)
        adapters.register_loader(BYTEA_OID, AmberTextLoader)


class _AmberClassDumper(AmberDumper):
    """`AmberDumper` for the `Amber` class alone. Its class has no OID, so psycopg files it under
    the class only and not as the dumper of every `bytea` (which would make a binary COPY's
    `set_types(["bytea"])` wrap raw bytes in amber frames); each instance still sends `bytea`."""

    oid = 0

    def __init__(self, cls: type, context: AdaptContext | None = None) -> None:
        super().__init__(cls, context)
        self.oid = BYTEA_OID


# `Amber(value)` adapts on every connection made from now on, registered or not: its dumper
# serves this class only, so nothing else any connection sends or reads changes.
global_adapters.register_dumper(Amber, _AmberClassDumper)
