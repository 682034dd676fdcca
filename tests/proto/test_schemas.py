""".proto files amber.proto must refuse as protoc 35.1 refuses them (same words, same
line:col) and files it must accept as protoc does. Each expected message below is protoc's
output for the same text (`python -m grpc_tools.protoc`, libprotoc 35.1)."""

from __future__ import annotations

import math
import os
import struct
import time
from pathlib import Path

import pytest

import amber.proto as P

P2 = 'syntax = "proto2";\npackage t;\n'
P3 = 'syntax = "proto3";\npackage t;\n'
E23 = 'edition = "2023";\npackage t;\n'
E24 = 'edition = "2024";\npackage t;\n'
CLOSED = "enum E {\n  option features.enum_type = CLOSED;\n  A = 1;\n}\n"
RANGE = "message M {\n  extensions 100 to 199 [%s];\n}\n"

# (label, text, line, col, protoc's message)
INVALID = [
    (
        "proto2 custom json_name clash",
        P2
        + 'message M {\n  optional int32 a = 1 [json_name = "x"];\n  optional int32 b = 2 [json_name = "x"];\n}\n',
        5,
        18,
        'The custom JSON name of field "b" ("x") conflicts with the custom JSON name of field "a".',
    ),
    (
        "proto3 default json name clash",
        P3 + "message M {\n  int32 foo_bar = 1;\n  int32 fooBar = 2;\n}\n",
        5,
        9,
        'The default JSON name of field "fooBar" ("fooBar") conflicts with the default JSON name of field "foo_bar".',
    ),
    (
        "json_name like an extension",
        P3 + 'message M {\n  int32 a = 1 [json_name = "[x]"];\n}\n',
        4,
        9,
        "The custom JSON name of field \"a\" (\"[x]\") is invalid: JSON names may not start with '[' and end with ']'.",
    ),
    ("empty oneof", P3 + "message M {\n  oneof o {\n  }\n}\n", 5, 3, "Expected type name."),
    (
        "implicit presence, closed enum",
        E23 + CLOSED + "message M {\n  E e = 1 [features.field_presence = IMPLICIT];\n}\n",
        8,
        5,
        "Implicit presence enum fields must always be open.",
    ),
    (
        "implicit presence file-wide, closed enum",
        E23
        + "option features.field_presence = IMPLICIT;\n"
        + CLOSED
        + "message M {\n  E e = 1;\n}\n",
        9,
        5,
        "Implicit presence enum fields must always be open.",
    ),
    (
        "file-wide LEGACY_REQUIRED",
        E23 + "option features.field_presence = LEGACY_REQUIRED;\nmessage M {}\n",
        1,
        1,
        "Required presence can't be specified by default.",
    ),
    (
        "ctype in 2024",
        E24 + "message M {\n  string a = 1 [ctype = CORD];\n}\n",
        4,
        3,
        "ctype option is not allowed under edition 2024 and beyond. Use the feature string_type = VIEW|CORD|STRING|... instead.",
    ),
    (
        "java_multiple_files in 2024",
        E24 + "option java_multiple_files = true;\nmessage M {}\n",
        2,
        1,
        "google.protobuf.FileOptions.java_multiple_files has been removed in edition 2024: This behavior is enabled by default in editions 2024 and above. To disable it, you can set `features.(pb.java).nest_in_file_class = YES` on individual messages, enums, or services.",
    ),
    (
        "declared type differs",
        P2
        + RANGE % 'declaration = {number: 100, full_name: ".t.x", type: "int32"}'
        + "extend M {\n  optional string x = 100;\n}\n",
        6,
        8,
        '"t.M" extension field 100 is expected to be type "int32", not "string".',
    ),
    (
        "declared name differs",
        P2
        + RANGE % 'declaration = {number: 100, full_name: ".t.x", type: "int32"}'
        + "extend M {\n  optional int32 y = 100;\n}\n",
        6,
        8,
        '"t.M" extension field 100 is expected to have field name ".t.x", not ".t.y".',
    ),
    (
        "declared repeated",
        P2
        + RANGE % 'declaration = {number: 100, full_name: ".t.x", type: "int32", repeated: true}'
        + "extend M {\n  optional int32 x = 100;\n}\n",
        6,
        8,
        '"t.M" extension field 100 is expected to be repeated.',
    ),
    (
        "declared reserved",
        P2
        + RANGE % "declaration = {number: 100, reserved: true}"
        + "extend M {\n  optional int32 x = 100;\n}\n",
        6,
        8,
        "Cannot use number 100 for extension field t.x, as it is reserved in the extension declarations for message t.M.",
    ),
    (
        "verification = DECLARATION, no declaration",
        P2 + RANGE % "verification = DECLARATION" + "extend M {\n  optional int32 y = 100;\n}\n",
        6,
        8,
        "Missing extension declaration for field t.y with number 100 in extendee message t.M. An extension range must declare for all extension fields if its verification state is DECLARATION or there's any declaration in the range already. Otherwise, consider splitting up the range.",
    ),
    ("name too long", P3 + "message " + "A" * 100000 + " {}\n", 3, 9, "Name too long."),
    (
        "map with an enum key",
        P3 + "enum E { Z = 0; }\nmessage M {\n  map<E, int32> m = 1;\n}\n",
        5,
        3,
        "Key in map fields cannot be enum types.",
    ),
    (
        "repeated map",
        P2 + "message M {\n  repeated map<int32, int32> m = 1;\n}\n",
        4,
        15,
        "Field labels (required/optional/repeated) are not allowed on map fields.",
    ),
    (
        "map in a oneof",
        P3 + "message M {\n  oneof o {\n    map<int32, int32> m = 1;\n  }\n}\n",
        5,
        8,
        "Map fields are not allowed in oneofs.",
    ),
    (
        "unknown feature",
        E23 + "option features.nope = 1;\nmessage M {}\n",
        3,
        8,
        'Option "features.nope" unknown. Ensure that your proto definition file imports the proto which defines the option (i.e. via import option after edition 2024).',
    ),
    (
        "features in proto3",
        P3 + "option features.field_presence = IMPLICIT;\n",
        1,
        1,
        "Features are only valid under editions.",
    ),
    (
        "unneeded allow_alias (at the token after the enum)",
        P3 + "enum E {\n  option allow_alias = true;\n  A = 0;\n  B = 1;\n}\n",
        8,
        1,
        "\"E\" declares support for enum aliases but no enum values share field numbers. Please remove the unnecessary 'option allow_alias = true;' declaration.",
    ),
    (
        "unneeded allow_alias, nested",
        P3 + "message M { enum E {\n  option allow_alias = true;\n  A = 0;\n} }\nmessage N {}\n",
        6,
        3,
        "\"E\" declares support for enum aliases but no enum values share field numbers. Please remove the unnecessary 'option allow_alias = true;' declaration.",
    ),
    (
        "allow_alias = false",
        P3 + "enum E {\n  option allow_alias = false;\n  A = 0;\n}\nmessage N {}\n",
        7,
        1,
        "\"E\" declares 'option allow_alias = false;' which has no effect. Please remove the declaration.",
    ),
    (
        "hex past 64 bits as a double default",
        P2 + "message M {\n  optional double a = 1 [default = 0x1ffffffffffffffffff];\n}\n",
        4,
        36,
        "Integer out of range.",
    ),
    (
        "decimal past 64 bits as an int64 default",
        P2 + "message M {\n  optional int64 a = 1 [default = 99999999999999999999];\n}\n",
        4,
        35,
        "Integer out of range.",
    ),
    (
        "number glued to a word",
        P2 + "message M { optional double a = 1 [default = 1f]; }\n",
        3,
        47,
        "Need space between number and identifier.",
    ),
    (
        "08 is not octal",
        P2 + "message M { optional int32 a = 08; }\n",
        3,
        33,
        "Numbers starting with leading zero must be in octal.",
    ),
]


