//! The builder the core's decoders (wire, text format, ProtoJSON) fill
//! Rust [`Message`]s through. Sub-messages and containers stay native
//! ([`Slot::Sub`], [`Slot::Subs`], [`Slot::Items`], [`Slot::Entries`])
//! until a read makes their Python objects, and so do strings, bytes and
//! maps of scalar values from a wire parse ([`Slot::Span`],
//! [`Slot::Spans`], [`Slot::Pairs`]: places in the input, which the
//! messages keep, and bits; message values native), so a wire parse makes
//! no Python object but the root's; a singular sub-message seen twice on
//! the wire merges in place.
//!
//! A wire parse keeps each length-delimited sub-message as its place in
//! the input ([`Slot::Raw`], [`Slot::Raws`]) once the decoder has checked
//! it (every error raised at the parse, with its kind, offset and path);
//! [`build_raw`] builds one, its own sub-messages kept as places in turn,
//! when it is first needed (a read, a serialize, a merge).

use amber_core::proto::runtime::{
    decode, plain_fields, Cardinality, DecodeOptions, Failure, FieldInfo, Kind, MapValue,
    MessageBuilder, PlainValue, RawMode, Scalar,
};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::errors;
use crate::proto::state::map::{MapData, Pairs, Part};
use crate::proto::state::message::{instantiate, sub_type};
use crate::proto::state::message::{unset_slots, Message, PyMessage, Slot};
use crate::proto::state::repeated::Items;
use crate::proto::state::schema::SchemaRef;
use crate::proto::state::values;

pub(crate) struct Builder<'py> {
    py: Python<'py>,
    /// Borrowed: a builder lives for one parse, and each message it starts
    /// takes its own count of the schema.
    s: &'py SchemaRef,
    /// The error behind a `Stashed` (the decoder's results stay small).
    err: Option<PyErr>,
    /// The input of a wire parse, and where its bytes are: strings and
    /// bytes are kept as spans of it.
    /// A `Bound`, not a `Py`: a builder also runs under a raw slot, where a
    /// dropped `Py` would go through pyo3's deferred-release pool.
    input: Option<(Bound<'py, PyBytes>, usize, usize)>,
    /// How many map entries may still be reserved ahead on a guess (see
    /// [`Pairs::guess`]): a share of the input's length, so that guesses
    /// over the same bytes, by many small maps, stay within it.
    room: usize,
    /// Where the map entry handed over next lies: its offset and the bytes
    /// of its message left after it (see `MessageBuilder::entry_at`).
    entry: (usize, usize),
    /// How sub-messages are taken: built (text, JSON, a parse without
    /// places), kept as places once checked (a wire parse), or kept as
    /// places unchecked (building a message kept as its place).
    mode: RawMode,
}

/// The builder failed; the error is in `Builder::err`.
pub struct Stashed;

impl<'py> Builder<'py> {
    /// A builder of messages of schema `s` (also used by the JSON parser).
    pub(crate) fn new(py: Python<'py>, s: &'py SchemaRef) -> Self {
        Builder {
            py,
            s,
            err: None,
            input: None,
            room: 0,
            entry: (0, 0),
            mode: RawMode::Build,
        }
    }

    /// A builder for a wire parse of `input` (its bytes `bytes`, under
    /// 4 GiB: places are `u32`s) that keeps strings, bytes and, in `mode`,
    /// sub-messages as places in it.
    pub(crate) fn for_input(
        py: Python<'py>,
        s: &'py SchemaRef,
        input: Bound<'py, PyBytes>,
        bytes: &[u8],
        mode: RawMode,
    ) -> Self {
        debug_assert!(u32::try_from(bytes.len()).is_ok());
        Builder {
            py,
            s,
            err: None,
            input: Some((input, bytes.as_ptr() as usize, bytes.len())),
            // Map entries guessed ahead: at most one per 8 bytes of input
            // over the whole parse (an entry of a string key is at least 4).
            room: bytes.len() / 8,
            entry: (0, 0),
            mode,
        }
    }

