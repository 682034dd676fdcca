//! The collections family, both halves: `set` and `frozenset` (encoded
//! here, built by the decoder's sequence builder), `OrderedDict` (in its
//! own order), `Counter`, `defaultdict` (its factory by code) and `deque`
//! (with its maxlen).

use amber_core::bytes::path::PathSeg;
use amber_core::codec::format as f;
use amber_core::codec::writer as w;
use pyo3::exceptions::PyValueError;
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyInt, PyTuple};

use crate::codec::decode::PyBuilder;
use crate::codec::encode::{fail, iterated, key_seg, Encoder, Memo, OrFail, Within, R};
use crate::errors::EncodeKind;
use crate::ffi::obj::Obj;
use crate::typeref;

impl<'py> Encoder<'py> {
    /// # Safety
    /// `o` is a live `set` or `frozenset` (exactly, as `frozen` says).
    pub(crate) unsafe fn set(&mut self, o: *mut ffi::PyObject, frozen: bool) -> R {
        // SAFETY: the caller guarantees a live object.
        let memo = unsafe { self.memo_before(o, !frozen) };
        if let Memo::Done = memo {
            return Ok(());
        }
        // SAFETY: `o` is a live set or frozenset.
        let n = unsafe { ffi::PySet_Size(o) } as usize;
        w::write_counted(&mut self.out, if frozen { f::FROZENSET } else { f::SET }, n);
        // SAFETY: as above; the Bound takes a reference of its own.
        let s = unsafe { Bound::from_borrowed_ptr(self.py, o) };
        if self.opts.deterministic {
            // SAFETY: as above.
            unsafe { self.sorted_items(o, &s, n) }?;
        } else {
            // SAFETY: as above.
            unsafe { self.iter_items(o, &s, n) }?;
        }
        if let (true, Memo::Shared(at)) = (frozen, memo) {
            // SAFETY: `o` is live, held by the caller (or `_keep`) throughout.
            unsafe { self.memo_after_immutable(o, at) };
        }
        Ok(())
    }

    /// The items of set `o` (held by `s`) in deterministic mode: each is
    /// encoded alone, and they are written in the order of their bytes,
    /// since a set's own order follows str hashes, which differ between
    /// processes.
    ///
    /// # Safety
    /// `o` is a live set or frozenset of `n` items, held by `s`.
    unsafe fn sorted_items(&mut self, o: *mut ffi::PyObject, s: &Bound<'py, PyAny>, n: usize) -> R {
        self.nested(|e| {
            let mut items: Vec<Vec<u8>> = Vec::with_capacity(n.min(1 << 16));
            for item in s.try_iter().or_fail()? {
                let item = iterated(e.py, item)?;
                if items.len() == n {
                    return fail(EncodeKind::Mutated, "set changed size during encoding");
                }
                let at = items.len();
                // SAFETY: `item` is held by its Bound for the call.
                let bytes =
                    unsafe { e.detached(item.as_ptr()) }.within(|| PathSeg::Index(at), o)?;
                items.push(bytes);
            }
            if items.len() != n {
                return fail(EncodeKind::Mutated, "set changed size during encoding");
            }
            items.sort_unstable();
            for b in &items {
                e.out.extend(b);
            }
            Ok(())
        })
    }

    /// # Safety
    /// `o` is a live `collections.OrderedDict` (exactly).
    pub(crate) unsafe fn ordered_dict(&mut self, o: *mut ffi::PyObject) -> R {
        // SAFETY: the caller guarantees a live object.
        if let Memo::Done = unsafe { self.memo_before(o, true) } {
            return Ok(());
        }
        // SAFETY: as above; the Bound takes a reference of its own.
        let d = unsafe { Bound::from_borrowed_ptr(self.py, o) };
        let n = d.len().or_fail()?;
        w::write_counted(&mut self.out, f::ORDERED_DICT, n);
        // Iterate in the OrderedDict's own order, not the dict's.
        let items = d.call_method0(intern!(self.py, "items")).or_fail()?;
        self.nested(|e| e.pairs_from_iter(o, &items, n))
    }

    /// # Safety
    /// `o` is a live `collections.Counter` (exactly).
    pub(crate) unsafe fn counter(&mut self, o: *mut ffi::PyObject) -> R {
        // SAFETY: the caller guarantees a live object.
        if let Memo::Done = unsafe { self.memo_before(o, true) } {
            return Ok(());
        }
        // SAFETY: a live Counter is a dict.
        let n = unsafe { ffi::PyDict_Size(o) } as usize;
        w::write_counted(&mut self.out, f::COUNTER, n);
        // SAFETY: as above.
        unsafe { self.dict_pairs(o, n) }
    }

