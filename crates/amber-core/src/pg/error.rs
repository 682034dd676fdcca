//! PostgreSQL binary-format errors: what kind of problem, and where (byte
//! offset, row and column when known).
//!
//! Offsets from the type decoders (`pg::types`) are relative to the start of
//! the value they were given; the COPY parser's are absolute in the stream.
//! [`PgError::rebase`] turns the first into the second.

use std::fmt;

use crate::bytes::reader::ReadError;

/// The kind of problem, for callers that act on it rather than on the
/// message (Python sees it as a string through [`PgErrorKind::name`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PgErrorKind {
    /// The input ended inside a structure (a COPY stream without its
    /// trailer, or a row cut short).
    Truncated,
    /// Bytes that break the format: a bad signature, a negative length other
    /// than -1, a field of the wrong size, invalid UTF-8, a bad sign word.
    Malformed,
    /// Well-formed input that amber does not read: OIDs in a COPY stream,
    /// unknown critical header flags, a jsonb version other than 1.
    Unsupported,
    /// A value outside the range PostgreSQL accepts for its type (a date past
    /// 5874897 AD, a time past 24:00, a numeric with too large a scale).
    OutOfRange,
    /// A value of another type than expected (an array's element OID).
    TypeMismatch,
    /// A value the encoder cannot write in the type (a NUL byte in text).
    InvalidValue,
    /// A COPY row with more or fewer fields than it declared or than the
    /// stream's other rows have.
    FieldCount,
    /// A writer used out of order (a row after the trailer).
    State,
}

impl PgErrorKind {
    /// The name Python sees as `PgError.kind`.
    pub fn name(self) -> &'static str {
        match self {
            PgErrorKind::Truncated => "truncated",
            PgErrorKind::Malformed => "malformed",
            PgErrorKind::Unsupported => "unsupported",
            PgErrorKind::OutOfRange => "out_of_range",
            PgErrorKind::TypeMismatch => "type_mismatch",
            PgErrorKind::InvalidValue => "invalid_value",
            PgErrorKind::FieldCount => "field_count",
            PgErrorKind::State => "state",
        }
    }
}

/// A problem with PostgreSQL binary data, and where it was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgError {
    pub kind: PgErrorKind,
    pub message: String,
    /// Byte offset: in the COPY stream, or in the value for type decoders.
    pub offset: Option<u64>,
    /// 0-based index of the COPY row (tuple), when known.
    pub row: Option<u64>,
    /// 0-based index of the field in its row, when known.
    pub column: Option<usize>,
}

impl PgError {
    pub fn new(kind: PgErrorKind, message: impl Into<String>) -> Self {
        PgError {
            kind,
            message: message.into(),
            offset: None,
            row: None,
            column: None,
        }
    }

    #[cold]
    pub fn malformed(message: impl Into<String>) -> Self {
        Self::new(PgErrorKind::Malformed, message)
    }

    #[cold]
    pub fn truncated(message: impl Into<String>) -> Self {
        Self::new(PgErrorKind::Truncated, message)
    }

    #[cold]
    pub fn out_of_range(message: impl Into<String>) -> Self {
        Self::new(PgErrorKind::OutOfRange, message)
    }

    #[cold]
    pub fn invalid_value(message: impl Into<String>) -> Self {
        Self::new(PgErrorKind::InvalidValue, message)
    }

    #[cold]
    pub fn unsupported(message: impl Into<String>) -> Self {
        Self::new(PgErrorKind::Unsupported, message)
    }

    #[must_use]
    pub fn at(mut self, offset: u64) -> Self {
        self.offset = Some(offset);
        self
    }

    #[must_use]
    pub fn row(mut self, row: u64) -> Self {
        self.row = Some(row);
        self
    }

    #[must_use]
    pub fn column(mut self, column: usize) -> Self {
        self.column = Some(column);
        self
    }

    /// Move an offset relative to a value to the stream: add `base` (the
    /// value's first byte in the stream), or set it when there was none.
    #[must_use]
    pub fn rebase(mut self, base: u64) -> Self {
        self.offset = Some(self.offset.map_or(base, |o| base.saturating_add(o)));
        self
    }

    /// A bounds-checked read inside a value whose length was known: the value
    /// is shorter than its own contents claim, so it is malformed.
    #[cold]
    pub(crate) fn read(e: ReadError) -> Self {
        PgError::malformed(e.to_string()).at(e.offset as u64)
    }
}

impl fmt::Display for PgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        let mut parts: Vec<String> = Vec::new();
        if let Some(r) = self.row {
            parts.push(format!("row {r}"));
        }
        if let Some(c) = self.column {
            parts.push(format!("column {c}"));
        }
        if let Some(o) = self.offset {
            parts.push(format!("at byte {o}"));
        }
        if !parts.is_empty() {
            write!(f, " ({})", parts.join(", "))?;
        }
        Ok(())
    }
}

impl std::error::Error for PgError {}

impl From<ReadError> for PgError {
    #[cold]
    fn from(e: ReadError) -> Self {
        PgError::read(e)
    }
}

pub type Res<T> = Result<T, PgError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_where() {
        let e = PgError::malformed("bad length -2").at(40).row(3).column(1);
        assert_eq!(e.to_string(), "bad length -2 (row 3, column 1, at byte 40)");
        assert_eq!(PgError::truncated("x").to_string(), "x");
        assert_eq!(e.kind.name(), "malformed");
    }

    #[test]
    fn rebase_adds_or_sets() {
        assert_eq!(PgError::malformed("x").at(2).rebase(100).offset, Some(102));
        assert_eq!(PgError::malformed("x").rebase(100).offset, Some(100));
    }
}
