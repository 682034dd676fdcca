"""Sub-messages a wire parse keeps as their bytes until first needed.

A parse checks every sub-message as it goes (every error raised then, with its kind, byte and
path, as Google's protobuf raises at parse) and builds one only when it is read, written, merged,
copied or compared. These tests read, write and change such unread sub-messages every way, and
compare with Google's protobuf where it is installed.
"""

from __future__ import annotations

import copy
import gc
import pickle
import random
import struct
from typing import Any

import pytest

import amber
import amber.proto as P
from tests.proto.oracle import google_classes
from tests.proto.wire import pb_len, pb_tag, varint

PROTO3 = """
syntax = "proto3";
package lazy;
message Leaf { int32 a = 1; string s = 2; repeated int64 nums = 3; bytes b = 4; }
message Node {
  int32 value = 1;
  string label = 2;
  Node child = 3;
  repeated Leaf leaves = 4;
  map<string, Leaf> by_name = 5;
  oneof pick { Leaf one = 6; string other = 7; }
}
"""

PROTO2 = """
syntax = "proto2";
package lazy2;
enum Color { RED = 0; GREEN = 1; }
message Need { required int32 x = 1; optional Color c = 2; }
message Holder { optional Need need = 1; repeated Need needs = 2; optional Holder next = 3; }
"""


@pytest.fixture(scope="module")
def spaces() -> list[P.Namespace]:
    return [P.load_text(PROTO3, name="lazy.proto"), P.load_text(PROTO2, name="lazy2.proto")]


@pytest.fixture(scope="module")
def T(spaces: list[P.Namespace]) -> dict[str, Any]:
    return {n: t for s in spaces for n, t in s.types.items()}


@pytest.fixture(scope="module")
def G(spaces: list[P.Namespace]) -> dict[str, Any]:
    """Google's classes for the same types."""
    pytest.importorskip("google.protobuf")
    return google_classes(spaces)


def leaf(a: int, s: str = "") -> bytes:
    out = pb_tag(1, 0) + varint(a) if a else b""
    return out + (pb_len(2, s.encode()) if s else b"")


def chain(depth: int) -> bytes:
    """A root Node and a chain of `depth` Nodes below it, each with its depth as value."""
    data = b""
    for level in range(depth, 0, -1):
        data = pb_len(3, pb_tag(1, 0) + varint(level) + data)
    return data


def test_errors_deep_in_unread_sub_messages_raise_at_parse(
    T: dict[str, Any], G: dict[str, Any]
) -> None:
    from google.protobuf import message

    Node = T["lazy.Node"]
    bad_utf8 = pb_len(2, b"\xff")
    cases = [
        # bad UTF-8 three levels down: the offset of the bad byte, the path through each level
        (pb_len(3, pb_len(3, pb_len(3, bad_utf8))), "malformed", 8, "$.child.child.child.label"),
        # the third leaf's varint cut by the leaf's end
        (
            pb_len(4, leaf(1)) + pb_len(4, leaf(2)) + pb_len(4, pb_tag(1, 0) + b"\x80"),
            "truncated",
            11,
            "$.leaves[2].a",
        ),
        # a map value's leaf holding an end-group tag
        (
            pb_len(5, pb_len(1, b"k") + pb_len(2, pb_tag(9, 4))),
            "malformed",
            7,
            "$.by_name[0].value",
        ),
        # a packed run cut inside a leaf inside the oneof
        (pb_len(6, pb_len(3, b"\x01\x80")), "truncated", 5, "$.one.nums[1]"),
    ]
    for data, kind, offset, path in cases:
        with pytest.raises(message.DecodeError):
            G["lazy.Node"].FromString(data)
        with pytest.raises(P.DecodeError) as e:
            Node.FromString(data)
        assert (e.value.kind, e.value.offset, e.value.path) == (kind, offset, path), str(e.value)
        # The same error merging into a message that has a value already.
        m = Node(value=5)
        with pytest.raises(P.DecodeError) as e:
            m.MergeFromString(data)
        assert (e.value.kind, e.value.offset, e.value.path) == (kind, offset, path)


def test_depth_limit_is_checked_at_parse(T: dict[str, Any], G: dict[str, Any]) -> None:
    Node = T["lazy.Node"]
    m = Node.FromString(chain(100))
    for level in range(1, 101):
        m = m.child
        assert m.value == level
    with pytest.raises(P.DecodeError) as e:
        Node.FromString(chain(101))
    assert (e.value.kind, e.value.path) == ("limit", "$" + ".child" * 101)
    from google.protobuf import message

    G["lazy.Node"].FromString(chain(100))
    with pytest.raises(message.DecodeError):
        G["lazy.Node"].FromString(chain(101))


