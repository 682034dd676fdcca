"""A generated matrix of tables, through the codec and the archive: every pandas, polars and
pyarrow value comes back exactly (dtypes, values and NaN bits, index and label types and names,
per-cell types of object columns, attrs and flags) or is refused at write with EncodeError
naming what; never written and then unreadable or changed."""

from __future__ import annotations

import datetime as dt
import decimal
import fractions
import os
import struct
import tempfile
import zoneinfo
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import amber
from tests.support.exact import assert_exact

SETTINGS = settings(
    max_examples=int(os.environ.get("AMBER_FRAME_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# --- the ways a table travels ------------------------------------------------------------------


def _archive(value: Any, **put: Any) -> Any:  # put: encoding, compression
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "t.amber.zip")
        with amber.Archive(path, "w", compression=put.pop("compression", "stored")) as a:
            a.put("t", value, **put)
        with amber.Archive(path) as a:
            return a["t"]


PATHS: dict[str, Callable[[Any], Any]] = {
    "codec": lambda v: amber.loads(amber.dumps(v)),
    "codec deterministic": lambda v: amber.loads(amber.dumps(v, deterministic=True)),
    "codec out of band": lambda v: _out_of_band(v),
    "archive arrow": lambda v: _archive(v),
    "archive arrow zstd": lambda v: _archive(v, compression="zstd"),
    "archive parquet": lambda v: _archive(v, encoding="parquet"),
    "archive parquet zstd": lambda v: _archive(v, encoding="parquet", compression="zstd"),
}


REFUSED = object()


def through(path: str, value: Any) -> Any:
    """`value` through `path`, or REFUSED when the write refused it as it should: a Parquet
    file this pyarrow cannot read back (pyarrow 25 cannot read fixed-size lists with nulls)."""
    try:
        return PATHS[path](value)
    except amber.EncodeError as e:
        if path.startswith("archive parquet") and "cannot read back the Parquet" in str(e):
            return REFUSED
        raise


# Frames are checked against pandas 3, whose behaviour the rules of format spec §6.14 follow.
# pandas 2 (the newest on CPython 3.10) makes the generator's zoned timestamps with pytz, which
# amber refuses in `object` cells (the guide says so), where this matrix expects a round trip.
PANDAS_3 = pytest.mark.skipif(
    int(pd.__version__.split(".")[0]) < 3, reason="exact frames are checked on pandas 3"
)


def _out_of_band(value: Any) -> Any:
    buffers: list[Any] = []
    data = amber.dumps(value, buffer_callback=buffers.append, oob_threshold=0)
    return amber.loads(data, buffers=[b.raw() for b in buffers], zero_copy=True)


# --- exact comparison --------------------------------------------------------------------------


def _bits(values: Any) -> bytes:
    arr = np.asarray(values)
    return arr.view(f"u{arr.dtype.itemsize}").tobytes()


def assert_cell(got: Any, want: Any, where: str) -> None:
    assert type(got) is type(want), f"{where}: {type(got).__name__} != {type(want).__name__}"
    if want is pd.NA or want is pd.NaT:
        assert got is want, where
    elif isinstance(want, (pd.Timestamp, pd.Timedelta)):
        assert repr(got) == repr(want) and got.unit == want.unit, f"{where}: {got!r} != {want!r}"
        if isinstance(want, pd.Timestamp):
            assert type(got.tz) is type(want.tz) and got.tz == want.tz, where
    elif isinstance(want, pd.Interval):
        assert got.closed == want.closed, where
        assert_cell(got.left, want.left, where + ".left")
        assert_cell(got.right, want.right, where + ".right")
    elif isinstance(want, pd.Period):
        assert repr(got) == repr(want), where
    elif isinstance(want, float):
        assert struct.pack("<d", got) == struct.pack("<d", want), f"{where}: {got!r} {want!r}"
    else:
        assert_exact(got, want, where)


def assert_index(got: Any, want: Any, where: str) -> None:
    assert type(got) is type(want), f"{where}: {type(got).__name__} != {type(want).__name__}"
    assert str(got.dtype) == str(want.dtype), f"{where}: dtype {got.dtype} != {want.dtype}"
    assert len(got.names) == len(want.names), where
    for g, w in zip(got.names, want.names, strict=True):
        assert type(g) is type(w) and g == w, f"{where}: name {g!r} != {w!r}"
    if isinstance(want, pd.RangeIndex):
        assert (got.start, got.stop, got.step) == (want.start, want.stop, want.step), where
    elif isinstance(want, pd.MultiIndex):
        assert len(got.levels) == len(want.levels), where
        for k, (g, w) in enumerate(zip(got.levels, want.levels, strict=True)):
            assert_index(g.rename(None), w.rename(None), f"{where}.levels[{k}]")
        for g, w in zip(got.codes, want.codes, strict=True):
            assert np.array_equal(g, w), f"{where}: codes"
        # By position: get_level_values(1) would find a level named True (True == 1).
        got_levels = got.to_frame(index=False, allow_duplicates=True)
        want_levels = want.to_frame(index=False, allow_duplicates=True)
        for k in range(want.nlevels):
            g, w = pd.Index(got_levels.iloc[:, k]), pd.Index(want_levels.iloc[:, k])
            assert_index(g.rename(None), w.rename(None), f"{where}[{k}]")
    elif isinstance(want.dtype, np.dtype) and want.dtype.kind == "f":
        assert _bits(got) == _bits(want), f"{where}: float bits"
    elif isinstance(want.dtype, np.dtype) and want.dtype.kind == "O":
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            assert_cell(g, w, f"{where}[{i}]")
    if isinstance(want, (pd.DatetimeIndex, pd.TimedeltaIndex)):
        assert got.freq == want.freq, f"{where}: freq"
    pd.testing.assert_index_equal(got, want, exact=True, check_exact=True, obj=where)


def assert_column(got: Any, want: Any, where: str) -> None:
    assert str(got.dtype) == str(want.dtype), f"{where}: dtype {got.dtype} != {want.dtype}"
    assert got.dtype == want.dtype, where
    if isinstance(want.dtype, np.dtype) and want.dtype.kind == "f":
        assert _bits(got.to_numpy()) == _bits(want.to_numpy()), f"{where}: float bits"
    if isinstance(want.dtype, np.dtype) and want.dtype.kind == "O":
        for i, (g, w) in enumerate(zip(got.tolist(), want.tolist(), strict=True)):
            assert_cell(g, w, f"{where}[{i}]")


def assert_same_pandas(got: Any, want: Any) -> None:
    assert type(got) is type(want)
    assert_index(got.index, want.index, "index")
    assert got.attrs.keys() == want.attrs.keys()
    assert amber.dumps(got.attrs, deterministic=True) == amber.dumps(want.attrs, deterministic=True)
    assert got.flags.allows_duplicate_labels == want.flags.allows_duplicate_labels
    if isinstance(want, pd.Series):
        assert type(got.name) is type(want.name) and got.name == want.name
        assert_column(got, want, "series")
        pd.testing.assert_series_equal(
            got,
            want,
            check_exact=True,
            check_index_type=True,
            check_series_type=True,
            check_names=True,
            check_freq=True,
            check_flags=True,
            check_category_order=True,
        )
        return
    assert_index(got.columns, want.columns, "columns")
    for i in range(want.shape[1]):
        assert_column(got.iloc[:, i], want.iloc[:, i], f"column {i}")
    pd.testing.assert_frame_equal(
        got,
        want,
        check_exact=True,
        check_index_type=True,
        check_column_type=True,
        check_frame_type=True,
        check_names=True,
        check_freq=True,
        check_flags=True,
        check_like=False,
    )


# --- pandas values -----------------------------------------------------------------------------

NAN_BITS_64 = [
    0x7FF8000000000000,  # NaN
    0xFFF8000000000000,  # -NaN
    0x7FF8000000000001,  # NaN with a payload
    0x7FF0000000000001,  # signalling NaN
    0x8000000000000000,  # -0.0
    0x7FF0000000000000,  # inf
    0x3FF8000000000000,  # 1.5
]
NAN_BITS_32 = [0x7FC00000, 0xFFC00000, 0x7FC00001, 0x80000000, 0x3FC00000]
NAN_BITS_16 = [0x7E00, 0xFE00, 0x7E01, 0x8000, 0x3E00]

TOKYO = zoneinfo.ZoneInfo("Asia/Tokyo")
CELLS = [
    None,
    pd.NA,
    pd.NaT,
    float("nan"),
    -float("nan"),
    -0.0,
    1.5,
    1,
    True,
    2**70,
    "s",
    "",
    "\ud800 lone surrogate",
    b"x",
    (1, "a"),
    [1, [2.5]],
    {"a": 1},
    {1: "b", (2, 3): None},
    frozenset({1, 2}),
    decimal.Decimal("1E+2"),
    decimal.Decimal("1.10"),
    decimal.Decimal("-0"),
    fractions.Fraction(1, 3),
    complex(1, -2),
    dt.date(2020, 1, 2),
    dt.datetime(2020, 1, 2, 3, tzinfo=TOKYO),
    pd.Timestamp("2024-01-01", tz="UTC"),
    pd.Timestamp("2024-01-01", tz="Asia/Tokyo"),
    pd.Timestamp("2024-01-01 00:00:00.000000001"),
    pd.Timedelta(1, "ns"),
    pd.Period("2020Q1"),
    pd.Interval(1, 2),
    pd.Interval(0.5, 1.5, closed="both"),
    pd.Interval(pd.Timestamp("2020"), pd.Timestamp("2021")),
    np.int32(5),
    np.float32(1.5),
    np.datetime64("2020-01-01", "D"),
]


def _floats(draw: Any, n: int, dtype: str) -> Any:
    bits, width = {"f2": (NAN_BITS_16, 2), "f4": (NAN_BITS_32, 4), "f8": (NAN_BITS_64, 8)}[dtype]
    raw = draw(st.lists(st.sampled_from(bits), min_size=n, max_size=n))
    return np.array(raw, dtype=f"u{width}").view(dtype)


@st.composite
def pandas_columns(draw: Any, n: int) -> Any:
    what = draw(
        st.sampled_from(
            [
                "int",
                "float",
                "bool",
                "datetime",
                "timedelta",
                "tz",
                "masked",
                "string",
                "categorical",
                "period",
                "interval",
                "arrow",
                "object str",
                "object",
            ]
        )
    )
    nulls = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    if what == "int":
        dtype = np.dtype(draw(st.sampled_from(["i1", "i8", "u2", "u8"])))
        info = np.iinfo(dtype)
        ints = st.integers(int(info.min), int(info.max))
        return pd.Series(np.array(draw(st.lists(ints, min_size=n, max_size=n)), dtype=dtype))
    if what == "float":
        return pd.Series(_floats(draw, n, draw(st.sampled_from(["f2", "f4", "f8"]))))
    if what == "bool":
        return pd.Series(np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), "?"))
    if what in ("datetime", "timedelta"):
        unit = draw(st.sampled_from(["s", "ms", "us", "ns"]))
        kind = "M8" if what == "datetime" else "m8"
        values = np.arange(n, dtype="i8") * 86_400 + draw(st.integers(-(10**9), 10**9))
        arr = values.astype(f"{kind}[s]").astype(f"{kind}[{unit}]")
        arr[np.array(nulls, dtype=bool)] = (
            np.datetime64("NaT") if kind == "M8" else np.timedelta64("NaT")
        )
        return pd.Series(arr)
    if what == "tz":
        tz = draw(st.sampled_from(["UTC", "Europe/Paris", TOKYO]))
        values = pd.date_range("2020-03-28", periods=n, freq="7h", tz=tz)
        return pd.Series(values).where(~pd.Series(nulls, dtype=bool))
    if what == "masked":
        dtype = draw(st.sampled_from(["Int64", "UInt8", "Float32", "boolean"]))
        values = [
            None if null else (i % 2 == 0 if dtype == "boolean" else i)
            for i, null in enumerate(nulls)
        ]
        return pd.Series(pd.array(values, dtype=dtype))
    if what == "string":
        dtype = draw(
            st.sampled_from(
                [
                    pd.StringDtype("python"),
                    pd.StringDtype("pyarrow"),
                    pd.StringDtype("python", na_value=np.nan),
                    pd.StringDtype("pyarrow", na_value=np.nan),
                ]
            )
        )
        return pd.Series([None if null else f"s{i}" for i, null in enumerate(nulls)], dtype=dtype)
    if what == "categorical":
        categories = draw(
            st.sampled_from(
                [
                    pd.Index(["b", "a", "c"]),
                    pd.Index(["b", "a", "c"], dtype=object),
                    pd.Index([3, 1, 2]),
                    pd.Index([0.5, -1.5, 2.0]),
                    pd.to_datetime(["2020", "2021", "2019"]),
                ]
            )
        )
        codes = [-1 if null else i % 3 for i, null in enumerate(nulls)]
        ordered = draw(st.booleans())
        return pd.Series(pd.Categorical.from_codes(codes, categories=categories, ordered=ordered))
    if what == "period":
        freq = draw(st.sampled_from(["D", "M", "Y", "h", "2D", "W-SUN", "Q-MAR"]))
        return pd.Series(pd.period_range("2020", periods=n, freq=freq)).where(
            ~pd.Series(nulls, dtype=bool)
        )
    if what == "interval":
        closed = draw(st.sampled_from(["left", "right", "both", "neither"]))
        breaks = draw(
            st.sampled_from(
                [np.arange(n + 1), np.arange(n + 1) * 0.5, pd.date_range("2020", periods=n + 1)]
            )
        )
        return pd.Series(pd.arrays.IntervalArray.from_breaks(breaks, closed=closed))
    if what == "arrow":
        tp, make = draw(
            st.sampled_from(
                [
                    (pa.int64(), lambda i: i),
                    (pa.string(), lambda i: f"a{i}"),
                    (pa.large_string(), lambda i: f"a{i}"),
                    (pa.list_(pa.int64()), lambda i: list(range(i))),
                    (
                        pa.struct([("a", pa.int64()), ("b", pa.string())]),
                        lambda i: {"a": i, "b": "x"},
                    ),
                    (pa.decimal128(10, 3), lambda i: decimal.Decimal(i) / 8),
                    (pa.timestamp("s", tz="UTC"), lambda i: i),
                    (pa.float64(), lambda i: -float("nan") if i % 2 else 1.5),
                    (pa.binary(), lambda i: bytes([i])),
                    (pa.date32(), lambda i: i),
                    (pa.bool_(), lambda i: i % 2 == 0),
                ]
            )
        )
        values = pa.array([None if null else make(i) for i, null in enumerate(nulls)], tp)
        return pd.Series(pd.arrays.ArrowExtensionArray(values))
    if what == "object str":
        missing = draw(st.sampled_from([None, np.nan]))
        values = [missing if null else f"o{i}" for i, null in enumerate(nulls)]
        return pd.Series(_object_array(values), dtype=object)
    cells = draw(st.lists(st.sampled_from(CELLS), min_size=n, max_size=n))
    return pd.Series(_object_array(cells), dtype=object)


