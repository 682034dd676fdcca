//! Lists and tuples read and filled in place: their length, an item, and a
//! list's item array, through CPython's own macros (the layouts of
//! `PyListObject` and `PyTupleObject`), so no other file reads them.
//!
//! Every function is `#[inline(always)]`: each is one or two loads, on the
//! encoder's hottest path.

use pyo3::ffi;

/// A list's length.
///
/// # Safety
/// `o` is a live `list` (or subclass).
#[inline(always)]
pub unsafe fn list_len(o: *mut ffi::PyObject) -> usize {
    // SAFETY: the caller guarantees a live list.
    unsafe { ffi::PyList_GET_SIZE(o) as usize }
}

/// A list's item array (`ob_item`), for reading a run of items without
/// reloading it.
///
/// # Safety
/// `o` is a live `list`. The array moves when the list is resized, so it
/// may be read only while no Python code runs, and only below the length.
#[inline(always)]
pub unsafe fn list_items(o: *mut ffi::PyObject) -> *const *mut ffi::PyObject {
    // SAFETY: the caller guarantees a live list, whose layout is
    // `PyListObject` (no build of CPython amber supports changes it).
    unsafe { (*(o as *mut ffi::PyListObject)).ob_item }
}

/// Put `item` (a new reference, which the list takes) at index `i` of a
/// list made by `PyList_New` and not yet filled there.
///
/// # Safety
/// `o` is a live list no other code has seen yet, `i` < its length, and
/// slot `i` is empty (NULL), so nothing is leaked.
#[inline(always)]
pub unsafe fn list_fill(o: *mut ffi::PyObject, i: usize, item: *mut ffi::PyObject) {
    // SAFETY: the caller guarantees the conditions above.
    unsafe { ffi::PyList_SET_ITEM(o, i as ffi::Py_ssize_t, item) }
}

/// A tuple's length.
///
/// # Safety
/// `o` is a live `tuple` (or subclass).
#[inline(always)]
pub unsafe fn tuple_len(o: *mut ffi::PyObject) -> usize {
    // SAFETY: the caller guarantees a live tuple.
    unsafe { ffi::PyTuple_GET_SIZE(o) as usize }
}

/// Item `i` of a tuple, borrowed (alive as long as the tuple).
///
/// # Safety
/// `o` is a live `tuple` and `i` < its length.
#[inline(always)]
pub unsafe fn tuple_item(o: *mut ffi::PyObject, i: usize) -> *mut ffi::PyObject {
    // SAFETY: the caller guarantees a live tuple and an index in range.
    unsafe { ffi::PyTuple_GET_ITEM(o, i as ffi::Py_ssize_t) }
}

/// Put `item` (a new reference, which the tuple takes) at index `i` of a
/// tuple made by `PyTuple_New` and not yet filled there.
///
/// # Safety
/// As [`list_fill`], for a tuple.
#[inline(always)]
pub unsafe fn tuple_fill(o: *mut ffi::PyObject, i: usize, item: *mut ffi::PyObject) {
    // SAFETY: the caller guarantees the conditions of `list_fill`.
    unsafe { ffi::PyTuple_SET_ITEM(o, i as ffi::Py_ssize_t, item) }
}
