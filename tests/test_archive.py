"""amber.Archive: a zip of named values, lazy, mapped, safe, compressible, atomic."""

from __future__ import annotations

import datetime as dt
import decimal
import io
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pandas.testing import assert_frame_equal

import amber
from amber import Archive, ArchiveMixin
from tests.support.exact import assert_exact

VALUES: dict[str, Any] = {
    "config": {"lr": 0.1, "layers": [64, 32], "name": "run-1", "seed": None},
    "exact": {
        "b": b"\x00\xff",
        "d": decimal.Decimal("1.10"),
        "td": dt.timedelta(days=1, microseconds=5),
        "nan": float("nan"),
        "np": np.float32(1.5),
        "t": (1, 2),
        "s": {1, 2},
    },
    "labels": [f"label-{i}" for i in range(200)],
    "text": "a description ✓",
}


def write(path: Path, values: dict[str, Any], **kw: Any) -> None:
    with Archive(path, "w", **kw) as a:
        for k, v in values.items():
            a[k] = v


def test_values_round_trip_exactly(tmp_path: Path) -> None:
    path = tmp_path / "a.amber.zip"
    write(path, VALUES)
    with Archive(path) as a:
        assert sorted(a) == sorted(VALUES) and len(a) == len(VALUES)
        for k, v in VALUES.items():
            assert_exact(a[k], v)
        assert "config" in a and "nope" not in a
        assert a.get("nope") is None
        with pytest.raises(KeyError):
            a["nope"]


@pytest.mark.parametrize(
    ("values", "version"),
    [
        ({"config": {"a": 1}, "w": np.arange(4.0)}, 1),
        ({"pl": pl.DataFrame({"x": [1]}), "pa": pa.table({"x": [1]})}, 1),
        ({"s": pd.Series([1.5])}, 3),
        ({"df": pd.DataFrame({"x": [1]})}, 3),
    ],
)
def test_archives_take_the_oldest_version_that_holds_them(
    tmp_path: Path, values: dict[str, Any], version: int
) -> None:
    path = tmp_path / "a.zip"
    write(path, values)
    with zipfile.ZipFile(path) as z:
        manifest = json.loads(z.read(".amber/manifest.json"))
    assert manifest["amber_archive"] == version
    for key, info in manifest["keys"].items():
        assert info.get("described", False) is (type(values[key]).__module__.startswith("pandas"))
    with amber.Archive(path, "w", compression="zstd") as a:  # a shuffled entry: version 2
        a["w"] = np.arange(1000.0)
    with zipfile.ZipFile(path) as z:
        assert json.loads(z.read(".amber/manifest.json"))["amber_archive"] == 2


def test_the_file_is_a_standard_zip_with_a_readable_manifest(tmp_path: Path) -> None:
    path = tmp_path / "a.zip"
    write(path, {**VALUES, "w": np.arange(6.0).reshape(2, 3), "df": pd.DataFrame({"x": [1]})})
    with zipfile.ZipFile(path) as z:
        assert z.testzip() is None
        names = z.namelist()
        manifest = json.loads(z.read(".amber/manifest.json"))
    assert {"config.amber", "w.npy", "df.arrow", ".amber/manifest.json"} <= set(names)
    # Version 3: the pandas frame is described by its extras, which amber before 0.2 misreads.
    assert manifest["amber_archive"] == 3
    assert manifest["keys"]["w"]["encoding"] == "npy" and manifest["keys"]["w"]["shape"] == [2, 3]
    assert manifest["keys"]["df"]["type"] == "pandas.DataFrame"
    assert manifest["keys"]["df"]["described"] is True
    with zipfile.ZipFile(path) as z, z.open("w.npy") as f:
        assert np.array_equal(np.lib.format.read_array(f), np.arange(6.0).reshape(2, 3))


ARRAYS = {
    "f8": np.arange(12.0).reshape(3, 4),
    "fortran": np.asfortranarray(np.arange(12, dtype="i2").reshape(3, 4)),
    "strided": np.arange(20)[::3],
    "big-endian": np.arange(5, dtype=">u4"),
    "structured": np.zeros(3, dtype=[("a", "u1"), ("b", "<f8", (2,))]),
    "unicode": np.array(["a", "bcd"]),
    "bool": np.array([True, False]),
    "datetime": np.array(["2020-01-01", "NaT"], dtype="M8[D]"),
    "complex": np.arange(3) * 1j,
    "empty": np.zeros((0, 3)),
    "scalar": np.array(5.0),
    "metadata": np.zeros(2, dtype=np.dtype("f4", metadata={"unit": "m"})),
    "record": np.zeros(2, dtype=(np.record, [("x", "i4"), ("y", "f8")])),
}


