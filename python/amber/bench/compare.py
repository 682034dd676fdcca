"""Look-ups over result rows and the per-workload codec table every codec study prints."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from amber.bench.runner import INPUT_COPY, OK, Row
from amber.bench.tables import MISSING, Table, fmt_ratio, fmt_size, fmt_time, ratio


class Rows:
    """Rows indexed by (workload, codec), with ratios against a baseline codec of the same run."""

    def __init__(self, rows: Iterable[Row], baseline: str) -> None:
        self.rows = list(rows)
        self.baseline = baseline
        self._by_key = {(r.workload, r.codec): r for r in self.rows}

    def get(self, workload: str, codec: str) -> Row | None:
        return self._by_key.get((workload, codec))

    def workloads(self) -> list[str]:
        return list(dict.fromkeys(r.workload for r in self.rows))

    def codecs(self) -> list[str]:
        return list(dict.fromkeys(r.codec for r in self.rows))

    def median(self, workload: str, codec: str, op: str) -> float | None:
        row = self.get(workload, codec)
        if row is None or op not in row.ops:
            return None
        return row.ops[op].median_ns

    def ratio(self, workload: str, codec: str, op: str) -> float | None:
        """Median time of `codec` over the baseline's, same workload and op; None when either is
        missing."""
        return ratio(self.median(workload, codec, op), self.median(workload, self.baseline, op))

    def size_ratio(self, workload: str, codec: str) -> float | None:
        row, base = self.get(workload, codec), self.get(workload, self.baseline)
        if row is None or base is None or row.size is None or base.size is None:
            return None
        return ratio(float(row.size), float(base.size))


NOISY = 0.25  # sample spread above which a note warns that the median is uncertain


def status_note(row: Row, spread: bool = True) -> str:
    """What the note column says: why a row has no timing, how loads was fed, noisy samples."""
    parts: list[str] = []
    if row.status != OK:
        parts.append(row.status)
    if row.loads_input == INPUT_COPY:
        parts.append("loads given bytes(mv): copy timed")
    parts += [
        f"{op} samples spread {t.spread:.0%}"
        for op, t in row.ops.items()
        if spread and t.spread > NOISY
    ]
    if row.note:
        parts.append(row.note)
    return "; ".join(parts)


def codec_table(rows: Rows, workload: str, title: str, caption: str = "") -> Table:
    """Per codec: median dumps and loads, their ratio to the baseline, encoded size and its ratio."""
    base = rows.baseline
    table = Table(
        title=title,
        headers=[
            "codec",
            "dumps",
            "loads",
            f"dumps vs {base}",
            f"loads vs {base}",
            "size",
            f"size vs {base}",
            "note",
        ],
        align="lrrrrrrl",
        caption=caption,
    )
    for codec in rows.codecs():
        row = rows.get(workload, codec)
        if row is None:
            continue
        table.add(
            codec,
            fmt_time(rows.median(workload, codec, "dumps")),
            fmt_time(rows.median(workload, codec, "loads")),
            fmt_ratio(rows.ratio(workload, codec, "dumps")),
            fmt_ratio(rows.ratio(workload, codec, "loads")),
            fmt_size(row.size),
            fmt_ratio(rows.size_ratio(workload, codec)),
            status_note(row),
        )
    return table


def ratio_pairs(rows: Rows, workloads: Sequence[str], title: str, caption: str = "") -> Table:
    """The anchor layout: one row per codec, "dumps / loads" ratios per workload."""
    table = Table(
        title=title,
        headers=["codec", *[f"{w} dumps / loads" for w in workloads]],
        caption=caption,
    )
    for codec in rows.codecs():
        cells = []
        for w in workloads:
            d, lo = rows.ratio(w, codec, "dumps"), rows.ratio(w, codec, "loads")
            cells.append(MISSING if d is None and lo is None else f"{_num(d)} / {_num(lo)}")
        table.add(codec, *cells)
    return table


def _num(r: float | None) -> str:
    return MISSING if r is None else f"{r:.2f}"
