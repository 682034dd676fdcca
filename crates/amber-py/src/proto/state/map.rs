//! A map field's storage: keys as Rust reads them ([`KeyView`]), the
//! entries and their index ([`MapData`]), a parse's entries kept as places
//! in the input ([`Pairs`]), and the `MapContainer` class's state
//! ([`MapField`]; its Python methods are in `api::map`).

use std::borrow::Cow;
use std::hash::BuildHasher;

use amber_core::proto::runtime::{FieldInfo, Kind};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyString, PyWeakrefReference};

use crate::proto::state::schema::SchemaRef;
use crate::proto::state::values;

/// A map key, hashable in Rust: [`KeyView`] owning its text.
pub type MapKey = KeyView<'static>;

/// A map key as Rust reads it from a stored (checked) key object: a
/// string's text borrowed from the object where it can be. Keys of one
/// map are all of one variant, which orders them (numbers by value, text
/// by bytes).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum KeyView<'a> {
    Int(i128),
    Bool(bool),
    Str(Cow<'a, [u8]>),
}

impl<'a> KeyView<'a> {
    /// The key of a stored (checked) key object.
    pub fn of(k: &'a Bound<'_, PyAny>) -> PyResult<KeyView<'a>> {
        if let Ok(b) = k.cast_exact::<PyBool>() {
            return Ok(KeyView::Bool(b.is_true()));
        }
        if let Ok(s) = k.cast::<PyString>() {
            return Ok(KeyView::Str(match s.to_str() {
                Ok(t) => Cow::Borrowed(t.as_bytes()),
                Err(_) => Cow::Owned(values::escaped_bytes(k)?.as_bytes().to_vec()),
            }));
        }
        if k.is_exact_instance_of::<pyo3::types::PyInt>() {
            // SAFETY: `k` is a live exact int, held by the caller's borrow.
            if let Some(v) = unsafe { crate::ffi::long::small_int(k.as_ptr()) } {
                return Ok(KeyView::Int(i128::from(v)));
            }
        }
        Ok(KeyView::Int(k.extract()?))
    }

    /// The key, owning its text.
    pub fn owned(self) -> MapKey {
        match self {
            KeyView::Int(v) => KeyView::Int(v),
            KeyView::Bool(v) => KeyView::Bool(v),
            KeyView::Str(t) => KeyView::Str(Cow::Owned(t.into_owned())),
        }
    }
}

/// An index of a map's entries by key: each entry's position and its
/// key's hash (a per-process random seed: keys come from untrusted input).
/// The keys stay in the entries, so the index copies none.
#[derive(Clone, Default)]
struct KeyIndex {
    table: hashbrown::HashTable<(u64, usize)>,
    seed: foldhash::fast::RandomState,
}

impl KeyIndex {
    fn with_capacity(n: usize) -> KeyIndex {
        KeyIndex {
            table: hashbrown::HashTable::with_capacity(n),
            seed: Default::default(),
        }
    }

    fn hash(&self, key: &impl std::hash::Hash) -> u64 {
        self.seed.hash_one(key)
    }

    /// The position of the entry whose key hashes to `h` and for which
    /// `same` (given a position) holds.
    fn find(&self, h: u64, same: impl Fn(usize) -> bool) -> Option<usize> {
        self.table
            .find(h, |&(eh, i)| eh == h && same(i))
            .map(|&(_, i)| i)
    }

    /// Replace the value at `found`, or append the entry (its key hashed
    /// `h`).
    fn put<K, V>(&mut self, entries: &mut Vec<(K, V)>, h: u64, found: Option<usize>, k: K, v: V) {
        match found {
            Some(i) => entries[i].1 = v,
            None => {
                self.table
                    .insert_unique(h, (h, entries.len()), |&(eh, _)| eh);
                entries.push((k, v));
            }
        }
    }
}

/// A map's entries in insertion order, with an index by key.
#[derive(Default)]
pub struct MapData {
    pub entries: Vec<(Py<PyAny>, Py<PyAny>)>,
    index: KeyIndex,
}

impl MapData {
    /// An empty map with room for `n` entries.
    pub fn with_capacity(n: usize) -> MapData {
        MapData {
            entries: Vec::with_capacity(n),
            index: KeyIndex::with_capacity(n),
        }
    }

    /// The position of the entry of `key` (hashed `h`), if there is one.
    fn position(&self, py: Python<'_>, h: u64, key: &KeyView<'_>) -> Option<usize> {
        let entries = &self.entries;
        self.index.find(h, |i| {
            KeyView::of(entries[i].0.bind(py)).is_ok_and(|k| k == *key)
        })
    }

