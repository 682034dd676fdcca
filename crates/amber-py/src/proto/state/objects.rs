//! A message's Python objects: sub-messages, repeated fields and maps that
//! a parse, a build from dicts or a copy made are kept as Rust values
//! ([`Slot::native`]) until a read makes their objects ([`materialize`]),
//! as upb makes them when a field is read; and the links by which a
//! default sub-message or container makes its parent present when changed.

use amber_core::proto::runtime::{Cardinality, Kind};
use pyo3::prelude::*;
use pyo3::types::PyWeakrefReference;

use crate::proto::state::build::fill;
pub use crate::proto::state::build::{pairs_data, pairs_to_entries};
use crate::proto::state::cell::Borrow;
use crate::proto::state::map::{MapData, MapField};
pub use crate::proto::state::message::{instantiate, sub_type};
use crate::proto::state::message::{release, Message, PyMessage, Slot};
use crate::proto::state::repeated::{Items, Repeated};
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
    let kind = b.info().fields[pos].kind;
    // Each object goes into the slot as it is made, its two words written
    // in place (a `Slot` made first and copied in stalled on store
    // forwarding). The slot holds the `Unset` the `replace` left: making the
    // objects ran no code that sets it, the message staying borrowed.
    let obj = match std::mem::replace(b.slot_mut(pos), Slot::Unset) {
        Slot::Pairs(p) => {
            let d = pairs_data(py, &b, &b.info().fields[pos], *p)?;
            keep_map(py, &mut b, pos, d, owner)?
        }
        Slot::Entries(d) => keep_map(py, &mut b, pos, *d, owner)?,
        Slot::Span(off, len) => {
            let v = b.span_object(py, kind, (off, len))?;
            keep(py, &mut b, pos, v)
        }
        Slot::Sub(sub) => {
            let v = instantiate(py, *sub)?.into_any().unbind();
            keep(py, &mut b, pos, v)
        }
        Slot::Raw(off, len) => {
            let v = b.instantiate_at(py, sub_type(kind), (off, len))?;
            keep(py, &mut b, pos, v.into_any().unbind())
        }
        taken => {
            let items = match taken {
                Slot::Spans(v) => b.span_objects(py, kind, &v)?,
                Slot::Raws(v) => Items::Objs(b.instantiate_all(py, sub_type(kind), &v)?),
                Slot::Subs(v) => Items::Objs(objects(py, *v)?),
                Slot::Items(items) => *items,
                other => {
                    // Not native (`native` says which are): put back.
                    fill(b.slot_mut(pos), other);
                    return Ok(Some(py.None()));
                }
            };
            let mut c = Repeated::new(b.s.clone_ref(py), ty, pos as u32, items);
            c.owner = owner;
            let c = Py::new(py, c)?;
            let o = c.clone_ref(py).into_any();
            fill(b.slot_mut(pos), Slot::List(c));
            o
        }
    };
    Ok(Some(obj))
}

/// Make a map field's container of `d` (`owner`: the message to make
/// present when it changes), put it in `m`'s slot `pos`, which holds
/// `Unset`, and return it.
fn keep_map(
    py: Python<'_>,
    m: &mut Message,
    pos: usize,
    d: MapData,
    owner: Option<Py<PyWeakrefReference>>,
) -> PyResult<Py<PyAny>> {
    let mut c = MapField::new(m.s.clone_ref(py), m.ty, pos as u32, d);
    c.owner = owner;
    let c = Py::new(py, c)?;
    let o = c.clone_ref(py).into_any();
    fill(m.slot_mut(pos), Slot::Map(c));
    Ok(o)
}

/// Put object `v` in `m`'s slot `pos`, which holds `Unset`, and return it.
#[inline(always)]
fn keep(py: Python<'_>, m: &mut Message, pos: usize, v: Py<PyAny>) -> Py<PyAny> {
    let o = v.clone_ref(py);
    fill(m.slot_mut(pos), Slot::Val(v));
    o
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
        (b.s.clone_ref(py), b.ty, f.card, f.kind)
    };
    let slot = match (card, kind) {
        (Cardinality::Singular { .. }, Kind::Message(sub)) => {
            let mut child = Message::empty(s.clone_ref(py), sub);
            child.parent = Some(Box::new((PyWeakrefReference::new(m)?.unbind(), pos as u32)));
            Slot::Lazy(instantiate(py, child)?.unbind())
        }
        (Cardinality::Map, _) => {
            let mut c = MapField::new(s.clone_ref(py), ty, pos as u32, MapData::default());
            c.owner = owner_link(m)?;
            Slot::Map(Py::new(py, c)?)
        }
        _ => {
            let mut c = Repeated::new(s.clone_ref(py), ty, pos as u32, Items::new(kind));
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
