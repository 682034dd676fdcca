//! The hot containers: dict (through the version-checked entry table where
//! CPython's layout allows, else `PyDict_Next`), list (with runs of small
//! ints in one loop), tuple, and any sized iterable (sets, deques). Each
//! checks afterwards that its size did not change while Python code ran.

use amber_core::bytes::path::PathSeg;
use amber_core::codec::writer as w;
use pyo3::exceptions::PyRuntimeError;
use pyo3::ffi;
use pyo3::prelude::*;

use super::shapes::{self, KeyView};
use super::strings;
use super::{fail, key_seg, Encoder, Memo, OrFail, Within, R};
use crate::errors::EncodeKind;
use crate::ffi::dict;
use crate::ffi::obj::{prefetch, Obj};

/// Containers ask for the items this far ahead of the one they write...
const AHEAD: usize = 8;

/// ...unless they hold this few: the processor overlaps those loads itself.
const FEW: usize = 4;

impl<'py> Encoder<'py> {
    pub(super) unsafe fn dict(&mut self, o: *mut ffi::PyObject) -> R {
        if let Memo::Done = unsafe { self.memo_before(o, true) } {
            return Ok(());
        }
        let n = unsafe { dict::len(o) };
        if self.shapes.wanted(n) {
            let mut buf = [std::mem::MaybeUninit::uninit(); shapes::MAX_KEYS];
            if let Some(keys) = unsafe { KeyView::of(o, n, &mut buf) } {
                if let Some((s, col)) = self.shapes.find(&keys) {
                    w::write_shaped_header(&mut self.out, s);
                    return self
                        .nested(|e| unsafe { e.dict_entries::<false>(o, n, Some((&keys, col))) });
                }
                if let Some(col) = self.shapes.sighting(&keys) {
                    w::write_shape_def_header(&mut self.out, n);
                    return self.nested(|e| {
                        for i in 0..n {
                            let k = keys.get(i);
                            // Keys of a shape are str: this runs no Python code.
                            unsafe { e.str(k, strings::MAX_KEY_LEN, true) }
                                .within(|| key_seg(e.py, k, i), o)?;
                        }
                        unsafe { e.dict_entries::<false>(o, n, Some((&keys, col))) }
                    });
                }
            }
        }
        w::write_dict_header(&mut self.out, n);
        unsafe { self.dict_pairs(o, n) }
    }

    /// The `n` pairs of a dict (or dict subclass iterated in dict order).
    pub(crate) unsafe fn dict_pairs(&mut self, o: *mut ffi::PyObject, n: usize) -> R {
        self.nested(|e| unsafe { e.dict_entries::<true>(o, n, None) })
    }

    /// The `n` entries of a dict: keys and values, or (`KEYS` false) only
    /// the values of a dict whose keys are `shape` (with its first column).
    ///
    /// Keys and values may run Python code (hooks, properties of stdlib
    /// types, and other threads while that code runs) that changes the dict
    /// and frees what it held. Read through its entry table, the walk goes on
    /// only while the dict is unchanged (`Table::current`); read through
    /// `PyDict_Next`, which is bounds-checked, each key is checked against
    /// the shape, and an entry read before Python code ran is read again
    /// after it.
    pub(super) unsafe fn dict_entries<const KEYS: bool>(
        &mut self,
        o: *mut ffi::PyObject,
        n: usize,
        shape: Option<(&KeyView, usize)>,
    ) -> R {
        let _keep = unsafe { Obj::from_borrowed(o) };
        let mut count = 0usize;
        #[cfg(all(Py_3_11, not(Py_3_14), not(Py_GIL_DISABLED)))]
        if let Some(table) = unsafe { dict::Table::of(o) } {
            if table.n > FEW {
                for i in 0..table.n.min(AHEAD) {
                    prefetch(unsafe { table.entry(i) }.1);
                }
            }
            for i in 0..table.n {
                if i + AHEAD < table.n {
                    prefetch(unsafe { table.entry(i + AHEAD) }.1);
                }
                if !unsafe { table.current(o) } {
                    return fail(EncodeKind::Mutated, "dict changed during encoding");
                }
                let (k, v) = unsafe { table.entry(i) };
                if !v.is_null() {
                    // SAFETY (of `reread`): `current` vouches for entry `i`.
                    let reread = || unsafe { table.current(o) }.then(|| unsafe { table.entry(i) });
                    unsafe { self.entry::<KEYS>(o, k, v, count, n, shape, false, reread) }?;
                    count += 1;
                }
            }
            return unsafe { self.same_size(o, count, n) };
        }
        let mut pos: ffi::Py_ssize_t = 0;
        let mut k: *mut ffi::PyObject = std::ptr::null_mut();
        let mut v: *mut ffi::PyObject = std::ptr::null_mut();
        let mut at = pos;
        while unsafe { ffi::PyDict_Next(o, &mut pos, &mut k, &mut v) } != 0 {
            let reread = || {
                let (mut p, mut k2, mut v2) = (at, std::ptr::null_mut(), std::ptr::null_mut());
                // SAFETY: PyDict_Next checks `p` against the dict as it is now.
                (unsafe { ffi::PyDict_Next(o, &mut p, &mut k2, &mut v2) } != 0).then_some((k2, v2))
            };
            unsafe { self.entry::<KEYS>(o, k, v, count, n, shape, true, reread) }?;
            count += 1;
            at = pos;
        }
        unsafe { self.same_size(o, count, n) }
    }

