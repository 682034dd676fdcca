"""Batch binary COPY in and out, and binary fetches, with the per-value work in Rust.

Everything runs on the caller's psycopg 3 connection and inside its transaction. Writes go
through `cursor.copy()` in chunks of a few MiB. Reads drain the connection's libpq from Rust
when amber can bind the very libpq psycopg uses (see `_libpq`), and otherwise read through
psycopg's own API with the same results.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, cast

import psycopg
from psycopg import errors as pg_errors
from psycopg import pq, sql

from amber import _native
from amber.pg import _arrow
from amber.pg._adapt import BYTEA_OID, AmberLoader

if TYPE_CHECKING:
    from psycopg.abc import Query
    from psycopg.adapt import Dumper

Into = Literal["rows", "columns", "arrow", "pandas", "polars"]
TableName = str | Sequence[str] | sql.Identifier

#: Bytes of COPY data encoded before each write to the connection. Small enough to stay in
#: the CPU's cache while libpq copies it and the kernel sends it: loading 1M rows took about
#: 10% less client CPU with 64-128 KiB than with 4 MiB.
CHUNK_BYTES = 128 << 10
#: Rows of columnar input converted at a time (bounds the memory of conversions).
BATCH_ROWS = 1 << 20

_TEXT_OID = 25


# --- names and types -------------------------------------------------------------------------


def _table_identifier(table: TableName) -> sql.Identifier:
    """`"name"`, `"schema.name"` (split at the dot), a (schema, name) sequence, or an
    Identifier: always quoted, so a name can never inject SQL."""
    if isinstance(table, sql.Identifier):
        return table
    if isinstance(table, str):
        parts = table.split(".")
        if len(parts) > 3 or not all(parts):
            raise ValueError(f"table name {table!r}: pass a (schema, name) tuple for dotted names")
        return sql.Identifier(*parts)
    parts = list(table)
    if not parts or not all(isinstance(p, str) and p for p in parts):
        raise ValueError(f"table name {table!r} is not a sequence of names")
    return sql.Identifier(*parts)


_COLUMNS_QUERY = """
WITH RECURSIVE cols AS (
    SELECT a.attnum, a.attname::text AS name, a.atttypid AS oid, a.atttypid AS declared
    FROM pg_catalog.pg_attribute a
    WHERE a.attrelid = %s::regclass AND a.attnum > 0 AND NOT a.attisdropped
      AND a.attgenerated = ''
), base AS (
    SELECT c.attnum, c.name, c.declared, t.oid, t.typtype, t.typbasetype
    FROM cols c JOIN pg_catalog.pg_type t ON t.oid = c.oid
    UNION ALL
    SELECT b.attnum, b.name, b.declared, t.oid, t.typtype, t.typbasetype
    FROM base b JOIN pg_catalog.pg_type t ON t.oid = b.typbasetype
    WHERE b.typtype = 'd'
)
SELECT b.name, b.oid, b.typtype, format_type(b.declared, NULL)
FROM base b WHERE b.typtype <> 'd' ORDER BY b.attnum
"""


def _table_columns(
    conn: psycopg.Connection[Any], table: sql.Identifier
) -> dict[str, tuple[int, str]]:
    """The table's insertable columns in order: name -> (OID of the type COPY reads for it, the
    declared type's name). Domains are read as their base type and enums as text, as the
    server's binary input does."""
    with conn.cursor(binary=False) as cur:
        cur.execute(_COLUMNS_QUERY, (table.as_string(conn),))
        rows = cur.fetchall()
    return {
        name: (_TEXT_OID if typtype == "e" else oid, declared)
        for name, oid, typtype, declared in rows
    }


def _dumper(conn: psycopg.Connection[Any], oid: int) -> Any:
    try:
        cls = conn.adapters.get_dumper_by_oid(oid, pq.Format.BINARY)
    except psycopg.ProgrammingError:
        return None
    return cls(object, conn)


