"""The archive part's workloads: the nested dict W2 and the mixed analysis result of the
DataZip study (one large DataFrame, two medium ones, a nested config dict, 200 labels and a
description), every value built from a seeded generator. As in that study, half of each frame's
columns are standard normal floats and half are integers in [0, 10,000): float64 noise does not
compress, small integers in int64 columns do.

A workload's value is a dict whose items are the archive's keys (as DataZip and amber store a
result: one entry per key); pickle and joblib write the dict whole.
"""

from __future__ import annotations

from typing import Any

from amber.bench.engine.contender import Workload
from amber.bench.parts.codec.workloads import w2_nested

MIXED_SEED = 4
MIXED_ROWS = {"full": 5_000_000, "quick": 500_000, "tiny": 5_000}
MEDIUM_ROWS = {"full": 50_000, "quick": 50_000, "tiny": 500}

# Options a workload gives the contenders: which key is the small one read alone, and which
# is the big frame.
KEY = "key"
FRAME = "frame"


def mixed(rows: int, medium: int) -> dict[str, Any]:
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(MIXED_SEED)

    def frame(n: int, cols: int) -> Any:
        half = cols // 2
        columns: dict[str, Any] = {f"float_{i}": rng.standard_normal(n) for i in range(half)}
        columns |= {f"int_{i}": rng.integers(0, 10_000, n) for i in range(half)}
        return pd.DataFrame(columns)

    return {
        "big": frame(rows, 20),
        "medium_a": frame(medium, 10),
        "medium_b": frame(medium, 10),
        "config": {
            "model": {"name": "gbm", "depth": 6, "learning_rate": 0.05, "seed": 7},
            "features": {
                "float": [f"float_{i}" for i in range(10)],
                "int": [f"int_{i}" for i in range(10)],
            },
            "split": {"train": 0.8, "test": 0.2, "stratify": None},
            "tags": ["nightly", "v2"],
        },
        "labels": [f"category-{i:03d}" for i in range(200)],
        "description": "Mixed analysis result: three frames, a config, labels and a description.",
    }


def w2_workload() -> Workload:
    return Workload(
        "W2",
        "the nested dict W2 (depth 10, branching 2), one key per top-level item",
        lambda: dict(w2_nested()),
        size=1,
        options={KEY: "child_0"},
    )


def mixed_workload(mode: str) -> Workload:
    rows, medium = MIXED_ROWS[mode], MEDIUM_ROWS[mode]
    label = f"{rows // 1000:,}k" if rows < 1_000_000 else f"{rows // 1_000_000}M"
    return Workload(
        f"mixed-{label}",
        f"a {rows:,} x 20 DataFrame (10 float, 10 int64 columns), two {medium:,} x 10 ones, "
        "a config dict, 200 labels and a description",
        lambda: mixed(rows, medium),
        size=rows,
        options={KEY: "config", FRAME: "big"},
    )
