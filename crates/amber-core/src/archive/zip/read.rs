//! The zip reader, sans I/O: the caller reads the file's tail, then the
//! central directory, then each entry's local header, and this checks them.
//! Every count and size is checked against the bytes that are there before
//! it is used, every entry lies inside the file and before the directory,
//! entries do not overlap, names are safe and unique, and compression
//! ratios are bounded before anything is decompressed.

use std::collections::HashSet;

use super::names;
use super::{
    CentralEntry, CENTRAL_LEN, CENTRAL_SIG, END_LEN, END_SIG, EXTRA_ZIP64, FLAG_DESCRIPTOR,
    FLAG_ENCRYPTED, FLAG_UTF8, LOCAL_LEN, LOCAL_SIG, U16_MAX, U32_MAX, ZIP64_END_LEN,
    ZIP64_END_SIG, ZIP64_LOCATOR_LEN, ZIP64_LOCATOR_SIG,
};
use crate::archive::error::{ArchiveError, ArchiveErrorKind, Res};
use crate::bytes::reader::Reader;

/// How much of the file's end to read first: the end record with the
/// longest comment, the ZIP64 locator and the ZIP64 end record.
pub const TAIL_LEN: usize = END_LEN + U16_MAX as usize + ZIP64_LOCATOR_LEN + ZIP64_END_LEN;

/// Limits a reader enforces on what the directory declares.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Largest size / compressed size of a compressed entry of more than
    /// [`RATIO_MIN_SIZE`] bytes. The default is above what any supported
    /// method can produce (deflate about 1,032:1, zstd about 32,000:1 on
    /// zeros), so every archive amber writes reads back, and a directory
    /// that declares more is a lie; lower it to refuse large expansions of
    /// real data too.
    pub max_ratio: f64,
    /// Largest entry, uncompressed.
    pub max_entry_size: u64,
}

pub const DEFAULT_MAX_RATIO: f64 = 40_000.0;
/// Entries up to this size are read whatever their ratio: they cannot
/// exhaust memory.
pub const RATIO_MIN_SIZE: u64 = 64 << 20;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_ratio: DEFAULT_MAX_RATIO,
            max_entry_size: u64::MAX,
        }
    }
}

/// Where the central directory is, from the end records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EndInfo {
    pub cd_offset: u64,
    pub cd_size: u64,
    pub entries: u64,
    /// Where the end records start: the directory must end before.
    pub end_offset: u64,
    /// The ZIP64 end record lies before the tail read: read these bytes
    /// (offset, length) and call [`finish_zip64`].
    pub need: Option<(u64, usize)>,
}

fn not_zip(msg: &str) -> ArchiveError {
    ArchiveError::new(ArchiveErrorKind::NotZip, msg)
}

