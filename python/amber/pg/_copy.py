"""Batch binary COPY in and out, and binary fetches, with the per-value work in Rust.

Everything runs on the caller's psycopg 3 connection and inside its transaction. Writes go
through `cursor.copy()` in chunks of a few MiB. Reads drain the connection's libpq from Rust
when amber can bind the very libpq psycopg uses (see `_libpq`), and otherwise read through
psycopg's own API with the same results.
"""

from __future__ import annotations

import contextlib
import enum
import functools
import json
import os
from collections.abc import Coroutine, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, cast, overload

import psycopg
from psycopg import errors as pg_errors
from psycopg import generators, pq, sql
from psycopg.adapt import PyFormat

from amber import _native
from amber.pg import _arrow
from amber.pg._adapt import BYTEA_OID, AmberLoader

if TYPE_CHECKING:
    import numpy.typing as npt
    import pandas as pd
    import polars as pl
    import pyarrow as pa
    from psycopg.abc import PQGen, Query
    from psycopg.adapt import Dumper

Into = Literal["rows", "columns", "arrow", "pandas", "polars"]
# A query's parameters, as psycopg takes them.
Params = Sequence[Any] | Mapping[str, Any] | None
TableName = str | Sequence[str] | sql.Identifier

#: Bytes of COPY data encoded before each write to the connection. Small enough to stay in
#: the CPU's cache while libpq copies it and the kernel sends it: loading 1M rows took about
#: 10% less client CPU with 64-128 KiB than with 4 MiB.
CHUNK_BYTES = 128 << 10
#: Rows of columnar input converted at a time (bounds the memory of conversions).
BATCH_ROWS = 1 << 20

_TEXT_OID = 25
_BYTEA_ARRAY_OID = 1001


# --- names and types -------------------------------------------------------------------------


def _table_identifier(table: TableName) -> sql.Identifier:
    """The table named by `table`: a str is one name, dots and all (as PostgreSQL reads
    `"my.t"`); a (schema, name) tuple (or (database, schema, name)) or a psycopg
    `sql.Identifier` names a table in a schema. Always quoted, so no name can inject SQL; a
    name with NUL (which PostgreSQL cannot hold) is refused."""
    if isinstance(table, sql.Identifier):
        return table
    parts: tuple[object, ...]
    if isinstance(table, str):
        parts = (table,)
    elif isinstance(table, (tuple, list)):
        parts = tuple(table)
    else:
        parts = ()
    if not 1 <= len(parts) <= 3 or not all(isinstance(p, str) and p for p in parts):
        raise ValueError(
            "a table is a name (str, dots included), a (schema, name) tuple or a psycopg "
            f"sql.Identifier, not {table!r}"
        )
    if any("\x00" in cast(str, p) for p in parts):
        raise ValueError(f"table name {table!r} holds a NUL character, which PostgreSQL refuses")
    return sql.Identifier(*cast(tuple[str, ...], parts))


def _table_text(conn: Any, table: sql.Identifier) -> str:
    """The quoted name as SQL text, for messages and to_regclass."""
    return table.as_string(conn)


#: The insertable columns of the table whose quoted name is the one parameter: (name, OID,
#: typtype, declared type) in order; a table that does not exist gives one row of NULLs (see
#: `_columns_from_rows`). to_regclass raises nothing, so a missing table is a message of
#: amber's, not the server's.
_COLUMNS_QUERY = """
WITH RECURSIVE rel AS (
    SELECT to_regclass(%s) AS oid
), cols AS (
    SELECT a.attnum, a.attname::text AS name, a.atttypid AS oid, a.atttypid AS declared
    FROM pg_catalog.pg_attribute a
    WHERE a.attrelid = (SELECT oid FROM rel) AND a.attnum > 0 AND NOT a.attisdropped
      AND a.attgenerated = ''
), base AS (
    SELECT c.attnum, c.name, c.declared, t.oid, t.typtype, t.typbasetype
    FROM cols c JOIN pg_catalog.pg_type t ON t.oid = c.oid
    UNION ALL
    SELECT b.attnum, b.name, b.declared, t.oid, t.typtype, t.typbasetype
    FROM base b JOIN pg_catalog.pg_type t ON t.oid = b.typbasetype
    WHERE b.typtype = 'd'
)
SELECT name, oid, typtype, declared FROM (
    SELECT b.attnum, b.name, b.oid, b.typtype::text AS typtype,
           format_type(b.declared, NULL) AS declared
    FROM base b WHERE b.typtype <> 'd'
    UNION ALL
    SELECT 0, NULL, NULL, NULL, NULL FROM rel WHERE rel.oid IS NULL
) c ORDER BY attnum
"""


