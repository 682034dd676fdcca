//! Option interpretation, the way protoc does it: each option statement is
//! encoded as protobuf bytes of the options message (`FieldOptions`, ...)
//! using the field types that descriptor.proto and custom extensions
//! declare, then merged into the element's options struct. Fields the struct
//! knows (`packed`, `features.field_presence`, ...) land in their place;
//! custom options stay as unknown-field bytes, in source order, as in
//! protoc's output. Aggregate values `{ ... }` are text format, encoded with
//! their fields in number order (as a serialized message has them).

use std::collections::{HashMap, HashSet};

mod apply;
mod canonical;
mod scalar;
mod text;

use apply::apply;

use crate::proto::compiler::ast::*;
use crate::proto::compiler::pool::{Extensions, Pool};
use crate::proto::compiler::symbols::{field_at, message_at, SymKind};
use crate::proto::descriptor::*;
use crate::proto::error::{Pos, ProtoError, ProtoErrorKind};
use crate::proto::wire::{self, Message, WireReader};

pub(crate) fn oerr(msg: impl Into<String>, pos: Pos) -> ProtoError {
    ProtoError::new(ProtoErrorKind::Option, msg, pos)
}

pub(crate) struct Interp<'a> {
    pub(crate) pool: &'a Pool,
    /// The file is an editions file (`features` allowed).
    editions: bool,
    /// Index of the file whose options are interpreted.
    file: usize,

    visible: HashSet<usize>,
    depth: usize,
    /// Extensions by (extendee full name, number): file and path.
    exts: &'a Extensions,
    /// Extension range options with source retention, by range path.
    decls: Vec<(Vec<i32>, ExtensionRangeOptions)>,
}

/// A field as the interpreter needs it.
pub(crate) struct FieldInfo<'a> {
    pub(crate) f: &'a FieldDescriptorProto,
    /// Index of the file that declares it.
    pub(crate) file: usize,
    /// Its path in that file.
    pub(crate) path: Vec<i32>,
}

impl<'a> Interp<'a> {
    fn message(&self, full: &str) -> Option<(&'a DescriptorProto, usize)> {
        self.message_path(full).map(|(m, f, _)| (m, f))
    }

    fn message_path(&self, full: &str) -> Option<(&'a DescriptorProto, usize, &'a [i32])> {
        let sym = self.pool.symbols.get(full.trim_start_matches('.'))?;
        if sym.kind != SymKind::Message {
            return None;
        }
        let m = message_at(&self.pool.files[sym.file].file, &sym.path)?;
        Some((m, sym.file, &sym.path))
    }

    /// Whether message `msg` uses the MessageSet wire format.
    fn is_message_set(&self, msg: &str) -> bool {
        let Some((m, file, path)) = self.message_path(msg) else {
            return false;
        };
        if let Some(v) = m.options.as_ref().and_then(|o| o.message_set_wire_format) {
            return v;
        }
        self.pool.files[file].message_set.contains(path)
    }

    /// Where protoc reports what is wrong with a file-wide feature: at the
    /// `syntax` or `edition` statement.
    fn file_pos(&self, o: &PendingOption) -> Option<Pos> {
        if o.kind != OptKind::File {
            return None;
        }
        self.pool.files[self.file].locs.get(&vec![14]).copied()
    }

    /// A standard option removed in the file's edition
    /// (`feature_support.edition_removed`, as `java_multiple_files` in 2024)
    /// is refused; protoc reports a file's at its `package` statement.
    fn check_removed(&self, o: &PendingOption, leaf: &FieldInfo<'_>) -> Result<(), ProtoError> {
        let edition = self.pool.files[self.file].file.edition.unwrap_or(0);
        let support = leaf
            .f
            .options
            .as_ref()
            .and_then(|x| x.feature_support.as_ref());
        let Some(removed) = support.and_then(|s| s.edition_removed) else {
            return Ok(());
        };
        if !self.editions || removed > edition {
            return Ok(());
        }
        let name = format!(
            "{}.{}",
            o.kind.message_name(),
            leaf.f.name.as_deref().unwrap_or("")
        );
        let pf = &self.pool.files[self.file];
        let pos = if o.kind == OptKind::File {
            pf.locs.get(&vec![2]).copied().unwrap_or_default()
        } else {
            crate::proto::compiler::symbols::pos_of(pf, &o.target)
        };
        Err(oerr(removed_text(&name, removed, support), pos))
    }

