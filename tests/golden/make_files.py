"""Golden files: what this release of amber writes, kept so that later releases are tested on it.

    python tests/golden/make_files.py             # writes tests/golden/v<major>.<minor>/
    python tests/golden/make_files.py --replace   # rewrites that folder if it exists

The folder is named after the installed amber's release (0.1.0 writes `v0.1`). It holds:

- `codec/<family>.amber`: one amber frame per type family, a dict of named cases (the family
  `oob` adds its out-of-band buffers as `oob.amber.0`, `.1`, ...; `stream.amber` is several
  frames written one after another with `amber.dump`);
- `archive-v1.amber.zip`: an archive of stored entries (amber objects, one with an out-of-band
  buffer entry, `.npy` arrays, JSON), then appended to: archive format version 1;
- `archive-v2.amber.zip`: compressed entries (zstd and deflate, byte-shuffled or not), stored
  ones, Arrow IPC and Parquet tables of pandas, polars and pyarrow, then appended to: archive
  format version 2 (it holds shuffled entries);
- `pg/copy.pgcopy`: a PostgreSQL `COPY ... (FORMAT BINARY)` stream as amber.pg writes it, for
  the table `PG_TABLE` (written offline by amber's COPY encoder, no server needed);
- `written-by.txt`: the versions of amber, Python and the table libraries that wrote them.

The `test_compat.py` modules of tests/codec, tests/archive and tests/pg read every release's
folder and check that each value comes back exactly as the function of the same name here
makes it, and that today's amber still writes the newest folder's files byte for byte where
they are deterministic.

The cases are frozen once a release's folder holds them: never change or remove one, because
the files of every older release are compared with what this module makes today. A later
release adds cases under new names (its folder then holds them; older folders lack them, and
the test allows that). Values are fixed (no random data, no clock), so running this again with
the same amber reproduces every file byte for byte, except those in `NOT_DETERMINISTIC`:

- tables inside frames (`pandas`, `polars`, `pyarrow`, `oob_tables`) hold an Arrow IPC stream
  that pyarrow writes; a pandas table's schema carries pandas' metadata, which names the
  pandas and pyarrow versions, and other pyarrow or polars versions may lay the stream out
  differently while amber's format is unchanged;
- `archive-v2.amber.zip` holds those tables too (as `.arrow` and `.parquet` entries, whose
  bytes are pyarrow's), and its zstd and deflate bytes are the compressors' (the libraries
  are pinned by Cargo.lock, but an upgrade may change them); the test compares its manifest
  and its zip records instead, which pin the content of every entry amber encodes itself by
  its size, CRC-32 and BLAKE3 hash;
- `codec/identity.amber`: with `identity=True` an object held by one reference only is
  written without a memo entry, and how many references CPython itself holds to a value (the
  top-level one, on the interpreter's stack) differs between CPython versions (3.15 holds one
  fewer than 3.11 to 3.14);
- `written-by.txt` names the versions of the environment that ran this script.
"""

from __future__ import annotations

import collections
import dataclasses
import datetime as dt
import decimal
import enum
import fractions
import importlib.metadata
import ipaddress
import os
import shutil
import struct
import sys
import typing
import uuid
import zoneinfo
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

import amber

HERE = Path(__file__).parent
D = decimal.Decimal
UTC = dt.timezone.utc
PARIS = zoneinfo.ZoneInfo("Europe/Paris")
NEW_YORK = zoneinfo.ZoneInfo("America/New_York")


def release(version: str | None = None) -> str:
    """The folder name of a release: `v<major>.<minor>` (amber 0.1.0 writes `v0.1`)."""
    version = version or importlib.metadata.version("amber")
    major, minor = version.split(".")[:2]
    return f"v{major}.{minor}"


def float_bits(bits: int) -> float:
    """The float with these IEEE 754 bits (NaN payloads, signed NaNs)."""
    return float(struct.unpack("<d", struct.pack("<Q", bits))[0])


# --- registered classes ----------------------------------------------------------------------
# Registered under fixed names (`REGISTER`), which is what the frames carry.


class Color(enum.Enum):
    RED = 1
    GREEN = "g"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 10


class Perm(enum.Flag):
    R = 4
    W = 2
    X = 1


@dataclasses.dataclass
class Point:
    x: int
    y: float


@dataclasses.dataclass(frozen=True)
class Frozen:
    name: str
    tags: tuple[str, ...]


@dataclasses.dataclass
class Node:
    """For cycles through an object, in identity mode."""

    value: int
    next: Any = None


class Pair(typing.NamedTuple):
    a: int
    b: str


class Slotted:
    __slots__ = ("s", "t")

    def __eq__(self, other: object) -> bool:
        def state(o: Any) -> Any:
            return [getattr(o, n, "<unset>") for n in ("s", "t")], getattr(o, "__dict__", None)

        return type(other) is type(self) and state(self) == state(other)

    __hash__ = None  # type: ignore[assignment]


class Both(Slotted):
    """A __dict__ and slots (one of them unset)."""


