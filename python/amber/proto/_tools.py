"""What `amber proto stubs` does: typing stubs (`.pyi`) for the message classes of loaded
`.proto` files, which `mypy --strict` and pyright accept for whatever the runtime accepts.

The stub is for a module binding the top-level messages and enums of the files by their short
names, as Google's `_pb2` modules do (`Order = ns.shop.Order`). Its classes have keyword-only
constructors taking what amber takes (a message or a dict for a message field, any iterable
for a repeated field, a `datetime` for a Timestamp, ...), typed attributes (scalars as `int`,
`float`, `bool`, `str`, `bytes`, sub-messages as their classes, repeated fields and maps as
generic containers), setters where assignment takes more than reading gives, and the
well-known types with their helpers (`ToDatetime`, `Pack`, ...). Messages of files not
stubbed (imports, well-known types) get private classes in the same stub."""

from __future__ import annotations

import json
import keyword
from collections.abc import Iterator

from amber.proto import EnumType, Message, Namespace
from amber.proto._descriptors import Descriptor, EnumDescriptor, FieldDescriptor

# Module aliases the stub refers to everything through, so that a field named `str`, `int`,
# `property` or `Mapping` cannot hide what the annotations after it mean.
_ALIASES = {
    "builtins": "_builtins",
    "abc": "_abc",
    "datetime": "_datetime",
    "typing": "_typing",
    "proto": "_proto",
}

_SCALARS = {
    FieldDescriptor.TYPE_DOUBLE: "float",
    FieldDescriptor.TYPE_FLOAT: "float",
    FieldDescriptor.TYPE_BOOL: "bool",
    FieldDescriptor.TYPE_STRING: "str",
    FieldDescriptor.TYPE_BYTES: "bytes",
}
# What a scalar field takes besides its own type (as amber checks it): a bool field takes any
# int, a string field UTF-8 bytes, a bytes field a bytearray.
_SCALAR_EXTRA = {"bool": ["int"], "str": ["bytes"], "bytes": ["bytearray"]}

# Well-known types that take a Python value in the constructor, in a repeated field or a map,
# and by assignment (the rest take their message or a dict of its fields).
_WKT_VALUES = {
    "google.protobuf.Timestamp": ["{d}.datetime"],
    "google.protobuf.Duration": ["{d}.timedelta"],
    "google.protobuf.ListValue": ["{b}.list[{t}.Any]", "{b}.tuple[{t}.Any, ...]"],
}
_ASSIGNABLE = {
    "google.protobuf.Timestamp",
    "google.protobuf.Duration",
    "google.protobuf.Struct",
    "google.protobuf.ListValue",
}

