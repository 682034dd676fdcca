//! The encoder's shape table: a dict whose keys are the very key objects,
//! in the same order, of an earlier dict is written as SHAPED (a shape
//! index and the values), with no keys at all.
//!
//! Records built by one piece of code share their key objects: literal keys,
//! `json.loads` (which memoizes keys), database rows, `dataclasses.asdict`.
//! Matching by object identity costs a load and a compare per key, where
//! writing a key costs a string-table lookup; keys that are equal but not
//! the same objects are simply written as keys.
//!
//! Policy, as for strings: a key sequence is defined (SHAPE_DEF) the second
//! time it is seen, so one-off dicts keep their plain, shorter form. A slot
//! seen once holds only a fingerprint (a false match merely defines a shape
//! early: SHAPE_DEF carries its keys); a defined slot keeps its keys alive
//! and is checked key by key. A defined shape that was referenced is never
//! evicted. When lookups find almost nothing they stop for the rest of the
//! frame. The table is reused across calls on a thread; a generation number
//! empties it in O(1).
//!
//! A shape's keys are columns: the table also tracks, per column, whether
//! looking its str values up by content finds anything. A column of unique
//! values (names, ids) stops being looked up after a window of misses,
//! while a column of repeated codes next to it keeps being deduplicated.
//!
//! In deterministic mode keys match by their text instead: the fingerprint
//! hashes the keys' UTF-8 and a match compares it, so equal dicts get equal
//! bytes however their key objects were made, in any process.

use pyo3::ffi;
use std::mem::MaybeUninit;

use super::hitrate::HitRate;
use crate::ffi::borrowed::NoCode;
#[cfg(amber_dict_table)]
use crate::ffi::dict;
use crate::ffi::obj::Obj;

/// Dicts of this many keys are looked up: a one-key dict gains nothing (a
/// SHAPED header is as long as a FIXDICT and one string reference).
pub const MIN_KEYS: usize = 2;
pub const MAX_KEYS: usize = 64;
/// At most this many shapes are defined per frame.
pub const MAX_SHAPES: usize = 1 << 16;

const SLOTS: usize = 512;
/// `idx` of a slot seen once and not yet defined.
const SEEN: u32 = u32::MAX;
/// Content lookups of one column's str values, over windows of 256.
type Column = HitRate<256>;

#[derive(Clone, Copy, Default)]
struct Slot {
    fingerprint: u64,
    gen: u32,
    /// Shape index, or `SEEN`.
    idx: u32,
    /// A defined shape's keys are `keys[start..start + n]`.
    start: u32,
    n: u32,
    /// Whether a SHAPED reference was ever written for it.
    used: bool,
}

pub struct ShapeTable {
    gen: u32,
    /// Lookups, over windows of 1,024.
    lookups: HitRate<1024>,
    slots: Box<[Slot; SLOTS]>,
    /// The keys of every defined shape, kept alive for the frame.
    keys: Vec<Obj>,
    /// One per key in `keys`.
    columns: Vec<Column>,
    defined: usize,
    deterministic: bool,
}

impl ShapeTable {
    pub fn new() -> ShapeTable {
        ShapeTable {
            gen: 0,
            lookups: HitRate::default(),
            slots: super::boxed_array(Slot::default()),
            keys: Vec::new(),
            columns: Vec::new(),
            defined: 0,
            deterministic: false,
        }
    }

    pub fn begin_frame(&mut self, deterministic: bool) {
        self.deterministic = deterministic;
        self.gen = self.gen.wrapping_add(1);
        if self.gen == 0 {
            self.slots.fill(Slot::default());
            self.gen = 1;
        }
        self.defined = 0;
        self.lookups = HitRate::default();
    }

    /// No dict is looked up until `resume`.
    pub fn suspend(&mut self) -> HitRate<1024> {
        std::mem::replace(&mut self.lookups, HitRate::stopped())
    }

    pub fn resume(&mut self, lookups: HitRate<1024>) {
        self.lookups = lookups;
    }

    pub fn end_frame(&mut self) {
        self.keys.clear();
        self.columns.clear();
        if self.keys.capacity() > MAX_SHAPES {
            self.keys = Vec::new();
            self.columns = Vec::new();
        }
    }

    /// Whether dicts of `n` keys are worth looking up now.
    #[inline(always)]
    pub fn wanted(&self, n: usize) -> bool {
        !self.lookups.off() && (MIN_KEYS..=MAX_KEYS).contains(&n)
    }

