//! The encoder's string table: repeated strings are written once (STR_DEF)
//! and then referenced (STR_REF/FIXREF), deduplicated by value.
//!
//! Two direct-mapped caches, fixed in size:
//! - by object address, for the same str object again (dict keys, interned
//!   literals): one compare;
//! - by content hash, for equal strings that are different objects.
//!
//! Policy: dict keys are defined the first time they are seen (keys repeat);
//! other strings only the second time, so unique values cost no table entry.
//! A new string may evict a seen-once or never-referenced entry, never one
//! that was referenced. A miss only costs a second definition, never a wrong
//! reference. When content lookups find almost nothing (data of unique ids
//! and names), they stop for the rest of the frame. Strings the caches point at are kept alive until the frame is
//! done. The table is reused by the next call on the same thread (see
//! `encode::Spare`); a generation number empties it in O(1).
//!
//! In deterministic mode the address cache is never filled, so every
//! decision comes from the content lookups and the output depends on the
//! strings' text only, not on where the objects live.

use pyo3::ffi;
use std::hash::BuildHasher;

use super::hitrate::HitRate;
use crate::ffi::borrowed::Str;
use crate::ffi::obj::Obj;

/// Strings up to this many UTF-8 bytes are deduplicated when they are dict keys.
pub const MAX_KEY_LEN: usize = 64;
/// Strings up to this many UTF-8 bytes are deduplicated when they are values.
pub const MAX_VALUE_LEN: usize = 32;
/// At most this many strings are defined per frame; later ones are written plainly.
pub const MAX_ENTRIES: usize = 1 << 16;

const ADDR_SLOTS: usize = 1024;
/// 24-byte slots: 48 KiB, small enough to stay in cache.
const CONTENT_SLOTS: usize = 2048;

#[derive(Clone, Copy, Default)]
struct AddrSlot {
    addr: usize,
    gen: u32,
    idx: u32,
}

/// `idx` of a content slot seen once and not yet defined.
const SEEN: u32 = u32::MAX;

#[derive(Clone, Copy)]
struct ContentSlot {
    data: *const u8,
    /// The high half of the hash (its low bits chose the slot) above the
    /// generation: one compare checks both.
    stamp: u64,
    /// Table index, or `SEEN`.
    idx: u32,
    /// UTF-8 length (cached strings are at most `u16::MAX` bytes).
    len: u16,
    /// Whether a reference was ever written for it.
    used: bool,
}

impl Default for ContentSlot {
    fn default() -> Self {
        ContentSlot {
            data: std::ptr::null(),
            stamp: 0,
            idx: SEEN,
            len: 0,
            used: false,
        }
    }
}

pub enum Found {
    /// Write a reference to this entry.
    Ref(usize),
    /// Write a definition: the decoder makes it the next entry.
    Define,
    /// Write the string plainly.
    Plain,
}

pub struct StringTable {
    gen: u32,
    /// Content lookups, over windows of 4,096.
    content: HitRate<4096>,
    by_addr: Box<[AddrSlot; ADDR_SLOTS]>,
    by_content: Box<[ContentSlot; CONTENT_SLOTS]>,
    /// Defined strings, by table index.
    defined: usize,
    /// Every defined string (the caches point into them), kept alive for the frame.
    keep: Vec<Obj>,
    hasher: foldhash::fast::FixedState,
    deterministic: bool,
}

/// What `suspend` saved.
pub struct Suspended {
    gen: u32,
    content: HitRate<4096>,
}

impl StringTable {
    pub fn new() -> StringTable {
        StringTable {
            gen: 0,
            content: HitRate::default(),
            by_addr: super::boxed_array(AddrSlot::default()),
            by_content: super::boxed_array(ContentSlot::default()),
            defined: 0,
            keep: Vec::new(),
            hasher: foldhash::fast::FixedState::default(),
            deterministic: false,
        }
    }

    /// Empty the table for a new frame, in O(1): a new generation number
    /// makes every cached slot stale.
    pub fn begin_frame(&mut self, deterministic: bool) {
        self.deterministic = deterministic;
        self.gen = self.gen.wrapping_add(1);
        if self.gen == 0 {
            // Generation numbers wrapped: stale slots could look current.
            self.by_addr.fill(AddrSlot::default());
            self.by_content.fill(ContentSlot::default());
            self.gen = 1;
        }
        self.defined = 0;
        self.content = HitRate::default();
    }

    /// Write every string plainly until `resume`: generation 0 is no
    /// frame's (see `begin_frame`), so no address matches, and content
    /// lookups are off.
    pub fn suspend(&mut self) -> Suspended {
        let saved = Suspended {
            gen: self.gen,
            content: self.content,
        };
        self.gen = 0;
        self.content = HitRate::stopped();
        saved
    }

    pub fn resume(&mut self, saved: Suspended) {
        self.gen = saved.gen;
        self.content = saved.content;
    }

    /// Release the frame's strings (and a very large `keep` allocation).
    pub fn end_frame(&mut self) {
        self.keep.clear();
        if self.keep.capacity() > 4 * MAX_ENTRIES {
            self.keep = Vec::new();
        }
    }

