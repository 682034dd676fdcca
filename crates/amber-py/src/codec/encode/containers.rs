//! The hot containers: dict (through the version-checked entry table where
//! CPython's layout allows, else `PyDict_Next`), list (with runs of small
//! ints in one loop), tuple, and any sized iterable (sets, deques). Each
//! checks afterwards that its size did not change while Python code ran.
//!
//! Each container is a typed `Borrowed` view, held by its owner for the
//! call whatever Python code runs. An item read from a list or dict is
//! lent only under a `NoCode` token, while atoms are written; one that is
//! walked further (which may run Python code) is held first, and an entry
//! read before Python code ran is read again after it (`reread`).

use amber_core::bytes::path::PathSeg;
use amber_core::codec::writer as w;
use pyo3::exceptions::PyRuntimeError;
use pyo3::ffi;
use pyo3::prelude::*;

use super::shapes::{self, KeyView};
use super::strings;
use super::{fail, key_seg, Encoder, Memo, OrFail, Within, R};
use crate::errors::EncodeKind;
use crate::ffi::borrowed::{Borrowed, Dict, List, NoCode, Tuple};
#[cfg(amber_dict_table)]
use crate::ffi::dict;
use crate::ffi::obj::prefetch;

/// Containers ask for the items this far ahead of the one they write...
const AHEAD: usize = 8;

/// ...unless they hold this few: the processor overlaps those loads itself.
const FEW: usize = 4;

