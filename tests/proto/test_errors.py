"""Wire errors of amber.proto: each bad input refused with its kind, the byte and the field path.

Every input here is refused by Google's protobuf too (checked where it is installed); the valid
messages the bad bytes are cut from or spliced into are written by Google's protobuf.
"""

from __future__ import annotations

from typing import Any

import pytest

import amber.proto as P
from tests.proto.oracle import google_classes
from tests.proto.wire import pb_len, pb_tag, varint

PROTO3 = """
syntax = "proto3";
package errs;
message Inner { int32 a = 1; string s = 2; }
message Top {
  int32 i = 1;
  string s = 2;
  bytes b = 3;
  repeated int64 nums = 4;
  Inner inner = 5;
  repeated Inner items = 6;
  map<string, Inner> by_name = 7;
  Top child = 8;
  fixed64 f64 = 9;
  fixed32 f32 = 10;
  map<int32, string> names = 11;
}
"""

PROTO2 = """
syntax = "proto2";
package errs2;
message G {
  optional group Grp = 1 { optional int32 x = 2; }
  optional int32 y = 3;
  repeated group Many = 4 { optional int32 z = 5; }
}
"""


@pytest.fixture(scope="module")
def spaces() -> list[P.Namespace]:
    return [P.load_text(PROTO3, name="errs.proto"), P.load_text(PROTO2, name="errs2.proto")]


@pytest.fixture(scope="module")
def ns(spaces: list[P.Namespace]) -> Types:
    return Types({n: t for s in spaces for n, t in s.types.items()})


@pytest.fixture(scope="module")
def google(spaces: list[P.Namespace]) -> dict[str, Any]:
    """Google's classes for the same types, made from amber's descriptor sets."""
    pytest.importorskip("google.protobuf")
    return google_classes(spaces)


class Types:
    """The message classes of both files, by full name."""

    def __init__(self, types: dict[str, Any]) -> None:
        self.types = types


def _refused(ns: Types, google: dict[str, Any], ty: str, data: bytes) -> P.DecodeError:
    """Amber's error for `data`, once Google's protobuf has refused it too."""
    from google.protobuf import message

    with pytest.raises(message.DecodeError):
        google[ty].FromString(data)
    with pytest.raises(P.DecodeError) as e:
        ns.types[ty].FromString(data)
    assert e.value.kind in {"truncated", "malformed", "limit"}
    assert f"at byte {e.value.offset} ({e.value.path})" in str(e.value)
    return e.value


def _check(err: P.DecodeError, kind: str, offset: int, path: str) -> None:
    assert (err.kind, err.offset, err.path) == (kind, offset, path), str(err)


def test_input_ending_early_is_truncated(ns: Types, google: dict[str, Any]) -> None:
    G = google["errs.Top"]
    # Every proper prefix of each one-field message ends inside the field: the varint, the
    # length, the bytes the length claims or the fixed-width value.
    whole = {
        "i": G(i=300).SerializeToString(),
        "s": G(s="hello").SerializeToString(),
        "b": G(b=b"\x00\x01\x02").SerializeToString(),
        "f64": G(f64=2**63 + 5).SerializeToString(),
        "f32": G(f32=7).SerializeToString(),
        "inner": G(inner={"a": 1}).SerializeToString(),
    }
    for name, data in whole.items():
        for cut in range(1, len(data)):
            err = _refused(ns, google, "errs.Top", data[:cut])
            # The value's first byte after the tag: the varint, the length or the fixed bytes.
            _check(err, "truncated", 1, f"$.{name}")
    # A cut inside a sub-message: its length is past the input's end, at the length's byte.
    data = G(items=[{"a": 1}, {"s": "xyz"}]).SerializeToString()
    err = _refused(ns, google, "errs.Top", data[:-1])
    _check(err, "truncated", 5, "$.items[1]")