class Secret:
    """Its own __getstate__/__setstate__: only the user travels."""

    def __init__(self, user: str) -> None:
        self.user, self.token = user, None

    def __getstate__(self) -> Any:
        return self.user

    def __setstate__(self, user: str) -> None:
        self.user, self.token = user, None

    def __eq__(self, other: object) -> bool:
        return type(other) is Secret and self.__dict__ == other.__dict__

    __hash__ = None  # type: ignore[assignment]


class Temperature:
    """Registered with encode and decode hooks."""

    def __init__(self, kelvin: float) -> None:
        self.kelvin = kelvin

    def __eq__(self, other: object) -> bool:
        return type(other) is Temperature and self.kelvin == other.kelvin

    __hash__ = None  # type: ignore[assignment]


REGISTER: list[tuple[type, dict[str, Any]]] = [
    (Color, {"name": "compat.Color"}),
    (Level, {"name": "compat.Level"}),
    (Perm, {"name": "compat.Perm"}),
    (Point, {"name": "compat.Point"}),
    (Frozen, {"name": "compat.Frozen"}),
    (Node, {"name": "compat.Node"}),
    (Pair, {"name": "compat.Pair"}),
    (Slotted, {"name": "compat.Slotted"}),
    (Both, {"name": "compat.Both"}),
    (Secret, {"name": "compat.Secret"}),
    (
        Temperature,
        {
            "name": "compat.Temperature",
            "encode": lambda t: t.kelvin,
            "decode": Temperature,
        },
    ),
]


def register() -> None:
    for cls, options in REGISTER:
        amber.register(cls, **options)


def unregister() -> None:
    for cls, _ in REGISTER:
        amber.unregister(cls)


# --- codec families --------------------------------------------------------------------------


def atoms() -> dict[str, Any]:
    ints = [0, 1, 63, 64, 127, 128, 255, 256, 32767, 32768, 2**31 - 1, 2**31, 2**63 - 1, 2**63]
    ints += [2**64, 2**100, 10**400, -1, -32, -33, -128, -129, -32769, -(2**63), -(2**63) - 1]
    ints += [-(2**200)]
    return {
        "none": None,
        "true": True,
        "false": False,
        "ints": ints,
        "floats": [0.0, -0.0, 1.5, 0.1, -2.5e-300, 5e-324, 1.7976931348623157e308],
        "inf": float("inf"),
        "-inf": float("-inf"),
        "nan": float("nan"),
        "nan_payload": float_bits(0x7FF8_0000_0000_0ABC),
        "nan_negative": float_bits(0xFFF8_0000_0000_0001),
        "complex": complex(1.0, -2.0),
        "complex_signs": complex(-0.0, float("inf")),
        "complex_nan": complex(float_bits(0x7FF8_0000_0000_0DEF), 0.0),
    }


def text() -> dict[str, Any]:
    return {
        "empty": "",
        "ascii": "a",
        "fixstr_31": "x" * 31,
        "str_32": "y" * 32,
        "long": "amber " * 200,
        "latin": "héllo",
        "euro": "€ 9,90",
        "cjk": "日本語",
        "astral": "emoji \U0001f3af",
        "nul": "a\x00b",
        "lone_surrogate": "a\ud800z",
        "repeated": ["rep", "rep", "rep", "other", "rep"],
        "bytes_empty": b"",
        "bytes": b"\x00\xff",
        "bytes_all": bytes(range(256)),
        "bytearray_empty": bytearray(),
        "bytearray": bytearray(b"ab\x00"),
    }


def containers() -> dict[str, Any]:
    return {
        "list_empty": [],
        "list": [1, [2, None], "a"],
        "list_16": list(range(16)),
        "list_300": list(range(300)),
        "tuple_empty": (),
        "tuple": (1, "a"),
        "tuple_8": tuple(range(8)),
        "dict_empty": {},
        "dict_keys": {"a": 1, 2: "b", (1, 2): None, None: 0, 1.5: True, frozenset({3}): b""},
        "dict_order": {"z": 1, "a": 2, "m": 3},
        "dict_16": {f"k{i:02}": i for i in range(16)},
        "set_empty": set(),
        "set": {7},
        "set_ints": set(range(20)),
        "frozenset_empty": frozenset(),
        "frozenset_tuples": frozenset({(1, 2), (3, 4)}),
        "nested": [[[[[[["deep"]]]]]]],
        "records": [{"id": i, "ok": i > 1, "name": f"n{i}"} for i in range(5)],
        "records_nested": [{"at": {"x": i, "y": -i}, "n": i} for i in range(3)],
        "keys_repeat": [{"id": 1}, {"id": 2}, {"id": 3}],
    }


