//! Python values to PostgreSQL's send format, by the column's type.
//!
//! What each type takes (the guide's table, `docs/pg.md`):
//! - bool: `bool` (and NumPy's); integers: `int` and NumPy integers, and
//!   any other number whose value is an integer (floats, `Decimal`,
//!   `Fraction`), exactly (by its integer ratio, never through a float);
//!   floats: `int`, `float`, anything with `__float__` (Decimal, NumPy) but
//!   text, a finite value beyond the type's range refused; numeric:
//!   `Decimal`, `int`, `float`, NumPy numbers (exactly, by their text: NaN
//!   and infinities too);
//! - text types: `str`, in the connection's client encoding (a character it
//!   lacks is refused; on SQL_ASCII a `str` goes as UTF-8 and `bytes` as
//!   they are); `"char"`: a `str` of one character that is one byte in the
//!   client encoding, `''` (the zero byte), PostgreSQL's text form `\ooo`,
//!   or one byte; bytea: any bytes-like object; json and jsonb: any value
//!   `json.dumps` takes (a `str` becomes a JSON string); uuid: `UUID` or its
//!   text;
//! - date: `date`; time: a naive `time`; timetz: a `time` with a zone;
//!   timestamp: a naive `datetime`; timestamptz: an aware `datetime` (a naive
//!   one is read as UTC, as psycopg's binary COPY does); `date.max`,
//!   `date.min`, `datetime.max` and `datetime.min` are written as
//!   PostgreSQL's `infinity` and `-infinity`;
//! - interval: `timedelta`; inet and cidr: `ipaddress` objects or text;
//! - arrays: lists or tuples (nested for more dimensions) or NumPy arrays;
//!   for json and jsonb one dimension, whose items are JSON values (a list
//!   item is a JSON array);
//! - `None` is NULL everywhere.

use amber_core::pg::types::array::{ArrayDim, ArrayEncoder, MAXDIM};
use amber_core::pg::types::datetime::{self as dt, Date, Interval, TimeTz, Timestamp};
use amber_core::pg::types::net::{encode_inet, Inet};
use amber_core::pg::types::numeric::{encode_numeric_value, Numeric};
use amber_core::pg::types::{numbers as n, text as t};
use amber_core::pg::{PgError, PgType, Scalar};
use pyo3::exceptions::{PyOverflowError, PyValueError};
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyBytes, PyDate, PyDateTime, PyDelta, PyFloat, PyInt, PyList, PyString, PyTime,
    PyTuple, PyTzInfoAccess,
};

use crate::ffi::buffer::InputBuffer;
use crate::ffi::datetime as fields;
use crate::values::datetime as vdt;

use super::column::Column;
use super::encoding::TextCodec;
use super::fail::Fail;

pub type Put = Result<(), Fail>;

/// Objects found once per COPY, and the connection's text encoding.
#[derive(Default)]
pub struct Ctx {
    json_dumps: Option<Py<PyAny>>,
    /// The last fixed-offset zone seen and its offset in microseconds.
    last_zone: Option<(usize, i64)>,
    pub codec: TextCodec,
}

impl Ctx {
    pub fn new(codec: TextCodec) -> Ctx {
        Ctx {
            codec,
            ..Ctx::default()
        }
    }

    fn json_dumps<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let f = match &self.json_dumps {
            Some(f) => f.bind(py).clone(),
            None => {
                let f = py.import("json")?.getattr("dumps")?;
                self.json_dumps = Some(f.clone().unbind());
                f
            }
        };
        Ok(f)
    }
}

fn oor(msg: String) -> Fail {
    Fail::Data(PgError::out_of_range(msg))
}

fn invalid(msg: String) -> Fail {
    Fail::Data(PgError::invalid_value(msg))
}

/// Whether `o` is NumPy's bool scalar (checked by type name, so NumPy need
/// not be imported).
fn is_numpy_bool(o: &Bound<'_, PyAny>) -> bool {
    let ty = o.get_type();
    ty.fully_qualified_name()
        .map(|n| n == "numpy.bool" || n == "numpy.bool_")
        .unwrap_or(false)
}