    /// The error behind a `Stashed`.
    pub(crate) fn take_err(&mut self) -> PyErr {
        self.err.take().expect("a stashed error")
    }
}

impl Builder<'_> {
    /// A map entry's key or scalar value of kind `kind` kept without an
    /// object: its place in the input, or its bits (`None` without an
    /// input).
    #[inline]
    fn part(&self, v: Scalar<'_>, kind: Kind) -> Option<Part> {
        self.input.as_ref()?;
        match self.span_of(v) {
            Some((off, len)) => Some(Part::Span(off, len)),
            None => v.bits(kind).map(Part::Bits),
        }
    }

    /// Put a map entry of spans and bits into map field `f` of `m`.
    fn pair(
        &mut self,
        m: &mut Message,
        f: &FieldInfo,
        (kk, vk): (Kind, Kind),
        k: Part,
        v: Part,
    ) -> Result<(), Stashed> {
        let bytes = self.input.as_ref().map_or(&[][..], |i| i.0.as_bytes());
        let mut room = self.room;
        if let Some(p) = native_pairs(self.slot(m, f), self.entry, &mut room, false) {
            p.insert(bytes, kk, k, v);
            self.room = room;
            return Ok(());
        }
        self.pair_objects(m, f, (kk, vk), k, v)
    }

    /// [`pair`](Self::pair) into a map whose entries are objects already:
    /// this one joins them (kept out of `pair`, which the usual entry
    /// takes).
    #[cold]
    #[inline(never)]
    fn pair_objects(
        &mut self,
        m: &mut Message,
        f: &FieldInfo,
        (kk, vk): (Kind, Kind),
        k: Part,
        v: Part,
    ) -> Result<(), Stashed> {
        let py = self.py;
        let r = m
            .part_object(py, kk, k)
            .and_then(|ko| Ok((ko, value_object(py, m, vk, v)?)))
            .and_then(|(ko, vo)| self.entries(m, f)?.insert(py, ko, vo));
        r.map_err(|e| self.stash(e))
    }

    /// Put a map entry of a key of spans or bits and a message value into
    /// map field `f` of `m`.
    fn pair_msg(
        &mut self,
        m: &mut Message,
        f: &FieldInfo,
        kk: Kind,
        k: Part,
        v: Message,
    ) -> Result<(), Stashed> {
        let py = self.py;
        let bytes = self.input.as_ref().map_or(&[][..], |i| i.0.as_bytes());
        let mut room = self.room;
        // (Where message values are kept as places, a built one, rare,
        // joins the entries as objects: a map's values are all places, or
        // all native.)
        let native = match self.mode {
            RawMode::Build => native_pairs(self.slot(m, f), self.entry, &mut room, true),
            _ => None,
        };
        if let Some(p) = native {
            p.insert_msg(bytes, kk, k, v);
            self.room = room;
            return Ok(());
        }
        // The map's entries are objects already: this one joins them.
        let r = m
            .part_object(py, kk, k)
            .and_then(|ko| Ok((ko, instantiate(py, v)?.into_any().unbind())))
            .and_then(|(ko, vo)| self.entries(m, f)?.insert(py, ko, vo));
        r.map_err(|e| self.stash(e))
    }

    /// Map field `f`'s entries as objects (those kept natively so far
    /// made objects).
    fn entries<'d>(&self, m: &'d mut Message, f: &FieldInfo) -> PyResult<&'d mut MapData> {
        pairs_to_entries(self.py, m, f.pos as usize)?;
        let slot = self.slot(m, f);
        if !matches!(slot, Slot::Entries(_)) {
            // Room for a small map's entries from the first.
            *slot = Slot::Entries(Box::new(MapData::with_capacity(8)));
        }
        match slot {
            Slot::Entries(d) => Ok(d),
            _ => unreachable!("made a map just above"),
        }
    }

    /// Where a string or bytes value lies in the input, if it comes from
    /// it.
    #[inline(always)]
    fn span_of(&self, v: Scalar<'_>) -> Option<(u32, u32)> {
        let (Scalar::Str(b) | Scalar::Bytes(b)) = v else {
            return None;
        };
        let (_, at, len) = self.input.as_ref()?;
        if b.is_empty() {
            // Also a default the decoder gives (a map entry without its
            // key or value).
            return Some((0, 0));
        }
        let p = (b.as_ptr() as usize).wrapping_sub(*at);
        (p <= *len && b.len() <= *len - p).then_some((p as u32, b.len() as u32))
    }

    /// Field `f`'s slot in `m`. The decoder and the text and JSON parsers
    /// hand over fields of `m`'s own type, whose `pos` says where they are.
    #[inline(always)]
    fn slot<'d>(&self, m: &'d mut Message, f: &FieldInfo) -> &'d mut Slot {
        let pos = f.pos as usize;
        debug_assert_eq!(m.info().position(f), pos);
        if m.vals.len() <= pos {
            let n = self.s.tables.messages[m.ty as usize].fields.len();
            m.grow(n.max(pos + 1));
        }
        &mut m.vals[pos]
    }

    /// Repeated field `f`'s values so far.
    #[inline(always)]
    fn list<'d>(&self, m: &'d mut Message, f: &FieldInfo) -> &'d mut Items {
        let slot = self.slot(m, f);
        if !matches!(slot, Slot::Items(_)) {
            *slot = Slot::Items(Box::new(Items::new(f.kind)));
        }
        match slot {
            Slot::Items(items) => items,
            _ => unreachable!("made a list just above"),
        }
    }

    /// Singular field `f`'s slot, emptied (`Unset`) for a new value, the
    /// other members of its oneof cleared.
    #[inline(always)]
    fn emptied<'d>(&self, m: &'d mut Message, f: &FieldInfo) -> &'d mut Slot {
        self.clear_oneof(m, f);
        let slot = self.slot(m, f);
        if !matches!(slot, Slot::Unset) {
            *slot = Slot::Unset;
        }
        slot
    }

    /// Setting a oneof member clears the others. Only the slots that hold
    /// something are looked up in the field list (a walk of the slots,
    /// sixteen bytes each, touches far less memory than one of the fields).
    fn clear_oneof(&self, m: &mut Message, f: &FieldInfo) {
        if let Some(o) = f.oneof {
            let fields = &self.s.tables.messages[m.ty as usize].fields;
            for (slot, g) in m.vals.iter_mut().zip(fields) {
                if !matches!(slot, Slot::Unset) && g.oneof == Some(o) && g.number != f.number {
                    *slot = Slot::Unset;
                }
            }
        }
    }

    #[cold]
    fn stash(&mut self, e: PyErr) -> Stashed {
        self.err = Some(e);
        Stashed
    }
}

