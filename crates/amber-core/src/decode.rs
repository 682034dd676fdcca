//! The generic decoder: walks a frame and asks a [`Build`] implementation to
//! make each value. All format rules live here (tags, lengths, the string
//! table, shared references, limits); builders only construct values.
//!
//! Guarantees for any input: no panic, time linear in the input, and no
//! allocation sized by a header before the bytes it describes are present
//! (counts are checked against what is left; see [`Reader::count`]).

use crate::error::{key_segment, DecodeError, PathSeg};
use crate::format::{self as f, Lead};
use crate::reader::Reader;

pub type Res<T, E> = Result<T, DecodeError<E>>;

/// Limits a decoder enforces.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Containers nested deeper than this are rejected.
    pub max_depth: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_depth: DEFAULT_MAX_DEPTH,
        }
    }
}

/// The default nesting limit, shared with the encoder.
pub const DEFAULT_MAX_DEPTH: usize = 1000;

/// Kinds of sequence a builder makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeqKind {
    List,
    /// A list registered before its items (identity mode): visible through
    /// shared references while it fills, so items are appended.
    SharedList,
    Tuple,
    Set,
    FrozenSet,
    Deque,
}

/// Kinds of mapping a builder makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DictKind {
    Dict,
    Ordered,
    Counter,
    /// A defaultdict; the index into [`crate::format::DEFAULT_FACTORIES`].
    Default(u8),
}

/// Where an array's bytes are.
#[derive(Debug, Clone, Copy)]
pub enum NdData<'a> {
    /// Inside the frame, at `offset` from the frame's start.
    Inline { bytes: &'a [u8], offset: usize },
    /// In the caller's out-of-band buffer number `index`.
    OutOfBand { index: usize },
}

/// A decoded array header.
pub struct NdArray<'a, V> {
    pub dtype: V,
    pub shape: Vec<u64>,
    pub fortran: bool,
    pub data: NdData<'a>,
}

/// A datetime's fields.
pub struct DateTimeParts<V> {
    pub year: u16,
    pub month: u8,
    pub day: u8,
    pub hour: u8,
    pub minute: u8,
    pub second: u8,
    pub microsecond: u32,
    pub fold: bool,
    pub tz: Option<V>,
}

/// Makes values for the decoder. `V` is an owned value; cloning it must give
/// another handle to the same object (the string table and shared references
/// hand out clones).
pub trait Build {
    type V: Clone;
    type Err;
    /// A registered class, as resolved from its name.
    type Class;

    fn none(&mut self) -> Result<Self::V, Self::Err>;
    fn bool(&mut self, v: bool) -> Result<Self::V, Self::Err>;
    fn int(&mut self, v: i64) -> Result<Self::V, Self::Err>;
    /// Little-endian two's complement, shortest form checked by the decoder.
    fn bigint(&mut self, le: &[u8]) -> Result<Self::V, Self::Err>;
    fn float(&mut self, v: f64) -> Result<Self::V, Self::Err>;
    fn complex(&mut self, re: f64, im: f64) -> Result<Self::V, Self::Err>;
    /// Valid UTF-8; `ascii` says every byte is below 0x80.
    fn str(&mut self, s: &str, ascii: bool) -> Result<Self::V, Self::Err>;
    /// UTF-8 in which lone surrogates appear as 3-byte sequences.
    fn str_surrogates(&mut self, raw: &[u8]) -> Result<Self::V, Self::Err>;
    /// `offset` is where `b` starts in the frame, for zero-copy views.
    fn bytes(&mut self, b: &[u8], offset: usize, mutable: bool) -> Result<Self::V, Self::Err>;
    fn bytes_oob(&mut self, index: usize, mutable: bool) -> Result<Self::V, Self::Err>;

    /// Start a sequence of `n` items (for SharedList, `n` is a hint: items
    /// are appended, the list being visible while it fills).
    fn seq_begin(&mut self, kind: SeqKind, n: usize) -> Result<Self::V, Self::Err>;
    fn seq_item(
        &mut self,
        seq: &Self::V,
        kind: SeqKind,
        i: usize,
        item: Self::V,
    ) -> Result<(), Self::Err>;
    fn seq_end(&mut self, seq: Self::V, kind: SeqKind) -> Result<Self::V, Self::Err>;
    /// A deque is a sequence whose `maxlen` comes first.
    fn deque_begin(&mut self, maxlen: Self::V) -> Result<Self::V, Self::Err>;

