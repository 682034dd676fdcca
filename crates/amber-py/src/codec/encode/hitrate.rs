//! The rule by which the encoder's lookups stop when they do not pay: after
//! a window of `W` lookups of which fewer than one in 16 found something,
//! a lookup is switched off for the rest of the frame. The string table's
//! content lookups, the shape table and each shape column follow it.

#[derive(Clone, Copy, Default)]
pub struct HitRate<const W: u32> {
    tries: u32,
    hits: u32,
    off: bool,
}

impl<const W: u32> HitRate<W> {
    /// A lookup switched off from the start.
    pub fn stopped() -> Self {
        HitRate {
            off: true,
            ..Self::default()
        }
    }

    #[inline(always)]
    pub fn off(&self) -> bool {
        self.off
    }

    /// Count one lookup, closing the window after `W`.
    #[inline(always)]
    pub fn tried(&mut self) {
        self.tries += 1;
        if self.tries == W {
            self.off = self.hits < W / 16;
            self.tries = 0;
            self.hits = 0;
        }
    }

    /// The lookup just counted found something.
    #[inline(always)]
    pub fn hit(&mut self) {
        self.hits += 1;
    }
}
