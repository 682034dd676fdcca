"""amber.pg's binary COPY and fetch against a real PostgreSQL server, with psycopg as the
oracle: what amber writes must be what psycopg writes for the same value, and what amber reads
must be what psycopg reads for the same row."""

from __future__ import annotations

import datetime as dt
import decimal
import gc
import ipaddress
import math
import sys
import threading
import uuid
import zoneinfo
from typing import Any

import numpy as np
import pandas as pd
import polars as pl
import psycopg
import pyarrow as pa
import pytest
from psycopg import sql
from psycopg.types.json import Json, Jsonb

import amber
import amber.pg._copy as pg_copy
from amber.pg import copy_in, copy_out, fetch

D = decimal.Decimal
UTC = dt.timezone.utc
PARIS = zoneinfo.ZoneInfo("Europe/Paris")
U = uuid.UUID("12345678-1234-5678-1234-567812345678")

# (column type, values amber writes, what psycopg would be given for the same value or None
# when psycopg writes something else on purpose (infinities), what reads back)
MATRIX: list[tuple[str, list[Any]]] = [
    ("bool", [True, False, np.bool_(True)]),
    ("int2", [0, -32768, 32767, np.int16(5), 7.0]),
    ("int4", [-(2**31), 2**31 - 1, np.int64(3)]),
    ("int8", [-(2**63), 2**63 - 1, np.uint32(4_000_000_000)]),
    ("float4", [1.5, -0.0, math.inf, -math.inf, math.nan, 3]),
    ("float8", [0.1, 1e308, math.nan, -math.inf, 5e-324, np.float32(0.5), D("0.25")]),
    (
        "numeric",
        [
            D("1.10"),
            D("-0.0001"),
            D("NaN"),
            D("Infinity"),
            D("-Infinity"),
            D("12345678901234567890.123456789"),
            D("1E+5"),
            7,
            -(10**30),
            0.1,
        ],
    ),
    ("text", ["", "héllo ✓", "x" * 10_000, "a\tb\nc"]),
    ("varchar(12)", ["short", "exactly12chr"]),
    ("char(3)", ["ab", "abc"]),
    ("name", ["pg_class"]),
    ('"char"', ["a", "Z"]),
    ("bytea", [b"", b"\x00\xff" * 100, bytearray(b"xy"), memoryview(b"mv")]),
    ("date", [dt.date(2026, 11, 25), dt.date(1970, 1, 1), dt.date(9999, 12, 30), dt.date(2, 1, 1)]),
    ("time", [dt.time(0, 0), dt.time(23, 59, 59, 999_999), dt.time(12, 30, 1, 5)]),
    (
        "timetz",
        [
            dt.time(12, 0, tzinfo=dt.timezone(dt.timedelta(hours=-5))),
            dt.time(1, 2, 3, 4, tzinfo=dt.timezone(dt.timedelta(hours=5, minutes=30))),
            dt.time(0, 0, tzinfo=UTC),
        ],
    ),
    (
        "timestamp",
        [
            dt.datetime(2026, 1, 1, 12, 0, 0, 5),
            dt.datetime(1, 1, 2),
            dt.datetime(9999, 12, 31, 23, 59, 59),
        ],
    ),
    (
        "timestamptz",
        [
            dt.datetime(2026, 1, 1, 12, 0, tzinfo=UTC),
            dt.datetime(2026, 7, 1, 12, 0, tzinfo=PARIS),
            dt.datetime(2026, 1, 1, 12, 0, tzinfo=PARIS),
            dt.datetime(1900, 3, 4, 5, 6, 7, 8, tzinfo=dt.timezone(dt.timedelta(hours=-3))),
            pd.Timestamp("2026-03-04 05:06:07.123456", tz="UTC"),
        ],
    ),
    (
        "interval",
        [
            dt.timedelta(days=-3, seconds=5),
            dt.timedelta(0),
            dt.timedelta(days=999_999, microseconds=1),
        ],
    ),
    ("uuid", [U, uuid.uuid4()]),
    ("json", [{"a": [1, 2, None]}, [1, "x"], "str", 3.5, True]),
    ("jsonb", [{"a": {"b": [True, None]}}, [], "é", 0]),
    (
        "inet",
        [
            ipaddress.ip_address("10.0.0.1"),
            ipaddress.ip_interface("10.1.2.3/8"),
            ipaddress.ip_address("::1"),
            ipaddress.ip_interface("2001:db8::1/64"),
        ],
    ),
    ("cidr", [ipaddress.ip_network("10.0.0.0/8"), ipaddress.ip_network("2001:db8::/32")]),
    ("int4[]", [[1, None, 3], [], [[1, 2], [3, 4]], (5, 6)]),
    ("text[]", [["a", None, "ç"], [[["x"]]]]),
    ("numeric[]", [[D("1.5"), D("NaN")]]),
    ("timestamptz[]", [[dt.datetime(2026, 1, 1, tzinfo=UTC), None]]),
    ("uuid[]", [[U]]),
    ("float8[]", [np.array([1.0, 2.5])]),
    ("bool[]", [[True, False]]),
]

