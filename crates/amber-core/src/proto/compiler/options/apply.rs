//! Merging an option's bytes into the options struct of the element it
//! applies to, found by its path.

use crate::proto::compiler::ast::OptKind;
use crate::proto::descriptor::*;
use crate::proto::error::WireError;
use crate::proto::wire::{merge_from, Message, WireReader};

fn merge<M: Message>(slot: &mut Option<M>, bytes: &[u8]) -> Result<bool, WireError> {
    let m = slot.get_or_insert_with(M::default);
    merge_from(m, &mut WireReader::new(bytes), 0)?;
    Ok(true)
}

fn msg_mut<'a>(f: &'a mut FileDescriptorProto, path: &[i32]) -> Option<&'a mut DescriptorProto> {
    if path.len() < 2 || path[0] != 4 {
        return None;
    }
    let mut m = f.message_type.get_mut(path[1] as usize)?;
    let mut rest = &path[2..];
    while rest.len() >= 2 {
        if rest[0] != 3 {
            return None;
        }
        m = m.nested_type.get_mut(rest[1] as usize)?;
        rest = &rest[2..];
    }
    if rest.is_empty() {
        Some(m)
    } else {
        None
    }
}

fn enum_mut<'a>(
    f: &'a mut FileDescriptorProto,
    path: &[i32],
) -> Option<&'a mut EnumDescriptorProto> {
    let n = path.len();
    if n == 2 && path[0] == 5 {
        return f.enum_type.get_mut(path[1] as usize);
    }
    if n < 4 || path[n - 2] != 4 {
        return None;
    }
    msg_mut(f, &path[..n - 2])?
        .enum_type
        .get_mut(path[n - 1] as usize)
}

type WR = Result<bool, WireError>;

pub(super) fn apply(f: &mut FileDescriptorProto, t: &[i32], kind: OptKind, b: &[u8]) -> WR {
    let n = t.len();
    let last = |k: usize| t.get(n.wrapping_sub(k)).copied().unwrap_or(-1) as usize;
    match kind {
        OptKind::File => merge(&mut f.options, b),
        OptKind::Message => match msg_mut(f, t) {
            Some(m) => merge(&mut m.options, b),
            None => Ok(false),
        },
        OptKind::Field => {
            if n == 2 && t[0] == 7 {
                return match f.extension.get_mut(t[1] as usize) {
                    Some(x) => merge(&mut x.options, b),
                    None => Ok(false),
                };
            }
            let Some(m) = msg_mut(f, &t[..n.saturating_sub(2)]) else {
                return Ok(false);
            };
            let list = if t[n - 2] == 6 {
                &mut m.extension
            } else {
                &mut m.field
            };
            match list.get_mut(last(1)) {
                Some(x) => merge(&mut x.options, b),
                None => Ok(false),
            }
        }
        OptKind::Oneof => match msg_mut(f, &t[..n.saturating_sub(2)])
            .and_then(|m| m.oneof_decl.get_mut(last(1)))
        {
            Some(o) => merge(&mut o.options, b),
            None => Ok(false),
        },
        OptKind::ExtensionRange => match msg_mut(f, &t[..n.saturating_sub(2)])
            .and_then(|m| m.extension_range.get_mut(last(1)))
        {
            Some(r) => merge(&mut r.options, b),
            None => Ok(false),
        },
        OptKind::Enum => match enum_mut(f, t) {
            Some(e) => merge(&mut e.options, b),
            None => Ok(false),
        },
        OptKind::EnumValue => {
            match enum_mut(f, &t[..n.saturating_sub(2)]).and_then(|e| e.value.get_mut(last(1))) {
                Some(v) => merge(&mut v.options, b),
                None => Ok(false),
            }
        }
        OptKind::Service => match f.service.get_mut(last(1)) {
            Some(s) if n == 2 => merge(&mut s.options, b),
            _ => Ok(false),
        },
        OptKind::Method => match f
            .service
            .get_mut(t.get(1).copied().unwrap_or(-1) as usize)
            .and_then(|s| s.method.get_mut(last(1)))
        {
            Some(m) if n == 4 => merge(&mut m.options, b),
            _ => Ok(false),
        },
    }
}

/// In editions, a map field's features also apply to its entry's key and
/// value fields (protoc copies them there).
pub(super) fn copy_map_features(m: &mut DescriptorProto) {
    for n in m.nested_type.iter_mut() {
        copy_map_features(n);
    }
    let copies: Vec<(String, FeatureSet)> = m
        .field
        .iter()
        .filter(|f| f.label == Some(label::REPEATED))
        .filter_map(|f| {
            let fs = f.options.as_ref()?.features.clone()?;
            let short = f.type_name.as_deref()?.rsplit('.').next()?.to_string();
            Some((short, fs))
        })
        .collect();
    for (short, fs) in copies {
        let entry = m.nested_type.iter_mut().find(|n| {
            n.name.as_deref() == Some(short.as_str())
                && n.options.as_ref().and_then(|o| o.map_entry) == Some(true)
        });
        if let Some(entry) = entry {
            for f in entry.field.iter_mut() {
                f.options.get_or_insert_with(FieldOptions::default).features = Some(fs.clone());
            }
        }
    }
}
