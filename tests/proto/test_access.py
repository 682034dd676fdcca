"""amber.proto: attribute access on messages. Field reads (kept values, parsed strings and
bytes, defaults, sub-messages, containers), the field descriptors read on the class, and the
lookups that must stay Python's own: methods, class attributes, subclasses' attributes and
properties, `__getattr__`, unknown names. `HasField`, `WhichOneof` and `FromString` by names
and classes made at run time as well as written in source."""

from __future__ import annotations

import re
from typing import Any, ClassVar

import pytest

import amber.proto as P
from tests.proto.oracle import google_pool

SOURCE = """
syntax = "proto3";
package acc;
enum Color { RED = 0; GREEN = 1; }
message Sub { int32 n = 1; string s = 2; }
message M {
  int32 i = 1;
  int64 big = 2;
  double d = 3;
  bool flag = 4;
  string text = 5;
  bytes raw = 6;
  Color color = 7;
  optional int32 opt = 8;
  Sub sub = 9;
  repeated int32 nums = 10;
  repeated string words = 11;
  map<string, int32> counts = 12;
  oneof pick { string name = 13; Sub other = 14; }
  repeated Sub subs = 15;
}
message Other { int32 i = 1; }
"""


def load() -> Any:
    """A fresh load: tests that change a class do it on their own."""
    return P.load_text(SOURCE, name="acc.proto").acc


@pytest.fixture(scope="module")
def ns() -> Any:
    return load()


def full(ns: Any) -> Any:
    return ns.M(
        i=-7,
        big=2**40,
        d=2.5,
        flag=True,
        text="héllo",
        raw=b"\x00\xff",
        color=ns.Color.GREEN,
        opt=0,
        sub=ns.Sub(n=3, s="x"),
        nums=[1, 2, 3],
        words=["a", "b"],
        counts={"k": 1},
        name="chosen",
        subs=[ns.Sub(n=1), ns.Sub(n=2)],
    )


def readings(m: Any) -> tuple[Any, ...]:
    return (
        m.i,
        m.big,
        m.d,
        m.flag,
        m.text,
        m.raw,
        m.color,
        m.opt,
        (m.sub.n, m.sub.s),
        list(m.nums),
        list(m.words),
        dict(m.counts),
        m.name,
        [s.n for s in m.subs],
    )


EXPECTED = (-7, 2**40, 2.5, True, "héllo", b"\x00\xff", 1, 0, (3, "x"), [1, 2, 3], ["a", "b"])


def test_every_kind_of_field_reads_its_value_built_and_parsed(ns: Any) -> None:
    built = full(ns)
    parsed = ns.M.FromString(built.SerializeToString())
    for m in (built, parsed):
        got = readings(m)
        assert got[: len(EXPECTED)] == EXPECTED
        assert got[len(EXPECTED) :] == ({"k": 1}, "chosen", [1, 2])
        # Twice: a parsed string is made again from the input, equal each time.
        assert readings(m) == got
        assert type(m.i) is int and type(m.d) is float and type(m.flag) is bool
        assert type(m.text) is str and type(m.raw) is bytes


def test_unset_fields_read_their_defaults(ns: Any) -> None:
    for m in (ns.M(), ns.M.FromString(b"")):
        assert (m.i, m.big, m.d, m.flag, m.text, m.raw, m.color, m.opt) == (
            0,
            0,
            0.0,
            False,
            "",
            b"",
            0,
            0,
        )
        assert m.sub.n == 0 and not m.HasField("sub")
        assert list(m.nums) == [] and dict(m.counts) == {}
        # The same default sub-message and container on every read.
        assert m.sub is m.sub and m.nums is m.nums


def test_a_field_read_on_the_class_is_its_descriptor(ns: Any) -> None:
    f = ns.M.i
    assert type(f).__name__ == "ProtoField"
    assert (f.name, f.number) == ("i", 1)
    assert ns.M.__dict__["text"] is ns.M.text
    assert f.__get__(None, ns.M) is f
    m = ns.M(i=5)
    assert f.__get__(m, ns.M) == 5
    assert ns.M.__dict__["sub"].__get__(m, ns.M) is m.sub


def test_a_descriptor_of_another_type_refuses_the_message(ns: Any) -> None:
    m = ns.M(i=5)
    with pytest.raises(TypeError, match=re.escape("field i belongs to acc.Other, not acc.M")):
        ns.Other.__dict__["i"].__get__(m, ns.M)
    with pytest.raises(TypeError):
        ns.M.__dict__["i"].__get__(object(), object)


def test_methods_and_class_attributes_are_found(ns: Any) -> None:
    m = full(ns)
    assert m.DESCRIPTOR.full_name == "acc.M"
    assert m.__class__ is ns.M
    assert callable(m.SerializeToString) and m.HasField("sub")
    assert ns.M.FromString(m.SerializeToString()) == m
    assert m.WhichOneof("pick") == "name"
    assert m.__amber__.full_name == "acc.M"
    with pytest.raises(AttributeError):
        m.__dict__  # noqa: B018  (a loaded class has __slots__ = ())


