"""Dict shapes: records that share their key objects are written as SHAPED (values only).

Shapes are an encoding device: what decodes must be exactly the dicts that were encoded, keys and
key order included, whatever the encoder chose to write.
"""

from __future__ import annotations

import struct
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import amber
from tests.support.exact import assert_exact

SHAPE_DEF, SHAPED = 0xD5, 0xD6


def frame(body: bytes) -> bytes:
    return b"\xab\x01\x00\x00" + struct.pack("<I", len(body)) + body


def tags(data: bytes) -> bytes:
    """The body, for crude 'does it contain this tag' checks on small frames."""
    return data[8:]


def roundtrip(value: Any, **kw: Any) -> bytes:
    data = amber.dumps(value, **kw)
    assert_exact(amber.loads(data), value)
    return data


def test_records_use_one_shape() -> None:
    rows = [{"id": i, "name": f"n{i}", "ok": i % 2 == 0} for i in range(100)]
    data = roundtrip(rows)
    body = tags(data)
    assert body.count(bytes([SHAPED, 0])) == 98  # first plain, second defines, rest refer
    assert SHAPE_DEF in body
    # Keys that are equal but not the same objects are written as keys, and decode the same.
    fresh = [{"".join(k): v for k, v in r.items()} for r in rows]
    other = roundtrip(fresh)
    assert SHAPED not in tags(other)
    assert len(data) < len(other)


def test_key_order_and_subsets_are_kept() -> None:
    a, b, c = "alpha", "beta", "gamma"
    rows: list[dict[str, int]] = []
    for i in range(30):
        order = [(a, b, c), (c, b, a), (a, b), (b, a, c)][i % 4]
        rows.append({k: i for k in order})
    for got, want in zip(amber.loads(roundtrip(rows)), rows, strict=True):
        assert list(got) == list(want)


def test_dicts_with_deleted_entries() -> None:
    rows = []
    for i in range(5):
        d = {"x": i, "gone": 0, "y": -i}
        del d["gone"]
        rows.append(d)
        rows.append({"x": i, "y": i})
    roundtrip(rows)


def test_keys_that_are_not_str_or_many() -> None:
    ints = [{1: i, 2: -i} for i in range(5)]
    tuples = [{(1, 2): i, (3,): i} for i in range(5)]
    keys = [f"k{j}" for j in range(100)]
    wide = [dict.fromkeys(keys, i) for i in range(3)]
    for value in (ints, tuples, wide):
        data = roundtrip(value)
        if value is not ints:
            assert SHAPED not in tags(data)


def test_nested_records_and_dict_subclasses() -> None:
    import collections

    value = [
        {"at": {"x": i, "y": -i}, "od": collections.OrderedDict(a=i, b=i), "c": None}
        for i in range(10)
    ]
    roundtrip(value)


def test_identity_mode_keeps_shared_shaped_dicts() -> None:
    rows = [{"id": i, "v": [i]} for i in range(5)]
    rows.append(rows[2])  # the same dict again
    cyc: dict[str, Any] = {"id": 9, "v": None}
    cyc["v"] = cyc
    rows.append(cyc)
    out = amber.loads(amber.dumps(rows, identity=True))
    assert out[5] is out[2]
    assert out[6]["v"] is out[6]
    assert out[:5] == rows[:5]


def test_mutation_by_a_hook_is_an_error_or_a_consistent_dict() -> None:
    class Grab:
        pass

    state: dict[str, Any] = {}

    def mutate(obj: Grab) -> int:
        d = state["d"]
        d.pop("a", None)
        d["z"] = 1
        return 0

    amber.register(Grab, name="test.Grab", encode=mutate, decode=lambda s: Grab())
    try:
        for n in range(3):  # plain, shape definition, shaped
            rows = [{"a": 1, "g": 2, "b": 3} for _ in range(n)]
            d = {"a": 1, "g": Grab(), "b": 3}
            state["d"] = d
            try:
                out = amber.loads(amber.dumps([*rows, d]))
            except amber.EncodeError as e:
                assert "changed" in str(e)
            else:
                # The pairs as they were read, in order: never a key with another's value.
                assert list(out[-1]) == ["a", "g", "b"]
                assert (out[-1]["a"], out[-1]["b"]) == (1, 3)
    finally:
        amber.unregister(Grab)


def test_hostile_shapes() -> None:
    def error(body: bytes) -> amber.DecodeError:
        with pytest.raises(amber.DecodeError) as ei:
            amber.loads(frame(body))
        return ei.value

    err = error(bytes([0x62, SHAPED, 0]))
    assert "shape reference 0" in str(err) and err.offset == 9 and err.path == "$[0]"
    err = error(bytes([SHAPE_DEF, 0x40]))  # a pair count the bytes cannot hold
    assert err.offset == 9
    err = error(bytes([SHAPE_DEF, 1, 0x60, 1]))  # an unhashable key
    assert "unhashable" in str(err)
    # A bad value is reported under its key.
    err = error(
        bytes([0x62, SHAPE_DEF, 2, 0x41])
        + b"a"
        + bytes([0x41])
        + b"b"
        + bytes([1, 2])
        + bytes([SHAPED, 0, 1, 0xD9])
    )
    assert err.path == "$[1].b" and "tag 0xd9 is reserved" in str(err)
    # Repeated keys in a shape behave as in a dict: the last value wins.
    dup = frame(bytes([0x62, SHAPE_DEF, 2, 0xB3, 1]) + b"k" + bytes([0x80, 1, 2, SHAPED, 0, 3, 4]))
    assert amber.loads(dup) == [{"k": 2}, {"k": 4}]


KEYS = ["id", "name", "x", "y", "tags", "ü", ""]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from(range(len(KEYS))), unique=True, min_size=0, max_size=6).flatmap(
            lambda ks: st.fixed_dictionaries(
                {KEYS[k]: st.one_of(st.integers(), st.text(max_size=3), st.none()) for k in ks}
            )
        ),
        max_size=40,
    )
)
def test_records_from_shared_keys_roundtrip(rows: list[dict[str, Any]]) -> None:
    for identity in (False, True):
        out = amber.loads(amber.dumps(rows, identity=identity))
        assert out == rows
        assert [list(d) for d in out] == [list(d) for d in rows]