    /// Insert or replace (checked key and value).
    pub fn insert(&mut self, py: Python<'_>, k: Py<PyAny>, v: Py<PyAny>) -> PyResult<()> {
        let (h, found) = {
            let key = KeyView::of(k.bind(py))?;
            let h = self.index.hash(&key);
            (h, self.position(py, h, &key))
        };
        self.index.put(&mut self.entries, h, found, k, v);
        Ok(())
    }

    pub fn find(&self, py: Python<'_>, key: &MapKey) -> Option<usize> {
        self.position(py, self.index.hash(key), key)
    }

    /// Remove `key`'s entry: the last entry takes its place.
    pub fn remove(
        &mut self,
        py: Python<'_>,
        key: &MapKey,
    ) -> PyResult<Option<(Py<PyAny>, Py<PyAny>)>> {
        let h = self.index.hash(key);
        let Some(i) = self.position(py, h, key) else {
            return Ok(None);
        };
        let table = &mut self.index.table;
        if let Ok(e) = table.find_entry(h, |&(_, j)| j == i) {
            e.remove();
        }
        let e = self.entries.swap_remove(i);
        let last = self.entries.len();
        if i < last {
            let moved = self.index.hash(&KeyView::of(self.entries[i].0.bind(py))?);
            if let Some(slot) = self.index.table.find_mut(moved, |&(_, j)| j == last) {
                slot.1 = i;
            }
        }
        Ok(Some(e))
    }

    pub fn clear(&mut self) {
        self.entries.clear();
        self.index.table.clear();
    }
}

/// One key or value of a map entry a wire parse read: its bits
/// ([`Scalar::bits`]), its place (offset, length) in the message's input,
/// or (values only) a message kept natively in [`Pairs::msgs`] at the
/// entry's own position, or a message kept as its place in the input
/// (checked by the parse, built when needed, as a message field's
/// `Slot::Raw`).
///
/// [`Scalar::bits`]: amber_core::proto::runtime::Scalar::bits
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Bits(u64),
    Span(u32, u32),
    Msg,
    Raw(u32, u32),
}

impl Part {
    /// The key as [`MapData`] hashes and compares it (a key of `kind`,
    /// with spans into `input`): the same key made an object reads as the
    /// same [`KeyView`], so a [`Pairs`]' index serves the [`MapData`] made
    /// from it.
    fn key(self, input: &[u8], kind: Kind) -> KeyView<'_> {
        match self {
            Part::Span(off, len) => KeyView::Str(Cow::Borrowed(text(input, off, len))),
            // Keys are never messages (a map's keys are scalars).
            Part::Msg | Part::Raw(..) => KeyView::Int(0),
            Part::Bits(b) if kind == Kind::Bool => KeyView::Bool(b != 0),
            Part::Bits(b) => KeyView::Int(number(kind, b)),
        }
    }

    /// Whether this key comes after key `last` (both of `kind`, spans into
    /// `input`) in the order of their [`KeyView`]s (see [`Pairs`]).
    #[inline(always)]
    fn after(self, last: Part, input: &[u8], kind: Kind) -> bool {
        match (self, last) {
            // (`Bool` keys order as 0 and 1 do.)
            (Part::Bits(b), Part::Bits(l)) => number(kind, b) > number(kind, l),
            (Part::Span(o, n), Part::Span(lo, ln)) => {
                bytes_after(text(input, o, n), text(input, lo, ln))
            }
            _ => self.key(input, kind) > last.key(input, kind),
        }
    }
}

/// `a > b` as byte strings, compared in place eight bytes at a time, then
/// byte by byte (map keys are short: a call to `memcmp` for each cost more
/// than the compare).
#[inline(always)]
fn bytes_after(a: &[u8], b: &[u8]) -> bool {
    let word = |c: &[u8]| u64::from_be_bytes(c.try_into().unwrap_or_default());
    for (x, y) in a.chunks_exact(8).zip(b.chunks_exact(8)) {
        let (x, y) = (word(x), word(y));
        if x != y {
            return x > y;
        }
    }
    // The shorter one's whole words are equal to the other's: the bytes
    // after them decide, then the lengths.
    let n = a.len().min(b.len()) / 8 * 8;
    let (a, b) = (&a[n..], &b[n..]);
    for (x, y) in a.iter().zip(b) {
        if x != y {
            return x > y;
        }
    }
    a.len() > b.len()
}

/// The bytes of span `(off, len)` of `input` (none if it is not in it).
#[inline(always)]
fn text(input: &[u8], off: u32, len: u32) -> &[u8] {
    let at = off as usize..off as usize + len as usize;
    input.get(at).unwrap_or_default()
}

