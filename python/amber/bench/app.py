"""Run the chosen studies with the chosen contenders and write the report: the one entry point that
`amber bench` and the benches/ scripts share."""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from amber.bench.engine import plots
from amber.bench.engine.contender import Contender, UnknownNameError
from amber.bench.engine.measure import Progress, open_sessions
from amber.bench.engine.output import (
    REPORT,
    RESULTS,
    Console,
    Done,
    contender_lines,
    describe,
    footer_line,
    header_lines,
    policy_line,
    write_report,
    write_results,
)
from amber.bench.engine.registry import Lineup, Part, get_part, get_study, part_names, study_names
from amber.bench.engine.rows import busy_warning
from amber.bench.engine.study import POLICIES, Context, Mode, Study, StudyResult
from amber.bench.engine.timing import TimingPolicy


@dataclass(frozen=True)
class BenchConfig:
    out_dir: Path = Path("bench-out")
    mode: Mode = "full"
    studies: Sequence[str] | None = None  # None: every registered study
    contenders: Sequence[str] | None = None  # None: every contender of each study's part
    repeat: int | None = None  # samples per series; None: the mode's default
    progress: bool = True
    command: str = ""  # how this run was started, for the report header


@dataclass(frozen=True)
class BenchRun:
    report: Path
    results: Path
    done: list[Done]


def choose(part: Part, names: Sequence[str] | None, given: Sequence[Contender] | None) -> Lineup:
    """The part's contenders to run (`given` replaces its registry), with its baseline first added
    when it was left out."""
    if given is not None:
        lineup = Lineup(part, list(given))
    else:
        mine = None if names is None else [n for n in names if n in part.names()]
        lineup = Lineup(part, *part.resolve(mine))
    if not any(c.name == part.baseline for c in lineup.contenders):
        base, base_skipped = part.resolve([part.baseline])
        lineup.contenders[:0] = base
        lineup.skipped += base_skipped
        lineup.notes.append(f"{part.baseline} added as the baseline every ratio divides by.")
    return lineup


def choose_all(
    studies: Sequence[Study],
    names: Sequence[str] | None,
    given: Mapping[str, Sequence[Contender]],
) -> dict[str, Lineup]:
    """One lineup per part the studies need; a name no part knows is an error."""
    if names is not None:
        known = {n for p in part_names() for n in get_part(p).names()}
        known |= {c.name for found in given.values() for c in found}
        unknown = [n for n in names if n not in known]
        if unknown:
            raise UnknownNameError(
                f"unknown contender(s): {', '.join(unknown)}; known: {', '.join(sorted(known))}"
            )
    parts = [get_part(name) for name in dict.fromkeys(s.part for s in studies)]
    return {p.name: choose(p, names, given.get(p.name)) for p in parts}


def _policy(config: BenchConfig) -> TimingPolicy:
    policy = POLICIES[config.mode]
    if config.repeat is not None:
        policy = dataclasses.replace(policy, repeats=max(1, config.repeat))
    return policy


def _config_json(
    config: BenchConfig,
    studies: Sequence[Study],
    lineups: Mapping[str, Lineup],
    policy: TimingPolicy,
) -> dict[str, Any]:
    """The "config" entry of results.json: what was asked and what ran."""
    return {
        "command": config.command,
        "mode": config.mode,
        "studies": [s.name for s in studies],
        "contenders": {p: [c.name for c in lu.contenders] for p, lu in lineups.items()},
        "baselines": {p: lu.part.baseline for p, lu in lineups.items()},
        "target_ns": policy.target_ns,
        "repeats": policy.repeats,
        "budget_ns": policy.budget_ns,
    }


def _guess_s(lineup: Lineup, policy: TimingPolicy) -> float:
    """Seconds one workload of a study might take, before any is measured: each contender's two
    operations (most have two), calibrated then sampled `repeats` times at the target length,
    plus building and checking."""
    samples = len(lineup.contenders) * 2 * (policy.repeats + 2)
    return samples * policy.target_ns / 1e9 + 0.5


def _run_study(study: Study, lineup: Lineup, base: Context) -> Done:
    """Open the setups of the part's contenders, run the study, close them, then report."""
    base.progress.start_study(study.name)
    with ExitStack() as stack:
        ready, sessions, failed = open_sessions(lineup.contenders, stack)
        ctx = dataclasses.replace(
            base,
            part=lineup.part.name,
            baseline=lineup.part.baseline,
            contenders=ready,
            skipped=[*lineup.skipped, *failed],
            sessions=sessions,
        )
        result = study.run(ctx)
    result.notes += [f"{s.name} was not run: {s.reason}." for s in failed]
    ctx.progress.update("writing its tables and plots")
    report = study.report(result, ctx)
    warning = busy_warning(study.name, result.rows, study.judged)
    if warning:
        report.warnings.append(warning)
    ctx.progress.done()
    return Done(study, result, report)