    #[inline(always)]
    fn addr_slot(o: *mut ffi::PyObject) -> usize {
        let a = o as usize;
        ((a >> 4) ^ (a >> 14)) & (ADDR_SLOTS - 1)
    }

    /// The table index of this very object, if it was defined.
    #[inline(always)]
    pub fn by_address(&self, o: *mut ffi::PyObject) -> Option<usize> {
        let s = self.by_addr[Self::addr_slot(o)];
        (s.addr == o as usize && s.gen == self.gen).then_some(s.idx as usize)
    }

    /// Find a string equal to `o` (whose UTF-8 is `utf8`), or decide how to
    /// write it. Keys are defined on first sight, other strings on their second.
    #[inline(never)]
    pub fn by_content(&mut self, s: Str<'_>, utf8: &[u8], key: bool) -> Found {
        let o = s.any().ptr();
        if self.content.off() || utf8.len() > u16::MAX as usize {
            return Found::Plain;
        }
        // Data made of unique strings (ids, names) gains nothing here: after a
        // window of lookups with almost no hits, stop looking for this frame.
        self.content.tried();
        let gen = self.gen;
        let hash = if utf8.len() <= 16 {
            short_hash(utf8)
        } else {
            self.hasher.hash_one(utf8)
        };
        let at = hash as usize % CONTENT_SLOTS;
        let stamp = (hash & !0xFFFF_FFFF) | gen as u64;
        let c = self.by_content[at];
        if c.stamp == stamp && c.len as usize == utf8.len() {
            self.content.hit();
            if c.idx == SEEN {
                // Second sighting, known by fingerprint only: a false match
                // merely defines this string early, it never yields a wrong
                // reference (the definition carries this string's bytes).
                let Some(idx) = self.define(s) else {
                    return Found::Plain;
                };
                let c = &mut self.by_content[at];
                c.data = utf8.as_ptr();
                c.idx = idx;
                return Found::Define;
            }
            // SAFETY: a defined entry points into a string in `keep`, alive
            // for the frame.
            let known = unsafe { std::slice::from_raw_parts(c.data, c.len as usize) };
            if !bytes_eq(known, utf8) {
                // Another string with this fingerprint: keep the first.
                return Found::Plain;
            }
            self.by_content[at].used = true;
            if c.data == utf8.as_ptr() && !self.deterministic {
                // The defined object itself, evicted from the address cache
                // by another definition: put it back.
                self.by_addr[Self::addr_slot(o)] = AddrSlot {
                    addr: o as usize,
                    gen,
                    idx: c.idx,
                };
            }
            return Found::Ref(c.idx as usize);
        }
        if c.stamp as u32 == gen && c.idx != SEEN && c.used {
            // Never evict a string that pays for itself.
            return Found::Plain;
        }
        let idx = if key { self.define(s) } else { None };
        self.by_content[at] = ContentSlot {
            // Seen-once entries keep only a fingerprint (stamp and length).
            data: if idx.is_some() {
                utf8.as_ptr()
            } else {
                std::ptr::null()
            },
            stamp,
            idx: idx.unwrap_or(SEEN),
            len: utf8.len() as u16,
            used: false,
        };
        if idx.is_some() {
            Found::Define
        } else {
            Found::Plain
        }
    }

    /// Give `o` the next table index, keep it alive and cache its address.
    fn define(&mut self, s: Str<'_>) -> Option<u32> {
        let o = s.any().ptr();
        if self.defined >= MAX_ENTRIES {
            return None;
        }
        let idx = self.defined as u32;
        self.defined += 1;
        // Holding a reference keeps its address and UTF-8 buffer valid while
        // the caches use them.
        self.keep.push(s.any().to_owned());
        if !self.deterministic {
            self.by_addr[Self::addr_slot(o)] = AddrSlot {
                addr: o as usize,
                gen: self.gen,
                idx,
            };
        }
        Some(idx)
    }
}

/// A hash of at most 16 bytes from two overlapping loads and a folded multiply.
#[inline(always)]
fn short_hash(b: &[u8]) -> u64 {
    let n = b.len();
    let word = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap_or_default());
    let half = |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap_or_default()) as u64;
    let (x, y) = match n {
        8..=16 => (word(0), word(n - 8)),
        4..=7 => (half(0), half(n - 4)),
        1..=3 => (
            b[0] as u64 | (b[n / 2] as u64) << 8 | (b[n - 1] as u64) << 16,
            0,
        ),
        _ => (0, 0),
    };
    let m = (x ^ 0x243F_6A88_85A3_08D3) as u128 * (y ^ 0x1319_8A2E_0370_7344 ^ n as u64) as u128;
    (m as u64) ^ ((m >> 64) as u64)
}

/// Equality of two slices of the same length, with word loads for short ones.
#[inline(always)]
fn bytes_eq(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    debug_assert_eq!(n, b.len());
    let word =
        |s: &[u8], at: usize| u64::from_le_bytes(s[at..at + 8].try_into().unwrap_or_default());
    let half =
        |s: &[u8], at: usize| u32::from_le_bytes(s[at..at + 4].try_into().unwrap_or_default());
    match n {
        // Two overlapping loads cover every byte.
        8..=16 => word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8),
        4..=7 => half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4),
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        _ => a == b,
    }
}