def _loader(conn: psycopg.Connection[Any], oid: int) -> Any:
    cls = conn.adapters.get_loader(oid, pq.Format.BINARY)
    if cls is None:
        return bytes
    return cls(oid, conn).load


def _write_specs(
    conn: psycopg.Connection[Any], columns: Mapping[str, tuple[int, str]], names: Sequence[str]
) -> list[tuple[int, Any]]:
    specs: list[tuple[int, Any]] = []
    for name in names:
        oid, declared = columns[name]
        if _native.pg_type(oid) is not None:
            specs.append((oid, None))
            continue
        dumper = _dumper(conn, oid)
        if dumper is None:
            raise _native.EncodeError(
                f"column {name!r} has type {declared}, which neither amber nor psycopg can write in "
                "binary: cast it in SQL or register a psycopg binary dumper for it"
            )
        specs.append((oid, dumper))
    return specs


def _read_specs(
    conn: psycopg.Connection[Any], oids: Sequence[int], amber: bool | None = None
) -> list[tuple[int, Any]]:
    """How to read each column: natively (None), by psycopg's loader, or, for `bytea`, as amber
    frames: when `amber` says so, or (`amber=None`) when `register` put amber's loader on
    `conn`, so these reads give what the connection's cursors give."""
    if amber is None:
        amber = issubclass(
            conn.adapters.get_loader(BYTEA_OID, pq.Format.BINARY) or bytes, AmberLoader
        )
    specs: list[tuple[int, Any]] = []
    for oid in oids:
        if oid == BYTEA_OID and amber:
            specs.append((oid, "amber"))
        elif _native.pg_type(oid) is not None:
            specs.append((oid, None))
        else:
            specs.append((oid, _loader(conn, oid)))
    return specs


# --- libpq -----------------------------------------------------------------------------------


def _mapped_libpqs() -> list[str]:
    try:
        with open("/proc/self/maps") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    found: list[str] = []
    for line in lines:
        parts = line.split(maxsplit=5)
        if len(parts) == 6:
            path = parts[5]
            name = os.path.basename(path)
            if name.startswith("libpq") and ".so" in name and path not in found:
                found.append(path)
    return found


@functools.cache
def _libpq() -> bool:
    """Bind the libpq psycopg uses, for reads without a Python call per row. Only a library
    already loaded is bound (never a second copy), and only when it is psycopg's: the one in
    psycopg's wheel, or the only libpq in the process, of the version psycopg reports.
    `AMBER_PG_LIBPQ=0` turns this off."""
    if os.environ.get("AMBER_PG_LIBPQ", "1") == "0":
        return False
    mapped = _mapped_libpqs()
    impl = getattr(pq, "__impl__", "")
    if impl == "binary":
        import psycopg_binary

        libs = os.path.join(
            os.path.dirname(os.path.dirname(psycopg_binary.__file__)), "psycopg_binary.libs"
        )
        mapped = [p for p in mapped if os.path.dirname(p) == libs]
    elif impl == "python":
        from psycopg.pq import _pq_ctypes

        name = os.path.basename(getattr(getattr(_pq_ctypes, "pq", None), "_name", "") or "")
        mapped = [
            p for p in mapped if os.path.basename(p) == name or os.path.realpath(p).endswith(name)
        ]
    else:
        mapped = [p for p in mapped if ".libs" not in os.path.dirname(p)]
    if len(mapped) != 1:
        return False
    return _native.pg_bind_libpq(mapped[0])


def _raise_server(failure: tuple[str, str]) -> None:
    sqlstate, message = failure
    if not sqlstate:
        raise psycopg.OperationalError(message or "the connection failed during COPY")
    cls = pg_errors.lookup(sqlstate)
    raise cls(message)


# --- atomicity -------------------------------------------------------------------------------


