//! The encoder: walks Python objects and writes one amber frame.
//!
//! Hot types (str, int, float, dict, list, None, bool, tuple) are dispatched
//! on the exact type pointer; everything else goes through a per-type cache
//! filled by `amber._registry.classify` (see `codec/types/`).
//!
//! Ownership rule: a handler that can (transitively) run Python code holds a
//! strong reference to its object, so Python code that mutates the graph
//! cannot free what the walker is standing on. Containers check afterwards
//! that their size did not change.

mod hitrate;
mod shapes;
pub(crate) mod strings;

use amber_core::bytes::path::{key_segment, render_path, PathSeg};
use amber_core::codec::writer as w;
use hashbrown::HashMap;
use pyo3::exceptions::PyMemoryError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::cell::RefCell;

use crate::errors;
use crate::ffi::buffer::{bytes_like_slice, bytes_slice};
use crate::ffi::dict;
use crate::ffi::obj::{prefetch, Obj};
use shapes::{KeyView, ShapeTable};
use strings::{Found, StringTable};

/// Options of one `dumps` call.
pub struct Options {
    pub identity: bool,
    pub max_depth: usize,
    pub buffer_callback: Option<Obj>,
    pub oob_threshold: usize,
}

/// Why encoding stopped.
pub enum Fail {
    Msg(String),
    Py(PyErr),
}

pub struct EncErr {
    fail: Fail,
    /// Path from the root, built while unwinding.
    path: Vec<PathSeg>,
    /// Container addresses along the path, to tell a cycle from deep nesting.
    chain: Vec<usize>,
    depth_exceeded: bool,
}

pub type R<T = ()> = Result<T, Box<EncErr>>;

#[cold]
pub fn fail<T>(msg: impl Into<String>) -> R<T> {
    Err(Box::new(EncErr {
        fail: Fail::Msg(msg.into()),
        path: vec![],
        chain: vec![],
        depth_exceeded: false,
    }))
}

impl From<PyErr> for EncErr {
    #[cold]
    fn from(e: PyErr) -> EncErr {
        EncErr {
            fail: Fail::Py(e),
            path: vec![],
            chain: vec![],
            depth_exceeded: false,
        }
    }
}

#[cold]
pub fn py_fail<T>(py: Python<'_>) -> R<T> {
    Err(Box::new(EncErr::from(PyErr::fetch(py))))
}

/// Turn a `PyResult` into the encoder's result.
pub trait OrFail<T> {
    fn or_fail(self) -> R<T>;
}

impl<T> OrFail<T> for PyResult<T> {
    #[inline(always)]
    fn or_fail(self) -> R<T> {
        self.map_err(|e| Box::new(EncErr::from(e)))
    }
}

pub(crate) trait Within {
    fn within(self, seg: impl FnOnce() -> PathSeg, container: *mut ffi::PyObject) -> Self;
}

impl<T> Within for R<T> {
    #[inline(always)]
    fn within(self, seg: impl FnOnce() -> PathSeg, container: *mut ffi::PyObject) -> Self {
        self.map_err(|mut e| {
            e.path.insert(0, seg());
            e.chain.insert(0, container as usize);
            e
        })
    }
}

/// Memo state of a container in identity mode.
pub(crate) enum Memo {
    /// Written as a reference; nothing more to do.
    Done,
    /// Not shared (or identity is off): write it normally.
    Plain,
    /// Shared, SHARE marker written at this position.
    Shared(usize),
}

pub(crate) struct Encoder<'py> {
    pub(crate) py: Python<'py>,
    pub(crate) out: w::Out,
    pub(crate) frame_start: usize,
    depth: usize,
    pub(crate) opts: &'py Options,
    strings: StringTable,
    shapes: ShapeTable,
    /// Identity mode: address -> memo index, with the objects kept alive.
    pub(crate) memo: HashMap<usize, usize, foldhash::fast::FixedState>,
    memo_keep: Vec<Obj>,
    /// How many out-of-band buffers were handed to the callback.
    n_oob: usize,
    /// Dtypes lately written without extras (kept alive, so their
    /// addresses are not reused): arrays and scalars of a few dtypes, and
    /// the fields of structured ones, are checked once.
    pub(crate) plain_dtypes: crate::codec::types::dtype::Seen,
}

