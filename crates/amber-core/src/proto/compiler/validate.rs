//! Checking a `FileDescriptorSet` that did not come from this compiler
//! (hand-built, from gRPC server reflection, from another tool) before the
//! runtime builds tables from it: the rules Google's `DescriptorPool`
//! applies when a file is added, on descriptor structures rather than
//! parsed text. The compiler's own checks run on parsed files (with
//! positions) and already hold for what it writes; these hold for any set.
//!
//! Errors have no position (line and column 0): they name the file, and
//! the type and field, as Google's pool does. Type names that are relative
//! are resolved as protoc resolves them and written back fully qualified,
//! and a field's missing `type` is filled in from what its `type_name`
//! names, so the runtime only ever sees resolved sets.

use std::collections::{HashMap, HashSet};

use crate::proto::descriptor::*;
use crate::proto::error::{Pos, ProtoError, ProtoErrorKind};

/// Highest field number.
pub const MAX_FIELD_NUMBER: i32 = 536_870_911;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Sym {
    Package,
    Message,
    Enum,
    EnumValue,
    Field,
    Service,
    Method,
}

struct Ctx {
    /// Every symbol of every file so far, by full name (no leading dot).
    syms: HashMap<String, Sym>,
    /// The file being checked.
    file: String,
    /// Its features (editions): enums closed, fields of implicit presence.
    closed: bool,
    implicit: bool,
}

fn fail(file: &str, kind: ProtoErrorKind, msg: String) -> ProtoError {
    ProtoError::new(kind, msg, Pos::default()).in_file(file)
}

impl Ctx {
    fn err(&self, kind: ProtoErrorKind, msg: impl Into<String>) -> ProtoError {
        fail(&self.file, kind, msg.into())
    }

    fn add(&mut self, full: &str, sym: Sym) -> Result<(), ProtoError> {
        if let Some(old) = self.syms.get(full) {
            if sym == Sym::Package && *old == Sym::Package {
                return Ok(());
            }
            return Err(self.err(
                ProtoErrorKind::Duplicate,
                format!("\"{full}\" is already defined."),
            ));
        }
        self.syms.insert(full.to_string(), sym);
        Ok(())
    }

    /// `name` seen from `scope` (a full name without the leading dot), as
    /// protoc resolves it: absolute with a leading dot, else from the
    /// innermost scope outwards, by its first component.
    fn resolve(&self, scope: &str, name: &str) -> Option<(String, Sym)> {
        if let Some(abs) = name.strip_prefix('.') {
            return self.syms.get(abs).map(|s| (abs.to_string(), *s));
        }
        let first = name.split('.').next().unwrap_or(name);
        let mut scope = scope.to_string();
        loop {
            let head = join(&scope, first);
            if let Some(s) = self.syms.get(&head) {
                let full = join(&scope, name);
                if head == full {
                    return Some((full, *s));
                }
                // The first component names something: the rest must be in
                // it, or the name is not defined (protoc does not look
                // further out), unless it is not a type-holder.
                if matches!(s, Sym::Message | Sym::Package) {
                    return self.syms.get(&full).map(|s| (full, *s));
                }
            }
            if scope.is_empty() {
                return None;
            }
            scope = match scope.rfind('.') {
                Some(i) => scope[..i].to_string(),
                None => String::new(),
            };
        }
    }
}

fn join(a: &str, b: &str) -> String {
    if a.is_empty() {
        b.to_string()
    } else {
        format!("{a}.{b}")
    }
}

fn ident_ok(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(ch) if ch.is_ascii_alphabetic() || ch == '_')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