def test_unread_sub_messages_write_as_googles(T: dict[str, Any], G: dict[str, Any]) -> None:
    # Not canonical: fields out of order, a singular sub-message twice (merged), a scalar twice
    # (last wins), explicit zeros, an over-long varint, an unknown field inside a leaf.
    one = pb_len(2, b"x") + pb_tag(1, 0) + b"\x85\x80\x00" + pb_len(4, b"")
    unknown = pb_tag(15, 0) + varint(7)
    data = (
        pb_len(3, pb_len(2, b"first") + pb_tag(1, 0) + varint(4))
        + pb_len(4, one + unknown)
        + pb_len(3, pb_tag(1, 0) + varint(9) + pb_len(3, leaf(0)))
        + pb_len(5, pb_len(1, b"k") + pb_len(2, one))
        + pb_len(6, leaf(3, "o"))
        + pb_tag(1, 0)
        + varint(2)
    )
    g = G["lazy.Node"].FromString(data)
    m = T["lazy.Node"].FromString(data)
    for det in (False, True):
        assert m.SerializeToString(deterministic=det) == g.SerializeToString(deterministic=det)
    assert m.ByteSize() == g.ByteSize()
    assert m.to_dict() == T["lazy.Node"].FromString(g.SerializeToString()).to_dict()
    assert m.to_json() == T["lazy.Node"].from_dict(m.to_dict()).to_json()
    assert str(m) == str(T["lazy.Node"].FromString(g.SerializeToString()))
    # Read after writing: the same values as Google's.
    assert (m.child.value, m.child.label, m.child.child.value) == (9, "first", 0)
    assert m.child.HasField("child")
    assert m.leaves[0].a == g.leaves[0].a == 5
    assert m.by_name["k"].s == "x"
    assert m.WhichOneof("pick") == "one" and m.one.s == "o"


def test_unread_sub_messages_compare_copy_and_pickle(T: dict[str, Any]) -> None:
    Node = T["lazy.Node"]
    built = Node(
        value=1, child={"value": 2, "child": {"label": "z"}}, leaves=[{"a": 1}, {"s": "t"}]
    )
    data = built.SerializeToString()
    a, b = Node.FromString(data), Node.FromString(data)
    assert a == b == built
    assert a != Node.FromString(Node(value=1, child={"value": 3}).SerializeToString())
    for c in (copy.copy(a), copy.deepcopy(a), pickle.loads(pickle.dumps(a))):
        assert c == built
        assert c.child.child.label == "z"
    d = Node()
    d.CopyFrom(b)
    del b
    gc.collect()
    assert d.leaves[1].s == "t" and d.child.value == 2


def test_merging_into_and_from_unread_sub_messages(T: dict[str, Any], G: dict[str, Any]) -> None:
    Node = T["lazy.Node"]
    first = Node(child={"value": 1, "leaves": [{"a": 1}]}, leaves=[{"a": 10}]).SerializeToString()
    second = Node(
        child={"label": "b", "leaves": [{"a": 2}]}, leaves=[{"a": 20}]
    ).SerializeToString()
    g = G["lazy.Node"].FromString(first)
    g.MergeFromString(second)
    # From bytes into unread sub-messages of another input.
    m = Node.FromString(first)
    m.MergeFromString(second)
    assert m.SerializeToString() == g.SerializeToString()
    assert [x.a for x in m.child.leaves] == [1, 2] and m.child.label == "b"
    # Message into message, both unread; and into one whose sub-messages were read.
    for read in (False, True):
        m = Node.FromString(first)
        if read:
            assert m.child.value == 1 and len(m.leaves) == 1
        m.MergeFrom(Node.FromString(second))
        assert m.SerializeToString() == g.SerializeToString()
    # The same input twice: places of one input merged into a message of the same input.
    m = Node.FromString(first)
    m.MergeFrom(copy.copy(m))
    g2 = G["lazy.Node"].FromString(first + first)
    assert m.SerializeToString() == g2.SerializeToString()


def test_sub_message_seen_twice_merges(T: dict[str, Any], G: dict[str, Any]) -> None:
    # The child twice on the wire, and inside it a grandchild twice.
    grand = pb_len(3, pb_tag(1, 0) + varint(1)) + pb_len(3, pb_len(2, b"g"))
    data = pb_len(3, grand) + pb_len(3, pb_len(2, b"c")) + pb_len(3, pb_tag(1, 0) + varint(7))
    m = T["lazy.Node"].FromString(data)
    g = G["lazy.Node"].FromString(data)
    assert m.SerializeToString() == g.SerializeToString()
    assert (m.child.value, m.child.label) == (7, "c")
    assert (m.child.child.value, m.child.child.label) == (1, "g")


