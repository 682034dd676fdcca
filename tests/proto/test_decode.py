"""The wire decoder against Google's protobuf on hand-made bytes: every field kind, singular (in
and out of oneofs, with and without presence), repeated packed and unpacked, maps, closed enums,
with values out of their kind's range, padded varints, wrong wire types, fields repeated and
interleaved, and packed runs long and short (the unrolled varint reader and its tail)."""

from __future__ import annotations

import random
from typing import Any

import pytest

import amber.proto as P
from tests.proto.wire import varint

KINDS = [
    "int32",
    "int64",
    "uint32",
    "uint64",
    "sint32",
    "sint64",
    "bool",
    "fixed32",
    "fixed64",
    "sfixed32",
    "sfixed64",
    "float",
    "double",
    "string",
    "bytes",
]
# Varints at the edges of each kind's range (negative ones as ten bytes).
EDGES = [0, 1, 127, 128, 2**31 - 1, 2**31, 2**32 - 1, 2**32 + 7, 2**63, 2**64 - 1, -1, -(2**31)]
WIRE = {"fixed32": 5, "sfixed32": 5, "float": 5, "fixed64": 1, "sfixed64": 1, "double": 1}


def _schema(syntax: str) -> str:
    label = "optional " if syntax == "proto2" else ""
    lines = [
        f'syntax = "{syntax}";',
        "package dec;",
        "enum Color { RED = 0; GREEN = 1; BLUE = 5; }",
        f"message Sub {{ {label}int32 a = 1; {label}string s = 2; }}",
    ]
    lines.append("message M {")
    n = 1
    for k in KINDS:
        lines.append(f"  {label}{k} s_{k} = {n};")
        lines.append(f"  repeated {k} r_{k} = {n + 1};")
        n += 2
    if syntax == "proto3":
        for k in KINDS:
            lines.append(f"  optional {k} o_{k} = {n};")
            n += 1
    lines.append("  oneof pick {")
    for k in ("int32", "string", "double", "sint64"):
        lines.append(f"    {k} one_{k} = {n};")
        n += 1
    lines.append("  }")
    lines.append(f"  {label}Color color = {n};")
    lines.append(f"  repeated Color colors = {n + 1};")
    lines.append(f"  {label}Sub sub = {n + 2};")
    lines.append(f"  repeated Sub subs = {n + 3};")
    lines.append(f"  map<int32, string> by_id = {n + 4};")
    lines.append(f"  map<string, Sub> by_name = {n + 5};")
    lines.append(f"  {label}int64 far = 300;")
    lines.append("}")
    return "\n".join(lines)


def _varint(n: int, pad: int = 0) -> bytes:
    """`n` as 64 bits, in a varint padded with `pad` more bytes (at most 10 in all)."""
    out = bytearray(varint(n & (1 << 64) - 1))
    for _ in range(min(pad, 10 - len(out))):  # padded: still at most 10 bytes
        out[-1] |= 0x80
        out.append(0)
    return bytes(out)


def _value(rng: random.Random, wt: int) -> bytes:
    if wt == 0:
        n = rng.choice([*EDGES, rng.getrandbits(rng.choice((7, 14, 35, 64)))])
        return _varint(n, pad=rng.choice((0, 0, 0, 1, 3)))
    if wt == 1:
        return rng.getrandbits(64).to_bytes(8, "little")
    if wt == 5:
        return rng.getrandbits(32).to_bytes(4, "little")
    body = rng.choice([b"", b"abc", "héllo".encode(), bytes(rng.getrandbits(8) for _ in range(5))])
    return _varint(len(body)) + body


