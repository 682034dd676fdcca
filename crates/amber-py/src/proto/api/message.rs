//! `amber.proto.Message`'s Python methods (Google's names: `SerializeToString`,
//! `MergeFrom`, ...), and the class-level handle of a message type.

use amber_core::proto::runtime::{Cardinality, Kind};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple, PyType};

use crate::proto::ops::assign::kwargs_into;
use crate::proto::ops::copy::deep_copy;
use crate::proto::ops::merge::{merge_owned, merge_sub};
use crate::proto::ops::{deeper, parse, required, serialize};
use crate::proto::state::cell::Borrow;
use crate::proto::state::message::{release, Message, PyMessage, Slot};
use crate::proto::state::objects::{attach, instantiate, materialize_all};
use crate::proto::state::schema::SchemaRef;
use crate::proto::state::values;

/// The class-level handle of a message type (`cls.__amber__`).
#[pyclass(frozen, module = "amber._native", name = "ProtoMessageType")]
pub struct MessageType {
    pub s: SchemaRef,
    pub ty: u32,
}

#[pymethods]
impl MessageType {
    /// The type's full name.
    #[getter]
    fn full_name(&self) -> &str {
        &self.s.tables.messages[self.ty as usize].full_name
    }

    /// The type's index in its schema.
    #[getter]
    fn index(&self) -> u32 {
        self.ty
    }
}

#[pymethods]
impl PyMessage {
    #[new]
    #[classmethod]
    #[pyo3(signature = (*args, **kwargs))]
    fn new(
        cls: &Bound<'_, PyType>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyMessage> {
        crate::errors::guard(|| {
            let py = cls.py();
            let t = handle(cls).ok_or_else(|| {
                PyTypeError::new_err("amber.proto.Message is abstract; use a loaded message class")
            })?;
            let t = t.cast::<MessageType>()?.get();
            if !args.is_empty() {
                return Err(PyTypeError::new_err(
                    "message constructors take keyword arguments only",
                ));
            }
            let mut m = Message::empty(t.s.clone_ref(py), t.ty);
            if let Some(kw) = kwargs {
                kwargs_into(py, &mut m, kw)?;
            }
            Ok(m.into())
        })
    }

