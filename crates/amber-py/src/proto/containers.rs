//! Repeated and map fields: list-like and dict-like containers that check
//! every value on the way in (as the field's setter would) and make their
//! message present when changed (see `message::attach`).

use std::borrow::Cow;
use std::hash::BuildHasher;
use std::sync::Arc;

use amber_core::proto::runtime::{FieldInfo, Kind, Scalar};
use pyo3::exceptions::{PyIndexError, PyKeyError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyList, PySlice, PyString, PyTuple, PyWeakrefReference};

use crate::proto::message::{self, attach_owner, Message};
use crate::proto::state::schema::Schema;
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

impl Kept {
    /// Check `v` for repeated field `f` as its setter would (messages
    /// copied or built; numbers read in place where they can be). The
    /// check may run Python code: hold no borrow of the container.
    #[inline]
    pub fn check(
        py: Python<'_>,
        s: &Arc<Schema>,
        f: &FieldInfo,
        v: &Bound<'_, PyAny>,
    ) -> PyResult<Kept> {
        if f.kind.packable() {
            Ok(Kept::Num(values::check_bits(&s.tables, f, f.kind, v)?))
        } else {
            Ok(Kept::Obj(message::element(py, s, f, v)?))
        }
    }

    /// The value as a Python object, for a field of `kind`.
    fn object(self, py: Python<'_>, kind: Kind) -> PyResult<Py<PyAny>> {
        match self {
            Kept::Obj(o) => Ok(o),
            Kept::Num(b) => values::number(py, kind, b),
        }
    }
}

/// A repeated field's values.
#[pyclass(module = "amber.proto", name = "RepeatedContainer", sequence)]
pub struct Repeated {
    pub s: Arc<Schema>,
    pub ty: u32,
    pub pos: u32,
    pub items: Items,
    /// The message, while it is a default sub-message.
    pub owner: Option<Py<PyWeakrefReference>>,
}

impl Repeated {
    pub fn new(s: Arc<Schema>, ty: u32, pos: u32, items: Items) -> Repeated {
        Repeated {
            s,
            ty,
            pos,
            items,
            owner: None,
        }
    }

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
        (b.s.clone(), b.ty, b.pos)
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
    }

    fn __setitem__(
        slf: &Bound<'_, Self>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
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
    }

    fn __delitem__(slf: &Bound<'_, Self>, key: &Bound<'_, PyAny>) -> PyResult<()> {
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
    }

    fn __iter__(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        Ok(snapshot(slf)?.as_any().try_iter()?.into_any().unbind())
    }

    fn __contains__(slf: &Bound<'_, Self>, v: &Bound<'_, PyAny>) -> PyResult<bool> {
        snapshot(slf)?.contains(v)
    }

    fn __richcmp__(
        slf: &Bound<'_, Self>,
        other: &Bound<'_, PyAny>,
        op: pyo3::basic::CompareOp,
    ) -> PyResult<Py<PyAny>> {
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
    }

    fn __hash__(&self) -> PyResult<isize> {
        Err(PyTypeError::new_err("unhashable object"))
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        Ok(snapshot(slf)?.repr()?.to_string())
    }

    /// Add a value (a copy, for messages).
    fn append(slf: &Bound<'_, Self>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let v = checked(slf, value)?;
        slf.try_borrow_mut()?.items.push(slf.py(), v)?;
        changed(slf)
    }

    /// Add every value of an iterable.
    fn extend(slf: &Bound<'_, Self>, values: &Bound<'_, PyAny>) -> PyResult<()> {
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
    }

    /// Insert a value before index `i`.
    fn insert(slf: &Bound<'_, Self>, i: isize, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let v = checked(slf, value)?;
        {
            let mut b = slf.try_borrow_mut()?;
            let n = b.items.len() as isize;
            let j = if i < 0 { (i + n).max(0) } else { i.min(n) };
            b.items.insert(slf.py(), j as usize, v)?;
        }
        changed(slf)
    }

    /// Remove and return the value at `i` (the last by default).
    #[pyo3(signature = (i = -1))]
    fn pop(slf: &Bound<'_, Self>, i: isize) -> PyResult<Py<PyAny>> {
        let v = {
            let mut b = slf.try_borrow_mut()?;
            let j = index(i, b.items.len())
                .map_err(|_| PyIndexError::new_err("pop index out of range"))?;
            b.items.remove(slf.py(), j)?
        };
        changed(slf)?;
        Ok(v)
    }

    /// Remove the first value equal to `value`.
    fn remove(slf: &Bound<'_, Self>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let at = snapshot(slf)?.index(value)?;
        slf.try_borrow_mut()?.items.remove(slf.py(), at)?;
        changed(slf)
    }

    /// Remove every value.
    fn clear(slf: &Bound<'_, Self>) -> PyResult<()> {
        slf.try_borrow_mut()?.items.clear();
        changed(slf)
    }

    /// Sort in place (`key` and `reverse` as for `list.sort`).
    #[pyo3(signature = (*, key = None, reverse = false))]
    fn sort(slf: &Bound<'_, Self>, key: Option<&Bound<'_, PyAny>>, reverse: bool) -> PyResult<()> {
        let list = snapshot(slf)?;
        let kw = PyDict::new(slf.py());
        kw.set_item("key", key)?;
        kw.set_item("reverse", reverse)?;
        list.call_method("sort", (), Some(&kw))?;
        slf.try_borrow_mut()?.items.replace(&list)?;
        changed(slf)
    }

    /// Reverse in place.
    fn reverse(slf: &Bound<'_, Self>) -> PyResult<()> {
        slf.try_borrow_mut()?.items.reverse();
        changed(slf)
    }

    /// The index of the first value equal to `value`.
    fn index(slf: &Bound<'_, Self>, value: &Bound<'_, PyAny>) -> PyResult<usize> {
        snapshot(slf)?.index(value)
    }

    /// How many values equal `value`.
    fn count(slf: &Bound<'_, Self>, value: &Bound<'_, PyAny>) -> PyResult<usize> {
        snapshot(slf)?.call_method1("count", (value,))?.extract()
    }

    /// (Message fields) add a new message built from keywords; returns it.
    #[pyo3(signature = (**kwargs))]
    fn add<'py>(
        slf: &Bound<'py, Self>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
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
    }

    /// Append copies of another repeated field's values.
    fn MergeFrom(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        Repeated::extend(slf, other)
    }

    fn __reduce__(&self) -> PyResult<()> {
        Err(PyTypeError::new_err(
            "a repeated field is pickled with its message, not alone",
        ))
    }
}

