//! What an Arrow IPC file (the random-access format) declares, checked
//! before a reader such as pyarrow allocates anything for it: amber reads
//! only uncompressed bodies (a compressed body's buffers declare their own
//! uncompressed lengths, which a reader allocates as declared), and every
//! field name, nested ones included, must be UTF-8.
//!
//! The file's footer (a flatbuffer) lists the schema and, for each
//! dictionary and record batch, where its message lies; each message (a
//! flatbuffer too) says whether its body is compressed. Only the fields
//! needed are read, every offset checked against the bytes that are there.

use super::error::{ArchiveError, ArchiveErrorKind, Res};

const MAGIC: &[u8] = b"ARROW1";
/// Nesting of struct, list and map fields deeper than this is refused.
const MAX_DEPTH: usize = 64;
/// The header types of a message (Arrow's `MessageHeader` union).
const HEADER_DICTIONARY_BATCH: u8 = 2;
const HEADER_RECORD_BATCH: u8 = 3;

fn bad(msg: impl Into<String>) -> ArchiveError {
    ArchiveError::new(ArchiveErrorKind::Malformed, msg)
}

/// A flatbuffer: tables, vectors and strings located by checked offsets.
struct Fb<'a> {
    buf: &'a [u8],
}

impl<'a> Fb<'a> {
    fn bytes(&self, at: usize, n: usize) -> Res<&'a [u8]> {
        at.checked_add(n)
            .and_then(|end| self.buf.get(at..end))
            .ok_or_else(|| bad(format!("Arrow metadata: offset {at} out of range")))
    }
    fn u8(&self, at: usize) -> Res<u8> {
        Ok(self.bytes(at, 1)?[0])
    }
    fn u16(&self, at: usize) -> Res<u16> {
        let b = self.bytes(at, 2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
    fn u32(&self, at: usize) -> Res<u32> {
        let b = self.bytes(at, 4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn i64(&self, at: usize) -> Res<i64> {
        let b = self.bytes(at, 8)?;
        Ok(i64::from_le_bytes(b.try_into().expect("eight bytes")))
    }
    /// The position an offset at `at` points to.
    fn deref(&self, at: usize) -> Res<usize> {
        let off = self.u32(at)? as usize;
        at.checked_add(off)
            .filter(|&p| p < self.buf.len())
            .ok_or_else(|| bad("Arrow metadata: offset out of range"))
    }
    fn root(&self) -> Res<usize> {
        self.deref(0)
    }
    /// Where field `i` of the table at `t` is, if it is present.
    fn field(&self, t: usize, i: usize) -> Res<Option<usize>> {
        let soff = self.u32(t)? as i32 as i64;
        let vt = (t as i64)
            .checked_sub(soff)
            .filter(|&v| v >= 0)
            .ok_or_else(|| bad("Arrow metadata: vtable out of range"))? as usize;
        let vt_len = self.u16(vt)? as usize;
        let slot = 4 + 2 * i;
        if slot + 2 > vt_len {
            return Ok(None);
        }
        let off = self.u16(vt + slot)? as usize;
        Ok((off != 0).then_some(t + off))
    }
    /// The table field `i` of the table at `t` points to, if present.
    fn table(&self, t: usize, i: usize) -> Res<Option<usize>> {
        self.field(t, i)?.map(|p| self.deref(p)).transpose()
    }
    /// `(start, len)` of the vector field `i` of the table at `t` points to.
    fn vector(&self, t: usize, i: usize) -> Res<Option<(usize, usize)>> {
        let Some(p) = self.field(t, i)? else {
            return Ok(None);
        };
        let v = self.deref(p)?;
        let len = self.u32(v)? as usize;
        Ok(Some((v + 4, len)))
    }
}

/// Check an Arrow IPC file: refused (kind `unsupported`) when a record or
/// dictionary batch has a compressed body, and (kind `malformed`) when a
/// field name is not UTF-8 or the metadata is out of range. Nothing here
/// allocates what the file declares.
pub fn check_ipc_file(data: &[u8]) -> Res<()> {
    let n = data.len();
    if n < 2 * MAGIC.len() + 4 || !data.starts_with(MAGIC) || !data.ends_with(MAGIC) {
        return Err(bad("not an Arrow IPC file (no ARROW1 magic at both ends)"));
    }
    let len_at = n - MAGIC.len() - 4;
    let footer_len = i32::from_le_bytes(data[len_at..len_at + 4].try_into().expect("four bytes"));
    let footer_start = usize::try_from(footer_len)
        .ok()
        .and_then(|l| len_at.checked_sub(l))
        .filter(|&s| s >= 8)
        .ok_or_else(|| bad(format!("Arrow footer length {footer_len} out of range")))?;
    let fb = Fb {
        buf: &data[footer_start..len_at],
    };
    let footer = fb.root()?;
    if let Some(schema) = fb.table(footer, 1)? {
        if let Some((start, count)) = fb.vector(schema, 1)? {
            check_fields(&fb, start, count, 0)?;
        }
    }
    for field in [2, 3] {
        let Some((start, count)) = fb.vector(footer, field)? else {
            continue;
        };
        for k in 0..count {
            let block = start + k * 24;
            let offset = fb.i64(block)?;
            let meta_len = fb.u32(block + 8)? as i32;
            check_message(data, offset, meta_len)?;
        }
    }
    Ok(())
}

fn check_fields(fb: &Fb<'_>, start: usize, count: usize, depth: usize) -> Res<()> {
    if depth > MAX_DEPTH {
        return Err(bad(format!("Arrow fields nested deeper than {MAX_DEPTH}")));
    }
    // Each element is a 4-byte offset: a count beyond the bytes is refused
    // before the loop runs.
    fb.bytes(
        start,
        count
            .checked_mul(4)
            .ok_or_else(|| bad("Arrow field count"))?,
    )?;
    for k in 0..count {
        let field = fb.deref(start + 4 * k)?;
        if let Some(p) = fb.field(field, 0)? {
            let s = fb.deref(p)?;
            let len = fb.u32(s)? as usize;
            let name = fb.bytes(s + 4, len)?;
            if std::str::from_utf8(name).is_err() {
                return Err(bad(format!(
                    "an Arrow field name is not UTF-8: {}",
                    String::from_utf8_lossy(name)
                )));
            }
        }
        if let Some((children, n)) = fb.vector(field, 5)? {
            check_fields(fb, children, n, depth + 1)?;
        }
    }
    Ok(())
}

/// The message a footer block points to: an optional 0xFFFFFFFF
/// continuation, the metadata length, then the `Message` flatbuffer.
fn check_message(data: &[u8], offset: i64, meta_len: i32) -> Res<()> {
    let range = usize::try_from(offset)
        .ok()
        .zip(usize::try_from(meta_len).ok())
        .and_then(|(o, l)| Some((o, o.checked_add(l)?)))
        .filter(|&(_, end)| end <= data.len())
        .ok_or_else(|| bad(format!("an Arrow block at {offset} runs out of the file")))?;
    let block = &data[range.0..range.1];
    let skip = if block.starts_with(&[0xFF; 4]) { 8 } else { 4 };
    let fb = Fb {
        buf: block.get(skip..).unwrap_or(&[]),
    };
    let message = fb.root()?;
    let Some(kind_at) = fb.field(message, 1)? else {
        return Ok(());
    };
    let kind = fb.u8(kind_at)?;
    let batch = match kind {
        HEADER_RECORD_BATCH => fb.table(message, 2)?,
        HEADER_DICTIONARY_BATCH => match fb.table(message, 2)? {
            Some(dict) => fb.table(dict, 1)?,
            None => None,
        },
        _ => None,
    };
    if let Some(batch) = batch {
        if fb.field(batch, 3)?.is_some() {
            return Err(ArchiveError::new(
                ArchiveErrorKind::Unsupported,
                "an Arrow IPC file with compressed buffers (amber writes and reads \
                 uncompressed Arrow files, compressed as a whole zip entry)",
            )
            .at(offset as u64));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_and_foreign_bytes_are_malformed_not_panics() {
        for data in [
            &b""[..],
            b"ARROW1",
            b"ARROW1\0\0ARROW1",
            b"ARROW1\0\0\xff\xff\xff\x7fARROW1",
            b"ARROW1\0\0\x04\0\0\0\x04\0\0\0ARROW1",
        ] {
            assert!(check_ipc_file(data).is_err());
        }
    }

    #[test]
    fn random_footers_never_panic() {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        for len in 0..400usize {
            let mut data = b"ARROW1\0\0".to_vec();
            for _ in 0..len {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                data.push(state as u8);
            }
            data.extend_from_slice(&(len as i32).to_le_bytes());
            data.extend_from_slice(MAGIC);
            let _ = check_ipc_file(&data);
        }
    }
}