    #[inline(always)]
    fn slot(fingerprint: u64) -> usize {
        (fingerprint.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 48) as usize % SLOTS
    }

    /// The defined shape whose keys are `keys`, if any: its index, and its
    /// first column.
    #[inline(always)]
    pub fn find(&mut self, keys: &KeyView) -> Option<(usize, usize)> {
        self.lookups.tried();
        let at = Self::slot(keys.fingerprint);
        let s = &self.slots[at];
        if s.gen != self.gen
            || s.fingerprint != keys.fingerprint
            || s.idx == SEEN
            || s.n as usize != keys.n
        {
            return None;
        }
        let start = s.start as usize;
        let known = &self.keys[start..start + keys.n];
        // SAFETY: `Obj` is a transparent non-null object pointer.
        let known = unsafe {
            std::slice::from_raw_parts(known.as_ptr() as *const *mut ffi::PyObject, keys.n)
        };
        let same = if self.deterministic {
            // SAFETY: shapes are defined only from str keys, and a view made
            // by content holds only str keys; all are live (the view's
            // until Python code runs, the table's held in `keys`).
            unsafe { keys.equal_text(known) }
        } else {
            keys.equal(known)
        };
        if !same {
            return None;
        }
        let idx = s.idx as usize;
        self.slots[at].used = true;
        self.lookups.hit();
        Some((idx, start))
    }

    /// After `find` found nothing: note the sighting of `keys`, and define
    /// them as the next shape if this is the second; then its first column.
    #[inline(never)]
    pub fn sighting(&mut self, keys: &KeyView) -> Option<usize> {
        let (gen, fingerprint, n) = (self.gen, keys.fingerprint, keys.n);
        let slot = &mut self.slots[Self::slot(fingerprint)];
        let current = slot.gen == gen;
        if current && slot.idx != SEEN && slot.used {
            // Never evict a shape that pays for itself.
            return None;
        }
        if !(current && slot.idx == SEEN && slot.fingerprint == fingerprint && slot.n as usize == n)
        {
            *slot = Slot {
                fingerprint,
                gen,
                idx: SEEN,
                start: 0,
                n: n as u32,
                used: false,
            };
            return None;
        }
        // Second sighting. Only str keys are matched (keys of other types
        // may be equal without being the same object, and some run Python
        // code to encode).
        self.lookups.hit();
        // SAFETY: the view was just made from a live dict and no Python
        // code has run since (`KeyView::of`'s contract), so its keys are live.
        let all_str =
            || (0..n).all(|i| unsafe { ffi::Py_TYPE(keys.get(i)) } == &raw mut ffi::PyUnicode_Type);
        if self.defined >= MAX_SHAPES || !all_str() {
            return None;
        }
        let start = self.keys.len();
        slot.idx = self.defined as u32;
        slot.start = start as u32;
        self.defined += 1;
        // SAFETY: the keys are live (borrowed from the dict being written);
        // holding references keeps their addresses unique for the frame.
        self.keys
            .extend((0..n).map(|i| unsafe { Obj::from_borrowed(keys.get(i)) }));
        self.columns.resize(self.keys.len(), Column::default());
        Some(start)
    }

    /// The key of column `c` (held by the table for the frame).
    #[inline(always)]
    pub fn key(&self, c: usize) -> *mut ffi::PyObject {
        self.keys.get(c).map_or(std::ptr::null_mut(), Obj::ptr)
    }

    /// Whether str values of column `c` are still looked up by content.
    #[inline(always)]
    pub fn column_on(&self, c: usize) -> bool {
        self.columns.get(c).is_some_and(|col| !col.off())
    }

    /// Note whether a content lookup in column `c` found its string.
    #[inline(always)]
    pub fn column_saw(&mut self, c: usize, hit: bool) {
        if let Some(col) = self.columns.get_mut(c) {
            col.tried();
            if hit {
                col.hit();
            }
        }
    }
}

/// The keys of a dict about to be written: read in place from its entry
/// table, or collected into a buffer (older Pythons, tables with holes).
pub struct KeyView {
    first: *const *mut ffi::PyObject,
    stride: usize,
    pub n: usize,
    /// Set when the keys were collected: the walk over the values must then
    /// check them again (see `Encoder::dict_entries`).
    pub collected: bool,
    fingerprint: u64,
}

