//! Pausing CPython's cyclic garbage collector.

use pyo3::ffi;

/// Pauses the cyclic GC while a decode allocates, restoring its state after.
pub struct GcPause(bool);

impl GcPause {
    pub fn new() -> Self {
        GcPause(unsafe { ffi::PyGC_Disable() } != 0)
    }
}

impl Drop for GcPause {
    fn drop(&mut self) {
        if self.0 {
            unsafe { ffi::PyGC_Enable() };
        }
    }
}