#: Values amber reads as psycopg does not: psycopg's own reads are compared after `_norm`.
_JSONISH = {"json", "jsonb"}


def _psycopg_param(ty: str, v: Any) -> Any:
    """The value as psycopg must be given it to write what amber writes."""
    if ty in _JSONISH and v is not None:
        return Json(v) if ty == "json" else Jsonb(v)
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, tuple):
        return list(v)
    if isinstance(v, (bytearray, memoryview)):
        return bytes(v)
    if isinstance(v, pd.Timestamp):
        return v.to_pydatetime()
    if ty.startswith("int") and not ty.endswith("[]") and isinstance(v, float):
        return int(v)
    if ty in ("float4", "float8") and isinstance(v, (int, D)):
        return float(v)
    if ty == "numeric" and isinstance(v, float):
        return D(repr(v))
    return v


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, D) and isinstance(b, D) and a.is_nan() and b.is_nan():
        return True
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b) and type(a) is type(b)


@pytest.mark.parametrize(("ty", "values"), MATRIX, ids=[m[0] for m in MATRIX])
def test_type_matrix_matches_psycopg(conn: Any, ty: str, values: list[Any]) -> None:
    """amber's COPY writes what psycopg writes; amber's reads return what psycopg reads."""
    conn.execute("SET TimeZone TO 'UTC'")
    conn.execute(f"CREATE TEMP TABLE a (i int, v {ty})")
    conn.execute(f"CREATE TEMP TABLE p (i int, v {ty})")
    rows = [(i, v) for i, v in enumerate(values)] + [(len(values), None)]
    assert copy_in(conn, "a", rows) == len(rows)
    with conn.cursor() as cur:
        for i, v in rows:
            cur.execute("INSERT INTO p VALUES (%s, %s)", (i, _psycopg_param(ty, v)))
        cur.execute("SELECT a.i FROM a JOIN p USING (i) WHERE a.v::text IS DISTINCT FROM p.v::text")
        assert cur.fetchall() == []
        cur.execute("SELECT count(*) FROM a")
        assert cur.fetchone() == (len(rows),)
    query = "SELECT v FROM a ORDER BY i"
    with conn.cursor(binary=True) as cur:
        expected = [r[0] for r in cur.execute(query).fetchall()]
    for got in (copy_out(conn, query), fetch(conn, query)):
        values_got = [r[0] for r in got]
        assert len(values_got) == len(expected)
        for g, e in zip(values_got, expected, strict=True):
            assert _same(g, e), (ty, g, e)


