//! Columnar input for COPY: Arrow arrays (from pyarrow, pandas or polars)
//! read in place through their buffers, and columns of Python objects.
//!
//! `amber.pg` describes each column as a tuple `(kind, length, offset,
//! validity, data, offsets, unit)`: `kind` names the Arrow layout (below),
//! `offset` is the array's slice offset, `validity` its bitmap or None,
//! `unit` the time unit (0 s, 1 ms, 2 µs, 3 ns) or decimal scale. Kind
//! `objects` carries Python values in `data`, a list or a one-dimensional
//! NumPy object array (read in place), with `unit` 1 when it is a pandas
//! object column (whose NaN and missing markers are NULL).
//!
//! Every buffer's length is checked against the column's length before a
//! value is read, and each string's offsets against its data. Strings are
//! UTF-8; they are written in the connection's client encoding. Integers
//! and decimals go into integer columns exactly (a decimal with a fraction
//! refused), and floats into float4 only when they fit.

use std::cell::Cell;

use amber_core::pg::types::datetime::{self as dt, Date, Interval, Timestamp};
use amber_core::pg::types::net::{encode_inet, Inet};
use amber_core::pg::types::numeric::{encode_numeric_value, Numeric};
use amber_core::pg::types::{numbers as n, text as t};
use amber_core::pg::{PgError, PgType, Scalar};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyFloat, PyInt, PyList, PyString, PyTuple};

use super::column::Column;
use super::fail::Fail;
use super::to_pg::{self, parse_uuid, Ctx, Put};
use crate::ffi::buffer::InputBuffer;
use crate::ffi::numpy::ObjectColumn;

/// Microseconds from 1970-01-01 to 2000-01-01.
const PG_EPOCH_US: i64 = 946_684_800_000_000;
const PG_EPOCH_DAYS: i64 = 10_957;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Bool,
    Int(u8, bool),
    Float(u8),
    Str(u8),
    Bin(u8),
    Timestamp(bool),
    Date32,
    Date64,
    Time(u8),
    Duration,
    Decimal128,
    FixedBinary16,
    Objects,
}

impl Kind {
    fn parse(s: &str) -> Option<Kind> {
        Some(match s {
            "bool" => Kind::Bool,
            "i8" => Kind::Int(1, true),
            "i16" => Kind::Int(2, true),
            "i32" => Kind::Int(4, true),
            "i64" => Kind::Int(8, true),
            "u8" => Kind::Int(1, false),
            "u16" => Kind::Int(2, false),
            "u32" => Kind::Int(4, false),
            "u64" => Kind::Int(8, false),
            "f32" => Kind::Float(4),
            "f64" => Kind::Float(8),
            "str32" => Kind::Str(4),
            "str64" => Kind::Str(8),
            "bin32" => Kind::Bin(4),
            "bin64" => Kind::Bin(8),
            "timestamp" => Kind::Timestamp(false),
            "timestamptz" => Kind::Timestamp(true),
            "date32" => Kind::Date32,
            "date64" => Kind::Date64,
            "time32" => Kind::Time(4),
            "time64" => Kind::Time(8),
            "duration" => Kind::Duration,
            "decimal128" => Kind::Decimal128,
            "fsb16" => Kind::FixedBinary16,
            "objects" => Kind::Objects,
            _ => return None,
        })
    }

    /// Bytes per value in the data buffer (0: bit-packed or variable).
    fn width(self) -> usize {
        match self {
            Kind::Int(w, _) | Kind::Float(w) | Kind::Time(w) => usize::from(w),
            Kind::Timestamp(_) | Kind::Date64 | Kind::Duration => 8,
            Kind::Date32 => 4,
            Kind::Decimal128 | Kind::FixedBinary16 => 16,
            _ => 0,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Bool => "bool",
            Kind::Int(..) => "integer",
            Kind::Float(_) => "floating point",
            Kind::Str(_) => "string",
            Kind::Bin(_) => "binary",
            Kind::Timestamp(false) => "timestamp without time zone",
            Kind::Timestamp(true) => "timestamp with time zone",
            Kind::Date32 | Kind::Date64 => "date",
            Kind::Time(_) => "time",
            Kind::Duration => "duration",
            Kind::Decimal128 => "decimal",
            Kind::FixedBinary16 => "fixed_size_binary(16)",
            Kind::Objects => "object",
        }
    }
}

