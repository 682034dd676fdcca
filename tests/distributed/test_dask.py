"""amber.dask on real Dask clusters: worker processes, moves between workers, gathers, scatters,
spills to disk, and workers that lack amber.dask."""

from __future__ import annotations

import datetime as dt
import decimal
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

distributed = pytest.importorskip("distributed")
np = pytest.importorskip("numpy")
pd = pytest.importorskip("pandas")

import dask  # noqa: E402
from distributed import Client, LocalCluster  # noqa: E402
from distributed.protocol.serialize import deserialize, serialize  # noqa: E402

import amber  # noqa: E402
import amber.dask  # noqa: E402
from amber.dask import Mapping, Rows  # noqa: E402

FAMILIES = ["amber", "dask", "pickle"]
TIMEOUT = 60


def _cluster(**kwargs: Any) -> LocalCluster:
    return LocalCluster(
        n_workers=kwargs.pop("n_workers", 2),
        threads_per_worker=1,
        processes=True,
        dashboard_address=":0",
        **kwargs,
    )


@pytest.fixture(scope="module")
def client() -> Iterator[Client]:
    with (
        _cluster(preload=["amber.dask"], serializers=FAMILIES, deserializers=FAMILIES) as cluster,
        Client(cluster, serializers=FAMILIES, deserializers=FAMILIES) as c,
    ):
        yield c


def _workers(c: Client) -> list[str]:
    return sorted(c.scheduler_info()["workers"])


def _values() -> dict[str, Any]:
    return {
        "ints": [0, -1, 2**63, -(2**70)],
        "floats": (0.1, -0.0, float("inf")),
        "text": "é\u2028\U0001f600",
        "bytes": b"\x00\xff" * 40_000,
        "set": {1, "a", (2, 3)},
        "when": dt.datetime(2024, 2, 29, 12, 0, tzinfo=dt.timezone.utc),
        "dec": decimal.Decimal("1.10"),
        "id": uuid.UUID(int=7),
        "array": np.arange(100_000, dtype=np.int32).reshape(100, 1000),
        "frame": pd.DataFrame({"x": np.arange(5, dtype=np.int16), "y": list("abcde")}),
    }


def _same(a: Any, b: Any) -> None:
    assert type(a) is type(b), (type(a), type(b))
    if isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)
    elif isinstance(a, pd.DataFrame):
        pd.testing.assert_frame_equal(a, b, check_exact=True)
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _same(x, y)
    else:
        assert a == b or (a != a and b != b)


# --- the family, in this process ------------------------------------------------------------


def test_family_frames_and_fallthrough() -> None:
    value = _values()
    header, frames = serialize(value, serializers=FAMILIES, iterate_collection=False)
    assert header["serializer"] == "amber"
    # The array and the bytes travel as frames of their own, not copied into the amber frame.
    assert len(frames) == 3 and len(frames[0]) < 50_000
    _same(deserialize(header, frames), value)
    # What amber does not encode goes on to the next family.
    header, frames = serialize(lambda: 1, serializers=FAMILIES)
    assert header["serializer"] == "pickle"
    # Rows and Mapping travel as one frame whatever the families.
    for cls, data in [
        (Rows, [{"k": i} for i in range(1000)]),
        (Mapping, {i: [i] for i in range(1000)}),
    ]:
        obj = cls(data)
        header, frames = serialize(obj, serializers=["dask", "pickle"])
        assert header["serializer"] == "dask" and len(frames) == 1
        back = deserialize(header, frames)
        assert type(back) is cls and back == obj


def test_arrays_keep_the_writeable_flag() -> None:
    ro = np.arange(100_000)
    ro.flags.writeable = False
    for arr in (np.arange(100_000), ro):
        header, frames = serialize(arr, serializers=["amber"])
        # Frames arrive read-only from some comms: the writeable array is copied then.
        frames = [frames[0], bytes(frames[1])]
        back = deserialize(header, frames)
        assert back.flags.writeable == arr.flags.writeable and np.array_equal(back, arr)


def test_bad_frames_raise_decode_error() -> None:
    header, frames = serialize({"a": [1, 2, 3]}, serializers=["amber"])
    for bad in (b"", b"nope", bytes(frames[0])[:-3], b"\x00" * 64):
        with pytest.raises(amber.DecodeError):
            deserialize(header, [bad])
    with pytest.raises(ValueError):
        deserialize(header, [])
    # A receiver not given the family refuses with Dask's own error.
    with pytest.raises(TypeError, match="Data serialized with amber but only able to"):
        deserialize(header, frames, deserializers=["dask", "pickle"])


