"""Where an archive's bytes are read from: a local file mapped into memory, any fsspec URL read
with range requests, or bytes in memory. Every source answers `read(offset, n)` with exactly `n`
bytes or raises; a local file's answers are read-only views of its map, which stay valid for as
long as something uses them, after the archive is closed too.

A remote source never takes in more than it asked for: an HTTP server that ignores the range
asked for, or sends more than it should, or never stops, is refused after at most one byte too
many, and no request waits longer than the timeout for a connection or for the next bytes.
"""

from __future__ import annotations

import errno
import mmap
import os
import stat
import sys
import urllib.parse
import urllib.request
from typing import Any, Protocol

from amber._native import ArchiveError
from amber.archive._errors import archive_error

# Seconds a remote read waits to connect, and then for each next piece of the answer, unless
# `Archive(url, timeout=...)` or the storage options say otherwise.
DEFAULT_TIMEOUT = 10.0
# The last bytes of a local archive (its end records, directory and manifest) that tell an
# append, which leaves them as they are, from a rewrite.
_TAIL = 4096
# Pieces a bounded HTTP read takes from the connection at a time.
_CHUNK = 1 << 20


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
    last view of it does.

    A mapped file that another program cuts short kills the process that touches the lost pages
    (SIGBUS), so the file stays open and every read first checks that it is still at least as
    long as this source reads, and, once its modification time has changed, that its last bytes
    up to there are still the ones it had at open (appends, amber's own included, write only
    after them; a program that wrote the file over almost surely changed them). A file replaced
    by a rename (as amber's `"w"` does) is not a change: the map keeps the file that was
    opened."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        # Kept open until `close()`, and fstat-ed before each read once the archive is open.
        self._fd: int | None = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        try:
            st = os.fstat(self._fd)
            if stat.S_ISDIR(st.st_mode):  # which os.open opens, unlike open()
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), os.fspath(path))
            mapped = mmap.mmap(self._fd, 0, access=mmap.ACCESS_READ) if st.st_size else b""
        except BaseException:
            os.close(self._fd)
            raise
        self.opened = st  # what the file was when it was mapped
        # Reads check the file first once the archive is open (its own reads at open follow
        # the map within microseconds).
        self.watch = False
        super().__init__(mapped, os.fspath(path))
        self._tail = bytes(self._view[-_TAIL:])

    def limit(self, size: int) -> None:
        """Read the file as if it ended at `size` (an append that did not finish)."""
        self.size = min(self.size, size)
        self._view = self._view[: self.size]
        self._tail = bytes(self._view[-_TAIL:])

    def check(self) -> None:
        """Raise `ArchiveError` (kind `changed`) if the file was cut or rewritten in place since
        it was opened."""
        if self._fd is None:
            return
        st = os.fstat(self._fd)
        if st.st_size < self.size:
            raise archive_error(
                "changed",
                f"{self.name} changed on disk while open: it has {st.st_size} bytes, "
                f"amber read it with {self.opened.st_size}; open it again",
            )
        # A write changes the time before the size (even one that appends): a changed time
        # alone says the file may have been written over, which its last bytes tell.
        if st.st_mtime_ns != self.opened.st_mtime_ns and self._tail:
            now = os.pread(self._fd, len(self._tail), self.size - len(self._tail))
            if now != self._tail:
                raise archive_error(
                    "changed",
                    f"{self.name} was rewritten in place while open; open it again",
                )

    def read(self, offset: int, n: int) -> memoryview:
        if self.watch:
            self.check()
        return super().read(offset, n)

    def close(self) -> None:
        # Views handed out keep the map alive; this one goes.
        self._view.release()
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)


