//! A generic message tree, [`DynMessage`], with the builder and source
//! that connect it to the decoder and encoder: [`decode_dyn`] and
//! [`encode_dyn`]. For tests and debugging; the Python edge implements the
//! two traits over Python objects instead.
//!
//! Map entries are kept in wire order; a repeated key replaces the earlier
//! value in place ([`decode_dyn`] removes repeated keys once, after the
//! walk, with a hash set: linear however many entries the input has).

use std::convert::Infallible;

use crate::proto::runtime::builder::{MapValue, MessageBuilder};
use crate::proto::runtime::decode::{self, DecodeOptions, Failure};
use crate::proto::runtime::encode::{self, EncodeFailure, EncodeOptions};
use crate::proto::runtime::error::{DecodeError, EncodeError, EncodeKind};
use crate::proto::runtime::scalar::Scalar;
use crate::proto::runtime::schema::{Cardinality, FieldInfo, Tables};
use crate::proto::runtime::source::{MessageSource, SrcValue};

/// A field's value in a [`DynMessage`].
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `int32`, `sint32`, `sfixed32`.
    I32(i32),
    /// `int64`, `sint64`, `sfixed64`.
    I64(i64),
    /// `uint32`, `fixed32`.
    U32(u32),
    /// `uint64`, `fixed64`.
    U64(u64),
    /// `float`.
    F32(f32),
    /// `double`.
    F64(f64),
    /// `bool`.
    Bool(bool),
    /// `string` (bytes: a proto2 string need not be UTF-8).
    Str(Vec<u8>),
    /// `bytes`.
    Bytes(Vec<u8>),
    /// An enum's number.
    Enum(i32),
    /// A message.
    Message(Box<DynMessage>),
    /// A repeated field's values.
    List(Vec<Value>),
    /// A map's entries, key and value.
    Map(Vec<(Value, Value)>),
}

impl Value {
    /// An owned copy of a scalar.
    pub fn from_scalar(s: Scalar<'_>) -> Value {
        match s {
            Scalar::I32(v) => Value::I32(v),
            Scalar::I64(v) => Value::I64(v),
            Scalar::U32(v) => Value::U32(v),
            Scalar::U64(v) => Value::U64(v),
            Scalar::F32(v) => Value::F32(v),
            Scalar::F64(v) => Value::F64(v),
            Scalar::Bool(v) => Value::Bool(v),
            Scalar::Str(v) => Value::Str(v.to_vec()),
            Scalar::Bytes(v) => Value::Bytes(v.to_vec()),
            Scalar::Enum(v) => Value::Enum(v),
        }
    }

    /// The scalar this value holds (`None` for messages, lists and maps).
    pub fn scalar(&self) -> Option<Scalar<'_>> {
        Some(match self {
            Value::I32(v) => Scalar::I32(*v),
            Value::I64(v) => Scalar::I64(*v),
            Value::U32(v) => Scalar::U32(*v),
            Value::U64(v) => Scalar::U64(*v),
            Value::F32(v) => Scalar::F32(*v),
            Value::F64(v) => Scalar::F64(*v),
            Value::Bool(v) => Scalar::Bool(*v),
            Value::Str(v) => Scalar::Str(v),
            Value::Bytes(v) => Scalar::Bytes(v),
            Value::Enum(v) => Scalar::Enum(*v),
            Value::Message(_) | Value::List(_) | Value::Map(_) => return None,
        })
    }

    fn as_src(&self) -> Result<SrcValue<'_, &DynMessage>, EncodeError> {
        if let Value::Message(m) = self {
            return Ok(SrcValue::Message(m));
        }
        self.scalar().map(SrcValue::Scalar).ok_or_else(|| {
            EncodeError::new(
                EncodeKind::TypeMismatch,
                "a list or map where one value was expected",
            )
        })
    }
}

/// A message as a tree: its type, its present fields sorted by number, and
/// its unknown fields' bytes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DynMessage {
    /// Index of the type in [`Tables::messages`].
    pub ty: u32,
    /// Present fields, sorted by number.
    pub fields: Vec<(u32, Value)>,
    /// Unknown fields, tags included, in wire order.
    pub unknown: Vec<u8>,
}

impl DynMessage {
    /// An empty message of type `ty`.
    pub fn new(ty: u32) -> Self {
        DynMessage {
            ty,
            fields: Vec::new(),
            unknown: Vec::new(),
        }
    }

    /// The value of field `num`.
    pub fn get(&self, num: u32) -> Option<&Value> {
        self.pos(num).ok().map(|i| &self.fields[i].1)
    }

    fn pos(&self, num: u32) -> Result<usize, usize> {
        self.fields.binary_search_by_key(&num, |f| f.0)
    }

    /// Set field `num`, replacing what was there.
    pub fn set(&mut self, num: u32, v: Value) {
        match self.pos(num) {
            Ok(i) => self.fields[i].1 = v,
            Err(i) => self.fields.insert(i, (num, v)),
        }
    }