    /// # Safety
    /// `o` is a live `collections.defaultdict` (exactly).
    pub(crate) unsafe fn defaultdict(&mut self, o: *mut ffi::PyObject) -> R {
        // SAFETY: the caller guarantees a live object.
        if let Memo::Done = unsafe { self.memo_before(o, true) } {
            return Ok(());
        }
        let py = self.py;
        // SAFETY: as above; the Bound takes a reference of its own.
        let d = unsafe { Bound::from_borrowed_ptr(py, o) };
        let factory = d.getattr(intern!(py, "default_factory")).or_fail()?;
        let Some(code) = factory_code(py, &factory).or_fail()? else {
            let name = factory.repr().map(|r| r.to_string()).unwrap_or_default();
            return fail(
                EncodeKind::Unsupported,
                format!(
                    "defaultdict factory {name} is not a builtin; amber encodes defaultdicts \
                 whose default_factory is None or one of: {}",
                    f::DEFAULT_FACTORIES[1..].join(", ")
                ),
            );
        };
        // SAFETY: a live defaultdict is a dict.
        let n = unsafe { ffi::PyDict_Size(o) } as usize;
        w::write_defaultdict_header(&mut self.out, code, n);
        // SAFETY: as above.
        unsafe { self.dict_pairs(o, n) }
    }

    /// # Safety
    /// `o` is a live `collections.deque` (exactly).
    pub(crate) unsafe fn deque(&mut self, o: *mut ffi::PyObject) -> R {
        // SAFETY: the caller guarantees a live object.
        if let Memo::Done = unsafe { self.memo_before(o, true) } {
            return Ok(());
        }
        // SAFETY: as above; the Bound takes a reference of its own.
        let d = unsafe { Bound::from_borrowed_ptr(self.py, o) };
        w::write_deque_header(&mut self.out);
        let maxlen = d.getattr(intern!(self.py, "maxlen")).or_fail()?;
        // SAFETY: `maxlen` is held by its Bound.
        unsafe { self.item(maxlen.as_ptr()) }?;
        let n = d.len().or_fail()?;
        w::write_count(&mut self.out, n);
        // SAFETY: `o` is alive (held by `d`).
        unsafe { self.iter_items(o, &d, n) }
    }

    /// Pairs from an iterator of `(key, value)` tuples over the mapping `o`,
    /// which must give exactly `n`.
    fn pairs_from_iter(&mut self, o: *mut ffi::PyObject, items: &Bound<'py, PyAny>, n: usize) -> R {
        let mut count = 0;
        for pair in items.try_iter().or_fail()? {
            let pair = iterated(self.py, pair)?;
            let pair = pair.cast::<PyTuple>().map_err(PyErr::from).or_fail()?;
            if count == n || pair.len() != 2 {
                return fail(EncodeKind::Mutated, "mapping changed size during encoding");
            }
            let (k, v) = (pair.get_item(0).or_fail()?, pair.get_item(1).or_fail()?);
            let py = self.py;
            let seg = || key_seg(py, k.as_ptr(), count);
            // SAFETY: `k` and `v` are held by their Bounds for the calls.
            unsafe { self.key(k.as_ptr()) }.within(seg, o)?;
            // SAFETY: as above.
            unsafe { self.item(v.as_ptr()) }.within(seg, o)?;
            count += 1;
        }
        if count != n {
            return fail(EncodeKind::Mutated, "mapping changed size during encoding");
        }
        Ok(())
    }
}

/// The code of a builtin defaultdict factory, or `None` if it has none.
fn factory_code(py: Python<'_>, factory: &Bound<'_, PyAny>) -> PyResult<Option<u8>> {
    if factory.is_none() {
        return Ok(Some(0));
    }
    for i in 1..f::DEFAULT_FACTORIES.len() {
        let candidate = typeref::default_factory(py, i as u8)?;
        if candidate.is(factory) {
            return Ok(Some(i as u8));
        }
    }
    Ok(None)
}

impl<'py> PyBuilder<'py, '_> {
    #[inline(never)]
    pub(crate) fn deque_begin_(&mut self, maxlen: Obj) -> PyResult<Obj> {
        let py = self.py;
        let maxlen = self.bound(&maxlen);
        if !maxlen.is_none() && !maxlen.is_exact_instance_of::<PyInt>() {
            return Err(PyValueError::new_err("deque maxlen must be None or an int"));
        }
        let d = typeref::deque(py)?.call1((PyTuple::empty(py), maxlen))?;
        Ok(self.obj(d))
    }

    #[inline(never)]
    pub(crate) fn ordered_dict_(&mut self) -> PyResult<Obj> {
        Ok(self.obj(typeref::ordered_dict(self.py)?.call0()?))
    }

    #[inline(never)]
    pub(crate) fn counter_(&mut self) -> PyResult<Obj> {
        Ok(self.obj(typeref::counter(self.py)?.call0()?))
    }

    #[inline(never)]
    pub(crate) fn defaultdict_(&mut self, code: u8) -> PyResult<Obj> {
        let py = self.py;
        let factory = typeref::default_factory(py, code)?;
        Ok(self.obj(typeref::defaultdict(py)?.call1((factory,))?))
    }
}
