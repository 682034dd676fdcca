//! The encoder: reads a message through a [`MessageSource`] and writes its
//! wire form, fields in number order, then the unknown fields as stored.
//!
//! It writes backwards (as upb does): the output is built from its end, so
//! a sub-message's length is known when its prefix is written, each byte is
//! written once and there is no size pass nor copying per level: time is
//! linear in the output at any depth. Each piece (a string, a varint) is
//! copied as it is in front of what is already written. Packed or unpacked, groups or length-prefixed, per the field's
//! table entry; fields without presence are skipped at their zero value
//! (floats by bits: `-0.0` is written, as protobuf does). Deterministic
//! mode writes map entries sorted by key in the order of protobuf Python's
//! `deterministic=True` (see [`cmp_keys`]); otherwise in the source's order. Map entries
//! always carry both key and value.

use std::cmp::Ordering;

use crate::bytes::varint;
use crate::proto::runtime::error::{EncodeError, EncodeKind};
use crate::proto::runtime::plan::{tag_bytes, EncodePlans, Op, Step};
use crate::proto::runtime::revbuf::RevBuf;
use crate::proto::runtime::scalar::{is_zero, Scalar};
use crate::proto::runtime::schema::{Cardinality, FieldInfo, Kind, Tables};
use crate::proto::runtime::source::{
    EntryParts, Held, MessageSource, Plain, SrcValue, SubParts, TextParts,
};
use crate::proto::wire::{self, EGROUP, LEN, SGROUP, VARINT};

/// The longest wire form written: 2 GiB - 1, as protobuf allows.
pub const MAX_SIZE: usize = i32::MAX as usize;

/// Encoder settings.
#[derive(Debug, Clone, Copy)]
pub struct EncodeOptions {
    /// Sort map entries by key.
    pub deterministic: bool,
    /// Deepest nesting written (a source with a cycle stops here).
    pub max_depth: usize,
}

impl Default for EncodeOptions {
    fn default() -> Self {
        EncodeOptions {
            deterministic: false,
            max_depth: wire::MAX_DEPTH,
        }
    }
}

/// Why encoding failed.
#[derive(Debug)]
pub enum EncodeFailure<E> {
    /// The source gave a value of the wrong kind, or nested too deeply.
    Encode(Box<EncodeError>),
    /// The source's own error.
    Source(E),
}

type Res<T, E> = Result<T, EncodeFailure<E>>;

/// Encode message `m` of type `ty`.
pub fn encode<'m, S: MessageSource<'m>>(
    tables: &Tables,
    ty: u32,
    m: S::Msg,
    src: &S,
    opts: EncodeOptions,
) -> Res<Vec<u8>, S::Err> {
    let mut buf = Vec::new();
    let start = encode_into(tables, ty, m, src, opts, &mut buf)?;
    buf.drain(..start);
    Ok(buf)
}

/// Encode message `m` of type `ty` at the end of `buf`, whose length is
/// kept as the room to write in (grown when short, never shrunk): the wire
/// form is `buf[start..]`, `start` returned. A caller that keeps `buf`
/// from call to call writes without allocating, zeroing or moving the
/// output; what `buf` held before is overwritten.
pub fn encode_into<'m, S: MessageSource<'m>>(
    tables: &Tables,
    ty: u32,
    m: S::Msg,
    src: &S,
    opts: EncodeOptions,
    buf: &mut Vec<u8>,
) -> Res<usize, S::Err> {
    run(tables, None, ty, m, src, opts, buf)
}

/// [`encode_into`] with the types' [`EncodePlans`] (made from `tables`,
/// kept by the caller from call to call): the same bytes, each singular
/// number, string or bytes field read in one look
/// ([`MessageSource::held`]) and its tag copied as made once.
pub fn encode_planned<'m, S: MessageSource<'m>>(
    tables: &Tables,
    plans: &EncodePlans,
    ty: u32,
    m: S::Msg,
    src: &S,
    opts: EncodeOptions,
    buf: &mut Vec<u8>,
) -> Res<usize, S::Err> {
    run(tables, Some(plans), ty, m, src, opts, buf)
}

