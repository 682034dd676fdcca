"""The check every part can use before timing: is a result the same value as the input, exactly?"""

from __future__ import annotations

import io
import pickle
from typing import Any


def _value_bytes(obj: Any) -> bytes:
    """Pickle without the memo: the bytes depend on values, types and order, never on identity."""
    out = io.BytesIO()
    pickler = pickle.Pickler(out, 5)
    pickler.fast = True
    pickler.dump(obj)
    return out.getvalue()


def exactly_equal(a: Any, b: Any) -> bool:
    """True when `b` has the same values, types (int vs float vs bool, tuple vs list, str vs bytes)
    and order as `a`, bit for bit for floats.

    `==` alone would accept `1.0` for `1` or a list for a tuple. Comparing memo-free pickles checks
    all of it at C speed; objects pickle cannot write in that mode (cycles, unpicklable results) fall
    back to `==` plus equal top-level types.
    """
    try:
        return _value_bytes(a) == _value_bytes(b)
    except (pickle.PicklingError, TypeError, ValueError, RecursionError, AttributeError):
        return type(a) is type(b) and bool(a == b)
