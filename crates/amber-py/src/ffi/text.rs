//! Making `str` objects from UTF-8 that is already validated.

use pyo3::ffi;

/// A new `str` holding `s`, or NULL with an exception set. When `s` is
/// ASCII it is copied straight into a new compact ASCII object (what
/// CPython's UTF-8 decoder would build, without decoding again); otherwise
/// CPython decodes it.
///
/// # Safety
/// The GIL is held.
#[inline(always)]
pub unsafe fn new_str(s: &str, ascii: bool) -> *mut ffi::PyObject {
    if ascii {
        // SAFETY: the GIL is held (the caller's contract); the constructor
        // returns a new reference or NULL.
        let o = unsafe { ffi::PyUnicode_New(s.len() as ffi::Py_ssize_t, 127) };
        if !o.is_null() {
            // SAFETY: a new compact ASCII str (max char 127) of `s.len()`
            // characters has room for that many bytes at `PyUnicode_DATA`,
            // and no one else has seen it yet; `s` is ASCII (the caller
            // says so), so the object's invariants hold once it is filled.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    s.as_ptr(),
                    ffi::PyUnicode_DATA(o) as *mut u8,
                    s.len(),
                )
            };
        }
        o
    } else {
        // SAFETY: `s` is valid UTF-8 for its length, borrowed for the call.
        unsafe {
            ffi::PyUnicode_DecodeUTF8(
                s.as_ptr().cast(),
                s.len() as ffi::Py_ssize_t,
                c"strict".as_ptr(),
            )
        }
    }
}

/// A new `str` holding `s` (ASCII by a plain copy, see [`new_str`]).
pub fn str_object(py: pyo3::Python<'_>, s: &str) -> pyo3::PyResult<pyo3::Py<pyo3::PyAny>> {
    // SAFETY: `py` proves the GIL is held.
    let p = unsafe { new_str(s, s.is_ascii()) };
    // SAFETY: `p` is a new reference, or NULL with an exception set.
    unsafe { pyo3::Bound::from_owned_ptr_or_err(py, p) }.map(pyo3::Bound::unbind)
}
