//! One door for bulk work that touches no Python object: copying or
//! checking megabytes of plain bytes. The GIL is released while it runs, so
//! other Python threads go on, and a signal that arrived meanwhile (Ctrl-C)
//! is let through as soon as it ends: its handler runs and its exception
//! (KeyboardInterrupt) is raised.
//!
//! Short work runs as it is: releasing and taking back the GIL costs more
//! than copying less than a megabyte.

use pyo3::prelude::*;

/// Work on fewer bytes than this keeps the GIL.
pub const BULK_MIN: usize = 1 << 20;

/// Run `f`, pure Rust work on `n` bytes, with the GIL released when `n` is
/// at least [`BULK_MIN`], then run pending signal handlers.
///
/// `f` must not touch Python objects; what it reads must not change while
/// it runs (memory owned by Rust, an object not yet shared with any other
/// thread, an immutable `bytes`, or a read-only map of a file).
pub fn bulk<T: Send>(py: Python<'_>, n: usize, f: impl FnOnce() -> T + Send) -> PyResult<T> {
    if n < BULK_MIN {
        return Ok(f());
    }
    let r = py.detach(f);
    py.check_signals()?;
    Ok(r)
}
