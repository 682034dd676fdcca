"""One package per part of amber; importing it registers the part, its contenders and its studies.

The engine imports every package here the first time a registry is read (see
`amber.bench.engine.registry`), so a new part is one new package and no other file changes.
"""