def test_slow_paths_read_the_same(conn: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without libpq bound, reads go through psycopg's API with the same results."""
    query = (
        "SELECT i, i::text, now() - i * interval '1 hour', NULL::int FROM generate_series(1, 500) i"
    )
    fast = (copy_out(conn, query), fetch(conn, query), copy_out(conn, query, into="arrow"))
    monkeypatch.setattr(pg_copy, "_libpq", lambda: False)
    slow = (copy_out(conn, query), fetch(conn, query), copy_out(conn, query, into="arrow"))
    assert fast[0] == slow[0] and fast[1] == slow[1]
    assert fast[2].equals(slow[2])
    assert fast[0] == fast[1]


def test_infinities_and_their_python_values(conn: Any) -> None:
    conn.execute("CREATE TEMP TABLE t (i int, d date, ts timestamp, tz timestamptz)")
    rows = [
        (0, dt.date.max, dt.datetime.max, dt.datetime.max.replace(tzinfo=UTC)),
        (1, dt.date.min, dt.datetime.min, dt.datetime.min.replace(tzinfo=UTC)),
    ]
    copy_in(conn, "t", rows)
    text = conn.execute("SELECT d::text, ts::text, tz::text FROM t ORDER BY i").fetchall()
    assert text == [("infinity",) * 3, ("-infinity",) * 3]
    assert copy_out(conn, "SELECT * FROM t ORDER BY i") == rows
    assert fetch(conn, "SELECT * FROM t ORDER BY i") == rows
    table = copy_out(conn, "SELECT d, ts, tz FROM t ORDER BY i", into="arrow")
    assert table.column("ts").cast(pa.int64()).to_pylist() == [2**63 - 1, -(2**63) + 1]
    assert table.column("d").cast(pa.int32()).to_pylist() == [2**31 - 1, -(2**31)]
    # Arrow's extremes go back as infinities.
    conn.execute("TRUNCATE t")
    copy_in(
        conn,
        "t",
        pa.table({"d": table.column("d"), "ts": table.column("ts"), "tz": table.column("tz")}),
    )
    assert conn.execute("SELECT d::text, ts::text, tz::text FROM t").fetchall() == text
    cols = copy_out(conn, "SELECT ts FROM t", into="columns")
    assert not np.isnat(cols["ts"]).any()


def test_out_of_python_range_values_raise_with_place(conn: Any) -> None:
    with pytest.raises(amber.DecodeError) as info:
        copy_out(conn, "SELECT 1 AS a, '10000-01-01'::date AS d")
    e = info.value
    assert e.kind == "out_of_range" and e.path == "$[0].d" and "10000" in str(e)
    assert isinstance(e.offset, int) and e.offset > 19
    with pytest.raises(amber.DecodeError):
        fetch(conn, "SELECT '24:00'::time")
    # Arrow holds them.
    assert copy_out(conn, "SELECT '10000-01-01'::date AS d", into="arrow").num_rows == 1


FRAME_TYPES = "a int8, b float8, c text, d timestamptz, e bytea, f int4, g numeric, h bool, k date"


def _frame() -> pd.DataFrame:
    n = 1000
    return pd.DataFrame(
        {
            "a": np.arange(n, dtype=np.int64),
            "b": np.where(np.arange(n) % 7 == 0, np.nan, np.arange(n) / 3),
            "c": pd.Series([f"row {i}" if i % 5 else None for i in range(n)], dtype=object),
            "d": pd.date_range("2026-01-01", periods=n, freq="37min", tz="Europe/Paris"),
            "e": [bytes([i % 256]) * (i % 4) for i in range(n)],
            "f": pd.array([i if i % 3 else None for i in range(n)], dtype="Int32"),
            "g": [D(i) / 8 for i in range(n)],
            "h": pd.array([bool(i % 2) if i % 11 else None for i in range(n)], dtype="boolean"),
            "k": pd.Series(pd.date_range("2000-01-01", periods=n, freq="D")).dt.date,
        }
    )


def _as_rows(df: pd.DataFrame) -> list[tuple[Any, ...]]:
    out = []
    for rec in df.astype(object).itertuples(index=False):
        out.append(
            tuple(
                None if (v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v))) else v
                for v in rec
            )
        )
    return out


@pytest.mark.parametrize("kind", ["pandas", "arrow", "batch", "polars", "dict"])
def test_columnar_input_writes_what_rows_write(conn: Any, kind: str) -> None:
    df = _frame()
    data: Any
    if kind == "pandas":
        data = df
    elif kind == "arrow":
        data = pa.Table.from_pandas(df, preserve_index=False)
        data = pa.concat_tables([data.slice(0, 300), data.slice(300)])  # several chunks
    elif kind == "batch":
        data = pa.RecordBatch.from_pandas(df, preserve_index=False)
    elif kind == "polars":
        data = pl.from_pandas(df.drop(columns=["g"]))
    else:
        # NumPy, pandas and list columns; NaN in a pandas Series is missing, as in a DataFrame.
        data = {
            c: df[c].to_numpy() if c == "a" else df[c] if c == "b" else df[c].tolist()
            for c in df.columns
        }
    conn.execute(f"CREATE TEMP TABLE cols ({FRAME_TYPES})")
    conn.execute(f"CREATE TEMP TABLE rows ({FRAME_TYPES})")
    names = list(data.columns) if kind == "polars" else list(df.columns)
    assert copy_in(conn, "cols", data) == len(df)
    copy_in(conn, "rows", [r for r in _as_rows(df[names])], columns=names)
    diff = conn.execute(
        "SELECT count(*) FROM ((TABLE cols EXCEPT ALL TABLE rows) UNION ALL (TABLE rows EXCEPT ALL TABLE cols)) x"
    ).fetchone()
    assert diff == (0,)
    assert conn.execute("SELECT count(*) FROM cols WHERE b IS NULL").fetchone() == (143,)


