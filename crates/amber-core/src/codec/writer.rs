//! Encoder primitives: each appends one item header (or a whole scalar item)
//! in its shortest form to an [`Out`]. The walker that decides what to
//! write lives with the objects it walks (amber-py for Python objects).

use crate::bytes::varint;
use crate::codec::format as f;

/// An encoder's output: a byte buffer whose growth never aborts the
/// process. When memory runs out, the write that needed it and every later
/// one are dropped and [`Out::failed`] turns true: the encoder reports an
/// out-of-memory error instead of a frame, as pickle raises `MemoryError`.
#[derive(Default)]
pub struct Out {
    buf: Vec<u8>,
    failed: bool,
}

impl Out {
    pub fn new() -> Out {
        Out::default()
    }

    #[inline(always)]
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    pub fn capacity(&self) -> usize {
        self.buf.capacity()
    }

    /// The bytes written (incomplete if [`Out::failed`]).
    pub fn as_slice(&self) -> &[u8] {
        &self.buf
    }

    /// Whether a write was dropped for want of memory.
    #[inline(always)]
    pub fn failed(&self) -> bool {
        self.failed
    }

    /// Empty the buffer (keeping its capacity) and forget a failure.
    pub fn clear(&mut self) {
        self.buf.clear();
        self.failed = false;
    }

    /// Room for `n` more bytes, growing if needed: false if memory ran out.
    #[inline(always)]
    fn room(&mut self, n: usize) -> bool {
        self.buf.capacity() - self.buf.len() >= n || self.grow(n)
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self, n: usize) -> bool {
        // try_reserve grows geometrically, like reserve, but reports failure.
        if self.failed || self.buf.try_reserve(n).is_err() {
            self.failed = true;
            return false;
        }
        true
    }

    /// Append a fixed-size array: one capacity check and one store, where
    /// a slice copy would call `memcpy` for a few bytes.
    #[inline(always)]
    pub fn put<const N: usize>(&mut self, bytes: [u8; N]) {
        if !self.room(N) {
            return;
        }
        let len = self.buf.len();
        // SAFETY: `room` made space for N more bytes after `len`.
        unsafe {
            std::ptr::write_unaligned(self.buf.as_mut_ptr().add(len) as *mut [u8; N], bytes);
            self.buf.set_len(len + N);
        }
    }

    /// Append one byte.
    #[inline(always)]
    pub fn push(&mut self, b: u8) {
        self.put([b]);
    }

    /// Append a byte slice; up to 16 bytes without a `memcpy` call.
    #[inline(always)]
    pub fn extend(&mut self, b: &[u8]) {
        let n = b.len();
        if !self.room(n) {
            return;
        }
        let len = self.buf.len();
        // SAFETY: `room` made space for n bytes after `len`; the source is
        // not our buffer (it is borrowed while we are borrowed mutably). The
        // overlapping stores of the short case write exactly len..len+n.
        unsafe {
            let dst = self.buf.as_mut_ptr().add(len);
            let src = b.as_ptr();
            if (8..=16).contains(&n) {
                let head = std::ptr::read_unaligned(src as *const u64);
                let tail = std::ptr::read_unaligned(src.add(n - 8) as *const u64);
                std::ptr::write_unaligned(dst as *mut u64, head);
                std::ptr::write_unaligned(dst.add(n - 8) as *mut u64, tail);
            } else if (4..8).contains(&n) {
                let head = std::ptr::read_unaligned(src as *const u32);
                let tail = std::ptr::read_unaligned(src.add(n - 4) as *const u32);
                std::ptr::write_unaligned(dst as *mut u32, head);
                std::ptr::write_unaligned(dst.add(n - 4) as *mut u32, tail);
            } else {
                std::ptr::copy_nonoverlapping(src, dst, n);
            }
            self.buf.set_len(len + n);
        }
    }

    /// Append `n` zero bytes.
    pub fn zeros(&mut self, n: usize) {
        if self.room(n) {
            self.buf.resize(self.buf.len() + n, 0);
        }
    }

