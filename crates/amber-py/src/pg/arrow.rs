//! Columnar results: each column's values appended to Arrow buffers (a
//! validity bitmap, then bit-packed bools, little-endian fixed-width values,
//! or int64 offsets and bytes), handed to Python as `bytes` that
//! `pyarrow.Array.from_buffers` wraps. Arrays, types amber does not know and
//! types Arrow has no type for (inet, cidr, timetz) are kept as the Python
//! objects rows hold, for `amber.pg` to give a type or refuse.

use amber_core::pg::types::datetime::{self as dt, Date, Timestamp};
use amber_core::pg::types::numeric::decode_numeric;
use amber_core::pg::types::{numbers as n, text as t};
use amber_core::pg::{PgType, Scalar};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};

use super::column::Column;
use super::fail::Fail;
use super::from_pg::{self, Ctx, Got};

/// Microseconds from 1970-01-01 to 2000-01-01.
const PG_EPOCH_US: i64 = 946_684_800_000_000;
/// Days from 1970-01-01 to 2000-01-01.
const PG_EPOCH_DAYS: i32 = 10_957;

/// Whether Arrow has a type holding the type's values exactly (numeric is
/// kept as its exact text, and JSON as its text).
fn arrow_native(s: Scalar) -> bool {
    !matches!(s, Scalar::Inet | Scalar::Cidr | Scalar::TimeTz)
}

/// Whether NumPy has a dtype for the type's values.
fn numpy_native(s: Scalar) -> bool {
    matches!(
        s,
        Scalar::Bool
            | Scalar::Int2
            | Scalar::Int4
            | Scalar::Int8
            | Scalar::Oid
            | Scalar::Float4
            | Scalar::Float8
            | Scalar::Date
            | Scalar::Timestamp
            | Scalar::TimestampTz
            | Scalar::Interval
    )
}

enum Layout {
    Bool,
    Fixed,
    Var,
    Objects,
}

/// One column being built.
pub struct Builder {
    /// The Arrow type, as `amber.pg` names it to pyarrow.
    tag: &'static str,
    layout: Layout,
    scalar: Option<Scalar>,
    data: Vec<u8>,
    offsets: Vec<i64>,
    validity: Vec<u8>,
    len: usize,
    nulls: usize,
    objects: Vec<Py<PyAny>>,
    /// For NumPy: object columns become object arrays, not lists.
    numpy: bool,
}

impl Builder {
    /// A builder for `col`. With `numpy`, only types NumPy holds natively
    /// (bool, numbers, date, timestamp, interval) get buffers; the others are
    /// kept as Python objects (Decimal, str, UUID, ...). Without, the types
    /// Arrow has no type for are kept as Python objects.
    pub fn new(col: &Column, numpy: bool) -> Builder {
        let buffers = |s: Scalar| {
            if numpy {
                numpy_native(s)
            } else {
                arrow_native(s)
            }
        };
        let (tag, layout, scalar) = match col {
            Column::Native(PgType::Scalar(s)) if buffers(*s) => {
                let (tag, layout) = match s {
                    Scalar::Bool => ("bool", Layout::Bool),
                    Scalar::Int2 => ("int16", Layout::Fixed),
                    Scalar::Int4 => ("int32", Layout::Fixed),
                    Scalar::Int8 => ("int64", Layout::Fixed),
                    Scalar::Oid => ("uint32", Layout::Fixed),
                    Scalar::Float4 => ("float32", Layout::Fixed),
                    Scalar::Float8 => ("float64", Layout::Fixed),
                    Scalar::Date => ("date32", Layout::Fixed),
                    Scalar::Time => ("time64_us", Layout::Fixed),
                    Scalar::Timestamp => ("timestamp_us", Layout::Fixed),
                    Scalar::TimestampTz => ("timestamp_us_utc", Layout::Fixed),
                    Scalar::Interval => ("duration_us", Layout::Fixed),
                    Scalar::Uuid => ("uuid", Layout::Fixed),
                    Scalar::Bytea => ("large_binary", Layout::Var),
                    _ => ("large_string", Layout::Var),
                };
                (tag, layout, Some(*s))
            }
            _ => ("objects", Layout::Objects, None),
        };
        Builder {
            tag,
            layout,
            scalar,
            data: Vec::new(),
            offsets: vec![0],
            validity: Vec::new(),
            len: 0,
            nulls: 0,
            objects: Vec::new(),
            numpy,
        }
    }

