//! Name resolution and the checks protoc makes on a file: type names become
//! fully qualified (`.pkg.Msg`) with their type set to MESSAGE or ENUM,
//! extendees and method types resolve, every field gets its JSON name,
//! defaults are checked and written as protoc writes them, and numbers,
//! ranges and reserved names are checked.

use std::collections::{HashMap, HashSet};

use crate::proto::compiler::ast::{join, pp, Lit, ParsedFile, Scalar};
use crate::proto::compiler::parser::MAX_FIELD_NUMBER;
use crate::proto::compiler::pool::Pool;
use crate::proto::compiler::symbols::{enum_at, message_at, pos_of, Sym, SymKind, Symbols};
use crate::proto::descriptor::*;
use crate::proto::error::{Pos, ProtoError, ProtoErrorKind};
use crate::proto::names::{c_escape, format_double, format_float, json_name};

fn err(kind: ProtoErrorKind, msg: impl Into<String>, pos: Pos) -> ProtoError {
    ProtoError::new(kind, msg, pos)
}

struct Ctx<'a> {
    pf: &'a ParsedFile,
    /// Index of this file in the pool, and all the pool's files (this one's
    /// descriptor is taken out while it is resolved).
    this: usize,
    files: &'a [ParsedFile],
    symbols: &'a Symbols,
    visible: HashSet<usize>,
    /// The pool's file names, by index.
    names: &'a [String],
    defaults: HashMap<Vec<i32>, Scalar>,
    this_file: String,
}

impl Ctx<'_> {
    fn pos(&self, path: &[i32]) -> Pos {
        pos_of(self.pf, path)
    }

    /// Edition 2024 symbol visibility: why a message or enum of another
    /// file may not be used here (`local`, or local by the file's
    /// `default_symbol_visibility`: EXPORT_TOP_LEVEL by default, which
    /// keeps nested types local; LOCAL_ALL and STRICT keep all local).
    fn not_exported(&self, sym: &Sym) -> Option<String> {
        if sym.file == self.this || !matches!(sym.kind, SymKind::Message | SymKind::Enum) {
            return None;
        }
        let other = self.files.get(sym.file)?;
        if other.file.edition.unwrap_or(0) < crate::proto::descriptor::edition::E2024 {
            return None;
        }
        let explicit = if sym.kind == SymKind::Message {
            message_at(&other.file, &sym.path)?.visibility
        } else {
            enum_at(&other.file, &sym.path)?.visibility
        };
        match explicit {
            Some(2) => return None,
            Some(1) => return Some("It is explicitly marked 'local'".into()),
            _ => {}
        }
        let default = other
            .options
            .iter()
            .filter(|o| {
                o.target.is_empty()
                    && o.name.len() == 2
                    && o.name[0].name == "features"
                    && o.name[1].name == "default_symbol_visibility"
            })
            .find_map(|o| match &o.value {
                crate::proto::compiler::ast::OptValue::Scalar(Scalar {
                    lit: Lit::Ident(v),
                    ..
                }) => Some(v.clone()),
                _ => None,
            })
            .unwrap_or_else(|| "EXPORT_TOP_LEVEL".into());
        let local = match default.as_str() {
            "EXPORT_ALL" => false,
            "EXPORT_TOP_LEVEL" => sym.path.len() > 2,
            _ => true,
        };
        local.then(|| {
            format!("It defaulted to local from file-level 'option features.default_symbol_visibility = '{default}';")
        })
    }

    /// Resolve `name` from `from`; `want` says which kinds are acceptable.
    fn resolve(
        &self,
        name: &str,
        from: &str,
        pos: Pos,
        want: &[SymKind],
        what: &str,
    ) -> Result<(String, Sym), ProtoError> {
        // Field types skip non-type names on the way out (protoc's
        // LOOKUP_TYPES); extendees and method types take the first match.
        let types_only = want.contains(&SymKind::Enum);
        match self.symbols.lookup(name, from, &self.visible, types_only) {
            Ok((full, sym)) => {
                if want.contains(&sym.kind) {
                    if let Some(why) = self.not_exported(sym) {
                        let file = self.names.get(sym.file).cloned().unwrap_or_default();
                        let role = if what == "an extendee" {
                            "target of extend"
                        } else {
                            ""
                        };
                        return Err(err(
                            ProtoErrorKind::Undefined,
                            format!("Symbol \"{full}\", defined in \"{file}\" {role} is not visible from \"{}\". {why} and cannot be accessed outside its own file", self.this_file),
                            pos,
                        ));
                    }
                    Ok((full, sym.clone()))
                } else {
                    Err(err(
                        ProtoErrorKind::Undefined,
                        format!(
                            "\"{name}\" is not {}.",
                            if what == "an extendee" {
                                "a message type"
                            } else {
                                what
                            }
                        ),
                        pos,
                    ))
                }
            }
            Err(e) => {
                let msg = match e.hidden.and_then(|h| {
                    let s = self.symbols.get(&h)?;
                    Some((h.clone(), self.names.get(s.file)?.clone()))
                }) {
                    Some((h, file)) => format!(
                        "\"{h}\" seems to be defined in \"{file}\", which is not imported by \"{}\". To use it here, please add the necessary import.",
                        self.this_file
                    ),
                    None => match e.resolved_to {
                        Some(r) => format!(
                            "\"{name}\" is resolved to \"{r}\", which is not defined. The innermost scope is searched first in name resolution. Consider using a leading '.' (i.e., \".{name}\") to start from the outermost scope."
                        ),
                        None => format!("\"{name}\" is not defined."),
                    },
                };
                Err(err(ProtoErrorKind::Undefined, msg, pos))
            }
        }
    }
}

