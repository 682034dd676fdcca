//! Per-field rules protoc enforces once options are interpreted: which
//! field options fit which fields (`packed`, `lazy`, `jstype`), extension
//! and MessageSet rules, proto3's open enums, editions' per-field features;
//! and enum value names that clash once the enum's prefix and case are
//! ignored.

use std::collections::HashMap;

use crate::proto::compiler::ast::pp;
use crate::proto::compiler::ast::ParsedFile;
use crate::proto::compiler::pool::{err, presence, Parts, Pool};
use crate::proto::compiler::symbols::{enum_at, message_at};
use crate::proto::descriptor::*;
use crate::proto::error::{ProtoError, ProtoErrorKind};

/// A field with what the rules need to know about where it is.
struct At<'a> {
    path: Vec<i32>,
    f: &'a FieldDescriptorProto,
    /// The message declaring it (for extensions: the scope, if any).
    parent: Option<&'a DescriptorProto>,
}

fn is_map_entry(m: Option<&DescriptorProto>) -> bool {
    m.and_then(|m| m.options.as_ref()).and_then(|o| o.map_entry) == Some(true)
}

fn message_set(m: &DescriptorProto) -> bool {
    m.options.as_ref().and_then(|o| o.message_set_wire_format) == Some(true)
}

/// Whether the field is a map field (its type is a map entry nested in
/// `parent`).
fn is_map_field(x: &FieldDescriptorProto, parent: Option<&DescriptorProto>) -> bool {
    let Some(p) = parent else { return false };
    let Some(t) = x.type_name.as_deref() else {
        return false;
    };
    let short = t.rsplit('.').next().unwrap_or("");
    x.label == Some(label::REPEATED)
        && p.nested_type
            .iter()
            .any(|n| n.name.as_deref() == Some(short) && is_map_entry(Some(n)))
}

/// Whether the enum named `type_name` is closed.
fn enum_is_closed(pool: &Pool, type_name: &str) -> bool {
    let Some(sym) = pool.symbols.get(type_name.trim_start_matches('.')) else {
        return false;
    };
    let pf = &pool.files[sym.file];
    if pf.proto3 {
        return false;
    }
    if !pf.editions {
        return true;
    }
    let own = enum_at(&pf.file, &sym.path)
        .and_then(|e| e.options.as_ref())
        .and_then(|o| o.features.as_ref())
        .and_then(|f| f.enum_type);
    let file = pf
        .file
        .options
        .as_ref()
        .and_then(|o| o.features.as_ref())
        .and_then(|f| f.enum_type);
    own.or(file) == Some(2)
}

/// A map whose values are a closed enum needs that enum's first value to
/// be 0 (a missing value reads as 0), as protoc requires.
fn closed_enum_map_value(pool: &Pool, pf: &ParsedFile, at: &At<'_>) -> Result<(), ProtoError> {
    let (Some(parent), Some(tn)) = (at.parent, at.f.type_name.as_deref()) else {
        return Ok(());
    };
    let short = tn.rsplit('.').next().unwrap_or("");
    let Some(entry) = parent
        .nested_type
        .iter()
        .find(|n| n.name.as_deref() == Some(short))
    else {
        return Ok(());
    };
    let Some(value) = entry.field.iter().find(|f| f.number == Some(2)) else {
        return Ok(());
    };
    if value.r#type != Some(field_type::ENUM) {
        return Ok(());
    }
    let vt = value.type_name.as_deref().unwrap_or("");
    if !enum_is_closed(pool, vt) {
        return Ok(());
    }
    let first = pool
        .symbols
        .get(vt.trim_start_matches('.'))
        .and_then(|s| enum_at(&pool.files[s.file].file, &s.path))
        .and_then(|e| e.value.first())
        .and_then(|v| v.number);
    if first.is_some_and(|n| n != 0) {
        return Err(err(
            ProtoErrorKind::Invalid,
            "Enum value in map must define 0 as the first value.",
            pf,
            &pp(&at.path, &[6]),
        ));
    }
    Ok(())
}

/// Check every field and extension of the file.
pub(crate) fn fields(pool: &Pool, pf: &ParsedFile, all: &Parts<'_>) -> Result<(), ProtoError> {
    let mut list: Vec<At<'_>> = Vec::new();
    for (p, x) in &all.exts {
        let parent = if p.len() > 2 {
            message_at(&pf.file, &p[..p.len() - 2])
        } else {
            None
        };
        list.push(At {
            path: p.clone(),
            f: x,
            parent,
        });
    }
    for (p, m) in &all.messages {
        for (i, x) in m.field.iter().enumerate() {
            list.push(At {
                path: pp(p, &[2, i as i32]),
                f: x,
                parent: Some(m),
            });
        }
    }
    list.sort_by(|a, b| a.path.cmp(&b.path));
    for at in &list {
        field(pool, pf, at)?;
    }
    Ok(())
}

