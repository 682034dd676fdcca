"""amber.proto's ProtoJSON (`to_json`, `from_json`, `to_dict`, `from_dict`), checked against
Google's `json_format` on the conformance messages.

Google's classes are built at run time from the descriptor set amber compiled (as in
tests/proto/oracle.py). Each message is made with Google's API and handed to amber as wire bytes, so both
hold the same contents; then amber's text must equal `MessageToJson`'s byte for byte, its dict
`MessageToDict`'s, and parsing Google's text (or the variants Google accepts) must give Google's
message. Map entries are the one thing whose order differs: amber writes a map in its own (insertion,
here wire) order, while upb iterates its hash table in an order of its own (and writes it to the
wire reversed); so texts with maps of several entries are compared exactly with `sort_keys=True`
and structurally otherwise.
"""

from __future__ import annotations

import contextlib
import json
import math
import random
from pathlib import Path
from typing import Any

import pytest

import amber
import amber.proto as P

CONF = Path(__file__).resolve().parents[2] / "crates" / "amber-core" / "tests" / "data" / "proto"
CONF = CONF / "conformance"
N3 = "protobuf_test_messages.proto3.TestAllTypesProto3"
N2 = "protobuf_test_messages.proto2.TestAllTypesProto2"
NE = "protobuf_test_messages.editions.TestAllTypesEdition2023"

OPTIONS: list[dict[str, Any]] = [
    {},
    {"indent": None},
    {"indent": 0},
    {"indent": 4, "sort_keys": True},
    {"preserving_proto_field_name": True, "indent": None},
    {"use_integers_for_enums": True, "indent": None},
    {"always_print_fields_with_no_presence": True, "indent": None},
    {"ensure_ascii": False, "indent": None, "sort_keys": True},
    {
        "always_print_fields_with_no_presence": True,
        "preserving_proto_field_name": True,
        "use_integers_for_enums": True,
    },
]
DICT_OPTIONS = [
    {},
    {"preserving_proto_field_name": True},
    {"use_integers_for_enums": True},
    {"always_print_fields_with_no_presence": True},
]


class Google:
    def __init__(self, ns: P.Namespace) -> None:
        from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory

        fds = descriptor_pb2.FileDescriptorSet.FromString(ns.descriptor_set())
        self.pool = descriptor_pool.DescriptorPool()
        for f in fds.file:
            self.pool.Add(f)
        self.jf = json_format
        self.factory = message_factory

    def cls(self, name: str) -> Any:
        return self.factory.GetMessageClass(self.pool.FindMessageTypeByName(name))

    def to_json(self, m: Any, **kw: Any) -> str:
        return self.jf.MessageToJson(m, descriptor_pool=self.pool, **kw)  # type: ignore[no-any-return]

    def to_dict(self, m: Any, **kw: Any) -> Any:
        return self.jf.MessageToDict(m, descriptor_pool=self.pool, **kw)

    def parse(self, text: str | bytes, cls: Any, **kw: Any) -> Any:
        return self.jf.Parse(text, cls(), descriptor_pool=self.pool, **kw)

    def parse_dict(self, d: Any, cls: Any, **kw: Any) -> Any:
        return self.jf.ParseDict(d, cls(), descriptor_pool=self.pool, **kw)


@pytest.fixture(scope="module")
def conf() -> P.Namespace:
    return P.load(
        "test_messages_proto3.proto",
        "test_messages_proto2.proto",
        "test_messages_edition2023.proto",
        include=[CONF],
    )


@pytest.fixture(scope="module")
def g(conf: P.Namespace) -> Google:
    pytest.importorskip("google.protobuf")
    return Google(conf)


# --- messages, made with Google's API -----------------------------------------------------------

FLOATS = [0.0, -0.0, 0.1, 1e-5, 1e-4, 1e16, 1e15, 123.456, -2.5e-300, 5e-324, math.pi, 1e308]
F32 = [0.1, 2.5, 3.4028234663852886e38, 1e-45, -1.17549435e-38, 16777217.0, 1e10, 0.3]
SPECIAL = [math.nan, math.inf, -math.inf]
STRINGS = [
    "",
    "plain",
    'quote"back\\slash/',
    "é中😀\U0010ffff",
    "\x00\x01\x1f\x7f\n\t\r\x08\x0c",
    "\u2028",
]


