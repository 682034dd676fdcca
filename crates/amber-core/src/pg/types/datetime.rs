//! Dates and times in PostgreSQL's binary send format (integer datetimes,
//! the only kind since PostgreSQL 10), with calendar helpers.
//!
//! - date: int32 days since 2000-01-01 (`POSTGRES_EPOCH_JDATE`), with
//!   `i32::MIN` for -infinity and `i32::MAX` for infinity. Finite dates lie
//!   in `[-2451545, 2145031949)`: Julian day 0 (4714-11-24 BC) up to, not
//!   including, 5874898-01-01 (`IS_VALID_DATE`).
//! - time: int64 microseconds since midnight, `0..=86_400_000_000`
//!   (24:00:00 is a valid time).
//! - timetz: the time, then int32 zone offset in seconds **west** of UTC
//!   (PostgreSQL's sign: `-3600` is UTC+01:00), `|offset| < 16 h`
//!   (`TZDISP_LIMIT`).
//! - timestamp, timestamptz: int64 microseconds since 2000-01-01 00:00:00
//!   (UTC for timestamptz), `i64::MIN` / `i64::MAX` for -infinity / infinity,
//!   finite values in `[-211813488000000000, 9223371331200000000)`
//!   (`IS_VALID_TIMESTAMP`: 4714-11-24 BC up to 294277-01-01).
//! - interval: int64 microseconds, int32 days, int32 months, in that order;
//!   every combination is accepted (PostgreSQL 17 spells infinite intervals
//!   with all three at their minimum or maximum).
//!
//! Years are astronomical: year 0 is 1 BC, -1 is 2 BC.

use crate::pg::error::{PgError, Res};
use crate::pg::wire::{exact, put_i32, put_i64};

pub const USECS_PER_DAY: i64 = 86_400_000_000;
/// First valid date: 4714-11-24 BC (Julian day 0), in days since 2000.
pub const DATE_MIN_DAYS: i32 = -2_451_545;
/// First date past the range: 5874898-01-01, in days since 2000.
pub const DATE_END_DAYS: i32 = 2_145_031_949;
/// First valid timestamp, in microseconds since 2000.
pub const TIMESTAMP_MIN: i64 = -211_813_488_000_000_000;
/// First timestamp past the range (294277-01-01).
pub const TIMESTAMP_END: i64 = 9_223_371_331_200_000_000;
/// A timetz offset must be strictly inside `±TZ_OFFSET_LIMIT` seconds.
pub const TZ_OFFSET_LIMIT: i32 = 16 * 3600;

/// Days from 1970-01-01 to 2000-01-01.
const UNIX_TO_PG_DAYS: i64 = 10_957;

/// A PostgreSQL date.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Date {
    NegInfinity,
    /// Days since 2000-01-01.
    Days(i32),
    Infinity,
}

/// A PostgreSQL timestamp or timestamptz.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Timestamp {
    NegInfinity,
    /// Microseconds since 2000-01-01 00:00:00 (UTC for timestamptz).
    Micros(i64),
    Infinity,
}

/// A PostgreSQL timetz.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TimeTz {
    /// Microseconds since midnight, local time.
    pub micros: i64,
    /// Zone offset in seconds **west** of UTC, PostgreSQL's sign convention:
    /// the negation of the usual UTC offset (UTC+02:00 is `-7200`).
    pub offset_west: i32,
}

/// A PostgreSQL interval: three independent fields, as PostgreSQL keeps them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Interval {
    pub micros: i64,
    pub days: i32,
    pub months: i32,
}

fn is_leap(year: i64) -> bool {
    year.rem_euclid(4) == 0 && (year.rem_euclid(100) != 0 || year.rem_euclid(400) == 0)
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(year) => 29,
        2 => 28,
        _ => 31,
    }
}

