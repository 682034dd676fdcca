"""Hostile input to amber.proto: descriptor sets that did not come from a compiler (checked
against Google's descriptor pool), and Python values too deep or cyclic to be built into a
message."""

from __future__ import annotations

import contextlib
import random
import re
import subprocess
import sys
import textwrap

import pytest

import amber.proto

descriptor_pb2 = pytest.importorskip("google.protobuf.descriptor_pb2")
descriptor_pool = pytest.importorskip("google.protobuf.descriptor_pool")

# ---------------------------------------------------------------------------------------------
# Descriptor sets


def _set(edit):
    s = descriptor_pb2.FileDescriptorSet()
    f = s.file.add(name="r8.proto", package="r8", syntax="proto3")
    edit(f, f.message_type.add(name="M"))
    return s.SerializeToString()


def _map_without_value(f, m):
    m.field.add(name="m", number=1, type=11, label=3, type_name=".r8.M.E", json_name="m")
    e = m.nested_type.add(name="E")
    e.options.map_entry = True
    e.field.add(name="key", number=1, type=5, label=1, json_name="key")


INVALID = {
    "field number 0": lambda f, m: m.field.add(name="x", number=0, type=5, label=1),
    "field number too big": lambda f, m: m.field.add(name="x", number=1 << 29, type=5, label=1),
    "JSON name clash": lambda f, m: (
        m.field.add(name="a_b", number=1, type=5, label=1),
        m.field.add(name="aB", number=2, type=5, label=1),
    ),
    "default in proto3": lambda f, m: m.field.add(
        name="x", number=1, type=5, label=1, default_value="3"
    ),
    "map key of type double": lambda f, m: (
        _map_without_value(f, m),
        m.nested_type[0].field.add(name="value", number=2, type=5, label=1),
        setattr(m.nested_type[0].field[0], "type", 1),
    ),
    "duplicate field numbers": lambda f, m: (
        m.field.add(name="x", number=1, type=5, label=1),
        m.field.add(name="y", number=1, type=9, label=1),
    ),
    "duplicate message": lambda f, m: f.message_type.add(name="M"),
    "self dependency": lambda f, m: f.dependency.append("r8.proto"),
    "missing dependency": lambda f, m: f.dependency.append("nothere.proto"),
    "empty enum": lambda f, m: f.enum_type.add(name="E"),
    "oneof_index out of range": lambda f, m: m.field.add(
        name="x", number=1, type=5, label=1, oneof_index=7
    ),
    "map entry without value": _map_without_value,
    "unknown type name": lambda f, m: m.field.add(
        name="x", number=1, type=11, label=1, type_name=".r8.Nope"
    ),
    "required in proto3": lambda f, m: m.field.add(name="x", number=1, type=5, label=2),
    "open enum starting at 1": lambda f, m: f.enum_type.add(name="E").value.add(
        name="E_ONE", number=1
    ),
    "unknown syntax": lambda f, m: setattr(f, "syntax", "proto4"),
}


@pytest.mark.parametrize("case", sorted(INVALID))
def test_invalid_descriptor_sets_are_refused_as_google_refuses_them(case):
    data = _set(INVALID[case])
    pool = descriptor_pool.DescriptorPool()
    with pytest.raises(Exception):  # noqa: B017 - Google's classes differ by backend
        for fd in descriptor_pb2.FileDescriptorSet.FromString(data).file:
            pool.Add(fd)
    with pytest.raises(amber.proto.SchemaError) as e:
        amber.proto.load_descriptor_set(data)
    assert e.value.file == "r8.proto"
    assert e.value.line is None and e.value.col is None
    assert str(e.value).startswith("r8.proto: ")


def test_refusal_names_the_type_and_the_field():
    with pytest.raises(amber.proto.SchemaError, match=r"field r8\.M\.y: number 1 .* by x"):
        amber.proto.load_descriptor_set(_set(INVALID["duplicate field numbers"]))
    with pytest.raises(amber.proto.SchemaError, match=r"map entry r8\.M\.E: .*value"):
        amber.proto.load_descriptor_set(_set(_map_without_value))


