//! The amber format, version 1: header layout and the first-byte table.
//!
//! `docs/spec/format.md` is the normative description; this module is its
//! single source of truth in code. Every frame is
//!
//! ```text
//! +------+---------+-------+------+----------------------+--------------+
//! | 0xAB | version | flags | 0x00 | body length, u32 LE  | body: 1 item |
//! +------+---------+-------+------+----------------------+--------------+
//! ```
//!
//! With `FLAG_LONG` set the u32 is zero and the length follows as a u64 LE.

/// First byte of every frame.
pub const MAGIC: u8 = 0xAB;
/// The format version this crate writes and reads.
pub const VERSION: u8 = 1;
/// Header size without and with the u64 length.
pub const HEADER_LEN: usize = 8;
pub const HEADER_LEN_LONG: usize = 16;
/// Header flag: the body length is a u64 after the first 8 bytes.
pub const FLAG_LONG: u8 = 0x01;

// Ranges that carry their value in the tag byte.
/// `0x00..=0x3F`: the integers 0 to 63.
pub const FIXINT_MAX: u8 = 0x3F;
/// `0x40..=0x5F`: a str of 0 to 31 UTF-8 bytes.
pub const FIXSTR: u8 = 0x40;
pub const FIXSTR_MAX_LEN: usize = 31;
/// `0x60..=0x6F`: a list of 0 to 15 items.
pub const FIXLIST: u8 = 0x60;
pub const FIXLIST_MAX_LEN: usize = 15;
/// `0x70..=0x7F`: a dict of 0 to 15 pairs.
pub const FIXDICT: u8 = 0x70;
pub const FIXDICT_MAX_LEN: usize = 15;
/// `0x80..=0x9F`: string-table entries 0 to 31.
pub const FIXREF: u8 = 0x80;
pub const FIXREF_MAX: usize = 31;
/// `0xA0..=0xA7`: a tuple of 0 to 7 items.
pub const FIXTUPLE: u8 = 0xA0;
pub const FIXTUPLE_MAX_LEN: usize = 7;
/// `0xE0..=0xFF`: the integers -32 to -1.
pub const NEGFIXINT: u8 = 0xE0;

