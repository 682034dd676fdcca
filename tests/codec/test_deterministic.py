"""`dumps(..., deterministic=True)`: the bytes depend on the value alone.

Equal values give equal bytes however they were built (shared or separate key objects, sets
grown in any order) and in every process, whatever its hash seed; the frames decode exactly.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings

import amber
from tests.support.exact import assert_exact
from tests.support.values import VALUES, values


def det(value: Any, **options: Any) -> bytes:
    return amber.dumps(value, deterministic=True, **options)


@pytest.mark.parametrize("value", VALUES, ids=lambda v: type(v).__name__)
def test_every_type_round_trips(value: Any) -> None:
    wrapped = {"k": [value, (value,)], "z": value}
    assert_exact(amber.loads(det(wrapped)), wrapped)


@settings(max_examples=300, deadline=None)
@given(values)
def test_hypothesis_round_trip(value: Any) -> None:
    assert_exact(amber.loads(det(value)), value)
    assert_exact(amber.loads(det(value, identity=True)), value)


def _sets_grown_differently() -> tuple[set[str], set[str]]:
    small = {f"k{i}" for i in range(40)}
    grown = {f"k{i}" for i in range(5000)}
    grown -= {f"k{i}" for i in range(40, 5000)}  # same items, a larger table
    return small, grown


def test_sets_grown_in_any_order_give_the_same_bytes() -> None:
    small, grown = _sets_grown_differently()
    assert small == grown
    assert det(small) == det(grown)
    assert det(frozenset(small)) == det(frozenset(grown))
    assert det({"s": small, "t": [small]}) == det({"s": grown, "t": [grown]})
    assert amber.loads(det(small)) == small


def test_records_with_shared_or_separate_key_objects_give_the_same_bytes() -> None:
    keys = ["id", "name", "score"]
    shared = [dict(zip(keys, (i, f"n{i % 7}", i / 2), strict=True)) for i in range(200)]
    # Equal keys, but new str objects in every record.
    separate = [{"".join(k): v for k, v in zip(keys, rec.values(), strict=True)} for rec in shared]
    assert shared == separate
    assert det(shared) == det(separate)
    # Shapes still apply: the records are written without their keys.
    assert len(det(shared)) < len(amber.dumps(separate))
    assert_exact(amber.loads(det(separate)), shared)


def test_repeated_strings_are_deduplicated_by_text() -> None:
    word = "".join(["dup", "licate"])
    value = [word, "duplicate", "".join(["dupl", "icate"])] * 10
    data = det(value)
    # Written plainly at first sight, defined at the second, referenced after.
    assert data.count(b"duplicate") == 2
    assert data == det(["duplicate"] * 30)
    assert amber.loads(data) == value


def test_sets_nested_in_set_items_and_strings_around_them() -> None:
    inner = frozenset({("a", frozenset({"x", "y"})), ("b", frozenset())})
    value = ["shared", {inner, frozenset({"shared", "other"})}, "shared", {"shared": inner}]
    data = det(value)
    assert_exact(amber.loads(data), value)
    assert_exact(amber.loads(det(value, identity=True)), value)


def test_the_same_bytes_in_processes_with_other_hash_seeds() -> None:
    code = textwrap.dedent(
        """
        import hashlib, sys
        import amber
        recs = [{"id": i, "name": f"user{i % 97}", "tags": {f"t{i % 5}", f"u{i % 3}"}}
                for i in range(3000)]
        value = {
            "recs": recs,
            "words": {f"w{i}" for i in range(500)},
            "nested": frozenset({frozenset({f"a{i}", f"b{i}"}) for i in range(50)}),
            "pairs": {(f"p{i}", i) for i in range(100)},
            "keys": {frozenset({"x", "y"}): {"z"}},
        }
        data = amber.dumps(value, deterministic=True)
        assert amber.loads(data) == value
        print(hashlib.sha256(data).hexdigest(), len(data))
        """
    )
    digests = set()
    for seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True
        )
        digests.add(out.stdout)
    assert len(digests) == 1, digests


def test_oob_buffers_outside_sets_still_go_out_of_band() -> None:
    blob = bytes(range(256)) * 512
    bufs: list[Any] = []
    data = det({"blob": blob, "s": {blob[:10]}}, buffer_callback=bufs.append, oob_threshold=100)
    assert len(bufs) == 1
    assert amber.loads(data, buffers=bufs) == {"blob": blob, "s": {blob[:10]}}


def test_bytes_inside_a_set_stay_in_band() -> None:
    big = bytes(200_000)
    bufs: list[Any] = []
    data = det(frozenset({big}), buffer_callback=bufs.append)
    assert bufs == []
    assert amber.loads(data) == frozenset({big})


@dataclass(eq=False)
class Holder:
    """Hashable by identity, so a set can hold it, and it can hold an array."""

    arr: Any


amber.register(Holder, name="test.deterministic.Holder")


def test_a_set_item_holding_an_array_is_refused() -> None:
    value = {"s": {Holder(np.arange(3))}}
    with pytest.raises(amber.EncodeError) as ei:
        det(value)
    assert ei.value.kind == "unsupported"
    assert "deterministic" in str(ei.value)
    assert ei.value.path is not None and ei.value.path == "$.s[0].arr"
    # Without the option the same value encodes.
    assert isinstance(amber.loads(amber.dumps(value))["s"].pop().arr, np.ndarray)


class Grower:
    """Registered with a hook that adds to the set it sits in."""

    target: set[Any] | None = None


def _grow(obj: Grower) -> int:
    if Grower.target is not None:
        Grower.target.add(object())
    return 0


amber.register(Grower, name="test.deterministic.Grower", encode=_grow, decode=lambda s: Grower())


def test_a_hook_growing_the_set_being_ordered_is_a_mutation_error() -> None:
    target: set[Any] = {Grower(), Grower(), "a", "b"}
    Grower.target = target
    try:
        with pytest.raises(amber.EncodeError) as ei:
            det(target)
        assert ei.value.kind == "mutated"
    finally:
        Grower.target = None


def test_default_mode_is_unchanged() -> None:
    value = {"a": [1, "x", {"y"}]}
    assert amber.loads(amber.dumps(value)) == value
    assert hashlib.sha256(det(value)).digest() == hashlib.sha256(det(value)).digest()
