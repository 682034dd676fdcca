//! Numbers as Python writes and reads them: `repr(float)`, protobuf
//! Python's `ToShortestFloat` for `float` fields, and the integer forms
//! `json_format` accepts.

use std::borrow::Cow;
use std::fmt::Write;

/// Append `x` (finite) as Python's `repr(float)` writes it: the shortest
/// digits that read back as `x`, positional when the decimal exponent is
/// in `-4..16` (`0.0001`, `1e-05`, `1000000000000000.0`, `1e+16`).
pub fn push_f64(out: &mut Vec<u8>, x: f64) {
    if x == 0.0 {
        out.extend_from_slice(if x.is_sign_negative() {
            b"-0.0"
        } else {
            b"0.0"
        });
        return;
    }
    let mut s = String::with_capacity(32);
    let _ = write!(s, "{x:e}");
    // Rust's shortest digits break an exact tie between two candidates
    // upwards; Python's take the even one, which is the correctly rounded
    // value at that many digits (Rust's fixed-precision form rounds half
    // to even): use that when it reads back as `x`.
    let k = sig_digits(&s);
    if k > 1 {
        let mut e = String::with_capacity(32);
        let _ = write!(e, "{:.*e}", k - 1, x);
        if e != s && e.parse::<f64>() == Ok(x) {
            s = e;
        }
    }
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (neg, mant) = match mant.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mant),
    };
    if neg {
        out.push(b'-');
    }
    let mut digits = [0u8; 24];
    let mut n = 0;
    for &c in mant.as_bytes() {
        if c != b'.' && n < digits.len() {
            digits[n] = c;
            n += 1;
        }
    }
    let digits = &digits[..n];
    if !(-4..16).contains(&exp) {
        out.push(digits[0]);
        if digits.len() > 1 {
            out.push(b'.');
            out.extend_from_slice(&digits[1..]);
        }
        out.push(b'e');
        out.push(if exp < 0 { b'-' } else { b'+' });
        let a = exp.unsigned_abs();
        if a < 10 {
            out.push(b'0');
        }
        push_u64(out, a as u64);
    } else if exp < 0 {
        out.extend_from_slice(b"0.");
        for _ in 0..(-exp - 1) {
            out.push(b'0');
        }
        out.extend_from_slice(digits);
    } else {
        let point = exp as usize + 1;
        if digits.len() <= point {
            out.extend_from_slice(digits);
            for _ in digits.len()..point {
                out.push(b'0');
            }
            out.extend_from_slice(b".0");
        } else {
            out.extend_from_slice(&digits[..point]);
            out.push(b'.');
            out.extend_from_slice(&digits[point..]);
        }
    }
}

/// protobuf Python's `ToShortestFloat`: for precision 6, 7, ... the
/// value of `'%.{p}g' % v` (as a double), the first that rounds back to
/// the same `f32`. For a normal `f32` whose shortest round-trip form has at
/// most 6 digits that form is the answer (the 6-digit decimal grid is
/// coarser than the `f32` grid there); otherwise (more digits, or a
/// subnormal, where the `f32` grid is the coarser) the loop is run.
pub fn shortest_f32(v: f32) -> f64 {
    let mut s = String::with_capacity(32);
    let _ = write!(s, "{v:e}");
    let digits = sig_digits(&s);
    if v.is_normal() && digits <= 6 {
        return s.parse().unwrap_or(v as f64);
    }
    let orig = v as f64;
    for p in 6..=17 {
        s.clear();
        let _ = write!(s, "{:.*e}", p - 1, orig);
        let r: f64 = s.parse().unwrap_or(orig);
        if (r as f32) as f64 == orig {
            return r;
        }
    }
    orig
}

/// How many significant digits a `{:e}` form (`-1.25e-7`) has.
fn sig_digits(sci: &str) -> usize {
    sci.split('e')
        .next()
        .map_or(0, |m| m.bytes().filter(u8::is_ascii_digit).count())
}

/// Append an unsigned integer in decimal.
pub fn push_u64(out: &mut Vec<u8>, v: u64) {
    let mut buf = [0u8; 24];
    out.extend_from_slice(fmt_u64(&mut buf, v).as_bytes());
}

/// An unsigned integer in decimal, written into `buf`.
pub fn fmt_u64(buf: &mut [u8; 24], mut v: u64) -> &str {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    // Only ASCII digits were written.
    crate::bytes::utf8::str(&buf[i..]).unwrap_or_default()
}

/// A signed integer in decimal, written into `buf`.
pub fn fmt_i64(buf: &mut [u8; 24], v: i64) -> &str {
    let len = fmt_u64(buf, v.unsigned_abs()).len();
    let mut start = buf.len() - len;
    if v < 0 {
        start -= 1;
        buf[start] = b'-';
    }
    crate::bytes::utf8::str(&buf[start..]).unwrap_or_default()
}

/// An `i64` or a `u64` (held in an `i128`) in decimal, written into `buf`.
pub fn fmt_i64_or_u64(buf: &mut [u8; 24], v: i128) -> &str {
    if v < 0 {
        fmt_i64(buf, v as i64)
    } else {
        fmt_u64(buf, v as u64)
    }
}

/// Append a signed integer in decimal.
pub fn push_i64(out: &mut Vec<u8>, v: i64) {
    if v < 0 {
        out.push(b'-');
    }
    push_u64(out, v.unsigned_abs());
}

