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


#: json and jsonb.
_JSON_OIDS = frozenset((114, 3802))


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


def _decimal_or_text(v: str) -> Any:
    """Numeric text (as amber reads numeric into Arrow) as a Decimal; other text stays text,
    for the encoder to refuse naming its row."""
    import decimal

    try:
        return decimal.Decimal(v)
    except (decimal.InvalidOperation, ValueError):
        return v


def _uuid_or_bytes(v: bytes) -> Any:
    """16 bytes (a uuid as amber reads it into Arrow and polars) as a UUID; others stay bytes,
    for the encoder to refuse naming its row."""
    import uuid

    return uuid.UUID(bytes=bytes(v)) if len(v) == 16 else v


#: For arrays of these element types, what Arrow list elements become before they are written.
_ELEMENT_WRITES = {"numeric": (str, _decimal_or_text), "uuid": (bytes, _uuid_or_bytes)}


def _elements(v: Any, kind: type, conv: Any) -> Any:
    if isinstance(v, list):
        return [_elements(x, kind, conv) for x in v]
    return conv(v) if isinstance(v, kind) else v


def _source(arr: Any, oid: int) -> tuple[Any, ...]:
    """The encoder's description of one pyarrow Array written to a column of type `oid` (see
    the Rust `columns.rs`)."""
    import pyarrow as pa

    t = arr.type
    target = _native.pg_type(oid)
    if target is None or target[1]:
        values = arr.to_pylist()
        write = _ELEMENT_WRITES.get(target[0][1:]) if target is not None else None
        if write is not None:
            values = [_elements(v, *write) for v in values]
        return Objects(values).source()
    if pa.types.is_dictionary(t):
        arr = arr.dictionary_decode()
        t = arr.type
    if target[0] == "uuid" and (
        pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t)
    ):
        import pyarrow.compute as pc

        # 16-byte binaries (how polars holds a uuid amber read) as fixed_size_binary(16).
        if pc.all(pc.equal(pc.binary_length(arr), 16)).as_py() is False:
            return _objects([None if v is None else _uuid_or_bytes(v) for v in arr.to_pylist()])
        arr = arr.cast(pa.binary(16))
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
    """Named columns of equal length, each a pyarrow ChunkedArray or `Objects`. `texts` are the
    Arrow columns that hold a pandas Series' strings: Python `str`s to pandas, written to json
    and jsonb as JSON strings (as an object column's are), not as JSON text."""

    def __init__(
        self, names: list[str], cols: list[Any], length: int, texts: frozenset[int] = frozenset()
    ) -> None:
        self.names = names
        self.cols = cols
        self.length = length
        self.texts = texts

    def select(self, names: Sequence[str]) -> Columns:
        index = {n: i for i, n in enumerate(self.names)}
        missing = [n for n in names if n not in index]
        if missing:
            raise ValueError(f"the data has no column {missing[0]!r}")
        picked = [index[n] for n in names]
        texts = frozenset(i for i, j in enumerate(picked) if j in self.texts)
        return Columns(list(names), [self.cols[j] for j in picked], self.length, texts)

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
        as_str = [i in self.texts and oid in _JSON_OIDS for i, oid in enumerate(oids)]
        for lo, hi in itertools.pairwise(edges):
            for start in range(lo, hi, max_rows):
                stop = min(hi, start + max_rows)
                sources = [
                    col.source(start, stop)
                    if isinstance(col, Objects)
                    else _objects(_slice(col, start, stop).to_pylist())
                    if text
                    else _source(_slice(col, start, stop), oid)
                    for col, oid, text in zip(self.cols, oids, as_str, strict=True)
                ]
                yield Batch(stop - start, sources)


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
            # Object columns hold Python objects (to_arrow would give their addresses).
            objs = [n for n, d in data.schema.items() if d == pl.Object]
            table = data.drop(objs).to_arrow()
            pcols = [
                Objects(data.get_column(n).to_list()) if n in objs else table.column(n)
                for n in data.columns
            ]
            return Columns(list(data.columns), pcols, data.height)
    if module == "pandas":
        import pandas as pd

        if isinstance(data, pd.DataFrame):
            import pyarrow as pa

            cols: list[Any] = []
            texts: set[int] = set()
            for i, (_, series) in enumerate(data.items()):
                if series.dtype == object:
                    cols.append(Objects(_object_values(series), pandas=True))
                else:
                    if _pandas_text(series):
                        texts.add(i)
                    cols.append(pa.chunked_array([pa.Array.from_pandas(series)]))
            return Columns([str(c) for c in data.columns], cols, len(data), frozenset(texts))
    if isinstance(data, dict):
        return _from_dict(data)
    return None


def _pandas_text(series: Any) -> bool:
    """Whether a pandas Series (not of object dtype) is of a string dtype."""
    import pandas as pd

    return bool(pd.api.types.is_string_dtype(series.dtype))


