//! How each column of a COPY or a result is written or read: amber's own
//! type, psycopg's adapter for a type amber does not know, or amber frames
//! in a `bytea` column.

use amber_core::pg::{PgType, Scalar};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// `(oid, adapter)`: a column's type OID and, for types amber does not
/// know, psycopg's binary dumper or loader for it; for reading, the str
/// `"amber"` marks a `bytea` column holding amber frames.
pub(super) type ColumnSpec = (u32, Option<Py<PyAny>>);

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
pub(super) fn columns_of(
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