def test_relative_type_names_resolve_as_googles_pool_resolves_them():
    def edit(f, m):
        m.field.add(name="child", number=1, label=1, type_name="M")
        m.field.add(name="e", number=2, label=1, type_name="r8.E")
        f.enum_type.add(name="E").value.add(name="ZERO", number=0)

    ns = amber.proto.load_descriptor_set(_set(edit))
    m = ns.r8.M(child={"e": 0})
    assert ns.r8.M.FromString(m.SerializeToString()) == m


BASES = {
    "p3.proto": """
syntax = "proto3";
package p3;
enum Color { RED = 0; GREEN = 1; }
message Item { string name = 1; int64 n = 2; bytes raw = 3; }
message Top {
  int32 a = 1; optional string s = 2; Color c = 3; repeated int32 nums = 4;
  map<string, Item> items = 5; map<int32, string> names = 6;
  oneof pick { Item one = 7; double d = 8; }
  repeated Item list = 9; Top next = 10;
  message Inner { enum Kind { K0 = 0; K1 = 1; } Kind k = 1; }
  Inner inner = 11;
}
""",
    "p2.proto": """
syntax = "proto2";
package p2;
enum Level { LOW = 1; HIGH = 2; }
message Base {
  optional int32 a = 1 [default = 7]; optional Level lv = 2 [default = HIGH];
  optional string s = 3 [default = "x"]; optional bytes b = 4 [default = "\\001z"];
  optional double d = 5 [default = 1.5]; optional bool ok = 6 [default = true];
  required uint64 u = 7; repeated int32 packed = 8 [packed = true];
  optional group G = 9 { optional int32 g = 10; }
  map<int64, string> levels = 11;
  extensions 100 to 199;
}
extend Base { optional string note = 100; repeated int32 more = 101; }
message Holder { extend Base { optional Base back = 150; } optional Base base = 1; }
""",
    "e23.proto": """
edition = "2023";
package e23;
option features.field_presence = IMPLICIT;
enum Open { O0 = 0; O1 = 1; }
enum Closed { option features.enum_type = CLOSED; C1 = 1; C2 = 2; }
message Rec {
  int32 a = 1; string s = 2 [features.field_presence = EXPLICIT];
  Closed c = 3 [features.field_presence = EXPLICIT]; Open o = 4;
  repeated int32 nums = 5; repeated int32 loose = 6 [features.repeated_field_encoding = EXPANDED];
  map<string, Rec> kids = 7; Rec next = 8 [features.message_encoding = DELIMITED];
}
""",
}


def _base_files():
    out = []
    for name, text in BASES.items():
        data = amber.proto.load_text(text, name=name).descriptor_set()
        s = descriptor_pb2.FileDescriptorSet.FromString(data)
        out.append(s)
    return out


def _fields(fd):
    """Every (message, field) of a file, nested types included."""
    stack = list(fd.message_type)
    while stack:
        m = stack.pop()
        stack.extend(m.nested_type)
        for f in m.field:
            yield m, f


def _messages(fd):
    stack = list(fd.message_type)
    out = []
    while stack:
        m = stack.pop()
        stack.extend(m.nested_type)
        out.append(m)
    return out


def _enums(fd):
    out = list(fd.enum_type)
    for m in _messages(fd):
        out.extend(m.enum_type)
    return out


