//! Aggregate option values: `{ ... }` text format encoded as the message a
//! serializer would write (fields in number order, packed where the field is
//! packed, zero values of fields without presence left out).

use std::collections::HashSet;

use super::encode::put_message;
use super::{oerr, FieldInfo, Interp};
use crate::proto::compiler::ast::*;
use crate::proto::descriptor::*;
use crate::proto::error::{Pos, ProtoError, ProtoErrorKind};
use crate::proto::wire::{self, WireReader};

impl Interp<'_> {
    /// Encode a text-format message of type `msg`.
    pub(super) fn text(
        &mut self,
        msg: &str,
        fields: &[TextField],
        scope: &str,
    ) -> Result<Vec<u8>, ProtoError> {
        self.depth += 1;
        if self.depth > crate::proto::compiler::parser::MAX_NESTING {
            return Err(ProtoError::new(
                ProtoErrorKind::TooDeep,
                "Option value nested too deeply.",
                Pos::default(),
            ));
        }
        let msg = msg.trim_start_matches('.');
        let in_map_entry = self
            .message(msg)
            .and_then(|(m, _)| m.options.as_ref())
            .and_then(|o| o.map_entry)
            == Some(true);
        let mut entries: Vec<(i32, Vec<u8>)> = Vec::new();
        let mut set_once = HashSet::new();
        for tf in fields {
            let fi = match &tf.name {
                TextName::Field(n) => self.text_field(msg, n).ok_or_else(|| {
                    oerr(
                        format!("Message type \"{msg}\" has no field named \"{n}\"."),
                        tf.pos,
                    )
                })?,
                TextName::Ext(n) => self.extension(msg, n, scope, tf.pos)?,
                TextName::Any(prefix, tname) => {
                    let TextValue::Message(m) = &tf.value else {
                        return Err(oerr("An expanded Any needs a message value.", tf.pos));
                    };
                    if msg != "google.protobuf.Any" || self.message(tname).is_none() {
                        return Err(oerr(
                            format!("Could not expand \"{prefix}/{tname}\" in \"{msg}\"."),
                            tf.pos,
                        ));
                    }
                    let inner = self.text(tname, m, scope)?;
                    let mut url = Vec::new();
                    wire::put_len(&mut url, 1, format!("{prefix}/{tname}").as_bytes());
                    let mut value = Vec::new();
                    wire::put_len(&mut value, 2, &inner);
                    entries.push((1, url));
                    entries.push((2, value));
                    continue;
                }
            };
            let num = fi.f.number.unwrap_or(0);
            let repeated = fi.f.label == Some(label::REPEATED);
            if !repeated && !set_once.insert(num) {
                return Err(oerr(
                    format!(
                        "Non-repeated field \"{}\" is specified multiple times.",
                        fi.f.name.as_deref().unwrap_or("")
                    ),
                    tf.pos,
                ));
            }
            let stripped = self.is_source_retained(&fi);
            let items: Vec<&TextValue> = match &tf.value {
                TextValue::List(v) => {
                    if !repeated {
                        return Err(oerr(
                            format!(
                                "Field \"{}\" is not repeated.",
                                fi.f.name.as_deref().unwrap_or("")
                            ),
                            tf.pos,
                        ));
                    }
                    v.iter().collect()
                }
                v => vec![v],
            };
            let packed = repeated && self.is_packed(&fi);
            let mut buf = Vec::new();
            for it in items {
                match it {
                    TextValue::Scalar(s) => self.scalar(&fi, s, packed, true, &mut buf)?,
                    TextValue::Message(m) => {
                        let t = fi.f.r#type.unwrap_or(0);
                        if t != field_type::MESSAGE && t != field_type::GROUP {
                            return Err(oerr(
                                format!(
                                    "Field \"{}\" is not a message.",
                                    fi.f.name.as_deref().unwrap_or("")
                                ),
                                tf.pos,
                            ));
                        }
                        let inner = self.text(fi.f.type_name.as_deref().unwrap_or(""), m, scope)?;
                        if matches!(tf.name, TextName::Ext(_)) && self.is_message_set(msg) {
                            // MessageSet items: group 1 { type_id = 2; message = 3; }.
                            wire::put_tag(&mut buf, 1, wire::SGROUP);
                            wire::put_varint(&mut buf, 2, num as u64);
                            wire::put_len(&mut buf, 3, &inner);
                            wire::put_tag(&mut buf, 1, wire::EGROUP);
                        } else {
                            put_message(fi.f, &inner, &mut buf);
                        }
                    }
                    TextValue::List(_) => {
                        return Err(oerr("Nested lists are not allowed.", tf.pos))
                    }
                }
            }
            if packed && !buf.is_empty() {
                let mut p = Vec::new();
                wire::put_len(&mut p, num as u32, &buf);
                buf = p;
            }
            // A field without presence set to its zero value is not written
            // (as a serializer leaves it out).
            // (Map entries always hold their key and value.)
            let skip = !repeated && !in_map_entry && !self.has_presence(&fi) && is_zero_value(&buf);
            if !stripped && !skip && !buf.is_empty() {
                entries.push((num, buf));
            }
        }
        // A serialized message has its fields in number order.
        entries.sort_by_key(|e| e.0);
        let mut out = Vec::new();
        let mut i = 0;
        while i < entries.len() {
            // Packed values of one field written in several statements join.
            let num = entries[i].0;
            let mut j = i;
            while j < entries.len() && entries[j].0 == num {
                j += 1;
            }
            let group = &entries[i..j];
            let fi_packed = group.len() > 1 && group.iter().all(|e| is_len_tag(&e.1, num));
            if fi_packed && self.field_is_packed_num(msg, num) {
                let mut payload = Vec::new();
                for e in group {
                    let mut r = WireReader::new(&e.1);
                    let _ = r.tag();
                    if let Ok((s, en)) = r.len_prefixed() {
                        payload.extend_from_slice(&e.1[s..en]);
                    }
                }
                wire::put_len(&mut out, num as u32, &payload);
            } else {
                for e in group {
                    out.extend_from_slice(&e.1);
                }
            }
            i = j;
        }
        self.depth -= 1;
        Ok(out)
    }

    pub(super) fn field_is_packed_num(&self, msg: &str, num: i32) -> bool {
        self.field_where(msg, |f| f.number == Some(num))
            .is_some_and(|fi| fi.f.label == Some(label::REPEATED) && self.is_packed(&fi))
    }

    /// Whether a singular field tracks presence (proto3 fields and editions
    /// IMPLICIT fields do not, unless they are messages or in a oneof).
    pub(super) fn has_presence(&self, fi: &FieldInfo<'_>) -> bool {
        let f = fi.f;
        if matches!(f.r#type, Some(field_type::MESSAGE | field_type::GROUP))
            || f.oneof_index.is_some()
            || f.extendee.is_some()
        {
            return true;
        }
        let pf = &self.pool.files[fi.file];
        if pf.proto3 {
            return false;
        }
        if pf.editions {
            return crate::proto::compiler::pool::presence(pf, f) != 2;
        }
        true
    }

    /// Whether a repeated field is written packed by a serializer.
    pub(crate) fn is_packed(&self, fi: &FieldInfo<'_>) -> bool {
        use field_type::*;
        let t = fi.f.r#type.unwrap_or(0);
        if matches!(t, STRING | BYTES | MESSAGE | GROUP) || t == 0 {
            return false;
        }
        let opts = fi.f.options.as_ref();
        if let Some(p) = opts.and_then(|o| o.packed) {
            return p;
        }
        let pf = &self.pool.files[fi.file];
        if pf.proto3 {
            return true;
        }
        if pf.editions {
            let field_enc = opts
                .and_then(|o| o.features.as_ref())
                .and_then(|f| f.repeated_field_encoding);
            let file_enc = pf
                .file
                .options
                .as_ref()
                .and_then(|o| o.features.as_ref())
                .and_then(|f| f.repeated_field_encoding);
            return field_enc.or(file_enc) != Some(2);
        }
        false
    }
}

/// Whether `b`, one encoded field, holds the type's zero value (0, false,
/// 0.0 with all bits clear, the first enum value 0, or an empty string).
fn is_zero_value(b: &[u8]) -> bool {
    let mut r = WireReader::new(b);
    let Ok((_, wt)) = r.tag() else { return false };
    let at = r.pos();
    match wt {
        wire::VARINT => r.varint().is_ok_and(|v| v == 0) && r.at_end(),
        wire::FIXED32 | wire::FIXED64 => b[at..].iter().all(|&x| x == 0),
        wire::LEN => b.get(at) == Some(&0) && b.len() == at + 1,
        _ => false,
    }
}

fn is_len_tag(b: &[u8], num: i32) -> bool {
    let mut r = WireReader::new(b);
    matches!(r.tag(), Ok((n, wire::LEN)) if n as i32 == num)
}
