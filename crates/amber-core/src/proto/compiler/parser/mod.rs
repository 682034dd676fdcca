//! Recursive-descent parser of `.proto` text (proto2, proto3, editions 2023
//! and 2024) into a [`ParsedFile`]: the file's descriptor with type names as
//! written, plus option statements and positions for the resolver.
//!
//! Like protoc's parser it synthesizes map entry types, group types and the
//! oneofs of proto3 `optional` fields. Nesting (messages, aggregate option
//! values) is bounded by [`MAX_NESTING`]; deeper input is an error, never a
//! stack overflow.

use crate::proto::compiler::ast::*;
use crate::proto::compiler::lexer::{tokenize, Tok, Token};
use crate::proto::descriptor::*;
use crate::proto::error::{Pos, ProtoError, ProtoErrorKind};

/// Deepest nesting of messages (and of `{ }` in option values) accepted.
pub const MAX_NESTING: usize = 64;

/// Highest field number.
pub const MAX_FIELD_NUMBER: i32 = 536_870_911;

/// Parse one file's text. `name` is the file's import path.
pub fn parse(name: &str, src: &[u8]) -> Result<ParsedFile, ProtoError> {
    let toks = tokenize(src).map_err(|e| e.in_file(name))?;
    let mut p = Parser {
        toks,
        i: 0,
        out: ParsedFile::default(),
        package: String::new(),
    };
    p.out.file.name = Some(name.to_string());
    p.file().map_err(|e| e.in_file(name))?;
    Ok(p.out)
}

struct Parser {
    toks: Vec<Token>,
    i: usize,
    out: ParsedFile,
    package: String,
}

mod body;
mod defs;

type R<T> = Result<T, ProtoError>;

/// Where a field is being parsed: decides which labels are allowed and where
/// groups' types go.
#[derive(Clone, Copy, PartialEq)]
enum FieldCtx {
    Message,
    Oneof,
    Extend,
}

fn syntax(msg: impl Into<String>, pos: Pos) -> ProtoError {
    ProtoError::new(ProtoErrorKind::Syntax, msg, pos)
}

impl Parser {
    // ---- token helpers ----

    fn peek(&self) -> &Token {
        &self.toks[self.i.min(self.toks.len() - 1)]
    }

    fn peek_at(&self, k: usize) -> &Tok {
        &self.toks[(self.i + k).min(self.toks.len() - 1)].tok
    }

    fn pos(&self) -> Pos {
        self.peek().pos
    }

    fn advance(&mut self) -> Token {
        let t = self.peek().clone();
        if self.i < self.toks.len() - 1 {
            self.i += 1;
        }
        t
    }

    fn is_sym(&self, c: u8) -> bool {
        self.peek().tok == Tok::Sym(c)
    }

    fn is_word(&self, w: &str) -> bool {
        matches!(&self.peek().tok, Tok::Ident(s) if s == w)
    }

    fn eat_sym(&mut self, c: u8) -> bool {
        if self.is_sym(c) {
            self.advance();
            true
        } else {
            false
        }
    }

    fn eat_word(&mut self, w: &str) -> bool {
        if self.is_word(w) {
            self.advance();
            true
        } else {
            false
        }
    }

    fn describe(&self) -> String {
        match &self.peek().tok {
            Tok::Ident(s) => format!("\"{s}\""),
            Tok::Int(_) | Tok::BigInt(_) | Tok::Float(_) => "a number".into(),
            Tok::Str(_) => "a string".into(),
            Tok::Sym(c) => format!("\"{}\"", *c as char),
            Tok::Eof => "end of input".into(),
        }
    }

    fn expected(&self, what: &str) -> ProtoError {
        syntax(
            format!("Expected {what}, found {}.", self.describe()),
            self.pos(),
        )
    }

    fn expect_sym(&mut self, c: u8) -> R<()> {
        if self.eat_sym(c) {
            Ok(())
        } else {
            Err(self.expected(&format!("\"{}\"", c as char)))
        }
    }

    fn expect_word(&mut self, w: &str) -> R<()> {
        if self.eat_word(w) {
            Ok(())
        } else {
            Err(self.expected(&format!("\"{w}\"")))
        }
    }

