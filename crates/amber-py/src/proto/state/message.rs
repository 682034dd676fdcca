//! `amber.proto.Message`'s state: the native base of every message class.
//!
//! A message holds one [`Slot`] per field of its type (by position in the
//! type's table), its unknown fields as wire bytes, and, while it is a
//! default sub-message handed out by reading an unset field, a weak link
//! to the parent that takes it in on its first change (Google's
//! semantics: `m.sub.x = 1` makes `m.sub` present; `m.sub.x` alone does
//! not). Messages form trees: assignment and `append` copy, so no message
//! is ever reachable from itself and nothing here needs the cyclic GC.

use std::mem::ManuallyDrop;

use amber_core::proto::runtime::{Cardinality, FieldInfo, Kind, MessageInfo, Scalar};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyWeakrefReference};

use crate::proto::state::cell::{drop_attached, Borrow, GilCell, InCell};
use crate::proto::state::map::{MapData, MapField, Pairs, Part};
use crate::proto::state::repeated::{Items, Repeated};
use crate::proto::state::schema::SchemaRef;
use crate::proto::state::values;

/// One field's state.
pub enum Slot {
    /// Not set: reads give the default.
    Unset,
    /// A string or bytes (exact builtin type), or a present sub-message.
    Val(Py<PyAny>),
    /// A number, bool or enum (the packable kinds), kept as the bits
    /// [`Scalar::bits`] gives; its Python object is made when read.
    Num(u64),
    /// A default sub-message handed out by a read; not present.
    Lazy(Py<PyMessage>),
    /// A repeated field's container.
    List(Py<Repeated>),
    /// A map field's container.
    Map(Py<MapField>),
    /// A present sub-message that no Python code has seen yet (parsed, or
    /// built from a dict): kept as a Rust value until read.
    Sub(Box<Message>),
    /// A repeated message field's messages, none seen by Python code yet
    /// (the vector boxed so that every slot stays two words).
    #[allow(clippy::box_collection)]
    Subs(Box<Vec<Message>>),
    /// A repeated scalar field's values, no container made yet.
    Items(Box<Items>),
    /// A map field's entries, no container made yet.
    Entries(Box<MapData>),
    /// A string or bytes value a parse read, as its place in the message's
    /// [`Message::input`] (offset, length): its object is made when read.
    Span(u32, u32),
    /// A repeated string or bytes field's values a parse read, as places
    /// in the message's input.
    #[allow(clippy::box_collection)]
    Spans(Box<Vec<(u32, u32)>>),
    /// A map's entries a wire parse read, no objects made: keys and
    /// scalar values as bits and spans, message values native.
    Pairs(Box<Pairs<Message>>),
    /// A present sub-message a wire parse checked and kept as its place in
    /// the message's [`Message::input`] (offset, length of its contents),
    /// built when first needed (see `build::build_raw`).
    Raw(u32, u32),
    /// A repeated message field's messages a wire parse checked and kept
    /// as places in the message's input.
    #[allow(clippy::box_collection)]
    Raws(Box<Vec<(u32, u32)>>),
}

impl Slot {
    /// Whether the slot holds a value kept in Rust that becomes a Python
    /// object when first read (see [`materialize`](crate::proto::state::objects::materialize)).
    #[inline]
    pub fn native(&self) -> bool {
        matches!(
            self,
            Slot::Sub(_)
                | Slot::Subs(_)
                | Slot::Items(_)
                | Slot::Entries(_)
                | Slot::Span(..)
                | Slot::Spans(_)
                | Slot::Pairs(_)
                | Slot::Raw(..)
                | Slot::Raws(_)
        )
    }
}

// Every slot is two words: a message of many fields stays small.
const _: () = assert!(std::mem::size_of::<Slot>() == 16);

static UNSET: Slot = Slot::Unset;

/// The base class of every message class: a [`Message`] in a
/// [`GilCell`] (see `cell.rs` for why not pyo3's own borrow flag).
#[pyclass(frozen, subclass, weakref, module = "amber.proto", name = "Message")]
pub struct PyMessage(GilCell<Message>);

