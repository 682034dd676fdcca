//! One option statement encoded as bytes of its options message, with the
//! field types its descriptor declares.

use super::*;

impl<'a> Interp<'a> {
    /// Encode one option statement as bytes of the options message.
    pub(super) fn option(
        &mut self,
        o: &PendingOption,
        so_far: &[u8],
    ) -> Result<Option<Vec<u8>>, ProtoError> {
        if !self.editions {
            if let Some(first) = o.name.first().filter(|p| !p.is_ext && p.name == "features") {
                return Err(oerr(
                    "Features are only valid under editions.",
                    self.file_pos(o).unwrap_or(first.pos),
                ));
            }
        }
        let mut msg = o.kind.message_name().to_string();
        let mut chain: Vec<FieldInfo<'a>> = Vec::new();
        for (i, part) in o.name.iter().enumerate() {
            let fi = if part.is_ext {
                self.extension(&msg, &part.name, &o.scope, part.pos)?
            } else {
                // protoc reports errors in an option's name at its start.
                self.field_by_name(&msg, &part.name).ok_or_else(|| {
                    oerr(
                        format!("Option \"{}\" unknown. Ensure that your proto definition file imports the proto which defines the option (i.e. via import option after edition 2024).", display_name(&o.name[..=i])),
                        o.name[0].pos,
                    )
                })?
            };
            if i + 1 < o.name.len() {
                let t = fi.f.r#type.unwrap_or(0);
                if t != field_type::MESSAGE && t != field_type::GROUP {
                    return Err(oerr(
                        format!(
                            "Option \"{}\" is an atomic type, not a message.",
                            display_name(&o.name[..=i])
                        ),
                        part.pos,
                    ));
                }
                if fi.f.label == Some(label::REPEATED) {
                    return Err(oerr(
                        format!("Option field \"{}\" is a repeated message. Repeated message options must be initialized using an aggregate value.", display_name(&o.name[..=i])),
                        part.pos,
                    ));
                }
                msg =
                    fi.f.type_name
                        .clone()
                        .unwrap_or_default()
                        .trim_start_matches('.')
                        .to_string();
            }
            chain.push(fi);
        }
        let Some(last) = chain.last() else {
            return Err(oerr("Empty option name.", Pos::default()));
        };
        let pos = o.name.last().map(|p| p.pos).unwrap_or_default();
        if chain.len() >= 2 && !o.name[0].is_ext && o.name[0].name == "features" {
            self.check_feature(o, &chain, &msg, pos)?;
        } else if let [leaf] = chain.as_slice() {
            self.check_removed(o, leaf)?;
        }
        // A feature may only be set where its `targets` allow.
        if chain.len() >= 2 && !o.name[0].is_ext && o.name[0].name == "features" {
            let targets = &last
                .f
                .options
                .as_ref()
                .map(|x| x.targets.clone())
                .unwrap_or_default();
            if !targets.is_empty() && !targets.contains(&o.kind.target_type()) {
                return Err(oerr(
                    format!(
                        "Option {} cannot be set on an entity of type `{}`.",
                        display_name(&o.name),
                        o.kind.entity_name()
                    ),
                    pos,
                ));
            }
        }
        // Setting a singular field that the statements before already set
        // is an error, as in protoc (which looks in the bytes so far too).
        if last.f.label != Some(label::REPEATED) {
            let nums: Vec<u32> = chain
                .iter()
                .map(|fi| fi.f.number.unwrap_or(0) as u32)
                .collect();
            if is_set(so_far, &nums) {
                return Err(oerr(
                    format!("Option \"{}\" was already set.", display_name(&o.name)),
                    pos,
                ));
            }
        }
        let mut bytes = Vec::new();
        match &o.value {
            OptValue::Scalar(s) => {
                let t = last.f.r#type.unwrap_or(0);
                if t == field_type::MESSAGE || t == field_type::GROUP {
                    let n = display_name(&o.name);
                    return Err(oerr(format!("Option \"{n}\" is a message. To set the entire message, use syntax like \"{n} = {{ <proto text format> }}\". To set fields within it, use syntax like \"{n}.foo = value\"."), s.pos));
                }
                self.scalar(last, s, false, false, &mut bytes)?;
            }
            OptValue::Aggregate(fields) => {
                let t = last.f.r#type.unwrap_or(0);
                if t != field_type::MESSAGE && t != field_type::GROUP {
                    return Err(oerr(
                        format!(
                            "Option \"{}\" is not a message; an aggregate value cannot set it.",
                            display_name(&o.name)
                        ),
                        pos,
                    ));
                }
                let inner =
                    self.text(last.f.type_name.as_deref().unwrap_or(""), fields, &o.scope)?;
                put_message(last.f, &inner, &mut bytes);
            }
        }
        for fi in chain.iter().rev().skip(1) {
            let mut outer = Vec::new();
            put_message(fi.f, &bytes, &mut outer);
            bytes = outer;
        }
        // protoc leaves source-retention options out of descriptor sets; the
        // messages that held them stay, empty. (The value was checked above.)
        if let Some(k) = chain.iter().position(|fi| self.is_source_retained(fi)) {
            if k == 0 {
                if o.kind == OptKind::ExtensionRange {
                    // Check the declarations before dropping them.
                    let opts = ExtensionRangeOptions::decode(&bytes).map_err(|e| {
                        oerr(format!("Option value could not be read back: {e}"), pos)
                    })?;
                    crate::proto::compiler::checks::check_declarations(
                        &self.pool.files[self.file],
                        &o.target,
                        &opts,
                    )?;
                    self.decls.push((o.target.clone(), opts));
                }
                return Ok(None);
            }
            let mut kept = Vec::new();
            for fi in chain[..k].iter().rev() {
                let mut outer = Vec::new();
                put_message(fi.f, &kept, &mut outer);
                kept = outer;
            }
            return Ok(Some(kept));
        }
        Ok(Some(bytes))
    }
}

/// Whether the field path `nums` (numbers from the outside in) is set in
/// `bytes`: any occurrence of the last number inside occurrences of the
/// ones before it.
pub(super) fn is_set(bytes: &[u8], nums: &[u32]) -> bool {
    let Some((&first, rest)) = nums.split_first() else {
        return false;
    };
    let mut r = WireReader::new(bytes);
    while !r.at_end() {
        let Ok((n, wt)) = r.tag() else { return false };
        let body = r.pos();
        if r.skip(n, wt, 0).is_err() {
            return false;
        }
        if n != first {
            continue;
        }
        if rest.is_empty() {
            return true;
        }
        let inner: &[u8] = match wt {
            wire::LEN => {
                let mut sub = r.sub(body, r.pos());
                match sub.len_prefixed() {
                    Ok((s, e)) => &bytes[s..e],
                    Err(_) => return false,
                }
            }
            // The group's fields (its end tag does not match the inner numbers).
            wire::SGROUP => &bytes[body..r.pos()],
            _ => continue,
        };
        if is_set(inner, rest) {
            return true;
        }
    }
    false
}

pub(crate) fn put_message(f: &FieldDescriptorProto, inner: &[u8], out: &mut Vec<u8>) {
    let num = f.number.unwrap_or(0) as u32;
    if f.r#type == Some(field_type::GROUP) {
        wire::put_tag(out, num, wire::SGROUP);
        out.extend_from_slice(inner);
        wire::put_tag(out, num, wire::EGROUP);
    } else {
        wire::put_len(out, num, inner);
    }
}

pub(super) fn display_name(parts: &[NamePart]) -> String {
    parts
        .iter()
        .map(|p| {
            if p.is_ext {
                format!("({})", p.name)
            } else {
                p.name.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(".")
}
