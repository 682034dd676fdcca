"""The `Study` interface, the `Context` a study runs in, and what it hands back.

A study reruns one measured claim of a part: it picks workloads, times every contender of its part
on each (`Context.measure`), and turns its result into tables and plots. Register one with
`@register_study` (`amber.bench.engine.registry`) in its part's package.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from amber.bench.engine.contender import Contender, Skipped, Workload
from amber.bench.engine.measure import Progress, Row, run_workload
from amber.bench.engine.tables import Table
from amber.bench.engine.timing import TimingPolicy

Mode = Literal["full", "quick", "tiny"]

_MS = 1_000_000
_S = 1_000_000_000
POLICIES: dict[str, TimingPolicy] = {
    "full": TimingPolicy(target_ns=100 * _MS, repeats=5, budget_ns=60 * _S),
    "quick": TimingPolicy(target_ns=20 * _MS, repeats=3, budget_ns=10 * _S),
    "tiny": TimingPolicy(target_ns=1 * _MS, repeats=2, budget_ns=1 * _S),
}


@dataclass
class Context:
    """What a study gets: the mode and timing policy, its part's contenders (with the sessions their
    setups opened for this study), the baseline of its ratios, and where to write files."""

    mode: Mode
    policy: TimingPolicy
    part: str
    baseline: str
    contenders: Sequence[Contender]
    skipped: Sequence[Skipped]
    out_dir: Path
    progress: Progress
    plots: bool = True  # False when matplotlib is missing
    footer: str = ""  # the machine, Python and amber version, at the foot of every plot
    sessions: Mapping[str, Any] = field(default_factory=dict)  # contender name -> its session

    def measure(self, workload: Workload) -> list[Row]:
        """Build `workload`, check every contender on it, then time them all in turn."""
        return run_workload(
            workload,
            self.contenders,
            self.policy,
            self.progress,
            sessions=self.sessions,
        )


@dataclass
class StudyResult:
    """Raw numbers of one study; `params` records what it ran (sizes, workloads) for results.json."""

    study: str
    params: dict[str, Any] = field(default_factory=dict)
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "study": self.study,
            "params": self.params,
            "notes": self.notes,
            "rows": [r.to_json() for r in self.rows],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> StudyResult:
        return cls(
            study=data["study"],
            params=dict(data.get("params", {})),
            rows=[Row.from_json(r) for r in data.get("rows", [])],
            notes=list(data.get("notes", [])),
        )


@dataclass
class Report:
    """What a study shows: tables for stdout and report.md, paragraphs, and plot files written."""

    title: str
    intro: str = ""
    tables: list[Table] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    plots: list[Path] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # shown first: a busy machine


def describe_workloads(workloads: Sequence[Workload]) -> list[dict[str, Any]]:
    """The `params["workloads"]` entry of a result: name, description, items and options."""
    out: list[dict[str, Any]] = []
    for w in workloads:
        entry: dict[str, Any] = {"name": w.name, "description": w.description, "items": w.size}
        if w.options:
            entry["options"] = dict(w.options)
        out.append(entry)
    return out


class Study(ABC):
    name: ClassVar[str]
    part: ClassVar[str]  # the part whose contenders it runs
    description: ClassVar[str]
    rerun: ClassVar[str] = ""  # the benches/ script that reruns it alone

    def judged(self, op: str) -> bool:
        """Whether the spread of `op`'s samples says the machine was busy (the busy warning)."""
        return True

    def workload_count(self, mode: Mode) -> int:
        """How many workloads `run` measures in `mode`: the progress line counts them down."""
        return 1

    @abstractmethod
    def run(self, ctx: Context) -> StudyResult:
        """Time everything; must not print tables (progress goes through `ctx.progress`)."""

    @abstractmethod
    def report(self, result: StudyResult, ctx: Context) -> Report:
        """Tables and plots from a result; plots go under `ctx.out_dir` when `ctx.plots`."""
