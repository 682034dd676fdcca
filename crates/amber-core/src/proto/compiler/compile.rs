//! From file names to a [`FileDescriptorSet`]: load each file and its
//! imports through a [`Loader`] (the bundled well-known types are the last
//! resort), parse them, build the symbol table, resolve names, interpret
//! options, check the rules, and emit the files dependencies first, as
//! `protoc --include_imports --descriptor_set_out` does.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use crate::proto::compiler::ast::ParsedFile;
use crate::proto::compiler::parser::parse;
use crate::proto::compiler::pool::Pool;
use crate::proto::compiler::symbols::Symbols;
use crate::proto::compiler::{checks, options, resolve, wkt};
use crate::proto::descriptor::FileDescriptorSet;
use crate::proto::error::{Pos, ProtoError, ProtoErrorKind};

/// Gives the text of a file by its import path (`foo/bar.proto`), or
/// `Ok(None)` when it has no such file.
pub trait Loader {
    /// The file's bytes.
    fn load(&mut self, path: &str) -> Result<Option<Vec<u8>>, String>;

    /// Where this loader looks for files (directories, for a
    /// [`DirLoader`]), named when a file to compile is not found; `None`
    /// when it has nothing to say.
    fn searched(&self) -> Option<String> {
        None
    }
}

impl<F: FnMut(&str) -> Option<Vec<u8>>> Loader for F {
    fn load(&mut self, path: &str) -> Result<Option<Vec<u8>>, String> {
        Ok(self(path))
    }
}

/// Loads files from directories, the first that has the file winning (like
/// protoc's `-I`).
#[derive(Debug, Clone, Default)]
pub struct DirLoader {
    /// The import search path.
    pub include: Vec<PathBuf>,
}

impl Loader for DirLoader {
    fn load(&mut self, path: &str) -> Result<Option<Vec<u8>>, String> {
        for dir in &self.include {
            let p = dir.join(path);
            match std::fs::read(&p) {
                Ok(b) => return Ok(Some(b)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(format!("{}: {e}", p.display())),
            }
        }
        Ok(None)
    }

    fn searched(&self) -> Option<String> {
        let dirs: Vec<String> = self
            .include
            .iter()
            .map(|d| format!("\"{}\"", d.display()))
            .collect();
        Some(if dirs.is_empty() {
            "no include directory".into()
        } else {
            dirs.join(", ")
        })
    }
}

impl Pool {
    fn deps(&self, fi: usize) -> Vec<usize> {
        let f = &self.files[fi].file;
        f.dependency
            .iter()
            .chain(f.option_dependency.iter())
            .filter_map(|n| self.by_name.get(n).copied())
            .collect()
    }
}

struct Loading<'a> {
    loader: &'a mut dyn Loader,
    files: Vec<ParsedFile>,
    by_name: HashMap<String, usize>,
    /// Files being loaded, each with the position of the import it is
    /// following.
    stack: Vec<(String, Pos)>,
    /// The names in `stack`, with their index there (a cycle is found in
    /// constant time, so long import chains load in linear time).
    on_stack: HashMap<String, usize>,
}