/// One input column.
pub struct Source {
    kind: Kind,
    len: usize,
    offset: usize,
    unit: u32,
    validity: Option<InputBuffer>,
    data: Option<InputBuffer>,
    offsets: Option<InputBuffer>,
    objects: Option<Objects>,
    /// For a string column, the block of rows last checked at once (see
    /// [`Source::clean_text`]) and whether it was clean.
    checked: Cell<(usize, usize, bool)>,
}

/// The values of an object column.
enum Objects {
    List(Py<PyList>),
    Array(ObjectColumn),
}

impl Objects {
    fn len(&self, py: Python<'_>) -> usize {
        match self {
            Objects::List(l) => l.bind(py).len(),
            Objects::Array(a) => a.len(),
        }
    }

    fn get<'py>(&self, py: Python<'py>, i: usize) -> PyResult<Bound<'py, PyAny>> {
        match self {
            Objects::List(l) => l.bind(py).get_item(i),
            Objects::Array(a) => a.get(py, i),
        }
    }
}

/// Rows of a string column checked for UTF-8 and NUL bytes at once.
const TEXT_BLOCK: usize = 4096;

fn buffer(o: &Bound<'_, PyAny>) -> PyResult<Option<InputBuffer>> {
    if o.is_none() {
        Ok(None)
    } else {
        InputBuffer::get(o).map(Some)
    }
}

fn short(what: &str) -> PyErr {
    PyValueError::new_err(format!("column {what} buffer is shorter than the column"))
}

impl Source {
    pub fn new(desc: &Bound<'_, PyTuple>) -> PyResult<Source> {
        let kind_name: String = desc.get_item(0)?.extract()?;
        let kind = Kind::parse(&kind_name)
            .ok_or_else(|| PyValueError::new_err(format!("unknown column kind {kind_name:?}")))?;
        let len: usize = desc.get_item(1)?.extract()?;
        let offset: usize = desc.get_item(2)?.extract()?;
        let unit: u32 = desc.get_item(6)?.extract()?;
        let end = offset.checked_add(len).ok_or_else(|| short("offset"))?;
        let validity = buffer(&desc.get_item(3)?)?;
        if let Some(v) = &validity {
            if v.bytes().len() * 8 < end {
                return Err(short("validity"));
            }
        }
        let mut src = Source {
            kind,
            len,
            offset,
            unit,
            validity,
            data: None,
            offsets: None,
            objects: None,
            checked: Cell::new((0, 0, false)),
        };
        if kind == Kind::Objects {
            let data = desc.get_item(4)?;
            let objects = match data.cast_into::<PyList>() {
                Ok(list) => Objects::List(list.unbind()),
                Err(e) => Objects::Array(ObjectColumn::new(&e.into_inner())?),
            };
            if objects.len(desc.py()) < end {
                return Err(short("objects"));
            }
            src.objects = Some(objects);
            return Ok(src);
        }
        let data = buffer(&desc.get_item(4)?)?.ok_or_else(|| short("data"))?;
        let need = match kind {
            Kind::Bool => end.div_ceil(8),
            Kind::Str(_) | Kind::Bin(_) => 0,
            k => end * k.width(),
        };
        if data.bytes().len() < need {
            return Err(short("data"));
        }
        if let Kind::Str(w) | Kind::Bin(w) = kind {
            let offs = buffer(&desc.get_item(5)?)?.ok_or_else(|| short("offsets"))?;
            if offs.bytes().len() < (end + 1) * usize::from(w) {
                return Err(short("offsets"));
            }
            src.offsets = Some(offs);
        }
        src.data = Some(data);
        Ok(src)
    }

