# Generated vectors: this script writes vectors_*.txt beside it; run it with the
# protobuf oracle (Google's protobuf Python package, upb, plus grpcio-tools):
#   /tmp/protoc-venv/bin/python crates/amber-core/tests/data/proto/runtime/gen_vectors.py
#
# It compiles the conformance protos (../conformance) with protoc into a temp
# dir, fills TestAllTypesProto3, TestAllTypesProto2 and TestAllTypesEdition2023
# with random values (seeded: the output is reproducible), and writes one line
# per vector:  <kind> <full message name> <input hex> <expected hex>
# where <expected> is Google's SerializeToString(deterministic=True) of
# ParseFromString(<input>). Inputs with maps differ from run to run (upb's
# hash tables are seeded); the expected bytes do not. Kinds:
#   plain  input = SerializeToString() of a random message (+ unknown fields)
#   merge  input = two random messages' bytes concatenated (merge semantics)
#   raw    input = hand-made bytes (packed/unpacked mixed, closed enums, ...)
#   flip   input = a small plain vector with random bits flipped; expected is
#          "ERR" where upb refuses it
import importlib
import math
import os
import random
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CONF = os.path.join(HERE, "..", "conformance")

from google.protobuf import descriptor as D  # noqa: E402

FD = D.FieldDescriptor
R = random.Random(20261125)


def build():
    tmp = tempfile.mkdtemp()
    files = ["test_messages_proto3.proto", "test_messages_proto2.proto", "test_messages_edition2023.proto"]
    subprocess.check_call(
        [sys.executable, "-m", "grpc_tools.protoc", "-I" + CONF, "--python_out=" + tmp] + files
    )
    sys.path.insert(0, tmp)
    return {
        "proto3": importlib.import_module("test_messages_proto3_pb2").TestAllTypesProto3,
        "proto2": importlib.import_module("test_messages_proto2_pb2").TestAllTypesProto2,
        "edition2023": importlib.import_module("test_messages_edition2023_pb2").TestAllTypesEdition2023,
    }


INT32 = [0, 1, -1, 2**31 - 1, -(2**31), 150, -150]
INT64 = [0, 1, -1, 2**63 - 1, -(2**63), 1 << 40]
UINT32 = [0, 1, 2**32 - 1, 300]
UINT64 = [0, 1, 2**64 - 1, 1 << 50]
FLOATS = [0.0, -0.0, 1.5, float("nan"), float("inf"), float("-inf"), 1e-30, 3.4e38]


def rstr():
    c = R.random()
    if c < 0.2:
        return ""
    if c < 0.22:
        return "é✓𝄞" * R.randint(60, 120)  # big, multi-byte
    alphabet = "abcxyz é✓𝄞\x00\n"
    return "".join(R.choice(alphabet) for _ in range(R.randint(1, 12)))


def rbytes():
    if R.random() < 0.2:
        return b""
    return bytes(R.randrange(256) for _ in range(R.randint(1, 16)))


def scalar(f):
    t = f.type
    if t in (FD.TYPE_INT32, FD.TYPE_SINT32, FD.TYPE_SFIXED32):
        return R.choice(INT32) if R.random() < 0.5 else R.randint(-(2**31), 2**31 - 1)
    if t in (FD.TYPE_INT64, FD.TYPE_SINT64, FD.TYPE_SFIXED64):
        return R.choice(INT64) if R.random() < 0.5 else R.randint(-(2**63), 2**63 - 1)
    if t in (FD.TYPE_UINT32, FD.TYPE_FIXED32):
        return R.choice(UINT32) if R.random() < 0.5 else R.randint(0, 2**32 - 1)
    if t in (FD.TYPE_UINT64, FD.TYPE_FIXED64):
        return R.choice(UINT64) if R.random() < 0.5 else R.randint(0, 2**64 - 1)
    if t in (FD.TYPE_FLOAT, FD.TYPE_DOUBLE):
        return R.choice(FLOATS) if R.random() < 0.6 else R.uniform(-1e6, 1e6)
    if t == FD.TYPE_BOOL:
        return R.random() < 0.5
    if t == FD.TYPE_STRING:
        return rstr()
    if t == FD.TYPE_BYTES:
        return rbytes()
    if t == FD.TYPE_ENUM:
        vals = [v.number for v in f.enum_type.values]
        if not f.enum_type.is_closed and R.random() < 0.2:
            return R.choice([12345, -7, 2**31 - 1])
        return R.choice(vals)
    raise ValueError(t)


