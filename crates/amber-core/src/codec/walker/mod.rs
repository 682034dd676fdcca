//! The generic decoder: walks a frame and asks a [`Build`] implementation to
//! make each value. All format rules live here (tags, lengths, the string
//! table, shared references, limits); builders only construct values.
//!
//! [`Walker::item_inner`] is a table of short arms, one per family of tags,
//! each calling that family's method (in this file and in `atoms.rs`,
//! `containers.rs` and `values.rs` beside it).
//!
//! Guarantees for any input: no panic, time linear in the input (see the
//! spec's §10.1), and no allocation sized by a header before the bytes it
//! describes are present (counts are checked against what is left; see
//! [`Reader::count`]).

use crate::bytes::path::PathSeg;
use crate::bytes::reader::Reader;
use crate::codec::build::{ArrowTable, Build, DateTimeParts, DictKind, NdArray, NdData, SeqKind};
use crate::codec::error::{DecodeError, Res};
use crate::codec::format::{self as f, Lead};
use crate::codec::header::parse_header;

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

/// Decode a frame that must fill `data` exactly.
pub fn decode<B: Build>(data: &[u8], builder: &mut B, limits: Limits) -> Res<B::V, B::Err> {
    crate::bytes::stack::enter(
        || decode_here(data, builder, limits),
        || DecodeError::out_of_memory(0, "out of memory for the decoder's stack"),
    )
}