// Single tags.
pub const NONE: u8 = 0xA8;
pub const FALSE: u8 = 0xA9;
pub const TRUE: u8 = 0xAA;
pub const INT8: u8 = 0xAB;
pub const INT16: u8 = 0xAC;
pub const INT32: u8 = 0xAD;
pub const INT64: u8 = 0xAE;
pub const BIGINT: u8 = 0xAF;
pub const FLOAT64: u8 = 0xB0;
pub const COMPLEX: u8 = 0xB1;
pub const STR: u8 = 0xB2;
pub const STR_DEF: u8 = 0xB3;
pub const STR_REF: u8 = 0xB4;
pub const STR_SURROGATES: u8 = 0xB5;
pub const BYTES: u8 = 0xB6;
pub const BYTEARRAY: u8 = 0xB7;
pub const LIST: u8 = 0xB8;
pub const TUPLE: u8 = 0xB9;
pub const DICT: u8 = 0xBA;
pub const SET: u8 = 0xBB;
pub const FROZENSET: u8 = 0xBC;
pub const DATE: u8 = 0xBD;
pub const TIME: u8 = 0xBE;
pub const DATETIME: u8 = 0xBF;
pub const TIMEDELTA: u8 = 0xC0;
pub const TZ_UTC: u8 = 0xC1;
pub const TZ_FIXED: u8 = 0xC2;
pub const TZ_ZONE: u8 = 0xC3;
pub const DECIMAL: u8 = 0xC4;
pub const UUID: u8 = 0xC5;
pub const FRACTION: u8 = 0xC6;
/// Most bytes of each FRACTION part's two's complement: a Fraction is
/// normalised with a gcd, whose time grows with the square of the size.
pub const FRACTION_PART_MAX_BYTES: usize = 4096;
/// The longest item a FRACTION part may take: a BIGINT of
/// `FRACTION_PART_MAX_BYTES` (tag, two-byte varint, bytes).
pub const FRACTION_PART_MAX_ITEM: usize = 1 + 2 + FRACTION_PART_MAX_BYTES;
pub const ORDERED_DICT: u8 = 0xC7;
pub const DEQUE: u8 = 0xC8;
pub const COUNTER: u8 = 0xC9;
pub const DEFAULTDICT: u8 = 0xCA;
pub const ENUM: u8 = 0xCB;
pub const OBJECT: u8 = 0xCC;
pub const NDARRAY: u8 = 0xCD;
pub const NPSCALAR: u8 = 0xCE;
pub const SHARE: u8 = 0xCF;
pub const MEMO_REF: u8 = 0xD0;
pub const REPLACE: u8 = 0xD1;
pub const BYTES_OOB: u8 = 0xD2;
pub const BYTEARRAY_OOB: u8 = 0xD3;
/// A registered object made first and then given its state (so it is
/// registered before its state in identity mode); OBJECT is built from it.
pub const OBJECT_FILL: u8 = 0xD4;
/// A dict written keys first (`n`, the `n` keys, then the `n` values) whose
/// key sequence becomes the next entry of the shape table.
pub const SHAPE_DEF: u8 = 0xD5;
/// A dict with the keys of shape table entry `s`: the index, then one value
/// per key.
pub const SHAPED: u8 = 0xD6;
/// A registered object written as pickle writes one: its class name, a base
/// (None, or a named tuple's fields) it is made from, then a state given to
/// it as pickle's BUILD does (`__setstate__`, or attributes and slots). It
/// is registered after its base and before its state in identity mode.
pub const OBJECT_STATE: u8 = 0xD7;
/// A table as an Arrow IPC stream: the table's kind (one of `ARROW_*`), an
/// extras item, flags (`ND_OOB`, `ARROW_DESCRIBED`), then a data part as
/// NDARRAY's.
pub const ARROW: u8 = 0xD8;
// 0xD9..=0xDF are reserved: a decoder rejects them.

/// The kinds of ARROW tables: what the Arrow stream is rebuilt as.
pub const ARROW_PA_TABLE: u8 = 0;
pub const ARROW_PA_BATCH: u8 = 1;
pub const ARROW_PD_FRAME: u8 = 2;
pub const ARROW_PD_SERIES: u8 = 3;
pub const ARROW_PL_FRAME: u8 = 4;
pub const ARROW_PL_SERIES: u8 = 5;
/// Kinds from this one on are unknown.
pub const ARROW_KINDS: u8 = 6;
/// ARROW flag: a pandas table (kinds 2 and 3) whose extras describe its
/// index, labels and columns (spec §6.14's rules); a reader that does not
/// know them would misread it, so it must refuse the flag.
pub const ARROW_DESCRIBED: u8 = 0x04;
/// UUID safety codes 0-2 (`uuid.SafeUUID`'s unknown, safe, unsafe); 3-255
/// are reserved.
pub const UUID_SAFETY_CODES: u8 = 3;

/// `flags` bits of TIME and DATETIME.
pub const DT_FOLD: u8 = 0x01;
pub const DT_TZ: u8 = 0x02;

/// REPLACE pads itself so that, replacing a one-byte SHARE marker after the
/// fact, it shifts what follows by a multiple of this (keeping array data
/// aligned); its pad count byte is followed by that many zero bytes.
pub const REPLACE_ALIGN: usize = 8;

