//! The ProtoJSON parser: JSON text into calls on a [`MessageBuilder`] (the
//! same trait the wire decoder drives), with `json_format.Parse`'s rules.

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

/// A set of small integers (oneof indexes, keys seen).
#[derive(Default)]
struct Seen {
    small: u128,
    big: Vec<u64>,
}

impl Seen {
    /// Mark `i`; whether it was marked already.
    fn insert(&mut self, i: usize) -> bool {
        if i < 128 {
            let bit = 1u128 << i;
            let was = self.small & bit != 0;
            self.small |= bit;
            return was;
        }
        let (w, bit) = ((i - 128) / 64, 1u64 << ((i - 128) % 64));
        if self.big.len() <= w {
            self.big.resize(w + 1, 0);
        }
        let was = self.big[w] & bit != 0;
        self.big[w] |= bit;
        was
    }
}

/// Keys seen, for the duplicate check of keys that name no field: linear
/// time in their number. The table holds only each key's hash (keyed, as
/// `HashMap`'s, so input cannot be made to collide), 8 bytes an entry that
/// growing never rehashes from the text; the keys themselves are kept in
/// order, and compared only when a hash is seen again.
#[derive(Default)]
struct KeySet<'a> {
    hashes: HashSet<u64, BuildHasherDefault<Spread>>,
    keys: Vec<Cow<'a, str>>,
    state: RandomState,
}

impl<'a> KeySet<'a> {
    /// Add `k`; if it was there already, `Err(k)`.
    fn insert(&mut self, k: Cow<'a, str>) -> Result<(), Cow<'a, str>> {
        let h = self.state.hash_one(k.as_ref());
        // Two different keys with one 64-bit keyed hash: practically never,
        // and then the keys are compared.
        if !self.hashes.insert(h) && self.keys.contains(&k) {
            return Err(k);
        }
        self.keys.push(k);
        Ok(())
    }
}

/// The hasher of [`KeySet`]'s table, whose keys are hashes already: the
/// value as it is.
#[derive(Default)]
struct Spread(u64);

impl Hasher for Spread {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
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

impl<'t, 'a, I: Input<'a>> Parser<'t, 'a, I> {
    #[cold]
    fn err<T, E>(&self, kind: DecodeKind, offset: usize, msg: impl Into<String>) -> Res<T, E> {
        let (line, col) = self.inp.line_col(offset);
        Err(ParseFailure::Json(Box::new(ParseError {
            kind,
            offset,
            line,
            col,
            message: msg.into(),
            path: render(&self.path),
        })))
    }

    /// A scalar that did not convert, at `offset`: an enum name that names
    /// no value is an unknown field.
    #[cold]
    fn bad<T, E>(&self, offset: usize, bad: Bad) -> Res<T, E> {
        match bad {
            Bad::Msg(kind, msg) => self.err(kind, offset, msg),
            Bad::UnknownEnum(msg) => self.err(DecodeKind::UnknownField, offset, msg),
        }
    }

    #[inline]
    fn lex<T, E>(&self, r: Result<T, LexError>) -> Res<T, E> {
        match r {
            Ok(v) => Ok(v),
            Err(e) => self.err(e.kind, e.offset, e.message),
        }
    }

    fn message<B: MessageBuilder>(
        &mut self,
        b: &mut B,
        ty: u32,
        m: &mut B::Msg,
        depth: usize,
    ) -> Res<(), B::Err> {
        let at = self.here();
        if depth > self.o.max_depth {
            return self.err(
                DecodeKind::Limit,
                at,
                format!("messages nested deeper than {}", self.o.max_depth),
            );
        }
        let t = self.t;
        let info = t.message(ty);
        crate::bytes::stack::descend(
            depth,
            || match wkt::wkt_of(&info.full_name) {
                None => self.object(b, ty, m, depth, false),
                Some(w) => self.wkt(b, w, ty, m, depth),
            },
            || ParseFailure::Json(Box::new(p_err(at, "out of stack"))),
        )
    }

    /// The position of the next token.
    fn here(&mut self) -> usize {
        self.inp.pos()
    }

    /// After an object member: true if another follows.
    fn next_member<E>(&mut self) -> Res<bool, E> {
        let r = self.inp.next_member();
        self.lex(r)
    }