def test_object_arrays_are_read_in_place_as_they_are_then(conn: Any) -> None:
    """NumPy object arrays (a pandas object column's own, a strided view, an object field of a
    packed structured array) are read item by item where they lie; Python code run for one item
    that shrinks or rewrites the array is seen by the next read, and a shrunk array is an error
    naming the row and column, not a read past its end."""
    conn.execute("CREATE TEMP TABLE t (id int8, b bytea, x float8)")
    n = 300
    blobs = np.empty(2 * n, dtype=object)
    blobs[:] = [bytes([i % 256]) * (i % 5) if i % 7 else None for i in range(2 * n)]
    packed = np.zeros(n, dtype=np.dtype([("pad", "i1"), ("x", "O")], align=False))
    packed["x"] = [float(i) / 4 for i in range(n)]
    assert packed.dtype.itemsize == 9  # the object slots are not pointer-aligned
    data = {"id": np.arange(n), "b": blobs[::2], "x": packed["x"]}
    assert copy_in(conn, "t", data) == n
    got = conn.execute("SELECT b, x FROM t ORDER BY id").fetchall()
    assert got == [(blobs[2 * i], i / 4) for i in range(n)]
    conn.execute("TRUNCATE t")

    xs = np.array([float(i) for i in range(n)], dtype=object)

    class Rewrites:
        def __float__(self) -> float:
            xs[11] = 1000.5  # a later item, replaced before it is read
            return 10.0

    class Shrinks:
        def __float__(self) -> float:
            xs.resize(20, refcheck=False)
            return 0.0

    xs[10] = Rewrites()
    copy_in(conn, "t", {"id": np.arange(n), "x": xs}, columns=["id", "x"])
    assert conn.execute("SELECT x FROM t WHERE id IN (10, 11) ORDER BY id").fetchall() == [
        (10.0,),
        (1000.5,),
    ]
    conn.execute("TRUNCATE t")
    xs[30] = Shrinks()
    with pytest.raises(amber.EncodeError) as info:
        copy_in(conn, "t", {"id": np.arange(n), "x": xs}, columns=["id", "x"])
    assert "changed size" in str(info.value) and info.value.path == "$[31].x"
    assert conn.execute("SELECT count(*) FROM t").fetchone() == (0,)


def test_nan_is_a_value_in_numpy_and_lists_and_missing_in_pandas(conn: Any) -> None:
    conn.execute("CREATE TEMP TABLE t (k text, v float8)")
    nan = math.nan
    copy_in(conn, "t", {"k": ["np", "list"], "v": np.array([nan, 1.0])})
    copy_in(conn, "t", {"k": ["list"], "v": [nan]})
    copy_in(conn, "t", pd.DataFrame({"k": ["pandas"], "v": [nan]}))
    got = conn.execute("SELECT k, v::text FROM t ORDER BY k, v").fetchall()
    assert got == [("list", "1"), ("list", "NaN"), ("np", "NaN"), ("pandas", None)]


