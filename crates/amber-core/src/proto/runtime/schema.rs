//! Schema tables: a
//! [`FileDescriptorSet`](crate::proto::FileDescriptorSet) compiled into
//! flat, indexed per-message field tables with every editions feature
//! resolved, so the decoder and encoder never look a name up at run time.
//! Built by [`Tables::from_set`] (see [`tables`](super::tables)).

use std::collections::HashMap;

/// The scalar or composite kind of a field's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `double`.
    Double,
    /// `float`.
    Float,
    /// `int64`.
    Int64,
    /// `uint64`.
    Uint64,
    /// `int32`.
    Int32,
    /// `fixed64`.
    Fixed64,
    /// `fixed32`.
    Fixed32,
    /// `bool`.
    Bool,
    /// `string`.
    String,
    /// `bytes`.
    Bytes,
    /// `uint32`.
    Uint32,
    /// `sfixed32`.
    Sfixed32,
    /// `sfixed64`.
    Sfixed64,
    /// `sint32`.
    Sint32,
    /// `sint64`.
    Sint64,
    /// An enum: the index into [`Tables::enums`].
    Enum(u32),
    /// A message or group: the index into [`Tables::messages`].
    Message(u32),
}

impl Kind {
    /// The wire type of one value (`LEN` for strings, bytes and messages,
    /// whatever the field's delimited encoding).
    pub fn wire_type(self) -> u8 {
        use crate::proto::wire::{FIXED32, FIXED64, LEN, VARINT};
        match self {
            Kind::Double | Kind::Fixed64 | Kind::Sfixed64 => FIXED64,
            Kind::Float | Kind::Fixed32 | Kind::Sfixed32 => FIXED32,
            Kind::String | Kind::Bytes | Kind::Message(_) => LEN,
            _ => VARINT,
        }
    }

    /// True for kinds a repeated field may pack (numbers, bools, enums).
    pub fn packable(self) -> bool {
        !matches!(self, Kind::String | Kind::Bytes | Kind::Message(_))
    }
}

/// How many values a field holds and how they are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cardinality {
    /// One value. `presence`: explicit presence (proto2 `optional`, proto3
    /// `optional`, messages, oneof members, editions `EXPLICIT` and
    /// `LEGACY_REQUIRED`); without it a zero value is not written.
    Singular {
        /// Whether the field tracks presence.
        presence: bool,
    },
    /// A list. `packed`: written packed (the decoder accepts both forms for
    /// any packable kind).
    Repeated {
        /// Written as one packed `LEN` field.
        packed: bool,
    },
    /// A map: the field's kind is the entry message, whose fields 1 and 2
    /// are [`MessageInfo::map_entry`]'s key and value.
    Map,
}

/// A field's default value (proto2 `[default = ...]`, or the kind's zero).
#[derive(Debug, Clone, PartialEq)]
pub enum DefaultValue {
    /// Signed integers.
    Int(i64),
    /// Unsigned integers.
    Uint(u64),
    /// Floats.
    Float(f64),
    /// Bools.
    Bool(bool),
    /// Strings.
    Str(String),
    /// Bytes.
    Bytes(Vec<u8>),
    /// Enums: the number.
    Enum(i32),
    /// Messages have no default value.
    None,
}

/// One field of a message type.
#[derive(Debug, Clone)]
pub struct FieldInfo {
    /// Field number.
    pub number: u32,
    /// Short name.
    pub name: String,
    /// The JSON name.
    pub json_name: String,
    /// Kind of the values.
    pub kind: Kind,
    /// Singular, repeated or map.
    pub card: Cardinality,
    /// Index into [`MessageInfo::oneofs`] (synthetic proto3 `optional`
    /// oneofs included).
    pub oneof: Option<u32>,
    /// Message values are written as groups (proto2 groups, editions
    /// `message_encoding = DELIMITED`).
    pub delimited: bool,
    /// `string` values must be valid UTF-8 (proto3, editions `VERIFY`).
    pub utf8_verify: bool,
    /// The field's enum is closed (see [`EnumInfo::closed`]).
    pub closed_enum: bool,
    /// The default value.
    pub default: DefaultValue,
    /// proto2 `required` / editions `LEGACY_REQUIRED` (not enforced).
    pub required: bool,
    /// An extension, declared elsewhere and added to this type's fields:
    /// its `name` and `json_name` are its full name in brackets
    /// (`[pkg.ext]`), as the text format and ProtoJSON write it.
    pub extension: bool,
    /// An extension of a `MessageSet` (see [`MessageInfo::message_set`]),
    /// a singular message: written as an item of group 1, and named in the
    /// text format by its message type's full name.
    pub set_item: bool,
    /// Its position in its message type's `fields` (see
    /// [`MessageInfo::position`]).
    pub pos: u32,
}

