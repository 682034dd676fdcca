//! A borrow flag guarded by the GIL, for the message and container classes.
//!
//! pyo3 guards the contents of a mutable class with an atomic flag, so
//! every borrow is a locked compare-exchange and every release a locked
//! decrement: a field read takes one of each, and they were the largest
//! single cost of reading a message's fields. The classes here are frozen
//! for pyo3 and keep their state in a [`GilCell`] instead, whose flag is a
//! plain counter: only a thread attached to the interpreter can reach it,
//! and under the GIL one thread is attached at a time.
//!
//! Borrowing behaves as pyo3's does: any number of shared borrows or one
//! exclusive borrow, and a conflicting borrow (Python code run by a hook or
//! a finalizer while a message is being read or changed) gets a
//! `RuntimeError` instead of changing what is being read.
//!
//! On a free-threaded build (not supported yet: the module keeps the GIL
//! there, see `docs/compatibility.md`) the flag is atomic, as pyo3's is,
//! so that a build without the GIL's exclusion stays sound; GIL builds keep
//! the plain counter, which costs nothing.

use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::pyclass::boolean_struct::True;
use pyo3::PyClass;

/// The borrow count: 0 free, n > 0 shared borrows, -1 borrowed exclusively.
/// A plain counter where the GIL orders every access.
#[cfg(not(Py_GIL_DISABLED))]
struct Flag(std::cell::Cell<isize>);

#[cfg(not(Py_GIL_DISABLED))]
impl Flag {
    const fn new() -> Flag {
        Flag(std::cell::Cell::new(0))
    }
    #[inline]
    fn share(&self) -> bool {
        let n = self.0.get();
        if n < 0 {
            return false;
        }
        self.0.set(n + 1);
        true
    }
    #[inline]
    fn take(&self) -> bool {
        if self.0.get() != 0 {
            return false;
        }
        self.0.set(-1);
        true
    }
    #[inline]
    fn unshare(&self) {
        self.0.set(self.0.get() - 1);
    }
    #[inline]
    fn release(&self) {
        self.0.set(0);
    }
}

/// The borrow count, atomic where no GIL orders the threads' accesses.
#[cfg(Py_GIL_DISABLED)]
struct Flag(std::sync::atomic::AtomicIsize);

#[cfg(Py_GIL_DISABLED)]
impl Flag {
    const fn new() -> Flag {
        Flag(std::sync::atomic::AtomicIsize::new(0))
    }
    #[inline]
    fn share(&self) -> bool {
        use std::sync::atomic::Ordering::{Acquire, Relaxed};
        let mut n = self.0.load(Relaxed);
        loop {
            if n < 0 {
                return false;
            }
            match self.0.compare_exchange_weak(n, n + 1, Acquire, Relaxed) {
                Ok(_) => return true,
                Err(now) => n = now,
            }
        }
    }
    #[inline]
    fn take(&self) -> bool {
        use std::sync::atomic::Ordering::{Acquire, Relaxed};
        self.0.compare_exchange(0, -1, Acquire, Relaxed).is_ok()
    }
    #[inline]
    fn unshare(&self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::Release);
    }
    #[inline]
    fn release(&self) {
        self.0.store(0, std::sync::atomic::Ordering::Release);
    }
}

/// A value with a GIL-guarded borrow flag (see the module's text).
pub struct GilCell<T> {
    flag: Flag,
    value: UnsafeCell<T>,
}

#[cfg(Py_GIL_DISABLED)]
// SAFETY: on free-threaded builds the atomic flag admits either one
// exclusive borrow or shared ones, acquired and released with
// acquire/release ordering, as a reader-writer lock's try-lock does; shared
// borrows may then read the value from several threads at once, hence
// `T: Sync` there too.
unsafe impl<T: Send + Sync> Sync for GilCell<T> {}

#[cfg(not(Py_GIL_DISABLED))]
// SAFETY: on GIL builds the flag and the value are touched only through
// `Ref`/`RefMut`, which are made from a `Bound` (the thread is attached, so it holds the
// GIL) and cannot leave that thread (a `Bound` is neither `Send` nor
// `Sync`, so neither is a guard, and `Python::detach` cannot take one).
// With the GIL at most one thread runs at a time, and handing the GIL over
// orders each thread's reads and writes after the previous holder's, so the
// plain flag never sees a race and a borrow on one thread is seen by the
// next. The value moves between threads only inside its Python object,
// hence `T: Send`.
unsafe impl<T: Send> Sync for GilCell<T> {}

