//! numeric in PostgreSQL's binary send format (`numeric_send`), converted
//! exactly to and from a decimal as Python's `Decimal.as_tuple()` gives it:
//! a sign, decimal digits and a power-of-ten exponent.
//!
//! ```text
//! int16  ndigits   number of base-10000 digits (read as unsigned, as
//!                  numeric_recv does)
//! int16  weight    power of 10000 of the first digit
//! uint16 sign      0x0000 positive, 0x4000 negative, 0xC000 NaN,
//!                  0xD000 +Infinity, 0xF000 -Infinity
//! uint16 dscale    display scale: decimal digits after the point, at most
//!                  0x3FFF (NUMERIC_DSCALE_MASK)
//! ndigits x int16  base-10000 digits, each 0..=9999, most significant first
//! ```
//!
//! Value = sum of digit[i] * 10000^(weight - i), shown with `dscale`
//! fractional digits: numeric '1.10' is digits [1, 1000], weight 0,
//! dscale 2. PostgreSQL strips leading and trailing zero base-10000 digits
//! and sends zero with no digits. The decoder keeps the dscale as the
//! exponent (`-dscale`), so '1.10' comes back as digits (1, 1, 0),
//! exponent -2; digits beyond the dscale are dropped, as `numeric_recv`
//! truncates them.

use std::fmt;

use crate::bytes::reader::Reader;
use crate::pg::error::{PgError, Res};
use crate::pg::wire::{put_i16, put_u16};

pub const NUMERIC_POS: u16 = 0x0000;
pub const NUMERIC_NEG: u16 = 0x4000;
pub const NUMERIC_NAN: u16 = 0xC000;
pub const NUMERIC_PINF: u16 = 0xD000;
pub const NUMERIC_NINF: u16 = 0xF000;
/// The largest display scale PostgreSQL stores.
pub const NUMERIC_DSCALE_MAX: u16 = 0x3FFF;
const NBASE: u16 = 10_000;
const POW10: [u16; 4] = [1, 10, 100, 1000];

/// A numeric value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Numeric {
    NaN,
    Infinity,
    NegInfinity,
    /// `(-1)^negative * digits * 10^exponent`: `digits` are values 0..=9,
    /// most significant first (as in `Decimal.as_tuple()`).
    Finite {
        negative: bool,
        digits: Vec<u8>,
        exponent: i32,
    },
}

impl fmt::Display for Numeric {
    /// PostgreSQL's text form: `NaN`, `Infinity`, `-Infinity`, `-1.10`,
    /// `0.0001`, `100`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (negative, digits, exponent) = match self {
            Numeric::NaN => return f.write_str("NaN"),
            Numeric::Infinity => return f.write_str("Infinity"),
            Numeric::NegInfinity => return f.write_str("-Infinity"),
            Numeric::Finite {
                negative,
                digits,
                exponent,
            } => (*negative, digits, *exponent),
        };
        let s: String = digits.iter().map(|&d| char::from(b'0' + d % 10)).collect();
        let s = if s.is_empty() { "0".to_string() } else { s };
        if negative {
            f.write_str("-")?;
        }
        if exponent >= 0 {
            f.write_str(&s)?;
            for _ in 0..exponent {
                f.write_str("0")?;
            }
            return Ok(());
        }
        let frac = exponent.unsigned_abs() as usize;
        if s.len() > frac {
            let (int, fr) = s.split_at(s.len() - frac);
            write!(f, "{int}.{fr}")
        } else {
            write!(f, "0.{}{s}", "0".repeat(frac - s.len()))
        }
    }
}

