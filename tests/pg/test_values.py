"""amber.pg's values, exactly, on every connection: text in the connection's client encoding
(UTF8, LATIN1, WIN1252, EUC_JP and SQL_ASCII), "char", integers written from any number (never
through a float), floats that do not fit, rows that are not sequences, json arrays, bytea[] on
a registered connection, and intervals and timestamps against psycopg's loaders. psycopg's
binary dumpers and loaders on the same connection are the oracle; every write goes through
rows, pandas, polars, Arrow and a dict of columns, and every read through fetch and copy_out."""

from __future__ import annotations

import collections
import datetime as dt
import decimal
import fractions
import types
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
import polars as pl
import psycopg
import pyarrow as pa
import pytest
from psycopg import conninfo
from psycopg.types.datetime import IntervalBinaryLoader
from psycopg.types.json import Json, Jsonb

import amber
import amber.pg
from amber import _native
from amber.pg import copy_in, copy_out, fetch

D = decimal.Decimal

#: Per client encoding: text it holds, and text it does not.
COMMON = ["", "plain ascii", "tab\tnew\nline", "quote ' \" \\ back", "x" * 3000]
ENCODINGS: dict[str, tuple[list[str], list[str]]] = {
    "UTF8": ([*COMMON, "café", "€uro", "日本語", "emoji 😀", "𝔘nicode", "\xa0nbsp"], []),  # noqa: RUF001
    "LATIN1": ([*COMMON, "café", "Ñandú", "ÿ", "\xa0nbsp", "×÷", "\x85\x9f"], ["€", "日本"]),  # noqa: RUF001
    "WIN1252": ([*COMMON, "café", "€uro", "“quotes”", "Œuvre", "ÿ"], ["日本", "\u0100"]),
    "EUC_JP": ([*COMMON, "日本語", "ひらがな", "カタカナ", "漢字テスト"], ["😀", "€"]),
}
WAYS = ["rows", "pandas", "polars", "arrow", "dict"]


def _frame(way: str, names: list[str], rows: list[tuple[Any, ...]]) -> Any:
    cols = {n: [r[i] for r in rows] for i, n in enumerate(names)}
    if way == "rows":
        return rows
    if way == "dict":
        return cols
    if way == "pandas":
        return pd.DataFrame(cols)
    if way == "polars":
        return pl.DataFrame(cols)
    return pa.table(cols)


@pytest.fixture(scope="module")
def sql_ascii_dsn(pg_server: Any) -> str:
    """A database whose encoding is SQL_ASCII (the server keeps any bytes in its text)."""
    with pg_server.connect(autocommit=True) as c:
        if not c.execute("select 1 from pg_database where datname = 'amber_sql_ascii'").fetchone():
            c.execute(
                "create database amber_sql_ascii encoding 'SQL_ASCII' template template0 locale 'C'"
            )
    params = conninfo.conninfo_to_dict(pg_server.dsn)
    params["dbname"] = "amber_sql_ascii"
    return conninfo.make_conninfo(**params)


@pytest.fixture
def latin1(pg_server: Any) -> Iterator[psycopg.Connection[Any]]:
    with pg_server.connect(autocommit=True) as c:
        c.execute("set client_encoding to 'LATIN1'")
        yield c


def _connect(pg_server: Any, encoding: str) -> psycopg.Connection[Any]:
    c = pg_server.connect(autocommit=True)
    c.execute(f"set client_encoding to '{encoding}'")
    assert c.info.encoding == psycopg._encodings.pg2pyenc(encoding.encode())
    return c


# --- text in the client encoding ------------------------------------------------------------


