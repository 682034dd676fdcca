"""Reflection for loaded types: `Message.DESCRIPTOR` and friends, shaped like Google's
`google.protobuf.descriptor` objects (names, numbers, types and labels use Google's numeric
constants), built once per load from the compiled schema.

What the schema's tables do not carry (declaration order, defaults, options, extension
ranges, files) is read from the load's compiled `FileDescriptorSet`, decoded with amber's own
classes for `google/protobuf/descriptor.proto` the first time reflection asks for it."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

# Google's FieldDescriptor.TYPE_* numbers, by the schema's kind names.
_TYPES = {
    "double": 1,
    "float": 2,
    "int64": 3,
    "uint64": 4,
    "int32": 5,
    "fixed64": 6,
    "fixed32": 7,
    "bool": 8,
    "string": 9,
    "group": 10,
    "message": 11,
    "bytes": 12,
    "uint32": 13,
    "enum": 14,
    "sfixed32": 15,
    "sfixed64": 16,
    "sint32": 17,
    "sint64": 18,
}

# Google's FieldDescriptor.CPPTYPE_* number of each TYPE_* number.
_CPP_TYPES = {
    1: 5,  # double
    2: 6,  # float
    3: 2,  # int64
    4: 4,  # uint64
    5: 1,  # int32
    6: 4,  # fixed64
    7: 3,  # fixed32
    8: 7,  # bool
    9: 9,  # string
    10: 10,  # group
    11: 10,  # message
    12: 9,  # bytes
    13: 3,  # uint32
    14: 8,  # enum
    15: 1,  # sfixed32
    16: 2,  # sfixed64
    17: 1,  # sint32
    18: 2,  # sint64
}


class _Source:
    """The compiled `FileDescriptorSet` of one load, decoded on first use (under a lock, once)
    into the protos of each file, message, enum and extension by full name. `data` gives
    the set's bytes, `fds_class` the `FileDescriptorSet` class to decode it with (the load's
    own when it has `descriptor.proto`, so that custom options read as its extensions)."""

    def __init__(
        self,
        data: Callable[[], bytes],
        fds_class: Callable[[], Any],
        types: dict[str, Any],
    ) -> None:
        self._data = data
        self._fds_class = fds_class
        # Full name -> Descriptor or EnumDescriptor, and -> extension FieldDescriptor.
        self.types = types
        self.extensions: dict[str, FieldDescriptor] = {}
        self._lock = threading.Lock()
        self._built = False
        self.files: dict[str, Any] = {}
        self.messages: dict[str, tuple[Any, str]] = {}
        self.enums: dict[str, tuple[Any, str]] = {}
        # Full name -> (FieldDescriptorProto, index in its scope's list, file name).
        self.extension_protos: dict[str, tuple[Any, int, str]] = {}
        self._file_objects: dict[str, FileDescriptor] = {}

    def _build(self) -> None:
        with self._lock:
            if self._built:
                return
            fds = self._fds_class().FromString(self._data())
            for fp in fds.file:
                name = fp.name
                self.files[name] = fp
                self._walk(fp, fp.package, name)
            self._built = True

    def _walk(self, scope: Any, prefix: str, file_name: str) -> None:
        join = (lambda n: f"{prefix}.{n}") if prefix else (lambda n: n)
        for i, xp in enumerate(scope.extension):
            self.extension_protos[join(xp.name)] = (xp, i, file_name)
        for ep in scope.enum_type:
            self.enums[join(ep.name)] = (ep, file_name)
        for mp in scope.message_type if hasattr(scope, "message_type") else scope.nested_type:
            full = join(mp.name)
            self.messages[full] = (mp, file_name)
            self._walk(mp, full, file_name)

    def message(self, full_name: str) -> Any:
        if not self._built:
            self._build()
        return self.messages[full_name][0]

    def enum(self, full_name: str) -> tuple[Any, str]:
        if not self._built:
            self._build()
        return self.enums[full_name]

    def extension(self, full_name: str) -> tuple[Any, int, str]:
        if not self._built:
            self._build()
        return self.extension_protos[full_name]

    def file(self, name: str) -> FileDescriptor:
        if not self._built:
            self._build()
        with self._lock:
            f = self._file_objects.get(name)
            if f is None:
                f = FileDescriptor(self, name, self.files[name])
                self._file_objects[name] = f
        return f


def _options(proto: Any) -> Any:
    """A copy of `proto.options` (a default options message when it has none) without its
    editions `features` (they are resolved, not options), as Google's upb `GetOptions()`
    gives."""
    opts = proto.options
    out = type(opts)()
    if proto.HasField("options"):
        out.CopyFrom(opts)
        out.ClearField("features")
    return out


def _json_name(name: str) -> str:
    """protoc's JSON name of a field named `name` (what an extension gets, having no
    `json_name` of its own): each `_` dropped and the letter after it in upper case."""
    out = []
    upper = False
    for c in name:
        if c == "_":
            upper = True
        elif upper:
            out.append(c.upper())
            upper = False
        else:
            out.append(c)
    return "".join(out)


_LENGTH_PREFIXED, _DELIMITED = 1, 2


def _encoding(options_holder: Any) -> int | None:
    """The `features.message_encoding` an element's options set, if they set it."""
    if not options_holder.HasField("options"):
        return None
    opts = options_holder.options
    if not opts.HasField("features") or not opts.features.HasField("message_encoding"):
        return None
    return int(opts.features.message_encoding)


