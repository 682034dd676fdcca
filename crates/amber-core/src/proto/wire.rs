//! Protobuf wire format, by hand: tags, varints, length-delimited fields, and
//! the [`Message`] and [`FieldValue`] traits the descriptor structs implement.
//!
//! The reader treats its input as hostile: every read is bounds-checked
//! against the end of the enclosing message, a length is checked against
//! the bytes actually left before anything is sliced or allocated, nesting
//! (sub-messages and groups) is bounded by [`MAX_DEPTH`], and every error
//! carries the absolute byte offset where it was found.

use crate::bytes::varint;
use crate::proto::error::WireError;

/// Deepest nesting of messages (and groups) the decoder follows; protobuf's
/// own parsers default to 100.
pub const MAX_DEPTH: usize = 100;

/// Wire type 0: varint.
pub const VARINT: u8 = 0;
/// Wire type 1: eight little-endian bytes.
pub const FIXED64: u8 = 1;
/// Wire type 2: a varint length, then that many bytes.
pub const LEN: u8 = 2;
/// Wire type 3: start of a group.
pub const SGROUP: u8 = 3;
/// Wire type 4: end of a group.
pub const EGROUP: u8 = 4;
/// Wire type 5: four little-endian bytes.
pub const FIXED32: u8 = 5;

/// Append a field's tag.
#[inline]
pub fn put_tag(out: &mut Vec<u8>, num: u32, wire_type: u8) {
    varint::write(out, ((num as u64) << 3) | wire_type as u64);
}

