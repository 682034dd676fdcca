"""Object arrays in Zarr and numcodecs, kept by amber instead of pickle.

Each chunk of an object array is one amber frame: every cell's value comes back exactly
(nested dicts and lists, tuples, sets, datetimes, Decimals, None, NumPy arrays, DataFrames,
registered classes), and reading a chunk never runs code named by the data, as unpickling does.

- `Amber`, the numcodecs codec `"amber"`: an object codec for Zarr format 2 (give it in
  `filters=[Amber()]`) and anywhere numcodecs codecs are used;
- `OBJECT` (an `AmberObject`), the Zarr data type for Python objects kept by amber: v3 name
  `"amber.object"`, v2 dtype `"|O"` with the object codec `"amber"`;
- `AmberCodec`, the Zarr v3 array-to-bytes codec `"amber"` (one frame per chunk): give it as
  `serializer=AmberCodec()`;
- `create_array`, `zarr.create_array` with the data type and the codec filled in for either
  format.

They are declared as entry points (`numcodecs.codecs`, `zarr.codecs`, `zarr.data_type`), and
importing this module registers them too. numcodecs loads its entry point when the codec is
asked for; zarr 3.1 lists `zarr.data_type` entry points but never loads them, so a process
must `import amber.zarr` before it opens an `"amber.object"` array.

Zarr chooses default codecs for object data types from a fixed list, so an array made with
`zarr.create_array` itself needs `serializer=AmberCodec()` (format 3) or `filters=[Amber()]`
(format 2); `create_array` here fills them in.

A cell amber cannot encode raises `amber.EncodeError` when its chunk is written, naming the
cell; a chunk that is not a valid amber object chunk raises `amber.DecodeError` when read.
"""

from __future__ import annotations

import base64
import binascii
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeAlias

try:
    import numcodecs.registry
    import numpy as np
    import zarr
    import zarr.registry
    from numcodecs.abc import Codec
    from numcodecs.compat import ensure_contiguous_ndarray
    from zarr.abc.codec import ArrayBytesCodec
    from zarr.core.dtype import ZDType, data_type_registry
    from zarr.core.dtype.common import DataTypeValidationError, check_dtype_spec_v2
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError(
        f"amber.zarr needs zarr>=3, numcodecs and numpy: pip install 'amber[zarr]' ({error})"
    ) from error

from amber._native import DecodeError, EncodeError, dumps, loads

if TYPE_CHECKING:
    from typing_extensions import Self
    from zarr.core.array_spec import ArraySpec
    from zarr.core.buffer import Buffer, NDBuffer
    from zarr.core.common import JSON, ZarrFormat
    from zarr.storage import StoreLike

__all__ = [
    "CODEC_ID",
    "OBJECT",
    "V3_NAME",
    "Amber",
    "AmberCodec",
    "AmberObject",
    "FillValue",
    "create_array",
    "decode_chunk",
    "encode_chunk",
]

CODEC_ID = "amber"
"""The codec's id, in numcodecs (`{"id": "amber"}`) and in Zarr v3 (`{"name": "amber"}`)."""

V3_NAME = "amber.object"
"""The Zarr v3 name of the data type."""

_AnyArray: TypeAlias = "np.ndarray[Any, np.dtype[Any]]"


def encode_chunk(array: Any, /) -> bytes:
    """One amber frame for an object array of any shape: its shape, then its cells in C order.

    Raises `TypeError` for an array that does not hold Python objects, and `amber.EncodeError`
    naming the first cell amber cannot encode."""
    chunk = array if isinstance(array, np.ndarray) else np.asarray(array, dtype=object)
    if chunk.dtype != np.dtype(object):
        raise TypeError(
            f"the amber codec encodes object arrays (dtype object), not an array of dtype "
            f"{chunk.dtype}: give such arrays zarr's own codecs"
        )
    shape = tuple(int(n) for n in chunk.shape)
    cells = [_unwrap(cell) for cell in chunk.ravel(order="C").tolist()]
    try:
        return dumps((shape, cells))
    except EncodeError as error:
        raise _cell_error(cells, shape, error) from error


def _unwrap(cell: Any) -> Any:
    """A cell's value: Zarr stores a value set at one cell (`array[0, 0] = {...}`) as a 0-d
    object array inside the cell, which amber could not encode anyway; its item is meant."""
    while isinstance(cell, np.ndarray) and cell.ndim == 0 and cell.dtype == np.dtype(object):
        cell = cell.item()
    return cell


