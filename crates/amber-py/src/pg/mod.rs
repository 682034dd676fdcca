//! The PostgreSQL part's edge, for `amber.pg`: COPY BINARY streams written
//! from rows or columns and read into rows or Arrow columns, with the
//! per-value work in Rust (amber-core's `pg` types and COPY framing).
//! `amber.pg` does the talking to psycopg; this side only sees bytes, and
//! the connection's libpq for reads (see `libpq.rs`).

mod arrow;
mod columns;
mod encoding;
mod from_pg;
mod libpq;
mod to_pg;

use amber_core::pg::{ClientEncoding, CopyParser, CopyWriter, PgError, PgType, Scalar};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};

use crate::errors;
use crate::ffi::buffer::InputBuffer;
use crate::ffi::gc::GcPause;

/// `(oid, adapter)`: a column's type OID and, for types amber does not
/// know, psycopg's binary dumper or loader for it; for reading, the str
/// `"amber"` marks a `bytea` column holding amber frames.
type ColumnSpec = (u32, Option<Py<PyAny>>);

/// How one column's values are written or read.
pub enum Column {
    Native(PgType),
    /// A type amber does not know: psycopg's binary dumper for it (whose
    /// `dump(value)` gives the send format) or its loader's `load(bytes)`.
    Adapter(Py<PyAny>),
    /// (Reading) amber frames in a `bytea` column, decoded as `amber.loads`
    /// would, straight from the result.
    Amber,
    /// (Reading) a `bytea[]` column of amber frames, each element decoded
    /// as `Amber` is (what a connection's cursors give once `register` put
    /// amber's loader on bytea).
    AmberArray,
}

/// Each column's way of being written or read, and its OID; `what` names
/// the adapter a type amber does not know needs ("dumper" or "loader").
fn columns_of(
    py: Python<'_>,
    specs: Vec<ColumnSpec>,
    names: &[String],
    what: &str,
) -> PyResult<(Vec<Column>, Vec<u32>)> {
    if specs.len() != names.len() || specs.is_empty() || specs.len() > i16::MAX as usize {
        return Err(PyValueError::new_err(
            "one name per column, and 1 to 32767 columns",
        ));
    }
    let mut cols = Vec::with_capacity(specs.len());
    let mut oids = Vec::with_capacity(specs.len());
    for (oid, adapter) in specs {
        oids.push(oid);
        let amber = what == "loader"
            && adapter
                .as_ref()
                .is_some_and(|a| a.bind(py).extract::<&str>().is_ok_and(|s| s == "amber"));
        cols.push(match (PgType::from_oid(oid), adapter) {
            (Some(PgType::Scalar(Scalar::Bytea)), _) if amber => Column::Amber,
            (Some(PgType::Array(Scalar::Bytea)), _) if amber => Column::AmberArray,
            (Some(t), _) => Column::Native(t),
            (None, Some(a)) => Column::Adapter(a),
            (None, None) => {
                return Err(PyValueError::new_err(format!(
                    "no way to handle type {oid}: pass a {what}"
                )))
            }
        });
    }
    Ok((cols, oids))
}

/// Why a value could not be written or read.
pub enum Fail {
    /// (Writing) the value's kind does not go in the column's type.
    Mismatch,
    /// The kind is right but the value or its bytes are not: the core's
    /// error (out of range, malformed, a NUL in text).
    Data(PgError),
    /// Python code raised (`json.dumps` or `json.loads`, an adapter,
    /// `__float__`, a constructor).
    Py(PyErr),
}

impl From<PgError> for Fail {
    fn from(e: PgError) -> Self {
        Fail::Data(e)
    }
}

impl From<PyErr> for Fail {
    fn from(e: PyErr) -> Self {
        Fail::Py(e)
    }
}

impl From<std::convert::Infallible> for Fail {
    fn from(e: std::convert::Infallible) -> Self {
        match e {}
    }
}

fn place(row: u64, name: &str) -> String {
    if !name.is_empty() && name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_') {
        format!("$[{row}].{name}")
    } else {
        format!("$[{row}][{name:?}]")
    }
}

fn type_name(oid: u32) -> String {
    PgType::from_oid(oid).map_or_else(|| format!("type {oid}"), |t| t.name())
}

fn short_repr(o: &Bound<'_, PyAny>) -> String {
    let r = o
        .repr()
        .map(|r| r.to_string())
        .unwrap_or_else(|_| "<unprintable>".into());
    if r.chars().count() > 80 {
        format!("{}...", r.chars().take(77).collect::<String>())
    } else {
        r
    }
}

