//! Decode errors: what kind of problem, the byte offset, and the `$.path`.

use std::fmt;

use crate::bytes::path::{render_path, render_path_short, PathSeg};
use crate::bytes::reader::{ReadError, ReadErrorKind};

/// The kind of problem found in the bytes, for callers that act on it
/// (read more, upgrade, raise a limit) rather than on the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The input ends before the frame does.
    Truncated,
    /// The input does not start with amber's magic byte.
    NotAmber,
    /// A format version or header flag this build does not read.
    Unsupported,
    /// The bytes break the format.
    Malformed,
    /// A configured limit was exceeded.
    Limit,
}

impl ErrorKind {
    /// The name Python sees as `DecodeError.kind`.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Truncated => "truncated",
            ErrorKind::NotAmber => "not_amber",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::Malformed => "malformed",
            ErrorKind::Limit => "limit",
        }
    }
}

/// What went wrong.
#[derive(Debug)]
pub enum Problem<E> {
    /// The bytes are wrong, in the way `ErrorKind` says.
    Data(ErrorKind, String),
    /// The builder refused a well-formed value (for Python: an exception).
    Build(E),
    /// Memory ran out (for the stack of deep nesting): nothing is wrong
    /// with the data.
    OutOfMemory(String),
}

/// A decode error at `offset`, inside the value at `path` (outermost first).
#[derive(Debug)]
pub struct DecodeError<E> {
    pub offset: usize,
    pub problem: Problem<E>,
    pub path: Vec<PathSeg>,
}

impl<E> DecodeError<E> {
    fn new(offset: usize, problem: Problem<E>) -> Self {
        DecodeError {
            offset,
            problem,
            path: Vec::new(),
        }
    }
    pub fn data(offset: usize, kind: ErrorKind, msg: impl Into<String>) -> Self {
        Self::new(offset, Problem::Data(kind, msg.into()))
    }
    pub fn malformed(offset: usize, msg: impl Into<String>) -> Self {
        Self::data(offset, ErrorKind::Malformed, msg)
    }
    /// A value the format reserves for later additions (spec §12): written
    /// by a newer amber, or not amber data at all.
    pub fn reserved(offset: usize, what: impl std::fmt::Display) -> Self {
        Self::data(
            offset,
            ErrorKind::Unsupported,
            format!("{what} is reserved for a later amber (upgrade amber, or the bytes are not amber data)"),
        )
    }
    pub fn truncated(offset: usize, msg: impl Into<String>) -> Self {
        Self::data(offset, ErrorKind::Truncated, msg)
    }
    pub fn limit(offset: usize, msg: impl Into<String>) -> Self {
        Self::data(offset, ErrorKind::Limit, msg)
    }
    pub fn out_of_memory(offset: usize, msg: impl Into<String>) -> Self {
        Self::new(offset, Problem::OutOfMemory(msg.into()))
    }
    pub fn build(offset: usize, err: E) -> Self {
        Self::new(offset, Problem::Build(err))
    }
    /// The kind of a problem in the bytes; `None` for a builder's error or
    /// running out of memory.
    pub fn kind(&self) -> Option<ErrorKind> {
        match self.problem {
            Problem::Data(kind, _) => Some(kind),
            _ => None,
        }
    }
    /// Add an outer path step while unwinding.
    #[cold]
    pub fn within(mut self, seg: PathSeg) -> Self {
        self.path.insert(0, seg);
        self
    }
    pub fn path_string(&self) -> String {
        render_path(&self.path)
    }
    /// The path as a message shows it: shortened past 24 steps (see
    /// [`render_path_short`]).
    pub fn path_for_message(&self) -> String {
        render_path_short(&self.path)
    }
}

/// A reader's error inside a frame whose length was checked is malformed
/// data: the frame's items claim more bytes than the frame holds. (Input
/// that ends before its frame does is found first, as truncated.)
impl<E> From<ReadError> for DecodeError<E> {
    #[cold]
    fn from(e: ReadError) -> Self {
        DecodeError::malformed(e.offset, e.to_string())
    }
}

/// A reader's error in the header: too few bytes are truncated input.
#[cold]
pub(crate) fn header_read<E>(e: ReadError) -> DecodeError<E> {
    match e.kind {
        ReadErrorKind::Truncated { .. } => DecodeError::truncated(e.offset, e.to_string()),
        _ => DecodeError::from(e),
    }
}

/// The result of a decoding step.
pub type Res<T, E> = Result<T, DecodeError<E>>;

impl<E: fmt::Display> fmt::Display for DecodeError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.problem {
            Problem::Data(_, m) | Problem::OutOfMemory(m) => f.write_str(m)?,
            Problem::Build(e) => write!(f, "{e}")?,
        }
        write!(f, " (at byte {}, {})", self.offset, self.path_for_message())
    }
}