/// `flags` bits of NDARRAY.
pub const ND_FORTRAN: u8 = 0x01;
pub const ND_OOB: u8 = 0x02;
/// The data part is one item, a LIST of the elements (in C order, or in
/// Fortran order with `ND_FORTRAN`), not bytes: NumPy's variable-width
/// strings (`StringDType`), whose dtype description is a dict starting with
/// `"kind": "T"`. Never with `ND_OOB`.
pub const ND_ITEMS: u8 = 0x04;
/// In-band array data starts at a multiple of this many bytes from the
/// start of the body (and so of the frame, whose header is 8 or 16 bytes),
/// so a zero-copy view of an aligned input is aligned.
pub const ND_ALIGN: usize = 8;

/// `defaultdict` factories, by code. Only these builtins can be encoded.
pub const DEFAULT_FACTORIES: [&str; 16] = [
    "None",
    "list",
    "dict",
    "set",
    "int",
    "float",
    "str",
    "tuple",
    "bytes",
    "frozenset",
    "bool",
    "complex",
    "bytearray",
    "collections.OrderedDict",
    "collections.deque",
    "collections.Counter",
];

/// What a first byte means, for decoders and for error messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lead {
    FixInt(i64),
    FixStr(usize),
    FixList(usize),
    FixDict(usize),
    FixRef(usize),
    FixTuple(usize),
    Tag(u8),
    Reserved(u8),
}

/// Classify a first byte.
#[inline(always)]
pub fn lead(b: u8) -> Lead {
    match b {
        0x00..=0x3F => Lead::FixInt(b as i64),
        0x40..=0x5F => Lead::FixStr((b - FIXSTR) as usize),
        0x60..=0x6F => Lead::FixList((b - FIXLIST) as usize),
        0x70..=0x7F => Lead::FixDict((b - FIXDICT) as usize),
        0x80..=0x9F => Lead::FixRef((b - FIXREF) as usize),
        0xA0..=0xA7 => Lead::FixTuple((b - FIXTUPLE) as usize),
        0xA8..=0xD8 => Lead::Tag(b),
        0xD9..=0xDF => Lead::Reserved(b),
        0xE0..=0xFF => Lead::FixInt(b as i8 as i64),
    }
}

/// A short human name for a tag byte, used in error messages.
pub fn tag_name(b: u8) -> &'static str {
    match lead(b) {
        Lead::FixInt(_) => "int",
        Lead::FixStr(_) => "str",
        Lead::FixList(_) => "list",
        Lead::FixDict(_) => "dict",
        Lead::FixRef(_) => "string reference",
        Lead::FixTuple(_) => "tuple",
        Lead::Reserved(_) => "reserved tag",
        Lead::Tag(t) => match t {
            NONE => "None",
            FALSE | TRUE => "bool",
            INT8 | INT16 | INT32 | INT64 | BIGINT => "int",
            FLOAT64 => "float",
            COMPLEX => "complex",
            STR | STR_DEF | STR_SURROGATES => "str",
            STR_REF => "string reference",
            BYTES | BYTES_OOB => "bytes",
            BYTEARRAY | BYTEARRAY_OOB => "bytearray",
            LIST => "list",
            TUPLE => "tuple",
            DICT | SHAPE_DEF | SHAPED => "dict",
            SET => "set",
            FROZENSET => "frozenset",
            DATE => "date",
            TIME => "time",
            DATETIME => "datetime",
            TIMEDELTA => "timedelta",
            TZ_UTC | TZ_FIXED | TZ_ZONE => "tzinfo",
            DECIMAL => "Decimal",
            UUID => "UUID",
            FRACTION => "Fraction",
            ORDERED_DICT => "OrderedDict",
            DEQUE => "deque",
            COUNTER => "Counter",
            DEFAULTDICT => "defaultdict",
            ENUM => "enum member",
            OBJECT | OBJECT_FILL | OBJECT_STATE => "registered object",
            NDARRAY => "ndarray",
            NPSCALAR => "numpy scalar",
            ARROW => "table",
            SHARE => "share marker",
            MEMO_REF => "shared reference",
            REPLACE => "replace marker",
            _ => "reserved tag",
        },
    }
}