impl Loading<'_> {
    fn text(&mut self, name: &str) -> Result<Option<Vec<u8>>, String> {
        if let Some(b) = self.loader.load(name)? {
            return Ok(Some(b));
        }
        Ok(wkt::source(name).map(|s| s.as_bytes().to_vec()))
    }

    /// Load `name` and (first) everything it imports; `from` is the import
    /// statement that asked for it.
    fn load(&mut self, name: &str, from: Option<(&str, Pos)>) -> Result<usize, ProtoError> {
        if let Some(&i) = self.by_name.get(name) {
            return Ok(i);
        }
        let at = |kind, msg: String| match from {
            Some((f, pos)) => ProtoError::new(kind, msg, pos).in_file(f),
            None => ProtoError::new(kind, msg, Pos::default()).in_file(name),
        };
        if let Some(&k) = self.on_stack.get(name) {
            let mut cycle: Vec<&str> = self.stack[k..].iter().map(|(n, _)| n.as_str()).collect();
            cycle.push(name);
            // Reported where the cycle starts, as protoc does.
            return Err(ProtoError::new(
                ProtoErrorKind::ImportCycle,
                format!("File recursively imports itself: {}", cycle.join(" -> ")),
                self.stack[k].1,
            )
            .in_file(name));
        }
        // A file named on the command line (no import asked for it) that is
        // not there: protoc's words.
        // protoc's words, then (when the loader can say) where it looked.
        let searched = self.loader.searched();
        let missing_root = |looked: bool| {
            let msg = match searched.as_deref().filter(|_| looked) {
                Some(dirs) => format!(
                    "File not found. Searched: {dirs}, then the bundled google/protobuf files."
                ),
                None => "File not found.".to_string(),
            };
            Err(ProtoError::new(ProtoErrorKind::ImportNotFound, msg, Pos::default()).in_file(name))
        };
        if let Some(why) = bad_path(name) {
            if from.is_none() {
                return missing_root(false);
            }
            return Err(at(
                ProtoErrorKind::ImportNotFound,
                format!("Import \"{name}\" is not a valid path: {why}"),
            ));
        }
        let text = match self.text(name) {
            Ok(Some(t)) => t,
            Ok(None) if from.is_none() => return missing_root(true),
            Ok(None) => {
                return Err(at(
                    ProtoErrorKind::ImportNotFound,
                    format!("Import \"{name}\" was not found."),
                ))
            }
            Err(e) => {
                return Err(at(
                    ProtoErrorKind::ImportNotFound,
                    format!("Import \"{name}\" could not be read: {e}"),
                ))
            }
        };
        let pf = parse(name, &text)?;
        self.on_stack.insert(name.to_string(), self.stack.len());
        self.stack.push((name.to_string(), Pos::default()));
        let imports: Vec<(String, Pos)> = pf
            .file
            .dependency
            .iter()
            .cloned()
            .zip(pf.import_pos.iter().copied())
            .chain(
                pf.file
                    .option_dependency
                    .iter()
                    .cloned()
                    .zip(pf.option_import_pos.iter().copied()),
            )
            .collect();
        let mut seen = HashSet::new();
        for (dep, pos) in &imports {
            if !seen.insert(dep.clone()) {
                return Err(ProtoError::new(
                    ProtoErrorKind::Duplicate,
                    format!("Import \"{dep}\" was listed twice."),
                    *pos,
                )
                .in_file(name));
            }
            if let Some(top) = self.stack.last_mut() {
                top.1 = *pos;
            }
            // Import chains recurse: on a stack that grows as needed.
            let depth = self.stack.len();
            crate::bytes::stack::descend(
                depth,
                || self.load(dep, Some((name, *pos))).map(|_| ()),
                || {
                    ProtoError::new(
                        ProtoErrorKind::TooDeep,
                        "out of stack in the import chain",
                        *pos,
                    )
                    .in_file(name)
                },
            )?;
        }
        self.stack.pop();
        self.on_stack.remove(name);
        let i = self.files.len();
        self.files.push(pf);
        self.by_name.insert(name.to_string(), i);
        Ok(i)
    }
}

/// Why an import path is refused, as protoc refuses it: file names are
/// relative, `/`-separated paths without `.` or `..` parts (so a loader that
/// reads from disk never leaves its directories).
fn bad_path(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        return Some("it is empty");
    }
    if name.starts_with('/') {
        return Some("it is absolute");
    }
    if name.contains('\\') || name.contains('\0') {
        return Some("backslashes and NUL are not allowed");
    }
    if name
        .split('/')
        .any(|p| p.is_empty() || p == "." || p == "..")
    {
        return Some("empty, \".\" and \"..\" parts are not allowed");
    }
    None
}

/// The name under which the bundled descriptor.proto is loaded for option
/// interpretation.
pub const DESCRIPTOR_PROTO: &str = "google/protobuf/descriptor.proto";

