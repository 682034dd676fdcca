//! PostgreSQL values (send format) to Python: one object per value for
//! rows, or Arrow column buffers for columnar results.
//!
//! What each type becomes (the guide's table, `docs/pg.md`):
//! - numbers: `bool`, `int`, `float` (NaN and infinities kept), numeric as
//!   `Decimal` (NaN and ±Infinity too);
//! - text types as `str`, decoded from the connection's client encoding
//!   (on SQL_ASCII as `bytes`, as psycopg reads them); `"char"` as a
//!   one-character `str` (its byte in the client encoding; a byte that is no
//!   character there in PostgreSQL's text form `\ooo`); bytea as `bytes`;
//!   json and jsonb parsed with `json.loads`; uuid as `UUID`;
//! - date, time, timestamp as `date`, `time`, naive `datetime`; timestamptz
//!   as a `datetime` in UTC; timetz as a `time` with a fixed-offset zone;
//!   PostgreSQL's `infinity` and `-infinity` as `date.max`/`date.min` and
//!   `datetime.max`/`datetime.min` (in UTC for timestamptz); other values
//!   outside Python's years 1..9999 raise;
//! - interval as `timedelta`, its months counted as psycopg counts them
//!   (365 days a year, 30 a month);
//! - inet as `ip_interface` (or `ip_address` for a full-length prefix),
//!   cidr as `ip_network`;
//! - arrays as nested lists (lower bounds are not kept); a json or jsonb
//!   array as a list of JSON values, and one of more dimensions refused (its
//!   nested lists would be JSON arrays when written back).
//!
//! In Arrow: integers, floats and bool as themselves, oid as uint32, date
//! as date32, time as time64[us], timestamp(tz) as timestamp[us] (UTC),
//! interval as duration[us], uuid as fixed_size_binary(16), bytea as
//! large_binary, and text, json, jsonb and numeric as large_string in
//! PostgreSQL's text form; infinities as the type's largest and smallest
//! values. inet, cidr and timetz, which Arrow has no type for, as the
//! Python objects above.

use std::collections::HashMap;

use amber_core::pg::types::array::decode_array;
use amber_core::pg::types::datetime::{self as dt, Date, Timestamp};
use amber_core::pg::types::net::{decode_inet, Inet};
use amber_core::pg::types::numeric::decode_numeric;
use amber_core::pg::types::{numbers as n, text as t};
use amber_core::pg::{ClientEncoding, PgError, PgType, Scalar};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};

use crate::values::datetime::{self as vdt, Date as PyDate, Delta, Time as PyTime};
use crate::values::{decimal, uuid};

use super::column::Column;
use super::encoding::TextCodec;
use super::fail::Fail;

pub type Got<T> = Result<T, Fail>;

fn out_of_range(what: String) -> Fail {
    Fail::Data(PgError::out_of_range(what))
}

/// Functions and objects found once per read, and the connection's text
/// encoding.
pub struct Ctx {
    json_loads: Option<Py<PyAny>>,
    ip: Option<[Py<PyAny>; 3]>,
    zones: HashMap<i32, Py<PyAny>>,
    pub codec: TextCodec,
}

impl Ctx {
    pub fn new(codec: TextCodec) -> Ctx {
        Ctx {
            json_loads: None,
            ip: None,
            zones: HashMap::new(),
            codec,
        }
    }

    fn json_loads<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        if self.json_loads.is_none() {
            self.json_loads = Some(py.import("json")?.getattr("loads")?.unbind());
        }
        Ok(self
            .json_loads
            .as_ref()
            .map(|f| f.bind(py).clone())
            .unwrap_or_else(|| py.None().into_bound(py)))
    }

    /// `ipaddress.ip_address`, `ip_interface`, `ip_network`.
    fn ip<'py>(&mut self, py: Python<'py>, which: usize) -> PyResult<Bound<'py, PyAny>> {
        if self.ip.is_none() {
            let m = py.import("ipaddress")?;
            self.ip = Some([
                m.getattr("ip_address")?.unbind(),
                m.getattr("ip_interface")?.unbind(),
                m.getattr("ip_network")?.unbind(),
            ]);
        }
        match &self.ip {
            Some(f) => Ok(f[which].bind(py).clone()),
            None => Ok(py.None().into_bound(py)),
        }
    }

    fn zone<'py>(&mut self, py: Python<'py>, offset_east: i32) -> PyResult<Bound<'py, PyAny>> {
        if let Some(z) = self.zones.get(&offset_east) {
            return Ok(z.bind(py).clone());
        }
        let z = if offset_east == 0 {
            vdt::utc(py)
        } else {
            vdt::new_fixed_timezone(
                py,
                i64::from(offset_east) * 1_000_000,
                &py.None().into_bound(py),
            )?
        };
        self.zones.insert(offset_east, z.clone().unbind());
        Ok(z)
    }
}

