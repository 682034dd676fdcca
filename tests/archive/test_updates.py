"""Changing an archive: appends, replacements and deletions, compaction, the modes, the keys it
takes, and writes that fail or are killed, which leave the previous archive."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import threading
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import amber
from amber import Archive
from tests.archive.build import write


def test_append_adds_replaces_and_deletes_without_rewriting(tmp_path: Path) -> None:
    path = tmp_path / "a.zip"
    big = np.arange(1_000_000.0)
    write(path, {"big": big, "x": 1, "y": 2})
    size = path.stat().st_size
    with open(path, "rb") as f:
        head = f.read(size - 4096)
    with Archive(path, "a") as a:
        a["z"] = 3
        a["x"] = "replaced"
        del a["y"]
        assert a["z"] == 3 and a["x"] == "replaced" and a["big"][-1] == big[-1]
    with open(path, "rb") as f:
        assert f.read(len(head)) == head  # the old entries' bytes are untouched
    with Archive(path) as a:
        assert sorted(a) == ["big", "x", "z"]
        assert a["x"] == "replaced" and np.array_equal(a["big"], big)
    with zipfile.ZipFile(path) as z:
        assert z.testzip() is None


def test_compact_drops_replaced_and_deleted_bytes(tmp_path: Path) -> None:
    path = tmp_path / "a.zip"
    big = np.arange(1_000_000.0)
    write(path, {"big": big, "x": 1, "old": np.zeros(500_000), "z": {"k": b"v" * 100_000}})
    with Archive(path, "a") as a:
        a["big"] = big * 2  # replaced: the old 8 MB stay in the file
        del a["old"]
        a["y"] = {"s": {"a", "b"}}
    grown = path.stat().st_size
    with Archive(path, "a", compression="zstd") as a:
        a["w"] = list(range(1000))
        a.compact()
    assert path.stat().st_size < grown - 11_000_000
    with Archive(path) as a:
        assert list(a) == ["x", "z", "big", "y", "w"]
        assert np.array_equal(a["big"], big * 2) and a["big"].ctypes.data % 64 == 0
        assert a["y"] == {"s": {"a", "b"}} and a["w"] == list(range(1000))
        assert a.verify() == []
        assert a.info("w")["entries"]["w.amber"]["method"] == "zstd"
    with zipfile.ZipFile(path) as z:
        assert z.namelist()[-1] == ".amber/manifest.json"
        for info in z.infolist():  # zipfile checks each CRC-32 (zstd needs Python 3.14)
            if info.compress_type != 93 or sys.version_info >= (3, 14):
                z.read(info)
    assert not list(tmp_path.glob(".amber-*"))
    # The same file as writing the live keys afresh.
    fresh = tmp_path / "fresh.zip"
    with Archive(fresh, "w") as a:
        for k, v in (("x", 1), ("z", {"k": b"v" * 100_000}), ("big", big * 2)):
            a[k] = v
        a["y"] = {"s": {"a", "b"}}
        a.put("w", list(range(1000)), compression="zstd")
    assert fresh.read_bytes() == path.read_bytes()


def test_compact_in_write_mode_and_refused_for_reading(tmp_path: Path) -> None:
    path = tmp_path / "w.zip"
    with Archive(path, "w") as a:
        a["k"] = np.arange(100_000)
        a["k"] = "small"
        a.compact()
    assert path.stat().st_size < 10_000
    with Archive(path) as a:
        assert a["k"] == "small"
        with pytest.raises(ValueError, match="reading"):
            a.compact()


def test_a_failed_compaction_leaves_the_written_archive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from amber.archive import _zip

    path = tmp_path / "a.zip"
    write(path, {"a": np.arange(100_000), "b": 2})

    def broken(self: Any, entry: Any, data: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_zip.ZipSink, "copy", broken)
    with pytest.raises(OSError, match="No space"), Archive(path, "a") as a:
        a["a"] = "replaced"
        a.compact()
    with Archive(path) as a:  # the append completed; only the copy failed
        assert a["a"] == "replaced" and a["b"] == 2 and a.verify() == []
    assert not list(tmp_path.glob(".amber-*")) and not list(tmp_path.glob("*.amber-journal"))


def test_read_back_before_closing(tmp_path: Path) -> None:
    with Archive(tmp_path / "w.zip", "w", compression="zstd") as a:
        a["x"] = {"k": [1, 2]}
        a["arr"] = np.arange(10)
        assert a["x"] == {"k": [1, 2]} and a["arr"][3] == 3


def test_modes(tmp_path: Path) -> None:
    path = tmp_path / "m.zip"
    with pytest.raises(FileNotFoundError):
        Archive(path)
    write(path, {"a": 1})
    with pytest.raises(FileExistsError):
        Archive(path, "x")
    with Archive(tmp_path / "new.zip", "x") as a:
        a["b"] = 2
    with Archive(path) as a, pytest.raises(ValueError, match="reading"):
        a["b"] = 2
    write(path, {"c": 3})  # "w" replaces
    with Archive(path) as a:
        assert list(a) == ["c"]
    with pytest.raises(ValueError):
        Archive(path, "q")  # type: ignore[arg-type]
    a = Archive(path)
    a.close()
    with pytest.raises(ValueError, match="closed"):
        a["c"]


@pytest.mark.parametrize("key", ["", "/abs", "a/../b", "a//b", "a\\b", ".amber/x", "a/./b", 5])
def test_invalid_keys_are_refused(tmp_path: Path, key: Any) -> None:
    with Archive(tmp_path / "k.zip", "w") as a, pytest.raises((ValueError, TypeError)):
        a[key] = 1


def test_keys_may_be_paths(tmp_path: Path) -> None:
    path = tmp_path / "p.zip"
    write(path, {"model/weights": np.ones(3), "model/config": {"a": 1}})
    with Archive(path) as a:
        assert sorted(a) == ["model/config", "model/weights"]
        assert a["model/config"] == {"a": 1}


def test_a_failed_write_keeps_the_previous_archive(tmp_path: Path) -> None:
    path = tmp_path / "keep.zip"
    write(path, {"old": 1})
    before = path.read_bytes()
    with pytest.raises(RuntimeError), Archive(path, "w") as a:
        a["new"] = 2
        raise RuntimeError("midway")
    assert path.read_bytes() == before
    with pytest.raises(RuntimeError), Archive(path, "a") as a:
        a["new"] = np.zeros(100_000)
        raise RuntimeError("midway")
    assert path.read_bytes() == before
    with Archive(path, "a") as a:
        with pytest.raises(amber.EncodeError):
            a["bad"] = object()
        a["fine"] = 1
    with Archive(path) as a:
        assert sorted(a) == ["fine", "old"]
    assert not list(tmp_path.glob(".amber-*")) and not list(tmp_path.glob("*.amber-journal"))


KILLED = """
import os, signal, sys, numpy as np
from amber import Archive
path, mode = sys.argv[1], sys.argv[2]
a = Archive(path, mode)
a["big"] = np.zeros(2_000_000)
a["more"] = np.ones(2_000_000)
os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.parametrize("mode", ["w", "a"])
def test_a_writer_killed_midway_leaves_the_old_archive_readable(tmp_path: Path, mode: str) -> None:
    path = tmp_path / "killed.zip"
    write(path, {"old": [1, 2, 3], "arr": np.arange(5)})
    before = path.read_bytes()
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(KILLED), str(path), mode])
    assert proc.returncode == -signal.SIGKILL
    with Archive(path) as a:
        assert sorted(a) == ["arr", "old"] and a["old"] == [1, 2, 3]
    with Archive(path, "a") as a:  # repairs an append that did not finish
        a["after"] = True
    with Archive(path) as a:
        assert sorted(a) == ["after", "arr", "old"]
    assert path.read_bytes()[: len(before)] == before  # appended after the old end
    with zipfile.ZipFile(path) as z:
        assert z.testzip() is None


def test_replacing_an_archive_leaves_only_the_new_file(tmp_path: Path) -> None:
    """Writing over an archive swaps it in one rename and frees the old file afterwards on a
    thread of its own; readers of the old file keep their views; nothing else is left."""
    path = tmp_path / "r.amber"
    with amber.Archive(path, "w") as a:
        a["x"] = np.arange(100_000)
    with amber.Archive(path) as old:
        view = old["x"]
    for round_ in range(3):
        with amber.Archive(path, "w") as a:
            a["x"] = np.arange(round_, 100_000 + round_)
    for t in threading.enumerate():
        if t.name.startswith("amber-"):
            t.join()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.amber"]
    with amber.Archive(path) as a:
        assert a["x"][0] == 2
    assert view[0] == 0 and view[-1] == 99_999
