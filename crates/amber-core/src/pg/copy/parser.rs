//! The COPY BINARY parser: sans-I/O and incremental. It is fed bytes as they
//! arrive, in chunks of any size, and yields complete rows whose fields
//! borrow its buffer, with each field's byte offset in the whole stream.
//!
//! It keeps only the bytes of the row in progress (consumed bytes are
//! dropped on the next [`CopyParser::feed`]) and never trusts a length
//! before the bytes are there: a field length larger than what has arrived
//! means "need more" (see [`CopyParser::need`]), never an allocation. The
//! header extension is skipped as it streams past, without being buffered.
//!
//! Errors (sticky: once one is found, every later call returns it):
//! `Malformed` for a bad signature, a negative extension length, a field
//! count other than -1 below zero, a field count that differs from the
//! first row's (or the one the caller expects), a field length below -1,
//! or data after the trailer; `Unsupported` for the OID flag or an unknown
//! critical flag; `Truncated`, from [`CopyParser::finish`], for input that
//! ends before the trailer.
//!
//! ```text
//! let mut p = CopyParser::new();
//! for chunk in chunks {
//!     p.feed(chunk)?;
//!     while let Some(row) = p.next_row()? {
//!         for field in row.fields() { /* field.value: Option<&[u8]> */ }
//!     }
//! }
//! p.finish()?; // the trailer was seen
//! ```

use crate::pg::copy::{FLAGS_CRITICAL, FLAG_OIDS, HEADER_LEN, SIGNATURE, TRAILER};
use crate::pg::error::{PgError, Res};
use crate::pg::types::{decode_value, PgType, Value};
use crate::pg::wire::NULL_LEN;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Header,
    /// Header extension bytes still to skip.
    SkipExt(u64),
    Rows,
    Done,
}

/// How far the scan of the row at `pos` got before the input ran out, so
/// that feeding more does not rescan its fields.
#[derive(Debug, Clone, Copy, Default)]
struct Scan {
    /// Fields whose bytes are all present.
    fields: usize,
    /// Bytes of the row those fields (and the count word) take.
    len: usize,
}

/// Incremental reader of a COPY BINARY stream.
#[derive(Debug)]
pub struct CopyParser {
    buf: Vec<u8>,
    /// Next unread byte of `buf`.
    pos: usize,
    /// Stream offset of `buf[0]`.
    base: u64,
    state: State,
    /// Field count every row must have: given, or the first row's.
    fields: Option<u16>,
    rows: u64,
    scan: Scan,
    /// Bytes missing for the step that stopped, beyond those buffered.
    need: u64,
    flags: u32,
    failed: Option<PgError>,
}

impl Default for CopyParser {
    fn default() -> Self {
        Self::new()
    }
}

impl CopyParser {
    pub fn new() -> Self {
        CopyParser {
            buf: Vec::new(),
            pos: 0,
            base: 0,
            state: State::Header,
            fields: None,
            rows: 0,
            scan: Scan::default(),
            need: HEADER_LEN as u64,
            flags: 0,
            failed: None,
        }
    }

    /// A parser that requires every row to have `n` fields.
    pub fn expecting_fields(n: u16) -> Self {
        CopyParser {
            fields: Some(n),
            ..Self::new()
        }
    }

    /// The field count rows have: the one expected, or the first row's.
    pub fn field_count(&self) -> Option<u16> {
        self.fields
    }

    /// Rows returned so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// The header's flags word (0 until the header is read).
    pub fn header_flags(&self) -> u32 {
        self.flags
    }

    /// Whether the trailer has been read.
    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// Stream offset of the next byte not yet parsed.
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// At least how many more bytes must arrive before the next row (or the
    /// header, or the trailer) can be parsed; 0 when done.
    pub fn need(&self) -> u64 {
        self.need
    }

    /// Bytes held for the row in progress.
    pub fn buffered(&self) -> usize {
        self.buf.len() - self.pos
    }

    fn fail(&mut self, e: PgError) -> PgError {
        self.failed = Some(e.clone());
        e
    }

