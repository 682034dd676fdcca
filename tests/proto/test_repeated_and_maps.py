"""Repeated fields and maps of amber.proto against Google's protobuf: lookups, changes, parsed
maps of every key kind and of messages, and what serializes, however the values were kept."""

from __future__ import annotations

import copy
import json
import random
import struct
from pathlib import Path
from typing import Any

import pytest

import amber
import amber.proto as P
from tests.proto.oracle import NUMERIC_KINDS, google_pool
from tests.proto.wire import pb_len


def test_repeated_and_maps(shop: Any) -> None:
    o = shop.Order(nums=[3, 1, 2])
    o.nums.extend([5, 4])
    o.nums.sort()
    assert o.nums == [1, 2, 3, 4, 5] and list(o.nums[1:3]) == [2, 3]
    del o.nums[0]
    o.nums[0] = 9
    assert o.nums.pop() == 5 and len(o.nums) == 3 and 9 in o.nums
    o.nums.insert(0, 7)
    o.nums.remove(9)
    assert list(o.nums) == [7, 3, 4]
    it = o.items.add(sku="a")
    it.qty = 2
    o.items.append(shop.Item(sku="b"))
    assert [i.sku for i in o.items] == ["a", "b"] and o.items[0].qty == 2
    with pytest.raises(TypeError):
        o.items[0] = shop.Item()
    o.counts["a"] = 1
    o.counts.update({"b": 2})
    assert o.counts["missing"] == 0 and "missing" in o.counts  # reading inserts, as Google's
    assert o.counts.get("absent") is None and "absent" not in o.counts
    del o.counts["missing"]
    assert dict(o.counts.items()) == {"a": 1, "b": 2} and o.counts == {"a": 1, "b": 2}
    o.by_id[4].sku = "four"
    assert o.by_id[4].sku == "four" and len(o.by_id) == 1
    with pytest.raises(ValueError):
        o.by_id[5] = shop.Item()
    with pytest.raises(AttributeError, match="Assignment not allowed"):
        o.nums = [1, 2]  # as Google's: change it in place
    with pytest.raises(AttributeError, match="Assignment not allowed"):
        o.main = shop.Item()
    o.nums[:] = [1, 2]
    assert o.nums == [1, 2]
    again = shop.Order.FromString(o.SerializeToString())
    assert again == o and again.by_id[4].sku == "four"


def test_map_lookups_popitem_and_setdefault_as_google(
    conf: P.Namespace, google: dict[str, Any]
) -> None:
    """A key of the wrong type or out of range raises in `in` and `get` as in Google's maps (of
    entries: upb answers an empty map without looking at the key); `popitem` takes an entry
    out; `setdefault` on a map of scalars needs its default."""
    name = "protobuf_test_messages.proto3.TestAllTypesProto3"
    ours, theirs = conf.types[name], google[name]

    def outcome(case: Any, m: Any) -> Any:
        try:
            return ("ok", case(m))
        except (TypeError, ValueError, KeyError) as e:
            return (type(e).__name__,)

    maps = dict(map_int32_int32={1: 10}, map_uint32_uint32={3: 4}, map_string_string={"x": "y"})
    cases = [
        lambda m: "a" in m.map_int32_int32,
        lambda m: m.map_int32_int32.get(1.5),
        lambda m: 2**40 in m.map_int32_int32,
        lambda m: m.map_uint32_uint32.get(-1),
        lambda m: 7 in m.map_string_string,
        lambda m: 1 in m.map_int32_int32,
        lambda m: m.map_int32_int32.get(2, "d"),
        lambda m: m.map_string_string.setdefault("k"),
        lambda m: m.map_string_string.setdefault("k", "v"),
        lambda m: m.map_int32_int32.popitem(),
        lambda m: (m.map_int32_int32.popitem(), m.map_int32_int32.popitem()),
    ]
    for i, case in enumerate(cases):
        a, g = ours(**maps), theirs(**maps)
        assert outcome(case, a) == outcome(case, g), i
        assert a.SerializeToString(deterministic=True) == g.SerializeToString(deterministic=True), i