def _scalars(rng: random.Random) -> dict[str, Any]:
    return {
        "optional_int32": rng.choice([0, 1, -1, 2**31 - 1, -(2**31), 150]),
        "optional_int64": rng.choice([0, -1, 2**63 - 1, -(2**63), 1 << 53, (1 << 53) + 1]),
        "optional_uint32": rng.choice([0, 1, 2**32 - 1]),
        "optional_uint64": rng.choice([0, 2**64 - 1, 1 << 50]),
        "optional_sint32": rng.choice([0, -5, 2**31 - 1]),
        "optional_sint64": rng.choice([0, -(2**63)]),
        "optional_fixed32": rng.randrange(2**32),
        "optional_fixed64": rng.randrange(2**64),
        "optional_sfixed32": rng.randrange(-(2**31), 2**31),
        "optional_sfixed64": rng.randrange(-(2**63), 2**63),
        "optional_float": rng.choice(F32 + SPECIAL + [rng.uniform(-1e6, 1e6)]),
        "optional_double": rng.choice(FLOATS + SPECIAL + [rng.uniform(-1e20, 1e20)]),
        "optional_bool": rng.random() < 0.5,
        "optional_string": rng.choice(STRINGS),
        "optional_bytes": bytes(rng.randrange(256) for _ in range(rng.randrange(7))),
    }


def _repeated(rng: random.Random) -> dict[str, Any]:
    n = rng.randrange(4)
    return {
        "repeated_int32": [rng.randrange(-(2**31), 2**31) for _ in range(n)],
        "repeated_int64": [rng.randrange(-(2**63), 2**63) for _ in range(n)],
        "repeated_uint64": [rng.randrange(2**64) for _ in range(n)],
        "repeated_float": [rng.choice(F32 + SPECIAL) for _ in range(n)],
        "repeated_double": [rng.choice(FLOATS + SPECIAL) for _ in range(n)],
        "repeated_bool": [rng.random() < 0.5 for _ in range(n)],
        "repeated_string": [rng.choice(STRINGS) for _ in range(n)],
        "repeated_bytes": [bytes(range(rng.randrange(5))) for _ in range(n)],
        "repeated_nested_message": [{"a": i} for i in range(n)],
        "packed_sint64": [rng.randrange(-(2**63), 2**63) for _ in range(n)],
        "unpacked_double": [rng.choice(FLOATS) for _ in range(n)],
    }


def _maps(rng: random.Random, many: bool) -> dict[str, Any]:
    k = 3 if many else 1

    def ints(lo: int, hi: int) -> dict[int, int]:
        return {rng.randrange(lo, hi): rng.randrange(lo, hi) for _ in range(k)}

    return {
        "map_int32_int32": ints(-(2**31), 2**31),
        "map_int64_int64": ints(-(2**63), 2**63),
        "map_uint32_uint32": ints(0, 2**32),
        "map_uint64_uint64": ints(0, 2**64),
        "map_sint32_sint32": ints(-100, 100),
        "map_sint64_sint64": ints(-(2**63), 2**63),
        "map_fixed32_fixed32": ints(0, 2**32),
        "map_fixed64_fixed64": ints(0, 2**64),
        "map_sfixed32_sfixed32": ints(-(2**31), 2**31),
        "map_sfixed64_sfixed64": ints(-(2**63), 2**63),
        "map_int32_float": {i: rng.choice(F32) for i in range(k)},
        "map_int32_double": {i: rng.choice(FLOATS + SPECIAL) for i in range(k)},
        "map_bool_bool": {True: False, False: True} if many else {False: False},
        "map_string_string": {rng.choice(STRINGS) + str(i): rng.choice(STRINGS) for i in range(k)},
        "map_string_bytes": {str(i): bytes([i, 255]) for i in range(k)},
        "map_string_nested_message": {str(i): {"a": i} for i in range(k)},
        "map_string_nested_enum": {str(i): i % 3 for i in range(k)},
    }


def _oneof(rng: random.Random) -> dict[str, Any]:
    return dict(
        [
            rng.choice(
                [
                    ("oneof_uint32", rng.choice([0, 7])),
                    ("oneof_nested_message", rng.choice([{}, {"a": 3}])),
                    ("oneof_string", rng.choice(["", "x"])),
                    ("oneof_bytes", rng.choice([b"", b"\xff"])),
                    ("oneof_bool", rng.random() < 0.5),
                    ("oneof_uint64", rng.choice([0, 2**64 - 1])),
                    ("oneof_float", rng.choice([0.0, 0.1, math.nan])),
                    ("oneof_double", rng.choice([0.0, 1e100, -math.inf])),
                    ("oneof_enum", rng.choice([0, 2])),
                    ("oneof_null_value", 0),
                ]
            )
        ]
    )