# The helpers amber mixes into the well-known types' classes (amber.proto._wkt), typed.
# `{name}` is the class's own name in the stub, `{Timestamp}` and the like another one's.
_WKT_METHODS = {
    "google.protobuf.Any": """
def Pack(self, msg: {p}.Message, type_url_prefix: {b}.str = ..., deterministic: {b}.bool | None = ...) -> None: ...
def Unpack(self, msg: {p}.Message) -> {b}.bool: ...
def TypeName(self) -> {b}.str: ...
def Is(self, descriptor: {p}.Descriptor) -> {b}.bool: ...
""",
    "google.protobuf.Timestamp": """
{seconds}
def GetCurrentTime(self) -> None: ...
def ToDatetime(self, tzinfo: {d}.tzinfo | None = None) -> {d}.datetime: ...
def FromDatetime(self, dt: {d}.datetime) -> None: ...
def __add__(self, value: {Duration} | {d}.timedelta) -> {d}.datetime: ...
def __radd__(self, value: {Duration} | {d}.timedelta) -> {d}.datetime: ...
@{t}.overload
def __sub__(self, value: {name} | {d}.datetime) -> {d}.timedelta: ...
@{t}.overload
def __sub__(self, value: {Duration} | {d}.timedelta) -> {d}.datetime: ...
def __rsub__(self, value: {d}.datetime) -> {d}.timedelta: ...
""",
    "google.protobuf.Duration": """
{seconds}
def ToTimedelta(self) -> {d}.timedelta: ...
def FromTimedelta(self, td: {d}.timedelta) -> None: ...
@{t}.overload
def __add__(self, value: {Timestamp} | {d}.datetime) -> {d}.datetime: ...
@{t}.overload
def __add__(self, value: {name} | {d}.timedelta) -> {d}.timedelta: ...
@{t}.overload
def __radd__(self, value: {d}.datetime) -> {d}.datetime: ...
@{t}.overload
def __radd__(self, value: {d}.timedelta) -> {d}.timedelta: ...
def __sub__(self, value: {name} | {d}.timedelta) -> {d}.timedelta: ...
@{t}.overload
def __rsub__(self, value: {d}.datetime) -> {d}.datetime: ...
@{t}.overload
def __rsub__(self, value: {d}.timedelta) -> {d}.timedelta: ...
""",
    "google.protobuf.FieldMask": """
def ToJsonString(self) -> {b}.str: ...
def FromJsonString(self, value: {b}.str) -> None: ...
def IsValidForDescriptor(self, message_descriptor: {p}.Descriptor) -> {b}.bool: ...
def AllFieldsFromDescriptor(self, message_descriptor: {p}.Descriptor) -> None: ...
def CanonicalFormFromMask(self, mask: {name}) -> None: ...
def Union(self, mask1: {name}, mask2: {name}) -> None: ...
def Intersect(self, mask1: {name}, mask2: {name}) -> None: ...
def MergeMessage(self, source: {p}.Message, destination: {p}.Message, replace_message_field: {b}.bool = False, replace_repeated_field: {b}.bool = False) -> None: ...
""",
    "google.protobuf.Struct": """
def __getitem__(self, key: {b}.str) -> {t}.Any: ...
def __setitem__(self, key: {b}.str, value: {t}.Any) -> None: ...
def __delitem__(self, key: {b}.str) -> None: ...
def __contains__(self, key: {b}.object) -> {b}.bool: ...
def __len__(self) -> {b}.int: ...
def __iter__(self) -> {a}.Iterator[{b}.str]: ...
def keys(self) -> {b}.list[{b}.str]: ...
def values(self) -> {b}.list[{t}.Any]: ...
def items(self) -> {b}.list[{b}.tuple[{b}.str, {t}.Any]]: ...
def get_or_create_list(self, key: {b}.str) -> {ListValue}: ...
def get_or_create_struct(self, key: {b}.str) -> {name}: ...
def update(self, dictionary: {a}.Mapping[{b}.str, {t}.Any]) -> None: ...
""",
    "google.protobuf.ListValue": """
def __len__(self) -> {b}.int: ...
def append(self, value: {t}.Any) -> None: ...
def extend(self, elem_seq: {a}.Iterable[{t}.Any]) -> None: ...
def __getitem__(self, index: {b}.int) -> {t}.Any: ...
def __setitem__(self, index: {b}.int, value: {t}.Any) -> None: ...
def __delitem__(self, index: {b}.int) -> None: ...
def items(self) -> {a}.Iterator[{t}.Any]: ...
def add_struct(self) -> {Struct}: ...
def add_list(self) -> {name}: ...
""",
}
_SECONDS_METHODS = """
def ToJsonString(self) -> {b}.str: ...
def FromJsonString(self, value: {b}.str) -> None: ...
def ToNanoseconds(self) -> {b}.int: ...
def ToMicroseconds(self) -> {b}.int: ...
def ToMilliseconds(self) -> {b}.int: ...
def ToSeconds(self) -> {b}.int: ...
def FromNanoseconds(self, nanos: {b}.int) -> None: ...
def FromMicroseconds(self, micros: {b}.int) -> None: ...
def FromMilliseconds(self, millis: {b}.int) -> None: ...
def FromSeconds(self, seconds: {b}.int) -> None: ...
"""
# The well-known types a helper's signature names (they are in the stub when it is).
_WKT_NEEDS = {
    "google.protobuf.Timestamp": ["google.protobuf.Duration"],
    "google.protobuf.Duration": ["google.protobuf.Timestamp"],
    "google.protobuf.Struct": ["google.protobuf.ListValue"],
    "google.protobuf.ListValue": ["google.protobuf.Struct"],
}

