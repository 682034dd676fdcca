"""Rerun the "archive" study: the nested dict W2 and a mixed analysis result (a large float
DataFrame, two medium ones, a config, labels) written to and read from one file by amber.Archive,
pickle and joblib (see docs/benchmarks.md). Options are those of `amber bench`, e.g. `--quick`,
`--contenders`, `--repeat`; output goes to bench-out/archive unless `--out` is given."""

from __future__ import annotations

import sys

from amber.cli import rerun

if __name__ == "__main__":
    raise SystemExit(rerun("archive", sys.argv[1:]))
