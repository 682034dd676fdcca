"""Run one workload through every contender in this process: check each, then time them all in turn.

A contender is timed only after its `prepare` ran every operation once and its checks passed;
otherwise its row says why ("cannot represent", "not exact", "failed").
"""

from __future__ import annotations

import sys
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


class Progress:
    """One line on stderr: rewritten in place on a terminal, one line per step otherwise."""

    def __init__(self, stream: TextIO | None = None, enabled: bool = True) -> None:
        self.stream = sys.stderr if stream is None else stream
        self.enabled = enabled
        self.tty = self.stream.isatty()
        self.started = time.monotonic()
        self._width = 0

    def update(self, message: str) -> None:
        if not self.enabled:
            return
        line = f"[{time.monotonic() - self.started:6.1f}s] {message}"
        if self.tty:
            self.stream.write("\r" + line.ljust(self._width))
            self._width = len(line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def done(self) -> None:
        if self.enabled and self.tty and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0


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
    on_round: Callable[[int, int], None] | None = None,
) -> list[Row]:
    """Time every pending operation of `checked`, all series in turn (see `sample_in_turn`), then
    close what each trial left to clean up."""
    with ExitStack() as stack:
        for c in checked:
            if c.trial is not None:
                stack.push(c.trial.cleanup)
        series = [
            (c.row, p.op, prepare(p.fn, p.arg, policy, p.estimate_ns))
            for c in checked
            for p in c.pending
        ]
        sample_in_turn([s for _, _, s in series], on_round)
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
    label: str = "",
) -> list[Row]:
    """Build the workload once, check every contender on it, then time them all in turn."""
    progress.update(f"{label}{workload.name}: building")
    value = workload.build()
    sessions = sessions or {}
    checked = []
    for i, contender in enumerate(contenders, 1):
        progress.update(
            f"{label}{workload.name}: [{i}/{len(contenders)}] checking {contender.name}"
        )
        checked.append(check_contender(contender, workload, value, sessions.get(contender.name)))

    def on_round(r: int, rounds: int) -> None:
        progress.update(f"{label}{workload.name}: timing, round {r + 1}/{rounds}")

    return time_checked(checked, policy, on_round)
