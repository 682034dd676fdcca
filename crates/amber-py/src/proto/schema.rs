//! A compiled set of `.proto` files as Python sees it: the core's
//! [`Tables`], the descriptor set they came from, each message type's
//! Python class (bound once by `amber.proto`), field names and the Python
//! default value of every scalar field.

use std::collections::HashMap;

/// Field and oneof names of one type (schema data, so a fast hash).
pub type Names = hashbrown::HashMap<String, i64, foldhash::fast::RandomState>;
use std::sync::{Arc, OnceLock};

use amber_core::proto::runtime::{Cardinality, DefaultValue, Kind, Tables};
use amber_core::proto::{FileDescriptorSet, Message as _};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyType};

use crate::proto::message::MessageType;
use crate::proto::values;

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
}

/// The well-known types a plain value can be assigned to (see `Schema::assigns`).
const ASSIGNED_TYPES: [&str; 4] = [
    "google.protobuf.Timestamp",
    "google.protobuf.Duration",
    "google.protobuf.Struct",
    "google.protobuf.ListValue",
];

pub type FieldKeys = HashMap<(usize, usize), Py<PyString>, foldhash::fast::RandomState>;

impl Schema {
    fn new(py: Python<'_>, set: &FileDescriptorSet) -> PyResult<Schema> {
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
            assigns,
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

/// `_native.ProtoSchema`: a compiled load, for `amber.proto` to build its
/// namespace from.
#[pyclass(frozen, module = "amber._native", name = "ProtoSchema")]
pub struct PySchema {
    pub inner: Arc<Schema>,
}

#[pymethods]
impl PySchema {
    /// Compile `files` (paths relative to the include directories, which
    /// are searched in order, as protoc's `-I`).
    #[staticmethod]
    fn compile(py: Python<'_>, files: Vec<String>, include: Vec<String>) -> PyResult<PySchema> {
        let mut loader = amber_core::proto::DirLoader {
            include: include.into_iter().map(Into::into).collect(),
        };
        let roots: Vec<&str> = files.iter().map(String::as_str).collect();
        let set = py
            .detach(|| amber_core::proto::compile(&roots, &mut loader, true))
            .map_err(|e| crate::errors::proto_syntax(py, &e))?;
        Ok(PySchema {
            inner: Arc::new(Schema::new(py, &set)?),
        })
    }

    /// Compile `.proto` sources held in memory: `sources` maps import
    /// paths to text; imports not in it are searched in `include`.
    #[staticmethod]
    fn compile_sources(
        py: Python<'_>,
        files: Vec<String>,
        sources: HashMap<String, Vec<u8>>,
        include: Vec<String>,
    ) -> PyResult<PySchema> {
        let mut dirs = amber_core::proto::DirLoader {
            include: include.into_iter().map(Into::into).collect(),
        };
        let mut loader = |name: &str| match sources.get(name) {
            Some(b) => Ok(Some(b.clone())),
            None => amber_core::proto::Loader::load(&mut dirs, name),
        };
        let roots: Vec<&str> = files.iter().map(String::as_str).collect();
        let set = py
            .detach(|| amber_core::proto::compile(&roots, &mut MemLoader(&mut loader), true))
            .map_err(|e| crate::errors::proto_syntax(py, &e))?;
        Ok(PySchema {
            inner: Arc::new(Schema::new(py, &set)?),
        })
    }

    /// A schema from a serialized `FileDescriptorSet` (every import
    /// included, dependencies before the files that use them).
    #[staticmethod]
    fn from_descriptor_set(py: Python<'_>, data: &[u8]) -> PyResult<PySchema> {
        let set = FileDescriptorSet::decode(data).map_err(|e| {
            crate::errors::proto_decode(py, format!("not a FileDescriptorSet: {e}"), None, None)
        })?;
        Ok(PySchema {
            inner: Arc::new(Schema::new(py, &set)?),
        })
    }

    /// The descriptor set, serialized.
    fn descriptor_set<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.set_bytes)
    }

    /// `[(full_name, [(name, number, json_name, kind, type_index,
    /// label, oneof, has_presence, packed), ...], [oneof names],
    /// map_entry)]` per message type, by index (an extension's name is its
    /// full name in brackets, `[pkg.ext]`).
    fn messages<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        for m in &self.inner.tables.messages {
            let fields = PyList::empty(py);
            for f in &m.fields {
                let (kind, index) = values::kind_name(f.kind);
                let (label, presence, packed) = match f.card {
                    Cardinality::Singular { presence } => (
                        if f.required { "required" } else { "optional" },
                        presence,
                        false,
                    ),
                    Cardinality::Repeated { packed } => ("repeated", false, packed),
                    Cardinality::Map => ("map", false, false),
                };
                fields.append((
                    &f.name,
                    f.number,
                    &f.json_name,
                    kind,
                    index,
                    label,
                    f.oneof,
                    presence,
                    packed,
                ))?;
            }
            out.append((&m.full_name, fields, &m.oneofs, m.map_entry))?;
        }
        Ok(out)
    }

    /// The `.proto` file declaring each message type, by index.
    fn message_files(&self) -> Vec<String> {
        self.inner.files.clone()
    }

    /// `[(full_name, closed, [(name, number), ...])]` per enum type.
    fn enums<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        for e in &self.inner.tables.enums {
            out.append((&e.full_name, e.closed, &e.names))?;
        }
        Ok(out)
    }

    /// The handle a message class keeps as `__amber__`.
    fn message_type(&self, ty: u32) -> PyResult<MessageType> {
        self.check(ty)?;
        Ok(MessageType {
            s: self.inner.clone(),
            ty,
        })
    }

    /// Bind message type `ty` to its class (once).
    fn bind(&self, ty: u32, cls: Bound<'_, PyType>) -> PyResult<()> {
        self.check(ty)?;
        // `message::instantiate` makes instances of it as `Message`s.
        if !cls.is_subclass_of::<crate::proto::message::PyMessage>()? {
            return Err(PyTypeError::new_err(
                "a message class must derive from amber.proto.Message",
            ));
        }
        self.inner.classes[ty as usize]
            .set(cls.unbind())
            .map_err(|_| PyValueError::new_err("message type already bound"))
    }

    /// The attribute object for field `pos` of type `ty`.
    fn field(&self, ty: u32, pos: u32) -> PyResult<crate::proto::message::Field> {
        self.check(ty)?;
        if pos as usize >= self.inner.tables.messages[ty as usize].fields.len() {
            return Err(PyValueError::new_err("no such field"));
        }
        Ok(crate::proto::message::Field {
            s: self.inner.clone(),
            ty,
            pos,
        })
    }
}

impl PySchema {
    fn check(&self, ty: u32) -> PyResult<()> {
        if (ty as usize) < self.inner.tables.messages.len() {
            Ok(())
        } else {
            Err(PyValueError::new_err("no such message type"))
        }
    }
}

/// A loader over a closure that may fail (in-memory sources, then
/// directories).
struct MemLoader<'a, F>(&'a mut F);

impl<F: FnMut(&str) -> Result<Option<Vec<u8>>, String>> amber_core::proto::Loader
    for MemLoader<'_, F>
{
    fn load(&mut self, path: &str) -> Result<Option<Vec<u8>>, String> {
        (self.0)(path)
    }
}
