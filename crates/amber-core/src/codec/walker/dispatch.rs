//! The walk itself: one item read by the table of short arms in
//! `item_inner`, with the commonest leaves decoded inline in `item`, and the
//! helpers every family's method shares.

use super::*;

impl<'a, B: Build> Walker<'a, '_, B> {
    /// One item. The commonest leaves are decoded inline in the caller's
    /// loop; everything else goes to `item_inner`, which is large and not
    /// inlined (its frame would be paid by every leaf otherwise).
    #[inline(always)]
    pub(super) fn item(&mut self) -> Res<B::V, B::Err> {
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
    pub(super) fn item_inner(&mut self, shared: bool) -> Res<B::V, B::Err> {
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
    pub(super) fn nested<T>(
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
    pub(super) fn share(&mut self, shared: bool, at: usize) -> Res<B::V, B::Err> {
        if shared {
            return Err(DecodeError::malformed(
                at,
                "share marker after a share marker",
            ));
        }
        self.item_inner(true)
    }

    /// MEMO_REF and REPLACE: an object registered earlier.
    pub(super) fn reference(&mut self, t: u8, shared: bool, at: usize) -> Res<B::V, B::Err> {
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
    pub(super) fn replaced(&mut self) -> Res<(), B::Err> {
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

    pub(super) fn memo_get(&mut self, i: usize, at: usize) -> Res<B::V, B::Err> {
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
    pub(super) fn padding(&mut self, align: usize, what: &str) -> Res<(), B::Err> {
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

    pub(super) fn index(&mut self, what: &'static str) -> Res<usize, B::Err> {
        let v = self.r.varint(what)?;
        Ok(usize::try_from(v).unwrap_or(usize::MAX))
    }
}

#[cold]
pub(super) fn unknown_tag<E>(at: usize, t: u8) -> DecodeError<E> {
    DecodeError::reserved(at, format_args!("tag 0x{t:02x}"))
}