def _field(rng: random.Random, fields: list[Any]) -> bytes:
    f = rng.choice(fields)
    kind = f.kind
    wt = WIRE.get(kind, 2 if kind in ("string", "bytes", "message") else 0)
    if f.repeated and kind not in ("string", "bytes", "message") and rng.random() < 0.5:
        wt = 2  # packed
    if rng.random() < 0.1:
        wt = rng.choice((0, 1, 2, 5))  # maybe the wrong wire type: kept as unknown
    tag = _varint(f.number << 3 | wt)
    if f.repeated and wt == 2 and kind not in ("string", "bytes", "message"):
        # A packed run: short, or long enough for the unrolled reader.
        one = WIRE.get(kind, 0)
        run = b"".join(_value(rng, one) for _ in range(rng.choice((0, 1, 3, 12, 40))))
        return tag + _varint(len(run)) + run
    if kind == "message" and wt == 2:
        body = _varint(1 << 3) + _varint(rng.getrandbits(40)) + _varint(2 << 3 | 2) + b"\x01x"
        if f.map:
            key_wt = 0 if f.key_kind == "int32" else 2
            body = _varint(1 << 3 | key_wt) + _value(rng, key_wt) + _varint(2 << 3 | 2)
            body += (
                _value(rng, 2)
                if f.value_kind == "string"
                else _varint(4) + _varint(1 << 3) + _varint(rng.getrandbits(20))
            )
        return tag + _varint(len(body)) + body
    return tag + _value(rng, wt)


class _F:
    def __init__(self, d: Any) -> None:
        names = {
            1: "double",
            2: "float",
            3: "int64",
            4: "uint64",
            5: "int32",
            6: "fixed64",
            7: "fixed32",
            8: "bool",
            9: "string",
            11: "message",
            12: "bytes",
            13: "uint32",
            14: "enum",
            15: "sfixed32",
            16: "sfixed64",
            17: "sint32",
            18: "sint64",
        }
        self.number = d.number
        self.kind = "int32" if d.type == 14 else names[d.type]
        self.repeated = d.is_repeated
        self.map = d.message_type is not None and d.message_type.GetOptions().map_entry
        if self.map:
            self.key_kind = names[d.message_type.fields_by_number[1].type]
            self.value_kind = names[d.message_type.fields_by_number[2].type]


@pytest.mark.parametrize("syntax", ["proto2", "proto3"])
def test_random_fields_decode_as_google_decodes_them(syntax: str) -> None:
    pytest.importorskip("google.protobuf")
    from google.protobuf import descriptor_pb2, descriptor_pool, message, message_factory

    ns = P.load_text(_schema(syntax), name=f"dec_{syntax}.proto")
    pool = descriptor_pool.DescriptorPool()
    for fd in descriptor_pb2.FileDescriptorSet.FromString(ns.descriptor_set()).file:
        pool.Add(fd)
    desc = pool.FindMessageTypeByName("dec.M")
    G = message_factory.GetMessageClass(desc)
    A = ns.types["dec.M"]
    fields = [_F(d) for d in desc.fields]
    rng = random.Random(27)
    same = refused = 0
    for _ in range(1500):
        data = b"".join(_field(rng, fields) for _ in range(rng.randrange(1, 12)))
        try:
            g = G.FromString(data)
        except message.DecodeError:
            with pytest.raises(P.DecodeError):
                A.FromString(data)
            refused += 1
            continue
        a = A.FromString(data)
        assert a.SerializeToString(deterministic=True) == g.SerializeToString(deterministic=True), (
            data.hex()
        )
        for d in desc.fields:
            av, gv = getattr(a, d.name), getattr(g, d.name)
            if d.message_type is not None and d.message_type.GetOptions().map_entry:
                assert len(av) == len(gv), (d.name, data.hex())
            elif d.message_type is None:
                av, gv = (list(av), list(gv)) if d.is_repeated else ([av], [gv])
                assert _same(av, gv), (d.name, data.hex())
        same += 1
    assert same > 1000 and refused > 0


def _same(a: list[Any], b: list[Any]) -> bool:
    """Equal values, NaN equal to NaN; proto2 text that is not UTF-8, which Google gives as bytes
    and amber as a str with surrogate escapes, compared as bytes."""

    def norm(v: Any) -> Any:
        return v.encode("utf-8", "surrogateescape") if isinstance(v, str) else v

    return len(a) == len(b) and all(
        norm(x) == norm(y) or (x != x and y != y) for x, y in zip(a, b, strict=True)
    )