/// Append a length-delimited field: tag, length, bytes.
pub fn put_len(out: &mut Vec<u8>, num: u32, bytes: &[u8]) {
    put_tag(out, num, LEN);
    varint::write(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// Append a varint field.
pub fn put_varint(out: &mut Vec<u8>, num: u32, v: u64) {
    put_tag(out, num, VARINT);
    varint::write(out, v);
}

#[cold]
fn too_long(at: usize, n: u64, left: u64) -> WireError {
    WireError::ends_early(
        at,
        format!("length {n} is larger than the {left} bytes left"),
    )
}

#[cold]
fn bad_tag(at: usize, num: u64, wt: u8) -> WireError {
    if num == 0 || num > 536_870_911 {
        WireError::new(at, format!("invalid field number {num}"))
    } else {
        WireError::new(at, format!("invalid wire type {wt}"))
    }
}

/// The field number and wire type of tag `t`, read at byte `at`: refused
/// when the number is 0 or past 2^29 - 1, or the wire type is 6 or 7.
#[inline]
pub fn split_tag(at: usize, t: u64) -> Result<(u32, u8), WireError> {
    let num = t >> 3;
    let wt = (t & 7) as u8;
    if num == 0 || num > 536_870_911 || wt > 5 {
        return Err(bad_tag(at, num, wt));
    }
    Ok((num as u32, wt))
}

/// A varint of two bytes or more at `pos` of `data`, in a message ending at
/// `end`: `(value, length)`, the length 0 where it is malformed or cut
/// short by the message's end (its error made by `varint_error`, off the
/// hot path, so this function returns in registers and keeps no frame for
/// the error). Any varint is read right; `WireReader::varint` reads those
/// of one byte itself.
///
/// Eight bytes are read at once whenever the buffer has them, even past
/// the end of the current message (a sub-message's reader shares its
/// parent's buffer): the varint is then taken only if it ends within the
/// message. A varint that ends past the message's end is cut short there,
/// and `read_lenient` over the message's bytes says so too.
#[inline(never)]
fn varint_long(data: &[u8], pos: usize, end: usize) -> (u64, usize) {
    let left = end.saturating_sub(pos);
    let Some(head) = data.get(pos..).and_then(|s| s.first_chunk::<8>()) else {
        return varint_near_end(data, pos, end);
    };
    let w = u64::from_le_bytes(*head);
    // Two bytes (tags of fields 16 to 2047, numbers below 16384): the next
    // most common case after one.
    let (v, n) = if w & 0x8080 == 0x0080 {
        ((w & 0x7F) | ((w >> 1) & 0x3F80), 2)
    } else {
        match varint::read_word(w) {
            Some(vn) => vn,
            // Nine or ten bytes: the two after these eight finish it.
            None => match data.get(pos + 8..pos + 10) {
                Some(&[b8, b9]) => {
                    let v = varint::gather(w) | ((b8 & 0x7F) as u64) << 56;
                    if b8 < 0x80 {
                        (v, 9)
                    } else if b9 < 0x80 {
                        // The tenth byte gives bit 63; the bits past it are
                        // dropped.
                        (v | (b9 as u64) << 63, 10)
                    } else {
                        return (0, 0);
                    }
                }
                _ => return varint_short(data, pos, end),
            },
        }
    };
    if n > left {
        return (0, 0);
    }
    (v, n)
}

/// [`varint_long`] of a varint whose first eight bytes all have the high
/// bit set where the buffer ends within ten bytes: read byte by byte (out
/// of line: `varint_long` keeps to the registers a call may use).
#[inline(never)]
fn varint_short(data: &[u8], pos: usize, end: usize) -> (u64, usize) {
    match data.get(pos..end).map(varint::read_lenient) {
        Some(Ok(vn)) => vn,
        _ => (0, 0),
    }
}

/// [`varint_long`] where the buffer has fewer than eight bytes from `pos`:
/// its last eight bytes are read at once and shifted so that the varint's
/// first byte is the lowest. The bytes shifted in past the buffer's end are
/// zeros, and a zero byte ends a varint, so a varint the buffer cuts short
/// reads as one that ends past the message's end, and is refused as such.
#[inline(never)]
fn varint_near_end(data: &[u8], pos: usize, end: usize) -> (u64, usize) {
    let left = end.saturating_sub(pos);
    let len = data.len();
    if left == 0 || pos >= len {
        return (0, 0);
    }
    let read = match data.last_chunk::<8>() {
        // `pos < len < pos + 8`: a shift of 8 to 56 bits.
        Some(last) => varint::read_word(u64::from_le_bytes(*last) >> (8 * (pos + 8 - len))),
        None => data
            .get(pos..end)
            .and_then(|b| varint::read_lenient(b).ok()),
    };
    match read {
        Some((v, n)) if n <= left => (v, n),
        _ => (0, 0),
    }
}

/// Why the varint at `at` (in a message ending at `end`) cannot be read:
/// the input ends inside it, or it is longer than ten bytes.
#[cold]
#[inline(never)]
fn varint_error(data: &[u8], at: usize, end: usize) -> WireError {
    match varint::read_lenient(&data[at..end]) {
        Err(varint::VarintError::Truncated) => WireError::ends_early(at, "truncated varint"),
        _ => WireError::new(at, "varint longer than 10 bytes"),
    }
}

/// A field cut short at `at`: it needs `n` bytes, `left` are left.
#[cold]
fn short(at: usize, n: usize, left: usize) -> WireError {
    WireError::ends_early(at, format!("truncated field: needs {n} bytes, {left} left"))
}

/// A bounds-checked cursor over one message of the input: `pos` and `end`
/// are absolute offsets in the whole buffer, so errors name the byte.
#[derive(Clone)]
pub struct WireReader<'a> {
    data: &'a [u8],
    pos: usize,
    end: usize,
}

impl<'a> WireReader<'a> {
    /// A reader over all of `data`.
    pub fn new(data: &'a [u8]) -> Self {
        WireReader {
            data,
            pos: 0,
            end: data.len(),
        }
    }

    /// Absolute offset of the next byte.
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// The bytes not read yet.
    pub fn rest(&self) -> &'a [u8] {
        &self.data[self.pos..self.end]
    }

    /// Absolute offset of the current message's end.
    pub fn end(&self) -> usize {
        self.end
    }

    /// How many bytes of the current message are left.
    pub fn left(&self) -> usize {
        self.end.saturating_sub(self.pos)
    }

    /// True when the current message has no bytes left.
    pub fn at_end(&self) -> bool {
        self.pos >= self.end
    }

    /// Read a varint (lenient, as protobuf parsers read them).
    #[inline]
    pub fn varint(&mut self) -> Result<u64, WireError> {
        // One byte: the common case, read inline.
        if self.pos < self.end {
            let b = self.data[self.pos];
            if b < 0x80 {
                self.pos += 1;
                return Ok(b as u64);
            }
        }
        // The reader is handed over by value, not by reference: a reader
        // whose address escapes into a call lives in memory, and every
        // field read then stored its place and loaded it back (a chain of
        // store-to-load forwards through each message).
        match varint_long(self.data, self.pos, self.end) {
            (v, n) if n > 0 => {
                self.pos += n;
                Ok(v)
            }
            _ => Err(varint_error(self.data, self.pos, self.end)),
        }
    }

    /// Read `n` raw bytes.
    #[inline]
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        let left = self.end - self.pos;
        if n > left {
            return Err(short(self.pos, n, left));
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// Read a four-byte little-endian value.
    #[inline(always)]
    pub fn fixed32(&mut self) -> Result<u32, WireError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// Read an eight-byte little-endian value.
    #[inline(always)]
    pub fn fixed64(&mut self) -> Result<u64, WireError> {
        let mut a = [0u8; 8];
        a.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(a))
    }

    /// Read a length prefix and check it against the bytes left; returns
    /// the absolute start and end of the payload and moves past it.
    #[inline(always)]
    pub fn len_prefixed(&mut self) -> Result<(usize, usize), WireError> {
        let at = self.pos;
        let n = self.varint()?;
        let left = (self.end - self.pos) as u64;
        if n > left {
            return Err(too_long(at, n, left));
        }
        let start = self.pos;
        self.pos += n as usize;
        Ok((start, self.pos))
    }

    /// A reader over `start..end` of the same buffer (a sub-message).
    pub fn sub(&self, start: usize, end: usize) -> WireReader<'a> {
        WireReader {
            data: self.data,
            pos: start,
            end,
        }
    }

    /// The bytes between two absolute offsets (both already checked).
    pub fn slice(&self, start: usize, end: usize) -> &'a [u8] {
        &self.data[start..end]
    }

    /// Read a tag: the field number and wire type.
    #[inline]
    pub fn tag(&mut self) -> Result<(u32, u8), WireError> {
        let at = self.pos;
        let t = self.varint()?;
        split_tag(at, t)
    }

    /// Read a packed run of varints to the end of this reader, each
    /// converted by `conv` and appended to `out`. While ten bytes (a
    /// varint's longest form) are left, each is read without a check per
    /// byte; errors are [`varint`](Self::varint)'s, at the same bytes.
    #[inline(always)]
    pub fn varint_run(
        &mut self,
        out: &mut Vec<u64>,
        conv: impl Fn(u64) -> u64,
    ) -> Result<(), WireError> {
        while let Some(head) = self.data[self.pos..self.end].first_chunk::<{ varint::MAX_LEN }>() {
            let (v, n) = if head[0] < 0x80 {
                (head[0] as u64, 1)
            } else {
                match varint::read_lenient_wide(head) {
                    Some(vn) => vn,
                    None => return Err(WireError::new(self.pos, "varint longer than 10 bytes")),
                }
            };
            self.pos += n;
            out.push(conv(v));
        }
        while self.pos < self.end {
            let v = self.varint()?;
            out.push(conv(v));
        }
        Ok(())
    }

    /// Move past the value of a field whose tag was just read.
    pub fn skip(&mut self, num: u32, wt: u8, depth: usize) -> Result<(), WireError> {
        match wt {
            VARINT => self.varint().map(|_| ()),
            FIXED64 => self.take(8).map(|_| ()),
            FIXED32 => self.take(4).map(|_| ()),
            LEN => self.len_prefixed().map(|_| ()),
            SGROUP => {
                if depth >= MAX_DEPTH {
                    return Err(WireError::new(self.pos, "groups nested too deeply"));
                }
                loop {
                    if self.at_end() {
                        return Err(WireError::ends_early(self.pos, "group without its end tag"));
                    }
                    let at = self.pos;
                    let (n, w) = self.tag()?;
                    if w == EGROUP {
                        if n != num {
                            return Err(WireError::new(at, "mismatched group end tag"));
                        }
                        return Ok(());
                    }
                    self.skip(n, w, depth + 1)?;
                }
            }
            _ => Err(WireError::new(self.pos, "unexpected end-group tag")),
        }
    }
}

