"""Every `into` of `amber.pg.fetch`/`copy_out` gives values exactly or refuses them clearly, and
`copy_in` takes back what amber read: repeated column names, integers with NULLs in pandas,
values a frame cannot hold (time 24:00, dates past year 9999), amber objects and types Arrow has
no type for, and JSON strings from pandas. psycopg's binary loaders and dumpers are the oracle."""

from __future__ import annotations

import datetime as dt
import decimal
import gc
import math
import uuid
from typing import Any

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from psycopg.types.json import Jsonb

import amber
import amber.pg
from amber.pg import copy_in, copy_out, fetch

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

READS = [("fetch", fetch), ("copy_out", copy_out)]


def _same_table(conn: Any, a: str, b: str, cols: str = "*") -> None:
    """Every row of `a` is in `b` and back, compared as text too (so -0, a numeric's scale and
    a timetz's offset count)."""
    q = f"""
        SELECT count(*) FROM (
            (SELECT {cols} FROM {a} EXCEPT ALL SELECT {cols} FROM {b})
            UNION ALL
            (SELECT {cols} FROM {b} EXCEPT ALL SELECT {cols} FROM {a})) d"""
    assert conn.execute(q).fetchone() == (0,)
    qt = q.replace(f"SELECT {cols} FROM {a}", f"SELECT {a}::text FROM {a}").replace(
        f"SELECT {cols} FROM {b}", f"SELECT {b}::text FROM {b}"
    )
    if cols == "*":
        # Whole rows as text: a row type's text form shows every value as PostgreSQL prints it.
        qt = qt.replace(f"{b}::text FROM {b}", f"row({b}.*)::text FROM {b}").replace(
            f"{a}::text FROM {a}", f"row({a}.*)::text FROM {a}"
        )
        assert conn.execute(qt).fetchone() == (0,)


# --- P6: repeated names ------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["fetch", "copy_out"])
def test_every_into_keeps_columns_that_share_a_name(conn: Any, how: str) -> None:
    read = fetch if how == "fetch" else copy_out
    q = 'SELECT 1 AS a, 2 AS a, 3 AS "a.1", 4 AS a, 5'
    assert read(conn, q) == [(1, 2, 3, 4, 5)]
    cols = read(conn, q, into="columns")
    assert list(cols) == ["a", "a.2", "a.1", "a.3", "?column?"]
    assert [int(v[0]) for v in cols.values()] == [1, 2, 3, 4, 5]
    two = read(conn, "SELECT 1, 2", into="columns")
    assert list(two) == ["?column?", "?column?.1"]
    table = read(conn, q, into="arrow")
    assert table.column_names == ["a", "a", "a.1", "a", "?column?"]
    assert [c[0].as_py() for c in table.columns] == [1, 2, 3, 4, 5]
    df = read(conn, q, into="pandas")
    assert list(df.columns) == ["a", "a", "a.1", "a", "?column?"]
    assert df.iloc[0].tolist() == [1, 2, 3, 4, 5]
    with pytest.raises(amber.DecodeError, match="'a' appears more than once") as info:
        read(conn, q, into="polars")
    assert info.value.kind == "unsupported"


# --- P7: integers, bools and floats with NULLs in pandas ------------------------------------


