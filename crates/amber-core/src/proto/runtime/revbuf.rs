//! The encoder's output buffer, filled from its end (see [`super::encode`]):
//! a sub-message's length is known when its prefix is written.
//!
//! The buffer is kept as three pointers into its allocation (its start,
//! its end and the first byte written), so that each piece put in front
//! is one room check and a store or a short copy: no vector length, index
//! or bounds check per byte written. A field's pieces (value, length, tag)
//! are written in front of a head kept in a local and stored back once:
//! written through the head kept in the buffer, each piece reloaded it
//! after the previous piece's stores (which the compiler cannot tell apart
//! from the head's own), a chain of store-to-load forwards on every field.

use std::ptr;

use crate::bytes::varint;

/// A buffer filled from its end: the bytes written are the last
/// [`len`](Self::len) bytes of its allocation.
pub(super) struct RevBuf {
    /// The allocation: `buf.len()` initialized bytes, never resized but by
    /// [`grow`](Self::grow), which replaces it and the pointers with it.
    buf: Vec<u8>,
    /// `buf`'s first byte.
    base: *mut u8,
    /// One past `buf`'s last byte.
    end: *mut u8,
    /// The first byte written: `base <= head <= end`, and
    /// `head..end` is what is written.
    head: *mut u8,
}

impl Default for RevBuf {
    fn default() -> Self {
        RevBuf::new(Vec::new())
    }
}

impl RevBuf {
    /// A buffer over `buf`, all of it free room (its contents are
    /// overwritten): written from `buf.len()` backwards.
    pub(super) fn new(mut buf: Vec<u8>) -> Self {
        let base = buf.as_mut_ptr();
        // SAFETY: `buf.len()` is within (one past the end of) `buf`'s
        // allocation.
        let end = unsafe { base.add(buf.len()) };
        RevBuf {
            buf,
            base,
            end,
            head: end,
        }
    }

    /// The allocation and where what is written starts in it.
    pub(super) fn into_parts(self) -> (Vec<u8>, usize) {
        let head = self.buf.len() - self.len();
        (self.buf, head)
    }

    /// What is written.
    #[cfg(test)]
    pub(super) fn written(&self) -> &[u8] {
        &self.buf[self.buf.len() - self.len()..]
    }

    /// How many bytes are written.
    #[inline(always)]
    pub(super) fn len(&self) -> usize {
        self.end as usize - self.head as usize
    }

    /// How many bytes are free in front of what is written.
    #[inline(always)]
    fn room(&self) -> usize {
        self.head as usize - self.base as usize
    }

    /// Make room for `n` more bytes in front.
    #[inline(always)]
    pub(super) fn reserve(&mut self, n: usize) {
        if self.room() < n {
            self.grow(n);
        }
    }

    /// Drop what was written after the output was `len` bytes long (never
    /// more than is written).
    #[inline]
    pub(super) fn cut(&mut self, len: usize) {
        let len = len.min(self.len());
        // SAFETY: `len` is at most what is written, so `end - len` lies
        // between `head` and `end`, within the allocation.
        self.head = unsafe { self.end.sub(len) };
    }

    /// Put `b` in front of what is written.
    #[inline(always)]
    pub(super) fn put(&mut self, b: &[u8]) {
        self.reserve(b.len());
        // SAFETY: just reserved.
        self.head = unsafe { bytes_before(self.head, b) };
    }

    /// A length-delimited field's value (string, bytes): `b`, its length
    /// and the tag made by `tag_bytes`, with one check for room.
    #[inline(always)]
    pub(super) fn put_text_field(&mut self, b: &[u8], tag: u64, tag_len: u8) {
        self.reserve(b.len().saturating_add(varint::MAX_LEN + 8));
        // SAFETY: just reserved room for the bytes, a varint and a tag.
        unsafe {
            let head = bytes_before(self.head, b);
            let head = varint_before(head, b.len() as u64);
            self.head = tag_before(head, tag, tag_len);
        }
    }

    /// A varint field's value `v` and the tag made by `tag_bytes`, with
    /// one check for room.
    #[inline(always)]
    pub(super) fn put_varint_field(&mut self, v: u64, tag: u64, tag_len: u8) {
        self.reserve(varint::MAX_LEN + 8);
        // SAFETY: just reserved room for a varint and a tag.
        unsafe { self.head = tag_before(varint_before(self.head, v), tag, tag_len) }
    }

