//! Byte views of Python objects: the contiguous buffer of any object with
//! the buffer protocol (held for as long as the view lives), and the bytes
//! of `bytes` and `bytearray` objects read in place.

use pyo3::ffi;
use pyo3::prelude::*;

/// A contiguous read-only view of a buffer-protocol object, released on drop.
/// It holds raw pointers, so it is neither `Send` nor `Sync`: it is made and
/// released on the thread holding the GIL (its bytes may be read elsewhere
/// meanwhile, by work that borrows them, such as `gil::bulk`).
pub struct InputBuffer {
    view: Box<ffi::Py_buffer>,
}

impl InputBuffer {
    pub fn get(data: &Bound<'_, PyAny>) -> PyResult<InputBuffer> {
        // SAFETY: `Py_buffer` is a C struct of pointers and integers, for
        // which all-zero bytes are a valid (empty) value.
        let mut view: Box<ffi::Py_buffer> = Box::new(unsafe { std::mem::zeroed() });
        // SAFETY: `data` is a live object (its Bound) and the GIL is held;
        // on success `view` holds the export until `PyBuffer_Release`.
        if unsafe { ffi::PyObject_GetBuffer(data.as_ptr(), &mut *view, ffi::PyBUF_SIMPLE) } < 0 {
            return Err(PyErr::fetch(data.py()));
        }
        Ok(InputBuffer { view })
    }

    pub fn bytes(&self) -> &[u8] {
        if self.view.len == 0 {
            return &[];
        }
        // SAFETY: a PyBUF_SIMPLE export is `len` contiguous bytes at `buf`,
        // valid until the export is released, which outlives this borrow.
        unsafe { std::slice::from_raw_parts(self.view.buf as *const u8, self.view.len as usize) }
    }
}

impl Drop for InputBuffer {
    fn drop(&mut self) {
        // SAFETY: `view` holds an export taken in `get`, released once here,
        // on the thread holding the GIL (see the type's comment).
        unsafe { ffi::PyBuffer_Release(&mut *self.view) }
    }
}

/// The bytes of a `bytes` or `bytearray` object, valid until Python code
/// runs (which may resize a bytearray).
///
/// # Safety
/// `o` must be a live `bytes` (`bytearray` false) or `bytearray`.
pub unsafe fn bytes_like_slice<'a>(o: *mut ffi::PyObject, bytearray: bool) -> &'a [u8] {
    if bytearray {
        // SAFETY: a bytearray's buffer holds its size in bytes.
        unsafe {
            std::slice::from_raw_parts(
                ffi::PyByteArray_AsString(o) as *const u8,
                ffi::PyByteArray_Size(o) as usize,
            )
        }
    } else {
        // SAFETY: `o` is a live `bytes` (the caller's contract).
        unsafe { bytes_slice(o) }
    }
}

/// The bytes of a `bytes` object.
///
/// # Safety
/// `o` must be a live `bytes`, alive for as long as the slice is used.
pub unsafe fn bytes_slice<'a>(o: *mut ffi::PyObject) -> &'a [u8] {
    // SAFETY: a bytes object's data is its size in bytes, immutable, and
    // lives as long as the object (the caller's contract).
    unsafe {
        std::slice::from_raw_parts(
            ffi::PyBytes_AsString(o) as *const u8,
            ffi::PyBytes_Size(o) as usize,
        )
    }
}

/// A new `bytes` (or `bytearray`, when `mutable`) holding a copy of `src`.
/// A large copy runs with the GIL released (see `gil.rs`) when `src`
/// cannot change meanwhile (`src_fixed`: Rust-owned memory or an immutable
/// `bytes`); the new object is seen by no other thread until returned.
pub fn copy_to_bytes<'py>(
    py: Python<'py>,
    src: &[u8],
    mutable: bool,
    src_fixed: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let n = src.len();
    let len = n as ffi::Py_ssize_t;
    // SAFETY: with a NULL source both constructors make an object of `len`
    // uninitialised bytes (written below before anyone can read them) and
    // return a new reference, or NULL with an exception (MemoryError) set.
    let made = unsafe {
        let p = if mutable {
            ffi::PyByteArray_FromStringAndSize(std::ptr::null(), len)
        } else {
            ffi::PyBytes_FromStringAndSize(std::ptr::null(), len)
        };
        Bound::from_owned_ptr_or_err(py, p)?
    };
    // SAFETY: `made` is the bytes or bytearray just created, held by its
    // Bound and by no one else, so its `n` data bytes are ours to write
    // while this slice lives (a bytearray of size 0 points at a static
    // empty buffer, valid for 0 bytes).
    let dst = unsafe {
        let p = if mutable {
            ffi::PyByteArray_AsString(made.as_ptr())
        } else {
            ffi::PyBytes_AS_STRING(made.as_ptr())
        };
        std::slice::from_raw_parts_mut(p.cast::<u8>().cast_mut(), n)
    };
    if src_fixed {
        crate::gil::bulk(py, n, || dst.copy_from_slice(src))?;
    } else {
        dst.copy_from_slice(src);
    }
    Ok(made)
}
