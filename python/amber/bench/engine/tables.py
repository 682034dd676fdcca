"""Tables rendered twice, as aligned text for the terminal and as markdown for report.md, and the
number formats both use."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

MISSING = "\u2013"  # an en dash: the published tables print an empty cell so


@dataclass
class Table:
    title: str
    headers: list[str]
    rows: list[list[str]] = field(default_factory=list)
    align: str = ""  # one of "l"/"r" per column; default: first column left, the rest right
    caption: str = ""

    def add(self, *cells: str) -> None:
        if len(cells) != len(self.headers):
            raise ValueError(f"{len(cells)} cells for {len(self.headers)} columns")
        self.rows.append(list(cells))

    def _align(self) -> str:
        return self.align or "l" + "r" * (len(self.headers) - 1)

    def markdown(self) -> str:
        def esc(cell: str) -> str:
            return cell.replace("|", "\\|")

        marks = ["---:" if a == "r" else "---" for a in self._align()]
        lines = [f"### {self.title}", ""]
        if self.caption:
            lines += [self.caption, ""]
        lines.append("| " + " | ".join(esc(h) for h in self.headers) + " |")
        lines.append("|" + "|".join(marks) + "|")
        lines += ["| " + " | ".join(esc(c) for c in row) + " |" for row in self.rows]
        return "\n".join(lines) + "\n"

    def text(self) -> str:
        cols = list(zip(self.headers, *self.rows, strict=False))
        widths = [max(len(c) for c in col) for col in cols]

        def line(cells: Sequence[str]) -> str:
            parts = [
                c.rjust(w) if a == "r" else c.ljust(w)
                for c, w, a in zip(cells, widths, self._align(), strict=True)
            ]
            return "  ".join(parts).rstrip()

        out = [self.title, line(self.headers), "  ".join("-" * w for w in widths)]
        out += [line(row) for row in self.rows]
        if self.caption:
            out.append(self.caption)
        return "\n".join(out) + "\n"


def fmt_time(ns: float | None) -> str:
    """3 significant digits in the largest unit that keeps the number >= 1: 7.39 µs, 608 ms, 2.20 s."""
    if ns is None or math.isnan(ns):
        return MISSING
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{_sig3(ns / scale)} {unit}"
    return f"{_sig3(ns)} ns"


def fmt_size(n: int | None) -> str:
    """Decimal units, as the published tables print them: 10.0 MB, 1.52 kB, 950 B."""
    if n is None:
        return MISSING
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{_sig3(n / scale)} {unit}"
    return f"{n} B"


def fmt_ratio(r: float | None) -> str:
    if r is None or math.isnan(r):
        return MISSING
    if r >= 100:
        return f"{r:.0f}x"
    if r >= 0.01 or r == 0:
        return f"{r:.2f}x"
    return f"{r:.1g}x"  # reading one key of a big file: 0.001x, not 0.00x


def ratio(value: float | None, base: float | None) -> float | None:
    if value is None or base is None or base <= 0:
        return None
    return value / base


def _sig3(x: float) -> str:
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}"
