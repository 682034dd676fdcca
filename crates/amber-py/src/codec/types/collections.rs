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
use crate::ffi::borrowed::Borrowed;
use crate::ffi::obj::Obj;
use crate::typeref;

impl<'py> Encoder<'py> {
    /// A `set` or `frozenset` (a frozenset exactly, else written as a set).
    pub(crate) fn set(&mut self, o: Borrowed<'_>) -> R {
        let frozen = o.is_exactly(&raw mut ffi::PyFrozenSet_Type);
        let memo = self.memo_before(o, !frozen);
        if let Memo::Done = memo {
            return Ok(());
        }
        let s = o.to_bound(self.py);
        let n = s.len().or_fail()?;
        w::write_counted(&mut self.out, if frozen { f::FROZENSET } else { f::SET }, n);
        if self.opts.deterministic {
            self.sorted_items(&s, n)?;
        } else {
            self.iter_items(&s, n)?;
        }
        if let (true, Memo::Shared(at)) = (frozen, memo) {
            self.memo_after_immutable(o, at);
        }
        Ok(())
    }

    /// The `n` items of set `s` in deterministic mode: each is encoded
    /// alone, and they are written in the order of their bytes, since a
    /// set's own order follows str hashes, which differ between processes.
    fn sorted_items(&mut self, s: &Bound<'py, PyAny>, n: usize) -> R {
        let o = s.as_ptr();
        self.nested(|e| {
            let mut items: Vec<Vec<u8>> = Vec::with_capacity(n.min(1 << 16));
            for item in s.try_iter().or_fail()? {
                let item = iterated(e.py, item)?;
                if items.len() == n {
                    return fail(EncodeKind::Mutated, "set changed size during encoding");
                }
                let at = items.len();
                let bytes = e
                    .detached((&item).into())
                    .within(|| PathSeg::Index(at), o)?;
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

    /// A `collections.OrderedDict`, in its own order.
    pub(crate) fn ordered_dict(&mut self, o: Borrowed<'_>) -> R {
        if let Memo::Done = self.memo_before(o, true) {
            return Ok(());
        }
        let d = o.to_bound(self.py);
        let n = d.len().or_fail()?;
        w::write_counted(&mut self.out, f::ORDERED_DICT, n);
        // Iterate in the OrderedDict's own order, not the dict's.
        let items = d.call_method0(intern!(self.py, "items")).or_fail()?;
        self.nested(|e| e.pairs_from_iter(o.ptr(), &items, n))
    }

    /// A `collections.Counter`.
    pub(crate) fn counter(&mut self, o: Borrowed<'_>) -> R {
        if let Memo::Done = self.memo_before(o, true) {
            return Ok(());
        }
        let Some(d) = o.dict() else {
            return fail(EncodeKind::Unsupported, "a Counter that is not a dict");
        };
        let n = d.len();
        w::write_counted(&mut self.out, f::COUNTER, n);
        self.dict_pairs(d, n)
    }

    /// A `collections.defaultdict` whose factory is a builtin.
    pub(crate) fn defaultdict(&mut self, o: Borrowed<'_>) -> R {
        if let Memo::Done = self.memo_before(o, true) {
            return Ok(());
        }
        let py = self.py;
        let factory = o
            .to_bound(py)
            .getattr(intern!(py, "default_factory"))
            .or_fail()?;
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
        let Some(d) = o.dict() else {
            return fail(EncodeKind::Unsupported, "a defaultdict that is not a dict");
        };
        let n = d.len();
        w::write_defaultdict_header(&mut self.out, code, n);
        self.dict_pairs(d, n)
    }

    /// A `collections.deque`, with its maxlen.
    pub(crate) fn deque(&mut self, o: Borrowed<'_>) -> R {
        if let Memo::Done = self.memo_before(o, true) {
            return Ok(());
        }
        let d = o.to_bound(self.py);
        w::write_deque_header(&mut self.out);
        let maxlen = d.getattr(intern!(self.py, "maxlen")).or_fail()?;
        self.item((&maxlen).into())?;
        let n = d.len().or_fail()?;
        w::write_count(&mut self.out, n);
        self.iter_items(&d, n)
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
            let seg = || key_seg(py, (&k).into(), count);
            self.key((&k).into()).within(seg, o)?;
            self.item((&v).into()).within(seg, o)?;
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