@pytest.mark.parametrize("encoding", list(ENCODINGS))
@pytest.mark.parametrize("way", WAYS)
def test_text_is_written_in_the_client_encoding(pg_server: Any, encoding: str, way: str) -> None:
    values = ENCODINGS[encoding][0]
    rows = [(s, s, s[:60], s[:20]) for s in values]
    with _connect(pg_server, encoding) as c, pg_server.connect(autocommit=True) as utf8:
        c.execute("create temp table t (i serial, t text, v varchar, b text, n name)")
        names = ["t", "v", "b", "n"]
        assert copy_in(c, "t", _frame(way, names, rows), columns=names) == len(rows)
        # What psycopg reads on this connection, and what a UTF-8 connection sees stored.
        got = c.cursor(binary=True).execute("select t, v, b, n from t order by i").fetchall()
        assert got == rows
        c.execute("create table enc_check as select * from t")
        try:
            stored = utf8.execute("select t, v, b, n from enc_check order by i").fetchall()
        finally:
            c.execute("drop table enc_check")
        assert stored == rows


@pytest.mark.parametrize("encoding", list(ENCODINGS))
def test_text_is_read_in_the_client_encoding(pg_server: Any, encoding: str) -> None:
    values = ENCODINGS[encoding][0]
    with _connect(pg_server, encoding) as c:
        c.execute("create temp table t (i int, t text, v varchar(4000), n name, a text[])")
        with c.cursor(binary=True) as cur:
            cur.executemany(
                "insert into t values (%s, %s, %s, %s, %s)",
                [(i, s, s, s[:20], [s, None, s]) for i, s in enumerate(values)],
            )
        query = "select t, v, n, a from t order by i"
        want = c.cursor(binary=True).execute(query).fetchall()
        assert [r[0] for r in want] == values
        assert fetch(c, query) == want
        assert copy_out(c, query) == want
        for reader in (fetch, copy_out):
            table = reader(c, query, into="arrow")
            assert table.column("t").to_pylist() == values
            assert table.column("n").to_pylist() == [s[:20] for s in values]
            assert reader(c, query, into="pandas")["v"].tolist() == values
            assert reader(c, query, into="polars")["a"].to_list() == [r[3] for r in want]
            assert list(reader(c, query, into="columns")["t"]) == values


@pytest.mark.parametrize("encoding", list(ENCODINGS))
def test_json_text_crosses_in_the_client_encoding(pg_server: Any, encoding: str) -> None:
    values: list[Any] = [{"k": s} for s in ENCODINGS[encoding][0]] + [[1, "ü" * 0], None, 3.5]
    rows = [(i, v, v) for i, v in enumerate(values)]
    with _connect(pg_server, encoding) as c, pg_server.connect(autocommit=True) as utf8:
        c.execute("create table js (i int, j json, b jsonb)")
        try:
            copy_in(c, "js", rows)
            stored = (
                utf8.cursor(binary=True).execute("select i, j, b from js order by i").fetchall()
            )
            assert stored == [(i, v, v) for i, v in enumerate(values)]
            # JSON strings as Arrow text, read with their characters.
            c.execute("truncate js")
            texts = [f'{{"k": "{s}"}}' for s in ENCODINGS[encoding][0] if '"' not in s]
            texts = [t for t in texts if "\\" not in t and "\n" not in t and "\t" not in t]
            copy_in(c, "js", pa.table({"i": range(len(texts)), "j": texts, "b": texts}))
            query = "select j, b from js order by i"
            want = utf8.cursor(binary=True).execute(query).fetchall()
            assert fetch(c, query) == want
            assert copy_out(c, query) == want
            arrow = copy_out(c, query, into="arrow").column("b").to_pylist()
            assert arrow == [r[0] for r in utf8.execute("select b::text from js order by i")]
        finally:
            c.execute("drop table js")


