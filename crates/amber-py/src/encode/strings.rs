//! The encoder's string table: repeated strings are written once (STR_DEF)
//! and then referenced (STR_REF/FIXREF), deduplicated by value.
//!
//! Two levels: a direct-mapped cache keyed by object address catches the
//! common case of the same str object again (dict keys, interned literals);
//! a hash map keyed by the UTF-8 bytes catches equal strings that are
//! different objects. Every defined string is kept alive until the encoder
//! drops, so addresses in the cache and bytes in the map stay valid.

use foldhash::fast::FixedState;
use hashbrown::HashMap;
use pyo3::ffi;
use std::hash::{Hash, Hasher};

use crate::obj::Obj;

/// Strings up to this many UTF-8 bytes are deduplicated when they are dict keys.
pub const MAX_KEY_LEN: usize = 64;
/// Strings up to this many UTF-8 bytes are deduplicated when they are values.
pub const MAX_VALUE_LEN: usize = 32;
/// At most this many strings are defined per frame; later ones are written plainly.
pub const MAX_ENTRIES: usize = 1 << 16;

const L1_SIZE: usize = 1024;

/// UTF-8 bytes owned by a str object that the table keeps alive.
#[derive(Clone, Copy)]
struct Utf8Key {
    ptr: *const u8,
    len: usize,
}

impl Utf8Key {
    fn bytes(&self) -> &[u8] {
        // SAFETY: points into a str object held in `StringTable::keep`, or
        // into the caller's live str for lookups.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl PartialEq for Utf8Key {
    fn eq(&self, other: &Self) -> bool {
        self.bytes() == other.bytes()
    }
}
impl Eq for Utf8Key {}
impl Hash for Utf8Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.bytes().hash(state)
    }
}

pub enum Found {
    /// Write a reference to this entry.
    Ref(usize),
    /// Write a definition: the decoder makes it the next entry.
    Define,
    /// Write the string plainly (the table is full).
    Plain,
}

pub struct StringTable {
    l1: Box<[(usize, u32)]>,
    map: HashMap<Utf8Key, u32, FixedState>,
    keep: Vec<Obj>,
}

impl StringTable {
    pub fn new() -> Self {
        StringTable {
            l1: vec![(0usize, 0u32); L1_SIZE].into_boxed_slice(),
            map: HashMap::with_hasher(FixedState::default()),
            keep: Vec::new(),
        }
    }

    #[inline(always)]
    fn slot(o: *mut ffi::PyObject) -> usize {
        let a = o as usize;
        ((a >> 4) ^ (a >> 14)) & (L1_SIZE - 1)
    }

    /// Find `o` (whose UTF-8 is `utf8`) or decide to define it.
    #[inline(always)]
    pub fn find(&mut self, o: *mut ffi::PyObject, utf8: &[u8]) -> Found {
        let slot = Self::slot(o);
        let (addr, idx) = self.l1[slot];
        if addr == o as usize {
            return Found::Ref(idx as usize);
        }
        self.find_slow(o, utf8, slot)
    }

    #[inline(never)]
    fn find_slow(&mut self, o: *mut ffi::PyObject, utf8: &[u8], slot: usize) -> Found {
        let key = Utf8Key {
            ptr: utf8.as_ptr(),
            len: utf8.len(),
        };
        if let Some(&idx) = self.map.get(&key) {
            return Found::Ref(idx as usize);
        }
        if self.keep.len() >= MAX_ENTRIES {
            return Found::Plain;
        }
        let idx = self.keep.len() as u32;
        // SAFETY: `o` is a live str; the table now holds a reference to it,
        // so its address and UTF-8 buffer stay valid while the table lives.
        self.keep.push(unsafe { Obj::from_borrowed(o) });
        self.map.insert(key, idx);
        self.l1[slot] = (o as usize, idx);
        Found::Define
    }
}