/// What one `dumps` call reuses from the previous one on the same thread:
/// the output buffer and the caches of the string and shape tables.
struct Spare {
    out: w::Out,
    strings: StringTable,
    shapes: ShapeTable,
}

/// Output buffers larger than this are not kept between calls.
const KEEP_OUT: usize = 1 << 22;

thread_local! {
    static SPARE: RefCell<Option<Spare>> = const { RefCell::new(None) };
}

/// Encode `obj` as one frame. A call made while another is running on this
/// thread (from a hook) finds no spare and starts afresh.
pub fn dumps<'py>(
    py: Python<'py>,
    obj: &Bound<'py, PyAny>,
    opts: &Options,
) -> PyResult<Bound<'py, PyBytes>> {
    amber_core::bytes::stack::enter(
        || dumps_here(py, obj, opts),
        || PyMemoryError::new_err("out of memory for the encoder's stack"),
    )
}

fn dumps_here<'py>(
    py: Python<'py>,
    obj: &Bound<'py, PyAny>,
    opts: &Options,
) -> PyResult<Bound<'py, PyBytes>> {
    let spare = SPARE.with(|s| s.try_borrow_mut().ok().and_then(|mut s| s.take()));
    let Spare {
        mut out,
        mut strings,
        mut shapes,
    } = spare.unwrap_or_else(|| Spare {
        out: w::Out::new(),
        strings: StringTable::new(),
        shapes: ShapeTable::new(),
    });
    out.clear();
    strings.begin_frame();
    shapes.begin_frame();
    let mut enc = Encoder {
        py,
        out,
        frame_start: 0,
        depth: 0,
        opts,
        strings,
        shapes,
        memo: HashMap::with_hasher(Default::default()),
        memo_keep: Vec::new(),
        n_oob: 0,
        plain_dtypes: crate::codec::types::dtype::Seen::default(),
    };
    let result = enc
        .frame(obj.as_ptr())
        .and_then(|()| new_bytes(py, enc.out.as_slice()));
    let Encoder {
        mut out,
        mut strings,
        mut shapes,
        ..
    } = enc;
    strings.end_frame();
    shapes.end_frame();
    if out.capacity() > KEEP_OUT {
        out = w::Out::new();
    }
    SPARE.with(|s| {
        if let Ok(mut s) = s.try_borrow_mut() {
            *s = Some(Spare {
                out,
                strings,
                shapes,
            });
        }
    });
    result
}

impl<'py> Encoder<'py> {
    /// Encode `obj` as one frame appended to `self.out`.
    fn frame(&mut self, obj: *mut ffi::PyObject) -> PyResult<()> {
        self.frame_start = w::begin_frame(&mut self.out);
        match unsafe { self.item(obj) } {
            Ok(()) if self.out.failed() => Err(out_of_memory(self.out.len())),
            Ok(()) => {
                w::finish_frame(&mut self.out, self.frame_start);
                Ok(())
            }
            Err(e) => Err(self.to_pyerr(*e)),
        }
    }

    #[cold]
    fn to_pyerr(&self, e: EncErr) -> PyErr {
        let py = self.py;
        let path = render_path(&e.path);
        let (msg, cause) = match e.fail {
            Fail::Msg(m) => (m, None),
            Fail::Py(err) if errors::passes_through(py, &err) => return err,
            Fail::Py(err) => {
                let m = format!("{}", err.value(py));
                (
                    format!(
                        "{}: {m}",
                        err.get_type(py)
                            .name()
                            .map(|n| n.to_string())
                            .unwrap_or_default()
                    ),
                    Some(err),
                )
            }
        };
        // A cycle is reported where the object appears inside itself, not
        // where the depth limit was reached, max_depth levels further down.
        let cycle = e.depth_exceeded.then(|| find_cycle(&e.chain)).flatten();
        let (msg, path) = match cycle {
            Some((i, j)) => (
                format!(
                    "cycle: the object at {} contains itself; pass identity=True to encode \
                     shared references and cycles",
                    render_path(&e.path[..i]),
                ),
                render_path(&e.path[..j]),
            ),
            None => (msg, path),
        };
        errors::make(
            py,
            errors::encode_error(py),
            format!("{msg} (at {path})"),
            None,
            Some(path),
            cause,
        )
    }