/// Check `set` as Google's pool checks each file it adds, in order (each
/// file's dependencies before it), resolving type names in place.
pub fn validate_set(set: &mut FileDescriptorSet) -> Result<(), ProtoError> {
    let mut ctx = Ctx {
        syms: HashMap::new(),
        file: String::new(),
        closed: false,
        implicit: false,
    };
    let mut seen: HashSet<String> = HashSet::new();
    let mut ext_numbers: HashMap<(String, i32), String> = HashMap::new();
    // Messages and enums by full name, for extension ranges, closed enums
    // and enum defaults.
    let mut messages: HashMap<String, DescriptorProto> = HashMap::new();
    let mut enums: HashMap<String, (EnumDescriptorProto, bool)> = HashMap::new();
    for file in &mut set.file {
        let name = file.name.clone().unwrap_or_default();
        ctx.file = name.clone();
        if name.is_empty() {
            return Err(ctx.err(ProtoErrorKind::Invalid, "a file has no name"));
        }
        if seen.contains(&name) {
            return Err(ctx.err(
                ProtoErrorKind::Duplicate,
                format!("file \"{name}\" appears twice in the set"),
            ));
        }
        for d in &file.dependency {
            if d == &name {
                return Err(ctx.err(
                    ProtoErrorKind::ImportCycle,
                    format!("file \"{name}\" depends on itself"),
                ));
            }
            if !seen.contains(d) {
                return Err(ctx.err(
                    ProtoErrorKind::ImportNotFound,
                    format!("depends on \"{d}\", which is not in the set before it"),
                ));
            }
        }
        for &i in file.public_dependency.iter().chain(&file.weak_dependency) {
            if i < 0 || i as usize >= file.dependency.len() {
                return Err(ctx.err(
                    ProtoErrorKind::Invalid,
                    format!("dependency index {i} out of range"),
                ));
            }
        }
        if file.edition.is_some() && file.syntax.as_deref() != Some("editions") {
            return Err(ctx.err(
                ProtoErrorKind::Invalid,
                "an edition is set, but syntax is not \"editions\"",
            ));
        }
        let edition_of = match file.syntax.as_deref() {
            None | Some("proto2") => edition::PROTO2,
            Some("proto3") => edition::PROTO3,
            Some("editions") => match file.edition {
                Some(e @ (edition::E2023 | edition::E2024)) => e,
                e => {
                    return Err(ctx.err(
                        ProtoErrorKind::Invalid,
                        format!("unsupported edition {}", e.unwrap_or(0)),
                    ))
                }
            },
            Some(s) => {
                return Err(ctx.err(ProtoErrorKind::Invalid, format!("unknown syntax \"{s}\"")))
            }
        };
        let fx = file.options.as_ref().and_then(|o| o.features.as_ref());
        ctx.closed = fx.and_then(|f| f.enum_type) == Some(2);
        ctx.implicit = fx.and_then(|f| f.field_presence) == Some(2);
        let pkg = file.package.clone().unwrap_or_default();
        if !pkg.is_empty() {
            if !pkg.split('.').all(ident_ok) {
                return Err(ctx.err(
                    ProtoErrorKind::Invalid,
                    format!("\"{pkg}\" is not a valid package name"),
                ));
            }
            let mut p = String::new();
            for part in pkg.split('.') {
                p = join(&p, part);
                ctx.add(&p, Sym::Package)?;
            }
        }
        // Names first (types may be used before they are declared).
        for m in &file.message_type {
            declare_message(&mut ctx, &pkg, m, edition_of, &mut messages, &mut enums)?;
        }
        for e in &file.enum_type {
            declare_enum(&mut ctx, &pkg, e, edition_of, &mut enums)?;
        }
        for x in &file.extension {
            declare(&mut ctx, &pkg, x.name.as_deref(), Sym::Field)?;
        }
        for s in &file.service {
            let sname = declare(&mut ctx, &pkg, s.name.as_deref(), Sym::Service)?;
            for m in &s.method {
                declare(&mut ctx, &sname, m.name.as_deref(), Sym::Method)?;
            }
        }
        // Then the fields, which resolve names.
        let syntax = edition_of;
        for m in &mut file.message_type {
            check_message(&ctx, &pkg, m, syntax, &enums)?;
        }
        for x in &mut file.extension {
            check_extension(&ctx, &pkg, "", x, syntax, &messages, &enums)?;
        }
        for m in &mut file.message_type {
            nested_extensions(&ctx, &pkg, m, syntax, &messages, &enums)?;
        }
        for s in &mut file.service {
            let sname = join(&pkg, s.name.as_deref().unwrap_or(""));
            for md in &mut s.method {
                for t in [&mut md.input_type, &mut md.output_type] {
                    let n = t.clone().unwrap_or_default();
                    match ctx.resolve(&sname, &n) {
                        Some((full, Sym::Message)) => *t = Some(format!(".{full}")),
                        _ => {
                            return Err(ctx.err(
                                ProtoErrorKind::Undefined,
                                format!(
                                    "method {sname}.{}: \"{n}\" is not a message type",
                                    md.name.as_deref().unwrap_or("")
                                ),
                            ))
                        }
                    }
                }
            }
        }
        // An extension's number is its extendee's alone: amber keeps
        // extensions with the fields (Google's pool keeps them apart and
        // takes a field and an extension of one number).
        let mut exts: Vec<&FieldDescriptorProto> = file.extension.iter().collect();
        let mut stack: Vec<&DescriptorProto> = file.message_type.iter().collect();
        while let Some(m) = stack.pop() {
            exts.extend(&m.extension);
            stack.extend(&m.nested_type);
        }
        for x in exts {
            let target = x.extendee.as_deref().unwrap_or(".");
            let n = x.number.unwrap_or(0);
            let xname = x.name.as_deref().unwrap_or("");
            let field = messages
                .get(&target[1..])
                .and_then(|m| m.field.iter().find(|f| f.number == Some(n)));
            let clash = match field {
                Some(f) => Some(f.name.clone().unwrap_or_default()),
                None => ext_numbers.insert((target.to_string(), n), xname.to_string()),
            };
            if let Some(other) = clash {
                return Err(ctx.err(
                    ProtoErrorKind::Number,
                    format!(
                        "extension {xname}: number {n} of {} is already used by {other}",
                        &target[1..]
                    ),
                ));
            }
        }
        seen.insert(name);
    }
    Ok(())
}