fn is_from_module(o: &Bound<'_, PyAny>, module: &str) -> bool {
    o.get_type()
        .module()
        .map(|m| m.to_cow().map(|m| m == module).unwrap_or(false))
        .unwrap_or(false)
}

/// Whether `o` is pandas' or NumPy's marker of a missing value (`pd.NA`,
/// `pd.NaT`, a NaT datetime64 or timedelta64), written as NULL where the
/// column's type does not take it.
pub fn is_missing(o: &Bound<'_, PyAny>) -> bool {
    let ty = o.get_type();
    let (Ok(name), Ok(module)) = (ty.name(), ty.module()) else {
        return false;
    };
    let (Ok(name), Ok(module)) = (name.to_cow(), module.to_cow()) else {
        return false;
    };
    match (module.split('.').next(), name.as_ref()) {
        (Some("pandas"), "NAType" | "NaTType") => true,
        (Some("numpy"), "datetime64" | "timedelta64") => o
            .str()
            .map(|s| s.to_cow().map(|t| t == "NaT").unwrap_or(false))
            .unwrap_or(false),
        _ => false,
    }
}

/// `repr(o)`, cut to 80 characters, for messages.
pub fn repr_of(o: &Bound<'_, PyAny>) -> String {
    let r = o
        .repr()
        .map(|r| r.to_string())
        .unwrap_or_else(|_| "the value".into());
    if r.chars().count() > 80 {
        format!("{}...", r.chars().take(77).collect::<String>())
    } else {
        r
    }
}

/// Floats at or beyond this magnitude fit no integer type amber writes.
const INT_LIMIT: f64 = 1.7e38;

/// An integer value for the integer type `ty`: `int` (not `bool`), an
/// object with `__index__` (NumPy integers), or any other number whose
/// value is an integer (a float, `Decimal`, `Fraction`, a NumPy float),
/// taken exactly from its integer ratio, never through a float.
fn integer(o: &Bound<'_, PyAny>, ty: &str) -> Result<i128, Fail> {
    if o.is_exact_instance_of::<PyInt>() {
        if let Ok(v) = o.extract::<i64>() {
            return Ok(i128::from(v));
        }
    }
    if o.is_instance_of::<PyBool>() || is_numpy_bool(o) {
        return Err(Fail::Mismatch);
    }
    let too_big = || oor(format!("{} is out of range for {ty}", repr_of(o)));
    let not_integer = || invalid(format!("{} is not an integer", repr_of(o)));
    if o.is_instance_of::<PyInt>() {
        return o.extract::<i128>().map_err(|_| too_big());
    }
    if let Ok(f) = o.cast::<PyFloat>() {
        let v = f.value();
        if v.fract() != 0.0 || !v.is_finite() {
            return Err(not_integer());
        }
        if v.abs() >= INT_LIMIT {
            return Err(too_big());
        }
        return Ok(v as i128);
    }
    if o.is_instance_of::<PyString>() || o.is_instance_of::<PyBytes>() {
        return Err(Fail::Mismatch);
    }
    let py = o.py();
    // SAFETY: `o` is live; PyIndex_Check reads its type's slots only.
    if unsafe { ffi::PyIndex_Check(o.as_ptr()) } != 0 {
        let i = o.call_method0(intern!(py, "__index__"))?;
        return i.extract::<i128>().map_err(|_| too_big());
    }
    // The magnitude first (cheap, and bounds the ratio below): a float
    // beyond every integer type, or an overflow, is out of range; NaN and
    // the infinities are no integers.
    let v = dunder_float(o, too_big)?;
    if !v.is_finite() {
        return Err(if v.is_nan() || o.eq(v)? {
            not_integer()
        } else {
            too_big()
        });
    }
    if v.abs() >= INT_LIMIT {
        return Err(too_big());
    }
    if o.hasattr(intern!(py, "as_integer_ratio"))? {
        let ratio = match o.call_method0(intern!(py, "as_integer_ratio")) {
            Ok(r) => r,
            Err(e) if e.is_instance_of::<PyValueError>(py) => return Err(not_integer()),
            Err(e) => return Err(Fail::Py(e)),
        };
        let (num, den): (Bound<'_, PyAny>, Bound<'_, PyAny>) = ratio.extract()?;
        if !den.eq(1)? {
            return Err(not_integer());
        }
        return num.extract::<i128>().map_err(|_| too_big());
    }
    // A number with neither: only what its float holds exactly.
    if v.fract() == 0.0 && v.abs() <= 9_007_199_254_740_992.0 {
        return Ok(v as i128);
    }
    Err(invalid(format!(
        "{} cannot be written exactly as an integer (it has no as_integer_ratio())",
        repr_of(o)
    )))
}

