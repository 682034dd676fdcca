//! Decode errors: what went wrong, the byte offset, and the `$.path`.

use std::fmt;

use crate::bytes::path::{render_path, PathSeg};
use crate::bytes::reader::ReadError;

/// What went wrong.
#[derive(Debug)]
pub enum Problem<E> {
    /// The bytes break the format.
    Format(String),
    /// A configured limit was exceeded.
    Limit(String),
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
    pub fn format(offset: usize, msg: impl Into<String>) -> Self {
        DecodeError {
            offset,
            problem: Problem::Format(msg.into()),
            path: Vec::new(),
        }
    }
    pub fn limit(offset: usize, msg: impl Into<String>) -> Self {
        DecodeError {
            offset,
            problem: Problem::Limit(msg.into()),
            path: Vec::new(),
        }
    }
    pub fn out_of_memory(offset: usize, msg: impl Into<String>) -> Self {
        DecodeError {
            offset,
            problem: Problem::OutOfMemory(msg.into()),
            path: Vec::new(),
        }
    }
    pub fn build(offset: usize, err: E) -> Self {
        DecodeError {
            offset,
            problem: Problem::Build(err),
            path: Vec::new(),
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
}

/// A reader's error is a format error at its offset.
impl<E> From<ReadError> for DecodeError<E> {
    #[cold]
    fn from(e: ReadError) -> Self {
        DecodeError::format(e.offset, e.to_string())
    }
}

/// The result of a decoding step.
pub type Res<T, E> = Result<T, DecodeError<E>>;

impl<E: fmt::Display> fmt::Display for DecodeError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.problem {
            Problem::Format(m) | Problem::Limit(m) | Problem::OutOfMemory(m) => f.write_str(m)?,
            Problem::Build(e) => write!(f, "{e}")?,
        }
        write!(f, " (at byte {}, {})", self.offset, self.path_string())
    }
}
