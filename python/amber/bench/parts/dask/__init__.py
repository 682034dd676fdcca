"""The dask part: how a task's list of records travels between Dask workers.

`contenders` registers the part and its three ways (Dask's default for a plain `list`, a list
subclass that travels as one pickle frame, `amber.dask.Rows`) on one shared `LocalCluster` with
worker processes; `study` times moving parts between workers and gathering them.
"""

from amber.bench.parts.dask import contenders, study

__all__ = ["contenders", "study"]
