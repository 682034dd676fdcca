"""Google's protobuf as the oracle of amber.proto's tests: the conformance messages' files, the
descriptor pool Google's classes are made from at run time (from the descriptor set amber
compiled, no protoc), upb's wire vectors, the shop schema of the guide, and random values.

The vectors in crates/amber-core/tests/data/proto/runtime hold inputs and
`SerializeToString(deterministic=True)` outputs that Google's upb backend produced.
"""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import Any

import amber.proto as P

DATA = Path(__file__).resolve().parents[2] / "crates" / "amber-core" / "tests" / "data" / "proto"


CONF = DATA / "conformance"


FILES = [
    "test_messages_proto3.proto",
    "test_messages_proto2.proto",
    "test_messages_edition2023.proto",
]


def google_pool(ns: P.Namespace) -> Any:
    """Google's descriptor pool holding the files amber compiled for `ns` (the oracle's classes
    are made from it at run time, as `message_factory.GetMessageClass` makes them)."""
    from google.protobuf import descriptor_pb2, descriptor_pool

    pool = descriptor_pool.DescriptorPool()
    for f in descriptor_pb2.FileDescriptorSet.FromString(ns.descriptor_set()).file:
        pool.Add(f)
    return pool


def google_classes(spaces: list[P.Namespace]) -> dict[str, Any]:
    """Google's classes for every type of `spaces`, by full name, made from amber's descriptor
    sets."""
    from google.protobuf import message_factory

    out = {}
    for space in spaces:
        pool = google_pool(space)
        for n in space.types:
            out[n] = message_factory.GetMessageClass(pool.FindMessageTypeByName(n))
    return out


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


def upb_vectors() -> list[tuple[str, str, bytes, str]]:
    out = []
    for name in ["vectors_proto3.txt", "vectors_proto2.txt", "vectors_edition2023.txt"]:
        for line in (DATA / "runtime" / name).read_text().splitlines():
            if line.startswith("#") or not line.strip():
                continue
            kind, full, inp, exp = line.split()
            out.append((kind, full, bytes.fromhex(inp), exp))
    return out


def random_values(rng: random.Random) -> dict[str, Any]:
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
