"""amber.proto: Protocol Buffers from `.proto` files at run time.

`load(*files, include=[...])` compiles `.proto` files in amber's Rust core (no protoc, no
generated code) and returns a namespace of message classes and enums, with packages as
nested namespaces. Messages speak Google's API (`SerializeToString`, `ParseFromString`,
`HasField`, `MergeFrom`, repeated fields like lists, maps like dicts, ...); the guide lists
where amber differs. ProtoJSON (protobuf's JSON mapping) is `to_json`/`from_json` and
`to_dict`/`from_dict`, equal to `google.protobuf.json_format`'s `MessageToJson`/`Parse` and
`MessageToDict`/`ParseDict` (Pyrobuf's `SerializeToJson`, `ParseFromJson`, ... too).

    ns = amber.proto.load("shop.proto", include=["protos"])
    order = ns.shop.Order(id=7, items=[{"sku": "a", "qty": 2}])
    data = order.SerializeToString()
    assert ns.shop.Order.FromString(data) == order
"""

from __future__ import annotations

import os
import threading
import types
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from amber._native import (
    MapContainer,
    ProtoDecodeError,
    ProtoSchema,
    ProtoSchemaError,
    RepeatedContainer,
    proto_merge_dict,
    proto_merge_json,
    proto_to_json,
)
from amber._native import Message as _NativeMessage

if TYPE_CHECKING:
    from typing_extensions import Self
from amber.proto import _wkt
from amber.proto._descriptors import (
    Descriptor,
    EnumDescriptor,
    EnumValueDescriptor,
    FieldDescriptor,
    FileDescriptor,
    OneofDescriptor,
    _Source,
)

DecodeError = ProtoDecodeError
SchemaError = ProtoSchemaError

__all__ = [
    "DecodeError",
    "Descriptor",
    "EnumDescriptor",
    "EnumType",
    "EnumValueDescriptor",
    "Extensions",
    "FieldDescriptor",
    "FileDescriptor",
    "MapContainer",
    "Message",
    "Namespace",
    "OneofDescriptor",
    "RepeatedContainer",
    "SchemaError",
    "load",
    "load_descriptor_set",
    "load_text",
]


_M = TypeVar("_M", bound="Message")

# The native text parser, a class method of the base class, bound to a subclass by `from_text`.
_NATIVE_FROM_TEXT: Any = _NativeMessage.__dict__["from_text"]


