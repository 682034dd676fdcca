//! Why a value or a stream could not be written or read, and the amber
//! exceptions that say so: `amber.EncodeError` naming the row, column and
//! value, `amber.DecodeError` with the stream offset, row and column.

use amber_core::pg::{PgError, PgType};
use pyo3::prelude::*;

use crate::errors;

/// Why a value could not be written or read.
pub enum Fail {
    /// (Writing) the value's kind does not go in the column's type.
    Mismatch,
    /// The kind is right but the value or its bytes are not: the core's
    /// error (out of range, malformed, a NUL in text).
    Data(PgError),
    /// Python code raised (`json.dumps` or `json.loads`, an adapter,
    /// `__float__`, a constructor).
    Py(PyErr),
}

impl From<PgError> for Fail {
    fn from(e: PgError) -> Self {
        Fail::Data(e)
    }
}

impl From<PyErr> for Fail {
    fn from(e: PyErr) -> Self {
        Fail::Py(e)
    }
}

impl From<std::convert::Infallible> for Fail {
    fn from(e: std::convert::Infallible) -> Self {
        match e {}
    }
}

pub(super) fn place(row: u64, name: &str) -> String {
    if !name.is_empty() && name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_') {
        format!("$[{row}].{name}")
    } else {
        format!("$[{row}][{name:?}]")
    }
}

pub(super) fn type_name(oid: u32) -> String {
    PgType::from_oid(oid).map_or_else(|| format!("type {oid}"), |t| t.name())
}

pub(super) fn short_repr(o: &Bound<'_, PyAny>) -> String {
    let r = o
        .repr()
        .map(|r| r.to_string())
        .unwrap_or_else(|_| "<unprintable>".into());
    if r.chars().count() > 80 {
        format!("{}...", r.chars().take(77).collect::<String>())
    } else {
        r
    }
}

/// A value that could not be written, as `amber.EncodeError` naming the
/// row, the column and the value.
pub(super) fn encode_fail(
    py: Python<'_>,
    f: Fail,
    row: u64,
    name: &str,
    oid: u32,
    what: String,
    source: &str,
) -> PyErr {
    let ty = type_name(oid);
    let (kind, detail, cause) = match encode_parts(py, f, &ty, source) {
        Ok(parts) => parts,
        Err(e) => return e,
    };
    errors::make(
        py,
        errors::encode_error(py),
        kind,
        // A detail that already quotes the value ("70000 is out of range for int2")
        // is not followed by it again.
        if detail.starts_with(&what) {
            format!("row {row}, column '{name}' ({ty}): {detail}")
        } else {
            format!("row {row}, column '{name}' ({ty}): {detail}: {what}")
        },
        None,
        Some(place(row, name)),
        cause,
    )
}

/// What an `EncodeError` for `f` says: its kind, the detail and the cause;
/// or, as `Err`, an exception that passes through as it is (see
/// `errors::passes_through`). `source` names the value's type, `ty` the
/// column's.
pub(super) fn encode_parts(
    py: Python<'_>,
    f: Fail,
    ty: &str,
    source: &str,
) -> Result<(&'static str, String, Option<PyErr>), PyErr> {
    Ok(match f {
        Fail::Mismatch => (
            "type_mismatch",
            format!("cannot write a value of type {source} as {ty}"),
            None,
        ),
        Fail::Data(e) => (e.kind.name(), e.message, None),
        Fail::Py(e) if errors::passes_through(py, &e) => return Err(e),
        Fail::Py(e) => ("raised", errors::described(py, &e), Some(e)),
    })
}

/// A value that could not be read, as `amber.DecodeError` with the stream
/// offset (for COPY), the row and the column.
pub(super) fn decode_fail(
    py: Python<'_>,
    f: Fail,
    row: u64,
    name: &str,
    oid: u32,
    offset: Option<u64>,
) -> PyErr {
    let ty = type_name(oid);
    let (kind, detail, cause, at) = match f {
        Fail::Data(e) => (e.kind.name().to_owned(), e.message, None, e.offset),
        // Reading never compares a value's kind with a type.
        Fail::Mismatch => (
            "type_mismatch".into(),
            "unexpected value".into(),
            None,
            None,
        ),
        Fail::Py(e) => {
            if errors::passes_through(py, &e) {
                return e;
            }
            // An amber frame in bytea that does not decode: the codec's own kind and
            // message (as a registered cursor gives them), with a hint for raw bytes.
            let amber = {
                let value = e.value(py);
                value
                    .is_instance(errors::decode_error(py))
                    .unwrap_or(false)
                    .then(|| {
                        let kind = value
                            .getattr(pyo3::intern!(py, "kind"))
                            .and_then(|k| k.extract::<String>())
                            .unwrap_or_else(|_| "raised".into());
                        let hint = if kind == "not_amber" {
                            "; this connection reads bytea as amber (amber.pg.register): read \
                             raw bytes through a connection or cursor without it"
                        } else {
                            ""
                        };
                        (kind, format!("{value}{hint}"))
                    })
            };
            if let Some((kind, detail)) = amber {
                (kind, detail, Some(e), None)
            } else {
                ("raised".into(), errors::described(py, &e), Some(e), None)
            }
        }
    };
    let offset = match (offset, at) {
        (Some(base), Some(within)) => Some(base + within),
        (Some(base), None) => Some(base),
        _ => None,
    };
    errors::make(
        py,
        errors::decode_error(py),
        &kind,
        format!("row {row}, column '{name}' ({ty}): {detail}"),
        offset.map(|o| o as usize),
        Some(place(row, name)),
        cause,
    )
}

/// A broken COPY stream (framing, not a value), as `amber.DecodeError`.
pub(super) fn stream_fail(py: Python<'_>, e: PgError) -> PyErr {
    let mut msg = format!("COPY stream: {}", e.message);
    if let Some(r) = e.row {
        msg.push_str(&format!(" (row {r})"));
    }
    errors::make(
        py,
        errors::decode_error(py),
        e.kind.name(),
        msg,
        e.offset.map(|o| o as usize),
        None,
        None,
    )
}
