//! A NumPy object array filled in place: the references of a `Vec` move
//! into the array's slots, where building a list and letting NumPy copy it
//! (`np.fromiter`) took and dropped a reference per value twice.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// A one-dimensional NumPy array of dtype `object` holding `items`, whose
/// references move into it.
pub fn object_array<'py>(py: Python<'py>, items: Vec<Py<PyAny>>) -> PyResult<Bound<'py, PyAny>> {
    let np = py.import("numpy")?;
    let arr = np
        .getattr("empty")?
        .call1((items.len(), np.getattr("object_")?))?;
    let iface = arr.getattr("__array_interface__")?.cast_into::<PyDict>()?;
    let contiguous = iface.get_item("strides")?.is_none_or(|s| s.is_none());
    let typestr: String = iface
        .get_item("typestr")?
        .map(|t| t.extract())
        .transpose()?
        .unwrap_or_default();
    let (address, _read_only): (usize, bool) = match iface.get_item("data")? {
        Some(d) => d.extract()?,
        None => (0, true),
    };
    if !contiguous || typestr != "|O" || (address == 0 && !items.is_empty()) {
        return Err(pyo3::exceptions::PyRuntimeError::new_err(
            "numpy.empty(n, object) did not give a contiguous object array",
        ));
    }
    let slots = address as *mut *mut ffi::PyObject;
    for (i, item) in items.into_iter().enumerate() {
        // SAFETY: `arr` is the array `numpy.empty` just made and only this
        // function holds: `len` contiguous slots of `PyObject*` (checked
        // above: no strides, type `|O`) starting at `slots`, each holding a
        // reference (to None) or NULL, and `i < len`. The slot takes the
        // item's reference; the one it held is released, with the GIL held.
        unsafe {
            let slot = slots.add(i);
            let old = *slot;
            *slot = item.into_ptr();
            ffi::Py_XDECREF(old);
        }
    }
    Ok(arr)
}