def is_msg(f):
    return f.type in (FD.TYPE_MESSAGE, FD.TYPE_GROUP)


def fill(m, depth):
    desc = m.DESCRIPTOR
    chosen_oneof = {}
    for o in desc.oneofs:
        chosen_oneof[o.name] = R.choice(o.fields) if R.random() < 0.7 else None
    for f in desc.fields:
        o = f.containing_oneof
        if o is not None and len(o.fields) > 1:
            if chosen_oneof.get(o.name) is not f:
                continue
        elif R.random() < 0.45 + 0.2 * depth:
            continue
        if is_msg(f) and f.message_type.full_name.startswith("google.protobuf."):
            fill_wkt(m, f)
            continue
        if f.message_type is not None and f.message_type.GetOptions().map_entry:
            fill_map(getattr(m, f.name), f, depth)
        elif f.is_repeated:
            rep = getattr(m, f.name)
            for _ in range(R.randint(0, 3)):
                if is_msg(f):
                    if depth < 2:
                        fill(rep.add(), depth + 1)
                else:
                    rep.append(scalar(f))
        elif is_msg(f):
            if depth < 2:
                sub = getattr(m, f.name)
                sub.SetInParent()
                fill(sub, depth + 1)
        else:
            setattr(m, f.name, scalar(f))


def fill_wkt(m, f):
    # Well-known types: a few simple fields through their own descriptors.
    target = getattr(m, f.name)
    if f.is_repeated:
        if f.message_type.full_name == "google.protobuf.Value":
            target.add().number_value = R.uniform(-5, 5)
        return
    name = f.message_type.full_name
    if name.endswith("Value") and "value" in target.DESCRIPTOR.fields_by_name:
        fv = target.DESCRIPTOR.fields_by_name["value"]
        target.value = scalar(fv)
    elif name in ("google.protobuf.Timestamp", "google.protobuf.Duration"):
        target.seconds = R.randint(0, 10**9)
        target.nanos = R.randint(0, 999_999_999)
    elif name == "google.protobuf.FieldMask":
        target.paths.append("a.b")
    elif name == "google.protobuf.Struct":
        target.fields["k"].string_value = rstr()
    elif name == "google.protobuf.Any":
        target.type_url = "type.googleapis.com/x"
        target.value = rbytes()
    else:
        target.SetInParent()


def fill_map(mp, f, depth):
    kf = f.message_type.fields_by_name["key"]
    vf = f.message_type.fields_by_name["value"]
    for _ in range(R.randint(0, 3)):
        k = scalar(kf)
        if is_msg(vf):
            if depth < 2:
                fill(mp[k], depth + 1)
            else:
                mp[k].SetInParent()
        else:
            mp[k] = scalar(vf)


def varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def tag(num, wt):
    return varint((num << 3) | wt)


def unknowns():
    """Unknown fields of every wire type, numbers the conformance types lack."""
    parts = [
        tag(9001, 0) + varint(2**64 - 1),
        tag(9002, 1) + struct.pack("<d", math.pi),
        tag(9003, 2) + varint(3) + b"abc",
        tag(9004, 5) + struct.pack("<f", 1.0),
        tag(9005, 3) + tag(1, 0) + varint(7) + tag(9005, 4),
    ]
    R.shuffle(parts)
    return b"".join(parts[: R.randint(1, len(parts))])


