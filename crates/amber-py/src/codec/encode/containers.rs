//! The hot containers: dict (through the version-checked entry table where
//! CPython's layout allows, else `PyDict_Next`), list (with runs of small
//! ints in one loop), tuple, and any sized iterable (sets, deques). Each
//! checks afterwards that its size did not change while Python code ran.
//!
//! Safety, for every function here: the GIL is held, and each `o` is a
//! live object of the type the function names, borrowed from a caller that
//! keeps it alive for the call (`Encoder::item`'s contract); where Python
//! code can run before `o` is used again, a `_keep` reference holds it. An
//! item borrowed from a container is used only until Python code may run,
//! or read again afterwards (`reread`), or held.

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
use crate::ffi::seq;

/// Containers ask for the items this far ahead of the one they write...
const AHEAD: usize = 8;

/// ...unless they hold this few: the processor overlaps those loads itself.
const FEW: usize = 4;

impl<'py> Encoder<'py> {
    pub(super) unsafe fn dict(&mut self, o: *mut ffi::PyObject) -> R {
        // SAFETY: `o` is a live dict (this function's contract).
        if let Memo::Done = unsafe { self.memo_before(o, true) } {
            return Ok(());
        }
        // SAFETY: as above.
        let n = unsafe { dict::len(o) };
        if self.shapes.wanted(n) {
            let mut buf = [std::mem::MaybeUninit::uninit(); shapes::MAX_KEYS];
            // SAFETY: `o` is a live dict of `n` entries; `buf` has room for
            // `shapes::MAX_KEYS`, which `wanted(n)` bounds `n` by.
            let mut view = unsafe { KeyView::of(o, n, &mut buf) };
            if self.opts.deterministic {
                // SAFETY: no Python code ran since the view was made.
                view = view.and_then(|mut v| unsafe { v.by_text() }.then_some(v));
            }
            if let Some(keys) = view {
                if let Some((s, col)) = self.shapes.find(&keys) {
                    w::write_shaped_header(&mut self.out, s);
                    return self.nested(|e| {
                        // SAFETY: `o` is the live dict `keys` was read from.
                        // SAFETY: `o` is the live dict `keys` was read from.
                        unsafe { e.dict_entries::<false>(o, n, Some((&keys, col))) }
                    });
                }
                if let Some(col) = self.shapes.sighting(&keys) {
                    w::write_shape_def_header(&mut self.out, n);
                    return self.nested(|e| {
                        for i in 0..n {
                            let k = keys.get(i);
                            // SAFETY: keys of a shape are str objects held by
                            // the dict; writing them runs no Python code, so
                            // the dict cannot drop them meanwhile.
                            unsafe { e.str(k, strings::MAX_KEY_LEN, true) }
                                .within(|| key_seg(e.py, k, i), o)?;
                        }
                        // SAFETY: `o` is the live dict `keys` was read from.
                        unsafe { e.dict_entries::<false>(o, n, Some((&keys, col))) }
                    });
                }
            }
        }
        w::write_dict_header(&mut self.out, n);
        // SAFETY: `o` is a live dict of `n` entries.
        unsafe { self.dict_pairs(o, n) }
    }

