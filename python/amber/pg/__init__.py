"""amber.pg: PostgreSQL through psycopg 3, on the user's own connection and transaction.

- `register(context)` and `Amber(value)`: Python objects stored in `bytea` in amber format,
  sent as binary parameters and decoded from the result buffer;
- `Store(conn, table)`: a dict-like object store on a table (`AsyncStore` on an AsyncConnection);
- `copy_in(conn, table, data)`: rows, DataFrames or Arrow tables loaded with one binary COPY;
- `copy_out(conn, query, into=...)` and `fetch(conn, query, params, into=...)`: binary reads
  into rows, NumPy columns, Arrow, pandas or polars (coroutines on a psycopg AsyncConnection);
- `amber.pg.testing.start()`: a throwaway PostgreSQL server for tests.

Needs psycopg 3 (`pip install "psycopg[binary]"`, amber's `pg` extra).
"""

from __future__ import annotations

from amber.pg import testing
from amber.pg._adapt import Amber, AmberDumper, AmberLoader, AmberTextLoader, register
from amber.pg._async import AsyncStore
from amber.pg._copy import copy_in, copy_out, fetch
from amber.pg._store import Store

__all__ = [
    "Amber",
    "AmberDumper",
    "AmberLoader",
    "AmberTextLoader",
    "AsyncStore",
    "Store",
    "copy_in",
    "copy_out",
    "fetch",
    "register",
    "testing",
]
