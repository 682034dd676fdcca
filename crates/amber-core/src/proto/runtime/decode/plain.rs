//! Reading a checked message whose fields are all plain ones.
//!
//! A message a parse kept as its bytes has been checked (see
//! [`RawMode::Check`](crate::proto::runtime::RawMode::Check)); building it
//! later cannot fail. Most such messages hold only singular numbers,
//! strings, bytes and sub-messages outside oneofs, each of which goes
//! straight into its field's place: [`plain_fields`] reads those with the
//! type's fast table and no builder between, and leaves every other message
//! to the decoder.

use crate::proto::runtime::schema::{Cardinality, FastOp, FieldInfo, Kind, Tables};
use crate::proto::wire::WireReader;

use super::decoder::number_bits;

/// One value [`plain_fields`] read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlainValue {
    /// A number, bool or enum, as [`Scalar::bits`](crate::proto::runtime::Scalar::bits) gives it.
    Bits(u64),
    /// A string or bytes value: where it lies in the input (start, end).
    Text(usize, usize),
    /// A sub-message: where its contents lie in the input (start, end).
    Message(usize, usize),
}

/// Read the fields of message `ty`, the bytes `s..e` of `data`, which a
/// decoder's check has passed: each handed to `visit` in wire order, with
/// its index in the type's field list, while every one is a singular field
/// outside a oneof of a kind the decoder reads on its fast path (a number,
/// bool, open enum, string, bytes or length-delimited sub-message). `true`:
/// all were. `false`: a field is not one of these, or its bytes are not as
/// the check left them, or `visit` said no (it returns whether it took the
/// value); the decoder must read the message instead, and what `visit` took
/// so far is to be dropped. Strings' UTF-8 is not checked again.
pub fn plain_fields(
    t: &Tables,
    ty: u32,
    data: &[u8],
    (s, e): (usize, usize),
    mut visit: impl FnMut(usize, PlainValue) -> bool,
) -> bool {
    let Some(info) = t.messages.get(ty as usize) else {
        return false;
    };
    // A type with other fields most likely has them set: the decoder reads
    // it, rather than this walk going part of the way first.
    if !info.plain {
        return false;
    }
    if s > e || e > data.len() {
        return false;
    }
    let mut r = WireReader::new(data).sub(s, e);
    while !r.at_end() {
        let Some(fe) = r.varint().ok().and_then(|tag| info.fast_entry(tag)) else {
            return false;
        };
        let pos = fe.pos as usize;
        // Every op is one `reads_plain` takes (the type is plain): a
        // sub-message is singular, and alone if in a oneof.
        let v = match fe.op {
            op if op.reads_number() => match number_bits(op, &mut r) {
                Ok(bits) => PlainValue::Bits(bits),
                Err(_) => return false,
            },
            FastOp::StrChecked | FastOp::Text => match r.len_prefixed() {
                Ok((a, b)) => PlainValue::Text(a, b),
                Err(_) => return false,
            },
            FastOp::Message => match r.len_prefixed() {
                Ok((a, b)) => PlainValue::Message(a, b),
                Err(_) => return false,
            },
            _ => return false,
        };
        if !visit(pos, v) {
            return false;
        }
    }
    true
}

/// Whether [`plain_fields`] reads field `f`, whose fast-table op is `op`
/// (`alone`: `f` is in no oneof, or alone in its own): a number, string or
/// bytes the table reads into its place (singular, alone, not a closed
/// enum: the table's own rule), or a length-delimited sub-message,
/// singular and alone.
pub(crate) fn reads_plain(f: &FieldInfo, op: FastOp, alone: bool) -> bool {
    match op {
        FastOp::StrChecked | FastOp::Text => true,
        FastOp::Message => {
            matches!(f.card, Cardinality::Singular { .. })
                && alone
                && matches!(f.kind, Kind::Message(_))
        }
        op => op.reads_number(),
    }
}
