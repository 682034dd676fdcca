//! The encoder: walks Python objects and writes one amber frame.
//!
//! Hot types (str, int, float, dict, list, None, bool, tuple) are dispatched
//! on the exact type pointer; everything else goes through a per-type cache
//! filled by `amber._registry.classify` (see `codec/types/`).
//!
//! Ownership rule: every object is a `Borrowed` (`ffi::borrowed`), held by
//! its owner for the call. Atoms run no Python code, so a list or dict walk
//! lends them its items under a `NoCode` token; anything else it holds
//! first (`compound` takes that reference), so Python code that mutates the
//! graph cannot free what the walker is standing on. Containers check
//! afterwards that their size did not change.
//!
//! This file holds the options, the encoder's state and the entry point;
//! `walk.rs` dispatches each item; `atoms.rs` and `containers.rs` write
//! the hot types, `strings.rs` and `shapes.rs` keep the string table and
//! dict shapes, `hitrate.rs` decides when a cache stops paying, and
//! `error.rs` says what failed and where.

mod atoms;
mod containers;
mod error;
mod hitrate;
mod shapes;
pub(crate) mod strings;
mod walk;

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
use crate::ffi::borrowed::Borrowed;
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
