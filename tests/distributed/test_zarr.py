"""amber.zarr: object arrays in real Zarr stores on disk (formats 2 and 3) and the numcodecs
codec, read back exactly, in this process and in a fresh one that finds amber through the
entry points alone."""

from __future__ import annotations

import datetime as dt
import decimal
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

zarr = pytest.importorskip("zarr")
numcodecs = pytest.importorskip("numcodecs")
np = pytest.importorskip("numpy")

import amber  # noqa: E402
import amber.zarr as az  # noqa: E402
from tests.support.exact import assert_exact  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
FORMATS = [2, 3]


def objects(values: list[Any], shape: tuple[int, ...] | None = None) -> Any:
    """An object array holding `values` as they are (NumPy would unpack lists)."""
    array = np.empty(len(values), dtype=object)
    for i, value in enumerate(values):
        array[i] = value
    return array.reshape(shape if shape is not None else (len(values),))


def cells() -> list[Any]:
    return [
        {"name": "a", "tags": ["x", ("y", 2)], "when": dt.datetime(2024, 5, 6, 7, 8, 9)},
        [1, [2, [3, None]], {"k": {4, 5}}],
        dt.date(2025, 1, 31),
        decimal.Decimal("1.10"),
        None,
        np.arange(6, dtype=np.int16).reshape(2, 3),
        {"inner": np.linspace(0.0, 1.0, 5), "blob": b"\x00\xff"},
        2**80,
        -0.0,
        frozenset({"a"}),
        "text",
        (),
    ]


def create(path: Path, zarr_format: int, **kwargs: Any) -> Any:
    """The plain zarr spelling, with the codec for each format."""
    codec: dict[str, Any] = (
        {"serializer": az.AmberCodec()} if zarr_format == 3 else {"filters": [az.Amber()]}
    )
    return zarr.create_array(str(path), dtype=az.OBJECT, zarr_format=zarr_format, **codec, **kwargs)


# --- the numcodecs codec ------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(12,), (3, 4), (2, 3, 2), (0,), (2, 0, 3)])
def test_codec_keeps_shape_values_and_types(shape: tuple[int, ...]) -> None:
    n = int(np.prod(shape))
    want = objects(cells()[:n], shape)
    codec = numcodecs.get_codec({"id": "amber"})
    assert isinstance(codec, az.Amber)
    frame = codec.encode(want)
    assert isinstance(frame, bytes)
    got = codec.decode(frame)
    assert got.dtype == np.dtype(object) and got.shape == shape
    for g, w in zip(got.ravel(), want.ravel(), strict=True):
        assert_exact(g, w)
    out = np.empty(shape, dtype=object)
    assert codec.decode(memoryview(frame), out=out) is out
    for g, w in zip(out.ravel(), want.ravel(), strict=True):
        assert_exact(g, w)


def test_codec_config_and_refusals() -> None:
    codec = az.Amber()
    assert codec.get_config() == {"id": "amber"}
    assert numcodecs.get_codec(codec.get_config()) == codec
    with pytest.raises(TypeError, match="dtype int64"):
        codec.encode(np.arange(3, dtype=np.int64))
    with pytest.raises(amber.EncodeError, match=r"cell \(1, 0\) of an object chunk of shape"):
        codec.encode(objects([1, 2, lambda: 3, 4], (2, 2)))
    with pytest.raises(ValueError, match="into an object array of 2 cells"):
        codec.decode(codec.encode(objects([1, 2])), out=np.empty(3, dtype=object))


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"not amber at all",
        amber.dumps([1, 2]),
        amber.dumps(((2,), [1, 2, 3])),
        amber.dumps(((-1,), [])),
        amber.dumps((["2"], [1, 2])),
    ],
)
def test_codec_refuses_what_is_not_an_object_chunk(data: bytes) -> None:
    with pytest.raises(amber.DecodeError):
        az.Amber().decode(data)