/// The end records, from the last `min(file_len, TAIL_LEN)` bytes.
pub fn find_end(tail: &[u8], file_len: u64) -> Res<EndInfo> {
    if tail.len() as u64 > file_len {
        return Err(ArchiveError::new(
            ArchiveErrorKind::Malformed,
            "tail longer than the file",
        ));
    }
    let base = file_len - tail.len() as u64;
    // The last end record whose comment reaches exactly the end of the file.
    let at = (0..=tail.len().saturating_sub(END_LEN))
        .rev()
        .find(|&i| {
            tail.len() >= i + END_LEN
                && tail[i..i + 4] == END_SIG.to_le_bytes()
                && u16::from_le_bytes([tail[i + 20], tail[i + 21]]) as usize
                    == tail.len() - i - END_LEN
        })
        .ok_or_else(|| not_zip("no zip end record: not a zip file, or cut short"))?;
    let mut r = Reader::new(&tail[at + 4..]);
    let rd = |e| ArchiveError::read(e, base + at as u64 + 4);
    let disk = r.u16_le("disk number").map_err(rd)?;
    let cd_disk = r.u16_le("directory disk").map_err(rd)?;
    let here = r.u16_le("entries on this disk").map_err(rd)?;
    let total = r.u16_le("entries").map_err(rd)?;
    let cd_size = r.u32_le("directory size").map_err(rd)?;
    let cd_offset = r.u32_le("directory offset").map_err(rd)?;
    if disk != 0 || cd_disk != 0 || here != total {
        return Err(ArchiveError::new(
            ArchiveErrorKind::Unsupported,
            "multi-disk zip archives are not read",
        )
        .at(base + at as u64));
    }
    let end_offset = base + at as u64;
    let locator = at
        .checked_sub(ZIP64_LOCATOR_LEN)
        .filter(|&l| tail[l..l + 4] == ZIP64_LOCATOR_SIG.to_le_bytes());
    let Some(l) = locator else {
        if total == U16_MAX || cd_size == U32_MAX || cd_offset == U32_MAX {
            return Err(ArchiveError::new(
                ArchiveErrorKind::Malformed,
                "ZIP64 values without a ZIP64 locator",
            )
            .at(end_offset));
        }
        return check_end(EndInfo {
            cd_offset: cd_offset as u64,
            cd_size: cd_size as u64,
            entries: total as u64,
            end_offset,
            need: None,
        });
    };
    let mut r = Reader::new(&tail[l + 4..at]);
    let rd = |e| ArchiveError::read(e, base + l as u64 + 4);
    let disk = r.u32_le("ZIP64 end disk").map_err(rd)?;
    let end64 = r.u64_le("ZIP64 end offset").map_err(rd)?;
    let disks = r.u32_le("disks").map_err(rd)?;
    let locator_at = base + l as u64;
    if disk != 0 || disks > 1 {
        return Err(ArchiveError::new(
            ArchiveErrorKind::Unsupported,
            "multi-disk zip archives are not read",
        )
        .at(locator_at));
    }
    if end64
        .checked_add(ZIP64_END_LEN as u64)
        .is_none_or(|e| e > locator_at)
    {
        return Err(ArchiveError::new(
            ArchiveErrorKind::Malformed,
            "ZIP64 end record out of place",
        )
        .at(locator_at));
    }
    let info = EndInfo {
        cd_offset: 0,
        cd_size: 0,
        entries: 0,
        end_offset: end64,
        need: Some((end64, ZIP64_END_LEN)),
    };
    if end64 >= base {
        let i = (end64 - base) as usize;
        return finish_zip64(&tail[i..i + ZIP64_END_LEN], info);
    }
    Ok(info)
}

/// The end information from the ZIP64 end record's bytes.
pub fn finish_zip64(record: &[u8], info: EndInfo) -> Res<EndInfo> {
    let at = info.need.map_or(0, |(o, _)| o);
    let rd = |e| ArchiveError::read(e, at);
    let mut r = Reader::new(record);
    if r.u32_le("ZIP64 end record").map_err(rd)? != ZIP64_END_SIG {
        return Err(ArchiveError::new(
            ArchiveErrorKind::Malformed,
            "bad ZIP64 end record signature",
        )
        .at(at));
    }
    r.take(8 + 2 + 2, "ZIP64 end record").map_err(rd)?;
    let disk = r.u32_le("disk").map_err(rd)?;
    let cd_disk = r.u32_le("directory disk").map_err(rd)?;
    let here = r.u64_le("entries on this disk").map_err(rd)?;
    let total = r.u64_le("entries").map_err(rd)?;
    let cd_size = r.u64_le("directory size").map_err(rd)?;
    let cd_offset = r.u64_le("directory offset").map_err(rd)?;
    if disk != 0 || cd_disk != 0 || here != total {
        return Err(ArchiveError::new(
            ArchiveErrorKind::Unsupported,
            "multi-disk zip archives are not read",
        )
        .at(at));
    }
    check_end(EndInfo {
        cd_offset,
        cd_size,
        entries: total,
        end_offset: at,
        need: None,
    })
}

fn check_end(info: EndInfo) -> Res<EndInfo> {
    let fits = info
        .cd_offset
        .checked_add(info.cd_size)
        .is_some_and(|e| e <= info.end_offset);
    if !fits {
        return Err(ArchiveError::new(
            ArchiveErrorKind::Malformed,
            format!(
                "the directory ({} bytes at {}) runs past its end record at {}",
                info.cd_size, info.cd_offset, info.end_offset
            ),
        ));
    }
    if info.entries > info.cd_size / CENTRAL_LEN as u64 {
        return Err(ArchiveError::new(
            ArchiveErrorKind::Malformed,
            format!(
                "{} entries cannot fit in a {}-byte directory",
                info.entries, info.cd_size
            ),
        ));
    }
    Ok(info)
}

