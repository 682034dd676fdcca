//! The atoms: str (deduplicated through the string table, surrogates kept),
//! int (small ints inline, big ones as two's complement), and bytes and
//! bytearray (in band, or out of band through `buffer_callback`).
//!
//! str and int run no Python code, so their callers may lend them an item
//! under a `NoCode` token; big ints and the buffer callback do run some, on
//! objects held for the call.

use amber_core::codec::writer as w;
use pyo3::intern;
use pyo3::prelude::*;

use super::strings::Found;
use super::{fail, py_fail, Encoder, OrFail, R};
use crate::errors::EncodeKind;
use crate::ffi::borrowed::{Borrowed, Int, NoCode, Str, I64};

impl<'py> Encoder<'py> {
    /// A str, deduplicated through the table when at most `dedup_max` bytes.
    /// Runs no Python code.
    #[inline(always)]
    pub(crate) fn str(&mut self, s: Str<'_>, dedup_max: usize, key: bool) -> R {
        self.str_in(s, dedup_max, key, None)
    }

    /// A str value in shape column `column`, if any: content lookups are
    /// made while they pay for themselves in that column.
    #[inline(always)]
    pub(super) fn str_in(
        &mut self,
        s: Str<'_>,
        dedup_max: usize,
        key: bool,
        column: Option<usize>,
    ) -> R {
        // The same object again needs no look at its text.
        if let Some(i) = self.strings.by_address(s.any().ptr()) {
            w::write_str_ref(&mut self.out, i);
            return Ok(());
        }
        let Some(utf8) = s.utf8() else {
            return self.str_surrogates(s);
        };
        if utf8.len() <= dedup_max && column.is_none_or(|c| self.shapes.column_on(c)) {
            let found = self.strings.by_content(s, utf8, key);
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

    /// Not valid UTF-8: lone surrogates, encoded as 3-byte sequences (the
    /// bytes object made for them is not tracked by the garbage collector,
    /// so this too runs no Python code).
    #[cold]
    pub(super) fn str_surrogates(&mut self, s: Str<'_>) -> R {
        let Some(b) = s.surrogatepass() else {
            return py_fail(self.py);
        };
        let raw = b.borrowed().exact_bytes().unwrap_or_default();
        w::write_str_surrogates(&mut self.out, raw);
        Ok(())
    }

    /// An int of at most 64 bits; `None` for a bigger one (see `bigint`).
    /// Runs no Python code.
    #[inline(always)]
    pub(super) fn int(&mut self, i: Int<'_>) -> Option<R> {
        if let Some(v) = i.small() {
            w::write_int(&mut self.out, v);
            return Some(Ok(()));
        }
        match i.to_i64() {
            I64::Fits(v) => {
                w::write_int(&mut self.out, v);
                Some(Ok(()))
            }
            I64::Error => Some(py_fail(self.py)),
            I64::Overflow => None,
        }
    }

    /// An int beyond 64 bits, as two's complement; it calls int methods,
    /// so `o` is held for the call whatever they run.
    #[cold]
    pub(super) fn bigint(&mut self, o: Borrowed<'_>) -> R {
        let py = self.py;
        let n = o.to_bound(py);
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

    /// Bytes and bytearrays (exact types), in band or out of band.
    pub(crate) fn bytes_like(&mut self, o: Borrowed<'_>) -> R {
        let (n, bytearray) = {
            // SAFETY: nothing in this block runs Python code.
            let quiet = unsafe { NoCode::new() };
            match (o.exact_bytes(), o.exact_bytearray(&quiet)) {
                (Some(b), _) => (b.len(), false),
                (None, Some(b)) => (b.len(), true),
                (None, None) => return fail(EncodeKind::Unsupported, "not bytes or bytearray"),
            }
        };
        // Only the buffer callback runs Python code here; `o` is held
        // across it (the type's contract).
        if n >= self.opts.oob_threshold && self.opts.buffer_callback.is_some() && self.scratch == 0
        {
            if let Some(i) = self.out_of_band(o)? {
                w::write_bytes_oob(&mut self.out, i, bytearray);
                return Ok(());
            }
        }
        // Read now: the callback (Python code) may have resized a bytearray.
        // SAFETY: writing the bytes runs no Python code.
        let quiet = unsafe { NoCode::new() };
        let data = o
            .exact_bytes()
            .or(o.exact_bytearray(&quiet))
            .unwrap_or_default();
        w::write_bytes(&mut self.out, data, bytearray);
        Ok(())
    }

    /// Offer `o` (anything with the buffer protocol) to the buffer callback;
    /// `Some(index)` if it went out of band.
    pub(crate) fn out_of_band(&mut self, o: Borrowed<'_>) -> R<Option<usize>> {
        let Some(cb) = &self.opts.buffer_callback else {
            return Ok(None);
        };
        let py = self.py;
        let pb = crate::typeref::pickle_buffer(py)
            .or_fail()?
            .call1((o.to_bound(py),))
            .or_fail()?;
        let keep_in_band = cb.borrowed().to_bound(py).call1((pb,)).or_fail()?;
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
