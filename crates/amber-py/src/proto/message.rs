//! `amber.proto.Message`: the native base of every message class.
//!
//! A message holds one [`Slot`] per field of its type (by position in the
//! type's table), its unknown fields as wire bytes, and, while it is a
//! default sub-message handed out by reading an unset field, a weak link
//! to the parent that takes it in on its first change (Google's
//! semantics: `m.sub.x = 1` makes `m.sub` present; `m.sub.x` alone does
//! not). Messages form trees: assignment and `append` copy, so no message
//! is ever reachable from itself and nothing here needs the cyclic GC.
//!
//! Field access goes through one [`Field`] descriptor per field in the
//! class's namespace; values are checked and normalised by
//! [`values::check`] on the way in (numbers, bools and enums kept as Rust
//! values, [`Slot::Num`] and [`Items`]), so encoding reads exact builtin
//! types or plain numbers and runs no Python code. Sub-messages, repeated
//! fields and maps that a parse, a build from dicts or a copy made are kept
//! as Rust values too ([`Slot::native`]) until a read makes their objects
//! ([`materialize`]), as upb makes them when a field is read.

use std::sync::Arc;

use amber_core::proto::runtime::{Cardinality, FieldInfo, Kind};
use pyo3::exceptions::{PyAttributeError, PyMemoryError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple, PyType};

use crate::proto::state::cell::Borrow;
use crate::proto::state::map::{MapData, MapField, Pairs};
use crate::proto::state::message::{release, Message, PyMessage, Slot};
use crate::proto::state::objects::{attach, get_field, instantiate, materialize_all, objects};
use crate::proto::state::repeated::{Items, Kept};
use crate::proto::state::schema::Schema;
use crate::proto::state::values;
use crate::proto::{parse, serialize};

/// The class-level handle of a message type (`cls.__amber__`).
#[pyclass(frozen, module = "amber._native", name = "ProtoMessageType")]
pub struct MessageType {
    pub s: Arc<Schema>,
    pub ty: u32,
}

#[pymethods]
impl MessageType {
    /// The type's full name.
    #[getter]
    fn full_name(&self) -> &str {
        &self.s.tables.messages[self.ty as usize].full_name
    }

    /// The type's index in its schema.
    #[getter]
    fn index(&self) -> u32 {
        self.ty
    }
}

/// Run `f`, one level of a walk down a message tree, with enough stack
/// under it: a tree built in Python has no depth limit, so the walks that
/// copy, merge or clean one grow the stack as the decoder does (see
/// `amber_core::bytes::stack`).
fn deeper<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    amber_core::bytes::stack::enter(f, || {
        PyMemoryError::new_err("no memory for the stack of a walk down a deeply nested message")
    })
}

/// A deep copy of a message's contents (scalars are immutable and shared),
/// kept natively: sub-messages and containers become Python objects when
/// the copy's fields are read.
pub fn deep_copy(py: Python<'_>, m: &Message) -> PyResult<Message> {
    deeper(|| copy_level(py, m))
}

fn copy_level(py: Python<'_>, m: &Message) -> PyResult<Message> {
    let mut out = Message::empty(m.s.clone(), m.ty);
    out.unknown = m.unknown.clone();
    out.input = m.input.as_ref().map(|i| i.clone_ref(py));
    out.vals.reserve(m.vals.len());
    for (pos, slot) in m.vals.iter().enumerate() {
        let f = &m.info().fields[pos];
        out.vals.push(match slot {
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
            Slot::Pairs(p) => Slot::Pairs(p.clone()),
        });
    }
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

/// Merge `src` (owned: its objects move) into `dst`, Google's `MergeFrom`:
/// set scalars overwrite, sub-messages merge, repeated fields append,
/// map entries replace, unknown fields append.
pub fn merge_owned(py: Python<'_>, dst: &mut Message, src: Message) -> PyResult<()> {
    deeper(|| merge_level(py, dst, src))
}

fn merge_level(py: Python<'_>, dst: &mut Message, mut src: Message) -> PyResult<()> {
    let s = src.s.clone();
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
    for (pos, slot) in vals.into_iter().enumerate() {
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
            Slot::Pairs(p) => merge_entries(py, dst, pos, src.pairs_data(py, f, *p)?)?,
        }
    }
    dst.unknown.extend_from_slice(&src.unknown);
    Ok(())
}