/// Every entry of the central directory `cd` (the `end.cd_size` bytes at
/// `end.cd_offset`), checked.
pub fn parse_central(cd: &[u8], end: &EndInfo, limits: &Limits) -> Res<Vec<CentralEntry>> {
    if cd.len() as u64 != end.cd_size {
        return Err(
            ArchiveError::new(ArchiveErrorKind::Truncated, "short central directory")
                .at(end.cd_offset),
        );
    }
    let mut r = Reader::new(cd);
    let mut entries = Vec::with_capacity(end.entries as usize);
    let mut seen = HashSet::new();
    for _ in 0..end.entries {
        let at = end.cd_offset + r.pos() as u64;
        let e = central_entry(&mut r, at)?;
        check_entry(&e, end, limits)?;
        if !seen.insert(e.name.clone()) {
            return Err(ArchiveError::new(
                ArchiveErrorKind::Duplicate,
                "two entries have this name",
            )
            .entry(&e.name)
            .at(at));
        }
        entries.push(e);
    }
    if !r.is_empty() {
        return Err(ArchiveError::new(
            ArchiveErrorKind::Malformed,
            "bytes after the last directory entry",
        )
        .at(end.cd_offset + r.pos() as u64));
    }
    check_overlaps(&entries)?;
    Ok(entries)
}

fn central_entry(r: &mut Reader<'_>, at: u64) -> Res<CentralEntry> {
    // Offsets of errors in `r` count from the directory's start.
    let base = at - r.pos() as u64;
    let rest = |e| ArchiveError::read(e, base);
    let rd = |e| ArchiveError::read(e, at);
    let fixed = r.take(CENTRAL_LEN, "directory entry").map_err(rest)?;
    let mut f = Reader::new(fixed);
    if f.u32_le("signature").map_err(rd)? != CENTRAL_SIG {
        return Err(ArchiveError::new(
            ArchiveErrorKind::Malformed,
            "bad directory entry signature",
        )
        .at(at));
    }
    f.take(4, "versions").map_err(rd)?;
    let flags = f.u16_le("flags").map_err(rd)?;
    let method = f.u16_le("method").map_err(rd)?;
    f.take(4, "time").map_err(rd)?;
    let crc32 = f.u32_le("crc").map_err(rd)?;
    let csize = f.u32_le("compressed size").map_err(rd)?;
    let size = f.u32_le("size").map_err(rd)?;
    let name_len = f.u16_le("name length").map_err(rd)? as usize;
    let extra_len = f.u16_le("extra length").map_err(rd)? as usize;
    let comment_len = f.u16_le("comment length").map_err(rd)? as usize;
    let disk = f.u16_le("disk").map_err(rd)?;
    f.take(6, "attributes").map_err(rd)?;
    let offset = f.u32_le("offset").map_err(rd)?;
    let raw_name = r.take(name_len, "entry name").map_err(rest)?;
    let extra = r.take(extra_len, "extra field").map_err(rest)?;
    r.take(comment_len, "entry comment").map_err(rest)?;
    let name = entry_name(raw_name, flags, at)?;
    if disk != 0 && disk != U16_MAX {
        return Err(
            ArchiveError::new(ArchiveErrorKind::Unsupported, "entry on another disk")
                .entry(&name)
                .at(at),
        );
    }
    let mut z = Zip64Fields::new(extra, at, &name)?;
    Ok(CentralEntry {
        size: z.take_if(size == U32_MAX, size as u64)?,
        compressed_size: z.take_if(csize == U32_MAX, csize as u64)?,
        header_offset: z.take_if(offset == U32_MAX, offset as u64)?,
        name,
        method,
        flags,
        crc32,
    })
}

fn entry_name(raw: &[u8], flags: u16, at: u64) -> Res<String> {
    let name = if flags & FLAG_UTF8 != 0 {
        std::str::from_utf8(raw)
            .map_err(|_| {
                ArchiveError::new(ArchiveErrorKind::Malformed, "entry name is not UTF-8").at(at)
            })?
            .to_string()
    } else if raw.is_ascii() {
        String::from_utf8_lossy(raw).into_owned()
    } else {
        names::decode_cp437(raw)
    };
    names::check(&name).map_err(|e| e.at(at))?;
    Ok(name)
}

