"""The pg part and the drivers users pick today: psycopg 3 (text, binary, COPY), psycopg2, asyncpg,
pgcopy, ADBC, connectorx, and a ready COPY BINARY stream (the transport floor).

Each contender does, for every job it offers, what that driver's documentation shows as its
fastest way; the row notes of the report say which call was timed. A factory imports its library
when called, so a driver that is not installed is skipped with a note. amber's own contenders are
in `amber_pg`.
"""

from __future__ import annotations

import io
import pickle
from collections.abc import Sequence
from typing import Any

from amber.bench.engine.contender import Contender
from amber.bench.engine.registry import Part, register_part
from amber.bench.parts.pg import jobs
from amber.bench.parts.pg.jobs import (
    AsyncConn,
    Session,
    bytea_job,
    load_job,
    pg_contender,
    query_job,
    read_job,
    store_payloads,
    untyped,
)
from amber.bench.parts.pg.workloads import (
    BYTEA,
    COLUMNS,
    LOAD,
    LOAD_TABLE,
    PG_TYPES,
    QUERY,
    READ,
    READ_QUERY,
    LoadInput,
    QueryInput,
    Row,
    query_sql,
)

PG = register_part(
    Part(
        "pg",
        baseline="psycopg-binary",
        label="Drivers",
        description="amber.pg against the PostgreSQL drivers users pick today",
    )
)

BYTEA_QUERY = "SELECT v FROM {table} ORDER BY id"
COPY_IN = f"COPY {LOAD_TABLE} ({', '.join(COLUMNS)}) FROM STDIN"
COPY_IN_BINARY = COPY_IN + " (FORMAT BINARY)"
COPY_OUT_BINARY = f"COPY ({READ_QUERY}) TO STDOUT (FORMAT BINARY)"


def _pickles(session: Session, table: str, objects: list[Any]) -> None:
    store_payloads(session, table, [pickle.dumps(o, protocol=5) for o in objects])


def _rows(data: LoadInput) -> list[Row]:
    return data.rows


# --- psycopg2 -------------------------------------------------------------------------------------


def _escape(text: str) -> str:
    """COPY text's escapes for a backslash, tab, newline and carriage return."""
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def _psycopg2_copy_text(conn: Any, rows: list[Row]) -> None:
    """COPY text built in Python, the fastest load psycopg2 offers (`execute_values` took 1.5 to
    2 times its CPU time here): text escaped, floats by repr, timestamps by str, bytea as `\\x`
    hex."""
    buf = io.StringIO()
    write = buf.write
    for i, x, name, at, data in rows:
        write(f"{i}\t{x!r}\t{_escape(name)}\t{at}\t\\\\x{data.hex()}\n")
    buf.seek(0)
    with conn.cursor() as cur:
        cur.copy_expert(COPY_IN, buf)


def _psycopg2_fetch(conn: Any) -> list[tuple[Any, ...]]:
    with conn.cursor() as cur:
        cur.execute(READ_QUERY)
        rows: list[tuple[Any, ...]] = cur.fetchall()
        return rows


def _psycopg2_query(conn: Any, q: QueryInput) -> Sequence[Any]:
    sql = query_sql()
    res: Sequence[Any] = []
    with conn.cursor() as cur:
        for _ in range(q.runs):
            cur.execute(sql, q.params)
            res = cur.fetchall()
    return res


def _decimal_floats(q: QueryInput) -> list[tuple[Any, ...]]:
    """psycopg2 sends a float as a literal, which PostgreSQL types numeric: it comes back as a
    Decimal of the float's repr."""
    from decimal import Decimal

    row = tuple(Decimal(repr(p)) if isinstance(p, float) else p for p in q.params)
    return [row] * len(q.expected)


def _psycopg2_bytea(conn: Any, table: str, count: int) -> list[Any]:
    with conn.cursor() as cur:
        cur.execute(BYTEA_QUERY.format(table=table))
        return [pickle.loads(v) for (v,) in cur.fetchall()]


