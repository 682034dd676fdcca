//! The decoder: walks wire bytes with a message type's table and calls a
//! [`MessageBuilder`] for every value; no intermediate tree is made.
//!
//! Rules (protobuf's): a known field whose wire type does not match its
//! kind is kept as an unknown field; a packable repeated field takes both
//! packed and unpacked elements, mixed; a closed enum's undeclared number
//! is kept as an unknown varint field; a map entry with unknown fields of
//! its own (a closed enum's undeclared value among them) is re-encoded into
//! the parent's unknown fields, as upb does; a singular message field seen
//! twice is merged (the builder hands back the message already there); a
//! scalar seen twice keeps the last value. Every error names the byte
//! offset and the field path, e.g.
//! `$.repeated_nested_message[3].corecursive.optional_int32` (a map
//! entry's index is its position on the wire). Lengths are checked
//! against the bytes present before anything is sliced; nesting is bounded
//! by [`DecodeOptions::max_depth`].
//!
//! - `decoder`: the options, the entry point and the loop over a message's fields;
//! - `maps`: map entries;
//! - `check`: the builder that keeps nothing, for checking sub-messages kept as bytes;
//! - `scan`: the fast check of those sub-messages, for the fields the fast table reads;
//! - `plain`: reading a checked sub-message of plain fields without a builder.

mod check;
mod decoder;
mod maps;
mod plain;
mod scan;

pub use decoder::{decode, DecodeOptions, Failure};
pub(crate) use plain::reads_plain;
pub use plain::{plain_fields, PlainValue};