def time() -> dict[str, Any]:
    return {
        "date": dt.date(2024, 2, 29),
        "date_min": dt.date.min,
        "date_max": dt.date.max,
        "time": dt.time(0),
        "time_max": dt.time(23, 59, 59, 999999),
        "time_utc_fold": dt.time(1, 2, 3, 4, tzinfo=UTC, fold=1),
        "time_fixed": dt.time(12, tzinfo=dt.timezone(dt.timedelta(hours=5, minutes=30))),
        "datetime": dt.datetime(2020, 1, 2, 3, 4, 5, 6),
        "datetime_min": dt.datetime.min,
        "datetime_max": dt.datetime.max,
        "datetime_utc": dt.datetime(2026, 11, 22, 8, 30, tzinfo=UTC),
        "datetime_fixed": dt.datetime(2020, 1, 1, tzinfo=dt.timezone(dt.timedelta(hours=-5))),
        "datetime_fixed_named": dt.datetime(
            2020, 1, 1, tzinfo=dt.timezone(dt.timedelta(hours=-5), "EST")
        ),
        "datetime_fixed_odd": dt.datetime(
            2020, 1, 1, tzinfo=dt.timezone(-dt.timedelta(hours=1, seconds=1, microseconds=5))
        ),
        "datetime_zone": dt.datetime(2026, 11, 22, tzinfo=PARIS),
        "datetime_zone_fold": dt.datetime(2024, 10, 27, 2, 30, tzinfo=PARIS, fold=1),
        "datetime_zone_ny": dt.datetime(2024, 3, 10, 3, 0, 0, 1, tzinfo=NEW_YORK),
        "datetime_naive_fold": dt.datetime(2024, 10, 27, 2, 30, fold=1),
        "timedelta_zero": dt.timedelta(0),
        "timedelta": dt.timedelta(days=-1, seconds=5, microseconds=7),
        "timedelta_min": dt.timedelta.min,
        "timedelta_max": dt.timedelta.max,
    }


def numbers() -> dict[str, Any]:
    decimals = ["1.10", "0", "-0", "0E-10", "1E+5", "-1.10E-3", "9.90"]
    decimals += ["123456789012345678901234567890.0987654321", "NaN", "-NaN", "NaN123"]
    decimals += ["sNaN", "-sNaN", "Infinity", "-Infinity"]
    return {
        "decimals": [D(t) for t in decimals],
        "fraction": fractions.Fraction(-3, 7),
        "fraction_zero": fractions.Fraction(0),
        "fraction_big": fractions.Fraction(2**100, 3),
    }


def stdlib() -> dict[str, Any]:
    u = "12345678-1234-5678-1234-567812345678"
    factories: list[Any] = [None, list, dict, set, int, float, str, tuple, bytes, frozenset]
    factories += [bool, complex, bytearray, collections.OrderedDict, collections.deque]
    factories += [collections.Counter]
    return {
        "uuid": uuid.UUID(u),
        "uuid_safe": uuid.UUID(u, is_safe=uuid.SafeUUID.safe),
        "uuid_unsafe": uuid.UUID(u, is_safe=uuid.SafeUUID.unsafe),
        "uuid_max": uuid.UUID(int=2**128 - 1),
        "ordered_dict": collections.OrderedDict([("b", 1), ("a", 2)]),
        "ordered_dict_empty": collections.OrderedDict(),
        "deque": collections.deque([1, "two", 3.0]),
        "deque_maxlen": collections.deque([1], maxlen=4),
        "deque_maxlen_0": collections.deque(maxlen=0),
        "counter": collections.Counter({"x": 2, "y": -1, 3: 0}),
        "defaultdicts": [collections.defaultdict(f, {i: str(i)}) for i, f in enumerate(factories)],
    }


def classes() -> dict[str, Any]:
    both = Both()
    both.s, both.extra = 1, [2]  # slot t stays unset
    slotted = Slotted()
    slotted.s, slotted.t = "s", None
    return {
        "enum": Color.RED,
        "enum_str_value": Color.GREEN,
        "int_enum": Level.HIGH,
        "flag": Perm.R | Perm.W,
        "flag_empty": Perm(0),
        "dataclass": Point(1, 2.5),
        "dataclass_frozen": Frozen("f", ("a", "b")),
        "namedtuple": Pair(1, "z"),
        "slots": slotted,
        "dict_and_slots": both,
        "getstate": Secret("ann"),
        "hooks": Temperature(273.15),
        "many": [Point(i, i / 2) for i in range(3)],
    }


