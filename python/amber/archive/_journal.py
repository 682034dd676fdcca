"""The append journal: `<archive>.amber-journal`, which says where an archive ended before an
append that has not finished (docs/spec/archive.md, "Writing safely").

An append writes its journal before it writes any byte after the archive's end and removes it
once the new end records are complete: that removal is the commit. The journal is one line,

    amber-append 2 <size> <dev> <ino> <tail crc> <token> <crc>

the archive's size before the append, the device and inode of the file it was written for, the
CRC-32 of the archive's last bytes before the append (up to `TAIL` of them, which hold its end
records), a random token that tells two journals apart, and the CRC-32 of everything before it.
It is written to a temporary name and renamed into place, so a journal that exists is whole;
an empty or cut one (from a writer that failed while writing it, or from an older amber that
wrote it in place) is recognised as torn, written before the archive was touched.

Every journal found is one of `State`'s cases, and each case has one meaning:
- `PENDING`: an append to this very file (same device, inode and bytes before the append) has
  not finished. Its writer is alive if it still holds the archive's lock; if not, it died, and
  the next writer cuts the file back to `size`. Readers read the archive's first `size` bytes.
- `STALE`: written for another file (the archive was replaced since) or for bytes that are no
  longer there: it says nothing about this file and is removed by the next writer.
- `TORN`: not a whole journal: its writer stopped before touching the archive, so the archive is
  whole; removed by the next writer.
A journal of amber 0.1 (`amber-append <size>`) names no file: it is `PENDING` when the archive's
first `size` bytes end in a zip end record, else `STALE`.
"""

from __future__ import annotations

import contextlib
import enum
import os
import secrets
import zlib
from dataclasses import dataclass

from amber.archive import _files

SUFFIX = ".amber-journal"
MAGIC = "amber-append"
VERSION = "2"
# The archive's last bytes before an append that the journal fingerprints: they hold the end
# records and (for most archives) the whole central directory.
TAIL = 1 << 16
_EOCD = b"PK\x05\x06"


class State(enum.Enum):
    ABSENT = "absent"
    PENDING = "pending"
    STALE = "stale"
    TORN = "torn"


@dataclass(frozen=True)
class Journal:
    """A journal as found next to an archive: its state, and for `PENDING` the archive's size
    before the append. `raw` is the journal's bytes (None when absent), which tell two readings
    of it apart."""

    state: State
    size: int | None = None
    raw: bytes | None = None


def path_of(archive: str) -> str:
    return archive + SUFFIX


def _tail_crc(fd: int, size: int) -> int:
    n = min(size, TAIL)
    return zlib.crc32(os.pread(fd, n, size - n)) if n else 0


def write(archive: str, fd: int, durable: bool) -> bytes:
    """Write the journal of an append to the file open as `fd`, before any byte is appended.
    The caller holds the archive's lock. Written whole under a temporary name, then renamed
    into place; a failure leaves no journal (the temporary file is removed)."""
    st = os.fstat(fd)
    fields = [
        MAGIC,
        VERSION,
        str(st.st_size),
        str(st.st_dev),
        str(st.st_ino),
        str(_tail_crc(fd, st.st_size)),
        secrets.token_hex(8),
    ]
    body = " ".join(fields)
    line = f"{body} {zlib.crc32(body.encode('ascii'))}\n".encode("ascii")
    target = path_of(archive)
    tmp = target + ".tmp"
    try:
        with open(tmp, "wb") as f:
            f.write(line)
            f.flush()
            if durable:
                os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return line


def peek(archive: str) -> bytes | None:
    """The journal's bytes as they are now, or None if there is none."""
    try:
        fd = os.open(path_of(archive), os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return None
    try:
        return os.read(fd, 512)
    finally:
        os.close(fd)


def read(archive: str, fd: int | None) -> Journal:
    """The journal next to `archive`, judged against the archive open as `fd` (None when the
    archive does not exist: any journal is then stale)."""
    raw = peek(archive)
    if raw is None:
        return Journal(State.ABSENT)
    return Journal(_judge(raw, fd), _size(raw), raw)


def pending_size(archive: str, raw: bytes, file_id: tuple[int, int]) -> int | None:
    """For a reader: where the archive (the file whose device and inode are `file_id`) ends
    before an unfinished append, if the journal `raw` is that append's; else None."""
    try:
        fd = os.open(archive, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return None
    try:
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != file_id or _judge(raw, fd) is not State.PENDING:
            return None
        return _size(raw)
    finally:
        os.close(fd)


def _size(raw: bytes) -> int | None:
    fields = raw.split()
    if len(fields) >= 3 and fields[1] == VERSION.encode():
        return int(fields[2]) if fields[2].isdigit() else None
    if len(fields) == 2 and fields[1].isdigit():
        return int(fields[1])
    return None


def _judge(raw: bytes, fd: int | None) -> State:
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        return State.TORN
    if not text.endswith("\n"):
        return State.TORN
    fields = text.split()
    if not fields or fields[0] != MAGIC:
        return State.TORN
    if len(fields) == 2:  # amber 0.1: "amber-append <size>"
        if not fields[1].isdigit():
            return State.TORN
        return _judge_v1(int(fields[1]), fd)
    numbers = fields[2:6] + fields[7:]
    if len(fields) != 8 or fields[1] != VERSION or not all(f.isdigit() for f in numbers):
        return State.TORN
    body = text[: text.rindex(" ")]
    if zlib.crc32(body.encode("ascii")) != int(fields[7]):
        return State.TORN
    if fd is None:
        return State.STALE
    size, dev, ino, tail = (int(f) for f in fields[2:6])
    st = os.fstat(fd)
    if (st.st_dev, st.st_ino) != (dev, ino) or st.st_size < size:
        return State.STALE
    return State.PENDING if _tail_crc(fd, size) == tail else State.STALE


def _judge_v1(size: int, fd: int | None) -> State:
    """An amber 0.1 journal: pending if the archive's first `size` bytes end in an end record
    (the shortest, without a comment, which is how amber writes them)."""
    if fd is None:
        return State.STALE
    st = os.fstat(fd)
    if size < 22 or st.st_size < size:
        return State.STALE
    end = os.pread(fd, 22, size - 22)
    return State.PENDING if end[:4] == _EOCD and end[20:22] == b"\0\0" else State.STALE


def clear(archive: str, fd: int | None, durable: bool) -> None:
    """Bring the archive and its journal to a committed state, as the writer that holds the
    archive's lock (so no append is alive): a pending append is cut off (the file truncated to
    where it ended before, and synced, so that the cut holds before the journal goes), then any
    journal is removed."""
    journal = read(archive, fd)
    if journal.state is State.ABSENT:
        return
    if journal.state is State.PENDING:
        assert fd is not None and journal.size is not None
        os.ftruncate(fd, journal.size)
        os.fsync(fd)
    remove(archive, durable)


def remove(archive: str, durable: bool) -> None:
    """Remove the journal (an append's commit), and any temporary journal a failed write left."""
    target = path_of(archive)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(target + ".tmp")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(target)
    if durable:
        _files.fsync_dir(archive)
