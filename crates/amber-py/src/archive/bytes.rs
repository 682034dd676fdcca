//! Reading any buffer `amber.archive` hands over: without the GIL when its
//! bytes cannot change meanwhile, and archive errors as amber's exceptions.

use amber_core::archive::error::ArchiveError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyMemoryView};

use crate::errors;
use crate::ffi::buffer::{copy_to_bytes, InputBuffer};

pub(super) fn fail(py: Python<'_>) -> impl Fn(ArchiveError) -> PyErr + '_ {
    move |e| errors::archive(py, e)
}

/// Run `f` on the bytes of `data` (any buffer), without the GIL when they
/// are many and cannot change meanwhile: a `bytes`, or a read-only
/// memoryview of a `bytes` or of a map (the views `amber.archive` reads
/// through). Other buffers (a bytearray, say) could be changed by another
/// thread, so the GIL is kept.
pub(super) fn with_bytes<T: Send>(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    f: impl FnOnce(&[u8]) -> T + Send,
) -> PyResult<T> {
    let view = InputBuffer::get(data)?;
    let bytes = view.bytes();
    if fixed(data)? {
        crate::gil::bulk(py, bytes.len(), || f(bytes))
    } else {
        Ok(f(bytes))
    }
}

pub(super) fn fixed(data: &Bound<'_, PyAny>) -> PyResult<bool> {
    if data.is_exact_instance_of::<PyBytes>() {
        return Ok(true);
    }
    let Ok(mv) = data.cast::<PyMemoryView>() else {
        return Ok(false);
    };
    let py = data.py();
    if !mv.getattr(intern!(py, "readonly"))?.is_truthy()? {
        return Ok(false);
    }
    let base = mv.getattr(intern!(py, "obj"))?;
    Ok(base.is_exact_instance_of::<PyBytes>() || base.is_instance(crate::typeref::mmap(py)?)?)
}

pub(super) fn new_bytes<'py>(py: Python<'py>, v: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    copy_to_bytes(py, v, false, true)
}
