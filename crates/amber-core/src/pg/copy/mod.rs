//! PostgreSQL's COPY BINARY stream, as the PostgreSQL documentation of COPY
//! ("Binary Format") defines it:
//!
//! ```text
//! header   11-byte signature  "PGCOPY\n\xff\r\n\0"
//!          int32 flags        bit 16: each tuple carries an OID (refused
//!                             here); bits 17-31: reserved, critical (any set
//!                             is refused); bits 0-15: not critical, ignored
//!          int32 ext length   then that many bytes of header extension
//!                             (skipped)
//! tuple    int16 field count  (the same in every tuple)
//!          per field: int32 length (-1 = NULL), then that many bytes in the
//!          column type's binary send format
//! trailer  int16 -1
//! ```
//!
//! All integers are big-endian. [`CopyWriter`] builds a stream into a buffer
//! the caller ships in chunks; [`CopyParser`] reads one fed in chunks of any
//! size and yields rows whose fields borrow its buffer.

pub mod parser;
pub mod writer;

pub use parser::{CopyParser, Field, Fields, Row};
pub use writer::CopyWriter;

/// The 11 bytes every COPY BINARY stream starts with.
pub const SIGNATURE: &[u8; 11] = b"PGCOPY\n\xff\r\n\0";
/// Signature, flags and extension length.
pub const HEADER_LEN: usize = 19;
/// Header flag: each tuple has an OID field.
pub const FLAG_OIDS: u32 = 1 << 16;
/// Header flag bits that a reader must understand (16 to 31).
pub const FLAGS_CRITICAL: u32 = 0xffff_0000;
/// The field count that ends the stream.
pub const TRAILER: i16 = -1;
