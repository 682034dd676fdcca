"""The pg part's workloads, every value built by a seeded generator.

- **load** and **read**: N rows of `(int8, float8, text, timestamptz, bytea)` as Python tuples
  (`table_rows`); the load workload also offers them as a pandas DataFrame, a pyarrow Table and a
  ready COPY BINARY stream (`LoadInput`), each built the first time a contender asks for it;
- **query**: a 27-column query of 1,000 rows, 27 parameters (for r in 1..9: r, 0.4*r, 'αβγ' + str(r)) selected from
  `generate_series(1, 1000)`, executed and fetched R times;
- **bytea**: objects shaped as the codec part's W3 (a dict of `{id, value, name}` dicts, a table
  kept in one column), pickled or amber-encoded into a `bytea` column, one object per row.

The order of the random draws is part of the definition, as for the codec's workloads.
"""

from __future__ import annotations

import functools
import random
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from amber.bench.engine.contender import Workload
from amber.bench.parts.codec.workloads import W3_SEED, size_label, w3_table

# Job kinds: what a workload asks a contender to do (`Workload.kinds`); a contender's `kinds`
# are the jobs it offers.
LOAD = "load"
READ = "read"
QUERY = "query"
BYTEA = "bytea"

ROWS_SEED = 5
ROWS = {"full": 1_000_000, "quick": 100_000, "tiny": 1_000}
QUERY_RUNS = {"full": 1_000, "quick": 100, "tiny": 3}
QUERY_ROWS = 1_000

# The table both COPY workloads use: loads go to an unlogged table truncated before every sample,
# reads come from a table filled once.
COLUMNS = ("id", "x", "name", "at", "data")
PG_TYPES = ("int8", "float8", "text", "timestamptz", "bytea")
LOAD_TABLE = "bench_load"
READ_TABLE = "bench_read"
READ_QUERY = f"SELECT * FROM {READ_TABLE}"

_EPOCH = datetime(2000, 1, 1, tzinfo=timezone.utc)  # PostgreSQL's timestamp epoch
_WORDS = ("alpha", "beta", "gamma", "delta", "αβγ", "naïve", "tab\there", "back\\slash")

Row = tuple[int, float, str, datetime, bytes]


def table_rows(n: int, seed: int = ROWS_SEED) -> list[Row]:
    """`n` rows: a serial id, a float in [-500, 500), a short text (some non-ASCII, a few with a
    tab or a backslash that text COPY must escape), a UTC timestamp between 2000 and 2035 to the
    microsecond, and 0 to 63 random bytes."""
    rng = random.Random(seed)
    span = 35 * 365 * 86_400 * 1_000_000
    out: list[Row] = []
    for i in range(n):
        out.append(
            (
                i,
                rng.random() * 1000 - 500,
                f"{_WORDS[rng.randrange(len(_WORDS))]}-{i}",
                _EPOCH + timedelta(microseconds=rng.randrange(span)),
                rng.randbytes(rng.randrange(64)),
            )
        )
    return out


@functools.lru_cache(maxsize=1)
def shared_rows(n: int) -> list[Row]:
    """`table_rows(n)`, built once for the load and the read workloads of a run."""
    return table_rows(n)


def copy_binary(rows: Sequence[Row]) -> bytes:
    """The COPY BINARY stream of `rows` for the table's five columns: the signature, flags and
    header extension, per row a field count and each field's length and send bytes, the trailer."""
    head = struct.Struct(">hiqi")  # field count, then int8's length and value, then float8's length
    i32 = struct.Struct(">i")
    at = struct.Struct(">iq")
    parts = [b"PGCOPY\n\xff\r\n\x00", struct.pack(">ii", 0, 0)]
    for i, x, name, when, data in rows:
        text = name.encode()
        delta = when - _EPOCH
        micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
        parts += [
            head.pack(5, 8, i, 8),
            struct.pack(">d", x),
            i32.pack(len(text)),
            text,
            at.pack(8, micros),
            i32.pack(len(data)),
            data,
        ]
    parts.append(struct.pack(">h", -1))
    return b"".join(parts)


