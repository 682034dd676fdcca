"""Tables in the codec: pandas, polars and pyarrow values round-trip exactly as ARROW items,
out of band and as zero-copy views, and what Arrow cannot hold is refused by name."""

from __future__ import annotations

import datetime as dt
import decimal
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from pandas.testing import assert_frame_equal, assert_series_equal
from polars.testing import assert_frame_equal as pl_assert_frame_equal
from polars.testing import assert_series_equal as pl_assert_series_equal

import amber

MODES = [False, True]


class MyClass:
    """Not registered: amber cannot encode it."""


def roundtrip(value: Any, identity: bool = False, **kw: Any) -> Any:
    return amber.loads(amber.dumps(value, identity=identity), **kw)


def check_pandas(value: Any, identity: bool = False) -> Any:
    got = roundtrip(value, identity)
    assert type(got) is type(value)
    if isinstance(value, pd.DataFrame):
        assert_frame_equal(got, value, check_exact=True, check_freq=True, check_flags=True)
        assert list(map(type, got.columns)) == list(map(type, value.columns))
    else:
        assert_series_equal(got, value, check_exact=True, check_freq=True, check_flags=True)
        assert got.name == value.name and type(got.name) is type(value.name)
    assert got.attrs == value.attrs
    return got


PANDAS_FRAMES: dict[str, Any] = {
    "ints and floats": pd.DataFrame({"a": [1, 2, 3], "b": [1.5, np.nan, -0.0]}),
    "int column names": pd.DataFrame({1: [1, 2], 2: [3.0, 4.0]}),
    "named columns index": pd.DataFrame({"a": [1]}).rename_axis("cols", axis=1),
    "MultiIndex rows": pd.DataFrame(
        {"v": [1, 2, 3]},
        index=pd.MultiIndex.from_tuples([(1, "x"), (1, "y"), (2, "x")], names=["n", "s"]),
    ),
    "MultiIndex columns": pd.DataFrame(
        np.arange(4).reshape(2, 2), columns=pd.MultiIndex.from_tuples([("a", "b"), ("a", "c")])
    ),
    "categoricals": pd.DataFrame(
        {
            "ordered": pd.Categorical(["a", "b", "a"], categories=["b", "a"], ordered=True),
            "ints": pd.Categorical([3, 1, 3]),
        }
    ),
    "tz-aware": pd.DataFrame(
        {
            "paris": pd.date_range("2020-03-29", periods=3, freq="h", tz="Europe/Paris"),
            "utc": pd.date_range("2020", periods=3, tz="UTC"),
        }
    ),
    "nullable": pd.DataFrame(
        {
            "Int64": pd.array([1, None, 3], dtype="Int64"),
            "UInt8": pd.array([1, None, 255], dtype="UInt8"),
            "boolean": pd.array([True, None, False], dtype="boolean"),
            "string": pd.array(["a", None, "c"], dtype="string"),
            "Float64": pd.array([1.5, None, 2.0], dtype="Float64"),
        }
    ),
    "object columns": pd.DataFrame(
        {
            "str": pd.Series(["a", None, "c"], dtype=object),
            "bytes": [b"x", b"", None],
            "decimal": [decimal.Decimal("1.5"), decimal.Decimal("-2.25"), None],
        }
    ),
    "object index": pd.DataFrame({"a": [1, 2]}, index=pd.Index(["i", "j"], dtype=object)),
    "str dtype": pd.DataFrame({"s": pd.Series(["x", None], dtype="str")}),
    "times": pd.DataFrame(
        {
            "naive": pd.to_datetime(["2020-01-01 12:00", None]),
            "seconds": pd.Series(pd.to_datetime(["2020-01-01", "1850-06-01"]).astype("M8[s]")),
            "delta": pd.to_timedelta([1.5, None], unit="s"),
        }
    ),
    "periods and intervals": pd.DataFrame(
        {"p": pd.period_range("2020-01", periods=2, freq="M"), "iv": pd.interval_range(0, 2)}
    ),
    "numpy kinds": pd.DataFrame(
        {
            "f2": np.array([1, 2], dtype="f2"),
            "f4": np.array([1, 2], dtype="f4"),
            "u8": np.array([0, 2**64 - 1], dtype="u8"),
            "i1": np.array([-128, 127], dtype="i1"),
            "bool": [True, False],
        }
    ),
    "RangeIndex": pd.DataFrame({"a": [1, 2]}, index=pd.RangeIndex(5, 9, 2, name="r")),
    "DatetimeIndex with freq": pd.DataFrame(
        {"a": [1, 2, 3]}, index=pd.date_range("2020", periods=3, freq="D", name="day")
    ),
    "TimedeltaIndex with freq": pd.DataFrame(
        {"a": [1, 2]}, index=pd.timedelta_range("1s", periods=2, freq="s")
    ),
    "empty": pd.DataFrame(),
    "no rows": pd.DataFrame({"a": pd.Series([], dtype="i8"), "b": pd.Series([], dtype="str")}),
    "None column name": pd.DataFrame({None: [1]}),
}


