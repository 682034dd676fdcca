"""Tables in the amber format: pandas, polars and pyarrow values as Arrow IPC streams.

The encoder calls `to_arrow` for a DataFrame, Series, Table or RecordBatch and writes the
stream it returns in an ARROW item (spec §6.14), beside an extras item holding what Arrow does
not keep; the decoder calls `from_arrow` with both. The archive's `arrow` and `parquet`
entries use `to_table` and `from_table`, the same conversion. pyarrow is imported here, when
the first such value is met, never by `import amber`.

A value comes back exactly or is refused at write (ValueError or TypeError naming the column,
which the codec and the archive turn into `EncodeError`). The rules, per pandas column (and
per index level, which travels as a column):

- NumPy bools, integers, datetimes and timedeltas travel as Arrow converts them; NumPy floats
  as Arrow floats without nulls, so NaN keeps its sign and payload;
- an `object` column whose cells are all exactly `str` and whose nulls are all None, or all
  NaN, is an Arrow string column, marked so that it comes back `object` with those nulls;
  any other `object`
  column holds its cells encoded by amber (`dumps(cell, deterministic=True)`) in a
  large_binary column, marked, decoded with `loads` (which runs no code);
- pandas extension dtypes: categoricals (of categories Arrow holds), tz-aware datetimes,
  periods, intervals, the nullable numbers and booleans, the four `StringDtype`s and
  `ArrowDtype` columns; anything else (complex numbers, sparse columns, ...) is refused.

What Arrow does not keep is in the extras dict (spec §6.14 lists its keys): the index (a
RangeIndex as its start, stop and step; other indexes as columns after the data columns),
index and column-label names of any type, column labels other than distinct str (as a
description of their Index), how marked columns are rebuilt, `attrs`,
`flags.allows_duplicate_labels`, the frequency of a DatetimeIndex or TimedeltaIndex, a
Series' name. Frames written before these rules (no `"index"` key in their extras) are read as
they always were.
"""

from __future__ import annotations

import importlib
import json
import sys
from typing import Any

# Kinds of ARROW items (spec §6.14); the codec's format.rs has the same numbers.
PA_TABLE, PA_BATCH, PD_FRAME, PD_SERIES, PL_FRAME, PL_SERIES = range(6)

_SERIES_COLUMN = "series"

# How a marked column is rebuilt (extras "rebuild": {position: how}).
_OBJECT = "object"  # Arrow strings, back as dtype object with None for nulls
_CELLS = "cells"  # amber-encoded cells in a large_binary column, back as dtype object
_ARROW = "arrow"  # an ArrowDtype column, back over the Arrow column itself
_STRING = "string"  # ["string", storage, na_is_nan]: a pandas StringDtype
_OBJECT_CATEGORIES = "object_categories"  # a categorical whose categories are object str
# ["tz", tzinfo]: tz-aware datetimes whose zone is a `zoneinfo.ZoneInfo` or `datetime.timezone`,
# which some pandas and pyarrow versions rebuild from its name as another kind of object
_TZ = "tz"


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


def to_arrow(obj: Any, kind: int) -> tuple[dict[str, Any] | None, Any, bool]:
    """(extras, stream, described): what Arrow does not keep, the Arrow IPC stream as a buffer,
    and whether the extras describe the frame by §6.14's rules (the item's ARROW_DESCRIBED flag,
    which readers that do not know the rules refuse)."""
    pa = _pyarrow()
    extras, table = to_table(obj, kind)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        if kind == PA_BATCH:
            writer.write_batch(table)
        else:
            write_table(writer, table)
    return extras, sink.getvalue(), described(extras)


def described(extras: dict[str, Any] | None) -> bool:
    """Whether a table's extras describe a pandas frame by §6.14's rules (its index, labels and
    columns), which an amber that predates them would misread."""
    return extras is not None and "index" in extras


def write_table(writer: Any, table: Any) -> None:
    """`writer.write_table(table)`, except that a table of no rows is written as one batch of
    no rows (pyarrow writes none), which carries its dictionaries: a categorical's
    categories."""
    pa = _pyarrow()
    if table.num_rows == 0 and table.num_columns and all(c.num_chunks for c in table.columns):
        columns = [c.chunk(0) for c in table.columns]
        writer.write_batch(pa.RecordBatch.from_arrays(columns, schema=table.schema))
    else:
        writer.write_table(table)


