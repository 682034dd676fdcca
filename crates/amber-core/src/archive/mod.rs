//! amber's archive container: a standard zip file of named entries, with
//! every header and record made and checked here, sans I/O (the caller reads
//! and writes the bytes; see each module).
//!
//! - [`zip`]: the zip writer and reader (ZIP64, stored/deflate/zstd,
//!   aligned data, checked names and sizes);
//! - [`data`]: compression, bounded decompression, CRC-32 and BLAKE3;
//! - [`arrow`]: what an Arrow IPC file declares, checked before it is read
//!   (no compressed bodies, UTF-8 field names);
//! - [`npy`]: NumPy `.npy` headers, written as NumPy writes them and read
//!   without evaluating anything;
//! - [`error`]: [`ArchiveError`](error::ArchiveError) and its kinds.

pub mod arrow;
pub mod data;
pub mod error;
pub mod npy;
pub mod zip;