@pytest.mark.parametrize("name", sorted(ARRAYS))
def test_arrays_of_every_dtype_and_order(tmp_path: Path, name: str) -> None:
    path = tmp_path / "arr.zip"
    value = ARRAYS[name]
    write(path, {"x": value, "nested": {"inner": value}})
    with Archive(path) as a:
        assert_exact(a["x"], value)
        assert_exact(a["nested"]["inner"], value)
        encoding = a.info("x")["encoding"]
    assert encoding == ("amber" if name in ("metadata", "record") else "npy")


def test_arrays_are_views_of_the_mapped_file_and_outlive_the_archive(tmp_path: Path) -> None:
    path = tmp_path / "big.zip"
    big = np.random.default_rng(0).random((1000, 100))
    write(path, {"big": big, "inside": {"w": big, "df": pd.DataFrame(big[:, :3])}})
    a = Archive(path)
    arr = a["big"]
    inner = a["inside"]
    a.close()
    assert not arr.flags.writeable and not arr.flags.owndata
    assert arr.ctypes.data % 64 == 0
    # The memory lies inside the file's map: the file's bytes at the array's place.
    with open(path, "rb") as f:
        raw = f.read()
    start = raw.find(big.tobytes()[:64])
    assert start > 0 and start % 64 == 0
    assert np.array_equal(arr, big) and np.array_equal(inner["w"], big)
    assert not inner["w"].flags.owndata
    del arr, inner


def test_frames_round_trip_in_archives(tmp_path: Path) -> None:
    df = pd.DataFrame(
        {"a": pd.array([1, None], dtype="Int64"), "c": pd.Categorical(["x", "y"])},
        index=pd.MultiIndex.from_tuples([(1, "a"), (2, "b")], names=["n", "s"]),
    )
    df.attrs = {"source": dt.date(2020, 1, 1)}
    values = {
        "df": df,
        "series": pd.Series([1.5, 2.5], name=3),
        "polars": pl.DataFrame({"x": [1, 2], "s": ["a", None]}),
        "table": pa.table({"x": [1]}, metadata={"k": "v"}),
        "batch": pa.record_batch({"y": [1.5]}),
    }
    path = tmp_path / "frames.zip"
    with Archive(path, "w") as a:
        for k, v in values.items():
            a[k] = v
        a.put("pq", df, encoding="parquet")
    with Archive(path) as a:
        assert_frame_equal(a["df"], df, check_exact=True)
        assert a["df"].attrs == df.attrs
        assert_frame_equal(a["pq"], df, check_exact=True)
        pd.testing.assert_series_equal(a["series"], values["series"])
        assert a["polars"].equals(values["polars"])
        assert a["table"].equals(values["table"], check_metadata=True)
        assert a["batch"].equals(values["batch"])
        assert a.info("pq")["entries"]["pq.parquet"]["method"] == "stored"


@pytest.mark.parametrize("compression", ["zstd", "deflate"])
def test_compression(tmp_path: Path, compression: str) -> None:
    path = tmp_path / "c.zip"
    values = {**VALUES, "zeros": np.zeros(100_000), "df": pd.DataFrame({"z": np.zeros(10_000)})}
    write(path, values, compression=compression)
    assert path.stat().st_size < 50_000
    with Archive(path) as a:
        for k in VALUES:
            assert_exact(a[k], VALUES[k])
        assert np.array_equal(a["zeros"], values["zeros"])
        assert a.info("zeros")["entries"]["zeros.npy"]["method"] == compression
    if compression == "deflate" or sys.version_info >= (3, 14):
        with zipfile.ZipFile(path) as z:
            assert z.testzip() is None