def _object_array(values: list[Any]) -> Any:
    arr = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        arr[i] = v
    return arr


NAMES = st.sampled_from([None, "n", "", 7, 1.5, ("x", 1), True])


@st.composite
def labels(draw: Any, count: int) -> Any:
    what = draw(
        st.sampled_from(
            [
                "str",
                "str object",
                "int",
                "bool",
                "tuple",
                "mixed",
                "categorical",
                "multi",
                "range",
                "float",
                "duplicate str",
                "datetime",
                "interval",
                "index prefix",
            ]
        )
    )
    if what == "str":
        index = pd.Index([f"c{i}" for i in range(count)])
    elif what == "str object":
        index = pd.Index([f"c{i}" for i in range(count)], dtype=object)
    elif what == "int":
        index = pd.Index(list(range(10, 10 + count)))
    elif what == "bool" and count <= 2:
        index = pd.Index([True, False][:count])
    elif what == "tuple":
        index = pd.Index([("a", i) for i in range(count)], tupleize_cols=False)
    elif what == "mixed":
        pool = ["a", 7, None, ("t", 1), 2.5, True, b"b"]
        index = pd.Index(_object_array(pool[:count]), dtype=object)
    elif what == "categorical":
        index = pd.CategoricalIndex([f"k{i}" for i in range(count)], ordered=draw(st.booleans()))
    elif what == "multi":
        index = pd.MultiIndex.from_arrays([["a"] * count, list(range(count))])
        index = index.set_names([draw(NAMES), draw(NAMES)])
        return index
    elif what == "range":
        start, step = draw(st.integers(-5, 5)), draw(st.sampled_from([1, 2, -3]))
        index = pd.RangeIndex(start, start + step * count, step)
    elif what == "float":
        index = pd.Index(_floats(draw, count, "f8"))
    elif what == "duplicate str":
        index = pd.Index(["d"] * count)
    elif what == "datetime":
        index = pd.date_range("2020", periods=count, freq="D")
    elif what == "interval":
        index = pd.interval_range(0, count)
    elif what == "index prefix":
        index = pd.Index([f"__index_level_{i}__" for i in range(count)])
    else:
        index = pd.Index([f"c{i}" for i in range(count)])
    return index.rename(draw(NAMES))