    /// Run `f`, which writes child items, one level deeper: the same tags
    /// count as levels here as in the decoder, so a frame written within a
    /// limit always reads within it. The stack grows on demand.
    #[inline(always)]
    pub(crate) fn nested(&mut self, f: impl FnOnce(&mut Self) -> R) -> R {
        if self.out.failed() {
            return Err(Box::new(EncErr::from(out_of_memory(self.out.len()))));
        }
        if self.depth >= self.opts.max_depth {
            return Err(Box::new(EncErr {
                fail: Fail::Msg(format!(
                    "objects nested deeper than max_depth={}",
                    self.opts.max_depth
                )),
                path: vec![],
                chain: vec![],
                depth_exceeded: true,
            }));
        }
        self.depth += 1;
        let r = amber_core::bytes::stack::descend(
            self.depth,
            || f(self),
            || {
                Box::new(EncErr::from(PyMemoryError::new_err(
                    "out of memory for the stack of nested objects",
                )))
            },
        );
        self.depth -= 1;
        r
    }

    /// An immutable value that may be shared (bytes, arrays): memo after
    /// writing.
    pub(crate) unsafe fn shared_leaf(
        &mut self,
        o: *mut ffi::PyObject,
        body: impl FnOnce(&mut Self) -> R,
    ) -> R {
        let memo = unsafe { self.memo_before(o, false) };
        match memo {
            Memo::Done => Ok(()),
            Memo::Plain => body(self),
            Memo::Shared(at) => {
                body(self)?;
                // Only an array can reach itself (through its dtype's
                // metadata), and REPLACE cannot stand before an array.
                if self.memo.contains_key(&(o as usize)) {
                    return fail(
                        "the array refers to itself through its dtype's metadata; amber \
                         cannot encode this cycle",
                    );
                }
                self.memo_after_immutable(o, at);
                Ok(())
            }
        }
    }

    /// Encode any object.
    #[inline(always)]
    pub(crate) unsafe fn item(&mut self, o: *mut ffi::PyObject) -> R {
        match unsafe { self.atom(o) } {
            Some(r) => r,
            None => unsafe { self.compound(o) },
        }
    }

    /// Atoms (str, int, float, None, bool) inline in the caller's loop;
    /// `None` for anything else. Atoms run no Python code.
    #[inline(always)]
    unsafe fn atom(&mut self, o: *mut ffi::PyObject) -> Option<R> {
        let t = unsafe { ffi::Py_TYPE(o) };
        unsafe {
            if t == &raw mut ffi::PyUnicode_Type {
                Some(self.str(o, strings::MAX_VALUE_LEN, false))
            } else if t == &raw mut ffi::PyLong_Type {
                Some(self.int(o))
            } else if t == &raw mut ffi::PyFloat_Type {
                w::write_float(&mut self.out, ffi::PyFloat_AS_DOUBLE(o));
                Some(Ok(()))
            } else if o == ffi::Py_None() {
                w::write_none(&mut self.out);
                Some(Ok(()))
            } else if t == &raw mut ffi::PyBool_Type {
                w::write_bool(&mut self.out, o == ffi::Py_True());
                Some(Ok(()))
            } else {
                None
            }
        }
    }