def _mutate(rng, s):
    """One random change to a random part of the set's last file."""
    fd = s.file[-1]
    fields = list(_fields(fd)) + [(None, x) for x in fd.extension]
    msgs = _messages(fd)
    enums = _enums(fd)
    pick = rng.randrange(26)
    if pick < 14 and fields:
        m, f = rng.choice(fields)
        if pick == 0:
            f.number = rng.choice([0, -1, 1, 2, 3, 19000, 19999, 536870911, 536870912, 100, 150])
        elif pick == 1:
            f.label = rng.choice([1, 2, 3])
        elif pick == 2:
            f.type = rng.choice([1, 2, 5, 8, 9, 10, 11, 12, 13, 14])
        elif pick == 3:
            if rng.random() < 0.5:
                f.ClearField("type_name")
            else:
                f.type_name = rng.choice(
                    [
                        ".p3.Item",
                        "Item",
                        ".p3.Color",
                        ".nope.X",
                        "Top",
                        ".p2.Base",
                        ".e23.Rec",
                        ".e23.Closed",
                        ".p2.Level",
                        "Base.G",
                        ".p3.Top.Inner.Kind",
                        "",
                    ]
                )
        elif pick == 4:
            f.oneof_index = rng.choice([0, 1, 2, -1])
        elif pick == 5:
            f.ClearField("oneof_index")
        elif pick == 6:
            f.json_name = rng.choice(["a", "s", "x", "nums", "", "[x]", f.name])
        elif pick == 7:
            f.default_value = rng.choice(
                [
                    "0",
                    "1",
                    "-1",
                    "x",
                    "1.5",
                    "inf",
                    "nan",
                    "true",
                    "HIGH",
                    "LOW",
                    "NOPE",
                    "\\001",
                    "\\x",
                    "99999999999999999999",
                    "",
                ]
            )
        elif pick == 8:
            f.ClearField("default_value")
        elif pick == 9:
            f.name = rng.choice(["a", "s", "b", "1x", "key", "value", "", "x.y", "n_n"])
        elif pick == 10:
            f.options.packed = rng.random() < 0.5
        elif pick == 11:
            f.proto3_optional = True
        elif pick == 12:
            f.extendee = rng.choice([".p2.Base", ".p3.Top", "Base", ".nope"])
        else:
            f.ClearField("extendee")
    elif pick < 20 and msgs:
        m = rng.choice(msgs)
        if pick == 14:
            m.options.map_entry = not m.options.map_entry
        elif pick == 15:
            if m.field:
                del m.field[rng.randrange(len(m.field))]
        elif pick == 16:
            r = m.extension_range.add()
            r.start, r.end = rng.choice([(1, 2), (0, 5), (200, 100), (500, 600), (5, 5)])
        elif pick == 17:
            r = m.reserved_range.add()
            r.start, r.end = rng.choice([(1, 2), (3, 4), (9, 12), (0, 1), (300, 200)])
        elif pick == 18:
            m.oneof_decl.add(name=rng.choice(["o", "pick", "extra", "a"]))
        else:
            m.name = rng.choice(["Top", "Item", "X", "Entry", "", "ItemsEntry", "Base"])
    elif pick < 23 and enums:
        e = rng.choice(enums)
        if pick == 20:
            if e.value:
                del e.value[rng.randrange(len(e.value))]
        elif pick == 21:
            e.value.add(name=rng.choice(["RED", "X2", "LOW", "HIGH"]), number=rng.choice([0, 1, 5]))
        else:
            e.options.allow_alias = rng.random() < 0.5
    else:
        if pick == 23:
            fd.syntax = rng.choice(["proto2", "proto3", "editions", "", "proto4"])
        elif pick == 24:
            fd.dependency.append(rng.choice([fd.name, "other.proto", s.file[0].name]))
        else:
            fd.package = rng.choice(["", "p3", "p2", "x.y", "1bad", "Top"])
    return s


# Where amber refuses what Google's pool takes, on purpose (docs/proto.md says so): an
# extension numbered as a field of its extendee, a map entry's key numbered above its value.
STRICTER = (
    r"extension \S+: number \d+ of \S+ is already used by"
    r"|map entry \S+: its key \(declared first\) must be numbered below its value"
)


def _google_accepts(s):
    pool = descriptor_pool.DescriptorPool()
    try:
        for fd in s.file:
            pool.Add(fd)
    except Exception:  # Google's classes differ by backend: any refusal counts
        return False
    return True


def _fill(m, f):
    """Set field `f` of `m` somehow (a refusal is fine)."""
    if f.label == f.LABEL_REPEATED:
        c = getattr(m, f.name)
        for put in (lambda: c.__setitem__(1, 0), c.add, lambda: c.append(1)):
            with contextlib.suppress(Exception):
                put()
                return
    elif f.message_type is not None:
        getattr(m, f.name).SetInParent()
    else:
        setattr(m, f.name, getattr(m, f.name))