@st.composite
def row_indexes(draw: Any, n: int) -> Any:
    what = draw(
        st.sampled_from(
            [
                "range",
                "int",
                "uint8",
                "str",
                "object",
                "object mixed",
                "float",
                "bool",
                "datetime freq",
                "datetime tz",
                "timedelta",
                "period",
                "interval",
                "categorical",
                "multi",
                "str dtype",
            ]
        )
    )
    if what == "range":
        start, step = draw(st.integers(-5, 5)), draw(st.sampled_from([1, 2, -3]))
        index: Any = pd.RangeIndex(start, start + step * n, step)
    elif what == "int":
        index = pd.Index(np.arange(n, dtype="i8") * 3)
    elif what == "uint8":
        index = pd.Index(np.arange(n, dtype="u1"))
    elif what in ("str", "str dtype"):
        index = pd.Index([f"r{i}" for i in range(n)])
    elif what == "object":
        index = pd.Index([f"r{i}" for i in range(n)], dtype=object)
    elif what == "object mixed":
        index = pd.Index(
            _object_array(draw(st.lists(st.sampled_from(CELLS), min_size=n, max_size=n))),
            dtype=object,
        )
    elif what == "float":
        index = pd.Index(_floats(draw, n, "f8"))
    elif what == "bool":
        index = pd.Index(np.array([i % 2 == 0 for i in range(n)], "?"))
    elif what == "datetime freq":
        index = pd.date_range("2020", periods=n, freq=draw(st.sampled_from(["D", "h", "2min"])))
    elif what == "datetime tz":
        index = pd.DatetimeIndex(pd.date_range("2020", periods=n, tz="Europe/Paris"), freq=None)
    elif what == "timedelta":
        index = pd.timedelta_range("1s", periods=n, freq="s")
    elif what == "period":
        index = pd.period_range("2024", periods=n, freq="Y")
    elif what == "interval":
        index = pd.interval_range(0, n, closed="left")
    elif what == "categorical":
        index = pd.CategoricalIndex([f"k{i % 2}" for i in range(n)], categories=["k1", "k0", "k9"])
    else:
        index = pd.MultiIndex.from_arrays([[i % 2 for i in range(n)], [f"m{i}" for i in range(n)]])
        if draw(st.booleans()):  # levels in another order, with values no row uses
            levels = [pd.Index([1, 0, 7]), pd.Index([f"m{i}" for i in range(n, -2, -1)])]
            codes = [[[1, 0][i % 2] for i in range(n)], [n - i for i in range(n)]]
            index = pd.MultiIndex(levels=levels, codes=codes)
        return index.set_names([draw(NAMES), draw(NAMES)])
    return index.rename(draw(NAMES))