/// A value that could not be written, as `amber.EncodeError` naming the
/// row, the column and the value.
fn encode_fail(
    py: Python<'_>,
    f: Fail,
    row: u64,
    name: &str,
    oid: u32,
    what: String,
    source: &str,
) -> PyErr {
    let ty = type_name(oid);
    let (kind, detail, cause) = match encode_parts(py, f, &ty, source) {
        Ok(parts) => parts,
        Err(e) => return e,
    };
    errors::make(
        py,
        errors::encode_error(py),
        kind,
        // A detail that already quotes the value ("70000 is out of range for int2")
        // is not followed by it again.
        if detail.starts_with(&what) {
            format!("row {row}, column '{name}' ({ty}): {detail}")
        } else {
            format!("row {row}, column '{name}' ({ty}): {detail}: {what}")
        },
        None,
        Some(place(row, name)),
        cause,
    )
}

/// What an `EncodeError` for `f` says: its kind, the detail and the cause;
/// or, as `Err`, an exception that passes through as it is (see
/// `errors::passes_through`). `source` names the value's type, `ty` the
/// column's.
fn encode_parts(
    py: Python<'_>,
    f: Fail,
    ty: &str,
    source: &str,
) -> Result<(&'static str, String, Option<PyErr>), PyErr> {
    Ok(match f {
        Fail::Mismatch => (
            "type_mismatch",
            format!("cannot write a value of type {source} as {ty}"),
            None,
        ),
        Fail::Data(e) => (e.kind.name(), e.message, None),
        Fail::Py(e) if errors::passes_through(py, &e) => return Err(e),
        Fail::Py(e) => ("raised", errors::described(py, &e), Some(e)),
    })
}

/// A value that could not be read, as `amber.DecodeError` with the stream
/// offset (for COPY), the row and the column.
fn decode_fail(
    py: Python<'_>,
    f: Fail,
    row: u64,
    name: &str,
    oid: u32,
    offset: Option<u64>,
) -> PyErr {
    let ty = type_name(oid);
    let (kind, detail, cause, at) = match f {
        Fail::Data(e) => (e.kind.name().to_owned(), e.message, None, e.offset),
        // Reading never compares a value's kind with a type.
        Fail::Mismatch => (
            "type_mismatch".into(),
            "unexpected value".into(),
            None,
            None,
        ),
        Fail::Py(e) => {
            if errors::passes_through(py, &e) {
                return e;
            }
            // An amber frame in bytea that does not decode: the codec's own kind and
            // message (as a registered cursor gives them), with a hint for raw bytes.
            let amber = {
                let value = e.value(py);
                value
                    .is_instance(errors::decode_error(py))
                    .unwrap_or(false)
                    .then(|| {
                        let kind = value
                            .getattr(pyo3::intern!(py, "kind"))
                            .and_then(|k| k.extract::<String>())
                            .unwrap_or_else(|_| "raised".into());
                        let hint = if kind == "not_amber" {
                            "; this connection reads bytea as amber (amber.pg.register): read \
                             raw bytes through a connection or cursor without it"
                        } else {
                            ""
                        };
                        (kind, format!("{value}{hint}"))
                    })
            };
            if let Some((kind, detail)) = amber {
                (kind, detail, Some(e), None)
            } else {
                ("raised".into(), errors::described(py, &e), Some(e), None)
            }
        }
    };
    let offset = match (offset, at) {
        (Some(base), Some(within)) => Some(base + within),
        (Some(base), None) => Some(base),
        _ => None,
    };
    errors::make(
        py,
        errors::decode_error(py),
        &kind,
        format!("row {row}, column '{name}' ({ty}): {detail}"),
        offset.map(|o| o as usize),
        Some(place(row, name)),
        cause,
    )
}

/// A broken COPY stream (framing, not a value), as `amber.DecodeError`.
fn stream_fail(py: Python<'_>, e: PgError) -> PyErr {
    let mut msg = format!("COPY stream: {}", e.message);
    if let Some(r) = e.row {
        msg.push_str(&format!(" (row {r})"));
    }
    errors::make(
        py,
        errors::decode_error(py),
        e.kind.name(),
        msg,
        e.offset.map(|o| o as usize),
        None,
        None,
    )
}

