//! The checks protoc makes once options are interpreted and every file is
//! resolved: enum aliases, extension numbers (inside the extendee's ranges,
//! unique per extendee), `packed` only on packable fields, editions
//! presence rules, and JSON name clashes in proto3 and editions.

use std::collections::HashMap;

use crate::proto::compiler::ast::{pp, ParsedFile};
use crate::proto::compiler::pool::{err, parts, Extensions, Parts, Pool};
use crate::proto::compiler::symbols::{field_at, message_at};
use crate::proto::descriptor::*;
use crate::proto::error::{ProtoError, ProtoErrorKind};
use crate::proto::names::json_name;

/// Checks of file `fi` that need interpreted options or other files;
/// `index` is the pool's [`all_extensions`](crate::proto::compiler::options::all_extensions).
pub fn check_after_options(pool: &Pool, fi: usize, index: &Extensions) -> Result<(), ProtoError> {
    let pf = &pool.files[fi];
    let all = parts(&pf.file);
    file_features(pf)?;
    enum_aliases(pf, &all)?;
    extension_numbers(pool, fi, &all, index)?;
    crate::proto::compiler::rules::fields(pool, pf, &all)?;
    crate::proto::compiler::rules::enum_value_names(pf, &all)?;
    json_names(pf, &all)?;
    crate::proto::compiler::naming::check(pf)
}

/// What an editions file may not set file-wide, reported (as protoc
/// does) at its `edition` statement.
fn file_features(pf: &ParsedFile) -> Result<(), ProtoError> {
    if !pf.editions {
        return Ok(());
    }
    let o = pf.file.options.as_ref();
    let fail = |msg: &str| Err(err(ProtoErrorKind::Invalid, msg, pf, &[14]));
    if o.and_then(|o| o.features.as_ref())
        .and_then(|f| f.field_presence)
        == Some(3)
    {
        return fail("Required presence can't be specified by default.");
    }
    if o.and_then(|o| o.java_string_check_utf8) == Some(true) {
        return fail("File option java_string_check_utf8 is not allowed under editions. Use the (pb.java).utf8_validation feature to control this behavior.");
    }
    Ok(())
}

fn enum_aliases(pf: &ParsedFile, all: &Parts<'_>) -> Result<(), ProtoError> {
    let file_type = pf
        .file
        .options
        .as_ref()
        .and_then(|o| o.features.as_ref())
        .and_then(|f| f.enum_type);
    for (p, e) in &all.enums {
        // Open enums (proto3's, and editions' unless CLOSED) start at zero.
        if pf.editions {
            let own = e
                .options
                .as_ref()
                .and_then(|o| o.features.as_ref())
                .and_then(|f| f.enum_type);
            let open = own.or(file_type).unwrap_or(1) == 1;
            if open && e.value.first().is_some_and(|v| v.number != Some(0)) {
                return Err(err(
                    ProtoErrorKind::Number,
                    "The first enum value must be zero for open enums.",
                    pf,
                    &pp(p, &[2, 0, 2]),
                ));
            }
        }
        // (An allow_alias with no alias is refused by the parser, as
        // protoc's parser does.)
        if e.options.as_ref().and_then(|o| o.allow_alias) == Some(true) {
            continue;
        }
        let mut seen: HashMap<i32, &str> = HashMap::new();
        for (i, v) in e.value.iter().enumerate() {
            let name = v.name.as_deref().unwrap_or("");
            if let Some(first) = seen.insert(v.number.unwrap_or(0), name) {
                return Err(err(
                    ProtoErrorKind::Number,
                    format!("\"{name}\" uses the same enum value as \"{first}\". If this is intended, set 'option allow_alias = true;' to the enum definition."),
                    pf,
                    &pp(p, &[2, i as i32, 2]),
                ));
            }
        }
    }
    Ok(())
}

