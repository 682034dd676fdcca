//! The ProtoJSON parser: JSON text into calls on a [`MessageBuilder`] (the
//! same trait the wire decoder drives), with `json_format.Parse`'s rules.
//!
//! This file holds the entry points, the options, the error and the
//! parser's state; the rest is `impl Parser`, by room: `tokens` (reading
//! JSON tokens, errors with kind, offset and path), `object` (a message's
//! members), `containers` (maps and repeated fields), `values` (one scalar
//! converted to a field's type), `wkt_forms` (the well-known types' JSON
//! forms), and `keys` (duplicate keys refused in linear time).

use std::borrow::Cow;
use std::collections::hash_map::RandomState;
use std::collections::HashSet;
use std::fmt;
use std::hash::{BuildHasher, BuildHasherDefault, Hasher};

use crate::proto::json::b64;
use crate::proto::json::input::{Input, Num, Peek};
use crate::proto::json::lex::{LexError, Lexer};
use crate::proto::json::num;
use crate::proto::json::wkt::{self, Wkt, NULL_VALUE};
use crate::proto::runtime::builder::{MapValue, MessageBuilder};
use crate::proto::runtime::error::{render, DecodeKind, PathSeg};
use crate::proto::runtime::scalar::Scalar;
use crate::proto::runtime::schema::{Cardinality, FieldInfo, Kind, MessageInfo, Tables};
use crate::proto::wire;

mod containers;
mod keys;
mod object;
mod tokens;
mod values;
mod wkt_forms;

/// The parser's settings.
#[derive(Debug, Clone, Copy)]
pub struct ParseOptions {
    /// Skip object members that name no field, and enum names that name
    /// no value (`json_format.Parse(..., ignore_unknown_fields=True)`).
    pub ignore_unknown_fields: bool,
    /// Deepest nesting of messages (`json_format`'s
    /// `max_recursion_depth`, 100; the top message counts 1), and of JSON
    /// values skipped.
    pub max_depth: usize,
}

impl Default for ParseOptions {
    fn default() -> Self {
        ParseOptions {
            ignore_unknown_fields: false,
            max_depth: wire::MAX_DEPTH,
        }
    }
}

/// Text that is not valid ProtoJSON for the message type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// What kind of problem.
    pub kind: DecodeKind,
    /// Byte offset in the input.
    pub offset: usize,
    /// Line (1-based).
    pub line: usize,
    /// Column (1-based, in bytes).
    pub col: usize,
    /// What is wrong.
    pub message: String,
    /// Where: the field path, e.g. `$.repeated_nested_message[3].a`.
    pub path: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            // Not text (Python objects): the path says where.
            return write!(f, "{} ({})", self.message, self.path);
        }
        write!(
            f,
            "{} at line {} column {} (byte {}) ({})",
            self.message, self.line, self.col, self.offset, self.path
        )
    }
}

impl std::error::Error for ParseError {}

/// Why parsing failed: the input, or the builder.
#[derive(Debug)]
pub enum ParseFailure<E> {
    /// Malformed text, or text that does not fit the message type.
    Json(Box<ParseError>),
    /// The builder's own error.
    Build(E),
}

type Res<T, E> = Result<T, ParseFailure<E>>;

/// Parse `text`, one JSON value, as a message of type `ty` made with `b`.
pub fn parse<B: MessageBuilder>(
    tables: &Tables,
    ty: u32,
    text: &[u8],
    b: &mut B,
    opts: &ParseOptions,
) -> Res<B::Msg, B::Err> {
    parse_input(tables, ty, Lexer::new(text), b, opts)
}

/// Parse one JSON value read from `input` (text, or another [`Input`]) as
/// a message of type `ty` made with `b`.
pub fn parse_input<'a, I: Input<'a>, B: MessageBuilder>(
    tables: &Tables,
    ty: u32,
    input: I,
    b: &mut B,
    opts: &ParseOptions,
) -> Res<B::Msg, B::Err> {
    let mut p = Parser {
        t: tables,
        o: *opts,
        inp: input,
        path: Vec::new(),
        _a: std::marker::PhantomData,
    };
    let mut m = b.start(ty).map_err(ParseFailure::Build)?;
    crate::bytes::stack::enter(
        || p.message(b, ty, &mut m, 1),
        || ParseFailure::Json(Box::new(p_err(0, "out of stack"))),
    )?;
    if !p.inp.at_end() {
        let at = p.inp.pos();
        return p.err(DecodeKind::Malformed, at, "extra data after the JSON value");
    }
    Ok(m)
}

fn p_err(offset: usize, msg: &str) -> ParseError {
    ParseError {
        kind: DecodeKind::Limit,
        offset,
        line: 0,
        col: 0,
        message: msg.into(),
        path: "$".into(),
    }
}

/// A scalar token.
enum Tok<'a> {
    Str(Cow<'a, str>),
    Num(Num<'a>),
    Bool(bool),
    Null,
}

/// Why a scalar did not convert: a plain error, or an enum name that
/// names no value (skipped with `ignore_unknown_fields`).
enum Bad {
    Msg(DecodeKind, String),
    UnknownEnum(String),
}

struct Parser<'t, 'a, I> {
    t: &'t Tables,
    o: ParseOptions,
    inp: I,
    path: Vec<PathSeg<'t>>,
    _a: std::marker::PhantomData<&'a ()>,
}

impl<'t, 'a, I: Input<'a>> Parser<'t, 'a, I> {}
