"""Rerun the "scaling" claim: W3 dict of dicts from 100 to 1,000,000 entries, decoded from a
memoryview slice (seed 000, ANCHORS.md section 1). Options are those of `amber bench`, e.g.
`--quick`, `--codecs`, `--repeat`; output goes to bench-out/scaling unless `--out` is given."""

from __future__ import annotations

import sys

from amber.cli import rerun

if __name__ == "__main__":
    raise SystemExit(rerun("scaling", sys.argv[1:]))
