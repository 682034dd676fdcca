//! `amber.proto.RepeatedContainer`'s Python methods: a list-like
//! container that checks every value on the way in (as the field's setter
//! would) and makes its message present when changed (see
//! `message::attach`).

use amber_core::proto::runtime::{FieldInfo, Kind};
use pyo3::exceptions::{PyIndexError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PySlice, PyString};

use crate::proto::state::objects::attach_owner;
use crate::proto::state::repeated::{Kept, Repeated};
use crate::proto::state::values;

impl Kept {
    /// The value as a Python object, for a field of `kind`.
    fn object(self, py: Python<'_>, kind: Kind) -> PyResult<Py<PyAny>> {
        match self {
            Kept::Obj(o) => Ok(o),
            Kept::Num(b) => values::number(py, kind, b),
        }
    }
}

impl Repeated {
    fn field(&self) -> &FieldInfo {
        &self.s.tables.messages[self.ty as usize].fields[self.pos as usize]
    }

    fn composite(&self) -> bool {
        matches!(self.field().kind, Kind::Message(_))
    }
}

/// Check `v` for the container's field, without holding a borrow (the
/// check may run Python code).
fn checked(slf: &Bound<'_, Repeated>, v: &Bound<'_, PyAny>) -> PyResult<Kept> {
    let (s, ty, pos) = {
        let b = slf.try_borrow()?;
        (b.s.clone_ref(slf.py()), b.ty, b.pos)
    };
    let f = &s.tables.messages[ty as usize].fields[pos as usize];
    Kept::check(slf.py(), &s, f, v)
}

fn changed(slf: &Bound<'_, Repeated>) -> PyResult<()> {
    let owner = slf
        .try_borrow()?
        .owner
        .as_ref()
        .map(|o| o.clone_ref(slf.py()));
    attach_owner(slf.py(), owner)
}

fn index(i: isize, len: usize) -> PyResult<usize> {
    let j = if i < 0 { i + len as isize } else { i };
    if j < 0 || j as usize >= len {
        return Err(PyIndexError::new_err("list index out of range"));
    }
    Ok(j as usize)
}

#[pymethods]
impl Repeated {
    fn __len__(&self) -> usize {
        self.items.len()
    }

