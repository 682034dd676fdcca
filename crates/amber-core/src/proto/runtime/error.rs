//! Errors of the wire runtime: the byte offset and the field path.

use std::fmt;

/// One step of a field path: a field's name and, for repeated and map
/// fields, the element's index. Borrowed from the tables: pushing one costs
/// no allocation (the JSON parser and printer keep one while they work).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathSeg<'a> {
    /// The field's name.
    pub name: &'a str,
    /// The element's index (repeated fields; map entries by position).
    pub index: Option<u32>,
}

/// Render a path as `$.a[3].b`.
pub fn render(path: &[PathSeg<'_>]) -> String {
    let mut s = String::from("$");
    for p in path {
        s.push('.');
        s.push_str(p.name);
        if let Some(i) = p.index {
            s.push_str(&format!("[{i}]"));
        }
    }
    s
}

/// Malformed or hostile wire input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    /// Byte offset in the input.
    pub offset: usize,
    /// What is wrong.
    pub message: String,
    /// Where: the field path, e.g. `$.repeated_nested_message[3].corecursive`.
    pub path: String,
}

impl DecodeError {
    /// A new error.
    #[cold]
    pub fn new(offset: usize, message: impl Into<String>, path: String) -> Self {
        DecodeError {
            offset,
            message: message.into(),
            path,
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at byte {} ({})",
            self.message, self.offset, self.path
        )
    }
}

impl std::error::Error for DecodeError {}

/// A message source that did not give what the encoder asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodeError {
    /// What is wrong.
    pub message: String,
    /// Where: the field path.
    pub path: String,
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.path)
    }
}

impl std::error::Error for EncodeError {}
