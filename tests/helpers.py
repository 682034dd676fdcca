"""Shared test helpers: exact comparison at every depth."""

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
        assert got.dtype == want.dtype, f"{path}: dtype {got.dtype} != {want.dtype}"
        assert got.dtype.isalignedstruct == want.dtype.isalignedstruct, f"{path}: aligned"
        assert got.shape == want.shape, f"{path}: shape"
        assert got.tobytes() == want.tobytes(), f"{path}: data"
        if want.flags.f_contiguous and not want.flags.c_contiguous:
            assert got.flags.f_contiguous, f"{path}: Fortran order lost"
        return
    if np is not None and isinstance(want, np.generic):
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), path
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