/// Write the next field: NULL when `null`, else with `encode`. A value that
/// pandas or NumPy mark as missing (`pd.NA`, `NaT`) and that the type does
/// not take is written as NULL.
fn put_field(
    w: &mut CopyWriter,
    target: &Column,
    ctx: &mut to_pg::Ctx,
    null: bool,
    missing: impl FnOnce() -> bool,
    encode: impl FnOnce(&mut Vec<u8>, &Column, &mut to_pg::Ctx) -> to_pg::Put,
) -> Result<(), Fail> {
    if null {
        return w.null().map_err(Fail::Data);
    }
    let mut fail = None;
    let r = w.field(|out| {
        encode(out, target, ctx).map_err(|f| {
            fail = Some(f);
            PgError::invalid_value("value")
        })
    });
    match (r, fail) {
        (Ok(()), _) => Ok(()),
        (Err(_), Some(Fail::Mismatch)) if missing() => w.null().map_err(Fail::Data),
        (Err(_), Some(f)) => Err(f),
        (Err(e), None) => Err(Fail::Data(e)),
    }
}

/// Encodes rows or columns into COPY BINARY chunks.
#[pyclass(module = "amber._native", unsendable)]
pub struct PgCopyWriter {
    w: CopyWriter,
    targets: Vec<Column>,
    oids: Vec<u32>,
    names: Vec<String>,
    ctx: to_pg::Ctx,
}

/// Why `row` (neither a tuple nor a list) is not a row of values, or
/// `None` when it is one (an iterable whose items are the values in order:
/// a NumPy record or array row): a `str` or a bytes-like object (whose
/// items are characters or ints), a mapping (whose items are its keys) or
/// a set (whose order is its hashes').
fn not_a_row(py: Python<'_>, row: &Bound<'_, PyAny>) -> PyResult<Option<&'static str>> {
    use pyo3::types::{PyByteArray, PyDict, PyFrozenSet, PyMemoryView, PySet, PyString};
    if row.is_instance_of::<PyString>() {
        return Ok(Some("text"));
    }
    if row.is_instance_of::<PyBytes>()
        || row.is_instance_of::<PyByteArray>()
        || row.is_instance_of::<PyMemoryView>()
    {
        return Ok(Some("bytes"));
    }
    if row.is_instance_of::<PyDict>() {
        return Ok(Some("a mapping: its items would be its keys"));
    }
    if row.is_instance_of::<PySet>() || row.is_instance_of::<PyFrozenSet>() {
        return Ok(Some("a set: its order is arbitrary"));
    }
    let abc = py.import(pyo3::intern!(py, "collections.abc"))?;
    if row.is_instance(&abc.getattr(pyo3::intern!(py, "Mapping"))?)? {
        return Ok(Some("a mapping: its items would be its keys"));
    }
    if row.is_instance(&abc.getattr(pyo3::intern!(py, "Set"))?)? {
        return Ok(Some("a set: its order is arbitrary"));
    }
    Ok(None)
}

impl PgCopyWriter {
    fn row(&mut self, py: Python<'_>, row: &Bound<'_, PyAny>) -> PyResult<()> {
        let index = self.w.rows();
        let mut owned: Vec<Bound<'_, PyAny>> = Vec::new();
        let tuple = row.cast::<PyTuple>().ok();
        let list = row.cast::<PyList>().ok();
        let len = if let Some(t) = tuple {
            t.len()
        } else if let Some(l) = list {
            l.len()
        } else if let Some(what) = not_a_row(py, row)? {
            return Err(errors::make(
                py,
                errors::encode_error(py),
                "type_mismatch",
                format!(
                    "row {index} is a {} ({what}), not a sequence of values: pass a tuple or \
                     a list of the values in the columns' order",
                    row.get_type().name()?
                ),
                None,
                Some(format!("$[{index}]")),
                None,
            ));
        } else {
            owned = row.try_iter()?.collect::<PyResult<_>>()?;
            owned.len()
        };
        if len != self.targets.len() {
            return Err(errors::make(
                py,
                errors::encode_error(py),
                "field_count",
                format!(
                    "row {index} has {len} values; the COPY has {} columns",
                    self.targets.len()
                ),
                None,
                Some(format!("$[{index}]")),
                None,
            ));
        }
        self.w
            .begin_row(self.targets.len() as u16)
            .map_err(|e| stream_fail(py, e))?;
        for c in 0..len {
            let item = &if let Some(t) = tuple {
                t.get_item(c)?
            } else if let Some(l) = list {
                l.get_item(c)?
            } else {
                owned
                    .get(c)
                    .cloned()
                    .unwrap_or_else(|| py.None().into_bound(py))
            };
            let r = put_field(
                &mut self.w,
                &self.targets[c],
                &mut self.ctx,
                item.is_none(),
                || to_pg::is_missing(item),
                |out, target, ctx| to_pg::value(out, target, item, ctx),
            );
            if let Err(f) = r {
                let _ = self.w.discard_row();
                let source = item.get_type().name()?.to_string();
                let (name, oid) = (&self.names[c], self.oids[c]);
                return Err(encode_fail(
                    py,
                    f,
                    index,
                    name,
                    oid,
                    short_repr(item),
                    &source,
                ));
            }
        }
        Ok(())
    }