    /// Remove field `num`; returns its value.
    pub fn take(&mut self, num: u32) -> Option<Value> {
        self.pos(num).ok().map(|i| self.fields.remove(i).1)
    }

    fn slot(&mut self, num: u32, empty: impl FnOnce() -> Value) -> &mut Value {
        let i = match self.pos(num) {
            Ok(i) => i,
            Err(i) => {
                self.fields.insert(i, (num, empty()));
                i
            }
        };
        &mut self.fields[i].1
    }
}

/// Builds [`DynMessage`]s for the decoder; clears a oneof's other members
/// when one is set (last one wins). Map entries are appended as they come:
/// call [`dedup_maps`] on the result (as [`decode_dyn`] does).
pub struct DynBuilder<'t> {
    /// The tables the messages follow.
    pub tables: &'t Tables,
}

impl DynBuilder<'_> {
    fn clear_oneof(&self, m: &mut DynMessage, f: &FieldInfo) {
        if let Some(o) = f.oneof {
            let info = self.tables.message(m.ty);
            m.fields.retain(|(n, _)| {
                *n == f.number || info.field(*n).is_none_or(|g| g.oneof != Some(o))
            });
        }
    }
}

impl MessageBuilder for DynBuilder<'_> {
    type Msg = DynMessage;
    type Err = Infallible;

    fn start(&mut self, ty: u32) -> Result<DynMessage, Infallible> {
        Ok(DynMessage::new(ty))
    }

    fn set(&mut self, m: &mut DynMessage, f: &FieldInfo, v: Scalar<'_>) -> Result<(), Infallible> {
        self.clear_oneof(m, f);
        m.set(f.number, Value::from_scalar(v));
        Ok(())
    }

    fn push(&mut self, m: &mut DynMessage, f: &FieldInfo, v: Scalar<'_>) -> Result<(), Infallible> {
        if let Value::List(l) = m.slot(f.number, || Value::List(Vec::new())) {
            l.push(Value::from_scalar(v));
        }
        Ok(())
    }

    fn begin(
        &mut self,
        m: &mut DynMessage,
        f: &FieldInfo,
        ty: u32,
    ) -> Result<DynMessage, Infallible> {
        if let Cardinality::Singular { .. } = f.card {
            if let Some(Value::Message(old)) = m.get(f.number) {
                if old.ty == ty {
                    if let Some(Value::Message(old)) = m.take(f.number) {
                        return Ok(*old);
                    }
                }
            }
        }
        Ok(DynMessage::new(ty))
    }

    fn end(
        &mut self,
        m: &mut DynMessage,
        f: &FieldInfo,
        sub: DynMessage,
    ) -> Result<(), Infallible> {
        match f.card {
            Cardinality::Singular { .. } => {
                self.clear_oneof(m, f);
                m.set(f.number, Value::Message(Box::new(sub)));
            }
            _ => {
                if let Value::List(l) = m.slot(f.number, || Value::List(Vec::new())) {
                    l.push(Value::Message(Box::new(sub)));
                }
            }
        }
        Ok(())
    }

    fn map_entry(
        &mut self,
        m: &mut DynMessage,
        f: &FieldInfo,
        key: Scalar<'_>,
        value: MapValue<'_, DynMessage>,
    ) -> Result<(), Infallible> {
        let k = Value::from_scalar(key);
        let v = match value {
            MapValue::Scalar(s) => Value::from_scalar(s),
            MapValue::Message(sm) => Value::Message(Box::new(sm)),
        };
        if let Value::Map(entries) = m.slot(f.number, || Value::Map(Vec::new())) {
            // Repeated keys are resolved by `dedup_maps` after the walk.
            entries.push((k, v));
        }
        Ok(())
    }

    fn unknown(&mut self, m: &mut DynMessage, bytes: &[u8]) -> Result<(), Infallible> {
        m.unknown.extend_from_slice(bytes);
        Ok(())
    }
}

/// A map key, hashable.
#[derive(PartialEq, Eq, Hash)]
enum Key<'a> {
    Int(i64),
    Uint(u64),
    Bool(bool),
    Bytes(&'a [u8]),
}

fn key_of(v: &Value) -> Key<'_> {
    match v {
        Value::I32(x) | Value::Enum(x) => Key::Int(*x as i64),
        Value::I64(x) => Key::Int(*x),
        Value::U32(x) => Key::Uint(*x as u64),
        Value::U64(x) => Key::Uint(*x),
        Value::Bool(x) => Key::Bool(*x),
        Value::Str(x) | Value::Bytes(x) => Key::Bytes(x),
        // Not map keys: each is its own key.
        _ => Key::Uint(v as *const Value as usize as u64),
    }
}

/// Resolve repeated map keys, in `m` and every message under it: the last
/// value wins, at the position of the key's first entry.
pub fn dedup_maps(m: &mut DynMessage) {
    // Deep trees recurse on stack segments grown as needed.
    let _ = crate::bytes::stack::enter(|| dedup_msg(m, 0), || ());
}

