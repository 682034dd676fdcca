"""Hostile input: every malformed frame raises DecodeError with a byte offset, quickly,
without crashing or allocating what a header claims."""

from __future__ import annotations

import contextlib
import random
import struct
import time
import typing
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import amber

SAMPLE: Any = {
    "ints": [0, -1, 300, 2**40, 2**80],
    "text": ["a", "ü" * 40, "\ud800"],
    "t": (1.5, None, True),
    "s": {1, 2},
    "b": b"bytes" * 10,
    "rows": [{"k": 1, "v": None}, {"k": 2, "v": "x"}, {"k": 3, "v": ()}],  # dict shapes
}


DECODE_KINDS = {"truncated", "not_amber", "unsupported", "malformed", "limit", "refused", "buffer"}


def frame(body: bytes) -> bytes:
    """Wrap a hand-written body in a valid header."""
    return b"\xab\x01\x00\x00" + struct.pack("<I", len(body)) + body


def decode_error(data: bytes, **kw: Any) -> Any:
    with pytest.raises(amber.DecodeError) as ei:
        amber.loads(data, **kw)
    err = ei.value
    assert isinstance(err, ValueError)
    assert err.kind in DECODE_KINDS, err.kind
    assert isinstance(err.offset, int) and 0 <= err.offset <= len(data)
    assert f"at byte {err.offset}" in str(err)
    return err


def check_from_input(value: Any, data: bytes) -> None:
    """What a decode returns is bounded by its input and made of it: no more values than input
    bytes (every value but a shaped dict's keys takes at least one byte), and every run of bytes,
    text or array data in it appears in the input as it is."""
    np = None
    with contextlib.suppress(ImportError):
        import numpy as np
    values = 0
    seen: set[int] = set()
    todo = [value]
    while todo:
        v = todo.pop()
        values += 1
        if isinstance(v, (bytes, bytearray)):
            assert bytes(v) in data, f"bytes not from the input: {bytes(v[:32])!r}"
        elif isinstance(v, str):
            assert v.encode("utf-8", "surrogatepass") in data, f"str not from the input: {v[:32]!r}"
        elif isinstance(v, int) and not isinstance(v, bool):
            assert v.bit_length() <= 8 * len(data)
        elif np is not None and isinstance(v, np.ndarray):
            raw = v.tobytes(order="A")
            assert v.nbytes <= len(data) and raw in data, "array data not from the input"
        elif isinstance(v, (list, tuple, set, frozenset, dict)) or hasattr(v, "maxlen"):
            if id(v) in seen:  # shared or cyclic: counted once
                continue
            seen.add(id(v))
            if isinstance(v, dict):
                # str keys may come from a shape (no bytes of their own): checked, not counted.
                for k, item in v.items():
                    if isinstance(k, str):
                        assert k.encode("utf-8", "surrogatepass") in data, f"key {k[:32]!r}"
                    else:
                        todo.append(k)
                    todo.append(item)
            else:
                todo.extend(v)
    assert values <= len(data), f"{values} values from {len(data)} bytes"


def test_every_truncation_is_a_decode_error() -> None:
    data = amber.dumps(SAMPLE)
    for n in range(len(data)):
        decode_error(data[:n])


def test_truncated_body_with_fixed_header() -> None:
    body = amber.dumps(SAMPLE)[8:]
    for n in range(len(body)):
        decode_error(frame(body[:n]))


@settings(max_examples=3000, deadline=None)
@given(st.data())
def test_bit_flips_never_crash(data: st.DataObject) -> None:
    raw = bytearray(amber.dumps(SAMPLE))
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(8, len(raw) - 1))
        raw[i] ^= 1 << data.draw(st.integers(0, 7))
    try:
        out = amber.loads(bytes(raw))
    except amber.DecodeError as e:
        assert e.offset is not None
    else:
        check_from_input(out, bytes(raw))


@settings(max_examples=2000, deadline=None)
@given(st.binary(max_size=64))
def test_random_bodies_never_crash(body: bytes) -> None:
    with contextlib.suppress(amber.DecodeError):
        check_from_input(amber.loads(frame(body)), frame(body))


def test_header_errors() -> None:
    assert "pickle" in str(decode_error(b"\x80\x05K\x01."))
    assert "version" in str(decode_error(b"\xab\x09\x00\x00\x00\x00\x00\x00"))
    decode_error(b"\xab\x01\x80\x00\x00\x00\x00\x00")  # unknown flag
    decode_error(b"")
    decode_error(amber.dumps(1) + b"\x00")  # trailing bytes


