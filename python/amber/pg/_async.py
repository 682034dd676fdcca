"""`amber.pg` on psycopg's `AsyncConnection`: `copy_in`, `copy_out` and `fetch` as coroutines
(the public functions return one when given an async connection), and `AsyncStore`.

The rules and the per-value work are the sync ones (`_copy`, `_store`); only the I/O differs. It
runs on the event loop's thread in short steps: rows are encoded a chunk at a time and read a
slice at a time, and the loop gets control back between steps, so other tasks are never held
up by more than a few milliseconds of amber's work.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import psycopg
from psycopg import errors as pg_errors
from psycopg import pq, sql

from amber import _native
from amber._native import DecodeError
from amber.codec import dumps
from amber.pg import _arrow, _copy, _store

if TYPE_CHECKING:
    from psycopg.abc import Query
    from psycopg.adapt import Dumper

AsyncConn = psycopg.AsyncConnection[Any]

#: The longest amber works on the loop's thread before it lets other tasks run.
STEP_SECONDS = 0.002
#: Rows of a binary result read in the first slice; the next ones are sized to take about
#: `SLICE_SECONDS` each.
FIRST_SLICE = 256
SLICE_SECONDS = 0.001


class _Steps:
    """Gives the event loop a turn once `STEP_SECONDS` of work have gone by since the last."""

    __slots__ = ("last",)

    def __init__(self) -> None:
        self.last = time.monotonic()

    async def tick(self) -> None:
        now = time.monotonic()
        if now - self.last >= STEP_SECONDS:
            await asyncio.sleep(0)
            self.last = time.monotonic()


async def _readable(fd: int) -> None:
    """Wait until `fd` has something to read."""
    loop = asyncio.get_running_loop()
    ready = loop.create_future()

    def wake() -> None:
        if not ready.done():
            ready.set_result(None)

    loop.add_reader(fd, wake)
    try:
        await ready
    finally:
        loop.remove_reader(fd)


async def _describe(conn: AsyncConn, text: str) -> tuple[list[str], list[int]]:
    """The describe step of `copy_out` (see `_description`), apart from the check after the
    COPY."""
    return await _description(conn, text)


async def _description(conn: AsyncConn, text: str) -> tuple[list[str], list[int]]:
    """`_copy._description` on the loop: the query is prepared as the unnamed statement and
    described, never run, in one round trip."""
    encoding = conn.info.encoding
    async with conn.lock:
        res = await conn.wait(_copy._describe_gen(conn.pgconn, text.encode(encoding)))
    if res.status != pq.ExecStatus.COMMAND_OK:
        raise pg_errors.error_from_result(res, encoding=encoding)
    return _copy._fields(res, encoding)


async def _table_columns(
    conn: AsyncConn, table: sql.Identifier, given: _copy.TableName
) -> dict[str, _copy.TableColumn]:
    """`_copy._table_columns` on the loop."""
    text = _copy._table_text(conn, table)
    async with conn.cursor(binary=False) as cur:
        await cur.execute(_copy._COLUMNS_QUERY, (text,))
        rows = await cur.fetchall()
    return _copy._columns_from_rows(rows, given, text)


@contextlib.asynccontextmanager
async def _atomic(conn: AsyncConn) -> AsyncIterator[None]:
    """`_copy._atomic` on the loop: the block runs as one unit (a savepoint in a transaction,
    a transaction of its own on an idle autocommit connection), nothing of it stays after a
    failure, a cancellation included, and the caller's transaction carries on."""
    plan = _copy._atomic_plan(conn.info.transaction_status, conn.autocommit)
    async with conn.cursor() as cur:
        await cur.execute(plan.enter)
    try:
        yield
    except BaseException:
        if (
            not conn.closed
            and not conn.broken
            and _copy._undo_applies(conn.info.transaction_status)
        ):
            with contextlib.suppress(psycopg.Error):
                async with conn.cursor() as cur:
                    for stmt in plan.undo:
                        await cur.execute(stmt)
        raise
    async with conn.cursor() as cur:
        await cur.execute(plan.done)


async def _shape(result: Any, names: list[str], oids: list[int], into: str) -> Any:
    """`_arrow.shape`; Arrow tables and DataFrames are built on a worker thread (pyarrow, pandas
    and polars let the loop's thread run meanwhile: building a 1M-row DataFrame here held the
    loop for 300 ms). `result` holds no reference to the (unsendable) reader."""
    if into in ("pandas", "polars", "arrow"):
        return await asyncio.to_thread(_arrow.shape, result, names, oids, into)
    return _arrow.shape(result, names, oids, into)


# --- COPY in ---------------------------------------------------------------------------------


