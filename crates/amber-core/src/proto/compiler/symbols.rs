//! The symbol table of a set of files, and protoc's name lookup: relative
//! names are tried from the innermost scope outward, a leading `.` makes a
//! name fully qualified, and only files the current file imports (directly,
//! or through `import public`) are visible.

use std::collections::{HashMap, HashSet};

use crate::proto::compiler::ast::{join, pp, ParsedFile};
use crate::proto::descriptor::*;
use crate::proto::error::{Pos, ProtoError, ProtoErrorKind};

/// The longest full name protoc accepts (its names have 16-bit lengths).
pub const MAX_NAME_LEN: usize = u16::MAX as usize;

/// What a name denotes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SymKind {
    /// A package (or a prefix of one).
    Package,
    /// A message type.
    Message,
    /// An enum type.
    Enum,
    /// An enum value (in its enum's parent scope).
    EnumValue,
    /// A field of a message.
    Field,
    /// An extension.
    Extension,
    /// A oneof.
    Oneof,
    /// A service.
    Service,
    /// A method.
    Method,
}

impl SymKind {
    fn is_type(self) -> bool {
        matches!(self, SymKind::Message | SymKind::Enum)
    }

    fn is_aggregate(self) -> bool {
        matches!(
            self,
            SymKind::Package | SymKind::Message | SymKind::Enum | SymKind::Service
        )
    }
}

/// A defined name: its kind, file (index in the pool) and element path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sym {
    /// What it is.
    pub kind: SymKind,
    /// Index of the defining file in the pool.
    pub file: usize,
    /// Path of the element in its file.
    pub path: Vec<i32>,
}

/// Every name defined by the files of a pool.
#[derive(Debug, Default)]
pub struct Symbols {
    map: HashMap<String, Sym>,
}

impl Symbols {
    /// The symbol with this full name (no leading dot).
    pub fn get(&self, full: &str) -> Option<&Sym> {
        self.map.get(full)
    }

    fn add(
        &mut self,
        full: String,
        sym: Sym,
        pf: &ParsedFile,
        files: &[String],
    ) -> Result<(), ProtoError> {
        let pos = pf.locs.get(&sym.path).copied().unwrap_or_default();
        // protoc keeps names in 16-bit lengths.
        if full.len() > MAX_NAME_LEN && sym.kind != SymKind::Package {
            return Err(ProtoError::new(
                ProtoErrorKind::Invalid,
                "Name too long.",
                pos,
            ));
        }
        if let Some(old) = self.map.get(&full) {
            if old.kind == SymKind::Package && sym.kind == SymKind::Package {
                return Ok(());
            }
            let (scope, short) = match full.rfind('.') {
                Some(i) => (&full[..i], &full[i + 1..]),
                None => ("", full.as_str()),
            };
            let msg = if old.file != sym.file {
                format!(
                    "\"{full}\" is already defined in file \"{}\".",
                    files.get(old.file).map(String::as_str).unwrap_or("?")
                )
            } else if scope.is_empty() {
                format!("\"{short}\" is already defined.")
            } else {
                format!("\"{short}\" is already defined in \"{scope}\".")
            };
            let mut msg = msg;
            if sym.kind == SymKind::EnumValue {
                msg.push_str(" Note that enum values use C++ scoping rules, meaning that enum values are siblings of their type, not children of it.");
            }
            return Err(ProtoError::new(ProtoErrorKind::Duplicate, msg, pos));
        }
        self.map.insert(full, sym);
        Ok(())
    }

