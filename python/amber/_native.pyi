from collections.abc import Callable, Iterable
from pickle import PickleBuffer
from typing import Any, Final, Literal, TypeAlias, final

from typing_extensions import Buffer

__all__ = [
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_OOB_THRESHOLD",
    "FORMAT_VERSION",
    "HEADER_LEN",
    "KINDS",
    "AmberError",
    "DecodeError",
    "EncodeError",
    "RegistryEntry",
    "_clear_type_cache",
    "_install",
    "dumps",
    "frame_length",
    "loads",
]

class AmberError(Exception):
    """Base class of every error amber raises."""

_DecodeErrorKind: TypeAlias = Literal[
    "truncated",
    "not_amber",
    "unsupported",
    "malformed",
    "limit",
    "refused",
    "buffer",
    "raised",
]
_EncodeErrorKind: TypeAlias = Literal["unsupported", "cycle", "limit", "mutated", "raised"]

class DecodeError(AmberError, ValueError):
    """The input is not valid amber data; `kind` says what is wrong, `offset` and `path` where."""

    kind: _DecodeErrorKind | None
    offset: int | None
    path: str | None

class EncodeError(AmberError, TypeError):
    """An object cannot be encoded; `kind` says why, `path` which."""

    kind: _EncodeErrorKind | None
    offset: int | None
    path: str | None

FORMAT_VERSION: Final[int]
DEFAULT_MAX_DEPTH: Final[int]
DEFAULT_OOB_THRESHOLD: Final[int]
HEADER_LEN: Final[int]
KINDS: Final[dict[str, int]]

@final
class RegistryEntry:
    """A registered class: its name in the data, how it travels, its hooks, fields and flags."""

    def __new__(
        cls,
        name: str,
        mode: Literal["ENUM", "DICT", "SLOTS", "NAMEDTUPLE", "HOOK"],
        cls_: type,
        /,
        *,
        encode: Callable[[Any], Any] | None = None,
        decode: Callable[[Any], Any] | None = None,
        fields: tuple[str, ...] | None = None,
        flags: int = 0,
    ) -> RegistryEntry: ...
    @property
    def name(self) -> str: ...
    @property
    def mode(self) -> Literal["ENUM", "DICT", "SLOTS", "NAMEDTUPLE", "HOOK"]: ...
    @property
    def cls(self) -> type: ...
    @property
    def encode(self) -> Callable[[Any], Any] | None: ...
    @property
    def decode(self) -> Callable[[Any], Any] | None: ...
    @property
    def fields(self) -> tuple[str, ...] | None: ...
    @property
    def flags(self) -> int: ...

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
def _install(
    classify: Callable[[type], tuple[int, Any]], by_name: dict[str, RegistryEntry]
) -> None: ...
def _clear_type_cache() -> None: ...
