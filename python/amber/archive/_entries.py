"""How one key's value becomes zip entries, and back.

- `amber`: the value in amber format, encoded deterministically (the same bytes in every
  process); every bytes, array or table of at least
  `OOB_THRESHOLD` bytes inside it goes out of band into an entry of its own (`key.amber.0`,
  `key.amber.1`, ...), so reading maps it instead of copying it;
- `npy`: a NumPy array as a `.npy` file (NumPy's format 1.0), when `.npy` keeps it exactly;
- `arrow` and `parquet`: a pandas, polars or pyarrow table as an Arrow IPC file or Parquet
  file; what Arrow does not keep (pandas `attrs`, a Series' name, ...) travels in amber format
  in the schema metadata under `amber.extras`;
- `json`: a value made only of dict (str keys), list, str, int, float, bool and None, for
  entries a person or another tool should read.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from amber import _frames, _native
from amber._native import ArchiveError, DecodeError
from amber.archive import _zip
from amber.archive._errors import archive_error
from amber.archive._manifest import SHUFFLE_WIDTHS
from amber.archive._zip import Stream
from amber.codec import dumps, loads

# Buffers at least this large leave an amber entry for an entry of their own.
OOB_THRESHOLD = 1 << 16
EXTRAS_KEY = b"amber.extras"
SUFFIX = {
    "amber": ".amber",
    "json": ".json",
    "npy": ".npy",
    "arrow": ".arrow",
    "parquet": ".parquet",
}


@dataclass
class Encoded:
    """A key's manifest record (without its entry names) and its entries' contents, the main
    entry first; `widths` gives the byte width of the numbers an entry holds, for entries of
    numbers all of one width (which compress far better byte-shuffled by that width)."""

    info: dict[str, Any]
    contents: list[tuple[str, Any]] = field(default_factory=list)
    widths: dict[str, int] = field(default_factory=dict)


def default_level(encoding: str, index: int, method: str) -> int | None:
    """The compression level of a key's entry number `index` when none is given: zstd's level
    for array and table data (`.npy`, Arrow, Parquet, an amber entry's buffers), where higher
    levels spend time for little; the core's default otherwise."""
    binary = index > 0 or encoding not in ("amber", "json")
    return _native.ZSTD_BINARY_LEVEL if method == "zstd" and binary else None


def type_name(value: Any) -> str:
    tp = type(value)
    module = tp.__module__.split(".")[0]
    return tp.__qualname__ if module == "builtins" else f"{module}.{tp.__qualname__}"


def default_encoding(value: Any) -> str:
    if _frames.kind_of(type(value)) is not None:
        return "arrow"
    if _npy_exact(value):
        return "npy"
    return "amber"


def encode(key: str, value: Any, encoding: str) -> Encoded:
    info: dict[str, Any] = {"type": type_name(value), "encoding": encoding}
    main = key + SUFFIX[encoding]
    if encoding == "amber":
        buffers: list[Any] = []
        frame = dumps(
            value,
            buffer_callback=buffers.append,
            oob_threshold=OOB_THRESHOLD,
            deterministic=True,
        )
        out = Encoded(info, [(main, frame)])
        out.contents += [(f"{main}.{i}", b.raw()) for i, b in enumerate(buffers)]
        return out
    if encoding == "json":
        _check_json(value, "$")
        text = json.dumps(value, ensure_ascii=False, indent=1, allow_nan=False)
        return Encoded(info, [(main, text.encode("utf-8"))])
    if encoding == "npy":
        if not _npy_exact(value):
            raise ValueError(f"a {info['type']} cannot be stored exactly as .npy; use amber")
        return _encode_npy(value, info, main)
    if encoding in ("arrow", "parquet"):
        return _encode_table(value, info, main, encoding)
    raise ValueError(f"unknown encoding {encoding!r}; use one of {', '.join(SUFFIX)}")


def decode(info: dict[str, Any], contents: list[Any], entry: str) -> Any:
    """The value from its entries' contents (views of a mapped file, or bytes)."""
    encoding = info["encoding"]
    try:
        if encoding == "amber":
            return loads(contents[0], buffers=contents[1:])
        if encoding == "json":
            return json.loads(bytes(contents[0]).decode("utf-8"))
        if encoding == "npy":
            return _decode_npy(contents[0], entry)
        if encoding == "arrow":
            # Before pyarrow allocates what a compressed body declares.
            _native.arrow_check_file(contents[0])
        return _decode_table(info, contents[0], encoding)
    except ArchiveError as e:
        raise _zip.naming(e, entry) from None
    except MemoryError:
        raise
    except Exception as e:
        # What this process lacks (a registration, pyarrow) or a later amber's data is not a
        # malformed entry: keep those kinds.
        kind = getattr(e, "kind", None) if isinstance(e, DecodeError) else None
        if isinstance(e, ImportError):
            kind = "refused"
        if kind not in ("refused", "unsupported"):
            kind = "malformed"
        raise archive_error(
            kind, f"entry {entry!r} does not hold a valid {encoding} value: {e}", entry=entry
        ) from e


def _check_json(value: Any, path: str) -> None:
    tp = type(value)
    if tp is dict:
        for k, v in value.items():
            if type(k) is not str:
                raise TypeError(f"JSON entries need str keys: {k!r} at {path}")
            _check_json(v, f"{path}.{k}")
    elif tp is list:
        for i, v in enumerate(value):
            _check_json(v, f"{path}[{i}]")
    elif tp is float:
        if not math.isfinite(value):
            raise TypeError(f"JSON has no {value!r} (at {path}); use the amber encoding")
    elif tp not in (str, int, bool, type(None)):
        raise TypeError(
            f"a {type_name(value)} does not come back from JSON as it is (at {path}); "
            f"use the amber encoding"
        )


def _npy_exact(value: Any) -> bool:
    """Whether `.npy` keeps this array exactly: an exact ndarray whose dtype NumPy's format
    writes and reads back as the same dtype (no objects, metadata or record type)."""
    try:
        import numpy as np
    except ImportError:  # pragma: no cover - numpy is a dev dependency
        return False
    if type(value) is not np.ndarray:
        return False
    dtype = value.dtype
    if dtype.hasobject or dtype.metadata is not None or dtype.type is np.record:
        return False
    fmt = np.lib.format
    back = fmt.descr_to_dtype(fmt.dtype_to_descr(dtype))
    return (
        bool(back == dtype)
        and back.type is dtype.type
        and back.isalignedstruct == dtype.isalignedstruct
    )


def _encode_npy(arr: Any, info: dict[str, Any], name: str) -> Encoded:
    import numpy as np

    fortran = bool(arr.flags.f_contiguous and not arr.flags.c_contiguous and arr.ndim > 1)
    if not (arr.flags.c_contiguous or fortran):
        arr = np.ascontiguousarray(arr)
    descr = repr(np.lib.format.dtype_to_descr(arr.dtype))
    header = _native.npy_header(descr, fortran, tuple(arr.shape))
    c_order = arr.T if fortran else arr
    raw = memoryview(c_order.reshape(-1).view(np.uint8) if arr.nbytes else b"")
    info.update(dtype=arr.dtype.str, shape=list(arr.shape))

    def write(out: Any) -> None:
        out.write(header)
        if len(raw):
            out.write(raw)

    out = Encoded(info, [(name, Stream(len(header) + len(raw), write))])
    # The header is padded to 64 bytes, so the numbers' bytes line up with the shuffle's.
    width = _number_width(arr.dtype)
    if width:
        out.widths[name] = width
    return out


def _number_width(dtype: Any) -> int:
    """The byte width of the numbers an array of `dtype` is made of, when shuffling by it
    helps: integers, floats, times, complex numbers (by their parts) and UCS-4 strings (by
    character); 0 for anything else (bytes, bools, records)."""
    if dtype.fields is not None or dtype.subdtype is not None:
        return 0
    width = {"c": dtype.itemsize // 2, "U": 4}.get(dtype.kind, dtype.itemsize)
    return width if dtype.kind in "iufcmMU" and width in SHUFFLE_WIDTHS else 0


def _decode_npy(data: Any, entry: str) -> Any:
    """The array an `.npy` entry holds, as a view of `data`; every problem an `ArchiveError`
    naming `entry`."""
    import numpy as np

    try:
        descr, fortran, shape, offset = _native.npy_parse_header(data)
    except ArchiveError as e:
        raise _zip.naming(e, entry) from None
    try:
        dtype = np.lib.format.descr_to_dtype(descr)
    except (TypeError, ValueError) as e:
        raise archive_error(
            "malformed", f"entry {entry!r}: the .npy header's dtype {descr!r}: {e}", entry=entry
        ) from None
    if dtype.hasobject:
        raise archive_error(
            "refused",
            f"entry {entry!r} is an array of Python objects, which needs pickle; amber does not "
            "unpickle (numpy.load(..., allow_pickle=True) reads it, if you trust the file)",
            entry=entry,
        )
    count = math.prod(shape)
    if count * dtype.itemsize != len(data) - offset:
        raise archive_error(
            "size_mismatch",
            f"entry {entry!r}: shape {tuple(shape)} of {dtype} needs {count * dtype.itemsize} "
            f"bytes, the entry has {len(data) - offset}",
            entry=entry,
        )
    flat = np.frombuffer(data, dtype=dtype, count=count, offset=offset)
    return flat.reshape(shape, order="F" if fortran else "C")


def _encode_table(value: Any, info: dict[str, Any], name: str, encoding: str) -> Encoded:
    """A table's entry; a table that would not come back exactly (spec §6.14 and the
    `parquet` rules of the archive spec) raises `EncodeError` naming what, before anything
    is written."""
    try:
        return _table_entry(value, info, name, encoding)
    except MemoryError:
        raise
    except Exception as e:
        err = _native.EncodeError(f"a {info['type']} cannot be stored as {encoding}: {e}")
        err.kind, err.path = "unsupported", "$"
        raise err from e


def _table_entry(value: Any, info: dict[str, Any], name: str, encoding: str) -> Encoded:
    import pyarrow as pa

    kind = _frames.kind_of(type(value))
    if kind is None:
        raise TypeError(f"{encoding} entries hold tables, not {info['type']}")
    extras, table = _frames.to_table(value, kind)
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    columns = table.num_columns
    index = (extras or {}).get("index")
    if kind in (_frames.PD_FRAME, _frames.PD_SERIES) and index and index[0] == "levels":
        columns -= index[1]  # the index levels are not columns of the frame
    arrow_table = table
    if encoding == "parquet":
        table, extras = _parquet_table(table, extras)
    if extras:
        metadata = dict(table.schema.metadata or {})
        metadata[EXTRAS_KEY] = dumps(extras, deterministic=True)
        table = table.replace_schema_metadata(metadata)
    # A frame of no columns has rows; an Arrow table of no columns has none.
    rows = table.num_rows if kind in (_frames.PA_TABLE, _frames.PA_BATCH) else len(value)
    info.update(kind=kind, rows=rows, columns=columns)
    if _frames.described(extras):
        # Its extras describe the frame by rules an amber before them would misread: the
        # manifest says so, and its version keeps such readers out (docs/spec/archive.md).
        info["described"] = True
    if encoding == "arrow":
        # Measured first (a mock stream only counts), then streamed to the file.
        def write(sink: Any) -> None:
            with pa.ipc.new_file(sink, table.schema) as writer:
                _frames.write_table(writer, table)

        mock = pa.MockOutputStream()
        write(mock)

        def stream(out: Any) -> None:
            write(pa.PythonFile(out, mode="w"))

        out = Encoded(info, [(name, Stream(mock.size(), stream))])
        # Arrow pads every buffer to 8 bytes (64 in amber's files), so the columns' numbers
        # line up with a shuffle by their width when every column has the same one.
        widths = {_column_width(f.type) for f in table.schema}
        if len(widths) == 1 and (width := widths.pop()) in SHUFFLE_WIDTHS:
            out.widths[name] = width
        return out
    import pyarrow.parquet as pq

    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    data = sink.getvalue()
    _check_parquet(data, arrow_table)
    return Encoded(info, [(name, data)])


def _check_parquet(data: Any, written: Any) -> None:
    """Read the Parquet file back as a reader would and refuse it unless it gives a table of
    the written schema and length: Parquet readers differ between pyarrow versions (some cannot
    read what they wrote, such as fixed-size lists with nulls in pyarrow 25), and a file is
    never written that cannot be read back. (The values themselves are what the rules of
    `_parquet_table` keep.)"""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        back = pq.read_table(pa.BufferReader(data))
        back.validate(full=True)
        metadata = dict(back.schema.metadata or {})
        extras = loads(metadata.pop(EXTRAS_KEY)) if EXTRAS_KEY in metadata else None
        if isinstance(extras, dict):
            back = _parquet_restore(back, dict(extras))
        same = back.num_rows == written.num_rows and back.schema.remove_metadata().equals(
            written.schema.remove_metadata()
        )
    except Exception as e:
        raise TypeError(f"this pyarrow cannot read back the Parquet file it writes: {e}") from e
    if not same:
        raise TypeError("Parquet would not give this table back as it is; use the arrow encoding")


# Parquet: what Arrow types come back from a Parquet file as they were written. Some come
# back as another type the written one is restored from by a cast (a unit Parquet lacks, the
# name of a list's item field); dictionaries of values other than strings and bytes come back
# as their values, so their indices are written and the dictionary kept in the extras.
_PARQUET_KEY = "parquet"


def _parquet_table(table: Any, extras: dict[str, Any] | None) -> tuple[Any, dict[str, Any] | None]:
    """The table to write as Parquet, and the extras that restore it exactly on reading;
    raises TypeError naming a column Parquet would change."""
    import pyarrow as pa

    schema = table.schema
    dictionaries: dict[int, Any] = {}
    for i, column_field in enumerate(schema):
        tp = column_field.type
        # A dictionary of strings is kept by Parquet, except in a table of no rows.
        strings = _parquet_dictionary_values(getattr(tp, "value_type", None))
        if pa.types.is_dictionary(tp) and not (strings and table.num_rows):
            _parquet_check(tp.value_type, column_field.name)
            column = table.column(i).unify_dictionaries()
            dictionary = (
                column.chunk(0).dictionary if column.num_chunks else pa.array([], tp.value_type)
            )
            dictionaries[i] = pa.table({"dictionary": dictionary})
            indices = pa.chunked_array([c.indices for c in column.chunks], tp.index_type)
            table = table.set_column(i, pa.field(column_field.name, tp.index_type), indices)
        elif pa.types.is_dictionary(tp):
            _parquet_check(tp.value_type, column_field.name)
        else:
            _parquet_check(tp, column_field.name)
    extras = dict(extras or {})
    extras[_PARQUET_KEY] = {"schema": schema.serialize().to_pybytes(), "dictionaries": dictionaries}
    return table, extras


def _parquet_dictionary_values(tp: Any) -> bool:
    import pyarrow.types as t

    return tp is not None and bool(t.is_string(tp) or t.is_large_string(tp) or t.is_binary(tp))


def _parquet_check(tp: Any, column: str) -> None:
    """Refuses an Arrow type that a Parquet file does not give back (by itself or after a
    cast to the written type)."""
    import pyarrow as pa
    import pyarrow.types as t

    if isinstance(tp, pa.ExtensionType):
        _parquet_check(tp.storage_type, column)
        return
    simple = (
        t.is_null,
        t.is_boolean,
        t.is_integer,
        t.is_floating,
        t.is_string,
        t.is_large_string,
        t.is_binary,
        t.is_large_binary,
        t.is_fixed_size_binary,
        t.is_date,
        t.is_timestamp,
        t.is_time,
        t.is_duration,
        t.is_decimal,
    )
    views = (getattr(t, "is_string_view", None), getattr(t, "is_binary_view", None))
    if any(check(tp) for check in simple) or any(check and check(tp) for check in views):
        return
    if t.is_list(tp) or t.is_large_list(tp) or t.is_fixed_size_list(tp):
        _parquet_check(tp.value_type, column)
        return
    if t.is_map(tp):
        _parquet_check(tp.key_type, column)
        _parquet_check(tp.item_type, column)
        return
    if t.is_struct(tp) and tp.num_fields > 0:
        for k in range(tp.num_fields):
            _parquet_check(tp.field(k).type, column)
        return
    raise TypeError(
        f"column {column!r} has Arrow type {tp}, which Parquet does not keep; "
        "use the arrow encoding"
    )


def _parquet_restore(table: Any, extras: dict[str, Any]) -> Any:
    """The table as it was written, from what a Parquet file gives back and the extras."""
    import pyarrow as pa

    plan = extras.pop(_PARQUET_KEY, None)
    if plan is None:
        return table  # written before Parquet entries were restored
    if not (isinstance(plan, dict) and type(plan.get("schema")) is bytes):
        raise ValueError("the Parquet extras must hold the written schema")
    schema = pa.ipc.read_schema(pa.py_buffer(plan["schema"]))
    dictionaries = plan.get("dictionaries", {})
    if len(schema) != table.num_columns or not isinstance(dictionaries, dict):
        raise ValueError("the Parquet extras do not describe this table")
    for i, values in dictionaries.items():
        if type(i) is not int or not 0 <= i < len(schema) or not isinstance(values, pa.Table):
            raise ValueError("the Parquet extras' dictionaries must map columns to tables")
        written = schema.field(i)
        if not pa.types.is_dictionary(written.type) or values.num_columns != 1:
            raise ValueError(f"column {i} of the Parquet extras is not a dictionary")
        dictionary = values.column(0).combine_chunks()
        chunks = [
            pa.DictionaryArray.from_arrays(
                chunk.cast(written.type.index_type), dictionary, ordered=written.type.ordered
            )
            for chunk in table.column(i).chunks
        ]
        table = table.set_column(i, written, pa.chunked_array(chunks, written.type))
    return table.cast(schema)


def _column_width(tp: Any) -> int:
    """The byte width of an Arrow column's values when they are fixed-width numbers (integers,
    floats, decimals, times), else 0."""
    import pyarrow.types as t

    numeric = (t.is_integer, t.is_floating, t.is_decimal, t.is_temporal)
    if not any(check(tp) for check in numeric):
        return 0
    try:
        bits = int(tp.bit_width)
    except ValueError:  # variable-width or nested
        return 0
    return bits // 8 if bits % 8 == 0 else 0


def _decode_table(info: dict[str, Any], data: Any, encoding: str) -> Any:
    import pyarrow as pa

    kind = info.get("kind")
    if type(kind) is not int or not 0 <= kind < 6:
        raise ValueError(f"unknown table kind {kind!r}")

    def read() -> Any:
        if encoding == "arrow":
            return pa.ipc.open_file(pa.py_buffer(data)).read_all()
        import pyarrow.parquet as pq

        return pq.read_table(pa.BufferReader(pa.py_buffer(data)))

    table = read()
    if _frames.register_pandas_types(table.schema):
        table = read()
    table.validate(full=True)
    metadata = dict(table.schema.metadata or {})
    extras = loads(metadata.pop(EXTRAS_KEY)) if EXTRAS_KEY in metadata else None
    table = table.replace_schema_metadata(metadata or None)
    if encoding == "parquet" and isinstance(extras, dict):
        extras = dict(extras)
        table = _parquet_restore(table, extras)
        table.validate(full=True)
    if kind == _frames.PA_BATCH:
        batches = table.combine_chunks().to_batches()
        table = batches[0] if batches else pa.RecordBatch.from_pylist([], schema=table.schema)
    return _frames.from_table(kind, extras, table)