/// `o.__float__()`: a mismatch when `o` has none, `too_big` when it
/// overflows a float.
fn dunder_float(o: &Bound<'_, PyAny>, too_big: impl Fn() -> Fail) -> Result<f64, Fail> {
    let py = o.py();
    if !o.hasattr(intern!(py, "__float__"))? {
        return Err(Fail::Mismatch);
    }
    match o.call_method0(intern!(py, "__float__")) {
        Ok(f) => Ok(f.extract::<f64>()?),
        Err(e) if e.is_instance_of::<PyOverflowError>(py) => Err(too_big()),
        Err(e) => Err(Fail::Py(e)),
    }
}

/// `o` as a value of the integer type `ty` (see [`integer`]).
fn int_in<T: TryFrom<i128>>(o: &Bound<'_, PyAny>, ty: &str) -> Result<T, Fail> {
    T::try_from(integer(o, ty)?)
        .map_err(|_| oor(format!("{} is out of range for {ty}", repr_of(o))))
}

/// A float value for the float type `ty`: `float`, `int`, or anything with
/// `__float__` but text. A finite value whose float is an infinity (too
/// large for a float) is refused; infinities and NaN are kept.
fn float(o: &Bound<'_, PyAny>, ty: &str) -> Result<f64, Fail> {
    if let Ok(f) = o.cast::<PyFloat>() {
        return Ok(f.value());
    }
    if o.is_exact_instance_of::<PyInt>() {
        if let Ok(v) = o.extract::<i64>() {
            return Ok(v as f64);
        }
    }
    if o.is_instance_of::<PyBool>() || is_numpy_bool(o) {
        return Err(Fail::Mismatch);
    }
    let py = o.py();
    let too_big = || oor(format!("{} is out of range for {ty}", repr_of(o)));
    if o.is_instance_of::<PyInt>() {
        return o.extract::<f64>().map_err(|e| {
            if e.is_instance_of::<PyOverflowError>(py) {
                too_big()
            } else {
                Fail::Py(e)
            }
        });
    }
    if o.is_instance_of::<PyString>() || o.is_instance_of::<PyBytes>() {
        return Err(Fail::Mismatch);
    }
    let v = dunder_float(o, too_big)?;
    // An infinity from a value that is not one (Decimal('1e400')).
    if v.is_infinite() && !o.eq(v)? {
        return Err(too_big());
    }
    Ok(v)
}

/// `v` (from `o`) as a float4; a finite value beyond float4 is refused.
fn float4(v: f64, o: &Bound<'_, PyAny>) -> Result<f32, Fail> {
    n::narrow_to_float4(v).ok_or_else(|| oor(format!("{} is out of range for float4", repr_of(o))))
}

/// A numeric value, exactly, from its text.
fn numeric(o: &Bound<'_, PyAny>) -> Result<Numeric, Fail> {
    if o.is_instance_of::<PyBool>() || is_numpy_bool(o) {
        return Err(Fail::Mismatch);
    }
    let decimal = crate::typeref::decimal(o.py())?;
    let text = if o.is_instance(decimal)? || o.is_instance_of::<PyInt>() {
        o.str()?
    } else if o.is_instance_of::<PyFloat>() {
        o.repr()?
    } else if is_from_module(o, "numpy") && o.hasattr(intern!(o.py(), "dtype"))? {
        o.call_method0(intern!(o.py(), "item"))?.repr()?
    } else {
        return Err(Fail::Mismatch);
    };
    let text = text.to_cow()?;
    Numeric::parse(&text)
        .ok_or_else(|| invalid(format!("{text} is not a number PostgreSQL keeps (sNaN?)")))
}