    fn ident(&mut self, what: &str) -> R<(String, Pos)> {
        let pos = self.pos();
        match &self.peek().tok {
            Tok::Ident(s) => {
                let s = s.clone();
                self.advance();
                Ok((s, pos))
            }
            _ => Err(self.expected(what)),
        }
    }

    /// A possibly dotted name, with an optional leading dot.
    fn dotted(&mut self, what: &str) -> R<(String, Pos)> {
        let pos = self.pos();
        let mut s = String::new();
        if self.eat_sym(b'.') {
            s.push('.');
        }
        let (first, _) = self.ident(what)?;
        s.push_str(&first);
        while self.eat_sym(b'.') {
            let (n, _) = self.ident(what)?;
            s.push('.');
            s.push_str(&n);
        }
        Ok((s, pos))
    }

    /// One or more adjacent string literals, joined.
    fn strings(&mut self, what: &str) -> R<(Vec<u8>, Pos)> {
        let pos = self.pos();
        let mut out = match &self.peek().tok {
            Tok::Str(b) => b.clone(),
            _ => return Err(self.expected(what)),
        };
        self.advance();
        while let Tok::Str(b) = &self.peek().tok {
            out.extend_from_slice(b);
            self.advance();
        }
        Ok((out, pos))
    }

    fn utf8_string(&mut self, what: &str) -> R<(String, Pos)> {
        let (b, pos) = self.strings(what)?;
        let s = String::from_utf8(b).map_err(|_| syntax("String is not valid UTF-8.", pos))?;
        Ok((s, pos))
    }

    /// An integer, optionally negative, within `min..=max`.
    fn int(&mut self, what: &str, min: i64, max: i64) -> R<(i64, Pos)> {
        let pos = self.pos();
        let neg = self.eat_sym(b'-');
        let v = match self.peek().tok {
            Tok::Int(Some(v)) => v,
            Tok::Int(None) | Tok::BigInt(_) => return Err(syntax("Integer out of range.", pos)),
            _ => return Err(self.expected(what)),
        };
        self.advance();
        let v = if neg {
            if v > (1u64 << 63) {
                return Err(syntax("Integer out of range.", pos));
            }
            (v as i64).wrapping_neg()
        } else {
            i64::try_from(v).map_err(|_| syntax("Integer out of range.", pos))?
        };
        if v < min || v > max {
            return Err(syntax("Integer out of range.", pos));
        }
        Ok((v, pos))
    }

    fn end_statement(&mut self) -> R<()> {
        self.expect_sym(b';')
    }

    // ---- file ----

