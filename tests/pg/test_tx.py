"""amber.pg and the caller's transaction, against a real PostgreSQL server.

Every operation (copy_in of rows and frames, copy_out into each shape, fetch, the Store's
methods) runs on a connection in each state a caller can be in: autocommit and idle,
autocommit inside `with conn.transaction():`, a non-autocommit connection in its transaction,
and nested savepoints. Each succeeds, or fails with a bad value, a missing table or column, a
server error or a value amber cannot decode; afterwards the caller's transaction is in the
state it was (and goes on), the rows it wrote before are there, and nothing of the failed
operation is left. Also: table names (hostile ones, dots, NUL) and the describe/COPY window.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pandas as pd
import polars as pl
import psycopg
import pytest
from psycopg import pq, sql

import amber
from amber.pg import Store, copy_in, copy_out, fetch, register
from amber.pg._copy import _atomic_plan

IDLE, INTRANS = pq.TransactionStatus.IDLE, pq.TransactionStatus.INTRANS
MODES = ["autocommit", "autocommit_block", "transaction", "nested"]
INTOS = ["rows", "columns", "arrow", "pandas", "polars"]


@pytest.fixture
def schema(pg_server: Any) -> Iterator[str]:
    """A schema of the test's own, with `mine (v int)` (the caller's earlier rows) and
    `target (a int8 primary key, b text)`; dropped afterwards."""
    name = f"tx_{uuid.uuid4().hex[:12]}"
    with pg_server.connect(autocommit=True) as admin:
        admin.execute(sql.SQL("create schema {}").format(sql.Identifier(name)))
        admin.execute(sql.SQL("set search_path = {}").format(sql.Identifier(name)))
        admin.execute("create table mine (v int)")
        admin.execute("create table target (a int8 primary key, b text)")
        admin.execute("insert into target values (100, 'kept')")
        admin.execute("create table objects (key text primary key, value bytea not null)")
        admin.execute(
            "insert into objects values ('ok', %b), ('bad', 'not amber')", (amber.dumps({"v": 1}),)
        )
        yield name
        admin.execute(sql.SQL("drop schema {} cascade").format(sql.Identifier(name)))


@contextlib.contextmanager
def caller(pg_server: Any, schema: str, mode: str) -> Iterator[psycopg.Connection[Any]]:
    """A connection in `mode` that has written `mine` row 1 in its transaction (committed in
    autocommit mode). After the block, the test checks the state with `assert_carries_on`."""
    conn = pg_server.connect(autocommit=mode.startswith("autocommit"))
    try:
        conn.execute(sql.SQL("set search_path = {}").format(sql.Identifier(schema)))
        with contextlib.ExitStack() as stack:
            if mode == "autocommit_block":
                stack.enter_context(conn.transaction())
            if mode == "nested":
                conn.execute("select 1")
                stack.enter_context(conn.transaction())
                stack.enter_context(conn.transaction())
            conn.execute("insert into mine values (1)")
            yield conn
            # The caller's transaction goes on: it can write and then end as it chooses.
            conn.execute("insert into mine values (2)")
            assert conn.execute("select array_agg(v order by v) from mine").fetchone() == ([1, 2],)
        if mode in ("transaction", "nested"):
            conn.commit()
    finally:
        conn.close()


def expected_status(mode: str) -> pq.TransactionStatus:
    return IDLE if mode == "autocommit" else INTRANS


def target_rows(conn: psycopg.Connection[Any]) -> list[tuple[Any, ...]]:
    return conn.execute("select a, b from target order by a").fetchall()


def frame_pandas(values: list[int]) -> Any:
    return pd.DataFrame({"a": pd.array(values, dtype="Int64"), "b": ["x"] * len(values)})


# --- the decision ------------------------------------------------------------------------------


def test_the_wrapper_follows_the_transaction_status_not_autocommit() -> None:
    assert _atomic_plan(IDLE, True).enter == "BEGIN"
    for autocommit in (True, False):
        assert _atomic_plan(INTRANS, autocommit).enter.startswith("SAVEPOINT")
        assert _atomic_plan(pq.TransactionStatus.INERROR, autocommit).enter.startswith("SAVEPOINT")
    # A non-autocommit connection that is idle gets psycopg's implicit BEGIN, then a savepoint:
    # amber never commits the caller's transaction.
    assert _atomic_plan(IDLE, False).enter.startswith("SAVEPOINT")


# --- copy_in -----------------------------------------------------------------------------------

COPY_IN_FAILURES: dict[str, tuple[Callable[[Any], Any], type[BaseException]]] = {
    "value": (lambda c: copy_in(c, "target", [(1, "a"), (2**70, "b")]), amber.EncodeError),
    "value_pandas": (
        lambda c: copy_in(c, "target", pd.DataFrame({"a": [1, 2], "b": ["a", 7]})),
        amber.EncodeError,
    ),
    "value_polars": (
        lambda c: copy_in(c, "target", pl.DataFrame({"a": [1, 2], "b": [1.5, 2.5]})),
        amber.EncodeError,
    ),
    "missing_table": (lambda c: copy_in(c, "no_such_table", [(1,)]), psycopg.errors.UndefinedTable),
    "missing_column": (lambda c: copy_in(c, "target", {"nope": [1]}), ValueError),
    "server": (
        lambda c: copy_in(c, "target", [(1, "a"), (100, "dup")]),
        psycopg.errors.UniqueViolation,
    ),
    "iterator": (
        lambda c: copy_in(c, "target", ((1, "a") if i == 0 else 1 / 0 for i in range(3))),
        ZeroDivisionError,
    ),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("failure", list(COPY_IN_FAILURES))
def test_copy_in_failure_leaves_the_callers_transaction(
    pg_server: Any, schema: str, mode: str, failure: str
) -> None:
    run, exc = COPY_IN_FAILURES[failure]
    with caller(pg_server, schema, mode) as conn:
        with pytest.raises(exc):
            run(conn)
        assert conn.info.transaction_status == expected_status(mode)
        assert target_rows(conn) == [(100, "kept")]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("data", ["rows", "pandas", "polars"])
def test_copy_in_success_stays_in_the_callers_transaction(
    pg_server: Any, schema: str, mode: str, data: str
) -> None:
    values = {
        "rows": [(1, "x"), (2, "x")],
        "pandas": frame_pandas([1, 2]),
        "polars": pl.DataFrame({"a": [1, 2], "b": ["x", "x"]}),
    }[data]
    with caller(pg_server, schema, mode) as conn:
        assert copy_in(conn, "target", values) == 2
        assert conn.info.transaction_status == expected_status(mode)
        assert target_rows(conn) == [(1, "x"), (2, "x"), (100, "kept")]
        if mode != "autocommit":
            # Still the caller's to end: amber released its savepoint and committed nothing.
            with (
                pytest.raises(psycopg.errors.InvalidSavepointSpecification),
                conn.transaction(),
            ):
                conn.execute("release savepoint amber_copy")


def test_copy_in_missing_table_message_names_it(conn: Any) -> None:
    with pytest.raises(psycopg.errors.UndefinedTable) as ei:
        copy_in(conn, "no_such_table", [(1,)])
    assert str(ei.value) == 'table "no_such_table" does not exist'
    conn.execute("create schema s2; create table s2.t (v int)")
    with pytest.raises(psycopg.errors.UndefinedTable, match=r"pass a \(schema, name\) tuple"):
        copy_in(conn, "s2.t", [(1,)])
    assert copy_in(conn, ("s2", "t"), [(1,)]) == 1
    assert copy_in(conn, sql.Identifier("s2", "t"), [(2,)]) == 1
    assert conn.execute("select array_agg(v order by v) from s2.t").fetchone() == ([1, 2],)


# --- copy_out ----------------------------------------------------------------------------------

MIDSTREAM_SERVER = "select g, 1 / (g - 3000) as q from generate_series(1, 5000) g"
DECODE_FAILURES = {
    "time_2400": "select case when g = 3000 then '24:00'::time else '12:00'::time end as t "
    "from generate_series(1, 5000) g",
    "date_10000": "select case when g = 3000 then '10000-01-01'::date else '2000-01-01'::date "
    "end as d from generate_series(1, 5000) g",
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("into", INTOS)
def test_copy_out_server_error_mid_stream(
    pg_server: Any, schema: str, mode: str, into: Any
) -> None:
    with caller(pg_server, schema, mode) as conn:
        with pytest.raises(psycopg.errors.DivisionByZero):
            copy_out(conn, MIDSTREAM_SERVER, into=into)
        assert conn.info.transaction_status == expected_status(mode)
        with pytest.raises(psycopg.errors.UndefinedColumn):
            copy_out(conn, "select nope from mine", into=into)
        with pytest.raises(psycopg.errors.UndefinedTable):
            copy_out(conn, "select * from no_such_table", into=into)
        assert conn.info.transaction_status == expected_status(mode)
        got = copy_out(conn, "select v from mine order by v", into=into)
        assert len(got) == 1


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("query", list(DECODE_FAILURES))
def test_copy_out_decode_error_mid_stream(
    pg_server: Any, schema: str, mode: str, query: str
) -> None:
    with caller(pg_server, schema, mode) as conn:
        with pytest.raises(amber.DecodeError) as ei:
            copy_out(conn, DECODE_FAILURES[query])
        assert ei.value.kind == "out_of_range" and ei.value.path is not None
        assert ei.value.path.startswith("$[2999].")
        assert conn.info.transaction_status == expected_status(mode)
        # DML with RETURNING through copy_out: nothing of it stays when a value is refused.
        with pytest.raises(amber.DecodeError):
            copy_out(conn, "insert into target values (5, 'gone') returning '24:00'::time")
        assert target_rows(conn) == [(100, "kept")]


@pytest.mark.parametrize("mode", MODES)
def test_copy_out_amber_bytea_decode_error(pg_server: Any, schema: str, mode: str) -> None:
    with caller(pg_server, schema, mode) as conn:
        register(conn)
        for into in ("rows", "columns"):
            with pytest.raises(amber.DecodeError) as ei:
                copy_out(conn, "select value from objects order by key", into=into)
            assert ei.value.kind == "not_amber" and ei.value.path == "$[0].value"
        assert conn.info.transaction_status == expected_status(mode)


@contextlib.contextmanager
def in_the_window(action: Callable[[], object]) -> Iterator[list[BaseException]]:
    """Run `action` (another session's statement) right after copy_out's describe step, before
    its COPY; what it raised is in the list yielded."""
    import amber.pg._copy as pg_copy

    outcome: list[BaseException] = []
    original = pg_copy._describe

    def describe_then_act(c: Any, text: str) -> Any:
        got = original(c, text)
        try:
            action()
        except psycopg.Error as e:
            outcome.append(e)
        return got

    pg_copy._describe = describe_then_act  # type: ignore[assignment]
    try:
        yield outcome
    finally:
        pg_copy._describe = original


def assert_types_changed(ei: Any, column: str) -> None:
    assert ei.value.kind == "type_mismatch" and ei.value.path == f"$[*].{column}"
    assert "changed type" in str(ei.value) and "run it again" in str(ei.value)


def test_a_type_changed_between_describe_and_copy_is_refused(pg_server: Any, schema: str) -> None:
    """A binary COPY stream carries no types. On an idle autocommit connection nothing is
    locked between the describe step and the COPY, so another session's ALTER ... TYPE goes
    on (it never waits for copy_out, which could deadlock a caller that runs it); the COPY
    then sends bytes of the new type (float4 1.0 read as int4 would be 1065353216) and
    copy_out refuses them, leaving nothing of the COPY behind (here: a data-modifying CTE).
    In a transaction, the describe step's table locks make the ALTER wait; a function of the
    query, which nothing locks, can still be replaced, and that is refused too."""
    for autocommit in (True, False):
        with (
            pg_server.connect(autocommit=autocommit) as conn,
            pg_server.connect(autocommit=True) as other,
        ):
            for c in (conn, other):
                c.execute(sql.SQL("set search_path = {}").format(sql.Identifier(schema)))
            conn.commit()
            other.execute("drop table if exists race; create table race (v int4)")
            other.execute("insert into race values (1), (2)")
            other.execute("set lock_timeout = '200ms'")
            conn.execute("select 1")  # psycopg's own transaction, where not autocommit
            query = (
                "with w as (insert into mine values (7) returning v) "
                "select race.v from race, w order by race.v"
            )
            alter = "alter table race alter column v type float4"
            with in_the_window(functools.partial(other.execute, alter)) as outcome:
                if autocommit:
                    with pytest.raises(amber.DecodeError) as ei:
                        copy_out(conn, query)
                    assert_types_changed(ei, "v")
                    assert outcome == []
                else:
                    assert copy_out(conn, query) == [(1,), (2,)]
                    assert len(outcome) == 1
                    assert isinstance(outcome[0], psycopg.errors.LockNotAvailable)
            if autocommit:
                assert conn.info.transaction_status == IDLE
                assert conn.execute("select count(*) from mine where v = 7").fetchone() == (0,)
            else:
                conn.rollback()
                other.execute("alter table race alter column v type float4")
            assert copy_out(conn, "select v from race order by v") == [(1.0,), (2.0,)]
            conn.rollback()

            # A function replaced by another one returning another type.
            other.execute(
                "create or replace function race_f() returns int4 language sql as 'select 1'"
            )
            conn.execute("select 1")
            replace = (
                "drop function race_f(); create function race_f() returns float4 "
                "language sql as 'select 1.5::float4'"
            )
            with (
                in_the_window(functools.partial(other.execute, replace)) as outcome,
                pytest.raises(amber.DecodeError) as ei,
            ):
                copy_out(conn, "select race_f() as f from race")
            assert_types_changed(ei, "f")
            assert outcome == []
            assert conn.info.transaction_status == (IDLE if autocommit else INTRANS)
            assert copy_out(conn, "select race_f() as f from race limit 1") == [(1.5,)]
            conn.rollback()
            other.execute("drop function race_f()")


def test_async_copy_out_refuses_a_type_changed_between_describe_and_copy(
    pg_server: Any, schema: str
) -> None:
    """The same check on an AsyncConnection: an ALTER ... TYPE of another session right after
    the describe step goes on, and copy_out refuses what the COPY then sends."""
    import amber.pg._async as pg_async

    async def run() -> None:
        conn = await psycopg.AsyncConnection.connect(pg_server.dsn, autocommit=True)
        other = await psycopg.AsyncConnection.connect(pg_server.dsn, autocommit=True)
        try:
            for c in (conn, other):
                await c.execute(sql.SQL("set search_path = {}").format(sql.Identifier(schema)))
            await other.execute("drop table if exists race; create table race (v int4)")
            await other.execute("insert into race values (1), (2)")
            await other.execute("set lock_timeout = '2s'")
            original = pg_async._describe

            async def describe_then_alter(c: Any, text: str) -> Any:
                got = await original(c, text)
                await other.execute("alter table race alter column v type float4")
                return got

            pg_async._describe = describe_then_alter  # type: ignore[assignment]
            try:
                with pytest.raises(amber.DecodeError) as ei:
                    await copy_out(conn, "select v from race order by v")
            finally:
                pg_async._describe = original
            assert_types_changed(ei, "v")
            assert await copy_out(conn, "select v from race order by v") == [(1.0,), (2.0,)]
        finally:
            await conn.close()
            await other.close()

    asyncio.run(run())


# --- fetch -------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_fetch_decode_error_leaves_the_callers_transaction(
    pg_server: Any, schema: str, mode: str
) -> None:
    with caller(pg_server, schema, mode) as conn:
        for query in DECODE_FAILURES.values():
            with pytest.raises(amber.DecodeError) as ei:
                fetch(conn, query)
            assert ei.value.kind == "out_of_range"
        register(conn)
        with pytest.raises(amber.DecodeError) as ei:
            fetch(conn, "select value from objects where key = %s", ["bad"])
        assert ei.value.kind == "not_amber"
        assert conn.info.transaction_status == expected_status(mode)
        assert fetch(conn, "select v from mine") == [(1,)]


def test_fetch_server_error_is_psycopgs(pg_server: Any, schema: str) -> None:
    """fetch runs one statement, as `cursor.execute` does: a server error in a transaction
    aborts it as psycopg's would (the caller's to roll back), and in autocommit touches
    nothing."""
    with caller(pg_server, schema, "autocommit") as conn:
        with pytest.raises(psycopg.errors.DivisionByZero):
            fetch(conn, "select 1 / 0")
        assert conn.info.transaction_status == IDLE
    with pg_server.connect() as conn:
        with pytest.raises(psycopg.errors.DivisionByZero):
            fetch(conn, "select 1 / 0")
        assert conn.info.transaction_status == pq.TransactionStatus.INERROR


# --- Store -------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("registered", [False, True])
def test_store_errors_leave_the_callers_transaction(
    pg_server: Any, schema: str, mode: str, registered: bool
) -> None:
    with caller(pg_server, schema, mode) as conn:
        if registered:
            register(conn)
        store = Store(conn, "objects", create=False)
        assert store["ok"] == {"v": 1}
        with pytest.raises(amber.DecodeError) as ei:
            store["bad"]
        assert ei.value.kind == "not_amber" and ei.value.path == '$["bad"]'
        assert "key 'bad' of table \"objects\"" in str(ei.value)
        with pytest.raises(amber.DecodeError) as ei:
            store.get_many(["ok", "bad"])
        assert ei.value.kind == "not_amber" and "key 'bad'" in str(ei.value)
        with pytest.raises(amber.EncodeError):
            store.put_many({"n1": 1, "n2": object()})
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute("alter table objects add constraint short check (length(key) < 10)")
            store.put_many({"n1": 1, "a-very-long-key": 2})
        assert conn.info.transaction_status == expected_status(mode)
        assert set(store) == {"ok", "bad"}
        store.put_many({"n1": [1], "n2": (2,)})
        assert store.get_many(["n1", "n2", "zz"]) == {"n1": [1], "n2": (2,)}
        assert conn.info.transaction_status == expected_status(mode)


def test_store_put_many_never_commits(pg_server: Any, schema: str) -> None:
    with pg_server.connect() as conn:
        conn.execute(sql.SQL("set search_path = {}").format(sql.Identifier(schema)))
        conn.commit()
        store = Store(conn, "objects", create=False)
        store.put_many({"x": 1})
        assert conn.info.transaction_status == INTRANS
        conn.rollback()
        assert "x" not in store


# --- names -------------------------------------------------------------------------------------

HOSTILE = [
    "a%b",
    "a%%b",
    "per%cent%s",
    "%(name)s",
    "{t}",
    "my.t",
    'quo"te',
    "it's",
    "semi; drop table mine; --",
    "spa ce",
    "Üñï€ødé",
    "back\\slash",
    "$1",
]


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_names_name_their_own_table(pg_server: Any, schema: str, name: str) -> None:
    with caller(pg_server, schema, "transaction") as conn:
        conn.execute(
            sql.SQL("create table {} (key text primary key, value bytea not null)").format(
                sql.Identifier(name)
            )
        )
        # Tables a misread name would reach instead.
        for decoy in ("a", "a%b", "t", "my"):
            if decoy != name:
                conn.execute(
                    sql.SQL("create table if not exists {} (key text, value bytea)").format(
                        sql.Identifier(decoy)
                    )
                )
        assert copy_in(conn, name, [("c", b"raw")]) == 1
        store = Store(conn, name)
        store["k"] = {"n": name}
        store.put_many({"m": 1})
        assert store["k"] == {"n": name} and "k" in store and len(store) == 3
        assert store.get_many(["k", "m"]) == {"k": {"n": name}, "m": 1}
        assert list(store) == ["c", "k", "m"]
        del store["m"]
        counts = {
            t: fetch(conn, sql.SQL("select count(*) from {}").format(sql.Identifier(t)))[0][0]
            for t in {"a", "a%b", "t", "my", name}
        }
        assert counts.pop(name) == 2 and set(counts.values()) == {0}
        store.clear()
        assert len(store) == 0
        assert conn.execute("select count(*) from mine").fetchone() == (1,)


def test_names_with_nul_and_bad_shapes_are_refused(conn: Any) -> None:
    conn.execute("create table a (key text primary key, value bytea not null)")
    bad: Any
    for bad in ["a\x00b", ("public", "a\x00"), (), "", ("a", ""), 7, ("a", "b", "c", "d")]:
        with pytest.raises(ValueError):
            copy_in(conn, bad, [("k", b"v")])
        with pytest.raises(ValueError):
            Store(conn, bad)
    assert conn.execute("select count(*) from a").fetchone() == (0,)
    assert conn.info.transaction_status == INTRANS
