"""`amber.pg.Store`: a dict-like object store on a PostgreSQL table, inside the caller's
transaction."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, MutableMapping
from typing import Any

from psycopg import sql
from psycopg.abc import Buffer
from psycopg.adapt import Dumper
from psycopg.postgres import types as pg_types
from psycopg.pq import Format

from amber import _native
from amber.codec import dumps, loads
from amber.pg._copy import _fetch

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


def _table_name(table: str | tuple[str, ...]) -> sql.Composable:
    """A quoted identifier: a name, or (schema, name). Dots in a str are part of the name."""
    parts = (table,) if isinstance(table, str) else tuple(table)
    if not parts or not all(isinstance(p, str) and p for p in parts):
        raise ValueError(f"a table is a name or a (schema, name) tuple, not {table!r}")
    return sql.Identifier(*parts)


class Store(MutableMapping[str, Any]):
    """A mapping of str keys to Python objects kept in amber format in `table`
    (`key text primary key, value bytea not null`), through the caller's psycopg connection.

    Every call runs inside the connection's current transaction and never commits: commit (or
    use the connection as a context manager) to make writes durable. `put_many` writes inside
    a savepoint, so a batch that fails leaves the store and the transaction as they were. The
    table is created if it does not exist unless `create=False`. Table and column names are
    quoted as identifiers, so no name can inject SQL.
    """

    def __init__(self, conn: Any, table: str | tuple[str, ...], *, create: bool = True) -> None:
        self.conn = conn
        self._table = _table_name(table)
        if create:
            self._run("create table if not exists {t} (key text primary key, value bytea not null)")

    def _run(self, query: str, params: Any = None) -> Any:
        cur = self.conn.cursor(binary=True)
        cur.execute(sql.SQL(query).format(t=self._table), params)
        return cur

    # --- one key ----------------------------------------------------------------------------

    def __getitem__(self, key: str) -> Any:
        row = self._run("select value from {t} where key = %s", (key,)).fetchone()
        if row is None:
            raise KeyError(key)
        return loads(row[0])

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
        self._check_key(key)
        self._run(
            "insert into {t} (key, value) values (%s, %b) "
            "on conflict (key) do update set value = excluded.value",
            (key, dumps(value)),
        )

    def delete(self, key: str) -> bool:
        """Remove `key`; whether it was there."""
        return bool(self._run("delete from {t} where key = %s", (key,)).rowcount)

    # --- many keys --------------------------------------------------------------------------

    def get_many(self, keys: Iterable[str]) -> dict[str, Any]:
        """The values of those `keys` that are in the store, in one query."""
        wanted = list(dict.fromkeys(keys))
        for k in wanted:
            self._check_key(k)
        if not wanted:
            return {}
        # The server returns the rows in the order of `wanted` (one per key found); the keys go
        # as one binary text[] encoded in Rust, and the values are decoded in Rust as the
        # result is read: no Python call per key or row.
        query = sql.SQL(
            "select t.key, t.value from unnest(%b) with ordinality as w(key, at) "
            "join {t} t on t.key = w.key order by w.at"
        ).format(t=self._table)
        param = _Keys(_native.pg_send(TEXT_ARRAY_OID, wanted))
        return dict(_fetch(self.conn, query, (param,), "rows", True, {_Keys: _KeysDumper}))

    def put_many(self, items: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> None:
        """Store many values in batches; all of them or, if any fails, none."""
        pairs = items.items() if isinstance(items, Mapping) else items
        # Everything is encoded before anything is sent: a value amber cannot encode fails here.
        rows = []
        for key, value in pairs:
            self._check_key(key)
            rows.append((key, dumps(value)))
        query = sql.SQL(
            "insert into {t} (key, value) values (%s, %b) "
            "on conflict (key) do update set value = excluded.value"
        ).format(t=self._table)
        with self.conn.transaction(), self.conn.cursor(binary=True) as cur:
            for start in range(0, len(rows), BATCH):
                cur.executemany(query, rows[start : start + BATCH])

    def clear(self) -> None:
        self._run("delete from {t}")

    @staticmethod
    def _check_key(key: Any) -> None:
        if not isinstance(key, str):
            raise TypeError(f"Store keys are str, not {type(key).__name__}")

    def __repr__(self) -> str:
        return f"<amber.pg.Store {self._table.as_string(None)}>"