    /// Whether value `i` of a string column is known to be valid UTF-8
    /// without NUL bytes: its block of [`TEXT_BLOCK`] rows is checked in one
    /// pass (cheaper than value by value); false sends the value through the
    /// checks that say what is wrong.
    fn clean_text(&self, i: usize) -> bool {
        let (from, to, clean) = self.checked.get();
        if (from..to).contains(&i) {
            return clean;
        }
        let to = i.saturating_add(TEXT_BLOCK).min(self.len);
        let clean = self.text_is_clean(self.offset + i, self.offset + to);
        self.checked.set((i, to, clean));
        clean
    }

    /// Whether values `a..b` (absolute indexes) span valid UTF-8 without
    /// NUL, with their offsets in order, in bounds and on character
    /// boundaries.
    fn text_is_clean(&self, a: usize, b: usize) -> bool {
        let data = self.data();
        let (Some(first), Some(last)) = (self.offset_at(a), self.offset_at(b)) else {
            return false;
        };
        if first > last || last > data.len() {
            return false;
        }
        if !t::is_clean_text(&data[first..last]) {
            return false;
        }
        let mut prev = first;
        (a + 1..b).all(|k| match self.offset_at(k) {
            // In order, and not inside a multi-byte character (a
            // continuation byte is 0b10xx_xxxx).
            Some(o) if o >= prev && o <= last => {
                prev = o;
                o == last || data[o] & 0xC0 != 0x80
            }
            _ => false,
        })
    }

    /// Offset `k` of a string or binary column, if it is not negative.
    fn offset_at(&self, k: usize) -> Option<usize> {
        let offs = self.offsets.as_ref().map_or(&[][..], |o| o.bytes());
        let v = match self.kind {
            Kind::Str(4) | Kind::Bin(4) => i64::from(i32::from_le_bytes(
                offs.get(4 * k..4 * k + 4)?.try_into().ok()?,
            )),
            _ => i64::from_le_bytes(offs.get(8 * k..8 * k + 8)?.try_into().ok()?),
        };
        usize::try_from(v).ok()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Value `i` of an object column (None for an Arrow column, whose
    /// values `is_null` and `write` read from its buffers).
    pub fn item<'py>(&self, py: Python<'py>, i: usize) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.objects
            .as_ref()
            .map(|objects| objects.get(py, self.offset + i))
            .transpose()
    }

    /// Whether value `i` is NULL; `item` is what `item(i)` gave.
    pub fn is_null(&self, i: usize, item: Option<&Bound<'_, PyAny>>) -> bool {
        if let Some(o) = item {
            // `unit` 1 marks a pandas object column: NaN and pandas' missing
            // markers are NULL there, as pandas means them.
            return o.is_none() || self.unit == 1 && pandas_missing(o);
        }
        match &self.validity {
            None => false,
            Some(v) => {
                let j = self.offset + i;
                v.bytes()[j / 8] & (1 << (j % 8)) == 0
            }
        }
    }

    fn data(&self) -> &[u8] {
        self.data.as_ref().map_or(&[], |d| d.bytes())
    }

    fn fixed(&self, i: usize) -> &[u8] {
        let w = self.kind.width();
        let j = (self.offset + i) * w;
        &self.data()[j..j + w]
    }

    fn int(&self, i: usize) -> i128 {
        let b = self.fixed(i);
        let Kind::Int(w, signed) = self.kind else {
            return 0;
        };
        match (w, signed) {
            (1, true) => i128::from(b[0] as i8),
            (1, false) => i128::from(b[0]),
            (2, true) => i128::from(i16::from_le_bytes([b[0], b[1]])),
            (2, false) => i128::from(u16::from_le_bytes([b[0], b[1]])),
            (4, true) => i128::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            (4, false) => i128::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            (_, true) => i128::from(i64::from_le_bytes(b8(b))),
            (_, false) => i128::from(u64::from_le_bytes(b8(b))),
        }
    }

