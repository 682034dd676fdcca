//! `_native.ProtoSchema`: compiling `.proto` files or loading a
//! descriptor set into a [`Schema`], and binding each message type's
//! Python class.

use std::collections::HashMap;

use amber_core::proto::runtime::{Cardinality, Kind};
use amber_core::proto::{FileDescriptorSet, Message as _};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyType};

use crate::proto::api::message::MessageType;
use crate::proto::state::schema::{Schema, SchemaRef};
use crate::proto::state::values;

/// `_native.ProtoSchema`: a compiled load, for `amber.proto` to build its
/// namespace from.
#[pyclass(frozen, module = "amber._native", name = "ProtoSchema")]
pub struct PySchema {
    pub inner: SchemaRef,
}

#[pymethods]
impl PySchema {
    /// Compile `files` (paths relative to the include directories, which
    /// are searched in order, as protoc's `-I`).
    #[staticmethod]
    fn compile(py: Python<'_>, files: Vec<String>, include: Vec<String>) -> PyResult<PySchema> {
        crate::errors::guard(|| {
            let mut loader = amber_core::proto::DirLoader {
                include: include.into_iter().map(Into::into).collect(),
            };
            let roots: Vec<&str> = files.iter().map(String::as_str).collect();
            let set = py
                .detach(|| amber_core::proto::compile(&roots, &mut loader, true))
                .map_err(|e| crate::errors::proto_syntax(py, &e))?;
            Ok(PySchema {
                inner: SchemaRef::new(py, Schema::new(py, &set)?)?,
            })
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
        crate::errors::guard(|| {
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
                inner: SchemaRef::new(py, Schema::new(py, &set)?)?,
            })
        })
    }

    /// A schema from a serialized `FileDescriptorSet` (every import
    /// included, dependencies before the files that use them).
    #[staticmethod]
    fn from_descriptor_set(py: Python<'_>, data: &[u8]) -> PyResult<PySchema> {
        crate::errors::guard(|| {
            let mut set = FileDescriptorSet::decode(data).map_err(|e| {
                crate::errors::proto_decode(
                    py,
                    "malformed",
                    format!("not a FileDescriptorSet: {e}"),
                    None,
                    None,
                )
            })?;
            amber_core::proto::compiler::validate::validate_set(&mut set)
                .map_err(|e| crate::errors::proto_syntax(py, &e))?;
            Ok(PySchema {
                inner: SchemaRef::new(py, Schema::new(py, &set)?)?,
            })
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
        crate::errors::guard(|| {
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
        })
    }

    /// The `.proto` file declaring each message type, by index.
    fn message_files(&self) -> Vec<String> {
        self.inner.files.clone()
    }

    /// `[(full_name, closed, [(name, number), ...])]` per enum type.
    fn enums<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        crate::errors::guard(|| {
            let out = PyList::empty(py);
            for e in &self.inner.tables.enums {
                out.append((&e.full_name, e.closed, &e.names))?;
            }
            Ok(out)
        })
    }

    /// The handle a message class keeps as `__amber__`.
    fn message_type(&self, py: Python<'_>, ty: u32) -> PyResult<MessageType> {
        crate::errors::guard(|| {
            self.check(ty)?;
            Ok(MessageType {
                s: self.inner.clone_ref(py),
                ty,
            })
        })
    }

    /// Bind message type `ty` to its class (once).
    fn bind(&self, ty: u32, cls: Bound<'_, PyType>) -> PyResult<()> {
        crate::errors::guard(|| {
            self.check(ty)?;
            // `message::instantiate` makes instances of it as `Message`s.
            if !cls.is_subclass_of::<crate::proto::state::message::PyMessage>()? {
                return Err(PyTypeError::new_err(
                    "a message class must derive from amber.proto.Message",
                ));
            }
            self.inner.classes[ty as usize]
                .set(cls.unbind())
                .map_err(|_| PyValueError::new_err("message type already bound"))
        })
    }

    /// The attribute object for field `pos` of type `ty`.
    fn field(
        &self,
        py: Python<'_>,
        ty: u32,
        pos: u32,
    ) -> PyResult<crate::proto::api::field::Field> {
        crate::errors::guard(|| {
            self.check(ty)?;
            let Some(f) = self.inner.tables.messages[ty as usize]
                .fields
                .get(pos as usize)
            else {
                return Err(PyValueError::new_err("no such field"));
            };
            Ok(crate::proto::api::field::Field {
                s: self.inner.clone_ref(py),
                ty,
                pos,
                class: std::sync::atomic::AtomicUsize::new(0),
                kind: f.kind,
                scalar_default: matches!(f.card, Cardinality::Singular { .. })
                    && !matches!(f.kind, Kind::Message(_)),
            })
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
