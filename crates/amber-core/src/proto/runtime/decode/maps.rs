//! Map entries: the usual forms read by the entry type's table, any other form field by
//! field (key or value missing or repeated, unknown fields, bytes in error).

use super::decoder::{read_scalar, Decoder, Failure, Res};
use crate::bytes::varint;
use crate::proto::runtime::builder::{MapValue, MessageBuilder, RawMode};
use crate::proto::runtime::scalar::{is_zero, zero, Scalar};
use crate::proto::runtime::schema::{Cardinality, FastOp, FieldInfo, Kind, MessageInfo};
use crate::proto::wire::{self, WireReader, EGROUP, LEN};

impl<B: MessageBuilder> Decoder<'_, '_, B> {
    /// The entries of map field `f` (entry type `entry`) from the one
    /// whose tag was read at `start` on, while each next field is another
    /// entry of the same map with its tag in the usual form: they are read
    /// here in turn, the entry type's fields looked up once, instead of
    /// going back through the field loop for each. An error in a later
    /// entry than the first gives its place in the run (`err_index`), so
    /// its path says which entry it is.
    pub(super) fn map_entry(
        &mut self,
        r: &mut WireReader<'_>,
        start: usize,
        f: &FieldInfo,
        entry: u32,
        m: &mut B::Msg,
        depth: usize,
    ) -> Res<(), B::Err> {
        let t = self.t;
        let einfo = &t.messages[entry as usize];
        let (Some(kf), Some(vf)) = (einfo.field(1), einfo.field(2)) else {
            return self.err(start, "map entry type without key and value");
        };
        if depth + 1 > self.opts.max_depth {
            return self.too_deep(start, "messages");
        }
        let mut tag = [0u8; varint::MAX_LEN];
        let tag_len = varint::encode(u64::from(f.number) << 3 | LEN as u64, &mut tag);
        let tag = &tag[..tag_len];
        let (mut start, mut n) = (start, 0u32);
        loop {
            if let Err(e) = self.entry(r, start, f, (einfo, kf, vf), m, depth) {
                if n > 0 {
                    self.err_index = Some(n);
                }
                return Err(e);
            }
            if !r.rest().starts_with(tag) {
                return Ok(());
            }
            start = r.pos();
            self.wire(r.take(tag_len))?;
            n += 1;
        }
    }

    /// One map entry, its tag read at `start`: key (field 1) and value
    /// (field 2), either missing or repeated (last wins); other fields are
    /// skipped.
    #[inline(always)]
    fn entry(
        &mut self,
        r: &mut WireReader<'_>,
        start: usize,
        f: &FieldInfo,
        (einfo, kf, vf): (&MessageInfo, &FieldInfo, &FieldInfo),
        m: &mut B::Msg,
        depth: usize,
    ) -> Res<(), B::Err> {
        let (s, e) = self.wire(r.len_prefixed())?;
        self.b.entry_at(start, r.left());
        if let Some((k, v)) = self.plain_entry(r.sub(s, e), einfo, kf, vf) {
            return self
                .b
                .map_entry(m, f, k, MapValue::Scalar(v))
                .map_err(Failure::Build);
        }
        if let (Kind::Message(vty), RawMode::Check | RawMode::Trust) = (vf.kind, self.b.raw_mode())
        {
            if let Some((k, (vs, ve))) = self.key_and_message(r.sub(s, e), einfo, kf) {
                if self.b.raw_mode() == RawMode::Check {
                    self.check(r.sub(vs, ve), vty, depth + 1, vs)
                        .map_err(in_value)?;
                }
                if self
                    .b
                    .raw_entry(m, f, k, vty, r.slice(vs, ve))
                    .map_err(Failure::Build)?
                {
                    return Ok(());
                }
            }
        }
        self.entry_general(r.sub(s, e), f, (kf, vf), m, depth)
    }