class _WithOptions:
    """`GetOptions()` and `has_options` from the element's proto in the compiled set."""

    _opts: Any = None

    def _proto(self) -> Any:
        raise NotImplementedError

    @property
    def has_options(self) -> bool:
        return bool(self._proto().HasField("options"))

    def GetOptions(self) -> Any:
        """The element's options as a message of `google.protobuf.*Options` (the loaded
        `descriptor.proto`'s class when the load has it, so that custom options are read
        through `Extensions`), empty when the `.proto` set none."""
        if self._opts is None:
            self._opts = _options(self._proto())
        return self._opts


class FileDescriptor(_WithOptions):
    """A `.proto` file of a load: `name`, `package`, `dependencies`, `public_dependencies`,
    `message_types_by_name`, `enum_types_by_name`, `extensions_by_name` (top-level
    declarations), `serialized_pb` (its `FileDescriptorProto`), `GetOptions()`,
    `has_options`, `CopyToProto(proto)`."""

    def __init__(self, source: _Source, name: str, proto: Any) -> None:
        self._source = source
        self._file_proto = proto
        self.name = name
        self.package: str = proto.package
        prefix = f"{self.package}." if self.package else ""
        self.message_types_by_name = {
            mp.name: source.types[prefix + mp.name] for mp in proto.message_type
        }
        self.enum_types_by_name = {
            ep.name: source.types[prefix + ep.name] for ep in proto.enum_type
        }
        self.extensions_by_name = {
            xp.name: source.extensions[prefix + xp.name] for xp in proto.extension
        }
        self._dependency_names = list(proto.dependency)
        self._public = list(proto.public_dependency)

    def _proto(self) -> Any:
        return self._file_proto

    @property
    def dependencies(self) -> list[FileDescriptor]:
        return [self._source.file(n) for n in self._dependency_names]

    @property
    def public_dependencies(self) -> list[FileDescriptor]:
        return [self._source.file(self._dependency_names[i]) for i in self._public]

    @property
    def serialized_pb(self) -> bytes:
        return bytes(self._file_proto.SerializeToString())

    def CopyToProto(self, proto: Any) -> None:
        """Fill `proto` (a `FileDescriptorProto`, Google's or amber's) with this file."""
        proto.ParseFromString(self._file_proto.SerializeToString())

    def __repr__(self) -> str:
        return f"<FileDescriptor {self.name}>"


