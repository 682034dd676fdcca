"""What amber reads, copy_in writes back, against a real PostgreSQL server: the types Arrow has no
type for (timetz, inet, cidr and their arrays) come back into Arrow and polars as text that
copy_in parses exactly, into the same column type, from every kind of input that holds strings
(rows, object columns, pandas' string dtype, Arrow and polars strings); malformed text is
refused naming its row and column; psycopg Enum members go into enum columns by the label
psycopg's dumper gives them (register_enum's mapping included), and a member of another enum
is refused where it is written. psycopg's binary loaders are the oracle for the values; SQL
(`IS NOT DISTINCT FROM` and the text form) says that what went back is what was there.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import enum
import ipaddress
import uuid
from collections.abc import Iterator
from typing import Any

import pandas as pd
import polars as pl
import psycopg
import pyarrow as pa
import pytest
from psycopg import sql
from psycopg.types.enum import EnumInfo, register_enum

import amber
from amber.pg import copy_in, copy_out, fetch

INTOS = ["rows", "columns", "arrow", "pandas", "polars"]

#: (type, SQL literals): every offset form (hours, minutes, seconds, both signs, the limits),
#: fractions (24:00, which Python's time cannot hold, is refused: see below); IPv4 and IPv6 hosts and networks, mapped addresses, zero prefixes.
CASES = {
    "timetz": [
        "'12:00+05'",
        "'12:00:00.5-03:30:15'",
        "'00:00:00.000001+15:59:59'",
        "'23:59:59.999999-15:59:59'",
        "'00:00:00-00:00:01'",
        "'07:08:09.010203+00:00:59'",
    ],
    "inet": [
        "'192.168.0.1'",
        "'192.168.0.1/24'",
        "'0.0.0.0/0'",
        "'::1'",
        "'2001:db8::1/64'",
        "'::ffff:1.2.3.4'",
        "'fe80::1:2:3:4/128'",
    ],
    "cidr": ["'10.0.0.0/8'", "'1.2.3.4/32'", "'::/0'", "'2001:db8::/32'", "'::ffff:0.0.0.0/96'"],
    "timetz[]": ["ARRAY['12:00+05'::timetz, NULL, '01:02:03.4-00:00:01']", "'{}'"],
    "inet[]": ["ARRAY['1.2.3.4/16'::inet, '::1', NULL]", "'{10.0.0.1,10.0.0.2}'"],
    "timetz[][]": ["'{{12:00+01,NULL},{13:00-01,00:00Z}}'"],
    "cidr[]": ["ARRAY['10.0.0.0/8'::cidr, NULL]"],
}


@pytest.fixture
def tables(pg_server: Any) -> Iterator[str]:
    """A schema of the test's own with `src_<n>` (i int, v type) holding each case's values and
    a NULL, and `back_<n>` of the same shape, empty."""
    schema = f"rt_{uuid.uuid4().hex[:12]}"
    with pg_server.connect(autocommit=True) as c:
        c.execute(sql.SQL("create schema {}").format(sql.Identifier(schema)))
        c.execute(sql.SQL("set search_path = {}").format(sql.Identifier(schema)))
        for n, (typ, values) in enumerate(CASES.items()):
            rows = ", ".join(f"({i}, {v})" for i, v in enumerate([*values, "NULL"]))
            c.execute(f"create table src_{n} (i int primary key, v {typ})")
            c.execute(f"insert into src_{n} values {rows}")
            c.execute(f"create table back_{n} (i int, v {typ})")
        c.execute("create type mood as enum ('ok', 'sad', 'très bien')")
        c.execute("create type color as enum ('ok', 'red')")
        c.execute("create table moods (i int, v mood)")
        yield schema
        c.execute(sql.SQL("drop schema {} cascade").format(sql.Identifier(schema)))


@pytest.fixture
def rconn(pg_server: Any, tables: str) -> Iterator[psycopg.Connection[Any]]:
    with pg_server.connect(autocommit=True) as c:
        c.execute(sql.SQL("set search_path = {}").format(sql.Identifier(tables)))
        yield c


def _text(v: Any) -> Any:
    """The Arrow text of a value psycopg loads: ISO time with its full offset, ipaddress's str."""
    if v is None:
        return None
    if isinstance(v, list):
        return [_text(x) for x in v]
    return v.isoformat() if isinstance(v, dt.time) else str(v)


