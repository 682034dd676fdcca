"""amber.proto: message classes loaded from .proto files, checked against Google's protobuf.

Google's package is the oracle: its classes are built at run time from the descriptor set amber
compiled (no protoc), and the vectors in crates/amber-core/tests/data/proto/runtime hold inputs
and `SerializeToString(deterministic=True)` outputs that Google's upb backend produced.
"""

from __future__ import annotations

import copy
import json
import math
import pickle
import random
import struct
from pathlib import Path
from typing import Any

import pytest

import amber
import amber.proto as P
from tests.proto.wire import pb_len, varint

DATA = Path(__file__).resolve().parent.parent / "crates" / "amber-core" / "tests" / "data" / "proto"
CONF = DATA / "conformance"
FILES = [
    "test_messages_proto3.proto",
    "test_messages_proto2.proto",
    "test_messages_edition2023.proto",
]


@pytest.fixture(scope="module")
def conf() -> P.Namespace:
    return P.load(*FILES, include=[CONF])


def _google_pool(ns: P.Namespace) -> Any:
    """Google's descriptor pool holding the files amber compiled for `ns` (the oracle's classes
    are made from it at run time, as `message_factory.GetMessageClass` makes them)."""
    from google.protobuf import descriptor_pb2, descriptor_pool

    pool = descriptor_pool.DescriptorPool()
    for f in descriptor_pb2.FileDescriptorSet.FromString(ns.descriptor_set()).file:
        pool.Add(f)
    return pool


SHOP = """
syntax = "proto3";
package shop;
message Item { string sku = 1; int32 qty = 2; repeated int64 tags = 3; }
message Order {
  int64 id = 1;
  repeated Item items = 2;
  map<string, int64> counts = 3;
  optional string note = 4;
  Item main = 5;
  oneof pay { string card = 6; int32 cash = 7; Item voucher = 14; }
  repeated int32 nums = 8;
  enum Kind { K_NONE = 0; K_A = 1; }
  Kind kind = 9;
  double d = 10;
  float f = 11;
  bytes b = 12;
  map<int32, Item> by_id = 13;
  uint64 big = 15;
  bool ok = 16;
}
"""


@pytest.fixture(scope="module")
def shop() -> Any:
    return P.load_text(SHOP, name="shop.proto").shop


# --- wire vectors from Google's upb -------------------------------------------------------------


def _vectors() -> list[tuple[str, str, bytes, str]]:
    out = []
    for name in ["vectors_proto3.txt", "vectors_proto2.txt", "vectors_edition2023.txt"]:
        for line in (DATA / "runtime" / name).read_text().splitlines():
            if line.startswith("#") or not line.strip():
                continue
            kind, full, inp, exp = line.split()
            out.append((kind, full, bytes.fromhex(inp), exp))
    return out


def test_vectors_match_upb_byte_for_byte(conf: P.Namespace) -> None:
    vectors = _vectors()
    assert len(vectors) > 200
    for kind, full, data, expected in vectors:
        cls = conf.types[full]
        try:
            m = cls.FromString(data)
        except P.DecodeError:
            assert expected == "ERR", (kind, full, data.hex())
            continue
        assert expected != "ERR", (kind, full, data.hex())
        out = m.SerializeToString(deterministic=True)
        assert out.hex() == expected, (kind, full)
        # A copy and a merge into an empty message write the same bytes.
        m2 = cls()
        m2.MergeFrom(m)
        assert m2.SerializeToString(deterministic=True) == out
        assert copy.deepcopy(m) == m
        assert pickle.loads(pickle.dumps(m)) == m


# --- Google's protobuf as the oracle --------------------------------------------------------------


@pytest.fixture(scope="module")
def google(conf: P.Namespace) -> dict[str, Any]:
    pytest.importorskip("google.protobuf")
    from google.protobuf import message_factory

    pool = _google_pool(conf)
    return {
        name: message_factory.GetMessageClass(pool.FindMessageTypeByName(name))
        for name in [
            "protobuf_test_messages.proto3.TestAllTypesProto3",
            "protobuf_test_messages.proto2.TestAllTypesProto2",
            "protobuf_test_messages.editions.TestAllTypesEdition2023",
        ]
    }


def _random_values(rng: random.Random) -> dict[str, Any]:
    s = "".join(rng.choice("abcé😀\n\x00z") for _ in range(rng.randrange(8)))
    return {
        "optional_int32": rng.choice([0, 1, -1, 2**31 - 1, -(2**31), 150]),
        "optional_int64": rng.choice([0, -1, 2**63 - 1, -(2**63), 1 << 40]),
        "optional_uint32": rng.choice([0, 1, 2**32 - 1]),
        "optional_uint64": rng.choice([0, 2**64 - 1, 1 << 50]),
        "optional_sint32": rng.choice([0, -5, 2**31 - 1]),
        "optional_sint64": rng.choice([0, -(2**63)]),
        "optional_fixed32": rng.randrange(2**32),
        "optional_fixed64": rng.randrange(2**64),
        "optional_sfixed32": rng.randrange(-(2**31), 2**31),
        "optional_sfixed64": rng.randrange(-(2**63), 2**63),
        "optional_float": rng.choice([0.0, -0.0, 1.5, math.inf, -1e30]),
        "optional_double": rng.choice([0.0, -0.0, 1.5, math.inf, 1e-300, math.pi]),
        "optional_bool": rng.random() < 0.5,
        "optional_string": s,
        "optional_bytes": bytes(rng.randrange(256) for _ in range(rng.randrange(6))),
        "optional_nested_message": {"a": rng.randrange(100)},
        "optional_nested_enum": rng.choice([0, 1, 2]),
        "repeated_int32": [rng.randrange(-1000, 1000) for _ in range(rng.randrange(5))],
        "repeated_string": [s, s + "x"][: rng.randrange(3)],
        "repeated_nested_message": [{"a": i} for i in range(rng.randrange(4))],
        "map_string_string": {s: "v", "k": s},
        "map_int32_int32": {rng.randrange(-5, 5): rng.randrange(100) for _ in range(3)},
        "oneof_uint32" if rng.random() < 0.5 else "oneof_string": (
            rng.randrange(10) if rng.random() < 0.5 else "x"
        ),
    }


def test_differential_against_google(conf: P.Namespace, google: dict[str, Any]) -> None:
    rng = random.Random(20261125)
    for full, g_cls in google.items():
        a_cls = conf.types[full]
        for _ in range(60):
            values = _random_values(rng)
            if "oneof_uint32" in values and not isinstance(values["oneof_uint32"], int):
                values["oneof_uint32"] = 3
            if "oneof_string" in values and not isinstance(values["oneof_string"], str):
                values["oneof_string"] = "s"
            g = g_cls(**values)
            a = a_cls(**values)
            g_bytes = g.SerializeToString(deterministic=True)
            # Built from the same values, amber writes Google's bytes.
            assert a.SerializeToString(deterministic=True) == g_bytes
            # Google's bytes parse equal in amber and back.
            parsed = a_cls.FromString(g.SerializeToString())
            assert parsed == a
            assert g_cls.FromString(parsed.SerializeToString()) == g
            assert parsed.ByteSize() == g.ByteSize()
            for f, value in parsed.ListFields():
                assert g.HasField(f.name) if f.has_presence else True
                if not isinstance(value, (P.RepeatedContainer, P.MapContainer, P.Message)):
                    gv = getattr(g, f.name)
                    assert value == gv or (value != value and gv != gv), f.name


TAG_WIDTHS = """
syntax = "proto3";
package tw;
message T {
  int64 a = 1; sint32 b = 15; sint64 c = 16; fixed32 d = 2047; double e = 2048;
  string s = 262143; bytes y = 262144; optional uint64 u = 33554431; bool t = 33554432;
  repeated string rs = 536870911; repeated bytes ry = 3; optional string os = 4;
  optional float f = 5; optional int32 i = 6; T child = 7; repeated T kids = 8;
  uint32 w = 9; sfixed64 x = 10; optional sfixed32 z = 11;
}
"""


def test_every_varint_and_tag_width_writes_as_google() -> None:
    """Each singular number, string and bytes field, set in Python or parsed, written with values
    of every varint length (1 to 10 bytes, each side of each length's bound) and tags of every
    width (1 to 5 bytes), and repeated strings and bytes kept as objects or as parsed spans:
    byte for byte Google's, and each value read back."""
    pytest.importorskip("google.protobuf")
    from google.protobuf import message_factory

    root = P.load_text(TAG_WIDTHS, name="tw.proto")
    ns = root.tw
    g_cls = message_factory.GetMessageClass(_google_pool(root).FindMessageTypeByName("tw.T"))
    bounds = [0, 1]
    for bits in range(7, 64, 7):
        bounds += [2**bits - 1, 2**bits, 2**bits + 1]
    bounds.append(2**64 - 1)

    def fits(lo: int, hi: int) -> list[int]:
        vals = [v for v in bounds if lo <= v <= hi] + [-v for v in bounds if lo <= -v <= hi]
        return [*vals, hi, lo]

    kinds: dict[str, list[Any]] = {
        "a": fits(-(2**63), 2**63 - 1),
        "b": fits(-(2**31), 2**31 - 1),
        "c": fits(-(2**63), 2**63 - 1),
        "d": fits(0, 2**32 - 1),
        "e": [0.0, -0.0, 1.5, math.inf, -1e300],
        "u": fits(0, 2**64 - 1),
        "t": [False, True],
        "f": [0.0, -0.0, 2.5, -math.inf],
        "i": fits(-(2**31), 2**31 - 1),
        "w": fits(0, 2**32 - 1),
        "x": fits(-(2**63), 2**63 - 1),
        "z": fits(-(2**31), 2**31 - 1),
        "s": ["", "a", "é" * 70, "x" * 200, "😀\x00"],
        "os": ["", "b" * 20000],
        "y": [b"", b"\xff" * 129, b"\x00"],
    }
    rng = random.Random(27)
    for name, values in kinds.items():
        for v in values:
            for extra in ({}, {"child": {name: v}, "kids": [{name: v}, {}]}):
                a, g = ns.T(**{name: v}, **extra), g_cls(**{name: v}, **extra)
                want = g.SerializeToString()
                assert a.SerializeToString() == want, (name, v)
                assert a.ByteSize() == len(want)
                parsed = ns.T.FromString(want)
                assert parsed.SerializeToString() == want, (name, v)
                got = getattr(parsed, name)
                assert got == v or (got != got and v != v), (name, v, got)
                # Changed after the parse: the new value is written.
                setattr(parsed, name, values[rng.randrange(len(values))])
                g2 = g_cls.FromString(want)
                setattr(g2, name, getattr(parsed, name))
                assert parsed.SerializeToString() == g2.SerializeToString(), name
    for rs, ry in (
        ([], []),
        (["a"], [b""]),
        ([f"s{i}" * (i % 50) for i in range(200)], [bytes([i]) * i for i in range(200)]),
        (["é", "", "😀" * 40], [b"\x80" * 300]),
    ):
        a, g = ns.T(rs=rs, ry=ry), g_cls(rs=rs, ry=ry)
        want = g.SerializeToString()
        assert a.SerializeToString() == want
        parsed = ns.T.FromString(want)
        assert parsed.SerializeToString() == want
        assert list(parsed.rs) == rs and list(parsed.ry) == ry
        parsed.rs.append("new")
        g.rs.append("new")
        assert parsed.SerializeToString() == g.SerializeToString()
        # Reached through a repeated message field too.
        a, g = ns.T(kids=[{"rs": rs}, {"ry": ry}]), g_cls(kids=[{"rs": rs}, {"ry": ry}])
        assert a.SerializeToString() == g.SerializeToString()


NUMERIC_KINDS = {
    "int32": lambda r: r.choice([0, -1, 150, 2**31 - 1, -(2**31), r.randrange(-(2**31), 2**31)]),
    "int64": lambda r: r.choice([0, -1, 2**63 - 1, -(2**63), r.randrange(-(2**63), 2**63)]),
    "uint32": lambda r: r.choice([0, 1, 2**32 - 1, r.randrange(2**32)]),
    "uint64": lambda r: r.choice([0, 2**64 - 1, r.randrange(2**64)]),
    "sint32": lambda r: r.choice([0, -1, 2**31 - 1, -(2**31), r.randrange(-(2**31), 2**31)]),
    "sint64": lambda r: r.choice([0, -1, -(2**63), r.randrange(-(2**63), 2**63)]),
    "fixed32": lambda r: r.randrange(2**32),
    "fixed64": lambda r: r.randrange(2**64),
    "sfixed32": lambda r: r.randrange(-(2**31), 2**31),
    "sfixed64": lambda r: r.randrange(-(2**63), 2**63),
    "float": lambda r: r.choice([0.0, -0.0, 1.5, math.inf, -math.inf, math.nan, 3.0e38, 1e-45]),
    "double": lambda r: r.choice([0.0, -0.0, math.pi, math.inf, math.nan, 1e-300, r.random()]),
    "bool": lambda r: r.random() < 0.5,
    "nested_enum": lambda r: r.choice([0, 1, 2]),
}


def _same_items(a: Any, g: Any) -> bool:
    """Equal element by element, of the same Python types (NaN equal to NaN)."""
    return len(a) == len(g) and all(
        type(x) is type(y) and (x == y or (x != x and y != y)) for x, y in zip(a, g, strict=True)
    )