def numpy_arrays() -> dict[str, Any]:
    arrays = {
        "bool": np.array([True, False]),
        "i1": np.array([-128, 127], "i1"),
        "u1": np.array([0, 255], "u1"),
        "i2_le": np.array([-(2**15), 1], "<i2"),
        "i2_be": np.array([-(2**15), 1], ">i2"),
        "u2_be": np.array([1, 65535], ">u2"),
        "i4": np.array([1, 2, 3], "<i4"),
        "u4": np.array([2**32 - 1], "<u4"),
        "i8": np.array([-(2**63), 2**63 - 1], "<i8"),
        "u8_be": np.array([2**64 - 1], ">u8"),
        "f2": np.array([1.5, -0.0, np.inf], "<f2"),
        "f4": np.array([0.1, np.nan], "<f4"),
        "f8": np.array([0.1, -0.0, np.inf], "<f8"),
        "f8_be": np.array([1e300], ">f8"),
        "f8_nan_payload": np.array([0x7FF8_0000_0000_0ABC], "<u8").view("<f8"),
        "c8": np.array([1 + 2j], "<c8"),
        "c16_be": np.array([complex(np.nan, 1)], ">c16"),
        "datetime_ns": np.array(["2024-02-29T12:00:00.123456789", "NaT"], "M8[ns]"),
        "datetime_day": np.array(["2024-01-01"], "<M8[D]"),
        "timedelta_us": np.array([5, -7], "<m8[us]"),
        "bytes_S5": np.array([b"ab", b""], "S5"),
        "str_U3": np.array(["é", "abc"], "<U3"),
        "str_U2_be": np.array(["hi"], ">U2"),
        "void_V4": np.array([b"\x01\x02\x03\x04"], "V4"),
        "structured": np.array([(1, 2.5, b"a"), (-1, np.nan, b"bc")], "<i4,<f8,S2"),
        "structured_nested": np.array(
            [((1, [2, 3]), b"x")], dtype=[("p", [("i", "<i2"), ("v", "<u4", (2,))]), ("s", "S1")]
        ),
        "structured_aligned": np.zeros(2, np.dtype([("a", "u1"), ("b", "<f8")], align=True)),
        "structured_padding": np.frombuffer(
            bytes(range(16)), np.dtype({"names": ["a"], "formats": ["<u4"], "itemsize": 8})
        ),
        "titles": np.zeros(1, dtype=[(("T", "t"), "u1"), ("u", "u1")]),
        "record": np.zeros(1, dtype=(np.record, [("a", "u1")])),
        "metadata": np.zeros(2, np.dtype("<i4", metadata={"unit": "m", "scale": (1, 2)})),
        "c_3d": np.arange(24, dtype="<i4").reshape(2, 3, 4),
        "fortran_2d": np.asfortranarray(np.arange(6, dtype=">u2").reshape(2, 3)),
        "fortran_3d": np.asfortranarray(np.arange(24, dtype="<f8").reshape(2, 3, 4)),
        "zero_d": np.array(7, "<i8"),
        "empty": np.zeros((0, 3), "<f4"),
        "zero_itemsize": np.ndarray((2, 3), dtype="S0"),
    }
    return arrays


def numpy_scalars() -> dict[str, Any]:
    return {
        "bool": np.bool_(True),
        "int8": np.int8(-5),
        "int64": np.int64(-(2**63)),
        "uint64": np.uint64(2**64 - 1),
        "float16": np.float16(0.5),
        "float32": np.float32(-0.0),
        "float64": np.float64(0.1),
        "float64_nan_payload": np.array([0x7FF8_0000_0000_0ABC], "<u8").view("<f8")[0],
        "complex64": np.complex64(1 - 1j),
        "datetime64": np.datetime64("2020-01-01T00:00", "m"),
        "datetime64_nat": np.datetime64("NaT", "ns"),
        "timedelta64": np.timedelta64(5, "s"),
        "bytes": np.bytes_(b"ab"),
        "str": np.str_("é"),
        "str_empty": np.str_(""),
        "void": np.void(b"\x01\x02"),
        "structured": np.array([(1, 2.5)], "<i4,<f8")[0],
        "record": np.zeros(1, dtype=(np.record, [("a", "u1")]))[0],
    }


def pandas_tables() -> dict[str, Any]:
    import pandas as pd

    df = pd.DataFrame(
        {
            "i64": np.array([1, -2, 3], dtype="int64"),
            "f64": [0.5, np.nan, -0.0],
            "nullable": pd.array([1, None, 3], dtype="Int64"),
            "flag": pd.array([True, None, False], dtype="boolean"),
            "text": pd.array(["a", None, "é"], dtype="string"),
            "obj": pd.Series(["x", None, "z"], dtype=object),
            "cat": pd.Categorical(["lo", "hi", "lo"], categories=["lo", "hi"], ordered=True),
            "when": pd.date_range("2024-03-30", periods=3, freq="D", tz="Europe/Paris", unit="ns"),
            "naive": np.array(["2024-01-01", "NaT", "1970-01-01T00:00:00.000001"], "M8[ns]"),
            "delta": np.array([1, -2, 3], "m8[ns]"),
            "period": pd.period_range("2024-01", periods=3, freq="M"),
            "interval": pd.interval_range(0, 3),
        },
        index=pd.Index([10, 11, 12], dtype="int64", name="row"),
    )
    df.attrs = {"source": "golden", "version": (0, 1)}
    columns = pd.MultiIndex.from_tuples([("a", 1), ("a", 2), ("b", 1)], names=["k", "n"])
    multi = pd.DataFrame(
        np.arange(6, dtype="float32").reshape(2, 3),
        columns=columns,
        index=pd.date_range("2024-01-01", periods=2, freq="h", name="t", unit="ns"),
    )
    rows = pd.MultiIndex.from_tuples([(1, "x"), (1, "y"), (2, "x")], names=["n", "s"])
    return {
        "frame": df,
        "frame_multiindex_columns": multi,
        "frame_multiindex_rows": pd.DataFrame({"v": [1, 2, 3]}, index=rows),
        "frame_int_columns": pd.DataFrame({1: [1, 2], 2: [3.0, 4.0]}).set_flags(
            allows_duplicate_labels=False
        ),
        "frame_range_index": pd.DataFrame({"a": [1, 2]}, index=pd.RangeIndex(5, 9, 2, name="r")),
        "frame_empty": pd.DataFrame({"a": pd.Series([], dtype="float64")}),
        "series": pd.Series([1.5, None, 3.0], name=("a", 1), index=pd.Index(["a", "b", "c"])),
        "series_unnamed": pd.Series(np.array([1, 2], dtype="uint8")),
    }


