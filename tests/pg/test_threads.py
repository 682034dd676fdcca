"""amber.pg and other threads: closing, cancelling and reusing the connection while amber reads
or writes, and the native reader's refusal of anything but psycopg's own PGconn and PGresult.

The close cases run in child processes (tests/pg/pg_thread_child.py) under MALLOC_PERTURB_, where a
use of freed libpq memory crashes: a crash fails the test."""

from __future__ import annotations

import itertools
import os
import random
import select
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, cast

import pandas as pd
import psycopg
import pytest
from psycopg import errors as pg_errors
from psycopg.adapt import Loader
from psycopg.pq import Format

import amber.pg
from amber import _native
from amber.pg import _copy

pytestmark = pytest.mark.skipif(not _copy._libpq(), reason="amber reads through psycopg here")

CHILD = Path(__file__).with_name("pg_thread_child.py")
#: A COPY that streams for about a second, a row at a time.
SLOW = "select g, md5(g::text) as t, pg_sleep(0.0003)::text as s from generate_series(1, 3000) g"
#: The same, for about a third of a second.
SHORT = SLOW.replace("3000", "1000")


def _reader(conn: psycopg.Connection[Any], query: str, into: str = "rows") -> Any:
    names, oids = _copy._describe(conn, query)
    mode = _copy._check_into(into)
    return _native.PgReader(_copy._read_specs(conn, oids, names=names), names, mode)


class _PointLoader(Loader):
    """psycopg's kind of binary loader for point, a type amber leaves to psycopg."""

    format = Format.BINARY
    hook: Any = None

    def load(self, data: Any) -> tuple[float, float]:
        if self.hook is not None:
            self.hook()
        x, y = struct.unpack(">dd", bytes(data))
        return (x, y)


def _point_loader(hook: Any) -> type[Loader]:
    return type("HookedPointLoader", (_PointLoader,), {"hook": staticmethod(hook)})


# --- what drain and read_result take ----------------------------------------------------------


@pytest.mark.parametrize("bad", [0, 12345678, object(), "pgconn", None])
def test_drain_refuses_anything_but_psycopg_pgconn(conn: Any, bad: Any) -> None:
    reader = _native.PgReader([(20, None)], ["g"], "rows")
    with pytest.raises(TypeError, match="psycopg's PGconn"):
        reader.drain(bad)
    with pytest.raises(TypeError, match="psycopg's PGconn"):
        reader.drain(conn)  # the Connection, not its pgconn
    with conn.cursor(binary=True) as cur:
        cur.execute("select 1::int8")
        with pytest.raises(TypeError, match="psycopg's PGconn"):
            reader.drain(cur.pgresult)


@pytest.mark.parametrize("bad", [0, 12345678, object(), b"x", None])
def test_read_result_refuses_anything_but_psycopg_pgresult(conn: Any, bad: Any) -> None:
    reader = _native.PgReader([(20, None)], ["g"], "rows")
    with pytest.raises(TypeError, match="psycopg's PGresult"):
        reader.read_result(bad)
    with pytest.raises(TypeError, match="psycopg's PGresult"):
        reader.read_result(conn.pgconn)
    assert reader.rows == 0


def test_bind_refuses_other_classes() -> None:
    # Already bound to psycopg's classes: others are not taken instead.
    assert _native.pg_bind_libpq("/nonexistent/libpq.so", int, str) is False


def test_drain_on_a_closed_connection_raises_operational_error(pg_server: Any) -> None:
    with pg_server.connect() as c:
        reader = _reader(c, "select 1::int8 as g")
        pgconn = c.pgconn
    with pytest.raises(psycopg.OperationalError, match="closed"):
        reader.drain(pgconn)
    with pytest.raises(psycopg.OperationalError, match="closed"):
        reader.drain(pgconn, block=False)


def test_read_result_of_a_cleared_result_raises_interface_error(conn: Any) -> None:
    with conn.cursor(binary=True) as cur:
        cur.execute("select g::int8 from generate_series(1, 3) g")
        res = cur.pgresult
        reader = _native.PgReader([(20, None)], ["g"], "rows")
        res.clear()
        with pytest.raises(psycopg.InterfaceError, match="cleared"):
            reader.read_result(res)


@pytest.mark.parametrize("n", [50, 40_000])
def test_loader_that_clears_the_result_is_refused_or_read_exactly(conn: Any, n: int) -> None:
    """A loader (Python code) that clears the result amber reads: the rows already copied out
    are read exactly, and a batch read after the clear raises InterfaceError, never reading
    freed memory. 50 rows fit in one batch; 40,000 do not."""
    with conn.cursor(binary=True) as cur:
        cur.execute(f"select g::int8, point(g, -g) from generate_series(1, {n}) g")
        res = cur.pgresult
        loader = _point_loader(res.clear)
        reader = _native.PgReader([(20, None), (600, loader(600).load)], ["g", "p"], "rows")
        if n == 50:
            reader.read_result(res)
            assert reader.finish(False) == [(g, (g, -g)) for g in range(1, n + 1)]
        else:
            with pytest.raises(psycopg.InterfaceError, match="cleared"):
                reader.read_result(res)
            assert 0 < reader.rows < n