    fn i64_at(&self, i: usize) -> i64 {
        i64::from_le_bytes(b8(self.fixed(i)))
    }

    fn i32_at(&self, i: usize) -> i32 {
        let b = self.fixed(i);
        i32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }

    fn float(&self, i: usize) -> f64 {
        let b = self.fixed(i);
        if self.kind == Kind::Float(4) {
            f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        } else {
            f64::from_le_bytes(b8(b))
        }
    }

    fn bytes(&self, i: usize) -> Result<&[u8], Fail> {
        let j = self.offset + i;
        let offs = self.offsets.as_ref().map_or(&[][..], |o| o.bytes());
        let (start, end) = match self.kind {
            Kind::Str(4) | Kind::Bin(4) => {
                let at = |k: usize| {
                    i32::from_le_bytes([
                        offs[4 * k],
                        offs[4 * k + 1],
                        offs[4 * k + 2],
                        offs[4 * k + 3],
                    ]) as i64
                };
                (at(j), at(j + 1))
            }
            _ => {
                let at = |k: usize| i64::from_le_bytes(b8(&offs[8 * k..8 * k + 8]));
                (at(j), at(j + 1))
            }
        };
        let data = self.data();
        if start < 0 || end < start || end as usize > data.len() {
            return Err(Fail::Data(PgError::malformed(
                "string offsets outside the column's data",
            )));
        }
        Ok(&data[start as usize..end as usize])
    }

    fn str(&self, i: usize) -> Result<&str, Fail> {
        std::str::from_utf8(self.bytes(i)?)
            .map_err(|_| Fail::Data(PgError::malformed("string column holds invalid UTF-8")))
    }

    /// The value in units of `unit` scaled to microseconds (flooring).
    fn micros(&self, v: i64) -> Result<i64, Fail> {
        let r = match self.unit {
            0 => v.checked_mul(1_000_000),
            1 => v.checked_mul(1_000),
            2 => Some(v),
            _ => Some(v.div_euclid(1_000)),
        };
        r.ok_or_else(|| Fail::Data(PgError::out_of_range("time value overflows microseconds")))
    }