    /// The message as JSON-ready Python values, equal to
    /// `json_format.MessageToDict` (a dict, or a well-known type's own
    /// form: a Timestamp gives a string); made by the printer directly, no
    /// text in between.
    #[pyo3(signature = (
        *,
        always_print_fields_with_no_presence = false,
        preserving_proto_field_name = false,
        use_integers_for_enums = false,
    ))]
    fn to_dict<'py>(
        slf: &Bound<'py, Self>,
        always_print_fields_with_no_presence: bool,
        preserving_proto_field_name: bool,
        use_integers_for_enums: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        crate::errors::guard(|| {
            crate::proto::ops::json::to_dict(
                slf,
                preserving_proto_field_name,
                use_integers_for_enums,
                always_print_fields_with_no_presence,
            )
        })
    }

    /// The wire form. Raises `amber.EncodeError` when a required field
    /// (proto2) is missing; a true `deterministic` sorts map entries (any
    /// object, by its truth, as Google's takes it).
    #[pyo3(signature = (deterministic = None))]
    fn SerializeToString<'py>(
        slf: &Bound<'py, Self>,
        deterministic: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        crate::errors::guard(|| {
            required::check_initialized(slf)?;
            serialize::to_bytes(slf, truth(deterministic)?)
        })
    }

    /// The wire form, without the required-field check.
    #[pyo3(signature = (deterministic = None))]
    fn SerializePartialToString<'py>(
        slf: &Bound<'py, Self>,
        deterministic: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        crate::errors::guard(|| serialize::to_bytes(slf, truth(deterministic)?))
    }

    /// Replace the contents with the message in `data`; returns its length.
    fn ParseFromString(slf: &Bound<'_, Self>, data: &Bound<'_, PyAny>) -> PyResult<usize> {
        crate::errors::guard(|| {
            let n = parse::merge_from_bytes(slf, data, true)?;
            attach(slf)?;
            Ok(n)
        })
    }

    /// Merge the message in `data` into this one; returns its length.
    fn MergeFromString(slf: &Bound<'_, Self>, data: &Bound<'_, PyAny>) -> PyResult<usize> {
        crate::errors::guard(|| {
            let n = parse::merge_from_bytes(slf, data, false)?;
            attach(slf)?;
            Ok(n)
        })
    }

    /// A new message parsed from `data`.
    #[classmethod]
    fn FromString<'py>(
        cls: &Bound<'py, PyType>,
        data: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        crate::errors::guard(|| {
            let py = cls.py();
            // A loaded class is made without calling it; a subclass of one
            // is called, so that its own `__init__` runs, as with Google's.
            if let Some(t) = handle(cls) {
                let t = t.cast::<MessageType>()?.get();
                if t.s.class(py, t.ty)?.is(cls) {
                    let m = parse::from_bytes(py, &t.s, t.ty, data)?;
                    return Ok(instantiate(py, m)?.into_any());
                }
            }
            let m = cls.call0()?;
            parse::merge_from_bytes(m.cast::<PyMessage>()?, data, true)?;
            Ok(m)
        })
    }

    /// Merge another message of the same type into this one.
    fn MergeFrom(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard(|| {
            let py = slf.py();
            let src = same_type(slf, other)?;
            let copy = deep_copy(py, &*src.state()?)?;
            merge_owned(py, &mut *slf.state_mut()?, copy)?;
            attach(slf)
        })
    }

    /// Replace this message's contents with a copy of `other`'s.
    fn CopyFrom(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard(|| {
            let py = slf.py();
            let src = same_type(slf, other)?;
            if src.is(slf) {
                return Ok(());
            }
            let copy = deep_copy(py, &*src.state()?)?;
            let old = slf.state_mut()?.take_contents(copy);
            // Default sub-messages handed out stay tied to the message, as in
            // Google's: each takes the copy's value of its field, if any.
            let mut stubs = Vec::new();
            let old: Vec<Slot> = old
                .into_iter()
                .enumerate()
                .filter_map(|(pos, slot)| match slot {
                    Slot::Lazy(c) => {
                        stubs.push((pos, c));
                        None
                    }
                    other => Some(other),
                })
                .collect();
            release(py, old);
            for (pos, c) in stubs {
                let mut b = slf.state_mut()?;
                match std::mem::replace(b.slot_mut(pos), Slot::Lazy(c)) {
                    Slot::Unset => {}
                    value => merge_sub(py, &mut b, pos, value)?,
                }
            }
            attach(slf)
        })
    }

    /// Clear every field and the unknown fields.
    fn Clear(slf: &Bound<'_, Self>) -> PyResult<()> {
        crate::errors::guard(|| {
            let old = {
                let mut b = slf.state_mut()?;
                b.unknown.clear();
                b.input = None;
                std::mem::take(&mut b.vals)
            };
            release(slf.py(), old);
            // A change, as Google counts it: a default sub-message becomes set.
            attach(slf)
        })
    }

    /// Clear one field (or the set member of a oneof, by the oneof's name).
    fn ClearField(slf: &Bound<'_, Self>, field_name: &str) -> PyResult<()> {
        crate::errors::guard(|| {
            let old = {
                let mut b = slf.state_mut()?;
                let positions: Vec<usize> = match b.s.names[b.ty as usize].get(field_name) {
                    Some(&p) if p >= 0 => vec![p as usize],
                    Some(&o) => {
                        let o = !o as u32;
                        b.info()
                            .fields
                            .iter()
                            .enumerate()
                            .filter(|(_, f)| f.oneof == Some(o))
                            .map(|(i, _)| i)
                            .collect()
                    }
                    None => {
                        return Err(PyValueError::new_err(format!(
                            "Protocol message {} has no \"{field_name}\" field.",
                            b.short_name()
                        )))
                    }
                };
                let mut old = Vec::new();
                for p in positions {
                    if p < b.vals.len() {
                        old.push(std::mem::replace(&mut b.vals[p], Slot::Unset));
                    }
                }
                old
            };
            release(slf.py(), old);
            attach(slf)
        })
    }

    /// Whether a field with presence (or a oneof) is set.
    fn HasField(slf: &Bound<'_, Self>, field_name: &Bound<'_, PyString>) -> PyResult<bool> {
        crate::errors::guard(|| {
            let (py, this) = (slf.py(), slf.state()?);
            // A name written in Python source is the interned name itself.
            let objs = &this.s.name_objs[this.ty as usize];
            if let Some(p) = objs.iter().position(|o| o.as_ptr() == field_name.as_ptr()) {
                if let Cardinality::Singular { presence: true } = this.info().fields[p].card {
                    return Ok(this.present(py, p));
                }
            }
            this.has_field(py, &field_name.to_cow()?)
        })
    }

    /// The name of the oneof's set member, or `None`.
    fn WhichOneof(
        slf: &Bound<'_, Self>,
        oneof_group: &Bound<'_, PyString>,
    ) -> PyResult<Option<Py<PyString>>> {
        crate::errors::guard(|| {
            let (py, this) = (slf.py(), slf.state()?);
            let objs = &this.s.oneof_objs[this.ty as usize];
            let o = match objs.iter().position(|o| o.as_ptr() == oneof_group.as_ptr()) {
                // A field of the same name takes the name (see `Schema::names`).
                Some(o) if this.s.field_pos(this.ty, &this.info().oneofs[o]).is_none() => o,
                _ => return this.which_oneof(py, &oneof_group.to_cow()?),
            };
            let names = &this.s.name_objs[this.ty as usize];
            Ok(this.which(py, o as u32).map(|p| names[p].clone_ref(py)))
        })
    }

    /// Whether every required field (proto2), here and below, is set.
    fn IsInitialized(slf: &Bound<'_, Self>) -> PyResult<bool> {
        crate::errors::guard(|| Ok(required::missing_required(slf)?.is_empty()))
    }

    /// The paths of required fields that are not set.
    fn FindInitializationErrors(slf: &Bound<'_, Self>) -> PyResult<Vec<String>> {
        crate::errors::guard(|| required::missing_required(slf))
    }

    /// The length of the wire form.
    fn ByteSize(slf: &Bound<'_, Self>) -> PyResult<usize> {
        crate::errors::guard(|| Ok(serialize::to_bytes(slf, false)?.as_bytes().len()))
    }

    /// Drop unknown fields, here and in every sub-message.
    fn DiscardUnknownFields(slf: &Bound<'_, Self>) -> PyResult<()> {
        crate::errors::guard(|| {
            let py = slf.py();
            attach(slf)?;
            materialize_all(slf)?;
            let mut b = slf.state_mut()?;
            b.unknown.clear();
            let s = b.s.clone_ref(py);
            let fields = &s.tables.messages[b.ty as usize].fields;
            for (pos, slot) in b.vals.iter().enumerate() {
                if !matches!(fields[pos].kind, Kind::Message(_)) {
                    continue;
                }
                let subs: Vec<Py<PyAny>> = match slot {
                    Slot::Val(v) => vec![v.clone_ref(py)],
                    Slot::List(l) => l.borrow(py).items.to_vec(py)?,
                    Slot::Map(m) => m
                        .borrow(py)
                        .data
                        .entries
                        .iter()
                        .map(|e| e.1.clone_ref(py))
                        .collect(),
                    _ => continue,
                };
                for v in subs {
                    if let Ok(m) = v.bind(py).cast::<PyMessage>() {
                        deeper(|| PyMessage::DiscardUnknownFields(m))?;
                    }
                }
            }
            Ok(())
        })
    }

    /// The text format, as Google's `text_format.MessageToString` writes it.
    #[pyo3(signature = (*, as_one_line = false, as_utf8 = true, print_unknown_fields = false))]
    fn to_text(
        slf: &Bound<'_, Self>,
        as_one_line: bool,
        as_utf8: bool,
        print_unknown_fields: bool,
    ) -> PyResult<String> {
        crate::errors::guard(|| {
            serialize::to_text(
                slf,
                amber_core::proto::text::TextOptions {
                    as_one_line,
                    as_utf8,
                    print_unknown_fields,
                },
            )
        })
    }

    /// A new message from its text format (Google's `text_format.Parse`).
    #[classmethod]
    #[pyo3(signature = (text, *, allow_unknown_field = false))]
    fn from_text<'py>(
        cls: &Bound<'py, PyType>,
        text: &str,
        allow_unknown_field: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        crate::errors::guard(|| {
            let m = cls.call0()?;
            parse::from_text(
                m.cast::<PyMessage>()?,
                text,
                amber_core::proto::text::ParseOptions {
                    allow_unknown_field,
                },
            )?;
            Ok(m)
        })
    }

    /// Mark this (default) sub-message present in its parent.
    fn SetInParent(slf: &Bound<'_, Self>) -> PyResult<()> {
        crate::errors::guard(|| attach(slf))
    }

    /// The unknown fields as they were on the wire (tags included).
    fn _unknown_bytes<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyBytes>> {
        crate::errors::guard(|| Ok(PyBytes::new(slf.py(), &slf.state()?.unknown)))
    }

    /// `[(position, value)]` of the present fields, by field number.
    fn _present<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyList>> {
        crate::errors::guard(|| {
            let py = slf.py();
            materialize_all(slf)?;
            let this = slf.state()?;
            let out = PyList::empty(py);
            for pos in 0..this.vals.len() {
                if this.present(py, pos) {
                    let v = match &this.vals[pos] {
                        Slot::Val(v) => v.clone_ref(py),
                        Slot::Num(n) => values::number(py, this.info().fields[pos].kind, *n)?,
                        Slot::List(l) => l.clone_ref(py).into_any(),
                        Slot::Map(m) => m.clone_ref(py).into_any(),
                        _ => continue,
                    };
                    out.append((pos, v))?;
                }
            }
            Ok(out)
        })
    }

    fn __richcmp__(
        slf: &Bound<'_, Self>,
        other: &Bound<'_, PyAny>,
        op: pyo3::basic::CompareOp,
    ) -> PyResult<Py<PyAny>> {
        crate::errors::guard(|| {
            let py = slf.py();
            use pyo3::basic::CompareOp::*;
            let eq = match op {
                Eq | Ne => {
                    let Ok(o) = other.cast::<PyMessage>() else {
                        return Ok(py.NotImplemented());
                    };
                    let same = {
                        let (a, b) = (slf.state()?, o.state()?);
                        a.ty == b.ty && a.s.same(&b.s)
                    };
                    same && (slf.is(o)
                        || serialize::to_bytes(slf, true)?.as_bytes()
                            == serialize::to_bytes(o, true)?.as_bytes())
                }
                _ => return Ok(py.NotImplemented()),
            };
            Ok(
                pyo3::types::PyBool::new(py, if matches!(op, Eq) { eq } else { !eq })
                    .to_owned()
                    .into_any()
                    .unbind(),
            )
        })
    }

    fn __hash__(_slf: &Bound<'_, Self>) -> PyResult<isize> {
        crate::errors::guard(|| Err(PyTypeError::new_err("unhashable object")))
    }
}

