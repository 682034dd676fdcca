"""Shared references and cycles: kept with identity=True, a clear error without."""

from __future__ import annotations

import collections
import dataclasses
import gc
import weakref
from typing import Any

import pytest

import amber


@dataclasses.dataclass
class Node:
    name: str
    links: list[Any] = dataclasses.field(default_factory=list)


amber.register(Node)


def round_trip(obj: Any) -> Any:
    return amber.loads(amber.dumps(obj, identity=True))


def test_shared_dict_decodes_to_one_object() -> None:
    d = {"x": 1}
    out = round_trip([d, d, {"again": d}])
    assert out[0] is out[1] is out[2]["again"]
    assert out[0] == d


def test_shared_objects_without_identity_are_copies() -> None:
    d = {"x": 1}
    out = amber.loads(amber.dumps([d, d]))
    assert out == [d, d] and out[0] is not out[1]


@pytest.mark.parametrize(
    "make",
    [
        lambda: [1, 2],
        lambda: (1, [2]),
        lambda: {1, 2},
        lambda: frozenset({1}),
        lambda: bytearray(b"ab"),
        lambda: b"shared bytes",
        lambda: collections.deque([1]),
        lambda: collections.OrderedDict(a=1),
        lambda: Node("n"),
    ],
)
def test_each_kind_can_be_shared(make: Any) -> None:
    x = make()
    out = round_trip([x, x])
    assert out[0] is out[1]
    assert out[0] == x


def test_self_referencing_list() -> None:
    a: list[Any] = [1]
    a.append(a)
    out = round_trip(a)
    assert out[1] is out


def test_dict_cycle() -> None:
    d: dict[str, Any] = {}
    d["self"] = d
    out = round_trip(d)
    assert out["self"] is out


def test_cycle_through_tuple() -> None:
    lst: list[Any] = []
    t = (lst, 1)
    lst.append(t)
    out = round_trip(t)
    assert out[0][0] is out
    assert type(out) is tuple and out[1] == 1


def test_cycle_through_two_tuples() -> None:
    lst: list[Any] = []
    t2 = (lst,)
    t1 = (t2, "x")
    lst.append(t1)
    out = round_trip([t1, t2])
    assert out[0][0] is out[1]
    assert out[1][0][0] is out[0]


def test_cycle_through_registered_object() -> None:
    a, b = Node("a"), Node("b")
    a.links.append(b)
    b.links.append(a)
    out = round_trip(a)
    assert out.links[0].links[0] is out


def test_cycle_without_identity_is_an_encode_error() -> None:
    a: list[Any] = [1]
    a.append({"k": a})
    with pytest.raises(amber.EncodeError) as ei:
        amber.dumps(a)
    msg = str(ei.value)
    assert "cycle" in msg and "identity=True" in msg
    assert "$[1].k" in msg
    assert not isinstance(ei.value, RecursionError)


def test_deep_nesting_is_an_encode_error_naming_the_limit() -> None:
    x: Any = []
    for _ in range(2000):
        x = [x]
    with pytest.raises(amber.EncodeError, match="max_depth=1000"):
        amber.dumps(x)
    out = amber.loads(amber.dumps(x, max_depth=3000), max_depth=3000)
    depth = 0
    while out:
        (out,) = out
        depth += 1
    assert depth == 2000


def test_identity_mode_still_deduplicates_strings() -> None:
    rows = [{"name": "x" + str(i % 3)} for i in range(100)]
    # A repeated value is spelled at its first two sightings, then referenced.
    assert amber.dumps(rows, identity=True).count(b"x1") == 2


def test_shared_array_with_subarray_dtype() -> None:
    # The dtype description holds a shape tuple; memo numbering must agree.
    np = pytest.importorskip("numpy")
    a = np.zeros(1, dtype=[("a", "<i4", (2,))])
    out = round_trip([a, a, (2,)])
    assert out[0] is out[1] and out[0].dtype == a.dtype and out[2] == (2,)


def test_cycle_through_tuple_keeps_array_data_aligned() -> None:
    np = pytest.importorskip("numpy")
    lst: list[Any] = []
    t = (lst, np.arange(3, dtype="<f8"))
    lst.append(t)
    data = amber.dumps(t, identity=True)
    raw = np.arange(3, dtype="<f8").tobytes()
    assert data.index(raw) % 8 == 0
    out = amber.loads(data, zero_copy=True)
    assert out[0][0] is out and (out[1] == np.arange(3)).all()


