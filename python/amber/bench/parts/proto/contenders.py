"""The proto part's contenders: Google's protobuf runtime (its default upb backend, the baseline,
and its pure-Python backend) and amber.proto, each running seed 001's message through eight
operations: "build" (the keyword constructor with the full contents), "serialize"
(`SerializeToString` of the built message), "parse" (`FromString` of those bytes), "parse and
read" (`FromString`, then every field read; see `workloads.read_all`), and ProtoJSON both ways:
"to dict", "from dict", "to JSON", "from JSON" (Google's `json_format`, amber's `to_dict`,
`from_dict`, `to_json`, `from_json`).

Both libraries get their classes from the same schema at run time: amber compiles
protos/test.proto (`amber.proto.load`), and Google's classes are made from the
`FileDescriptorSet` amber compiled, in a fresh descriptor pool, as a program without generated
code would make them.

Before timing, every contender's results are checked: reading every field of what it parsed from
its own bytes gives the constructor's values; it parses its own bytes back into an equal message;
and against the other library in the same process (amber for Google's backends, Google's for
amber), its deterministic serialization is byte for byte the other's, the other parses its bytes
into the message the other built, and it parses the other's bytes into the message it built.

Google's backend is chosen once per process, by PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION read when
google.protobuf is first imported: the "google-python" contender therefore runs only in a child
process started with that variable set (see `child`); in this process it refuses to run.
"""

from __future__ import annotations

import functools
import importlib
import json
from collections.abc import Callable
from typing import Any

from amber.bench.engine.contender import Contender, Trial
from amber.bench.engine.exact import exactly_equal
from amber.bench.engine.registry import Part, register_part
from amber.bench.parts.proto.workloads import (
    MESSAGE,
    PROTOS,
    SCHEMA,
    Seed001,
    comparable,
    contents,
    read_all,
)

PROTO = register_part(
    Part(
        "proto",
        baseline="upb",
        label="Protobuf runtimes",
        description="amber.proto against Google's protobuf runtime (upb and pure-Python backends)",
    )
)

UPB = "upb"
GOOGLE_PYTHON = "google-python"
AMBER = "amber"
OPS = (
    "serialize",
    "parse",
    "parse and read",
    "build",
    "to dict",
    "from dict",
    "to JSON",
    "from JSON",
)
ENV = "PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"  # Google's backend switch, read at first import


def untyped(name: str) -> Any:
    """Import a module of google.protobuf, which ships no type information: mypy then treats it
    as Any. ImportError when protobuf is missing, which makes its contenders skipped."""
    return importlib.import_module(name)


@functools.cache
def amber_namespace() -> Any:
    """The classes amber compiles from protos/test.proto, once per process."""
    import amber.proto

    return amber.proto.load(SCHEMA, include=[PROTOS])


def amber_class() -> Any:
    return amber_namespace().bench.Test


@functools.cache
def google_class() -> Any:
    """Google's class for `bench.Test`, made from amber's `FileDescriptorSet` in a fresh pool."""
    descriptor_pb2 = untyped("google.protobuf.descriptor_pb2")
    descriptor_pool = untyped("google.protobuf.descriptor_pool")
    message_factory = untyped("google.protobuf.message_factory")
    files = descriptor_pb2.FileDescriptorSet.FromString(amber_namespace().descriptor_set())
    pool = descriptor_pool.DescriptorPool()
    for f in files.file:
        pool.Add(f)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(MESSAGE))


def google_backend() -> str:
    """The backend google.protobuf runs in this process: "upb", "python" (or "cpp")."""
    return str(untyped("google.protobuf.internal.api_implementation").Type())


# --- the operations ------------------------------------------------------------------------------


def _build(cls: Any, kw: dict[str, Any]) -> Any:
    return cls(**kw)


def _serialize(message: Any) -> bytes:
    data: bytes = message.SerializeToString()
    return data


def _parse_and_read(cls: Any, data: bytes) -> tuple[Any, ...]:
    return read_all(cls.FromString(data))


