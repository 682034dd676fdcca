//! The codec's module functions: `dumps`, `loads` and `frame_length`, and
//! the registry's two hooks; `loads_slice` for the parts that hold frames
//! (`bytea` columns of amber frames).

use amber_core::codec::error::DecodeError;
use amber_core::codec::header::{frame_need, Need};
use amber_core::codec::walker::{decode, Limits, DEFAULT_MAX_DEPTH};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use super::{decode, encode, registry};
use crate::ffi::buffer::InputBuffer;
use crate::ffi::gc::GcPause;
use crate::ffi::obj::Obj;

/// Called once by `amber._registry`: the classifier and the name table.
#[pyfunction]
pub(super) fn _install(py: Python<'_>, classify: Py<PyAny>, by_name: Py<PyDict>) -> PyResult<()> {
    crate::errors::guard(|| registry::install(py, classify, by_name))
}

/// Forget cached type classifications (after the registry changes).
#[pyfunction]
pub(super) fn _clear_type_cache(py: Python<'_>) -> PyResult<()> {
    crate::errors::guard(|| registry::clear_cache(py))
}

/// Default size from which bytes and arrays go to `buffer_callback`.
pub const DEFAULT_OOB_THRESHOLD: usize = 1 << 16;
// The signatures spell the defaults out so `__text_signature__` shows them.
const _: () = assert!(DEFAULT_MAX_DEPTH == 1000 && DEFAULT_OOB_THRESHOLD == 65536);

/// Encode `obj` as one amber frame.
#[pyfunction]
#[pyo3(signature = (obj, /, *, identity=false, max_depth=1000, buffer_callback=None, oob_threshold=65536, deterministic=false))]
pub fn dumps<'py>(
    py: Python<'py>,
    obj: &Bound<'py, PyAny>,
    identity: bool,
    max_depth: i128,
    buffer_callback: Option<&Bound<'py, PyAny>>,
    oob_threshold: i128,
    deterministic: bool,
) -> PyResult<Bound<'py, PyBytes>> {
    crate::errors::guard(|| {
        let max_depth = count_arg(max_depth, "max_depth")?;
        let oob_threshold = count_arg(oob_threshold, "oob_threshold")?;
        let opts = encode::Options {
            identity,
            max_depth,
            buffer_callback: buffer_callback.map(|cb| {
                // SAFETY: `cb` is a live object; the new reference is owned by the Obj.
                unsafe { Obj::from_borrowed(cb.as_ptr()) }
            }),
            oob_threshold,
            deterministic,
        };
        encode::dumps(py, obj, &opts)
    })
}

/// A count argument (`max_depth`, `oob_threshold`): from 0 to 2**63 - 1.
pub(super) fn count_arg(v: i128, name: &str) -> PyResult<usize> {
    match i64::try_from(v) {
        Ok(n) if n >= 0 => Ok(n as usize),
        _ => Err(PyValueError::new_err(format!(
            "{name} must be from 0 to 2**63 - 1, got {v}"
        ))),
    }
}

/// Decode one amber frame from any object with the buffer protocol.
#[pyfunction]
#[pyo3(signature = (data, /, *, max_depth=1000, buffers=None, zero_copy=false))]
pub fn loads<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    max_depth: i128,
    buffers: Option<&Bound<'py, PyAny>>,
    zero_copy: bool,
) -> PyResult<Bound<'py, PyAny>> {
    crate::errors::guard(|| {
        let max_depth = count_arg(max_depth, "max_depth")?;
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
        decode_with(py, input.bytes(), &opts, max_depth)
    })
}

/// Decode one in-band amber frame from bytes Rust holds (a value in a
/// PostgreSQL result), with the default depth limit: every value is built
/// anew, none refers to `bytes`. They are copied into a `bytes` object
/// first, which arrays and tables are made from.
pub fn loads_slice<'py>(py: Python<'py>, bytes: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    let input = PyBytes::new(py, bytes);
    let opts = decode::Options {
        input: input.clone().into_any(),
        buffers: None,
        zero_copy: false,
    };
    decode_with(py, input.as_bytes(), &opts, DEFAULT_MAX_DEPTH)
}

pub(super) fn decode_with<'py>(
    py: Python<'py>,
    bytes: &[u8],
    opts: &decode::Options<'py>,
    max_depth: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let mut builder = decode::PyBuilder::new(py, opts);
    let result = {
        let _gc = GcPause::new(py);
        decode(bytes, &mut builder, Limits { max_depth })
    };
    match result {
        // SAFETY: the builder's value is a new reference, handed over here.
        Ok(v) => Ok(unsafe { Bound::from_owned_ptr(py, v.into_ptr()) }),
        Err(e) => Err(decode::to_pyerr(py, e)),
    }
}

/// Total length of the frame whose first bytes are `header`, or, as a
/// negative number, how many more header bytes are needed (8 for none).
/// Raises `DecodeError` as soon as the bytes given cannot start a frame.
#[pyfunction]
pub fn frame_length(py: Python<'_>, header: &[u8]) -> PyResult<i64> {
    crate::errors::guard(|| match frame_need::<PyErr>(header) {
        Ok(Need::More(n)) => Ok(-(n as i64)),
        Ok(Need::Frame(n)) => i64::try_from(n).map_err(|_| {
            let e = DecodeError::<PyErr>::limit(4, "frame length is too large");
            decode::to_pyerr(py, e)
        }),
        Err(e) => Err(decode::to_pyerr(py, e)),
    })
}
