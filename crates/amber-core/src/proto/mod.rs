//! The `.proto` compiler for `amber.proto`, in pure Rust: a lexer and
//! recursive-descent parser for proto2, proto3 and editions (2023, 2024), a
//! resolver/linker that turns parsed files into descriptors equal to
//! protoc's (`--descriptor_set_out --include_imports`), and hand-written
//! wire encoding and decoding of `FileDescriptorSet`.
//!
//! - [`compiler`]: `.proto` text to descriptors ([`compile()`], through a
//!   [`Loader`]): lexer, parser, symbols, name resolution, options, checks,
//!   and the bundled well-known-type files;
//! - [`descriptor`], [`wire`]: descriptor.proto's messages and their wire
//!   form;
//! - [`error`]: [`ProtoError`] (`file:line:col: message`) and
//!   [`WireError`] (byte offset);
//! - [`text`]: the text format; [`escape`]: C escapes undone; [`repr`]:
//!   numbers as Python prints them;
//! - [`runtime`]: the table-driven wire runtime for messages of any
//!   compiled type (decode through a builder trait, encode through a source
//!   trait, a generic tree for tests and debugging).
//!
//! ```
//! use amber_core::proto::{compile, FileDescriptorSet, Message};
//!
//! // Files come from a loader: a closure over memory here, or a DirLoader
//! // for protoc-style include paths; google/protobuf/*.proto are built in.
//! let mut files = |name: &str| match name {
//!     "a.proto" => Some(b"syntax = \"proto3\";
//!         import \"google/protobuf/timestamp.proto\";
//!         message A { google.protobuf.Timestamp at = 1; map<string, int32> n = 2; }"
//!         .to_vec()),
//!     _ => None,
//! };
//! let set = compile(&["a.proto"], &mut files, true)?;
//! assert_eq!(set.file.len(), 2); // timestamp.proto, then a.proto
//! let a = &set.file[1].message_type[0];
//! assert_eq!(a.field[0].type_name.as_deref(), Some(".google.protobuf.Timestamp"));
//! assert_eq!(a.nested_type[0].name.as_deref(), Some("NEntry"));
//! // The same bytes as protoc --include_imports --descriptor_set_out.
//! let bytes = set.encode();
//! assert_eq!(FileDescriptorSet::decode(&bytes).unwrap(), set);
//!
//! let mut bad = |_: &str| Some(b"syntax = \"proto3\";\nmessage A { B b = 1; }".to_vec());
//! let err = compile(&["bad.proto"], &mut bad, true).unwrap_err();
//! assert_eq!(err.to_string(), "bad.proto:2:13: \"B\" is not defined.");
//! # Ok::<(), amber_core::proto::ProtoError>(())
//! ```
//!
//! Limits: messages and option values nest at most
//! [`compiler::parser::MAX_NESTING`] deep in text, encoded messages at most
//! [`wire::MAX_DEPTH`]; import chains of any length load on a growing stack.
//! Not modelled: `SourceCodeInfo` (protoc's `--include_source_info`).

#![warn(missing_docs)]

pub mod compiler;
pub mod descriptor;
pub mod error;
pub mod escape;
pub mod json;
pub mod names;
pub mod repr;
pub mod runtime;
pub mod text;
pub mod wire;

pub use compiler::{compile, DirLoader, Loader};
pub use descriptor::FileDescriptorSet;
pub use error::{Pos, ProtoError, ProtoErrorKind, WireError};
pub use wire::Message;
