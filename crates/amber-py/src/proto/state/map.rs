//! A map field's storage: keys as Rust reads them ([`KeyView`]), the
//! entries and their index ([`MapData`]), a parse's entries kept as places
//! in the input ([`Pairs`]), and the `MapContainer` class's state
//! ([`MapField`]; its Python methods are in `api::map`).

use std::borrow::Cow;
use std::hash::BuildHasher;
use std::sync::Arc;

use amber_core::proto::runtime::{FieldInfo, Kind, Scalar};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyString, PyWeakrefReference};

use crate::proto::state::schema::Schema;
use crate::proto::state::values;

/// A map key, hashable in Rust: [`KeyView`] owning its text.
pub type MapKey = KeyView<'static>;

/// A map key as Rust reads it from a stored (checked) key object: a
/// string's text borrowed from the object where it can be.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
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

/// One key or scalar value of a map entry a wire parse read: its bits
/// ([`Scalar::bits`]) or its place (offset, length) in the message's input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Bits(u64),
    Span(u32, u32),
}

impl Part {
    /// The key as [`MapData`] hashes and compares it (a key of `kind`,
    /// with spans into `input`): the same key made an object reads as the
    /// same [`KeyView`], so a [`Pairs`]' index serves the [`MapData`] made
    /// from it.
    fn key(self, input: &[u8], kind: Kind) -> KeyView<'_> {
        match self {
            Part::Span(off, len) => {
                let at = off as usize..off as usize + len as usize;
                KeyView::Str(Cow::Borrowed(input.get(at).unwrap_or_default()))
            }
            Part::Bits(b) => match Scalar::from_bits(kind, b) {
                Some(Scalar::Bool(v)) => KeyView::Bool(v),
                Some(Scalar::I32(v) | Scalar::Enum(v)) => KeyView::Int(v.into()),
                Some(Scalar::I64(v)) => KeyView::Int(v.into()),
                Some(Scalar::U32(v)) => KeyView::Int(v.into()),
                Some(Scalar::U64(v)) => KeyView::Int(v.into()),
                // Floats are not map keys.
                _ => KeyView::Int(b.into()),
            },
        }
    }
}

/// A map's entries a wire parse read, with scalar values, no objects
/// made: in wire order, a repeated key's value replacing the earlier one,
/// with an index by key (a per-process random seed, as [`MapData`]'s).
#[derive(Clone, Default)]
pub struct Pairs {
    pub entries: Vec<(Part, Part)>,
    index: KeyIndex,
}

impl Pairs {
    /// An empty map with room for `n` entries.
    pub fn with_capacity(n: usize) -> Pairs {
        Pairs {
            entries: Vec::with_capacity(n),
            index: KeyIndex::with_capacity(n),
        }
    }

    /// Insert or replace a key of `kind`; `input` holds the bytes spans
    /// point into.
    pub fn insert(&mut self, input: &[u8], kind: Kind, k: Part, v: Part) {
        let key = k.key(input, kind);
        let h = self.index.hash(&key);
        let entries = &self.entries;
        let found = self.index.find(h, |i| entries[i].0.key(input, kind) == key);
        self.index.put(&mut self.entries, h, found, k, v);
    }

    /// The map of objects with these entries, in their order: `object`
    /// makes each key and value. The index moves over as it is, since
    /// [`MapData`] hashes and compares keys as [`Part::key`] does.
    pub fn into_data(
        self,
        mut object: impl FnMut(Part, Part) -> PyResult<(Py<PyAny>, Py<PyAny>)>,
    ) -> PyResult<MapData> {
        let entries = self
            .entries
            .into_iter()
            .map(|(k, v)| object(k, v))
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
    pub s: Arc<Schema>,
    pub ty: u32,
    pub pos: u32,
    pub data: MapData,
    pub owner: Option<Py<PyWeakrefReference>>,
}

impl MapField {
    pub fn new(s: Arc<Schema>, ty: u32, pos: u32, data: MapData) -> MapField {
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