def test_repeated_numbers_behave_as_google(conf: P.Namespace, google: dict[str, Any]) -> None:
    """Repeated numbers, bools and enums, packed and unpacked, in proto2, proto3 and editions:
    built, parsed, changed in place and read back as Google's are, byte for byte."""
    rng = random.Random(7)
    for full, g_cls in google.items():
        a_cls = conf.types[full]
        for kind, gen in NUMERIC_KINDS.items():
            names = [f"repeated_{kind}", f"packed_{kind}", f"unpacked_{kind}"]
            for name in names:
                if name not in a_cls.DESCRIPTOR.fields_by_name:
                    continue
                values = [gen(rng) for _ in range(rng.randrange(1, 40))]
                a, g = a_cls(**{name: values}), g_cls(**{name: values})
                wire = g.SerializeToString()
                assert a.SerializeToString() == wire, (full, name)
                parsed = a_cls.FromString(wire)
                assert _same_items(getattr(parsed, name), getattr(g, name)), (full, name)
                assert _same_items(list(getattr(parsed, name)), list(getattr(g, name)))
                # The same changes, on both.
                popped = []
                for m in (parsed, g):
                    c = getattr(m, name)
                    c.append(values[0])
                    c.insert(1, values[-1])
                    c.extend(values[:3])
                    c[0] = values[1 % len(values)]
                    c[-1] = values[0]
                    del c[2]
                    c[1:3] = values[:2]
                    c.reverse()
                    popped.append(c.pop())
                assert _same_items(popped[:1], popped[1:]), (full, name)
                g_items = getattr(g, name)
                assert _same_items(getattr(parsed, name), g_items), (full, name)
                assert _same_items(getattr(parsed, name)[1:5], g_items[1:5])
                assert parsed.SerializeToString() == g.SerializeToString(), (full, name)
                assert a_cls.FromString(parsed.SerializeToString()) == parsed
                # A value that does not fit is refused and changes nothing.
                before = parsed.SerializeToString()
                bad = "x" if kind in ("float", "double", "bool") else 2**64
                with pytest.raises((TypeError, ValueError)):
                    getattr(parsed, name).append(bad)
                with pytest.raises((TypeError, ValueError)):
                    getattr(parsed, name).extend([values[0], bad])
                with pytest.raises((TypeError, ValueError)):
                    getattr(parsed, name)[0] = bad
                assert parsed.SerializeToString() == before
                # The dict and JSON forms read the numbers kept natively.
                assert parsed.to_dict() == _google_dict(g), (full, name)
                assert json.loads(parsed.to_json()) == _google_dict(g), (full, name)
                clone = a_cls()
                clone.CopyFrom(parsed)
                clone.MergeFrom(parsed)
                g2 = g_cls()
                g2.CopyFrom(g)
                g2.MergeFrom(g)
                assert clone.SerializeToString() == g2.SerializeToString(), (full, name)


def _google_dict(g: Any) -> Any:
    from google.protobuf import json_format

    return json_format.MessageToDict(g)


def test_packed_runs_with_closed_enum_values_not_declared(
    conf: P.Namespace, google: dict[str, Any]
) -> None:
    """A packed run of a closed enum holding undeclared numbers: the declared ones are kept in
    the field, the others go to the unknown fields, as Google's do."""
    full = "protobuf_test_messages.proto2.TestAllTypesProto2"
    a_cls, g_cls = conf.types[full], google[full]
    run = b"".join(varint(n) for n in [1, 7, 2, 0, 99, 1])
    wire = varint(88 << 3 | 2) + varint(len(run)) + run
    a, g = a_cls.FromString(wire), g_cls.FromString(wire)
    assert list(a.packed_nested_enum) == list(g.packed_nested_enum)
    assert a.SerializeToString() == g.SerializeToString()


def test_descriptor_set_round_trip(conf: P.Namespace) -> None:
    again = P.load_descriptor_set(conf.descriptor_set())
    assert again.descriptor_set() == conf.descriptor_set()
    m = conf.types["protobuf_test_messages.proto3.TestAllTypesProto3"](optional_int32=5)
    other = again.types["protobuf_test_messages.proto3.TestAllTypesProto3"]
    assert other.FromString(m.SerializeToString()).optional_int32 == 5


# --- Google's message API -------------------------------------------------------------------------


def test_construct_read_and_defaults(shop: Any) -> None:
    o = shop.Order(id=7, items=[{"sku": "a", "qty": 2}], counts={"x": 3}, kind="K_A", f=0.1)
    assert o.id == 7 and o.items[0].sku == "a" and o.counts["x"] == 3
    assert o.kind == shop.Order.K_A == shop.Order.Kind.K_A == 1
    assert o.f == pytest.approx(0.1) and o.f != 0.1  # stored as a 32-bit float
    assert o.d == 0.0 and o.b == b"" and o.note == "" and o.big == 0 and o.ok is False
    assert isinstance(o, P.Message) and isinstance(o, shop.Order)
    assert shop.Order.Kind.Name(1) == "K_A" and shop.Order.Kind.Value("K_NONE") == 0
    assert shop.Order.DESCRIPTOR.fields_by_name["items"].message_type is shop.Item.DESCRIPTOR
    with pytest.raises(ValueError, match='no "nope" field'):
        shop.Order(nope=1)
    with pytest.raises(TypeError):
        shop.Order(1)


def test_constructor_keys_and_dicts_changed_while_read(shop: Any) -> None:
    """Field names given as keys built at run time (not the interned names) are found by their
    text, in any order; a dict that Python code run by a value's check changes raises
    RuntimeError, as Python's own iteration does, and a list changed so is read as iterating
    it would read it: never a crash."""
    sku, qty = "".join(["s", "ku"]), "".join(["q", "ty"])
    item = shop.Item(**{qty: 3, "tags": [1], sku: "a"})
    assert (item.sku, item.qty, list(item.tags)) == ("a", 3, [1])
    o = shop.Order(by_id={1: {sku: "x"}, 2**31 - 1: {}}, counts={"a": 2**62, "b": -1})
    assert o.by_id[1].sku == "x" and dict(o.counts) == {"a": 2**62, "b": -1}
    with pytest.raises(ValueError, match='no "skux" field'):
        shop.Item(**{sku + "x": "a"})
    with pytest.raises(TypeError, match="field names are strings, not int"):
        shop.Order(main={1: "a"})

    fields: dict[str, Any] = {"sku": "a"}
    counts: dict[str, Any] = {"a": 1}

    class Grows:
        def __init__(self, d: dict[str, Any]) -> None:
            self.d = d

        def __index__(self) -> int:
            self.d.update({f"k{i}": i for i in range(50)})
            return 5

    nums: list[Any] = [1, None, 3]

    class Clears:
        def __index__(self) -> int:
            nums.clear()
            return 5

    nums[1] = Clears()
    assert list(shop.Order(nums=nums).nums) == [1, 5]  # as iterating the list would give

    fields["qty"] = Grows(fields)
    counts["b"] = Grows(counts)
    with pytest.raises(RuntimeError, match="changed size"):
        shop.Order(main=fields)
    with pytest.raises(RuntimeError, match="changed size"):
        shop.Order(counts=counts)


def test_type_checks(shop: Any) -> None:
    o = shop.Order()
    # proto3 strings must be UTF-8: lone surrogates are refused where they are given, with the
    # codec's error, as Google's are (amber used to write bytes no parser reads back).
    for give in (
        lambda: setattr(o, "note", "\udcff"),
        lambda: setattr(o, "card", "a\ud800"),
        lambda: o.items.add(sku="\udcff"),
        lambda: o.counts.__setitem__("\udcff", 1),
        lambda: shop.Order(note="\udcff"),
        lambda: shop.Item(sku="x").MergeFrom(shop.Item(sku="\udcff")),
    ):
        with pytest.raises(UnicodeEncodeError, match="surrogates not allowed"):
            give()
    assert o.SerializeToString() == b""
    with pytest.raises(TypeError):
        o.id = "7"
    with pytest.raises(TypeError):
        o.id = 1.5
    with pytest.raises(ValueError, match="out of range"):
        o.id = 2**63
    with pytest.raises(ValueError, match="out of range"):
        o.big = -1
    with pytest.raises(TypeError):
        o.note = 5
    with pytest.raises(TypeError):
        o.b = "text"
    with pytest.raises(ValueError):
        o.kind = "K_MISSING"
    with pytest.raises(TypeError):
        o.nums.append("1")
    with pytest.raises(TypeError):
        o.counts[1] = 2
    with pytest.raises(TypeError):
        o.id = True  # as Google's: a bool is not an integer here
    o.ok = 1  # but an integer is a bool
    assert o.ok is True
    np = pytest.importorskip("numpy")
    o.id, o.ok, o.d = np.int64(5), np.bool_(True), np.float32(1.5)
    assert (o.id, o.ok, o.d) == (5, True, 1.5) and type(o.id) is int
    o.note = b"bytes are decoded"
    assert o.note == "bytes are decoded"
    with pytest.raises(ValueError):
        o.note = b"\xff"
    with pytest.raises(AttributeError):
        o.no_such_field = 1


def test_presence_and_default_sub_messages(shop: Any) -> None:
    o = shop.Order()
    assert not o.HasField("main")
    sub = o.main
    assert sub is o.main and sub.qty == 0
    assert not o.HasField("main")  # reading does not set it
    sub.qty = 5
    assert o.HasField("main") and o.main.qty == 5
    deep = shop.Order()
    deep.voucher.tags.append(1)  # a change through a container sets the chain
    assert deep.WhichOneof("pay") == "voucher"
    assert not o.HasField("note")
    o.note = ""
    assert o.HasField("note")
    with pytest.raises(ValueError, match="presence"):
        o.HasField("id")
    o.ClearField("main")
    assert not o.HasField("main")
    sub.qty = 9  # detached: no longer reaches the parent
    assert not o.HasField("main")


def test_handed_out_sub_messages_stay_live_as_google() -> None:
    """A sub-message read before a merge, a copy, a parse or a clear stays the field's (or is
    cut loose) exactly when Google's does, whether it was set or a default handed out; and a
    default handed out keeps its tie through a change to its oneof."""
    pytest.importorskip("google.protobuf")
    from google.protobuf import message_factory

    # Its own package: loading `shop` again would make pickles of `shop` find the new classes.
    ns = P.load_text(SHOP.replace("package shop;", "package live;"), name="live.proto")
    pool = _google_pool(ns)
    google_order = message_factory.GetMessageClass(pool.FindMessageTypeByName("live.Order"))

    def run(cls: Any, op: str, present: bool, nested: bool) -> tuple[Any, ...]:
        m = cls()
        if present:
            m.main.qty = 1
        h = m.main
        src = cls(id=3)
        src.main.sku = "src"
        ops = {
            "MergeFrom": lambda: m.MergeFrom(src),
            "MergeFromString": lambda: m.MergeFromString(src.SerializeToString()),
            "CopyFrom": lambda: m.CopyFrom(src),
            "CopyFrom without it": lambda: m.CopyFrom(cls(id=3)),
            "ParseFromString": lambda: m.ParseFromString(src.SerializeToString()),
            "Clear": m.Clear,
            "ClearField": lambda: m.ClearField("main"),
            "set in its oneof": lambda: setattr(m, "card", "x"),
        }
        if nested:  # a default member of the oneof handed out, through the same operation
            v = m.voucher
            m.voucher.CopyFrom(src.main) if op == "CopyFrom" else ops[op]()
            v.tags.append(9)
            return (m.voucher is v, m.WhichOneof("pay"), m.SerializeToString())
        ops[op]()
        same = m.main is h
        h.tags.append(9)
        return (same, m.HasField("main"), m.SerializeToString())

    ours = ns.live.Order
    for op in (
        "MergeFrom",
        "MergeFromString",
        "CopyFrom",
        "CopyFrom without it",
        "ParseFromString",
        "Clear",
        "ClearField",
        "set in its oneof",
    ):
        for present in (False, True):
            assert run(ours, op, present, False) == run(google_order, op, present, False), (
                op,
                present,
            )
        assert run(ours, op, False, True) == run(google_order, op, False, True), op
    # Clearing a default sub-message is a change to it: it becomes set, as in Google's.
    for clear in (
        lambda m: m.main.Clear(),
        lambda m: m.main.ClearField("qty"),
        lambda m: m.main.DiscardUnknownFields(),
    ):
        a, g = ours(), google_order()
        clear(a)
        clear(g)
        assert a.HasField("main") and g.HasField("main")
        assert a.SerializeToString() == g.SerializeToString()
    # A default member of a oneof, handed out before another member is set, switches it back.
    for cls in (ours, google_order):
        m = cls()
        v = m.voucher
        m.card = "c"
        v.qty = 5
        assert m.WhichOneof("pay") == "voucher" and m.voucher.qty == 5


def test_serialize_takes_deterministic_as_google(shop: Any) -> None:
    """`deterministic` by position or keyword, any object by its truth, as Google's takes it."""
    o = shop.Order(counts={"b": 1, "a": 2, "c": 3})
    ordered = o.SerializeToString(deterministic=True)
    assert ordered == o.SerializeToString(True) == o.SerializeToString(deterministic=1)
    assert o.SerializePartialToString(True) == ordered
    assert o.SerializeToString(None) == o.SerializeToString() == o.SerializeToString(False)


def test_fields_named_like_amber_methods() -> None:
    """A field named like one of amber's own methods hides it on its class (as a field named
    like one of Google's methods does in Google's); the message still prints, and the method
    is there through the base class."""
    ns = P.load_text(
        'syntax = "proto3"; package k; message K { int32 to_text = 1; string from_json = 2; '
        "int32 to_dict = 3; }",
        name="k.proto",
    )
    k = ns.k.K(to_text=3, from_json="j", to_dict=4)
    assert (k.to_text, k.from_json, k.to_dict) == (3, "j", 4)
    assert str(k) == repr(k) == 'to_text: 3\nfrom_json: "j"\nto_dict: 4\n'
    assert k.SerializeToDict() == {"toText": 3, "fromJson": "j", "toDict": 4}
    assert P.Message.to_text(k) == str(k)
    back = ns.k.K()
    P.Message.ParseFromJson(back, P.Message.to_json(k))
    assert back == k


