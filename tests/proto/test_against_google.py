"""amber.proto's wire format against Google's: upb's vectors byte for byte, random messages
and every varint and tag width written as Google writes them, repeated numbers, descriptor sets,
and messages passed between the two runtimes."""

from __future__ import annotations

import copy
import json
import math
import pickle
import random
from typing import Any

import pytest

import amber.proto as P
from tests.proto.oracle import NUMERIC_KINDS, google_pool, random_values, upb_vectors
from tests.proto.wire import varint

# --- wire vectors from Google's upb -------------------------------------------------------------


def test_vectors_match_upb_byte_for_byte(conf: P.Namespace) -> None:
    vectors = upb_vectors()
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


def test_differential_against_google(conf: P.Namespace, google: dict[str, Any]) -> None:
    rng = random.Random(20261125)
    for full, g_cls in google.items():
        a_cls = conf.types[full]
        for _ in range(60):
            values = random_values(rng)
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
    g_cls = message_factory.GetMessageClass(google_pool(root).FindMessageTypeByName("tw.T"))
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


def test_built_maps_write_as_google(conf: P.Namespace, google: dict[str, Any]) -> None:
    """Every map field of the test messages built from Python values (keys and values of every
    number kind at their edges, strings, bytes, enums and messages) writes Google's bytes,
    deterministic, and the default bytes parse back to the same map."""
    rng = random.Random(11)
    checked = set()
    for full, g_cls in google.items():
        a_cls = conf.types[full]
        for f in g_cls.DESCRIPTOR.fields:
            if f.message_type is None or not f.message_type.GetOptions().map_entry:
                continue
            checked.add(f.name)
            kf, vf = f.message_type.fields_by_name["key"], f.message_type.fields_by_name["value"]
            for _ in range(6):
                entries = {_map_part(kf, rng): _map_part(vf, rng) for _ in range(rng.randrange(12))}
                a, g = a_cls(**{f.name: entries}), g_cls(**{f.name: entries})
                wire = g.SerializeToString(deterministic=True)
                assert a.SerializeToString(deterministic=True) == wire, (full, f.name)
                assert g_cls.FromString(a.SerializeToString()) == g, (full, f.name)
    # Every key kind with number values, and string keys with every value kind.
    assert {
        "map_int32_int32",
        "map_uint64_uint64",
        "map_sint32_sint32",
        "map_int32_double",
    } <= checked
    assert {"map_string_nested_message", "map_string_bytes", "map_string_nested_enum"} <= checked


def _map_part(fd: Any, rng: random.Random) -> Any:
    """A random key or value for map entry field `fd` (NUMERIC_KINDS' edges for numbers)."""
    from google.protobuf.descriptor import FieldDescriptor as FD

    if fd.type == FD.TYPE_MESSAGE:
        return (
            {"a": rng.choice([0, 1, -1, 2**31 - 1])}
            if "a" in fd.message_type.fields_by_name
            else {}
        )
    if fd.type == FD.TYPE_ENUM:
        return rng.choice([v.number for v in fd.enum_type.values])
    if fd.type == FD.TYPE_STRING:
        return rng.choice(["", "k", "é😀", "a longer key of more than sixteen bytes"])
    if fd.type == FD.TYPE_BYTES:
        return bytes(rng.randrange(256) for _ in range(rng.choice([0, 3, 17])))
    name = {v: k for k, v in vars(FD).items() if k.startswith("TYPE_")}[fd.type][5:].lower()
    value = NUMERIC_KINDS[name](rng)
    return value if value == value else 0.5  # (a NaN compares unequal to itself)
