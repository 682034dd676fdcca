//! Archive errors: what kind of problem, which entry, and where in the file.

use std::fmt;

use crate::bytes::reader::{ReadError, ReadErrorKind};

/// The kind of problem, for callers that act on it rather than on the
/// message (Python sees `ArchiveError.kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArchiveErrorKind {
    /// No zip end record: not a zip file.
    NotZip,
    /// The file ends before a structure it describes.
    Truncated,
    /// A structure that breaks the zip or npy format.
    Malformed,
    /// An entry name that escapes (`..`, absolute) or is otherwise unsafe.
    UnsafeName,
    /// Two entries with one name.
    Duplicate,
    /// A compression method, encryption or multi-disk zip amber does not read.
    Unsupported,
    /// Sizes in the local header, the directory and the data disagree.
    SizeMismatch,
    /// The data fails its CRC-32.
    Checksum,
    /// A compression ratio beyond the limit: a zip bomb.
    Bomb,
}

impl ArchiveErrorKind {
    pub fn name(self) -> &'static str {
        match self {
            ArchiveErrorKind::NotZip => "not_zip",
            ArchiveErrorKind::Truncated => "truncated",
            ArchiveErrorKind::Malformed => "malformed",
            ArchiveErrorKind::UnsafeName => "unsafe_name",
            ArchiveErrorKind::Duplicate => "duplicate",
            ArchiveErrorKind::Unsupported => "unsupported",
            ArchiveErrorKind::SizeMismatch => "size_mismatch",
            ArchiveErrorKind::Checksum => "checksum",
            ArchiveErrorKind::Bomb => "bomb",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchiveError {
    pub kind: ArchiveErrorKind,
    /// The entry at fault, when there is one.
    pub entry: Option<String>,
    /// A byte offset in the file (or in the npy header), when known.
    pub offset: Option<u64>,
    pub msg: String,
}

impl ArchiveError {
    pub fn new(kind: ArchiveErrorKind, msg: impl Into<String>) -> Self {
        ArchiveError {
            kind,
            entry: None,
            offset: None,
            msg: msg.into(),
        }
    }

    #[must_use]
    pub fn at(mut self, offset: u64) -> Self {
        self.offset = Some(offset);
        self
    }

    #[must_use]
    pub fn entry(mut self, name: &str) -> Self {
        self.entry = Some(name.to_string());
        self
    }

    /// A reader's error at `base` + its offset: truncated or malformed.
    pub fn read(e: ReadError, base: u64) -> Self {
        let kind = match e.kind {
            ReadErrorKind::Truncated { .. } => ArchiveErrorKind::Truncated,
            _ => ArchiveErrorKind::Malformed,
        };
        ArchiveError::new(kind, e.to_string()).at(base + e.offset as u64)
    }
}

impl fmt::Display for ArchiveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.msg)?;
        match (&self.entry, self.offset) {
            (Some(e), Some(o)) => write!(f, " (entry {e:?}, at byte {o})"),
            (Some(e), None) => write!(f, " (entry {e:?})"),
            (None, Some(o)) => write!(f, " (at byte {o})"),
            (None, None) => Ok(()),
        }
    }
}

impl std::error::Error for ArchiveError {}

pub type Res<T> = Result<T, ArchiveError>;