def to_table(obj: Any, kind: int) -> tuple[dict[str, Any] | None, Any]:
    """(extras, table): what Arrow does not keep, and the value as a pyarrow Table (a
    RecordBatch for kind PA_BATCH). Raises ValueError or TypeError, naming the column, for
    a value that would not come back exactly."""
    pa = _pyarrow()
    extras: dict[str, Any] = {}
    if kind in (PA_TABLE, PA_BATCH):
        table = obj
    elif kind == PD_FRAME:
        table = _from_pandas_frame(pa, obj, extras)
    elif kind == PD_SERIES:
        extras["name"] = obj.name
        table = _from_pandas_frame(pa, obj.to_frame(_SERIES_COLUMN), extras, obj.attrs)
    elif kind == PL_FRAME:
        table = _from_polars_frame(pa, obj, extras)
    elif kind == PL_SERIES:
        extras["name"] = obj.name
        table = _from_polars_frame(pa, obj.to_frame(_SERIES_COLUMN), extras)
    else:
        raise ValueError(f"unknown table kind {kind}")
    return extras or None, table


# --- pandas, writing ---------------------------------------------------------------------------


def _from_pandas_frame(
    pa: Any, df: Any, extras: dict[str, Any], attrs: dict[Any, Any] | None = None
) -> Any:
    import pandas as pd

    attrs = df.attrs if attrs is None else attrs
    if attrs:
        extras["attrs"] = dict(attrs)
    if not df.flags.allows_duplicate_labels:
        extras["allows_duplicate_labels"] = False
    index = df.index
    multi = isinstance(index, pd.MultiIndex)
    if type(index) is pd.RangeIndex:
        extras["index"] = ["range", index.start, index.stop, index.step]
        levels: list[Any] = []
    else:
        # By position: get_level_values(1) would find a level named True (True == 1).
        if multi:
            by_position = index.to_frame(index=False, allow_duplicates=True)
            levels = [by_position.iloc[:, i] for i in range(index.nlevels)]
            # The levels themselves (their order, unused values), which the values alone do
            # not give.
            extras["index_levels"] = [
                _describe_index(level, f"index level {i}") for i, level in enumerate(index.levels)
            ]
        else:
            levels = [index]
        extras["index"] = ["levels", len(levels)]
        if isinstance(index, (pd.DatetimeIndex, pd.TimedeltaIndex)) and index.freq is not None:
            extras["index_freq"] = index.freq.freqstr
    if any(name is not None for name in index.names):
        extras["index_names"] = list(index.names)

    labels = df.columns
    if _plain_labels(labels):
        names = list(labels)
    else:
        extras["columns"] = _describe_index(labels, "the column labels")
        names = [str(label) for label in labels]
    if any(name is not None for name in labels.names):
        extras["column_names"] = list(labels.names)
    level_names = [
        n if type(n) is str and not n.startswith("__index_level_") else f"__index_level_{i}__"
        for i, n in enumerate(index.names if levels else ())
    ]
    if len(set(names + level_names)) != len(names) + len(level_names) or not all(
        _utf8(n) for n in names + level_names
    ):
        names = [str(i) for i in range(df.shape[1])]
        level_names = [f"__index_level_{i}__" for i in range(len(levels))]

    columns = [column for _, column in df.items()]
    where = [f"column {label!r}" for label in labels]
    # With the dtype given: pandas 2 infers one from an object index (tz-aware times, say).
    columns += [pd.Series(level, dtype=level.dtype, copy=False) for level in levels]
    where += [f"index level {i}" for i in range(len(levels))]
    rebuild: dict[int, Any] = {}
    arrays = [
        _chunked(pa, _pandas_column(pa, s, w, i, rebuild))
        for i, (s, w) in enumerate(zip(columns, where, strict=True))
    ]
    if rebuild:
        extras["rebuild"] = rebuild
    all_names = names + level_names
    metadata = _pandas_metadata(pa, df, names, columns[df.shape[1] :], index, level_names)
    schema = pa.schema(
        [pa.field(n, a.type) for n, a in zip(all_names, arrays, strict=True)],
        metadata={b"pandas": json.dumps(metadata).encode()},
    )
    return pa.Table.from_arrays(arrays, schema=schema) if arrays else schema.empty_table()


def _chunked(pa: Any, array: Any) -> Any:
    return array if isinstance(array, pa.ChunkedArray) else pa.chunked_array([array])


