//! Unsigned LEB128 varints: seven bits a byte, low bits first, the high bit
//! set on every byte but the last.
//!
//! Two readers: [`read`] takes only the shortest encoding of a value below
//! 2^64 (amber's canonical form); [`read_lenient`] takes what protobuf
//! parsers take (any encoding of at most 10 bytes, bits past the 64th
//! dropped). [`zigzag`] and [`unzigzag`] map signed to unsigned and back.

/// Most bytes a `u64` can take.
pub const MAX_LEN: usize = 10;

/// Write `v` to the front of `buf`; returns how many bytes it took.
#[inline(always)]
pub fn encode(mut v: u64, buf: &mut [u8; MAX_LEN]) -> usize {
    let mut n = 0;
    while v >= 0x80 {
        buf[n] = (v as u8) | 0x80;
        v >>= 7;
        n += 1;
    }
    buf[n] = v as u8;
    n + 1
}

/// Append `v` to `out`.
#[inline]
pub fn write(out: &mut Vec<u8>, v: u64) {
    let mut b = [0u8; MAX_LEN];
    let n = encode(v, &mut b);
    out.extend_from_slice(&b[..n]);
}

/// How many bytes `write` appends for `v`.
#[inline]
pub fn len(v: u64) -> usize {
    let bits = 64 - (v | 1).leading_zeros() as usize;
    bits.div_ceil(7)
}

/// Why a varint could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarintError {
    /// The data ended inside the varint.
    Truncated,
    /// More than 64 bits, or a longer encoding than needed.
    Invalid,
}

/// Read a varint from the front of `data`: the value and the bytes used.
#[inline(always)]
pub fn read(data: &[u8]) -> Result<(u64, usize), VarintError> {
    match data.first() {
        Some(&b) if b < 0x80 => Ok((b as u64, 1)),
        Some(_) => read_slow(data),
        None => Err(VarintError::Truncated),
    }
}

#[cold]
fn read_slow(data: &[u8]) -> Result<(u64, usize), VarintError> {
    let mut v: u64 = 0;
    for (i, &b) in data.iter().enumerate().take(MAX_LEN) {
        let low = (b & 0x7F) as u64;
        if i == MAX_LEN - 1 && low > 1 {
            return Err(VarintError::Invalid);
        }
        v |= low << (7 * i);
        if b < 0x80 {
            // A zero last byte after the first means a padded encoding.
            if i > 0 && b == 0 {
                return Err(VarintError::Invalid);
            }
            return Ok((v, i + 1));
        }
    }
    if data.len() < MAX_LEN {
        Err(VarintError::Truncated)
    } else {
        Err(VarintError::Invalid)
    }
}

/// Read a varint as protobuf does: at most 10 bytes, padded encodings
/// accepted, bits beyond the 64th dropped.
#[inline]
pub fn read_lenient(data: &[u8]) -> Result<(u64, usize), VarintError> {
    let mut v: u64 = 0;
    for (i, &b) in data.iter().enumerate().take(MAX_LEN) {
        v |= ((b & 0x7F) as u64).wrapping_shl(7 * i as u32);
        if b < 0x80 {
            return Ok((v, i + 1));
        }
    }
    if data.len() < MAX_LEN {
        Err(VarintError::Truncated)
    } else {
        Err(VarintError::Invalid)
    }
}

/// [`read_lenient`] of a varint whose first ten bytes (its longest
/// encoding) are all there, decoded eight bytes at a time without a check
/// per byte; `None` where `read_lenient` says [`VarintError::Invalid`] (ten
/// bytes, all with the high bit set).
#[inline]
pub fn read_lenient_wide(head: &[u8; MAX_LEN]) -> Option<(u64, usize)> {
    let (word, tail) = head.split_first_chunk::<8>()?;
    let w = u64::from_le_bytes(*word);
    // The high bit of each byte clear marks a last byte: the lowest one
    // ends the varint.
    let stops = !w & 0x8080_8080_8080_8080;
    if stops != 0 {
        let n = (stops.trailing_zeros() as usize + 1) / 8;
        let keep = if n == 8 {
            u64::MAX
        } else {
            (1u64 << (8 * n)) - 1
        };
        return Some((gather(w & keep), n));
    }
    let v = gather(w) | ((tail[0] & 0x7F) as u64) << 56;
    if tail[0] < 0x80 {
        return Some((v, 9));
    }
    // The tenth byte gives bit 63; the bits past it are dropped.
    (tail[1] < 0x80).then_some((v | (tail[1] as u64) << 63, 10))
}

/// The varint at the start of `w` (eight bytes of input read little-endian,
/// the first byte lowest) and its length, when it ends within those eight
/// bytes; `None` when all eight have the high bit set (a varint of nine or
/// ten bytes, or a malformed one). Nothing is checked per byte.
#[inline(always)]
pub fn read_word(w: u64) -> Option<(u64, usize)> {
    // The high bit of each byte clear marks a last byte: the lowest one
    // ends the varint.
    let stops = !w & 0x8080_8080_8080_8080;
    if stops == 0 {
        return None;
    }
    let n = stops.trailing_zeros() as usize / 8 + 1;
    // Every bit up to the first stop bit: the varint's bytes.
    let keep = stops ^ (stops - 1);
    Some((gather(w & keep), n))
}

