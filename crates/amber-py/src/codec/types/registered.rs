//! Registered classes, both halves: Enum members (their value), classes made
//! first and then given their state (DICT, SLOTS), named tuples, and
//! classes with hooks. What state an instance has, and how it is given
//! back, is decided in `state.rs`. The decoder finds classes only by name
//! in the registry.
//!
//! Every state object Python code returns (`__getstate__()`, an encode
//! hook's result) is held by a `Bound` until it is written, and the object
//! itself by the reference `compound` was given for it. The functions
//! taking `o` (a `Borrowed`, so held) and `obj` are given the same object,
//! an instance of the class of `e`.

use amber_core::codec::writer as w;
use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};

use super::state::{self, State};
use crate::codec::decode::PyBuilder;
use crate::codec::encode::{fail, Encoder, Memo, OrFail, R};
use crate::codec::registry::{self, flag, Entry, Mode};
use crate::errors::{self, DecodeKind, EncodeKind};
use crate::ffi::borrowed::Borrowed;
use crate::ffi::obj::Obj;

impl<'py> Encoder<'py> {
    /// A registered class's instance, by the mode of its entry.
    pub(crate) fn registered(&mut self, o: Borrowed<'_>, entry: &Bound<'py, Entry>) -> R {
        let py = self.py;
        // The entry is held by its Bound: a hook that unregisters the class
        // cannot free it.
        let e = entry.get();
        let obj = o.to_bound(py);
        match e.mode {
            Mode::Enum => {
                w::write_enum_header(&mut self.out);
                let value = obj.getattr(intern!(py, "_value_")).or_fail()?;
                self.nested(|enc| {
                    enc.str(e.name.bind(py).into(), usize::MAX, true)?;
                    enc.item((&value).into())
                })
            }
            Mode::Dict | Mode::Slots => self.made_first(o, &obj, e),
            Mode::NamedTuple => self.named_tuple(o, &obj, e),
            Mode::Hook => self.hooked(o, &obj, e),
        }
    }

    /// DICT and SLOTS classes: OBJECT_FILL (the `__dict__` or the slots,
    /// set directly) or OBJECT_STATE (a None base, then the state pickle
    /// would give `__setstate__` or its BUILD). Either way the instance is
    /// made before its state, so it is registered first in identity mode.
    fn made_first(&mut self, o: Borrowed<'_>, obj: &Bound<'py, PyAny>, e: &Entry) -> R {
        let py = self.py;
        if let Memo::Done = self.memo_before(o, true) {
            return Ok(());
        }
        let state = self.state_of(obj, e)?;
        if let State::Fill(attrs) = &state {
            w::write_object_header(&mut self.out, w::ObjectForm::Fill);
            return self.nested(|enc| {
                enc.str(e.name.bind(py).into(), usize::MAX, true)?;
                enc.item(attrs.into())
            });
        }
        w::write_object_header(&mut self.out, w::ObjectForm::State);
        self.nested(|enc| {
            enc.str(e.name.bind(py).into(), usize::MAX, true)?;
            w::write_none(&mut enc.out);
            enc.write_state(&state)
        })
    }

    /// Named tuples: OBJECT (the fields) or, when the instance has more
    /// state, OBJECT_STATE (the fields as its base, then the state). The
    /// tuple exists once its fields do, so it is registered after them (and
    /// before the state).
    fn named_tuple(&mut self, o: Borrowed<'_>, obj: &Bound<'py, PyAny>, e: &Entry) -> R {
        let py = self.py;
        let Some(t) = o.tuple() else {
            return fail(
                EncodeKind::Unsupported,
                "a NAMEDTUPLE class's instance is not a tuple",
            );
        };
        let memo = self.memo_before(o, false);
        if let Memo::Done = memo {
            return Ok(());
        }
        let state = self.state_of(obj, e)?;
        let more = !matches!(state, State::Fields);
        let form = if more {
            w::ObjectForm::State
        } else {
            w::ObjectForm::Rebuilt
        };
        w::write_object_header(&mut self.out, form);
        self.nested(|enc| {
            enc.str(e.name.bind(py).into(), usize::MAX, true)?;
            let n = t.len();
            w::write_tuple_header(&mut enc.out, n);
            enc.tuple_items(t, n)?;
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
    fn hooked(&mut self, o: Borrowed<'_>, obj: &Bound<'py, PyAny>, e: &Entry) -> R {
        let py = self.py;
        let memo = self.memo_before(o, false);
        if let Memo::Done = memo {
            return Ok(());
        }
        w::write_object_header(&mut self.out, w::ObjectForm::Rebuilt);
        self.nested(|enc| {
            enc.str(e.name.bind(py).into(), usize::MAX, true)?;
            let Some(encode) = &e.encode else {
                return fail(EncodeKind::Unsupported, "a HOOK class has no encode hook");
            };
            let state = encode.bind(enc.py).call1((obj,)).or_fail()?;
            enc.item((&state).into())
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
            if !e.has(flag::SETSTATE) {
                if let Err(why) = state::parts(e, s) {
                    let cls = obj.get_type().qualname().or_fail()?;
                    return fail(
                        EncodeKind::Unsupported,
                        format!(
                            "{cls}.__getstate__() returned a state that amber cannot set without \
                         __setstate__ ({why}): return None, a dict of attributes or a pair \
                         (attributes, slots), or define __setstate__"
                        ),
                    );
                }
            }
        }
        Ok(state)
    }

    /// The state item of an OBJECT_STATE. The default pair is written as a
    /// tuple of 2 without path steps of its own: an error in it is at the
    /// attribute or slot name, as on the object.
    fn write_state(&mut self, state: &State<'py>) -> R {
        let (dict, slots) = match state {
            State::Custom(s) => return self.item(s.into()),
            State::Default { dict, slots } => (dict, slots),
            State::Fill(_) | State::Fields => {
                return fail(EncodeKind::Unsupported, "no OBJECT_STATE for this state")
            }
        };
        let write_dict = |enc: &mut Self, d: &Option<Bound<'py, PyDict>>| match d {
            Some(d) => enc.item(d.into()),
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
                    enc.item(s.into())
                })
            }
        }
    }
}