impl InCell for PyMessage {
    type Value = Message;
    #[inline]
    fn cell(&self) -> &GilCell<Message> {
        &self.0
    }
}

impl From<Message> for PyMessage {
    fn from(m: Message) -> PyMessage {
        PyMessage(GilCell::new(m))
    }
}

/// A message's state: the contents of a message object, or a message kept
/// natively in a slot until read. Seven words: a parse moves each
/// sub-message it builds (into its parent's slot or list) and frees it,
/// so what only some messages have is boxed.
pub struct Message {
    pub s: SchemaRef,
    pub ty: u32,
    /// By field position: empty (a new message allocates nothing) or
    /// allocated once at the full length of the field list.
    pub vals: Box<[Slot]>,
    pub unknown: Unknown,
    /// While a default sub-message: the parent and the field's position.
    #[allow(clippy::type_complexity)]
    pub parent: Option<Box<(Py<PyWeakrefReference>, u32)>>,
    /// The bytes the message was parsed from, while spans point into them:
    /// the `bytes` object parsed (immutable), or a copy of any other buffer
    /// (which may change after the parse). A Python object rather than an
    /// `Arc`: every sub-message of a parse keeps it, and the GIL makes its
    /// count a plain increment, where an `Arc`'s is an atomic one.
    pub input: Option<Py<PyBytes>>,
}

const _: () = assert!(std::mem::size_of::<Message>() == 56);

/// A message's unknown fields, as wire bytes: nothing allocated while
/// there are none (most messages), one word when there are (the vector
/// boxed so that every message stays seven words).
#[derive(Clone, Default)]
#[allow(clippy::box_collection)]
pub struct Unknown(Option<Box<Vec<u8>>>);

impl Unknown {
    pub fn extend_from_slice(&mut self, b: &[u8]) {
        if !b.is_empty() {
            self.0
                .get_or_insert_with(Default::default)
                .extend_from_slice(b);
        }
    }

    pub fn clear(&mut self) {
        self.0 = None;
    }
}

impl std::ops::Deref for Unknown {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.0.as_deref().map_or(&[], |v| v.as_slice())
    }
}

/// `n` unset slots, in one allocation of exactly their size.
pub fn unset_slots(n: usize) -> Box<[Slot]> {
    let mut vals = Box::new_uninit_slice(n);
    for v in vals.iter_mut() {
        v.write(Slot::Unset);
    }
    // SAFETY: every element was written just above.
    unsafe { vals.assume_init() }
}

impl Drop for Message {
    /// Dropping a chain of sub-messages one inside the other recurses once
    /// per level (a message object's last reference freed frees its
    /// children in turn), and a tree built in Python has no depth limit.
    /// When the stack runs low, the fields of the sub-messages only this
    /// message holds (native ones, and objects no one else references, in
    /// singular and repeated message fields) are taken out and dropped from
    /// a list instead, each sub-message freed with none left inside.
    fn drop(&mut self) {
        if let Some(input) = self.input.take() {
            // SAFETY: a `Message` lives in its object or in the frame of a
            // call from Python (see `drop_attached`).
            unsafe { drop_attached(input) };
        }
        let vals = std::mem::take(&mut self.vals);
        // The slots before the first that owns something need no look
        // (a parsed message's are mostly numbers and places).
        let Some(first) = vals.iter().position(|s| !plain(s)) else {
            drop_slots(vals, usize::MAX);
            return;
        };
        if !vals[first..].iter().any(holds_messages) || !amber_core::bytes::stack::low() {
            drop_slots(vals, first);
            return;
        }
        let mut pending = vec![vals];
        Python::attach(|py| {
            while let Some(mut vals) = pending.pop() {
                for slot in vals.iter_mut().filter(|s| holds_messages(s)) {
                    take_children(py, slot, &mut pending);
                }
                drop_slots(vals, 0);
            }
        });
    }
}

/// Whether a slot owns nothing: no drop code to run for it.
#[inline(always)]
fn plain(slot: &Slot) -> bool {
    matches!(
        slot,
        Slot::Unset | Slot::Num(_) | Slot::Span(..) | Slot::Raw(..)
    )
}