def _plain_labels(labels: Any) -> bool:
    """Whether column labels travel as the Arrow field names alone: an Index as pandas makes
    it from a list of distinct str (each valid UTF-8, as Arrow names must be)."""
    import pandas as pd

    if type(labels) is not pd.Index or labels.dtype != _default_str_dtype():
        return False
    if not labels.is_unique:
        return False
    for label in labels:
        if type(label) is not str or label.startswith("__index_level_") or not _utf8(label):
            return False
    return True


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


_STR_DTYPE: list[Any] = []


def _default_str_dtype() -> Any:
    """The dtype pandas gives an Index of str: `str` in pandas 3, object before."""
    if not _STR_DTYPE:
        import pandas as pd

        _STR_DTYPE.append(pd.Index(["a"]).dtype)
    return _STR_DTYPE[0]


def _describe_index(index: Any, where: str) -> Any:
    """An Index as an amber value that `_index_from` rebuilds exactly: a RangeIndex by its
    start, stop and step; a NumPy-numbers Index as its array; an object Index as the list of
    its labels; a MultiIndex by its levels and codes; any other Index as a one-column
    DataFrame of its values (a table in the extras, under the same rules)."""
    import numpy as np
    import pandas as pd

    if type(index) is pd.RangeIndex:
        return ["range", index.start, index.stop, index.step]
    if isinstance(index, pd.MultiIndex):
        return [
            "multi",
            [_describe_index(level, where) for level in index.levels],
            [np.asarray(codes) for codes in index.codes],
        ]
    dtype = index.dtype
    if type(index) is pd.Index and isinstance(dtype, np.dtype):
        if dtype.kind in "biuf":
            return ["array", index.to_numpy()]
        if dtype.kind == "O":
            return ["list", list(index)]
    timed = isinstance(index, (pd.DatetimeIndex, pd.TimedeltaIndex))
    freq = index.freq if timed else None
    values = pd.Series(index.array, dtype=index.dtype, copy=False)
    return ["frame", pd.DataFrame({"labels": values}), freq.freqstr if freq is not None else None]


def _pandas_column(pa: Any, s: Any, where: str, position: int, rebuild: dict[int, Any]) -> Any:
    """The Arrow array of one pandas column or index level, by the rules of the module
    docstring; marks in `rebuild` how the decoder rebuilds it."""
    import numpy as np
    import pandas as pd

    dtype = s.dtype
    if isinstance(dtype, np.dtype):
        kind = dtype.kind
        if kind == "f":
            # Arrow floats without nulls: NaN stays a value, with its sign and payload.
            return pa.array(s.to_numpy(), from_pandas=False)
        if kind in "biumM":
            return pa.array(s.to_numpy(), from_pandas=True)
        if kind == "O":
            values = s.to_numpy()
            null = _str_column_null(values)
            if null is not False:
                mask = None if null is None else np.array([v is null for v in values], dtype=bool)
                try:
                    array = pa.array(values, type=pa.large_string(), mask=mask, from_pandas=False)
                except UnicodeEncodeError:  # a lone surrogate: not a str Arrow holds
                    pass
                else:
                    rebuild[position] = _OBJECT if null is None else [_OBJECT, "nan"]
                    return array
            rebuild[position] = _CELLS
            return pa.array(_cells(values, where), type=pa.large_binary(), from_pandas=False)
        raise TypeError(f"{where} has dtype {dtype}, which Arrow does not hold")
    if isinstance(dtype, pd.CategoricalDtype):
        categories = dtype.categories
        cdtype = categories.dtype
        if isinstance(cdtype, np.dtype) and cdtype.kind == "O":
            if not all(type(c) is str for c in categories):
                raise TypeError(
                    f"{where} is a categorical whose categories are not all str or of one "
                    "NumPy or pandas dtype; Arrow would change them"
                )
            rebuild[position] = _OBJECT_CATEGORIES
        elif not _categories_kept(categories):
            raise TypeError(
                f"{where} is a categorical with categories of dtype {cdtype}, which Arrow "
                "does not keep"
            )
        return pa.array(s, from_pandas=True)
    if isinstance(dtype, pd.StringDtype):
        rebuild[position] = [_STRING, dtype.storage, dtype.na_value is not pd.NA]
        return pa.array(s, type=pa.large_string(), from_pandas=True)
    if isinstance(dtype, pd.ArrowDtype):
        rebuild[position] = _ARROW
        return s.array.__arrow_array__()
    if isinstance(dtype, pd.IntervalDtype):
        sub = dtype.subtype
        if not (isinstance(sub, np.dtype) and sub.kind in "iufmM"):
            raise TypeError(f"{where} holds intervals of {sub}, which Arrow does not keep")
        return pa.array(s, from_pandas=True)
    if isinstance(dtype, pd.DatetimeTZDtype):
        import datetime as dt
        import zoneinfo

        if type(dtype.tz) in (zoneinfo.ZoneInfo, dt.timezone):
            rebuild[position] = [_TZ, dtype.tz]
        return pa.array(s, from_pandas=True)
    if isinstance(dtype, pd.PeriodDtype) or _is_masked(dtype):
        return pa.array(s, from_pandas=True)
    raise TypeError(f"{where} has dtype {dtype}, which amber does not keep through Arrow")