    fn take<'py>(&mut self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let b = PyBytes::new(py, self.w.bytes());
        self.w.clear();
        b
    }
}

#[pymethods]
impl PgCopyWriter {
    /// `encoding`: the Python codec of the connection's client encoding
    /// (psycopg's `conn.info.encoding`); None is UTF-8.
    #[new]
    #[pyo3(signature = (columns, names, encoding = None))]
    fn new(
        py: Python<'_>,
        columns: Vec<ColumnSpec>,
        names: Vec<String>,
        encoding: Option<&str>,
    ) -> PyResult<Self> {
        crate::errors::guard(|| {
            let (targets, oids) = columns_of(py, columns, &names, "dumper")?;
            Ok(PgCopyWriter {
                w: CopyWriter::with_capacity(1 << 20),
                targets,
                oids,
                names,
                ctx: to_pg::Ctx::new(encoding::TextCodec::new(py, encoding)?),
            })
        })
    }

    /// Encode rows from the iterator `rows` until the buffer holds at least
    /// `limit` bytes or the rows run out; return the buffered bytes (empty
    /// once everything was returned).
    fn write_rows<'py>(
        &mut self,
        py: Python<'py>,
        rows: &Bound<'py, PyAny>,
        limit: usize,
    ) -> PyResult<Bound<'py, PyBytes>> {
        crate::errors::guard(|| {
            let mut it = rows.try_iter()?;
            while self.w.len() < limit {
                match it.next() {
                    None => break,
                    Some(row) => self.row(py, &row?)?,
                }
            }
            Ok(self.take(py))
        })
    }

    /// Encode rows `start..` of the columns (see `columns.rs` for their
    /// description) until the buffer holds `limit` bytes; return the bytes
    /// and the next row to write.
    fn write_columns<'py>(
        &mut self,
        py: Python<'py>,
        columns: Vec<Bound<'py, PyTuple>>,
        start: usize,
        limit: usize,
    ) -> PyResult<(Bound<'py, PyBytes>, usize)> {
        crate::errors::guard(|| {
            if columns.len() != self.targets.len() {
                return Err(PyValueError::new_err("one source per column"));
            }
            let sources = columns
                .iter()
                .map(columns::Source::new)
                .collect::<PyResult<Vec<_>>>()?;
            let len = sources.first().map_or(0, |s| s.len());
            if sources.iter().any(|s| s.len() != len) {
                return Err(PyValueError::new_err("columns of different lengths"));
            }
            let ncols = self.targets.len() as u16;
            let base = self.w.rows() - start as u64;
            let mut i = start;
            while i < len && self.w.len() < limit {
                self.w.begin_row(ncols).map_err(|e| stream_fail(py, e))?;
                for (c, src) in sources.iter().enumerate() {
                    let r = src.item(py, i).map_err(Fail::Py).and_then(|item| {
                        put_field(
                            &mut self.w,
                            &self.targets[c],
                            &mut self.ctx,
                            src.is_null(i, item.as_ref()),
                            || item.as_ref().is_some_and(to_pg::is_missing),
                            |out, target, ctx| src.write(py, i, item.as_ref(), target, out, ctx),
                        )
                    });
                    if let Err(f) = r {
                        let _ = self.w.discard_row();
                        let what = match src.object(py, i) {
                            Some(o) => short_repr(&o),
                            None => src.describe(i),
                        };
                        let (name, oid) = (&self.names[c], self.oids[c]);
                        return Err(encode_fail(
                            py,
                            f,
                            base + i as u64,
                            name,
                            oid,
                            what,
                            src.kind_name(),
                        ));
                    }
                }
                i += 1;
            }
            Ok((self.take(py), i))
        })
    }

    /// The trailer and whatever is still buffered.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        crate::errors::guard(|| {
            self.w.finish().map_err(|e| stream_fail(py, e))?;
            Ok(self.take(py))
        })
    }

    /// Rows written so far.
    #[getter]
    fn rows(&self) -> u64 {
        self.w.rows()
    }
}

/// Bytes of a result's values `read_result` copies out at a time.
const RESULT_BATCH_BYTES: usize = 64 << 10;

enum Out {
    Rows(Py<PyList>),
    Columns(Vec<arrow::Builder>),
}

