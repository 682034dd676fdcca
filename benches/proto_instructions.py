"""Instructions per call of amber.proto's operations on the proto study's `bench.Test` message,
counted by valgrind's callgrind.

    python benches/proto_instructions.py [N]       # N calls per count, 2,000 by default

Each count is the difference between a process making N calls, the garbage collector off, and
one making none, divided by N, counted as `benches/instructions.py` counts (with
PYTHONHASHSEED=0: with random str hashes the count moves by a few percent from run to run).
Instruction counts do not depend on the machine's load, so they show whether a change (a
move of code, an optimisation) changed the work done, where timings on a shared machine cannot.
Needs valgrind (Debian package `valgrind`); Google's `protobuf` is not needed.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable
from typing import Any

from amber.bench.parts.proto.contenders import OPS
from instructions import collected


def operation(op: str) -> Callable[[], Any]:
    """One call of `op` on the study's message, built from the study's contents."""
    from amber.bench.parts.proto.contenders import amber_class
    from amber.bench.parts.proto.workloads import contents, read_all

    cls: Any = amber_class()
    kw = contents()
    built = cls(**kw)
    data = built.SerializeToString()
    as_dict = built.to_dict()
    as_json = built.to_json()
    ops: dict[str, Callable[[], Any]] = {
        "serialize": lambda: built.SerializeToString(),
        "parse": lambda: cls.FromString(data),
        "parse and read": lambda: read_all(cls.FromString(data)),
        "build": lambda: cls(**kw),
        "to dict": lambda: built.to_dict(),
        "from dict": lambda: cls.from_dict(as_dict),
        "to JSON": lambda: built.to_json(),
        "from JSON": lambda: cls.from_json(as_json),
    }
    return ops[op]


def count(op: str, calls: int) -> int:
    """Instructions of a child process that sets `op` up and calls it `calls` times."""
    return collected(__file__, ["--run", op, str(calls)])


def main(argv: list[str]) -> int:
    if argv[:1] == ["--run"]:
        call = operation(argv[1])
        gc.disable()
        call()
        for _ in range(int(argv[2])):
            call()
        return 0
    calls = int(argv[0]) if argv else 2000
    for op in OPS:
        per = (count(op, calls) - count(op, 0)) / calls
        print(f"{op}: {per / 1e3:.1f}k instructions per call", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