_NAN_BITS = b"\x00\x00\x00\x00\x00\x00\xf8\x7f"


def _str_column_null(values: Any) -> Any:
    """For an `object` column of str and one kind of null: None when the nulls are None (or
    there are none), the NaN object when they are all that float (NaN of the canonical bits),
    False for any other column."""
    import struct

    null: Any = None
    for v in values:
        if type(v) is str or (v is None and null is None):
            continue
        if type(v) is float and v != v and struct.pack("<d", v) == _NAN_BITS:
            if null is None:
                if any(w is None for w in values):
                    return False
                null = v
            elif v is not null:
                return False
            continue
        return False
    return null


def _categories_kept(categories: Any) -> bool:
    """Categories Arrow's dictionary keeps exactly: NumPy numbers, bools, datetimes and
    timedeltas, pandas' default str, tz-aware datetimes."""
    import numpy as np
    import pandas as pd

    dtype = categories.dtype
    if isinstance(dtype, np.dtype):
        return dtype.kind in "biufmM"
    return dtype == _default_str_dtype() or isinstance(dtype, pd.DatetimeTZDtype)


def _is_masked(dtype: Any) -> bool:
    from pandas.api.extensions import ExtensionDtype

    name = type(dtype).__name__
    return isinstance(dtype, ExtensionDtype) and name in _MASKED


_MASKED = {
    "Int8Dtype",
    "Int16Dtype",
    "Int32Dtype",
    "Int64Dtype",
    "UInt8Dtype",
    "UInt16Dtype",
    "UInt32Dtype",
    "UInt64Dtype",
    "Float32Dtype",
    "Float64Dtype",
    "BooleanDtype",
}


def _cells(values: Any, where: str) -> list[bytes | None]:
    """Each cell as `_cell` writes it; a pandas `NA` as None (an Arrow null)."""
    import pandas as pd

    out: list[bytes | None] = []
    for i, value in enumerate(values):
        try:
            out.append(None if value is pd.NA else _cell(value))
        except Exception as e:
            raise TypeError(f"{where}, row {i}: {e}") from e
    return out


# The first byte of a cell: what the amber frame after it holds.
_CELL_VALUE, _CELL_PANDAS = b"\x00", b"\x01"


def _cell(value: Any) -> bytes:
    """One cell of an `object` column: a byte saying what follows, then an amber frame: 0, the
    cell itself; 1, a pandas scalar (not an amber type) as a tuple of what rebuilds it:
    ("Timestamp", its NumPy datetime64 in its unit, UTC for an aware one, its tzinfo),
    ("Timedelta", its NumPy timedelta64), ("NaT",), ("Period", ordinal, freq string),
    ("Interval", left cell, right cell, closed)."""
    import pandas as pd

    from amber.codec import dumps

    tp = type(value)
    parts: tuple[Any, ...] | None = None
    if tp is pd.Timestamp:
        parts = ("Timestamp", value.asm8, value.tz)
    elif tp is pd.Timedelta:
        parts = ("Timedelta", value.asm8)
    elif value is pd.NaT:
        parts = ("NaT",)
    elif tp is pd.Period:
        parts = ("Period", value.ordinal, value.freqstr)
    elif tp is pd.Interval:
        parts = ("Interval", _cell(value.left), _cell(value.right), value.closed)
    if parts is None:
        return _CELL_VALUE + dumps(value, deterministic=True)
    return _CELL_PANDAS + dumps(parts, deterministic=True)