#: A table column as copy_in writes it: (OID of the type COPY reads for it, the declared type's
#: name, the enum's OID for an enum column (written as text) or 0).
TableColumn = tuple[int, str, int]


def _columns_from_rows(
    rows: Sequence[Sequence[Any]], table: TableName, text: str
) -> dict[str, TableColumn]:
    """`_COLUMNS_QUERY`'s rows as name -> `TableColumn`; `text` is the quoted name. Domains are read as their base type and enums as
    text, as the server's binary input does. A missing table raises psycopg's UndefinedTable
    naming it."""
    if len(rows) == 1 and rows[0][0] is None:
        hint = (
            f"; {table!r} is one name: pass a (schema, name) tuple for a table in a schema"
            if isinstance(table, str) and "." in table
            else ""
        )
        raise pg_errors.UndefinedTable(f"table {text} does not exist{hint}")
    # On a SQL_ASCII connection psycopg reads text as bytes: names are UTF-8 there (as
    # psycopg writes a str).
    rows = [[v.decode() if isinstance(v, bytes) else v for v in row] for row in rows]
    return {
        name: (_TEXT_OID, declared, oid) if typtype == "e" else (oid, declared, 0)
        for name, oid, typtype, declared in rows
    }


def _table_columns(
    conn: psycopg.Connection[Any], table: sql.Identifier, given: TableName | None = None
) -> dict[str, TableColumn]:
    """The table's insertable columns in order (see `_columns_from_rows`); `given` is the
    name as the caller wrote it, for the message when there is no such table."""
    text = _table_text(conn, table)
    with conn.cursor(binary=False) as cur:
        cur.execute(_COLUMNS_QUERY, (text,))
        rows = cur.fetchall()
    return _columns_from_rows(rows, table if given is None else given, text)


def _dumper(conn: psycopg.Connection[Any], oid: int) -> Any:
    try:
        cls = conn.adapters.get_dumper_by_oid(oid, pq.Format.BINARY)
    except psycopg.ProgrammingError:
        return None
    return cls(type(None), conn)


def _loader(conn: psycopg.Connection[Any], oid: int) -> Any:
    cls = conn.adapters.get_loader(oid, pq.Format.BINARY)
    return None if cls is None else cls(oid, conn).load


def _column_place(name: str) -> str:
    """A column's `path`, whatever the row: `$[*].name`, or `$[*]["odd name"]`."""
    if name and all(c.isascii() and (c.isalnum() or c == "_") for c in name):
        return f"$[*].{name}"
    return f"$[*][{json.dumps(name)}]"


_VOID_OID = 2278


def _void(data: Any) -> None:
    return None


def _element_readable(conn: psycopg.Connection[Any], oid: int) -> bool:
    """False for an array whose elements neither amber nor psycopg reads (psycopg's array
    loader would hand them over as their send format)."""
    info = conn.adapters.types.get(oid)
    if info is None or info.array_oid != oid or info.oid == oid:
        return True
    return _native.pg_type(info.oid) is not None or _loader(conn, info.oid) is not None


def _unreadable(conn: psycopg.Connection[Any], name: str, oid: int) -> Exception:
    """The error for a result column of a type that neither amber nor psycopg reads."""
    info = conn.adapters.types.get(oid)
    ty = f"type {info.name}" if info is not None else f"a type (OID {oid})"
    err = _native.DecodeError(
        f"column {name!r} has {ty}, which neither amber nor psycopg can read in "
        "binary: cast it in SQL (to text, for instance) or register a psycopg binary loader "
        "for it"
    )
    err.kind = "unsupported"
    err.path = _column_place(name)
    err.offset = None
    return err