@pytest.mark.parametrize("encoding", [e for e in ENCODINGS if ENCODINGS[e][1]])
@pytest.mark.parametrize("way", WAYS)
def test_characters_the_encoding_lacks_are_refused(pg_server: Any, encoding: str, way: str) -> None:
    good = ENCODINGS[encoding][0][5]
    with _connect(pg_server, encoding) as c:
        c.execute("create temp table t (a text, b text)")
        for bad in ENCODINGS[encoding][1]:
            with pytest.raises(UnicodeEncodeError):  # psycopg's dumper refuses it too
                c.cursor(binary=True).execute("select %s::text", [bad])
            rows = [(good, good), (good, f"x{bad}y")]
            with pytest.raises(amber.EncodeError) as e:
                copy_in(c, "t", _frame(way, ["a", "b"], rows))
            assert e.value.path == "$[1].b"
            assert e.value.kind == "invalid_value"
            assert encoding in str(e.value) and repr(bad[0]) in str(e.value)
            assert c.execute("select count(*) from t").fetchone() == (0,)
        with pytest.raises(amber.EncodeError, match=encoding):
            _native.pg_send(1009, ["ok", ENCODINGS[encoding][1][0]], c.info.encoding)


def test_store_keys_in_the_client_encoding(latin1: psycopg.Connection[Any]) -> None:
    store = amber.pg.Store(latin1, "enc_store")
    try:
        keys = ["café", "Ñ", "plain"]
        for i, k in enumerate(keys):
            store[k] = {"i": i}
        assert store.get_many([*keys, "absent"]) == {k: {"i": i} for i, k in enumerate(keys)}
        assert sorted(store) == sorted(keys)
    finally:
        latin1.execute("drop table enc_store")


# --- SQL_ASCII: text is bytes, as psycopg reads it -------------------------------------------


def test_sql_ascii_reads_bytes_and_writes_them_back(sql_ascii_dsn: str) -> None:
    raw = [b"", b"ascii", b"caf\xc3\xa9", b"caf\xe9", b"\xff\xfe\x80", bytes(range(1, 256))]
    with psycopg.connect(sql_ascii_dsn, autocommit=True) as c:
        assert c.info.encoding == "ascii"
        c.execute("create temp table s (i int, t text, n name, c text, a text[], j jsonb)")
        # The server keeps any bytes as SQL_ASCII text.
        for i, r in enumerate(raw):
            c.execute(
                "insert into s (i, t, n, c, a) values (%s, convert_from(%s, 'SQL_ASCII'), "
                "'n', 'x', array[convert_from(%s, 'SQL_ASCII')])",
                (i, r, r),
            )
        query = "select t, n, c, a from s order by i"
        want = c.cursor(binary=True).execute(query).fetchall()
        assert [r[0] for r in want] == raw  # psycopg: bytes
        assert fetch(c, query) == want
        assert copy_out(c, query) == want
        table = copy_out(c, "select t from s order by i", into="arrow")
        assert table.column("t").type == pa.large_binary()
        assert table.column("t").to_pylist() == raw
        table = fetch(c, "select t, n from s order by i", into="polars")
        assert table["t"].to_list() == raw
        # What amber read goes back exactly; a str goes as UTF-8, as psycopg sends it.
        c.execute("create temp table s2 (t text, n name, c text, a text[])")
        copy_in(c, "s2", fetch(c, query))
        assert c.cursor(binary=True).execute("select t, n, c, a from s2").fetchall() == want
        c.execute("truncate s2")
        copy_in(c, "s2", [("café", "ñ", "日本", ["ü", None])])
        got = c.execute("select t::bytea, n::text::bytea, a from s2").fetchone()
        assert got[:2] == ("café".encode(), "ñ".encode())
        assert got[2] == ["ü".encode(), None]
        for way in WAYS:
            c.execute("truncate s2")
            copy_in(c, "s2", _frame(way, ["t"], [("é",), ("x",)]), columns=["t"])
            assert c.execute("select t::bytea from s2").fetchall() == [(b"\xc3\xa9",), (b"x",)]
        # json is parsed from its bytes, as psycopg's loader does.
        c.execute("update s set j = convert_from(%s, 'SQL_ASCII')::jsonb", ['{"k": "é"}'.encode()])
        assert fetch(c, "select j from s limit 1") == [({"k": "é"},)]
        store = amber.pg.Store(c, "ascii_store")
        store["ké"] = 1
        assert store.get_many(["ké"]) == {"ké": 1}