def polars_tables() -> dict[str, Any]:
    import polars as pl

    return {
        "frame": pl.DataFrame(
            {
                "i": pl.Series([1, None, 3], dtype=pl.Int64),
                "u8": pl.Series([0, 255, 1], dtype=pl.UInt8),
                "f": [0.5, float("nan"), -0.0],
                "s": ["a", None, "é"],
                "b": [True, False, None],
                "cat": pl.Series(["x", "y", "x"], dtype=pl.Categorical),
                "enum": pl.Series(["lo", "hi", "lo"], dtype=pl.Enum(["lo", "hi"])),
                "dec": pl.Series(["1.10", "2.00", "-0.01"]).str.to_decimal(scale=2),
                "list": [[1, 2], [], None],
                "struct": [{"a": 1, "b": "x"}, {"a": 2, "b": None}, None],
                "tz": pl.Series([0, 1, None], dtype=pl.Datetime("us", "Europe/Paris")),
                "date": [dt.date(2024, 2, 29), None, dt.date(1970, 1, 1)],
                "dur": pl.Series([1, -1, None], dtype=pl.Duration("ms")),
                "bin": [b"\x00", None, b"ab"],
            }
        ),
        "frame_empty": pl.DataFrame({"a": pl.Series([], dtype=pl.Float32)}),
        "series": pl.Series("x", [1.5, None], dtype=pl.Float32),
    }


def pyarrow_tables() -> dict[str, Any]:
    import pyarrow as pa

    schema = pa.schema(
        [
            pa.field("a", pa.int32(), metadata={"unit": "m"}),
            pa.field("b", pa.large_string()),
            pa.field("c", pa.list_(pa.float64())),
            pa.field("d", pa.decimal128(10, 3)),
            pa.field("e", pa.timestamp("ns", tz="UTC")),
            pa.field("f", pa.dictionary(pa.int8(), pa.string())),
        ],
        metadata={"k": "v"},
    )
    table = pa.table(
        {
            "a": pa.array([1, None], pa.int32()),
            "b": ["x", "yé"],
            "c": [[1.5], None],
            "d": pa.array([D("1.100"), D("-0.001")], pa.decimal128(10, 3)),
            "e": pa.array([0, 1_700_000_000_000_000_001], pa.timestamp("ns", tz="UTC")),
            "f": pa.array(["p", "q"])
            .dictionary_encode()
            .cast(pa.dictionary(pa.int8(), pa.string())),
        },
        schema=schema,
    )
    return {
        "table": table,
        "record_batch": table.to_batches()[0],
        "table_empty": pa.table({"x": pa.array([], pa.uint16())}),
    }


def _shared() -> Any:
    d = {"k": 1}
    return [d, d, (d,)]


def _list_cycle() -> Any:
    a: list[Any] = [1]
    a.append(a)
    return a


def _dict_cycle() -> Any:
    d: dict[str, Any] = {"n": 1}
    d["self"] = d
    return d


def _tuple_cycle() -> Any:
    lst: list[Any] = []
    t = (lst, 1)
    lst.append(t)
    return t


def _node_cycle() -> Any:
    a, b = Node(1), Node(2)
    a.next, b.next = b, a
    return [a, b]


def _shared_array() -> Any:
    arr = np.arange(3, dtype="<i2")
    return {"first": arr, "again": arr}


def identity() -> dict[str, Any]:
    """Shared references and cycles, written with `identity=True`."""
    return {
        "shared": _shared(),
        "list_cycle": _list_cycle(),
        "dict_cycle": _dict_cycle(),
        "tuple_cycle": _tuple_cycle(),
        "object_cycle": _node_cycle(),
        "shared_array": _shared_array(),
        "shared_bytes_list": [b"abc"] * 2,
    }


def oob() -> dict[str, Any]:
    """Out-of-band buffers (`buffer_callback` returning False, `oob_threshold=32`)."""
    return {
        "bytes": bytes(range(64)),
        "bytearray": bytearray(b"y" * 40),
        "array": np.arange(8, dtype="<i8"),
        "array_fortran": np.asfortranarray(np.arange(12, dtype=">f4").reshape(3, 4)),
        "small_stays": b"in band",
    }


def oob_tables() -> dict[str, Any]:
    import pandas as pd
    import polars as pl
    import pyarrow as pa

    return {
        "pyarrow": pa.table({"a": pa.array(range(8), pa.int64())}),
        "pandas": pd.DataFrame({"a": np.arange(8, dtype="float64")}, index=pd.Index(range(8))),
        "polars": pl.DataFrame({"a": list(range(8))}),
    }


def deterministic() -> dict[str, Any]:
    """Written with `deterministic=True`: set items in the order of their encoded bytes."""
    return {
        "set_str": {"pear", "apple", "fig", "é"},
        "frozenset_str": frozenset({"b", "a"}),
        "set_mixed": {1, "1", (1, "x"), b"1", None},
        "records": [{"id": i, "tag": "t" if i % 2 else "u"} for i in range(4)],
        "nested_sets": [frozenset({"x", "y"}), {frozenset({"z"})}],
    }


@dataclasses.dataclass(frozen=True)
class Family:
    make: Callable[[], dict[str, Any]]
    options: dict[str, Any] = dataclasses.field(default_factory=dict)


