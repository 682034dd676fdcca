"""The differential matrix: every type amber reads, with edge values, read through `fetch` and
`copy_out` into every `into` under session settings that change values (TimeZone, DateStyle,
IntervalStyle, client_encoding), compared with psycopg's binary loaders, then written back
through `copy_in` and compared in SQL with the original. Where amber documents a divergence
from psycopg (docs/pg.md), the documented behaviour is asserted."""

from __future__ import annotations

import datetime as dt
import decimal
import math
from typing import Any

import pytest
from psycopg.types.enum import EnumInfo, register_enum

import amber
from amber.pg import copy_in, copy_out, fetch

INTOS: tuple[Any, ...] = ("rows", "columns", "arrow", "pandas", "polars")

# (id, SQL type, values as SQL literals, client encodings the values fit; None: every one)
PLANES = "'\\u0080\\u07ff\\u0800\\uffff\\U00010000\\U0001F600\\U0010FFFF'"
CASES: list[tuple[str, str, list[str], tuple[str, ...] | None]] = [
    ("bool", "bool", ["true", "false"], None),
    ("int2", "int2", ["-32768", "32767", "0"], None),
    ("int4", "int4", ["-2147483648", "2147483647"], None),
    ("int8", "int8", ["-9223372036854775808", "9223372036854775807", "9007199254740993"], None),
    ("oid", "oid", ["0", "4294967295"], None),
    (
        "float4",
        "float4",
        ["'NaN'", "'Infinity'", "'-Infinity'", "'-0'", "'1.4e-45'", "'3.4028235e38'"],
        None,
    ),
    (
        "float8",
        "float8",
        [
            "'NaN'",
            "'-Infinity'",
            "'-0'",
            "'5e-324'",
            "'2.2250738585072014e-308'",
            "'1.7976931348623157e308'",
            "'0.1'",
        ],
        None,
    ),
    (
        "numeric",
        "numeric",
        [
            "'NaN'",
            "'Infinity'",
            "'-Infinity'",
            "'-0.000'",
            "'1.50'",
            "'1e-100'",
            "'-123456789012345678901234567890.123456789012345678901234567890'",
        ],
        None,
    ),
    ("text_ascii", "text", ["''", "'a''b\\\"c'", "' x '"], None),
    ("text_latin1", "text", ["E'\\u00e9\\u00ff\\u00a0'", "'Å'"], ("UTF8", "LATIN1")),
    ("text_planes", "text", [f"E{PLANES}", "E'\\U0001F600'"], ("UTF8",)),
    ("text_jp", "text", ["'日本語'", "'ｱｲｳ'"], ("UTF8", "EUC_JP")),
    ("varchar", "varchar(5)", ["'abc'", "''"], None),
    ("bpchar", "char(3)", ["'a'", "'abc'"], None),
    ("name", "name", ["'pg_class'", "''"], None),
    ("char", '"char"', ["'a'", "'z'"], None),
    ("bytea", "bytea", ["'\\x'", "'\\x00ff'"], None),
    ("json", "json", ["'{\"a\": [1, 2.5]}'", "'\"s\"'", "'[]'"], None),
    (
        "jsonb",
        "jsonb",
        ['\'{"é": "😀", "n": 1.50}\'', "'\"{}\"'", "'123456789012345678901'"],
        ("UTF8",),
    ),
    (
        "uuid",
        "uuid",
        ["'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'", "'00000000-0000-0000-0000-000000000000'"],
        None,
    ),
    (
        "date",
        "date",
        ["'infinity'", "'-infinity'", "'2000-02-29'", "'0001-01-02'", "'9999-12-30'"],
        None,
    ),
    ("time", "time", ["'00:00'", "'23:59:59.999999'", "'12:34:56.789'"], None),
    ("timetz", "timetz", ["'12:00+05:30'", "'00:00:00.000001-15:59'", "'23:59:59+00'"], None),
    (
        "timestamp",
        "timestamp",
        ["'infinity'", "'-infinity'", "'2000-01-01 00:00:00.000001'", "'0001-01-02'"],
        None,
    ),
    (
        "timestamptz",
        "timestamptz",
        [
            "'infinity'",
            "'-infinity'",
            "'2000-01-01 00:00+05:30'",
            "'1969-12-31 23:59:59.999999+00'",
        ],
        None,
    ),
    ("interval", "interval", ["'1 day 2 hours'", "'-1 microseconds'", "'100 days 00:00:01'"], None),
    ("interval_months", "interval", ["'1 mon'", "'1 year 2 mons 3 days'", "'-1 year'"], None),
    ("inet", "inet", ["'10.0.0.1/8'", "'::1'", "'192.168.0.1'", "'2001:db8::1/64'"], None),
    ("cidr", "cidr", ["'10.0.0.0/8'", "'2001:db8::/32'"], None),
    ("int4_array", "int4[]", ["'{}'", "'{NULL}'", "'{1,2}'"], None),
    ("int4_array_2d", "int4[]", ["'{}'", "'{{1,2},{3,NULL}}'"], None),
    ("int8_array_3d", "int8[]", ["'{{{1},{2}},{{3},{-9223372036854775808}}}'"], None),
    ("text_array", "text[]", ["'{}'", '\'{a,NULL,"","x,y","\\\\"}\''], None),
    ("text_array_planes", "text[]", [f"ARRAY[E{PLANES}, NULL]"], ("UTF8",)),
    ("float8_array", "float8[]", ["'{NaN,-0,Infinity,5e-324}'"], None),
    (
        "numeric_array",
        "numeric[]",
        ["'{1.50,NaN,Infinity,-Infinity,123456789012345678901234567890123456789012.5}'"],
        None,
    ),
    ("date_array", "date[]", ["'{2000-01-01,0001-01-02,NULL}'"], None),
    ("timestamptz_array", "timestamptz[]", ["'{2000-01-01 00:00+05:30,NULL}'"], None),
    ("uuid_array", "uuid[]", ["'{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11,NULL}'"], None),
    ("bytea_array", "bytea[]", ["'{\"\\\\x00ff\",NULL}'"], None),
    ("bool_array", "bool[]", ["'{t,f,NULL}'"], None),
    ("jsonb_array", "jsonb[]", ["ARRAY['{\"a\": 1}'::jsonb, '[1, 2]', NULL]"], None),
    ("inet_array", "inet[]", ["'{10.0.0.1/8,NULL}'"], None),
    ("int4range", "int4range", ["'[1,5)'", "'empty'", "'(,)'"], None),
    ("tstzrange", "tstzrange", ["'[2000-01-01 00:00+00,2001-01-01 00:00+05:30)'"], None),
    ("numrange", "numrange", ["'[1.50,2.5]'"], None),
    ("domain_int", "mx_posint", ["1", "2147483647"], None),
    ("domain_numeric", "mx_money", ["'1.50'", "'-0.01'"], None),
    ("enum", "mx_mood", ["'ok'", "'sad'"], None),
]

