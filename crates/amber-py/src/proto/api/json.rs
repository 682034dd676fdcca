//! ProtoJSON's Python functions, which `amber.proto.Message` wraps in
//! `to_json`/`from_json`/`from_dict`.

use amber_core::proto::json::{self, PrintOptions};
use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::errors;
use crate::ffi::buffer::InputBuffer;
use crate::proto::ops::json::{merge_input, print_error, PyInput};
use crate::proto::ops::serialize::Source;
use crate::proto::state::cell::Borrow;
use crate::proto::state::message::PyMessage;

/// `m` as ProtoJSON text, with `json_format.MessageToJson`'s options
/// (`indent=None`: one line; a negative indent counts as 0, as in
/// `json.dumps`).
#[pyfunction]
#[pyo3(signature = (
    m,
    *,
    preserving_proto_field_name = false,
    use_integers_for_enums = false,
    always_print_fields_with_no_presence = false,
    indent = None,
    sort_keys = false,
    ensure_ascii = true,
))]
#[allow(clippy::too_many_arguments)]
pub fn proto_to_json(
    m: &Bound<'_, PyMessage>,
    preserving_proto_field_name: bool,
    use_integers_for_enums: bool,
    always_print_fields_with_no_presence: bool,
    indent: Option<isize>,
    sort_keys: bool,
    ensure_ascii: bool,
) -> PyResult<String> {
    crate::errors::guard(|| {
        let py = m.py();
        let opts = PrintOptions {
            preserving_proto_field_name,
            use_integers_for_enums,
            always_print_fields_with_no_presence,
            indent: indent.map(|n| n.max(0) as usize),
            sort_keys,
            ensure_ascii,
            ..PrintOptions::default()
        };
        let root = m.state()?;
        let src = Source::new(py);
        let out = json::print(&root.s.tables, root.ty, &*root, &src, &opts);
        let out = match out {
            Ok(s) => s,
            Err(e) => return Err(print_error(py, e, &src)),
        };
        drop(src);
        Ok(out)
    })
}

/// Parse ProtoJSON `text` (`str` or bytes-like, UTF-8) as a message of
/// `m`'s type and merge it into `m` (after clearing it when `replace`).
#[pyfunction]
#[pyo3(signature = (m, text, *, ignore_unknown_fields = false, replace = true))]
pub fn proto_merge_json(
    m: &Bound<'_, PyMessage>,
    text: &Bound<'_, PyAny>,
    ignore_unknown_fields: bool,
    replace: bool,
) -> PyResult<()> {
    crate::errors::guard(|| {
        let py = m.py();
        let buf;
        let bytes: &[u8] = if let Ok(s) = text.cast::<PyString>() {
            match s.to_str() {
                Ok(s) => s.as_bytes(),
                Err(_) => {
                    return Err(errors::proto_decode(
                        py,
                        "malformed",
                        "the JSON text holds lone surrogates (not valid Unicode)".into(),
                        None,
                        None,
                    ))
                }
            }
        } else {
            buf = InputBuffer::get(text)?;
            buf.bytes()
        };
        merge_input(
            m,
            json::lex::Lexer::new(bytes),
            ignore_unknown_fields,
            replace,
        )
    })
}

/// Parse JSON-ready Python values (`json_format.ParseDict`'s input: dicts,
/// lists or tuples, strings, numbers, bools, `None`) as a message of `m`'s
/// type, read in place, and merge it into `m` (after clearing it when
/// `replace`). Dict keys that are not strings are read as `json.dumps`
/// writes them.
#[pyfunction]
#[pyo3(signature = (m, d, *, ignore_unknown_fields = false, replace = true))]
pub fn proto_merge_dict(
    m: &Bound<'_, PyMessage>,
    d: &Bound<'_, PyAny>,
    ignore_unknown_fields: bool,
    replace: bool,
) -> PyResult<()> {
    crate::errors::guard(|| {
        let input = PyInput {
            cur: Some(d.clone()),
            stack: Vec::new(),
            keep: Vec::new(),
        };
        merge_input(m, input, ignore_unknown_fields, replace)
    })
}
