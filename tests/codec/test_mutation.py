"""Python code that changes the data while it is encoded: an error or a consistent frame, never a crash.

Encoding runs Python code in hooks, in `__getstate__`, in the properties of stdlib types such as
`Fraction` and `UUID`, and (while that code runs) on other threads. Whatever that code does to
the containers being walked, `dumps` raises `amber.EncodeError` or writes a frame that decodes
to values that were really there. The first tests follow CPython's pickle tests for the same
class of bug (gh-92930), for every container kind, in both modes.
"""

from __future__ import annotations

import collections
import random
import re
import subprocess
import sys
import textwrap
from collections.abc import Callable
from typing import Any, ClassVar

import pytest

import amber

MODES = [False, True]
CHANGED = re.compile(r"changed|mutated")

# Every container kind amber walks, built from a list of items (and a key for the mapping kinds).
KINDS: dict[str, Callable[[list[Any]], Any]] = {
    "list": list,
    "tuple": tuple,
    "set": set,
    "frozenset": frozenset,
    "deque": collections.deque,
    "dict-keys": lambda items: {x: i for i, x in enumerate(items)},
    "dict-values": lambda items: {i: x for i, x in enumerate(items)},
    "dict-str-keys": lambda items: {f"k{i}": x for i, x in enumerate(items)},
    "OrderedDict-keys": lambda items: collections.OrderedDict((x, i) for i, x in enumerate(items)),
    "OrderedDict-values": lambda items: collections.OrderedDict(enumerate(items)),
    "defaultdict-keys": lambda items: collections.defaultdict(
        None, {x: i for i, x in enumerate(items)}
    ),
    "defaultdict-values": lambda items: collections.defaultdict(None, enumerate(items)),
    "Counter-keys": lambda items: collections.Counter({x: i for i, x in enumerate(items)}),
}


class Clearer:
    """Registered with a hook that empties the container it sits in."""

    target: Any = None


def _clear_target(obj: Clearer) -> int:
    target = Clearer.target
    if target is not None:
        target.clear()
    return 0


amber.register(
    Clearer, name="test.mutation.Clearer", encode=_clear_target, decode=lambda s: Clearer()
)


def _check_outcome(collection: Any, identity: bool) -> None:
    try:
        data = amber.dumps(collection, identity=identity)
    except amber.EncodeError as e:
        assert e.kind == "mutated" and CHANGED.search(str(e)), e
        return
    amber.loads(data)  # a frame that was written must read back


@pytest.mark.parametrize("identity", MODES)
@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("n", [1, 2, 20])
def test_hook_clears_the_container_being_encoded(kind: str, n: int, identity: bool) -> None:
    make = KINDS[kind]
    if kind in ("tuple", "frozenset"):
        # Immutable: the hook clears a list the tuple's items also live in.
        inner = [Clearer() for _ in range(n)]
        collection: Any = make(inner)
        Clearer.target = inner
    else:
        collection = make([Clearer() for _ in range(n)])
        Clearer.target = collection
    try:
        _check_outcome(collection, identity)
    finally:
        Clearer.target = None


class Bad:
    """pickle's evil class: equal to every other, one hash, and it sometimes clears its dict."""

    enabled = False
    collection: ClassVar[dict[Any, Any]] = {}

    def __eq__(self, other: object) -> bool:
        return Bad.enabled

    def __hash__(self) -> int:
        return 42


def _bad_state(obj: Bad) -> int:
    if random.getrandbits(3) == 0:
        Bad.collection.clear()
    return 0


amber.register(Bad, name="test.mutation.Bad", encode=_bad_state, decode=lambda s: Bad())


@pytest.mark.parametrize("identity", MODES)
@pytest.mark.parametrize("seed", range(5))
def test_evil_class_mutating_dict(seed: int, identity: bool) -> None:
    random.seed(seed)
    for _ in range(20):
        Bad.enabled = False
        collection = {Bad(): Bad() for _ in range(20)}
        Bad.collection = collection
        Bad.enabled = True
        try:
            _check_outcome(collection, identity)
        finally:
            Bad.enabled = False
            Bad.collection = {}


class Key:
    """A key whose hook changes the dict it is a key of."""