# --- Zarr stores on disk ------------------------------------------------------------------


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_store_round_trip_with_partial_chunks(tmp_path: Path, zarr_format: int) -> None:
    path = tmp_path / "objects.zarr"
    array = create(path, zarr_format, shape=(5, 4), chunks=(2, 3))
    values = cells()
    block = objects(values, (3, 4))
    array[1:4, :] = block  # partial chunks on every side
    array[4, 3:4] = objects([{"last": [dt.time(1, 2)]}])

    reopened = zarr.open_array(str(path), mode="r")
    assert isinstance(reopened.metadata.dtype, az.AmberObject)
    got = reopened[...]
    assert got.shape == (5, 4) and got.dtype == np.dtype(object)
    for g, w in zip(got[1:4].ravel(), block.ravel(), strict=True):
        assert_exact(g, w)
    assert_exact(got[4, 3], {"last": [dt.time(1, 2)]})
    # never written: the default fill value, None
    assert list(got[0]) == [None] * 4 and list(got[4, :3]) == [None] * 3
    # a region read across chunks
    for g, w in zip(reopened[2:4, 1:3].ravel(), block[1:3, 1:3].ravel(), strict=True):
        assert_exact(g, w)


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_create_array_helper_and_metadata(tmp_path: Path, zarr_format: int) -> None:
    path = tmp_path / "helper.zarr"
    array = az.create_array(str(path), shape=(3,), chunks=(2,), zarr_format=zarr_format)
    array[0:3] = objects([{"a": 1}, [2], (3,)])
    if zarr_format == 3:
        meta = (path / "zarr.json").read_text()
        assert '"data_type": "amber.object"' in meta and '"name": "amber"' in meta
    else:
        meta = (path / ".zarray").read_text()
        assert '"dtype": "|O"' in meta and '"id": "amber"' in meta
    assert az.OBJECT.to_json(2) == {"name": "|O", "object_codec_id": "amber"}
    got = zarr.open_array(str(path))[...]
    assert got.tolist() == [{"a": 1}, [2], (3,)]


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_one_cell_writes(tmp_path: Path, zarr_format: int) -> None:
    # zarr hands a value set at one cell to the codec as a 0-d object array: its item is kept
    array = az.create_array(str(tmp_path / "cell.zarr"), shape=(2, 2), zarr_format=zarr_format)
    array[0, 1] = {"x": [1, (2, 3)]}
    array[1, 0] = objects([np.arange(3)], ())
    got = zarr.open_array(str(tmp_path / "cell.zarr"))[...]
    assert_exact(got[0, 1], {"x": [1, (2, 3)]})
    assert_exact(got[1, 0], np.arange(3))
    assert got[0, 0] is None


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_fill_values(tmp_path: Path, zarr_format: int) -> None:
    path = tmp_path / "fill.zarr"
    fill = {"missing": True, "since": dt.date(2020, 1, 1)}
    array = az.create_array(
        str(path), shape=(6,), chunks=(2,), zarr_format=zarr_format, fill_value=fill
    )
    array[0:1] = objects(["a"])  # the rest of its chunk holds the fill value
    array[2:4] = objects([np.zeros(2), None])  # an array in a cell: no == on it
    got = zarr.open_array(str(path))[...]
    assert_exact(got[0], "a")
    assert_exact(got[1], fill)
    assert_exact(got[2], np.zeros(2))
    assert got[3] is None
    assert_exact(got[4], fill)
    assert_exact(zarr.open_array(str(path)).fill_value.value, fill)


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_chunks_equal_to_the_fill_value_are_not_stored_only_when_exact(
    tmp_path: Path, zarr_format: int
) -> None:
    path = tmp_path / "zero.zarr"
    array = az.create_array(
        str(path),
        shape=(6,),
        chunks=(2,),
        zarr_format=zarr_format,
        fill_value=0,
        compressors=None,
    )
    array[0:2] = objects([False, 0.0])  # == 0, but not 0: kept
    array[2:4] = objects([0, 0])  # exactly the fill value: zarr skips the chunk
    array[4:6] = objects([None, None])
    stored = sorted(p.name for p in path.rglob("*") if p.is_file() and p.name[0].isdigit())
    assert len(stored) == 2, stored
    got = zarr.open_array(str(path))[...]
    for g, w in zip(got, [False, 0.0, 0, 0, None, None], strict=True):
        assert_exact(g, w)


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_a_cell_amber_refuses_fails_the_write(tmp_path: Path, zarr_format: int) -> None:
    path = tmp_path / "refuse.zarr"
    array = az.create_array(str(path), shape=(4,), chunks=(2,), zarr_format=zarr_format)
    array[0:2] = objects([1, 2])

    class Local:
        pass

    with pytest.raises(amber.EncodeError, match=r"cell \(1,\) of an object chunk"):
        array[2:4] = objects([3, Local()])
    assert zarr.open_array(str(path))[...].tolist() == [1, 2, None, None]