@pytest.mark.parametrize("identity", MODES)
@pytest.mark.parametrize("name", sorted(PANDAS_FRAMES))
def test_pandas_frames_round_trip_exactly(name: str, identity: bool) -> None:
    check_pandas(PANDAS_FRAMES[name], identity)


def test_attrs_and_flags_are_kept() -> None:
    df = pd.DataFrame({"a": [1]})
    df.attrs = {"units": {"a": "m"}, "when": dt.date(2020, 1, 1), "n": decimal.Decimal("1.0")}
    df = df.set_flags(allows_duplicate_labels=False)
    got = check_pandas(df)
    assert got.flags.allows_duplicate_labels is False
    assert type(got.attrs["n"]) is decimal.Decimal


@pytest.mark.parametrize("name", [None, "s", 5, ("a", 1), 2.5])
def test_pandas_series_keep_their_names(name: Any) -> None:
    s = pd.Series([1.5, None, 3.0], name=name, index=pd.Index(["a", "b", "c"], name="k"))
    s.attrs = {"source": "test"}
    check_pandas(s)


@pytest.mark.parametrize(
    "series",
    [
        pd.Series(pd.Categorical(["x", "y"])),
        pd.Series(pd.array([1, None], dtype="Int32")),
        pd.Series(pd.date_range("2020", periods=2, tz="Asia/Tokyo")),
        pd.Series(["a", None], dtype=object),
    ],
    ids=["categorical", "Int32", "tz", "object"],
)
def test_pandas_series_of_every_kind(series: Any) -> None:
    check_pandas(series)


POLARS_FRAMES: dict[str, Any] = {
    "basic": pl.DataFrame({"i": [1, None, 3], "f": [1.5, 2.5, None], "s": ["a", None, "c"]}),
    "categorical and enum": pl.DataFrame(
        {
            "c": pl.Series(["a", "b", "a"], dtype=pl.Categorical),
            "e": pl.Series(["x", "y", "x"], dtype=pl.Enum(["y", "x"])),
        }
    ),
    "temporal": pl.DataFrame(
        {
            "d": [dt.date(2020, 1, 1), None],
            "t": [dt.datetime(2020, 1, 1, 12), dt.datetime(1900, 1, 1)],
            "tz": pl.Series([dt.datetime(2020, 1, 1), None]).dt.replace_time_zone("Europe/Paris"),
            "dur": [dt.timedelta(seconds=1), dt.timedelta(days=-2)],
        }
    ),
    "nested": pl.DataFrame(
        {"l": [[1, 2], [], None], "st": [{"a": 1, "b": "x"}, {"a": None, "b": None}, None]}
    ),
    "decimal and binary": pl.DataFrame(
        {
            "dec": pl.Series([decimal.Decimal("1.25"), None], dtype=pl.Decimal(10, 2)),
            "bin": [b"\x00\xff", None],
        }
    ),
    "unsigned and small": pl.DataFrame(
        {"u8": pl.Series([0, 255], dtype=pl.UInt8), "i16": pl.Series([-1, 1], dtype=pl.Int16)}
    ),
    "empty": pl.DataFrame(),
}


@pytest.mark.parametrize("identity", MODES)
@pytest.mark.parametrize("name", sorted(POLARS_FRAMES))
def test_polars_frames_round_trip_exactly(name: str, identity: bool) -> None:
    df = POLARS_FRAMES[name]
    got = roundtrip(df, identity)
    assert type(got) is pl.DataFrame
    pl_assert_frame_equal(got, df, check_exact=True)
    assert got.schema == df.schema


