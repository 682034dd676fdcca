//! `PgReader`: a COPY BINARY stream, or a binary result read through
//! libpq, into rows of Python objects or Arrow columns; a column's last
//! short value is shared when the next row repeats it.

use amber_core::pg::{ClientEncoding, CopyParser, PgType, Scalar};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyList;

use super::column::{columns_of, Column, ColumnSpec};
use super::fail::{decode_fail, stream_fail, Fail};
use super::{arrow, encoding, from_pg};
use crate::ffi::buffer::InputBuffer;
use crate::ffi::gc::GcPause;
use crate::ffi::libpq;

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
pub(super) fn runs_python(col: &Column, enc: ClientEncoding) -> bool {
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
pub(super) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
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
