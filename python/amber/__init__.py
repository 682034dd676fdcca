"""amber: Python data that moves and keeps fast, exactly and safely.

The codec: `dumps`/`loads` for one object and `dump`/`load` for a stream of them. Decoding
never runs code named by the data: user classes come back only if they were registered.
`Archive`: a zip file of named values, read lazily from disk or object storage. `Packed`: one
amber frame inside a pickle, for process pools and engines that only unpickle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from amber._native import (
    DEFAULT_MAX_DEPTH,
    DEFAULT_OOB_THRESHOLD,
    FORMAT_VERSION,
    AmberError,
    ArchiveError,
    DecodeError,
    EncodeError,
    __version__,
)
from amber._registry import register, registered, unregister
from amber.codec import dump, dumps, load, loads
from amber.packed import Packed

if TYPE_CHECKING:
    from amber.archive import Archive, ArchiveMixin

__all__ = [
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_OOB_THRESHOLD",
    "FORMAT_VERSION",
    "AmberError",
    "Archive",
    "ArchiveError",
    "ArchiveMixin",
    "DecodeError",
    "EncodeError",
    "Packed",
    "__version__",
    "dump",
    "dumps",
    "load",
    "loads",
    "register",
    "registered",
    "unregister",
]


def __getattr__(name: str) -> Any:
    """`Archive` and `ArchiveMixin` are imported on first use, so that `import amber` for the
    codec loads none of the archive's modules."""
    if name in ("Archive", "ArchiveMixin"):
        from amber import archive

        return getattr(archive, name)
    raise AttributeError(f"module 'amber' has no attribute {name!r}")