    /// Write value `i` (not null) as `target`; `item` is what `item(i)`
    /// gave.
    pub fn write(
        &self,
        py: Python<'_>,
        i: usize,
        item: Option<&Bound<'_, PyAny>>,
        target: &Column,
        out: &mut Vec<u8>,
        ctx: &mut Ctx,
    ) -> Put {
        if let Some(o) = item {
            return to_pg::value(out, target, o, ctx);
        }
        let Column::Native(PgType::Scalar(s)) = target else {
            return Err(Fail::Mismatch);
        };
        let s = *s;
        match (self.kind, s) {
            (Kind::Bool, Scalar::Bool) => {
                let j = self.offset + i;
                n::encode_bool(out, self.data()[j / 8] & (1 << (j % 8)) != 0);
            }
            (Kind::Int(..), _) => int_to(out, s, self.int(i))?,
            (Kind::Float(_), _) => float_to(out, s, self.float(i))?,
            (Kind::Str(_), Scalar::Text | Scalar::Varchar | Scalar::Bpchar)
                if ctx.codec.enc.writes_utf8() && self.clean_text(i) =>
            {
                // Checked for UTF-8 and NUL bytes with its block.
                out.extend_from_slice(self.bytes(i)?);
            }
            (Kind::Str(_), _) => str_to(py, out, s, self.str(i)?, ctx)?,
            (Kind::Bin(_), Scalar::Bytea) => t::encode_bytea(out, self.bytes(i)?),
            (Kind::FixedBinary16, Scalar::Uuid) => {
                let mut u = [0u8; 16];
                u.copy_from_slice(self.fixed(i));
                t::encode_uuid(out, &u);
            }
            (Kind::FixedBinary16, Scalar::Bytea) => t::encode_bytea(out, self.fixed(i)),
            (Kind::Timestamp(tz), Scalar::Timestamp | Scalar::TimestampTz) => {
                if tz && s == Scalar::Timestamp {
                    return Err(Fail::Data(PgError::invalid_value(
                        "a timestamp column takes naive datetimes: this column has a time zone (use timestamptz, or drop the zone)",
                    )));
                }
                let raw = self.i64_at(i);
                // In microseconds (the unit amber reads timestamps in), the
                // largest value and the smallest (and the smallest plus one,
                // what amber reads -infinity as) are the infinities; in
                // other units they are real instants (pandas' Timestamp.min
                // is the smallest plus one nanosecond).
                let v = match raw {
                    i64::MAX if self.unit == 2 => Timestamp::Infinity,
                    i64::MIN | -9_223_372_036_854_775_807 if self.unit == 2 => {
                        Timestamp::NegInfinity
                    }
                    _ => Timestamp::Micros(self.micros(raw)? - PG_EPOCH_US),
                };
                dt::encode_timestamp(out, v)?;
            }
            (Kind::Date32 | Kind::Date64, Scalar::Date) => {
                let v = if self.kind == Kind::Date32 {
                    match self.i32_at(i) {
                        i32::MAX => Date::Infinity,
                        i32::MIN => Date::NegInfinity,
                        d => to_days(i64::from(d) - PG_EPOCH_DAYS)?,
                    }
                } else {
                    to_days(self.i64_at(i).div_euclid(86_400_000) - PG_EPOCH_DAYS)?
                };
                dt::encode_date(out, v)?;
            }
            (Kind::Time(w), Scalar::Time) => {
                let raw = if w == 4 {
                    i64::from(self.i32_at(i))
                } else {
                    self.i64_at(i)
                };
                dt::encode_time(out, self.micros(raw)?)?;
            }
            (Kind::Duration, Scalar::Interval) => {
                let us = self.micros(self.i64_at(i))?;
                dt::encode_interval(
                    out,
                    Interval {
                        micros: us.rem_euclid(dt::USECS_PER_DAY),
                        days: i32::try_from(us.div_euclid(dt::USECS_PER_DAY))
                            .map_err(|_| Fail::Data(PgError::out_of_range("duration too long")))?,
                        months: 0,
                    },
                );
            }
            (Kind::Decimal128, Scalar::Numeric) => {
                let raw = i128::from_le_bytes(self.fixed(i).try_into().unwrap_or([0; 16]));
                let digits: Vec<u8> = raw
                    .unsigned_abs()
                    .to_string()
                    .bytes()
                    .map(|c| c - b'0')
                    .collect();
                let v = Numeric::Finite {
                    negative: raw < 0,
                    digits,
                    exponent: -(self.unit as i32),
                };
                encode_numeric_value(out, &v)?;
            }
            (Kind::Decimal128, Scalar::Float8) => {
                let raw = i128::from_le_bytes(self.fixed(i).try_into().unwrap_or([0; 16]));
                let v = n::decimal_float::<f64>(raw, self.unit).ok_or_else(|| bad_decimal(raw))?;
                n::encode_float8(out, v);
            }
            (Kind::Decimal128, Scalar::Float4) => {
                // Rounded once, from the exact value (a decimal128 is within
                // float4's range).
                let raw = i128::from_le_bytes(self.fixed(i).try_into().unwrap_or([0; 16]));
                let v = n::decimal_float::<f32>(raw, self.unit).ok_or_else(|| bad_decimal(raw))?;
                n::encode_float4(out, v);
            }
            (Kind::Decimal128, Scalar::Int2 | Scalar::Int4 | Scalar::Int8 | Scalar::Oid) => {
                let raw = i128::from_le_bytes(self.fixed(i).try_into().unwrap_or([0; 16]));
                let v = n::decimal_integer(raw, self.unit).ok_or_else(|| {
                    Fail::Data(PgError::invalid_value(format!(
                        "{} is not an integer",
                        decimal_text(raw, self.unit)
                    )))
                })?;
                int_to(out, s, v).map_err(|f| match f {
                    Fail::Data(e) if e.kind == amber_core::pg::PgErrorKind::OutOfRange => {
                        oor(decimal_text(raw, self.unit), s.name())
                    }
                    f => f,
                })?;
            }
            _ => return Err(Fail::Mismatch),
        }
        Ok(())
    }

