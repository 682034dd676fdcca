"""The `Study` interface and its registry.

A study reruns one published claim: it picks workloads, times them (usually through
`amber.bench.runner`), and turns its result into tables and plots. Adding a study is one module in
`amber.bench.studies` that defines a `Study` subclass decorated with `@register_study`; the modules
of that package are imported when the registry is first read.
"""

from __future__ import annotations

import importlib
import pkgutil
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from amber.bench.codecs import BASELINE, Codec, Skipped, UnknownNameError
from amber.bench.runner import Progress, Row
from amber.bench.tables import Table
from amber.bench.timing import TimingPolicy

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
    """What every study gets: the mode, the timing policy, the codecs, and where to write files."""

    mode: Mode
    policy: TimingPolicy
    codecs: Sequence[Codec]
    skipped: Sequence[Skipped]
    out_dir: Path
    progress: Progress
    plots: bool = True  # False when matplotlib is missing
    baseline: str = BASELINE


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


@dataclass
class Report:
    """What a study shows: tables for stdout and report.md, paragraphs, and plot files written."""

    title: str
    intro: str = ""
    tables: list[Table] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    plots: list[Path] = field(default_factory=list)


class Study(ABC):
    name: ClassVar[str]
    description: ClassVar[str]
    claim: ClassVar[str] = ""  # where the compared numbers come from (seed, ANCHORS section)
    rerun: ClassVar[str] = ""  # the benches/ script that reruns it

    @abstractmethod
    def run(self, ctx: Context) -> StudyResult:
        """Time everything; must not print tables (progress goes through `ctx.progress`)."""

    @abstractmethod
    def report(self, result: StudyResult, ctx: Context) -> Report:
        """Tables and plots from a result; plots go under `ctx.out_dir` when `ctx.plots`."""


_STUDIES: dict[str, type[Study]] = {}
_DISCOVERED = False


def register_study(cls: type[Study]) -> type[Study]:
    if cls.name in _STUDIES and _STUDIES[cls.name] is not cls:
        raise ValueError(f"study {cls.name!r} is already registered")
    _STUDIES[cls.name] = cls
    return cls


def _discover() -> None:
    global _DISCOVERED
    if _DISCOVERED:
        return
    _DISCOVERED = True
    from amber.bench import studies

    for info in sorted(pkgutil.iter_modules(studies.__path__), key=lambda m: m.name):
        importlib.import_module(f"{studies.__name__}.{info.name}")


def study_names() -> list[str]:
    _discover()
    return list(_STUDIES)


def get_study(name: str) -> Study:
    _discover()
    try:
        return _STUDIES[name]()
    except KeyError:
        raise UnknownNameError(f"unknown study {name!r}; known: {', '.join(_STUDIES)}") from None
