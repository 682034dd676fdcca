//! A compiled set of `.proto` files as Python sees it: the core's
//! [`Tables`], the descriptor set they came from, each message type's
//! Python class (bound once by `amber.proto`), field names and the Python
//! default value of every scalar field.

use std::collections::HashMap;
use std::mem::ManuallyDrop;
use std::ops::Deref;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use amber_core::proto::runtime::{Cardinality, DefaultValue, Kind, Tables};
use amber_core::proto::{FileDescriptorSet, Message as _};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString, PyType};

use crate::proto::state::cell::drop_attached;

/// Field and oneof names of one type (schema data, so a fast hash).
pub type Names = hashbrown::HashMap<String, i64, foldhash::fast::RandomState>;

/// Everything shared by the messages, fields and containers of one load.
pub struct Schema {
    pub tables: Tables,
    /// The descriptor set, encoded (`FileDescriptorSet` bytes).
    pub set_bytes: Vec<u8>,
    /// Per message type: its Python class, once `amber.proto` made it.
    pub classes: Vec<OnceLock<Py<PyType>>>,
    /// Per message type, per field (by position): the value a read of the
    /// unset field gives (scalars and enums; `None` for the others).
    pub defaults: Vec<Vec<Py<PyAny>>>,
    /// Per message type: field and oneof names to positions (fields) and
    /// `!index` (oneofs, as negative numbers).
    pub names: Vec<Names>,
    /// Per message type: whether it or anything it holds has `required`
    /// fields (only those need the `IsInitialized` walk).
    pub needs_check: Vec<bool>,
    /// Per message type: a well-known type that takes a plain Python value
    /// where a message is expected (Timestamp a datetime, Duration a
    /// timedelta, Struct a dict, ListValue a list), through its class's
    /// `_internal_assign`, as Google's does.
    pub assigns: Vec<bool>,
    /// Per message type: the name of the `.proto` file declaring it.
    pub files: Vec<String>,
    /// Every field's name and JSON name as an interned `str`, by the
    /// address and length of that name in `tables` (which the schema owns,
    /// so the addresses stay valid and unique while it lives): the keys
    /// `to_dict` puts in its dicts, made once per schema.
    pub field_keys: FieldKeys,
    /// Per message type, by field position: the field's name as that same
    /// interned `str`. A keyword argument or dict key written in Python
    /// source is that very object, so it is found by its address.
    pub name_objs: Vec<Vec<Py<PyString>>>,
    /// Per message type, by oneof index: the oneof's name, interned.
    pub oneof_objs: Vec<Vec<Py<PyString>>>,
    /// This schema among those the process made, never reused: what
    /// per-thread caches of schema data are keyed by.
    pub id: u64,
}

/// A schema as the objects made from it hold it (every message, field,
/// container and class handle): through a Python object, whose count the
/// GIL orders, so taking and dropping one is a plain increment where an
/// `Arc`'s is a locked one (two per sub-message a read makes).
pub struct SchemaRef(ManuallyDrop<Py<SchemaObject>>);

/// The Python object a [`SchemaRef`] counts (internal: no Python code
/// sees it).
#[pyclass(frozen, module = "amber._native", name = "_ProtoSchemaData")]
pub struct SchemaObject(Schema);

impl SchemaRef {
    pub(crate) fn new(py: Python<'_>, s: Schema) -> PyResult<SchemaRef> {
        Ok(SchemaRef(ManuallyDrop::new(Py::new(py, SchemaObject(s))?)))
    }

    /// Another reference to the same schema.
    #[inline]
    pub fn clone_ref(&self, py: Python<'_>) -> SchemaRef {
        SchemaRef(ManuallyDrop::new(self.0.clone_ref(py)))
    }

    /// Whether `self` and `other` are the same schema.
    #[inline]
    pub fn same(&self, other: &SchemaRef) -> bool {
        self.0.is(&*other.0)
    }
}

impl Drop for SchemaRef {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: a `SchemaRef` lives in a message's state or in a Python
        // object (a class handle, field, container or schema), as
        // `drop_attached` requires; `self.0` is not used after this.
        unsafe { drop_attached(ManuallyDrop::take(&mut self.0)) }
    }
}

impl Deref for SchemaRef {
    type Target = Schema;
    #[inline]
    fn deref(&self) -> &Schema {
        &self.0.get().0
    }
}

/// The well-known types a plain value can be assigned to (see `Schema::assigns`).
const ASSIGNED_TYPES: [&str; 4] = [
    "google.protobuf.Timestamp",
    "google.protobuf.Duration",
    "google.protobuf.Struct",
    "google.protobuf.ListValue",
];

pub type FieldKeys = HashMap<(usize, usize), Py<PyString>, foldhash::fast::RandomState>;

/// The next [`Schema::id`].
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

