"""DataZip's series, measured in a child interpreter: DataZip installs only on Python 3.12 or
newer, so it cannot be timed in the process that times amber on older Pythons.

The child runs in its own virtual environment (made once under the user's cache folder, with
DataZip, pandas, pyarrow and NumPy from PyPI), reads the workload's value from a pickle this
process wrote, times DataZip (stored and deflated) and pickle protocol 5 in turn, sample by
sample, and prints the medians. The study reports DataZip against the pickle timed in that same
child, so the ratio compares like with like.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from amber.bench.engine.measure import NOT_EXACT, OK, Row
from amber.bench.engine.timing import Timing, TimingPolicy

CONTENDERS = ("DataZip", "DataZip-deflate", "pickle-5")
PACKAGES = ("datazip", "pandas", "pyarrow", "numpy")


class Unavailable(Exception):
    """No Python 3.12+ here, or its environment could not be made: DataZip is skipped."""


def find_python() -> str:
    """A CPython 3.12 or newer: this one, pyenv's, or one on PATH."""
    if sys.version_info >= (3, 12):
        return sys.executable
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    for minor in ("3.13", "3.12"):
        found = sorted(pyenv.glob(f"{minor}.*/bin/python{minor}")) if pyenv.is_dir() else []
        path = str(found[-1]) if found else shutil.which(f"python{minor}")
        if path:
            return path
    raise Unavailable("no CPython 3.12 or newer found (pyenv or PATH)")


def environment(python: str) -> str:
    """The child's interpreter: a virtual environment with DataZip, made once and cached."""
    version = subprocess.run(
        [python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    venv = cache / "amber" / f"bench-datazip-py{version}"
    child = venv / "bin" / "python"
    stamp = venv / ".amber-ready"
    if stamp.exists():
        return str(child)
    try:
        subprocess.run([python, "-m", "venv", str(venv)], check=True, capture_output=True)
        subprocess.run(
            [str(child), "-m", "pip", "install", "--quiet", *PACKAGES],
            check=True,
            capture_output=True,
            timeout=900,
        )
    except (subprocess.SubprocessError, OSError) as e:
        raise Unavailable(f"could not install DataZip for Python {version}: {e}") from e
    stamp.touch()
    return str(child)


def measure(
    workload: str, value: dict[str, Any], options: dict[str, Any], policy: TimingPolicy
) -> tuple[list[Row], str]:
    """Rows for DataZip and the child's pickle on one workload, and the child's Python version."""
    child = environment(find_python())
    with tempfile.TemporaryDirectory(prefix="amber-bench-datazip-") as d:
        data = Path(d) / "value.pickle"
        with open(data, "wb") as f:
            pickle.dump(value, f, protocol=5)
        spec = {
            "value": str(data),
            "dir": d,
            "key": options.get("key"),
            "frame": options.get("frame"),
            "target_ns": policy.target_ns,
            "repeats": policy.repeats,
            "budget_ns": policy.budget_ns,
        }
        out = subprocess.run(
            [child, "-c", CHILD, json.dumps(spec)], capture_output=True, text=True, timeout=3600
        )
    if out.returncode != 0:
        raise Unavailable(f"the DataZip child failed: {out.stderr.strip()[-500:]}")
    result = json.loads(out.stdout)
    rows = []
    for name in CONTENDERS:
        r = result["contenders"][name]
        ops = {
            op: Timing(t["median_ns"], tuple(t["samples_ns"]), t["loops"])
            for op, t in r["ops"].items()
        }
        status = OK if r["exact"] else NOT_EXACT
        rows.append(
            Row(workload, name, status, r["size"], ops if r["exact"] else {}, note=r["note"])
        )
    return rows, str(result["python"])


# The child: times each contender's operations in rounds (every series one sample per round),
# after checking what each read returns.
CHILD = r"""
import json, os, pickle, statistics, sys, time
from zipfile import ZIP_DEFLATED, ZIP_STORED
import datazip

spec = json.loads(sys.argv[1])
with open(spec["value"], "rb") as f:
    value = pickle.load(f)
d = spec["dir"]


def same(a, b):
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if type(a).__module__.startswith("pandas"):
        return type(b) is type(a) and bool(a.equals(b))
    return type(a) is type(b) and a == b


def dz(name, compression):
    path = os.path.join(d, name + ".zip")
    def write(v):
        if os.path.exists(path):
            os.unlink(path)
        with datazip.DataZip(path, "w", compression=compression) as z:
            for k, x in v.items():
                z[k] = x
    def read(_):
        with datazip.DataZip(path, "r") as z:
            return {k: z[k] for k in value}
    def read_key(k):
        with datazip.DataZip(path, "r") as z:
            return z[k]
    return path, write, read, read_key


def pk():
    path = os.path.join(d, "value.p5")
    def write(v):
        with open(path, "wb") as f:
            pickle.dump(v, f, protocol=5)
    def read(_):
        with open(path, "rb") as f:
            return pickle.load(f)
    def read_key(k):
        return read(None)[k]
    return path, write, read, read_key


contenders = {
    "DataZip": dz("dz", ZIP_STORED),
    "DataZip-deflate": dz("dzd", ZIP_DEFLATED),
    "pickle-5": pk(),
}
series = []
out = {"python": "%d.%d" % sys.version_info[:2], "contenders": {}}
for name, (path, write, read, read_key) in contenders.items():
    ops = [("write", write, value), ("read", read, None)]
    for op, key in (("read key", spec["key"]), ("read frame", spec["frame"])):
        if key:
            ops.append((op, read_key, key))
    write(value)
    exact = same(value, read(None))
    out["contenders"][name] = {
        "exact": exact, "size": os.path.getsize(path), "ops": {},
        "note": "" if exact else "what DataZip read back differs from what was written",
    }
    if exact:
        for op, fn, arg in ops:
            start = time.perf_counter_ns(); fn(arg); first = time.perf_counter_ns() - start
            loops = max(1, spec["target_ns"] // max(first, 1))
            repeats = spec["repeats"] if first * spec["repeats"] <= spec["budget_ns"] else 1
            series.append({"name": name, "op": op, "fn": fn, "arg": arg, "loops": loops,
                           "repeats": repeats, "samples": []})
rounds = max((s["repeats"] for s in series), default=0)
for r in range(rounds):
    turn = series[r % len(series):] + series[: r % len(series)] if series else []
    for s in turn:
        if len(s["samples"]) >= s["repeats"]:
            continue
        start = time.perf_counter_ns()
        for _ in range(s["loops"]):
            s["fn"](s["arg"])
        s["samples"].append((time.perf_counter_ns() - start) / s["loops"])
for s in series:
    out["contenders"][s["name"]]["ops"][s["op"]] = {
        "median_ns": statistics.median(s["samples"]), "samples_ns": s["samples"],
        "loops": s["loops"],
    }
print(json.dumps(out))
"""
