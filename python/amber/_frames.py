"""Tables in the amber format: pandas, polars and pyarrow values as Arrow IPC streams.

The encoder calls `to_arrow` for a DataFrame, Series, Table or RecordBatch and writes the
stream it returns in an ARROW item (spec §6.14), beside an extras item holding what Arrow does
not keep; the decoder calls `from_arrow` with both. pyarrow is imported here, when the first
such value is met, never by `import amber`.

What Arrow does not carry is kept in the extras dict: a pandas object's `attrs`, its
`flags.allows_duplicate_labels`, the frequency of a DatetimeIndex or TimedeltaIndex, column
labels of mixed types (Arrow's are str; pandas metadata restores only all-int labels), which
columns and index levels of str values had dtype object (pandas 3 reads them back as `str`),
and a Series' name (any value the codec encodes; Arrow column names are str).
"""

from __future__ import annotations

from typing import Any

# Kinds of ARROW items (spec §6.14); the codec's format.rs has the same numbers.
PA_TABLE, PA_BATCH, PD_FRAME, PD_SERIES, PL_FRAME, PL_SERIES = range(6)

_SERIES_COLUMN = "series"


def kind_of(tp: type) -> int | None:
    """The ARROW kind for values of exactly this type, or None. Subclasses are not tables:
    they may hold more than Arrow keeps."""
    name = f"{tp.__module__}.{tp.__qualname__}"
    return _KINDS.get(name)


_KINDS = {
    "pyarrow.lib.Table": PA_TABLE,
    "pyarrow.lib.RecordBatch": PA_BATCH,
    "pandas.DataFrame": PD_FRAME,
    "pandas.core.frame.DataFrame": PD_FRAME,
    "pandas.Series": PD_SERIES,
    "pandas.core.series.Series": PD_SERIES,
    "polars.DataFrame": PL_FRAME,
    "polars.dataframe.frame.DataFrame": PL_FRAME,
    "polars.Series": PL_SERIES,
    "polars.series.series.Series": PL_SERIES,
}


def _pyarrow() -> Any:
    try:
        import pyarrow
    except ImportError as e:  # pragma: no cover - pyarrow is a dev dependency
        raise ImportError(
            "amber writes and reads DataFrames, Series and Arrow tables as Arrow IPC streams, "
            "which needs pyarrow: pip install pyarrow"
        ) from e
    return pyarrow


def to_arrow(obj: Any, kind: int) -> tuple[dict[str, Any] | None, Any]:
    """(extras, stream): what Arrow does not keep, and the Arrow IPC stream as a buffer."""
    pa = _pyarrow()
    extras, table = to_table(obj, kind)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        if kind == PA_BATCH:
            writer.write_batch(table)
        else:
            writer.write_table(table)
    return extras, sink.getvalue()


def to_table(obj: Any, kind: int) -> tuple[dict[str, Any] | None, Any]:
    """(extras, table): what Arrow does not keep, and the value as a pyarrow Table (a
    RecordBatch for kind PA_BATCH)."""
    pa = _pyarrow()
    extras: dict[str, Any] = {}
    if kind in (PA_TABLE, PA_BATCH):
        table = obj
    elif kind == PD_FRAME:
        table = _from_pandas_frame(pa, obj, extras)
    elif kind == PD_SERIES:
        extras["name"] = obj.name
        table = _from_pandas_frame(pa, obj.to_frame(_SERIES_COLUMN), extras)
    elif kind == PL_FRAME:
        table = obj.to_arrow()
    elif kind == PL_SERIES:
        extras["name"] = obj.name
        table = pa.table({_SERIES_COLUMN: obj.to_arrow()})
    else:
        raise ValueError(f"unknown table kind {kind}")
    return extras or None, table


def _from_pandas_frame(pa: Any, df: Any, extras: dict[str, Any]) -> Any:
    import pandas as pd

    if df.attrs:
        # Kept as amber values here, not as pyarrow's JSON copy in the schema (which drops
        # what JSON cannot hold): a shallow copy without them goes to Arrow.
        extras["attrs"] = dict(df.attrs)
        df = df.copy(deep=False)
        df.attrs = {}
    if not df.flags.allows_duplicate_labels:
        extras["allows_duplicate_labels"] = False
    freq = getattr(df.index, "freq", None)
    if freq is not None:
        extras["index_freq"] = freq.freqstr
    if not isinstance(df.columns, pd.MultiIndex) and df.columns.inferred_type.startswith("mixed"):
        # Arrow names columns with str; pandas metadata restores all-str or all-int labels,
        # not a mix (pyarrow warns and makes them str): the labels themselves are kept.
        extras["column_labels"] = list(df.columns)
        names = [str(c) for c in df.columns]
        if len(set(names)) != len(names):
            names = [str(i) for i in range(len(names))]
        df = df.set_axis(names, axis=1)
    objects = [i for i, dtype in enumerate(df.dtypes) if _is_object(dtype)]
    if objects:
        extras["object_columns"] = objects
    levels = df.index.levels if isinstance(df.index, pd.MultiIndex) else [df.index]
    object_levels = [i for i, level in enumerate(levels) if _is_object(level.dtype)]
    if object_levels:
        extras["object_index_levels"] = object_levels
    if not df.columns.is_unique:
        raise ValueError(
            f"DataFrame columns must be unique to travel as Arrow: {list(df.columns)!r}"
        )
    plain = _plain_numbers_table(pa, df)
    return plain if plain is not None else pa.Table.from_pandas(df, preserve_index=True)