def _cell_value(cell: Any, interval: bool = True) -> Any:
    """The cell `_cell` wrote; `interval=False` for an Interval's ends, which are never
    Intervals (so a cell nests at most once)."""
    import numpy as np
    import pandas as pd

    from amber.codec import loads

    data = memoryview(cell)
    what, value = bytes(data[:1]), loads(data[1:])
    if what == _CELL_VALUE:
        return value
    if what != _CELL_PANDAS or type(value) is not tuple or not value:
        raise ValueError(f"unknown cell kind {what!r}")
    name, args = value[0], value[1:]
    if name == "Timestamp" and len(args) == 2 and type(args[0]) is np.datetime64:
        stamp = pd.Timestamp(args[0])
        return stamp if args[1] is None else stamp.tz_localize("UTC").tz_convert(args[1])
    if name == "Timedelta" and len(args) == 1 and type(args[0]) is np.timedelta64:
        return pd.Timedelta(args[0])
    if name == "NaT" and not args:
        return pd.NaT
    if name == "Period" and len(args) == 2 and type(args[0]) is int and type(args[1]) is str:
        return pd.Period(ordinal=args[0], freq=args[1])
    ends = len(args) == 3 and type(args[0]) is bytes and type(args[1]) is bytes
    if interval and name == "Interval" and ends:
        return pd.Interval(_cell_value(args[0], False), _cell_value(args[1], False), args[2])
    raise ValueError(f"a pandas scalar cell holds {value!r}")


def _pandas_metadata(
    pa: Any, df: Any, names: list[str], levels: list[Any], index: Any, level_names: list[str]
) -> dict[str, Any]:
    """pyarrow's `pandas` schema metadata for these columns (what other tools read to rebuild
    dtypes and the index; amber's decoder uses its column dtypes only), made from the frame's
    first zero rows."""
    import pandas as pd

    empty = df.iloc[:0].set_axis(names, axis=1)
    empty.index = pd.RangeIndex(0)
    empty.attrs = {}  # kept in the extras as amber values, not as pyarrow's JSON
    for name, level in zip(level_names, levels, strict=True):
        empty.insert(empty.shape[1], name, pd.Series(level.array[:0], dtype=level.dtype))
    metadata: dict[str, Any] = pa.Schema.from_pandas(empty, preserve_index=False).pandas_metadata
    if level_names:
        metadata["index_columns"] = list(level_names)
        for entry in metadata["columns"]:
            if entry.get("field_name") in level_names:
                name = entry["field_name"]
                entry["name"] = None if name.startswith("__index_level_") else name
    else:
        metadata["index_columns"] = [
            {
                "kind": "range",
                "name": index.name if type(index.name) is str else None,
                "start": index.start,
                "stop": index.stop,
                "step": index.step,
            }
        ]
    return metadata


def _is_object(dtype: Any) -> bool:
    return getattr(dtype, "kind", None) == "O" and getattr(dtype, "name", None) == "object"


# --- polars, writing ---------------------------------------------------------------------------


def _from_polars_frame(pa: Any, df: Any, extras: dict[str, Any]) -> Any:
    for name, dtype in df.schema.items():
        if _polars_holds_object(dtype):
            raise TypeError(
                f"column {name!r} has dtype {dtype}: Arrow holds no Python objects (polars "
                "exports their addresses)"
            )
    return df.to_arrow()


def _polars_holds_object(dtype: Any) -> bool:
    import polars as pl

    if dtype == pl.Object:
        return True
    inner = getattr(dtype, "inner", None)
    if inner is not None and _polars_holds_object(inner):
        return True
    return any(_polars_holds_object(f.dtype) for f in getattr(dtype, "fields", None) or ())


# --- reading -----------------------------------------------------------------------------------


def from_arrow(kind: int, extras: Any, stream: Any) -> Any:
    """The value an ARROW item describes, from its extras and its Arrow IPC stream (any
    buffer: the decoded value shares its memory)."""
    pa = _pyarrow()
    reader = pa.ipc.open_stream(pa.py_buffer(stream))
    # Arrow checks the messages' structure as it reads them; a full validation also checks
    # every offset and UTF-8 string against the buffers, so bytes from anywhere never make a
    # column that reads outside its memory.
    if register_pandas_types(reader.schema):
        reader = pa.ipc.open_stream(pa.py_buffer(stream))
    if kind == PA_BATCH:
        batches = list(reader)
        if len(batches) != 1:
            raise ValueError(f"a RecordBatch stream holds {len(batches)} batches, not 1")
        batches[0].validate(full=True)
        return from_table(kind, extras, batches[0])
    table = reader.read_all()
    table.validate(full=True)
    return from_table(kind, extras, table)


