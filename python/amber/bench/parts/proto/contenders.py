"""The proto part's contenders: Google's protobuf runtime (its default upb backend, the baseline,
and its pure-Python backend), amber.proto and bufbuild's protobuf-py (with its Rust extension,
protobuf-py-ext), each running every message shape of `workloads.SHAPES` through "serialize"
(the built message to bytes), "parse" (bytes to a message) and "parse and read" (parse, then
every field read; see each shape's `read`). On `bench.Test` they also run "build" (the
constructor with the full contents) and ProtoJSON both ways: "to dict", "from dict", "to JSON",
"from JSON".

Every library gets its classes from the same schema at run time: amber compiles protos/*.proto
(`amber.proto.load`); Google's classes are made from the `FileDescriptorSet` amber compiled, in a
fresh descriptor pool, and protobuf-py's from the same set through its own registry
(`FileDescriptorSet.to_registry()`, whose messages make their classes on first use), as a
program without generated code would make them.

Before timing, every contender's results are checked: reading every field of what it parsed from
its own bytes gives the values it was built from; it parses its own bytes back into an equal
message; and against each other library in the same process, its deterministic serialization is
byte for byte the other's, the other parses its bytes into the message the other built, and it
parses the other's bytes into the message it built (on `bench.Test`, their dicts and JSON too).

Google's backend is chosen once per process, by PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION read when
google.protobuf is first imported: the "google-python" contender therefore runs only in a child
process started with that variable set (see `child`); in this process it refuses to run.
"""

from __future__ import annotations

import functools
import importlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from amber.bench.engine.contender import Contender, Trial
from amber.bench.engine.exact import exactly_equal
from amber.bench.engine.registry import Part, register_part
from amber.bench.parts.proto.workloads import (
    ALL_OPS,
    MESSAGE,
    PROTOS,
    SCHEMA,
    SHAPES_SCHEMA,
    Contents,
    Shape,
    comparable,
)

PROTO = register_part(
    Part(
        "proto",
        baseline="upb",
        label="Protobuf runtimes",
        description=(
            "amber.proto against Google's protobuf runtime (upb and pure-Python backends) and "
            "bufbuild's protobuf-py"
        ),
    )
)

UPB = "upb"
GOOGLE_PYTHON = "google-python"
AMBER = "amber"
PROTOBUF_PY = "protobuf-py"
OPS = ALL_OPS  # every operation, in report order; a shape times `Shape.ops`
ENV = "PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"  # Google's backend switch, read at first import


def untyped(name: str) -> Any:
    """Import a module of google.protobuf or of protobuf-py as Any (google.protobuf ships no
    type information). ImportError when the library is missing, which makes its contenders
    skipped."""
    return importlib.import_module(name)


@functools.cache
def amber_namespace() -> Any:
    """The classes amber compiles from protos/test.proto and protos/shapes.proto, once per
    process."""
    import amber.proto

    return amber.proto.load(SCHEMA, SHAPES_SCHEMA, include=[PROTOS])


def amber_class(name: str = MESSAGE) -> Any:
    return amber_namespace().types[name]


@functools.cache
def _google_pool() -> Any:
    descriptor_pb2 = untyped("google.protobuf.descriptor_pb2")
    descriptor_pool = untyped("google.protobuf.descriptor_pool")
    files = descriptor_pb2.FileDescriptorSet.FromString(amber_namespace().descriptor_set())
    pool = descriptor_pool.DescriptorPool()
    for f in files.file:
        pool.Add(f)
    return pool


@functools.cache
def google_class(name: str = MESSAGE) -> Any:
    """Google's class for message `name`, made from amber's `FileDescriptorSet` in a fresh
    pool."""
    message_factory = untyped("google.protobuf.message_factory")
    return message_factory.GetMessageClass(_google_pool().FindMessageTypeByName(name))


def google_backend() -> str:
    """The backend google.protobuf runs in this process: "upb", "python" (or "cpp")."""
    return str(untyped("google.protobuf.internal.api_implementation").Type())


@functools.cache
def _protobuf_py_registry() -> Any:
    wkt = untyped("protobuf.wkt")
    return wkt.FileDescriptorSet.from_binary(amber_namespace().descriptor_set()).to_registry()