fn date_days(o: &Bound<'_, PyAny>) -> Result<Date, Fail> {
    let d = fields::date(o.as_any().into()).ok_or(Fail::Mismatch)?;
    let days = dt::ymd_to_days(i32::from(d.year), u32::from(d.month), u32::from(d.day))
        .ok_or_else(|| invalid("date fields do not make a date".into()))?;
    Ok(Date::Days(days))
}

fn is_date_max(d: vdt::Date) -> bool {
    (d.year, d.month, d.day) == (9999, 12, 31)
}

fn is_date_min(d: vdt::Date) -> bool {
    (d.year, d.month, d.day) == (1, 1, 1)
}

/// A time's microseconds since midnight.
fn time_micros(t: vdt::Time) -> i64 {
    (i64::from(t.hour) * 3600 + i64::from(t.minute) * 60 + i64::from(t.second)) * 1_000_000
        + i64::from(t.microsecond)
}

/// The UTC offset of an aware datetime or time, in microseconds.
fn utc_offset(o: &Bound<'_, PyAny>, tz: &Bound<'_, PyAny>, ctx: &mut Ctx) -> Result<i64, Fail> {
    let py = o.py();
    let fixed = tz.is_exact_instance(crate::typeref::timezone(py)?);
    if fixed {
        if let Some((p, off)) = ctx.last_zone {
            if p == tz.as_ptr() as usize {
                return Ok(off);
            }
        }
    }
    let delta = o.call_method0(intern!(py, "utcoffset"))?;
    let delta = delta
        .cast::<PyDelta>()
        .map_err(|_| invalid("utcoffset() did not return a timedelta".into()))?;
    let off = fields::delta(delta.as_any().into())
        .ok_or(Fail::Mismatch)?
        .total_microseconds();
    if fixed {
        ctx.last_zone = Some((tz.as_ptr() as usize, off));
    }
    Ok(off)
}

fn timestamp(o: &Bound<'_, PyAny>, tz: bool, ctx: &mut Ctx) -> Result<Timestamp, Fail> {
    let dt_ = o.cast::<PyDateTime>().map_err(|_| Fail::Mismatch)?;
    let (d, time, zone) = fields::datetime(o.as_any().into()).ok_or(Fail::Mismatch)?;
    let zone = match zone {
        Some(_) => dt_.get_tzinfo(),
        None => None,
    };
    if !tz && zone.is_some() {
        return Err(invalid("a timestamp column takes naive datetimes: this one has a time zone (use timestamptz, or drop the zone)".into()));
    }
    let micros_of_day = time_micros(time);
    if is_date_max(d) && micros_of_day == dt::USECS_PER_DAY - 1 {
        return Ok(Timestamp::Infinity);
    }
    if is_date_min(d) && micros_of_day == 0 {
        return Ok(Timestamp::NegInfinity);
    }
    let Date::Days(days) = date_days(o)? else {
        return Err(Fail::Mismatch);
    };
    let local =
        dt::join_micros(days, micros_of_day).ok_or_else(|| oor("timestamp overflows".into()))?;
    let offset = match &zone {
        Some(z) => utc_offset(o, z, ctx)?,
        None => 0,
    };
    Ok(Timestamp::Micros(local - offset))
}

/// Dimensions of a nested list or tuple value: each level's length, down
/// while the first item is itself a list or tuple.
fn dims_of(o: &Bound<'_, PyAny>) -> Vec<usize> {
    let mut dims = Vec::new();
    let mut cur = o.clone();
    while let Some(len) = seq_len(&cur) {
        dims.push(len);
        if len == 0 || dims.len() == MAXDIM + 1 {
            break;
        }
        let Ok(first) = cur.get_item(0) else { break };
        cur = first;
    }
    dims
}

fn seq_len(o: &Bound<'_, PyAny>) -> Option<usize> {
    if let Ok(l) = o.cast::<PyList>() {
        Some(l.len())
    } else if let Ok(t) = o.cast::<PyTuple>() {
        Some(t.len())
    } else {
        None
    }
}