def test_oneof_member_replaced_on_the_wire(T: dict[str, Any], G: dict[str, Any]) -> None:
    data = pb_len(6, leaf(1)) + pb_len(7, b"later")
    m = T["lazy.Node"].FromString(data)
    assert m.WhichOneof("pick") == "other" and not m.HasField("one")
    data = pb_len(7, b"first") + pb_len(6, leaf(2))
    m = T["lazy.Node"].FromString(data)
    assert m.WhichOneof("pick") == "one" and m.one.a == 2
    assert m.SerializeToString() == G["lazy.Node"].FromString(data).SerializeToString()


def test_proto2_rules_inside_unread_sub_messages(T: dict[str, Any], G: dict[str, Any]) -> None:
    Holder = T["lazy2.Holder"]
    # A closed enum's undeclared value goes to the leaf's unknown fields; a missing required
    # field deep down is found by the required check.
    need = pb_tag(2, 0) + varint(9)
    data = pb_len(3, pb_len(2, pb_tag(1, 0) + varint(1)) + pb_len(1, need))
    m = Holder.FromString(data)
    g = G["lazy2.Holder"].FromString(data)
    assert not m.IsInitialized()
    assert m.FindInitializationErrors() == g.FindInitializationErrors() == ["next.need.x"]
    with pytest.raises(amber.EncodeError):
        m.SerializeToString()
    assert m.SerializePartialToString() == g.SerializePartialToString()
    assert m.next.need._unknown_bytes() == need
    assert not m.next.need.HasField("c")


def test_unread_children_outlive_their_parent_and_input(T: dict[str, Any]) -> None:
    Node = T["lazy.Node"]
    data = bytearray(
        Node(child={"child": {"label": "deep"}}, leaves=[{"s": "x"}]).SerializeToString()
    )
    m = Node.FromString(data)
    child = m.child  # built now; its own child kept as bytes
    data[:] = b"\x00" * len(data)  # the parse copied the buffer
    del m
    gc.collect()
    assert child.child.label == "deep"
    assert child.child.SerializeToString() == pb_len(2, b"deep")


def test_a_long_unread_chain_frees_and_reads(T: dict[str, Any]) -> None:
    Node = T["lazy.Node"]
    data = chain(100)
    for _ in range(3):
        m = Node.FromString(data)
        del m
    m = Node.FromString(data)
    node = m
    while node.HasField("child"):
        node = node.child
    assert node.value == 100
    assert Node.FromString(m.SerializeToString()) == m


PLAIN = """
syntax = "proto3";
package plain;
enum E { Z = 0; ONE = 1; }
message Inner {
  int32 i32 = 1; int64 i64 = 2; uint32 u32 = 3; uint64 u64 = 4; sint32 s32 = 5;
  sint64 s64 = 6; fixed32 f32 = 7; fixed64 f64 = 8; sfixed32 sf32 = 9; sfixed64 sf64 = 10;
  float fl = 11; double db = 12; bool ok = 13; E e = 14; string s = 15; bytes b = 16;
  optional int32 more = 17; optional string note = 18; Inner sub = 19;
}
message Outer { Inner inner = 1; Outer next = 2; }
"""