PROFILES = {
    "utc": {
        "TimeZone": "UTC",
        "DateStyle": "ISO, MDY",
        "IntervalStyle": "postgres",
        "client_encoding": "UTF8",
    },
    "stjohns_latin1": {
        "TimeZone": "America/St_Johns",
        "DateStyle": "SQL, DMY",
        "IntervalStyle": "sql_standard",
        "client_encoding": "LATIN1",
    },
    "kolkata_eucjp": {
        "TimeZone": "Asia/Kolkata",
        "DateStyle": "German",
        "IntervalStyle": "iso_8601",
        "client_encoding": "EUC_JP",
    },
    "honolulu": {
        "TimeZone": "Pacific/Honolulu",
        "DateStyle": "Postgres, YMD",
        "IntervalStyle": "postgres_verbose",
        "client_encoding": "UTF8",
    },
}

#: Types Arrow has no type for: refused in Arrow (docs/pg.md), objects in pandas and polars.
ARROW_REFUSES = {
    "jsonb_array",
    "int4range",
    "tstzrange",
    "numrange",
    "enum",
}
#: Defects other engineers are fixing, by (case, profile or None for every profile).
KNOWN: dict[tuple[str, str | None], str] = {}


def _params() -> list[Any]:
    out = []
    for case in CASES:
        for pname, prof in PROFILES.items():
            if case[3] is not None and prof["client_encoding"] not in case[3]:
                continue
            marks = []
            for key in ((case[0], pname), (case[0], None)):
                if key in KNOWN:
                    marks.append(pytest.mark.xfail(strict=True, reason=KNOWN[key]))
            out.append(pytest.param(case, pname, id=f"{case[0]}-{pname}", marks=marks))
    return out


@pytest.fixture(scope="module")
def source(pg_server: Any) -> Any:
    """The tables every case reads, made once (in UTF8): mx_<case> (i int, v type)."""
    with pg_server.connect(autocommit=True) as c:
        c.execute("DROP SCHEMA IF EXISTS mx CASCADE")
        c.execute("CREATE SCHEMA mx")
        c.execute("SET search_path TO mx, public")
        c.execute("CREATE DOMAIN mx_posint AS int4 CHECK (VALUE > 0)")
        c.execute("CREATE DOMAIN mx_money AS numeric(10, 2)")
        c.execute("CREATE TYPE mx_mood AS ENUM ('ok', 'sad')")
        for name, typ, values, _ in CASES:
            c.execute(f"CREATE TABLE mx_{name} (i int PRIMARY KEY, v {typ})")
            rows = ", ".join(f"({i}, {v})" for i, v in enumerate([*values, "NULL"]))
            c.execute(f"INSERT INTO mx_{name} VALUES {rows}")
    yield
    with pg_server.connect(autocommit=True) as c:
        c.execute("DROP SCHEMA mx CASCADE")