def _write_specs(
    conn: psycopg.Connection[Any], columns: Mapping[str, TableColumn], names: Sequence[str]
) -> list[tuple[int, Any]]:
    specs: list[tuple[int, Any]] = []
    for name in names:
        oid, declared, _ = columns[name]
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
    conn: psycopg.Connection[Any],
    oids: Sequence[int],
    amber: bool | None = None,
    names: Sequence[str] | None = None,
) -> list[tuple[int, Any]]:
    """How to read each column: natively (None), by psycopg's loader, or, for `bytea`, as amber
    frames: when `amber` says so, or (`amber=None`) when `register` put amber's loader on
    `conn`, so these reads give what the connection's cursors give. A type that neither amber
    nor psycopg reads is refused (`amber.DecodeError`, kind "unsupported", naming the column
    from `names`) rather than handed over as its binary send format."""
    if amber is None:
        amber = issubclass(
            conn.adapters.get_loader(BYTEA_OID, pq.Format.BINARY) or bytes, AmberLoader
        )
    specs: list[tuple[int, Any]] = []
    for i, oid in enumerate(oids):
        if oid in (BYTEA_OID, _BYTEA_ARRAY_OID) and amber:
            specs.append((oid, "amber"))
        elif _native.pg_type(oid) is not None:
            specs.append((oid, None))
        elif (load := _loader(conn, oid)) is not None and _element_readable(conn, oid):
            specs.append((oid, load))
        elif oid == _VOID_OID:  # what a function returning void gives: nothing
            specs.append((oid, _void))
        else:
            raise _unreadable(conn, names[i] if names is not None else f"#{i + 1}", oid)
    return specs


class _EnumLabels:
    """Members of Python enums written to enum columns (which COPY takes as text): each as the
    label psycopg's dumper for its class gives (`register_enum`'s mapping, the member's name
    by default, a `str` enum's value where psycopg dumps it as a str), so that copy_in writes
    what psycopg writes. Other values pass as they are: a `str` is a label."""

    def __init__(self, conn: Any, columns: Mapping[str, TableColumn], names: Sequence[str]) -> None:
        self.conn = conn
        #: (position, name, enum OID, declared type) of the enum columns written.
        self.enums = [
            (i, name, columns[name][2], columns[name][1])
            for i, name in enumerate(names)
            if columns[name][2]
        ]
        self._dumpers: dict[type, Any] = {}

    def label(self, v: Any, row: int, name: str, enum_oid: int, declared: str) -> Any:
        """`v` as the encoder writes it to the enum column `name`: a member as its label."""
        if not isinstance(v, enum.Enum):
            return v
        cls = type(v)
        dumper = self._dumpers.get(cls)
        if dumper is None:
            found = self.conn.adapters.get_dumper(cls, PyFormat.BINARY)
            dumper = self._dumpers[cls] = found(cls, self.conn)
        owner = getattr(dumper, "enum", None)
        if owner is not None and dumper.oid != enum_oid:
            info = self.conn.adapters.types.get(dumper.oid)
            raise _enum_error(
                row,
                name,
                f"{v!r} is a member of {cls.__qualname__}, registered with psycopg for "
                f"{info.name if info is not None else f'the type of OID {dumper.oid}'}, "
                f"not for {declared}",
            )
        raw = dumper.dump(v)
        try:
            return bytes(raw).decode(self.conn.info.encoding)
        except (TypeError, UnicodeDecodeError) as e:
            raise _enum_error(row, name, f"{v!r} has no label psycopg can write: {e}") from None

    def rows(self, rows: Iterator[Any]) -> Iterator[Any]:
        """The rows with members in enum columns as their labels (a row with none passes as it
        is, and so does one the encoder will refuse)."""
        for r, row in enumerate(rows):
            if isinstance(row, (tuple, list)) and any(
                i < len(row) and isinstance(row[i], enum.Enum) for i, *_ in self.enums
            ):
                row = list(row)
                for i, name, oid, declared in self.enums:
                    if i < len(row):
                        row[i] = self.label(row[i], r, name, oid, declared)
            yield row

    def frame(self, frame: _arrow.Columns) -> _arrow.Columns:
        """The frame with members in its object columns for enum columns as their labels."""
        cols = list(frame.cols)
        for i, name, oid, declared in self.enums:
            col = cols[i]
            if isinstance(col, _arrow.Objects) and any(
                isinstance(v, enum.Enum) for v in col.values
            ):
                values = [self.label(v, r, name, oid, declared) for r, v in enumerate(col.values)]
                cols[i] = _arrow.Objects(values, col.pandas)
        return _arrow.Columns(frame.names, cols, frame.length, frame.texts)


