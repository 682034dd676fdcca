"""Study "scaling": W3, a dict of dicts from 100 to 1,000,000 entries (seed 000, ANCHORS.md §1).

Seed 000 unpickled dicts of dicts from the buffer a bytea column hands back and plotted time against
size on log-log axes. Here loads reads a read-only memoryview slice inside a larger buffer; a codec
whose loads rejects memoryview gets `bytes(view)`, the copy counted in its time and named in the
table. Time per entry shows where a codec stops scaling linearly (pickle's memo on dumps).
"""

from __future__ import annotations

from collections.abc import Sequence

from amber.bench import plots
from amber.bench.compare import NOISY, Rows, status_note
from amber.bench.runner import INPUT_COPY, run_workload
from amber.bench.study import Context, Report, Study, StudyResult, register_study
from amber.bench.tables import MISSING, Table, fmt_ratio, fmt_size, fmt_time
from amber.bench.workloads import W3_SIZES, w3

PLOT = "scaling.png"


def sizes(mode: str) -> tuple[int, ...]:
    if mode == "tiny":
        return (100, 1_000)
    if mode == "quick":
        return tuple(n for n in W3_SIZES if n <= 100_000)
    return W3_SIZES


@register_study
class ScalingStudy(Study):
    name = "scaling"
    description = "W3 dict of dicts, 100 to 1M entries, loads from a memoryview slice; log-log plot"
    claim = "seed 000 (unpickling dicts of dicts from a bytea buffer) and ANCHORS.md section 1"
    rerun = "benches/run_scaling.py"

    def run(self, ctx: Context) -> StudyResult:
        result = StudyResult(self.name)
        chosen = [w3(n) for n in sizes(ctx.mode)]
        result.params["workloads"] = [
            {"name": w.name, "description": w.description, "items": w.size} for w in chosen
        ]
        result.params["loads_input"] = "read-only memoryview slice of a larger buffer"
        for workload in chosen:
            result.rows += run_workload(
                workload,
                ctx.codecs,
                ctx.policy,
                ctx.progress,
                label=f"{self.name} ",
                from_view=True,
            )
        return result

    def report(self, result: StudyResult, ctx: Context) -> Report:
        rows = Rows(result.rows, ctx.baseline)
        entries = {w["name"]: int(w["items"]) for w in result.params.get("workloads", [])}
        names = [n for n in rows.workloads() if n in entries]
        report = Report(
            title="scaling: W3 dict of dicts by size",
            intro=(
                f"Reruns {self.claim}. Median time per call, ratio to {ctx.baseline} in the same "
                "run in parentheses. loads reads a read-only memoryview slice "
                '(`memoryview(b"HDR\\0" + payload + b"\\0TRL")[4:4 + len(payload)]`).'
            ),
        )
        for op in plots.OPS:
            report.tables.append(self._times(rows, names, op))
        report.tables.append(self._per_entry(rows, names, entries))
        copied = sorted({r.codec for r in rows.rows if r.loads_input == INPUT_COPY})
        report.notes.append(
            "loads of "
            + ", ".join(copied)
            + " refused the memoryview: they were given bytes(view), the copy counted in their time."
            if copied
            else "Every codec's loads read the memoryview slice directly (no copy)."
        )
        if ctx.plots:
            series = {
                op: {
                    codec: [
                        (entries[n], t / 1e9)
                        for n in names
                        if (t := rows.median(n, codec, op)) is not None
                    ]
                    for codec in rows.codecs()
                }
                for op in plots.OPS
            }
            report.plots.append(
                plots.loglog(
                    ctx.out_dir / PLOT,
                    series,
                    "scaling: W3 dict of dicts (loads from a memoryview slice)",
                    "entries",
                )
            )
        return report

    @staticmethod
    def _times(rows: Rows, names: Sequence[str], op: str) -> Table:
        table = Table(
            title=f"W3 {op}: median time (ratio vs {rows.baseline})",
            headers=["codec", *names, "note"],
            align="l" + "r" * len(names) + "l",
        )
        for codec in rows.codecs():
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
                note = status_note(row, spread=False)
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
        for codec in rows.codecs():
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
