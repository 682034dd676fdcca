//! The text format printer: a message read through a [`MessageSource`]
//! written as Google's Python `text_format.MessageToString` writes it.
//!
//! Fields in number order, `name: value` per line (messages as
//! `name {` ... `}` indented by two), maps as entry messages sorted by key
//! (Python's order), strings and bytes C-escaped (octal for bytes outside
//! printable ASCII unless `as_utf8`), floats as Python's `repr`, enums by
//! name, groups by their type's name. A `google.protobuf.Any` whose type is
//! in the tables is expanded as `[type_url] { ... }`.

use std::fmt::Write as _;

use crate::proto::names::c_escape_byte;
use crate::proto::repr::{f32_repr, f64_repr};
use crate::proto::runtime::dynamic::{decode_dyn, DynSource};
use crate::proto::runtime::error::{EncodeError, EncodeKind};
use crate::proto::runtime::{
    Cardinality, FieldInfo, Kind, MessageSource, Scalar, SrcValue, Tables,
};
use crate::proto::wire::{WireReader, EGROUP, FIXED32, FIXED64, LEN, MAX_DEPTH, SGROUP, VARINT};

/// Printer settings (Google's names).
#[derive(Debug, Clone, Copy, Default)]
pub struct TextOptions {
    /// Everything on one line, fields separated by spaces.
    pub as_one_line: bool,
    /// Keep non-ASCII characters of strings as they are.
    pub as_utf8: bool,
    /// Print unknown fields too, by number (`print_unknown_fields`).
    pub print_unknown_fields: bool,
}

/// Why printing failed.
#[derive(Debug)]
pub enum PrintFailure<E> {
    /// A value the printer cannot print (too deep, wrong kind).
    Print(EncodeError),
    /// The source's own error.
    Source(E),
}

/// Print message `m` of type `ty`.
pub fn print_text<'m, S: MessageSource<'m>>(
    tables: &Tables,
    ty: u32,
    m: S::Msg,
    src: &S,
    opts: TextOptions,
) -> Result<String, PrintFailure<S::Err>> {
    let mut p = Printer {
        t: tables,
        opts,
        out: String::new(),
        indent: 0,
    };
    p.message(ty, m, src, 0).map_err(|e| match e {
        PrintFailure::Print(mut e) => {
            e.path.insert(0, '$');
            PrintFailure::Print(e)
        }
        other => other,
    })?;
    if opts.as_one_line {
        let n = p.out.trim_end().len();
        p.out.truncate(n);
    }
    Ok(p.out)
}

struct Printer<'t> {
    t: &'t Tables,
    opts: TextOptions,
    out: String,
    indent: usize,
}

fn fail<E>(kind: EncodeKind, msg: impl Into<String>) -> PrintFailure<E> {
    PrintFailure::Print(EncodeError::new(kind, msg))
}

/// Put field `f` (and the element's index) in front of an error's path on
/// its way up.
#[cold]
fn locate<E>(e: PrintFailure<E>, f: &FieldInfo, index: Option<usize>) -> PrintFailure<E> {
    let PrintFailure::Print(mut e) = e else {
        return e;
    };
    let seg = match index {
        Some(i) => format!(".{}[{i}]", f.name),
        None => format!(".{}", f.name),
    };
    e.path.insert_str(0, &seg);
    PrintFailure::Print(e)
}