/// Where message `m`'s first non-empty string or bytes value lies in the
/// input, if it has one.
#[inline]
fn first_span(m: &Message) -> Option<u32> {
    m.vals.iter().find_map(|s| match *s {
        Slot::Span(off, len) if len > 0 => Some(off),
        _ => None,
    })
}

/// Room to reserve ahead for the values of a repeated field whose first two
/// values lie at `a` and `b` in the input: the bytes left after `b` over
/// the distance between them, taken from `room` (see [`Builder::room`])
/// and at most 4096.
#[inline]
fn guess_room(
    room: &mut usize,
    input: Option<&(Bound<'_, PyBytes>, usize, usize)>,
    a: u32,
    b: u32,
) -> usize {
    let Some(&(_, _, len)) = input else { return 0 };
    let Some(step) = b.checked_sub(a).filter(|&d| d > 0) else {
        return 0;
    };
    let n = (len.saturating_sub(b as usize) / step as usize)
        .min(4096)
        .min(*room);
    *room -= n;
    n
}

/// Map field entries kept natively in `slot`, made when it is unset
/// (`None`: the entries are objects already), with room for the entries
/// guessed to follow when this is the second entry (`entry`: where it lies
/// and the bytes of its message left after it, see [`Pairs::guess`]),
/// taken from `room`.
#[inline]
fn native_pairs<'d>(
    slot: &'d mut Slot,
    entry: (usize, usize),
    room: &mut usize,
    msgs: bool,
) -> Option<&'d mut Pairs<Message>> {
    if matches!(slot, Slot::Unset) {
        *slot = Slot::Pairs(Box::new(Pairs::small()));
    }
    let Slot::Pairs(p) = slot else { return None };
    if p.entries.len() > 1 {
        return Some(p);
    }
    if let Some(n) = p.guess(entry) {
        let n = n.min(*room);
        *room -= n;
        p.reserve(n, msgs);
    }
    Some(p)
}