/// Reads a COPY BINARY stream or a binary result into rows or columns.
#[pyclass(module = "amber._native", unsendable)]
pub struct PgReader {
    parser: CopyParser,
    cols: Vec<Column>,
    oids: Vec<u32>,
    names: Vec<String>,
    out: Out,
    ctx: from_pg::Ctx,
    rows: u64,
    /// Per column, the last value read and its object (see [`Last`]).
    last: Vec<Option<Last>>,
    /// Where `drain` stands (it may be called again when not blocking).
    drain: libpq::Drain,
    /// Whether reading a value may run Python code (see [`runs_python`]).
    runs_python: bool,
}

/// Whether reading a value of `col` may run Python code. Only the types
/// below are known not to: they are built through CPython's C API alone
/// (the cyclic GC is paused meanwhile, and none of their objects has a
/// finalizer), text only in UTF-8 and SQL_ASCII (other encodings go
/// through a Python codec). The rest may: a psycopg loader, the codec (a
/// registered class's hooks), `json.loads`, `ipaddress`, `uuid.UUID`,
/// `decimal.Decimal` (which may be the pure-Python module).
fn runs_python(col: &Column, enc: ClientEncoding) -> bool {
    let s = match col {
        Column::Adapter(_) | Column::Amber | Column::AmberArray => return true,
        Column::Native(PgType::Scalar(s) | PgType::Array(s)) => *s,
    };
    match s {
        Scalar::Bool
        | Scalar::Int2
        | Scalar::Int4
        | Scalar::Int8
        | Scalar::Oid
        | Scalar::Float4
        | Scalar::Float8
        | Scalar::Bytea
        | Scalar::Date
        | Scalar::Time
        | Scalar::TimeTz
        | Scalar::Timestamp
        | Scalar::TimestampTz
        | Scalar::Interval => false,
        Scalar::Text | Scalar::Varchar | Scalar::Bpchar | Scalar::Name | Scalar::Char => {
            enc == ClientEncoding::Other
        }
        _ => true,
    }
}

/// The last value of a column whose objects are immutable: when the next
/// row holds the same bytes (a sorted key, a category, a constant), its
/// object is shared rather than built again. Only short values are kept,
/// and a column whose first [`LAST_PROBE`] misses came with few hits stops
/// being compared (its values differ row to row).
struct Last {
    bytes: Vec<u8>,
    obj: Option<Py<PyAny>>,
    hits: u32,
    misses: u32,
}

/// Values longer than this are not compared with the previous row's.
const LAST_MAX: usize = 64;
/// After this many misses, a column with fewer than one hit in eight is
/// no longer compared.
const LAST_PROBE: u32 = 1024;

/// `a == b`, without a call to `memcmp` for the short values a row's
/// columns mostly hold: two loads of each, overlapping where the length is
/// not a power of two.
#[inline(always)]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let u32_at = |s: &[u8], i: usize| u32::from_ne_bytes([s[i], s[i + 1], s[i + 2], s[i + 3]]);
    let u64_at = |s: &[u8], i: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&s[i..i + 8]);
        u64::from_ne_bytes(w)
    };
    match n {
        0 => true,
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..=7 => u32_at(a, 0) == u32_at(b, 0) && u32_at(a, n - 4) == u32_at(b, n - 4),
        8..=16 => u64_at(a, 0) == u64_at(b, 0) && u64_at(a, n - 8) == u64_at(b, n - 8),
        _ => a == b,
    }
}

impl Last {
    fn for_column(col: &Column) -> Option<Last> {
        match col {
            Column::Native(PgType::Scalar(s)) if from_pg::immutable(*s) => Some(Last {
                bytes: Vec::with_capacity(LAST_MAX),
                obj: None,
                hits: 0,
                misses: 0,
            }),
            _ => None,
        }
    }
}

