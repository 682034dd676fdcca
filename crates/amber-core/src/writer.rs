//! Encoder primitives: each appends one item header (or a whole scalar item)
//! in its shortest form. The walker that decides what to write lives with
//! the objects it walks (amber-py for Python objects).

use crate::format as f;
use crate::varint;

/// Append a fixed-size array: one capacity check and one store, where
/// `extend_from_slice` would call `memcpy` for a few bytes.
#[inline(always)]
pub fn put<const N: usize>(out: &mut Vec<u8>, bytes: [u8; N]) {
    out.reserve(N);
    let len = out.len();
    // SAFETY: `reserve` made room for N more bytes after `len`.
    unsafe {
        std::ptr::write_unaligned(out.as_mut_ptr().add(len) as *mut [u8; N], bytes);
        out.set_len(len + N);
    }
}

/// Append a tag byte followed by a varint.
#[inline(always)]
fn put_tag_varint(out: &mut Vec<u8>, tag: u8, v: u64) {
    if v < 0x80 {
        put(out, [tag, v as u8]);
    } else {
        out.push(tag);
        varint::write(out, v);
    }
}

/// Append a byte slice; up to 16 bytes without a `memcpy` call.
#[inline(always)]
fn put_slice(out: &mut Vec<u8>, b: &[u8]) {
    let n = b.len();
    if (4..=16).contains(&n) {
        out.reserve(n);
        let len = out.len();
        // SAFETY: room for n bytes reserved; the overlapping stores write
        // exactly bytes len..len+n.
        unsafe {
            let dst = out.as_mut_ptr().add(len);
            let src = b.as_ptr();
            if n >= 8 {
                let head = std::ptr::read_unaligned(src as *const u64);
                let tail = std::ptr::read_unaligned(src.add(n - 8) as *const u64);
                std::ptr::write_unaligned(dst as *mut u64, head);
                std::ptr::write_unaligned(dst.add(n - 8) as *mut u64, tail);
            } else {
                let head = std::ptr::read_unaligned(src as *const u32);
                let tail = std::ptr::read_unaligned(src.add(n - 4) as *const u32);
                std::ptr::write_unaligned(dst as *mut u32, head);
                std::ptr::write_unaligned(dst.add(n - 4) as *mut u32, tail);
            }
            out.set_len(len + n);
        }
        return;
    }
    out.reserve(b.len());
    let len = out.len();
    // SAFETY: room reserved above; the source cannot overlap our buffer.
    unsafe {
        std::ptr::copy_nonoverlapping(b.as_ptr(), out.as_mut_ptr().add(len), b.len());
        out.set_len(len + b.len());
    }
}

/// Reserve the header at the end of `out`; returns the frame's start.
#[inline]
pub fn begin_frame(out: &mut Vec<u8>) -> usize {
    let start = out.len();
    out.extend_from_slice(&[f::MAGIC, f::VERSION, 0, 0, 0, 0, 0, 0]);
    start
}

/// Fill in the header reserved by [`begin_frame`] now that the body is written.
pub fn finish_frame(out: &mut Vec<u8>, start: usize) {
    let body = (out.len() - start - f::HEADER_LEN) as u64;
    match u32::try_from(body) {
        Ok(n) => out[start + 4..start + 8].copy_from_slice(&n.to_le_bytes()),
        Err(_) => {
            // Bodies of 4 GiB and more: a u64 length after the short header.
            // Eight bytes keep in-band array data aligned to ND_ALIGN.
            out[start + 2] = f::FLAG_LONG;
            let at = start + f::HEADER_LEN;
            out.splice(at..at, body.to_le_bytes());
        }
    }
}

#[inline(always)]
pub fn write_none(out: &mut Vec<u8>) {
    put(out, [f::NONE]);
}

#[inline(always)]
pub fn write_bool(out: &mut Vec<u8>, v: bool) {
    put(out, [if v { f::TRUE } else { f::FALSE }]);
}

/// An int that fits in i64, in its shortest form.
#[inline(always)]
pub fn write_int(out: &mut Vec<u8>, v: i64) {
    if (-32..=f::FIXINT_MAX as i64).contains(&v) {
        // 0..=63 are themselves; -32..=-1 are 0xE0..=0xFF.
        put(out, [v as i8 as u8]);
    } else if v as i8 as i64 == v {
        put(out, [f::INT8, v as u8]);
    } else if v as i16 as i64 == v {
        let b = (v as i16).to_le_bytes();
        put(out, [f::INT16, b[0], b[1]]);
    } else if v as i32 as i64 == v {
        let b = (v as i32).to_le_bytes();
        put(out, [f::INT32, b[0], b[1], b[2], b[3]]);
    } else {
        let b = v.to_le_bytes();
        put(
            out,
            [f::INT64, b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]],
        );
    }
}