impl Message {
    /// `HasField`.
    fn has_field(&self, py: Python<'_>, field_name: &str) -> PyResult<bool> {
        match self.s.names[self.ty as usize].get(field_name) {
            Some(&p) if p >= 0 => {
                let f = &self.info().fields[p as usize];
                match f.card {
                    Cardinality::Singular { presence: true } => Ok(self.present(py, p as usize)),
                    _ => Err(PyValueError::new_err(format!(
                        "Field {}.{field_name} does not have presence.",
                        self.info().full_name
                    ))),
                }
            }
            Some(&o) => Ok(self.which(py, !o as u32).is_some()),
            None => Err(PyValueError::new_err(format!(
                "Protocol message {} has no \"{field_name}\" field.",
                self.short_name()
            ))),
        }
    }

    /// `WhichOneof`, by the name's text.
    fn which_oneof(&self, py: Python<'_>, oneof_group: &str) -> PyResult<Option<Py<PyString>>> {
        match self.s.names[self.ty as usize].get(oneof_group) {
            Some(&o) if o < 0 => Ok(self
                .which(py, !o as u32)
                .map(|p| self.s.name_objs[self.ty as usize][p].clone_ref(py))),
            _ => Err(PyValueError::new_err(format!(
                "Protocol message has no oneof \"{oneof_group}\" field."
            ))),
        }
    }