    /// The usual form of an entry of a map of messages: the key, with the
    /// wire type its entry reads, then the value's tag and length, and
    /// nothing else; the key and where the value's bytes are. `None` for
    /// any other form, or bytes in error (`entry_general` reads those).
    #[inline(always)]
    fn key_and_message<'a>(
        &self,
        mut er: WireReader<'a>,
        einfo: &MessageInfo,
        kf: &FieldInfo,
    ) -> Option<(Scalar<'a>, (usize, usize))> {
        let (ke, ve) = (einfo.fast.get(1)?, einfo.fast.get(2)?);
        if matches!(ke.op, FastOp::Slow | FastOp::Message) || !matches!(ve.op, FastOp::Message) {
            return None;
        }
        if er.varint().ok()? != (1 << 3 | ke.wt as u64) {
            return None;
        }
        let k = read_scalar(&mut er, kf)?;
        if er.varint().ok()? != (2 << 3 | LEN as u64) {
            return None;
        }
        let v = er.len_prefixed().ok()?;
        er.at_end().then_some((k, v))
    }

    /// A map entry in any other form than `plain_entry` reads (a message
    /// value, fields missing, repeated or unknown, bytes in error), its
    /// bytes `er`: kept out of `map_entry`, so that the usual entry pays
    /// for none of this one's state.
    #[inline(never)]
    fn entry_general(
        &mut self,
        mut er: WireReader<'_>,
        f: &FieldInfo,
        (kf, vf): (&FieldInfo, &FieldInfo),
        m: &mut B::Msg,
        depth: usize,
    ) -> Res<(), B::Err> {
        let t = self.t;
        let mut key: Option<Scalar<'_>> = None;
        let mut val: Option<MapValue<'_, B::Msg>> = None;
        // A message value kept as its bytes (see `MessageBuilder::raw_entry`).
        let mode = self.b.raw_mode();
        let mut raw_val: Option<(usize, usize)> = None;
        // The entry's own unknown fields (other numbers, wrong wire types,
        // a closed enum's undeclared value): an entry with unknown fields
        // goes, re-encoded, to the parent's unknown fields instead of the
        // map, as upb does.
        let mut extra: Vec<u8> = Vec::new();
        let entry_start = er.pos();
        while !er.at_end() {
            let fstart = er.pos();
            let (num, wt) = self.wire(er.tag())?;
            if wt == EGROUP {
                return self.err(fstart, "unexpected end-group tag");
            }
            let target = match num {
                1 => Some(kf),
                2 => Some(vf),
                _ => None,
            };
            match target {
                Some(tf) if wt == tf.kind.wire_type() => {
                    if let Kind::Message(vty) = tf.kind {
                        let first = val.is_none() && raw_val.is_none();
                        if mode != RawMode::Build && !tf.delimited && first {
                            // The value's own length is the value's, as a
                            // build reads it (`sub_message`).
                            let (vs, ve) = self.wire(er.len_prefixed()).map_err(in_value)?;
                            if mode == RawMode::Check {
                                let checked = self.check(er.sub(vs, ve), vty, depth + 1, vs);
                                checked.map_err(in_value)?;
                            }
                            raw_val = Some((vs, ve));
                            continue;
                        }
                        let mut sub = match val.take() {
                            Some(MapValue::Message(sm)) => sm,
                            _ => self.b.start(vty).map_err(Failure::Build)?,
                        };
                        if let Some((vs, ve)) = raw_val.take() {
                            // The value seen before, kept as bytes: built,
                            // and this one merged into it.
                            self.body(&er, (vs, ve), vty, &mut sub, depth + 1)
                                .map_err(in_value)?;
                        }
                        if let Err(e) = self.sub_message(&mut er, tf, vty, &mut sub, depth + 1) {
                            return Err(in_value(e));
                        }
                        val = Some(MapValue::Message(sub));
                    } else {
                        let (v, raw) = self.scalar_raw(&mut er, tf)?;
                        if num == 1 {
                            key = Some(v);
                        } else if let (Scalar::Enum(n), Kind::Enum(en)) = (v, tf.kind) {
                            if tf.closed_enum && !t.enums[en as usize].contains(n) {
                                wire::put_varint(&mut extra, 2, raw);
                            } else {
                                val = Some(MapValue::Scalar(v));
                            }
                        } else {
                            val = Some(MapValue::Scalar(v));
                        }
                    }
                }
                _ => {
                    self.skip(&mut er, num, wt, depth + 1)?;
                    extra.extend_from_slice(er.slice(fstart, er.pos()));
                }
            }
        }
        if !extra.is_empty() {
            let mut body = Vec::with_capacity(extra.len() + 16);
            let keep = |fi: &FieldInfo, v: Scalar<'_>| match fi.card {
                Cardinality::Singular { presence: false } => !is_zero(v),
                _ => true,
            };
            if let Some(k) = key.filter(|&k| keep(kf, k)) {
                wire::put_tag(&mut body, 1, kf.kind.wire_type());
                put_scalar(&mut body, kf.kind, k);
            }
            match &val {
                Some(MapValue::Scalar(v)) if keep(vf, *v) => {
                    wire::put_tag(&mut body, 2, vf.kind.wire_type());
                    put_scalar(&mut body, vf.kind, *v);
                }
                Some(MapValue::Message(_)) => self.value_fields(&er, entry_start, vf, &mut body),
                None if raw_val.is_some() => self.value_fields(&er, entry_start, vf, &mut body),
                _ => {}
            }
            body.extend_from_slice(&extra);
            let mut out = Vec::with_capacity(body.len() + 8);
            wire::put_len(&mut out, f.number, &body);
            return self.b.unknown(m, &out).map_err(Failure::Build);
        }
        let key = key.unwrap_or_else(|| zero(kf));
        if let (Some((vs, ve)), Kind::Message(vty)) = (raw_val, vf.kind) {
            if self
                .b
                .raw_entry(m, f, key, vty, er.slice(vs, ve))
                .map_err(Failure::Build)?
            {
                return Ok(());
            }
            // The builder builds it: from the same bytes.
            let mut sub = self.b.start(vty).map_err(Failure::Build)?;
            self.body(&er, (vs, ve), vty, &mut sub, depth + 1)
                .map_err(in_value)?;
            val = Some(MapValue::Message(sub));
        }
        let val = match val {
            Some(v) => v,
            None => match vf.kind {
                Kind::Message(vty) => MapValue::Message(self.b.start(vty).map_err(Failure::Build)?),
                _ => MapValue::Scalar(zero(vf)),
            },
        };
        self.b.map_entry(m, f, key, val).map_err(Failure::Build)
    }

    /// Append the occurrences of a map entry's message value `vf` (tag and
    /// value, as on the wire) among the entry's fields, from `entry_start`
    /// to the end of `er` (bytes read without error before).
    #[cold]
    fn value_fields(
        &self,
        er: &WireReader<'_>,
        entry_start: usize,
        vf: &FieldInfo,
        out: &mut Vec<u8>,
    ) {
        let mut vr = er.sub(entry_start, er.pos());
        while !vr.at_end() {
            let at = vr.pos();
            let Ok((num, wt)) = vr.tag() else { return };
            if vr.skip(num, wt, 0).is_err() {
                return;
            }
            if num == 2 && wt == vf.kind.wire_type() {
                out.extend_from_slice(vr.slice(at, vr.pos()));
            }
        }
    }

    /// Read with the entry type's table (see [`MessageInfo`]'s `fast`), the
    /// usual form of an entry of a map of scalar values: the key, then the
    /// value, each with the wire type its entry reads, and nothing else.
    /// `None` for any other form, or bytes in error: the general loop of
    /// `map_entry` reads those from the start again (and reports the error).
    #[inline(always)]
    fn plain_entry<'a>(
        &self,
        mut er: WireReader<'a>,
        einfo: &MessageInfo,
        kf: &FieldInfo,
        vf: &FieldInfo,
    ) -> Option<(Scalar<'a>, Scalar<'a>)> {
        let (ke, ve) = (einfo.fast.get(1)?, einfo.fast.get(2)?);
        if matches!(ke.op, FastOp::Slow) || matches!(ve.op, FastOp::Slow | FastOp::Message) {
            return None;
        }
        if er.varint().ok()? != (1 << 3 | ke.wt as u64) {
            return None;
        }
        let k = read_scalar(&mut er, kf)?;
        if er.varint().ok()? != (2 << 3 | ve.wt as u64) {
            return None;
        }
        let v = read_scalar(&mut er, vf)?;
        er.at_end().then_some((k, v))
    }
}