fn field(pool: &Pool, pf: &ParsedFile, at: &At<'_>) -> Result<(), ProtoError> {
    use field_type::*;
    let x = at.f;
    let p = &at.path;
    let fail = |msg: &str| Err(err(ProtoErrorKind::Invalid, msg, pf, p));
    // Some rules point at the field's type, as protoc does.
    let fail_at_type = |msg: &str| Err(err(ProtoErrorKind::Invalid, msg, pf, &pp(p, &[6])));
    let opts = x.options.as_ref();
    let t = x.r#type.unwrap_or(0);
    let repeated = x.label == Some(label::REPEATED);
    let is_ext = x.extendee.is_some();
    if pf.editions && opts.and_then(|o| o.packed).is_some() {
        return fail("Field option packed is not allowed under editions.  Use the repeated_field_encoding feature to control this behavior.");
    }
    if opts.and_then(|o| o.packed) == Some(true)
        && (!repeated || matches!(t, STRING | BYTES | MESSAGE | GROUP))
    {
        return fail_at_type(
            "[packed = true] can only be specified for repeated primitive fields.",
        );
    }
    if is_ext && opts.and_then(|o| o.unverified_lazy) == Some(true) {
        return Err(err(
            ProtoErrorKind::Invalid,
            "Extensions cannot be marked as unverified_lazy.",
            pf,
            &pp(p, &[6]),
        ));
    }
    for (set, name) in [
        (opts.and_then(|o| o.lazy), "lazy"),
        (opts.and_then(|o| o.unverified_lazy), "unverified_lazy"),
    ] {
        if set == Some(true) && t != MESSAGE {
            return fail_at_type(&format!(
                "[{name} = true] can only be specified for submessage fields."
            ));
        }
    }
    if opts.and_then(|o| o.jstype).is_some_and(|j| j != 0)
        && !matches!(t, INT64 | UINT64 | SINT64 | FIXED64 | SFIXED64)
    {
        return fail_at_type(
            "jstype is only allowed on int64, uint64, sint64, fixed64 or sfixed64 fields.",
        );
    }
    if is_ext && x.label == Some(label::REQUIRED) {
        return fail_at_type(&format!(
            "The extension {} cannot be required.",
            x.name.as_deref().unwrap_or("")
        ));
    }
    if !is_ext && at.parent.is_some_and(message_set) {
        return fail("MessageSets cannot have fields, only extensions.");
    }
    if let Some(e) = x.extendee.as_deref() {
        let target = pool
            .symbols
            .get(e.trim_start_matches('.'))
            .and_then(|s| message_at(&pool.files[s.file].file, &s.path));
        if target.is_some_and(message_set) && (x.label != Some(label::OPTIONAL) || t != MESSAGE) {
            return fail_at_type("Extensions of MessageSets must be optional messages.");
        }
    }
    if pf.proto3 && !is_ext && t == ENUM {
        let tn = x.type_name.as_deref().unwrap_or("");
        if enum_is_closed(pool, tn) {
            let m = message_full_name(pf, p);
            return Err(err(
                ProtoErrorKind::Invalid,
                format!("Enum type \"{}\" is not an open enum, but is used in \"{m}\" which is a proto3 message type.", tn.trim_start_matches('.')),
                pf,
                &pp(p, &[6]),
            ));
        }
    }
    if !is_ext && is_map_field(x, at.parent) {
        closed_enum_map_value(pool, pf, at)?;
    }
    if pf.editions && x.default_value.is_some() && presence(pf, x) == 2 {
        return Err(err(
            ProtoErrorKind::Invalid,
            "Implicit presence fields can't specify defaults.",
            pf,
            p,
        ));
    }
    if pf.editions
        && t == ENUM
        && !repeated
        && x.oneof_index.is_none()
        && !is_ext
        && presence(pf, x) == 2
        && enum_is_closed(pool, x.type_name.as_deref().unwrap_or(""))
    {
        return Err(err(
            ProtoErrorKind::Invalid,
            "Implicit presence enum fields must always be open.",
            pf,
            &pp(p, &[1]),
        ));
    }
    if pf.file.edition.is_some_and(|e| e >= edition::E2024) && opts.and_then(|o| o.ctype).is_some()
    {
        return fail_at_type("ctype option is not allowed under edition 2024 and beyond. Use the feature string_type = VIEW|CORD|STRING|... instead.");
    }
    if pf.editions && !is_map_entry(at.parent) {
        editions_features(pf, at)?;
    }
    Ok(())
}

/// The full name of the message holding the field at `path`.
fn message_full_name(pf: &ParsedFile, path: &[i32]) -> String {
    let mut names = Vec::new();
    if let Some(pkg) = pf.file.package.as_deref() {
        names.push(pkg.to_string());
    }
    let mut i = 2;
    while i + 2 <= path.len() - 2 {
        if let Some(m) = message_at(&pf.file, &path[..i]) {
            names.push(m.name.clone().unwrap_or_default());
        }
        i += 2;
    }
    if let Some(m) = message_at(&pf.file, &path[..path.len() - 2]) {
        names.push(m.name.clone().unwrap_or_default());
    }
    names.join(".")
}