    /// Append a varint.
    #[inline]
    pub fn varint(&mut self, v: u64) {
        let mut b = [0u8; varint::MAX_LEN];
        let n = varint::encode(v, &mut b);
        self.extend(&b[..n]);
    }

    /// Replace the `n` bytes at `at` (already written) with `bytes`.
    pub fn splice(&mut self, at: usize, n: usize, bytes: &[u8]) {
        if bytes.len() > n && !self.room(bytes.len() - n) {
            return;
        }
        self.buf.splice(at..at + n, bytes.iter().copied());
    }

    /// Overwrite bytes already written, from `at`.
    pub fn overwrite(&mut self, at: usize, bytes: &[u8]) {
        self.buf[at..at + bytes.len()].copy_from_slice(bytes);
    }
}

/// Reading what was written; writing goes through the methods above, which
/// check room first.
impl std::ops::Deref for Out {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.buf
    }
}

/// Append a tag byte followed by a varint.
#[inline(always)]
fn put_tag_varint(out: &mut Out, tag: u8, v: u64) {
    if v < 0x80 {
        out.put([tag, v as u8]);
    } else {
        out.push(tag);
        out.varint(v);
    }
}

/// Reserve the header at the end of `out`; returns the frame's start.
#[inline]
pub fn begin_frame(out: &mut Out) -> usize {
    let start = out.len();
    out.extend(&[f::MAGIC, f::VERSION, 0, 0, 0, 0, 0, 0]);
    start
}

/// Fill in the header reserved by [`begin_frame`] now that the body is written.
pub fn finish_frame(out: &mut Out, start: usize) {
    let body = (out.len() - start - f::HEADER_LEN) as u64;
    match u32::try_from(body) {
        Ok(n) => out.overwrite(start + 4, &n.to_le_bytes()),
        Err(_) => {
            // Bodies of 4 GiB and more: a u64 length after the short header.
            // Eight bytes keep in-band array data aligned to ND_ALIGN.
            out.overwrite(start + 2, &[f::FLAG_LONG]);
            out.splice(start + f::HEADER_LEN, 0, &body.to_le_bytes());
        }
    }
}

#[inline(always)]
pub fn write_none(out: &mut Out) {
    out.put([f::NONE]);
}

#[inline(always)]
pub fn write_bool(out: &mut Out, v: bool) {
    out.put([if v { f::TRUE } else { f::FALSE }]);
}

