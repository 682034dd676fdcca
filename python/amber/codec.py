"""The amber format: `dumps`/`loads` for one object and `dump`/`load` for a stream of frames.

The encoder and decoder are in Rust (`amber._native`); this module adds the stream functions,
which read one frame at a time: the header first (the core says what it needs next), then the
body in bounded pieces.
"""

from __future__ import annotations

import errno
import io
from collections.abc import Callable, Iterable
from pickle import PickleBuffer
from typing import TYPE_CHECKING, Any, Protocol

from amber._native import (
    DEFAULT_MAX_DEPTH,
    DEFAULT_OOB_THRESHOLD,
    DecodeError,
    dumps,
    frame_length,
    loads,
)

if TYPE_CHECKING:
    from typing_extensions import Buffer

__all__ = ["dump", "dumps", "load", "loads"]


class _BinaryWriter(Protocol):
    """What `dump` writes to: a file opened for binary writing, or anything whose `write` takes
    bytes (a socket's `makefile("wb")`, `gzip.open(path, "wb")`, `io.BytesIO`)."""

    def write(self, data: bytes, /) -> object: ...


class _BinaryReader(Protocol):
    """What `load` reads from: a file opened for binary reading, or anything whose `read(n)`
    gives at most `n` bytes (None when a non-blocking stream has none yet)."""

    def read(self, size: int, /) -> bytes | None: ...


def dump(
    obj: Any,
    file: _BinaryWriter,
    *,
    identity: bool = False,
    max_depth: int = DEFAULT_MAX_DEPTH,
    buffer_callback: Callable[[PickleBuffer], Any] | None = None,
    oob_threshold: int = DEFAULT_OOB_THRESHOLD,
    deterministic: bool = False,
) -> None:
    """Write `obj` to a binary file as one frame; frames can follow one another. The options
    are `dumps`'s."""
    _binary(file, "dump")
    file.write(
        dumps(
            obj,
            identity=identity,
            max_depth=max_depth,
            buffer_callback=buffer_callback,
            oob_threshold=oob_threshold,
            deterministic=deterministic,
        )
    )


def _binary(file: object, name: str) -> None:
    """A text-mode file gets a TypeError that says to open it in binary mode (reading one
    would otherwise fail deep in the text decoder, writing one with a message about str)."""
    if isinstance(file, io.TextIOBase):
        mode = "'rb'" if name == "load" else "'wb'"
        raise TypeError(
            f"amber.{name} needs a file opened in binary mode (open(path, {mode})), "
            f"not a text-mode {type(file).__name__}"
        )


def _truncated(got: int, need: int) -> DecodeError:
    err = DecodeError(
        f"truncated frame: the stream ended after {got} of {need} bytes (at byte {got}, $)"
    )
    err.kind = "truncated"
    err.offset = got
    err.path = "$"
    return err


# Frames are read in pieces of at most this many bytes, so a header that claims more data
# than the stream holds never makes amber allocate it.
_CHUNK = 1 << 24


def _read_exactly(file: _BinaryReader, n: int, buf: bytearray) -> bool:
    """Append `n` bytes from `file` to `buf`; False if the stream ended first."""
    readinto = getattr(file, "readinto", None)
    while n > 0:
        want = min(n, _CHUNK)
        if readinto is not None:
            start = len(buf)
            buf.extend(bytes(want))
            got = readinto(memoryview(buf)[start:])
            del buf[start + (got or 0) :]
        else:
            chunk = file.read(want)
            if isinstance(chunk, str):
                raise TypeError("amber.load needs a binary stream (open the file with 'rb')")
            got = None if chunk is None else len(chunk)
            buf.extend(chunk or b"")
        if got is None:
            raise BlockingIOError(
                errno.EAGAIN,
                "the stream has no data yet: amber.load needs a blocking stream "
                f"({len(buf)} bytes of this frame were read)",
            )
        if not got:
            return False
        n -= got
    return True


def load(
    file: _BinaryReader,
    *,
    max_depth: int = DEFAULT_MAX_DEPTH,
    buffers: Iterable[Buffer] | None = None,
    zero_copy: bool = False,
) -> Any:
    """Read the next frame from a binary file. Raises EOFError at the end of the stream. The
    options are `loads`'s."""
    _binary(file, "load")
    frame = bytearray()
    total = frame_length(b"")  # negative: how many header bytes the format needs first
    while total < 0:
        complete = _read_exactly(file, -total, frame)
        if not frame:
            raise EOFError("no more amber frames in the stream")
        total = frame_length(bytes(frame))  # raises at once for bytes that are not amber
        if not complete:
            raise _truncated(len(frame), len(frame) - total)
    if not _read_exactly(file, total - len(frame), frame):
        raise _truncated(len(frame), total)
    return loads(frame, max_depth=max_depth, buffers=buffers, zero_copy=zero_copy)