/// Merge a sub-message (`Sub`, or `Val` holding a message object) into
/// field `pos` of `dst`: into the message there, or set.
fn merge_sub(py: Python<'_>, dst: &mut Message, pos: usize, sub: Slot) -> PyResult<()> {
    let into = |d: &mut Message, sub: Slot| match sub {
        Slot::Sub(b) => merge_owned(py, d, *b),
        Slot::Val(v) => merge_owned(py, d, take(v.bind(py).cast::<PyMessage>()?)?),
        _ => Ok(()),
    };
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
fn merge_pairs(py: Python<'_>, dst: &mut Message, pos: usize, p: Pairs) -> PyResult<()> {
    if p.entries.is_empty() {
        return Ok(());
    }
    let input = dst.input.as_ref().map(|i| i.clone_ref(py));
    let bytes = input.as_ref().map_or(&[][..], |i| i.as_bytes(py));
    let (kk, _) = dst.entry_kinds(&dst.info().fields[pos]);
    match dst.slot_mut(pos) {
        Slot::Pairs(d) => {
            for (k, v) in p.entries {
                d.insert(bytes, kk, k, v);
            }
            Ok(())
        }
        Slot::Unset => {
            *dst.slot_mut(pos) = Slot::Pairs(Box::new(p));
            Ok(())
        }
        _ => {
            let data = dst.pairs_data(py, &dst.info().fields[pos], p)?;
            merge_entries(py, dst, pos, data)
        }
    }
}

/// Put map entries into map field `pos` of `dst` (equal keys replaced).
fn merge_entries(py: Python<'_>, dst: &mut Message, pos: usize, data: MapData) -> PyResult<()> {
    if data.entries.is_empty() {
        return Ok(());
    }
    dst.pairs_to_entries(py, pos)?;
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
    let empty = Message::empty(b.s.clone(), b.ty);
    Ok(std::mem::replace(&mut *b, empty))
}

/// The slot a Python value makes for field `pos` of type `ty` (constructor
/// keywords and assignment): scalars checked, messages copied (or built
/// from a dict), iterables and mappings checked element by element.
/// Sub-messages and containers are kept natively until read.
pub fn slot_from(
    py: Python<'_>,
    s: &Arc<Schema>,
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
            let map = MapField::new(s.clone(), ty, pos as u32, MapData::default());
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
    s: &Arc<Schema>,
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
    s: &Arc<Schema>,
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
    s: &Arc<Schema>,
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
    s: &Arc<Schema>,
    sub: u32,
    f: &FieldInfo,
    v: &Bound<'py, PyAny>,
) -> PyResult<Built<'py>> {
    if let Ok(m) = v.cast::<PyMessage>() {
        let b = m.state()?;
        if b.ty == sub && Arc::ptr_eq(&b.s, s) {
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
        let mut m = Message::empty(s.clone(), sub);
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

/// A field's attribute: reads give the value (the default when unset),
/// assignments check the value first.
#[pyclass(frozen, module = "amber._native", name = "ProtoField")]
pub struct Field {
    pub s: Arc<Schema>,
    pub ty: u32,
    pub pos: u32,
}

impl Field {
    fn info(&self) -> &FieldInfo {
        &self.s.tables.messages[self.ty as usize].fields[self.pos as usize]
    }

    fn target<'a, 'py>(&self, obj: &'a Bound<'py, PyAny>) -> PyResult<&'a Bound<'py, PyMessage>> {
        let exact = self.s.classes[self.ty as usize]
            .get()
            .is_some_and(|c| std::ptr::eq(obj.get_type_ptr(), c.as_ptr().cast()));
        if exact {
            // SAFETY: `obj` is an instance of the class bound to this
            // field's type, which `Schema::bind` checked derives from
            // `Message`; no other class is bound to the type.
            return Ok(unsafe { obj.cast_unchecked::<PyMessage>() });
        }
        let m = obj.cast::<PyMessage>()?;
        let b = m.state()?;
        if b.ty != self.ty || !Arc::ptr_eq(&b.s, &self.s) {
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

#[pymethods]
impl Field {
    fn __get__(
        slf: &Bound<'_, Self>,
        obj: Option<&Bound<'_, PyAny>>,
        _owner: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let this = slf.get();
        let Some(obj) = obj else {
            return Ok(slf.clone().into_any().unbind());
        };
        let m = this.target(obj)?;
        get_field(py, m, this.pos as usize)
    }

    fn __set__(
        slf: &Bound<'_, Self>,
        obj: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let this = slf.get();
        let m = this.target(obj)?;
        let f = this.info();
        // As Google's: message, repeated and map fields are changed in place,
        // except that the well-known types with a Python form take it
        // (`m.when = datetime(...)`).
        let what = match (f.card, f.kind) {
            (Cardinality::Singular { .. }, Kind::Message(t)) if this.s.assigns[t as usize] => None,
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
    }

    fn __delete__(slf: &Bound<'_, Self>, _obj: &Bound<'_, PyAny>) -> PyResult<()> {
        Err(PyAttributeError::new_err(format!(
            "cannot delete field {}; use ClearField",
            slf.get().info().name
        )))
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

/// Assign field `pos` (checked first), then attach the message.
pub fn set_field(m: &Bound<'_, PyMessage>, pos: usize, value: &Bound<'_, PyAny>) -> PyResult<()> {
    let py = m.py();
    let (s, ty) = {
        let b = m.state()?;
        (b.s.clone(), b.ty)
    };
    let slot = slot_from(py, &s, ty, pos, value)?;
    let old = m.state_mut()?.put(pos, slot);
    release(py, old);
    attach(m)
}

fn kwargs_into(py: Python<'_>, m: &mut Message, kwargs: &Bound<'_, PyDict>) -> PyResult<()> {
    let s = m.s.clone();
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

#[pymethods]
impl PyMessage {
    #[new]
    #[classmethod]
    #[pyo3(signature = (*args, **kwargs))]
    fn new(
        cls: &Bound<'_, PyType>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyMessage> {
        let py = cls.py();
        let t = cls.getattr(pyo3::intern!(py, "__amber__")).map_err(|_| {
            PyTypeError::new_err("amber.proto.Message is abstract; use a loaded message class")
        })?;
        let t = t.cast::<MessageType>()?.get();
        if !args.is_empty() {
            return Err(PyTypeError::new_err(
                "message constructors take keyword arguments only",
            ));
        }
        let mut m = Message::empty(t.s.clone(), t.ty);
        if let Some(kw) = kwargs {
            kwargs_into(py, &mut m, kw)?;
        }
        Ok(m.into())
    }

    /// The message as JSON-ready Python values, equal to
    /// `json_format.MessageToDict` (a dict, or a well-known type's own
    /// form: a Timestamp gives a string); made by the printer directly, no
    /// text in between.
    #[pyo3(signature = (
        *,
        always_print_fields_with_no_presence = false,
        preserving_proto_field_name = false,
        use_integers_for_enums = false,
    ))]
    fn to_dict<'py>(
        slf: &Bound<'py, Self>,
        always_print_fields_with_no_presence: bool,
        preserving_proto_field_name: bool,
        use_integers_for_enums: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        crate::proto::json::to_dict(
            slf,
            preserving_proto_field_name,
            use_integers_for_enums,
            always_print_fields_with_no_presence,
        )
    }

    /// The wire form. Raises `amber.EncodeError` when a required field
    /// (proto2) is missing; a true `deterministic` sorts map entries (any
    /// object, by its truth, as Google's takes it).
    #[pyo3(signature = (deterministic = None))]
    fn SerializeToString<'py>(
        slf: &Bound<'py, Self>,
        deterministic: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        serialize::check_initialized(slf)?;
        serialize::to_bytes(slf, truth(deterministic)?)
    }

    /// The wire form, without the required-field check.
    #[pyo3(signature = (deterministic = None))]
    fn SerializePartialToString<'py>(
        slf: &Bound<'py, Self>,
        deterministic: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        serialize::to_bytes(slf, truth(deterministic)?)
    }

    /// Replace the contents with the message in `data`; returns its length.
    fn ParseFromString(slf: &Bound<'_, Self>, data: &Bound<'_, PyAny>) -> PyResult<usize> {
        let n = parse::merge_from_bytes(slf, data, true)?;
        attach(slf)?;
        Ok(n)
    }

    /// Merge the message in `data` into this one; returns its length.
    fn MergeFromString(slf: &Bound<'_, Self>, data: &Bound<'_, PyAny>) -> PyResult<usize> {
        let n = parse::merge_from_bytes(slf, data, false)?;
        attach(slf)?;
        Ok(n)
    }

    /// A new message parsed from `data`.
    #[classmethod]
    fn FromString<'py>(
        cls: &Bound<'py, PyType>,
        data: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = cls.py();
        // A loaded class is made without calling it; a subclass of one
        // is called, so that its own `__init__` runs, as with Google's.
        if let Ok(t) = cls.getattr(pyo3::intern!(py, "__amber__")) {
            let t = t.cast::<MessageType>()?.get();
            if t.s.class(py, t.ty)?.is(cls) {
                let m = parse::from_bytes(py, &t.s, t.ty, data)?;
                return Ok(instantiate(py, m)?.into_any());
            }
        }
        let m = cls.call0()?;
        parse::merge_from_bytes(m.cast::<PyMessage>()?, data, true)?;
        Ok(m)
    }

    /// Merge another message of the same type into this one.
    fn MergeFrom(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = slf.py();
        let src = same_type(slf, other)?;
        let copy = deep_copy(py, &*src.state()?)?;
        merge_owned(py, &mut *slf.state_mut()?, copy)?;
        attach(slf)
    }

    /// Replace this message's contents with a copy of `other`'s.
    fn CopyFrom(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = slf.py();
        let src = same_type(slf, other)?;
        if src.is(slf) {
            return Ok(());
        }
        let copy = deep_copy(py, &*src.state()?)?;
        let old = slf.state_mut()?.take_contents(copy);
        // Default sub-messages handed out stay tied to the message, as in
        // Google's: each takes the copy's value of its field, if any.
        let mut stubs = Vec::new();
        let old: Vec<Slot> = old
            .into_iter()
            .enumerate()
            .filter_map(|(pos, slot)| match slot {
                Slot::Lazy(c) => {
                    stubs.push((pos, c));
                    None
                }
                other => Some(other),
            })
            .collect();
        release(py, old);
        for (pos, c) in stubs {
            let mut b = slf.state_mut()?;
            match std::mem::replace(b.slot_mut(pos), Slot::Lazy(c)) {
                Slot::Unset => {}
                value => merge_sub(py, &mut b, pos, value)?,
            }
        }
        attach(slf)
    }

    /// Clear every field and the unknown fields.
    fn Clear(slf: &Bound<'_, Self>) -> PyResult<()> {
        let old = {
            let mut b = slf.state_mut()?;
            b.unknown.clear();
            b.input = None;
            std::mem::take(&mut b.vals)
        };
        release(slf.py(), old);
        // A change, as Google counts it: a default sub-message becomes set.
        attach(slf)
    }

    /// Clear one field (or the set member of a oneof, by the oneof's name).
    fn ClearField(slf: &Bound<'_, Self>, field_name: &str) -> PyResult<()> {
        let old = {
            let mut b = slf.state_mut()?;
            let positions: Vec<usize> = match b.s.names[b.ty as usize].get(field_name) {
                Some(&p) if p >= 0 => vec![p as usize],
                Some(&o) => {
                    let o = !o as u32;
                    b.info()
                        .fields
                        .iter()
                        .enumerate()
                        .filter(|(_, f)| f.oneof == Some(o))
                        .map(|(i, _)| i)
                        .collect()
                }
                None => {
                    return Err(PyValueError::new_err(format!(
                        "Protocol message {} has no \"{field_name}\" field.",
                        b.short_name()
                    )))
                }
            };
            let mut old = Vec::new();
            for p in positions {
                if p < b.vals.len() {
                    old.push(std::mem::replace(&mut b.vals[p], Slot::Unset));
                }
            }
            old
        };
        release(slf.py(), old);
        attach(slf)
    }

    /// Whether a field with presence (or a oneof) is set.
    fn HasField(slf: &Bound<'_, Self>, field_name: &str) -> PyResult<bool> {
        let (py, this) = (slf.py(), slf.state()?);
        this.has_field(py, field_name)
    }

    /// The name of the oneof's set member, or `None`.
    fn WhichOneof(slf: &Bound<'_, Self>, oneof_group: &str) -> PyResult<Option<String>> {
        let (py, this) = (slf.py(), slf.state()?);
        this.which_oneof(py, oneof_group)
    }

    /// Whether every required field (proto2), here and below, is set.
    fn IsInitialized(slf: &Bound<'_, Self>) -> PyResult<bool> {
        Ok(serialize::missing_required(slf)?.is_empty())
    }

    /// The paths of required fields that are not set.
    fn FindInitializationErrors(slf: &Bound<'_, Self>) -> PyResult<Vec<String>> {
        serialize::missing_required(slf)
    }

    /// The length of the wire form.
    fn ByteSize(slf: &Bound<'_, Self>) -> PyResult<usize> {
        Ok(serialize::to_bytes(slf, false)?.as_bytes().len())
    }

    /// Drop unknown fields, here and in every sub-message.
    fn DiscardUnknownFields(slf: &Bound<'_, Self>) -> PyResult<()> {
        let py = slf.py();
        attach(slf)?;
        materialize_all(slf)?;
        let mut b = slf.state_mut()?;
        b.unknown.clear();
        let s = b.s.clone();
        let fields = &s.tables.messages[b.ty as usize].fields;
        for (pos, slot) in b.vals.iter().enumerate() {
            if !matches!(fields[pos].kind, Kind::Message(_)) {
                continue;
            }
            let subs: Vec<Py<PyAny>> = match slot {
                Slot::Val(v) => vec![v.clone_ref(py)],
                Slot::List(l) => l.borrow(py).items.to_vec(py)?,
                Slot::Map(m) => m
                    .borrow(py)
                    .data
                    .entries
                    .iter()
                    .map(|e| e.1.clone_ref(py))
                    .collect(),
                _ => continue,
            };
            for v in subs {
                if let Ok(m) = v.bind(py).cast::<PyMessage>() {
                    deeper(|| PyMessage::DiscardUnknownFields(m))?;
                }
            }
        }
        Ok(())
    }

    /// The text format, as Google's `text_format.MessageToString` writes it.
    #[pyo3(signature = (*, as_one_line = false, as_utf8 = true, print_unknown_fields = false))]
    fn to_text(
        slf: &Bound<'_, Self>,
        as_one_line: bool,
        as_utf8: bool,
        print_unknown_fields: bool,
    ) -> PyResult<String> {
        serialize::to_text(
            slf,
            amber_core::proto::text::TextOptions {
                as_one_line,
                as_utf8,
                print_unknown_fields,
            },
        )
    }

    /// A new message from its text format (Google's `text_format.Parse`).
    #[classmethod]
    #[pyo3(signature = (text, *, allow_unknown_field = false))]
    fn from_text<'py>(
        cls: &Bound<'py, PyType>,
        text: &str,
        allow_unknown_field: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let m = cls.call0()?;
        parse::from_text(
            m.cast::<PyMessage>()?,
            text,
            amber_core::proto::text::ParseOptions {
                allow_unknown_field,
            },
        )?;
        Ok(m)
    }

    /// Mark this (default) sub-message present in its parent.
    fn SetInParent(slf: &Bound<'_, Self>) -> PyResult<()> {
        attach(slf)
    }

    /// The unknown fields as they were on the wire (tags included).
    fn _unknown_bytes<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(slf.py(), &slf.state()?.unknown))
    }

    /// `[(position, value)]` of the present fields, by field number.
    fn _present<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyList>> {
        let py = slf.py();
        materialize_all(slf)?;
        let this = slf.state()?;
        let out = PyList::empty(py);
        for pos in 0..this.vals.len() {
            if this.present(py, pos) {
                let v = match &this.vals[pos] {
                    Slot::Val(v) => v.clone_ref(py),
                    Slot::Num(n) => values::number(py, this.info().fields[pos].kind, *n)?,
                    Slot::List(l) => l.clone_ref(py).into_any(),
                    Slot::Map(m) => m.clone_ref(py).into_any(),
                    _ => continue,
                };
                out.append((pos, v))?;
            }
        }
        Ok(out)
    }

    fn __richcmp__(
        slf: &Bound<'_, Self>,
        other: &Bound<'_, PyAny>,
        op: pyo3::basic::CompareOp,
    ) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        use pyo3::basic::CompareOp::*;
        let eq = match op {
            Eq | Ne => {
                let Ok(o) = other.cast::<PyMessage>() else {
                    return Ok(py.NotImplemented());
                };
                let same = {
                    let (a, b) = (slf.state()?, o.state()?);
                    a.ty == b.ty && Arc::ptr_eq(&a.s, &b.s)
                };
                same && (slf.is(o)
                    || serialize::to_bytes(slf, true)?.as_bytes()
                        == serialize::to_bytes(o, true)?.as_bytes())
            }
            _ => return Ok(py.NotImplemented()),
        };
        Ok(
            pyo3::types::PyBool::new(py, if matches!(op, Eq) { eq } else { !eq })
                .to_owned()
                .into_any()
                .unbind(),
        )
    }

    fn __hash__(_slf: &Bound<'_, Self>) -> PyResult<isize> {
        Err(PyTypeError::new_err("unhashable object"))
    }
}