FAMILIES: dict[str, Family] = {
    "atoms": Family(atoms),
    "text": Family(text),
    "containers": Family(containers),
    "time": Family(time),
    "numbers": Family(numbers),
    "stdlib": Family(stdlib),
    "classes": Family(classes),
    "numpy_arrays": Family(numpy_arrays),
    "numpy_scalars": Family(numpy_scalars),
    "pandas": Family(pandas_tables),
    "polars": Family(polars_tables),
    "pyarrow": Family(pyarrow_tables),
    "identity": Family(identity, {"identity": True}),
    "oob": Family(oob, {"oob_threshold": 32}),
    "oob_tables": Family(oob_tables, {"oob_threshold": 32}),
    "deterministic": Family(deterministic, {"deterministic": True}),
}
OOB_FAMILIES = ("oob", "oob_tables")

#: Files whose bytes depend on more than amber (see the module's docstring), by name.
NOT_DETERMINISTIC = {
    "codec/pandas.amber": "pandas' metadata in the Arrow schema names the pandas and pyarrow "
    "versions; the Arrow IPC stream is pyarrow's",
    "codec/polars.amber": "the Arrow IPC stream is written by pyarrow from polars' own export",
    "codec/pyarrow.amber": "the Arrow IPC stream is pyarrow's",
    "codec/oob_tables.amber": "the out-of-band buffers hold Arrow IPC streams pyarrow writes",
    "codec/identity.amber": "with identity=True an object that only one reference holds is "
    "written without a memo entry, and how many references CPython itself holds to a value "
    "(the top-level one, on its stack) differs between its versions",
    "archive-v2.amber.zip": "Arrow IPC and Parquet entries are pyarrow's, zstd and deflate "
    "bytes the compressors'",
}


def encode_family(name: str) -> tuple[bytes, list[bytes]]:
    """The frame of a family and its out-of-band buffers (in the order the callback saw them)."""
    family = FAMILIES[name]
    buffers: list[bytes] = []
    options = dict(family.options)
    if name in OOB_FAMILIES:

        def keep(buf: Any) -> bool:
            buffers.append(bytes(buf.raw()))
            return False

        options["buffer_callback"] = keep
    return amber.dumps(family.make(), **options), buffers


#: `stream.amber`: frames written one after another to one file with `amber.dump`.
def stream() -> list[Any]:
    return [{"frame": 1}, [2, "two"], None, "last"]


# --- archives --------------------------------------------------------------------------------
# An archive is made in steps: ("w" or "a", [operations]). An operation is
# ("put", key, value, put options) or ("del", key).

Steps = list[tuple[str, list[tuple[Any, ...]]]]


def archive_v1_steps() -> Steps:
    """Stored entries only: archive format version 1."""
    first = [
        ("put", "config", {"lr": 0.1, "layers": (64, 32), "seen": {3, 4}, "price": D("9.90")}, {}),
        ("put", "records", [{"id": i, "name": f"n{i}"} for i in range(4)], {}),
        ("put", "blob", bytes(range(256)) * 256, {}),  # 64 KiB: an out-of-band entry
        ("put", "arrays/f8_2d", np.arange(12, dtype="<f8").reshape(3, 4), {}),
        (
            "put",
            "arrays/i4_3d_fortran",
            np.asfortranarray(np.arange(24, dtype="<i4").reshape(2, 3, 4)),
            {},
        ),
        ("put", "arrays/u2_be", np.array([1, 2, 65535], ">u2"), {}),
        (
            "put",
            "arrays/structured",
            np.array(
                [(1, 2.5, b"a"), (-1, -0.0, b"bc")], [("i", "<i4"), ("f", "<f8"), ("s", "S2")]
            ),
            {},
        ),
        ("put", "arrays/str", np.array(["é", "abc"], "<U3"), {}),
        ("put", "arrays/datetime", np.array(["2024-02-29", "NaT"], "<M8[D]"), {}),
        ("put", "arrays/record", np.zeros(2, dtype=(np.record, [("a", "u1")])), {}),
        ("put", "arrays/metadata", np.zeros(2, np.dtype("<i4", metadata={"unit": "m"})), {}),
        ("put", "arrays/empty", np.zeros((0, 2), "<f4"), {}),
        (
            "put",
            "summary",
            {"best": 0.25, "names": ["a", "b"], "ok": True, "none": None},
            {"encoding": "json"},
        ),
        ("put", "replaced", "old value", {}),
        ("put", "deleted", [1, 2, 3], {}),
    ]
    append = [
        ("put", "appended", {"step": 2, "when": dt.date(2026, 1, 1)}, {}),
        ("put", "replaced", "new value", {}),
        ("del", "deleted"),
    ]
    return [("w", first), ("a", append)]