class FieldDescriptor(_WithOptions):
    """One field: `name`, `full_name`, `number`, `index`, `type`, `cpp_type`, `label`,
    `json_name`, `camelcase_name`, `default_value`, `has_default_value`, `message_type` or
    `enum_type`, `containing_type`, `containing_oneof`, `has_presence`, `is_extension`,
    `extension_scope`, `file`, `GetOptions()`, `has_options`."""

    TYPE_DOUBLE, TYPE_FLOAT, TYPE_INT64, TYPE_UINT64, TYPE_INT32 = 1, 2, 3, 4, 5
    TYPE_FIXED64, TYPE_FIXED32, TYPE_BOOL, TYPE_STRING, TYPE_GROUP = 6, 7, 8, 9, 10
    TYPE_MESSAGE, TYPE_BYTES, TYPE_UINT32, TYPE_ENUM, TYPE_SFIXED32 = 11, 12, 13, 14, 15
    TYPE_SFIXED64, TYPE_SINT32, TYPE_SINT64 = 16, 17, 18
    MAX_TYPE = 18
    CPPTYPE_INT32, CPPTYPE_INT64, CPPTYPE_UINT32, CPPTYPE_UINT64 = 1, 2, 3, 4
    CPPTYPE_DOUBLE, CPPTYPE_FLOAT, CPPTYPE_BOOL, CPPTYPE_ENUM = 5, 6, 7, 8
    CPPTYPE_STRING, CPPTYPE_MESSAGE = 9, 10
    CPPTYPE_BYTES = 9  # as Google's: bytes share the string C++ type
    MAX_CPPTYPE = 10
    LABEL_OPTIONAL, LABEL_REQUIRED, LABEL_REPEATED = 1, 2, 3
    MAX_LABEL = 3
    MAX_FIELD_NUMBER = (1 << 29) - 1

    is_extension = False
    # For an extension: the message type it is declared in (None at file level), and the
    # native accessor of its slot in the messages it extends.
    extension_scope: Descriptor | None = None
    _accessor: Any = None
    _default: Any = None
    _has_default = False
    _type_resolved = False
    _place: tuple[Any, int, str] | None = None

    def __init__(
        self,
        containing_type: Descriptor,
        name: str,
        number: int,
        json_name: str,
        kind: str,
        label: str,
        has_presence: bool,
        packed: bool,
    ) -> None:
        self.containing_type = containing_type
        if name.startswith("["):  # an extension: `[pkg.Scope.name]`
            self.is_extension = True
            self.full_name = name[1:-1]
            self.name = self.full_name.rsplit(".", 1)[-1]
            json_name = _json_name(self.name)
        else:
            self.name = name
            self.full_name = f"{containing_type.full_name}.{name}"
        self.number = number
        self.json_name = json_name
        self._type = _TYPES[kind]
        self.cpp_type = _CPP_TYPES[self._type]
        self.label = {
            "optional": self.LABEL_OPTIONAL,
            "required": self.LABEL_REQUIRED,
        }.get(label, self.LABEL_REPEATED)
        self.is_map = label == "map"
        self.has_presence = has_presence
        self.is_packed = packed
        self.message_type: Descriptor | None = None
        self.enum_type: EnumDescriptor | None = None
        self.containing_oneof: OneofDescriptor | None = None

    @property
    def is_repeated(self) -> bool:
        return self.label == self.LABEL_REPEATED

    @property
    def is_required(self) -> bool:
        return self.label == self.LABEL_REQUIRED

    @property
    def type(self) -> int:
        """Google's `TYPE_*` number; a group, or an editions field whose message encoding is
        `DELIMITED`, is `TYPE_GROUP`, as Google's upb has it."""
        if self._type == self.TYPE_MESSAGE and not self._type_resolved:
            if self._delimited():
                self._type = self.TYPE_GROUP
            self._type_resolved = True
        return self._type

    def _delimited(self) -> bool:
        fp, _index, file_name = self._where()
        if fp.type == self.TYPE_GROUP:
            return True
        source: _Source = self.containing_type._source
        file = source.files[file_name]
        if file.syntax != "editions" or self.is_map or self.containing_type.is_map_entry:
            return False
        # The nearest setting: the field's, its oneof's, the enclosing types' (for an
        # extension: those it is declared in), the file's; editions' default otherwise.
        found = _encoding(fp)
        if found is None and self.containing_oneof is not None:
            found = _encoding(self.containing_oneof._proto())
        scope = self.extension_scope if self.is_extension else self.containing_type
        while found is None and scope is not None:
            found = _encoding(source.message(scope.full_name))
            scope = scope.containing_type
        if found is None:
            found = _encoding(file)
        return found == _DELIMITED

    @property
    def camelcase_name(self) -> str:
        """The JSON name with its first letter in lower case, as Google's upb gives."""
        j = self.json_name
        return j[0].lower() + j[1:] if j[:1].isascii() and j[:1].isupper() else j

    def _where(self) -> tuple[Any, int, str]:
        """This field's proto, its index in its scope's list, and its file (found once, for
        all the fields of its type at a time)."""
        place = self._place
        if place is None:
            owner = self.containing_type
            source: _Source = owner._source
            if self.is_extension:
                place = source.extension(self.full_name)
            else:
                by_name = owner.fields_by_name
                for i, fp in enumerate(source.message(owner.full_name).field):
                    sibling = by_name.get(fp.name)
                    if sibling is not None:
                        sibling._place = (fp, i, owner.file_name)
                place = self._place
                if place is None:
                    raise LookupError(f"{self.full_name} is not in the compiled descriptor set")
            self._place = place
        return place

    def _proto(self) -> Any:
        return self._where()[0]

    @property
    def index(self) -> int:
        """The position in `containing_type.fields` (for an extension: among the extensions
        declared in the same scope)."""
        return self._where()[1]

    @property
    def file(self) -> FileDescriptor:
        return self.containing_type._source.file(self._where()[2])

    @property
    def has_default_value(self) -> bool:
        return bool(self._proto().HasField("default_value"))

    @property
    def default_value(self) -> Any:
        """Google's values: the declared default, else 0, 0.0, False, "", b"" or the enum's
        first value; `[]` for a repeated field, None for a message field."""
        if self.is_repeated:
            return []
        if self.cpp_type == self.CPPTYPE_MESSAGE:
            return None
        if not self._has_default:
            # The value an unset field reads as, from the runtime the messages use.
            cls = self.containing_type._concrete_class
            accessor = self._accessor if self.is_extension else cls.__dict__[self.name]
            self._default = accessor.__get__(cls(), cls)
            self._has_default = True
        return self._default

    def __repr__(self) -> str:
        return f"<FieldDescriptor {self.full_name} = {self.number}>"