# --- "char" ---------------------------------------------------------------------------------


@pytest.mark.parametrize("encoding", ["UTF8", "LATIN1", "WIN1252", "EUC_JP"])
def test_char_every_byte(pg_server: Any, encoding: str) -> None:
    with _connect(pg_server, encoding) as c:
        c.execute(
            "create temp table ch as select i, (case when i > 127 then i - 256 else i end)"
            '::int4::"char" as v from generate_series(0, 255) i'
        )
        query = "select v from ch order by i"
        binary = c.cursor(binary=True)
        text = c.cursor()
        want = []
        for i in range(256):
            one = f"select v from ch where i = {i}"
            try:
                want.append(binary.execute(one).fetchone()[0])
            except UnicodeDecodeError:
                # psycopg's binary loader fails here: amber gives PostgreSQL's own text form,
                # as psycopg's text loader reads it.
                assert i >= 0x80
                want.append(text.execute(one).fetchone()[0])
        assert want[0] == "\x00" and want[65] == "A"
        assert [r[0] for r in fetch(c, query)] == want
        assert [r[0] for r in copy_out(c, query)] == want
        assert copy_out(c, query, into="arrow").column("v").to_pylist() == want
        c.execute('create temp table ch2 (i int, v "char")')
        for way in WAYS:
            c.execute("truncate ch2")
            copy_in(c, "ch2", _frame(way, ["i", "v"], list(enumerate(want))))
            back = c.execute("select i, v::int4 from ch2 order by i").fetchall()
            assert back == [(i, i - 256 if i > 127 else i) for i in range(256)]
        with pytest.raises(amber.EncodeError, match="one character"):
            copy_in(c, "ch2", [(1, "ab")])
        if encoding in ("UTF8", "EUC_JP"):
            with pytest.raises(amber.EncodeError, match="bytes in the client encoding"):
                copy_in(c, "ch2", [(1, "é" if encoding == "UTF8" else "日")])


def test_char_on_sql_ascii_is_a_byte(sql_ascii_dsn: str) -> None:
    with psycopg.connect(sql_ascii_dsn, autocommit=True) as c:
        c.execute(
            "create temp table ch as select i, (case when i > 127 then i - 256 else i end)"
            '::int4::"char" as v from generate_series(0, 255) i'
        )
        want = [r[0] for r in c.cursor(binary=True).execute("select v from ch order by i")]
        assert want == [bytes([i]) for i in range(256)]
        assert [r[0] for r in fetch(c, "select v from ch order by i")] == want
        c.execute('create temp table ch2 (v "char")')
        copy_in(c, "ch2", fetch(c, "select v from ch order by i"))
        assert [r[0] for r in c.execute("select v::int4 from ch2")] == [
            i - 256 if i > 127 else i for i in range(256)
        ]


# --- integers, exactly ----------------------------------------------------------------------

INT_LIMITS = {"int2": 2**15, "int4": 2**31, "int8": 2**63}


def _ints_of(kind: str) -> list[Any]:
    lo, hi = -INT_LIMITS[kind], INT_LIMITS[kind] - 1
    vals = [lo, hi, 0, -1, 7, hi - 1]
    return [
        D(lo),
        D(hi),
        D("0E+3"),
        D("-1.000"),
        fractions.Fraction(14, 2),
        np.float32(hi if kind == "int2" else 7.0),
        *vals,
    ]