impl Printer<'_> {
    fn message<'m, S: MessageSource<'m>>(
        &mut self,
        ty: u32,
        m: S::Msg,
        src: &S,
        depth: usize,
    ) -> Result<(), PrintFailure<S::Err>> {
        if depth > MAX_DEPTH {
            return Err(fail(
                EncodeKind::Limit,
                format!("messages nested deeper than {MAX_DEPTH}"),
            ));
        }
        let t = self.t;
        let info = &t.messages[ty as usize];
        if info.full_name == "google.protobuf.Any" && self.any(info, m, src, depth)? {
            return Ok(());
        }
        for f in &info.fields {
            if let Cardinality::Singular { presence } = f.card {
                let Some(v) = src.singular(m, f).map_err(PrintFailure::Source)? else {
                    continue;
                };
                if !presence {
                    if let SrcValue::Scalar(s) = v {
                        if crate::proto::runtime::scalar::is_zero(s) {
                            continue;
                        }
                    }
                }
                self.field(f, v, src, depth)
                    .map_err(|e| locate(e, f, None))?;
                continue;
            }
            let n = src.count(m, f).map_err(PrintFailure::Source)?;
            if n == 0 {
                continue;
            }
            match f.card {
                Cardinality::Singular { .. } => {}
                Cardinality::Repeated { .. } => {
                    for i in 0..n {
                        let v = src.get(m, f, i).map_err(PrintFailure::Source)?;
                        self.field(f, v, src, depth)
                            .map_err(|e| locate(e, f, Some(i)))?;
                    }
                }
                Cardinality::Map => self
                    .map(f, m, n, src, depth)
                    .map_err(|e| locate(e, f, None))?,
            }
        }
        if self.opts.print_unknown_fields {
            let bytes = src.unknown(m).map_err(PrintFailure::Source)?;
            if let Some(mut fields) = unknown_set(bytes, depth) {
                if info.message_set {
                    fields = set_items(fields);
                }
                self.unknown(&fields);
            }
        }
        Ok(())
    }

    /// Unknown fields as Google's `_PrintUnknownFields` writes them:
    /// `number: value` for numbers (unsigned), `number { ... }` for groups
    /// and for length-delimited values that read as fields themselves,
    /// `number: "escaped bytes"` for the other length-delimited ones.
    fn unknown(&mut self, fields: &[Unknown<'_>]) {
        for u in fields {
            self.pad();
            let _ = write!(self.out, "{}", u.number);
            match &u.value {
                UnknownValue::Number(v) => {
                    let _ = write!(self.out, ": {v}");
                }
                UnknownValue::Group(inner) => {
                    self.out.push(' ');
                    self.open();
                    self.unknown(inner);
                    self.close();
                }
                UnknownValue::Bytes(b) => match unknown_set(b, 0) {
                    Some(inner) => {
                        self.out.push(' ');
                        self.open();
                        self.unknown(&inner);
                        self.close();
                    }
                    None => {
                        self.out.push_str(": \"");
                        escape(&mut self.out, b, false);
                        self.out.push('"');
                    }
                },
            }
            self.end_field();
        }
    }

    /// An `Any` of a known type as `[url] { ... }`; false to print it as a
    /// plain message.
    fn any<'m, S: MessageSource<'m>>(
        &mut self,
        info: &crate::proto::runtime::MessageInfo,
        m: S::Msg,
        src: &S,
        depth: usize,
    ) -> Result<bool, PrintFailure<S::Err>> {
        let (Some(uf), Some(vf)) = (info.field(1), info.field(2)) else {
            return Ok(false);
        };
        let url = match src.count(m, uf).map_err(PrintFailure::Source)? {
            0 => return Ok(false),
            _ => match src.get(m, uf, 0).map_err(PrintFailure::Source)? {
                SrcValue::Scalar(Scalar::Str(b)) => b,
                _ => return Ok(false),
            },
        };
        let Ok(url) = std::str::from_utf8(url) else {
            return Ok(false);
        };
        let Some((_, name)) = url.rsplit_once('/') else {
            return Ok(false);
        };
        let Some(inner) = self.t.message_index(name) else {
            return Ok(false);
        };
        let value: &[u8] = match src.count(m, vf).map_err(PrintFailure::Source)? {
            0 => &[],
            _ => match src.get(m, vf, 0).map_err(PrintFailure::Source)? {
                SrcValue::Scalar(Scalar::Bytes(b)) => b,
                _ => return Ok(false),
            },
        };
        let Ok(dm) = decode_dyn(self.t, inner, value) else {
            return Ok(false);
        };
        self.pad();
        let _ = write!(self.out, "[{url}] ");
        self.open();
        self.message(inner, &dm, &DynSource, depth + 1)
            .map_err(|e| match e {
                PrintFailure::Print(p) => PrintFailure::Print(p),
                PrintFailure::Source(s) => PrintFailure::Print(s),
            })?;
        self.close();
        self.end_field();
        Ok(true)
    }

    fn map<'m, S: MessageSource<'m>>(
        &mut self,
        f: &FieldInfo,
        m: S::Msg,
        n: usize,
        src: &S,
        depth: usize,
    ) -> Result<(), PrintFailure<S::Err>> {
        let Kind::Message(entry) = f.kind else {
            return Err(fail(
                EncodeKind::Unsupported,
                "a map field without an entry type",
            ));
        };
        let t = self.t;
        let einfo = &t.messages[entry as usize];
        let (Some(kf), Some(vf)) = (einfo.field(1), einfo.field(2)) else {
            return Err(fail(
                EncodeKind::Unsupported,
                "map entry type without key and value",
            ));
        };
        let mut entries = Vec::with_capacity(n);
        for i in 0..n {
            entries.push(src.entry(m, f, i).map_err(PrintFailure::Source)?);
        }
        entries.sort_by(|a, b| python_key_order(a.0, b.0));
        for (k, v) in entries {
            self.name(f);
            self.out.push(' ');
            self.open();
            let keep = |fi: &FieldInfo, s: Scalar<'_>| match fi.card {
                Cardinality::Singular { presence: false } => {
                    !crate::proto::runtime::scalar::is_zero(s)
                }
                _ => true,
            };
            if keep(kf, k) {
                self.field(kf, SrcValue::Scalar(k), src, depth + 1)?;
            }
            match v {
                SrcValue::Scalar(s) if !keep(vf, s) => {}
                v => self.field(vf, v, src, depth + 1)?,
            }
            self.close();
            self.end_field();
        }
        Ok(())
    }

    fn pad(&mut self) {
        if !self.opts.as_one_line {
            for _ in 0..self.indent {
                self.out.push(' ');
            }
        }
    }

    fn name(&mut self, f: &FieldInfo) {
        self.pad();
        match f.kind {
            Kind::Message(sub) if f.delimited && self.group_like(f, sub) => {
                let full = &self.t.messages[sub as usize].full_name;
                self.out.push_str(full.rsplit('.').next().unwrap_or(full));
            }
            // As Google's `text_format`: a `MessageSet` member by its type.
            Kind::Message(sub) if f.set_item => {
                let full = &self.t.messages[sub as usize].full_name;
                let _ = write!(self.out, "[{full}]");
            }
            _ => self.out.push_str(&f.name),
        }
        if !matches!(f.kind, Kind::Message(_)) {
            self.out.push(':');
        }
    }

    /// A delimited field printed by its type's name, as protobuf names
    /// groups: the type's short name lowercased is the field's name.
    fn group_like(&self, f: &FieldInfo, sub: u32) -> bool {
        let full = &self.t.messages[sub as usize].full_name;
        let short = full.rsplit('.').next().unwrap_or(full);
        short.to_ascii_lowercase() == f.name
    }

    fn open(&mut self) {
        if self.opts.as_one_line {
            self.out.push_str("{ ");
        } else {
            self.out.push_str("{\n");
            self.indent += 2;
        }
    }

    fn close(&mut self) {
        if self.opts.as_one_line {
            self.out.push('}');
        } else {
            self.indent -= 2;
            self.pad();
            self.out.push('}');
        }
    }

    fn end_field(&mut self) {
        self.out
            .push(if self.opts.as_one_line { ' ' } else { '\n' });
    }

    fn field<'m, S: MessageSource<'m>>(
        &mut self,
        f: &FieldInfo,
        v: SrcValue<'m, S::Msg>,
        src: &S,
        depth: usize,
    ) -> Result<(), PrintFailure<S::Err>> {
        self.name(f);
        self.out.push(' ');
        match (f.kind, v) {
            (Kind::Message(sub), SrcValue::Message(sm)) => {
                self.open();
                self.message(sub, sm, src, depth + 1)?;
                self.close();
            }
            // A scalar for a message field is refused, as a message for a
            // scalar.
            (kind, SrcValue::Scalar(s)) if !matches!(kind, Kind::Message(_)) => {
                self.scalar(kind, s)
            }
            _ => {
                return Err(fail(
                    EncodeKind::TypeMismatch,
                    format!("field {} holds the wrong kind of value", f.name),
                ))
            }
        }
        self.end_field();
        Ok(())
    }

    fn scalar(&mut self, kind: Kind, s: Scalar<'_>) {
        let out = &mut self.out;
        match s {
            Scalar::I32(v) => {
                let _ = write!(out, "{v}");
            }
            Scalar::I64(v) => {
                let _ = write!(out, "{v}");
            }
            Scalar::U32(v) => {
                let _ = write!(out, "{v}");
            }
            Scalar::U64(v) => {
                let _ = write!(out, "{v}");
            }
            Scalar::F32(v) => out.push_str(&f32_repr(v)),
            Scalar::F64(v) => out.push_str(&f64_repr(v)),
            Scalar::Bool(v) => out.push_str(if v { "true" } else { "false" }),
            Scalar::Enum(n) => {
                let name = match kind {
                    Kind::Enum(e) => self.t.enums[e as usize]
                        .names
                        .iter()
                        .find(|(_, num)| *num == n)
                        .map(|(name, _)| name.as_str()),
                    _ => None,
                };
                match name {
                    Some(name) => out.push_str(name),
                    None => {
                        let _ = write!(out, "{n}");
                    }
                }
            }
            Scalar::Str(b) => {
                out.push('"');
                escape(out, b, self.opts.as_utf8);
                out.push('"');
            }
            Scalar::Bytes(b) => {
                out.push('"');
                escape(out, b, false);
                out.push('"');
            }
        }
    }
}