def test_polars_series_round_trip_exactly() -> None:
    for s in [pl.Series("x", [1, 2, None]), pl.Series("", ["a"]), pl.Series("l", [[1], []])]:
        got = roundtrip(s)
        assert type(got) is pl.Series
        pl_assert_series_equal(got, s, check_exact=True)
        assert got.name == s.name and got.dtype == s.dtype


def test_pyarrow_tables_and_batches_keep_schema_and_metadata() -> None:
    schema = pa.schema(
        [
            pa.field("i", pa.int32(), nullable=False, metadata={"unit": "m"}),
            pa.field("d", pa.dictionary(pa.int8(), pa.string())),
            pa.field("l", pa.large_list(pa.float64())),
            pa.field("ts", pa.timestamp("us", tz="UTC")),
        ],
        metadata={"source": "test"},
    )
    table = pa.table(
        {
            "i": pa.array([1, 2], pa.int32()),
            "d": pa.array(["a", "b"]).dictionary_encode().cast(schema.field("d").type),
            "l": pa.array([[1.0], None], pa.large_list(pa.float64())),
            "ts": pa.array([0, None], pa.timestamp("us", tz="UTC")),
        },
        schema=schema,
    )
    got = roundtrip(table)
    assert type(got) is pa.Table and got.equals(table, check_metadata=True)
    batch = table.to_batches()[0]
    got_batch = roundtrip(batch)
    assert type(got_batch) is pa.RecordBatch and got_batch.equals(batch, check_metadata=True)
    chunked = pa.concat_tables([table, table])
    assert roundtrip(chunked).equals(chunked)


def test_tables_nest_inside_containers_and_share_in_identity_mode() -> None:
    df = pd.DataFrame({"a": [1.0, 2.0]})
    value = {"model": {"weights": df, "again": df}, "rows": [pl.DataFrame({"x": [1]})]}
    got = roundtrip(value, identity=True)
    assert got["model"]["weights"] is got["model"]["again"]
    assert_frame_equal(got["model"]["weights"], df)
    plain = roundtrip(value)
    assert plain["model"]["weights"] is not plain["model"]["again"]


def test_large_tables_go_out_of_band_and_come_back_as_views() -> None:
    df = pd.DataFrame({"x": np.arange(100_000, dtype="f8"), "y": np.arange(100_000)})
    buffers: list[pickle.PickleBuffer] = []
    data = amber.dumps({"df": df}, buffer_callback=buffers.append)
    assert len(buffers) == 1 and len(data) < 1000
    raw = bytearray(buffers[0].raw())
    got = amber.loads(data, buffers=[raw])["df"]
    assert_frame_equal(got, df)
    column = got["x"].to_numpy()
    assert np.shares_memory(column, np.frombuffer(raw, dtype="u1"))
    with pytest.raises(amber.DecodeError) as ei:
        amber.loads(data)
    assert ei.value.kind == "buffer"


def test_zero_copy_columns_lie_inside_the_input() -> None:
    df = pd.DataFrame({"x": np.arange(10_000, dtype="f8")})
    data = bytearray(amber.dumps(df))
    view = amber.loads(data, zero_copy=True)
    copy = amber.loads(data)
    assert_frame_equal(view, df) and assert_frame_equal(copy, df)  # type: ignore[func-returns-value]
    whole = np.frombuffer(data, dtype="u1")
    assert np.shares_memory(view["x"].to_numpy(), whole)
    assert not np.shares_memory(copy["x"].to_numpy(), whole)
    # The copy does not change when the input does.
    data[-8:] = bytes(8)
    assert copy["x"].iloc[-1] == 9999.0


@pytest.mark.parametrize(
    ("value", "why"),
    [
        (pd.DataFrame({"c": [1 + 2j]}), "column 'c' has dtype complex128"),
        (pd.DataFrame({"sp": pd.arrays.SparseArray([0.0, 1.0])}), "column 'sp' has dtype Sparse"),
        (pd.DataFrame({"o": [1, MyClass()]}), "column 'o', row 1"),
        (
            pl.DataFrame({"o": pl.Series([{"a": 1}], dtype=pl.Object)}),
            "column 'o' has dtype Object",
        ),
    ],
    ids=["complex", "sparse", "unencodable cell", "polars Object"],
)
def test_what_arrow_cannot_hold_is_unsupported(value: Any, why: str) -> None:
    with pytest.raises(amber.EncodeError) as ei:
        amber.dumps({"df": value})
    err = ei.value
    assert err.kind == "unsupported" and err.path == "$.df" and why in str(err), err
    assert err.__cause__ is not None


