"""NumPy arrays of every non-object dtype, and NumPy scalars."""

from __future__ import annotations

from typing import Any

import pytest

import amber
from tests.support.exact import assert_exact

np = pytest.importorskip("numpy")

CODES = "?bBhHiIlLqQefdgFDG"
DTYPES = [np.dtype(c) for c in CODES]
DTYPES += [np.dtype(c).newbyteorder(">") for c in "hHiIlLqQefdFD"]
DTYPES += [np.dtype(s) for s in ("S5", "U7", ">U3", "V12", "M8[ns]", ">M8[D]", "m8[us]", "<m8[Y]")]
DTYPES += [
    np.dtype([("a", "<i4"), ("b", ">f8", (2, 3)), ("c", "S3")]),
    np.dtype([("x", "u1"), ("nested", [("p", "<f4"), ("q", "<i2")])]),
    np.dtype({"names": ["a", "b"], "formats": ["<i4", "<f8"], "offsets": [0, 8], "itemsize": 24}),
    np.dtype([("a", "<i4"), ("b", "<f8")], align=True),
]


def sample(dtype: Any, shape: tuple[int, ...]) -> Any:
    n = int(np.prod(shape)) * dtype.itemsize
    raw = np.frombuffer(np.random.default_rng(0).bytes(n), dtype=np.uint8)
    if dtype.kind in "fcMm":
        # NaN payloads and NaT are kept bytewise, which is what we compare.
        pass
    # np.zeros would make a generic >M8 into <M8.
    return raw.view(dtype).reshape(shape) if n else np.ndarray(shape, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(), (0,), (7,), (3, 4), (2, 0, 3), (2, 3, 4)])
def test_arrays(dtype: Any, shape: tuple[int, ...]) -> None:
    a = sample(dtype, shape)
    assert_exact(amber.loads(amber.dumps(a)), a)


@pytest.mark.parametrize("dtype", DTYPES[:8], ids=str)
def test_fortran_order_and_views(dtype: Any) -> None:
    a = np.asfortranarray(sample(dtype, (4, 5)))
    out = amber.loads(amber.dumps(a))
    assert_exact(out, a)
    strided = sample(dtype, (6, 6))[::2, 1::3]
    assert_exact(amber.loads(amber.dumps(strided)), np.ascontiguousarray(strided))


def test_subarray_dtype() -> None:
    dt = np.dtype(("<i4", (2, 2)))
    a = np.zeros(3, dtype=dt)  # numpy folds the subarray into the shape
    assert_exact(amber.loads(amber.dumps(a)), a)


@pytest.mark.parametrize(
    "scalar",
    [
        np.bool_(True),
        np.int8(-3),
        np.uint64(2**64 - 1),
        np.float16(1.5),
        np.float32("nan"),
        np.float64(-0.0),
        np.longdouble(1) / 3,
        np.complex64(1 - 2j),
        np.datetime64("2020-01-01T00:00:00.123"),
        np.timedelta64(5, "h"),
        np.bytes_(b"abc"),
        np.str_("héllo"),
    ],
    ids=lambda s: type(s).__name__,
)
def test_scalars(scalar: Any) -> None:
    assert_exact(amber.loads(amber.dumps(scalar)), scalar)


def test_arrays_and_scalars_of_python_objects_are_refused_naming_their_dtype() -> None:
    with pytest.raises(amber.EncodeError, match=r"arrays of dtype dtype\('O'\) hold Python") as e:
        amber.dumps({"a": np.array([1, "x"], dtype=object)})
    assert e.value.path == "$.a"
    nested = np.dtype([("x", "i4"), ("o", "O")])
    with pytest.raises(amber.EncodeError, match="hold Python objects"):
        amber.dumps(np.zeros(2, dtype=nested))
    with pytest.raises(amber.EncodeError, match="scalars of dtype"):
        amber.dumps(np.zeros(1, dtype=nested)[0])


def test_array_subclass_is_refused() -> None:
    with pytest.raises(amber.EncodeError):
        amber.dumps(np.ma.masked_array([1, 2]))