/// A protobuf message with a hand-written encoder and decoder.
pub trait Message: Default {
    /// Append the message's fields (known fields in number order, then the
    /// unknown fields as they were read).
    fn encode_to(&self, out: &mut Vec<u8>);

    /// Merge one field whose tag was just read; `Ok(false)` when the field
    /// is not one this type knows (the caller keeps its bytes as unknown).
    fn merge_field(
        &mut self,
        num: u32,
        wt: u8,
        r: &mut WireReader<'_>,
        depth: usize,
    ) -> Result<bool, WireError>;

    /// The unknown fields' encoded bytes.
    fn unknown_mut(&mut self) -> &mut Vec<u8>;

    /// The message's encoding.
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode_to(&mut out);
        out
    }

    /// Decode a message from all of `data`.
    fn decode(data: &[u8]) -> Result<Self, WireError> {
        let mut m = Self::default();
        let mut r = WireReader::new(data);
        merge_from(&mut m, &mut r, 0)?;
        Ok(m)
    }
}

/// Merge every field of `r` (up to its end) into `m`.
pub fn merge_from<M: Message>(
    m: &mut M,
    r: &mut WireReader<'_>,
    depth: usize,
) -> Result<(), WireError> {
    if depth > MAX_DEPTH {
        return Err(WireError::new(r.pos(), "messages nested too deeply"));
    }
    while !r.at_end() {
        let start = r.pos();
        let (num, wt) = r.tag()?;
        if wt == EGROUP {
            return Err(WireError::new(start, "unexpected end-group tag"));
        }
        if !m.merge_field(num, wt, r, depth)? {
            r.skip(num, wt, depth)?;
            let bytes = r.slice(start, r.pos());
            m.unknown_mut().extend_from_slice(bytes);
        }
    }
    Ok(())
}