def test_arrow_types_reach_their_columns(conn: Any) -> None:
    conn.execute(
        "CREATE TEMP TABLE t (i2 int2, u4 int8, f4 float4, s varchar, ls text, lb bytea, d64 date,"
        " t32 time, t64 time, du interval, dec numeric, fsb uuid, cat text, ts timestamp, tsn timestamptz,"
        " js jsonb, ip inet, n numeric, arr int4[])"
    )
    table = pa.table(
        {
            "i2": pa.array([1, None], pa.int8()),
            "u4": pa.array([4_000_000_000, 0], pa.uint32()),
            "f4": pa.array([0.5, None], pa.float16()),
            "s": pa.array(["x", "y"], pa.string_view()),
            "ls": pa.array(["é", ""], pa.large_string()),
            "lb": pa.array([b"\x00", None], pa.large_binary()),
            "d64": pa.array([dt.date(2026, 1, 2), None], pa.date64()),
            "t32": pa.array([dt.time(1, 2, 3), None], pa.time32("s")),
            "t64": pa.array([dt.time(1, 2, 3, 4), None], pa.time64("ns")),
            "du": pa.array([dt.timedelta(days=1, microseconds=-1), None], pa.duration("ms")),
            "dec": pa.array([D("-12.345"), D("0.001")], pa.decimal128(10, 3)),
            "fsb": pa.array([U.bytes, None], pa.binary(16)),
            "cat": pa.array(["a", "b"]).dictionary_encode(),
            "ts": pa.array([dt.datetime(2026, 1, 1, 1, 1, 1, 999_999), None], pa.timestamp("ns")),
            "tsn": pa.array([dt.datetime(2026, 1, 1), None], pa.timestamp("s")),
            "js": pa.array(['{"a": 1}', None]),
            "ip": pa.array(["10.0.0.1/8", "::1"]),
            "n": pa.array([3, None], pa.int64()),
            "arr": pa.array([[1, None], []], pa.list_(pa.int32())),
        }
    )
    copy_in(conn, "t", table)
    got = copy_out(conn, "SELECT * FROM t")
    assert got[0] == (
        1,
        4_000_000_000,
        0.5,
        "x",
        "é",
        b"\x00",
        dt.date(2026, 1, 2),
        dt.time(1, 2, 3),
        dt.time(1, 2, 3, 4),
        dt.timedelta(days=1, microseconds=-1000),
        D("-12.345"),
        U,
        "a",
        dt.datetime(2026, 1, 1, 1, 1, 1, 999_999),
        dt.datetime(2026, 1, 1, tzinfo=UTC),
        {"a": 1},
        ipaddress.ip_interface("10.0.0.1/8"),
        D(3),
        [1, None],
    )
    assert got[1][0] is None and got[1][-1] == []


def test_reads_into_every_shape(conn: Any) -> None:
    conn.execute(
        "CREATE TEMP TABLE t (a int8, b float8, c text, d timestamptz, e bytea, f bool, g numeric, h int4[])"
    )
    rows = [
        (1, 0.5, "x", dt.datetime(2026, 1, 1, tzinfo=UTC), b"\x01", True, D("1.5"), [1, 2]),
        (None, math.nan, None, None, None, None, None, None),
        (3, -math.inf, "", dt.datetime(2000, 1, 1, tzinfo=UTC), b"", False, D("NaN"), []),
    ]
    copy_in(conn, "t", rows)
    q = "SELECT * FROM t ORDER BY a NULLS LAST"
    table = copy_out(conn, q, into="arrow")
    assert table.schema.types[:6] == [
        pa.int64(),
        pa.float64(),
        pa.large_string(),
        pa.timestamp("us", tz="UTC"),
        pa.large_binary(),
        pa.bool_(),
    ]
    assert table.column("g").to_pylist() == ["1.5", "NaN", None]
    assert table.column("h").to_pylist() == [[1, 2], [], None]
    fetched = fetch(conn, q, into="arrow")
    assert table.drop_columns(["b"]).equals(fetched.drop_columns(["b"]))  # NaN != NaN
    assert str(table.column("b")) == str(fetched.column("b"))
    cols = copy_out(conn, q, into="columns")
    assert cols["a"].dtype == np.int64 and cols["a"].mask.tolist() == [False, False, True]
    assert cols["a"].compressed().tolist() == [1, 3]
    assert cols["d"].dtype == np.dtype("datetime64[us]")
    assert cols["f"].dtype == bool and cols["f"].mask.tolist() == [False, False, True]
    assert cols["g"].dtype == object and cols["g"][0] == D("1.5") and cols["g"][2] is None
    assert cols["c"].tolist() == ["x", "", None]
    assert cols["h"][0] == [1, 2]
    # Object columns are filled in place: each value's reference moves into the array, the
    # array's own None placeholders are released (3.10 and 3.11 count None's references).
    none_refs = sys.getrefcount(None)
    many = copy_out(
        conn, "SELECT NULL::text, 'v' || i FROM generate_series(1, 5000) i", into="columns"
    )
    names = list(many)
    assert [many[n].dtype for n in names] == [object, object]
    assert many[names[0]].flags.c_contiguous and many[names[1]][4999] == "v5000"
    assert sys.getrefcount(many[names[1]][0]) <= 3  # the array, the index result, the call
    del many
    assert abs(sys.getrefcount(None) - none_refs) < 100
    df = copy_out(conn, q, into="pandas")
    assert list(df.columns) == list("abcdefgh") and df["c"].tolist()[:2] == ["x", ""]
    pdf = copy_out(conn, q, into="polars")
    assert pdf.shape == (3, 8) and pdf["a"].to_list() == [1, 3, None]