@pytest.mark.parametrize("zarr_format", FORMATS)
@pytest.mark.parametrize("damage", ["flip", "truncate", "garbage"])
def test_corrupt_chunks_raise_decode_error(tmp_path: Path, zarr_format: int, damage: str) -> None:
    path = tmp_path / "corrupt.zarr"
    array = az.create_array(
        str(path), shape=(4,), chunks=(4,), zarr_format=zarr_format, compressors=None
    )
    array[...] = objects([{"a": [1, 2, 3]}, "text" * 20, decimal.Decimal("2.5"), None])
    (chunk,) = (p for p in path.rglob("*") if p.is_file() and p.name in ("0", "0.0"))
    data = bytearray(chunk.read_bytes())
    if damage == "flip":
        for i in range(len(data) // 3, len(data), 7):
            data[i] ^= 0xA5
    elif damage == "truncate":
        del data[len(data) // 2 :]
    else:
        data = bytearray(b"\x00\x01garbage" * 5)
    chunk.write_bytes(bytes(data))
    with pytest.raises(amber.DecodeError):
        zarr.open_array(str(path))[...]


def test_the_codec_refuses_arrays_of_other_data_types(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="arrays of Python objects"):
        zarr.create_array(
            str(tmp_path / "ints.zarr"), shape=(2,), dtype="int32", serializer=az.AmberCodec()
        )


# --- a fresh process, finding amber through the entry points alone --------------------------


def _entry_point_path(tmp_path: Path) -> list[str]:
    """Where the child finds amber's entry points: the installed package's own when amber is
    installed with them, else a distribution made here from pyproject.toml's tables (a
    source checkout on PYTHONPATH has no metadata)."""
    from importlib.metadata import entry_points

    if entry_points(group="numcodecs.codecs", name="amber"):
        return []
    tomllib = pytest.importorskip("tomllib")
    tables = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]
    lines = []
    for group in ("numcodecs.codecs", "zarr.codecs", "zarr.data_type"):
        lines.append(f"[{group}]")
        lines.extend(f"{name} = {target}" for name, target in tables[group].items())
    dist = tmp_path / "entry-points" / "amber_entry_points-0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: amber-entry-points\nVersion: 0\n")
    (dist / "entry_points.txt").write_text("\n".join(lines) + "\n")
    return [str(dist.parent)]


