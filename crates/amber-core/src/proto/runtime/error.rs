//! Errors of the wire runtime, the text format and ProtoJSON: what kind of
//! problem, the byte offset and the field path.

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

/// The kind of problem in bytes or text being read, for callers that act
/// on it rather than on the message (Python sees it as
/// `amber.proto.DecodeError.kind`, through [`DecodeKind::name`]). Names
/// other parts of amber also use mean the same there: `truncated`,
/// `malformed` and `limit` (the codec), `type_mismatch` and `out_of_range`
/// (PostgreSQL values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DecodeKind {
    /// The input ends early: a message, string or list left open.
    Truncated,
    /// Bad syntax or bytes: not JSON, not the text format, not the wire
    /// format, or a value's text that is not what its form requires (base64,
    /// a timestamp, an escape).
    Malformed,
    /// A field (or an enum value's name) the message type does not have;
    /// `ignore_unknown_fields` / `allow_unknown_field` skip these.
    UnknownField,
    /// A value of the wrong type for its field (a string for an integer, an
    /// object for a scalar, `null` in a list).
    TypeMismatch,
    /// A number out of its field's range, or an enum number a closed enum
    /// lacks.
    OutOfRange,
    /// Nesting deeper than the limit.
    Limit,
    /// A field, key or oneof given twice where that is refused.
    Duplicate,
}

impl DecodeKind {
    /// The name Python sees as `DecodeError.kind`.
    pub fn name(self) -> &'static str {
        match self {
            DecodeKind::Truncated => "truncated",
            DecodeKind::Malformed => "malformed",
            DecodeKind::UnknownField => "unknown_field",
            DecodeKind::TypeMismatch => "type_mismatch",
            DecodeKind::OutOfRange => "out_of_range",
            DecodeKind::Limit => "limit",
            DecodeKind::Duplicate => "duplicate",
        }
    }
}

/// Malformed or hostile wire input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    /// What kind of problem.
    pub kind: DecodeKind,
    /// Byte offset in the input.
    pub offset: usize,
    /// What is wrong.
    pub message: String,
    /// Where: the field path, e.g. `$.repeated_nested_message[3].corecursive`.
    pub path: String,
}

impl DecodeError {
    /// A new error, of kind [`DecodeKind::Malformed`].
    #[cold]
    pub fn new(offset: usize, message: impl Into<String>, path: String) -> Self {
        DecodeError {
            kind: DecodeKind::Malformed,
            offset,
            message: message.into(),
            path,
        }
    }
}

impl DecodeError {
    /// The same error, of kind `kind`.
    #[must_use]
    pub fn with_kind(mut self, kind: DecodeKind) -> Self {
        self.kind = kind;
        self
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

/// The kind of problem that stops a message from being written (wire
/// bytes, JSON or the text format), for callers that act on it rather than
/// on the message (Python sees it as `amber.EncodeError.kind`, through
/// [`EncodeKind::name`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EncodeKind {
    /// Messages nested deeper than the limit, or the output over what a
    /// length can say (2 GiB).
    Limit,
    /// A value of the wrong type for its field: a message where a scalar
    /// belongs, a message of another type, a number kept for a string.
    TypeMismatch,
    /// A value outside what its form can say: a `Timestamp` or `Duration`
    /// out of range, a non-finite `Value.number_value`, an enum number a
    /// closed enum lacks (JSON).
    OutOfRange,
    /// A value whose contents its form refuses: a string that is not UTF-8
    /// where the output must be text, an `Any` whose bytes do not parse, a
    /// `FieldMask` path that has no JSON name.
    InvalidValue,
    /// A container changed while it was being written.
    Mutated,
    /// What the schema lacks for writing the value: a map entry type
    /// without key and value, a well-known type without its fields.
    Unsupported,
}

impl EncodeKind {
    /// The name Python sees as `EncodeError.kind`.
    pub fn name(self) -> &'static str {
        match self {
            EncodeKind::Limit => "limit",
            EncodeKind::TypeMismatch => "type_mismatch",
            EncodeKind::OutOfRange => "out_of_range",
            EncodeKind::InvalidValue => "invalid_value",
            EncodeKind::Mutated => "mutated",
            EncodeKind::Unsupported => "unsupported",
        }
    }
}

/// A message the encoder or a printer could not write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodeError {
    /// What kind of problem.
    pub kind: EncodeKind,
    /// What is wrong.
    pub message: String,
    /// Where: the field path.
    pub path: String,
}

impl EncodeError {
    /// A new error of kind `kind`, without a path yet.
    #[cold]
    pub fn new(kind: EncodeKind, message: impl Into<String>) -> Self {
        EncodeError {
            kind,
            message: message.into(),
            path: String::new(),
        }
    }
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.path)
    }
}

impl std::error::Error for EncodeError {}
