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
