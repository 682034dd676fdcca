//! PostgreSQL's types by OID, and their binary send formats.
//!
//! [`Scalar`] names the element types amber reads and writes, with their
//! OIDs from PostgreSQL's `pg_type.dat` (checked against it); [`PgType`] is a
//! scalar or a one-level array of one (PostgreSQL has no arrays of arrays:
//! a multidimensional array is one array type). Each submodule holds one
//! family's encoders (append the send format to a `Vec<u8>`, without the
//! length word) and decoders (checked: exact lengths, valid ranges):
//!
//! - [`numbers`]: bool, int2, int4, int8, oid, float4, float8;
//! - [`text`]: text, varchar, bpchar, name, "char", json, jsonb, bytea, uuid;
//! - [`datetime`]: date, time, timetz, timestamp, timestamptz, interval, and
//!   calendar helpers;
//! - [`numeric`]: numeric to and from a sign, decimal digits and exponent;
//! - [`net`]: inet and cidr;
//! - [`array`]: arrays of any of these;
//! - `oid`: [`Scalar`] and [`PgType`] themselves (re-exported here).
//!
//! [`decode_value`] and [`encode_value`] dispatch on the type for callers
//! that hold a [`Value`].

pub mod array;
pub mod datetime;
pub mod net;
pub mod numbers;
pub mod numeric;
mod oid;
pub mod text;
mod value;

pub use oid::{PgType, Scalar};
pub use value::{decode_value, encode_value, Value};
