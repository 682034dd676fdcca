//! Byte helpers shared by the PostgreSQL encoders, decoders and the COPY
//! stream: big-endian integer writes (every integer in PostgreSQL's binary
//! formats is in network byte order), the int32 length word that precedes a
//! COPY field or an array element (-1 for NULL), written in place and
//! patched, and exact-size reads of fixed-width values.

use crate::pg::error::{PgError, Res};

/// The length word of a NULL field or array element.
pub const NULL_LEN: i32 = -1;

#[inline]
pub fn put_u8(out: &mut Vec<u8>, v: u8) {
    out.push(v);
}

#[inline]
pub fn put_i16(out: &mut Vec<u8>, v: i16) {
    out.extend_from_slice(&v.to_be_bytes());
}

#[inline]
pub fn put_u16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_be_bytes());
}

#[inline]
pub fn put_i32(out: &mut Vec<u8>, v: i32) {
    out.extend_from_slice(&v.to_be_bytes());
}

#[inline]
pub fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_be_bytes());
}

#[inline]
pub fn put_i64(out: &mut Vec<u8>, v: i64) {
    out.extend_from_slice(&v.to_be_bytes());
}

/// Write an int32 length word, let `encode` append the value after it, then
/// patch the word with the length appended. No temporary buffer is needed.
///
/// On an error from `encode`, or a value longer than an int32 can say,
/// `out` is cut back to where it was, so it never holds half a value.
pub fn write_len_prefixed<F>(out: &mut Vec<u8>, encode: F) -> Res<()>
where
    F: FnOnce(&mut Vec<u8>) -> Res<()>,
{
    let start = out.len();
    put_i32(out, 0);
    if let Err(e) = encode(out) {
        out.truncate(start);
        return Err(e);
    }
    let n = out.len() - start - 4;
    let Ok(n) = i32::try_from(n) else {
        out.truncate(start);
        return Err(PgError::out_of_range(format!(
            "a value of {n} bytes is longer than the {} an int32 length allows",
            i32::MAX
        )));
    };
    out[start..start + 4].copy_from_slice(&n.to_be_bytes());
    Ok(())
}

/// A fixed-width value: exactly `N` bytes, or a malformed error naming the
/// type.
#[inline]
pub fn exact<const N: usize>(b: &[u8], ty: &str) -> Res<[u8; N]> {
    <[u8; N]>::try_from(b).map_err(|_| wrong_size(ty, N, b.len()))
}

#[cold]
pub fn wrong_size(ty: &str, need: usize, got: usize) -> PgError {
    PgError::malformed(format!("{ty} value takes exactly {need} bytes, got {got}")).at(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn length_word_is_patched() {
        let mut out = vec![9];
        write_len_prefixed(&mut out, |o| {
            o.extend_from_slice(b"abc");
            Ok(())
        })
        .unwrap();
        assert_eq!(out, [9, 0, 0, 0, 3, b'a', b'b', b'c']);
    }

    #[test]
    fn failed_value_is_cut_back() {
        let mut out = vec![9];
        let e = write_len_prefixed(&mut out, |o| {
            o.push(1);
            Err(PgError::invalid_value("no"))
        });
        assert!(e.is_err());
        assert_eq!(out, [9]);
    }

    #[test]
    fn exact_sizes() {
        assert_eq!(exact::<2>(&[1, 2], "int2").unwrap(), [1, 2]);
        let e = exact::<4>(&[1, 2], "int4").unwrap_err();
        assert_eq!(e.message, "int4 value takes exactly 4 bytes, got 2");
    }
}