impl<T> GilCell<T> {
    pub fn new(value: T) -> GilCell<T> {
        GilCell {
            flag: Flag::new(),
            value: UnsafeCell::new(value),
        }
    }
}

/// Drop a reference held by a message's state, or by a handle on its schema
/// (see `SchemaRef`), without pyo3's check that the thread is attached: a
/// thread-local read through `__tls_get_addr` per reference, which freeing
/// each sub-message paid twice.
///
/// # Safety
///
/// The thread is attached. The callers' values make it so: they live in
/// Python objects, which CPython frees only on an attached thread, or in the
/// frames of calls from Python, and none is moved into `Python::detach` or
/// kept past its thread's last call.
#[inline]
pub unsafe fn drop_attached<T>(obj: Py<T>) {
    debug_assert!(
        // SAFETY: `PyGILState_Check` may be called on any thread.
        unsafe { pyo3::ffi::PyGILState_Check() } == 1,
        "a message's reference dropped off the interpreter"
    );
    // SAFETY: the caller's, above; a `Bound` releases its reference with a
    // plain decrement.
    drop(obj.into_bound(unsafe { Python::assume_attached() }));
}

/// A frozen pyclass whose state is a [`GilCell`].
pub trait InCell: PyClass<Frozen = True> + Sync {
    type Value;
    fn cell(&self) -> &GilCell<Self::Value>;
}

/// A shared borrow of an object's state; holds a reference to the object.
pub struct Ref<'py, P: InCell> {
    obj: Bound<'py, P>,
}

/// The exclusive borrow of an object's state; holds a reference to the
/// object.
pub struct RefMut<'py, P: InCell> {
    obj: Bound<'py, P>,
}

/// Borrowing the state of an object of a class in a [`GilCell`].
pub trait Borrow<'py, P: InCell> {
    /// A shared borrow: an error while the state is borrowed exclusively.
    fn state(&self) -> PyResult<Ref<'py, P>>;
    /// The exclusive borrow: an error while the state is borrowed at all.
    fn state_mut(&self) -> PyResult<RefMut<'py, P>>;
}

impl<'py, P: InCell> Borrow<'py, P> for Bound<'py, P> {
    #[inline]
    fn state(&self) -> PyResult<Ref<'py, P>> {
        if !self.get().cell().flag.share() {
            return Err(PyRuntimeError::new_err("Already mutably borrowed"));
        }
        Ok(Ref { obj: self.clone() })
    }

    #[inline]
    fn state_mut(&self) -> PyResult<RefMut<'py, P>> {
        if !self.get().cell().flag.take() {
            return Err(PyRuntimeError::new_err("Already borrowed"));
        }
        Ok(RefMut { obj: self.clone() })
    }
}

impl<P: InCell> Deref for Ref<'_, P> {
    type Target = P::Value;
    #[inline]
    fn deref(&self) -> &P::Value {
        // SAFETY: the flag counts this shared borrow, so no exclusive one
        // exists until it is dropped; the object, and so the cell, lives
        // as long as the guard's reference to it.
        unsafe { &*self.obj.get().cell().value.get() }
    }
}

impl<P: InCell> Drop for Ref<'_, P> {
    #[inline]
    fn drop(&mut self) {
        self.obj.get().cell().flag.unshare();
    }
}

impl<P: InCell> Deref for RefMut<'_, P> {
    type Target = P::Value;
    #[inline]
    fn deref(&self) -> &P::Value {
        // SAFETY: the flag marks this exclusive borrow; the object lives as
        // long as the guard's reference to it.
        unsafe { &*self.obj.get().cell().value.get() }
    }
}

impl<P: InCell> DerefMut for RefMut<'_, P> {
    #[inline]
    fn deref_mut(&mut self) -> &mut P::Value {
        // SAFETY: as for `deref`; `&mut self` makes this the only
        // reference made through the guard.
        unsafe { &mut *self.obj.get().cell().value.get() }
    }
}

impl<P: InCell> Drop for RefMut<'_, P> {
    #[inline]
    fn drop(&mut self) {
        self.obj.get().cell().flag.release();
    }
}
