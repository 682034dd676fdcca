"""amber.Archive's values: every kind kept exactly (arrays as views of the mapped file, tables,
JSON entries), compressed or stored, the same bytes for the same content, read lazily."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from pandas.testing import assert_frame_equal

import amber
from amber import Archive, ArchiveMixin
from tests.archive.build import crafted, manifest, write
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


def test_import_amber_loads_no_archive_module() -> None:
    code = (
        "import sys, amber\n"
        "amber.loads(amber.dumps([1]))\n"
        "assert not [m for m in sys.modules if m.startswith('amber.archive')]\n"
        "assert amber.Archive.__name__ == 'Archive' and 'amber.archive' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