impl Numeric {
    /// Parse decimal text as Python's `str(Decimal)` and PostgreSQL write
    /// it: an optional sign, digits with an optional point, an optional
    /// exponent (`1.5E+3`), or `NaN`, `Infinity`, `Inf` (any case, signed).
    /// Trailing zeros are kept (`1.10` has exponent -2). `None` for anything
    /// else, including a signalling NaN.
    pub fn parse(text: &str) -> Option<Numeric> {
        let t = text.trim();
        let (negative, body) = match t.as_bytes().first()? {
            b'-' => (true, &t[1..]),
            b'+' => (false, &t[1..]),
            _ => (false, t),
        };
        if body.eq_ignore_ascii_case("nan") {
            return (!t.starts_with(['-', '+'])).then_some(Numeric::NaN);
        }
        if body.eq_ignore_ascii_case("infinity") || body.eq_ignore_ascii_case("inf") {
            return Some(if negative {
                Numeric::NegInfinity
            } else {
                Numeric::Infinity
            });
        }
        let (mantissa, exp) = match body.find(['e', 'E']) {
            Some(i) => (&body[..i], body[i + 1..].parse::<i64>().ok()?),
            None => (body, 0),
        };
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        if int.is_empty() && frac.is_empty() {
            return None;
        }
        let mut digits = Vec::with_capacity(int.len() + frac.len());
        for c in int.bytes().chain(frac.bytes()) {
            if !c.is_ascii_digit() {
                return None;
            }
            digits.push(c - b'0');
        }
        let exponent = i32::try_from(exp - frac.len() as i64).ok()?;
        Some(Numeric::Finite {
            negative,
            digits,
            exponent,
        })
    }
}

/// NaN, +Infinity or -Infinity: no digits, weight 0, dscale 0.
fn encode_special(out: &mut Vec<u8>, sign: u16) {
    put_u16(out, 0);
    put_i16(out, 0);
    put_u16(out, sign);
    put_u16(out, 0);
}

/// Encode any [`Numeric`].
pub fn encode_numeric_value(out: &mut Vec<u8>, v: &Numeric) -> Res<()> {
    match v {
        Numeric::NaN => encode_special(out, NUMERIC_NAN),
        Numeric::Infinity => encode_special(out, NUMERIC_PINF),
        Numeric::NegInfinity => encode_special(out, NUMERIC_NINF),
        Numeric::Finite {
            negative,
            digits,
            exponent,
        } => return encode_numeric(out, *negative, digits, *exponent),
    }
    Ok(())
}

/// Encode the finite decimal `(-1)^negative * digits * 10^exponent`, as
/// `Decimal.as_tuple()` gives it. `digits` are values 0..=9 or ASCII
/// `'0'..='9'`, most significant first; an empty slice is zero.
///
/// The dscale is `-exponent` (0 for exponent >= 0), so trailing zeros are
/// kept: (1, 1, 0) with exponent -2 is numeric '1.10'. Zero is sent as
/// positive (PostgreSQL has no negative zero). Refused: a digit that is
/// neither; a scale over 16383 (`OutOfRange`); a value of 10^131072 or more
/// (`OutOfRange`: weight past int16).
pub fn encode_numeric(out: &mut Vec<u8>, negative: bool, digits: &[u8], exponent: i32) -> Res<()> {
    let dscale = if exponent < 0 {
        exponent.unsigned_abs()
    } else {
        0
    };
    if dscale > u32::from(NUMERIC_DSCALE_MAX) {
        return Err(PgError::out_of_range(format!(
            "numeric with {dscale} digits after the point: PostgreSQL keeps at most {NUMERIC_DSCALE_MAX}"
        )));
    }
    let dscale = dscale as u16;
    let mut values = Vec::with_capacity(digits.len());
    for (i, &d) in digits.iter().enumerate() {
        values.push(match d {
            0..=9 => d,
            b'0'..=b'9' => d - b'0',
            _ => {
                return Err(PgError::invalid_value(format!(
                    "numeric digit {i} is {d}, neither 0..=9 nor an ASCII digit"
                )))
            }
        });
    }
    let (Some(first), Some(last)) = (
        values.iter().position(|&d| d != 0),
        values.iter().rposition(|&d| d != 0),
    ) else {
        put_u16(out, 0);
        put_i16(out, 0);
        put_u16(out, NUMERIC_POS);
        put_u16(out, dscale);
        return Ok(());
    };
    let exp = i64::from(exponent);
    // The power of ten of the last digit is `exponent`.
    let power_of = |i: usize| exp + (values.len() - 1 - i) as i64;
    let top = power_of(first);
    let weight = top.div_euclid(4);
    if weight > i64::from(i16::MAX) {
        return Err(PgError::out_of_range(format!(
            "numeric of about 10^{top} is beyond PostgreSQL's 131072 digits before the point"
        )));
    }
    let low_group = power_of(last).div_euclid(4);
    // weight <= 32767 and low_group >= -4096 (dscale <= 16383): fits.
    let ngroups = (weight - low_group + 1) as usize;
    let mut groups = vec![0u16; ngroups];
    for (i, &d) in values.iter().enumerate().take(last + 1).skip(first) {
        let p = power_of(i);
        let g = (weight - p.div_euclid(4)) as usize;
        groups[g] += u16::from(d) * POW10[p.rem_euclid(4) as usize];
    }
    put_u16(out, ngroups as u16);
    put_i16(out, weight as i16);
    put_u16(out, if negative { NUMERIC_NEG } else { NUMERIC_POS });
    put_u16(out, dscale);
    for g in groups {
        put_u16(out, g);
    }
    Ok(())
}

