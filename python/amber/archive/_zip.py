"""The zip container, as Python sees it: reading the directory and one entry's bytes from a
source, and appending entries to a file. Every byte of zip structure is made and checked by
amber's core (`amber._native`): here are only the reads and writes around it.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO, Any, Literal, cast

from amber import _native
from amber._native import ArchiveError, ZipEntry
from amber.archive._errors import archive_error
from amber.archive._source import Source

Method = Literal["stored", "deflate", "zstd"]

# Stored entries start at a multiple of this in the file, so that mapped views of their data
# are aligned for NumPy and Arrow (Arrow asks for 64 bytes).
ALIGN = 64
# The local header of an entry is read together with its data: its name and this much extra
# field, which covers amber's alignment padding and the extra fields other zip writers add.
_EXTRA_GUESS = 256


def read_directory(source: Source, max_ratio: float | None) -> dict[str, ZipEntry]:
    """Every entry of the zip in `source`, by name, checked (names, sizes, duplicates)."""
    tail_len = min(source.size, _native.ZIP_TAIL_LEN)
    tail = source.read(source.size - tail_len, tail_len)
    end = _native.zip_find_end(bytes(tail), source.size)
    if end.need:  # the ZIP64 end record lies before the tail
        offset, n = end.need
        end = _native.zip_find_end_from(bytes(source.read(offset, n)), end, source.size)
    cd = source.read(end.cd_offset, end.cd_size)
    entries = _native.zip_parse_central(bytes(cd), end, source.size, max_ratio)
    return {e.name: e for e in entries}


def read_entry(source: Source, entry: ZipEntry) -> memoryview:
    """The bytes an entry stores (compressed or not), checked against its local header; its
    data must end before the next entry's header (or the directory) starts."""
    name_len = len(entry.name.encode("utf-8"))
    want = min(
        30 + name_len + _EXTRA_GUESS + entry.compressed_size, source.size - entry.header_offset
    )
    try:
        head = source.read(entry.header_offset, want)
        need = _native.zip_local_need(bytes(head[:30]))
        if need > len(head) - entry.compressed_size:
            head = source.read(entry.header_offset, need + entry.compressed_size)
        start = _native.zip_data_offset(bytes(head[:need]), entry) - entry.header_offset
    except ArchiveError as e:
        raise naming(e, entry.name, entry.header_offset) from None
    data = head[start : start + entry.compressed_size]
    if len(data) != entry.compressed_size:
        raise archive_error(
            "truncated",
            f"entry {entry.name!r} runs past the end of the file",
            entry=entry.name,
            offset=entry.header_offset,
        )
    return data


def naming(e: ArchiveError, name: str, offset: int | None = None) -> ArchiveError:
    """`e` as it is, if it names an entry; else the same error naming entry `name` (and the
    offset, if it has none): every error about one entry says which."""
    if getattr(e, "entry", None) is not None:
        return e
    at = getattr(e, "offset", None)
    err = archive_error(
        getattr(e, "kind", None) or "malformed",
        f"{e} (entry {name!r})",
        entry=name,
        offset=at if at is not None else offset,
    )
    err.__cause__ = e.__cause__
    return err


def unpack(entry: ZipEntry | Written, data: memoryview, shuffle: int = 0, crc: bool = False) -> Any:
    """An entry's content: a view of `data` when stored, else its decompressed bytes (the
    CRC-32 and size checked either way), unshuffled when the manifest says it is shuffled.
    A stored entry's CRC-32 is checked when `crc` is true (entries with no other checksum):
    a full pass over its data."""
    if entry.method == "stored":
        if entry.size != len(data):
            raise archive_error(
                "size_mismatch",
                f"entry {entry.name!r} stores {len(data)} bytes, not {entry.size}",
                entry=entry.name,
            )
        if crc and _native.archive_crc32(data) != entry.crc32:
            raise archive_error(
                "checksum", f"entry {entry.name!r} fails its CRC-32", entry=entry.name
            )
        return data
    if entry.method not in ("deflate", "zstd"):
        raise archive_error(
            "unsupported",
            f"entry {entry.name!r} uses zip compression {entry.method}, which amber does not "
            "read (stored, deflate and zstd)",
            entry=entry.name,
        )
    return _native.archive_decompress(
        data, entry.method, entry.size, entry.crc32, entry.name, shuffle
    )


def write_all(file: IO[bytes], data: Any) -> None:
    """Write every byte of `data`: an unbuffered file's `write` may write fewer (a single
    system call moves at most about 2 GiB)."""
    view = memoryview(data).cast("B")
    while len(view):
        n = file.write(view)
        if n is None:
            raise BlockingIOError("the archive file is non-blocking")
        view = view[n:]


@dataclass
class Stream:
    """Content of a known size written in pieces: `write(out)` calls `out.write(piece)` for each
    (bytes or any buffer) and must write exactly `size` bytes. A stored entry is streamed
    straight to the file, so large arrays and Arrow tables are not first copied into one
    buffer."""

    size: int
    write: Callable[[Any], None]

    def materialize(self) -> bytes:
        out = io.BytesIO()
        self.write(out)
        return out.getvalue()


class _Sink:
    """What pyarrow and NumPy ask of the file-like objects an entry streams into: `write` and
    `tell` come from each kind below."""

    closed = False

    def writable(self) -> bool:
        return True

    def flush(self) -> None:
        pass


