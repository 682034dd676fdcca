//! A decoded value of any type amber knows, and dispatch by type: for
//! callers that go through one generic path (the fuzz target, tests, a slow
//! path at the edge) rather than calling each type's encoder or decoder.

use crate::pg::error::{PgError, PgErrorKind, Res};
use crate::pg::types::array::{decode_array, Array, ArrayEncoder};
use crate::pg::types::datetime::{self as dt, Date, Interval, TimeTz, Timestamp};
use crate::pg::types::net::{self, Inet};
use crate::pg::types::numeric::{self, Numeric};
use crate::pg::types::{numbers as n, text as t, PgType, Scalar};

/// One value, borrowing text and bytes from the input.
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    Bool(bool),
    Int2(i16),
    Int4(i32),
    Int8(i64),
    Oid(u32),
    Float4(f32),
    Float8(f64),
    Numeric(Numeric),
    /// text, varchar, bpchar, name and json.
    Text(&'a str),
    /// `"char"`: one byte.
    Char(u8),
    Bytea(&'a [u8]),
    Date(Date),
    /// Microseconds since midnight.
    Time(i64),
    TimeTz(TimeTz),
    /// timestamp and timestamptz.
    Timestamp(Timestamp),
    Interval(Interval),
    Uuid([u8; 16]),
    /// jsonb's JSON text (the version byte removed).
    Jsonb(&'a str),
    /// inet and cidr.
    Inet(Inet),
    /// An array: its elements are still in their send format.
    Array(Array<'a>),
}

/// Decode one value of type `ty` from its send-format bytes. Error offsets
/// are relative to the start of `b`.
pub fn decode_value(ty: PgType, b: &[u8]) -> Res<Value<'_>> {
    let s = match ty {
        PgType::Array(elem) => return decode_array(b, Some(elem.oid())).map(Value::Array),
        PgType::Scalar(s) => s,
    };
    Ok(match s {
        Scalar::Bool => Value::Bool(n::decode_bool(b)?),
        Scalar::Int2 => Value::Int2(n::decode_int2(b)?),
        Scalar::Int4 => Value::Int4(n::decode_int4(b)?),
        Scalar::Int8 => Value::Int8(n::decode_int8(b)?),
        Scalar::Oid => Value::Oid(n::decode_oid(b)?),
        Scalar::Float4 => Value::Float4(n::decode_float4(b)?),
        Scalar::Float8 => Value::Float8(n::decode_float8(b)?),
        Scalar::Numeric => Value::Numeric(numeric::decode_numeric(b)?),
        Scalar::Text | Scalar::Varchar | Scalar::Bpchar | Scalar::Json => {
            Value::Text(t::decode_text(b)?)
        }
        Scalar::Name => Value::Text(t::decode_name(b)?),
        Scalar::Char => Value::Char(t::decode_char(b)?),
        Scalar::Bytea => Value::Bytea(t::decode_bytea(b)),
        Scalar::Date => Value::Date(dt::decode_date(b)?),
        Scalar::Time => Value::Time(dt::decode_time(b)?),
        Scalar::TimeTz => Value::TimeTz(dt::decode_timetz(b)?),
        Scalar::Timestamp | Scalar::TimestampTz => Value::Timestamp(dt::decode_timestamp(b)?),
        Scalar::Interval => Value::Interval(dt::decode_interval(b)?),
        Scalar::Uuid => Value::Uuid(t::decode_uuid(b)?),
        Scalar::Jsonb => Value::Jsonb(t::decode_jsonb(b)?),
        Scalar::Inet => Value::Inet(net::decode_inet(b, false)?),
        Scalar::Cidr => Value::Inet(net::decode_inet(b, true)?),
    })
}

#[cold]
fn mismatch(ty: PgType, v: &Value<'_>) -> PgError {
    PgError::new(
        PgErrorKind::TypeMismatch,
        format!("cannot write {v:?} as {}", ty.name()),
    )
}

/// Append the send format of `v` as type `ty` (without the length word). A
/// value of another kind than the type holds is a `TypeMismatch` error; an
/// array's elements are written as they are, in its dimensions.
pub fn encode_value(out: &mut Vec<u8>, ty: PgType, v: &Value<'_>) -> Res<()> {
    let s = match (ty, v) {
        (PgType::Array(elem), Value::Array(a)) => {
            if a.elem_oid != elem.oid() {
                return Err(mismatch(ty, v));
            }
            let mut enc = if a.dims.is_empty() {
                ArrayEncoder::new(out, a.elem_oid)
            } else {
                ArrayEncoder::with_dims(out, a.elem_oid, &a.dims)?
            };
            for e in &a.elements {
                match e.value {
                    Some(b) => enc.push_bytes(b)?,
                    None => enc.push_null(),
                }
            }
            return enc.finish();
        }
        (PgType::Array(_), _) => return Err(mismatch(ty, v)),
        (PgType::Scalar(s), _) => s,
    };
    match (s, v) {
        (Scalar::Bool, Value::Bool(x)) => n::encode_bool(out, *x),
        (Scalar::Int2, Value::Int2(x)) => n::encode_int2(out, *x),
        (Scalar::Int4, Value::Int4(x)) => n::encode_int4(out, *x),
        (Scalar::Int8, Value::Int8(x)) => n::encode_int8(out, *x),
        (Scalar::Oid, Value::Oid(x)) => n::encode_oid(out, *x),
        (Scalar::Float4, Value::Float4(x)) => n::encode_float4(out, *x),
        (Scalar::Float8, Value::Float8(x)) => n::encode_float8(out, *x),
        (Scalar::Numeric, Value::Numeric(x)) => numeric::encode_numeric_value(out, x)?,
        (Scalar::Text | Scalar::Varchar | Scalar::Bpchar | Scalar::Json, Value::Text(x)) => {
            t::encode_text(out, x)?
        }
        (Scalar::Name, Value::Text(x)) => t::encode_name(out, x)?,
        (Scalar::Char, Value::Char(x)) => t::encode_char(out, *x),
        (Scalar::Bytea, Value::Bytea(x)) => t::encode_bytea(out, x),
        (Scalar::Date, Value::Date(x)) => dt::encode_date(out, *x)?,
        (Scalar::Time, Value::Time(x)) => dt::encode_time(out, *x)?,
        (Scalar::TimeTz, Value::TimeTz(x)) => dt::encode_timetz(out, *x)?,
        (Scalar::Timestamp | Scalar::TimestampTz, Value::Timestamp(x)) => {
            dt::encode_timestamp(out, *x)?
        }
        (Scalar::Interval, Value::Interval(x)) => dt::encode_interval(out, *x),
        (Scalar::Uuid, Value::Uuid(x)) => t::encode_uuid(out, x),
        (Scalar::Jsonb, Value::Jsonb(x)) => t::encode_jsonb(out, x)?,
        (Scalar::Inet, Value::Inet(x)) => net::encode_inet(out, x, false)?,
        (Scalar::Cidr, Value::Inet(x)) => net::encode_inet(out, x, true)?,
        _ => return Err(mismatch(ty, v)),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_scalar_round_trips_a_sample() {
        let samples: Vec<(Scalar, Value<'static>)> = vec![
            (Scalar::Bool, Value::Bool(true)),
            (Scalar::Int2, Value::Int2(-7)),
            (Scalar::Int4, Value::Int4(1 << 20)),
            (Scalar::Int8, Value::Int8(i64::MIN)),
            (Scalar::Oid, Value::Oid(u32::MAX)),
            (Scalar::Float4, Value::Float4(1.5)),
            (Scalar::Float8, Value::Float8(-0.25)),
            (
                Scalar::Numeric,
                Value::Numeric(Numeric::Finite {
                    negative: true,
                    digits: vec![4, 2],
                    exponent: -1,
                }),
            ),
            (Scalar::Text, Value::Text("t")),
            (Scalar::Varchar, Value::Text("v")),
            (Scalar::Bpchar, Value::Text("b  ")),
            (Scalar::Name, Value::Text("pg_class")),
            (Scalar::Char, Value::Char(b'r')),
            (Scalar::Bytea, Value::Bytea(b"\x00\xff")),
            (Scalar::Date, Value::Date(Date::Days(8825))),
            (Scalar::Time, Value::Time(1)),
            (
                Scalar::TimeTz,
                Value::TimeTz(TimeTz {
                    micros: 2,
                    offset_west: 3600,
                }),
            ),
            (Scalar::Timestamp, Value::Timestamp(Timestamp::Micros(-5))),
            (Scalar::TimestampTz, Value::Timestamp(Timestamp::Infinity)),
            (
                Scalar::Interval,
                Value::Interval(Interval {
                    micros: 1,
                    days: 2,
                    months: 3,
                }),
            ),
            (Scalar::Uuid, Value::Uuid([7; 16])),
            (Scalar::Json, Value::Text("[1]")),
            (Scalar::Jsonb, Value::Jsonb("{}")),
            (
                Scalar::Inet,
                Value::Inet(Inet {
                    addr: "10.1.2.3".parse().unwrap(),
                    bits: 8,
                }),
            ),
            (
                Scalar::Cidr,
                Value::Inet(Inet {
                    addr: "10.0.0.0".parse().unwrap(),
                    bits: 8,
                }),
            ),
        ];
        assert_eq!(samples.len(), Scalar::ALL.len());
        for (s, v) in &samples {
            let ty = PgType::Scalar(*s);
            let mut out = Vec::new();
            encode_value(&mut out, ty, v).unwrap();
            if let Some(len) = s.fixed_len() {
                assert_eq!(out.len(), len, "{s:?}");
            }
            assert_eq!(&decode_value(ty, &out).unwrap(), v, "{s:?}");
            // And as a one-element array of it.
            let mut arr = Vec::new();
            let mut enc = ArrayEncoder::new(&mut arr, s.oid());
            enc.push_bytes(&out).unwrap();
            enc.push_null();
            enc.finish().unwrap();
            let Value::Array(a) = decode_value(PgType::Array(*s), &arr).unwrap() else {
                panic!("{s:?}")
            };
            assert_eq!(a.elements[0].value, Some(&out[..]));
            assert_eq!(a.elements[1].value, None);
            let mut again = Vec::new();
            encode_value(&mut again, PgType::Array(*s), &Value::Array(a)).unwrap();
            assert_eq!(again, arr);
        }
    }

    #[test]
    fn mismatched_value_is_refused() {
        let mut out = Vec::new();
        let e = encode_value(&mut out, PgType::Scalar(Scalar::Int4), &Value::Int8(1)).unwrap_err();
        assert_eq!(e.kind, PgErrorKind::TypeMismatch);
        assert!(encode_value(&mut out, PgType::Array(Scalar::Int4), &Value::Int4(1)).is_err());
        assert!(out.is_empty());
    }
}
