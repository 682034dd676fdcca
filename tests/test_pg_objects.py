"""amber.pg's objects in bytea, against a real PostgreSQL server: the adapters (`register`,
`Amber`) and the `Store`."""

from __future__ import annotations

import datetime as dt
import decimal
import threading
from typing import Any

import numpy as np
import psycopg
import pytest
from psycopg import sql

import amber
from amber.pg import Amber, Store, register
from helpers import assert_exact

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