def test_oneof(shop: Any) -> None:
    o = shop.Order(card="v")
    assert o.WhichOneof("pay") == "card" and o.HasField("pay")
    o.cash = 3
    assert o.WhichOneof("pay") == "cash" and o.card == ""
    o.voucher.sku = "z"
    assert o.WhichOneof("pay") == "voucher" and o.cash == 0
    o.ClearField("pay")
    assert o.WhichOneof("pay") is None
    parsed = shop.Order.FromString(
        shop.Order(card="a").SerializeToString() + shop.Order(cash=2).SerializeToString()
    )
    assert parsed.WhichOneof("pay") == "cash"  # the last one on the wire wins


def test_repeated_and_maps(shop: Any) -> None:
    o = shop.Order(nums=[3, 1, 2])
    o.nums.extend([5, 4])
    o.nums.sort()
    assert o.nums == [1, 2, 3, 4, 5] and list(o.nums[1:3]) == [2, 3]
    del o.nums[0]
    o.nums[0] = 9
    assert o.nums.pop() == 5 and len(o.nums) == 3 and 9 in o.nums
    o.nums.insert(0, 7)
    o.nums.remove(9)
    assert list(o.nums) == [7, 3, 4]
    it = o.items.add(sku="a")
    it.qty = 2
    o.items.append(shop.Item(sku="b"))
    assert [i.sku for i in o.items] == ["a", "b"] and o.items[0].qty == 2
    with pytest.raises(TypeError):
        o.items[0] = shop.Item()
    o.counts["a"] = 1
    o.counts.update({"b": 2})
    assert o.counts["missing"] == 0 and "missing" in o.counts  # reading inserts, as Google's
    assert o.counts.get("absent") is None and "absent" not in o.counts
    del o.counts["missing"]
    assert dict(o.counts.items()) == {"a": 1, "b": 2} and o.counts == {"a": 1, "b": 2}
    o.by_id[4].sku = "four"
    assert o.by_id[4].sku == "four" and len(o.by_id) == 1
    with pytest.raises(ValueError):
        o.by_id[5] = shop.Item()
    with pytest.raises(AttributeError, match="Assignment not allowed"):
        o.nums = [1, 2]  # as Google's: change it in place
    with pytest.raises(AttributeError, match="Assignment not allowed"):
        o.main = shop.Item()
    o.nums[:] = [1, 2]
    assert o.nums == [1, 2]
    again = shop.Order.FromString(o.SerializeToString())
    assert again == o and again.by_id[4].sku == "four"


def test_map_lookups_popitem_and_setdefault_as_google(
    conf: P.Namespace, google: dict[str, Any]
) -> None:
    """A key of the wrong type or out of range raises in `in` and `get` as in Google's maps (of
    entries: upb answers an empty map without looking at the key); `popitem` takes an entry
    out; `setdefault` on a map of scalars needs its default."""
    name = "protobuf_test_messages.proto3.TestAllTypesProto3"
    ours, theirs = conf.types[name], google[name]

    def outcome(case: Any, m: Any) -> Any:
        try:
            return ("ok", case(m))
        except (TypeError, ValueError, KeyError) as e:
            return (type(e).__name__,)

    maps = dict(map_int32_int32={1: 10}, map_uint32_uint32={3: 4}, map_string_string={"x": "y"})
    cases = [
        lambda m: "a" in m.map_int32_int32,
        lambda m: m.map_int32_int32.get(1.5),
        lambda m: 2**40 in m.map_int32_int32,
        lambda m: m.map_uint32_uint32.get(-1),
        lambda m: 7 in m.map_string_string,
        lambda m: 1 in m.map_int32_int32,
        lambda m: m.map_int32_int32.get(2, "d"),
        lambda m: m.map_string_string.setdefault("k"),
        lambda m: m.map_string_string.setdefault("k", "v"),
        lambda m: m.map_int32_int32.popitem(),
        lambda m: (m.map_int32_int32.popitem(), m.map_int32_int32.popitem()),
    ]
    for i, case in enumerate(cases):
        a, g = ours(**maps), theirs(**maps)
        assert outcome(case, a) == outcome(case, g), i
        assert a.SerializeToString(deterministic=True) == g.SerializeToString(deterministic=True), i


def test_maps_follow_a_dict_through_random_changes() -> None:
    """Map containers against a plain dict: inserts, replacements, deletions (each moving the
    last entry into the hole), pops and lookups, with int, bool and string keys (non-ASCII among
    them); the parsed copy holds the same entries."""
    ns = P.load_text(
        'syntax = "proto3"; message M { map<string, int32> s = 1; map<sint64, string> i = 2;'
        " map<bool, int32> b = 3; }",
        name="maps.proto",
    )
    rng = random.Random(7)
    keys: dict[str, list[Any]] = {
        "s": ["", "a", "b", "é", "long key " * 3] + [f"k{j}" for j in range(40)],
        "i": [0, -1, 1, 2**63 - 1, -(2**63), *range(2, 40)],
        "b": [True, False],
    }
    m = ns.M()
    model: dict[str, dict[Any, Any]] = {name: {} for name in keys}
    for _ in range(3000):
        name = rng.choice(list(keys))
        c, d, k = getattr(m, name), model[name], rng.choice(keys[name])
        v: Any = rng.randrange(100) if name != "i" else str(rng.randrange(100))
        op = rng.randrange(5)
        if op < 2:
            c[k] = d[k] = v
        elif op == 2 and k in d:
            del c[k], d[k]
        elif op == 3:
            assert c.pop(k, None) == d.pop(k, None)
        else:
            assert (k in c) == (k in d) and c.get(k) == d.get(k)
        assert len(c) == len(d) and dict(c.items()) == d
    for name, d in model.items():
        assert dict(getattr(m, name).items()) == d
    again = ns.M.FromString(m.SerializeToString())
    for name, d in model.items():
        assert dict(getattr(again, name).items()) == d


def test_merge_copy_clear_equality(shop: Any) -> None:
    a = shop.Order(id=1, nums=[1], main={"sku": "a"}, counts={"x": 1})
    b = shop.Order(nums=[2], main={"qty": 3}, counts={"x": 2, "y": 3}, note="n")
    a.MergeFrom(b)
    assert a.id == 1 and a.nums == [1, 2] and a.main.sku == "a" and a.main.qty == 3
    assert a.counts == {"x": 2, "y": 3} and a.note == "n"
    c = shop.Order()
    c.CopyFrom(a)
    assert c == a and c is not a
    c.main.qty = 99
    assert a.main.qty == 3  # a deep copy
    c.Clear()
    assert c == shop.Order() and c.ListFields() == []
    with pytest.raises(TypeError):
        c.MergeFrom(shop.Item())
    assert a != b and a != 5
    with pytest.raises(TypeError):
        hash(a)
    n = a.MergeFromString(b.SerializeToString())
    assert n == len(b.SerializeToString()) and a.nums == [1, 2, 2]
    assert [f.name for f, _ in a.ListFields()][:3] == ["id", "items", "counts"] or a.ListFields()


def test_sub_messages_and_containers_behave_alike_before_and_after_their_first_read(
    shop: Any,
) -> None:
    """A parse, a build from dicts and a copy keep sub-messages, repeated fields and maps as Rust
    values until a read makes their objects: every operation gives the same message whichever
    form it meets, and a read hands out the same object every time."""
    kw: dict[str, Any] = dict(
        id=1,
        items=[{"sku": "a", "tags": [1, 2]}, {"sku": "b"}],
        counts={"x": 1, "y": 2},
        main={"sku": "m", "qty": 2},
        voucher={"sku": "v"},
        nums=[1, 2],
        by_id={3: {"sku": "t"}},
    )
    unknown = bytes([0xF8, 0x01, 0x2A])  # field 31 = 42
    data = shop.Order(**kw).SerializeToString(deterministic=True) + unknown

    def parsed() -> Any:
        return shop.Order.FromString(data)

    def built(**fields: Any) -> Any:
        m = shop.Order(**fields)
        m.MergeFromString(unknown)
        return m

    def read(m: Any) -> Any:
        m.ListFields()  # makes every field's object
        for it in m.items:
            it.ListFields()
        return m

    forms = {
        "parsed": parsed,
        "built": lambda: built(**kw),
        "copied": lambda: copy.deepcopy(parsed()),
        "built from messages": lambda: built(
            **{f.name: v for f, v in read(parsed()).ListFields() if f.name != "by_id"},
            by_id={3: parsed().by_id[3]},
        ),
        "read": lambda: read(parsed()),
        "unpickled": lambda: pickle.loads(pickle.dumps(parsed())),
    }
    ops: list[Any] = [
        lambda m: m.main.qty,
        lambda m: setattr(m.main, "qty", 7),
        lambda m: m.items.add(sku="c"),
        lambda m: m.items[0].tags.append(3),
        lambda m: m.items.extend([{"sku": "d"}]),
        lambda m: m.counts.__setitem__("z", 3),
        lambda m: m.by_id[3].tags.append(4),
        lambda m: m.MergeFrom(parsed()),
        lambda m: m.MergeFrom(read(parsed())),
        lambda m: read(m).MergeFrom(parsed()),
        lambda m: m.MergeFromString(data),
        lambda m: m.CopyFrom(parsed()),
        lambda m: m.ClearField("main"),
        lambda m: m.ClearField("items"),
        lambda m: m.DiscardUnknownFields(),
        lambda m: m.main.MergeFrom(shop.Item(qty=1)),
        lambda m: m.nums.extend([5]),
        lambda m: setattr(m, "card", "c"),
        lambda m: m.ParseFromString(m.SerializeToString()),
    ]
    for i, op in enumerate(ops):
        outs = {}
        for name, make in forms.items():
            m = make()
            op(m)
            outs[name] = m.SerializeToString(deterministic=True)
            assert m == shop.Order.FromString(outs[name]), (i, name)
        assert len(set(outs.values())) == 1, (i, outs)

    m = parsed()
    assert m.main is m.main and m.items is m.items and m.counts is m.counts
    assert m.items[1] is m.items[1] and m.by_id[3] is m.by_id[3]
    assert [f.name for f, _ in m.ListFields()][:3] == ["id", "items", "counts"]
    sub, it = m.main, m.items[0]
    sub.qty, it.sku = 9, "A"
    assert shop.Order.FromString(m.SerializeToString()).main.qty == 9
    assert shop.Order.FromString(m.SerializeToString()).items[0].sku == "A"
    m.ClearField("main")
    sub.qty = 1  # detached: no longer reaches the parent
    assert not m.HasField("main")
    c = copy.deepcopy(m)
    c.items[0].sku = "changed"
    assert m.items[0].sku == "A"  # a deep copy shares nothing
    assert parsed().HasField("voucher") and parsed().WhichOneof("pay") == "voucher"