def test_read_result_in_slices_matches_one_read(conn: Any) -> None:
    q = "select g::int8, 'v' || g as t, case when g % 7 = 0 then null else g * 0.5 end::float8 f "
    q += "from generate_series(1, 5000) g"
    whole = amber.pg.fetch(conn, q)
    with conn.cursor(binary=True) as cur:
        cur.execute(q)
        res = cur.pgresult
        specs = [(20, None), (25, None), (701, None)]
        for cuts in ([0, 5000], [0, 1, 2, 2, 4999, 5000], [0, 1234, 4000, 5000]):
            reader = _native.PgReader(specs, ["g", "t", "f"], "rows")
            for a, b in itertools.pairwise(cuts):
                reader.read_result(res, a, b)
            assert reader.finish(False) == whole
        reader = _native.PgReader(specs, ["g", "t", "f"], "rows")
        reader.read_result(res, 4990)
        assert reader.finish(False) == whole[4990:]
        for start, stop in [(10, 5), (0, 5001), (5001, None)]:
            with pytest.raises(ValueError, match="within the result"):
                _native.PgReader(specs, ["g", "t", "f"], "rows").read_result(res, start, stop)


def test_drain_not_blocking_matches_copy_out(conn: Any) -> None:
    """drain(block=False) takes what is buffered and says "wait" when the socket must be
    readable; driven by select, it gives what copy_out gives."""
    q = "select g::int8, md5(g::text) t, pg_sleep(0.0002)::text s from generate_series(1, 1500) g"
    expected = amber.pg.copy_out(conn, q)
    reader = _reader(conn, q)
    waits = 0
    with conn.cursor() as cur, cur.copy(_copy._copy_out_statement(q)):
        while (r := reader.drain(conn.pgconn, block=False)) == "wait":
            waits += 1
            select.select([conn.pgconn.socket], [], [], 5)
    assert r is None
    assert waits > 0
    assert reader.finish(True) == expected
    assert conn.execute("select 1").fetchone() == (1,)


def test_drain_not_blocking_reports_the_server_error(conn: Any) -> None:
    q = "select 1 / (g - 300) as x from generate_series(1, 400) g"
    reader = _reader(conn, q)
    with (
        pytest.raises(pg_errors.DivisionByZero),
        conn.cursor() as cur,
        cur.copy(_copy._copy_out_statement(q)),
    ):
        while (r := reader.drain(conn.pgconn, block=False)) == "wait":
            select.select([conn.pgconn.socket], [], [], 5)
        assert isinstance(r, tuple)
        _copy._raise_server(r)


def test_loader_closing_the_connection_mid_drain_raises_operational_error(pg_server: Any) -> None:
    """Python code run by the drain (a loader) closes the connection from another thread: the
    next libpq call sees it closed and psycopg's OperationalError is raised."""
    c = pg_server.connect(autocommit=True)
    seen = []

    def hook() -> None:
        seen.append(1)
        if len(seen) == 100:
            t = threading.Thread(target=c.close)
            t.start()
            t.join()

    c.adapters.register_loader("point", _point_loader(hook))
    with pytest.raises(psycopg.OperationalError, match="closed"):
        amber.pg.copy_out(c, "select g, point(g, g) from generate_series(1, 20000) g")
    assert c.closed and len(seen) >= 100


# --- closing from another thread, in child processes under MALLOC_PERTURB_ --------------------


def _child(dsn: str, case: str, iterations: int, seed: int, impl: str | None = None) -> str:
    env = dict(os.environ, MALLOC_PERTURB_="165")
    if impl:
        env["PSYCOPG_IMPL"] = impl
    p = subprocess.run(
        [sys.executable, str(CHILD), dsn, case, str(iterations), str(seed)],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
    )
    assert p.returncode == 0, f"child {case} exited {p.returncode}:\n{p.stdout}\n{p.stderr[-3000:]}"
    assert "DONE" in p.stdout, p.stdout
    return p.stdout


@pytest.mark.parametrize("into", ["rows", "arrow", "columns"])
def test_close_during_copy_out_in_child(pg_server: Any, into: str) -> None:
    out = _child(pg_server.dsn, f"copy_out_{into}", 4, random.randrange(1 << 30))
    assert "closed: OperationalError: the connection is closed" in out


def test_close_while_a_loader_runs_in_copy_out_in_child(pg_server: Any) -> None:
    out = _child(pg_server.dsn, "copy_out_loader", 4, random.randrange(1 << 30))
    assert "closed: OperationalError: the connection is closed" in out


@pytest.mark.parametrize("into", ["rows", "columns"])
def test_close_during_fetch_in_child(pg_server: Any, into: str) -> None:
    """The result outlives its connection: closing mid-read leaves the read exact."""
    out = _child(pg_server.dsn, f"fetch_{into}", 6, random.randrange(1 << 30))
    assert "closed: " not in out


