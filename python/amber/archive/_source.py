"""Where an archive's bytes are read from: a local file mapped into memory, any fsspec URL read
with range requests, or bytes in memory. Every source answers `read(offset, n)` with exactly `n`
bytes or raises; a local file's answers are read-only views of its map, which stay valid for as
long as something uses them, after the archive is closed too.
"""

from __future__ import annotations

import mmap
import os
from typing import Any, Protocol

from amber._native import ArchiveError
from amber.archive._errors import archive_error


class Source(Protocol):
    name: str
    size: int

    def read(self, offset: int, n: int) -> memoryview: ...

    def close(self) -> None: ...


def _short(name: str, offset: int, n: int, got: int) -> ArchiveError:
    return archive_error(
        "truncated", f"{name}: wanted {n} bytes at byte {offset}, the file has {got}", offset=offset
    )


class MemorySource:
    """Bytes already in memory (a `bytes`, `bytearray` or any buffer)."""

    def __init__(self, data: Any, name: str = "<memory>") -> None:
        self.name = name
        self._view = memoryview(data).cast("B").toreadonly()
        self.size = len(self._view)

    def read(self, offset: int, n: int) -> memoryview:
        if offset < 0 or n < 0 or offset + n > self.size:
            raise _short(self.name, offset, n, self.size)
        return self._view[offset : offset + n]

    def close(self) -> None:
        pass


class MappedFile(MemorySource):
    """A local file, mapped read-only. The map is never closed by amber: it goes away when the
    last view of it does."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
        super().__init__(mapped, os.fspath(path))

    def limit(self, size: int) -> None:
        """Read the file as if it ended at `size` (an append that did not finish)."""
        self.size = min(self.size, size)
        self._view = self._view[: self.size]

    def close(self) -> None:
        # Views handed out keep the map alive; this one goes.
        self._view.release()


class RemoteFile:
    """Any fsspec URL (`s3://`, `http(s)://`, `memory://`, ...): one ranged request per read,
    and nothing fetched that was not asked for. `requests` counts them."""

    def __init__(self, url: str, storage_options: dict[str, Any] | None = None) -> None:
        try:
            import fsspec
        except ImportError as e:  # pragma: no cover - fsspec is a dev dependency
            raise ImportError("reading archives from URLs needs fsspec: pip install fsspec") from e
        self.name = url
        self._fs, self._path = fsspec.core.url_to_fs(url, **(storage_options or {}))
        self.size = int(self._fs.size(self._path))
        self.requests = 1

    def read(self, offset: int, n: int) -> memoryview:
        if offset < 0 or n < 0 or offset + n > self.size:
            raise _short(self.name, offset, n, self.size)
        if n == 0:
            return memoryview(b"")
        self.requests += 1
        data = self._fs.cat_file(self._path, start=offset, end=offset + n)
        if len(data) != n:
            raise _short(self.name, offset, n, offset + len(data))
        return memoryview(data)

    def close(self) -> None:
        pass


def is_url(target: object) -> bool:
    return isinstance(target, str) and "://" in target and not target.startswith("file://")
