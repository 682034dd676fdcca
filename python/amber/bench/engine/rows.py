"""Look-ups over result rows, ratios against the baseline of the same run, and the two tables most
studies print: one row per contender for a workload, and "op / op" ratio pairs across workloads."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from amber.bench.engine import plots
from amber.bench.engine.measure import OK, Row
from amber.bench.engine.study import Context
from amber.bench.engine.tables import MISSING, Table, fmt_ratio, fmt_size, fmt_time, ratio


class Rows:
    """Rows indexed by (workload, contender), with ratios against a baseline of the same run."""

    def __init__(self, rows: Iterable[Row], baseline: str) -> None:
        self.rows = list(rows)
        self.baseline = baseline
        self._by_key = {(r.workload, r.contender): r for r in self.rows}

    def get(self, workload: str, contender: str) -> Row | None:
        return self._by_key.get((workload, contender))

    def workloads(self) -> list[str]:
        return list(dict.fromkeys(r.workload for r in self.rows))

    def contenders(self) -> list[str]:
        return list(dict.fromkeys(r.contender for r in self.rows))

    def median(self, workload: str, contender: str, op: str) -> float | None:
        row = self.get(workload, contender)
        if row is None or op not in row.ops:
            return None
        return row.ops[op].median_ns

    def ratio(self, workload: str, contender: str, op: str) -> float | None:
        """Median time of `contender` over the baseline's, same workload and op; None when either
        is missing."""
        return ratio(self.median(workload, contender, op), self.median(workload, self.baseline, op))

    def size_ratio(self, workload: str, contender: str) -> float | None:
        row, base = self.get(workload, contender), self.get(workload, self.baseline)
        if row is None or base is None or row.size is None or base.size is None:
            return None
        return ratio(float(row.size), float(base.size))

    def bar(self, workload: str, contender: str, op: str) -> plots.Bar | None:
        """The ratio to the baseline's median, and the fastest and slowest sample over that same
        median (the whiskers of a bar); None when either is missing."""
        row, base = self.get(workload, contender), self.median(workload, self.baseline, op)
        if row is None or op not in row.ops or not base:
            return None
        t = row.ops[op]
        return t.median_ns / base, min(t.samples_ns) / base, max(t.samples_ns) / base

    def bars(
        self, workloads: Sequence[str], ops: Sequence[str]
    ) -> dict[str, dict[str, dict[str, plots.Bar]]]:
        """`[op][contender][workload]` = `bar(...)`, for `plots.ratio_bars`."""
        return {
            op: {
                c: {w: b for w in workloads if (b := self.bar(w, c, op)) is not None}
                for c in self.contenders()
            }
            for op in ops
        }

    def point(
        self, workload: str, contender: str, op: str, x: float, per: float = 1.0
    ) -> plots.Point | None:
        """(x, median, fastest, slowest) in seconds, each divided by `per`, for `plots.loglog`."""
        row = self.get(workload, contender)
        if row is None or op not in row.ops:
            return None
        t = row.ops[op]
        scale = 1e9 * per
        return x, t.median_ns / scale, min(t.samples_ns) / scale, max(t.samples_ns) / scale

    def ratios(
        self, workloads: Sequence[str], ops: Sequence[str]
    ) -> dict[str, dict[str, dict[str, float]]]:
        """`[op][contender][workload]` = time / baseline time, for `plots.ratio_bars`."""
        return {
            op: {
                c: {w: r for w in workloads if (r := self.ratio(w, c, op)) is not None}
                for c in self.contenders()
            }
            for op in ops
        }


NOISY = 0.25  # sample spread above which a note warns that the median is uncertain


def ratio_figure(
    rows: Rows,
    ops: Sequence[str],
    ctx: Context,
    stem: str,
    title: str,
    labels: Mapping[str, str] | None = None,
) -> list[Path]:
    """The usual figure of a study: bars of each contender's time over the baseline's, one panel
    per op, workloads along the x axis; none when plots are off or nothing was timed."""
    workloads = rows.workloads()
    if not ctx.plots or not any(r.ops for r in rows.rows):
        return []
    path = plots.ratio_bars(
        ctx.out_dir / f"{stem}.png",
        rows.bars(workloads, ops),
        workloads,
        rows.contenders(),
        rows.baseline,
        title,
        footer=ctx.footer,
        labels=labels,
    )
    return [path]


def noisy_series(
    rows: Iterable[Row], judged: Callable[[str], bool] = lambda op: True
) -> list[tuple[str, float]]:
    """The series whose samples spread more than `NOISY`: ("W1-L: orjson loads", spread), the
    widest first; `judged(op)` is false for ops whose spread says nothing of the machine."""
    found = [
        (f"{row.workload}: {row.contender} {op}", t.spread)
        for row in rows
        for op, t in row.ops.items()
        if t.spread > NOISY and judged(op)
    ]
    return sorted(found, key=lambda item: -item[1])


def busy_warning(
    study: str,
    rows: Iterable[Row],
    judged: Callable[[str], bool] = lambda op: True,
    shown: int = 6,
) -> str:
    """One warning for a study whose samples say the machine was busy, naming its noisy series;
    empty when every spread is within `NOISY`."""
    noisy = noisy_series(rows, judged)
    if not noisy:
        return ""
    named = ", ".join(f"{name} ({spread:.0%})" for name, spread in noisy[:shown])
    more = f" and {len(noisy) - shown} more" if len(noisy) > shown else ""
    return (
        f"The machine was busy during {study}: the samples of {len(noisy)} series spread more "
        f"than {NOISY:.0%} of their median ({named}{more}), so those medians and their ratios are "
        f"uncertain. Rerun on a quiet machine with more samples: "
        f"`amber bench --studies {study} --repeat 9`."
    )


def status_note(row: Row, spread: bool = True, said: str = "") -> str:
    """What the note column says: why a row has no timing, what the part says of it (`said`, e.g.
    how its input was fed), noisy samples, and the row's own note."""
    parts: list[str] = []
    if row.status != OK:
        parts.append(row.status)
    if said:
        parts.append(said)
    parts += [
        f"{op} samples spread {t.spread:.0%}"
        for op, t in row.ops.items()
        if spread and t.spread > NOISY
    ]
    if row.note:
        parts.append(row.note)
    return "; ".join(parts)


