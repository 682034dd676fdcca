"""amber.proto's reflection (`DESCRIPTOR` and the descriptors it leads to), compared attribute
by attribute with Google's descriptors built from the same compiled schema
(`Namespace.descriptor_set()` into a fresh `descriptor_pool`), and the message protocol a
migrating user relies on besides: `in`, `__getstate__`/`__setstate__`, pickling and copies,
text from bytes, and Google's `json_format` given amber messages."""

from __future__ import annotations

import copy
import math
import pickle
import struct
from pathlib import Path
from typing import Any

import pytest

import amber
import amber.proto as P

descriptor_pb2 = pytest.importorskip("google.protobuf.descriptor_pb2")
from google.protobuf import (  # noqa: E402
    descriptor_pool,
    json_format,
    message_factory,
    text_format,
)

DATA = Path(__file__).resolve().parents[2] / "crates" / "amber-core" / "tests" / "data" / "proto"
CONF = DATA / "conformance"

PROTO2 = r"""
syntax = "proto2";
package p2;
enum Color { BLUE = 2; RED = 1; GREEN = 3 [deprecated = true]; }
message All {
  option deprecated = true;
  optional int32 i32 = 1 [default = -5];
  optional int64 i64 = 2 [default = -9223372036854775808];
  optional uint32 u32 = 3 [default = 4294967295];
  optional uint64 u64 = 4 [default = 18446744073709551615];
  optional sint32 s32 = 5 [default = -7];
  optional sint64 s64 = 6;
  optional fixed32 f32 = 7;
  optional fixed64 f64 = 8 [default = 9];
  optional sfixed32 sf32 = 9;
  optional sfixed64 sf64 = 10 [default = -10];
  optional float fl = 11 [default = 0.1];
  optional double db = 12 [default = -0.0];
  optional float finf = 13 [default = inf];
  optional double dnan = 14 [default = nan];
  optional double dneg = 15 [default = -inf];
  optional bool b = 16 [default = true];
  optional string s = 17 [default = "h\303\251\n\"q\""];
  optional bytes by = 18 [default = "\377\000x"];
  optional Color c = 19;
  optional Color c2 = 20 [default = GREEN];
  repeated int32 r = 21 [packed = true];
  repeated string rs = 22;
  optional All child = 23;
  optional group Grp = 24 { optional int32 x = 25; repeated group Inner = 26 { optional int32 y = 27; } }
  required int32 req = 28;
  oneof pick { int32 pa = 30; string pb = 31 [default = "z"]; All pc = 32; }
  map<string, All> by_name = 33;
  optional int32 b_x = 34 [json_name = "zz"];
  optional int32 _lead = 35;
  optional int32 Cap_first = 36;
  extensions 100 to 199, 1000 to max;
  message Nested {
    enum Kind { K0 = 0; K1 = 1; }
    optional Kind kind = 1;
    extend All { optional string nested_ext = 101 [default = "ne"]; repeated int32 nested_rep = 102; }
  }
}
extend All {
  optional int32 top_ext = 150 [default = 7];
  optional All.Nested msg_ext = 151;
  optional group GroupExt = 152 { optional int32 g = 153; }
}
message Set { option message_set_wire_format = true; extensions 4 to max; }
message Member { extend Set { optional Member member = 200; } optional string text = 1; }
"""

PROTO3 = r"""
syntax = "proto3";
package p3;
import "google/protobuf/timestamp.proto";
import public "google/protobuf/struct.proto";
option java_package = "com.example.p3";
enum Status { UNKNOWN = 0; OPEN = 1; SHUT = 2; }
message Order {
  int64 id = 2;
  string note = 1;
  optional int32 opt = 3;
  repeated int32 nums = 4;
  repeated int32 loose = 5 [packed = false];
  map<string, int64> counts = 6;
  map<int32, Order> kids = 7;
  map<string, Status> states = 8;
  Status status = 9;
  Order parent = 10;
  google.protobuf.Timestamp at = 11;
  google.protobuf.Struct meta = 12;
  oneof pay { string card = 14; int32 cash = 13; Order voucher = 15; }
  oneof other { bytes blob = 16; }
  bytes data = 17;
  double ratio = 18;
  message Line { string sku = 1; }
  repeated Line lines = 19;
}
"""

