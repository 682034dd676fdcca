"""amber.proto's text format, printed and parsed, against Google's `text_format`."""

from __future__ import annotations

import pytest

import amber.proto as P
from tests.proto.oracle import google_pool, upb_vectors


def test_text_format_matches_google(conf: P.Namespace) -> None:
    pytest.importorskip("google.protobuf")
    from google.protobuf import message_factory, text_format

    pool = google_pool(conf)
    checked = 0
    for _kind, full, data, expected in upb_vectors():
        if expected == "ERR":
            continue
        g = message_factory.GetMessageClass(pool.FindMessageTypeByName(full)).FromString(data)
        a = conf.types[full].FromString(data)
        for opts in [
            {},
            {"as_one_line": True},
            {"as_utf8": False},
            {"print_unknown_fields": True},
            {"print_unknown_fields": True, "as_one_line": True},
        ]:
            assert a.to_text(**opts) == text_format.MessageToString(
                g, descriptor_pool=pool, **opts
            ), (full, opts)
            checked += 1
    assert checked > 800
    assert str(a) == repr(a) == a.to_text()


def test_text_format_parses_like_google(conf: P.Namespace) -> None:
    pytest.importorskip("google.protobuf")
    from google.protobuf import message_factory, text_format

    pool = google_pool(conf)
    checked = 0
    for _kind, full, data, expected in upb_vectors():
        if expected == "ERR":
            continue
        g_cls = message_factory.GetMessageClass(pool.FindMessageTypeByName(full))
        for opts in [{}, {"as_one_line": True}, {"as_utf8": False}]:
            text = text_format.MessageToString(g_cls.FromString(data), **opts)
            try:
                g = text_format.Parse(text, g_cls(), descriptor_pool=pool)
            except text_format.ParseError:
                continue  # proto2 strings that are not UTF-8: Google refuses them here
            a = conf.types[full].from_text(text)
            assert a.SerializeToString(deterministic=True) == g.SerializeToString(
                deterministic=True
            ), (full, opts)
            checked += 1
    assert checked > 450
    cls = conf.types["protobuf_test_messages.proto3.TestAllTypesProto3"]
    g_cls = message_factory.GetMessageClass(pool.FindMessageTypeByName(cls.DESCRIPTOR.full_name))
    good = [
        "optional_int32: 0x1f optional_uint32: 017 # comment\n",
        "optional_float: -Infinity optional_double: 1.5f repeated_int32: [1, 2, 3]",
        'optional_string: "a" \'b\' "\\u00e9\\x41\\101" optional_bytes: "\\377"',
        "optional_nested_message < a: 1 >; optional_bool: t, optional_nested_enum: 2",
        'map_string_string { key: "k" value: "v" } map_int32_int32 { key: 1 }',
        "optional_any { [type.googleapis.com/protobuf_test_messages.proto3.TestAllTypesProto3] "
        "{ optional_int32: 5 } }",
    ]
    for text in good:
        g = text_format.Parse(text, g_cls(), descriptor_pool=pool)
        assert cls.from_text(text).SerializeToString(deterministic=True) == g.SerializeToString(
            deterministic=True
        ), text
    bad = [
        "optional_int32: 1 optional_int32: 2",
        "oneof_uint32: 1 oneof_string: 'x'",
        "optional_int32: 2147483648",
        "optional_uint32: -1",
        "no_such_field: 1",
        "optional_nested_message { a: 1",
        "optional_string: 'unterminated",
        "optional_int32 1",
        "optional_bool: yes",
        "optional_nested_enum: NOPE",
        'optional_string: "\\xff"',
        "optional_double: 01.5",
    ]
    for text in bad:
        with pytest.raises(text_format.ParseError):
            text_format.Parse(text, g_cls(), descriptor_pool=pool)
        with pytest.raises(P.DecodeError):
            cls.from_text(text)
    assert (
        cls.from_text(
            "no_such_field: { a: [1, 2] } optional_int32: 3", allow_unknown_field=True
        ).optional_int32
        == 3
    )