class JsonOps:
    """ProtoJSON both ways: Google's `json_format` (pure Python on every backend) or amber's
    methods. JSON is `MessageToJson`'s default form (indented by 2)."""

    to_dict: Callable[[Any], Any]
    from_dict: Callable[[Any], Any]
    to_json: Callable[[Any], Any]
    from_json: Callable[[Any], Any]

    def __init__(self, cls: Any, google: bool) -> None:
        if google:
            jf = untyped("google.protobuf.json_format")
            self.to_dict = jf.MessageToDict
            self.from_dict = lambda d: jf.ParseDict(d, cls())
            self.to_json = jf.MessageToJson
            self.from_json = lambda text: jf.Parse(text, cls())
        else:
            self.to_dict = lambda m: m.to_dict()
            self.from_dict = cls.from_dict
            self.to_json = lambda m: m.to_json()
            self.from_json = cls.from_json


def runtime(
    name: str, cls: Any, peer: Any, peer_name: str, package: str, note: str, google: bool
) -> Contender:
    """A contender running the operations on `cls`, checked on its own and against `peer`
    (the other library's class for the same schema; None when it is not installed)."""
    ops = JsonOps(cls, google)

    def prepare(t: Trial) -> None:
        value: Seed001 = t.value
        built = t.run("build", functools.partial(_build, cls), value.kwargs)
        t.expect(
            exactly_equal(contents(), value.kwargs),
            "the constructor changed the values it was given",
        )
        data = t.run("serialize", _serialize, built)
        t.size = len(data)
        parsed = t.run("parse", cls.FromString, data)
        t.expect(parsed == built, "FromString(SerializeToString(m)) differs from m")
        reading = t.run("parse and read", functools.partial(_parse_and_read, cls), data)
        t.expect_exact(
            comparable(reading),
            "reading every field of the parsed message differs from the values built",
            comparable(value.expected),
        )
        as_dict = t.run("to dict", ops.to_dict, built)
        t.expect(ops.from_dict(as_dict) == built, "from_dict(to_dict(m)) differs from m")
        t.run("from dict", ops.from_dict, as_dict)
        as_json = t.run("to JSON", ops.to_json, built)
        t.expect(json.loads(as_json) == as_dict, "the JSON and the dict say different things")
        t.expect(ops.from_json(as_json) == built, "from_json(to_json(m)) differs from m")
        t.run("from JSON", ops.from_json, as_json)
        if peer is None:
            t.note = f"not checked against {peer_name}: it is not installed"
            return
        other = peer(**value.kwargs)
        t.expect(
            built.SerializeToString(deterministic=True)
            == other.SerializeToString(deterministic=True),
            f"deterministic serialization differs from {peer_name}'s",
        )
        t.expect(
            peer.FromString(data) == other,
            f"{peer_name} parses these bytes into another message than the one it built",
        )
        t.expect(
            cls.FromString(other.SerializeToString()) == built,
            f"parsing {peer_name}'s bytes gives another message than the one built",
        )
        peer_ops = JsonOps(peer, not google)
        t.expect(
            peer_ops.to_dict(other) == as_dict,
            f"{peer_name}'s dict of the same message differs",
        )
        t.expect(
            peer_ops.from_json(as_json) == other,
            f"{peer_name} reads this JSON into another message than the one it built",
        )

    return Contender(name, prepare, package=package, note=note)


# --- the contenders ------------------------------------------------------------------------------


@PROTO.contender(UPB)
def _upb() -> Contender:
    cls = google_class()
    backend = google_backend()
    if backend != "upb":
        raise RuntimeError(
            f"google.protobuf runs its {backend} backend in this process, not upb (is {ENV} set?)"
        )
    return runtime(
        UPB, cls, amber_class(), AMBER, "protobuf", "Google protobuf, upb backend", google=True
    )


@PROTO.contender(GOOGLE_PYTHON)
def _google_python() -> Contender:
    cls = google_class()
    inner = runtime(GOOGLE_PYTHON, cls, amber_class(), AMBER, "protobuf", "", google=True)

    def prepare(t: Trial) -> None:
        backend = google_backend()
        if backend != "python":
            raise RuntimeError(
                f"google.protobuf runs its {backend} backend here: {GOOGLE_PYTHON} is timed in "
                f"a child process started with {ENV}=python"
            )
        inner.prepare(t)

    return Contender(
        GOOGLE_PYTHON,
        prepare,
        package="protobuf",
        note=f"Google protobuf, pure-Python backend, timed in a child process with {ENV}=python",
    )


@PROTO.contender(AMBER)
def _amber() -> Contender:
    cls = amber_class()
    try:
        peer = google_class()
    except ImportError:
        peer = None
    return runtime(
        AMBER,
        cls,
        peer,
        "google.protobuf",
        "amber",
        "amber.proto, classes loaded at run time",
        google=False,
    )
