"""The "google-python" contender, measured in a child interpreter.

Google's protobuf picks its backend once per process, from PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION
as google.protobuf is first imported; this process runs upb. So the study starts this Python again
with the variable set to "python"; the child builds the workload, checks the contender and times
its operations with the engine's own code and the run's timing policy, then prints the row
as JSON. Its samples are not taken in turn with the in-process contenders': the child runs after
them, and its ratios divide by upb's medians from this process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

from amber.bench.engine.contender import Workload
from amber.bench.engine.measure import Row, check_contender, time_checked
from amber.bench.engine.timing import Timing, TimingPolicy

PYTHON_BACKEND = "python"
TIMEOUT_S = 1800
# `-c`, not `-m`: this module is imported by its package, which `-m` would run a second time.
CHILD = "import sys; from amber.bench.parts.proto.child import main; sys.exit(main(sys.argv[1:]))"


class Unavailable(Exception):
    """The child could not run: the contender is reported not run, with why."""


def measure(name: str, workload: Workload, policy: TimingPolicy) -> Row:
    """Check and time contender `name` on `workload` in a child with Google's pure-Python
    backend; its row, as the child measured it."""
    from amber.bench.parts.proto.contenders import ENV

    spec = {
        "contender": name,
        "workload": workload.name,
        "target_ns": policy.target_ns,
        "repeats": policy.repeats,
        "budget_ns": policy.budget_ns,
    }
    env = {**os.environ, ENV: PYTHON_BACKEND}
    try:
        out = subprocess.run(
            [sys.executable, "-c", CHILD, json.dumps(spec)],
            capture_output=True,
            text=True,
            env=env,
            timeout=TIMEOUT_S,
        )
    except (subprocess.SubprocessError, OSError) as e:
        raise Unavailable(f"the child process did not finish ({type(e).__name__}: {e})") from e
    lines = out.stdout.strip().splitlines()
    if out.returncode != 0 or not lines:
        said = out.stderr.strip().splitlines()
        raise Unavailable(
            f"the child process failed (exit {out.returncode}: {said[-1] if said else 'no output'})"
        )
    return row_from_json(json.loads(lines[-1]))


def row_from_json(data: dict[str, Any]) -> Row:
    """A row from its results.json form (`Row.to_json`)."""
    ops = {
        op: Timing(t["median_ns"], tuple(t["samples_ns"]), t["loops"])
        for op, t in data["ops"].items()
    }
    return Row(
        data["workload"],
        data["contender"],
        data["status"],
        data["size_bytes"],
        ops,
        input=data["input"],
        note=data["note"],
    )


def main(argv: Sequence[str]) -> int:
    """The child: resolve the contender in this process (its backend set by the environment),
    check it on the workload, time it, print its row as one line of JSON."""
    from amber.bench.parts.proto.contenders import PROTO
    from amber.bench.parts.proto.workloads import WORKLOADS

    spec = json.loads(argv[0])
    found, skipped = PROTO.resolve([spec["contender"]])
    if not found:
        print(f"{skipped[0].name}: {skipped[0].reason}", file=sys.stderr)
        return 1
    workload = WORKLOADS[spec["workload"]]()
    policy = TimingPolicy(spec["target_ns"], spec["repeats"], spec["budget_ns"])
    checked = check_contender(found[0], workload, workload.build())
    (row,) = time_checked([checked], policy)
    print(json.dumps(row.to_json()))
    return 0
