"""Run one workload through every codec in this process: check each, then time them all in turn.

A codec is timed only after `loads(dumps(x))` reproduces `x` exactly; otherwise its row says why.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from amber.bench.codecs import Buffer, Codec, Loads
from amber.bench.timing import Timing, TimingPolicy, exactly_equal, prepare, sample_in_turn, timed
from amber.bench.workloads import Workload, embed

OK = "ok"
NOT_EXACT = "not exact"
CANNOT_REPRESENT = "cannot represent"
FAILED = "failed"

INPUT_BYTES = "bytes"
INPUT_MEMORYVIEW = "memoryview"
INPUT_COPY = "bytes(mv) copy"


@dataclass
class Row:
    """The outcome of one codec on one workload; `ops` maps "dumps"/"loads" to their timing."""

    workload: str
    codec: str
    status: str
    size: int | None = None
    ops: dict[str, Timing] = field(default_factory=dict)
    loads_input: str = INPUT_BYTES
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "workload": self.workload,
            "codec": self.codec,
            "status": self.status,
            "size_bytes": self.size,
            "loads_input": self.loads_input,
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


def _short(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text[:120]}" if text else type(exc).__name__


def _copy_then(codec: Codec) -> Loads:
    """`loads` for a codec that rejects memoryview: copy to bytes first, on the clock."""

    def loads(view: Buffer) -> Any:
        return codec.loads(bytes(view))

    return loads


# An operation of a checked codec, still to be timed: its name, function, argument and the time
# of the call the check made.
Pending = list[tuple[str, Callable[[Any], object], Any, int]]


def check_codec(
    codec: Codec, workload: Workload, obj: Any, *, from_view: bool = False
) -> tuple[Row, Pending]:
    """Check one codec's round trip on `obj`; the row, and what to time if it is exact."""
    row = Row(workload.name, codec.name, OK)
    missing = workload.kinds - codec.kinds
    if missing:
        row.status = CANNOT_REPRESENT
        row.note = "needs " + ", ".join(sorted(missing))
        return row, []
    try:
        payload, dumps_ns = timed(codec.dumps, obj)
        row.size = len(payload)
        loads: Loads = codec.loads
        buf: Buffer = payload
        if from_view:
            buf = embed(payload)
            row.loads_input = INPUT_MEMORYVIEW
            try:
                back, loads_ns = timed(loads, buf)
            except Exception as exc:
                loads = _copy_then(codec)
                row.loads_input = INPUT_COPY
                row.note = f"loads(memoryview) raised {type(exc).__name__}"
                back, loads_ns = timed(loads, buf)
        else:
            back, loads_ns = timed(loads, buf)
    except Exception as exc:
        row.status = FAILED
        row.note = _short(exc)
        return row, []
    if not exactly_equal(obj, back):
        row.status = NOT_EXACT
        row.note = "loads(dumps(x)) differs from x"
        return row, []
    del back
    return row, [("dumps", codec.dumps, obj, dumps_ns), ("loads", loads, buf, loads_ns)]


def time_checked(
    checked: Sequence[tuple[Row, Pending]],
    policy: TimingPolicy,
    on_round: Callable[[int, int], None] | None = None,
) -> list[Row]:
    """Time every pending operation of `checked`, all series in turn (see `sample_in_turn`)."""
    series = [
        (row, op, prepare(fn, arg, policy, ns))
        for row, pending in checked
        for op, fn, arg, ns in pending
    ]
    sample_in_turn([s for _, _, s in series], on_round)
    for row, op, s in series:
        row.ops[op] = s.timing()
    return [row for row, _ in checked]


def run_codec(
    codec: Codec,
    workload: Workload,
    obj: Any,
    policy: TimingPolicy,
    *,
    from_view: bool = False,
) -> Row:
    """Check one codec's round trip on `obj`, then time dumps and loads."""
    return time_checked([check_codec(codec, workload, obj, from_view=from_view)], policy)[0]


def run_workload(
    workload: Workload,
    codecs: Sequence[Codec],
    policy: TimingPolicy,
    progress: Progress,
    *,
    label: str = "",
    from_view: bool = False,
) -> list[Row]:
    """Build the workload once, check every codec on it, then time them all in turn."""
    progress.update(f"{label}{workload.name}: building")
    obj = workload.build()
    checked = []
    for i, codec in enumerate(codecs, 1):
        progress.update(f"{label}{workload.name}: [{i}/{len(codecs)}] checking {codec.name}")
        checked.append(check_codec(codec, workload, obj, from_view=from_view))

    def on_round(r: int, rounds: int) -> None:
        progress.update(f"{label}{workload.name}: timing, round {r + 1}/{rounds}")

    return time_checked(checked, policy, on_round)