    /// A feature must exist in the file's edition and be set to a known
    /// value.
    fn check_feature(
        &self,
        o: &PendingOption,
        chain: &[FieldInfo<'_>],
        msg: &str,
        pos: Pos,
    ) -> Result<(), ProtoError> {
        let Some(leaf) = chain.last() else {
            return Ok(());
        };
        let name = format!("{msg}.{}", leaf.f.name.as_deref().unwrap_or(""));
        let edition = self.pool.files[self.file].file.edition.unwrap_or(0);
        let support = leaf
            .f
            .options
            .as_ref()
            .and_then(|x| x.feature_support.as_ref());
        if let Some(intro) = support.and_then(|s| s.edition_introduced) {
            if intro > edition {
                return Err(oerr(
                    format!(
                        "{name} wasn't introduced until edition {} and can't be used in edition {}",
                        edition_name(intro),
                        edition_name(edition)
                    ),
                    pos,
                ));
            }
        }
        if let Some(removed) = support.and_then(|s| s.edition_removed) {
            if removed <= edition {
                return Err(oerr(removed_text(&name, removed, support), pos));
            }
        }
        if leaf.f.r#type == Some(field_type::ENUM) {
            if let OptValue::Scalar(s) = &o.value {
                if let Ok(0) = self.enum_value(leaf.f, s, false) {
                    let shown = match &s.lit {
                        Lit::Ident(i) => i.clone(),
                        _ => "0".into(),
                    };
                    return Err(oerr(
                        format!(
                            "Feature field `{}` must resolve to a known value, found {shown}",
                            leaf.f.name.as_deref().unwrap_or("")
                        ),
                        self.file_pos(o).unwrap_or(pos),
                    ));
                }
            }
        }
        Ok(())
    }