impl PgReader {
    /// Take one row's values.
    fn take_row<'a>(
        &mut self,
        py: Python<'_>,
        mut values: impl Iterator<Item = (Option<&'a [u8]>, Option<u64>)>,
    ) -> PyResult<()> {
        let row = self.rows;
        let (names, oids) = (&self.names, &self.oids);
        // A field's offset points at its length word; the value follows it.
        let fail = |f: Fail, c: usize, at: Option<u64>| {
            decode_fail(py, f, row, &names[c], oids[c], at.map(|o| o + 4))
        };
        match &mut self.out {
            Out::Rows(list) => {
                let t = from_pg::new_tuple(py, self.cols.len())?;
                let mut filled = 0;
                let n = self.cols.len();
                for (c, (v, at)) in values.by_ref().take(n).enumerate() {
                    filled = c + 1;
                    if let (
                        Some(b),
                        Some(Last {
                            bytes,
                            obj: Some(o),
                            hits,
                            ..
                        }),
                    ) = (v, &mut self.last[c])
                    {
                        if same_bytes(b, bytes) {
                            *hits = hits.saturating_add(1);
                            from_pg::set_item(&t, c, o.bind(py).clone());
                            continue;
                        }
                    }
                    let item = match v {
                        None => from_pg::none(py),
                        Some(b) => {
                            let o = from_pg::value(py, &self.cols[c], b, &mut self.ctx)
                                .map_err(|f| fail(f, c, at))?;
                            if let Some(l) = &mut self.last[c] {
                                l.misses = l.misses.saturating_add(1);
                                if l.misses == LAST_PROBE && l.hits < LAST_PROBE / 8 {
                                    self.last[c] = None;
                                } else if b.len() <= LAST_MAX {
                                    l.bytes.clear();
                                    l.bytes.extend_from_slice(b);
                                    l.obj = Some(o.clone().unbind());
                                } else {
                                    l.obj = None;
                                }
                            }
                            o
                        }
                    };
                    from_pg::set_item(&t, c, item);
                }
                if filled != self.cols.len() || values.next().is_some() {
                    return Err(PyValueError::new_err(
                        "a row's field count differs from the reader's",
                    ));
                }
                // SAFETY: `t` is a tuple this loop filled, every slot (counted).
                unsafe { crate::ffi::gc::untrack_atoms_tuple(t.as_ptr()) };
                list.bind(py).append(t)?;
            }
            Out::Columns(builders) => {
                for (c, (v, at)) in values.enumerate() {
                    match v {
                        None => builders[c].push_null(py),
                        Some(b) => builders[c]
                            .push(py, &self.cols[c], b, &mut self.ctx)
                            .map_err(|f| fail(f, c, at))?,
                    }
                }
            }
        }
        self.rows += 1;
        Ok(())
    }

    /// Feed `data` to the COPY parser and take every complete row.
    fn consume(&mut self, py: Python<'_>, data: &[u8]) -> PyResult<()> {
        self.parser.feed(data).map_err(|e| stream_fail(py, e))?;
        // Only new objects, none of them in a cycle: the cyclic GC has
        // nothing to find while rows are built (as in `amber.loads`).
        let _pause = GcPause::new(py);
        loop {
            // The row borrows the parser: copy out what `take_row` needs.
            let mut parser = std::mem::take(&mut self.parser);
            let r = match parser.next_row() {
                Err(e) => Err(stream_fail(py, e)),
                Ok(None) => Ok(false),
                Ok(Some(row)) => {
                    let fields = row.fields().map(|f| (f.value, Some(f.offset)));
                    self.take_row(py, fields).map(|()| true)
                }
            };
            self.parser = parser;
            if !r? {
                return Ok(());
            }
        }
    }
}

#[pymethods]
impl PgReader {
    /// `into` is "rows" (a list of tuples), "arrow" (column buffers) or
    /// "numpy" (buffers for the types NumPy holds, objects for the rest).
    /// `encoding`: the Python codec of the connection's client encoding
    /// (psycopg's `conn.info.encoding`); None is UTF-8.
    #[new]
    #[pyo3(signature = (columns, names, into, encoding = None))]
    fn new(
        py: Python<'_>,
        columns: Vec<ColumnSpec>,
        names: Vec<String>,
        into: &str,
        encoding: Option<&str>,
    ) -> PyResult<Self> {
        crate::errors::guard(|| {
            let (cols, oids) = columns_of(py, columns, &names, "loader")?;
            let codec = encoding::TextCodec::new(py, encoding)?;
            let sql_ascii = codec.enc == ClientEncoding::SqlAscii;
            let out = match into {
                "rows" => Out::Rows(PyList::empty(py).unbind()),
                "arrow" | "numpy" => Out::Columns(
                    cols.iter()
                        .map(|c| arrow::Builder::new(c, into == "numpy").binary_text(sql_ascii))
                        .collect(),
                ),
                other => {
                    return Err(PyValueError::new_err(format!(
                        "into must be 'rows' or 'arrow', not {other:?}"
                    )))
                }
            };
            let last = cols.iter().map(Last::for_column).collect();
            let runs_python = cols.iter().any(|c| runs_python(c, codec.enc));
            Ok(PgReader {
                runs_python,
                last,
                parser: CopyParser::expecting_fields(cols.len() as u16),
                cols,
                oids,
                names,
                out,
                ctx: from_pg::Ctx::new(codec),
                rows: 0,
                drain: libpq::Drain::default(),
            })
        })
    }