@pytest.mark.parametrize(
    "body",
    [
        b"\xb8\xff\xff\xff\xff\x0f",  # list of 2**32-1 items in 6 bytes
        b"\xba\xff\xff\xff\xff\x0f",  # dict
        b"\xb2\xff\xff\xff\xff\x0f",  # str
        b"\xb6\xff\xff\xff\xff\xff\xff\xff\xff\x7f",  # bytes of 2**63-1
        b"\xbb\x80\x80\x80\x80\x04",  # set
        b"\xaf\xff\xff\xff\xff\x0f",  # bigint
        b"\xcd\x43<f8\x01\xff\xff\xff\xff\xff\xff\xff\xff\x7f\x00\x00\x00",  # ndarray
    ],
)
def test_huge_declared_counts_fail_fast_without_allocating(body: bytes) -> None:
    import tracemalloc

    pytest.importorskip("numpy")  # imported now so the measurement sees only decoding
    tracemalloc.start()
    t0 = time.perf_counter()
    err = decode_error(frame(body))
    elapsed = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert elapsed < 0.5
    assert peak < 1 << 20, f"allocated {peak} bytes for a {len(body)}-byte body"
    assert err.offset >= 8


def test_million_deep_nesting() -> None:
    body = b"\x61" * 1_000_000 + b"\x60"  # [[[...[]...]]]
    t0 = time.perf_counter()
    err = decode_error(frame(body))
    assert time.perf_counter() - t0 < 1.0
    assert "max_depth=1000" in str(err)
    assert err.offset == 8 + 1000
    assert err.path == "$" + "[0]" * 1000
    assert "$" + "[0]" * 10 + "...(980 more levels)..." + "[0]" * 10 in str(err)
    assert len(str(err)) < 200


def test_depth_limit_is_configurable() -> None:
    body = b"\x61" * 50 + b"\x60"
    decode_error(frame(body), max_depth=10)
    assert amber.loads(frame(body), max_depth=60) is not None


def test_invalid_utf8_names_the_byte() -> None:
    err = decode_error(frame(b"\x43ab\xff"))
    assert err.offset == 8 + 3
    assert "UTF-8" in str(err)


def test_encoded_surrogates_are_refused_in_plain_str() -> None:
    decode_error(frame(b"\x43\xed\xa0\x80"))


def test_unknown_and_reserved_tags() -> None:
    for tag in range(0xD9, 0xE0):
        err = decode_error(frame(bytes([tag])))
        assert err.offset == 8 and f"tag 0x{tag:02x} is reserved" in str(err)
        assert err.kind == "unsupported"


def test_string_reference_out_of_range() -> None:
    err = decode_error(frame(b"\x62\xb3\x01a\x81"))
    assert "string reference 1" in str(err) and err.path == "$[1]"


def test_shared_reference_out_of_range() -> None:
    decode_error(frame(b"\xd0\x00"))


def test_unhashable_key_is_a_decode_error_with_path() -> None:
    err = decode_error(frame(b"\x71\x60\x01"))  # {[]: 1}
    assert "unhashable" in str(err)


def test_non_shortest_ints_are_refused() -> None:
    decode_error(frame(b"\xaf\x01\x05"))  # bigint for a small value
    decode_error(frame(b"\xaf\x09" + b"\x00" * 9))  # redundant sign byte


def test_invalid_field_values() -> None:
    decode_error(frame(b"\xbd\xe8\x07\x0d\x01"))  # month 13
    decode_error(frame(b"\xc0" + struct.pack("<iii", 0, 86400, 0)))  # unnormalized timedelta
    decode_error(frame(b"\xca\x63\x00"))  # unknown defaultdict factory
    decode_error(frame(b"\xc5" + b"\x00" * 16 + b"\x07"))  # UUID safety code


def test_unregistered_class_name_is_refused_without_import() -> None:
    import sys

    name = b"os.system"
    body = b"\xcc\xb2" + bytes([len(name)]) + name + b"\x40"
    before = set(sys.modules)
    err = decode_error(frame(body))
    assert "not registered" in str(err)
    assert set(sys.modules) == before


def test_object_dtype_is_refused() -> None:
    np = pytest.importorskip("numpy")
    good = amber.dumps(np.zeros(2, dtype="<i8"))
    bad = good.replace(b"<i8", b"|O8")
    err = decode_error(bad)
    assert "object" in str(err)