def test_value_that_does_not_fit_names_row_column_and_value_and_keeps_nothing(conn: Any) -> None:
    conn.execute("CREATE TEMP TABLE t (id int4, small int2, name text)")
    conn.execute("INSERT INTO t VALUES (-1, 0, 'before')")
    rows = [(i, i, f"n{i}") for i in range(100_000)]
    with pytest.raises(amber.EncodeError) as info:
        copy_in(conn, "t", rows)
    e = info.value
    assert e.kind == "out_of_range" and e.path == "$[32768].small"
    assert "row 32768" in str(e) and "'small'" in str(e) and "32768" in str(e)
    # The transaction goes on, holding only what was there before.
    assert conn.execute("SELECT count(*) FROM t").fetchone() == (1,)
    with pytest.raises(amber.EncodeError) as info:
        copy_in(conn, "t", [(1, 2, 3)])
    assert info.value.kind == "type_mismatch" and info.value.path == "$[0].name"
    with pytest.raises(amber.EncodeError) as info:
        copy_in(conn, "t", [(1, 2)])
    assert info.value.kind == "field_count"
    with pytest.raises(amber.EncodeError) as info:
        copy_in(conn, "t", pd.DataFrame({"id": [1, 2], "name": ["a", "b\x00"]}))
    assert info.value.path == "$[1].name"
    assert conn.execute("SELECT count(*) FROM t").fetchone() == (1,)


def test_failure_in_autocommit_commits_nothing(pg_server: Any) -> None:
    with pg_server.connect(autocommit=True) as c:
        c.execute("DROP TABLE IF EXISTS auto_t; CREATE TABLE auto_t (v int2)")
        with pytest.raises(amber.EncodeError):
            copy_in(c, "auto_t", ([i] for i in range(1_000_000)))
        assert c.execute("SELECT count(*) FROM auto_t").fetchone() == (0,)
        c.execute("DROP TABLE auto_t")


def test_a_raising_iterator_keeps_nothing(conn: Any) -> None:
    conn.execute("CREATE TEMP TABLE t (v int8)")

    def rows() -> Any:
        for i in range(500_000):
            yield (i,)
        raise RuntimeError("source failed")

    with pytest.raises(RuntimeError, match="source failed"):
        copy_in(conn, "t", rows())
    assert conn.execute("SELECT count(*) FROM t").fetchone() == (0,)


def test_names_are_quoted(conn: Any) -> None:
    name = 'odd "name"; DROP TABLE victim; --'
    conn.execute("CREATE TEMP TABLE victim (v int)")
    conn.execute(
        sql.SQL("CREATE TEMP TABLE {} ({} int, {} text)").format(
            sql.Identifier(name), sql.Identifier("Col A"), sql.Identifier('b"')
        )
    )
    assert copy_in(conn, name, [(1, "x")]) == 1
    assert copy_in(conn, ("pg_temp", name), {"Col A": [2], 'b"': ["y"]}) == 1
    assert fetch(conn, sql.SQL("SELECT * FROM {} ORDER BY 1").format(sql.Identifier(name))) == [
        (1, "x"),
        (2, "y"),
    ]
    assert conn.execute("SELECT count(*) FROM victim").fetchone() == (0,)
    with pytest.raises(ValueError, match="no column"):
        copy_in(conn, name, {"nope": [1]})
    with pytest.raises(psycopg.errors.UndefinedTable):
        copy_in(conn, "no_such_table", [(1,)])


