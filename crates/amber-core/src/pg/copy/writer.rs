//! The COPY BINARY writer: the header once, then rows whose fields are
//! written in place (an int32 length word reserved, the value appended by
//! its type's encoder, the word patched), then the int16 -1 trailer.
//!
//! The buffer can be shipped at any point, even inside a row: PostgreSQL
//! reads `COPY FROM STDIN` data as one byte stream, whatever the chunks. So
//! the caller writes rows and, when [`CopyWriter::len`] passes its chunk
//! size (say 1 MiB), hands [`CopyWriter::bytes`] to `copy.write()` and calls
//! [`CopyWriter::clear`], keeping memory bounded.
//!
//! Each row declares its field count and must get exactly that many fields:
//! a field past the count, a new row or the trailer before the count is
//! reached is a `FieldCount` error, so a short or long row is never written.

use crate::pg::copy::{SIGNATURE, TRAILER};
use crate::pg::error::{PgError, PgErrorKind, Res};
use crate::pg::types::{encode_value, PgType, Value};
use crate::pg::wire::{put_i16, put_i32, put_u32, write_len_prefixed, NULL_LEN};

#[derive(Debug, Clone, Copy)]
struct OpenRow {
    declared: u16,
    written: u16,
    /// Where the row starts in the buffer, until the buffer is shipped.
    start: Option<usize>,
}

/// Builds a COPY BINARY stream.
#[derive(Debug)]
pub struct CopyWriter {
    buf: Vec<u8>,
    /// Bytes already shipped (taken or cleared): the stream offset of
    /// `buf[0]`.
    shipped: u64,
    /// Rows completed.
    rows: u64,
    open: Option<OpenRow>,
    finished: bool,
}

impl Default for CopyWriter {
    fn default() -> Self {
        Self::new()
    }
}

impl CopyWriter {
    /// A writer whose buffer holds the header: signature, flags 0, no header
    /// extension.
    pub fn new() -> Self {
        Self::with_capacity(64 * 1024)
    }

    pub fn with_capacity(capacity: usize) -> Self {
        let mut buf = Vec::with_capacity(capacity.max(32));
        buf.extend_from_slice(SIGNATURE);
        put_u32(&mut buf, 0);
        put_i32(&mut buf, 0);
        CopyWriter {
            buf,
            shipped: 0,
            rows: 0,
            open: None,
            finished: false,
        }
    }

    fn offset(&self) -> u64 {
        self.shipped + self.buf.len() as u64
    }

    #[cold]
    fn error(&self, kind: PgErrorKind, msg: String) -> PgError {
        let mut e = PgError::new(kind, msg).at(self.offset()).row(self.rows);
        if let Some(r) = self.open {
            e = e.column(usize::from(r.written));
        }
        e
    }

    fn check_not_finished(&self) -> Res<()> {
        if self.finished {
            return Err(self.error(
                PgErrorKind::State,
                "the COPY stream is already finished (trailer written)".into(),
            ));
        }
        Ok(())
    }

    fn check_row_closed(&self, doing: &str) -> Res<()> {
        match self.open {
            Some(r) => Err(self.error(
                PgErrorKind::FieldCount,
                format!(
                    "{doing} before row {} got its {} fields: it has {}",
                    self.rows, r.declared, r.written
                ),
            )),
            None => Ok(()),
        }
    }

    /// Start a row of `nfields` fields (at most 32767: the count is an
    /// int16). A row of 0 fields is complete at once.
    pub fn begin_row(&mut self, nfields: u16) -> Res<()> {
        self.check_not_finished()?;
        self.check_row_closed("a new row")?;
        let Ok(n) = i16::try_from(nfields) else {
            return Err(self.error(
                PgErrorKind::OutOfRange,
                format!(
                    "a row of {nfields} fields: COPY allows at most {}",
                    i16::MAX
                ),
            ));
        };
        let start = self.buf.len();
        put_i16(&mut self.buf, n);
        self.open = Some(OpenRow {
            declared: nfields,
            written: 0,
            start: Some(start),
        });
        self.close_if_full();
        Ok(())
    }

    fn close_if_full(&mut self) {
        if let Some(r) = self.open {
            if r.written == r.declared {
                self.open = None;
                self.rows += 1;
            }
        }
    }

    fn check_field_allowed(&self) -> Res<()> {
        self.check_not_finished()?;
        if self.open.is_none() {
            return Err(self.error(
                PgErrorKind::FieldCount,
                "a field outside a row: begin_row first, and no more fields than it declares"
                    .into(),
            ));
        }
        Ok(())
    }

    fn field_done(&mut self) {
        if let Some(r) = &mut self.open {
            r.written += 1;
        }
        self.close_if_full();
    }

    /// Write the next field: `encode` appends its send format (one of the
    /// `pg::types` encoders), the length word is patched after. If `encode`
    /// fails, nothing of the field stays in the buffer and the row stays at
    /// this column: write the field again (or `null()`), or `discard_row()`.
    pub fn field<F>(&mut self, encode: F) -> Res<()>
    where
        F: FnOnce(&mut Vec<u8>) -> Res<()>,
    {
        self.check_field_allowed()?;
        let at = self.offset();
        if let Err(e) = write_len_prefixed(&mut self.buf, encode) {
            let column = self.open.map_or(0, |r| usize::from(r.written));
            return Err(e.rebase(at + 4).row(self.rows).column(column));
        }
        self.field_done();
        Ok(())
    }

