"""The releases whose files tests/golden holds, and the exact comparison the compatibility tests
(tests/codec, tests/archive and tests/pg, `test_compat.py`) check their values with."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import amber
from tests.support.exact import assert_exact

GOLDEN = Path(__file__).parent


def _release_key(folder: Path) -> tuple[int, ...]:
    return tuple(int(part) for part in folder.name[1:].split("."))


RELEASES = sorted(
    (p for p in GOLDEN.iterdir() if p.is_dir() and re.fullmatch(r"v\d+\.\d+", p.name)),
    key=_release_key,
)
NEWEST = RELEASES[-1]


def release_id(release: Path, name: str) -> str:
    return f"{release.name}/{name}"


def _is_table(value: Any) -> bool:
    module = type(value).__module__.split(".")[0]
    return module in ("pandas", "polars", "pyarrow")


def assert_table(got: Any, want: Any, path: str) -> None:
    """Same table type, values, dtypes, labels, order and metadata."""
    assert type(got) is type(want), f"{path}: {type(got).__name__} != {type(want).__name__}"
    module = type(want).__module__.split(".")[0]
    if module == "pandas":
        import pandas as pd

        # A RangeIndex (of rows or columns) comes back today as an int64 Index of the same
        # labels; every other index keeps its exact type.
        def index_type(index: Any) -> Any:
            return "equiv" if isinstance(index, pd.RangeIndex) else True

        if isinstance(want, pd.DataFrame):
            pd.testing.assert_frame_equal(
                got,
                want,
                check_exact=True,
                check_index_type=index_type(want.index),
                check_column_type=index_type(want.columns),
                check_freq=True,
                check_flags=True,
                obj=path,
            )
            assert [type(c) for c in got.columns] == [type(c) for c in want.columns], path
        else:
            pd.testing.assert_series_equal(
                got,
                want,
                check_exact=True,
                check_index_type=index_type(want.index),
                check_freq=True,
                check_flags=True,
                obj=path,
            )
            assert type(got.name) is type(want.name), f"{path}: name type"
        assert_exact(got.attrs, want.attrs, path + ".attrs")
    elif module == "polars":
        import polars.testing

        if isinstance(want, polars.Series):
            assert (got.name, got.dtype) == (want.name, want.dtype), f"{path}: name or dtype"
            polars.testing.assert_series_equal(got, want, check_exact=True)
        else:
            assert got.schema == want.schema, f"{path}: schema"
            polars.testing.assert_frame_equal(got, want, check_exact=True)
    else:
        assert got.schema.equals(want.schema, check_metadata=True), f"{path}: schema"
        assert got.equals(want, check_metadata=True), f"{path}: values"


def assert_value(got: Any, want: Any, path: str) -> None:
    """Exactly the value: type and value at every depth (assert_exact), and the same
    deterministic encoding, which also pins what == cannot see (the types of set items, NaN
    payloads)."""
    if _is_table(want):
        assert_table(got, want, path)
        return
    assert_exact(got, want, path)
    assert amber.dumps(got, deterministic=True) == amber.dumps(want, deterministic=True), path