def _from_dict(data: dict[str, Any]) -> Columns:
    names: list[str] = []
    cols: list[Any] = []
    lengths = set()
    texts: set[int] = set()
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
                if _pandas_text(values):
                    texts.add(len(cols))
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
    return Columns(names, cols, lengths.pop() if lengths else 0, frozenset(texts))


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
#: Types whose Python values are `str`: pandas gets its string dtype for them.
_TEXT_TYPES = frozenset(("text", "varchar", "bpchar", "name", "char"))
#: Microseconds in a day: `time` values at or past it (PostgreSQL's 24:00) have no Python,
#: pandas or polars time.
_DAY_US = 86_400_000_000
#: 1970-01-01 as a proleptic Gregorian ordinal, and the ordinals Python's dates span.
_EPOCH_ORDINAL = 719_163
_MAX_ORDINAL = 3_652_059
_INFINITE_DAYS = (2**31 - 1, -(2**31))


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


def _type_name(oid: int) -> str:
    t = _native.pg_type(oid)
    if t is None:
        return f"type {oid}"
    return f"{t[0][1:]}[]" if t[1] else t[0]


def _place(row: int | str, name: str) -> str:
    """A value's place as amber's errors give it (`$[3].price`, `$[3]["unit price"]`)."""
    if name and all(c.isascii() and (c.isalnum() or c == "_") for c in name):
        return f"$[{row}].{name}"
    return f"$[{row}][{name!r}]".replace("'", '"')


def _decode_error(msg: str, kind: str, path: str | None = None) -> Exception:
    err = _native.DecodeError(msg)
    err.kind, err.path = kind, path  # type: ignore[assignment]
    return err


def _value_error(row: int, name: str, oid: int, detail: str) -> Exception:
    """A value `into` cannot hold, as amber's other read errors name it."""
    return _decode_error(
        f"row {row}, column {name!r} ({_type_name(oid)}): {detail}",
        "out_of_range",
        _place(row, name),
    )


def _no_type(name: str, oid: int, target: str, reads: str) -> Exception:
    """A column whose values `target` has no type for."""
    return _decode_error(
        f"column {name!r} ({_type_name(oid)}): {target} has no type that holds these values "
        f"exactly; read it with into={reads}, or cast it in SQL (to text, for instance)",
        "unsupported",
        _place("*", name),
    )


def _unique_names(names: list[str]) -> list[str]:
    """The names with each repeat made unique as pandas' CSV reader does: the second `a` is
    `a.1`, the third `a.2` (skipping names the result already has)."""
    taken = set(names)
    seen: set[str] = set()
    out: list[str] = []
    for name in names:
        if name in seen:
            k = 1
            while f"{name}.{k}" in taken:
                k += 1
            name = f"{name}.{k}"
            taken.add(name)
        seen.add(name)
        out.append(name)
    return out


# Arrays into Arrow: the element's Arrow type, and how a Python element becomes a value of it.


def _numeric_text(d: Any) -> str:
    """A Decimal as numeric's exact text: positional digits, never an exponent."""
    return format(d, "f") if d.is_finite() else str(d)


def _uuid_bytes(u: Any) -> bytes:
    return bytes(u.bytes)


def _timetz_text(t: Any) -> str:
    """A timetz as ISO text with its full offset (`12:00:00+05:00`, `12:00:00.5-03:30:15`),
    which copy_in parses back exactly."""
    return str(t.isoformat())


#: Types Arrow has no type for, as the text copy_in parses back exactly: timetz in ISO form
#: with its offset, inet and cidr as `ipaddress` writes them.
_AS_TEXT = {"timetz": _timetz_text, "inet": str, "cidr": str}


def _element_type(elem: str) -> tuple[Any, Any] | None:
    """(Arrow type, conversion or None) for an array's elements; None where Arrow has no type
    that holds them exactly (or where they would not be written back as they were read)."""
    import pyarrow as pa

    plain = {
        "bool": pa.bool_(),
        "int2": pa.int16(),
        "int4": pa.int32(),
        "int8": pa.int64(),
        "oid": pa.uint32(),
        "float4": pa.float32(),
        "float8": pa.float64(),
        "text": pa.large_string(),
        "varchar": pa.large_string(),
        "bpchar": pa.large_string(),
        "name": pa.large_string(),
        "char": pa.large_string(),
        "bytea": pa.large_binary(),
        "date": pa.date32(),
        "time": pa.time64("us"),
        "timestamp": pa.timestamp("us"),
        "timestamptz": pa.timestamp("us", tz="UTC"),
        "interval": pa.duration("us"),
    }
    if elem in plain:
        return plain[elem], None
    if elem == "numeric":
        return pa.large_string(), _numeric_text
    if elem == "uuid":
        return pa.binary(16), _uuid_bytes
    if elem in _AS_TEXT:
        return pa.large_string(), _AS_TEXT[elem]
    return None