/// Put `v` in `slot`, which holds `Unset` ([`Builder::emptied`]).
#[inline(always)]
pub(crate) fn fill(slot: &mut Slot, v: Slot) {
    debug_assert!(matches!(slot, Slot::Unset));
    // SAFETY: `slot` holds `Unset`, which owns nothing, so writing over it
    // without a drop leaks nothing. (An assignment is equivalent, but its
    // copy of the value through the stack stalled on store forwarding: this
    // writes the two words in place.)
    unsafe { std::ptr::write(slot, v) };
}

impl MessageBuilder for Builder<'_> {
    type Msg = Message;
    type Err = Stashed;

    fn start(&mut self, ty: u32) -> Result<Message, Stashed> {
        let mut m = Message::empty(self.s.clone_ref(self.py), ty);
        m.input = self.input.as_ref().map(|i| i.0.clone().unbind());
        Ok(m)
    }

    #[inline(always)]
    fn set(&mut self, m: &mut Message, f: &FieldInfo, v: Scalar<'_>) -> Result<(), Stashed> {
        if let Some(n) = v.bits(f.kind) {
            return self.set_bits(m, f, n);
        }
        if let Some((off, len)) = self.span_of(v) {
            fill(self.emptied(m, f), Slot::Span(off, len));
            return Ok(());
        }
        let o = values::to_py(self.py, v).map_err(|e| self.stash(e))?;
        fill(self.emptied(m, f), Slot::Val(o));
        Ok(())
    }

    #[inline(always)]
    fn set_bits(&mut self, m: &mut Message, f: &FieldInfo, bits: u64) -> Result<(), Stashed> {
        fill(self.emptied(m, f), Slot::Num(bits));
        Ok(())
    }

    #[inline(always)]
    fn push(&mut self, m: &mut Message, f: &FieldInfo, v: Scalar<'_>) -> Result<(), Stashed> {
        if let Some(sp) = self.span_of(v) {
            let slot = self.slot(m, f);
            match slot {
                Slot::Spans(v) => {
                    if v.len() == 1 {
                        // The second value: room for those likely to follow.
                        let n = guess_room(&mut self.room, self.input.as_ref(), v[0].0, sp.0);
                        v.reserve(n);
                    }
                    v.push(sp);
                    return Ok(());
                }
                Slot::Unset => {
                    // Room for a few: most repeated fields have more
                    // than one value.
                    let mut v = Vec::with_capacity(8);
                    v.push(sp);
                    *slot = Slot::Spans(Box::new(v));
                    return Ok(());
                }
                // The field's values are objects already: this one joins
                // them below.
                _ => {}
            }
        }
        let py = self.py;
        let r = self.list(m, f).push_scalar(py, v);
        r.map_err(|e| self.stash(e))
    }

    fn push_bits(&mut self, m: &mut Message, f: &FieldInfo, bits: &[u64]) -> Result<(), Stashed> {
        let py = self.py;
        let r = match self.list(m, f) {
            Items::Nums(_, v) => {
                v.extend_from_slice(bits);
                Ok(())
            }
            items => bits
                .iter()
                .filter_map(|&b| Scalar::from_bits(f.kind, b))
                .try_for_each(|v| items.push_scalar(py, v)),
        };
        r.map_err(|e| self.stash(e))
    }

    fn reserve(&mut self, m: &mut Message, f: &FieldInfo, n: usize) -> Result<(), Stashed> {
        if matches!(f.card, Cardinality::Map) {
            // A map's entries are not a list: a map reserves room from its
            // own guess (see `native_pairs`), within the parse's allowance.
            return Ok(());
        }
        self.list(m, f).reserve(n);
        Ok(())
    }

    fn begin(&mut self, m: &mut Message, f: &FieldInfo, ty: u32) -> Result<Message, Stashed> {
        if matches!(f.card, Cardinality::Singular { .. }) {
            if let Slot::Sub(d) = std::mem::replace(self.slot(m, f), Slot::Unset) {
                return Ok(*d);
            }
        }
        self.start(ty)
    }

    fn end(&mut self, m: &mut Message, f: &FieldInfo, sub: Message) -> Result<(), Stashed> {
        if matches!(f.card, Cardinality::Singular { .. }) {
            self.clear_oneof(m, f);
            *self.slot(m, f) = Slot::Sub(Box::new(sub));
            return Ok(());
        }
        let slot = self.slot(m, f);
        match slot {
            Slot::Subs(v) => {
                if v.len() == 1 {
                    // The second message: room for those likely to follow,
                    // from where the two messages' first strings lie.
                    if let (Some(a), Some(b)) = (first_span(&v[0]), first_span(&sub)) {
                        v.reserve(guess_room(&mut self.room, self.input.as_ref(), a, b));
                    }
                }
                v.push(sub)
            }
            _ => {
                let mut v = Vec::with_capacity(4);
                v.push(sub);
                *slot = Slot::Subs(Box::new(v));
            }
        }
        Ok(())
    }

    fn map_entry(
        &mut self,
        m: &mut Message,
        f: &FieldInfo,
        key: Scalar<'_>,
        value: MapValue<'_, Message>,
    ) -> Result<(), Stashed> {
        let (kk, vk) = m.entry_kinds(f);
        if let MapValue::Scalar(v) = value {
            if let (Some(k), Some(v)) = (self.part(key, kk), self.part(v, vk)) {
                return self.pair(m, f, (kk, vk), k, v);
            }
        }
        self.map_entry_other(m, f, key, value)
    }

    #[inline(always)]
    fn entry_at(&mut self, at: usize, left: usize) {
        self.entry = (at, left);
    }

    #[inline(always)]
    fn raw_mode(&self) -> RawMode {
        self.mode
    }

    fn raw(
        &mut self,
        m: &mut Message,
        f: &FieldInfo,
        ty: u32,
        bytes: &[u8],
    ) -> Result<bool, Stashed> {
        let Some((off, len)) = self.span_of(Scalar::Bytes(bytes)) else {
            return Ok(false);
        };
        if matches!(f.card, Cardinality::Singular { .. }) {
            match self.slot(m, f) {
                Slot::Unset => {}
                Slot::Raw(..) => {
                    // Seen twice: the first one built, and this one merged
                    // into it by the decoder.
                    let Slot::Raw(a, n) = std::mem::replace(self.slot(m, f), Slot::Unset) else {
                        unreachable!("matched just above")
                    };
                    let input = m.input.as_ref().map(|i| i.bind(self.py));
                    let built = build_raw(self.py, self.s, ty, input, (a, n));
                    let built = built.map_err(|e| self.stash(e))?;
                    *self.slot(m, f) = Slot::Sub(Box::new(built));
                    return Ok(false);
                }
                _ => return Ok(false),
            }
            self.clear_oneof(m, f);
            fill(self.slot(m, f), Slot::Raw(off, len));
            return Ok(true);
        }
        let slot = self.slot(m, f);
        match slot {
            Slot::Raws(v) => {
                if v.len() == 1 {
                    // The second message: room for those likely to follow.
                    let n = guess_room(&mut self.room, self.input.as_ref(), v[0].0, off);
                    v.reserve(n);
                }
                v.push((off, len));
            }
            Slot::Unset => {
                let mut v = Vec::with_capacity(4);
                v.push((off, len));
                *slot = Slot::Raws(Box::new(v));
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn raw_entry(
        &mut self,
        m: &mut Message,
        f: &FieldInfo,
        key: Scalar<'_>,
        _ty: u32,
        bytes: &[u8],
    ) -> Result<bool, Stashed> {
        let kinds = m.entry_kinds(f);
        let (Some(k), Some((off, len))) =
            (self.part(key, kinds.0), self.span_of(Scalar::Bytes(bytes)))
        else {
            return Ok(false);
        };
        self.pair(m, f, kinds, k, Part::Raw(off, len))?;
        Ok(true)
    }

    fn unknown(&mut self, m: &mut Message, bytes: &[u8]) -> Result<(), Stashed> {
        m.unknown.extend_from_slice(bytes);
        Ok(())
    }

    #[inline(always)]
    fn set_bits_at(&mut self, m: &mut Message, f: &FieldInfo, bits: u64) -> Result<(), Stashed> {
        self.direct_bits(m, f, bits)
    }

    #[inline(always)]
    fn set_text_at(
        &mut self,
        m: &mut Message,
        f: &FieldInfo,
        v: Scalar<'_>,
    ) -> Result<(), Stashed> {
        self.direct_text(m, f, v)
    }
}

impl Builder<'_> {
    /// A map entry other than spans and bits into a map kept as such: a
    /// message value, or values made objects (kept out of `map_entry`,
    /// which the usual entry takes).
    #[cold]
    #[inline(never)]
    fn map_entry_other(
        &mut self,
        m: &mut Message,
        f: &FieldInfo,
        key: Scalar<'_>,
        value: MapValue<'_, Message>,
    ) -> Result<(), Stashed> {
        let py = self.py;
        let (kk, _) = m.entry_kinds(f);
        let value = match (self.part(key, kk), value) {
            (Some(k), MapValue::Message(d)) => return self.pair_msg(m, f, kk, k, d),
            (_, value) => value,
        };
        let k = values::to_py(py, key).map_err(|e| self.stash(e))?;
        let v = match value {
            MapValue::Scalar(s) => values::to_py(py, s),
            MapValue::Message(d) => instantiate(py, d).map(|o| o.into_any().unbind()),
        }
        .map_err(|e| self.stash(e))?;
        let r = self.entries(m, f).and_then(|d| d.insert(py, k, v));
        r.map_err(|e| self.stash(e))
    }
}

/// The decoder's direct writes (`set_bits_at`, `set_text_at`): singular
/// fields outside oneofs, so there is no other member to clear, whose slot
/// takes the new value whatever it held.
impl Builder<'_> {
    #[inline(always)]
    fn direct_bits(&mut self, m: &mut Message, f: &FieldInfo, bits: u64) -> Result<(), Stashed> {
        let slot = self.slot(m, f);
        if !matches!(slot, Slot::Unset) {
            *slot = Slot::Unset;
        }
        fill(slot, Slot::Num(bits));
        Ok(())
    }

    /// A string or bytes value: its place in the input, or (without an
    /// input) an object, as `set` makes it.
    #[inline(always)]
    fn direct_text(
        &mut self,
        m: &mut Message,
        f: &FieldInfo,
        v: Scalar<'_>,
    ) -> Result<(), Stashed> {
        let Some((off, len)) = self.span_of(v) else {
            return self.set(m, f, v);
        };
        let slot = self.slot(m, f);
        if !matches!(slot, Slot::Unset) {
            *slot = Slot::Unset;
        }
        fill(slot, Slot::Span(off, len));
        Ok(())
    }
}

