"""NumPy 2's variable-width strings (`StringDType`): kept exactly, as elements (spec §6.12's
ND_ITEMS), with the dtype's `na_object` and `coerce`; hostile frames refused where they lie."""

from __future__ import annotations

import math
import struct
from typing import Any

import pytest

import amber
from tests.support.exact import assert_exact

np = pytest.importorskip("numpy")
StringDType = getattr(np.dtypes, "StringDType", None)
pytestmark = pytest.mark.skipif(StringDType is None, reason="StringDType needs NumPy 2")

TEXT = ["", "a", "bé", "😀" * 3, "x" * 5000, "tab\tnew\nline", "\x00inside"]
NA_OBJECTS: list[Any] = [None, float("nan"), "__missing__"]


def dtypes() -> list[Any]:
    out = [StringDType(), StringDType(coerce=False)]
    out += [StringDType(na_object=na) for na in NA_OBJECTS]
    out.append(StringDType(na_object=None, coerce=False))
    return out


def values(dtype: Any, n: int) -> list[Any]:
    """`n` elements: strings, and the dtype's missing value every third place when it has one."""
    na = getattr(dtype, "na_object", None) if hasattr(dtype, "na_object") else None
    has_na = hasattr(dtype, "na_object")
    return [na if has_na and i % 3 == 2 else TEXT[i % len(TEXT)] + str(i) for i in range(n)]


SHAPES = [(), (0,), (1,), (7,), (2, 3), (3, 0, 2), (2, 3, 4)]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", dtypes(), ids=repr)
def test_string_arrays_come_back_exactly(dtype: Any, shape: tuple[int, ...]) -> None:
    n = math.prod(shape)
    arr = np.array(values(dtype, n), dtype=dtype).reshape(shape)
    for deterministic in (False, True):
        got = amber.loads(amber.dumps(arr, deterministic=deterministic))
        assert_exact(got, arr)
        assert got.dtype == arr.dtype and got.flags.c_contiguous
    assert_exact(amber.loads(amber.dumps({"a": [arr, arr]}, identity=True)), {"a": [arr, arr]})


@pytest.mark.parametrize("dtype", dtypes(), ids=repr)
def test_fortran_order_views_and_slices(dtype: Any) -> None:
    base = np.array(values(dtype, 24), dtype=dtype).reshape(4, 6)
    fortran = np.asfortranarray(base)
    got = amber.loads(amber.dumps(fortran))
    assert_exact(got, fortran)
    assert got.flags.f_contiguous and not got.flags.c_contiguous
    for view in (base[:, ::2], base.T, base[1:3, 2:5], base[::-1]):
        assert_exact(amber.loads(amber.dumps(view)), np.ascontiguousarray(view))


def test_the_same_array_twice_in_identity_mode_is_one_object() -> None:
    arr = np.array(["a", "b"], dtype=StringDType())
    got = amber.loads(amber.dumps([arr, arr], identity=True))
    assert got[0] is got[1]
    assert got[0].tolist() == ["a", "b"]


def test_elements_are_never_out_of_band() -> None:
    arr = np.array(["x" * 100_000, "y"], dtype=StringDType())
    buffers: list[Any] = []
    data = amber.dumps(arr, buffer_callback=buffers.append, oob_threshold=1)
    assert buffers == []
    assert_exact(amber.loads(data), arr)


def test_an_na_object_amber_cannot_encode_is_refused_at_write_with_its_path() -> None:
    pd = pytest.importorskip("pandas")
    arr = np.array(["x", pd.NA], dtype=StringDType(na_object=pd.NA))
    with pytest.raises(amber.EncodeError) as e:
        amber.dumps({"col": arr})
    assert e.value.path == "$.col.dtype.na_object"


# --- hostile frames ------------------------------------------------------------------------------


def frame(body: bytes) -> bytes:
    return b"\xab\x01\x00\x00" + struct.pack("<I", len(body)) + body


def item(value: Any) -> bytes:
    """One item's bytes: the body of a frame of `value`."""
    return amber.dumps(value)[8:]


def ndarray(dtype: Any, shape: tuple[int, ...], flags: int, rest: bytes) -> bytes:
    dims = b"".join(bytes([d]) for d in shape)  # dimensions below 128 are one-byte varints
    return frame(b"\xcd" + item(dtype) + bytes([len(shape)]) + dims + bytes([flags]) + rest)


GOOD_DTYPE = {"kind": "T", "coerce": True, "na_object": None}


def decode_error(data: bytes) -> Any:
    with pytest.raises(amber.DecodeError) as e:
        amber.loads(data)
    assert 0 <= e.value.offset <= len(data)
    return e.value


def test_a_hand_written_frame_decodes() -> None:
    got = amber.loads(ndarray(GOOD_DTYPE, (3,), 0x04, item(["a", None, "c"])))
    assert_exact(got, np.array(["a", None, "c"], dtype=StringDType(na_object=None)))
    got = amber.loads(ndarray({"kind": "T", "coerce": False}, (2, 2), 0x05, item(list("acbd"))))
    assert got.tolist() == [["a", "b"], ["c", "d"]] and got.flags.f_contiguous


@pytest.mark.parametrize(
    ("dtype", "shape", "flags", "items", "words"),
    [
        (GOOD_DTYPE, (3,), 0x04 | 0x02, ["a"], "never out of band"),
        (GOOD_DTYPE, (3,), 0x04, ["a", "b"], "needs 3 elements"),
        (GOOD_DTYPE, (2, 2), 0x04, ["a"] * 5, "needs 4 elements"),
        (GOOD_DTYPE, (2,), 0x04, ["a", 1], "not str or None"),
        (GOOD_DTYPE, (2,), 0x04, ["a", b"b"], "not str or None"),
        ({"kind": "T", "coerce": True}, (2,), 0x04, ["a", None], "no na_object"),
        ({"kind": "T", "coerce": 1}, (1,), 0x04, ["a"], "coerce"),
        ({"kind": "T", "size": 3}, (1,), 0x04, ["a"], "size"),
        ({"coerce": True}, (1,), 0x04, ["a"], "kind"),
        ({"kind": "U"}, (1,), 0x04, ["a"], "kind"),
        ("<U1", (1,), 0x04, ["a"], "dict"),
        (GOOD_DTYPE, (1,), 0x04, ("a",), "list"),
        (GOOD_DTYPE, (1,), 0x04, "a", "list"),
        ({"kind": "T", "coerce": True, "na_object": ["x", "y"]}, (1,), 0x04, [None], "shape"),
        (GOOD_DTYPE, (1,), 0x08 | 0x04, ["a"], "flags"),
    ],
)
def test_hostile_frames_are_refused_where_they_lie(
    dtype: Any, shape: tuple[int, ...], flags: int, items: Any, words: str
) -> None:
    err = decode_error(ndarray(dtype, shape, flags, item(items)))
    assert words in str(err)


def test_a_truncated_element_list_is_refused() -> None:
    data = ndarray(GOOD_DTYPE, (2,), 0x04, item(["abc", "def"]))
    for cut in range(len(data) - 8, len(data)):
        body = data[8:cut]
        err = decode_error(frame(body))
        assert err.kind in {"truncated", "malformed"}
