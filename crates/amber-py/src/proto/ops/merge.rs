//! Merging one message into another (`MergeFrom`, and a singular
//! sub-message seen twice on the wire), as Google's protobuf merges.

use amber_core::proto::runtime::{Cardinality, Kind};
use pyo3::prelude::*;

use crate::proto::ops::deeper;
use crate::proto::state::cell::Borrow;
use crate::proto::state::map::{MapData, Pairs};
use crate::proto::state::message::{release, Message, PyMessage, Slot};
use crate::proto::state::objects::{objects, pairs_data, pairs_to_entries, sub_type};
use crate::proto::state::repeated::Items;
use crate::proto::state::values;

/// Merge `src` (owned: its objects move) into `dst`, Google's `MergeFrom`:
/// set scalars overwrite, sub-messages merge, repeated fields append,
/// map entries replace, unknown fields append.
pub fn merge_owned(py: Python<'_>, dst: &mut Message, src: Message) -> PyResult<()> {
    deeper(|| merge_level(py, dst, src))
}

fn merge_level(py: Python<'_>, dst: &mut Message, mut src: Message) -> PyResult<()> {
    let s = src.s.clone_ref(py);
    let fields = &s.tables.messages[src.ty as usize].fields;
    // Spans move as they are when both messages read the same input (or
    // `dst` none yet); otherwise they become objects.
    let shared = match (&dst.input, &src.input) {
        (_, None) => true,
        (None, Some(i)) => {
            dst.input = Some(i.clone_ref(py));
            true
        }
        (Some(a), Some(b)) => a.is(b),
    };
    let vals = std::mem::take(&mut src.vals);
    for (pos, slot) in vals.into_vec().into_iter().enumerate() {
        let f = &fields[pos];
        let no_presence = matches!(f.card, Cardinality::Singular { presence: false });
        match slot {
            Slot::Unset | Slot::Lazy(_) => {}
            Slot::Span(_, 0) if no_presence => {}
            Slot::Span(off, len) if shared => release(py, dst.put(pos, Slot::Span(off, len))),
            Slot::Span(off, len) => {
                let v = src.span_object(py, f.kind, (off, len))?;
                release(py, dst.put(pos, Slot::Val(v)))
            }
            Slot::Spans(v) if shared => append_spans(py, dst, pos, *v)?,
            Slot::Spans(v) => append_items(py, dst, pos, src.span_objects(py, f.kind, &v)?)?,
            // A `MessageSet` member replaces, as upb's merges (which parse
            // the source's bytes into a new member) do.
            Slot::Raw(off, len) if shared && matches!(dst.slot(pos), Slot::Unset) => {
                release(py, dst.put(pos, Slot::Raw(off, len)))
            }
            Slot::Raw(off, len) => {
                let sub = Slot::Sub(Box::new(src.build_at(py, sub_type(f.kind), (off, len))?));
                if f.set_item {
                    release(py, dst.put(pos, sub))
                } else {
                    merge_sub(py, dst, pos, sub)?
                }
            }
            Slot::Raws(v) if shared => append_raws(py, dst, pos, *v)?,
            Slot::Raws(v) => {
                let msgs = src.build_all(py, sub_type(f.kind), &v)?;
                append_messages(py, dst, pos, msgs)?
            }
            slot @ (Slot::Sub(_) | Slot::Val(_)) if f.set_item => release(py, dst.put(pos, slot)),
            Slot::Sub(sub) => merge_sub(py, dst, pos, Slot::Sub(sub))?,
            Slot::Val(v) if matches!(f.kind, Kind::Message(_)) => {
                merge_sub(py, dst, pos, Slot::Val(v))?
            }
            Slot::Val(v) if no_presence && values::is_zero(v.bind(py), f.kind) => {}
            Slot::Num(n) if no_presence && values::zero_bits(f.kind, n) => {}
            slot @ (Slot::Val(_) | Slot::Num(_)) => release(py, dst.put(pos, slot)),
            Slot::List(l) => {
                let items =
                    std::mem::replace(&mut l.bind(py).try_borrow_mut()?.items, Items::new(f.kind));
                append_items(py, dst, pos, items)?;
            }
            Slot::Items(items) => append_items(py, dst, pos, *items)?,
            Slot::Subs(msgs) => append_messages(py, dst, pos, *msgs)?,
            Slot::Map(mp) => {
                let data = std::mem::take(&mut mp.bind(py).try_borrow_mut()?.data);
                merge_entries(py, dst, pos, data)?;
            }
            Slot::Entries(data) => merge_entries(py, dst, pos, *data)?,
            Slot::Pairs(p) if shared => merge_pairs(py, dst, pos, *p)?,
            Slot::Pairs(p) => merge_entries(py, dst, pos, pairs_data(py, &src, f, *p)?)?,
        }
    }
    dst.unknown.extend_from_slice(&src.unknown);
    Ok(())
}