MAPS = """
syntax = "proto2";
package maps;
enum Color { RED = 0; GREEN = 1; BLUE = 5; }
message V { optional int32 a = 1; }
message M {
  map<int32, string> by_id = 1;
  map<string, sint64> by_name = 2;
  map<int64, Color> colors = 3;
  map<bool, fixed32> flags = 4;
  map<uint32, V> subs = 5;
}
"""


def test_map_entries_in_every_form_decode_as_google_decodes_them() -> None:
    """Entries in the usual form (key, then value) and in every other: value first, key or
    value missing or repeated, padded tags, wrong wire types, unknown fields inside, closed
    enum values the enum lacks, entries cut short; one entry or several per message."""
    pytest.importorskip("google.protobuf")
    from google.protobuf import descriptor_pb2, descriptor_pool, message, message_factory

    ns = P.load_text(MAPS, name="maps.proto")
    pool = descriptor_pool.DescriptorPool()
    for fd in descriptor_pb2.FileDescriptorSet.FromString(ns.descriptor_set()).file:
        pool.Add(fd)
    G = message_factory.GetMessageClass(pool.FindMessageTypeByName("maps.M"))
    A = ns.types["maps.M"]
    key = {
        1: (0, b"\x07"),
        2: (2, b"\x02ab"),
        3: (0, b"\x96\x01"),
        4: (0, b"\x01"),
        5: (0, b"\x09"),
    }
    val = {
        1: [(2, b"\x03xyz"), (2, b"\x00"), (2, b"\x02\xff\xfe")],
        2: [(0, b"\x03"), (0, b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01")],
        3: [(0, b"\x01"), (0, b"\x05"), (0, b"\x02")],  # 2: not a Color
        4: [(5, b"\x01\x00\x00\x80")],
        5: [(2, b"\x02\x08\x03"), (2, b"\x00")],
    }
    rng = random.Random(5)
    forms = 0
    for _ in range(2500):
        data = b""
        for _ in range(rng.randrange(1, 4)):
            num = rng.choice(list(key))
            kt, kb = key[num]
            vt, vb = rng.choice(val[num])
            k, v = _varint(1 << 3 | kt) + kb, _varint(2 << 3 | vt) + vb
            parts = rng.choice(
                [[k, v], [k, v], [v, k], [k], [v], [], [k, v, v], [k, k, v], [k, v, k]]
            )
            unknown, wrong = rng.random() < 0.2, rng.random() < 0.1
            if num == 5 and (unknown or wrong) and parts.count(v) > 1:
                # A message value twice in an entry that also has unknown fields goes to the
                # unknown fields as both occurrences; upb writes the merged value once.
                parts.remove(v)
            if unknown:
                parts.insert(rng.randrange(len(parts) + 1), _varint(3 << 3) + b"\x01")
            if wrong:
                parts.append(
                    _varint(2 << 3 | (vt ^ 5 if vt in (0, 5) else 0)) + b"\x01\x00\x00\x00"
                )
            if rng.random() < 0.05:
                parts = [b"\x88\x00" + p[1:] if p[:1] == b"\x08" else p for p in parts]  # padded
            body = b"".join(parts)
            if rng.random() < 0.05:
                body = body[: rng.randrange(len(body) + 1)]
            data += _varint(num << 3 | 2) + _varint(len(body)) + body
        try:
            g = G.FromString(data)
        except message.DecodeError:
            with pytest.raises(P.DecodeError):
                A.FromString(data)
            continue
        a = A.FromString(data)
        assert a.SerializeToString(deterministic=True) == g.SerializeToString(deterministic=True), (
            data.hex()
        )
        for name in ("by_id", "by_name", "colors", "flags"):
            ga = dict(getattr(g, name).items())
            aa = dict(getattr(a, name).items())
            assert {k: _norm(v) for k, v in aa.items()} == {k: _norm(v) for k, v in ga.items()}
        assert {k: v.a for k, v in a.subs.items()} == {k: v.a for k, v in g.subs.items()}
        forms += 1
    assert forms > 2000


def _norm(v: Any) -> Any:
    return v.encode("utf-8", "surrogateescape") if isinstance(v, str) else v
