//! The PostgreSQL part's edge, for `amber.pg`: COPY BINARY streams written
//! from rows or columns and read into rows or Arrow columns, with the
//! per-value work in Rust (amber-core's `pg` types and COPY framing).
//! `amber.pg` does the talking to psycopg; this side only sees bytes, and
//! the connection's libpq for reads.
//!
//! The rooms:
//! - `column`: how each column is written or read (`Column`), from the
//!   OIDs and adapters `amber.pg` passes;
//! - `writer`: `PgCopyWriter`, rows or columns to COPY BINARY chunks;
//! - `reader`: `PgReader`, a COPY stream or a result to rows or columns;
//! - `to_pg` / `from_pg`: one Python value to a type's send format, and
//!   back; `columns`: Arrow and object columns read in place for COPY;
//!   `arrow`: results as Arrow buffers;
//! - `encoding`: text in the connection's client encoding;
//! - `fail`: what went wrong, as amber's exceptions with row, column and
//!   offset;
//! - `functions`: the module functions (`pg_bind_libpq`, `pg_type`,
//!   `pg_send`); the libpq binding itself is `crate::ffi::libpq`.

mod arrow;
mod column;
mod columns;
mod encoding;
mod fail;
mod from_pg;
mod functions;
mod reader;
mod to_pg;
mod writer;

use pyo3::prelude::*;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<writer::PgCopyWriter>()?;
    m.add_class::<reader::PgReader>()?;
    m.add_function(wrap_pyfunction!(functions::pg_bind_libpq, m)?)?;
    m.add_function(wrap_pyfunction!(functions::pg_type, m)?)?;
    m.add_function(wrap_pyfunction!(functions::pg_send, m)?)?;
    Ok(())
}
