//! The text format parser: text as Google's Python `text_format.Parse`
//! reads it, driving a [`MessageBuilder`] (the same builders the wire
//! decoder drives).
//!
//! Accepted: `#` comments; `name: value`, `name { ... }`, `name: { ... }`
//! and `name < ... >`; list values `name: [a, b]`; `,` or `;` after a
//! field; adjacent strings concatenated; C escapes (octal, `\x`, `\u`,
//! `\U`); integers in decimal, hex and octal; floats with an `f` suffix,
//! `inf`, `infinity`, `nan` (any case); bools `true`/`false`/`t`/`f`/`1`/`0`/
//! `True`/`False`; enums by name or number; groups by their type's name;
//! maps as `{ key: ... value: ... }` entries; an `Any` written as
//! `[type.googleapis.com/pkg.Type] { ... }` (packed into `type_url` and
//! `value`). As `Parse` (not `Merge`), a singular field given twice, or
//! two members of one oneof, is an error, as `Parse` decides it: a field with
//! presence (a message, a oneof member, `optional`) given twice, or a field
//! without presence given again after a value other than its zero; an
//! expanded `Any` sets both `type_url` and `value` as `Any.Pack` does.
//! Errors ([`TextError`]) say what kind of problem, `line:col` (1-based), the
//! byte offset in the UTF-8 text and the field path (`$.a.b[2]`).

use crate::proto::escape::unescape_body;
use crate::proto::runtime::dynamic::{dedup_maps, encode_dyn, DynBuilder, DynMessage, Value};
use crate::proto::runtime::error::{render, DecodeKind, PathSeg};
use crate::proto::runtime::{
    is_zero, Cardinality, FieldInfo, Kind, MapValue, MessageBuilder, Scalar, Tables,
};
use crate::proto::text::error::{TextError, TextFailure};
use crate::proto::text::lex::{Tok, Tokenizer};
use crate::proto::wire::MAX_DEPTH;

/// Parser settings (Google's names).
#[derive(Debug, Clone, Copy, Default)]
pub struct ParseOptions {
    /// Skip fields the message type does not have instead of failing.
    pub allow_unknown_field: bool,
}

type Res<T, E> = Result<T, TextFailure<E>>;

/// Parse `text` as a message of type `ty`.
pub fn parse_text<B: MessageBuilder>(
    tables: &Tables,
    ty: u32,
    text: &str,
    builder: &mut B,
    opts: ParseOptions,
) -> Res<B::Msg, B::Err> {
    let mut p = Parser {
        t: tables,
        opts,
        tok: Tokenizer::new(text.as_bytes()),
        path: Vec::new(),
    };
    p.tok.skip_space();
    let mut m = builder.start(ty).map_err(TextFailure::Build)?;
    p.fields(builder, ty, &mut m, None, 0)?;
    Ok(m)
}

struct Parser<'t, 'a> {
    t: &'t Tables,
    opts: ParseOptions,
    tok: Tokenizer<'a>,
    /// The field path to the value being read.
    path: Vec<PathSeg<'t>>,
}

/// What a message's fields given so far allow next (`text_format.Parse`'s
/// checks, which read the message being filled).
#[derive(Default)]
struct Given {
    /// Fields with presence given (numbers).
    present: Vec<u32>,
    /// Fields without presence whose value is not their zero.
    nonzero: Vec<u32>,
    /// The member given of each oneof: (oneof, field number).
    oneofs: Vec<(u32, u32)>,
    /// Elements given of each repeated or map field: (field number, count).
    counts: Vec<(u32, u32)>,
}

impl Given {
    /// Mark field `n` as holding a value other than its zero, or not.
    fn set_nonzero(&mut self, n: u32, nonzero: bool) {
        let at = self.nonzero.iter().position(|&x| x == n);
        match (at, nonzero) {
            (None, true) => self.nonzero.push(n),
            (Some(i), false) => {
                self.nonzero.swap_remove(i);
            }
            _ => {}
        }
    }

    /// The next element's index in field `n`, counted.
    fn next_index(&mut self, n: u32) -> u32 {
        match self.counts.iter_mut().find(|(x, _)| *x == n) {
            Some((_, c)) => {
                *c += 1;
                *c - 1
            }
            None => {
                self.counts.push((n, 1));
                0
            }
        }
    }
}

