"""amber.Packed through the engines that only unpickle: pickle itself, multiprocessing pools,
ProcessPoolExecutor, joblib's loky workers and a local Ray cluster."""

from __future__ import annotations

import concurrent.futures
import datetime as dt
import decimal
import multiprocessing
import os
import pickle
from typing import Any

import pytest

import amber
from amber import Packed

np = pytest.importorskip("numpy")
pd = pytest.importorskip("pandas")


def _records(n: int) -> list[dict[str, Any]]:
    return [
        {"id": i, "name": f"n{i}", "score": i / 7, "when": dt.date(2024, 1, 1 + i % 28)}
        for i in range(n)
    ]


def _value() -> dict[str, Any]:
    return {
        "records": _records(1000),
        "array": np.arange(50_000, dtype=np.float32).reshape(50, 1000),
        "frame": pd.DataFrame({"x": np.arange(3, dtype=np.uint8), "y": ["a", None, "c"]}),
        "exact": (decimal.Decimal("1.10"), -0.0, 2**80, {1, 2}, frozenset({"a"})),
        "blob": bytes(range(256)) * 400,
    }


def _same(a: Any, b: Any) -> None:
    assert type(a) is type(b)
    if isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, np.ndarray):
        assert (
            a.dtype == b.dtype and np.array_equal(a, b) and a.flags.writeable == b.flags.writeable
        )
    elif isinstance(a, pd.DataFrame):
        pd.testing.assert_frame_equal(a, b, check_exact=True)
    elif isinstance(a, tuple):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _same(x, y)
    else:
        assert a == b
        if isinstance(a, float):
            assert str(a) == str(b)


def packed_value(_: int = 0) -> Packed[dict[str, Any]]:
    return Packed(_value())


def test_pickle_gives_back_the_object_at_every_protocol() -> None:
    value = _value()
    p = Packed(value)
    _same(p.unpack(), value)
    for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1):
        _same(pickle.loads(pickle.dumps(p, protocol=protocol)), value)
    # Protocol 5 with a buffer callback: the array and the blob travel out of band.
    buffers: list[pickle.PickleBuffer] = []
    data = pickle.dumps(p, protocol=5, buffer_callback=buffers.append)
    assert len(buffers) == 2 and len(data) < 100_000
    _same(pickle.loads(data, buffers=buffers), value)
    assert "bytes in 3 frame(s)" in repr(p) and p.nbytes > 300_000


def test_refused_where_it_is_written() -> None:
    with pytest.raises(amber.EncodeError):
        Packed({"f": lambda: 1})
    with pytest.raises(amber.EncodeError):
        Packed(object())


def test_bad_frame_in_a_pickle_raises_decode_error() -> None:
    data = pickle.dumps(Packed({"a": [1, 2, 3]}), protocol=4)
    frame = amber.dumps({"a": [1, 2, 3]})
    assert frame in data
    for bad in (b"NOPE" + frame[4:], frame[:8] + b"\xff" * (len(frame) - 8)):
        with pytest.raises(amber.DecodeError):
            pickle.loads(data.replace(frame, bad))


@pytest.mark.parametrize("method", multiprocessing.get_all_start_methods())
def test_multiprocessing_pool(method: str) -> None:
    with multiprocessing.get_context(method).Pool(2) as pool:
        for got in pool.map(packed_value, range(3)):
            _same(got, _value())


def test_process_pool_executor() -> None:
    with concurrent.futures.ProcessPoolExecutor(2) as ex:
        for got in ex.map(packed_value, range(3)):
            _same(got, _value())


def test_joblib_loky() -> None:
    joblib = pytest.importorskip("joblib")
    got = joblib.Parallel(n_jobs=2, backend="loky")(
        joblib.delayed(packed_value)(i) for i in range(3)
    )
    for g in got:
        _same(g, _value())


def test_ray_local_cluster() -> None:
    ray = pytest.importorskip("ray")
    # Ray's workers import this module (tests.distributed.test_packed, from the repository's
    # root) and amber from where this process does.
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = [os.path.dirname(os.path.dirname(amber.__file__)), root]
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join(path)}},
    )
    try:
        task = ray.remote(packed_value)
        for got in ray.get([task.remote(i) for i in range(2)]):
            expected = _value()
            # Ray hands out arrays from its object store read-only, whoever made them.
            assert not got["array"].flags.writeable
            expected["array"].flags.writeable = False
            _same(got, expected)
    finally:
        ray.shutdown()