    /// Feed bytes of a COPY BINARY stream (any chunking).
    fn feed(&mut self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard(|| {
            let view = InputBuffer::get(data)?;
            self.consume(py, view.bytes())
        })
    }

    /// Read a `COPY ... TO STDOUT (FORMAT BINARY)` in progress on psycopg's
    /// `PGconn` object `pgconn` (`conn.pgconn`, whose connection lock the
    /// caller holds). Returns None when the COPY ended well, else
    /// `(sqlstate, message)`: the server's error, or an empty SQLSTATE when
    /// the connection failed. With `block=False` it reads what the socket
    /// holds, takes every message buffered and returns "wait" when it needs
    /// the socket to be readable: call again once it is. A connection
    /// closed meanwhile raises psycopg's `OperationalError`.
    #[pyo3(signature = (pgconn, block = true))]
    fn drain<'py>(
        &mut self,
        py: Python<'py>,
        pgconn: &Bound<'py, PyAny>,
        block: bool,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        crate::errors::guard(|| {
            let lib = libpq::get().ok_or_else(|| PyRuntimeError::new_err("libpq is not bound"))?;
            let conn = lib.conn(pgconn)?;
            let mut drain = std::mem::take(&mut self.drain);
            let end = drain.run(&conn, block, self.runs_python, |data| {
                self.consume(py, data)
            });
            self.drain = drain;
            Ok(match end? {
                libpq::DrainEnd::Finished(None) => None,
                libpq::DrainEnd::Finished(Some(f)) => Some(f.into_pyobject(py)?.into_any()),
                libpq::DrainEnd::Wait => Some(pyo3::intern!(py, "wait").clone().into_any()),
            })
        })
    }

    /// Read rows `start..stop` (by default all) of psycopg's binary
    /// `PGresult` object `pgresult` (`cur.pgresult`).
    #[pyo3(signature = (pgresult, start = 0, stop = None))]
    fn read_result(
        &mut self,
        py: Python<'_>,
        pgresult: &Bound<'_, PyAny>,
        start: usize,
        stop: Option<usize>,
    ) -> PyResult<()> {
        crate::errors::guard(|| {
            let lib = libpq::get().ok_or_else(|| PyRuntimeError::new_err("libpq is not bound"))?;
            let res = lib.result(pgresult)?;
            let fields = self.cols.len();
            let rows = {
                // SAFETY: the view is dropped before any Python code runs.
                let v = unsafe { res.view() }?;
                if v.fields() != fields {
                    return Err(PyValueError::new_err(
                        "the result's columns differ from the reader's",
                    ));
                }
                if (0..fields).any(|c| !v.is_binary(c)) {
                    return Err(PyValueError::new_err("the result is not in binary format"));
                }
                v.rows()
            };
            let stop = stop.unwrap_or(rows);
            if start > stop || stop > rows {
                return Err(PyValueError::new_err(format!(
                    "rows {start}..{stop} are not within the result's {rows}"
                )));
            }
            let _pause = GcPause::new(py);
            if !self.runs_python {
                // No value of these columns is made by Python code (see
                // `runs_python`), so nothing can clear the result while its rows
                // are read: they are decoded in place, from one view.
                // SAFETY: the view is used while this thread holds the GIL and
                // runs no Python code (`take_row` builds these columns' values
                // through the C API alone, with the cyclic GC paused).
                let v = unsafe { res.view() }?;
                for r in start..stop {
                    let v = &v;
                    self.take_row(py, (0..fields).map(move |c| (v.value(r, c), None)))?;
                }
                return Ok(());
            }
            // A loader or codec may run Python code, and Python code may clear
            // the result (or let a thread that does run): the values are copied
            // out a batch of rows at a time, under a view taken afresh, and
            // decoded from the copy.
            let mut buf: Vec<u8> = Vec::with_capacity(RESULT_BATCH_BYTES + 4096);
            let mut spans: Vec<(usize, usize)> = Vec::new();
            let mut r = start;
            while r < stop {
                buf.clear();
                spans.clear();
                let first = r;
                {
                    // SAFETY: the view is used only to copy values into `buf`,
                    // and dropped before any Python code runs.
                    let v = unsafe { res.view() }?;
                    if v.rows() < stop || v.fields() != fields {
                        return Err(PyValueError::new_err(
                            "the result changed while it was read",
                        ));
                    }
                    while r < stop && buf.len() < RESULT_BATCH_BYTES {
                        for c in 0..fields {
                            spans.push(match v.value(r, c) {
                                None => (usize::MAX, 0),
                                Some(b) => {
                                    buf.extend_from_slice(b);
                                    (buf.len() - b.len(), b.len())
                                }
                            });
                        }
                        r += 1;
                    }
                }
                for row in spans.chunks_exact(fields).take(r - first) {
                    let buf = &buf;
                    self.take_row(
                        py,
                        row.iter().map(move |&(at, n)| {
                            ((at != usize::MAX).then(|| &buf[at..at + n]), None)
                        }),
                    )?;
                }
            }
            Ok(())
        })
    }

    /// Take one row of values already split (bytes-like or None each).
    fn add_row(&mut self, py: Python<'_>, values: Vec<Option<Bound<'_, PyAny>>>) -> PyResult<()> {
        crate::errors::guard(|| {
            if values.len() != self.cols.len() {
                return Err(PyValueError::new_err("one value per column"));
            }
            let views = values
                .iter()
                .map(|v| v.as_ref().map(InputBuffer::get).transpose())
                .collect::<PyResult<Vec<_>>>()?;
            self.take_row(
                py,
                views.iter().map(|v| (v.as_ref().map(|b| b.bytes()), None)),
            )
        })
    }

    /// Rows taken so far.
    #[getter]
    fn rows(&self) -> u64 {
        self.rows
    }

    /// The result: a list of tuples, or one `(tag, length, null_count,
    /// validity, data, offsets)` per column. With `copy`, the COPY stream
    /// must have ended with its trailer.
    fn finish<'py>(&mut self, py: Python<'py>, copy: bool) -> PyResult<Bound<'py, PyAny>> {
        crate::errors::guard(|| {
            if copy {
                self.parser.finish().map_err(|e| stream_fail(py, e))?;
            }
            let out = std::mem::replace(&mut self.out, Out::Rows(PyList::empty(py).unbind()));
            match out {
                Out::Rows(list) => Ok(list.into_bound(py).into_any()),
                Out::Columns(builders) => {
                    let cols = builders
                        .into_iter()
                        .map(|b| b.finish(py))
                        .collect::<PyResult<Vec<_>>>()?;
                    Ok(PyList::new(py, cols)?.into_any())
                }
            }
        })
    }
}