# Every field of `Inner`, a type whose fields are all singular and outside oneofs or alone in
# one, as a proto3 `optional` field is (a sub-message of it kept as its bytes is built without
# the decoder), with a value of its wire type: numbers of every width and encoding, text,
# presence, a sub-message.
_PLAIN_VALUES: dict[int, Any] = {
    1: lambda r: pb_tag(1, 0) + varint(r.choice([0, 1, 2**31 - 1, 2**64 - 5])),
    2: lambda r: pb_tag(2, 0) + varint(r.choice([0, 300, 2**63, 2**64 - 1])),
    3: lambda r: pb_tag(3, 0) + varint(r.choice([0, 7, 2**32 - 1, 2**40 + 3])),
    4: lambda r: pb_tag(4, 0) + varint(r.choice([0, 2**64 - 1])),
    5: lambda r: pb_tag(5, 0) + varint(r.choice([0, 1, 2**32 - 1, 2**33 + 1])),
    6: lambda r: pb_tag(6, 0) + varint(r.choice([1, 2**64 - 1])),
    7: lambda r: pb_tag(7, 5) + r.randbytes(4),
    8: lambda r: pb_tag(8, 1) + r.randbytes(8),
    9: lambda r: pb_tag(9, 5) + r.randbytes(4),
    10: lambda r: pb_tag(10, 1) + r.randbytes(8),
    11: lambda r: (
        pb_tag(11, 5) + r.choice([b"\x00\x00\xc0\x7f", b"\x00\x00\x80\xff", b"\x01\x02\x03\x04"])
    ),
    12: lambda r: pb_tag(12, 1) + r.choice([b"\x00" * 7 + b"\x80", r.randbytes(8)]),
    13: lambda r: pb_tag(13, 0) + varint(r.choice([0, 1, 2, 2**63])),
    14: lambda r: pb_tag(14, 0) + varint(r.choice([0, 1, 5, 2**64 - 1])),
    15: lambda r: pb_len(15, r.choice(["", "a", "é€😀", "x" * 200]).encode()),
    16: lambda r: pb_len(16, r.choice([b"", b"\xff\x00", r.randbytes(40)])),
    17: lambda r: pb_tag(17, 0) + varint(r.choice([0, 9])),
    18: lambda r: pb_len(18, r.choice([b"", b"set"])),
    19: lambda r: pb_len(19, r.choice([b"", pb_tag(1, 0) + varint(3), pb_len(15, b"deep")])),
}
# What sends such a sub-message to the decoder after all: an unknown field, a known number
# with another wire type.
_NOT_PLAIN = [
    lambda r: pb_tag(99, 0) + varint(1),
    lambda r: pb_tag(1, 5) + b"\x01\x00\x00\x00",
    lambda r: pb_tag(15, 0) + varint(2),
]


def test_sub_messages_of_plain_fields_build_as_googles() -> None:
    """Random sub-messages of singular fields (each field absent, once or repeated on the wire,
    in any order, `sub` twice merging), some with a field that sends them to the decoder at a
    random place, one to three levels down: every field, presence, the unknown fields and the
    written bytes agree with Google's parse."""
    pytest.importorskip("google.protobuf")
    ns = P.load_text(PLAIN, name="plain.proto")
    G = google_classes([ns])
    Outer, GOuter = ns.types["plain.Outer"], G["plain.Outer"]
    names = [f.name for f in ns.types["plain.Inner"].DESCRIPTOR.fields]
    r = random.Random(20261128)
    for _ in range(400):
        numbers = r.sample(sorted(_PLAIN_VALUES), r.randrange(12))
        numbers += r.choices(numbers or [19], k=r.randrange(4))  # seen again, another value
        r.shuffle(numbers)
        fields = [_PLAIN_VALUES[n](r) for n in numbers]
        for _ in range(r.choice([0, 0, 0, 1, 2])):
            fields.insert(r.randrange(len(fields) + 1), r.choice(_NOT_PLAIN)(r))
        inner = b"".join(fields)
        data = pb_len(1, inner)
        for _ in range(r.randrange(3)):
            data = pb_len(2, data) + pb_len(1, inner)
        m, g = Outer.FromString(data), GOuter.FromString(data)
        assert m.SerializeToString(deterministic=True) == g.SerializeToString(deterministic=True)
        m, g = Outer.FromString(data), GOuter.FromString(data)
        while True:
            a, b = m.inner, g.inner
            for name in names:
                x, y = getattr(a, name), getattr(b, name)
                if name == "sub":
                    assert x.SerializeToString() == y.SerializeToString(), name
                elif isinstance(y, float):
                    assert struct.pack("<d", x) == struct.pack("<d", y), name
                else:
                    assert (type(x), x) == (type(y), y), name
            for name in ("more", "note", "sub"):
                assert a.HasField(name) == b.HasField(name), name
            assert [f.name for f, _ in a.ListFields()] == [f.name for f, _ in b.ListFields()]
            assert a.SerializeToString() == b.SerializeToString()  # the unknown fields too
            if not g.HasField("next"):
                assert not m.HasField("next")
                break
            m, g = m.next, g.next


ONEOFS = """
syntax = "proto3";
package oneofs;
message M {
  optional int32 a = 1; optional string b = 2; optional M c = 3;
  oneof pick { int32 x = 4; string y = 5; M z = 6; }
  int32 plain = 7;
  M next = 8;
}
"""


