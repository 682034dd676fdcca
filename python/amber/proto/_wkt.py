"""Helpers on the well-known types, by Google's names: `Any.Pack/Unpack/Is/TypeName`,
`Timestamp` and `Duration` to and from `datetime`, `timedelta`, numbers and their JSON
strings (and `+`/`-` with them), `FieldMask` paths as JSON and as sets (union, intersection,
canonical form, merging masked fields), and `Struct`/`ListValue` used like a dict and a list.

Each class here is mixed into the message class of its type when a load includes it (the
well-known types are built into amber, so any `.proto` importing them gets these)."""

from __future__ import annotations

import datetime as _dt
import json
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Literal

from amber._native import EncodeError, ProtoDecodeError

_NANOS = 1_000_000_000
_EPOCH = _dt.datetime(1970, 1, 1)


class Any_:
    # The fields are the message class's own descriptors; mypy is told they may be set.
    if TYPE_CHECKING:
        __slots__ = ("type_url", "value")
    else:
        __slots__ = ()
    type_url: str
    value: bytes

    def Pack(
        self,
        msg: Any,
        type_url_prefix: str = "type.googleapis.com/",
        deterministic: bool | None = None,
    ) -> None:
        """Store `msg` in this Any: its type's URL and its bytes."""
        name = msg.DESCRIPTOR.full_name
        prefix = type_url_prefix if type_url_prefix.endswith("/") else type_url_prefix + "/"
        self.type_url = prefix + name
        self.value = msg.SerializeToString(deterministic=bool(deterministic))

    def Unpack(self, msg: Any) -> bool:
        """Parse the packed message into `msg` if it is of `msg`'s type; False otherwise."""
        if not self.Is(msg.DESCRIPTOR):
            return False
        msg.ParseFromString(self.value)
        return True

    def TypeName(self) -> str:
        """The packed type's full name (what follows the last `/` of the URL)."""
        return self.type_url.rpartition("/")[2]

    def Is(self, descriptor: Any) -> bool:
        """Whether the packed message is of `descriptor`'s type."""
        return "/" in self.type_url and self.TypeName() == descriptor.full_name


class _JsonString:
    """`ToJsonString`/`FromJsonString`: the type's ProtoJSON form as a plain string (RFC 3339
    for Timestamp, `"1.5s"` for Duration, camelCase paths for FieldMask), written and read by
    the core's ProtoJSON printer and parser."""

    __slots__ = ()

    def ToJsonString(self) -> str:
        try:
            text = self.to_json(indent=None)  # type: ignore[attr-defined]
        except EncodeError as e:  # an out-of-range value: Google raises ValueError
            raise ValueError(str(e)) from e
        value: str = json.loads(text)
        return value

    def FromJsonString(self, value: str) -> None:
        self.ParseFromJson(json.dumps(value))  # type: ignore[attr-defined]


