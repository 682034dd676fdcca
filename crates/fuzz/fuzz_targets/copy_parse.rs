//! The COPY BINARY parser on arbitrary bytes: the first input byte picks
//! where the rest is split into two chunks; every field of every row goes
//! through every type decoder, scalar and array.
//!
//! Checks: nothing panics; the parser gives the same rows and the same
//! outcome (error kind, or rows at the trailer) whether the input arrives
//! split or whole; every field lies inside the input.
#![no_main]

use amber_core::pg::copy::CopyParser;
use amber_core::pg::error::PgErrorKind;
use amber_core::pg::types::{decode_value, PgType, Scalar};
use libfuzzer_sys::fuzz_target;

type Rows = Vec<Vec<(u64, Option<Vec<u8>>)>>;

fn drain(p: &mut CopyParser, rows: &mut Rows, decode: bool) -> Result<(), PgErrorKind> {
    while let Some(row) = p.next_row().map_err(|e| e.kind)? {
        let mut fields = Vec::with_capacity(row.len());
        for f in row.fields() {
            if let (true, Some(b)) = (decode, f.value) {
                for s in Scalar::ALL {
                    let _ = decode_value(PgType::Scalar(s), b);
                    let _ = decode_value(PgType::Array(s), b);
                }
            }
            fields.push((f.offset, f.value.map(<[u8]>::to_vec)));
        }
        assert_eq!(fields.len(), row.len());
        rows.push(fields);
    }
    Ok(())
}

fn parse(chunks: &[&[u8]], decode: bool) -> (Rows, Result<u64, PgErrorKind>) {
    let mut p = CopyParser::new();
    let mut rows = Vec::new();
    for chunk in chunks {
        if let Err(k) = p.feed(chunk).map_err(|e| e.kind) {
            return (rows, Err(k));
        }
        if let Err(k) = drain(&mut p, &mut rows, decode) {
            return (rows, Err(k));
        }
    }
    let end = p.finish().map_err(|e| e.kind);
    (rows, end)
}

fuzz_target!(|input: &[u8]| {
    let Some((&first, data)) = input.split_first() else {
        return;
    };
    let split = usize::from(first) * data.len() / 255;
    let (a, b) = data.split_at(split);
    let split_result = parse(&[a, b], true);
    let whole_result = parse(&[data], false);
    assert_eq!(split_result, whole_result);
    for row in &split_result.0 {
        for (offset, value) in row {
            let end = offset + 4 + value.as_ref().map_or(0, |v| v.len() as u64);
            assert!(end <= data.len() as u64);
        }
    }
});
