//! The zip writer, sans I/O: it hands back each local header for the caller
//! to write before the entry's data, then the central directory and end
//! records. Output depends only on what it is given (fixed times and
//! attributes, entries in the order written), so equal content makes equal
//! files. Stored data can be aligned: the local header's extra field is
//! padded so the data starts at a multiple of the alignment in the file.

use std::collections::HashSet;

use super::names;
use super::{
    CentralEntry, Method, CENTRAL_SIG, DOS_DATE, DOS_TIME, END_SIG, EXTRA_ALIGN, EXTRA_ZIP64,
    FLAG_UTF8, LOCAL_LEN, LOCAL_SIG, U16_MAX, U32_MAX, ZIP64_END_LEN, ZIP64_END_SIG,
    ZIP64_LOCATOR_SIG,
};
use crate::archive::error::{ArchiveError, ArchiveErrorKind, Res};

/// Where the CRC-32 is in a local header.
pub const LOCAL_CRC_AT: usize = 14;

/// A regular file, mode 0o644, as Unix zip tools record it.
const EXTERNAL_ATTRS: u32 = 0o100_644 << 16;
/// "Version made by": Unix (3), in the high byte.
const MADE_BY_UNIX: u16 = 3 << 8;

pub struct ZipWriter {
    entries: Vec<CentralEntry>,
    /// The entries' names, for the duplicate check.
    names: HashSet<String>,
    position: u64,
}

/// The largest alignment: its padding must fit in a 16-bit extra field.
pub const MAX_ALIGN: u64 = 4096;

impl ZipWriter {
    /// A new zip whose first byte will be at `start_offset` in the file.
    pub fn new(start_offset: u64) -> Self {
        ZipWriter {
            entries: Vec::new(),
            names: HashSet::new(),
            position: start_offset,
        }
    }

    /// Appending to a zip: `existing` entries are kept as they are; new
    /// bytes start at `start_offset` (the end of the old file).
    pub fn append(existing: Vec<CentralEntry>, start_offset: u64) -> Self {
        ZipWriter {
            names: existing.iter().map(|e| e.name.clone()).collect(),
            entries: existing,
            position: start_offset,
        }
    }

    /// Where the next byte written goes.
    pub fn position(&self) -> u64 {
        self.position
    }

    pub fn entries(&self) -> &[CentralEntry] {
        &self.entries
    }

    /// The local header of an entry whose `compressed_size` stored bytes
    /// the caller writes right after it; with `align` > 1 the data starts
    /// at a multiple of `align`. The entry is recorded at the current
    /// position, which then moves past its header and data.
    pub fn local_header(
        &mut self,
        name: &str,
        method: Method,
        crc32: u32,
        compressed_size: u64,
        size: u64,
        align: u64,
    ) -> Res<Vec<u8>> {
        let zip64 = size >= U32_MAX as u64 || compressed_size >= U32_MAX as u64;
        self.header(name, method, crc32, compressed_size, size, align, zip64)
    }

    /// The local header of an entry whose stored size is known only once
    /// its data is written (compressed as it streams), with its CRC-32 and
    /// stored size zero for now: the caller writes it, then the data, then
    /// [`end_streamed`](Self::end_streamed)'s header over it. When the
    /// stored data could pass 4 GiB (zstd and deflate add at most a few
    /// bytes per 64 KiB to incompressible data; the bound allows 1/64th),
    /// the header has room for 64-bit sizes.
    pub fn begin_streamed(&mut self, name: &str, method: Method, size: u64) -> Res<Vec<u8>> {
        let bound = size.saturating_add(size / 64).saturating_add(64 << 10);
        let zip64 = size >= U32_MAX as u64 || bound >= U32_MAX as u64;
        self.header(name, method, 0, 0, size, 1, zip64)
    }