    fn dict_begin(&mut self, kind: DictKind, n: usize) -> Result<Self::V, Self::Err>;
    fn dict_item(&mut self, dict: &Self::V, key: Self::V, value: Self::V) -> Result<(), Self::Err>;

    fn date(&mut self, year: u16, month: u8, day: u8) -> Result<Self::V, Self::Err>;
    fn time(&mut self, parts: DateTimeParts<Self::V>) -> Result<Self::V, Self::Err>;
    fn datetime(&mut self, parts: DateTimeParts<Self::V>) -> Result<Self::V, Self::Err>;
    fn timedelta(&mut self, days: i32, seconds: i32, micros: i32) -> Result<Self::V, Self::Err>;
    fn tz_utc(&mut self) -> Result<Self::V, Self::Err>;
    fn tz_fixed(&mut self, offset_us: i64, name: Self::V) -> Result<Self::V, Self::Err>;
    fn tz_zone(&mut self, key: Self::V) -> Result<Self::V, Self::Err>;

    /// `s` is ASCII.
    fn decimal(&mut self, s: &str) -> Result<Self::V, Self::Err>;
    fn uuid(&mut self, bytes: [u8; 16], safe: u8) -> Result<Self::V, Self::Err>;
    fn fraction(&mut self, num: Self::V, den: Self::V) -> Result<Self::V, Self::Err>;

    /// Look a class up by its registered name; unregistered names are errors.
    fn class(&mut self, name: &Self::V) -> Result<Self::Class, Self::Err>;
    fn enum_member(&mut self, class: &Self::Class, value: Self::V) -> Result<Self::V, Self::Err>;
    /// OBJECT_FILL: make an instance to fill; refuse classes built from state.
    fn object_new(&mut self, class: &Self::Class) -> Result<Self::V, Self::Err>;
    fn object_fill(
        &mut self,
        class: &Self::Class,
        obj: &Self::V,
        state: Self::V,
    ) -> Result<(), Self::Err>;
    /// OBJECT: build an instance from its state; refuse classes made first.
    fn object_build(&mut self, class: &Self::Class, state: Self::V) -> Result<Self::V, Self::Err>;
    /// OBJECT_STATE: make an instance from its base (None for classes made
    /// empty, the fields of a named tuple).
    fn object_base(&mut self, class: &Self::Class, base: Self::V) -> Result<Self::V, Self::Err>;
    /// OBJECT_STATE: give a made instance its state, as pickle's BUILD does.
    fn object_setstate(
        &mut self,
        class: &Self::Class,
        obj: &Self::V,
        state: Self::V,
    ) -> Result<(), Self::Err>;

    fn ndarray(&mut self, array: NdArray<'_, Self::V>) -> Result<Self::V, Self::Err>;
    fn npscalar(&mut self, dtype: Self::V, raw: &[u8]) -> Result<Self::V, Self::Err>;

    /// Render a dict key for an error path (`None` if it is not a str).
    fn key_str(&self, key: &Self::V) -> Option<String>;
}

/// A parsed frame header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub header_len: usize,
    pub body_len: u64,
}

impl Header {
    /// Header plus body length; `None` if that does not fit in a u64.
    pub fn frame_len(&self) -> Option<u64> {
        self.body_len.checked_add(self.header_len as u64)
    }
}

/// Parse a frame header from the front of `data`, which needs at least
/// [`f::HEADER_LEN`] bytes (16 when the long flag is set).
pub fn parse_header<E>(data: &[u8]) -> Res<Header, E> {
    let mut r = Reader::new(data);
    let magic = r.u8("header")?;
    if magic != f::MAGIC {
        let hint = if magic == 0x80 {
            " (this looks like a pickle)"
        } else {
            ""
        };
        return Err(DecodeError::format(
            0,
            format!(
                "not amber data: first byte is 0x{magic:02x}, expected 0x{:02x}{hint}",
                f::MAGIC
            ),
        ));
    }
    let version = r.u8("header")?;
    if version != f::VERSION {
        return Err(DecodeError::format(
            1,
            format!(
                "unsupported format version {version} (this build reads version {})",
                f::VERSION
            ),
        ));
    }
    let flags = r.u8("header")?;
    if flags & !f::FLAG_LONG != 0 {
        return Err(DecodeError::format(
            2,
            format!("unknown header flags 0x{flags:02x}"),
        ));
    }
    if r.u8("header")? != 0 {
        return Err(DecodeError::format(3, "reserved header byte is not zero"));
    }
    let short = u32::from_le_bytes(r.array::<4, E>("header")?);
    if flags & f::FLAG_LONG == 0 {
        return Ok(Header {
            header_len: f::HEADER_LEN,
            body_len: short as u64,
        });
    }
    if short != 0 {
        return Err(DecodeError::format(
            4,
            "long header must have a zero short length",
        ));
    }
    let long = u64::from_le_bytes(r.array::<8, E>("header")?);
    let header = Header {
        header_len: f::HEADER_LEN_LONG,
        body_len: long,
    };
    if header.frame_len().is_none() {
        return Err(DecodeError::format(
            8,
            format!("body length {long} is too large"),
        ));
    }
    Ok(header)
}

