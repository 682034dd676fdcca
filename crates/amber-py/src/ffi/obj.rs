//! `Obj`: an owned reference to a Python object (decref on drop, incref on
//! clone). The walkers work with raw pointers for speed; `Obj` keeps the
//! ownership rules in one place so error paths cannot leak or double-free.
//!
//! An `Obj` always owns one reference to a live object. It is neither `Send`
//! nor `Sync` (it holds a raw pointer), so it is made, cloned and dropped
//! only on the thread that holds the GIL: work that releases the GIL runs in
//! `Send` closures that cannot capture it.

use pyo3::ffi;
use std::ptr::NonNull;

#[repr(transparent)]
pub struct Obj(NonNull<ffi::PyObject>);

impl Obj {
    /// Take ownership of a new reference; `None` if it is null (an
    /// exception is set).
    ///
    /// # Safety
    /// `p` is null or a new (owned) reference, whose ownership passes to
    /// the `Obj`; the GIL is held.
    #[inline(always)]
    pub unsafe fn from_owned(p: *mut ffi::PyObject) -> Option<Obj> {
        NonNull::new(p).map(Obj)
    }

    /// Make a new reference to a borrowed object.
    ///
    /// # Safety
    /// `p` points to a live object; the GIL is held.
    #[inline(always)]
    pub unsafe fn from_borrowed(p: *mut ffi::PyObject) -> Obj {
        // SAFETY: `p` is live and the GIL is held (the caller's contract).
        unsafe { ffi::Py_INCREF(p) };
        // SAFETY: a live object's pointer is not null.
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

/// New objects and conversions, with the GIL proven by a `Python` token or
/// a `Bound`.
impl Obj {
    /// A constructor's result: a new reference, or NULL with an exception
    /// set (taken as the error).
    ///
    /// # Safety
    /// `p` is what a CPython constructor returned, on this thread.
    #[inline(always)]
    unsafe fn made(py: pyo3::Python<'_>, p: *mut ffi::PyObject) -> pyo3::PyResult<Obj> {
        // SAFETY: `p` is a new reference or NULL (the caller's contract).
        unsafe { Obj::from_owned(p) }.ok_or_else(|| pyo3::PyErr::fetch(py))
    }

    /// A new reference to `None`.
    #[inline(always)]
    pub fn none(_py: pyo3::Python<'_>) -> Obj {
        // SAFETY: None lives as long as the interpreter; the token proves
        // the GIL is held.
        unsafe { Obj::from_borrowed(ffi::Py_None()) }
    }

    /// A new reference to `True` or `False`.
    #[inline(always)]
    pub fn bool(_py: pyo3::Python<'_>, v: bool) -> Obj {
        // SAFETY: as `none`, for the bools.
        unsafe { Obj::from_borrowed(if v { ffi::Py_True() } else { ffi::Py_False() }) }
    }

    /// A new `int`.
    #[inline(always)]
    pub fn int(py: pyo3::Python<'_>, v: i64) -> pyo3::PyResult<Obj> {
        // SAFETY: the GIL is held (the token); the constructor's result.
        unsafe { Obj::made(py, ffi::PyLong_FromLongLong(v)) }
    }

    /// A new `int` from two's-complement little-endian bytes.
    #[inline]
    pub fn int_from_le_bytes(py: pyo3::Python<'_>, le: &[u8]) -> pyo3::PyResult<Obj> {
        // SAFETY: the GIL is held (the token); the constructor's result.
        unsafe { Obj::made(py, super::long::from_le_bytes(le)) }
    }

    /// A new `float`.
    #[inline(always)]
    pub fn float(py: pyo3::Python<'_>, v: f64) -> pyo3::PyResult<Obj> {
        // SAFETY: the GIL is held (the token); the constructor's result.
        unsafe { Obj::made(py, ffi::PyFloat_FromDouble(v)) }
    }

    /// The reference a `Bound` owned.
    #[inline(always)]
    pub fn from_bound(b: pyo3::Bound<'_, pyo3::PyAny>) -> Obj {
        // SAFETY: `into_ptr` hands over the Bound's owned, non-null
        // reference.
        Obj(unsafe { NonNull::new_unchecked(b.into_ptr()) })
    }

    /// The object as a `Bound`, which takes a reference of its own.
    #[inline(always)]
    pub fn bind<'py>(&self, py: pyo3::Python<'py>) -> pyo3::Bound<'py, pyo3::PyAny> {
        // SAFETY: `self` owns a reference to a live object; the token proves
        // the GIL is held.
        unsafe { pyo3::Bound::from_borrowed_ptr(py, self.ptr()) }
    }
}

impl Clone for Obj {
    #[inline(always)]
    fn clone(&self) -> Obj {
        // SAFETY: `self` owns a reference, so the object is live; an `Obj`
        // exists only where the GIL is held (see the module comment).
        unsafe { Obj::from_borrowed(self.ptr()) }
    }
}

impl Drop for Obj {
    #[inline(always)]
    fn drop(&mut self) {
        // SAFETY: `self` owns this reference and gives it up here, with the
        // GIL held (see the module comment).
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

/// Whether `o` has no other reference than the one its holder has.
#[inline(always)]
pub fn is_sole(o: &pyo3::Bound<'_, pyo3::PyAny>) -> bool {
    // SAFETY: the `Bound` keeps `o` alive and proves the thread is attached;
    // reading the count runs no code.
    unsafe { ffi::Py_REFCNT(o.as_ptr()) == 1 }
}
