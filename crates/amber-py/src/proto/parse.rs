//! Wire bytes into messages: the core's decoder drives a builder that
//! makes the Python values as it goes. Messages are drafts (plain Rust)
//! until their last byte is read, so a singular sub-message seen twice on
//! the wire merges without touching Python objects, and each finished
//! message becomes a Python object once.

use std::sync::Arc;

use amber_core::proto::runtime::{
    decode, Cardinality, DecodeOptions, Failure, FieldInfo, MapValue, MessageBuilder, Scalar,
};
use amber_core::proto::text::{parse_text, ParseOptions, TextFailure};
use pyo3::prelude::*;

use crate::errors;
use crate::ffi::buffer::InputBuffer;
use crate::proto::containers::{Items, Kept, MapData, MapField, Repeated};
use crate::proto::message::{instantiate, merge_owned, release, Message, Slot};
use crate::proto::schema::Schema;
use crate::proto::values;

/// A message being decoded.
pub struct Draft {
    ty: u32,
    vals: Vec<DSlot>,
    unknown: Vec<u8>,
}

enum DSlot {
    Unset,
    Val(Py<PyAny>),
    Num(u64),
    Msg(Box<Draft>),
    List(Items),
    /// Boxed: a map is rare, and the other slots stay small.
    Map(Box<MapData>),
}

pub(crate) struct Builder<'py> {
    py: Python<'py>,
    s: Arc<Schema>,
    /// The error behind a `Stashed` (the decoder's results stay small).
    err: Option<PyErr>,
}

/// The builder failed; the error is in `Builder::err`.
pub struct Stashed;

impl<'py> Builder<'py> {
    /// A builder of messages of schema `s` (also used by the JSON parser).
    pub(crate) fn new(py: Python<'py>, s: Arc<Schema>) -> Self {
        Builder { py, s, err: None }
    }

    /// The error behind a `Stashed`.
    pub(crate) fn take_err(&mut self) -> PyErr {
        self.err.take().expect("a stashed error")
    }
}

impl Builder<'_> {
    #[inline]
    fn pos(&self, ty: u32, f: &FieldInfo) -> usize {
        self.s.tables.messages[ty as usize].position(f)
    }

    #[inline(always)]
    fn slot<'d>(&self, m: &'d mut Draft, f: &FieldInfo) -> &'d mut DSlot {
        let pos = self.pos(m.ty, f);
        if m.vals.len() <= pos {
            let n = self.s.tables.messages[m.ty as usize].fields.len();
            m.vals.resize_with(n, || DSlot::Unset);
        }
        &mut m.vals[pos]
    }

    /// Repeated field `f`'s values so far.
    #[inline(always)]
    fn list<'d>(&self, m: &'d mut Draft, f: &FieldInfo) -> &'d mut Items {
        let slot = self.slot(m, f);
        if !matches!(slot, DSlot::List(_)) {
            *slot = DSlot::List(Items::new(f.kind));
        }
        match slot {
            DSlot::List(items) => items,
            _ => unreachable!("made a list just above"),
        }
    }

    /// Setting a oneof member clears the others.
    fn clear_oneof(&self, m: &mut Draft, f: &FieldInfo) {
        if let Some(o) = f.oneof {
            let fields = &self.s.tables.messages[m.ty as usize].fields;
            for (i, g) in fields.iter().enumerate() {
                if g.oneof == Some(o) && g.number != f.number && i < m.vals.len() {
                    m.vals[i] = DSlot::Unset;
                }
            }
        }
    }

    /// A finished draft as a message (not yet a Python object).
    pub(crate) fn finish(&self, d: Draft) -> PyResult<Message> {
        let py = self.py;
        let mut m = Message::empty(self.s.clone(), d.ty);
        m.unknown = d.unknown;
        m.vals.reserve_exact(d.vals.len());
        for (pos, slot) in d.vals.into_iter().enumerate() {
            m.vals.push(match slot {
                DSlot::Unset => Slot::Unset,
                DSlot::Val(v) => Slot::Val(v),
                DSlot::Num(n) => Slot::Num(n),
                DSlot::Msg(sub) => Slot::Val(self.object(*sub)?.into_any()),
                DSlot::List(items) => Slot::List(Py::new(
                    py,
                    Repeated::new(self.s.clone(), d.ty, pos as u32, items),
                )?),
                DSlot::Map(data) => Slot::Map(Py::new(
                    py,
                    MapField::new(self.s.clone(), d.ty, pos as u32, *data),
                )?),
            });
        }
        Ok(m)
    }

    fn object(&self, d: Draft) -> PyResult<Py<PyAny>> {
        Ok(instantiate(self.py, self.finish(d)?)?.into_any().unbind())
    }
}

impl Builder<'_> {
    #[cold]
    fn stash(&mut self, e: PyErr) -> Stashed {
        self.err = Some(e);
        Stashed
    }
}