def test_proto3_optional_fields_and_oneof_members_parse_as_googles() -> None:
    """A proto3 `optional` field (alone in its oneof) is read as a field outside oneofs; the
    members of a real oneof still replace each other. Random sequences of both, zero values
    included, at the top and one level down, against Google's parse."""
    pytest.importorskip("google.protobuf")
    ns = P.load_text(ONEOFS, name="oneofs.proto")
    M, G = ns.types["oneofs.M"], google_classes([ns])["oneofs.M"]
    pieces = [
        lambda r: pb_tag(1, 0) + varint(r.choice([0, 5])),
        lambda r: pb_len(2, r.choice([b"", b"bee"])),
        lambda r: pb_len(3, r.choice([b"", pb_tag(1, 0) + varint(1)])),
        lambda r: pb_tag(4, 0) + varint(r.choice([0, 4])),
        lambda r: pb_len(5, r.choice([b"", b"why"])),
        lambda r: pb_len(6, r.choice([b"", pb_tag(7, 0) + varint(6)])),
        lambda r: pb_tag(7, 0) + varint(r.choice([0, 7])),
    ]
    r = random.Random(7)
    for _ in range(300):
        body = b"".join(r.choice(pieces)(r) for _ in range(r.randrange(6)))
        for data in (body, pb_len(8, body)):
            m, g = M.FromString(data), G.FromString(data)
            if data is not body:
                m, g = m.next, g.next
            for name in ("a", "b", "c", "x", "y", "z"):
                assert m.HasField(name) == g.HasField(name), (name, data)
            assert m.WhichOneof("pick") == g.WhichOneof("pick")
            assert (m.a, m.b, m.x, m.y, m.plain) == (g.a, g.b, g.x, g.y, g.plain)
            assert m.SerializeToString() == g.SerializeToString()


BAGS = """
syntax = "proto3";
package bags;
message P { int32 a = 1; string s = 2; bytes b = 3; double d = 4; optional sint64 z = 5; P sub = 6; }
message Bag { repeated P items = 1; map<string, P> by_name = 2; map<int32, P> by_id = 3; }
"""

_BAG_PIECES = [
    lambda r: pb_tag(1, 0) + varint(r.choice([0, 3, 2**64 - 1])),
    lambda r: pb_len(2, r.choice(["", "pé", "q" * 50]).encode()),
    lambda r: pb_len(3, r.choice([b"", b"\x00\xff"])),
    lambda r: pb_tag(4, 1) + struct.pack("<d", r.choice([0.0, -1.5, float("inf")])),
    lambda r: pb_tag(5, 0) + varint(r.choice([0, 1, 2**64 - 1])),
    lambda r: pb_len(6, r.choice([b"", pb_tag(1, 0) + varint(9), pb_len(2, b"in")])),
    lambda r: pb_tag(77, 0) + varint(1),  # unknown: the decoder builds this one
]


def test_plain_sub_messages_in_lists_and_maps_build_as_googles() -> None:
    """Messages of a plain type (see above) kept as their bytes in a repeated field and as map
    values are made into objects from their fields when the list or map is first read: random
    ones (fields repeated, unknown ones, empty ones) read, written and compared as Google's."""
    pytest.importorskip("google.protobuf")
    ns = P.load_text(BAGS, name="bags.proto")
    Bag, G = ns.types["bags.Bag"], google_classes([ns])["bags.Bag"]
    names = [f.name for f in ns.types["bags.P"].DESCRIPTOR.fields]
    r = random.Random(11)

    def item() -> bytes:
        return b"".join(r.choice(_BAG_PIECES)(r) for _ in range(r.randrange(5)))

    def same(a: Any, b: Any) -> None:
        for name in names:
            x, y = getattr(a, name), getattr(b, name)
            if name == "sub":
                assert x.SerializeToString() == y.SerializeToString()
            elif isinstance(y, float):
                assert struct.pack("<d", x) == struct.pack("<d", y)
            else:
                assert (type(x), x) == (type(y), y), name
        assert a.HasField("z") == b.HasField("z") and a.HasField("sub") == b.HasField("sub")
        assert a.SerializeToString() == b.SerializeToString()

    for _ in range(200):
        data = b""
        for _ in range(r.randrange(6)):
            kind = r.randrange(3)
            if kind == 0:
                data += pb_len(1, item())
            elif kind == 1:
                data += pb_len(2, pb_len(1, r.choice(["k", "é", ""]).encode()) + pb_len(2, item()))
            else:
                data += pb_len(3, pb_tag(1, 0) + varint(r.randrange(3)) + pb_len(2, item()))
        m, g = Bag.FromString(data), G.FromString(data)
        assert len(m.items) == len(g.items)
        for a, b in zip(m.items, g.items, strict=True):
            same(a, b)
        for key in ("by_name", "by_id"):
            mine, theirs = getattr(m, key), getattr(g, key)
            assert sorted(mine) == sorted(theirs)
            for k in theirs:
                same(mine[k], theirs[k])
        assert m.SerializeToString(deterministic=True) == g.SerializeToString(deterministic=True)
