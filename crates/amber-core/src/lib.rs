//! amber-core: amber's parts in pure Rust, with no Python in them.
//!
//! - [`bytes`]: the layer every part reads bytes with: a bounds-checked
//!   reader, varints, bounded-stack recursion, `$.path` rendering;
//! - [`codec`]: the amber object format: writer, header, decode walker,
//!   validator;
//! - [`archive`]: the archive container: zip writer and reader, compression,
//!   hashes, `.npy` headers;
//! - [`pg`]: PostgreSQL's binary formats: the COPY BINARY stream (writer and
//!   incremental parser) and the send format of the common types;
//! - [`proto`]: the `.proto` compiler (parser, resolver, options), the
//!   wire form of descriptor sets, and the table-driven wire runtime for
//!   messages of any compiled type.
#![forbid(unsafe_op_in_unsafe_fn)]

pub mod archive;
pub mod bytes;
pub mod codec;
pub mod pg;
pub mod proto;

pub use bytes::path::PathSeg;
pub use codec::build::Build;
pub use codec::error::{DecodeError, ErrorKind, Problem};
pub use codec::header::{frame_need, parse_header, Header, Need};
pub use codec::walker::{decode, Limits, DEFAULT_MAX_DEPTH};