def _exercise(ns_types):
    """Every operation on every class: build, set, serialize, parse, JSON, text, dicts;
    refusals are fine, any other way out (a panic is a BaseException) fails the test."""
    for cls in ns_types.values():
        m = cls()
        for f in cls.DESCRIPTOR.fields:
            with contextlib.suppress(Exception):
                _fill(m, f)
        with contextlib.suppress(Exception):
            cls.FromString(m.SerializeToString())
        with contextlib.suppress(Exception):
            cls.from_json(m.to_json())
        with contextlib.suppress(Exception):
            cls.from_text(m.to_text())
        with contextlib.suppress(Exception):
            cls.from_dict(m.to_dict())


def test_descriptor_sets_differ_from_googles_pool_in_nothing():
    """Seeded mutations of valid sets: what Google's pool refuses amber refuses, what it
    accepts amber accepts, and the classes then work."""
    rng = random.Random(27)
    bases = _base_files()
    disagree = []
    both_ok = 0
    for i in range(300):
        s = descriptor_pb2.FileDescriptorSet()
        s.CopyFrom(rng.choice(bases))
        for _ in range(rng.choice([1, 1, 2])):
            _mutate(rng, s)
        data = s.SerializeToString()
        google = _google_accepts(s)
        try:
            ns = amber.proto.load_descriptor_set(data)
            ours = True
        except amber.proto.SchemaError as e:
            ours = False
            if google and re.search(STRICTER, str(e)):
                continue
        except Exception as e:  # a refusal of the wrong class is a disagreement too
            disagree.append((i, google, f"{type(e).__name__}: {e}"))
            continue
        if google != ours:
            disagree.append((i, google, str(s.file[-1])[:2000]))
            continue
        if ours:
            both_ok += 1
            _exercise(ns.types)
    assert not disagree, disagree[:3]
    assert both_ok > 30


# ---------------------------------------------------------------------------------------------
# Python values walked into messages

SCHEMA = """syntax = "proto3";
package r1;
import "google/protobuf/struct.proto";
message Node {
  Node child = 1; int32 v = 2; repeated Node kids = 3; map<string, Node> by_name = 4;
  google.protobuf.Struct st = 5; google.protobuf.Value val = 6;
}
"""

# Every way a dict becomes a message (item assignment of a message element or map value is
# refused for any value, as Google's).
ENTRY_POINTS = {
    "constructor": "Node(**d)",
    "constructor child": "Node(child=d)",
    "append": "Node().kids.append(d)",
    "extend": "Node().kids.extend([d])",
    "insert": "Node().kids.insert(0, d)",
    "add": "Node().kids.add(**d)",
    "map update": "Node().by_name.update({'k': d})",
    "nested repeated": "Node(kids=[{'kids': [d]}])",
    "nested map": "Node(by_name={'a': {'by_name': {'b': d}}})",
    "constructor nested": "Node(child={'child': d})",
}

SHAPES = {
    "cyclic dict": "d = {}; d['child'] = d",
    "cyclic through a list": "d = {}; d['kids'] = [d]",
    "cyclic through a map": "d = {}; d['by_name'] = {'x': d}",
    "101-deep dicts": "d = {}\nfor _ in range(101): d = {'child': d}",
    "6000-deep dicts": "d = {}\nfor _ in range(6000): d = {'child': d}",
    "6000-deep list nesting": "d = {}\nfor _ in range(6000): d = {'kids': [d]}",
}

STRUCT_SHAPES = {
    "cyclic Struct dict": "x = {}; x['a'] = x; d = {'st': x}",
    "cyclic Struct list": "x = []; x.append(x); d = {'st': {'l': x}}",
    "cyclic Value list": "x = []; x.append(x); d = {'val': {'list_value': x}}",
    "6000-deep Struct": "x = {}\nfor _ in range(6000): x = {'a': x}\nd = {'st': x}",
    "6000-deep Value lists": "x = []\nfor _ in range(6000): x = [x]\nd = {'val': {'list_value': x}}",
}

