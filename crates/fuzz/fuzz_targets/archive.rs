//! The archive reader on arbitrary bytes: the zip end records, central
//! directory, local headers and decompression, and `.npy` headers.
//!
//! Checks: nothing panics; every entry the directory accepts lies inside the
//! file and before the directory, with a safe, unique name; decompression
//! returns exactly the declared size or an error; a parsed npy header's data
//! starts inside the input.
#![no_main]

use std::collections::HashSet;

use amber_core::archive::data;
use amber_core::archive::npy;
use amber_core::archive::zip::names;
use amber_core::archive::zip::read::{self, Limits, TAIL_LEN};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|file: &[u8]| {
    if let Ok(h) = npy::parse_npy_header(file) {
        assert!(h.data_offset <= file.len());
    }
    let len = file.len() as u64;
    let tail = &file[file.len() - file.len().min(TAIL_LEN)..];
    let Ok(mut end) = read::find_end(tail, len) else {
        return;
    };
    if let Some((offset, n)) = end.need {
        let Some(record) = file.get(offset as usize..offset as usize + n) else {
            return;
        };
        let Ok(e) = read::finish_zip64(record, end) else {
            return;
        };
        end = e;
    }
    assert!(end.cd_offset + end.cd_size <= len);
    let cd = &file[end.cd_offset as usize..(end.cd_offset + end.cd_size) as usize];
    let Ok(entries) = read::parse_central(cd, &end, &Limits::default()) else {
        return;
    };
    let mut seen = HashSet::new();
    for e in &entries {
        assert!(names::check(&e.name).is_ok() && seen.insert(e.name.clone()));
        assert!(e.header_offset + e.compressed_size <= end.cd_offset);
        let local = &file[e.header_offset as usize..];
        let Ok(n) = read::local_len(local) else {
            continue;
        };
        let Some(local) = local.get(..n) else {
            continue;
        };
        let Ok(start) = read::data_offset(local, e) else {
            continue;
        };
        let Some(stored) = file.get(start as usize..(start + e.compressed_size) as usize) else {
            continue;
        };
        if let (Ok(method), true) = (e.method(), e.size <= 1 << 24) {
            // Every shuffle width a manifest may name, chosen by the entry's
            // CRC-32 (what a manifest says is not checked against the data).
            let shuffle = [0, 2, 4, 8, 16][e.crc32 as usize % 5];
            if let Ok(out) = data::decompress(method, stored, e.size, e.crc32, shuffle, &e.name) {
                assert_eq!(out.len() as u64, e.size);
            }
        }
    }
});