/// A new reference from a C constructor, or the Python error it set.
fn owned<'py>(py: Python<'py>, p: *mut ffi::PyObject) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: `p` is a new reference or NULL with an exception set, as the
    // C constructors used here return.
    unsafe { Bound::from_owned_ptr_or_err(py, p) }
}

fn new_str<'py>(py: Python<'py>, s: &str) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: the GIL is held (`py`); `ascii` is checked here.
    owned(py, unsafe { crate::ffi::text::new_str(s, s.is_ascii()) })
}

const PY_MIN_YEAR: i32 = 1;
const PY_MAX_YEAR: i32 = 9999;

/// The Python date of a day count since 2000-01-01.
fn py_date_fields(days: i32) -> Option<PyDate> {
    let (y, m, d) = dt::days_to_ymd(days);
    (PY_MIN_YEAR..=PY_MAX_YEAR).contains(&y).then_some(PyDate {
        year: y as u16,
        month: m as u8,
        day: d as u8,
    })
}

fn py_time_fields(micros: i64) -> PyTime {
    let secs = micros / 1_000_000;
    PyTime {
        hour: (secs / 3600) as u8,
        minute: (secs / 60 % 60) as u8,
        second: (secs % 60) as u8,
        microsecond: (micros % 1_000_000) as u32,
        fold: false,
    }
}

fn date_max() -> PyDate {
    PyDate {
        year: 9999,
        month: 12,
        day: 31,
    }
}

fn date_min() -> PyDate {
    PyDate {
        year: 1,
        month: 1,
        day: 1,
    }
}

fn new_date<'py>(py: Python<'py>, d: Date) -> Got<Bound<'py, PyAny>> {
    let fields = match d {
        Date::Infinity => date_max(),
        Date::NegInfinity => date_min(),
        Date::Days(n) => py_date_fields(n).ok_or_else(|| {
            let (y, m, d) = dt::days_to_ymd(n);
            out_of_range(format!(
                "date {y:04}-{m:02}-{d:02} is outside Python's years 1 to 9999"
            ))
        })?,
    };
    Ok(vdt::new_date(py, fields)?)
}

fn new_timestamp<'py>(
    py: Python<'py>,
    ts: Timestamp,
    tz: Option<&Bound<'py, PyAny>>,
) -> Got<Bound<'py, PyAny>> {
    let (d, t) = match ts {
        Timestamp::Infinity => (
            date_max(),
            PyTime {
                hour: 23,
                minute: 59,
                second: 59,
                microsecond: 999_999,
                fold: false,
            },
        ),
        Timestamp::NegInfinity => (date_min(), py_time_fields(0)),
        Timestamp::Micros(us) => {
            let (days, of_day) = dt::split_micros(us);
            let d = py_date_fields(days).ok_or_else(|| {
                let (y, m, d) = dt::days_to_ymd(days);
                out_of_range(format!(
                    "timestamp on {y:04}-{m:02}-{d:02} is outside Python's years 1 to 9999"
                ))
            })?;
            (d, py_time_fields(of_day))
        }
    };
    Ok(vdt::new_datetime(py, d, t, tz)?)
}

/// An interval as a timedelta, its months counted as psycopg's loader
/// counts them (365 days a year, 30 a month).
fn new_interval<'py>(py: Python<'py>, b: &[u8]) -> Got<Bound<'py, PyAny>> {
    let iv = dt::decode_interval(b)?;
    let days = i64::from(iv.days)
        + dt::months_as_days(iv.months)
        + iv.micros.div_euclid(dt::USECS_PER_DAY);
    let rest = iv.micros.rem_euclid(dt::USECS_PER_DAY);
    let days = i32::try_from(days)
        .ok()
        .filter(|d| d.unsigned_abs() <= 999_999_999)
        .ok_or_else(|| {
            out_of_range(format!(
                "interval of {days} days is beyond timedelta's range"
            ))
        })?;
    Ok(vdt::new_delta(
        py,
        Delta {
            days,
            seconds: (rest / 1_000_000) as i32,
            microseconds: (rest % 1_000_000) as i32,
        },
    )?)
}

/// A cidr's or inet's text: cidr always shows its prefix.
pub fn inet_text(v: &Inet, is_cidr: bool) -> String {
    if is_cidr || !v.is_host() {
        format!("{}/{}", v.addr, v.bits)
    } else {
        v.addr.to_string()
    }
}

