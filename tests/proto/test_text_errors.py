"""amber.proto's text format (`from_text`) and ProtoJSON (`from_json`) errors: each says what
kind of problem (`kind`), where in the input (`offset`, the byte; `line:col` in the text
format's message) and in which field (`path`); singular fields given more than once in the text
format are accepted or refused as Google's `text_format.Parse` decides (checked against it); and
unknown JSON keys are checked for duplicates in linear time.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

import amber
import amber.proto as P

SRC = """syntax = "proto3";
package tt;
import "google/protobuf/any.proto";
import "google/protobuf/duration.proto";
import "google/protobuf/timestamp.proto";
enum E { E0 = 0; E1 = 1; }
message M {
  M child = 1; int32 n = 2; repeated M items = 3; map<string, M> by = 4;
  repeated int32 nums = 5; optional int32 o = 6; E e = 7;
  oneof pick { int32 a = 8; M b = 9; }
  google.protobuf.Any any = 10; string s = 11; uint32 u = 12; double d = 13; bool f = 14;
  float x = 15; bytes y = 16; map<int32, int32> mi = 17;
  google.protobuf.Timestamp ts = 18; google.protobuf.Duration du = 19;
}
"""
SRC2 = """syntax = "proto2";
package t2;
message P {
  optional int32 x = 1; optional P sub = 2; repeated int32 r = 3;
  optional group G = 4 { optional int32 g = 5; }
  extensions 100 to 200;
}
extend P { optional int32 ext = 100; optional P pext = 101; }
"""

NS = P.load_text(SRC, name="tt.proto")
NS2 = P.load_text(SRC2, name="t2.proto")
M = NS.tt.M
ANY = "type.googleapis.com/tt.M"


def _error(fn: Any, *args: Any, **kw: Any) -> P.DecodeError:
    with pytest.raises(P.DecodeError) as info:
        fn(*args, **kw)
    return info.value


# (text, kind, the token at the offset, path)
TEXT_ERRORS = [
    ("child { child { n: 99999999999 } }", "out_of_range", "99999999999", "$.child.child.n"),
    ("child { child { nope: 1 } }", "unknown_field", "nope", "$.child.child"),
    ('child { n: "x" }', "type_mismatch", '"x"', "$.child.n"),
    ("items { n: 1 } items { n: x }", "type_mismatch", "x", "$.items[1].n"),
    ("nums: 1 nums: [2, 3, x]", "type_mismatch", "x", "$.nums[3]"),
    ('by { key: "a" } by { key: "b" value { n: t } }', "type_mismatch", "t", "$.by[1].n"),
    ('by { key: "a" nokey: 1 }', "unknown_field", "nokey", "$.by[0]"),
    (
        "mi { key: 1 value: 2 } mi { key: 2 value: 4000000000 }",
        "out_of_range",
        "4000000000",
        "$.mi[1]",
    ),
    ("child { n: 1 ", "truncated", "", "$.child"),
    ("child { n: ", "truncated", "", "$.child.n"),
    ("n: 1 n: 2", "duplicate", "n: 2", "$.n"),
    ("a: 1 b { }", "duplicate", "b { }", "$.b"),
    ("e: E7", "unknown_field", "E7", "$.e"),
    ("u: -1", "out_of_range", "-1", "$.u"),
    ("f: maybe", "type_mismatch", "maybe", "$.f"),
    ("d: 1.2.3", "type_mismatch", "1.2.3", "$.d"),
    ("n 1", "malformed", "1", "$.n"),
    ("n: 1 }", "malformed", "}", "$"),
    ("any { [type.googleapis.com/tt.Nope] { } }", "unknown_field", "[type", "$.any"),
    (f"any {{ [{ANY}] {{ items {{ n: x }} }} }}", "type_mismatch", "x", "$.any.items[0].n"),
    ('s: "éé"\n  n: zz', "type_mismatch", "zz", "$.n"),
    (
        "# a comment\nchild {\n  items: [{ n: 1 }, { o: q }]\n}",
        "type_mismatch",
        "q",
        "$.child.items[1].o",
    ),
]


@pytest.mark.parametrize(("text", "kind", "token", "path"), TEXT_ERRORS)
def test_text_error_kind_offset_and_path(text: str, kind: str, token: str, path: str) -> None:
    e = _error(M.from_text, text)
    assert (e.kind, e.path) == (kind, path), str(e)
    data = text.encode()
    assert isinstance(e.offset, int)
    assert data[e.offset :].startswith(token.encode()), (e.offset, str(e))
    before = data[: e.offset].decode()
    line = before.count("\n") + 1
    col = len(before.rsplit("\n", 1)[-1].encode()) + 1
    assert str(e).startswith(f"{line}:{col} : "), str(e)
    assert isinstance(e, amber.DecodeError) and isinstance(e, ValueError)


def test_text_error_from_bytes_has_utf8_offsets() -> None:
    text = 's: "ü€" n: zz'
    e = _error(M.from_text, text.encode())
    assert (e.kind, e.path) == ("type_mismatch", "$.n")
    assert text.encode()[e.offset :].startswith(b"zz")


def test_text_bytes_not_utf8() -> None:
    e = _error(M.from_text, b'n: 1 s: "\xff"')
    assert (e.kind, e.offset, e.path) == ("malformed", 9, "$")
    assert str(e).startswith("1:10 : ")


def test_text_depth_limit() -> None:
    e = _error(M.from_text, "child { " * 150 + "}" * 150)
    assert e.kind == "limit"
    assert e.path is not None and e.path.startswith("$.child.child.")


class Google:
    """Google's classes for a load, from the descriptor set amber compiled."""

    def __init__(self, ns: P.Namespace) -> None:
        from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, text_format

        self.pool = descriptor_pool.DescriptorPool()
        for f in descriptor_pb2.FileDescriptorSet.FromString(ns.descriptor_set()).file:
            self.pool.Add(f)
        self.factory = message_factory
        self.tf = text_format

    def cls(self, name: str) -> Any:
        return self.factory.GetMessageClass(self.pool.FindMessageTypeByName(name))


