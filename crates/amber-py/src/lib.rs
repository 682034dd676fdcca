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
//! - `ffi/`: every raw read of CPython's objects and layouts;
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
use pyo3::types::PyDict;

/// The Rust side's allocator: parsed messages, their containers and the
/// encoders' buffers make many small allocations, and mimalloc's take and
/// give back about a third of the system allocator's instructions. Python
/// objects still come from CPython's own allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Called once by `amber._registry`: the classifier and the name table.
#[pyfunction]
fn _install(py: Python<'_>, classify: Py<PyAny>, by_name: Py<PyDict>) -> PyResult<()> {
    crate::errors::guard(|| codec::registry::install(py, classify, by_name))
}

/// Forget cached type classifications (after the registry changes).
#[pyfunction]
fn _clear_type_cache(py: Python<'_>) -> PyResult<()> {
    crate::errors::guard(|| codec::registry::clear_cache(py))
}

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
    m.add_function(wrap_pyfunction!(codec::dumps, m)?)?;
    m.add_function(wrap_pyfunction!(codec::loads, m)?)?;
    m.add_function(wrap_pyfunction!(codec::frame_length, m)?)?;
    m.add_function(wrap_pyfunction!(_install, m)?)?;
    m.add_function(wrap_pyfunction!(_clear_type_cache, m)?)?;
    m.add_function(wrap_pyfunction!(_panic, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("FORMAT_VERSION", amber_core::codec::format::VERSION)?;
    m.add("DEFAULT_MAX_DEPTH", amber_core::DEFAULT_MAX_DEPTH)?;
    m.add("DEFAULT_OOB_THRESHOLD", codec::DEFAULT_OOB_THRESHOLD)?;
    m.add("HEADER_LEN", amber_core::codec::format::HEADER_LEN)?;
    let kinds = PyDict::new(py);
    for (name, kind) in codec::registry::Kind::ALL {
        kinds.set_item(name, kind as u8)?;
    }
    m.add("KINDS", kinds)?;
    m.add_class::<codec::registry::Entry>()?;
    archive::register(m)?;
    pg::register(m)?;
    proto::register(m)?;
    Ok(())
}