/// Features set on a field must fit it.
fn editions_features(pf: &ParsedFile, at: &At<'_>) -> Result<(), ProtoError> {
    use field_type::*;
    let x = at.f;
    let Some(fs) = x.options.as_ref().and_then(|o| o.features.as_ref()) else {
        return Ok(());
    };
    let fail = |msg: &str| Err(err(ProtoErrorKind::Invalid, msg, pf, &at.path));
    let t = x.r#type.unwrap_or(0);
    let repeated = x.label == Some(label::REPEATED);
    let is_message = matches!(t, MESSAGE | GROUP);
    let map = is_map_field(x, at.parent);
    if let Some(presence) = fs.field_presence {
        if x.extendee.is_some() {
            return fail(if presence == 3 {
                "Extensions can't be required."
            } else {
                "Extensions can't specify field presence."
            });
        }
        if repeated {
            return fail("Repeated fields can't specify field presence.");
        }
        if x.oneof_index.is_some() && x.proto3_optional != Some(true) {
            return fail("Oneof fields can't specify field presence.");
        }
        if is_message && presence == 2 {
            return fail("Message fields can't specify implicit presence.");
        }
    }
    if fs.message_encoding.is_some() && (!is_message || map) {
        return fail("Only message fields can specify message encoding.");
    }
    if let Some(enc) = fs.repeated_field_encoding {
        if !repeated {
            return fail("Only repeated fields can specify repeated field encoding.");
        }
        if enc == 1 && matches!(t, STRING | BYTES | MESSAGE | GROUP) {
            return fail(
                "Only repeated primitive fields can specify PACKED repeated field encoding.",
            );
        }
    }
    if fs.utf8_validation.is_some() && t != STRING && !map {
        return fail("Only string fields can specify utf8 validation.");
    }
    Ok(())
}

/// An enum value's name with the enum's name as prefix dropped (compared
/// without case or underscores) and then in PascalCase: two values that
/// give the same result clash.
fn normalized(enum_name: &str, value: &str) -> String {
    let prefix: Vec<char> = enum_name
        .chars()
        .filter(|&c| c != '_')
        .map(|c| c.to_ascii_lowercase())
        .collect();
    let chars: Vec<char> = value.chars().collect();
    let mut i = 0;
    let mut matched = 0;
    while i < chars.len() && matched < prefix.len() {
        if chars[i] != '_' {
            if chars[i].to_ascii_lowercase() != prefix[matched] {
                break;
            }
            matched += 1;
        }
        i += 1;
    }
    let mut rest = value;
    if matched == prefix.len() {
        while i < chars.len() && chars[i] == '_' {
            i += 1;
        }
        if i < chars.len() {
            rest = &value[i..];
        }
    }
    let mut out = String::new();
    let mut upper = true;
    for c in rest.chars() {
        if c == '_' {
            upper = true;
        } else {
            out.push(if upper {
                c.to_ascii_uppercase()
            } else {
                c.to_ascii_lowercase()
            });
            upper = false;
        }
    }
    out
}

/// Enum values whose names differ only by case, underscores or the enum's
/// prefix must share their number.
pub(crate) fn enum_value_names(pf: &ParsedFile, all: &Parts<'_>) -> Result<(), ProtoError> {
    for (p, e) in &all.enums {
        let ename = e.name.as_deref().unwrap_or("");
        let mut seen: HashMap<String, (&str, i32)> = HashMap::new();
        for (i, v) in e.value.iter().enumerate() {
            let name = v.name.as_deref().unwrap_or("");
            let num = v.number.unwrap_or(0);
            let key = normalized(ename, name);
            match seen.get(&key) {
                Some(&(first, n)) if n != num => {
                    return Err(err(
                        ProtoErrorKind::Duplicate,
                        format!("Enum name {name} has the same name as {first} if you ignore case and strip out the enum name prefix (if any). (If you are using allow_alias, please assign the same number to each enum value name.)"),
                        pf,
                        &pp(p, &[2, i as i32]),
                    ));
                }
                Some(_) => {}
                None => {
                    seen.insert(key, (name, num));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::normalized;

    #[test]
    fn enum_prefixes() {
        assert_eq!(normalized("Foo", "FOO_UNKNOWN"), "Unknown");
        assert_eq!(normalized("Foo", "UNKNOWN"), "Unknown");
        assert_eq!(normalized("FooBar", "FOO_BAR_X"), "X");
        assert_eq!(normalized("Foo", "FOO"), "Foo");
        assert_eq!(normalized("Foo", "foo_"), "Foo");
        assert_ne!(
            normalized("Foo", "FOO_BAR_BAZ"),
            normalized("Foo", "FOO_BARBAZ")
        );
    }
}
