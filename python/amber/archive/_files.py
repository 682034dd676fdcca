"""The file operations behind a safe write: a temporary file next to the archive created as
`open()` would create the archive itself, and the rename or link that makes it the archive."""

from __future__ import annotations

import contextlib
import os
import secrets
import threading

TEMP_PREFIX = ".amber-"
TEMP_SUFFIX = ".tmp"
# True once the interpreter is exiting: no thread started then would be waited for, so the
# old file of a replaced archive is freed on the spot.
free_inline = False


def target(path: str) -> str:
    """The file `path` names: itself, or where a symlink there leads (through any chain)."""
    return os.path.realpath(path) if os.path.islink(path) else path


def create_temp(path: str) -> tuple[int, str]:
    """A new empty file next to `path`, open for reading and writing: `(fd, its path)`. Its
    permissions are the ones `open(path, "w")` would give a new file (0o666 less the umask and
    the folder's default ACL), since the kernel applies them here the same way."""
    folder = os.path.dirname(os.path.abspath(path))
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    flags |= getattr(os, "O_BINARY", 0)
    while True:
        tmp = os.path.join(folder, f"{TEMP_PREFIX}{secrets.token_hex(6)}{TEMP_SUFFIX}")
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue


def adopt_mode(tmp: str, path: str) -> None:
    """Give the new file `tmp` the permission bits (and, where allowed, the owner) of the file
    at `path` that it is about to replace, so that replacing an archive keeps who may read it.
    Nothing when there is no file at `path`."""
    try:
        old = os.stat(path)
    except FileNotFoundError:
        return
    new = os.stat(tmp)
    if hasattr(os, "chown") and (old.st_uid, old.st_gid) != (new.st_uid, new.st_gid):
        with contextlib.suppress(OSError):  # only the owner's group, or root, may change it
            os.chown(tmp, old.st_uid, old.st_gid)
    os.chmod(tmp, old.st_mode & 0o7777)


def link_new(tmp: str, path: str) -> None:
    """Make `tmp` the file at `path`, failing with FileExistsError if there is one: a hard link,
    which never replaces, then the temporary name removed."""
    os.link(tmp, path)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)


def replace(tmp: str, path: str, old_fd: int | None = None) -> None:
    """Put the file `tmp` in place of `path` in one rename, and free the old file's blocks on
    a thread of their own: with an extra link kept to it, the rename only swaps names, and the
    file system's work of releasing a large file (tens of milliseconds per 100 MB on ext4)
    happens while the caller goes on. Without hard links, the rename does it all. `old_fd`, a
    descriptor of the old file (the writer's lock), is closed on that thread too, after the
    link: whichever goes last frees the file."""
    old = tmp + ".old"
    try:
        os.link(path, old)
    except OSError:  # no old file, or no hard links here
        old = ""
    try:
        os.replace(tmp, path)
    except BaseException:
        if old:
            unlink_quietly(old)
        if old_fd is not None:
            os.close(old_fd)
        raise
    if free_inline:
        _free(old, old_fd)
    elif old or old_fd is not None:
        # Not a daemon: the interpreter waits for it at exit, so the link never outlives it.
        threading.Thread(target=_free, args=(old, old_fd), name="amber-free-old").start()


def _free(old: str, old_fd: int | None) -> None:
    if old:
        unlink_quietly(old)
    if old_fd is not None:
        with contextlib.suppress(OSError):
            os.close(old_fd)


def unlink_quietly(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def fsync_dir(path: str) -> None:
    """Sync the folder holding `path`, so that a rename or removal in it holds across a power
    loss (where the file system supports it)."""
    with contextlib.suppress(OSError):
        fd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