ZERO_ITEMSIZE = ["S0", "<U0", ">U0", "V0", [("a", "S0")], []]
ZERO_SIZE = [(0,), (2, 0)]
NO_BYTES = [(dt, shape) for dt in ZERO_ITEMSIZE for shape in [*ZERO_SIZE, (5,), (3, 4)]]
NO_BYTES += [(dt, shape) for dt in [">M8", "<m8", ">i4", [("a", ">M8")]] for shape in ZERO_SIZE]


@pytest.mark.parametrize(("dtype", "shape"), NO_BYTES, ids=str)
def test_arrays_without_bytes_keep_their_dtype(dtype: Any, shape: tuple[int, ...]) -> None:
    # np.empty would turn S0 into S1 and >M8 into <M8; pickle keeps both.
    a = np.ndarray(shape, dtype=np.dtype(dtype))
    out = amber.loads(amber.dumps(a))
    assert_exact(out, a)
    assert out.dtype.str == a.dtype.str and out.nbytes == 0


ZERO_SIZE_SCALARS = [
    np.str_(""),
    np.bytes_(b""),
    np.void(b""),
    np.zeros(1, dtype=[])[0],
    np.zeros(1, dtype=[("a", "S0"), ("b", "V0")])[0],
]


@pytest.mark.parametrize("scalar", ZERO_SIZE_SCALARS, ids=repr)
def test_zero_size_scalars(scalar: Any) -> None:
    out = amber.loads(amber.dumps(scalar))
    assert_exact(out, scalar)
    assert out.dtype.str == scalar.dtype.str and out.dtype.descr == scalar.dtype.descr
    assert out.item() == scalar.item()


@pytest.mark.parametrize(
    "view",
    [
        np.zeros(4, dtype=[("S", "S0"), ("b", "u1")])["S"],
        np.zeros((3, 2), dtype=[("U", "<U0"), ("b", "u1")])["U"][::2],
        np.zeros(5, dtype=[("e", []), ("b", "<i4")])["e"],
    ],
    ids=lambda v: str(v.dtype),
)
def test_zero_itemsize_views(view: Any) -> None:
    out = amber.loads(amber.dumps(view))
    assert_exact(out, view)
    assert out.dtype.str == view.dtype.str and out.shape == view.shape and out.nbytes == 0


@pytest.mark.parametrize(
    "dtype",
    [
        np.dtype(
            {"names": ["a", "b"], "formats": ["<i4", "<f8"], "offsets": [0, 8], "itemsize": 24}
        ),
        np.dtype([("a", "u1"), ("b", "<i8")], align=True),
        np.dtype([("a", "<i2"), ("s", [("x", "u1"), ("y", "<f4")], (2,))], align=True),
    ],
    ids=str,
)
def test_views_keep_padding_bytes_of_their_items(dtype: Any) -> None:
    # A contiguous copy made field by field leaves the padding between and
    # after fields as whatever the allocator returned: it must not reach
    # the frame. Each item is written with the bytes it has in the array.
    raw = bytes(i % 251 + 1 for i in range(6 * dtype.itemsize))
    base = np.frombuffer(raw, dtype=dtype).reshape(2, 3)
    view = base[:, ::2]
    data = amber.dumps(view)
    items = [raw[k * dtype.itemsize : (k + 1) * dtype.itemsize] for k in (0, 2, 3, 5)]
    assert b"".join(items) in data
    out = amber.loads(data)
    assert out.tobytes() == b"".join(items) and out.dtype == dtype and out.shape == (2, 2)


def rational_dtype() -> Any:
    """NumPy's own test user-defined (legacy) dtype."""
    for module in ("numpy._core._rational_tests", "numpy.core._rational_tests"):
        try:
            return np.dtype(__import__(module, fromlist=["rational"]).rational)
        except ImportError:
            continue
    pytest.skip("numpy has no rational test dtype")


class MyVoid(np.void):
    pass


def test_user_defined_dtypes_are_refused() -> None:
    rational = rational_dtype()
    cases = [
        (np.zeros(2, dtype=rational), "$.v.dtype"),
        (np.zeros(2, dtype=[("a", "<i4"), ("r", rational)]), "$.v.dtype.r"),
        (np.zeros(2, dtype=[("p", [("q", rational, (2,))])]), "$.v.dtype.p.q.base"),
        (np.zeros(1, dtype=[("r", rational)])[0], "$.v.dtype.r"),
    ]
    for value, path in cases:
        with pytest.raises(amber.EncodeError, match="rational") as ei:
            amber.dumps({"v": value})
        assert ei.value.path == path
        assert f"(at {path})" in str(ei.value)