fn declare(ctx: &mut Ctx, scope: &str, name: Option<&str>, sym: Sym) -> Result<String, ProtoError> {
    let n = name.unwrap_or("");
    if !ident_ok(n) {
        return Err(ctx.err(
            ProtoErrorKind::Invalid,
            format!("\"{n}\" is not a valid identifier (in \"{scope}\")"),
        ));
    }
    let full = join(scope, n);
    ctx.add(&full, sym)?;
    Ok(full)
}

fn declare_message(
    ctx: &mut Ctx,
    scope: &str,
    m: &DescriptorProto,
    syntax: i32,
    all: &mut HashMap<String, DescriptorProto>,
    enums: &mut HashMap<String, (EnumDescriptorProto, bool)>,
) -> Result<(), ProtoError> {
    let full = declare(ctx, scope, m.name.as_deref(), Sym::Message)?;
    all.insert(full.clone(), m.clone());
    // Fields and oneofs are names of their message, not symbols of the
    // pool (a nested type may share a field's name).
    let mut names = HashSet::new();
    let fields = m.field.iter().map(|f| (&f.name, "field"));
    for (n, what) in fields.chain(m.oneof_decl.iter().map(|o| (&o.name, "oneof"))) {
        let n = n.as_deref().unwrap_or("");
        if !ident_ok(n) {
            return Err(ctx.err(
                ProtoErrorKind::Invalid,
                format!("{what} {full}.{n}: \"{n}\" is not a valid identifier"),
            ));
        }
        if !names.insert(n) {
            return Err(ctx.err(
                ProtoErrorKind::Duplicate,
                format!("{what} {full}.{n}: the name is used twice in {full}"),
            ));
        }
    }
    for x in &m.extension {
        declare(ctx, &full, x.name.as_deref(), Sym::Field)?;
    }
    for n in &m.nested_type {
        declare_message(ctx, &full, n, syntax, all, enums)?;
    }
    for e in &m.enum_type {
        declare_enum(ctx, &full, e, syntax, enums)?;
    }
    Ok(())
}

fn declare_enum(
    ctx: &mut Ctx,
    scope: &str,
    e: &EnumDescriptorProto,
    syntax: i32,
    all: &mut HashMap<String, (EnumDescriptorProto, bool)>,
) -> Result<(), ProtoError> {
    let full = declare(ctx, scope, e.name.as_deref(), Sym::Enum)?;
    if e.value.is_empty() {
        return Err(ctx.err(
            ProtoErrorKind::Invalid,
            format!("enum {full} has no values (it needs at least one)"),
        ));
    }
    // Enum values are siblings of their enum (C++ scoping).
    for v in &e.value {
        declare(ctx, scope, v.name.as_deref(), Sym::EnumValue)?;
    }
    let closed = enum_closed(ctx, syntax, e);
    if !closed && e.value[0].number.unwrap_or(0) != 0 {
        return Err(ctx.err(
            ProtoErrorKind::Invalid,
            format!("enum {full}: the first value of an open enum must be zero"),
        ));
    }
    all.insert(full, (e.clone(), closed));
    Ok(())
}

