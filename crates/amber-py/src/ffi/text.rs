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
pub fn string<'py>(
    py: pyo3::Python<'py>,
    s: &str,
) -> pyo3::PyResult<pyo3::Bound<'py, pyo3::types::PyString>> {
    // SAFETY: `py` proves the GIL is held.
    let p = unsafe { new_str(s, s.is_ascii()) };
    // SAFETY: `p` is a new reference to a `str`, or NULL with an exception
    // set.
    unsafe { pyo3::Bound::from_owned_ptr_or_err(py, p).map(|o| o.cast_into_unchecked()) }
}

/// A new `str` of the bytes `b`, or `None` when they are not UTF-8 (ASCII,
/// the common case, is checked word by word and copied).
pub fn utf8_object(
    py: pyo3::Python<'_>,
    b: &[u8],
) -> Option<pyo3::PyResult<pyo3::Py<pyo3::PyAny>>> {
    let ascii = b.is_ascii();
    let s = if ascii {
        // SAFETY: ASCII is valid UTF-8.
        unsafe { std::str::from_utf8_unchecked(b) }
    } else {
        std::str::from_utf8(b).ok()?
    };
    // SAFETY: `py` proves the GIL is held; `ascii` is true only for ASCII.
    let p = unsafe { new_str(s, ascii) };
    // SAFETY: `p` is a new reference, or NULL with an exception set.
    Some(unsafe { pyo3::Bound::from_owned_ptr_or_err(py, p) }.map(pyo3::Bound::unbind))
}
