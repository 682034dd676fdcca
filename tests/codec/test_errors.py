"""Encoding errors say where, in the same path language as decoding errors (spec §11)."""

from __future__ import annotations

import collections
from typing import Any

import pytest

import amber


def encode_error(obj: Any, **kw: Any) -> amber.EncodeError:
    with pytest.raises(amber.EncodeError) as ei:
        amber.dumps(obj, **kw)
    err = ei.value
    # The message ends with the path (its ends only, past 24 steps).
    assert str(err).endswith(f"(at {err.path})") or "more levels)..." in str(err), str(err)
    return err


@pytest.mark.parametrize(
    ("obj", "path"),
    [
        ({"top": {5: object()}}, "$.top[<key 0>]"),
        ({"top": {"a": 1, (1, 2): object()}}, "$.top[<key 1>]"),
        ({"top": {object(): 1}}, "$.top[<key 0>]"),
        ({"top": collections.OrderedDict(a=(1, object()))}, "$.top.a[1]"),
        ({"top": collections.OrderedDict({"x y": object()})}, '$.top["x y"]'),
        ([collections.Counter({"n": 1}), {"k": [object()]}], "$[1].k[0]"),
    ],
)
def test_paths_name_non_str_keys_by_position_as_the_decoder_does(obj: Any, path: str) -> None:
    err = encode_error(obj)
    assert err.path == path
    assert "0x" not in str(err)  # no object addresses


def test_a_cycle_is_reported_where_it_closes_not_at_the_depth_limit() -> None:
    a: dict[str, Any] = {}
    a["x"] = [a]
    err = encode_error({"top": a})
    assert err.path == "$.top.x[0]"
    assert "the object at $.top contains itself" in str(err)
    assert "identity=True" in str(err)


def test_deep_data_without_a_cycle_still_reports_the_depth_limit() -> None:
    x: Any = []
    for _ in range(20):
        x = [x]
    err = encode_error(x, max_depth=10)
    assert "max_depth=10" in str(err)
    assert err.path == "$" + "[0]" * 10
    # Deeper than a message can show: the message keeps the path's ends, `path` all of it.
    for _ in range(2000):
        x = [x]
    err = encode_error({"rows": x})
    assert err.path == "$.rows" + "[0]" * 999
    shown = "$.rows" + "[0]" * 9 + "...(980 more levels)..." + "[0]" * 10
    assert str(err).endswith(f"(at {shown})")
    assert len(str(err)) < 200


@pytest.mark.parametrize("name", ["max_depth", "oob_threshold"])
@pytest.mark.parametrize("value", [-1, 2**63, 2**64])
def test_count_arguments_out_of_range_are_value_errors_naming_the_argument(
    name: str, value: int
) -> None:
    with pytest.raises(ValueError, match=name):
        amber.dumps(1, **{name: value})
    if name == "max_depth":
        with pytest.raises(ValueError, match=name):
            amber.loads(amber.dumps(1), max_depth=value)


def test_a_rust_panic_reaches_python_as_an_amber_error() -> None:
    # Every entry point runs inside the same guard; `_panic` panics inside it on purpose.
    with pytest.raises(amber.AmberError, match=r"internal error in amber.*a deliberate panic") as e:
        amber._native._panic("a deliberate panic")
    assert e.value.kind == "internal"
    assert isinstance(e.value, Exception)