/// Decode a frame that must fill `data` exactly.
pub fn decode<B: Build>(data: &[u8], builder: &mut B, limits: Limits) -> Res<B::V, B::Err> {
    let header = parse_header(data)?;
    // parse_header refuses lengths whose sum would overflow.
    let frame_len = header.frame_len().unwrap_or(u64::MAX);
    if (data.len() as u64) < frame_len {
        return Err(DecodeError::format(
            data.len(),
            format!(
                "truncated frame: header says {frame_len} bytes, got {}",
                data.len()
            ),
        ));
    }
    if (data.len() as u64) > frame_len {
        return Err(DecodeError::format(
            frame_len as usize,
            format!(
                "{} bytes after the end of the frame",
                data.len() as u64 - frame_len
            ),
        ));
    }
    let mut w = Walker {
        r: Reader::new(data),
        b: builder,
        strings: Vec::new(),
        shapes: Vec::new(),
        shape_keys: Vec::new(),
        memo: Vec::new(),
        depth: 0,
        limits,
    };
    w.r.take::<B::Err>(header.header_len, "header")?;
    let v = w.item()?;
    if !w.r.is_empty() {
        return Err(DecodeError::format(
            w.r.pos(),
            format!("{} bytes left in the body after its item", w.r.remaining()),
        ));
    }
    Ok(v)
}

struct Walker<'a, 'b, B: Build> {
    r: Reader<'a>,
    b: &'b mut B,
    /// Strings defined by STR_DEF, for STR_REF and FIXREF.
    strings: Vec<B::V>,
    /// Shapes defined by SHAPE_DEF, for SHAPED: where each one's keys are in
    /// `shape_keys`, and how many.
    shapes: Vec<(usize, usize)>,
    shape_keys: Vec<B::V>,
    /// Objects registered by SHARE, for MEMO_REF and REPLACE.
    memo: Vec<B::V>,
    depth: usize,
    limits: Limits,
}

macro_rules! build {
    ($self:ident, $at:expr, $call:expr) => {
        $call.map_err(|e| DecodeError::build($at, e))
    };
}

