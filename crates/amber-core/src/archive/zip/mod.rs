//! The zip container (PKWARE's APPNOTE 6.3.10), sans I/O: the writer makes
//! every header, directory and end record as bytes for the caller to write,
//! and the reader checks the bytes the caller read. Entries are stored,
//! deflated or zstd-compressed (method 93); ZIP64 where sizes or offsets
//! need it; no encryption, no multi-disk archives.
//!
//! - `format`: signatures, record lengths, flags, `Method`, `CentralEntry`
//!   (re-exported here);
//! - `read`: the end record, central directory and local headers checked;
//! - `write`: `ZipWriter`, the headers and records of a new archive;
//! - `names`: entry names checked and made safe.

mod format;
pub mod names;
pub mod read;
pub mod write;

pub use format::*;