fn show(t: &[u8]) -> String {
    String::from_utf8_lossy(t).into_owned()
}

impl<'t, 'a> Parser<'t, 'a> {
    /// A malformed-text error at token `at` (see [`Parser::fail_kind`]).
    fn fail<T, E>(&self, at: Tok<'_>, msg: impl Into<String>) -> Res<T, E> {
        self.fail_kind(DecodeKind::Malformed, at, msg)
    }

    /// An error of kind `kind` at token `at`, with the path read so far;
    /// where the text ends early, of kind truncated.
    #[cold]
    fn fail_kind<T, E>(&self, kind: DecodeKind, at: Tok<'_>, msg: impl Into<String>) -> Res<T, E> {
        let kind = if at.text.is_empty() {
            DecodeKind::Truncated
        } else {
            kind
        };
        Err(TextFailure::Syntax(Box::new(TextError {
            kind,
            offset: at.offset,
            line: at.line,
            col: at.col,
            message: msg.into(),
            path: render(&self.path),
        })))
    }

    fn expect<E>(&mut self, sym: &[u8]) -> Res<(), E> {
        let t = self.tok.peek();
        if t.text == sym {
            self.tok.next();
            Ok(())
        } else {
            self.fail(t, format!("Expected \"{}\".", show(sym)))
        }
    }

    /// Fields until `close` (or the end of the text when `None`).
    fn fields<B: MessageBuilder>(
        &mut self,
        b: &mut B,
        ty: u32,
        m: &mut B::Msg,
        close: Option<&[u8]>,
        depth: usize,
    ) -> Res<(), B::Err> {
        let t: &'t Tables = self.t;
        let info = &t.messages[ty as usize];
        let mut given = Given::default();
        loop {
            match close {
                Some(c) => {
                    if self.tok.try_consume(c) {
                        return Ok(());
                    }
                    if self.tok.at_end() {
                        let at = self.tok.peek();
                        return self.fail(at, format!("Expected \"{}\".", show(c)));
                    }
                }
                None if self.tok.at_end() => return Ok(()),
                None => {}
            }
            let name_tok = self.tok.peek();
            let field = if name_tok.text == b"[" {
                if info.full_name == "google.protobuf.Any" {
                    self.any(b, info, m, depth, &mut given)?;
                    if !self.tok.try_consume(b",") {
                        self.tok.try_consume(b";");
                    }
                    continue;
                }
                let name = self.extension_name()?;
                // A `MessageSet` member may be named by its message type too
                // (as Google's `text_format` prints it).
                let found = info
                    .fields
                    .iter()
                    .find(|f| f.extension && f.name == name)
                    .or_else(|| {
                        info.fields.iter().find(|f| match f.kind {
                            Kind::Message(sub) if f.set_item => {
                                name[1..name.len() - 1] == t.messages[sub as usize].full_name
                            }
                            _ => false,
                        })
                    });
                if found.is_none() && !self.opts.allow_unknown_field {
                    return self.fail_kind(
                        DecodeKind::UnknownField,
                        name_tok,
                        format!(
                            "Extension \"{}\" not found or is not an extension of \"{}\".",
                            &name[1..name.len() - 1],
                            info.full_name
                        ),
                    );
                }
                found
            } else {
                if !is_ident(name_tok.text) {
                    return self.fail(
                        name_tok,
                        format!(
                            "Expected identifier or number, got {}.",
                            show(name_tok.text)
                        ),
                    );
                }
                self.tok.next();
                let name = std::str::from_utf8(name_tok.text).unwrap_or("");
                info.fields.iter().find(|f| f.name == name).or_else(|| {
                    // A group is written with its type's name (or its field's).
                    info.fields
                        .iter()
                        .find(|f| self.group_named(f) && self.type_short_name(f) == Some(name))
                })
            };
            let Some(f) = field else {
                if self.opts.allow_unknown_field {
                    self.skip_field(depth)?;
                    continue;
                }
                return self.fail_kind(
                    DecodeKind::UnknownField,
                    name_tok,
                    format!(
                        "Message type \"{}\" has no field named \"{}\".",
                        info.full_name,
                        show(name_tok.text)
                    ),
                );
            };
            self.path.push(PathSeg {
                name: &f.name,
                index: None,
            });
            if let Some(o) = f.oneof {
                if let Some(&(_, other)) = given.oneofs.iter().find(|(oo, _)| *oo == o) {
                    if other != f.number {
                        let other_name = info.field(other).map_or("", |g| g.name.as_str());
                        return self.fail_kind(
                            DecodeKind::Duplicate,
                            name_tok,
                            format!(
                                "Field \"{}\" is specified along with field \"{}\", another member of oneof \"{}\" for message type \"{}\".",
                                f.name, other_name, info.oneofs.get(o as usize).map_or("", |s| s.as_str()), info.full_name
                            ),
                        );
                    }
                } else {
                    given.oneofs.push((o, f.number));
                }
            }
            let implicit = match (f.card, f.kind) {
                (Cardinality::Singular { .. }, Kind::Message(_)) => Some(false),
                (Cardinality::Singular { presence }, _) => Some(!presence),
                _ => None,
            };
            // As `Parse`: a field with presence given twice, or a field
            // without given again after a value other than its zero.
            let twice = match implicit {
                Some(false) => given.present.contains(&f.number),
                Some(true) => given.nonzero.contains(&f.number),
                None => false,
            };
            if twice {
                return self.fail_kind(
                    DecodeKind::Duplicate,
                    name_tok,
                    format!(
                        "Message type \"{}\" should not have multiple \"{}\" {}.",
                        info.full_name,
                        if f.extension {
                            &f.name[1..f.name.len() - 1]
                        } else {
                            &f.name
                        },
                        if f.extension { "extensions" } else { "fields" }
                    ),
                );
            }
            let nonzero = self.field_value(b, f, m, depth, &mut given)?;
            match implicit {
                Some(false) => given.present.push(f.number),
                Some(true) => given.set_nonzero(f.number, nonzero),
                None => {}
            }
            self.path.pop();
            if !self.tok.try_consume(b",") {
                self.tok.try_consume(b";");
            }
        }
    }
    fn group_named(&self, f: &FieldInfo) -> bool {
        f.delimited
            && self
                .type_short_name(f)
                .is_some_and(|n| n.to_ascii_lowercase() == f.name)
    }

