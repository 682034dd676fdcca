//! Arrays in PostgreSQL's binary send format (`array_send` / `array_recv`):
//!
//! ```text
//! int32  ndim           0 for an empty array, at most 6 (MAXDIM)
//! int32  flags          1 if the array has a NULL bitmap, else 0
//! uint32 element OID
//! ndim x (int32 length, int32 lower bound)
//! each element, in row-major order: int32 length (-1 = NULL), its bytes
//!                        in the element type's send format
//! ```
//!
//! The decoder returns the dimensions and the flat list of element slices
//! (the caller nests them and decodes each with the element type's decoder).
//! It checks the element OID against the one expected, refuses negative
//! lengths and bounds that overflow (`ArrayCheckBounds`), and checks the
//! element count against the bytes present before allocating anything for
//! it: each element takes at least its 4-byte length word. The flags word
//! is only checked to be 0 or 1, as `array_recv` does: PostgreSQL may send 1
//! for an array whose bitmap holds no NULL.

use crate::bytes::reader::Reader;
use crate::pg::error::{PgError, PgErrorKind, Res};
use crate::pg::wire::{put_i32, put_u32, write_len_prefixed, NULL_LEN};

/// PostgreSQL's largest number of array dimensions.
pub const MAXDIM: usize = 6;

/// One dimension: its length and the index of its first element (1 unless
/// the array was built with other bounds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ArrayDim {
    pub len: i32,
    pub lower: i32,
}

/// One element: its bytes (`None` for NULL) and the offset of its first
/// byte (after the length word) in the array value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArrayElement<'a> {
    pub value: Option<&'a [u8]>,
    pub offset: usize,
}

/// A decoded array: element OID, dimensions (empty for an empty array) and
/// the elements in row-major order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Array<'a> {
    pub elem_oid: u32,
    pub dims: Vec<ArrayDim>,
    pub elements: Vec<ArrayElement<'a>>,
}

/// Decode an array value. `expected_elem` is the element type's OID; a
/// different OID in the data is a `TypeMismatch` error (`None` accepts any).
pub fn decode_array(b: &[u8], expected_elem: Option<u32>) -> Res<Array<'_>> {
    let mut r = Reader::new(b);
    let ndim = r.u32_be("array ndim")? as i32;
    if !(0..=MAXDIM as i32).contains(&ndim) {
        return Err(PgError::malformed(format!(
            "array has {ndim} dimensions: PostgreSQL allows 0 to {MAXDIM}"
        ))
        .at(0));
    }
    let flags = r.u32_be("array flags")?;
    if flags > 1 {
        return Err(PgError::malformed(format!("array flags {flags} are neither 0 nor 1")).at(4));
    }
    let elem_oid = r.u32_be("array element OID")?;
    if let Some(want) = expected_elem {
        if elem_oid != want {
            return Err(PgError::new(
                PgErrorKind::TypeMismatch,
                format!("array element type OID is {elem_oid}, expected {want}"),
            )
            .at(8));
        }
    }
    let mut dims = Vec::with_capacity(ndim as usize);
    let mut count: u64 = 1;
    for i in 0..ndim as usize {
        let at = r.pos() as u64;
        let len = r.u32_be("array dimension length")? as i32;
        let lower = r.u32_be("array lower bound")? as i32;
        if len < 0 {
            return Err(PgError::malformed(format!("array dimension {i} has length {len}")).at(at));
        }
        if lower.checked_add(len).is_none() {
            return Err(PgError::malformed(format!(
                "array dimension {i}: lower bound {lower} plus length {len} overflows"
            ))
            .at(at));
        }
        // Each factor < 2^31 and the running product is capped below: no
        // overflow.
        count = count.saturating_mul(len as u64);
        dims.push(ArrayDim { len, lower });
    }
    if ndim == 0 {
        count = 0;
    }
    let left = r.remaining() as u64;
    if count > left / 4 {
        return Err(PgError::malformed(format!(
            "array claims {count} elements; the {left} bytes left hold at most {}",
            left / 4
        ))
        .at(r.pos() as u64));
    }
    let mut elements = Vec::with_capacity(count as usize);
    for i in 0..count {
        let at = r.pos();
        let len = r.u32_be("array element length")? as i32;
        let value = match len {
            NULL_LEN => None,
            n if n < 0 => {
                return Err(
                    PgError::malformed(format!("array element {i} has length {n}")).at(at as u64),
                )
            }
            n => Some(r.take(n as usize, "array element")?),
        };
        elements.push(ArrayElement {
            value,
            offset: at + 4,
        });
    }
    if !r.is_empty() {
        return Err(PgError::malformed(format!(
            "{} bytes after the array's last element",
            r.remaining()
        ))
        .at(r.pos() as u64));
    }
    Ok(Array {
        elem_oid,
        dims,
        elements,
    })
}