class Message(_NativeMessage):
    """Base class of every loaded message class."""

    __slots__ = ()
    DESCRIPTOR: Descriptor

    # --- ProtoJSON (protobuf's JSON mapping), as google.protobuf.json_format -----------------

    def to_json(
        self,
        *,
        preserving_proto_field_name: bool = False,
        use_integers_for_enums: bool = False,
        always_print_fields_with_no_presence: bool = False,
        indent: int | None = 2,
        sort_keys: bool = False,
        ensure_ascii: bool = True,
    ) -> str:
        """The message as ProtoJSON text, equal to `json_format.MessageToJson(msg, ...)` with
        the same options (`indent=None`: one line). Raises `amber.EncodeError` for values
        ProtoJSON cannot write (a Timestamp out of range, an Any of an unknown type, ...)."""
        return proto_to_json(
            self,
            preserving_proto_field_name=preserving_proto_field_name,
            use_integers_for_enums=use_integers_for_enums,
            always_print_fields_with_no_presence=always_print_fields_with_no_presence,
            indent=indent,
            sort_keys=sort_keys,
            ensure_ascii=ensure_ascii,
        )

    @classmethod
    def from_json(cls: type[_M], text: str | bytes, *, ignore_unknown_fields: bool = False) -> _M:
        """A new message from ProtoJSON text, as `json_format.Parse(text, cls(), ...)`.
        Raises `amber.proto.DecodeError` (with `offset` and `path`) for invalid text."""
        m = cls()
        proto_merge_json(m, text, ignore_unknown_fields=ignore_unknown_fields)
        return m

    @classmethod
    def from_dict(cls: type[_M], d: Any, *, ignore_unknown_fields: bool = False) -> _M:
        """A new message from JSON-ready Python values (dicts, lists, strings, numbers, bools,
        `None`), as `json_format.ParseDict`; read in place, no text in between."""
        m = cls()
        proto_merge_dict(m, d, ignore_unknown_fields=ignore_unknown_fields)
        return m

    # Pyrobuf's names.

    def SerializeToJson(self) -> str:
        """Compact ProtoJSON text (`to_json(indent=None)`)."""
        return proto_to_json(self)

    def ParseFromJson(self, text: str | bytes) -> None:
        """Replace the contents with those of ProtoJSON text."""
        proto_merge_json(self, text)

    def SerializeToDict(self) -> Any:
        """`to_dict()`."""
        return _NativeMessage.to_dict(self)

    def ParseFromDict(self, d: Any) -> None:
        """Replace the contents with those of JSON-ready Python values."""
        proto_merge_dict(self, d)

    def ListFields(self) -> list[tuple[FieldDescriptor, Any]]:
        """`(field descriptor, value)` of each present field, by field number."""
        fields = type(self).DESCRIPTOR._by_position  # type: ignore[attr-defined]
        return [(fields[pos], value) for pos, value in self._present()]

    @classmethod
    def from_text(cls: type[_M], text: str | bytes, *, allow_unknown_field: bool = False) -> _M:
        """A new message from its text format (Google's `text_format.Parse`); `bytes` are
        read as UTF-8. Raises `amber.proto.DecodeError` (starting with `line:col`) for invalid
        text."""
        if not isinstance(text, str) and isinstance(text, (bytes, bytearray, memoryview)):
            text = _utf8_text(bytes(text))
        parse = _NATIVE_FROM_TEXT.__get__(None, cls)
        return parse(text, allow_unknown_field=allow_unknown_field)  # type: ignore[no-any-return]

    def __contains__(self, field_name: object) -> bool:
        """`"field" in msg` is `msg.HasField("field")`, as in Google's upb (a field without
        presence raises `ValueError`); for a `ListValue`, whether it holds the value."""
        if type(self).DESCRIPTOR.full_name == "google.protobuf.ListValue":
            return any(v is field_name or v == field_name for v in self)  # type: ignore[attr-defined]
        return self.HasField(field_name)  # type: ignore[arg-type]

    def __str__(self) -> str:
        # Through the base class: a field named `to_text` hides the method on its class.
        return _NativeMessage.to_text(self)

    __repr__ = __str__

    # --- extensions, as Google's API has them -------------------------------------------------

    @property
    def Extensions(self) -> Extensions:
        """The message's extensions by their descriptor: `m.Extensions[ns.pkg.ext]`."""
        return Extensions(self)

    def HasExtension(self, extension: FieldDescriptor) -> bool:
        return self.HasField(_extension_key(self, extension))

    def ClearExtension(self, extension: FieldDescriptor) -> None:
        self.ClearField(_extension_key(self, extension))

    def to_google(self, cls: Any = None) -> Any:
        """This message as a message of Google's protobuf (through its bytes): of class
        `cls`, or of the class Google's default descriptor pool has for this type (the
        `_pb2` module defining it must have been imported)."""
        if cls is None:
            from google.protobuf import (  # type: ignore[import-untyped]
                descriptor_pool,
                message_factory,
            )

            full = type(self).DESCRIPTOR.full_name
            try:
                desc = descriptor_pool.Default().FindMessageTypeByName(full)
            except KeyError:
                raise TypeError(
                    f"Google's protobuf knows no message type {full}: import its _pb2 module, "
                    "or pass the class"
                ) from None
            cls = message_factory.GetMessageClass(desc)
        if cls.DESCRIPTOR.full_name != type(self).DESCRIPTOR.full_name:
            raise TypeError(
                f"cannot convert a {type(self).DESCRIPTOR.full_name} message to "
                f"{cls.DESCRIPTOR.full_name}"
            )
        return cls.FromString(self.SerializePartialToString())

    @classmethod
    def from_google(cls, message: Any) -> Self:
        """A message of this class from a message of Google's protobuf of the same type."""
        if message.DESCRIPTOR.full_name != cls.DESCRIPTOR.full_name:
            raise TypeError(
                f"cannot convert a {message.DESCRIPTOR.full_name} message to "
                f"{cls.DESCRIPTOR.full_name}"
            )
        return cls.FromString(message.SerializePartialToString())

    def __reduce__(self) -> tuple[Any, ...]:
        return (_unpickle, (type(self).DESCRIPTOR.full_name, self.SerializePartialToString()))

    def __getstate__(self) -> dict[str, bytes]:
        """`{"serialized": the message's bytes}`, as Google's messages give (pickling itself
        goes through `__reduce__`)."""
        return {"serialized": self.SerializePartialToString()}

    def __setstate__(self, state: dict[str, bytes]) -> None:
        """Replace the contents with those of a `__getstate__()` dict."""
        if not isinstance(state, dict) or "serialized" not in state:
            raise TypeError(
                f"{type(self).DESCRIPTOR.full_name}.__setstate__ takes a dict with the key "
                f"'serialized' (what __getstate__ gives), not {type(state).__name__}"
            )
        data = state["serialized"]
        if isinstance(data, str):  # as Google's: a str holds the bytes as latin-1
            data = data.encode("latin-1")
        self.Clear()
        self.ParseFromString(data)

    def __copy__(self) -> Self:
        m = type(self)()
        m.CopyFrom(self)
        return m

    def __deepcopy__(self, memo: Any = None) -> Self:
        return self.__copy__()