    pub(crate) fn extension_by_number(&self, msg: &str, num: i32) -> Option<FieldInfo<'a>> {
        let (file, path) = self
            .exts
            .get(&(msg.trim_start_matches('.').to_string(), num))?;
        let f = field_at(&self.pool.files[*file].file, path)?;
        Some(FieldInfo {
            f,
            file: *file,
            path: path.clone(),
        })
    }

    pub(crate) fn field_where(
        &self,
        msg: &str,
        pred: impl Fn(&FieldDescriptorProto) -> bool,
    ) -> Option<FieldInfo<'a>> {
        let (m, file, path) = self.message_path(msg)?;
        let i = m.field.iter().position(pred)?;
        let mut path = path.to_vec();
        path.extend_from_slice(&[2, i as i32]);
        Some(FieldInfo {
            f: &m.field[i],
            file,
            path,
        })
    }

    fn field_by_name(&self, msg: &str, name: &str) -> Option<FieldInfo<'a>> {
        self.field_where(msg, |f| f.name.as_deref() == Some(name))
    }

    /// Whether protoc leaves this option out of descriptor sets: its field
    /// has `retention = RETENTION_SOURCE` (looked up in the statements when
    /// the field's own options are not interpreted yet).
    fn is_source_retained(&self, fi: &FieldInfo<'_>) -> bool {
        if fi.f.options.as_ref().and_then(|o| o.retention) == Some(2) {
            return true;
        }
        self.pool.files[fi.file].source_retained.contains(&fi.path)
    }

    /// A text-format field name: the field name, or a group's type name.
    fn text_field(&self, msg: &str, name: &str) -> Option<FieldInfo<'a>> {
        if let Some(f) = self.field_by_name(msg, name) {
            return Some(f);
        }
        self.field_where(msg, |f| {
            f.r#type == Some(field_type::GROUP)
                && f.type_name.as_deref().and_then(|t| t.rsplit('.').next()) == Some(name)
        })
    }

    fn extension(
        &self,
        msg: &str,
        name: &str,
        scope: &str,
        pos: Pos,
    ) -> Result<FieldInfo<'a>, ProtoError> {
        let (full, sym) = self
            .pool
            .symbols
            .lookup(name, scope, &self.visible, false)
            .map_err(|_| oerr(format!("Option \"({name})\" unknown. Ensure that your proto definition file imports the proto which defines the option."), pos))?;
        let f = if sym.kind == SymKind::Extension {
            field_at(&self.pool.files[sym.file].file, &sym.path)
        } else {
            None
        };
        let Some(f) = f else {
            return Err(oerr(
                format!("Option \"({full})\" is not a field or extension."),
                pos,
            ));
        };
        if f.extendee.as_deref().map(|e| e.trim_start_matches('.')) != Some(msg) {
            return Err(oerr(
                format!(
                    "Option \"({full})\" is an extension of \"{}\", not of \"{msg}\".",
                    f.extendee.as_deref().unwrap_or("").trim_start_matches('.')
                ),
                pos,
            ));
        }
        Ok(FieldInfo {
            f,
            file: sym.file,
            path: sym.path.clone(),
        })
    }

    /// Encode one option statement as bytes of the options message.
    fn option(&mut self, o: &PendingOption, so_far: &[u8]) -> Result<Option<Vec<u8>>, ProtoError> {
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
fn is_set(bytes: &[u8], nums: &[u32]) -> bool {
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

/// `2023` for EDITION_2023 and so on; the number for unknown editions.
/// protoc's words for an option or feature used after its edition_removed.
fn removed_text(name: &str, removed: i32, support: Option<&FeatureSupport>) -> String {
    let why = support
        .and_then(|s| s.removal_error.as_deref())
        .map(|e| format!(": {e}"))
        .unwrap_or_default();
    format!(
        "{name} has been removed in edition {}{why}",
        edition_name(removed)
    )
}

fn edition_name(e: i32) -> String {
    match e {
        edition::PROTO2 => "PROTO2".into(),
        edition::PROTO3 => "PROTO3".into(),
        edition::E2023 => "2023".into(),
        edition::E2024 => "2024".into(),
        1002 => "2026".into(),
        n => n.to_string(),
    }
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

fn display_name(parts: &[NamePart]) -> String {
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

/// Interpret every option statement of file `fi` into its options structs;
/// `exts` is [`all_extensions`] of the pool (taken once for the whole pool,
/// so that interpreting stays linear in its size).
pub fn interpret_file(pool: &mut Pool, fi: usize, exts: &Extensions) -> Result<(), ProtoError> {
    // Per options message (target and kind, in order of first statement):
    // the statements' bytes, joined, then put in protoc's order.
    let mut results: Vec<(Vec<i32>, OptKind, Vec<u8>, Pos)> = Vec::new();
    let decls;
    {
        let mut it = Interp {
            pool,
            editions: pool.files[fi].editions,
            file: fi,

            visible: pool.visible_for_options(fi),
            depth: 0,
            exts,
            decls: Vec::new(),
        };
        // File options resolve from the package, which may come after them.
        let file_scope = format!(
            "{}.dummy",
            pool.files[fi].file.package.as_deref().unwrap_or("")
        );
        let mut index: HashMap<(&[i32], OptKind), usize> = HashMap::new();
        for o in &pool.files[fi].options {
            let slot = index.get(&(o.target.as_slice(), o.kind)).copied();
            let so_far: &[u8] = slot.map_or(&[], |i| &results[i].2);
            let bytes = if o.kind == OptKind::File {
                let mut o = o.clone();
                o.scope = file_scope.clone();
                it.option(&o, so_far)?
            } else {
                it.option(o, so_far)?
            };
            let pos = o.name.first().map(|p| p.pos).unwrap_or_default();
            if let Some(bytes) = bytes {
                match slot {
                    Some(i) => results[i].2.extend_from_slice(&bytes),
                    None => {
                        index.insert((o.target.as_slice(), o.kind), results.len());
                        results.push((o.target.clone(), o.kind, bytes, pos));
                    }
                }
            }
        }
        for r in results.iter_mut() {
            r.2 = it
                .canonical(r.1.message_name(), &r.2, 0)
                .map_err(|e| oerr(format!("Option value could not be encoded: {e}"), r.3))?;
        }
        decls = std::mem::take(&mut it.decls);
    }
    for (target, opts) in decls {
        let kept = pool.files[fi].ext_decls.entry(target).or_default();
        kept.declaration.extend(opts.declaration);
        if opts.verification.is_some() {
            kept.verification = opts.verification;
        }
    }
    let f = &mut pool.files[fi].file;
    for (target, kind, bytes, pos) in results {
        apply(f, &target, kind, &bytes)
            .map_err(|e| oerr(format!("Option value could not be applied: {e}"), pos))?
            .then_some(())
            .ok_or_else(|| oerr("Option target not found.", pos))?;
    }
    if pool.files[fi].editions {
        for m in pool.files[fi].file.message_type.iter_mut() {
            apply::copy_map_features(m);
        }
    }
    Ok(())
}

/// Every extension of the pool by (extendee, number).
/// Every extension of the pool's files (resolved extendees).
pub fn all_extensions(pool: &Pool) -> Extensions {
    let mut out = HashMap::new();
    for (fi, pf) in pool.files.iter().enumerate() {
        let f = &pf.file;
        let mut add = |x: &FieldDescriptorProto, path: Vec<i32>| {
            if let (Some(e), Some(n)) = (x.extendee.as_deref(), x.number) {
                out.entry((e.trim_start_matches('.').to_string(), n))
                    .or_insert((fi, path));
            }
        };
        for (i, x) in f.extension.iter().enumerate() {
            add(x, vec![7, i as i32]);
        }
        let mut stack: Vec<(Vec<i32>, &DescriptorProto)> = f
            .message_type
            .iter()
            .enumerate()
            .map(|(i, m)| (vec![4, i as i32], m))
            .collect();
        while let Some((p, m)) = stack.pop() {
            for (i, x) in m.extension.iter().enumerate() {
                let mut q = p.clone();
                q.extend_from_slice(&[6, i as i32]);
                add(x, q);
            }
            for (i, n) in m.nested_type.iter().enumerate() {
                let mut q = p.clone();
                q.extend_from_slice(&[3, i as i32]);
                stack.push((q, n));
            }
        }
    }
    out
}