ATTRS = st.sampled_from(
    [{}, {"units": "m", "k": [1, 2.5]}, {"d": decimal.Decimal("1.10"), 7: None}]
)


@st.composite
def pandas_frames(draw: Any) -> Any:
    n = draw(st.integers(0, 4))
    count = draw(st.integers(0, 3))
    columns = [draw(pandas_columns(n)) for _ in range(count)]
    index = draw(row_indexes(n))
    df = pd.DataFrame({i: c for i, c in enumerate(columns)}, index=pd.RangeIndex(n))
    df.index = index
    df.columns = draw(labels(count))
    df.attrs = draw(ATTRS)
    try:
        unique = df.columns.is_unique and df.index.is_unique
    except TypeError:  # unhashable labels (list cells)
        unique = False
    if draw(st.booleans()) and unique:
        df = df.set_flags(allows_duplicate_labels=False)
    return df


@st.composite
def pandas_series(draw: Any) -> Any:
    n = draw(st.integers(0, 4))
    s = draw(pandas_columns(n))
    s.index = draw(row_indexes(n))
    s.name = draw(NAMES)
    s.attrs = draw(ATTRS)
    try:
        unique = s.index.is_unique
    except TypeError:  # unhashable labels (list cells)
        unique = False
    if draw(st.booleans()) and unique:
        s = s.set_flags(allows_duplicate_labels=False)
    return s