def _utf8_text(data: bytes) -> str:
    """`data` read as UTF-8; invalid UTF-8 raises `DecodeError` saying where (line:col as the
    text format's errors do, and `offset`, the byte)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        before = data[: e.start].decode("utf-8")
        line = before.count("\n") + 1
        col = len(before) - (before.rfind("\n") + 1) + 1
        err = DecodeError(f"{line}:{col} : invalid UTF-8 (byte {e.start})")
        err.kind = "malformed"
        err.offset = e.start
        err.path = "$"
        raise err from None


def _extension_key(m: Message, extension: Any) -> str:
    """The name a message knows extension `extension` by (`[pkg.ext]`), once it is checked to
    be an extension of the message's type."""
    if not isinstance(extension, FieldDescriptor) or not extension.is_extension:
        raise KeyError(f"Extension {extension!r} is not an extension field descriptor")
    descriptor = type(m).DESCRIPTOR
    if extension.containing_type is not descriptor:
        raise KeyError(
            f'Extension "{extension.full_name}" extends message type '
            f'"{extension.containing_type.full_name}", but this message is of '
            f'"{descriptor.full_name}".'
        )
    return f"[{extension.full_name}]"


class Extensions:
    """A message's extensions, keyed by their `FieldDescriptor` (as Google's
    `message.Extensions`): reading an unset one gives its default (a default message, an empty
    repeated container), assigning sets a scalar, `del` clears it, `in` tells whether it is set,
    and iterating gives the descriptors of the extensions set."""

    __slots__ = ("_message",)

    def __init__(self, message: Message) -> None:
        self._message = message

    def __getitem__(self, extension: FieldDescriptor) -> Any:
        _extension_key(self._message, extension)
        accessor = extension._accessor
        return accessor.__get__(self._message, type(self._message))

    def __setitem__(self, extension: FieldDescriptor, value: Any) -> None:
        _extension_key(self._message, extension)
        if extension.is_repeated or extension.message_type is not None:
            raise TypeError(
                f"Cannot assign to extension {extension.full_name!r} because it is a repeated or "
                "composite type."
            )
        extension._accessor.__set__(self._message, value)

    def __delitem__(self, extension: FieldDescriptor) -> None:
        self._message.ClearField(_extension_key(self._message, extension))

    def __contains__(self, extension: FieldDescriptor) -> bool:
        key = _extension_key(self._message, extension)
        if extension.is_repeated:
            return len(self[extension]) > 0
        return self._message.HasField(key)

    def __iter__(self) -> Iterator[FieldDescriptor]:
        return (f for f, _ in self._message.ListFields() if f.is_extension)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def _FindExtensionByName(self, name: str) -> FieldDescriptor | None:
        found = type(self._message).DESCRIPTOR._extensions_by_full_name  # type: ignore[attr-defined]
        return found.get(name)  # type: ignore[no-any-return]

    def _FindExtensionByNumber(self, number: int) -> FieldDescriptor | None:
        for f in type(self._message).DESCRIPTOR._by_position:  # type: ignore[attr-defined]
            if f.is_extension and f.number == number:
                return f  # type: ignore[no-any-return]
        return None