def test_maps_follow_a_dict_through_random_changes() -> None:
    """Map containers against a plain dict: inserts, replacements, deletions (each moving the
    last entry into the hole), pops and lookups, with int, bool and string keys (non-ASCII among
    them); the parsed copy holds the same entries."""
    ns = P.load_text(
        'syntax = "proto3"; message M { map<string, int32> s = 1; map<sint64, string> i = 2;'
        " map<bool, int32> b = 3; }",
        name="maps.proto",
    )
    rng = random.Random(7)
    keys: dict[str, list[Any]] = {
        "s": ["", "a", "b", "é", "long key " * 3] + [f"k{j}" for j in range(40)],
        "i": [0, -1, 1, 2**63 - 1, -(2**63), *range(2, 40)],
        "b": [True, False],
    }
    m = ns.M()
    model: dict[str, dict[Any, Any]] = {name: {} for name in keys}
    for _ in range(3000):
        name = rng.choice(list(keys))
        c, d, k = getattr(m, name), model[name], rng.choice(keys[name])
        v: Any = rng.randrange(100) if name != "i" else str(rng.randrange(100))
        op = rng.randrange(5)
        if op < 2:
            c[k] = d[k] = v
        elif op == 2 and k in d:
            del c[k], d[k]
        elif op == 3:
            assert c.pop(k, None) == d.pop(k, None)
        else:
            assert (k in c) == (k in d) and c.get(k) == d.get(k)
        assert len(c) == len(d) and dict(c.items()) == d
    for name, d in model.items():
        assert dict(getattr(m, name).items()) == d
    again = ns.M.FromString(m.SerializeToString())
    for name, d in model.items():
        assert dict(getattr(again, name).items()) == d


def test_map_entries_parse_as_google(conf: P.Namespace, google: dict[str, Any]) -> None:
    """Map entries a parse keeps without objects: a repeated key keeps its last value in its
    first place, a missing key or value reads as its default, a value may come before its key,
    a float's bits are kept; bytes, reads and merges agree with Google's."""
    name = "protobuf_test_messages.proto3.TestAllTypesProto3"
    A, G = conf.types[name], google[name]

    def one(**kw: Any) -> bytes:
        data: bytes = G(**kw).SerializeToString()
        return data

    def entry(field: str, body: bytes) -> bytes:
        return pb_len(G.DESCRIPTOR.fields_by_name[field].number, body)

    snan = struct.pack("<I", 0x7FA00001)
    data = b"".join(
        [
            one(map_string_string={"a": "1"}),
            one(map_string_string={"b": "2"}),
            one(map_string_string={"a": "3"}),
            entry("map_string_string", b"\x12\x014"),
            entry("map_string_string", b"\x0a\x01c"),
            entry("map_string_string", b"\x12\x015\x0a\x01d"),
            one(map_int32_float={1: 1.5, -2: float("inf")}),
            entry("map_int32_float", b"\x15" + snan),
            one(map_bool_bool={True: False}, map_string_bytes={"x": b"\xff"}),
            one(map_int32_int32={-1: -5, 7: 8}),
            one(map_int32_int32={-1: 6}),
            one(map_string_nested_message={"m": {"a": 1}}),
        ]
    )
    a, g = A.FromString(data), G.FromString(data)
    assert a.SerializeToString(deterministic=True) == g.SerializeToString(deterministic=True)
    twice = A.FromString(data)
    twice.MergeFromString(data)
    twice.MergeFrom(A.FromString(data + one(map_string_string={"b": "9"})))
    g.MergeFromString(data)
    g.MergeFrom(G.FromString(data + one(map_string_string={"b": "9"})))
    # A merge from another input makes the float map's values Python floats, which quiet a
    # signaling NaN (upb keeps its bits): the one difference left, compared apart.
    assert sorted(twice.map_int32_float) == sorted(g.map_int32_float) == [-2, 0, 1]
    for m in (twice, g):
        m.ClearField("map_int32_float")
    assert twice.SerializeToString(deterministic=True) == g.SerializeToString(deterministic=True)
    for f in ["map_string_string", "map_int32_int32", "map_bool_bool", "map_string_bytes"]:
        assert dict(getattr(twice, f).items()) == dict(getattr(g, f).items())
    assert list(twice.map_string_string) == ["a", "b", "", "c", "d"]
    twice.map_string_string["e"] = "5"
    g.map_string_string["e"] = "5"
    assert twice.map_string_string == dict(g.map_string_string)


