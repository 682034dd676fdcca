"""amber.pg's objects in bytea, against a real PostgreSQL server: the adapters (`register`,
`Amber`) and the `Store`."""

from __future__ import annotations

import datetime as dt
import decimal
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import psycopg
import pytest
from psycopg import pq, sql

import amber
from amber.pg import Amber, AmberDumper, Store, register
from amber.pg._adapt import BYTEA_OID
from tests.support.exact import assert_exact

VALUE = {
    "id": 7,
    "tags": ("a", "b"),
    "seen": {3, 4},
    "price": decimal.Decimal("9.90"),
    "at": dt.datetime(2026, 11, 22, 8, 30, tzinfo=dt.timezone.utc),
    "blob": b"\x00\xff",
    "arr": np.arange(6, dtype=np.int16).reshape(2, 3),
    "nan": float("nan"),
}


@pytest.mark.parametrize("binary", [True, False])
def test_amber_values_round_trip_through_bytea(conn: Any, binary: bool) -> None:
    register(conn)
    conn.execute("create temp table t (id int, v bytea)")
    with conn.cursor(binary=binary) as cur:
        cur.execute("insert into t values (%s, %s)", (1, Amber(VALUE)))
        cur.execute("select v from t where id = 1")
        (got,) = cur.fetchone()
    assert_exact(got, VALUE)


def test_the_parameter_is_sent_as_binary_amber(conn: Any) -> None:
    register(conn)
    conn.execute("create temp table t (v bytea)")
    conn.execute("insert into t values (%s)", (Amber([1, "x"]),))
    with conn.cursor() as cur:  # psycopg's own bytea loaders: the bytes as stored
        cur.adapters.register_loader("bytea", psycopg.types.string.ByteaBinaryLoader)
        cur.adapters.register_loader("bytea", psycopg.types.string.ByteaLoader)
        (stored,) = cur.execute("select v from t").fetchone()
    assert bytes(stored) == amber.dumps([1, "x"])


def test_registered_types_need_no_wrapper(conn: Any) -> None:
    with conn.cursor() as cur:
        register(cur, dump=[dict])
        cur.execute("create temp table t (v bytea)")
        cur.execute("insert into t values (%s)", ({"k": [1, 2]},))
        assert cur.execute("select v from t").fetchone() == ({"k": [1, 2]},)
    # Only that cursor was configured: the connection still reads raw bytea.
    assert isinstance(conn.execute("select v from t").fetchone()[0], bytes)


def test_bytea_that_is_not_amber_is_a_clear_decode_error(conn: Any) -> None:
    register(conn)
    with pytest.raises(amber.DecodeError) as ei:
        conn.execute("select '\\x8004950000'::bytea", binary=True).fetchone()
    assert ei.value.kind == "not_amber"


def test_unregistered_classes_are_refused_on_load(conn: Any) -> None:
    class Secret:
        pass

    amber.register(Secret, name="test.pg.Secret")
    try:
        data = amber.dumps(Secret())
    finally:
        amber.unregister(Secret)
    register(conn)
    with pytest.raises(amber.DecodeError) as ei:
        conn.execute("select %b::bytea", (data,), binary=True).fetchone()
    assert ei.value.kind == "refused"


def test_store_is_a_mapping_inside_the_callers_transaction(conn: Any) -> None:
    store = Store(conn, "objects")
    store["a"] = VALUE
    store.put("b", [1, 2])
    store["b"] = "replaced"
    assert_exact(store["a"], VALUE)
    assert store["b"] == "replaced" and store.get("zz") is None
    assert "a" in store and "zz" not in store and 1 not in store
    assert len(store) == 2 and list(store) == ["a", "b"]
    assert store.delete("b") and not store.delete("b")
    with pytest.raises(KeyError):
        del store["b"]
    with pytest.raises(KeyError):
        store["b"]
    conn.rollback()  # nothing was committed: the table itself is gone
    assert conn.execute("select to_regclass('objects')").fetchone() == (None,)


