//! The decoder's loop: a message's fields, scalars, packed runs, sub-messages, groups and
//! unknown fields (map entries are in `maps`, the validating walk's builder in `check`).

use crate::bytes::varint;
use crate::proto::error::WireError;
use crate::proto::runtime::bits::{fixed32_bits, read_run, run_len, value_bits, varint_bits};
use crate::proto::runtime::builder::{MessageBuilder, RawMode};
use crate::proto::runtime::error::{DecodeError, DecodeKind};
use crate::proto::runtime::scalar::Scalar;
use crate::proto::runtime::schema::{Cardinality, FastOp, FieldInfo, Kind, MessageInfo, Tables};
use crate::proto::wire::{self, WireReader, EGROUP, FIXED32, FIXED64, LEN, SGROUP, VARINT};

use super::check::Check;
use std::cell::Cell;

/// Decoder settings.
#[derive(Debug, Clone, Copy)]
pub struct DecodeOptions {
    /// Deepest nesting of messages and groups (protobuf's default: 100).
    pub max_depth: usize,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions {
            max_depth: wire::MAX_DEPTH,
        }
    }
}

/// Why decoding failed: the input, or the builder.
#[derive(Debug)]
pub enum Failure<E> {
    /// Malformed or hostile input (boxed: results stay small on the
    /// hot path).
    Wire(Box<DecodeError>),
    /// The builder's own error.
    Build(E),
}

pub(super) type Res<T, E> = Result<T, Failure<E>>;

/// Decode `data`, a whole message of type `ty`.
pub fn decode<B: MessageBuilder>(
    tables: &Tables,
    ty: u32,
    data: &[u8],
    builder: &mut B,
    opts: DecodeOptions,
) -> Res<B::Msg, B::Err> {
    let mut d = Decoder {
        t: tables,
        b: builder,
        opts,
        err_index: None,
        run: Vec::new(),
        frames: Vec::new(),
        roomy: Cell::new(false),
    };
    let mut m = d.b.start(ty).map_err(Failure::Build)?;
    let mut r = WireReader::new(data);
    // Level 0 runs on the caller's stack with no check: the walk checks
    // when it first goes below it (see `Decoder::stack_check`), so a walk
    // that never goes down (a message whose sub-messages are kept as
    // bytes) asks nothing of the thread's stack.
    let done = d.fields(&mut r, ty, &mut m, None, 0);
    match done {
        Ok(()) => Ok(m),
        Err(Failure::Wire(mut e)) => {
            e.path.insert(0, '$');
            Err(Failure::Wire(e))
        }
        Err(e) => Err(e),
    }
}

pub(super) struct Decoder<'t, 'b, B: MessageBuilder> {
    pub(super) t: &'t Tables,
    pub(super) b: &'b mut B,
    pub(super) opts: DecodeOptions,
    /// Set when an error happens inside a packed run, or in a run of map
    /// entries read together (`map_entry`): the element's index in that run
    /// (see `locate`).
    pub(super) err_index: Option<u32>,
    /// A packed run's values, read before they go to the builder (kept
    /// from run to run).
    pub(super) run: Vec<u64>,
    /// The enclosing messages of a [`scan`](Self::scan): each one's end and
    /// type (kept from scan to scan).
    pub(super) frames: Vec<(usize, u32)>,
    /// The stack had at least its red zone left when this walk first went
    /// below its top message (see [`stack_check`](Self::stack_check)).
    roomy: Cell<bool>,
}

impl<B: MessageBuilder> Decoder<'_, '_, B> {
    /// An error at byte `at`; its path is filled in as it travels up
    /// through the fields it is in (`locate`), so the happy path keeps no
    /// path at all.
    #[cold]
    pub(super) fn err<T>(&self, at: usize, msg: impl Into<String>) -> Res<T, B::Err> {
        self.err_as(DecodeKind::Malformed, at, msg)
    }

    /// An error of kind `kind` at byte `at` (see [`err`](Self::err)).
    #[cold]
    fn err_as<T>(&self, kind: DecodeKind, at: usize, msg: impl Into<String>) -> Res<T, B::Err> {
        Err(Failure::Wire(Box::new(
            DecodeError::new(at, msg, String::new()).with_kind(kind),
        )))
    }

