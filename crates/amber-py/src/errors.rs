//! The one place amber's exception classes are defined.
//!
//! `AmberError` is the root; `DecodeError` is also a `ValueError` and
//! `EncodeError` also a `TypeError`, so code catching the standard classes
//! keeps working. Both carry `offset`/`path` attributes where known.

use pyo3::exceptions::{PyException, PyMemoryError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};

pyo3::create_exception!(
    amber,
    AmberError,
    PyException,
    "Base class of every error amber raises."
);

static DECODE_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static ENCODE_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

fn subclass(
    py: Python<'_>,
    name: &str,
    doc: &str,
    std_base: Bound<'_, PyType>,
) -> PyResult<Py<PyType>> {
    let bases = PyTuple::new(py, [py.get_type::<AmberError>(), std_base])?;
    let ns = PyDict::new(py);
    ns.set_item("__module__", "amber")?;
    ns.set_item("__doc__", doc)?;
    let t = py.get_type::<PyType>().call1((name, bases, ns))?;
    Ok(t.cast_into::<PyType>()?.unbind())
}

pub fn decode_error(py: Python<'_>) -> &Bound<'_, PyType> {
    DECODE_ERROR
        .get_or_init(py, || {
            subclass(
                py,
                "DecodeError",
                "The input is not valid amber data; `offset` and `path` say where.",
                py.get_type::<PyValueError>(),
            )
            .expect("creating amber.DecodeError")
        })
        .bind(py)
}

pub fn encode_error(py: Python<'_>) -> &Bound<'_, PyType> {
    ENCODE_ERROR
        .get_or_init(py, || {
            subclass(
                py,
                "EncodeError",
                "An object cannot be encoded; `path` says which.",
                py.get_type::<PyTypeError>(),
            )
            .expect("creating amber.EncodeError")
        })
        .bind(py)
}

/// Whether `err` says nothing about the data and must reach the caller as
/// it is, never wrapped as an `EncodeError` or `DecodeError`: running out of
/// memory, and exceptions that are not `Exception`s (`KeyboardInterrupt`,
/// `SystemExit`).
pub fn passes_through(py: Python<'_>, err: &PyErr) -> bool {
    err.is_instance_of::<PyMemoryError>(py) || !err.is_instance_of::<PyException>(py)
}

/// Build an exception instance of `cls` with `msg`, optional `offset` and
/// `path` attributes and an optional cause.
pub fn make(
    py: Python<'_>,
    cls: &Bound<'_, PyType>,
    msg: String,
    offset: Option<usize>,
    path: Option<String>,
    cause: Option<PyErr>,
) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let exc = cls.call1((msg.clone(),))?;
        exc.setattr("offset", offset)?;
        exc.setattr("path", path.clone())?;
        let err = PyErr::from_value(exc);
        if let Some(c) = cause {
            err.set_cause(py, Some(c));
        }
        Ok(err)
    };
    build().unwrap_or_else(|e| e)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("AmberError", py.get_type::<AmberError>())?;
    m.add("DecodeError", decode_error(py))?;
    m.add("EncodeError", encode_error(py))?;
    Ok(())
}