fn extension_numbers(
    pool: &Pool,
    fi: usize,
    all: &Parts<'_>,
    index: &Extensions,
) -> Result<(), ProtoError> {
    let pf = &pool.files[fi];
    // This file's extensions so far, by extendee and number; those of the
    // files loaded before it come from the pool's index (built once, so
    // that checking stays linear in the number of files).
    let mut used: HashMap<(&str, i32), String> = HashMap::new();
    let mut exts = all.exts.clone();
    exts.sort_by(|a, b| a.0.cmp(&b.0));
    for (p, x) in exts {
        let extendee = x.extendee.as_deref().unwrap_or("");
        let n = x.number.unwrap_or(0);
        let short = extendee.trim_start_matches('.');
        let name = x.name.clone().unwrap_or_default();
        let earlier = index
            .get(&(short.to_string(), n))
            .filter(|(f, _)| *f < fi)
            .and_then(|(f, path)| field_at(&pool.files[*f].file, path))
            .map(|e| e.name.clone().unwrap_or_default());
        if let Some(first) = earlier.or_else(|| used.insert((extendee, n), name)) {
            return Err(err(
                ProtoErrorKind::Number,
                format!("Extension number {n} has already been used in \"{short}\" by extension \"{first}\"."),
                pf,
                &pp(&p, &[3]),
            ));
        }
        let Some(sym) = pool.symbols.get(short) else {
            continue;
        };
        let Some(m) = message_at(&pool.files[sym.file].file, &sym.path) else {
            continue;
        };
        if !m
            .extension_range
            .iter()
            .any(|r| r.start.unwrap_or(0) <= n && n < r.end.unwrap_or(0))
        {
            return Err(err(
                ProtoErrorKind::Number,
                format!("\"{short}\" does not declare {n} as an extension number."),
                pf,
                &pp(&p, &[3]),
            ));
        }
        let range = m
            .extension_range
            .iter()
            .position(|r| r.start.unwrap_or(0) <= n && n < r.end.unwrap_or(0))
            .unwrap_or(0);
        let range_path = pp(&sym.path, &[5, range as i32]);
        if let Some(decls) = pool.files[sym.file].ext_decls.get(&range_path) {
            declared(pool, fi, &p, x, short, decls)?;
        }
    }
    Ok(())
}

/// The scalar type keywords of the `.proto` language.
const SCALARS: [&str; 15] = [
    "double", "float", "int64", "uint64", "int32", "fixed64", "fixed32", "bool", "string", "bytes",
    "uint32", "sfixed32", "sfixed64", "sint32", "sint64",
];

/// An extension in a range with declarations (or `verification =
/// DECLARATION`) must match its declaration, as protoc checks it; errors
/// point at the extendee, as protoc's do.
fn declared(
    pool: &Pool,
    fi: usize,
    path: &[i32],
    x: &FieldDescriptorProto,
    extendee: &str,
    decls: &ExtensionRangeOptions,
) -> Result<(), ProtoError> {
    let pf = &pool.files[fi];
    let n = x.number.unwrap_or(0);
    let at = pp(path, &[2]);
    let fail = |msg: String| Err(err(ProtoErrorKind::Invalid, msg, pf, &at));
    let full = full_name_at(pf, path);
    let Some(d) = decls.declaration.iter().find(|d| d.number == Some(n)) else {
        if !decls.declaration.is_empty() || decls.verification == Some(0) {
            return fail(format!("Missing extension declaration for field {full} with number {n} in extendee message {extendee}. An extension range must declare for all extension fields if its verification state is DECLARATION or there's any declaration in the range already. Otherwise, consider splitting up the range."));
        }
        return Ok(());
    };
    if d.reserved == Some(true) {
        return fail(format!("Cannot use number {n} for extension field {full}, as it is reserved in the extension declarations for message {extendee}."));
    }
    if let Some(want) = d.r#type.as_deref().filter(|t| !t.is_empty()) {
        let actual = match x.r#type {
            Some(field_type::MESSAGE | field_type::ENUM | field_type::GROUP) => {
                x.type_name.clone().unwrap_or_default()
            }
            t => SCALARS
                .iter()
                .find(|k| field_type::from_keyword(k) == t)
                .map_or(String::new(), |k| k.to_string()),
        };
        let expected = if field_type::from_keyword(want).is_none() && !want.starts_with('.') {
            format!(".{want}")
        } else {
            want.to_string()
        };
        if expected != actual {
            return fail(format!("\"{extendee}\" extension field {n} is expected to be type \"{expected}\", not \"{actual}\"."));
        }
    }
    if let Some(want) = d.full_name.as_deref().filter(|t| !t.is_empty()) {
        if want != format!(".{full}") {
            return fail(format!("\"{extendee}\" extension field {n} is expected to have field name \"{want}\", not \".{full}\"."));
        }
    }
    let repeated = x.label == Some(label::REPEATED);
    if d.repeated.unwrap_or(false) != repeated {
        return fail(format!(
            "\"{extendee}\" extension field {n} is expected to be {}.",
            if d.repeated.unwrap_or(false) {
                "repeated"
            } else {
                "optional"
            }
        ));
    }
    Ok(())
}