    pub fn kind_name(&self) -> &'static str {
        self.kind.name()
    }

    /// Value `i` of an object column.
    pub fn object<'py>(&self, py: Python<'py>, i: usize) -> Option<Bound<'py, PyAny>> {
        self.objects.as_ref()?.get(py, self.offset + i).ok()
    }

    /// Value `i` of an Arrow column as text, for error messages.
    pub fn describe(&self, i: usize) -> String {
        match self.kind {
            Kind::Int(..) => self.int(i).to_string(),
            Kind::Float(_) => float_text(self.float(i)),
            Kind::Decimal128 => decimal_text(
                i128::from_le_bytes(self.fixed(i).try_into().unwrap_or([0; 16])),
                self.unit,
            ),
            Kind::Str(_) => match self.str(i) {
                Ok(s) if s.chars().count() > 80 => {
                    format!("{:?}...", s.chars().take(77).collect::<String>())
                }
                Ok(s) => format!("{s:?}"),
                Err(_) => "invalid UTF-8".into(),
            },
            k => format!("a {} value", k.name()),
        }
    }
}

/// Whether a value of a pandas object column is missing: NaN, `pd.NA`,
/// `NaT`. Exact strings, bytes and ints are not, without a closer look.
fn pandas_missing(o: &Bound<'_, PyAny>) -> bool {
    if let Ok(f) = o.cast_exact::<PyFloat>() {
        return f.value().is_nan();
    }
    if o.is_exact_instance_of::<PyString>()
        || o.is_exact_instance_of::<PyBytes>()
        || o.is_exact_instance_of::<PyInt>()
    {
        return false;
    }
    to_pg::is_missing(o)
}

fn b8(b: &[u8]) -> [u8; 8] {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    a
}

/// A float as Python would print it near enough for a message (`1e39`,
/// not 40 digits).
fn float_text(v: f64) -> String {
    format!("{v:?}")
}

/// A decimal128's exact text: `raw` * 10^-`scale`.
fn decimal_text(raw: i128, scale: u32) -> String {
    let digits = raw.unsigned_abs().to_string();
    let sign = if raw < 0 { "-" } else { "" };
    let scale = scale as usize;
    if scale == 0 {
        return format!("{sign}{digits}");
    }
    let padded = format!("{digits:0>width$}", width = scale + 1);
    let (int, frac) = padded.split_at(padded.len() - scale);
    format!("{sign}{int}.{frac}")
}

#[cold]
fn bad_decimal(raw: i128) -> Fail {
    Fail::Data(PgError::invalid_value(format!(
        "decimal {raw} has no float value"
    )))
}

fn to_days(d: i64) -> Result<Date, Fail> {
    i32::try_from(d)
        .map(Date::Days)
        .map_err(|_| Fail::Data(PgError::out_of_range("date out of range")))
}

fn oor(v: impl std::fmt::Display, ty: &str) -> Fail {
    Fail::Data(PgError::out_of_range(format!(
        "{v} is out of range for {ty}"
    )))
}

