//! `amber._native`: the thin PyO3 edge over amber-core. This file lists
//! what Python sees; each part lives in its own folder.
//!
//! - `codec/`: `dumps`, `loads`, `frame_length` (the encoder's object walker
//!   and the decoder's builder);
//! - `archive/`: the zip container, compression, hashes and `.npy` headers
//!   for `amber.Archive`;
//! - `pg/`: COPY BINARY streams and binary results for `amber.pg`;
//! - `proto/`: message classes, containers and the wire edge for
//!   `amber.proto`;
//! - `values/`: datetime, Decimal, UUID and NumPy values as plain Rust parts;
//! - `typeref.rs`: classes and C APIs found once;
//! - `errors.rs`: every exception class;
//! - `ffi/`: every raw read of CPython's objects and layouts, the libpq
//!   binding and the global allocator (mimalloc);
//! - `gil.rs`: the one door for bulk work without the GIL.

mod archive;
mod codec;
mod errors;
mod ffi;
mod gil;
mod pg;
mod proto;
mod typeref;
mod values;

use pyo3::prelude::*;

/// Panics with `message`, inside the guard every entry point runs in
/// (`errors::guard`): the suite's check that a panic, which would be a bug
/// in amber, reaches Python as `amber.AmberError` of kind `internal`.
#[pyfunction]
fn _panic(message: &str) -> PyResult<()> {
    crate::errors::guard(|| panic!("{message}"))
}

/// `gil_used = true`: amber does not declare free-threading support yet (the
/// codec reads containers in place without per-object locks), so a
/// free-threaded interpreter turns its GIL back on when it imports amber,
/// which keeps every walk sound. What remains before this can be `false`:
/// `docs/compatibility.md`.
#[pymodule(gil_used = true)]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    typeref::init_datetime(py)?;
    ffi::long::init(py)?;
    ffi::text::init(py)?;
    errors::register(m)?;
    m.add_function(wrap_pyfunction!(_panic, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    codec::register(m)?;
    archive::register(m)?;
    pg::register(m)?;
    proto::register(m)?;
    Ok(())
}