/// The container's values as a new list (iteration sees a snapshot).
fn snapshot<'py>(slf: &Bound<'py, Repeated>) -> PyResult<Bound<'py, PyList>> {
    let b = slf.try_borrow()?;
    b.items.to_list(slf.py())
}

/// A map key, hashable in Rust: [`KeyView`] owning its text.
pub type MapKey = KeyView<'static>;

/// A map key as Rust reads it from a stored (checked) key object: a
/// string's text borrowed from the object where it can be.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum KeyView<'a> {
    Int(i128),
    Bool(bool),
    Str(Cow<'a, [u8]>),
}

impl<'a> KeyView<'a> {
    /// The key of a stored (checked) key object.
    pub fn of(k: &'a Bound<'_, PyAny>) -> PyResult<KeyView<'a>> {
        if let Ok(b) = k.cast_exact::<PyBool>() {
            return Ok(KeyView::Bool(b.is_true()));
        }
        if let Ok(s) = k.cast::<PyString>() {
            return Ok(KeyView::Str(match s.to_str() {
                Ok(t) => Cow::Borrowed(t.as_bytes()),
                Err(_) => Cow::Owned(values::escaped_bytes(k)?.as_bytes().to_vec()),
            }));
        }
        if k.is_exact_instance_of::<pyo3::types::PyInt>() {
            // SAFETY: `k` is a live exact int, held by the caller's borrow.
            if let Some(v) = unsafe { crate::ffi::long::small_int(k.as_ptr()) } {
                return Ok(KeyView::Int(i128::from(v)));
            }
        }
        Ok(KeyView::Int(k.extract()?))
    }

    /// The key, owning its text.
    pub fn owned(self) -> MapKey {
        match self {
            KeyView::Int(v) => KeyView::Int(v),
            KeyView::Bool(v) => KeyView::Bool(v),
            KeyView::Str(t) => KeyView::Str(Cow::Owned(t.into_owned())),
        }
    }
}