@pytest.mark.parametrize(
    ("label", "src", "line", "col", "message"), INVALID, ids=[c[0] for c in INVALID]
)
def test_refused_as_protoc_refuses(label: str, src: str, line: int, col: int, message: str) -> None:
    with pytest.raises(P.SchemaError) as e:
        P.load_text(src, name="s.proto")
    assert (e.value.line, e.value.col) == (line, col), str(e.value)
    assert str(e.value) == f"s.proto:{line}:{col}: {message}"


def test_weak_import_refused_in_2024(tmp_path: Path) -> None:
    (tmp_path / "b.proto").write_text(E24 + "message N {}\n")
    (tmp_path / "a.proto").write_text(E24 + 'import weak "b.proto";\nmessage M {}\n')
    with pytest.raises(P.SchemaError) as e:
        P.load(tmp_path / "a.proto", include=[tmp_path])
    assert str(e.value) == (
        "a.proto:3:8: weak import is not supported in edition 2024 and above. "
        "Consider using option import instead."
    )


# Files protoc compiles; each must compile here too.
VALID = {
    "cpp_features": E23 + 'import "google/protobuf/cpp_features.proto";\n'
    "message M {\n  string s = 1 [features.(pb.cpp).string_type = VIEW];\n}\n",
    "java_features": E23 + 'import "google/protobuf/java_features.proto";\n'
    "option features.(pb.java).utf8_validation = VERIFY;\nmessage M {\n  string s = 1;\n}\n",
    "go_features": E23 + 'import "google/protobuf/go_features.proto";\nmessage M {}\n',
    "plugin": P3 + 'import "google/protobuf/compiler/plugin.proto";\n'
    "message M { google.protobuf.compiler.CodeGeneratorRequest req = 1; }\n",
    "declared extension": P2
    + RANGE % 'declaration = {number: 100, full_name: ".t.x", type: "int32"}'
    + "extend M {\n  optional int32 x = 100;\n}\n",
    "declared message extension": P2
    + RANGE % 'declaration = {number: 100, full_name: ".t.x", type: ".t.M"}'
    + "extend M {\n  optional M x = 100;\n}\n",
    "proto2 default json name clash": P2
    + "message M {\n  optional int32 foo_bar = 1;\n  optional int32 fooBar = 2;\n}\n",
    "closed enum, explicit presence": E23 + CLOSED + "message M {\n  E e = 1;\n}\n",
    "double default past 64 bits": P2
    + "message M {\n  optional double a = 1 [default = 99999999999999999999999999999];\n"
    "  optional float b = 2 [default = -18446744073709551616];\n}\n",
    "ctype in 2023": E23 + "message M {\n  string a = 1 [ctype = CORD];\n}\n",
    "string defaults that are not UTF-8": P2 + "message M {\n"
    '  optional string a = 1 [default = "\\xff"];\n'
    '  optional string b = 2 [default = "\\ud800x"];\n'
    '  optional string c = 3 [default = "\\udc00\\ud83d\\ude00\\ud83d"];\n'
    '  optional string d = 4 [default = "\\303\\251\\U0001F600"];\n}\n',
}


