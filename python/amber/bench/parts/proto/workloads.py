"""The proto part's workloads: a family of message shapes, each its own message type, filled
deterministically by code.

`bench.Test` (protos/test.proto, which imports protos/imported.proto) is the message amber.proto
was first tuned on: every scalar type, an enum, a nested message, eight repeated messages, a
packed repeated int32, a map<string, int64> of ten entries, a oneof, a proto3 optional field, an
imported message and a repeated string, 766 bytes on the wire. The other shapes are the messages
of protos/shapes.proto (see `SHAPES`): maps of messages, of scalars and of bytes; many strings;
packed numbers; a deep chain of sub-messages; many scalar fields; records in a repeated message
field and in a map; a tiny message.

The value handed to every contender is a `Contents`: the shape, the keyword arguments its
constructor gets (plain Python values; dicts for messages, lists of dicts for repeated messages,
dicts for maps) and what reading every field of the message must give (the shape's `read`),
worked out from those arguments alone.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from amber.bench.engine.contender import Workload

PROTOS = Path(__file__).parent / "protos"
SCHEMA = PROTOS / "test.proto"
SHAPES_SCHEMA = PROTOS / "shapes.proto"
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


def read_all(m: Any, choice: Callable[[Any], Any] | None = None) -> tuple[Any, ...]:
    """Read every field of a `bench.Test`: each scalar, each field of every nested message,
    every repeated field iterated, the map's items, the oneof's and the optional's values.

    `choice` reads the oneof's value where a runtime does not make it an attribute of the
    message (protobuf-py makes the oneof one attribute, `m.choice`)."""
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
        m.choice_name if choice is None else choice(m),
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


def comparable(reading: Any) -> Any:
    """A reading with every map's items in key order, at any depth (a map's iteration order is
    the runtime's, the wire order after a parse, not part of the message), and an enum's value
    as its number (protobuf-py reads an enum field as an `IntEnum` member)."""
    if isinstance(reading, dict):
        return sorted((k, comparable(v)) for k, v in reading.items())
    if isinstance(reading, tuple):
        return tuple(comparable(v) for v in reading)
    if isinstance(reading, list):
        return [comparable(v) for v in reading]
    if isinstance(reading, int) and type(reading) not in (int, bool):
        return int(reading)
    return reading


# --- map of messages ------------------------------------------------------------------------------

POINTS, COUNTS, WEIGHTS, BLOBS = 24, 60, 30, 16


def map_of_messages() -> dict[str, Any]:
    """`MapOfMessages`: 24 points, 60 int32 -> int64 counts, 30 weights, 16 blobs of 64 bytes
    (keys in order, as a deterministic serialization writes them)."""
    return dict(
        points={
            f"point-{i:02d}": dict(
                id=1000 + i,
                name=f"point number {i}",
                x=i * 0.5,
                y=-i * 1.25,
                tags=[i % 7, i % 11, i % 13, 100 + i],
            )
            for i in range(POINTS)
        },
        counts={i * 3: i * 1_000_003 for i in range(COUNTS)},
        weights={f"w-{i:02d}": i / 8 for i in range(WEIGHTS)},
        blobs={f"blob-{i:02d}": bytes((i * 7 + j) % 256 for j in range(64)) for i in range(BLOBS)},
    )


def _point(p: Any) -> tuple[Any, ...]:
    return (p.id, p.name, p.x, p.y, list(p.tags))


def read_map_of_messages(m: Any) -> tuple[Any, ...]:
    return (
        {k: _point(p) for k, p in m.points.items()},
        dict(m.counts.items()),
        dict(m.weights.items()),
        dict(m.blobs.items()),
    )


def expect_map_of_messages(kw: dict[str, Any]) -> tuple[Any, ...]:
    def point(d: dict[str, Any]) -> tuple[Any, ...]:
        return (d["id"], d["name"], d["x"], d["y"], list(d["tags"]))

    return (
        {k: point(d) for k, d in kw["points"].items()},
        dict(kw["counts"]),
        dict(kw["weights"]),
        dict(kw["blobs"]),
    )


# --- many strings --------------------------------------------------------------------------------

WORDS, ATTRIBUTES = 120, 40
_SYLLABLES = ("ka", "lo", "mi", "ne", "ru", "so", "ta", "vi", "ze", "qu")
_NON_ASCII = ("café", "naïve", "Zürich", "日本語", "Ελλάδα", "наука")


def _word(i: int) -> str:
    text = "".join(_SYLLABLES[(i * 7 + k * 3) % len(_SYLLABLES)] for k in range(2 + i % 15))
    return f"{text} {_NON_ASCII[i % len(_NON_ASCII)]}" if i % 10 == 0 else text


def many_strings() -> dict[str, Any]:
    """`ManyStrings`: a title, 120 words of 4 to 30 characters (every tenth with a non-ASCII
    word), 40 attributes of a key and a value of 10 to 40 characters."""
    return dict(
        title="a message of many strings",
        words=[_word(i) for i in range(WORDS)],
        attributes={
            f"attribute-{i:02d}": f"value {i}: " + _word(i + 3) * (1 + i % 3)
            for i in range(ATTRIBUTES)
        },
    )


def read_many_strings(m: Any) -> tuple[Any, ...]:
    return (m.title, list(m.words), dict(m.attributes.items()))


def expect_many_strings(kw: dict[str, Any]) -> tuple[Any, ...]:
    return (kw["title"], list(kw["words"]), dict(kw["attributes"]))


# --- packed numbers ------------------------------------------------------------------------------

PACKED = (
    ("small", 600),
    ("large", 400),
    ("unsigned", 300),
    ("deltas", 400),
    ("offsets", 300),
    ("codes", 300),
    ("stamps", 300),
    ("values", 300),
    ("ratios", 300),
    ("flags", 200),
)


def packed_numbers() -> dict[str, Any]:
    """`PackedNumbers`: 3,400 values in ten packed fields: varints of one byte (int32) and of
    up to eight (int64, uint64), zigzag (sint32, sint64), fixed32, sfixed64, double, float
    (exact in float32) and bool."""
    n = dict(PACKED)
    return dict(
        small=[(i * 37) % 128 for i in range(n["small"])],
        large=[(i * 2_654_435_761) % 2**50 for i in range(n["large"])],
        unsigned=[(i * 11_400_714_819_323_198_485) % 2**64 for i in range(n["unsigned"])],
        deltas=[(i * 7919) % 20_001 - 10_000 for i in range(n["deltas"])],
        offsets=[(-1) ** i * (i * 1_000_000_007) for i in range(n["offsets"])],
        codes=[(i * 2_246_822_519) % 2**32 for i in range(n["codes"])],
        stamps=[
            1_700_000_000_000_000 + i * 1_000_003 - (i % 2) * 2**62 for i in range(n["stamps"])
        ],
        values=[i * 0.1 - 15.0 for i in range(n["values"])],
        ratios=[(i - 150) / 8 for i in range(n["ratios"])],
        flags=[i % 3 == 0 for i in range(n["flags"])],
    )


_PACKED_FIELDS = tuple(name for name, _ in PACKED)


def read_packed_numbers(m: Any) -> tuple[Any, ...]:
    return (
        list(m.small),
        list(m.large),
        list(m.unsigned),
        list(m.deltas),
        list(m.offsets),
        list(m.codes),
        list(m.stamps),
        list(m.values),
        list(m.ratios),
        list(m.flags),
    )


def expect_packed_numbers(kw: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(list(kw[name]) for name in _PACKED_FIELDS)


# --- deep chain ----------------------------------------------------------------------------------

DEPTH = 40


def deep_chain() -> dict[str, Any]:
    """`Link`: 40 links, each holding the next; `remaining` counts the links after it."""
    link: dict[str, Any] | None = None
    for remaining in range(DEPTH):
        kw: dict[str, Any] = dict(remaining=remaining, name=f"link {DEPTH - remaining}")
        kw["weight"] = remaining * 1_000_000_007
        if link is not None:
            kw["next"] = link
        link = kw
    assert link is not None
    return link


def read_deep_chain(m: Any) -> list[tuple[Any, ...]]:
    """Every link's fields, walking `next` until the link with none after it."""
    out = [(m.remaining, m.name, m.weight)]
    while m.remaining:
        m = m.next
        out.append((m.remaining, m.name, m.weight))
    return out


