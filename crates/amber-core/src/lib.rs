//! amber-core: the amber object format in pure Rust, with no Python in it.
//!
//! - [`format`]: the header and the first-byte table (the spec in code);
//! - [`writer`]: encoder primitives that append items in shortest form;
//! - [`decode`]: the generic decode walker, driven by a [`decode::Build`];
//! - [`validate`]: a structural validator built on the walker;
//! - [`stack`]: recursion on a bounded stack, for both walkers;
//! - [`reader`], [`varint`], [`error`]: bounds-checked reading and errors.
#![forbid(unsafe_op_in_unsafe_fn)]

pub mod decode;
pub mod error;
pub mod format;
pub mod reader;
pub mod stack;
pub mod validate;
pub mod varint;
pub mod writer;

pub use decode::{
    decode, frame_need, parse_header, Build, Header, Limits, Need, DEFAULT_MAX_DEPTH,
};
pub use error::{DecodeError, PathSeg, Problem};