@pytest.mark.parametrize("kind", ["int2", "int4", "int8"])
def test_numbers_into_integers_exactly(conn: psycopg.Connection[Any], kind: str) -> None:
    conn.execute(f"create temp table n (i serial, v {kind})")
    values = _ints_of(kind)
    want = [int(v) for v in values]
    copy_in(conn, "n", [(v,) for v in values], columns=["v"])
    # psycopg's int dumper for the same integers is the oracle.
    conn.execute(f"create temp table o (i serial, v {kind})")
    with conn.cursor(binary=True) as cur:
        cur.executemany("insert into o (v) values (%s)", [(w,) for w in want])
    got = conn.execute("select v from n order by i").fetchall()
    assert got == conn.execute("select v from o order by i").fetchall()
    assert [g[0] for g in got] == want
    # The same through a pandas object column, a dict of lists and pg_send.
    for data in ({"v": values}, pd.DataFrame({"v": pd.Series(values, dtype=object)})):
        conn.execute("truncate n")
        copy_in(conn, "n", data)
        assert [r[0] for r in conn.execute("select v from n order by i")] == want
    oid, width = {"int2": (21, 2), "int4": (23, 4), "int8": (20, 8)}[kind]
    for v, w in zip(values, want, strict=True):
        assert _native.pg_send(oid, v) == w.to_bytes(width, "big", signed=True)


@pytest.mark.parametrize(
    ("kind", "value", "err", "text"),
    [
        ("int2", D(70000), "out_of_range", "Decimal('70000') is out of range for int2"),
        ("int2", 70000, "out_of_range", "70000 is out of range for int2"),
        ("int8", D("9223372036854775808"), "out_of_range", "is out of range for int8"),
        ("int8", D("1e400"), "out_of_range", "Decimal('1E+400') is out of range for int8"),
        ("int8", fractions.Fraction(10**400), "out_of_range", "is out of range for int8"),
        ("int8", 2.0**70, "out_of_range", "is out of range for int8"),
        ("int4", D("1.5"), "invalid_value", "Decimal('1.5') is not an integer"),
        ("int4", fractions.Fraction(1, 3), "invalid_value", "Fraction(1, 3) is not an integer"),
        ("int4", D("NaN"), "invalid_value", "Decimal('NaN') is not an integer"),
        ("int4", D("-Infinity"), "invalid_value", "is not an integer"),
        ("int4", np.float32(0.5), "invalid_value", "is not an integer"),
        ("int4", float("nan"), "invalid_value", "nan is not an integer"),
    ],
)
def test_numbers_that_are_no_such_integer_are_refused(
    conn: psycopg.Connection[Any], kind: str, value: Any, err: str, text: str
) -> None:
    conn.execute(f"create temp table n (v {kind})")
    frames: list[Any] = [[(value,)], {"v": [value]}]
    if not (isinstance(value, float) and np.isnan(value)):  # NaN is NULL in pandas
        frames.append(pd.DataFrame({"v": pd.Series([value], dtype=object)}))
    for data in frames:
        with pytest.raises(amber.EncodeError) as e:
            copy_in(conn, "n", data)
        assert e.value.kind == err and e.value.path == "$[0].v"
        message = str(e.value)
        assert text in message
        # The value is named once.
        assert message.count(text) == 1 and message.count("is out of range") <= 1
    assert conn.execute("select count(*) from n").fetchone() == (0,)


