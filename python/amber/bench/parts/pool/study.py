"""Study "pool": a task's records returned from a `ProcessPoolExecutor`, three ways.

Each call runs `parts` tasks on a pool of two processes and rebuilds their records in the caller:
returned as a plain `list` (the pool pickles it; the baseline), as the task's own pickle protocol
5 bytes, or as `amber.Packed(records)`. The records are made once per worker process, so the
time is the return trip.
"""

from __future__ import annotations

from amber.bench.engine.contender import Workload
from amber.bench.engine.registry import register_study
from amber.bench.engine.rows import Rows, contender_table, ratio_figure
from amber.bench.engine.study import Context, Report, Study, StudyResult, describe_workloads
from amber.bench.parts.pool.contenders import POOL

OPS = ("return",)


def workload(mode: str) -> Workload:
    parts, size = {"full": (8, 50_000), "quick": (4, 20_000), "tiny": (2, 1_000)}[mode]
    return Workload(
        name=f"{parts} parts of {size:,} records",
        description=f"{parts} tasks each returning {size:,} ten-key records",
        build=lambda: (parts, size),
        size=parts * size,
    )


@register_study
class PoolStudy(Study):
    name = "pool"
    part = POOL.name
    description = "records returned from a ProcessPoolExecutor: list, pickle bytes, amber.Packed"
    rerun = "amber bench --studies pool"

    def run(self, ctx: Context) -> StudyResult:
        result = StudyResult(self.name)
        chosen = workload(ctx.mode)
        result.params["workloads"] = describe_workloads([chosen])
        result.params["pool"] = "concurrent.futures.ProcessPoolExecutor(2)"
        result.rows += ctx.measure(chosen)
        return result

    def report(self, result: StudyResult, ctx: Context) -> Report:
        rows = Rows(result.rows, ctx.baseline)
        report = Report(
            title="pool: records returned from a process pool",
            intro=(
                "Tasks on a ProcessPoolExecutor of two processes return ten-key records; the "
                "time is the return trip (the records are made once per process). Median time "
                f"per call, ratio to {ctx.baseline} (the pool's own pickle of a plain list) in "
                "the same run."
            ),
        )
        for name in rows.workloads():
            report.tables.append(
                contender_table(rows, name, OPS, f"{name}: median time per call", label="way")
            )
        report.plots += ratio_figure(
            rows,
            OPS,
            ctx,
            "pool_ratio",
            f"pool: records returned from a process pool, time relative to {ctx.baseline}",
        )
        return report