fn flatten<'py>(
    o: &Bound<'py, PyAny>,
    dims: &[usize],
    out: &mut Vec<Bound<'py, PyAny>>,
) -> Result<(), Fail> {
    let Some(len) = seq_len(o) else {
        return Err(invalid(
            "array is not rectangular: a list holds a non-list where its siblings hold lists"
                .into(),
        ));
    };
    if len != dims[0] {
        return Err(invalid(format!(
            "array is not rectangular: a sub-list of {len} items where {} was expected",
            dims[0]
        )));
    }
    for item in o.try_iter()? {
        let item = item?;
        if dims.len() > 1 {
            flatten(&item, &dims[1..], out)?;
        } else {
            if seq_len(&item).is_some() {
                return Err(invalid(
                    "array is not rectangular: a list inside the innermost dimension".into(),
                ));
            }
            out.push(item);
        }
    }
    Ok(())
}

fn array(out: &mut Vec<u8>, elem: Scalar, o: &Bound<'_, PyAny>, ctx: &mut Ctx) -> Put {
    let py = o.py();
    let owned;
    let o = if seq_len(o).is_none()
        && is_from_module(o, "numpy")
        && o.hasattr(intern!(py, "tolist"))?
    {
        owned = o.call_method0(intern!(py, "tolist"))?;
        &owned
    } else {
        o
    };
    let Some(len) = seq_len(o) else {
        return Err(Fail::Mismatch);
    };
    let mut items = Vec::new();
    let dims = if matches!(elem, Scalar::Json | Scalar::Jsonb) {
        // One dimension: each item is a JSON value, lists included.
        for item in o.try_iter()? {
            items.push(item?);
        }
        vec![len]
    } else {
        let dims = dims_of(o);
        if dims.len() > MAXDIM {
            return Err(invalid(format!("array of more than {MAXDIM} dimensions")));
        }
        flatten(o, &dims, &mut items)?;
        dims
    };
    if items.len() != dims.iter().product::<usize>() {
        return Err(invalid("the array changed size while it was read".into()));
    }
    let mut fail = None;
    let res = {
        let mut enc = if dims == [0] || dims.is_empty() {
            ArrayEncoder::new(out, elem.oid())
        } else {
            let d: Vec<ArrayDim> = dims
                .iter()
                .map(|&len| ArrayDim {
                    len: len as i32,
                    lower: 1,
                })
                .collect();
            ArrayEncoder::with_dims(out, elem.oid(), &d)?
        };
        let mut r = Ok(());
        for (i, item) in items.iter().enumerate() {
            if item.is_none() {
                enc.push_null();
                continue;
            }
            r = enc.push(|buf| match scalar(buf, elem, item, ctx) {
                Ok(()) => Ok(()),
                Err(f) => {
                    fail = Some((i, f));
                    Err(PgError::invalid_value("element"))
                }
            });
            if r.is_err() {
                break;
            }
        }
        r.and_then(|()| enc.finish())
    };
    match (res, fail) {
        (Ok(()), _) => Ok(()),
        (Err(_), Some((i, Fail::Mismatch))) => Err(invalid(format!(
            "array element {i} ({}) is not a {}",
            items[i]
                .get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default(),
            elem.name()
        ))),
        (Err(_), Some((i, Fail::Data(e)))) => Err(Fail::Data(PgError::new(
            e.kind,
            format!("array element {i}: {}", e.message),
        ))),
        (Err(_), Some((_, f))) => Err(f),
        (Err(e), None) => Err(Fail::Data(e)),
    }
}

/// Write `o` (not None) as `target` into `out`.
pub fn value(out: &mut Vec<u8>, target: &Column, o: &Bound<'_, PyAny>, ctx: &mut Ctx) -> Put {
    match target {
        Column::Native(PgType::Scalar(s)) => scalar(out, *s, o, ctx),
        Column::Native(PgType::Array(s)) => array(out, *s, o, ctx),
        Column::Adapter(d) => {
            let b = d.bind(o.py()).call_method1(intern!(o.py(), "dump"), (o,))?;
            let view = InputBuffer::get(&b)?;
            out.extend_from_slice(view.bytes());
            Ok(())
        }
        // Only readers have amber columns (`columns_of`).
        Column::Amber | Column::AmberArray => Err(Fail::Mismatch),
    }
}

