"""Fixtures the tests of more than one part use: `archive`, an archive holding a value of every
kind (arrays, tables of each library, JSON, Parquet, out-of-band buffers), for `Archive.info`'s
tests and the command line's. The helper modules that assert get pytest's assertion messages,
as the test modules do."""

from __future__ import annotations

from pathlib import Path

import pytest

from amber import Archive

pytest.register_assert_rewrite(
    "tests.support", "tests.golden.releases", "tests.bench.support", "tests.proto.oracle"
)


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import numpy as np
    import pandas as pd
    import polars as pl
    import pyarrow as pa

    path = tmp_path_factory.mktemp("cli") / "run.zip"
    with Archive(path, "w") as a:
        a["config"] = {"lr": 0.1, "layers": (64, 32)}
        a["weights"] = np.random.default_rng(0).random((100, 50))
        a.put("zeros", np.zeros(1_000_000), compression="zstd")
        a["frame"] = pd.DataFrame({"loss": [0.3, 0.2], "n": [1, 2]})
        a["series"] = pd.Series([1.5, 2.5], name="s")
        a["polars"] = pl.DataFrame({"a": [1, 2, 3]})
        a["pl_series"] = pl.Series("a", [1, 2])
        a["table"] = pa.table({"a": [1], "b": ["x"]})
        a["batch"] = pa.record_batch({"a": [1, 2]})
        a.put("summary", {"best": 0.2}, encoding="json")
        a.put("parquet", pd.DataFrame({"a": [1.0]}), encoding="parquet")
        a["big"] = {"x": np.arange(100_000)}  # an amber entry and an out-of-band buffer
    return path
