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
    "ZIP_LOCAL_CRC_AT",
    "ZIP_TAIL_LEN",
    "ZSTD_BINARY_LEVEL",
    "AmberError",
    "ArchiveError",
    "DecodeError",
    "Digest",
    "EncodeError",
    "PgCopyWriter",
    "PgReader",
    "RegistryEntry",
    "StreamCompressor",
    "ZipEnd",
    "ZipEntry",
    "ZipWriter",
    "_clear_type_cache",
    "_install",
    "archive_compress",
    "archive_decompress",
    "archive_digest",
    "dumps",
    "frame_length",
    "loads",
    "npy_header",
    "npy_parse_header",
    "pg_bind_libpq",
    "pg_send",
    "pg_type",
    "zip_data_offset",
    "zip_find_end",
    "zip_find_end_from",
    "zip_local_need",
    "zip_parse_central",
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
    "out_of_range",
    "type_mismatch",
    "invalid_value",
    "field_count",
    "state",
]
_EncodeErrorKind: TypeAlias = Literal[
    "unsupported",
    "cycle",
    "limit",
    "mutated",
    "raised",
    "type_mismatch",
    "out_of_range",
    "invalid_value",
    "field_count",
    "malformed",
    "state",
]

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
    deterministic: bool = False,
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

# archive

_ArchiveErrorKind: TypeAlias = Literal[
    "not_zip",
    "truncated",
    "malformed",
    "unsafe_name",
    "duplicate",
    "unsupported",
    "size_mismatch",
    "checksum",
    "bomb",
    "not_archive",
    "refused",
]
_Method: TypeAlias = Literal["stored", "deflate", "zstd"]

class ArchiveError(AmberError, ValueError):
    """An archive or an entry in it is not what it should be; `kind` says what, `entry` which
    entry, `offset` where in the file."""

    kind: _ArchiveErrorKind | None
    entry: str | None
    offset: int | None
    path: str | None

ZIP_TAIL_LEN: Final[int]
ZIP_LOCAL_CRC_AT: Final[int]
ZSTD_BINARY_LEVEL: Final[int]

@final
class Digest:
    def __new__(cls) -> Digest: ...
    def update(self, piece: Buffer) -> None: ...
    def write_through(self, fd: int, piece: Buffer) -> None: ...
    @property
    def size(self) -> int: ...
    def finish(self) -> tuple[int, str]: ...

@final
class StreamCompressor:
    def __new__(cls, method: _Method, level: int | None, size: int) -> StreamCompressor: ...
    def write(self, piece: Buffer) -> bytes: ...
    def finish(self) -> tuple[bytes, int, str]: ...

@final
class ZipEntry:
    @property
    def name(self) -> str: ...
    @property
    def method(self) -> str: ...
    @property
    def flags(self) -> int: ...
    @property
    def crc32(self) -> int: ...
    @property
    def compressed_size(self) -> int: ...
    @property
    def size(self) -> int: ...
    @property
    def header_offset(self) -> int: ...

@final
class ZipEnd:
    @property
    def cd_offset(self) -> int: ...
    @property
    def cd_size(self) -> int: ...
    @property
    def entries(self) -> int: ...
    @property
    def need(self) -> tuple[int, int] | None: ...

@final
class ZipWriter:
    def __new__(
        cls, start_offset: int = 0, existing: list[ZipEntry] | None = None
    ) -> ZipWriter: ...
    @property
    def position(self) -> int: ...
    def local_header(
        self,
        name: str,
        method: _Method,
        crc32: int,
        compressed_size: int,
        size: int,
        align: int = 1,
    ) -> bytes: ...
    def begin_streamed(self, name: str, method: _Method, size: int) -> bytes: ...
    def end_streamed(self, name: str, crc32: int, compressed_size: int) -> bytes: ...
    def remove(self, name: str) -> bool: ...
    def set_crc(self, name: str, crc32: int) -> bool: ...
    def finish(self) -> bytes: ...

def archive_compress(data: Buffer, method: _Method, level: int | None = None) -> bytes: ...
def archive_decompress(data: Buffer, method: str, size: int, crc32: int, name: str) -> bytes: ...
def archive_digest(data: Buffer) -> tuple[int, str]: ...
def zip_find_end(tail: bytes, file_len: int) -> ZipEnd: ...
def zip_find_end_from(record: bytes, end: ZipEnd, file_len: int) -> ZipEnd: ...
def zip_parse_central(
    cd: bytes, end: ZipEnd, file_len: int, max_ratio: float | None = None
) -> list[ZipEntry]: ...
def zip_local_need(fixed: bytes) -> int: ...
def zip_data_offset(local: bytes, entry: ZipEntry) -> int: ...
def npy_header(descr: str, fortran_order: bool, shape: tuple[int, ...]) -> bytes: ...
def npy_parse_header(data: Buffer) -> tuple[Any, bool, tuple[int, ...], int]: ...

# amber.pg: COPY BINARY and binary results (`amber.pg._copy` is the only caller).

_PgColumnSpec: TypeAlias = tuple[int, Any]

@final
class PgCopyWriter:
    def __new__(cls, columns: list[_PgColumnSpec], names: list[str]) -> PgCopyWriter: ...
    def write_rows(self, rows: Iterable[Any], limit: int) -> bytes: ...
    def write_columns(
        self, columns: list[tuple[Any, ...]], start: int, limit: int
    ) -> tuple[bytes, int]: ...
    def finish(self) -> bytes: ...
    @property
    def rows(self) -> int: ...

@final
class PgReader:
    def __new__(
        cls, columns: list[_PgColumnSpec], names: list[str], into: Literal["rows", "arrow", "numpy"]
    ) -> PgReader: ...
    def feed(self, data: Buffer) -> None: ...
    def drain(self, pgconn: int) -> tuple[str, str] | None: ...
    def read_result(self, pgresult: int) -> None: ...
    def add_row(self, values: list[Buffer | None]) -> None: ...
    @property
    def rows(self) -> int: ...
    def finish(self, copy: bool) -> Any: ...

def pg_bind_libpq(path: str) -> bool: ...
def pg_type(oid: int) -> tuple[str, bool] | None: ...
def pg_send(oid: int, value: Any) -> bytes: ...