/// An index of a map's entries by key: each entry's position and its
/// key's hash (a per-process random seed: keys come from untrusted input).
/// The keys stay in the entries, so the index copies none.
#[derive(Clone, Default)]
struct KeyIndex {
    table: hashbrown::HashTable<(u64, usize)>,
    seed: foldhash::fast::RandomState,
}

impl KeyIndex {
    fn with_capacity(n: usize) -> KeyIndex {
        KeyIndex {
            table: hashbrown::HashTable::with_capacity(n),
            seed: Default::default(),
        }
    }

    fn hash(&self, key: &impl std::hash::Hash) -> u64 {
        self.seed.hash_one(key)
    }

    /// The position of the entry whose key hashes to `h` and for which
    /// `same` (given a position) holds.
    fn find(&self, h: u64, same: impl Fn(usize) -> bool) -> Option<usize> {
        self.table
            .find(h, |&(eh, i)| eh == h && same(i))
            .map(|&(_, i)| i)
    }

    /// Replace the value at `found`, or append the entry (its key hashed
    /// `h`).
    fn put<K, V>(&mut self, entries: &mut Vec<(K, V)>, h: u64, found: Option<usize>, k: K, v: V) {
        match found {
            Some(i) => entries[i].1 = v,
            None => {
                self.table
                    .insert_unique(h, (h, entries.len()), |&(eh, _)| eh);
                entries.push((k, v));
            }
        }
    }
}

/// A map's entries in insertion order, with an index by key.
#[derive(Default)]
pub struct MapData {
    pub entries: Vec<(Py<PyAny>, Py<PyAny>)>,
    index: KeyIndex,
}

impl MapData {
    /// An empty map with room for `n` entries.
    pub fn with_capacity(n: usize) -> MapData {
        MapData {
            entries: Vec::with_capacity(n),
            index: KeyIndex::with_capacity(n),
        }
    }

    /// The position of the entry of `key` (hashed `h`), if there is one.
    fn position(&self, py: Python<'_>, h: u64, key: &KeyView<'_>) -> Option<usize> {
        let entries = &self.entries;
        self.index.find(h, |i| {
            KeyView::of(entries[i].0.bind(py)).is_ok_and(|k| k == *key)
        })
    }

    /// Insert or replace (checked key and value).
    pub fn insert(&mut self, py: Python<'_>, k: Py<PyAny>, v: Py<PyAny>) -> PyResult<()> {
        let (h, found) = {
            let key = KeyView::of(k.bind(py))?;
            let h = self.index.hash(&key);
            (h, self.position(py, h, &key))
        };
        self.index.put(&mut self.entries, h, found, k, v);
        Ok(())
    }

    pub fn find(&self, py: Python<'_>, key: &MapKey) -> Option<usize> {
        self.position(py, self.index.hash(key), key)
    }

    /// Remove `key`'s entry: the last entry takes its place.
    pub fn remove(
        &mut self,
        py: Python<'_>,
        key: &MapKey,
    ) -> PyResult<Option<(Py<PyAny>, Py<PyAny>)>> {
        let h = self.index.hash(key);
        let Some(i) = self.position(py, h, key) else {
            return Ok(None);
        };
        let table = &mut self.index.table;
        if let Ok(e) = table.find_entry(h, |&(_, j)| j == i) {
            e.remove();
        }
        let e = self.entries.swap_remove(i);
        let last = self.entries.len();
        if i < last {
            let moved = self.index.hash(&KeyView::of(self.entries[i].0.bind(py))?);
            if let Some(slot) = self.index.table.find_mut(moved, |&(_, j)| j == last) {
                slot.1 = i;
            }
        }
        Ok(Some(e))
    }

    pub fn clear(&mut self) {
        self.entries.clear();
        self.index.table.clear();
    }
}

/// One key or scalar value of a map entry a wire parse read: its bits
/// ([`Scalar::bits`]) or its place (offset, length) in the message's input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Bits(u64),
    Span(u32, u32),
}