    /// The `n` pairs of a dict (or dict subclass iterated in dict order).
    pub(crate) unsafe fn dict_pairs(&mut self, o: *mut ffi::PyObject, n: usize) -> R {
        // SAFETY: the caller's `o` is a live dict (or subclass).
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
        // SAFETY: `o` is live; the new reference keeps it so while the walk
        // runs Python code.
        let _keep = unsafe { Obj::from_borrowed(o) };
        let mut count = 0usize;
        #[cfg(amber_dict_table)]
        // SAFETY: `o` is a live exact dict, held by `_keep`.
        if let Some(table) = unsafe { dict::Table::of(o) } {
            if table.n > FEW {
                for i in 0..table.n.min(AHEAD) {
                    // SAFETY: no Python code ran since `Table::of`, so the
                    // table is current and `i < n` is in bounds.
                    prefetch(unsafe { table.entry(i) }.1);
                }
            }
            // Python code runs only in `other` (see `Encoder::others`): until
            // an entry has gone there, nothing can have changed the table.
            // Builds with the version tag check it before every entry all the
            // same, which costs a compare.
            let others = self.others;
            for i in 0..table.n {
                let ran = self.others != others;
                // SAFETY: `o` is held by `_keep`.
                if (ran || cfg!(amber_dict_version_tag)) && !unsafe { table.current(o) } {
                    return fail(EncodeKind::Mutated, "dict changed during encoding");
                }
                if i + AHEAD < table.n {
                    // SAFETY: the table is current (no Python code ran, or
                    // `current` vouched for it), and the index is below `n`.
                    prefetch(unsafe { table.entry(i + AHEAD) }.1);
                }
                // SAFETY: the table is current, as above, and `i < n`.
                let (k, v) = unsafe { table.entry(i) };
                if !v.is_null() {
                    let reread = || {
                        // SAFETY: `o` is held by `_keep`.
                        let current = unsafe { table.current(o) };
                        // SAFETY: read only when `current` vouches for the
                        // table; `i < n`.
                        current.then(|| unsafe { table.entry(i) })
                    };
                    // Without a version tag (3.14 on), `current` cannot see a
                    // table replaced by one of the same layout at the same
                    // address, so once Python code ran a shape's keys are
                    // checked as they are read.
                    let check_key = ran && cfg!(not(amber_dict_version_tag));
                    // SAFETY: `k` and `v` are entry `i` of the current table,
                    // alive while the dict holds them; `entry` rereads them
                    // after any Python code.
                    unsafe { self.entry::<KEYS>(o, k, v, count, n, shape, check_key, reread) }?;
                    count += 1;
                }
            }
            // SAFETY: `o` is held by `_keep`.
            return unsafe { self.same_size(o, count, n) };
        }
        let mut pos: ffi::Py_ssize_t = 0;
        let mut k: *mut ffi::PyObject = std::ptr::null_mut();
        let mut v: *mut ffi::PyObject = std::ptr::null_mut();
        let mut at = pos;
        // SAFETY: `o` is a live dict held by `_keep`; PyDict_Next checks
        // `pos` against the dict as it is at each call.
        while unsafe { ffi::PyDict_Next(o, &mut pos, &mut k, &mut v) } != 0 {
            let reread = || {
                let (mut p, mut k2, mut v2) = (at, std::ptr::null_mut(), std::ptr::null_mut());
                // SAFETY: PyDict_Next checks `p` against the dict as it is now.
                (unsafe { ffi::PyDict_Next(o, &mut p, &mut k2, &mut v2) } != 0).then_some((k2, v2))
            };
            // SAFETY: `k` and `v` are borrowed from the dict, alive until
            // Python code runs; `entry` rereads them after it does.
            unsafe { self.entry::<KEYS>(o, k, v, count, n, shape, true, reread) }?;
            count += 1;
            at = pos;
        }
        // SAFETY: `o` is held by `_keep`.
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
            // SAFETY: `k` is a live key of the dict (the caller's contract).
            if unsafe { ffi::Py_TYPE(k) } == &raw mut ffi::PyUnicode_Type {
                // SAFETY: `k` is a live str; writing it runs no Python code,
                // so `v` stays valid.
                unsafe { self.str(k, strings::MAX_KEY_LEN, true) }
                    .within(|| key_seg(self.py, k, count), o)?;
            } else {
                // SAFETY: `k` is live; the reference keeps it so.
                _key = Some(unsafe { Obj::from_borrowed(k) });
                // SAFETY: `k` is held by `_key`.
                unsafe { self.item(k) }.within(|| key_seg(self.py, k, count), o)?;
                // Encoding the key may have run Python code that changed the
                // dict and freed `v`: take the value the dict holds now.
                match reread() {
                    Some((k2, v2)) if k2 == k && !v2.is_null() => v = v2,
                    _ => return fail(EncodeKind::Mutated, "dict changed during encoding"),
                }
            }
        } else if let Some((keys, col)) = shape {
            // SAFETY: `k` is a live key of the dict (the caller's contract).
            if check_key && !unsafe { self.key_of_shape(keys, col, count, k) } {
                return fail(EncodeKind::Mutated, "dict changed during encoding");
            }
            // SAFETY: no Python code ran since `v` was read from the dict.
            if unsafe { ffi::Py_TYPE(v) } == &raw mut ffi::PyUnicode_Type {
                // SAFETY: `v` is a live str, and writing it runs no code.
                return unsafe { self.str_in(v, strings::MAX_VALUE_LEN, false, Some(col + count)) }
                    .within(|| key_seg(self.py, k, count), o);
            }
        }
        // SAFETY: `v` is the dict's current value for `k` (read again above
        // if Python code ran); atoms run no Python code.
        if let Some(r) = unsafe { self.atom(v) } {
            r.within(|| key_seg(self.py, k, count), o)
        } else {
            if _key.is_none() {
                // SAFETY: `k` is still the dict's key: nothing ran since.
                _key = Some(unsafe { Obj::from_borrowed(k) });
            }
            // SAFETY: `v` is live; `compound` holds what it walks before it
            // runs Python code.
            unsafe { self.compound(v) }.within(|| key_seg(self.py, k, count), o)
        }
    }

    /// Whether `k`, the key of entry `count` of a dict being written as
    /// shape `keys` (first column `col`), is that shape's key there. Keys
    /// collected before Python code ran are compared by address (the dict
    /// held them then); a view read in place, against the keys the shape
    /// table holds (by address, or by text where shapes match by text).
    ///
    /// # Safety
    /// `k` must be live.
    #[inline(always)]
    unsafe fn key_of_shape(
        &self,
        keys: &KeyView,
        col: usize,
        count: usize,
        k: *mut ffi::PyObject,
    ) -> bool {
        if keys.collected {
            return keys.get(count) == k;
        }
        let known = self.shapes.key(col + count);
        known == k
            || (self.opts.deterministic
                // SAFETY: `k` is live (the caller's contract) and `known` is
                // held by the shape table; both are read as str only when
                // `k` is exactly one (shape keys are all exact str).
                && unsafe {
                    ffi::Py_TYPE(k) == &raw mut ffi::PyUnicode_Type
                        && matches!(
                            (strings::utf8(k), strings::utf8(known)),
                            (Some(a), Some(b)) if a == b
                        )
                })
    }

    pub(super) unsafe fn same_size(&self, o: *mut ffi::PyObject, count: usize, n: usize) -> R {
        // SAFETY: the caller's `o` is a live dict.
        if count != n || unsafe { dict::len(o) } != n {
            return fail(EncodeKind::Mutated, "dict changed size during encoding");
        }
        Ok(())
    }

    #[inline(always)]
    pub(crate) unsafe fn key(&mut self, k: *mut ffi::PyObject) -> R {
        // SAFETY: the caller holds `k`, a live object, for the call.
        if unsafe { ffi::Py_TYPE(k) } == &raw mut ffi::PyUnicode_Type {
            // SAFETY: as above; `k` is a str.
            unsafe { self.str(k, strings::MAX_KEY_LEN, true) }
        } else {
            // SAFETY: as above.
            unsafe { self.item(k) }
        }
    }

    pub(super) unsafe fn list(&mut self, o: *mut ffi::PyObject) -> R {
        // SAFETY: `o` is a live list (this function's contract).
        if let Memo::Done = unsafe { self.memo_before(o, true) } {
            return Ok(());
        }
        // SAFETY: as above.
        let n = unsafe { seq::list_len(o) };
        w::write_list_header(&mut self.out, n);
        self.nested(|e| {
            // SAFETY: `o` is live; the reference keeps it so while items
            // run Python code.
            let _keep = unsafe { Obj::from_borrowed(o) };
            if n > FEW {
                for i in 0..n.min(AHEAD) {
                    // SAFETY: `i < n`, the list's size, and nothing ran yet.
                    prefetch(unsafe { seq::list_item(o, i) });
                }
            }
            let mut i = 0;
            while i < n {
                // SAFETY: `o` is held by `_keep`.
                if unsafe { seq::list_len(o) } != n {
                    return fail(EncodeKind::Mutated, "list changed size during encoding");
                }
                if i + AHEAD < n {
                    // SAFETY: the size is `n` (checked just above), so the
                    // index is in bounds; the pointer is only prefetched.
                    prefetch(unsafe { seq::list_item(o, i + AHEAD) });
                }
                // SAFETY: `i < n`, the list's size checked just above.
                let item = unsafe { seq::list_item(o, i) };
                // SAFETY: `item` is held by the list; no code ran since.
                if unsafe { ffi::Py_TYPE(item) } == &raw mut ffi::PyLong_Type {
                    // SAFETY: `o` is a live list of size `n` and `i < n`.
                    let end = unsafe { e.int_run(o, i, n) };
                    if end > i {
                        i = end;
                        continue;
                    }
                }
                // SAFETY: `item` is live (held by the list, nothing ran since
                // it was read); `item` holds what it walks before running code.
                unsafe { e.item(item) }.within(|| PathSeg::Index(i), o)?;
                i += 1;
            }
            // SAFETY: `o` is held by `_keep`.
            if unsafe { seq::list_len(o) } != n {
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
        // SAFETY: `o` is a live list of size `n` (the caller's contract);
        // no Python code runs in this loop, so `ob_item` and its `n` items
        // stay as they are.
        let items = unsafe { seq::list_items(o) };
        while i < n {
            // SAFETY: `i < n`, within the item array.
            let item = unsafe { *items.add(i) };
            // SAFETY: `item` is held by the list.
            if unsafe { ffi::Py_TYPE(item) } != &raw mut ffi::PyLong_Type {
                break;
            }
            // SAFETY: `item` is a live exact int.
            let Some(v) = (unsafe { crate::ffi::long::small_int(item) }) else {
                break;
            };
            if i + AHEAD < n {
                // SAFETY: `i + AHEAD < n`, within the item array.
                prefetch(unsafe { *items.add(i + AHEAD) });
            }
            w::write_int(&mut self.out, v);
            i += 1;
        }
        i
    }

    pub(super) unsafe fn tuple(&mut self, o: *mut ffi::PyObject) -> R {
        // SAFETY: `o` is a live tuple (this function's contract).
        let memo = unsafe { self.memo_before(o, false) };
        if let Memo::Done = memo {
            return Ok(());
        }
        // SAFETY: as above.
        let n = unsafe { seq::tuple_len(o) };
        w::write_tuple_header(&mut self.out, n);
        // SAFETY: as above; a tuple's size never changes.
        unsafe { self.tuple_items(o, n) }?;
        if let Memo::Shared(at) = memo {
            // SAFETY: `o` is live, held by the caller (or `_keep`) throughout.
            unsafe { self.memo_after_immutable(o, at) };
        }
        Ok(())
    }

    /// The items of a tuple (or tuple subclass).
    pub(crate) unsafe fn tuple_items(&mut self, o: *mut ffi::PyObject, n: usize) -> R {
        self.nested(|e| {
            // SAFETY: `o` is a live tuple; the reference keeps it, and so
            // its items, alive while they run Python code.
            let _keep = unsafe { Obj::from_borrowed(o) };
            for i in 0..n {
                // SAFETY: `i < n`, the tuple's fixed size.
                let item = unsafe { seq::tuple_item(o, i) };
                // SAFETY: the tuple, held by `_keep`, holds `item`.
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
        // SAFETY: the caller's `o` is live and held by `iterable`.
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
            // SAFETY: `item` is held by its Bound for the call.
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