/// Merge a sub-message (`Sub`, or `Val` holding a message object) into
/// field `pos` of `dst`: into the message there, or set.
pub(crate) fn merge_sub(py: Python<'_>, dst: &mut Message, pos: usize, sub: Slot) -> PyResult<()> {
    let into = |d: &mut Message, sub: Slot| match sub {
        Slot::Sub(b) => merge_owned(py, d, *b),
        Slot::Val(v) => merge_owned(py, d, take(v.bind(py).cast::<PyMessage>()?)?),
        _ => Ok(()),
    };
    built_here(py, dst, pos)?;
    if let Slot::Sub(d) = dst.slot_mut(pos) {
        return into(d, sub);
    }
    if let Slot::Val(d) = dst.slot(pos) {
        let d = d.bind(py).cast::<PyMessage>()?.clone();
        return into(&mut *d.state_mut()?, sub);
    }
    if let Slot::Lazy(d) = dst.slot(pos) {
        // A default sub-message handed out takes the value and becomes the
        // field's, so that the handle stays live (as in Google's).
        let d = d.bind(py).clone();
        {
            let mut b = d.state_mut()?;
            into(&mut b, sub)?;
            b.parent = None;
        }
        release(py, dst.put(pos, Slot::Val(d.into_any().unbind())));
        return Ok(());
    }
    release(py, dst.put(pos, sub));
    Ok(())
}

/// Append values to repeated field `pos` of `dst`.
fn append_items(py: Python<'_>, dst: &mut Message, pos: usize, items: Items) -> PyResult<()> {
    if items.is_empty() {
        return Ok(());
    }
    built_here(py, dst, pos)?;
    if let Slot::Spans(_) = dst.slot(pos) {
        let Slot::Spans(have) = std::mem::replace(dst.slot_mut(pos), Slot::Unset) else {
            unreachable!("a span list just above")
        };
        let items = dst.span_objects(py, dst.info().fields[pos].kind, &have)?;
        *dst.slot_mut(pos) = Slot::Items(Box::new(items));
    }
    match dst.slot_mut(pos) {
        Slot::List(d) => d.bind(py).try_borrow_mut()?.items.append(py, items),
        Slot::Items(d) => d.append(py, items),
        Slot::Subs(d) => {
            for o in items.to_vec(py)? {
                d.push(take(o.bind(py).cast::<PyMessage>()?)?);
            }
            Ok(())
        }
        slot => {
            *slot = Slot::Items(Box::new(items));
            Ok(())
        }
    }
}

/// Append spans of `dst`'s own input to repeated field `pos` of `dst`.
fn append_spans(
    py: Python<'_>,
    dst: &mut Message,
    pos: usize,
    spans: Vec<(u32, u32)>,
) -> PyResult<()> {
    if spans.is_empty() {
        return Ok(());
    }
    if let Slot::Spans(d) = dst.slot_mut(pos) {
        d.extend(spans);
        return Ok(());
    }
    if matches!(dst.slot(pos), Slot::Unset) {
        *dst.slot_mut(pos) = Slot::Spans(Box::new(spans));
        return Ok(());
    }
    let items = dst.span_objects(py, dst.info().fields[pos].kind, &spans)?;
    append_items(py, dst, pos, items)
}

/// Build the sub-messages field `pos` of `dst` keeps as places in its
/// input ([`Slot::Raw`], [`Slot::Raws`]), for a merge into them.
fn built_here(py: Python<'_>, dst: &mut Message, pos: usize) -> PyResult<()> {
    let ty = sub_type_of(dst, pos);
    let slot = match dst.slot(pos) {
        &Slot::Raw(off, len) => Slot::Sub(Box::new(dst.build_at(py, ty, (off, len))?)),
        Slot::Raws(v) => Slot::Subs(Box::new(dst.build_all(py, ty, v)?)),
        _ => return Ok(()),
    };
    *dst.slot_mut(pos) = slot;
    Ok(())
}