def _enum_error(row: int, name: str, detail: str) -> Exception:
    err = _native.EncodeError(f"row {row}, column {name!r}: {detail}")
    err.kind = "type_mismatch"
    err.path = _arrow._place(row, name)
    return err


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
    amber is then handed psycopg's own PGconn and PGresult objects (never an address) and
    reads their pointer itself, relying on the GIL to keep it live: an interpreter running
    without the GIL reads through psycopg. `AMBER_PG_LIBPQ=0` turns this off."""
    import sys

    if os.environ.get("AMBER_PG_LIBPQ", "1") == "0":
        return False
    if not getattr(sys, "_is_gil_enabled", lambda: True)():
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

        # ctypes loaded it by soname (libpq.so.5): the mapped file is what that name in the
        # file's own directory resolves to (libpq.so.5.15).
        name = os.path.basename(getattr(getattr(_pq_ctypes, "pq", None), "_name", "") or "")
        mapped = [
            p
            for p in mapped
            if name
            and os.path.realpath(os.path.join(os.path.dirname(p), name)) == os.path.realpath(p)
        ]
    else:
        mapped = [p for p in mapped if ".libs" not in os.path.dirname(p)]
    if len(mapped) != 1:
        return False
    return _native.pg_bind_libpq(mapped[0], pq.PGconn, pq.PGresult)


def _raise_server(failure: tuple[str, str]) -> None:
    sqlstate, message = failure
    if not sqlstate:
        raise psycopg.OperationalError(message or "the connection failed during COPY")
    cls = pg_errors.lookup(sqlstate)
    raise cls(message)


# --- atomicity -------------------------------------------------------------------------------


class _Plan(NamedTuple):
    """The statements around an operation of several steps: run `enter` first, `done` after
    success, `undo` (in order) after a failure."""

    enter: str
    done: str
    undo: tuple[str, ...]


_SAVEPOINT = _Plan(
    "SAVEPOINT amber_copy",
    "RELEASE SAVEPOINT amber_copy",
    ("ROLLBACK TO SAVEPOINT amber_copy", "RELEASE SAVEPOINT amber_copy"),
)
_OWN_TRANSACTION = _Plan("BEGIN", "COMMIT", ("ROLLBACK",))


def _atomic_plan(status: pq.TransactionStatus, autocommit: bool) -> _Plan:
    """What to wrap an operation of several statements in (a table lookup and a COPY, a
    describe and a COPY), given `conn.info.transaction_status` and `conn.autocommit`.

    In a transaction, however it began (a non-autocommit connection, which psycopg opens one
    on, or `with conn.transaction():` on an autocommit one), a savepoint: a failure rolls back
    to it and the caller's transaction goes on. On an idle autocommit connection, a
    transaction of its own, so that every step sees the same catalog (the locks taken by the
    first are held to the end) and a failure leaves nothing."""
    if autocommit and status == pq.TransactionStatus.IDLE:
        return _OWN_TRANSACTION
    return _SAVEPOINT


def _undo_applies(status: pq.TransactionStatus) -> bool:
    """Whether a failed operation's `undo` can run: the connection is still in the
    transaction the plan opened (a COMMIT that failed has already ended it)."""
    return status in (pq.TransactionStatus.INTRANS, pq.TransactionStatus.INERROR)


@contextlib.contextmanager
def _atomic(conn: psycopg.Connection[Any]) -> Iterator[None]:
    """Run the block as one unit (see `_atomic_plan`): nothing of it stays after a failure,
    and the caller's transaction, if any, carries on."""
    plan = _atomic_plan(conn.info.transaction_status, conn.autocommit)
    with conn.cursor() as cur:
        cur.execute(plan.enter)
    try:
        yield
    except BaseException:
        if not conn.closed and not conn.broken and _undo_applies(conn.info.transaction_status):
            with contextlib.suppress(psycopg.Error), conn.cursor() as cur:
                for stmt in plan.undo:
                    cur.execute(stmt)
        raise
    with conn.cursor() as cur:
        cur.execute(plan.done)


# --- COPY in ---------------------------------------------------------------------------------