@PANDAS_3
@SETTINGS
@given(pandas_frames(), st.sampled_from(sorted(PATHS)))
def test_pandas_frames_come_back_exactly(df: Any, path: str) -> None:
    back = through(path, df)
    if back is not REFUSED:
        assert_same_pandas(back, df)


@PANDAS_3
@SETTINGS
@given(pandas_series(), st.sampled_from(sorted(PATHS)))
def test_pandas_series_come_back_exactly(s: Any, path: str) -> None:
    back = through(path, s)
    if back is not REFUSED:
        assert_same_pandas(back, s)


# --- polars values -----------------------------------------------------------------------------

POLARS_DTYPES: list[tuple[Any, Callable[[int], Any]]] = [
    (pl.Int8, lambda i: i - 2),
    (pl.UInt64, lambda i: 2**64 - 1 - i),
    (pl.Int64, lambda i: -(2**63) + i),
    (pl.Float32, lambda i: [1.5, -0.0, float("inf")][i % 3]),
    (pl.Float64, lambda i: [-0.0, 2.5, float("-inf")][i % 3]),
    (pl.Boolean, lambda i: i % 2 == 0),
    (pl.String, lambda i: f"é{i}"),
    (pl.Binary, lambda i: bytes([i, 0])),
    (pl.Date, lambda i: dt.date(2020, 1, 1 + i)),
    (pl.Datetime("ms"), lambda i: dt.datetime(2020, 1, 1, i)),
    (
        pl.Datetime("ns", "Europe/Paris"),
        lambda i: dt.datetime(2020, 3, 29, i, tzinfo=dt.timezone.utc),
    ),
    (pl.Duration("us"), lambda i: dt.timedelta(seconds=i)),
    (pl.Time, lambda i: dt.time(i)),
    (pl.Decimal(10, 2), lambda i: decimal.Decimal(i) / 4),
    (pl.Categorical, lambda i: f"c{i % 2}"),
    (pl.Enum(["z", "y", "x"]), lambda i: ["x", "y"][i % 2]),
    (pl.List(pl.Int16), lambda i: list(range(i))),
    (pl.Array(pl.Int32, 2), lambda i: [i, -i]),
    (pl.Struct({"a": pl.Int64, "b": pl.String}), lambda i: {"a": i, "b": "s"}),
    (pl.List(pl.Struct({"k": pl.Float64})), lambda i: [{"k": 0.5}] * i),
    (pl.Null, lambda i: None),
]


@st.composite
def polars_series(draw: Any) -> Any:
    n = draw(st.integers(0, 4))
    dtype, make = draw(st.sampled_from(POLARS_DTYPES))
    nulls = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    name = draw(st.sampled_from(["", "x", "series", "é"]))
    s = pl.Series(name, [None if null else make(i) for i, null in enumerate(nulls)], dtype=dtype)
    if dtype in (pl.Float32, pl.Float64) and n:
        # NaN of every sign and payload, bit for bit.
        width = 4 if dtype == pl.Float32 else 8
        bits = NAN_BITS_32 if width == 4 else NAN_BITS_64
        raw = np.array(draw(st.lists(st.sampled_from(bits), min_size=n, max_size=n)), f"u{width}")
        s = pl.Series(name, raw.view(f"f{width}"))
    return s


def assert_same_polars(got: Any, want: Any) -> None:
    assert type(got) is type(want)
    if isinstance(want, pl.Series):
        assert (got.name, got.dtype) == (want.name, want.dtype)
        assert got.equals(want, check_dtypes=True, check_names=True)
        if want.dtype.is_float():
            assert _bits(got.to_numpy()) == _bits(want.to_numpy())
        return
    assert got.schema == want.schema
    assert got.equals(want)
    for name in want.columns:
        assert_same_polars(got[name], want[name])


@SETTINGS
@given(st.lists(polars_series(), max_size=4), st.sampled_from(sorted(PATHS)))
def test_polars_frames_and_series_come_back_exactly(columns: list[Any], path: str) -> None:
    rows = {len(s) for s in columns}
    if len(rows) == 1:
        df = pl.DataFrame([s.alias(f"c{i}") for i, s in enumerate(columns)])
        if (back := through(path, df)) is not REFUSED:
            assert_same_polars(back, df)
    for s in columns[:1]:
        if (back := through(path, s)) is not REFUSED:
            assert_same_polars(back, s)


# --- pyarrow values ----------------------------------------------------------------------------