def test_pandas_keeps_integers_bools_and_floats_with_nulls_exact(conn: Any) -> None:
    conn.execute(
        "CREATE TEMP TABLE t (i int, a int8, b int4, c int2, d oid, e bool, f float8, g float4)"
    )
    rows = [
        (0, 2**63 - 1, 2**31 - 1, 2**15 - 1, 2**32 - 1, True, math.nan, -0.0),
        (1, None, None, None, None, None, None, None),
        (2, 2**53 + 1, -(2**31), -(2**15), 0, False, -math.inf, 1e-45),
        (3, -(2**63), 7, 7, 7, True, 5e-324, math.inf),
    ]
    copy_in(conn, "t", rows)
    q = "SELECT * FROM t ORDER BY i"
    oracle = conn.cursor(binary=True).execute(q).fetchall()
    for _, read in READS:
        df = read(conn, q, into="pandas")
        assert [str(t) for t in df.dtypes] == [
            "int32",
            "Int64",
            "Int32",
            "Int16",
            "UInt32",
            "boolean",
            "Float64",
            "Float32",
        ]
        for c, name in enumerate(df.columns):
            got = [None if v is pd.NA else v for v in df[name].tolist()]
            want = [r[c] for r in oracle]
            for g, w in zip(got, want, strict=True):
                if isinstance(w, float):
                    assert isinstance(g, float) and (
                        math.isnan(g)
                        if math.isnan(w)
                        else g == w and math.copysign(1, g) == math.copysign(1, w)
                    ), (name, g, w)
                else:
                    assert g == w and type(g) is type(w), (name, g, w)
        # Without a NULL, NumPy's own dtypes.
        assert (
            copy_out(conn, "SELECT a FROM t WHERE a IS NOT NULL", into="pandas")["a"].dtype
            == np.int64
        )
        conn.execute("CREATE TEMP TABLE back (LIKE t)")
        copy_in(conn, "back", df)
        _same_table(conn, "t", "back")
        conn.execute("DROP TABLE back")


# --- P8 and P17: values a frame cannot hold -------------------------------------------------


@pytest.mark.parametrize("how", ["fetch", "copy_out"])
def test_time_2400_is_kept_or_refused_with_its_row_never_null(conn: Any, how: str) -> None:
    read = fetch if how == "fetch" else copy_out
    q = "SELECT * FROM (VALUES (1, '23:59:59.999999'::time), (2, NULL), (3, '24:00')) v(i, t)"
    table = read(conn, q, into="arrow")
    assert table.column("t").cast(pa.int64()).to_pylist() == [86_399_999_999, None, 86_400_000_000]
    for into in ("rows", "columns", "pandas", "polars"):
        with pytest.raises(amber.DecodeError) as info:
            read(conn, q, into=into)
        e = info.value
        assert e.kind == "out_of_range" and e.path == "$[2].t", into
        assert "row 2, column 't' (time)" in str(e) and "24:00" in str(e)
    # What Arrow holds goes back as it was.
    conn.execute("CREATE TEMP TABLE b (i int, t time)")
    copy_in(conn, "b", table)
    assert conn.execute("SELECT t::text FROM b ORDER BY i").fetchall() == [
        ("23:59:59.999999",),
        (None,),
        ("24:00:00",),
    ]


def test_pandas_dates_are_dates_infinities_as_in_rows(conn: Any, capfd: Any) -> None:
    conn.execute("CREATE TEMP TABLE t (i int, d date, ts timestamp, tz timestamptz)")
    conn.execute(
        "INSERT INTO t VALUES (0, 'infinity', 'infinity', 'infinity'),"
        " (1, '-infinity', '-infinity', '-infinity'), (2, NULL, NULL, NULL),"
        " (3, '0001-01-02', '0001-01-02', '0001-01-02 00:00+00'),"
        " (4, '9999-12-30', '1900-01-01 23:59:59.999999', '2000-01-01 12:00+05:30')"
    )
    q = "SELECT * FROM t ORDER BY i"
    rows = copy_out(conn, q)
    for _, read in READS:
        df = read(conn, q, into="pandas")
        assert df["d"].dtype == object
        assert df["d"].tolist() == [r[1] for r in rows]
        assert df["ts"].dtype == "datetime64[us]" and str(df["tz"].dtype) == "datetime64[us, UTC]"
        assert df["ts"].isna().tolist() == [False, False, True, False, False]
        conn.execute("CREATE TEMP TABLE back (LIKE t)")
        copy_in(conn, "back", df)
        _same_table(conn, "t", "back")
        conn.execute("DROP TABLE back")
    # A date Python has no date for: refused naming its row and column, as rows do; the
    # reader is released on this thread whatever happens.
    for _ in range(3):
        with pytest.raises(amber.DecodeError) as info:
            copy_out(
                conn,
                "SELECT d FROM (VALUES (1, '2000-01-01'::date), (2, '10000-01-01')) v(i, d)",
                into="pandas",
            )
        assert info.value.kind == "out_of_range" and info.value.path == "$[1].d"
        assert "column 'd' (date)" in str(info.value)
        gc.collect()
    assert "unsendable" not in capfd.readouterr().err