def _unchanged(conn: Any, n: int) -> None:
    diff = conn.execute(
        f"select i from src_{n} a full join back_{n} b using (i) "
        "where not (a.v is not distinct from b.v and a.v::text is not distinct from b.v::text)"
    ).fetchall()
    assert diff == []


@pytest.mark.parametrize("read", [copy_out, fetch])
@pytest.mark.parametrize("into", INTOS)
def test_text_typed_columns_go_back_exactly(rconn: Any, read: Any, into: Any) -> None:
    """timetz, inet, cidr and their arrays read into every `into` and written back with
    copy_in into the same type: every value is as it was (value and text form); in Arrow and
    polars they are strings equal to the text of psycopg's values."""
    for n, typ in enumerate(CASES):
        q = f"select i, v from src_{n} order by i"
        with rconn.cursor(binary=True) as cur:
            oracle = [r[1] for r in cur.execute(q)]
        got = read(rconn, q, into=into)
        if into == "arrow":
            want_type: Any = pa.large_string()
            for _ in range(typ.count("[]")):
                want_type = pa.list_(want_type)
            assert got.schema.field("v").type == want_type
            assert got.column("v").to_pylist() == [_text(v) for v in oracle]
        elif into == "polars":
            assert got["v"].to_list() == [_text(v) for v in oracle]
        elif into == "rows":
            assert [r[1] for r in got] == oracle
        rconn.execute(f"truncate back_{n}")
        assert copy_in(rconn, f"back_{n}", got, columns=["i", "v"]) == len(oracle)
        _unchanged(rconn, n)


@pytest.mark.parametrize("into", INTOS)
def test_timetz_2400_is_refused_in_every_into(rconn: Any, into: Any) -> None:
    """timetz 24:00 (psycopg refuses it too) is refused naming its row, not turned into text
    in Arrow alone."""
    for read in (copy_out, fetch):
        with pytest.raises(amber.DecodeError) as ei:
            read(rconn, "select 1 as i, '24:00:00+01'::timetz as v", into=into)
        assert ei.value.path == "$[0].v"


def test_strings_of_every_source_go_into_timetz_inet_cidr(rconn: Any) -> None:
    """The same text from rows, a dict of lists, a pandas object column, pandas' str dtype, a
    pyarrow string and string_view array, and a polars String column."""
    values = {
        "timetz": ["12:00:00+05:00", "12:00:00.5-03:30:15", "23:59:59.999999+15:59:59", None],
        "inet": ["192.168.0.1", "192.168.0.1/24", "2001:db8::1/64", None],
        "cidr": ["10.0.0.0/8", "::ffff:0.0.0.0/96", "1.2.3.4/32", None],
    }
    for typ, texts in values.items():
        rconn.execute(f"create temp table t_{typ} (i int, v {typ})")
        want = rconn.execute(
            "select array_agg(x::" + typ + "::text) from unnest(%s::text[]) x", (texts,)
        ).fetchone()[0]
        ids = list(range(len(texts)))
        sources: list[Any] = [
            list(zip(ids, texts, strict=True)),
            {"i": ids, "v": list(texts)},
            pd.DataFrame({"i": ids, "v": pd.Series(texts, dtype=object)}),
            pd.DataFrame({"i": ids, "v": pd.Series(texts, dtype="str")}),
            pa.table({"i": ids, "v": pa.array(texts, pa.string())}),
            pa.table({"i": ids, "v": pa.array(texts, pa.large_string())}),
            pa.table({"i": ids, "v": pa.array(texts, pa.string_view())}),
            pl.DataFrame({"i": ids, "v": texts}),
        ]
        for data in sources:
            rconn.execute(f"truncate t_{typ}")
            copy_in(rconn, f"t_{typ}", data, columns=["i", "v"])
            back = rconn.execute(f"select array_agg(v::text order by i) from t_{typ}").fetchone()
            assert back[0] == want, (typ, type(data))