async def copy_in(
    conn: AsyncConn,
    table: _copy.TableName,
    data: Iterable[Any],
    columns: Sequence[str] | None = None,
) -> int:
    """`amber.pg.copy_in` on an AsyncConnection (see there)."""
    ident = _copy._table_identifier(table)
    frame = _copy._columnar(data)
    steps = _Steps()
    async with _atomic(conn):
        table_cols = await _table_columns(conn, ident, table)
        load = _copy._Load(conn, ident, table_cols, columns, data, frame)
        async with conn.cursor() as cur, cur.copy(load.statement) as copy:
            for chunk in load.chunks():
                await copy.write(chunk)
                await steps.tick()
    return load.rows


# --- reads -----------------------------------------------------------------------------------


async def copy_out(conn: AsyncConn, query: Query, into: _copy.Into = "rows") -> Any:
    """`amber.pg.copy_out` on an AsyncConnection (see there)."""
    mode = _copy._check_into(into)
    text = _copy._query_text(cast(Any, conn), query)
    steps = _Steps()
    # As in `_copy.copy_out`: the COPY and a second describe in one savepoint (or transaction),
    # so a failure or a cancellation mid-stream leaves the caller's transaction as it was and a
    # type changed since the first describe is refused; on an idle autocommit connection the
    # first describe runs before that transaction.
    plan = _copy._atomic_plan(conn.info.transaction_status, conn.autocommit)
    described = await _describe(conn, text) if plan is _copy._OWN_TRANSACTION else None
    async with _atomic(conn):
        names, oids = described if described is not None else await _describe(conn, text)
        specs = _copy._read_specs(cast(Any, conn), oids, names=names)
        reader = _native.PgReader(specs, names, mode, conn.info.encoding)
        async with conn.cursor() as cur, cur.copy(_copy._copy_out_statement(text)) as copy:
            if _copy._libpq():
                # Rust takes every message libpq holds, and says "wait" when the socket must
                # be readable first: the loop runs other tasks meanwhile.
                while (failure := reader.drain(conn.pgconn, block=False)) == "wait":
                    await _readable(conn.pgconn.socket)
                    await steps.tick()
                if isinstance(failure, tuple):
                    _copy._raise_server(failure)
            else:
                async for data in copy:
                    reader.feed(data)
                    await steps.tick()
        _copy._types_changed(names, oids, await _description(conn, text))
    result = reader.finish(True)
    del reader  # released here, on the loop's thread, whatever shaping the result raises
    return await _shape(result, names, oids, into)


async def fetch(
    conn: AsyncConn,
    query: Query,
    params: Sequence[Any] | Mapping[str, Any] | None = None,
    into: _copy.Into = "rows",
) -> Any:
    """`amber.pg.fetch` on an AsyncConnection (see there)."""
    return await _fetch(conn, query, params, into, None)


async def _fetch(
    conn: AsyncConn,
    query: Query,
    params: Sequence[Any] | Mapping[str, Any] | None,
    into: _copy.Into,
    amber: bool | None,
    dumpers: Mapping[type, type[Dumper]] | None = None,
) -> Any:
    """`_copy._fetch` on the loop; the result is read a slice of rows at a time."""
    mode = _copy._check_into(into)
    async with conn.cursor(binary=True) as cur:
        for cls, dumper in (dumpers or {}).items():
            cur.adapters.register_dumper(cls, dumper)
        await cur.execute(cast(Any, query), params)
        res = cur.pgresult
        if res is None or res.status != pq.ExecStatus.TUPLES_OK:
            raise psycopg.ProgrammingError("the query returned no result to fetch")
        names, oids = _copy._fields(res, conn.info.encoding)
        specs = _copy._read_specs(cast(Any, conn), oids, amber, names)
        reader = _native.PgReader(specs, names, mode, conn.info.encoding)
        await _read_result(reader, res)
        result = reader.finish(False)
        del reader  # released here, on the loop's thread, whatever shaping the result raises
    return await _shape(result, names, oids, into)


async def _read_result(reader: _native.PgReader, res: pq.abc.PGresult) -> None:
    """Read every row of `res` into `reader`, a slice at a time, sized so that each takes
    about a millisecond, with the loop given a turn between them."""
    steps = _Steps()
    rows, at, size = res.ntuples, 0, FIRST_SLICE
    bound = _copy._libpq()
    while at < rows:
        stop = min(rows, at + size)
        started = time.monotonic()
        if bound:
            reader.read_result(res, at, stop)
        else:
            for r in range(at, stop):
                reader.add_row([res.get_value(r, c) for c in range(res.nfields)])
        took = time.monotonic() - started
        at = stop
        if took < SLICE_SECONDS / 2:
            size *= 2
        elif took > SLICE_SECONDS * 2 and size > 1:
            size //= 2
        await steps.tick()


# --- AsyncStore ------------------------------------------------------------------------------


