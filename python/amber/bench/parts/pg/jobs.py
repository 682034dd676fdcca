"""What a pg contender is: a driver's connection, held for a study, and the jobs it offers.

A job is one workload kind (`workloads.LOAD`, `READ`, `QUERY`, `BYTEA`) done the way that
driver's users do it. `pg_contender` turns a connection factory and a few jobs into a `Contender`
whose `kinds` are those jobs, so each workload runs only the contenders that offer its job. Every
job runs its operation once through `Trial.run`, then checks the result against the workload's
rows before anything is timed:

- load: the table, read back in id order through the study's own connection as COPY BINARY, must
  be the rows' COPY BINARY stream byte for byte (when it is not, the rows say what differs);
- read: the driver's result must hold the rows (in any order: a parallel scan interleaves them);
- query: the last of the R results must be the query's 1,000 rows;
- bytea: the decoded objects must equal the stored ones exactly (`exactly_equal`).
"""

from __future__ import annotations

import contextlib
import functools
import importlib
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from amber.bench.engine.contender import Contender, Trial
from amber.bench.engine.exact import exactly_equal
from amber.bench.parts.pg import server as pg_server
from amber.bench.parts.pg.check import differs
from amber.bench.parts.pg.workloads import (
    BYTEA,
    COLUMNS,
    LOAD,
    LOAD_TABLE,
    QUERY,
    READ,
    LoadInput,
    QueryInput,
)

Connect = Callable[[pg_server.Server], AbstractContextManager[Any]]
Job = Callable[[Trial], None]


@dataclass(frozen=True)
class Session:
    """A contender's hold on the study: the shared server and the driver's own connection."""

    server: pg_server.Server
    conn: Any
    name: str  # the contender's name


def pg_contender(
    name: str,
    connect: Connect,
    jobs: Mapping[str, Job],
    package: str | None,
    note: str = "",
) -> Contender:
    """A contender offering `jobs`, on a connection `connect(server)` opened once per study."""

    @contextlib.contextmanager
    def setup() -> Iterator[Session]:
        with pg_server.shared() as server, connect(server) as conn:
            yield Session(server, conn, name)

    def prepare(t: Trial) -> None:
        for kind in sorted(t.workload.kinds):
            jobs[kind](t)

    return Contender(name, prepare, kinds=frozenset(jobs), setup=setup, package=package, note=note)


def untyped(name: str) -> Any:
    """Import a driver that ships no type information (psycopg2, asyncpg, pgcopy, ADBC): mypy
    then treats it as Any, as it would without the package installed. ImportError when it is
    missing, which makes its contender skipped."""
    return importlib.import_module(name)


# --- connections -----------------------------------------------------------------------------------


@contextlib.contextmanager
def psycopg_conn(server: pg_server.Server) -> Iterator[Any]:
    import psycopg

    with psycopg.connect(server.dsn, autocommit=True) as conn:
        yield conn


@contextlib.contextmanager
def psycopg2_conn(server: pg_server.Server) -> Iterator[Any]:
    conn = untyped("psycopg2").connect(server.dsn)
    conn.autocommit = True
    try:
        yield conn
    finally:
        conn.close()


class AsyncConn:
    """An asyncio connection (asyncpg's, or psycopg's AsyncConnection) with the event loop that
    drives it: `run(coro)` waits for a result."""

    def __init__(self, conn: Any, loop: Any) -> None:
        self.conn = conn
        self.loop = loop

    def run(self, awaitable: Awaitable[Any]) -> Any:
        return self.loop.run_until_complete(awaitable)


@contextlib.contextmanager
def _on_a_loop(connect: Callable[[], Awaitable[Any]]) -> Iterator[AsyncConn]:
    """The async connection `connect()` makes, with the event loop that drives it."""
    import asyncio

    loop = asyncio.new_event_loop()
    try:
        conn = loop.run_until_complete(connect())
        try:
            yield AsyncConn(conn, loop)
        finally:
            loop.run_until_complete(conn.close())
    finally:
        loop.close()


def asyncpg_conn(server: pg_server.Server) -> AbstractContextManager[AsyncConn]:
    return _on_a_loop(lambda: untyped("asyncpg").connect(server.dsn))


def psycopg_async_conn(server: pg_server.Server) -> AbstractContextManager[AsyncConn]:
    """A psycopg 3 AsyncConnection (autocommit) with the event loop that drives it."""
    import psycopg

    return _on_a_loop(lambda: psycopg.AsyncConnection.connect(server.dsn, autocommit=True))