/// Decode a numeric: NaN, ±Infinity, or sign, decimal digits (no leading
/// zeros; `[0]` for zero) and exponent `-dscale`.
pub fn decode_numeric(b: &[u8]) -> Res<Numeric> {
    let mut r = Reader::new(b);
    let ndigits = r.u16_be("numeric ndigits")?;
    let weight = r.u16_be("numeric weight")? as i16;
    let sign = r.u16_be("numeric sign")?;
    let dscale = r.u16_be("numeric dscale")?;
    let want = 8 + 2 * usize::from(ndigits);
    if b.len() != want {
        return Err(PgError::malformed(format!(
            "numeric with {ndigits} digits takes {want} bytes, got {}",
            b.len()
        ))
        .at(0));
    }
    let special = match sign {
        NUMERIC_POS | NUMERIC_NEG => None,
        NUMERIC_NAN => Some(Numeric::NaN),
        NUMERIC_PINF => Some(Numeric::Infinity),
        NUMERIC_NINF => Some(Numeric::NegInfinity),
        s => {
            return Err(PgError::malformed(format!(
                "numeric sign word {s:#06x} is not one PostgreSQL uses"
            ))
            .at(4))
        }
    };
    if let Some(v) = special {
        if ndigits != 0 {
            return Err(PgError::malformed(format!("numeric {v} with {ndigits} digits")).at(0));
        }
        return Ok(v);
    }
    if dscale > NUMERIC_DSCALE_MAX {
        return Err(PgError::malformed(format!(
            "numeric dscale {dscale} is over {NUMERIC_DSCALE_MAX}"
        ))
        .at(6));
    }
    let mut groups = Vec::with_capacity(usize::from(ndigits));
    for i in 0..usize::from(ndigits) {
        let g = r.u16_be("numeric digit")?;
        if g >= NBASE {
            return Err(
                PgError::malformed(format!("numeric base-10000 digit {g} is over 9999"))
                    .at(8 + 2 * i as u64),
            );
        }
        groups.push(g);
    }
    let weight = i64::from(weight);
    let top = 4 * weight + 3;
    let low = -i64::from(dscale);
    let mut digits = Vec::new();
    if !groups.is_empty() {
        let mut p = top;
        while p >= low {
            let g = weight - p.div_euclid(4);
            let d = usize::try_from(g)
                .ok()
                .and_then(|g| groups.get(g))
                .map_or(0, |&v| (v / POW10[p.rem_euclid(4) as usize]) % 10);
            if d != 0 || !digits.is_empty() {
                digits.push(d as u8);
            }
            p -= 1;
        }
    }
    if digits.is_empty() {
        digits.push(0);
    }
    Ok(Numeric::Finite {
        negative: sign == NUMERIC_NEG,
        digits,
        exponent: -i32::from(dscale),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[u16]) -> Vec<u8> {
        w.iter().flat_map(|x| x.to_be_bytes()).collect()
    }

    fn enc(negative: bool, digits: &str, exponent: i32) -> Vec<u8> {
        let mut out = Vec::new();
        encode_numeric(&mut out, negative, digits.as_bytes(), exponent).unwrap();
        out
    }

    /// Hand-computed from the format: (text, sign, ascii digits, exponent,
    /// ndigits, weight, sign word, dscale, base-10000 digits).
    #[allow(clippy::type_complexity)]
    const CASES: &[(&str, bool, &str, i32, &[u16])] = &[
        ("0", false, "0", 0, &[0, 0, 0, 0]),
        ("1", false, "1", 0, &[1, 0, 0, 0, 1]),
        ("-1", true, "1", 0, &[1, 0, 0x4000, 0, 1]),
        ("10000", false, "10000", 0, &[1, 1, 0, 0, 1]),
        ("0.0001", false, "1", -4, &[1, 0xffff, 0, 4, 1]),
        ("1.10", false, "110", -2, &[2, 0, 0, 2, 1, 1000]),
        (
            "123456789.123456789",
            false,
            "123456789123456789",
            -9,
            &[6, 2, 0, 9, 1, 2345, 6789, 1234, 5678, 9000],
        ),
        (
            "0.00000000000000000001",
            false,
            "1",
            -20,
            &[1, 0xfffb, 0, 20, 1],
        ),
        ("0.00", false, "0", -2, &[0, 0, 0, 2]),
        (
            "-12345.678",
            true,
            "12345678",
            -3,
            &[3, 1, 0x4000, 3, 1, 2345, 6780],
        ),
        ("99990000", false, "99990000", 0, &[1, 1, 0, 0, 9999]),
        ("100000000", false, "100000000", 0, &[1, 2, 0, 0, 1]),
        ("0.5", false, "5", -1, &[1, 0xffff, 0, 1, 5000]),
    ];

    #[test]
    fn hand_computed_bytes() {
        for &(text, neg, digits, exp, w) in CASES {
            let bytes = enc(neg, digits, exp);
            assert_eq!(bytes, words(w), "{text}");
            let back = decode_numeric(&bytes).unwrap();
            assert_eq!(back.to_string(), text);
        }
    }

    #[test]
    fn trailing_zeros_survive() {
        let back = decode_numeric(&words(&[2, 0, 0, 2, 1, 1000])).unwrap();
        assert_eq!(
            back,
            Numeric::Finite {
                negative: false,
                digits: vec![1, 1, 0],
                exponent: -2
            }
        );
    }

    #[test]
    fn positive_exponent_and_leading_zeros() {
        // Decimal('1E+5') and Decimal('000123.0').
        assert_eq!(enc(false, "1", 5), words(&[1, 1, 0, 0, 10]));
        assert_eq!(
            decode_numeric(&enc(false, "1", 5)).unwrap().to_string(),
            "100000"
        );
        assert_eq!(enc(false, "0001230", -1), enc(false, "1230", -1));
        // Negative zero is sent as positive.
        assert_eq!(enc(true, "000", -1), words(&[0, 0, 0, 1]));
        let mut out = Vec::new();
        encode_numeric(&mut out, false, &[1, 2], 0).unwrap();
        assert_eq!(out, words(&[1, 0, 0, 0, 12]));
    }

    #[test]
    fn specials() {
        for (v, sign, text) in [
            (Numeric::NaN, NUMERIC_NAN, "NaN"),
            (Numeric::Infinity, NUMERIC_PINF, "Infinity"),
            (Numeric::NegInfinity, NUMERIC_NINF, "-Infinity"),
        ] {
            let mut out = Vec::new();
            encode_numeric_value(&mut out, &v).unwrap();
            assert_eq!(out, words(&[0, 0, sign, 0]));
            assert_eq!(decode_numeric(&out).unwrap(), v);
            assert_eq!(v.to_string(), text);
        }
        assert!(decode_numeric(&words(&[1, 0, NUMERIC_NAN, 0, 1])).is_err());
    }

    #[test]
    fn limits() {
        let mut out = Vec::new();
        assert!(encode_numeric(&mut out, false, b"1", -16383).is_ok());
        assert!(encode_numeric(&mut out, false, b"1", -16384).is_err());
        assert!(encode_numeric(&mut out, false, b"1", 131_071).is_ok());
        assert!(encode_numeric(&mut out, false, b"1", 131_072).is_err());
        assert!(encode_numeric(&mut out, false, b"1", i32::MIN).is_err());
        assert!(encode_numeric(&mut out, false, b"1", i32::MAX).is_err());
        assert!(encode_numeric(&mut out, false, b"1x", 0).is_err());
        assert!(encode_numeric(&mut out, false, &[10], 0).is_err());
        // The largest weight decodes to 131072 integer digits.
        let big = decode_numeric(&words(&[1, 0x7fff, 0, 0, 1])).unwrap();
        let Numeric::Finite { digits, .. } = big else {
            panic!()
        };
        assert_eq!(digits.len(), 131_069);
    }

    #[test]
    fn malformed_inputs() {
        for (bad, at) in [
            (words(&[1, 0, 0, 0, 10_000]), 8),
            (words(&[1, 0, 0x8000, 0, 1]), 4),
            (words(&[0, 0, 0, 0x4000]), 6),
            (words(&[2, 0, 0, 0, 1]), 0),
            (words(&[0, 0, 0, 0, 1]), 0),
        ] {
            assert_eq!(
                decode_numeric(&bad).unwrap_err().offset,
                Some(at),
                "{bad:?}"
            );
        }
        assert!(decode_numeric(&[0; 7]).is_err());
    }

    #[test]
    fn digits_past_dscale_are_truncated() {
        // 1.2345 sent with dscale 2, as numeric_recv would truncate to 1.23.
        let v = decode_numeric(&words(&[2, 0, 0, 2, 1, 2345])).unwrap();
        assert_eq!(v.to_string(), "1.23");
        // All digits below the scale: zero with that scale.
        let v = decode_numeric(&words(&[1, 0xfffe, 0, 2, 5])).unwrap();
        assert_eq!(v.to_string(), "0.00");
    }

    #[test]
    fn parses_decimal_text() {
        let f = |n: bool, d: &[u8], e: i32| Numeric::Finite {
            negative: n,
            digits: d.to_vec(),
            exponent: e,
        };
        assert_eq!(Numeric::parse("1.10"), Some(f(false, &[1, 1, 0], -2)));
        assert_eq!(Numeric::parse("-0.001"), Some(f(true, &[0, 0, 0, 1], -3)));
        assert_eq!(Numeric::parse("1.5E+3"), Some(f(false, &[1, 5], 2)));
        assert_eq!(Numeric::parse("7e-2"), Some(f(false, &[7], -2)));
        assert_eq!(Numeric::parse(".5"), Some(f(false, &[5], -1)));
        assert_eq!(Numeric::parse("NaN"), Some(Numeric::NaN));
        assert_eq!(Numeric::parse("-Infinity"), Some(Numeric::NegInfinity));
        assert_eq!(Numeric::parse("inf"), Some(Numeric::Infinity));
        for bad in [
            "",
            "-",
            ".",
            "1.2.3",
            "1e",
            "sNaN",
            "-NaN",
            "1_0",
            "0x10",
            "1e99999999999",
        ] {
            assert_eq!(Numeric::parse(bad), None, "{bad}");
        }
        assert_eq!(Numeric::parse("123.4500").unwrap().to_string(), "123.4500");
    }
}
