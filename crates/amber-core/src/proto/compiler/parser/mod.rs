//! Recursive-descent parser of `.proto` text (proto2, proto3, editions 2023
//! and 2024) into a [`ParsedFile`]: the file's descriptor with type names as
//! written, plus option statements and positions for the resolver.
//!
//! Like protoc's parser it synthesizes map entry types, group types and the
//! oneofs of proto3 `optional` fields. Nesting (messages, aggregate option
//! values) is bounded by [`MAX_NESTING`]; deeper input is an error, never a
//! stack overflow.
//!
//! The rooms, all `impl Parser`: `tokens` (looking ahead and reading
//! tokens), `file` (the top level: syntax, package, imports), `body`
//! (messages, fields, oneofs, extensions), `defs` (enums and services),
//! `options` (option statements and values).

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
mod file;
mod options;
mod tokens;

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