impl Part {
    /// The key as [`MapData`] hashes and compares it (a key of `kind`,
    /// with spans into `input`): the same key made an object reads as the
    /// same [`KeyView`], so a [`Pairs`]' index serves the [`MapData`] made
    /// from it.
    fn key(self, input: &[u8], kind: Kind) -> KeyView<'_> {
        match self {
            Part::Span(off, len) => {
                let at = off as usize..off as usize + len as usize;
                KeyView::Str(Cow::Borrowed(input.get(at).unwrap_or_default()))
            }
            Part::Bits(b) => match Scalar::from_bits(kind, b) {
                Some(Scalar::Bool(v)) => KeyView::Bool(v),
                Some(Scalar::I32(v) | Scalar::Enum(v)) => KeyView::Int(v.into()),
                Some(Scalar::I64(v)) => KeyView::Int(v.into()),
                Some(Scalar::U32(v)) => KeyView::Int(v.into()),
                Some(Scalar::U64(v)) => KeyView::Int(v.into()),
                // Floats are not map keys.
                _ => KeyView::Int(b.into()),
            },
        }
    }
}

/// A map's entries a wire parse read, with scalar values, no objects
/// made: in wire order, a repeated key's value replacing the earlier one,
/// with an index by key (a per-process random seed, as [`MapData`]'s).
#[derive(Clone, Default)]
pub struct Pairs {
    pub entries: Vec<(Part, Part)>,
    index: KeyIndex,
}

impl Pairs {
    /// An empty map with room for `n` entries.
    pub fn with_capacity(n: usize) -> Pairs {
        Pairs {
            entries: Vec::with_capacity(n),
            index: KeyIndex::with_capacity(n),
        }
    }

    /// Insert or replace a key of `kind`; `input` holds the bytes spans
    /// point into.
    pub fn insert(&mut self, input: &[u8], kind: Kind, k: Part, v: Part) {
        let key = k.key(input, kind);
        let h = self.index.hash(&key);
        let entries = &self.entries;
        let found = self.index.find(h, |i| entries[i].0.key(input, kind) == key);
        self.index.put(&mut self.entries, h, found, k, v);
    }

    /// The map of objects with these entries, in their order: `object`
    /// makes each key and value. The index moves over as it is, since
    /// [`MapData`] hashes and compares keys as [`Part::key`] does.
    pub fn into_data(
        self,
        mut object: impl FnMut(Part, Part) -> PyResult<(Py<PyAny>, Py<PyAny>)>,
    ) -> PyResult<MapData> {
        let entries = self
            .entries
            .into_iter()
            .map(|(k, v)| object(k, v))
            .collect::<PyResult<_>>()?;
        Ok(MapData {
            entries,
            index: self.index,
        })
    }
}

/// A map field's entries.
#[pyclass(module = "amber.proto", name = "MapContainer", mapping)]
pub struct MapField {
    pub s: Arc<Schema>,
    pub ty: u32,
    pub pos: u32,
    pub data: MapData,
    pub owner: Option<Py<PyWeakrefReference>>,
}

impl MapField {
    pub fn new(s: Arc<Schema>, ty: u32, pos: u32, data: MapData) -> MapField {
        MapField {
            s,
            ty,
            pos,
            data,
            owner: None,
        }
    }

    fn entry_type(&self) -> u32 {
        match self.s.tables.messages[self.ty as usize].fields[self.pos as usize].kind {
            Kind::Message(e) => e,
            _ => unreachable!("a map field's kind is its entry type"),
        }
    }

    fn entry_field(&self, n: usize) -> &FieldInfo {
        &self.s.tables.messages[self.entry_type() as usize].fields[n]
    }

    pub fn value_kind(&self) -> Kind {
        self.entry_field(1).kind
    }

    pub fn check_key(&self, k: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let f = self.entry_field(0);
        values::check(&self.s.tables, f, f.kind, k)
    }

    pub fn check_value(&self, v: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let f = self.entry_field(1);
        message::element(v.py(), &self.s, f, v)
    }