def archive_v2_steps() -> Steps:
    """Compressed, shuffled, stored and table entries: archive format version 2."""
    import pandas as pd
    import polars as pl
    import pyarrow as pa

    floats = np.linspace(0, 1, 512, dtype="<f8")
    first = [
        ("put", "zstd/f8", floats, {"compression": "zstd"}),
        (
            "put",
            "zstd/i8_unshuffled",
            np.arange(256, dtype="<i8"),
            {"compression": "zstd", "shuffle": False},
        ),
        ("put", "zstd/level_19", np.arange(256, dtype="<i4"), {"compression": "zstd", "level": 19}),
        ("put", "zstd/config", {"lr": 0.1, "tags": frozenset({"a", "b"})}, {"compression": "zstd"}),
        ("put", "zstd/with_buffer", {"w": np.arange(8192, dtype="<f8")}, {"compression": "zstd"}),
        ("put", "zstd/structured", np.zeros(4, "<i4,<f8"), {"compression": "zstd"}),
        (
            "put",
            "deflate/i4",
            np.arange(256, dtype="<i4"),
            {"compression": "deflate", "shuffle": True},  # deflate shuffles only when asked
        ),
        (
            "put",
            "deflate/u2_unshuffled",
            np.arange(256, dtype="<u2"),
            {"compression": "deflate", "shuffle": False},
        ),
        (
            "put",
            "deflate/config",
            {"name": "run", "at": dt.datetime(2026, 1, 1, tzinfo=UTC)},
            {"compression": "deflate"},
        ),
        (
            "put",
            "deflate/json",
            {"k": [1, 2.5, "x"]},
            {"encoding": "json", "compression": "deflate"},
        ),
        ("put", "stored/u8", np.arange(5, dtype="<u8"), {}),
        (
            "put",
            "tables/pandas",
            pd.DataFrame(
                {"a": np.arange(3, dtype="int64"), "b": ["x", "y", "z"]}, index=pd.Index([5, 6, 7])
            ),
            {},
        ),
        ("put", "tables/pandas_series", pd.Series([1.5, 2.5], name="s"), {}),
        ("put", "tables/polars", pl.DataFrame({"a": [1, 2, 3], "s": ["p", None, "r"]}), {}),
        ("put", "tables/polars_series", pl.Series("v", [1.0, None]), {}),
        (
            "put",
            "tables/pyarrow",
            pa.table({"a": pa.array([1, 2], pa.int16())}, metadata={"k": "v"}),
            {},
        ),
        ("put", "tables/record_batch", pa.record_batch({"a": pa.array([1.5, None])}), {}),
        (
            "put",
            "tables/zstd_numbers",
            pa.table({"x": pa.array(np.arange(64, dtype="<i8")), "y": pa.array(np.ones(64))}),
            {"compression": "zstd"},
        ),
        (
            "put",
            "tables/parquet",
            pd.DataFrame({"a": [1, 2]}, index=pd.Index([0, 1])),
            {"encoding": "parquet"},
        ),
        ("put", "replaced", np.arange(3, dtype="<i8"), {"compression": "zstd"}),
    ]
    append = [
        ("put", "appended/array", np.arange(100, dtype="<f4"), {"compression": "zstd"}),
        ("put", "appended/table", pl.DataFrame({"k": ["a", "b"]}), {}),
        ("put", "replaced", np.arange(4, dtype="<i8"), {"compression": "deflate", "shuffle": True}),
    ]
    return [("w", first), ("a", append)]


ARCHIVES: dict[str, Callable[[], Steps]] = {
    "archive-v1.amber.zip": archive_v1_steps,
    "archive-v2.amber.zip": archive_v2_steps,
}


def archive_values(steps: Steps) -> dict[str, Any]:
    """The keys and values an archive made by `steps` holds, in its order."""
    out: dict[str, Any] = {}
    for _, ops in steps:
        for op in ops:
            if op[0] == "put":
                out.pop(op[1], None)  # a replaced key moves to the end, as the archive does
                out[op[1]] = op[2]
            else:
                del out[op[1]]
    return out


def write_archive(path: str | os.PathLike[str], steps: Steps) -> None:
    for mode, ops in steps:
        with amber.Archive(path, mode) as a:  # type: ignore[arg-type]
            for op in ops:
                if op[0] == "put":
                    a.put(op[1], op[2], **op[3])
                else:
                    del a[op[1]]


# --- PostgreSQL COPY -------------------------------------------------------------------------

#: (column, SQL type, type OID): the table the COPY stream is for.
PG_COLUMNS: list[tuple[str, str, int]] = [
    ("id", "int4", 23),
    ("flag", "bool", 16),
    ("small", "int2", 21),
    ("big", "int8", 20),
    ("obj_id", "oid", 26),
    ("real4", "float4", 700),
    ("real8", "float8", 701),
    ("amount", "numeric", 1700),
    ("label", "text", 25),
    ("code", "varchar(8)", 1043),
    ("fixed", "char(3)", 1042),
    ("ident", "name", 19),
    ("letter", '"char"', 18),
    ("raw", "bytea", 17),
    ("doc", "json", 114),
    ("docb", "jsonb", 3802),
    ("uid", "uuid", 2950),
    ("day", "date", 1082),
    ("clock", "time", 1083),
    ("clock_tz", "timetz", 1266),
    ("stamp", "timestamp", 1114),
    ("stamp_tz", "timestamptz", 1184),
    ("span", "interval", 1186),
    ("host", "inet", 869),
    ("net", "cidr", 650),
    ("ints", "int4[]", 1007),
    ("words", "text[]", 1009),
    ("grid", "float8[]", 1022),
    ("amounts", "numeric[]", 1231),
]
PG_TABLE = "golden_copy"
_U = uuid.UUID("12345678-1234-5678-1234-567812345678")


