"""What the dask and pool studies share: parts of ten-key records, their sizes by mode, a
study of one such workload with one table and one ratio figure, and a cluster or pool that
every contender of the study uses.

A module, not a part: it registers nothing, and both parts import it.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from typing import Any, ClassVar, Generic, TypeVar

from amber.bench.engine.contender import Workload
from amber.bench.engine.rows import Rows, contender_table, ratio_figure
from amber.bench.engine.study import Context, Report, Study, StudyResult, describe_workloads

T = TypeVar("T")

# (parts, records per part) by mode
SIZES = {"full": (8, 50_000), "quick": (4, 20_000), "tiny": (2, 1_000)}


def ten_key_records(n: int) -> list[dict[str, Any]]:
    """`n` records of ten keys: ints, floats, strings, a bool, None and a list."""
    return [
        {
            "id": i,
            "name": f"user-{i}",
            "email": f"user{i}@example.com",
            "score": i * 0.25,
            "active": i % 3 == 0,
            "tags": ["a", "b"] if i % 2 else [],
            "group": i % 17,
            "ratio": 1 / (i + 1),
            "note": None,
            "code": f"{i:08x}",
        }
        for i in range(n)
    ]


def parts_workload(mode: str, where: str) -> Workload:
    """The workload `(parts, records per part)` of `mode`; `where` ends its description."""
    parts, size = SIZES[mode]
    return Workload(
        name=f"{parts} parts of {size:,} records",
        description=f"{parts} parts of {size:,} ten-key records (ints, floats, str, bool, None, "
        f"a list), {where}",
        build=lambda: (parts, size),
        size=parts * size,
    )


class RecordsStudy(Study):
    """A study that times its part's ways of moving one workload of records: `ops` per way, a
    table and a ratio figure; subclasses say where the records are made and what `intro` says."""

    ops: ClassVar[tuple[str, ...]]
    where: ClassVar[str]  # the end of the workload's description
    setting: ClassVar[tuple[str, str]]  # a params entry: what the records run on
    title: ClassVar[str]

    @abstractmethod
    def intro(self, ctx: Context) -> str:
        """The report's paragraph above the table."""

    def run(self, ctx: Context) -> StudyResult:
        result = StudyResult(self.name)
        chosen = parts_workload(ctx.mode, self.where)
        result.params["workloads"] = describe_workloads([chosen])
        result.params[self.setting[0]] = self.setting[1]
        result.rows += ctx.measure(chosen)
        return result

    def report(self, result: StudyResult, ctx: Context) -> Report:
        rows = Rows(result.rows, ctx.baseline)
        report = Report(title=self.title, intro=self.intro(ctx))
        for name in rows.workloads():
            report.tables.append(
                contender_table(rows, name, self.ops, f"{name}: median time per call", label="way")
            )
        report.plots += ratio_figure(
            rows,
            self.ops,
            ctx,
            f"{self.name}_ratio",
            f"{self.title}, time relative to {ctx.baseline}",
        )
        return report


class Shared(Generic[T]):
    """One resource for all the contenders of a study: `open()` (a context manager) is entered
    by the first contender's setup and left when the last one's setup closes. Call it to get
    a contender's `setup`."""

    def __init__(self, open: Callable[[], AbstractContextManager[T]]) -> None:
        self._open = open
        self._users = 0
        self._stack = ExitStack()
        self._value: T | None = None

    @contextmanager
    def __call__(self) -> Iterator[T]:
        if self._users == 0:
            self._value = self._stack.enter_context(self._open())
        self._users += 1
        try:
            yield self._value  # type: ignore[misc]
        finally:
            self._users -= 1
            if self._users == 0:
                self._value = None
                self._stack.close()