/// One message type.
#[derive(Debug, Clone)]
pub struct MessageInfo {
    /// Fully qualified name, without the leading dot.
    pub full_name: String,
    /// Fields sorted by number.
    pub fields: Vec<FieldInfo>,
    /// Oneof names, in declaration order.
    pub oneofs: Vec<String>,
    /// For a map entry type: true (fields 1 and 2 are key and value).
    pub map_entry: bool,
    /// `option message_set_wire_format = true`: the type's fields are
    /// message extensions, each written as an item of a group numbered 1
    /// (its number as field 2, its bytes as field 3), as protobuf's
    /// legacy `MessageSet` is.
    pub message_set: bool,
    /// Indexes into `fields` in declaration order (the order of the
    /// `.proto` file: ProtoJSON prints unset fields in it).
    pub decl_order: Vec<u32>,
    /// `dense[n]` is the index + 1 of field number `n` in `fields` (0: none)
    /// for numbers below [`DENSE_LIMIT`].
    pub(crate) dense: Vec<u16>,
    /// The decoder's table: `fast[n]` says how field number `n` (below
    /// [`DENSE_LIMIT`]) is read when it comes with the wire type its entry
    /// names; any other tag takes the decoder's general path.
    pub(crate) fast: Vec<Fast>,
    /// Every field is one [`plain_fields`](crate::proto::runtime::plain_fields)
    /// reads (see `decode::plain::reads_plain`): a checked message of the type is
    /// read without a builder unless its bytes hold something else.
    pub(crate) plain: bool,
}

/// How the decoder reads one field number of a message type in the common
/// case: the wire type that case comes with (a tag of another wire type,
/// or a number without an entry, takes the general path), what to do, and
/// where the field is in `fields`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fast {
    /// The wire type the op reads; [`Fast::NONE`] for none.
    pub(crate) wt: u8,
    /// What to do with the value.
    pub(crate) op: FastOp,
    /// The field's index in `fields`.
    pub(crate) pos: u16,
}

impl Fast {
    /// No wire type: every tag of the number takes the general path.
    pub(crate) const NONE: u8 = 0xFF;
    /// The entry of a number without a fast case.
    pub(crate) const SLOW: Fast = Fast {
        wt: Fast::NONE,
        op: FastOp::Slow,
        pos: 0,
    };

    /// The entry of field `f` at index `pos`; `alone`: `f` is in no oneof,
    /// or the only member of its own (setting it clears no other field).
    pub(crate) fn of(f: &FieldInfo, pos: u16, alone: bool) -> Fast {
        use crate::proto::wire::LEN;
        let plain = matches!(f.card, Cardinality::Singular { .. }) && alone && !f.closed_enum;
        let op = match (f.card, f.kind) {
            (_, Kind::Message(_)) if f.delimited => FastOp::Slow,
            (Cardinality::Map, Kind::Message(_)) => FastOp::Map,
            (_, Kind::Message(_)) => FastOp::Message,
            (Cardinality::Repeated { .. }, k) if k.packable() && !f.closed_enum => {
                return Fast {
                    wt: LEN,
                    op: FastOp::Packed,
                    pos,
                };
            }
            (Cardinality::Repeated { .. }, Kind::String) if f.utf8_verify => FastOp::PushStrChecked,
            (Cardinality::Repeated { .. }, Kind::String | Kind::Bytes) => FastOp::PushText,
            _ if !plain => FastOp::Slow,
            (_, Kind::Int32 | Kind::Enum(_)) => FastOp::Int32,
            (_, Kind::Uint32) => FastOp::Uint32,
            (_, Kind::Sint32) => FastOp::Sint32,
            (_, Kind::Sint64) => FastOp::Sint64,
            (_, Kind::Bool) => FastOp::Bool,
            (_, Kind::Int64 | Kind::Uint64) => FastOp::Varint64,
            (_, Kind::Fixed32 | Kind::Float) => FastOp::Fixed32,
            (_, Kind::Sfixed32) => FastOp::Sfixed32,
            (_, Kind::Fixed64 | Kind::Sfixed64 | Kind::Double) => FastOp::Fixed64,
            (_, Kind::String) if f.utf8_verify => FastOp::StrChecked,
            (_, Kind::String | Kind::Bytes) => FastOp::Text,
        };
        match op {
            FastOp::Slow => Fast::SLOW,
            op => Fast {
                wt: f.kind.wire_type(),
                op,
                pos,
            },
        }
    }
}

