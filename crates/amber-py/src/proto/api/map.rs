//! `amber.proto.MapContainer`'s Python methods: a dict-like container
//! that checks every key and value on the way in (as the field's setter
//! would) and makes its message present when changed (see
//! `message::attach`).

use amber_core::proto::runtime::Kind;
use pyo3::exceptions::{PyKeyError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple, PyType};

use crate::proto::ops::copy;
use crate::proto::state::map::{KeyView, MapField, MapKey};
use crate::proto::state::message::Message;
use crate::proto::state::objects::{self, attach_owner};

impl MapField {
    /// The value a missing key reads as (inserted by `m[key]`).
    fn fresh(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        match self.value_kind() {
            Kind::Message(sub) => Ok(objects::instantiate(
                py,
                Message::empty(self.s.clone_ref(py), sub),
            )?
            .into_any()
            .unbind()),
            _ => Ok(self.s.defaults[self.entry_type() as usize][1].clone_ref(py)),
        }
    }
}

fn map_changed(slf: &Bound<'_, MapField>) -> PyResult<()> {
    let owner = slf
        .try_borrow()?
        .owner
        .as_ref()
        .map(|o| o.clone_ref(slf.py()));
    attach_owner(slf.py(), owner)
}

/// A checked key, and its hashable form.
fn key_of(slf: &Bound<'_, MapField>, k: &Bound<'_, PyAny>) -> PyResult<(Py<PyAny>, MapKey)> {
    let k = slf.try_borrow()?.check_key(k).map_err(|e| {
        if e.is_instance_of::<PyValueError>(k.py()) || e.is_instance_of::<PyTypeError>(k.py()) {
            e
        } else {
            PyKeyError::new_err(k.clone().unbind())
        }
    })?;
    let mk = KeyView::of(k.bind(slf.py()))?.owned();
    Ok((k, mk))
}

/// `k` as a key to look up: `None` when no key can equal it; a key of the
/// wrong type or out of range raises (`TypeError`, `ValueError`).
fn lookup_key(slf: &Bound<'_, MapField>, k: &Bound<'_, PyAny>) -> PyResult<Option<MapKey>> {
    match key_of(slf, k) {
        Ok((_, mk)) => Ok(Some(mk)),
        Err(e) if e.is_instance_of::<PyKeyError>(slf.py()) => Ok(None),
        Err(e) => Err(e),
    }
}

fn as_dict<'py>(slf: &Bound<'py, MapField>) -> PyResult<Bound<'py, PyDict>> {
    let py = slf.py();
    let d = PyDict::new(py);
    for (k, v) in &slf.try_borrow()?.data.entries {
        d.set_item(k.bind(py), v.bind(py))?;
    }
    Ok(d)
}

#[pymethods]
impl MapField {
    fn __len__(&self) -> usize {
        self.data.entries.len()
    }

    /// The class of the map's entry message (`key`, `value`), as Google's
    /// maps give it: what `text_format` builds each entry with.
    #[pyo3(name = "GetEntryClass")]
    fn get_entry_class<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyType>> {
        crate::errors::guard(|| {
            let this = slf.try_borrow()?;
            this.s.class(slf.py(), this.entry_type()).cloned()
        })
    }

    /// Whether `k` is a key; a key of the wrong type or out of range
    /// raises, as Google's maps do.
    fn __contains__(slf: &Bound<'_, Self>, k: &Bound<'_, PyAny>) -> PyResult<bool> {
        crate::errors::guard(|| {
            let Some(mk) = lookup_key(slf, k)? else {
                return Ok(false);
            };
            Ok(slf.try_borrow()?.data.find(slf.py(), &mk).is_some())
        })
    }

