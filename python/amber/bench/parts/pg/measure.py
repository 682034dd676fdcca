"""Client CPU time: the pg part's clock, and its check-then-time loop.

A database call spends its wall time in three places: this process (the driver, the Python
objects it builds), the server, and the socket between them. Wall time mixes the three; what a
driver decides is this process's share. So every sample records the CPU time of this process
(user + system, all its threads, from `resource.getrusage(RUSAGE_SELF)`) beside the wall time
(`time.perf_counter_ns`), and tables rank by CPU. The server runs in another process and is not
counted.

The loop is the engine's (`amber.bench.engine.measure`): every contender is checked once through
its `prepare`, then the samples of every checked contender are taken in rounds, one of each per
round, the first rotating, with `gc.collect()` before each round. Each sample is one call: these
calls last from tens of milliseconds to seconds, so the engine's loop counts are not needed, and
one call per sample lets an untimed `before` (a TRUNCATE) run ahead of every sample.
"""

from __future__ import annotations

import gc
import resource
import statistics
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

from amber.bench.engine.contender import Contender, Pending, Workload
from amber.bench.engine.measure import Checked, Row, check_contender, timing_steps
from amber.bench.engine.study import Context
from amber.bench.engine.timing import Timing, TimingPolicy

# Besides an operation's CPU time (the row's `op`), each row keeps these series as
# `f"{op} {suffix}"`.
WALL = "wall"
USER = "user"
SYS = "sys"


def cpu_ns() -> tuple[int, int]:
    """User and system CPU time of this process so far, in nanoseconds."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return round(r.ru_utime * 1e9), round(r.ru_stime * 1e9)


@dataclass
class CpuSeries:
    """One operation's samples: wall, user and system nanoseconds per call."""

    pending: Pending
    repeats: int
    wall: list[float] = field(default_factory=list)
    user: list[float] = field(default_factory=list)
    sys: list[float] = field(default_factory=list)

    def sample(self) -> None:
        u0, s0 = cpu_ns()
        w0 = time.perf_counter_ns()
        self.pending.fn(self.pending.arg)
        w1 = time.perf_counter_ns()
        u1, s1 = cpu_ns()
        self.wall.append(w1 - w0)
        self.user.append(u1 - u0)
        self.sys.append(s1 - s0)

    def timings(self) -> dict[str, Timing]:
        op = self.pending.op
        cpu = [u + s for u, s in zip(self.user, self.sys, strict=True)]
        return {
            op: _timing(cpu),
            f"{op} {WALL}": _timing(self.wall),
            f"{op} {USER}": _timing(self.user),
            f"{op} {SYS}": _timing(self.sys),
        }


def _timing(samples: Sequence[float]) -> Timing:
    return Timing(statistics.median(samples), tuple(samples), 1)


def repeats(policy: TimingPolicy, estimate_ns: int) -> int:
    """The policy's samples, fewer when they would pass its budget (at least one)."""
    if estimate_ns <= 0:
        return policy.repeats
    return max(1, min(policy.repeats, policy.budget_ns // estimate_ns))


def applies(contender: Contender, workload: Workload) -> bool:
    """Whether the contender offers every job the workload asks for (see `workloads.LOAD`)."""
    return contender.kinds is None or workload.kinds <= contender.kinds


def measure(
    ctx: Context,
    workload: Workload,
    *,
    value: Any = None,
    before: Callable[[], None] | None = None,
) -> list[Row]:
    """Check every contender of `ctx` that offers the workload's job, then sample them in turn;
    `before` runs, untimed, ahead of every check and every sample. `value` replaces the
    workload's build when given."""
    progress = ctx.progress
    contenders = [c for c in ctx.contenders if applies(c, workload)]
    progress.start_workload(workload.name)
    if value is None:
        progress.update("building")
        value = workload.build()
    checked: list[Checked] = []
    for i, contender in enumerate(contenders, 1):
        progress.update(f"checking {i}/{len(contenders)} {contender.name}")
        if before is not None:
            before()
        checked.append(
            check_contender(contender, workload, value, ctx.sessions.get(contender.name))
        )
    with ExitStack() as stack:
        for c in checked:
            if c.trial is not None:
                stack.push(c.trial.cleanup)
        series = [
            (c.row, CpuSeries(p, repeats(ctx.policy, p.estimate_ns)))
            for c in checked
            for p in c.pending
        ]
        rounds = max((s.repeats for _, s in series), default=0)
        step = timing_steps(progress)
        for r in range(rounds):
            gc.collect()
            k = r % len(series)
            due = [s for _, s in [*series[k:], *series[:k]] if len(s.wall) < s.repeats]
            for i, s in enumerate(due):
                step(r, rounds, i, len(due))
                if before is not None:
                    before()
                s.sample()
        for row, s in series:
            row.ops.update(s.timings())
    progress.end_workload()
    return [c.row for c in checked]
