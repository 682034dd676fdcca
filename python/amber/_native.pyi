from collections.abc import Callable, Iterable
from pickle import PickleBuffer
from typing import Any, Final

from typing_extensions import Buffer

__all__ = [
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_OOB_THRESHOLD",
    "FORMAT_VERSION",
    "HEADER_LEN",
    "KINDS",
    "MODES",
    "AmberError",
    "DecodeError",
    "EncodeError",
    "_clear_type_cache",
    "_install",
    "dumps",
    "frame_length",
    "loads",
]

class AmberError(Exception):
    """Base class of every error amber raises."""

class DecodeError(AmberError, ValueError):
    offset: int | None
    path: str | None

class EncodeError(AmberError, TypeError):
    offset: int | None
    path: str | None

FORMAT_VERSION: Final[int]
DEFAULT_MAX_DEPTH: Final[int]
DEFAULT_OOB_THRESHOLD: Final[int]
HEADER_LEN: Final[int]
KINDS: Final[dict[str, int]]
MODES: Final[dict[str, int]]

def dumps(
    obj: Any,
    /,
    *,
    identity: bool = False,
    max_depth: int = 1000,
    buffer_callback: Callable[[PickleBuffer], Any] | None = None,
    oob_threshold: int = 65536,
) -> bytes: ...
def loads(
    data: Buffer,
    /,
    *,
    max_depth: int = 1000,
    buffers: Iterable[Buffer] | None = None,
    zero_copy: bool = False,
) -> Any: ...
def frame_length(header: bytes) -> int: ...
def _install(classify: Callable[[type], tuple[int, Any]], by_name: dict[str, Any]) -> None: ...
def _clear_type_cache() -> None: ...
