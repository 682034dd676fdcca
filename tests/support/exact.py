"""Exact comparison at every depth: same types, values, dtypes and NaN bits."""

from __future__ import annotations

import datetime as dt
import decimal
import math
from typing import Any

try:
    import numpy as np
except ImportError:  # pragma: no cover - numpy is a dev dependency
    np = None  # type: ignore[assignment]


def assert_exact(got: Any, want: Any, path: str = "$") -> None:
    """Same type and value at every depth (NaN equals NaN; Decimal keeps its exponent)."""
    assert type(got) is type(want), f"{path}: type {type(got).__name__} != {type(want).__name__}"
    if np is not None and isinstance(want, np.ndarray):
        assert_same_dtype(got.dtype, want.dtype, path + ".dtype")
        assert got.shape == want.shape, f"{path}: shape"
        if want.dtype.kind == "T":  # variable-width strings: the elements, not the memory
            assert_exact(got.tolist(), want.tolist(), path + ".items")
            assert_exact(_na(got.dtype), _na(want.dtype), path + ".dtype.na_object")
            assert got.dtype.coerce == want.dtype.coerce, f"{path}: coerce"
        else:
            assert got.tobytes() == want.tobytes(), f"{path}: data"
        if want.flags.f_contiguous and not want.flags.c_contiguous:
            assert got.flags.f_contiguous, f"{path}: Fortran order lost"
        return
    if np is not None and isinstance(want, np.generic):
        assert_same_dtype(got.dtype, want.dtype, path + ".dtype")
        assert got.tobytes() == want.tobytes(), path
        return
    if isinstance(want, float):
        assert math.copysign(1, got) == math.copysign(1, want), f"{path}: sign"
        assert got == want or (math.isnan(got) and math.isnan(want)), f"{path}: {got} != {want}"
        return
    if isinstance(want, complex):
        assert_exact(got.real, want.real, path + ".real")
        assert_exact(got.imag, want.imag, path + ".imag")
        return
    if isinstance(want, decimal.Decimal):
        assert str(got) == str(want), f"{path}: {got} != {want}"
        return
    if isinstance(want, (dt.datetime, dt.time)):
        assert got == want and got.fold == want.fold, f"{path}: {got!r} != {want!r}"
        assert_exact(got.tzinfo, want.tzinfo, path + ".tzinfo")
        return
    if isinstance(want, (list, tuple)):
        assert len(got) == len(want), f"{path}: length"
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            assert_exact(g, w, f"{path}[{i}]")
        return
    if isinstance(want, dict):
        assert list(got.keys()) == list(want.keys()), f"{path}: keys or their order"
        for k in want:
            assert_exact(got[k], want[k], f"{path}[{k!r}]")
        if hasattr(want, "default_factory"):
            assert got.default_factory is want.default_factory, f"{path}: default_factory"
        return
    if hasattr(want, "maxlen"):
        assert got.maxlen == want.maxlen, f"{path}: maxlen"
        assert_exact(list(got), list(want), path)
        return
    assert got == want, f"{path}: {got!r} != {want!r}"


def _na(dtype: Any) -> Any:
    """A StringDType's na_object, or a marker for one without."""
    return getattr(dtype, "na_object", "<no na_object>")


def assert_same_dtype(got: Any, want: Any, path: str) -> None:
    """Equal dtypes with the same byte order, field titles, metadata and record type."""
    assert got == want and got.str == want.str, f"{path}: {got!r} != {want!r}"
    assert got.isalignedstruct == want.isalignedstruct, f"{path}: aligned"
    assert (got.type is np.record) == (want.type is np.record), f"{path}: record type"
    assert (got.metadata is None) == (want.metadata is None), f"{path}: metadata"
    if want.metadata is not None:
        assert_exact(dict(got.metadata), dict(want.metadata), path + ".metadata")
    assert got.names == want.names, f"{path}: names"
    for name in want.names or ():
        g, w = got.fields[name], want.fields[name]
        assert g[1:] == w[1:], f"{path}[{name!r}]: offset or title"
        assert_same_dtype(g[0], w[0], f"{path}[{name!r}]")
    if want.subdtype is not None:
        assert got.subdtype[1] == want.subdtype[1], f"{path}: subarray shape"
        assert_same_dtype(got.subdtype[0], want.subdtype[0], path + ".base")