/// Digit separators as Python's `int()` and `float()` read them, which is
/// how `json_format` reads quoted numbers: each `_` between two digits is
/// dropped (`"1_000"` is 1000); `None` when one is not between digits
/// (`"_1"`, `"1__0"`, `"1_"`, `"1_.5"`).
fn without_separators(s: &str) -> Option<Cow<'_, str>> {
    if !s.contains('_') {
        return Some(Cow::Borrowed(s));
    }
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    for (i, &c) in b.iter().enumerate() {
        if c == b'_' {
            let digit_before = i > 0 && b[i - 1].is_ascii_digit();
            let digit_after = b.get(i + 1).is_some_and(u8::is_ascii_digit);
            if !(digit_before && digit_after) {
                return None;
            }
        } else if c.is_ascii() {
            out.push(c as char);
        } else {
            return None;
        }
    }
    Some(Cow::Owned(out))
}

/// An integer written as decimal digits with an optional sign (`+` too, as
/// Python's `int()` takes it) and digit separators; `None` if `s` is not of that form. Values
/// beyond `i128` saturate (every caller range-checks to 64 bits).
pub fn parse_int_exact(s: &str) -> Option<i128> {
    let s = without_separators(s)?;
    let b = s.as_bytes();
    let (neg, digits) = match b.first()? {
        b'-' => (true, &b[1..]),
        b'+' => (false, &b[1..]),
        _ => (false, b),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut v: i128 = 0;
    for &d in digits {
        v = v.saturating_mul(10).saturating_add((d - b'0') as i128);
    }
    Some(if neg { -v } else { v })
}

/// A number in decimal floating form (digits, `.`, an exponent, digit
/// separators), as both JSON and Python's `float()` read it; `None` for anything else (Rust's
/// own `inf`/`nan` words included).
pub fn parse_float_text(s: &str) -> Option<f64> {
    let s = without_separators(s)?;
    let b = s.as_bytes();
    if b.is_empty()
        || !b
            .iter()
            .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-'))
        || !b.iter().any(u8::is_ascii_digit)
    {
        return None;
    }
    s.parse().ok()
}

/// The integer a JSON number or string stands for, as `json_format`'s
/// `_ConvertInteger` takes it: exact digits, or an integral float form
/// (`1e3`, `5.0`); `Err` says why not.
pub fn integer_of(text: &str, exact_only: bool) -> Result<i128, String> {
    if let Some(v) = parse_int_exact(text) {
        return Ok(v);
    }
    if exact_only || text.contains(' ') {
        return Err(format!("Couldn't parse integer: {text:?}"));
    }
    match parse_float_text(text) {
        Some(f) if f.is_finite() && f.fract() == 0.0 => {
            if f.abs() >= 1.7e38 {
                Ok(if f < 0.0 { i128::MIN } else { i128::MAX })
            } else {
                Ok(f as i128)
            }
        }
        Some(_) => Err(format!("Couldn't parse non-integer value: {text}")),
        None => Err(format!("Couldn't parse integer: {text:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(x: f64) -> String {
        let mut v = Vec::new();
        push_f64(&mut v, x);
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn repr_matches_python() {
        assert_eq!(r(1.0), "1.0");
        assert_eq!(r(-0.0), "-0.0");
        assert_eq!(r(1e-5), "1e-05");
        assert_eq!(r(0.0001), "0.0001");
        assert_eq!(r(1e16), "1e+16");
        assert_eq!(r(1e15), "1000000000000000.0");
        assert_eq!(r(123.456), "123.456");
        assert_eq!(r(1.5e300), "1.5e+300");
        assert_eq!(r(-2.5e-300), "-2.5e-300");
        assert_eq!(r(5e-324), "5e-324");
        assert_eq!(r(0.1), "0.1");
        assert_eq!(r(1.7976931348623157e308), "1.7976931348623157e+308");
        assert_eq!(r(12345678901234567.0), "1.2345678901234568e+16");
        // A tie between two shortest forms goes to the even digit.
        assert_eq!(r(-(655306575573102.0 + 0.25)), "-655306575573102.2");
    }

    #[test]
    fn shortest_float_matches_protobuf() {
        assert_eq!(shortest_f32(0.1), 0.1);
        assert_eq!(shortest_f32(2.5), 2.5);
        assert_eq!(shortest_f32(f32::MAX), 3.4028235e38);
        assert_eq!(shortest_f32(1e-45), 1.4013e-45);
        assert_eq!(shortest_f32(16777217.0), 16777216.0);
        assert_eq!(shortest_f32(0.3), 0.3);
    }

    #[test]
    fn integers() {
        assert_eq!(integer_of("12", false), Ok(12));
        assert_eq!(integer_of("-1e3", false), Ok(-1000));
        assert_eq!(integer_of("5.0", false), Ok(5));
        assert!(integer_of("1.5", false).is_err());
        assert!(integer_of("1 ", false).is_err());
        assert!(integer_of("inf", false).is_err());
        assert!(integer_of("1e3", true).is_err());
        assert_eq!(integer_of("1_000", false), Ok(1000));
        assert_eq!(integer_of("-1_0e1_0", false), Ok(-100_000_000_000));
        for bad in ["_1", "1_", "1__0", "+_1", "1_.5", "1._5", "1_e5", "1e_5"] {
            assert!(integer_of(bad, false).is_err(), "{bad}");
            assert!(parse_float_text(bad).is_none(), "{bad}");
        }
        assert_eq!(parse_float_text("1_0.2_5e0_1"), Some(102.5));
    }
}