@overload
def copy_in(
    conn: psycopg.AsyncConnection[Any],
    table: TableName,
    data: Iterable[Any],
    columns: Sequence[str] | None = None,
) -> Coroutine[Any, Any, int]: ...
@overload
def copy_in(
    conn: psycopg.Connection[Any],
    table: TableName,
    data: Iterable[Any],
    columns: Sequence[str] | None = None,
) -> int: ...
def copy_in(
    conn: psycopg.Connection[Any] | psycopg.AsyncConnection[Any],
    table: TableName,
    data: Iterable[Any],
    columns: Sequence[str] | None = None,
) -> int | Coroutine[Any, Any, int]:
    """Load `data` into `table` with one binary COPY, encoded in Rust; return the rows written.

    `data` is an iterable of rows (tuples or lists), a pandas or polars DataFrame, a pyarrow
    Table or RecordBatch, or a dict of columns (lists, NumPy or pyarrow arrays). `columns` names
    the table's columns the values go to, in order; by default every column of the table for
    rows, and the frame's or dict's own column names for columnar data. Column types are read
    from the table. A value that does not fit its column raises `amber.EncodeError` naming the
    row, the column and the value, and nothing of the COPY is kept: inside a transaction it is
    rolled back to a savepoint, so the transaction goes on. On a psycopg `AsyncConnection` it
    returns a coroutine doing the same (`await copy_in(aconn, ...)`).
    """
    if isinstance(conn, psycopg.AsyncConnection):
        from amber.pg import _async

        return _async.copy_in(conn, table, data, columns)
    ident = _table_identifier(table)
    frame = _columnar(data)
    # The lookup runs inside the same savepoint (or transaction) as the COPY: a missing table
    # or column leaves the caller's transaction as it was.
    with _atomic(conn):
        load = _Load(conn, ident, _table_columns(conn, ident, table), columns, data, frame)
        with conn.cursor() as cur, cur.copy(load.statement) as copy:
            for chunk in load.chunks():
                copy.write(chunk)
    return load.rows


def _columnar(data: Any) -> _arrow.Columns | None:
    """`data` as named columns, None for an iterable of rows; anything else is refused."""
    frame = _arrow.columnar(data)
    if frame is None and not isinstance(data, Iterable):
        raise TypeError(
            "copy_in takes an iterable of rows, a DataFrame, an Arrow table or a dict of "
            f"columns, not {type(data).__name__}"
        )
    return frame


class _Load:
    """One copy_in, decided from the table's columns without I/O: the COPY statement, and its
    data encoded in Rust a chunk of about `CHUNK_BYTES` at a time (sync and async copy_in send
    the same chunks)."""

    def __init__(
        self,
        conn: Any,
        ident: sql.Identifier,
        table_cols: Mapping[str, TableColumn],
        columns: Sequence[str] | None,
        data: Any,
        frame: _arrow.Columns | None,
    ) -> None:
        text = _table_text(conn, ident)
        if not table_cols:
            raise ValueError(f"table {text} has no columns to COPY into")
        if columns is None:
            names = frame.names if frame is not None else list(table_cols)
        else:
            names = list(columns)
        missing = [n for n in names if n not in table_cols]
        if missing:
            raise ValueError(f"table {text} has no column {missing[0]!r}")
        self.oids = [table_cols[n][0] for n in names]
        self.writer = _native.PgCopyWriter(
            _write_specs(conn, table_cols, names), names, conn.info.encoding
        )
        self.statement = sql.SQL("COPY {} ({}) FROM STDIN (FORMAT BINARY)").format(
            ident, sql.SQL(", ").join(sql.Identifier(n) for n in names)
        )
        labels = _EnumLabels(conn, table_cols, names)
        self.frame: _arrow.Columns | None = None
        self.rows_in: Iterator[Any] | None = None
        if frame is None:
            rows = iter(data)
            self.rows_in = labels.rows(rows) if labels.enums else rows
        else:
            if frame.names != names:
                frame = frame.select(names)
            self.frame = labels.frame(frame) if labels.enums else frame

    def chunks(self) -> Iterator[bytes]:
        """The COPY data, then its trailer."""
        writer = self.writer
        if self.rows_in is not None:
            while chunk := writer.write_rows(self.rows_in, CHUNK_BYTES):
                yield chunk
        elif self.frame is not None:
            for batch in self.frame.batches(self.oids, BATCH_ROWS):
                start, n = 0, batch.length
                while start < n:
                    chunk, start = writer.write_columns(batch.sources, start, CHUNK_BYTES)
                    yield chunk
        yield writer.finish()

    @property
    def rows(self) -> int:
        """Rows written so far."""
        return self.writer.rows


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
    return text[: _statement_end(text)].strip()


