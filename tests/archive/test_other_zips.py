"""Zips amber did not write: .npz and DataZip files, read without running anything, and zips that
are not archives."""

from __future__ import annotations

import datetime as dt
import json
import sys
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

import amber
from amber import Archive
from tests.support.exact import assert_exact

# --- other zips: npz and DataZip, read without running anything ------------------------------

DATA = Path(__file__).parents[1] / "data" / "datazip"


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