def test_large_iterator_in_chunks_and_counts(conn: Any) -> None:
    conn.execute("CREATE TEMP TABLE t (a int8, b text)")
    n = 300_000
    assert copy_in(conn, "t", ((i, "x" * (i % 50)) for i in range(n))) == n
    assert conn.execute("SELECT count(*), sum(a), sum(length(b)) FROM t").fetchone() == (
        n,
        D(n * (n - 1) // 2),
        sum(i % 50 for i in range(n)),
    )
    rows = copy_out(conn, "SELECT a, b FROM t ORDER BY a")
    assert len(rows) == n and rows[-1] == (n - 1, "x" * ((n - 1) % 50))


def test_domains_enums_and_types_only_psycopg_knows(conn: Any) -> None:
    conn.execute("CREATE TYPE mood AS ENUM ('sad', 'happy')")
    conn.execute("CREATE DOMAIN posint AS int CHECK (VALUE > 0)")
    conn.execute("CREATE TEMP TABLE t (m mood, p posint, r int4range, pt point)")
    from psycopg.types.range import Range

    copy_in(conn, "t", [("happy", 5, Range(1, 5))], columns=["m", "p", "r"])
    with pytest.raises(psycopg.errors.CheckViolation):
        copy_in(conn, "t", [("sad", -1, None)], columns=["m", "p", "r"])
    got = fetch(conn, "SELECT m::text, p, r FROM t")
    assert got == [("happy", 5, Range(1, 5))]
    assert copy_out(conn, "SELECT r FROM t") == [(Range(1, 5),)]
    with pytest.raises(amber.EncodeError, match="point"):
        copy_in(conn, "t", [(None, None, None, (1, 2))])


def test_server_error_during_copy_out_is_psycopgs(conn: Any) -> None:
    with pytest.raises(psycopg.errors.DivisionByZero):
        copy_out(conn, "SELECT 1 / (i - 5000) FROM generate_series(1, 10000) i")
    conn.rollback()
    assert fetch(conn, "SELECT 1") == [(1,)]


def test_dropped_connection_during_copy_in_keeps_nothing(pg_server: Any) -> None:
    with pg_server.connect(autocommit=True) as admin:
        admin.execute("DROP TABLE IF EXISTS dropped; CREATE TABLE dropped (v int8, s text)")
        c = pg_server.connect()
        pid = c.info.backend_pid

        def rows() -> Any:
            for i in range(2_000_000):
                if i == 1_000_000:
                    admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
                yield (i, "some text to fill the chunks")

        with pytest.raises(psycopg.OperationalError):
            copy_in(c, "dropped", rows())
        c.close()
        assert admin.execute("SELECT count(*) FROM dropped").fetchone() == (0,)
        admin.execute("DROP TABLE dropped")


def test_dropped_connection_during_copy_out_raises(pg_server: Any) -> None:
    with pg_server.connect(autocommit=True) as admin, pg_server.connect() as c:
        pid = c.info.backend_pid
        timer = threading.Timer(
            0.5, lambda: admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        )
        timer.start()
        try:
            with pytest.raises(psycopg.OperationalError):
                copy_out(
                    c,
                    "SELECT i, pg_sleep(CASE WHEN i = 10 THEN 3 ELSE 0 END) FROM generate_series(1, 20) i",
                )
        finally:
            timer.cancel()


def test_stopped_server_during_copy_in_raises() -> None:
    from amber.pg.testing import start

    server = start()
    try:
        c = server.connect()
        c.execute("CREATE TABLE t (v int8, s text)")

        def rows() -> Any:
            for i in range(3_000_000):
                if i == 1_000_000:
                    server.close()
                yield (i, "some text to fill the chunks")

        with pytest.raises(psycopg.OperationalError):
            copy_in(c, "t", rows())
        c.close()
    finally:
        server.close()


def test_bad_into_and_non_queries(conn: Any) -> None:
    with pytest.raises(ValueError, match="into"):
        copy_out(conn, "SELECT 1", into="frame")  # type: ignore[arg-type]
    with pytest.raises(psycopg.ProgrammingError):
        fetch(conn, "SET TimeZone TO 'UTC'")
    with pytest.raises(psycopg.errors.SyntaxError):
        copy_out(conn, "SELEC 1")


def test_copy_stream_parser_reports_bad_bytes() -> None:
    from amber import _native

    reader = _native.PgReader([(23, None)], ["a"], "rows")
    with pytest.raises(amber.DecodeError) as info:
        reader.feed(b"PGCOPY\n\xff\r\n\x00" + b"\x00" * 8 + b"\x00\x01\x00\x00\x00\x03abc")
    assert info.value.path == "$[0].a" and info.value.kind == "malformed"
    reader = _native.PgReader([(23, None)], ["a"], "rows")
    reader.feed(b"PGCOPY\n\xff\r\n\x00" + b"\x00" * 8 + b"\x00\x01\x00\x00")
    with pytest.raises(amber.DecodeError) as info:
        reader.finish(True)
    assert info.value.kind == "truncated"
    with pytest.raises(amber.DecodeError):
        _native.PgReader([(23, None)], ["a"], "rows").feed(b"NOTCOPY" * 4)


def test_rows_are_right_when_columns_repeat_then_vary_then_repeat(conn: Any) -> None:
    """Row values equal to the previous row's share one object; a column whose values keep
    changing stops being compared. Either way every value read is the one stored, and rows of
    atoms are left untracked by the cyclic GC (they cannot hold a cycle) while rows holding a
    list stay tracked."""
    conn.execute("CREATE TEMP TABLE r (k int8, t text, a int4[])")
    n = 5000
    want = [
        (i, "same" if i < 100 or i >= 3000 else f"v{i}", [i] if i % 7 == 0 else None)
        for i in range(n)
    ]
    copy_in(conn, "r", want)
    for read in (fetch, copy_out):
        got = read(conn, "SELECT * FROM r ORDER BY k")
        assert got == want
        assert not gc.is_tracked(got[1]) and gc.is_tracked(got[7])


def test_a_value_differing_from_the_previous_rows_in_one_byte_is_read(conn: Any) -> None:
    """The comparison with the previous row's value sees a change at any byte of any length:
    each value of lengths 0 to 40 is followed by itself and by copies changed at one place."""
    conn.execute("CREATE TEMP TABLE r (k int8, t text, b bytea)")
    want: list[tuple[int, str, bytes | None]] = []
    for n in range(41):
        base = "".join(chr(97 + i % 26) for i in range(n))
        texts = [base, base] + [base[:i] + "Z" + base[i + 1 :] for i in range(n)] + [base]
        for t in texts:
            want.append((len(want), t, t.encode() if len(want) % 9 else None))
    copy_in(conn, "r", want)
    for read in (fetch, copy_out):
        assert read(conn, "SELECT * FROM r ORDER BY k") == want


@pytest.mark.parametrize("string_type", [pa.string(), pa.large_string()])
def test_arrow_text_is_checked_wherever_the_bad_value_is(conn: Any, string_type: Any) -> None:
    """Arrow text is checked many values at once; a NUL byte or invalid UTF-8 anywhere (in
    any block, in a sliced array) still fails naming its row, and multi-byte characters
    across block boundaries load intact."""
    conn.execute("CREATE TEMP TABLE s (id int8, t text)")
    words = ["ascii", "αβγ", "日本語", "naïve", "", "x" * 300]
    good = [words[i % len(words)] + str(i) for i in range(10_000)]
    table = pa.table({"id": pa.array(range(10_000), pa.int64()), "t": pa.array(good, string_type)})
    assert copy_in(conn, "s", table.slice(3, 9_000)) == 9_000
    got = conn.execute("SELECT t FROM s ORDER BY id").fetchall()
    assert [r[0] for r in got] == good[3:9_003]
    conn.execute("TRUNCATE s")

    def with_value(at: int, raw: bytes) -> Any:
        values = [g.encode() for g in good]
        values[at] = raw
        data = b"".join(values)
        offsets = np.cumsum([0] + [len(v) for v in values])
        width = np.int32 if string_type == pa.string() else np.int64
        array = pa.Array.from_buffers(
            string_type,
            len(values),
            [None, pa.py_buffer(offsets.astype(width)), pa.py_buffer(data)],
        )
        return pa.table({"id": pa.array(range(10_000), pa.int64()), "t": array})

    for at, raw in (
        (0, b"a\x00b"),
        (5_000, b"\xff\xfe"),
        (9_999, "é".encode()[:1]),
        (4_096, b"\x00"),
    ):
        with pytest.raises(amber.EncodeError) as info:
            copy_in(conn, "s", with_value(at, raw))
        assert info.value.path == f"$[{at}].t", (at, raw)
    assert conn.execute("SELECT count(*) FROM s").fetchone() == (0,)