def _same(a: Any, b: Any) -> bool:
    """Equal values of the same type; NaN equals NaN, -0.0 differs from 0.0."""
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    if isinstance(a, decimal.Decimal) and isinstance(b, decimal.Decimal):
        return str(a) == str(b)
    if isinstance(a, dt.datetime) and isinstance(b, dt.datetime) and a.tzinfo and b.tzinfo:
        # timestamptz: amber gives UTC, psycopg the session's zone (documented): one instant.
        return a == b and a.utcoffset() == dt.timedelta(0)
    return type(a) is type(b) and a == b


def _oracle(conn: Any, table: str) -> list[Any]:
    """psycopg's binary loaders' values; where psycopg refuses a value (infinite dates and
    timestamps), the value amber documents (date.max/min, datetime.max/min)."""
    with conn.cursor(binary=True) as cur:
        try:
            return [r[0] for r in cur.execute(f"SELECT v FROM {table} ORDER BY i").fetchall()]
        except Exception:
            conn.rollback()
    out = []
    with conn.cursor(binary=True) as cur, conn.cursor() as text:
        n = text.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        for i in range(n):
            try:
                out.append(cur.execute(f"SELECT v FROM {table} WHERE i = %s", (i,)).fetchone()[0])
            except Exception:
                conn.rollback()
                t, s = text.execute(
                    f"SELECT pg_typeof(v)::text, v::text FROM {table} WHERE i = %s", (i,)
                ).fetchone()
                infinite = {
                    "date": (dt.date.max, dt.date.min),
                    "timestamp without time zone": (dt.datetime.max, dt.datetime.min),
                    "timestamp with time zone": (
                        dt.datetime.max.replace(tzinfo=dt.timezone.utc),
                        dt.datetime.min.replace(tzinfo=dt.timezone.utc),
                    ),
                }[t]
                out.append(infinite[0] if s == "infinity" else infinite[1])
    return out


def _compare_sql(typ: str) -> str:
    if typ in ("json", "jsonb"):
        # Parsed with json.loads, as psycopg does: equal JSON values (1.50 comes back as 1.5, and
        # json's spacing is not kept).
        return "a.v::jsonb IS NOT DISTINCT FROM b.v::jsonb"
    if typ == "jsonb[]":
        return "a.v::text IS NOT DISTINCT FROM b.v::text"
    if typ == "interval":
        # A timedelta is days and a non-negative time of day, written as psycopg's dumper writes
        # it: '-1 microseconds' goes back as the equal '-1 days +23:59:59.999999'.
        return "a.v IS NOT DISTINCT FROM b.v"
    return "a.v IS NOT DISTINCT FROM b.v AND a.v::text IS NOT DISTINCT FROM b.v::text"


@pytest.mark.parametrize(("case", "profile"), _params())
def test_matrix(pg_server: Any, source: Any, case: Any, profile: str) -> None:
    name, typ, _, _ = case
    table = f"mx.mx_{name}"
    with pg_server.connect() as conn:
        for k, v in PROFILES[profile].items():
            conn.execute(f"SELECT set_config('{k}', '{v}', false)")
        conn.execute("SET search_path TO mx, public")
        if name == "enum":
            info = EnumInfo.fetch(conn, "mx_mood")
            assert info is not None
            register_enum(info, conn)
        oracle = _oracle(conn, table)
        q = f"SELECT i, v FROM {table} ORDER BY i"
        conn.execute(f"CREATE TEMP TABLE back (i int, v {typ})")
        for read in (fetch, copy_out):
            rows = read(conn, q)
            got = [r[1] for r in rows]
            assert len(got) == len(oracle)
            for g, o in zip(got, oracle, strict=True):
                if name == "interval_months":
                    # psycopg's count of months' days (documented as the same).
                    assert g == o and type(g) is type(o), (g, o)
                else:
                    assert _same(g, o), (read.__name__, g, o)
            for into in INTOS:
                if into == "arrow" and name in ARROW_REFUSES:
                    with pytest.raises(
                        amber.DecodeError, match=r"column 'v' .*Arrow has no type"
                    ) as info:
                        read(conn, q, into=into)
                    assert info.value.kind == "unsupported"
                    continue
                data = rows if into == "rows" else read(conn, q, into=into)
                conn.execute("TRUNCATE back")
                copy_in(conn, "back", data, columns=None if into != "rows" else ["i", "v"])
                if name == "interval_months":
                    # Months are counted in days, as psycopg counts them (documented): what
                    # goes back is the timedelta read, not the months.
                    with conn.cursor(binary=True) as cur:
                        back = [r[0] for r in cur.execute("SELECT v FROM back ORDER BY i")]
                    assert back == oracle, (read.__name__, into, back)
                    continue
                diff = conn.execute(
                    f"SELECT a.i FROM {table} a FULL JOIN back b USING (i)"
                    f" WHERE NOT ({_compare_sql(typ)})"
                ).fetchall()
                assert diff == [], (read.__name__, into, diff)
        conn.rollback()