def raw_cases(name):
    """Hand-made inputs: packed/unpacked mixed, -1 as ten bytes, closed enums."""
    out = []
    # repeated_int32 is field 31 in all three; proto2 writes it unpacked,
    # proto3/editions packed: both forms mixed, in both orders.
    packed = tag(31, 2) + varint(3) + varint(1) + varint(2) + varint(3)
    unpacked = tag(31, 0) + varint(4) + tag(31, 0) + varint(2**64 - 1)
    out.append(packed + unpacked + packed)
    out.append(unpacked + packed)
    # optional_int32 = -1 as a 10-byte varint, then again (last wins).
    out.append(tag(1, 0) + varint(2**64 - 1) + tag(1, 0) + varint(5))
    # optional_nested_message (18) twice: merged.
    a = tag(18, 2) + varint(2) + tag(1, 0) + varint(9)
    b = tag(18, 2) + varint(0)
    out.append(a + b + a)
    # optional_nested_enum (21): 77 is declared nowhere (closed in proto2).
    out.append(tag(21, 0) + varint(77) + tag(21, 0) + varint(1))
    # repeated_nested_enum (51) packed with an unknown value in the middle.
    out.append(tag(51, 2) + varint(3) + varint(1) + varint(77) + varint(2))
    # A known field with the wrong wire type (optional_int32 as fixed32).
    out.append(tag(1, 5) + b"\x01\x02\x03\x04" + tag(1, 0) + varint(3))
    # oneof_uint32 (111) then oneof_string (113): last one wins.
    out.append(tag(111, 0) + varint(5) + tag(113, 2) + varint(1) + b"z")
    # map_int32_int32 (56): entries without key, without value, repeated key.
    out.append(
        tag(56, 2) + varint(2) + tag(2, 0) + varint(8)
        + tag(56, 2) + varint(2) + tag(1, 0) + varint(3)
        + tag(56, 2) + varint(4) + tag(1, 0) + varint(3) + tag(2, 0) + varint(6)
    )
    # map_string_nested_enum (73): an undeclared value (the whole entry is
    # unknown where the enum is closed), then a declared one.
    out.append(
        tag(73, 2) + varint(5) + tag(1, 2) + varint(1) + b"k" + tag(2, 0) + varint(77)
        + tag(73, 2) + varint(5) + tag(1, 2) + varint(1) + b"j" + tag(2, 0) + varint(1)
    )
    # A map entry with its key last, and one with an unknown field inside
    # (upb moves such an entry, re-encoded, to the unknown fields).
    out.append(tag(56, 2) + varint(4) + tag(2, 0) + varint(1) + tag(1, 0) + varint(2))
    out.append(tag(56, 2) + varint(6) + tag(2, 0) + varint(0) + tag(9, 0) + varint(1) + tag(1, 0) + varint(0))
    out.append(tag(56, 2) + varint(5) + tag(1, 5) + b"\x01\x02\x03\x04")
    # -1 in packed int32 (ten bytes each) and sint32/sint64 extremes.
    out.append(tag(31, 2) + varint(20) + varint(2**64 - 1) + varint(2**64 - 1))
    if name == "proto2":
        # proto2 strings are not checked for UTF-8.
        out.append(tag(14, 2) + varint(2) + b"\xff\xfe")
    return out


def main():
    types = build()
    total = 0
    for syntax, cls in types.items():
        lines = []
        for i in range(14):
            m = cls()
            fill(m, 0)
            data = m.SerializeToString()
            if i % 3 == 0:
                data += unknowns()
            lines.append(("plain", data))
        for _ in range(4):
            a, b = cls(), cls()
            fill(a, 1)
            fill(b, 1)
            lines.append(("merge", a.SerializeToString() + b.SerializeToString()))
        for data in raw_cases(syntax):
            lines.append(("raw", data))
        fresh = []
        for _ in range(12):
            m = cls()
            fill(m, 1)
            fresh.append(m.SerializeToString())
        small = sorted((d for d in fresh if d), key=len)[:4]
        for i in range(40):
            data = bytearray(small[i % len(small)])
            for _ in range(R.randint(1, 3)):
                data[R.randrange(len(data))] ^= 1 << R.randrange(8)
            lines.append(("flip", bytes(data)))
        path = os.path.join(HERE, "vectors_%s.txt" % syntax)
        with open(path, "w") as fh:
            fh.write("# Generated by gen_vectors.py (protobuf %s, upb): kind type input expected\n" % (
                __import__("google.protobuf").protobuf.__version__))
            for kind, data in lines:
                m = cls()
                try:
                    m.ParseFromString(data)
                    det = m.SerializeToString(deterministic=True).hex() or "-"
                except Exception:  # upb's DecodeError
                    if kind != "flip":
                        raise
                    det = "ERR"
                fh.write("%s %s %s %s\n" % (kind, cls.DESCRIPTOR.full_name, data.hex(), det))
        total += os.path.getsize(path)
        print(path, os.path.getsize(path))
    print("total", total)


if __name__ == "__main__":
    main()