/// A field type of the descriptor structs: how it is written and read.
pub trait FieldValue {
    /// Append the field (nothing when unset or empty).
    fn put(&self, num: u32, out: &mut Vec<u8>);
    /// Merge one occurrence of the field from `r`.
    fn merge(&mut self, wt: u8, r: &mut WireReader<'_>, depth: usize) -> Result<(), WireError>;
}

fn wrong_type(r: &WireReader<'_>, wt: u8) -> WireError {
    WireError::new(r.pos(), format!("unexpected wire type {wt} for this field"))
}

fn read_varint_field(wt: u8, r: &mut WireReader<'_>) -> Result<u64, WireError> {
    if wt != VARINT {
        return Err(wrong_type(r, wt));
    }
    r.varint()
}

impl FieldValue for Option<i32> {
    fn put(&self, num: u32, out: &mut Vec<u8>) {
        if let Some(v) = *self {
            put_varint(out, num, v as i64 as u64);
        }
    }
    fn merge(&mut self, wt: u8, r: &mut WireReader<'_>, _: usize) -> Result<(), WireError> {
        *self = Some(read_varint_field(wt, r)? as i32);
        Ok(())
    }
}

impl FieldValue for Option<i64> {
    fn put(&self, num: u32, out: &mut Vec<u8>) {
        if let Some(v) = *self {
            put_varint(out, num, v as u64);
        }
    }
    fn merge(&mut self, wt: u8, r: &mut WireReader<'_>, _: usize) -> Result<(), WireError> {
        *self = Some(read_varint_field(wt, r)? as i64);
        Ok(())
    }
}

impl FieldValue for Option<u64> {
    fn put(&self, num: u32, out: &mut Vec<u8>) {
        if let Some(v) = *self {
            put_varint(out, num, v);
        }
    }
    fn merge(&mut self, wt: u8, r: &mut WireReader<'_>, _: usize) -> Result<(), WireError> {
        *self = Some(read_varint_field(wt, r)?);
        Ok(())
    }
}

impl FieldValue for Option<bool> {
    fn put(&self, num: u32, out: &mut Vec<u8>) {
        if let Some(v) = *self {
            put_varint(out, num, v as u64);
        }
    }
    fn merge(&mut self, wt: u8, r: &mut WireReader<'_>, _: usize) -> Result<(), WireError> {
        *self = Some(read_varint_field(wt, r)? != 0);
        Ok(())
    }
}

impl FieldValue for Option<f64> {
    fn put(&self, num: u32, out: &mut Vec<u8>) {
        if let Some(v) = *self {
            put_tag(out, num, FIXED64);
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    fn merge(&mut self, wt: u8, r: &mut WireReader<'_>, _: usize) -> Result<(), WireError> {
        if wt != FIXED64 {
            return Err(wrong_type(r, wt));
        }
        let b = r.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        *self = Some(f64::from_le_bytes(a));
        Ok(())
    }
}

fn read_bytes<'a>(wt: u8, r: &mut WireReader<'a>) -> Result<&'a [u8], WireError> {
    if wt != LEN {
        return Err(wrong_type(r, wt));
    }
    let (s, e) = r.len_prefixed()?;
    Ok(r.slice(s, e))
}

fn read_string(wt: u8, r: &mut WireReader<'_>) -> Result<String, WireError> {
    let at = r.pos();
    let b = read_bytes(wt, r)?;
    String::from_utf8(b.to_vec()).map_err(|_| WireError::new(at, "string field is not UTF-8"))
}

impl FieldValue for Option<String> {
    fn put(&self, num: u32, out: &mut Vec<u8>) {
        if let Some(v) = self {
            put_len(out, num, v.as_bytes());
        }
    }
    fn merge(&mut self, wt: u8, r: &mut WireReader<'_>, _: usize) -> Result<(), WireError> {
        *self = Some(read_string(wt, r)?);
        Ok(())
    }
}

impl FieldValue for Option<Vec<u8>> {
    fn put(&self, num: u32, out: &mut Vec<u8>) {
        if let Some(v) = self {
            put_len(out, num, v);
        }
    }
    fn merge(&mut self, wt: u8, r: &mut WireReader<'_>, _: usize) -> Result<(), WireError> {
        *self = Some(read_bytes(wt, r)?.to_vec());
        Ok(())
    }
}

impl FieldValue for Vec<String> {
    fn put(&self, num: u32, out: &mut Vec<u8>) {
        for v in self {
            put_len(out, num, v.as_bytes());
        }
    }
    fn merge(&mut self, wt: u8, r: &mut WireReader<'_>, _: usize) -> Result<(), WireError> {
        self.push(read_string(wt, r)?);
        Ok(())
    }
}

impl FieldValue for Vec<i32> {
    fn put(&self, num: u32, out: &mut Vec<u8>) {
        for &v in self {
            put_varint(out, num, v as i64 as u64);
        }
    }
    fn merge(&mut self, wt: u8, r: &mut WireReader<'_>, _: usize) -> Result<(), WireError> {
        if wt == LEN {
            // Packed form: accepted on input, as protobuf parsers do.
            let (s, e) = r.len_prefixed()?;
            let mut sub = r.sub(s, e);
            while !sub.at_end() {
                self.push(sub.varint()? as i32);
            }
            return Ok(());
        }
        self.push(read_varint_field(wt, r)? as i32);
        Ok(())
    }
}

fn merge_sub<M: Message>(
    m: &mut M,
    wt: u8,
    r: &mut WireReader<'_>,
    depth: usize,
) -> Result<(), WireError> {
    if wt != LEN {
        return Err(wrong_type(r, wt));
    }
    let (s, e) = r.len_prefixed()?;
    let mut sub = r.sub(s, e);
    merge_from(m, &mut sub, depth + 1)
}

impl<M: Message> FieldValue for Option<M> {
    fn put(&self, num: u32, out: &mut Vec<u8>) {
        if let Some(m) = self {
            put_len(out, num, &m.encode());
        }
    }
    fn merge(&mut self, wt: u8, r: &mut WireReader<'_>, depth: usize) -> Result<(), WireError> {
        merge_sub(self.get_or_insert_with(M::default), wt, r, depth)
    }
}

impl<M: Message> FieldValue for Vec<M> {
    fn put(&self, num: u32, out: &mut Vec<u8>) {
        for m in self {
            put_len(out, num, &m.encode());
        }
    }
    fn merge(&mut self, wt: u8, r: &mut WireReader<'_>, depth: usize) -> Result<(), WireError> {
        let mut m = M::default();
        merge_sub(&mut m, wt, r, depth)?;
        self.push(m);
        Ok(())
    }
}

/// Define a message struct with its fields, numbers, encoder and decoder.
macro_rules! message {
    (
        $(#[$m:meta])*
        $name:ident {
            $( $(#[$fm:meta])* $num:literal $field:ident : $ty:ty, )*
        }
    ) => {
        $(#[$m])*
        #[derive(Debug, Clone, Default, PartialEq)]
        pub struct $name {
            $( $(#[$fm])* pub $field: $ty, )*
            /// Fields this type does not know (custom options among them), as
            /// their encoded bytes, in the order read.
            pub unknown: Vec<u8>,
        }

        impl $crate::proto::wire::Message for $name {
            fn encode_to(&self, out: &mut Vec<u8>) {
                use $crate::proto::wire::FieldValue;
                $( self.$field.put($num, out); )*
                out.extend_from_slice(&self.unknown);
            }

            fn merge_field(
                &mut self,
                num: u32,
                wt: u8,
                r: &mut $crate::proto::wire::WireReader<'_>,
                depth: usize,
            ) -> Result<bool, $crate::proto::error::WireError> {
                use $crate::proto::wire::FieldValue;
                match num {
                    $( $num => self.$field.merge(wt, r, depth).map(|_| true), )*
                    _ => Ok(false),
                }
            }

            fn unknown_mut(&mut self) -> &mut Vec<u8> {
                &mut self.unknown
            }
        }
    };
}

pub(crate) use message;

#[cfg(test)]
mod tests {
    use super::*;

    message! {
        /// A test message.
        T {
            1 a: Option<i32>,
            2 s: Option<String>,
            3 kids: Vec<T>,
        }
    }

    #[test]
    fn round_trip_and_unknown() {
        let t = T {
            a: Some(-5),
            s: Some("hé".into()),
            kids: vec![T::default()],
            unknown: vec![0x28, 0x07],
        };
        let b = t.encode();
        assert_eq!(T::decode(&b).unwrap(), t);
    }

    /// `WireReader::varint` against `read_lenient` over the message's own
    /// bytes, for varints of every length from 1 to 10 (and 11: none ends
    /// within ten bytes), plain, padded (a zero last byte) and with bits
    /// past the 64th: at the very end of the buffer and followed by more
    /// bytes (continuation bytes and zeros, which a read past the
    /// message's end must not take), in buffers shorter than eight bytes
    /// and longer, and in readers whose message ends at every byte (inside
    /// the varint: truncated).
    #[test]
    fn varint_agrees_with_lenient_at_every_end() {
        use crate::bytes::varint::{read_lenient, VarintError};
        let mut seed: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed as u8
        };
        let mut seen = [0usize; 3];
        for len in 1..=11usize {
            for form in 0..3 {
                let mut v: Vec<u8> = (0..len).map(|_| next() | 0x80).collect();
                if len <= 10 {
                    v[len - 1] = match form {
                        0 => next() & 0x7F,
                        1 if len > 1 => 0,
                        _ => 0x7F,
                    };
                }
                for before in [0usize, 1, 3] {
                    for after in [&[][..], &[0xFF][..], &[0x00; 3][..], &[0xFF; 12][..]] {
                        let mut buf = vec![0x08; before];
                        buf.extend_from_slice(&v);
                        buf.extend_from_slice(after);
                        for end in before..=buf.len() {
                            let mut r = WireReader::new(&buf).sub(before, end);
                            let got = r.varint();
                            match read_lenient(&buf[before..end]) {
                                Ok((want, n)) => {
                                    seen[0] += 1;
                                    assert_eq!(got, Ok(want), "{buf:02x?} to {end}");
                                    assert_eq!(r.pos(), before + n, "{buf:02x?} to {end}");
                                }
                                Err(kind) => {
                                    let e = got.expect_err("refused");
                                    assert_eq!(e.offset, before, "{buf:02x?} to {end}");
                                    let truncated = kind == VarintError::Truncated;
                                    seen[1 + usize::from(truncated)] += 1;
                                    assert_eq!(e.truncated, truncated, "{buf:02x?} to {end}");
                                    assert_eq!(r.pos(), before);
                                }
                            }
                        }
                    }
                }
            }
        }
        // Each outcome is met: read, too long, cut short.
        assert!(seen.iter().all(|&n| n > 0), "{seen:?}");
    }

    /// `WireReader::len_prefixed` against a varint read by `read_lenient`
    /// and checked against the bytes left: lengths of one to three bytes
    /// (and padded forms), with the payload whole, cut short or followed by
    /// more, in readers whose message ends at the bytes around the prefix
    /// and the payload's end.
    #[test]
    fn len_prefixed_agrees_with_lenient() {
        use crate::bytes::varint::{read_lenient, VarintError};
        let mut prefixes: Vec<Vec<u8>> = Vec::new();
        for n in [0u64, 1, 5, 127, 128, 300, 16_383, 16_384, 70_000] {
            let mut p = Vec::new();
            varint::write(&mut p, n);
            prefixes.push(p.clone());
            // The same length padded with a zero last byte.
            *p.last_mut().unwrap() |= 0x80;
            p.push(0);
            prefixes.push(p);
        }
        prefixes.push(vec![0x80; 12]);
        for prefix in &prefixes {
            let n = read_lenient(prefix).map_or(0, |(n, _)| n as usize);
            for body in [n.saturating_sub(1), n, n + 3] {
                for before in [0usize, 2] {
                    let mut buf = vec![0x08; before];
                    buf.extend_from_slice(prefix);
                    buf.extend(std::iter::repeat_n(0xAA, body));
                    let p_end = before + prefix.len();
                    let mut ends: Vec<usize> = (before..=(p_end + 2).min(buf.len())).collect();
                    ends.extend(buf.len().saturating_sub(3).max(before)..=buf.len());
                    ends.push((p_end + n).min(buf.len()));
                    for end in ends {
                        let mut r = WireReader::new(&buf).sub(before, end);
                        let got = r.len_prefixed();
                        let ctx = format!("{prefix:02x?} body {body} end {end}");
                        match read_lenient(&buf[before..end]) {
                            Ok((v, k)) if v as usize <= end - before - k => {
                                let s = before + k;
                                assert_eq!(got, Ok((s, s + v as usize)), "{ctx}");
                                assert_eq!(r.pos(), s + v as usize, "{ctx}");
                            }
                            want => {
                                let e = got.expect_err(&ctx);
                                assert_eq!(e.offset, before, "{ctx}");
                                let invalid = want == Err(VarintError::Invalid);
                                assert_eq!(e.truncated, !invalid, "{ctx}");
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn hostile_lengths_and_depth() {
        // Field 2, length 1000, two bytes present.
        let e = T::decode(&[0x12, 0xE8, 0x07, b'a', b'b']).unwrap_err();
        assert_eq!(e.offset, 1);
        let mut deep = Vec::new();
        for _ in 0..200 {
            let mut o = Vec::new();
            put_len(&mut o, 3, &deep);
            deep = o;
        }
        assert!(T::decode(&deep).is_err());
        assert!(T::decode(&[0x0B]).is_err());
        assert!(T::decode(&[0x08]).is_err());
    }
}