def register_pandas_types(schema: Any) -> bool:
    """Whether reading a table of this schema must start again, because it names pandas' own
    Arrow extension types (periods, intervals) that pyarrow did not know when it read the
    schema and that importing pandas' module for them has now registered. pandas registers them
    only once it has converted such a column itself, which a reading process may not have."""
    module = "pandas.core.arrays.arrow.extension_types"
    if module in sys.modules:
        return False  # registered already: what is unknown stays unknown
    if not any(n.startswith("pandas.") for n in _unknown_extension_names(schema)):
        return False
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


def _unknown_extension_names(schema: Any) -> set[str]:
    out: set[str] = set()

    def visit(field: Any) -> None:
        name = (field.metadata or {}).get(_EXTENSION_NAME)
        if name is not None:
            out.add(name.decode("utf-8", "replace"))
        for i in range(field.type.num_fields):
            visit(field.type.field(i))

    for field in schema:
        visit(field)
    return out


def from_table(kind: int, extras: Any, table: Any) -> Any:
    """The value of `kind` from a validated pyarrow Table (RecordBatch for PA_BATCH) and its
    extras."""
    extras = extras or {}
    if not isinstance(extras, dict):
        raise ValueError("table extras must be a dict or None")
    _check_extension_types(table.schema)
    if kind in (PA_TABLE, PA_BATCH):
        return table
    if kind == PD_FRAME:
        return _to_pandas(table, extras)
    if kind == PD_SERIES:
        one = _to_pandas(table, extras)
        if one.shape[1] != 1:
            raise ValueError(f"a pandas Series stream holds {one.shape[1]} columns, not 1")
        series = one.iloc[:, 0]
        series.name = extras.get("name")
        series.attrs = extras.get("attrs", {})
        if extras.get("allows_duplicate_labels") is False:
            series = series.set_flags(allows_duplicate_labels=False)
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


_EXTENSION_NAME = b"ARROW:extension:name"


class Unregistered(ImportError):
    """A table holds an Arrow extension type this process has not registered: like a class
    whose module is not imported, what the data needs is missing here (the codec reports it as
    a DecodeError of kind `refused`, the archive as an ArchiveError of that kind)."""


def _check_extension_types(schema: Any) -> None:
    """Refuse a column (or a field inside one) of an Arrow extension type that is not registered
    in this process: pyarrow reads it as its storage type, keeping the type's name only in the
    field's metadata, which would change the value silently."""

    def visit(field: Any, path: str) -> None:
        name = (field.metadata or {}).get(_EXTENSION_NAME)
        if name is not None:
            raise Unregistered(
                f"column {path!r} holds the Arrow extension type "
                f"{name.decode('utf-8', 'replace')!r}, which is not registered in this process; "
                "register it (pyarrow.register_extension_type) before reading"
            )
        for i in range(field.type.num_fields):
            child = field.type.field(i)
            visit(child, f"{path}.{child.name}")

    for field in schema:
        visit(field, field.name)


def _rebuild_map(extras: dict[str, Any], ncolumns: int) -> dict[int, Any]:
    rebuild = extras.get("rebuild", {})
    if not isinstance(rebuild, dict) or not all(
        type(i) is int and 0 <= i < ncolumns for i in rebuild
    ):
        raise ValueError("table extras 'rebuild' must map column positions to how")
    return rebuild


def _decode_cells(column: Any) -> list[Any]:
    import pandas as pd
    import pyarrow as pa

    if not (pa.types.is_binary(column.type) or pa.types.is_large_binary(column.type)):
        raise ValueError(f"a column of amber cells must be binary, not {column.type}")
    out = []
    for chunk in column.chunks:
        for cell in chunk:
            out.append(_cell_value(cell.as_buffer()) if cell.is_valid else pd.NA)
    return out


def _object_series(values: list[Any], index: Any = None) -> Any:
    """A Series of dtype object holding exactly these values (no inference)."""
    import numpy as np
    import pandas as pd

    arr = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        arr[i] = v
    return pd.Series(arr, index=index, dtype=object, copy=False)