def _cell_error(cells: list[Any], shape: tuple[int, ...], error: EncodeError) -> EncodeError:
    """The error for the first cell that does not encode (the frame's own error said only
    where in the frame)."""
    for i, cell in enumerate(cells):
        try:
            dumps(cell)
        except EncodeError as cell_error:
            index = tuple(int(k) for k in np.unravel_index(i, shape))
            return EncodeError(
                f"cell {index} of an object chunk of shape {shape} cannot be kept by amber: "
                f"{cell_error}"
            )
    return EncodeError(f"an object chunk of shape {shape} cannot be kept by amber: {error}")


def decode_chunk(data: Any, /) -> _AnyArray:
    """The object array an `encode_chunk` frame holds (bytes or any contiguous buffer).

    Raises `amber.DecodeError` for bytes that are not such a frame."""
    buffer = data if isinstance(data, bytes) else ensure_contiguous_ndarray(data)
    value = loads(buffer)
    if not (isinstance(value, tuple) and len(value) == 2):
        raise DecodeError(
            f"an amber object chunk is a frame of (shape, cells); this frame holds a "
            f"{type(value).__name__}"
        )
    shape, cells = value
    if not (
        isinstance(shape, tuple) and all(type(n) is int and n >= 0 for n in shape)
    ) or not isinstance(cells, list):
        raise DecodeError(
            f"an amber object chunk is a frame of (shape, cells): a tuple of sizes and a list, "
            f"not ({type(shape).__name__}, {type(cells).__name__})"
        )
    if math.prod(shape) != len(cells):
        raise DecodeError(
            f"an amber object chunk of shape {shape} has {math.prod(shape)} cells, "
            f"but its frame holds {len(cells)}"
        )
    flat = np.fromiter(cells, dtype=object, count=len(cells))
    return flat.reshape(shape)


class Amber(Codec):  # type: ignore[misc]  # numcodecs is untyped
    """The numcodecs codec `"amber"`: an object array (any shape) as one amber frame, decoded
    back with its shape, every cell's value and type.

    In Zarr format 2 it is the array's object codec: `filters=[Amber()]`."""

    codec_id = CODEC_ID

    def encode(self, buf: Any) -> bytes:
        return encode_chunk(buf)

    def decode(self, buf: Any, out: Any = None) -> Any:
        decoded = decode_chunk(buf)
        if out is None:
            return decoded
        target = np.asarray(out)
        if target.dtype != np.dtype(object) or target.size != decoded.size:
            raise ValueError(
                f"the amber codec decodes into an object array of {decoded.size} cells, not "
                f"an array of dtype {target.dtype} and {target.size} cells"
            )
        target.reshape(-1, order="A")[...] = decoded.reshape(-1)
        return out

    def get_config(self) -> dict[str, Any]:
        return {"id": self.codec_id}

    def __repr__(self) -> str:
        return "Amber()"


