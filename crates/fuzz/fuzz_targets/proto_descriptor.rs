//! `FileDescriptorSet` decoding on arbitrary bytes (a set a user loads, or
//! hands over from another tool).
//!
//! Checks: nothing panics; a decoded set encodes to bytes that decode to the
//! same set, and encoding it again gives the same bytes.
#![no_main]

use amber_core::proto::{FileDescriptorSet, Message};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    if let Ok(set) = FileDescriptorSet::decode(input) {
        let bytes = set.encode();
        let again = FileDescriptorSet::decode(&bytes).unwrap();
        assert_eq!(again, set);
        assert_eq!(again.encode(), bytes);
    }
});
