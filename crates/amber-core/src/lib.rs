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
//!
//! Each part is reached by its path (`amber_core::codec::walker::decode`,
//! `amber_core::proto::runtime::...`): nothing is re-exported at the root,
//! so names that two parts share (each has its `DecodeError`) never clash.
#![forbid(unsafe_op_in_unsafe_fn)]

pub mod archive;
pub mod bytes;
pub mod codec;
pub mod pg;
pub mod proto;
