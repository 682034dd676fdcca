"""Study "dask": a task's records moved between Dask workers, three ways.

Parts of ten-key records held by one worker are read by tasks pinned on the other (`move`), or
gathered to the client (`gather`), on a `LocalCluster` with two worker processes. Dask sends a
plain `list` one item per frame (dask/distributed#6368); a list subclass registered to travel as
one pickle frame is the fix a user can write today, and the baseline; `amber.dask.Rows` travels
as one amber frame.
"""

from __future__ import annotations

from amber.bench.engine.registry import register_study
from amber.bench.engine.study import Context
from amber.bench.parts.dask.contenders import DASK
from amber.bench.parts.records import RecordsStudy


@register_study
class DaskStudy(RecordsStudy):
    name = "dask"
    part = DASK.name
    description = "records moved between Dask worker processes: plain list, one pickle frame, amber"
    rerun = "amber bench --studies dask"
    ops = ("move", "gather")
    where = "made on one worker"
    setting = ("cluster", "distributed.LocalCluster: 2 worker processes, 1 thread each")
    title = "dask: records moved between worker processes"

    def intro(self, ctx: Context) -> str:
        return (
            "Parts held by one worker, read by tasks on the other (`move`) or gathered to "
            "the client (`gather`), on a LocalCluster of two worker processes (each call "
            "first copies the parts into new keys, a small task). Median time per "
            f"call, ratio to {ctx.baseline} (a list subclass registered to travel as one "
            "pickle-5 frame) in the same run. `list` is Dask's default path for a plain "
            "list result, one frame per item (dask/distributed#6368)."
        )