def test_mixed_object_columns_and_duplicate_labels_come_back_exactly() -> None:
    cells = [pd.Series(c, dtype=object) for c in ([1, 2.5], ["a", None], [(1, 2), [3]])]
    df = pd.concat(cells, axis=1).set_axis(["a", "a", "b"], axis=1)
    got = check_pandas(df)
    assert [type(v) for v in got.iloc[:, 0]] == [int, float]
    assert type(got.iloc[0, 2]) is tuple and type(got.iloc[1, 2]) is list


def test_subclasses_of_frames_are_not_tables() -> None:
    class MyFrame(pd.DataFrame):
        pass

    with pytest.raises(amber.EncodeError) as ei:
        amber.dumps(MyFrame({"a": [1]}))
    assert ei.value.kind == "unsupported"


def test_every_truncation_and_bit_flip_of_a_table_frame_is_handled() -> None:
    data = amber.dumps(
        {"df": pd.DataFrame({"a": [1, 2], "s": ["x", "yy"]}), "t": pa.table({"b": [1.5]})}
    )
    for n in range(len(data)):
        with pytest.raises(amber.DecodeError):
            amber.loads(data[:n])
    for i in range(8, len(data)):
        for bit in (0, 3, 7):
            bad = bytearray(data)
            bad[i] ^= 1 << bit
            try:
                amber.loads(bytes(bad))
            except amber.DecodeError as e:
                assert e.kind is not None
            except (MemoryError, RecursionError):  # pragma: no cover - not expected
                raise


