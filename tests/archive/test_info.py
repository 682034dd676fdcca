"""`Archive.info`: each key's type, encoding and entries with their sizes in the file, for
archives, .npz and DataZip files."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np

from amber import Archive

DATAZIP = Path(__file__).parents[1] / "data" / "datazip"


def test_info_names_table_kinds_and_gives_every_entrys_size_in_the_file(archive: Path) -> None:
    kinds = {
        "table": "pyarrow.Table",
        "batch": "pyarrow.RecordBatch",
        "frame": "pandas.DataFrame",
        "series": "pandas.Series",
        "polars": "polars.DataFrame",
        "pl_series": "polars.Series",
        "parquet": "pandas.DataFrame",
    }
    with Archive(archive) as a, zipfile.ZipFile(archive) as z:
        for key in a:
            info = a.info(key)
            assert {"type", "encoding", "entries"} <= set(info)
            for name, entry in info["entries"].items():
                zinfo = z.getinfo(name)
                assert entry["size"] == zinfo.file_size
                assert entry["compressed_size"] == zinfo.compress_size
                assert len(entry["blake3"]) == 64
            if key in kinds:
                assert info["kind_name"] == kinds[key] == info["type"]
                assert type(a[key]).__module__.split(".")[0] == kinds[key].split(".")[0]
                assert isinstance(info["rows"], int) and isinstance(info["columns"], int)
            else:
                assert "kind" not in info and "kind_name" not in info
        zeros = a.info("zeros")
        assert zeros["dtype"] == "<f8" and zeros["shape"] == [1_000_000]
        (entry,) = zeros["entries"].values()
        assert entry["method"] == "zstd" and entry["compressed_size"] < entry["size"] // 100
        assert list(a.info("big")["entries"]) == ["big.amber", "big.amber.0"]


def test_info_kind_numbers_are_the_formats_table_kinds(archive: Path) -> None:
    names = ["pyarrow.Table", "pyarrow.RecordBatch", "pandas.DataFrame"]
    names += ["pandas.Series", "polars.DataFrame", "polars.Series"]
    with Archive(archive) as a:
        for key in a:
            info = a.info(key)
            if "kind" in info:
                assert names[info["kind"]] == info["kind_name"]


def test_info_is_a_copy_the_caller_may_change(archive: Path) -> None:
    with Archive(archive) as a:
        info = a.info("zeros")
        info["shape"].append(7)
        info["entries"]["zeros.npy"]["size"] = 0
        info["type"] = "x"
        assert a.info("zeros")["shape"] == [1_000_000]
        assert a.info("zeros")["entries"]["zeros.npy"]["size"] == 8_000_128
        assert a["zeros"].shape == (1_000_000,)


def test_info_of_keys_written_in_this_session_has_their_sizes_too(tmp_path: Path) -> None:
    with Archive(tmp_path / "a.zip", "w") as a:
        a.put("z", np.zeros(10_000), compression="zstd")
        (entry,) = a.info("z")["entries"].values()
        assert entry["size"] == 80_128 and 0 < entry["compressed_size"] < 1000


def test_info_of_npz_and_datazip_keys(tmp_path: Path) -> None:
    np.savez_compressed(tmp_path / "x.npz", a=np.zeros(1000), b=np.arange(3))
    with Archive(tmp_path / "x.npz") as a, zipfile.ZipFile(tmp_path / "x.npz") as z:
        info = a.info("a")
        assert info["type"] == "numpy.ndarray" and info["encoding"] == "npy"
        assert info["entries"] == {
            "a.npy": {
                "size": z.getinfo("a.npy").file_size,
                "method": "deflate",
                "compressed_size": z.getinfo("a.npy").compress_size,
            }
        }
    with Archive(DATAZIP / "plain.zip") as a:
        info = a.info("config")
        assert info["encoding"] == "datazip" and list(info["entries"]) == ["__attributes__.json"]