    /// On a SQL_ASCII connection (with `on`), whose text is bytes (as
    /// psycopg reads it), text types are Arrow binary.
    pub fn binary_text(mut self, on: bool) -> Builder {
        let text = matches!(
            self.scalar,
            Some(
                Scalar::Text
                    | Scalar::Varchar
                    | Scalar::Bpchar
                    | Scalar::Name
                    | Scalar::Char
                    | Scalar::Json
                    | Scalar::Jsonb
            )
        );
        if on && text && self.tag == "large_string" {
            self.tag = "large_binary";
        }
        self
    }

    fn valid(&mut self, ok: bool) {
        let i = self.len;
        if i % 8 == 0 {
            self.validity.push(0);
        }
        if ok {
            if let Some(last) = self.validity.last_mut() {
                *last |= 1 << (i % 8);
            }
        } else {
            self.nulls += 1;
        }
        self.len += 1;
    }

    fn bit(&mut self, on: bool) {
        let i = self.len;
        if i % 8 == 0 {
            self.data.push(0);
        }
        if on {
            if let Some(last) = self.data.last_mut() {
                *last |= 1 << (i % 8);
            }
        }
    }

    /// Width of a fixed-width slot.
    fn width(&self) -> usize {
        match self.scalar {
            Some(Scalar::Int2) => 2,
            Some(Scalar::Int4 | Scalar::Oid | Scalar::Float4 | Scalar::Date) => 4,
            Some(Scalar::Uuid) => 16,
            _ => 8,
        }
    }

    pub fn push_null(&mut self, py: Python<'_>) {
        match self.layout {
            Layout::Bool => self.bit(false),
            Layout::Fixed => {
                let w = self.width();
                self.data.resize(self.data.len() + w, 0);
            }
            Layout::Var => self.offsets.push(self.data.len() as i64),
            Layout::Objects => self.objects.push(py.None()),
        }
        self.valid(false);
    }

    pub fn push(&mut self, py: Python<'_>, col: &Column, b: &[u8], ctx: &mut Ctx) -> Got<()> {
        let Some(s) = self.scalar else {
            let v = from_pg::value(py, col, b, ctx)?;
            self.objects.push(v.unbind());
            self.valid(true);
            return Ok(());
        };
        match self.layout {
            Layout::Bool => {
                let v = n::decode_bool(b)?;
                self.bit(v);
            }
            Layout::Fixed => self.fixed(s, b)?,
            Layout::Var => {
                match s {
                    Scalar::Bytea => self.data.extend_from_slice(t::decode_bytea(b)),
                    Scalar::Jsonb => {
                        let text = ctx.codec.utf8(py, t::decode_jsonb_bytes(b)?)?;
                        self.data.extend_from_slice(&text);
                    }
                    Scalar::Name => {
                        let text = ctx.codec.utf8(py, t::decode_name_bytes(b)?)?;
                        self.data.extend_from_slice(&text);
                    }
                    Scalar::Char => match from_pg::char_value(ctx, py, t::decode_char(b)?) {
                        from_pg::CharValue::Byte(c) => self.data.push(c),
                        from_pg::CharValue::Text(s) => self.data.extend_from_slice(s.as_bytes()),
                    },
                    Scalar::Numeric => {
                        let text = decode_numeric(b)?.to_string();
                        self.data.extend_from_slice(text.as_bytes());
                    }
                    _ => {
                        let text = ctx.codec.utf8(py, b)?;
                        self.data.extend_from_slice(&text);
                    }
                }
                self.offsets.push(self.data.len() as i64);
            }
            Layout::Objects => unreachable!("object columns have no scalar"),
        }
        self.valid(true);
        Ok(())
    }

