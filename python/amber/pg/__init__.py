"""amber.pg: PostgreSQL through psycopg 3, on the user's own connection and transaction.

- `register(context)` and `Amber(value)`: Python objects stored in `bytea` in amber format,
  sent as binary parameters and decoded from the result buffer;
- `Store(conn, table)`: a dict-like object store on a table;
- `amber.pg.testing.start()`: a throwaway PostgreSQL server for tests.

Needs psycopg 3 (`pip install "psycopg[binary]"`, amber's `pg` extra).
"""

from __future__ import annotations

from amber.pg import testing
from amber.pg._adapt import Amber, AmberDumper, AmberLoader, AmberTextLoader, register
from amber.pg._store import Store

__all__ = ["Amber", "AmberDumper", "AmberLoader", "AmberTextLoader", "Store", "register", "testing"]