def expect_deep_chain(kw: dict[str, Any]) -> list[tuple[Any, ...]]:
    out = []
    link: dict[str, Any] | None = kw
    while link is not None:
        out.append((link["remaining"], link["name"], link["weight"]))
        link = link.get("next")
    return out


# --- scalar fields -------------------------------------------------------------------------------

_SCALAR_VALUES: tuple[tuple[tuple[str, str, str], tuple[Any, Any, Any]], ...] = (
    (("d1", "d2", "d3"), (3.141592653589793, -2.5e-300, 6.02214076e23)),
    (("f1", "f2", "f3"), (0.5, -1024.75, 1048576.5)),  # exact in float32
    (("i32a", "i32b", "i32c"), (7, -2_000_000_000, 300_000)),
    (("i64a", "i64b", "i64c"), (42, -(2**62), 2**40 + 3)),
    (("u32a", "u32b", "u32c"), (1, 4_000_000_000, 65_536)),
    (("u64a", "u64b", "u64c"), (99, 2**64 - 1, 2**35)),
    (("s32a", "s32b", "s32c"), (-1, 2**31 - 1, -(2**31))),
    (("s64a", "s64b", "s64c"), (-3, 2**63 - 1, -(2**63))),
    (("x32a", "x32b", "x32c"), (5, 2**32 - 1, 123_456_789)),
    (("x64a", "x64b", "x64c"), (6, 2**64 - 1, 2**50 + 1)),
    (("sx32a", "sx32b", "sx32c"), (-7, 2**31 - 1, -(2**31))),
    (("sx64a", "sx64b", "sx64c"), (-8, 2**63 - 1, -(2**63))),
    (("b1", "b2", "b3"), (True, True, True)),
    (("s1", "s2", "s3"), ("first", "a longer second string of text", "drittes Feld: ü")),
    (("y1", "y2", "y3"), (b"\x00\x01\x02", b"\xff" * 16, bytes(range(40)))),
)
SCALAR_FIELDS = tuple(name for names, _ in _SCALAR_VALUES for name in names)
_read_scalars = operator.attrgetter(*SCALAR_FIELDS)


