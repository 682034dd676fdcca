"""amber: Python data that moves and keeps fast, exactly and safely.

The codec: `dumps`/`loads` for one object and `dump`/`load` for a stream of them. Decoding
never runs code named by the data: user classes come back only if they were registered.
"""

from __future__ import annotations

from typing import IO, Any

from amber._native import (
    DEFAULT_MAX_DEPTH,
    DEFAULT_OOB_THRESHOLD,
    FORMAT_VERSION,
    HEADER_LEN,
    AmberError,
    DecodeError,
    EncodeError,
    dumps,
    frame_length,
    loads,
)
from amber._registry import register, registered, unregister

__all__ = [
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_OOB_THRESHOLD",
    "FORMAT_VERSION",
    "AmberError",
    "DecodeError",
    "EncodeError",
    "dump",
    "dumps",
    "load",
    "loads",
    "register",
    "registered",
    "unregister",
]


def dump(obj: Any, file: IO[bytes], **options: Any) -> None:
    """Write `obj` to a binary file as one frame; frames can follow one another."""
    file.write(dumps(obj, **options))


def _truncated(got: int, need: int) -> DecodeError:
    err = DecodeError(
        f"truncated frame: the stream ended after {got} of {need} bytes (at byte {got}, $)"
    )
    err.offset = got
    err.path = "$"
    return err


def _read_into(file: IO[bytes], buf: bytearray, start: int) -> int:
    """Fill `buf[start:]` from `file`; returns how many bytes are in `buf` at the end."""
    view = memoryview(buf)
    pos = start
    readinto = getattr(file, "readinto", None)
    while pos < len(buf):
        if readinto is not None:
            n = readinto(view[pos:])
        else:
            chunk = file.read(len(buf) - pos)
            n = len(chunk)
            view[pos : pos + n] = chunk
        if not n:
            break
        pos += n
    return pos


def load(file: IO[bytes], **options: Any) -> Any:
    """Read the next frame from a binary file. Raises EOFError at the end of the stream."""
    header = bytearray(HEADER_LEN)
    got = _read_into(file, header, 0)
    if got == 0:
        raise EOFError("no more amber frames in the stream")
    if got < HEADER_LEN:
        raise _truncated(got, HEADER_LEN)
    total = frame_length(bytes(header))
    if total < 0:
        header.extend(bytes(-total))
        got = _read_into(file, header, HEADER_LEN)
        if got < len(header):
            raise _truncated(got, len(header))
        total = frame_length(bytes(header))
    frame = bytearray(total)
    frame[: len(header)] = header
    got = _read_into(file, frame, len(header))
    if got < total:
        raise _truncated(got, total)
    return loads(frame, **options)