def _set_wkts(m: Any, rng: random.Random, g: Google, many: bool) -> None:
    """Every well-known-type field of TestAllTypesProto3, with varied values."""
    for name, v in [
        ("optional_bool_wrapper", rng.random() < 0.5),
        ("optional_int32_wrapper", rng.choice([0, -(2**31)])),
        ("optional_int64_wrapper", rng.choice([0, 2**63 - 1])),
        ("optional_uint32_wrapper", rng.choice([0, 2**32 - 1])),
        ("optional_uint64_wrapper", rng.choice([0, 2**64 - 1])),
        ("optional_float_wrapper", rng.choice([0.0, 0.1, math.inf])),
        ("optional_double_wrapper", rng.choice([0.0, 1e-7, math.nan])),
        ("optional_string_wrapper", rng.choice(STRINGS)),
        ("optional_bytes_wrapper", rng.choice([b"", b"\x00\xfe\xff"])),
    ]:
        getattr(m, name).value = v
    m.repeated_int64_wrapper.add(value=5)
    m.repeated_int64_wrapper.add()
    m.repeated_float_wrapper.add(value=0.3)
    m.repeated_string_wrapper.add(value="é")
    m.repeated_bytes_wrapper.add(value=b"ab")
    m.repeated_bool_wrapper.add(value=True)
    m.repeated_uint32_wrapper.add(value=4)
    m.repeated_double_wrapper.add(value=1.5)
    m.repeated_int32_wrapper.add(value=-4)
    m.repeated_uint64_wrapper.add(value=2**64 - 1)
    m.optional_duration.seconds, m.optional_duration.nanos = rng.choice(
        [(0, 0), (1, 500_000_000), (-3, -100_000), (0, -1), (315576000000, 999_999_999)]
    )
    m.optional_timestamp.seconds, m.optional_timestamp.nanos = rng.choice(
        [(0, 0), (-62135596800, 0), (253402300799, 999_999_999), (63072020, 21_000), (-1, 1)]
    )
    m.optional_field_mask.paths.extend(rng.choice([[], ["a"], ["foo_bar.baz_qux", "x"]]))
    if many:
        m.optional_struct.update({"a": 1, "b": [None, True, "s", {"c": -2.5}], "e": {}})
    else:
        m.optional_struct.update({"b": [None, True, "s", -2.5, {"c": {"d": {}}}]})
    m.optional_value.CopyFrom(
        rng.choice(
            [
                _value(g, None),
                _value(g, 3.0),
                _value(g, "v"),
                _value(g, False),
                _value(g, [1, [2, {}]]),
                _value(g, {"k": None, "l": 1.0} if many else {"k": None}),
            ]
        )
    )
    inner = g.cls(N3)(optional_int32=5, repeated_string=["a"])
    kind = rng.randrange(6)
    if kind == 0:
        m.optional_any.Pack(inner)
    elif kind == 1:
        m.optional_any.Pack(m.optional_duration)
    elif kind == 2:
        m.optional_any.Pack(m.optional_struct)
    elif kind == 3:
        w = g.cls("google.protobuf.Int64Value")(value=-7)
        m.optional_any.Pack(w)
    elif kind == 4:
        outer = g.cls("google.protobuf.Any")()
        outer.Pack(inner)
        m.optional_any.Pack(outer)
    else:
        m.optional_any.Pack(g.cls(N3)())
    m.repeated_any.add().Pack(m.optional_timestamp)
    m.repeated_any.add()
    m.repeated_duration.add(seconds=1)
    m.repeated_timestamp.add(seconds=2, nanos=3_000_000)
    m.repeated_fieldmask.add(paths=["ab_cd"])
    m.repeated_struct.add()
    m.repeated_value.extend([_value(g, None), _value(g, 1.5), _value(g, [])])
    m.repeated_list_value.add()


def _value(g: Google, v: Any) -> Any:
    out = g.cls("google.protobuf.Value")()
    if v is None:
        out.null_value = 0
    elif isinstance(v, bool):
        out.bool_value = v
    elif isinstance(v, float):
        out.number_value = v
    elif isinstance(v, str):
        out.string_value = v
    elif isinstance(v, list):
        out.list_value.extend(v)
    else:
        out.struct_value.update(v)
    return out


def _google_messages(g: Google, seed: int, n: int) -> list[Any]:
    rng = random.Random(seed)
    out = []
    for name in [N3, N2, NE]:
        cls = g.cls(name)
        out.append(cls())
        for i in range(n):
            values = {**_scalars(rng), **_repeated(rng), **_maps(rng, many=i % 2 == 1)}
            if name == N3:
                values.update(_oneof(rng))
                values["optional_nested_enum"] = rng.choice([0, 1, 2, -1, 12345])
                values["repeated_nested_enum"] = [0, 2, 99]
                values["optional_aliased_enum"] = rng.choice([0, 1, 2])
            else:
                values["optional_nested_enum"] = rng.choice([0, 1, 2, -1])
            values["optional_nested_message"] = rng.choice(
                [{}, {"a": 1}, {"corecursive": {"optional_int32": 3}}]
            )
            values["recursive_message"] = {"recursive_message": {"optional_bool": True}}
            m = cls(**values)
            if name == N3:
                _set_wkts(m, rng, g, many=i % 2 == 1)
            out.append(m)
    return out


def _amber(conf: P.Namespace, gm: Any) -> Any:
    return conf.types[gm.DESCRIPTOR.full_name].FromString(gm.SerializeToString())


