"""Leak check: a million round trips leave RSS flat."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest

import amber

psutil = pytest.importorskip("psutil")

OBJ = {
    "s": "héllo",
    "i": [1, 2**70, -5],
    "f": 1.5,
    "t": (None, True),
    "set": {1},
    "b": b"x",
    "d": dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc),
    "dec": decimal.Decimal("1.5"),
}


def test_no_rss_growth_over_a_million_round_trips() -> None:
    proc = psutil.Process()
    data = amber.dumps(OBJ)
    for _ in range(20_000):  # warm up caches and allocator pools
        amber.loads(amber.dumps(OBJ))
    before = proc.memory_info().rss
    for _ in range(1_000_000):
        amber.loads(data)
        amber.dumps(OBJ)
    grown = proc.memory_info().rss - before
    assert grown < 4 << 20, f"RSS grew by {grown / 1e6:.1f} MB"


def test_no_growth_on_errors() -> None:
    proc = psutil.Process()
    bad = amber.dumps(list(range(50)))[:-3]
    cyc: list[object] = []
    cyc.append(cyc)
    for _ in range(2000):
        with pytest.raises(amber.DecodeError):
            amber.loads(bad)
    before = proc.memory_info().rss
    for _ in range(50_000):
        with pytest.raises(amber.DecodeError):
            amber.loads(bad)
        with pytest.raises(amber.EncodeError):
            amber.dumps([object()])
    for _ in range(200):
        with pytest.raises(amber.EncodeError):
            amber.dumps(cyc)
    grown = proc.memory_info().rss - before
    assert grown < 4 << 20, f"RSS grew by {grown / 1e6:.1f} MB"