@contextlib.contextmanager
def _atomic(conn: psycopg.Connection[Any]) -> Iterator[None]:
    """Inside a transaction, a failure rolls back to a savepoint: nothing of the COPY stays
    and the caller's transaction goes on. In autocommit mode the COPY is its own transaction."""
    if conn.autocommit:
        yield
        return
    with conn.cursor() as cur:
        cur.execute("SAVEPOINT amber_copy")
    try:
        yield
    except BaseException:
        if not conn.closed and not conn.broken:
            with contextlib.suppress(psycopg.Error), conn.cursor() as cur:
                cur.execute("ROLLBACK TO SAVEPOINT amber_copy")
                cur.execute("RELEASE SAVEPOINT amber_copy")
        raise
    with conn.cursor() as cur:
        cur.execute("RELEASE SAVEPOINT amber_copy")


# --- COPY in ---------------------------------------------------------------------------------


def copy_in(
    conn: psycopg.Connection[Any],
    table: TableName,
    data: Any,
    columns: Sequence[str] | None = None,
) -> int:
    """Load `data` into `table` with one binary COPY, encoded in Rust; return the rows written.

    `data` is an iterable of rows (tuples or lists), a pandas or polars DataFrame, a pyarrow
    Table or RecordBatch, or a dict of columns (lists, NumPy or pyarrow arrays). `columns` names
    the table's columns the values go to, in order; by default every column of the table for
    rows, and the frame's or dict's own column names for columnar data. Column types are read
    from the table. A value that does not fit its column raises `amber.EncodeError` naming the
    row, the column and the value, and nothing of the COPY is kept: inside a transaction it is
    rolled back to a savepoint, so the transaction goes on.
    """
    ident = _table_identifier(table)
    frame = _arrow.columnar(data)
    if columns is None and frame is not None:
        columns = frame.names
    table_cols = _table_columns(conn, ident)
    if not table_cols:
        raise ValueError(f"table {ident.as_string(conn)} has no columns to COPY into")
    names = list(table_cols) if columns is None else list(columns)
    missing = [n for n in names if n not in table_cols]
    if missing:
        raise ValueError(f"table {ident.as_string(conn)} has no column {missing[0]!r}")
    oids = [table_cols[n][0] for n in names]
    writer = _native.PgCopyWriter(_write_specs(conn, table_cols, names), names)
    stmt = sql.SQL("COPY {} ({}) FROM STDIN (FORMAT BINARY)").format(
        ident, sql.SQL(", ").join(sql.Identifier(n) for n in names)
    )
    with _atomic(conn), conn.cursor() as cur, cur.copy(stmt) as copy:
        if frame is None:
            rows = iter(data)
            while chunk := writer.write_rows(rows, CHUNK_BYTES):
                copy.write(chunk)
        else:
            if frame.names != names:
                frame = frame.select(names)
            for batch in frame.batches(oids, BATCH_ROWS):
                start, n = 0, batch.length
                while start < n:
                    chunk, start = writer.write_columns(batch.sources, start, CHUNK_BYTES)
                    copy.write(chunk)
        copy.write(writer.finish())
    return writer.rows


# --- reads -----------------------------------------------------------------------------------


def _check_into(into: str) -> Literal["rows", "arrow", "numpy"]:
    """The reader's mode for `into`."""
    if into == "rows":
        return "rows"
    if into in ("columns", "pandas"):
        return "numpy"
    if into in ("arrow", "polars"):
        return "arrow"
    raise ValueError(f"into must be 'rows', 'columns', 'arrow', 'pandas' or 'polars', not {into!r}")


def _query_text(conn: psycopg.Connection[Any], query: Query) -> str:
    text = (
        query
        if isinstance(query, str)
        else query.as_string(conn)
        if isinstance(query, sql.Composable)
        else None
    )
    if text is None:
        text = bytes(query).decode(conn.info.encoding)  # type: ignore[arg-type]
    return text.strip().rstrip(";").rstrip()