/// Drop a message's slots from position `from` on (those before own
/// nothing; `usize::MAX`: none owns anything), running drop code only for
/// those that own something (a parsed message's slots are mostly numbers
/// and spans, and a call per slot to its drop code cost more than the
/// check).
#[inline]
fn drop_slots(vals: Box<[Slot]>, from: usize) {
    if vals.is_empty() {
        return;
    }
    // SAFETY: `ManuallyDrop<Slot>` is `repr(transparent)` over `Slot`, so
    // the slice and its allocation keep their layout; the box frees the same
    // allocation, without dropping the elements.
    let mut vals: Box<[ManuallyDrop<Slot>]> =
        unsafe { Box::from_raw(Box::into_raw(vals) as *mut [ManuallyDrop<Slot>]) };
    for slot in vals.iter_mut().skip(from) {
        if !plain(slot) {
            // SAFETY: each slot is dropped at most once, here, and not used
            // after: the box is then freed without touching its elements.
            unsafe { ManuallyDrop::drop(slot) };
        }
    }
}

/// Whether a slot may hold sub-messages with fields of their own.
#[inline]
fn holds_messages(slot: &Slot) -> bool {
    match slot {
        Slot::Sub(_) | Slot::Subs(_) | Slot::Val(_) | Slot::Lazy(_) | Slot::List(_) => true,
        Slot::Pairs(p) => !p.msgs.is_empty(),
        _ => false,
    }
}

/// Move the fields of the sub-messages `slot` alone holds into `out`.
fn take_children(py: Python<'_>, slot: &mut Slot, out: &mut Vec<Box<[Slot]>>) {
    let mut sole = |o: &Bound<'_, PyAny>| {
        if crate::ffi::obj::is_sole(o) {
            if let Ok(m) = o.cast::<PyMessage>() {
                if let Ok(mut m) = m.state_mut() {
                    out.push(std::mem::take(&mut m.vals));
                }
            }
        }
    };
    match slot {
        Slot::Sub(m) => out.push(std::mem::take(&mut m.vals)),
        Slot::Subs(v) => out.extend(v.iter_mut().map(|m| std::mem::take(&mut m.vals))),
        Slot::Pairs(p) => out.extend(p.msgs.iter_mut().map(|m| std::mem::take(&mut m.vals))),
        Slot::Val(o) => sole(o.bind(py)),
        Slot::Lazy(o) => sole(o.bind(py).as_any()),
        Slot::List(l) => {
            let l = l.bind(py);
            if crate::ffi::obj::is_sole(l.as_any()) {
                if let Ok(c) = l.try_borrow() {
                    if let Items::Objs(objs) = &c.items {
                        objs.iter().for_each(|o| sole(o.bind(py)));
                    }
                }
            }
        }
        _ => {}
    }
}

impl Message {
    /// Take `new`'s fields, unknown fields and input in place of this
    /// message's; returns the slots replaced, to be released.
    pub fn take_contents(&mut self, mut new: Message) -> Vec<Slot> {
        self.unknown = std::mem::take(&mut new.unknown);
        self.input = new.input.take();
        std::mem::replace(&mut self.vals, std::mem::take(&mut new.vals)).into_vec()
    }

    pub fn empty(s: SchemaRef, ty: u32) -> Message {
        Message {
            s,
            ty,
            vals: Box::default(),
            unknown: Unknown::default(),
            parent: None,
            input: None,
        }
    }

    /// The bytes of span `(offset, length)` of the message's input.
    pub fn span<'a>(&'a self, py: Python<'_>, (off, len): (u32, u32)) -> &'a [u8] {
        let at = off as usize..off as usize + len as usize;
        match &self.input {
            Some(i) => i.as_bytes(py).get(at).unwrap_or_default(),
            None => &[],
        }
    }

    /// The object of span `sp`, a value of field kind `kind`.
    pub fn span_object(&self, py: Python<'_>, kind: Kind, sp: (u32, u32)) -> PyResult<Py<PyAny>> {
        values::text(py, kind, self.span(py, sp))
    }

