//! One scalar token converted to a field's type: integers exactly, floats
//! with their special names, enums by name or number, bytes from base64.

use super::*;

impl<'t, 'a, I: Input<'a>> Parser<'t, 'a, I> {
    /// A scalar of `kind` from a token (`key`: a map key, always a
    /// string). Strings and bytes borrow from `tok` or `buf`.
    pub(super) fn convert<'x>(
        &self,
        kind: Kind,
        tok: &'x Tok<'a>,
        buf: &'x mut Vec<u8>,
        key: bool,
    ) -> Result<Scalar<'x>, Bad> {
        let msg = |s: String| Bad::Msg(DecodeKind::TypeMismatch, s);
        let range = |s: String| Bad::Msg(DecodeKind::OutOfRange, s);
        match kind {
            Kind::Int32
            | Kind::Sint32
            | Kind::Sfixed32
            | Kind::Int64
            | Kind::Sint64
            | Kind::Sfixed64
            | Kind::Uint32
            | Kind::Fixed32
            | Kind::Uint64
            | Kind::Fixed64 => {
                let v = match tok {
                    Tok::Num(n) => num_int(*n),
                    Tok::Str(s) => num::integer_of(s, false),
                    Tok::Bool(b) => Err(format!(
                        "Bool value {} is not acceptable for integer field",
                        if *b { "True" } else { "False" }
                    )),
                    Tok::Null => Err("null is not an integer".into()),
                }
                .map_err(msg)?;
                let out = || range(format!("Value out of range: {v}"));
                Ok(match kind {
                    Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => {
                        Scalar::I32(i32::try_from(v).map_err(|_| out())?)
                    }
                    Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => {
                        Scalar::I64(i64::try_from(v).map_err(|_| out())?)
                    }
                    Kind::Uint32 | Kind::Fixed32 => {
                        Scalar::U32(u32::try_from(v).map_err(|_| out())?)
                    }
                    _ => Scalar::U64(u64::try_from(v).map_err(|_| out())?),
                })
            }
            Kind::Double | Kind::Float => {
                let v = match tok {
                    Tok::Num(n) => {
                        let v = num_f64(*n);
                        if v.is_nan() {
                            return Err(msg(
                                "Couldn't parse NaN, use quoted \"NaN\" instead".into()
                            ));
                        }
                        if v.is_infinite() {
                            return Err(range(format!(
                                "Couldn't parse {} or value too {}, use quoted \"{}\" instead",
                                if v > 0.0 { "Infinity" } else { "-Infinity" },
                                if v > 0.0 { "large" } else { "small" },
                                if v > 0.0 { "Infinity" } else { "-Infinity" },
                            )));
                        }
                        v
                    }
                    Tok::Str(s) => special_float(s)
                        .or_else(|| num::parse_float_text(s))
                        .ok_or_else(|| msg(format!("Couldn't parse float: {s}")))?,
                    _ => return Err(msg("Expected a number or a string for a float field".into())),
                };
                if kind == Kind::Float {
                    if v.is_finite() && v.abs() > f32::MAX as f64 {
                        return Err(range(format!(
                            "Float value too {}",
                            if v > 0.0 { "large" } else { "small" }
                        )));
                    }
                    Ok(Scalar::F32(v as f32))
                } else {
                    Ok(Scalar::F64(v))
                }
            }
            Kind::Bool => match tok {
                Tok::Bool(b) if !key => Ok(Scalar::Bool(*b)),
                Tok::Str(s) if key && s == "true" => Ok(Scalar::Bool(true)),
                Tok::Str(s) if key && s == "false" => Ok(Scalar::Bool(false)),
                Tok::Str(s) if key => Err(msg(format!("Expected \"true\" or \"false\", not {s}"))),
                _ => Err(msg("Expected true or false without quotes".into())),
            },
            Kind::String => match tok {
                Tok::Str(s) => Ok(Scalar::Str(s.as_bytes())),
                _ => Err(msg("Expected a string".into())),
            },
            Kind::Bytes => match tok {
                Tok::Str(s) => {
                    *buf = b64::decode(s.as_bytes())
                        .map_err(|e| Bad::Msg(DecodeKind::Malformed, e))?;
                    Ok(Scalar::Bytes(buf))
                }
                _ => Err(msg("Expected a base64 string for a bytes field".into())),
            },
            Kind::Enum(e) => {
                let info = &self.t.enums[e as usize];
                let n = match tok {
                    Tok::Str(s) => {
                        if let Some((_, n)) = info.names.iter().find(|v| v.0 == **s) {
                            return Ok(Scalar::Enum(*n));
                        }
                        match num::parse_int_exact(s) {
                            Some(n) => n,
                            None => {
                                return Err(Bad::UnknownEnum(format!(
                                    "Invalid enum value {s} for enum type {}",
                                    info.full_name
                                )))
                            }
                        }
                    }
                    Tok::Num(n) => num_int(*n).map_err(msg)?,
                    _ => {
                        return Err(msg(format!(
                            "Invalid enum value for enum type {}",
                            info.full_name
                        )))
                    }
                };
                let n = i32::try_from(n).map_err(|_| {
                    range(format!(
                        "Invalid enum value {n} for enum type {}",
                        info.full_name
                    ))
                })?;
                if info.closed && !info.contains(n) {
                    return Err(range(format!(
                        "Invalid enum value {n} for enum type {}",
                        info.full_name
                    )));
                }
                Ok(Scalar::Enum(n))
            }
            Kind::Message(_) => Err(msg("a message where a scalar was expected".into())),
        }
    }
}

/// The integer a number stands for (json_format's `_ConvertInteger`: a
/// float must be integral).
pub(super) fn num_int(n: Num<'_>) -> Result<i128, String> {
    match n {
        Num::Text(n) => num::integer_of(n.text, false),
        Num::Int(v) => Ok(v),
        Num::Float(f) if f.is_finite() && f.fract() == 0.0 => Ok(if f.abs() >= 1.7e38 {
            if f < 0.0 {
                i128::MIN
            } else {
                i128::MAX
            }
        } else {
            f as i128
        }),
        Num::Float(f) => Err(format!("Couldn't parse integer: {f}")),
    }
}

/// A number as a double (text that overflows: an infinity, as Python's
/// json reads it).
pub(super) fn num_f64(n: Num<'_>) -> f64 {
    match n {
        Num::Text(n) => n.text.parse().unwrap_or(f64::NAN),
        Num::Int(v) => v as f64,
        Num::Float(f) => f,
    }
}

/// `NaN`, `Infinity`, `-Infinity` (and the other spellings Python's
/// `float()` reads, but not `nan`, which json_format refuses).
pub(super) fn special_float(s: &str) -> Option<f64> {
    if s == "nan" {
        return None;
    }
    let (neg, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let v = if body.eq_ignore_ascii_case("nan") {
        f64::NAN
    } else if body.eq_ignore_ascii_case("inf") || body.eq_ignore_ascii_case("infinity") {
        f64::INFINITY
    } else {
        return None;
    };
    Some(if neg { -v } else { v })
}