    /// Add every name file `fi` defines. `files` are the pool's file names.
    pub fn add_file(
        &mut self,
        fi: usize,
        pf: &ParsedFile,
        files: &[String],
    ) -> Result<(), ProtoError> {
        let f = &pf.file;
        let pkg = f.package.clone().unwrap_or_default();
        if !pkg.is_empty() {
            let mut acc = String::new();
            for part in pkg.split('.') {
                acc = join(&acc, part);
                let sym = Sym {
                    kind: SymKind::Package,
                    file: fi,
                    path: vec![2],
                };
                if let Some(old) = self.map.get(&acc) {
                    if old.kind != SymKind::Package {
                        let pos = pf.locs.get(&vec![2]).copied().unwrap_or_default();
                        return Err(ProtoError::new(
                            ProtoErrorKind::Duplicate,
                            format!("\"{acc}\" is already defined (as something other than a package) in file \"{}\".", files.get(old.file).map(String::as_str).unwrap_or("?")),
                            pos,
                        ));
                    }
                    continue;
                }
                self.add(acc.clone(), sym, pf, files)?;
            }
        }
        for (i, m) in f.message_type.iter().enumerate() {
            self.add_message(fi, pf, files, &pkg, m, &[4, i as i32])?;
        }
        for (i, e) in f.enum_type.iter().enumerate() {
            self.add_enum(fi, pf, files, &pkg, e, &[5, i as i32])?;
        }
        for (i, x) in f.extension.iter().enumerate() {
            let full = join(&pkg, x.name.as_deref().unwrap_or(""));
            self.add(full, sym(SymKind::Extension, fi, &[7, i as i32]), pf, files)?;
        }
        for (i, s) in f.service.iter().enumerate() {
            let full = join(&pkg, s.name.as_deref().unwrap_or(""));
            let spath = [6, i as i32];
            self.add(full.clone(), sym(SymKind::Service, fi, &spath), pf, files)?;
            for (j, m) in s.method.iter().enumerate() {
                let mfull = join(&full, m.name.as_deref().unwrap_or(""));
                self.add(
                    mfull,
                    sym(SymKind::Method, fi, &pp(&spath, &[2, j as i32])),
                    pf,
                    files,
                )?;
            }
        }
        Ok(())
    }

    fn add_message(
        &mut self,
        fi: usize,
        pf: &ParsedFile,
        files: &[String],
        scope: &str,
        m: &DescriptorProto,
        path: &[i32],
    ) -> Result<(), ProtoError> {
        let full = join(scope, m.name.as_deref().unwrap_or(""));
        self.add(full.clone(), sym(SymKind::Message, fi, path), pf, files)?;
        for (i, x) in m.field.iter().enumerate() {
            let n = join(&full, x.name.as_deref().unwrap_or(""));
            self.add(
                n,
                sym(SymKind::Field, fi, &pp(path, &[2, i as i32])),
                pf,
                files,
            )?;
        }
        for (i, o) in m.oneof_decl.iter().enumerate() {
            let n = join(&full, o.name.as_deref().unwrap_or(""));
            self.add(
                n,
                sym(SymKind::Oneof, fi, &pp(path, &[8, i as i32])),
                pf,
                files,
            )?;
        }
        for (i, n) in m.nested_type.iter().enumerate() {
            self.add_message(fi, pf, files, &full, n, &pp(path, &[3, i as i32]))?;
        }
        for (i, e) in m.enum_type.iter().enumerate() {
            self.add_enum(fi, pf, files, &full, e, &pp(path, &[4, i as i32]))?;
        }
        for (i, x) in m.extension.iter().enumerate() {
            let n = join(&full, x.name.as_deref().unwrap_or(""));
            self.add(
                n,
                sym(SymKind::Extension, fi, &pp(path, &[6, i as i32])),
                pf,
                files,
            )?;
        }
        Ok(())
    }

    fn add_enum(
        &mut self,
        fi: usize,
        pf: &ParsedFile,
        files: &[String],
        scope: &str,
        e: &EnumDescriptorProto,
        path: &[i32],
    ) -> Result<(), ProtoError> {
        let full = join(scope, e.name.as_deref().unwrap_or(""));
        self.add(full, sym(SymKind::Enum, fi, path), pf, files)?;
        for (i, v) in e.value.iter().enumerate() {
            let n = join(scope, v.name.as_deref().unwrap_or(""));
            self.add(
                n,
                sym(SymKind::EnumValue, fi, &pp(path, &[2, i as i32])),
                pf,
                files,
            )?;
        }
        Ok(())
    }