def test_store_many(conn: Any) -> None:
    store = Store(conn, "objects")
    store.put_many({f"k{i}": {"i": i, "sq": i * i} for i in range(2500)})
    got = store.get_many(["k5", "missing", "k2499", "k5"])
    assert got == {"k5": {"i": 5, "sq": 25}, "k2499": {"i": 2499, "sq": 2499**2}}
    assert len(store) == 2500 and store.get_many([]) == {}
    store.put_many([("k5", "new")])
    assert store["k5"] == "new"


def test_a_failed_batch_loses_nothing(conn: Any) -> None:
    store = Store(conn, "objects")
    store.put_many({"a": 1, "b": 2})
    # An unencodable value fails before anything is sent.
    with pytest.raises(amber.EncodeError):
        store.put_many({"a": 10, "c": object()})
    # A failure inside the server rolls back the whole batch, and the transaction goes on.
    conn.execute(
        "create function reject_c() returns trigger language plpgsql as "
        "$$ begin if new.key = 'c' then raise exception 'no c'; end if; return new; end $$"
    )
    conn.execute(
        "create trigger reject_c before insert on objects for each row execute function reject_c()"
    )
    with pytest.raises(psycopg.errors.RaiseException):
        store.put_many({"a": 10, "b": 20, "c": 30})
    assert store.get_many(["a", "b", "c"]) == {"a": 1, "b": 2}


def test_names_are_quoted_as_identifiers(conn: Any) -> None:
    evil = 'x"; drop table victims; --'
    conn.execute("create table victims (id int)")
    store = Store(conn, evil)
    store["k"] = 1
    assert store["k"] == 1
    assert conn.execute("select to_regclass('victims')").fetchone() == ("victims",)
    conn.execute("create schema s1")
    qualified = Store(conn, ("s1", "objs"))
    qualified["k"] = 2
    assert conn.execute(
        sql.SQL("select count(*) from {}").format(sql.Identifier("s1", "objs"))
    ).fetchone() == (1,)
    with pytest.raises(ValueError):
        Store(conn, ())
    with pytest.raises(TypeError):
        store[1] = 2  # type: ignore[index]


def test_concurrent_stores_on_their_own_connections(pg_server: Any) -> None:
    with pg_server.connect(autocommit=True) as c:
        c.execute("drop table if exists load_test")
        Store(c, "load_test")
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        try:
            with pg_server.connect() as c:
                store = Store(c, "load_test", create=False)
                for i in range(100):
                    key = f"w{n}-{i}"
                    store[key] = {"n": n, "i": i, "payload": list(range(i))}
                    if i % 10 == 9:
                        c.commit()
                    if i % 7 == 0:
                        store.put_many({f"{key}-m{j}": j for j in range(5)})
                    assert store[key]["i"] == i
                c.commit()
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    with pg_server.connect() as c:
        store = Store(c, "load_test", create=False)
        assert len(store) == 4 * (100 + 15 * 5)
        for n in range(4):
            for i in range(100):
                assert store[f"w{n}-{i}"] == {"n": n, "i": i, "payload": list(range(i))}


def test_fetch_and_copy_out_decode_amber_bytea_where_register_put_the_loader(conn: Any) -> None:
    """After `register(conn)`, `fetch` and `copy_out` read bytea as the connection's cursors
    do (amber frames, decoded in Rust as the result is read); without it, as bytes."""
    from amber.pg import copy_out, fetch

    conn.execute("create temp table t (id int, v bytea, raw bytea)")
    values = [VALUE, [1, "x"], None, {"n": {"deep": (1, 2)}}]
    with conn.cursor() as cur:
        cur.executemany(
            "insert into t values (%s, %b, %b)",
            [(i, None if v is None else amber.dumps(v), None) for i, v in enumerate(values)],
        )
    plain = fetch(conn, "select v from t order by id")
    assert plain[0][0] == amber.dumps(VALUE) and plain[2] == (None,)
    register(conn)
    for read in (fetch, copy_out):
        rows = read(conn, "select id, v, raw from t order by id")
        assert [r[0] for r in rows] == [0, 1, 2, 3]
        for (_, got, raw), want in zip(rows, values, strict=True):
            assert raw is None
            if want is None:
                assert got is None
            else:
                assert_exact(got, want)
        assert rows[0][1] is not rows[1][1]
    conn.execute("insert into t values (9, '\\x8004950000'::bytea)")
    with pytest.raises(amber.DecodeError) as ei:
        fetch(conn, "select v from t order by id")
    assert ei.value.path == "$[4].v" and "row 4, column 'v'" in str(ei.value)
    assert isinstance(ei.value.__cause__, amber.DecodeError)


