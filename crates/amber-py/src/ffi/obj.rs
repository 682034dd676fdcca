//! `Obj`: an owned reference to a Python object (decref on drop, incref on
//! clone). The walkers work with raw pointers for speed; `Obj` keeps the
//! ownership rules in one place so error paths cannot leak or double-free.

use pyo3::ffi;
use std::ptr::NonNull;

#[repr(transparent)]
pub struct Obj(NonNull<ffi::PyObject>);

impl Obj {
    /// Take ownership of a new reference; `None` if it is null (an
    /// exception is set).
    #[inline(always)]
    pub unsafe fn from_owned(p: *mut ffi::PyObject) -> Option<Obj> {
        NonNull::new(p).map(Obj)
    }

    /// Make a new reference to a borrowed object.
    #[inline(always)]
    pub unsafe fn from_borrowed(p: *mut ffi::PyObject) -> Obj {
        unsafe { ffi::Py_INCREF(p) };
        Obj(unsafe { NonNull::new_unchecked(p) })
    }

    #[inline(always)]
    pub fn ptr(&self) -> *mut ffi::PyObject {
        self.0.as_ptr()
    }

    /// Give up ownership: the caller now owns the reference.
    #[inline(always)]
    pub fn into_ptr(self) -> *mut ffi::PyObject {
        let p = self.0.as_ptr();
        std::mem::forget(self);
        p
    }
}

impl Clone for Obj {
    #[inline(always)]
    fn clone(&self) -> Obj {
        unsafe { Obj::from_borrowed(self.ptr()) }
    }
}

impl Drop for Obj {
    #[inline(always)]
    fn drop(&mut self) {
        unsafe { ffi::Py_DECREF(self.0.as_ptr()) }
    }
}

/// Ask for the cache line holding the head of object `p` (its type and
/// refcount): the walkers visit objects scattered over the heap, and
/// issuing the loads of the next few early overlaps their cache misses.
#[inline(always)]
pub fn prefetch(p: *const ffi::PyObject) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint; it never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p as *const i8)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
