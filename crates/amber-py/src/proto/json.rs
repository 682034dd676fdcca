//! ProtoJSON at the edge: the core's printer reads messages through the
//! wire encoder's source (`serialize::Source`) and its parser makes them
//! with the wire decoder's builder (`parse::Builder`), so no Python code
//! runs and nothing is built twice. `amber.proto.Message` wraps these in
//! `to_json`/`from_json`/`to_dict`/`from_dict`.

use amber_core::proto::json::{self, ParseFailure, ParseOptions, PrintFailure, PrintOptions};
use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::errors::{self, EncodeKind};
use crate::ffi::buffer::InputBuffer;
use crate::proto::message::{merge_owned, release, Message};
use crate::proto::parse::{Builder, Stashed as BuildStashed};
use crate::proto::serialize::{Source, Stashed as SourceStashed};

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
    m: &Bound<'_, Message>,
    preserving_proto_field_name: bool,
    use_integers_for_enums: bool,
    always_print_fields_with_no_presence: bool,
    indent: Option<isize>,
    sort_keys: bool,
    ensure_ascii: bool,
) -> PyResult<String> {
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
    let root = m.try_borrow()?;
    let src = Source::new(py);
    let out = json::print(&root.s.tables, root.ty, &*root, &src, &opts);
    let out = match out {
        Ok(s) => s,
        Err(PrintFailure::Source(SourceStashed)) => return Err(src.take_err()),
        Err(PrintFailure::Print(e)) => {
            let kind = if e.message.contains("deeper") || e.message.contains("stack") {
                EncodeKind::Limit
            } else {
                EncodeKind::Unsupported
            };
            return Err(errors::make(
                py,
                errors::encode_error(py),
                kind.name(),
                e.to_string(),
                None,
                Some(e.path),
                None,
            ));
        }
    };
    drop(src);
    Ok(out)
}

/// Parse ProtoJSON `text` (`str` or bytes-like, UTF-8) as a message of
/// `m`'s type and merge it into `m` (after clearing it when `replace`).
#[pyfunction]
#[pyo3(signature = (m, text, *, ignore_unknown_fields = false, replace = true))]
pub fn proto_merge_json(
    m: &Bound<'_, Message>,
    text: &Bound<'_, PyAny>,
    ignore_unknown_fields: bool,
    replace: bool,
) -> PyResult<()> {
    let py = m.py();
    let buf;
    let bytes: &[u8] = if let Ok(s) = text.cast::<PyString>() {
        match s.to_str() {
            Ok(s) => s.as_bytes(),
            Err(_) => {
                return Err(errors::proto_decode(
                    py,
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
    let (s, ty) = {
        let b = m.try_borrow()?;
        (b.s.clone(), b.ty)
    };
    let opts = ParseOptions {
        ignore_unknown_fields,
        ..ParseOptions::default()
    };
    let mut builder = Builder::new(py, s.clone());
    let draft = match json::parse(&s.tables, ty, bytes, &mut builder, &opts) {
        Ok(d) => d,
        Err(ParseFailure::Json(e)) => {
            return Err(errors::proto_decode(
                py,
                e.to_string(),
                Some(e.offset),
                Some(e.path),
            ))
        }
        Err(ParseFailure::Build(BuildStashed)) => return Err(builder.take_err()),
    };
    let new = builder.finish(draft)?;
    if replace {
        let old = {
            let mut b = m.try_borrow_mut()?;
            b.unknown = new.unknown;
            std::mem::replace(&mut b.vals, new.vals)
        };
        release(py, old);
    } else {
        merge_owned(py, &mut *m.try_borrow_mut()?, new)?;
    }
    Ok(())
}
