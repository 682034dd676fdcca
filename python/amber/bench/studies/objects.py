"""Study "objects": W1 small/medium/large and W2 through every codec (seed 003, ANCHORS.md §1).

Seed 003 timed `cPickle.dumps` of a small, medium and large list of dicts with protocol 0, the highest
protocol, and `Pickler.fast`; ANCHORS.md §1 adds the msgpack, JSON and CBOR codecs a user would pick
today and W2 from seed 002. Every number is a median and every ratio is against pickle protocol 5
timed in the same process, one workload at a time.
"""

from __future__ import annotations

from amber.bench import plots
from amber.bench.compare import Rows, codec_table, ratio_pairs
from amber.bench.runner import run_workload
from amber.bench.study import Context, Report, Study, StudyResult, register_study
from amber.bench.tables import Table, fmt_ratio, fmt_size
from amber.bench.workloads import Workload, w1, w2

PLOT = "objects_ratio.png"


def workloads(mode: str) -> list[Workload]:
    if mode == "tiny":
        return [w1("S"), w1("M", 100), w1("L", 1_000), w2(depth=5)]
    return [w1("S"), w1("M"), w1("L"), w2()]


@register_study
class ObjectsStudy(Study):
    name = "objects"
    description = "dumps/loads time and size of W1 (list of dicts) and W2 (nested dict) per codec"
    claim = "seed 003 (cPickle protocol 0 / highest / Pickler.fast) and ANCHORS.md section 1"
    rerun = "benches/run_objects.py"

    def run(self, ctx: Context) -> StudyResult:
        result = StudyResult(self.name)
        chosen = workloads(ctx.mode)
        result.params["workloads"] = [
            {"name": w.name, "description": w.description, "items": w.size} for w in chosen
        ]
        result.params["loads_input"] = "bytes"
        for workload in chosen:
            result.rows += run_workload(
                workload, ctx.codecs, ctx.policy, ctx.progress, label=f"{self.name} "
            )
        return result

    def report(self, result: StudyResult, ctx: Context) -> Report:
        rows = Rows(result.rows, ctx.baseline)
        names = rows.workloads()
        described = {w["name"]: w["description"] for w in result.params.get("workloads", [])}
        report = Report(
            title="objects: Python objects through each codec",
            intro=(
                f"Reruns {self.claim}. Median time per call; ratios divide by {ctx.baseline} in "
                "the same run (below 1 is faster). loads reads a `bytes` object. Every codec's "
                "round trip was checked exact (values, types, order) before it was timed."
            ),
        )
        report.tables.append(
            ratio_pairs(
                rows,
                names,
                title=f"Time ratio vs {ctx.baseline}, dumps / loads",
                caption="Compare with the table in ANCHORS.md section 1.",
            )
        )
        for name in names:
            report.tables.append(codec_table(rows, name, f"{name}: {described.get(name, '')}"))
        report.tables.append(self._sizes(rows, names))
        if ctx.plots:
            ratios = {
                op: {
                    codec: {w: r for w in names if (r := rows.ratio(w, codec, op)) is not None}
                    for codec in rows.codecs()
                }
                for op in plots.OPS
            }
            report.plots.append(
                plots.ratio_bars(
                    ctx.out_dir / PLOT,
                    ratios,
                    names,
                    rows.codecs(),
                    ctx.baseline,
                    "objects: time relative to " + ctx.baseline,
                )
            )
        return report

    @staticmethod
    def _sizes(rows: Rows, names: list[str]) -> Table:
        table = Table(
            title="Encoded size (ratio vs " + rows.baseline + ")",
            headers=["codec", *names],
        )
        for codec in rows.codecs():
            cells = []
            for name in names:
                row = rows.get(name, codec)
                size = None if row is None else row.size
                cells.append(f"{fmt_size(size)} ({fmt_ratio(rows.size_ratio(name, codec))})")
            table.add(codec, *cells)
        return table
