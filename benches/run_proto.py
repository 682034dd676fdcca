"""Rerun the "proto" study: a family of message shapes (the benchmark's bench.Test, maps of
messages, many strings, packed numbers, a deep chain, scalar fields, records, a tiny message)
serialized, parsed, and parsed and read field by field by Google's protobuf (upb backend; its
pure-Python backend in a child process on bench.Test), amber.proto and bufbuild's protobuf-py;
bench.Test also built from Python values and through ProtoJSON (see benches/README.md). Options
are those of `amber bench`, e.g. `--quick`, `--contenders`, `--repeat`; output goes to
bench-out/proto unless `--out` is given."""

from __future__ import annotations

import sys

from amber.cli import rerun

if __name__ == "__main__":
    raise SystemExit(rerun("proto", sys.argv[1:]))