@pytest.mark.parametrize(
    ("typ", "bad"),
    [
        ("timetz", "12:00:00"),  # no offset
        ("timetz", "12:00:00 +05"),
        ("timetz", "12:00:00.1234567+05"),  # not exact in microseconds
        ("timetz", "12:00:00+05:60"),
        ("timetz", "12:00:00 Europe/Paris"),
        ("timetz", "25:00:00+00"),
        ("timetz", "12:00:00+16"),
        ("inet", "1.2.3.4/33"),
        ("inet", "not an address"),
        ("cidr", "10.0.0.1/8"),  # host bits set
    ],
)
def test_malformed_text_is_refused_naming_row_and_column(rconn: Any, typ: str, bad: str) -> None:
    rconn.execute(f"create temp table m (i int, v {typ})")
    good = {"timetz": "01:00+01", "inet": "1.2.3.4", "cidr": "10.0.0.0/8"}[typ]
    texts = [good, good, bad]
    for data in (
        [(i, t) for i, t in enumerate(texts)],
        pd.DataFrame({"i": [0, 1, 2], "v": pd.Series(texts, dtype="str")}),
        pa.table({"i": [0, 1, 2], "v": texts}),
        pl.DataFrame({"i": [0, 1, 2], "v": texts}),
    ):
        with pytest.raises(amber.EncodeError) as ei:
            copy_in(rconn, "m", data, columns=["i", "v"])
        assert ei.value.path == "$[2].v", type(data)
        assert ei.value.kind in ("invalid_value", "out_of_range")
        assert rconn.execute("select count(*) from m").fetchone() == (0,)


# --- enums ---------------------------------------------------------------------------------


class Mood(enum.Enum):
    OK = 1
    SAD = 2
    GREAT = 3


class Shade(str, enum.Enum):
    ok = "ok-value"
    red = "red-value"


def _moods(conn: Any) -> list[tuple[Any, ...]]:
    return list(conn.execute("select i, v::text from moods order by i").fetchall())


def test_enum_members_go_in_by_psycopgs_label(rconn: Any) -> None:
    """A member of an enum registered with a custom mapping goes in as its mapped label (a
    non-ASCII one included), as psycopg writes it; what amber then reads is that member, and
    it goes back again; plain str labels go in as they are."""
    info = EnumInfo.fetch(rconn, "mood")
    assert info is not None
    register_enum(
        info, rconn, Mood, mapping={Mood.OK: "ok", Mood.SAD: "sad", Mood.GREAT: "très bien"}
    )
    rows = [(0, Mood.GREAT), (1, "sad"), (2, None), (3, Mood.OK)]
    assert copy_in(rconn, "moods", rows) == 4
    want = [(0, "très bien"), (1, "sad"), (2, None), (3, "ok")]
    assert _moods(rconn) == want
    # psycopg writes the same.
    with rconn.transaction(force_rollback=True):
        rconn.execute("truncate moods")
        with rconn.cursor(binary=True) as cur:
            cur.executemany("insert into moods values (%s, %s)", rows)
        assert _moods(rconn) == want
    into: Any
    for into in INTOS:
        for read in (copy_out, fetch):
            if into == "arrow":
                with pytest.raises(amber.DecodeError) as ei:
                    read(rconn, "select i, v from moods order by i", into=into)
                assert ei.value.kind == "unsupported" and ei.value.path == "$[*].v"
                continue
            got = read(rconn, "select i, v from moods order by i", into=into)
            if into == "rows":
                assert got == [(0, Mood.GREAT), (1, Mood.SAD), (2, None), (3, Mood.OK)]
            rconn.execute("create temp table mback (i int, v mood)")
            copy_in(rconn, "mback", got, columns=["i", "v"] if into == "rows" else None)
            back = rconn.execute("select array_agg(v::text order by i) from mback").fetchone()
            assert back == (["très bien", "sad", None, "ok"],), (read.__name__, into)
            rconn.execute("drop table mback")


def test_enum_members_by_psycopgs_dumper_whatever_the_class(rconn: Any) -> None:
    """Without register_enum psycopg dumps a member by its name, and a str enum by its value
    (str's dumper): so does copy_in, in rows and in a pandas object column."""

    class Plain(enum.Enum):
        ok = 10
        sad = 20

    copy_in(rconn, "moods", [(0, Plain.sad)])
    frame = pd.DataFrame({"i": [1, 2], "v": pd.Series([Plain.ok, None], dtype=object)})
    copy_in(rconn, "moods", frame)
    assert _moods(rconn) == [(0, "sad"), (1, "ok"), (2, None)]
    rconn.execute("truncate moods")
    with pytest.raises(psycopg.errors.InvalidTextRepresentation):
        copy_in(rconn, "moods", [(0, Shade.ok)])  # 'ok-value' is no label of mood
    assert rconn.execute("select count(*) from moods").fetchone() == (0,)