def test_arrow_decimals_into_integers(conn: psycopg.Connection[Any]) -> None:
    conn.execute("create temp table n (a int2, b int8, c numeric, d float8, e float4)")
    good = [D("12.00"), D("-32768.00"), D("32767.00"), None]
    big = [D("123456789012345678.00"), D("-9223372036854775808.00"), D("0.00"), None]
    exact = [D("0.10"), D("12345678901234.57"), D("-0.01"), None]
    t = pa.table(
        {
            "a": pa.array(good, pa.decimal128(7, 2)),
            "b": pa.array(big, pa.decimal128(21, 2)),
            "c": pa.array(exact, pa.decimal128(16, 2)),
            "d": pa.array(exact, pa.decimal128(16, 2)),
            "e": pa.array(exact, pa.decimal128(16, 2)),
        }
    )
    copy_in(conn, "n", t)
    got = conn.cursor(binary=True).execute("select * from n").fetchall()
    floats = [None if x is None else float(x) for x in exact]
    f4 = [None if x is None else float(np.float32(x)) for x in exact]  # correctly rounded
    assert got == [
        (None if a is None else int(a), None if b is None else int(b), c, d, e)
        for a, b, c, d, e in zip(good, big, exact, floats, f4, strict=True)
    ]
    conn.execute("truncate n")
    pl_frame = pl.DataFrame({"b": pl.Series(big[:3], dtype=pl.Decimal(21, 2))})
    copy_in(conn, "n", pl_frame)
    assert [r[0] for r in conn.execute("select b from n")] == [int(x) for x in big[:3]]
    for col, arr, err, text in [
        ("a", pa.array([D("1.50")], pa.decimal128(7, 2)), "invalid_value", "1.50 is not"),
        ("a", pa.array([D("32768.00")], pa.decimal128(7, 2)), "out_of_range", "32768.00 is out"),
    ]:
        with pytest.raises(amber.EncodeError) as e:
            copy_in(conn, "n", pa.table({col: arr}))
        assert e.value.kind == err and text in str(e.value) and e.value.path == f"$[0].{col}"
        assert str(e.value).count(text) == 1


# --- floats that do not fit -----------------------------------------------------------------


def test_finite_floats_beyond_the_type_are_refused(conn: psycopg.Connection[Any]) -> None:
    conn.execute("create temp table f (f4 float4, f8 float8)")
    cases: list[tuple[str, Any]] = [
        ("f4", [(1e39, None)]),
        ("f4", [(-3.5e38, None)]),
        ("f4", [(D("1e39"), None)]),
        ("f4", {"f4": np.array([1e300])}),
        ("f4", {"f4": [np.float64(1e39)]}),
        ("f4", pd.DataFrame({"f4": [1.0, 1e39]})),
        ("f4", pl.DataFrame({"f4": [1e39]})),
        ("f4", pa.table({"f4": pa.array([-1e39])})),
        ("f8", [(None, D("1e400"))]),
        ("f8", [(None, D("-1e400"))]),
        ("f8", [(None, 10**400)]),
        ("f8", [(None, fractions.Fraction(10**400))]),
    ]
    for col, data in cases:
        with pytest.raises(amber.EncodeError) as e:
            copy_in(conn, "f", data)
        assert e.value.kind == "out_of_range", (col, data)
        assert e.value.path.endswith(f".{col}") and "is out of range for float" in str(e.value)
        assert conn.execute("select count(*) from f").fetchone() == (0,)
    # The server refuses them too.
    for text in ("1e39", "-3.5e38"):
        with pytest.raises(psycopg.errors.NumericValueOutOfRange), conn.transaction():
            conn.execute(f"select '{text}'::float4")
    # What fits, and the infinities and NaN, stay exactly as they are.
    keep = [3.4028234663852886e38, -3.4028234663852886e38, 1e-45, float("inf"), float("-inf")]
    copy_in(conn, "f", [(v, v) for v in keep] + [(D("Infinity"), D("-Infinity"))])
    copy_in(conn, "f", pa.table({"f4": pa.array(keep), "f8": pa.array(keep)}))
    copy_in(conn, "f", [(float("nan"), D("NaN"))])
    got = conn.cursor(binary=True).execute("select f4, f8 from f").fetchall()
    assert got[:5] == [(float(np.float32(v)), v) for v in keep]
    assert got[5] == (float("inf"), float("-inf"))
    assert got[6:11] == got[:5]
    assert all(np.isnan(x) for x in got[11])


# --- rows are sequences ---------------------------------------------------------------------