def test_length_past_its_message_is_truncated(ns: Types, google: dict[str, Any]) -> None:
    # A string whose length fits the input but not the sub-message it is in.
    inner = pb_tag(1, 0) + b"\x01" + pb_tag(2, 2) + varint(9) + b"abc"
    data = pb_len(6, b"\x08\x02") + pb_len(6, inner) + b"\x00" * 6
    err = _refused(ns, google, "errs.Top", data)
    _check(err, "truncated", 9, "$.items[1].s")  # at the string's length
    # The same inside a map entry's message value.
    entry = pb_len(1, b"k") + pb_len(2, inner)
    data = pb_len(7, entry) + b"\x00" * 6
    err = _refused(ns, google, "errs.Top", data)
    _check(err, "truncated", 2 + 3 + 2 + 3, "$.by_name[0].value.s")
    # A varint cut by the end of its packed run.
    data = pb_len(4, b"\x01\x80\x80")
    err = _refused(ns, google, "errs.Top", data)
    _check(err, "truncated", 3, "$.nums[1]")
    # A map entry whose key is cut by the entry's end.
    data = pb_len(11, pb_tag(1, 0) + b"\x80") + b"\x00\x00"
    err = _refused(ns, google, "errs.Top", data)
    _check(err, "truncated", 3, "$.names[0]")


def test_open_group_is_truncated(ns: Types, google: dict[str, Any]) -> None:
    whole = google["errs2.G"](grp={"x": 1}, y=2).SerializeToString()
    end = whole.index(pb_tag(1, 4))
    err = _refused(ns, google, "errs2.G", whole[:end])
    _check(err, "truncated", end, "$.grp")
    # An unknown group left open, at the top level.
    err = _refused(ns, google, "errs2.G", pb_tag(9, 3) + pb_tag(2, 0) + b"\x05")
    _check(err, "truncated", 3, "$")


def test_bad_tags_and_group_ends_are_malformed(ns: Types, google: dict[str, Any]) -> None:
    ok = google["errs.Top"](i=1).SerializeToString()
    for bad in (
        b"\x00\x00",
        pb_tag(1, 6) + b"\x00",
        pb_tag(1, 7) + b"\x00",
        pb_tag(2**29, 0) + b"\x01",
    ):
        # After a good field, and inside a sub-message.
        _check(_refused(ns, google, "errs.Top", ok + bad), "malformed", len(ok), "$")
        _check(
            _refused(ns, google, "errs.Top", ok + pb_len(5, ok + bad)),
            "malformed",
            2 * len(ok) + 2,
            "$.inner",
        )
    # An end-group tag that ends no group.
    _check(_refused(ns, google, "errs.Top", ok + pb_tag(1, 4)), "malformed", len(ok), "$")
    # A group ended by another field's end tag (its own, and an unknown group's).
    _check(
        _refused(ns, google, "errs2.G", pb_tag(1, 3) + b"\x10\x01" + pb_tag(4, 4)),
        "malformed",
        3,
        "$.grp",
    )
    _check(
        _refused(ns, google, "errs2.G", pb_tag(4, 3) + pb_tag(4, 4) + pb_tag(4, 3) + pb_tag(5, 4)),
        "malformed",
        3,
        "$.many[1]",
    )
    _check(
        _refused(ns, google, "errs2.G", pb_tag(9, 3) + pb_tag(8, 4)),
        "malformed",
        1,
        "$",
    )


def test_overlong_varint_is_malformed(ns: Types, google: dict[str, Any]) -> None:
    eleven = b"\xff" * 10 + b"\x01"
    _check(_refused(ns, google, "errs.Top", b"\x08" + eleven), "malformed", 1, "$.i")
    _check(
        _refused(ns, google, "errs.Top", pb_len(4, b"\x05" + eleven)), "malformed", 3, "$.nums[1]"
    )
    # As a length, and as a tag.
    _check(_refused(ns, google, "errs.Top", b"\x12" + eleven), "malformed", 1, "$.s")
    _check(_refused(ns, google, "errs.Top", b"\x08\x01" + eleven), "malformed", 2, "$")


