"""amber: Python data that moves and keeps fast, exactly and safely.

The codec: `dumps`/`loads` for one object and `dump`/`load` for a stream of them. Decoding
never runs code named by the data: user classes come back only if they were registered.
"""

from __future__ import annotations

from amber._native import (
    DEFAULT_MAX_DEPTH,
    DEFAULT_OOB_THRESHOLD,
    FORMAT_VERSION,
    AmberError,
    DecodeError,
    EncodeError,
)
from amber._registry import register, registered, unregister
from amber.codec import dump, dumps, load, loads

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