def test_random_garbage_after_valid_header_is_fast() -> None:
    rng = random.Random(7)
    t0 = time.perf_counter()
    for _ in range(2000):
        body = bytes(rng.getrandbits(8) for _ in range(rng.randrange(1, 200)))
        with contextlib.suppress(amber.DecodeError):
            check_from_input(amber.loads(frame(body)), frame(body))
    assert time.perf_counter() - t0 < 5


def _bigint_item(v: int) -> bytes:
    n = (v.bit_length() + 8) // 8
    assert n < 1 << 14
    length = bytes([0x80 | (n & 0x7F), n >> 7]) if n >= 0x80 else bytes([n])
    return b"\xaf" + length + v.to_bytes(n, "little", signed=True)


@pytest.mark.parametrize("where", ["numerator", "denominator"])
def test_fraction_parts_are_bounded_so_normalising_stays_cheap(where: str) -> None:
    # A gcd of two n-byte ints takes time quadratic in n: parts over 4,096 bytes are refused.
    big = (1 << (4097 * 8 - 2)) | 1
    num, den = (big, 3) if where == "numerator" else (3, big)
    parts = [_bigint_item(v) if v == big else bytes([v]) for v in (num, den)]
    err = decode_error(frame(b"\xc6" + b"".join(parts)))
    assert "Fraction part longer than 4096 bytes" in str(err)
    assert err.offset == 9 + (where == "denominator") * len(parts[0])


def test_fractions_up_to_the_part_limit_round_trip_and_larger_ones_are_refused() -> None:
    import fractions

    edge = fractions.Fraction(2**32766 - 1, 3)  # 4,096 bytes of two's complement
    assert amber.loads(amber.dumps(edge)) == edge
    assert amber.loads(amber.dumps(-edge)) == -edge
    for big in (fractions.Fraction(2**32767, 3), fractions.Fraction(1, 2**32767 + 1)):
        with pytest.raises(amber.EncodeError, match="limited to 4096 bytes"):
            amber.dumps([big])