/// An int outside i64, as little-endian two's complement in shortest form
/// (more than 8 bytes).
pub fn write_bigint(out: &mut Vec<u8>, le: &[u8]) {
    out.push(f::BIGINT);
    varint::write(out, le.len() as u64);
    out.extend_from_slice(le);
}

#[inline(always)]
pub fn write_float(out: &mut Vec<u8>, v: f64) {
    let b = v.to_le_bytes();
    put(
        out,
        [f::FLOAT64, b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]],
    );
}

pub fn write_complex(out: &mut Vec<u8>, re: f64, im: f64) {
    out.push(f::COMPLEX);
    out.extend_from_slice(&re.to_le_bytes());
    out.extend_from_slice(&im.to_le_bytes());
}

/// A str that is not entered in the string table.
#[inline(always)]
pub fn write_str(out: &mut Vec<u8>, utf8: &[u8]) {
    if utf8.len() <= f::FIXSTR_MAX_LEN {
        put(out, [f::FIXSTR + utf8.len() as u8]);
    } else {
        put_tag_varint(out, f::STR, utf8.len() as u64);
    }
    put_slice(out, utf8);
}

/// A str that the decoder enters in its string table as the next entry.
#[inline(always)]
pub fn write_str_def(out: &mut Vec<u8>, utf8: &[u8]) {
    put_tag_varint(out, f::STR_DEF, utf8.len() as u64);
    put_slice(out, utf8);
}

/// A reference to string-table entry `i`.
#[inline(always)]
pub fn write_str_ref(out: &mut Vec<u8>, i: usize) {
    if i <= f::FIXREF_MAX {
        put(out, [f::FIXREF + i as u8]);
    } else {
        put_tag_varint(out, f::STR_REF, i as u64);
    }
}

/// A str holding lone surrogates, in UTF-8 extended to encode them.
pub fn write_str_surrogates(out: &mut Vec<u8>, raw: &[u8]) {
    out.push(f::STR_SURROGATES);
    varint::write(out, raw.len() as u64);
    out.extend_from_slice(raw);
}

#[inline(always)]
pub fn write_bytes(out: &mut Vec<u8>, b: &[u8], bytearray: bool) {
    out.push(if bytearray { f::BYTEARRAY } else { f::BYTES });
    varint::write(out, b.len() as u64);
    out.extend_from_slice(b);
}

pub fn write_bytes_oob(out: &mut Vec<u8>, index: usize, bytearray: bool) {
    out.push(if bytearray {
        f::BYTEARRAY_OOB
    } else {
        f::BYTES_OOB
    });
    varint::write(out, index as u64);
}

/// A container header: `fix` is the fixed-length range start (or `None`).
#[inline(always)]
fn write_container(out: &mut Vec<u8>, fix: Option<(u8, usize)>, tag: u8, n: usize) {
    match fix {
        Some((base, max)) if n <= max => put(out, [base + n as u8]),
        _ => put_tag_varint(out, tag, n as u64),
    }
}

#[inline(always)]
pub fn write_list_header(out: &mut Vec<u8>, n: usize) {
    write_container(out, Some((f::FIXLIST, f::FIXLIST_MAX_LEN)), f::LIST, n);
}

#[inline(always)]
pub fn write_tuple_header(out: &mut Vec<u8>, n: usize) {
    write_container(out, Some((f::FIXTUPLE, f::FIXTUPLE_MAX_LEN)), f::TUPLE, n);
}

#[inline(always)]
pub fn write_dict_header(out: &mut Vec<u8>, n: usize) {
    write_container(out, Some((f::FIXDICT, f::FIXDICT_MAX_LEN)), f::DICT, n);
}

/// A dict of `n` pairs written keys first, defining the next shape.
#[inline(always)]
pub fn write_shape_def_header(out: &mut Vec<u8>, n: usize) {
    put_tag_varint(out, f::SHAPE_DEF, n as u64);
}

/// A dict with the keys of shape `s`; its values follow.
#[inline(always)]
pub fn write_shaped_header(out: &mut Vec<u8>, s: usize) {
    put_tag_varint(out, f::SHAPED, s as u64);
}

/// The REPLACE marker for memo entry `idx` that takes the place of a
/// one-byte SHARE marker already written: padded so that everything after
/// it moves by a multiple of `REPLACE_ALIGN` (in-band array data stays
/// aligned).
pub fn replace_marker(idx: usize) -> Vec<u8> {
    let mut m = vec![f::REPLACE];
    varint::write(&mut m, idx as u64);
    let shift = m.len(); // the marker so far, less the SHARE byte, plus the pad count byte
    let pad = (f::REPLACE_ALIGN - shift % f::REPLACE_ALIGN) % f::REPLACE_ALIGN;
    m.push(pad as u8);
    m.extend(std::iter::repeat_n(0u8, pad));
    m
}