/// The number of a key of `kind` whose bits ([`Scalar::bits`]) are `b`,
/// as [`KeyView::Int`] holds it (a bool's 0 or 1).
///
/// [`Scalar::bits`]: amber_core::proto::runtime::Scalar::bits
#[inline(always)]
fn number(kind: Kind, b: u64) -> i128 {
    match kind {
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 | Kind::Enum(_) => (b as i32).into(),
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => (b as i64).into(),
        Kind::Uint32 | Kind::Fixed32 => (b as u32).into(),
        Kind::Bool => (b != 0).into(),
        // Unsigned 64 bits (floats are not map keys).
        _ => b.into(),
    }
}

/// A map's entries a wire parse read, no objects made: keys and scalar
/// values as [`Part`]s, message values (`M`, the native message) in
/// `msgs`, entry `i`'s at `msgs[i]` (so `msgs` is empty, or as long as
/// `entries`). In wire order, a repeated key's value replacing the earlier
/// one at the earlier one's place.
///
/// The index by key (a per-process random seed, as [`MapData`]'s) is made
/// when first needed: while each key comes greater than the one before
/// (as a deterministic serialization writes them), none can repeat an
/// earlier one, and the entries need no index.
pub struct Pairs<M> {
    pub entries: Vec<(Part, Part)>,
    pub msgs: Vec<M>,
    /// Every entry's key, once `indexed`.
    index: KeyIndex,
    /// Whether `index` holds the entries; if not, their keys are in
    /// ascending order.
    indexed: bool,
    /// Where the first entry was (see [`Pairs::guess`]).
    first_at: Option<u32>,
}

impl<M> Default for Pairs<M> {
    fn default() -> Self {
        Pairs::with_capacity(0)
    }
}

/// A first guess at a map's size: room for a few entries.
const FIRST_ROOM: usize = 8;

/// The most entries a map's room is guessed for ahead (see
/// [`Pairs::guess`]): larger maps grow from there.
const MAX_GUESS: usize = 4096;

impl<M> Pairs<M> {
    /// An empty map with room for `n` entries.
    pub fn with_capacity(n: usize) -> Self {
        Pairs {
            entries: Vec::with_capacity(n),
            msgs: Vec::new(),
            index: KeyIndex::default(),
            indexed: false,
            first_at: None,
        }
    }

    /// An empty map with room for a few entries.
    pub fn small() -> Self {
        Pairs::with_capacity(FIRST_ROOM)
    }

    /// Room for `n` more entries (message values too when `msgs`), `n`
    /// capped at [`MAX_GUESS`]: callers pass an estimate from the bytes
    /// present, never a count the input claims.
    pub fn reserve(&mut self, n: usize, msgs: bool) {
        let n = n.min(MAX_GUESS);
        self.entries.reserve(n);
        if self.indexed {
            self.index.table.reserve(n, |&(h, _)| h);
        }
        if msgs {
            self.msgs.reserve(n);
        }
    }

    /// A guess at how many more entries the map will get, when its second
    /// entry comes: this entry's room and those likely to follow it, the
    /// bytes of its message left after it (`left`) over the distance from
    /// the first entry's offset to this one's (`at`; an entry's length,
    /// when entries follow each other). `None` when the map has room
    /// enough already, and for any other entry (the first one's offset is
    /// noted). The caller caps it (see [`Pairs::reserve`]).
    #[inline]
    pub fn guess(&mut self, (at, left): (usize, usize)) -> Option<usize> {
        match self.entries.len() {
            0 => {
                self.first_at = u32::try_from(at).ok();
                None
            }
            1 => {
                let a = self.first_at? as usize;
                let step = at.checked_sub(a).filter(|&d| d > 0)?;
                Some(left / step + 1).filter(|&n| n >= FIRST_ROOM)
            }
            _ => None,
        }
    }

    /// The position of the entry of key `k` (of `kind`, with spans into
    /// `input`), if there is one. If not, the index (when there is one)
    /// takes `k` at the next position, where the caller appends its entry.
    #[inline]
    fn place(&mut self, input: &[u8], kind: Kind, k: Part) -> Option<usize> {
        if !self.indexed {
            match self.entries.last() {
                None => return None,
                Some(&(last, _)) if k.after(last, input, kind) => return None,
                Some(_) => self.make_index(input, kind, self.entries.capacity()),
            }
        }
        let key = k.key(input, kind);
        let h = self.index.hash(&key);
        let entries = &self.entries;
        let found = self.index.find(h, |i| entries[i].0.key(input, kind) == key);
        if found.is_none() {
            let at = self.entries.len();
            self.index.table.insert_unique(h, (h, at), |&(eh, _)| eh);
        }
        found
    }