    /// Two varints, `b` in front of `a` (a length and the tag before it),
    /// with one check for room.
    #[inline(always)]
    pub(super) fn put_varints(&mut self, a: u64, b: u64) {
        self.reserve(2 * varint::MAX_LEN);
        // SAFETY: just reserved room for two varints.
        unsafe { self.head = varint_before(varint_before(self.head, a), b) }
    }

    /// A fixed-width field's `N` bytes and the tag made by `tag_bytes`,
    /// with one check for room.
    #[inline(always)]
    pub(super) fn put_fixed_field<const N: usize>(&mut self, b: [u8; N], tag: u64, tag_len: u8) {
        self.reserve(N + 8);
        // SAFETY: just reserved room for the bytes and a tag.
        unsafe { self.head = tag_before(bytes_before(self.head, &b), tag, tag_len) }
    }

    /// Put a varint in front, written in place.
    #[inline(always)]
    pub(super) fn put_varint(&mut self, v: u64) {
        self.reserve(varint::MAX_LEN);
        // SAFETY: just reserved.
        self.head = unsafe { varint_before(self.head, v) };
    }

    /// Put a tag made by `tag_bytes` in front.
    #[inline(always)]
    pub(super) fn put_tag(&mut self, tag: u64, len: u8) {
        self.reserve(8);
        // SAFETY: just reserved.
        self.head = unsafe { tag_before(self.head, tag, len) };
    }

    /// Make room for `n` more bytes in front (at least doubling).
    #[cold]
    #[inline(never)]
    fn grow(&mut self, n: usize) {
        let used = self.len();
        let cap = (self.buf.len() * 2).max(used + n).max(256);
        let mut nb = vec![0u8; cap];
        let base = nb.as_mut_ptr();
        // SAFETY: `head..end` (`used` bytes) is within the old allocation,
        // `cap - used..cap` within the new one, and the two are distinct
        // allocations; `base + cap` is one past the new one's end.
        unsafe {
            let end = base.add(cap);
            ptr::copy_nonoverlapping(self.head, end.sub(used), used);
            self.head = end.sub(used);
            self.end = end;
        }
        self.base = base;
        self.buf = nb;
    }
}

/// Put a tag made by `tag_bytes` in front of `head`, without checking for
/// room: the word, its last byte at `head`, of which the top `len` bytes
/// are the tag's (the bytes in front are free room, as in `put_varint`).
/// Returns the new head.
///
/// # Safety
///
/// At least 8 bytes of room must be free in front of `head`.
#[inline(always)]
unsafe fn tag_before(head: *mut u8, tag: u64, len: u8) -> *mut u8 {
    // `tag_bytes` gives 1 to 5 bytes.
    debug_assert!((1..=5).contains(&len));
    // SAFETY: at least 8 bytes of room in front of `head` (the caller's
    // word), and `len & 7` < 8.
    unsafe {
        ptr::write_unaligned(head.sub(8) as *mut [u8; 8], tag.to_le_bytes());
        head.sub(len as usize & 7)
    }
}

/// Put `b` in front of `head`, without checking for room; returns the new
/// head.
///
/// # Safety
///
/// At least `b.len()` bytes of room must be free in front of `head`, in the
/// buffer's allocation, which `b` is not in.
#[inline(always)]
unsafe fn bytes_before(head: *mut u8, b: &[u8]) -> *mut u8 {
    let n = b.len();
    // SAFETY: the caller vouches for `n` bytes of room in front of `head`,
    // and for `b` lying outside the allocation (the buffer is owned by its
    // `RevBuf` and no reference to its bytes is handed out), so the two do
    // not overlap.
    unsafe {
        let head = head.sub(n);
        copy_short(b.as_ptr(), head, n);
        head
    }
}