    fn file(&mut self) -> R<()> {
        if self.is_word("syntax") || self.is_word("edition") {
            let is_edition = self.is_word("edition");
            // Where protoc reports file-wide editions errors.
            self.out.locs.insert(vec![14], self.pos());
            self.advance();
            self.expect_sym(b'=')?;
            let (v, pos) = self.utf8_string("a string with the syntax or edition")?;
            self.end_statement()?;
            let f = &mut self.out.file;
            match (is_edition, v.as_str()) {
                (false, "proto2") => {}
                (false, "proto3") => {
                    f.syntax = Some("proto3".into());
                    self.out.proto3 = true;
                }
                (true, "2023") | (true, "2024") => {
                    f.syntax = Some("editions".into());
                    f.edition = Some(if v == "2023" {
                        edition::E2023
                    } else {
                        edition::E2024
                    });
                    self.out.editions = true;
                }
                (false, _) => {
                    return Err(syntax(
                        format!("Unrecognized syntax identifier \"{v}\". This parser only recognizes \"proto2\" and \"proto3\"."),
                        pos,
                    ))
                }
                (true, _) => {
                    return Err(syntax(
                        format!("Unknown edition \"{v}\": this parser knows \"2023\" and \"2024\"."),
                        pos,
                    ))
                }
            }
        }
        let mut have_package = false;
        loop {
            if self.peek().tok == Tok::Eof {
                return Ok(());
            }
            if self.eat_sym(b';') {
                continue;
            }
            let pos = self.pos();
            let (kw, _) = self.ident("a top-level statement")?;
            match kw.as_str() {
                "package" => {
                    if have_package {
                        return Err(syntax("Multiple package definitions.", pos));
                    }
                    have_package = true;
                    let (p, ppos) = self.dotted("a package name")?;
                    if p.starts_with('.') {
                        return Err(syntax("Expected identifier.", ppos));
                    }
                    self.end_statement()?;
                    self.out.locs.insert(vec![2], pos);
                    self.package = p.clone();
                    self.out.file.package = Some(p);
                }
                "import" => self.import(pos)?,
                "option" => {
                    let scope = format!("{}.dummy", self.package);
                    self.option_statement(&[], OptKind::File, &scope)?;
                }
                "message" | "export" | "local" | "enum" => {
                    let vis = self.visibility(&kw)?;
                    let is_enum = if vis.is_some() {
                        self.eat_word("enum") || {
                            self.expect_word("message")?;
                            false
                        }
                    } else {
                        kw == "enum"
                    };
                    let scope = self.package.clone();
                    if is_enum {
                        let idx = self.out.file.enum_type.len() as i32;
                        let mut e = self.enum_def(&[5, idx], &scope)?;
                        e.visibility = vis;
                        self.out.file.enum_type.push(e);
                    } else {
                        let idx = self.out.file.message_type.len() as i32;
                        let mut m = DescriptorProto::default();
                        self.message_def(&mut m, &[4, idx], &scope, 0)?;
                        m.visibility = vis;
                        self.out.file.message_type.push(m);
                    }
                }
                "service" => self.service()?,
                "extend" => {
                    let scope = self.package.clone();
                    let mut groups = std::mem::take(&mut self.out.file.message_type);
                    let mut exts = std::mem::take(&mut self.out.file.extension);
                    let r = self.extend_block(&mut exts, &[7], &mut groups, &[4], &scope, 0);
                    self.out.file.message_type = groups;
                    self.out.file.extension = exts;
                    r?;
                }
                "syntax" | "edition" => {
                    return Err(syntax(
                        format!("\"{kw}\" must be the first statement of the file."),
                        pos,
                    ))
                }
                _ => {
                    return Err(syntax(
                        format!("Expected top-level statement (e.g. \"message\"), found \"{kw}\"."),
                        pos,
                    ))
                }
            }
        }
    }

    fn visibility(&mut self, kw: &str) -> R<Option<i32>> {
        match kw {
            "export" | "local" => {
                if self.out.file.edition != Some(edition::E2024) {
                    return Err(syntax(
                        format!("\"{kw}\" is only allowed in edition 2024 and later."),
                        self.pos(),
                    ));
                }
                Ok(Some(if kw == "local" { 1 } else { 2 }))
            }
            _ => Ok(None),
        }
    }

    fn import(&mut self, pos: Pos) -> R<()> {
        let f = &mut self.out.file;
        let idx = f.dependency.len() as i32;
        let mut option_import = false;
        if self.eat_word("public") {
            self.out.file.public_dependency.push(idx);
        } else if self.is_word("weak") {
            if self.out.file.edition == Some(edition::E2024) {
                return Err(syntax(
                    "weak import is not supported in edition 2024 and above. Consider using option import instead.",
                    self.pos(),
                ));
            }
            self.advance();
            self.out.file.weak_dependency.push(idx);
        } else if self.is_word("option") {
            if self.out.file.edition != Some(edition::E2024) {
                return Err(syntax(
                    "\"import option\" is only allowed in edition 2024 and later.",
                    self.pos(),
                ));
            }
            self.advance();
            option_import = true;
        }
        let (name, npos) = self.utf8_string("a string naming the file to import")?;
        if !option_import && !self.out.file.option_dependency.is_empty() {
            return Err(syntax(
                "imports should precede any option imports to ensure proto files can roundtrip.",
                npos,
            ));
        }
        self.end_statement()?;
        if option_import {
            self.out.file.option_dependency.push(name);
            self.out.option_import_pos.push(pos);
        } else {
            self.out.file.dependency.push(name);
            self.out.import_pos.push(pos);
        }
        Ok(())
    }

    // ---- options ----