def _check_json(got: str, expected: str, exact: bool) -> None:
    if exact:
        assert got == expected
    else:
        norm = json.dumps(json.loads(got), sort_keys=True)
        assert norm == json.dumps(json.loads(expected), sort_keys=True)


def _same_message(a: Any, gm: Any) -> None:
    assert a.SerializeToString(deterministic=True) == gm.SerializeToString(deterministic=True)


# --- printing ------------------------------------------------------------------------------------


def test_to_json_equals_message_to_json(conf: P.Namespace, g: Google) -> None:
    msgs = _google_messages(g, 20261125, 12)
    exact_count = 0
    for k, gm in enumerate(msgs):
        a = _amber(conf, gm)
        _same_message(a, gm)
        # Every 12 + 1 messages: the empty one, then odd ones have maps of several entries.
        ordered = (k % 13) % 2 == 1 or k % 13 == 0
        for opts in OPTIONS:
            exact = ordered or opts.get("sort_keys", False)
            exact_count += exact
            got, expected = a.to_json(**opts), g.to_json(gm, **opts)
            assert (got == expected) if exact else True, (gm.DESCRIPTOR.full_name, opts)
            _check_json(got, expected, exact)
        for opts in DICT_OPTIONS:
            expected = g.to_dict(gm, **opts)
            got = a.to_dict(**opts)
            # NaN != NaN: compare the JSON texts of the dicts.
            assert json.dumps(got, sort_keys=True) == json.dumps(expected, sort_keys=True), opts
        _check_json(a.SerializeToJson(), g.to_json(gm, indent=None), ordered)
        assert json.dumps(a.SerializeToDict(), sort_keys=True) == json.dumps(
            g.to_dict(gm), sort_keys=True
        )
    assert exact_count > 150


def test_float_forms_match_protobuf(conf: P.Namespace, g: Google) -> None:
    rng = random.Random(7)
    gcls, acls = g.cls(N3), conf.types[N3]
    values = [rng.uniform(-1, 1) * 10 ** rng.randrange(-45, 39) for _ in range(3000)]
    values += [2.0**e for e in range(-149, 128)]
    for chunk in range(0, len(values), 300):
        part = values[chunk : chunk + 300]
        gm = gcls(repeated_float=part, repeated_double=part)
        a = acls.FromString(gm.SerializeToString())
        assert a.to_json(indent=None) == g.to_json(gm, indent=None)


def test_top_level_well_known_types(conf: P.Namespace, g: Google) -> None:
    cases: list[tuple[str, dict[str, Any]]] = [
        ("google.protobuf.Timestamp", {"seconds": 1, "nanos": 10}),
        ("google.protobuf.Duration", {"seconds": -1}),
        ("google.protobuf.FieldMask", {"paths": ["a_b", "c"]}),
        ("google.protobuf.Int64Value", {"value": 3}),
        ("google.protobuf.BytesValue", {}),
        ("google.protobuf.Struct", {}),
        ("google.protobuf.ListValue", {}),
        ("google.protobuf.Value", {}),
        ("google.protobuf.Any", {}),
    ]
    for name, kw in cases:
        gm = g.cls(name)(**kw)
        a = _amber(conf, gm)
        for opts in OPTIONS[:4]:
            assert a.to_json(**opts) == g.to_json(gm, **opts), name
        assert a.to_dict() == g.to_dict(gm)
        text = g.to_json(gm)
        _same_message(type(a).from_json(text), g.parse(text, g.cls(name)))


def test_empty_and_null_value() -> None:
    ns = P.load_text(
        'syntax = "proto3"; import "google/protobuf/empty.proto";'
        'import "google/protobuf/struct.proto";'
        "message E { google.protobuf.Empty e = 1; repeated google.protobuf.Empty es = 2;"
        " google.protobuf.NullValue n = 3; repeated google.protobuf.NullValue ns = 4;"
        " map<string, google.protobuf.Value> vs = 5; }",
        name="e.proto",
    )
    g = Google(ns)
    gm = g.cls("E")(es=[{}, {}], ns=[0, 0], vs={"a": _value(g, None)})
    gm.e.SetInParent()
    a = _amber(ns, gm)
    for opts in OPTIONS:
        assert a.to_json(**opts) == g.to_json(gm, **opts), opts
    text = '{"e": {}, "n": null, "ns": ["NULL_VALUE"], "vs": {"x": null, "y": [null]}}'
    _same_message(ns.E.from_json(text), g.parse(text, g.cls("E")))


