"""Study "dask": a task's records moved between Dask workers, three ways.

Parts of ten-key records held by one worker are read by tasks pinned on the other (`move`), or
gathered to the client (`gather`), on a `LocalCluster` with two worker processes. Dask sends a
plain `list` one item per frame (dask/distributed#6368); a list subclass registered to travel as
one pickle frame is the fix a user can write today, and the baseline; `amber.dask.Rows` travels
as one amber frame.
"""

from __future__ import annotations

from amber.bench.engine.contender import Workload
from amber.bench.engine.registry import register_study
from amber.bench.engine.rows import Rows, contender_table, ratio_figure
from amber.bench.engine.study import Context, Report, Study, StudyResult, describe_workloads
from amber.bench.parts.dask.contenders import DASK

OPS = ("move", "gather")


def workload(mode: str) -> Workload:
    parts, size = {"full": (8, 50_000), "quick": (4, 20_000), "tiny": (2, 1_000)}[mode]
    return Workload(
        name=f"{parts} parts of {size:,} records",
        description=f"{parts} parts of {size:,} ten-key records (ints, floats, str, bool, None, "
        "a list), made on one worker",
        build=lambda: (parts, size),
        size=parts * size,
    )


@register_study
class DaskStudy(Study):
    name = "dask"
    part = DASK.name
    description = "records moved between Dask worker processes: plain list, one pickle frame, amber"
    rerun = "amber bench --studies dask"

    def run(self, ctx: Context) -> StudyResult:
        result = StudyResult(self.name)
        chosen = workload(ctx.mode)
        result.params["workloads"] = describe_workloads([chosen])
        result.params["cluster"] = "distributed.LocalCluster: 2 worker processes, 1 thread each"
        result.rows += ctx.measure(chosen)
        return result

    def report(self, result: StudyResult, ctx: Context) -> Report:
        rows = Rows(result.rows, ctx.baseline)
        report = Report(
            title="dask: records moved between worker processes",
            intro=(
                "Parts held by one worker, read by tasks on the other (`move`) or gathered to "
                "the client (`gather`), on a LocalCluster of two worker processes (each call "
                "first copies the parts into new keys, a small task). Median time per "
                f"call, ratio to {ctx.baseline} (a list subclass registered to travel as one "
                "pickle-5 frame) in the same run. `list` is Dask's default path for a plain "
                "list result, one frame per item (dask/distributed#6368)."
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
            "dask_ratio",
            f"dask: records moved between worker processes, time relative to {ctx.baseline}",
        )
        return report