def test_rows_inside_other_data_keep_their_type() -> None:
    value = {"rows": Rows([1, 2]), "map": Mapping(a=Rows([3]))}
    back = amber.loads(amber.dumps(value))
    assert type(back["rows"]) is Rows and type(back["map"]) is Mapping
    assert type(back["map"]["a"]) is Rows and back == value


# --- on a cluster ------------------------------------------------------------------------


def _make(n: int) -> Rows[dict[str, Any]]:
    return Rows({"id": i, "name": f"n{i}", "score": i / 7, "tags": ("a", i)} for i in range(n))


def _describe(x: Any) -> tuple[str, int, Any]:
    return type(x).__name__, len(x), x[len(x) - 1]


def _values_task() -> dict[str, Any]:
    return _values()


def _identity(x: Any) -> Any:
    return x


def test_moves_between_workers_are_exact(client: Client) -> None:
    a, b = _workers(client)
    parts = [client.submit(_make, 20_000, workers=[a], pure=False) for _ in range(3)]
    seen = client.gather([client.submit(_describe, p, workers=[b]) for p in parts])
    assert (
        seen
        == [
            (
                "Rows",
                20_000,
                {"id": 19_999, "name": "n19999", "score": 19_999 / 7, "tags": ("a", 19_999)},
            )
        ]
        * 3
    )
    # Every kind of value, made on one worker, read on the other, gathered here.
    made = client.submit(_values_task, workers=[a], pure=False)
    moved = client.submit(_identity, made, workers=[b], pure=False)
    _same(moved.result(timeout=TIMEOUT), _values())
    rows = client.gather(parts[0])
    assert type(rows) is Rows and rows == _make(20_000)


def test_scatter_and_mapping(client: Client) -> None:
    a, b = _workers(client)
    data = Mapping({f"k{i}": {"v": i, "w": [i, -i]} for i in range(5000)})
    [future] = client.scatter([data], workers=[a])
    back = client.submit(_identity, future, workers=[b], pure=False).result(timeout=TIMEOUT)
    assert type(back) is Mapping and back == data
    value = _values()
    [future] = client.scatter([value], workers=[b])
    _same(client.submit(_identity, future, workers=[a], pure=False).result(timeout=TIMEOUT), value)


def _spilled(dask_worker: Any) -> int:
    return len(dask_worker.data.slow)


def test_spill_to_disk_and_back() -> None:
    config = {
        "distributed.worker.memory.target": 0.0001,
        "distributed.worker.memory.spill": False,
        "distributed.worker.memory.pause": False,
        "distributed.worker.memory.terminate": False,
    }
    with (
        dask.config.set(config),
        _cluster(n_workers=1, memory_limit="2GiB", preload=["amber.dask"]) as cluster,
        Client(cluster) as c,
    ):
        parts = [c.submit(_make, 5000, pure=False, key=f"rows-{i}") for i in range(4)]
        distributed.wait(parts, timeout=TIMEOUT)
        assert sum(c.run(_spilled).values()) >= 3  # written to disk through amber
        for p in parts:
            rows = p.result(timeout=TIMEOUT)
            assert type(rows) is Rows and rows == _make(5000)


def test_worker_without_amber_dask_refuses_and_install_fixes_it() -> None:
    with _cluster(n_workers=1) as cluster:
        # The worker has not imported amber.dask: it cannot read amber data, and says so
        # (Dask reports its KeyError for a family it does not know), without crashing.
        with (
            Client(cluster, serializers=FAMILIES, deserializers=FAMILIES) as c,
            pytest.raises(Exception, match=r"KeyError.*amber"),
        ):
            c.scatter([{"a": np.arange(10)}], timeout=TIMEOUT)
        with Client(cluster, serializers=FAMILIES, deserializers=FAMILIES) as c:
            amber.dask.install(c)
            [future] = c.scatter([{"a": np.arange(10)}], timeout=TIMEOUT)
            back = c.submit(_identity, future, pure=False).result(timeout=TIMEOUT)
            _same(back, {"a": np.arange(10)})


def test_receiver_not_given_the_family_is_sent_what_it_reads(client: Client) -> None:
    # A client asks for data in the families it reads: the workers send dask/pickle frames.
    with Client(
        client.cluster, serializers=["dask", "pickle"], deserializers=["dask", "pickle"]
    ) as c:
        _same(c.submit(_values_task, pure=False).result(timeout=TIMEOUT), _values())
        rows = c.submit(_make, 100, pure=False).result(timeout=TIMEOUT)
        assert type(rows) is Rows and rows == _make(100)