/// Build a message of type `ty` kept as its place `(off, len)` in `input`
/// (see [`Slot::Raw`]): checked when the input was parsed, so this fails
/// only for want of memory. Its own sub-messages stay places.
pub fn build_raw(
    py: Python<'_>,
    s: &SchemaRef,
    ty: u32,
    input: Option<&Bound<'_, PyBytes>>,
    (off, len): (u32, u32),
) -> PyResult<Message> {
    let Some(input) = input else {
        // Only an empty place has no input (see `Builder::span_of`).
        return Ok(Message::empty(s.clone_ref(py), ty));
    };
    let all = input.as_bytes();
    if let Some(m) = build_plain(s, ty, input, all, (off, len)) {
        return Ok(m);
    }
    let bytes = all
        .get(off as usize..off as usize + len as usize)
        .unwrap_or_default();
    let mut b = Builder::for_input(py, s, input.clone(), all, RawMode::Trust);
    b.room = bytes.len() / 8;
    match decode(&s.tables, ty, bytes, &mut b, DecodeOptions::default()) {
        Ok(m) => Ok(m),
        Err(Failure::Build(Stashed)) => Err(b.take_err()),
        // Not reached: the bytes were checked by the parse that kept them.
        Err(Failure::Wire(e)) => Err(errors::proto_decode(
            py,
            e.kind.name(),
            e.to_string(),
            Some(e.offset + off as usize),
            Some(e.path),
        )),
    }
}