class LoadInput:
    """The rows to load, and the same rows in the other forms a contender may start from."""

    def __init__(self, rows: list[Row]) -> None:
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows)

    @functools.cached_property
    def columns(self) -> dict[str, list[Any]]:
        return {
            name: list(col) for name, col in zip(COLUMNS, zip(*self.rows, strict=True), strict=True)
        }

    @functools.cached_property
    def arrow(self) -> Any:
        """A pyarrow Table: int64, float64, string, timestamp[us, UTC], binary."""
        import pyarrow as pa

        types = (pa.int64(), pa.float64(), pa.string(), pa.timestamp("us", tz="UTC"), pa.binary())
        cols = self.columns
        return pa.table(
            {name: pa.array(cols[name], type=t) for name, t in zip(COLUMNS, types, strict=True)}
        )

    @functools.cached_property
    def frame(self) -> Any:
        """A pandas DataFrame as a pandas user builds one from the rows: int64, float64, the
        default string dtype, datetime64[us, UTC], and object (bytes)."""
        import pandas as pd

        cols = self.columns
        return pd.DataFrame(
            {
                "id": pd.Series(cols["id"], dtype="int64"),
                "x": pd.Series(cols["x"], dtype="float64"),
                "name": pd.Series(cols["name"]),
                "at": pd.to_datetime(pd.Series(cols["at"]), utc=True).astype("datetime64[us, UTC]"),
                "data": pd.Series(cols["data"], dtype="object"),
            }
        )

    @functools.cached_property
    def stream(self) -> bytes:
        return copy_binary(self.rows)


def load_workload(mode: str) -> Workload:
    n = ROWS[mode]
    return Workload(
        f"load-{size_label(n)}",
        f"load {n:,} rows (int8, float8, text, timestamptz, bytea) into an unlogged table, "
        "truncated before every sample",
        lambda: LoadInput(shared_rows(n)),
        kinds=frozenset({LOAD}),
        size=n,
    )


def read_workload(mode: str) -> Workload:
    n = ROWS[mode]
    return Workload(
        f"read-{size_label(n)}",
        f"read the same {n:,} rows back: `{READ_QUERY}`",
        lambda: shared_rows(n),
        kinds=frozenset({READ}),
        size=n,
    )


# --- the 27-column query ------------------------------------------------------------------------------------


def query_params() -> list[int | float | str]:
    """The query's parameters: for r in 1..9, r, 0.4 * r and 'αβγ' + str(r): 27 values."""
    out: list[int | float | str] = []
    for r in range(1, 10):
        out.extend([r, 0.4 * r, "αβγ" + str(r)])
    return out


def query_sql(placeholder: str = "%s") -> str:
    """`SELECT %s, ... FROM generate_series(1,1000)`; `placeholder` may hold `{n}` (1-based) and
    `{t}` (the parameter's type), for drivers that number and type their parameters."""
    types = ("int", "float8", "text") * 9
    marks = [placeholder.format(n=n, t=t) for n, t in enumerate(types, 1)]
    return f"SELECT {', '.join(marks)} FROM generate_series(1,{QUERY_ROWS})"


@dataclass(frozen=True)
class QueryInput:
    params: list[int | float | str]
    runs: int

    @property
    def expected(self) -> list[tuple[Any, ...]]:
        return [tuple(self.params)] * QUERY_ROWS


def query_workload(mode: str) -> Workload:
    runs = QUERY_RUNS[mode]
    return Workload(
        f"query-27col-x{runs}",
        f"a 27-column query of {QUERY_ROWS:,} rows: 27 parameters (for r in 1..9: r, 0.4*r, "
        f"'αβγ'+str(r)) selected from generate_series(1,{QUERY_ROWS}), run and fetched {runs:,} times",
        lambda: QueryInput(query_params(), runs),
        kinds=frozenset({QUERY}),
        size=runs * QUERY_ROWS,
    )


# --- objects in bytea ------------------------------------------------------------------------------------

BYTEA_ENTRIES = {"full": (1, 10, 100, 1_000), "quick": (1, 10, 100), "tiny": (1, 10)}
BYTEA_OBJECTS = {"full": 10_000, "quick": 10_000, "tiny": 100}
# Fewer objects when objects x entries would pass this: the largest objects stay affordable.
BYTEA_ENTRIES_MAX = {"full": 1_000_000, "quick": 100_000, "tiny": 1_000}


def bytea_objects(count: int, entries: int) -> list[dict[str, dict[str, Any]]]:
    """`count` W3 tables of `entries` entries each, object i drawn from seed W3_SEED + i."""
    return [w3_table(entries, seed=W3_SEED + i) for i in range(count)]


def bytea_workload(mode: str, entries: int) -> Workload:
    count = min(BYTEA_OBJECTS[mode], max(1, BYTEA_ENTRIES_MAX[mode] // entries))
    return Workload(
        f"bytea-{size_label(entries)}",
        f"{count:,} objects of {entries:,} {{id, value, name}} entries (W3-shaped), one per "
        "bytea row: fetch all + decode",
        lambda: bytea_objects(count, entries),
        kinds=frozenset({BYTEA}),
        size=count,
        options={"entries": entries},
    )