    fn fixed(&mut self, s: Scalar, b: &[u8]) -> Got<()> {
        let d = &mut self.data;
        match s {
            Scalar::Int2 => d.extend_from_slice(&n::decode_int2(b)?.to_le_bytes()),
            Scalar::Int4 => d.extend_from_slice(&n::decode_int4(b)?.to_le_bytes()),
            Scalar::Int8 => d.extend_from_slice(&n::decode_int8(b)?.to_le_bytes()),
            Scalar::Oid => d.extend_from_slice(&n::decode_oid(b)?.to_le_bytes()),
            Scalar::Float4 => d.extend_from_slice(&n::decode_float4(b)?.to_le_bytes()),
            Scalar::Float8 => d.extend_from_slice(&n::decode_float8(b)?.to_le_bytes()),
            Scalar::Date => {
                let v = match dt::decode_date(b)? {
                    Date::Infinity => i32::MAX,
                    Date::NegInfinity => i32::MIN,
                    // PostgreSQL's dates end before i32::MAX - 10_957.
                    Date::Days(n) => n.saturating_add(PG_EPOCH_DAYS),
                };
                d.extend_from_slice(&v.to_le_bytes());
            }
            Scalar::Time => d.extend_from_slice(&dt::decode_time(b)?.to_le_bytes()),
            Scalar::Timestamp | Scalar::TimestampTz => {
                let v = match dt::decode_timestamp(b)? {
                    Timestamp::Infinity => i64::MAX,
                    // Not i64::MIN, which NumPy and pandas read as NaT.
                    Timestamp::NegInfinity => i64::MIN + 1,
                    Timestamp::Micros(us) => us.checked_add(PG_EPOCH_US).ok_or_else(|| {
                        Fail::Data(amber_core::pg::PgError::out_of_range(
                            "timestamp beyond Arrow's microsecond range (year 294247)",
                        ))
                    })?,
                };
                d.extend_from_slice(&v.to_le_bytes());
            }
            Scalar::Interval => {
                let iv = dt::decode_interval(b)?;
                let days = i64::from(iv.days) + dt::months_as_days(iv.months);
                let v = days
                    .checked_mul(dt::USECS_PER_DAY)
                    .and_then(|x| x.checked_add(iv.micros))
                    .ok_or_else(|| {
                        Fail::Data(amber_core::pg::PgError::out_of_range(
                            "interval beyond a 64-bit count of microseconds",
                        ))
                    })?;
                d.extend_from_slice(&v.to_le_bytes());
            }
            Scalar::Uuid => d.extend_from_slice(&t::decode_uuid(b)?),
            _ => unreachable!("only fixed-width scalars have a fixed layout"),
        }
        Ok(())
    }

    /// `(tag, length, null_count, validity or None, data, offsets or None)`;
    /// for object columns `data` is the values, as a NumPy object array for
    /// NumPy and a list for Arrow.
    pub fn finish<'py>(self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let validity = if self.nulls > 0 {
            PyBytes::new(py, &self.validity).into_any()
        } else {
            py.None().into_bound(py)
        };
        let (data, offsets) = match self.layout {
            Layout::Objects if self.numpy => (
                crate::ffi::numpy::object_array(py, self.objects)?,
                py.None().into_bound(py),
            ),
            Layout::Objects => (
                PyList::new(py, self.objects)?.into_any(),
                py.None().into_bound(py),
            ),
            Layout::Var => {
                let mut raw = Vec::with_capacity(self.offsets.len() * 8);
                for o in &self.offsets {
                    raw.extend_from_slice(&o.to_le_bytes());
                }
                (
                    PyBytes::new(py, &self.data).into_any(),
                    PyBytes::new(py, &raw).into_any(),
                )
            }
            _ => (
                PyBytes::new(py, &self.data).into_any(),
                py.None().into_bound(py),
            ),
        };
        PyTuple::new(
            py,
            [
                self.tag.into_pyobject(py)?.into_any(),
                self.len.into_pyobject(py)?.into_any(),
                self.nulls.into_pyobject(py)?.into_any(),
                validity,
                data,
                offsets,
            ],
        )
    }
}