EDITIONS = r"""
edition = "2023";
package ed;
option features.message_encoding = DELIMITED;
message Leaf { int32 v = 1; }
message Root {
  Leaf delimited = 1;
  Leaf prefixed = 2 [features.message_encoding = LENGTH_PREFIXED];
  repeated Leaf many = 3;
  map<string, Leaf> by_key = 4;
  int32 plain = 5 [default = 4];
  int32 implicit = 6 [features.field_presence = IMPLICIT];
  message Inner {
    Leaf in_inner = 1;
    oneof o { Leaf in_oneof = 2 [features.message_encoding = LENGTH_PREFIXED]; int32 n = 3; }
  }
  extensions 10 to 20;
}
extend Root { Leaf ext_leaf = 10; }
enum Closed { option features.enum_type = CLOSED; C1 = 1; C2 = 2; }
"""

OPTIONS = r"""
syntax = "proto2";
package opt;
import "google/protobuf/descriptor.proto";
extend google.protobuf.FieldOptions { optional string label = 50001; }
extend google.protobuf.MessageOptions { optional int32 version = 50002; }
extend google.protobuf.EnumValueOptions { optional bool hidden = 50003; }
message Tagged {
  option (version) = 3;
  optional int32 a = 1 [(label) = "alpha", deprecated = true];
  optional int32 b = 2;
  oneof choice { option (oneof_tag) = "c"; int32 c1 = 3; int32 c2 = 4; }
}
extend google.protobuf.OneofOptions { optional string oneof_tag = 50004; }
enum Mode { option allow_alias = true; M0 = 0 [(hidden) = true]; M1 = 1; ALIAS = 1; }
"""


def _load(source: str, name: str) -> P.Namespace:
    return P.load_text(source, name=name)


def _conformance() -> P.Namespace:
    return P.load(
        "test_messages_proto2.proto",
        "test_messages_proto3.proto",
        "test_messages_edition2023.proto",
        include=[CONF],
    )


SCHEMAS = {
    "proto2": lambda: _load(PROTO2, "p2.proto"),
    "proto3": lambda: _load(PROTO3, "p3.proto"),
    "editions": lambda: _load(EDITIONS, "ed.proto"),
    "options": lambda: _load(OPTIONS, "opt.proto"),
    "conformance": _conformance,
}


def _pool(ns: P.Namespace) -> Any:
    pool = descriptor_pool.DescriptorPool()
    for f in descriptor_pb2.FileDescriptorSet.FromString(ns.descriptor_set()).file:
        pool.Add(f)
    return pool


