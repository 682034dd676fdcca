"""PNG figures through matplotlib's Agg backend; every function is a no-op question away from
`available()`, since matplotlib is an optional dependency.

Every figure shows the median of each series with whiskers from its fastest to its slowest
sample, labels its log axes at each decade and, where they span little, at 2 and 5 in between,
and carries a footer naming the machine, Python and amber version it was measured with.
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from amber.bench.engine.tables import fmt_time

Bar = tuple[float, float, float]  # a ratio (median over the baseline's median), lowest, highest
Point = tuple[float, float, float, float]  # x, median, fastest sample, slowest sample

WHISKERS = "bars and points: median; whiskers: fastest to slowest sample"


def available() -> bool:
    return importlib.util.find_spec("matplotlib") is not None


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _panels(plt: Any, count: int, sharey: bool = True) -> tuple[Any, Any]:
    """A figure with one panel per operation, side by side."""
    width = min(16.0, max(6.5, 4.4 * count + 2.5))
    fig, axes = plt.subplots(1, count, figsize=(width, 5.2), sharey=sharey, squeeze=False)
    return fig, list(axes[0])


def plain(value: float) -> str:
    """A tick label for a ratio or a count: 0.2, 0.5, 1, 2, 10, 1,000, 1e-05."""
    if value >= 1000:
        return f"{value:,.0f}"
    if value >= 1e-3:
        return f"{value:g}"
    return f"{value:.0e}"


def seconds(value: float) -> str:
    """A tick label for seconds: 10 µs, 2 ms, 1 s."""
    return fmt_time(value * 1e9).replace(".00 ", " ").replace(".0 ", " ")


def log_ticks(axis: Any, low: float, high: float, fmt: Callable[[float], str]) -> None:
    """Labelled ticks at every decade of a log axis, at 2 and 5 in between when the data spans
    three decades or less (and 3 and 7 too within about one); unlabelled minor ticks elsewhere."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    span = math.log10(high / low) if low > 0 and high > 0 else math.inf
    subs = (1.0, 2.0, 3.0, 5.0, 7.0) if span <= 1.2 else (1.0, 2.0, 5.0) if span <= 3.0 else (1.0,)
    axis.set_major_locator(LogLocator(base=10, subs=subs))
    axis.set_major_formatter(FuncFormatter(lambda v, _pos: fmt(v)))
    axis.set_minor_locator(LogLocator(base=10, subs=tuple(range(2, 10)), numticks=100))
    axis.set_minor_formatter(NullFormatter())


def _limits(values: Sequence[float]) -> tuple[float, float]:
    found = [v for v in values if v > 0 and math.isfinite(v)]
    return (min(found), max(found)) if found else (1.0, 1.0)