@functools.cache
def protobuf_py_class(name: str = MESSAGE) -> Any:
    """protobuf-py's class for message `name`, made from amber's `FileDescriptorSet` through
    protobuf-py's registry (its run-time classes; generated code makes the same kind of class
    from the same descriptor)."""
    desc = _protobuf_py_registry().message(name)
    if desc is None:
        raise LookupError(f"protobuf-py's registry has no message {name}")
    return desc.type


def protobuf_py_native() -> bool:
    """Whether protobuf-py runs on its Rust extension (protobuf-py-ext) in this process."""
    return untyped("protobuf._native_message").NativeMessageClass is not None


# --- what each library calls each operation ------------------------------------------------------


def _build(cls: Any, kw: dict[str, Any]) -> Any:
    return cls(**kw)


def _serialize(message: Any) -> bytes:
    data: bytes = message.SerializeToString()
    return data


def _deterministic(message: Any) -> bytes:
    data: bytes = message.SerializeToString(deterministic=True)
    return data


def _to_binary(message: Any) -> bytes:
    data: bytes = message.to_binary()
    return data


def _from_binary(cls: Any) -> Callable[[bytes], Any]:
    parse: Callable[[bytes], Any] = cls.from_binary
    return parse


def _from_string(cls: Any) -> Callable[[bytes], Any]:
    parse: Callable[[bytes], Any] = cls.FromString
    return parse


@functools.cache
def _protobuf_py_plan(cls: Any) -> dict[str, Callable[[Any], tuple[str, Any]]]:
    """How each keyword argument of the Google-style constructor becomes protobuf-py's: a
    sub-message's dict becomes an instance of its class (in lists and map values too), and a
    oneof's member becomes the oneof's `Oneof(field=..., value=...)`. Arguments not listed pass
    as they are."""
    pb = untyped("protobuf")
    plan: dict[str, Callable[[Any], tuple[str, Any]]] = {}
    for field in cls.desc().fields:
        name, value = field.local_name, field.value
        make: Callable[[Any], Any] | None = None
        if isinstance(value, pb.DescFieldValueMessage):
            make = functools.partial(protobuf_py_build, value.message.type)
        elif isinstance(value, pb.DescFieldValueList) and isinstance(value.element, pb.DescMessage):
            sub = value.element.type
            make = functools.partial(_each, sub)
        elif isinstance(value, pb.DescFieldValueMap) and isinstance(value.value, pb.DescMessage):
            sub = value.value.type
            make = functools.partial(_each_value, sub)
        oneof = getattr(value, "oneof", None)
        if oneof is not None:
            plan[name] = functools.partial(_oneof, pb.Oneof, oneof.local_name, name, make)
        elif make is not None:
            plan[name] = functools.partial(_named, name, make)
    return plan


def _named(name: str, make: Callable[[Any], Any], v: Any) -> tuple[str, Any]:
    return name, make(v)


def _oneof(
    oneof_cls: Any, group: str, name: str, make: Callable[[Any], Any] | None, v: Any
) -> tuple[str, Any]:
    return group, oneof_cls(field=name, value=v if make is None else make(v))


def _each(cls: Any, items: Sequence[dict[str, Any]]) -> list[Any]:
    return [protobuf_py_build(cls, d) for d in items]


def _each_value(cls: Any, items: dict[Any, dict[str, Any]]) -> dict[Any, Any]:
    return {k: protobuf_py_build(cls, d) for k, d in items.items()}


def protobuf_py_build(cls: Any, kw: dict[str, Any]) -> Any:
    """protobuf-py's message from the Google-style keyword arguments (dicts for messages):
    protobuf-py's constructor takes message instances and a oneof as one `Oneof`, so the
    sub-messages are built first, as a user of protobuf-py builds them."""
    plan = _protobuf_py_plan(cls)
    out: dict[str, Any] = {}
    for k, v in kw.items():
        convert = plan.get(k)
        if convert is None:
            out[k] = v
        else:
            key, value = convert(v)
            out[key] = value
    return cls(**out)


