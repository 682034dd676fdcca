//! Keys seen in an object, to refuse duplicates in time linear in their
//! number: small indexes in a bitset, other keys in a hash set.

use super::*;

/// A set of small integers (oneof indexes, keys seen).
#[derive(Default)]
pub(super) struct Seen {
    small: u128,
    big: Vec<u64>,
}

impl Seen {
    /// Mark `i`; whether it was marked already.
    pub(super) fn insert(&mut self, i: usize) -> bool {
        if i < 128 {
            let bit = 1u128 << i;
            let was = self.small & bit != 0;
            self.small |= bit;
            return was;
        }
        let (w, bit) = ((i - 128) / 64, 1u64 << ((i - 128) % 64));
        if self.big.len() <= w {
            self.big.resize(w + 1, 0);
        }
        let was = self.big[w] & bit != 0;
        self.big[w] |= bit;
        was
    }
}

/// Keys seen, for the duplicate check of keys that name no field: linear
/// time in their number. The table holds only each key's hash (keyed, as
/// `HashMap`'s, so input cannot be made to collide), 8 bytes an entry that
/// growing never rehashes from the text; the keys themselves are kept in
/// order, and compared only when a hash is seen again.
#[derive(Default)]
pub(super) struct KeySet<'a> {
    hashes: HashSet<u64, BuildHasherDefault<Spread>>,
    keys: Vec<Cow<'a, str>>,
    state: RandomState,
}

impl<'a> KeySet<'a> {
    /// Add `k`; if it was there already, `Err(k)`.
    pub(super) fn insert(&mut self, k: Cow<'a, str>) -> Result<(), Cow<'a, str>> {
        let h = self.state.hash_one(k.as_ref());
        // Two different keys with one 64-bit keyed hash: practically never,
        // and then the keys are compared.
        if !self.hashes.insert(h) && self.keys.contains(&k) {
            return Err(k);
        }
        self.keys.push(k);
        Ok(())
    }
}

/// The hasher of [`KeySet`]'s table, whose keys are hashes already: the
/// value as it is.
#[derive(Default)]
pub(super) struct Spread(u64);

impl Hasher for Spread {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}