def test_parsed_maps_find_every_key_kind(conf: P.Namespace, google: dict[str, Any]) -> None:
    """A map a parse kept without objects finds, replaces and deletes each of its keys, of every
    key kind, as the dict of the same entries does: the index the parse built serves the map's
    objects."""
    name = "protobuf_test_messages.proto3.TestAllTypesProto3"
    A, G = conf.types[name], google[name]
    rng = random.Random(7)
    edges = {
        "int32": [0, 1, -1, 2**31 - 1, -(2**31)],
        "int64": [0, -1, 2**63 - 1, -(2**63)],
        "uint32": [0, 1, 2**32 - 1],
        "uint64": [0, 1, 2**63, 2**64 - 1],
        "bool": [True, False],
        "string": ["", "a", "é", "ключ", "a" * 40],
    }
    fields = {
        "map_int32_int32": "int32",
        "map_int64_int64": "int64",
        "map_uint32_uint32": "uint32",
        "map_uint64_uint64": "uint64",
        "map_sint32_sint32": "int32",
        "map_sint64_sint64": "int64",
        "map_fixed32_fixed32": "uint32",
        "map_fixed64_fixed64": "uint64",
        "map_sfixed32_sfixed32": "int32",
        "map_sfixed64_sfixed64": "int64",
        "map_bool_bool": "bool",
        "map_string_string": "string",
    }
    for field, kind in fields.items():
        keys = list(edges[kind])
        if kind not in ("bool", "string"):
            lo, hi = min(keys), max(keys)
            keys += [rng.randint(lo, hi) for _ in range(20)]
        value = (lambda k: str(k)) if kind == "string" else (lambda k: k)
        expected = {k: value(k) for k in keys}
        # Each key twice on the wire: the later value wins, in the first place.
        first = G(**{field: {k: (value(True) if kind == "bool" else value(k)) for k in keys}})
        data = first.SerializeToString() + G(**{field: expected}).SerializeToString()
        m = A.FromString(data)
        got = getattr(m, field)
        assert dict(got.items()) == expected, field
        assert len(got) == len(expected)
        for k in keys:
            assert k in got and got[k] == expected[k], (field, k)
        k0 = keys[-1]
        got[k0] = value(keys[0])
        assert len(got) == len(expected) and got[k0] == value(keys[0])
        del got[k0]
        assert k0 not in got and len(got) == len(expected) - 1
        expected.pop(k0)
        assert A.FromString(m.SerializeToString()) == A(**{field: expected}), field


MSG_MAPS = """
syntax = "proto2";
package mm;
message V { optional int32 n = 1; optional string s = 2; map<int64, V> kids = 3; }
message Need { required int32 a = 1; optional string t = 2; }
message M {
  map<string, V> by_name = 1;
  map<int64, V> by_id = 2;
  map<bool, V> by_flag = 3;
  map<string, Need> needs = 4;
  optional int32 tail = 5;
  map<uint32, string> plain = 6;
}
"""