def test_void_subclass_dtypes_are_refused() -> None:
    for dt in [np.dtype((MyVoid, [("a", "<i4")])), np.dtype((MyVoid, 4))]:
        with pytest.raises(amber.EncodeError, match="MyVoid") as ei:
            amber.dumps([np.zeros(2, dtype=dt)])
        assert ei.value.path == "$[0].dtype"


TITLED = np.dtype([(("Temperature in K", "temp"), "<f8"), ("p", "<i4"), (("t", "q"), "u1")])
WITH_METADATA = [
    np.dtype("<i4", metadata={"unit": "m"}),
    np.dtype(">M8[s]", metadata={}),
    np.dtype([("a", np.dtype("<f8", metadata={"unit": "K"}))], metadata={"v": (1, 2.5, None)}),
    np.dtype([("s", np.dtype("<i2", metadata={"k": 1}), (2, 2))]),
    np.dtype(TITLED, metadata={"source": b"sensor", "nested": {"x": [1, "y"]}}),
    np.dtype((np.record, [("a", "<i4")]), metadata={"r": 1}),
]
KEPT = [
    TITLED,
    np.dtype([("outer", [(("inner title", "inner"), "<i2")]), ("n", "u1")], align=True),
    np.dtype((np.record, [("a", "<i4"), ("b", "S3")])),
    np.dtype((np.record, 4)),
    np.dtype((np.record, TITLED)),
    *WITH_METADATA,
]


@pytest.mark.parametrize("dtype", KEPT, ids=repr)
@pytest.mark.parametrize("shape", [(3,), (0,), (2, 2)])
def test_titles_metadata_and_record_types_are_kept(dtype: Any, shape: tuple[int, ...]) -> None:
    a = sample(dtype, shape)
    for opts in ({}, {"identity": True}):
        out = amber.loads(amber.dumps(a, **opts))
        assert_exact(out, a)
        assert out.dtype.descr == a.dtype.descr
    if a.size:
        assert type(out[(0,) * a.ndim]) is type(a[(0,) * a.ndim])


@pytest.mark.parametrize("dtype", [d for d in KEPT if d.names], ids=repr)
def test_titles_metadata_and_record_types_of_scalars_are_kept(dtype: Any) -> None:
    s = sample(dtype, (1,))[0]
    out = amber.loads(amber.dumps(s))
    assert type(out) is type(s)
    assert_exact(out, s)


def test_metadata_that_cannot_be_encoded_is_refused() -> None:
    cases = [
        (np.dtype("<i4", metadata={"f": object()}), "$.v.dtype.metadata.f"),
        (np.dtype([("a", np.dtype("<i4", metadata={"g": [1, len]}))]), "$.v.dtype.a.metadata.g[1]"),
    ]
    for dt, path in cases:
        with pytest.raises(amber.EncodeError) as ei:
            amber.dumps({"v": np.zeros(2, dtype=dt)})
        assert ei.value.path == path


def test_titles_that_are_not_str_are_refused() -> None:
    dt = np.dtype([((b"title", "a"), "<i4")])
    with pytest.raises(amber.EncodeError, match="title") as ei:
        amber.dumps(np.zeros(1, dtype=dt))
    assert ei.value.path == "$.dtype"


def test_shared_metadata_values_and_cycles_through_metadata() -> None:
    shared = {"k": [1, 2]}
    value = [np.zeros(1, dtype=np.dtype("<i4", metadata={"s": shared})), shared]
    out = amber.loads(amber.dumps(value, identity=True))
    assert out[0].dtype.metadata["s"] is out[1]
    loop: list[Any] = []
    a = np.zeros(2, dtype=np.dtype("<i4", metadata={"loop": loop}))
    loop.append(a)
    with pytest.raises(amber.EncodeError, match="cycle") as ei:
        amber.dumps(a)
    assert "$.dtype.metadata.loop[0]" in str(ei.value)
    with pytest.raises(amber.EncodeError, match="refers to itself"):
        amber.dumps(a, identity=True)