class _Tee(_Sink):
    """A file-like object that writes each piece to the archive file and into its digest.

    On an unbuffered file (`io.FileIO`, as `amber.Archive` opens its files) the core hashes a
    piece and writes it to the file descriptor at once, on two threads; other files get the
    piece hashed, then written."""

    def __init__(self, file: IO[bytes]) -> None:
        self.file = file
        self.digest = _native.Digest()
        direct = isinstance(file, io.FileIO) and hasattr(self.digest, "write_through")
        self.fd = file.fileno() if direct else None

    def write(self, piece: Any) -> int:
        if self.fd is not None:
            self.digest.write_through(self.fd, piece)
            return memoryview(piece).nbytes
        self.digest.update(piece)
        write_all(self.file, piece)
        return memoryview(piece).nbytes

    def tell(self) -> int:
        return self.digest.size


class _Compressing(_Sink):
    """A file-like object that compresses each piece and writes what comes out: on an
    unbuffered file (`io.FileIO`, as `amber.Archive` opens its files) the core writes one
    piece's output to the file descriptor while it compresses the next."""

    def __init__(self, file: IO[bytes], compressor: _native.StreamCompressor) -> None:
        self.file = file
        self.compressor = compressor
        self.size = 0
        direct = isinstance(file, io.FileIO) and hasattr(compressor, "write_to")
        self.fd = file.fileno() if direct else None

    def write(self, piece: Any) -> int:
        if self.fd is not None:
            self.compressor.write_to(self.fd, piece)
        else:
            out = self.compressor.write(piece)
            if out:
                write_all(self.file, out)
        n = memoryview(piece).nbytes
        self.size += n
        return n

    def tell(self) -> int:
        return self.size


@dataclass
class Written:
    """An entry written: where its stored bytes lie, and what the directory and the manifest
    say of it (`unpack` reads it back like a directory entry)."""

    name: str
    offset: int
    compressed_size: int
    size: int
    method: str
    crc32: int
    blake3: str
    shuffle: int = 0


class ZipSink:
    """Entries appended to a binary file from `start` on; `finish` writes the directory."""

    def __init__(self, file: IO[bytes], start: int, existing: Sequence[ZipEntry] = ()) -> None:
        self.file = file
        self.writer = _native.ZipWriter(start, list(existing))

    def add(
        self,
        name: str,
        data: Any,
        method: Method = "stored",
        level: int | None = None,
        shuffle: int = 0,
    ) -> Written:
        """Add an entry; `shuffle` (a byte-shuffle width, for a compressed `Stream` of numbers)
        shuffles it before it is compressed."""
        if isinstance(data, Stream):
            if method == "stored":
                return self._add_streamed(name, data)
            return self._add_compressed_stream(name, data, method, level, shuffle)
        view = memoryview(data).cast("B")
        crc, digest = _native.archive_digest(view)
        stored = view if method == "stored" else _native.archive_compress(view, method, level)
        align = ALIGN if method == "stored" else 1
        header = self.writer.local_header(name, method, crc, len(stored), len(view), align)
        offset = self.writer.position - len(stored)
        write_all(self.file, header)
        write_all(self.file, stored)
        return Written(name, offset, len(stored), len(view), method, crc, digest)

    def _add_streamed(self, name: str, content: Stream) -> Written:
        """A stored entry streamed to the file: the header (its CRC-32 zero until the data has
        gone by), the pieces, then the CRC-32 patched in."""
        f = self.file
        header = self.writer.local_header(name, "stored", 0, content.size, content.size, ALIGN)
        start = f.tell()
        write_all(f, header)
        tee = _Tee(f)
        content.write(tee)
        if tee.digest.size != content.size:
            raise RuntimeError(f"{name}: wrote {tee.digest.size} bytes, expected {content.size}")
        crc, digest = tee.digest.finish()
        end = f.tell()
        f.seek(start + _native.ZIP_LOCAL_CRC_AT)
        write_all(f, crc.to_bytes(4, "little"))
        f.seek(end)
        self.writer.set_crc(name, crc)
        offset = start + len(header)
        return Written(name, offset, content.size, content.size, "stored", crc, digest)

    def _add_compressed_stream(
        self, name: str, content: Stream, method: Method, level: int | None, shuffle: int
    ) -> Written:
        """An entry compressed as its pieces arrive, each piece's output written at once: the
        header (sizes and CRC-32 zero), the compressed bytes, then the final header over the
        first. The content is never held whole."""
        f = self.file
        header = self.writer.begin_streamed(name, method, content.size)
        start = f.tell()
        write_all(f, header)
        out = _Compressing(f, _native.StreamCompressor(method, level, content.size, shuffle))
        content.write(out)
        tail, crc, digest = out.compressor.finish()
        write_all(f, tail)
        end = f.tell()
        stored = end - start - len(header)
        final = self.writer.end_streamed(name, crc, stored)
        f.seek(start)
        write_all(f, final)
        f.seek(end)
        return Written(
            name, start + len(header), stored, content.size, method, crc, digest, shuffle
        )

    def copy(self, entry: ZipEntry, data: memoryview) -> None:
        """An entry of another zip, as it is stored there (compressed or not, not checked)."""
        method = entry.method
        if method not in ("stored", "deflate", "zstd"):
            raise archive_error(
                "unsupported", f"entry {entry.name!r} uses zip {method}", entry=entry.name
            )
        align = ALIGN if method == "stored" else 1
        header = self.writer.local_header(
            entry.name, cast(Method, method), entry.crc32, len(data), entry.size, align
        )
        write_all(self.file, header)
        write_all(self.file, data)

    def remove(self, name: str) -> bool:
        return bool(self.writer.remove(name))

    def finish(self) -> None:
        write_all(self.file, self.writer.finish())
