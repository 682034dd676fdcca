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

use std::cell::{Cell, UnsafeCell};
use std::ops::{Deref, DerefMut};

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::pyclass::boolean_struct::True;
use pyo3::PyClass;

// The flag is sound only while the GIL serialises every thread's access.
#[cfg(Py_GIL_DISABLED)]
compile_error!("amber's message classes need a CPython build with the GIL");

/// A value with a GIL-guarded borrow flag (see the module's text).
pub struct GilCell<T> {
    /// 0: free; n > 0: n shared borrows; -1: borrowed exclusively.
    flag: Cell<isize>,
    value: UnsafeCell<T>,
}

// SAFETY: the flag and the value are touched only through `Ref`/`RefMut`,
// which are made from a `Bound` (the thread is attached, so it holds the
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
            flag: Cell::new(0),
            value: UnsafeCell::new(value),
        }
    }
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
        let flag = &self.get().cell().flag;
        let n = flag.get();
        if n < 0 {
            return Err(PyRuntimeError::new_err("Already mutably borrowed"));
        }
        flag.set(n + 1);
        Ok(Ref { obj: self.clone() })
    }

    #[inline]
    fn state_mut(&self) -> PyResult<RefMut<'py, P>> {
        let flag = &self.get().cell().flag;
        if flag.get() != 0 {
            return Err(PyRuntimeError::new_err("Already borrowed"));
        }
        flag.set(-1);
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
        let flag = &self.obj.get().cell().flag;
        flag.set(flag.get() - 1);
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
        self.obj.get().cell().flag.set(0);
    }
}
