"""Golden vector cases: each name, the value and the dumps options.

`python tests/golden/cases.py --write` regenerates `vectors.txt` from the current encoder.
That is a deliberate act: the vectors pin the format, so any change to them must come with a
format version change or a spec change (docs/spec/format.md).
"""

from __future__ import annotations

import collections
import dataclasses
import datetime as dt
import decimal
import enum
import fractions
import sys
import typing
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import amber

VECTORS = Path(__file__).with_name("vectors.txt")


class Color(enum.Enum):
    RED = 1


@dataclasses.dataclass
class Point:
    x: int
    y: int


class Slotted:
    __slots__ = ("s",)

    def __eq__(self, other: object) -> bool:
        mine, theirs = getattr(self, "__dict__", None), getattr(other, "__dict__", None)
        return type(other) is type(self) and (self.s, mine) == (getattr(other, "s", None), theirs)


class Both(Slotted):
    """A __dict__ and a slot: OBJECT_STATE with the pair (attributes, slots)."""


class Pair(typing.NamedTuple):
    a: int
    b: str


class Tagged(Pair):
    """A named tuple with a __dict__: OBJECT_STATE with the fields as its base."""

    def __eq__(self, other: object) -> bool:
        return tuple.__eq__(self, other) is True and self.__dict__ == other.__dict__

    __hash__ = tuple.__hash__


class Secret:
    """Its own __getstate__/__setstate__: OBJECT_STATE with what __getstate__ returns."""

    def __init__(self, user: str) -> None:
        self.user, self.token = user, None

    def __getstate__(self) -> Any:
        return self.user

    def __setstate__(self, user: str) -> None:
        self.user, self.token = user, None

    def __eq__(self, other: object) -> bool:
        return type(other) is Secret and self.__dict__ == other.__dict__


REGISTER: list[tuple[type, str]] = [(Color, "golden.Color"), (Point, "golden.Point")]
REGISTER += [(Both, "golden.Both"), (Tagged, "golden.Tagged"), (Secret, "golden.Secret")]


def _shared() -> Any:
    d = {"k": 1}
    return [d, d]


def _cycle() -> Any:
    a: list[Any] = []
    a.append(a)
    return a


def _both() -> Any:
    b = Both()
    b.s, b.d = 1, [2]
    return b


def _tagged(me: bool = False) -> Any:
    t = Tagged(1, "z")
    t.n = t if me else 3
    return t


def _tuple_cycle() -> Any:
    lst: list[Any] = []
    t = (lst,)
    lst.append(t)
    return t