    /// Everything but atoms, out of line: containers recurse through here.
    #[inline(never)]
    unsafe fn compound(&mut self, o: *mut ffi::PyObject) -> R {
        let t = unsafe { ffi::Py_TYPE(o) };
        unsafe {
            if t == &raw mut ffi::PyDict_Type {
                self.dict(o)
            } else if t == &raw mut ffi::PyList_Type {
                self.list(o)
            } else if t == &raw mut ffi::PyTuple_Type {
                self.tuple(o)
            } else {
                self.other(o, t)
            }
        }
    }

    /// A str, deduplicated through the table when at most `dedup_max` bytes.
    #[inline(always)]
    pub(crate) unsafe fn str(&mut self, o: *mut ffi::PyObject, dedup_max: usize, key: bool) -> R {
        unsafe { self.str_in(o, dedup_max, key, None) }
    }

    /// A str value in shape column `column`, if any: content lookups are
    /// made while they pay for themselves in that column.
    #[inline(always)]
    unsafe fn str_in(
        &mut self,
        o: *mut ffi::PyObject,
        dedup_max: usize,
        key: bool,
        column: Option<usize>,
    ) -> R {
        // The same object again needs no look at its text.
        if let Some(i) = self.strings.by_address(o) {
            w::write_str_ref(&mut self.out, i);
            return Ok(());
        }
        let Some(utf8) = (unsafe { strings::utf8(o) }) else {
            return unsafe { self.str_surrogates(o) };
        };
        if utf8.len() <= dedup_max && column.is_none_or(|c| self.shapes.column_on(c)) {
            let found = self.strings.by_content(o, utf8, key);
            if let Some(c) = column {
                self.shapes.column_saw(c, !matches!(found, Found::Plain));
            }
            match found {
                Found::Ref(i) => w::write_str_ref(&mut self.out, i),
                Found::Define => w::write_str_def(&mut self.out, utf8),
                Found::Plain => w::write_str(&mut self.out, utf8),
            }
        } else {
            w::write_str(&mut self.out, utf8);
        }
        Ok(())
    }

    #[cold]
    unsafe fn str_surrogates(&mut self, o: *mut ffi::PyObject) -> R {
        // Not valid UTF-8: lone surrogates. Encode them as 3-byte sequences.
        let b = unsafe {
            Obj::from_owned(ffi::PyUnicode_AsEncodedString(
                o,
                c"utf-8".as_ptr(),
                c"surrogatepass".as_ptr(),
            ))
        };
        let Some(b) = b else { return py_fail(self.py) };
        let raw = unsafe { bytes_slice(b.ptr()) };
        w::write_str_surrogates(&mut self.out, raw);
        Ok(())
    }

    #[inline(always)]
    unsafe fn int(&mut self, o: *mut ffi::PyObject) -> R {
        if let Some(v) = unsafe { crate::ffi::long::small_int(o) } {
            w::write_int(&mut self.out, v);
            return Ok(());
        }
        let mut overflow = 0;
        let v = unsafe { ffi::PyLong_AsLongLongAndOverflow(o, &mut overflow) };
        if overflow == 0 {
            if v == -1 && unsafe { !ffi::PyErr_Occurred().is_null() } {
                return py_fail(self.py);
            }
            w::write_int(&mut self.out, v);
            Ok(())
        } else {
            unsafe { self.bigint(o) }
        }
    }

    #[cold]
    unsafe fn bigint(&mut self, o: *mut ffi::PyObject) -> R {
        let py = self.py;
        let n = unsafe { Bound::from_borrowed_ptr(py, o) };
        // bit_length // 8 + 1 bytes always leave room for the sign bit.
        let bits: u64 = n
            .call_method0("bit_length")
            .or_fail()?
            .extract()
            .or_fail()?;
        let kw = pyo3::types::PyDict::new(py);
        kw.set_item("signed", true).or_fail()?;
        let b = n
            .call_method("to_bytes", ((bits / 8 + 1) as usize, "little"), Some(&kw))
            .or_fail()?;
        let raw = b
            .cast::<pyo3::types::PyBytes>()
            .map_err(PyErr::from)
            .or_fail()?
            .as_bytes();
        let negative = raw.last().is_some_and(|&b| b & 0x80 != 0);
        w::write_bigint(&mut self.out, shortest_twos_complement(raw, negative));
        Ok(())
    }