    /// Look `name` up as protoc does from the element whose full name is
    /// `from` (a field's own full name, say). `visible` is the set of files
    /// the current file may use. `types_only` skips non-type symbols that
    /// match the whole name. Returns the full name (no leading dot).
    pub fn lookup(
        &self,
        name: &str,
        from: &str,
        visible: &HashSet<usize>,
        types_only: bool,
    ) -> Result<(String, &Sym), LookupError> {
        let mut hidden: Option<String> = None;
        let mut find = |full: &str| -> Option<&Sym> {
            let s = self.map.get(full)?;
            if s.kind == SymKind::Package || visible.contains(&s.file) {
                Some(s)
            } else {
                if hidden.is_none() {
                    hidden = Some(full.to_string());
                }
                None
            }
        };
        if let Some(abs) = name.strip_prefix('.') {
            return match find(abs) {
                Some(s) => Ok((abs.to_string(), s)),
                None => Err(LookupError {
                    hidden,
                    resolved_to: None,
                }),
            };
        }
        let first = name.split('.').next().unwrap_or(name);
        let mut scope = from.to_string();
        loop {
            match scope.rfind('.') {
                Some(i) => scope.truncate(i),
                None => {
                    return match find(name) {
                        Some(s) => Ok((name.to_string(), s)),
                        None => Err(LookupError {
                            hidden,
                            resolved_to: None,
                        }),
                    }
                }
            }
            let cand = join(&scope, first);
            if let Some(s) = find(&cand) {
                if first.len() < name.len() {
                    if s.kind.is_aggregate() {
                        let full = join(&scope, name);
                        return match find(&full) {
                            Some(s) => Ok((full, s)),
                            None => Err(LookupError {
                                hidden,
                                resolved_to: Some(full),
                            }),
                        };
                    }
                } else if !types_only || s.kind.is_type() {
                    return Ok((cand, s));
                }
            }
        }
    }
}

/// Why a lookup failed: `hidden` names a matching symbol in a file that is
/// not imported.
#[derive(Debug)]
pub struct LookupError {
    /// A symbol of that name in a file the current one does not import.
    pub hidden: Option<String>,
    /// For a dotted name whose first part was found in an inner scope: the
    /// full name it was taken to mean (which does not exist).
    pub resolved_to: Option<String>,
}

fn sym(kind: SymKind, file: usize, path: &[i32]) -> Sym {
    Sym {
        kind,
        file,
        path: path.to_vec(),
    }
}

/// The message at `path` in `f`.
pub fn message_at<'a>(f: &'a FileDescriptorProto, path: &[i32]) -> Option<&'a DescriptorProto> {
    let (&a, rest) = path.split_first()?;
    let (&i, mut rest) = rest.split_first()?;
    if a != 4 {
        return None;
    }
    let mut m = f.message_type.get(i as usize)?;
    while !rest.is_empty() {
        if rest.len() < 2 || rest[0] != 3 {
            return None;
        }
        m = m.nested_type.get(rest[1] as usize)?;
        rest = &rest[2..];
    }
    Some(m)
}

/// The enum at `path` in `f`.
pub fn enum_at<'a>(f: &'a FileDescriptorProto, path: &[i32]) -> Option<&'a EnumDescriptorProto> {
    let n = path.len();
    if n < 2 || path[n - 2] != 4 && !(n == 2 && path[0] == 5) {
        return None;
    }
    if n == 2 {
        return f.enum_type.get(path[1] as usize);
    }
    message_at(f, &path[..n - 2])?
        .enum_type
        .get(path[n - 1] as usize)
}

/// The field or extension at `path` in `f`.
pub fn field_at<'a>(f: &'a FileDescriptorProto, path: &[i32]) -> Option<&'a FieldDescriptorProto> {
    let n = path.len();
    if n == 2 && path[0] == 7 {
        return f.extension.get(path[1] as usize);
    }
    if n < 4 {
        return None;
    }
    let m = message_at(f, &path[..n - 2])?;
    match path[n - 2] {
        2 => m.field.get(path[n - 1] as usize),
        6 => m.extension.get(path[n - 1] as usize),
        _ => None,
    }
}

/// Position of `path` in a parsed file, or of its closest recorded parent.
pub fn pos_of(pf: &ParsedFile, path: &[i32]) -> Pos {
    let mut p = path.to_vec();
    loop {
        if let Some(pos) = pf.locs.get(&p) {
            return *pos;
        }
        if p.pop().is_none() {
            return Pos::default();
        }
    }
}