def _statement_end(text: str) -> int:
    """Where the statement in `text` ends: after its last character that is not blank, part
    of a comment or a `;`. Quoted strings, quoted names and dollar-quoted bodies are skipped
    whole, so what they hold is never taken for a comment."""
    end, i, n = 0, 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace() or c == ";":
            i += 1
            continue
        if text.startswith("--", i):
            nl = text.find("\n", i)
            i = n if nl < 0 else nl + 1
            continue
        if text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
            if depth:  # an unclosed comment is the server's error to report
                end = n
            continue
        prev = text[i - 1] if i else " "
        word = prev.isalnum() or prev in "_$"
        if c in "'\"":
            escapes = c == "'" and prev in "eE" and (i < 2 or not _word_char(text[i - 2]))
            i += 1
            while i < n:
                if escapes and text[i] == "\\":
                    i += 2
                elif text[i] == c:
                    if text.startswith(c, i + 1):
                        i += 2
                    else:
                        break
                else:
                    i += 1
            i = end = min(i + 1, n)
            continue
        if c == "$" and not word:
            j = i + 1
            if j < n and (text[j].isalpha() or text[j] == "_"):
                j += 1
                while j < n and (text[j].isalnum() or text[j] == "_"):
                    j += 1
            if j < n and text[j] == "$":
                tag = text[i : j + 1]
                close = text.find(tag, j + 1)
                i = end = n if close < 0 else close + len(tag)
                continue
        i = end = i + 1
    return end


def _word_char(c: str) -> bool:
    return c.isalnum() or c in "_$"


def _describe(conn: psycopg.Connection[Any], text: str) -> tuple[list[str], list[int]]:
    """The describe step of `copy_out`: the types the reader is built for (see
    `_description`)."""
    return _description(conn, text)


def _description(conn: psycopg.Connection[Any], text: str) -> tuple[list[str], list[int]]:
    """Column names and type OIDs of a query, from the server's description of it (the query
    is prepared as the unnamed statement, never run), in one round trip."""
    encoding = conn.info.encoding
    with conn.lock:
        res = conn.wait(_describe_gen(conn.pgconn, text.encode(encoding)))
    if res.status != pq.ExecStatus.COMMAND_OK:
        raise pg_errors.error_from_result(res, encoding=encoding)
    return _fields(res, encoding)


def _describe_gen(pgconn: pq.abc.PGconn, query: bytes) -> PQGen[pq.abc.PGresult]:
    """Prepare `query` as the unnamed statement and describe it, both sent at once in
    libpq's pipeline mode (one round trip where two calls take two); the description, or
    the first error. The caller holds the connection's lock and runs it with `conn.wait`."""
    pgconn.enter_pipeline_mode()
    try:
        pgconn.send_prepare(b"", query)
        pgconn.send_describe_prepared(b"")
        pgconn.pipeline_sync()
        yield from generators.send(pgconn)
        results: list[pq.abc.PGresult] = []
        while True:
            got = yield from generators.fetch_many(pgconn)
            results.extend(got)
            if got and got[-1].status == pq.ExecStatus.PIPELINE_SYNC:
                break
    finally:
        pgconn.exit_pipeline_mode()
    for res in results:  # the Parse, then the Describe (skipped when the Parse failed)
        if res.status == pq.ExecStatus.FATAL_ERROR:
            return res
    return results[1]


def _types_changed(
    names: Sequence[str], oids: Sequence[int], now: tuple[list[str], list[int]]
) -> None:
    """Refuse a COPY whose columns are no longer of the described types (another session
    changed a table or a function between the describe step and the COPY): a binary COPY
    stream carries no types, so its bytes would be decoded as the old ones."""
    if list(oids) == now[1]:
        return
    at = next((i for i, (a, b) in enumerate(zip(oids, now[1], strict=False)) if a != b), None)
    if at is None:
        what = f"the query's columns changed ({len(oids)} then {len(now[1])})"
        path = None
    else:
        what = f"column {names[at]!r} changed type (OID {oids[at]} to {now[1][at]})"
        path = _column_place(names[at])
    err = _native.DecodeError(
        f"{what} while the COPY ran (an ALTER or a new function from another session): "
        "nothing was read; run it again"
    )
    err.kind = "type_mismatch"
    err.path = path
    err.offset = None
    raise err


def _fields(res: pq.abc.PGresult, encoding: str) -> tuple[list[str], list[int]]:
    """Column names and type OIDs of a result or a statement's description."""
    n = res.nfields
    names = [(res.fname(i) or b"").decode(encoding) for i in range(n)]
    return names, [res.ftype(i) for i in range(n)]


