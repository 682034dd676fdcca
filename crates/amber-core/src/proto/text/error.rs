//! The text format parser's errors: what kind of problem, the token's
//! line, column and byte offset, and the field path.

use std::fmt;

use crate::proto::runtime::error::DecodeKind;

/// Text that is not a valid message of the type: what kind of problem and
/// where (the token's line, column and byte offset, and the field path).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextError {
    /// What kind of problem.
    pub kind: DecodeKind,
    /// Byte offset of the token in the (UTF-8) text.
    pub offset: usize,
    /// 1-based line.
    pub line: usize,
    /// 1-based column (in bytes).
    pub col: usize,
    /// What is wrong.
    pub message: String,
    /// Where: the field path, e.g. `$.child.items[2].n` (repeated fields
    /// and map entries indexed by their position in the text).
    pub path: String,
}

impl fmt::Display for TextError {
    /// `line:col : message`, as Google's `ParseError` says it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{} : {}", self.line, self.col, self.message)
    }
}

impl std::error::Error for TextError {}

/// Why parsing failed.
#[derive(Debug)]
pub enum TextFailure<E> {
    /// The text is not a valid message.
    Syntax(Box<TextError>),
    /// The builder's own error.
    Build(E),
}

impl<E> TextFailure<E> {
    /// `line:col : message`, as Google's `ParseError` says it.
    pub fn describe(&self) -> Option<String> {
        match self {
            TextFailure::Syntax(e) => Some(e.to_string()),
            TextFailure::Build(_) => None,
        }
    }
}