def test_printer_errors_raise_encode_error(conf: P.Namespace, g: Google) -> None:
    a3 = conf.types[N3]
    bad: list[tuple[Any, str]] = [
        (a3(optional_timestamp={"seconds": 253402300800}), "out_of_range"),
        (a3(optional_timestamp={"seconds": -62135596801}), "out_of_range"),
        (a3(optional_timestamp={"nanos": -1}), "out_of_range"),
        (a3(optional_duration={"seconds": 1, "nanos": -1}), "out_of_range"),
        (a3(optional_duration={"seconds": 315576000001}), "out_of_range"),
        (a3(optional_field_mask={"paths": ["Upper"]}), "invalid_value"),
        (a3(optional_field_mask={"paths": ["trailing_"]}), "invalid_value"),
        (a3(optional_value={"number_value": math.nan}), "out_of_range"),
        (a3(optional_value={"number_value": -math.inf}), "out_of_range"),
        (a3(optional_any={"type_url": "x/no.Such", "value": b""}), "invalid_value"),
        (a3(optional_any={"type_url": "x/" + N3, "value": b"\xff"}), "invalid_value"),
    ]
    for a, kind in bad:
        gm = g.cls(N3).FromString(a.SerializeToString())
        with pytest.raises(Exception):  # noqa: B017 - Google raises several kinds
            g.to_json(gm)
        for write in (a.to_json, a.to_dict):
            with pytest.raises(amber.EncodeError) as e:
                write()
            assert e.value.kind == kind, (a, e.value)
            assert e.value.path is not None and e.value.path.startswith("$.optional_")


def test_printer_refuses_strings_that_are_not_utf8(conf: P.Namespace, g: Google) -> None:
    """A proto2 string is not checked on the wire (Google's neither), so it may hold any bytes;
    JSON is text: amber refuses to print them, with kind `invalid_value` and the path, in a field,
    a list and a map key (Google prints the bytes' repr instead)."""
    n2 = "protobuf_test_messages.proto2.TestAllTypesProto2"
    a2 = conf.types[n2]
    for bad in (b"\xff", b"a\xed\xa0\x80", b"\xc3", b"ok\xf8\x88\x80\x80\x80"):
        for field, data, path in (
            ("optional_string", b"\x72" + bytes([len(bad)]) + bad, "$.optional_string"),
            ("repeated_string", b"\xe2\x02" + bytes([len(bad)]) + bad, "$.repeated_string"),
            (
                "map_string_string",
                b"\xaa\x04" + bytes([len(bad) + 4, 10, len(bad)]) + bad + b"\x12\x00",
                "$.map_string_string",
            ),
        ):
            m = a2.FromString(data)
            assert m.SerializeToString() == data, field
            # Google's json_format writes the bytes' Python repr (`"b'\\xff'"`) as a string
            # field's value, and raises its own error for a map key.
            try:
                assert "b'" in g.to_json(g.cls(n2).FromString(data))
            except g.jf.SerializeToJsonError:
                assert field == "map_string_string"
            with pytest.raises(amber.EncodeError) as e:
                m.to_json()
            assert e.value.kind == "invalid_value", (field, bad, e.value)
            assert e.value.path is not None and e.value.path.startswith(path), e.value.path


# --- parsing -------------------------------------------------------------------------------------


def test_from_json_equals_parse(conf: P.Namespace, g: Google) -> None:
    for gm in _google_messages(g, 99, 8):
        acls, gcls = conf.types[gm.DESCRIPTOR.full_name], type(gm)
        for opts in [{}, {"preserving_proto_field_name": True, "use_integers_for_enums": True}]:
            text = g.to_json(gm, **opts)
            try:
                expected = g.parse(text, gcls)
            except g.jf.ParseError:
                # Google refuses some of its own output (a float printed as 3.4028235e+38 is
                # above the float range it checks): amber refuses it too.
                with pytest.raises(P.DecodeError):
                    acls.from_json(text)
                continue
            _same_message(acls.from_json(text), expected)
            _same_message(acls.from_json(text.encode()), expected)
            d = g.to_dict(gm, **opts)
            _same_message(acls.from_dict(d), g.parse_dict(d, gcls))
            m = acls(optional_int32=99)
            m.ParseFromJson(text)
            _same_message(m, expected)
            m.ParseFromDict(d)
            _same_message(m, expected)