    fn type_short_name(&self, f: &FieldInfo) -> Option<&str> {
        match f.kind {
            Kind::Message(sub) => {
                let full = &self.t.messages[sub as usize].full_name;
                Some(full.rsplit('.').next().unwrap_or(full))
            }
            _ => None,
        }
    }

    /// After a field's name: its value or values; whether a singular
    /// scalar's value is other than its zero.
    fn field_value<B: MessageBuilder>(
        &mut self,
        b: &mut B,
        f: &FieldInfo,
        m: &mut B::Msg,
        depth: usize,
        given: &mut Given,
    ) -> Res<bool, B::Err> {
        let is_msg = matches!(f.kind, Kind::Message(_));
        let colon = self.tok.try_consume(b":");
        if !colon && !is_msg {
            let at = self.tok.peek();
            return self.fail(at, "Expected \":\".");
        }
        let repeated = !matches!(f.card, Cardinality::Singular { .. });
        if repeated && colon && self.tok.try_consume(b"[") {
            if self.tok.try_consume(b"]") {
                return Ok(false);
            }
            loop {
                self.element(b, f, m, depth, given)?;
                if self.tok.try_consume(b"]") {
                    return Ok(false);
                }
                self.expect(b",")?;
            }
        }
        if repeated {
            self.element(b, f, m, depth, given)?;
            return Ok(false);
        }
        self.one_value(b, f, m, depth)
    }

    /// One element of repeated or map field `f`, its index in the path.
    fn element<B: MessageBuilder>(
        &mut self,
        b: &mut B,
        f: &FieldInfo,
        m: &mut B::Msg,
        depth: usize,
        given: &mut Given,
    ) -> Res<(), B::Err> {
        let i = given.next_index(f.number);
        if let Some(last) = self.path.last_mut() {
            last.index = Some(i);
        }
        self.one_value(b, f, m, depth)?;
        Ok(())
    }