    /// The value a missing key reads as (inserted by `m[key]`).
    fn fresh(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        match self.value_kind() {
            Kind::Message(sub) => Ok(message::instantiate(
                py,
                Message::empty(self.s.clone(), sub),
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

    /// Whether `k` is a key; a key of the wrong type or out of range
    /// raises, as Google's maps do.
    fn __contains__(slf: &Bound<'_, Self>, k: &Bound<'_, PyAny>) -> PyResult<bool> {
        let Some(mk) = lookup_key(slf, k)? else {
            return Ok(false);
        };
        Ok(slf.try_borrow()?.data.find(slf.py(), &mk).is_some())
    }

    /// The value for `key`; a missing key is inserted with the default
    /// value (a new message, for message values), as Google's maps do.
    fn __getitem__(slf: &Bound<'_, Self>, key: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let (k, mk) = key_of(slf, key)?;
        if let Some(i) = slf.try_borrow()?.data.find(py, &mk) {
            return Ok(slf.try_borrow()?.data.entries[i].1.clone_ref(py));
        }
        let v = slf.try_borrow()?.fresh(py)?;
        slf.try_borrow_mut()?.data.insert(py, k, v.clone_ref(py))?;
        map_changed(slf)?;
        Ok(v)
    }

    fn __setitem__(
        slf: &Bound<'_, Self>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
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
    }

    fn __delitem__(slf: &Bound<'_, Self>, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = slf.py();
        let (_, mk) = key_of(slf, key)?;
        if slf.try_borrow_mut()?.data.remove(py, &mk)?.is_none() {
            return Err(PyKeyError::new_err(key.clone().unbind()));
        }
        map_changed(slf)
    }

    fn __iter__(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        Ok(MapField::keys(slf)?
            .as_any()
            .try_iter()?
            .into_any()
            .unbind())
    }

    fn __richcmp__(
        slf: &Bound<'_, Self>,
        other: &Bound<'_, PyAny>,
        op: pyo3::basic::CompareOp,
    ) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let theirs = if let Ok(o) = other.cast::<MapField>() {
            as_dict(o)?.into_any()
        } else if other.is_instance_of::<PyDict>() {
            other.clone()
        } else {
            return Ok(py.NotImplemented());
        };
        Ok(as_dict(slf)?.as_any().rich_compare(theirs, op)?.unbind())
    }

    fn __hash__(&self) -> PyResult<isize> {
        Err(PyTypeError::new_err("unhashable object"))
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        Ok(as_dict(slf)?.repr()?.to_string())
    }

    /// The keys, as a list.
    fn keys<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyList>> {
        let b = slf.try_borrow()?;
        PyList::new(slf.py(), b.data.entries.iter().map(|e| e.0.bind(slf.py())))
    }

    /// The values, as a list.
    fn values<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyList>> {
        let b = slf.try_borrow()?;
        PyList::new(slf.py(), b.data.entries.iter().map(|e| e.1.bind(slf.py())))
    }

    /// `(key, value)` pairs, as a list.
    fn items<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyList>> {
        let py = slf.py();
        let b = slf.try_borrow()?;
        PyList::new(
            py,
            b.data.entries.iter().map(|e| (e.0.bind(py), e.1.bind(py))),
        )
    }

    /// The value for `key`, or `default` (nothing is inserted).
    #[pyo3(signature = (key, default = None))]
    fn get(
        slf: &Bound<'_, Self>,
        key: &Bound<'_, PyAny>,
        default: Option<Py<PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let Some(mk) = lookup_key(slf, key)? else {
            return Ok(default.unwrap_or_else(|| py.None()));
        };
        let b = slf.try_borrow()?;
        Ok(match b.data.find(py, &mk) {
            Some(i) => b.data.entries[i].1.clone_ref(py),
            None => default.unwrap_or_else(|| py.None()),
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
    }

    /// Remove an entry and return it as `(key, value)`: the first in
    /// iteration order, as `MutableMapping.popitem` takes it.
    fn popitem(slf: &Bound<'_, Self>) -> PyResult<(Py<PyAny>, Py<PyAny>)> {
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
    }

    /// Remove every entry.
    fn clear(slf: &Bound<'_, Self>) -> PyResult<()> {
        slf.try_borrow_mut()?.data.clear();
        map_changed(slf)
    }

    /// Set entries from a mapping (scalar values; message values are
    /// copied).
    #[pyo3(signature = (other = None, **kwargs))]
    fn update(
        slf: &Bound<'_, Self>,
        other: Option<&Bound<'_, PyAny>>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<()> {
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
    }

    /// (Message values) the value for `key`, inserting a new one.
    fn get_or_create(slf: &Bound<'_, Self>, key: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        MapField::__getitem__(slf, key)
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
    }

    /// Copy another map's entries in (replacing values of equal keys).
    fn MergeFrom(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<()> {
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
                Kind::Message(_) => message::copy_obj(py, v.bind(py))?.into_any().unbind(),
                _ => v,
            };
            slf.try_borrow_mut()?.data.insert(py, k, v)?;
        }
        map_changed(slf)
    }

    fn __reduce__(&self) -> PyResult<()> {
        Err(PyTypeError::new_err(
            "a map field is pickled with its message, not alone",
        ))
    }
}
