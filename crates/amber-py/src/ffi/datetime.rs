//! A date's, time's, datetime's or timedelta's fields read in place
//! through the datetime C API's macros (their `PyDateTime_*` layouts):
//! safely from a `Borrowed` whose type is checked (`date`, `datetime`,
//! `time`, `delta`), or from a raw pointer whose type the caller vouches for.

use pyo3::ffi;

use super::borrowed::Borrowed;
use crate::typeref::datetime_api;

/// A date's fields.
#[derive(Clone, Copy, Debug)]
pub struct Date {
    pub year: u16,
    pub month: u8,
    pub day: u8,
}

/// A time of day's fields (a time's, or a datetime's past its date).
#[derive(Clone, Copy, Debug)]
pub struct Time {
    pub hour: u8,
    pub minute: u8,
    pub second: u8,
    pub microsecond: u32,
    pub fold: bool,
}

/// A timedelta's normalised fields.
#[derive(Clone, Copy, Debug)]
pub struct Delta {
    pub days: i32,
    pub seconds: i32,
    pub microseconds: i32,
}

impl Delta {
    pub fn total_microseconds(self) -> i64 {
        self.days as i64 * 86_400_000_000
            + self.seconds as i64 * 1_000_000
            + self.microseconds as i64
    }
}

/// The date of a `date` or `datetime`.
///
/// # Safety
/// `o` is a live instance of `datetime.date` (a datetime is one).
#[inline]
pub unsafe fn date_of(o: *mut ffi::PyObject) -> Date {
    // SAFETY: the caller guarantees a live date, whose fields the macros read.
    unsafe {
        Date {
            year: ffi::PyDateTime_GET_YEAR(o) as u16,
            month: ffi::PyDateTime_GET_MONTH(o) as u8,
            day: ffi::PyDateTime_GET_DAY(o) as u8,
        }
    }
}

/// The time fields of a `datetime` and its tzinfo (borrowed; None is
/// `None`).
///
/// # Safety
/// `o` is a live instance of `datetime.datetime`.
#[inline]
pub unsafe fn datetime_time_of(o: *mut ffi::PyObject) -> (Time, Option<*mut ffi::PyObject>) {
    // SAFETY: the caller guarantees a live datetime, whose fields the macros
    // read; its tzinfo is borrowed from it.
    unsafe {
        let t = Time {
            hour: ffi::PyDateTime_DATE_GET_HOUR(o) as u8,
            minute: ffi::PyDateTime_DATE_GET_MINUTE(o) as u8,
            second: ffi::PyDateTime_DATE_GET_SECOND(o) as u8,
            microsecond: ffi::PyDateTime_DATE_GET_MICROSECOND(o) as u32,
            fold: ffi::PyDateTime_DATE_GET_FOLD(o) != 0,
        };
        let tz = ffi::PyDateTime_DATE_GET_TZINFO(o);
        (t, (tz != ffi::Py_None()).then_some(tz))
    }
}

/// The fields of a `time` and its tzinfo (borrowed; None is `None`).
///
/// # Safety
/// `o` is a live instance of `datetime.time`.
#[inline]
pub unsafe fn time_of(o: *mut ffi::PyObject) -> (Time, Option<*mut ffi::PyObject>) {
    // SAFETY: the caller guarantees a live time, whose fields the macros
    // read; its tzinfo is borrowed from it.
    unsafe {
        let t = Time {
            hour: ffi::PyDateTime_TIME_GET_HOUR(o) as u8,
            minute: ffi::PyDateTime_TIME_GET_MINUTE(o) as u8,
            second: ffi::PyDateTime_TIME_GET_SECOND(o) as u8,
            microsecond: ffi::PyDateTime_TIME_GET_MICROSECOND(o) as u32,
            fold: ffi::PyDateTime_TIME_GET_FOLD(o) != 0,
        };
        let tz = ffi::PyDateTime_TIME_GET_TZINFO(o);
        (t, (tz != ffi::Py_None()).then_some(tz))
    }
}

/// The fields of a `timedelta`.
///
/// # Safety
/// `o` is a live instance of `datetime.timedelta`.
#[inline]
pub unsafe fn delta_of(o: *mut ffi::PyObject) -> Delta {
    // SAFETY: the caller guarantees a live timedelta, whose fields the
    // macros read.
    unsafe {
        Delta {
            days: ffi::PyDateTime_DELTA_GET_DAYS(o),
            seconds: ffi::PyDateTime_DELTA_GET_SECONDS(o),
            microseconds: ffi::PyDateTime_DELTA_GET_MICROSECONDS(o),
        }
    }
}

/// Whether `o` is an instance of `t` (or of a subclass).
#[inline]
fn instance(o: Borrowed<'_>, t: *mut ffi::PyTypeObject) -> bool {
    // SAFETY: `o` is live (the `Borrowed`'s invariant) and `t` is one of the
    // datetime module's static type objects.
    unsafe { ffi::PyObject_TypeCheck(o.ptr(), t) != 0 }
}

/// The date of a `date` or `datetime` (or subclass); `None` for anything
/// else.
#[inline]
pub fn date(o: Borrowed<'_>) -> Option<Date> {
    // SAFETY: a live date, checked just before.
    instance(o, datetime_api().DateType).then(|| unsafe { date_of(o.ptr()) })
}

/// The date, time and tzinfo (`None` for none) of a `datetime` (or
/// subclass); the tzinfo is held by the datetime, which never changes.
#[inline]
pub fn datetime<'a>(o: Borrowed<'a>) -> Option<(Date, Time, Option<Borrowed<'a>>)> {
    if !instance(o, datetime_api().DateTimeType) {
        return None;
    }
    // SAFETY: a live datetime, checked just above.
    let (d, (t, tz)) = unsafe { (date_of(o.ptr()), datetime_time_of(o.ptr())) };
    // SAFETY: the tzinfo is held by the datetime for as long as it lives.
    Some((d, t, tz.map(|p| unsafe { Borrowed::from_ptr(p) })))
}

/// The fields and tzinfo (`None` for none) of a `time` (or subclass); the
/// tzinfo is held by the time, which never changes.
#[inline]
pub fn time<'a>(o: Borrowed<'a>) -> Option<(Time, Option<Borrowed<'a>>)> {
    if !instance(o, datetime_api().TimeType) {
        return None;
    }
    // SAFETY: a live time, checked just above.
    let (t, tz) = unsafe { time_of(o.ptr()) };
    // SAFETY: the tzinfo is held by the time for as long as it lives.
    Some((t, tz.map(|p| unsafe { Borrowed::from_ptr(p) })))
}

/// The fields of a `timedelta` (or subclass); `None` for anything else.
#[inline]
pub fn delta(o: Borrowed<'_>) -> Option<Delta> {
    // SAFETY: a live timedelta, checked just before.
    instance(o, datetime_api().DeltaType).then(|| unsafe { delta_of(o.ptr()) })
}
