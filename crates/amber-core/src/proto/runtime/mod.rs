//! The protobuf wire runtime: decode and encode messages of any type of a
//! compiled [`FileDescriptorSet`](crate::proto::FileDescriptorSet), driven
//! by tables instead of generated code.
//!
//! - [`schema`]: [`Tables`], per message type its fields sorted by number
//!   (dense lookup below 256, binary search above) with kinds, cardinality,
//!   oneofs, closed/open enums, UTF-8 rule, delimited encoding, JSON names
//!   and defaults, every editions feature resolved; [`tables`]: building
//!   them from a descriptor set;
//! - [`scalar`]: [`Scalar`], a scalar or enum value as the decoder gives it
//!   and the encoder takes it;
//! - [`builder`], [`source`]: the traits the runtime makes messages
//!   through ([`MessageBuilder`]) and reads them through ([`MessageSource`]);
//! - [`mod@decode`]: the walker over wire bytes, calling a [`MessageBuilder`]
//!   (the Python edge makes Python objects; no tree in between), with
//!   `bits.rs` reading values and packed runs to the bits messages keep;
//! - [`mod@encode`]: the writer, reading through a [`MessageSource`], with
//!   [`plan`]'s per-type steps (each field's work decided once), into a
//!   buffer filled from its end (`revbuf.rs`);
//! - [`dynamic`]: [`DynMessage`], a generic tree implementing both, with
//!   [`decode_dyn`] and [`encode_dyn`];
//! - [`error`]: [`DecodeError`] (byte offset and field path).
//!
//! Checked against protobuf Python (upb) byte for byte: decoding Google's
//! bytes and re-encoding deterministically gives Google's
//! `SerializeToString(deterministic=True)` (tests/proto_runtime_vectors.rs).
//! upb's corners are followed: a map entry holding unknown fields (other
//! numbers, wrong wire types, a closed enum's undeclared value) goes,
//! re-encoded, to the parent's unknown fields instead of the map; a closed
//! enum's undeclared value is kept with all 64 bits of its varint.
//! Extensions are fields of the type they extend; a `MessageSet`'s
//! members travel as its items, read and written as upb does. Not done
//! here: proto2 `required` fields are not checked (the Python edge does).
//!
//! ```
//! use amber_core::proto::{compile, runtime::{decode_dyn, encode_dyn, Tables}};
//!
//! let mut files = |_: &str| Some(b"syntax = \"proto3\";
//!     message A { int32 x = 1; repeated string s = 2; map<string, A> m = 3; }".to_vec());
//! let set = compile(&["a.proto"], &mut files, true)?;
//! let tables = Tables::from_set(&set).unwrap();
//! let a = tables.message_index("A").unwrap();
//! let bytes = [0x08, 0x96, 0x01, 0x12, 0x02, b'h', b'i'];
//! let m = decode_dyn(&tables, a, &bytes).unwrap();
//! assert_eq!(encode_dyn(&tables, &m, true).unwrap(), bytes);
//! let err = decode_dyn(&tables, a, &[0x12, 0x01, 0xFF]).unwrap_err();
//! assert_eq!(err.to_string(), "invalid UTF-8 in a string field at byte 2 ($.s[0])");
//! # Ok::<(), amber_core::proto::ProtoError>(())
//! ```

mod bits;
pub mod builder;
pub mod decode;
pub mod dynamic;
pub mod encode;
pub mod error;
pub mod plan;
mod revbuf;
pub mod scalar;
pub mod schema;
pub mod source;
pub mod tables;

pub use builder::{MapValue, MessageBuilder, RawMode};
pub use decode::{decode, plain_fields, DecodeOptions, Failure, PlainValue};
pub use dynamic::{
    decode_dyn, decode_dyn_with, encode_dyn, DynBuilder, DynMessage, DynSource, Value,
};
pub use encode::{encode, encode_into, encode_planned, EncodeFailure, EncodeOptions};
pub use error::{DecodeError, DecodeKind, EncodeError, EncodeKind, PathSeg};
pub use plan::EncodePlans;
pub use scalar::{is_zero, Scalar};
pub use schema::{Cardinality, DefaultValue, EnumInfo, FieldInfo, Kind, MessageInfo, Tables};
pub use source::{
    EntryParts, Held, MessageSource, NoEntries, NoSubs, NoTexts, Plain, SrcValue, SubParts,
    TextParts,
};