class OneofDescriptor(_WithOptions):
    """A oneof: `name`, `full_name`, `index`, `fields`, `containing_type`, `GetOptions()`,
    `has_options`."""

    def __init__(self, containing_type: Descriptor, name: str, index: int) -> None:
        self.containing_type = containing_type
        self.name = name
        self.full_name = f"{containing_type.full_name}.{name}"
        self.index = index
        self._members: list[FieldDescriptor] = []
        self._ordered: list[FieldDescriptor] | None = None

    @property
    def fields(self) -> list[FieldDescriptor]:
        """The members, in the order of the `.proto`."""
        if self._ordered is None:
            self._ordered = sorted(self._members, key=lambda f: f.index)
        return self._ordered

    def _proto(self) -> Any:
        mp = self.containing_type._source.message(self.containing_type.full_name)
        return mp.oneof_decl[self.index]

    def __repr__(self) -> str:
        return f"<OneofDescriptor {self.full_name}>"


class EnumValueDescriptor(_WithOptions):
    """One enum value: `name`, `number`, `index`, `type`, `GetOptions()`, `has_options`."""

    def __init__(self, enum: EnumDescriptor, name: str, number: int, index: int) -> None:
        self.type = enum
        self.name = name
        self.number = number
        self.index = index

    def _proto(self) -> Any:
        return self.type._proto().value[self.index]

    def __repr__(self) -> str:
        return f"<EnumValueDescriptor {self.name} = {self.number}>"


