"""Columnar data for `amber.pg`: DataFrames, Arrow tables and dicts of columns described to the
Rust encoder by their Arrow buffers, and decoded column buffers made into NumPy arrays, Arrow
tables, pandas or polars DataFrames. pyarrow, NumPy, pandas and polars are imported only when
such data is met or asked for."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from amber import _native

_UNITS = {"s": 0, "ms": 1, "us": 2, "ns": 3}
_INT_KINDS = {
    "int8": "i8",
    "int16": "i16",
    "int32": "i32",
    "int64": "i64",
    "uint8": "u8",
    "uint16": "u16",
    "uint32": "u32",
    "uint64": "u64",
}


def _module_of(obj: Any) -> str:
    return type(obj).__module__.split(".", 1)[0]


class Objects:
    """A column of Python values: a list, or a one-dimensional NumPy object array (a pandas object
    column's own, read in place). In a pandas object column, missing values (None, NaN, NaT,
    pd.NA) are NULL."""

    __slots__ = ("pandas", "values")

    def __init__(self, values: Any, pandas: bool = False) -> None:
        self.values = values
        self.pandas = pandas

    def __len__(self) -> int:
        return len(self.values)

    def source(self, start: int = 0, stop: int | None = None) -> tuple[Any, ...]:
        """The encoder's description of rows start..stop (the values themselves, not a copy)."""
        stop = len(self.values) if stop is None else stop
        return ("objects", stop - start, start, None, self.values, None, 1 if self.pandas else 0)


def _object_values(values: Any) -> Any:
    """A pandas object Series or NumPy object array as the encoder reads it: its one-dimensional
    array as it is, else (more dimensions) a list of its items."""
    arr = values.to_numpy() if hasattr(values, "to_numpy") else values
    return arr if getattr(arr, "ndim", 0) == 1 else list(values)


def _objects(values: Sequence[Any]) -> tuple[Any, ...]:
    return Objects(values if isinstance(values, list) else list(values)).source()


def _source(arr: Any, writes_native: bool) -> tuple[Any, ...]:
    """The encoder's description of one pyarrow Array (see the Rust `columns.rs`)."""
    import pyarrow as pa

    t = arr.type
    if not writes_native:
        return _objects(arr.to_pylist())
    if pa.types.is_dictionary(t):
        arr = arr.dictionary_decode()
        t = arr.type
    if pa.types.is_string_view(t):
        arr, t = arr.cast(pa.large_string()), pa.large_string()
    if pa.types.is_binary_view(t):
        arr, t = arr.cast(pa.large_binary()), pa.large_binary()
    if pa.types.is_float16(t):
        arr, t = arr.cast(pa.float32()), pa.float32()
    unit = 0
    var = False
    if pa.types.is_boolean(t):
        kind = "bool"
    elif str(t) in _INT_KINDS:
        kind = _INT_KINDS[str(t)]
    elif pa.types.is_float32(t):
        kind = "f32"
    elif pa.types.is_float64(t):
        kind = "f64"
    elif pa.types.is_string(t):
        kind, var = "str32", True
    elif pa.types.is_large_string(t):
        kind, var = "str64", True
    elif pa.types.is_binary(t):
        kind, var = "bin32", True
    elif pa.types.is_large_binary(t):
        kind, var = "bin64", True
    elif pa.types.is_timestamp(t):
        kind, unit = ("timestamptz" if t.tz else "timestamp"), _UNITS[t.unit]
    elif pa.types.is_date32(t):
        kind = "date32"
    elif pa.types.is_date64(t):
        kind = "date64"
    elif pa.types.is_time32(t):
        kind, unit = "time32", _UNITS[t.unit]
    elif pa.types.is_time64(t):
        kind, unit = "time64", _UNITS[t.unit]
    elif pa.types.is_duration(t):
        kind, unit = "duration", _UNITS[t.unit]
    elif pa.types.is_decimal128(t):
        kind, unit = "decimal128", t.scale
        if unit < 0:
            return _objects(arr.to_pylist())
    elif pa.types.is_fixed_size_binary(t) and t.byte_width == 16:
        kind = "fsb16"
    else:
        return _objects(arr.to_pylist())
    bufs = arr.buffers()
    validity = bufs[0] if arr.null_count else None
    if var:
        offsets, data = bufs[1], bufs[2]
        if data is None:
            data = b""
    else:
        offsets, data = None, bufs[1]
    if data is None or (var and offsets is None):
        return _objects(arr.to_pylist())
    return (kind, len(arr), arr.offset, validity, data, offsets, unit)


