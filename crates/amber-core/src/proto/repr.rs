//! Numbers written the way Python writes them, so that amber's text and
//! JSON forms equal Google's Python output byte for byte: `repr(float)`
//! (shortest round-trip digits; scientific notation below 1e-4 and from
//! 1e16 on, `1e-05`, `1e+16`, `1.0`) and protobuf's `ToShortestFloat`
//! for 32-bit floats (the shortest digits that give the same `float32`).

/// `repr(x)` of a Python float.
pub fn f64_repr(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    layout(&format!("{x:e}"))
}

/// `repr(ToShortestFloat(x))`: protobuf's shortest decimal that reads back
/// as the same `float32`, laid out as Python's `repr` would lay it out.
/// `ToShortestFloat` tries `%.6g`, then 7, 8 and 9 significant digits, so
/// it keeps 6 digits where fewer would do (subnormals: `1.12104e-44`) and
/// rounds ties to even (`506515.12`, where the shortest form that reads
/// back could also end in 3).
pub fn f32_repr(x: f32) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    // `%.{p}g` rounds the exact value half to even, as Rust's `{:.*e}` does.
    for p in 6..=9 {
        let s = format!("{:.*e}", p - 1, x as f64);
        if s.parse::<f32>().ok() == Some(x) {
            return layout(&strip_zeros(&s));
        }
    }
    layout(&format!("{x:e}"))
}

/// `1.50000e-3` as `1.5e-3`, `2.00000e0` as `2e0` (what `%g` drops).
fn strip_zeros(sci: &str) -> String {
    let (mant, exp) = sci.split_once('e').unwrap_or((sci, "0"));
    let mant = if mant.contains('.') {
        mant.trim_end_matches('0').trim_end_matches('.')
    } else {
        mant
    };
    format!("{mant}e{exp}")
}

/// Lay out Rust's shortest scientific form (`-1.25e-7`, `1e16`) as Python's
/// `repr` does: fixed notation for decimal exponents from -4 to 15, with a
/// `.0` when there is no fraction; otherwise `d.ddde±XX`.
fn layout(sci: &str) -> String {
    let (mant, exp) = sci.split_once('e').unwrap_or((sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (neg, mant) = match mant.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mant),
    };
    let digits: String = mant.chars().filter(|c| *c != '.').collect();
    let mut out = String::with_capacity(digits.len() + 8);
    if neg {
        out.push('-');
    }
    if (-4..16).contains(&exp) {
        if exp < 0 {
            out.push_str("0.");
            for _ in 0..(-exp - 1) {
                out.push('0');
            }
            out.push_str(&digits);
        } else {
            let int_len = exp as usize + 1;
            if digits.len() <= int_len {
                out.push_str(&digits);
                for _ in digits.len()..int_len {
                    out.push('0');
                }
                out.push_str(".0");
            } else {
                out.push_str(&digits[..int_len]);
                out.push('.');
                out.push_str(&digits[int_len..]);
            }
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        let a = exp.unsigned_abs();
        if a < 10 {
            out.push('0');
        }
        out.push_str(&a.to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_python_repr() {
        for (x, s) in [
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (0.1, "0.1"),
            (1.5, "1.5"),
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (1e16, "1e+16"),
            (1.5e16, "1.5e+16"),
            (123456789012345680.0, "1.2345678901234568e+17"),
            (9999999999999998.0, "9999999999999998.0"),
            (1e100, "1e+100"),
            (-2.5e-300, "-2.5e-300"),
            (f64::MAX, "1.7976931348623157e+308"),
            (5e-324, "5e-324"),
            (2.71875, "2.71875"),
            (100.0, "100.0"),
        ] {
            assert_eq!(f64_repr(x), s, "{x}");
        }
        assert_eq!(f64_repr(f64::NAN), "nan");
        assert_eq!(f64_repr(f64::NEG_INFINITY), "-inf");
    }

    #[test]
    fn shortest_float32() {
        for (x, s) in [
            (0.1f32, "0.1"),
            (2.5f32, "2.5"),
            (1e10f32, "10000000000.0"),
            (f32::MAX, "3.4028235e+38"),
            (1e-30f32, "1e-30"),
            (16777217.0f32, "16777216.0"),
            (f32::from_bits(8), "1.12104e-44"),
            (-741451.2f32, "-741451.2"),
            (4_052_121.0 / 8.0, "506515.12"), // exactly 506515.125: a tie
        ] {
            assert_eq!(f32_repr(x), s, "{x}");
        }
    }
}