/// The values of a ZIP64 extra field, taken in their fixed order.
struct Zip64Fields<'a> {
    fields: Reader<'a>,
    at: u64,
    name: &'a str,
}

impl<'a> Zip64Fields<'a> {
    fn new(extra: &'a [u8], at: u64, name: &'a str) -> Res<Self> {
        let mut r = Reader::new(extra);
        let bad = |e| ArchiveError::read(e, at);
        let mut fields: &[u8] = &[];
        while !r.is_empty() {
            let id = r.u16_le("extra field id").map_err(bad)?;
            let len = r.u16_le("extra field length").map_err(bad)? as usize;
            let data = r.take(len, "extra field").map_err(bad)?;
            if id == EXTRA_ZIP64 {
                fields = data;
            }
        }
        Ok(Zip64Fields {
            fields: Reader::new(fields),
            at,
            name,
        })
    }

    fn take_if(&mut self, wanted: bool, value: u64) -> Res<u64> {
        if !wanted {
            return Ok(value);
        }
        self.fields.u64_le("ZIP64 value").map_err(|_| {
            ArchiveError::new(
                ArchiveErrorKind::Malformed,
                "a ZIP64 value is missing from the extra field",
            )
            .entry(self.name)
            .at(self.at)
        })
    }
}

fn check_entry(e: &CentralEntry, end: &EndInfo, limits: &Limits) -> Res<()> {
    let fail = |kind, msg: String| {
        Err(ArchiveError::new(kind, msg)
            .entry(&e.name)
            .at(e.header_offset))
    };
    if e.flags & FLAG_ENCRYPTED != 0 {
        return fail(
            ArchiveErrorKind::Unsupported,
            "encrypted entries are not read".into(),
        );
    }
    let data_end = e
        .header_offset
        .checked_add((LOCAL_LEN + e.name.len()) as u64)
        .and_then(|x| x.checked_add(e.compressed_size));
    if data_end.is_none_or(|x| x > end.cd_offset) {
        return fail(
            ArchiveErrorKind::SizeMismatch,
            format!(
                "the entry's {} bytes at {} run past the start of the directory at {}",
                e.compressed_size, e.header_offset, end.cd_offset
            ),
        );
    }
    if e.size > limits.max_entry_size {
        return fail(
            ArchiveErrorKind::Bomb,
            format!(
                "{} bytes is more than the limit of {}",
                e.size, limits.max_entry_size
            ),
        );
    }
    if e.method != 0
        && e.size > RATIO_MIN_SIZE
        && e.size as f64 > limits.max_ratio * e.compressed_size.max(1) as f64
    {
        return fail(
            ArchiveErrorKind::Bomb,
            format!(
                "{} bytes compressed to {} is beyond the limit of {}:1 (pass max_ratio= to \
                 read it)",
                e.size, e.compressed_size, limits.max_ratio
            ),
        );
    }
    if e.method == 0 && e.size != e.compressed_size && e.flags & FLAG_DESCRIPTOR == 0 {
        return fail(
            ArchiveErrorKind::SizeMismatch,
            format!(
                "a stored entry of {} bytes takes {}",
                e.size, e.compressed_size
            ),
        );
    }
    Ok(())
}

/// No two entries share bytes (overlapping entries are how the largest zip
/// bombs multiply their output).
fn check_overlaps(entries: &[CentralEntry]) -> Res<()> {
    let mut spans: Vec<(u64, u64, &str)> = entries
        .iter()
        .map(|e| {
            let start = e.header_offset;
            (
                start,
                start + (LOCAL_LEN + e.name.len()) as u64 + e.compressed_size,
                e.name.as_str(),
            )
        })
        .collect();
    spans.sort_unstable();
    for w in spans.windows(2) {
        if w[1].0 < w[0].1 {
            return Err(ArchiveError::new(
                ArchiveErrorKind::Malformed,
                format!("entry overlaps entry {:?}", w[0].2),
            )
            .entry(w[1].2)
            .at(w[1].0));
        }
    }
    Ok(())
}