class RemoteFile:
    """Any fsspec URL (`s3://`, `http(s)://`, `memory://`, ...): one ranged request per read,
    and nothing fetched that was not asked for. `requests` counts them.

    HTTP(S) reads are made here, through fsspec's session, so that an answer is taken in a piece
    at a time and refused once it passes the bytes asked for; `timeout` (seconds) bounds the
    wait for a connection and for each piece of an answer, over HTTP(S) and S3, unless the
    storage options set their own."""

    def __init__(
        self,
        url: str,
        storage_options: dict[str, Any] | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
    ) -> None:
        try:
            import fsspec
        except ImportError as e:  # pragma: no cover - fsspec is a dev dependency
            raise ImportError("reading archives from URLs needs fsspec: pip install fsspec") from e
        self.name = url
        self.requests = 1
        options = _with_timeout(url, dict(storage_options or {}), timeout)
        self._fs, self._path = fsspec.core.url_to_fs(url, **options)
        self._http = _is_http(self._fs)
        self._s3 = _is_s3(self._fs)
        if self._http:
            size = self._call(lambda: _http_size(self._fs, self._path), "asking for its size")
        else:
            size = self._call(lambda: self._fs.size(self._path), "asking for its size")
        if type(size) is not int or size < 0:
            raise archive_error("remote", f"{url}: the server does not say how large the file is")
        self.size = size

    def read(self, offset: int, n: int) -> memoryview:
        if offset < 0 or n < 0 or offset + n > self.size:
            raise _short(self.name, offset, n, self.size)
        if n == 0:
            return memoryview(b"")
        self.requests += 1
        if self._http:
            data = self._call(lambda: _http_range(self._fs, self._path, offset, n), "reading")
        elif self._s3:
            data = self._call(lambda: _s3_range(self._fs, self._path, offset, n), "reading")
        else:
            data = self._call(
                lambda: self._fs.cat_file(self._path, start=offset, end=offset + n), "reading"
            )
        if len(data) != n:
            raise _short(self.name, offset, n, offset + len(data))
        return memoryview(data)

    def _call(self, fn: Any, doing: str) -> Any:
        """`fn()`, with a timeout or a broken connection raised as `ArchiveError`."""
        try:
            return fn()
        except ArchiveError:
            raise
        except Exception as e:
            if isinstance(e, (FileNotFoundError, PermissionError)):
                # fsspec reports a request that timed out as a missing file.
                if e.__cause__ is None or not _is_timeout(e.__cause__):
                    raise
                e = e.__cause__  # type: ignore[assignment]
            if _is_timeout(e):
                raise archive_error(
                    "timeout", f"{self.name}: no answer in time while {doing} ({e!r})"
                ) from e
            if _is_connection_error(e):
                raise archive_error("remote", f"{self.name}: {doing} failed: {e}") from e
            raise

    def close(self) -> None:
        pass


def _is_http(fs: Any) -> bool:
    protocol = fs.protocol if isinstance(fs.protocol, (tuple, list)) else (fs.protocol,)
    return any(p in ("http", "https") for p in protocol) and hasattr(fs, "set_session")


def _is_s3(fs: Any) -> bool:
    """s3fs's file system, whose client amber asks for ranges itself (to bound the answer)."""
    return type(fs).__module__.startswith("s3fs") and hasattr(fs, "_call_s3")


def _with_timeout(url: str, options: dict[str, Any], timeout: float | None) -> dict[str, Any]:
    """The storage options, with connect and read timeouts for HTTP(S) and S3 unless they set
    their own."""
    if timeout is None:
        return options
    scheme = url.split("://", 1)[0].lower()
    if scheme in ("http", "https"):
        client = dict(options.get("client_kwargs") or {})
        if "timeout" not in client:
            import aiohttp

            client["timeout"] = aiohttp.ClientTimeout(
                total=None, connect=timeout, sock_connect=timeout, sock_read=timeout
            )
            options["client_kwargs"] = client
    elif scheme in ("s3", "s3a"):
        config = dict(options.get("config_kwargs") or {})
        config.setdefault("connect_timeout", timeout)
        config.setdefault("read_timeout", timeout)
        options["config_kwargs"] = config
    return options


def _is_timeout(e: BaseException) -> bool:
    import asyncio

    if isinstance(e, (TimeoutError, asyncio.TimeoutError)):
        return True
    return type(e).__name__ in ("FSTimeoutError", "ReadTimeoutError", "ConnectTimeoutError")