/// Resolve names, fill JSON names and defaults, and check numbers in file
/// `fi` of the pool; `names` are the pool's file names, by index (taken
/// once for the whole pool, so that resolving stays linear in its size).
pub fn resolve_file(pool: &mut Pool, fi: usize, names: &[String]) -> Result<(), ProtoError> {
    let visible = pool.visible(fi);
    let mut f = std::mem::take(&mut pool.files[fi].file);
    let r = {
        let pf = &pool.files[fi];
        let ctx = Ctx {
            pf,
            this: fi,
            files: &pool.files,
            symbols: &pool.symbols,
            visible,
            names,
            defaults: pf
                .defaults
                .iter()
                .map(|d| (d.target.clone(), d.value.clone()))
                .collect(),
            this_file: f.name.clone().unwrap_or_default(),
        };
        resolve_parts(&ctx, &mut f)
    };
    pool.files[fi].file = f;
    r
}

fn resolve_parts(ctx: &Ctx<'_>, f: &mut FileDescriptorProto) -> Result<(), ProtoError> {
    let pkg = f.package.clone().unwrap_or_default();
    for (i, m) in f.message_type.iter_mut().enumerate() {
        message(ctx, m, &[4, i as i32], &pkg)?;
    }
    for (i, e) in f.enum_type.iter().enumerate() {
        check_enum(ctx, e, &[5, i as i32])?;
    }
    for (i, x) in f.extension.iter_mut().enumerate() {
        field(ctx, x, &[7, i as i32], &pkg)?;
    }
    for (i, s) in f.service.iter_mut().enumerate() {
        let sfull = join(&pkg, s.name.as_deref().unwrap_or(""));
        for (j, m) in s.method.iter_mut().enumerate() {
            let mpath = [6, i as i32, 2, j as i32];
            let mfull = join(&sfull, m.name.as_deref().unwrap_or(""));
            for (num, slot) in [(2, &mut m.input_type), (3, &mut m.output_type)] {
                if let Some(t) = slot.as_ref() {
                    let pos = ctx.pos(&pp(&mpath, &[num]));
                    let (full, _) =
                        ctx.resolve(t, &mfull, pos, &[SymKind::Message], "a message type")?;
                    *slot = Some(format!(".{full}"));
                }
            }
        }
    }
    Ok(())
}

fn message(
    ctx: &Ctx<'_>,
    m: &mut DescriptorProto,
    path: &[i32],
    scope: &str,
) -> Result<(), ProtoError> {
    let full = join(scope, m.name.as_deref().unwrap_or(""));
    for (i, x) in m.field.iter_mut().enumerate() {
        field(ctx, x, &pp(path, &[2, i as i32]), &full)?;
    }
    for (i, x) in m.extension.iter_mut().enumerate() {
        field(ctx, x, &pp(path, &[6, i as i32]), &full)?;
    }
    for (i, n) in m.nested_type.iter_mut().enumerate() {
        message(ctx, n, &pp(path, &[3, i as i32]), &full)?;
    }
    check_numbers(ctx, m, path, &full)?;
    for (i, e) in m.enum_type.iter().enumerate() {
        check_enum(ctx, e, &pp(path, &[4, i as i32]))?;
    }
    if m.options.as_ref().and_then(|o| o.map_entry) == Some(true) {
        if let Some(k) = m.field.first() {
            let why = match k.r#type {
                Some(field_type::FLOAT | field_type::DOUBLE | field_type::BYTES)
                | Some(field_type::MESSAGE | field_type::GROUP) => {
                    Some("Key in map fields cannot be float/double, bytes or message types.")
                }
                Some(field_type::ENUM) => Some("Key in map fields cannot be enum types."),
                _ => None,
            };
            if let Some(why) = why {
                return Err(err(
                    ProtoErrorKind::Invalid,
                    why,
                    ctx.pos(&pp(path, &[2, 0, 6])),
                ));
            }
        }
    }
    Ok(())
}