/// The message type of field `pos` of `m` (0 for a field of another kind,
/// which holds no place of a message).
fn sub_type_of(m: &Message, pos: usize) -> u32 {
    match m.info().fields.get(pos).map(|f| f.kind) {
        Some(Kind::Message(t)) => t,
        _ => 0,
    }
}

/// Append places of `dst`'s own input, messages of repeated field `pos`,
/// to that field.
fn append_raws(
    py: Python<'_>,
    dst: &mut Message,
    pos: usize,
    raws: Vec<(u32, u32)>,
) -> PyResult<()> {
    if raws.is_empty() {
        return Ok(());
    }
    match dst.slot_mut(pos) {
        Slot::Raws(d) => {
            d.extend(raws);
            Ok(())
        }
        slot @ Slot::Unset => {
            *slot = Slot::Raws(Box::new(raws));
            Ok(())
        }
        _ => {
            let msgs = dst.build_all(py, sub_type_of(dst, pos), &raws)?;
            append_messages(py, dst, pos, msgs)
        }
    }
}

/// Append messages to repeated message field `pos` of `dst`.
fn append_messages(
    py: Python<'_>,
    dst: &mut Message,
    pos: usize,
    msgs: Vec<Message>,
) -> PyResult<()> {
    if msgs.is_empty() {
        return Ok(());
    }
    built_here(py, dst, pos)?;
    match dst.slot_mut(pos) {
        Slot::Subs(d) => d.extend(msgs),
        Slot::List(d) => {
            let objs = Items::Objs(objects(py, msgs)?);
            d.bind(py).try_borrow_mut()?.items.append(py, objs)?
        }
        Slot::Items(d) => d.append(py, Items::Objs(objects(py, msgs)?))?,
        slot => *slot = Slot::Subs(Box::new(msgs)),
    }
    Ok(())
}

/// Put entries of `dst`'s own input into map field `pos` of `dst` (equal
/// keys replaced).
fn merge_pairs(py: Python<'_>, dst: &mut Message, pos: usize, p: Pairs<Message>) -> PyResult<()> {
    if p.entries.is_empty() {
        return Ok(());
    }
    let input = dst.input.as_ref().map(|i| i.bind(py).clone());
    let bytes = input.as_ref().map_or(&[][..], |i| i.as_bytes());
    let (kk, _) = dst.entry_kinds(&dst.info().fields[pos]);
    match dst.slot_mut(pos) {
        Slot::Pairs(d) => {
            d.extend(bytes, kk, p);
            Ok(())
        }
        Slot::Unset => {
            *dst.slot_mut(pos) = Slot::Pairs(Box::new(p));
            Ok(())
        }
        _ => {
            let data = pairs_data(py, dst, &dst.info().fields[pos], p)?;
            merge_entries(py, dst, pos, data)
        }
    }
}

/// Put map entries into map field `pos` of `dst` (equal keys replaced).
fn merge_entries(py: Python<'_>, dst: &mut Message, pos: usize, data: MapData) -> PyResult<()> {
    if data.entries.is_empty() {
        return Ok(());
    }
    pairs_to_entries(py, dst, pos)?;
    match dst.slot_mut(pos) {
        Slot::Map(d) => {
            let mut d = d.bind(py).try_borrow_mut()?;
            for (k, v) in data.entries {
                d.data.insert(py, k, v)?;
            }
        }
        Slot::Entries(d) => {
            for (k, v) in data.entries {
                d.insert(py, k, v)?;
            }
        }
        slot => *slot = Slot::Entries(Box::new(data)),
    }
    Ok(())
}

/// Move a message's contents out, leaving it empty.
pub fn take(m: &Bound<'_, PyMessage>) -> PyResult<Message> {
    let mut b = m.state_mut()?;
    let empty = Message::empty(b.s.clone_ref(m.py()), b.ty);
    Ok(std::mem::replace(&mut *b, empty))
}
