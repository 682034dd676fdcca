//! What every stage of a compilation shares: the [`Pool`] of parsed files
//! with their symbols, and the helpers the checking stages use on a file
//! (errors at a descriptor path, every element of a file with its path,
//! a field's effective presence).

use std::collections::{HashMap, HashSet};

use crate::proto::compiler::ast::{pp, ParsedFile};
use crate::proto::compiler::symbols::{pos_of, Symbols};
use crate::proto::descriptor::*;
use crate::proto::error::{ProtoError, ProtoErrorKind};

/// Every extension of a pool by (extendee full name, number): the file that
/// declares it and its path there (built once per compilation by
/// [`all_extensions`](crate::proto::compiler::options::all_extensions)).
pub type Extensions = HashMap<(String, i32), (usize, Vec<i32>)>;

/// The parsed files of one compilation, with their symbols.
pub struct Pool {
    /// Files in load order (each after its imports).
    pub files: Vec<ParsedFile>,
    /// File name to index in `files`.
    pub by_name: HashMap<String, usize>,
    /// Every defined name.
    pub symbols: Symbols,
}

impl Pool {
    /// The file names, by index.
    pub fn names(&self) -> Vec<String> {
        self.files
            .iter()
            .map(|f| f.file.name.clone().unwrap_or_default())
            .collect()
    }

    /// Indexes of the files `fi` may use names from: itself, its imports,
    /// and what those re-export with `import public`, transitively.
    pub fn visible(&self, fi: usize) -> HashSet<usize> {
        self.visible_from(fi, false)
    }

    /// What option names of `fi` may use: [`Pool::visible`] plus the
    /// `import option` files (and what they re-export).
    pub fn visible_for_options(&self, fi: usize) -> HashSet<usize> {
        self.visible_from(fi, true)
    }

    fn visible_from(&self, fi: usize, with_option_imports: bool) -> HashSet<usize> {
        let mut out = HashSet::new();
        out.insert(fi);
        let f = &self.files[fi].file;
        let mut stack: Vec<usize> = f
            .dependency
            .iter()
            .chain(f.option_dependency.iter().filter(|_| with_option_imports))
            .filter_map(|n| self.by_name.get(n).copied())
            .collect();
        while let Some(d) = stack.pop() {
            if out.insert(d) {
                let f = &self.files[d].file;
                for &p in &f.public_dependency {
                    if let Some(name) = f.dependency.get(p as usize) {
                        if let Some(&i) = self.by_name.get(name) {
                            stack.push(i);
                        }
                    }
                }
            }
        }
        out
    }
}

pub(crate) fn err(
    kind: ProtoErrorKind,
    msg: impl Into<String>,
    pf: &ParsedFile,
    path: &[i32],
) -> ProtoError {
    ProtoError::new(kind, msg, pos_of(pf, path))
}

/// Every element of a file, with its path.
#[derive(Default)]
pub(crate) struct Parts<'a> {
    pub(crate) messages: Vec<(Vec<i32>, &'a DescriptorProto)>,
    pub(crate) enums: Vec<(Vec<i32>, &'a EnumDescriptorProto)>,
    pub(crate) exts: Vec<(Vec<i32>, &'a FieldDescriptorProto)>,
}

pub(crate) fn parts(f: &FileDescriptorProto) -> Parts<'_> {
    let mut out = Parts::default();
    for (i, e) in f.enum_type.iter().enumerate() {
        out.enums.push((vec![5, i as i32], e));
    }
    for (i, x) in f.extension.iter().enumerate() {
        out.exts.push((vec![7, i as i32], x));
    }
    let mut stack: Vec<(Vec<i32>, &DescriptorProto)> = f
        .message_type
        .iter()
        .enumerate()
        .map(|(i, m)| (vec![4, i as i32], m))
        .collect();
    while let Some((p, m)) = stack.pop() {
        for (i, e) in m.enum_type.iter().enumerate() {
            out.enums.push((pp(&p, &[4, i as i32]), e));
        }
        for (i, x) in m.extension.iter().enumerate() {
            out.exts.push((pp(&p, &[6, i as i32]), x));
        }
        for (i, n) in m.nested_type.iter().enumerate() {
            stack.push((pp(&p, &[3, i as i32]), n));
        }
        out.messages.push((p, m));
    }
    out.messages.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// The effective `field_presence` of a field in an editions file.
pub(crate) fn presence(pf: &ParsedFile, x: &FieldDescriptorProto) -> i32 {
    let field = x
        .options
        .as_ref()
        .and_then(|o| o.features.as_ref())
        .and_then(|f| f.field_presence);
    let file = pf
        .file
        .options
        .as_ref()
        .and_then(|o| o.features.as_ref())
        .and_then(|f| f.field_presence);
    field.or(file).unwrap_or(1)
}
