//! Registered objects other than Enum members: classes made first and then
//! given their state (DICT, SLOTS), named tuples, and classes with hooks.
//! What state an instance has is decided in `crate::codec::state`.
//!
//! Every state object Python code returns (`__getstate__()`, an encode
//! hook's result) is held by a `Bound` until it is written, and the object
//! itself by the caller's strong reference. The functions taking `o` need it
//! to be a live instance of the class of `e`, which the caller keeps alive
//! (`registered` holds a reference), and `obj` to be the same object.

use amber_core::codec::format as f;
use amber_core::codec::writer as w;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::{fail, Encoder, Memo, OrFail, R};
use crate::codec::state::{self, State};
use crate::types::{state as flag, Entry};

impl<'py> Encoder<'py> {
    /// DICT and SLOTS classes: OBJECT_FILL (the `__dict__` or the slots,
    /// set directly) or OBJECT_STATE (a None base, then the state pickle
    /// would give `__setstate__` or its BUILD). Either way the instance is
    /// made before its state, so it is registered first in identity mode.
    pub(super) unsafe fn made_first(
        &mut self,
        o: *mut ffi::PyObject,
        obj: &Bound<'py, PyAny>,
        e: &Entry,
    ) -> R {
        // SAFETY: `o` is live (see the module comment).
        if let Memo::Done = unsafe { self.memo_before(o, true) } {
            return Ok(());
        }
        let state = self.state_of(obj, e)?;
        if let State::Fill(attrs) = &state {
            self.out.push(f::OBJECT_FILL);
            // SAFETY: the entry owns its name, a str; `attrs` is held by its
            // Bound while it is written.
            return self.nested(|enc| unsafe {
                enc.str(e.name.ptr(), usize::MAX, true)?;
                enc.item(attrs.as_ptr())
            });
        }
        self.out.push(f::OBJECT_STATE);
        // SAFETY: the entry owns its name, a str; `state` holds what it
        // refers to while it is written.
        self.nested(|enc| unsafe {
            enc.str(e.name.ptr(), usize::MAX, true)?;
            w::write_none(&mut enc.out);
            enc.write_state(&state)
        })
    }

    /// Named tuples: OBJECT (the fields) or, when the instance has more
    /// state, OBJECT_STATE (the fields as its base, then the state). The
    /// tuple exists once its fields do, so it is registered after them (and
    /// before the state).
    pub(super) unsafe fn named_tuple(
        &mut self,
        o: *mut ffi::PyObject,
        obj: &Bound<'py, PyAny>,
        e: &Entry,
    ) -> R {
        // SAFETY: `o` is live (see the module comment).
        let memo = unsafe { self.memo_before(o, false) };
        if let Memo::Done = memo {
            return Ok(());
        }
        let state = self.state_of(obj, e)?;
        let more = !matches!(state, State::Fields);
        self.out
            .push(if more { f::OBJECT_STATE } else { f::OBJECT });
        // SAFETY: the entry owns its name, a str; `o` is a live tuple (a
        // NAMEDTUPLE class subclasses tuple), so its size and items can be
        // read; `state` holds what it refers to while it is written.
        self.nested(|enc| unsafe {
            enc.str(e.name.ptr(), usize::MAX, true)?;
            let n = ffi::PyTuple_GET_SIZE(o) as usize;
            w::write_tuple_header(&mut enc.out, n);
            enc.tuple_items(o, n)?;
            if let Memo::Shared(at) = memo {
                enc.memo_after_immutable(o, at);
            }
            if more {
                enc.write_state(&state)?;
            }
            Ok(())
        })
    }

    /// Classes with hooks: OBJECT, the state `encode(obj)` returns.
    pub(super) unsafe fn hooked(
        &mut self,
        o: *mut ffi::PyObject,
        obj: &Bound<'py, PyAny>,
        e: &Entry,
    ) -> R {
        // SAFETY: `o` is live (see the module comment).
        let memo = unsafe { self.memo_before(o, false) };
        if let Memo::Done = memo {
            return Ok(());
        }
        self.out.push(f::OBJECT);
        // SAFETY: the entry owns its name, a str, and its hook; the hook's
        // result is held by its Bound while it is written.
        self.nested(|enc| unsafe {
            enc.str(e.name.ptr(), usize::MAX, true)?;
            let encode = Bound::from_borrowed_ptr(enc.py, e.encode.ptr());
            let state = encode.call1((obj,)).or_fail()?;
            enc.item(state.as_ptr())
        })?;
        if let Memo::Shared(at) = memo {
            self.memo_after_immutable(o, at);
        }
        Ok(())
    }

    /// The state of `obj`. A state from the class's own `__getstate__` must
    /// be one amber can give back when the class has no `__setstate__`.
    fn state_of(&self, obj: &Bound<'py, PyAny>, e: &Entry) -> R<State<'py>> {
        let state = state::of(obj, e).or_fail()?;
        if let State::Custom(s) = &state {
            if e.flags & flag::SETSTATE == 0 {
                if let Err(why) = state::parts(e, s) {
                    let cls = obj.get_type().qualname().or_fail()?;
                    return fail(format!(
                        "{cls}.__getstate__() returned a state that amber cannot set without \
                         __setstate__ ({why}): return None, a dict of attributes or a pair \
                         (attributes, slots), or define __setstate__"
                    ));
                }
            }
        }
        Ok(state)
    }

    /// The state item of an OBJECT_STATE. The default pair is written as a
    /// tuple of 2 without path steps of its own: an error in it is at the
    /// attribute or slot name, as on the object.
    fn write_state(&mut self, state: &State<'py>) -> R {
        // SAFETY (each `item` below): `state` holds every object it refers
        // to for the whole call.
        let (dict, slots) = match state {
            State::Custom(s) => return unsafe { self.item(s.as_ptr()) },
            State::Default { dict, slots } => (dict, slots),
            State::Fill(_) | State::Fields => return fail("no OBJECT_STATE for this state"),
        };
        let write_dict = |enc: &mut Self, d: &Option<Bound<'py, PyDict>>| match d {
            Some(d) => unsafe { enc.item(d.as_ptr()) },
            None => {
                w::write_none(&mut enc.out);
                Ok(())
            }
        };
        match slots {
            None => write_dict(self, dict),
            Some(s) => {
                w::write_tuple_header(&mut self.out, 2);
                self.nested(|enc| {
                    write_dict(enc, dict)?;
                    unsafe { enc.item(s.as_ptr()) }
                })
            }
        }
    }
}
