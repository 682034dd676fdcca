"""What a run writes: report.md, results.json and the terminal summary, each naming the machine,
Python and every library's version it ran with."""

from __future__ import annotations

import contextlib
import datetime
import gc
import importlib.metadata
import json
import os
import platform
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from amber.bench.engine.registry import Lineup
from amber.bench.engine.study import Report, Study, StudyResult
from amber.bench.engine.tables import fmt_time
from amber.bench.engine.timing import TimingPolicy

REPORT = "report.md"
RESULTS = "results.json"


def cpu_model() -> str:
    """The CPU model from /proc/cpuinfo (Linux), else what `platform` knows."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text(errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("model name", "Hardware", "cpu model") and value.strip():
                return value.strip()
    return platform.processor() or platform.machine() or "unknown"


def version_of(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        module = __import__(package)
        return str(getattr(module, "__version__", "unknown"))


def library_versions(lineups: Sequence[Lineup], extra: Sequence[str] = ()) -> dict[str, str]:
    versions: dict[str, str] = {}
    packages = [c.package for lineup in lineups for c in lineup.contenders if c.package]
    for package in [*packages, *extra]:
        if package in versions:
            continue
        try:
            versions[package] = version_of(package)
        except ImportError:
            versions[package] = "not installed"
    return versions


def describe(lineups: Sequence[Lineup], extra: Sequence[str] = ()) -> dict[str, Any]:
    """Machine facts for the report header and results.json."""
    return {
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S"),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "python_build": ", ".join([*platform.python_build(), platform.python_compiler()]),
        "gc_enabled": gc.isenabled(),
        "gc_thresholds": list(gc.get_threshold()),
        "libraries": library_versions(lineups, extra),
    }


def header_lines(machine: dict[str, Any]) -> list[str]:
    """Markdown bullet lines naming machine, Python and libraries."""
    libs = ", ".join(f"{name} {version}" for name, version in machine["libraries"].items())
    gc_state = "on" if machine["gc_enabled"] else "off"
    return [
        f"- Machine: {machine['platform']}, {machine['cpu_model']}, "
        f"{machine['cpu_count']} logical CPUs",
        f"- Python: {machine['python_implementation']} {machine['python']} "
        f"({machine['python_build']}), garbage collector {gc_state} "
        f"(thresholds {machine['gc_thresholds']})",
        f"- Libraries: pickle (stdlib), {libs}" if libs else "- Libraries: pickle (stdlib)",
        f"- Date: {machine['date_utc']} UTC",
    ]


def footer_line(machine: dict[str, Any]) -> str:
    """One line for the foot of a plot: amber, Python, the machine and the date (of the run that
    `machine` describes, which may be an earlier one)."""
    amber = machine.get("libraries", {}).get("amber")
    if amber is None:
        try:
            amber = version_of("amber")
        except ImportError:
            amber = "unknown"
    return (
        f"amber {amber}, {machine['python_implementation']} {machine['python']}, "
        f"{machine['platform']}, {machine['cpu_model']} ({machine['cpu_count']} logical CPUs), "
        f"{machine['date_utc']} UTC"
    )


@dataclass
class Done:
    """One finished study: the study, its raw result and what it shows."""

    study: Study
    result: StudyResult
    report: Report


def policy_line(mode: str, policy: TimingPolicy) -> str:
    return (
        f"- Timing: mode {mode}; median of {policy.repeats} samples per series, each sample looping "
        f"until it lasts at least {fmt_time(policy.target_ns)} (single calls slower than that get "
        f"fewer samples if the series would exceed {fmt_time(policy.budget_ns)}); "
        "`time.perf_counter_ns`; the samples of a workload's series taken in turn, one of each "
        "per round; GC left on, `gc.collect()` before each round; work a sample leaves on "
        "amber's background threads (freeing a replaced archive file) finished untimed before "
        "the next sample."
    )


def contender_lines(lineup: Lineup) -> list[str]:
    """The part's contenders as the report header lists them ("- Codecs: amber, ..."), and the
    ones skipped with why."""
    named = [f"{c.name} ({c.note})" if c.note else c.name for c in lineup.contenders]
    lines = [f"- {lineup.part.label}: " + ", ".join(named) + "."]
    lines += [f"- Skipped: {s.name}: {s.reason}." for s in lineup.skipped]
    return lines


def write_report(
    path: Path,
    done: Sequence[Done],
    machine: dict[str, Any],
    setup: Sequence[str],
    notes: Sequence[str],
) -> Path:
    parts = ["# amber benchmark report", "", *header_lines(machine), *setup, ""]
    parts += [f"> {n}" for n in notes]
    if notes:
        parts.append("")
    for item in done:
        rep = item.report
        parts += [f"## {rep.title}", ""]
        parts += [f"> **Warning:** {w}\n" for w in rep.warnings]
        parts += [rep.intro, ""] if rep.intro else []
        for table in rep.tables:
            parts.append(table.markdown())
        for plot in rep.plots:
            parts += [f"![{plot.stem}]({plot.name})", ""]
        parts += [f"- {n}" for n in rep.notes + item.result.notes]
        if item.study.rerun:
            command = item.study.rerun
            if command.endswith(".py"):  # a script in benches/, else an amber command already
                command = f"python {command}"
            parts += [f"Rerun: `{command}` (add `--quick` for a short run).", ""]
    path.write_text("\n".join(parts).rstrip() + "\n", encoding="utf-8")
    return path


def write_results(
    path: Path,
    done: Sequence[Done],
    machine: dict[str, Any],
    config: dict[str, Any],
    lineups: Sequence[Lineup],
) -> Path:
    data = {
        "machine": machine,
        "config": config,
        "contenders": [
            {
                "part": lineup.part.name,
                "name": c.name,
                "package": c.package,
                "note": c.note,
                "kinds": None if c.kinds is None else sorted(c.kinds),
            }
            for lineup in lineups
            for c in lineup.contenders
        ],
        "skipped": [
            {"part": lineup.part.name, "name": s.name, "reason": s.reason}
            for lineup in lineups
            for s in lineup.skipped
        ],
        "studies": {
            item.study.name: {"part": item.study.part, **item.result.to_json()} for item in done
        },
    }
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return path


class Console:
    """Terminal output that outlives a closed pipe (`amber bench | head`): the run goes on and its
    files are still written."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.broken = False

    def print(self, text: str = "") -> None:
        if self.broken:
            return
        try:
            self.stream.write(text + "\n")
            self.stream.flush()
        except BrokenPipeError:
            self.broken = True
            with contextlib.suppress(OSError, ValueError):  # no second error at the final flush
                os.dup2(os.open(os.devnull, os.O_WRONLY), self.stream.fileno())

    def report(self, report: Report) -> None:
        self.print(f"\n== {report.title} ==")
        for warning in report.warnings:
            self.print(f"warning: {warning}")
        for table in report.tables:
            self.print("\n" + table.text().rstrip("\n"))
        for note in report.notes:
            self.print(f"note: {note}")
        for plot in report.plots:
            self.print(f"plot: {plot}")