def test_rows_that_are_not_sequences_are_refused(conn: psycopg.Connection[Any]) -> None:
    conn.execute("create temp table p (name text, city text)")
    bad: list[Any] = [
        {"name": "Ada", "city": "London"},
        collections.OrderedDict(name="Ada", city="London"),
        types.MappingProxyType({"name": "Ada", "city": "London"}),
        {"Ada", "London"},
        frozenset({"Ada", "London"}),
        "ab",
        b"ab",
        bytearray(b"ab"),
        memoryview(b"ab"),
    ]
    for row in bad:
        with pytest.raises(amber.EncodeError) as e:
            copy_in(conn, "p", [("Bob", "Paris"), row])
        assert e.value.kind == "type_mismatch" and e.value.path == "$[1]"
        assert "row 1 is a" in str(e.value) and "not a sequence" in str(e.value)
    assert conn.execute("select count(*) from p").fetchone() == (0,)
    person = collections.namedtuple("person", "name city")
    ok: list[Any] = [
        ("Ada", "London"),
        ["Bob", "Paris"],
        person("Cy", "Rome"),
        np.array(["Di", "Oslo"], dtype=object),
        iter(["Ed", "Kyiv"]),
    ]
    assert copy_in(conn, "p", ok) == 5
    assert conn.execute("select name, city from p").fetchall() == [
        ("Ada", "London"),
        ("Bob", "Paris"),
        ("Cy", "Rome"),
        ("Di", "Oslo"),
        ("Ed", "Kyiv"),
    ]


# --- json arrays ----------------------------------------------------------------------------

JSON_ARRAYS: list[list[Any]] = [
    [[1, 2], [3, 4]],
    [[1, [2, [3]]], {"a": [1]}],
    [[], {}, "s", 1.5, True, False],
    [[1, 2], [3]],
    [],
    [["x"]],
]


@pytest.mark.parametrize("kind", ["json", "jsonb"])
def test_json_arrays_round_trip_as_lists_of_json_values(
    conn: psycopg.Connection[Any], kind: str
) -> None:
    conn.execute(f"create temp table a (i int, v {kind}[])")
    conn.execute(f"create temp table b (i int, v {kind}[])")
    wrap = Jsonb if kind == "jsonb" else Json
    with conn.cursor(binary=True) as cur:
        for i, arr in enumerate(JSON_ARRAYS):
            cur.execute("insert into a values (%s, %s)", (i, [wrap(x) for x in arr]))
    query = "select i, v from a order by i"
    want = conn.cursor(binary=True).execute(query).fetchall()
    # psycopg's loader reads each element as its JSON value; so does amber. (A JSON null
    # element is None, as psycopg reads it, and None is written as NULL: not tested here.)
    rows = fetch(conn, query)
    assert rows == copy_out(conn, query)
    assert [r[1] for r in rows] == JSON_ARRAYS
    assert [[x for x in r[1]] for r in want] == JSON_ARRAYS
    for way in ["rows", "dict", "pandas"]:
        conn.execute("truncate b")
        data = rows if way == "rows" else _frame(way, ["i", "v"], rows)
        copy_in(conn, "b", data)
        same = conn.execute(
            "select bool_and(a.v::text = b.v::text and array_ndims(a.v) is not distinct from "
            "array_ndims(b.v)), count(*) from a join b using (i)"
        ).fetchone()
        assert same == (True, len(JSON_ARRAYS))


def test_multidimensional_json_arrays_are_refused(conn: psycopg.Connection[Any]) -> None:
    for kind in ("json", "jsonb"):
        query = f"select array[array['1', '[2]'], array['3', '4']]::{kind}[]"
        for reader in (fetch, copy_out):
            with pytest.raises(amber.DecodeError) as e:
                reader(conn, query)
            assert e.value.kind == "unsupported" and e.value.path is not None
            assert "2-dimensional" in str(e.value)


# --- bytea[] on a registered connection -----------------------------------------------------