def test_parsed_maps_of_messages_as_google() -> None:
    """Maps of message values a parse keeps natively (no object per entry until read): a repeated
    key's last message wins in the first key's place (not merged), a missing key or value reads as
    its default, and bytes, reads, ==, to_dict, JSON, text, ClearField, copies, merges (into maps
    kept natively, made objects, or from another input) and required-field checks agree with
    Google's, for string, integer and bool keys, small maps and large ones."""
    pytest.importorskip("google.protobuf")
    from google.protobuf import json_format, message_factory, text_format

    ns = P.load_text(MSG_MAPS, name="mm.proto")
    pool = google_pool(ns)
    A, G = ns.mm.M, message_factory.GetMessageClass(pool.FindMessageTypeByName("mm.M"))
    rng = random.Random(271)
    words = ["", "a", "é", "ключ", "k" * 40, "😀"]

    def v(depth: int = 0) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if rng.random() < 0.7:
            out["n"] = rng.choice([0, 1, -1, 2**31 - 1, rng.randrange(1 << 20)])
        if rng.random() < 0.5:
            out["s"] = rng.choice(words)
        if depth < 2 and rng.random() < 0.3:
            out["kids"] = {rng.randrange(-5, 5): v(depth + 1) for _ in range(rng.randrange(3))}
        return out

    for size in [0, 1, 2, 3, 9, 40, 300]:
        kw: dict[str, Any] = {
            "by_name": {f"{rng.choice(words)}{i}": v() for i in range(size)},
            "by_id": {rng.randrange(-(2**63), 2**63): v() for _ in range(size)},
            "by_flag": {b: v() for b in [True, False][: min(size, 2)]},
            "needs": {str(i): {"a": i, "t": "x"} for i in range(min(size, 5))},
            "plain": {i: str(i) for i in range(size)},
            "tail": size,
        }
        g = G(**kw)
        data = g.SerializeToString()
        # Each map's first key again with another value, and entries without a key or value.
        later = G(
            by_name={k: {"n": 7} for k in list(kw["by_name"])[:1]},
            by_id={k: {"s": "again"} for k in list(kw["by_id"])[:1]},
        ).SerializeToString()
        data += later + pb_len(1, b"") + pb_len(2, b"\x12\x00") + pb_len(1, b"\x0a\x01z")
        g = G.FromString(data)
        want = g.SerializeToString(deterministic=True)
        a = A.FromString(data)
        assert a.SerializeToString(deterministic=True) == want, size
        assert G.FromString(a.SerializeToString()) == g
        assert a.ByteSize() == len(g.SerializeToString())
        assert a.IsInitialized()
        assert a == A.FromString(data) and a == A.FromString(bytearray(data))
        assert a.to_dict() == json_format.MessageToDict(g)
        assert json.loads(a.to_json()) == json.loads(json_format.MessageToJson(g))
        assert text_format.Parse(a.to_text(), G()) == g
        # Each kind of copy, before and after the entries are read.
        for c in (copy.deepcopy(a), A.FromString(data)):
            assert c.SerializeToString(deterministic=True) == want
        assert copy.deepcopy(A.FromString(data)) == a
        # Entries read: the same messages (last value wins, first place), kept objects.
        r = A.FromString(data)
        assert list(r.by_name) == list(dict.fromkeys(_wire_keys(data, 1)))
        for k in g.by_name:
            assert r.by_name[k].n == g.by_name[k].n and r.by_name[k].s == g.by_name[k].s
            assert r.by_name[k] is r.by_name[k]
        for k in g.by_id:
            d = True
            assert r.by_id[k].SerializeToString(deterministic=d) == g.by_id[k].SerializeToString(
                deterministic=d
            )
        assert r.SerializeToString(deterministic=True) == want and r == a
        # Merges: into maps kept natively, into maps made objects, from the same and another
        # input, and the other way round; a later key replaces the message (no merge).
        more = G(by_name={k: {"s": "m"} for k in list(g.by_name)[::2]}, by_id={5: {"n": 5}})
        mdata = more.SerializeToString()
        for into in (A.FromString(data), r):
            into.MergeFromString(mdata)
            into.MergeFromString(data)
            gm = G.FromString(data)
            gm.MergeFromString(mdata)
            gm.MergeFromString(data)
            assert into.SerializeToString(deterministic=True) == gm.SerializeToString(
                deterministic=True
            )
        fresh = A()
        _ = fresh.by_name  # an empty map made an object first
        fresh.MergeFrom(A.FromString(data))
        fresh.MergeFrom(A.FromString(mdata))
        gm = G()
        gm.MergeFrom(G.FromString(data))
        gm.MergeFrom(more)
        assert fresh.SerializeToString(deterministic=True) == gm.SerializeToString(
            deterministic=True
        )
        # ClearField drops the entries kept natively.
        c = A.FromString(data)
        c.ClearField("by_name")
        gc = G.FromString(data)
        gc.ClearField("by_name")
        assert c.SerializeToString(deterministic=True) == gc.SerializeToString(deterministic=True)
        # A value missing a required field is reported with its key, as Google's.
        if size:
            bad = data + pb_len(4, pb_len(1, b"0") + pb_len(2, b"\x12\x01x"))
            assert not A.FromString(bad).IsInitialized()
            assert not G.FromString(bad).IsInitialized()
            with pytest.raises(amber.EncodeError, match="needs\\['0'\\]\\.a"):
                A.FromString(bad).SerializeToString()