def _to_pandas(table: Any, extras: dict[str, Any]) -> Any:
    if "index" not in extras:
        return _to_pandas_before_rules(table, extras)
    import pandas as pd

    pa = _pyarrow()
    description = extras["index"]
    if not isinstance(description, list) or not description:
        raise ValueError("table extras 'index' must be a list")
    ncolumns = table.num_columns
    if description[0] == "range" and len(description) == 4:
        nlevels = 0
    elif description[0] == "levels" and len(description) == 2 and type(description[1]) is int:
        nlevels = description[1]
        if not 1 <= nlevels <= ncolumns:
            raise ValueError(f"a frame of {ncolumns} columns cannot have {nlevels} index levels")
    else:
        raise ValueError(f"unknown index description {description!r}")
    ndata = ncolumns - nlevels
    rebuild = _rebuild_map(extras, ncolumns)

    # pandas' metadata gives each column's dtype; the index and labels are amber's.
    metadata = table.schema.pandas_metadata or {}
    entries = {}
    for entry in metadata.get("columns", ()) if isinstance(metadata, dict) else ():
        if isinstance(entry, dict) and isinstance(entry.get("field_name"), str):
            entries[entry["field_name"]] = entry
    arrays, columns_meta = list(table.columns), []
    positions = [f"c{i}" for i in range(ncolumns)]
    own = (_CELLS, _ARROW, _OBJECT, [_OBJECT, "nan"])
    for i, field_name in enumerate(table.schema.names):
        entry = entries.get(field_name)
        if i in rebuild and rebuild[i] in own:
            arrays[i] = pa.nulls(table.num_rows)  # read back by amber, not by pandas
            entry = {"pandas_type": "empty", "numpy_type": "object", "metadata": None}
        if entry is not None:
            columns_meta.append({**entry, "name": positions[i], "field_name": positions[i]})
    plain = pa.Table.from_arrays(arrays, names=positions)
    plain = plain.replace_schema_metadata(
        {
            b"pandas": json.dumps(
                {"index_columns": [], "column_indexes": [], "columns": columns_meta}
            ).encode()
        }
    )
    raw = plain.to_pandas(split_blocks=True)
    fast = not rebuild and nlevels == 0 and ncolumns > 0
    columns = []
    for i in range(0 if fast else ncolumns):
        how = rebuild.get(i)
        column = table.column(i)
        if how is None:
            columns.append(raw.iloc[:, i])
        elif how == _OBJECT or how == [_OBJECT, "nan"]:
            if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
                raise ValueError(f"column {i} of object str must be a string column")
            values = column.to_pylist()
            if how != _OBJECT:
                nan = float("nan")  # one object for every null, as the column had
                values = [nan if v is None else v for v in values]
            columns.append(_object_series(values))
        elif how == _CELLS:
            columns.append(_object_series(_decode_cells(column)))
        elif how == _ARROW:
            columns.append(pd.Series(pd.arrays.ArrowExtensionArray(column), copy=False))
        elif isinstance(how, list) and len(how) == 2 and how[0] == _TZ:
            s = raw.iloc[:, i]
            if not isinstance(s.dtype, pd.DatetimeTZDtype):
                raise ValueError(f"column {i} is not of tz-aware datetimes")
            zone = how[1]
            if type(s.dtype.tz) is not type(zone) or s.dtype.tz != zone:
                s = s.dt.tz_convert(zone)  # the same instants, in the zone object written
            columns.append(s)
        elif how == _OBJECT_CATEGORIES:
            s = raw.iloc[:, i]
            if not isinstance(s.dtype, pd.CategoricalDtype):
                raise ValueError(f"column {i} is not a categorical")
            cats = pd.Index(list(s.dtype.categories), dtype=object)
            dtype = pd.CategoricalDtype(cats, ordered=s.dtype.ordered)
            columns.append(pd.Series(pd.Categorical.from_codes(s.cat.codes, dtype=dtype)))
        elif (
            isinstance(how, list)
            and len(how) == 3
            and how[0] == _STRING
            and how[1] in ("python", "pyarrow")
            and type(how[2]) is bool
        ):
            import numpy as np

            na = np.nan if how[2] else pd.NA
            columns.append(raw.iloc[:, i].astype(pd.StringDtype(how[1], na_value=na)))
        else:
            raise ValueError(f"unknown way to rebuild column {i}: {how!r}")

    nrows = table.num_rows
    if nlevels == 0:
        start, stop, step = description[1:]
        if not all(type(v) is int for v in (start, stop, step)) or step == 0:
            raise ValueError(f"invalid RangeIndex {description[1:]!r}")
        index: Any = pd.RangeIndex(start, stop, step)
        if ncolumns == 0:
            nrows = len(index)  # a table of no columns has no rows; its frame has the range's
        elif len(index) != nrows:
            raise ValueError(f"a RangeIndex of {len(index)} rows for a table of {nrows}")
    else:
        levels = [pd.Index(s, dtype=s.dtype, tupleize_cols=False) for s in columns[ndata:]]
        index = levels[0] if nlevels == 1 else pd.MultiIndex.from_arrays(levels)
        if nlevels > 1 and "index_levels" in extras:
            index = _with_levels(index, extras["index_levels"])
    names = extras.get("index_names")
    index = index.set_names(names if names is not None else [None] * index.nlevels)
    freq = extras.get("index_freq")
    if freq is not None and isinstance(index, (pd.DatetimeIndex, pd.TimedeltaIndex)):
        index.freq = freq

    if "columns" in extras:
        labels = _index_from(extras["columns"])
    else:
        labels = pd.Index([table.schema.field(i).name for i in range(ndata)])
    if len(labels) != ndata:
        raise ValueError(f"{len(labels)} column labels for {ndata} columns")
    names = extras.get("column_names")
    labels = labels.set_names(names if names is not None else [None] * labels.nlevels)

    if fast:
        df = raw  # every column as pandas' metadata made it: the frame itself
    else:
        data = dict(enumerate(columns[:ndata]))
        df = pd.DataFrame(data, copy=False) if data else pd.DataFrame(index=pd.RangeIndex(nrows))
    df.index = index
    df.columns = labels
    if "attrs" in extras:
        df.attrs = extras["attrs"]
    if extras.get("allows_duplicate_labels") is False:
        df = df.set_flags(allows_duplicate_labels=False)
    return df