def test_unknown_names_raise_attribute_error_as_google(ns: Any) -> None:
    """AttributeError for a name no class has, as Google's: its text is Python's own,
    naming the class (upb's says only the name)."""
    m = ns.M()
    assert not hasattr(m, "nope")
    assert getattr(m, "nope", 42) == 42
    with pytest.raises(AttributeError) as amber_error:
        m.nope  # noqa: B018
    assert str(amber_error.value) == "'M' object has no attribute 'nope'"
    with pytest.raises(TypeError, match="attribute name must be string"):
        getattr(m, 1)  # type: ignore[call-overload]
    pytest.importorskip("google.protobuf")
    from google.protobuf import message_factory

    pool = google_pool(P.load_text(SOURCE, name="acc.proto"))
    g = message_factory.GetMessageClass(pool.FindMessageTypeByName("acc.M"))()
    with pytest.raises(AttributeError) as google_error:
        g.nope  # noqa: B018
    assert str(google_error.value) == "nope"
    assert hasattr(g, "i") and hasattr(m, "i")


def test_names_that_are_not_the_interned_str(ns: Any) -> None:
    class Name(str):
        pass

    m = full(ns)
    made = "".join(["te", "xt"])
    assert getattr(m, made) == "héllo"
    assert getattr(m, Name("text")) == "héllo"
    assert m.HasField("".join(["s", "ub"])) and m.HasField(Name("sub"))
    assert m.HasField("".join(["pi", "ck"]))
    assert m.WhichOneof("".join(["pi", "ck"])) == "name"
    assert m.WhichOneof(Name("pick")) == "name"


def test_has_field_and_which_oneof_errors(ns: Any) -> None:
    m = ns.M(other=ns.Sub(n=1))
    assert m.HasField("other") and m.HasField("pick") and not m.HasField("name")
    assert m.WhichOneof("pick") == "other"
    assert ns.M().WhichOneof("pick") is None
    with pytest.raises(ValueError, match=re.escape('Protocol message M has no "nope" field.')):
        m.HasField("nope")
    with pytest.raises(ValueError, match=re.escape("Field acc.M.i does not have presence.")):
        m.HasField("i")
    with pytest.raises(ValueError, match=re.escape('Protocol message has no oneof "sub" field.')):
        m.WhichOneof("sub")
    with pytest.raises(ValueError, match=re.escape('Protocol message has no oneof "nope" field.')):
        m.WhichOneof("nope")
    with pytest.raises(TypeError):
        m.HasField(1)
    with pytest.raises(TypeError):
        m.WhichOneof(None)


def test_optional_fields_presence_by_name(ns: Any) -> None:
    m = ns.M()
    assert not m.HasField("opt") and m.WhichOneof("_opt") is None
    m.opt = 0
    assert m.HasField("opt") and m.WhichOneof("_opt") == "opt"


def test_a_subclass_property_and_attributes_take_precedence_as_in_python() -> None:
    ns = load()

    class Sub(ns.M):  # type: ignore[misc,name-defined]
        kind = "a class attribute"

        @property
        def text(self) -> str:  # a field's name: the subclass's property wins
            return "from the property"

        @property
        def shout(self) -> str:
            return str(super().__getattribute__("name")).upper()

        def twice(self) -> int:
            return int(self.i) * 2

    m = Sub(i=4, text="kept", name="abc")
    assert m.text == "from the property"
    assert ns.M.__dict__["text"].__get__(m, Sub) == "kept"
    assert m.i == 4 and m.twice() == 8 and m.shout == "ABC"
    assert m.kind == "a class attribute"
    # A subclass without __slots__ has an instance dict; a field, a data descriptor, still
    # wins over it, as Python's lookup does.
    m.extra = 1
    assert m.extra == 1 and m.__dict__ == {"extra": 1}
    m.__dict__["i"] = 99
    assert m.i == 4
    parsed = Sub.FromString(m.SerializeToString())
    assert type(parsed) is Sub and parsed.i == 4 and parsed.text == "from the property"


def test_a_subclass_getattr_and_getattribute_are_called() -> None:
    ns = load()

    class Fallback(ns.M):  # type: ignore[misc,name-defined]
        def __getattr__(self, name: str) -> str:
            return f"missing {name}"

    m = Fallback(i=1)
    assert m.i == 1 and m.nope == "missing nope"

    class Spy(ns.M):  # type: ignore[misc,name-defined]
        seen: ClassVar[list[str]] = []

        def __getattribute__(self, name: str) -> Any:
            Spy.seen.append(name)
            return super().__getattribute__(name)

    s = Spy(i=2)
    assert s.i == 2 and s.text == ""
    assert Spy.seen[-2:] == ["i", "text"]


def test_a_class_changed_after_load_reads_as_changed() -> None:
    ns = load()
    m = ns.M(i=3, text="t")
    assert m.i == 3
    ns.M.i = "replaced"
    assert m.i == "replaced"
    ns.M.__getattr__ = lambda self, name: f"hook {name}"
    assert m.nope == "hook nope" and m.text == "t"
    del ns.M.__getattr__
    with pytest.raises(AttributeError):
        m.nope  # noqa: B018


def test_subclass_from_string_runs_its_init() -> None:
    ns = load()
    calls = []

    class Init(ns.M):  # type: ignore[misc,name-defined]
        def __init__(self, **kw: Any) -> None:
            calls.append(kw)
            super().__init__(**kw)

    data = ns.M(i=8).SerializeToString()
    got = Init.FromString(data)
    assert type(got) is Init and got.i == 8 and calls == [{}]
    assert type(ns.M.FromString(data)) is ns.M


def test_the_base_class_is_abstract() -> None:
    with pytest.raises(TypeError, match="abstract"):
        P.Message()
    with pytest.raises(TypeError):
        P.Message.FromString(b"")


def test_fields_read_while_a_container_is_iterated(ns: Any) -> None:
    m = ns.M.FromString(full(ns).SerializeToString())
    got = [(m.i, m.text, w) for w in m.words]
    assert got == [(-7, "héllo", "a"), (-7, "héllo", "b")]