def test_deep_maps_of_messages_as_google() -> None:
    """A chain of maps of messages, each value holding the next map, as deep as a parse allows,
    kept natively: written back byte for byte, copied, merged and read to the bottom as Google
    reads it; one level more is refused."""
    pytest.importorskip("google.protobuf")
    from google.protobuf import message_factory

    ns = P.load_text(MSG_MAPS, name="mm2.proto")
    G = message_factory.GetMessageClass(google_pool(ns).FindMessageTypeByName("mm.V"))
    body = b"\x08\x07"
    for level in range(49):
        body = b"\x08" + bytes([level]) + pb_len(3, b"\x08\x01" + pb_len(2, body))
    m, g = ns.mm.V.FromString(body), G.FromString(body)
    assert m.SerializeToString() == body == g.SerializeToString()
    c = copy.deepcopy(m)
    c.MergeFromString(body)
    g.MergeFromString(body)
    assert c.SerializeToString(deterministic=True) == g.SerializeToString(deterministic=True)
    cur, depth = m, 0
    while 1 in cur.kids:
        cur, depth = cur.kids[1], depth + 1
    assert (depth, cur.n) == (49, 7)
    with pytest.raises(amber.proto.DecodeError):
        ns.mm.V.FromString(_deeper(body, 60))
    del m, c


