"""Rerun the "scaling" claim: W3 dict of dicts from 100 to 1,000,000 entries, decoded from a
memoryview slice (seed 000, ANCHORS.md section 1). Options are those of `amber bench`, e.g.
`--quick`, `--codecs`, `--repeat`; output goes to bench-out/scaling unless `--out` is given."""

from __future__ import annotations

import sys

from amber.cli import main

STUDY = "scaling"

if __name__ == "__main__":
    args = sys.argv[1:]
    if not any(a == "--out" or a.startswith("--out=") for a in args):
        args += ["--out", f"bench-out/{STUDY}"]
    raise SystemExit(main(["bench", "--studies", STUDY, *args]))
