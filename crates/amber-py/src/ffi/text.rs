//! `str` objects: reading the bytes of a compact ASCII `str` in place, and
//! making `str`s from UTF-8 that is already validated.
//!
//! A compact ASCII `str` is a `PyASCIIObject` header followed by its
//! characters, one byte each (`_PyUnicode_COMPACT_DATA` in CPython). Its
//! header's `state` bitfield holds `interned:2, kind:3, compact:1, ascii:1`
//! from bit 0 on every GIL-enabled CPython from 3.10 to 3.15 (GCC and Clang
//! allocate bitfields from the low bit on little- and big-endian targets
//! alike for `unsigned int` on the platforms CPython supports). The import
//! checks that the bits read as expected on the running interpreter
//! ([`init`]); where they do not, and on free-threaded builds (whose
//! `interned` is a whole byte), strings are read through
//! `PyUnicode_AsUTF8AndSize` instead.

use pyo3::ffi;
use pyo3::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};

/// The `compact` and `ascii` bits of `PyASCIIObject.state`.
const COMPACT_ASCII: u32 = (1 << 5) | (1 << 6);

/// Whether [`compact_ascii`] reads the state bits (checked at import).
static LAYOUT_KNOWN: AtomicBool = AtomicBool::new(false);

/// Check the `str` layout assumed here on the running interpreter: an ASCII
/// literal reads as compact ASCII with its own bytes, a non-ASCII one does
/// not.
pub fn init(py: Python<'_>) -> PyResult<()> {
    if cfg!(any(Py_GIL_DISABLED, amber_portable)) {
        return Ok(());
    }
    let ascii = pyo3::types::PyString::new(py, "amber");
    let wide = pyo3::types::PyString::new(py, "amb\u{e9}r");
    // SAFETY: both are live strs held by their `Bound`s for the reads.
    let ok = unsafe {
        state_bits(ascii.as_ptr()) & COMPACT_ASCII == COMPACT_ASCII
            && state_bits(wide.as_ptr()) & COMPACT_ASCII != COMPACT_ASCII
            && compact_data(ascii.as_ptr()) == b"amber"
    };
    LAYOUT_KNOWN.store(ok, Ordering::Relaxed);
    Ok(())
}

/// The `state` bitfield of a str's header.
///
/// # Safety
/// `o` must be a live str.
#[inline(always)]
unsafe fn state_bits(o: *mut ffi::PyObject) -> u32 {
    // SAFETY: every str starts with a `PyASCIIObject` header (the caller's
    // contract); pyo3-ffi declares its `state` as the 32-bit word it is.
    unsafe { (*(o as *mut ffi::PyASCIIObject)).state }
}

/// The characters of a compact ASCII str, which follow its header.
///
/// # Safety
/// `o` must be a live compact ASCII str, alive while the slice is used.
#[inline(always)]
unsafe fn compact_data<'a>(o: *mut ffi::PyObject) -> &'a [u8] {
    let header = o as *mut ffi::PyASCIIObject;
    // SAFETY: a compact ASCII str (the caller's contract) holds `length`
    // one-byte characters right after its header, in the same allocation.
    unsafe { std::slice::from_raw_parts(header.add(1) as *const u8, (*header).length as usize) }
}

/// The bytes of `o`, read in place, when it is a compact ASCII str (every
/// ASCII str CPython makes, but for those of str subclasses); else `None`.
///
/// # Safety
/// `o` must be a live str, alive while the slice is used.
#[inline(always)]
pub unsafe fn compact_ascii<'a>(o: *mut ffi::PyObject) -> Option<&'a [u8]> {
    if cfg!(any(Py_GIL_DISABLED, amber_portable)) || !LAYOUT_KNOWN.load(Ordering::Relaxed) {
        return None;
    }
    // SAFETY: `o` is a live str (the caller's contract), and the layout was
    // checked at import; the data is read only when the bits say it is
    // compact ASCII.
    unsafe { (state_bits(o) & COMPACT_ASCII == COMPACT_ASCII).then(|| compact_data(o)) }
}