def test_map_room_guessed_ahead_stays_within_the_input(tmp_path: Path) -> None:
    """A parse reserves room for a map, a repeated string or a repeated message from the bytes
    left after its second value; 60,000 of each (maps of string keys and of number keys, of
    scalar and of message values) with two values in a 2 MB input (each guessing the rest of the
    input is its own) parse within a 1 GiB address-space allowance and read back as written, and
    so does one large map."""
    import subprocess
    import sys

    (tmp_path / "h.proto").write_text(
        'syntax = "proto3"; package h; message S { map<string, int32> m = 1; '
        "map<string, S> n = 2; repeated string r = 3; repeated S k = 4; string t = 5; "
        "map<int32, int64> c = 6; map<uint64, S> d = 7; } "
        "message H { repeated S s = 1; }"
    )
    code = f"""
import resource, amber.proto as P
ns = P.load({str(tmp_path / "h.proto")!r}, include=[{str(tmp_path)!r}]).h
small = ns.S(m={{"a": 1, "b": 2}}, n={{"c": {{}}, "d": {{}}}}, r=["e", "f"],
             k=[ns.S(t="g"), ns.S(t="h")], c={{1: 2, 3: 4}}, d={{5: {{}}, 6: {{}}}})
data = ns.H(s=[small] * 60000).SerializeToString()
big = ns.S(m={{str(i): i for i in range(50000)}}).SerializeToString()
assert len(data) > 2_000_000
soft, hard = resource.getrlimit(resource.RLIMIT_AS)
used = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
resource.setrlimit(resource.RLIMIT_AS, (used + (1 << 30), hard))
h = ns.H.FromString(data)
assert len(h.s) == 60000 and h.s[-1] == small and h.SerializeToString() == data
b = ns.S.FromString(big)
assert len(b.m) == 50000 and b.m["49999"] == 49999 and b.SerializeToString() == big
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", (out.returncode, out.stderr[-2000:])


def _wire_keys(data: bytes, field: int) -> list[str]:
    """The string keys of map field `field`'s entries in `data`, in wire order (a missing key
    reads as "")."""

    def varint(b: bytes, i: int) -> tuple[int, int]:
        n = shift = 0
        while True:
            n |= (b[i] & 0x7F) << shift
            shift += 7
            i += 1
            if b[i - 1] < 0x80:
                return n, i

    def fields(b: bytes) -> list[tuple[int, int, bytes]]:
        out, i = [], 0
        while i < len(b):
            tag, i = varint(b, i)
            if tag & 7 == 0:
                n, i = varint(b, i)
                out.append((tag >> 3, n, b""))
            else:
                assert tag & 7 == 2
                n, i = varint(b, i)
                out.append((tag >> 3, 0, b[i : i + n]))
                i += n
        return out

    keys = []
    for num, _, body in fields(data):
        if num == field:
            key = [v for n, _, v in fields(body) if n == 1]
            keys.append(key[-1].decode() if key else "")
    return keys


def _deeper(body: bytes, n: int) -> bytes:
    for _ in range(n):
        body = pb_len(3, pb_len(2, body))
    return body


def _map_part(fd: Any, rng: random.Random, strings: list[str]) -> Any:
    """A random key or value for the map entry field `fd` (a Google field descriptor)."""
    if fd.type == fd.TYPE_STRING:
        return rng.choice(strings)
    if fd.type == fd.TYPE_BYTES:
        return rng.choice(strings).encode("utf-8") + bytes([rng.randrange(256)])
    if fd.type == fd.TYPE_BOOL:
        return rng.random() < 0.5
    if fd.type == fd.TYPE_MESSAGE:
        return {"a": rng.randrange(-3, 3)} if "nested" in fd.message_type.name.lower() else {}
    if fd.type == fd.TYPE_ENUM:
        return rng.choice([v.number for v in fd.enum_type.values])
    name = {
        fd.TYPE_INT32: "int32",
        fd.TYPE_INT64: "int64",
        fd.TYPE_UINT32: "uint32",
        fd.TYPE_UINT64: "uint64",
        fd.TYPE_SINT32: "sint32",
        fd.TYPE_SINT64: "sint64",
        fd.TYPE_FIXED32: "fixed32",
        fd.TYPE_FIXED64: "fixed64",
        fd.TYPE_SFIXED32: "sfixed32",
        fd.TYPE_SFIXED64: "sfixed64",
        fd.TYPE_FLOAT: "float",
        fd.TYPE_DOUBLE: "double",
    }[fd.type]
    v = NUMERIC_KINDS[name](rng)
    return 1.5 if isinstance(v, float) and v != v else v  # NaN keys and values compare unequal


def test_maps_and_strings_serialize_as_google_however_kept(
    conf: P.Namespace, google: dict[str, Any]
) -> None:
    """Every map field's entries, and singular and repeated strings, written from the objects the
    constructor keeps, from what a parse keeps (bits and places in the input) and from the
    objects made when read, give Google's bytes: ASCII, non-ASCII, empty and long strings,
    small and large numbers, in the default order and the deterministic one."""
    name = "protobuf_test_messages.proto3.TestAllTypesProto3"
    A, G = conf.types[name], google[name]
    strings = ["", "a", "ascii key", "é", "ключ", "😀x", "x" * 300, "a\x00b", "\x7f", "ü" * 70]
    maps = [
        f for f in G.DESCRIPTOR.fields if f.message_type and f.message_type.GetOptions().map_entry
    ]
    assert len(maps) >= 18
    rng = random.Random(20261127)
    for _ in range(40):
        kw: dict[str, Any] = {
            "optional_string": rng.choice(strings),
            "repeated_string": [rng.choice(strings) for _ in range(rng.randrange(6))],
            "optional_bytes": rng.choice(strings).encode(),
        }
        for f in maps:
            key, value = (
                f.message_type.fields_by_name["key"],
                f.message_type.fields_by_name["value"],
            )
            entries = [
                (_map_part(key, rng, strings), _map_part(value, rng, strings))
                for _ in range(rng.randrange(5))
            ]
            kw[f.name] = dict(entries)
        g, built = G(**kw), A(**kw)
        want = g.SerializeToString(deterministic=True)
        parsed = A.FromString(want)
        read = A.FromString(want)
        for f in maps:  # the map's entries become objects
            assert len(list(getattr(read, f.name).items())) == len(kw[f.name])
        for a in (built, parsed, read):
            assert a.SerializeToString(deterministic=True) == want
            assert G.FromString(a.SerializeToString()) == g
            assert a.ByteSize() == len(want)
        # The default order is the order the entries were given or read in, however kept.
        assert parsed.SerializeToString() == read.SerializeToString() == want
        assert (
            A.FromString(built.SerializeToString()).SerializeToString() == built.SerializeToString()
        )


def test_parsed_maps_of_every_key_kind_keep_the_last_value_of_a_repeated_key(
    conf: P.Namespace, google: dict[str, Any]
) -> None:
    """Entries of every map field (every key kind) in ascending key order, in descending order,
    ascending then repeating earlier keys, and in random order with repeats: a parse keeps each
    key once, with its last value, at its first place, as a dict built from the entries in wire
    order does; looked up, read in order, serialized before and after a read, and against
    Google's parse of the same bytes."""
    name = "protobuf_test_messages.proto3.TestAllTypesProto3"
    A, G = conf.types[name], google[name]
    strings = ["", "a", "ab", "b", "é", "ключ", "😀x", "x" * 300, "a\x00b", "\x7f", "ü" * 70]
    # Keys that share eight bytes or more, end inside or at a word, and differ past it.
    strings += ["abcdefgh", "abcdefghi", "abcdefgh\x00", "abcdefgg~~~", "abcdefgé"]
    strings += [
        "abcdefghabcdefgh",
        "abcdefghabcdefgi",
        "abcdefghabcdefg",
        "abcdefgh\u0430\u0431\u0432",
    ]
    maps = [
        f for f in G.DESCRIPTOR.fields if f.message_type and f.message_type.GetOptions().map_entry
    ]
    rng = random.Random(20261128)

    def entry(f: Any, k: Any, v: Any) -> bytes:
        return bytes(G(**{f.name: {k: v}}).SerializeToString())

    for f in maps:
        kd, vd = f.message_type.fields_by_name["key"], f.message_type.fields_by_name["value"]
        keys = sorted({_map_part(kd, rng, strings) for _ in range(40)})
        if len(keys) < 2:
            keys = [False, True]
        orders = [
            keys,
            keys[::-1],
            [*keys, keys[1], keys[0], keys[-1]],
            [rng.choice(keys) for _ in range(3 * len(keys))],
        ]
        for order in orders:
            entries = [(k, _map_part(vd, rng, strings)) for k in order]
            want = dict(entries)
            data = b"".join(entry(f, k, v) for k, v in entries)
            wire_order = b"".join(entry(f, k, v) for k, v in want.items())
            parsed = A.FromString(data)
            assert parsed.SerializeToString() == wire_order, (f.name, order)
            got = getattr(A.FromString(data), f.name)
            assert list(got) == list(want), (f.name, order)
            assert all(k in got for k in want) and len(got) == len(want)
            g = G.FromString(data)
            assert dict(getattr(g, f.name)).keys() == want.keys()
            a = A.FromString(data)
            assert G.FromString(a.SerializeToString()) == g
            getattr(a, f.name)  # read: the entries become objects
            assert a.SerializeToString() == wire_order