def test_pyarrow_is_not_imported_until_a_table_is_met() -> None:
    code = (
        "import sys, amber\n"
        "amber.loads(amber.dumps({'a': [1, 2.5, 'x']}))\n"
        "assert 'pyarrow' not in sys.modules and 'pandas' not in sys.modules\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok"


def test_arrow_item_layout_matches_the_spec() -> None:
    """§6.14: tag, kind, extras, flags, then the stream as NDARRAY's data part."""
    table = pa.table({"x": [1]})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    stream = sink.getvalue().to_pybytes()
    n = len(stream)
    assert n < 2**14
    length = bytes([n & 0x7F | 0x80, n >> 7]) if n >= 0x80 else bytes([n])
    head = b"\xd8\x00\xa8\x00" + length
    pad = (8 - (8 + len(head) + 1) % 8) % 8
    body = head + bytes([pad]) + bytes(pad) + stream
    assert amber.dumps(table) == b"\xab\x01\x00\x00" + len(body).to_bytes(4, "little") + body
    series = amber.dumps(pd.Series([1.5], name=7))
    # kind 3, extras {"name": 7, "index": ["range", 0, 1, 1]}
    assert series[8:10] == b"\xd8\x03"
    assert series[10:].startswith(b"\x72\xb3\x04name\x07\xb3\x05index\x64\x45range\x00\x01\x01")
    buffers: list[pickle.PickleBuffer] = []
    oob = amber.dumps(table, buffer_callback=buffers.append, oob_threshold=1)
    assert oob[8:] == b"\xd8\x00\xa8\x02\x00" and bytes(buffers[0].raw()) == stream


def _arrow_flags(value: Any) -> tuple[bytes, int]:
    """A frame of `value` (a table) with its stream out of band, which then ends with the
    ARROW item's flags and buffer index 0; and the offset of those flags."""
    frame = amber.dumps(value, buffer_callback=lambda b: None, oob_threshold=1)
    assert frame[-1] == 0 and frame[-2] & 0x02
    return frame, len(frame) - 2


@pytest.mark.parametrize(
    ("value", "flags"),
    [
        (pd.DataFrame({"x": [1.5]}), 0x04),
        (pd.Series(["a"], index=[3]), 0x04),
        (pa.table({"x": [1]}), 0x00),
        (pa.record_batch({"x": [1]}), 0x00),
        (pl.DataFrame({"x": [1]}), 0x00),
        (pl.Series("s", [1]), 0x00),
    ],
)
def test_pandas_tables_described_by_their_extras_are_flagged(value: Any, flags: int) -> None:
    """A pandas table is written by §6.14's rules, which an amber that predates them would
    misread: flag 0x04 says so, and such an amber refuses the flag. Other kinds do not set it,
    and a decoder refuses it on them."""
    frame, at = _arrow_flags(value)
    assert frame[at] == 0x02 | flags
    if flags:
        return
    bad = bytearray(frame)
    bad[at] |= 0x04
    with pytest.raises(amber.DecodeError, match="reserved") as e:
        amber.loads(bytes(bad), buffers=[b""])
    assert e.value.kind == "unsupported" and e.value.offset == at


def test_hand_made_tables_are_checked() -> None:
    def frame(body: bytes) -> bytes:
        return b"\xab\x01\x00\x00" + len(body).to_bytes(4, "little") + body

    for body, kind in [
        (b"\xd8\x06\xa8\x00\x00\x07" + bytes(7), "unsupported"),  # reserved table kind
        (b"\xd8\x00\xa8\x04\x00\x07" + bytes(7), "unsupported"),  # reserved flag
        (b"\xd8\x00\xa8\x00\x04\x07" + bytes(7) + b"junk", "malformed"),  # not a stream
        (b"\xd8\x00\xa8\x02\x00", "buffer"),  # out of band, no buffers
    ]:
        with pytest.raises(amber.DecodeError) as ei:
            amber.loads(frame(body))
        assert ei.value.kind == kind, (body, ei.value)


@pytest.mark.parametrize(
    "frame",
    [
        pd.DataFrame({"f": [1.5, np.nan, 3.0], "i": [1, 2, 3], "b": [True, False, True]}),
        pd.DataFrame({"f": np.arange(4.0, dtype="float32"), "u": np.arange(4, dtype="uint8")}),
        pd.DataFrame({5: np.arange(4.0), 7: np.arange(4, dtype="int32")}),
        pd.DataFrame({"f": [np.nan] * 3}, index=pd.RangeIndex(10, 16, 2, name="r")),
        pd.DataFrame({"x": [1.0, 2.0]}, index=pd.Index([0.5, np.nan], name="fi")),
        pd.DataFrame({"x": np.ones((3,), "float16"), "y": np.zeros(3, "int16")}),
        pd.DataFrame({"a": np.arange(6.0), "b": np.arange(6)}).iloc[::2],
        pd.DataFrame(np.arange(12.0).reshape(3, 4), columns=list("abcd")),
        pd.DataFrame({"e": np.array([], "float64")}),
        pd.DataFrame(index=pd.RangeIndex(3)),
    ],
)
def test_number_frames_make_the_table_pyarrow_makes_without_nulls(frame: Any) -> None:
    """A frame of NumPy numbers is the table `Table.from_pandas` makes (values, types, pandas
    metadata for other tools), except that NaN stays a float value, never a null, and a
    RangeIndex is metadata only."""
    from amber import _frames

    _, got = _frames.to_table(frame, _frames.PD_FRAME)
    want = pa.Table.from_pandas(frame, preserve_index=None)
    assert got.num_rows == want.num_rows or not got.num_columns  # no columns, no rows
    assert [f.type for f in got.schema] == [f.type for f in want.schema]
    assert all(c.null_count == 0 for c in got.columns)
    for g, w in zip(got.columns, want.columns, strict=True):
        assert np.array_equal(g.to_numpy(), w.to_numpy(), equal_nan=True)
    meta = got.schema.pandas_metadata
    assert meta["index_columns"] == want.schema.pandas_metadata["index_columns"]
    back = amber.loads(amber.dumps(frame))
    assert_frame_equal(back, frame, check_exact=True, check_index_type=True, check_column_type=True)


def test_column_labels_of_mixed_types_come_back_as_they_were() -> None:
    frame = pd.DataFrame({"a": [1.0], 7: [2], (1, "t"): ["x"], None: [True]})
    back = amber.loads(amber.dumps(frame))
    assert list(back.columns) == ["a", 7, (1, "t"), None]
    assert_frame_equal(back, frame)


class _Meters(pa.ExtensionType):
    """A user's Arrow extension type (int64 storage), registered only inside the test."""

    def __init__(self) -> None:
        super().__init__(pa.int64(), "amber.test.meters")

    def __arrow_ext_serialize__(self) -> bytes:
        return b""

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type: Any, serialized: bytes) -> _Meters:
        return cls()


