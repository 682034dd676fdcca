//! Assigning values: checking a value for a field on the way in, as the
//! field's setter does.

use std::cell::RefCell;

use amber_core::proto::runtime::{Cardinality, FieldInfo, Kind};
use amber_core::proto::wire::MAX_DEPTH;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};

use crate::proto::ops::copy::deep_copy;
use crate::proto::state::cell::Borrow;
use crate::proto::state::map::{MapData, MapField};
use crate::proto::state::message::{release, Message, PyMessage, Slot};
use crate::proto::state::objects::{attach, instantiate, objects};
use crate::proto::state::repeated::{Items, Kept};
use crate::proto::state::schema::SchemaRef;
use crate::proto::state::values;

impl Kept {
    /// Check `v` for repeated field `f` as its setter would (messages
    /// copied or built; numbers read in place where they can be). The
    /// check may run Python code: hold no borrow of the container.
    #[inline]
    pub fn check(
        py: Python<'_>,
        s: &SchemaRef,
        f: &FieldInfo,
        v: &Bound<'_, PyAny>,
    ) -> PyResult<Kept> {
        if f.kind.packable() {
            Ok(Kept::Num(values::check_bits(&s.tables, f, f.kind, v)?))
        } else {
            Ok(Kept::Obj(element(py, s, f, v)?))
        }
    }
}

impl MapField {
    pub fn check_key(&self, k: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let f = self.entry_field(0);
        values::check(&self.s.tables, f, f.kind, k)
    }

    pub fn check_value(&self, v: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let f = self.entry_field(1);
        element(v.py(), &self.s, f, v)
    }
}

/// The slot a Python value makes for field `pos` of type `ty` (constructor
/// keywords and assignment): scalars checked, messages copied (or built
/// from a dict), iterables and mappings checked element by element.
/// Sub-messages and containers are kept natively until read.
pub fn slot_from(
    py: Python<'_>,
    s: &SchemaRef,
    ty: u32,
    pos: usize,
    v: &Bound<'_, PyAny>,
) -> PyResult<Slot> {
    let f = &s.tables.messages[ty as usize].fields[pos];
    Ok(match f.card {
        Cardinality::Singular { .. } => match f.kind {
            Kind::Message(sub) => match built(py, s, sub, f, v)? {
                Built::Native(m) => Slot::Sub(Box::new(m)),
                Built::Object(o) => Slot::Val(o.into_any().unbind()),
            },
            k if k.packable() => Slot::Num(values::check_bits(&s.tables, f, k, v)?),
            k => Slot::Val(values::check(&s.tables, f, k, v)?),
        },
        Cardinality::Repeated { .. } => {
            if v.is_instance_of::<pyo3::types::PyString>() || v.is_instance_of::<PyBytes>() {
                return Err(PyTypeError::new_err(format!(
                    "Value of repeated field {} must be an iterable, not {}",
                    f.name,
                    v.get_type().name()?
                )));
            }
            if let Kind::Message(sub) = f.kind {
                return repeated_messages(py, s, sub, f, v);
            }
            let mut items = Items::with_capacity(f.kind, v.len().unwrap_or(0));
            for_each_element(v, |e| items.push(py, Kept::check(py, s, f, e)?))?;
            Slot::Items(Box::new(items))
        }
        Cardinality::Map => {
            let map = MapField::new(s.clone_ref(py), ty, pos as u32, MapData::default());
            let mut data = MapData::with_capacity(v.len().unwrap_or(0));
            let mut put = |k: &Bound<'_, PyAny>, val: &Bound<'_, PyAny>| {
                data.insert(py, map.check_key(k)?, map.check_value(val)?)
            };
            if let Ok(d) = v.cast_exact::<PyDict>() {
                crate::ffi::dict::for_each_pair(d, put)?;
            } else {
                let items = v.call_method0(pyo3::intern!(py, "items"))?;
                for kv in items.try_iter()? {
                    let (k, val): (Bound<'_, PyAny>, Bound<'_, PyAny>) = kv?.extract()?;
                    put(&k, &val)?;
                }
            }
            Slot::Entries(Box::new(data))
        }
    })
}