impl Message {
    /// `HasField`.
    fn has_field(&self, py: Python<'_>, field_name: &str) -> PyResult<bool> {
        match self.s.names[self.ty as usize].get(field_name) {
            Some(&p) if p >= 0 => {
                let f = &self.info().fields[p as usize];
                match f.card {
                    Cardinality::Singular { presence: true } => Ok(self.present(py, p as usize)),
                    _ => Err(PyValueError::new_err(format!(
                        "Field {}.{field_name} does not have presence.",
                        self.info().full_name
                    ))),
                }
            }
            Some(&o) => Ok(self.which(py, !o as u32).is_some()),
            None => Err(PyValueError::new_err(format!(
                "Protocol message {} has no \"{field_name}\" field.",
                self.short_name()
            ))),
        }
    }

    /// `WhichOneof`.
    fn which_oneof(&self, py: Python<'_>, oneof_group: &str) -> PyResult<Option<String>> {
        match self.s.names[self.ty as usize].get(oneof_group) {
            Some(&o) if o < 0 => Ok(self
                .which(py, !o as u32)
                .map(|p| self.info().fields[p].name.clone())),
            _ => Err(PyValueError::new_err(format!(
                "Protocol message has no oneof \"{oneof_group}\" field."
            ))),
        }
    }

    /// The position of oneof `o`'s present member.
    fn which(&self, py: Python<'_>, o: u32) -> Option<usize> {
        let fields = &self.info().fields;
        (0..self.vals.len()).find(|&p| fields[p].oneof == Some(o) && self.present(py, p))
    }
}

/// An optional argument's truth (`None`, or left out: false).
fn truth(v: Option<&Bound<'_, PyAny>>) -> PyResult<bool> {
    v.map_or(Ok(false), |v| v.is_truthy())
}

fn same_type<'py>(
    slf: &Bound<'py, PyMessage>,
    other: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyMessage>> {
    let o = other.cast::<PyMessage>().map_err(|_| {
        PyTypeError::new_err(format!(
            "Parameter to MergeFrom() must be instance of same class: expected {} got {}.",
            slf.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default(),
            other
                .get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })?;
    let (a, b) = (slf.state()?, o.state()?);
    if a.ty != b.ty || !Arc::ptr_eq(&a.s, &b.s) {
        return Err(PyTypeError::new_err(format!(
            "Parameter to MergeFrom() must be instance of same class: expected {} got {}.",
            a.info().full_name,
            b.info().full_name
        )));
    }
    Ok(o.clone())
}