CHILD = """
import sys, threading
import amber.proto
Node = amber.proto.load_text({schema!r}, name="r1.proto").r1.Node
{shape}
def run():
    try:
{body}
        print("returned normally")
    except amber.proto.DecodeError as e:
        print("DecodeError", e.kind, e.path)
    except BaseException as e:
        print("other", type(e).__name__, str(e)[:200])
if {small}:
    threading.stack_size(256 * 1024)
    t = threading.Thread(target=run); t.start(); t.join()
else:
    run()
"""


def _child(shape, body, small=False):
    code = CHILD.format(
        schema=SCHEMA,
        shape=shape,
        body=textwrap.indent(body.replace("; ", "\n"), " " * 8),
        small=small,
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, (p.returncode, p.stderr[-2000:])
    return p.stdout.strip()


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_deep_and_cyclic_dicts_are_refused_with_a_path(entry, shape):
    out = _child(SHAPES[shape], ENTRY_POINTS[entry])
    assert out.startswith("DecodeError"), out
    kind, path = out.split()[1:3]
    assert kind == ("invalid_value" if "cyclic" in shape else "limit")
    assert path.startswith("$.")


STRUCT_ENTRY_POINTS = {
    "constructor": "Node(**d)",
    "update and extend": (
        "n = Node(); n.st.update(d['st']) if 'st' in d"
        " else n.val.list_value.extend(d['val']['list_value'])"
    ),
}


@pytest.mark.parametrize("entry", sorted(STRUCT_ENTRY_POINTS))
@pytest.mark.parametrize("shape", sorted(STRUCT_SHAPES))
def test_deep_and_cyclic_struct_values_are_refused_with_a_path(entry, shape):
    out = _child(STRUCT_SHAPES[shape], STRUCT_ENTRY_POINTS[entry])
    assert out.startswith("DecodeError"), out
    assert out.split()[1] == ("invalid_value" if "cyclic" in shape else "limit")


@pytest.mark.parametrize("entry", ["constructor", "append", "map update", "add"])
def test_small_thread_stack_refuses_instead_of_crashing(entry):
    out = _child(SHAPES["6000-deep dicts"], ENTRY_POINTS[entry], small=True)
    assert out.startswith("DecodeError limit"), out
    out = _child(SHAPES["cyclic dict"], ENTRY_POINTS[entry], small=True)
    assert out.startswith("DecodeError invalid_value"), out


def _chain(n):
    d: dict = {}
    for _ in range(n):
        d = {"child": d}
    return d


def test_depth_limit_is_parsings():
    Node = amber.proto.load_text(SCHEMA, name="r1.proto").r1.Node
    ok = Node(**_chain(99))  # 100 messages, the root included: as deep as parsing takes
    assert Node.FromString(ok.SerializeToString()) == ok
    assert Node.from_dict(ok.to_dict()) == ok
    with pytest.raises(amber.proto.DecodeError) as e:
        Node(**_chain(100))
    assert e.value.kind == "limit"
    assert e.value.path == "$" + ".child" * 100
    with pytest.raises(amber.proto.DecodeError):
        Node.from_dict(_chain(100))


def test_shared_not_cyclic_dicts_are_fine():
    Node = amber.proto.load_text(SCHEMA, name="r1.proto").r1.Node
    leaf = {"v": 1}
    n = Node(kids=[leaf, leaf], by_name={"a": leaf, "b": leaf}, child={"child": leaf})
    assert [k.v for k in n.kids] == [1, 1] and n.child.child.v == 1
    # the walk's path is left empty after a refusal: the same thread builds again
    d: dict = {}
    d["child"] = d
    with pytest.raises(amber.proto.DecodeError):
        Node(**d)
    assert Node(**_chain(50)).child.child.child is not None
    x: list = [1, {"a": [2]}]
    m = Node(st={"x": x, "y": x})
    assert m.st["y"][1]["a"][0] == 2