    /// A reader's error: `truncated` where the input ends early,
    /// `malformed` otherwise.
    #[cold]
    fn wire_err<T>(&self, e: WireError) -> Res<T, B::Err> {
        let kind = if e.truncated {
            DecodeKind::Truncated
        } else {
            DecodeKind::Malformed
        };
        self.err_as(kind, e.offset, e.message)
    }

    #[inline]
    pub(super) fn wire<T>(&self, r: Result<T, WireError>) -> Res<T, B::Err> {
        match r {
            Ok(v) => Ok(v),
            Err(e) => self.wire_err(e),
        }
    }

    /// Nesting deeper than [`DecodeOptions::max_depth`] at byte `at`.
    #[cold]
    pub(super) fn too_deep<T>(&self, at: usize, what: &str) -> Res<T, B::Err> {
        self.err_as(
            DecodeKind::Limit,
            at,
            format!("{what} nested deeper than {}", self.opts.max_depth),
        )
    }

    /// Put field `f` in front of an error's path on its way up; for a
    /// repeated or map field, with the element's index, counted again from
    /// the message's bytes before the failing occurrence (`msg` up to
    /// `start`).
    #[cold]
    fn locate(&mut self, e: Failure<B::Err>, f: &FieldInfo, msg: &[u8]) -> Failure<B::Err> {
        let Failure::Wire(mut e) = e else { return e };
        let inner = self.err_index.take();
        let seg = match f.card {
            Cardinality::Singular { .. } => format!(".{}", f.name),
            _ => format!(
                ".{}[{}]",
                f.name,
                self.count_in(msg, f) + inner.unwrap_or(0)
            ),
        };
        e.path.insert_str(0, &seg);
        Failure::Wire(e)
    }

    /// How many elements of field `f` the (valid) bytes `msg` hold.
    fn count_in(&self, msg: &[u8], f: &FieldInfo) -> u32 {
        let mut r = WireReader::new(msg);
        let expected = if f.delimited {
            SGROUP
        } else {
            f.kind.wire_type()
        };
        let packable = matches!(f.card, Cardinality::Repeated { .. }) && f.kind.packable();
        let mut n = 0;
        while !r.at_end() {
            let Ok((num, wt)) = r.tag() else { break };
            if num == f.number && packable && wt == LEN {
                let Ok((s, e)) = r.len_prefixed() else { break };
                let mut pr = r.sub(s, e);
                while !pr.at_end() {
                    let step = match expected {
                        VARINT => pr.varint().map(|_| ()),
                        FIXED32 => pr.take(4).map(|_| ()),
                        _ => pr.take(8).map(|_| ()),
                    };
                    if step.is_err() {
                        break;
                    }
                    n += 1;
                }
                continue;
            }
            if num == f.number && wt == expected {
                n += 1;
            }
            if r.skip(num, wt, 0).is_err() {
                break;
            }
        }
        n
    }

    /// Read fields of message `ty` into `m` until the reader's end, or
    /// (a group) until the end tag of field `group`.
    fn fields(
        &mut self,
        r: &mut WireReader<'_>,
        ty: u32,
        m: &mut B::Msg,
        group: Option<u32>,
        depth: usize,
    ) -> Res<(), B::Err> {
        let t = self.t;
        let info = &t.messages[ty as usize];
        let fast = &info.fast[..];
        let msg_start = r.pos();
        loop {
            if r.at_end() {
                if group.is_some() {
                    return self.err_as(
                        DecodeKind::Truncated,
                        r.pos(),
                        "group without its end tag",
                    );
                }
                return Ok(());
            }
            let start = r.pos();
            let tag = self.wire(r.varint())?;
            // The common case: a field of the type with the wire type its
            // table entry reads (number 0 has no entry, and no entry reads
            // a group's tags), one compare.
            if let Some(e) = fast.get((tag >> 3) as usize) {
                if e.wt as u64 == tag & 7 {
                    let f = &info.fields[e.pos as usize];
                    if let Err(err) = self.fast_field(r, start, f, e.op, m, depth) {
                        return Err(self.locate(err, f, r.slice(msg_start, start)));
                    }
                    continue;
                }
            }
            if self.general(r, info, (msg_start, start), tag, m, group, depth)? {
                return Ok(());
            }
        }
    }