class EnumDescriptor(_WithOptions):
    """An enum: `name`, `full_name`, `values`, `values_by_name`, `values_by_number`,
    `is_closed`, `containing_type`, `file`, `GetOptions()`, `has_options`,
    `CopyToProto(proto)`."""

    _source: _Source

    def __init__(self, full_name: str, closed: bool, values: list[tuple[str, int]]) -> None:
        self.full_name = full_name
        self.name = full_name.rsplit(".", 1)[-1]
        self.is_closed = closed
        self.containing_type: Descriptor | None = None
        self.values = [EnumValueDescriptor(self, n, v, i) for i, (n, v) in enumerate(values)]
        self.values_by_name = {v.name: v for v in self.values}
        self.values_by_number: dict[int, EnumValueDescriptor] = {}
        for v in self.values:
            self.values_by_number.setdefault(v.number, v)

    def _proto(self) -> Any:
        return self._source.enum(self.full_name)[0]

    @property
    def file(self) -> FileDescriptor:
        return self._source.file(self._source.enum(self.full_name)[1])

    def CopyToProto(self, proto: Any) -> None:
        """Fill `proto` (an `EnumDescriptorProto`, Google's or amber's) with this enum."""
        proto.ParseFromString(self._proto().SerializeToString())

    def __repr__(self) -> str:
        return f"<EnumDescriptor {self.full_name}>"


class Descriptor(_WithOptions):
    """A message type: `name`, `full_name`, `fields` (in the order of the `.proto`),
    `fields_by_name`, `fields_by_number`, `fields_by_camelcase_name`, `extensions`
    (declared in it), `extensions_by_name`, `oneofs`, `oneofs_by_name`, `nested_types`,
    `nested_types_by_name`, `enum_types`, `enum_types_by_name`, `enum_values_by_name`,
    `containing_type`, `is_extendable`, `extension_ranges`, `file`, `file_name` (the
    `.proto` file declaring it), `GetOptions()`, `has_options`, `EnumValueName`,
    `CopyToProto(proto)`, `_concrete_class`."""

    _source: _Source

    def __init__(self, full_name: str, map_entry: bool, file_name: str = "") -> None:
        self.full_name = full_name
        self.file_name = file_name
        self.name = full_name.rsplit(".", 1)[-1]
        # The fields by number (what the schema gives); `fields` orders them as declared.
        self._numbered: list[FieldDescriptor] = []
        self._declared: list[FieldDescriptor] | None = None
        # Extensions declared inside this type (of any type they extend).
        self.extensions: list[FieldDescriptor] = []
        self.oneofs: list[OneofDescriptor] = []
        self.nested_types: list[Descriptor] = []
        self.enum_types: list[EnumDescriptor] = []
        self.containing_type: Descriptor | None = None
        self.is_map_entry = map_entry
        self._concrete_class: Any = None

    def _index(self) -> None:
        self.fields_by_name = {f.name: f for f in self._numbered}
        self.fields_by_number = {f.number: f for f in self._numbered}
        self.fields_by_camelcase_name = {f.json_name: f for f in self._numbered}
        self.oneofs_by_name = {o.name: o for o in self.oneofs}
        self.nested_types_by_name = {t.name: t for t in self.nested_types}
        self.enum_types_by_name = {e.name: e for e in self.enum_types}
        self.enum_values_by_name = {v.name: v for e in self.enum_types for v in e.values}
        self.extensions_by_name = {f.name: f for f in self.extensions}

    @property
    def fields(self) -> list[FieldDescriptor]:
        """The fields (extensions aside) in the order of the `.proto`, as Google's."""
        if self._declared is None:
            self._declared = sorted(self._numbered, key=lambda f: f.index)
        return self._declared

    def _proto(self) -> Any:
        return self._source.message(self.full_name)

    @property
    def file(self) -> FileDescriptor:
        return self._source.file(self.file_name)

    @property
    def is_extendable(self) -> bool:
        return len(self._proto().extension_range) > 0

    @property
    def extension_ranges(self) -> list[tuple[int, int]]:
        """`(start, end)` of each `extensions` range, `end` excluded, as Google's."""
        return [(r.start, r.end) for r in self._proto().extension_range]

    def EnumValueName(self, enum: str, value: int) -> str:
        """The name of number `value` in the enum `enum` declared in this type."""
        return self.enum_types_by_name[enum].values_by_number[value].name

    def CopyToProto(self, proto: Any) -> None:
        """Fill `proto` (a `DescriptorProto`, Google's or amber's) with this type."""
        proto.ParseFromString(self._proto().SerializeToString())

    def __repr__(self) -> str:
        return f"<Descriptor {self.full_name}>"
