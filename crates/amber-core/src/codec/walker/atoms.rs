//! Leaves: None, bools, ints, floats, complex, str and bytes.

use super::{Build, DecodeError, Res, Walker};
use crate::codec::format as f;

impl<B: Build> Walker<'_, '_, B> {
    /// NONE, FALSE and TRUE after the tag.
    #[inline(always)]
    pub(super) fn constant(&mut self, t: u8, at: usize) -> Res<B::V, B::Err> {
        match t {
            f::NONE => build!(self, at, self.b.none()),
            _ => build!(self, at, self.b.bool(t == f::TRUE)),
        }
    }

    /// INT8 to INT64 and BIGINT after the tag.
    #[inline(always)]
    pub(super) fn integer(&mut self, t: u8, at: usize) -> Res<B::V, B::Err> {
        let v = match t {
            f::INT8 => self.r.u8("int8")? as i8 as i64,
            f::INT16 => i16::from_le_bytes(self.r.array("int16")?) as i64,
            f::INT32 => i32::from_le_bytes(self.r.array("int32")?) as i64,
            f::INT64 => i64::from_le_bytes(self.r.array("int64")?),
            _ => {
                let n = self.r.count("bigint length", 1)?;
                let le = self.r.take(n, "bigint")?;
                if n <= 8 || !is_shortest_twos_complement(le) {
                    return Err(DecodeError::malformed(at, "bigint is not in shortest form"));
                }
                return build!(self, at, self.b.bigint(le));
            }
        };
        build!(self, at, self.b.int(v))
    }

    /// FLOAT64 and COMPLEX after the tag.
    #[inline(always)]
    pub(super) fn floating(&mut self, t: u8, at: usize) -> Res<B::V, B::Err> {
        let re =
            f64::from_le_bytes(
                self.r
                    .array(if t == f::FLOAT64 { "float" } else { "complex" })?,
            );
        if t == f::FLOAT64 {
            return build!(self, at, self.b.float(re));
        }
        let im = f64::from_le_bytes(self.r.array("complex")?);
        build!(self, at, self.b.complex(re, im))
    }

    /// STR, STR_DEF, STR_REF and STR_SURROGATES after the tag.
    #[inline(always)]
    pub(super) fn text(&mut self, t: u8, at: usize) -> Res<B::V, B::Err> {
        match t {
            f::STR_REF => {
                let i = self.index("string reference")?;
                self.string_ref(i, at)
            }
            f::STR_SURROGATES => {
                let n = self.r.count("str length", 1)?;
                let raw = self.r.take(n, "str")?;
                build!(self, at, self.b.str_surrogates(raw))
            }
            _ => {
                let n = self.r.count("str length", 1)?;
                let s = self.str_body(n, at)?;
                if t == f::STR_DEF {
                    self.strings.push(s.clone());
                }
                Ok(s)
            }
        }
    }

    /// BYTES, BYTEARRAY and their out-of-band forms after the tag.
    #[inline(always)]
    pub(super) fn bytes(&mut self, t: u8, at: usize) -> Res<B::V, B::Err> {
        if t == f::BYTES_OOB || t == f::BYTEARRAY_OOB {
            let i = self.index("buffer index")?;
            return build!(self, at, self.b.bytes_oob(i, t == f::BYTEARRAY_OOB));
        }
        let n = self.r.count("bytes length", 1)?;
        let off = self.r.pos();
        let raw = self.r.take(n, "bytes")?;
        build!(self, at, self.b.bytes(raw, off, t == f::BYTEARRAY))
    }

    #[inline(always)]
    pub(super) fn str_body(&mut self, n: usize, at: usize) -> Res<B::V, B::Err> {
        let raw = self.r.take(n, "str")?;
        let ascii = raw.is_ascii();
        let s = if ascii {
            // SAFETY: ASCII bytes are valid UTF-8.
            unsafe { std::str::from_utf8_unchecked(raw) }
        } else {
            match std::str::from_utf8(raw) {
                Ok(s) => s,
                Err(e) => {
                    return Err(DecodeError::malformed(
                        self.r.pos() - n + e.valid_up_to(),
                        "invalid UTF-8 in str",
                    ))
                }
            }
        };
        build!(self, at, self.b.str(s, ascii))
    }

    #[inline(always)]
    pub(super) fn string_ref(&mut self, i: usize, at: usize) -> Res<B::V, B::Err> {
        match self.strings.get(i) {
            Some(v) => Ok(v.clone()),
            None => Err(DecodeError::malformed(
                at,
                format!(
                    "string reference {i} but only {} strings are defined",
                    self.strings.len()
                ),
            )),
        }
    }
}

/// Whether `le` (little-endian two's complement) has no redundant top byte.
fn is_shortest_twos_complement(le: &[u8]) -> bool {
    match le {
        [] => false,
        [_] => true,
        [.., second, last] => {
            let redundant_zero = *last == 0x00 && second & 0x80 == 0;
            let redundant_ones = *last == 0xFF && second & 0x80 != 0;
            !(redundant_zero || redundant_ones)
        }
    }
}
