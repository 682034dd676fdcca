"""amber inside Dask: a serialization family, and containers that travel as one frame.

Importing this module registers everything. Workers need it too: start them with
`--preload amber.dask` (or `preload=["amber.dask"]`), or call `install(client)` once.

- the serialization family `"amber"`: give it to the client and the workers,
  `Client(serializers=["amber", "dask", "pickle"], deserializers=["amber", "dask", "pickle"])`
  and the same `serializers=`/`deserializers=` for each worker, and data moves as amber frames,
  with NumPy arrays, `bytes` and tables of at least `DEFAULT_OOB_THRESHOLD` bytes as frames of
  their own (no copy). What amber cannot encode falls through to the next family;
- `Rows`, a `list` that always travels as one amber frame, and `Mapping`, a `dict` that does:
  Dask sends a result that is exactly a `list`, `tuple`, `set` or `dict` one item per frame,
  which costs seconds for a list of many records. Return `Rows(records)` instead. They need no
  configuration: a worker that receives one imports this module to read it.

A frame that is not valid amber raises `amber.DecodeError`; data serialized with a family a
receiver was not given raises Dask's own `TypeError` naming the family.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from distributed.diagnostics.plugin import WorkerPlugin

from amber._native import EncodeError, dumps, loads
from amber._registry import register

if TYPE_CHECKING:
    from distributed import Client

__all__ = ["FAMILY", "Mapping", "Rows", "amber_dumps", "amber_loads", "install"]

FAMILY = "amber"

_K = TypeVar("_K")
_V = TypeVar("_V")
_T = TypeVar("_T")

Header = dict[str, Any]
Frames = list[Any]


def _frames(obj: Any) -> tuple[Header, Frames]:
    """One amber frame for `obj`, then its out-of-band buffers; the header keeps whether
    each buffer was writeable, so that the receiver's arrays are too."""
    buffers: list[memoryview] = []

    def callback(buffer: Any) -> bool:
        buffers.append(buffer.raw())
        return False

    frame = dumps(obj, buffer_callback=callback)
    return {"writeable": tuple(not b.readonly for b in buffers)}, [frame, *buffers]


def _object(header: Header, frames: Sequence[Any]) -> Any:
    if not frames:
        raise ValueError("an amber message has at least one frame")
    writeable = header.get("writeable", ())
    buffers = [_with_flag(memoryview(f), w) for f, w in zip(frames[1:], writeable, strict=False)]
    return loads(frames[0], buffers=buffers)


def _with_flag(view: memoryview, writeable: bool) -> memoryview:
    """The buffer as the sender's was: writeable (a copy only if the frame is read-only) or
    read-only (a flag, no copy)."""
    if writeable and view.readonly:
        return memoryview(bytearray(view))
    if not writeable and not view.readonly:
        return view.toreadonly()
    return view


def amber_dumps(obj: Any) -> tuple[Header, Frames]:
    """The `"amber"` family's `dumps`: a header and frames, or `NotImplementedError` for what
    amber does not encode, so that Dask tries the next family."""
    try:
        return _frames(obj)
    except EncodeError as e:
        raise NotImplementedError(str(e)) from e


def amber_loads(header: Header, frames: Sequence[Any]) -> Any:
    """The `"amber"` family's `loads`: never runs code; bad frames raise `amber.DecodeError`."""
    return _object(header, frames)


class Rows(list[_T]):
    """A `list` that Dask moves as one amber frame (a plain `list` moves one item per frame).
    It is a list in every other way; what it holds must be data amber encodes."""

    __slots__ = ()


class Mapping(dict[_K, _V]):
    """A `dict` that Dask moves as one amber frame (a plain `dict` moves one value per
    frame). It is a dict in every other way; what it holds must be data amber encodes."""

    __slots__ = ()


def _serialize_rows(rows: Rows[Any]) -> tuple[Header, Frames]:
    return _frames(list(rows))


def _deserialize_rows(header: Header, frames: Sequence[Any]) -> Rows[Any]:
    return Rows(_object(header, frames))


def _serialize_mapping(mapping: Mapping[Any, Any]) -> tuple[Header, Frames]:
    return _frames(dict(mapping))


def _deserialize_mapping(header: Header, frames: Sequence[Any]) -> Mapping[Any, Any]:
    return Mapping(_object(header, frames))


# Dask's registries are untyped, reached through `Any` (by module: `distributed.protocol`
# exports a function of the module's name).
_protocol: Any = importlib.import_module("distributed.protocol.serialize")
_protocol.register_serialization_family(FAMILY, amber_dumps, amber_loads)
_protocol.dask_serialize.register(Rows)(_serialize_rows)
_protocol.dask_deserialize.register(Rows)(_deserialize_rows)
_protocol.dask_serialize.register(Mapping)(_serialize_mapping)
_protocol.dask_deserialize.register(Mapping)(_deserialize_mapping)
# Inside other data (a dict of Rows, say) they travel as what they are.
register(Rows, name="amber.dask.Rows", encode=list, decode=Rows)
register(Mapping, name="amber.dask.Mapping", encode=dict, decode=Mapping)


class _Install(WorkerPlugin):
    """Unpickling this plugin on a worker imports this module, which registers the family."""

    name = "amber.dask"

    def setup(self, worker: Any) -> None:
        """Nothing more to do: the import that unpickled the plugin registered everything."""


def install(client: Client) -> None:
    """Register the `"amber"` family on every worker of `client`'s cluster, and on each worker
    that joins later: for workers started without `--preload amber.dask` (a worker that lacks
    it fails to read amber data with Dask's `KeyError: 'amber'`)."""
    client.register_plugin(_Install())