def _convert(v: Any, conv: Any) -> Any:
    if v is None:
        return None
    if isinstance(v, list):
        return [_convert(x, conv) for x in v]
    return conv(v)


def _depth(values: Sequence[Any]) -> int:
    """Dimensions of the first non-empty array in the column (1 when there is none)."""
    for v in values:
        if isinstance(v, list) and v:
            d = 0
            while isinstance(v, list) and v:
                v = next((x for x in v if x is not None), None)
                d += 1
            return max(d, 1)
    return 1


def _objects_to_arrow(values: list[Any], name: str, oid: int, into: str) -> Any:
    """An Arrow array of a column amber read as Python objects, with a type said, never
    inferred: arrays as (nested) lists of the element's type, timetz, inet and cidr as their
    text (`_AS_TEXT`), a type psycopg reads as `str` (an enum) as large_string; anything else
    (amber objects, ranges, registered enums' members) is refused."""
    import pyarrow as pa

    reads = "'rows', 'columns' or 'pandas'" + (" (or 'polars')" if into == "arrow" else "")
    t = _native.pg_type(oid)
    typ = conv = None
    if t is not None and t[1]:
        found = _element_type(t[0][1:])
        if found is None:
            raise _no_type(name, oid, "Arrow", reads)
        typ, conv = found
        for _ in range(_depth(values)):
            typ = pa.list_(typ)
    elif t is not None and t[0] in _AS_TEXT:
        typ, conv = pa.large_string(), _AS_TEXT[t[0]]
    elif t is None and all(v is None or type(v) is str for v in values):
        typ = pa.large_string()
    else:
        raise _no_type(name, oid, "Arrow", reads)
    if conv is not None:
        values = [_convert(v, conv) for v in values]
    try:
        return pa.array(values, type=typ)
    except (pa.ArrowException, TypeError, ValueError, OverflowError) as e:
        # Arrays of different dimensions in one column.
        raise _decode_error(
            f"column {name!r} ({_type_name(oid)}) cannot become an Arrow {typ}: {e}",
            "unsupported",
        ) from e


def _arrow_column(col: tuple[Any, ...], name: str, oid: int, into: str = "arrow") -> Any:
    import pyarrow as pa

    tag, length, nulls, validity, data, offsets = col
    if tag == "objects":
        return _objects_to_arrow(data, name, oid, into)
    t = _arrow_type(tag)
    vbuf = pa.py_buffer(validity) if validity is not None else None
    bufs = (
        [vbuf, pa.py_buffer(offsets), pa.py_buffer(data)]
        if offsets is not None
        else [vbuf, pa.py_buffer(data)]
    )
    return pa.Array.from_buffers(t, length, bufs, null_count=nulls)


def _valid(validity: Any, length: int) -> Any:
    import numpy as np

    return np.unpackbits(np.frombuffer(validity, dtype=np.uint8), bitorder="little")[
        :length
    ].astype(bool)


def _numpy_values(tag: str, length: int, data: Any) -> Any:
    import numpy as np

    if tag == "bool":
        return np.unpackbits(np.frombuffer(data, dtype=np.uint8), bitorder="little")[
            :length
        ].astype(bool)
    return np.frombuffer(data, dtype=_NUMPY_DTYPES[tag])


def _numpy_column(col: tuple[Any, ...]) -> Any:
    import numpy as np

    tag, length, nulls, validity, data, _ = col
    if tag == "objects":
        return data  # an object array, made by the reader
    values = _numpy_values(tag, length, data)
    if tag in _NUMPY_VIEWS:
        values = (
            values.astype(_NUMPY_VIEWS[tag]) if tag == "date32" else values.view(_NUMPY_VIEWS[tag])
        )
    if nulls:
        return np.ma.masked_array(values, mask=~_valid(validity, length))
    return values


def _pandas_dates(days: Any, valid: Any, name: str, oid: int) -> Any:
    """An object array of `date`s, infinity and -infinity as `date.max` and `date.min` (as in
    rows); a date outside Python's years 1 to 9999 raises DecodeError naming its row."""
    import datetime

    import numpy as np

    out = np.empty(len(days), dtype=object)
    for i, d in enumerate(days.tolist()):
        if valid is not None and not valid[i]:
            continue
        if d == _INFINITE_DAYS[0]:
            out[i] = datetime.date.max
        elif d == _INFINITE_DAYS[1]:
            out[i] = datetime.date.min
        elif 1 <= d + _EPOCH_ORDINAL <= _MAX_ORDINAL:
            out[i] = datetime.date.fromordinal(d + _EPOCH_ORDINAL)
        else:
            raise _value_error(i, name, oid, f"{d} days from 1970 is outside Python's dates")
    return out


