"""Rerun the "objects" claim: W1 small/medium/large and W2 through every codec (seed 003,
ANCHORS.md section 1). Options are those of `amber bench`, e.g. `--quick`, `--codecs`, `--repeat`;
output goes to bench-out/objects unless `--out` is given."""

from __future__ import annotations

import sys

from amber.cli import main

STUDY = "objects"

if __name__ == "__main__":
    args = sys.argv[1:]
    if not any(a == "--out" or a.startswith("--out=") for a in args):
        args += ["--out", f"bench-out/{STUDY}"]
    raise SystemExit(main(["bench", "--studies", STUDY, *args]))