def test_enum_arrays_go_in_through_psycopgs_array_dumper(rconn: Any) -> None:
    """An array of a registered enum is written by psycopg's array dumper for that type, made
    as psycopg's own COPY makes it (its elements by the enum's dumper), NULL elements and
    several dimensions included; what amber reads back is the same members."""
    info = EnumInfo.fetch(rconn, "mood")
    assert info is not None
    register_enum(
        info, rconn, Mood, mapping={Mood.OK: "ok", Mood.SAD: "sad", Mood.GREAT: "très bien"}
    )
    rconn.execute("create temp table marr (i int, v mood[])")
    rows = [(0, [Mood.GREAT, None, Mood.OK]), (1, [[Mood.SAD], [Mood.OK]]), (2, []), (3, None)]
    assert copy_in(rconn, "marr", rows) == 4
    got = rconn.execute("select v::text from marr order by i").fetchall()
    assert got == [('{"très bien",NULL,ok}',), ("{{sad},{ok}}",), ("{}",), (None,)]
    assert fetch(rconn, "select i, v from marr order by i") == rows
    with pytest.raises(amber.EncodeError) as ei:
        copy_in(rconn, "marr", [(4, [Mood.OK]), (5, [object()])])
    assert ei.value.path == "$[1].v"
    assert rconn.execute("select count(*) from marr").fetchone() == (4,)


def test_a_member_of_another_registered_enum_is_refused(rconn: Any) -> None:
    """`color` has a label 'ok' too: a color member is refused in a mood column (naming the
    row and the column), not written as the mood 'ok'."""
    info = EnumInfo.fetch(rconn, "color")
    assert info is not None
    register_enum(info, rconn)
    color = info.enum
    assert color is not None
    for data in (
        [(0, "ok"), (1, color["ok"])],
        pd.DataFrame({"i": [0, 1], "v": pd.Series(["ok", color["ok"]], dtype=object)}),
        {"i": [0, 1], "v": ["ok", color["ok"]]},
    ):
        with pytest.raises(amber.EncodeError) as ei:
            copy_in(rconn, "moods", data, columns=["i", "v"])
        assert ei.value.kind == "type_mismatch" and ei.value.path == "$[1].v"
        assert "color" in str(ei.value) and "mood" in str(ei.value)
    assert rconn.execute("select count(*) from moods").fetchone() == (0,)


def test_async_copy_in_writes_enum_members_and_timetz_text(pg_server: Any, tables: str) -> None:
    async def run() -> None:
        aconn = await psycopg.AsyncConnection.connect(pg_server.dsn, autocommit=True)
        try:
            await aconn.execute(sql.SQL("set search_path = {}").format(sql.Identifier(tables)))
            info = await EnumInfo.fetch(aconn, "mood")
            assert info is not None
            register_enum(info, aconn, Mood, mapping={Mood.OK: "ok", Mood.SAD: "sad"})
            await copy_in(aconn, "moods", [(0, Mood.SAD), (1, "ok")])
            cur = await aconn.execute("select v::text from moods order by i")
            assert await cur.fetchall() == [("sad",), ("ok",)]
            await aconn.execute("create temp table tz (v timetz)")
            await copy_in(aconn, "tz", pa.table({"v": ["12:00:00-03:30:15"]}))
            cur = await aconn.execute("select v::text from tz")
            assert await cur.fetchall() == [("12:00:00-03:30:15",)]
        finally:
            await aconn.close()

    asyncio.run(run())


def test_inet_text_is_psycopgs_value(rconn: Any) -> None:
    """The Arrow text of inet and cidr parses to psycopg's values with ipaddress (a host as an
    address, a network as a network), so pandas users can rebuild the objects from polars."""
    got = copy_out(rconn, "select v from src_1 order by i", into="polars")["v"].to_list()
    with rconn.cursor(binary=True) as cur:
        oracle = [r[0] for r in cur.execute("select v from src_1 order by i")]
    for text, value in zip(got, oracle, strict=True):
        if value is None:
            assert text is None
        elif isinstance(value, (ipaddress.IPv4Interface, ipaddress.IPv6Interface)):
            assert "/" in text and ipaddress.ip_interface(text) == value
        else:  # a host: psycopg's ip_address, written without a prefix
            assert ipaddress.ip_address(text) == value