/// Days since 2000-01-01 of a proleptic Gregorian date; `None` for a month
/// or day that does not exist or a day count beyond an int32.
pub fn ymd_to_days(year: i32, month: u32, day: u32) -> Option<i32> {
    let y = i64::from(year);
    if !(1..=12).contains(&month) || day == 0 || day > days_in_month(y, month) {
        return None;
    }
    // Count from March 1 so that the leap day ends the counted year.
    let y = if month <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let month_from_march = i64::from((month + 9) % 12);
    let day_of_year = (153 * month_from_march + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    let unix_days = era * 146_097 + day_of_era - 719_468;
    i32::try_from(unix_days - UNIX_TO_PG_DAYS).ok()
}

/// The proleptic Gregorian (year, month, day) of a day count since
/// 2000-01-01. Total for every `i32`.
pub fn days_to_ymd(days: i32) -> (i32, u32, u32) {
    let z = i64::from(days) + UNIX_TO_PG_DAYS + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    // |days| < 2^31 keeps |year| under 6 million: the casts are exact.
    (year as i32, month as u32, day as u32)
}

/// Microseconds since 2000-01-01 split into (days since 2000-01-01,
/// microseconds since that midnight), flooring: -1 µs is day -1 at
/// 86_399_999_999.
pub fn split_micros(micros: i64) -> (i32, i64) {
    let days = micros.div_euclid(USECS_PER_DAY);
    // |i64| / 86_400_000_000 < 2^27: fits an i32.
    (days as i32, micros.rem_euclid(USECS_PER_DAY))
}

/// The inverse of [`split_micros`]; `None` if it overflows an i64.
pub fn join_micros(days: i32, micros_of_day: i64) -> Option<i64> {
    let v = i128::from(days) * i128::from(USECS_PER_DAY) + i128::from(micros_of_day);
    i64::try_from(v).ok()
}

fn check_date_days(d: i32) -> Res<()> {
    if (DATE_MIN_DAYS..DATE_END_DAYS).contains(&d) {
        Ok(())
    } else {
        Err(PgError::out_of_range(format!(
            "date {d} days from 2000-01-01 is outside PostgreSQL's range (4714-11-24 BC to 5874897-12-31)"
        )))
    }
}

pub fn encode_date(out: &mut Vec<u8>, d: Date) -> Res<()> {
    let v = match d {
        Date::NegInfinity => i32::MIN,
        Date::Infinity => i32::MAX,
        Date::Days(n) => {
            check_date_days(n)?;
            n
        }
    };
    put_i32(out, v);
    Ok(())
}

pub fn decode_date(b: &[u8]) -> Res<Date> {
    match i32::from_be_bytes(exact(b, "date")?) {
        i32::MIN => Ok(Date::NegInfinity),
        i32::MAX => Ok(Date::Infinity),
        n => check_date_days(n)
            .map(|_| Date::Days(n))
            .map_err(|e| e.at(0)),
    }
}

fn check_time(micros: i64) -> Res<()> {
    if (0..=USECS_PER_DAY).contains(&micros) {
        Ok(())
    } else {
        Err(PgError::out_of_range(format!(
            "time {micros} µs is outside 00:00:00 to 24:00:00"
        )))
    }
}

fn check_offset(west: i32) -> Res<()> {
    if west.unsigned_abs() < TZ_OFFSET_LIMIT.unsigned_abs() {
        Ok(())
    } else {
        Err(PgError::out_of_range(format!(
            "time zone offset {west} s is outside PostgreSQL's ±15:59:59"
        )))
    }
}

/// time: microseconds since midnight, `0..=86_400_000_000`.
pub fn encode_time(out: &mut Vec<u8>, micros: i64) -> Res<()> {
    check_time(micros)?;
    put_i64(out, micros);
    Ok(())
}

pub fn decode_time(b: &[u8]) -> Res<i64> {
    let v = i64::from_be_bytes(exact(b, "time")?);
    check_time(v).map_err(|e| e.at(0))?;
    Ok(v)
}

pub fn encode_timetz(out: &mut Vec<u8>, t: TimeTz) -> Res<()> {
    check_time(t.micros)?;
    check_offset(t.offset_west)?;
    put_i64(out, t.micros);
    put_i32(out, t.offset_west);
    Ok(())
}

pub fn decode_timetz(b: &[u8]) -> Res<TimeTz> {
    let a: [u8; 12] = exact(b, "timetz")?;
    let (t, z) = a.split_at(8);
    let micros = i64::from_be_bytes(t.try_into().unwrap_or_default());
    let offset_west = i32::from_be_bytes(z.try_into().unwrap_or_default());
    check_time(micros).map_err(|e| e.at(0))?;
    check_offset(offset_west).map_err(|e| e.at(8))?;
    Ok(TimeTz {
        micros,
        offset_west,
    })
}

fn check_timestamp(us: i64) -> Res<()> {
    if (TIMESTAMP_MIN..TIMESTAMP_END).contains(&us) {
        Ok(())
    } else {
        Err(PgError::out_of_range(format!(
            "timestamp {us} µs from 2000-01-01 is outside PostgreSQL's range (4714-11-24 BC to 294276-12-31)"
        )))
    }
}

/// timestamp and timestamptz (the same bytes; for timestamptz the
/// microseconds count from 2000-01-01 00:00:00 UTC).
pub fn encode_timestamp(out: &mut Vec<u8>, t: Timestamp) -> Res<()> {
    let v = match t {
        Timestamp::NegInfinity => i64::MIN,
        Timestamp::Infinity => i64::MAX,
        Timestamp::Micros(us) => {
            check_timestamp(us)?;
            us
        }
    };
    put_i64(out, v);
    Ok(())
}

pub fn decode_timestamp(b: &[u8]) -> Res<Timestamp> {
    match i64::from_be_bytes(exact(b, "timestamp")?) {
        i64::MIN => Ok(Timestamp::NegInfinity),
        i64::MAX => Ok(Timestamp::Infinity),
        us => check_timestamp(us)
            .map(|_| Timestamp::Micros(us))
            .map_err(|e| e.at(0)),
    }
}

/// Days that `months` stand for, as psycopg's interval loader counts them
/// (and Python's `timedelta` has no months): 365 per whole year and 30 per
/// month left over, the sign kept (`-13` months is `-395` days).
pub fn months_as_days(months: i32) -> i64 {
    let m = i64::from(months).abs();
    let days = m / 12 * 365 + m % 12 * 30;
    if months < 0 {
        -days
    } else {
        days
    }
}

pub fn encode_interval(out: &mut Vec<u8>, iv: Interval) {
    put_i64(out, iv.micros);
    put_i32(out, iv.days);
    put_i32(out, iv.months);
}

pub fn decode_interval(b: &[u8]) -> Res<Interval> {
    let a: [u8; 16] = exact(b, "interval")?;
    let mut us = [0u8; 8];
    us.copy_from_slice(&a[..8]);
    let mut days = [0u8; 4];
    days.copy_from_slice(&a[8..12]);
    let mut months = [0u8; 4];
    months.copy_from_slice(&a[12..]);
    Ok(Interval {
        micros: i64::from_be_bytes(us),
        days: i32::from_be_bytes(days),
        months: i32::from_be_bytes(months),
    })
}

/// A timetz from its ISO text, exactly: `HH:MM[:SS[.ffffff]]` followed by
/// `Z` or an offset `±HH[:MM[:SS]]` (or `±HHMM[SS]`), as Python's
/// `time.isoformat()` and PostgreSQL's own output write it. Anything else
/// (more than six fractional digits, a missing offset, a named zone, spaces)
/// is refused rather than rounded or guessed.
pub fn parse_timetz(text: &str) -> Res<TimeTz> {
    let bad = || {
        PgError::invalid_value(format!(
            "{text:?} is not a time with a UTC offset (HH:MM[:SS[.ffffff]]±HH[:MM[:SS]])"
        ))
    };
    let b = text.as_bytes();
    let two = |at: usize| -> Option<i64> {
        match b.get(at..at + 2)? {
            [x @ b'0'..=b'9', y @ b'0'..=b'9'] => Some(i64::from((x - b'0') * 10 + (y - b'0'))),
            _ => None,
        }
    };
    let hour = two(0).ok_or_else(bad)?;
    if b.get(2) != Some(&b':') {
        return Err(bad());
    }
    let minute = two(3).ok_or_else(bad)?;
    let mut at = 5;
    let (mut second, mut micros) = (0, 0);
    if b.get(at) == Some(&b':') {
        second = two(at + 1).ok_or_else(bad)?;
        at += 3;
        if b.get(at) == Some(&b'.') {
            at += 1;
            let digits = b[at..].iter().take_while(|c| c.is_ascii_digit()).count();
            if !(1..=6).contains(&digits) {
                return Err(bad());
            }
            for k in 0..6 {
                let d = if k < digits {
                    i64::from(b[at + k] - b'0')
                } else {
                    0
                };
                micros = micros * 10 + d;
            }
            at += digits;
        }
    }
    if minute > 59 || second > 59 || hour > 24 {
        return Err(bad());
    }
    let local = ((hour * 60 + minute) * 60 + second) * 1_000_000 + micros;
    let east: i64 = match b.get(at) {
        Some(b'Z' | b'z') if at + 1 == b.len() => 0,
        Some(&sign @ (b'+' | b'-')) => {
            // ±HH, ±HH:MM, ±HH:MM:SS, or the same without colons.
            let start = at + 1;
            let n = b.len() - start;
            let colons = n > 2 && b[start + 2] == b':';
            let (count, step) = match (n, colons) {
                (2, _) => (1, 2),
                (5, true) => (2, 3),
                (8, true) => (3, 3),
                (4, false) => (2, 2),
                (6, false) => (3, 2),
                _ => return Err(bad()),
            };
            let mut secs = 0;
            for k in 0..count {
                let p = start + k * step;
                if colons && k > 0 && b[p - 1] != b':' {
                    return Err(bad());
                }
                let v = two(p).ok_or_else(bad)?;
                if k > 0 && v > 59 {
                    return Err(bad());
                }
                secs = secs * 60 + v;
            }
            secs *= [3600, 60, 1][count - 1];
            if sign == b'-' {
                -secs
            } else {
                secs
            }
        }
        _ => return Err(bad()),
    };
    if east.unsigned_abs() >= TZ_OFFSET_LIMIT.unsigned_abs().into() {
        return Err(PgError::out_of_range(format!(
            "{text:?}: the offset is outside PostgreSQL's ±15:59:59"
        )));
    }
    check_time(local).map_err(|_| PgError::out_of_range(format!("{text:?} is past 24:00:00")))?;
    Ok(TimeTz {
        micros: local,
        offset_west: -(east as i32),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timetz_text_parses_exactly_or_not_at_all() {
        let tz = |m: i64, w: i32| TimeTz {
            micros: m,
            offset_west: w,
        };
        let h = 3_600_000_000;
        for (text, want) in [
            ("12:00:00+05:00", tz(12 * h, -18_000)),
            ("12:00:00+05", tz(12 * h, -18_000)),
            ("12:00+05", tz(12 * h, -18_000)),
            ("12:00:00-03:30:15", tz(12 * h, 12_615)),
            ("12:00:00-033015", tz(12 * h, 12_615)),
            ("12:00:00+0530", tz(12 * h, -19_800)),
            ("00:00:00.5Z", tz(500_000, 0)),
            ("23:59:59.999999+15:59:59", tz(24 * h - 1, -57_599)),
            ("24:00:00-15:59:59", tz(24 * h, 57_599)),
            ("01:02:03.000001+00:00", tz(h + 123_000_001, 0)),
        ] {
            assert_eq!(parse_timetz(text).unwrap(), want, "{text}");
        }
        for text in [
            "",
            "12:00:00",
            "12:00:00 +05",
            "12:00:00+5",
            "12:00:00+05:",
            "12:00:00+05:0",
            "12:00:00+05:60",
            "12:00:00+05:00:00:00",
            "12:00:00+05:0000",
            "12:00:00.+05",
            "12:00:00.1234567+05",
            "12:60:00+05",
            "12:00:60+05",
            "1:00:00+05",
            "12:00:00UTC",
            "12:00:00+05 ",
            " 12:00:00+05",
            "12:00:00Zx",
            "12:00:00+0500:00",
            "١٢:00:00+05",
        ] {
            let e = parse_timetz(text).unwrap_err();
            assert_eq!(e.kind.name(), "invalid_value", "{text}");
        }
        for text in ["24:00:00.000001+00", "25:00:00+00", "12:00:00+16:00"] {
            assert!(parse_timetz(text).is_err(), "{text}");
        }
        assert_eq!(
            parse_timetz("12:00:00+16").unwrap_err().kind.name(),
            "out_of_range"
        );
    }

    #[test]
    fn months_count_as_psycopg_counts_them() {
        assert_eq!(months_as_days(0), 0);
        assert_eq!(months_as_days(1), 30);
        assert_eq!(months_as_days(12), 365);
        assert_eq!(months_as_days(13), 395);
        assert_eq!(months_as_days(-13), -395);
        assert_eq!(months_as_days(-1), -30);
        assert_eq!(
            months_as_days(i32::MIN),
            -(2_147_483_648 / 12 * 365 + 8 * 30)
        );
        assert_eq!(months_as_days(i32::MAX), 2_147_483_647 / 12 * 365 + 7 * 30);
    }

    #[test]
    fn calendar_fixed_points() {
        assert_eq!(ymd_to_days(2000, 1, 1), Some(0));
        assert_eq!(ymd_to_days(1999, 12, 31), Some(-1));
        assert_eq!(ymd_to_days(1970, 1, 1), Some(-10_957));
        assert_eq!(ymd_to_days(2024, 2, 29), Some(8825));
        assert_eq!(ymd_to_days(2023, 2, 29), None);
        assert_eq!(ymd_to_days(2000, 13, 1), None);
        assert_eq!(ymd_to_days(1900, 2, 29), None);
        assert_eq!(ymd_to_days(0, 2, 29), Some(-730_426));
        assert_eq!(ymd_to_days(-4713, 11, 24), Some(DATE_MIN_DAYS));
        assert_eq!(ymd_to_days(5_874_898, 1, 1), Some(DATE_END_DAYS));
        assert_eq!(days_to_ymd(DATE_END_DAYS - 1), (5_874_897, 12, 31));
        assert_eq!(days_to_ymd(-1), (1999, 12, 31));
        assert_eq!(days_to_ymd(8825), (2024, 2, 29));
    }

    #[test]
    fn calendar_round_trips() {
        let mut d = DATE_MIN_DAYS - 1000;
        while d < DATE_END_DAYS {
            let (y, m, dd) = days_to_ymd(d);
            assert_eq!(ymd_to_days(y, m, dd), Some(d), "{d}");
            d += 997;
        }
        for d in [i32::MIN, i32::MAX, 0, 59, 60, -36_524, -36_525, 146_097] {
            let (y, m, dd) = days_to_ymd(d);
            assert_eq!(ymd_to_days(y, m, dd), Some(d));
        }
    }

    #[test]
    fn micros_split_floors() {
        assert_eq!(split_micros(-1), (-1, USECS_PER_DAY - 1));
        assert_eq!(split_micros(USECS_PER_DAY), (1, 0));
        for v in [0, -1, i64::MIN, i64::MAX, TIMESTAMP_MIN, 123_456_789_012] {
            let (d, us) = split_micros(v);
            assert_eq!(join_micros(d, us), Some(v));
        }
        assert_eq!(join_micros(i32::MAX, 0), None);
        assert_eq!(join_micros(-2, USECS_PER_DAY), Some(-USECS_PER_DAY));
    }

    #[test]
    fn date_bytes() {
        let mut out = Vec::new();
        encode_date(&mut out, Date::Days(-1)).unwrap();
        encode_date(&mut out, Date::Infinity).unwrap();
        encode_date(&mut out, Date::NegInfinity).unwrap();
        assert_eq!(
            out,
            [0xff, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0x80, 0, 0, 0]
        );
        assert_eq!(decode_date(&out[..4]).unwrap(), Date::Days(-1));
        assert_eq!(decode_date(&out[4..8]).unwrap(), Date::Infinity);
        assert_eq!(decode_date(&out[8..]).unwrap(), Date::NegInfinity);
        assert!(encode_date(&mut out, Date::Days(DATE_END_DAYS)).is_err());
        assert!(decode_date(&(DATE_MIN_DAYS - 1).to_be_bytes()).is_err());
    }

    #[test]
    fn time_and_timetz_bytes() {
        let mut out = Vec::new();
        encode_time(&mut out, USECS_PER_DAY).unwrap();
        assert_eq!(out, [0, 0, 0, 0x14, 0x1d, 0xd7, 0x60, 0]);
        assert!(encode_time(&mut out, -1).is_err());
        assert!(decode_time(&(USECS_PER_DAY + 1).to_be_bytes()).is_err());
        out.clear();
        // 12:00 at UTC+01:00: PostgreSQL stores -3600.
        let t = TimeTz {
            micros: 43_200_000_000,
            offset_west: -3600,
        };
        encode_timetz(&mut out, t).unwrap();
        assert_eq!(
            out,
            [0, 0, 0, 0x0a, 0x0e, 0xeb, 0xb0, 0, 0xff, 0xff, 0xf1, 0xf0]
        );
        assert_eq!(decode_timetz(&out).unwrap(), t);
        let mut bad = out.clone();
        bad[8..].copy_from_slice(&TZ_OFFSET_LIMIT.to_be_bytes());
        assert_eq!(decode_timetz(&bad).unwrap_err().offset, Some(8));
    }

    #[test]
    fn timestamp_bytes() {
        let mut out = Vec::new();
        encode_timestamp(&mut out, Timestamp::Micros(1)).unwrap();
        encode_timestamp(&mut out, Timestamp::Infinity).unwrap();
        encode_timestamp(&mut out, Timestamp::NegInfinity).unwrap();
        assert_eq!(out[..8], [0, 0, 0, 0, 0, 0, 0, 1]);
        assert_eq!(out[8..16], i64::MAX.to_be_bytes());
        assert_eq!(out[16..], i64::MIN.to_be_bytes());
        assert_eq!(decode_timestamp(&out[8..16]).unwrap(), Timestamp::Infinity);
        assert_eq!(
            decode_timestamp(&out[16..]).unwrap(),
            Timestamp::NegInfinity
        );
        assert!(decode_timestamp(&TIMESTAMP_END.to_be_bytes()).is_err());
        assert!(decode_timestamp(&TIMESTAMP_MIN.to_be_bytes()).is_ok());
    }

    #[test]
    fn interval_field_order() {
        let iv = Interval {
            micros: 1,
            days: 2,
            months: -3,
        };
        let mut out = Vec::new();
        encode_interval(&mut out, iv);
        assert_eq!(
            out,
            [0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0xff, 0xff, 0xff, 0xfd]
        );
        assert_eq!(decode_interval(&out).unwrap(), iv);
        assert!(decode_interval(&out[1..]).is_err());
    }
}
