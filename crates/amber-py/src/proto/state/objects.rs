//! A message's Python objects: sub-messages, repeated fields and maps that
//! a parse, a build from dicts or a copy made are kept as Rust values
//! ([`Slot::native`]) until a read makes their objects ([`materialize`]),
//! as upb makes them when a field is read; and the links by which a
//! default sub-message or container makes its parent present when changed.

use std::sync::Arc;

use amber_core::proto::runtime::{Cardinality, Kind};
use pyo3::prelude::*;
use pyo3::types::PyWeakrefReference;

pub use crate::proto::state::build::{pairs_data, pairs_to_entries};
use crate::proto::state::cell::Borrow;
use crate::proto::state::map::{MapData, MapField};
pub use crate::proto::state::message::{instantiate, sub_type};
use crate::proto::state::message::{release, Message, PyMessage, Slot};
use crate::proto::state::repeated::{Items, Repeated};
use crate::proto::state::schema::Schema;
use crate::proto::state::values;

/// Make the Python object of field `pos`'s native value (see
/// [`Slot::native`]) and keep it in the slot, so that every read hands out
/// the same object: a sub-message's object, or a repeated or map field's
/// container (a repeated message field's messages made objects too), and
/// return it (`None`: the slot held no native value). The message stays
/// borrowed while the objects are made: a finalizer that a garbage
/// collection runs meanwhile and that touches this message gets an
/// "already borrowed" error, and nothing is lost.
pub fn materialize(m: &Bound<'_, PyMessage>, pos: usize) -> PyResult<Option<Py<PyAny>>> {
    let py = m.py();
    // One borrow for the whole step.
    let mut b = m.state_mut()?;
    if !b.slot(pos).native() {
        return Ok(None);
    }
    let owner = match b.parent {
        Some(_) => Some(PyWeakrefReference::new(m)?.unbind()),
        None => None,
    };
    let ty = b.ty;
    // The schema is cloned only for a container (a sub-message's object
    // holds its own): the clone is an atomic count.
    let container = |s: Arc<Schema>, items: Items| {
        let mut c = Repeated::new(s, ty, pos as u32, items);
        c.owner = owner.as_ref().map(|o| o.clone_ref(py));
        Py::new(py, c)
    };
    let kind = b.info().fields[pos].kind;
    let made = match std::mem::replace(b.slot_mut(pos), Slot::Unset) {
        Slot::Pairs(p) => {
            let d = pairs_data(py, &b, &b.info().fields[pos], *p)?;
            let mut c = MapField::new(b.s.clone(), ty, pos as u32, d);
            c.owner = owner;
            Slot::Map(Py::new(py, c)?)
        }
        Slot::Span(off, len) => Slot::Val(b.span_object(py, kind, (off, len))?),
        Slot::Spans(v) => Slot::List(container(b.s.clone(), b.span_objects(py, kind, &v)?)?),
        Slot::Sub(sub) => Slot::Val(instantiate(py, *sub)?.into_any().unbind()),
        Slot::Raw(off, len) => {
            let sub = b.build_at(py, sub_type(kind), (off, len))?;
            Slot::Val(instantiate(py, sub)?.into_any().unbind())
        }
        Slot::Raws(v) => {
            let msgs = b.build_all(py, sub_type(kind), &v)?;
            Slot::List(container(b.s.clone(), Items::Objs(objects(py, msgs)?))?)
        }
        Slot::Subs(v) => Slot::List(container(b.s.clone(), Items::Objs(objects(py, *v)?))?),
        Slot::Items(items) => Slot::List(container(b.s.clone(), *items)?),
        Slot::Entries(d) => {
            let mut c = MapField::new(b.s.clone(), ty, pos as u32, *d);
            c.owner = owner;
            Slot::Map(Py::new(py, c)?)
        }
        other => other,
    };
    let obj = match &made {
        Slot::Val(v) => v.clone_ref(py),
        Slot::List(l) => l.clone_ref(py).into_any(),
        Slot::Map(l) => l.clone_ref(py).into_any(),
        _ => py.None(),
    };
    // The slot holds the `Unset` left by the `replace` above (making the
    // objects ran no code that sets it: the message stayed borrowed).
    crate::proto::state::build::fill(b.slot_mut(pos), made);
    Ok(Some(obj))
}

/// Every native slot of `m` made its Python object (see [`materialize`]),
/// for the walks that go from object to object.
pub fn materialize_all(m: &Bound<'_, PyMessage>) -> PyResult<()> {
    let n = m.state()?.vals.len();
    for pos in 0..n {
        materialize(m, pos)?;
    }
    Ok(())
}

/// Messages made objects, for a repeated field's list of objects.
pub fn objects(py: Python<'_>, msgs: Vec<Message>) -> PyResult<Vec<Py<PyAny>>> {
    msgs.into_iter()
        .map(|m| Ok(instantiate(py, m)?.into_any().unbind()))
        .collect()
}

