//! The amber object format, version 1 (`docs/spec/format.md`): the first
//! part, on which the others store their Python values.
//!
//! - [`format`]: the header layout and the first-byte table (the spec in code);
//! - [`writer`]: the output buffer and every tag's bytes, in shortest form;
//! - [`header`]: frame headers and stream framing;
//! - [`build`]: the [`build::Build`] interface the walker drives;
//! - [`walker`]: the decode walker (all format rules), a table of short arms
//!   per family of tags;
//! - [`validate`]: a structural validator built on the walker;
//! - [`error`]: decode errors with their offset and `$.path`.

pub mod build;
pub mod error;
pub mod format;
pub mod header;
pub mod validate;
pub mod walker;
pub mod writer;