def _copy_out_statement(text: str) -> sql.Composed:
    """`COPY (text) TO STDOUT (FORMAT BINARY)`, the query on lines of its own (see
    `_query_text`), so that nothing it ends with can swallow the closing parenthesis."""
    return sql.SQL("COPY (\n{}\n) TO STDOUT (FORMAT BINARY)").format(sql.SQL(cast(Any, text)))


def _no_params(params: object, name: str) -> None:
    """`copy_out` takes no query parameters (COPY has none), and `into` only by keyword."""
    if params is None:
        return
    if isinstance(params, str) and params in ("rows", "columns", "arrow", "pandas", "polars"):
        raise TypeError(f"{name}'s into is keyword-only: {name}(conn, query, into={params!r})")
    raise TypeError(f"{name} takes no parameters (COPY has none); use amber.pg.fetch")


@overload
def copy_out(
    conn: psycopg.AsyncConnection[Any],
    query: Query,
    params: None = None,
    *,
    into: Literal["rows"] = "rows",
) -> Coroutine[Any, Any, list[tuple[Any, ...]]]: ...
@overload
def copy_out(
    conn: psycopg.AsyncConnection[Any],
    query: Query,
    params: None = None,
    *,
    into: Literal["columns"],
) -> Coroutine[Any, Any, dict[str, npt.NDArray[Any]]]: ...
@overload
def copy_out(
    conn: psycopg.AsyncConnection[Any],
    query: Query,
    params: None = None,
    *,
    into: Literal["arrow"],
) -> Coroutine[Any, Any, pa.Table]: ...
@overload
def copy_out(
    conn: psycopg.AsyncConnection[Any],
    query: Query,
    params: None = None,
    *,
    into: Literal["pandas"],
) -> Coroutine[Any, Any, pd.DataFrame]: ...
@overload
def copy_out(
    conn: psycopg.AsyncConnection[Any],
    query: Query,
    params: None = None,
    *,
    into: Literal["polars"],
) -> Coroutine[Any, Any, pl.DataFrame]: ...
@overload
def copy_out(
    conn: psycopg.Connection[Any],
    query: Query,
    params: None = None,
    *,
    into: Literal["rows"] = "rows",
) -> list[tuple[Any, ...]]: ...
@overload
def copy_out(
    conn: psycopg.Connection[Any],
    query: Query,
    params: None = None,
    *,
    into: Literal["columns"],
) -> dict[str, npt.NDArray[Any]]: ...
@overload
def copy_out(
    conn: psycopg.Connection[Any],
    query: Query,
    params: None = None,
    *,
    into: Literal["arrow"],
) -> pa.Table: ...
@overload
def copy_out(
    conn: psycopg.Connection[Any],
    query: Query,
    params: None = None,
    *,
    into: Literal["pandas"],
) -> pd.DataFrame: ...
@overload
def copy_out(
    conn: psycopg.Connection[Any],
    query: Query,
    params: None = None,
    *,
    into: Literal["polars"],
) -> pl.DataFrame: ...
def copy_out(
    conn: psycopg.Connection[Any] | psycopg.AsyncConnection[Any],
    query: Query,
    params: None = None,
    *,
    into: Into = "rows",
) -> Any:
    """Run `COPY (query) TO STDOUT (FORMAT BINARY)` and parse the stream in Rust.

    `into`: "rows" (a list of tuples), "columns" (a dict of NumPy arrays: numbers, bools, dates,
    timestamps and intervals as typed arrays, masked where NULL, other types as object arrays),
    "arrow" (a pyarrow Table), "pandas" or "polars" (a DataFrame). The query is a SELECT,
    VALUES or TABLE statement, or a DML statement with RETURNING. On a psycopg
    `AsyncConnection` it returns a coroutine doing the same.
    """
    if isinstance(conn, psycopg.AsyncConnection):
        from amber.pg import _async

        _no_params(params, "copy_out")
        return _async.copy_out(conn, query, into)
    _no_params(params, "copy_out")
    mode = _check_into(into)
    text = _query_text(conn, query)
    # The COPY and a second describe run in one savepoint (or transaction), so that a failure
    # mid-stream (a value amber refuses, a server error) leaves the caller's transaction as it
    # was. A binary COPY stream carries no types: the second describe, which sees the catalog
    # the COPY saw (the locks the COPY took on the query's tables are still held), must give
    # the types the reader was built for, else the result is refused and nothing of the COPY
    # stays. On an idle autocommit connection the first describe runs before that transaction
    # (it holds no lock once it returns, so an ALTER of another session meanwhile goes on and
    # is caught by the check); in a caller's transaction it runs in the savepoint, where a
    # failure leaves the transaction as it was (the table locks it takes are kept, but a
    # function of the query can still be replaced, which the check catches too).
    own = _atomic_plan(conn.info.transaction_status, conn.autocommit) is _OWN_TRANSACTION
    described = _describe(conn, text) if own else None
    with _atomic(conn):
        names, oids = described if described is not None else _describe(conn, text)
        reader = _native.PgReader(
            _read_specs(conn, oids, names=names), names, mode, conn.info.encoding
        )
        with conn.cursor() as cur, cur.copy(_copy_out_statement(text)) as copy:
            if _libpq():
                failure = reader.drain(conn.pgconn)
                if isinstance(failure, tuple):
                    _raise_server(failure)
            else:
                for data in copy:
                    reader.feed(data)
        _types_changed(names, oids, _description(conn, text))
    result = reader.finish(True)
    del reader  # released here, on this thread, whatever shaping the result raises
    return _arrow.shape(result, names, oids, into)


