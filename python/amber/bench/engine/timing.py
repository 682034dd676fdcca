"""Timing primitives: auto-ranged loops, samples of every series taken in turn, medians.

The garbage collector stays on (that is what users get); `gc.collect()` runs before each series is
calibrated and before each round of samples, so that one contender's garbage is not collected on the
next one's clock.
"""

from __future__ import annotations

import gc
import itertools
import math
import statistics
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

_MAX_LOOPS = 10_000_000


@dataclass(frozen=True)
class Timing:
    """Per-operation time of one series: the median and every sample, in nanoseconds."""

    median_ns: float
    samples_ns: tuple[float, ...]
    loops: int  # operations per sample

    @property
    def repeats(self) -> int:
        return len(self.samples_ns)

    @property
    def spread(self) -> float:
        """(slowest - fastest) / median: how far the samples disagree; 0 with one sample."""
        if self.median_ns <= 0:
            return 0.0
        return (max(self.samples_ns) - min(self.samples_ns)) / self.median_ns

    def to_json(self) -> dict[str, Any]:
        return {
            "median_ns": self.median_ns,
            "samples_ns": list(self.samples_ns),
            "loops": self.loops,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Timing:
        return cls(float(data["median_ns"]), tuple(map(float, data["samples_ns"])), data["loops"])


@dataclass(frozen=True)
class TimingPolicy:
    """How long each sample runs, how many samples a series takes, and a cap for slow operations."""

    target_ns: int  # a sample loops until it takes at least this long
    repeats: int  # samples per series; the median is reported
    budget_ns: int  # a series of slow single operations is cut to fit this, keeping >= 1 sample


def run_loop(fn: Callable[[Any], object], arg: Any, loops: int) -> int:
    """Call `fn(arg)` `loops` times; the wall time in nanoseconds."""
    repeat = itertools.repeat(None, loops)
    start = time.perf_counter_ns()
    for _ in repeat:
        fn(arg)
    return time.perf_counter_ns() - start


def calibrate(fn: Callable[[Any], object], arg: Any, target_ns: int, estimate_ns: int) -> int:
    """Loop count that makes one sample last at least `target_ns`.

    `estimate_ns` is the time of one call already made (by the check before timing); when it alone reaches
    the target no further call is spent.
    """
    if estimate_ns >= target_ns:
        return 1
    loops = 1
    while True:
        elapsed = run_loop(fn, arg, loops)
        if elapsed >= target_ns // 5 or loops >= _MAX_LOOPS:
            return max(1, min(_MAX_LOOPS, math.ceil(loops * target_ns / max(elapsed, 1))))
        grow = target_ns / 5 / max(elapsed, 1)
        loops = min(_MAX_LOOPS, max(loops * 2, math.ceil(loops * grow * 1.2)))


@dataclass
class Series:
    """One operation to time, calibrated; its samples are taken by `sample_in_turn`."""

    fn: Callable[[Any], object]
    arg: Any
    loops: int
    repeats: int
    samples: list[float] = field(default_factory=list)

    def timing(self) -> Timing:
        return Timing(statistics.median(self.samples), tuple(self.samples), self.loops)


def prepare(
    fn: Callable[[Any], object], arg: Any, policy: TimingPolicy, estimate_ns: int
) -> Series:
    """Calibrate a series of `fn(arg)`: loops per sample, and samples to take."""
    gc.collect()
    loops = calibrate(fn, arg, policy.target_ns, estimate_ns)
    repeats = policy.repeats
    if loops == 1 and estimate_ns > 0:
        repeats = max(1, min(repeats, policy.budget_ns // estimate_ns))
    return Series(fn, arg, loops, repeats)


def sample_in_turn(
    series: Sequence[Series], on_sample: Callable[[int, int, int, int], None] | None = None
) -> None:
    """Take the samples of all `series` in rounds, one of each per round.

    On a shared machine the load changes over seconds: series timed one after the other can see
    different machines, and their ratio is off by as much. Taken in turn (the first series of a
    round rotating), every series sees the same changes, and the medians compare.

    `on_sample(round, rounds, i, count)` is called before the `i`-th of the `count` samples of
    each round (0-based), so that a long round can be followed.
    """
    rounds = max((s.repeats for s in series), default=0)
    for r in range(rounds):
        gc.collect()
        k = r % len(series)
        due = [s for s in [*series[k:], *series[:k]] if len(s.samples) < s.repeats]
        for i, s in enumerate(due):
            if on_sample is not None:
                on_sample(r, rounds, i, len(due))
            s.samples.append(run_loop(s.fn, s.arg, s.loops) / s.loops)
            settle()


def settle() -> None:
    """Wait, untimed, for work a sample left running on amber's background threads (an
    archive frees the file it replaced on one), so that it lands in no other series' time."""
    me = threading.current_thread()
    for t in threading.enumerate():
        if t is not me and t.name.startswith("amber-"):
            t.join()


def timed(fn: Callable[[Any], Any], arg: Any) -> tuple[Any, int]:
    """`fn(arg)` and the nanoseconds it took."""
    start = time.perf_counter_ns()
    out = fn(arg)
    return out, time.perf_counter_ns() - start