/// Bind the libpq loaded at `path` for psycopg's `PGconn` and `PGresult`
/// classes (see `libpq.rs`); whether it worked.
#[pyfunction]
fn pg_bind_libpq(
    py: Python<'_>,
    path: &str,
    pgconn_type: &Bound<'_, pyo3::types::PyType>,
    pgresult_type: &Bound<'_, pyo3::types::PyType>,
) -> PyResult<bool> {
    crate::errors::guard(|| libpq::bind(py, path, pgconn_type, pgresult_type))
}

/// `(typname, is_array)` for a type OID amber reads and writes itself, else
/// None.
#[pyfunction]
fn pg_type(oid: u32) -> Option<(String, bool)> {
    PgType::from_oid(oid).map(|t| (t.name(), t.element().is_some()))
}

/// The binary send format of `value` as type `oid` (one amber writes
/// itself, see `pg_type`): what a binary query parameter of that type
/// carries, its text in `encoding` (the Python codec of the connection's
/// client encoding, psycopg's `conn.info.encoding`; None is UTF-8). A
/// value that does not fit raises `amber.EncodeError`.
#[pyfunction]
#[pyo3(signature = (oid, value, encoding = None))]
fn pg_send<'py>(
    py: Python<'py>,
    oid: u32,
    value: &Bound<'py, PyAny>,
    encoding: Option<&str>,
) -> PyResult<Bound<'py, PyBytes>> {
    crate::errors::guard(|| {
        let t = PgType::from_oid(oid)
            .ok_or_else(|| PyValueError::new_err(format!("amber does not write type {oid}")))?;
        let mut out = Vec::new();
        let ty = type_name(oid);
        let r = to_pg::value(
            &mut out,
            &Column::Native(t),
            value,
            &mut to_pg::Ctx::new(encoding::TextCodec::new(py, encoding)?),
        );
        let Err(f) = r else {
            return Ok(PyBytes::new(py, &out));
        };
        let source = value.get_type().name()?.to_string();
        let (kind, detail, cause) = encode_parts(py, f, &ty, &source)?;
        Err(errors::make(
            py,
            errors::encode_error(py),
            kind,
            format!("{ty}: {detail}"),
            None,
            None,
            cause,
        ))
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PgCopyWriter>()?;
    m.add_class::<PgReader>()?;
    m.add_function(wrap_pyfunction!(pg_bind_libpq, m)?)?;
    m.add_function(wrap_pyfunction!(pg_type, m)?)?;
    m.add_function(wrap_pyfunction!(pg_send, m)?)?;
    Ok(())
}