@PG.contender("psycopg2")
def _psycopg2() -> Contender:
    untyped("psycopg2")

    return pg_contender(
        "psycopg2",
        jobs.psycopg2_conn,
        {
            LOAD: load_job(
                _psycopg2_copy_text, _rows, "copy_expert of a COPY text stream built in Python"
            ),
            READ: read_job(_psycopg2_fetch, "fetchall (text results; bytea as memoryview)"),
            QUERY: query_job(
                _psycopg2_query, "parameters as literals (text)", expected=_decimal_floats
            ),
            BYTEA: bytea_job(_pickles, _psycopg2_bytea, "fetchall, pickle.loads(memoryview)"),
        },
        "psycopg2-binary",
        "text protocol",
    )


# --- psycopg 3 -----------------------------------------------------------------------------------


def _psycopg_copy_text(conn: Any, rows: list[Row]) -> None:
    with conn.cursor() as cur, cur.copy(COPY_IN) as copy:
        for row in rows:
            copy.write_row(row)


def _psycopg_copy_binary(conn: Any, rows: list[Row]) -> None:
    with conn.cursor() as cur, cur.copy(COPY_IN_BINARY) as copy:
        copy.set_types(PG_TYPES)
        for row in rows:
            copy.write_row(row)


def _psycopg_fetch(binary: bool) -> Any:
    def read(conn: Any) -> list[tuple[Any, ...]]:
        with conn.cursor(binary=binary) as cur:
            cur.execute(READ_QUERY)
            rows: list[tuple[Any, ...]] = cur.fetchall()
            return rows

    return read


def _psycopg_query(binary: bool) -> Any:
    def run(conn: Any, q: QueryInput) -> Sequence[Any]:
        sql = query_sql()
        res: Sequence[Any] = []
        with conn.cursor(binary=binary) as cur:
            for _ in range(q.runs):
                cur.execute(sql, q.params)
                res = cur.fetchall()
        return res

    return run


def _psycopg_bytea(conn: Any, table: str, count: int) -> list[Any]:
    with conn.cursor(binary=True) as cur:
        cur.execute(BYTEA_QUERY.format(table=table))
        return [pickle.loads(v) for (v,) in cur.fetchall()]


@PG.contender("psycopg-text")
def _psycopg_text() -> Contender:
    import psycopg  # noqa: F401

    return pg_contender(
        "psycopg-text",
        jobs.psycopg_conn,
        {
            LOAD: load_job(_psycopg_copy_text, _rows, "COPY (text), write_row per tuple"),
            READ: read_job(_psycopg_fetch(False), "cursor(), fetchall (text results)"),
            QUERY: query_job(_psycopg_query(False), "cursor() (text results)"),
        },
        "psycopg",
        "psycopg 3, text formats",
    )


@PG.contender("psycopg-binary")
def _psycopg_binary() -> Contender:
    import psycopg  # noqa: F401

    return pg_contender(
        "psycopg-binary",
        jobs.psycopg_conn,
        {
            LOAD: load_job(
                _psycopg_copy_binary, _rows, "COPY BINARY, write_row per tuple (set_types)"
            ),
            READ: read_job(_psycopg_fetch(True), "cursor(binary=True), fetchall"),
            QUERY: query_job(_psycopg_query(True), "cursor(binary=True)"),
            BYTEA: bytea_job(_pickles, _psycopg_bytea, "binary cursor, fetchall, pickle.loads"),
        },
        "psycopg",
        "psycopg 3, binary formats",
    )


# --- asyncpg --------------------------------------------------------------------------------------


def _asyncpg_load(conn: AsyncConn, rows: list[Row]) -> None:
    conn.run(conn.conn.copy_records_to_table(LOAD_TABLE, records=rows, columns=list(COLUMNS)))


def _asyncpg_fetch(conn: AsyncConn) -> Any:
    return conn.run(conn.conn.fetch(READ_QUERY))


def _asyncpg_query(conn: AsyncConn, q: QueryInput) -> Sequence[Any]:
    # `SELECT $1` leaves the type to the driver: asyncpg then sends text, and refuses an int.
    sql = query_sql("${n}::{t}")

    async def runs() -> Sequence[Any]:
        res: Sequence[Any] = []
        for _ in range(q.runs):
            res = await conn.conn.fetch(sql, *q.params)
        return res

    out: Sequence[Any] = conn.run(runs())
    return out


def _asyncpg_bytea(conn: AsyncConn, table: str, count: int) -> list[Any]:
    rows = conn.run(conn.conn.fetch(BYTEA_QUERY.format(table=table)))
    return [pickle.loads(r[0]) for r in rows]


