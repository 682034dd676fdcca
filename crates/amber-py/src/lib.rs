//! `amber._native`: the thin PyO3 edge over amber-core. This file lists
//! what Python sees; each part lives in its own folder.
//!
//! - `codec/`: `dumps`, `loads`, `frame_length` (the encoder's object walker
//!   and the decoder's builder);
//! - `archive/`: the zip container, compression, hashes and `.npy` headers
//!   for `amber.Archive`;
//! - `pg/`: COPY BINARY streams and binary results for `amber.pg`;
//! - `proto/`: message classes, containers and the wire edge for
//!   `amber.proto`;
//! - `values/`: datetime, Decimal, UUID and NumPy values as plain Rust parts;
//! - `typeref.rs`: classes and C APIs found once;
//! - `errors.rs`: every exception class;
//! - `ffi/`: every raw read of CPython's objects and layouts;
//! - `gil.rs`: the one door for bulk work without the GIL.

mod archive;
mod codec;
mod errors;
mod ffi;
mod gil;
mod pg;
mod proto;
mod typeref;
mod values;

use pyo3::prelude::*;

/// The Rust side's allocator: parsed messages, their containers and the
/// encoders' buffers make many small allocations, and mimalloc's take and
/// give back about a third of the system allocator's instructions. Python
/// objects still come from CPython's own allocator.
#[global_allocator]
static ALLOCATOR: Mimalloc = Mimalloc;

/// mimalloc, called through its plain entry points whenever the alignment
/// asked for is one every mimalloc block already has: the aligned entry
/// points cost about 80 more instructions per allocation and take a slow
/// generic path on every reallocation.
struct Mimalloc;

/// Every block mimalloc hands out is aligned to at least a pointer's size
/// (its smallest size class is one machine word, and its pages start
/// aligned), so layouts aligned to no more than this need no aligned call.
const PLAIN_ALIGN: usize = std::mem::size_of::<usize>();

// SAFETY: each method forwards to the mimalloc function of the same contract
// (`mi_malloc`/`mi_zalloc`/`mi_realloc` give blocks aligned to at least
// `PLAIN_ALIGN`, the `_aligned` variants to the alignment asked for, null on
// failure), and every block is freed by `mi_free`, which takes blocks of
// either kind.
unsafe impl std::alloc::GlobalAlloc for Mimalloc {
    #[inline]
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        use libmimalloc_sys as mi;
        // SAFETY: plain mimalloc calls; the alignment rule is above.
        unsafe {
            if layout.align() <= PLAIN_ALIGN {
                mi::mi_malloc(layout.size()).cast()
            } else {
                mi::mi_malloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        use libmimalloc_sys as mi;
        // SAFETY: as in `alloc`.
        unsafe {
            if layout.align() <= PLAIN_ALIGN {
                mi::mi_zalloc(layout.size()).cast()
            } else {
                mi::mi_zalloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: std::alloc::Layout) {
        // SAFETY: `ptr` came from this allocator, so from mimalloc.
        unsafe { libmimalloc_sys::mi_free(ptr.cast()) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        use libmimalloc_sys as mi;
        // SAFETY: `ptr` came from this allocator with `layout`; the new
        // block keeps `layout`'s alignment by the rule above (`mi_realloc`
        // of a block keeps at least `PLAIN_ALIGN`).
        unsafe {
            if layout.align() <= PLAIN_ALIGN {
                mi::mi_realloc(ptr.cast(), new_size).cast()
            } else {
                mi::mi_realloc_aligned(ptr.cast(), new_size, layout.align()).cast()
            }
        }
    }
}

/// Panics with `message`, inside the guard every entry point runs in
/// (`errors::guard`): the suite's check that a panic, which would be a bug
/// in amber, reaches Python as `amber.AmberError` of kind `internal`.
#[pyfunction]
fn _panic(message: &str) -> PyResult<()> {
    crate::errors::guard(|| panic!("{message}"))
}

/// `gil_used = true`: amber does not declare free-threading support yet (the
/// codec reads containers in place without per-object locks), so a
/// free-threaded interpreter turns its GIL back on when it imports amber,
/// which keeps every walk sound. What remains before this can be `false`:
/// `docs/compatibility.md`.
#[pymodule(gil_used = true)]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    typeref::init_datetime(py)?;
    ffi::long::init(py)?;
    ffi::text::init(py)?;
    errors::register(m)?;
    m.add_function(wrap_pyfunction!(_panic, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    codec::register(m)?;
    archive::register(m)?;
    pg::register(m)?;
    proto::register(m)?;
    Ok(())
}
