//! `.proto` errors: what kind of problem, and where — `file:line:col` for
//! source text, a byte offset for encoded descriptors.

use std::fmt;

/// The kind of problem, for callers that act on it rather than on the
/// message (Python sees it as a string through [`ProtoErrorKind::name`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProtoErrorKind {
    /// Text that does not follow the `.proto` grammar (including bad
    /// literals and text that is not UTF-8 where UTF-8 is needed).
    Syntax,
    /// Two definitions of one name, or a name used twice where names must
    /// be unique.
    Duplicate,
    /// A type, extendee or option name that resolves to nothing (or to
    /// something of the wrong kind).
    Undefined,
    /// A field or enum number that clashes with another, is reserved, or is
    /// out of range; a bad range.
    Number,
    /// An option that cannot be applied (unknown name, wrong value type).
    Option,
    /// An import that the loader could not find.
    ImportNotFound,
    /// Files that import each other.
    ImportCycle,
    /// Nesting deeper than the parser's limit.
    TooDeep,
    /// A rule of the language other than the above (e.g. `required` in
    /// proto3).
    Invalid,
}

impl ProtoErrorKind {
    /// The name Python sees as `ProtoError.kind`.
    pub fn name(self) -> &'static str {
        match self {
            ProtoErrorKind::Syntax => "syntax",
            ProtoErrorKind::Duplicate => "duplicate",
            ProtoErrorKind::Undefined => "undefined",
            ProtoErrorKind::Number => "number",
            ProtoErrorKind::Option => "option",
            ProtoErrorKind::ImportNotFound => "import_not_found",
            ProtoErrorKind::ImportCycle => "import_cycle",
            ProtoErrorKind::TooDeep => "too_deep",
            ProtoErrorKind::Invalid => "invalid",
        }
    }
}

/// A problem in `.proto` text, with the file and the 1-based line and
/// column where it was found (0 when not known; then `Display` shows
/// `file: message`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtoError {
    /// What kind of problem.
    pub kind: ProtoErrorKind,
    /// What was expected, or what is wrong.
    pub message: String,
    /// The file, as imported.
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column (tabs advance to the next multiple of 8, as protoc
    /// counts them).
    pub col: u32,
}

impl ProtoError {
    /// A new error at a position.
    #[cold]
    pub fn new(kind: ProtoErrorKind, message: impl Into<String>, pos: Pos) -> Self {
        ProtoError {
            kind,
            message: message.into(),
            file: String::new(),
            line: pos.line,
            col: pos.col,
        }
    }

    /// Set the file, when not set yet.
    #[must_use]
    pub fn in_file(mut self, file: &str) -> Self {
        if self.file.is_empty() {
            self.file = file.to_string();
        }
        self
    }
}

impl fmt::Display for ProtoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            // No position (a root file that is missing, say).
            return write!(f, "{}: {}", self.file, self.message);
        }
        write!(
            f,
            "{}:{}:{}: {}",
            self.file, self.line, self.col, self.message
        )
    }
}

impl std::error::Error for ProtoError {}

/// A position in `.proto` text: 1-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Pos {
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub col: u32,
}

/// A problem in encoded descriptor bytes, with the absolute byte offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireError {
    /// Byte offset in the input.
    pub offset: usize,
    /// What is wrong.
    pub message: String,
    /// The input ends early: a varint, a fixed-width value or a
    /// length-prefixed value runs past the end of its message (or a group
    /// is left open), rather than bytes that break the format.
    pub truncated: bool,
}

impl WireError {
    /// A new error at `offset`: bytes that break the format.
    #[cold]
    pub fn new(offset: usize, message: impl Into<String>) -> Self {
        WireError {
            offset,
            message: message.into(),
            truncated: false,
        }
    }

    /// A new error at `offset`: the input ends early.
    #[cold]
    pub fn ends_early(offset: usize, message: impl Into<String>) -> Self {
        WireError {
            offset,
            message: message.into(),
            truncated: true,
        }
    }
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.message, self.offset)
    }
}

impl std::error::Error for WireError {}