    fn __getitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        crate::errors::guard(|| {
            if let Ok(sl) = key.cast::<PySlice>() {
                let ind = sl.indices(self.items.len() as isize)?;
                let out = PyList::empty(py);
                let mut i = ind.start;
                for _ in 0..ind.slicelength {
                    out.append(self.items.get(py, i as usize)?)?;
                    i += ind.step;
                }
                return Ok(out.into_any().unbind());
            }
            let i: isize = key.extract()?;
            self.items.get(py, index(i, self.items.len())?)
        })
    }

    fn __setitem__(
        slf: &Bound<'_, Self>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        crate::errors::guard(|| {
            if slf.try_borrow()?.composite() {
                return Err(PyTypeError::new_err(
                    "does not support assignment; use add(), append() or CopyFrom()",
                ));
            }
            if let Ok(sl) = key.cast::<PySlice>() {
                let kind = slf.try_borrow()?.field().kind;
                let mut new = Vec::new();
                for v in value.try_iter()? {
                    new.push(checked(slf, &v?)?.object(slf.py(), kind)?);
                }
                let mut list = snapshot(slf)?;
                list.as_any().set_item(sl, PyList::new(slf.py(), new)?)?;
                slf.try_borrow_mut()?.items.replace(&list)?;
                list = PyList::empty(slf.py());
                drop(list);
            } else {
                let i: isize = key.extract()?;
                let v = checked(slf, value)?;
                let mut b = slf.try_borrow_mut()?;
                let j = index(i, b.items.len())?;
                b.items.set(slf.py(), j, v)?;
            }
            changed(slf)
        })
    }

    fn __delitem__(slf: &Bound<'_, Self>, key: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard(|| {
            if let Ok(sl) = key.cast::<PySlice>() {
                let list = snapshot(slf)?;
                list.as_any().del_item(sl)?;
                slf.try_borrow_mut()?.items.replace(&list)?;
            } else {
                let i: isize = key.extract()?;
                let mut b = slf.try_borrow_mut()?;
                let j = index(i, b.items.len())?;
                b.items.remove(slf.py(), j)?;
            }
            changed(slf)
        })
    }

    fn __iter__(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        crate::errors::guard(|| Ok(snapshot(slf)?.as_any().try_iter()?.into_any().unbind()))
    }

    fn __contains__(slf: &Bound<'_, Self>, v: &Bound<'_, PyAny>) -> PyResult<bool> {
        crate::errors::guard(|| snapshot(slf)?.contains(v))
    }

    fn __richcmp__(
        slf: &Bound<'_, Self>,
        other: &Bound<'_, PyAny>,
        op: pyo3::basic::CompareOp,
    ) -> PyResult<Py<PyAny>> {
        crate::errors::guard(|| {
            let py = slf.py();
            let mine = snapshot(slf)?;
            let theirs = if let Ok(o) = other.cast::<Repeated>() {
                snapshot(o)?.into_any()
            } else if other.is_instance_of::<PyList>() {
                other.clone()
            } else {
                return Ok(py.NotImplemented());
            };
            Ok(mine.as_any().rich_compare(theirs, op)?.unbind())
        })
    }

    fn __hash__(&self) -> PyResult<isize> {
        crate::errors::guard(|| Err(PyTypeError::new_err("unhashable object")))
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        crate::errors::guard(|| Ok(snapshot(slf)?.repr()?.to_string()))
    }

    /// Add a value (a copy, for messages).
    fn append(slf: &Bound<'_, Self>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard(|| {
            let v = checked(slf, value)?;
            slf.try_borrow_mut()?.items.push(slf.py(), v)?;
            changed(slf)
        })
    }

    /// Add every value of an iterable.
    fn extend(slf: &Bound<'_, Self>, values: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard(|| {
            if values.is_instance_of::<PyString>() {
                return Err(PyTypeError::new_err(
                    "extend() takes an iterable of values, not a str",
                ));
            }
            let mut new = Vec::new();
            for v in values.try_iter()? {
                new.push(checked(slf, &v?)?);
            }
            let mut b = slf.try_borrow_mut()?;
            for v in new {
                b.items.push(slf.py(), v)?;
            }
            drop(b);
            changed(slf)
        })
    }

    /// Insert a value before index `i`.
    fn insert(slf: &Bound<'_, Self>, i: isize, value: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard(|| {
            let v = checked(slf, value)?;
            {
                let mut b = slf.try_borrow_mut()?;
                let n = b.items.len() as isize;
                let j = if i < 0 { (i + n).max(0) } else { i.min(n) };
                b.items.insert(slf.py(), j as usize, v)?;
            }
            changed(slf)
        })
    }

    /// Remove and return the value at `i` (the last by default).
    #[pyo3(signature = (i = -1))]
    fn pop(slf: &Bound<'_, Self>, i: isize) -> PyResult<Py<PyAny>> {
        crate::errors::guard(|| {
            let v = {
                let mut b = slf.try_borrow_mut()?;
                let j = index(i, b.items.len())
                    .map_err(|_| PyIndexError::new_err("pop index out of range"))?;
                b.items.remove(slf.py(), j)?
            };
            changed(slf)?;
            Ok(v)
        })
    }

    /// Remove the first value equal to `value`.
    fn remove(slf: &Bound<'_, Self>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard(|| {
            let at = snapshot(slf)?.index(value)?;
            slf.try_borrow_mut()?.items.remove(slf.py(), at)?;
            changed(slf)
        })
    }

    /// Remove every value.
    fn clear(slf: &Bound<'_, Self>) -> PyResult<()> {
        crate::errors::guard(|| {
            slf.try_borrow_mut()?.items.clear();
            changed(slf)
        })
    }

    /// Sort in place (`key` and `reverse` as for `list.sort`).
    #[pyo3(signature = (*, key = None, reverse = false))]
    fn sort(slf: &Bound<'_, Self>, key: Option<&Bound<'_, PyAny>>, reverse: bool) -> PyResult<()> {
        crate::errors::guard(|| {
            let list = snapshot(slf)?;
            let kw = PyDict::new(slf.py());
            kw.set_item("key", key)?;
            kw.set_item("reverse", reverse)?;
            list.call_method("sort", (), Some(&kw))?;
            slf.try_borrow_mut()?.items.replace(&list)?;
            changed(slf)
        })
    }

    /// Reverse in place.
    fn reverse(slf: &Bound<'_, Self>) -> PyResult<()> {
        crate::errors::guard(|| {
            slf.try_borrow_mut()?.items.reverse();
            changed(slf)
        })
    }

    /// The index of the first value equal to `value`.
    fn index(slf: &Bound<'_, Self>, value: &Bound<'_, PyAny>) -> PyResult<usize> {
        crate::errors::guard(|| snapshot(slf)?.index(value))
    }

    /// How many values equal `value`.
    fn count(slf: &Bound<'_, Self>, value: &Bound<'_, PyAny>) -> PyResult<usize> {
        crate::errors::guard(|| snapshot(slf)?.call_method1("count", (value,))?.extract())
    }

    /// (Message fields) add a new message built from keywords; returns it.
    #[pyo3(signature = (**kwargs))]
    fn add<'py>(
        slf: &Bound<'py, Self>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        crate::errors::guard(|| {
            let py = slf.py();
            let sub = match slf.try_borrow()?.field().kind {
                Kind::Message(sub) => sub,
                _ => {
                    return Err(PyTypeError::new_err(
                        "add() is for repeated message fields; use append()",
                    ))
                }
            };
            let cls = slf.try_borrow()?.s.class(py, sub)?.clone();
            let m = cls.call((), kwargs)?;
            slf.try_borrow_mut()?
                .items
                .push(py, Kept::Obj(m.clone().unbind()))?;
            changed(slf)?;
            Ok(m)
        })
    }

    /// Append copies of another repeated field's values.
    fn MergeFrom(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard(|| Repeated::extend(slf, other))
    }

    fn __reduce__(&self) -> PyResult<()> {
        crate::errors::guard(|| {
            Err(PyTypeError::new_err(
                "a repeated field is pickled with its message, not alone",
            ))
        })
    }
}

/// The container's values as a new list (iteration sees a snapshot).
fn snapshot<'py>(slf: &Bound<'py, Repeated>) -> PyResult<Bound<'py, PyList>> {
    let b = slf.try_borrow()?;
    b.items.to_list(slf.py())
}