def test_extension_types_come_back_where_registered_and_are_refused_elsewhere(
    tmp_path: Path,
) -> None:
    """A column, a struct's field or a list's items of a user's extension type come back as that
    type where it is registered; where it is not, pyarrow would read the storage type, so the
    read is refused (kind `refused`), in the codec and the archive alike."""
    pa.register_extension_type(_Meters())
    try:
        ext = pa.ExtensionArray.from_storage(_Meters(), pa.array([1, 2, None]))
        tables = {
            "column": pa.table({"m": ext}),
            "struct field": pa.table({"s": pa.StructArray.from_arrays([ext], names=["in"])}),
            "list items": pa.table({"l": pa.ListArray.from_arrays(pa.array([0, 2, 3]), ext)}),
        }
        frames = {name: amber.dumps(t) for name, t in tables.items()}
        path = tmp_path / "ext.zip"
        with amber.Archive(path, "w") as a:
            for name, t in tables.items():
                a[name] = t
        for name, t in tables.items():
            assert amber.loads(frames[name]).equals(t)
            with amber.Archive(path) as a:
                assert a[name].equals(t)
    finally:
        pa.unregister_extension_type("amber.test.meters")
    for name in tables:
        with pytest.raises(amber.DecodeError, match=r"amber\.test\.meters") as d:
            amber.loads(frames[name])
        assert d.value.kind == "refused"
        with (
            amber.Archive(path) as a,
            pytest.raises(amber.ArchiveError, match="not registered") as e,
        ):
            a[name]
        assert e.value.kind == "refused" and e.value.entry == f"{name}.arrow"


def test_pandas_extension_columns_read_in_a_fresh_process(tmp_path: Path) -> None:
    """pandas registers its Arrow extension types (periods, intervals) only once it has
    converted such a column itself: a process that has not must still read them back exactly."""
    import subprocess
    import sys
    import textwrap

    df = pd.DataFrame(
        {"p": pd.period_range("2020-01", periods=3, freq="M"), "i": pd.interval_range(0, 3)}
    )
    (tmp_path / "f.amb").write_bytes(amber.dumps(df))
    with amber.Archive(tmp_path / "f.zip", "w") as a:
        a["df"] = df
    pd.to_pickle(df, tmp_path / "want.pkl")
    code = f"""
        import amber, pandas as pd
        want = pd.read_pickle({str(tmp_path / "want.pkl")!r})
        got = [amber.loads(open({str(tmp_path / "f.amb")!r}, "rb").read())]
        got.append(amber.Archive({str(tmp_path / "f.zip")!r})["df"])
        for g in got:
            pd.testing.assert_frame_equal(g, want, check_exact=True, check_index_type=True)
        print("ok")
    """
    r = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120
    )
    assert r.stdout.strip() == "ok", r.stderr


@pytest.mark.parametrize("path", ["codec", "archive"])
def test_an_object_index_of_times_stays_an_object_index(path: str, tmp_path: Path) -> None:
    """pandas 2 infers a DatetimeIndex from an `object` index of None and zoned timestamps
    unless told the dtype; it stays `object`, every label its own type."""
    import zoneinfo

    tokyo = zoneinfo.ZoneInfo("Asia/Tokyo")
    index = pd.Index([None, pd.Timestamp("2020-01-02 03:00", tz=tokyo)], dtype=object)
    s = pd.Series([1.5, 2.5], index=index)
    if path == "codec":
        back = amber.loads(amber.dumps(s))
    else:
        with amber.Archive(tmp_path / "a.zip", "w") as a:
            a["s"] = s
        with amber.Archive(tmp_path / "a.zip") as a:
            back = a["s"]
    assert type(back.index) is pd.Index and back.index.dtype == object
    assert [type(v) for v in back.index] == [type(None), pd.Timestamp]
    assert back.index[1] == s.index[1] and back.index[1].tzinfo == tokyo
