"""The proto part's workload: seed 001's `bench.Test` message (protos/test.proto, which imports
protos/imported.proto), filled with every scalar type, an enum, a nested message, eight repeated
messages, a packed repeated int32, a map<string, int64> of ten entries, a oneof, a proto3
optional field, an imported message and a repeated string: 766 bytes on the wire.

The value handed to every contender is a `Seed001`: the keyword arguments the constructor gets
(plain Python values; dicts for messages, lists of dicts for repeated messages) and what reading
every field of the message must give (`read_all`), worked out from those arguments alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from amber.bench.engine.contender import Workload

PROTOS = Path(__file__).parent / "protos"
SCHEMA = PROTOS / "test.proto"
MESSAGE = "bench.Test"


def contents() -> dict[str, Any]:
    """The constructor's keyword arguments: a new dict (and new lists) on every call."""
    return dict(
        f_double=3.14159,
        f_float=2.5,  # exact in float32, so it reads back as the same Python float
        f_int32=-123456,
        f_int64=1234567890123,
        f_uint32=4000000000,
        f_uint64=2**60,
        f_sint32=-99,
        f_sint64=-(2**40),
        f_fixed32=77,
        f_fixed64=2**50,
        f_sfixed32=-5,
        f_sfixed64=-(2**45),
        f_bool=True,
        f_string="hello world, a string of some length",
        f_bytes=b"\x00\x01binary payload" * 4,
        color=2,
        nested=dict(id=1, name="nested one", score=0.5, tags=[1, 2, 3, 4, 5]),
        items=[dict(id=i, name=f"item {i}", score=i * 1.5, tags=list(range(i))) for i in range(8)],
        numbers=list(range(0, 1000, 37)),
        counts={f"key{i}": i * 1000 for i in range(10)},
        choice_name="chosen",
        note="a note",
        address=dict(street="1 Main St", city="Springfield", zip=12345, lines=["a", "b", "c"]),
        labels=[f"label-{i}" for i in range(10)],
    )


SCALARS = (
    *("f_double", "f_float", "f_int32", "f_int64", "f_uint32", "f_uint64", "f_sint32"),
    *("f_sint64", "f_fixed32", "f_fixed64", "f_sfixed32", "f_sfixed64", "f_bool", "f_string"),
    *("f_bytes", "color"),
)


def read_all(m: Any) -> tuple[Any, ...]:
    """Read every field of a `bench.Test`: each scalar, each field of every nested message,
    every repeated field iterated, the map's items, the oneof's and the optional's values."""
    n = m.nested
    a = m.address
    return (
        m.f_double,
        m.f_float,
        m.f_int32,
        m.f_int64,
        m.f_uint32,
        m.f_uint64,
        m.f_sint32,
        m.f_sint64,
        m.f_fixed32,
        m.f_fixed64,
        m.f_sfixed32,
        m.f_sfixed64,
        m.f_bool,
        m.f_string,
        m.f_bytes,
        m.color,
        (n.id, n.name, n.score, list(n.tags)),
        [(it.id, it.name, it.score, list(it.tags)) for it in m.items],
        list(m.numbers),
        dict(m.counts.items()),
        m.choice_name,
        m.note,
        (a.street, a.city, a.zip, list(a.lines)),
        list(m.labels),
    )


def expected_reading(kw: dict[str, Any]) -> tuple[Any, ...]:
    """What `read_all` must return for a message built from `kw`."""

    def sub(d: dict[str, Any]) -> tuple[Any, ...]:
        return (d["id"], d["name"], d["score"], list(d["tags"]))

    a = kw["address"]
    return (
        *(kw[name] for name in SCALARS),
        sub(kw["nested"]),
        [sub(it) for it in kw["items"]],
        list(kw["numbers"]),
        dict(kw["counts"]),
        kw["choice_name"],
        kw["note"],
        (a["street"], a["city"], a["zip"], list(a["lines"])),
        list(kw["labels"]),
    )


def comparable(reading: tuple[Any, ...]) -> tuple[Any, ...]:
    """A reading with the map's items in key order: a map's iteration order is the runtime's
    (the wire order after a parse), not part of the message."""
    return tuple(sorted(v.items()) if isinstance(v, dict) else v for v in reading)


@dataclass(frozen=True)
class Seed001:
    """What every contender gets: the constructor's arguments and the reading they imply."""

    kwargs: dict[str, Any]
    expected: tuple[Any, ...]


def seed001() -> Seed001:
    kw = contents()
    return Seed001(kw, expected_reading(kw))


def seed001_workload() -> Workload:
    return Workload(
        "seed001",
        "seed 001's bench.Test: every scalar type, an enum, a nested message, 8 repeated "
        "messages, a packed repeated int32 (28 values), a map<string, int64> (10 entries), a "
        "oneof, an optional, an imported message, 10 repeated strings",
        seed001,
        size=1,
    )


WORKLOADS = {"seed001": seed001_workload}
