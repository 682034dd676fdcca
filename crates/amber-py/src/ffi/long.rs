//! Reading ints of up to two digits straight from CPython's object layout,
//! which `PyLong_AsLongLongAndOverflow` does through a call and a loop.
//! Used only when the interpreter uses 30-bit digits (checked at import).

use pyo3::ffi;
use pyo3::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};

static ENABLED: AtomicBool = AtomicBool::new(false);

pub fn init(py: Python<'_>) -> PyResult<()> {
    let bits: u32 = py
        .import("sys")?
        .getattr("int_info")?
        .getattr("bits_per_digit")?
        .extract()?;
    ENABLED.store(bits == 30 && !cfg!(amber_portable), Ordering::Relaxed);
    Ok(())
}

/// The value of an exact `int` with at most two 30-bit digits, else `None`.
///
/// # Safety
/// `o` must be a live exact `int`.
#[inline(always)]
pub unsafe fn small_int(o: *mut ffi::PyObject) -> Option<i64> {
    if !ENABLED.load(Ordering::Relaxed) {
        return None;
    }
    // SAFETY: `o` is a live int (the caller's contract).
    let (sign, ndigits, digits) = unsafe { layout(o) };
    // SAFETY: called below only for `i < ndigits`: the int's own digits.
    let d = |i: usize| unsafe { *digits.add(i) } as i64;
    match ndigits {
        0 => Some(0),
        1 => Some(sign * d(0)),
        2 => Some(sign * (d(0) | (d(1) << 30))),
        _ => None,
    }
}

/// Python 3.12+: `long_value.lv_tag` holds the digit count (above 3 bits)
/// and the sign (low 2 bits: 0 positive, 1 zero, 2 negative).
///
/// # Safety
/// `o` must be a live exact `int`.
#[cfg(Py_3_12)]
#[inline(always)]
unsafe fn layout(o: *mut ffi::PyObject) -> (i64, usize, *const u32) {
    let base = o as *const u8;
    // SAFETY: a live int (the caller's contract) is a `PyObject` header
    // followed by `lv_tag` and its digits (`_PyLongValue`, 3.12 and later).
    let tag = unsafe { *(base.add(std::mem::size_of::<ffi::PyObject>()) as *const usize) };
    // SAFETY: as above; the digits follow the tag.
    let digits =
        unsafe { base.add(std::mem::size_of::<ffi::PyObject>() + std::mem::size_of::<usize>()) };
    (1 - (tag & 3) as i64, tag >> 3, digits as *const u32)
}

/// Python 3.10 and 3.11: `ob_size` is the signed digit count.
///
/// # Safety
/// `o` must be a live exact `int`.
#[cfg(not(Py_3_12))]
#[inline(always)]
unsafe fn layout(o: *mut ffi::PyObject) -> (i64, usize, *const u32) {
    // SAFETY: a live int (the caller's contract) is a `PyVarObject` whose
    // `ob_size` is its signed digit count, digits following (3.10, 3.11).
    let size = unsafe { (*(o as *mut ffi::PyVarObject)).ob_size };
    // SAFETY: as above.
    let digits = unsafe { (o as *const u8).add(std::mem::size_of::<ffi::PyVarObject>()) };
    (
        size.signum() as i64,
        size.unsigned_abs(),
        digits as *const u32,
    )
}

/// A new `int` from the two's-complement little-endian bytes `le`, or NULL
/// with an exception set (`PyLong_FromNativeBytes` from 3.13, CPython's
/// private `_PyLong_FromByteArray` before).
///
/// # Safety
/// The calling thread must be attached to the interpreter (hold the GIL).
pub unsafe fn from_le_bytes(le: &[u8]) -> *mut ffi::PyObject {
    #[cfg(Py_3_13)]
    // SAFETY: `le` is valid for its length, borrowed for the call; flag 1
    // is `Py_ASNATIVEBYTES_LITTLE_ENDIAN` (signed, as without
    // `Py_ASNATIVEBYTES_UNSIGNED_BUFFER`).
    return unsafe { ffi::PyLong_FromNativeBytes(le.as_ptr().cast(), le.len(), 1) };
    #[cfg(not(Py_3_13))]
    // SAFETY: `le` is valid for its length, borrowed for the call
    // (little-endian, signed).
    return unsafe { ffi::_PyLong_FromByteArray(le.as_ptr(), le.len(), 1, 1) };
}
