//! The atoms: str (deduplicated through the string table, surrogates kept),
//! int (small ints inline, big ones as two's complement), and bytes and
//! bytearray (in band, or out of band through `buffer_callback`).
//!
//! Safety, for every function here: the GIL is held and each `o` is a live
//! object of the type the function names, which the caller keeps alive for
//! the call (`Encoder::item`'s contract).

use amber_core::codec::writer as w;
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;

use super::strings::{self, Found};
use super::{py_fail, Encoder, OrFail, R};
use crate::ffi::buffer::{bytes_like_slice, bytes_slice};
use crate::ffi::obj::Obj;

impl<'py> Encoder<'py> {
    /// A str, deduplicated through the table when at most `dedup_max` bytes.
    #[inline(always)]
    pub(crate) unsafe fn str(&mut self, o: *mut ffi::PyObject, dedup_max: usize, key: bool) -> R {
        // SAFETY: `o` is a live str (this function's contract).
        unsafe { self.str_in(o, dedup_max, key, None) }
    }

    /// A str value in shape column `column`, if any: content lookups are
    /// made while they pay for themselves in that column.
    #[inline(always)]
    pub(super) unsafe fn str_in(
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
        // SAFETY: `o` is a live str; its UTF-8 lives as long as it does, and
        // no Python code runs before the bytes are written.
        let Some(utf8) = (unsafe { strings::utf8(o) }) else {
            // SAFETY: as above.
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
    pub(super) unsafe fn str_surrogates(&mut self, o: *mut ffi::PyObject) -> R {
        // Not valid UTF-8: lone surrogates. Encode them as 3-byte sequences.
        // SAFETY: `o` is a live str; the call returns a new reference (or
        // NULL with an exception set), which `Obj` owns.
        let b = unsafe {
            Obj::from_owned(ffi::PyUnicode_AsEncodedString(
                o,
                c"utf-8".as_ptr(),
                c"surrogatepass".as_ptr(),
            ))
        };
        let Some(b) = b else { return py_fail(self.py) };
        // SAFETY: `b` is a live bytes object, held while `raw` is used.
        let raw = unsafe { bytes_slice(b.ptr()) };
        w::write_str_surrogates(&mut self.out, raw);
        Ok(())
    }

    #[inline(always)]
    pub(super) unsafe fn int(&mut self, o: *mut ffi::PyObject) -> R {
        // SAFETY: `o` is a live exact int (this function's contract).
        if let Some(v) = unsafe { crate::ffi::long::small_int(o) } {
            w::write_int(&mut self.out, v);
            return Ok(());
        }
        let mut overflow = 0;
        // SAFETY: as above; `overflow` is a valid out-pointer.
        let v = unsafe { ffi::PyLong_AsLongLongAndOverflow(o, &mut overflow) };
        if overflow == 0 {
            // SAFETY: the GIL is held.
            if v == -1 && unsafe { !ffi::PyErr_Occurred().is_null() } {
                return py_fail(self.py);
            }
            w::write_int(&mut self.out, v);
            Ok(())
        } else {
            // SAFETY: as above.
            unsafe { self.bigint(o) }
        }
    }

    #[cold]
    pub(super) unsafe fn bigint(&mut self, o: *mut ffi::PyObject) -> R {
        let py = self.py;
        // SAFETY: `o` is a live int; the Bound takes a reference of its own.
        let n = unsafe { Bound::from_borrowed_ptr(py, o) };
        // bit_length // 8 + 1 bytes always leave room for the sign bit.
        let bits: u64 = n
            .call_method0(intern!(py, "bit_length"))
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

    /// Bytes and bytearrays, in band or out of band.
    pub(crate) unsafe fn bytes_like(&mut self, o: *mut ffi::PyObject, bytearray: bool) -> R {
        // SAFETY: `o` is a live bytes (or bytearray, as `bytearray` says).
        let n = unsafe { bytes_like_slice(o, bytearray) }.len();
        // Only the buffer callback runs Python code here, which may drop the
        // container's reference: `o` is held across it (and the read after).
        let _keep = (n >= self.opts.oob_threshold
            && self.opts.buffer_callback.is_some()
            && self.scratch == 0)
            // SAFETY: `o` is live; the new reference keeps it so.
            .then(|| unsafe { Obj::from_borrowed(o) });
        if _keep.is_some() {
            // SAFETY: `o` is held by `_keep`.
            if let Some(i) = unsafe { self.out_of_band(o) }? {
                w::write_bytes_oob(&mut self.out, i, bytearray);
                return Ok(());
            }
        }
        // Read now: the callback (Python code) may have resized a bytearray.
        w::write_bytes(
            &mut self.out,
            // SAFETY: `o` is live (held by the caller, or by `_keep` when the
            // callback ran); no Python code runs while the slice is written.
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
        // SAFETY: the caller's `o` is live; the Bound takes a reference.
        let obj = unsafe { Bound::from_borrowed_ptr(py, o) };
        let pb = crate::typeref::pickle_buffer(py)
            .or_fail()?
            .call1((obj,))
            .or_fail()?;
        // SAFETY: the options own the callback for the whole call.
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

/// Drop redundant sign bytes from little-endian two's complement.
fn shortest_twos_complement(le: &[u8], negative: bool) -> &[u8] {
    let mut n = le.len();
    let fill = if negative { 0xFF } else { 0x00 };
    while n > 1 && le[n - 1] == fill && ((le[n - 2] & 0x80 != 0) == negative) {
        n -= 1;
    }
    &le[..n]
}