/// [`build_raw`] of a message whose fields are all plain ones (see
/// [`plain_fields`]): each slot written as the builder writes it (a number's
/// bits, a string's place, a sub-message's place), with no decoder between.
/// `None`: the message has other fields, or a sub-message twice (the second
/// merges into the first), and the decoder builds it.
fn build_plain(
    s: &SchemaRef,
    ty: u32,
    input: &Bound<'_, PyBytes>,
    all: &[u8],
    sp: (u32, u32),
) -> Option<Message> {
    let vals = plain_slots(s, ty, all, sp)?;
    Some(kept(
        s.clone_ref(input.py()),
        ty,
        vals,
        input.clone().unbind(),
    ))
}

/// A message of the slots [`plain_slots`] read from `input`, made whole
/// where it is returned to (a message made first and changed after was
/// copied out over its own fresh stores, which stalled on store
/// forwarding).
#[inline(always)]
fn kept(s: SchemaRef, ty: u32, vals: Box<[Slot]>, input: Py<PyBytes>) -> Message {
    Message {
        s,
        ty,
        vals,
        unknown: Default::default(),
        parent: None,
        input: Some(input),
    }
}

/// The slots of [`build_plain`]'s message: returned in two registers, for
/// the caller to make the message where it is kept.
fn plain_slots(s: &SchemaRef, ty: u32, all: &[u8], (off, len): (u32, u32)) -> Option<Box<[Slot]>> {
    let info = &s.tables.messages[ty as usize];
    if !info.plain() {
        return None;
    }
    let mut vals = match len {
        0 => Box::default(),
        _ => unset_slots(info.fields.len()),
    };
    // A place as `Builder::span_of` gives it: an empty value at 0.
    let place = |a: usize, b: usize| {
        if a == b {
            (0, 0)
        } else {
            (a as u32, (b - a) as u32)
        }
    };
    let span = (off as usize, off as usize + len as usize);
    let all_plain = plain_fields(&s.tables, ty, all, span, |pos, v| {
        let slot = &mut vals[pos];
        if !matches!(slot, Slot::Unset) {
            // A field seen again: the last number or string wins.
            if matches!(slot, Slot::Raw(..)) {
                return false;
            }
            *slot = Slot::Unset;
        }
        let v = match v {
            PlainValue::Bits(bits) => Slot::Num(bits),
            PlainValue::Text(a, b) => {
                let (o, n) = place(a, b);
                Slot::Span(o, n)
            }
            PlainValue::Message(a, b) => {
                let (o, n) = place(a, b);
                Slot::Raw(o, n)
            }
        };
        fill(slot, v);
        true
    });
    all_plain.then_some(vals)
}

