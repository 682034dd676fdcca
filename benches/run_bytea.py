"""Rerun the "bytea" study: 10,000 W3-shaped objects per size stored in a bytea column, fetched and
decoded by psycopg 3, psycopg2 and asyncpg with pickle, and by amber.pg's adapters and Store,
against a throwaway PostgreSQL; client CPU time and a log-log plot by object size (see
docs/benchmarks.md). Options are those of `amber bench`; output goes to bench-out/bytea unless
`--out` is given."""

from __future__ import annotations

import sys

from amber.cli import rerun

if __name__ == "__main__":
    raise SystemExit(rerun("bytea", sys.argv[1:]))