/// Writes an array element by element straight into the output: the header
/// first with the count left open, each element through the element type's
/// encoder (its length word patched in place), then [`ArrayEncoder::finish`]
/// writes the count. An encoder dropped before `finish` leaves a partial
/// array in the buffer; the COPY writer's field helper cuts it away when the
/// closure that holds the encoder returns an error.
pub struct ArrayEncoder<'o> {
    out: &'o mut Vec<u8>,
    start: usize,
    elem_oid: u32,
    /// `None` for one dimension of open length; else the fixed dimensions.
    dims: Option<Vec<ArrayDim>>,
    count: u64,
    has_null: bool,
}

impl<'o> ArrayEncoder<'o> {
    /// A one-dimensional array (lower bound 1) of elements of type
    /// `elem_oid`.
    pub fn new(out: &'o mut Vec<u8>, elem_oid: u32) -> Self {
        let start = out.len();
        put_i32(out, 1);
        put_i32(out, 0);
        put_u32(out, elem_oid);
        put_i32(out, 0);
        put_i32(out, 1);
        ArrayEncoder {
            out,
            start,
            elem_oid,
            dims: None,
            count: 0,
            has_null: false,
        }
    }

    /// An array of the given dimensions (row-major elements follow); their
    /// product must equal the number of elements pushed.
    pub fn with_dims(out: &'o mut Vec<u8>, elem_oid: u32, dims: &[ArrayDim]) -> Res<Self> {
        if dims.len() > MAXDIM {
            return Err(PgError::invalid_value(format!(
                "array of {} dimensions: PostgreSQL allows at most {MAXDIM}",
                dims.len()
            )));
        }
        for (i, d) in dims.iter().enumerate() {
            if d.len < 0 || d.lower.checked_add(d.len).is_none() {
                return Err(PgError::invalid_value(format!(
                    "array dimension {i}: length {} from lower bound {} is invalid",
                    d.len, d.lower
                )));
            }
        }
        let start = out.len();
        put_i32(out, dims.len() as i32);
        put_i32(out, 0);
        put_u32(out, elem_oid);
        for d in dims {
            put_i32(out, d.len);
            put_i32(out, d.lower);
        }
        Ok(ArrayEncoder {
            out,
            start,
            elem_oid,
            dims: Some(dims.to_vec()),
            count: 0,
            has_null: false,
        })
    }

    /// Append one element written by `encode` (the element type's encoder).
    pub fn push<F>(&mut self, encode: F) -> Res<()>
    where
        F: FnOnce(&mut Vec<u8>) -> Res<()>,
    {
        write_len_prefixed(self.out, encode)?;
        self.count += 1;
        Ok(())
    }

    /// Append one element already in its send format.
    pub fn push_bytes(&mut self, b: &[u8]) -> Res<()> {
        self.push(|o| {
            o.extend_from_slice(b);
            Ok(())
        })
    }

    pub fn push_null(&mut self) {
        put_i32(self.out, NULL_LEN);
        self.count += 1;
        self.has_null = true;
    }