def test_compressed_numbers_are_byte_shuffled_by_their_width(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    n = 300_001  # more than one shuffled block, and not a whole number of them
    values: dict[str, Any] = {
        "i8": rng.integers(0, 10_000, n),
        "f4": rng.standard_normal(n).astype("<f4"),
        "i2": rng.integers(0, 100, n).astype(">i2"),
        "c16": (rng.standard_normal(n) + 1j).astype(np.complex128),
        "u": np.array(["abc", "de", "🦀x"] * 1000),
        "b": rng.integers(0, 2, n).astype(bool),
        "rec": np.zeros(10, dtype=[("a", "<i4"), ("b", "<f8")]),
        "df": pd.DataFrame({"f": rng.standard_normal(n), "i": rng.integers(0, 9, n)}),
        "mixed": pd.DataFrame({"f": [1.5, 2.5], "s": ["a", "b"]}),
        "nested": {"a": rng.integers(0, 10, 100_000)},
    }
    widths = {"i8": 8, "f4": 4, "i2": 2, "c16": 8, "u": 4, "df": 8}
    write(tmp_path / "s.zip", values, compression="zstd")
    write(tmp_path / "p.zip", values, compression="zstd", shuffle=False)
    with Archive(tmp_path / "s.zip") as s, Archive(tmp_path / "p.zip") as p:
        assert s.verify() == [] and p.verify() == []
        for key, value in values.items():
            for a in (s, p):
                back = a[key]
                if isinstance(value, pd.DataFrame):
                    assert_frame_equal(back, value, check_exact=True)
                elif isinstance(value, dict):
                    assert np.array_equal(back["a"], value["a"])
                else:
                    assert back.dtype == value.dtype and np.array_equal(back, value)
            entries = s.info(key)["entries"]
            shuffled = {k: e.get("shuffle") for k, e in entries.items() if "shuffle" in e}
            assert list(shuffled.values()) == ([widths[key]] if key in widths else [])
            assert not any("shuffle" in e for e in p.info(key)["entries"].values())
            # The hash is the content's, shuffled or not.
            assert [e["blake3"] for e in entries.values()] == [
                e["blake3"] for e in p.info(key)["entries"].values()
            ]
    with zipfile.ZipFile(tmp_path / "s.zip") as s, zipfile.ZipFile(tmp_path / "p.zip") as p:
        for name in ("i8.npy", "f4.npy", "i2.npy", "df.arrow"):
            assert s.getinfo(name).compress_size < p.getinfo(name).compress_size * 0.95, name
    with zipfile.ZipFile(tmp_path / "s.zip") as z:
        manifest = json.loads(z.read(".amber/manifest.json"))
    assert manifest["amber_archive"] == 3  # shuffled entries (2) and a described frame (3)
    with zipfile.ZipFile(tmp_path / "p.zip") as z:  # nothing shuffled; frames described
        assert json.loads(z.read(".amber/manifest.json"))["amber_archive"] == 3
    # Shuffled entries are still zip entries whose CRC-32s check out, and appends keep them.
    write(tmp_path / "d.zip", {"i8": values["i8"]}, compression="deflate")
    with zipfile.ZipFile(tmp_path / "d.zip") as z:
        assert z.testzip() is None
    with Archive(tmp_path / "d.zip", "a") as a:
        a["x"] = 1
        a.compact()
    with Archive(tmp_path / "d.zip") as a:
        assert np.array_equal(a["i8"], values["i8"]) and a.verify() == []


def test_manifests_with_bad_shuffles_are_refused(tmp_path: Path) -> None:
    data = amber.dumps(1)
    for method, bad in (("zstd", 3), ("zstd", "8"), ("zstd", 0), ("stored", 8)):
        info = {"size": len(data), "method": method, "blake3": "00", "shuffle": bad}
        keys = {"k": {"encoding": "amber", "entries": ["k.amber"]}}
        path = crafted(
            tmp_path,
            [("k.amber", data), (".amber/manifest.json", manifest(keys, {"k.amber": info}, 2))],
        )
        with pytest.raises(amber.ArchiveError, match="shuffle") as e:
            Archive(path)
        assert e.value.kind == "malformed"


def test_json_entries_are_plain_json_and_refuse_what_json_loses(tmp_path: Path) -> None:
    path = tmp_path / "j.zip"
    with Archive(path, "w") as a:
        a.put("config", VALUES["config"], encoding="json")
        for bad in ({"t": (1, 2)}, {1: "x"}, [float("nan")], {"d": decimal.Decimal(1)}):
            with pytest.raises(TypeError):
                a.put("bad", bad, encoding="json")
        assert "bad" not in a
    with zipfile.ZipFile(path) as z:
        assert json.loads(z.read("config.json")) == VALUES["config"]
    with Archive(path) as a:
        assert a["config"] == VALUES["config"]


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


def test_identical_content_gives_identical_files(tmp_path: Path) -> None:
    values = {"w": np.arange(10.0), "df": pd.DataFrame({"a": [1, 2]}), "c": {"a": [1, "x"]}}
    write(tmp_path / "1.zip", values, compression="zstd")
    write(tmp_path / "2.zip", values, compression="zstd")
    assert (tmp_path / "1.zip").read_bytes() == (tmp_path / "2.zip").read_bytes()
    code = (
        "import sys, numpy as np, pandas as pd; from amber import Archive\n"
        "with Archive(sys.argv[1], 'w', compression='zstd') as a:\n"
        "    a['w'] = np.arange(10.0); a['df'] = pd.DataFrame({'a': [1, 2]}); a['c'] = {'a': [1, 'x']}\n"
    )
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "3.zip")], check=True)
    assert (tmp_path / "3.zip").read_bytes() == (tmp_path / "1.zip").read_bytes()


