"""Rerun the "pg" study: 1,000,000 rows loaded and read back, and a 27-column query of 1,000 rows run
1,000 times, through psycopg 3 (text, binary, COPY), psycopg2, asyncpg, pgcopy, ADBC, connectorx
and amber.pg, against a throwaway PostgreSQL; client CPU time (see docs/benchmarks.md). Options
are those of `amber bench`, e.g. `--quick`, `--contenders`, `--repeat`; output goes to
bench-out/pg unless `--out` is given."""

from __future__ import annotations

import sys

from amber.cli import rerun

if __name__ == "__main__":
    raise SystemExit(rerun("pg", sys.argv[1:]))
