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
use crate::proto::names::map_entry_name;

/// Highest field number.
pub const MAX_FIELD_NUMBER: i32 = 536_870_911;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Sym {
    Package,
    Message,
    Enum,
    EnumValue,
    Field,
    Oneof,
    Service,
    Method,
}

struct Ctx {
    /// Every symbol of every file so far, by full name (no leading dot).
    syms: HashMap<String, Sym>,
    /// The file being checked.
    file: String,
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
    };
    let mut seen: HashSet<String> = HashSet::new();
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
        let mut deps = HashSet::new();
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
            if !deps.insert(d.clone()) {
                return Err(ctx.err(ProtoErrorKind::Duplicate, format!("imports \"{d}\" twice")));
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
        let edition_of = match file.syntax.as_deref() {
            None | Some("") | Some("proto2") => edition::PROTO2,
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
    for f in &m.field {
        declare(ctx, &full, f.name.as_deref(), Sym::Field)?;
    }
    for o in &m.oneof_decl {
        declare(ctx, &full, o.name.as_deref(), Sym::Oneof)?;
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
    let allow_alias = e.options.as_ref().and_then(|o| o.allow_alias) == Some(true);
    let mut nums = HashSet::new();
    for v in &e.value {
        if !nums.insert(v.number.unwrap_or(0)) && !allow_alias {
            return Err(ctx.err(
                ProtoErrorKind::Number,
                format!(
                    "enum {full}: value {} reuses number {} (set allow_alias to allow this)",
                    v.name.as_deref().unwrap_or(""),
                    v.number.unwrap_or(0)
                ),
            ));
        }
    }
    let closed = enum_closed(syntax, e);
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
fn enum_closed(syntax: i32, e: &EnumDescriptorProto) -> bool {
    match syntax {
        edition::PROTO2 => true,
        edition::PROTO3 => false,
        _ => {
            e.options
                .as_ref()
                .and_then(|o| o.features.as_ref())
                .and_then(|f| f.enum_type)
                == Some(2)
        }
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
    let mut all_ranges = ranges.clone();
    all_ranges.extend(&reserved);
    all_ranges.sort_unstable();
    for w in all_ranges.windows(2) {
        if w[1].0 < w[0].1 {
            return Err(ctx.err(
                ProtoErrorKind::Number,
                format!(
                    "message {full}: ranges {} to {} and {} to {} overlap",
                    w[0].0, w[0].1, w[1].0, w[1].1
                ),
            ));
        }
    }
    let in_any = |rs: &[(i32, i32)], n: i32| rs.iter().any(|&(s, e)| n >= s && n < e);
    let mut numbers: HashMap<i32, String> = HashMap::new();
    let mut oneof_count = vec![0usize; m.oneof_decl.len()];
    let mut json_names: HashMap<String, String> = HashMap::new();
    let n_oneofs = m.oneof_decl.len();
    let nested_names: HashSet<String> = m
        .nested_type
        .iter()
        .map(|n| n.name.clone().unwrap_or_default())
        .collect();
    for f in &mut m.field {
        let fname = f.name.clone().unwrap_or_default();
        let what = format!("field {full}.{fname}");
        if f.extendee.is_some() {
            return Err(ctx.err(
                ProtoErrorKind::Invalid,
                format!("{what}: a field of a message has an extendee"),
            ));
        }
        let n = f.number.unwrap_or(0);
        check_number(ctx, &what, n, set_wire && false)?;
        if in_any(&reserved, n) {
            return Err(ctx.err(
                ProtoErrorKind::Number,
                format!("{what}: number {n} is reserved"),
            ));
        }
        if in_any(&ranges, n) {
            return Err(ctx.err(
                ProtoErrorKind::Number,
                format!("{what}: number {n} is in an extension range"),
            ));
        }
        if let Some(other) = numbers.insert(n, fname.clone()) {
            return Err(ctx.err(
                ProtoErrorKind::Number,
                format!("{what}: number {n} is already used by {other}"),
            ));
        }
        if m.reserved_name.iter().any(|r| r == &fname) {
            return Err(ctx.err(
                ProtoErrorKind::Duplicate,
                format!("{what}: the name is reserved"),
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
        if syntax == edition::PROTO3 || f.json_name.is_some() {
            if let Some(other) = json_names.insert(json.clone(), fname.clone()) {
                if syntax == edition::PROTO3 || other != fname {
                    return Err(ctx.err(
                        ProtoErrorKind::Duplicate,
                        format!("{what}: JSON name \"{json}\" is also {other}'s"),
                    ));
                }
            }
        }
        // A map field's entry type is nested in this message, named for it.
        if f.label == Some(label::REPEATED) && f.r#type == Some(field_type::MESSAGE) {
            let tn = f.type_name.clone().unwrap_or_default();
            let short = tn.rsplit('.').next().unwrap_or("").to_string();
            let entry = m_entry(&m.nested_type, &tn, &full);
            if let Some(e) = entry {
                if e.options.as_ref().and_then(|o| o.map_entry) == Some(true)
                    && short != map_entry_name(&fname)
                {
                    return Err(ctx.err(
                        ProtoErrorKind::Invalid,
                        format!("{what}: map entry type {short} is not named for the field"),
                    ));
                }
            }
        }
        let _ = &nested_names;
    }
    // The index of each oneof's fields, in order: they must be consecutive.
    let mut last: Option<i32> = None;
    let mut done = HashSet::new();
    for f in &m.field {
        if f.oneof_index != last {
            if let Some(l) = last {
                done.insert(l);
            }
            if let Some(i) = f.oneof_index {
                if done.contains(&i) {
                    return Err(ctx.err(
                        ProtoErrorKind::Invalid,
                        format!(
                            "field {full}.{}: the fields of a oneof must be consecutive",
                            f.name.as_deref().unwrap_or("")
                        ),
                    ));
                }
            }
        }
        last = f.oneof_index;
    }
    for (i, c) in oneof_count.iter().enumerate() {
        if *c == 0 {
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
    // Map entries must be used by a field of this message.
    for n in &m.nested_type {
        if n.options.as_ref().and_then(|o| o.map_entry) == Some(true) {
            let nfull = format!(".{}", join(&full, n.name.as_deref().unwrap_or("")));
            let used = m.field.iter().any(|f| {
                f.type_name.as_deref() == Some(&nfull)
                    && f.label == Some(label::REPEATED)
                    && map_entry_name(f.name.as_deref().unwrap_or(""))
                        == n.name.as_deref().unwrap_or("")
            });
            if !used {
                return Err(ctx.err(
                    ProtoErrorKind::Invalid,
                    format!(
                        "map entry {} is not the type of a map field of {full}",
                        &nfull[1..]
                    ),
                ));
            }
        }
    }
    for n in &mut m.nested_type {
        check_message(ctx, &full, n, syntax, enums)?;
    }
    Ok(())
}

fn m_entry<'a>(nested: &'a [DescriptorProto], tn: &str, full: &str) -> Option<&'a DescriptorProto> {
    nested
        .iter()
        .find(|n| format!(".{}", join(full, n.name.as_deref().unwrap_or(""))) == tn)
}

fn check_map_entry(ctx: &Ctx, full: &str, m: &DescriptorProto) -> Result<(), ProtoError> {
    let bad = |why: &str| ctx.err(ProtoErrorKind::Invalid, format!("map entry {full}: {why}"));
    if !m.nested_type.is_empty()
        || !m.enum_type.is_empty()
        || !m.extension.is_empty()
        || !m.extension_range.is_empty()
        || !m.oneof_decl.is_empty()
    {
        return Err(bad("a map entry holds only its key and value fields"));
    }
    if m.field.len() != 2 {
        return Err(bad("a map entry has exactly two fields, key and value"));
    }
    let key = &m.field[0];
    let value = &m.field[1];
    if key.name.as_deref() != Some("key") || key.number != Some(1) {
        return Err(bad("its first field must be \"key\" = 1"));
    }
    if value.name.as_deref() != Some("value") || value.number != Some(2) {
        return Err(bad("its second field must be \"value\" = 2"));
    }
    for f in [key, value] {
        if f.label != Some(label::OPTIONAL) {
            return Err(bad("its fields must be optional"));
        }
    }
    use field_type::*;
    if matches!(
        key.r#type,
        Some(FLOAT | DOUBLE | BYTES | MESSAGE | GROUP | ENUM)
    ) {
        return Err(bad(
            "a key cannot be float, double, bytes, an enum or a message",
        ));
    }
    if value.r#type == Some(GROUP) {
        return Err(bad("a value cannot be a group"));
    }
    Ok(())
}

fn check_number(ctx: &Ctx, what: &str, n: i32, _ext: bool) -> Result<(), ProtoError> {
    if !(1..=MAX_FIELD_NUMBER).contains(&n) {
        return Err(ctx.err(
            ProtoErrorKind::Number,
            format!("{what}: number {n} is out of range (1 to {MAX_FIELD_NUMBER})"),
        ));
    }
    if (19000..=19999).contains(&n) {
        return Err(ctx.err(
            ProtoErrorKind::Number,
            format!("{what}: numbers 19000 to 19999 are reserved for the implementation"),
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
        if f.r#type == Some(GROUP) && syntax == edition::PROTO3 {
            return Err(bad(ProtoErrorKind::Invalid, "proto3 has no groups".into()));
        }
        if f.r#type == Some(ENUM) && syntax == edition::PROTO3 {
            if let Some((_, true)) = enums.get(&full) {
                return Err(bad(
                    ProtoErrorKind::Invalid,
                    format!("enum {full} is closed, and proto3 fields take open enums only"),
                ));
            }
        }
    } else if f.type_name.is_some() {
        return Err(bad(
            ProtoErrorKind::Invalid,
            "a scalar field has a type_name".into(),
        ));
    }
    if let Some(d) = f.default_value.clone() {
        if syntax == edition::PROTO3 {
            return Err(bad(
                ProtoErrorKind::Invalid,
                "proto3 fields have no explicit defaults".into(),
            ));
        }
        if f.label == Some(label::REPEATED) {
            return Err(bad(
                ProtoErrorKind::Invalid,
                "a repeated field has no default".into(),
            ));
        }
        let t = f.r#type.unwrap_or(0);
        let ok = match t {
            INT32 | SINT32 | SFIXED32 => d.parse::<i32>().is_ok(),
            INT64 | SINT64 | SFIXED64 => d.parse::<i64>().is_ok(),
            UINT32 | FIXED32 => d.parse::<u32>().is_ok(),
            UINT64 | FIXED64 => d.parse::<u64>().is_ok(),
            FLOAT | DOUBLE => {
                matches!(d.as_str(), "inf" | "-inf" | "nan" | "-nan")
                    || (d.parse::<f64>().is_ok()
                        && !d.contains(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E'))
            }
            BOOL => d == "true" || d == "false",
            STRING => true,
            BYTES => {
                let mut out = Vec::new();
                crate::proto::escape::unescape_body(d.as_bytes(), &mut out).is_ok()
            }
            ENUM => {
                let tn = f.type_name.as_deref().unwrap_or(".");
                enums
                    .get(&tn[1..])
                    .is_some_and(|(e, _)| e.value.iter().any(|v| v.name.as_deref() == Some(&d)))
            }
            _ => false,
        };
        if !ok {
            return Err(bad(
                ProtoErrorKind::Invalid,
                format!("default value \"{d}\" is not a value of the field's type"),
            ));
        }
    }
    Ok(())
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
    if x.label == Some(label::REQUIRED) {
        return Err(ctx.err(
            ProtoErrorKind::Invalid,
            format!("{what}: an extension cannot be required"),
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
        check_number(ctx, &what, n, true)?;
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
        let cases: Vec<(Box<dyn FnOnce(&mut FileDescriptorProto)>, &str)> = vec![
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
}