RECORDS_AND_TREE = """
import sys
from amber import Archive
def tree(depth):
    if depth == 0:
        return {"values": list(range(50)), "label": "leaf", "score": 3.14159, "tags": ["a", "b"]}
    return {f"branch_{i}": tree(depth - 1) for i in range(2)}
recs = [{"id": i, "name": f"user{i % 997}", "city": ("Oslo", "Lima", "Pune")[i % 3],
         "score": i / 7, "tags": {f"t{i % 5}", f"u{i % 11}"}} for i in range(20_000)]
with Archive(sys.argv[1], "w") as a:
    a["records"] = recs
    a["tree"] = tree(10)
    a["sets"] = {frozenset({f"x{i}", f"y{i}"}) for i in range(300)}
"""


def test_identical_content_gives_identical_files_across_processes(tmp_path: Path) -> None:
    # Other hash seeds reorder sets and move every object: the files must not change.
    for seed in ("1", "2", "77"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = tmp_path / f"{seed}.zip"
        subprocess.run([sys.executable, "-c", RECORDS_AND_TREE, str(out)], env=env, check=True)
    first = (tmp_path / "1.zip").read_bytes()
    assert (tmp_path / "2.zip").read_bytes() == first
    assert (tmp_path / "77.zip").read_bytes() == first
    with Archive(tmp_path / "1.zip") as a:
        assert len(a["records"]) == 20_000 and len(a["sets"]) == 300


def test_reading_one_key_does_not_touch_its_siblings(tmp_path: Path) -> None:
    path = tmp_path / "lazy.zip"
    write(path, {"config": {"a": 1}, "big": {"blob": os.urandom(10_000_000)}})
    data = bytearray(path.read_bytes())
    # Corrupt the sibling's bytes: reading config must not notice.
    i = data.find(b"big.amber")
    data[i + 200 : i + 300] = bytes(100)
    with Archive(bytes(data)) as a:
        assert a["config"] == {"a": 1}
        with pytest.raises(amber.AmberError) as ei:
            a["big"]
        assert ei.value.kind == "checksum" and "big.amber" in str(ei.value)
    with Archive(bytes(data), verify=False) as a:
        a["config"]


class Result(ArchiveMixin):
    def __init__(self, weights: Any, meta: dict[str, Any]) -> None:
        self.weights = weights
        self.meta = meta


def test_mixin(tmp_path: Path) -> None:
    r = Result(np.arange(3.0), {"epochs": 3})
    r.to_file(tmp_path / "r.zip")
    back = Result.from_file(tmp_path / "r.zip")
    assert type(back) is Result and back.meta == {"epochs": 3}
    assert np.array_equal(back.weights, r.weights)


def test_in_memory_archives_read(tmp_path: Path) -> None:
    write(tmp_path / "m.zip", {"a": 1})
    with Archive((tmp_path / "m.zip").read_bytes()) as a:
        assert a["a"] == 1


# --- other zips: npz and DataZip, read without running anything ------------------------------

DATA = Path(__file__).parent / "data" / "datazip"
CLI = "import sys; from amber.cli import main; sys.exit(main())"


def test_npz_files_open_read_only(tmp_path: Path) -> None:
    arrays = {"a": np.arange(5), "b": np.ones((2, 2), dtype="f4")}
    np.savez(tmp_path / "x.npz", **arrays)
    np.savez_compressed(tmp_path / "z.npz", **arrays)
    for name in ("x.npz", "z.npz"):
        with Archive(tmp_path / name) as a:
            assert a.format == "npz" and sorted(a) == ["a", "b"]
            for k, v in arrays.items():
                assert_exact(a[k], v)
    with pytest.raises(ValueError, match="reading only"):
        Archive(tmp_path / "x.npz", "a")


def test_npz_object_arrays_are_refused(tmp_path: Path) -> None:
    np.savez(tmp_path / "o.npz", o=np.array([{"x": 1}], dtype=object))
    with Archive(tmp_path / "o.npz") as a, pytest.raises(amber.AmberError, match="pickle"):
        a["o"]


def test_datazip_files_open_read_only() -> None:
    with Archive(DATA / "plain.zip") as a:
        assert a.format == "datazip"
        assert a["config"] == {
            "lr": 0.1,
            "layers": [64, 32],
            "name": "run",
            "none": None,
            "flag": True,
        }
        assert a["tuple"] == (1, 2, "x") and a["set"] == {1, 2, 3}
        assert a["frozen"] == frozenset(["a"]) and a["complex"] == 1 + 2j
        assert a["when"] == dt.datetime(2020, 1, 2, 3, 4, 5)
        assert a["nested"] == {"a": {"b": [1, (2, 3)]}, "int keys": {1: "x", 2: "y"}}
        assert a["dd"] == {"k": [1]} and a["dd"].default_factory is list
        assert a["path"] == Path("/tmp/x")
        assert np.array_equal(a["array"], np.arange(12.0).reshape(3, 4))
        assert_frame_equal(a["df"], pd.DataFrame({"a": [1, 2], "b": ["x", "y"]}))
        assert list(a["series"]) == [1.5, 2.5]
    with Archive(DATA / "deflated.zip") as a:
        assert a["config"] == {"a": [1, 2, 3]} and a["array"].dtype == np.int32


class Thing:
    x: int


def test_datazip_objects_need_registration() -> None:
    with Archive(DATA / "object.zip") as a:
        assert a["plain"] == 1
        with pytest.raises(amber.AmberError, match="register") as ei:
            a["thing"]
        assert ei.value.kind == "refused"
    Thing.__module__ = "amber_tests_datazip"
    amber.register(Thing, name="amber_tests_datazip.Thing")
    try:
        with Archive(DATA / "object.zip") as a:
            thing = a["thing"]
        assert type(thing) is Thing and thing.x == 1 and thing.y == [1, 2]  # type: ignore[attr-defined]
    finally:
        amber.unregister(Thing)


def crafted_datazip(
    path: Path, attributes: dict[str, Any], files: dict[str, bytes] | None = None
) -> None:
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("__attributes__.json", json.dumps(attributes))
        for name, data in (files or {}).items():
            z.writestr(name, data)


@pytest.mark.parametrize(
    ("attributes", "files"),
    [
        ({"__state__": {"x": {}}, "k": {"__type__": "os|system", "__loc__": "x"}}, None),
        ({"k": {"__type__": "type", "items": ["os", "system"]}}, None),
        ({"k": {"__type__": "pgoFigure", "__loc__": "k.pkl"}}, {"k.pkl": b"cos\nsystem\n."}),
        ({"k": {"__type__": "namedtuple", "objinfo": "os|stat_result", "items": {}}}, None),
        (
            {
                "k": {
                    "__type__": "defaultdict",
                    "items": {},
                    "default_factory": {"__type__": "type", "items": ["os", "system"]},
                }
            },
            None,
        ),
    ],
    ids=["object", "type", "pickle", "namedtuple", "defaultdict factory"],
)
def test_crafted_datazip_files_run_nothing(tmp_path: Path, attributes: Any, files: Any) -> None:
    path = tmp_path / "evil.zip"
    crafted_datazip(path, attributes, files)
    modules = set(sys.modules)
    with Archive(path) as a, pytest.raises(amber.AmberError) as ei:
        a["k"]
    assert ei.value.kind == "refused"
    assert set(sys.modules) == modules


def test_real_datazip_files_round_trip_when_datazip_is_installed(tmp_path: Path) -> None:
    datazip = pytest.importorskip("datazip")
    with datazip.DataZip(tmp_path / "dz.zip", "w") as z:
        z["a"] = {"x": [1, 2.5, "s"], "t": (1, None)}
        z["arr"] = np.arange(4)
    with Archive(tmp_path / "dz.zip") as a:
        assert a["a"] == {"x": [1, 2.5, "s"], "t": (1, None)}
        assert np.array_equal(a["arr"], np.arange(4))


def test_other_zips_are_not_archives(tmp_path: Path) -> None:
    with zipfile.ZipFile(tmp_path / "other.zip", "w") as z:
        z.writestr("readme.txt", "hello")
    with pytest.raises(amber.AmberError) as ei:
        Archive(tmp_path / "other.zip")
    assert "manifest" in str(ei.value)


# --- hostile archives ---------------------------------------------------------------------------


def small_archive(tmp_path: Path) -> bytes:
    path = tmp_path / "small.zip"
    write(path, {"c": {"a": [1, 2]}, "w": np.arange(4)})
    return path.read_bytes()


def read_all(data: bytes) -> None:
    with Archive(data) as a:
        for k in a:
            a[k]


def test_every_truncation_raises_an_amber_error(tmp_path: Path) -> None:
    data = small_archive(tmp_path)
    for n in range(len(data)):
        with pytest.raises(amber.AmberError):
            read_all(data[:n])


def test_bit_flips_raise_or_read_back(tmp_path: Path) -> None:
    data = small_archive(tmp_path)
    for i in range(0, len(data), 3):
        bad = bytearray(data)
        bad[i] ^= 0x10
        try:
            read_all(bytes(bad))
        except amber.AmberError as e:
            assert e.kind is not None


def crafted(tmp_path: Path, entries: list[tuple[str, bytes]]) -> Path:
    path = tmp_path / "crafted.zip"
    with zipfile.ZipFile(path, "w") as z:
        for name, data in entries:
            z.writestr(name, data)
    return path


def manifest(keys: dict[str, Any], entries: dict[str, Any], version: int = 1) -> bytes:
    return json.dumps({"amber_archive": version, "keys": keys, "entries": entries}).encode()


@pytest.mark.parametrize(
    ("entries", "kind"),
    [
        ([(".amber/manifest.json", b"{not json")], "malformed"),
        ([(".amber/manifest.json", manifest({}, {}, version=4))], "unsupported"),
        (
            [
                (
                    ".amber/manifest.json",
                    manifest({"k": {"encoding": "amber", "entries": ["k.amber"]}}, {}),
                )
            ],
            "malformed",
        ),
        (
            [
                ("k.amber", amber.dumps(1)),
                (
                    ".amber/manifest.json",
                    manifest(
                        {"k": {"encoding": "amber", "entries": ["k.amber"]}},
                        {"k.amber": {"size": 99, "method": "stored", "blake3": "00"}},
                    ),
                ),
            ],
            "size_mismatch",
        ),
        (
            [
                ("../k.amber", amber.dumps(1)),
                (".amber/manifest.json", manifest({}, {})),
            ],
            "unsafe_name",
        ),
        (
            [
                ("k.amber", amber.dumps(1)),
                (
                    ".amber/manifest.json",
                    manifest(
                        {"../k": {"encoding": "amber", "entries": ["k.amber"]}},
                        {
                            "k.amber": {
                                "size": len(amber.dumps(1)),
                                "method": "stored",
                                "blake3": "00",
                            }
                        },
                    ),
                ),
            ],
            "malformed",
        ),
    ],
    ids=[
        "not json",
        "newer version",
        "missing entry",
        "lying size",
        "escaping name",
        "escaping key",
    ],
)
def test_crafted_manifests_are_refused_by_kind(tmp_path: Path, entries: Any, kind: str) -> None:
    path = crafted(tmp_path, entries)
    with pytest.raises(amber.AmberError) as ei:
        Archive(path)
    assert ei.value.kind == kind, ei.value


def test_duplicate_names_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "dup.zip"
    with pytest.warns(UserWarning), zipfile.ZipFile(path, "w") as z:
        z.writestr("a.npy", b"1")
        z.writestr("a.npy", b"2")
    with pytest.raises(amber.AmberError) as ei:
        Archive(path)
    assert ei.value.kind == "duplicate" and ei.value.entry == "a.npy"


def test_compression_bombs_are_refused(tmp_path: Path) -> None:
    """A directory that declares more than any method can produce is refused; real data of a
    high ratio reads back by default, and a lower `max_ratio` refuses it too."""
    path = tmp_path / "bomb.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("zeros.npy", bytes(100_000_000))
    data = bytearray(path.read_bytes())
    central = data.rfind(b"PK\x01\x02")
    data[central + 24 : central + 28] = (4_000_000_000).to_bytes(4, "little")  # declared size
    with pytest.raises(amber.AmberError) as ei:
        Archive(bytes(data))
    assert ei.value.kind == "bomb" and ei.value.entry == "zeros.npy"
    with pytest.raises(amber.AmberError) as ei:
        Archive(path, max_ratio=100)
    assert ei.value.kind == "bomb"
    with Archive(path) as a:  # deflate's 1,029:1 on zeros is within the default
        assert a.format == "npz"


def test_archives_of_zeros_compressed_with_zstd_read_back(tmp_path: Path) -> None:
    zeros = np.zeros(100_000_000, dtype=np.uint8)  # zstd: about 31,000:1
    write(tmp_path / "z.zip", {"z": zeros, "k": 1}, compression="zstd")
    with Archive(tmp_path / "z.zip") as a:
        assert a["k"] == 1 and not a["z"].any() and a["z"].shape == zeros.shape


def test_a_tampered_entry_fails_its_hash_and_verify_says_so(tmp_path: Path) -> None:
    path = tmp_path / "t.zip"
    write(path, {"x": np.arange(1000)})
    data = bytearray(path.read_bytes())
    i = data.find(np.arange(1000).tobytes()[:16])
    data[i + 100] ^= 1
    path.write_bytes(bytes(data))
    with Archive(path) as a:
        assert any("x.npy" in p for p in a.verify())
        with pytest.raises(amber.AmberError) as ei:
            a["x"]
        assert ei.value.kind == "checksum"
    out = subprocess.run(
        [sys.executable, "-c", CLI, "verify", str(path)], capture_output=True, text=True
    )
    assert out.returncode == 1 and "x.npy" in out.stderr


def test_large_zstd_entries_compress_to_the_same_bytes_every_time(tmp_path: Path) -> None:
    big = {"a": np.arange(3_000_000, dtype="i4"), "t": "x" * 100}  # over zstd's threaded size
    write(tmp_path / "1.zip", big, compression="zstd")
    write(tmp_path / "2.zip", big, compression="zstd")
    assert (tmp_path / "1.zip").read_bytes() == (tmp_path / "2.zip").read_bytes()
    with Archive(tmp_path / "1.zip") as a:
        assert np.array_equal(a["a"], big["a"])


def test_every_codec_value_round_trips_inside_an_archive(tmp_path: Path) -> None:
    """The codec's round-trip values, each a key of one archive, stored and with zstd."""
    from tests.support.values import VALUES as CODEC_VALUES

    values = {f"v{i}": v for i, v in enumerate(CODEC_VALUES)}
    for compression in ("stored", "zstd"):
        path = tmp_path / f"{compression}.zip"
        write(path, {**values, "all": list(CODEC_VALUES)}, compression=compression)
        with Archive(path) as a:
            for k, v in values.items():
                assert_exact(a[k], v)
            assert_exact(a["all"], list(CODEC_VALUES))


@settings(max_examples=300, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
        lambda inner: (
            st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
        ),
        max_leaves=20,
    )
)
def test_any_manifest_json_is_refused_or_read(doc: Any) -> None:
    """Whatever JSON stands in the manifest, opening raises an ArchiveError or reads it."""
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as z:
        z.writestr("k.amber", amber.dumps(1))
        payload = doc if not isinstance(doc, dict) else {"amber_archive": 1, **doc}
        z.writestr(".amber/manifest.json", json.dumps(payload))
    try:
        with Archive(data.getvalue()) as a:
            for key in a:
                a[key]
    except amber.ArchiveError as e:
        assert e.kind is not None


def test_import_amber_loads_no_archive_module() -> None:
    code = (
        "import sys, amber\n"
        "amber.loads(amber.dumps([1]))\n"
        "assert not [m for m in sys.modules if m.startswith('amber.archive')]\n"
        "assert amber.Archive.__name__ == 'Archive' and 'amber.archive' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


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