/// Whether the type's Python objects are immutable (json and jsonb give
/// dicts and lists, which are not), so that one may stand for equal values.
pub fn immutable(s: Scalar) -> bool {
    !matches!(s, Scalar::Json | Scalar::Jsonb)
}

/// One scalar value as a Python object.
pub fn scalar<'py>(py: Python<'py>, s: Scalar, b: &[u8], ctx: &mut Ctx) -> Got<Bound<'py, PyAny>> {
    Ok(match s {
        Scalar::Bool => pyo3::types::PyBool::new(py, n::decode_bool(b)?)
            .to_owned()
            .into_any(),
        Scalar::Int2 => n::decode_int2(b)?.into_pyobject(py)?.into_any(),
        Scalar::Int4 => n::decode_int4(b)?.into_pyobject(py)?.into_any(),
        Scalar::Int8 => n::decode_int8(b)?.into_pyobject(py)?.into_any(),
        Scalar::Oid => n::decode_oid(b)?.into_pyobject(py)?.into_any(),
        Scalar::Float4 => f64::from(n::decode_float4(b)?)
            .into_pyobject(py)?
            .into_any(),
        Scalar::Float8 => n::decode_float8(b)?.into_pyobject(py)?.into_any(),
        Scalar::Numeric => decimal::new_decimal(py, &decode_numeric(b)?.to_string())?,
        Scalar::Text | Scalar::Varchar | Scalar::Bpchar => match ctx.codec.enc {
            ClientEncoding::Utf8 => new_str(py, t::decode_text(b)?)?,
            _ => ctx.codec.read(py, b)?,
        },
        Scalar::Name => ctx.codec.read(py, t::decode_name_bytes(b)?)?,
        Scalar::Char => match char_value(ctx, py, t::decode_char(b)?) {
            CharValue::Byte(c) => PyBytes::new(py, &[c]).into_any(),
            CharValue::Text(s) => PyString::new(py, &s).into_any(),
        },
        Scalar::Bytea => PyBytes::new(py, t::decode_bytea(b)).into_any(),
        Scalar::Json => {
            let text = ctx.codec.read(py, b)?;
            ctx.json_loads(py)?.call1((text,))?
        }
        Scalar::Jsonb => {
            let text = ctx
                .codec
                .read(py, t::decode_jsonb_bytes(b)?)
                .map_err(|f| rebase(f, 1))?;
            ctx.json_loads(py)?.call1((text,))?
        }
        Scalar::Uuid => uuid::new_uuid(py, &t::decode_uuid(b)?, uuid::Safety::Unknown)?,
        Scalar::Date => new_date(py, dt::decode_date(b)?)?,
        Scalar::Time => {
            let us = dt::decode_time(b)?;
            if us >= dt::USECS_PER_DAY {
                return Err(out_of_range("time 24:00:00 has no Python time".into()));
            }
            vdt::new_time(py, py_time_fields(us), None)?
        }
        Scalar::TimeTz => {
            let v = dt::decode_timetz(b)?;
            if v.micros >= dt::USECS_PER_DAY {
                return Err(out_of_range("time 24:00:00 has no Python time".into()));
            }
            let zone = ctx.zone(py, -v.offset_west)?;
            vdt::new_time(py, py_time_fields(v.micros), Some(&zone))?
        }
        Scalar::Timestamp => new_timestamp(py, dt::decode_timestamp(b)?, None)?,
        Scalar::TimestampTz => new_timestamp(py, dt::decode_timestamp(b)?, Some(&vdt::utc(py)))?,
        Scalar::Interval => new_interval(py, b)?,
        Scalar::Inet | Scalar::Cidr => {
            let cidr = s == Scalar::Cidr;
            let v = decode_inet(b, cidr)?;
            let which = if cidr {
                2
            } else if v.is_host() {
                0
            } else {
                1
            };
            ctx.ip(py, which)?.call1((inet_text(&v, cidr),))?
        }
    })
}

fn rebase(f: Fail, by: u64) -> Fail {
    match f {
        Fail::Data(err) => Fail::Data(err.rebase(by)),
        other => other,
    }
}

/// What a `"char"` byte reads as.
pub enum CharValue {
    /// On SQL_ASCII: the byte, as psycopg reads it.
    Byte(u8),
    /// The byte's character in the client encoding (0 is `'\x00'`, as
    /// psycopg reads it), or PostgreSQL's text form `\ooo` for a byte that
    /// is no character there (psycopg's binary loader raises; its text
    /// loader gives this form; both are written back as the byte).
    Text(String),
}