/// One unknown field read back from its wire bytes.
struct Unknown<'a> {
    number: u32,
    value: UnknownValue<'a>,
}

enum UnknownValue<'a> {
    /// A varint, fixed32 or fixed64, as an unsigned number.
    Number(u64),
    /// A group's fields.
    Group(Vec<Unknown<'a>>),
    /// A length-delimited value.
    Bytes(&'a [u8]),
}

/// Read `bytes` as a set of fields (`None` when they are not one, or nest
/// groups deeper than the limit).
fn unknown_set(bytes: &[u8], depth: usize) -> Option<Vec<Unknown<'_>>> {
    let mut r = WireReader::new(bytes);
    let out = unknown_fields(&mut r, None, depth)?;
    r.at_end().then_some(out)
}

/// A `MessageSet`'s unknown fields as Google's unknown field set gives
/// them: only its items (group 1) that hold a type id and bytes, each as
/// a length-delimited field numbered by the id (the first id and the
/// first bytes of an item); anything else is left out.
fn set_items(fields: Vec<Unknown<'_>>) -> Vec<Unknown<'_>> {
    fn item<'a>(inner: &[Unknown<'a>]) -> Option<(u32, &'a [u8])> {
        let id = inner.iter().find_map(|u| match u.value {
            UnknownValue::Number(n) if u.number == 2 => Some(n as u32),
            _ => None,
        });
        let bytes = inner.iter().find_map(|u| match u.value {
            UnknownValue::Bytes(b) if u.number == 3 => Some(b),
            _ => None,
        });
        Some((id.filter(|&n| n != 0)?, bytes?))
    }
    fields
        .into_iter()
        .filter_map(|u| match &u.value {
            UnknownValue::Group(inner) if u.number == 1 => item(inner),
            _ => None,
        })
        .map(|(number, b)| Unknown {
            number,
            value: UnknownValue::Bytes(b),
        })
        .collect()
}