fn check_enum(ctx: &Ctx<'_>, e: &EnumDescriptorProto, path: &[i32]) -> Result<(), ProtoError> {
    if e.value.is_empty() {
        return Err(err(
            ProtoErrorKind::Invalid,
            format!(
                "Enums must contain at least one value (\"{}\").",
                e.name.as_deref().unwrap_or("")
            ),
            ctx.pos(path),
        ));
    }
    if ctx.pf.proto3 && e.value[0].number != Some(0) {
        return Err(err(
            ProtoErrorKind::Number,
            "The first enum value must be zero for open enums.",
            ctx.pos(&pp(path, &[2, 0, 2])),
        ));
    }
    for (i, v) in e.value.iter().enumerate() {
        let n = v.number.unwrap_or(0);
        let name = v.name.as_deref().unwrap_or("");
        let vpos = ctx.pos(&pp(path, &[2, i as i32]));
        for (j, r) in e.reserved_range.iter().enumerate() {
            if r.start.unwrap_or(0) <= n && n <= r.end.unwrap_or(0) {
                return Err(err(
                    ProtoErrorKind::Number,
                    format!("Enum value \"{name}\" uses reserved number {n}."),
                    ctx.pos(&pp(path, &[4, j as i32])),
                ));
            }
        }
        if e.reserved_name.iter().any(|r| r == name) {
            return Err(err(
                ProtoErrorKind::Number,
                format!("Enum value \"{name}\" is reserved."),
                vpos,
            ));
        }
    }
    for (j, r) in e.reserved_range.iter().enumerate() {
        if r.end < r.start {
            return Err(err(
                ProtoErrorKind::Number,
                "Reserved range end number must be greater than start number.",
                ctx.pos(&pp(path, &[4, j as i32])),
            ));
        }
    }
    reserved_names_once(ctx, &e.reserved_name, "Enum value", path)
}