    /// After an array item: true if another follows.
    fn next_item<E>(&mut self) -> Res<bool, E> {
        let r = self.inp.next_item();
        self.lex(r)
    }

    /// The error for a value other than `what`: of kind type when it is a
    /// JSON value (of another type), the lexer's kind otherwise.
    #[cold]
    fn wrong<T, E>(&mut self, what: &str) -> Res<T, E> {
        let value = self.inp.peek() != Peek::Other;
        match self.inp.expected(what) {
            Ok(v) => Ok(v),
            Err(mut e) => {
                if value {
                    e.kind = DecodeKind::TypeMismatch;
                }
                self.err(e.kind, e.offset, e.message)
            }
        }
    }

    /// Enter an object; false if it is empty (and left). `what` names
    /// what was expected (made only for the error).
    fn open_object<E>(&mut self, what: impl FnOnce() -> String) -> Res<bool, E> {
        if self.inp.peek() != Peek::Object {
            return self.wrong(&what());
        }
        let r = self.inp.open_object("an object");
        self.lex(r)
    }

    /// Enter an array; false if it is empty (and left).
    fn open_array<E>(&mut self, what: impl FnOnce() -> String) -> Res<bool, E> {
        if self.inp.peek() != Peek::Array {
            return self.wrong(&what());
        }
        let r = self.inp.open_array("an array");
        self.lex(r)
    }

    fn key<E>(&mut self) -> Res<(Cow<'a, str>, usize), E> {
        let at = self.here();
        let k = self.inp.key();
        Ok((self.lex(k)?, at))
    }

    fn skip<E>(&mut self) -> Res<(), E> {
        let r = self.inp.skip_value(self.o.max_depth);
        self.lex(r)
    }

    fn literal<E>(&mut self) -> Res<(), E> {
        let r = self.inp.literal();
        self.lex(r)
    }

    /// A regular message's object. `skip_type`: an Any's members, where
    /// `@type` is not a field.
    fn object<B: MessageBuilder>(
        &mut self,
        b: &mut B,
        ty: u32,
        m: &mut B::Msg,
        depth: usize,
        skip_type: bool,
    ) -> Res<(), B::Err> {
        let t = self.t;
        let info = t.message(ty);
        if !self.open_object(|| format!("an object for message {}", info.full_name))? {
            return Ok(());
        }
        let mut oneofs = Seen::default();
        let mut keys = Seen::default();
        // Unknown keys seen (ignore_unknown_fields), for the duplicate
        // check: hashed, so many keys cost linear time; made on the first.
        let mut unknown: Option<KeySet<'a>> = None;
        // Keys usually come in field order (as printed): try the field
        // after the last one first.
        let mut hint = 0;
        loop {
            let (k, at) = self.key()?;
            if skip_type && k == "@type" {
                self.skip()?;
            } else if let Some((i, by_json)) = find_field(info, &k, hint) {
                hint = i + 1;
                // The same key twice (json_format's duplicate check); a
                // field's JSON name and its proto name are two keys.
                if keys.insert(i * 2 + by_json as usize) {
                    return self.err(DecodeKind::Duplicate, at, format!("duplicate key {k:?}"));
                }
                let f = &info.fields[i];
                self.path.push(PathSeg {
                    name: &f.name,
                    index: None,
                });
                self.field(b, info, m, f, depth, &mut oneofs)?;
                self.path.pop();
            } else if self.o.ignore_unknown_fields {
                if let Err(k) = unknown.get_or_insert_with(KeySet::default).insert(k) {
                    return self.err(DecodeKind::Duplicate, at, format!("duplicate key {k:?}"));
                }
                self.skip()?;
            } else {
                return self.err(
                    DecodeKind::UnknownField,
                    at,
                    format!(
                        "Message type \"{}\" has no field named \"{k}\"",
                        info.full_name
                    ),
                );
            }
            if !self.next_member()? {
                return Ok(());
            }
        }
    }

