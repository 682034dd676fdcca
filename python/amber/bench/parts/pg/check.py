"""The checks before timing: is what a driver read (or what it loaded, read back) the rows given?

Drivers hand back the same values in their own containers: tuples, asyncpg Records, Arrow tables,
dicts of columns or NumPy arrays; `bytea` as bytes or (psycopg2) a memoryview; timestamps with
their own tzinfo objects, or (NumPy) naive in UTC. The checks compare values column by column:
an int must be an int (not a float or a bool), a float the same float bit for bit, a text the
same str, a timestamp the same instant, bytea the same bytes.
"""

from __future__ import annotations

import itertools
import math
import struct
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any

_BYTES = (bytes, bytearray, memoryview)


def columns_of(result: Any) -> list[list[Any]]:
    """The columns of a result: a pyarrow Table, a pandas or polars DataFrame, a mapping of
    columns, or a sequence of rows."""
    if hasattr(result, "column_names") and hasattr(result, "num_columns"):  # pyarrow
        return [result.column(i).to_pylist() for i in range(result.num_columns)]
    if hasattr(result, "to_arrow") and hasattr(result, "columns"):  # polars
        return columns_of(result.to_arrow())
    if hasattr(result, "iloc") and hasattr(result, "columns"):  # pandas
        return [_as_list(result[c]) for c in result.columns]
    if isinstance(result, Mapping):
        return [_as_list(c) for c in result.values()]
    rows = list(result)
    if not rows:
        return []
    return [list(c) for c in zip(*rows, strict=True)]


def _as_list(column: Any) -> list[Any]:
    """A column as a list of Python values (NumPy and pandas through `tolist`)."""
    if hasattr(column, "to_pylist"):
        return list(column.to_pylist())
    if hasattr(column, "tolist"):
        return list(column.tolist())
    return list(column)


def same_value(want: Any, got: Any) -> bool:
    if isinstance(want, bool) or want is None:
        return got is want
    if isinstance(want, int):
        return type(got) is int and got == want
    if isinstance(want, float):
        return type(got) is float and struct.pack("<d", got) == struct.pack("<d", want)
    if isinstance(want, Decimal):
        return type(got) is Decimal and got == want and str(got) == str(want)
    if isinstance(want, str):
        return type(got) is str and got == want
    if isinstance(want, datetime):
        if not isinstance(got, datetime):
            return False
        if got.tzinfo is None:  # NumPy's datetime64 carries no zone: read it as UTC
            return got == want.astimezone(timezone.utc).replace(tzinfo=None)
        return got == want
    if isinstance(want, _BYTES):
        return isinstance(got, _BYTES) and bytes(got) == bytes(want)
    return type(got) is type(want) and bool(got == want)


def _fast_equal(want: list[Any], got: list[Any]) -> bool:
    """Equal by `==` and of the types `same_value` takes as exact without another look."""
    if got != want or not want:
        return False
    sample = want[0]
    types = set(map(type, got))
    if isinstance(sample, bool):
        return types == {bool}
    if isinstance(sample, int):
        return types == {int}
    if isinstance(sample, float):  # == between floats is exact but for -0.0 and NaN
        return types == {float} and not any(x == 0.0 or math.isnan(x) for x in got)
    if isinstance(sample, str):
        return types == {str}
    if isinstance(sample, datetime):
        return all(issubclass(t, datetime) for t in types) and all(
            x.tzinfo is not None for x in got
        )
    if isinstance(sample, _BYTES):
        return all(issubclass(t, _BYTES) for t in types)
    return False


def by_id(columns: list[list[Any]]) -> list[list[Any]]:
    """The columns with their rows in the order of the first column (the table's id): a plain
    `SELECT` promises no order, and a parallel scan returns the rows of its workers interleaved."""
    ids = columns[0] if columns else []
    try:
        if all(a < b for a, b in itertools.pairwise(ids)):
            return columns
        order = sorted(range(len(ids)), key=ids.__getitem__)
    except TypeError:  # ids that do not compare: left as they are, for the check to report
        return columns
    return [[col[i] for i in order] for col in columns]


def differs(
    want: Sequence[Sequence[Any]],
    result: Any,
    names: Sequence[str] = (),
    *,
    any_order: bool = False,
) -> str | None:
    """None when `result` holds the rows `want`, in order (or, with `any_order`, in any order
    once sorted by their first column, an id); else what differs first."""
    got = columns_of(result)
    width = len(want[0]) if want else 0
    if want and len(got) != width:
        return f"{len(got)} columns, expected {width}"
    if any_order:
        got = by_id(got)
    for j, column in enumerate(got):
        if len(column) != len(want):
            return f"{len(column)} rows, expected {len(want)}"
        expected = [row[j] for row in want]
        if _fast_equal(expected, column):
            continue
        name = names[j] if j < len(names) else f"column {j}"
        for i, (w, g) in enumerate(zip(expected, column, strict=True)):
            if not same_value(w, g):
                return f"{name} row {i}: {g!r} ({type(g).__name__}), expected {w!r}"
    return None