@pytest.mark.parametrize("label", list(VALID))
def test_accepted_as_protoc_accepts(label: str, tmp_path: Path) -> None:
    pb2 = pytest.importorskip("google.protobuf.descriptor_pb2")
    ns = P.load_text(VALID[label], name="s.proto")
    ours = pb2.FileDescriptorSet.FromString(ns.descriptor_set())
    assert ours.file[-1].name == "s.proto"
    # With protoc at hand (grpcio-tools), the descriptor set is protoc's, byte for byte.
    protoc = _protoc(tmp_path, VALID[label])
    if protoc is not None:
        assert ns.descriptor_set() == protoc


def test_string_defaults_that_are_not_utf8() -> None:
    """A string default that is not UTF-8 reads as a parsed proto2 string does, its bad bytes
    as lone surrogates (Google's runtime gives the bytes); it holds the same bytes."""
    pb2 = pytest.importorskip("google.protobuf.descriptor_pb2")
    from google.protobuf import descriptor_pool, message_factory

    ns = P.load_text(VALID["string defaults that are not UTF-8"], name="s.proto")
    pool = descriptor_pool.DescriptorPool()
    for f in pb2.FileDescriptorSet.FromString(ns.descriptor_set()).file:
        pool.Add(f)
    google = message_factory.GetMessageClass(pool.FindMessageTypeByName("t.M"))()
    ours = ns.t.M()
    expected = {
        "a": b"\xff",
        "b": b"\xed\xa0\x80x",
        "c": b"\xed\xb0\x80\xf0\x9f\x98\x80\xed\xa0\xbd",
        "d": "\u00e9\U0001f600",
    }
    for name, value in expected.items():
        assert getattr(google, name) == value, name
        raw = value if isinstance(value, bytes) else value.encode()
        got = getattr(ours, name)
        assert (type(got), got) == (str, raw.decode("utf-8", "surrogateescape")), name
        assert ns.t.M.DESCRIPTOR.fields_by_name[name].default_value == got, name
        # Set to its default, the field writes the default's bytes.
        data = ns.t.M(**{name: got}).SerializeToString()
        assert data.endswith(bytes([len(raw)]) + raw), name
        back = ns.t.M.FromString(data)
        assert back.HasField(name) and getattr(back, name) == got, name
    # Values set are checked as before: bytes that are not UTF-8 are refused.
    with pytest.raises(ValueError, match="UTF-8"):
        ns.t.M(a=b"\xff")
    assert ns.t.M.FromString(ns.t.M(a="x").SerializeToString()).a == "x"