fn int_to(out: &mut Vec<u8>, s: Scalar, v: i128) -> Put {
    match s {
        Scalar::Int2 => n::encode_int2(out, i16::try_from(v).map_err(|_| oor(v, "int2"))?),
        Scalar::Int4 => n::encode_int4(out, i32::try_from(v).map_err(|_| oor(v, "int4"))?),
        Scalar::Int8 => n::encode_int8(out, i64::try_from(v).map_err(|_| oor(v, "int8"))?),
        Scalar::Oid => n::encode_oid(out, u32::try_from(v).map_err(|_| oor(v, "oid"))?),
        Scalar::Float4 => n::encode_float4(out, v as f32),
        Scalar::Float8 => n::encode_float8(out, v as f64),
        Scalar::Numeric => {
            let digits: Vec<u8> = v
                .unsigned_abs()
                .to_string()
                .bytes()
                .map(|c| c - b'0')
                .collect();
            encode_numeric_value(
                out,
                &Numeric::Finite {
                    negative: v < 0,
                    digits,
                    exponent: 0,
                },
            )?
        }
        _ => return Err(Fail::Mismatch),
    }
    Ok(())
}

fn float_to(out: &mut Vec<u8>, s: Scalar, v: f64) -> Put {
    match s {
        Scalar::Float4 => n::encode_float4(
            out,
            n::narrow_to_float4(v).ok_or_else(|| oor(float_text(v), "float4"))?,
        ),
        Scalar::Float8 => n::encode_float8(out, v),
        Scalar::Numeric => {
            let text = format!("{v}");
            let num = Numeric::parse(&text).ok_or_else(|| {
                Fail::Data(PgError::invalid_value(format!("{text} is not a number")))
            })?;
            encode_numeric_value(out, &num)?;
        }
        Scalar::Int2 | Scalar::Int4 | Scalar::Int8 | Scalar::Oid => {
            if v.fract() != 0.0 || !v.is_finite() {
                return Err(Fail::Data(PgError::invalid_value(format!(
                    "{} is not an integer",
                    float_text(v)
                ))));
            }
            let too_big = || oor(float_text(v), s.name());
            if v.abs() >= 1.7e38 {
                return Err(too_big());
            }
            // An integral float is its integer exactly.
            int_to(out, s, v as i128).map_err(|f| match f {
                Fail::Data(e) if e.kind == amber_core::pg::PgErrorKind::OutOfRange => too_big(),
                f => f,
            })?;
        }
        _ => return Err(Fail::Mismatch),
    }
    Ok(())
}

fn str_to(py: Python<'_>, out: &mut Vec<u8>, s: Scalar, v: &str, ctx: &Ctx) -> Put {
    let codec = &ctx.codec;
    match s {
        Scalar::Text | Scalar::Varchar | Scalar::Bpchar | Scalar::Json => {
            codec.with_str_bytes(py, v, |b| t::encode_text_bytes(out, b))?
        }
        Scalar::Name => codec.with_str_bytes(py, v, |b| t::encode_name_bytes(out, b))?,
        Scalar::Jsonb => codec.with_str_bytes(py, v, |b| t::encode_jsonb_bytes(out, b))?,
        Scalar::Char => t::encode_char(out, to_pg::char_byte(py, v, codec)?),
        Scalar::Uuid => {
            let u = parse_uuid(v).ok_or_else(|| {
                Fail::Data(PgError::invalid_value(format!("{v:?} is not a UUID")))
            })?;
            t::encode_uuid(out, &u);
        }
        Scalar::TimeTz => dt::encode_timetz(out, dt::parse_timetz(v)?)?,
        Scalar::Inet | Scalar::Cidr => {
            let ip = Inet::parse(v).ok_or_else(|| {
                Fail::Data(PgError::invalid_value(format!(
                    "{v:?} is not an IP address or network"
                )))
            })?;
            encode_inet(out, &ip, s == Scalar::Cidr)?;
        }
        Scalar::Numeric => {
            let num = Numeric::parse(v).ok_or_else(|| {
                Fail::Data(PgError::invalid_value(format!("{v:?} is not a number")))
            })?;
            encode_numeric_value(out, &num)?;
        }
        _ => return Err(Fail::Mismatch),
    }
    Ok(())
}
