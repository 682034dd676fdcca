"""Study "objects": W1 small/medium/large and W2 through every codec, dumps and loads.

The question is the everyday one: how long does it take to turn a program's records (W1, a list of
flat dicts) or a deep document (W2, a nested dict) into bytes and back, and how many bytes does it
take, with amber, with pickle (protocol 5, its `Pickler.fast` variant without a memo, and protocol
0), and with the msgpack, JSON and CBOR codecs users pick today. Every number is a median and every
ratio is against pickle protocol 5 timed in the same process, one workload at a time.
"""

from __future__ import annotations

from amber.bench.engine.contender import Workload
from amber.bench.engine.registry import register_study
from amber.bench.engine.rows import Rows, contender_table, ratio_figure, ratio_pairs
from amber.bench.engine.study import Context, Mode, Report, Study, StudyResult, describe_workloads
from amber.bench.engine.tables import Table, fmt_ratio, fmt_size
from amber.bench.parts.codec.contenders import CODEC, INPUT_BYTES, SAID
from amber.bench.parts.codec.workloads import w1, w2

PLOT = "objects_ratio"
OPS = ("dumps", "loads")


def workloads(mode: str) -> list[Workload]:
    if mode == "tiny":
        return [w1("S"), w1("M", 100), w1("L", 1_000), w2(depth=5)]
    return [w1("S"), w1("M"), w1("L"), w2()]


@register_study
class ObjectsStudy(Study):
    name = "objects"
    part = CODEC.name
    description = "dumps/loads time and size of W1 (list of dicts) and W2 (nested dict) per codec"
    rerun = "benches/run_objects.py"

    def workload_count(self, mode: Mode) -> int:
        return len(workloads(mode))

    def run(self, ctx: Context) -> StudyResult:
        result = StudyResult(self.name)
        chosen = workloads(ctx.mode)
        result.params["workloads"] = describe_workloads(chosen)
        result.params["loads_input"] = INPUT_BYTES
        for workload in chosen:
            result.rows += ctx.measure(workload)
        return result

    def report(self, result: StudyResult, ctx: Context) -> Report:
        rows = Rows(result.rows, ctx.baseline)
        names = rows.workloads()
        described = {w["name"]: w["description"] for w in result.params.get("workloads", [])}
        report = Report(
            title="objects: Python objects through each codec",
            intro=(
                "W1 (lists of 10-key dicts) and W2 (a nested dict) encoded (dumps) and decoded "
                f"(loads) by each codec. Median time per call; ratios divide by {ctx.baseline} in "
                "the same run (below 1 is faster). loads reads a `bytes` object. Every codec's "
                "round trip was checked exact (values, types, order) before it was timed."
            ),
        )
        report.tables.append(
            ratio_pairs(
                rows,
                names,
                OPS,
                title=f"Time ratio vs {ctx.baseline}, dumps / loads",
                label="codec",
                caption="Compare with the published table in docs/benchmarks.md.",
            )
        )
        for name in names:
            title = f"{name}: {described.get(name, '')}"
            report.tables.append(contender_table(rows, name, OPS, title, label="codec", said=SAID))
        report.tables.append(self._sizes(rows, names))
        items = {w["name"]: int(w["items"]) for w in result.params.get("workloads", [])}
        report.plots += ratio_figure(
            rows,
            OPS,
            ctx,
            PLOT,
            f"objects: time relative to {ctx.baseline} (W1: lists of 10-key dicts, W2: a nested dict)",
            labels={n: f"{n}\n{items[n]:,} items" for n in names if items.get(n)},
        )
        return report

    @staticmethod
    def _sizes(rows: Rows, names: list[str]) -> Table:
        table = Table(
            title="Encoded size (ratio vs " + rows.baseline + ")",
            headers=["codec", *names],
        )
        for codec in rows.contenders():
            cells = []
            for name in names:
                row = rows.get(name, codec)
                size = None if row is None else row.size
                cells.append(f"{fmt_size(size)} ({fmt_ratio(rows.size_ratio(name, codec))})")
            table.add(codec, *cells)
        return table