fn check_numbers(
    ctx: &Ctx<'_>,
    m: &DescriptorProto,
    path: &[i32],
    full: &str,
) -> Result<(), ProtoError> {
    let npos = |i: usize| ctx.pos(&pp(path, &[2, i as i32, 3]));
    let mut used: HashMap<i32, &str> = HashMap::new();
    // Options are not interpreted yet: the parser noted the statement.
    let message_set = ctx.pf.message_set.contains(path);
    for (i, x) in m.field.iter().enumerate() {
        let n = x.number.unwrap_or(0);
        let name = x.name.as_deref().unwrap_or("");
        check_field_number(n, npos(i))?;
        if let Some(other) = used.insert(n, name) {
            return Err(err(
                ProtoErrorKind::Number,
                format!(
                    "Field number {n} has already been used in \"{full}\" by field \"{other}\"."
                ),
                npos(i),
            ));
        }
        for (j, r) in m.reserved_range.iter().enumerate() {
            if r.start.unwrap_or(0) <= n && n < r.end.unwrap_or(0) {
                return Err(err(
                    ProtoErrorKind::Number,
                    format!("Field \"{name}\" uses reserved number {n}."),
                    ctx.pos(&pp(path, &[9, j as i32])),
                ));
            }
        }
        if m.reserved_name.iter().any(|r| r == name) {
            return Err(err(
                ProtoErrorKind::Number,
                format!("Field name \"{name}\" is reserved."),
                ctx.pos(&pp(path, &[2, i as i32])),
            ));
        }
        for (j, r) in m.extension_range.iter().enumerate() {
            if r.start.unwrap_or(0) <= n && n < r.end.unwrap_or(0) {
                return Err(err(
                    ProtoErrorKind::Number,
                    format!(
                        "Extension range {} to {} includes field \"{name}\" ({n}).",
                        r.start.unwrap_or(0),
                        r.end.unwrap_or(0) - 1
                    ),
                    ctx.pos(&pp(path, &[5, j as i32])),
                ));
            }
        }
    }
    let max_end = if message_set {
        i32::MAX
    } else {
        MAX_FIELD_NUMBER + 1
    };
    let mut ranges: Vec<(i32, i32, &str, Pos)> = Vec::new();
    for (i, r) in m.extension_range.iter().enumerate() {
        let (s, e) = (r.start.unwrap_or(0), r.end.unwrap_or(0));
        let pos = ctx.pos(&pp(path, &[5, i as i32]));
        if s <= 0 {
            return Err(err(
                ProtoErrorKind::Number,
                "Extension numbers must be positive integers.",
                pos,
            ));
        }
        if e > max_end {
            return Err(err(
                ProtoErrorKind::Number,
                format!("Extension numbers cannot be greater than {}.", max_end - 1),
                pos,
            ));
        }
        if e <= s {
            return Err(err(
                ProtoErrorKind::Number,
                "Extension range end number must be greater than start number.",
                pos,
            ));
        }
        ranges.push((s, e, "Extension", pos));
    }
    for (j, r) in m.reserved_range.iter().enumerate() {
        let (s, e) = (r.start.unwrap_or(0), r.end.unwrap_or(0));
        let pos = ctx.pos(&pp(path, &[9, j as i32]));
        if s <= 0 {
            return Err(err(
                ProtoErrorKind::Number,
                "Reserved numbers must be positive integers.",
                pos,
            ));
        }
        if e <= s {
            return Err(err(
                ProtoErrorKind::Number,
                "Reserved range end number must be greater than start number.",
                pos,
            ));
        }
        ranges.push((s, e, "Reserved", pos));
    }
    for (a, &(s1, e1, k1, _)) in ranges.iter().enumerate() {
        for &(s2, e2, k2, pos2) in &ranges[..a] {
            if s1 < e2 && s2 < e1 {
                return Err(err(
                    ProtoErrorKind::Number,
                    format!(
                        "{k1} range {s1} to {} overlaps with {} range {s2} to {}.",
                        e1 - 1,
                        k2.to_ascii_lowercase(),
                        e2 - 1
                    ),
                    pos2,
                ));
            }
        }
    }
    reserved_names_once(ctx, &m.reserved_name, "Field name", path)?;
    if ctx.pf.proto3 && !m.extension_range.is_empty() {
        return Err(err(
            ProtoErrorKind::Invalid,
            "Extension ranges are not allowed in proto3.",
            ctx.pos(&pp(path, &[5, 0])),
        ));
    }
    Ok(())
}

/// A name may be reserved once (the error points at the message or enum).
fn reserved_names_once(
    ctx: &Ctx<'_>,
    names: &[String],
    what: &str,
    path: &[i32],
) -> Result<(), ProtoError> {
    let mut seen = HashSet::new();
    for n in names {
        if !seen.insert(n.as_str()) {
            return Err(err(
                ProtoErrorKind::Duplicate,
                format!("{what} \"{n}\" is reserved multiple times."),
                ctx.pos(path),
            ));
        }
    }
    Ok(())
}

fn check_field_number(n: i32, pos: Pos) -> Result<(), ProtoError> {
    if n <= 0 {
        return Err(err(
            ProtoErrorKind::Number,
            "Field numbers must be positive integers.",
            pos,
        ));
    }
    if n > MAX_FIELD_NUMBER {
        return Err(err(
            ProtoErrorKind::Number,
            format!("Field numbers cannot be greater than {MAX_FIELD_NUMBER}."),
            pos,
        ));
    }
    if (19000..=19999).contains(&n) {
        return Err(err(
            ProtoErrorKind::Number,
            "Field numbers 19000 through 19999 are reserved for the protocol buffer library implementation.",
            pos,
        ));
    }
    Ok(())
}

