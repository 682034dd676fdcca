//! Slots set on a type after it is made, and a class's attribute as its
//! MRO finds it: the paths of a field read that skip pyo3's and CPython's
//! generic layers.
//!
//! - [`install_descr_get`]: a descriptor type's `tp_descr_get` becomes a
//!   raw function that tries [`FastGet::fast_get`] first and otherwise
//!   calls the slot pyo3 made, kept aside, so that every other read
//!   (on the class, on another class, or what the fast path leaves) takes
//!   pyo3's path with its bookkeeping;
//! - [`type_lookup`]: an attribute of a class through its MRO and the
//!   interpreter's type cache (`_PyType_Lookup`), as `getattr` on an
//!   instance finds it before looking at the instance.
//!
//! `_PyType_Lookup` (3.11 to 3.14) returns a borrowed reference, which is
//! only safe with the GIL: free-threaded and `AMBER_PORTABLE` builds walk
//! `__mro__` instead and install no slot.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::pyclass::boolean_struct::True;
use pyo3::types::{PyString, PyType};
use pyo3::PyClass;

#[cfg(not(any(Py_GIL_DISABLED, amber_portable)))]
unsafe extern "C" {
    /// CPython's lookup of an attribute in a type's MRO, through the type
    /// cache: a borrowed reference, or null (no exception set) if absent.
    fn _PyType_Lookup(ty: *mut ffi::PyTypeObject, name: *mut ffi::PyObject) -> *mut ffi::PyObject;
}

/// A descriptor type whose reads on instances have a path in Rust.
#[cfg_attr(any(Py_GIL_DISABLED, amber_portable), allow(dead_code))]
pub trait FastGet: PyClass<Frozen = True> + Sync {
    /// The value of descriptor `self` read on instance `obj`, or `None` to
    /// take the type's own (pyo3) `__get__`. Runs without pyo3's attach
    /// count: a `Bound` it drops is decref'd at once, a `Py` at pyo3's next
    /// call (pyo3's pool of deferred decrefs: a lock, and a drain later),
    /// so its usual path should drop none (sub-messages built here hold
    /// their input as a `Bound` while they are built, for this).
    fn fast_get(&self, py: Python<'_>, obj: &Bound<'_, PyAny>) -> Option<Got>;

    /// The error a panic in [`fast_get`](Self::fast_get) becomes.
    fn panicked(py: Python<'_>, payload: &(dyn Any + Send)) -> PyErr;

    /// Where the type's own `tp_descr_get` is kept once replaced.
    fn saved_slot() -> &'static OnceLock<ffi::descrgetfunc>;
}

/// What [`FastGet::fast_get`] read: a new reference, or null with the
/// thread's exception set (what a `tp_descr_get` returns). One word, so it
/// comes back in a register: a `PyResult` comes back through memory, and
/// moving it on from there stalled every read (a wide load over the
/// narrower stores just made, which the CPU cannot forward).
pub struct Got(*mut ffi::PyObject);

impl Got {
    /// A value read.
    #[inline(always)]
    pub fn value(v: Py<PyAny>) -> Got {
        Got(v.into_ptr())
    }

    /// `r` as a [`Got`]: its error, if any, set as the thread's exception.
    #[inline(always)]
    pub fn from(py: Python<'_>, r: PyResult<Py<PyAny>>) -> Got {
        match r {
            Ok(v) => Got::value(v),
            Err(e) => {
                e.restore(py);
                Got(std::ptr::null_mut())
            }
        }
    }
}

/// `T`'s `tp_descr_get`: [`FastGet::fast_get`], then the kept pyo3 slot.
#[cfg_attr(any(Py_GIL_DISABLED, amber_portable), allow(dead_code))]
unsafe extern "C" fn descr_get<T: FastGet>(
    d: *mut ffi::PyObject,
    obj: *mut ffi::PyObject,
    owner: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    if !obj.is_null() {
        // SAFETY: CPython calls a type's `tp_descr_get` with the thread
        // attached, `d` an instance of that type (this slot is installed on
        // `T` only, and `T` is final: pyo3 classes without `subclass` cannot
        // be derived from) and `obj` a live object it holds for the call.
        let (py, this, o) = unsafe {
            let py = Python::assume_attached();
            let this = Bound::ref_from_ptr(py, &d).cast_unchecked::<T>();
            (py, this, Bound::ref_from_ptr(py, &obj))
        };
        match catch_unwind(AssertUnwindSafe(|| this.get().fast_get(py, o))) {
            Ok(Some(Got(v))) => return v,
            Ok(None) => {}
            Err(payload) => {
                T::panicked(py, payload.as_ref()).restore(py);
                return std::ptr::null_mut();
            }
        }
    }
    match T::saved_slot().get() {
        // SAFETY: the slot pyo3 made for `T`, called as CPython would.
        Some(f) => unsafe { f(d, obj, owner) },
        None => {
            // SAFETY: as above, the thread is attached.
            let py = unsafe { Python::assume_attached() };
            pyo3::exceptions::PySystemError::new_err("descriptor slot not installed").restore(py);
            std::ptr::null_mut()
        }
    }
}

/// Give `T`'s type the `tp_descr_get` that tries [`FastGet::fast_get`]
/// before its own `__get__` (kept for the other reads; the `__get__`
/// method in its dict stays pyo3's). Done once; a no-op on builds that
/// read no CPython layout.
pub fn install_descr_get<T: FastGet>(py: Python<'_>) -> PyResult<()> {
    #[cfg(not(any(Py_GIL_DISABLED, amber_portable)))]
    {
        let tp = T::type_object_raw(py);
        // SAFETY: `tp` is `T`'s type object, alive for the interpreter's
        // life (pyo3 keeps it); its slots are plain fields read and written
        // with the GIL held (the `Python` token), before and after which
        // CPython reads `tp_descr_get` afresh on every attribute access.
        unsafe {
            let Some(own) = (*tp).tp_descr_get else {
                return Err(pyo3::exceptions::PySystemError::new_err(
                    "descriptor type without __get__",
                ));
            };
            if own as usize == descr_get::<T> as *const () as usize {
                return Ok(());
            }
            let _ = T::saved_slot().set(own);
            (*tp).tp_descr_get = Some(descr_get::<T>);
        }
    }
    #[cfg(any(Py_GIL_DISABLED, amber_portable))]
    let _ = py;
    Ok(())
}

/// Attribute `name` of class `ty` as its MRO gives it (the class's own
/// dict, then its bases'), without calling a descriptor: what an instance's
/// attribute lookup finds at class level. `None` when no class has it.
pub fn type_lookup<'py>(
    ty: &Bound<'py, PyType>,
    name: &Bound<'py, PyString>,
) -> Option<Bound<'py, PyAny>> {
    #[cfg(not(any(Py_GIL_DISABLED, amber_portable)))]
    {
        // SAFETY: the `Bound`s keep both alive and prove the thread is
        // attached; the borrowed result is made an owned reference at
        // once, before any code runs.
        unsafe {
            let d = _PyType_Lookup(ty.as_type_ptr(), name.as_ptr());
            Bound::from_borrowed_ptr_or_opt(ty.py(), d)
        }
    }
    #[cfg(any(Py_GIL_DISABLED, amber_portable))]
    {
        let mro = ty.getattr(pyo3::intern!(ty.py(), "__mro__")).ok()?;
        for base in mro.try_iter().ok()? {
            let base = base.ok()?;
            let dict = base.getattr(pyo3::intern!(ty.py(), "__dict__")).ok()?;
            if let Ok(v) = dict.get_item(name) {
                return Some(v);
            }
        }
        None
    }
}
