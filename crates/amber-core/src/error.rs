//! Decode errors: what went wrong, the byte offset, and the `$.path`.

use std::fmt;

/// One step of a path into the decoded value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathSeg {
    /// Position in a list, tuple, set or deque.
    Index(usize),
    /// A dict key, already rendered (`.name` for identifiers, `[repr]` otherwise).
    Key(String),
}

/// Render a path as `$`, `$.a[3].b`.
pub fn render_path(path: &[PathSeg]) -> String {
    let mut s = String::from("$");
    for seg in path {
        match seg {
            PathSeg::Index(i) => {
                s.push('[');
                s.push_str(&i.to_string());
                s.push(']');
            }
            PathSeg::Key(k) => s.push_str(k),
        }
    }
    s
}

/// Render a str key as a path segment.
pub fn key_segment(key: &str) -> String {
    let ident = !key.is_empty()
        && !key.starts_with(|c: char| c.is_ascii_digit())
        && key.chars().all(|c| c.is_alphanumeric() || c == '_');
    if ident {
        format!(".{key}")
    } else {
        format!("[{key:?}]")
    }
}

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

impl<E: fmt::Display> fmt::Display for DecodeError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.problem {
            Problem::Format(m) | Problem::Limit(m) | Problem::OutOfMemory(m) => f.write_str(m)?,
            Problem::Build(e) => write!(f, "{e}")?,
        }
        write!(f, " (at byte {}, {})", self.offset, self.path_string())
    }
}
