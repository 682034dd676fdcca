//! protoc's small text rules: JSON names, map entry names, C escaping of
//! bytes defaults, and `%g`-style number formatting of float defaults.

/// protoc's JSON name of a field: underscores dropped, the letter after
/// each one upper-cased (`foo_bar_baz` → `fooBarBaz`).
pub fn json_name(name: &str) -> String {
    camel(name, false)
}

/// The name of a map field's synthesized entry type: CamelCase plus
/// `Entry` (`string_to_int` → `StringToIntEntry`).
pub fn map_entry_name(field: &str) -> String {
    let mut out = camel(field, true);
    out.push_str("Entry");
    out
}

/// `name` without underscores, the letter after each one upper-cased, and
/// the first one too with `first_upper`.
fn camel(name: &str, first_upper: bool) -> String {
    let mut out = String::with_capacity(name.len() + 5);
    let mut cap = first_upper;
    for c in name.chars() {
        if c == '_' {
            cap = true;
        } else if cap {
            out.push(c.to_ascii_uppercase());
            cap = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// C-style escaping as protoc writes bytes defaults: `\n \r \t \" \' \\`
/// and three-digit octal for other bytes outside printable ASCII.
pub fn c_escape(b: &[u8]) -> String {
    let mut out = String::with_capacity(b.len());
    for &c in b {
        c_escape_byte(&mut out, c);
    }
    out
}

/// One byte of [`c_escape`].
pub fn c_escape_byte(out: &mut String, c: u8) {
    match c {
        b'\n' => out.push_str("\\n"),
        b'\r' => out.push_str("\\r"),
        b'\t' => out.push_str("\\t"),
        b'"' => out.push_str("\\\""),
        b'\'' => out.push_str("\\'"),
        b'\\' => out.push_str("\\\\"),
        0x20..=0x7E => out.push(c as char),
        _ => {
            use std::fmt::Write as _;
            let _ = write!(out, "\\{c:03o}");
        }
    }
}

/// C's `printf("%.{prec}g", v)` for finite `v`.
fn format_g(v: f64, prec: usize) -> String {
    if v == 0.0 {
        return if v.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let e = format!("{:.*e}", prec - 1, v);
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let x: i32 = exp.parse().unwrap_or(0);
    if x < -4 || x >= prec as i32 {
        let mant = strip_zeros(mant);
        let sign = if x < 0 { '-' } else { '+' };
        format!("{mant}e{sign}{:02}", x.abs())
    } else {
        let decimals = (prec as i32 - 1 - x).max(0) as usize;
        strip_zeros(&format!("{:.*}", decimals, v)).to_string()
    }
}

fn strip_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

fn special(v: f64) -> Option<String> {
    if v.is_nan() {
        Some("nan".into())
    } else if v.is_infinite() {
        Some(if v > 0.0 { "inf" } else { "-inf" }.into())
    } else {
        None
    }
}

/// protoc's `SimpleDtoa`: `%.15g`, or `%.17g` when that does not read back
/// as the same double.
pub fn format_double(v: f64) -> String {
    if let Some(s) = special(v) {
        return s;
    }
    let s = format_g(v, 15);
    if s.parse::<f64>().ok() == Some(v) {
        s
    } else {
        format_g(v, 17)
    }
}

/// protoc's `SimpleFtoa`: `%.6g`, or `%.9g` when that does not read back as
/// the same float.
pub fn format_float(v: f32) -> String {
    if let Some(s) = special(v as f64) {
        return s;
    }
    let s = format_g(v as f64, 6);
    if s.parse::<f32>().ok() == Some(v) {
        s
    } else {
        format_g(v as f64, 9)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protoc_formats() {
        assert_eq!(json_name("foo_bar_baz"), "fooBarBaz");
        assert_eq!(json_name("_x__y"), "XY");
        assert_eq!(map_entry_name("string_to_int"), "StringToIntEntry");
        assert_eq!(c_escape(b"a\x01\xff\"'\n"), "a\\001\\377\\\"\\'\\n");
        assert_eq!(format_double(1e20), "1e+20");
        assert_eq!(format_double(1.23456789012345), "1.23456789012345");
        assert_eq!(format_double(0.1), "0.1");
        assert_eq!(format_double(16.0), "16");
        assert_eq!(format_double(1e15), "1e+15");
        assert_eq!(format_double(123456789012345.0), "123456789012345");
        assert_eq!(format_float(1e-5), "1e-05");
        assert_eq!(format_float(0.1), "0.1");
        assert_eq!(format_float(f32::MAX), "3.40282347e+38");
        assert_eq!(format_double(-f64::INFINITY), "-inf");
    }
}
