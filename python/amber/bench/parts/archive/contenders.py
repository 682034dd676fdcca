"""The archive part's contenders: amber.Archive (stored, and with zstd), one pickle file, and
joblib (read whole, and with its memory map). Each writes a workload's dict to a file in a
scratch folder, then reads it back: every key, one small key, and the big frame; every result
is checked against the value before anything is timed.

Reads follow the write in the same process, so the file is in the page cache for every
contender alike: the figures are CPU and memory costs, not disk speed.
"""

from __future__ import annotations

import functools
import pickle
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from amber.bench.engine.contender import Contender, Trial
from amber.bench.engine.exact import exactly_equal
from amber.bench.engine.registry import Part, register_part
from amber.bench.parts.archive.workloads import FRAME, KEY

ARCHIVE = register_part(
    Part(
        "archive",
        baseline="pickle-5",
        label="Archives",
        description="amber.Archive against one pickle file and joblib",
    )
)

Write = Callable[[dict[str, Any], Path], None]
ReadAll = Callable[[Path], dict[str, Any]]
ReadKey = Callable[[Path, str], Any]


@contextmanager
def _scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="amber-bench-archive-") as d:
        yield Path(d)


def same(a: Any, b: Any) -> bool:
    """Equal values of the same types: frames and arrays compared by content (a mapped read
    gives other blocks and flags than the original, the same values), the rest exactly."""
    if isinstance(a, dict):
        return type(b) is dict and list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if type(a).__module__.startswith("pandas"):
        # Values, dtypes, index and columns; memory-mapped columns are as good as any.
        return type(b) is type(a) and bool(a.equals(b)) and a.index.equals(b.index)
    if type(a).__module__ == "numpy":
        import numpy as np

        return type(b) is type(a) and a.dtype == b.dtype and bool(np.array_equal(a, b))
    return exactly_equal(a, b)


def archive(
    name: str, write: Write, read_all: ReadAll, read_key: ReadKey, package: str | None, note: str
) -> Contender:
    """Operations "write", "read" (every key), "read key" (the workload's small key) and "read
    frame" (its big frame, when it has one)."""

    def prepare(t: Trial) -> None:
        path = t.session / f"{t.workload.name}.{name}"
        t.cleanup.callback(path.unlink, missing_ok=True)
        t.run("write", lambda value: write(value, path), t.value)
        t.size = path.stat().st_size
        back = t.run("read", read_all, path)
        t.expect(same(t.value, back), "what was read differs from what was written")
        for op, option in (("read key", KEY), ("read frame", FRAME)):
            key = t.options.get(option)
            if isinstance(key, str):
                got = t.run(op, functools.partial(_read_one, read_key, key), path)
                t.expect(same(t.value[key], got), f"{op} {key!r} differs")

    return Contender(name, prepare, setup=_scratch, package=package, note=note)


def _read_one(read_key: ReadKey, key: str, path: Path) -> Any:
    return read_key(path, key)


# --- amber -------------------------------------------------------------------------------------


def _amber(name: str, note: str, verify: bool = False, **options: Any) -> Contender:
    from amber import Archive

    def write(value: dict[str, Any], path: Path) -> None:
        with Archive(path, "w", **options) as a:
            for k, v in value.items():
                a[k] = v

    def read_all(path: Path) -> dict[str, Any]:
        with Archive(path, verify=verify) as a:
            return {k: a[k] for k in a}

    def read_key(path: Path, key: str) -> Any:
        with Archive(path, verify=verify) as a:
            return a[key]

    return archive(name, write, read_all, read_key, "amber", note)


@ARCHIVE.contender("amber")
def _amber_stored() -> Contender:
    return _amber("amber", "stored entries, read mapped (verify=False)")


@ARCHIVE.contender("amber-verified")
def _amber_verified() -> Contender:
    return _amber("amber-verified", "stored; every read checks its BLAKE3 hash", verify=True)


@ARCHIVE.contender("amber-zstd")
def _amber_zstd() -> Contender:
    return _amber(
        "amber-zstd",
        "compression='zstd' (default levels: 3 for amber entries, 1 for arrays and tables; "
        "numbers byte-shuffled)",
        compression="zstd",
    )


# --- pickle and joblib --------------------------------------------------------------------------


@ARCHIVE.contender("pickle-5")
def _pickle5() -> Contender:
    def write(value: dict[str, Any], path: Path) -> None:
        with open(path, "wb") as f:
            pickle.dump(value, f, protocol=5)

    def read_all(path: Path) -> dict[str, Any]:
        with open(path, "rb") as f:
            out: dict[str, Any] = pickle.load(f)
        return out

    def read_key(path: Path, key: str) -> Any:
        return read_all(path)[key]

    return archive("pickle-5", write, read_all, read_key, None, "one file, protocol 5")


@ARCHIVE.contender("joblib")
def _joblib() -> Contender:
    import joblib

    def write(value: dict[str, Any], path: Path) -> None:
        joblib.dump(value, path)

    def read_all(path: Path) -> dict[str, Any]:
        out: dict[str, Any] = joblib.load(path)
        return out

    def read_key(path: Path, key: str) -> Any:
        return read_all(path)[key]

    return archive("joblib", write, read_all, read_key, "joblib", "joblib.dump / load")


@ARCHIVE.contender("joblib-mmap")
def _joblib_mmap() -> Contender:
    import joblib

    def write(value: dict[str, Any], path: Path) -> None:
        joblib.dump(value, path)

    def read_all(path: Path) -> dict[str, Any]:
        out: dict[str, Any] = joblib.load(path, mmap_mode="r")
        return out

    def read_key(path: Path, key: str) -> Any:
        return read_all(path)[key]

    return archive("joblib-mmap", write, read_all, read_key, "joblib", "load(mmap_mode='r')")