def _plain_numbers_table(pa: Any, df: Any) -> Any:
    """`pa.Table.from_pandas(df, preserve_index=True)` for a frame of NumPy numbers and bools
    with a flat numeric index, or None for any other frame. Built column by column, so that a
    float column without NaN skips pyarrow's scan for NaN (which it turns into nulls): the same
    table, schema and pandas metadata included, at a fraction of the cost (the scan is most of
    it: about 14 ms per 40 MB of floats)."""
    import numpy as np
    import pandas as pd

    index = df.index
    if isinstance(index, pd.MultiIndex) or not _plain_number_dtype(index.dtype):
        return None
    if not all(_plain_number_dtype(dtype) for dtype in df.dtypes):
        return None
    schema = pa.Schema.from_pandas(df, preserve_index=True)
    values = [df.iloc[:, i].to_numpy() for i in range(df.shape[1])]
    values.append(np.asarray(index))
    if len(values) != len(schema):
        return None
    arrays = []
    for v, field in zip(values, schema, strict=True):
        # min() is NaN when any value is: one pass, no temporary array.
        nan = v.dtype.kind == "f" and v.size > 0 and bool(np.isnan(v.min()))
        arrays.append(pa.array(v, type=field.type, from_pandas=nan))
    return pa.Table.from_arrays(arrays, schema=schema)


def _plain_number_dtype(dtype: Any) -> bool:
    import numpy as np

    return isinstance(dtype, np.dtype) and dtype.kind in "biuf"


def _is_object(dtype: Any) -> bool:
    return getattr(dtype, "kind", None) == "O" and getattr(dtype, "name", None) == "object"


def from_arrow(kind: int, extras: Any, stream: Any) -> Any:
    """The value an ARROW item describes, from its extras and its Arrow IPC stream (any
    buffer: the decoded value shares its memory)."""
    pa = _pyarrow()
    reader = pa.ipc.open_stream(pa.py_buffer(stream))
    # Arrow checks the messages' structure as it reads them; a full validation also checks
    # every offset and UTF-8 string against the buffers, so bytes from anywhere never make a
    # column that reads outside its memory.
    if kind == PA_BATCH:
        batches = list(reader)
        if len(batches) != 1:
            raise ValueError(f"a RecordBatch stream holds {len(batches)} batches, not 1")
        batches[0].validate(full=True)
        return from_table(kind, extras, batches[0])
    table = reader.read_all()
    table.validate(full=True)
    return from_table(kind, extras, table)


def from_table(kind: int, extras: Any, table: Any) -> Any:
    """The value of `kind` from a validated pyarrow Table (RecordBatch for PA_BATCH) and its
    extras."""
    extras = extras or {}
    if not isinstance(extras, dict):
        raise ValueError("table extras must be a dict or None")
    if kind in (PA_TABLE, PA_BATCH):
        return table
    if kind == PD_FRAME:
        return _to_pandas_frame(table, extras)
    if kind == PD_SERIES:
        series = _to_pandas_frame(table, extras)[_SERIES_COLUMN]
        series.name = extras.get("name")
        series.attrs = extras.get("attrs", {})
        return series
    import polars as pl

    frame: Any = pl.from_arrow(table, rechunk=False)
    if kind == PL_FRAME:
        return frame
    if kind == PL_SERIES:
        if frame.width != 1:
            raise ValueError(f"a polars Series stream holds {frame.width} columns, not 1")
        return frame.to_series().alias(extras.get("name", _SERIES_COLUMN))
    raise ValueError(f"unknown table kind {kind}")


def _to_pandas_frame(table: Any, extras: dict[str, Any]) -> Any:
    import pandas as pd

    df = table.to_pandas(split_blocks=True)
    fields = [c["field_name"] for c in (table.schema.pandas_metadata or {}).get("columns", ())]
    for i in extras.get("object_columns", ()):
        if not _is_object(df.dtypes.iloc[i]):
            # pandas 3 reads Arrow strings as dtype str; the column was object, with None
            # where Arrow has nulls.
            values = table.column(fields[i]).to_pylist()
            df.isetitem(i, pd.Series(values, index=df.index, dtype=object))
    levels = extras.get("object_index_levels", ())
    if levels:
        if isinstance(df.index, pd.MultiIndex):
            df.index = df.index.set_levels(
                [df.index.levels[i].astype(object) for i in levels], level=list(levels)
            )
        else:
            df.index = df.index.astype(object)
    freq = extras.get("index_freq")
    if freq is not None:
        df.index.freq = freq
    labels = extras.get("column_labels")
    if labels is not None:
        if not isinstance(labels, list) or len(labels) != df.shape[1]:
            raise ValueError("column_labels must be a list with one label per column")
        df.columns = pd.Index(labels, dtype=object)
    if "attrs" in extras:
        df.attrs = extras["attrs"]
    if extras.get("allows_duplicate_labels") is False:
        df = df.set_flags(allows_duplicate_labels=False)
    return df