    /// Index the entries (their keys, of `kind` with spans into `input`,
    /// in ascending order, so all different), with room for `room`.
    #[cold]
    #[inline(never)]
    fn make_index(&mut self, input: &[u8], kind: Kind, room: usize) {
        let mut table = hashbrown::HashTable::with_capacity(room.max(self.entries.len()));
        for (i, &(k, _)) in self.entries.iter().enumerate() {
            let h = self.index.hash(&k.key(input, kind));
            table.insert_unique(h, (h, i), |&(eh, _)| eh);
        }
        self.index.table = table;
        self.indexed = true;
    }

    /// Insert or replace a key of `kind` with a scalar value; `input`
    /// holds the bytes spans point into.
    pub fn insert(&mut self, input: &[u8], kind: Kind, k: Part, v: Part) {
        debug_assert!(self.msgs.is_empty() && v != Part::Msg);
        match self.place(input, kind, k) {
            Some(i) => self.entries[i].1 = v,
            None => self.entries.push((k, v)),
        }
    }

    /// Insert or replace a key of `kind` with a message value `m`.
    pub fn insert_msg(&mut self, input: &[u8], kind: Kind, k: Part, m: M) {
        debug_assert_eq!(self.msgs.len(), self.entries.len());
        if self.msgs.is_empty() && self.entries.capacity() > 0 {
            self.msgs.reserve(self.entries.capacity());
        }
        match self.place(input, kind, k) {
            // The new message replaces the old one in place (dropped here).
            Some(i) => self.msgs[i] = m,
            None => {
                self.entries.push((k, Part::Msg));
                self.msgs.push(m);
            }
        }
    }

    /// Move `other`'s entries in (equal keys replaced, in place); spans of
    /// both point into `input`.
    pub fn extend(&mut self, input: &[u8], kind: Kind, other: Pairs<M>) {
        let mut msgs = other.msgs.into_iter();
        for (k, v) in other.entries {
            match v {
                Part::Msg => match msgs.next() {
                    Some(m) => self.insert_msg(input, kind, k, m),
                    None => debug_assert!(false, "a message value for every entry"),
                },
                v => self.insert(input, kind, k, v),
            }
        }
    }

    /// The same entries, message values made by `copy`.
    pub fn try_copy<E>(&self, copy: impl FnMut(&M) -> Result<M, E>) -> Result<Pairs<M>, E> {
        Ok(Pairs {
            entries: self.entries.clone(),
            msgs: self.msgs.iter().map(copy).collect::<Result<_, E>>()?,
            index: self.index.clone(),
            indexed: self.indexed,
            first_at: self.first_at,
        })
    }

    /// The map of objects with these entries, in their order: `object`
    /// makes each key and value (given the entry's message, if its value
    /// is one). The index (made here if there is none yet, from keys of
    /// `kind` with spans into `input`) moves over as it is, since
    /// [`MapData`] hashes and compares keys as [`Part::key`] does.
    pub fn into_data(
        mut self,
        input: &[u8],
        kind: Kind,
        mut object: impl FnMut(Part, Part, Option<M>) -> PyResult<(Py<PyAny>, Py<PyAny>)>,
    ) -> PyResult<MapData> {
        if !self.indexed {
            self.make_index(input, kind, self.entries.len());
        }
        let mut msgs = self.msgs.into_iter();
        let entries = self
            .entries
            .into_iter()
            .map(|(k, v)| {
                let m = if v == Part::Msg { msgs.next() } else { None };
                object(k, v, m)
            })
            .collect::<PyResult<_>>()?;
        Ok(MapData {
            entries,
            index: self.index,
        })
    }
}

/// A map field's entries.
#[pyclass(module = "amber.proto", name = "MapContainer", mapping)]
pub struct MapField {
    pub s: SchemaRef,
    pub ty: u32,
    pub pos: u32,
    pub data: MapData,
    pub owner: Option<Py<PyWeakrefReference>>,
}

impl MapField {
    pub fn new(s: SchemaRef, ty: u32, pos: u32, data: MapData) -> MapField {
        MapField {
            s,
            ty,
            pos,
            data,
            owner: None,
        }
    }

    pub(crate) fn entry_type(&self) -> u32 {
        match self.s.tables.messages[self.ty as usize].fields[self.pos as usize].kind {
            Kind::Message(e) => e,
            _ => unreachable!("a map field's kind is its entry type"),
        }
    }

    pub(crate) fn entry_field(&self, n: usize) -> &FieldInfo {
        &self.s.tables.messages[self.entry_type() as usize].fields[n]
    }

    pub fn value_kind(&self) -> Kind {
        self.entry_field(1).kind
    }
}