    /// Close the entry [`begin_streamed`](Self::begin_streamed) opened (the
    /// last one) now that its `compressed_size` stored bytes are written:
    /// the entry's final local header, of the same length as the first, to
    /// write over it. The position moves past the data.
    pub fn end_streamed(&mut self, name: &str, crc32: u32, compressed_size: u64) -> Res<Vec<u8>> {
        let Some(e) = self.entries.last().filter(|e| e.name == name) else {
            return Err(ArchiveError::new(
                ArchiveErrorKind::Malformed,
                "not the entry being streamed",
            )
            .entry(name));
        };
        let (method, size, start) = (e.method, e.size, e.header_offset);
        let method = Method::from_code(method).ok_or_else(|| {
            ArchiveError::new(ArchiveErrorKind::Malformed, "unknown method").entry(name)
        })?;
        let first_len = self.position - start;
        let zip64 = first_len as usize > LOCAL_LEN + name.len();
        if !zip64 && compressed_size >= U32_MAX as u64 {
            return Err(ArchiveError::new(
                ArchiveErrorKind::Malformed,
                "compressed data passed the bound its header was written for",
            )
            .entry(name));
        }
        // Rebuilt at the entry's own offset: drop it, write it again.
        self.entries.pop();
        self.names.remove(name);
        self.position = start;
        let h = self.header(name, method, crc32, compressed_size, size, 1, zip64)?;
        debug_assert_eq!(h.len() as u64, first_len);
        Ok(h)
    }

    #[allow(clippy::too_many_arguments)] // a local header's fields
    fn header(
        &mut self,
        name: &str,
        method: Method,
        crc32: u32,
        compressed_size: u64,
        size: u64,
        align: u64,
        zip64: bool,
    ) -> Res<Vec<u8>> {
        names::check(name)?;
        if self.names.contains(name) {
            return Err(ArchiveError::new(
                ArchiveErrorKind::Duplicate,
                "an entry of this name is already in the zip",
            )
            .entry(name));
        }
        if name.len() > U16_MAX as usize {
            return Err(
                ArchiveError::new(ArchiveErrorKind::Malformed, "entry name too long").entry(name),
            );
        }
        if align > MAX_ALIGN || (align > 1 && !align.is_power_of_two()) {
            return Err(ArchiveError::new(
                ArchiveErrorKind::Malformed,
                format!("alignment {align} is not a power of two up to {MAX_ALIGN}"),
            )
            .entry(name));
        }
        let mut extra = Vec::new();
        if zip64 {
            put16(&mut extra, EXTRA_ZIP64);
            put16(&mut extra, 16);
            put64(&mut extra, size);
            put64(&mut extra, compressed_size);
        }
        if align > 1 {
            // ID, size and the alignment itself, then zeros up to the boundary.
            let fixed = self.position + (LOCAL_LEN + name.len() + extra.len() + 6) as u64;
            let pad = (align - fixed % align) % align;
            put16(&mut extra, EXTRA_ALIGN);
            put16(&mut extra, 2 + pad as u16);
            put16(&mut extra, align.min(U16_MAX as u64) as u16);
            extra.resize(extra.len() + pad as usize, 0);
        }
        let mut h = Vec::with_capacity(LOCAL_LEN + name.len() + extra.len());
        put32(&mut h, LOCAL_SIG);
        put16(&mut h, method.version_needed(zip64));
        put16(&mut h, FLAG_UTF8);
        put16(&mut h, method.code());
        put16(&mut h, DOS_TIME);
        put16(&mut h, DOS_DATE);
        put32(&mut h, crc32);
        put32(
            &mut h,
            if zip64 {
                U32_MAX
            } else {
                compressed_size as u32
            },
        );
        put32(&mut h, if zip64 { U32_MAX } else { size as u32 });
        put16(&mut h, name.len() as u16);
        put16(&mut h, extra.len() as u16);
        h.extend_from_slice(name.as_bytes());
        h.extend_from_slice(&extra);
        let end = self
            .position
            .checked_add(h.len() as u64)
            .and_then(|p| p.checked_add(compressed_size))
            .ok_or_else(|| {
                ArchiveError::new(ArchiveErrorKind::Malformed, "the zip would pass 2^64 bytes")
                    .entry(name)
            })?;
        self.names.insert(name.to_string());
        self.entries.push(CentralEntry {
            name: name.to_string(),
            method: method.code(),
            flags: FLAG_UTF8,
            crc32,
            compressed_size,
            size,
            header_offset: self.position,
        });
        self.position = end;
        Ok(h)
    }

