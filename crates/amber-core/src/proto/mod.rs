//! The `.proto` compiler for `amber.proto`, in pure Rust: a lexer and
//! recursive-descent parser for proto2, proto3 and editions (2023, 2024), a
//! resolver/linker that turns parsed files into descriptors equal to
//! protoc's (`--descriptor_set_out --include_imports`), and hand-written
//! wire encoding and decoding of `FileDescriptorSet`.
//!
//! - [`lexer`], [`parser`]: text to [`ast::ParsedFile`] (a descriptor with
//!   names as written, plus option statements and source positions);
//! - [`symbols`], [`resolve`]: protoc's scoping rules, JSON names, defaults,
//!   number and range checks;
//! - [`options`]: option statements (standard, custom, aggregate) into the
//!   `*Options` structs;
//! - [`compile`]: loading through a [`Loader`], import checks, the output
//!   set; [`wkt`]: the bundled well-known-type files;
//! - [`descriptor`], [`wire`]: descriptor.proto's messages and their wire
//!   form;
//! - [`error`]: [`ProtoError`] (`file:line:col: message`) and
//!   [`WireError`] (byte offset).

#![warn(missing_docs)]

pub mod ast;
pub mod checks;
pub mod compile;
pub mod descriptor;
pub mod error;
pub mod lexer;
pub mod names;
pub mod naming;
pub mod options;
pub mod parser;
pub mod resolve;
pub mod rules;
pub mod symbols;
pub mod wire;
pub mod wkt;

pub use compile::{compile, DirLoader, Loader};
pub use descriptor::FileDescriptorSet;
pub use error::{Pos, ProtoError, ProtoErrorKind, WireError};
pub use wire::Message;