def _protoc(tmp_path: Path, src: str) -> bytes | None:
    try:
        import grpc_tools  # type: ignore[import-untyped, import-not-found, unused-ignore]
        from grpc_tools import protoc  # type: ignore[import-untyped, import-not-found, unused-ignore]
    except ImportError:
        return None
    (tmp_path / "s.proto").write_text(src)
    inc = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
    out = tmp_path / "out.pb"
    args = [
        "protoc",
        f"-I{tmp_path}",
        f"-I{inc}",
        "--include_imports",
        f"--descriptor_set_out={out}",
        "s.proto",
    ]
    assert protoc.main(args) == 0
    return out.read_bytes()


def test_negative_nan_options_are_canonical() -> None:
    pb2 = pytest.importorskip("google.protobuf.descriptor_pb2")
    unknown_fields = pytest.importorskip("google.protobuf.unknown_fields")
    src = (
        P2
        + 'import "google/protobuf/descriptor.proto";\n'
        + "extend google.protobuf.MessageOptions { optional float f = 50001; optional double d = 50002; }\n"
        + "message A { option (f) = -nan; option (d) = -nan; }\n"
        + "message B { option (f) = nan; option (d) = nan; }\n"
        + "message C { option (f) = -inf; option (d) = -1.5; }\n"
    )
    ns = P.load_text(src, name="s.proto")
    fds = pb2.FileDescriptorSet.FromString(ns.descriptor_set())
    msgs = next(f for f in fds.file if f.name == "s.proto").message_type
    bits = [
        {u.field_number: u.data for u in unknown_fields.UnknownFieldSet(m.options)} for m in msgs
    ]
    # protoc writes the canonical quiet NaN for nan and -nan alike; other negatives keep their sign.
    assert bits[0] == bits[1] == {50001: 0x7FC00000, 50002: 0x7FF8000000000000}
    assert bits[2][50001] == struct.unpack("<I", struct.pack("<f", -math.inf))[0]
    assert bits[2][50002] == struct.unpack("<Q", struct.pack("<d", -1.5))[0]


def test_schema_error_without_position_has_none(tmp_path: Path) -> None:
    with pytest.raises(P.SchemaError) as e:
        P.load(tmp_path / "nothere.proto")
    assert e.value.line is None and e.value.col is None
    # A file named by its import path says where it was looked for.
    with pytest.raises(P.SchemaError) as e:
        P.load("nothere.proto", include=[tmp_path / "inc", tmp_path / "more"])
    assert str(e.value) == (
        f'nothere.proto: File not found. Searched: "{tmp_path / "inc"}", "{tmp_path / "more"}", '
        "then the bundled google/protobuf files."
    )
    assert e.value.line is None and e.value.col is None
    with pytest.raises(P.SchemaError) as e:
        P.load_text('syntax = "proto3";\nmessage A { B b = 1; }\n', name="x.proto")
    assert (e.value.line, e.value.col) == (2, 13)


def _chain(d: Path, n: int) -> float:
    for i in range(n):
        nxt = f'import "f{i + 1}.proto";\n' if i + 1 < n else ""
        (d / f"f{i}.proto").write_text(f'syntax = "proto3";\npackage c;\n{nxt}message M{i} {{}}\n')
    # CPU time of this process (the load runs on this thread): other processes on a busy
    # machine slow the clock, not this count.
    t = time.process_time()
    P.load(d / "f0.proto", include=[d])
    return time.process_time() - t


def test_import_chain_is_linear(tmp_path: Path) -> None:
    os.mkdir(tmp_path / "a")
    os.mkdir(tmp_path / "b")
    small = min(_chain(tmp_path / "a", 1000) for _ in range(3))
    large = min(_chain(tmp_path / "b", 4000) for _ in range(3))
    # Linear: 4x the files, about 4x the time (quadratic would be 16x).
    assert large / small < 8, (small, large)


def test_decode_suggests_full_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from amber import cli

    (tmp_path / "shop.proto").write_text(
        'syntax = "proto3";\npackage shop;\nmessage Order {}\nmessage Cart { message Order {} }\n'
    )
    assert cli.main(["proto", "decode", str(tmp_path / "shop.proto"), "Order"]) == 2
    err = capsys.readouterr().err
    assert "no message type 'Order' (did you mean shop.Cart.Order, shop.Order?)" in err
    assert cli.main(["proto", "decode", str(tmp_path / "shop.proto"), "Nope"]) == 2
    assert capsys.readouterr().err.strip().endswith("no message type 'Nope'")