CASES: list[tuple[str, Callable[[], Any], dict[str, Any]]] = [
    ("none", lambda: None, {}),
    ("false", lambda: False, {}),
    ("true", lambda: True, {}),
    ("int_0", lambda: 0, {}),
    ("int_63", lambda: 63, {}),
    ("int_64", lambda: 64, {}),
    ("int_-1", lambda: -1, {}),
    ("int_-32", lambda: -32, {}),
    ("int_-33", lambda: -33, {}),
    ("int_-128", lambda: -128, {}),
    ("int_128", lambda: 128, {}),
    ("int_-32769", lambda: -32769, {}),
    ("int_2^31", lambda: 2**31, {}),
    ("int_2^63-1", lambda: 2**63 - 1, {}),
    ("int_-2^63", lambda: -(2**63), {}),
    ("int_2^63", lambda: 2**63, {}),
    ("int_-2^63-1", lambda: -(2**63) - 1, {}),
    ("int_2^100", lambda: 2**100, {}),
    ("float_1.5", lambda: 1.5, {}),
    ("float_-0.0", lambda: -0.0, {}),
    ("float_inf", lambda: float("inf"), {}),
    ("complex", lambda: complex(1.0, -2.0), {}),
    ("str_empty", lambda: "", {}),
    ("str_a", lambda: "a", {}),
    ("str_31", lambda: "x" * 31, {}),
    ("str_32", lambda: "x" * 32, {}),
    ("str_utf8", lambda: "héllo €", {}),
    ("str_surrogate", lambda: "a\ud800", {}),
    ("bytes", lambda: b"\x00\xff", {}),
    ("bytearray", lambda: bytearray(b"ab"), {}),
    ("list", lambda: [1, [2, None]], {}),
    ("list_16", lambda: list(range(16)), {}),
    ("tuple", lambda: (1, "a"), {}),
    ("tuple_8", lambda: tuple(range(8)), {}),
    ("dict", lambda: {"a": 1, 2: "b"}, {}),
    ("dict_keys_repeat", lambda: [{"id": 1}, {"id": 2}], {}),
    ("dict_shapes", lambda: [{"id": i, "ok": i > 1} for i in range(4)], {}),
    ("dict_shapes_nested", lambda: [{"at": {"x": i, "y": -i}, "n": i} for i in range(3)], {}),
    ("values_repeat", lambda: ["v" + str(i % 1) for i in range(3)], {}),
    ("set", lambda: {7}, {}),
    ("frozenset", lambda: frozenset({7}), {}),
    ("date", lambda: dt.date(2024, 2, 29), {}),
    ("time_tz_fold", lambda: dt.time(1, 2, 3, 4, tzinfo=dt.timezone.utc, fold=1), {}),
    ("datetime", lambda: dt.datetime(2020, 1, 2, 3, 4, 5, 6), {}),
    (
        "datetime_fixed_tz",
        lambda: dt.datetime(2020, 1, 1, tzinfo=dt.timezone(dt.timedelta(hours=-5), "EST")),
        {},
    ),
    ("timedelta", lambda: dt.timedelta(days=-1, seconds=5, microseconds=7), {}),
    ("decimal", lambda: decimal.Decimal("-1.10"), {}),
    ("uuid", lambda: uuid.UUID("12345678-1234-5678-1234-567812345678"), {}),
    ("fraction", lambda: fractions.Fraction(-3, 7), {}),
    ("ordered_dict", lambda: collections.OrderedDict([("b", 1), ("a", 2)]), {}),
    ("deque", lambda: collections.deque([1], maxlen=4), {}),
    ("counter", lambda: collections.Counter({"x": 2}), {}),
    ("defaultdict", lambda: collections.defaultdict(list, {1: [2]}), {}),
    ("enum", lambda: Color.RED, {}),
    ("dataclass", lambda: Point(1, 2), {}),
    ("object_state_slots", _both, {}),
    ("object_state_namedtuple", _tagged, {}),
    ("object_state_getstate", lambda: Secret("ann"), {}),
    ("object_state_cycle", lambda: _tagged(me=True), {"identity": True}),
    ("ndarray", lambda: np.array([1, 2, 3], dtype="<i4"), {}),
    ("ndarray_fortran", lambda: np.asfortranarray(np.arange(6, dtype=">u2").reshape(2, 3)), {}),
    ("npscalar", lambda: np.float64(1.5), {}),
    ("ndarray_zero_itemsize", lambda: np.ndarray((2, 3), dtype="S0"), {}),
    ("npscalar_zero_itemsize", lambda: np.str_(""), {}),
    ("ndarray_dtype_metadata", lambda: np.zeros(1, np.dtype("<i4", metadata={"unit": "m"})), {}),
    ("ndarray_dtype_titles", lambda: np.zeros(1, dtype=[(("T", "t"), "u1"), ("u", "u1")]), {}),
    ("ndarray_dtype_record", lambda: np.zeros(1, dtype=(np.record, [("a", "u1")])), {}),
    ("npscalar_dtype_record", lambda: np.zeros(1, dtype=(np.record, [("a", "u1")]))[0], {}),
    ("shared", _shared, {"identity": True}),
    ("cycle", _cycle, {"identity": True}),
    ("tuple_cycle", _tuple_cycle, {"identity": True}),
]


def register() -> None:
    for cls, name in REGISTER:
        amber.register(cls, name=name)


def unregister() -> None:
    for cls, _ in REGISTER:
        amber.unregister(cls)


def read_vectors() -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for line in VECTORS.read_text().splitlines():
        if line and not line.startswith("#"):
            name, hexed = line.split()
            out[name] = bytes.fromhex(hexed)
    return out


def write_vectors() -> None:
    register()
    try:
        lines = [
            "# Generated by tests/golden/cases.py --write. Checked byte for byte by",
            "# tests/codec/test_golden.py and crates/amber-core/tests/golden.rs: name, then frame hex.",
        ]
        lines += [f"{name} {amber.dumps(make(), **opts).hex()}" for name, make, opts in CASES]
        VECTORS.write_text("\n".join(lines) + "\n")
    finally:
        unregister()


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: cases.py --write")
    write_vectors()
