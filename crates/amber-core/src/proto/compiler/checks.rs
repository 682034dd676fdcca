//! The checks protoc makes once options are interpreted and every file is
//! resolved: enum aliases, extension numbers (inside the extendee's ranges,
//! unique per extendee), `packed` only on packable fields, editions
//! presence rules, and JSON name clashes in proto3 and editions.

use std::collections::HashMap;

use crate::proto::compiler::ast::{pp, ParsedFile};
use crate::proto::compiler::pool::{err, parts, Parts, Pool};
use crate::proto::compiler::symbols::message_at;
use crate::proto::descriptor::*;
use crate::proto::error::{ProtoError, ProtoErrorKind};

/// Checks of file `fi` that need interpreted options or other files.
pub fn check_after_options(pool: &Pool, fi: usize) -> Result<(), ProtoError> {
    let pf = &pool.files[fi];
    let all = parts(&pf.file);
    enum_aliases(pf, &all)?;
    extension_numbers(pool, fi, &all)?;
    crate::proto::compiler::rules::fields(pool, pf, &all)?;
    crate::proto::compiler::rules::enum_value_names(pf, &all)?;
    if pf.proto3 || pf.editions {
        json_names(pf, &all)?;
    }
    crate::proto::compiler::naming::check(pf)
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
        if e.options.as_ref().and_then(|o| o.allow_alias) == Some(true) {
            let mut nums: Vec<i32> = e.value.iter().filter_map(|v| v.number).collect();
            nums.sort_unstable();
            if nums.windows(2).all(|w| w[0] != w[1]) {
                return Err(err(
                    ProtoErrorKind::Invalid,
                    format!("\"{}\" declares support for enum aliases but no enum values share field numbers. Please remove the unnecessary 'option allow_alias = true;' declaration.", e.name.as_deref().unwrap_or("")),
                    pf,
                    p,
                ));
            }
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

fn extension_numbers(pool: &Pool, fi: usize, all: &Parts<'_>) -> Result<(), ProtoError> {
    let pf = &pool.files[fi];
    // Extensions of the files loaded before this one, by extendee and number.
    let mut used: HashMap<(&str, i32), String> = HashMap::new();
    for other in &pool.files[..fi] {
        for (_, x) in parts(&other.file).exts {
            let key = (x.extendee.as_deref().unwrap_or(""), x.number.unwrap_or(0));
            used.entry(key)
                .or_insert_with(|| x.name.clone().unwrap_or_default());
        }
    }
    let mut exts = all.exts.clone();
    exts.sort_by(|a, b| a.0.cmp(&b.0));
    for (p, x) in exts {
        let extendee = x.extendee.as_deref().unwrap_or("");
        let n = x.number.unwrap_or(0);
        let short = extendee.trim_start_matches('.');
        let name = x.name.clone().unwrap_or_default();
        if let Some(first) = used.insert((extendee, n), name) {
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
    }
    Ok(())
}

fn json_names(pf: &ParsedFile, all: &Parts<'_>) -> Result<(), ProtoError> {
    let file_fmt = pf
        .file
        .options
        .as_ref()
        .and_then(|o| o.features.as_ref())
        .and_then(|f| f.json_format);
    for (p, m) in &all.messages {
        let o = m.options.as_ref();
        if o.and_then(|o| o.map_entry) == Some(true)
            || o.and_then(|o| o.deprecated_legacy_json_field_conflicts) == Some(true)
        {
            continue;
        }
        let fmt = m
            .options
            .as_ref()
            .and_then(|o| o.features.as_ref())
            .and_then(|f| f.json_format);
        if pf.editions && fmt.or(file_fmt) == Some(2) {
            // LEGACY_BEST_EFFORT: clashes allowed.
            continue;
        }
        let mut seen: HashMap<&str, &str> = HashMap::new();
        for (i, x) in m.field.iter().enumerate() {
            let json = x.json_name.as_deref().unwrap_or("");
            let name = x.name.as_deref().unwrap_or("");
            if let Some(first) = seen.insert(json, name) {
                return Err(err(
                    ProtoErrorKind::Duplicate,
                    format!("The JSON name of field \"{name}\" (\"{json}\") conflicts with the JSON name of field \"{first}\"."),
                    pf,
                    &pp(p, &[2, i as i32]),
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