    /// Entry number `count` of a dict of `n` pairs (see `dict_entries`);
    /// `check_key` when its key must be checked against the shape; `reread`
    /// gives the entry's key and value as the dict holds them now.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(super) unsafe fn entry<const KEYS: bool>(
        &mut self,
        o: *mut ffi::PyObject,
        k: *mut ffi::PyObject,
        mut v: *mut ffi::PyObject,
        count: usize,
        n: usize,
        shape: Option<(&KeyView, usize)>,
        check_key: bool,
        reread: impl FnOnce() -> Option<(*mut ffi::PyObject, *mut ffi::PyObject)>,
    ) -> R {
        if count == n {
            return fail(EncodeKind::Mutated, "dict changed size during encoding");
        }
        // Held while Python code below may drop it from the dict: the error
        // path still names it, and `reread` compares it by address.
        let mut _key = None;
        if KEYS {
            if unsafe { ffi::Py_TYPE(k) } == &raw mut ffi::PyUnicode_Type {
                // Runs no Python code: `v` stays valid.
                unsafe { self.str(k, strings::MAX_KEY_LEN, true) }
                    .within(|| key_seg(self.py, k, count), o)?;
            } else {
                _key = Some(unsafe { Obj::from_borrowed(k) });
                unsafe { self.item(k) }.within(|| key_seg(self.py, k, count), o)?;
                // Encoding the key may have run Python code that changed the
                // dict and freed `v`: take the value the dict holds now.
                match reread() {
                    Some((k2, v2)) if k2 == k && !v2.is_null() => v = v2,
                    _ => return fail(EncodeKind::Mutated, "dict changed during encoding"),
                }
            }
        } else if let Some((keys, col)) = shape {
            if check_key && (!keys.collected || keys.get(count) != k) {
                return fail(EncodeKind::Mutated, "dict changed during encoding");
            }
            if unsafe { ffi::Py_TYPE(v) } == &raw mut ffi::PyUnicode_Type {
                return unsafe { self.str_in(v, strings::MAX_VALUE_LEN, false, Some(col + count)) }
                    .within(|| key_seg(self.py, k, count), o);
            }
        }
        if let Some(r) = unsafe { self.atom(v) } {
            r.within(|| key_seg(self.py, k, count), o)
        } else {
            if _key.is_none() {
                _key = Some(unsafe { Obj::from_borrowed(k) });
            }
            unsafe { self.compound(v) }.within(|| key_seg(self.py, k, count), o)
        }
    }

    pub(super) unsafe fn same_size(&self, o: *mut ffi::PyObject, count: usize, n: usize) -> R {
        if count != n || unsafe { dict::len(o) } != n {
            return fail(EncodeKind::Mutated, "dict changed size during encoding");
        }
        Ok(())
    }

    #[inline(always)]
    pub(crate) unsafe fn key(&mut self, k: *mut ffi::PyObject) -> R {
        if unsafe { ffi::Py_TYPE(k) } == &raw mut ffi::PyUnicode_Type {
            unsafe { self.str(k, strings::MAX_KEY_LEN, true) }
        } else {
            unsafe { self.item(k) }
        }
    }

    pub(super) unsafe fn list(&mut self, o: *mut ffi::PyObject) -> R {
        if let Memo::Done = unsafe { self.memo_before(o, true) } {
            return Ok(());
        }
        let n = unsafe { ffi::PyList_GET_SIZE(o) } as usize;
        w::write_list_header(&mut self.out, n);
        self.nested(|e| {
            let _keep = unsafe { Obj::from_borrowed(o) };
            if n > FEW {
                for i in 0..n.min(AHEAD) {
                    prefetch(unsafe { ffi::PyList_GET_ITEM(o, i as ffi::Py_ssize_t) });
                }
            }
            let mut i = 0;
            while i < n {
                if unsafe { ffi::PyList_GET_SIZE(o) } as usize != n {
                    return fail(EncodeKind::Mutated, "list changed size during encoding");
                }
                if i + AHEAD < n {
                    prefetch(unsafe { ffi::PyList_GET_ITEM(o, (i + AHEAD) as ffi::Py_ssize_t) });
                }
                let item = unsafe { ffi::PyList_GET_ITEM(o, i as ffi::Py_ssize_t) };
                if unsafe { ffi::Py_TYPE(item) } == &raw mut ffi::PyLong_Type {
                    let end = unsafe { e.int_run(o, i, n) };
                    if end > i {
                        i = end;
                        continue;
                    }
                }
                unsafe { e.item(item) }.within(|| PathSeg::Index(i), o)?;
                i += 1;
            }
            if unsafe { ffi::PyList_GET_SIZE(o) } as usize != n {
                return fail(EncodeKind::Mutated, "list changed size during encoding");
            }
            Ok(())
        })
    }

    /// Items `i..n` of list `o` while they are ints that fit in 60 bits,
    /// in one tight loop (numeric lists): reading them runs no Python code,
    /// so the list cannot change meanwhile. Returns where the run stopped.
    #[inline(always)]
    pub(super) unsafe fn int_run(
        &mut self,
        o: *mut ffi::PyObject,
        mut i: usize,
        n: usize,
    ) -> usize {
        let items = unsafe { (*(o as *mut ffi::PyListObject)).ob_item };
        while i < n {
            let item = unsafe { *items.add(i) };
            if unsafe { ffi::Py_TYPE(item) } != &raw mut ffi::PyLong_Type {
                break;
            }
            let Some(v) = (unsafe { crate::ffi::long::small_int(item) }) else {
                break;
            };
            if i + AHEAD < n {
                prefetch(unsafe { *items.add(i + AHEAD) });
            }
            w::write_int(&mut self.out, v);
            i += 1;
        }
        i
    }

    pub(super) unsafe fn tuple(&mut self, o: *mut ffi::PyObject) -> R {
        let memo = unsafe { self.memo_before(o, false) };
        if let Memo::Done = memo {
            return Ok(());
        }
        let n = unsafe { ffi::PyTuple_GET_SIZE(o) } as usize;
        w::write_tuple_header(&mut self.out, n);
        unsafe { self.tuple_items(o, n) }?;
        if let Memo::Shared(at) = memo {
            self.memo_after_immutable(o, at);
        }
        Ok(())
    }

    /// The items of a tuple (or tuple subclass).
    pub(crate) unsafe fn tuple_items(&mut self, o: *mut ffi::PyObject, n: usize) -> R {
        self.nested(|e| {
            let _keep = unsafe { Obj::from_borrowed(o) };
            for i in 0..n {
                let item = unsafe { ffi::PyTuple_GET_ITEM(o, i as ffi::Py_ssize_t) };
                unsafe { e.item(item) }.within(|| PathSeg::Index(i), o)?;
            }
            Ok(())
        })
    }

    /// Items produced by iterating `o` (sets, deques, OrderedDict items).
    pub(crate) unsafe fn iter_items(
        &mut self,
        o: *mut ffi::PyObject,
        iterable: &Bound<'py, PyAny>,
        n: usize,
    ) -> R {
        self.nested(|e| unsafe { e.iter_items_body(o, iterable, n) })
    }

    pub(super) unsafe fn iter_items_body(
        &mut self,
        o: *mut ffi::PyObject,
        iterable: &Bound<'py, PyAny>,
        n: usize,
    ) -> R {
        let mut count = 0;
        for item in iterable.try_iter().or_fail()? {
            let item = iterated(self.py, item)?;
            if count == n {
                return fail(
                    EncodeKind::Mutated,
                    "container changed size during encoding",
                );
            }
            unsafe { self.item(item.as_ptr()) }.within(|| PathSeg::Index(count), o)?;
            count += 1;
        }
        if count != n {
            return fail(
                EncodeKind::Mutated,
                "container changed size during encoding",
            );
        }
        Ok(())
    }
}

/// An item from iterating a builtin container. Their iterators (sets,
/// deques, OrderedDicts and their views) raise RuntimeError when the
/// container changes under them: that is a mutation, not a failure.
pub(crate) fn iterated<'py>(
    py: Python<'py>,
    item: PyResult<Bound<'py, PyAny>>,
) -> R<Bound<'py, PyAny>> {
    match item {
        Ok(item) => Ok(item),
        Err(err) if err.is_instance_of::<PyRuntimeError>(py) => {
            let why = err.value(py).to_string();
            fail(
                EncodeKind::Mutated,
                format!("container changed during encoding ({why})"),
            )
        }
        Err(err) => Err(Box::new(err.into())),
    }
}