    /// One member's value: field `f` of message `m`.
    fn field<B: MessageBuilder>(
        &mut self,
        b: &mut B,
        info: &MessageInfo,
        m: &mut B::Msg,
        f: &'t FieldInfo,
        depth: usize,
        oneofs: &mut Seen,
    ) -> Res<(), B::Err> {
        let at = self.here();
        if self.inp.peek() == Peek::Null {
            self.literal()?;
            // null: not set, except where null is a value.
            if let Cardinality::Singular { .. } = f.card {
                match f.kind {
                    Kind::Message(vty) if self.is_wkt(vty, Wkt::Value) => {
                        let mut sub = b.begin(m, f, vty).map_err(ParseFailure::Build)?;
                        self.set_null(b, vty, &mut sub)?;
                        b.end(m, f, sub).map_err(ParseFailure::Build)?;
                    }
                    Kind::Enum(e) if self.t.enums[e as usize].full_name == NULL_VALUE => {
                        b.set(m, f, Scalar::Enum(0)).map_err(ParseFailure::Build)?;
                    }
                    _ => {}
                }
            }
            return Ok(());
        }
        if let Some(o) = f.oneof {
            if oneofs.insert(o as usize) {
                return self.err(
                    DecodeKind::Duplicate,
                    at,
                    format!(
                        "Message type \"{}\" should not have multiple \"{}\" oneof fields",
                        info.full_name,
                        info.oneofs.get(o as usize).map_or("", |s| s.as_str())
                    ),
                );
            }
        }
        match (f.card, f.kind) {
            (Cardinality::Map, _) => self.map(b, m, f, depth),
            (Cardinality::Repeated { .. }, _) => self.repeated(b, m, f, depth),
            (_, Kind::Message(sty)) => {
                let mut sub = b.begin(m, f, sty).map_err(ParseFailure::Build)?;
                self.message(b, sty, &mut sub, depth + 1)?;
                b.end(m, f, sub).map_err(ParseFailure::Build)
            }
            (_, kind) => {
                let tok = self.token()?;
                let mut buf = Vec::new();
                match self.convert(kind, &tok, &mut buf, false) {
                    Ok(s) => b.set(m, f, s).map_err(ParseFailure::Build),
                    Err(Bad::UnknownEnum(_)) if self.o.ignore_unknown_fields => Ok(()),
                    Err(bad) => self.bad(at, bad),
                }
            }
        }
    }

    fn is_wkt(&self, ty: u32, w: Wkt) -> bool {
        wkt::wkt_of(&self.t.message(ty).full_name) == Some(w)
    }

    /// Set a `google.protobuf.Value` to `null_value`.
    fn set_null<B: MessageBuilder>(
        &mut self,
        b: &mut B,
        vty: u32,
        v: &mut B::Msg,
    ) -> Res<(), B::Err> {
        match self.t.message(vty).field(1) {
            Some(nf) => b.set(v, nf, Scalar::Enum(0)).map_err(ParseFailure::Build),
            None => {
                let at = self.here();
                self.err(
                    DecodeKind::Malformed,
                    at,
                    "google.protobuf.Value without null_value",
                )
            }
        }
    }