def test_deep_messages_built_in_python_copy_merge_and_drop(tmp_path: Path) -> None:
    """A message tree built in Python has no depth limit: copying, merging, cleaning and
    dropping one 20,000 levels deep works on a thread with a 512 KiB stack (the walks grow the
    stack; sub-messages are freed from a list, not one inside the other), and writing it is
    refused past the depth Google's parsers accept."""
    import subprocess
    import sys

    (tmp_path / "d.proto").write_text(
        'syntax = "proto3"; package d; message N { int32 x = 1; N child = 2; repeated N kids = 3; }'
    )
    code = f"""
import copy, threading, amber, amber.proto as P
N = P.load({str(tmp_path / "d.proto")!r}, include=[{str(tmp_path)!r}]).d.N
def depth(m):
    n = 0
    while m.HasField("child"):
        m, n = m.child, n + 1
    return n, m.x
def work():
    m = N(); c = m
    for _ in range(20000):
        c = c.child
    c.x = 7
    assert depth(m) == (20000, 7)
    for made in (copy.copy(m), copy.deepcopy(m)):
        assert depth(made) == (20000, 7)
    for merge in ("CopyFrom", "MergeFrom"):
        t = N(); getattr(t, merge)(m); assert depth(t) == (20000, 7)
        u = N(); getattr(u, merge)(m); del u  # dropped while still native
    m.DiscardUnknownFields()
    # Chains through repeated fields, and of defaults only read, are dropped alike.
    r = N(); c = r
    for _ in range(20000):
        c = c.kids.add()
    del r, c
    d = N(); c = d
    for _ in range(20000):
        c = c.child
    del d, c
    try:
        m.SerializeToString()
    except amber.EncodeError as e:
        assert "deeper than 100" in str(e)
    else:
        raise AssertionError("a message 20,000 deep was written")
    print("ok")
threading.stack_size(512 * 1024)
t = threading.Thread(target=work); t.start(); t.join()
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", (out.returncode, out.stderr[-2000:])


def test_code_run_while_a_message_is_borrowed_gets_an_error(shop: Any) -> None:
    """A message's first read makes objects while the message is borrowed; a garbage collection
    that runs then may run a finalizer that touches the same message. The finalizer gets an
    error (reported as unraisable, as any error in `__del__`), the read completes, and the
    message is intact."""
    import gc
    import sys

    data = shop.Order(
        id=7, items=[{"sku": f"s{i}", "tags": [i]} for i in range(50)]
    ).SerializeToString()
    seen: list[BaseException] = []

    class Toucher:
        def __init__(self, m: Any) -> None:
            self.m, self.cycle = m, self

        def __del__(self) -> None:
            self.m.note = "from a finalizer"

    old_hook, old_threshold = sys.unraisablehook, gc.get_threshold()
    sys.unraisablehook = lambda u: seen.append(u.exc_value)  # type: ignore[assignment]
    try:
        for _ in range(20):
            m = shop.Order.FromString(data)
            Toucher(m)  # garbage in a cycle: freed by the next collection
            gc.set_threshold(1)
            items = m.items  # makes 50 message objects while `m` is borrowed
            gc.set_threshold(*old_threshold)
            assert [it.sku for it in items] == [f"s{i}" for i in range(50)]
            assert m.id == 7 and m.note in ("", "from a finalizer")
            gc.collect()
    finally:
        sys.unraisablehook = old_hook
        gc.set_threshold(*old_threshold)
    # From 3.12 CPython runs a collection at the next bytecode, not inside the allocation that
    # triggers it: no finalizer runs during the read then.
    assert seen or sys.version_info >= (3, 12), "no finalizer ran during a read"
    assert all(isinstance(e, RuntimeError) and "borrowed" in str(e) for e in seen), seen


def test_encode_error_kinds() -> None:
    """Every way writing a message fails has its kind: `limit` for nesting deeper than 100 (bytes,
    JSON, dicts, text, ByteSize), `required` for missing required fields, `mutated` for a message
    written by code that runs while it is being changed (a finalizer during a first read), each
    with the path where it was found."""
    import gc
    import sys

    ns = P.load_text(
        'syntax = "proto2"; message N { optional N child = 1; optional int32 v = 2;'
        " repeated N kids = 3; map<string, N> by = 4; required int32 r = 5; }",
        name="kinds.proto",
    )
    for depth, extra in ((101, ""), (100, ".kids[0]"), (100, ".by[0]")):
        top = ns.N(r=1)
        c = top
        for _ in range(depth - 1):
            c = c.child
            c.r = 1
        if extra == ".kids[0]":
            c = c.kids.add(r=1)
        elif extra == ".by[0]":
            c = c.by.get_or_create("k")
            c.r = 1
        c.child.r = 1
        for write in (
            top.SerializeToString,
            top.SerializePartialToString,
            top.ByteSize,
            top.to_json,
            top.to_dict,
            top.to_text,
        ):
            with pytest.raises(amber.EncodeError) as e:
                write()
            assert e.value.kind == "limit", (write, e.value)
            path = e.value.path or ""
            assert path.startswith("$" + ".child" * 5), (write, path)
        # One level less is written.
        c.ClearField("child")
        assert ns.N.FromString(top.SerializeToString()) == top
    # Required fields missing, at any depth.
    m = ns.N(r=1)
    m.child.child.v = 1
    with pytest.raises(amber.EncodeError) as e:
        m.SerializeToString()
    assert e.value.kind == "required"
    assert m.SerializePartialToString() == bytes([10, 4, 10, 2, 16, 1, 40, 1])
    # A finalizer that writes a message while its first read (which makes objects, and so may
    # start a garbage collection on 3.11) holds it borrowed for the change.
    data = ns.N(r=1, kids=[{"r": i} for i in range(50)]).SerializeToString()
    seen: list[BaseException] = []

    class Writer:
        def __init__(self, m: Any) -> None:
            self.m, self.cycle = m, self

        def __del__(self) -> None:
            try:
                self.m.SerializeToString()
            except amber.EncodeError as e:
                seen.append(e)

    old_threshold = gc.get_threshold()
    try:
        for _ in range(20):
            m = ns.N.FromString(data)
            Writer(m)
            gc.set_threshold(1)
            kids = m.kids
            gc.set_threshold(*old_threshold)
            assert [k.r for k in kids] == list(range(50))
            gc.collect()
    finally:
        gc.set_threshold(*old_threshold)
    assert seen or sys.version_info >= (3, 12), "no finalizer ran during a read"
    for e in seen:
        assert isinstance(e, amber.EncodeError) and e.kind == "mutated", e
        assert "borrowed" in str(e.__cause__), e.__cause__


def test_field_descriptors_check_the_instance_every_time() -> None:
    """A field's descriptor remembers its class after the first read; it still refuses an instance
    of another message type (of the same layout, of another load, of a plain class) before and
    after, and serves subclasses' instances."""
    src = 'syntax = "proto3"; message A { int32 n = 1; string s = 2; } message B { int32 n = 1; }'
    one, two = P.load_text(src, name="fd.proto"), P.load_text(src, name="fd.proto")

    class Sub(one.A):  # type: ignore[misc, name-defined]
        pass

    a_n, a_s = one.A.__dict__["n"], one.A.__dict__["s"]
    others = [one.B(n=1), two.A(n=1), object(), Sub(n=5)]
    for round in range(3):
        a = one.A(n=round, s="x")
        assert (a.n, a.s, a_n.__get__(a, one.A)) == (round, "x", round)
        for o in others:
            if isinstance(o, one.A):
                assert a_n.__get__(o, type(o)) == 5
                a_n.__set__(o, 5)
                continue
            for f in (a_n, a_s):
                with pytest.raises(TypeError):
                    f.__get__(o, type(o))
                with pytest.raises(TypeError):
                    f.__set__(o, 1 if f is a_n else "y")
        assert a_n.__get__(None, one.A) is a_n
    assert (two.A(n=3).n, one.B(n=4).n, Sub(n=6).n) == (3, 4, 6)


def test_threads_reading_and_changing_one_message(shop: Any) -> None:
    """Threads that read and change the same message, switching as often as the interpreter
    allows, see whole values: no crash, no torn state."""
    import sys
    import threading

    m = shop.Order(id=1, items=[{"sku": "a"}], counts={"x": 1})
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            for i in range(3000):
                m.id = k * 100000 + i
                assert m.id // 100000 in (0, 1, 2, 3)
                m.items.add(sku=str(i))
                m.counts[str(k)] = i
                if i % 100 == 0:
                    del m.items[:]
                m.SerializeToString()
        except RuntimeError as e:  # a conflicting borrow across a thread switch
            errors.append(e)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert not errors, errors[:3]
    assert shop.Order.FromString(m.SerializeToString()) == m


def test_strings_read_from_any_buffer_stay_as_read(shop: Any) -> None:
    """Strings and bytes a parse reads are kept as places in its input until read: a `bytes`
    input is kept, any other buffer copied, so changing the buffer afterwards changes nothing;
    merges between messages parsed from different inputs, and proto2 strings that are not
    UTF-8, read and write back what was parsed."""
    o = shop.Order(
        note="ñote",
        card="c",
        b=b"\x00\xff",
        items=[{"sku": "s1"}, {"sku": "s2"}],
        by_id={1: {"sku": "k"}},
    )
    data = o.SerializeToString()
    buf = bytearray(data)
    views = [data, buf, memoryview(buf), memoryview(data)[: len(data)]]
    parsed = [shop.Order.FromString(v) for v in views]
    buf[:] = bytes(len(buf))  # the copies do not see this
    for m in parsed:
        assert m == o and m.note == "ñote" and m.b == b"\x00\xff" and m.items[1].sku == "s2"
        assert m.SerializeToString() == data and m.to_dict() == o.to_dict()
    a, b = shop.Order.FromString(data), shop.Order.FromString(bytes(data))
    a.MergeFrom(b)
    a.MergeFromString(shop.Order(note="last", items=[{"sku": "s3"}]).SerializeToString())
    want = copy.deepcopy(o)
    want.MergeFrom(o)
    want.note = "last"
    want.items.add(sku="s3")
    assert a == want and [i.sku for i in a.items] == ["s1", "s2", "s1", "s2", "s3"]
    c = shop.Order.FromString(data)
    c.ParseFromString(shop.Order(note="new").SerializeToString())
    assert c.note == "new" and not c.items and c.WhichOneof("pay") is None
    ns = P.load_text(
        'syntax = "proto2"; message T { optional string s = 1; repeated string r = 2; }',
        name="t2.proto",
    )
    raw = bytes([10, 2, 0xC3, 0x28, 18, 1, 0xFF])  # not UTF-8 (proto2 does not check)
    t = ns.T.FromString(raw)
    assert t.s == "\udcc3(" and list(t.r) == ["\udcff"]
    assert (
        t.SerializeToString() == raw and ns.T.FromString(bytearray(raw)).SerializeToString() == raw
    )
    # The same strings given by Python code (lone surrogates) are written back as those bytes.
    t.s = t.s
    assert t.SerializeToString() == raw == ns.T(s="\udcc3(", r=["\udcff"]).SerializeToString()
    # And as map keys, before and after the map is read, beside a map of messages.
    ns = P.load_text(
        'syntax = "proto2"; message T { map<string, int32> m = 1; map<string, T> sub = 2; }',
        name="t3.proto",
    )
    body = bytes([10, 2, 0xC3, 0x28, 16, 5])
    raw = bytes([10, len(body)]) + body
    t = ns.T.FromString(raw)
    assert t.SerializeToString() == raw
    assert list(t.m.items()) == [("\udcc3(", 5)]
    assert t.SerializeToString() == raw == t.SerializeToString(deterministic=True)
    t.sub["x"].m["y"] = 3
    assert ns.T.FromString(t.SerializeToString()) == t


def test_map_entries_parse_as_google(conf: P.Namespace, google: dict[str, Any]) -> None:
    """Map entries a parse keeps without objects: a repeated key keeps its last value in its
    first place, a missing key or value reads as its default, a value may come before its key,
    a float's bits are kept; bytes, reads and merges agree with Google's."""
    name = "protobuf_test_messages.proto3.TestAllTypesProto3"
    A, G = conf.types[name], google[name]

    def one(**kw: Any) -> bytes:
        data: bytes = G(**kw).SerializeToString()
        return data

    def entry(field: str, body: bytes) -> bytes:
        return pb_len(G.DESCRIPTOR.fields_by_name[field].number, body)

    snan = struct.pack("<I", 0x7FA00001)
    data = b"".join(
        [
            one(map_string_string={"a": "1"}),
            one(map_string_string={"b": "2"}),
            one(map_string_string={"a": "3"}),
            entry("map_string_string", b"\x12\x014"),
            entry("map_string_string", b"\x0a\x01c"),
            entry("map_string_string", b"\x12\x015\x0a\x01d"),
            one(map_int32_float={1: 1.5, -2: float("inf")}),
            entry("map_int32_float", b"\x15" + snan),
            one(map_bool_bool={True: False}, map_string_bytes={"x": b"\xff"}),
            one(map_int32_int32={-1: -5, 7: 8}),
            one(map_int32_int32={-1: 6}),
            one(map_string_nested_message={"m": {"a": 1}}),
        ]
    )
    a, g = A.FromString(data), G.FromString(data)
    assert a.SerializeToString(deterministic=True) == g.SerializeToString(deterministic=True)
    twice = A.FromString(data)
    twice.MergeFromString(data)
    twice.MergeFrom(A.FromString(data + one(map_string_string={"b": "9"})))
    g.MergeFromString(data)
    g.MergeFrom(G.FromString(data + one(map_string_string={"b": "9"})))
    # A merge from another input makes the float map's values Python floats, which quiet a
    # signaling NaN (upb keeps its bits): the one difference left, compared apart.
    assert sorted(twice.map_int32_float) == sorted(g.map_int32_float) == [-2, 0, 1]
    for m in (twice, g):
        m.ClearField("map_int32_float")
    assert twice.SerializeToString(deterministic=True) == g.SerializeToString(deterministic=True)
    for f in ["map_string_string", "map_int32_int32", "map_bool_bool", "map_string_bytes"]:
        assert dict(getattr(twice, f).items()) == dict(getattr(g, f).items())
    assert list(twice.map_string_string) == ["a", "b", "", "c", "d"]
    twice.map_string_string["e"] = "5"
    g.map_string_string["e"] = "5"
    assert twice.map_string_string == dict(g.map_string_string)


def test_parsed_maps_find_every_key_kind(conf: P.Namespace, google: dict[str, Any]) -> None:
    """A map a parse kept without objects finds, replaces and deletes each of its keys, of every
    key kind, as the dict of the same entries does: the index the parse built serves the map's
    objects."""
    name = "protobuf_test_messages.proto3.TestAllTypesProto3"
    A, G = conf.types[name], google[name]
    rng = random.Random(7)
    edges = {
        "int32": [0, 1, -1, 2**31 - 1, -(2**31)],
        "int64": [0, -1, 2**63 - 1, -(2**63)],
        "uint32": [0, 1, 2**32 - 1],
        "uint64": [0, 1, 2**63, 2**64 - 1],
        "bool": [True, False],
        "string": ["", "a", "é", "ключ", "a" * 40],
    }
    fields = {
        "map_int32_int32": "int32",
        "map_int64_int64": "int64",
        "map_uint32_uint32": "uint32",
        "map_uint64_uint64": "uint64",
        "map_sint32_sint32": "int32",
        "map_sint64_sint64": "int64",
        "map_fixed32_fixed32": "uint32",
        "map_fixed64_fixed64": "uint64",
        "map_sfixed32_sfixed32": "int32",
        "map_sfixed64_sfixed64": "int64",
        "map_bool_bool": "bool",
        "map_string_string": "string",
    }
    for field, kind in fields.items():
        keys = list(edges[kind])
        if kind not in ("bool", "string"):
            lo, hi = min(keys), max(keys)
            keys += [rng.randint(lo, hi) for _ in range(20)]
        value = (lambda k: str(k)) if kind == "string" else (lambda k: k)
        expected = {k: value(k) for k in keys}
        # Each key twice on the wire: the later value wins, in the first place.
        first = G(**{field: {k: (value(True) if kind == "bool" else value(k)) for k in keys}})
        data = first.SerializeToString() + G(**{field: expected}).SerializeToString()
        m = A.FromString(data)
        got = getattr(m, field)
        assert dict(got.items()) == expected, field
        assert len(got) == len(expected)
        for k in keys:
            assert k in got and got[k] == expected[k], (field, k)
        k0 = keys[-1]
        got[k0] = value(keys[0])
        assert len(got) == len(expected) and got[k0] == value(keys[0])
        del got[k0]
        assert k0 not in got and len(got) == len(expected) - 1
        expected.pop(k0)
        assert A.FromString(m.SerializeToString()) == A(**{field: expected}), field


