"""`amber.Archive`: a zip file of named values, read lazily and written safely.

Reading opens the zip's directory and the manifest only; a key's read touches that key's
entries alone, through a map of a local file or ranged requests for a URL. Writing encodes a
value completely before any byte of it is written, writes to a new file that replaces the old
one when the archive closes (`"w"`, `"x"`), or appends after the old end behind a journal that
says where the archive ended (`"a"`): a write that fails or is killed midway leaves the previous
archive as it was. A writer holds the archive's lock from open to close (`_lock`), so there
is one writer at a time; the journal's states and what each mode does with them are in
`_journal` and docs/spec/archive.md.
"""

from __future__ import annotations

import atexit
import os
import time
import warnings
import weakref
from collections.abc import Iterator, MutableMapping
from typing import IO, TYPE_CHECKING, Any, Literal

from amber import _native
from amber._native import ArchiveError
from amber.archive import _entries, _files, _foreign, _journal, _lock, _manifest, _zip
from amber.archive._errors import archive_error
from amber.archive._source import (
    DEFAULT_TIMEOUT,
    MappedFile,
    MemorySource,
    RemoteFile,
    Source,
    explain,
    is_url,
    local_path,
)

Mode = Literal["r", "w", "a", "x"]
Compression = _zip.Method
JOURNAL_SUFFIX = _journal.SUFFIX
# How long a writer waits for another writer's lock by default, in seconds.
LOCK_TIMEOUT = 10.0
# How many times a reader looks again when an append changes the file while it opens it.
_OPEN_TRIES = 200

if TYPE_CHECKING:
    from typing_extensions import Self

#: What an archive is opened from: a path, an fsspec URL, or the bytes of a file in memory.
Target = str | os.PathLike[str] | bytes | bytearray | memoryview


