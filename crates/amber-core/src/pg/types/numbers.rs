//! bool, int2, int4, int8, oid, float4 and float8 in PostgreSQL's binary
//! send format: fixed-width, big-endian (`boolsend` writes one byte 0 or 1,
//! `int2send`..`int8send` and `oidsend` the two's-complement or unsigned
//! integer, `float4send`/`float8send` the IEEE 754 bits as they are, so NaN
//! payloads, infinities and -0.0 survive a round trip).

use crate::pg::error::{PgError, Res};
use crate::pg::wire::{exact, put_i16, put_i32, put_i64, put_u32, put_u8};

pub fn encode_bool(out: &mut Vec<u8>, v: bool) {
    put_u8(out, u8::from(v));
}

/// One byte, 0 or 1. (PostgreSQL's `boolrecv` takes any non-zero byte as
/// true but only ever sends 0 or 1; other bytes are refused here.)
pub fn decode_bool(b: &[u8]) -> Res<bool> {
    match exact::<1>(b, "bool")? {
        [0] => Ok(false),
        [1] => Ok(true),
        [x] => Err(PgError::malformed(format!("bool byte must be 0 or 1, got {x}")).at(0)),
    }
}

pub fn encode_int2(out: &mut Vec<u8>, v: i16) {
    put_i16(out, v);
}

pub fn decode_int2(b: &[u8]) -> Res<i16> {
    exact(b, "int2").map(i16::from_be_bytes)
}

pub fn encode_int4(out: &mut Vec<u8>, v: i32) {
    put_i32(out, v);
}

pub fn decode_int4(b: &[u8]) -> Res<i32> {
    exact(b, "int4").map(i32::from_be_bytes)
}

pub fn encode_int8(out: &mut Vec<u8>, v: i64) {
    put_i64(out, v);
}

pub fn decode_int8(b: &[u8]) -> Res<i64> {
    exact(b, "int8").map(i64::from_be_bytes)
}

/// `oid` is an unsigned 32-bit integer.
pub fn encode_oid(out: &mut Vec<u8>, v: u32) {
    put_u32(out, v);
}

pub fn decode_oid(b: &[u8]) -> Res<u32> {
    exact(b, "oid").map(u32::from_be_bytes)
}

pub fn encode_float4(out: &mut Vec<u8>, v: f32) {
    put_u32(out, v.to_bits());
}

/// `v` as a float4, rounded to the nearest; `None` when a finite `v` is
/// beyond float4's range (it would become an infinity: PostgreSQL's
/// `float8_to_float4` refuses it too). Infinities and NaN stay as they are.
pub fn narrow_to_float4(v: f64) -> Option<f32> {
    let f = v as f32;
    (f.is_finite() || !v.is_finite()).then_some(f)
}

/// The value of the decimal `raw` * 10^-`scale` (an Arrow decimal) as an
/// integer, when it is one: `None` when it has a fraction.
pub fn decimal_integer(raw: i128, scale: u32) -> Option<i128> {
    if scale == 0 {
        return Some(raw);
    }
    match 10i128.checked_pow(scale) {
        Some(p) => (raw % p == 0).then_some(raw / p),
        // 10^39 and up: only 0 divides evenly.
        None => (raw == 0).then_some(0),
    }
}

/// The decimal `raw` * 10^-`scale` (an Arrow decimal) as the nearest float
/// of type `F`: correctly rounded from its exact text, never through a
/// division that rounds twice.
pub fn decimal_float<F: std::str::FromStr>(raw: i128, scale: u32) -> Option<F> {
    format!("{raw}e-{scale}").parse::<F>().ok()
}

pub fn decode_float4(b: &[u8]) -> Res<f32> {
    exact(b, "float4").map(|a| f32::from_bits(u32::from_be_bytes(a)))
}

pub fn encode_float8(out: &mut Vec<u8>, v: f64) {
    out.extend_from_slice(&v.to_bits().to_be_bytes());
}