class JsonOps:
    """ProtoJSON both ways: Google's `json_format` (pure Python on every backend, JSON indented
    by 2 as `MessageToJson` writes it), amber's methods (the same indent), or protobuf-py's
    (`message_to_json_value`, `message_from_json_value`, `to_json`, `from_json`; its JSON is
    compact: it has no indent option)."""

    to_dict: Callable[[Any], Any]
    from_dict: Callable[[Any], Any]
    to_json: Callable[[Any], Any]
    from_json: Callable[[Any], Any]

    def __init__(self, cls: Any, flavour: str) -> None:
        if flavour == "google":
            jf = untyped("google.protobuf.json_format")
            self.to_dict = jf.MessageToDict
            self.from_dict = lambda d: jf.ParseDict(d, cls())
            self.to_json = jf.MessageToJson
            self.from_json = lambda text: jf.Parse(text, cls())
        elif flavour == "protobuf-py":
            pb = untyped("protobuf")
            self.to_dict = pb.message_to_json_value
            self.from_dict = functools.partial(pb.message_from_json_value, cls)
            self.to_json = lambda m: m.to_json()
            self.from_json = cls.from_json
        else:
            self.to_dict = lambda m: m.to_dict()
            self.from_dict = cls.from_dict
            self.to_json = lambda m: m.to_json()
            self.from_json = cls.from_json


@dataclass(frozen=True)
class Library:
    """How one protobuf library does what the study times: its class for a message's full
    name, and its constructor, serializations, parse and JSON on that class."""

    name: str
    classes: Callable[[str], Any]
    build: Callable[[Any, dict[str, Any]], Any]
    serialize: Callable[[Any], bytes]
    deterministic: Callable[[Any], bytes] | None  # None: no deterministic mode
    parser: Callable[[Any], Callable[[bytes], Any]]
    json: str  # JsonOps flavour
    oneof_attribute: bool = False  # a oneof is one attribute (use `Shape.read_oneof`)

    def reader(self, shape: Shape) -> Callable[[Any], Any]:
        if self.oneof_attribute and shape.read_oneof is not None:
            return shape.read_oneof
        return shape.read


def google_library(name: str) -> Library:
    return Library(name, google_class, _build, _serialize, _deterministic, _from_string, "google")


def amber_library() -> Library:
    amber_namespace()
    return Library(AMBER, amber_class, _build, _serialize, _deterministic, _from_string, "amber")


def protobuf_py_library() -> Library:
    _protobuf_py_registry()
    # protobuf-py has no deterministic mode: it writes a map's entries in an order of its own.
    return Library(
        PROTOBUF_PY,
        protobuf_py_class,
        protobuf_py_build,
        _to_binary,
        None,
        _from_binary,
        "protobuf-py",
        oneof_attribute=True,
    )


def _parse_and_read(parse: Callable[[bytes], Any], read: Callable[[Any], Any], data: bytes) -> Any:
    return read(parse(data))


def same_bytes(a: Library, a_cls: Any, a_msg: Any, b: Library, b_cls: Any, b_msg: Any) -> bool:
    """Whether two libraries write the same message into the same bytes: their deterministic
    serializations byte for byte; where one has no deterministic mode (protobuf-py), its bytes
    as long as the other's and, put in the deterministic order by the other (parsed and written
    again), the other's bytes."""
    if a.deterministic is not None and b.deterministic is not None:
        return a.deterministic(a_msg) == b.deterministic(b_msg)
    if a.deterministic is None:
        a, a_cls, a_msg, b, b_cls, b_msg = b, b_cls, b_msg, a, a_cls, a_msg
    if a.deterministic is None:
        return False  # neither can put its bytes in a deterministic order
    theirs = b.serialize(b_msg)
    mine = a.deterministic(a_msg)
    return len(theirs) == len(mine) and a.deterministic(a.parser(a_cls)(theirs)) == mine