@overload
def fetch(
    conn: psycopg.AsyncConnection[Any],
    query: Query,
    params: Params = None,
    *,
    into: Literal["rows"] = "rows",
) -> Coroutine[Any, Any, list[tuple[Any, ...]]]: ...
@overload
def fetch(
    conn: psycopg.AsyncConnection[Any],
    query: Query,
    params: Params = None,
    *,
    into: Literal["columns"],
) -> Coroutine[Any, Any, dict[str, npt.NDArray[Any]]]: ...
@overload
def fetch(
    conn: psycopg.AsyncConnection[Any],
    query: Query,
    params: Params = None,
    *,
    into: Literal["arrow"],
) -> Coroutine[Any, Any, pa.Table]: ...
@overload
def fetch(
    conn: psycopg.AsyncConnection[Any],
    query: Query,
    params: Params = None,
    *,
    into: Literal["pandas"],
) -> Coroutine[Any, Any, pd.DataFrame]: ...
@overload
def fetch(
    conn: psycopg.AsyncConnection[Any],
    query: Query,
    params: Params = None,
    *,
    into: Literal["polars"],
) -> Coroutine[Any, Any, pl.DataFrame]: ...
@overload
def fetch(
    conn: psycopg.Connection[Any],
    query: Query,
    params: Params = None,
    *,
    into: Literal["rows"] = "rows",
) -> list[tuple[Any, ...]]: ...
@overload
def fetch(
    conn: psycopg.Connection[Any],
    query: Query,
    params: Params = None,
    *,
    into: Literal["columns"],
) -> dict[str, npt.NDArray[Any]]: ...
@overload
def fetch(
    conn: psycopg.Connection[Any],
    query: Query,
    params: Params = None,
    *,
    into: Literal["arrow"],
) -> pa.Table: ...
@overload
def fetch(
    conn: psycopg.Connection[Any],
    query: Query,
    params: Params = None,
    *,
    into: Literal["pandas"],
) -> pd.DataFrame: ...
@overload
def fetch(
    conn: psycopg.Connection[Any],
    query: Query,
    params: Params = None,
    *,
    into: Literal["polars"],
) -> pl.DataFrame: ...
def fetch(
    conn: psycopg.Connection[Any] | psycopg.AsyncConnection[Any],
    query: Query,
    params: Sequence[Any] | Mapping[str, Any] | None = None,
    *,
    into: Into = "rows",
) -> Any:
    """Run a query with binary parameters and a binary result, decoded in Rust.

    `params` are psycopg's (`%s` or `%(name)s` placeholders). `into` as for `copy_out`. Types
    amber does not know are loaded by psycopg's loaders for them. On a psycopg
    `AsyncConnection` it returns a coroutine doing the same.
    """
    if isinstance(conn, psycopg.AsyncConnection):
        from amber.pg import _async

        return _async.fetch(conn, query, params, into)
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
        reader = _native.PgReader(
            _read_specs(conn, oids, amber, names), names, mode, conn.info.encoding
        )
        if _libpq():
            reader.read_result(res)
        else:
            for r in range(res.ntuples):
                reader.add_row([res.get_value(r, c) for c in range(res.nfields)])
        result = reader.finish(False)
        del reader  # released here, on this thread, whatever shaping the result raises
    return _arrow.shape(result, names, oids, into)