    /// The value for `key`; a missing key is inserted with the default
    /// value (a new message, for message values), as Google's maps do.
    fn __getitem__(slf: &Bound<'_, Self>, key: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        crate::errors::guard(|| {
            let py = slf.py();
            let (k, mk) = key_of(slf, key)?;
            if let Some(i) = slf.try_borrow()?.data.find(py, &mk) {
                return Ok(slf.try_borrow()?.data.entries[i].1.clone_ref(py));
            }
            let v = slf.try_borrow()?.fresh(py)?;
            slf.try_borrow_mut()?.data.insert(py, k, v.clone_ref(py))?;
            map_changed(slf)?;
            Ok(v)
        })
    }

    fn __setitem__(
        slf: &Bound<'_, Self>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        crate::errors::guard(|| {
            let py = slf.py();
            if matches!(slf.try_borrow()?.value_kind(), Kind::Message(_)) {
                return Err(PyValueError::new_err(
                    "May not set values directly, call my_map[key].foo = 5",
                ));
            }
            let (k, _) = key_of(slf, key)?;
            let v = slf.try_borrow()?.check_value(value)?;
            slf.try_borrow_mut()?.data.insert(py, k, v)?;
            map_changed(slf)
        })
    }

    fn __delitem__(slf: &Bound<'_, Self>, key: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard(|| {
            let py = slf.py();
            let (_, mk) = key_of(slf, key)?;
            if slf.try_borrow_mut()?.data.remove(py, &mk)?.is_none() {
                return Err(PyKeyError::new_err(key.clone().unbind()));
            }
            map_changed(slf)
        })
    }

    fn __iter__(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        crate::errors::guard(|| {
            Ok(MapField::keys(slf)?
                .as_any()
                .try_iter()?
                .into_any()
                .unbind())
        })
    }

    fn __richcmp__(
        slf: &Bound<'_, Self>,
        other: &Bound<'_, PyAny>,
        op: pyo3::basic::CompareOp,
    ) -> PyResult<Py<PyAny>> {
        crate::errors::guard(|| {
            let py = slf.py();
            let theirs = if let Ok(o) = other.cast::<MapField>() {
                as_dict(o)?.into_any()
            } else if other.is_instance_of::<PyDict>() {
                other.clone()
            } else {
                return Ok(py.NotImplemented());
            };
            Ok(as_dict(slf)?.as_any().rich_compare(theirs, op)?.unbind())
        })
    }

    fn __hash__(&self) -> PyResult<isize> {
        crate::errors::guard(|| Err(PyTypeError::new_err("unhashable object")))
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        crate::errors::guard(|| Ok(as_dict(slf)?.repr()?.to_string()))
    }

    /// The keys, as a list.
    fn keys<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyList>> {
        crate::errors::guard(|| {
            let b = slf.try_borrow()?;
            PyList::new(slf.py(), b.data.entries.iter().map(|e| e.0.bind(slf.py())))
        })
    }

    /// The values, as a list.
    fn values<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyList>> {
        crate::errors::guard(|| {
            let b = slf.try_borrow()?;
            PyList::new(slf.py(), b.data.entries.iter().map(|e| e.1.bind(slf.py())))
        })
    }

    /// `(key, value)` pairs, as a list.
    fn items<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyList>> {
        crate::errors::guard(|| {
            let py = slf.py();
            let b = slf.try_borrow()?;
            PyList::new(
                py,
                b.data.entries.iter().map(|e| (e.0.bind(py), e.1.bind(py))),
            )
        })
    }

    /// The value for `key`, or `default` (nothing is inserted).
    #[pyo3(signature = (key, default = None))]
    fn get(
        slf: &Bound<'_, Self>,
        key: &Bound<'_, PyAny>,
        default: Option<Py<PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        crate::errors::guard(|| {
            let py = slf.py();
            let Some(mk) = lookup_key(slf, key)? else {
                return Ok(default.unwrap_or_else(|| py.None()));
            };
            let b = slf.try_borrow()?;
            Ok(match b.data.find(py, &mk) {
                Some(i) => b.data.entries[i].1.clone_ref(py),
                None => default.unwrap_or_else(|| py.None()),
            })
        })
    }

    /// Remove `key` and return its value (or `default`, if given: `None`
    /// too, as `dict.pop` takes it).
    #[pyo3(signature = (key, *default))]
    fn pop(
        slf: &Bound<'_, Self>,
        key: &Bound<'_, PyAny>,
        default: &Bound<'_, PyTuple>,
    ) -> PyResult<Py<PyAny>> {
        crate::errors::guard(|| {
            let py = slf.py();
            if default.len() > 1 {
                return Err(PyTypeError::new_err(format!(
                    "pop expected at most 2 arguments, got {}",
                    default.len() + 1
                )));
            }
            let default = default.iter().next().map(Bound::unbind);
            let (_, mk) = key_of(slf, key)?;
            let removed = slf.try_borrow_mut()?.data.remove(py, &mk)?;
            match (removed, default) {
                (Some((_, v)), _) => {
                    map_changed(slf)?;
                    Ok(v)
                }
                (None, Some(d)) => Ok(d),
                (None, None) => Err(PyKeyError::new_err(key.clone().unbind())),
            }
        })
    }

    /// Remove an entry and return it as `(key, value)`: the first in
    /// iteration order, as `MutableMapping.popitem` takes it.
    fn popitem(slf: &Bound<'_, Self>) -> PyResult<(Py<PyAny>, Py<PyAny>)> {
        crate::errors::guard(|| {
            let py = slf.py();
            let first = slf
                .try_borrow()?
                .data
                .entries
                .first()
                .map(|e| e.0.clone_ref(py));
            let Some(k) = first else {
                return Err(PyKeyError::new_err("popitem(): map is empty"));
            };
            let (_, mk) = key_of(slf, k.bind(py))?;
            let removed = slf.try_borrow_mut()?.data.remove(py, &mk)?;
            map_changed(slf)?;
            removed.ok_or_else(|| PyKeyError::new_err(k))
        })
    }

    /// Remove every entry.
    fn clear(slf: &Bound<'_, Self>) -> PyResult<()> {
        crate::errors::guard(|| {
            slf.try_borrow_mut()?.data.clear();
            map_changed(slf)
        })
    }

    /// Set entries from a mapping (scalar values; message values are
    /// copied).
    #[pyo3(signature = (other = None, **kwargs))]
    fn update(
        slf: &Bound<'_, Self>,
        other: Option<&Bound<'_, PyAny>>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<()> {
        crate::errors::guard(|| {
            let py = slf.py();
            let add = |k: &Bound<'_, PyAny>, v: &Bound<'_, PyAny>| -> PyResult<()> {
                let (k, _) = key_of(slf, k)?;
                let v = slf.try_borrow()?.check_value(v)?;
                slf.try_borrow_mut()?.data.insert(py, k, v)
            };
            if let Some(o) = other {
                let items = if o.hasattr("items")? {
                    o.call_method0("items")?
                } else {
                    o.clone()
                };
                for kv in items.try_iter()? {
                    let (k, v): (Bound<'_, PyAny>, Bound<'_, PyAny>) = kv?.extract()?;
                    add(&k, &v)?;
                }
            }
            if let Some(kw) = kwargs {
                crate::ffi::dict::for_each_pair(kw, add)?;
            }
            map_changed(slf)
        })
    }

    /// (Message values) the value for `key`, inserting a new one.
    fn get_or_create(slf: &Bound<'_, Self>, key: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        crate::errors::guard(|| MapField::__getitem__(slf, key))
    }

    /// Set `default` for a missing key and return the key's value; a map
    /// of scalar values needs `default` (as Google's), a map of messages
    /// gives a new message.
    #[pyo3(signature = (key, default = None))]
    fn setdefault(
        slf: &Bound<'_, Self>,
        key: &Bound<'_, PyAny>,
        default: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        crate::errors::guard(|| {
            if MapField::__contains__(slf, key)? {
                return MapField::__getitem__(slf, key);
            }
            match default {
                Some(d) => {
                    MapField::__setitem__(slf, key, d)?;
                    MapField::__getitem__(slf, key)
                }
                None if !matches!(slf.try_borrow()?.value_kind(), Kind::Message(_)) => Err(
                    PyValueError::new_err("The value for scalar map setdefault must be set."),
                ),
                None => MapField::__getitem__(slf, key),
            }
        })
    }

    /// Copy another map's entries in (replacing values of equal keys).
    fn MergeFrom(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard(|| {
            let py = slf.py();
            let o = other.cast::<MapField>()?;
            let entries: Vec<(Py<PyAny>, Py<PyAny>)> = o
                .try_borrow()?
                .data
                .entries
                .iter()
                .map(|(k, v)| (k.clone_ref(py), v.clone_ref(py)))
                .collect();
            for (k, v) in entries {
                let v = match slf.try_borrow()?.value_kind() {
                    Kind::Message(_) => copy::copy_obj(py, v.bind(py))?.into_any().unbind(),
                    _ => v,
                };
                slf.try_borrow_mut()?.data.insert(py, k, v)?;
            }
            map_changed(slf)
        })
    }

    fn __reduce__(&self) -> PyResult<()> {
        crate::errors::guard(|| {
            Err(PyTypeError::new_err(
                "a map field is pickled with its message, not alone",
            ))
        })
    }
}