def test_very_deep_data_on_a_small_thread_stack() -> None:
    import threading

    x: Any = []
    for _ in range(50_000):
        x = [x]
    result: dict[str, Any] = {}

    def run() -> None:
        data = amber.dumps(x, max_depth=60_000)
        out = amber.loads(data, max_depth=60_000)
        depth = 0
        while out:
            (out,) = out
            depth += 1
        result["depth"] = depth

    old = threading.stack_size(256 * 1024)
    try:
        t = threading.Thread(target=run)
        t.start()
        t.join()
    finally:
        threading.stack_size(old)
    assert result == {"depth": 50_000}


SMALL_STACK = """
import threading, amber
values = []
for depth in (1, 999, 20_000):
    x = []
    for _ in range(depth):
        x = [x]
    values.append((depth, x))
results = []
threading.stack_size({size})

def run():
    # Deep values are made and freed on the main thread: CPython itself may need more than
    # these stacks to free them (3.13 does for 999 levels on 32 KiB).
    for depth, x in values:
        data = amber.dumps(x, max_depth=30_000, identity={identity})
        results.append((depth, amber.loads(data, max_depth=30_000)))

t = threading.Thread(target=run)
t.start()
t.join()
for depth, out in results:
    n = 0
    while out:
        (out,) = out
        n += 1
    assert n == depth, (n, depth)
print("ok" if len(results) == 3 else "thread failed")
"""


def _smallest_thread_stack() -> int:
    """The smallest thread stack this interpreter accepts, in steps of 4 KiB (32 KiB up to
    CPython 3.13, 52 KiB from 3.14)."""
    import threading

    try:
        for size in range(16 * 1024, 1024 * 1024, 4096):
            try:
                threading.stack_size(size)
            except ValueError:
                continue
            return size
        raise AssertionError("no thread stack size under 1 MiB accepted")
    finally:
        threading.stack_size(0)


@pytest.mark.parametrize("identity", [False, True])
@pytest.mark.parametrize("above_kib", [0, 8, 16, 24])
def test_dumps_and_loads_on_the_smallest_thread_stacks(above_kib: int, identity: bool) -> None:
    """The interpreter's smallest thread stacks and a few sizes above, in a child process so
    that a crash fails the test."""
    import subprocess
    import sys

    size = _smallest_thread_stack() + above_kib * 1024
    code = SMALL_STACK.format(size=size, identity=identity)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert (proc.returncode, proc.stdout.strip()) == (0, "ok"), proc.stderr[-2000:]


def test_tuples_of_atoms_are_left_to_the_gc_as_cpython_would() -> None:
    """Decoded tuples that cannot hold a cycle are not tracked by the cyclic GC (CPython stops
    tracking them at its first collection anyway); any tuple that may is tracked."""
    atoms = amber.loads(amber.dumps((1, "a", 2.5, b"x", None, (3, "b"))))
    assert not gc.is_tracked(atoms) and not gc.is_tracked(atoms[5])
    for holder in ((1, []), (1, {}), (1, {"a": 1}), (Node("n"),)):
        assert gc.is_tracked(amber.loads(amber.dumps(holder))), holder
    # A cycle through a decoded tuple is still found and freed.
    t = amber.loads(amber.dumps(({"k": 1},)))
    node = Node("n", [t])
    t[0]["node"] = node
    alive = weakref.ref(node)
    del t, node
    gc.collect()
    assert alive() is None


UNSHARED: dict[str, Any] = {
    "list": lambda: [1, "a"],
    "dict": lambda: {"a": 1},
    "tuple": lambda: (2, [3]),
    "set": lambda: {1, 2},
    "frozenset": lambda: frozenset({4}),
    "bytearray": lambda: bytearray(b"y"),
    "nested": lambda: [[[1]], {"k": [2, (3, [4])]}],
}
WRAPS: dict[str, Any] = {
    "top": lambda v: v,
    "in-list": lambda v: [v],
    "in-dict": lambda v: {"k": v},
    "in-tuple": lambda v: (v,),
}


@pytest.mark.parametrize("wrap", WRAPS.values(), ids=list(WRAPS))
@pytest.mark.parametrize("make", UNSHARED.values(), ids=list(UNSHARED))
def test_a_container_met_once_gets_no_share_marker(make: Any, wrap: Any) -> None:
    # The walk holds each container it enters; that reference is not one that shares it.
    plain = amber.dumps(wrap(make()))
    shared = amber.dumps(wrap(make()), identity=True)
    assert len(shared) == len(plain)
    assert amber.loads(shared) == amber.loads(plain)


@pytest.mark.parametrize("wrap", WRAPS.values(), ids=list(WRAPS))
def test_a_container_met_twice_in_one_list_is_shared(wrap: Any) -> None:
    inner = [1, 2]
    out = amber.loads(amber.dumps(wrap([inner, {"k": inner}, (inner,)]), identity=True))
    if isinstance(out, dict):
        out = out["k"]
    elif len(out) == 1:
        out = out[0]
    assert out[0] is out[1]["k"] is out[2][0]