/// Whether an enum is closed: proto2's are, proto3's are not, editions'
/// by their `enum_type` feature (file-level features are not followed
/// here; 2023 and 2024 default to open).
fn enum_closed(ctx: &Ctx, syntax: i32, e: &EnumDescriptorProto) -> bool {
    match syntax {
        edition::PROTO2 => true,
        edition::PROTO3 => false,
        _ => match e
            .options
            .as_ref()
            .and_then(|o| o.features.as_ref())
            .and_then(|f| f.enum_type)
        {
            Some(t) => t == 2,
            None => ctx.closed,
        },
    }
}

fn check_message(
    ctx: &Ctx,
    scope: &str,
    m: &mut DescriptorProto,
    syntax: i32,
    enums: &HashMap<String, (EnumDescriptorProto, bool)>,
) -> Result<(), ProtoError> {
    let full = join(scope, m.name.as_deref().unwrap_or(""));
    let is_entry = m.options.as_ref().and_then(|o| o.map_entry) == Some(true);
    let set_wire = m.options.as_ref().and_then(|o| o.message_set_wire_format) == Some(true);
    // Extension ranges.
    let max_ext = if set_wire {
        i32::MAX
    } else {
        MAX_FIELD_NUMBER + 1
    };
    let mut ranges: Vec<(i32, i32)> = Vec::new();
    for r in &m.extension_range {
        let (s, e) = (r.start.unwrap_or(0), r.end.unwrap_or(0));
        if s < 1 || e <= s || e > max_ext {
            return Err(ctx.err(
                ProtoErrorKind::Number,
                format!("message {full}: extension range {s} to {e} is invalid"),
            ));
        }
        ranges.push((s, e));
    }
    let mut reserved: Vec<(i32, i32)> = Vec::new();
    for r in &m.reserved_range {
        let (s, e) = (r.start.unwrap_or(0), r.end.unwrap_or(0));
        if s < 1 || e <= s {
            return Err(ctx.err(
                ProtoErrorKind::Number,
                format!("message {full}: reserved range {s} to {e} is invalid"),
            ));
        }
        reserved.push((s, e));
    }
    let mut numbers: HashMap<i32, String> = HashMap::new();
    let mut oneof_count = vec![0usize; m.oneof_decl.len()];
    let mut json_names: HashMap<String, String> = HashMap::new();
    let n_oneofs = m.oneof_decl.len();
    for f in &mut m.field {
        let fname = f.name.clone().unwrap_or_default();
        let what = format!("field {full}.{fname}");
        let n = f.number.unwrap_or(0);
        check_number(ctx, &what, n)?;
        if let Some(other) = numbers.insert(n, fname.clone()) {
            return Err(ctx.err(
                ProtoErrorKind::Number,
                format!("{what}: number {n} is already used by {other}"),
            ));
        }
        check_field(ctx, &full, &what, f, syntax, enums)?;
        if let Some(i) = f.oneof_index {
            if i < 0 || i as usize >= n_oneofs {
                return Err(ctx.err(
                    ProtoErrorKind::Invalid,
                    format!("{what}: oneof_index {i} is out of range ({n_oneofs} oneofs)"),
                ));
            }
            if f.label == Some(label::REPEATED) || f.label == Some(label::REQUIRED) {
                return Err(ctx.err(
                    ProtoErrorKind::Invalid,
                    format!("{what}: a field of a oneof must be optional"),
                ));
            }
            oneof_count[i as usize] += 1;
        } else if f.proto3_optional == Some(true) {
            return Err(ctx.err(
                ProtoErrorKind::Invalid,
                format!("{what}: proto3_optional without a oneof"),
            ));
        }
        let json = f
            .json_name
            .clone()
            .unwrap_or_else(|| crate::proto::names::json_name(&fname));
        if let Some(other) = json_names.insert(json.clone(), fname.clone()) {
            return Err(ctx.err(
                ProtoErrorKind::Duplicate,
                format!("{what}: JSON name \"{json}\" is also {other}'s"),
            ));
        }
    }
    for (i, c) in oneof_count.iter().enumerate() {
        let synthetic = m
            .field
            .iter()
            .any(|f| f.oneof_index == Some(i as i32) && f.proto3_optional == Some(true));
        if synthetic && *c != 1 {
            return Err(ctx.err(
                ProtoErrorKind::Invalid,
                format!(
                    "oneof {full}.{}: the oneof of a proto3 optional field has it alone",
                    m.oneof_decl[i].name.as_deref().unwrap_or("")
                ),
            ));
        }
        // (Google's pool takes an empty oneof in a map entry.)
        if *c == 0 && !is_entry {
            return Err(ctx.err(
                ProtoErrorKind::Invalid,
                format!(
                    "oneof {full}.{} has no fields",
                    m.oneof_decl[i].name.as_deref().unwrap_or("")
                ),
            ));
        }
    }
    if is_entry {
        check_map_entry(ctx, &full, m)?;
    }
    for n in &mut m.nested_type {
        check_message(ctx, &full, n, syntax, enums)?;
    }
    Ok(())
}

