"""Instructions per call of one codec operation, counted by valgrind's callgrind.

    python benches/instructions.py W1-M dumps      # ops: dumps loads pdumps ploads

Wall-clock times on a shared machine vary by 20-50% between runs; instruction counts do not
depend on load. The child runs with PYTHONHASHSEED=0: with random str hashes, object addresses
and so cache collisions change from run to run, moving the count by a few percent. The count is the
difference between a process making 10 calls and one making none, divided by 10. Needs
valgrind (Debian package `valgrind`).
"""

from __future__ import annotations

import os
import pickle
import re
import subprocess
import sys
from typing import Any

import amber
from amber.bench.parts.codec.workloads import w1_records, w2_nested, w3_table

WORKLOADS = {
    "W1-M": lambda: w1_records(1000),
    "W1-L": lambda: w1_records(100_000),
    "W2": w2_nested,
    "W3-10k": lambda: w3_table(10_000),
}
CALLS = 10


def operation(workload: str, op: str) -> Any:
    obj = WORKLOADS[workload]()
    data, pdata = amber.dumps(obj), pickle.dumps(obj, 5)
    return {
        "dumps": lambda: amber.dumps(obj),
        "loads": lambda: amber.loads(data),
        "pdumps": lambda: pickle.dumps(obj, 5),
        "ploads": lambda: pickle.loads(pdata),
    }[op]


def collected(script: str, args: list[str]) -> int:
    """The instructions callgrind counts in `python script args...` (children not followed)."""
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable]
    # A fixed hash seed (unless one is set) makes counts repeat: object layout follows str hashes.
    env = {"PYTHONHASHSEED": "0", **os.environ}
    out = subprocess.run(
        [*cmd, script, *args], capture_output=True, text=True, check=True, env=env
    ).stderr
    found = re.search(r"Collected : (\d+)", out)
    if found is None:
        raise RuntimeError(f"no count in valgrind output:\n{out}")
    return int(found.group(1))


def count(workload: str, op: str, calls: int) -> int:
    return collected(__file__, ["--run", workload, op, str(calls)])


def main(argv: list[str]) -> int:
    if len(argv) == 4 and argv[0] == "--run":
        f = operation(argv[1], argv[2])
        f()  # warm caches and the per-thread state, as in the counted runs
        for _ in range(int(argv[3])):
            f()
        return 0
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    workload, op = argv
    per_call = (count(workload, op, CALLS) - count(workload, op, 0)) / CALLS
    print(f"{argv[0]} {argv[1]}: {per_call / 1e6:.3f} M instructions per call")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