impl KeyView {
    /// The keys of dict `o` of `n` pairs (`MIN_KEYS <= n <= MAX_KEYS`), using
    /// `buf` if they must be collected; `None` if `o` does not hold `n` pairs.
    ///
    /// # Safety
    /// `o` is a live dict; the view is valid until Python code runs.
    #[inline(always)]
    pub unsafe fn of(
        o: *mut ffi::PyObject,
        n: usize,
        buf: &mut [MaybeUninit<*mut ffi::PyObject>; MAX_KEYS],
    ) -> Option<KeyView> {
        #[cfg(amber_dict_table)]
        // SAFETY: `o` is a live dict (this function's contract).
        if let Some(table) = unsafe { dict::Table::of(o) } {
            if table.n == n {
                // No deleted entries: the keys are in place, in order.
                let (first, stride) = table.keys();
                return Some(Self::new(first, stride, n, false));
            }
        }
        let mut count = 0;
        let mut pos: ffi::Py_ssize_t = 0;
        let mut k: *mut ffi::PyObject = std::ptr::null_mut();
        let mut v: *mut ffi::PyObject = std::ptr::null_mut();
        // SAFETY: `o` is a live dict; PyDict_Next checks `pos`, and runs no
        // Python code.
        while unsafe { ffi::PyDict_Next(o, &mut pos, &mut k, &mut v) } != 0 {
            if count == n.min(MAX_KEYS) {
                return None;
            }
            buf[count].write(k);
            count += 1;
        }
        (count == n).then(|| Self::new(buf.as_ptr() as *const *mut ffi::PyObject, 1, n, true))
    }

    fn new(first: *const *mut ffi::PyObject, stride: usize, n: usize, collected: bool) -> Self {
        let mut view = KeyView {
            first,
            stride,
            n,
            collected,
            fingerprint: 0,
        };
        // The count and three keys: cheap, and a false match only costs a
        // key-by-key check (or defines a shape early).
        view.fingerprint = (n as u64)
            ^ (view.get(0) as u64).rotate_left(17)
            ^ (view.get(n / 2) as u64).rotate_left(34)
            ^ view.get(n - 1) as u64;
        view
    }

    /// Fingerprint the keys by their text, for deterministic mode; false if
    /// one is not a str (or not UTF-8): such a dict is written plainly.
    ///
    /// # Safety
    /// The view's keys are live (no Python code ran since `of`).
    pub unsafe fn by_text(&mut self) -> bool {
        let mut h = self.n as u64;
        // SAFETY: reading text runs no Python code.
        let quiet = unsafe { NoCode::new() };
        for i in 0..self.n {
            // SAFETY: the keys are live (this function's contract), held by
            // their dict while no Python code runs.
            let k = unsafe { quiet.lend(self.get(i)) };
            let Some(utf8) = k.exact_str().and_then(|s| s.utf8()) else {
                return false;
            };
            h = (h ^ text_hash(utf8))
                .wrapping_mul(0x9E37_79B9_7F4A_7C15)
                .rotate_left(29);
        }
        self.fingerprint = h;
        true
    }

    /// Whether the keys have the text of `known`, in order (`known.len() ==
    /// n`).
    ///
    /// # Safety
    /// The view's keys and `known` are live str objects.
    unsafe fn equal_text(&self, known: &[*mut ffi::PyObject]) -> bool {
        // SAFETY: reading text runs no Python code.
        let quiet = unsafe { NoCode::new() };
        let text = |p| {
            // SAFETY: a live str, held while no Python code runs (this
            // function's contract).
            let o = unsafe { quiet.lend(p) };
            o.exact_str().and_then(|s| s.utf8())
        };
        known
            .iter()
            .enumerate()
            .all(|(i, &k)| self.get(i) == k || text(self.get(i)) == text(k))
    }

    /// Key number `i < n`.
    #[inline(always)]
    pub fn get(&self, i: usize) -> *mut ffi::PyObject {
        debug_assert!(i < self.n);
        // SAFETY: `of` checked that `n` keys are there.
        unsafe { *self.first.add(i * self.stride) }
    }

    /// Whether the keys are `known`, in order (`known.len() == n`).
    #[inline(always)]
    fn equal(&self, known: &[*mut ffi::PyObject]) -> bool {
        let mut p = self.first;
        let mut diff = 0usize;
        for &k in known {
            // SAFETY: `known` has `n` keys, and so has the view.
            diff |= k as usize ^ unsafe { *p } as usize;
            p = p.wrapping_add(self.stride);
        }
        diff == 0
    }
}

/// A hash of a key's text that is the same in every process.
fn text_hash(b: &[u8]) -> u64 {
    use std::hash::BuildHasher;
    foldhash::fast::FixedState::with_seed(0x5EED).hash_one(b)
}
