"""amber's contenders: `amber.pg.copy_in`, `copy_out` and `fetch` on a psycopg 3 connection and
on its AsyncConnection, and Python objects in `bytea` through `amber.pg.register` and
`amber.pg.Store`.

Each contender calls one function of `amber.pg`; one that this build of amber lacks makes the
contender unavailable (skipped with a note) rather than failing the run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from amber.bench.engine.contender import Contender
from amber.bench.parts.pg import jobs
from amber.bench.parts.pg.contenders import BYTEA_QUERY, PG
from amber.bench.parts.pg.jobs import (
    AsyncConn,
    Session,
    bytea_job,
    bytea_table,
    load_job,
    pg_contender,
    query_job,
    read_job,
)
from amber.bench.parts.pg.workloads import (
    BYTEA,
    LOAD,
    LOAD_TABLE,
    QUERY,
    READ,
    READ_QUERY,
    LoadInput,
    QueryInput,
    query_sql,
)


def _amber_pg(function: str) -> Callable[..., Any]:
    """`amber.pg.<function>`; AttributeError (the contender is unavailable) if this build has none."""
    import amber.pg

    found = getattr(amber.pg, function, None)
    if found is None:
        raise AttributeError(f"amber.pg has no {function}() in this build")
    out: Callable[..., Any] = found
    return out


def _copy_in(name: str, pick: Callable[[LoadInput], Any], source: str) -> Contender:
    copy_in = _amber_pg("copy_in")

    def load(conn: Any, data: Any) -> int:
        written: int = copy_in(conn, LOAD_TABLE, data)
        return written

    return pg_contender(
        name,
        jobs.psycopg_conn,
        {LOAD: load_job(load, pick, f"copy_in(conn, table, {source})")},
        "amber",
        f"amber.pg.copy_in from {source}",
    )


@PG.contender("amber-copy-in")
def _amber_copy_in() -> Contender:
    return _copy_in("amber-copy-in", lambda data: data.rows, "a list of tuples")


@PG.contender("amber-copy-in-pandas")
def _amber_copy_in_pandas() -> Contender:
    import pandas  # noqa: F401

    return _copy_in("amber-copy-in-pandas", lambda data: data.frame, "a pandas DataFrame")


@PG.contender("amber-copy-in-arrow")
def _amber_copy_in_arrow() -> Contender:
    import pyarrow  # noqa: F401

    return _copy_in("amber-copy-in-arrow", lambda data: data.arrow, "a pyarrow Table")


def _copy_out(name: str, into: str) -> Contender:
    copy_out = _amber_pg("copy_out")

    def read(conn: Any) -> Any:
        return copy_out(conn, READ_QUERY, into=into)

    return pg_contender(
        name,
        jobs.psycopg_conn,
        {READ: read_job(read, f'copy_out(conn, query, into="{into}")')},
        "amber",
        f'amber.pg.copy_out, into="{into}"',
    )


@PG.contender("amber-copy-out")
def _amber_copy_out() -> Contender:
    return _copy_out("amber-copy-out", "rows")


@PG.contender("amber-copy-out-arrow")
def _amber_copy_out_arrow() -> Contender:
    import pyarrow  # noqa: F401

    return _copy_out("amber-copy-out-arrow", "arrow")


@PG.contender("amber-copy-out-columns")
def _amber_copy_out_columns() -> Contender:
    return _copy_out("amber-copy-out-columns", "columns")


@PG.contender("amber-fetch")
def _amber_fetch() -> Contender:
    fetch = _amber_pg("fetch")

    def read(conn: Any) -> Any:
        return fetch(conn, READ_QUERY, into="rows")

    def query(conn: Any, q: QueryInput) -> Sequence[Any]:
        sql = query_sql()
        res: Sequence[Any] = []
        for _ in range(q.runs):
            res = fetch(conn, sql, q.params, into="rows")
        return res

    def objects(conn: Any, table: str, count: int) -> list[Any]:
        return [v for (v,) in fetch(conn, BYTEA_QUERY.format(table=table))]

    return pg_contender(
        "amber-fetch",
        jobs.psycopg_conn,
        {
            READ: read_job(read, 'fetch(conn, query, into="rows")'),
            QUERY: query_job(query, 'fetch(conn, query, params, into="rows")'),
            BYTEA: bytea_job(
                _registered_write,
                objects,
                "register(conn); fetch(conn, query): decoded in Rust as the result is read",
            ),
        },
        "amber",
        'amber.pg.fetch, into="rows"',
    )


# --- on psycopg's AsyncConnection ------------------------------------------------------------------


@PG.contender("amber-async")
def _amber_async() -> Contender:
    copy_in, fetch = _amber_pg("copy_in"), _amber_pg("fetch")

    def load(conn: AsyncConn, rows: Any) -> int:
        written: int = conn.run(copy_in(conn.conn, LOAD_TABLE, rows))
        return written

    def read(conn: AsyncConn) -> Any:
        return conn.run(fetch(conn.conn, READ_QUERY, into="rows"))

    def query(conn: AsyncConn, q: QueryInput) -> Sequence[Any]:
        sql = query_sql()

        async def runs() -> Sequence[Any]:
            res: Sequence[Any] = []
            for _ in range(q.runs):
                res = await fetch(conn.conn, sql, q.params, into="rows")
            return res

        out: Sequence[Any] = conn.run(runs())
        return out

    return pg_contender(
        "amber-async",
        jobs.psycopg_async_conn,
        {
            LOAD: load_job(load, lambda data: data.rows, "await copy_in(aconn, table, rows)"),
            READ: read_job(read, 'await fetch(aconn, query, into="rows")'),
            QUERY: query_job(query, 'await fetch(aconn, query, params, into="rows")'),
        },
        "amber",
        "amber.pg on a psycopg AsyncConnection (run_until_complete per call)",
    )


@PG.contender("amber-async-copy-out")
def _amber_async_copy_out() -> Contender:
    copy_out = _amber_pg("copy_out")

    def read(conn: AsyncConn) -> Any:
        return conn.run(copy_out(conn.conn, READ_QUERY, into="rows"))

    return pg_contender(
        "amber-async-copy-out",
        jobs.psycopg_async_conn,
        {READ: read_job(read, 'await copy_out(aconn, query, into="rows")')},
        "amber",
        'amber.pg.copy_out on a psycopg AsyncConnection, into="rows"',
    )


# --- objects in bytea ------------------------------------------------------------------------------


def _registered_write(session: Session, table: str, objects: list[Any]) -> None:
    """`register(conn)`, then the objects inserted as `Amber(obj)` parameters."""
    wrap = _amber_pg("Amber")
    _amber_pg("register")(session.conn)
    bytea_table(session, table)
    with session.conn.cursor() as cur:
        cur.executemany(
            f"INSERT INTO {table} (id, v) VALUES (%s, %s)",
            [(i, wrap(o)) for i, o in enumerate(objects)],
        )
    session.server.execute(f"VACUUM ANALYZE {table}")


@PG.contender("amber-register")
def _amber_register() -> Contender:
    write = _registered_write

    def read(conn: Any, table: str, count: int) -> list[Any]:
        with conn.cursor(binary=True) as cur:
            cur.execute(BYTEA_QUERY.format(table=table))
            return [v for (v,) in cur.fetchall()]

    return pg_contender(
        "amber-register",
        jobs.psycopg_conn,
        {
            BYTEA: bytea_job(
                write, read, "register(conn); binary cursor, fetchall: decoded by the loader"
            )
        },
        "amber",
        "amber.pg.register adapters, Amber(obj) parameters",
    )


def _keys(count: int) -> list[str]:
    return [f"object:{i:06d}" for i in range(count)]


@PG.contender("amber-store")
def _amber_store() -> Contender:
    store_class = _amber_pg("Store")

    def write(session: Session, table: str, objects: list[Any]) -> None:
        store = store_class(session.conn, table)
        store.put_many(dict(zip(_keys(len(objects)), objects, strict=True)))
        session.server.execute(f"VACUUM ANALYZE {table}")

    def read(conn: Any, table: str, count: int) -> list[Any]:
        return list(store_class(conn, table, create=False).get_many(_keys(count)).values())

    return pg_contender(
        "amber-store",
        jobs.psycopg_conn,
        {
            BYTEA: bytea_job(
                write, read, "Store(conn, table).get_many(every key): one query, decoded"
            )
        },
        "amber",
        "amber.pg.Store",
    )
