"""The benchmark engine, which knows no part of amber: contenders and workloads
(`contender`), the check-then-time loop (`measure`, `timing`, `exact`), the registries of parts
and studies (`registry`, `study`), and what a run writes (`rows`, `tables`, `plots`, `output`).

Each part of amber brings its own contenders, workloads and studies in a package under
`amber.bench.parts`.
"""