@pytest.mark.parametrize("identity", MODES)
@pytest.mark.parametrize("kind", ["dict", "defaultdict", "Counter", "OrderedDict", "dict-two-keys"])
@pytest.mark.parametrize("action", ["clear", "replace", "delete", "add"])
def test_key_hook_changing_its_dict_never_writes_freed_memory(
    kind: str, action: str, identity: bool
) -> None:
    k = Key()
    value = bytearray(b"v" * 1000)
    d: Any
    if kind == "defaultdict":
        d = collections.defaultdict(None, {k: value})
    elif kind == "Counter":
        d = collections.Counter({k: value})
    elif kind == "OrderedDict":
        d = collections.OrderedDict({k: value})
    elif kind == "dict-two-keys":
        d = {k: value, "after": bytearray(b"w" * 1000)}
    else:
        d = {k: value}
    del value  # the dict holds the only reference

    def hook(key: Key) -> int:
        if action == "clear":
            d.clear()
        elif action == "replace":
            d[k] = None
        elif action == "delete":
            del d[k]
        else:
            for i in range(100):
                d[i] = i
        return 0

    amber.register(Key, name="test.mutation.Key", encode=hook, decode=lambda s: Key())
    try:
        try:
            data = amber.dumps(d, identity=identity)
        except amber.EncodeError as e:
            assert e.kind == "mutated" and CHANGED.search(str(e)), e
            return
        out = amber.loads(data)
        for v in out.values():
            # Every value written is one that was in the dict: never bytes of freed memory.
            assert v is None or v in (b"v" * 1000, b"w" * 1000) or isinstance(v, int), v
    finally:
        amber.unregister(Key)


STRESS = """
import sys, threading, time, fractions, uuid, amber
sys.setswitchinterval(1e-6)
make = {make}
d = {{make(j): bytearray(b"%d" % j * 50) for j in range(300)}}
stop = False

def mutator():
    while not stop:
        d.clear()
        for j in range(300):
            d[make(j)] = bytearray(b"%d" % j * 50)

t = threading.Thread(target=mutator)
t.start()
ok = errors = 0
end = time.monotonic() + {seconds}
try:
    while time.monotonic() < end:
        try:
            out = amber.loads(amber.dumps(d, identity={identity}))
        except amber.EncodeError as e:
            assert e.kind == "mutated" and "changed" in str(e), e
            errors += 1
        else:
            for k, v in out.items():
                assert v.rstrip(b"0123456789") == b"", v[:20]
            ok += 1
finally:
    stop = True
    t.join()
print(ok, errors)
"""

KEY_MAKERS = {
    "Fraction": "lambda j: fractions.Fraction(j, 7)",
    "UUID": "lambda j: uuid.UUID(int=j)",
    "tuple-of-Fraction": "lambda j: (j, fractions.Fraction(j, 7))",
}


@pytest.mark.parametrize("identity", MODES)
@pytest.mark.parametrize("key", sorted(KEY_MAKERS))
def test_another_thread_mutating_a_dict_during_dumps(key: str, identity: bool) -> None:
    """A bounded two-thread stress run in a child process, so a crash fails the test."""
    code = textwrap.dedent(STRESS).format(make=KEY_MAKERS[key], seconds=1.5, identity=identity)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    ok, errors = map(int, proc.stdout.split())
    assert ok + errors > 0


class Refill:
    """A value whose hook empties its dict and fills it again with as many other keys: the
    dict's new table is then laid out as the old one and often lands at the same address."""

    target: ClassVar[dict[str, Any]] = {}
    one_by_one = True


def _refill(obj: Refill) -> int:
    d = Refill.target
    n = len(d)
    d.clear()
    if Refill.one_by_one:
        for i in range(n):
            d[f"new{i}"] = 1000 + i
    else:
        d.update({f"new{i}": 1000 + i for i in range(n)})
    return 0


amber.register(Refill, name="test.mutation.Refill", encode=_refill, decode=lambda s: Refill())


@pytest.mark.parametrize("deterministic", MODES)
@pytest.mark.parametrize("identity", MODES)
@pytest.mark.parametrize("shaped", MODES)
@pytest.mark.parametrize("one_by_one", MODES)
@pytest.mark.parametrize("at", [0, 4, 9])
def test_dict_refilled_by_a_hook_never_pairs_a_key_with_another_keys_value(
    at: int, one_by_one: bool, shaped: bool, identity: bool, deterministic: bool
) -> None:
    keys = [f"k{i}" for i in range(10)]
    Refill.one_by_one = one_by_one
    for _ in range(20):
        d: dict[str, Any] = {k: i for i, k in enumerate(keys)}
        d[keys[at]] = Refill()
        Refill.target = d
        # Two dicts with the same keys before it make its keys a shape, written as columns.
        value: Any = [dict.fromkeys(keys, 0), dict.fromkeys(keys, 0), d] if shaped else d
        try:
            data = amber.dumps(value, identity=identity, deterministic=deterministic)
        except amber.EncodeError as e:
            assert e.kind == "mutated" and CHANGED.search(str(e)), e
            continue
        finally:
            Refill.target = {}
        out = amber.loads(data)
        back = out[-1] if shaped else out
        for k, v in back.items():
            # Every pair written is one the dict really held: before the hook or after it.
            if isinstance(v, Refill):
                assert k == keys[at]
            elif k.startswith("new"):
                assert v == 1000 + int(k[3:]), (k, v)
            else:
                assert v == int(k[1:]), (k, v)