impl Message {
    /// Build the sub-message of type `ty` kept at place `sp` of this
    /// message's input ([`Slot::Raw`], [`Slot::Raws`]).
    pub fn build_at(&self, py: Python<'_>, ty: u32, sp: (u32, u32)) -> PyResult<Message> {
        build_raw(py, &self.s, ty, self.input.as_ref().map(|i| i.bind(py)), sp)
    }

    /// The object of the sub-message of type `ty` kept at place `sp` (see
    /// [`build_at`](Self::build_at)). A plain one is made in the object
    /// from its slots: a built message returned through a `PyResult` was
    /// reloaded from the stack before its stores had landed, a
    /// store-forwarding stall on every sub-message read.
    pub fn instantiate_at<'py>(
        &self,
        py: Python<'py>,
        ty: u32,
        sp: (u32, u32),
    ) -> PyResult<Bound<'py, PyMessage>> {
        if let Some(input) = &self.input {
            if let Some(vals) = plain_slots(&self.s, ty, input.bind(py).as_bytes(), sp) {
                let m = kept(self.s.clone_ref(py), ty, vals, input.clone_ref(py));
                return instantiate(py, m);
            }
        }
        instantiate(py, self.build_at(py, ty, sp)?)
    }

    /// The objects of the sub-messages of type `ty` kept at places `v` (see
    /// [`instantiate_at`](Self::instantiate_at)).
    pub fn instantiate_all(
        &self,
        py: Python<'_>,
        ty: u32,
        v: &[(u32, u32)],
    ) -> PyResult<Vec<Py<PyAny>>> {
        v.iter()
            .map(|&sp| Ok(self.instantiate_at(py, ty, sp)?.into_any().unbind()))
            .collect()
    }

    /// Build the sub-messages of type `ty` kept at places `v`.
    pub fn build_all(&self, py: Python<'_>, ty: u32, v: &[(u32, u32)]) -> PyResult<Vec<Message>> {
        v.iter().map(|&sp| self.build_at(py, ty, sp)).collect()
    }
}