ARROW_TYPES: list[tuple[Any, Callable[[int], Any]]] = [
    (pa.int8(), lambda i: i),
    (pa.uint64(), lambda i: 2**64 - 1),
    (pa.float16(), lambda i: np.float16(i)),
    (pa.float64(), lambda i: -float("nan")),
    (pa.string(), lambda i: f"s{i}"),
    (pa.large_string(), lambda i: "l"),
    (pa.string_view(), lambda i: "v"),
    (pa.binary_view(), lambda i: b"w"),
    (pa.binary(3), lambda i: b"abc"),
    (pa.large_binary(), lambda i: b"x" * i),
    (pa.date32(), lambda i: i),
    (pa.date64(), lambda i: 86_400_000 * i),
    (pa.timestamp("s"), lambda i: i),
    (pa.timestamp("ns", tz="Asia/Tokyo"), lambda i: i),
    (pa.time32("s"), lambda i: i),
    (pa.time64("ns"), lambda i: i),
    (pa.duration("s"), lambda i: i),
    (pa.decimal128(12, 4), lambda i: decimal.Decimal(i) / 16),
    (pa.decimal256(50, 2), lambda i: decimal.Decimal(i)),
    (pa.list_(pa.int32()), lambda i: [i]),
    (pa.large_list(pa.string()), lambda i: ["a"] * i),
    (pa.list_(pa.int8(), 2), lambda i: [i, i]),
    (pa.map_(pa.string(), pa.int64()), lambda i: [("k", i)]),
    (pa.struct([("a", pa.int64()), ("b", pa.list_(pa.float32()))]), lambda i: {"a": i, "b": [0.5]}),
    (pa.dictionary(pa.int8(), pa.string()), lambda i: f"d{i % 2}"),
    (pa.dictionary(pa.int16(), pa.int64(), ordered=True), lambda i: i % 3),
    (pa.dictionary(pa.int8(), pa.large_string()), lambda i: f"d{i % 2}"),
    (pa.null(), lambda i: None),
    (pa.bool_(), lambda i: i % 2 == 1),
]


@st.composite
def arrow_tables(draw: Any) -> Any:
    n = draw(st.integers(0, 4))
    count = draw(st.integers(1, 3))
    fields, arrays = [], []
    for k in range(count):
        tp, make = draw(st.sampled_from(ARROW_TYPES))
        nulls = draw(st.lists(st.booleans(), min_size=n, max_size=n))
        values = [None if null else make(i) for i, null in enumerate(nulls)]
        if pa.types.is_dictionary(tp):
            array = pa.array(values, tp.value_type).dictionary_encode()
            array = pa.DictionaryArray.from_arrays(
                array.indices.cast(tp.index_type), array.dictionary, ordered=tp.ordered
            )
        else:
            array = pa.array(values, tp)
        meta = draw(st.sampled_from([None, {"unit": "m"}]))
        nullable = draw(st.booleans()) or any(nulls) or pa.types.is_null(tp)
        fields.append(pa.field(f"f{k}", array.type, nullable=nullable, metadata=meta))
        arrays.append(array)
    schema = pa.schema(fields, metadata=draw(st.sampled_from([None, {"k": "v"}])))
    return pa.Table.from_arrays(arrays, schema=schema)


@SETTINGS
@given(arrow_tables(), st.booleans(), st.sampled_from(sorted(PATHS)))
def test_pyarrow_tables_and_batches_come_back_exactly(table: Any, batch: bool, path: str) -> None:
    value = table.combine_chunks().to_batches()[0] if batch and table.num_rows else table
    got = through(path, value)
    if got is REFUSED:
        return
    assert type(got) is type(value)
    assert got.schema.equals(value.schema, check_metadata=True), (got.schema, value.schema)
    for name in value.schema.names:
        g, w = got.column(name), value.column(name)
        if pa.types.is_floating(w.type):  # NaN != NaN for equals(): compare bits and nulls
            assert g.is_null().equals(w.is_null())
            assert _bits(g.to_numpy(zero_copy_only=False)) == _bits(
                w.to_numpy(zero_copy_only=False)
            )
        else:
            assert g.equals(w), name


# --- what is refused, and how ------------------------------------------------------------------


class Unregistered:
    pass


