"""The well-known types in amber.proto against Google's protobuf: their helpers, arithmetic,
field-mask sets, Struct and ListValue, and fields that take Python values."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

import amber.proto as P
from tests.proto.oracle import google_pool

WKT = """syntax = "proto3";
import "google/protobuf/timestamp.proto"; import "google/protobuf/duration.proto";
import "google/protobuf/any.proto"; import "google/protobuf/struct.proto";
import "google/protobuf/field_mask.proto";
message M { google.protobuf.Timestamp t = 1; }
"""


def test_well_known_type_helpers_match_google() -> None:
    import datetime as dt

    pytest.importorskip("google.protobuf")
    from google.protobuf import duration_pb2, field_mask_pb2, struct_pb2, timestamp_pb2

    ns = P.load_text(WKT, name="wkt.proto")
    gp = ns.google.protobuf
    for s, n in [(0, 0), (1, 21_000_000), (-1, 999_999_999), (253402300799, 999_999_999),
                 (-62135596800, 0), (5, 123_000)]:  # fmt: skip
        a, g = gp.Timestamp(seconds=s, nanos=n), timestamp_pb2.Timestamp(seconds=s, nanos=n)
        assert a.ToJsonString() == g.ToJsonString() and a.ToDatetime() == g.ToDatetime()
        back = gp.Timestamp()
        back.FromJsonString(g.ToJsonString())
        assert (back.seconds, back.nanos) == (s, n)
    for text in ["1972-01-01T10:00:20.021+08:00", "2020-02-29T23:59:59.5Z", "0001-01-01T00:00:00Z"]:
        a, g = gp.Timestamp(), timestamp_pb2.Timestamp()
        a.FromJsonString(text)
        g.FromJsonString(text)
        assert (a.seconds, a.nanos) == (g.seconds, g.nanos), text
    with pytest.raises(ValueError):
        gp.Timestamp().FromJsonString("2020-13-01T00:00:00Z")
    for bad in (gp.Timestamp(seconds=2**40), gp.Duration(seconds=2**40)):
        with pytest.raises(ValueError):
            bad.ToJsonString()
    with pytest.raises(ValueError):
        gp.Duration().FromJsonString("1.5")
    aware = dt.datetime(2021, 5, 6, 7, 8, 9, 123456, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    a, g = gp.Timestamp(), timestamp_pb2.Timestamp()
    a.FromDatetime(aware)
    g.FromDatetime(aware)
    assert (a.seconds, a.nanos) == (g.seconds, g.nanos)
    assert a.ToDatetime(dt.timezone.utc) == g.ToDatetime(dt.timezone.utc) == aware
    for s, n in [(0, 0), (1, 500_000_000), (-1, -500_000_000), (0, -1), (315576000000, 0)]:
        d, gd = gp.Duration(seconds=s, nanos=n), duration_pb2.Duration(seconds=s, nanos=n)
        assert d.ToJsonString() == gd.ToJsonString() and d.ToTimedelta() == gd.ToTimedelta()
    d, gd = gp.Duration(), duration_pb2.Duration()
    d.FromTimedelta(dt.timedelta(days=-3, seconds=5, microseconds=7))
    gd.FromTimedelta(dt.timedelta(days=-3, seconds=5, microseconds=7))
    assert (d.seconds, d.nanos) == (
        gd.seconds,
        gd.nanos,
    ) and d.ToMilliseconds() == gd.ToMilliseconds()
    value = {"a": 1, "b": [1, "x", None, {"c": True}], "d": {"e": 2.5}}
    st, gs = gp.Struct(), struct_pb2.Struct()
    st.update(value)
    gs.update(value)
    assert st.SerializeToString(deterministic=True) == gs.SerializeToString(deterministic=True)
    assert st["a"] == 1.0 and st["b"][1] == "x" and st["b"][2] is None and st["d"]["e"] == 2.5
    packed = gp.Any()
    packed.Pack(ns.M(t={"seconds": 5}))
    assert packed.type_url == "type.googleapis.com/M" and packed.Is(ns.M.DESCRIPTOR)
    out = ns.M()
    assert packed.Unpack(out) and out.t.seconds == 5 and not packed.Unpack(gp.Duration())
    fm = gp.FieldMask(paths=["a.foo_bar", "b"])
    assert fm.ToJsonString() == field_mask_pb2.FieldMask(paths=["a.foo_bar", "b"]).ToJsonString()
    fm.FromJsonString("x.fooBar")
    assert list(fm.paths) == ["x.foo_bar"]


def test_well_known_type_arithmetic_and_field_mask_sets_match_google(
    conf: P.Namespace, google: dict[str, Any]
) -> None:
    import datetime as dt

    from google.protobuf import duration_pb2, field_mask_pb2, timestamp_pb2

    ns = P.load_text(WKT, name="wkt.proto")
    gp = ns.google.protobuf
    ts = [(0, 0), (1_600_000_000, 123_456_000), (-5, 7_000)]
    ds = [(0, 0), (90, 500_000_000), (-3, -250_000_000)]
    others = [dt.datetime(2001, 2, 3, 4, 5, 6), dt.timedelta(days=2, microseconds=3)]
    for s, n in ts:
        a, g = gp.Timestamp(seconds=s, nanos=n), timestamp_pb2.Timestamp(seconds=s, nanos=n)
        for ds_, dn in ds:
            ad, gd = (
                gp.Duration(seconds=ds_, nanos=dn),
                duration_pb2.Duration(seconds=ds_, nanos=dn),
            )
            assert a + ad == g + gd and ad + a == gd + g and a - ad == g - gd
            assert ad - ad == gd - gd and ad + dt.timedelta(1) == gd + dt.timedelta(1)
            assert dt.timedelta(1) - ad == dt.timedelta(1) - gd
        assert a - a == g - g
        assert a + others[1] == g + others[1] and others[0] - a == others[0] - g
    rng = random.Random(7)
    names = ["a", "b", "a.x", "a.y", "a.x.z", "c.d", "c", "b.q"]
    for _ in range(300):
        m1 = rng.sample(names, rng.randint(0, 4))
        m2 = rng.sample(names, rng.randint(0, 4))
        for op in ("Union", "Intersect"):
            out, g_out = gp.FieldMask(), field_mask_pb2.FieldMask()
            getattr(out, op)(gp.FieldMask(paths=m1), gp.FieldMask(paths=m2))
            getattr(g_out, op)(
                field_mask_pb2.FieldMask(paths=m1), field_mask_pb2.FieldMask(paths=m2)
            )
            assert list(out.paths) == list(g_out.paths), (op, m1, m2)
        out, g_out = gp.FieldMask(), field_mask_pb2.FieldMask()
        out.CanonicalFormFromMask(gp.FieldMask(paths=m1))
        g_out.CanonicalFormFromMask(field_mask_pb2.FieldMask(paths=m1))
        assert list(out.paths) == list(g_out.paths)
    with pytest.raises(ValueError, match="not a FieldMask"):
        gp.FieldMask().Union(gp.Duration(), gp.FieldMask())
    name = "protobuf_test_messages.proto3.TestAllTypesProto3"
    cls, g_cls = conf.types[name], google[name]
    fields = [
        "optional_int32",
        "optional_string",
        "repeated_int32",
        "optional_nested_message",
        "optional_nested_message.a",
        "optional_nested_message.corecursive.optional_int64",
        "map_int32_int32",
        "oneof_uint32",
        "oneof_string",
    ]
    src = dict(
        optional_int32=5,
        repeated_int32=[1, 2],
        optional_nested_message={"a": 3, "corecursive": {"optional_int64": 4}},
        map_int32_int32={1: 2},
        oneof_string="s",
    )
    dst = dict(
        optional_string="keep",
        repeated_int32=[9],
        optional_nested_message={"corecursive": {"optional_bool": True}},
        map_int32_int32={3: 4},
        oneof_uint32=7,
    )
    for _ in range(200):
        paths = rng.sample(fields, rng.randint(1, 4))
        flags = rng.choice([(False, False), (True, False), (False, True), (True, True)])
        mask, g_mask = gp.FieldMask(paths=paths), field_mask_pb2.FieldMask(paths=paths)
        a_dst, g_dst = cls(**copy.deepcopy(dst)), g_cls(**copy.deepcopy(dst))
        try:
            g_mask.MergeMessage(g_cls(**copy.deepcopy(src)), g_dst, *flags)
        except ValueError:
            with pytest.raises(ValueError):
                mask.MergeMessage(cls(**copy.deepcopy(src)), a_dst, *flags)
            continue
        mask.MergeMessage(cls(**copy.deepcopy(src)), a_dst, *flags)
        assert a_dst.SerializeToString(deterministic=True) == g_dst.SerializeToString(
            deterministic=True
        ), (paths, flags)
    assert gp.FieldMask(paths=["a", "b.c"]).IsValidForDescriptor(ns.M.DESCRIPTOR) is False
    assert gp.FieldMask(paths=["t.seconds", "t"]).IsValidForDescriptor(ns.M.DESCRIPTOR)
    every = gp.FieldMask()
    every.AllFieldsFromDescriptor(ns.M.DESCRIPTOR)
    assert list(every.paths) == ["t"]


WKT_FIELDS = """syntax = "proto3";
import "google/protobuf/timestamp.proto"; import "google/protobuf/duration.proto";
import "google/protobuf/struct.proto";
message W {
  google.protobuf.Timestamp t = 1; google.protobuf.Duration d = 2; google.protobuf.Struct s = 3;
  google.protobuf.ListValue l = 4; google.protobuf.Value v = 5;
  repeated google.protobuf.Timestamp ts = 6;
}
"""


def test_struct_and_list_value_read_and_compare_as_google() -> None:
    """A missing Struct key or unset ListValue item raises as Google's; a Struct equals the
    dict of its values and a ListValue the list of its values."""
    pytest.importorskip("google.protobuf")
    from google.protobuf import struct_pb2

    ours = P.load_text(
        'syntax = "proto3"; import "google/protobuf/struct.proto"; package s2; '
        "message W { google.protobuf.Struct st = 1; google.protobuf.ListValue lv = 2; }",
        name="s2.proto",
    ).s2.W
    value = {"a": 1, "b": [1, "x", None, {"c": True}]}
    w = ours(st=value, lv=[1, "a"])
    g_st, g_lv = struct_pb2.Struct(), struct_pb2.ListValue()
    g_st.update(value)
    g_lv.extend([1, "a"])
    for mine, google, same, other in ((w.st, g_st, value, {"a": 2}), (w.lv, g_lv, [1, "a"], [1])):
        assert (mine == same) is (google == same) is True
        assert (mine == other) is (google == other) is False
    with pytest.raises(ValueError, match="Value not set"):
        ours().st["missing"]
    with pytest.raises(ValueError, match="Value not set"):
        struct_pb2.Struct()["missing"]


def test_well_known_type_fields_take_python_values_as_google() -> None:
    import datetime as dt

    pytest.importorskip("google.protobuf")
    from google.protobuf import message_factory

    ns = P.load_text(WKT_FIELDS, name="w.proto")
    pool = google_pool(ns)
    g_w = message_factory.GetMessageClass(pool.FindMessageTypeByName("W"))
    when = dt.datetime(2020, 1, 2, 3, 4, 5, 6)
    kwargs: dict[str, Any] = dict(
        t=when,
        d=dt.timedelta(days=-1, seconds=3),
        s={"a": 1, "b": [True, None, {"c": "x"}], "fields": 2},  # a Struct's dict is contents
        l=[1, "two", [3]],
        ts=[when, {"seconds": 7}],
    )
    a, g = ns.W(**kwargs), g_w(**kwargs)
    assert a.SerializeToString(deterministic=True) == g.SerializeToString(deterministic=True)
    assert ns.W(t={"seconds": 5}).t.seconds == g_w(t={"seconds": 5}).t.seconds == 5
    a, g = ns.W(), g_w()
    for name, value in [
        ("t", dt.datetime(1999, 12, 31)),
        ("d", dt.timedelta(microseconds=5)),
        ("s", {"k": {"n": 1.5}}),
        ("l", ["x", None]),
    ]:
        setattr(a, name, value)
        setattr(g, name, value)
    assert a.SerializeToString(deterministic=True) == g.SerializeToString(deterministic=True)
    for name, value, g_error, error in [
        ("t", 5, TypeError, TypeError),
        ("d", when, TypeError, TypeError),
        ("s", [1], AttributeError, TypeError),  # Google's fails inside its update()
        ("v", 3, AttributeError, AttributeError),  # a Value takes no Python value in either
    ]:
        with pytest.raises(g_error):
            setattr(g, name, value)
        with pytest.raises(error):
            setattr(a, name, value)