/// Write `o` (not None) as the scalar type `s`.
pub fn scalar(out: &mut Vec<u8>, s: Scalar, o: &Bound<'_, PyAny>, ctx: &mut Ctx) -> Put {
    let py = o.py();
    match s {
        Scalar::Bool => {
            if let Ok(b) = o.cast::<PyBool>() {
                n::encode_bool(out, b.is_true());
            } else if is_numpy_bool(o) {
                n::encode_bool(out, o.is_truthy()?);
            } else {
                return Err(Fail::Mismatch);
            }
        }
        Scalar::Int2 => n::encode_int2(out, int_in(o, "int2")?),
        Scalar::Int4 => n::encode_int4(out, int_in(o, "int4")?),
        Scalar::Int8 => n::encode_int8(out, int_in(o, "int8")?),
        Scalar::Oid => n::encode_oid(out, int_in(o, "oid")?),
        Scalar::Float4 => n::encode_float4(out, float4(float(o, "float4")?, o)?),
        Scalar::Float8 => n::encode_float8(out, float(o, "float8")?),
        Scalar::Numeric => encode_numeric_value(out, &numeric(o)?)?,
        Scalar::Text | Scalar::Varchar | Scalar::Bpchar => {
            ctx.codec.with_bytes(o, |b| t::encode_text_bytes(out, b))?
        }
        Scalar::Name => ctx.codec.with_bytes(o, |b| t::encode_name_bytes(out, b))?,
        Scalar::Char => {
            let c = if let Ok(s) = o.cast::<PyString>() {
                char_byte(py, &s.to_cow()?, &ctx.codec)?
            } else if let Ok(b) = o.cast::<PyBytes>() {
                match b.as_bytes() {
                    [c] => *c,
                    b => return Err(invalid(format!("\"char\" holds one byte, not {}", b.len()))),
                }
            } else {
                return Err(Fail::Mismatch);
            };
            t::encode_char(out, c);
        }
        Scalar::Bytea => {
            if let Ok(b) = o.cast::<PyBytes>() {
                t::encode_bytea(out, b.as_bytes());
            } else if o.is_instance_of::<PyString>() {
                return Err(Fail::Mismatch);
            } else {
                let view = InputBuffer::get(o).map_err(|_| Fail::Mismatch)?;
                t::encode_bytea(out, view.bytes());
            }
        }
        Scalar::Json | Scalar::Jsonb => {
            let text = ctx.json_dumps(py)?.call1((o,))?;
            if !text.is_instance_of::<PyString>() {
                return Err(Fail::Mismatch);
            }
            if s == Scalar::Json {
                ctx.codec
                    .with_bytes(&text, |b| t::encode_text_bytes(out, b))?;
            } else {
                ctx.codec
                    .with_bytes(&text, |b| t::encode_jsonb_bytes(out, b))?;
            }
        }
        Scalar::Uuid => {
            let raw: [u8; 16] = if o.is_instance(crate::typeref::uuid(py)?)? {
                o.getattr(intern!(py, "int"))?
                    .extract::<u128>()?
                    .to_be_bytes()
            } else if let Ok(text) = o.cast::<PyString>() {
                parse_uuid(&text.to_cow()?).ok_or_else(|| invalid("not a UUID's text".into()))?
            } else {
                return Err(Fail::Mismatch);
            };
            t::encode_uuid(out, &raw);
        }
        Scalar::Date => {
            if !o.is_instance_of::<PyDate>() || o.is_instance_of::<PyDateTime>() {
                return Err(Fail::Mismatch);
            }
            let d = fields::date(o.as_any().into()).ok_or(Fail::Mismatch)?;
            let v = if is_date_max(d) {
                Date::Infinity
            } else if is_date_min(d) {
                Date::NegInfinity
            } else {
                date_days(o)?
            };
            dt::encode_date(out, v)?;
        }
        Scalar::TimeTz if o.is_instance_of::<PyString>() => {
            // Its ISO text, as amber reads timetz into Arrow, parsed exactly.
            let text = o.cast::<PyString>().map_err(|_| Fail::Mismatch)?.to_cow()?;
            dt::encode_timetz(out, dt::parse_timetz(&text)?)?
        }
        Scalar::Time | Scalar::TimeTz => {
            let tm = o.cast::<PyTime>().map_err(|_| Fail::Mismatch)?;
            let (time, zone) = fields::time(o.as_any().into()).ok_or(Fail::Mismatch)?;
            let micros = time_micros(time);
            match (s, zone) {
                (Scalar::Time, None) => dt::encode_time(out, micros)?,
                (Scalar::Time, Some(_)) => {
                    return Err(invalid(
                        "a time column takes naive times: this one has a zone (use timetz)".into(),
                    ))
                }
                (_, Some(_)) => {
                    let zone = tm.get_tzinfo().ok_or(Fail::Mismatch)?;
                    let off = utc_offset(o, &zone, ctx)?;
                    if off % 1_000_000 != 0 {
                        return Err(invalid("timetz offsets are whole seconds".into()));
                    }
                    dt::encode_timetz(
                        out,
                        TimeTz {
                            micros,
                            offset_west: -((off / 1_000_000) as i32),
                        },
                    )?
                }
                (_, None) => {
                    return Err(invalid(
                        "a timetz column takes times with a zone: this one is naive".into(),
                    ))
                }
            }
        }
        Scalar::Timestamp => dt::encode_timestamp(out, timestamp(o, false, ctx)?)?,
        Scalar::TimestampTz => dt::encode_timestamp(out, timestamp(o, true, ctx)?)?,
        Scalar::Interval => {
            if !o.is_instance_of::<PyDelta>() {
                return Err(Fail::Mismatch);
            }
            let d = fields::delta(o.as_any().into()).ok_or(Fail::Mismatch)?;
            dt::encode_interval(
                out,
                Interval {
                    micros: i64::from(d.seconds) * 1_000_000 + i64::from(d.microseconds),
                    days: d.days,
                    months: 0,
                },
            );
        }
        Scalar::Inet | Scalar::Cidr => {
            let text = if o.is_instance_of::<PyString>() || is_from_module(o, "ipaddress") {
                o.str()?
            } else {
                return Err(Fail::Mismatch);
            };
            let text = text.to_cow()?;
            let v = Inet::parse(&text)
                .ok_or_else(|| invalid(format!("{text:?} is not an IP address or network")))?;
            encode_inet(out, &v, s == Scalar::Cidr)?;
        }
    }
    Ok(())
}

