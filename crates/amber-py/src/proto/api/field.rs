//! `_native.ProtoField`: the descriptor of one field in a message class's
//! namespace. Field access goes through it; values are checked and
//! normalised by `values::check` on the way in (numbers, bools and enums
//! kept as Rust values, `Slot::Num` and `Items`), so encoding reads exact
//! builtin types or plain numbers and runs no Python code.
//!
//! A read on an instance of the class bound to the field's type takes
//! [`FastGet::fast_get`] (the type's `tp_descr_get`, see `ffi::slots`),
//! without pyo3's trampoline; every other read takes `__get__`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use amber_core::proto::runtime::{Cardinality, FieldInfo, Kind};
use pyo3::exceptions::{PyAttributeError, PyTypeError};
use pyo3::ffi;
use pyo3::prelude::*;

use crate::ffi::slots::{FastGet, Got};
use crate::proto::ops::assign::set_field;
use crate::proto::state::cell::Borrow;
use crate::proto::state::message::{PyMessage, Slot};
use crate::proto::state::objects::get_field;
use crate::proto::state::schema::SchemaRef;
use crate::proto::state::values;

/// A field's attribute: reads give the value (the default when unset),
/// assignments check the value first.
#[pyclass(frozen, module = "amber._native", name = "ProtoField")]
pub struct Field {
    pub s: SchemaRef,
    pub ty: u32,
    pub pos: u32,
    /// The address of the class bound to `ty` once a read or write found
    /// it (0 before): checked first, without going through the schema.
    /// The schema this field holds keeps that class alive, so no other
    /// class can come to have the address.
    pub class: AtomicUsize,
    /// The field's kind, and whether an unset read gives its default (a
    /// singular scalar), copied from its table entry: a read needs them
    /// without going through the schema's tables.
    pub kind: Kind,
    pub scalar_default: bool,
}

impl Field {
    fn info(&self) -> &FieldInfo {
        &self.s.tables.messages[self.ty as usize].fields[self.pos as usize]
    }

    #[inline(always)]
    fn target<'a, 'py>(&self, obj: &'a Bound<'py, PyAny>) -> PyResult<&'a Bound<'py, PyMessage>> {
        let t = obj.get_type_ptr() as usize;
        if t == self.class.load(Ordering::Relaxed) {
            // SAFETY: the address was stored below from the class bound to
            // this field's type (see `class`), which derives from `Message`.
            return Ok(unsafe { obj.cast_unchecked::<PyMessage>() });
        }
        let exact = self.s.classes[self.ty as usize]
            .get()
            .is_some_and(|c| t == c.as_ptr() as usize);
        if exact {
            self.class.store(t, Ordering::Relaxed);
            // SAFETY: `obj` is an instance of the class bound to this
            // field's type, which `Schema::bind` checked derives from
            // `Message`; no other class is bound to the type.
            return Ok(unsafe { obj.cast_unchecked::<PyMessage>() });
        }
        let m = obj.cast::<PyMessage>()?;
        let b = m.state()?;
        if b.ty != self.ty || !b.s.same(&self.s) {
            return Err(PyTypeError::new_err(format!(
                "field {} belongs to {}, not {}",
                self.info().name,
                self.s.tables.messages[self.ty as usize].full_name,
                b.info().full_name
            )));
        }
        Ok(m)
    }
}

/// `ProtoField`'s own `tp_descr_get` (pyo3's), once replaced.
#[cfg_attr(any(Py_GIL_DISABLED, amber_portable), allow(dead_code))]
static OWN_GET: OnceLock<ffi::descrgetfunc> = OnceLock::new();

impl FastGet for Field {
    /// Every read on an instance of the class bound to the field's type
    /// (the address `target` keeps): a number, a string or bytes (kept, or
    /// a span of the parsed input) or an unset scalar's default here, the
    /// rest by `get_field`. Reads on other objects take `__get__`, which
    /// checks the type. Making a sub-message's or container's object
    /// allocates and may run a collection, and so Python code; what
    /// `get_field` drops of `Py` values then (only when that code changed
    /// the slot meanwhile) is decref'd at pyo3's next call.
    #[inline(always)]
    fn fast_get(&self, py: Python<'_>, obj: &Bound<'_, PyAny>) -> Option<Got> {
        if obj.get_type_ptr() as usize != self.class.load(Ordering::Relaxed) {
            return None;
        }
        // SAFETY: the address was stored by `target` from the class bound
        // to this field's type (see `class`), which derives from `Message`.
        let m = unsafe { obj.cast_unchecked::<PyMessage>() };
        let pos = self.pos as usize;
        {
            let b = m.state().ok()?;
            // The instance's type is this field's: its schema and table.
            match b.slot(pos) {
                Slot::Val(v) => return Some(Got::value(v.clone_ref(py))),
                Slot::Num(n) => return Some(Got::from(py, values::number(py, self.kind, *n))),
                &Slot::Span(off, len) => {
                    return Some(Got::from(py, b.span_object(py, self.kind, (off, len))))
                }
                Slot::Unset if self.scalar_default => {
                    let v = self.s.defaults[self.ty as usize][pos].clone_ref(py);
                    return Some(Got::value(v));
                }
                _ => {}
            }
        }
        Some(Got::from(py, get_field(py, m, pos)))
    }

    fn panicked(_py: Python<'_>, payload: &(dyn std::any::Any + Send)) -> PyErr {
        crate::errors::panicked(payload)
    }

    fn saved_slot() -> &'static OnceLock<ffi::descrgetfunc> {
        &OWN_GET
    }
}

#[pymethods]
impl Field {
    fn __get__(
        slf: &Bound<'_, Self>,
        obj: Option<&Bound<'_, PyAny>>,
        _owner: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        crate::errors::guard(|| {
            let py = slf.py();
            let this = slf.get();
            let Some(obj) = obj else {
                return Ok(slf.clone().into_any().unbind());
            };
            let m = this.target(obj)?;
            get_field(py, m, this.pos as usize)
        })
    }

    fn __set__(
        slf: &Bound<'_, Self>,
        obj: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        crate::errors::guard(|| {
            let this = slf.get();
            let m = this.target(obj)?;
            let f = this.info();
            // As Google's: message, repeated and map fields are changed in place,
            // except that the well-known types with a Python form take it
            // (`m.when = datetime(...)`).
            let what = match (f.card, f.kind) {
                (Cardinality::Singular { .. }, Kind::Message(t)) if this.s.assigns[t as usize] => {
                    None
                }
                (Cardinality::Singular { .. }, Kind::Message(_)) => Some("message"),
                (Cardinality::Singular { .. }, _) => None,
                _ => Some("map, or repeated"),
            };
            if let Some(what) = what {
                return Err(PyAttributeError::new_err(format!(
                    "Assignment not allowed to {what} field \"{}\" in protocol message object.",
                    f.name
                )));
            }
            set_field(m, this.pos as usize, value)
        })
    }

    fn __delete__(slf: &Bound<'_, Self>, _obj: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard(|| {
            Err(PyAttributeError::new_err(format!(
                "cannot delete field {}; use ClearField",
                slf.get().info().name
            )))
        })
    }

    /// The field's name.
    #[getter]
    fn name(&self) -> &str {
        &self.info().name
    }

    /// The field's number.
    #[getter]
    fn number(&self) -> u32 {
        self.info().number
    }
}
