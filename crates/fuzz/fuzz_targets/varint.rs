//! Varints: `read` on arbitrary bytes, and write -> read for every value.
//!
//! Checks: `read` never panics; a successful read uses 1..=10 bytes of the
//! input, and those bytes are exactly what `write` makes for the value (only
//! the shortest encoding is accepted); for a value taken from the input,
//! `write` then `read` gives it back, `len` matches the bytes written, and
//! every strict prefix of the encoding reads as `Truncated`.
#![no_main]

use amber_core::bytes::varint::{self, VarintError, MAX_LEN};
use libfuzzer_sys::fuzz_target;

fn round_trip(v: u64) {
    let mut out = Vec::new();
    varint::write(&mut out, v);
    assert_eq!(out.len(), varint::len(v), "len({v})");
    assert!((1..=MAX_LEN).contains(&out.len()));
    assert_eq!(varint::read(&out), Ok((v, out.len())), "read(write({v}))");
    // Trailing bytes are left alone.
    let mut padded = out.clone();
    padded.extend_from_slice(&[0xFF, 0x00]);
    assert_eq!(varint::read(&padded), Ok((v, out.len())));
    for n in 0..out.len() {
        assert_eq!(
            varint::read(&out[..n]),
            Err(VarintError::Truncated),
            "prefix {n} of {v}"
        );
    }
}

fuzz_target!(|data: &[u8]| {
    match varint::read(data) {
        Ok((v, n)) => {
            assert!((1..=MAX_LEN).contains(&n) && n <= data.len());
            let mut out = Vec::new();
            varint::write(&mut out, v);
            assert_eq!(&out[..], &data[..n], "accepted a non-canonical varint");
            assert_eq!(varint::len(v), n);
        }
        Err(VarintError::Truncated) => {
            // Every byte present continues the varint, and there are fewer
            // than MAX_LEN of them.
            assert!(data.len() < MAX_LEN && data.iter().all(|&b| b & 0x80 != 0));
        }
        Err(VarintError::Invalid) => {}
    }

    // Values taken from the input: the 8-byte windows, and each byte's
    // value shifted to every position (so short and long encodings and all
    // their boundaries are covered).
    for chunk in data.chunks(8) {
        let mut b = [0u8; 8];
        b[..chunk.len()].copy_from_slice(chunk);
        let v = u64::from_le_bytes(b);
        round_trip(v);
        round_trip(v >> (b[0] % 64));
    }
    if let Some(&b) = data.first() {
        let shift = u32::from(b % 64);
        round_trip(1u64 << shift);
        round_trip((1u64 << shift).wrapping_sub(1));
    }
});