def _child(tmp_path: Path, code: str) -> str:
    paths = [*_entry_point_path(tmp_path), str(ROOT / "python"), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_fresh_process_finds_the_numcodecs_codec_without_importing_amber(
    tmp_path: Path,
) -> None:
    frame = az.Amber().encode(objects(cells(), (3, 4)))
    out = _child(
        tmp_path,
        f"""
        import sys
        import numcodecs

        codec = numcodecs.get_codec({{"id": "amber"}})
        values = codec.decode(bytes.fromhex({frame.hex()!r}))
        print(type(codec).__module__, type(codec).__name__, values.shape)
        import amber
        print(amber.dumps(values.ravel().tolist(), deterministic=True).hex())
        """,
    )
    names, got = out.splitlines()
    assert names == "amber.zarr Amber (3, 4)"
    assert got == amber.dumps(cells(), deterministic=True).hex()


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_a_fresh_process_reads_and_writes_the_store(tmp_path: Path, zarr_format: int) -> None:
    path = tmp_path / "shared.zarr"
    array = az.create_array(
        str(path), shape=(4, 3), chunks=(2, 2), zarr_format=zarr_format, fill_value="empty"
    )
    want = objects(cells(), (4, 3))
    array[...] = want
    out = _child(
        tmp_path,
        f"""
        import decimal
        import numpy as np
        import zarr
        import amber.zarr  # zarr 3.1 does not load zarr.data_type entry points itself

        array = zarr.open_array({str(path)!r}, mode="r+")
        values = array[...]
        print(type(array.metadata.dtype).__name__, amber.zarr.FillValue.of("empty") == array.fill_value)
        print(amber.dumps(values.ravel().tolist(), deterministic=True).hex())
        cell = np.empty(1, dtype=object)
        cell[0] = {{"from": "child", "n": decimal.Decimal("3.00")}}
        array[3, 2:3] = cell
        """,
    )
    names, frame = out.splitlines()
    assert names == "AmberObject True"
    assert frame == amber.dumps(want.ravel().tolist(), deterministic=True).hex()
    got = zarr.open_array(str(path))[...]
    assert_exact(got[3, 2], {"from": "child", "n": decimal.Decimal("3.00")})
    assert_exact(got[0, 0], want[0, 0])


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_zarr_finds_the_data_type_entry_point(tmp_path: Path, zarr_format: int) -> None:
    """zarr lists the `zarr.data_type` entry point; zarr 3.1 never loads that list (nothing
    calls `DataTypeRegistry._lazy_load`), so a process that has not imported amber.zarr
    cannot open the array yet. Should zarr start loading it, the array opens here as is."""
    path = tmp_path / "lazy.zarr"
    az.create_array(str(path), shape=(1,), zarr_format=zarr_format)[0:1] = objects([[1]])
    out = _child(
        tmp_path,
        f"""
        import sys
        import zarr
        from zarr.core.dtype import data_type_registry

        listed = [e.value for e in data_type_registry._lazy_load_list]
        print("amber.zarr:AmberObject" in listed, "amber" in sys.modules)
        try:
            print(zarr.open_array({str(path)!r})[...].tolist())
        except ValueError as error:
            print("refused:", error)
        """,
    )
    listed, opened = out.splitlines()
    assert listed == "True False"
    assert opened == "[[1]]" or (opened.startswith("refused:") and "No Zarr data type" in opened)


def test_sharded_array(tmp_path: Path) -> None:
    path = tmp_path / "sharded.zarr"
    array = az.create_array(
        str(path), shape=(12,), chunks=(2,), shards=(4,), fill_value={"none": None}
    )
    want = objects(cells())
    array[1:7] = want[1:7]
    got = zarr.open_array(str(path))[...]
    for i in range(12):
        assert_exact(got[i], want[i] if 1 <= i < 7 else {"none": None})


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_compressed_chunks_that_are_not_amber_raise_decode_error(
    tmp_path: Path, zarr_format: int
) -> None:
    # with the default compressor (zstd), damaged bytes fail in zstd first (its RuntimeError);
    # bytes that decompress but are not an amber object chunk fail in amber
    path = tmp_path / "zstd.zarr"
    array = az.create_array(str(path), shape=(2,), chunks=(2,), zarr_format=zarr_format)
    array[...] = objects([{"a": 1}, [2]])
    (chunk,) = (p for p in path.rglob("*") if p.is_file() and p.name in ("0", "0.0"))
    for payload in (b"not amber", amber.dumps({"shape": (2,)})):
        chunk.write_bytes(numcodecs.Zstd().encode(payload))
        with pytest.raises(amber.DecodeError):
            zarr.open_array(str(path))[...]
    # a valid object chunk of another shape: the v3 codec knows the chunk's shape; in format 2
    # zarr reshapes what the numcodecs codec gives and raises its own ValueError
    chunk.write_bytes(numcodecs.Zstd().encode(amber.dumps(((3,), [1, 2, 3]))))
    with pytest.raises(amber.DecodeError if zarr_format == 3 else ValueError, match="shape"):
        zarr.open_array(str(path))[...]
    chunk.write_bytes(b"\x28\xb5\x2f\xfd garbage")
    with pytest.raises((RuntimeError, amber.DecodeError)):
        zarr.open_array(str(path))[...]
