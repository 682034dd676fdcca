//! Pausing CPython's cyclic garbage collector.

use std::marker::PhantomData;

use pyo3::ffi;
use pyo3::Python;

/// Pauses the cyclic GC while a decode allocates, restoring its state after.
/// Made with the GIL held (the `Python` token proves it) and neither `Send`
/// nor `Sync`, so it is dropped on that thread, with the GIL held again.
pub struct GcPause {
    was_enabled: bool,
    _not_send: PhantomData<*mut ()>,
}

impl GcPause {
    pub fn new(_py: Python<'_>) -> Self {
        // SAFETY: the GIL is held (the `Python` token).
        let was_enabled = unsafe { ffi::PyGC_Disable() } != 0;
        GcPause {
            was_enabled,
            _not_send: PhantomData,
        }
    }
}

impl Drop for GcPause {
    fn drop(&mut self) {
        if self.was_enabled {
            // SAFETY: dropped on the thread that made it, which holds the
            // GIL wherever a `GcPause` lives.
            unsafe { ffi::PyGC_Enable() };
        }
    }
}

/// Stops the cyclic GC from tracking tuple `t` when none of its items can
/// be part of a cycle: items of a type the GC does not know (int, float,
/// str, bytes, datetime, ...) or tuples it has stopped tracking. This is the
/// rule CPython's own collector applies to tuples it meets
/// (`_PyTuple_MaybeUntrack`); doing it when the tuple is made spares every
/// later collection a walk over rows that cannot hold a cycle. A tuple never
/// changes, so the answer stays right; a dict or any other container item
/// keeps the tuple tracked, since it may later come to hold the tuple.
///
/// # Safety
/// `t` must be a live, exact tuple whose slots are all filled, with the GIL
/// held.
pub unsafe fn untrack_atoms_tuple(t: *mut ffi::PyObject) {
    // SAFETY: `t` is a live tuple (the caller's contract).
    let n = unsafe { ffi::PyTuple_GET_SIZE(t) };
    for i in 0..n {
        // SAFETY: `i` is within the tuple's size and every slot is filled.
        let item = unsafe { ffi::PyTuple_GET_ITEM(t, i) };
        // SAFETY: `item` is live (the tuple holds it) and so is its type.
        let may_be_tracked = unsafe {
            ffi::PyType_IS_GC(ffi::Py_TYPE(item)) != 0
                && (ffi::PyTuple_CheckExact(item) == 0 || ffi::PyObject_GC_IsTracked(item) != 0)
        };
        if may_be_tracked {
            return;
        }
    }
    // SAFETY: `t` is live and, as a tuple, tracked or untracked (calling
    // UnTrack on an untracked object does nothing).
    unsafe { ffi::PyObject_GC_UnTrack(t.cast()) }
}