@contextlib.contextmanager
def adbc_conn(server: pg_server.Server) -> Iterator[Any]:
    conn = untyped("adbc_driver_postgresql.dbapi").connect(server.dsn, autocommit=True)
    try:
        yield conn
    finally:
        conn.close()


@contextlib.contextmanager
def url_only(server: pg_server.Server) -> Iterator[str]:
    """No connection: drivers that connect on each call (connectorx) get the server's URL."""
    yield server.url()


# --- jobs ------------------------------------------------------------------------------------------

Load = Callable[[Any, Any], object]  # (connection, input) -> anything


def load_job(write: Load, pick: Callable[[LoadInput], Any], how: str) -> Job:
    """Time `write(conn, pick(rows))` into the load table (empty before every call), then read
    the table back and compare it with the rows."""

    def job(t: Trial) -> None:
        session: Session = t.session
        data: LoadInput = t.value
        written = t.run(LOAD, functools.partial(write, session.conn), pick(data))
        t.note = how
        if isinstance(written, int) and not isinstance(written, bool):
            t.expect(written == len(data), f"reported {written:,} rows written, not {len(data):,}")
        if session.server.table_stream(LOAD_TABLE) != data.stream:  # the send bytes of each value
            why = differs(data.rows, session.server.table(LOAD_TABLE), COLUMNS)
            t.expect(False, f"the loaded table differs: {why or 'its binary form differs'}")

    return job


def read_job(read: Callable[[Any], Any], how: str) -> Job:
    """Time `read(conn)` and compare its result with the rows."""

    def job(t: Trial) -> None:
        session: Session = t.session
        got = t.run(READ, read, session.conn)
        t.note = how
        why = differs(t.value, got, COLUMNS, any_order=True)
        t.expect(why is None, f"what was read differs: {why}")

    return job


def query_job(
    run: Callable[[Any, QueryInput], Sequence[Any]],
    how: str,
    expected: Callable[[QueryInput], list[tuple[Any, ...]]] | None = None,
) -> Job:
    """Time `run(conn, query)`, which executes and fetches the 27-column query `query.runs` times and
    returns the last result; check it against the parameters (or `expected(query)`). The row note
    shows the result as "got N x (first values) ..."."""

    def job(t: Trial) -> None:
        session: Session = t.session
        q: QueryInput = t.value
        got = t.run(QUERY, functools.partial(run, session.conn), q)
        want = q.expected if expected is None else expected(q)
        why = differs(want, got)
        t.expect(why is None, f"the query's result differs: {why}")
        first = tuple(got[0])[:5] if len(got) else ()
        t.note = f"{how}; got {q.runs * len(got):,} x {first!r} ..."

    return job


Write = Callable[[Session, str, list[Any]], None]  # (session, table, objects)
ReadObjects = Callable[[Any, str, int], list[Any]]  # (connection, table, count) -> objects


def bytea_job(write: Write, read: ReadObjects, how: str) -> Job:
    """Store the objects in a table of this contender's (untimed), then time reading them all
    back decoded, in order; the table is dropped once the workload is timed."""

    def job(t: Trial) -> None:
        session: Session = t.session
        objects: list[Any] = t.value
        table = "bytea_" + "".join(c if c.isalnum() else "_" for c in session.name)
        session.server.execute(f"DROP TABLE IF EXISTS {table}")
        t.cleanup.callback(session.server.execute, f"DROP TABLE IF EXISTS {table}")
        write(session, table, objects)
        got = t.run(BYTEA, lambda conn: read(conn, table, len(objects)), session.conn)
        t.note = how
        t.expect(exactly_equal(objects, list(got)), "the objects read back differ")

    return job


def bytea_table(session: Session, table: str) -> None:
    session.server.execute(f"CREATE TABLE {table} (id int8 PRIMARY KEY, v bytea NOT NULL)")


def store_payloads(session: Session, table: str, payloads: Sequence[bytes]) -> None:
    """Write encoded objects with ids 0.. through the study's connection (COPY, binary)."""
    bytea_table(session, table)
    with (
        session.server.admin.cursor() as cur,
        cur.copy(f"COPY {table} (id, v) FROM STDIN (FORMAT BINARY)") as copy,
    ):
        copy.set_types(["int8", "bytea"])
        for i, payload in enumerate(payloads):
            copy.write_row((i, payload))
    session.server.execute(f"VACUUM ANALYZE {table}")
