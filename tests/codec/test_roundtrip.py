"""Every supported type survives a round trip with its exact type and value."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings

import amber
from tests.support.exact import assert_exact
from tests.support.values import VALUES, values


@pytest.mark.parametrize("value", VALUES, ids=lambda v: type(v).__name__)
def test_exact_round_trip(value: Any) -> None:
    assert_exact(amber.loads(amber.dumps(value)), value)


@pytest.mark.parametrize("value", VALUES, ids=lambda v: type(v).__name__)
def test_round_trip_nested_in_containers(value: Any) -> None:
    wrapped = {"k": [value, (value,)], "z": value}
    assert_exact(amber.loads(amber.dumps(wrapped)), wrapped)


def test_dict_insertion_order_kept() -> None:
    d = {k: i for i, k in enumerate("zyxwvutsrqponm")}
    assert list(amber.loads(amber.dumps(d))) == list(d)


def test_inputs_of_every_buffer_kind() -> None:
    data = amber.dumps({"a": [1, 2, 3]})
    framed = b"HDR\0" + data + b"\0TRL"
    for buf in (
        data,
        bytearray(data),
        memoryview(data),
        memoryview(framed)[4 : 4 + len(data)],
        memoryview(bytearray(framed))[4 : 4 + len(data)],
    ):
        assert amber.loads(buf) == {"a": [1, 2, 3]}


def test_mmap_input(tmp_path: Any) -> None:
    import mmap

    p = tmp_path / "x.amb"
    p.write_bytes(amber.dumps(list(range(1000))))
    with open(p, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        assert amber.loads(m) == list(range(1000))


def test_repeated_strings_are_deduplicated() -> None:
    keys = [f"key-{i}" for i in range(10)]
    rows = [{k: i for k in keys} for i in range(1000)]
    data = amber.dumps(rows)
    # Each key is spelled once; later occurrences are one-byte references.
    assert data.count(b"key-3") == 1
    out = amber.loads(data)
    assert out == rows
    # Decoded keys are shared objects, as pickle's memo would give.
    assert out[0].keys().__iter__().__next__() is next(iter(out[999].keys()))


def test_equal_strings_from_different_objects_deduplicated() -> None:
    values = ["C" + str(i % 5) for i in range(100)]
    assert len({id(v) for v in values}) > 5
    # Values are defined at their second sighting (unique values cost no
    # table entry) and referenced after that.
    assert amber.dumps(values).count(b"C3") == 2


def test_unique_values_are_not_entered_in_the_table() -> None:
    values = [f"unique-{i}" for i in range(1000)]
    data = amber.dumps(values)
    assert data.count(b"\xb3") == 0  # no STR_DEF
    assert amber.loads(data) == values


# --- hypothesis: arbitrary nestings of every plain type ---------------------


@settings(max_examples=400, deadline=None)
@given(values)
def test_hypothesis_round_trip(value: Any) -> None:
    assert_exact(amber.loads(amber.dumps(value)), value)


@settings(max_examples=200, deadline=None)
@given(values)
def test_hypothesis_round_trip_identity_mode(value: Any) -> None:
    assert_exact(amber.loads(amber.dumps(value, identity=True)), value)


@pytest.mark.parametrize("identity", [False, True])
def test_ints_beyond_64_bits_inside_every_container(identity: bool) -> None:
    big = [2**64, -(2**70), 2**63, -(2**63) - 1, 10**40]
    value = [
        big,
        tuple(big),
        {f"k{i}": b for i, b in enumerate(big)},
        {b: i for i, b in enumerate(big)},
        set(big),
        [[b] for b in big],
    ]
    out = amber.loads(amber.dumps(value, identity=identity))
    assert out == value
    assert [type(x) for x in out[0]] == [int] * len(big)