    /// `option name = value;`
    fn option_statement(&mut self, target: &[i32], kind: OptKind, scope: &str) -> R<()> {
        let o = self.option_body(target, kind, scope, 0)?;
        self.push_option(o);
        self.end_statement()
    }

    /// Record an option statement (and the two facts needed before options
    /// are interpreted).
    fn push_option(&mut self, o: PendingOption) {
        let ident = match &o.value {
            OptValue::Scalar(Scalar {
                lit: Lit::Ident(v), ..
            }) => v.as_str(),
            _ => "",
        };
        if o.name.len() == 1 && !o.name[0].is_ext {
            match (o.kind, o.name[0].name.as_str(), ident) {
                (OptKind::Message, "message_set_wire_format", "true") => {
                    self.out.message_set.insert(o.target.clone());
                }
                (OptKind::Field, "retention", "RETENTION_SOURCE") => {
                    self.out.source_retained.insert(o.target.clone());
                }
                _ => {}
            }
        }
        self.out.options.push(o);
    }

    fn option_name(&mut self) -> R<Vec<NamePart>> {
        let mut parts = Vec::new();
        loop {
            let pos = self.pos();
            if self.eat_sym(b'(') {
                let (n, _) = self.dotted("an extension name")?;
                self.expect_sym(b')')?;
                parts.push(NamePart {
                    name: n,
                    is_ext: true,
                    pos,
                });
            } else {
                let (n, _) = self.ident("an option name")?;
                parts.push(NamePart {
                    name: n,
                    is_ext: false,
                    pos,
                });
            }
            if !self.eat_sym(b'.') {
                return Ok(parts);
            }
        }
    }

    fn option_body(
        &mut self,
        target: &[i32],
        kind: OptKind,
        scope: &str,
        depth: usize,
    ) -> R<PendingOption> {
        let name = self.option_name()?;
        self.expect_sym(b'=')?;
        let value = if self.is_sym(b'{') {
            let pos = self.pos();
            self.advance();
            OptValue::Aggregate(self.text_message(b'}', depth + 1, pos)?)
        } else {
            OptValue::Scalar(self.scalar()?)
        };
        Ok(PendingOption {
            target: target.to_vec(),
            kind,
            scope: scope.to_string(),
            name,
            value,
        })
    }