def test_store_get_many_decodes_in_rust_and_keeps_order(conn: Any) -> None:
    store = Store(conn, "objs")
    store.put_many({f"k{i}": {"i": i, "v": [i] * (i % 4)} for i in range(2_000)})
    got = store.get_many([f"k{i}" for i in range(1_999, -1, -7)] + ["missing"])
    assert list(got) == [f"k{i}" for i in range(1_999, -1, -7)]
    assert all(got[f"k{i}"] == {"i": i, "v": [i] * (i % 4)} for i in range(1_999, -1, -7))
    with pytest.raises(amber.EncodeError):
        store.get_many(["nul\x00key"])
    assert store.get_many([]) == {} and store.get_many(["k1", "k1"]) == {"k1": {"i": 1, "v": [1]}}


@pytest.mark.parametrize("registered", [False, True])
def test_every_store_method_on_plain_and_registered_connections(
    conn: Any, registered: bool
) -> None:
    """What `register(conn)` does to the connection's cursors changes nothing in a Store: its
    values are read as amber frames in every method, and bytes come back as bytes."""
    if registered:
        register(conn, dump=[dict])
    store = Store(conn, "objects")
    blob = amber.dumps({"inner": 1})  # bytes that happen to be an amber frame
    store["v"] = VALUE
    store["blob"] = blob
    store.put("b2", b"\x00raw")
    store.put_many({"m1": {"x": 1}, "m2": [blob]})
    assert_exact(store["v"], VALUE)
    assert store["blob"] == blob and type(store["blob"]) is bytes
    assert store.get("b2") == b"\x00raw" and store.get("zz", 5) == 5
    assert store.get_many(["blob", "m2", "zz"]) == {"blob": blob, "m2": [blob]}
    assert "m1" in store and "zz" not in store and len(store) == 5
    assert list(store) == ["b2", "blob", "m1", "m2", "v"]
    assert dict(store.items())["m1"] == {"x": 1}
    assert store.delete("m1") and not store.delete("m1")
    del store["m2"]
    assert store.pop("b2") == b"\x00raw"
    store.clear()
    assert len(store) == 0
    # What the table holds is amber bytes, whichever connection wrote it.
    store["k"] = [1, 2]
    with conn.cursor() as cur:
        cur.adapters.register_loader("bytea", psycopg.types.string.ByteaBinaryLoader)
        cur.adapters.register_loader("bytea", psycopg.types.string.ByteaLoader)
        (raw,) = cur.execute("select value from objects where key = 'k'").fetchone()
    assert bytes(raw) == amber.dumps([1, 2])