/// Where each entry of `entries` (as [`parse_central`] returns them) must
/// end: at the next entry's local header in file order, or at the central
/// directory for the last. The directory does not say how long an entry's
/// local extra field is, so [`parse_central`] cannot see an entry whose
/// extra field pushes its data into the next entry;
/// [`data_offset_within`] checks that once the local header is read.
pub fn span_ends(entries: &[CentralEntry], cd_offset: u64) -> Vec<u64> {
    let mut order: Vec<usize> = (0..entries.len()).collect();
    order.sort_unstable_by_key(|&i| entries[i].header_offset);
    let mut ends = vec![cd_offset; entries.len()];
    for w in order.windows(2) {
        ends[w[0]] = entries[w[1]].header_offset;
    }
    ends
}

/// [`data_offset`], and the entry's data must end by `end` (its
/// [`span_ends`] value): entries never share bytes, however long their
/// local extra fields are.
pub fn data_offset_within(local: &[u8], e: &CentralEntry, end: u64) -> Res<u64> {
    let start = data_offset(local, e)?;
    if start.checked_add(e.compressed_size).is_none_or(|x| x > end) {
        return Err(ArchiveError::new(
            ArchiveErrorKind::Malformed,
            format!(
                "the entry's data ({} bytes at {start}) runs into the next entry or the \
                 directory at {end}",
                e.compressed_size
            ),
        )
        .entry(&e.name)
        .at(e.header_offset));
    }
    Ok(start)
}

/// How many bytes the local header at an entry's offset takes, from its
/// first 30.
pub fn local_len(fixed: &[u8]) -> Res<usize> {
    let mut r = Reader::new(fixed);
    let rd = |e| ArchiveError::read(e, 0);
    if r.u32_le("local header").map_err(rd)? != LOCAL_SIG {
        return Err(ArchiveError::new(
            ArchiveErrorKind::Malformed,
            "bad local header signature",
        ));
    }
    r.take(22, "local header").map_err(rd)?;
    let n = r.u16_le("name length").map_err(rd)? as usize;
    let m = r.u16_le("extra length").map_err(rd)? as usize;
    Ok(LOCAL_LEN + n + m)
}

/// The file offset of an entry's data, from its whole local header, which
/// must agree with the directory.
pub fn data_offset(local: &[u8], e: &CentralEntry) -> Res<u64> {
    let at = e.header_offset;
    let fail = |kind, msg: &str| Err(ArchiveError::new(kind, msg).entry(&e.name).at(at));
    let len = local_len(local).map_err(|x| x.entry(&e.name).at(at))?;
    if local.len() < len {
        return fail(ArchiveErrorKind::Truncated, "local header cut short");
    }
    let mut r = Reader::new(local);
    let rd = |x| ArchiveError::read(x, at);
    r.take(6, "local header").map_err(rd)?;
    let flags = r.u16_le("flags").map_err(rd)?;
    let method = r.u16_le("method").map_err(rd)?;
    r.take(4, "time").map_err(rd)?;
    let crc32 = r.u32_le("crc").map_err(rd)?;
    let csize = r.u32_le("compressed size").map_err(rd)?;
    let size = r.u32_le("size").map_err(rd)?;
    let n = r.u16_le("name length").map_err(rd)? as usize;
    let m = r.u16_le("extra length").map_err(rd)? as usize;
    let raw_name = r.take(n, "name").map_err(rd)?;
    let extra = r.take(m, "extra").map_err(rd)?;
    if entry_name(raw_name, flags, at)? != e.name {
        return fail(
            ArchiveErrorKind::Malformed,
            "the local header names another entry",
        );
    }
    if method != e.method || flags & FLAG_ENCRYPTED != 0 {
        return fail(
            ArchiveErrorKind::Malformed,
            "the local header's method differs from the directory's",
        );
    }
    if flags & FLAG_DESCRIPTOR == 0 {
        let mut z = Zip64Fields::new(extra, at, &e.name)?;
        let size = z.take_if(size == U32_MAX, size as u64)?;
        let csize = z.take_if(csize == U32_MAX, csize as u64)?;
        if crc32 != e.crc32 || size != e.size || csize != e.compressed_size {
            return fail(
                ArchiveErrorKind::SizeMismatch,
                "the local header's sizes or CRC differ from the directory's",
            );
        }
    }
    Ok(at + len as u64)
}