    /// Write the next field from bytes already in the send format.
    pub fn field_bytes(&mut self, b: &[u8]) -> Res<()> {
        self.field(|out| {
            out.extend_from_slice(b);
            Ok(())
        })
    }

    /// Write the next field as `v` of type `ty`.
    pub fn value(&mut self, ty: PgType, v: &Value<'_>) -> Res<()> {
        self.field(|out| encode_value(out, ty, v))
    }

    /// Write the next field as NULL.
    pub fn null(&mut self) -> Res<()> {
        self.check_field_allowed()?;
        put_i32(&mut self.buf, NULL_LEN);
        self.field_done();
        Ok(())
    }

    /// Drop the row being written, if its start is still in the buffer
    /// (not yet shipped); otherwise a `State` error: the stream cannot be
    /// completed and the COPY must be aborted.
    pub fn discard_row(&mut self) -> Res<()> {
        match self.open {
            None => Ok(()),
            Some(OpenRow {
                start: Some(start), ..
            }) => {
                self.buf.truncate(start);
                self.open = None;
                Ok(())
            }
            Some(_) => Err(self.error(
                PgErrorKind::State,
                "the row's first bytes were already shipped: abort the COPY".into(),
            )),
        }
    }

    /// Write the trailer. Refused inside a row or when already written.
    pub fn finish(&mut self) -> Res<()> {
        self.check_not_finished()?;
        self.check_row_closed("the trailer")?;
        put_i16(&mut self.buf, TRAILER);
        self.finished = true;
        Ok(())
    }

    /// Whether the trailer has been written.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// Whether a row is open (declared fields still to write).
    pub fn in_row(&self) -> bool {
        self.open.is_some()
    }

    /// Rows completed.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Bytes in the buffer, not yet shipped.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// Bytes written so far over the whole stream, shipped or not.
    pub fn stream_len(&self) -> u64 {
        self.offset()
    }

    /// The buffered bytes, to ship; then call [`CopyWriter::clear`].
    pub fn bytes(&self) -> &[u8] {
        &self.buf
    }

    /// Forget the buffered bytes (after shipping them), keeping the capacity.
    pub fn clear(&mut self) {
        self.shipped += self.buf.len() as u64;
        self.buf.clear();
        if let Some(r) = &mut self.open {
            r.start = None;
        }
    }

    /// Take the buffered bytes, leaving an empty buffer of the same capacity.
    pub fn take(&mut self) -> Vec<u8> {
        let cap = self.buf.capacity();
        let out = std::mem::replace(&mut self.buf, Vec::with_capacity(cap));
        self.shipped += out.len() as u64;
        if let Some(r) = &mut self.open {
            r.start = None;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pg::types::numbers::encode_int4;
    use crate::pg::types::text::encode_text;

    #[test]
    fn header_rows_trailer() {
        let mut w = CopyWriter::new();
        w.begin_row(2).unwrap();
        w.field(|o| {
            encode_int4(o, 7);
            Ok(())
        })
        .unwrap();
        w.null().unwrap();
        w.finish().unwrap();
        let mut want = b"PGCOPY\n\xff\r\n\0".to_vec();
        want.extend([0, 0, 0, 0, 0, 0, 0, 0]);
        want.extend([0, 2, 0, 0, 0, 4, 0, 0, 0, 7, 0xff, 0xff, 0xff, 0xff]);
        want.extend([0xff, 0xff]);
        assert_eq!(w.bytes(), &want[..]);
        assert_eq!(w.rows(), 1);
        assert!(w.is_finished());
    }

    #[test]
    fn field_counts_are_enforced() {
        let mut w = CopyWriter::new();
        assert_eq!(w.null().unwrap_err().kind, PgErrorKind::FieldCount);
        w.begin_row(2).unwrap();
        w.null().unwrap();
        let e = w.begin_row(1).unwrap_err();
        assert_eq!(e.kind, PgErrorKind::FieldCount);
        assert_eq!((e.row, e.column), (Some(0), Some(1)));
        assert!(w.finish().is_err());
        w.null().unwrap();
        let e = w.null().unwrap_err();
        assert_eq!(e.kind, PgErrorKind::FieldCount);
        w.begin_row(0).unwrap();
        assert_eq!(w.rows(), 2);
        assert!(w.begin_row(40_000).is_err());
        w.finish().unwrap();
        assert_eq!(w.begin_row(1).unwrap_err().kind, PgErrorKind::State);
        assert!(w.finish().is_err());
    }

    #[test]
    fn failed_field_leaves_nothing() {
        let mut w = CopyWriter::new();
        w.begin_row(1).unwrap();
        let before = w.len();
        let e = w.field(|o| encode_text(o, "a\0")).unwrap_err();
        assert_eq!(e.kind, PgErrorKind::InvalidValue);
        assert_eq!(
            (e.row, e.column, e.offset),
            (Some(0), Some(0), Some(before as u64 + 5))
        );
        assert_eq!(w.len(), before);
        w.field(|o| encode_text(o, "a")).unwrap();
        assert!(!w.in_row());
    }

    #[test]
    fn discard_and_ship() {
        let mut w = CopyWriter::new();
        let header = w.take();
        assert_eq!(header.len(), 19);
        w.begin_row(2).unwrap();
        w.null().unwrap();
        w.discard_row().unwrap();
        assert!(w.is_empty() && !w.in_row());
        w.begin_row(2).unwrap();
        w.clear();
        assert_eq!(w.discard_row().unwrap_err().kind, PgErrorKind::State);
        w.null().unwrap();
        assert_eq!(w.stream_len(), 19 + 2 + 4);
    }
}
