//! The encoder's plans: per message type, each field's step decided once
//! (what to write, whether it has presence, its tag's bytes), so that the
//! encoder reads each field's value in one look ([`super::encode`]).

use std::cell::OnceCell;

use crate::proto::runtime::schema::{Cardinality, Kind, Tables};

/// What a plan does for one field (see [`EncodePlans`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Op {
    /// A varint of the bits (int32, int64, uint32, uint64, enums).
    Varint,
    /// A bool's varint, 0 or 1.
    Bool,
    /// Zigzag of the low 32 bits (sint32).
    Sint32,
    /// Zigzag (sint64).
    Sint64,
    /// The low 4 bytes (fixed32, sfixed32, float).
    Fixed32,
    /// 8 bytes (fixed64, sfixed64, double).
    Fixed64,
    /// Bytes with their length (string, bytes).
    Text,
    /// A length-prefixed message (not a group, nor a `MessageSet` item).
    Message,
    /// A repeated string or bytes field: each value with its length and
    /// the step's tag.
    Texts,
    /// A repeated length-prefixed message field (not groups): each
    /// message with its length and the step's tag.
    Messages,
    /// Everything else: through the field's `FieldInfo`.
    General,
}

/// One field's step in its type's plan.
#[derive(Debug, Clone, Copy)]
pub(super) struct Step {
    /// The field's index in its type's `fields` (and the position of its
    /// value, [`FieldInfo::pos`]).
    pub(super) field: u32,
    /// The tag's varint bytes, as [`tag_bytes`] gives them.
    pub(super) tag: u64,
    /// How many bytes the tag takes (1 to 5).
    pub(super) tag_len: u8,
    pub(super) op: Op,
    /// Written at its zero value too (explicit presence).
    pub(super) presence: bool,
    pub(super) kind: Kind,
}

/// Per message type of a schema, the encoder's steps, fields in the
/// order they are written (backwards: highest number first), each with
/// what to do decided once: made on first use, kept with the schema by
/// the caller of [`encode_planned`].
pub struct EncodePlans {
    plans: Vec<OnceCell<Box<[Step]>>>,
}

impl EncodePlans {
    /// Plans for the types of `tables`, each made when first used.
    pub fn new(tables: &Tables) -> Self {
        EncodePlans {
            plans: (0..tables.messages.len())
                .map(|_| OnceCell::new())
                .collect(),
        }
    }

    #[inline]
    pub(super) fn of(&self, t: &Tables, ty: u32) -> &[Step] {
        match self.plans.get(ty as usize) {
            Some(p) => p.get_or_init(|| plan(t, ty)),
            None => &[],
        }
    }
}

/// Type `ty`'s steps.
fn plan(t: &Tables, ty: u32) -> Box<[Step]> {
    let fields = &t.messages[ty as usize].fields;
    let mut steps = Vec::with_capacity(fields.len());
    for (i, f) in fields.iter().enumerate().rev() {
        let op = match (f.card, f.kind) {
            _ if f.pos as usize != i || f.set_item => Op::General,
            (Cardinality::Singular { .. }, k) => match k {
                Kind::Int32 | Kind::Int64 | Kind::Uint32 | Kind::Uint64 | Kind::Enum(_) => {
                    Op::Varint
                }
                Kind::Bool => Op::Bool,
                Kind::Sint32 => Op::Sint32,
                Kind::Sint64 => Op::Sint64,
                Kind::Fixed32 | Kind::Sfixed32 | Kind::Float => Op::Fixed32,
                Kind::Fixed64 | Kind::Sfixed64 | Kind::Double => Op::Fixed64,
                Kind::String | Kind::Bytes => Op::Text,
                Kind::Message(_) if !f.delimited => Op::Message,
                Kind::Message(_) => Op::General,
            },
            (Cardinality::Repeated { .. }, Kind::String | Kind::Bytes) => Op::Texts,
            (Cardinality::Repeated { .. }, Kind::Message(_)) if !f.delimited => Op::Messages,
            _ => Op::General,
        };
        let presence = matches!(f.card, Cardinality::Singular { presence: true });
        let (tag, tag_len) = tag_bytes(f.number, f.kind.wire_type());
        steps.push(Step {
            field: i as u32,
            tag,
            tag_len,
            op,
            presence,
            kind: f.kind,
        });
    }
    steps.into_boxed_slice()
}

/// A tag's varint bytes and their count (1 to 5): the bytes in the top
/// bytes of a `u64`, little-endian, so that storing the word with its last
/// byte at the writer's head puts the tag there (see `RevBuf`).
pub(super) fn tag_bytes(num: u32, wt: u8) -> (u64, u8) {
    let mut v = ((num as u64) << 3) | wt as u64;
    let (mut out, mut n) = (0u64, 0u8);
    loop {
        let b = (v & 0x7F) as u8;
        v >>= 7;
        if v == 0 {
            out |= (b as u64) << (8 * n);
            n += 1;
            return (out << (8 * (8 - n as u32)), n);
        }
        out |= ((b | 0x80) as u64) << (8 * n);
        n += 1;
    }
}
