//! ProtoJSON, protobuf's JSON mapping, for messages of any compiled type:
//! a printer reading through the wire encoder's [`MessageSource`] and a
//! parser driving the wire decoder's [`MessageBuilder`], so the Python
//! edge reuses its source and builder unchanged.
//!
//! Both follow protobuf Python's `json_format` (`MessageToJson`,
//! `Parse`), byte for byte where text is written: 64-bit integers as
//! strings, `double` as Python's `repr`, `float` as protobuf's
//! `ToShortestFloat`, `NaN`/`Infinity` as strings, bytes as base64, enums
//! by name (an open enum's unknown number as a number), maps as objects,
//! unset fields without presence left out unless asked for; the
//! well-known types in their special forms (Timestamp, Duration,
//! FieldMask, Struct/Value/ListValue, the wrappers, Any with `@type`,
//! NullValue as `null`). The layout is `json.dumps`'s (compact with `", "`
//! and `": "`, or indented), `sort_keys` and `ensure_ascii` included.
//!
//! The parser's JSON is strict RFC 8259 (its tokenizer is here, [`lex`]):
//! no comments, trailing commas, bare `NaN`, leading zeros, invalid
//! escapes or lone surrogates, raw control characters or invalid UTF-8;
//! duplicate keys and two members of one oneof are errors; nesting is
//! bounded; errors carry the byte offset, line, column and `$.path`.
//!
//! Where it differs from `json_format`: map entries are written in the
//! source's order (upb's Python maps iterate in hash order, so Google's
//! own order is arbitrary; `sort_keys` makes both equal); the parser
//! refuses some inputs `json_format` lets through (bare `NaN` and
//! `Infinity` for `google.protobuf.Value`, a string or list where a
//! message is expected, `true` for a float or enum field, fractions for
//! enums, base64 with characters outside both alphabets, durations with
//! more than 9 fractional digits, numbers out of a float's range written
//! as strings); a repeated field or map given under both its JSON and
//! `.proto` names gets both lists' elements (json_format keeps the last);
//! the extension syntax (`[pkg.ext]`) is not supported; a `null` given
//! under a field's second name does not clear what the first set.
//!
//! The parser reads through [`Input`]: JSON text ([`lex::Lexer`]), or
//! values of another kind (the Python edge reads dicts and lists in place
//! for `from_dict`; there, dict keys that are not strings are read as
//! `json.dumps` writes them, so `True` is the key `"true"`, which
//! `ParseDict` refuses). The printer writes through [`Sink`]: JSON text
//! ([`Writer`]), or (at the edge) dicts and lists made directly.
//!
//! ```
//! use amber_core::proto::{compile, json, runtime::{DynBuilder, DynSource, Tables}};
//!
//! let mut files = |_: &str| Some(b"syntax = \"proto3\";
//!     message A { int64 id = 1; repeated string tag_names = 2; double d = 3; }".to_vec());
//! let set = compile(&["a.proto"], &mut files, true)?;
//! let t = Tables::from_set(&set).unwrap();
//! let a = t.message_index("A").unwrap();
//! let text = br#"{"id": "7", "tag_names": ["x"], "d": 1e-05}"#;
//! let m = json::parse(&t, a, text, &mut DynBuilder { tables: &t }, &Default::default()).unwrap();
//! let out = json::print(&t, a, &m, &DynSource, &Default::default()).unwrap();
//! assert_eq!(out, r#"{"id": "7", "tagNames": ["x"], "d": 1e-05}"#);
//! let err = json::parse(&t, a, br#"{"id": 1.5}"#, &mut DynBuilder { tables: &t }, &Default::default());
//! let Err(json::ParseFailure::Json(e)) = err else { panic!() };
//! assert_eq!((e.offset, e.path.as_str()), (7, "$.id"));
//! # Ok::<(), amber_core::proto::ProtoError>(())
//! ```
//!
//! [`MessageSource`]: crate::proto::runtime::MessageSource
//! [`MessageBuilder`]: crate::proto::runtime::MessageBuilder

pub mod b64;
pub mod input;
pub mod lex;
pub mod num;
pub mod parse;
pub mod print;
pub mod wkt;
pub mod write;

pub use input::{Input, Num, Peek};
pub use parse::{parse, parse_input, ParseError, ParseFailure, ParseOptions};
pub use print::{print, print_to, PrintFailure, PrintOptions};
pub use write::{Sink, Writer};