/// Call `each` on every element of an iterable (a list by index, without
/// an iterator: each read is checked against the list as it is, since a
/// check may run Python code).
fn for_each_element(
    v: &Bound<'_, PyAny>,
    mut each: impl FnMut(&Bound<'_, PyAny>) -> PyResult<()>,
) -> PyResult<()> {
    if let Ok(l) = v.cast_exact::<PyList>() {
        let mut i = 0;
        while i < l.len() {
            each(&l.get_item(i)?)?;
            i += 1;
        }
    } else if let Ok(t) = v.cast_exact::<PyTuple>() {
        for e in t.iter() {
            each(&e)?;
        }
    } else {
        for e in v.try_iter()? {
            each(&e?)?;
        }
    }
    Ok(())
}

/// A repeated message field's slot from an iterable of messages or dicts:
/// kept natively, unless a well-known type's Python form made objects.
fn repeated_messages(
    py: Python<'_>,
    s: &SchemaRef,
    sub: u32,
    f: &FieldInfo,
    v: &Bound<'_, PyAny>,
) -> PyResult<Slot> {
    let mut msgs = Vec::with_capacity(v.len().unwrap_or(0));
    let mut objs: Option<Vec<Py<PyAny>>> = None;
    for_each_element(v, |e| {
        match (built(py, s, sub, f, e)?, &mut objs) {
            (Built::Native(m), None) => msgs.push(m),
            (Built::Native(m), Some(o)) => o.push(instantiate(py, m)?.into_any().unbind()),
            (Built::Object(m), Some(o)) => o.push(m.into_any().unbind()),
            (Built::Object(m), None) => {
                let mut o = objects(py, std::mem::take(&mut msgs))?;
                o.push(m.into_any().unbind());
                objs = Some(o);
            }
        }
        Ok(())
    })?;
    Ok(match objs {
        None => Slot::Subs(Box::new(msgs)),
        Some(o) => Slot::Items(Box::new(Items::Objs(o))),
    })
}

/// One element of a repeated field, checked (messages copied or built).
pub fn element(
    py: Python<'_>,
    s: &SchemaRef,
    f: &FieldInfo,
    v: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    match f.kind {
        Kind::Message(sub) => Ok(message_value(py, s, sub, f, v)?.into_any().unbind()),
        k => values::check(&s.tables, f, k, v),
    }
}

/// A message of type `sub` from a value, as an object (see [`built`]).
pub fn message_value<'py>(
    py: Python<'py>,
    s: &SchemaRef,
    sub: u32,
    f: &FieldInfo,
    v: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyMessage>> {
    match built(py, s, sub, f, v)? {
        Built::Native(m) => instantiate(py, m),
        Built::Object(o) => Ok(o),
    }
}

/// A message a value makes: kept natively, or an object.
enum Built<'py> {
    Native(Message),
    Object(Bound<'py, PyMessage>),
}

/// A message of type `sub` from a value: a copy of a message of that type,
/// or one built from a dict of its fields (both native), or a well-known
/// type made from its Python form by its own code (an object).
fn built<'py>(
    py: Python<'py>,
    s: &SchemaRef,
    sub: u32,
    f: &FieldInfo,
    v: &Bound<'py, PyAny>,
) -> PyResult<Built<'py>> {
    if let Ok(m) = v.cast::<PyMessage>() {
        let b = m.state()?;
        if b.ty == sub && b.s.same(s) {
            return Ok(Built::Native(deep_copy(py, &b)?));
        }
        return Err(PyTypeError::new_err(format!(
            "field {} takes a {} message, not {}",
            f.name,
            s.tables.messages[sub as usize].full_name,
            b.info().full_name
        )));
    }
    let struct_contents = s.assigns[sub as usize]
        && s.tables.messages[sub as usize].full_name == "google.protobuf.Struct";
    if let (Ok(d), false) = (v.cast::<PyDict>(), struct_contents) {
        // As `cls(**d)` would build it, without the call through the
        // class (whose `__new__` is `Message`'s, and no `__init__`).
        let _on_path = Walk::enter(py, d.as_any(), &f.name)?;
        let mut m = Message::empty(s.clone_ref(py), sub);
        kwargs_into(py, &mut m, d)?;
        return Ok(Built::Native(m));
    }
    if s.assigns[sub as usize] {
        // A datetime for a Timestamp, a dict for a Struct, ...: the
        // well-known type's own conversion (Python code, which raises
        // TypeError or ValueError for what it does not take).
        let m = s.class(py, sub)?.call0()?;
        m.call_method1(pyo3::intern!(py, "_internal_assign"), (v,))?;
        return Ok(Built::Object(m.cast_into::<PyMessage>()?));
    }
    Err(PyTypeError::new_err(format!(
        "field {} takes a {} message or a dict, not {}",
        f.name,
        s.tables.messages[sub as usize].full_name,
        v.get_type().name()?
    )))
}