    /// One value of field `f`; whether it is a scalar other than its zero.
    fn one_value<B: MessageBuilder>(
        &mut self,
        b: &mut B,
        f: &FieldInfo,
        m: &mut B::Msg,
        depth: usize,
    ) -> Res<bool, B::Err> {
        match (f.card, f.kind) {
            (Cardinality::Map, Kind::Message(entry)) => {
                let close = self.open()?;
                let einfo = &self.t.messages[entry as usize];
                let mut key: Option<Value> = None;
                let mut val_scalar: Option<Value> = None;
                let mut val_msg: Option<B::Msg> = None;
                let (Some(kf), Some(vf)) = (einfo.field(1), einfo.field(2)) else {
                    let at = self.tok.peek();
                    return self.fail(at, "map entry type without key and value");
                };
                loop {
                    if self.tok.try_consume(close) {
                        break;
                    }
                    let nt = self.tok.next();
                    match nt.text {
                        b"key" => {
                            self.expect(b":")?;
                            key = Some(self.scalar(kf)?);
                        }
                        b"value" => match vf.kind {
                            Kind::Message(vt) => {
                                self.tok.try_consume(b":");
                                let c = self.open()?;
                                let mut sub = match val_msg.take() {
                                    Some(s) => s,
                                    None => b.start(vt).map_err(TextFailure::Build)?,
                                };
                                self.nested(b, vt, &mut sub, c, depth)?;
                                val_msg = Some(sub);
                            }
                            _ => {
                                self.expect(b":")?;
                                val_scalar = Some(self.scalar(vf)?);
                            }
                        },
                        _ => {
                            return self.fail_kind(
                                DecodeKind::UnknownField,
                                nt,
                                format!(
                                    "Message type \"{}\" has no field named \"{}\".",
                                    einfo.full_name,
                                    show(nt.text)
                                ),
                            )
                        }
                    }
                    if !self.tok.try_consume(b",") {
                        self.tok.try_consume(b";");
                    }
                }
                let k = key.unwrap_or_else(|| zero_of(kf));
                let v = match (vf.kind, val_msg, val_scalar) {
                    (Kind::Message(_), Some(sm), _) => MapValue::Message(sm),
                    (Kind::Message(vt), None, _) => {
                        MapValue::Message(b.start(vt).map_err(TextFailure::Build)?)
                    }
                    (_, _, Some(s)) => {
                        b.map_entry(m, f, get(&k), MapValue::Scalar(get(&s)))
                            .map_err(TextFailure::Build)?;
                        return Ok(false);
                    }
                    (_, _, None) => {
                        let z = zero_of(vf);
                        b.map_entry(m, f, get(&k), MapValue::Scalar(get(&z)))
                            .map_err(TextFailure::Build)?;
                        return Ok(false);
                    }
                };
                b.map_entry(m, f, get(&k), v).map_err(TextFailure::Build)?;
                Ok(false)
            }
            (_, Kind::Message(sub)) => {
                let close = self.open()?;
                let mut sm = b.begin(m, f, sub).map_err(TextFailure::Build)?;
                self.nested(b, sub, &mut sm, close, depth)?;
                b.end(m, f, sm).map_err(TextFailure::Build)?;
                Ok(false)
            }
            (card, _) => {
                let v = self.scalar(f)?;
                let s = get(&v);
                match card {
                    Cardinality::Singular { .. } => b.set(m, f, s),
                    _ => b.push(m, f, s),
                }
                .map_err(TextFailure::Build)?;
                Ok(!is_zero(s))
            }
        }
    }

    fn nested<B: MessageBuilder>(
        &mut self,
        b: &mut B,
        ty: u32,
        sm: &mut B::Msg,
        close: &'static [u8],
        depth: usize,
    ) -> Res<(), B::Err> {
        if depth + 1 > MAX_DEPTH {
            let at = self.tok.peek();
            return self.fail_kind(
                DecodeKind::Limit,
                at,
                format!("Message nested deeper than {MAX_DEPTH}."),
            );
        }
        self.fields(b, ty, sm, Some(close), depth + 1)
    }

