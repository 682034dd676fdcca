"""What the engine times: a workload, and contenders that each run a named set of operations on it.

A `Contender` is one tool a user could pick for the job a part does (a codec's dumps and loads, a
protobuf runtime's serialize and parse, an archive's write and read, a database driver's insert and
select). The engine knows nothing of those operations. For each workload it builds the value once,
then hands every contender a `Trial`: the contender's `prepare` runs each of its operations once
through `Trial.run` (which records the operation to time, with the time of that first call), checks
the results through `Trial.expect` / `Trial.expect_exact`, and may say how the input was fed and how
many bytes the output took. Only contenders whose check passed are timed.

A contender that needs something for a whole study (a database connection, a scratch directory)
gives a `setup`: a context manager opened once per study before any workload and closed after the
last; what it yields reaches `prepare` as `Trial.session`. Things one workload leaves behind (a
file, a table) go on `Trial.cleanup`, closed once that workload is timed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass, field
from typing import Any

from amber.bench.engine.exact import exactly_equal
from amber.bench.engine.timing import timed

Operation = Callable[[Any], object]

_THE_VALUE: Any = object()  # `expect_exact`'s default: compare with the workload's value


@dataclass(frozen=True)
class Workload:
    """A named value to run every contender on, built on demand so big ones live only while timed.

    `kinds` names the value kinds the workload needs (a part defines its own; see `Contender.kinds`),
    `size` its number of items for per-item figures, and `options` how a study wants contenders to
    treat it (the codec part reads `loads_input` from it); size and options go into results.json.
    """

    name: str
    description: str
    build: Callable[[], Any]
    kinds: frozenset[str] = frozenset()
    size: int = 0
    options: Mapping[str, object] = field(default_factory=dict)


class Mismatch(Exception):
    """A check before timing failed: the contender's result is not what was given to it."""


@dataclass(frozen=True)
class Pending:
    """An operation a checked contender offers to time: `fn(arg)`, and how long its first call took."""

    op: str
    fn: Operation
    arg: Any
    estimate_ns: int


class Trial:
    """One contender on one workload, before timing; `prepare` fills it in (see the module doc)."""

    def __init__(self, workload: Workload, value: Any, session: Any = None) -> None:
        self.workload = workload
        self.value = value  # the built workload, shared by every contender: do not mutate it
        self.session = session  # what the contender's setup yielded for this study, or None
        self.size: int | None = None  # bytes the contender's output takes, when it has one
        self.input = ""  # how the input of a reading operation was fed, when it matters
        self.note = ""
        self.cleanup = ExitStack()  # closed once this workload is timed (or its check failed)
        self.pending: dict[str, Pending] = {}

    @property
    def options(self) -> Mapping[str, object]:
        return self.workload.options

    def run(self, op: str, fn: Operation, arg: Any) -> Any:
        """Call `fn(arg)` once and return its result; `op` is then timed as `fn(arg)` in a loop.

        Every call of the loop gets the same `arg`, so an operation that consumes its input (a
        file handle, an iterator) must take something it can reopen instead. Running `op` again
        replaces it; an operation whose call raised is not recorded.
        """
        out, ns = timed(fn, arg)
        self.pending[op] = Pending(op, fn, arg, ns)
        return out

    def expect(self, ok: bool, why: str) -> None:
        """The check: when `ok` is false the contender is reported "not exact", with `why`."""
        if not ok:
            raise Mismatch(why)

    def expect_exact(self, result: Any, why: str, expected: Any = _THE_VALUE) -> None:
        """Check `result` has the same values, types and order as `expected` (default: the
        workload's value); see `amber.bench.engine.exact.exactly_equal`."""
        want = self.value if expected is _THE_VALUE else expected
        self.expect(exactly_equal(want, result), why)


Prepare = Callable[[Trial], None]
Setup = Callable[[], AbstractContextManager[Any]]


@dataclass(frozen=True)
class Contender:
    """A named set of operations on a prepared workload, with its check and an optional setup.

    `kinds` is the set of value kinds it keeps exactly, or None for any; a workload needing another
    kind is reported "cannot represent" without running. `package` is the distribution whose version
    the report names; `note` says which variant this is (a protocol, a flag).
    """

    name: str
    prepare: Prepare
    kinds: frozenset[str] | None = None
    setup: Setup | None = None
    package: str | None = None
    note: str = ""


class UnknownNameError(KeyError):
    """A part, study or contender name that is not registered."""


@dataclass(frozen=True)
class Skipped:
    """A contender left out of a run: its library is missing, or its setup failed."""

    name: str
    reason: str
