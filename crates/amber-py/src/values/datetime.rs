//! `datetime` values: dates, times, datetimes and timedeltas as their
//! fields (read in place by `ffi::datetime`, made through the C API's
//! constructors), fixed-offset timezones as microseconds and a name, and
//! zoneinfo keys checked before `ZoneInfo` may import anything.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDelta, PyFrozenSet, PyString, PyTuple};

use crate::typeref::{self, datetime_api};

pub use crate::ffi::datetime::{Date, Delta, Time};

/// A fixed-offset `datetime.timezone` as pickle sees it: its offset in
/// microseconds and its name, if it was given one.
pub fn fixed_offset<'py>(tz: &Bound<'py, PyAny>) -> PyResult<(i64, Option<Bound<'py, PyAny>>)> {
    let args = tz.call_method0(intern!(tz.py(), "__getinitargs__"))?;
    let args = args.cast::<PyTuple>()?;
    let offset = args.get_item(0)?;
    let offset = offset.cast::<PyDelta>()?;
    let us = crate::ffi::datetime::delta(offset.as_any().into())
        .ok_or_else(|| PyTypeError::new_err("a timezone's offset is not a timedelta"))?
        .total_microseconds();
    Ok((us, args.get_item(1).ok()))
}

/// Whether `tz` may be a tzinfo argument.
fn check_tzinfo(tz: &Bound<'_, PyAny>) -> PyResult<()> {
    // SAFETY: `tz` is alive; the type check reads its type only.
    let ok = unsafe { ffi::PyObject_TypeCheck(tz.as_ptr(), datetime_api().TZInfoType) } != 0;
    if ok {
        Ok(())
    } else {
        Err(PyValueError::new_err("tzinfo is not a tzinfo instance"))
    }
}

/// The tzinfo pointer for a constructor: borrowed from `tz`, or None.
fn tz_ptr(tz: Option<&Bound<'_, PyAny>>) -> PyResult<*mut ffi::PyObject> {
    match tz {
        // SAFETY: Py_None returns the None singleton, which is immortal.
        None => Ok(unsafe { ffi::Py_None() }),
        Some(tz) => {
            check_tzinfo(tz)?;
            Ok(tz.as_ptr())
        }
    }
}

/// `datetime.date(year, month, day)`; out-of-range fields raise ValueError.
pub fn new_date(py: Python<'_>, d: Date) -> PyResult<Bound<'_, PyAny>> {
    let api = datetime_api();
    // SAFETY: the constructor checks its arguments and returns a new
    // reference or NULL with an exception set.
    unsafe {
        let p = (api.Date_FromDate)(d.year as i32, d.month as i32, d.day as i32, api.DateType);
        Bound::from_owned_ptr_or_err(py, p)
    }
}

/// `datetime.time(...)`; out-of-range fields raise ValueError.
pub fn new_time<'py>(
    py: Python<'py>,
    t: Time,
    tz: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let api = datetime_api();
    let tz = tz_ptr(tz)?;
    // SAFETY: the constructor checks its arguments (`tz` is None or a live
    // tzinfo, borrowed for the call) and returns a new reference or NULL
    // with an exception set.
    unsafe {
        let p = (api.Time_FromTimeAndFold)(
            t.hour as i32,
            t.minute as i32,
            t.second as i32,
            t.microsecond as i32,
            tz,
            t.fold as i32,
            api.TimeType,
        );
        Bound::from_owned_ptr_or_err(py, p)
    }
}

/// `datetime.datetime(...)`; out-of-range fields raise ValueError.
pub fn new_datetime<'py>(
    py: Python<'py>,
    d: Date,
    t: Time,
    tz: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let api = datetime_api();
    let tz = tz_ptr(tz)?;
    if t.microsecond > 999_999 {
        return Err(PyValueError::new_err("microsecond must be in 0..999999"));
    }
    // SAFETY: as in `new_time`.
    unsafe {
        let p = (api.DateTime_FromDateAndTimeAndFold)(
            d.year as i32,
            d.month as i32,
            d.day as i32,
            t.hour as i32,
            t.minute as i32,
            t.second as i32,
            t.microsecond as i32,
            tz,
            t.fold as i32,
            api.DateTimeType,
        );
        Bound::from_owned_ptr_or_err(py, p)
    }
}

