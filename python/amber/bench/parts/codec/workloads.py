"""The codec part's workloads W1, W2 and W3: Python objects built by seeded generators.

W1 is a list of flat records (10 keys each) at three sizes, W2 a deep tree of small dicts, W3 a
dict of small dicts from 100 to 1,000,000 entries; docs/benchmarks.md describes each in full. This
module is their definition. Every generator draws from its own `random.Random(seed)`, so two runs (or
two machines) time the same values. Field order and the order of the random draws are part of the
definition: changing either changes the bytes every codec writes and the published figures no
longer compare.
"""

from __future__ import annotations

import random
from typing import Any

from amber.bench.engine.contender import Workload

# Value kinds a workload needs and a codec keeps exactly (see `Contender.kinds`).
JSON = "json"  # dict with str keys, list, str, int (64-bit), float, bool, None
TUPLE = "tuple"
SET = "set"
BYTES = "bytes"
BIGINT = "bigint"
ALL_KINDS = frozenset({JSON, TUPLE, SET, BYTES, BIGINT})

W1_SEED = 1
W2_SEED = 2
W3_SEED = 3

W1_SIZES = {"S": 10, "M": 1_000, "L": 100_000}
W2_DEPTH = 10
W2_BRANCHING = 2
W3_SIZES = (100, 1_000, 10_000, 100_000, 1_000_000)

_HEADER = b"HDR\0"
_TRAILER = b"\0TRL"


def w1_records(n: int, seed: int = W1_SEED) -> list[dict[str, Any]]:
    """W1: a list of `n` flat dicts of ten keys each, the records a program keeps in lists."""
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    for i in range(n):
        out.append(
            {
                "id": i + 1000,
                "score": rng.random() * 100,
                "name": f"user{i:06d}",
                "active": i % 3 == 0,
                "parent": None,
                "tags": ["red", "green", "blue"],
                "count": rng.randint(0, 10**9),
                "ratio": rng.random(),
                "code": "C" + str(i % 97),
                "values": [rng.randint(0, 10**6) for _ in range(3)],
            }
        )
    return out


def w2_nested(depth: int = W2_DEPTH, branching: int = W2_BRANCHING, seed: int = W2_SEED) -> Any:
    """W2: a tree of dicts `depth` levels deep; leaves are numbered depth first from 0."""
    rng = random.Random(seed)
    counter = 0

    def node(level: int) -> dict[str, Any]:
        nonlocal counter
        if level == depth:
            k = counter
            counter += 1
            return {
                "ints": [rng.randint(0, 10**6) for _ in range(50)],
                "float": rng.random(),
                "string": f"leaf-{k}",
                "strings": [f"item-{j}" for j in range(5)],
            }
        return {f"child_{b}": node(level + 1) for b in range(branching)}

    return node(0)


def w3_table(n: int, seed: int = W3_SEED) -> dict[str, dict[str, Any]]:
    """W3: `{key: {id, value, name}}` with `n` entries, a table of rows keyed by name, as stored
    whole in one database column."""
    rng = random.Random(seed)
    return {f"key{i:07d}": {"id": i, "value": rng.random(), "name": "n" + str(i)} for i in range(n)}


def embed(payload: bytes) -> memoryview:
    """A read-only slice of `payload` inside a larger buffer, as a bytea column hands it back."""
    whole = _HEADER + payload + _TRAILER
    return memoryview(whole)[len(_HEADER) : len(_HEADER) + len(payload)]


def w1(label: str, n: int | None = None) -> Workload:
    """W1-S, W1-M or W1-L; `n` overrides the size of W1_SIZES (tiny test runs)."""
    count = W1_SIZES[label] if n is None else n
    return Workload(
        name=f"W1-{label}",
        description=f"list of {count:,} flat dicts, 10 keys each (random seed {W1_SEED})",
        build=lambda: w1_records(count),
        kinds=frozenset({JSON}),
        size=count,
    )


def w2(depth: int = W2_DEPTH) -> Workload:
    leaves = W2_BRANCHING**depth
    return Workload(
        name="W2",
        description=f"nested dict, depth {depth}, branching {W2_BRANCHING}, {leaves:,} leaves "
        f"(random seed {W2_SEED})",
        build=lambda: w2_nested(depth),
        kinds=frozenset({JSON}),
        size=leaves,
    )


def w3(n: int) -> Workload:
    return Workload(
        name=f"W3-{size_label(n)}",
        description=f"dict of {n:,} dicts {{id, value, name}} (random seed {W3_SEED})",
        build=lambda: w3_table(n),
        kinds=frozenset({JSON}),
        size=n,
    )


def size_label(n: int) -> str:
    """100 -> "100", 1000 -> "1k", 1000000 -> "1M"."""
    for unit, scale in (("M", 1_000_000), ("k", 1_000)):
        if n >= scale and n % scale == 0:
            return f"{n // scale}{unit}"
    return str(n)