def _same(a: Any, b: Any) -> bool:
    """Equal values of the same type (NaN equal to NaN, -0.0 apart from 0.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    return bool(a == b)


def _options_same(amber_opts: Any, google_opts: Any) -> bool:
    """amber's options message holds what Google's does (read back by Google's class)."""
    back = type(google_opts).FromString(amber_opts.SerializeToString())
    return bool(back == google_opts) and type(amber_opts).__name__ == type(google_opts).__name__


def _name(d: Any) -> Any:
    return None if d is None else d.full_name


def _normal_defaults(proto: Any) -> Any:
    """A descriptor proto with float defaults as numbers: protoc writes `9e+09` where upb's
    CopyToProto writes `8.99999949e+09` (the same float)."""
    fields = [*getattr(proto, "field", []), *getattr(proto, "extension", [])]
    for f in fields:
        if f.HasField("default_value") and f.type in (1, 2):
            value = float(f.default_value)
            if f.type == 2:  # a float: its 32-bit value
                value = struct.unpack("<f", struct.pack("<f", value))[0]
            f.default_value = repr(value)
    for n in getattr(proto, "nested_type", []):
        _normal_defaults(n)
    for n in getattr(proto, "message_type", []):
        _normal_defaults(n)
    return proto


FIELD_ATTRS = [
    "name",
    "full_name",
    "number",
    "index",
    "type",
    "cpp_type",
    "json_name",
    "camelcase_name",
    "has_default_value",
    "has_presence",
    "is_extension",
    "is_packed",
    "is_repeated",
    "is_required",
    "has_options",
]


def _check_field(a: Any, g: Any) -> None:
    for attr in FIELD_ATTRS:
        assert getattr(a, attr) == getattr(g, attr), (a.full_name, attr)
    assert _same(a.default_value, g.default_value), (a.full_name, a.default_value, g.default_value)
    assert _options_same(a.GetOptions(), g.GetOptions()), a.full_name
    for attr in ("message_type", "enum_type", "containing_type", "extension_scope"):
        assert _name(getattr(a, attr)) == _name(getattr(g, attr)), (a.full_name, attr)
    assert (a.containing_oneof and a.containing_oneof.name) == (
        g.containing_oneof and g.containing_oneof.name
    )
    assert a.file.name == g.file.name


def _check_enum(a: Any, g: Any) -> None:
    for attr in ("name", "full_name", "is_closed", "has_options"):
        assert getattr(a, attr) == getattr(g, attr), (a.full_name, attr)
    assert _name(a.containing_type) == _name(g.containing_type)
    assert a.file.name == g.file.name
    assert _options_same(a.GetOptions(), g.GetOptions())
    assert [(v.name, v.number, v.index, v.has_options) for v in a.values] == [
        (v.name, v.number, v.index, v.has_options) for v in g.values
    ]
    for av, gv in zip(a.values, g.values, strict=True):
        assert _options_same(av.GetOptions(), gv.GetOptions()), (a.full_name, av.name)
        assert av.type is a
    # (upb's values_by_number repeats an aliased number in its keys; the mapping is the same)
    assert set(a.values_by_number) == set(g.values_by_number)
    assert {k: v.name for k, v in a.values_by_number.items()} == {
        k: g.values_by_number[k].name for k in set(g.values_by_number)
    }
    mine, theirs = descriptor_pb2.EnumDescriptorProto(), descriptor_pb2.EnumDescriptorProto()
    a.CopyToProto(mine)
    g.CopyToProto(theirs)
    assert mine == theirs


def _check_message(a: Any, g: Any) -> None:
    for attr in ("name", "full_name", "is_extendable", "extension_ranges", "has_options"):
        assert getattr(a, attr) == getattr(g, attr), (a.full_name, attr)
    assert _name(a.containing_type) == _name(g.containing_type)
    assert _options_same(a.GetOptions(), g.GetOptions()), a.full_name
    assert a.GetOptions() is a.GetOptions()
    assert [f.name for f in a.fields] == [f.name for f in g.fields], a.full_name
    for af, gf in zip(a.fields, g.fields, strict=True):
        _check_field(af, gf)
        assert a.fields[af.index] is af
    for attr in (
        "fields_by_name",
        "fields_by_number",
        "fields_by_camelcase_name",
        "oneofs_by_name",
        "nested_types_by_name",
        "enum_types_by_name",
        "enum_values_by_name",
        "extensions_by_name",
    ):
        assert set(getattr(a, attr)) == set(getattr(g, attr)), (a.full_name, attr)
    assert [o.name for o in a.oneofs] == [o.name for o in g.oneofs]
    for ao, go in zip(a.oneofs, g.oneofs, strict=True):
        assert (ao.full_name, ao.index, ao.has_options) == (go.full_name, go.index, go.has_options)
        assert [f.name for f in ao.fields] == [f.name for f in go.fields]
        assert _options_same(ao.GetOptions(), go.GetOptions())
    assert [e.name for e in a.extensions] == [e.name for e in g.extensions]
    for ae, ge in zip(a.extensions, g.extensions, strict=True):
        _check_field(ae, ge)
    assert [t.name for t in a.nested_types] == [t.name for t in g.nested_types]
    assert [e.name for e in a.enum_types] == [e.name for e in g.enum_types]
    for ae, ge in zip(a.enum_types, g.enum_types, strict=True):
        _check_enum(ae, ge)
        for v in ge.values:
            assert a.EnumValueName(ge.name, v.number) == g.EnumValueName(ge.name, v.number)
    assert a.file.name == g.file.name
    mine, theirs = descriptor_pb2.DescriptorProto(), descriptor_pb2.DescriptorProto()
    a.CopyToProto(mine)
    g.CopyToProto(theirs)
    assert _normal_defaults(mine) == _normal_defaults(theirs)


def _check_file(a: Any, g: Any) -> None:
    assert (a.name, a.package, a.has_options) == (g.name, g.package, g.has_options)
    assert [d.name for d in a.dependencies] == [d.name for d in g.dependencies]
    assert [d.name for d in a.public_dependencies] == [d.name for d in g.public_dependencies]
    for attr in ("message_types_by_name", "enum_types_by_name", "extensions_by_name"):
        assert [(k, v.full_name) for k, v in getattr(a, attr).items()] == [
            (k, v.full_name) for k, v in getattr(g, attr).items()
        ], (a.name, attr)
    assert _options_same(a.GetOptions(), g.GetOptions())
    mine = descriptor_pb2.FileDescriptorProto.FromString(a.serialized_pb)
    copied = descriptor_pb2.FileDescriptorProto()
    a.CopyToProto(copied)
    assert copied == mine
    theirs = descriptor_pb2.FileDescriptorProto.FromString(g.serialized_pb)
    assert _normal_defaults(mine) == _normal_defaults(theirs)


@pytest.mark.parametrize("schema", sorted(SCHEMAS))
def test_descriptors_match_googles(schema: str) -> None:
    ns = SCHEMAS[schema]()
    pool = _pool(ns)
    files = {}
    for full, cls in ns.types.items():
        _check_message(cls.DESCRIPTOR, pool.FindMessageTypeByName(full))
        files[cls.DESCRIPTOR.file.name] = cls.DESCRIPTOR.file
    for enum in ns.__dict__["_enums"].values():
        e = enum.DESCRIPTOR
        _check_enum(e, pool.FindEnumTypeByName(e.full_name))
    for name, f in files.items():
        _check_file(f, pool.FindFileByName(name))
        for ext in f.extensions_by_name.values():
            _check_field(ext, pool.FindExtensionByName(ext.full_name))
    assert files


def test_the_values_a_migrating_user_reads() -> None:
    ns = _load(PROTO2, "p2.proto")
    d = ns.p2.All.DESCRIPTOR
    f = d.fields_by_name
    assert d.fields_by_name["by_name"].message_type.GetOptions().map_entry is True
    assert d.fields_by_name["child"].message_type.GetOptions().map_entry is False
    assert d.fields_by_name["by_name"].message_type.has_options is True
    assert d.GetOptions().deprecated is True and d.has_options
    assert ns.p2.Member.DESCRIPTOR.has_options is False
    assert ns.p2.Set.DESCRIPTOR.GetOptions().message_set_wire_format is True
    assert (f["i32"].default_value, f["s"].default_value, f["by"].default_value) == (
        -5,
        'hé\n"q"',
        b"\xff\x00x",
    )
    assert f["c"].default_value == 2 and f["c2"].default_value == 3  # first value; GREEN
    assert f["r"].default_value == [] and f["child"].default_value is None
    assert f["grp"].type == f["grp"].TYPE_GROUP and f["grp"].cpp_type == f["grp"].CPPTYPE_MESSAGE
    assert d.is_extendable and d.extension_ranges == [(100, 200), (1000, 536870912)]
    assert ns.p2.Set.DESCRIPTOR.extension_ranges == [(4, 2147483647)]
    assert not ns.p2.Member.DESCRIPTOR.is_extendable
    assert ns.p2.Member.DESCRIPTOR.extension_ranges == []
    assert f["b_x"].camelcase_name == "zz" and f["Cap_first"].camelcase_name == "capFirst"
    assert ns.p2.top_ext.default_value == 7 and ns.p2.top_ext.index == 0
    assert ns.p2.All.Nested.nested_ext.default_value == "ne"
    assert d.file.package == "p2" and d.file.extensions_by_name["top_ext"] is ns.p2.top_ext
    fc = P.FieldDescriptor
    assert (fc.CPPTYPE_INT32, fc.CPPTYPE_STRING, fc.CPPTYPE_MESSAGE, fc.MAX_CPPTYPE) == (
        1,
        9,
        10,
        10,
    )


def test_custom_options_read_as_extensions_of_the_load() -> None:
    ns = _load(OPTIONS, "opt.proto")
    d = ns.opt.Tagged.DESCRIPTOR
    assert d.GetOptions().Extensions[ns.opt.version] == 3
    a = d.fields_by_name["a"].GetOptions()
    assert a.Extensions[ns.opt.label] == "alpha" and a.deprecated is True
    assert not d.fields_by_name["b"].GetOptions().HasExtension(ns.opt.label)
    assert d.oneofs[0].GetOptions().Extensions[ns.opt.oneof_tag] == "c"
    mode = ns.opt.Mode.DESCRIPTOR
    assert mode.GetOptions().allow_alias is True
    assert mode.values[0].GetOptions().Extensions[ns.opt.hidden] is True
    # A load without descriptor.proto reads its options with amber's own classes.
    plain = _load(PROTO3, "p3.proto").p3.Order.DESCRIPTOR
    assert type(plain.file.GetOptions()).__name__ == "FileOptions"
    assert plain.file.GetOptions().java_package == "com.example.p3"


def test_editions_delimited_fields_are_groups() -> None:
    ns = _load(EDITIONS, "ed.proto")
    root = ns.ed.Root.DESCRIPTOR
    by = root.fields_by_name
    assert by["delimited"].type == P.FieldDescriptor.TYPE_GROUP
    assert by["many"].type == P.FieldDescriptor.TYPE_GROUP
    assert by["prefixed"].type == P.FieldDescriptor.TYPE_MESSAGE
    assert by["by_key"].type == P.FieldDescriptor.TYPE_MESSAGE
    inner = ns.ed.Root.Inner.DESCRIPTOR.fields_by_name
    assert inner["in_inner"].type == P.FieldDescriptor.TYPE_GROUP
    assert inner["in_oneof"].type == P.FieldDescriptor.TYPE_MESSAGE
    assert ns.ed.ext_leaf.type == P.FieldDescriptor.TYPE_GROUP
    assert by["plain"].default_value == 4 and by["plain"].has_default_value


def test_in_is_has_field_as_upb() -> None:
    ns = _load(PROTO3, "p3.proto")
    G = message_factory.GetMessageClass(_pool(ns).FindMessageTypeByName("p3.Order"))
    a, g = ns.p3.Order(opt=0, cash=1), G(opt=0, cash=1)
    for name in ("opt", "parent", "pay", "other", "cash", "card", "at"):
        assert (name in a) is (name in g) is a.HasField(name), name
    for name in ("id", "nums", "counts", "no_such_field"):
        with pytest.raises(ValueError) as mine:
            _ = name in a
        with pytest.raises(ValueError) as theirs:
            _ = name in g
        assert str(mine.value) == str(theirs.value)
    lv = ns.google.protobuf.ListValue()
    lv.extend([1, "x"])
    assert "x" in lv and 1 in lv and "values" not in lv
    st = ns.google.protobuf.Struct()
    st["a"] = 1
    assert "a" in st and "b" not in st


def test_getstate_setstate_pickle_and_copy() -> None:
    ns = _load(PROTO3, "p3.proto")
    G = message_factory.GetMessageClass(_pool(ns).FindMessageTypeByName("p3.Order"))
    m = ns.p3.Order(id=5, nums=[1, 2], counts={"a": 1}, lines=[{"sku": "x"}], cash=3)
    g = G.FromString(m.SerializeToString())
    state = m.__getstate__()
    assert state == g.__getstate__() == {"serialized": m.SerializePartialToString()}
    fresh = ns.p3.Order(note="gone")
    fresh.__setstate__(state)
    assert fresh == m
    fresh.__setstate__({"serialized": state["serialized"].decode("latin-1")})
    assert fresh == m
    with pytest.raises(TypeError, match="serialized"):
        fresh.__setstate__({})
    with pytest.raises(amber.proto.DecodeError):
        fresh.__setstate__({"serialized": b"\xff"})
    for proto in range(pickle.HIGHEST_PROTOCOL + 1):
        assert pickle.loads(pickle.dumps(m, protocol=proto)) == m
    assert copy.copy(m) == m and copy.deepcopy(m) == m and copy.deepcopy(m) is not m
    # Required fields missing: the state and pickling keep the partial message, as Google's.
    p2 = _load(PROTO2, "p2.proto").p2.All(i32=1)
    assert p2.__getstate__() == {"serialized": b"\x08\x01"}
    assert pickle.loads(pickle.dumps(p2)) == p2


def test_from_text_takes_utf8_bytes() -> None:
    ns = _load(PROTO3, "p3.proto")
    Order = ns.p3.Order
    assert Order.from_text(b'id: 3 note: "h\xc3\xa9"') == Order(id=3, note="hé")
    assert Order.from_text(bytearray(b"id: 4")) == Order(id=4)
    assert Order.from_text(memoryview(b"id: 5")) == Order(id=5)
    assert Order.from_text(b"zz: 1", allow_unknown_field=True) == Order()
    with pytest.raises(amber.proto.DecodeError) as e:
        Order.from_text(b'id: 3\n note: "\xff"')
    assert e.value.offset == 14 and str(e.value).startswith("2:9 :")
    with pytest.raises(amber.proto.DecodeError, match=r"^1:"):
        Order.from_text(b"id: x")
    with pytest.raises(TypeError):
        Order.from_text(5)  # type: ignore[arg-type]


def _google_class(ns: P.Namespace, full_name: str) -> tuple[Any, Any]:
    pool = _pool(ns)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(full_name)), pool