fn field(
    ctx: &Ctx<'_>,
    x: &mut FieldDescriptorProto,
    path: &[i32],
    scope: &str,
) -> Result<(), ProtoError> {
    let name = x.name.clone().unwrap_or_default();
    let full = join(scope, &name);
    if x.json_name.is_none() {
        x.json_name = Some(json_name(&name));
    }
    if let Some(e) = x.extendee.clone() {
        let pos = ctx.pos(&pp(path, &[2]));
        let (efull, _) = ctx.resolve(&e, &full, pos, &[SymKind::Message], "an extendee")?;
        if ctx.pf.proto3 && !efull.starts_with("google.protobuf.") {
            return Err(err(
                ProtoErrorKind::Invalid,
                "Extensions in proto3 are only allowed for defining options.",
                pos,
            ));
        }
        x.extendee = Some(format!(".{efull}"));
        check_field_number(x.number.unwrap_or(0), ctx.pos(&pp(path, &[3])))?;
    }
    let mut enum_sym = None;
    if let Some(t) = x.type_name.clone() {
        let pos = ctx.pos(&pp(path, &[6]));
        let want: &[SymKind] = if x.r#type == Some(field_type::GROUP) {
            &[SymKind::Message]
        } else {
            &[SymKind::Message, SymKind::Enum]
        };
        let (tfull, sym) = ctx.resolve(&t, &full, pos, want, "a type")?;
        if x.r#type != Some(field_type::GROUP) {
            x.r#type = Some(if sym.kind == SymKind::Enum {
                enum_sym = Some((tfull.clone(), sym.clone()));
                field_type::ENUM
            } else {
                field_type::MESSAGE
            });
        }
        x.type_name = Some(format!(".{tfull}"));
    }
    if let Some(d) = ctx.defaults.get(path) {
        if ctx.pf.proto3 {
            return Err(err(
                ProtoErrorKind::Invalid,
                "Explicit default values are not allowed in proto3.",
                d.pos,
            ));
        }
        if x.label == Some(label::REPEATED) {
            return Err(err(
                ProtoErrorKind::Invalid,
                "Repeated fields can't have default values.",
                d.pos,
            ));
        }
        x.default_value = Some(default_value(ctx, x.r#type.unwrap_or(0), d, enum_sym)?);
    }
    Ok(())
}

fn default_value(
    ctx: &Ctx<'_>,
    t: i32,
    d: &Scalar,
    enum_sym: Option<(String, Sym)>,
) -> Result<Vec<u8>, ProtoError> {
    use field_type::*;
    let bad = |msg: &str| err(ProtoErrorKind::Invalid, msg, d.pos);
    let int = |min: i128, max: i128| -> Result<String, ProtoError> {
        match d.lit {
            Lit::Int(v) => {
                let v = if d.neg { -(v as i128) } else { v as i128 };
                if v < min {
                    if min == 0 {
                        return Err(bad("Unsigned field can't have negative default value."));
                    }
                    return Err(bad("Integer out of range."));
                }
                if v > max {
                    return Err(bad("Integer out of range."));
                }
                Ok(v.to_string())
            }
            _ => Err(bad("Expected integer for field default value.")),
        }
    };
    match t {
        INT32 | SINT32 | SFIXED32 => int(i32::MIN as i128, i32::MAX as i128),
        INT64 | SINT64 | SFIXED64 => int(i64::MIN as i128, i64::MAX as i128),
        UINT32 | FIXED32 => int(0, u32::MAX as i128),
        UINT64 | FIXED64 => int(0, u64::MAX as i128),
        FLOAT | DOUBLE => {
            let v = match &d.lit {
                Lit::Int(v) => *v as f64,
                Lit::Float(v) => *v,
                Lit::Ident(s) if s == "inf" => f64::INFINITY,
                Lit::Ident(s) if s == "nan" => f64::NAN,
                _ => return Err(bad("Expected number.")),
            };
            let v = if d.neg { -v } else { v };
            Ok(if t == FLOAT {
                format_float(v as f32)
            } else {
                format_double(v)
            })
        }
        BOOL => match &d.lit {
            Lit::Ident(s) if !d.neg && (s == "true" || s == "false") => Ok(s.clone()),
            _ => Err(bad("Expected \"true\" or \"false\".")),
        },
        // A string's bytes as written, UTF-8 or not (protoc keeps "\xff").
        STRING => match &d.lit {
            Lit::Str(b) => return Ok(b.clone()),
            _ => Err(bad("Expected string for field default value.")),
        },
        BYTES => match &d.lit {
            Lit::Str(b) => Ok(c_escape(b)),
            _ => Err(bad("Expected string.")),
        },
        ENUM => {
            let (efull, esym) = enum_sym.ok_or_else(|| bad("Expected an enum type."))?;
            let name = match &d.lit {
                Lit::Ident(s) if !d.neg => s.clone(),
                _ => {
                    return Err(bad(
                        "Default value for an enum field must be an identifier.",
                    ))
                }
            };
            let parent = efull.rsplit_once('.').map_or("", |(p, _)| p);
            let ok = ctx.symbols.get(&join(parent, &name)).is_some_and(|s| {
                s.kind == SymKind::EnumValue
                    && s.file == esym.file
                    && s.path.starts_with(&esym.path)
            });
            if !ok {
                return Err(err(
                    ProtoErrorKind::Undefined,
                    format!("Enum type \"{efull}\" has no value named \"{name}\"."),
                    d.pos,
                ));
            }
            Ok(name)
        }
        _ => Err(bad("Messages can't have default values.")),
    }
    .map(String::into_bytes)
}
