//! `PgCopyWriter`: rows (tuples, lists, NumPy records) or columns encoded
//! into COPY BINARY chunks, field by field through `to_pg` or `columns`.

use amber_core::pg::{CopyWriter, PgError};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};

use super::column::{columns_of, Column, ColumnSpec};
use super::fail::{encode_fail, short_repr, stream_fail, Fail};
use super::{columns, encoding, to_pg};
use crate::errors;

/// Write the next field: NULL when `null`, else with `encode`. A value that
/// pandas or NumPy mark as missing (`pd.NA`, `NaT`) and that the type does
/// not take is written as NULL.
pub(super) fn put_field(
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
pub(super) fn not_a_row(py: Python<'_>, row: &Bound<'_, PyAny>) -> PyResult<Option<&'static str>> {
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