@dataclass
class Batch:
    length: int
    sources: list[tuple[Any, ...]]


class Columns:
    """Named columns of equal length, each a pyarrow ChunkedArray or `Objects`."""

    def __init__(self, names: list[str], cols: list[Any], length: int) -> None:
        self.names = names
        self.cols = cols
        self.length = length

    def select(self, names: Sequence[str]) -> Columns:
        index = {n: i for i, n in enumerate(self.names)}
        missing = [n for n in names if n not in index]
        if missing:
            raise ValueError(f"the data has no column {missing[0]!r}")
        return Columns(list(names), [self.cols[index[n]] for n in names], self.length)

    def batches(self, oids: Sequence[int], max_rows: int) -> Iterator[Batch]:
        """Row ranges that lie within one chunk of every Arrow column, at most `max_rows` long,
        with each column described for the encoder (Arrow slices are views, not copies)."""
        cuts = {0, self.length}
        for col in self.cols:
            if not isinstance(col, Objects):
                at = 0
                for chunk in col.chunks:
                    at += len(chunk)
                    cuts.add(at)
        edges = sorted(c for c in cuts if c <= self.length)
        native = [_writes_native(oid) for oid in oids]
        for lo, hi in itertools.pairwise(edges):
            for start in range(lo, hi, max_rows):
                stop = min(hi, start + max_rows)
                sources = [
                    col.source(start, stop)
                    if isinstance(col, Objects)
                    else _source(_slice(col, start, stop), nat)
                    for col, nat in zip(self.cols, native, strict=True)
                ]
                yield Batch(stop - start, sources)


def _writes_native(oid: int) -> bool:
    t = _native.pg_type(oid)
    return t is not None and not t[1]


def _slice(col: Any, start: int, stop: int) -> Any:
    """The single-chunk Array for rows start..stop of a ChunkedArray (within one chunk)."""
    sliced = col.slice(start, stop - start)
    chunks = [c for c in sliced.chunks if len(c)]
    if len(chunks) == 1:
        return chunks[0]
    import pyarrow as pa

    return pa.concat_arrays(chunks) if chunks else pa.array([], type=col.type)


def columnar(data: Any) -> Columns | None:
    """`data` as named columns, or None when it is an iterable of rows."""
    module = _module_of(data)
    if module == "pyarrow":
        import pyarrow as pa

        if isinstance(data, pa.RecordBatch):
            data = pa.Table.from_batches([data])
        if isinstance(data, pa.Table):
            return Columns(list(data.column_names), list(data.columns), data.num_rows)
    if module == "polars":
        import polars as pl

        if isinstance(data, pl.DataFrame):
            table = data.to_arrow()
            return Columns(list(table.column_names), list(table.columns), table.num_rows)
    if module == "pandas":
        import pandas as pd

        if isinstance(data, pd.DataFrame):
            import pyarrow as pa

            cols: list[Any] = []
            for _, series in data.items():
                if series.dtype == object:
                    cols.append(Objects(_object_values(series), pandas=True))
                else:
                    cols.append(pa.chunked_array([pa.Array.from_pandas(series)]))
            return Columns([str(c) for c in data.columns], cols, len(data))
    if isinstance(data, dict):
        return _from_dict(data)
    return None


def _from_dict(data: dict[str, Any]) -> Columns:
    names: list[str] = []
    cols: list[Any] = []
    lengths = set()
    for name, values in data.items():
        names.append(str(name))
        module = _module_of(values)
        if module == "pyarrow":
            import pyarrow as pa

            col = values if isinstance(values, pa.ChunkedArray) else pa.chunked_array([values])
            lengths.add(len(col))
            cols.append(col)
        elif (
            module == "numpy"
            and getattr(values, "dtype", None) is not None
            and values.dtype != object
        ):
            import pyarrow as pa

            col = pa.chunked_array([pa.array(values)])
            lengths.add(len(col))
            cols.append(col)
        elif module == "pandas":
            import pyarrow as pa

            if values.dtype == object:
                cols.append(Objects(_object_values(values), pandas=True))
            else:
                cols.append(pa.chunked_array([pa.Array.from_pandas(values)]))
            lengths.add(len(values))
        elif module == "numpy" and getattr(values, "ndim", 0) == 1:
            # An object array, read in place: each read sees the array as it is then.
            lengths.add(len(values))
            cols.append(Objects(values))
        else:
            # A copy: the caller's list could change while the COPY runs (a dumper or a
            # __float__ may run Python code), this one cannot.
            vals = list(values)
            lengths.add(len(vals))
            cols.append(Objects(vals))
    if len(lengths) > 1:
        raise ValueError(f"columns of different lengths: {sorted(lengths)}")
    return Columns(names, cols, lengths.pop() if lengths else 0)