def test_amber_values_adapt_without_register(pg_server: Any) -> None:
    """`Amber(value)` goes as amber bytea on any connection made after amber.pg is imported,
    and nothing else those connections send or read changes."""
    with pg_server.connect() as c:
        c.execute("create temp table t (v bytea)")
        c.execute("insert into t values (%s), (%s)", (Amber({"a": {1}}), b"plain"))
        rows = [bytes(r[0]) for r in c.execute("select v from t").fetchall()]
        assert rows == [amber.dumps({"a": {1}}), b"plain"]
        assert c.execute("select %s::text", ({"x": 1}.__class__.__name__,)).fetchone() == ("dict",)
        with pytest.raises(psycopg.ProgrammingError):
            c.execute("select %s", (object(),))
        # The dumper serves the class, not the type: psycopg's binary COPY of bytea (which looks
        # its dumper up by OID) still writes raw bytes as they are.
        assert not issubclass(
            psycopg.adapters.get_dumper_by_oid(BYTEA_OID, pq.Format.BINARY), AmberDumper
        )
        with c.cursor(binary=True) as cur, cur.copy("copy t from stdin (format binary)") as cp:
            cp.set_types(["bytea"])
            cp.write_row([b"\r!\xd7"])
        assert bytes(c.execute("select v from t offset 2").fetchone()[0]) == b"\r!\xd7"


def test_same_kind_and_a_hint_for_non_amber_bytes_on_every_path(conn: Any) -> None:
    from amber.pg import copy_out, fetch

    conn.execute("create temp table t (key text primary key, value bytea not null)")
    conn.execute("insert into t values ('k', 'not amber')")
    register(conn)
    paths: dict[str, Callable[[], Any]] = {
        "cursor": lambda: conn.execute("select value from t").fetchone(),
        "text cursor": lambda: conn.execute("select value from t", binary=False).fetchone(),
        "fetch": lambda: fetch(conn, "select value from t"),
        "copy_out": lambda: copy_out(conn, "select value from t"),
        "columns": lambda: fetch(conn, "select value from t", into="columns"),
    }
    for label, read in paths.items():
        with pytest.raises(amber.DecodeError) as ei:
            read()
        assert ei.value.kind == "not_amber", label
        assert "amber.pg.register" in str(ei.value) and "raw bytes" in str(ei.value), label
        if label in ("fetch", "copy_out", "columns"):
            assert ei.value.path == "$[0].value" and "row 0, column 'value'" in str(ei.value)
    store = Store(conn, "t", create=False)
    for read in (lambda: store["k"], lambda: store.get_many(["k"])):
        with pytest.raises(amber.DecodeError) as ei:
            read()
        assert ei.value.kind == "not_amber" and ei.value.path == '$["k"]'
        assert str(ei.value).startswith("key 'k' of table \"t\": not amber data")
        assert "register" not in str(ei.value)  # a Store reads amber on every connection

    # An amber frame naming an unregistered class: refused, with the codec's kind.
    class Secret:
        pass

    amber.register(Secret, name="test.pg.Secret2")
    try:
        data = amber.dumps(Secret())
    finally:
        amber.unregister(Secret)
    conn.execute("insert into t values ('s', %b)", (data,))
    with pytest.raises(amber.DecodeError) as ei:
        fetch(conn, "select value from t where key = 's'")
    assert ei.value.kind == "refused"
    with pytest.raises(amber.DecodeError) as ei:
        store["s"]
    assert ei.value.kind == "refused"


UNKNOWN_TYPES = [
    "12.34::money",
    "B'1010'::bit(4)",
    "'08:00:2b:01:02:03'::macaddr",
    "'a fat cat'::tsvector",
    "'(1,2)'::point",
    "'ok'::mood",
    "array['1.5'::money]",
]


@pytest.mark.parametrize("expr", UNKNOWN_TYPES)
def test_types_nobody_reads_are_refused_not_handed_over_raw(conn: Any, expr: str) -> None:
    from amber.pg import copy_out, fetch

    conn.execute("create type mood as enum ('ok')")
    for read in (fetch, copy_out):
        for into in ("rows", "arrow"):
            with pytest.raises(amber.DecodeError) as ei:
                read(conn, f"select 1 as n, {expr} as odd", into=into)
            assert ei.value.kind == "unsupported" and ei.value.path == "$[*].odd"
            assert "column 'odd'" in str(ei.value) and "cast it in SQL" in str(ei.value)
        # Cast in SQL, the value reads as text, as psycopg's text cursors give it.
        (want,) = conn.execute(f"select ({expr})::text").fetchone()
        assert read(conn, f"select ({expr})::text as odd") == [(want,)]
    assert conn.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS


QUERIES = [
    "select 1 as x -- the answer\n",
    "select 1 as x -- the answer",
    "select 1 as x; -- done",
    "select 1 as x /* a /* nested */ comment */ ;",
    "  select 1 as x ;  ; ",
    "select '--' || ';' as x -- quoted text is not a comment",
    "select $$ ) -- $$ as x",
    "select $tag$ /* $tag$ as x",
    'select 1 as "x--y" -- and a comment',
    "select E'\\' -- ' as x -- an escaped quote",
    "/* leading */ select 1 as x",
]


def test_copy_out_takes_the_query_text_fetch_takes(conn: Any) -> None:
    from amber.pg import copy_out, fetch

    for q in QUERIES:
        assert copy_out(conn, q) == fetch(conn, q), q
        assert copy_out(conn, q.encode()) == fetch(conn, q), q
        assert copy_out(conn, sql.SQL(q)) == fetch(conn, q), q
    assert conn.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS


def test_into_is_keyword_only(conn: Any) -> None:
    from amber.pg import copy_out, fetch

    with pytest.raises(TypeError, match=r"copy_out takes no parameters \(COPY has none\); use"):
        copy_out(conn, "select %s", [1])  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="keyword-only"):
        copy_out(conn, "select 1", "arrow")  # type: ignore[call-overload]
    with pytest.raises(TypeError):
        fetch(conn, "select 1", None, "arrow")  # type: ignore[call-overload]
    assert fetch(conn, "select %s::int", [1], into="columns")["int4"].tolist() == [1]


def test_value_errors_say_the_value_once(conn: Any) -> None:
    from amber.pg import copy_in

    conn.execute("create temp table t (small int2, s text)")
    with pytest.raises(amber.EncodeError) as ei:
        copy_in(conn, "t", [(1, "a"), (70000, "b")])
    assert str(ei.value) == "row 1, column 'small' (int2): 70000 is out of range for int2"
    with pytest.raises(amber.EncodeError) as ei:
        copy_in(conn, "t", [("x", "a")])
    assert (
        str(ei.value)
        == "row 0, column 'small' (int2): cannot write a value of type str as int2: 'x'"
    )


def test_the_readme_postgresql_block_runs_as_written(
    pg_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's PostgreSQL example, pasted on a fresh database (its `testing.start()`
    given this suite's server through AMBER_TEST_DSN, on a database of its own)."""
    import pathlib
    import re

    readme = (pathlib.Path(__file__).parents[2] / "README.md").read_text()
    block = re.search(r"## PostgreSQL\n\n```python\n(.*?)```", readme, re.S)
    assert block is not None
    db = f"readme_{threading.get_ident()}"
    with pg_server.connect(autocommit=True) as admin:
        admin.execute(sql.SQL("drop database if exists {}").format(sql.Identifier(db)))
        admin.execute(sql.SQL("create database {}").format(sql.Identifier(db)))
    try:
        dsn = psycopg.conninfo.make_conninfo(pg_server.dsn, dbname=db)
        monkeypatch.setenv("AMBER_TEST_DSN", dsn)
        scope: dict[str, Any] = {"__name__": "readme"}
        exec(compile(block.group(1), "README.md", "exec"), scope)
        assert scope["fetched"] == ({"auc": 0.91, "seen": {1, 2}},)
        assert scope["rows"] == [(1, 9.9)] and scope["table"].num_rows == 2
        with psycopg.connect(dsn) as c:
            assert c.execute("select count(*) from objects").fetchone() == (10_000,)
            assert c.execute("select day::date::text from events order by id").fetchall() == [
                ("2026-11-22",),
                ("2026-11-23",),
            ]
    finally:
        with pg_server.connect(autocommit=True) as admin:
            admin.execute(sql.SQL("drop database if exists {}").format(sql.Identifier(db)))