impl<'a, B: Build> Walker<'a, '_, B> {
    /// One item. The commonest leaves are decoded inline in the caller's
    /// loop; everything else goes to `item_inner`, which is large and not
    /// inlined (its frame would be paid by every leaf otherwise).
    #[inline(always)]
    fn item(&mut self) -> Res<B::V, B::Err> {
        let at = self.r.pos();
        let Some(tag) = self.r.peek() else {
            return self.item_inner(false);
        };
        match tag {
            0x00..=0x3F | 0xE0..=0xFF => {
                self.r.skip(1);
                build!(self, at, self.b.int(tag as i8 as i64))
            }
            0x40..=0x5F => {
                self.r.skip(1);
                self.str_body((tag - f::FIXSTR) as usize, at)
            }
            0x80..=0x9F => {
                self.r.skip(1);
                self.string_ref((tag - f::FIXREF) as usize, at)
            }
            f::NONE => {
                self.r.skip(1);
                build!(self, at, self.b.none())
            }
            f::FALSE | f::TRUE => {
                self.r.skip(1);
                build!(self, at, self.b.bool(tag == f::TRUE))
            }
            f::FLOAT64 if self.r.remaining() >= 9 => {
                self.r.skip(1);
                let v = f64::from_le_bytes(self.r.array("float")?);
                build!(self, at, self.b.float(v))
            }
            _ => self.item_inner(false),
        }
    }

    #[inline(never)]
    fn item_inner(&mut self, shared: bool) -> Res<B::V, B::Err> {
        let at = self.r.pos();
        let tag = self.r.u8("item")?;
        // Whether the value was registered before its contents were read.
        let mut early = false;
        let v = match f::lead(tag) {
            Lead::FixInt(i) => {
                // (0..=63 and -32..=-1; the inline path in `item` handles
                // these unless they follow a SHARE marker.)
                build!(self, at, self.b.int(i))?
            }
            Lead::FixStr(n) => self.str_body(n, at)?,
            Lead::FixRef(i) => self.string_ref(i, at)?,
            Lead::FixList(n) => {
                early = shared;
                self.seq(SeqKind::List, n, shared, at)?
            }
            Lead::FixDict(n) => {
                early = shared;
                self.dict(DictKind::Dict, n, shared, at)?
            }
            Lead::FixTuple(n) => self.seq(SeqKind::Tuple, n, false, at)?,
            Lead::Reserved(t) => {
                return Err(DecodeError::format(at, format!("unknown tag 0x{t:02x}")));
            }
            Lead::Tag(t) => match t {
                f::NONE => build!(self, at, self.b.none())?,
                f::FALSE => build!(self, at, self.b.bool(false))?,
                f::TRUE => build!(self, at, self.b.bool(true))?,
                f::INT8 => {
                    let v = self.r.u8("int8")? as i8 as i64;
                    build!(self, at, self.b.int(v))?
                }
                f::INT16 => {
                    let v = i16::from_le_bytes(self.r.array("int16")?) as i64;
                    build!(self, at, self.b.int(v))?
                }
                f::INT32 => {
                    let v = i32::from_le_bytes(self.r.array("int32")?) as i64;
                    build!(self, at, self.b.int(v))?
                }
                f::INT64 => {
                    let v = i64::from_le_bytes(self.r.array("int64")?);
                    build!(self, at, self.b.int(v))?
                }
                f::BIGINT => {
                    let n = self.r.count("bigint length", 1)?;
                    let le = self.r.take(n, "bigint")?;
                    if n <= 8 || !is_shortest_twos_complement(le) {
                        return Err(DecodeError::format(at, "bigint is not in shortest form"));
                    }
                    build!(self, at, self.b.bigint(le))?
                }
                f::FLOAT64 => {
                    let v = f64::from_le_bytes(self.r.array("float")?);
                    build!(self, at, self.b.float(v))?
                }
                f::COMPLEX => {
                    let re = f64::from_le_bytes(self.r.array("complex")?);
                    let im = f64::from_le_bytes(self.r.array("complex")?);
                    build!(self, at, self.b.complex(re, im))?
                }
                f::STR => {
                    let n = self.r.count("str length", 1)?;
                    self.str_body(n, at)?
                }
                f::STR_DEF => {
                    let n = self.r.count("str length", 1)?;
                    let s = self.str_body(n, at)?;
                    self.strings.push(s.clone());
                    s
                }
                f::STR_REF => {
                    let i = self.r.varint("string reference")?;
                    let i = usize::try_from(i).unwrap_or(usize::MAX);
                    self.string_ref(i, at)?
                }
                f::STR_SURROGATES => {
                    let n = self.r.count("str length", 1)?;
                    let raw = self.r.take(n, "str")?;
                    build!(self, at, self.b.str_surrogates(raw))?
                }
                f::BYTES | f::BYTEARRAY => {
                    let n = self.r.count("bytes length", 1)?;
                    let off = self.r.pos();
                    let raw = self.r.take(n, "bytes")?;
                    build!(self, at, self.b.bytes(raw, off, t == f::BYTEARRAY))?
                }
                f::BYTES_OOB | f::BYTEARRAY_OOB => {
                    let i = self.index("buffer index")?;
                    build!(self, at, self.b.bytes_oob(i, t == f::BYTEARRAY_OOB))?
                }
                f::LIST | f::SET | f::TUPLE | f::FROZENSET => {
                    let n = self.r.count("item count", 1)?;
                    let kind = match t {
                        f::LIST => SeqKind::List,
                        f::SET => SeqKind::Set,
                        f::TUPLE => SeqKind::Tuple,
                        _ => SeqKind::FrozenSet,
                    };
                    let mutable = matches!(kind, SeqKind::List | SeqKind::Set);
                    early = shared && mutable;
                    self.seq(kind, n, early, at)?
                }
                f::DICT | f::ORDERED_DICT | f::COUNTER | f::DEFAULTDICT => {
                    let kind = match t {
                        f::DICT => DictKind::Dict,
                        f::ORDERED_DICT => DictKind::Ordered,
                        f::COUNTER => DictKind::Counter,
                        _ => {
                            let code = self.r.u8("defaultdict factory")?;
                            if code as usize >= f::DEFAULT_FACTORIES.len() {
                                return Err(DecodeError::format(
                                    at + 1,
                                    format!("unknown defaultdict factory code {code}"),
                                ));
                            }
                            DictKind::Default(code)
                        }
                    };
                    let n = self.r.count("pair count", 2)?;
                    early = shared;
                    self.dict(kind, n, shared, at)?
                }
                f::SHAPE_DEF => {
                    let n = self.r.count("pair count", 2)?;
                    early = shared;
                    self.nested(at, |w| w.shape_def(n, shared, at))?
                }
                f::SHAPED => {
                    let s = self.index("shape index")?;
                    early = shared;
                    self.nested(at, |w| w.shaped(s, shared, at))?
                }
                f::DEQUE => {
                    early = shared;
                    self.nested(at, |w| {
                        let maxlen = w.item()?;
                        let n = w.r.count("item count", 1)?;
                        let d = build!(w, at, w.b.deque_begin(maxlen))?;
                        if shared {
                            w.memo.push(d.clone());
                        }
                        w.fill_seq(&d, SeqKind::Deque, n)?;
                        Ok(d)
                    })?
                }
                f::DATE => {
                    let year = u16::from_le_bytes(self.r.array("date")?);
                    let month = self.r.u8("date")?;
                    let day = self.r.u8("date")?;
                    build!(self, at, self.b.date(year, month, day))?
                }
                f::TIME => self.nested(at, |w| {
                    let flags = w.dt_flags(at)?;
                    let parts = w.time_parts(flags, 0, 1, 1)?;
                    build!(w, at, w.b.time(parts))
                })?,
                f::DATETIME => self.nested(at, |w| {
                    let flags = w.dt_flags(at)?;
                    let year = u16::from_le_bytes(w.r.array("datetime")?);
                    let month = w.r.u8("datetime")?;
                    let day = w.r.u8("datetime")?;
                    let parts = w.time_parts(flags, year, month, day)?;
                    build!(w, at, w.b.datetime(parts))
                })?,
                f::TIMEDELTA => {
                    let d = i32::from_le_bytes(self.r.array("timedelta")?);
                    let s = i32::from_le_bytes(self.r.array("timedelta")?);
                    let us = i32::from_le_bytes(self.r.array("timedelta")?);
                    build!(self, at, self.b.timedelta(d, s, us))?
                }
                f::TZ_UTC => build!(self, at, self.b.tz_utc())?,
                f::TZ_FIXED => self.nested(at, |w| {
                    let off = i64::from_le_bytes(w.r.array("tz offset")?);
                    let name = w.item()?;
                    build!(w, at, w.b.tz_fixed(off, name))
                })?,
                f::TZ_ZONE => self.nested(at, |w| {
                    let key = w.item()?;
                    build!(w, at, w.b.tz_zone(key))
                })?,
                f::DECIMAL => {
                    let n = self.r.count("decimal length", 1)?;
                    let raw = self.r.take(n, "decimal")?;
                    if !raw.is_ascii() {
                        return Err(DecodeError::format(at, "Decimal text is not ASCII"));
                    }
                    // ASCII is valid UTF-8.
                    let s = std::str::from_utf8(raw).unwrap_or_default();
                    build!(self, at, self.b.decimal(s))?
                }
                f::UUID => {
                    let raw = self.r.array::<16, _>("UUID")?;
                    let safe = self.r.u8("UUID")?;
                    build!(self, at, self.b.uuid(raw, safe))?
                }
                f::FRACTION => self.nested(at, |w| {
                    let num = w.item()?;
                    let den = w.item()?;
                    build!(w, at, w.b.fraction(num, den))
                })?,
                f::ENUM => self.nested(at, |w| {
                    let name = w.item()?;
                    let class = build!(w, at, w.b.class(&name))?;
                    let value = w.item()?;
                    build!(w, at, w.b.enum_member(&class, value))
                })?,
                f::OBJECT | f::OBJECT_FILL => {
                    let fill = t == f::OBJECT_FILL;
                    early = fill && shared;
                    self.nested(at, |w| w.object(at, fill, shared))?
                }
                f::OBJECT_STATE => {
                    early = shared;
                    self.nested(at, |w| w.object_state(at, shared))?
                }
                f::NDARRAY => self.nested(at, |w| w.ndarray(at))?,
                f::NPSCALAR => self.nested(at, |w| {
                    let dtype = w.item()?;
                    let n = w.r.count("scalar length", 1)?;
                    let raw = w.r.take(n, "scalar")?;
                    build!(w, at, w.b.npscalar(dtype, raw))
                })?,
                f::SHARE => {
                    if shared {
                        return Err(DecodeError::format(at, "share marker after a share marker"));
                    }
                    // The inner call registers the value.
                    return self.item_inner(true);
                }
                f::MEMO_REF => {
                    if shared {
                        return Err(DecodeError::format(
                            at,
                            "share marker before a shared reference",
                        ));
                    }
                    let i = self.index("shared reference")?;
                    self.memo_get(i, at)?
                }
                f::REPLACE => {
                    if shared {
                        return Err(DecodeError::format(
                            at,
                            "share marker before a replace marker",
                        ));
                    }
                    let i = self.index("replace target")?;
                    self.padding(f::REPLACE_ALIGN, "replace")?;
                    // REPLACE wraps the outer copy of an immutable container
                    // (which counts its own level): nothing else may follow.
                    let next = self.r.pos();
                    let wrapped = match self.r.peek() {
                        Some(b) => {
                            matches!(f::lead(b), Lead::FixTuple(_))
                                || matches!(
                                    b,
                                    f::TUPLE | f::FROZENSET | f::OBJECT | f::OBJECT_STATE
                                )
                        }
                        None => false,
                    };
                    if !wrapped {
                        return Err(DecodeError::format(
                            next,
                            "replace marker must precede a tuple, frozenset or object",
                        ));
                    }
                    let _discarded = self.item()?;
                    self.memo_get(i, at)?
                }
                _ => return Err(DecodeError::format(at, format!("unknown tag 0x{t:02x}"))),
            },
        };
        if shared && !early {
            self.memo.push(v.clone());
        }
        Ok(v)
    }

    /// Run `f`, which decodes child items, one level deeper. Every tag with
    /// children goes through here, so no input can recurse past the limit,
    /// and the stack grows on demand, so no limit can overflow a small stack.
    #[inline(always)]
    fn nested<T>(
        &mut self,
        at: usize,
        f: impl FnOnce(&mut Self) -> Res<T, B::Err>,
    ) -> Res<T, B::Err> {
        if self.depth >= self.limits.max_depth {
            return Err(DecodeError::limit(
                at,
                format!(
                    "items nested deeper than max_depth={}",
                    self.limits.max_depth
                ),
            ));
        }
        self.depth += 1;
        let r = crate::stack::descend(self.depth, || f(self));
        self.depth -= 1;
        r
    }

    /// OBJECT or OBJECT_FILL after the tag. OBJECT_FILL objects are made
    /// first (and registered before their state when shared); OBJECT ones
    /// are built from their state. The tag decides, so memo numbering never
    /// depends on what the registry says.
    fn object(&mut self, at: usize, fill: bool, shared: bool) -> Res<B::V, B::Err> {
        let name = self.item()?;
        let class = build!(self, at, self.b.class(&name))?;
        if fill {
            let obj = build!(self, at, self.b.object_new(&class))?;
            if shared {
                self.memo.push(obj.clone());
            }
            let state = self.item()?;
            build!(self, at, self.b.object_fill(&class, &obj, state))?;
            Ok(obj)
        } else {
            let state = self.item()?;
            build!(self, at, self.b.object_build(&class, state))
        }
    }

    /// OBJECT_STATE after the tag: the class, the base the instance is made
    /// from, then (the instance registered when shared) its state.
    fn object_state(&mut self, at: usize, shared: bool) -> Res<B::V, B::Err> {
        let name = self.item()?;
        let class = build!(self, at, self.b.class(&name))?;
        let base = self.item()?;
        let obj = build!(self, at, self.b.object_base(&class, base))?;
        if shared {
            self.memo.push(obj.clone());
        }
        let state = self.item()?;
        build!(self, at, self.b.object_setstate(&class, &obj, state))?;
        Ok(obj)
    }

    /// A pad count below `align` and that many zero bytes.
    fn padding(&mut self, align: usize, what: &str) -> Res<(), B::Err> {
        let at = self.r.pos();
        let pad = self.r.u8("padding")? as usize;
        if pad >= align || self.r.take(pad, "padding")?.iter().any(|&b| b != 0) {
            return Err(DecodeError::format(at, format!("invalid {what} padding")));
        }
        Ok(())
    }

    fn index(&mut self, what: &str) -> Res<usize, B::Err> {
        let v = self.r.varint(what)?;
        Ok(usize::try_from(v).unwrap_or(usize::MAX))
    }

    #[inline(always)]
    fn str_body(&mut self, n: usize, at: usize) -> Res<B::V, B::Err> {
        let raw = self.r.take(n, "str")?;
        let ascii = raw.is_ascii();
        let s = if ascii {
            // SAFETY: ASCII bytes are valid UTF-8.
            unsafe { std::str::from_utf8_unchecked(raw) }
        } else {
            match std::str::from_utf8(raw) {
                Ok(s) => s,
                Err(e) => {
                    return Err(DecodeError::format(
                        self.r.pos() - n + e.valid_up_to(),
                        "invalid UTF-8 in str",
                    ))
                }
            }
        };
        build!(self, at, self.b.str(s, ascii))
    }

    #[inline(always)]
    fn string_ref(&mut self, i: usize, at: usize) -> Res<B::V, B::Err> {
        match self.strings.get(i) {
            Some(v) => Ok(v.clone()),
            None => Err(DecodeError::format(
                at,
                format!(
                    "string reference {i} but only {} strings are defined",
                    self.strings.len()
                ),
            )),
        }
    }

    fn memo_get(&mut self, i: usize, at: usize) -> Res<B::V, B::Err> {
        match self.memo.get(i) {
            Some(v) => Ok(v.clone()),
            None => Err(DecodeError::format(
                at,
                format!(
                    "shared reference {i} but only {} objects are shared so far",
                    self.memo.len()
                ),
            )),
        }
    }

    fn seq(&mut self, kind: SeqKind, n: usize, shared: bool, at: usize) -> Res<B::V, B::Err> {
        let kind = if shared && kind == SeqKind::List {
            SeqKind::SharedList
        } else {
            kind
        };
        self.nested(at, |w| {
            let s = build!(w, at, w.b.seq_begin(kind, n))?;
            if shared {
                w.memo.push(s.clone());
            }
            w.fill_seq(&s, kind, n)?;
            build!(w, at, w.b.seq_end(s, kind))
        })
    }

    #[inline(always)]
    fn fill_seq(&mut self, s: &B::V, kind: SeqKind, n: usize) -> Res<(), B::Err> {
        for i in 0..n {
            let at = self.r.pos();
            let item = self.item().map_err(|e| e.within(PathSeg::Index(i)))?;
            self.b
                .seq_item(s, kind, i, item)
                .map_err(|e| DecodeError::build(at, e).within(PathSeg::Index(i)))?;
        }
        Ok(())
    }

    fn dict(&mut self, kind: DictKind, n: usize, shared: bool, at: usize) -> Res<B::V, B::Err> {
        self.nested(at, |w| w.dict_body(kind, n, shared, at))
    }

    fn dict_body(
        &mut self,
        kind: DictKind,
        n: usize,
        shared: bool,
        at: usize,
    ) -> Res<B::V, B::Err> {
        let d = build!(self, at, self.b.dict_begin(kind, n))?;
        if shared {
            self.memo.push(d.clone());
        }
        for i in 0..n {
            let kat = self.r.pos();
            let k = self
                .item()
                .map_err(|e| e.within(PathSeg::Key(format!("[<key {i}>]"))))?;
            let v = match self.item() {
                Ok(v) => v,
                Err(e) => return Err(e.within(self.key_seg(&k, i))),
            };
            if let Err(e) = self.b.dict_item(&d, k.clone(), v) {
                let seg = self.key_seg(&k, i);
                return Err(DecodeError::build(kat, e).within(seg));
            }
        }
        Ok(d)
    }

    /// SHAPE_DEF after its pair count: the keys, which become the next
    /// shape, then a value for each.
    fn shape_def(&mut self, n: usize, shared: bool, at: usize) -> Res<B::V, B::Err> {
        let d = build!(self, at, self.b.dict_begin(DictKind::Dict, n))?;
        if shared {
            self.memo.push(d.clone());
        }
        let start = self.shape_keys.len();
        for i in 0..n {
            let k = self
                .item()
                .map_err(|e| e.within(PathSeg::Key(format!("[<key {i}>]"))))?;
            self.shape_keys.push(k);
        }
        self.shapes.push((start, n));
        self.shape_values(&d, start, n)?;
        Ok(d)
    }

    /// SHAPED after its tag: a dict with the keys of shape `s`.
    fn shaped(&mut self, s: usize, shared: bool, at: usize) -> Res<B::V, B::Err> {
        let Some(&(start, n)) = self.shapes.get(s) else {
            return Err(DecodeError::format(
                at,
                format!(
                    "shape reference {s} but only {} shapes are defined",
                    self.shapes.len()
                ),
            ));
        };
        // One byte at least per value: refuse before sizing the dict.
        if self.r.remaining() < n {
            return Err(DecodeError::format(
                self.r.pos(),
                format!(
                    "truncated: shape {s} has {n} keys but only {} bytes are left for the values",
                    self.r.remaining()
                ),
            ));
        }
        let d = build!(self, at, self.b.dict_begin(DictKind::Dict, n))?;
        if shared {
            self.memo.push(d.clone());
        }
        self.shape_values(&d, start, n)?;
        Ok(d)
    }

    /// The values of a dict whose keys are `shape_keys[start..start + n]`.
    fn shape_values(&mut self, d: &B::V, start: usize, n: usize) -> Res<(), B::Err> {
        for i in start..start + n {
            let vat = self.r.pos();
            let v = match self.item() {
                Ok(v) => v,
                Err(e) => return Err(e.within(self.key_seg(&self.shape_keys[i], i - start))),
            };
            let k = self.shape_keys[i].clone();
            if let Err(e) = self.b.dict_item(d, k, v) {
                let seg = self.key_seg(&self.shape_keys[i], i - start);
                return Err(DecodeError::build(vat, e).within(seg));
            }
        }
        Ok(())
    }

    #[cold]
    fn key_seg(&self, k: &B::V, i: usize) -> PathSeg {
        match self.b.key_str(k) {
            Some(s) => PathSeg::Key(key_segment(&s)),
            None => PathSeg::Key(format!("[<key {i}>]")),
        }
    }

    fn dt_flags(&mut self, at: usize) -> Res<u8, B::Err> {
        let flags = self.r.u8("flags")?;
        if flags & !(f::DT_FOLD | f::DT_TZ) != 0 {
            return Err(DecodeError::format(
                at + 1,
                format!("unknown time flags 0x{flags:02x}"),
            ));
        }
        Ok(flags)
    }

    fn time_parts(
        &mut self,
        flags: u8,
        year: u16,
        month: u8,
        day: u8,
    ) -> Res<DateTimeParts<B::V>, B::Err> {
        let hour = self.r.u8("time")?;
        let minute = self.r.u8("time")?;
        let second = self.r.u8("time")?;
        let microsecond = u32::from_le_bytes(self.r.array("time")?);
        let tz = if flags & f::DT_TZ != 0 {
            Some(self.item()?)
        } else {
            None
        };
        Ok(DateTimeParts {
            year,
            month,
            day,
            hour,
            minute,
            second,
            microsecond,
            fold: flags & f::DT_FOLD != 0,
            tz,
        })
    }

    fn ndarray(&mut self, at: usize) -> Res<B::V, B::Err> {
        let dtype = self.item()?;
        let ndim_at = self.r.pos();
        let ndim = self.r.u8("ndarray ndim")? as usize;
        if ndim > 64 {
            return Err(DecodeError::format(
                ndim_at,
                format!("ndarray with {ndim} dimensions (at most 64)"),
            ));
        }
        let mut shape = Vec::with_capacity(ndim);
        for _ in 0..ndim {
            shape.push(self.r.varint("ndarray dimension")?);
        }
        let flags_at = self.r.pos();
        let flags = self.r.u8("ndarray flags")?;
        if flags & !(f::ND_FORTRAN | f::ND_OOB) != 0 {
            return Err(DecodeError::format(
                flags_at,
                format!("unknown ndarray flags 0x{flags:02x}"),
            ));
        }
        let data = if flags & f::ND_OOB != 0 {
            NdData::OutOfBand {
                index: self.index("buffer index")?,
            }
        } else {
            let n = self.r.count("ndarray byte length", 1)?;
            self.padding(f::ND_ALIGN, "ndarray")?;
            let offset = self.r.pos();
            NdData::Inline {
                bytes: self.r.take(n, "ndarray data")?,
                offset,
            }
        };
        let arr = NdArray {
            dtype,
            shape,
            fortran: flags & f::ND_FORTRAN != 0,
            data,
        };
        build!(self, at, self.b.ndarray(arr))
    }
}

/// Whether `le` (little-endian two's complement) has no redundant top byte.
fn is_shortest_twos_complement(le: &[u8]) -> bool {
    match le {
        [] => false,
        [_] => true,
        [.., second, last] => {
            let redundant_zero = *last == 0x00 && second & 0x80 == 0;
            let redundant_ones = *last == 0xFF && second & 0x80 != 0;
            !(redundant_zero || redundant_ones)
        }
    }
}
