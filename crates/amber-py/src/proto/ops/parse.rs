//! Wire bytes and the text format into messages, through the builder of
//! `state::build` (see there for what a parse keeps natively and as places
//! in its input).

use amber_core::proto::runtime::{decode, DecodeOptions, Failure, RawMode};
use amber_core::proto::text::{parse_text, ParseOptions, TextFailure};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::errors;
use crate::ffi::buffer::InputBuffer;
use crate::proto::ops::merge::merge_owned;
use crate::proto::state::build::{Builder, Stashed};
use crate::proto::state::cell::Borrow;
use crate::proto::state::message::{release, Message, PyMessage};
use crate::proto::state::schema::{Schema, SchemaRef};

/// The schema and type of `m`, for a builder of messages of its type (text
/// and JSON parses).
pub(crate) fn schema_of(m: &Bound<'_, PyMessage>) -> PyResult<(SchemaRef, u32)> {
    let b = m.state()?;
    Ok((b.s.clone_ref(m.py()), b.ty))
}

/// Put a parsed message `new` into `m`: in place of its contents
/// (`replace`), or merged in.
pub(crate) fn install(m: &Bound<'_, PyMessage>, new: Message, replace: bool) -> PyResult<()> {
    let py = m.py();
    if replace {
        let old = m.state_mut()?.take_contents(new);
        release(py, old);
        Ok(())
    } else {
        merge_owned(py, &mut *m.state_mut()?, new)
    }
}

/// Parse the text format into `m` (replacing its contents).
pub fn from_text(m: &Bound<'_, PyMessage>, text: &str, opts: ParseOptions) -> PyResult<()> {
    let (s, ty) = schema_of(m)?;
    let mut builder = Builder::new(m.py(), &s);
    let draft = match parse_text(&s.tables, ty, text, &mut builder, opts) {
        Ok(d) => d,
        Err(TextFailure::Build(Stashed)) => return Err(builder.take_err()),
        Err(TextFailure::Syntax(e)) => {
            let py = m.py();
            return Err(errors::proto_decode(
                py,
                e.kind.name(),
                e.to_string(),
                Some(e.offset),
                Some(e.path),
            ));
        }
    };
    install(m, draft, true)
}

/// Decode `data` (any bytes-like object) as a message of `m`'s type and
/// merge it in (after clearing `m` when `replace`). Returns the length.
pub fn merge_from_bytes(
    m: &Bound<'_, PyMessage>,
    data: &Bound<'_, PyAny>,
    replace: bool,
) -> PyResult<usize> {
    let (s, ty) = {
        let b = m.state()?;
        (b.s.clone_ref(m.py()), b.ty)
    };
    let (new, n) = decode_bytes(m.py(), &s, ty, data)?;
    install(m, new, replace)?;
    Ok(n)
}

/// Decode `data` (any bytes-like object) as a new message of type `ty`.
pub fn from_bytes(
    py: Python<'_>,
    s: &SchemaRef,
    ty: u32,
    data: &Bound<'_, PyAny>,
) -> PyResult<Message> {
    Ok(decode_bytes(py, s, ty, data)?.0)
}

/// Decode `data`: the message and the input's length. The messages keep
/// the input for their strings and bytes: a `bytes` object as it is, any
/// other buffer (which may change after the parse) copied.
fn decode_bytes(
    py: Python<'_>,
    s: &SchemaRef,
    ty: u32,
    data: &Bound<'_, PyAny>,
) -> PyResult<(Message, usize)> {
    let input = match data.cast_exact::<PyBytes>() {
        Ok(b) => b.clone(),
        Err(_) => {
            let buf = InputBuffer::get(data)?;
            if u32::try_from(buf.bytes().len()).is_err() {
                // Too long for spans: values become objects as they come.
                return decode_in(Builder::new(py, s), s, ty, buf.bytes(), data);
            }
            PyBytes::new(py, buf.bytes())
        }
    };
    let bytes = input.as_bytes();
    let builder = if u32::try_from(bytes.len()).is_ok() {
        Builder::for_input(py, s, input.clone(), bytes, RawMode::Check)
    } else {
        Builder::new(py, s)
    };
    decode_in(builder, s, ty, bytes, data)
}

/// Decode `bytes` (from `data`) with `builder`.
fn decode_in(
    mut builder: Builder<'_>,
    s: &Schema,
    ty: u32,
    bytes: &[u8],
    data: &Bound<'_, PyAny>,
) -> PyResult<(Message, usize)> {
    match decode(&s.tables, ty, bytes, &mut builder, DecodeOptions::default()) {
        Ok(m) => Ok((m, bytes.len())),
        Err(Failure::Wire(e)) => {
            let msg = e.to_string();
            Err(errors::proto_decode(
                data.py(),
                e.kind.name(),
                msg,
                Some(e.offset),
                Some(e.path),
            ))
        }
        Err(Failure::Build(Stashed)) => Err(builder.take_err()),
    }
}