fn run<'m, S: MessageSource<'m>>(
    tables: &Tables,
    plans: Option<&EncodePlans>,
    ty: u32,
    m: S::Msg,
    src: &S,
    opts: EncodeOptions,
    buf: &mut Vec<u8>,
) -> Res<usize, S::Err> {
    let mut e = Encoder {
        t: tables,
        plans,
        src,
        opts,
        out: RevBuf::new(std::mem::take(buf)),
    };
    let done = crate::bytes::stack::enter(
        || e.message(ty, m, 0),
        || {
            EncodeFailure::Encode(Box::new(EncodeError::new(
                EncodeKind::Limit,
                "out of stack",
            )))
        },
    );
    let (b, head) = e.out.into_parts();
    *buf = b;
    match done {
        // A length prefix or a parser's size field says at most 2 GiB - 1
        // (protobuf's limit): a message longer than that is refused, not
        // written for no reader.
        Ok(()) if buf.len() - head > MAX_SIZE => {
            Err(EncodeFailure::Encode(Box::new(EncodeError {
                kind: EncodeKind::Limit,
                message: format!(
                    "the message is {} bytes long, over protobuf's limit of 2 GiB",
                    buf.len() - head
                ),
                path: "$".into(),
            })))
        }
        Ok(()) => Ok(head),
        Err(EncodeFailure::Encode(mut err)) => {
            err.path.insert(0, '$');
            Err(EncodeFailure::Encode(err))
        }
        Err(other) => Err(other),
    }
}

/// Put field `f` (and the element's index) in front of an error's path on
/// its way up.
#[cold]
fn locate<E>(e: EncodeFailure<E>, f: &FieldInfo, index: Option<usize>) -> EncodeFailure<E> {
    let EncodeFailure::Encode(mut e) = e else {
        return e;
    };
    let seg = match index {
        Some(i) => format!(".{}[{i}]", f.name),
        None => format!(".{}", f.name),
    };
    e.path.insert_str(0, &seg);
    EncodeFailure::Encode(e)
}

struct Encoder<'t, 's, S> {
    t: &'t Tables,
    plans: Option<&'t EncodePlans>,
    src: &'s S,
    opts: EncodeOptions,
    /// The output, written from its end.
    out: RevBuf,
}

