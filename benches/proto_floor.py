"""The least time any runtime can take to parse the benchmark's bench.Test message and read every field in
CPython, against upb's parse and read (the "parse and read" row of the proto study).

Reading every field makes about 170 Python objects (numbers, strings, lists, a dict) whatever
the runtime, and the reading code (`workloads.read_all`) copies the repeated fields into lists
and builds the result tuples. The floor adds up parts that no runtime can skip, each measured
here at the fastest speed CPython offers:

- decoding the wire bytes: upb's parse alone (`FromString`, no field read);
- making the values and freeing them: `marshal.loads` of the same values (C code, no classes),
  less marshal's own per-item work (measured on as many shared `None`s);
- reading them: `read_all` over a tree of `__slots__` objects holding the values already made
  (attribute reads CPython 3.11 specializes), freeing the tree;
- for a runtime that makes objects when fields are read (as upb and amber do), one call through
  CPython's generic attribute lookup and a C getter per field read, less a slot read: measured on
  a function's `__name__` (a C getter that returns an object it holds, so nothing is made)
  against a `__slots__` attribute, times the 64 attribute reads of `read_all`.

The floor leaves out what Google's API adds on top of plain values (repeated fields and maps are
container objects, sub-messages objects of their own classes), so no runtime reaches it.

Run: `python benches/proto_floor.py` (two seconds). It prints each part (median of 101
rounds, the contenders taken in turn) and the floor as a ratio to upb's parse and read, beside
amber's.
"""

from __future__ import annotations

import gc
import marshal
import statistics
import timeit
from collections.abc import Callable
from typing import Any

import amber.proto as ap
from amber.bench.parts.proto.contenders import google_class
from amber.bench.parts.proto.workloads import SCHEMA, contents, read_all

ROUNDS, LOOPS = 101, 400
FIELD_READS = 64  # attribute reads in one `read_all`


class Sub:
    __slots__ = ("id", "name", "score", "tags")


class Addr:
    __slots__ = ("city", "lines", "street", "zip")


class Tree:
    __slots__ = tuple(contents())


def _slots(cls: type, d: dict[str, Any]) -> Any:
    o = cls.__new__(cls)
    for k, v in d.items():
        setattr(o, k, v)
    return o


def _tree(kw: dict[str, Any]) -> Tree:
    t = _slots(Tree, kw)
    t.nested = _slots(Sub, kw["nested"])
    t.items = [_slots(Sub, d) for d in kw["items"]]
    t.address = _slots(Addr, kw["address"])
    return t


def _count(x: Any) -> int:
    if isinstance(x, (list, tuple)):
        return 1 + sum(_count(i) for i in x)
    if isinstance(x, dict):
        return 1 + sum(_count(k) + _count(v) for k, v in x.items())
    return 1


class _Slot:
    __slots__ = ("__name__",)


def _getter() -> None:
    pass


def _reads(o: Any) -> tuple[str, ...]:
    return (
        o.__name__,
        o.__name__,
        o.__name__,
        o.__name__,
        o.__name__,
        o.__name__,
        o.__name__,
        o.__name__,
    )


def main() -> None:
    ns = ap.load(str(SCHEMA), include=[str(SCHEMA.parent)])
    amber_cls, upb_cls = ns.bench.Test, google_class()
    kw = contents()
    data = amber_cls(**kw).SerializeToString()
    values = dict(kw)
    values["nested"] = list(kw["nested"].values())
    values["items"] = [list(d.values()) for d in kw["items"]]
    values["address"] = list(kw["address"].values())
    blob = marshal.dumps(list(values.values()), 2)
    n_objects = _count(list(values.values()))
    nones = marshal.dumps([None] * n_objects, 2)
    slot = _Slot()
    slot.__name__ = _getter.__name__
    pool: list[Tree] = []

    def read_free() -> None:
        while pool:
            read_all(pool.pop())

    def per_call(f: Callable[[], Any], loops: int = LOOPS) -> float:
        return timeit.timeit(f, number=loops) / loops

    parts: dict[str, list[float]] = {
        k: []
        for k in (
            "upb parse",
            "make values",
            "marshal per-item",
            "read and free",
            "getset read",
            "slot read",
            "upb parse and read",
            "amber parse and read",
        )
    }
    gc.collect()
    for _ in range(ROUNDS):
        parts["upb parse"].append(per_call(lambda: upb_cls.FromString(data)))
        parts["make values"].append(per_call(lambda: marshal.loads(blob)))
        parts["marshal per-item"].append(per_call(lambda: marshal.loads(nones)))
        pool[:] = [_tree(kw) for _ in range(LOOPS)]
        parts["read and free"].append(timeit.timeit(read_free, number=1) / LOOPS)
        parts["getset read"].append(per_call(lambda: _reads(_getter), 20 * LOOPS) / 8)
        parts["slot read"].append(per_call(lambda: _reads(slot), 20 * LOOPS) / 8)
        parts["upb parse and read"].append(per_call(lambda: read_all(upb_cls.FromString(data))))
        parts["amber parse and read"].append(per_call(lambda: read_all(amber_cls.FromString(data))))
    med = {k: statistics.median(v) * 1e6 for k, v in parts.items()}
    dispatch = FIELD_READS * (med["getset read"] - med["slot read"])
    eager = med["upb parse"] + med["make values"] - med["marshal per-item"] + med["read and free"]
    lazy = eager + dispatch
    upb = med["upb parse and read"]
    print(f"bench.Test: {len(data)} bytes; reading it makes {n_objects} values")
    for k in ("upb parse", "make values", "marshal per-item", "read and free"):
        print(f"  {k:22} {med[k]:6.2f} µs")
    print(
        f"  {'attribute calls':22} {dispatch:6.2f} µs  ({FIELD_READS} x {med['getset read'] - med['slot read']:.4f})"
    )
    print(
        f"floor, values made at parse:    {eager:6.2f} µs = {eager / upb:.3f}x upb's parse and read"
    )
    made = med["upb parse"] + med["make values"] - med["marshal per-item"]
    print(
        f"  (parse alone then:            {made:6.2f} µs = {made / med['upb parse']:.2f}x upb's parse)"
    )
    print(f"floor, values made when read:   {lazy:6.2f} µs = {lazy / upb:.3f}x")
    print(f"upb parse and read:             {upb:6.2f} µs")
    print(
        f"amber parse and read:           {med['amber parse and read']:6.2f} µs = "
        f"{med['amber parse and read'] / upb:.3f}x"
    )


if __name__ == "__main__":
    main()