# Inputs Google accepts in other forms than it writes.
ACCEPTED = [
    '{"optionalInt32": "12", "optionalInt64": 12, "optionalUint32": 1e3, "optionalUint64": "1e3"}',
    '{"optionalSint32": -0, "optionalFixed64": "18446744073709551615", "optionalSfixed32": 5.0}',
    '{"optional_int32": 1, "optional_nested_message": {"a": 2}, "optionalNestedEnum": 1}',
    '{"optionalFloat": "1.5", "optionalDouble": "-Infinity", "repeatedFloat": ["NaN", 1, -0.0]}',
    '{"optionalDouble": 1.7976931348623157e308, "optionalFloat": -3.4028234663852886e38}',
    '{"optionalBytes": "-_8", "repeatedBytes": ["AA", "AAA", "+/8=", ""]}',
    '{"optionalNestedEnum": "2", "optionalForeignEnum": 77, "repeatedNestedEnum": ["FOO", -5]}',
    '{"mapBoolBool": {"true": false, "false": true}, "mapInt64Int64": {"-1": "1e2"}}',
    '{"mapStringNestedMessage": {"": {}}, "mapInt32Float": {"0": "Infinity"}}',
    '{"optionalTimestamp": "1972-01-01T10:00:20.021-05:30", "optionalDuration": "-0.000001s"}',
    '{"optionalTimestamp": "2000-02-29T23:59:59.123456789+00:00", "optionalDuration": "1s"}',
    '{"optionalTimestamp": "2020-1-2T3:04:05Z", "repeatedTimestamp": ["0001-01-01T00:00:00.Z"]}',
    '{"optionalFieldMask": "", "repeatedFieldmask": ["fooBar.baz,q", "a"]}',
    '{"optionalStruct": {}, "optionalValue": {"a": [1, "2", true, null, {}, []]}}',
    '{"optionalInt32": null, "optionalNestedMessage": null, "repeatedInt32": null, '
    '"mapInt32Int32": null, "optionalValue": null, "optionalNullValue": null}',
    '{"oneofUint32": null, "oneofString": "x"}',
    '{"oneofNullValue": null}',
    '{"optionalAny": {}, "repeatedAny": [{"@type": "a/google.protobuf.Value", "value": 1}]}',
    '{"optionalAny": {"@type": "type.googleapis.com/google.protobuf.Any", "value": '
    '{"@type": "b/protobuf_test_messages.proto3.TestAllTypesProto3", "optionalInt32": 4}}}',
    '{"optionalAny": {"optionalString": "é", "@type": "x/protobuf_test_messages.proto3'
    '.TestAllTypesProto3", "optionalNestedMessage": {"a": 1}}}',
    '{"optionalBoolWrapper": false, "optionalInt64Wrapper": "-3", "optionalStringWrapper": ""}',
    '{"repeatedValue": [null, 1], "repeatedListValue": [[1, [2]], []]}',
    ' \t\r\n{ "optionalString" : "\\u00e9\\ud83d\\ude00\\/\\b\\f\\n\\r\\t\\"\\\\" } \n',
    '{"optionalString": "\\u0000", "repeatedString": ["\\u2028"]}',
    # Digit separators in quoted numbers, as Python's int() and float() read them.
    '{"optionalInt64": "1_000", "optionalUint32": "+4_2", "optionalDouble": "1_0.2_5e0_1"}',
    '{"mapInt32Int32": {"1_0": 1}, "optionalNestedEnum": "1_0", "repeatedInt32": ["-2_0e1"]}',
]


def test_accepted_variants_parse_as_google(conf: P.Namespace, g: Google) -> None:
    acls, gcls = conf.types[N3], g.cls(N3)
    for text in ACCEPTED:
        expected = g.parse(text, gcls)
        got = acls.from_json(text)
        _same_message(got, expected)
        assert got.to_json(sort_keys=True) == g.to_json(expected, sort_keys=True), text
    # Unknown fields and enum names, when asked to ignore them.
    text = (
        '{"nope": {"a": [1, {"b": null}]}, "optionalNestedEnum": "NOPE", "optionalInt32": 1,'
        ' "repeatedNestedEnum": ["NOPE", "BAZ"], "mapStringNestedEnum": {"a": "NOPE", "b": "FOO"}}'
    )
    expected = g.parse(text, gcls, ignore_unknown_fields=True)
    _same_message(acls.from_json(text, ignore_unknown_fields=True), expected)


