"""Helpers the benchmark's tests share: values equal under `==` but not the same, and the plots
a report must have drawn."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any


def ints_to_floats(obj: Any) -> Any:
    """Equal under `==` (1 == 1.0) but not the same values: what the exact check must catch."""
    if isinstance(obj, dict):
        return {k: ints_to_floats(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [ints_to_floats(v) for v in obj]
    if type(obj) is int:
        return float(obj)
    return obj


PLOTTING = importlib.util.find_spec("matplotlib") is not None


def assert_plots(report: Path, *stems: str) -> None:
    """Each named PNG was written beside the report and is shown in it (when matplotlib is
    installed; without it the report says plots were skipped)."""
    text = report.read_text()
    if not PLOTTING:
        assert "matplotlib is not installed" in text
        return
    for stem in stems:
        png = report.parent / f"{stem}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", png
        assert f"({stem}.png)" in text
