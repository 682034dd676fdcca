"""Reflection for loaded types: `Message.DESCRIPTOR` and friends, shaped like Google's
`google.protobuf.descriptor` objects (names, numbers, types and labels use Google's numeric
constants), built once per load from the compiled schema."""

from __future__ import annotations

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


class FieldDescriptor:
    """One field: `name`, `full_name`, `number`, `type`, `label`, `json_name`,
    `message_type` or `enum_type`, `containing_type`, `containing_oneof`, `has_presence`."""

    TYPE_DOUBLE, TYPE_FLOAT, TYPE_INT64, TYPE_UINT64, TYPE_INT32 = 1, 2, 3, 4, 5
    TYPE_FIXED64, TYPE_FIXED32, TYPE_BOOL, TYPE_STRING, TYPE_GROUP = 6, 7, 8, 9, 10
    TYPE_MESSAGE, TYPE_BYTES, TYPE_UINT32, TYPE_ENUM, TYPE_SFIXED32 = 11, 12, 13, 14, 15
    TYPE_SFIXED64, TYPE_SINT32, TYPE_SINT64 = 16, 17, 18
    LABEL_OPTIONAL, LABEL_REQUIRED, LABEL_REPEATED = 1, 2, 3

    is_extension = False
    # For an extension: the message type it is declared in (None at file level), and the
    # native accessor of its slot in the messages it extends.
    extension_scope: Descriptor | None = None
    _accessor: Any = None

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
            json_name = self.name
        else:
            self.name = name
            self.full_name = f"{containing_type.full_name}.{name}"
        self.number = number
        self.json_name = json_name
        self.type = _TYPES[kind]
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

    def __repr__(self) -> str:
        return f"<FieldDescriptor {self.full_name} = {self.number}>"


class OneofDescriptor:
    """A oneof: `name`, `full_name`, `index`, `fields`, `containing_type`."""

    def __init__(self, containing_type: Descriptor, name: str, index: int) -> None:
        self.containing_type = containing_type
        self.name = name
        self.full_name = f"{containing_type.full_name}.{name}"
        self.index = index
        self.fields: list[FieldDescriptor] = []

    def __repr__(self) -> str:
        return f"<OneofDescriptor {self.full_name}>"


class EnumValueDescriptor:
    """One enum value: `name`, `number`, `type`."""

    def __init__(self, enum: EnumDescriptor, name: str, number: int, index: int) -> None:
        self.type = enum
        self.name = name
        self.number = number
        self.index = index

    def __repr__(self) -> str:
        return f"<EnumValueDescriptor {self.name} = {self.number}>"


class EnumDescriptor:
    """An enum: `name`, `full_name`, `values`, `values_by_name`, `values_by_number`,
    `is_closed`, `containing_type`."""

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

    def __repr__(self) -> str:
        return f"<EnumDescriptor {self.full_name}>"


class Descriptor:
    """A message type: `name`, `full_name`, `fields`, `fields_by_name`, `fields_by_number`,
    `fields_by_camelcase_name`, `extensions` (declared in it), `extensions_by_name`,
    `oneofs`, `oneofs_by_name`, `nested_types`,
    `nested_types_by_name`, `enum_types`, `enum_types_by_name`, `containing_type`,
    `file_name` (the `.proto` file declaring it), `_concrete_class`."""

    def __init__(self, full_name: str, map_entry: bool, file_name: str = "") -> None:
        self.full_name = full_name
        self.file_name = file_name
        self.name = full_name.rsplit(".", 1)[-1]
        self.fields: list[FieldDescriptor] = []
        # Extensions declared inside this type (of any type they extend).
        self.extensions: list[FieldDescriptor] = []
        self.oneofs: list[OneofDescriptor] = []
        self.nested_types: list[Descriptor] = []
        self.enum_types: list[EnumDescriptor] = []
        self.containing_type: Descriptor | None = None
        self.is_map_entry = map_entry
        self._concrete_class: Any = None

    def _index(self) -> None:
        self.fields_by_name = {f.name: f for f in self.fields}
        self.fields_by_number = {f.number: f for f in self.fields}
        self.fields_by_camelcase_name = {f.json_name: f for f in self.fields}
        self.oneofs_by_name = {o.name: o for o in self.oneofs}
        self.nested_types_by_name = {t.name: t for t in self.nested_types}
        self.enum_types_by_name = {e.name: e for e in self.enum_types}
        self.enum_values_by_name = {v.name: v for e in self.enum_types for v in e.values}
        self.extensions_by_name = {f.name: f for f in self.extensions}

    def GetOptions(self) -> None:
        return None

    def __repr__(self) -> str:
        return f"<Descriptor {self.full_name}>"