    /// Add bytes that arrived. Refused once an error was found, and after
    /// the trailer unless `data` is empty.
    pub fn feed(&mut self, mut data: &[u8]) -> Res<()> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        if self.state == State::Done && !data.is_empty() {
            let e = PgError::malformed(format!(
                "{} bytes of data after the COPY trailer",
                data.len()
            ))
            .at(self.offset());
            return Err(self.fail(e));
        }
        if self.pos > 0 {
            self.buf.drain(..self.pos);
            self.base += self.pos as u64;
            self.pos = 0;
        }
        if let State::SkipExt(left) = self.state {
            if self.buf.is_empty() {
                let k = left.min(data.len() as u64) as usize;
                data = &data[k..];
                self.base += k as u64;
                self.set_skip(left - k as u64);
            }
        }
        self.buf.extend_from_slice(data);
        self.need = self.need.saturating_sub(data.len() as u64);
        Ok(())
    }

    fn set_skip(&mut self, left: u64) {
        if left == 0 {
            self.state = State::Rows;
            self.need = 2;
        } else {
            self.state = State::SkipExt(left);
            self.need = left + 2;
        }
    }

    fn read_header(&mut self) -> Res<bool> {
        let avail = &self.buf[self.pos..];
        let n = avail.len().min(SIGNATURE.len());
        if let Some(i) = (0..n).find(|&i| avail[i] != SIGNATURE[i]) {
            return Err(PgError::malformed(
                "not a COPY BINARY stream: the signature PGCOPY\\n\\xff\\r\\n\\0 does not match",
            )
            .at(self.offset() + i as u64));
        }
        let Some(h) = avail.get(..HEADER_LEN) else {
            self.need = (HEADER_LEN - avail.len()) as u64;
            return Ok(false);
        };
        let mut word = [0u8; 4];
        word.copy_from_slice(&h[11..15]);
        let flags = u32::from_be_bytes(word);
        word.copy_from_slice(&h[15..19]);
        let ext = i32::from_be_bytes(word);
        let at = self.offset();
        if flags & FLAG_OIDS != 0 {
            return Err(PgError::unsupported(
                "COPY stream with OIDs (header flag bit 16): amber does not read them",
            )
            .at(at + 11));
        }
        if flags & FLAGS_CRITICAL != 0 {
            return Err(PgError::unsupported(format!(
                "COPY header has unknown critical flags {:#010x}",
                flags & FLAGS_CRITICAL
            ))
            .at(at + 11));
        }
        if ext < 0 {
            return Err(PgError::malformed(format!(
                "COPY header extension length {ext} is negative"
            ))
            .at(at + 15));
        }
        self.flags = flags;
        self.pos += HEADER_LEN;
        self.set_skip(ext as u64);
        Ok(true)
    }

    fn skip_ext(&mut self, left: u64) {
        let k = left.min(self.buffered() as u64) as usize;
        self.pos += k;
        self.set_skip(left - k as u64);
    }

    /// The next complete row, or `None` when more input is needed (or the
    /// trailer was read: see [`CopyParser::is_done`]).
    pub fn next_row(&mut self) -> Res<Option<Row<'_>>> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        loop {
            match self.state {
                State::Header => match self.read_header() {
                    Ok(true) => continue,
                    Ok(false) => return Ok(None),
                    Err(e) => return Err(self.fail(e)),
                },
                State::SkipExt(left) => {
                    self.skip_ext(left);
                    if let State::SkipExt(_) = self.state {
                        return Ok(None);
                    }
                }
                State::Done => {
                    if self.buffered() > 0 {
                        let e = PgError::malformed(format!(
                            "{} bytes of data after the COPY trailer",
                            self.buffered()
                        ))
                        .at(self.offset());
                        return Err(self.fail(e));
                    }
                    return Ok(None);
                }
                State::Rows => break,
            }
        }
        match self.scan_row() {
            Err(e) => Err(self.fail(e)),
            Ok(None) => Ok(None),
            Ok(Some((len, nfields))) => {
                let start = self.pos;
                self.pos += len;
                self.scan = Scan::default();
                self.need = 2;
                let index = self.rows;
                self.rows += 1;
                Ok(Some(Row {
                    data: &self.buf[start + 2..start + len],
                    offset: self.base + start as u64,
                    index,
                    nfields,
                }))
            }
        }
    }

    /// Scan the row at `pos`: `Some((length, fields))` when all of it is
    /// buffered, `None` when more is needed (or the trailer was read).
    fn scan_row(&mut self) -> Res<Option<(usize, u16)>> {
        let at = self.offset();
        let avail = &self.buf[self.pos..];
        let Some(count) = avail.get(..2) else {
            self.need = 2 - avail.len() as u64;
            return Ok(None);
        };
        let count = i16::from_be_bytes([count[0], count[1]]);
        if count == TRAILER {
            self.pos += 2;
            self.state = State::Done;
            self.need = 0;
            if self.buffered() > 0 {
                return Err(PgError::malformed(format!(
                    "{} bytes of data after the COPY trailer",
                    self.buffered()
                ))
                .at(self.offset()));
            }
            return Ok(None);
        }
        let row = self.rows;
        if count < 0 {
            return Err(
                PgError::malformed(format!("row field count {count} is negative"))
                    .at(at)
                    .row(row),
            );
        }
        let nfields = count as u16;
        match self.fields {
            Some(want) if want != nfields => {
                return Err(PgError::malformed(format!(
                    "row has {nfields} fields, the stream's rows have {want}"
                ))
                .at(at)
                .row(row));
            }
            _ => self.fields = Some(nfields),
        }
        let mut scan = self.scan;
        if scan.len == 0 {
            scan.len = 2;
        }
        while scan.fields < usize::from(nfields) {
            let Some(word) = avail.get(scan.len..scan.len + 4) else {
                self.need = (scan.len + 4 - avail.len()) as u64;
                self.scan = scan;
                return Ok(None);
            };
            let len = i32::from_be_bytes([word[0], word[1], word[2], word[3]]);
            let body = match len {
                NULL_LEN => 0,
                n if n < 0 => {
                    return Err(PgError::malformed(format!(
                        "field length {n} is negative and not -1 (NULL)"
                    ))
                    .at(at + scan.len as u64)
                    .row(row)
                    .column(scan.fields));
                }
                n => n as u64,
            };
            let end = scan.len as u64 + 4 + body;
            if end > avail.len() as u64 {
                self.need = end - avail.len() as u64;
                self.scan = scan;
                return Ok(None);
            }
            scan.len = end as usize;
            scan.fields += 1;
        }
        Ok(Some((scan.len, nfields)))
    }

    /// End of input: `Ok(rows)` if the trailer was read, else a `Truncated`
    /// error at the offset where the unfinished part starts.
    pub fn finish(&self) -> Res<u64> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let at = self.offset();
        let e = match self.state {
            State::Done => return Ok(self.rows),
            State::Header => PgError::truncated(format!(
                "COPY stream ends inside its {HEADER_LEN}-byte header, after {} bytes",
                self.buffered()
            ))
            .at(at),
            State::SkipExt(left) => PgError::truncated(format!(
                "COPY stream ends inside its header extension, {left} bytes short"
            ))
            .at(at),
            State::Rows if self.buffered() == 0 => PgError::truncated(format!(
                "COPY stream ends after {} rows without its trailer",
                self.rows
            ))
            .at(at),
            State::Rows => PgError::truncated(format!(
                "COPY stream ends inside a row: {} bytes of it arrived, at least {} more needed",
                self.buffered(),
                self.need.max(1)
            ))
            .at(at)
            .row(self.rows),
        };
        Err(e)
    }
}