/// `datetime.timedelta` from normalised fields, which are checked first:
/// the C constructor trusts them.
pub fn new_delta(py: Python<'_>, d: Delta) -> PyResult<Bound<'_, PyAny>> {
    let Delta {
        days,
        seconds,
        microseconds,
    } = d;
    if !(0..86_400).contains(&seconds)
        || !(0..1_000_000).contains(&microseconds)
        || days.unsigned_abs() > 999_999_999
    {
        return Err(PyValueError::new_err(format!(
            "timedelta fields out of range: days={days} seconds={seconds} \
             microseconds={microseconds}"
        )));
    }
    let api = datetime_api();
    // SAFETY: the fields are in range (checked above); the constructor
    // returns a new reference or NULL with an exception set.
    unsafe {
        let p = (api.Delta_FromDelta)(days, seconds, microseconds, 0, api.DeltaType);
        Bound::from_owned_ptr_or_err(py, p)
    }
}

/// `datetime.timezone.utc`.
pub fn utc(py: Python<'_>) -> Bound<'_, PyAny> {
    // SAFETY: the C API's UTC singleton lives as long as the datetime
    // module; the Bound takes a reference of its own.
    unsafe { Bound::from_borrowed_ptr(py, datetime_api().TimeZone_UTC) }
}

/// `datetime.timezone(timedelta(microseconds=offset_us), name)`; `name`
/// must be None or a str, and the offset within a day (else ValueError).
pub fn new_fixed_timezone<'py>(
    py: Python<'py>,
    offset_us: i64,
    name: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let delta = typeref::timedelta(py)?.call((0, 0, offset_us), None)?;
    let timezone = typeref::timezone(py)?;
    if name.is_none() {
        timezone.call1((delta,))
    } else if name.is_exact_instance_of::<PyString>() {
        timezone.call1((delta, name))
    } else {
        Err(PyValueError::new_err("timezone name must be None or a str"))
    }
}

/// `zoneinfo.ZoneInfo(key)` for a key that it can load without importing
/// a module that the key names; `None` for a key the zone database does
/// not have.
pub fn new_zone<'py>(
    py: Python<'py>,
    key: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    if !key.is_exact_instance_of::<PyString>() {
        return Err(PyValueError::new_err("zone key must be a str"));
    }
    if !zone_key_known(py, key)? {
        return Ok(None);
    }
    typeref::zoneinfo(py)?.call1((key,)).map(Some)
}

/// The key of a `ZoneInfo`, or None for one made from a file.
pub fn zone_key<'py>(zone: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    zone.getattr(intern!(zone.py(), "key"))
}

/// Whether `ZoneInfo(key)` can load `key` without importing a module that
/// the key names. `ZoneInfo` reads the key's file from the system's zone
/// directories (`zoneinfo.TZPATH`) and, failing that, imports submodules
/// of the `tzdata` package named after the key's parts: so a key must be
/// found in those directories (by the function `ZoneInfo` uses, which also
/// refuses keys that leave them) or be one of the zones `tzdata` lists
/// (`zoneinfo.available_timezones()`, read once).
fn zone_key_known(py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
    static FIND: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    static KEYS: PyOnceLock<Py<PyFrozenSet>> = PyOnceLock::new();
    let find = FIND.get_or_try_init(py, || {
        Ok::<_, PyErr>(
            py.import("zoneinfo._tzpath")?
                .getattr("find_tzfile")?
                .unbind(),
        )
    })?;
    if !find.bind(py).call1((key,))?.is_none() {
        return Ok(true);
    }
    let keys = KEYS.get_or_try_init(py, || {
        let all = py.import("zoneinfo")?.call_method0("available_timezones")?;
        let all = all.try_iter()?.collect::<PyResult<Vec<_>>>()?;
        Ok::<_, PyErr>(PyFrozenSet::new(py, all)?.unbind())
    })?;
    keys.bind(py).contains(key)
}
