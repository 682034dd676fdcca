"""`amber.pg.Store`: a dict-like object store on a PostgreSQL table, inside the caller's
transaction."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, MutableMapping
from typing import Any

import psycopg
from psycopg import sql
from psycopg.abc import Buffer
from psycopg.adapt import Dumper
from psycopg.postgres import types as pg_types
from psycopg.pq import Format

from amber import _native
from amber._native import DecodeError
from amber.codec import dumps
from amber.pg._copy import TableName, _atomic, _fetch, _table_identifier

# put_many sends its rows in batches of this many (one pipeline of INSERTs each).
BATCH = 1000

TEXT_ARRAY_OID: int = pg_types["text"].array_oid


class _Keys:
    """A text[] parameter already in its binary send format."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data


class _KeysDumper(Dumper):
    format = Format.BINARY
    oid = TEXT_ARRAY_OID

    def dump(self, obj: _Keys) -> Buffer:
        return obj.data


def _table_name(table: TableName) -> sql.Identifier:
    """The table, by the rules of `copy_in`: a str is one name (dots are part of it), a
    (schema, name) tuple or a psycopg `sql.Identifier` a qualified one; NUL is refused."""
    return _table_identifier(table)


def _table_sql(conn: Any, table: sql.Identifier) -> tuple[str, str]:
    """The quoted name as SQL text: as it goes in a statement without parameters, and with
    every `%` doubled for one with parameters (psycopg reads `%` there as a placeholder, and
    `%%` as a `%`), so a name holding `%` names its own table."""
    text = table.as_string(conn)
    return text, text.replace("%", "%%")


def _statement(query: str, table_sql: tuple[str, str], params: bool) -> sql.SQL:
    """`query` with `{t}` the table (see `_table_sql`); `params`: whether it is run with
    parameters."""
    return sql.SQL(query.replace("{t}", table_sql[1] if params else table_sql[0]))


def _value_error(err: DecodeError, key: str, table: str) -> DecodeError:
    """A stored value that does not decode, as a DecodeError naming its key and table, with
    the codec's kind and place within the value."""
    cause = err.__cause__ if isinstance(err.__cause__, DecodeError) else err
    inner = cause.path or "$"
    new = DecodeError(f"key {key!r} of table {table}: {cause}")
    new.kind = cause.kind
    new.path = f"$[{json.dumps(key)}]{inner[1:]}"
    new.offset = cause.offset
    new.__cause__ = cause
    return new