# The generic containers, written into each stub. They are private, for type checkers only:
# at run time a repeated field is an amber.proto.RepeatedContainer and a map an
# amber.proto.MapContainer (final classes), which these describe by the values they hold.
# `_T` is what reading gives, `_In` what writing takes.
_CONTAINERS = """
{T} = {t}.TypeVar("{T}")
{In} = {t}.TypeVar("{In}")
{K} = {t}.TypeVar("{K}")
{M} = {t}.TypeVar("{M}", bound={p}.Message)
{D} = {t}.TypeVar("{D}")

class {Repeated}({t}.Generic[{T}, {In}]):
    \"\"\"A repeated field (an amber.proto.RepeatedContainer): list-like, of `{T}` values,
    taking `{In}` values.\"\"\"
    def __len__(self) -> {b}.int: ...
    def __iter__(self) -> {a}.Iterator[{T}]: ...
    def __contains__(self, v: {b}.object, /) -> {b}.bool: ...
    @{t}.overload
    def __getitem__(self, key: {t}.SupportsIndex, /) -> {T}: ...
    @{t}.overload
    def __getitem__(self, key: {b}.slice, /) -> {b}.list[{T}]: ...
    def __delitem__(self, key: {t}.SupportsIndex | {b}.slice, /) -> None: ...
    def __lt__(self, other: {b}.object, /) -> {b}.bool: ...
    def __le__(self, other: {b}.object, /) -> {b}.bool: ...
    def __gt__(self, other: {b}.object, /) -> {b}.bool: ...
    def __ge__(self, other: {b}.object, /) -> {b}.bool: ...
    def append(self, value: {In}) -> None: ...
    def extend(self, values: {a}.Iterable[{In}]) -> None: ...
    def insert(self, i: {t}.SupportsIndex, value: {In}) -> None: ...
    def pop(self, i: {t}.SupportsIndex = -1) -> {T}: ...
    def remove(self, value: {In}) -> None: ...
    def clear(self) -> None: ...
    def reverse(self) -> None: ...
    def index(self, value: {In}) -> {b}.int: ...
    def count(self, value: {In}) -> {b}.int: ...
    def sort(self, *, key: {a}.Callable[[{T}], {t}.Any] | None = None, reverse: {b}.bool = False) -> None: ...
    def MergeFrom(self, other: {a}.Iterable[{In}]) -> None: ...

class {RepeatedScalar}({Repeated}[{T}, {In}]):
    \"\"\"A repeated field of numbers, bools, strings, bytes or enums.\"\"\"
    @{t}.overload
    def __setitem__(self, key: {t}.SupportsIndex, value: {In}, /) -> None: ...
    @{t}.overload
    def __setitem__(self, key: {b}.slice, value: {a}.Iterable[{In}], /) -> None: ...

class {RepeatedComposite}({Repeated}[{M}, {In}]):
    \"\"\"A repeated message field: `add(**fields)` appends a new message; items are changed
    in place, not assigned.\"\"\"
    def add(self, **kwargs: {t}.Any) -> {M}: ...

class {Map}({t}.Generic[{K}, {T}, {In}]):
    \"\"\"A map field (an amber.proto.MapContainer): dict-like, `{K}` keys to `{T}` values,
    taking `{In}` values.\"\"\"
    def __len__(self) -> {b}.int: ...
    def __iter__(self) -> {a}.Iterator[{K}]: ...
    def __contains__(self, k: {b}.object, /) -> {b}.bool: ...
    def __getitem__(self, key: {K}, /) -> {T}: ...
    def __delitem__(self, key: {K}, /) -> None: ...
    def keys(self) -> {b}.list[{K}]: ...
    def values(self) -> {b}.list[{T}]: ...
    def items(self) -> {b}.list[{b}.tuple[{K}, {T}]]: ...
    @{t}.overload
    def get(self, key: {K}) -> {T} | None: ...
    @{t}.overload
    def get(self, key: {K}, default: {T} | {D}) -> {T} | {D}: ...
    @{t}.overload
    def pop(self, key: {K}, /) -> {T}: ...
    @{t}.overload
    def pop(self, key: {K}, default: {T} | {D}, /) -> {T} | {D}: ...
    def popitem(self) -> {b}.tuple[{K}, {T}]: ...
    def clear(self) -> None: ...
    def update(self, other: {a}.Mapping[{K}, {In}] | {a}.Iterable[{b}.tuple[{K}, {In}]] | None = None, /, **kwargs: {In}) -> None: ...
    def get_or_create(self, key: {K}) -> {T}: ...
    def setdefault(self, key: {K}, default: {In} | None = None) -> {T}: ...
    def MergeFrom(self, other: {Map}[{K}, {T}, {In}]) -> None: ...

class {ScalarMap}({Map}[{K}, {T}, {In}]):
    \"\"\"A map of numbers, bools, strings, bytes or enums.\"\"\"
    def __setitem__(self, key: {K}, value: {In}, /) -> None: ...

class {MessageMap}({Map}[{K}, {M}, {In}]):
    \"\"\"A map of messages: `m[key]` inserts a new message for a missing key; values are
    changed in place, not assigned.\"\"\"
"""


