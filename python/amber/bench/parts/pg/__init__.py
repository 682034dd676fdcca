"""The pg part: amber.pg against the PostgreSQL drivers users pick today, by client CPU time.

`contenders` registers the part and the third-party drivers (psycopg 3 with binary formats is the
baseline), `amber_pg` amber's own contenders, `jobs` what a contender does per workload kind and
how each is checked, `workloads` the rows, the 27-column query and the objects in bytea, `server` the
throwaway PostgreSQL a study runs against, `measure` the client-CPU clock, and `study` the "pg"
and "bytea" studies.
"""

from amber.bench.parts.pg import amber_pg, contenders, study

__all__ = ["amber_pg", "contenders", "study"]