def runtime(
    lib: Library,
    peers: Sequence[Library],
    missing: Sequence[str],
    package: str,
    note: str,
) -> Contender:
    """A contender running the shape's operations on `lib`'s class for it, checked on its own
    and against each of `peers` (the other libraries installed here; `missing` names those
    that are not)."""

    def prepare(t: Trial) -> None:
        value: Contents = t.value
        shape = value.shape
        cls = lib.classes(shape.message)
        ops = shape.ops
        build = functools.partial(lib.build, cls)
        built = t.run("build", build, value.kwargs) if "build" in ops else build(value.kwargs)
        t.expect(
            exactly_equal(shape.contents(), value.kwargs),
            "the constructor changed the values it was given",
        )
        data = t.run("serialize", lib.serialize, built)
        t.size = len(data)
        parse = lib.parser(cls)
        parsed = t.run("parse", parse, data)
        t.expect(parsed == built, "parsing the serialization of m differs from m")
        read = functools.partial(_parse_and_read, parse, lib.reader(shape))
        reading = t.run("parse and read", read, data)
        t.expect_exact(
            comparable(reading),
            "reading every field of the parsed message differs from the values built",
            comparable(value.expected),
        )
        json_ops = JsonOps(cls, lib.json)
        as_dict: Any = None
        as_json: Any = None
        if "to dict" in ops:
            as_dict = t.run("to dict", json_ops.to_dict, built)
            t.expect(json_ops.from_dict(as_dict) == built, "from_dict(to_dict(m)) differs from m")
            t.run("from dict", json_ops.from_dict, as_dict)
            as_json = t.run("to JSON", json_ops.to_json, built)
            t.expect(json.loads(as_json) == as_dict, "the JSON and the dict say different things")
            t.expect(json_ops.from_json(as_json) == built, "from_json(to_json(m)) differs from m")
            t.run("from JSON", json_ops.from_json, as_json)
        for peer in peers:
            peer_cls = peer.classes(shape.message)
            other = peer.build(peer_cls, value.kwargs)
            t.expect(
                same_bytes(lib, cls, built, peer, peer_cls, other),
                f"deterministic serialization differs from {peer.name}'s",
            )
            t.expect(
                peer.parser(peer_cls)(data) == other,
                f"{peer.name} parses these bytes into another message than the one it built",
            )
            t.expect(
                parse(peer.serialize(other)) == built,
                f"parsing {peer.name}'s bytes gives another message than the one built",
            )
            if as_dict is not None:
                peer_json = JsonOps(peer_cls, peer.json)
                t.expect(
                    peer_json.to_dict(other) == as_dict,
                    f"{peer.name}'s dict of the same message differs",
                )
                t.expect(
                    peer_json.from_json(as_json) == other,
                    f"{peer.name} reads this JSON into another message than the one it built",
                )
        if missing:
            t.note = f"not checked against {', '.join(missing)}: not installed"

    return Contender(lib.name, prepare, package=package, note=note)


def peers_of(name: str) -> tuple[list[Library], list[str]]:
    """The libraries other than `name` installed here (Google's under the backend this process
    runs), and the names of those missing."""
    found: list[Library] = []
    missing: list[str] = []
    makers: list[tuple[str, Callable[[], Library]]] = [
        ("google.protobuf", lambda: google_library(f"google.protobuf ({google_backend()})")),
        (AMBER, amber_library),
        (PROTOBUF_PY, protobuf_py_library),
    ]
    mine = "google.protobuf" if name in (UPB, GOOGLE_PYTHON) else name
    for label, make in makers:
        if label == mine:
            continue
        try:
            found.append(make())
        except ImportError:
            missing.append(label)
    return found, missing


# --- the contenders ------------------------------------------------------------------------------


@PROTO.contender(UPB)
def _upb() -> Contender:
    google_class()
    backend = google_backend()
    if backend != "upb":
        raise RuntimeError(
            f"google.protobuf runs its {backend} backend in this process, not upb (is {ENV} set?)"
        )
    peers, missing = peers_of(UPB)
    return runtime(google_library(UPB), peers, missing, "protobuf", "Google protobuf, upb backend")


@PROTO.contender(GOOGLE_PYTHON)
def _google_python() -> Contender:
    google_class()
    peers, missing = peers_of(GOOGLE_PYTHON)
    inner = runtime(google_library(GOOGLE_PYTHON), peers, missing, "protobuf", "")

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
    peers, missing = peers_of(AMBER)
    return runtime(
        amber_library(), peers, missing, "amber", "amber.proto, classes loaded at run time"
    )


@PROTO.contender(PROTOBUF_PY)
def _protobuf_py() -> Contender:
    lib = protobuf_py_library()
    peers, missing = peers_of(PROTOBUF_PY)
    native = protobuf_py_native()
    note = (
        "bufbuild's protobuf-py on its Rust extension (protobuf-py-ext), classes from its "
        "registry at run time"
        if native
        else "bufbuild's protobuf-py, pure Python (protobuf-py-ext is not installed)"
    )
    return runtime(lib, peers, missing, "protobuf-py", note)