def test_googles_json_format_takes_amber_messages() -> None:
    ns = _conformance()
    name = "protobuf_test_messages.proto3.TestAllTypesProto3"
    G, pool = _google_class(ns, name)
    text = """{"optionalInt32": 5, "optionalString": "x", "repeatedInt64": ["1", "2"],
      "mapStringString": {"a": "b"}, "optionalNestedMessage": {"a": 3},
      "optionalNestedEnum": "BAR", "oneofUint32": 7, "repeatedNestedMessage": [{"a": 1}],
      "mapStringNestedMessage": {"k": {"a": 2}}, "optionalBytes": "AQI=",
      "optionalDouble": 1.5, "optionalFloat": 0.25, "optionalBool": true,
      "optionalTimestamp": "2020-01-01T00:00:00Z", "optionalDuration": "1.5s",
      "optionalStruct": {"a": [1, "x", null]}, "optionalValue": 3, "optionalFieldMask": "a,bC",
      "optionalInt32Wrapper": 4, "optionalAny": {"@type":
      "type.googleapis.com/protobuf_test_messages.proto3.TestAllTypesProto3",
      "optionalInt32": 1}}"""
    a = ns.types[name].from_json(text)
    g = json_format.Parse(text, G(), descriptor_pool=pool)
    for options in (
        {},
        {"preserving_proto_field_name": True},
        {"always_print_fields_with_no_presence": True},
        {"use_integers_for_enums": True},
    ):
        mine = json_format.MessageToJson(a, descriptor_pool=pool, **options)
        assert mine == json_format.MessageToJson(g, descriptor_pool=pool, **options)
        assert mine == a.to_json(**options)
        assert json_format.MessageToDict(a, descriptor_pool=pool, **options) == (
            json_format.MessageToDict(g, descriptor_pool=pool, **options)
        )
    parsed = ns.types[name]()
    json_format.Parse(text, parsed, descriptor_pool=pool)
    assert parsed == a
    # proto2: extensions and groups.
    p2 = "protobuf_test_messages.proto2.TestAllTypesProto2"
    G2, pool2 = _google_class(ns, p2)
    m = ns.types[p2](optional_int32=1)
    m.Extensions[ns.protobuf_test_messages.proto2.extension_int32] = 5
    m.data.group_int32 = 3
    gm = G2.FromString(m.SerializeToString())
    assert json_format.MessageToJson(m, descriptor_pool=pool2) == json_format.MessageToJson(
        gm, descriptor_pool=pool2
    )
    back = ns.types[p2]()
    json_format.ParseDict(json_format.MessageToDict(gm, descriptor_pool=pool2), back)
    assert back == m
    # text_format prints and parses amber messages as Google's, maps through their entry class.
    m.repeated_string.append("r")
    m.optional_nested_message.a = 2
    gm = G2.FromString(m.SerializeToString())
    assert text_format.MessageToString(m) == text_format.MessageToString(gm)
    parsed2 = ns.types[p2]()
    text_format.Parse(text_format.MessageToString(gm), parsed2)
    assert parsed2 == m
    m.map_int32_int32[1] = 2
    m.map_string_nested_message["k"].a = 7
    m.map_string_string["s"] = "t"
    entry = m.map_string_nested_message.GetEntryClass()
    assert entry.DESCRIPTOR.GetOptions().map_entry
    gm = G2.FromString(m.SerializeToString(deterministic=True))
    assert text_format.MessageToString(m) == text_format.MessageToString(gm)
    parsed3 = ns.types[p2]()
    text_format.Parse(text_format.MessageToString(gm), parsed3)
    assert parsed3 == m