/// An int that fits in i64, in its shortest form.
#[inline(always)]
pub fn write_int(out: &mut Out, v: i64) {
    if (-32..=f::FIXINT_MAX as i64).contains(&v) {
        // 0..=63 are themselves; -32..=-1 are 0xE0..=0xFF.
        out.put([v as i8 as u8]);
    } else if v as i8 as i64 == v {
        out.put([f::INT8, v as u8]);
    } else if v as i16 as i64 == v {
        let b = (v as i16).to_le_bytes();
        out.put([f::INT16, b[0], b[1]]);
    } else if v as i32 as i64 == v {
        let b = (v as i32).to_le_bytes();
        out.put([f::INT32, b[0], b[1], b[2], b[3]]);
    } else {
        let b = v.to_le_bytes();
        out.put([f::INT64, b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
    }
}

/// An int outside i64, as little-endian two's complement in shortest form
/// (more than 8 bytes).
pub fn write_bigint(out: &mut Out, le: &[u8]) {
    out.push(f::BIGINT);
    out.varint(le.len() as u64);
    out.extend(le);
}

#[inline(always)]
pub fn write_float(out: &mut Out, v: f64) {
    let b = v.to_le_bytes();
    out.put([f::FLOAT64, b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
}

pub fn write_complex(out: &mut Out, re: f64, im: f64) {
    out.push(f::COMPLEX);
    out.extend(&re.to_le_bytes());
    out.extend(&im.to_le_bytes());
}

/// A str that is not entered in the string table.
#[inline(always)]
pub fn write_str(out: &mut Out, utf8: &[u8]) {
    if utf8.len() <= f::FIXSTR_MAX_LEN {
        out.put([f::FIXSTR + utf8.len() as u8]);
    } else {
        put_tag_varint(out, f::STR, utf8.len() as u64);
    }
    out.extend(utf8);
}

/// A str that the decoder enters in its string table as the next entry.
#[inline(always)]
pub fn write_str_def(out: &mut Out, utf8: &[u8]) {
    put_tag_varint(out, f::STR_DEF, utf8.len() as u64);
    out.extend(utf8);
}

/// A reference to string-table entry `i`.
#[inline(always)]
pub fn write_str_ref(out: &mut Out, i: usize) {
    if i <= f::FIXREF_MAX {
        out.put([f::FIXREF + i as u8]);
    } else {
        put_tag_varint(out, f::STR_REF, i as u64);
    }
}

/// A str holding lone surrogates, in UTF-8 extended to encode them.
pub fn write_str_surrogates(out: &mut Out, raw: &[u8]) {
    out.push(f::STR_SURROGATES);
    out.varint(raw.len() as u64);
    out.extend(raw);
}

#[inline(always)]
pub fn write_bytes(out: &mut Out, b: &[u8], bytearray: bool) {
    out.push(if bytearray { f::BYTEARRAY } else { f::BYTES });
    out.varint(b.len() as u64);
    out.extend(b);
}

pub fn write_bytes_oob(out: &mut Out, index: usize, bytearray: bool) {
    out.push(if bytearray {
        f::BYTEARRAY_OOB
    } else {
        f::BYTES_OOB
    });
    out.varint(index as u64);
}

/// A container header: `fix` is the fixed-length range start (or `None`).
#[inline(always)]
fn write_container(out: &mut Out, fix: Option<(u8, usize)>, tag: u8, n: usize) {
    match fix {
        Some((base, max)) if n <= max => out.put([base + n as u8]),
        _ => put_tag_varint(out, tag, n as u64),
    }
}

#[inline(always)]
pub fn write_list_header(out: &mut Out, n: usize) {
    write_container(out, Some((f::FIXLIST, f::FIXLIST_MAX_LEN)), f::LIST, n);
}

#[inline(always)]
pub fn write_tuple_header(out: &mut Out, n: usize) {
    write_container(out, Some((f::FIXTUPLE, f::FIXTUPLE_MAX_LEN)), f::TUPLE, n);
}

#[inline(always)]
pub fn write_dict_header(out: &mut Out, n: usize) {
    write_container(out, Some((f::FIXDICT, f::FIXDICT_MAX_LEN)), f::DICT, n);
}

/// A dict of `n` pairs written keys first, defining the next shape.
#[inline(always)]
pub fn write_shape_def_header(out: &mut Out, n: usize) {
    put_tag_varint(out, f::SHAPE_DEF, n as u64);
}

/// A dict with the keys of shape `s`; its values follow.
#[inline(always)]
pub fn write_shaped_header(out: &mut Out, s: usize) {
    put_tag_varint(out, f::SHAPED, s as u64);
}

/// Identity mode: a reference to memo entry `i`.
pub fn write_memo_ref(out: &mut Out, i: usize) {
    put_tag_varint(out, f::MEMO_REF, i as u64);
}

/// Identity mode: the SHARE marker before an item that is referenced again;
/// returns where it is, for [`replace_share`].
pub fn write_share(out: &mut Out) -> usize {
    let at = out.len();
    out.push(f::SHARE);
    at
}

/// Turn the SHARE marker written at `at` into the REPLACE marker for memo
/// entry `idx`: padded so that everything after it moves by a multiple of
/// `REPLACE_ALIGN` (in-band array data stays aligned).
pub fn replace_share(out: &mut Out, at: usize, idx: usize) {
    let mut v = [0u8; varint::MAX_LEN];
    let nv = varint::encode(idx as u64, &mut v);
    // Growth: the tag and varint, less the SHARE byte, plus the pad count byte.
    let shift = nv + 1;
    let pad = (f::REPLACE_ALIGN - shift % f::REPLACE_ALIGN) % f::REPLACE_ALIGN;
    let mut m = [0u8; 2 + varint::MAX_LEN + f::REPLACE_ALIGN];
    m[0] = f::REPLACE;
    m[1..1 + nv].copy_from_slice(&v[..nv]);
    m[1 + nv] = pad as u8; // the pad bytes that follow are already zero
    out.splice(at, 1, &m[..2 + nv + pad]);
}

/// Headers with no short form: SET, FROZENSET, ORDERED_DICT, COUNTER.
pub fn write_counted(out: &mut Out, tag: u8, n: usize) {
    write_container(out, None, tag, n);
}

pub fn write_defaultdict_header(out: &mut Out, factory: u8, n: usize) {
    out.extend(&[f::DEFAULTDICT, factory]);
    out.varint(n as u64);
}

/// DEQUE: the caller writes maxlen (an item) next, then [`write_count`].
pub fn write_deque_header(out: &mut Out) {
    out.push(f::DEQUE);
}

/// The item count of a DEQUE, after its maxlen.
pub fn write_count(out: &mut Out, n: usize) {
    out.varint(n as u64);
}

/// FRACTION: the caller writes the numerator and denominator items next.
pub fn write_fraction_header(out: &mut Out) {
    out.push(f::FRACTION);
}

/// `datetime.timezone.utc`, a whole item.
pub fn write_tz_utc(out: &mut Out) {
    out.push(f::TZ_UTC);
}

/// TZ_ZONE: the caller writes the zone key (a str item) next.
pub fn write_tz_zone_header(out: &mut Out) {
    out.push(f::TZ_ZONE);
}

/// ENUM: the caller writes the class name (a str item), then the value.
pub fn write_enum_header(out: &mut Out) {
    out.push(f::ENUM);
}

/// How a registered object travels (spec §6.11); the caller writes the
/// class name (a str item) next, then what the form needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectForm {
    /// OBJECT: the state, rebuilt by the class (hooks, named tuples).
    Rebuilt,
    /// OBJECT_FILL: the attributes or slots to set on an empty instance.
    Fill,
    /// OBJECT_STATE: a base, then the state given to `__setstate__`.
    State,
}

pub fn write_object_header(out: &mut Out, form: ObjectForm) {
    out.push(match form {
        ObjectForm::Rebuilt => f::OBJECT,
        ObjectForm::Fill => f::OBJECT_FILL,
        ObjectForm::State => f::OBJECT_STATE,
    });
}

/// NDARRAY: the caller writes the dtype description next, then
/// [`write_ndarray_shape`] and [`write_ndarray_data`].
pub fn write_ndarray_header(out: &mut Out) {
    out.push(f::NDARRAY);
}

/// NPSCALAR: the caller writes the dtype description next, then
/// [`write_blob`].
pub fn write_npscalar_header(out: &mut Out) {
    out.push(f::NPSCALAR);
}

pub fn write_date(out: &mut Out, year: u16, month: u8, day: u8) {
    out.push(f::DATE);
    out.extend(&year.to_le_bytes());
    out.extend(&[month, day]);
}

/// TIME: the caller writes the tzinfo item next when `tz` is set.
pub fn write_time(out: &mut Out, h: u8, m: u8, s: u8, us: u32, fold: bool, tz: bool) {
    out.extend(&[f::TIME, dt_flags(fold, tz), h, m, s]);
    out.extend(&us.to_le_bytes());
}

/// DATETIME: the caller writes the tzinfo item next when `tz` is set.
#[allow(clippy::too_many_arguments)]
pub fn write_datetime(
    out: &mut Out,
    year: u16,
    month: u8,
    day: u8,
    h: u8,
    m: u8,
    s: u8,
    us: u32,
    fold: bool,
    tz: bool,
) {
    out.extend(&[f::DATETIME, dt_flags(fold, tz)]);
    out.extend(&year.to_le_bytes());
    out.extend(&[month, day, h, m, s]);
    out.extend(&us.to_le_bytes());
}

fn dt_flags(fold: bool, tz: bool) -> u8 {
    (if fold { f::DT_FOLD } else { 0 }) | (if tz { f::DT_TZ } else { 0 })
}

pub fn write_timedelta(out: &mut Out, days: i32, seconds: i32, micros: i32) {
    out.push(f::TIMEDELTA);
    out.extend(&days.to_le_bytes());
    out.extend(&seconds.to_le_bytes());
    out.extend(&micros.to_le_bytes());
}

/// TZ_FIXED: the caller writes the name item (None or str) next.
pub fn write_tz_fixed(out: &mut Out, offset_us: i64) {
    out.push(f::TZ_FIXED);
    out.extend(&offset_us.to_le_bytes());
}

pub fn write_decimal(out: &mut Out, ascii: &[u8]) {
    out.push(f::DECIMAL);
    out.varint(ascii.len() as u64);
    out.extend(ascii);
}

pub fn write_uuid(out: &mut Out, bytes: &[u8; 16], safe: u8) {
    out.push(f::UUID);
    out.extend(bytes);
    out.push(safe);
}

/// NDARRAY up to its data: the caller has written the dtype item.
pub fn write_ndarray_shape(out: &mut Out, shape: &[u64], fortran: bool, oob: Option<usize>) {
    out.push(shape.len() as u8);
    for &d in shape {
        out.varint(d);
    }
    let flags =
        (if fortran { f::ND_FORTRAN } else { 0 }) | (if oob.is_some() { f::ND_OOB } else { 0 });
    out.push(flags);
    if let Some(i) = oob {
        out.varint(i as u64);
    }
}

/// NDARRAY of items (`ND_ITEMS`) up to its data: the caller has written the
/// dtype item, and writes the LIST of elements next (in Fortran order when
/// `fortran`).
pub fn write_ndarray_items_shape(out: &mut Out, shape: &[u64], fortran: bool) {
    out.push(shape.len() as u8);
    for &d in shape {
        out.varint(d);
    }
    out.push(f::ND_ITEMS | if fortran { f::ND_FORTRAN } else { 0 });
}

/// ARROW: the caller writes the extras item next, then
/// [`write_arrow_flags`] and, in band, [`write_ndarray_data`].
pub fn write_arrow_header(out: &mut Out, kind: u8) {
    out.extend(&[f::ARROW, kind]);
}

/// An ARROW item's flags (`described`: `ARROW_DESCRIBED`), and its buffer
/// index when the stream travels out of band.
pub fn write_arrow_flags(out: &mut Out, oob: Option<usize>, described: bool) {
    let described = if described { f::ARROW_DESCRIBED } else { 0 };
    match oob {
        Some(i) => {
            out.push(f::ND_OOB | described);
            out.varint(i as u64);
        }
        None => out.push(described),
    }
}

/// In-band array bytes (and ARROW streams), padded so they start
/// `ND_ALIGN`-aligned relative to the frame that begins at `frame_start` in
/// `out`.
pub fn write_ndarray_data(out: &mut Out, frame_start: usize, data: &[u8]) {
    out.varint(data.len() as u64);
    let after_pad_byte = out.len() + 1 - frame_start;
    let pad = (f::ND_ALIGN - after_pad_byte % f::ND_ALIGN) % f::ND_ALIGN;
    out.push(pad as u8);
    out.zeros(pad);
    out.extend(data);
}

/// A varint-prefixed byte string (NPSCALAR payloads).
pub fn write_blob(out: &mut Out, b: &[u8]) {
    out.varint(b.len() as u64);
    out.extend(b);
}
