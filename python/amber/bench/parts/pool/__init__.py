"""The pool part: how a task's records come back from a process pool.

`contenders` registers the part and its three ways (the pool's own pickle of a plain `list`, the
task's own pickle protocol 5 bytes, `amber.Packed`) on one shared `ProcessPoolExecutor`; `study`
times getting parts back.
"""

from amber.bench.parts.pool import contenders, study

__all__ = ["contenders", "study"]