_RUN_SCHEMA = """syntax = "proto3";
message S { string t = 1; int32 n = 2; }
message M {
  int32 a = 1;
  map<string, S> ms = 2;
  map<int32, string> is = 3;
  map<int32, int32> ii = 4;
  repeated int32 r = 5;
}"""


def _tag(n: int, wt: int) -> bytes:
    return bytes([n << 3 | wt])


def _ld(n: int, b: bytes) -> bytes:
    return _tag(n, 2) + bytes([len(b)]) + b


def _entry(field: int, i: int, bad: bool) -> bytes:
    """Entry `i` of map field `field` of `M`; `bad`: one that cannot be read (its value's text
    not UTF-8, or its varint cut short by the entry's end)."""
    if field == 2:
        text = b"\xff\xfe" if bad else b"ok"
        return _ld(2, _ld(1, b"k%d" % i) + _ld(2, _ld(1, text) + _tag(2, 0) + b"\x01"))
    if field == 3:
        return _ld(3, _tag(1, 0) + bytes([i]) + _ld(2, b"\xc3\x28" if bad else b"v"))
    return _ld(4, _tag(1, 0) + bytes([i]) + _tag(2, 0) + (b"\xff" if bad else b"\x05"))


@pytest.mark.parametrize("field,name,inner", [(2, "ms", ".value.t"), (3, "is", ""), (4, "ii", "")])
@pytest.mark.parametrize("bad_at", [0, 1, 4, 6])
@pytest.mark.parametrize("split", [None, 2, 5])
def test_an_error_in_a_later_map_entry_names_that_entry(
    field: int, name: str, inner: str, bad_at: int, split: int | None
) -> None:
    """Entries of one map that follow one another are read together; an error in any of them
    (the first, one in the middle, the last), in a run or in a second run after another field,
    names the entry by its place among all the map's entries, and gives the offset of the bad
    bytes."""
    ns = P.load_text(_RUN_SCHEMA, name=f"runs_{field}_{bad_at}_{split}.proto")
    parts = [_entry(field, i, i == bad_at) for i in range(7)]
    if split is not None:
        parts.insert(split, _tag(5, 0) + b"\x01" + _tag(1, 0) + b"\x07")
    data = _tag(1, 0) + b"\x07" + b"".join(parts)
    with pytest.raises(P.DecodeError) as err:
        ns.M.FromString(data)
    assert err.value.path == f"$.{name}[{bad_at}]{inner}"
    bad = _entry(field, bad_at, True)
    at = data.index(bad)
    assert at <= err.value.offset < at + len(bad)
    good = _tag(1, 0) + b"\x07" + b"".join(_entry(field, i, False) for i in range(7))
    assert len(getattr(ns.M.FromString(good), name)) == 7
