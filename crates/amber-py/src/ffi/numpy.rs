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

/// The start of NumPy's `PyArrayObject_fields` (`ndarraytypes.h`), the
/// layout behind its `PyArray_DATA`, `PyArray_NDIM`, `PyArray_DIMS` and
/// `PyArray_STRIDES`, the same in NumPy 1.x and 2.x.
#[repr(C)]
struct ArrayFields {
    ob_base: ffi::PyObject,
    data: *mut u8,
    nd: std::ffi::c_int,
    dimensions: *const isize,
    strides: *const isize,
}

/// How many items ahead of the one read [`ObjectColumn::get`] asks the
/// cache for.
const AHEAD: usize = 8;

/// A one-dimensional NumPy object array read in place, item by item, without
/// a list copied out of it. Each read looks at the array as it is then
/// (data, length, stride): Python code run for one item (a `__float__`, a
/// dumper) may resize or reshape the array, and the next read sees that.
pub struct ObjectColumn {
    arr: Py<PyAny>,
}

impl ObjectColumn {
    /// `arr` must be a NumPy array of dtype `object` (an `ndarray` or a
    /// subclass; checked here). NumPy refuses to change an object array's
    /// dtype, so it stays one.
    pub fn new(arr: &Bound<'_, PyAny>) -> PyResult<ObjectColumn> {
        let np = arr.py().import("numpy")?;
        let is_objects = arr.is_instance(&np.getattr("ndarray")?)?
            && arr.getattr("dtype")?.getattr("kind")?.extract::<String>()? == "O";
        if !is_objects {
            return Err(pyo3::exceptions::PyTypeError::new_err(
                "an object column must be a list or a NumPy array of dtype object",
            ));
        }
        Ok(ObjectColumn {
            arr: arr.clone().unbind(),
        })
    }

    /// The number of items the array holds now (0 unless one-dimensional).
    pub fn len(&self) -> usize {
        // SAFETY: `arr` is a live ndarray (checked in `new`; the reference
        // keeps it), so it starts with `ArrayFields`; `dimensions` has `nd`
        // entries, read only when `nd` is 1. The GIL is held by the caller
        // of any method (a `Python` token exists wherever one is called).
        unsafe {
            let a = self.arr.as_ptr() as *const ArrayFields;
            if (*a).nd != 1 {
                return 0;
            }
            usize::try_from(*(*a).dimensions).unwrap_or(0)
        }
    }

    /// Item `i` (a new reference); an error past the end (the array
    /// shrank while it was read). A NULL slot reads as None, as NumPy
    /// reads it.
    pub fn get<'py>(&self, py: Python<'py>, i: usize) -> PyResult<Bound<'py, PyAny>> {
        let len = self.len();
        if i >= len {
            return Err(pyo3::exceptions::PyRuntimeError::new_err(
                "the object array changed size while it was read",
            ));
        }
        // SAFETY: as in `len`: the array is live and one-dimensional with
        // more than `i` items (checked just above, with no Python code run
        // since), so the item's slot is at `data + i * stride` inside its
        // data (read unaligned: an object field of a packed structured
        // array is a view whose slots are not pointer-aligned). The slot
        // holds a live object or NULL; the new reference taken keeps it
        // alive whatever Python code later does to the array.
        unsafe {
            let a = self.arr.as_ptr() as *const ArrayFields;
            let stride = *(*a).strides;
            let slot =
                |k: usize| (*a).data.offset(stride * k as isize) as *const *mut ffi::PyObject;
            if i + AHEAD < len {
                // The items are scattered on the heap: ask for the one a
                // few rows on while this one is written. (Its slot is
                // inside the array, as `i + AHEAD < len`.)
                let next: *mut ffi::PyObject = std::ptr::read_unaligned(slot(i + AHEAD));
                super::obj::prefetch(next);
            }
            let item = std::ptr::read_unaligned(slot(i));
            if item.is_null() {
                return Ok(py.None().into_bound(py));
            }
            Ok(Bound::from_borrowed_ptr(py, item))
        }
    }
}