def contender_table(
    rows: Rows,
    workload: str,
    ops: Sequence[str],
    title: str,
    *,
    label: str = "contender",
    caption: str = "",
    said: dict[str, str] | None = None,
) -> Table:
    """Per contender: the median of each op, their ratios to the baseline, output size and its
    ratio. `said` maps a row's `input` to what the note column says of it."""
    base = rows.baseline
    table = Table(
        title=title,
        headers=[
            label,
            *ops,
            *(f"{op} vs {base}" for op in ops),
            "size",
            f"size vs {base}",
            "note",
        ],
        align="l" + "r" * (2 * len(ops) + 2) + "l",
        caption=caption,
    )
    for contender in rows.contenders():
        row = rows.get(workload, contender)
        if row is None:
            continue
        table.add(
            contender,
            *(fmt_time(rows.median(workload, contender, op)) for op in ops),
            *(fmt_ratio(rows.ratio(workload, contender, op)) for op in ops),
            fmt_size(row.size),
            fmt_ratio(rows.size_ratio(workload, contender)),
            status_note(row, said=(said or {}).get(row.input, "")),
        )
    return table


def ratio_pairs(
    rows: Rows,
    workloads: Sequence[str],
    ops: Sequence[str],
    title: str,
    *,
    label: str = "contender",
    caption: str = "",
) -> Table:
    """One row per contender, the ratios of `ops` to the baseline per workload ("0.24 / 0.48")."""
    joined = " / ".join(ops)
    table = Table(
        title=title,
        headers=[label, *[f"{w} {joined}" for w in workloads]],
        caption=caption,
    )
    for contender in rows.contenders():
        cells = []
        for w in workloads:
            found = [rows.ratio(w, contender, op) for op in ops]
            cells.append(
                MISSING if all(r is None for r in found) else " / ".join(_num(r) for r in found)
            )
        table.add(contender, *cells)
    return table


def _num(r: float | None) -> str:
    """A ratio without its "x": 0.24, or 0.002 for the ratios under 0.01 (see `fmt_ratio`)."""
    return MISSING if r is None else fmt_ratio(r).removesuffix("x")
