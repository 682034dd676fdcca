//! Arbitrary bytes into the validator: a whole frame, header included.
//!
//! Checks: `validate` never panics, hangs or overflows the stack (with the
//! default depth limit and with no limit at all, where only the decoder's
//! on-demand stack growth stands between deep input and a crash); every
//! error has an offset inside the input; an accepted input is exactly one
//! frame (its header's length matches, and one byte less or more is refused);
//! lifting the depth limit never turns an accepted frame into a refused one;
//! an accepted frame makes no more values than it has bytes.
#![no_main]

use amber_core::codec::error::ErrorKind;
use amber_core::codec::header::parse_header;
use amber_core::codec::validate::validate;
use amber_core::codec::walker::Limits;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The header parser on its own.
    match parse_header::<()>(data) {
        Ok(h) => {
            assert!(h.header_len <= data.len(), "header longer than input");
            // parse_header refuses body lengths whose frame length overflows.
            assert!(h.frame_len().is_some(), "frame length overflows: {h:?}");
        }
        Err(e) => assert!(e.offset <= data.len(), "header error offset out of range"),
    }

    let limited = validate(data, Limits::default());
    let unlimited = validate(
        data,
        Limits {
            max_depth: usize::MAX,
        },
    );

    for r in [&limited, &unlimited] {
        if let Err(e) = r {
            assert!(
                e.offset <= data.len(),
                "error offset {} beyond input of {} bytes: {e}",
                e.offset,
                data.len()
            );
        }
    }

    match (&limited, &unlimited) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "depth limit changed the counts"),
        (Ok(_), Err(e)) => panic!("accepted with a depth limit, refused without: {e}"),
        (Err(e), Ok(_)) => assert!(
            e.kind() == Some(ErrorKind::Limit),
            "refused with a limit for a non-limit reason: {e}"
        ),
        (Err(a), Err(b)) => {
            // Until the limit is hit both walks are identical.
            if a.kind() != Some(ErrorKind::Limit) {
                assert_eq!(a.offset, b.offset, "same walk, different error");
            }
        }
    }

    if let Ok(stats) = &limited {
        assert!(stats.items >= 1, "an accepted frame holds an item");
        // What a decode makes is bounded by its input: each value takes at
        // least its tag byte (references to strings and shared objects make
        // no new value).
        assert!(stats.items as usize <= data.len(), "more values than bytes");
        assert!(stats.strings <= stats.items && stats.containers <= stats.items);
        let h = parse_header::<()>(data).expect("accepted frame has a header");
        assert_eq!(
            h.frame_len(),
            Some(data.len() as u64),
            "header length disagrees"
        );
        // Exactly one frame: one byte short or one byte over is refused.
        assert!(validate(&data[..data.len() - 1], Limits::default()).is_err());
        let mut longer = data.to_vec();
        longer.push(0);
        assert!(validate(&longer, Limits::default()).is_err());
    }
});