class Store(MutableMapping[str, Any]):
    """A mapping of str keys to Python objects kept in amber format in `table`
    (`key text primary key, value bytea not null`), through the caller's psycopg connection.

    Every call runs inside the connection's current transaction and never commits: commit (or
    use the connection as a context manager) to make writes durable. `put_many` writes inside
    a savepoint, so a batch that fails leaves the store and the transaction as they were. The
    table is created if it does not exist unless `create=False`. `table` is one name (a str,
    dots included) or a (schema, name) tuple, quoted as an identifier, so no name can inject
    SQL. Values are read as amber frames whatever adapters the connection has (`register` or
    not).
    """

    def __init__(self, conn: Any, table: TableName, *, create: bool = True) -> None:
        if isinstance(conn, psycopg.AsyncConnection):
            raise TypeError("Store takes a sync psycopg Connection: use amber.pg.AsyncStore")
        self.conn = conn
        self._table = _table_name(table)
        self._sql = _table_sql(conn, self._table)
        if create:
            self._run("create table if not exists {t} (key text primary key, value bytea not null)")

    def _run(self, query: str, params: Any = None) -> Any:
        cur = self.conn.cursor(binary=True)
        cur.execute(_statement(query, self._sql, params is not None), params)
        return cur

    # --- one key ----------------------------------------------------------------------------

    def __getitem__(self, key: str) -> Any:
        _check_key(key)
        # Read as amber frames in Rust whatever the connection has registered: a connection
        # where `register` put amber's loader would otherwise hand over the value decoded.
        query = _statement("select value from {t} where key = %s", self._sql, True)
        try:
            rows = _fetch(self.conn, query, (key,), "rows", True)
        except DecodeError as e:
            raise _value_error(e, key, self._sql[0]) from None
        if not rows:
            raise KeyError(key)
        return rows[0][0]

    def __setitem__(self, key: str, value: Any) -> None:
        self.put(key, value)

    def __delitem__(self, key: str) -> None:
        if not self.delete(key):
            raise KeyError(key)

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        return self._run("select 1 from {t} where key = %s", (key,)).fetchone() is not None

    def __len__(self) -> int:
        row = self._run("select count(*) from {t}").fetchone()
        return int(row[0])

    def __iter__(self) -> Iterator[str]:
        rows = self._run("select key from {t} order by key").fetchall()
        return iter([r[0] for r in rows])

    def put(self, key: str, value: Any) -> None:
        """Store `value` under `key`, replacing what was there (an upsert)."""
        _check_key(key)
        self._run(_PUT, (key, dumps(value)))

    def delete(self, key: str) -> bool:
        """Remove `key`; whether it was there."""
        _check_key(key)
        return bool(self._run("delete from {t} where key = %s", (key,)).rowcount)

    # --- many keys --------------------------------------------------------------------------

    def get_many(self, keys: Iterable[str]) -> dict[str, Any]:
        """The values of those `keys` that are in the store, in one query."""
        wanted = _wanted(keys)
        if not wanted:
            return {}
        # The server returns the rows in the order of `wanted` (one per key found); the keys go
        # as one binary text[] encoded in Rust, and the values are decoded in Rust as the
        # result is read: no Python call per key or row.
        query = _statement(_GET_MANY, self._sql, True)
        param = _keys_param(wanted, self.conn.info.encoding)
        try:
            return _by_key(_fetch(self.conn, query, (param,), "rows", True, _KEYS_DUMPERS))
        except DecodeError as e:
            # Which key: the rows again, as raw bytes (an error path only).
            raw = _fetch(self.conn, query, (param,), "rows", False, _KEYS_DUMPERS)
            raise _value_error(e, raw[_failed_row(e)][0], self._sql[0]) from None

    def put_many(self, items: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> None:
        """Store many values in batches; all of them or, if any fails, none."""
        rows = _encoded(items)
        query = _statement(_PUT, self._sql, True)
        # A savepoint in a transaction (a transaction of its own on an idle autocommit
        # connection): never a COMMIT of the caller's work.
        with _atomic(self.conn), self.conn.cursor(binary=True) as cur:
            for start in range(0, len(rows), BATCH):
                cur.executemany(query, rows[start : start + BATCH])

    def clear(self) -> None:
        self._run("delete from {t}")

    def __repr__(self) -> str:
        return f"<amber.pg.Store {self._sql[0]}>"


def _check_key(key: Any) -> None:
    if not isinstance(key, str):
        raise TypeError(f"Store keys are str, not {type(key).__name__}")


def _wanted(keys: Iterable[str]) -> list[str]:
    """The keys asked for, each once, in order; a key that is no str is refused."""
    wanted = list(dict.fromkeys(keys))
    for k in wanted:
        _check_key(k)
    return wanted


def _keys_param(wanted: list[str], encoding: str) -> _Keys:
    """The keys as one text[] parameter, encoded in Rust in the connection's encoding."""
    return _Keys(_native.pg_send(TEXT_ARRAY_OID, wanted, encoding))


_KEYS_DUMPERS: dict[type, type[Dumper]] = {_Keys: _KeysDumper}


def _by_key(rows: list[tuple[Any, Any]]) -> dict[str, Any]:
    """`get_many`'s rows as a dict. On SQL_ASCII text reads as bytes: the keys went as UTF-8
    (as psycopg sends a str)."""
    return {k.decode() if isinstance(k, bytes) else k: v for k, v in rows}


def _failed_row(err: DecodeError) -> int:
    """The row of `get_many`'s result a DecodeError names (`$[row]...`)."""
    path = err.path
    return int(path[2 : path.index("]")]) if path and path[:2] == "$[" else 0


def _encoded(items: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> list[tuple[str, bytes]]:
    """`put_many`'s rows, every value encoded before anything is sent: a value amber cannot
    encode fails here."""
    pairs = items.items() if isinstance(items, Mapping) else items
    rows = []
    for key, value in pairs:
        _check_key(key)
        rows.append((key, dumps(value)))
    return rows


_GET_MANY = (
    "select t.key, t.value from unnest(%b) with ordinality as w(key, at) "
    "join {t} t on t.key = w.key order by w.at"
)
_PUT = (
    "insert into {t} (key, value) values (%s, %b) "
    "on conflict (key) do update set value = excluded.value"
)