class _Seconds(_JsonString):
    """Shared by Timestamp and Duration: `seconds` and `nanos` as one number of nanoseconds."""

    if TYPE_CHECKING:
        __slots__ = ("nanos", "seconds")
    else:
        __slots__ = ()
    seconds: int
    nanos: int

    def _set(self, total_nanos: int) -> None:
        raise NotImplementedError

    def _set_delta(self, delta: _dt.timedelta) -> None:
        self._set((delta.days * 86_400 + delta.seconds) * _NANOS + delta.microseconds * 1_000)

    # What assigning a value to a field of this type takes: the type's name, the Python type and
    # its name in Google's error message.
    _ASSIGNS: tuple[str, type, str] = ("", object, "")

    def _from_python(self, value: Any) -> None:
        raise NotImplementedError

    def _internal_assign(self, value: Any) -> None:
        """What assigning `value` to a field of this type does: one Python type only."""
        name, kind, what = self._ASSIGNS
        if not isinstance(value, kind):
            raise TypeError(
                f"Fail to convert to {name}. Expected a {what} object got {type(value).__name__}"
            )
        self._from_python(value)

    def ToNanoseconds(self) -> int:
        return self.seconds * _NANOS + self.nanos

    def _to(self, per: int) -> int:
        # Nanos round toward zero, as Google's do (a Duration's nanos may be negative).
        part = abs(self.nanos) // per
        return self.seconds * (_NANOS // per) + (part if self.nanos >= 0 else -part)

    def ToMicroseconds(self) -> int:
        return self._to(1_000)

    def ToMilliseconds(self) -> int:
        return self._to(1_000_000)

    def ToSeconds(self) -> int:
        return self.seconds

    def FromNanoseconds(self, nanos: int) -> None:
        self._set(int(nanos))

    def FromMicroseconds(self, micros: int) -> None:
        self._set(int(micros) * 1_000)

    def FromMilliseconds(self, millis: int) -> None:
        self._set(int(millis) * 1_000_000)

    def FromSeconds(self, seconds: int) -> None:
        self._set(int(seconds) * _NANOS)


class Timestamp(_Seconds):
    __slots__ = ()

    def _set(self, total_nanos: int) -> None:
        seconds, nanos = divmod(total_nanos, _NANOS)
        self.seconds, self.nanos = seconds, nanos

    def GetCurrentTime(self) -> None:
        self._set(time.time_ns())

    def ToDatetime(self, tzinfo: _dt.tzinfo | None = None) -> _dt.datetime:
        """A naive datetime in UTC, or an aware one in `tzinfo` (microseconds: the
        nanoseconds below a microsecond are dropped)."""
        naive = _EPOCH + _dt.timedelta(seconds=self.seconds, microseconds=self.nanos // 1_000)
        if tzinfo is None:
            return naive
        return naive.replace(tzinfo=_dt.timezone.utc).astimezone(tzinfo)

    def FromDatetime(self, dt: _dt.datetime) -> None:
        """From a datetime: naive ones are taken as UTC, aware ones converted to UTC."""
        if dt.tzinfo is not None:
            dt = dt.astimezone(_dt.timezone.utc).replace(tzinfo=None)
        self._set_delta(dt - _EPOCH)

    _ASSIGNS = ("Timestamp", _dt.datetime, "datetime")

    def _from_python(self, value: Any) -> None:
        self.FromDatetime(value)

    # Arithmetic as Google's: through naive UTC datetimes and timedeltas.
    def __add__(self, value: Any) -> _dt.datetime:
        if isinstance(value, Duration):
            value = value.ToTimedelta()
        return self.ToDatetime() + value  # type: ignore[no-any-return]

    __radd__ = __add__

    def __sub__(self, value: Any) -> Any:
        if isinstance(value, Timestamp):
            return self.ToDatetime() - value.ToDatetime()
        if isinstance(value, Duration):
            value = value.ToTimedelta()
        return self.ToDatetime() - value

    def __rsub__(self, value: Any) -> Any:
        return value - self.ToDatetime()


class Duration(_Seconds):
    __slots__ = ()

    def _set(self, total_nanos: int) -> None:
        sign = -1 if total_nanos < 0 else 1
        seconds, nanos = divmod(abs(total_nanos), _NANOS)
        self.seconds, self.nanos = sign * seconds, sign * nanos

    def ToTimedelta(self) -> _dt.timedelta:
        """As a timedelta (microseconds: the nanoseconds below a microsecond are dropped)."""
        return _dt.timedelta(seconds=self.seconds, microseconds=int(self.nanos / 1_000))

    def FromTimedelta(self, td: _dt.timedelta) -> None:
        self._set_delta(td)

    _ASSIGNS = ("Duration", _dt.timedelta, "timedelta")

    def _from_python(self, value: Any) -> None:
        self.FromTimedelta(value)

    # Arithmetic as Google's: through timedeltas (and datetimes for a Timestamp).
    def __add__(self, value: Any) -> Any:
        if isinstance(value, Timestamp):
            return self.ToTimedelta() + value.ToDatetime()
        return self.ToTimedelta() + value

    __radd__ = __add__

    def __sub__(self, value: Any) -> _dt.timedelta:
        return self.ToTimedelta() - value  # type: ignore[no-any-return]

    def __rsub__(self, value: Any) -> Any:
        return value - self.ToTimedelta()


# A FieldMask as a tree: each path's names as nested dicts; an empty dict is a leaf (the whole
# field), which covers every longer path under it.
_Tree = dict[str, "_Tree"]


def _tree(paths: Iterable[str]) -> _Tree:
    root: _Tree = {}
    for path in paths:
        _add_path(root, path)
    return root


def _add_path(root: _Tree, path: str) -> None:
    node = root
    for name in path.split("."):
        child = node.get(name)
        if child is None:
            child = node[name] = {}
        elif not child:
            return  # a shorter path already covers this one
        node = child
    node.clear()  # this path covers whatever was under it


def _paths(node: _Tree, prefix: str = "") -> Iterator[str]:
    """The tree's paths, sorted."""
    for name in sorted(node):
        path = f"{prefix}.{name}" if prefix else name
        if node[name]:
            yield from _paths(node[name], path)
        else:
            yield path


def _check_mask(mask: Any) -> None:
    if getattr(mask, "DESCRIPTOR", None) is None or (
        mask.DESCRIPTOR.full_name != "google.protobuf.FieldMask"
    ):
        name = getattr(getattr(mask, "DESCRIPTOR", None), "full_name", type(mask).__name__)
        raise ValueError(f"Message {name} is not a FieldMask.")


class FieldMask(_JsonString):
    """`paths` helpers by Google's names: validity for a message type, every field of a type,
    the canonical form (sorted, without paths another one covers), union, intersection, and
    merging the masked fields of one message into another."""

    if TYPE_CHECKING:
        __slots__ = ("paths",)
    else:
        __slots__ = ()
    paths: Any

    def _assign(self, paths: Iterable[str]) -> None:
        self.Clear()  # type: ignore[attr-defined]
        self.paths.extend(paths)

    def IsValidForDescriptor(self, message_descriptor: Any) -> bool:
        """Whether every path names a field of `message_descriptor`, through singular
        message fields."""
        for path in self.paths:
            d = message_descriptor
            *inner, last = path.split(".")
            for name in inner:
                f = d.fields_by_name.get(name)
                if f is None or f.is_repeated or f.message_type is None:
                    return False
                d = f.message_type
            if last not in d.fields_by_name:
                return False
        return True

    def AllFieldsFromDescriptor(self, message_descriptor: Any) -> None:
        self._assign(f.name for f in message_descriptor.fields)

    def CanonicalFormFromMask(self, mask: Any) -> None:
        self._assign(list(_paths(_tree(mask.paths))))

    def Union(self, mask1: Any, mask2: Any) -> None:
        _check_mask(mask1)
        _check_mask(mask2)
        self._assign(list(_paths(_tree([*mask1.paths, *mask2.paths]))))

    def Intersect(self, mask1: Any, mask2: Any) -> None:
        _check_mask(mask1)
        _check_mask(mask2)
        first = _tree(mask1.paths)
        out: _Tree = {}
        for path in mask2.paths:
            node = first
            for name in path.split("."):
                child = node.get(name)
                if child is None:
                    break  # not in mask1
                if not child:
                    _add_path(out, path)  # mask1 covers the whole path
                    break
                node = child
            else:  # mask1 holds paths below this one: those are in both
                for sub in _paths(node, path):
                    _add_path(out, sub)
        self._assign(list(_paths(out)))

    def MergeMessage(
        self,
        source: Any,
        destination: Any,
        replace_message_field: bool = False,
        replace_repeated_field: bool = False,
    ) -> None:
        """Copy the fields the mask names from `source` into `destination`: scalars are set
        (or cleared when unset in `source`), messages merged (replaced with
        `replace_message_field`), repeated fields appended (replaced with
        `replace_repeated_field`)."""
        _merge_masked(
            _tree(self.paths), source, destination, replace_message_field, replace_repeated_field
        )


def _merge_masked(
    node: _Tree, source: Any, destination: Any, replace_message: bool, replace_repeated: bool
) -> None:
    fields = source.DESCRIPTOR.fields_by_name
    for name, child in node.items():
        f = fields.get(name)
        if f is None:
            raise ValueError(
                f"Error: Can't find field {name} in message {source.DESCRIPTOR.full_name}."
            )
        if child:
            if f.is_repeated or f.message_type is None:
                raise ValueError(
                    f"Error: Field {name} in message {source.DESCRIPTOR.full_name} is not a "
                    "singular message field and cannot have sub-fields."
                )
            if source.HasField(name):
                _merge_masked(
                    child,
                    getattr(source, name),
                    getattr(destination, name),
                    replace_message,
                    replace_repeated,
                )
        elif f.is_repeated:
            if replace_repeated:
                destination.ClearField(name)
            getattr(destination, name).MergeFrom(getattr(source, name))
        elif f.message_type is not None:
            if replace_message:
                destination.ClearField(name)
            if source.HasField(name):
                getattr(destination, name).MergeFrom(getattr(source, name))
        elif not f.has_presence or source.HasField(name):
            setattr(destination, name, getattr(source, name))
        else:
            destination.ClearField(name)


# Deepest nesting of dicts and lists taken into a Struct, as parsing's limit on messages.
_MAX_DEPTH = 100
# The dicts and lists being stored into Values on this thread, outermost first, with where.
_WALK = threading.local()


def _walk_error(kind: Literal["limit", "invalid_value"], msg: str, path: str) -> ProtoDecodeError:
    err = ProtoDecodeError(f"{msg} at {path}")
    err.kind = kind
    err.offset = None
    err.path = path
    return err


def _set_value(value_msg: Any, v: Any, where: str = "") -> None:
    """Store a Python value in a google.protobuf.Value (`where`: its place in the dicts and
    lists being stored, `.key` or `[i]`, for errors)."""
    if isinstance(v, (Mapping, list, tuple)):
        path: list[tuple[Any, str]] | None = getattr(_WALK, "path", None)
        if path is None:
            path = _WALK.path = []
        if any(p is v for p, _ in path) or len(path) >= _MAX_DEPTH:
            at = "$" + "".join(w for _, w in path) + where
            if any(p is v for p, _ in path):
                raise _walk_error("invalid_value", "a dict or list that contains itself", at)
            raise _walk_error("limit", f"dicts and lists nested deeper than {_MAX_DEPTH}", at)
        path.append((v, where))
        try:
            _store(value_msg, v)
        finally:
            path.pop()
    else:
        _store(value_msg, v)


def _store(value_msg: Any, v: Any) -> None:
    if v is None:
        value_msg.null_value = 0
    elif isinstance(v, bool):
        value_msg.bool_value = v
    elif isinstance(v, (int, float)):
        value_msg.number_value = v
    elif isinstance(v, str):
        value_msg.string_value = v
    elif isinstance(v, Mapping):
        value_msg.struct_value.Clear()
        value_msg.struct_value.update(v)
    elif isinstance(v, (list, tuple)):
        value_msg.list_value.Clear()
        value_msg.list_value.extend(v)
    else:
        raise ValueError(f"Unexpected type {type(v).__name__} for a google.protobuf.Value")


def _get_value(value_msg: Any) -> Any:
    """The Python value of a google.protobuf.Value (a Struct or ListValue message for those)."""
    kind = value_msg.WhichOneof("kind")
    if kind == "struct_value":
        return value_msg.struct_value
    if kind == "list_value":
        return value_msg.list_value
    if kind is None:
        raise ValueError("Value not set")  # as Google's
    if kind == "null_value":
        return None
    return getattr(value_msg, kind)


class Struct:
    __slots__ = ()
    fields: Any

    def __eq__(self, other: object) -> bool:
        # A Struct equals the dict of its JSON values, as Google's does.
        if isinstance(other, dict):
            return bool(self.to_dict() == other)  # type: ignore[attr-defined]
        return bool(super().__eq__(other))

    __hash__ = None  # type: ignore[assignment]

    def __getitem__(self, key: str) -> Any:
        return _get_value(self.fields[key])

    def __setitem__(self, key: str, value: Any) -> None:
        _set_value(self.fields[key], value, f".{key}")

    def __delitem__(self, key: str) -> None:
        del self.fields[key]

    def __contains__(self, key: object) -> bool:
        return key in self.fields

    def __len__(self) -> int:
        return len(self.fields)

    def __iter__(self) -> Iterator[str]:
        return iter(self.fields)

    def keys(self) -> list[str]:
        return list(self.fields)

    def values(self) -> list[Any]:
        return [self[k] for k in self.fields]

    def items(self) -> list[tuple[str, Any]]:
        return [(k, self[k]) for k in self.fields]

    def get_or_create_list(self, key: str) -> Any:
        v = self.fields[key]
        if v.WhichOneof("kind") != "list_value":
            v.list_value.Clear()
        return v.list_value

    def get_or_create_struct(self, key: str) -> Any:
        v = self.fields[key]
        if v.WhichOneof("kind") != "struct_value":
            v.struct_value.Clear()
        return v.struct_value

    def update(self, dictionary: Mapping[str, Any]) -> None:
        for k, v in dictionary.items():
            self[k] = v

    def _internal_assign(self, value: Any) -> None:
        """What assigning a dict to a Struct field does: it becomes the contents."""
        if not isinstance(value, Mapping):
            raise TypeError(
                f"Fail to convert to Struct. Expected a dict got {type(value).__name__}"
            )
        self.Clear()  # type: ignore[attr-defined]
        self.update(value)


class ListValue:
    __slots__ = ()
    values: Any

    def __eq__(self, other: object) -> bool:
        # A ListValue equals the list of its JSON values, as Google's does.
        if isinstance(other, list):
            return bool(self.to_dict() == other)  # type: ignore[attr-defined]
        return bool(super().__eq__(other))

    __hash__ = None  # type: ignore[assignment]

    def __len__(self) -> int:
        return len(self.values)

    def append(self, value: Any) -> None:
        where = f"[{len(self.values)}]"
        _set_value(self.values.add(), value, where)

    def extend(self, elem_seq: Iterable[Any]) -> None:
        for v in elem_seq:
            self.append(v)

    def _internal_assign(self, value: Any) -> None:
        """What assigning a list to a ListValue field does: it becomes the contents."""
        if not isinstance(value, (list, tuple)):
            raise TypeError(
                f"Fail to convert to ListValue. Expected a list got {type(value).__name__}"
            )
        self.Clear()  # type: ignore[attr-defined]
        self.extend(value)

    def __getitem__(self, index: int) -> Any:
        return _get_value(self.values[index])

    def __setitem__(self, index: int, value: Any) -> None:
        _set_value(self.values[index], value, f"[{index}]")

    def __delitem__(self, index: int) -> None:
        del self.values[index]

    def items(self) -> Iterator[Any]:
        for i in range(len(self)):
            yield self[i]

    def add_struct(self) -> Any:
        v = self.values.add()
        v.struct_value.Clear()
        v.struct_value.SetInParent()
        return v.struct_value

    def add_list(self) -> Any:
        v = self.values.add()
        v.list_value.SetInParent()
        return v.list_value


MIXINS: dict[str, type] = {
    "google.protobuf.Any": Any_,
    "google.protobuf.Timestamp": Timestamp,
    "google.protobuf.Duration": Duration,
    "google.protobuf.FieldMask": FieldMask,
    "google.protobuf.Struct": Struct,
    "google.protobuf.ListValue": ListValue,
}