/// The seven low bits of each of `w`'s eight bytes, packed together (low
/// byte first): 56 bits.
#[inline(always)]
pub(crate) fn gather(w: u64) -> u64 {
    let x = w & 0x7F7F_7F7F_7F7F_7F7F;
    let x = (x & 0x007F_007F_007F_007F) | ((x & 0x7F00_7F00_7F00_7F00) >> 1);
    let x = (x & 0x0000_3FFF_0000_3FFF) | ((x & 0x3FFF_0000_3FFF_0000) >> 2);
    (x & 0x0000_0000_0FFF_FFFF) | ((x & 0x0FFF_FFFF_0000_0000) >> 4)
}

/// ZigZag-encode a signed value (0, -1, 1, -2 ... become 0, 1, 2, 3 ...).
#[inline]
pub fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// The inverse of [`zigzag`].
#[inline]
pub fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_edges() {
        for v in [
            0,
            1,
            127,
            128,
            255,
            16_383,
            16_384,
            u32::MAX as u64,
            u64::MAX - 1,
            u64::MAX,
        ] {
            let mut out = Vec::new();
            write(&mut out, v);
            assert_eq!(out.len(), len(v), "len of {v}");
            assert_eq!(read(&out), Ok((v, out.len())));
        }
    }

    #[test]
    fn rejects_padding_overflow_and_truncation() {
        assert_eq!(read(&[0x80, 0x00]), Err(VarintError::Invalid));
        assert_eq!(read(&[0x80]), Err(VarintError::Truncated));
        assert_eq!(read(&[]), Err(VarintError::Truncated));
        let mut too_big = vec![0xFF; 9];
        too_big.push(0x02);
        assert_eq!(read(&too_big), Err(VarintError::Invalid));
        assert_eq!(read(&[0xFF; 11]), Err(VarintError::Invalid));
    }

    #[test]
    fn lenient_takes_padded_and_overlong_forms() {
        assert_eq!(read_lenient(&[0x80, 0x00]), Ok((0, 2)));
        assert_eq!(read(&[0x80, 0x00]), Err(VarintError::Invalid));
        let ten = [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F];
        assert_eq!(read_lenient(&ten), Ok((u64::MAX, 10)));
        assert_eq!(read_lenient(&[0x80; 10]), Err(VarintError::Invalid));
        assert_eq!(read_lenient(&[0x80; 3]), Err(VarintError::Truncated));
        for v in [0u64, 1, 300, u64::MAX] {
            let mut out = Vec::new();
            write(&mut out, v);
            assert_eq!(read_lenient(&out), Ok((v, out.len())));
        }
    }

    /// The wide reader agrees with `read_lenient` on every input of ten
    /// bytes or more: each length of varint, padded and overlong forms,
    /// bits past the 64th, and ten bytes with no last byte.
    #[test]
    fn lenient_wide_agrees_with_lenient() {
        let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut checked = 0;
        for round in 0..200_000 {
            let mut buf = [0u8; 12];
            for b in buf.iter_mut() {
                *b = next() as u8;
            }
            // The varint's length: every one from 1 to 11 (11 = none ends
            // within ten), its bytes random but for the high bits.
            let len = round % 11 + 1;
            for (i, b) in buf.iter_mut().enumerate().take(len.min(MAX_LEN)) {
                if i + 1 < len {
                    *b |= 0x80;
                } else {
                    *b &= 0x7F;
                }
            }
            let head: &[u8; MAX_LEN] = buf.first_chunk().unwrap();
            let want = read_lenient(&buf).ok();
            assert_eq!(read_lenient_wide(head), want, "{buf:02x?}");
            checked += 1;
        }
        assert_eq!(checked, 200_000);
        for v in [
            0u64,
            1,
            127,
            128,
            16_383,
            16_384,
            1 << 56,
            (1 << 56) - 1,
            u64::MAX,
        ] {
            let mut buf = [0u8; 12];
            let n = encode(v, (&mut buf[..MAX_LEN]).try_into().unwrap());
            let head: &[u8; MAX_LEN] = buf.first_chunk().unwrap();
            assert_eq!(read_lenient_wide(head), Some((v, n)), "{v}");
        }
        let ten = [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F];
        assert_eq!(read_lenient_wide(&ten), Some((u64::MAX, 10)));
        assert_eq!(read_lenient_wide(&[0x80; 10]), None);
        let padded = [0x80, 0x80, 0x80, 0x00, 1, 2, 3, 4, 5, 6];
        assert_eq!(read_lenient_wide(&padded), Some((0, 4)));
    }

    #[test]
    fn zigzag_round_trips() {
        for (v, z) in [
            (0i64, 0u64),
            (-1, 1),
            (1, 2),
            (-2, 3),
            (i64::MAX, u64::MAX - 1),
            (i64::MIN, u64::MAX),
        ] {
            assert_eq!(zigzag(v), z);
            assert_eq!(unzigzag(z), v);
        }
    }
}