    fn map<B: MessageBuilder>(
        &mut self,
        b: &mut B,
        m: &mut B::Msg,
        f: &'t FieldInfo,
        depth: usize,
    ) -> Res<(), B::Err> {
        let t = self.t;
        let Kind::Message(entry) = f.kind else {
            let at = self.here();
            return self.err(
                DecodeKind::Malformed,
                at,
                "a map field without an entry type",
            );
        };
        let einfo = t.message(entry);
        let (Some(kf), Some(vf)) = (einfo.field(1), einfo.field(2)) else {
            let at = self.here();
            return self.err(
                DecodeKind::Malformed,
                at,
                "map entry type without key and value",
            );
        };
        if !self.open_object(|| format!("an object for map field {}", f.name))? {
            return Ok(());
        }
        let mut seen: Vec<(Cow<'a, str>, usize)> = Vec::new();
        let mut i = 0u32;
        loop {
            if let Some(last) = self.path.last_mut() {
                last.index = Some(i);
            }
            let (k, at) = self.key()?;
            let mut kbuf = Vec::new();
            let ktok = Tok::Str(k);
            let key = match self.convert(kf.kind, &ktok, &mut kbuf, true) {
                Ok(s) => s,
                Err(Bad::Msg(kind, e)) => {
                    return self.err(kind, at, format!("invalid map key: {e}"))
                }
                Err(Bad::UnknownEnum(e)) => {
                    return self.err(
                        DecodeKind::UnknownField,
                        at,
                        format!("invalid map key: {e}"),
                    )
                }
            };
            let vat = self.here();
            match vf.kind {
                Kind::Message(vty) => {
                    let mut sub = b.start(vty).map_err(ParseFailure::Build)?;
                    if self.inp.peek() == Peek::Null && self.is_wkt(vty, Wkt::Value) {
                        self.literal()?;
                        self.set_null(b, vty, &mut sub)?;
                    } else if self.inp.peek() == Peek::Null {
                        return self.err(
                            DecodeKind::TypeMismatch,
                            vat,
                            "null is not allowed as a map value",
                        );
                    } else {
                        self.message(b, vty, &mut sub, depth + 1)?;
                    }
                    b.map_entry(m, f, key, MapValue::Message(sub))
                        .map_err(ParseFailure::Build)?;
                }
                kind => {
                    let tok = self.token()?;
                    if let Tok::Null = tok {
                        return self.err(
                            DecodeKind::TypeMismatch,
                            vat,
                            "null is not allowed as a map value",
                        );
                    }
                    let mut buf = Vec::new();
                    match self.convert(kind, &tok, &mut buf, false) {
                        Ok(s) => b
                            .map_entry(m, f, key, MapValue::Scalar(s))
                            .map_err(ParseFailure::Build)?,
                        Err(Bad::UnknownEnum(_)) if self.o.ignore_unknown_fields => {}
                        Err(bad) => return self.bad(vat, bad),
                    }
                }
            }
            let Tok::Str(k) = ktok else { unreachable!() };
            seen.push((k, at));
            i += 1;
            if !self.next_member()? {
                break;
            }
        }
        if seen.len() > 1 {
            seen.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
            if let Some(w) = seen.windows(2).find(|w| w[0].0 == w[1].0) {
                let (k, at) = (&w[1].0, w[1].1);
                if let Some(last) = self.path.last_mut() {
                    last.index = None;
                }
                return self.err(DecodeKind::Duplicate, at, format!("duplicate key {k:?}"));
            }
        }
        Ok(())
    }

    fn repeated<B: MessageBuilder>(
        &mut self,
        b: &mut B,
        m: &mut B::Msg,
        f: &'t FieldInfo,
        depth: usize,
    ) -> Res<(), B::Err> {
        if !self.open_array(|| format!("an array for repeated field {}", f.name))? {
            return Ok(());
        }
        let mut i = 0u32;
        loop {
            if let Some(last) = self.path.last_mut() {
                last.index = Some(i);
            }
            let at = self.here();
            match f.kind {
                Kind::Message(ety) => {
                    let null = self.inp.peek() == Peek::Null;
                    if null && !self.is_wkt(ety, Wkt::Value) {
                        return self.err(
                            DecodeKind::TypeMismatch,
                            at,
                            "null is not allowed to be used as an element in a repeated field",
                        );
                    }
                    let mut sub = b.begin(m, f, ety).map_err(ParseFailure::Build)?;
                    if null {
                        self.literal()?;
                        self.set_null(b, ety, &mut sub)?;
                    } else {
                        self.message(b, ety, &mut sub, depth + 1)?;
                    }
                    b.end(m, f, sub).map_err(ParseFailure::Build)?;
                }
                kind => {
                    let tok = self.token()?;
                    if let Tok::Null = tok {
                        return self.err(
                            DecodeKind::TypeMismatch,
                            at,
                            "null is not allowed to be used as an element in a repeated field",
                        );
                    }
                    let mut buf = Vec::new();
                    match self.convert(kind, &tok, &mut buf, false) {
                        Ok(s) => b.push(m, f, s).map_err(ParseFailure::Build)?,
                        Err(Bad::UnknownEnum(_)) if self.o.ignore_unknown_fields => {}
                        Err(bad) => return self.bad(at, bad),
                    }
                }
            }
            i += 1;
            if !self.next_item()? {
                return Ok(());
            }
        }
    }

    /// A scalar token (an object or array is an error here).
    fn token<E>(&mut self) -> Res<Tok<'a>, E> {
        let at = self.here();
        let r = match self.inp.peek() {
            Peek::String => self.inp.string().map(Tok::Str),
            Peek::True => self.inp.literal().map(|_| Tok::Bool(true)),
            Peek::False => self.inp.literal().map(|_| Tok::Bool(false)),
            Peek::Null => self.inp.literal().map(|_| Tok::Null),
            Peek::Object => {
                return self.err(
                    DecodeKind::TypeMismatch,
                    at,
                    "expected a scalar value, found an object",
                )
            }
            Peek::Array => {
                return self.err(
                    DecodeKind::TypeMismatch,
                    at,
                    "expected a scalar value, found an array",
                )
            }
            Peek::Number => self.inp.number().map(Tok::Num),
            Peek::Other => self.inp.expected("a value"),
        };
        self.lex(r)
    }