pub fn char_value(ctx: &Ctx, py: Python<'_>, c: u8) -> CharValue {
    if ctx.codec.enc == ClientEncoding::SqlAscii {
        return CharValue::Byte(c);
    }
    CharValue::Text(
        ctx.codec
            .char_of(py, c)
            .unwrap_or_else(|| t::char_octal(c).iter().map(|&x| char::from(x)).collect()),
    )
}

/// An array value as nested lists of its elements: for json and jsonb, of
/// one dimension only (see the module's notes).
fn array<'py>(py: Python<'py>, elem: Scalar, b: &[u8], ctx: &mut Ctx) -> Got<Bound<'py, PyAny>> {
    let a = decode_array(b, Some(elem.oid()))?;
    if matches!(elem, Scalar::Json | Scalar::Jsonb) && a.dims.len() > 1 {
        return Err(Fail::Data(PgError::unsupported(format!(
            "a {}-dimensional {}[] has no exact Python form (a JSON value's own lists would be \
             taken for its dimensions when written back): select it as one dimension or as {}",
            a.dims.len(),
            elem.name(),
            elem.name()
        ))));
    }
    elements(py, &a, |v, ctx| scalar(py, elem, v, ctx), ctx)
}

/// An array's elements, each read by `read`, in nested lists.
fn elements<'py>(
    py: Python<'py>,
    a: &amber_core::pg::types::array::Array<'_>,
    mut read: impl FnMut(&[u8], &mut Ctx) -> Got<Bound<'py, PyAny>>,
    ctx: &mut Ctx,
) -> Got<Bound<'py, PyAny>> {
    let mut items = Vec::with_capacity(a.elements.len());
    for e in &a.elements {
        items.push(match e.value {
            None => py.None().into_bound(py),
            Some(v) => read(v, ctx).map_err(|f| rebase(f, e.offset as u64))?,
        });
    }
    if a.dims.is_empty() {
        return Ok(PyList::empty(py).into_any());
    }
    // Group the flat elements into nested lists, innermost dimension first.
    let mut level: Vec<Bound<'py, PyAny>> = items;
    for d in a.dims.iter().skip(1).rev() {
        let len = d.len.max(1) as usize;
        let mut next = Vec::with_capacity(level.len() / len);
        let mut it = level.into_iter();
        loop {
            let chunk: Vec<_> = it.by_ref().take(len).collect();
            if chunk.is_empty() {
                break;
            }
            next.push(PyList::new(py, chunk)?.into_any());
        }
        level = next;
    }
    Ok(PyList::new(py, level)?.into_any())
}

/// One value of a column as a Python object.
pub fn value<'py>(
    py: Python<'py>,
    col: &Column,
    b: &[u8],
    ctx: &mut Ctx,
) -> Got<Bound<'py, PyAny>> {
    match col {
        Column::Native(PgType::Scalar(s)) => scalar(py, *s, b, ctx),
        Column::Native(PgType::Array(s)) => array(py, *s, b, ctx),
        Column::Adapter(load) => Ok(load.bind(py).call1((PyBytes::new(py, b),))?),
        Column::Amber => Ok(crate::codec::loads_slice(py, b)?),
        Column::AmberArray => {
            let a = decode_array(b, Some(Scalar::Bytea.oid()))?;
            elements(py, &a, |v, _| Ok(crate::codec::loads_slice(py, v)?), ctx)
        }
    }
}

/// A tuple of `n` items, to fill with [`set_item`].
pub fn new_tuple(py: Python<'_>, n: usize) -> PyResult<Bound<'_, PyTuple>> {
    // SAFETY: PyTuple_New returns a new tuple of NULL slots (each filled
    // with `set_item` before the tuple reaches Python code) or NULL.
    let t = owned(py, unsafe { ffi::PyTuple_New(n as ffi::Py_ssize_t) })?;
    Ok(t.cast_into::<PyTuple>()?)
}

/// Put `v` in slot `i` of a tuple from [`new_tuple`].
pub fn set_item(t: &Bound<'_, PyTuple>, i: usize, v: Bound<'_, PyAny>) {
    // SAFETY: `t` is a fresh tuple no Python code has seen, `i` is within
    // its size, and the slot is empty; SET_ITEM steals `v`'s reference.
    unsafe { crate::ffi::seq::tuple_fill(t.as_ptr(), i, v.into_ptr()) }
}

/// The `None` singleton, as a new reference for a tuple slot.
pub fn none(py: Python<'_>) -> Bound<'_, PyAny> {
    py.None().into_bound(py)
}