impl<'t, 'm, S: MessageSource<'m>> Encoder<'t, '_, S> {
    /// An error; its path is filled in on the way up (`locate`).
    #[cold]
    fn err<T>(&self, kind: EncodeKind, msg: impl Into<String>) -> Res<T, S::Err> {
        Err(EncodeFailure::Encode(Box::new(EncodeError::new(kind, msg))))
    }

    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        self.out.put(bytes);
    }

    #[inline]
    fn put_varint(&mut self, v: u64) {
        self.out.put_varint(v);
    }

    #[inline]
    fn put_tag(&mut self, num: u32, wt: u8) {
        self.put_varint(((num as u64) << 3) | wt as u64);
    }

    fn message(&mut self, ty: u32, m: S::Msg, depth: usize) -> Res<(), S::Err> {
        if depth > self.opts.max_depth {
            return self.err(
                EncodeKind::Limit,
                format!("messages nested deeper than {}", self.opts.max_depth),
            );
        }
        let t = self.t;
        let unknown = self.src.unknown(m).map_err(EncodeFailure::Source)?;
        if !unknown.is_empty() {
            self.put(unknown);
        }
        let fields = &t.messages[ty as usize].fields;
        let Some(plans) = self.plans else {
            for f in fields.iter().rev() {
                self.field(m, f, depth)?;
            }
            return Ok(());
        };
        for st in plans.of(t, ty) {
            let pos = st.field as usize;
            let held = match st.op {
                Op::General => Held::Other,
                Op::Message => {
                    self.planned_message(m, &fields[pos], st, depth)?;
                    continue;
                }
                Op::Texts => {
                    self.planned_texts(m, &fields[pos], st, depth)?;
                    continue;
                }
                Op::Messages => {
                    self.planned_messages(m, &fields[pos], st, depth)?;
                    continue;
                }
                _ => self
                    .src
                    .held(m, pos, st.kind)
                    .map_err(EncodeFailure::Source)?,
            };
            match (held, st.op) {
                (Held::Unset, _) => {}
                (Held::Text(b), Op::Text) => {
                    if st.presence || !b.is_empty() {
                        self.out.put_text_field(b, st.tag, st.tag_len);
                    }
                }
                (Held::Bits(b), op) if op != Op::Text => {
                    // Every packable kind's zero has the bits 0 (and -0.0
                    // is not zero, as `is_zero` says).
                    if st.presence || b != 0 {
                        let (tag, n) = (st.tag, st.tag_len);
                        match op {
                            Op::Varint => self.out.put_varint_field(b, tag, n),
                            Op::Bool => self.out.put_varint_field((b != 0) as u64, tag, n),
                            Op::Sint32 => self.out.put_varint_field(
                                varint::zigzag(b as i32 as i64) & 0xFFFF_FFFF,
                                tag,
                                n,
                            ),
                            Op::Sint64 => {
                                self.out.put_varint_field(varint::zigzag(b as i64), tag, n)
                            }
                            Op::Fixed32 => {
                                self.out.put_fixed_field((b as u32).to_le_bytes(), tag, n)
                            }
                            _ => self.out.put_fixed_field(b.to_le_bytes(), tag, n),
                        }
                    }
                }
                _ => {
                    let f = &fields[pos];
                    self.field(m, f, depth)?;
                }
            }
        }
        Ok(())
    }

    /// A singular, length-prefixed message field `f` of `m` (plan step
    /// `st`, [`Op::Message`]): its value written with the step's tag.
    #[inline(always)]
    fn planned_message(
        &mut self,
        m: S::Msg,
        f: &FieldInfo,
        st: &Step,
        depth: usize,
    ) -> Res<(), S::Err> {
        match self.src.singular(m, f).map_err(EncodeFailure::Source)? {
            None => Ok(()),
            Some(SrcValue::Message(sub)) => {
                let Kind::Message(ty) = f.kind else {
                    return self.field(m, f, depth);
                };
                let mark = self.out.len();
                let r = self.nested(ty, sub, depth + 1);
                if let Err(e) = r {
                    return Err(locate(e, f, None));
                }
                self.out
                    .put_varint_field((self.out.len() - mark) as u64, st.tag, st.tag_len);
                Ok(())
            }
            // (A scalar in a message field: `field` reports it.)
            Some(SrcValue::Scalar(_)) => self.field(m, f, depth),
        }
    }

    /// A repeated string or bytes field `f` of `m` (plan step `st`,
    /// [`Op::Texts`]): the values as the source keeps them, each written
    /// with the step's tag; through [`field`](Self::field) when the source
    /// does not have them all at hand.
    #[inline(always)]
    fn planned_texts(
        &mut self,
        m: S::Msg,
        f: &FieldInfo,
        st: &Step,
        depth: usize,
    ) -> Res<(), S::Err> {
        let Some(texts) = self.src.texts(m, f).map_err(EncodeFailure::Source)? else {
            return self.field(m, f, depth);
        };
        let mark = self.out.len();
        for i in (0..texts.len()).rev() {
            match texts.text(i) {
                Some(b) => self.out.put_text_field(b, st.tag, st.tag_len),
                None => {
                    // Not at hand: drop what was written, and take the
                    // field the long way.
                    self.out.cut(mark);
                    return self.field(m, f, depth);
                }
            }
        }
        Ok(())
    }

    /// A repeated, length-prefixed message field `f` of `m` (plan step
    /// `st`, [`Op::Messages`]): the messages as the source keeps them,
    /// each written with its length and the step's tag; through
    /// [`field`](Self::field) when the source does not have them at hand.
    // Out of line: `message`'s own frame, set up for every message, stays
    // that of its other steps.
    #[inline(never)]
    fn planned_messages(
        &mut self,
        m: S::Msg,
        f: &FieldInfo,
        st: &Step,
        depth: usize,
    ) -> Res<(), S::Err> {
        let (Kind::Message(ty), Some(subs)) = (
            f.kind,
            self.src
                .messages(m, st.field as usize)
                .map_err(EncodeFailure::Source)?,
        ) else {
            return self.field(m, f, depth);
        };
        let mark = self.out.len();
        for i in (0..subs.len()).rev() {
            let Some(sub) = subs.get(i) else {
                self.out.cut(mark);
                return self.field(m, f, depth);
            };
            let at = self.out.len();
            if let Err(e) = self.nested(ty, sub, depth + 1) {
                return Err(locate(e, f, Some(i)));
            }
            self.out
                .put_varint_field((self.out.len() - at) as u64, st.tag, st.tag_len);
        }
        Ok(())
    }

    /// Field `f` of message `m`, through its `FieldInfo`.
    #[inline]
    fn field(&mut self, m: S::Msg, f: &FieldInfo, depth: usize) -> Res<(), S::Err> {
        if let Cardinality::Singular { presence } = f.card {
            if f.kind.packable() {
                if let Some(b) = self.src.number(m, f).map_err(EncodeFailure::Source)? {
                    // Every packable kind's zero has the bits 0 (and -0.0
                    // is not zero, as `is_zero` says).
                    if presence || b != 0 {
                        self.number(f.kind, b);
                        self.put_tag(f.number, f.kind.wire_type());
                    }
                    return Ok(());
                }
            }
            if matches!(f.kind, Kind::String | Kind::Bytes) {
                if let Some(b) = self.src.text(m, f, 0).map_err(EncodeFailure::Source)? {
                    if presence || !b.is_empty() {
                        self.put_text(f.number, b);
                    }
                    return Ok(());
                }
            }
            let Some(v) = self.src.singular(m, f).map_err(EncodeFailure::Source)? else {
                return Ok(());
            };
            let r = match v {
                SrcValue::Message(sub) if f.set_item => self.set_item(f, sub, depth),
                _ if presence || !matches!(v, SrcValue::Scalar(s) if is_zero(s)) => {
                    self.value(f, f.number, v, depth)
                }
                _ => Ok(()),
            };
            return r.map_err(|e| locate(e, f, None));
        }
        if let (Cardinality::Repeated { packed }, true) = (f.card, f.kind.packable()) {
            if let Some(nums) = self.src.numbers(m, f).map_err(EncodeFailure::Source)? {
                self.numbers(f, packed, nums);
                return Ok(());
            }
        }
        let n = self.src.count(m, f).map_err(EncodeFailure::Source)?;
        if n == 0 {
            return Ok(());
        }
        match f.card {
            Cardinality::Singular { .. } => {}
            Cardinality::Repeated { packed: true } => {
                let mark = self.out.len();
                for i in (0..n).rev() {
                    let r = match self.src.get(m, f, i).map_err(EncodeFailure::Source)? {
                        SrcValue::Scalar(s) => self.scalar(f.kind, s),
                        SrcValue::Message(_) => {
                            self.err(EncodeKind::TypeMismatch, "a message in a packed field")
                        }
                    };
                    if let Err(e) = r {
                        return Err(locate(e, f, Some(i)));
                    }
                }
                self.put_varint((self.out.len() - mark) as u64);
                self.put_tag(f.number, LEN);
            }
            Cardinality::Repeated { packed: false } => {
                let texts = match f.kind {
                    Kind::String | Kind::Bytes => {
                        self.src.texts(m, f).map_err(EncodeFailure::Source)?
                    }
                    _ => None,
                };
                let (tag, tag_len) = tag_bytes(f.number, LEN);
                let vtag = tag_bytes(f.number, f.kind.wire_type());
                for i in (0..n).rev() {
                    if let Some(b) = texts.as_ref().and_then(|t| t.text(i)) {
                        self.out.put_text_field(b, tag, tag_len);
                        continue;
                    }
                    if texts.is_none() && matches!(f.kind, Kind::String | Kind::Bytes) {
                        if let Some(b) = self.src.text(m, f, i).map_err(EncodeFailure::Source)? {
                            self.put_text(f.number, b);
                            continue;
                        }
                    }
                    let v = self.src.get(m, f, i).map_err(EncodeFailure::Source)?;
                    if let Err(e) = self.tagged(f, vtag, v, depth) {
                        return Err(locate(e, f, Some(i)));
                    }
                }
            }
            Cardinality::Map => self.map(m, f, n, depth)?,
        }
        Ok(())
    }

    /// Write the part of a map entry that field `ef` of the entry type is
    /// (the key, 1, or the value, 2) when the source's view has it as bits
    /// or bytes; false when it does not (nothing written).
    /// `tag` is the part's tag as `tag_bytes` makes it.
    #[inline(always)]
    fn plain_part(
        &mut self,
        view: &S::Entries,
        i: usize,
        ef: &FieldInfo,
        (tag, tag_len): (u64, u8),
    ) -> bool {
        let (num, kind) = (ef.number, ef.kind);
        match view.part(i, num, kind) {
            Some(Plain::Bits(b)) if kind.packable() => {
                self.number_field(kind, b, tag, tag_len);
                true
            }
            Some(Plain::Text(b)) if matches!(kind, Kind::String | Kind::Bytes) => {
                self.out.put_text_field(b, tag, tag_len);
                true
            }
            _ => false,
        }
    }

    /// One value of a packable kind, from its bits ([`Scalar::bits`]),
    /// with its tag as `tag_bytes` makes it (written in front of the
    /// value, as [`number`](Self::number) then a tag).
    #[inline(always)]
    fn number_field(&mut self, kind: Kind, b: u64, tag: u64, tag_len: u8) {
        let out = &mut self.out;
        match kind {
            Kind::Int32 | Kind::Int64 | Kind::Enum(_) | Kind::Uint32 | Kind::Uint64 => {
                out.put_varint_field(b, tag, tag_len)
            }
            Kind::Bool => out.put_varint_field((b != 0) as u64, tag, tag_len),
            Kind::Sint32 => {
                out.put_varint_field(varint::zigzag(b as i32 as i64) & 0xFFFF_FFFF, tag, tag_len)
            }
            Kind::Sint64 => out.put_varint_field(varint::zigzag(b as i64), tag, tag_len),
            Kind::Fixed32 | Kind::Sfixed32 | Kind::Float => {
                out.put_fixed_field((b as u32).to_le_bytes(), tag, tag_len)
            }
            Kind::Fixed64 | Kind::Sfixed64 | Kind::Double => {
                out.put_fixed_field(b.to_le_bytes(), tag, tag_len)
            }
            // Asked for numbers of packable kinds only.
            Kind::String | Kind::Bytes | Kind::Message(_) => {}
        }
    }

    /// A string or bytes value with its length and tag.
    #[inline(always)]
    fn put_text(&mut self, num: u32, b: &[u8]) {
        self.put(b);
        self.put_varint(b.len() as u64);
        self.put_tag(num, LEN);
    }

    /// One value with its tag, as field `num` of kind `f.kind`. A scalar
    /// is written in place (inlined into the field loops); a message
    /// through [`sub_message`](Self::sub_message).
    #[inline(always)]
    fn value(
        &mut self,
        f: &FieldInfo,
        num: u32,
        v: SrcValue<'m, S::Msg>,
        depth: usize,
    ) -> Res<(), S::Err> {
        match v {
            // `scalar` refuses a message kind.
            SrcValue::Scalar(s) => {
                self.scalar(f.kind, s)?;
                self.put_tag(num, f.kind.wire_type());
                Ok(())
            }
            SrcValue::Message(sub) => self.sub_message(f, num, sub, depth),
        }
    }

    /// One value with its tag, as field `f` (a map entry's key or value)
    /// whose tag `tag_bytes` made: as [`value`](Self::value) does.
    #[inline(always)]
    fn tagged(
        &mut self,
        f: &FieldInfo,
        (tag, tag_len): (u64, u8),
        v: SrcValue<'m, S::Msg>,
        depth: usize,
    ) -> Res<(), S::Err> {
        match v {
            // `scalar` refuses a message kind.
            SrcValue::Scalar(s) => {
                self.scalar(f.kind, s)?;
                self.out.put_tag(tag, tag_len);
                Ok(())
            }
            SrcValue::Message(sub) => match f.kind {
                Kind::Message(ty) if !f.delimited => {
                    let mark = self.out.len();
                    self.nested(ty, sub, depth + 1)?;
                    self.out
                        .put_varint_field((self.out.len() - mark) as u64, tag, tag_len);
                    Ok(())
                }
                _ => self.sub_message(f, f.number, sub, depth),
            },
        }
    }

    /// A message value with its tag (length-prefixed or a group).
    #[inline(never)]
    fn sub_message(
        &mut self,
        f: &FieldInfo,
        num: u32,
        sub: S::Msg,
        depth: usize,
    ) -> Res<(), S::Err> {
        let Kind::Message(ty) = f.kind else {
            return self.err(
                EncodeKind::TypeMismatch,
                "a message where a scalar was expected",
            );
        };
        let sub_depth = depth + 1;
        if f.delimited {
            self.put_tag(num, EGROUP);
            self.nested(ty, sub, sub_depth)?;
            self.put_tag(num, SGROUP);
        } else {
            let mark = self.out.len();
            self.nested(ty, sub, sub_depth)?;
            let key = ((num as u64) << 3) | LEN as u64;
            self.out.put_varints((self.out.len() - mark) as u64, key);
        }
        Ok(())
    }

    /// Extension `f`'s message in a `MessageSet` (see
    /// [`MessageInfo::message_set`](super::MessageInfo::message_set)): an
    /// item of group 1 holding the extension's number (field 2) and the
    /// message's bytes (field 3), in the order upb writes them.
    #[cold]
    fn set_item(&mut self, f: &FieldInfo, sub: S::Msg, depth: usize) -> Res<(), S::Err> {
        let Kind::Message(ty) = f.kind else {
            return self.err(
                EncodeKind::TypeMismatch,
                "a message where a scalar was expected",
            );
        };
        self.put_tag(1, EGROUP);
        let mark = self.out.len();
        self.nested(ty, sub, depth + 1)?;
        self.put_varint((self.out.len() - mark) as u64);
        self.put_tag(3, LEN);
        self.put_varint(f.number as u64);
        self.put_tag(2, VARINT);
        self.put_tag(1, SGROUP);
        Ok(())
    }

    fn nested(&mut self, ty: u32, sub: S::Msg, depth: usize) -> Res<(), S::Err> {
        crate::bytes::stack::descend(
            depth,
            || self.message(ty, sub, depth),
            || {
                EncodeFailure::Encode(Box::new(EncodeError::new(
                    EncodeKind::Limit,
                    "out of stack",
                )))
            },
        )
    }

    fn map(&mut self, m: S::Msg, f: &FieldInfo, n: usize, depth: usize) -> Res<(), S::Err> {
        let Kind::Message(entry) = f.kind else {
            return self.err(EncodeKind::Unsupported, "a map field without an entry type");
        };
        let t = self.t;
        let einfo = &t.messages[entry as usize];
        let (Some(kf), Some(vf)) = (einfo.field(1), einfo.field(2)) else {
            return self.err(
                EncodeKind::Unsupported,
                "map entry type without key and value",
            );
        };
        // The entries' order: sorted by key in deterministic mode, else
        // the source's (no list of positions is made for that).
        let order: Option<Vec<usize>> = if self.opts.deterministic {
            let mut keys = Vec::with_capacity(n);
            for i in 0..n {
                keys.push(self.src.entry(m, f, i).map_err(EncodeFailure::Source)?.0);
            }
            let mut order: Vec<usize> = (0..n).collect();
            order.sort_by(|&a, &b| cmp_keys(keys[a], keys[b]));
            Some(order)
        } else {
            None
        };
        // A message value is taken with its entry: the view serves maps of
        // scalar values only.
        let view = match vf.kind {
            Kind::Message(_) => None,
            _ => self.src.entries(m, f).map_err(EncodeFailure::Source)?,
        };
        // The entries' tag and their parts', made once for the map.
        let (tag, tag_len) = tag_bytes(f.number, LEN);
        let ktag = tag_bytes(kf.number, kf.kind.wire_type());
        let vtag = tag_bytes(vf.number, vf.kind.wire_type());
        for j in (0..n).rev() {
            let i = match &order {
                Some(order) => order[j],
                None => j,
            };
            let mark = self.out.len();
            if let Some(view) = &view {
                if self.plain_part(view, i, vf, vtag) && self.plain_part(view, i, kf, ktag) {
                    self.out
                        .put_varint_field((self.out.len() - mark) as u64, tag, tag_len);
                    continue;
                }
                // Not both at hand: drop what was written, and take the entry.
                self.out.cut(mark);
            }
            let (k, v) = self.src.entry(m, f, i).map_err(EncodeFailure::Source)?;
            let r = match self.tagged(vf, vtag, v, depth) {
                Ok(()) => self.tagged(kf, ktag, SrcValue::Scalar(k), depth),
                Err(e) => Err(e),
            };
            if let Err(e) = r {
                return Err(locate(e, f, Some(i)));
            }
            self.out
                .put_varint_field((self.out.len() - mark) as u64, tag, tag_len);
        }
        Ok(())
    }

    /// A repeated field's values kept as numbers (see
    /// [`MessageSource::numbers`]), packed or each with its tag.
    fn numbers(&mut self, f: &FieldInfo, packed: bool, nums: &[u64]) {
        if nums.is_empty() {
            return;
        }
        let kind = f.kind;
        if packed {
            let mark = self.out.len();
            self.run(kind, nums);
            self.put_varint((self.out.len() - mark) as u64);
            self.put_tag(f.number, LEN);
        } else {
            let (tag, tag_len) = tag_bytes(f.number, kind.wire_type());
            for &b in nums.iter().rev() {
                self.number_field(kind, b, tag, tag_len);
            }
        }
    }

    /// A packed run's values, without tag or length: the kind is matched
    /// once for the run, not per value.
    fn run(&mut self, kind: Kind, nums: &[u64]) {
        match kind {
            Kind::Int32 | Kind::Int64 | Kind::Enum(_) | Kind::Uint32 | Kind::Uint64 => {
                for &b in nums.iter().rev() {
                    self.put_varint(b);
                }
            }
            Kind::Sint32 => {
                for &b in nums.iter().rev() {
                    self.put_varint(varint::zigzag(b as i32 as i64) & 0xFFFF_FFFF);
                }
            }
            Kind::Sint64 => {
                for &b in nums.iter().rev() {
                    self.put_varint(varint::zigzag(b as i64));
                }
            }
            _ => {
                for &b in nums.iter().rev() {
                    self.number(kind, b);
                }
            }
        }
    }

    /// One value of a packable kind, from its bits ([`Scalar::bits`]).
    #[inline(always)]
    fn number(&mut self, kind: Kind, b: u64) {
        match kind {
            Kind::Int32 | Kind::Int64 | Kind::Enum(_) | Kind::Uint32 | Kind::Uint64 => {
                self.put_varint(b)
            }
            Kind::Bool => self.put_varint((b != 0) as u64),
            Kind::Sint32 => self.put_varint(varint::zigzag(b as i32 as i64) & 0xFFFF_FFFF),
            Kind::Sint64 => self.put_varint(varint::zigzag(b as i64)),
            Kind::Fixed32 | Kind::Sfixed32 => self.put(&(b as u32).to_le_bytes()),
            Kind::Fixed64 | Kind::Sfixed64 | Kind::Double => self.put(&b.to_le_bytes()),
            Kind::Float => self.put(&(b as u32).to_le_bytes()),
            // `message` asks for numbers of packable kinds only.
            Kind::String | Kind::Bytes | Kind::Message(_) => {}
        }
    }

    /// A scalar's bytes, without tag.
    #[inline(always)]
    fn scalar(&mut self, kind: Kind, s: Scalar<'m>) -> Res<(), S::Err> {
        let bad = |e: &Self| {
            e.err(
                EncodeKind::TypeMismatch,
                format!("{s:?} does not fit a {kind:?} field"),
            )
        };
        match kind {
            Kind::Int32 | Kind::Int64 | Kind::Enum(_) => match int(s) {
                Some(v) => self.put_varint(v as u64),
                None => return bad(self),
            },
            Kind::Uint32 | Kind::Uint64 => match uint(s) {
                Some(v) => self.put_varint(v),
                None => return bad(self),
            },
            Kind::Bool => match s {
                Scalar::Bool(b) => self.put_varint(b as u64),
                _ => return bad(self),
            },
            Kind::Sint32 => match int(s) {
                Some(v) => self.put_varint(varint::zigzag(v as i32 as i64) & 0xFFFF_FFFF),
                None => return bad(self),
            },
            Kind::Sint64 => match int(s) {
                Some(v) => self.put_varint(varint::zigzag(v)),
                None => return bad(self),
            },
            Kind::Fixed32 => match uint(s) {
                Some(v) => self.put(&(v as u32).to_le_bytes()),
                None => return bad(self),
            },
            Kind::Sfixed32 => match int(s) {
                Some(v) => self.put(&(v as i32).to_le_bytes()),
                None => return bad(self),
            },
            Kind::Fixed64 => match uint(s) {
                Some(v) => self.put(&v.to_le_bytes()),
                None => return bad(self),
            },
            Kind::Sfixed64 => match int(s) {
                Some(v) => self.put(&v.to_le_bytes()),
                None => return bad(self),
            },
            Kind::Float => match s {
                Scalar::F32(v) => self.put(&v.to_le_bytes()),
                Scalar::F64(v) => self.put(&(v as f32).to_le_bytes()),
                _ => return bad(self),
            },
            Kind::Double => match s {
                Scalar::F64(v) => self.put(&v.to_le_bytes()),
                Scalar::F32(v) => self.put(&(v as f64).to_le_bytes()),
                _ => return bad(self),
            },
            Kind::String | Kind::Bytes => match s {
                Scalar::Str(b) | Scalar::Bytes(b) => {
                    self.put(b);
                    self.put_varint(b.len() as u64);
                }
                _ => return bad(self),
            },
            Kind::Message(_) => {
                return self.err(
                    EncodeKind::TypeMismatch,
                    "a scalar where a message was expected",
                )
            }
        }
        Ok(())
    }
}