    /// Identity mode bookkeeping before writing a container.
    #[inline(always)]
    pub(crate) unsafe fn memo_before(&mut self, o: *mut ffi::PyObject, mutable: bool) -> Memo {
        if !self.opts.identity || unsafe { ffi::Py_REFCNT(o) } <= 1 {
            return Memo::Plain;
        }
        if let Some(&i) = self.memo.get(&(o as usize)) {
            w::write_memo_ref(&mut self.out, i);
            return Memo::Done;
        }
        let at = w::write_share(&mut self.out);
        if mutable {
            self.memo_insert(o);
        }
        Memo::Shared(at)
    }

    fn memo_insert(&mut self, o: *mut ffi::PyObject) {
        let i = self.memo_keep.len();
        self.memo_keep.push(unsafe { Obj::from_borrowed(o) });
        self.memo.insert(o as usize, i);
    }

    /// Identity mode bookkeeping after writing an immutable container that
    /// got a SHARE marker at `at`. If a cycle through its contents already
    /// wrote and registered it, the outer copy is wrapped in REPLACE.
    pub(crate) fn memo_after_immutable(&mut self, o: *mut ffi::PyObject, at: usize) {
        match self.memo.get(&(o as usize)) {
            None => self.memo_insert(o),
            Some(&i) => w::replace_share(&mut self.out, at, i),
        }
    }