    /// `{` or `<`; returns the closing symbol.
    fn open<E>(&mut self) -> Res<&'static [u8], E> {
        if self.tok.try_consume(b"{") {
            Ok(b"}")
        } else if self.tok.try_consume(b"<") {
            Ok(b">")
        } else {
            let at = self.tok.peek();
            self.fail(at, "Expected \"{\".")
        }
    }

    /// An extension's name in brackets (`[pkg.ext]`, as `FieldInfo::name`
    /// holds it), the tokens read.
    fn extension_name<E>(&mut self) -> Res<String, E> {
        self.tok.next();
        let mut name = String::from("[");
        let mut want_ident = true;
        loop {
            let t = self.tok.next();
            if t.text == b"]" && !want_ident {
                name.push(']');
                return Ok(name);
            }
            let ok = if want_ident {
                is_ident(t.text)
            } else {
                t.text == b"."
            };
            if !ok {
                return self.fail(t, "Expected an extension name and \"]\".");
            }
            name.push_str(&show(t.text));
            want_ident = !want_ident;
        }
    }

    /// `[type.googleapis.com/pkg.Type] { ... }` inside an `Any`.
    fn any<B: MessageBuilder>(
        &mut self,
        b: &mut B,
        info: &crate::proto::runtime::MessageInfo,
        m: &mut B::Msg,
        depth: usize,
        given: &mut Given,
    ) -> Res<(), B::Err> {
        let start = self.tok.next();
        // `domain.name/path/pkg.Type`: identifiers joined by `.` and `/`.
        let mut url = String::new();
        let mut want_ident = true;
        loop {
            let t = self.tok.next();
            if t.text == b"]" && !want_ident {
                break;
            }
            let ok = if want_ident {
                is_ident(t.text)
            } else {
                t.text == b"." || t.text == b"/"
            };
            if !ok {
                return self.fail(t, "Invalid Any type URL: expected a name and \"]\".");
            }
            url.push_str(&show(t.text));
            want_ident = !want_ident;
        }
        let Some((_, name)) = url.rsplit_once('/') else {
            return self.fail(start, format!("Invalid Any type URL: {url}"));
        };
        let Some(inner) = self.t.message_index(name) else {
            return self.fail_kind(
                DecodeKind::UnknownField,
                start,
                format!("Type {name} not found"),
            );
        };
        self.tok.try_consume(b":");
        let close = self.open()?;
        // Parse the packed message into a tree, then pack its bytes.
        let mut db = DynBuilder { tables: self.t };
        let mut dm: DynMessage = match db.start(inner) {
            Ok(dm) => dm,
            Err(never) => match never {},
        };
        let r: Res<(), std::convert::Infallible> =
            self.nested(&mut db, inner, &mut dm, close, depth);
        if let Err(TextFailure::Syntax(e)) = r {
            return Err(TextFailure::Syntax(e));
        }
        dedup_maps(&mut dm);
        let bytes = match encode_dyn(self.t, &dm, true) {
            Ok(bytes) => bytes,
            Err(e) => return self.fail(start, e.to_string()),
        };
        let (Some(uf), Some(vf)) = (info.field(1), info.field(2)) else {
            return self.fail(start, "Any without type_url and value");
        };
        b.set(m, uf, Scalar::Str(url.as_bytes()))
            .map_err(TextFailure::Build)?;
        b.set(m, vf, Scalar::Bytes(&bytes))
            .map_err(TextFailure::Build)?;
        // As `Any.Pack`: both fields now hold these values, whatever the
        // text gave them before; given again, they are given twice.
        given.set_nonzero(uf.number, !url.is_empty());
        given.set_nonzero(vf.number, !bytes.is_empty());
        Ok(())
    }

    /// Skip an unknown field's value (`allow_unknown_field`).
    fn skip_field<E>(&mut self, depth: usize) -> Res<(), E> {
        let colon = self.tok.try_consume(b":");
        let t = self.tok.peek();
        if t.text == b"{" || t.text == b"<" {
            self.skip_message(depth)?;
        } else if colon && t.text == b"[" {
            self.tok.next();
            while !self.tok.try_consume(b"]") {
                if self.tok.at_end() {
                    let at = self.tok.peek();
                    return self.fail(at, "Expected \"]\".");
                }
                let t = self.tok.peek();
                if t.text == b"{" || t.text == b"<" {
                    self.skip_message(depth)?;
                } else {
                    self.tok.next();
                }
            }
        } else if colon {
            let mut t = self.tok.next();
            while t.text.first().is_some_and(|c| *c == b'"' || *c == b'\'') {
                let n = self.tok.peek();
                if !n.text.first().is_some_and(|c| *c == b'"' || *c == b'\'') {
                    break;
                }
                t = self.tok.next();
            }
        } else {
            return self.fail(t, "Expected \":\".");
        }
        if !self.tok.try_consume(b",") {
            self.tok.try_consume(b";");
        }
        Ok(())
    }

    fn skip_message<E>(&mut self, depth: usize) -> Res<(), E> {
        if depth + 1 > MAX_DEPTH {
            let at = self.tok.peek();
            return self.fail_kind(
                DecodeKind::Limit,
                at,
                format!("Message nested deeper than {MAX_DEPTH}."),
            );
        }
        let close: &[u8] = if self.tok.next().text == b"{" {
            b"}"
        } else {
            b">"
        };
        loop {
            if self.tok.try_consume(close) {
                return Ok(());
            }
            let t = self.tok.peek();
            if t.text.is_empty() {
                return self.fail(t, format!("Expected \"{}\".", show(close)));
            }
            self.tok.next();
            self.skip_field(depth + 1)?;
        }
    }

    /// One scalar value of field `f`'s kind.
    fn scalar<E>(&mut self, f: &FieldInfo) -> Res<Value, E> {
        let t = self.tok.peek();
        let text = std::str::from_utf8(t.text).unwrap_or("");
        let v = match f.kind {
            Kind::String | Kind::Bytes => {
                if !t.text.first().is_some_and(|c| *c == b'"' || *c == b'\'') {
                    return self.fail_kind(
                        DecodeKind::TypeMismatch,
                        t,
                        format!("Expected string but found: {}", show(t.text)),
                    );
                }
                let mut out = Vec::new();
                loop {
                    let s = self.tok.peek();
                    if !s.text.first().is_some_and(|c| *c == b'"' || *c == b'\'') {
                        break;
                    }
                    self.tok.next();
                    if let Err(e) = unescape(s.text, &mut out) {
                        return self.fail(s, e);
                    }
                }
                if f.kind == Kind::String && std::str::from_utf8(&out).is_err() && f.utf8_verify {
                    return self.fail(t, "String field contains invalid UTF-8.");
                }
                return Ok(if f.kind == Kind::String {
                    Value::Str(out)
                } else {
                    Value::Bytes(out)
                });
            }
            Kind::Bool => match text {
                "true" | "t" | "1" | "True" => Value::Bool(true),
                "false" | "f" | "0" | "False" => Value::Bool(false),
                _ => {
                    return self.fail_kind(
                        DecodeKind::TypeMismatch,
                        t,
                        "Expected \"true\" or \"false\".",
                    )
                }
            },
            Kind::Float | Kind::Double => {
                let Some(x) = parse_float(text) else {
                    return self.fail_kind(
                        DecodeKind::TypeMismatch,
                        t,
                        format!("Couldn't parse float: {text}"),
                    );
                };
                if f.kind == Kind::Float {
                    Value::F32(x as f32)
                } else {
                    Value::F64(x)
                }
            }
            Kind::Enum(e) => {
                let info = &self.t.enums[e as usize];
                if let Some(&(_, n)) = info.names.iter().find(|(n, _)| n.as_bytes() == t.text) {
                    Value::Enum(n)
                } else if let Some(n) = parse_int(text).and_then(|v| i32::try_from(v).ok()) {
                    if info.closed && !info.contains(n) {
                        return self.fail_kind(
                            DecodeKind::OutOfRange,
                            t,
                            format!(
                                "Enum type \"{}\" has no value with number {n}.",
                                info.full_name
                            ),
                        );
                    }
                    Value::Enum(n)
                } else {
                    return self.fail_kind(
                        DecodeKind::UnknownField,
                        t,
                        format!(
                            "Enum type \"{}\" has no value named {text}.",
                            info.full_name
                        ),
                    );
                }
            }
            Kind::Message(_) => {
                return self.fail_kind(DecodeKind::TypeMismatch, t, "Expected a scalar.")
            }
            k => {
                let Some(v) = parse_int(text) else {
                    return self.fail_kind(
                        DecodeKind::TypeMismatch,
                        t,
                        format!("Couldn't parse integer: {text}"),
                    );
                };
                let (lo, hi): (i128, i128) = match k {
                    Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => {
                        (i32::MIN as i128, i32::MAX as i128)
                    }
                    Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => {
                        (i64::MIN as i128, i64::MAX as i128)
                    }
                    Kind::Uint32 | Kind::Fixed32 => (0, u32::MAX as i128),
                    _ => (0, u64::MAX as i128),
                };
                if v < lo || v > hi {
                    return self.fail_kind(
                        DecodeKind::OutOfRange,
                        t,
                        format!("Couldn't parse integer: {text}"),
                    );
                }
                match k {
                    Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => Value::I32(v as i32),
                    Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => Value::I64(v as i64),
                    Kind::Uint32 | Kind::Fixed32 => Value::U32(v as u32),
                    _ => Value::U64(v as u64),
                }
            }
        };
        self.tok.next();
        Ok(v)
    }
}

