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

mod atoms;
mod containers;
mod error;
mod hitrate;
mod shapes;
pub(crate) mod strings;

pub(crate) use containers::iterated;
pub(crate) use error::{fail, key_seg, py_fail, EncErr, Fail, OrFail, Within, R};

use amber_core::codec::writer as w;
use hashbrown::HashMap;
use pyo3::exceptions::PyMemoryError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::cell::RefCell;

use crate::errors::EncodeKind;
use crate::ffi::buffer::copy_to_bytes;
use crate::ffi::obj::Obj;
use shapes::ShapeTable;
use strings::StringTable;

/// Options of one `dumps` call.
pub struct Options {
    pub identity: bool,
    pub max_depth: usize,
    pub buffer_callback: Option<Obj>,
    pub oob_threshold: usize,
    /// Output that depends on the value only: tables keyed by content, sets
    /// in the order of their encoded items.
    pub deterministic: bool,
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
    /// How many set items are being written into scratch buffers, to be
    /// sorted (deterministic mode): inside one, tables, sharing and
    /// out-of-band buffers are off, since the item's position is not known.
    pub(crate) scratch: usize,
    /// Dtypes lately written without extras (kept alive, so their
    /// addresses are not reused): arrays and scalars of a few dtypes, and
    /// the fields of structured ones, are checked once.
    pub(crate) plain_dtypes: crate::codec::types::dtype::Seen,
    /// How many objects went through `other`, the only place where
    /// encoding can run Python code (hooks, `__getstate__`, the classifier,
    /// stdlib and NumPy methods, and other threads meanwhile): atoms, and
    /// the walks over exact dicts, lists and tuples, call no Python code and
    /// make no object the cyclic GC tracks. A walk that sees this unchanged
    /// knows its container is as it was.
    pub(crate) others: u64,
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
    strings.begin_frame(opts.deterministic);
    shapes.begin_frame(opts.deterministic);
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
        scratch: 0,
        plain_dtypes: crate::codec::types::dtype::Seen::default(),
        others: 0,
    };
    let result = enc
        .frame(obj)
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
    fn frame(&mut self, obj: &Bound<'py, PyAny>) -> PyResult<()> {
        self.frame_start = w::begin_frame(&mut self.out);
        // SAFETY: `obj` is live, held by its Bound for the whole encode.
        match unsafe { self.item(obj.as_ptr()) } {
            Ok(()) if self.out.failed() => Err(out_of_memory(self.out.len())),
            Ok(()) => {
                w::finish_frame(&mut self.out, self.frame_start);
                Ok(())
            }
            Err(e) => Err(self.to_pyerr(*e)),
        }
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
                fail: Fail::Msg(
                    EncodeKind::Limit,
                    format!(
                        "objects nested deeper than max_depth={}",
                        self.opts.max_depth
                    ),
                ),
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
        // SAFETY: the caller's `o` is live.
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
                        EncodeKind::Cycle,
                        "the value refers to itself (through an array's dtype metadata or a \
                         table's attrs); amber cannot encode this cycle",
                    );
                }
                // SAFETY: the caller's `o` is live.
                unsafe { self.memo_after_immutable(o, at) };
                Ok(())
            }
        }
    }

    /// Encode any object.
    #[inline(always)]
    pub(crate) unsafe fn item(&mut self, o: *mut ffi::PyObject) -> R {
        // SAFETY: `o` is live (this function's contract).
        match unsafe { self.atom(o) } {
            Some(r) => r,
            // SAFETY: as above.
            None => unsafe { self.compound(o) },
        }
    }

    /// Atoms (str, int, float, None, bool) inline in the caller's loop;
    /// `None` for anything else. Atoms run no Python code.
    #[inline(always)]
    unsafe fn atom(&mut self, o: *mut ffi::PyObject) -> Option<R> {
        // SAFETY: `o` is live (this function's contract).
        let t = unsafe { ffi::Py_TYPE(o) };
        // SAFETY: `o` is live and each branch treats it as the exact type
        // just compared; the singletons are only compared by address.
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
        // SAFETY: `o` is live (this function's contract).
        let t = unsafe { ffi::Py_TYPE(o) };
        // SAFETY: each handler gets a live object of exactly its type.
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

    /// Encode `o` alone into a buffer of its own, as a set item in
    /// deterministic mode: with the string and shape tables, sharing and
    /// out-of-band buffers off, its bytes do not depend on where they land.
    ///
    /// # Safety
    /// `o` is a live object.
    pub(crate) unsafe fn detached(&mut self, o: *mut ffi::PyObject) -> R<Vec<u8>> {
        let outer = std::mem::replace(&mut self.out, w::Out::new());
        let strings = self.strings.suspend();
        let lookups = self.shapes.suspend();
        self.scratch += 1;
        // SAFETY: `o` is live (this function's contract).
        let r = unsafe { self.item(o) };
        self.scratch -= 1;
        self.shapes.resume(lookups);
        self.strings.resume(strings);
        let inner = std::mem::replace(&mut self.out, outer);
        if inner.failed() {
            return Err(Box::new(EncErr::from(out_of_memory(inner.len()))));
        }
        r.map(|()| inner.as_slice().to_vec())
    }

    /// Fails inside a detached item: array data is aligned to its place in
    /// the frame, which a detached item does not know.
    pub(crate) fn aligned_data_here(&self) -> R {
        if self.scratch > 0 {
            return fail(
                EncodeKind::Unsupported,
                "deterministic=True cannot order a set whose items hold arrays or tables",
            );
        }
        Ok(())
    }

    /// Identity mode bookkeeping before writing a container.
    #[inline(always)]
    pub(crate) unsafe fn memo_before(&mut self, o: *mut ffi::PyObject, mutable: bool) -> Memo {
        // SAFETY: the caller's `o` is live.
        if !self.opts.identity || self.scratch > 0 || unsafe { ffi::Py_REFCNT(o) } <= 1 {
            return Memo::Plain;
        }
        if let Some(&i) = self.memo.get(&(o as usize)) {
            w::write_memo_ref(&mut self.out, i);
            return Memo::Done;
        }
        let at = w::write_share(&mut self.out);
        if mutable {
            // SAFETY: as above.
            unsafe { self.memo_insert(o) };
        }
        Memo::Shared(at)
    }

    /// # Safety
    /// `o` is a live object.
    unsafe fn memo_insert(&mut self, o: *mut ffi::PyObject) {
        let i = self.memo_keep.len();
        // SAFETY: `o` is live (this function's contract); the reference
        // keeps it, and so its address in `memo`, for the whole frame.
        self.memo_keep.push(unsafe { Obj::from_borrowed(o) });
        self.memo.insert(o as usize, i);
    }

    /// Identity mode bookkeeping after writing an immutable container that
    /// got a SHARE marker at `at`. If a cycle through its contents already
    /// wrote and registered it, the outer copy is wrapped in REPLACE.
    ///
    /// # Safety
    /// `o` is a live object.
    pub(crate) unsafe fn memo_after_immutable(&mut self, o: *mut ffi::PyObject, at: usize) {
        match self.memo.get(&(o as usize)) {
            // SAFETY: `o` is live (this function's contract).
            None => unsafe { self.memo_insert(o) },
            Some(&i) => w::replace_share(&mut self.out, at, i),
        }
    }
}

/// A new `bytes` object holding `data`; `MemoryError` if it cannot be made.
fn new_bytes<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
    // The frame is Rust-owned memory: a large one is copied with the GIL
    // released.
    let b = copy_to_bytes(py, data, false, true)?;
    // SAFETY: `copy_to_bytes` made a bytes object (not mutable).
    Ok(unsafe { b.cast_into_unchecked() })
}

/// The `MemoryError` of an output buffer that could not grow past `len` bytes.
#[cold]
fn out_of_memory(len: usize) -> PyErr {
    PyMemoryError::new_err(format!(
        "out of memory: the encoded output could not grow past {len} bytes"
    ))
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
