"""`amber.Archive`: a zip file of named values, read lazily and written safely.

Reading opens the zip's directory and the manifest only; a key's read touches that key's
entries alone, through a map of a local file or ranged requests for a URL. Writing encodes a
value completely before any byte of it is written, writes to a new file that replaces the old
one when the archive closes (`"w"`, `"x"`), or appends after the old end behind a journal that
says where the archive ended (`"a"`): a write that fails or is killed midway leaves the previous
archive as it was.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
from collections.abc import Iterator, MutableMapping
from typing import IO, Any, Literal, TypeVar

from amber import _native
from amber._native import ArchiveError
from amber.archive import _entries, _foreign, _manifest, _zip
from amber.archive._errors import archive_error
from amber.archive._source import MappedFile, MemorySource, RemoteFile, Source, is_url

Mode = Literal["r", "w", "a", "x"]
Compression = _zip.Method
JOURNAL_SUFFIX = ".amber-journal"

T = TypeVar("T", bound="ArchiveMixin")


def _journal(path: str) -> str:
    return path + JOURNAL_SUFFIX


def _journal_size(path: str) -> int | None:
    """The size the archive had before an append that did not finish, if one did not."""
    try:
        with open(_journal(path), "rb") as f:
            text = f.read(64).decode("ascii").split()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError):
        text = []
    if len(text) != 2 or text[0] != "amber-append" or not text[1].isdigit():
        raise archive_error("malformed", f"{_journal(path)} is not an amber append journal")
    return int(text[1])


class Archive(MutableMapping[str, Any]):
    """A zip file of named values: `a[key] = value`, `a[key]`, `del a[key]`, `key in a`.

    `target` is a local path, any fsspec URL (read-only), or bytes (read-only). `mode` is `"r"`
    (read), `"w"` (create or replace), `"x"` (create, failing if it exists) or `"a"` (read and
    add or replace keys). Values are stored in amber format, arrays as `.npy`, tables (pandas,
    polars, pyarrow) as Arrow IPC files; pass `encoding=` to `put` for JSON or Parquet.
    `compression` (`"zstd"`, `"deflate"` or `"stored"`) applies to every entry written unless
    `put` says otherwise; stored array and table entries are read as views of the mapped file.
    Compressed arrays and tables of numbers of one width are byte-shuffled first (as Blosc and
    HDF5's shuffle filter do), which makes them smaller and faster to compress; `shuffle=False`
    keeps such entries as plain `.npy` and Arrow files for zip tools that decompress them.
    `verify` checks each entry's BLAKE3 hash as it is read. Writes are atomic whatever happens
    to the process; `durable=True` also syncs the file and its folder to disk before the archive
    counts as written, so it survives a power loss too (at the cost of waiting for the disk).
    """

    def __init__(
        self,
        target: str | os.PathLike[str] | bytes | bytearray | memoryview,
        mode: Mode = "r",
        *,
        compression: Compression = "stored",
        level: int | None = None,
        shuffle: bool = True,
        verify: bool = True,
        max_ratio: float | None = None,
        durable: bool = False,
        storage_options: dict[str, Any] | None = None,
    ) -> None:
        if mode not in ("r", "w", "a", "x"):
            raise ValueError(f"mode must be 'r', 'w', 'a' or 'x', not {mode!r}")
        if compression not in _manifest.METHODS:
            raise ValueError(f"compression must be one of {_manifest.METHODS}, not {compression!r}")
        self.mode: Mode = mode
        self.compression: Compression = compression
        self.level = level
        self.shuffle = shuffle
        self._verify_reads = verify
        self._durable = durable
        self._max_ratio = max_ratio
        self._keys: dict[str, dict[str, Any]] = {}
        self._entries: dict[str, dict[str, Any]] = {}
        self._zip: dict[str, Any] = {}
        self._written: dict[str, _zip.Written] = {}
        self._source: Source | None = None
        self._file: IO[bytes] | None = None
        self._sink: _zip.ZipSink | None = None
        self._closed = False
        self._broken = False
        self._compact = False
        # Where the old archive ends, when appending to it in place; else the temporary file
        # that replaces the target when the archive closes.
        self._append_end: int | None = None
        self._tmp: str | None = None
        # "amber", or "npz" or "datazip" for those files, opened read-only.
        self.format: str | None = "amber"
        if isinstance(target, (bytes, bytearray, memoryview)):
            if mode != "r":
                raise ValueError("an archive in memory opens for reading only")
            self._path = "<memory>"
            self._open_read(MemorySource(target))
        elif is_url(target):
            if mode != "r":
                raise ValueError(f"archives at URLs open for reading only, not mode {mode!r}")
            self._path = str(target)
            self._open_read(RemoteFile(str(target), storage_options))
        else:
            self._path = os.fspath(target)
            {
                "r": self._open_local_read,
                "w": self._open_new,
                "x": self._open_new,
                "a": self._open_append,
            }[mode]()

    # --- opening -------------------------------------------------------------------------

    def _open_local_read(self) -> None:
        source = MappedFile(self._path)
        size = _journal_size(self._path)
        if size is not None:
            source.limit(size)
        self._open_read(source)

    def _open_read(self, source: Source) -> None:
        self._source = source
        try:
            self._zip = _zip.read_directory(source, self._max_ratio)
            entry = self._zip.get(_manifest.NAME)
            if entry is None:
                self._open_foreign(source)
                return
            data = _zip.unpack(entry, _zip.read_entry(source, entry))
            sizes = {name: e.size for name, e in self._zip.items()}
            self._keys, self._entries = _manifest.load(data, sizes)
        except BaseException:
            source.close()
            raise

    def _open_foreign(self, source: Source) -> None:
        """An `.npz` or DataZip file, read-only."""
        names = list(self._zip)
        self.format = _foreign.detect(names)
        if self.format is None:
            raise archive_error(
                "not_archive",
                f"{source.name} is a zip without an amber manifest ({_manifest.NAME}), "
                "nor an .npz or DataZip file",
            )
        if self.mode != "r":
            raise ValueError(f"{self.format} files open for reading only")
        self._verify_reads = False  # their entries have CRC-32s, no hashes
        if self.format == "npz":
            self._keys = _foreign.npz_keys(names)
        else:
            attributes = self._content(_foreign.DATAZIP_ATTRIBUTES, check=False)
            self._datazip = _foreign.DataZip(attributes, lambda n: self._content(n, check=False))
            self._keys = self._datazip.keys()

    def _open_new(self) -> None:
        if self.mode == "x" and os.path.lexists(self._path):
            raise FileExistsError(f"{self._path} exists (mode 'x')")
        folder = os.path.dirname(os.path.abspath(self._path))
        fd, self._tmp = tempfile.mkstemp(prefix=".amber-", suffix=".tmp", dir=folder)
        # Unbuffered: large pieces go straight from memory to the file (see `_zip._Tee`).
        self._file = os.fdopen(fd, "w+b", buffering=0)
        self._sink = _zip.ZipSink(self._file, 0)

    def _open_append(self) -> None:
        if not os.path.exists(self._path):
            self._open_new()
            return
        size = _journal_size(self._path)
        if size is not None:  # an append that did not finish: the archive ends where it did
            with open(self._path, "r+b") as f:
                f.truncate(size)
                os.fsync(f.fileno())
            os.unlink(_journal(self._path))
        self._open_local_read()
        assert self._source is not None
        end = self._append_end = self._source.size
        with open(_journal(self._path), "xb") as j:
            j.write(f"amber-append {end}\n".encode())
            if self._durable:
                os.fsync(j.fileno())
        self._file = open(self._path, "r+b", buffering=0)  # noqa: SIM115 - closed in close()
        self._file.seek(end)
        kept = [e for name, e in self._zip.items() if name != _manifest.NAME]
        self._sink = _zip.ZipSink(self._file, end, kept)
        self._sink.remove(_manifest.NAME)

    # --- the mapping -------------------------------------------------------------------------

    def __getitem__(self, key: str) -> Any:
        self._check_open()
        info = self._keys[key]
        if self.format == "datazip":
            return self._datazip.read(key)
        names: list[str] = info["entries"]
        return _entries.decode(info, [self._content(n) for n in names], names[0])

    def __setitem__(self, key: str, value: Any) -> None:
        self.put(key, value)

    def __delitem__(self, key: str) -> None:
        sink = self._writable()
        info = self._keys.pop(key)
        for name in info["entries"]:
            sink.remove(name)
            self._entries.pop(name, None)
            self._written.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        self._check_open()
        return iter(list(self._keys))

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def info(self, key: str) -> dict[str, Any]:
        """What the archive says of `key`, read from its manifest and zip directory (no data):
        `type`, `encoding`, and `entries`, each entry's uncompressed `size`, `compressed_size`
        in the file and `method` (with its `blake3` hash and any `shuffle` in amber archives).
        `npy` keys of amber archives add `dtype` and `shape`; `arrow` and `parquet` keys add
        `kind` (the manifest's number), `kind_name` (what reading the key gives:
        `"pandas.DataFrame"`, ...), `rows` and `columns`. A new dict each call."""
        import copy

        info = copy.deepcopy(self._keys[key])
        entries = {}
        for name in info["entries"]:
            entry = self._entry_info(name)
            located = self._written.get(name) or self._zip[name]
            entry["compressed_size"] = located.compressed_size
            entries[name] = entry
        info["entries"] = entries
        kind = info.get("kind")
        kinds = [  # the format's table kinds, 0 to 5
            "pyarrow.Table",
            "pyarrow.RecordBatch",
            "pandas.DataFrame",
            "pandas.Series",
            "polars.DataFrame",
            "polars.Series",
        ]
        if type(kind) is int and 0 <= kind < len(kinds):
            info["kind_name"] = kinds[kind]
        return info

    def _entry_info(self, name: str) -> dict[str, Any]:
        if name in self._entries:
            return dict(self._entries[name])
        entry = self._zip[name]  # an npz or DataZip entry: no hash
        return {"size": entry.size, "method": entry.method}

    def put(
        self,
        key: str,
        value: Any,
        *,
        encoding: Literal["amber", "json", "npy", "arrow", "parquet"] | None = None,
        compression: Compression | None = None,
        level: int | None = None,
        shuffle: bool | None = None,
    ) -> None:
        """Store `value` under `key`, replacing what was there. `compression`, `level` and
        `shuffle` default to the archive's."""
        sink = self._writable()
        _manifest.check_key(key)
        encoded = _entries.encode(key, value, encoding or _entries.default_encoding(value))
        method = compression or self.compression
        if method not in _manifest.METHODS:
            raise ValueError(f"compression must be one of {_manifest.METHODS}, not {method!r}")
        old = self._keys.get(key, {}).get("entries", [])
        for name, _ in encoded.contents:
            if name in self._entries and name not in old:
                raise ValueError(f"entry {name!r} of key {key!r} is already another key's")
        if key in self._keys:
            del self[key]
        names = []
        if level is None:
            level = self.level
        if shuffle is None:
            shuffle = self.shuffle
        encoding = encoded.info["encoding"]
        try:
            for i, (name, data) in enumerate(encoded.contents):
                lvl = level if level is not None else _entries.default_level(encoding, i, method)
                width = encoded.widths.get(name, 0) if shuffle and method != "stored" else 0
                written = sink.add(name, data, method, lvl, width)
                self._written[name] = written
                self._entries[name] = {
                    "size": written.size,
                    "method": written.method,
                    "blake3": written.blake3,
                }
                if written.shuffle:
                    self._entries[name]["shuffle"] = written.shuffle
                names.append(name)
        except BaseException:
            self._broken = True
            raise
        self._keys[key] = {**encoded.info, "entries": names}

    def compact(self) -> None:
        """Drop the bytes of replaced and deleted keys when the archive is written.

        Appends and replacements never rewrite what is in the file, so the old bytes of a
        replaced or deleted key stay there. With `compact()`, closing the archive first
        completes the write as usual, then copies the live entries (as they are stored, without
        decoding or recompressing them) into a new file that replaces it; the file is then what
        writing its keys afresh would give. A failure or a kill during the copy leaves the
        completed archive in place."""
        self._writable()
        self._compact = True

    def verify(self) -> list[str]:
        """Read every entry and check it against the zip directory (size, CRC-32) and the
        manifest (BLAKE3); the problems found, or an empty list."""
        self._check_open()
        problems = []
        listed = {n for info in self._keys.values() for n in info["entries"]}
        for name in self._zip:
            if name not in listed and name != _manifest.NAME:
                problems.append(f"entry {name!r} belongs to no key")
        for name in sorted(listed):
            try:
                content = self._content(name, check=False)
                crc, digest = _native.archive_digest(content)
                entry = self._written.get(name) or self._zip[name]
                # A compressed entry's CRC-32 was checked as it was decompressed (over the
                # shuffled bytes when it is shuffled).
                if entry.method == "stored" and crc != entry.crc32:
                    problems.append(f"entry {name!r} fails its CRC-32")
                if digest != self._entries[name]["blake3"]:
                    problems.append(f"entry {name!r} does not match its hash in the manifest")
            except ArchiveError as e:
                problems.append(str(e))
        return problems

    # --- reading entries ----------------------------------------------------------------------

    def _content(self, name: str, check: bool = True) -> Any:
        """An entry's content, checked against its hash when `verify` is on."""
        written = self._written.get(name)
        if written is not None:
            assert self._file is not None
            self._file.flush()
            data = memoryview(
                os.pread(self._file.fileno(), written.compressed_size, written.offset)
            )
            content = _zip.unpack(written, data, written.shuffle)
        else:
            assert self._source is not None
            entry = self._zip[name]
            shuffle = self._entries.get(name, {}).get("shuffle", 0)
            content = _zip.unpack(entry, _zip.read_entry(self._source, entry), shuffle)
        if check and self._verify_reads:
            _, digest = _native.archive_digest(content)
            if digest != self._entries[name]["blake3"]:
                raise archive_error(
                    "checksum",
                    f"entry {name!r} does not match its hash in the manifest",
                    entry=name,
                )
        return content

    # --- closing ------------------------------------------------------------------------------

    def _writable(self) -> _zip.ZipSink:
        self._check_open()
        if self._sink is None:
            raise ValueError(f"archive {self._path} is open for reading (mode {self.mode!r})")
        if self._broken:
            raise ValueError("an earlier write to this archive failed; it will not be saved")
        return self._sink

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError(f"archive {self._path} is closed")

    def close(self) -> None:
        """Finish the archive: write the manifest and directory and make the file the archive
        (for reading, release it). A failed write leaves the previous archive as it was."""
        if self._closed:
            return
        try:
            if self._sink is not None:
                if self._broken:
                    raise ArchiveError(f"not saved: an earlier write to {self._path} failed")
                self._commit()
        except BaseException:
            self._abort()
            raise
        finally:
            self._closed = True
            if self._source is not None:
                self._source.close()
        if self._compact:  # the archive is complete: a failure here leaves it as it is
            _rewrite(self._path, self._durable)

    def _commit(self) -> None:
        assert self._sink is not None and self._file is not None
        manifest = _manifest.dump(self._keys, self._entries)
        self._sink.add(_manifest.NAME, manifest, "stored")
        self._sink.finish()
        self._file.flush()
        if self._durable:
            os.fsync(self._file.fileno())
        self._file.close()
        if self._append_end is not None:
            os.unlink(_journal(self._path))
        elif self.mode == "x":
            assert self._tmp is not None
            os.link(self._tmp, self._path)  # fails if the target appeared meanwhile
            os.unlink(self._tmp)
        else:
            assert self._tmp is not None
            _replace(self._tmp, self._path)
        if self._durable:
            _fsync_dir(self._path)

    def _abort(self) -> None:
        if self._file is not None and not self._file.closed:
            if self._append_end is not None:
                self._file.truncate(self._append_end)
            self._file.close()
        if self._append_end is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(_journal(self._path))
        elif self._tmp is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self._tmp)

    def __enter__(self) -> Archive:
        return self

    def __exit__(self, exc_type: Any, *exc: Any) -> None:
        if exc_type is not None and self._sink is not None:
            self._closed = True
            self._abort()
            if self._source is not None:
                self._source.close()
            return
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"mode {self.mode!r}"
        return f"<amber.Archive {self._path!r}, {len(self)} keys, {state}>"