class EnumType:
    """An enum: values as attributes (`Color.RED == 0`), `Name(number)`, `Value(name)`,
    `keys()`, `values()`, `items()` and `DESCRIPTOR`, as Google's `EnumTypeWrapper`."""

    def __init__(self, descriptor: EnumDescriptor) -> None:
        self.DESCRIPTOR = descriptor
        for v in descriptor.values:
            setattr(self, v.name, v.number)

    def Name(self, number: int) -> str:
        v = self.DESCRIPTOR.values_by_number.get(number)
        if v is None:
            raise ValueError(
                f"Enum {self.DESCRIPTOR.name} has no name defined for value {number!r}"
            )
        return v.name

    def Value(self, name: str) -> int:
        v = self.DESCRIPTOR.values_by_name.get(name)
        if v is None:
            raise ValueError(f"Enum {self.DESCRIPTOR.name} has no value defined for name {name!r}")
        return v.number

    def keys(self) -> list[str]:
        return [v.name for v in self.DESCRIPTOR.values]

    def values(self) -> list[int]:
        return [v.number for v in self.DESCRIPTOR.values]

    def items(self) -> list[tuple[str, int]]:
        return [(v.name, v.number) for v in self.DESCRIPTOR.values]

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __repr__(self) -> str:
        return f"<enum {self.DESCRIPTOR.full_name}>"


class Namespace(types.SimpleNamespace):
    """What `load` returns: message classes, enums and nested package namespaces as
    attributes. `descriptor_set()` gives the compiled `FileDescriptorSet` bytes (imports
    included); `types` maps full names to classes. A package's namespace answers both for
    the whole load, as the root does."""

    def descriptor_set(self) -> bytes:
        return self.__dict__["_schema"].descriptor_set()  # type: ignore[no-any-return]

    @property
    def types(self) -> dict[str, type[Message]]:
        return dict(self.__dict__["_types"])

    def types_files(self) -> list[str]:
        """The `.proto` files loaded (imports included), in dependency order."""
        seen: dict[str, None] = {}
        for cls in self.__dict__["_types"].values():
            seen.setdefault(cls.DESCRIPTOR.file_name)
        return list(seen)

    def __repr__(self) -> str:
        names = sorted(k for k in self.__dict__ if not k.startswith("_"))
        return f"<amber.proto namespace: {', '.join(names)}>"


# Full name -> class, of every load in this process (latest wins): what unpickling uses.
_LOADED: dict[str, type[Message]] = {}
_LOADED_LOCK = threading.Lock()


def _unpickle(full_name: str, data: bytes) -> Message:
    cls = _LOADED.get(full_name)
    if cls is None:
        raise DecodeError(
            f"cannot unpickle a {full_name} message: no loaded .proto defines it in this "
            "process (call amber.proto.load first)"
        )
    return cls.FromString(data)


def _split_files(files: Iterable[str | os.PathLike[str]], include: list[str]) -> list[str]:
    """Import names for `files`: a path under an include directory becomes its name there;
    another existing file adds its own directory to the include path; anything else is
    taken as an import name to search for."""
    names = []
    for f in files:
        p = os.fspath(f)
        if os.path.isfile(p):
            full = os.path.abspath(p)
            for d in include:
                root = os.path.abspath(d)
                if full.startswith(root + os.sep):
                    names.append(os.path.relpath(full, root).replace(os.sep, "/"))
                    break
            else:
                include.append(os.path.dirname(full))
                names.append(os.path.basename(full))
        else:
            names.append(p.replace(os.sep, "/"))
    return names