/// One complete row; its fields borrow the parser's buffer.
#[derive(Debug, Clone, Copy)]
pub struct Row<'a> {
    /// The fields' bytes (after the field-count word).
    data: &'a [u8],
    offset: u64,
    index: u64,
    nfields: u16,
}

impl<'a> Row<'a> {
    /// 0-based index of the row in the stream.
    pub fn index(&self) -> u64 {
        self.index
    }

    /// Stream offset of the row's field-count word.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Number of fields.
    pub fn len(&self) -> usize {
        usize::from(self.nfields)
    }

    pub fn is_empty(&self) -> bool {
        self.nfields == 0
    }

    pub fn fields(&self) -> Fields<'a> {
        Fields {
            data: self.data,
            pos: 0,
            base: self.offset + 2,
            row: self.index,
            column: 0,
            left: usize::from(self.nfields),
        }
    }
}

/// The fields of a row, in order.
#[derive(Debug, Clone)]
pub struct Fields<'a> {
    data: &'a [u8],
    pos: usize,
    base: u64,
    row: u64,
    column: usize,
    left: usize,
}

impl<'a> Iterator for Fields<'a> {
    type Item = Field<'a>;

    fn next(&mut self) -> Option<Field<'a>> {
        if self.left == 0 {
            return None;
        }
        // The parser checked every length before returning the row; the
        // `get`s only keep this panic-free.
        let word = self.data.get(self.pos..self.pos + 4)?;
        let len = i32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        let start = self.pos + 4;
        let value = if len == NULL_LEN {
            None
        } else {
            Some(self.data.get(start..start + len.max(0) as usize)?)
        };
        let field = Field {
            value,
            offset: self.base + self.pos as u64,
            row: self.row,
            column: self.column,
        };
        self.pos = start + value.map_or(0, <[u8]>::len);
        self.column += 1;
        self.left -= 1;
        Some(field)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for Fields<'_> {}

/// One field of a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field<'a> {
    /// The value's bytes in its type's send format; `None` for NULL.
    pub value: Option<&'a [u8]>,
    /// Stream offset of the field's int32 length word (the value starts 4
    /// bytes later).
    pub offset: u64,
    pub row: u64,
    pub column: usize,
}

impl<'a> Field<'a> {
    pub fn is_null(&self) -> bool {
        self.value.is_none()
    }

    /// Decode the value as `ty`: `None` for NULL. An error carries the
    /// stream offset, row and column.
    pub fn decode(&self, ty: PgType) -> Res<Option<Value<'a>>> {
        let Some(b) = self.value else {
            return Ok(None);
        };
        decode_value(ty, b)
            .map(Some)
            .map_err(|e| e.rebase(self.offset + 4).row(self.row).column(self.column))
    }
}
