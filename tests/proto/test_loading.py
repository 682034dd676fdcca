"""Loading .proto files: `amber.proto.load`, its errors, and the namespaces a load answers for."""

from __future__ import annotations

from pathlib import Path

import pytest

import amber
import amber.proto as P


def test_load_files_and_errors(tmp_path: Path) -> None:
    (tmp_path / "dep.proto").write_text(
        'syntax = "proto3"; package dep; message D { int32 x = 1; }'
    )
    (tmp_path / "top.proto").write_text(
        'syntax = "proto3";\nimport "dep.proto";\nimport "google/protobuf/timestamp.proto";\n'
        "message T { dep.D d = 1; google.protobuf.Timestamp at = 2; }\n"
    )
    ns = P.load(tmp_path / "top.proto")
    t = ns.T(d={"x": 4})
    t.at.seconds = 10
    assert ns.T.FromString(t.SerializeToString()) == t
    assert ns.dep.D(x=1).x == 1 and ns.google.protobuf.Timestamp(seconds=1).seconds == 1
    (tmp_path / "bad.proto").write_text('syntax = "proto3";\nmessage A {\n  B b = 1;\n}\n')
    with pytest.raises(P.SchemaError) as e:
        P.load(tmp_path / "bad.proto")
    assert str(e.value).startswith("bad.proto:3:3:") and e.value.line == 3 and e.value.col == 3
    assert isinstance(e.value, amber.AmberError) and isinstance(e.value, ValueError)
    # A file named to load that is not there says so, as protoc does, wherever it was looked for.
    for missing in ("does/not/exist.proto", tmp_path / "nope.proto", "a/../b.proto"):
        with pytest.raises(P.SchemaError, match=r": File not found\."):
            P.load(missing)
    (tmp_path / "imp.proto").write_text('syntax = "proto3";\nimport "gone.proto";\n')
    with pytest.raises(P.SchemaError, match=r'imp\.proto:2:1: Import "gone\.proto" was not found'):
        P.load(tmp_path / "imp.proto")


def test_package_namespaces_answer_for_the_whole_load() -> None:
    ns = P.load_text(
        'syntax = "proto3"; package a.b; message M { int32 x = 1; }', name="pkg_ns.proto"
    )
    for space in (ns, ns.a, ns.a.b):
        assert space.descriptor_set() == ns.descriptor_set()
        assert space.types == {"a.b.M": ns.a.b.M}
        assert space.types_files() == ["pkg_ns.proto"]
    assert repr(ns.a) == "<amber.proto namespace: b>"