thread_local! {
    /// The dicts being built into messages on this thread, outermost
    /// first: each one's address and the field it is the value of.
    static WALK: RefCell<Vec<(usize, String)>> = const { RefCell::new(Vec::new()) };
}

/// A dict on the path of the walk, from [`Walk::enter`] until dropped.
struct Walk;

impl Walk {
    /// Put dict `d` (the value of field `field`) on the path, refused with
    /// `amber.proto.DecodeError` if it is already on it (a dict that
    /// contains itself) or if the path would be deeper than parsing
    /// allows ([`MAX_DEPTH`] messages, the outermost included, as
    /// `from_dict`).
    /// The path is the thread's, so it holds across Python code a check
    /// runs (a well-known type's conversion, `__index__`) that builds
    /// messages in turn.
    fn enter(py: Python<'_>, d: &Bound<'_, PyAny>, field: &str) -> PyResult<Walk> {
        let key = d.as_ptr() as usize;
        // The error is made after the borrow ends (making it runs Python).
        let refused = WALK.with(|w| {
            let mut w = w.borrow_mut();
            let cycle = w.iter().any(|(k, _)| *k == key);
            // The message the walk starts from is the first level.
            if !cycle && w.len() + 1 < MAX_DEPTH {
                w.push((key, field.to_string()));
                return None;
            }
            let mut path = String::from("$");
            for (_, name) in w.iter().map(|(k, n)| (k, n.as_str())).chain([(&0, field)]) {
                path.push('.');
                path.push_str(name);
            }
            Some((cycle, path))
        });
        let Some((cycle, path)) = refused else {
            return Ok(Walk);
        };
        let (kind, msg) = if cycle {
            (
                "invalid_value",
                format!("a dict that contains itself, at {path}"),
            )
        } else {
            (
                "limit",
                format!("messages nested deeper than {MAX_DEPTH} at {path}"),
            )
        };
        Err(crate::errors::proto_decode(py, kind, msg, None, Some(path)))
    }
}

impl Drop for Walk {
    fn drop(&mut self) {
        WALK.with(|w| {
            w.borrow_mut().pop();
        });
    }
}

/// Assign field `pos` (checked first), then attach the message.
pub fn set_field(m: &Bound<'_, PyMessage>, pos: usize, value: &Bound<'_, PyAny>) -> PyResult<()> {
    let py = m.py();
    let (s, ty) = {
        let b = m.state()?;
        (b.s.clone_ref(py), b.ty)
    };
    let slot = slot_from(py, &s, ty, pos, value)?;
    let old = m.state_mut()?.put(pos, slot);
    release(py, old);
    attach(m)
}

pub(crate) fn kwargs_into(
    py: Python<'_>,
    m: &mut Message,
    kwargs: &Bound<'_, PyDict>,
) -> PyResult<()> {
    let s = m.s.clone_ref(py);
    let mut hint = 0;
    // The dict may be the caller's own (a dict given for a sub-message),
    // which checking a value may change (`__index__` runs Python code).
    crate::ffi::dict::for_each_pair(kwargs, |k, v| {
        let key = k.cast::<pyo3::types::PyString>().map_err(|_| {
            PyTypeError::new_err(format!(
                "field names are strings, not {}",
                values::type_name(k)
            ))
        })?;
        let pos = match s.field_pos_of(m.ty, key, hint) {
            Some(p) => p,
            None => m.pos_of(&key.to_cow()?)?,
        };
        hint = pos + 1;
        if !v.is_none() {
            let slot = slot_from(py, &s, m.ty, pos, v)?;
            let old = m.put(pos, slot);
            release(py, old);
        }
        Ok(())
    })
}