def _with_levels(index: Any, descriptions: Any) -> Any:
    """The MultiIndex of the same values over the levels described (in their order, with
    values no row uses)."""
    import numpy as np
    import pandas as pd

    if not isinstance(descriptions, list) or len(descriptions) != index.nlevels:
        raise ValueError("'index_levels' must describe every level of the MultiIndex")
    levels, codes = [], []
    for k, description in enumerate(descriptions):
        level = _index_from(description)
        used = index.levels[k]
        where, missing = level.get_indexer_non_unique(used)
        if len(missing) or len(where) != len(used) or (len(where) and where.min() < 0):
            raise ValueError(f"index level {k} holds values its stored level does not")
        old = np.asarray(index.codes[k])
        codes.append(np.where(old < 0, -1, where[np.maximum(old, 0)]) if len(where) else old)
        levels.append(level)
    return pd.MultiIndex(levels=levels, codes=codes, verify_integrity=True)


def _index_from(description: Any) -> Any:
    """The Index `_describe_index` described."""
    import numpy as np
    import pandas as pd

    if not isinstance(description, list) or not description:
        raise ValueError("an Index description must be a list")
    what = description[0]
    if what == "range" and len(description) == 4:
        start, stop, step = description[1:]
        if not all(type(v) is int for v in (start, stop, step)) or step == 0:
            raise ValueError(f"invalid RangeIndex {description[1:]!r}")
        return pd.RangeIndex(start, stop, step)
    if what == "array" and len(description) == 2 and isinstance(description[1], np.ndarray):
        arr = description[1]
        if arr.ndim != 1 or arr.dtype.kind not in "biuf":
            raise ValueError("an Index array must be one-dimensional numbers")
        return pd.Index(arr, dtype=arr.dtype)
    if what == "list" and len(description) == 2 and isinstance(description[1], list):
        return pd.Index(_object_series(description[1]), dtype=object, tupleize_cols=False)
    if what == "frame" and len(description) == 3 and isinstance(description[1], pd.DataFrame):
        values = description[1]
        if values.shape[1] != 1:
            raise ValueError("an Index frame must have one column")
        s = values.iloc[:, 0]
        index = pd.Index(s, dtype=s.dtype, tupleize_cols=False, name=None)
        if description[2] is not None and isinstance(index, (pd.DatetimeIndex, pd.TimedeltaIndex)):
            index.freq = description[2]
        return index
    if what == "multi" and len(description) == 3:
        levels, codes = description[1], description[2]
        if not (isinstance(levels, list) and isinstance(codes, list)):
            raise ValueError("a MultiIndex description needs lists of levels and codes")
        return pd.MultiIndex(
            levels=[_index_from(level) for level in levels], codes=codes, verify_integrity=True
        )
    raise ValueError(f"unknown Index description {what!r}")


def _to_pandas_before_rules(table: Any, extras: dict[str, Any]) -> Any:
    """A frame written before the per-column rules: as pandas' metadata rebuilds it, with
    the fixes its extras name."""
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
