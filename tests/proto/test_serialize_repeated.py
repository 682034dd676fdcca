"""Repeated string, bytes and message fields written as Google writes them, however the values
are kept: built from Python values, read into containers, parsed, changed after a parse; strings
of every short length (each way of copying them), records nested in records, and in maps."""

from __future__ import annotations

from typing import Any

import pytest

import amber.proto as P
from tests.proto.oracle import google_pool

RECORDS = """
syntax = "proto3";
package rr;
message Rec {
  int64 id = 1;
  string name = 2;
  repeated string tags = 7;
  repeated bytes blobs = 8;
  repeated Rec kids = 9;
}
message Top {
  repeated Rec recs = 1;
  map<int64, Rec> by_id = 2;
  repeated string words = 3;
}
"""


def _rec(i: int, depth: int = 0) -> dict[str, Any]:
    """A record whose strings and bytes take every length from 0 to 40 over the records, some
    not ASCII, with kids two levels down."""
    rec: dict[str, Any] = dict(
        id=i * 1_000_003 - 7,
        name="n" * (i % 41),
        tags=[("é" if k % 3 == 0 else "t") * ((i + k) % 41) for k in range(i % 4)],
        blobs=[bytes([k]) * ((i * 7 + k) % 41) for k in range(i % 3)],
    )
    if depth < 2 and i % 5 == 1:
        rec["kids"] = [_rec(i + k + 1, depth + 1) for k in range(3)]
    return rec


def _values() -> dict[str, Any]:
    return dict(
        recs=[_rec(i) for i in range(60)],
        by_id={i * 2 - 40: _rec(i) for i in range(30)},
        words=["w" * n for n in range(41)] + ["😀" * 9, ""],
    )


@pytest.fixture(scope="module")
def classes() -> tuple[Any, Any]:
    pytest.importorskip("google.protobuf")
    from google.protobuf import message_factory

    root = P.load_text(RECORDS, name="rr.proto")
    g_cls = message_factory.GetMessageClass(google_pool(root).FindMessageTypeByName("rr.Top"))
    return root.rr.Top, g_cls


def _same(a: Any, g: Any) -> None:
    assert a.SerializeToString(deterministic=True) == g.SerializeToString(deterministic=True)
    # The default bytes (map entries in the runtime's own order) read back as Google's message.
    wire = a.SerializeToString()
    assert len(wire) == a.ByteSize() == g.ByteSize()
    assert type(g).FromString(wire) == g


def test_records_built_read_parsed_and_changed_write_as_google(classes: tuple[Any, Any]) -> None:
    a_cls, g_cls = classes
    a, g = a_cls(**_values()), g_cls(**_values())
    # Built from Python values: records kept natively, strings as objects.
    _same(a, g)
    # Parsed: records and strings kept as places in the input.
    parsed = a_cls.FromString(g.SerializeToString())
    _same(parsed, g)
    # Read into containers (records become Python messages), then changed.
    for m in (a, parsed):
        assert [r.id for r in m.recs] == [r.id for r in g.recs]
        assert list(m.recs[6].kids[0].tags) == list(g.recs[6].kids[0].tags)
    _same(a, g)
    _same(parsed, g)
    for m in (a, parsed, g):
        m.recs[6].kids[0].tags.append("x" * 17)
        m.recs[1].blobs.append(b"\x00" * 33)
        m.recs.add(id=5, tags=["new", "é" * 12])
        m.words[3] = "changed word of thirty-two bytes"
        m.by_id[-40].kids.add(name="kid")
        del m.recs[0]
    _same(a, g)
    _same(parsed, g)
    # And back: Google reads what amber writes.
    assert g_cls.FromString(a.SerializeToString()) == g
    assert g_cls.FromString(parsed.SerializeToString()) == g


def test_empty_and_single_repeated_fields(classes: tuple[Any, Any]) -> None:
    a_cls, g_cls = classes
    cases: list[dict[str, Any]] = [
        {},
        {"recs": []},
        {"recs": [{}]},
        {"recs": [{"tags": [""]}], "words": [""]},
        {"recs": [{"kids": [{}, {"kids": [{"name": "deep"}]}]}]},
        {"by_id": {0: {}}},
    ]
    for kw in cases:
        a, g = a_cls(**kw), g_cls(**kw)
        _same(a, g)
        _same(a_cls.FromString(g.SerializeToString()), g)