    /// The object of a map entry's key or scalar value `p`, of kind
    /// `kind` (a message value is made from its native message instead:
    /// see [`Pairs::into_data`]).
    pub fn part_object(&self, py: Python<'_>, kind: Kind, p: Part) -> PyResult<Py<PyAny>> {
        match p {
            Part::Bits(b) => values::number(py, kind, b),
            Part::Span(off, len) => self.span_object(py, kind, (off, len)),
            Part::Msg | Part::Raw(..) => Err(PyValueError::new_err(
                "a map's message value read as a scalar",
            )),
        }
    }

    /// A map entry's key or value `p`, of kind `kind`, as a scalar
    /// (`None`: bits for a kind that is not a number).
    pub fn part_scalar<'a>(&'a self, py: Python<'_>, kind: Kind, p: Part) -> Option<Scalar<'a>> {
        match p {
            Part::Bits(b) => Scalar::from_bits(kind, b),
            Part::Span(off, len) => Some(text_scalar(kind, self.span(py, (off, len)))),
            Part::Msg | Part::Raw(..) => None,
        }
    }

    /// The kinds of map field `f`'s keys and values.
    pub fn entry_kinds(&self, f: &FieldInfo) -> (Kind, Kind) {
        match f.kind {
            Kind::Message(e) => {
                let ef = &self.s.tables.messages[e as usize].fields;
                (ef[0].kind, ef[1].kind)
            }
            k => (k, k),
        }
    }

    /// The objects of spans `v` (values of a field of `kind`), as a list
    /// of objects.
    pub fn span_objects(&self, py: Python<'_>, kind: Kind, v: &[(u32, u32)]) -> PyResult<Items> {
        let objs = v.iter().map(|&sp| self.span_object(py, kind, sp));
        Ok(Items::Objs(objs.collect::<PyResult<_>>()?))
    }

    pub fn info(&self) -> &MessageInfo {
        &self.s.tables.messages[self.ty as usize]
    }

    pub fn slot(&self, pos: usize) -> &Slot {
        self.vals.get(pos).unwrap_or(&UNSET)
    }

    pub fn slot_mut(&mut self, pos: usize) -> &mut Slot {
        if self.vals.len() <= pos {
            let n = self.info().fields.len().max(pos + 1);
            self.grow(n);
        }
        &mut self.vals[pos]
    }

    /// Make room for `n` slots, the slots set so far kept.
    pub fn grow(&mut self, n: usize) {
        if self.vals.is_empty() {
            self.vals = unset_slots(n);
            return;
        }
        let mut vals = unset_slots(n);
        for (d, s) in vals
            .iter_mut()
            .zip(std::mem::take(&mut self.vals).into_vec())
        {
            *d = s;
        }
        self.vals = vals;
    }

    /// Set field `pos` to a new slot, clearing the other members of its
    /// oneof. Returns the slots replaced, to be dropped (or detached)
    /// once no borrow is held.
    pub fn put(&mut self, pos: usize, slot: Slot) -> Replaced {
        let first = std::mem::replace(self.slot_mut(pos), slot);
        let mut rest = Vec::new();
        if let Some(o) = self.info().fields[pos].oneof {
            let members: Vec<usize> = (0..self.vals.len())
                .filter(|&i| i != pos && self.info().fields[i].oneof == Some(o))
                .collect();
            for i in members {
                // A default sub-message handed out stays tied to the message
                // (it is not set): a change to it later switches the oneof
                // to it, as in Google's.
                if !matches!(self.vals[i], Slot::Lazy(_)) {
                    rest.push(std::mem::replace(&mut self.vals[i], Slot::Unset));
                }
            }
        }
        Replaced { first, rest }
    }