REFUSED: dict[str, tuple[Any, str]] = {
    "complex column": (pd.DataFrame({"c": np.array([1 + 2j])}), "column 'c'"),
    "sparse column": (pd.DataFrame({"sp": pd.arrays.SparseArray([0.0, 1.0])}), "column 'sp'"),
    "unencodable cell": (
        pd.DataFrame({"o": pd.Series(["a", Unregistered()], dtype=object)}),
        "column 'o', row 1",
    ),
    "unencodable index cell": (
        pd.DataFrame({"a": [1, 2]}, index=pd.Index(["a", Unregistered()], dtype=object)),
        "index level 0",
    ),
    "categories of mixed objects": (
        pd.DataFrame({"k": pd.Categorical(["a", 1], categories=pd.Index(["a", 1], dtype=object))}),
        "column 'k'",
    ),
    "polars Object": (
        pl.DataFrame({"o": pl.Series([{"a": 1}, "text"], dtype=pl.Object)}),
        "column 'o'",
    ),
    "polars Object Series": (pl.Series("p", [object()], dtype=pl.Object), "column 'series'"),
    "polars Int128": (pl.DataFrame({"i": pl.Series([1], dtype=pl.Int128)}), ""),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_what_cannot_be_kept_is_refused_in_the_codec(name: str) -> None:
    value, where = REFUSED[name]
    with pytest.raises(amber.EncodeError) as ei:
        amber.dumps({"t": value})
    assert ei.value.kind == "unsupported" and ei.value.path == "$.t", ei.value
    assert where in str(ei.value)


@pytest.mark.parametrize("encoding", ["arrow", "parquet"])
@pytest.mark.parametrize("name", sorted(REFUSED))
def test_what_cannot_be_kept_is_refused_by_the_archive(
    name: str, encoding: str, tmp_path: Any
) -> None:
    value, where = REFUSED[name]
    path = tmp_path / "a.zip"
    with amber.Archive(path, "w") as a:
        a["before"] = 1
        with pytest.raises(amber.EncodeError) as ei:
            a.put("t", value, encoding=encoding)  # type: ignore[arg-type]
        assert where in str(ei.value) and ei.value.kind == "unsupported"
        assert ei.value.__cause__ is not None
        a["after"] = pd.DataFrame({"x": [1.5]})  # the archive is still usable
    with amber.Archive(path) as a:
        assert list(a) == ["before", "after"]
        assert a["after"]["x"].tolist() == [1.5]


@pytest.mark.parametrize(
    "array",
    [
        pa.array([pa.MonthDayNano([1, 2, 3])], pa.month_day_nano_interval()),
        pa.UnionArray.from_sparse(pa.array([0], pa.int8()), [pa.array([1]), pa.array(["a"])]),
        pa.array([{}], pa.struct([])),
    ],
    ids=["month_day_nano", "union", "empty struct"],
)
def test_parquet_refuses_what_it_would_change(array: Any, tmp_path: Any) -> None:
    table = pa.table({"c": array})
    with amber.Archive(tmp_path / "a.zip", "w") as a:
        with pytest.raises(amber.EncodeError, match="column 'c'"):
            a.put("t", table, encoding="parquet")
        a.put("t", table)  # Arrow IPC keeps it
    with amber.Archive(tmp_path / "a.zip") as a:
        assert a["t"].equals(table, check_metadata=True)


def test_parquet_keeps_what_it_would_change_by_itself(tmp_path: Any) -> None:
    """Categoricals of int categories, seconds, list item names, large-string dictionaries:
    a Parquet reader alone changes them; the archive restores them exactly."""
    df = pd.DataFrame(
        {
            "c": pd.Categorical([3, 1, None], categories=[3, 1, 2]),
            "t": pd.to_datetime(["2024-01-01 00:00:01", None, "2024-01-02 00:00:00"]).as_unit("s"),
            "k": pd.Categorical(["b", None, "b"], categories=["c", "b", "a"], ordered=True),
        }
    )
    assert_same_pandas(_archive(df, encoding="parquet"), df)


# --- sizes, labels, kinds ------------------------------------------------------------------------


def test_a_default_index_costs_nothing(tmp_path: Any) -> None:
    n = 100_000
    df = pd.DataFrame({"x": np.arange(n, dtype="f8")})
    assert len(amber.dumps(df)) < 8 * n + 4096
    with amber.Archive(tmp_path / "a.zip", "w") as a:
        a["df"] = df
        a["s"] = df["x"]
    with amber.Archive(tmp_path / "a.zip") as a:
        assert a.info("df")["columns"] == 1 and a.info("df")["rows"] == n
        assert os.path.getsize(tmp_path / "a.zip") < 2 * 8 * n + 16384
        assert type(a["df"].index) is pd.RangeIndex and type(a["s"].index) is pd.RangeIndex


def test_archive_info_counts_the_frames_columns_not_its_index(tmp_path: Any) -> None:
    frames = {
        "range": pd.DataFrame({"a": [1], "b": [2.0]}),
        "index": pd.DataFrame({"a": [1], "b": [2.0]}, index=pd.Index(["r"])),
        "multi": pd.DataFrame({"a": [1]}, index=pd.MultiIndex.from_tuples([(1, "x")])),
        "series": pd.Series([1.5], index=pd.Index([7])),
        "polars": pl.DataFrame({"a": [1], "b": ["x"]}),
        "empty": pd.DataFrame(index=pd.Index([1, 2])),
    }
    with amber.Archive(tmp_path / "a.zip", "w") as a:
        for key, value in frames.items():
            a[key] = value
            a.put(key + "_parquet", value, encoding="parquet")
    with amber.Archive(tmp_path / "a.zip") as a:
        for key, value in frames.items():
            want = 1 if isinstance(value, (pd.Series, pl.Series)) else value.shape[1]
            assert a.info(key)["columns"] == want, key
            assert a.info(key + "_parquet")["columns"] == want, key


def test_the_arrow_entry_is_what_other_tools_read(tmp_path: Any) -> None:
    """pyarrow's own reader rebuilds the index from the pandas metadata amber writes."""
    import zipfile

    df = pd.DataFrame({"a": [1.5, 2.5], "s": ["x", "y"]}, index=pd.Index([10, 20], name="k"))
    ranged = pd.DataFrame({"a": [1.5, 2.5]}, index=pd.RangeIndex(4, 8, 2))
    with amber.Archive(tmp_path / "a.zip", "w") as a:
        a["df"] = df
        a["ranged"] = ranged
    with zipfile.ZipFile(tmp_path / "a.zip") as z:
        other = pa.ipc.open_file(pa.py_buffer(z.read("df.arrow"))).read_all().to_pandas()
        assert other.index.tolist() == [10, 20] and other.index.name == "k"
        assert other["a"].tolist() == [1.5, 2.5] and other["s"].tolist() == ["x", "y"]
        table = pa.ipc.open_file(pa.py_buffer(z.read("ranged.arrow"))).read_all()
        assert table.num_columns == 1
        assert table.to_pandas().index.equals(pd.RangeIndex(4, 8, 2))


def test_zero_copy_float_columns_keep_nan_bits() -> None:
    raw = np.array(NAN_BITS_64 * 10, dtype="u8").view("f8")
    df = pd.DataFrame({"x": raw})
    data = bytearray(amber.dumps(df))
    got = amber.loads(data, zero_copy=True)
    assert _bits(got["x"].to_numpy()) == _bits(raw)
    assert np.shares_memory(got["x"].to_numpy(), np.frombuffer(data, dtype="u1"))


@pytest.mark.parametrize(
    "extras",
    [
        {"index": "range"},
        {"index": ["range", 0, 5, 1]},
        {"index": ["range", 0, 2, 0]},
        {"index": ["levels", 3]},
        {"index": ["levels", 0]},
        {"index": ["what"]},
        {"index": ["range", 0, 2, 1], "rebuild": {5: "cells"}},
        {"index": ["range", 0, 2, 1], "rebuild": {0: "nonsense"}},
        {"index": ["range", 0, 2, 1], "rebuild": {0: "cells"}},
        {"index": ["range", 0, 2, 1], "rebuild": {1: ["string", "disk", True]}},
        {"index": ["range", 0, 2, 1], "columns": ["list", ["a"]]},
        {"index": ["range", 0, 2, 1], "columns": ["array", np.zeros((1, 2))]},
        {"index": ["range", 0, 2, 1], "columns": ["multi", [], [np.array([9])]]},
        {"index": ["range", 0, 2, 1], "columns": ["frame", pd.DataFrame(), None]},
    ],
)
def test_lying_extras_are_refused(extras: dict[str, Any]) -> None:
    """Extras that do not fit their table make a DecodeError, never a wrong frame."""
    from amber import _frames

    table = pa.table({"a": pa.array([1.5, 2.5]), "s": pa.array(["x", "y"])})
    with pytest.raises((ValueError, TypeError)):
        _frames.from_table(_frames.PD_FRAME, extras, table)


def test_frames_written_before_these_rules_read_as_before() -> None:
    """A frame whose extras have no 'index' key was written by pyarrow's pandas conversion
    (an int64 index column for a RangeIndex); it still reads as it always did."""
    from amber import _frames

    df = pd.DataFrame({"a": [1.0, 2.0], "o": pd.Series(["x", None], dtype=object)})
    table = pa.Table.from_pandas(df, preserve_index=True)
    got = _frames.from_table(_frames.PD_FRAME, {"object_columns": [1]}, table)
    assert got["o"].dtype == object and got["o"].tolist() == ["x", None]
    assert got.index.tolist() == [0, 1] and not isinstance(got.index, pd.RangeIndex)


@pytest.mark.parametrize(
    "cell",
    [
        b"",
        b"\x07" + amber.dumps(1),
        b"\x00not a frame",
        b"\x01" + amber.dumps(("Interval", b"\x01" + amber.dumps(("NaT",)), b"\x00", "left")),
        b"\x01" + amber.dumps(("Timestamp", 5, None)),
        b"\x01" + amber.dumps(("Period", 1)),
        b"\x01" + amber.dumps([1]),
    ],
)
def test_lying_cells_are_refused(cell: bytes) -> None:
    """A cell that is not what the encoder writes is a DecodeError through the codec."""
    from amber import _frames

    table = pa.table({"o": pa.array([cell], pa.large_binary())})
    extras = {"index": ["range", 0, 1, 1], "rebuild": {0: "cells"}}
    with pytest.raises((ValueError, TypeError, amber.DecodeError)):
        _frames.from_table(_frames.PD_FRAME, extras, table)


def test_object_columns_of_str_stay_arrow_strings() -> None:
    """Other Arrow readers see str columns as strings, whether their nulls are None or NaN;
    only columns of other cells (here None beside NaN) become amber-encoded bytes."""
    from amber import _frames

    df = pd.DataFrame(
        {
            "none": pd.Series(["a", None], dtype=object),
            "nan": pd.Series(["a", np.nan], dtype=object),
            "both": pd.Series([None, np.nan], dtype=object),
        }
    )
    extras, table = _frames.to_table(df, _frames.PD_FRAME)
    assert [f.type for f in table.schema] == [
        pa.large_string(),
        pa.large_string(),
        pa.large_binary(),
    ]
    assert extras is not None and extras["rebuild"] == {
        0: "object",
        1: ["object", "nan"],
        2: "cells",
    }
    got = amber.loads(amber.dumps(df))
    assert got["none"][1] is None and isinstance(got["nan"][1], float) and got["both"][0] is None
    assert_same_pandas(got, df)


def test_attrs_stay_out_of_pandas_metadata() -> None:
    """attrs travel as amber values in the extras; pyarrow's JSON copy (which drops what JSON
    cannot hold, with a warning) is not written."""
    import warnings

    from amber import _frames

    df = pd.DataFrame({"a": [1.5]})
    df.attrs = {"when": dt.date(2020, 1, 1), "n": decimal.Decimal("1.10")}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        extras, table = _frames.to_table(df, _frames.PD_FRAME)
    assert not table.schema.pandas_metadata.get("attributes")
    assert extras is not None and extras["attrs"] == df.attrs
