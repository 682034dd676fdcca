"""Study "scaling": W3, a dict of dicts from 100 to 1,000,000 entries, decoded from a buffer slice.

The question is how each codec's time grows with the size of one object, as when a whole table is
stored in one database column and read back: a PostgreSQL bytea value arrives as a slice of a larger
buffer. So loads reads a read-only memoryview slice inside a larger buffer; a codec whose loads
rejects memoryview gets `bytes(view)`, the copy counted in its time and named in the table. Time per
entry shows where a codec stops scaling linearly (pickle's memo on dumps); the plot is log-log.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from amber.bench.engine import plots
from amber.bench.engine.registry import register_study
from amber.bench.engine.rows import NOISY, Rows, ratio_figure, status_note
from amber.bench.engine.study import Context, Mode, Report, Study, StudyResult, describe_workloads
from amber.bench.engine.tables import MISSING, Table, fmt_ratio, fmt_size, fmt_time
from amber.bench.parts.codec.contenders import (
    CODEC,
    INPUT_COPY,
    INPUT_MEMORYVIEW,
    LOADS_INPUT,
    SAID,
)
from amber.bench.parts.codec.workloads import W3_SIZES, w3

PLOT = "scaling.png"
OPS = ("dumps", "loads")
FROM_VIEW = {LOADS_INPUT: INPUT_MEMORYVIEW}


def sizes(mode: str) -> tuple[int, ...]:
    if mode == "tiny":
        return (100, 1_000)
    if mode == "quick":
        return tuple(n for n in W3_SIZES if n <= 100_000)
    return W3_SIZES


@register_study
class ScalingStudy(Study):
    name = "scaling"
    part = CODEC.name
    description = "W3 dict of dicts, 100 to 1M entries, loads from a memoryview slice; log-log plot"
    rerun = "benches/run_scaling.py"

    def workload_count(self, mode: Mode) -> int:
        return len(sizes(mode))

    def run(self, ctx: Context) -> StudyResult:
        result = StudyResult(self.name)
        chosen = [dataclasses.replace(w3(n), options=FROM_VIEW) for n in sizes(ctx.mode)]
        result.params["workloads"] = describe_workloads(chosen)
        result.params["loads_input"] = "read-only memoryview slice of a larger buffer"
        for workload in chosen:
            result.rows += ctx.measure(workload)
        return result

    def report(self, result: StudyResult, ctx: Context) -> Report:
        rows = Rows(result.rows, ctx.baseline)
        entries = {w["name"]: int(w["items"]) for w in result.params.get("workloads", [])}
        names = [n for n in rows.workloads() if n in entries]
        report = Report(
            title="scaling: W3 dict of dicts by size",
            intro=(
                "W3, a dict of `{id, value, name}` dicts, at every size. Median time per call, "
                f"ratio to {ctx.baseline} in the same run in parentheses. loads reads a read-only memoryview slice "
                '(`memoryview(b"HDR\\0" + payload + b"\\0TRL")[4:4 + len(payload)]`).'
            ),
        )
        for op in OPS:
            report.tables.append(self._times(rows, names, op))
        report.tables.append(self._per_entry(rows, names, entries))
        copied = sorted({r.contender for r in rows.rows if r.input == INPUT_COPY})
        report.notes.append(
            "loads of "
            + ", ".join(copied)
            + " refused the memoryview: they were given bytes(view), the copy counted in their time."
            if copied
            else "Every codec's loads read the memoryview slice directly (no copy)."
        )
        if ctx.plots and names:
            series = {
                op: {
                    codec: [
                        p for n in names if (p := rows.point(n, codec, op, entries[n])) is not None
                    ]
                    for codec in rows.contenders()
                }
                for op in OPS
            }
            report.plots.append(
                plots.loglog(
                    ctx.out_dir / PLOT,
                    series,
                    "scaling: W3 dict of dicts (loads from a memoryview slice)",
                    "entries",
                    footer=ctx.footer,
                )
            )
            report.plots += ratio_figure(
                rows,
                OPS,
                ctx,
                "scaling_ratio",
                f"scaling: time relative to {ctx.baseline}, by number of entries",
                labels={n: f"{entries[n]:,}" for n in names},
            )
        return report

    @staticmethod
    def _times(rows: Rows, names: Sequence[str], op: str) -> Table:
        table = Table(
            title=f"W3 {op}: median time (ratio vs {rows.baseline})",
            headers=["codec", *names, "note"],
            align="l" + "r" * len(names) + "l",
        )
        for codec in rows.contenders():
            cells = []
            notes: list[str] = []
            for name in names:
                row = rows.get(name, codec)
                if row is None:
                    cells.append(MISSING)
                    continue
                t = rows.median(name, codec, op)
                r = rows.ratio(name, codec, op)
                cells.append(MISSING if t is None else f"{fmt_time(t)} ({fmt_ratio(r)})")
                note = status_note(row, spread=False, said=SAID.get(row.input, ""))
                if note and note not in notes:
                    notes.append(note)
                if op in row.ops and row.ops[op].spread > NOISY:
                    notes.append(f"{name} samples spread {row.ops[op].spread:.0%}")
            table.add(codec, *cells, "; ".join(notes))
        return table

    @staticmethod
    def _per_entry(rows: Rows, names: Sequence[str], entries: dict[str, int]) -> Table:
        table = Table(
            title="W3 per entry: dumps / loads in ns, and encoded size at the largest size",
            headers=["codec", *names, f"size ({names[-1]})" if names else "size"],
        )
        for codec in rows.contenders():
            cells = []
            for name in names:
                d, lo = rows.median(name, codec, "dumps"), rows.median(name, codec, "loads")
                n = entries[name]
                cells.append(
                    MISSING if d is None or lo is None else f"{d / n:,.0f} / {lo / n:,.0f}"
                )
            last = rows.get(names[-1], codec) if names else None
            table.add(codec, *cells, fmt_size(None if last is None else last.size))
        return table