    /// The position of oneof `o`'s present member.
    fn which(&self, py: Python<'_>, o: u32) -> Option<usize> {
        let fields = &self.info().fields;
        (0..self.vals.len()).find(|&p| fields[p].oneof == Some(o) && self.present(py, p))
    }
}

/// The handle (`__amber__`) of message class `cls` or its nearest loaded
/// base, found as an instance's attribute lookup finds class attributes
/// (the type cache) rather than by `getattr` on the class.
fn handle<'py>(cls: &Bound<'py, PyType>) -> Option<Bound<'py, PyAny>> {
    crate::ffi::slots::type_lookup(cls, pyo3::intern!(cls.py(), "__amber__"))
}

/// An optional argument's truth (`None`, or left out: false).
fn truth(v: Option<&Bound<'_, PyAny>>) -> PyResult<bool> {
    v.map_or(Ok(false), |v| v.is_truthy())
}

fn same_type<'py>(
    slf: &Bound<'py, PyMessage>,
    other: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyMessage>> {
    let o = other.cast::<PyMessage>().map_err(|_| {
        PyTypeError::new_err(format!(
            "Parameter to MergeFrom() must be instance of same class: expected {} got {}.",
            slf.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default(),
            other
                .get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })?;
    let (a, b) = (slf.state()?, o.state()?);
    if a.ty != b.ty || !a.s.same(&b.s) {
        return Err(PyTypeError::new_err(format!(
            "Parameter to MergeFrom() must be instance of same class: expected {} got {}.",
            a.info().full_name,
            b.info().full_name
        )));
    }
    Ok(o.clone())
}
