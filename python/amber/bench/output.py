"""What a run writes: report.md, results.json and the terminal summary, each naming the machine,
Python and every library's version it ran with."""

from __future__ import annotations

import contextlib
import datetime
import gc
import json
import os
import platform
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from amber.bench.codecs import Codec, Skipped, version_of
from amber.bench.study import Report, Study, StudyResult
from amber.bench.tables import fmt_time
from amber.bench.timing import TimingPolicy

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


def library_versions(codecs: Sequence[Codec], extra: Sequence[str] = ()) -> dict[str, str]:
    versions: dict[str, str] = {}
    for package in [c.package for c in codecs if c.package] + list(extra):
        if package in versions:
            continue
        try:
            versions[package] = version_of(package)
        except ImportError:
            versions[package] = "not installed"
    return versions


def describe(codecs: Sequence[Codec], extra: Sequence[str] = ()) -> dict[str, Any]:
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
        "libraries": library_versions(codecs, extra),
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
        "per round; GC left on, `gc.collect()` before each round."
    )


def codec_lines(codecs: Sequence[Codec], skipped: Sequence[Skipped]) -> list[str]:
    lines = [
        "- Codecs: " + ", ".join(f"{c.name} ({c.note})" if c.note else c.name for c in codecs) + "."
    ]
    lines += [f"- Skipped: {s.name}: {s.reason}." for s in skipped]
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
        parts += [f"## {rep.title}", "", rep.intro, ""] if rep.intro else [f"## {rep.title}", ""]
        for table in rep.tables:
            parts.append(table.markdown())
        for plot in rep.plots:
            parts += [f"![{plot.stem}]({plot.name})", ""]
        parts += [f"- {n}" for n in rep.notes + item.result.notes]
        if item.study.rerun:
            parts += [f"Rerun: `python {item.study.rerun}` (add `--quick` for a short run).", ""]
    path.write_text("\n".join(parts).rstrip() + "\n", encoding="utf-8")
    return path


def write_results(
    path: Path,
    done: Sequence[Done],
    machine: dict[str, Any],
    config: dict[str, Any],
    codecs: Sequence[Codec],
    skipped: Sequence[Skipped],
) -> Path:
    data = {
        "machine": machine,
        "config": config,
        "codecs": [
            {"name": c.name, "package": c.package, "note": c.note, "kinds": sorted(c.kinds)}
            for c in codecs
        ],
        "skipped": [{"name": s.name, "reason": s.reason} for s in skipped],
        "studies": {item.study.name: item.result.to_json() for item in done},
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
        for table in report.tables:
            self.print("\n" + table.text().rstrip("\n"))
        for note in report.notes:
            self.print(f"note: {note}")
        for plot in report.plots:
            self.print(f"plot: {plot}")
