"""proto2's features in amber.proto, against Google's protobuf: extensions, message sets,
required fields and closed enums."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

import amber
import amber.proto as P
from tests.proto.oracle import google_pool
from tests.proto.wire import varint

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

    pool = google_pool(ns)
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
    pool = google_pool(ns)

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