    /// A tag the table does not take (see `fields`), read at `start` in
    /// the message that began at `msg_start`, and its value: an unknown
    /// field, a known one with another wire type, a group's end (`true`:
    /// the group `fields` reads is over), a `MessageSet` item. Kept out of
    /// `fields`' loop, so the loop stays small.
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn general(
        &mut self,
        r: &mut WireReader<'_>,
        info: &MessageInfo,
        (msg_start, start): (usize, usize),
        tag: u64,
        m: &mut B::Msg,
        group: Option<u32>,
        depth: usize,
    ) -> Res<bool, B::Err> {
        let (num, wt) = self.wire(wire::split_tag(start, tag))?;
        if wt == EGROUP {
            return match group {
                Some(g) if g == num => Ok(true),
                Some(_) => self.err(start, "mismatched group end tag"),
                None => self.err(start, "unexpected end-group tag"),
            };
        }
        if wt == SGROUP && num == 1 && info.message_set {
            self.set_item(r, info, m, depth)?;
            return Ok(false);
        }
        let Some(fi) = info.find(num) else {
            self.unknown_field(r, start, num, wt, m, depth)?;
            return Ok(false);
        };
        let f = &info.fields[fi];
        if let Err(e) = self.field(r, start, f, wt, m, depth) {
            return Err(self.locate(e, f, r.slice(msg_start, start)));
        }
        Ok(false)
    }

    /// One item of a `MessageSet` (see [`MessageInfo::message_set`]; a
    /// member's own tag is read as any field's), its start tag read: the
    /// type id (field 2) and the message's bytes (field 3), in either
    /// order, the first of each kept and other fields skipped, as upb
    /// reads them. The bytes are decoded as the member of that number;
    /// for a number no member has, the item goes to the unknown fields
    /// written as upb writes it (start tag, id, bytes, end tag). An item
    /// missing its id or its bytes is dropped, as upb drops it.
    #[cold]
    #[inline(never)]
    fn set_item(
        &mut self,
        r: &mut WireReader<'_>,
        info: &MessageInfo,
        m: &mut B::Msg,
        depth: usize,
    ) -> Res<(), B::Err> {
        let (mut id, mut bytes) = (None, None);
        loop {
            if r.at_end() {
                return self.err_as(DecodeKind::Truncated, r.pos(), "group without its end tag");
            }
            let at = r.pos();
            let (num, wt) = self.wire(r.tag())?;
            match (num, wt) {
                (1, EGROUP) => break,
                (_, EGROUP) => return self.err(at, "mismatched group end tag"),
                // upb keeps the low 32 bits of the id.
                (2, VARINT) => _ = *id.get_or_insert(self.wire(r.varint())? as u32),
                (3, LEN) => _ = *bytes.get_or_insert(self.wire(r.len_prefixed())?),
                _ => self.skip(r, num, wt, depth)?,
            }
        }
        let (Some(id), Some((s, e))) = (id, bytes) else {
            return Ok(());
        };
        let ext = info.find(id).map(|i| &info.fields[i]);
        let Some((f, Kind::Message(sub_ty))) = ext.filter(|f| f.set_item).map(|f| (f, f.kind))
        else {
            let payload = r.slice(s, e);
            let mut item = Vec::with_capacity(payload.len() + 16);
            wire::put_tag(&mut item, 1, SGROUP);
            wire::put_varint(&mut item, 2, id as u64);
            wire::put_len(&mut item, 3, payload);
            wire::put_tag(&mut item, 1, EGROUP);
            return self.b.unknown(m, &item).map_err(Failure::Build);
        };
        if depth + 1 > self.opts.max_depth {
            return self.too_deep(s, "messages");
        }
        // Each item replaces the member (upb makes a new message for it).
        let mut sub = self.b.start(sub_ty).map_err(Failure::Build)?;
        let done = self.body(r, (s, e), sub_ty, &mut sub, depth + 1);
        if let Err(e) = done {
            return Err(self.locate(e, f, &[]));
        }
        self.b.end(m, f, sub).map_err(Failure::Build)
    }