fn check_map_entry(ctx: &Ctx, full: &str, m: &DescriptorProto) -> Result<(), ProtoError> {
    let bad = |why: &str| ctx.err(ProtoErrorKind::Invalid, format!("map entry {full}: {why}"));
    if m.field.len() != 2 {
        return Err(bad("a map entry has exactly two fields, key and value"));
    }
    if m.field[0].number >= m.field[1].number {
        // Google's pool takes the first declared field as the key whatever
        // its number; amber reads entries by number.
        return Err(bad(
            "its key (declared first) must be numbered below its value",
        ));
    }
    for f in &m.field {
        if f.label == Some(label::REPEATED) || f.oneof_index.is_some() {
            return Err(bad("its key and value cannot be repeated or in a oneof"));
        }
    }
    use field_type::*;
    if m.field[1].r#type == Some(GROUP) {
        return Err(bad("its value cannot be a group"));
    }
    {
        let key = &m.field[0];
        if key.label == Some(label::REPEATED) || key.oneof_index.is_some() {
            return Err(bad("its key cannot be repeated or in a oneof"));
        }
        if matches!(
            key.r#type,
            Some(FLOAT | DOUBLE | BYTES | MESSAGE | GROUP | ENUM)
        ) {
            return Err(bad(
                "a key cannot be float, double, bytes, an enum or a message",
            ));
        }
    }
    Ok(())
}

fn check_number(ctx: &Ctx, what: &str, n: i32) -> Result<(), ProtoError> {
    if !(1..=MAX_FIELD_NUMBER).contains(&n) {
        return Err(ctx.err(
            ProtoErrorKind::Number,
            format!("{what}: number {n} is out of range (1 to {MAX_FIELD_NUMBER})"),
        ));
    }
    Ok(())
}