fn decode_here<B: Build>(data: &[u8], builder: &mut B, limits: Limits) -> Res<B::V, B::Err> {
    let header = parse_header(data)?;
    // parse_header refuses lengths whose sum would overflow.
    let frame_len = header.frame_len().unwrap_or(u64::MAX);
    if (data.len() as u64) < frame_len {
        return Err(DecodeError::truncated(
            data.len(),
            format!(
                "truncated frame: header says {frame_len} bytes, got {}",
                data.len()
            ),
        ));
    }
    if (data.len() as u64) > frame_len {
        return Err(DecodeError::malformed(
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
    w.r.take(header.header_len, "header")?;
    let v = w.item()?;
    if !w.r.is_empty() {
        return Err(DecodeError::malformed(
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

/// A builder call at item offset `at`, its error wrapped with the offset.
macro_rules! build {
    ($self:ident, $at:expr, $call:expr) => {
        $call.map_err(|e| DecodeError::build($at, e))
    };
}

mod atoms;
mod containers;
mod values;

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

    /// Any item but the inline leaves of `item`: one short arm per family of
    /// tags. `shared` when a SHARE marker came first: the value goes into
    /// the memo, before its contents for mutable containers (their family
    /// method registers them and returns `true`), else once it is made.
    #[inline(never)]
    fn item_inner(&mut self, shared: bool) -> Res<B::V, B::Err> {
        let at = self.r.pos();
        let tag = self.r.u8("item")?;
        let (v, registered) = match f::lead(tag) {
            Lead::FixInt(i) => (build!(self, at, self.b.int(i))?, false),
            Lead::FixStr(n) => (self.str_body(n, at)?, false),
            Lead::FixRef(i) => (self.string_ref(i, at)?, false),
            Lead::FixList(n) => (self.seq(SeqKind::List, n, shared, at)?, shared),
            Lead::FixDict(n) => (self.dict(DictKind::Dict, n, shared, at)?, shared),
            Lead::FixTuple(n) => (self.seq(SeqKind::Tuple, n, false, at)?, false),
            Lead::Reserved(t) => return Err(unknown_tag(at, t)),
            Lead::Tag(t) => match t {
                f::NONE | f::FALSE | f::TRUE => (self.constant(t, at)?, false),
                f::INT8 | f::INT16 | f::INT32 | f::INT64 | f::BIGINT => {
                    (self.integer(t, at)?, false)
                }
                f::FLOAT64 | f::COMPLEX => (self.floating(t, at)?, false),
                f::STR | f::STR_DEF | f::STR_REF | f::STR_SURROGATES => (self.text(t, at)?, false),
                f::BYTES | f::BYTEARRAY | f::BYTES_OOB | f::BYTEARRAY_OOB => {
                    (self.bytes(t, at)?, false)
                }
                f::LIST | f::SET | f::TUPLE | f::FROZENSET => self.sequence(t, shared, at)?,
                f::DICT | f::ORDERED_DICT | f::COUNTER | f::DEFAULTDICT => {
                    (self.mapping(t, shared, at)?, shared)
                }
                f::SHAPE_DEF | f::SHAPED => (self.shape(t, shared, at)?, shared),
                f::DEQUE => (self.deque(shared, at)?, shared),
                f::DATE | f::TIME | f::DATETIME | f::TIMEDELTA => (self.time(t, at)?, false),
                f::TZ_UTC | f::TZ_FIXED | f::TZ_ZONE => (self.tzinfo(t, at)?, false),
                f::DECIMAL | f::UUID | f::FRACTION => (self.number(t, at)?, false),
                f::ENUM | f::OBJECT | f::OBJECT_FILL | f::OBJECT_STATE => {
                    self.registered(t, shared, at)?
                }
                f::NDARRAY | f::NPSCALAR => (self.numpy(t, at)?, false),
                f::ARROW => (self.nested(at, |w| w.arrow(at))?, false),
                f::SHARE => return self.share(shared, at),
                f::MEMO_REF | f::REPLACE => (self.reference(t, shared, at)?, false),
                _ => return Err(unknown_tag(at, t)),
            },
        };
        if shared && !registered {
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
        let r = crate::bytes::stack::descend(
            self.depth,
            || f(self),
            || DecodeError::out_of_memory(at, "out of memory for the stack of nested items"),
        );
        self.depth -= 1;
        r
    }

    /// SHARE: the next item is registered in the memo (by `item_inner`).
    fn share(&mut self, shared: bool, at: usize) -> Res<B::V, B::Err> {
        if shared {
            return Err(DecodeError::malformed(
                at,
                "share marker after a share marker",
            ));
        }
        self.item_inner(true)
    }

    /// MEMO_REF and REPLACE: an object registered earlier.
    fn reference(&mut self, t: u8, shared: bool, at: usize) -> Res<B::V, B::Err> {
        if shared {
            let what = if t == f::MEMO_REF {
                "a shared reference"
            } else {
                "a replace marker"
            };
            return Err(DecodeError::malformed(
                at,
                format!("share marker before {what}"),
            ));
        }
        let i = self.index(if t == f::MEMO_REF {
            "shared reference"
        } else {
            "replace target"
        })?;
        if t == f::REPLACE {
            self.replaced()?;
        }
        self.memo_get(i, at)
    }

    /// After REPLACE and its index: the padding, then the outer copy of an
    /// immutable container (which counts its own level), decoded and
    /// discarded; nothing else may follow the marker.
    fn replaced(&mut self) -> Res<(), B::Err> {
        self.padding(f::REPLACE_ALIGN, "replace")?;
        let next = self.r.pos();
        let wrapped = match self.r.peek() {
            Some(b) => {
                matches!(f::lead(b), Lead::FixTuple(_))
                    || matches!(b, f::TUPLE | f::FROZENSET | f::OBJECT | f::OBJECT_STATE)
            }
            None => false,
        };
        if !wrapped {
            return Err(DecodeError::malformed(
                next,
                "replace marker must precede a tuple, frozenset or object",
            ));
        }
        let _discarded = self.item()?;
        Ok(())
    }

    fn memo_get(&mut self, i: usize, at: usize) -> Res<B::V, B::Err> {
        match self.memo.get(i) {
            Some(v) => Ok(v.clone()),
            None => Err(DecodeError::malformed(
                at,
                format!(
                    "shared reference {i} but only {} objects are shared so far",
                    self.memo.len()
                ),
            )),
        }
    }

    /// A pad count below `align` and that many zero bytes.
    fn padding(&mut self, align: usize, what: &str) -> Res<(), B::Err> {
        let at = self.r.pos();
        let pad = self.r.u8("padding")? as usize;
        if pad >= align || self.r.take(pad, "padding")?.iter().any(|&b| b != 0) {
            return Err(DecodeError::malformed(
                at,
                format!("invalid {what} padding"),
            ));
        }
        Ok(())
    }

    fn index(&mut self, what: &'static str) -> Res<usize, B::Err> {
        let v = self.r.varint(what)?;
        Ok(usize::try_from(v).unwrap_or(usize::MAX))
    }
}

#[cold]
fn unknown_tag<E>(at: usize, t: u8) -> DecodeError<E> {
    DecodeError::reserved(at, format_args!("tag 0x{t:02x}"))
}
