"""The dask part's contenders: three ways a list of records can travel between Dask workers.

- `list`: a task returns a plain `list`; Dask sends it one item per frame
  (dask/distributed#6368);
- `pickle frame`: a `list` subclass registered with Dask to travel as one pickle (protocol 5)
  frame, the fix a user can write today with `dask_serialize`;
- `amber`: `amber.dask.Rows`, one amber frame.

All three run on one `LocalCluster` (two worker processes, one thread each) that the first
contender's setup starts and the last one's closes. A workload's parts are made once on the first
worker; each timed call copies them into new keys there (a shallow copy) and reads them by tasks
on the second worker (the `move` operation) or gathers them to the client (`gather`).
"""

from __future__ import annotations

import functools
import pickle
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from amber.bench.engine.contender import Contender, Trial
from amber.bench.engine.registry import Part, register_part
from amber.bench.parts.records import Shared, ten_key_records

DASK = register_part(
    Part(
        "dask",
        baseline="pickle frame",
        label="Ways a task's records travel in Dask",
        description="a plain list, a one-frame pickle list subclass and amber.dask.Rows",
    )
)


class PickleFrame(list[Any]):
    """A list that Dask moves as one pickle protocol 5 frame (registered below)."""

    __slots__ = ()


@functools.cache
def _register_pickle_frame() -> None:
    import importlib

    protocol: Any = importlib.import_module("distributed.protocol.serialize")

    def dumps(x: PickleFrame) -> tuple[dict[str, Any], list[bytes]]:
        return {}, [pickle.dumps(list(x), protocol=5)]

    def loads(header: dict[str, Any], frames: list[Any]) -> PickleFrame:
        return PickleFrame(pickle.loads(frames[0]))

    protocol.dask_serialize.register(PickleFrame)(dumps)
    protocol.dask_deserialize.register(PickleFrame)(loads)


def records(n: int, wrap: Callable[[list[dict[str, Any]]], Any]) -> Any:
    """`n` ten-key records, made on a worker and returned as `wrap` makes them."""
    return wrap(ten_key_records(n))


async def dask_setup(worker: Any) -> None:
    """As a worker preload: register `PickleFrame` with the worker's Dask."""
    _register_pickle_frame()


def describe(part: Any) -> tuple[str, int, Any]:
    return type(part).__name__, len(part), part[-1]


def _as_rows(items: list[dict[str, Any]]) -> Any:
    from amber.dask import Rows

    return Rows(items)


def _as_pickle_frame(items: list[dict[str, Any]]) -> Any:
    _register_pickle_frame()
    return PickleFrame(items)


def _as_list(items: list[dict[str, Any]]) -> Any:
    return items


@dataclass
class Cluster:
    client: Any
    first: str
    second: str


@contextmanager
def _open_cluster() -> Iterator[Cluster]:
    """A LocalCluster of two worker processes and its client."""
    import importlib

    dist: Any = importlib.import_module("distributed")  # untyped
    _register_pickle_frame()
    with (
        dist.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",
            preload=["amber.dask", "amber.bench.parts.dask.contenders"],
        ) as cluster,
        dist.Client(cluster) as client,
    ):
        first, second = sorted(client.scheduler_info()["workers"])
        yield Cluster(client, first, second)


# One cluster for every contender of a study.
_cluster = Shared(_open_cluster)


def again(part: Any) -> Any:
    """A new value holding the same records (a shallow copy), so each sample moves a new key."""
    return type(part)(part)


def way(name: str, wrap: Callable[[list[dict[str, Any]]], Any], note: str) -> Contender:
    """Operations "move" (each part, made on the first worker, read by a task on the second)
    and "gather" (each part gathered to the client). The parts are made once, untimed; each
    call copies them into new keys on the first worker (a shallow copy, a small task), so that
    every call moves them again."""

    def prepare(t: Trial) -> None:
        c: Cluster = t.session
        parts, size = t.value
        base = [
            c.client.submit(records, size, wrap, workers=[c.first], pure=False)
            for _ in range(parts)
        ]
        c.client.gather(describe_all(c, base))
        t.cleanup.callback(c.client.cancel, base)

        def fresh() -> list[Any]:
            return [c.client.submit(again, b, workers=[c.first], pure=False) for b in base]

        def move(_: object) -> list[Any]:
            read = [c.client.submit(describe, f, workers=[c.second], pure=False) for f in fresh()]
            return list(c.client.gather(read))

        def gather(_: object) -> list[Any]:
            return list(c.client.gather(fresh()))

        kind = type(wrap([])).__name__
        want = records(size, _as_list)
        seen = t.run("move", move, None)
        t.expect(seen == [(kind, size, want[-1])] * parts, "moved parts differ")
        got = t.run("gather", gather, None)
        t.expect(
            all(type(g).__name__ == kind and list(g) == want for g in got),
            "gathered parts differ",
        )

    return Contender(name, prepare, setup=_cluster, package="distributed", note=note)


def describe_all(c: Cluster, futures: list[Any]) -> list[Any]:
    return [c.client.submit(describe, f, workers=[c.first], pure=False) for f in futures]


@DASK.contender("list")
def _plain() -> Contender:
    import distributed  # noqa: F401

    return way("list", _as_list, "Dask's default: one frame per item")


@DASK.contender("pickle frame")
def _pickle_frame() -> Contender:
    import distributed  # noqa: F401

    return way("pickle frame", _as_pickle_frame, "list subclass, one pickle-5 frame")


@DASK.contender("amber")
def _amber() -> Contender:
    import amber.dask  # noqa: F401

    return way("amber", _as_rows, "amber.dask.Rows, one amber frame")