@pytest.mark.parametrize(
    "key", ["America/Argentina/Nowhere", "Nowhere", "../../etc/passwd", "Europe/Paris/../Berlin"]
)
def test_unknown_time_zone_keys_import_nothing_they_name(key: str) -> None:
    import subprocess
    import sys

    # In a child process, so that the modules imported by the decode alone are seen.
    code = f"""
import sys, struct, amber, zoneinfo
amber.loads(amber.dumps(zoneinfo.ZoneInfo("Europe/Paris")))  # fixed imports done
before = set(sys.modules)
body = b"\\xc3" + amber.dumps({key!r})[8:]  # TZ_ZONE, then the key
try:
    amber.loads(b"\\xab\\x01\\x00\\x00" + struct.pack("<I", len(body)) + body)
except amber.DecodeError as e:
    assert e.offset == 8, e.offset
else:
    raise AssertionError("decoded")
print(" ".join(sorted(set(sys.modules) - before)))
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    # Fixed modules may load (the tzdata package's zone list); none named after the key.
    parts = {p for p in key.split("/") if p.strip(".")}
    for name in proc.stdout.split():
        assert not name.startswith("tzdata.zoneinfo"), name
        assert not parts & set(name.split(".")), name


class Pair(typing.NamedTuple):
    a: int
    b: int


class Slots2:
    __slots__ = ("x", "y")


class Attrs:
    pass


@pytest.fixture
def registered_classes() -> Any:
    classes = {Pair: "Pair", Slots2: "Sl", Attrs: "At"}
    for cls, name in classes.items():
        amber.register(cls, name=name)
    yield
    for cls in classes:
        amber.unregister(cls)


def obj(tag: int, name: bytes, *items: bytes) -> bytes:
    return bytes([tag, 0x40 + len(name)]) + name + b"".join(items)


@pytest.mark.usefixtures("registered_classes")
def test_object_states_are_checked_against_the_class() -> None:
    cases = [
        (obj(0xCC, b"Pair", b"\xa1\x01"), "2 fields", "$"),  # a NamedTuple of 1 item
        (obj(0xCC, b"Pair", b"\xa3\x01\x02\x03"), "2 fields", "$"),  # of 3 items
        (obj(0xD4, b"At", b"\x71\x01\x02"), "str", "$"),  # attribute name 1
        (b"\x61" + obj(0xD4, b"At", b"\x71\xa0\x02"), "str", "$[0]"),  # attribute name ()
        (obj(0xD4, b"Sl", b"\x71\x41z\x01"), "no slot 'z'", "$"),  # not one of its slots
        (obj(0xD4, b"Sl", b"\x71\x49__class__\x01"), "no slot '__class__'", "$"),
        (obj(0xD4, b"Sl", b"\x71\x01\x02"), "str", "$"),
    ]
    none, x1 = b"\xa8", b"\x71\x41x\x01"  # None, {"x": 1}
    cases += [  # OBJECT_STATE: name, base, state
        (obj(0xD7, b"At", none, b"\x61\x01"), "must be a dict or None, not list", "$"),
        (obj(0xD7, b"At", none, b"\xa3" + none * 3), "pair", "$"),
        (obj(0xD7, b"At", none, b"\xa2\x01" + none), "dict or None, not int", "$"),
        (obj(0xD7, b"At", b"\xa1\x01", x1), "not made from", "$"),
        (obj(0xD7, b"Sl", none, x1), "no __dict__", "$"),
        (obj(0xD7, b"Sl", none, b"\xa2" + none + b"\x71\x41z\x01"), "no slot 'z'", "$"),
        (obj(0xD7, b"Pair", none, none), "must be a tuple", "$"),
        (obj(0xD7, b"Pair", b"\xa1\x01", none), "2 fields", "$"),
        (obj(0xD7, b"Pair", b"\xa2\x01\x02", x1), "no __dict__", "$"),
        (obj(0xD7, b"Pair", b"\xa2\x01\x02", b"\x71\x41x\x61\xc0"), "timedelta", "$.x[0]"),
    ]
    for data, why, path in cases:
        err = decode_error(frame(data))
        assert why in str(err) and err.path == path, (data, str(err))
    ok = amber.loads(frame(obj(0xCC, b"Pair", b"\xa2\x01\x02")))
    assert type(ok) is Pair and ok == (1, 2)
    at = amber.loads(frame(obj(0xD7, b"At", none, x1)))
    assert type(at) is Attrs and at.__dict__ == {"x": 1}
    sl = amber.loads(frame(obj(0xD7, b"Sl", none, b"\xa2" + none + x1)))
    assert type(sl) is Slots2 and sl.x == 1 and not hasattr(sl, "y")
    assert type(amber.loads(frame(obj(0xD7, b"Sl", none, none)))) is Slots2


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def ndarray_frame(dtype: Any, dims: list[int], data: bytes = b"", oob: bool = False) -> bytes:
    """NDARRAY with dtype description `dtype` (any encodable value), C order."""
    body = b"\xcd" + amber.dumps(dtype)[8:] + bytes([len(dims)])
    body += b"".join(varint(d) for d in dims)
    body += b"\x02\x00" if oob else b"\x00" + varint(len(data)) + b"\x00" + data
    return frame(body)


def _numpy_knows(alias: str) -> bool:
    """Whether the installed NumPy still reads a deprecated dtype alias (2.5 dropped 'a')."""
    import warnings

    try:
        import numpy as np

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            np.dtype(alias)
    except (ImportError, TypeError):
        return False
    return True


ZERO_ITEMSIZE: list[Any] = [
    "|S0",
    *(["a0"] if _numpy_knows("a0") else []),
    "<U0",
    "|V0",
    {"names": [], "formats": [], "offsets": [], "itemsize": 0},
]


@pytest.mark.filterwarnings("ignore:Data type alias 'a':DeprecationWarning")
@pytest.mark.parametrize("descr", ZERO_ITEMSIZE, ids=str)
@pytest.mark.parametrize("how", ["copy", "zero_copy", "oob"])
def test_zero_itemsize_arrays_hold_only_input_bytes(descr: Any, how: str) -> None:
    # NumPy makes an unsized S0/U0 dtype S1/U1 when it allocates an array
    # itself: a decoder that let it would hand out memory it never wrote.
    pytest.importorskip("numpy")
    data = ndarray_frame(descr, [4096], oob=how == "oob")
    a = amber.loads(data, zero_copy=how == "zero_copy", buffers=[b""] if how == "oob" else None)
    assert a.shape == (4096,)
    assert a.dtype.itemsize == 0 and a.nbytes == 0
    assert a.tobytes() == b""


@pytest.mark.filterwarnings("ignore:Data type alias 'a':DeprecationWarning")
@pytest.mark.parametrize("descr", ZERO_ITEMSIZE, ids=str)
def test_zero_itemsize_array_of_2_to_33_items_allocates_nothing(descr: Any) -> None:
    import tracemalloc

    pytest.importorskip("numpy")
    data = ndarray_frame(descr, [2**33])
    tracemalloc.start()
    try:
        a = amber.loads(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, f"allocated {peak} bytes for a {len(data)}-byte frame"
    assert a.shape == (2**33,) and a.nbytes == 0


def test_zero_itemsize_array_beyond_numpy_limits_is_a_decode_error() -> None:
    pytest.importorskip("numpy")
    decode_error(ndarray_frame("|V0", [2**40, 2**40]))
    decode_error(ndarray_frame("|S0", [2**64 - 1]))


@pytest.mark.parametrize(
    ("descr", "dims"),
    [
        ("<i4", [0]),
        (">M8", [0, 3]),
        ({"names": [], "formats": [], "offsets": [], "itemsize": 2**31 - 1}, [0]),
    ],
    ids=str,
)
def test_empty_arrays_allocate_nothing(descr: Any, dims: list[int]) -> None:
    import tracemalloc

    pytest.importorskip("numpy")
    data = ndarray_frame(descr, dims)
    tracemalloc.start()
    try:
        a = amber.loads(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20 and a.nbytes == 0 and a.shape == tuple(dims)


def test_array_bytes_come_from_the_input() -> None:
    np = pytest.importorskip("numpy")
    payload = bytes(range(1, 25))
    for descr, dims in [("<i4", [6]), ("|S3", [2, 4]), ("|V8", [3]), (">M8[s]", [3])]:
        for zero_copy in (False, True):
            a = amber.loads(ndarray_frame(descr, dims, payload), zero_copy=zero_copy)
            assert a.tobytes() == payload and a.dtype == np.dtype(descr)
    for descr, n in [("<i4", 23), ("|S0", 1), ("<U0", 4)]:
        decode_error(ndarray_frame(descr, [6], payload[:n]))


def npscalar_frame(dtype: Any, raw: bytes) -> bytes:
    return frame(b"\xce" + amber.dumps(dtype)[8:] + varint(len(raw)) + raw)


def test_zero_size_scalars_read_no_bytes() -> None:
    np = pytest.importorskip("numpy")
    for descr, want in [("|S0", np.bytes_(b"")), ("<U0", np.str_("")), ("|V0", np.void(b""))]:
        got = amber.loads(npscalar_frame(descr, b""))
        assert type(got) is type(want) and got.dtype == want.dtype and got.item() == want.item()
        decode_error(npscalar_frame(descr, b"\x00"))
    decode_error(npscalar_frame("<U0", b"\x00" * 4))


def test_scalar_of_a_subarray_dtype_is_refused() -> None:
    pytest.importorskip("numpy")
    err = decode_error(npscalar_frame(["<i4", (2,)], bytes(8)))
    assert "subarray" in str(err)


STRUCT = {"names": ["a"], "formats": ["<i4"], "offsets": [0], "itemsize": 4}


@pytest.mark.parametrize(
    "descr",
    [
        ("<i4",),
        ("<i4", {"metadata": {}}, None),
        ("<i4", {}),
        ("<i4", {"other": 1}),
        ("<i4", {"metadata": [("a", 1)]}),
        ("<i4", {"record": True}),
        ("|V4", {"record": 1}),
        (["|V4", (1,)], {"record": True}),
        (("<i4", {"metadata": {}}), {"metadata": {}}),
        ("<i4", {"titles": ["t"]}),
        (STRUCT, {"titles": ["t", None]}),
        (STRUCT, {"titles": [b"t"]}),
        (STRUCT, {"titles": ("t",)}),
        (STRUCT, {"titles": ["a"]}),
    ],
    ids=str,
)
def test_malformed_dtype_extras_are_refused(descr: Any) -> None:
    pytest.importorskip("numpy")
    err = decode_error(ndarray_frame(descr, [1], b"\x00" * 4))
    assert err.offset == 8 and err.path == "$"
    decode_error(npscalar_frame(descr, b"\x00" * 4))


def test_dtype_extras_build_what_they_say() -> None:
    np = pytest.importorskip("numpy")
    a = amber.loads(ndarray_frame((STRUCT, {"titles": ["T"], "record": True}), [1], bytes(4)))
    assert a.dtype.type is np.record and a.dtype.fields["a"][2] == "T"
    a = amber.loads(ndarray_frame(("<i2", {"metadata": {"u": [1]}}), [2], bytes(4)))
    assert a.dtype == np.dtype("<i2") and a.dtype.metadata == {"u": [1]}