@pytest.mark.parametrize(
    "case", ["copy_in_rows", "copy_in_frame", "store_get", "store_get_many", "store_put"]
)
def test_close_during_writes_and_store_in_child(pg_server: Any, case: str) -> None:
    out = _child(pg_server.dsn, case, 3, random.randrange(1 << 30))
    assert "DONE ok=0 closed=3" in out


def test_close_during_copy_out_with_psycopg_python_implementation(pg_server: Any) -> None:
    """psycopg's ctypes implementation: amber reads its pointer slot the same way."""
    probe = subprocess.run(
        [sys.executable, "-c", "from amber.pg import _copy; print(_copy._libpq())"],
        capture_output=True,
        text=True,
        env=dict(os.environ, PSYCOPG_IMPL="python"),
        timeout=60,
    )
    if probe.stdout.strip() != "True":
        pytest.skip(f"no system libpq bound for psycopg's python implementation: {probe.stderr}")
    out = _child(pg_server.dsn, "copy_out_loader", 2, random.randrange(1 << 30), "python")
    assert "closed: OperationalError: the connection is closed" in out
    out = _child(pg_server.dsn, "fetch_rows", 2, random.randrange(1 << 30), "python")
    assert "UNEXPECTED" not in out


# --- cancelling and reusing the connection from another thread --------------------------------


def _slow_table(c: psycopg.Connection[Any], name: str) -> None:
    """A table whose every inserted row makes the server sleep 0.2 ms."""
    c.execute(f"create temp table {name} (a int8, b text)")
    c.execute(
        "create or replace function pg_temp.slow() returns trigger language plpgsql as "
        "$$ begin perform pg_sleep(0.0002); return new; end $$"
    )
    c.execute(
        f"create trigger slow before insert on {name} for each row execute function pg_temp.slow()"
    )


def _operation(c: psycopg.Connection[Any], op: str) -> Any:
    """Run `op` on `c`; return a value to check against the same op run undisturbed."""
    if op.startswith("copy_out_"):
        out = amber.pg.copy_out(c, SHORT, into=cast(Any, op.removeprefix("copy_out_")))
        return (
            out
            if isinstance(out, list)
            else len(out["g"])
            if isinstance(out, dict)
            else out.num_rows
        )
    if op == "fetch":
        return amber.pg.fetch(c, SHORT)
    if op == "copy_in_rows":
        amber.pg.copy_in(c, "w", ((i, f"r{i}") for i in range(1000)))
        return c.execute("select count(*), sum(a) from w").fetchone()
    if op == "copy_in_frame":
        amber.pg.copy_in(
            c, "w", pd.DataFrame({"a": range(1000), "b": [f"r{i}" for i in range(1000)]})
        )
        return c.execute("select count(*), sum(a) from w").fetchone()
    store = amber.pg.Store(c, "kv_threads")
    if op == "store_put":
        store.put_many({f"k{i}": [i, "v"] for i in range(300)})
        return len(store)
    store.put_many({f"k{i}": [i, "v"] for i in range(300)})
    if op == "store_get":
        return [store[f"k{i}"] for i in range(0, 300, 10)]
    return store.get_many(f"k{i}" for i in range(300))


OPS = [
    "copy_out_rows",
    "copy_out_arrow",
    "copy_out_columns",
    "fetch",
    "copy_in_rows",
    "copy_in_frame",
    "store_put",
    "store_get",
    "store_get_many",
]


@pytest.mark.parametrize("how", ["cancel", "cancel_safe"])
@pytest.mark.parametrize("op", OPS)
def test_cancel_from_another_thread(pg_server: Any, op: str, how: str) -> None:
    """Cancelled at a random moment: the operation either completes exactly or raises
    QueryCanceled, and the connection goes on."""
    with pg_server.connect(autocommit=True) as c:
        _slow_table(c, "w")
        expected = _operation(c, op)
        c.execute("truncate w")
        c.execute("drop table if exists kv_threads")
        delay = random.uniform(0.0, 0.3)

        def cancel() -> None:
            time.sleep(delay)
            getattr(c, how)()

        t = threading.Thread(target=cancel)
        t.start()
        try:
            got = _operation(c, op)
        except pg_errors.QueryCanceled:
            got = None
        t.join()
        if got is not None:
            assert got == expected
        elif op.startswith("copy_in"):
            assert c.execute("select count(*) from w").fetchone() == (0,)
        assert c.execute("select 1").fetchone() == (1,)


@pytest.mark.parametrize("op", OPS)
def test_reuse_from_another_thread(pg_server: Any, op: str) -> None:
    """Another thread runs queries on the same connection meanwhile: psycopg's connection lock
    orders them, and both sides get exact results."""
    with pg_server.connect() as c:
        _slow_table(c, "w")
        c.commit()
        expected = _operation(c, op)
        c.rollback()
        stop = threading.Event()
        answers: list[Any] = []

        def reuse() -> None:
            while not stop.is_set():
                answers.append(c.execute("select 42, %s::text", ["x"]).fetchone())
                time.sleep(0.002)

        t = threading.Thread(target=reuse)
        t.start()
        try:
            got = _operation(c, op)
        finally:
            stop.set()
            t.join()
        assert got == expected
        assert answers and set(answers) == {(42, "x")}
        c.rollback()
