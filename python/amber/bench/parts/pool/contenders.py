"""The pool part's contenders: three ways a process pool's task can return a list of records.

- `list`: the task returns the list; the pool pickles it (the baseline);
- `pickle bytes`: the task returns `pickle.dumps(records, protocol=5)` and the caller loads it;
- `amber`: the task returns `amber.Packed(records)`; unpickling it gives the list.

All run on one `ProcessPoolExecutor` of two processes that the first contender's setup starts and
the last one's closes. Each worker process makes the records once (cached), so a timed call is the
return trip alone: the task's result made into bytes, carried over the pool's pipe, and rebuilt.
"""

from __future__ import annotations

import concurrent.futures
import functools
import pickle
from collections.abc import Callable
from typing import Any

from amber.bench.engine.contender import Contender, Trial
from amber.bench.engine.registry import Part, register_part
from amber.bench.parts.records import Shared, ten_key_records

POOL = register_part(
    Part(
        "pool",
        baseline="list",
        label="Ways a pool task's records come back",
        description="a plain list, pickle protocol 5 bytes and amber.Packed",
    )
)


@functools.cache
def _records(n: int) -> list[dict[str, Any]]:
    return ten_key_records(n)


def as_list(n: int) -> Any:
    return _records(n)


def as_pickle_bytes(n: int) -> Any:
    return pickle.dumps(_records(n), protocol=5)


def as_packed(n: int) -> Any:
    from amber import Packed

    return Packed(_records(n))


def _keep(x: Any) -> Any:
    return x


# One pool of two processes for every contender of a study.
_pool = Shared(lambda: concurrent.futures.ProcessPoolExecutor(2))


def way(name: str, task: Callable[[int], Any], load: Callable[[Any], Any], note: str) -> Contender:
    """Operation "return": `parts` tasks' records back in the caller, rebuilt."""

    def prepare(t: Trial) -> None:
        pool: concurrent.futures.ProcessPoolExecutor = t.session
        parts, size = t.value

        def back(_: object) -> list[Any]:
            return [load(r) for r in pool.map(task, [size] * parts)]

        got = t.run("return", back, None)
        want = _records(size)
        t.expect(all(type(g) is list and g == want for g in got), "returned records differ")

    return Contender(name, prepare, setup=_pool, note=note)


@POOL.contender("list")
def _plain() -> Contender:
    return way("list", as_list, _keep, "the pool pickles the list")


@POOL.contender("pickle bytes")
def _pickled() -> Contender:
    return way(
        "pickle bytes", as_pickle_bytes, pickle.loads, "pickle.dumps(protocol=5) in the task"
    )


@POOL.contender("amber")
def _amber() -> Contender:
    return way("amber", as_packed, _keep, "amber.Packed(records)")