def _rewrite(path: str, durable: bool) -> None:
    """Copy the entries that the archive at `path` lists, in their order in the file, into a
    new file that then replaces it."""
    source = MappedFile(path)
    try:
        entries = sorted(_zip.read_directory(source, None).values(), key=lambda e: e.header_offset)
        fd, tmp = tempfile.mkstemp(
            prefix=".amber-", suffix=".tmp", dir=os.path.dirname(os.path.abspath(path))
        )
        try:
            with os.fdopen(fd, "w+b", buffering=0) as f:
                sink = _zip.ZipSink(f, 0)
                for entry in entries:
                    sink.copy(entry, _zip.read_entry(source, entry))
                sink.finish()
                f.flush()
                if durable:
                    os.fsync(f.fileno())
            _replace(tmp, path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise
    finally:
        source.close()
    if durable:
        _fsync_dir(path)


def _replace(tmp: str, path: str) -> None:
    """Put the file `tmp` in place of `path` in one rename, and free the old file's blocks on
    a thread of their own: with an extra link kept to it, the rename only swaps names, and the
    file system's work of releasing a large file (tens of milliseconds per 100 MB on ext4)
    happens while the caller goes on. Without hard links, the rename does it all."""
    old = tmp + ".old"
    try:
        os.link(path, old)
    except OSError:  # no old file, or no hard links here
        old = ""
    try:
        os.replace(tmp, path)
    except BaseException:
        if old:
            with contextlib.suppress(OSError):
                os.unlink(old)
        raise
    if old:
        # Not a daemon: the interpreter waits for it at exit, so the link never outlives it.
        threading.Thread(target=_unlink_quietly, args=(old,), name="amber-free-old").start()


def _unlink_quietly(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def _fsync_dir(path: str) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


class ArchiveMixin:
    """Gives a class `obj.to_file(target)` and `cls.from_file(target)`: each attribute of the
    instance is a key of the archive."""

    def to_file(self, target: str | os.PathLike[str], **options: Any) -> None:
        with Archive(target, "w", **options) as archive:
            for name, value in vars(self).items():
                archive[name] = value

    @classmethod
    def from_file(cls: type[T], target: Any, **options: Any) -> T:
        obj = cls.__new__(cls)
        with Archive(target, "r", **options) as archive:
            for name in archive:
                vars(obj)[name] = archive[name]
        return obj