def load(
    *files: str | os.PathLike[str], include: Iterable[str | os.PathLike[str]] = ()
) -> Namespace:
    """Compile `.proto` files and return their message classes and enums.

    `include` lists import directories, searched in order like protoc's `-I`; a file
    outside them has its own directory searched too. `google/protobuf/*.proto` are built
    in. A file that does not compile raises `SchemaError` saying file:line:col."""
    inc = [os.fspath(d) for d in include]
    names = _split_files(files, inc)
    return _namespace(ProtoSchema.compile(names, inc))


def load_text(
    source: str | bytes,
    *,
    name: str = "source.proto",
    include: Iterable[str | os.PathLike[str]] = (),
) -> Namespace:
    """Compile `.proto` text held in memory (as file `name`; its imports are searched in
    `include`)."""
    data = source.encode() if isinstance(source, str) else bytes(source)
    inc = [os.fspath(d) for d in include]
    return _namespace(ProtoSchema.compile_sources([name], {name: data}, inc))


def load_descriptor_set(data: bytes) -> Namespace:
    """The classes of a serialized `FileDescriptorSet` (as `protoc --include_imports
    --descriptor_set_out` writes, or `Namespace.descriptor_set()` gives)."""
    return _namespace(ProtoSchema.from_descriptor_set(data))


# amber's own classes for google/protobuf/descriptor.proto, loaded when a load without that
# file first needs its descriptor set decoded (for reflection), and not registered for
# unpickling (the user's loads are).
_DESCRIPTOR_PROTO: Namespace | None = None
_DESCRIPTOR_PROTO_LOCK = threading.Lock()


def _descriptor_set_class(classes: dict[str, type[Message]]) -> Any:
    """The `FileDescriptorSet` class to decode a load's descriptor set with: the load's own,
    if it has `descriptor.proto` (so that its custom options read as extensions), else
    amber's."""
    own = classes.get("google.protobuf.FileDescriptorSet")
    if own is not None:
        return own
    global _DESCRIPTOR_PROTO
    with _DESCRIPTOR_PROTO_LOCK:
        if _DESCRIPTOR_PROTO is None:
            schema = ProtoSchema.compile(["google/protobuf/descriptor.proto"], [])
            _DESCRIPTOR_PROTO = _namespace(schema, register=False)
        return _DESCRIPTOR_PROTO.types["google.protobuf.FileDescriptorSet"]