fn dedup_msg(m: &mut DynMessage, depth: usize) -> Result<(), ()> {
    for (_, v) in &mut m.fields {
        dedup_value(v, depth)?;
    }
    Ok(())
}

fn dedup_value(v: &mut Value, depth: usize) -> Result<(), ()> {
    match v {
        Value::Message(sub) => {
            crate::bytes::stack::descend(depth + 1, || dedup_msg(sub, depth + 1), || ())?
        }
        Value::List(items) => {
            for item in items {
                dedup_value(item, depth)?;
            }
        }
        Value::Map(entries) => {
            let mut first: std::collections::HashMap<Key<'_>, usize> = Default::default();
            let mut target = Vec::with_capacity(entries.len());
            for (i, (k, _)) in entries.iter().enumerate() {
                let at = *first.entry(key_of(k)).or_insert(i);
                target.push(at);
            }
            drop(first);
            if target.iter().enumerate().any(|(i, &t)| i != t) {
                let old = std::mem::take(entries);
                let mut slots: Vec<Option<(Value, Value)>> = Vec::with_capacity(old.len());
                for (i, e) in old.into_iter().enumerate() {
                    let t = target[i];
                    if t == i {
                        slots.push(Some(e));
                    } else {
                        slots.push(None);
                        if let Some(slot) = slots[t].as_mut() {
                            slot.1 = e.1;
                        }
                    }
                }
                *entries = slots.into_iter().flatten().collect();
            }
            for (_, val) in entries.iter_mut() {
                dedup_value(val, depth)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// Reads [`DynMessage`]s for the encoder.
pub struct DynSource;

impl<'m> MessageSource<'m> for DynSource {
    type Msg = &'m DynMessage;
    type Err = EncodeError;
    type Entries = crate::proto::runtime::source::NoEntries;
    type Texts = crate::proto::runtime::source::NoTexts;
    type Subs = crate::proto::runtime::source::NoSubs;

    fn count(&self, m: &'m DynMessage, f: &FieldInfo) -> Result<usize, EncodeError> {
        Ok(match m.get(f.number) {
            None => 0,
            Some(Value::List(l)) => l.len(),
            Some(Value::Map(e)) => e.len(),
            Some(_) => 1,
        })
    }

    fn get(
        &self,
        m: &'m DynMessage,
        f: &FieldInfo,
        i: usize,
    ) -> Result<SrcValue<'m, &'m DynMessage>, EncodeError> {
        match m.get(f.number) {
            Some(Value::List(l)) => match l.get(i) {
                Some(v) => v.as_src(),
                None => Err(missing(f)),
            },
            Some(v) if i == 0 => v.as_src(),
            _ => Err(missing(f)),
        }
    }

    fn entry(
        &self,
        m: &'m DynMessage,
        f: &FieldInfo,
        i: usize,
    ) -> Result<(Scalar<'m>, SrcValue<'m, &'m DynMessage>), EncodeError> {
        let Some(Value::Map(e)) = m.get(f.number) else {
            return Err(missing(f));
        };
        let Some((k, v)) = e.get(i) else {
            return Err(missing(f));
        };
        let SrcValue::Scalar(k) = k.as_src()? else {
            return Err(missing(f));
        };
        Ok((k, v.as_src()?))
    }

    fn unknown(&self, m: &'m DynMessage) -> Result<&'m [u8], EncodeError> {
        Ok(&m.unknown)
    }
}

fn missing(f: &FieldInfo) -> EncodeError {
    EncodeError::new(
        EncodeKind::TypeMismatch,
        format!("field {} has no such value", f.name),
    )
}

/// Decode `data` as a message of type `ty` into a tree.
pub fn decode_dyn(tables: &Tables, ty: u32, data: &[u8]) -> Result<DynMessage, DecodeError> {
    decode_dyn_with(tables, ty, data, DecodeOptions::default())
}

/// [`decode_dyn`] with settings.
pub fn decode_dyn_with(
    tables: &Tables,
    ty: u32,
    data: &[u8],
    opts: DecodeOptions,
) -> Result<DynMessage, DecodeError> {
    let mut b = DynBuilder { tables };
    let mut m = decode::decode(tables, ty, data, &mut b, opts).map_err(|e| match e {
        Failure::Wire(e) => *e,
        Failure::Build(never) => match never {},
    })?;
    dedup_maps(&mut m);
    Ok(m)
}

/// Encode a tree; `deterministic` sorts map entries by key.
pub fn encode_dyn(
    tables: &Tables,
    m: &DynMessage,
    deterministic: bool,
) -> Result<Vec<u8>, EncodeError> {
    let opts = EncodeOptions {
        deterministic,
        ..EncodeOptions::default()
    };
    encode::encode(tables, m.ty, m, &DynSource, opts).map_err(|e| match e {
        EncodeFailure::Encode(e) => *e,
        EncodeFailure::Source(e) => e,
    })
}