class Archive(MutableMapping[str, Any]):
    """A zip file of named values: `a[key] = value`, `a[key]`, `del a[key]`, `key in a`.

    `target` is a local path, any fsspec URL (read-only), or bytes (read-only). `mode` is `"r"`
    (read), `"w"` (create or replace), `"x"` (create, failing if it exists) or `"a"` (read and
    add or replace keys). Values are stored in amber format, arrays as `.npy`, tables (pandas,
    polars, pyarrow) as Arrow IPC files; pass `encoding=` to `put` for JSON or Parquet.
    `compression` (`"zstd"`, `"deflate"` or `"stored"`) applies to every entry written unless
    `put` says otherwise; stored array and table entries are read as views of the mapped file.
    zstd-compressed arrays and tables of numbers of one width are byte-shuffled first (as Blosc
    and HDF5's shuffle filter do), which makes them smaller and faster to compress;
    `shuffle=False` keeps them plain `.npy` and Arrow files for zip tools that decompress them,
    and `shuffle=True` shuffles deflate entries too (by default they stay plain, for the tools
    deflate is chosen for). `verify` checks each entry's BLAKE3 hash as it is read.

    Writes are atomic whatever happens to the process; `durable=True` also syncs the file and
    its folder to disk before the archive counts as written, so it survives a power loss too (at
    the cost of waiting for the disk). One writer at a time: a writer holds an OS lock on the
    archive from open to close, and another waits up to `lock_timeout` seconds (None: without
    limit) for it, then raises ArchiveError (kind `locked`). Close a writer (or use `with`): an
    archive dropped open is closed when it is collected or at exit, with a ResourceWarning.
    """

    def __init__(
        self,
        target: Target,
        mode: Mode = "r",
        *,
        compression: Compression = "stored",
        level: int | None = None,
        shuffle: bool | None = None,
        verify: bool = True,
        max_ratio: float | None = None,
        durable: bool = False,
        lock_timeout: float | None = LOCK_TIMEOUT,
        storage_options: dict[str, Any] | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
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
        self._lock_timeout = lock_timeout
        # The writer's lock on the archive file, while it is held; the empty archive that mode
        # "a" created on a missing path, as (device, inode, size), to remove if nothing is kept.
        self._lock: _lock.Locked | None = None
        self._created: tuple[int, int, int] | None = None
        # Whether the new file of mode "w" or "x" holds bytes no key uses (a key written twice).
        self._dead = False
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
            self._open_read(RemoteFile(str(target), storage_options, timeout))
        else:
            self._path = local_path(target)
            # The file itself, through a symlink: every mode reads, locks, journals and
            # replaces the file the link leads to, and leaves the link in place. (Links among
            # the folders above it lead to the same folder, and so to the same journal.)
            self._real = _files.target(self._path)
            {
                "r": self._open_local_read,
                "w": self._open_new,
                "x": self._open_new,
                "a": self._open_append,
            }[mode]()
            if mode != "r":
                _open_writers[id(self)] = weakref.ref(self)

    # --- opening -------------------------------------------------------------------------

    def _open_local_read(self) -> None:
        source = _committed(self._real)
        self._open_read(source)
        source.watch = True

    def _open_read(self, source: Source) -> None:
        self._source = source
        try:
            self._zip = _zip.read_directory(source, self._max_ratio)
            entry = self._zip.get(_manifest.NAME)
            if entry is None:
                self._open_foreign(source)
                return
            if entry.method != "stored":
                # A compressed manifest would be inflated before anything else is known: a
                # small file could ask for gigabytes at open.
                raise archive_error(
                    "unsupported",
                    f"{source.name}: the manifest is compressed ({entry.method}); amber archives "
                    "store it, and amber does not inflate anything at open",
                    entry=_manifest.NAME,
                )
            # The manifest decides key names and types: it has no hash, so its CRC-32 is checked.
            data = _zip.unpack(entry, _zip.read_entry(source, entry), crc=True)
            sizes = {name: e.size for name, e in self._zip.items()}
            self._keys, self._entries = _manifest.load(data, sizes)
        except ArchiveError as e:
            err = explain(e, source)
            source.close()
            raise err from None
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
        self._verify_reads = False  # their entries have CRC-32s, checked on every read
        if self.format == "npz":
            self._keys = _foreign.npz_keys(names)
        else:
            attributes = self._content(_foreign.DATAZIP_ATTRIBUTES, check=False)
            self._datazip = _foreign.DataZip(attributes, lambda n: self._content(n, check=False))
            self._keys = self._datazip.keys()

    def _open_new(self) -> None:
        """Modes "w" and "x": a new file beside the target, which becomes it at close. "w" locks
        the archive it replaces until it is closed, so no append to it is lost underneath."""
        if self.mode == "x" and os.path.lexists(self._path):
            raise FileExistsError(f"{self._path} exists (mode 'x')")
        if self.mode == "w":
            self._lock = _lock.acquire(self._real, self._lock_timeout)
        try:
            fd, self._tmp = _files.create_temp(self._real)
        except BaseException:
            self._release()
            raise
        # Unbuffered: large pieces go straight from memory to the file (see `_zip._Tee`).
        self._file = os.fdopen(fd, "w+b", buffering=0)
        self._sink = _zip.ZipSink(self._file, 0)

    def _open_append(self) -> None:
        """Mode "a": lock the archive, cut off an append that died (its journal says where the
        archive ended), write this append's journal, then write after the end."""
        while True:
            self._lock = _lock.acquire(self._real, self._lock_timeout)
            if self._lock is not None:
                break
            self._create_empty()  # no archive yet: start from an empty one, then lock it
        try:
            if not self._lock.writable:
                raise PermissionError(f"{self._path}: permission denied (appending writes to it)")
            fd = self._lock.fd
            _journal.clear(self._real, fd, self._durable)
            source = MappedFile(self._real)
            self._open_read(source)
            source.watch = True
            assert self._source is not None
            end = self._append_end = self._source.size
            _journal.write(self._real, fd, self._durable)
        except BaseException:
            if self._source is not None:
                self._source.close()
            self._release()
            raise
        if self._durable:
            _files.fsync_dir(self._real)
        self._file = os.fdopen(os.dup(fd), "r+b", buffering=0)
        self._file.seek(end)
        kept = [e for name, e in self._zip.items() if name != _manifest.NAME]
        self._sink = _zip.ZipSink(self._file, end, kept)
        self._sink.remove(_manifest.NAME)

    def _create_empty(self) -> None:
        """An empty archive at the path, unless one appeared meanwhile (never replaced)."""
        fd, tmp = _files.create_temp(self._real)
        try:
            with os.fdopen(fd, "w+b", buffering=0) as f:
                sink = _zip.ZipSink(f, 0)
                sink.add(_manifest.NAME, _manifest.dump({}, {}), "stored")
                sink.finish()
                if self._durable:
                    os.fsync(f.fileno())
                st = os.fstat(f.fileno())
            _files.link_new(tmp, self._real)
            self._created = (st.st_dev, st.st_ino, st.st_size)
        except FileExistsError:
            pass
        finally:
            _files.unlink_quietly(tmp)

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
            if self._written.pop(name, None) is not None and self._append_end is None:
                self._dead = True  # bytes of this new file that no key uses

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
        `shuffle` default to the archive's (`shuffle` by default: for zstd entries only)."""
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
            shuffle = self.shuffle if self.shuffle is not None else method == "zstd"
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
        completed archive in place. (Modes "w" and "x" compact by themselves when a key was
        written twice or deleted: the new file holds only what its keys use.)"""
        self._writable()
        self._compact = True

    def verify(self) -> list[str]:
        """Read every entry and check it against the zip directory (size, CRC-32) and, in amber
        archives, the manifest (BLAKE3); the problems found, or an empty list. The manifest is
        checked against its CRC-32; entries of `.npz` and DataZip files, which have no hashes,
        against theirs."""
        self._check_open()
        problems = []
        if self.format == "amber":
            listed = {n for info in self._keys.values() for n in info["entries"]}
            for name in self._zip:
                if name not in listed and name != _manifest.NAME:
                    problems.append(f"entry {name!r} belongs to no key")
            if _manifest.NAME in self._zip and _manifest.NAME not in self._written:
                listed.add(_manifest.NAME)
        else:
            listed = set(self._zip)
        for name in sorted(listed):
            try:
                content = self._content(name, check=False)
                entry = self._written.get(name) or self._zip[name]
                expected = self._entries.get(name, {}).get("blake3")
                if expected is None:
                    # No hash: the CRC-32, checked by reading (compressed entries as they are
                    # decompressed, stored ones against their bytes).
                    if entry.method == "stored" and self.format == "amber":
                        _zip.unpack(entry, content, crc=True)  # the manifest
                    continue
                crc, digest = _native.archive_digest(content)
                # A compressed entry's CRC-32 was checked as it was decompressed (over the
                # shuffled bytes when it is shuffled).
                if entry.method == "stored" and crc != entry.crc32:
                    problems.append(f"entry {name!r} fails its CRC-32")
                if digest != expected:
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
            entry = self._zip.get(name)
            if entry is None:
                raise archive_error("malformed", f"{self._path} has no entry {name!r}", entry=name)
            shuffle = self._entries.get(name, {}).get("shuffle", 0)
            # Entries of .npz and DataZip files have no hash: their CRC-32 is checked instead
            # (amber's stored entries are covered by their BLAKE3 hash when `verify` is on).
            crc = self.format != "amber"
            content = _zip.unpack(entry, _zip.read_entry(self._source, entry), shuffle, crc)
        if check and self._verify_reads:
            digest = _native.archive_blake3(content)
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
            _open_writers.pop(id(self), None)
            if self._source is not None:
                self._source.close()
        try:
            if self._compact and self._append_end is not None:
                # The append is complete: a failure here leaves it as it is.
                tmp = _compacted(self._real, self._durable)
                _files.adopt_mode(tmp, self._real)
                _files.replace(tmp, self._real, self._forget_lock())
                if self._durable:
                    _files.fsync_dir(self._real)
        finally:
            self._release()

    def _commit(self) -> None:
        assert self._sink is not None and self._file is not None
        manifest = _manifest.dump(self._keys, self._entries)
        self._sink.add(_manifest.NAME, manifest, "stored")
        self._sink.finish()
        self._file.flush()
        if self._append_end is not None:
            if self._durable:
                os.fsync(self._file.fileno())
            self._file.close()
            _journal.remove(self._real, self._durable)  # the commit
            return
        self._file.close()
        assert self._tmp is not None
        if self._dead or self._compact:
            tmp, self._tmp = self._tmp, _compacted(self._tmp, self._durable)
            os.unlink(tmp)
        elif self._durable:
            with open(self._tmp, "rb") as f:
                os.fsync(f.fileno())
        self._place(self._tmp)
        self._tmp = None
        if self._durable:
            _files.fsync_dir(self._real)

    def _place(self, tmp: str) -> None:
        """Make the finished file `tmp` the archive: "x" links it (failing if the target
        appeared meanwhile); "w" renames it over the archive it locked, after cutting off an
        append that died in it, or links it where there was none."""
        if self._lock is None:
            try:
                _files.link_new(tmp, self._real)
            except FileExistsError:
                if self.mode == "x":
                    raise FileExistsError(f"{self._path} exists (mode 'x')") from None
                # Another writer created it meanwhile: wait for it, then replace it.
                self._lock = _lock.acquire(self._real, self._lock_timeout)
            else:
                # A journal left beside an archive that was deleted since is stale: clear it
                # under the new file's lock (an appender that got there first goes first).
                if os.path.lexists(_journal.path_of(self._real)):
                    self._lock = _lock.acquire(self._real, self._lock_timeout)
                    if self._lock is not None:
                        _journal.clear(self._real, self._lock.fd, self._durable)
                return
        if self._lock is not None:
            if self._lock.writable:
                _journal.clear(self._real, self._lock.fd, self._durable)
            else:  # a read-only archive, which "w" replaces: its journal goes with it
                _journal.remove(self._real, self._durable)
        _files.adopt_mode(tmp, self._real)
        _files.replace(tmp, self._real, self._forget_lock())

    def _abort(self) -> None:
        """Undo what this writer wrote since it was opened, leaving the archive as it was, and
        release it."""
        try:
            if self._file is not None and not self._file.closed:
                if self._append_end is not None:
                    self._file.truncate(self._append_end)
                self._file.close()
            if self._append_end is not None:
                self._remove_created()
                _journal.remove(self._real, self._durable)
            if self._tmp is not None:
                _files.unlink_quietly(self._tmp)
                self._tmp = None
        finally:
            # If the cut failed, the journal stays: the next writer cuts, readers ignore.
            self._release()

    def _remove_created(self) -> None:
        """Remove the empty archive that mode "a" created on a missing path, if it is still the
        one at the path and still empty: a failed append leaves nothing behind."""
        if self._created is None or self._lock is None:
            return
        dev, ino, size = self._created
        st = os.fstat(self._lock.fd)
        if (st.st_dev, st.st_ino) == (dev, ino) and self._append_end == size:
            _files.unlink_quietly(self._real)

    def _release(self) -> None:
        if self._lock is not None:
            lock, self._lock = self._lock, None
            lock.release()

    def _forget_lock(self) -> int | None:
        """The lock's descriptor, for `_files.replace` to close once the archive it locked is
        replaced (closing the last reference to a large file frees its blocks: not on this
        thread)."""
        if self._lock is None:
            return None
        lock, self._lock = self._lock, None
        return lock.forget()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: Any, *exc: Any) -> None:
        if exc_type is not None and self._sink is not None:
            if not self._closed:
                self._closed = True
                _open_writers.pop(id(self), None)
                try:
                    self._abort()
                finally:
                    if self._source is not None:
                        self._source.close()
            return
        self.close()

    def __del__(self) -> None:
        # An archive being written that nobody closed: finish it, as `zipfile` does (or undo it
        # after a failed write), and say so. Half-built objects (`__init__` raised) have no sink.
        if getattr(self, "_sink", None) is None or getattr(self, "_closed", True):
            return
        warnings.warn(
            f"amber.Archive({self._path!r}, {self.mode!r}) was not closed; closing it now "
            "(use `with amber.Archive(...)` or call close())",
            ResourceWarning,
            source=self,
            stacklevel=2,
        )
        if self._broken:
            self.__exit__(ArchiveError, None, None)
        else:
            self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"mode {self.mode!r}"
        return f"<amber.Archive {self._path!r}, {len(self)} keys, {state}>"


def _compacted(path: str, durable: bool) -> str:
    """A new file beside `path` holding the entries that the archive at `path` lists, copied as
    they are stored, in their order in the file: its name."""
    source = MappedFile(path)
    try:
        entries = sorted(_zip.read_directory(source, None).values(), key=lambda e: e.header_offset)
        fd, tmp = _files.create_temp(path)
        try:
            with os.fdopen(fd, "w+b", buffering=0) as f:
                sink = _zip.ZipSink(f, 0)
                for entry in entries:
                    sink.copy(entry, _zip.read_entry(source, entry))
                sink.finish()
                f.flush()
                if durable:
                    os.fsync(f.fileno())
        except BaseException:
            _files.unlink_quietly(tmp)
            raise
    finally:
        source.close()
    return tmp


def _committed(path: str) -> MappedFile:
    """The archive at `path` as last committed, mapped: the whole file, or its first bytes up to
    where an unfinished append's journal says it ended. The journal and the file are read twice
    around the map, so that an append starting or finishing meanwhile is seen (and the map
    taken again) rather than read half done."""
    for attempt in range(_OPEN_TRIES):
        before = _journal.peek(path)
        source = MappedFile(path)
        after = _journal.peek(path)
        st, now = source.opened, os.stat(path)
        same = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns) == (
            now.st_dev,
            now.st_ino,
            now.st_size,
            now.st_mtime_ns,
        )
        if same and before == after and source.size == st.st_size:
            if after is not None:
                size = _journal.pending_size(path, after, (st.st_dev, st.st_ino))
                if size is not None:
                    source.limit(size)
            return source
        source.close()
        time.sleep(min(0.001 * (attempt + 1), 0.02))
    raise archive_error(
        "changed", f"{path} kept changing while it was opened (a writer is busy); try again"
    )


# Archives open for writing, closed at exit if their owner did not (see `Archive.__del__`).
_open_writers: dict[int, weakref.ref[Archive]] = {}


def _close_open_writers() -> None:
    _files.free_inline = True
    for ref in list(_open_writers.values()):
        archive = ref()
        if archive is not None:
            archive.__del__()


atexit.register(_close_open_writers)


class ArchiveMixin:
    """Gives a class `obj.to_file(target)` and `cls.from_file(target)`: each attribute of the
    instance is a key of the archive."""

    def to_file(self, target: str | os.PathLike[str], **options: Any) -> None:
        with Archive(target, "w", **options) as archive:
            for name, value in vars(self).items():
                archive[name] = value

    @classmethod
    def from_file(cls, target: Target, **options: Any) -> Self:
        obj = cls.__new__(cls)
        with Archive(target, "r", **options) as archive:
            for name in archive:
                vars(obj)[name] = archive[name]
        return obj
