"""Run the chosen studies with the chosen codecs and write the report: the one entry point that
`amber bench` and the benches/ scripts share."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from amber.bench import plots
from amber.bench.codecs import BASELINE, Codec, Skipped, resolve
from amber.bench.output import (
    REPORT,
    RESULTS,
    Console,
    Done,
    codec_lines,
    describe,
    header_lines,
    policy_line,
    write_report,
    write_results,
)
from amber.bench.runner import Progress
from amber.bench.study import POLICIES, Context, Mode, get_study, study_names


@dataclass(frozen=True)
class BenchConfig:
    out_dir: Path = Path("bench-out")
    mode: Mode = "full"
    studies: Sequence[str] | None = None  # None: every registered study
    codecs: Sequence[str] | None = None  # None: every registered codec
    repeat: int | None = None  # samples per series; None: the mode's default
    progress: bool = True
    command: str = ""  # how this run was started, for the report header


@dataclass(frozen=True)
class BenchRun:
    report: Path
    results: Path
    done: list[Done]


def choose_codecs(
    names: Sequence[str] | None, given: Sequence[Codec] | None
) -> tuple[list[Codec], list[Skipped], list[str]]:
    """The codecs to run, with the baseline first added when it was left out."""
    notes: list[str] = []
    codecs: list[Codec]
    skipped: list[Skipped] = []
    if given is not None:
        codecs = list(given)
    else:
        codecs, skipped = resolve(names)
    if not any(c.name == BASELINE for c in codecs):
        base, base_skipped = resolve([BASELINE])
        codecs = base + codecs
        skipped += base_skipped
        notes.append(f"{BASELINE} added as the baseline every ratio divides by.")
    return codecs, skipped, notes


def run(
    config: BenchConfig,
    *,
    codecs: Sequence[Codec] | None = None,
    stdout: TextIO | None = None,
) -> BenchRun:
    """Run `config`; `codecs` replaces the registry (tests pass a deliberately wrong codec)."""
    out = Console(sys.stdout if stdout is None else stdout)
    studies = [get_study(name) for name in (config.studies or study_names())]
    chosen, skipped, notes = choose_codecs(config.codecs, codecs)
    policy = POLICIES[config.mode]
    if config.repeat is not None:
        policy = dataclasses.replace(policy, repeats=max(1, config.repeat))
    config.out_dir.mkdir(parents=True, exist_ok=True)
    can_plot = plots.available()
    if not can_plot:
        notes.append("matplotlib is not installed: plots skipped (pip install matplotlib).")
    ctx = Context(
        mode=config.mode,
        policy=policy,
        codecs=chosen,
        skipped=skipped,
        out_dir=config.out_dir,
        progress=Progress(enabled=config.progress),
        plots=can_plot,
    )
    machine = describe(chosen, extra=["matplotlib"] if can_plot else [])
    setup = [policy_line(config.mode, policy), *codec_lines(chosen, skipped)]
    if config.command:
        setup.insert(0, f"- Command: `{config.command}`")
    for line in [*header_lines(machine), *setup]:
        out.print(line[2:])
    for note in notes:
        out.print(f"note: {note}")
    config_json = {
        "command": config.command,
        "mode": config.mode,
        "studies": [s.name for s in studies],
        "codecs": [c.name for c in chosen],
        "baseline": ctx.baseline,
        "target_ns": policy.target_ns,
        "repeats": policy.repeats,
        "budget_ns": policy.budget_ns,
    }
    results, report_md = config.out_dir / RESULTS, config.out_dir / REPORT
    done: list[Done] = []
    for study in studies:
        result = study.run(ctx)
        ctx.progress.done()
        report = study.report(result, ctx)
        done.append(Done(study, result, report))
        # rewritten after every study, so a long run that stops early keeps what it measured
        write_results(results, done, machine, config_json, chosen, skipped)
        write_report(report_md, done, machine, setup, notes)
        out.report(report)
    out.print(f"\nwrote {report_md} and {results}")
    return BenchRun(report_md, results, done)