/// The entries of `p` (map field `f` of `m`, spans of `m`'s input) as
/// objects, message values made objects of their classes.
pub fn pairs_data(
    py: Python<'_>,
    m: &Message,
    f: &FieldInfo,
    p: Pairs<Message>,
) -> PyResult<MapData> {
    let (kk, vk) = m.entry_kinds(f);
    let input = m.input.as_ref().map_or(&[][..], |i| i.bind(py).as_bytes());
    p.into_data(input, kk, |k, v, msg| {
        let ko = m.part_object(py, kk, k)?;
        let vo = match msg {
            Some(msg) => instantiate(py, msg)?.into_any().unbind(),
            None => value_object(py, m, vk, v)?,
        };
        Ok((ko, vo))
    })
}

/// The object of a map entry's value `v` (of kind `vk`, in `m`'s input):
/// a scalar's, or a message's kept as its place, built.
fn value_object(py: Python<'_>, m: &Message, vk: Kind, v: Part) -> PyResult<Py<PyAny>> {
    match v {
        Part::Raw(off, len) => Ok(m
            .instantiate_at(py, sub_type(vk), (off, len))?
            .into_any()
            .unbind()),
        _ => m.part_object(py, vk, v),
    }
}

/// Make map field `pos`'s entries objects when a wire parse kept them
/// natively ([`Slot::Pairs`] becomes [`Slot::Entries`]).
pub fn pairs_to_entries(py: Python<'_>, m: &mut Message, pos: usize) -> PyResult<()> {
    if let Slot::Pairs(p) = m.slot_mut(pos) {
        let p = std::mem::take(&mut **p);
        let d = pairs_data(py, m, &m.info().fields[pos], p)?;
        *m.slot_mut(pos) = Slot::Entries(Box::new(d));
    }
    Ok(())
}