def scalar_fields() -> dict[str, Any]:
    """`ScalarFields`: 45 fields, three of each of the 15 scalar types, none at its default."""
    return {n: v for names, values in _SCALAR_VALUES for n, v in zip(names, values, strict=True)}


def read_scalar_fields(m: Any) -> tuple[Any, ...]:
    return _read_scalars(m)


def expect_scalar_fields(kw: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(kw[name] for name in SCALAR_FIELDS)


# --- records -------------------------------------------------------------------------------------

RECORDS, BY_ID = 150, 60


def _record(i: int) -> dict[str, Any]:
    return dict(
        id=100_000 + i,
        name=f"person {i}",
        email=f"person.{i}@example.org",
        age=18 + i % 60,
        balance=i * 10.25 - 300.0,
        active=i % 4 != 0,
        tags=[f"tag{k}" for k in range(i % 4)],
    )


def records() -> dict[str, Any]:
    """`Records`: 150 records in a repeated message field and 60 in a map<int64, Record>,
    each with two ints, two strings, a double, a bool and up to three tags."""
    return dict(
        records=[_record(i) for i in range(RECORDS)],
        by_id={100_000 + i * 2: _record(i * 2) for i in range(BY_ID)},
    )


def _read_record(r: Any) -> tuple[Any, ...]:
    return (r.id, r.name, r.email, r.age, r.balance, r.active, list(r.tags))


def read_records(m: Any) -> tuple[Any, ...]:
    return (
        [_read_record(r) for r in m.records],
        {k: _read_record(r) for k, r in m.by_id.items()},
    )


def expect_records(kw: dict[str, Any]) -> tuple[Any, ...]:
    def record(d: dict[str, Any]) -> tuple[Any, ...]:
        return (
            d["id"],
            d["name"],
            d["email"],
            d["age"],
            d["balance"],
            d["active"],
            list(d["tags"]),
        )

    return (
        [record(d) for d in kw["records"]],
        {k: record(d) for k, d in kw["by_id"].items()},
    )


# --- tiny message --------------------------------------------------------------------------------


def tiny() -> dict[str, Any]:
    """`Tiny`: an int32, a short string and a bool."""
    return dict(id=42, name="tiny", active=True)


def read_tiny(m: Any) -> tuple[Any, ...]:
    return (m.id, m.name, m.active)


def expect_tiny(kw: dict[str, Any]) -> tuple[Any, ...]:
    return (kw["id"], kw["name"], kw["active"])


# --- the family ----------------------------------------------------------------------------------

SHAPE_OPS = ("serialize", "parse", "parse and read")
ALL_OPS = (
    *SHAPE_OPS,
    *("build", "to dict", "from dict", "to JSON", "from JSON"),
)


@dataclass(frozen=True)
class Shape:
    """One message shape: its workload name, message type, contents, how every field is read
    (`read`), what that reading must give for given contents (`expect`), and the operations
    timed on it. `read_oneof` is `read` for a runtime that holds a oneof as one attribute
    (protobuf-py), when the shape has a oneof."""

    name: str
    message: str
    description: str
    contents: Callable[[], dict[str, Any]]
    read: Callable[[Any], Any]
    expect: Callable[[dict[str, Any]], Any]
    ops: tuple[str, ...] = SHAPE_OPS
    read_oneof: Callable[[Any], Any] | None = None

    def workload(self) -> Workload:
        return Workload(self.name, self.description, self.build, size=1)

    def build(self) -> Contents:
        kw = self.contents()
        return Contents(self, kw, self.expect(kw))


@dataclass(frozen=True)
class Contents:
    """What every contender gets: the shape, its constructor's arguments and the reading they
    imply."""

    shape: Shape
    kwargs: dict[str, Any]
    expected: Any


def _oneof_value(m: Any) -> Any:
    return m.choice.value


BENCH_TEST = Shape(
    "bench.Test",
    MESSAGE,
    "the benchmark's bench.Test: every scalar type, an enum, a nested message, 8 repeated "
    "messages, a packed repeated int32 (28 values), a map<string, int64> (10 entries), a "
    "oneof, an optional, an imported message, 10 repeated strings",
    contents,
    read_all,
    expected_reading,
    ops=ALL_OPS,
    read_oneof=lambda m: read_all(m, _oneof_value),
)

SHAPES: tuple[Shape, ...] = (
    BENCH_TEST,
    Shape(
        "map of messages",
        "bench.shapes.MapOfMessages",
        f"a map<string, Point> of {POINTS} messages, a map<int32, int64> of {COUNTS}, a "
        f"map<string, double> of {WEIGHTS} and a map<string, bytes> of {BLOBS} blobs of 64 bytes",
        map_of_messages,
        read_map_of_messages,
        expect_map_of_messages,
    ),
    Shape(
        "many strings",
        "bench.shapes.ManyStrings",
        f"a title, {WORDS} repeated strings of 4 to 36 characters (some non-ASCII) and a "
        f"map<string, string> of {ATTRIBUTES}",
        many_strings,
        read_many_strings,
        expect_many_strings,
    ),
    Shape(
        "packed numbers",
        "bench.shapes.PackedNumbers",
        f"{sum(n for _, n in PACKED):,} values in 10 packed repeated fields: int32, int64, "
        "uint64, sint32, sint64, fixed32, sfixed64, double, float, bool",
        packed_numbers,
        read_packed_numbers,
        expect_packed_numbers,
    ),
    Shape(
        "deep chain",
        "bench.shapes.Link",
        f"a chain of {DEPTH} sub-messages, each link an int32, a string, an int64 and the next",
        deep_chain,
        read_deep_chain,
        expect_deep_chain,
    ),
    Shape(
        "scalar fields",
        "bench.shapes.ScalarFields",
        f"{len(SCALAR_FIELDS)} singular fields, three of each of the 15 scalar types",
        scalar_fields,
        read_scalar_fields,
        expect_scalar_fields,
    ),
    Shape(
        "records",
        "bench.shapes.Records",
        f"{RECORDS} records (2 ints, 2 strings, a double, a bool, up to 3 tags) in a repeated "
        f"message field and {BY_ID} in a map<int64, Record>",
        records,
        read_records,
        expect_records,
    ),
    Shape(
        "tiny message",
        "bench.shapes.Tiny",
        "an int32, a string and a bool",
        tiny,
        read_tiny,
        expect_tiny,
    ),
)
SHAPES_BY_NAME = {s.name: s for s in SHAPES}
WORKLOADS: dict[str, Callable[[], Workload]] = {s.name: s.workload for s in SHAPES}
