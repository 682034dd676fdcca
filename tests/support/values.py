"""Values the codec must keep exactly, shared by the parts that store codec values: one of every
supported type (`VALUES`, user classes registered) and hypothesis strategies for arbitrary
nestings of them (`values`)."""

from __future__ import annotations

import collections
import dataclasses
import datetime as dt
import decimal
import enum
import fractions
import typing
import uuid
import zoneinfo
from typing import Any

from hypothesis import strategies as st

import amber


class Color(enum.Enum):
    RED = 1
    GREEN = "g"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Perm(enum.Flag):
    R = 1
    W = 2
    X = 4


@dataclasses.dataclass
class Point:
    x: int
    y: list[int]


@dataclasses.dataclass(frozen=True, slots=True)
class Frozen:
    a: int
    b: str


class Pair(typing.NamedTuple):
    left: Any
    right: Any


for _cls in (Color, Level, Perm, Point, Frozen, Pair):
    amber.register(_cls)

NY = zoneinfo.ZoneInfo("America/New_York")

VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    1,
    63,
    64,
    -1,
    -32,
    -33,
    127,
    128,
    -128,
    -129,
    2**15,
    2**31,
    -(2**31) - 1,
    2**63 - 1,
    -(2**63),
    2**63,
    -(2**63) - 1,
    2**64,
    10**100,
    -(10**100),
    0.0,
    -0.0,
    1.5,
    float("inf"),
    float("-inf"),
    float("nan"),
    1e-310,
    complex(1, -2),
    complex(float("nan"), -0.0),
    "",
    "a",
    "x" * 31,
    "x" * 32,
    "héllo wörld",
    "日本語",
    "\U0001f600",
    "\ud800",
    "a\udfffb",
    "\x00",
    b"",
    b"\x00\xff",
    bytes(range(256)),
    bytearray(b"mutable"),
    [],
    [1, [2, [3]]],
    (),
    (1,),
    tuple(range(8)),
    tuple(range(20)),
    {},
    {"a": 1},
    {1: "int key", (1, 2): "tuple key", None: 0, frozenset({1}): 2, 1.5: 3, b"k": 4},
    {str(i): i for i in range(20)},
    set(),
    {1, "a", (2, 3)},
    frozenset(),
    frozenset({1, 2}),
    dt.date(1, 1, 1),
    dt.date(9999, 12, 31),
    dt.time(0, 0),
    dt.time(23, 59, 59, 999999),
    dt.time(12, 0, tzinfo=dt.timezone.utc),
    dt.datetime(2024, 2, 29, 12, 30, 45, 123456),
    dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc),
    dt.datetime(2020, 1, 1, tzinfo=dt.timezone(dt.timedelta(hours=5, minutes=30))),
    dt.datetime(2020, 1, 1, tzinfo=dt.timezone(dt.timedelta(hours=-5), "EST")),
    dt.datetime(2020, 1, 1, tzinfo=dt.timezone(dt.timedelta(microseconds=1))),
    dt.datetime(2021, 11, 7, 1, 30, fold=1, tzinfo=NY),
    dt.datetime(2021, 11, 7, 1, 30, fold=0, tzinfo=NY),
    dt.timedelta(0),
    dt.timedelta(days=-999999999),
    dt.timedelta(days=999999999, seconds=86399, microseconds=999999),
    dt.timedelta(days=-1, seconds=5, microseconds=7),
    decimal.Decimal("1.10"),
    decimal.Decimal("-0"),
    decimal.Decimal("0E-7"),
    decimal.Decimal("NaN"),
    decimal.Decimal("-sNaN123"),
    decimal.Decimal("Infinity"),
    decimal.Decimal("-Infinity"),
    decimal.Decimal("1.234567890123456789012345678901234567890E+400"),
    uuid.UUID("12345678-1234-5678-1234-567812345678"),
    uuid.UUID(int=0),
    uuid.UUID(int=2**128 - 1, is_safe=uuid.SafeUUID.safe),
    fractions.Fraction(3, 7),
    fractions.Fraction(-(10**30), 7),
    collections.OrderedDict([("b", 1), ("a", 2)]),
    collections.deque([1, "two", (3,)]),
    collections.deque([1, 2], maxlen=3),
    collections.Counter("mississippi"),
    collections.defaultdict(list, {"a": [1]}),
    collections.defaultdict(None, {1: 2}),
    collections.defaultdict(collections.Counter),
    Color.RED,
    Color.GREEN,
    Level.HIGH,
    Perm.R | Perm.X,
    Perm(0),
    Point(1, [2, 3]),
    Frozen(7, "seven"),
    Pair(1, Pair("nested", None)),
]


def _moved_ordered_dict() -> collections.OrderedDict[str, int]:
    d = collections.OrderedDict([("a", 1), ("b", 2), ("c", 3)])
    d.move_to_end("a")
    return d


VALUES.append(_moved_ordered_dict())


# --- hypothesis: arbitrary nestings of every plain type ---------------------

atoms = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True),
    st.complex_numbers(allow_nan=True),
    st.text(st.characters(codec=None, exclude_categories=())),
    st.binary(),
    st.binary().map(bytearray),
    st.dates(),
    st.times(timezones=st.none() | st.just(dt.timezone.utc)),
    st.datetimes(timezones=st.none() | st.timezones(), allow_imaginary=False),
    st.timedeltas(),
    st.decimals(allow_nan=True, allow_infinity=True),
    st.uuids(),
    st.fractions(),
    st.sampled_from([Color.RED, Color.GREEN, Level.LOW, Perm.W]),
)
# Hashable atoms whose values equal themselves (NaN keys could never be looked up).
hashable_atoms = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(),
    st.binary(),
    st.dates(),
    st.datetimes(),
    st.decimals(allow_nan=False),
    st.uuids(),
    st.fractions(),
    st.sampled_from([Color.RED, Level.HIGH, Perm.X]),
)
hashables = st.recursive(
    hashable_atoms,
    lambda inner: st.tuples(inner, inner) | st.frozensets(inner, max_size=4),
    max_leaves=8,
)


values = st.recursive(
    atoms,
    lambda inner: st.one_of(
        st.lists(inner, max_size=6),
        st.lists(inner, max_size=6).map(tuple),
        st.dictionaries(hashables, inner, max_size=6),
        st.sets(hashables, max_size=6),
        st.frozensets(hashables, max_size=6),
        st.lists(inner, max_size=4).map(collections.deque),
        st.dictionaries(hashables, inner, max_size=4).map(collections.OrderedDict),
        st.builds(Pair, inner, inner),
        st.builds(Point, st.integers(), st.lists(st.integers(), max_size=3)),
    ),
    max_leaves=30,
)
