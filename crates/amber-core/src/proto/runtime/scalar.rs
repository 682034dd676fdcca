//! [`Scalar`], one value of a scalar or enum field as the decoder gives it
//! and the encoder takes it, with the zero of each kind.

use crate::proto::runtime::schema::{FieldInfo, Kind};

/// One decoded scalar value. Strings borrow from the input.
///
/// The tag is a whole word (`repr(u64)`), so that every payload starts at
/// byte 8: with a one-byte tag a `bool` sits at byte 1, and the compiler
/// moves a `Scalar` (through `Result` and `Option`, on the decoder's hot
/// path) as its tag and then bytes 1 to 23, an unaligned load over the
/// narrower stores just made, which the CPU cannot forward from its store
/// buffer: a stall of about a dozen cycles per move.
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(u64)]
pub enum Scalar<'a> {
    /// `int32`, `sint32`, `sfixed32`.
    I32(i32),
    /// `int64`, `sint64`, `sfixed64`.
    I64(i64),
    /// `uint32`, `fixed32`.
    U32(u32),
    /// `uint64`, `fixed64`.
    U64(u64),
    /// `float`.
    F32(f32),
    /// `double`.
    F64(f64),
    /// `bool`.
    Bool(bool),
    /// `string` (checked UTF-8 where the field verifies it; otherwise the
    /// bytes as they are, which may not be UTF-8).
    Str(&'a [u8]),
    /// `bytes`.
    Bytes(&'a [u8]),
    /// An enum's number (declared, or any number for an open enum).
    Enum(i32),
}

impl Scalar<'_> {
    /// A number, bool or enum as the 64 bits a value of field kind `kind`
    /// is kept in by a source or builder that stores it natively:
    /// integers and enums sign- or zero-extended, a `double` as its bits,
    /// a `float` as its own 32 bits (a signaling NaN's payload is kept, as
    /// protobuf keeps it, where widening to `f64` would quiet it), a bool
    /// as 0 or 1. `None` for strings and bytes.
    #[inline]
    pub fn bits(self, kind: Kind) -> Option<u64> {
        Some(match (self, kind) {
            (Scalar::F32(v), Kind::Float) => v.to_bits().into(),
            (Scalar::F64(v), Kind::Float) => (v as f32).to_bits().into(),
            (Scalar::I32(v) | Scalar::Enum(v), _) => v as i64 as u64,
            (Scalar::I64(v), _) => v as u64,
            (Scalar::U32(v), _) => v.into(),
            (Scalar::U64(v), _) => v,
            (Scalar::F32(v), _) => f64::from(v).to_bits(),
            (Scalar::F64(v), _) => v.to_bits(),
            (Scalar::Bool(v), _) => v.into(),
            (Scalar::Str(_) | Scalar::Bytes(_), _) => return None,
        })
    }

    /// The value of `kind` whose [`bits`](Scalar::bits) are `bits`;
    /// `None` for a kind that is not [packable](Kind::packable).
    #[inline]
    pub fn from_bits(kind: Kind, bits: u64) -> Option<Scalar<'static>> {
        Some(match kind {
            Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => Scalar::I32(bits as i32),
            Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => Scalar::I64(bits as i64),
            Kind::Uint32 | Kind::Fixed32 => Scalar::U32(bits as u32),
            Kind::Uint64 | Kind::Fixed64 => Scalar::U64(bits),
            Kind::Float => Scalar::F32(f32::from_bits(bits as u32)),
            Kind::Double => Scalar::F64(f64::from_bits(bits)),
            Kind::Bool => Scalar::Bool(bits != 0),
            Kind::Enum(_) => Scalar::Enum(bits as i32),
            Kind::String | Kind::Bytes | Kind::Message(_) => return None,
        })
    }
}

/// A kind's zero value (a missing map key or value).
pub fn zero(f: &FieldInfo) -> Scalar<'static> {
    match f.kind {
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => Scalar::I32(0),
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => Scalar::I64(0),
        Kind::Uint32 | Kind::Fixed32 => Scalar::U32(0),
        Kind::Uint64 | Kind::Fixed64 => Scalar::U64(0),
        Kind::Float => Scalar::F32(0.0),
        Kind::Double => Scalar::F64(0.0),
        Kind::Bool => Scalar::Bool(false),
        Kind::String => Scalar::Str(b""),
        Kind::Bytes | Kind::Message(_) => Scalar::Bytes(b""),
        Kind::Enum(_) => Scalar::Enum(0),
    }
}

/// Whether a value is its kind's zero (by bits for floats).
pub fn is_zero(s: Scalar<'_>) -> bool {
    match s {
        Scalar::I32(v) | Scalar::Enum(v) => v == 0,
        Scalar::I64(v) => v == 0,
        Scalar::U32(v) => v == 0,
        Scalar::U64(v) => v == 0,
        Scalar::F32(v) => v.to_bits() == 0,
        Scalar::F64(v) => v.to_bits() == 0,
        Scalar::Bool(v) => !v,
        Scalar::Str(b) | Scalar::Bytes(b) => b.is_empty(),
    }
}
