//! Option interpretation, the way protoc does it: each option statement is
//! encoded as protobuf bytes of the options message (`FieldOptions`, ...)
//! using the field types that descriptor.proto and custom extensions
//! declare, then merged into the element's options struct. Fields the struct
//! knows (`packed`, `features.field_presence`, ...) land in their place;
//! custom options stay as unknown-field bytes, in source order, as in
//! protoc's output. Aggregate values `{ ... }` are text format, encoded with
//! their fields in number order (as a serialized message has them).
//!
//! The rooms: this file holds the interpreter's state (`Interp`) and the
//! driver (`interpret_file`, `all_extensions`); `lookup` finds what an
//! option names, `checks` makes protoc's edition and feature checks,
//! `encode` encodes one statement, `scalar` and `text` its values (plain
//! and aggregate), `apply` merges the bytes into an options struct, and
//! `canonical` puts them in protoc's order.

use std::collections::{HashMap, HashSet};

mod apply;
mod canonical;
mod checks;
mod encode;
mod lookup;
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