    /// A field's default: a scalar, where a `float` or `double` default
    /// also takes a decimal integer past 64 bits (as a double, as protoc
    /// reads it).
    fn default_value(&mut self, f: &FieldDescriptorProto) -> R<Scalar> {
        let floating = matches!(f.r#type, Some(field_type::FLOAT | field_type::DOUBLE));
        let k = usize::from(*self.peek_at(0) == Tok::Sym(b'-'));
        if let (true, Tok::BigInt(v)) = (floating, self.peek_at(k).clone()) {
            let pos = self.pos();
            let neg = self.eat_sym(b'-');
            self.advance();
            return Ok(Scalar {
                neg,
                lit: Lit::Float(v),
                pos,
            });
        }
        self.scalar()
    }

    fn scalar(&mut self) -> R<Scalar> {
        let pos = self.pos();
        let neg = self.eat_sym(b'-');
        let lit = match &self.peek().tok {
            Tok::Ident(s) => Lit::Ident(s.clone()),
            Tok::Int(Some(v)) => Lit::Int(*v),
            Tok::Int(None) | Tok::BigInt(_) => {
                return Err(syntax("Integer out of range.", self.pos()))
            }
            Tok::Float(v) => Lit::Float(*v),
            Tok::Str(_) => {
                let (b, _) = self.strings("a string")?;
                return if neg {
                    Err(syntax("A string cannot be negative.", pos))
                } else {
                    Ok(Scalar {
                        neg,
                        lit: Lit::Str(b),
                        pos,
                    })
                };
            }
            _ => return Err(self.expected("a value")),
        };
        self.advance();
        Ok(Scalar { neg, lit, pos })
    }

    /// The fields of a text-format message up to `close`.
    fn text_message(&mut self, close: u8, depth: usize, open: Pos) -> R<Vec<TextField>> {
        if depth > MAX_NESTING {
            return Err(ProtoError::new(
                ProtoErrorKind::TooDeep,
                format!("Option value nested more than {MAX_NESTING} levels deep."),
                open,
            ));
        }
        let mut fields = Vec::new();
        loop {
            if self.eat_sym(close) {
                return Ok(fields);
            }
            if self.peek().tok == Tok::Eof {
                return Err(self.expected(&format!("\"{}\"", close as char)));
            }
            let pos = self.pos();
            let name = if self.eat_sym(b'[') {
                let (n, _) = self.dotted("an extension or type URL")?;
                let name = if self.eat_sym(b'/') {
                    let (t, _) = self.dotted("a type name")?;
                    TextName::Any(n, t)
                } else {
                    TextName::Ext(n)
                };
                self.expect_sym(b']')?;
                name
            } else {
                TextName::Field(self.ident("a field name")?.0)
            };
            let colon = self.eat_sym(b':');
            let value = if self.is_sym(b'[') {
                if !colon {
                    return Err(self.expected("\":\""));
                }
                self.advance();
                let mut items = Vec::new();
                if !self.eat_sym(b']') {
                    loop {
                        items.push(self.text_value(depth)?);
                        if self.eat_sym(b']') {
                            break;
                        }
                        self.expect_sym(b',')?;
                    }
                }
                TextValue::List(items)
            } else if !(colon || self.is_sym(b'{') || self.is_sym(b'<')) {
                return Err(self.expected("\":\""));
            } else {
                self.text_value(depth)?
            };
            fields.push(TextField { name, pos, value });
            if !self.eat_sym(b',') {
                self.eat_sym(b';');
            }
        }
    }

    fn text_value(&mut self, depth: usize) -> R<TextValue> {
        let pos = self.pos();
        if self.eat_sym(b'{') {
            Ok(TextValue::Message(self.text_message(
                b'}',
                depth + 1,
                pos,
            )?))
        } else if self.eat_sym(b'<') {
            Ok(TextValue::Message(self.text_message(
                b'>',
                depth + 1,
                pos,
            )?))
        } else {
            Ok(TextValue::Scalar(self.scalar()?))
        }
    }

    /// `[a = 1, (b) = 2]` after a field, enum value or extension range.
    /// Returns the `default` and `json_name` pseudo-options when `field`.
    fn bracket_options(
        &mut self,
        target: &[i32],
        kind: OptKind,
        scope: &str,
        field: Option<&mut FieldDescriptorProto>,
    ) -> R<()> {
        if !self.eat_sym(b'[') {
            return Ok(());
        }
        let mut field = field;
        loop {
            let pos = self.pos();
            if let Some(f) = field.as_deref_mut() {
                if self.is_word("default") && *self.peek_at(1) == Tok::Sym(b'=') {
                    self.advance();
                    self.advance();
                    // (A field's pseudo-options are all in this list.)
                    if self.out.defaults.last().is_some_and(|d| d.target == target) {
                        return Err(syntax("Already set option \"default\".", pos));
                    }
                    let value = self.default_value(f)?;
                    self.out.defaults.push(PendingDefault {
                        target: target.to_vec(),
                        value,
                    });
                    self.out.locs.insert(pp(target, &[7]), pos);
                } else if self.is_word("json_name") && *self.peek_at(1) == Tok::Sym(b'=') {
                    self.advance();
                    self.advance();
                    if f.json_name.is_some() {
                        return Err(syntax("Already set option \"json_name\".", pos));
                    }
                    if f.extendee.is_some() {
                        return Err(ProtoError::new(
                            ProtoErrorKind::Invalid,
                            "option json_name is not allowed on extension fields.",
                            pos,
                        ));
                    }
                    let (s, _) = self.utf8_string("a string for json_name")?;
                    f.json_name = Some(s);
                } else {
                    let o = self.option_body(target, kind, scope, 0)?;
                    self.push_option(o);
                }
            } else {
                let o = self.option_body(target, kind, scope, 0)?;
                self.push_option(o);
            }
            if self.eat_sym(b']') {
                return Ok(());
            }
            self.expect_sym(b',')?;
        }
    }
}
