"""The writer's lock: one writer per archive at a time, across processes and within one.

A writer (modes "w", "x" and "a") holds an exclusive OS lock on the archive file from open to
close: `flock` on POSIX, `LockFileEx` through `msvcrt.locking` on Windows (on one byte far
past the end of the file, where it blocks no read). The operating system releases it when the
process dies, however it dies, so a crashed writer never leaves the archive locked. The lock
belongs to the file, not to its name: a writer that gets it checks that the name still leads to
the file it locked (a writer replaces the archive by renaming a new file over it), and starts
again on the new file if not. Readers take no lock: they read the committed state the journal
describes (see `_journal`).
"""

from __future__ import annotations

import errno
import os
import sys
import threading
import time
import warnings

from amber.archive._errors import archive_error

# Files this process holds a writer's lock on, by (device, inode): a second writer in the same
# process would wait for itself.
_held: set[tuple[int, int]] = set()
_held_lock = threading.Lock()
_WINDOWS_LOCK_OFFSET = 1 << 62


class Locked:
    """An open file of the archive with its writer's lock held; `fd` is open for reading and
    writing, unless the file is read-only to this process."""

    def __init__(self, fd: int, writable: bool) -> None:
        self.fd = fd
        self.writable = writable
        st = os.fstat(fd)
        self.id = (st.st_dev, st.st_ino)

    def release(self) -> None:
        os.close(self.forget())  # closing the file releases its lock

    def forget(self) -> int:
        """Stop counting this file as held by this process, and give its descriptor to the
        caller, whose closing it releases the lock (a replaced archive's, on the thread that
        frees the old file)."""
        with _held_lock:
            _held.discard(self.id)
        return self.fd


def acquire(path: str, timeout: float | None) -> Locked | None:
    """Lock the archive file at `path` for writing, waiting up to `timeout` seconds (None: as
    long as it takes) for another writer to finish. None when there is no file at `path`."""
    deadline = None if timeout is None else time.monotonic() + timeout
    pause = 0.001
    while True:
        opened = _open(path)
        if opened is None:
            return None
        fd, writable = opened
        try:
            st = os.fstat(fd)
            with _held_lock:
                if (st.st_dev, st.st_ino) in _held:
                    raise archive_error(
                        "locked",
                        f"{path} is already open for writing in this process; close that "
                        "archive first (one writer at a time)",
                    )
                got = _try_lock(fd, path)
                if got:
                    _held.add((st.st_dev, st.st_ino))
        except BaseException:
            os.close(fd)
            raise
        if got:
            locked = Locked(fd, writable)
            try:
                now = os.stat(path)
            except FileNotFoundError:
                now = None
            if now is not None and (now.st_dev, now.st_ino) == locked.id:
                return locked
            # Replaced (or removed) while we waited: lock what the name leads to now.
            locked.release()
            continue
        os.close(fd)
        if deadline is not None and time.monotonic() >= deadline:
            raise archive_error(
                "locked",
                f"{path} is being written by another process (it holds the archive's lock); "
                f"waited {timeout:g} s. One writer at a time: pass lock_timeout= to wait longer",
            )
        time.sleep(pause if deadline is None else min(pause, max(0, deadline - time.monotonic())))
        pause = min(pause * 2, 0.05)


def _open(path: str) -> tuple[int, bool] | None:
    """The file at `path` and whether it is writable: open for reading and writing, or for
    reading only when it is read-only to us (enough to lock it and replace it, not to append);
    None if it is missing."""
    cloexec = getattr(os, "O_CLOEXEC", 0)
    try:
        return os.open(path, os.O_RDWR | cloexec), True
    except FileNotFoundError:
        return None
    except PermissionError:
        try:
            return os.open(path, os.O_RDONLY | cloexec), False
        except FileNotFoundError:
            return None


def _try_lock(fd: int, path: str) -> bool:
    """Take the lock without waiting: True if taken, False if another writer holds it."""
    try:
        if sys.platform == "win32":  # pragma: no cover - tested on Windows only
            import msvcrt

            os.lseek(fd, _WINDOWS_LOCK_OFFSET, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        else:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError as e:
        if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES, errno.EDEADLK):
            return False
        if e.errno in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL):
            warnings.warn(
                f"the file system holding {path} does not support file locks; amber cannot "
                "keep a second writer out, so write it from one process at a time",
                RuntimeWarning,
                stacklevel=4,
            )
            return True
        raise