/// The full name of the extension at `path` (package, enclosing messages,
/// name).
fn full_name_at(pf: &ParsedFile, path: &[i32]) -> String {
    let mut names: Vec<String> = pf.file.package.iter().cloned().collect();
    for j in (2..=path.len().saturating_sub(2)).step_by(2) {
        if let Some(m) = message_at(&pf.file, &path[..j]) {
            names.push(m.name.clone().unwrap_or_default());
        }
    }
    let ext = match path {
        [7, k] => pf.file.extension.get(*k as usize),
        [.., 6, k] => {
            message_at(&pf.file, &path[..path.len() - 2]).and_then(|m| m.extension.get(*k as usize))
        }
        _ => None,
    };
    names.push(ext.and_then(|e| e.name.clone()).unwrap_or_default());
    names.retain(|s| !s.is_empty());
    names.join(".")
}

/// JSON name clashes, as protoc checks them: once with the default JSON
/// names (what field masks use) and once with the custom ones; a custom
/// name may not look like an extension (`"[x]"`). Under
/// `json_format = LEGACY_BEST_EFFORT` (proto2's default) only two custom
/// names may not clash.
fn json_names(pf: &ParsedFile, all: &Parts<'_>) -> Result<(), ProtoError> {
    let file_fmt = pf
        .file
        .options
        .as_ref()
        .and_then(|o| o.features.as_ref())
        .and_then(|f| f.json_format);
    for (p, m) in &all.messages {
        let o = m.options.as_ref();
        if o.and_then(|o| o.deprecated_legacy_json_field_conflicts) == Some(true) {
            continue;
        }
        let fmt = m
            .options
            .as_ref()
            .and_then(|o| o.features.as_ref())
            .and_then(|f| f.json_format);
        let best_effort = if pf.editions {
            fmt.or(file_fmt) == Some(2)
        } else {
            !pf.proto3
        };
        for use_custom in [false, true] {
            // JSON name -> (field name, custom)
            let mut seen: HashMap<String, (&str, bool)> = HashMap::new();
            for (i, x) in m.field.iter().enumerate() {
                let name = x.name.as_deref().unwrap_or("");
                let default = json_name(name);
                let (json, custom) = match x.json_name.as_deref() {
                    Some(j) if use_custom && j != default => (j.to_string(), true),
                    _ => (default, false),
                };
                let at = pp(p, &[2, i as i32, 1]);
                if custom && json.starts_with('[') && json.ends_with(']') {
                    return Err(err(
                        ProtoErrorKind::Invalid,
                        format!("The custom JSON name of field \"{name}\" (\"{json}\") is invalid: JSON names may not start with '[' and end with ']'."),
                        pf,
                        &at,
                    ));
                }
                let Some(&(first, first_custom)) = seen.get(&json) else {
                    seen.insert(json, (name, custom));
                    continue;
                };
                if use_custom && !custom && !first_custom {
                    continue;
                }
                if best_effort && (!custom || !first_custom) {
                    continue;
                }
                let kind = |c: bool| if c { "custom" } else { "default" };
                return Err(err(
                    ProtoErrorKind::Duplicate,
                    format!(
                        "The {} JSON name of field \"{name}\" (\"{json}\") conflicts with the {} JSON name of field \"{first}\".",
                        kind(custom),
                        kind(first_custom)
                    ),
                    pf,
                    &at,
                ));
            }
        }
    }
    Ok(())
}

/// Extension declarations (`extensions 4 to 9 [declaration = {...}]`) of
/// the range at `path`: names and message types fully qualified, numbers
/// inside the range. (Declarations have source retention: the option
/// interpreter calls this before it drops them.)
pub(crate) fn check_declarations(
    pf: &ParsedFile,
    path: &[i32],
    opts: &ExtensionRangeOptions,
) -> Result<(), ProtoError> {
    let n = path.len();
    let range = crate::proto::compiler::symbols::message_at(&pf.file, &path[..n.saturating_sub(2)])
        .and_then(|m| m.extension_range.get(path[n - 1] as usize));
    for d in &opts.declaration {
        let qualified = |s: &str| s.starts_with('.');
        if let Some(name) = d.full_name.as_deref().filter(|x| !qualified(x)) {
            return Err(err(
                ProtoErrorKind::Invalid,
                format!(
                    "\"{name}\" must have a leading dot to indicate the fully-qualified scope."
                ),
                pf,
                path,
            ));
        }
        if let Some(t) = d.r#type.as_deref() {
            if field_type::from_keyword(t).is_none() && !qualified(t) {
                return Err(err(
                    ProtoErrorKind::Invalid,
                    format!(
                        "\"{t}\" must have a leading dot to indicate the fully-qualified scope."
                    ),
                    pf,
                    path,
                ));
            }
        }
        if let (Some(num), Some(r)) = (d.number, range) {
            if num < r.start.unwrap_or(0) || num >= r.end.unwrap_or(0) {
                return Err(err(
                    ProtoErrorKind::Number,
                    format!("Extension declaration number {num} is not in the extension range."),
                    pf,
                    path,
                ));
            }
        }
    }
    Ok(())
}
