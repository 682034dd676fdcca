//! Byte views of Python objects: the contiguous buffer of any object with
//! the buffer protocol (held for as long as the view lives), and the bytes
//! of `bytes` and `bytearray` objects read in place.

use pyo3::ffi;
use pyo3::prelude::*;

/// A contiguous read-only view of a buffer-protocol object, released on drop.
pub struct InputBuffer {
    view: Box<ffi::Py_buffer>,
}

impl InputBuffer {
    pub fn get(data: &Bound<'_, PyAny>) -> PyResult<InputBuffer> {
        let mut view: Box<ffi::Py_buffer> = Box::new(unsafe { std::mem::zeroed() });
        if unsafe { ffi::PyObject_GetBuffer(data.as_ptr(), &mut *view, ffi::PyBUF_SIMPLE) } < 0 {
            return Err(PyErr::fetch(data.py()));
        }
        Ok(InputBuffer { view })
    }

    pub fn bytes(&self) -> &[u8] {
        if self.view.len == 0 {
            return &[];
        }
        unsafe { std::slice::from_raw_parts(self.view.buf as *const u8, self.view.len as usize) }
    }
}

impl Drop for InputBuffer {
    fn drop(&mut self) {
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
        unsafe { bytes_slice(o) }
    }
}

/// The bytes of a `bytes` object.
pub unsafe fn bytes_slice<'a>(o: *mut ffi::PyObject) -> &'a [u8] {
    unsafe {
        std::slice::from_raw_parts(
            ffi::PyBytes_AsString(o) as *const u8,
            ffi::PyBytes_Size(o) as usize,
        )
    }
}