fn unknown_fields<'a>(
    r: &mut WireReader<'a>,
    group: Option<u32>,
    depth: usize,
) -> Option<Vec<Unknown<'a>>> {
    if depth > MAX_DEPTH {
        return None;
    }
    let mut out = Vec::new();
    while !r.at_end() {
        let (number, wt) = r.tag().ok()?;
        let value = match wt {
            VARINT => UnknownValue::Number(r.varint().ok()?),
            FIXED64 => {
                let b = r.take(8).ok()?;
                UnknownValue::Number(u64::from_le_bytes(b.try_into().ok()?))
            }
            FIXED32 => {
                let b = r.take(4).ok()?;
                UnknownValue::Number(u32::from_le_bytes(b.try_into().ok()?) as u64)
            }
            LEN => {
                let (s, e) = r.len_prefixed().ok()?;
                UnknownValue::Bytes(r.slice(s, e))
            }
            SGROUP => UnknownValue::Group(unknown_fields(r, Some(number), depth + 1)?),
            EGROUP => return (group == Some(number)).then_some(out),
            _ => return None,
        };
        out.push(Unknown { number, value });
    }
    group.is_none().then_some(out)
}

/// C-escape `b` as protobuf's `text_encoding.CEscape` does: `\n`, `\r`,
/// `\t`, `\"`, `\'`, `\\`, octal for other control bytes, and octal for
/// bytes from 0x80 unless `as_utf8` (then valid UTF-8 stays as it is).
pub fn escape(out: &mut String, b: &[u8], as_utf8: bool) {
    let mut rest = b;
    while !rest.is_empty() {
        let (good, bad) = if as_utf8 {
            match std::str::from_utf8(rest) {
                Ok(s) => (s.len(), None),
                Err(e) => (e.valid_up_to(), Some(e.valid_up_to())),
            }
        } else {
            (0, Some(0))
        };
        if good > 0 {
            // SAFETY-free: the prefix was just checked to be UTF-8.
            let s = std::str::from_utf8(&rest[..good]).unwrap_or("");
            for c in s.chars() {
                if (c as u32) < 0x80 {
                    c_escape_byte(out, c as u8);
                } else {
                    out.push(c);
                }
            }
        }
        match bad {
            None => break,
            Some(i) if as_utf8 => {
                let _ = write!(out, "\\{:03o}", rest[i]);
                rest = &rest[i + 1..];
            }
            Some(_) => {
                for &c in rest {
                    c_escape_byte(out, c);
                }
                break;
            }
        }
    }
}

/// Python's `sorted()` order of map keys: numbers ascending, `False`
/// before `True`, strings by code point (the UTF-8 bytes' order).
fn python_key_order(a: Scalar<'_>, b: Scalar<'_>) -> std::cmp::Ordering {
    fn num(s: Scalar<'_>) -> Option<i128> {
        Some(match s {
            Scalar::I32(v) | Scalar::Enum(v) => v as i128,
            Scalar::I64(v) => v as i128,
            Scalar::U32(v) => v as i128,
            Scalar::U64(v) => v as i128,
            Scalar::Bool(v) => v as i128,
            _ => return None,
        })
    }
    match (a, b) {
        (Scalar::Str(x), Scalar::Str(y)) => x.cmp(y),
        _ => num(a).cmp(&num(b)),
    }
}
