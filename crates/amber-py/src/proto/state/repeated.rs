//! A repeated field's storage: its values as [`Items`] keeps them, and the
//! `RepeatedContainer` class's state ([`Repeated`]; its Python methods are
//! in `api::repeated`).

use amber_core::proto::runtime::{Kind, Scalar};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyWeakrefReference};

use crate::proto::state::schema::SchemaRef;
use crate::proto::state::values;

/// A repeated field's values. Numbers, bools and enums (the packable
/// kinds) are kept as Rust values, each as [`Scalar::bits`] gives it,
/// and their Python objects are made when read: a decoded field makes no
/// Python object per value, and the encoder reads them as a slice.
/// Strings, bytes and messages are kept as their checked Python objects.
pub enum Items {
    Objs(Vec<Py<PyAny>>),
    Nums(Kind, Vec<u64>),
}

impl Items {
    /// No values, for a field of `kind`.
    pub fn new(kind: Kind) -> Items {
        Items::with_capacity(kind, 0)
    }

    /// No values yet, with room for `n`.
    pub fn with_capacity(kind: Kind, n: usize) -> Items {
        if kind.packable() {
            Items::Nums(kind, Vec::with_capacity(n))
        } else {
            Items::Objs(Vec::with_capacity(n))
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Items::Objs(v) => v.len(),
            Items::Nums(_, v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Value `i` (in range) as a Python object.
    pub fn get(&self, py: Python<'_>, i: usize) -> PyResult<Py<PyAny>> {
        match self {
            Items::Objs(v) => Ok(v[i].clone_ref(py)),
            Items::Nums(k, v) => values::number(py, *k, v[i]),
        }
    }

    /// Every value as a Python object, in a new list made at its length
    /// (no intermediate vector).
    pub fn to_list<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        match self {
            Items::Objs(v) => PyList::new(py, v.iter().map(|o| o.bind(py))),
            Items::Nums(k, v) => PyList::new(py, v.iter().map(|&b| KeptNumber(*k, b))),
        }
    }

    /// Value `i` as the encoder's scalar, when kept as a number.
    #[inline]
    pub fn scalar(&self, i: usize) -> Option<Scalar<'static>> {
        match self {
            Items::Objs(_) => None,
            Items::Nums(k, v) => Scalar::from_bits(*k, *v.get(i)?),
        }
    }

    /// Every value as a Python object.
    pub fn to_vec(&self, py: Python<'_>) -> PyResult<Vec<Py<PyAny>>> {
        match self {
            Items::Objs(v) => Ok(v.iter().map(|o| o.clone_ref(py)).collect()),
            Items::Nums(k, v) => v.iter().map(|&b| values::number(py, *k, b)).collect(),
        }
    }

    /// `v` as this list keeps it: an object's bits in a list of numbers
    /// (a number into a list of objects is refused).
    fn convert(&self, py: Python<'_>, v: Kept) -> PyResult<Kept> {
        match (self, v) {
            (Items::Nums(k, _), Kept::Obj(o)) => Ok(Kept::Num(values::bits(o.bind(py), *k)?)),
            (Items::Objs(_), Kept::Num(_)) => Err(PyTypeError::new_err(
                "a number where a list of objects is kept",
            )),
            (_, v) => Ok(v),
        }
    }

    /// Append a checked value.
    #[inline]
    pub fn push(&mut self, py: Python<'_>, v: Kept) -> PyResult<()> {
        match (&mut *self, v) {
            (Items::Nums(_, a), Kept::Num(b)) => a.push(b),
            (Items::Objs(a), Kept::Obj(o)) => a.push(o),
            (_, v) => {
                let v = self.convert(py, v)?;
                return self.push(py, v);
            }
        }
        Ok(())
    }

    /// Append a decoded value.
    #[inline]
    pub fn push_scalar(&mut self, py: Python<'_>, s: Scalar<'_>) -> PyResult<()> {
        match self {
            Items::Nums(k, v) => match s.bits(*k) {
                Some(b) => v.push(b),
                None => return Err(PyTypeError::new_err("a string among numbers")),
            },
            Items::Objs(v) => v.push(values::to_py(py, s)?),
        }
        Ok(())
    }

    /// Replace value `i` (in range) by a checked value.
    pub fn set(&mut self, py: Python<'_>, i: usize, v: Kept) -> PyResult<()> {
        match (self.convert(py, v)?, self) {
            (Kept::Obj(o), Items::Objs(v)) => v[i] = o,
            (Kept::Num(b), Items::Nums(_, v)) => v[i] = b,
            _ => {}
        }
        Ok(())
    }

    /// Insert a checked value before `i` (at most the length).
    pub fn insert(&mut self, py: Python<'_>, i: usize, v: Kept) -> PyResult<()> {
        match (self.convert(py, v)?, self) {
            (Kept::Obj(o), Items::Objs(v)) => v.insert(i, o),
            (Kept::Num(b), Items::Nums(_, v)) => v.insert(i, b),
            _ => {}
        }
        Ok(())
    }

    /// Remove value `i` (in range), as a Python object.
    pub fn remove(&mut self, py: Python<'_>, i: usize) -> PyResult<Py<PyAny>> {
        match self {
            Items::Objs(v) => Ok(v.remove(i)),
            Items::Nums(k, v) => values::number(py, *k, v.remove(i)),
        }
    }

    /// Replace every value by the (checked) values of `list`.
    pub fn replace(&mut self, list: &Bound<'_, PyList>) -> PyResult<()> {
        *self = match self {
            Items::Objs(_) => Items::Objs(list.iter().map(|v| v.unbind()).collect()),
            Items::Nums(k, _) => Items::Nums(
                *k,
                list.iter()
                    .map(|v| values::bits(&v, *k))
                    .collect::<PyResult<_>>()?,
            ),
        };
        Ok(())
    }

    /// Make room for `n` more values.
    pub fn reserve(&mut self, n: usize) {
        match self {
            Items::Objs(v) => v.reserve(n),
            Items::Nums(_, v) => v.reserve(n),
        }
    }

    pub fn clear(&mut self) {
        match self {
            Items::Objs(v) => v.clear(),
            Items::Nums(_, v) => v.clear(),
        }
    }

    pub fn reverse(&mut self) {
        match self {
            Items::Objs(v) => v.reverse(),
            Items::Nums(_, v) => v.reverse(),
        }
    }

    /// Move every value of `other` (of the same field) to the end.
    pub fn append(&mut self, py: Python<'_>, other: Items) -> PyResult<()> {
        match (self, other) {
            (Items::Objs(a), Items::Objs(b)) => a.extend(b),
            (Items::Nums(_, a), Items::Nums(_, b)) => a.extend(b),
            (a, b) => {
                for v in b.to_vec(py)? {
                    a.push(py, Kept::Obj(v))?;
                }
            }
        }
        Ok(())
    }

    /// A copy sharing the Python objects (the caller copies messages).
    pub fn clone_ref(&self, py: Python<'_>) -> Items {
        match self {
            Items::Objs(v) => Items::Objs(v.iter().map(|o| o.clone_ref(py)).collect()),
            Items::Nums(k, v) => Items::Nums(*k, v.clone()),
        }
    }
}

/// A kept number with its kind, made a Python object when a list is filled.
struct KeptNumber(Kind, u64);

impl<'py> IntoPyObject<'py> for KeptNumber {
    type Target = PyAny;
    type Output = Bound<'py, PyAny>;
    type Error = PyErr;

    #[inline]
    fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        values::number(py, self.0, self.1).map(|o| o.into_bound(py))
    }
}

/// One checked value of a repeated field, as [`Items`] keeps it.
pub enum Kept {
    Obj(Py<PyAny>),
    Num(u64),
}

/// A repeated field's values.
#[pyclass(module = "amber.proto", name = "RepeatedContainer", sequence)]
pub struct Repeated {
    pub s: SchemaRef,
    pub ty: u32,
    pub pos: u32,
    pub items: Items,
    /// The message, while it is a default sub-message.
    pub owner: Option<Py<PyWeakrefReference>>,
}

impl Repeated {
    pub fn new(s: SchemaRef, ty: u32, pos: u32, items: Items) -> Repeated {
        Repeated {
            s,
            ty,
            pos,
            items,
            owner: None,
        }
    }
}