def test_invalid_utf8_is_malformed(ns: Types, google: dict[str, Any]) -> None:
    # At the first bad byte, in a field, in a sub-message, in a map key and in a map value.
    _check(_refused(ns, google, "errs.Top", pb_len(2, b"ab\xff")), "malformed", 4, "$.s")
    data = pb_len(6, b"") + pb_len(6, pb_len(2, b"\xc3\x28"))
    _check(_refused(ns, google, "errs.Top", data), "malformed", 6, "$.items[1].s")
    data = pb_len(11, pb_tag(1, 0) + b"\x01" + pb_len(2, b"ok\xe2\x82"))
    _check(_refused(ns, google, "errs.Top", data), "malformed", 8, "$.names[0]")
    data = pb_len(7, pb_len(1, b"\xff"))
    _check(_refused(ns, google, "errs.Top", data), "malformed", 4, "$.by_name[0]")
    # Bytes fields take any bytes.
    assert ns.types["errs.Top"].FromString(pb_len(3, b"\xff")).b == b"\xff"


def test_nesting_past_the_limit_is_limit(ns: Types, google: dict[str, Any]) -> None:
    Top = ns.types["errs.Top"]
    ok = _chain_bytes(100)  # 100 levels below the root: as deep as protobuf parses
    google["errs.Top"].FromString(ok)
    assert Top.FromString(ok).SerializeToString() == ok
    for n in (101, 150):
        deep = _chain_bytes(n)
        err = _refused(ns, google, "errs.Top", deep)
        # At the tag of the 101st child, which the path names.
        _check(err, "limit", _tag_offsets(deep)[100], "$" + ".child" * 101)
    # Groups count as nesting too: unknown ones, and inside a known group.
    G = ns.types["errs2.G"]
    ok = pb_tag(9, 3) * 100 + pb_tag(9, 4) * 100
    assert (
        G.FromString(ok).SerializeToString() == google["errs2.G"].FromString(ok).SerializeToString()
    )
    groups = pb_tag(9, 3) * 101 + pb_tag(9, 4) * 101
    _check(_refused(ns, google, "errs2.G", groups), "limit", 101, "$")
    groups = pb_tag(1, 3) + pb_tag(9, 3) * 100 + pb_tag(9, 4) * 100 + pb_tag(1, 4)
    _check(_refused(ns, google, "errs2.G", groups), "limit", 101, "$.grp")


def _chain_bytes(n: int) -> bytes:
    data = b""
    for _ in range(n):
        data = pb_len(8, data)
    return data


def _tag_offsets(data: bytes) -> list[int]:
    """Where each nested `child` tag of a chain is."""
    out, at = [], 0
    while at < len(data):
        out.append(at)
        at += 1
        while data[at] & 0x80:
            at += 1
        at += 1
    return out


def test_wrong_wire_types_are_kept_not_refused(ns: Types, google: dict[str, Any]) -> None:
    # A known field with a wire type its type does not have is an unknown field for protobuf,
    # never an error: every field of Top, with every other wire type.
    values = {0: b"\x05", 1: b"\x01" * 8, 2: b"\x01a", 5: b"\x01" * 4}
    wts = {"i": 0, "s": 2, "b": 2, "nums": 2, "inner": 2, "items": 2, "f64": 1, "f32": 5}
    numbers = {"i": 1, "s": 2, "b": 3, "nums": 4, "inner": 5, "items": 6, "f64": 9, "f32": 10}
    for name, wt in wts.items():
        for other, body in values.items():
            if other == wt or (name == "nums" and other == 0):
                continue
            data = pb_tag(numbers[name], other) + body
            g = google["errs.Top"].FromString(data)
            a = ns.types["errs.Top"].FromString(data)
            assert a.SerializeToString() == g.SerializeToString() == data
            # Not the field's value: kept as unknown, gone once those are discarded.
            assert getattr(a, name) == getattr(ns.types["errs.Top"](), name)
            a.DiscardUnknownFields()
            assert a.SerializeToString() == b""