/// A field's label, type, type name and default; `scope` is the message
/// (or package) names are resolved from.
fn check_field(
    ctx: &Ctx,
    scope: &str,
    what: &str,
    f: &mut FieldDescriptorProto,
    syntax: i32,
    enums: &HashMap<String, (EnumDescriptorProto, bool)>,
) -> Result<(), ProtoError> {
    use field_type::*;
    let bad = |kind, why: String| ctx.err(kind, format!("{what}: {why}"));
    match f.label {
        Some(label::OPTIONAL | label::REPEATED) => {}
        Some(label::REQUIRED) if syntax != edition::PROTO3 => {}
        Some(label::REQUIRED) => {
            return Err(bad(
                ProtoErrorKind::Invalid,
                "proto3 has no required fields".into(),
            ))
        }
        l => {
            return Err(bad(
                ProtoErrorKind::Invalid,
                format!("label {} is not a label", l.unwrap_or(0)),
            ))
        }
    }
    if let Some(t) = f.r#type {
        if !(DOUBLE..=SINT64).contains(&t) {
            return Err(bad(
                ProtoErrorKind::Invalid,
                format!("type {t} is not a type"),
            ));
        }
    }
    let needs_name = matches!(f.r#type, None | Some(MESSAGE | GROUP | ENUM));
    if needs_name {
        let tn = f.type_name.clone().unwrap_or_default();
        if f.r#type.is_none() && tn.is_empty() {
            return Err(bad(ProtoErrorKind::Invalid, "the field has no type".into()));
        }
        let Some((full, sym)) = ctx.resolve(scope, &tn) else {
            return Err(bad(
                ProtoErrorKind::Undefined,
                format!("type \"{tn}\" is not defined"),
            ));
        };
        let ok = match (f.r#type, sym) {
            (None, Sym::Message) => {
                f.r#type = Some(MESSAGE);
                true
            }
            (None, Sym::Enum) => {
                f.r#type = Some(ENUM);
                true
            }
            (Some(MESSAGE | GROUP), Sym::Message) | (Some(ENUM), Sym::Enum) => true,
            _ => false,
        };
        if !ok {
            return Err(bad(
                ProtoErrorKind::Undefined,
                format!("\"{tn}\" is not a type of the field's kind"),
            ));
        }
        f.type_name = Some(format!(".{full}"));
    } else if f.type_name.is_some() {
        return Err(bad(
            ProtoErrorKind::Invalid,
            "a scalar field has a type_name".into(),
        ));
    }
    if let Some(raw) = f.default_value.clone() {
        // Every default but a string's or bytes' is ASCII text.
        let d = String::from_utf8_lossy(&raw).into_owned();
        let presence = f
            .options
            .as_ref()
            .and_then(|o| o.features.as_ref())
            .and_then(|x| x.field_presence);
        let implicit = syntax >= edition::E2023
            && presence.map_or(ctx.implicit, |p| p == 2)
            && f.label != Some(label::REPEATED)
            && f.oneof_index.is_none()
            && !matches!(f.r#type, Some(MESSAGE | GROUP));
        if syntax == edition::PROTO3 || implicit {
            return Err(bad(
                ProtoErrorKind::Invalid,
                "fields of implicit presence have no explicit defaults".into(),
            ));
        }
        let t = f.r#type.unwrap_or(0);
        if matches!(t, MESSAGE | GROUP) {
            return Err(bad(
                ProtoErrorKind::Invalid,
                "message fields have no explicit defaults".into(),
            ));
        }
        // Numbers as C's strtoll/strtod read them (Google's pool does):
        // written back in the form the runtime reads.
        let (ok, canonical) = match t {
            // An empty default is no default (the type's zero), as in
            // Google's pool.
            _ if d.is_empty() && !matches!(t, ENUM | BOOL) => (true, None),
            INT32 | SINT32 | SFIXED32 => int_default(&d, i32::MIN.into(), i32::MAX.into()),
            INT64 | SINT64 | SFIXED64 => int_default(&d, i64::MIN.into(), i64::MAX.into()),
            UINT32 | FIXED32 => int_default(&d, 0, u32::MAX.into()),
            UINT64 | FIXED64 => int_default(&d, 0, u64::MAX.into()),
            FLOAT | DOUBLE => match float_default(&d) {
                Some(v) if t == FLOAT => (true, Some(crate::proto::names::format_float(v as f32))),
                Some(v) => (true, Some(crate::proto::names::format_double(v))),
                None => (false, None),
            },
            BOOL => (d == "true" || d == "false", None),
            STRING => (true, None),
            BYTES => {
                let mut out = Vec::new();
                let ok = crate::proto::escape::unescape_body(&raw, &mut out).is_ok();
                (ok, None)
            }
            ENUM => {
                let tn = f.type_name.as_deref().unwrap_or(".");
                let ok = enums
                    .get(&tn[1..])
                    .is_some_and(|(e, _)| e.value.iter().any(|v| v.name.as_deref() == Some(&d)));
                (ok, None)
            }
            _ => (false, None),
        };
        if let Some(c) = canonical.filter(|_| ok) {
            f.default_value = Some(c.into_bytes());
        }
        if !ok {
            return Err(bad(
                ProtoErrorKind::Invalid,
                format!("default value \"{d}\" is not a value of the field's type"),
            ));
        }
    }
    Ok(())
}

