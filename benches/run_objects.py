"""Rerun the "objects" study: W1 small/medium/large and W2 through every codec, dumps and loads (see
docs/benchmarks.md for the workloads). Options are those of `amber bench`, e.g. `--quick`,
`--contenders`, `--repeat`; output goes to bench-out/objects unless `--out` is given."""

from __future__ import annotations

import sys

from amber.cli import rerun

if __name__ == "__main__":
    raise SystemExit(rerun("objects", sys.argv[1:]))