# Inputs Google rejects (each is checked against Google too).
REJECTED = [
    "",
    " ",
    "null",
    '"x"',
    "{",
    "{} {}",
    '{"optionalInt32": 1,}',
    '{"optionalInt32": 1 "optionalInt64": 2}',
    "{'optionalInt32': 1}",
    '{"optionalInt32": 1} // comment',
    '{"optionalInt32": 01}',
    '{"optionalInt32": +1}',
    '{"optionalInt32": .5}',
    '{"optionalInt32": 1.}',
    '{"optionalInt32": 0x10}',
    '{"optionalDouble": NaN}',
    '{"optionalDouble": Infinity}',
    '{"optionalDouble": -Infinity}',
    '{"optionalDouble": 1e999}',
    '{"optionalDouble": "nan"}',
    '{"optionalDouble": "one"}',
    '{"optionalFloat": 3.5e38}',
    '{"optionalFloat": -1e39}',
    '{"optionalInt32": 1.5}',
    '{"optionalInt32": "1.5"}',
    '{"optionalInt32": "1 "}',
    '{"optionalInt32": 2147483648}',
    '{"optionalInt32": -2147483649}',
    '{"optionalUint32": -1}',
    '{"optionalInt64": "9223372036854775808"}',
    '{"optionalUint64": 18446744073709551616}',
    '{"optionalInt64": 1e400}',
    '{"optionalInt32": true}',
    '{"optionalInt32": [1]}',
    '{"optionalInt32": {}}',
    '{"optionalBool": "true"}',
    '{"optionalBool": 1}',
    '{"optionalString": 1}',
    '{"optionalString": "\\ud800"}',
    '{"optionalString": "\\udc00"}',
    '{"optionalString": "\\ud800\\u0041"}',
    '{"optionalString": "\\x41"}',
    '{"optionalString": "\\u12"}',
    '{"optionalString": "a\tb"}',
    '{"optionalString": "a\nb"}',
    '{"optionalString": "abc}',
    '{"optionalBytes": "a"}',
    '{"optionalBytes": 5}',
    '{"optionalNestedEnum": "NOPE"}',
    '{"optionalNestedEnum": 2147483648}',
    '{"optionalNestedMessage": 5}',
    '{"optionalNestedMessage": {"a": "x"}}',
    '{"optionalNestedMessage": {"nope": 1}}',
    '{"nope": 1}',
    '{"optionalInt32": 1, "optionalInt32": 2}',
    '{"mapStringString": {"a": "1", "a": "2"}}',
    '{"oneofUint32": 1, "oneofString": "x"}',
    '{"oneofUint32": 1, "oneof_string": "x"}',
    '{"repeatedInt32": 1}',
    '{"repeatedInt32": [1, null]}',
    '{"repeatedNestedMessage": [null]}',
    '{"repeatedInt32": [1, "x"]}',
    '{"mapInt32Int32": []}',
    '{"mapInt32Int32": {"x": 1}}',
    '{"mapInt32Int32": {"1.5": 1}}',
    '{"mapBoolBool": {"yes": true}}',
    '{"mapInt32Int32": {"1": null}}',
    '{"mapStringNestedMessage": {"a": null}}',
    '{"optionalTimestamp": "1970-01-01T00:00:00"}',
    '{"optionalTimestamp": "1970-01-01t00:00:00Z"}',
    '{"optionalTimestamp": "1970-01-01T00:00:00z"}',
    '{"optionalTimestamp": "10000-01-01T00:00:00Z"}',
    '{"optionalTimestamp": "1970-02-30T00:00:00Z"}',
    '{"optionalTimestamp": "1970-01-01T00:00:00.1234567890Z"}',
    '{"optionalTimestamp": "1970-01-01T00:00:00+0100"}',
    '{"optionalTimestamp": "0001-01-01T00:00:00+01:00"}',
    '{"optionalTimestamp": "1970-01-01T00:00:00Zjunk"}',
    '{"optionalTimestamp": 0}',
    '{"optionalDuration": "1"}',
    '{"optionalDuration": "s"}',
    '{"optionalDuration": "315576000001s"}',
    '{"optionalDuration": "1.5ms"}',
    '{"optionalDuration": 1}',
    '{"optionalFieldMask": "foo_bar"}',
    '{"optionalFieldMask": 1}',
    '{"optionalStruct": []}',
    '{"optionalStruct": {"a": 1, "a": 2}}',
    '{"repeatedListValue": [{}]}',
    '{"optionalAny": {"optionalInt32": 1}}',
    '{"optionalAny": {"@type": "x/no.Such"}}',
    '{"optionalAny": {"@type": "x/google.protobuf.Duration"}}',
    '{"optionalAny": {"@type": "x/google.protobuf.Duration", "value": "1"}}',
    '{"optionalAny": {"@type": "x/protobuf_test_messages.proto3.TestAllTypesProto3", "x": 1}}',
    '{"optionalInt32Wrapper": "x"}',
    '{"optionalInt32Wrapper": {"value": 1}}',
    '{"repeatedInt32Wrapper": [null]}',
    '{"optionalInt64": "_1"}',
    '{"optionalInt64": "1_"}',
    '{"optionalInt64": "1__0"}',
    '{"optionalDouble": "1_.5"}',
    '{"optionalDouble": "1e_5"}',
    '{"mapInt32Int32": {"_1": 1}}',
    '{"optionalInt32": 1_0}',
]


def test_rejected_inputs_raise_decode_error(conf: P.Namespace, g: Google) -> None:
    acls, gcls = conf.types[N3], g.cls(N3)
    for text in REJECTED:
        with pytest.raises(Exception):  # noqa: B017 - json_format raises ParseError and others
            g.parse(text, gcls)
        with pytest.raises(P.DecodeError) as e:
            acls.from_json(text)
        assert isinstance(e.value.offset, int) and 0 <= e.value.offset <= len(text.encode()), text
        assert e.value.path is not None and e.value.path.startswith("$"), text
    # The error says where.
    with pytest.raises(P.DecodeError) as e:
        acls.from_json('{\n  "repeatedNestedMessage": [{}, {"a": "x"}]\n}')
    assert (e.value.offset, e.value.path) == (40, "$.repeated_nested_message[1].a")
    assert "line 2 column 39" in str(e.value)