def _is_connection_error(e: BaseException) -> bool:
    """A broken or garbled exchange with the server: the socket's, aiohttp's (HTTP), or
    botocore's (S3: a client error it wraps, such as a bad status line)."""
    if isinstance(e, ConnectionError):
        return True
    try:
        import aiohttp
    except ImportError:  # pragma: no cover - fsspec's HTTP needs it
        pass
    else:
        if isinstance(e, aiohttp.ClientError):
            return True
    botocore = sys.modules.get("botocore.exceptions")  # imported by s3fs when it is used
    if botocore is not None:
        return isinstance(e, (botocore.HTTPClientError, botocore.ConnectionError))
    return False


def _http_size(fs: Any, url: str) -> Any:
    from fsspec.asyn import sync

    size = sync(fs.loop, _http_size_async, fs, url)
    return fs.size(url) if size is None else size


async def _http_size_async(fs: Any, url: str) -> int | None:
    """The file's size from a HEAD request, if the answer says it (else None: fsspec asks its
    own ways). One request, under the session's timeouts (fsspec's own asks twice)."""
    kw = dict(fs.kwargs)
    headers = dict(kw.pop("headers", None) or {})
    headers["Accept-Encoding"] = "identity"
    kw.setdefault("allow_redirects", True)
    session = await fs.set_session()
    async with session.head(fs.encode_url(url), headers=headers, **kw) as r:
        if r.status == 404:
            raise FileNotFoundError(url)
        if r.status >= 400:
            raise archive_error("remote", f"{url}: HTTP {r.status} {r.reason}")
        encoding = r.headers.get("Content-Encoding", "identity")
        if r.content_length is None or encoding not in ("", "identity"):
            return None
        return int(r.content_length)


def _s3_range(fs: Any, path: str, offset: int, n: int) -> bytes:
    from fsspec.asyn import sync

    return bytes(sync(fs.loop, _s3_range_async, fs, path, offset, n))


async def _s3_range_async(fs: Any, path: str, offset: int, n: int) -> bytearray:
    """Bytes `offset` to `offset + n` of the object at `path`, through s3fs's client (its
    credentials, endpoint, retries and timeouts), taken a piece at a time as over HTTP: an
    answer that is not that range, or runs past it, is refused with at most `n + 1` bytes
    held. (s3fs's own `cat_file` takes in the whole answer first.)"""
    bucket, key, version = fs.split_path(path)
    extra = {"VersionId": version} if version else {}
    resp = await fs._call_s3(
        "get_object", Bucket=bucket, Key=key, Range=f"bytes={offset}-{offset + n - 1}", **extra
    )
    body = resp["Body"]
    try:
        _check_answer(
            f"s3://{path}",
            resp.get("ResponseMetadata", {}).get("HTTPStatusCode"),
            resp.get("ContentRange"),
            resp.get("ContentLength"),
            offset,
            n,
        )
        return await _read_at_most(body.read, f"s3://{path}", offset, n)
    finally:
        body.close()


def _http_range(fs: Any, url: str, offset: int, n: int) -> bytes:
    from fsspec.asyn import sync

    return bytes(sync(fs.loop, _http_range_async, fs, url, offset, n))


async def _http_range_async(fs: Any, url: str, offset: int, n: int) -> bytearray:
    """Bytes `offset` to `offset + n` of `url`, taken a piece at a time: an answer that is not
    that range, or runs past it, is refused with at most `n + 1` bytes held."""
    kw = dict(fs.kwargs)
    headers = dict(kw.pop("headers", None) or {})
    headers["Range"] = f"bytes={offset}-{offset + n - 1}"
    headers["Accept-Encoding"] = "identity"
    session = await fs.set_session()
    async with session.get(fs.encode_url(url), headers=headers, **kw) as r:
        if r.status == 404:
            raise FileNotFoundError(url)
        if r.status >= 400:
            r.close()
            raise archive_error("remote", f"{url}: HTTP {r.status} {r.reason} for bytes {offset}-")
        try:
            _check_answer(
                url, r.status, r.headers.get("Content-Range"), r.content_length, offset, n
            )
            return await _read_at_most(r.content.read, url, offset, n)
        except ArchiveError:
            r.close()
            raise