/// Headers with no short form: SET, FROZENSET, ORDERED_DICT, COUNTER.
pub fn write_counted(out: &mut Vec<u8>, tag: u8, n: usize) {
    write_container(out, None, tag, n);
}

pub fn write_defaultdict_header(out: &mut Vec<u8>, factory: u8, n: usize) {
    out.extend_from_slice(&[f::DEFAULTDICT, factory]);
    varint::write(out, n as u64);
}

/// DEQUE: the caller writes maxlen (an item) next, then [`write_count`].
pub fn write_count(out: &mut Vec<u8>, n: usize) {
    varint::write(out, n as u64);
}

pub fn write_date(out: &mut Vec<u8>, year: u16, month: u8, day: u8) {
    out.push(f::DATE);
    out.extend_from_slice(&year.to_le_bytes());
    out.extend_from_slice(&[month, day]);
}

/// TIME: the caller writes the tzinfo item next when `tz` is set.
pub fn write_time(out: &mut Vec<u8>, h: u8, m: u8, s: u8, us: u32, fold: bool, tz: bool) {
    out.extend_from_slice(&[f::TIME, dt_flags(fold, tz), h, m, s]);
    out.extend_from_slice(&us.to_le_bytes());
}

/// DATETIME: the caller writes the tzinfo item next when `tz` is set.
#[allow(clippy::too_many_arguments)]
pub fn write_datetime(
    out: &mut Vec<u8>,
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
    out.extend_from_slice(&[f::DATETIME, dt_flags(fold, tz)]);
    out.extend_from_slice(&year.to_le_bytes());
    out.extend_from_slice(&[month, day, h, m, s]);
    out.extend_from_slice(&us.to_le_bytes());
}

fn dt_flags(fold: bool, tz: bool) -> u8 {
    (if fold { f::DT_FOLD } else { 0 }) | (if tz { f::DT_TZ } else { 0 })
}

pub fn write_timedelta(out: &mut Vec<u8>, days: i32, seconds: i32, micros: i32) {
    out.push(f::TIMEDELTA);
    out.extend_from_slice(&days.to_le_bytes());
    out.extend_from_slice(&seconds.to_le_bytes());
    out.extend_from_slice(&micros.to_le_bytes());
}

/// TZ_FIXED: the caller writes the name item (None or str) next.
pub fn write_tz_fixed(out: &mut Vec<u8>, offset_us: i64) {
    out.push(f::TZ_FIXED);
    out.extend_from_slice(&offset_us.to_le_bytes());
}

pub fn write_decimal(out: &mut Vec<u8>, ascii: &[u8]) {
    out.push(f::DECIMAL);
    varint::write(out, ascii.len() as u64);
    out.extend_from_slice(ascii);
}

pub fn write_uuid(out: &mut Vec<u8>, bytes: &[u8; 16], safe: u8) {
    out.push(f::UUID);
    out.extend_from_slice(bytes);
    out.push(safe);
}

/// NDARRAY up to its data: the caller has written the dtype item.
pub fn write_ndarray_shape(out: &mut Vec<u8>, shape: &[u64], fortran: bool, oob: Option<usize>) {
    out.push(shape.len() as u8);
    for &d in shape {
        varint::write(out, d);
    }
    let flags =
        (if fortran { f::ND_FORTRAN } else { 0 }) | (if oob.is_some() { f::ND_OOB } else { 0 });
    out.push(flags);
    if let Some(i) = oob {
        varint::write(out, i as u64);
    }
}

/// In-band array bytes, padded so they start `ND_ALIGN`-aligned relative to
/// the frame that begins at `frame_start` in `out`.
pub fn write_ndarray_data(out: &mut Vec<u8>, frame_start: usize, data: &[u8]) {
    varint::write(out, data.len() as u64);
    let after_pad_byte = out.len() + 1 - frame_start;
    let pad = (f::ND_ALIGN - after_pad_byte % f::ND_ALIGN) % f::ND_ALIGN;
    out.push(pad as u8);
    out.extend(std::iter::repeat_n(0u8, pad));
    out.extend_from_slice(data);
}

/// A varint-prefixed byte string (NPSCALAR payloads).
pub fn write_blob(out: &mut Vec<u8>, b: &[u8]) {
    varint::write(out, b.len() as u64);
    out.extend_from_slice(b);
}