    /// One occurrence of a known field whose wire type is its table
    /// entry's (see [`MessageInfo`]'s `fast`): the value read and stored
    /// with the work chosen when the table was built.
    #[inline(always)]
    fn fast_field(
        &mut self,
        r: &mut WireReader<'_>,
        start: usize,
        f: &FieldInfo,
        op: FastOp,
        m: &mut B::Msg,
        depth: usize,
    ) -> Res<(), B::Err> {
        // (`number_bits` maps the same ops for the scan and the plain walk;
        // called here, the error's way out through one `Result` cost the
        // loop about 6 instructions a field.)
        let bits = match op {
            FastOp::Int32 => varint_bits(Kind::Int32, self.wire(r.varint())?),
            FastOp::Uint32 => varint_bits(Kind::Uint32, self.wire(r.varint())?),
            FastOp::Sint32 => varint_bits(Kind::Sint32, self.wire(r.varint())?),
            FastOp::Sint64 => varint_bits(Kind::Sint64, self.wire(r.varint())?),
            FastOp::Bool => varint_bits(Kind::Bool, self.wire(r.varint())?),
            FastOp::Varint64 => self.wire(r.varint())?,
            FastOp::Fixed32 => self.wire(r.fixed32())?.into(),
            FastOp::Sfixed32 => fixed32_bits(Kind::Sfixed32, self.wire(r.fixed32())?),
            FastOp::Fixed64 => self.wire(r.fixed64())?,
            FastOp::StrChecked | FastOp::Text | FastOp::PushStrChecked | FastOp::PushText => {
                let (s, e) = self.wire(r.len_prefixed())?;
                let b = r.slice(s, e);
                let v = match op {
                    FastOp::StrChecked | FastOp::PushStrChecked => {
                        if let Err(bad) = crate::bytes::utf8::str(b) {
                            return self
                                .err(s + bad.valid_up_to(), "invalid UTF-8 in a string field");
                        }
                        Scalar::Str(b)
                    }
                    _ if f.kind == Kind::String => Scalar::Str(b),
                    _ => Scalar::Bytes(b),
                };
                return match op {
                    FastOp::StrChecked | FastOp::Text => self.b.set_text_at(m, f, v),
                    _ => self.b.push(m, f, v),
                }
                .map_err(Failure::Build);
            }
            FastOp::Packed => {
                let (s, e) = self.wire(r.len_prefixed())?;
                return self.packed_run(&mut r.sub(s, e), f, m);
            }
            FastOp::Message | FastOp::Map => {
                let Kind::Message(ty) = f.kind else {
                    return self.field_outlined(r, start, f, m, depth);
                };
                return match op {
                    FastOp::Map => self.map_entry(r, start, f, ty, m, depth),
                    _ => self.message_field(r, start, f, ty, m, depth),
                };
            }
            FastOp::Slow => return self.field_outlined(r, start, f, m, depth),
        };
        self.b.set_bits_at(m, f, bits).map_err(Failure::Build)
    }

    /// [`field`](Self::field) with the wire type of `f`'s kind, not
    /// inlined (for table entries the general path serves).
    #[inline(never)]
    fn field_outlined(
        &mut self,
        r: &mut WireReader<'_>,
        start: usize,
        f: &FieldInfo,
        m: &mut B::Msg,
        depth: usize,
    ) -> Res<(), B::Err> {
        self.field(r, start, f, f.kind.wire_type(), m, depth)
    }