/// The 16 bytes of a UUID's text, in the forms `uuid.UUID(str)` takes.
pub fn parse_uuid(text: &str) -> Option<[u8; 16]> {
    let t = text.trim();
    let t = t.strip_prefix("urn:uuid:").unwrap_or(t);
    let t = t
        .strip_prefix('{')
        .and_then(|x| x.strip_suffix('}'))
        .unwrap_or(t);
    let hex: Vec<u8> = t.bytes().filter(|&c| c != b'-').collect();
    if hex.len() != 32 {
        return None;
    }
    let mut out = [0u8; 16];
    for (i, pair) in hex.chunks(2).enumerate() {
        let s = std::str::from_utf8(pair).ok()?;
        out[i] = u8::from_str_radix(s, 16).ok()?;
    }
    Some(out)
}

/// The byte of a `"char"` given as text: `''` is the zero byte (what
/// PostgreSQL prints for it), `\ooo` the byte PostgreSQL prints so (one
/// from 0x80), and one character the byte it is in the client encoding; a
/// character that is more than one byte there is refused.
pub fn char_byte(py: Python<'_>, s: &str, codec: &TextCodec) -> Result<u8, Fail> {
    if s.is_empty() {
        return Ok(0);
    }
    if let Some(c) = t::char_from_octal(s.as_bytes()) {
        return Ok(c);
    }
    let n = s.chars().count();
    if n != 1 {
        return Err(invalid(format!("\"char\" holds one character, not {n}")));
    }
    codec.with_str_bytes(py, s, |b| match b {
        [c] => Ok(*c),
        b => Err(PgError::invalid_value(format!(
            "{s:?} is {} bytes in the client encoding {}: \"char\" holds one byte",
            b.len(),
            codec.label()
        ))),
    })
}
