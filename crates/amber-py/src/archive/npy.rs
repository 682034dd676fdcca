//! `.npy` headers written and parsed (a Python-literal dict, read without
//! `eval`).

use amber_core::archive::npy::{self, Literal};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};

use super::bytes::fail;
use crate::ffi::buffer::InputBuffer;

#[pyfunction]
pub fn npy_header<'py>(
    py: Python<'py>,
    descr: &str,
    fortran_order: bool,
    shape: Vec<u64>,
) -> Bound<'py, PyBytes> {
    PyBytes::new(py, &npy::npy_header(descr, fortran_order, &shape))
}

/// `(descr, fortran_order, shape, data_offset)` from the start of an `.npy`
/// file; `descr` as plain Python values.
#[pyfunction]
pub fn npy_parse_header<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyTuple>> {
    crate::errors::guard(|| {
        let view = InputBuffer::get(data)?;
        let h = npy::parse_npy_header(view.bytes()).map_err(fail(py))?;
        let shape = PyTuple::new(py, &h.shape)?;
        let descr = literal(py, &h.descr)?;
        PyTuple::new(
            py,
            [
                descr,
                h.fortran_order.into_pyobject(py)?.to_owned().into_any(),
                shape.into_any(),
                h.data_offset.into_pyobject(py)?.into_any(),
            ],
        )
    })
}

pub(super) fn literal<'py>(py: Python<'py>, v: &Literal) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Literal::Str(s) => s.into_pyobject(py)?.into_any(),
        Literal::Int(n) => n.into_pyobject(py)?.into_any(),
        Literal::BigInt(t) => py.get_type::<pyo3::types::PyInt>().call1((t,))?,
        Literal::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Literal::None => py.None().into_bound(py),
        Literal::Tuple(items) => PyTuple::new(
            py,
            items
                .iter()
                .map(|x| literal(py, x))
                .collect::<PyResult<Vec<_>>>()?,
        )?
        .into_any(),
        Literal::List(items) => PyList::new(
            py,
            items
                .iter()
                .map(|x| literal(py, x))
                .collect::<PyResult<Vec<_>>>()?,
        )?
        .into_any(),
        Literal::Dict(items) => {
            let d = PyDict::new(py);
            for (k, x) in items {
                d.set_item(k, literal(py, x)?)?;
            }
            d.into_any()
        }
    })
}