@pytest.fixture(scope="module")
def google() -> tuple[Google, Google]:
    pytest.importorskip("google.protobuf")
    return Google(NS), Google(NS2)


# Singular fields given more than once, of every kind: implicit-presence scalars (each kind,
# their zero first or last, -0.0 and NaN), explicit presence, messages, oneof members, enums,
# groups, extensions, and an expanded Any with its own fields around it.
TWICE = [
    ("tt.M", "n: 0 n: 1"),
    ("tt.M", "n: 0 n: 0 n: 7"),
    ("tt.M", "n: 1 n: 0"),
    ("tt.M", "n: 1 n: 1"),
    ("tt.M", "u: 0 u: 3"),
    ("tt.M", "d: 0 d: nan"),
    ("tt.M", "d: nan d: 1"),
    ("tt.M", "d: -0.0 d: 1"),
    ("tt.M", "d: 0.0 d: -0.0"),
    ("tt.M", "x: 0 x: 1.5"),
    ("tt.M", "f: false f: true"),
    ("tt.M", "f: true f: false"),
    ("tt.M", 's: "" s: "x"'),
    ("tt.M", 's: "x" s: ""'),
    ("tt.M", 'y: "" y: "\\001"'),
    ("tt.M", "e: E0 e: E1"),
    ("tt.M", "e: E1 e: E0"),
    ("tt.M", "e: 0 e: 1"),
    ("tt.M", "o: 0 o: 1"),
    ("tt.M", "o: 1 o: 1"),
    ("tt.M", "child {} child {}"),
    ("tt.M", "child { n: 1 } child { n: 2 }"),
    ("tt.M", "child { n: 0 n: 1 }"),
    ("tt.M", "child { n: 1 n: 2 }"),
    ("tt.M", "a: 0 a: 1"),
    ("tt.M", "a: 1 b {}"),
    ("tt.M", "b {} a: 0"),
    ("tt.M", "b {} b {}"),
    ("tt.M", "nums: 1 nums: 2 nums: [3]"),
    ("tt.M", 'by { key: "a" } by { key: "a" }'),
    ("tt.M", f'any {{ [{ANY}] {{ n: 5 }} type_url: "{ANY}" }}'),
    ("tt.M", f'any {{ [{ANY}] {{ n: 5 }} value: "x" }}'),
    ("tt.M", f'any {{ [{ANY}] {{ }} value: "x" }}'),
    ("tt.M", f'any {{ [{ANY}] {{ }} type_url: "x" }}'),
    ("tt.M", f'any {{ type_url: "{ANY}" [{ANY}] {{ n: 1 }} }}'),
    ("tt.M", f'any {{ value: "x" [{ANY}] {{ }} value: "y" }}'),
    ("tt.M", f"any {{ [{ANY}] {{ n: 1 }} [{ANY}] {{ n: 2 }} }}"),
    ("tt.M", f'any {{ type_url: "{ANY}" type_url: "{ANY}" }}'),
    ("tt.M", f"any {{ [{ANY}] {{ n: 1 }} }} any {{ }}"),
    ("t2.P", "x: 0 x: 1"),
    ("t2.P", "x: 1 x: 1"),
    ("t2.P", "sub {} sub {}"),
    ("t2.P", "sub { x: 0 x: 1 }"),
    ("t2.P", "r: 1 r: 1"),
    ("t2.P", "G { g: 1 } G { g: 2 }"),
    ("t2.P", "[t2.ext]: 0 [t2.ext]: 1"),
    ("t2.P", "[t2.pext] {} [t2.pext] {}"),
]