impl Schema {
    pub(crate) fn new(py: Python<'_>, set: &FileDescriptorSet) -> PyResult<Schema> {
        let tables = Tables::from_set(set).map_err(PyValueError::new_err)?;
        let mut defaults = Vec::with_capacity(tables.messages.len());
        let mut names = Vec::with_capacity(tables.messages.len());
        for m in &tables.messages {
            let mut d = Vec::with_capacity(m.fields.len());
            let mut n = Names::default();
            for (pos, f) in m.fields.iter().enumerate() {
                n.insert(f.name.clone(), pos as i64);
                d.push(match (f.card, &f.default) {
                    (Cardinality::Singular { .. }, dv) => default_object(py, f.kind, dv)?,
                    _ => py.None(),
                });
            }
            for (i, o) in m.oneofs.iter().enumerate() {
                n.entry(o.clone()).or_insert(!(i as i64));
            }
            defaults.push(d);
            names.push(n);
        }
        let needs_check = required_closure(&tables);
        let assigns = tables
            .messages
            .iter()
            .map(|m| ASSIGNED_TYPES.contains(&m.full_name.as_str()))
            .collect();
        let mut field_keys = FieldKeys::default();
        for f in tables.messages.iter().flat_map(|m| &m.fields) {
            for name in [&f.name, &f.json_name] {
                let key = (name.as_ptr() as usize, name.len());
                field_keys.insert(key, PyString::intern(py, name).unbind());
            }
        }
        let name_objs = tables
            .messages
            .iter()
            .map(|m| {
                m.fields
                    .iter()
                    .map(|f| field_keys[&(f.name.as_ptr() as usize, f.name.len())].clone_ref(py))
                    .collect()
            })
            .collect();
        let oneof_objs = tables
            .messages
            .iter()
            .map(|m| {
                m.oneofs
                    .iter()
                    .map(|o| PyString::intern(py, o).unbind())
                    .collect()
            })
            .collect();
        // Tables number message types file by file, nested types in pre-order.
        let mut files = Vec::with_capacity(tables.messages.len());
        fn count(m: &amber_core::proto::descriptor::DescriptorProto) -> usize {
            1 + m.nested_type.iter().map(count).sum::<usize>()
        }
        for f in &set.file {
            let n: usize = f.message_type.iter().map(count).sum();
            let name = f.name.clone().unwrap_or_default();
            files.extend(std::iter::repeat_n(name, n));
        }
        Ok(Schema {
            files,
            classes: (0..tables.messages.len())
                .map(|_| OnceLock::new())
                .collect(),
            set_bytes: set.encode(),
            tables,
            defaults,
            names,
            needs_check,
            field_keys,
            name_objs,
            oneof_objs,
            assigns,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
        })
    }

    /// The Python class of message type `ty`.
    pub fn class<'py>(&self, py: Python<'py>, ty: u32) -> PyResult<&Bound<'py, PyType>> {
        match self.classes[ty as usize].get() {
            Some(c) => Ok(c.bind(py)),
            None => Err(PyValueError::new_err(format!(
                "message type {} has no class yet",
                self.tables.messages[ty as usize].full_name
            ))),
        }
    }

    /// The position of the field of type `ty` named by the `str` `key`
    /// (not oneofs): first by the key's address among the interned names,
    /// from position `hint` on (keywords mostly come in field order), then
    /// by its text.
    pub fn field_pos_of(&self, ty: u32, key: &Bound<'_, PyString>, hint: usize) -> Option<usize> {
        let objs = &self.name_objs[ty as usize];
        let at = |i: &usize| objs[*i].as_ptr() == key.as_ptr();
        let hint = hint.min(objs.len());
        if let Some(p) = (hint..objs.len()).chain(0..hint).find(at) {
            return Some(p);
        }
        self.field_pos(ty, &key.to_cow().ok()?)
    }

    /// The position of field `name` in type `ty` (not oneofs).
    pub fn field_pos(&self, ty: u32, name: &str) -> Option<usize> {
        match self.names[ty as usize].get(name) {
            Some(&p) if p >= 0 => Some(p as usize),
            _ => None,
        }
    }
}

fn default_object(py: Python<'_>, kind: Kind, dv: &DefaultValue) -> PyResult<Py<PyAny>> {
    Ok(match dv {
        DefaultValue::Int(v) => v.into_pyobject(py)?.into_any().unbind(),
        DefaultValue::Uint(v) => v.into_pyobject(py)?.into_any().unbind(),
        DefaultValue::Float(v) => {
            let v = if kind == Kind::Float {
                *v as f32 as f64
            } else {
                *v
            };
            v.into_pyobject(py)?.into_any().unbind()
        }
        DefaultValue::Bool(v) => v.into_pyobject(py)?.to_owned().into_any().unbind(),
        DefaultValue::Str(s) => s.into_pyobject(py)?.into_any().unbind(),
        // A string default that is not UTF-8 reads as a parsed value does.
        DefaultValue::Bytes(b) if kind == Kind::String => {
            crate::proto::state::values::to_py(py, amber_core::proto::runtime::Scalar::Str(b))?
        }
        DefaultValue::Bytes(b) => PyBytes::new(py, b).into_any().unbind(),
        DefaultValue::Enum(v) => v.into_pyobject(py)?.into_any().unbind(),
        DefaultValue::None => py.None(),
    })
}

/// For each type: does it, or a message type reachable through its
/// fields, declare a required field?
fn required_closure(t: &Tables) -> Vec<bool> {
    let n = t.messages.len();
    let mut out: Vec<bool> = t
        .messages
        .iter()
        .map(|m| m.fields.iter().any(|f| f.required))
        .collect();
    // Propagate until nothing changes (at most n rounds).
    loop {
        let mut changed = false;
        for i in 0..n {
            if out[i] {
                continue;
            }
            let reach = t.messages[i].fields.iter().any(|f| match f.kind {
                Kind::Message(c) => out[c as usize],
                _ => false,
            });
            if reach {
                out[i] = true;
                changed = true;
            }
        }
        if !changed {
            return out;
        }
    }
}