pub fn decode_float8(b: &[u8]) -> Res<f64> {
    exact(b, "float8").map(|a| f64::from_bits(u64::from_be_bytes(a)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(f: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
        let mut out = Vec::new();
        f(&mut out);
        out
    }

    #[test]
    fn bool_bytes() {
        assert_eq!(enc(|o| encode_bool(o, true)), [1]);
        assert_eq!(enc(|o| encode_bool(o, false)), [0]);
        assert!(decode_bool(&[1]).unwrap());
        assert!(!decode_bool(&[0]).unwrap());
        assert!(decode_bool(&[2]).is_err());
        assert!(decode_bool(&[]).is_err());
        assert!(decode_bool(&[1, 0]).is_err());
    }

    #[test]
    fn integers_are_big_endian() {
        assert_eq!(enc(|o| encode_int2(o, -2)), [0xff, 0xfe]);
        assert_eq!(enc(|o| encode_int4(o, 0x0102_0304)), [1, 2, 3, 4]);
        assert_eq!(enc(|o| encode_int8(o, -1)), [0xff; 8]);
        assert_eq!(
            enc(|o| encode_oid(o, 3_000_000_000)),
            [0xb2, 0xd0, 0x5e, 0x00]
        );
        assert_eq!(decode_int2(&[0x80, 0]).unwrap(), i16::MIN);
        assert_eq!(decode_int4(&[0x7f, 0xff, 0xff, 0xff]).unwrap(), i32::MAX);
        assert_eq!(decode_int8(&[0, 0, 0, 0, 0, 0, 1, 0]).unwrap(), 256);
        assert_eq!(decode_oid(&[0xff; 4]).unwrap(), u32::MAX);
        assert!(decode_int4(&[0; 8]).is_err());
        assert!(decode_int8(&[0; 4]).is_err());
    }

    #[test]
    fn float4_narrowing_refuses_finite_overflow() {
        assert_eq!(narrow_to_float4(1.5), Some(1.5));
        assert_eq!(narrow_to_float4(f64::from(f32::MAX)), Some(f32::MAX));
        assert_eq!(narrow_to_float4(1e39), None);
        assert_eq!(narrow_to_float4(-1e300), None);
        assert_eq!(narrow_to_float4(f64::INFINITY), Some(f32::INFINITY));
        assert_eq!(narrow_to_float4(f64::NEG_INFINITY), Some(f32::NEG_INFINITY));
        assert!(narrow_to_float4(f64::NAN).unwrap().is_nan());
        assert_eq!(narrow_to_float4(1e-50), Some(0.0));
    }

    #[test]
    fn decimals_as_integers_and_floats() {
        assert_eq!(decimal_integer(12_300, 2), Some(123));
        assert_eq!(decimal_integer(-12_300, 2), Some(-123));
        assert_eq!(decimal_integer(12_301, 2), None);
        assert_eq!(decimal_integer(7, 0), Some(7));
        assert_eq!(decimal_integer(0, 45), Some(0));
        assert_eq!(decimal_integer(1, 45), None);
        assert_eq!(decimal_float::<f64>(1, 1), Some(0.1));
        assert_eq!(decimal_float::<f32>(1, 1), Some(0.1f32));
        assert_eq!(decimal_float::<f64>(-25, 1), Some(-2.5));
        let big = 12_345_678_901_234_567_890_123_456_789i128;
        assert_eq!(
            decimal_float::<f64>(big, 10),
            Some(1_234_567_890_123_456_789.012_345_678_9)
        );
    }

    #[test]
    fn floats_keep_their_bits() {
        assert_eq!(
            enc(|o| encode_float8(o, 1.0)),
            [0x3f, 0xf0, 0, 0, 0, 0, 0, 0]
        );
        assert_eq!(enc(|o| encode_float4(o, -2.5)), [0xc0, 0x20, 0, 0]);
        assert_eq!(enc(|o| encode_float8(o, -0.0)), [0x80, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(enc(|o| encode_float4(o, f32::INFINITY)), [0x7f, 0x80, 0, 0]);
        let odd_nan = f64::from_bits(0x7ff8_0000_0000_0001);
        let back = decode_float8(&enc(|o| encode_float8(o, odd_nan))).unwrap();
        assert_eq!(back.to_bits(), odd_nan.to_bits());
        let z = decode_float8(&[0x80, 0, 0, 0, 0, 0, 0, 0]).unwrap();
        assert!(z == 0.0 && z.is_sign_negative());
        assert_eq!(
            decode_float4(&[0xff, 0x80, 0, 0]).unwrap(),
            f32::NEG_INFINITY
        );
    }
}