def _namespace(schema: ProtoSchema, *, register: bool = True) -> Namespace:
    messages = schema.messages()
    enums = schema.enums()
    files = schema.message_files()
    descs: list[Descriptor] = [
        Descriptor(full, entry, file)
        for (full, _f, _o, entry), file in zip(messages, files, strict=True)
    ]
    edescs = [EnumDescriptor(full, closed, values) for full, closed, values in enums]
    by_name: dict[str, Descriptor | EnumDescriptor] = {d.full_name: d for d in descs}
    by_name.update({e.full_name: e for e in edescs})
    classes: dict[str, type[Message]] = {}
    source = _Source(schema.descriptor_set, lambda: _descriptor_set_class(classes), by_name)
    for d in descs:
        d._source = source
    for e in edescs:
        e._source = source
    for d, (_full, fields, oneofs, _entry) in zip(descs, messages, strict=True):
        d.oneofs = [OneofDescriptor(d, n, i) for i, n in enumerate(oneofs)]
        by_pos = []
        for name, number, json_name, kind, index, label, oneof, presence, packed in fields:
            f = FieldDescriptor(d, name, number, json_name, kind, label, presence, packed)
            if kind == "message" and index is not None:
                f.message_type = descs[index]
            elif kind == "enum" and index is not None:
                f.enum_type = edescs[index]
            if oneof is not None:
                f.containing_oneof = d.oneofs[oneof]
                d.oneofs[oneof]._members.append(f)
            by_pos.append(f)
        d._numbered = [f for f in by_pos if not f.is_extension]
        d._by_position = by_pos  # type: ignore[attr-defined]
    # Extensions, found in the types they extend, belong to the scope declaring them.
    extensions = [
        (ty, pos, f)
        for ty, d in enumerate(descs)
        for pos, f in enumerate(d._by_position)  # type: ignore[attr-defined]
        if f.is_extension
    ]
    for _ty, _pos, f in extensions:
        source.extensions[f.full_name] = f
        scope = by_name.get(f.full_name.rsplit(".", 1)[0])
        if isinstance(scope, Descriptor):
            f.extension_scope = scope
            scope.extensions.append(f)
    # Nesting: a type's parent is the longest full-name prefix that is a message.
    every: list[Descriptor | EnumDescriptor] = [*descs, *edescs]
    for t in every:
        parent = by_name.get(t.full_name.rsplit(".", 1)[0]) if "." in t.full_name else None
        if isinstance(parent, Descriptor):
            t.containing_type = parent
            if isinstance(t, Descriptor):
                parent.nested_types.append(t)
            else:
                parent.enum_types.append(t)
    for d in descs:
        d._index()

    enum_objs = {e.full_name: EnumType(e) for e in edescs}
    # Parents before children: the order of the schema (files, then nesting, pre-order).
    for ty, d in enumerate(descs):
        ns: dict[str, Any] = {
            "__slots__": (),
            "__module__": "amber.proto.loaded",
            "__qualname__": _qualname(d),
            "__amber__": schema.message_type(ty),
            "DESCRIPTOR": d,
        }
        for pos, f in enumerate(d._by_position):  # type: ignore[attr-defined]
            if not f.is_extension:
                ns[f.name] = schema.field(ty, pos)
        mixin = _wkt.MIXINS.get(d.full_name)
        bases: tuple[type, ...] = (mixin, Message) if mixin is not None else (Message,)
        cls = type(d.name, bases, ns)
        d._concrete_class = cls
        schema.bind(ty, cls)
        classes[d.full_name] = cls
    # An extension's handle is its descriptor: a class attribute of the type declaring it, or an
    # attribute of its package (below), as in protoc's generated modules.
    for ty, pos, f in extensions:
        f._accessor = schema.field(ty, pos)
        if f.extension_scope is not None:
            setattr(classes[f.extension_scope.full_name], f.name, f)
    for d in descs:
        d._extensions_by_full_name = {  # type: ignore[attr-defined]
            f.full_name: f
            for f in d._by_position  # type: ignore[attr-defined]
            if f.is_extension
        }
    for d in descs:
        cls = classes[d.full_name]
        for n in d.nested_types:
            setattr(cls, n.name, classes[n.full_name])
        for e in d.enum_types:
            setattr(cls, e.name, enum_objs[e.full_name])
            for v in e.values:
                if v.name not in cls.__dict__:
                    setattr(cls, v.name, v.number)

    # Every namespace of a load, the packages' too, answers for the whole load.
    hidden = {"_schema": schema, "_types": classes, "_enums": enum_objs}
    root = Namespace()
    root.__dict__.update(hidden)
    top: list[tuple[str, Any]] = [
        (d.full_name, classes[d.full_name]) for d in descs if d.containing_type is None
    ]
    top += [(e.full_name, enum_objs[e.full_name]) for e in edescs if e.containing_type is None]
    top += [(f.full_name, f) for _ty, _pos, f in extensions if f.extension_scope is None]
    for full, obj in top:
        *pkg, short = full.split(".")
        space = root
        for part in pkg:
            nxt = space.__dict__.get(part)
            if not isinstance(nxt, Namespace):
                nxt = Namespace()
                nxt.__dict__.update(hidden)
                space.__dict__[part] = nxt
            space = nxt
        space.__dict__[short] = obj
        if isinstance(obj, EnumType):
            for v in obj.DESCRIPTOR.values:
                space.__dict__.setdefault(v.name, v.number)
    if register:
        with _LOADED_LOCK:
            _LOADED.update(classes)
    return root


def _qualname(d: Descriptor) -> str:
    names = []
    t: Descriptor | None = d
    while t is not None:
        names.append(t.name)
        t = t.containing_type
    return ".".join(reversed(names))
