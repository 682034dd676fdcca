//! Wire values read to the bits a message keeps ([`Scalar::bits`](crate::proto::runtime::scalar::Scalar::bits)): one
//! value of a packable kind, and packed runs, one loop per wire type with
//! the conversion chosen once (see [`super::decode`]).

use crate::bytes::varint;
use crate::proto::error::WireError;
use crate::proto::runtime::schema::Kind;
use crate::proto::wire::{self, WireReader, FIXED32, FIXED64};

/// How many values of `kind` a packed run's bytes hold: the varints' last
/// bytes, or the length over the width (never more than the input holds,
/// even when the run turns out to be malformed).
pub(super) fn run_len(kind: Kind, run: &[u8]) -> usize {
    match kind.wire_type() {
        FIXED32 => run.len() / 4,
        FIXED64 => run.len() / 8,
        _ => run.iter().filter(|&&b| b < 0x80).count(),
    }
}

/// Read a packed run of `kind` (packable) into `out`, each value as
/// [`Scalar::bits`](crate::proto::runtime::scalar::Scalar::bits) gives it; one loop per wire type, the conversion
/// chosen once.
pub(super) fn read_run(
    pr: &mut WireReader<'_>,
    kind: Kind,
    out: &mut Vec<u64>,
) -> Result<(), WireError> {
    // Room for the most values the run's bytes can hold (a varint takes
    // a byte at least), so the loop never grows the buffer; the buffer
    // serves every run of a parse: its first size is not small.
    let most = match kind.wire_type() {
        FIXED32 => pr.rest().len() / 4,
        FIXED64 => pr.rest().len() / 8,
        _ => pr.rest().len(),
    };
    out.reserve(most.max(32));
    fn varints(
        pr: &mut WireReader<'_>,
        out: &mut Vec<u64>,
        conv: impl Fn(u64) -> u64,
    ) -> Result<(), WireError> {
        pr.varint_run(out, conv)
    }
    // One loop per kind, each converting with `varint_bits` or
    // `fixed32_bits` for that kind (the match inside folds away).
    match kind {
        Kind::Int32 | Kind::Enum(_) => varints(pr, out, |v| varint_bits(Kind::Int32, v)),
        Kind::Uint32 => varints(pr, out, |v| varint_bits(Kind::Uint32, v)),
        Kind::Sint32 => varints(pr, out, |v| varint_bits(Kind::Sint32, v)),
        Kind::Sint64 => varints(pr, out, |v| varint_bits(Kind::Sint64, v)),
        Kind::Bool => varints(pr, out, |v| varint_bits(Kind::Bool, v)),
        Kind::Int64 | Kind::Uint64 => varints(pr, out, |v| v),
        Kind::Fixed32 | Kind::Float | Kind::Sfixed32 => {
            while !pr.at_end() {
                out.push(fixed32_bits(kind, pr.fixed32()?));
            }
            Ok(())
        }
        Kind::Fixed64 | Kind::Sfixed64 | Kind::Double => {
            while !pr.at_end() {
                out.push(pr.fixed64()?);
            }
            Ok(())
        }
        // The decoder asks for packable kinds only.
        Kind::String | Kind::Bytes | Kind::Message(_) => Ok(()),
    }
}

/// One value of packable `kind` read to its [`Scalar::bits`](crate::proto::runtime::scalar::Scalar::bits).
#[inline(always)]
pub(super) fn value_bits(r: &mut WireReader<'_>, kind: Kind) -> Result<u64, WireError> {
    match kind.wire_type() {
        wire::FIXED32 => Ok(fixed32_bits(kind, r.fixed32()?)),
        wire::FIXED64 => r.fixed64(),
        _ => Ok(varint_bits(kind, r.varint()?)),
    }
}

/// The [`Scalar::bits`](crate::proto::runtime::scalar::Scalar::bits) of a varint `v` read for a field of `kind`.
#[inline(always)]
pub(super) fn varint_bits(kind: Kind, v: u64) -> u64 {
    match kind {
        Kind::Int32 | Kind::Enum(_) => v as i32 as i64 as u64,
        Kind::Uint32 => v as u32 as u64,
        Kind::Sint32 => varint::unzigzag(v & 0xFFFF_FFFF) as i32 as i64 as u64,
        Kind::Sint64 => varint::unzigzag(v) as u64,
        Kind::Bool => (v != 0) as u64,
        _ => v,
    }
}

/// The [`Scalar::bits`](crate::proto::runtime::scalar::Scalar::bits) of a four-byte value `v` read for a field of
/// `kind`.
#[inline(always)]
pub(super) fn fixed32_bits(kind: Kind, v: u32) -> u64 {
    if kind == Kind::Sfixed32 {
        v as i32 as i64 as u64
    } else {
        v.into()
    }
}