impl MessageBuilder for Builder<'_> {
    type Msg = Draft;
    type Err = Stashed;

    fn start(&mut self, ty: u32) -> Result<Draft, Stashed> {
        Ok(Draft {
            ty,
            vals: Vec::new(),
            unknown: Vec::new(),
        })
    }

    #[inline]
    fn set(&mut self, m: &mut Draft, f: &FieldInfo, v: Scalar<'_>) -> Result<(), Stashed> {
        let v = match v.bits(f.kind) {
            Some(n) => DSlot::Num(n),
            None => DSlot::Val(values::to_py(self.py, v).map_err(|e| self.stash(e))?),
        };
        self.clear_oneof(m, f);
        *self.slot(m, f) = v;
        Ok(())
    }

    #[inline]
    fn push(&mut self, m: &mut Draft, f: &FieldInfo, v: Scalar<'_>) -> Result<(), Stashed> {
        let py = self.py;
        let r = self.list(m, f).push_scalar(py, v);
        r.map_err(|e| self.stash(e))
    }

    fn reserve(&mut self, m: &mut Draft, f: &FieldInfo, n: usize) -> Result<(), Stashed> {
        self.list(m, f).reserve(n);
        Ok(())
    }

    fn begin(&mut self, m: &mut Draft, f: &FieldInfo, ty: u32) -> Result<Draft, Stashed> {
        if matches!(f.card, Cardinality::Singular { .. }) {
            if let DSlot::Msg(d) = std::mem::replace(self.slot(m, f), DSlot::Unset) {
                return Ok(*d);
            }
        }
        self.start(ty)
    }

    fn end(&mut self, m: &mut Draft, f: &FieldInfo, sub: Draft) -> Result<(), Stashed> {
        if matches!(f.card, Cardinality::Singular { .. }) {
            self.clear_oneof(m, f);
            *self.slot(m, f) = DSlot::Msg(Box::new(sub));
            return Ok(());
        }
        let v = self.object(sub).map_err(|e| self.stash(e))?;
        let py = self.py;
        let r = self.list(m, f).push(py, Kept::Obj(v));
        r.map_err(|e| self.stash(e))
    }

    fn map_entry(
        &mut self,
        m: &mut Draft,
        f: &FieldInfo,
        key: Scalar<'_>,
        value: MapValue<'_, Draft>,
    ) -> Result<(), Stashed> {
        let k = values::to_py(self.py, key).map_err(|e| self.stash(e))?;
        let v = match value {
            MapValue::Scalar(s) => values::to_py(self.py, s),
            MapValue::Message(d) => self.object(d),
        }
        .map_err(|e| self.stash(e))?;
        let py = self.py;
        let slot = self.slot(m, f);
        if !matches!(slot, DSlot::Map(_)) {
            *slot = DSlot::Map(Box::default());
        }
        let r = match slot {
            DSlot::Map(data) => data.insert(py, k, v),
            _ => Ok(()),
        };
        r.map_err(|e| self.stash(e))
    }

    fn unknown(&mut self, m: &mut Draft, bytes: &[u8]) -> Result<(), Stashed> {
        m.unknown.extend_from_slice(bytes);
        Ok(())
    }
}

/// A builder for messages of `m`'s type, and that type (wire, text and
/// JSON parses).
pub(crate) fn builder_for<'py>(
    m: &Bound<'py, Message>,
) -> PyResult<(Builder<'py>, Arc<Schema>, u32)> {
    let b = m.try_borrow()?;
    Ok((Builder::new(m.py(), b.s.clone()), b.s.clone(), b.ty))
}

/// Put what `builder` built from `draft` into `m`: in place of its
/// contents (`replace`), or merged in.
pub(crate) fn install(
    m: &Bound<'_, Message>,
    builder: &Builder<'_>,
    draft: Draft,
    replace: bool,
) -> PyResult<()> {
    let py = m.py();
    let new = builder.finish(draft)?;
    if replace {
        let old = {
            let mut b = m.try_borrow_mut()?;
            b.unknown = new.unknown;
            std::mem::replace(&mut b.vals, new.vals)
        };
        release(py, old);
        Ok(())
    } else {
        merge_owned(py, &mut *m.try_borrow_mut()?, new)
    }
}

/// Parse the text format into `m` (replacing its contents).
pub fn from_text(m: &Bound<'_, Message>, text: &str, opts: ParseOptions) -> PyResult<()> {
    let (mut builder, s, ty) = builder_for(m)?;
    let draft = match parse_text(&s.tables, ty, text, &mut builder, opts) {
        Ok(d) => d,
        Err(TextFailure::Build(Stashed)) => return Err(builder.take_err()),
        Err(e) => {
            let msg = e.describe().unwrap_or_default();
            return Err(errors::proto_decode(m.py(), msg, None, None));
        }
    };
    install(m, &builder, draft, true)
}

/// Decode `data` (any bytes-like object) as a message of `m`'s type and
/// merge it in (after clearing `m` when `replace`). Returns the length.
pub fn merge_from_bytes(
    m: &Bound<'_, Message>,
    data: &Bound<'_, PyAny>,
    replace: bool,
) -> PyResult<usize> {
    let (builder, s, ty) = builder_for(m)?;
    let (builder, draft, n) = decode_bytes(builder, &s, ty, data)?;
    install(m, &builder, draft, replace)?;
    Ok(n)
}

/// Decode `data` (any bytes-like object) as a new message of type `ty`.
pub fn from_bytes(
    py: Python<'_>,
    s: &Arc<Schema>,
    ty: u32,
    data: &Bound<'_, PyAny>,
) -> PyResult<Message> {
    let (builder, draft, _) = decode_bytes(Builder::new(py, s.clone()), s, ty, data)?;
    builder.finish(draft)
}

/// Decode `data` with `builder`: the draft and the input's length.
fn decode_bytes<'py>(
    mut builder: Builder<'py>,
    s: &Schema,
    ty: u32,
    data: &Bound<'py, PyAny>,
) -> PyResult<(Builder<'py>, Draft, usize)> {
    let buf = InputBuffer::get(data)?;
    let bytes = buf.bytes();
    match decode(&s.tables, ty, bytes, &mut builder, DecodeOptions::default()) {
        Ok(d) => Ok((builder, d, bytes.len())),
        Err(Failure::Wire(e)) => {
            let msg = e.to_string();
            Err(errors::proto_decode(
                data.py(),
                msg,
                Some(e.offset),
                Some(e.path),
            ))
        }
        Err(Failure::Build(Stashed)) => Err(builder.take_err()),
    }
}