    /// A scalar of `kind` from a token (`key`: a map key, always a
    /// string). Strings and bytes borrow from `tok` or `buf`.
    fn convert<'x>(
        &self,
        kind: Kind,
        tok: &'x Tok<'a>,
        buf: &'x mut Vec<u8>,
        key: bool,
    ) -> Result<Scalar<'x>, Bad> {
        let msg = |s: String| Bad::Msg(DecodeKind::TypeMismatch, s);
        let range = |s: String| Bad::Msg(DecodeKind::OutOfRange, s);
        match kind {
            Kind::Int32
            | Kind::Sint32
            | Kind::Sfixed32
            | Kind::Int64
            | Kind::Sint64
            | Kind::Sfixed64
            | Kind::Uint32
            | Kind::Fixed32
            | Kind::Uint64
            | Kind::Fixed64 => {
                let v = match tok {
                    Tok::Num(n) => num_int(*n),
                    Tok::Str(s) => num::integer_of(s, false),
                    Tok::Bool(b) => Err(format!(
                        "Bool value {} is not acceptable for integer field",
                        if *b { "True" } else { "False" }
                    )),
                    Tok::Null => Err("null is not an integer".into()),
                }
                .map_err(msg)?;
                let out = || range(format!("Value out of range: {v}"));
                Ok(match kind {
                    Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => {
                        Scalar::I32(i32::try_from(v).map_err(|_| out())?)
                    }
                    Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => {
                        Scalar::I64(i64::try_from(v).map_err(|_| out())?)
                    }
                    Kind::Uint32 | Kind::Fixed32 => {
                        Scalar::U32(u32::try_from(v).map_err(|_| out())?)
                    }
                    _ => Scalar::U64(u64::try_from(v).map_err(|_| out())?),
                })
            }
            Kind::Double | Kind::Float => {
                let v = match tok {
                    Tok::Num(n) => {
                        let v = num_f64(*n);
                        if v.is_nan() {
                            return Err(msg(
                                "Couldn't parse NaN, use quoted \"NaN\" instead".into()
                            ));
                        }
                        if v.is_infinite() {
                            return Err(range(format!(
                                "Couldn't parse {} or value too {}, use quoted \"{}\" instead",
                                if v > 0.0 { "Infinity" } else { "-Infinity" },
                                if v > 0.0 { "large" } else { "small" },
                                if v > 0.0 { "Infinity" } else { "-Infinity" },
                            )));
                        }
                        v
                    }
                    Tok::Str(s) => special_float(s)
                        .or_else(|| num::parse_float_text(s))
                        .ok_or_else(|| msg(format!("Couldn't parse float: {s}")))?,
                    _ => return Err(msg("Expected a number or a string for a float field".into())),
                };
                if kind == Kind::Float {
                    if v.is_finite() && v.abs() > f32::MAX as f64 {
                        return Err(range(format!(
                            "Float value too {}",
                            if v > 0.0 { "large" } else { "small" }
                        )));
                    }
                    Ok(Scalar::F32(v as f32))
                } else {
                    Ok(Scalar::F64(v))
                }
            }
            Kind::Bool => match tok {
                Tok::Bool(b) if !key => Ok(Scalar::Bool(*b)),
                Tok::Str(s) if key && s == "true" => Ok(Scalar::Bool(true)),
                Tok::Str(s) if key && s == "false" => Ok(Scalar::Bool(false)),
                Tok::Str(s) if key => Err(msg(format!("Expected \"true\" or \"false\", not {s}"))),
                _ => Err(msg("Expected true or false without quotes".into())),
            },
            Kind::String => match tok {
                Tok::Str(s) => Ok(Scalar::Str(s.as_bytes())),
                _ => Err(msg("Expected a string".into())),
            },
            Kind::Bytes => match tok {
                Tok::Str(s) => {
                    *buf = b64::decode(s.as_bytes())
                        .map_err(|e| Bad::Msg(DecodeKind::Malformed, e))?;
                    Ok(Scalar::Bytes(buf))
                }
                _ => Err(msg("Expected a base64 string for a bytes field".into())),
            },
            Kind::Enum(e) => {
                let info = &self.t.enums[e as usize];
                let n = match tok {
                    Tok::Str(s) => {
                        if let Some((_, n)) = info.names.iter().find(|v| v.0 == **s) {
                            return Ok(Scalar::Enum(*n));
                        }
                        match num::parse_int_exact(s) {
                            Some(n) => n,
                            None => {
                                return Err(Bad::UnknownEnum(format!(
                                    "Invalid enum value {s} for enum type {}",
                                    info.full_name
                                )))
                            }
                        }
                    }
                    Tok::Num(n) => num_int(*n).map_err(msg)?,
                    _ => {
                        return Err(msg(format!(
                            "Invalid enum value for enum type {}",
                            info.full_name
                        )))
                    }
                };
                let n = i32::try_from(n).map_err(|_| {
                    range(format!(
                        "Invalid enum value {n} for enum type {}",
                        info.full_name
                    ))
                })?;
                if info.closed && !info.contains(n) {
                    return Err(range(format!(
                        "Invalid enum value {n} for enum type {}",
                        info.full_name
                    )));
                }
                Ok(Scalar::Enum(n))
            }
            Kind::Message(_) => Err(msg("a message where a scalar was expected".into())),
        }
    }
}