    /// One occurrence of a known field.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn field(
        &mut self,
        r: &mut WireReader<'_>,
        start: usize,
        f: &FieldInfo,
        wt: u8,
        m: &mut B::Msg,
        depth: usize,
    ) -> Res<(), B::Err> {
        let expected = if f.delimited {
            SGROUP
        } else {
            f.kind.wire_type()
        };
        let packed_ok = matches!(f.card, Cardinality::Repeated { .. }) && f.kind.packable();
        if wt != expected && !(packed_ok && wt == LEN) {
            return self.unknown_field(r, start, f.number, wt, m, depth);
        }
        match (f.card, f.kind) {
            (Cardinality::Map, Kind::Message(entry)) => {
                self.map_entry(r, start, f, entry, m, depth)
            }
            (_, Kind::Message(sub_ty)) => self.message_field(r, start, f, sub_ty, m, depth),
            (Cardinality::Repeated { .. }, kind) if wt == LEN && kind.packable() => {
                let (s, e) = self.wire(r.len_prefixed())?;
                if !f.closed_enum {
                    return self.packed_run(&mut r.sub(s, e), f, m);
                }
                let count = run_len(kind, r.slice(s, e));
                self.b.reserve(m, f, count).map_err(Failure::Build)?;
                let mut pr = r.sub(s, e);
                let mut n = 0;
                while !pr.at_end() {
                    let step = match self.scalar_raw(&mut pr, f) {
                        Ok((v, raw)) => self.deliver(f, v, raw, None, m),
                        Err(e) => Err(e),
                    };
                    if let Err(e) = step {
                        self.err_index = Some(n);
                        return Err(e);
                    }
                    n += 1;
                }
                Ok(())
            }
            (card, kind) if kind.packable() && !f.closed_enum => {
                // A number kept whatever its value: read straight to its
                // bits, with no `Scalar` between.
                let bits = self.wire(value_bits(r, kind))?;
                match card {
                    Cardinality::Singular { .. } => self.b.set_bits(m, f, bits),
                    _ => self.b.push_bits(m, f, &[bits]),
                }
                .map_err(Failure::Build)
            }
            _ => {
                let (v, raw) = self.scalar_raw(r, f)?;
                self.deliver(f, v, raw, Some(r.slice(start, r.pos())), m)
            }
        }
    }

    /// One occurrence of message field `f` (of type `sub_ty`), its tag
    /// read at `start`: a new message, or the one already there merged.
    fn message_field(
        &mut self,
        r: &mut WireReader<'_>,
        start: usize,
        f: &FieldInfo,
        sub_ty: u32,
        m: &mut B::Msg,
        depth: usize,
    ) -> Res<(), B::Err> {
        if depth + 1 > self.opts.max_depth {
            return self.too_deep(start, "messages");
        }
        let mode = self.b.raw_mode();
        if mode != RawMode::Build && !f.delimited {
            let (s, e) = self.wire(r.len_prefixed())?;
            if mode == RawMode::Check {
                self.check(r.sub(s, e), sub_ty, depth + 1, s)?;
            }
            if self
                .b
                .raw(m, f, sub_ty, r.slice(s, e))
                .map_err(Failure::Build)?
            {
                return Ok(());
            }
            // The builder builds this one: from the same bytes.
            let mut sub = self.b.begin(m, f, sub_ty).map_err(Failure::Build)?;
            self.body(r, (s, e), sub_ty, &mut sub, depth + 1)?;
            return self.b.end(m, f, sub).map_err(Failure::Build);
        }
        let mut sub = self.b.begin(m, f, sub_ty).map_err(Failure::Build)?;
        self.sub_message(r, f, sub_ty, &mut sub, depth + 1)?;
        self.b.end(m, f, sub).map_err(Failure::Build)
    }

    /// Whether level `depth` (1 or more) of the walk must go through
    /// [`stack::enter`](crate::bytes::stack::enter): every
    /// `GROW_EVERY`-th level, as [`stack::descend`](crate::bytes::stack::descend)
    /// does, and level 1 until the stack has once been found to have at
    /// least its red zone left there. [`decode`] runs level 0 with no
    /// check (one frame of `fields` and the calls it makes that do not
    /// nest), so the levels below it are covered as when `decode` itself
    /// entered the stack, and a walk that never goes below its top message
    /// reads nothing of the thread's stack at all.
    #[inline(always)]
    fn stack_check(&self, depth: usize) -> bool {
        // (GROW_EVERY is 1 in debug builds, where clippy sees `% 1`.)
        #[allow(clippy::modulo_one)]
        if depth % crate::bytes::stack::GROW_EVERY == 0 {
            return true;
        }
        if depth != 1 || self.roomy.get() {
            return false;
        }
        // On a new segment (stack left short), siblings check again: they
        // run back on this stack.
        let low = crate::bytes::stack::low();
        self.roomy.set(!low);
        low
    }

    /// Check the bytes of a message of type `ty` at nesting `depth` (`sr`,
    /// starting at byte `at`) as a build would read them, building nothing:
    /// the same walk over a builder that keeps nothing, so an error has the
    /// kind, offset and path (from this message down) a build gives.
    #[inline(never)]
    pub(super) fn check(
        &mut self,
        mut sr: WireReader<'_>,
        ty: u32,
        depth: usize,
        at: usize,
    ) -> Res<(), B::Err> {
        // The common input, known good at a glance; the walk below decides
        // the rest, and gives every error.
        if self.scan(sr.clone(), ty, depth) {
            return Ok(());
        }
        let mut c = Decoder {
            t: self.t,
            b: &mut Check,
            opts: self.opts,
            err_index: None,
            run: std::mem::take(&mut self.run),
            frames: Vec::new(),
            roomy: self.roomy.clone(),
        };
        let done = level(
            self.stack_check(depth),
            || c.fields(&mut sr, ty, &mut (), None, depth),
            || out_of_stack(at),
        );
        self.run = c.run;
        match done {
            Ok(()) => Ok(()),
            Err(Failure::Wire(e)) => Err(Failure::Wire(e)),
            Err(Failure::Build(never)) => match never {},
        }
    }

    /// A packed run of a field whose values are all kept (no closed enum):
    /// read into bits in one loop for its kind, then handed over at once.
    fn packed_run(
        &mut self,
        pr: &mut WireReader<'_>,
        f: &FieldInfo,
        m: &mut B::Msg,
    ) -> Res<(), B::Err> {
        let mut run = std::mem::take(&mut self.run);
        run.clear();
        let done = match read_run(pr, f.kind, &mut run) {
            Ok(()) => self.b.push_bits(m, f, &run).map_err(Failure::Build),
            Err(e) => {
                self.err_index = Some(run.len() as u32);
                self.wire_err(e)
            }
        };
        self.run = run;
        done
    }

    /// Read the fields of a message of type `ty` from the bytes `s..e` of
    /// `r`'s input into `sub`, at nesting `depth`.
    #[inline(always)]
    pub(super) fn body(
        &mut self,
        r: &WireReader<'_>,
        (s, e): (usize, usize),
        ty: u32,
        sub: &mut B::Msg,
        depth: usize,
    ) -> Res<(), B::Err> {
        let mut sr = r.sub(s, e);
        level(
            self.stack_check(depth),
            || self.fields(&mut sr, ty, sub, None, depth),
            || out_of_stack(s),
        )
    }

    pub(super) fn sub_message(
        &mut self,
        r: &mut WireReader<'_>,
        f: &FieldInfo,
        ty: u32,
        sub: &mut B::Msg,
        depth: usize,
    ) -> Res<(), B::Err> {
        if f.delimited {
            let at = r.pos();
            level(
                self.stack_check(depth),
                || self.fields(r, ty, sub, Some(f.number), depth),
                || out_of_stack(at),
            )
        } else {
            let span = self.wire(r.len_prefixed())?;
            self.body(r, span, ty, sub, depth)
        }
    }

    /// Send a scalar to the builder, or a closed enum's unknown number to
    /// the unknown fields: as it was on the wire (`wire`, its tag and
    /// value) when it came alone, re-encoded from its varint as read (all
    /// 64 bits) when it came in a packed run; both as upb keeps them.
    #[inline(always)]
    fn deliver(
        &mut self,
        f: &FieldInfo,
        v: Scalar<'_>,
        raw: u64,
        wire: Option<&[u8]>,
        m: &mut B::Msg,
    ) -> Res<(), B::Err> {
        if let (Kind::Enum(e), Scalar::Enum(n)) = (f.kind, v) {
            if f.closed_enum && !self.t.enums[e as usize].contains(n) {
                if let Some(bytes) = wire {
                    return self.b.unknown(m, bytes).map_err(Failure::Build);
                }
                let mut buf = Vec::with_capacity(16);
                wire::put_varint(&mut buf, f.number, raw);
                return self.b.unknown(m, &buf).map_err(Failure::Build);
            }
        }
        match f.card {
            Cardinality::Singular { .. } => self.b.set(m, f, v),
            _ => self.b.push(m, f, v),
        }
        .map_err(Failure::Build)
    }

    /// Read one value, with an enum's varint as read (0 for other kinds).
    #[inline(always)]
    pub(super) fn scalar_raw<'a>(
        &self,
        r: &mut WireReader<'a>,
        f: &FieldInfo,
    ) -> Res<(Scalar<'a>, u64), B::Err> {
        if let Kind::Enum(_) = f.kind {
            let raw = self.wire(r.varint())?;
            return Ok((Scalar::Enum(raw as i32), raw));
        }
        Ok((self.scalar(r, f)?, 0))
    }

    /// Read one value of a scalar or enum field.
    #[inline(always)]
    pub(super) fn scalar<'a>(
        &self,
        r: &mut WireReader<'a>,
        f: &FieldInfo,
    ) -> Res<Scalar<'a>, B::Err> {
        let before = r.clone();
        match read_scalar(r, f) {
            Some(v) => Ok(v),
            None => self.scalar_failure(before, f),
        }
    }

    /// Why [`read_scalar`] read no value of field `f` at `r`: the same
    /// read again, with its error.
    #[cold]
    #[inline(never)]
    fn scalar_failure<T>(&self, mut r: WireReader<'_>, f: &FieldInfo) -> Res<T, B::Err> {
        let at = r.pos();
        let failed = match f.kind {
            Kind::Message(_) => None,
            k => match k.wire_type() {
                VARINT => r.varint().err(),
                FIXED32 => r.fixed32().err(),
                FIXED64 => r.fixed64().err(),
                _ => match r.len_prefixed() {
                    Err(e) => Some(e),
                    Ok((s, e)) => {
                        let bad = crate::bytes::utf8::str(r.slice(s, e)).err();
                        let at = s + bad.map_or(0, |b| b.valid_up_to());
                        return self.err(at, "invalid UTF-8 in a string field");
                    }
                },
            },
        };
        match failed {
            Some(e) => self.wire_err(e),
            None => self.err(at, "message where a scalar was expected"),
        }
    }

    fn unknown_field(
        &mut self,
        r: &mut WireReader<'_>,
        start: usize,
        num: u32,
        wt: u8,
        m: &mut B::Msg,
        depth: usize,
    ) -> Res<(), B::Err> {
        self.skip(r, num, wt, depth)?;
        let bytes = r.slice(start, r.pos());
        self.b.unknown(m, bytes).map_err(Failure::Build)
    }

    /// Move past a value whose tag was just read; groups nest within
    /// [`DecodeOptions::max_depth`] like messages.
    pub(super) fn skip(
        &self,
        r: &mut WireReader<'_>,
        num: u32,
        wt: u8,
        depth: usize,
    ) -> Res<(), B::Err> {
        match wt {
            VARINT => self.wire(r.varint()).map(|_| ()),
            FIXED64 => self.wire(r.take(8)).map(|_| ()),
            FIXED32 => self.wire(r.take(4)).map(|_| ()),
            LEN => self.wire(r.len_prefixed()).map(|_| ()),
            SGROUP => {
                if depth + 1 > self.opts.max_depth {
                    return self.too_deep(r.pos(), "groups");
                }
                loop {
                    if r.at_end() {
                        return self.err_as(
                            DecodeKind::Truncated,
                            r.pos(),
                            "group without its end tag",
                        );
                    }
                    let at = r.pos();
                    let (n, w) = self.wire(r.tag())?;
                    if w == EGROUP {
                        if n != num {
                            return self.err(at, "mismatched group end tag");
                        }
                        return Ok(());
                    }
                    let at = r.pos();
                    level(
                        self.stack_check(depth + 1),
                        || self.skip(r, n, w, depth + 1),
                        || out_of_stack(at),
                    )?;
                }
            }
            _ => self.err(r.pos(), "unexpected end-group tag"),
        }
    }
}