/// An error inside a map entry's value: `.value` put in front of its path.
#[cold]
pub(super) fn in_value<E>(e: Failure<E>) -> Failure<E> {
    match e {
        Failure::Wire(mut w) => {
            w.path.insert_str(0, ".value");
            Failure::Wire(w)
        }
        other => other,
    }
}

/// Append a scalar's bytes (no tag), forwards.
fn put_scalar(out: &mut Vec<u8>, kind: Kind, s: Scalar<'_>) {
    let bits = match s {
        Scalar::I32(v) | Scalar::Enum(v) => v as i64 as u64,
        Scalar::I64(v) => v as u64,
        Scalar::U32(v) => v as u64,
        Scalar::U64(v) => v,
        Scalar::Bool(v) => v as u64,
        Scalar::F32(v) => v.to_bits() as u64,
        Scalar::F64(v) => v.to_bits(),
        Scalar::Str(b) | Scalar::Bytes(b) => {
            varint::write(out, b.len() as u64);
            out.extend_from_slice(b);
            return;
        }
    };
    match kind {
        Kind::Sint32 => varint::write(out, varint::zigzag(bits as i32 as i64) & 0xFFFF_FFFF),
        Kind::Sint64 => varint::write(out, varint::zigzag(bits as i64)),
        Kind::Fixed32 | Kind::Sfixed32 | Kind::Float => {
            out.extend_from_slice(&(bits as u32).to_le_bytes())
        }
        Kind::Fixed64 | Kind::Sfixed64 | Kind::Double => out.extend_from_slice(&bits.to_le_bytes()),
        _ => varint::write(out, bits),
    }
}