    /// Whether field `pos` is present (set, non-empty, or for a field
    /// without presence, not zero).
    pub fn present(&self, py: Python<'_>, pos: usize) -> bool {
        let f = &self.info().fields[pos];
        match self.slot(pos) {
            Slot::Unset | Slot::Lazy(_) => false,
            Slot::Val(v) => match f.card {
                Cardinality::Singular { presence: false } => !values::is_zero(v.bind(py), f.kind),
                _ => true,
            },
            Slot::Num(b) => match f.card {
                Cardinality::Singular { presence: false } => !values::zero_bits(f.kind, *b),
                _ => true,
            },
            Slot::List(l) => !l.borrow(py).items.is_empty(),
            Slot::Map(m) => !m.borrow(py).data.entries.is_empty(),
            Slot::Sub(_) => true,
            Slot::Subs(v) => !v.is_empty(),
            Slot::Items(v) => !v.is_empty(),
            Slot::Entries(d) => !d.entries.is_empty(),
            Slot::Span(_, len) => match f.card {
                Cardinality::Singular { presence: false } => *len > 0,
                _ => true,
            },
            Slot::Spans(v) => !v.is_empty(),
            Slot::Pairs(p) => !p.entries.is_empty(),
            Slot::Raw(..) => true,
            Slot::Raws(v) => !v.is_empty(),
        }
    }

    pub(crate) fn pos_of(&self, name: &str) -> PyResult<usize> {
        self.s.field_pos(self.ty, name).ok_or_else(|| {
            PyValueError::new_err(format!(
                "Protocol message {} has no \"{name}\" field.",
                self.short_name()
            ))
        })
    }

    pub fn short_name(&self) -> &str {
        let full = &self.info().full_name;
        full.rsplit('.').next().unwrap_or(full)
    }
}

/// The slots `Message::put` replaced: the field's own, and the other
/// members of its oneof (no allocation when there are none).
pub struct Replaced {
    first: Slot,
    rest: Vec<Slot>,
}

impl IntoIterator for Replaced {
    type Item = Slot;
    type IntoIter = std::iter::Chain<std::iter::Once<Slot>, std::vec::IntoIter<Slot>>;

    fn into_iter(self) -> Self::IntoIter {
        std::iter::once(self.first).chain(self.rest)
    }
}

/// Drop replaced slots, cutting the parent link of default sub-messages
/// so that a later change to them does not reach back into this message.
pub fn release(py: Python<'_>, old: impl IntoIterator<Item = Slot>) {
    for s in old {
        if let Slot::Lazy(c) = s {
            if let Ok(mut c) = c.bind(py).state_mut() {
                c.parent = None;
            }
        }
    }
}

/// A string or bytes value as a scalar of field kind `kind`.
#[inline]
pub fn text_scalar(kind: Kind, b: &[u8]) -> Scalar<'_> {
    match kind {
        Kind::Bytes => Scalar::Bytes(b),
        _ => Scalar::Str(b),
    }
}

/// A new instance of message type `m.ty`'s class holding `m`, made
/// without calling the class: no `__new__` or `__init__` runs (the class
/// is the one `load` made, which defines neither), so a sub-message costs
/// one allocation instead of a call through the class's slots.
#[inline]
pub fn instantiate(py: Python<'_>, m: Message) -> PyResult<Bound<'_, PyMessage>> {
    // No count taken: the schema holds the class, and `m` (moved into
    // `init`) holds the schema until the object is made.
    let cls = m.s.class(py, m.ty)?.as_type_ptr();
    let init = pyo3::PyClassInitializer::from(PyMessage::from(m));
    // SAFETY: `cls` is the class bound to this type by `Schema::bind`,
    // which checks that it is a subclass of `Message`, alive as said above:
    // allocating an object of that type and writing a `Message` into it is
    // what pyo3 does for a subclass whose `__new__` is `Message`'s.
    let obj = unsafe { pyo3::impl_::pymethods::tp_new_impl(py, init, cls)? };
    // SAFETY: `obj` is a new, owned reference to an object of type `cls`,
    // a subclass of `Message`.
    Ok(unsafe { Bound::from_owned_ptr(py, obj).cast_into_unchecked::<PyMessage>() })
}

/// The message type of a message field of kind `kind` (one that holds a
/// message kept as its place: [`Slot::Raw`], [`Part::Raw`]).
#[inline]
pub fn sub_type(kind: Kind) -> u32 {
    match kind {
        Kind::Message(t) => t,
        _ => unreachable!("a message kept as its place in a field of another kind"),
    }
}