def pg_rows() -> list[tuple[Any, ...]]:
    """The rows of the COPY stream, as amber.pg reads them back (which is also what it wrote)."""
    return [
        (
            1,
            True,
            -32768,
            2**63 - 1,
            4_000_000_000,
            1.5,
            0.1,
            D("1.10"),
            "héllo ✓",
            "abc",
            "xyz",
            "pg_name",
            "q",
            b"\x00\xff",
            {"a": [1, 2.5, None], "b": "é"},
            {"k": {"n": True}},
            _U,
            dt.date(2024, 2, 29),
            dt.time(12, 30, 0, 123456),
            dt.time(1, 2, 3, tzinfo=dt.timezone(dt.timedelta(hours=5, minutes=30))),
            dt.datetime(2020, 1, 2, 3, 4, 5, 6),
            dt.datetime(2026, 11, 22, 8, 30, tzinfo=UTC),
            dt.timedelta(days=-3, seconds=7, microseconds=5),
            ipaddress.ip_interface("192.168.0.1/24"),
            ipaddress.ip_network("10.0.0.0/8"),
            [1, None, -3],
            ["a", None, "ü"],
            [[1.5, -0.0], [float("inf"), 2.0]],
            [D("NaN"), D("-0.0001")],
        ),
        (
            2,
            False,
            32767,
            -(2**63),
            0,
            float("-inf"),
            float("nan"),
            D("-12345678901234567890.123456789"),
            "",
            "",
            "   ",
            "",
            "z",
            b"",
            [],
            [],
            uuid.UUID(int=0),
            dt.date.max,  # PostgreSQL's infinity
            dt.time(0),
            dt.time(23, 59, 59, tzinfo=dt.timezone(-dt.timedelta(hours=11))),
            dt.datetime.min,  # -infinity
            dt.datetime.max.replace(tzinfo=UTC),  # infinity
            dt.timedelta(0),
            ipaddress.ip_address("::1"),
            ipaddress.ip_network("2001:db8::/32"),
            [],
            [],
            [],
            [D("Infinity")],
        ),
        (3, *([None] * (len(PG_COLUMNS) - 1))),
    ]


def pg_stream(rows: Iterable[tuple[Any, ...]]) -> bytes:
    """The COPY BINARY stream amber.pg's encoder writes for `rows` into `PG_COLUMNS`."""
    from amber import _native

    names = [name for name, _, _ in PG_COLUMNS]
    writer = _native.PgCopyWriter([(oid, None) for _, _, oid in PG_COLUMNS], names)
    out = bytearray()
    it = iter(rows)
    while chunk := writer.write_rows(it, 1 << 20):
        out += chunk
    out += writer.finish()
    return bytes(out)


def pg_parse(data: bytes) -> list[tuple[Any, ...]]:
    """The rows amber.pg's COPY parser reads from `data` for `PG_COLUMNS`."""
    from amber import _native

    names = [name for name, _, _ in PG_COLUMNS]
    reader = _native.PgReader([(oid, None) for _, _, oid in PG_COLUMNS], names, "rows")
    reader.feed(data)
    return list(reader.finish(True))


# --- writing ---------------------------------------------------------------------------------


def write_all(folder: Path) -> None:
    if folder.exists():
        shutil.rmtree(folder)  # no file of a case or family since removed stays behind
    (folder / "codec").mkdir(parents=True, exist_ok=True)
    (folder / "pg").mkdir(parents=True, exist_ok=True)
    register()
    try:
        for name in FAMILIES:
            frame, buffers = encode_family(name)
            (folder / "codec" / f"{name}.amber").write_bytes(frame)
            for i, buf in enumerate(buffers):
                (folder / "codec" / f"{name}.amber.{i}").write_bytes(buf)
        with open(folder / "codec" / "stream.amber", "wb") as f:
            for value in stream():
                amber.dump(value, f)
        for name, steps in ARCHIVES.items():
            path = folder / name
            if path.exists():
                path.unlink()
            write_archive(path, steps())
        (folder / "pg" / "copy.pgcopy").write_bytes(pg_stream(pg_rows()))
    finally:
        unregister()
    versions = [("amber", importlib.metadata.version("amber"))]
    versions.append(("python", ".".join(map(str, sys.version_info[:3]))))
    for lib in ("numpy", "pyarrow", "pandas", "polars"):
        versions.append((lib, importlib.metadata.version(lib)))
    lines = ["# The versions that wrote these files (tests/golden/make_files.py)."]
    lines += [f"{lib} {version}" for lib, version in versions]
    (folder / "written-by.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    args = sys.argv[1:]
    if args not in ([], ["--replace"]):
        sys.exit("usage: python tests/golden/make_files.py [--replace]")
    target = HERE / release()
    if target.exists() and not args:
        sys.exit(
            f"{target} exists: a release's golden files are what that release wrote, and later "
            "releases are tested on them. Pass --replace only to rewrite the files of the "
            "release being made (its version is the installed amber's)."
        )
    write_all(target)
    print(f"wrote {target}")