class AsyncStore:
    """`amber.pg.Store` on a psycopg AsyncConnection: str keys to Python objects kept in amber
    format in `table` (`key text primary key, value bytea not null`), every method a coroutine.

    `await AsyncStore.open(aconn, table)` creates the table if it is missing and returns the
    store; `AsyncStore(aconn, table)` does no I/O and expects the table to exist. As with
    `Store`, every call runs inside the connection's current transaction and never commits,
    `put_many` writes all of its items or, if any fails, none, and `table` is one name (a str,
    dots included) or a (schema, name) tuple, quoted as an identifier.
    """

    def __init__(self, conn: AsyncConn, table: _copy.TableName) -> None:
        if not isinstance(conn, psycopg.AsyncConnection):
            raise TypeError(
                f"AsyncStore takes a psycopg AsyncConnection, not {type(conn).__name__}: "
                "use amber.pg.Store on a sync connection"
            )
        self.conn = conn
        self._table = _store._table_name(table)
        self._sql = _store._table_sql(conn, self._table)

    @classmethod
    async def open(
        cls, conn: AsyncConn, table: _copy.TableName, *, create: bool = True
    ) -> AsyncStore:
        """The store on `table`, created first if it is missing; with `create=False` a missing
        table raises psycopg's `UndefinedTable`."""
        store = cls(conn, table)
        if create:
            await store._run(
                "create table if not exists {t} (key text primary key, value bytea not null)"
            )
        else:
            row = await store._run("select to_regclass(%s)", (store._sql[0],), fetch="one")
            if row[0] is None:
                raise pg_errors.UndefinedTable(f"table {store._sql[0]} does not exist")
        return store

    async def _run(self, query: str, params: Any = None, *, fetch: str = "") -> Any:
        """Run `query` with `{t}` the table; `fetch`: "one" (the first row), "all" (the rows)
        or "" (the row count)."""
        async with self.conn.cursor(binary=True) as cur:
            await cur.execute(_store._statement(query, self._sql, params is not None), params)
            if fetch == "one":
                return await cur.fetchone()
            if fetch == "all":
                return await cur.fetchall()
            return cur.rowcount

    # --- one key ----------------------------------------------------------------------------

    async def get(self, key: str, default: Any = None) -> Any:
        """The value under `key`, or `default` when there is none."""
        _check_key(key)
        query = _store._statement("select value from {t} where key = %s", self._sql, True)
        try:
            rows = await _fetch(self.conn, query, (key,), "rows", True)
        except DecodeError as e:
            raise _store._value_error(e, key, self._sql[0]) from None
        return rows[0][0] if rows else default

    async def put(self, key: str, value: Any) -> None:
        """Store `value` under `key`, replacing what was there (an upsert)."""
        _check_key(key)
        await self._run(_store._PUT, (key, dumps(value)))

    async def delete(self, key: str) -> bool:
        """Remove `key`; whether it was there."""
        _check_key(key)
        return bool(await self._run("delete from {t} where key = %s", (key,)))

    async def contains(self, key: str) -> bool:
        """Whether `key` is in the store."""
        _check_key(key)
        row = await self._run("select 1 from {t} where key = %s", (key,), fetch="one")
        return row is not None

    async def count(self) -> int:
        """How many keys the store holds."""
        row = await self._run("select count(*) from {t}", fetch="one")
        return int(row[0])

    async def keys(self) -> AsyncIterator[str]:
        """The keys in sorted order (read in one query when iteration starts)."""
        rows = await self._run("select key from {t} order by key", fetch="all")
        for (key,) in rows:
            yield key

    def __aiter__(self) -> AsyncIterator[str]:
        return self.keys()

    # --- many keys --------------------------------------------------------------------------

    async def get_many(self, keys: Iterable[str]) -> dict[str, Any]:
        """The values of those `keys` that are in the store, in one query."""
        wanted = _store._wanted(keys)
        if not wanted:
            return {}
        query = _store._statement(_store._GET_MANY, self._sql, True)
        param = _store._keys_param(wanted, self.conn.info.encoding)
        dumpers = _store._KEYS_DUMPERS
        try:
            return _store._by_key(await _fetch(self.conn, query, (param,), "rows", True, dumpers))
        except DecodeError as e:
            # Which key: the rows again, as raw bytes (an error path only).
            raw = await _fetch(self.conn, query, (param,), "rows", False, dumpers)
            raise _store._value_error(e, raw[_store._failed_row(e)][0], self._sql[0]) from None

    async def put_many(self, items: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> None:
        """Store many values in batches; all of them or, if any fails, none."""
        rows = _store._encoded(items)
        query = _store._statement(_store._PUT, self._sql, True)
        async with _atomic(self.conn), self.conn.cursor(binary=True) as cur:
            for start in range(0, len(rows), _store.BATCH):
                await cur.executemany(query, rows[start : start + _store.BATCH])

    async def clear(self) -> None:
        """Remove every key."""
        await self._run("delete from {t}")

    def __repr__(self) -> str:
        return f"<amber.pg.AsyncStore {self._sql[0]}>"


_check_key = _store._check_key
