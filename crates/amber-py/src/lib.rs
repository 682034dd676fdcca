//! `amber._native`: the thin PyO3 edge over amber-core.
//!
//! - `encode/`: the object walker that writes frames;
//! - `decode/`: the builder that amber-core's walker drives;
//! - `types.rs`: cached classes and the registry bridge;
//! - `errors.rs`: the exception classes.

mod decode;
mod dictiter;
mod encode;
mod errors;
mod intfast;
mod obj;
mod state;
mod types;

use amber_core::{Limits, DEFAULT_MAX_DEPTH};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

/// Default size from which bytes and arrays go to `buffer_callback`.
const DEFAULT_OOB_THRESHOLD: usize = 1 << 16;
// The signatures spell the defaults out so `__text_signature__` shows them.
const _: () = assert!(DEFAULT_MAX_DEPTH == 1000 && DEFAULT_OOB_THRESHOLD == 65536);

/// Encode `obj` as one amber frame.
#[pyfunction]
#[pyo3(signature = (obj, /, *, identity=false, max_depth=1000, buffer_callback=None, oob_threshold=65536))]
fn dumps<'py>(
    py: Python<'py>,
    obj: &Bound<'py, PyAny>,
    identity: bool,
    max_depth: usize,
    buffer_callback: Option<&Bound<'py, PyAny>>,
    oob_threshold: usize,
) -> PyResult<Bound<'py, PyBytes>> {
    let opts = encode::Options {
        identity,
        max_depth,
        buffer_callback: buffer_callback.map(|cb| unsafe { obj::Obj::from_borrowed(cb.as_ptr()) }),
        oob_threshold,
    };
    encode::dumps(py, obj, &opts)
}

/// A contiguous read-only view of a buffer-protocol object, released on drop.
struct InputBuffer {
    view: Box<ffi::Py_buffer>,
}

impl InputBuffer {
    fn get(data: &Bound<'_, PyAny>) -> PyResult<InputBuffer> {
        let mut view: Box<ffi::Py_buffer> = Box::new(unsafe { std::mem::zeroed() });
        if unsafe { ffi::PyObject_GetBuffer(data.as_ptr(), &mut *view, ffi::PyBUF_SIMPLE) } < 0 {
            return Err(PyErr::fetch(data.py()));
        }
        Ok(InputBuffer { view })
    }

    fn bytes(&self) -> &[u8] {
        if self.view.len == 0 {
            return &[];
        }
        unsafe { std::slice::from_raw_parts(self.view.buf as *const u8, self.view.len as usize) }
    }
}

impl Drop for InputBuffer {
    fn drop(&mut self) {
        unsafe { ffi::PyBuffer_Release(&mut *self.view) }
    }
}

/// Pauses the cyclic GC while a decode allocates, restoring its state after.
struct GcPause(bool);

impl GcPause {
    fn new() -> Self {
        GcPause(unsafe { ffi::PyGC_Disable() } != 0)
    }
}

impl Drop for GcPause {
    fn drop(&mut self) {
        if self.0 {
            unsafe { ffi::PyGC_Enable() };
        }
    }
}

/// Decode one amber frame from any object with the buffer protocol.
#[pyfunction]
#[pyo3(signature = (data, /, *, max_depth=1000, buffers=None, zero_copy=false))]
fn loads<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    max_depth: usize,
    buffers: Option<&Bound<'py, PyAny>>,
    zero_copy: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let input = InputBuffer::get(data)?;
    let buffers = match buffers {
        None => None,
        Some(b) => Some(b.try_iter()?.collect::<PyResult<Vec<_>>>()?),
    };
    let opts = decode::Options {
        input: data.clone(),
        buffers,
        zero_copy,
    };
    let mut builder = decode::PyBuilder::new(py, &opts);
    let result = {
        let _gc = GcPause::new();
        amber_core::decode(input.bytes(), &mut builder, Limits { max_depth })
    };
    match result {
        Ok(v) => Ok(unsafe { Bound::from_owned_ptr(py, v.into_ptr()) }),
        Err(e) => Err(decode::to_pyerr(py, e)),
    }
}

/// Total length of the frame whose header starts `header` (at least 8
/// bytes; 16 if the long flag is set), or the number of header bytes still
/// needed as a negative number.
#[pyfunction]
fn frame_length(py: Python<'_>, header: &[u8]) -> PyResult<i64> {
    if header.len() >= 3
        && header[0] == amber_core::format::MAGIC
        && header[2] & amber_core::format::FLAG_LONG != 0
        && header.len() < amber_core::format::HEADER_LEN_LONG
    {
        return Ok(-((amber_core::format::HEADER_LEN_LONG - header.len()) as i64));
    }
    match amber_core::parse_header::<PyErr>(header) {
        Ok(h) => h
            .frame_len()
            .and_then(|n| i64::try_from(n).ok())
            .ok_or_else(|| {
                let e = amber_core::DecodeError::<PyErr>::format(4, "frame length is too large");
                decode::to_pyerr(py, e)
            }),
        Err(e) => Err(decode::to_pyerr(py, e)),
    }
}

/// Called once by `amber._registry`: the classifier and the name table.
#[pyfunction]
fn _install(py: Python<'_>, classify: Py<PyAny>, by_name: Py<PyDict>) -> PyResult<()> {
    types::install(py, classify, by_name)
}

/// Forget cached type classifications (after the registry changes).
#[pyfunction]
fn _clear_type_cache(py: Python<'_>) -> PyResult<()> {
    types::clear_cache(py)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    types::init_datetime(py)?;
    intfast::init(py)?;
    errors::register(m)?;
    m.add_function(wrap_pyfunction!(dumps, m)?)?;
    m.add_function(wrap_pyfunction!(loads, m)?)?;
    m.add_function(wrap_pyfunction!(frame_length, m)?)?;
    m.add_function(wrap_pyfunction!(_install, m)?)?;
    m.add_function(wrap_pyfunction!(_clear_type_cache, m)?)?;
    m.add("FORMAT_VERSION", amber_core::format::VERSION)?;
    m.add("DEFAULT_MAX_DEPTH", DEFAULT_MAX_DEPTH)?;
    m.add("DEFAULT_OOB_THRESHOLD", DEFAULT_OOB_THRESHOLD)?;
    m.add("HEADER_LEN", amber_core::format::HEADER_LEN)?;
    let kinds = PyDict::new(py);
    for (name, code) in types::kind::NAMES {
        kinds.set_item(name, code)?;
    }
    m.add("KINDS", kinds)?;
    let modes = PyDict::new(py);
    for (name, code) in [
        ("ENUM", types::mode::ENUM),
        ("DICT", types::mode::DICT),
        ("SLOTS", types::mode::SLOTS),
        ("NAMEDTUPLE", types::mode::NAMEDTUPLE),
        ("HOOK", types::mode::HOOK),
    ] {
        modes.set_item(name, code)?;
    }
    m.add("MODES", modes)?;
    Ok(())
}
