"""`amber.Packed`: one amber frame inside a pickle, for engines that only unpickle.

`multiprocessing`, `concurrent.futures.ProcessPoolExecutor`, joblib and Ray move results
through pickle and accept no other serializer. Returning `Packed(result)` makes pickle carry
one amber frame (and, with pickle protocol 5, each large array, `bytes` or table as an
out-of-band buffer) instead of pickle's own record of every object; the receiver's unpickling
gives back `result` itself, exactly as amber keeps it.

It buys amber's speed, size and exact types across the process boundary. It is no safety
boundary: the receiver still runs `pickle.loads`, which may run code named by the pickle.
"""

from __future__ import annotations

import pickle
from typing import Any, Generic, TypeVar

from amber._native import dumps, loads

__all__ = ["Packed"]

T = TypeVar("T")


class Packed(Generic[T]):
    """`obj` encoded once, now (an `amber.EncodeError` here for what amber cannot keep);
    pickling carries the frame, and unpickling returns the decoded object, not a `Packed`."""

    __slots__ = ("_buffers", "_frame")

    def __init__(self, obj: T, /) -> None:
        buffers: list[pickle.PickleBuffer] = []

        def callback(buffer: pickle.PickleBuffer) -> bool:
            buffers.append(buffer)
            return False

        self._frame = dumps(obj, buffer_callback=callback)
        self._buffers = tuple(buffers)

    def unpack(self) -> T:
        """The object, decoded from the frame (as the receiver of a pickle gets it)."""
        return _unpack(self._frame, *self._buffers)  # type: ignore[no-any-return]

    @property
    def nbytes(self) -> int:
        """The frame's and the buffers' bytes."""
        return len(self._frame) + sum(memoryview(b).nbytes for b in self._buffers)

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, tuple[Any, ...]]:
        # Protocol 5 sends the buffers out of band when the pickler takes them (and in band
        # otherwise); older protocols cannot hold a PickleBuffer, so they get copies, a
        # bytearray where the buffer was writeable (the receiver's array is writeable then).
        if isinstance(protocol, int) and protocol >= 5:
            return _unpack, (self._frame, *self._buffers)
        return _unpack, (self._frame, *(_copy(memoryview(b)) for b in self._buffers))

    def __repr__(self) -> str:
        return f"<amber.Packed: {self.nbytes} bytes in {1 + len(self._buffers)} frame(s)>"


def _copy(view: memoryview) -> bytes | bytearray:
    return bytes(view) if view.readonly else bytearray(view)


def _unpack(frame: bytes, *buffers: Any) -> Any:
    """What unpickling a `Packed` calls: decodes the frame (never runs code itself)."""
    return loads(frame, buffers=buffers) if buffers else loads(frame)