/// The value of a number field that fast op `op` reads (one of the number
/// ops), as its bits ([`Scalar::bits`]).
#[inline(always)]
pub(super) fn number_bits(op: FastOp, r: &mut WireReader<'_>) -> Result<u64, WireError> {
    Ok(match op {
        FastOp::Int32 => varint_bits(Kind::Int32, r.varint()?),
        FastOp::Uint32 => varint_bits(Kind::Uint32, r.varint()?),
        FastOp::Sint32 => varint_bits(Kind::Sint32, r.varint()?),
        FastOp::Sint64 => varint_bits(Kind::Sint64, r.varint()?),
        FastOp::Bool => varint_bits(Kind::Bool, r.varint()?),
        FastOp::Varint64 => r.varint()?,
        FastOp::Fixed32 => r.fixed32()?.into(),
        FastOp::Sfixed32 => fixed32_bits(Kind::Sfixed32, r.fixed32()?),
        FastOp::Fixed64 => r.fixed64()?,
        // The other ops read no number; the callers ask for these only.
        _ => 0,
    })
}

/// One value of a scalar or enum field `f`, or `None` for bytes in error
/// (see [`Decoder::scalar`] for the error). No error is made here, so the
/// value stays in registers: a `Result` holding the decoder's error goes
/// through the stack, and moving the value back out of it stalls the CPU
/// (a load over narrower stores just made, which it cannot forward).
#[inline(always)]
pub(super) fn read_scalar<'a>(r: &mut WireReader<'a>, f: &FieldInfo) -> Option<Scalar<'a>> {
    Some(match f.kind {
        Kind::Int32 => Scalar::I32(r.varint().ok()? as i32),
        Kind::Int64 => Scalar::I64(r.varint().ok()? as i64),
        Kind::Uint32 => Scalar::U32(r.varint().ok()? as u32),
        Kind::Uint64 => Scalar::U64(r.varint().ok()?),
        Kind::Sint32 => Scalar::I32(varint::unzigzag(r.varint().ok()? & 0xFFFF_FFFF) as i32),
        Kind::Sint64 => Scalar::I64(varint::unzigzag(r.varint().ok()?)),
        Kind::Bool => Scalar::Bool(r.varint().ok()? != 0),
        Kind::Enum(_) => Scalar::Enum(r.varint().ok()? as i32),
        Kind::Fixed32 => Scalar::U32(r.fixed32().ok()?),
        Kind::Sfixed32 => Scalar::I32(r.fixed32().ok()? as i32),
        Kind::Float => Scalar::F32(f32::from_bits(r.fixed32().ok()?)),
        Kind::Fixed64 => Scalar::U64(r.fixed64().ok()?),
        Kind::Sfixed64 => Scalar::I64(r.fixed64().ok()? as i64),
        Kind::Double => Scalar::F64(f64::from_bits(r.fixed64().ok()?)),
        Kind::Bytes => {
            let (s, e) = r.len_prefixed().ok()?;
            Scalar::Bytes(r.slice(s, e))
        }
        Kind::String => {
            let (s, e) = r.len_prefixed().ok()?;
            let b = r.slice(s, e);
            if f.utf8_verify && crate::bytes::utf8::str(b).is_err() {
                return None;
            }
            Scalar::Str(b)
        }
        Kind::Message(_) => return None,
    })
}

/// Run `f`, a level of a walk, on the stack it runs on (`check` false),
/// or through [`stack::enter`](crate::bytes::stack::enter) (see
/// [`Decoder::stack_check`]).
#[inline(always)]
fn level<T, E>(
    check: bool,
    f: impl FnOnce() -> Result<T, E>,
    no_stack: impl FnOnce() -> E,
) -> Result<T, E> {
    if check {
        crate::bytes::stack::enter(f, no_stack)
    } else {
        f()
    }
}

/// The thread's stack ran short before the depth limit did: a limit, at
/// byte `at`.
#[cold]
fn out_of_stack<E>(at: usize) -> Failure<E> {
    Failure::Wire(Box::new(
        DecodeError::new(at, "out of stack", String::new()).with_kind(DecodeKind::Limit),
    ))
}