MSG_MAPS = """
syntax = "proto2";
package mm;
message V { optional int32 n = 1; optional string s = 2; map<int64, V> kids = 3; }
message Need { required int32 a = 1; optional string t = 2; }
message M {
  map<string, V> by_name = 1;
  map<int64, V> by_id = 2;
  map<bool, V> by_flag = 3;
  map<string, Need> needs = 4;
  optional int32 tail = 5;
  map<uint32, string> plain = 6;
}
"""


def test_parsed_maps_of_messages_as_google() -> None:
    """Maps of message values a parse keeps natively (no object per entry until read): a repeated
    key's last message wins in the first key's place (not merged), a missing key or value reads as
    its default, and bytes, reads, ==, to_dict, JSON, text, ClearField, copies, merges (into maps
    kept natively, made objects, or from another input) and required-field checks agree with
    Google's, for string, integer and bool keys, small maps and large ones."""
    pytest.importorskip("google.protobuf")
    from google.protobuf import json_format, message_factory, text_format

    ns = P.load_text(MSG_MAPS, name="mm.proto")
    pool = _google_pool(ns)
    A, G = ns.mm.M, message_factory.GetMessageClass(pool.FindMessageTypeByName("mm.M"))
    rng = random.Random(271)
    words = ["", "a", "é", "ключ", "k" * 40, "😀"]

    def v(depth: int = 0) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if rng.random() < 0.7:
            out["n"] = rng.choice([0, 1, -1, 2**31 - 1, rng.randrange(1 << 20)])
        if rng.random() < 0.5:
            out["s"] = rng.choice(words)
        if depth < 2 and rng.random() < 0.3:
            out["kids"] = {rng.randrange(-5, 5): v(depth + 1) for _ in range(rng.randrange(3))}
        return out

    for size in [0, 1, 2, 3, 9, 40, 300]:
        kw: dict[str, Any] = {
            "by_name": {f"{rng.choice(words)}{i}": v() for i in range(size)},
            "by_id": {rng.randrange(-(2**63), 2**63): v() for _ in range(size)},
            "by_flag": {b: v() for b in [True, False][: min(size, 2)]},
            "needs": {str(i): {"a": i, "t": "x"} for i in range(min(size, 5))},
            "plain": {i: str(i) for i in range(size)},
            "tail": size,
        }
        g = G(**kw)
        data = g.SerializeToString()
        # Each map's first key again with another value, and entries without a key or value.
        later = G(
            by_name={k: {"n": 7} for k in list(kw["by_name"])[:1]},
            by_id={k: {"s": "again"} for k in list(kw["by_id"])[:1]},
        ).SerializeToString()
        data += later + pb_len(1, b"") + pb_len(2, b"\x12\x00") + pb_len(1, b"\x0a\x01z")
        g = G.FromString(data)
        want = g.SerializeToString(deterministic=True)
        a = A.FromString(data)
        assert a.SerializeToString(deterministic=True) == want, size
        assert G.FromString(a.SerializeToString()) == g
        assert a.ByteSize() == len(g.SerializeToString())
        assert a.IsInitialized()
        assert a == A.FromString(data) and a == A.FromString(bytearray(data))
        assert a.to_dict() == json_format.MessageToDict(g)
        assert json.loads(a.to_json()) == json.loads(json_format.MessageToJson(g))
        assert text_format.Parse(a.to_text(), G()) == g
        # Each kind of copy, before and after the entries are read.
        for c in (copy.deepcopy(a), A.FromString(data)):
            assert c.SerializeToString(deterministic=True) == want
        assert copy.deepcopy(A.FromString(data)) == a
        # Entries read: the same messages (last value wins, first place), kept objects.
        r = A.FromString(data)
        assert list(r.by_name) == list(dict.fromkeys(_wire_keys(data, 1)))
        for k in g.by_name:
            assert r.by_name[k].n == g.by_name[k].n and r.by_name[k].s == g.by_name[k].s
            assert r.by_name[k] is r.by_name[k]
        for k in g.by_id:
            d = True
            assert r.by_id[k].SerializeToString(deterministic=d) == g.by_id[k].SerializeToString(
                deterministic=d
            )
        assert r.SerializeToString(deterministic=True) == want and r == a
        # Merges: into maps kept natively, into maps made objects, from the same and another
        # input, and the other way round; a later key replaces the message (no merge).
        more = G(by_name={k: {"s": "m"} for k in list(g.by_name)[::2]}, by_id={5: {"n": 5}})
        mdata = more.SerializeToString()
        for into in (A.FromString(data), r):
            into.MergeFromString(mdata)
            into.MergeFromString(data)
            gm = G.FromString(data)
            gm.MergeFromString(mdata)
            gm.MergeFromString(data)
            assert into.SerializeToString(deterministic=True) == gm.SerializeToString(
                deterministic=True
            )
        fresh = A()
        _ = fresh.by_name  # an empty map made an object first
        fresh.MergeFrom(A.FromString(data))
        fresh.MergeFrom(A.FromString(mdata))
        gm = G()
        gm.MergeFrom(G.FromString(data))
        gm.MergeFrom(more)
        assert fresh.SerializeToString(deterministic=True) == gm.SerializeToString(
            deterministic=True
        )
        # ClearField drops the entries kept natively.
        c = A.FromString(data)
        c.ClearField("by_name")
        gc = G.FromString(data)
        gc.ClearField("by_name")
        assert c.SerializeToString(deterministic=True) == gc.SerializeToString(deterministic=True)
        # A value missing a required field is reported with its key, as Google's.
        if size:
            bad = data + pb_len(4, pb_len(1, b"0") + pb_len(2, b"\x12\x01x"))
            assert not A.FromString(bad).IsInitialized()
            assert not G.FromString(bad).IsInitialized()
            with pytest.raises(amber.EncodeError, match="needs\\['0'\\]\\.a"):
                A.FromString(bad).SerializeToString()


def test_deep_maps_of_messages_as_google() -> None:
    """A chain of maps of messages, each value holding the next map, as deep as a parse allows,
    kept natively: written back byte for byte, copied, merged and read to the bottom as Google
    reads it; one level more is refused."""
    pytest.importorskip("google.protobuf")
    from google.protobuf import message_factory

    ns = P.load_text(MSG_MAPS, name="mm2.proto")
    G = message_factory.GetMessageClass(_google_pool(ns).FindMessageTypeByName("mm.V"))
    body = b"\x08\x07"
    for level in range(49):
        body = b"\x08" + bytes([level]) + pb_len(3, b"\x08\x01" + pb_len(2, body))
    m, g = ns.mm.V.FromString(body), G.FromString(body)
    assert m.SerializeToString() == body == g.SerializeToString()
    c = copy.deepcopy(m)
    c.MergeFromString(body)
    g.MergeFromString(body)
    assert c.SerializeToString(deterministic=True) == g.SerializeToString(deterministic=True)
    cur, depth = m, 0
    while 1 in cur.kids:
        cur, depth = cur.kids[1], depth + 1
    assert (depth, cur.n) == (49, 7)
    with pytest.raises(amber.proto.DecodeError):
        ns.mm.V.FromString(_deeper(body, 60))
    del m, c