    unsafe fn dict(&mut self, o: *mut ffi::PyObject) -> R {
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
    unsafe fn dict_entries<const KEYS: bool>(
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
                    return fail("dict changed during encoding");
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
    unsafe fn entry<const KEYS: bool>(
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
            return fail("dict changed size during encoding");
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
                    _ => return fail("dict changed during encoding"),
                }
            }
        } else if let Some((keys, col)) = shape {
            if check_key && (!keys.collected || keys.get(count) != k) {
                return fail("dict changed during encoding");
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

    unsafe fn same_size(&self, o: *mut ffi::PyObject, count: usize, n: usize) -> R {
        if count != n || unsafe { dict::len(o) } != n {
            return fail("dict changed size during encoding");
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

    unsafe fn list(&mut self, o: *mut ffi::PyObject) -> R {
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
                    return fail("list changed size during encoding");
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
                return fail("list changed size during encoding");
            }
            Ok(())
        })
    }

    /// Items `i..n` of list `o` while they are ints that fit in 60 bits,
    /// in one tight loop (numeric lists): reading them runs no Python code,
    /// so the list cannot change meanwhile. Returns where the run stopped.
    #[inline(always)]
    unsafe fn int_run(&mut self, o: *mut ffi::PyObject, mut i: usize, n: usize) -> usize {
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

    unsafe fn tuple(&mut self, o: *mut ffi::PyObject) -> R {
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

    unsafe fn iter_items_body(
        &mut self,
        o: *mut ffi::PyObject,
        iterable: &Bound<'py, PyAny>,
        n: usize,
    ) -> R {
        let mut count = 0;
        for item in iterable.try_iter().or_fail()? {
            let item = item.or_fail()?;
            if count == n {
                return fail("container changed size during encoding");
            }
            unsafe { self.item(item.as_ptr()) }.within(|| PathSeg::Index(count), o)?;
            count += 1;
        }
        if count != n {
            return fail("container changed size during encoding");
        }
        Ok(())
    }

    /// Bytes and bytearrays, in band or out of band.
    pub(crate) unsafe fn bytes_like(&mut self, o: *mut ffi::PyObject, bytearray: bool) -> R {
        if unsafe { bytes_like_slice(o, bytearray) }.len() >= self.opts.oob_threshold {
            if let Some(i) = unsafe { self.out_of_band(o) }? {
                w::write_bytes_oob(&mut self.out, i, bytearray);
                return Ok(());
            }
        }
        // Read now: the callback (Python code) may have resized a bytearray.
        w::write_bytes(
            &mut self.out,
            unsafe { bytes_like_slice(o, bytearray) },
            bytearray,
        );
        Ok(())
    }

    /// Offer `o` (anything with the buffer protocol) to the buffer callback;
    /// `Some(index)` if it went out of band.
    pub(crate) unsafe fn out_of_band(&mut self, o: *mut ffi::PyObject) -> R<Option<usize>> {
        let Some(cb) = &self.opts.buffer_callback else {
            return Ok(None);
        };
        let py = self.py;
        let obj = unsafe { Bound::from_borrowed_ptr(py, o) };
        let pb = crate::typeref::pickle_buffer(py)
            .or_fail()?
            .call1((obj,))
            .or_fail()?;
        let keep_in_band = unsafe { Bound::from_borrowed_ptr(py, cb.ptr()) }
            .call1((pb,))
            .or_fail()?;
        if keep_in_band.is_truthy().or_fail()? {
            return Ok(None);
        }
        let i = self.n_oob;
        self.n_oob += 1;
        Ok(Some(i))
    }
}

/// A new `bytes` object holding `data`; `MemoryError` if it cannot be made.
fn new_bytes<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
    // SAFETY: CPython copies `data.len()` bytes from a valid slice; a null
    // result means an exception (MemoryError) is set.
    let p = unsafe {
        ffi::PyBytes_FromStringAndSize(data.as_ptr().cast(), data.len() as ffi::Py_ssize_t)
    };
    if p.is_null() {
        return Err(PyErr::fetch(py));
    }
    // SAFETY: a new reference to a bytes object.
    Ok(unsafe { Bound::from_owned_ptr(py, p).cast_into_unchecked() })
}

/// The `MemoryError` of an output buffer that could not grow past `len` bytes.
#[cold]
fn out_of_memory(len: usize) -> PyErr {
    PyMemoryError::new_err(format!(
        "out of memory: the encoded output could not grow past {len} bytes"
    ))
}

/// The path step of pair `i` with key `k`: as the decoder writes it
/// (spec §11), `.name` or `["…"]` for a str key, `[<key i>]` otherwise.
#[cold]
pub(crate) fn key_seg(py: Python<'_>, k: *mut ffi::PyObject, i: usize) -> PathSeg {
    // SAFETY: callers hold `k` (or its dict, unchanged) for this call.
    let key = unsafe { Bound::from_borrowed_ptr(py, k) };
    match key.extract::<String>() {
        Ok(s) => PathSeg::Key(key_segment(&s)),
        Err(_) => PathSeg::Key(format!("[<key {i}>]")),
    }
}

/// Containers ask for the items this far ahead of the one they write...
const AHEAD: usize = 8;
/// ...unless they hold this few: the processor overlaps those loads itself.
const FEW: usize = 4;

/// Drop redundant sign bytes from little-endian two's complement.
fn shortest_twos_complement(le: &[u8], negative: bool) -> &[u8] {
    let mut n = le.len();
    let fill = if negative { 0xFF } else { 0x00 };
    while n > 1 && le[n - 1] == fill && ((le[n - 2] & 0x80 != 0) == negative) {
        n -= 1;
    }
    &le[..n]
}

/// An array boxed without passing through the stack (`Box::new([x; N])`
/// may build it there first, and the encoder's tables are larger than the
/// smallest thread stacks).
fn boxed_array<T: Clone, const N: usize>(x: T) -> Box<[T; N]> {
    match vec![x; N].into_boxed_slice().try_into() {
        Ok(a) => a,
        Err(_) => unreachable!("a vec of N items makes an array of N"),
    }
}

/// The first container address that appears twice along the failing path.
fn find_cycle(chain: &[usize]) -> Option<(usize, usize)> {
    let mut seen: HashMap<usize, usize> = HashMap::new();
    for (j, &a) in chain.iter().enumerate() {
        if let Some(&i) = seen.get(&a) {
            return Some((i, j));
        }
        seen.insert(a, j);
    }
    None
}
