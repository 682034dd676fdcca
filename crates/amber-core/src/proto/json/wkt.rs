//! The well-known types' JSON forms that are text: Timestamp (RFC 3339),
//! Duration (`"1.5s"`) and FieldMask (camelCase paths), written and read
//! with protobuf Python's rules and checks (`well_known_types.py`).

use crate::proto::runtime::error::DecodeKind;

/// Which well-known type a message is (by full name), for the types whose
/// JSON form is special.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wkt {
    /// `google.protobuf.Any`.
    Any,
    /// `google.protobuf.Timestamp`.
    Timestamp,
    /// `google.protobuf.Duration`.
    Duration,
    /// `google.protobuf.FieldMask`.
    FieldMask,
    /// `google.protobuf.Struct`.
    Struct,
    /// `google.protobuf.Value`.
    Value,
    /// `google.protobuf.ListValue`.
    ListValue,
    /// One of the wrappers (`Int32Value`, `StringValue`, ...).
    Wrapper,
}

/// The special form of message type `full_name`, if it has one.
#[inline]
pub fn wkt_of(full_name: &str) -> Option<Wkt> {
    let rest = full_name.strip_prefix("google.protobuf.")?;
    Some(match rest {
        "Any" => Wkt::Any,
        "Timestamp" => Wkt::Timestamp,
        "Duration" => Wkt::Duration,
        "FieldMask" => Wkt::FieldMask,
        "Struct" => Wkt::Struct,
        "Value" => Wkt::Value,
        "ListValue" => Wkt::ListValue,
        "DoubleValue" | "FloatValue" | "Int64Value" | "UInt64Value" | "Int32Value"
        | "UInt32Value" | "BoolValue" | "StringValue" | "BytesValue" => Wkt::Wrapper,
        _ => return None,
    })
}

/// The full name of the enum that is JSON `null`.
pub const NULL_VALUE: &str = "google.protobuf.NullValue";

const SECONDS_PER_DAY: i64 = 86_400;
const TIMESTAMP_MIN: i64 = -62_135_596_800;
const TIMESTAMP_MAX: i64 = 253_402_300_799;
const DURATION_MAX: i64 = 315_576_000_000;
const NANOS: i64 = 1_000_000_000;

fn check_timestamp(seconds: i64, nanos: i64) -> Result<(), String> {
    if !(TIMESTAMP_MIN..=TIMESTAMP_MAX).contains(&seconds) {
        return Err(format!(
            "Timestamp is not valid: Seconds {seconds} must be in range [{TIMESTAMP_MIN}, {TIMESTAMP_MAX}]"
        ));
    }
    if !(0..NANOS).contains(&nanos) {
        return Err(format!(
            "Timestamp is not valid: Nanos {nanos} must be in range [0, 999999999]"
        ));
    }
    Ok(())
}

fn check_duration(seconds: i64, nanos: i64) -> Result<(), String> {
    if !(-DURATION_MAX..=DURATION_MAX).contains(&seconds) {
        return Err(format!(
            "Duration is not valid: Seconds {seconds} must be in range [-{DURATION_MAX}, {DURATION_MAX}]"
        ));
    }
    if nanos <= -NANOS || nanos >= NANOS {
        return Err(format!(
            "Duration is not valid: Nanos {nanos} must be in range [-999999999, 999999999]"
        ));
    }
    if (nanos < 0 && seconds > 0) || (nanos > 0 && seconds < 0) {
        return Err("Duration is not valid: Sign mismatch".into());
    }
    Ok(())
}

/// `.fff`, `.ffffff` or `.fffffffff`: as few groups of 3 digits as hold
/// `nanos` exactly (none for 0).
fn push_fraction(out: &mut String, nanos: i64) {
    if nanos == 0 {
        return;
    }
    let s = format!("{nanos:09}");
    let s = if nanos % 1_000_000 == 0 {
        &s[..3]
    } else if nanos % 1_000 == 0 {
        &s[..6]
    } else {
        &s[..]
    };
    out.push('.');
    out.push_str(s);
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// (year, month, day) to days since 1970-01-01.
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        _ => 28,
    }
}

