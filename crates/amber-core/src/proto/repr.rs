//! Floats written the way Python writes them, for the text format:
//! `repr(float)` and protobuf's `ToShortestFloat` for 32-bit floats, with
//! Python's spellings of NaN and the infinities (the digits come from
//! [`crate::proto::json::num`], which the JSON printer writes with too).

use crate::proto::json::num::{push_f64, shortest_f32};

/// `repr(x)` of a Python float (`nan`, `inf` and `-inf` as Python spells
/// them; finite values by [`push_f64`]).
pub fn f64_repr(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    let mut out = Vec::with_capacity(24);
    push_f64(&mut out, x);
    String::from_utf8(out).unwrap_or_default()
}

/// `repr(ToShortestFloat(x))`, protobuf Python's form of a `float` field
/// ([`shortest_f32`]).
pub fn f32_repr(x: f32) -> String {
    if x.is_finite() {
        f64_repr(shortest_f32(x))
    } else {
        f64_repr(x as f64)
    }
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
