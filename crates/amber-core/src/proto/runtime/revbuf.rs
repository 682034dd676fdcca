//! The encoder's output buffer, filled from its end (see [`super::encode`]):
//! a sub-message's length is known when its prefix is written.

use crate::bytes::varint;

/// A buffer filled from its end: the bytes written are `buf[head..]`.
#[derive(Default)]
pub(super) struct RevBuf {
    pub(super) buf: Vec<u8>,
    pub(super) head: usize,
}

impl RevBuf {
    #[inline]
    pub(super) fn len(&self) -> usize {
        self.buf.len() - self.head
    }

    /// Drop what was written after the output was `len` bytes long.
    #[inline]
    pub(super) fn cut(&mut self, len: usize) {
        self.head = self.buf.len() - len;
    }

    /// Put `b` in front of what is written.
    #[inline]
    pub(super) fn put(&mut self, b: &[u8]) {
        if self.head < b.len() {
            self.grow(b.len());
        }
        let start = self.head - b.len();
        self.buf[start..self.head].copy_from_slice(b);
        self.head = start;
    }

    /// Put a varint in front, written in place.
    #[inline(always)]
    pub(super) fn put_varint(&mut self, v: u64) {
        if self.head < varint::MAX_LEN {
            self.grow(varint::MAX_LEN);
        }
        let head = self.head;
        if v < 0x80 {
            self.buf[head - 1] = v as u8;
            self.head = head - 1;
            return;
        }
        if v < 0x4000 {
            // Two bytes (most tags, lengths and small numbers), stored at once.
            let two = ((v as u16) & 0x7F | 0x80) | (((v >> 7) as u16) << 8);
            self.buf[head - 2..head].copy_from_slice(&two.to_le_bytes());
            self.head = head - 2;
            return;
        }
        if v < 1 << 56 {
            // Three to eight bytes: each 7-bit group moved to its byte at
            // once (no chain of shifts from byte to byte), the
            // continuation bits set on all but the last, and the word
            // stored so that its last byte ends at `head`. The bytes in
            // front of the varint's are free room (`head` >= 10), and
            // overwritten later.
            let n = varint::len(v);
            let spread = (v & 0x7F)
                | ((v << 1) & 0x7F00)
                | ((v << 2) & 0x7F_0000)
                | ((v << 3) & 0x7F00_0000)
                | ((v << 4) & 0x7F_0000_0000)
                | ((v << 5) & 0x7F00_0000_0000)
                | ((v << 6) & 0x7F_0000_0000_0000)
                | ((v << 7) & 0x7F00_0000_0000_0000);
            let cont = 0x8080_8080_8080_8080 & ((1u64 << (8 * (n - 1))) - 1);
            let word = (spread | cont) << (8 * (8 - n));
            self.buf[head - 8..head].copy_from_slice(&word.to_le_bytes());
            self.head = head - n;
            return;
        }
        // Nine or ten bytes: made in a local array, then copied in one go.
        let n = varint::len(v);
        let mut tmp = [0u8; varint::MAX_LEN];
        let mut x = v;
        for b in &mut tmp[..n - 1] {
            *b = (x as u8) | 0x80;
            x >>= 7;
        }
        tmp[n - 1] = x as u8;
        self.buf[head - n..head].copy_from_slice(&tmp[..n]);
        self.head = head - n;
    }

    /// Put a tag made by `tag_bytes` in front: its `len` bytes, stored as
    /// one word whose last byte ends at `head` (the bytes in front are free
    /// room, as in `put_varint`).
    #[inline(always)]
    pub(super) fn put_tag(&mut self, tag: u64, len: u8) {
        if self.head < varint::MAX_LEN {
            self.grow(varint::MAX_LEN);
        }
        let head = self.head;
        // `tag_bytes` gives 1 to 5 bytes.
        debug_assert!((1..=5).contains(&len));
        let len = len as usize;
        let word = tag << (8 * (8 - len));
        self.buf[head - 8..head].copy_from_slice(&word.to_le_bytes());
        self.head = head - len;
    }

    /// Make room for `n` more bytes in front (at least doubling).
    #[cold]
    pub(super) fn grow(&mut self, n: usize) {
        let used = self.len();
        let cap = (self.buf.len() * 2).max(used + n).max(256);
        let mut nb = vec![0u8; cap];
        nb[cap - used..].copy_from_slice(&self.buf[self.head..]);
        self.head = cap - used;
        self.buf = nb;
    }
}

#[cfg(test)]
mod tests {
    use super::RevBuf;
    use crate::bytes::varint;
    use crate::proto::runtime::plan::tag_bytes;

    /// Tags made once for a plan and put as one word are the varints of
    /// `number << 3 | wire type`, for every width (1 to 5 bytes), in front
    /// of what is written and behind what comes after, nothing else
    /// touched.
    #[test]
    fn tags_made_once_match_varints() {
        let mut nums = vec![1u32, 536_870_911];
        for bits in [4u32, 11, 18, 25] {
            nums.extend([(1 << bits) - 1, 1 << bits]);
        }
        for &n in &nums {
            for wt in 0..6u8 {
                let (tag, len) = tag_bytes(n, wt);
                let mut out = RevBuf::default();
                out.put(b"after");
                out.put_tag(tag, len);
                out.put(b"before");
                let mut want = b"before".to_vec();
                varint::write(&mut want, ((n as u64) << 3) | wt as u64);
                want.extend_from_slice(b"after");
                assert_eq!(&out.buf[out.head..], &want[..], "{n} {wt}");
            }
        }
    }

    /// Varints written backwards read as the forward writer's, at every
    /// length and on each side of every length's bounds.
    #[test]
    fn varints_written_backwards_match() {
        let mut values = vec![0, 1, u64::MAX];
        for bits in (7..64).step_by(7) {
            let edge = 1u64 << bits;
            values.extend([edge - 1, edge, edge + 1]);
        }
        for &v in &values {
            let mut out = RevBuf {
                buf: Vec::new(),
                head: 0,
            };
            out.put(b"after");
            out.put_varint(v);
            out.put(b"before");
            let mut want = b"before".to_vec();
            varint::write(&mut want, v);
            want.extend_from_slice(b"after");
            assert_eq!(&out.buf[out.head..], &want[..], "{v}");
        }
    }
}