# --- N3 and P18: objects, and types Arrow has no type for ----------------------------------


def test_amber_objects_are_objects_or_refused_never_repr(conn: Any) -> None:
    amber.pg.register(conn)
    conn.execute("CREATE TEMP TABLE t (i int, v bytea)")
    values = [{"a": {1, 2}, "d": decimal.Decimal("1.10"), "t": (1, "x")}, [1, "two"], None]
    for i, v in enumerate(values):
        conn.execute(
            "INSERT INTO t VALUES (%s, %s)", (i, amber.pg.Amber(v) if v is not None else None)
        )
    q = "SELECT v FROM t ORDER BY i"
    for _, read in READS:
        assert [r[0] for r in read(conn, q)] == values
        df = read(conn, q, into="pandas")
        assert df["v"].dtype == object and df["v"].tolist() == values
        pdf = read(conn, q, into="polars")
        assert pdf.schema["v"] == pl.Object and pdf["v"].to_list() == values
        assert read(conn, q, into="columns")["v"].tolist() == values
        with pytest.raises(
            amber.DecodeError, match="column 'v' \\(bytea\\): Arrow has no type"
        ) as info:
            read(conn, q, into="arrow")
        assert info.value.kind == "unsupported"


def test_types_without_an_arrow_type_are_objects_in_frames_and_go_back(conn: Any) -> None:
    conn.execute(
        "CREATE TEMP TABLE t (i int, n inet, c cidr, z timetz, r int4range, s tstzrange, u uuid)"
    )
    conn.execute(
        "INSERT INTO t VALUES"
        " (0, '10.0.0.1/8', '10.0.0.0/8', '12:00+05:30', '[1,5)', '[2020-01-01,2030-01-01 12:00+00)',"
        "  'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'),"
        " (1, '::1', '2001:db8::/32', '00:00:00.000001-15:59:59', 'empty', '(,)', NULL),"
        " (2, NULL, NULL, NULL, NULL, NULL, '00000000-0000-0000-0000-000000000000')"
    )
    q = "SELECT * FROM t ORDER BY i"
    oracle = conn.cursor(binary=True).execute(q).fetchall()
    for _, read in READS:
        for col in ("r", "s"):
            with pytest.raises(amber.DecodeError, match=f"column '{col}' .*Arrow has no type"):
                read(conn, f"SELECT {col} FROM t", into="arrow")
        # inet, cidr and timetz are text in Arrow (str of the values, ISO with the offset).
        texts = read(conn, "SELECT n, c, z FROM t ORDER BY i", into="arrow")
        assert [texts.schema.field(c).type for c in "ncz"] == [pa.large_string()] * 3
        assert texts.to_pylist() == [
            {
                c: None if v is None else v.isoformat() if c == "z" else str(v)
                for c, v in zip("ncz", r[1:4], strict=True)
            }
            for r in oracle
        ]
        df = read(conn, q, into="pandas")
        assert all(df[c].dtype == object for c in "nczrsu")
        assert [
            tuple(None if v is None else v for v in r) for r in df.itertuples(index=False)
        ] == oracle
        pdf = read(conn, q, into="polars")
        assert [pdf.schema[c] for c in "rs"] == [pl.Object] * 2 and pdf.schema["u"] == pl.Binary
        assert [pdf.schema[c] for c in "ncz"] == [pl.String] * 3
        assert pdf["z"].to_list() == [None if r[3] is None else r[3].isoformat() for r in oracle]
        assert pdf["u"].to_list() == [None if r[6] is None else r[6].bytes for r in oracle]
        for frame in (df, pdf):
            conn.execute("CREATE TEMP TABLE back (LIKE t)")
            copy_in(conn, "back", frame)
            _same_table(conn, "t", "back")
            conn.execute("DROP TABLE back")


