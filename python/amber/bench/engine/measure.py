"""Run one workload through every contender in this process: check each, then time them all in turn.

A contender is timed only after its `prepare` ran every operation once and its checks passed;
otherwise its row says why ("cannot represent", "not exact", "failed").
"""

from __future__ import annotations

import shutil
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any, TextIO

from amber.bench.engine.contender import Contender, Mismatch, Pending, Skipped, Trial, Workload
from amber.bench.engine.timing import Timing, TimingPolicy, prepare, sample_in_turn

OK = "ok"
NOT_EXACT = "not exact"
CANNOT_REPRESENT = "cannot represent"
FAILED = "failed"


@dataclass
class Row:
    """The outcome of one contender on one workload; `ops` maps each operation to its timing."""

    workload: str
    contender: str
    status: str
    size: int | None = None
    ops: dict[str, Timing] = field(default_factory=dict)
    input: str = ""  # how the reading operation's input was fed, when the part says
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "workload": self.workload,
            "contender": self.contender,
            "status": self.status,
            "size_bytes": self.size,
            "input": self.input,
            "note": self.note,
            "ops": {op: t.to_json() for op, t in self.ops.items()},
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Row:
        return cls(
            workload=data["workload"],
            contender=data["contender"],
            status=data["status"],
            size=data.get("size_bytes"),
            ops={op: Timing.from_json(t) for op, t in data.get("ops", {}).items()},
            input=data.get("input", ""),
            note=data.get("note", ""),
        )