    /// Set the CRC-32 of entry `name`, for a writer that learns it only
    /// after writing the data (the caller patches the local header's CRC at
    /// [`LOCAL_CRC_AT`] bytes from its start); false if there is no entry
    /// of that name.
    pub fn set_crc(&mut self, name: &str, crc32: u32) -> bool {
        match self.entries.iter_mut().find(|e| e.name == name) {
            Some(e) => {
                e.crc32 = crc32;
                true
            }
            None => false,
        }
    }

    /// Drop an entry from the directory to be written (its bytes stay in
    /// the file, unreferenced); false if there is none of that name.
    pub fn remove(&mut self, name: &str) -> bool {
        if !self.names.remove(name) {
            return false;
        }
        self.entries.retain(|e| e.name != name);
        true
    }

    /// The central directory and the end records, written at the current
    /// position.
    pub fn finish(&mut self) -> Vec<u8> {
        let cd_offset = self.position;
        let mut out = Vec::new();
        for e in &self.entries {
            central_record(&mut out, e);
        }
        let cd_size = out.len() as u64;
        let n = self.entries.len() as u64;
        let zip64 = n >= U16_MAX as u64 || cd_size >= U32_MAX as u64 || cd_offset >= U32_MAX as u64;
        if zip64 {
            let end64 = cd_offset + cd_size;
            put32(&mut out, ZIP64_END_SIG);
            put64(&mut out, (ZIP64_END_LEN - 12) as u64);
            put16(&mut out, MADE_BY_UNIX | 45);
            put16(&mut out, 45);
            put32(&mut out, 0);
            put32(&mut out, 0);
            put64(&mut out, n);
            put64(&mut out, n);
            put64(&mut out, cd_size);
            put64(&mut out, cd_offset);
            put32(&mut out, ZIP64_LOCATOR_SIG);
            put32(&mut out, 0);
            put64(&mut out, end64);
            put32(&mut out, 1);
        }
        let small = |v: u64, max: u64| if zip64 { max } else { v };
        put32(&mut out, END_SIG);
        put16(&mut out, 0);
        put16(&mut out, 0);
        put16(&mut out, small(n, U16_MAX as u64) as u16);
        put16(&mut out, small(n, U16_MAX as u64) as u16);
        put32(&mut out, small(cd_size, U32_MAX as u64) as u32);
        put32(&mut out, small(cd_offset, U32_MAX as u64) as u32);
        put16(&mut out, 0);
        self.position += out.len() as u64;
        out
    }
}

fn central_record(out: &mut Vec<u8>, e: &CentralEntry) {
    let big_size = e.size >= U32_MAX as u64 || e.compressed_size >= U32_MAX as u64;
    let big_offset = e.header_offset >= U32_MAX as u64;
    let mut extra = Vec::new();
    if big_size || big_offset {
        let mut fields = Vec::new();
        if big_size {
            put64(&mut fields, e.size);
            put64(&mut fields, e.compressed_size);
        }
        if big_offset {
            put64(&mut fields, e.header_offset);
        }
        put16(&mut extra, EXTRA_ZIP64);
        put16(&mut extra, fields.len() as u16);
        extra.extend_from_slice(&fields);
    }
    let method = Method::from_code(e.method).unwrap_or(Method::Stored);
    let needed = method.version_needed(big_size || big_offset);
    put32(out, CENTRAL_SIG);
    put16(out, MADE_BY_UNIX | needed);
    put16(out, needed);
    put16(out, e.flags);
    put16(out, e.method);
    put16(out, DOS_TIME);
    put16(out, DOS_DATE);
    put32(out, e.crc32);
    put32(
        out,
        if big_size {
            U32_MAX
        } else {
            e.compressed_size as u32
        },
    );
    put32(out, if big_size { U32_MAX } else { e.size as u32 });
    put16(out, e.name.len() as u16);
    put16(out, extra.len() as u16);
    put16(out, 0); // comment
    put16(out, 0); // disk
    put16(out, 0); // internal attributes
    put32(out, EXTERNAL_ATTRS);
    put32(
        out,
        if big_offset {
            U32_MAX
        } else {
            e.header_offset as u32
        },
    );
    out.extend_from_slice(e.name.as_bytes());
    out.extend_from_slice(&extra);
}

fn put16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}