@dataclass(frozen=True)
class AmberCodec(ArrayBytesCodec):
    """The Zarr v3 array-to-bytes codec `"amber"`: each chunk of an object array as one amber
    frame. Use it as the serializer of an `OBJECT` array (`create_array` does)."""

    is_fixed_size = False

    @classmethod
    def from_dict(cls, data: dict[str, JSON]) -> Self:
        name = data.get("name")
        configuration = data.get("configuration", {})
        if name != CODEC_ID or configuration not in ({}, None):
            raise ValueError(
                f'the amber codec is {{"name": "{CODEC_ID}"}} with no configuration, not {data!r}'
            )
        return cls()

    def to_dict(self) -> dict[str, JSON]:
        return {"name": CODEC_ID}

    def validate(self, *, shape: Any, dtype: ZDType[Any, Any], chunk_grid: Any) -> None:
        if dtype.to_native_dtype() != np.dtype(object):
            raise ValueError(
                f"the amber codec serializes arrays of Python objects (such as "
                f"amber.zarr.OBJECT), not arrays of {dtype}"
            )

    def evolve_from_array_spec(self, array_spec: ArraySpec) -> Self:
        return self

    def _decode_sync(self, chunk_bytes: Buffer, chunk_spec: ArraySpec) -> NDBuffer:
        decoded = decode_chunk(chunk_bytes.as_array_like())
        if decoded.shape != tuple(chunk_spec.shape):
            raise DecodeError(
                f"an amber object chunk of shape {decoded.shape} where the array's chunks have "
                f"shape {tuple(chunk_spec.shape)}"
            )
        out: NDBuffer = chunk_spec.prototype.nd_buffer.from_numpy_array(decoded)
        return out

    def _encode_sync(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> Buffer | None:
        out: Buffer = chunk_spec.prototype.buffer.from_bytes(
            encode_chunk(chunk_array.as_numpy_array())
        )
        return out

    async def _decode_single(self, chunk_bytes: Buffer, chunk_spec: ArraySpec) -> NDBuffer:
        return self._decode_sync(chunk_bytes, chunk_spec)

    async def _encode_single(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> Buffer | None:
        return self._encode_sync(chunk_array, chunk_spec)

    def compute_encoded_size(self, input_byte_length: int, chunk_spec: ArraySpec) -> int:
        raise NotImplementedError("an amber object chunk's size is known only once encoded")


class FillValue(np.ndarray[Any, np.dtype[Any]]):
    """The fill value of an amber object array, as Zarr holds it: a 0-d object array whose
    one cell is the value (`.item()` gives it).

    Zarr needs a fill value that is not None (format 3), fills chunks with `np.full`, and skips
    writing a chunk whose cells all equal the fill value (`np.array_equal`, which compares
    with `==`: a NumPy array or DataFrame in a cell makes that comparison raise, and 0, 0.0
    and False are equal to it). This wrapper fills with the value itself and answers that
    comparison exactly: a cell matches only if it is the value, or a None, bool, int, float,
    str or bytes of the same type and value. Any other chunk is written."""

    @classmethod
    def of(cls, value: Any) -> FillValue:
        if isinstance(value, FillValue):
            return value
        holder = np.empty((), dtype=object)
        holder[()] = value
        return holder.view(cls)

    @property
    def value(self) -> Any:
        return self.reshape(-1)[0] if self.size else None

    def __array_function__(
        self, func: Any, types: Iterable[Any], args: Iterable[Any], kwargs: Mapping[str, Any]
    ) -> Any:
        args = tuple(args)
        if func is np.broadcast_arrays and not kwargs and len(args) == 2:
            data, fill = args
            if isinstance(fill, FillValue) and not isinstance(data, FillValue):
                return (np.asarray(data), fill)
        if func is np.array_equal and len(args) == 2:
            data, fill = args
            if isinstance(fill, FillValue) and not isinstance(data, FillValue):
                value = fill.value
                return all(_same(cell, value) for cell in np.asarray(data).flat)
        return super().__array_function__(func, types, args, kwargs)

    def _key(self) -> bytes:
        return dumps(self.value, deterministic=True)

    def __eq__(self, other: object) -> bool:
        # Zarr hashes and compares the specs that hold a fill value (sharding caches them):
        # two fill values are equal when their values encode alike.
        if isinstance(other, FillValue):
            return self._key() == other._key()
        return _same(self.value, other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(self._key())

    def __repr__(self) -> str:
        return f"amber.zarr.FillValue({self.value!r})"

    def __reduce__(self) -> Any:
        return (FillValue.of, (self.value,))


_EXACT_TYPES = (type(None), bool, int, str, bytes)


def _same(cell: Any, value: Any) -> bool:
    """Whether a cell holds exactly the fill value (False when it cannot tell cheaply)."""
    if cell is value:
        return True
    if type(cell) is not type(value):
        return False
    if isinstance(cell, _EXACT_TYPES):
        return bool(cell == value)
    if isinstance(cell, float):
        if math.isnan(cell) or math.isnan(value):
            return math.isnan(cell) and math.isnan(value)
        return cell == value and math.copysign(1.0, cell) == math.copysign(1.0, value)
    return False


@dataclass(frozen=True, kw_only=True)
class AmberObject(ZDType[np.dtypes.ObjectDType, Any]):
    """The Zarr data type of Python objects kept by amber (NumPy dtype object).

    Its v3 name is `"amber.object"`; in v2 metadata it is `"|O"` with the object codec
    `"amber"`. Cells hold any value amber encodes; the default fill value is None. A fill
    value other than None is stored as a base64 amber frame."""

    dtype_cls = np.dtypes.ObjectDType
    _zarr_v3_name: ClassVar[Literal["amber.object"]] = "amber.object"
    object_codec_id: ClassVar[Literal["amber"]] = "amber"

    @classmethod
    def from_native_dtype(cls, dtype: Any) -> Self:
        if cls._check_native_dtype(dtype):
            return cls()
        raise DataTypeValidationError(f"{dtype} is not NumPy's object dtype")

    def to_native_dtype(self) -> np.dtypes.ObjectDType:
        dtype: np.dtypes.ObjectDType = np.dtypes.ObjectDType()
        return dtype

    @classmethod
    def _check_json_v2(cls, data: Any) -> bool:
        # Zarr finds an array's object codec only among ids it knows, so an array written with
        # `filters=[Amber()]` reads back as `"|O"` with no object codec: that is ours too
        # (its filters, read from the metadata, decode it).
        return (
            check_dtype_spec_v2(data)
            and data["name"] == "|O"
            and data["object_codec_id"] in (cls.object_codec_id, None)
        )

    @classmethod
    def _check_json_v3(cls, data: Any) -> bool:
        if data == cls._zarr_v3_name:
            return True
        return (
            isinstance(data, Mapping)
            and data.get("name") == cls._zarr_v3_name
            and data.get("configuration", {}) in ({}, None)
            and set(data) <= {"name", "configuration"}
        )

    @classmethod
    def _from_json_v2(cls, data: Any) -> Self:
        if cls._check_json_v2(data):
            return cls()
        raise DataTypeValidationError(
            f'{data!r} is not the amber object data type ({{"name": "|O", "object_codec_id": '
            f'"{cls.object_codec_id}"}})'
        )

    @classmethod
    def _from_json_v3(cls, data: Any) -> Self:
        if cls._check_json_v3(data):
            return cls()
        raise DataTypeValidationError(
            f"{data!r} is not the amber object data type ({cls._zarr_v3_name!r})"
        )

    def to_json(self, zarr_format: ZarrFormat) -> Any:
        if zarr_format == 2:
            return {"name": "|O", "object_codec_id": self.object_codec_id}
        if zarr_format == 3:
            return self._zarr_v3_name
        raise ValueError(f"zarr_format is 2 or 3, not {zarr_format!r}")

    def _check_scalar(self, data: object) -> bool:
        return True

    def cast_scalar(self, data: object) -> FillValue:
        return FillValue.of(data)

    def default_scalar(self) -> FillValue:
        return FillValue.of(None)

    def to_json_scalar(self, data: object, *, zarr_format: ZarrFormat) -> JSON:
        if isinstance(data, FillValue):
            data = data.value
        if data is None:
            return None
        return base64.standard_b64encode(dumps(data)).decode("ascii")

    def from_json_scalar(self, data: JSON, *, zarr_format: ZarrFormat) -> FillValue:
        if data is None:
            return FillValue.of(None)
        if not isinstance(data, str):
            raise TypeError(
                f"the fill value of an amber object array is null or a base64 amber frame, "
                f"not {data!r}"
            )
        try:
            frame = base64.standard_b64decode(data.encode("ascii"))
        except (binascii.Error, UnicodeEncodeError) as error:
            raise DecodeError(
                f"the fill value of an amber object array is not base64: {data!r}"
            ) from error
        return FillValue.of(loads(frame))


OBJECT = AmberObject()
"""The amber object data type: `zarr.create_array(..., dtype=amber.zarr.OBJECT, ...)`."""


def create_array(
    store: StoreLike,
    *,
    shape: int | np.integer[Any] | Iterable[int | np.integer[Any]],
    zarr_format: Literal[2, 3] = 3,
    **kwargs: Any,
) -> zarr.Array[Any]:
    """`zarr.create_array` for an array of Python objects kept by amber: the data type
    `OBJECT`, and the codec `AmberCodec()` as the serializer (format 3) or `Amber()` as the
    filter (format 2), unless given. Other arguments go to `zarr.create_array` as they are."""
    kwargs.setdefault("dtype", OBJECT)
    if zarr_format == 3:
        kwargs.setdefault("serializer", AmberCodec())
    elif zarr_format == 2:
        kwargs.setdefault("filters", [Amber()])
    else:
        raise ValueError(f"zarr_format is 2 or 3, not {zarr_format!r}")
    return zarr.create_array(store, shape=shape, zarr_format=zarr_format, **kwargs)


def _register() -> None:
    """What the entry points register, for an environment where amber is not installed."""
    numcodecs.registry.register_codec(Amber)
    zarr.registry.register_codec(CODEC_ID, AmberCodec)
    data_type_registry.register(AmberObject._zarr_v3_name, AmberObject)


_register()