class Progress:
    """Where a run is, on one line of stderr: the study (i of N) and workload it is on, what it is
    doing, how many workloads and studies remain and about how long they will take.

    On a terminal the line is rewritten in place; otherwise (a log, a pipe) each step is a line of
    its own. A heartbeat thread repeats the line, with the time so far, whenever nothing was
    written for `heartbeat` seconds, so a long single call is never silent for longer.

    The estimate of the time left is the workloads not yet run times the time a workload took so
    far (in this study when one finished, else in the run), or, before any finished, the guess
    `plan` was given from the timing policy.
    """

    def __init__(
        self, stream: TextIO | None = None, enabled: bool = True, *, heartbeat: float = 3.0
    ) -> None:
        self.stream = sys.stderr if stream is None else stream
        self.enabled = enabled
        self.tty = self.stream.isatty()
        self.heartbeat = heartbeat
        self.started = time.monotonic()
        self._width = 0
        self._lock = threading.Lock()
        self._message = ""
        self._last = 0.0  # when the line was last written
        self._plan: list[tuple[str, int, float]] = []  # (study, workloads, guessed s per workload)
        self._study = -1  # index into _plan
        self._study_started = 0.0
        self._workload = 0  # workloads begun in the current study
        self._workload_name = ""
        self._workload_started: float | None = None
        self._timing_started: float | None = None  # when its first sample was taken
        self._fraction = 0.0  # the share of its samples taken
        self._took: list[float] = []  # seconds of each finished workload, this study
        self._run_s = 0.0  # seconds spent in finished studies ...
        self._run_workloads = 0  # ... and the workloads they ran
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # --- what the run tells it ---------------------------------------------------------------

    def plan(self, studies: Sequence[tuple[str, int, float]]) -> None:
        """The studies to run, in order: name, number of workloads, and a guess of the seconds one
        workload takes (from the timing policy) used until one is measured."""
        self._plan = list(studies)
        self._study = -1

    def start_study(self, name: str) -> None:
        """Study `name` begins (it need not be in the plan: tests run studies one by one)."""
        self._end_workload()
        self._finish_study()
        names = [p[0] for p in self._plan]
        if name in names[self._study + 1 :]:
            self._study = names.index(name, self._study + 1)
        else:
            self._plan.insert(self._study + 1, (name, 1, 1.0))
            self._study += 1
        self._study_started = time.monotonic()
        self._workload, self._workload_name, self._took = 0, "", []
        self.update("starting")

    def start_workload(self, name: str) -> None:
        """The current study moves on to workload `name` (again the one it is on: no change)."""
        if name == self._workload_name and self._workload_started is not None:
            return
        self._end_workload()
        self._workload += 1
        self._workload_name = name
        self._workload_started = time.monotonic()
        self._timing_started = None
        self._fraction = 0.0

    def end_workload(self) -> None:
        """The current workload is measured (its name stays on the line for what follows)."""
        self._end_workload()

    def timing(self, fraction: float) -> None:
        """The share of the current workload's samples taken so far, from which the time its
        remaining samples take is estimated."""
        if self._workload_started is not None and self._timing_started is None:
            self._timing_started = time.monotonic()
        self._fraction = fraction

    def done(self) -> None:
        """The current study is over: clear the line on a terminal."""
        self._end_workload()
        self._finish_study()
        with self._lock:
            if self.enabled and self.tty and self._width:
                self.stream.write("\r" + " " * self._width + "\r")
                self.stream.flush()
                self._width = 0
            self._message = ""

    def close(self) -> None:
        """Stop the heartbeat and clear the line."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self.done()

    # --- the line ----------------------------------------------------------------------------

    def update(self, message: str, *, minor: bool = False) -> None:
        """Say what the run is doing now. A `minor` step (one sample of many) is written on a
        terminal, and elsewhere only when the line is otherwise due for a heartbeat."""
        if not self.enabled:
            return
        self._message = message
        now = time.monotonic()
        if minor and now - self._last < (0.2 if self.tty else self.heartbeat):
            return
        self._write()
        if self._thread is None and self.heartbeat > 0:
            self._thread = threading.Thread(target=self._beat, name="bench-progress", daemon=True)
            self._thread.start()

    def line(self, message: str | None = None) -> str:
        """The line as it would be written now."""
        now = time.monotonic()
        parts = [f"[{now - self.started:6.1f}s]"]
        if 0 <= self._study < len(self._plan):
            name, count, _ = self._plan[self._study]
            parts.append(f"study {self._study + 1}/{len(self._plan)} {name}")
            if self._workload:
                of = max(count, self._workload)
                parts.append(f"· workload {self._workload}/{of} {self._workload_name}")
        parts.append(f"· {self._message if message is None else message}")
        if self._plan and self._study >= 0:
            parts.append("· " + self.remaining(now))
        return " ".join(parts)

    def remaining(self, now: float | None = None) -> str:
        """ "2 workloads and 3 studies remain, about 1 min 20 s left"."""
        now = time.monotonic() if now is None else now
        _, count, guess = self._plan[self._study]
        here_left = max(0, count - self._workload)
        later = self._plan[self._study + 1 :]
        took = list(self._took)
        current = 0.0  # the seconds the current workload still needs
        if self._workload_started is not None:
            spent = now - self._workload_started
            if self._timing_started is not None and self._fraction > 0.02:
                # its samples so far, extrapolated: the best guess once they have started
                sampling = now - self._timing_started
                current = sampling * (1 - self._fraction) / self._fraction
                took.append(spent + current)
        mean_here = sum(took) / len(took) if took else 0.0
        per_workload = self._run_s / self._run_workloads if self._run_workloads else mean_here
        here = mean_here or per_workload or guess
        if self._workload_started is not None and not current:
            current = max(0.0, here - (now - self._workload_started))
        seconds = here_left * here + current
        seconds += sum(n * (per_workload or g) for _, n, g in later)
        counts = [_plural(here_left, "workload")] if here_left else []
        counts += [_plural(len(later), "study", "studies")] if later else []
        if not counts:
            left = "last workload"
        else:
            left = " and ".join(counts) + (" remains" if here_left + len(later) == 1 else " remain")
        return f"{left}, about {_duration(seconds)} left"

    def _write(self) -> None:
        with self._lock:
            line = self.line()
            if self.tty:
                # a line wider than the terminal would wrap, and "\r" rewrite only its last row:
                # the message gives way first, then the end of the line
                width = max(20, shutil.get_terminal_size().columns - 1)
                over = len(line) - width
                if over > 0:
                    message = self._message[: max(0, len(self._message) - over - 1)] + "…"
                    line = self.line(message)[:width]
                self.stream.write("\r" + line.ljust(self._width))
                self._width = len(line)
            else:
                self.stream.write(line + "\n")
            self.stream.flush()
            self._last = time.monotonic()

    def _beat(self) -> None:
        while not self._stop.wait(0.5):
            if self._message and time.monotonic() - self._last >= self.heartbeat:
                self._write()

    def _end_workload(self) -> None:
        if self._workload_started is not None:
            self._took.append(time.monotonic() - self._workload_started)
            self._workload_started = None

    def _finish_study(self) -> None:
        if self._study >= 0 and self._study_started:
            self._run_s += time.monotonic() - self._study_started
            self._run_workloads += max(1, self._workload)
            self._study_started = 0.0


def _plural(n: int, one: str, many: str = "") -> str:
    return f"{n} {one if n == 1 else many or one + 's'}"


def _duration(seconds: float) -> str:
    """ "40 s", "3 min 10 s", "1 h 5 min": rounded as an estimate should be."""
    s = round(seconds)
    if s < 60:
        return f"{max(1, s)} s"
    if s < 3600:
        m, s = divmod(s, 60)
        return f"{m} min {s // 10 * 10} s" if s >= 10 else f"{m} min"
    h, s = divmod(s, 3600)
    return f"{h} h {s // 60} min"


def short_error(exc: BaseException) -> str:
    """`TypeName: first line of the message`, cut to fit a table cell."""
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text[:120]}" if text else type(exc).__name__


def open_sessions(
    contenders: Sequence[Contender], stack: ExitStack
) -> tuple[list[Contender], dict[str, Any], list[Skipped]]:
    """Open each contender's setup on `stack` (closed, in reverse order, when the stack is): the
    contenders ready to run, their sessions by name, and the ones whose setup raised."""
    ready: list[Contender] = []
    sessions: dict[str, Any] = {}
    failed: list[Skipped] = []
    for contender in contenders:
        if contender.setup is not None:
            try:
                sessions[contender.name] = stack.enter_context(contender.setup())
            except Exception as exc:
                failed.append(Skipped(contender.name, f"setup failed ({short_error(exc)})"))
                continue
        ready.append(contender)
    return ready, sessions, failed


@dataclass
class Checked:
    """A contender after its check: its row, and the operations to time if the check passed."""

    row: Row
    trial: Trial | None = None

    @property
    def pending(self) -> list[Pending]:
        return (
            [] if self.trial is None or self.row.status != OK else list(self.trial.pending.values())
        )


def check_contender(
    contender: Contender, workload: Workload, value: Any, session: Any = None
) -> Checked:
    """Run `contender.prepare` on the built workload: every operation once, then its checks."""
    row = Row(workload.name, contender.name, OK)
    missing = [] if contender.kinds is None else sorted(workload.kinds - contender.kinds)
    if missing:
        row.status = CANNOT_REPRESENT
        row.note = "needs " + ", ".join(missing)
        return Checked(row)
    trial = Trial(workload, value, session)
    try:
        contender.prepare(trial)
    except Mismatch as exc:
        row.status, row.note = NOT_EXACT, str(exc)
    except Exception as exc:
        row.status, row.note = FAILED, short_error(exc)
    else:
        row.note = trial.note
    row.size, row.input = trial.size, trial.input
    return Checked(row, trial)


def time_checked(
    checked: Sequence[Checked],
    policy: TimingPolicy,
    on_sample: Callable[[int, int, int, int], None] | None = None,
    progress: Progress | None = None,
) -> list[Row]:
    """Time every pending operation of `checked`, all series in turn (see `sample_in_turn`), then
    close what each trial left to clean up; `progress` hears of each series calibrated."""
    with ExitStack() as stack:
        for c in checked:
            if c.trial is not None:
                stack.push(c.trial.cleanup)
        pending = [(c.row, p) for c in checked for p in c.pending]
        series = []
        for i, (row, p) in enumerate(pending, 1):
            if progress is not None:
                progress.update(f"calibrating {i}/{len(pending)}", minor=True)
            series.append((row, p.op, prepare(p.fn, p.arg, policy, p.estimate_ns)))
        sample_in_turn([s for _, _, s in series], on_sample)
        for row, op, s in series:
            row.ops[op] = s.timing()
    return [c.row for c in checked]


def run_contender(
    contender: Contender,
    workload: Workload,
    value: Any,
    policy: TimingPolicy,
    session: Any = None,
) -> Row:
    """Check one contender on the built workload `value`, then time its operations."""
    return time_checked([check_contender(contender, workload, value, session)], policy)[0]


def run_workload(
    workload: Workload,
    contenders: Sequence[Contender],
    policy: TimingPolicy,
    progress: Progress,
    *,
    sessions: Mapping[str, Any] | None = None,
) -> list[Row]:
    """Build the workload once, check every contender on it, then time them all in turn."""
    progress.start_workload(workload.name)
    progress.update("building")
    value = workload.build()
    sessions = sessions or {}
    checked = []
    for i, contender in enumerate(contenders, 1):
        progress.update(f"checking {i}/{len(contenders)} {contender.name}")
        checked.append(check_contender(contender, workload, value, sessions.get(contender.name)))
    rows = time_checked(checked, policy, timing_steps(progress), progress)
    progress.end_workload()
    return rows


def timing_steps(progress: Progress) -> Callable[[int, int, int, int], None]:
    """The `on_sample` of `sample_in_turn`: a line per round, and a minor step per sample."""

    def on_sample(r: int, rounds: int, i: int, count: int) -> None:
        progress.timing((r + i / max(1, count)) / max(1, rounds))
        if i == 0:
            progress.update(f"timing, round {r + 1}/{rounds}")
        else:
            progress.update(f"timing, round {r + 1}/{rounds}, sample {i + 1}/{count}", minor=True)

    return on_sample