/// A new `str` holding `s`, or NULL with an exception set. When `s` is
/// ASCII it is copied straight into a new compact ASCII object (what
/// CPython's UTF-8 decoder would build, without decoding again); otherwise
/// CPython decodes it.
///
/// # Safety
/// The GIL is held.
#[inline(always)]
pub unsafe fn new_str(s: &str, ascii: bool) -> *mut ffi::PyObject {
    if ascii {
        // SAFETY: the GIL is held (the caller's contract); the constructor
        // returns a new reference or NULL.
        let o = unsafe { ffi::PyUnicode_New(s.len() as ffi::Py_ssize_t, 127) };
        if !o.is_null() {
            // SAFETY: a new compact ASCII str (max char 127) of `s.len()`
            // characters has room for that many bytes at `PyUnicode_DATA`,
            // and no one else has seen it yet; `s` is ASCII (the caller
            // says so), so the object's invariants hold once it is filled.
            // The characters follow the `PyASCIIObject` header
            // (`_PyUnicode_COMPACT_DATA`), on every version.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    s.as_ptr(),
                    (o as *mut ffi::PyASCIIObject).add(1) as *mut u8,
                    s.len(),
                )
            };
        }
        o
    } else {
        // SAFETY: `s` is valid UTF-8 for its length, borrowed for the call.
        unsafe {
            ffi::PyUnicode_DecodeUTF8(
                s.as_ptr().cast(),
                s.len() as ffi::Py_ssize_t,
                c"strict".as_ptr(),
            )
        }
    }
}

/// A new `str` holding `s` (ASCII by a plain copy, see [`new_str`]).
pub fn string<'py>(
    py: pyo3::Python<'py>,
    s: &str,
) -> pyo3::PyResult<pyo3::Bound<'py, pyo3::types::PyString>> {
    // SAFETY: `py` proves the GIL is held.
    let p = unsafe { new_str(s, s.is_ascii()) };
    // SAFETY: `p` is a new reference to a `str`, or NULL with an exception
    // set.
    unsafe { pyo3::Bound::from_owned_ptr_or_err(py, p).map(|o| o.cast_into_unchecked()) }
}

/// A new `str` of the bytes `b`, or `None` when they are not UTF-8 (ASCII,
/// the common case, is checked word by word and copied; other text is
/// checked once, by CPython's decoder as it decodes).
pub fn utf8_object(
    py: pyo3::Python<'_>,
    b: &[u8],
) -> Option<pyo3::PyResult<pyo3::Py<pyo3::PyAny>>> {
    if b.is_ascii() {
        // SAFETY: ASCII is valid UTF-8; `py` proves the GIL is held.
        let p = unsafe { new_str(std::str::from_utf8_unchecked(b), true) };
        // SAFETY: `p` is a new reference, or NULL with an exception set.
        return Some(unsafe { pyo3::Bound::from_owned_ptr_or_err(py, p) }.map(pyo3::Bound::unbind));
    }
    // SAFETY: `py` proves the GIL is held; `b` is borrowed for the call, and
    // the decoder checks it (invalid UTF-8 raises `UnicodeDecodeError`).
    let p = unsafe {
        ffi::PyUnicode_DecodeUTF8(
            b.as_ptr().cast(),
            b.len() as ffi::Py_ssize_t,
            c"strict".as_ptr(),
        )
    };
    // SAFETY: `p` is a new reference, or NULL with an exception set.
    match unsafe { pyo3::Bound::from_owned_ptr_or_err(py, p) } {
        Ok(o) => Some(Ok(o.unbind())),
        Err(e) if e.is_instance_of::<pyo3::exceptions::PyUnicodeDecodeError>(py) => None,
        Err(e) => Some(Err(e)),
    }
}

/// The UTF-8 of the str `s`, borrowed from it: read in place when it is
/// compact ASCII (see [`compact_ascii`]), else through
/// `PyUnicode_AsUTF8AndSize` (which caches it in the object). `None` when
/// it holds lone surrogates (no exception is left set).
#[inline(always)]
pub fn str_utf8<'a>(s: &'a pyo3::Bound<'_, pyo3::types::PyString>) -> Option<&'a [u8]> {
    // SAFETY: `s` is a live str, held by the borrow for `'a`, and a str's
    // characters never change nor move while it lives.
    if let Some(b) = unsafe { compact_ascii(s.as_ptr()) } {
        return Some(b);
    }
    s.to_str().ok().map(str::as_bytes)
}