/// Make a default sub-message present in its parent (and the parent in
/// its own, up the chain): called by every change to a message.
pub fn attach(slf: &Bound<'_, PyMessage>) -> PyResult<()> {
    let mut cur = slf.clone();
    loop {
        let link = cur.state_mut()?.parent.take();
        let Some(link) = link else {
            return Ok(());
        };
        let (weak, pos) = *link;
        let Some(parent) = weak.bind(cur.py()).upgrade() else {
            return Ok(());
        };
        let parent = parent.cast_into::<PyMessage>()?;
        let old = {
            let mut p = parent.state_mut()?;
            let stays = matches!(p.slot(pos as usize), Slot::Lazy(c) if c.is(&cur));
            if !stays {
                // The parent was cleared or set since: this one is on its own.
                return Ok(());
            }
            p.put(pos as usize, Slot::Val(cur.clone().into_any().unbind()))
        };
        release(cur.py(), old);
        cur = parent;
    }
}

/// Attach the message behind a container's weak link to it, if any (a
/// container changed).
pub fn attach_owner(py: Python<'_>, owner: Option<Py<PyWeakrefReference>>) -> PyResult<()> {
    if let Some(w) = owner {
        if let Some(o) = w.bind(py).upgrade() {
            attach(&o.cast_into::<PyMessage>()?)?;
        }
    }
    Ok(())
}

/// A weak link to `m` if it is a default sub-message (its containers must
/// attach it when changed), else `None`.
fn owner_link(m: &Bound<'_, PyMessage>) -> PyResult<Option<Py<PyWeakrefReference>>> {
    if m.state()?.parent.is_some() {
        Ok(Some(PyWeakrefReference::new(m)?.unbind()))
    } else {
        Ok(None)
    }
}

/// Read field `pos`: the value, the default, or a new container or
/// default sub-message (kept, so that reads give the same object).
pub fn get_field(py: Python<'_>, m: &Bound<'_, PyMessage>, pos: usize) -> PyResult<Py<PyAny>> {
    {
        let b = m.state()?;
        match b.slot(pos) {
            Slot::Val(v) => return Ok(v.clone_ref(py)),
            Slot::Num(n) => return values::number(py, b.info().fields[pos].kind, *n),
            Slot::Lazy(c) => return Ok(c.clone_ref(py).into_any()),
            Slot::List(l) => return Ok(l.clone_ref(py).into_any()),
            Slot::Map(l) => return Ok(l.clone_ref(py).into_any()),
            // A new object per read, as upb makes: strings and bytes are
            // immutable, so the span stays.
            &Slot::Span(off, len) => {
                return b.span_object(py, b.info().fields[pos].kind, (off, len));
            }
            Slot::Sub(_)
            | Slot::Subs(_)
            | Slot::Items(_)
            | Slot::Entries(_)
            | Slot::Spans(_)
            | Slot::Pairs(_)
            | Slot::Raw(..)
            | Slot::Raws(_) => {
                drop(b);
                if let Some(o) = materialize(m, pos)? {
                    return Ok(o);
                }
                return get_field(py, m, pos);
            }
            Slot::Unset => {
                let f = &b.info().fields[pos];
                let scalar = !matches!(f.kind, Kind::Message(_));
                if scalar && matches!(f.card, Cardinality::Singular { .. }) {
                    return Ok(b.s.defaults[b.ty as usize][pos].clone_ref(py));
                }
            }
        }
    }
    // Unset message, repeated or map field: make its object.
    let (s, ty, card, kind) = {
        let b = m.state()?;
        let f = &b.info().fields[pos];
        (b.s.clone(), b.ty, f.card, f.kind)
    };
    let slot = match (card, kind) {
        (Cardinality::Singular { .. }, Kind::Message(sub)) => {
            let mut child = Message::empty(s.clone(), sub);
            child.parent = Some(Box::new((PyWeakrefReference::new(m)?.unbind(), pos as u32)));
            Slot::Lazy(instantiate(py, child)?.unbind())
        }
        (Cardinality::Map, _) => {
            let mut c = MapField::new(s.clone(), ty, pos as u32, MapData::default());
            c.owner = owner_link(m)?;
            Slot::Map(Py::new(py, c)?)
        }
        _ => {
            let mut c = Repeated::new(s.clone(), ty, pos as u32, Items::new(kind));
            c.owner = owner_link(m)?;
            Slot::List(Py::new(py, c)?)
        }
    };
    let mut b = m.state_mut()?;
    // Making the object ran Python code: keep what may have been set since.
    if matches!(b.slot(pos), Slot::Unset) {
        *b.slot_mut(pos) = slot;
    }
    Ok(match b.slot(pos) {
        Slot::Lazy(c) => c.clone_ref(py).into_any(),
        Slot::List(c) => c.clone_ref(py).into_any(),
        Slot::Map(c) => c.clone_ref(py).into_any(),
        Slot::Val(v) => v.clone_ref(py),
        Slot::Num(n) => values::number(py, kind, *n)?,
        Slot::Unset => py.None(),
        _ => {
            drop(b);
            materialize(m, pos)?;
            return get_field(py, m, pos);
        }
    })
}
