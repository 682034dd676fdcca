"""Study "pool": a task's records returned from a `ProcessPoolExecutor`, three ways.

Each call runs `parts` tasks on a pool of two processes and rebuilds their records in the caller:
returned as a plain `list` (the pool pickles it; the baseline), as the task's own pickle protocol
5 bytes, or as `amber.Packed(records)`. The records are made once per worker process, so the
time is the return trip.
"""

from __future__ import annotations

from amber.bench.engine.registry import register_study
from amber.bench.engine.study import Context
from amber.bench.parts.pool.contenders import POOL
from amber.bench.parts.records import RecordsStudy


@register_study
class PoolStudy(RecordsStudy):
    name = "pool"
    part = POOL.name
    description = "records returned from a ProcessPoolExecutor: list, pickle bytes, amber.Packed"
    rerun = "amber bench --studies pool"
    ops = ("return",)
    where = "each returned by a task"
    setting = ("pool", "concurrent.futures.ProcessPoolExecutor(2)")
    title = "pool: records returned from a process pool"

    def intro(self, ctx: Context) -> str:
        return (
            "Tasks on a ProcessPoolExecutor of two processes return ten-key records; the "
            "time is the return trip (the records are made once per process). Median time "
            f"per call, ratio to {ctx.baseline} (the pool's own pickle of a plain list) in "
            "the same run."
        )
