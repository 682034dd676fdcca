//! Deep copies of messages, kept natively.

use amber_core::proto::runtime::{FieldInfo, Kind};
use pyo3::prelude::*;

use crate::proto::ops::deeper;
use crate::proto::state::cell::Borrow;
use crate::proto::state::map::MapData;
use crate::proto::state::message::{Message, PyMessage, Slot};
use crate::proto::state::objects::instantiate;
use crate::proto::state::repeated::Items;

/// A deep copy of a message's contents (scalars are immutable and shared),
/// kept natively: sub-messages and containers become Python objects when
/// the copy's fields are read.
pub fn deep_copy(py: Python<'_>, m: &Message) -> PyResult<Message> {
    deeper(|| copy_level(py, m))
}

fn copy_level(py: Python<'_>, m: &Message) -> PyResult<Message> {
    let mut out = Message::empty(m.s.clone_ref(py), m.ty);
    out.unknown = m.unknown.clone();
    out.input = m.input.as_ref().map(|i| i.clone_ref(py));
    let mut vals = Vec::with_capacity(m.vals.len());
    for (pos, slot) in m.vals.iter().enumerate() {
        let f = &m.info().fields[pos];
        vals.push(match slot {
            Slot::Unset | Slot::Lazy(_) => Slot::Unset,
            Slot::Val(v) => match f.kind {
                Kind::Message(_) => Slot::Sub(Box::new(copy_of(v.bind(py))?)),
                _ => Slot::Val(v.clone_ref(py)),
            },
            Slot::Num(n) => Slot::Num(*n),
            Slot::Sub(sub) => Slot::Sub(Box::new(deep_copy(py, sub)?)),
            Slot::Subs(v) => Slot::Subs(Box::new(
                v.iter()
                    .map(|m| deep_copy(py, m))
                    .collect::<PyResult<_>>()?,
            )),
            Slot::List(l) => copied_items(py, f, &l.borrow(py).items)?,
            Slot::Items(items) => copied_items(py, f, items)?,
            Slot::Map(mp) => Slot::Entries(Box::new(copy_map(py, m, f, &mp.borrow(py).data)?)),
            Slot::Entries(d) => Slot::Entries(Box::new(copy_map(py, m, f, d)?)),
            Slot::Span(off, len) => Slot::Span(*off, *len),
            Slot::Spans(v) => Slot::Spans(v.clone()),
            // Places in the same input, which the copy keeps.
            Slot::Raw(off, len) => Slot::Raw(*off, *len),
            Slot::Raws(v) => Slot::Raws(v.clone()),
            Slot::Pairs(p) => Slot::Pairs(Box::new(p.try_copy(|m| deep_copy(py, m))?)),
        });
    }
    out.vals = vals.into_boxed_slice();
    Ok(out)
}

/// A copy of the message object `v`'s contents.
fn copy_of(v: &Bound<'_, PyAny>) -> PyResult<Message> {
    deep_copy(v.py(), &*v.cast::<PyMessage>()?.state()?)
}

/// A native slot holding copies of a repeated field's items (messages
/// copied, scalars shared).
fn copied_items(py: Python<'_>, f: &FieldInfo, items: &Items) -> PyResult<Slot> {
    Ok(match (f.kind, items) {
        (Kind::Message(_), Items::Objs(v)) => Slot::Subs(Box::new(
            v.iter()
                .map(|v| copy_of(v.bind(py)))
                .collect::<PyResult<_>>()?,
        )),
        _ => Slot::Items(Box::new(items.clone_ref(py))),
    })
}

/// A copy of map field `f`'s entries (of `m`; message values copied).
fn copy_map(py: Python<'_>, m: &Message, f: &FieldInfo, d: &MapData) -> PyResult<MapData> {
    let (_, vkind) = m.entry_kinds(f);
    let mut data = MapData::with_capacity(d.entries.len());
    for (k, v) in &d.entries {
        let v = match vkind {
            Kind::Message(_) => copy_obj(py, v.bind(py))?.into_any().unbind(),
            _ => v.clone_ref(py),
        };
        data.insert(py, k.clone_ref(py), v)?;
    }
    Ok(data)
}

/// A new message object equal to `v` (a message).
pub fn copy_obj<'py>(py: Python<'py>, v: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyMessage>> {
    let m = v.cast::<PyMessage>()?;
    let c = deep_copy(py, &*m.state()?)?;
    instantiate(py, c)
}