@pytest.mark.parametrize(("name", "text"), TWICE)
def test_singular_fields_twice_as_google_parse(
    google: tuple[Google, Google], name: str, text: str
) -> None:
    g = google[0] if name.startswith("tt.") else google[1]
    ns = NS if name.startswith("tt.") else NS2
    cls = ns.tt.M if name == "tt.M" else ns.t2.P
    try:
        want = g.tf.Parse(text, g.cls(name)(), descriptor_pool=g.pool)
    except g.tf.ParseError:
        want = None
    if want is None:
        e = _error(cls.from_text, text)
        assert e.kind == "duplicate", str(e)
        assert e.path is not None and e.offset is not None
    else:
        got = cls.from_text(text)
        assert got == cls.FromString(want.SerializeToString())


# (JSON, kind, path)
JSON_ERRORS = [
    ('{"n": "x"}', "type_mismatch", "$.n"),
    ('{"n": 1e20}', "out_of_range", "$.n"),
    ('{"x": 1e39}', "out_of_range", "$.x"),
    ('{"nope": 1}', "unknown_field", "$"),
    ('{"e": "E9"}', "unknown_field", "$.e"),
    ('{"n": 1, "n": 2}', "duplicate", "$"),
    ('{"a": 1, "b": {}}', "duplicate", "$.b"),
    ('{"child": {"n": 1', "truncated", "$.child"),
    ('{"s": "ab', "truncated", "$.s"),
    ('{"n": 1,}', "malformed", "$"),
    ('{"y": "!!"}', "malformed", "$.y"),
    ('{"nums": [1, null]}', "type_mismatch", "$.nums[1]"),
    ('{"child": []}', "type_mismatch", "$.child"),
    ('{"ts": "1970-01-01T00:00:00"}', "malformed", "$.ts"),
    ('{"ts": "9999-12-31T23:59:59-01:00"}', "out_of_range", "$.ts"),
    ('{"ts": 5}', "type_mismatch", "$.ts"),
    ('{"du": "5"}', "malformed", "$.du"),
    ('{"du": "315576000001s"}', "out_of_range", "$.du"),
    ('{"child": ' * 150 + "{}" + "}" * 150, "limit", None),
]


@pytest.mark.parametrize(("text", "kind", "path"), JSON_ERRORS)
def test_json_error_kinds(text: str, kind: str, path: str | None) -> None:
    e = _error(M.from_json, text)
    assert e.kind == kind, str(e)
    if path is not None:
        assert e.path == path, str(e)
    assert isinstance(e.offset, int)


def test_dict_error_kinds() -> None:
    assert _error(M.from_dict, {"n": "x"}).kind == "type_mismatch"
    assert _error(M.from_dict, {"nope": 1}).kind == "unknown_field"
    assert _error(M.from_dict, {"child": [1]}).kind == "type_mismatch"


@pytest.mark.parametrize(
    "text",
    [
        '{"k1": 1, "k2": 2, "k1": 3}',
        '{"child": {"p": {}, "q": [], "p": 1}}',
        '{"k": 1, "child": {"k": 1}, "n": 2, "k": 2}',
        '{"n": 1, "zz": 2, "n": 3}',
        '{"items": [{"q": 1}, {"q": 1, "q": 2}]}',
    ],
)
def test_json_unknown_key_duplicates_refused(text: str) -> None:
    e = _error(M.from_json, text, ignore_unknown_fields=True)
    assert e.kind == "duplicate"
    key = text[e.offset :].split(":", 1)[0]
    assert text.count(key) >= 2 and text.rfind(key) == e.offset, (e.offset, str(e))


def test_json_unknown_keys_linear() -> None:
    def cost(n: int, nested: bool) -> float:
        body = ", ".join(f'"k{i}": {{"z": 1}}' if nested else f'"k{i}": 1' for i in range(n))
        text = f'{{"child": {{{body}}}}}' if nested else f"{{{body}}}"
        t = time.perf_counter()
        M.from_json(text, ignore_unknown_fields=True)
        return time.perf_counter() - t

    # 200,000 keys took minutes while each was looked for among those seen; a second
    # at most now (most of it making the text), so 30 s only fails for the quadratic walk.
    for nested in (False, True):
        assert cost(200_000, nested) < 30.0