def _check_answer(
    name: str, status: Any, content_range: str | None, declared: Any, offset: int, n: int
) -> None:
    """Refuse an answer to a request for bytes `offset` to `offset + n` that is not that range:
    another status than 206 (a server without range support may answer a read of the whole
    file with all of it), another start, or another length."""
    whole = status == 200 and offset == 0 and declared == n
    if status != 206 and not whole:
        raise archive_error(
            "remote",
            f"{name}: the server ignored the range asked for (HTTP {status}, not 206); "
            "amber reads archives from servers that answer range requests",
            offset=offset,
        )
    got = _content_range_start(content_range)
    if status == 206 and got is not None and got != offset:
        raise archive_error(
            "remote", f"{name}: asked for bytes from {offset}, got bytes from {got}", offset=offset
        )
    if declared is not None and declared != n:
        raise archive_error(
            "remote",
            f"{name}: asked for {n} bytes at byte {offset}, the server sends {declared}",
            offset=offset,
        )


async def _read_at_most(read: Any, name: str, offset: int, n: int) -> bytearray:
    """The `n` bytes of an answer, read `_CHUNK` at a time with `read(size)`: an answer that
    runs past them is refused once `n + 1` bytes are held."""
    out = bytearray()
    while len(out) <= n:
        piece = await read(min(_CHUNK, n + 1 - len(out)))
        if not piece:
            break
        out += piece
    if len(out) > n:
        raise archive_error(
            "remote",
            f"{name}: asked for {n} bytes at byte {offset}, the server sends more",
            offset=offset,
        )
    return out


def _content_range_start(value: str | None) -> int | None:
    if not value:
        return None
    unit, _, rest = value.strip().partition(" ")
    first = rest.partition("-")[0]
    return int(first) if unit == "bytes" and first.isdigit() else -1


def is_url(target: object) -> bool:
    return isinstance(target, str) and "://" in target and not target.startswith("file://")


def local_path(target: str | os.PathLike[str]) -> str:
    """A local path, from a path or a `file://` URL (`file:///abs/run.zip`)."""
    path = os.fspath(target)
    if isinstance(path, str) and path.startswith("file://"):
        parsed = urllib.parse.urlparse(path)
        if parsed.netloc not in ("", "localhost"):
            raise ValueError(f"{path}: file URLs of other hosts are not read")
        return urllib.request.url2pathname(parsed.path)
    return path


def explain(e: ArchiveError, source: Source) -> ArchiveError:
    """An error met opening `source`, naming the file, and for a file that is not a zip, saying
    what it looks like (an amber frame, a pickle, ...)."""
    msg = str(e)
    if getattr(e, "kind", None) == "not_zip":
        looks = _looks_like(source)
        if looks:
            msg = f"{msg}; it looks like {looks}"
    if source.name not in msg:
        msg = f"{source.name}: {msg}"
    err = archive_error(
        getattr(e, "kind", None) or "malformed",
        msg,
        entry=getattr(e, "entry", None),
        offset=getattr(e, "offset", None),
    )
    err.path = source.name
    return err


def _looks_like(source: Source) -> str | None:
    """What the first bytes of a file that is not a zip say it is, if they say."""
    try:
        head = bytes(source.read(0, min(source.size, 16)))
    except (ArchiveError, OSError):
        return None
    if not head:
        return "an empty file"
    if head[0] == 0xAB:
        return "amber format (read it with amber.load or amber.loads)"
    if head[0] == 0x80 and len(head) > 1 and 2 <= head[1] <= 5:
        return "a pickle (amber does not unpickle)"
    if head.startswith(b"\x93NUMPY"):
        return "a .npy file (read it with numpy.load)"
    if head.startswith(b"ARROW1"):
        return "an Arrow IPC file (read it with pyarrow)"
    if head.startswith(b"PAR1"):
        return "a Parquet file (read it with pyarrow.parquet)"
    if head.startswith(b"PK\x03\x04"):
        return "the start of a zip whose end is missing (cut short?)"
    if head.startswith(b"\x89HDF"):
        return "an HDF5 file"
    try:
        head.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return "text"