impl<'py> PyBuilder<'py, '_> {
    /// The registered class named `name`.
    #[inline(never)]
    pub(crate) fn class_(&mut self, name: &Obj) -> PyResult<Bound<'py, Entry>> {
        let name = self.bound(name);
        if !name.is_exact_instance_of::<PyString>() {
            return Err(PyValueError::new_err("class name must be a str"));
        }
        registry::lookup_name(self.py, &name)?.ok_or_else(|| {
            errors::decode_fail(
                self.py,
                DecodeKind::Refused,
                format!(
                    "class {name} is not registered; register it with amber.register() to \
                     decode it"
                ),
            )
        })
    }

    #[inline(never)]
    pub(crate) fn enum_member_(&mut self, class: &Entry, value: Obj) -> PyResult<Obj> {
        if class.mode != Mode::Enum {
            return Err(self.registered_otherwise(class, "is not registered as an Enum"));
        }
        let member = class.cls.bind(self.py).call1((self.bound(&value),))?;
        Ok(self.obj(member))
    }

    /// A DICT or SLOTS class made empty: `cls.__new__(cls)`.
    #[inline(never)]
    pub(crate) fn object_new_(&mut self, class: &Entry) -> PyResult<Obj> {
        if !class.mode.made_first() {
            return Err(
                self.registered_otherwise(class, "is rebuilt from its state, not filled in")
            );
        }
        let cls = class.cls.bind(self.py);
        let obj = cls
            .call_method1(intern!(self.py, "__new__"), (cls,))
            .map_err(|e| errors::decode_raised(self.py, e))?;
        Ok(self.obj(obj))
    }

    #[inline(never)]
    pub(crate) fn object_fill_(&mut self, class: &Entry, obj: &Obj, state: Obj) -> PyResult<()> {
        let state = self.bound(&state);
        let state = state
            .cast::<PyDict>()
            .map_err(|_| PyValueError::new_err("object state must be a dict"))?;
        let obj = self.bound(obj);
        // The state is set directly: OBJECT_FILL never goes through
        // __setstate__ (OBJECT_STATE does).
        if class.mode == Mode::Dict {
            state::check_attrs(class, state).map_err(PyValueError::new_err)?;
            state::set_attrs(&obj, state)
        } else {
            state::check_slots(self.py, class, state).map_err(PyValueError::new_err)?;
            state::set_slots(&obj, state)
        }
    }

    #[inline(never)]
    pub(crate) fn object_build_(&mut self, class: &Entry, state: Obj) -> PyResult<Obj> {
        let state = self.bound(&state);
        let obj = match (class.mode, &class.decode) {
            (Mode::NamedTuple, _) => self.named_tuple(class, &state)?,
            (Mode::Hook, Some(decode)) => decode
                .bind(self.py)
                .call1((state,))
                .map_err(|e| errors::decode_raised(self.py, e))?,
            _ => return Err(self.registered_otherwise(class, "is not rebuilt from its state")),
        };
        Ok(self.obj(obj))
    }

    /// OBJECT_STATE: a DICT or SLOTS class made empty from a None base, a
    /// named tuple from its fields.
    #[inline(never)]
    pub(crate) fn object_base_(&mut self, class: &Entry, base: Obj) -> PyResult<Obj> {
        let base = self.bound(&base);
        if class.mode.made_first() && base.is_none() {
            return self.object_new_(class);
        }
        if class.mode == Mode::NamedTuple {
            let obj = self.named_tuple(class, &base)?;
            return Ok(self.obj(obj));
        }
        Err(self.registered_otherwise(
            class,
            if base.is_none() {
                "is not made from a None base"
            } else {
                "is not made from this base"
            },
        ))
    }

    /// OBJECT_STATE: give the made instance its state, as pickle's BUILD.
    #[inline(never)]
    pub(crate) fn object_setstate_(
        &mut self,
        class: &Entry,
        obj: &Obj,
        state: Obj,
    ) -> PyResult<()> {
        state::apply(class, &self.bound(obj), &self.bound(&state))
    }

    /// The data uses `class` as it is not registered here: "class X `why`".
    #[cold]
    fn registered_otherwise(&self, class: &Entry, why: &str) -> PyErr {
        let name = class.name.bind(self.py);
        errors::decode_fail(self.py, DecodeKind::Refused, format!("class {name} {why}"))
    }

    /// A named tuple from its fields: `tuple.__new__(cls, fields)`, without
    /// calling the class's own `__new__`.
    fn named_tuple(
        &self,
        class: &Entry,
        fields: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        let fields = fields
            .cast_exact::<PyTuple>()
            .map_err(|_| PyValueError::new_err("the fields of a named tuple must be a tuple"))?;
        let want = class.names(py).len();
        if fields.len() != want {
            return Err(PyValueError::new_err(format!(
                "{} has {want} fields, the state has {} items",
                class.name.bind(py),
                fields.len()
            )));
        }
        let tuple_new = py.get_type::<PyTuple>().getattr(intern!(py, "__new__"))?;
        tuple_new.call1((class.cls.bind(py), fields))
    }
}
