//! `decimal.Decimal` values as their exact text (`str(d)`), which keeps the
//! sign, every digit, the exponent, and NaN/sNaN payloads and infinities.

use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::typeref;

/// The exact text of a Decimal.
pub fn text_of<'py>(d: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyString>> {
    d.str()
}

/// A Decimal from its text, made exactly (the context's precision does not
/// round a constructed Decimal).
pub fn new_decimal<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    typeref::decimal(py)?.call1((text,))
}