/// An integer default as `strtoll(s, &end, 0)` reads all of `s` (leading
/// spaces, a sign, `0x` hex or `0` octal), within `[min, max]`; with its
/// decimal form.
fn int_default(s: &str, min: i128, max: i128) -> (bool, Option<String>) {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (neg, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let (radix, digits) = if let Some(h) = t.strip_prefix("0x").or(t.strip_prefix("0X")) {
        (16, h)
    } else if t.len() > 1 && t.starts_with('0') {
        (8, &t[1..])
    } else {
        (10, t)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return (false, None);
    }
    let Ok(v) = u128::from_str_radix(digits, radix) else {
        return (false, None);
    };
    let v = if neg {
        -(v.min(u64::MAX as u128 + 1) as i128)
    } else {
        v.min(u64::MAX as u128 + 1) as i128
    };
    // strtoull takes a negative number as its two's complement: Google's
    // pool refuses those for unsigned fields.
    if v < min || v > max {
        return (false, None);
    }
    (true, Some(v.to_string()))
}

/// A floating-point default as `strtod` reads all of `s`.
fn float_default(s: &str) -> Option<f64> {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (neg, u) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let v = if let Some(h) = u.strip_prefix("0x").or(u.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()? as f64
    } else {
        let low = u.to_ascii_lowercase();
        match low.as_str() {
            "inf" | "infinity" => f64::INFINITY,
            "nan" => f64::NAN,
            _ if low.starts_with(|c: char| c.is_ascii_digit() || c == '.') => u.parse().ok()?,
            _ => return None,
        }
    };
    Some(if neg { -v } else { v })
}

fn nested_extensions(
    ctx: &Ctx,
    scope: &str,
    m: &mut DescriptorProto,
    syntax: i32,
    messages: &HashMap<String, DescriptorProto>,
    enums: &HashMap<String, (EnumDescriptorProto, bool)>,
) -> Result<(), ProtoError> {
    let full = join(scope, m.name.as_deref().unwrap_or(""));
    for x in &mut m.extension {
        check_extension(ctx, &full, &full, x, syntax, messages, enums)?;
    }
    for n in &mut m.nested_type {
        nested_extensions(ctx, &full, n, syntax, messages, enums)?;
    }
    Ok(())
}

fn check_extension(
    ctx: &Ctx,
    scope: &str,
    _in_msg: &str,
    x: &mut FieldDescriptorProto,
    syntax: i32,
    messages: &HashMap<String, DescriptorProto>,
    enums: &HashMap<String, (EnumDescriptorProto, bool)>,
) -> Result<(), ProtoError> {
    let what = format!("extension {}", join(scope, x.name.as_deref().unwrap_or("")));
    let ee = x.extendee.clone().unwrap_or_default();
    let Some((target, Sym::Message)) = ctx.resolve(scope, &ee) else {
        return Err(ctx.err(
            ProtoErrorKind::Undefined,
            format!("{what}: extendee \"{ee}\" is not a message type"),
        ));
    };
    x.extendee = Some(format!(".{target}"));
    if x.oneof_index.is_some() {
        return Err(ctx.err(
            ProtoErrorKind::Invalid,
            format!("{what}: an extension is in no oneof"),
        ));
    }
    let n = x.number.unwrap_or(0);
    let tm = messages.get(&target).or(None);
    let in_range = match tm {
        Some(tm) => tm
            .extension_range
            .iter()
            .any(|r| n >= r.start.unwrap_or(0) && n < r.end.unwrap_or(0)),
        // A message of this file (not yet recorded): look it up.
        None => false,
    };
    if n < 1 {
        check_number(ctx, &what, n)?;
    }
    if !in_range {
        return Err(ctx.err(
            ProtoErrorKind::Number,
            format!("{what}: {target} has no extension range for number {n}"),
        ));
    }
    if syntax == edition::PROTO3 && x.default_value.is_some() {
        return Err(ctx.err(
            ProtoErrorKind::Invalid,
            format!("{what}: proto3 fields have no explicit defaults"),
        ));
    }
    check_field(ctx, scope, &what, x, syntax, enums)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(edit: impl FnOnce(&mut FileDescriptorProto)) -> FileDescriptorSet {
        let mut f = FileDescriptorProto {
            name: Some("t.proto".into()),
            package: Some("t".into()),
            syntax: Some("proto3".into()),
            ..Default::default()
        };
        f.message_type.push(DescriptorProto {
            name: Some("M".into()),
            ..Default::default()
        });
        edit(&mut f);
        FileDescriptorSet {
            file: vec![f],
            ..Default::default()
        }
    }

    fn field(name: &str, number: i32, t: i32) -> FieldDescriptorProto {
        FieldDescriptorProto {
            name: Some(name.into()),
            number: Some(number),
            label: Some(label::OPTIONAL),
            r#type: Some(t),
            ..Default::default()
        }
    }

    #[test]
    fn valid_set_passes_and_names_resolve() {
        let mut s = set(|f| {
            let mut x = field("n", 1, 0);
            x.r#type = None;
            x.type_name = Some("M".into());
            f.message_type[0].field.push(x);
        });
        validate_set(&mut s).unwrap();
        let x = &s.file[0].message_type[0].field[0];
        assert_eq!(x.type_name.as_deref(), Some(".t.M"));
        assert_eq!(x.r#type, Some(field_type::MESSAGE));
    }

    #[test]
    fn refusals_name_file_type_and_field() {
        type Edit = Box<dyn FnOnce(&mut FileDescriptorProto)>;
        let cases: Vec<(Edit, &str)> = vec![
            (
                Box::new(|f| f.message_type[0].field.push(field("x", 0, 5))),
                "t.proto: field t.M.x: number 0 is out of range",
            ),
            (
                Box::new(|f| {
                    f.message_type[0].field.push(field("x", 1, 5));
                    f.message_type[0].field.push(field("y", 1, 9));
                }),
                "t.proto: field t.M.y: number 1 is already used by x",
            ),
            (
                Box::new(|f| {
                    f.message_type.push(DescriptorProto {
                        name: Some("M".into()),
                        ..Default::default()
                    })
                }),
                "t.proto: \"t.M\" is already defined.",
            ),
            (
                Box::new(|f| f.dependency.push("t.proto".into())),
                "depends on itself",
            ),
            (
                Box::new(|f| f.dependency.push("nothere.proto".into())),
                "depends on \"nothere.proto\"",
            ),
            (
                Box::new(|f| {
                    f.enum_type.push(EnumDescriptorProto {
                        name: Some("E".into()),
                        ..Default::default()
                    })
                }),
                "enum t.E has no values",
            ),
            (
                Box::new(|f| {
                    let mut x = field("x", 1, 5);
                    x.oneof_index = Some(7);
                    f.message_type[0].field.push(x);
                }),
                "field t.M.x: oneof_index 7 is out of range",
            ),
        ];
        for (edit, want) in cases {
            let mut s = set(edit);
            let e = validate_set(&mut s).unwrap_err();
            assert!(e.to_string().contains(want), "{e} lacks {want}");
            assert_eq!((e.line, e.col, e.file.as_str()), (0, 0, "t.proto"));
        }
    }

    #[test]
    fn defaults_read_as_strtol_and_written_back() {
        let mut s = set(|f| {
            f.syntax = Some("proto2".into());
            let mut a = field("a", 1, field_type::INT32);
            a.default_value = Some(" 0x10".into());
            let mut b = field("b", 2, field_type::DOUBLE);
            b.default_value = Some("1e5".into());
            f.message_type[0].field.extend([a, b]);
        });
        validate_set(&mut s).unwrap();
        let m = &s.file[0].message_type[0];
        assert_eq!(m.field[0].default_value.as_deref(), Some(&b"16"[..]));
        assert_eq!(m.field[1].default_value.as_deref(), Some(&b"100000"[..]));
        for bad in ["x", "3000000000", " ", "1.5"] {
            let mut s = set(|f| {
                f.syntax = Some("proto2".into());
                let mut a = field("a", 1, field_type::INT32);
                a.default_value = Some(bad.into());
                f.message_type[0].field.push(a);
            });
            assert!(validate_set(&mut s).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn map_entries_and_json_names() {
        let mut s = set(|f| {
            let m = &mut f.message_type[0];
            let mut x = field("m", 1, field_type::MESSAGE);
            x.label = Some(label::REPEATED);
            x.type_name = Some(".t.M.MEntry".into());
            m.field.push(x);
            m.nested_type.push(DescriptorProto {
                name: Some("MEntry".into()),
                field: vec![field("key", 1, field_type::INT32)],
                options: Some(MessageOptions {
                    map_entry: Some(true),
                    ..Default::default()
                }),
                ..Default::default()
            });
        });
        let e = validate_set(&mut s).unwrap_err();
        assert!(e.to_string().contains("map entry t.M.MEntry"), "{e}");
        let mut s = set(|f| {
            f.syntax = Some("proto2".into());
            let m = &mut f.message_type[0];
            m.field.push(field("a_b", 1, field_type::INT32));
            m.field.push(field("aB", 2, field_type::INT32));
        });
        let e = validate_set(&mut s).unwrap_err();
        assert!(
            e.to_string().contains("field t.M.aB: JSON name \"aB\""),
            "{e}"
        );
    }
}
