"""Hostile bytes to amber.proto's parser: bad, random and mutated bytes raise DecodeError with
their place or parse as Google's protobuf parses them; varints of every length, float bits and
overlong enum numbers kept as Google keeps them."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

import amber
import amber.proto as P
from tests.proto.oracle import NUMERIC_KINDS, google_pool, random_values
from tests.proto.wire import varint


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

    pool = google_pool(conf)
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
            values = random_values(rng)
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
