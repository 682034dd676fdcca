"""Rerun the "proto" study: seed 001's message (every scalar type, nested, repeated and imported
messages, a map, a oneof) serialized, parsed, parsed and read field by field, and built from
Python values, by Google's protobuf (upb backend, and its pure-Python backend in a child process)
and amber.proto (see benches/README.md). Options are those of `amber bench`, e.g. `--quick`,
`--contenders`, `--repeat`; output goes to bench-out/proto unless `--out` is given."""

from __future__ import annotations

import sys

from amber.cli import rerun

if __name__ == "__main__":
    raise SystemExit(rerun("proto", sys.argv[1:]))