def test_arrays_become_typed_arrow_lists_and_go_back(conn: Any) -> None:
    conn.execute(
        "CREATE TEMP TABLE t (i int, a int4[], n numeric[], u uuid[], d date[], s text[],"
        " f float8[], b bytea[], z timestamptz[])"
    )
    conn.execute(
        "INSERT INTO t VALUES"
        " (0, '{{1,2},{3,NULL}}', '{1.50,NaN,Infinity,-Infinity,0.0000001,"
        "123456789012345678901234567890123456789012.5}', '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11,NULL}',"
        " '{infinity,-infinity,2020-02-29}', '{{a,NULL},{\"\",\"😀\"}}', '{NaN,-0,1e308}',"
        " '{\"\\\\x00ff\",NULL}', '{infinity,2000-01-01 00:00+00}'),"
        " (1, '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}'),"
        " (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)"
    )
    q = "SELECT * FROM t ORDER BY i"
    for _, read in READS:
        table = read(conn, q, into="arrow")
        assert table.schema.field("a").type == pa.list_(pa.list_(pa.int32()))
        assert table.schema.field("n").type == pa.list_(pa.large_string())
        assert table.column("n")[0].as_py() == [
            "1.50",
            "NaN",
            "Infinity",
            "-Infinity",
            "0.0000001",
            "123456789012345678901234567890123456789012.5",
        ]
        assert table.schema.field("u").type == pa.list_(pa.binary(16))
        assert table.schema.field("z").type == pa.list_(pa.timestamp("us", tz="UTC"))
        for frame in (table, read(conn, q, into="polars"), read(conn, q, into="pandas")):
            conn.execute("CREATE TEMP TABLE back (LIKE t)")
            copy_in(conn, "back", frame)
            _same_table(conn, "t", "back")
            conn.execute("DROP TABLE back")
    # Arrays of different dimensions in one column have no Arrow list type.
    with pytest.raises(
        amber.DecodeError, match="column 'a' \\(int4\\[\\]\\) cannot become"
    ) as info:
        fetch(conn, "SELECT a FROM (VALUES ('{1}'::int4[]), ('{{1}}')) v(a)", into="arrow")
    assert info.value.kind == "unsupported"
    # Element types Arrow has no type for are refused, and are objects in pandas and polars
    # (inet, cidr and timetz elements are text: tests/pg/test_roundtrip.py).
    for elem in ("jsonb", "int4range"):
        with pytest.raises(amber.DecodeError, match="Arrow has no type"):
            fetch(conn, f"SELECT ARRAY[NULL]::{elem}[] AS x", into="arrow")
        assert (
            fetch(conn, f"SELECT ARRAY[NULL]::{elem}[] AS x", into="polars").schema["x"]
            == pl.Object
        )


def test_uuid_from_polars_binary_and_bad_lengths(conn: Any) -> None:
    conn.execute("CREATE TEMP TABLE t (u uuid)")
    u = uuid.UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")
    copy_in(conn, "t", pl.DataFrame({"u": [u.bytes, None]}))
    copy_in(conn, "t", pa.table({"u": pa.array([u.bytes], type=pa.large_binary())}))
    assert conn.execute("SELECT u FROM t").fetchall() == [(u,), (None,), (u,)]
    with pytest.raises(amber.EncodeError) as info:
        copy_in(conn, "t", pl.DataFrame({"u": [u.bytes, b"short"]}))
    assert info.value.path == "$[1].u"


# --- P21: JSON from pandas strings ----------------------------------------------------------