/// A Timestamp as RFC 3339 text in UTC (`1972-01-01T10:00:20.021Z`).
pub fn timestamp_to_string(seconds: i64, nanos: i64) -> Result<String, String> {
    check_timestamp(seconds, nanos)?;
    let days = seconds.div_euclid(SECONDS_PER_DAY);
    let secs = seconds.rem_euclid(SECONDS_PER_DAY);
    let (y, mo, d) = civil_from_days(days);
    let mut s = format!(
        "{y:04}-{mo:02}-{d:02}T{:02}:{:02}:{:02}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    );
    push_fraction(&mut s, nanos);
    s.push('Z');
    Ok(s)
}

/// A Duration as text (`"-3.100s"`).
pub fn duration_to_string(seconds: i64, nanos: i64) -> Result<String, String> {
    check_duration(seconds, nanos)?;
    let mut s = String::new();
    let (secs, nanos) = if seconds < 0 || nanos < 0 {
        s.push('-');
        (-(seconds as i128), -nanos)
    } else {
        (seconds as i128, nanos)
    };
    s.push_str(&secs.to_string());
    push_fraction(&mut s, nanos);
    s.push('s');
    Ok(s)
}

/// A FieldMask path in camelCase (`foo_bar` -> `fooBar`), refusing what
/// protobuf Python refuses.
pub fn path_to_camel(path: &str, out: &mut String) -> Result<(), String> {
    let mut after = false;
    for c in path.chars() {
        if c.is_uppercase() {
            return Err(format!(
                "Fail to print FieldMask to Json string: Path name {path} must not contain uppercase letters"
            ));
        }
        if after {
            if c.is_lowercase() {
                out.extend(c.to_uppercase());
                after = false;
            } else {
                return Err(format!(
                    "Fail to print FieldMask to Json string: The character after a \"_\" must be a lowercase letter in path name {path}"
                ));
            }
        } else if c == '_' {
            after = true;
        } else {
            out.push(c);
        }
    }
    if after {
        return Err(format!(
            "Fail to print FieldMask to Json string: Trailing \"_\" in path name {path}"
        ));
    }
    Ok(())
}

/// A FieldMask path from camelCase back to snake_case.
pub fn path_to_snake(path: &str) -> Result<String, String> {
    let mut out = String::with_capacity(path.len() + 4);
    for c in path.chars() {
        if c == '_' {
            return Err(format!(
                "Fail to parse FieldMask: Path name {path} must not contain \"_\"s"
            ));
        }
        if c.is_uppercase() {
            out.push('_');
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    Ok(out)
}

/// Exactly `n` ASCII digits at `b[i..]` as a number.
fn digits(b: &[u8], i: usize, n: usize) -> Option<i64> {
    let d = b.get(i..i + n)?;
    if !d.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(d.iter().fold(0i64, |v, &c| v * 10 + (c - b'0') as i64))
}

/// A 1- or 2-digit number at `b[*i..]` (as `strptime`'s `%m`, `%H`, ...
/// take them), advancing `*i`.
fn one_or_two(b: &[u8], i: &mut usize) -> Option<i64> {
    let first = *b.get(*i).filter(|c| c.is_ascii_digit())?;
    *i += 1;
    let mut v = (first - b'0') as i64;
    if let Some(&c) = b.get(*i).filter(|c| c.is_ascii_digit()) {
        v = v * 10 + (c - b'0') as i64;
        *i += 1;
    }
    Some(v)
}

/// Fractional digits (at most 9) as nanoseconds.
fn fraction(f: &[u8]) -> Option<i64> {
    if f.len() > 9 || !f.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut v = 0i64;
    for i in 0..9 {
        v = v * 10 + f.get(i).map_or(0, |&c| (c - b'0') as i64);
    }
    Some(v)
}

/// RFC 3339 text to (seconds, nanos), as protobuf Python's
/// `Timestamp.FromJsonString` reads it: `Z` or a `+hh:mm`/`-hh:mm` offset,
/// up to 9 fractional digits, upper-case `T`, the range checked. The error
/// is `Malformed` for text of another form, `OutOfRange` for a time past
/// the range.
pub fn timestamp_from_str(value: &str) -> Result<(i64, i64), (DecodeKind, String)> {
    let (seconds, nanos) = timestamp_fields(value).map_err(|e| (DecodeKind::Malformed, e))?;
    check_timestamp(seconds, nanos).map_err(|e| (DecodeKind::OutOfRange, e))?;
    Ok((seconds, nanos))
}

/// [`timestamp_from_str`]'s reading, the range not checked.
fn timestamp_fields(value: &str) -> Result<(i64, i64), String> {
    let bad = || {
        format!(
            "Failed to parse timestamp: {value:?} is not RFC 3339 (e.g. 1972-01-01T10:00:20.021Z)"
        )
    };
    let b = value.as_bytes();
    let tz = value
        .find('Z')
        .or_else(|| value.find('+'))
        .or_else(|| value.rfind('-'))
        .ok_or_else(|| "Failed to parse timestamp: missing valid timezone offset".to_string())?;
    let time = &b[..tz];
    let (main, frac) = match time.iter().position(|&c| c == b'.') {
        Some(p) => (&time[..p], &time[p + 1..]),
        None => (time, &b""[..]),
    };
    if main.contains(&b't') {
        return Err(format!(
            "time data {:?} does not match format '%Y-%m-%dT%H:%M:%S', lowercase 't' is not accepted",
            String::from_utf8_lossy(main)
        ));
    }
    let mut i = 0;
    let year = digits(main, 0, 4).ok_or_else(bad)?;
    i += 4;
    let sep = |c: u8, i: &mut usize| -> Result<(), String> {
        if main.get(*i) == Some(&c) {
            *i += 1;
            Ok(())
        } else {
            Err(bad())
        }
    };
    sep(b'-', &mut i)?;
    let month = one_or_two(main, &mut i).ok_or_else(bad)?;
    sep(b'-', &mut i)?;
    let day = one_or_two(main, &mut i).ok_or_else(bad)?;
    sep(b'T', &mut i)?;
    let hour = one_or_two(main, &mut i).ok_or_else(bad)?;
    sep(b':', &mut i)?;
    let minute = one_or_two(main, &mut i).ok_or_else(bad)?;
    sep(b':', &mut i)?;
    let second = one_or_two(main, &mut i).ok_or_else(bad)?;
    if i != main.len()
        || year < 1
        || !(1..=12).contains(&month)
        || day < 1
        || day > days_in_month(year, month as u32) as i64
        || hour > 23
        || minute > 59
        || second > 59
    {
        return Err(bad());
    }
    let nanos = fraction(frac).ok_or_else(|| {
        format!(
            "Failed to parse Timestamp: nanos {:?} is not 0 to 9 fractional digits",
            String::from_utf8_lossy(frac)
        )
    })?;
    let mut seconds = days_from_civil(year, month as u32, day as u32) * SECONDS_PER_DAY
        + hour * 3600
        + minute * 60
        + second;
    if b[tz] == b'Z' {
        if tz + 1 != b.len() {
            return Err(format!(
                "Failed to parse timestamp: invalid trailing data {value}"
            ));
        }
    } else {
        let zone = &b[tz..];
        let mut j = 1;
        let (h, m) = (|| {
            let h = one_or_two(zone, &mut j)?;
            if zone.get(j) != Some(&b':') {
                return None;
            }
            j += 1;
            let m = one_or_two(zone, &mut j)?;
            (j == zone.len()).then_some((h, m))
        })()
        .ok_or_else(|| {
            format!(
                "Invalid timezone offset value: {}",
                String::from_utf8_lossy(zone)
            )
        })?;
        let off = (h * 60 + m) * 60;
        if zone[0] == b'+' {
            seconds -= off;
        } else {
            seconds += off;
        }
    }
    Ok((seconds, nanos))
}

/// Duration text (`"-1.5s"`) to (seconds, nanos), as protobuf Python's
/// `Duration.FromJsonString` reads it (at most 9 fractional digits here).
/// The error is `Malformed` for text of another form, `OutOfRange` for a
/// duration past the range.
pub fn duration_from_str(value: &str) -> Result<(i64, i64), (DecodeKind, String)> {
    let bad = |why: &str| {
        (
            DecodeKind::Malformed,
            format!("Couldn't parse duration: {value} : {why}"),
        )
    };
    let Some(body) = value.strip_suffix('s') else {
        return Err((
            DecodeKind::Malformed,
            format!("Duration must end with letter \"s\": {value}"),
        ));
    };
    let (int, frac) = match body.find('.') {
        Some(p) => (&body[..p], Some(&body[p + 1..])),
        None => (body, None),
    };
    let neg = int.starts_with('-');
    let digits = int.strip_prefix(['-', '+']).unwrap_or(int);
    if digits.is_empty() || digits.len() > 19 || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return Err(bad("invalid seconds"));
    }
    let mut seconds: i64 = digits.parse().map_err(|_| bad("invalid seconds"))?;
    let mut nanos = match frac {
        Some(f) => fraction(f.as_bytes()).ok_or_else(|| bad("invalid fractional seconds"))?,
        None => 0,
    };
    if neg {
        seconds = -seconds;
        nanos = -nanos;
    }
    check_duration(seconds, nanos).map_err(|e| (DecodeKind::OutOfRange, bad(&e).1))?;
    Ok((seconds, nanos))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps() {
        assert_eq!(timestamp_to_string(0, 0).unwrap(), "1970-01-01T00:00:00Z");
        assert_eq!(
            timestamp_to_string(63_072_020, 21_000_000).unwrap(),
            "1972-01-01T00:00:20.021Z"
        );
        assert_eq!(
            timestamp_to_string(TIMESTAMP_MIN, 1000).unwrap(),
            "0001-01-01T00:00:00.000001Z"
        );
        assert_eq!(
            timestamp_to_string(TIMESTAMP_MAX, 1).unwrap(),
            "9999-12-31T23:59:59.000000001Z"
        );
        assert!(timestamp_to_string(TIMESTAMP_MAX + 1, 0).is_err());
        assert!(timestamp_to_string(0, -1).is_err());
        assert_eq!(
            timestamp_from_str("1972-01-01T10:00:20.021-05:00").unwrap(),
            (63_108_020 + 18000, 21_000_000)
        );
        assert_eq!(
            timestamp_from_str("0001-01-01T00:00:00Z").unwrap(),
            (TIMESTAMP_MIN, 0)
        );
        assert_eq!(timestamp_from_str("1970-01-01T00:00:00.Z").unwrap(), (0, 0));
        for bad in [
            "1970-01-01t00:00:00Z",
            "1970-01-01T00:00:00",
            "1970-01-01T00:00:00Zx",
            "1970-02-30T00:00:00Z",
            "1970-01-01T00:00:00.1234567890Z",
            "0000-12-31T00:00:00Z",
            "1970-01-01T24:00:00Z",
            "1970-01-01T00:00:00+0100",
        ] {
            assert_eq!(
                timestamp_from_str(bad).unwrap_err().0,
                DecodeKind::Malformed,
                "{bad}"
            );
        }
        // Past the range only through the offset.
        for far in ["9999-12-31T23:59:59-00:01", "0001-01-01T00:00:00+00:01"] {
            assert_eq!(
                timestamp_from_str(far).unwrap_err().0,
                DecodeKind::OutOfRange,
                "{far}"
            );
        }
    }

    #[test]
    fn durations() {
        assert_eq!(duration_to_string(1, 500_000_000).unwrap(), "1.500s");
        assert_eq!(duration_to_string(0, -1000).unwrap(), "-0.000001s");
        assert_eq!(duration_to_string(-3, -100_000_000).unwrap(), "-3.100s");
        assert!(duration_to_string(1, -1).is_err());
        assert_eq!(duration_from_str("-0.5s").unwrap(), (0, -500_000_000));
        assert_eq!(duration_from_str("1.000000001s").unwrap(), (1, 1));
        assert_eq!(duration_from_str("1").unwrap_err().0, DecodeKind::Malformed);
        assert_eq!(
            duration_from_str("1.5.s").unwrap_err().0,
            DecodeKind::Malformed
        );
        let far = duration_from_str("315576000001s").unwrap_err();
        assert_eq!(far.0, DecodeKind::OutOfRange);
        assert!(
            far.1
                .starts_with("Couldn't parse duration: 315576000001s : "),
            "{}",
            far.1
        );
    }

    #[test]
    fn field_mask_paths() {
        let mut s = String::new();
        path_to_camel("foo_bar.baz_qux", &mut s).unwrap();
        assert_eq!(s, "fooBar.bazQux");
        assert!(path_to_camel("foo_", &mut String::new()).is_err());
        assert!(path_to_camel("fooBar", &mut String::new()).is_err());
        assert_eq!(path_to_snake("fooBar.bazQux").unwrap(), "foo_bar.baz_qux");
        assert!(path_to_snake("foo_bar").is_err());
    }
}
