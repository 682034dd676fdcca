"""What a person sees of a long benchmark run: the study and workload it is on, what remains and
the time left, a beat while a step is long, and a warning when a busy machine spread the samples."""

from __future__ import annotations

import io
import re
import time
from pathlib import Path

from amber.bench import BenchConfig, run
from amber.bench.engine.measure import (
    OK,
    Row,
)
from amber.bench.engine.rows import busy_warning
from amber.bench.engine.timing import Timing
from amber.bench.parts.codec import contenders as codecs

# --- what a person sees of a long run: progress, a busy machine ---------------------------------


def test_progress_names_the_study_and_workload_what_remains_and_the_time_left(
    tmp_path: Path,
) -> None:
    found, _ = codecs.CODEC.resolve(["pickle-5"])
    err = io.StringIO()  # not a terminal: one line per step
    run(
        BenchConfig(out_dir=tmp_path, mode="tiny", studies=["objects", "scaling"]),
        contenders={"codec": found},
        stdout=io.StringIO(),
        stderr=err,
    )
    lines = err.getvalue().splitlines()
    assert "\r" not in err.getvalue() and all(line.startswith("[") for line in lines)
    text = "\n".join(lines)
    assert "study 1/2 objects · workload 1/4 W1-S · building" in text
    assert "study 1/2 objects · workload 4/4 W2 · timing, round 2/2" in text
    assert "study 2/2 scaling · workload 2/2 W3-1k" in text
    left = r" · (\d+ workloads? and )?\d+ study remains?, about \d+ (s|min)( \d+ s)? left$"
    assert any(re.search(r"workload 1/4 W1-S · .*" + left, line) for line in lines)
    assert re.search(r"3 workloads and 1 study remain, about \d+ (s|min)", text)
    assert re.search(r"workload 2/2 W3-1k · .* · last workload, about \d+ s left", text)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_beats_while_a_step_is_long_and_rewrites_one_line_on_a_terminal() -> None:
    from amber.bench.engine.measure import Progress

    log = io.StringIO()
    progress = Progress(log, heartbeat=0.2)
    progress.plan([("objects", 2, 1.0), ("scaling", 5, 1.0)])
    progress.start_study("objects")
    progress.start_workload("W1-L")
    progress.update("timing, round 1/5")
    time.sleep(0.9)  # one long sample
    progress.close()
    beats = [line for line in log.getvalue().splitlines() if "round 1/5" in line]
    assert len(beats) >= 2, log.getvalue()  # the step, then at least one heartbeat
    # 1 workload after this one, this one, 5 later: 1 s each, less what this one has run
    assert re.search(r"1 workload and 1 study remain, about [67] s left$", beats[0]), beats[0]

    tty = _Terminal()
    progress = Progress(tty, heartbeat=0)
    progress.plan([("objects", 1, 1.0)])
    progress.start_study("objects")
    progress.update("a long message about checking")
    progress.update("short")
    progress.close()
    assert "\n" not in tty.getvalue() and tty.getvalue().count("\r") >= 3


def _noisy(workload: str, contender: str, op: str, samples: tuple[float, ...]) -> Row:
    median = sorted(samples)[len(samples) // 2]
    return Row(workload, contender, OK, ops={op: Timing(median, samples, 1)})


def test_a_study_whose_samples_spread_warns_that_the_machine_was_busy(tmp_path: Path) -> None:
    from amber.bench.engine.output import Console, Done, describe, write_report
    from amber.bench.engine.registry import get_study
    from amber.bench.engine.study import Report, StudyResult

    rows = [
        _noisy("W1-L", "orjson", "loads", (50.0, 100.0, 300.0)),  # spread 250%
        _noisy("W1-L", "pickle-5", "loads", (99.0, 100.0, 101.0)),
        _noisy("read-1k", "psycopg2", "read user", (1.0, 10.0, 30.0)),  # clock ticks: not judged
    ]
    assert busy_warning("objects", rows[1:2]) == ""
    pg = get_study("pg")
    warning = busy_warning("pg", rows, pg.judged)
    assert "the samples of 1 series spread more than 25% of their median" in warning
    assert "W1-L: orjson loads (250%)" in warning and "pickle-5" not in warning
    assert "psycopg2" not in warning and "quiet machine" in warning
    assert "`amber bench --studies pg --repeat 9`" in warning

    report = Report("objects: Python objects through each codec", warnings=[warning])
    done = [Done(get_study("objects"), StudyResult("objects", rows=rows), report)]
    text = write_report(tmp_path / "report.md", done, describe([]), [], []).read_text()
    assert f"> **Warning:** {warning}" in text
    out = io.StringIO()
    Console(out).report(report)
    assert f"warning: {warning}" in out.getvalue()
