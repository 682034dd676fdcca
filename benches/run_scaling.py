"""Rerun the "scaling" study: W3 dict of dicts from 100 to 1,000,000 entries, decoded from a
read-only memoryview slice (see docs/benchmarks.md). Options are those of `amber bench`, e.g.
`--quick`, `--contenders`, `--repeat`; output goes to bench-out/scaling unless `--out` is given."""

from __future__ import annotations

import sys

from amber.cli import rerun

if __name__ == "__main__":
    raise SystemExit(rerun("scaling", sys.argv[1:]))