def test_map_room_guessed_ahead_stays_within_the_input(tmp_path: Path) -> None:
    """A parse reserves room for a map, a repeated string or a repeated message from the bytes
    left after its second value; 60,000 of each with two values in a 2 MB input (each guessing
    the rest of the input is its own) parse within a 1 GiB address-space allowance and read back
    as written, and so does one large map."""
    import subprocess
    import sys

    (tmp_path / "h.proto").write_text(
        'syntax = "proto3"; package h; message S { map<string, int32> m = 1; '
        "map<string, S> n = 2; repeated string r = 3; repeated S k = 4; string t = 5; } "
        "message H { repeated S s = 1; }"
    )
    code = f"""
import resource, amber.proto as P
ns = P.load({str(tmp_path / "h.proto")!r}, include=[{str(tmp_path)!r}]).h
small = ns.S(m={{"a": 1, "b": 2}}, n={{"c": {{}}, "d": {{}}}}, r=["e", "f"],
             k=[ns.S(t="g"), ns.S(t="h")])
data = ns.H(s=[small] * 60000).SerializeToString()
big = ns.S(m={{str(i): i for i in range(50000)}}).SerializeToString()
assert len(data) > 2_000_000
soft, hard = resource.getrlimit(resource.RLIMIT_AS)
used = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
resource.setrlimit(resource.RLIMIT_AS, (used + (1 << 30), hard))
h = ns.H.FromString(data)
assert len(h.s) == 60000 and h.s[-1] == small and h.SerializeToString() == data
b = ns.S.FromString(big)
assert len(b.m) == 50000 and b.m["49999"] == 49999 and b.SerializeToString() == big
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", (out.returncode, out.stderr[-2000:])


def _wire_keys(data: bytes, field: int) -> list[str]:
    """The string keys of map field `field`'s entries in `data`, in wire order (a missing key
    reads as "")."""

    def varint(b: bytes, i: int) -> tuple[int, int]:
        n = shift = 0
        while True:
            n |= (b[i] & 0x7F) << shift
            shift += 7
            i += 1
            if b[i - 1] < 0x80:
                return n, i

    def fields(b: bytes) -> list[tuple[int, int, bytes]]:
        out, i = [], 0
        while i < len(b):
            tag, i = varint(b, i)
            if tag & 7 == 0:
                n, i = varint(b, i)
                out.append((tag >> 3, n, b""))
            else:
                assert tag & 7 == 2
                n, i = varint(b, i)
                out.append((tag >> 3, 0, b[i : i + n]))
                i += n
        return out

    keys = []
    for num, _, body in fields(data):
        if num == field:
            key = [v for n, _, v in fields(body) if n == 1]
            keys.append(key[-1].decode() if key else "")
    return keys


def _deeper(body: bytes, n: int) -> bytes:
    for _ in range(n):
        body = pb_len(3, pb_len(2, body))
    return body


def test_unknown_fields_survive(shop: Any) -> None:
    item_bytes = shop.Item(sku="s").SerializeToString() + bytes([0xF8, 0x01, 0x2A])  # field 31 = 42
    item = shop.Item.FromString(item_bytes)
    assert item.SerializeToString() == item_bytes
    item.DiscardUnknownFields()
    assert item.SerializeToString() == shop.Item(sku="s").SerializeToString()


EXTENSIONS = """
syntax = "proto2";
package ext;
message Base {
  optional int32 a = 1;
  extensions 100 to 199;
}
extend Base {
  optional int32 priority = 100;
  repeated string tags = 101;
  optional group Grp = 102 { optional int32 g = 1; }
  optional Color color = 103;
}
enum Color { RED = 0; BLUE = 1; }
message Holder {
  extend Base { optional Holder note = 150; }
  optional string text = 1;
}
"""


def test_extensions_match_google() -> None:
    pytest.importorskip("google.protobuf")
    from google.protobuf import (
        json_format,
        message_factory,
        text_format,
    )

    ns = P.load_text(EXTENSIONS, name="ext.proto")
    base, e = ns.ext.Base, ns.ext
    m = base(a=1)
    assert not m.HasExtension(e.priority) and m.Extensions[e.priority] == 0
    m.Extensions[e.priority] = 3
    m.Extensions[e.tags].extend(["a", "b"])
    m.Extensions[e.grp].g = 2
    m.Extensions[e.color] = 1
    m.Extensions[ns.ext.Holder.note].text = "hi"
    assert [f.full_name for f in m.Extensions] == [
        "ext.priority",
        "ext.tags",
        "ext.grp",
        "ext.color",
        "ext.Holder.note",
    ]
    assert e.priority in m.Extensions and len(m.Extensions) == 5
    assert [f.name for f in base.DESCRIPTOR.fields] == ["a"]
    assert ns.ext.Holder.DESCRIPTOR.extensions == [ns.ext.Holder.note]

    pool = _google_pool(ns)
    g_base = message_factory.GetMessageClass(pool.FindMessageTypeByName("ext.Base"))
    data = m.SerializeToString()
    g = g_base.FromString(data)
    # upb writes extensions in its own order (descending numbers), amber by number.
    assert g.ByteSize() == m.ByteSize() == len(data)
    assert m.to_text() == text_format.MessageToString(g)
    assert m.to_json() == json_format.MessageToJson(g)
    assert m.to_dict() == json_format.MessageToDict(g)
    # Each library reads the other's text, JSON and bytes.
    for back in (
        base.FromString(g.SerializeToString()),
        base.from_text(text_format.MessageToString(g)),
        base.from_json(json_format.MessageToJson(g)),
    ):
        assert back == m
    assert text_format.Parse(m.to_text(), g_base()) == g
    assert json_format.Parse(m.to_json(), g_base()) == g
    # Parsed extensions are fields, not unknown bytes: DiscardUnknownFields keeps them.
    parsed = base.FromString(data)
    parsed.DiscardUnknownFields()
    assert parsed == m

    m.ClearExtension(e.priority)
    assert not m.HasExtension(e.priority)
    del m.Extensions[e.tags]
    assert e.tags not in m.Extensions
    with pytest.raises(TypeError):
        m.Extensions[e.grp] = 1
    with pytest.raises(KeyError, match="extends message type"):
        ns.ext.Holder().Extensions[e.priority]
    with pytest.raises(KeyError):
        m.Extensions[base.DESCRIPTOR.fields[0]]
    with pytest.raises(amber.DecodeError, match=r"1:1 .*ext\.nope"):
        base.from_text("[ext.nope]: 1")
    assert base.from_text("[ext.nope]: 1 a: 2", allow_unknown_field=True) == base(a=2)
    # Stubs give the handles: module attributes, and class attributes for scoped ones.
    import ast

    from amber.proto._tools import stubs

    text = stubs(ns)
    ast.parse(text)
    assert "\npriority: _proto.FieldDescriptor\n" in text
    assert "    note: _typing.ClassVar[_proto.FieldDescriptor]\n" in text


MESSAGE_SET = """
syntax = "proto2";
package ms;
message Set {
  option message_set_wire_format = true;
  extensions 4 to max;
}
message A {
  extend Set { optional A a_ext = 1000; }
  optional int32 i = 1;
  optional string s = 2;
}
message B {
  extend Set { optional B b_ext = 2000000; }
  repeated int64 v = 1;
  optional Set inner = 2;
}
message Holder { optional Set set = 1; optional int32 z = 2; }
"""


def test_message_sets_match_google() -> None:
    """`option message_set_wire_format`: extensions travel as items of group 1 (type id, then
    the message's bytes), read in either order; items of unknown ids stay unknown, written back
    as upb writes them; the text format names a member by its message type."""
    pytest.importorskip("google.protobuf")
    from google.protobuf import (
        json_format,
        message_factory,
        text_format,
    )
    from google.protobuf import message as google_message

    ns = P.load_text(MESSAGE_SET, name="ms.proto")
    pool = _google_pool(ns)

    def gcls(name: str) -> Any:
        return message_factory.GetMessageClass(pool.FindMessageTypeByName(name))

    g_set, g_a, g_holder = gcls("ms.Set"), gcls("ms.A"), gcls("ms.Holder")
    ga, gb = pool.FindExtensionByName("ms.A.a_ext"), pool.FindExtensionByName("ms.B.b_ext")
    a_ext, b_ext = ns.ms.A.a_ext, ns.ms.B.b_ext

    g = g_holder(z=3)
    g.set.Extensions[ga].i = 7
    g.set.Extensions[ga].s = "hi"
    g.set.Extensions[gb].v.extend([1, 2, 3])
    g.set.Extensions[gb].inner.Extensions[ga].i = 9
    data = g.SerializeToString()
    m = ns.ms.Holder.FromString(data)
    assert m.set.Extensions[a_ext].s == "hi" and list(m.set.Extensions[b_ext].v) == [1, 2, 3]
    assert m.set.Extensions[b_ext].inner.Extensions[a_ext].i == 9
    # upb writes a message's extensions in descending numbers, amber by number.
    assert g_holder.FromString(m.SerializeToString()) == g and m.ByteSize() == len(data)
    one = g_holder()
    one.set.Extensions[gb].inner.Extensions[ga].s = "x"
    assert ns.ms.Holder.FromString(one.SerializeToString()).SerializeToString() == (
        one.SerializeToString()
    )
    assert m.to_text() == text_format.MessageToString(g)
    assert "[ms.A] {" in m.to_text()
    assert m.to_json() == json_format.MessageToJson(g)
    for back in (
        ns.ms.Holder.from_text(text_format.MessageToString(g)),
        ns.ms.Holder.from_text(m.to_text().replace("[ms.A]", "[ms.A.a_ext]")),
        ns.ms.Holder.from_json(json_format.MessageToJson(g)),
    ):
        assert back == m
    assert text_format.Parse(m.to_text(), g_holder()) == g

    # Items as other writers may lay them out, parsed and written back as upb does.
    p5, p2 = g_a(i=5).SerializeToString(), g_a(i=2, s="t").SerializeToString()
    items = [
        b"\x0b\x10" + varint(1000) + b"\x1a" + varint(len(p5)) + p5 + b"\x0c",  # id, then bytes
        b"\x0b\x1a"
        + varint(len(p2))
        + p2
        + b"\x10"
        + varint(1000)
        + b"\x0c",  # bytes first: merged
        b"\x0b\x10\x4d\x1a\x02\x08\x01\x0c",  # an id no extension has: unknown
        b"\x0b\x1a\x02\x08\x01\x10\x4e\x28\x05\x10\x4f\x0c",  # bytes first, junk, second id
        b"\x0b\x10" + varint(1000) + b"\x0c",  # no bytes: dropped
        b"\x0b\x1a\x02\x08\x01\x0c",  # no id: dropped
        b"\x08\x05",  # a plain field: unknown
        b"\xc2\x3e" + varint(len(p5)) + p5,  # the extension by its own tag
    ]
    for rng_seed in range(4):
        order = items[:]
        random.Random(rng_seed).shuffle(order)
        raw = b"".join(order)
        gs, ms = g_set.FromString(raw), ns.ms.Set.FromString(raw)
        assert ms.SerializeToString(deterministic=True) == gs.SerializeToString(deterministic=True)
        assert ms.to_text(print_unknown_fields=True) == text_format.MessageToString(
            gs, print_unknown_fields=True
        )
        assert ms.Extensions[a_ext].i == gs.Extensions[ga].i
    first = b"\x0b\x10" + varint(2000000) + b"\x1a\x00\x1a\x02\x08\x03\x0c"  # first bytes win
    assert ns.ms.Set.FromString(first).SerializeToString() == (
        g_set.FromString(first).SerializeToString()
    )
    assert not ns.ms.Set.FromString(first).Extensions[b_ext].v

    # Merges replace a member (upb parses the source's bytes into a new one).
    for merge in ("MergeFromString", "MergeFrom"):
        gs, ms = g_set(), ns.ms.Set()
        gs.Extensions[ga].s, ms.Extensions[a_ext].s = "x", "x"
        gsrc, msrc = g_set(), ns.ms.Set()
        gsrc.Extensions[ga].i, msrc.Extensions[a_ext].i = 5, 5
        if merge == "MergeFrom":
            gs.MergeFrom(gsrc)
            ms.MergeFrom(msrc)
        else:
            gs.MergeFromString(gsrc.SerializeToString())
            ms.MergeFromString(msrc.SerializeToString())
        assert ms.SerializeToString() == gs.SerializeToString(), merge

    # Broken items are decode errors with the place, as any group.
    for bad, at in (
        (b"\x0b\x10\x4d", 3),  # no end tag
        (b"\x0b\x10\x4d\x14", 3),  # another group's end tag
        (b"\x0b\x1a\x05\x08", 2),  # bytes longer than the input
        (b"\x0b\x10" + varint(1000) + b"\x1a\x02\x08\x80\x0c", 7),  # the member's own bytes
    ):
        with pytest.raises(google_message.DecodeError):
            g_set.FromString(bad)
        with pytest.raises(P.DecodeError) as e:
            ns.ms.Set.FromString(bad)
        assert e.value.offset == at, (bad, str(e.value))
    with pytest.raises(P.DecodeError, match=r"\$\.\[ms\.A\.a_ext\]\.i"):
        ns.ms.Set.FromString(b"\x0b\x10" + varint(1000) + b"\x1a\x02\x08\x80\x0c")


def test_required_fields() -> None:
    ns = P.load_text(
        'syntax = "proto2"; message R { required int32 a = 1; optional R child = 2;'
        " repeated R kids = 3; map<int32, R> by = 4; }",
        name="req.proto",
    )
    r = ns.R()
    assert not r.IsInitialized()
    assert r.FindInitializationErrors() == ["a"]
    with pytest.raises(amber.EncodeError) as e:
        r.SerializeToString()
    assert e.value.kind == "required"
    r.a = 1
    r.child.SetInParent()
    assert r.FindInitializationErrors() == ["child.a"]
    assert r.SerializePartialToString() == bytes([8, 1, 18, 0])
    r.child.a = 2
    assert r.IsInitialized() and ns.R.FromString(r.SerializeToString()) == r
    deep = ns.R.FromString(bytes([8, 1, 18, 2, 18, 0]))  # child.child set, child.a missing
    assert deep.FindInitializationErrors() == ["child.a", "child.child.a"]
    assert not copy.deepcopy(deep).IsInitialized()
    kids = ns.R(a=1, kids=[{"a": 2}, {}], by={7: {}}).SerializePartialToString()
    for parsed in (ns.R.FromString(kids), copy.deepcopy(ns.R.FromString(kids))):
        assert parsed.FindInitializationErrors() == ["kids[1].a", "by[7].a"]
        parsed.kids[1].a = 3
        parsed.by[7].a = 4
        assert parsed.IsInitialized()


def test_closed_enum_rejects_unknown_numbers() -> None:
    ns = P.load_text('syntax = "proto2"; enum E { A = 1; B = 2; } message M { optional E e = 1; }')
    m = ns.M(e=2)
    with pytest.raises(ValueError, match="closed enum"):
        m.e = 3
    assert ns.M().e == 1  # a closed enum's default is its first value
    parsed = ns.M.FromString(bytes([8, 3]))  # an undeclared number goes to the unknown fields
    assert not parsed.HasField("e") and parsed.SerializeToString() == bytes([8, 3])


def test_load_files_and_errors(tmp_path: Path) -> None:
    (tmp_path / "dep.proto").write_text(
        'syntax = "proto3"; package dep; message D { int32 x = 1; }'
    )
    (tmp_path / "top.proto").write_text(
        'syntax = "proto3";\nimport "dep.proto";\nimport "google/protobuf/timestamp.proto";\n'
        "message T { dep.D d = 1; google.protobuf.Timestamp at = 2; }\n"
    )
    ns = P.load(tmp_path / "top.proto")
    t = ns.T(d={"x": 4})
    t.at.seconds = 10
    assert ns.T.FromString(t.SerializeToString()) == t
    assert ns.dep.D(x=1).x == 1 and ns.google.protobuf.Timestamp(seconds=1).seconds == 1
    (tmp_path / "bad.proto").write_text('syntax = "proto3";\nmessage A {\n  B b = 1;\n}\n')
    with pytest.raises(P.SchemaError) as e:
        P.load(tmp_path / "bad.proto")
    assert str(e.value).startswith("bad.proto:3:3:") and e.value.line == 3 and e.value.col == 3
    assert isinstance(e.value, amber.AmberError) and isinstance(e.value, ValueError)
    # A file named to load that is not there says so, as protoc does, wherever it was looked for.
    for missing in ("does/not/exist.proto", tmp_path / "nope.proto", "a/../b.proto"):
        with pytest.raises(P.SchemaError, match=r": File not found\."):
            P.load(missing)
    (tmp_path / "imp.proto").write_text('syntax = "proto3";\nimport "gone.proto";\n')
    with pytest.raises(P.SchemaError, match=r'imp\.proto:2:1: Import "gone\.proto" was not found'):
        P.load(tmp_path / "imp.proto")


# --- hostile bytes --------------------------------------------------------------------------------


def test_bad_bytes_raise_decode_error_with_place(conf: P.Namespace) -> None:
    cls = conf.types["protobuf_test_messages.proto3.TestAllTypesProto3"]
    with pytest.raises(P.DecodeError) as e:
        cls.FromString(bytes([0x72, 0x05, 0x61]))  # optional_string: 5 bytes claimed, 1 there
    assert e.value.offset is not None and e.value.path == "$.optional_string"
    assert isinstance(e.value, amber.DecodeError) and isinstance(e.value, ValueError)
    with pytest.raises(P.DecodeError, match="UTF-8"):
        cls.FromString(bytes([0x72, 0x01, 0xFF]))
    with pytest.raises(P.DecodeError):
        cls.FromString(bytes([0x08]))  # truncated varint
    with pytest.raises(P.DecodeError):
        cls.FromString(bytes([0x0A, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F]))  # 4 GiB length prefix
    nested = b""
    for _ in range(150):  # recursive_message nested past the limit of 100
        nested = bytes([0xDA, 0x01]) + varint(len(nested)) + nested
    with pytest.raises(P.DecodeError, match="deeper"):
        cls.FromString(nested)
    ok = cls.FromString(memoryview(bytearray(cls(optional_int32=1).SerializeToString())))
    assert ok.optional_int32 == 1


def _varint_forms() -> list[bytes]:
    """Varints of every length from 1 to 11 bytes: shortest forms of edge values, padded forms
    (zero high bytes), tenth bytes carrying bits past the 64th, and ones that never end."""
    edges = [0, 1, 127, 128, 300, 16_383, 16_384, 2**21, 2**28, 2**35, 2**42, 2**49, 2**56 - 1]
    forms = [varint(v) for v in [*edges, 2**56, 2**63 - 1, 2**63, 2**64 - 1]]
    for n in range(2, 11):
        forms.append(b"\x80" * (n - 1) + b"\x00")  # zero, padded to n bytes
        forms.append(b"\xff" * (n - 1) + b"\x01")
    forms += [b"\xff" * 9 + bytes([b]) for b in (0x00, 0x02, 0x7E, 0x7F)]  # bits past the 64th
    forms += [b"\xff" * 10, b"\x80" * 10 + b"\x00", b"\xff" * 11]  # longer than 10 bytes
    return forms


def test_varints_of_every_length_parse_like_upb(conf: P.Namespace) -> None:
    """Each varint form as a singular int64, uint64 and sint64 and in a packed int64 run, with
    fewer than ten bytes after it and with more (the reader takes a wider path when ten bytes
    are there): accepted with the same values as upb, or refused by both, at the varint."""
    pytest.importorskip("google.protobuf")
    from google.protobuf import message, message_factory

    pool = _google_pool(conf)
    name = "protobuf_test_messages.proto3.TestAllTypesProto3"
    a_cls = conf.types[name]
    g_cls = message_factory.GetMessageClass(pool.FindMessageTypeByName(name))
    after = varint(1 << 3) + varint(2**64 - 1) + varint(14 << 3 | 2) + b"\x02hi"
    checked = refused = 0
    for form in _varint_forms():
        ok = len(form) <= 10 and form[-1] < 0x80
        for tail in (b"", after):
            # optional_int64, _uint64 and _sint64: a bad varint is refused at its first byte
            cases = [(head + form + tail, 1) for head in (b"\x10", b"\x20", b"\x30")]
            # repeated_int64 (packed): the run's end ends the reader, whatever follows it
            for run in (form + varint(5) + form, form + form[:-1]):
                bad = 3 if not ok else 3 + len(form) if run[-1] >= 0x80 else 0
                cases.append((varint(32 << 3 | 2) + varint(len(run)) + run + tail, bad))
            for data, at in cases:
                try:
                    g = g_cls.FromString(data)
                except message.DecodeError:
                    with pytest.raises(P.DecodeError) as e:
                        a_cls.FromString(data)
                    assert e.value.offset == at, (form.hex(), tail.hex())
                    refused += 1
                    continue
                a = a_cls.FromString(data)
                assert a.SerializeToString(deterministic=True) == g.SerializeToString(
                    deterministic=True
                ), (form.hex(), tail.hex())
                assert (a.optional_int64, a.optional_uint64, a.optional_sint64) == (
                    g.optional_int64,
                    g.optional_uint64,
                    g.optional_sint64,
                )
                assert list(a.repeated_int64) == list(g.repeated_int64)
                checked += 1
    assert checked > 150 and refused >= 12


def test_random_bytes_never_crash(conf: P.Namespace) -> None:
    rng = random.Random(7)
    seeds = [cls().SerializePartialToString() for cls in conf.types.values()]
    base = conf.types["protobuf_test_messages.proto3.TestAllTypesProto3"](
        optional_int32=5,
        repeated_string=["a", "b"],
        map_int32_int32={1: 2},
        optional_nested_message={"a": 3},
        oneof_string="x",
    ).SerializeToString()
    seeds.append(base)
    for cls in list(conf.types.values())[:20]:
        for _ in range(150):
            data = bytearray(rng.choice(seeds) or base)
            for _ in range(rng.randrange(1, 4)):
                if data:
                    data[rng.randrange(len(data))] = rng.randrange(256)
            try:
                m = cls.FromString(bytes(data))
            except P.DecodeError:
                continue
            cls.FromString(m.SerializePartialToString())


def _mutated(rng: random.Random, data: bytes) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randrange(1, 4)):
        if not b:
            break
        op, i = rng.random(), rng.randrange(len(b))
        if op < 0.4:
            b[i] = rng.randrange(256)
        elif op < 0.6:
            del b[i : i + rng.randrange(1, 4)]
        elif op < 0.8:
            b[i:i] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 3)))
        else:
            del b[i:]
    return bytes(b)


def test_mutated_bytes_parse_as_google(conf: P.Namespace, google: dict[str, Any]) -> None:
    """Random messages' bytes with a few bytes changed, cut or added: amber and upb both refuse
    them, or both read them, and then write the same bytes back (unknown fields, closed enums'
    undeclared numbers and NaN payloads included)."""
    rng = random.Random(11)
    agreed = 0
    for full in (
        "protobuf_test_messages.proto3.TestAllTypesProto3",
        "protobuf_test_messages.proto2.TestAllTypesProto2",
    ):
        a_cls, g_cls = conf.types[full], google[full]
        for _ in range(1000):
            values = _random_values(rng)
            values.pop("oneof_uint32", None)
            values.pop("oneof_string", None)
            for kind, gen in NUMERIC_KINDS.items():
                for prefix in ("repeated_", "packed_", "unpacked_"):
                    if prefix + kind in a_cls.DESCRIPTOR.fields_by_name and rng.random() < 0.3:
                        values[prefix + kind] = [gen(rng) for _ in range(rng.randrange(4))]
            data = _mutated(rng, g_cls(**values).SerializeToString())
            try:
                g = g_cls.FromString(data)
            except Exception:
                with pytest.raises(P.DecodeError):
                    a_cls.FromString(data)
                continue
            a = a_cls.FromString(data)
            assert a.SerializeToString(deterministic=True) == g.SerializeToString(
                deterministic=True
            ), data.hex()
            agreed += 1
    assert agreed > 200


def test_float_bits_and_overlong_enum_numbers_kept_as_google(
    conf: P.Namespace, google: dict[str, Any]
) -> None:
    """A float field's signaling NaN keeps its payload (widening it to a double would quiet it),
    and a closed enum's undeclared number written with an overlong varint stays as it was."""
    full = "protobuf_test_messages.proto2.TestAllTypesProto2"
    a_cls, g_cls = conf.types[full], google[full]
    snan = bytes.fromhex("0d00807f")
    packed = bytes.fromhex("0d00807f") + bytes.fromhex("0100c07f")
    data = (
        varint(11 << 3 | 5)
        + snan  # optional_float
        + varint(85 << 3 | 2)
        + varint(len(packed))
        + packed  # packed_float
        + varint(51 << 3)
        + bytes.fromhex("b69700")  # repeated_nested_enum: 2998, overlong
    )
    a, g = a_cls.FromString(data), g_cls.FromString(data)
    assert a.SerializeToString() == g.SerializeToString()
    assert math.isnan(a.optional_float) and math.isnan(a.packed_float[0])


def test_text_format_matches_google(conf: P.Namespace) -> None:
    pytest.importorskip("google.protobuf")
    from google.protobuf import message_factory, text_format

    pool = _google_pool(conf)
    checked = 0
    for _kind, full, data, expected in _vectors():
        if expected == "ERR":
            continue
        g = message_factory.GetMessageClass(pool.FindMessageTypeByName(full)).FromString(data)
        a = conf.types[full].FromString(data)
        for opts in [
            {},
            {"as_one_line": True},
            {"as_utf8": False},
            {"print_unknown_fields": True},
            {"print_unknown_fields": True, "as_one_line": True},
        ]:
            assert a.to_text(**opts) == text_format.MessageToString(
                g, descriptor_pool=pool, **opts
            ), (full, opts)
            checked += 1
    assert checked > 800
    assert str(a) == repr(a) == a.to_text()


def test_text_format_parses_like_google(conf: P.Namespace) -> None:
    pytest.importorskip("google.protobuf")
    from google.protobuf import message_factory, text_format

    pool = _google_pool(conf)
    checked = 0
    for _kind, full, data, expected in _vectors():
        if expected == "ERR":
            continue
        g_cls = message_factory.GetMessageClass(pool.FindMessageTypeByName(full))
        for opts in [{}, {"as_one_line": True}, {"as_utf8": False}]:
            text = text_format.MessageToString(g_cls.FromString(data), **opts)
            try:
                g = text_format.Parse(text, g_cls(), descriptor_pool=pool)
            except text_format.ParseError:
                continue  # proto2 strings that are not UTF-8: Google refuses them here
            a = conf.types[full].from_text(text)
            assert a.SerializeToString(deterministic=True) == g.SerializeToString(
                deterministic=True
            ), (full, opts)
            checked += 1
    assert checked > 450
    cls = conf.types["protobuf_test_messages.proto3.TestAllTypesProto3"]
    g_cls = message_factory.GetMessageClass(pool.FindMessageTypeByName(cls.DESCRIPTOR.full_name))
    good = [
        "optional_int32: 0x1f optional_uint32: 017 # comment\n",
        "optional_float: -Infinity optional_double: 1.5f repeated_int32: [1, 2, 3]",
        'optional_string: "a" \'b\' "\\u00e9\\x41\\101" optional_bytes: "\\377"',
        "optional_nested_message < a: 1 >; optional_bool: t, optional_nested_enum: 2",
        'map_string_string { key: "k" value: "v" } map_int32_int32 { key: 1 }',
        "optional_any { [type.googleapis.com/protobuf_test_messages.proto3.TestAllTypesProto3] "
        "{ optional_int32: 5 } }",
    ]
    for text in good:
        g = text_format.Parse(text, g_cls(), descriptor_pool=pool)
        assert cls.from_text(text).SerializeToString(deterministic=True) == g.SerializeToString(
            deterministic=True
        ), text
    bad = [
        "optional_int32: 1 optional_int32: 2",
        "oneof_uint32: 1 oneof_string: 'x'",
        "optional_int32: 2147483648",
        "optional_uint32: -1",
        "no_such_field: 1",
        "optional_nested_message { a: 1",
        "optional_string: 'unterminated",
        "optional_int32 1",
        "optional_bool: yes",
        "optional_nested_enum: NOPE",
        'optional_string: "\\xff"',
        "optional_double: 01.5",
    ]
    for text in bad:
        with pytest.raises(text_format.ParseError):
            text_format.Parse(text, g_cls(), descriptor_pool=pool)
        with pytest.raises(P.DecodeError):
            cls.from_text(text)
    assert (
        cls.from_text(
            "no_such_field: { a: [1, 2] } optional_int32: 3", allow_unknown_field=True
        ).optional_int32
        == 3
    )


def test_cli_stubs_and_decode(tmp_path: Path) -> None:
    import ast
    import subprocess
    import sys

    (tmp_path / "shop.proto").write_text(SHOP)
    out = tmp_path / "shop_pb.pyi"
    run = [sys.executable, "-m", "amber", "proto"]
    subprocess.run([*run, "stubs", str(tmp_path / "shop.proto"), "-o", str(out)], check=True)
    tree = ast.parse(out.read_text())
    classes = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
    assert {"Item", "Order"} <= classes
    assert "def __init__(self, *, sku: _builtins.str | _builtins.bytes | None = ..." in (
        out.read_text()
    )
    ns = P.load(tmp_path / "shop.proto")
    data = ns.shop.Order(id=3, note="n").SerializeToString()
    done = subprocess.run(
        [*run, "decode", str(tmp_path / "shop.proto"), "shop.Order"],
        input=data,
        capture_output=True,
        check=True,
    )
    assert done.stdout.decode() == 'id: 3\nnote: "n"\n'
    as_json = subprocess.run(
        [*run, "decode", str(tmp_path / "shop.proto"), "shop.Order", "--json"],
        input=data,
        capture_output=True,
        check=True,
    )
    assert as_json.stdout.decode() == '{\n  "id": "3",\n  "note": "n"\n}\n'
    bad = subprocess.run(
        [*run, "decode", str(tmp_path / "shop.proto"), "shop.Order"],
        input=b"\x0a\x09",
        capture_output=True,
    )
    assert bad.returncode == 1 and b"larger than" in bad.stderr


WKT = """syntax = "proto3";
import "google/protobuf/timestamp.proto"; import "google/protobuf/duration.proto";
import "google/protobuf/any.proto"; import "google/protobuf/struct.proto";
import "google/protobuf/field_mask.proto";
message M { google.protobuf.Timestamp t = 1; }
"""


def test_well_known_type_helpers_match_google() -> None:
    import datetime as dt

    pytest.importorskip("google.protobuf")
    from google.protobuf import duration_pb2, field_mask_pb2, struct_pb2, timestamp_pb2

    ns = P.load_text(WKT, name="wkt.proto")
    gp = ns.google.protobuf
    for s, n in [(0, 0), (1, 21_000_000), (-1, 999_999_999), (253402300799, 999_999_999),
                 (-62135596800, 0), (5, 123_000)]:  # fmt: skip
        a, g = gp.Timestamp(seconds=s, nanos=n), timestamp_pb2.Timestamp(seconds=s, nanos=n)
        assert a.ToJsonString() == g.ToJsonString() and a.ToDatetime() == g.ToDatetime()
        back = gp.Timestamp()
        back.FromJsonString(g.ToJsonString())
        assert (back.seconds, back.nanos) == (s, n)
    for text in ["1972-01-01T10:00:20.021+08:00", "2020-02-29T23:59:59.5Z", "0001-01-01T00:00:00Z"]:
        a, g = gp.Timestamp(), timestamp_pb2.Timestamp()
        a.FromJsonString(text)
        g.FromJsonString(text)
        assert (a.seconds, a.nanos) == (g.seconds, g.nanos), text
    with pytest.raises(ValueError):
        gp.Timestamp().FromJsonString("2020-13-01T00:00:00Z")
    for bad in (gp.Timestamp(seconds=2**40), gp.Duration(seconds=2**40)):
        with pytest.raises(ValueError):
            bad.ToJsonString()
    with pytest.raises(ValueError):
        gp.Duration().FromJsonString("1.5")
    aware = dt.datetime(2021, 5, 6, 7, 8, 9, 123456, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    a, g = gp.Timestamp(), timestamp_pb2.Timestamp()
    a.FromDatetime(aware)
    g.FromDatetime(aware)
    assert (a.seconds, a.nanos) == (g.seconds, g.nanos)
    assert a.ToDatetime(dt.timezone.utc) == g.ToDatetime(dt.timezone.utc) == aware
    for s, n in [(0, 0), (1, 500_000_000), (-1, -500_000_000), (0, -1), (315576000000, 0)]:
        d, gd = gp.Duration(seconds=s, nanos=n), duration_pb2.Duration(seconds=s, nanos=n)
        assert d.ToJsonString() == gd.ToJsonString() and d.ToTimedelta() == gd.ToTimedelta()
    d, gd = gp.Duration(), duration_pb2.Duration()
    d.FromTimedelta(dt.timedelta(days=-3, seconds=5, microseconds=7))
    gd.FromTimedelta(dt.timedelta(days=-3, seconds=5, microseconds=7))
    assert (d.seconds, d.nanos) == (
        gd.seconds,
        gd.nanos,
    ) and d.ToMilliseconds() == gd.ToMilliseconds()
    value = {"a": 1, "b": [1, "x", None, {"c": True}], "d": {"e": 2.5}}
    st, gs = gp.Struct(), struct_pb2.Struct()
    st.update(value)
    gs.update(value)
    assert st.SerializeToString(deterministic=True) == gs.SerializeToString(deterministic=True)
    assert st["a"] == 1.0 and st["b"][1] == "x" and st["b"][2] is None and st["d"]["e"] == 2.5
    packed = gp.Any()
    packed.Pack(ns.M(t={"seconds": 5}))
    assert packed.type_url == "type.googleapis.com/M" and packed.Is(ns.M.DESCRIPTOR)
    out = ns.M()
    assert packed.Unpack(out) and out.t.seconds == 5 and not packed.Unpack(gp.Duration())
    fm = gp.FieldMask(paths=["a.foo_bar", "b"])
    assert fm.ToJsonString() == field_mask_pb2.FieldMask(paths=["a.foo_bar", "b"]).ToJsonString()
    fm.FromJsonString("x.fooBar")
    assert list(fm.paths) == ["x.foo_bar"]


def test_well_known_type_arithmetic_and_field_mask_sets_match_google(
    conf: P.Namespace, google: dict[str, Any]
) -> None:
    import datetime as dt

    from google.protobuf import duration_pb2, field_mask_pb2, timestamp_pb2

    ns = P.load_text(WKT, name="wkt.proto")
    gp = ns.google.protobuf
    ts = [(0, 0), (1_600_000_000, 123_456_000), (-5, 7_000)]
    ds = [(0, 0), (90, 500_000_000), (-3, -250_000_000)]
    others = [dt.datetime(2001, 2, 3, 4, 5, 6), dt.timedelta(days=2, microseconds=3)]
    for s, n in ts:
        a, g = gp.Timestamp(seconds=s, nanos=n), timestamp_pb2.Timestamp(seconds=s, nanos=n)
        for ds_, dn in ds:
            ad, gd = (
                gp.Duration(seconds=ds_, nanos=dn),
                duration_pb2.Duration(seconds=ds_, nanos=dn),
            )
            assert a + ad == g + gd and ad + a == gd + g and a - ad == g - gd
            assert ad - ad == gd - gd and ad + dt.timedelta(1) == gd + dt.timedelta(1)
            assert dt.timedelta(1) - ad == dt.timedelta(1) - gd
        assert a - a == g - g
        assert a + others[1] == g + others[1] and others[0] - a == others[0] - g
    rng = random.Random(7)
    names = ["a", "b", "a.x", "a.y", "a.x.z", "c.d", "c", "b.q"]
    for _ in range(300):
        m1 = rng.sample(names, rng.randint(0, 4))
        m2 = rng.sample(names, rng.randint(0, 4))
        for op in ("Union", "Intersect"):
            out, g_out = gp.FieldMask(), field_mask_pb2.FieldMask()
            getattr(out, op)(gp.FieldMask(paths=m1), gp.FieldMask(paths=m2))
            getattr(g_out, op)(
                field_mask_pb2.FieldMask(paths=m1), field_mask_pb2.FieldMask(paths=m2)
            )
            assert list(out.paths) == list(g_out.paths), (op, m1, m2)
        out, g_out = gp.FieldMask(), field_mask_pb2.FieldMask()
        out.CanonicalFormFromMask(gp.FieldMask(paths=m1))
        g_out.CanonicalFormFromMask(field_mask_pb2.FieldMask(paths=m1))
        assert list(out.paths) == list(g_out.paths)
    with pytest.raises(ValueError, match="not a FieldMask"):
        gp.FieldMask().Union(gp.Duration(), gp.FieldMask())
    name = "protobuf_test_messages.proto3.TestAllTypesProto3"
    cls, g_cls = conf.types[name], google[name]
    fields = [
        "optional_int32",
        "optional_string",
        "repeated_int32",
        "optional_nested_message",
        "optional_nested_message.a",
        "optional_nested_message.corecursive.optional_int64",
        "map_int32_int32",
        "oneof_uint32",
        "oneof_string",
    ]
    src = dict(
        optional_int32=5,
        repeated_int32=[1, 2],
        optional_nested_message={"a": 3, "corecursive": {"optional_int64": 4}},
        map_int32_int32={1: 2},
        oneof_string="s",
    )
    dst = dict(
        optional_string="keep",
        repeated_int32=[9],
        optional_nested_message={"corecursive": {"optional_bool": True}},
        map_int32_int32={3: 4},
        oneof_uint32=7,
    )
    for _ in range(200):
        paths = rng.sample(fields, rng.randint(1, 4))
        flags = rng.choice([(False, False), (True, False), (False, True), (True, True)])
        mask, g_mask = gp.FieldMask(paths=paths), field_mask_pb2.FieldMask(paths=paths)
        a_dst, g_dst = cls(**copy.deepcopy(dst)), g_cls(**copy.deepcopy(dst))
        try:
            g_mask.MergeMessage(g_cls(**copy.deepcopy(src)), g_dst, *flags)
        except ValueError:
            with pytest.raises(ValueError):
                mask.MergeMessage(cls(**copy.deepcopy(src)), a_dst, *flags)
            continue
        mask.MergeMessage(cls(**copy.deepcopy(src)), a_dst, *flags)
        assert a_dst.SerializeToString(deterministic=True) == g_dst.SerializeToString(
            deterministic=True
        ), (paths, flags)
    assert gp.FieldMask(paths=["a", "b.c"]).IsValidForDescriptor(ns.M.DESCRIPTOR) is False
    assert gp.FieldMask(paths=["t.seconds", "t"]).IsValidForDescriptor(ns.M.DESCRIPTOR)
    every = gp.FieldMask()
    every.AllFieldsFromDescriptor(ns.M.DESCRIPTOR)
    assert list(every.paths) == ["t"]


WKT_FIELDS = """syntax = "proto3";
import "google/protobuf/timestamp.proto"; import "google/protobuf/duration.proto";
import "google/protobuf/struct.proto";
message W {
  google.protobuf.Timestamp t = 1; google.protobuf.Duration d = 2; google.protobuf.Struct s = 3;
  google.protobuf.ListValue l = 4; google.protobuf.Value v = 5;
  repeated google.protobuf.Timestamp ts = 6;
}
"""


def test_struct_and_list_value_read_and_compare_as_google() -> None:
    """A missing Struct key or unset ListValue item raises as Google's; a Struct equals the
    dict of its values and a ListValue the list of its values."""
    pytest.importorskip("google.protobuf")
    from google.protobuf import struct_pb2

    ours = P.load_text(
        'syntax = "proto3"; import "google/protobuf/struct.proto"; package s2; '
        "message W { google.protobuf.Struct st = 1; google.protobuf.ListValue lv = 2; }",
        name="s2.proto",
    ).s2.W
    value = {"a": 1, "b": [1, "x", None, {"c": True}]}
    w = ours(st=value, lv=[1, "a"])
    g_st, g_lv = struct_pb2.Struct(), struct_pb2.ListValue()
    g_st.update(value)
    g_lv.extend([1, "a"])
    for mine, google, same, other in ((w.st, g_st, value, {"a": 2}), (w.lv, g_lv, [1, "a"], [1])):
        assert (mine == same) is (google == same) is True
        assert (mine == other) is (google == other) is False
    with pytest.raises(ValueError, match="Value not set"):
        ours().st["missing"]
    with pytest.raises(ValueError, match="Value not set"):
        struct_pb2.Struct()["missing"]


def test_well_known_type_fields_take_python_values_as_google() -> None:
    import datetime as dt

    pytest.importorskip("google.protobuf")
    from google.protobuf import message_factory

    ns = P.load_text(WKT_FIELDS, name="w.proto")
    pool = _google_pool(ns)
    g_w = message_factory.GetMessageClass(pool.FindMessageTypeByName("W"))
    when = dt.datetime(2020, 1, 2, 3, 4, 5, 6)
    kwargs: dict[str, Any] = dict(
        t=when,
        d=dt.timedelta(days=-1, seconds=3),
        s={"a": 1, "b": [True, None, {"c": "x"}], "fields": 2},  # a Struct's dict is contents
        l=[1, "two", [3]],
        ts=[when, {"seconds": 7}],
    )
    a, g = ns.W(**kwargs), g_w(**kwargs)
    assert a.SerializeToString(deterministic=True) == g.SerializeToString(deterministic=True)
    assert ns.W(t={"seconds": 5}).t.seconds == g_w(t={"seconds": 5}).t.seconds == 5
    a, g = ns.W(), g_w()
    for name, value in [
        ("t", dt.datetime(1999, 12, 31)),
        ("d", dt.timedelta(microseconds=5)),
        ("s", {"k": {"n": 1.5}}),
        ("l", ["x", None]),
    ]:
        setattr(a, name, value)
        setattr(g, name, value)
    assert a.SerializeToString(deterministic=True) == g.SerializeToString(deterministic=True)
    for name, value, g_error, error in [
        ("t", 5, TypeError, TypeError),
        ("d", when, TypeError, TypeError),
        ("s", [1], AttributeError, TypeError),  # Google's fails inside its update()
        ("v", 3, AttributeError, AttributeError),  # a Value takes no Python value in either
    ]:
        with pytest.raises(g_error):
            setattr(g, name, value)
        with pytest.raises(error):
            setattr(a, name, value)


def test_interop_with_google_messages(conf: P.Namespace, google: dict[str, Any]) -> None:
    from google.protobuf import timestamp_pb2

    full = "protobuf_test_messages.proto3.TestAllTypesProto3"
    a = conf.types[full](optional_int32=5, repeated_string=["x"], map_int32_int32={1: 2})
    g = a.to_google(google[full])
    assert g == google[full](optional_int32=5, repeated_string=["x"], map_int32_int32={1: 2})
    assert conf.types[full].from_google(g) == a
    ts = conf.types["google.protobuf.Timestamp"](seconds=3)
    assert ts.to_google() == timestamp_pb2.Timestamp(seconds=3)  # found in Google's pool
    with pytest.raises(TypeError):
        conf.types["google.protobuf.Duration"].from_google(timestamp_pb2.Timestamp())
    with pytest.raises(TypeError, match="knows no message type"):
        a.to_google()  # the conformance protos are not in Google's default pool


def _map_part(fd: Any, rng: random.Random, strings: list[str]) -> Any:
    """A random key or value for the map entry field `fd` (a Google field descriptor)."""
    if fd.type == fd.TYPE_STRING:
        return rng.choice(strings)
    if fd.type == fd.TYPE_BYTES:
        return rng.choice(strings).encode("utf-8") + bytes([rng.randrange(256)])
    if fd.type == fd.TYPE_BOOL:
        return rng.random() < 0.5
    if fd.type == fd.TYPE_MESSAGE:
        return {"a": rng.randrange(-3, 3)} if "nested" in fd.message_type.name.lower() else {}
    if fd.type == fd.TYPE_ENUM:
        return rng.choice([v.number for v in fd.enum_type.values])
    name = {
        fd.TYPE_INT32: "int32",
        fd.TYPE_INT64: "int64",
        fd.TYPE_UINT32: "uint32",
        fd.TYPE_UINT64: "uint64",
        fd.TYPE_SINT32: "sint32",
        fd.TYPE_SINT64: "sint64",
        fd.TYPE_FIXED32: "fixed32",
        fd.TYPE_FIXED64: "fixed64",
        fd.TYPE_SFIXED32: "sfixed32",
        fd.TYPE_SFIXED64: "sfixed64",
        fd.TYPE_FLOAT: "float",
        fd.TYPE_DOUBLE: "double",
    }[fd.type]
    v = NUMERIC_KINDS[name](rng)
    return 1.5 if isinstance(v, float) and v != v else v  # NaN keys and values compare unequal


def test_maps_and_strings_serialize_as_google_however_kept(
    conf: P.Namespace, google: dict[str, Any]
) -> None:
    """Every map field's entries, and singular and repeated strings, written from the objects the
    constructor keeps, from what a parse keeps (bits and places in the input) and from the
    objects made when read, give Google's bytes: ASCII, non-ASCII, empty and long strings,
    small and large numbers, in the default order and the deterministic one."""
    name = "protobuf_test_messages.proto3.TestAllTypesProto3"
    A, G = conf.types[name], google[name]
    strings = ["", "a", "ascii key", "é", "ключ", "😀x", "x" * 300, "a\x00b", "\x7f", "ü" * 70]
    maps = [
        f for f in G.DESCRIPTOR.fields if f.message_type and f.message_type.GetOptions().map_entry
    ]
    assert len(maps) >= 18
    rng = random.Random(20261127)
    for _ in range(40):
        kw: dict[str, Any] = {
            "optional_string": rng.choice(strings),
            "repeated_string": [rng.choice(strings) for _ in range(rng.randrange(6))],
            "optional_bytes": rng.choice(strings).encode(),
        }
        for f in maps:
            key, value = (
                f.message_type.fields_by_name["key"],
                f.message_type.fields_by_name["value"],
            )
            entries = [
                (_map_part(key, rng, strings), _map_part(value, rng, strings))
                for _ in range(rng.randrange(5))
            ]
            kw[f.name] = dict(entries)
        g, built = G(**kw), A(**kw)
        want = g.SerializeToString(deterministic=True)
        parsed = A.FromString(want)
        read = A.FromString(want)
        for f in maps:  # the map's entries become objects
            assert len(list(getattr(read, f.name).items())) == len(kw[f.name])
        for a in (built, parsed, read):
            assert a.SerializeToString(deterministic=True) == want
            assert G.FromString(a.SerializeToString()) == g
            assert a.ByteSize() == len(want)
        # The default order is the order the entries were given or read in, however kept.
        assert parsed.SerializeToString() == read.SerializeToString() == want
        assert (
            A.FromString(built.SerializeToString()).SerializeToString() == built.SerializeToString()
        )


def test_package_namespaces_answer_for_the_whole_load() -> None:
    ns = P.load_text(
        'syntax = "proto3"; package a.b; message M { int32 x = 1; }', name="pkg_ns.proto"
    )
    for space in (ns, ns.a, ns.a.b):
        assert space.descriptor_set() == ns.descriptor_set()
        assert space.types == {"a.b.M": ns.a.b.M}
        assert space.types_files() == ["pkg_ns.proto"]
    assert repr(ns.a) == "<amber.proto namespace: b>"