@PG.contender("asyncpg")
def _asyncpg() -> Contender:
    untyped("asyncpg")

    return pg_contender(
        "asyncpg",
        jobs.asyncpg_conn,
        {
            LOAD: load_job(_asyncpg_load, _rows, "copy_records_to_table"),
            READ: read_job(_asyncpg_fetch, "fetch (Records)"),
            QUERY: query_job(_asyncpg_query, "fetch; parameters typed $n::int/float8/text"),
            BYTEA: bytea_job(_pickles, _asyncpg_bytea, "fetch, pickle.loads"),
        },
        "asyncpg",
        "binary protocol, asyncio (run_until_complete per call)",
    )


def _psycopg_copy_rows(conn: Any) -> list[tuple[Any, ...]]:
    with conn.cursor() as cur, cur.copy(COPY_OUT_BINARY) as copy:
        copy.set_types(PG_TYPES)
        return list(copy.rows())


@PG.contender("psycopg-copy-rows")
def _psycopg_copy() -> Contender:
    import psycopg  # noqa: F401

    return pg_contender(
        "psycopg-copy-rows",
        jobs.psycopg_conn,
        {READ: read_job(_psycopg_copy_rows, "COPY (query) TO STDOUT BINARY, rows() (set_types)")},
        "psycopg",
        "psycopg 3 COPY TO, rows()",
    )


@PG.contender("pgcopy")
def _pgcopy() -> Contender:
    pgcopy = untyped("pgcopy")

    managers: dict[int, Any] = {}  # one per connection: its constructor reads the catalog

    def load(conn: Any, rows: list[Row]) -> None:
        manager = managers.get(id(conn))
        if manager is None:
            manager = managers[id(conn)] = pgcopy.CopyManager(conn, LOAD_TABLE, COLUMNS)
        manager.copy(rows, io.BytesIO)

    return pg_contender(
        "pgcopy",
        jobs.psycopg2_conn,
        {LOAD: load_job(load, _rows, "CopyManager made once; copy(rows, io.BytesIO)")},
        "pgcopy",
        "COPY BINARY built in Python, on psycopg2",
    )


# --- Arrow readers and writers --------------------------------------------------------------------


def _adbc_load(conn: Any, table: Any) -> None:
    with conn.cursor() as cur:
        cur.adbc_ingest(LOAD_TABLE, table, mode="append")


def _adbc_fetch(conn: Any) -> Any:
    with conn.cursor() as cur:
        cur.execute(READ_QUERY)
        return cur.fetch_arrow_table()


@PG.contender("adbc")
def _adbc() -> Contender:
    untyped("adbc_driver_postgresql.dbapi")

    return pg_contender(
        "adbc",
        jobs.adbc_conn,
        {
            LOAD: load_job(
                _adbc_load, lambda data: data.arrow, "adbc_ingest of a pyarrow Table (from Arrow)"
            ),
            READ: read_job(_adbc_fetch, "execute, fetch_arrow_table"),
        },
        "adbc-driver-postgresql",
        "ADBC PostgreSQL driver (libpq, COPY BINARY), Arrow in and out",
    )


@PG.contender("connectorx")
def _connectorx() -> Contender:
    import connectorx

    def read(url: str) -> Any:
        return connectorx.read_sql(url, READ_QUERY, return_type="arrow")

    return pg_contender(
        "connectorx",
        jobs.url_only,
        {READ: read_job(read, 'read_sql(url, query, return_type="arrow"), a new connection')},
        "connectorx",
        "Rust reader into Arrow; connects on every call",
    )


def _prebuilt(conn: Any, stream: bytes) -> None:
    with conn.cursor() as cur, cur.copy(COPY_IN_BINARY) as copy:
        copy.write(stream)


@PG.contender("prebuilt-stream")
def _prebuilt_stream() -> Contender:
    import psycopg  # noqa: F401

    return pg_contender(
        "prebuilt-stream",
        jobs.psycopg_conn,
        {
            LOAD: load_job(
                _prebuilt,
                lambda data: data.stream,
                "a ready COPY BINARY stream (bytes, built untimed) through psycopg 3 copy.write",
            )
        },
        "psycopg",
        "the transport floor: COPY of ready bytes",
    )