/// Put a varint in front of `head`, without checking for room; returns the
/// new head.
///
/// # Safety
///
/// At least `varint::MAX_LEN` bytes of room must be free in front of `head`.
#[inline(always)]
unsafe fn varint_before(head: *mut u8, v: u64) -> *mut u8 {
    // SAFETY: at least `MAX_LEN` (10) bytes of room in front of `head`
    // (the caller's word): every store below ends at `head` and starts
    // at most 8 bytes (or `n` <= 10) before it, within the allocation;
    // stores are unaligned ones.
    unsafe {
        if v < 0x80 {
            *head.sub(1) = v as u8;
            return head.sub(1);
        }
        if v < 0x4000 {
            // Two bytes (most tags, lengths and small numbers), stored at once.
            let two = ((v as u16) & 0x7F | 0x80) | (((v >> 7) as u16) << 8);
            ptr::write_unaligned(head.sub(2) as *mut [u8; 2], two.to_le_bytes());
            return head.sub(2);
        }
        if v < 1 << 56 {
            // Three to eight bytes: each 7-bit group moved to its byte at
            // once (no chain of shifts from byte to byte), the
            // continuation bits set on all but the last, and the word
            // stored so that its last byte ends at `head`. The bytes in
            // front of the varint's are free room, and overwritten later.
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
            ptr::write_unaligned(head.sub(8) as *mut [u8; 8], word.to_le_bytes());
            return head.sub(n);
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
        ptr::copy_nonoverlapping(tmp.as_ptr(), head.sub(n), n);
        head.sub(n)
    }
}

/// Copy `n` bytes from `src` to `dst`: a string, bytes or length of up to
/// 32 bytes (most field values) with two loads and two stores (of up to
/// 16 bytes each, overlapping in the middle), longer ones with `memcpy`
/// (measured faster than a branch of 32-byte halves for up to 64).
///
/// # Safety
///
/// `src` must be valid for reads of `n` bytes, `dst` for writes of `n`
/// bytes, and the two ranges must not overlap.
#[inline(always)]
unsafe fn copy_short(src: *const u8, dst: *mut u8, n: usize) {
    // SAFETY: in each branch the loads and stores cover the first and the
    // last bytes of the `n` (overlapping in the middle when shorter than
    // twice the width), all within the ranges the caller vouches for.
    unsafe {
        if n > 32 {
            ptr::copy_nonoverlapping(src, dst, n);
        } else if n > 16 {
            let a = ptr::read_unaligned(src as *const u128);
            let b = ptr::read_unaligned(src.add(n - 16) as *const u128);
            ptr::write_unaligned(dst as *mut u128, a);
            ptr::write_unaligned(dst.add(n - 16) as *mut u128, b);
        } else if n >= 8 {
            let a = ptr::read_unaligned(src as *const u64);
            let b = ptr::read_unaligned(src.add(n - 8) as *const u64);
            ptr::write_unaligned(dst as *mut u64, a);
            ptr::write_unaligned(dst.add(n - 8) as *mut u64, b);
        } else if n >= 4 {
            let a = ptr::read_unaligned(src as *const u32);
            let b = ptr::read_unaligned(src.add(n - 4) as *const u32);
            ptr::write_unaligned(dst as *mut u32, a);
            ptr::write_unaligned(dst.add(n - 4) as *mut u32, b);
        } else if n > 0 {
            *dst = *src;
            *dst.add(n / 2) = *src.add(n / 2);
            *dst.add(n - 1) = *src.add(n - 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::RevBuf;
    use crate::bytes::varint;
    use crate::proto::runtime::plan::tag_bytes;

    /// Pieces of every short length (each branch of the short copy) and
    /// a long one, put in front of one another across the buffer's
    /// growth, read back in order.
    #[test]
    fn pieces_put_in_front_read_in_order() {
        let mut out = RevBuf::default();
        let mut want = Vec::new();
        for n in (0..40).chain([300, 1000]) {
            let piece: Vec<u8> = (0..n).map(|i| (i * 7 + n) as u8).collect();
            out.put(&piece);
            want.splice(0..0, piece);
        }
        assert_eq!(out.written(), &want[..]);
        out.cut(5);
        assert_eq!(out.written(), &want[want.len() - 5..]);
        let (buf, head) = out.into_parts();
        assert_eq!(&buf[head..], &want[want.len() - 5..]);
    }

    /// Tags made once for a plan and put as one word are the varints of
    /// `number << 3 | wire type`, for every width (1 to 5 bytes), in front
    /// of the field's value and behind what comes after, nothing else
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
                out.put_varint_field(300, tag, len);
                out.put(b"before");
                let mut want = b"before".to_vec();
                varint::write(&mut want, ((n as u64) << 3) | wt as u64);
                varint::write(&mut want, 300);
                want.extend_from_slice(b"after");
                assert_eq!(out.written(), &want[..], "{n} {wt}");
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
            let mut out = RevBuf::default();
            out.put(b"after");
            out.put_varint(v);
            out.put(b"before");
            let mut want = b"before".to_vec();
            varint::write(&mut want, v);
            want.extend_from_slice(b"after");
            assert_eq!(out.written(), &want[..], "{v}");
        }
    }
}