def _pandas_column(col: tuple[Any, ...], name: str, oid: int) -> Any:
    """One column of a pandas DataFrame from the reader's NumPy-mode column: integers, floats
    and bools with a NULL in pandas' nullable dtypes (never floats for integers), timestamps
    and intervals in microseconds (NaT for NULL), dates as `date` objects, strings in pandas'
    string dtype, everything else as the objects rows give."""
    import numpy as np
    import pandas as pd

    tag, length, nulls, validity, data, _ = col
    if tag == "objects":
        t = _native.pg_type(oid)
        if t is not None and not t[1] and t[0] in _TEXT_TYPES and _infer_string():
            return pd.array(data, dtype="str")
        return data
    valid = _valid(validity, length) if nulls else None
    values = _numpy_values(tag, length, data)
    if tag == "date32":
        return _pandas_dates(values, valid, name, oid)
    if tag in _NUMPY_VIEWS:
        values = values.copy()
        if valid is not None:
            values[~valid] = np.iinfo(np.int64).min  # NaT
        values = values.view(_NUMPY_VIEWS[tag])
        if tag == "timestamp_us_utc":
            return pd.array(values).tz_localize("UTC")
        return values
    if valid is None:
        return values
    if tag == "bool":
        return pd.arrays.BooleanArray(values, ~valid)
    # Int16/Int32/Int64/UInt32 and Float32/Float64: NULL is NA, NaN stays a float.
    if tag.startswith("float"):
        return pd.arrays.FloatingArray(values.copy(), ~valid)
    return pd.arrays.IntegerArray(values.copy(), ~valid)


def _infer_string() -> bool:
    """Whether this pandas gives strings its `str` dtype (pandas 3, or the option in 2)."""
    import pandas as pd

    if int(pd.__version__.split(".", 1)[0]) >= 3:
        return True
    try:
        return bool(pd.get_option("future.infer_string"))
    except (KeyError, pd.errors.OptionError):
        return False


def _pandas(result: list[Any], names: list[str], oids: list[int]) -> Any:
    import pandas as pd

    arrays = [_pandas_column(c, n, o) for c, n, o in zip(result, names, oids, strict=True)]
    length = result[0][1] if result else 0
    frame = pd.DataFrame(
        {i: pd.Series(a, copy=False) for i, a in enumerate(arrays)},
        index=pd.RangeIndex(length),
    )
    frame.columns = pd.Index(names, dtype=object)
    return frame


def _object_array(values: list[Any]) -> Any:
    """The values as a NumPy object array, item by item (lists stay items): polars takes the
    objects of one as they are, where from a list it reads an Enum member's `.value` for the
    whole column and fails at a None."""
    import numpy as np

    out = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        out[i] = v
    return out


def _polars(result: list[Any], names: list[str], oids: list[int]) -> Any:
    """A polars DataFrame from the reader's Arrow-mode columns; the types Arrow has no type
    for become Object columns holding the objects rows give; a time polars cannot hold
    (24:00) raises DecodeError naming its row."""
    import polars as pl
    import pyarrow as pa

    repeated = next((n for i, n in enumerate(names) if n in names[:i]), None)
    if repeated is not None:
        raise _decode_error(
            f"column name {repeated!r} appears more than once, and polars needs unique names: "
            "name the columns in SQL (AS), or read with into='pandas', 'arrow' or 'columns'",
            "unsupported",
        )
    series = []
    for col, name, oid in zip(result, names, oids, strict=True):
        if col[0] == "objects":
            try:
                arr = _objects_to_arrow(col[4], name, oid, "polars")
            except _native.DecodeError:
                series.append(pl.Series(name, _object_array(col[4]), dtype=pl.Object))
                continue
        else:
            arr = _arrow_column(col, name, oid, "polars")
        if col[0] == "time64_us" and len(arr):
            import pyarrow.compute as pc

            late = pc.greater_equal(arr.cast(pa.int64()), _DAY_US)
            if pc.any(late).as_py():
                row = pc.index(late, True).as_py()
                raise _value_error(row, name, oid, "time 24:00:00 has no polars time")
        series.append(pl.Series(name, arr))
    return pl.DataFrame(series)


def shape(result: Any, names: list[str], oids: list[int], into: str) -> Any:
    """The reader's result as `into` asks: the reader ran in "rows" mode for rows, "numpy" for
    columns and pandas, "arrow" for Arrow and polars."""
    if into == "rows":
        return result
    if into == "columns":
        return {
            name: _numpy_column(col) for name, col in zip(_unique_names(names), result, strict=True)
        }
    if into == "pandas":
        return _pandas(result, names, oids)
    if into == "polars":
        return _polars(result, names, oids)
    import pyarrow as pa

    return pa.Table.from_arrays(
        [_arrow_column(c, n, o) for c, n, o in zip(result, names, oids, strict=True)],
        names=names,
    )
