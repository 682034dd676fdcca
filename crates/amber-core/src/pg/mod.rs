//! PostgreSQL's binary formats, in pure Rust: the COPY BINARY stream and the
//! binary send format of the common types, for bulk loads (`COPY ... FROM
//! STDIN (FORMAT binary)`) and reads (`COPY ... TO STDOUT (FORMAT binary)`)
//! through psycopg's `cursor.copy()`. Sans-I/O: the writer fills a buffer
//! the caller ships; the parser is fed whatever bytes arrived.
//!
//! - [`types`]: types by OID; each type's encoder and decoder;
//! - [`copy`]: the COPY BINARY writer and the incremental parser;
//! - [`encoding`]: the client encoding text travels in;
//! - [`error`]: [`PgError`], with the kind, byte offset, row and column.
//!
//! Format reference: the PostgreSQL documentation of COPY, "Binary Format",
//! and each type's `*send` / `*recv` function in `src/backend/utils/adt`.
//! Every integer is big-endian (network byte order).

pub mod copy;
pub mod encoding;
pub mod error;
pub mod types;
pub mod wire;

pub use copy::{CopyParser, CopyWriter, Field, Row};
pub use encoding::ClientEncoding;
pub use error::{PgError, PgErrorKind};
pub use types::{decode_value, encode_value, PgType, Scalar, Value};
