//! The `.proto` compiler: text to descriptors equal to protoc's
//! (`--descriptor_set_out --include_imports`).
//!
//! - [`lexer`], [`parser`]: text to [`ast::ParsedFile`] (a descriptor with
//!   names as written, plus option statements and source positions);
//! - [`symbols`], [`resolve`]: protoc's scoping rules, JSON names, defaults,
//!   number and range checks;
//! - [`options`]: option statements (standard, custom, aggregate) into the
//!   `*Options` structs;
//! - [`checks`], [`rules`], [`naming`]: the checks protoc makes once
//!   options are interpreted;
//! - [`pool`]: what the stages share: the [`Pool`](pool::Pool) of parsed
//!   files and their symbols;
//! - [`mod@compile`]: loading through a [`Loader`], import checks, the output
//!   set; [`wkt`]: the bundled well-known-type files.

pub mod ast;
pub mod checks;
pub mod compile;
pub mod lexer;
pub mod naming;
pub mod options;
pub mod parser;
pub mod pool;
pub mod resolve;
pub mod rules;
pub mod symbols;
pub mod validate;
pub mod wkt;

pub use compile::{compile, DirLoader, Loader};
