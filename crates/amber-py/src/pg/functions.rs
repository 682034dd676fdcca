//! The module functions `amber.pg` calls: binding psycopg's libpq, the
//! types amber writes itself, and one query parameter's send format.

use amber_core::pg::PgType;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use super::column::Column;
use super::fail::{encode_parts, type_name};
use super::{encoding, to_pg};
use crate::errors;
use crate::ffi::libpq;

/// Bind the libpq loaded at `path` for psycopg's `PGconn` and `PGresult`
/// classes (see `crate::ffi::libpq`); whether it worked.
#[pyfunction]
pub(super) fn pg_bind_libpq(
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
pub(super) fn pg_type(oid: u32) -> Option<(String, bool)> {
    PgType::from_oid(oid).map(|t| (t.name(), t.element().is_some()))
}

/// The binary send format of `value` as type `oid` (one amber writes
/// itself, see `pg_type`): what a binary query parameter of that type
/// carries, its text in `encoding` (the Python codec of the connection's
/// client encoding, psycopg's `conn.info.encoding`; None is UTF-8). A
/// value that does not fit raises `amber.EncodeError`.
#[pyfunction]
#[pyo3(signature = (oid, value, encoding = None))]
pub(super) fn pg_send<'py>(
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