# The names of the stub's own classes and type variables (made unique like the aliases).
_OWN = [
    "Repeated",
    "RepeatedScalar",
    "RepeatedComposite",
    "Map",
    "ScalarMap",
    "MessageMap",
    "T",
    "In",
    "K",
    "M",
    "D",
]


def _package(full_name: str) -> str:
    return full_name.rsplit(".", 1)[0] if "." in full_name else ""


def _walk(ns: Namespace) -> Iterator[object]:
    """Everything bound on the namespace and its package namespaces (recursively)."""
    for key, value in vars(ns).items():
        if key.startswith("_"):
            continue
        if isinstance(value, Namespace):
            yield from _walk(value)
        else:
            yield value


def _usable(name: str) -> bool:
    """Whether a stub can name it (a Python keyword cannot be an attribute or a keyword)."""
    return not keyword.iskeyword(name)


class _Writer:
    def __init__(self, ns: Namespace, files: list[str] | None) -> None:
        classes = ns.types
        self.files = files
        self.tops: list[Descriptor] = [
            cls.DESCRIPTOR
            for cls in classes.values()
            if cls.DESCRIPTOR.containing_type is None
            and not cls.DESCRIPTOR.full_name.startswith("google.protobuf.")
            and (files is None or cls.DESCRIPTOR.file_name in files)
        ]
        self.all: dict[str, Descriptor] = {n: c.DESCRIPTOR for n, c in classes.items()}
        bound = list(_walk(ns))
        wanted = {_package(d.full_name) for d in self.tops}
        if not self.tops:  # files of enums and extensions only: every package loaded
            wanted = {
                _package(x.full_name)
                for x in (getattr(o, "DESCRIPTOR", o) for o in bound)
                if isinstance(x, (EnumDescriptor, FieldDescriptor))
                and not x.full_name.startswith("google.protobuf.")
            }
        self.enums: list[EnumDescriptor] = [
            e.DESCRIPTOR
            for e in bound
            if isinstance(e, EnumType)
            and e.DESCRIPTOR.containing_type is None
            and not e.DESCRIPTOR.full_name.startswith("google.protobuf.")
            and (files is None or _package(e.DESCRIPTOR.full_name) in wanted)
        ]
        # File-level extensions of the packages stubbed: module attributes, as in protoc's
        # modules (a descriptor set does not say which file declared an extension).
        self.extensions: list[FieldDescriptor] = [
            f
            for f in bound
            if isinstance(f, FieldDescriptor)
            and f.extension_scope is None
            and _package(f.full_name) in wanted
            and _usable(f.name)
        ]
        # Every identifier a stub may hold: the aliases and private names must not be one.
        self.taken: set[str] = set(dir(Message))
        for d in self.all.values():
            self.taken.add(d.name)
            self.taken.update(f.name for f in d.fields)
            self.taken.update(f.name for f in d.extensions)
            self.taken.update(e.name for e in d.enum_types)
            for e in d.enum_types:
                self.taken.update(v.name for v in e.values)
        for e in self.enums:
            self.taken.add(e.name)
            self.taken.update(v.name for v in e.values)
        self.alias = {k: self._fresh(v) for k, v in _ALIASES.items()}
        self.own = {k: self._fresh("_" + k) for k in _OWN}
        # Python names of the messages in the stub: public ones (the files' own), then the
        # private classes of the other messages their fields use (found while writing).
        self.names: dict[str, str] = {}
        for d in self.tops:
            self._name_all(d, d.name)
        self.private: list[Descriptor] = []
        # Aliases for a class whose name a member of the class using it hides.
        self.type_aliases: dict[str, str] = {}

    def _fresh(self, name: str) -> str:
        while name in self.taken:
            name += "_"
        self.taken.add(name)
        return name

    def _name_all(self, d: Descriptor, name: str) -> None:
        self.names[d.full_name] = name
        for n in d.nested_types:
            self._name_all(n, f"{name}.{n.name}")

    def fmt(self, text: str, **extra: str) -> str:
        a = self.alias
        return text.format(
            b=a["builtins"],
            a=a["abc"],
            d=a["datetime"],
            t=a["typing"],
            p=a["proto"],
            **self.own,
            **extra,
        )

    # --- types -------------------------------------------------------------------------------

    def message_ref(self, d: Descriptor, scope: set[str]) -> str:
        """The name of message type `d` in the stub, as seen from a class body whose own
        members are `scope`."""
        name = self.names.get(d.full_name)
        if name is None:
            top = d
            while top.containing_type is not None:
                top = top.containing_type
            short = top.name if top.full_name.startswith("google.protobuf.") else top.full_name
            self._name_all(top, self._fresh("_" + short.replace(".", "_")))
            self.private.append(top)
            for wkt in _WKT_NEEDS.get(top.full_name, []):
                if wkt in self.all:
                    self.message_ref(self.all[wkt], set())
            name = self.names[d.full_name]
        head = name.split(".", 1)[0]
        if head in scope:
            alias = self.type_aliases.get(name)
            if alias is None:
                alias = self._fresh("_" + name.replace(".", "_"))
                self.type_aliases[name] = alias
            return alias
        return name

    def read_type(self, f: FieldDescriptor, scope: set[str]) -> str:
        """What reading a single value of field `f` gives."""
        if f.message_type is not None:
            return self.message_ref(f.message_type, scope)
        if f.enum_type is not None:
            return self.fmt("{b}.int")
        return self.fmt("{b}." + _SCALARS.get(f.type, "int"))

    def in_type(self, f: FieldDescriptor, scope: set[str]) -> str:
        """What writing a single value of field `f` takes (constructor, containers)."""
        read = self.read_type(f, scope)
        if f.message_type is not None:
            extra = [self.fmt(t) for t in _WKT_VALUES.get(f.message_type.full_name, [])]
            return " | ".join([read, *extra, self.fmt("{a}.Mapping[{b}.str, {t}.Any]")])
        if f.enum_type is not None:
            return self.fmt("{b}.int | {b}.str")
        plain = _SCALARS.get(f.type, "int")
        return " | ".join([read, *(self.fmt("{b}." + t) for t in _SCALAR_EXTRA.get(plain, []))])

    def set_type(self, f: FieldDescriptor, scope: set[str]) -> str | None:
        """What assigning to singular field `f` takes, or None if it cannot be assigned."""
        if f.message_type is None:
            return self.in_type(f, scope)
        full = f.message_type.full_name
        if full not in _ASSIGNABLE:
            return None
        read = self.read_type(f, scope)
        if full == "google.protobuf.ListValue":
            return " | ".join([read, *(self.fmt(t) for t in _WKT_VALUES[full])])
        return self.in_type(f, scope)

    # --- writing -----------------------------------------------------------------------------

    def enum_class(self, e: EnumDescriptor, python_name: str) -> tuple[str, list[str]]:
        """A private class for enum `e`'s object (an amber.proto.EnumType with its values as
        attributes), and its lines."""
        cls = self._fresh("_" + python_name.replace(".", "_") + "_Enum")
        out = ["", f"class {cls}({self.alias['proto']}.EnumType):"]
        # A value named like a method of EnumType (`keys`) hides it at run time, as here.
        members = set(dir(EnumType))
        for v in e.values:
            if _usable(v.name):
                hides = "  # type: ignore[assignment]" if v.name in members else ""
                out.append(self.fmt(f"    {v.name}: {{b}}.int{hides}"))
        if len(out) == 2:
            out.append("    pass")
        return cls, out

    def message(
        self, d: Descriptor, depth: int, enum_lines: list[str], cls_name: str | None = None
    ) -> list[str]:
        pad = "    " * depth
        inner = pad + "    "
        b = self.alias["builtins"]
        t = self.alias["typing"]
        name = self.names[d.full_name]
        base = self.alias["proto"] + ".Message"
        out = ["", f"{pad}class {cls_name or d.name}({base}):"]
        fields = [f for f in d.fields if _usable(f.name)]
        scope = {f.name for f in fields}
        scope.update(n.name for n in d.nested_types)
        scope.update(e.name for e in d.enum_types)
        scope.update(v.name for e in d.enum_types for v in e.values)
        scope.update(x.name for x in d.extensions)
        inherited = set(dir(Message))
        for e in d.enum_types:
            cls, lines = self.enum_class(e, f"{name}.{e.name}")
            enum_lines += lines
            out.append(f"{inner}{e.name}: {t}.ClassVar[{cls}]")
            for v in e.values:
                if _usable(v.name):
                    hides = "  # type: ignore[assignment]" if v.name in inherited else ""
                    out.append(f"{inner}{v.name}: {t}.ClassVar[{b}.int]{hides}")
        for n in d.nested_types:
            if not n.is_map_entry:
                out += self.message(n, depth + 1, enum_lines)
        for x in d.extensions:
            if _usable(x.name):
                out.append(f"{inner}{x.name}: {t}.ClassVar[{self.alias['proto']}.FieldDescriptor]")
        params = []
        for f in fields:
            # A field named like a method of Message hides it at run time, as here.
            clash = f.name in inherited
            hides = "  # type: ignore[override]" if clash else ""
            if f.is_map:
                entry = f.message_type
                assert entry is not None
                key, value = entry.fields_by_number[1], entry.fields_by_number[2]
                k = self.read_type(key, scope)
                got, took = self.read_type(value, scope), self.in_type(value, scope)
                kind = self.own["MessageMap" if value.message_type is not None else "ScalarMap"]
                out.append(f"{inner}@{b}.property")
                out.append(f"{inner}def {f.name}(self) -> {kind}[{k}, {got}, {took}]: ...{hides}")
                params.append(self.fmt(f"{f.name}: {{a}}.Mapping[{k}, {took}] | None = ..."))
            elif f.is_repeated:
                got, took = self.read_type(f, scope), self.in_type(f, scope)
                composite = f.message_type is not None
                kind = self.own["RepeatedComposite" if composite else "RepeatedScalar"]
                out.append(f"{inner}@{b}.property")
                out.append(f"{inner}def {f.name}(self) -> {kind}[{got}, {took}]: ...{hides}")
                params.append(self.fmt(f"{f.name}: {{a}}.Iterable[{took}] | None = ..."))
            else:
                read, setter = self.read_type(f, scope), self.set_type(f, scope)
                if setter == read:
                    ignore = "  # type: ignore[assignment]" if clash else ""
                    out.append(f"{inner}{f.name}: {read}{ignore}")
                else:
                    if setter is None:
                        out.append(f"{inner}@{b}.property")
                        out.append(f"{inner}def {f.name}(self) -> {read}: ...{hides}")
                    else:
                        # mypy reports a property with a setter at its decorator, pyright at
                        # the setter.
                        out.append(f"{inner}@{b}.property{hides}")
                        out.append(f"{inner}def {f.name}(self) -> {read}: ...")
                        out.append(f"{inner}@{f.name}.setter")
                        ignore = "  # pyright: ignore[reportIncompatibleMethodOverride]"
                        out.append(
                            f"{inner}def {f.name}(self, value: {setter}) -> None: ..."
                            + (ignore if clash else "")
                        )
                params.append(f"{f.name}: {self.in_type(f, scope)} | None = ...")
        methods = _WKT_METHODS.get(d.full_name)
        if methods is not None:
            others = {
                w.rsplit(".", 1)[1]: self.message_ref(self.all[w], scope)
                for w in _WKT_NEEDS.get(d.full_name, [])
                if w in self.all
            }
            text = methods.replace("{seconds}", _SECONDS_METHODS)
            for w in _WKT_NEEDS.get(d.full_name, []):
                if w not in self.all:  # not loaded: no such value to take
                    text = text.replace("{" + w.rsplit(".", 1)[1] + "} | ", "")
            lines = self.fmt(text, name=name, **others).splitlines()
            out += [inner + line for line in lines if line.strip()]
        sig = ", ".join(["self", "*", *params]) if params else "self"
        out.append(f"{inner}def __init__({sig}) -> None: ...")
        return out

    def write(self) -> str:
        a = self.alias
        files = ", ".join(json.dumps(f) for f in self._files())
        head = [
            "# Generated by `amber proto stubs`: typing stubs for a module binding these files'",
            "# top-level messages and enums by their short names, for example:",
            "#",
            "#     import amber.proto",
            f'#     _ns = amber.proto.load({files}, include=["."])  # the -I directories',
        ]
        for d in self.tops:
            head.append(f"#     {d.name} = _ns.{d.full_name}")
        for e in self.enums:
            head.append(f"#     {e.name} = _ns.{e.full_name}")
            package = _package(e.full_name)
            for v in e.values:
                if _usable(v.name):
                    head.append(f"#     {v.name} = _ns.{package + '.' if package else ''}{v.name}")
        for x in self.extensions:
            head.append(f"#     {x.name} = _ns.{x.full_name}")
        body: list[str] = []
        enum_lines: list[str] = []
        for e in self.enums:
            cls, lines = self.enum_class(e, e.name)
            enum_lines += lines
            body.append(f"{e.name}: {cls}")
            body += [self.fmt(f"{v.name}: {{b}}.int") for v in e.values if _usable(v.name)]
        body += [f"{x.name}: {a['proto']}.FieldDescriptor" for x in self.extensions]
        for d in self.tops:
            body += self.message(d, 0, enum_lines)
        # Private classes: the messages of other files the stubbed ones use (and those theirs
        # use, found while writing them).
        i = 0
        while i < len(self.private):
            d = self.private[i]
            body += self.message(d, 0, enum_lines, self.names[d.full_name])
            i += 1
        tail = [f"{alias} = {name}" for name, alias in self.type_aliases.items()]
        text = "\n".join([self.fmt(_CONTAINERS), *enum_lines, "", *body, "", *tail])
        modules = ["builtins", "collections.abc", "datetime", "typing"]
        imports = [
            f"import {m} as {a[m.rsplit('.', 1)[-1]]}"
            for m in modules
            if f"{a[m.rsplit('.', 1)[-1]]}." in text
        ]
        parts = [*head, "", *imports, "", f"import amber.proto as {a['proto']}", text]
        return "\n".join(parts).rstrip() + "\n"

    def _files(self) -> list[str]:
        if self.files is not None:
            return self.files
        seen: dict[str, None] = {}
        for d in self.tops:
            seen.setdefault(d.file_name)
        return list(seen)


def stubs(ns: Namespace, files: list[str] | None = None) -> str:
    """A `.pyi` for a module that binds the top-level messages and enums of the loaded
    files by their short names (as Google's `_pb2` modules do), e.g. `Order = ns.shop.Order`.
    `files` limits it to the messages of those files (default: every type loaded that is
    not a `google.protobuf` well-known type)."""
    return _Writer(ns, files).write()