impl<'py> Encoder<'py> {
    pub(super) fn dict(&mut self, d: Dict<'_>) -> R {
        if let Memo::Done = self.memo_before(d.any(), true) {
            return Ok(());
        }
        let o = d.any().ptr();
        let n = d.len();
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
                        // SAFETY: `keys` was read from `d`, of `n` entries.
                        unsafe { e.dict_entries::<false>(d, n, Some((&keys, col))) }
                    });
                }
                if let Some(col) = self.shapes.sighting(&keys) {
                    w::write_shape_def_header(&mut self.out, n);
                    return self.nested(|e| {
                        for i in 0..n {
                            // SAFETY: writing a str runs no Python code.
                            let quiet = unsafe { NoCode::new() };
                            // SAFETY: keys of a shape are str objects held
                            // by the dict, which nothing changes meanwhile.
                            let k = unsafe { quiet.lend(keys.get(i)) };
                            let r = match k.exact_str() {
                                Some(s) => e.str(s, strings::MAX_KEY_LEN, true),
                                None => fail(EncodeKind::Mutated, "dict changed during encoding"),
                            };
                            if let Err(err) = r {
                                let k = k.to_owned();
                                drop(quiet);
                                return Err(err).within(|| key_seg(e.py, k.borrowed(), i), o);
                            }
                        }
                        // SAFETY: `keys` was read from `d`, of `n` entries.
                        unsafe { e.dict_entries::<false>(d, n, Some((&keys, col))) }
                    });
                }
            }
        }
        w::write_dict_header(&mut self.out, n);
        self.dict_pairs(d, n)
    }

    /// The pairs of a dict (or dict subclass iterated in dict order) that
    /// had `n` when its header was written.
    pub(crate) fn dict_pairs(&mut self, d: Dict<'_>, n: usize) -> R {
        // SAFETY: no shape is given.
        self.nested(|e| unsafe { e.dict_entries::<true>(d, n, None) })
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
    ///
    /// # Safety
    /// `shape`'s keys, if given, were read from `d` when it had `n` entries.
    pub(super) unsafe fn dict_entries<const KEYS: bool>(
        &mut self,
        d: Dict<'_>,
        n: usize,
        shape: Option<(&KeyView, usize)>,
    ) -> R {
        let o = d.any().ptr();
        let mut count = 0usize;
        #[cfg(amber_dict_table)]
        // SAFETY: `o` is a live dict, held for the call.
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
                // SAFETY: `o` is the live dict the table was read from.
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
                        // SAFETY: `o` is the live dict the table was read from.
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
                    // held by the dict until Python code runs; `entry` rereads
                    // them after any; the shape is the caller's.
                    unsafe { self.entry::<KEYS>(d, k, v, count, n, shape, check_key, reread) }?;
                    count += 1;
                }
            }
            return self.same_size(d, count, n);
        }
        let mut pos: ffi::Py_ssize_t = 0;
        let mut k: *mut ffi::PyObject = std::ptr::null_mut();
        let mut v: *mut ffi::PyObject = std::ptr::null_mut();
        let mut at = pos;
        // SAFETY: `o` is a live dict, held for the call; PyDict_Next checks
        // `pos` against the dict as it is at each call.
        while unsafe { ffi::PyDict_Next(o, &mut pos, &mut k, &mut v) } != 0 {
            let reread = || {
                let (mut p, mut k2, mut v2) = (at, std::ptr::null_mut(), std::ptr::null_mut());
                // SAFETY: PyDict_Next checks `p` against the dict as it is now.
                (unsafe { ffi::PyDict_Next(o, &mut p, &mut k2, &mut v2) } != 0).then_some((k2, v2))
            };
            // SAFETY: `k` and `v` are borrowed from the dict, alive until
            // Python code runs; `entry` rereads them after it does; the shape
            // is the caller's.
            unsafe { self.entry::<KEYS>(d, k, v, count, n, shape, true, reread) }?;
            count += 1;
            at = pos;
        }
        self.same_size(d, count, n)
    }

    /// Entry number `count` of a dict of `n` pairs (see `dict_entries`);
    /// `check_key` when its key must be checked against the shape; `reread`
    /// gives the entry's key and value as the dict holds them now.
    ///
    /// # Safety
    /// `k` and `v` are the key and value of an entry of `d`, which holds
    /// them until Python code runs; `reread` gives the entry again as `d`
    /// holds it now; `shape`'s keys, if given, were read from `d` when it
    /// had `n` entries.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(super) unsafe fn entry<const KEYS: bool>(
        &mut self,
        d: Dict<'_>,
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
        let (py, o) = (self.py, d.any().ptr());
        // Held while Python code below may drop it from the dict: the error
        // path still names it, and `reread` compares it by address.
        let mut held_key = None;
        if KEYS {
            // SAFETY: writing a str runs no Python code; the token is
            // dropped before anything else runs.
            let quiet = unsafe { NoCode::new() };
            // SAFETY: `k` is a key `d` holds (this function's contract).
            let key = unsafe { quiet.lend(k) };
            if let Some(s) = key.exact_str() {
                if let Err(err) = self.str(s, strings::MAX_KEY_LEN, true) {
                    let key = key.to_owned();
                    drop(quiet);
                    return Err(err).within(|| key_seg(py, key.borrowed(), count), o);
                }
            } else {
                let held = key.to_owned();
                drop(quiet);
                let r = self
                    .item(held.borrowed())
                    .within(|| key_seg(py, held.borrowed(), count), o);
                held_key = Some(held);
                r?;
                // Encoding the key may have run Python code that changed the
                // dict and freed `v`: take the value the dict holds now.
                match reread() {
                    Some((k2, v2)) if k2 == k && !v2.is_null() => v = v2,
                    _ => return fail(EncodeKind::Mutated, "dict changed during encoding"),
                }
            }
        } else if let Some((keys, col)) = shape {
            // SAFETY: `k` is live (this function's contract).
            if check_key && !unsafe { self.key_of_shape(keys, col, count, k) } {
                return fail(EncodeKind::Mutated, "dict changed during encoding");
            }
            // SAFETY: writing a str runs no Python code.
            let quiet = unsafe { NoCode::new() };
            // SAFETY: no Python code ran since `v` was read from the dict,
            // which holds it and `k` (this function's contract).
            let (key, value) = unsafe { (quiet.lend(k), quiet.lend(v)) };
            if let Some(s) = value.exact_str() {
                let Err(err) = self.str_in(s, strings::MAX_VALUE_LEN, false, Some(col + count))
                else {
                    return Ok(());
                };
                let key = key.to_owned();
                drop(quiet);
                return Err(err).within(|| key_seg(py, key.borrowed(), count), o);
            }
        }
        let value = {
            // SAFETY: atoms run no Python code; the token is dropped before
            // the value is walked further.
            let quiet = unsafe { NoCode::new() };
            // SAFETY: `v` is the dict's current value for `k` (read again
            // above if Python code ran), and `k` is held by the dict or by
            // `held_key`.
            let (key, value) = unsafe { (quiet.lend(k), quiet.lend(v)) };
            if let Some(r) = self.atom(value) {
                let Err(err) = r else {
                    return Ok(());
                };
                let key = held_key.unwrap_or_else(|| key.to_owned());
                drop(quiet);
                return Err(err).within(|| key_seg(py, key.borrowed(), count), o);
            }
            if held_key.is_none() {
                held_key = Some(key.to_owned());
            }
            value.to_owned()
        };
        let key = held_key.as_ref().map_or(value.borrowed(), |k| k.borrowed());
        self.compound(&value).within(|| key_seg(py, key, count), o)
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
        if known == k || !self.opts.deterministic {
            return known == k;
        }
        // SAFETY: comparing text runs no Python code.
        let quiet = unsafe { NoCode::new() };
        // SAFETY: `k` is live (this function's contract) and `known` is held
        // by the shape table.
        let (k, known) = unsafe { (quiet.lend(k), quiet.lend(known)) };
        matches!(
            (k.exact_str().and_then(|s| s.utf8()), known.exact_str().and_then(|s| s.utf8())),
            (Some(a), Some(b)) if a == b
        )
    }

    pub(super) fn same_size(&self, d: Dict<'_>, count: usize, n: usize) -> R {
        if count != n || d.len() != n {
            return fail(EncodeKind::Mutated, "dict changed size during encoding");
        }
        Ok(())
    }

    #[inline(always)]
    pub(crate) fn key(&mut self, k: Borrowed<'_>) -> R {
        match k.exact_str() {
            Some(s) => self.str(s, strings::MAX_KEY_LEN, true),
            None => self.item(k),
        }
    }

    pub(super) fn list(&mut self, l: List<'_>) -> R {
        if let Memo::Done = self.memo_before(l.any(), true) {
            return Ok(());
        }
        let (o, n) = (l.any().ptr(), l.len());
        w::write_list_header(&mut self.out, n);
        self.nested(move |e| {
            // Copies the walk keeps in registers.
            let (l, n, o) = (l, n, o);
            if n > FEW {
                // SAFETY: prefetching runs no Python code.
                let quiet = unsafe { NoCode::new() };
                for item in l.items(&quiet).iter().take(AHEAD) {
                    prefetch(item.ptr());
                }
            }
            let mut i = 0;
            while i < n {
                let held = {
                    // SAFETY: until the token goes out of this block, only
                    // atoms are written, which run no Python code.
                    let quiet = unsafe { NoCode::new() };
                    let Some(items) = l.items_of_len(n, &quiet) else {
                        return fail(EncodeKind::Mutated, "list changed size during encoding");
                    };
                    if let Some(ahead) = items.get(i + AHEAD) {
                        prefetch(ahead.ptr());
                    }
                    let item = items[i];
                    if item.exact_int().is_some() {
                        let end = e.int_run(items, i);
                        if end > i {
                            i = end;
                            continue;
                        }
                    }
                    match e.atom(item) {
                        Some(r) => {
                            r.within(|| PathSeg::Index(i), o)?;
                            i += 1;
                            continue;
                        }
                        None => item.to_owned(),
                    }
                };
                // Held: walking it may run Python code that drops it from
                // the list.
                e.compound(&held).within(|| PathSeg::Index(i), o)?;
                i += 1;
            }
            if l.len() != n {
                return fail(EncodeKind::Mutated, "list changed size during encoding");
            }
            Ok(())
        })
    }

    /// `items[i..]` while they are ints that fit in 60 bits, in one tight
    /// loop (numeric lists). Returns where the run stopped.
    #[inline(always)]
    pub(super) fn int_run(&mut self, items: &[Borrowed<'_>], mut i: usize) -> usize {
        while let Some(item) = items.get(i) {
            let Some(v) = item.exact_int().and_then(|x| x.small()) else {
                break;
            };
            if let Some(ahead) = items.get(i + AHEAD) {
                prefetch(ahead.ptr());
            }
            w::write_int(&mut self.out, v);
            i += 1;
        }
        i
    }

    pub(super) fn tuple(&mut self, t: Tuple<'_>) -> R {
        let memo = self.memo_before(t.any(), false);
        if let Memo::Done = memo {
            return Ok(());
        }
        let n = t.len();
        w::write_tuple_header(&mut self.out, n);
        self.tuple_items(t, n)?;
        if let Memo::Shared(at) = memo {
            self.memo_after_immutable(t.any(), at);
        }
        Ok(())
    }

    /// The `n` items of a tuple (or tuple subclass).
    pub(crate) fn tuple_items(&mut self, t: Tuple<'_>, n: usize) -> R {
        let o = t.any().ptr();
        self.nested(|e| {
            for i in 0..n {
                // A tuple's items are held by it, and it never changes.
                let Some(item) = t.get(i) else {
                    return fail(EncodeKind::Mutated, "tuple changed size during encoding");
                };
                e.item(item).within(|| PathSeg::Index(i), o)?;
            }
            Ok(())
        })
    }

    /// Items produced by iterating `iterable` (sets, deques, OrderedDict
    /// items), `n` of them.
    pub(crate) fn iter_items(&mut self, iterable: &Bound<'py, PyAny>, n: usize) -> R {
        self.nested(|e| e.iter_items_body(iterable, n))
    }

    pub(super) fn iter_items_body(&mut self, iterable: &Bound<'py, PyAny>, n: usize) -> R {
        let o = iterable.as_ptr();
        let mut count = 0;
        for item in iterable.try_iter().or_fail()? {
            let item = iterated(self.py, item)?;
            if count == n {
                return fail(
                    EncodeKind::Mutated,
                    "container changed size during encoding",
                );
            }
            self.item((&item).into())
                .within(|| PathSeg::Index(count), o)?;
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