    /// Write the element count and the NULL flag. An empty one-dimensional
    /// array becomes PostgreSQL's empty array (ndim 0, no dimensions).
    pub fn finish(self) -> Res<()> {
        let s = self.start;
        if self.has_null {
            self.out[s + 4..s + 8].copy_from_slice(&1i32.to_be_bytes());
        }
        match &self.dims {
            None if self.count == 0 => {
                self.out.truncate(s);
                put_i32(self.out, 0);
                put_i32(self.out, 0);
                put_u32(self.out, self.elem_oid);
            }
            None => {
                let Ok(n) = i32::try_from(self.count) else {
                    return Err(PgError::out_of_range(format!(
                        "array of {} elements is longer than an int32 length allows",
                        self.count
                    )));
                };
                self.out[s + 12..s + 16].copy_from_slice(&n.to_be_bytes());
            }
            Some(dims) => {
                let want = dims
                    .iter()
                    .fold(if dims.is_empty() { 0u64 } else { 1 }, |a, d| {
                        a.saturating_mul(d.len as u64)
                    });
                if want != self.count {
                    return Err(PgError::new(
                        PgErrorKind::FieldCount,
                        format!(
                            "array dimensions hold {want} elements, {} were written",
                            self.count
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// A one-dimensional array from elements already in their send format.
pub fn encode_array_1d<'e, I>(out: &mut Vec<u8>, elem_oid: u32, items: I) -> Res<()>
where
    I: IntoIterator<Item = Option<&'e [u8]>>,
{
    let mut a = ArrayEncoder::new(out, elem_oid);
    for item in items {
        match item {
            Some(b) => a.push_bytes(b)?,
            None => a.push_null(),
        }
    }
    a.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn be(words: &[i32]) -> Vec<u8> {
        words.iter().flat_map(|w| w.to_be_bytes()).collect()
    }

    #[test]
    fn int4_array_with_null() {
        // '{1,NULL,3}'::int4[]
        let mut out = Vec::new();
        let one = 1i32.to_be_bytes();
        let three = 3i32.to_be_bytes();
        encode_array_1d(&mut out, 23, [Some(&one[..]), None, Some(&three[..])]).unwrap();
        let want = be(&[1, 1, 23, 3, 1, 4, 1, -1, 4, 3]);
        assert_eq!(out, want);
        let a = decode_array(&out, Some(23)).unwrap();
        assert_eq!(a.dims, [ArrayDim { len: 3, lower: 1 }]);
        let vals: Vec<_> = a.elements.iter().map(|e| e.value).collect();
        assert_eq!(vals, [Some(&one[..]), None, Some(&three[..])]);
        assert_eq!(a.elements[0].offset, 24);
        assert_eq!(
            decode_array(&out, Some(20)).unwrap_err().kind,
            PgErrorKind::TypeMismatch
        );
    }

    #[test]
    fn empty_array_has_no_dimensions() {
        let mut out = Vec::new();
        encode_array_1d(&mut out, 25, std::iter::empty()).unwrap();
        assert_eq!(out, be(&[0, 0, 25]));
        let a = decode_array(&out, Some(25)).unwrap();
        assert!(a.dims.is_empty() && a.elements.is_empty());
    }

    #[test]
    fn two_dimensions() {
        // '{{1,2},{3,4}}'::int2[]
        let dims = [ArrayDim { len: 2, lower: 1 }, ArrayDim { len: 2, lower: 1 }];
        let mut out = Vec::new();
        let mut a = ArrayEncoder::with_dims(&mut out, 21, &dims).unwrap();
        for v in 1i16..=4 {
            a.push_bytes(&v.to_be_bytes()).unwrap();
        }
        a.finish().unwrap();
        let mut want = be(&[2, 0, 21, 2, 1, 2, 1]);
        for v in 1i16..=4 {
            want.extend(be(&[2]));
            want.extend(v.to_be_bytes());
        }
        assert_eq!(out, want);
        let back = decode_array(&out, Some(21)).unwrap();
        assert_eq!(back.dims, dims);
        assert_eq!(back.elements.len(), 4);
        let mut out = Vec::new();
        let a = ArrayEncoder::with_dims(&mut out, 21, &dims).unwrap();
        assert!(a.finish().is_err());
    }

    #[test]
    fn hostile_headers() {
        for (bad, at) in [
            (be(&[7, 0, 23]), 0),
            (be(&[-1, 0, 23]), 0),
            (be(&[1, 2, 23, 1, 1, 4, 0]), 4),
            (be(&[1, 0, 23, -1, 1]), 12),
            (be(&[1, 0, 23, 2, i32::MAX]), 12),
            // 2^31-1 elements claimed with 4 bytes present.
            (be(&[1, 0, 23, i32::MAX, 0, -1]), 20),
            (be(&[2, 0, 23, 65536, 1, 65536, 1, -1]), 28),
            (be(&[1, 0, 23, 1, 1, -2]), 20),
            (be(&[1, 0, 23, 1, 1, -1, 0]), 24),
            (be(&[0, 0, 23, 0]), 12),
        ] {
            let e = decode_array(&bad, Some(23)).unwrap_err();
            assert_eq!(e.offset, Some(at), "{bad:?}: {e}");
        }
        assert!(decode_array(&be(&[1, 0, 23, 1, 1, 5, 0]), None).is_err());
    }

    #[test]
    fn zero_length_dimension_is_empty() {
        let b = be(&[1, 0, 23, 0, 1]);
        let a = decode_array(&b, Some(23)).unwrap();
        assert!(a.elements.is_empty());
    }
}