def run(
    config: BenchConfig,
    *,
    contenders: Mapping[str, Sequence[Contender]] | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> BenchRun:
    """Run `config`; `contenders` replaces the registry of the parts it names (tests pass a
    deliberately wrong contender); progress goes to `stderr` (default `sys.stderr`)."""
    out = Console(sys.stdout if stdout is None else stdout)
    studies = [get_study(name) for name in (config.studies or study_names())]
    lineups = choose_all(studies, config.contenders, contenders or {})
    policy = _policy(config)
    config.out_dir.mkdir(parents=True, exist_ok=True)
    can_plot = plots.available()
    notes = [n for lineup in lineups.values() for n in lineup.notes]
    if not can_plot:
        notes.append("matplotlib is not installed: plots skipped (pip install matplotlib).")
    machine = describe(list(lineups.values()), extra=["matplotlib"] if can_plot else [])
    setup = [policy_line(config.mode, policy)]
    setup += [line for lineup in lineups.values() for line in contender_lines(lineup)]
    if config.command:
        setup.insert(0, f"- Command: `{config.command}`")
    for line in [*header_lines(machine), *setup]:
        out.print(line[2:])
    for note in notes:
        out.print(f"note: {note}")
    config_json = _config_json(config, studies, lineups, policy)
    base = Context(
        mode=config.mode,
        policy=policy,
        part="",
        baseline="",
        contenders=[],
        skipped=[],
        out_dir=config.out_dir,
        progress=Progress(stderr, enabled=config.progress),
        plots=can_plot,
        footer=footer_line(machine),
    )
    base.progress.plan(
        [
            (s.name, s.workload_count(config.mode), _guess_s(lineups[s.part], policy))
            for s in studies
        ]
    )
    results, report_md = config.out_dir / RESULTS, config.out_dir / REPORT
    done: list[Done] = []
    try:
        for study in studies:
            done.append(_run_study(study, lineups[study.part], base))
            # rewritten after every study, so a long run that stops early keeps what it measured
            write_results(results, done, machine, config_json, list(lineups.values()))
            write_report(report_md, done, machine, setup, notes)
            out.report(done[-1].report)
    finally:
        base.progress.close()
    out.print(f"\nwrote {report_md} and {results}")
    return BenchRun(report_md, results, done)


def rerender(results: Path, out_dir: Path, *, stdout: TextIO | None = None) -> BenchRun:
    """Rebuild report.md and every study's plots from the results.json of an earlier run, timing
    nothing: its samples drawn by today's tables and plots, under that run's machine, Python, amber
    version and date. Every contender the run recorded must be known here (its part's registry
    gives the order its tables list them in)."""
    out = Console(sys.stdout if stdout is None else stdout)
    try:
        data = json.loads(results.read_text(encoding="utf-8"))
        machine, config, entries = data["machine"], data["config"], data["studies"]
        policy = TimingPolicy(config["target_ns"], config["repeats"], config["budget_ns"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ResultsError(
            f"{results}: not the results.json of an amber bench run ({exc})"
        ) from exc
    out_dir.mkdir(parents=True, exist_ok=True)
    lineups: dict[str, Lineup] = {}
    for part, names in config["contenders"].items():
        lineup = Lineup(get_part(part), *get_part(part).resolve(names))
        missing = [s.name for s in lineup.skipped]
        if missing:
            raise ResultsError(
                f"{results} names {', '.join(missing)} of part {part}, not available here: "
                "rerender it where they are installed"
            )
        lineups[part] = lineup
    base = Context(
        mode=config["mode"],
        policy=policy,
        part="",
        baseline="",
        contenders=[],
        skipped=[],
        out_dir=out_dir,
        progress=Progress(sys.stderr, enabled=False),
        plots=plots.available(),
        footer=footer_line(machine),
    )
    done: list[Done] = []
    for name, entry in entries.items():
        study = get_study(name)
        lineup = lineups[study.part]
        ctx = dataclasses.replace(
            base,
            part=study.part,
            baseline=config["baselines"][study.part],
            contenders=lineup.contenders,
        )
        result = StudyResult.from_json(entry)
        report = study.report(result, ctx)
        warning = busy_warning(study.name, result.rows, study.judged)
        if warning:
            report.warnings.append(warning)
        done.append(Done(study, result, report))
        out.report(report)
    setup = [
        f"- Rendered from `{results}`, the results of `{config.get('command') or 'amber bench'}`"
    ]
    setup.append(policy_line(config["mode"], policy))
    setup += [line for lineup in lineups.values() for line in contender_lines(lineup)]
    report_md = write_report(out_dir / REPORT, done, machine, setup, [])
    out.print(f"\nwrote {report_md}")
    return BenchRun(report_md, results, done)


class ResultsError(ValueError):
    """A results.json that `rerender` cannot read."""
