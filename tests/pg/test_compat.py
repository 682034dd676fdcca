"""The compatibility promise (docs/compatibility.md) for PostgreSQL COPY BINARY streams, tested on
the stream each release wrote: parsed back exactly, still written byte for byte, loaded by
PostgreSQL, and refused when it sets a critical flag amber does not know.

`tests/golden/v<release>/` holds what that release of amber wrote (made by
`tests/golden/make_files.py`); tests/golden/releases.py lists the releases."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import amber
from tests.golden import make_files as golden
from tests.golden.releases import NEWEST, RELEASES
from tests.support.exact import assert_exact

# --- PostgreSQL COPY -------------------------------------------------------------------------

PG_FILES = [r for r in RELEASES if (r / "pg" / "copy.pgcopy").exists()]


@pytest.mark.parametrize("release", PG_FILES, ids=[r.name for r in PG_FILES])
def test_copy_stream_parses(release: Path) -> None:
    got = golden.pg_parse((release / "pg" / "copy.pgcopy").read_bytes())
    assert_exact(got, golden.pg_rows())


def test_copy_stream_is_what_amber_writes() -> None:
    assert golden.pg_stream(golden.pg_rows()) == (NEWEST / "pg" / "copy.pgcopy").read_bytes()


@pytest.mark.parametrize("release", PG_FILES, ids=[r.name for r in PG_FILES])
def test_copy_stream_loads_into_postgres(release: Path, conn: Any) -> None:
    """The stream is what PostgreSQL reads: COPY it into a table, read it back with amber.pg."""
    from psycopg import sql

    import amber.pg

    columns = sql.SQL(", ").join(
        sql.SQL("{} {}").format(sql.Identifier(name), sql.SQL(kind))
        for name, kind, _ in golden.PG_COLUMNS
    )
    table = sql.Identifier(golden.PG_TABLE)
    conn.execute(sql.SQL("CREATE TEMP TABLE {} ({})").format(table, columns))
    with (
        conn.cursor() as cur,
        cur.copy(sql.SQL("COPY {} FROM STDIN (FORMAT BINARY)").format(table)) as copy,
    ):
        copy.write((release / "pg" / "copy.pgcopy").read_bytes())
    query = f"SELECT * FROM {golden.PG_TABLE} ORDER BY id"
    assert_exact(amber.pg.copy_out(conn, query), golden.pg_rows())
    assert_exact(amber.pg.fetch(conn, query), golden.pg_rows())


def test_copy_stream_with_an_unknown_critical_flag_is_refused() -> None:
    """PostgreSQL's COPY header: flag bits 16-31 are critical (bit 16, OIDs, is not read by
    amber), bits 0-15 are not and are ignored."""
    data = bytearray((NEWEST / "pg" / "copy.pgcopy").read_bytes())
    flags = slice(11, 15)
    data[flags] = (1 << 3).to_bytes(4, "big")
    assert_exact(golden.pg_parse(bytes(data)), golden.pg_rows())
    for bit, message in ((16, "OIDs"), (17, "unknown critical flags 0x00020000")):
        data[flags] = (1 << bit).to_bytes(4, "big")
        with pytest.raises(amber.DecodeError, match=message) as e:
            golden.pg_parse(bytes(data))
        assert e.value.kind == "unsupported"