/// The integer a number stands for (json_format's `_ConvertInteger`: a
/// float must be integral).
fn num_int(n: Num<'_>) -> Result<i128, String> {
    match n {
        Num::Text(n) => num::integer_of(n.text, false),
        Num::Int(v) => Ok(v),
        Num::Float(f) if f.is_finite() && f.fract() == 0.0 => Ok(if f.abs() >= 1.7e38 {
            if f < 0.0 {
                i128::MIN
            } else {
                i128::MAX
            }
        } else {
            f as i128
        }),
        Num::Float(f) => Err(format!("Couldn't parse integer: {f}")),
    }
}

/// A number as a double (text that overflows: an infinity, as Python's
/// json reads it).
fn num_f64(n: Num<'_>) -> f64 {
    match n {
        Num::Text(n) => n.text.parse().unwrap_or(f64::NAN),
        Num::Int(v) => v as f64,
        Num::Float(f) => f,
    }
}

/// `NaN`, `Infinity`, `-Infinity` (and the other spellings Python's
/// `float()` reads, but not `nan`, which json_format refuses).
fn special_float(s: &str) -> Option<f64> {
    if s == "nan" {
        return None;
    }
    let (neg, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let v = if body.eq_ignore_ascii_case("nan") {
        f64::NAN
    } else if body.eq_ignore_ascii_case("inf") || body.eq_ignore_ascii_case("infinity") {
        f64::INFINITY
    } else {
        return None;
    };
    Some(if neg { -v } else { v })
}

/// The field a key names: by JSON name first, then by `.proto` name; with
/// whether it was the JSON name (distinct from the other when they differ).
/// `hint`: the index to try first.
#[inline]
fn find_field(info: &MessageInfo, key: &str, hint: usize) -> Option<(usize, bool)> {
    if let Some(f) = info.fields.get(hint) {
        // JSON names are unique in a message (protoc checks): a match
        // here is the answer.
        if f.json_name == key {
            return Some((hint, true));
        }
    }
    if let Some(i) = info.fields.iter().position(|f| f.json_name == key) {
        return Some((i, true));
    }
    let i = info.fields.iter().position(|f| f.name == key)?;
    Some((i, info.fields[i].json_name == key))
}
