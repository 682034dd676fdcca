//! Unsigned LEB128 varints: seven bits a byte, low bits first, the high bit
//! set on every byte but the last. Only the shortest encoding is valid.

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
}