fn int(s: Scalar<'_>) -> Option<i64> {
    Some(match s {
        Scalar::I32(v) | Scalar::Enum(v) => v as i64,
        Scalar::I64(v) => v,
        Scalar::U32(v) => v as i64,
        Scalar::U64(v) => v as i64,
        _ => return None,
    })
}

fn uint(s: Scalar<'_>) -> Option<u64> {
    Some(match s {
        Scalar::I32(v) | Scalar::Enum(v) => v as i64 as u64,
        Scalar::I64(v) => v as u64,
        Scalar::U32(v) => v as u64,
        Scalar::U64(v) => v,
        _ => return None,
    })
}

/// Map key order of deterministic mode, protobuf Python's (upb's, which
/// sorts and then writes backwards): integer keys by descending unsigned
/// (two's complement) value, so `-1` first and `0` last; `true` before
/// `false`; strings by bytes ascending, a string before its own prefix
/// (`"ab"`, `"a"`, then `""` last). protobuf C++ and Java order keys
/// ascending instead; the vectors here are upb's.
pub fn cmp_keys(a: Scalar<'_>, b: Scalar<'_>) -> Ordering {
    match (a, b) {
        (Scalar::Str(x) | Scalar::Bytes(x), Scalar::Str(y) | Scalar::Bytes(y)) => {
            let n = x.len().min(y.len());
            x[..n].cmp(&y[..n]).then(y.len().cmp(&x.len()))
        }
        (Scalar::Bool(x), Scalar::Bool(y)) => y.cmp(&x),
        _ => uint(b).cmp(&uint(a)),
    }
}