def _describe(conn: psycopg.Connection[Any], text: str) -> tuple[list[str], list[int]]:
    """Column names and type OIDs of a query, from the server's description of it (the query
    is prepared as the unnamed statement, never run)."""
    encoding = conn.info.encoding
    with conn.lock:
        pgconn = conn.pgconn
        res = pgconn.prepare(b"", text.encode(encoding))
        if res.status != pq.ExecStatus.COMMAND_OK:
            raise pg_errors.error_from_result(res, encoding=encoding)
        res = pgconn.describe_prepared(b"")
        if res.status != pq.ExecStatus.COMMAND_OK:
            raise pg_errors.error_from_result(res, encoding=encoding)
    return _fields(res, encoding)


def _fields(res: pq.abc.PGresult, encoding: str) -> tuple[list[str], list[int]]:
    """Column names and type OIDs of a result or a statement's description."""
    n = res.nfields
    names = [(res.fname(i) or b"").decode(encoding) for i in range(n)]
    return names, [res.ftype(i) for i in range(n)]


def copy_out(conn: psycopg.Connection[Any], query: Query, into: Into = "rows") -> Any:
    """Run `COPY (query) TO STDOUT (FORMAT BINARY)` and parse the stream in Rust.

    `into`: "rows" (a list of tuples), "columns" (a dict of NumPy arrays: numbers, bools, dates,
    timestamps and intervals as typed arrays, masked where NULL, other types as object arrays),
    "arrow" (a pyarrow Table), "pandas" or "polars" (a DataFrame). The query is a SELECT,
    VALUES or TABLE statement, or a DML statement with RETURNING.
    """
    mode = _check_into(into)
    text = _query_text(conn, query)
    names, oids = _describe(conn, text)
    reader = _native.PgReader(_read_specs(conn, oids), names, mode)
    stmt = sql.SQL("COPY ({}) TO STDOUT (FORMAT BINARY)").format(sql.SQL(cast(Any, text)))
    with conn.cursor() as cur, cur.copy(stmt) as copy:
        if _libpq():
            failure = reader.drain(cast(Any, conn.pgconn).pgconn_ptr)
            if failure is not None:
                _raise_server(failure)
        else:
            for data in copy:
                reader.feed(data)
    result = reader.finish(True)
    del reader  # released here, on this thread, whatever shaping the result raises
    return _arrow.shape(result, names, oids, into)


def fetch(
    conn: psycopg.Connection[Any],
    query: Query,
    params: Sequence[Any] | Mapping[str, Any] | None = None,
    into: Into = "rows",
) -> Any:
    """Run a query with binary parameters and a binary result, decoded in Rust.

    `params` are psycopg's (`%s` or `%(name)s` placeholders). `into` as for `copy_out`. Types
    amber does not know are loaded by psycopg's loaders for them.
    """
    return _fetch(conn, query, params, into, None)


def _fetch(
    conn: psycopg.Connection[Any],
    query: Query,
    params: Sequence[Any] | Mapping[str, Any] | None,
    into: Into,
    amber: bool | None,
    dumpers: Mapping[type, type[Dumper]] | None = None,
) -> Any:
    """`fetch`, with `bytea` read as amber frames when `amber` is true (see `_read_specs`),
    and `dumpers` registered on its own cursor for the parameters."""
    mode = _check_into(into)
    with conn.cursor(binary=True) as cur:
        for cls, dumper in (dumpers or {}).items():
            cur.adapters.register_dumper(cls, dumper)
        cur.execute(cast(Any, query), params)
        res = cur.pgresult
        if res is None or res.status != pq.ExecStatus.TUPLES_OK:
            raise psycopg.ProgrammingError("the query returned no result to fetch")
        names, oids = _fields(res, conn.info.encoding)
        reader = _native.PgReader(_read_specs(conn, oids, amber), names, mode)
        if _libpq():
            reader.read_result(cast(Any, res).pgresult_ptr)
        else:
            for r in range(res.ntuples):
                reader.add_row([res.get_value(r, c) for c in range(res.nfields)])
        result = reader.finish(False)
        del reader  # released here, on this thread, whatever shaping the result raises
    return _arrow.shape(result, names, oids, into)