def _save(fig: Any, axes: Any, ylabel: str, title: str, footer: str, path: Path) -> Path:
    """Label, add the legend beside the last panel, title, footer and write the figure as PNG."""
    plt = _pyplot()
    axes[0].set_ylabel(ylabel)
    axes[-1].legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.suptitle(title)
    text = "\n".join(t for t in (footer, WHISKERS) if t)
    fig.text(0.01, 0.01, text, fontsize=7, color="0.35", ha="left", va="bottom")
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def ratio_bars(
    path: Path,
    bars: Mapping[str, Mapping[str, Mapping[str, Bar]]],
    workloads: Sequence[str],
    contenders: Sequence[str],
    baseline: str,
    title: str,
    *,
    footer: str = "",
    labels: Mapping[str, str] | None = None,
) -> Path:
    """Grouped bars, one panel per op: `bars[op][contender][workload]` = (time / baseline time,
    fastest sample / baseline time, slowest sample / baseline time). `labels` gives a workload's
    tick label (its size, say) in place of its name."""
    plt = _pyplot()
    ops = list(bars)
    fig, axes = _panels(plt, len(ops))
    width = 0.8 / max(1, len(contenders))
    low, high = _limits(
        [v for op in ops for c in bars[op].values() for bar in c.values() for v in bar]
    )
    colors = (
        list(plt.get_cmap("tab20").colors)
        if len(contenders) > 10
        else plt.rcParams["axes.prop_cycle"].by_key()["color"]
    )
    for ax, op in zip(axes, ops, strict=True):
        for i, contender in enumerate(contenders):
            per_workload = bars[op].get(contender, {})
            xs = [w + (i - (len(contenders) - 1) / 2) * width for w in range(len(workloads))]
            found = [per_workload.get(name) for name in workloads]
            ys = [math.nan if b is None else b[0] for b in found]
            err = [
                [0.0 if b is None else max(0.0, b[0] - b[1]) for b in found],
                [0.0 if b is None else max(0.0, b[2] - b[0]) for b in found],
            ]
            color = colors[i % len(colors)]
            ax.bar(xs, ys, width, label=contender, color=color)
            ax.errorbar(xs, ys, yerr=err, fmt="none", ecolor="0.2", elinewidth=0.8, capsize=1.5)
            for x, y, up in zip(xs, ys, err[1], strict=True):
                if math.isfinite(y):
                    ax.annotate(
                        plain(float(f"{y:.2g}")),
                        (x, y + up),
                        xytext=(0, 2),
                        textcoords="offset points",
                        ha="center",
                        va="bottom",
                        fontsize=6,
                        rotation=90,
                    )
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_yscale("log")
        ax.set_ylim(min(low, 1.0) / 1.6, max(high, 1.0) * 3.0)
        log_ticks(ax.yaxis, min(low, 1.0), max(high, 1.0), plain)
        names = [(labels or {}).get(w, w) for w in workloads]
        ax.set_xticks(range(len(workloads)), names, fontsize="small")
        ax.set_title(f"{op}: time / {baseline} time\n(lower is faster)", fontsize="medium")
        ax.grid(axis="y", which="major", alpha=0.4)
        ax.grid(axis="y", which="minor", alpha=0.15)
    return _save(fig, axes, f"ratio vs {baseline} (log)", title, footer, path)


def loglog(
    path: Path,
    series: Mapping[str, Mapping[str, Sequence[Point]]],
    title: str,
    xlabel: str,
    highlight: str = "amber",
    *,
    footer: str = "",
) -> Path:
    """One log-log panel per op: `series[op][contender]` = [(size, median seconds, fastest,
    slowest), ...]; contenders whose name starts with `highlight` get a thicker line, drawn on
    top."""
    plt = _pyplot()
    ops = list(series)
    fig, axes = _panels(plt, len(ops))
    xs_all = [p[0] for op in ops for pts in series[op].values() for p in pts]
    ys_all = [v for op in ops for pts in series[op].values() for p in pts for v in p[1:]]
    markers = "osD^vP*X<>"
    for ax, op in zip(axes, ops, strict=True):
        for i, (contender, points) in enumerate(series[op].items()):
            if not points:
                continue
            xs, ys, lows, highs = zip(*points, strict=True)
            err = [
                [max(0.0, y - lo) for y, lo in zip(ys, lows, strict=True)],
                [max(0.0, hi - y) for y, hi in zip(ys, highs, strict=True)],
            ]
            mine = contender.startswith(highlight)
            ax.errorbar(
                xs,
                ys,
                yerr=err,
                marker=markers[i % len(markers)],
                markersize=4,
                linewidth=2.6 if mine else 1.2,
                linestyle="-" if contender == highlight or not mine else "--",
                capsize=2,
                label=contender,
                zorder=3 if mine else 2,
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        log_ticks(ax.xaxis, *_limits(xs_all), plain)
        log_ticks(ax.yaxis, *_limits(ys_all), seconds)
        ax.set_xlabel(xlabel)
        ax.set_title(op)
        ax.grid(which="major", alpha=0.4)
        ax.grid(which="minor", alpha=0.15)
    return _save(fig, axes, "time per operation (log)", title, footer, path)
