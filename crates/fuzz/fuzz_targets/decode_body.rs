//! Arbitrary bytes as the body of a frame with a valid header, so every
//! input reaches the item decoder at once instead of being refused at the
//! magic byte.
//!
//! Checks: no panic, hang or stack overflow with the default limit and with
//! `max_depth: 64`; every error lies inside the body (offset between the
//! header's end and the input's end); a frame accepted under the small limit
//! is accepted with the same counts under the default one, and a format
//! error under the small limit is the same error under the default one; the
//! same body behind the 16-byte long header (FLAG_LONG) gives the same
//! verdict, with error offsets moved by exactly 8 bytes.
#![no_main]

use amber_core::codec::error::ErrorKind;
use amber_core::codec::format as f;
use amber_core::codec::validate::validate;
use amber_core::codec::walker::Limits;
use libfuzzer_sys::fuzz_target;

fn short_frame(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(f::HEADER_LEN + body.len());
    out.extend_from_slice(&[f::MAGIC, f::VERSION, 0, 0]);
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out.extend_from_slice(body);
    out
}

fn long_frame(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(f::HEADER_LEN_LONG + body.len());
    out.extend_from_slice(&[f::MAGIC, f::VERSION, f::FLAG_LONG, 0, 0, 0, 0, 0]);
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(body);
    out
}

fuzz_target!(|body: &[u8]| {
    let frame = short_frame(body);
    let small = validate(&frame, Limits { max_depth: 64 });
    let default = validate(&frame, Limits::default());

    for r in [&small, &default] {
        if let Err(e) = r {
            assert!(
                (f::HEADER_LEN..=frame.len()).contains(&e.offset),
                "error offset {} outside the body (8..={}): {e}",
                e.offset,
                frame.len()
            );
        }
    }

    match (&small, &default) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "depth limit changed the counts"),
        (Ok(_), Err(e)) => panic!("accepted at max_depth 64, refused at the default: {e}"),
        (Err(e), Ok(_)) => assert!(
            e.kind() == Some(ErrorKind::Limit),
            "refused at max_depth 64 for a non-limit reason: {e}"
        ),
        (Err(a), Err(b)) => {
            if a.kind() != Some(ErrorKind::Limit) {
                assert_eq!(a.offset, b.offset, "same walk, different error");
            }
        }
    }

    if let Ok(stats) = &default {
        assert!(stats.items as usize <= body.len(), "more values than bytes");
    }

    // The long header changes nothing but the offsets.
    let long = validate(&long_frame(body), Limits::default());
    match (&default, &long) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "long header changed the counts"),
        (Err(a), Err(b)) => assert_eq!(
            a.offset + 8,
            b.offset,
            "long header moved the error by other than 8 bytes: {a} / {b}"
        ),
        (a, b) => panic!("short and long header disagree: {a:?} / {b:?}"),
    }
});