# --- results ---------------------------------------------------------------------------------

_NUMPY_DTYPES = {
    "int16": "<i2",
    "int32": "<i4",
    "int64": "<i8",
    "uint32": "<u4",
    "float32": "<f4",
    "float64": "<f8",
    "date32": "<i4",
    "timestamp_us": "<i8",
    "timestamp_us_utc": "<i8",
    "duration_us": "<i8",
}
_NUMPY_VIEWS = {
    "date32": "datetime64[D]",
    "timestamp_us": "datetime64[us]",
    "timestamp_us_utc": "datetime64[us]",
    "duration_us": "timedelta64[us]",
}


def _arrow_type(tag: str) -> Any:
    import pyarrow as pa

    return {
        "bool": pa.bool_(),
        "int16": pa.int16(),
        "int32": pa.int32(),
        "int64": pa.int64(),
        "uint32": pa.uint32(),
        "float32": pa.float32(),
        "float64": pa.float64(),
        "date32": pa.date32(),
        "time64_us": pa.time64("us"),
        "timestamp_us": pa.timestamp("us"),
        "timestamp_us_utc": pa.timestamp("us", tz="UTC"),
        "duration_us": pa.duration("us"),
        "uuid": pa.binary(16),
        "large_string": pa.large_string(),
        "large_binary": pa.large_binary(),
    }[tag]


def _plain(v: Any) -> Any:
    """A value pyarrow can infer a type for: UUIDs, addresses and zones as text."""
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if v is None or isinstance(v, (bool, int, float, str, bytes)):
        return v
    import datetime
    import decimal

    if isinstance(v, (decimal.Decimal, datetime.date, datetime.timedelta)):
        return v
    if isinstance(v, datetime.time) and v.tzinfo is None:
        return v
    return str(v)


def _arrow_column(col: tuple[Any, ...], name: str) -> Any:
    import pyarrow as pa

    tag, length, nulls, validity, data, offsets = col
    if tag == "objects":
        try:
            return pa.array(data)
        except (pa.ArrowException, TypeError, ValueError):
            try:
                return pa.array([_plain(v) for v in data])
            except (pa.ArrowException, TypeError, ValueError) as e:
                raise _native.DecodeError(
                    f"column {name!r} cannot become an Arrow array: {e}"
                ) from e
    t = _arrow_type(tag)
    vbuf = pa.py_buffer(validity) if validity is not None else None
    bufs = (
        [vbuf, pa.py_buffer(offsets), pa.py_buffer(data)]
        if offsets is not None
        else [vbuf, pa.py_buffer(data)]
    )
    return pa.Array.from_buffers(t, length, bufs, null_count=nulls)


def _numpy_column(col: tuple[Any, ...]) -> Any:
    import numpy as np

    tag, length, nulls, validity, data, _ = col
    if tag == "objects":
        return data  # an object array, made by the reader
    if tag == "bool":
        values = np.unpackbits(np.frombuffer(data, dtype=np.uint8), bitorder="little")[
            :length
        ].astype(bool)
    else:
        values = np.frombuffer(data, dtype=_NUMPY_DTYPES[tag])
        if tag in _NUMPY_VIEWS:
            values = (
                values.astype(_NUMPY_VIEWS[tag])
                if tag == "date32"
                else values.view(_NUMPY_VIEWS[tag])
            )
    if nulls:
        valid = np.unpackbits(np.frombuffer(validity, dtype=np.uint8), bitorder="little")[
            :length
        ].astype(bool)
        return np.ma.masked_array(values, mask=~valid)
    return values


def shape(result: Any, names: list[str], oids: list[int], into: str) -> Any:
    """The reader's result as `into` asks."""
    if into == "rows":
        return result
    if into == "columns":
        return {name: _numpy_column(col) for name, col in zip(names, result, strict=True)}
    import pyarrow as pa

    table = pa.Table.from_arrays(
        [_arrow_column(c, n) for c, n in zip(result, names, strict=True)], names=names
    )
    if into == "arrow":
        return table
    if into == "pandas":
        return table.to_pandas()
    import polars as pl

    return pl.from_arrow(table)
