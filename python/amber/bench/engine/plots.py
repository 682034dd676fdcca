"""PNG figures through matplotlib's Agg backend; every function is a no-op question away from
`available()`, since matplotlib is an optional dependency."""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


def available() -> bool:
    return importlib.util.find_spec("matplotlib") is not None


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _panels(plt: Any, count: int) -> tuple[Any, Any]:
    """A figure with one panel per operation, side by side, sharing the y axis."""
    fig, axes = plt.subplots(1, count, figsize=(13, 4.8), sharey=True, squeeze=False)
    return fig, list(axes[0])


def _save(plt: Any, fig: Any, axes: Any, ylabel: str, title: str, path: Path) -> Path:
    """Label, add the legend beside the last panel, title and write the figure as PNG."""
    axes[0].set_ylabel(ylabel)
    axes[-1].legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def ratio_bars(
    path: Path,
    ratios: Mapping[str, Mapping[str, Mapping[str, float]]],
    workloads: Sequence[str],
    contenders: Sequence[str],
    baseline: str,
    title: str,
) -> Path:
    """Grouped bars, one panel per op: `ratios[op][contender][workload]` = time / baseline time."""
    plt = _pyplot()
    ops = list(ratios)
    fig, axes = _panels(plt, len(ops))
    width = 0.8 / max(1, len(contenders))
    for ax, op in zip(axes, ops, strict=True):
        for i, contender in enumerate(contenders):
            per_workload = ratios[op].get(contender, {})
            xs = [w + (i - (len(contenders) - 1) / 2) * width for w in range(len(workloads))]
            ys = [per_workload.get(name, float("nan")) for name in workloads]
            ax.bar(xs, ys, width, label=contender)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_yscale("log")
        ax.set_xticks(range(len(workloads)), list(workloads))
        ax.set_title(f"{op}: time / {baseline} time (lower is faster)")
        ax.grid(axis="y", which="both", alpha=0.3)
    return _save(plt, fig, axes, f"ratio vs {baseline} (log)", title, path)


def loglog(
    path: Path,
    series: Mapping[str, Mapping[str, Sequence[tuple[int, float]]]],
    title: str,
    xlabel: str,
    highlight: str = "amber",
) -> Path:
    """One log-log panel per op: `series[op][contender]` = [(size, seconds per operation), ...];
    contenders whose name starts with `highlight` get a thicker line."""
    plt = _pyplot()
    ops = list(series)
    fig, axes = _panels(plt, len(ops))
    for ax, op in zip(axes, ops, strict=True):
        for contender, points in series[op].items():
            if not points:
                continue
            xs, ys = zip(*points, strict=True)
            width = 2.6 if contender.startswith(highlight) else 1.3
            ax.plot(xs, ys, marker="o", linewidth=width, label=contender)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_title(op)
        ax.grid(which="both", alpha=0.3)
    return _save(plt, fig, axes, "seconds per operation (median)", title, path)