fn is_ident(t: &[u8]) -> bool {
    t.first()
        .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
}

/// The scalar of a parsed value (the parser makes only scalars).
fn get(v: &Value) -> Scalar<'_> {
    v.scalar().unwrap_or(Scalar::Bool(false))
}

/// A field's zero, owned.
fn zero_of(f: &FieldInfo) -> Value {
    Value::from_scalar(crate::proto::runtime::scalar::zero(f))
}

/// An integer as Python's `int(text, 0)` reads it, plus C octal (`017`).
fn parse_int(text: &str) -> Option<i128> {
    let (neg, body) = match text.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, text),
    };
    let v = if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        i128::from_str_radix(h, 16).ok()?
    } else if body.len() > 1 && body.starts_with('0') {
        let o = body
            .strip_prefix("0o")
            .or_else(|| body.strip_prefix("0O"))
            .unwrap_or(&body[1..]);
        i128::from_str_radix(o, 8).ok()?
    } else {
        if !body.bytes().all(|c| c.is_ascii_digit()) || body.is_empty() {
            return None;
        }
        body.parse::<i128>().ok()?
    };
    Some(if neg { -v } else { v })
}

/// A float as `text_format.ParseFloat` reads it: Python's `float()`,
/// then `-inf`/`infinity` and `nan` with an optional `f` (any case), then
/// the text without a trailing `f`; `0`-prefixed digits are refused.
fn parse_float(text: &str) -> Option<f64> {
    let unsigned = text.strip_prefix('-').unwrap_or(text);
    if unsigned.len() > 1 && unsigned.starts_with('0') && unsigned.as_bytes()[1].is_ascii_digit() {
        return None;
    }
    if let Ok(x) = text.parse::<f64>() {
        return Some(x);
    }
    let lower = text.to_ascii_lowercase();
    let neg = lower.starts_with('-');
    let body = lower.strip_prefix('-').unwrap_or(&lower);
    if matches!(body, "inf" | "inff" | "infinity" | "infinityf") {
        return Some(if neg {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        });
    }
    if !neg && matches!(body, "nan" | "nanf") {
        return Some(f64::NAN);
    }
    let t = text.trim_end_matches(['f', 'F']);
    if t.len() < text.len() && !t.to_ascii_lowercase().contains(['i', 'n']) {
        return t.parse::<f64>().ok();
    }
    None
}

/// Unescape one quoted string token (quotes included) onto `out`.
fn unescape(tok: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    let q = tok[0];
    if tok.len() < 2 || tok[tok.len() - 1] != q {
        return Err("String missing ending quote.".into());
    }
    unescape_body(&tok[1..tok.len() - 1], out)
}