/// What the decoder does with a field's value on its fast path. The
/// scalar ops are for singular fields outside oneofs (or alone in one, as a
/// proto3 `optional` field is) whose every value is kept (not a closed
/// enum): the value goes straight to the field's slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FastOp {
    /// The general path.
    Slow,
    /// `int32` and open enums: a varint, sign-extended from 32 bits.
    Int32,
    /// `uint32`: a varint's low 32 bits.
    Uint32,
    /// `sint32`: ZigZag of a varint's low 32 bits.
    Sint32,
    /// `sint64`: ZigZag.
    Sint64,
    /// `bool`.
    Bool,
    /// `int64`, `uint64`: the varint as read.
    Varint64,
    /// `fixed32`, `float`.
    Fixed32,
    /// `sfixed32`, sign-extended.
    Sfixed32,
    /// `fixed64`, `sfixed64`, `double`.
    Fixed64,
    /// A `string` whose UTF-8 is checked.
    StrChecked,
    /// `bytes`, or a `string` taken as it is.
    Text,
    /// A repeated `string` whose UTF-8 is checked: one value appended.
    PushStrChecked,
    /// A repeated `bytes`, or `string` taken as it is: one value appended.
    PushText,
    /// A packed run of a repeated number field (wire type `LEN`).
    Packed,
    /// A length-delimited message, singular or repeated.
    Message,
    /// A map entry.
    Map,
}

/// Field numbers below this are looked up in a dense array.
pub const DENSE_LIMIT: u32 = 256;

impl FastOp {
    /// An op that reads a number into its field's place (see
    /// `decode::decoder::number_bits`).
    #[inline(always)]
    pub(crate) fn reads_number(self) -> bool {
        matches!(
            self,
            FastOp::Int32
                | FastOp::Uint32
                | FastOp::Sint32
                | FastOp::Sint64
                | FastOp::Bool
                | FastOp::Varint64
                | FastOp::Fixed32
                | FastOp::Sfixed32
                | FastOp::Fixed64
        )
    }
}

impl MessageInfo {
    /// Whether every field of the type is one
    /// [`plain_fields`](crate::proto::runtime::plain_fields) reads.
    #[inline]
    pub fn plain(&self) -> bool {
        self.plain
    }

    /// The fast-table entry that reads a field of tag `tag` (number and
    /// wire type), if the table has one for that number and wire type.
    #[inline(always)]
    pub(crate) fn fast_entry(&self, tag: u64) -> Option<Fast> {
        let e = *self.fast.get((tag >> 3) as usize)?;
        (e.wt as u64 == tag & 7).then_some(e)
    }

    /// The index into `fields` of field number `num`.
    #[inline]
    pub fn find(&self, num: u32) -> Option<usize> {
        if num < DENSE_LIMIT {
            match self.dense.get(num as usize) {
                Some(&i) if i > 0 => Some(i as usize - 1),
                _ => None,
            }
        } else {
            self.fields.binary_search_by_key(&num, |f| f.number).ok()
        }
    }

    /// The position in `fields` of `f`, a reference into this type's
    /// `fields` (what the decoder and encoder pass to builders and
    /// sources): its own `pos`, once its address is checked to be there.
    /// A field from elsewhere is looked up by number.
    #[inline]
    pub fn position(&self, f: &FieldInfo) -> usize {
        let at = f.pos as usize;
        if at < self.fields.len() && std::ptr::eq(&self.fields[at], f) {
            at
        } else {
            self.find(f.number).unwrap_or(usize::MAX)
        }
    }

    /// The field with number `num`.
    pub fn field(&self, num: u32) -> Option<&FieldInfo> {
        self.find(num).map(|i| &self.fields[i])
    }
}

/// One enum type.
#[derive(Debug, Clone)]
pub struct EnumInfo {
    /// Fully qualified name, without the leading dot.
    pub full_name: String,
    /// Closed (proto2, editions `enum_type = CLOSED`): a value outside
    /// `values` read from the wire goes to the unknown fields. Open (proto3,
    /// editions `OPEN`): any number is accepted.
    pub closed: bool,
    /// The declared numbers, sorted, without duplicates.
    pub values: Vec<i32>,
    /// Value names with their numbers, in declaration order.
    pub names: Vec<(String, i32)>,
}

impl EnumInfo {
    /// Whether `v` is a declared number.
    pub fn contains(&self, v: i32) -> bool {
        self.values.binary_search(&v).is_ok()
    }
}

/// Every message and enum type of a descriptor set.
#[derive(Debug, Clone, Default)]
pub struct Tables {
    /// Message types, in the order of the files and their nesting.
    pub messages: Vec<MessageInfo>,
    /// Enum types.
    pub enums: Vec<EnumInfo>,
    pub(crate) names: Names,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Names {
    pub(crate) messages: HashMap<String, u32>,
    pub(crate) enums: HashMap<String, u32>,
}

impl Tables {
    /// The index of a message type by its full name (with or without the
    /// leading dot).
    pub fn message_index(&self, name: &str) -> Option<u32> {
        let n = if name.starts_with('.') {
            name.to_string()
        } else {
            format!(".{name}")
        };
        self.names.messages.get(&n).copied()
    }

    /// The message type at `index`.
    pub fn message(&self, index: u32) -> &MessageInfo {
        &self.messages[index as usize]
    }
}