def test_pandas_strings_are_json_strings_whatever_their_dtype(conn: Any) -> None:
    conn.execute("CREATE TEMP TABLE t (i serial, j jsonb, k json)")
    text = ['{"a": 1}', "[1, 2]", "plain", None]
    dtypes: list[Any] = [
        object,
        "str",
        pd.StringDtype("python"),
        pd.StringDtype("pyarrow"),
        pd.ArrowDtype(pa.large_string()),
        pd.ArrowDtype(pa.string()),
    ]
    for dtype in dtypes:
        conn.execute("TRUNCATE t RESTART IDENTITY")
        s = pd.Series(text, dtype=dtype)
        copy_in(conn, "t", pd.DataFrame({"j": s, "k": s}))
        copy_in(conn, "t", {"j": s, "k": s})
        got = conn.execute("SELECT j, k::jsonb FROM t ORDER BY i").fetchall()
        want = [(v, v) for v in text] * 2
        assert got == want, dtype
    # psycopg's dumper gives the same JSON values.
    conn.execute("CREATE TEMP TABLE o (i serial, j jsonb)")
    for v in text:
        conn.execute("INSERT INTO o (j) VALUES (%s)", (None if v is None else Jsonb(v),))
    assert conn.execute(
        "SELECT count(*) FROM (SELECT j FROM o EXCEPT ALL SELECT j FROM t WHERE i <= 4) d"
    ).fetchone() == (0,)
    # Arrow and polars strings are JSON text, as documented.
    conn.execute("TRUNCATE t")
    copy_in(conn, "t", pa.table({"j": pa.array(['{"a": 1}'])}))
    copy_in(conn, "t", pl.DataFrame({"j": ['{"a": 1}']}))
    assert conn.execute("SELECT j FROM t").fetchall() == [({"a": 1},)] * 2


def test_pandas_reads_json_as_values_and_writes_them_back(conn: Any) -> None:
    conn.execute("CREATE TEMP TABLE t (i int, j jsonb, k json)")
    conn.execute(
        "INSERT INTO t VALUES (0, '{\"a\": [1, 2.5, null]}', '\"s\"'), (1, '\"{}\"', '[]'),"
        " (2, 'null', NULL), (3, NULL, '{\"\\u00e9\": true}')"
    )
    # A JSON null is None, as psycopg loads it, and None is written as NULL: not compared.
    q = "SELECT * FROM t ORDER BY i"
    oracle = conn.cursor(binary=True).execute(q).fetchall()
    df = fetch(conn, q, into="pandas")
    assert df["j"].tolist() == [r[1] for r in oracle] and df["k"].tolist() == [r[2] for r in oracle]
    conn.execute("CREATE TEMP TABLE back (LIKE t)")
    copy_in(conn, "back", df)
    assert conn.execute(
        "SELECT count(*) FROM t JOIN back USING (i) WHERE (t.j IS DISTINCT FROM back.j AND i <> 2)"
        " OR t.k::jsonb IS DISTINCT FROM back.k::jsonb"
    ).fetchone() == (0,)
    assert conn.execute("SELECT count(*) FROM back").fetchone() == (4,)


def test_pandas_gives_each_type_its_exact_python_value(conn: Any) -> None:
    q = (
        "SELECT 1.50::numeric AS n, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid AS u,"
        " 'x'::text AS t, '\\x00'::bytea AS b, '1 day'::interval AS iv, '12:00'::time AS ti"
    )
    df = fetch(conn, q, into="pandas")
    row = df.iloc[0].tolist()
    assert row[0] == decimal.Decimal("1.50") and str(row[0]) == "1.50"
    assert row[1] == uuid.UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")
    assert row[2] == "x" and pd.api.types.is_string_dtype(df["t"].dtype)
    assert row[3] == b"\x00" and row[5] == dt.time(12)
    assert df["iv"].dtype == "timedelta64[us]"


def test_unknown_type_strings_are_arrow_text(conn: Any) -> None:
    from psycopg.types.enum import EnumInfo, register_enum

    conn.execute("CREATE TYPE pg_into_mood AS ENUM ('ok', 'sad')")
    info = EnumInfo.fetch(conn, "pg_into_mood")
    assert info is not None
    register_enum(info, conn)
    # psycopg's enums are Python Enum members: objects in pandas and polars, refused in Arrow.
    with pytest.raises(amber.DecodeError, match="Arrow has no type"):
        fetch(conn, "SELECT 'ok'::pg_into_mood AS m", into="arrow")
    df = fetch(conn, "SELECT 'ok'::pg_into_mood AS m", into="pandas")
    assert df["m"].tolist()[0].name == "ok"