def test_registered_bytea_array_reads_as_the_cursors_do(conn: psycopg.Connection[Any]) -> None:
    amber.pg.register(conn)
    conn.execute("create temp table t (i int, v bytea[])")
    values = [[{"a": 1}, None, [1, 2.5]], [], None, [b"raw bytes"]]
    with conn.cursor(binary=True) as cur:
        for i, v in enumerate(values):
            cur.execute(
                "insert into t values (%s, %b::bytea[])",
                (i, None if v is None else [None if x is None else amber.pg.Amber(x) for x in v]),
            )
    query = "select v from t order by i"
    want = [r[0] for r in conn.cursor(binary=True).execute(query)]
    assert want == values
    assert [r[0] for r in fetch(conn, query)] == want
    assert [r[0] for r in copy_out(conn, query)] == want


# --- intervals and timestamps against psycopg's loaders -------------------------------------

INTERVALS = [
    "1 year",
    "-1 year",
    "1 mon",
    "-1 mon",
    "13 mons",
    "-13 mons",
    "11 mons 29 days",
    "1 year 2 mons 3 days 04:05:06.789",
    "-1 year -2 mons +3 days -04:05:06.789",
    "2000000 years",
    "-2000000 years",
    "178000000 years",
    "-178000000 years",
    "2739726 years 1 mon",
    "2739727 years",
    "999999999 days",
    "-999999999 days",
    "1 mon -30 days",
    "1 year -365 days",
    "100 years 1 microsecond",
    "0",
]


def test_intervals_match_psycopg(conn: psycopg.Connection[Any]) -> None:
    # psycopg's interval loader, in Python: its C twin in psycopg_binary computes the days in
    # 32 bits and wraps past 5.8 million years ('178000000 years' reads as 545490560 days).
    class PythonIntervalLoader(IntervalBinaryLoader):
        pass  # (a name of its own, so psycopg does not swap in the C loader)

    oracle = conn.cursor(binary=True)
    oracle.adapters.register_loader("interval", PythonIntervalLoader)
    with pytest.raises(psycopg.DataError):
        oracle.execute("select '178000000 years'::interval").fetchone()
    for text in INTERVALS:
        query = f"select '{text}'::interval"
        try:
            want: Any = oracle.execute(query).fetchone()[0]
        except psycopg.DataError:
            want = None
        for reader in (fetch, copy_out):
            if want is None:
                with pytest.raises(amber.DecodeError) as e:
                    reader(conn, query)
                assert e.value.kind == "out_of_range"
                continue
            assert reader(conn, query) == [(want,)], text
            if abs(want // dt.timedelta(microseconds=1)) < 2**63:
                got = reader(conn, query, into="arrow").column(0).to_pylist()[0]
                assert got == want, text
            else:  # beyond Arrow's duration[us]
                with pytest.raises(amber.DecodeError, match="64-bit"):
                    reader(conn, query, into="arrow")


def test_pandas_extreme_timestamps_are_written_as_themselves(conn: psycopg.Connection[Any]) -> None:
    conn.execute("create temp table ts (i serial, a timestamp, b timestamptz)")
    values = [pd.Timestamp.min, pd.Timestamp.max, pd.Timestamp("1677-09-21 00:12:43.145225")]
    frame = pd.DataFrame({"a": values, "b": [v.tz_localize("UTC") for v in values]})
    copy_in(conn, "ts", frame)
    got = conn.execute("select a::text, b from ts order by i").fetchall()
    assert [g[0] for g in got] == [
        "1677-09-21 00:12:43.145224",
        "2262-04-11 23:47:16.854775",
        "1677-09-21 00:12:43.145225",
    ]
    # amber's own reading of the infinities (in microseconds) still goes back as them.
    conn.execute("truncate ts")
    query = "select 'infinity'::timestamp a, '-infinity'::timestamptz b"
    copy_in(conn, "ts", copy_out(conn, query, into="arrow"))
    copy_in(conn, "ts", copy_out(conn, query, into="pandas"))
    copy_in(
        conn,
        "ts",
        [(dt.datetime.max, dt.datetime.min.replace(tzinfo=dt.timezone.utc))],
        columns=["a", "b"],
    )
    assert (
        conn.execute("select a::text, b::text from ts").fetchall()
        == [("infinity", "-infinity")] * 3
    )