# Inputs json_format lets through that amber refuses on purpose (see amber_core::proto::json).
STRICTER = [
    "[]",
    '{"optionalValue": {"a": NaN}}',
    '{"optionalValue": Infinity}',
    '{"optionalNestedMessage": ""}',
    '{"optionalNestedMessage": []}',
    '{"optionalFloat": true}',
    '{"optionalNestedEnum": 1.5}',
    '{"optionalNestedEnum": true}',
    '{"optionalBytes": "AA!A"}',
    '{"optionalDuration": "1.0000000001s"}',
]


def test_stricter_than_json_format(conf: P.Namespace, g: Google) -> None:
    for text in STRICTER:
        g.parse(text, g.cls(N3))
        with pytest.raises(P.DecodeError):
            conf.types[N3].from_json(text)


def test_from_dict_reads_python_values(conf: P.Namespace, g: Google) -> None:
    acls, gcls = conf.types[N3], g.cls(N3)
    d: dict[str, Any] = {
        "mapInt32Int32": {1: 2, "-3": 4},
        "repeatedInt32": (1, 2.0, "3"),
        "optionalDouble": 10**30,
        "optionalValue": {"a": (None, 1, [True])},
        "optionalAny": {"@type": "x/" + N3, "optionalInt32": 7},
    }
    _same_message(acls.from_dict(d), g.parse_dict(d, gcls))
    with pytest.raises(P.DecodeError) as e:
        acls.from_dict({"repeatedNestedMessage": [{}, {"a": "x"}]})
    assert (e.value.offset, e.value.path) == (None, "$.repeated_nested_message[1].a")
    loop: dict[str, Any] = {}
    loop["recursiveMessage"] = loop
    with pytest.raises(P.DecodeError, match="deeper"):
        acls.from_dict(loop)
    items: list[Any] = []
    items.append(items)
    with pytest.raises(P.DecodeError, match="deeper"):
        acls.from_dict({"optionalValue": items})


def test_from_dict_refuses_what_json_cannot_hold(conf: P.Namespace) -> None:
    with pytest.raises(P.DecodeError):
        conf.types[N3].from_dict({"optionalBytes": b"x"})
    with pytest.raises(P.DecodeError):
        conf.types[N3].from_dict({"optionalDouble": math.nan})


# --- hostile input -------------------------------------------------------------------------------


def test_hostile_input_never_crashes(conf: P.Namespace, g: Google) -> None:
    acls = conf.types[N3]
    deep = '{"recursiveMessage": ' * 5000 + "{}" + "}" * 5000
    for text in [
        deep,
        '{"optionalValue": ' + "[" * 100_000 + "]" * 100_000 + "}",
        '{"optionalStruct": {"a": ' * 3000 + "1" + "}" * 3001,
        '{"x": ' + "[" * 100_000 + "]" * 100_000 + "}",
        '{"optionalInt64": ' + "9" * 1_000_000 + "}",
        '{"optionalDouble": 1' + "0" * 1_000_000 + "}",
        '{"optionalInt32": "1e' + "9" * 10_000 + '"}',
        '{"optionalString": "' + "\\ud83d" * 1000 + '"}',
        '{"optionalBytes": "' + "A" * 1_000_001 + '"}',
    ]:
        with pytest.raises(P.DecodeError):
            acls.from_json(text, ignore_unknown_fields=True)
    # Nesting up to the limit is fine (Google's limit: 100 messages).
    ok = '{"recursiveMessage": ' * 98 + "{}" + "}" * 98
    assert acls.from_json(ok).to_json(indent=None) == ok
    g.parse(ok, g.cls(N3))
    for bad in [b"\xff", b'{"optionalString": "\xc3"}', b'{"optionalString": "\xed\xa0\x80"}']:
        with pytest.raises(P.DecodeError):
            acls.from_json(bad)
    with pytest.raises(P.DecodeError):
        acls.from_json("\ud800")
    # Random damage to valid texts: a DecodeError or a message, never anything else.
    rng = random.Random(5)
    texts = [g.to_json(m, indent=None) for m in _google_messages(g, 3, 2)[:3]]
    for _ in range(3000):
        t = bytearray(rng.choice(texts).encode())
        for _ in range(rng.randrange(1, 4)):
            i = rng.randrange(len(t) + 1)
            op = rng.randrange(3)
            if op == 0 and i < len(t):
                t[i] = rng.randrange(256)
            elif op == 1 and i < len(t):
                del t[i]
            else:
                t.insert(i, rng.choice(b'{}[],:"\\0e-.nt'))
        try:
            m = acls.from_json(bytes(t), ignore_unknown_fields=rng.random() < 0.5)
        except P.DecodeError:
            continue
        with contextlib.suppress(amber.EncodeError):
            m.to_json()
