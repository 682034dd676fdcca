//! Operations on messages, made of the state's steps: wire bytes in
//! ([`parse`]) and out ([`serialize`]), required-field checks
//! ([`required`]), ProtoJSON and dicts ([`json`]), deep copies ([`copy`]),
//! merges ([`merge`]) and checked assignment ([`assign`]).

pub mod assign;
pub mod copy;
pub mod json;
pub mod merge;
pub mod parse;
pub mod required;
pub mod serialize;

use pyo3::exceptions::PyMemoryError;
use pyo3::prelude::*;

/// Run `f`, one level of a walk down a message tree, with enough stack
/// under it: a tree built in Python has no depth limit, so the walks that
/// copy, merge or clean one grow the stack as the decoder does (see
/// `amber_core::bytes::stack`).
pub(crate) fn deeper<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    amber_core::bytes::stack::enter(f, || {
        PyMemoryError::new_err("no memory for the stack of a walk down a deeply nested message")
    })
}
