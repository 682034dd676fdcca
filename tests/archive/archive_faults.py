"""A fault campaign against amber.Archive's writers: each round forks a child that runs one
writing session ("w", "x", "a" with puts, replacements and deletions, `compact()`, or a user
removing the file), kills it at a random moment (or lets it finish, or lets it run out of file
size under RLIMIT_FSIZE), then checks that the archive holds exactly the state before the
session or the state after it, and the state after it whenever the child reported success.

    python tests/archive/archive_faults.py DIR ROUNDS SEED

prints a JSON summary and exits 0, or prints what went wrong and exits 1. The parent forks
from a process that has run no archive code, so the children start in a few milliseconds;
tests/archive/test_writers.py runs it.
"""

from __future__ import annotations

import json
import os
import random
import resource
import signal
import sys
import time
from typing import Any

import numpy as np

import amber

State = dict[str, tuple[str, int, int]] | None  # key -> (kind, seed, size); None: no file


def value(desc: tuple[str, int, int]) -> Any:
    kind, seed, n = desc
    if kind == "array":
        return np.arange(n, dtype=np.float64) + seed
    return {"seed": seed, "t": (seed, str(seed)), "b": bytes(range(seed % 256)) * (n // 256)}


def same(got: Any, want: Any) -> bool:
    if isinstance(want, np.ndarray):
        return type(got) is np.ndarray and got.dtype == want.dtype and np.array_equal(got, want)
    return type(got) is type(want) and got == want


def random_op(rng: random.Random, state: State, counter: list[int]) -> dict[str, Any]:
    def desc() -> tuple[str, int, int]:
        counter[0] += 1
        if rng.random() < 0.5:
            return ("array", counter[0], rng.choice([1_000, 50_000, 400_000]))
        return ("small", counter[0], rng.choice([0, 4_096, 300_000]))

    compression = rng.choice(["stored", "stored", "zstd"])
    roll = rng.random()
    if state is None:
        mode = rng.choice(["w", "x", "a"])
    elif roll < 0.05:
        return {"mode": "rm"}
    elif roll < 0.25:
        mode = "w"
    else:
        mode = "a"
    steps: list[tuple[str, str, Any]] = []
    keys = list(state or {}) if mode == "a" else []
    for _ in range(rng.randint(1, 4)):
        if keys and rng.random() < 0.25:
            key = rng.choice(keys)
            steps.append(("del", key, None))
            keys.remove(key)
        else:
            key = rng.choice(keys) if keys and rng.random() < 0.3 else f"k{rng.randint(0, 30)}"
            steps.append(("put", key, desc()))
            if key not in keys:
                keys.append(key)
    compact = mode != "x" and rng.random() < 0.2
    return {"mode": mode, "steps": steps, "compact": compact, "compression": compression}


def apply(state: State, op: dict[str, Any]) -> State:
    if op["mode"] == "rm":
        return None
    new: dict[str, Any] = dict(state or {}) if op["mode"] == "a" else {}
    for action, key, desc in op["steps"]:
        if action == "del":
            new.pop(key, None)
        else:
            new[key] = desc
    return new


def run(path: str, op: dict[str, Any]) -> None:
    if op["mode"] == "rm":
        if os.path.exists(path):  # a state the previous session may or may not have committed
            os.unlink(path)
        return
    with amber.Archive(path, op["mode"], compression=op["compression"]) as a:
        for action, key, desc in op["steps"]:
            if action == "del":
                if key in a:  # a state the previous session may or may not have committed
                    del a[key]
            else:
                a[key] = value(desc)
        if op["compact"]:
            a.compact()


def read(path: str) -> dict[str, Any] | None:
    """The archive's values by key, checked by `verify()`; None when there is no archive."""
    if not os.path.exists(path):
        return None
    with amber.Archive(path) as a:
        problems = a.verify()
        if problems:
            raise AssertionError(f"verify() found problems: {problems}")
        return {k: a[k] for k in a}


def matches(values: Any, state: State) -> bool:
    if state is None or values is None:
        return state is None and values is None
    if set(values) != set(state):
        return False
    return all(same(values[k], value(d)) for k, d in state.items())


def child(path: str, op: dict[str, Any], fsize: int | None, w: int) -> None:
    code = 0
    try:
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        run(path, op)
        os.write(w, b"ok")
    except BaseException as e:
        os.write(w, f"err {type(e).__name__}: {e}"[:500].encode())
        code = 3
    os._exit(code)


def campaign(folder: str, rounds: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    path = os.path.join(folder, "faults.amber.zip")
    candidates: list[State] = [None]
    counter = [0]
    typical: dict[str, float] = {}
    tally = {"rounds": 0, "killed": 0, "completed": 0, "failed": 0, "fsize": 0, "checked": 0}
    for i in range(rounds):
        base = candidates[0] if len(candidates) == 1 else rng.choice(candidates)
        op = random_op(rng, base, counter)
        if op["mode"] == "x" and os.path.exists(path):
            op["mode"] = "w"
        fsize = None
        if op["mode"] != "rm" and rng.random() < 0.1:
            size = os.path.getsize(path) if os.path.exists(path) else 0
            fsize = size + rng.randint(0, 600_000)
            tally["fsize"] += 1
        r, w = os.pipe()
        start = time.monotonic()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            os.close(r)
            child(path, op, fsize, w)
        os.close(w)
        kind = f"{op['mode']}{'c' if op.get('compact') else ''}"
        kill_at = rng.uniform(0, typical.get(kind, 0.05) * 1.3) if rng.random() < 0.8 else None
        killed = False
        while True:
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if kill_at is not None and time.monotonic() - start >= kill_at:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                killed = True
                break
            time.sleep(0.0002)
        report = b""
        while chunk := os.read(r, 4096):
            report += chunk
        os.close(r)
        elapsed = time.monotonic() - start
        if report == b"ok" and not killed:
            typical[kind] = 0.7 * typical.get(kind, elapsed) + 0.3 * elapsed
        tally["rounds"] += 1
        if os.environ.get("AMBER_FAULTS_VERBOSE"):
            print(i, op["mode"], op.get("steps"), report[:80], killed, fsize, file=sys.stderr)
        after = [apply(s, op) for s in candidates]
        if report == b"ok":
            tally["completed"] += 1
            candidates = after
        elif report.startswith(b"err"):
            tally["failed"] += 1
            if fsize is None and op["mode"] != "x":
                raise AssertionError(f"round {i}: {op['mode']} failed: {report.decode()}")
            if op["mode"] == "a" and op["compact"]:
                # Compaction runs after the append is complete: its failure keeps the append.
                candidates = candidates + after
        else:
            tally["killed"] += 1
            candidates = candidates + after
        if report != b"ok" and op["mode"] == "a" and None in candidates:
            # Mode "a" on a missing file starts from an empty archive, which a kill leaves.
            candidates.append({})
        unique: list[State] = []
        for s in candidates:
            if s not in unique:
                unique.append(s)
        candidates = unique
        if len(candidates) > 1 and (len(candidates) > 3 or rng.random() < 0.6):
            values = read(path)
            kept = [s for s in candidates if matches(values, s)]
            if not kept:
                got = None if values is None else sorted(values)
                raise AssertionError(
                    f"round {i} ({op['mode']}, report {report[:200]!r}, killed={killed}): "
                    f"the archive holds keys {got}, which is none of the "
                    f"{len(candidates)} states the writers' reports allow"
                )
            candidates = kept[:1]
            tally["checked"] += 1
    values = read(path)
    if not any(matches(values, s) for s in candidates):
        raise AssertionError("at the end, the archive holds none of the states allowed")
    tally["checked"] += 1
    return tally


def main() -> None:
    folder, rounds, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    try:
        tally = campaign(folder, rounds, seed)
    except AssertionError as e:
        print(f"FAILED (seed {seed}): {e}")
        sys.exit(1)
    print(json.dumps(tally))


if __name__ == "__main__":
    main()