/// Compile `roots` (import paths, loaded through `loader`, then from the
/// bundled well-known types) into descriptors equal to protoc's. With
/// `include_imports`, every imported file comes first in the set, as with
/// `protoc --include_imports`; without, only the roots.
pub fn compile(
    roots: &[&str],
    loader: &mut dyn Loader,
    include_imports: bool,
) -> Result<FileDescriptorSet, ProtoError> {
    crate::bytes::stack::enter(
        || compile_inner(roots, loader, include_imports),
        || {
            ProtoError::new(
                ProtoErrorKind::TooDeep,
                "out of stack while compiling",
                Pos::default(),
            )
        },
    )
}

fn compile_inner(
    roots: &[&str],
    loader: &mut dyn Loader,
    include_imports: bool,
) -> Result<FileDescriptorSet, ProtoError> {
    let mut ld = Loading {
        loader,
        files: Vec::new(),
        by_name: HashMap::new(),
        stack: Vec::new(),
        on_stack: HashMap::new(),
    };
    let mut root_idx = Vec::new();
    for r in roots {
        root_idx.push(ld.load(r, None)?);
    }
    // Options are read through descriptor.proto's own types: when no file
    // imports it, the bundled one joins the pool (not asking the loader, as
    // protoc uses its built-in copy).
    if !ld.by_name.contains_key(DESCRIPTOR_PROTO) {
        let text = wkt::source(DESCRIPTOR_PROTO).unwrap_or_default();
        let pf = parse(DESCRIPTOR_PROTO, text.as_bytes())?;
        ld.by_name
            .insert(DESCRIPTOR_PROTO.to_string(), ld.files.len());
        ld.files.push(pf);
    }
    let mut pool = Pool {
        files: ld.files,
        by_name: ld.by_name,
        symbols: Symbols::default(),
    };
    let names = pool.names();
    for (i, pf) in pool.files.iter().enumerate() {
        pool.symbols
            .add_file(i, pf, &names)
            .map_err(|e| e.in_file(&names[i]))?;
    }
    for (i, name) in names.iter().enumerate() {
        resolve::resolve_file(&mut pool, i, &names).map_err(|e| e.in_file(name))?;
    }
    // descriptor.proto's own options first: the others are read through it.
    let d = pool.by_name[DESCRIPTOR_PROTO];
    let order: Vec<usize> = std::iter::once(d)
        .chain((0..names.len()).filter(|&i| i != d))
        .collect();
    let exts = options::all_extensions(&pool);
    for i in order {
        let name = &names[i];
        options::interpret_file(&mut pool, i, &exts).map_err(|e| e.in_file(name))?;
        checks::check_after_options(&pool, i, &exts).map_err(|e| e.in_file(name))?;
    }
    // Emit: each root's imports first (depth-first, in import order).
    let mut order = Vec::new();
    let mut done = HashSet::new();
    for &r in &root_idx {
        if include_imports {
            emit(&pool, r, &mut done, &mut order);
        } else if done.insert(r) {
            order.push(r);
        }
    }
    let mut set = FileDescriptorSet::default();
    for i in order {
        set.file.push(pool.files[i].file.clone());
    }
    Ok(set)
}

/// Append `i` and the files it imports (transitively, each once) to
/// `order`, dependencies first, in import order. Iterative: import chains
/// can be long.
fn emit(pool: &Pool, i: usize, done: &mut HashSet<usize>, order: &mut Vec<usize>) {
    if !done.insert(i) {
        return;
    }
    // (file, its dependencies, how many of them are handled)
    let mut stack: Vec<(usize, Vec<usize>, usize)> = vec![(i, pool.deps(i), 0)];
    while let Some(top) = stack.last_mut() {
        if top.2 < top.1.len() {
            let d = top.1[top.2];
            top.2 += 1;
            if done.insert(d) {
                stack.push((d, pool.deps(d), 0));
            }
        } else {
            order.push(top.0);
            stack.pop();
        }
    }
}
