"""Rerun the "objects" claim: W1 small/medium/large and W2 through every codec (seed 003,
ANCHORS.md section 1). Options are those of `amber bench`, e.g. `--quick`, `--codecs`, `--repeat`;
output goes to bench-out/objects unless `--out` is given."""

from __future__ import annotations

import sys

from amber.cli import rerun

if __name__ == "__main__":
    raise SystemExit(rerun("objects", sys.argv[1:]))
