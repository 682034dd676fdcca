"""Render the README's headline table from an `amber bench` results.json.

    python benches/summary.py bench-out/results.json

Ratios are time divided by pickle protocol 5's time in the same run (below 1 is faster), per
workload and codec: the table of README.md and docs/benchmarks.md.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

CODECS = [
    "amber",
    "amber-identity",
    "pickle-5",
    "pickle-5-fast",
    "msgspec",
    "ormsgpack",
    "orjson",
    "cbor2",
]
BASE = "pickle-5"


def _median(row: dict[str, Any], op: str) -> float | None:
    ops = row.get("ops") or {}
    return ops.get(op, {}).get("median_ns") if row.get("status") == "ok" else None


def table(results: dict[str, Any]) -> str:
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for study in results["studies"].values():
        if study.get("part", "codec") != "codec":
            continue  # the README table is the codec's; other parts have their own names
        for row in study["rows"]:
            # "codec" names the contender in results written before parts had their own contenders
            rows[(row["workload"], row.get("contender", row.get("codec", "")))] = row
    w3 = sorted({w for w, _ in rows if w.startswith("W3-")}, key=_entries)
    columns = ["W1-M", "W1-L", "W2"] + ([w3[-1]] if w3 else [])

    def ratio(workload: str, codec: str, op: str) -> str:
        mine, base = rows.get((workload, codec)), rows.get((workload, BASE))
        a = _median(mine, op) if mine else None
        b = _median(base, op) if base else None
        return f"{a / b:.2f}" if a and b else "-"

    head = "| codec | " + " | ".join(f"{c} dumps / loads" for c in columns) + " | W1-L bytes |"
    lines = [head, "|---|" + "---:|" * (len(columns) + 1)]
    for codec in CODECS:
        if not any((w, codec) in rows for w in columns):
            continue
        cells = [f"{ratio(w, codec, 'dumps')} / {ratio(w, codec, 'loads')}" for w in columns]
        size = rows.get(("W1-L", codec), {}).get("size_bytes")
        cells.append(f"{size / 1e6:.1f} MB" if size else "-")
        lines.append(f"| {codec} | " + " | ".join(cells) + " |")
    base_times = []
    for w in columns:
        row = rows.get((w, BASE))
        if row and _median(row, "dumps"):
            d, lo = _median(row, "dumps"), _median(row, "loads")
            base_times.append(f"{w} {_fmt(d)} / {_fmt(lo)}")
    lines.append("")
    lines.append(f"{BASE} times in this run (dumps / loads): " + "; ".join(base_times) + ".")
    return "\n".join(lines)


def _entries(label: str) -> int:
    """W3-100 -> 100, W3-10k -> 10_000, W3-1M -> 1_000_000."""
    n = label.removeprefix("W3-")
    scale = {"k": 1_000, "M": 1_000_000}.get(n[-1], 1)
    return int(n.rstrip("kM")) * scale


def _fmt(ns: float | None) -> str:
    if ns is None:
        return "-"
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.0f} ns"


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    results = json.loads(Path(argv[0]).read_text())
    m = results.get("machine", {})
    print(table(results))
    if m:
        libs = ", ".join(f"{k} {v}" for k, v in m.get("libraries", {}).items())
        print(
            f"\n{m.get('cpu_model')}, {m.get('cpu_count')} CPUs; "
            f"{m.get('python_implementation')} {m.get('python')}; {libs}; {m.get('date_utc')} UTC."
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
