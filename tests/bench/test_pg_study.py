"""The pg part of the benchmark: drivers against a throwaway PostgreSQL, checked and timed by
client CPU."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from amber.bench import BenchConfig, run
from amber.bench.engine.measure import (
    NOT_EXACT,
    OK,
)
from tests.bench.support import assert_plots

# --- the pg part: drivers against a throwaway PostgreSQL, by client CPU ----------------------------


def test_pg_checks_take_each_drivers_containers_and_refuse_other_values() -> None:
    from datetime import timezone

    from amber.bench.parts.pg.check import differs
    from amber.bench.parts.pg.workloads import COLUMNS, table_rows

    rows = table_rows(50)
    assert differs(rows, rows) is None
    assert differs(rows, [(*r[:4], memoryview(r[4])) for r in rows]) is None  # psycopg2's bytea
    numpy_like = {  # a dict of columns, timestamps naive in UTC as NumPy gives them
        name: [v.astimezone(timezone.utc).replace(tzinfo=None) if j == 3 else v for v in col]
        for j, (name, col) in enumerate(zip(COLUMNS, zip(*rows, strict=True), strict=True))
    }
    assert differs(rows, numpy_like) is None
    assert differs(rows, rows[::-1]) is not None
    assert differs(rows, rows[::-1], any_order=True) is None  # a parallel scan's interleaving
    why = differs(rows, [(float(r[0]), *r[1:]) for r in rows], COLUMNS)
    assert why is not None and why.startswith("id row 0: 0.0 (float)")
    why = differs(rows, [(r[0], round(r[1], 3), *r[2:]) for r in rows], COLUMNS)
    assert why is not None and why.startswith("x row 0")


def test_an_amber_pg_function_this_build_lacks_makes_its_contender_unavailable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("psycopg")
    import amber.pg
    from amber.bench.parts.pg.contenders import PG

    monkeypatch.delattr(amber.pg, "copy_in", raising=False)
    found, skipped = PG.resolve(["amber-copy-in"])
    assert not found
    assert skipped[0].reason == (
        "unavailable (AttributeError: amber.pg has no copy_in() in this build)"
    )


def test_the_pg_studies_check_and_time_each_driver_on_one_server(tmp_path: Path) -> None:
    pytest.importorskip("psycopg")
    from decimal import Decimal

    from amber.bench.parts.pg.contenders import PG
    from amber.bench.parts.pg.jobs import pg_contender, psycopg_conn, read_job
    from amber.bench.parts.pg.workloads import READ, READ_QUERY, query_params

    def rounded(conn: Any) -> list[tuple[Any, ...]]:
        return [(r[0], round(r[1], 2), *r[2:]) for r in conn.execute(READ_QUERY).fetchall()]

    wrong = pg_contender("pg-wrong", psycopg_conn, {READ: read_job(rounded, "x rounded")}, None)
    names = ["psycopg-binary", "psycopg2", "asyncpg", "amber-register", "amber-store"]
    names += ["amber-copy-in", "amber-copy-out", "amber-fetch"]  # when this build has them
    found, _ = PG.resolve(names)
    result = run(
        BenchConfig(out_dir=tmp_path, mode="tiny", progress=False, studies=["pg", "bytea"]),
        contenders={"pg": [*found, wrong]},
        stdout=io.StringIO(),
    )
    data = json.loads(result.results.read_text())
    if "server" not in data["studies"]["pg"]["params"]:
        pytest.skip("no PostgreSQL server: " + "; ".join(data["studies"]["pg"]["notes"]))
    kinds = {c.name: c.kinds or frozenset() for c in found}
    seen = set()
    expected = {"pg": {"load-1k", "read-1k", "query-27col-x3"}, "bytea": {"bytea-1", "bytea-10"}}
    for name, workloads in expected.items():
        study = data["studies"][name]
        assert study["part"] == "pg" and study["params"]["server"]["version"]
        assert {r["workload"] for r in study["rows"]} == workloads
        for row in study["rows"]:
            seen.add(row["contender"])
            if row["contender"] == "pg-wrong":
                assert row["status"] == NOT_EXACT
                assert row["note"].startswith("what was read differs: x row")
                continue
            assert row["status"] == OK, row["note"]
            (op,) = (op for op in row["ops"] if " " not in op)  # the job: load, read, ...
            assert op in kinds[row["contender"]]
            assert set(row["ops"]) == {op, f"{op} wall", f"{op} user", f"{op} sys"}
    assert seen == {*kinds, "pg-wrong"}  # every driver ran in one study or the other
    report = result.report.read_text()
    assert "pg: PostgreSQL drivers, client CPU" in report and "Server: PostgreSQL" in report
    first = (1, Decimal("0.4"), query_params()[2], 2, Decimal("0.8"))  # psycopg2: numeric literals
    assert f"got 3,000 x {first!r} ..." in report
    assert_plots(result.report, "pg_ratio", "bytea")
