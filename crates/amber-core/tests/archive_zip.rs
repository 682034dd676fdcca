//! The archive container: zips written by the writer read back by the
//! reader, and crafted, truncated and lying zips refused by kind.

use amber_core::archive::data;
use amber_core::archive::error::ArchiveErrorKind as K;
use amber_core::archive::npy;
use amber_core::archive::zip::read::{self, Limits, TAIL_LEN};
use amber_core::archive::zip::write::ZipWriter;
use amber_core::archive::zip::{CentralEntry, Method};

/// A zip file of `entries` written at `start` (the bytes before it are not
/// materialised: the reader only sees what it is given).
struct Zip {
    bytes: Vec<u8>,
    start: u64,
}

impl Zip {
    fn len(&self) -> u64 {
        self.start + self.bytes.len() as u64
    }
    fn at(&self, offset: u64, n: usize) -> &[u8] {
        let i = (offset - self.start) as usize;
        &self.bytes[i..(i + n).min(self.bytes.len())]
    }
}

fn write(entries: &[(&str, Method, &[u8])], start: u64, align: u64) -> Zip {
    let mut w = ZipWriter::new(start);
    let mut bytes = Vec::new();
    for &(name, method, content) in entries {
        let stored = data::compress(method, None, content).unwrap();
        let h = w
            .local_header(
                name,
                method,
                data::crc32(content),
                stored.len() as u64,
                content.len() as u64,
                align,
            )
            .unwrap();
        bytes.extend_from_slice(&h);
        if method == Method::Stored && align > 1 {
            assert_eq!((start + bytes.len() as u64) % align, 0, "{name} aligned");
        }
        bytes.extend_from_slice(&stored);
    }
    bytes.extend_from_slice(&w.finish());
    Zip { bytes, start }
}

fn read_all(
    z: &Zip,
) -> Result<Vec<(CentralEntry, Vec<u8>)>, amber_core::archive::error::ArchiveError> {
    let tail_len = (z.bytes.len()).min(TAIL_LEN);
    let tail = &z.bytes[z.bytes.len() - tail_len..];
    let mut end = read::find_end(tail, z.len())?;
    if let Some((offset, n)) = end.need {
        end = read::finish_zip64(z.at(offset, n), end)?;
    }
    let cd = z.at(end.cd_offset, end.cd_size as usize);
    let entries = read::parse_central(cd, &end, &Limits::default())?;
    let mut out = Vec::new();
    for e in entries {
        let fixed = z.at(e.header_offset, 30);
        let n = read::local_len(fixed)?;
        let start = read::data_offset(z.at(e.header_offset, n), &e)?;
        let stored = z.at(start, e.compressed_size as usize);
        let content = data::decompress(e.method()?, stored, e.size, e.crc32, 0, &e.name)?;
        out.push((e, content));
    }
    Ok(out)
}

const TEXT: &[u8] = b"amber archives hold named values; amber archives hold named values";

#[test]
fn written_zips_read_back_with_every_method() {
    let big: Vec<u8> = (0..200_000u32)
        .flat_map(|i| (i % 251).to_le_bytes())
        .collect();
    let z = write(
        &[
            ("a.amber", Method::Stored, TEXT),
            ("dir/b.npy", Method::Deflate, &big),
            ("c.arrow", Method::Zstd, &big),
            ("empty", Method::Stored, b""),
        ],
        0,
        64,
    );
    let got = read_all(&z).unwrap();
    let names: Vec<&str> = got.iter().map(|(e, _)| e.name.as_str()).collect();
    assert_eq!(names, ["a.amber", "dir/b.npy", "c.arrow", "empty"]);
    assert_eq!(got[0].1, TEXT);
    assert_eq!(got[1].1, big);
    assert_eq!(got[2].1, big);
    assert!(got[1].0.compressed_size < big.len() as u64 / 2);
}

#[test]
fn equal_content_makes_equal_bytes() {
    let entries = [("x", Method::Zstd, TEXT), ("y", Method::Stored, TEXT)];
    assert_eq!(write(&entries, 0, 64).bytes, write(&entries, 0, 64).bytes);
}

#[test]
fn zip64_offsets_and_end_records() {
    // An archive starting past 4 GiB needs ZIP64 offsets and end records.
    let z = write(
        &[
            ("far", Method::Stored, TEXT),
            ("farther", Method::Deflate, TEXT),
        ],
        5 << 30,
        64,
    );
    let got = read_all(&z).unwrap();
    assert_eq!(got.len(), 2);
    assert!(got[0].0.header_offset >= 5 << 30);
    assert_eq!(got[1].1, TEXT);
}

#[test]
fn append_keeps_old_entries_and_remove_drops_them() {
    let z = write(
        &[
            ("old", Method::Stored, TEXT),
            ("gone", Method::Stored, TEXT),
        ],
        0,
        1,
    );
    let old = read_all(&z).unwrap().into_iter().map(|(e, _)| e).collect();
    let mut w = ZipWriter::append(old, z.len());
    assert!(w.remove("gone"));
    assert!(!w.remove("never"));
    let mut bytes = z.bytes.clone();
    let h = w
        .local_header("new", Method::Stored, data::crc32(b"n"), 1, 1, 1)
        .unwrap();
    bytes.extend_from_slice(&h);
    bytes.push(b'n');
    bytes.extend_from_slice(&w.finish());
    let got = read_all(&Zip { bytes, start: 0 }).unwrap();
    let names: Vec<&str> = got.iter().map(|(e, _)| e.name.as_str()).collect();
    assert_eq!(names, ["old", "new"]);
}

#[test]
fn the_writer_refuses_unsafe_and_duplicate_names() {
    let mut w = ZipWriter::new(0);
    for bad in ["../x", "/abs", "a\\b", "a//b", ""] {
        assert_eq!(
            w.local_header(bad, Method::Stored, 0, 0, 0, 1)
                .unwrap_err()
                .kind,
            K::UnsafeName
        );
    }
    w.local_header("a", Method::Stored, 0, 0, 0, 1).unwrap();
    assert_eq!(
        w.local_header("a", Method::Stored, 0, 0, 0, 1)
            .unwrap_err()
            .kind,
        K::Duplicate
    );
}

#[test]
fn every_truncation_is_refused() {
    let z = write(
        &[("a", Method::Deflate, TEXT), ("b", Method::Stored, TEXT)],
        0,
        64,
    );
    for n in 0..z.bytes.len() {
        let cut = Zip {
            bytes: z.bytes[..n].to_vec(),
            start: 0,
        };
        let err = read_all(&cut).expect_err("cut");
        assert!(
            matches!(
                err.kind,
                K::NotZip | K::Truncated | K::Malformed | K::SizeMismatch
            ),
            "{n}: {err}"
        );
    }
}

/// Replace every occurrence of `from` in `bytes` (names in both headers).
fn patch(bytes: &mut [u8], from: &[u8], to: &[u8]) {
    assert_eq!(from.len(), to.len());
    let mut i = 0;
    while let Some(p) = bytes[i..].windows(from.len()).position(|w| w == from) {
        bytes[i + p..i + p + to.len()].copy_from_slice(to);
        i += p + 1;
    }
}

fn central_at(z: &Zip, name: &[u8]) -> usize {
    let sig = 0x0201_4b50u32.to_le_bytes();
    (0..z.bytes.len() - 46)
        .find(|&i| z.bytes[i..i + 4] == sig && &z.bytes[i + 46..i + 46 + name.len()] == name)
        .expect("central entry")
}

#[test]
fn crafted_zips_are_refused_by_kind() {
    let base = || {
        write(
            &[
                ("xx/a", Method::Deflate, TEXT),
                ("b1", Method::Stored, TEXT),
            ],
            0,
            1,
        )
    };
    let mut z = base();
    patch(&mut z.bytes, b"xx/a", b"../a");
    assert_eq!(read_all(&z).unwrap_err().kind, K::UnsafeName);

    let mut z = base();
    patch(&mut z.bytes, b"xx/a", b"b1\0\0");
    assert_eq!(read_all(&z).unwrap_err().kind, K::UnsafeName);

    let mut z = write(
        &[("a1", Method::Stored, TEXT), ("a2", Method::Stored, TEXT)],
        0,
        1,
    );
    patch(&mut z.bytes, b"a2", b"a1");
    let err = read_all(&z).unwrap_err();
    assert_eq!((err.kind, err.entry.as_deref()), (K::Duplicate, Some("a1")));

    let mut z = base();
    let c = central_at(&z, b"b1");
    z.bytes[c + 8] |= 1; // encrypted
    assert_eq!(read_all(&z).unwrap_err().kind, K::Unsupported);

    let mut z = base();
    let c = central_at(&z, b"b1");
    z.bytes[c + 24..c + 28].copy_from_slice(&(TEXT.len() as u32 + 1).to_le_bytes()); // size
    assert_eq!(read_all(&z).unwrap_err().kind, K::SizeMismatch);

    let mut z = base();
    let c = central_at(&z, b"b1");
    z.bytes[c + 20..c + 24].copy_from_slice(&1_000_000u32.to_le_bytes()); // compressed size
    assert_eq!(read_all(&z).unwrap_err().kind, K::SizeMismatch);

    let mut z = base();
    let c = central_at(&z, b"xx/a");
    z.bytes[c + 10..c + 12].copy_from_slice(&99u16.to_le_bytes()); // method
    assert_eq!(read_all(&z).unwrap_err().kind, K::Malformed); // local header disagrees

    let mut z = base();
    let c = central_at(&z, b"xx/a");
    z.bytes[c + 24..c + 28].copy_from_slice(&(1u32 << 30).to_le_bytes()); // declared 1 GiB
    let err = read_all(&z).unwrap_err();
    assert_eq!((err.kind, err.entry.as_deref()), (K::Bomb, Some("xx/a")));

    let mut z = base();
    let c = central_at(&z, b"b1");
    z.bytes[c + 42..c + 46].copy_from_slice(&0u32.to_le_bytes()); // b1 overlaps xx/a
    assert!(matches!(
        read_all(&z).unwrap_err().kind,
        K::Malformed | K::SizeMismatch
    ));

    let mut z = base();
    let c = central_at(&z, b"b1");
    z.bytes[c + 46] = b'c'; // the local header names "b1"
    assert_eq!(read_all(&z).unwrap_err().kind, K::Malformed);
}

#[test]
fn decompression_never_outgrows_the_declared_size() {
    let zeros = vec![0u8; 100 << 20];
    for method in [Method::Deflate, Method::Zstd] {
        let stored = data::compress(method, None, &zeros).unwrap();
        let err = data::decompress(method, &stored, 1024, 0, 0, "z").unwrap_err();
        assert_eq!(err.kind, K::SizeMismatch);
        let err = data::decompress(method, &stored[..stored.len() / 2], 100 << 20, 0, 0, "z")
            .unwrap_err();
        assert!(matches!(err.kind, K::SizeMismatch | K::Malformed), "{err}");
    }
    let stored = data::compress(Method::Zstd, None, TEXT).unwrap();
    let err = data::decompress(Method::Zstd, &stored, TEXT.len() as u64, 0, 0, "t").unwrap_err();
    assert_eq!(err.kind, K::Checksum);
}

#[test]
fn random_bytes_never_panic() {
    let mut s: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let z = write(
        &[("a", Method::Deflate, TEXT), ("b", Method::Zstd, TEXT)],
        0,
        64,
    );
    for _ in 0..20_000 {
        let mut bytes = z.bytes.clone();
        for _ in 0..1 + next() % 4 {
            let i = (next() % bytes.len() as u64) as usize;
            bytes[i] = next() as u8;
        }
        let _ = read_all(&Zip { bytes, start: 0 });
        let _ = npy::parse_npy_header(&z.bytes);
    }
}

#[test]
fn npy_headers_as_numpy_writes_them() {
    let h = npy::npy_header("'<f8'", false, &[3, 4]);
    let text = "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }";
    assert_eq!(&h[..10], b"\x93NUMPY\x01\x00v\x00");
    assert_eq!(&h[10..10 + text.len()], text.as_bytes());
    assert_eq!(h.len(), 128);
    assert_eq!(h.last(), Some(&b'\n'));
    let parsed = npy::parse_npy_header(&h).unwrap();
    assert_eq!(
        (
            parsed.shape.as_slice(),
            parsed.fortran_order,
            parsed.data_offset
        ),
        (&[3u64, 4][..], false, 128)
    );
    assert_eq!(parsed.descr, npy::Literal::Str("<f8".into()));
    // Non-latin-1 field names need version 3.0 (UTF-8).
    let h = npy::npy_header("[('Ω', '|u1')]", false, &[1]);
    assert_eq!(&h[6..8], &[3, 0]);
    assert_eq!(h.len() % 64, 0);
    let parsed = npy::parse_npy_header(&h).unwrap();
    let field = npy::Literal::Tuple(vec![
        npy::Literal::Str("Ω".into()),
        npy::Literal::Str("|u1".into()),
    ]);
    assert_eq!(parsed.descr, npy::Literal::List(vec![field]));
}

#[test]
fn hostile_npy_headers_are_malformed() {
    let wrap = |text: &str| {
        let mut h = b"\x93NUMPY\x01\x00".to_vec();
        h.extend_from_slice(&(text.len() as u16).to_le_bytes());
        h.extend_from_slice(text.as_bytes());
        h
    };
    let deep = format!(
        "{{'descr': {}'<f8'{}, 'fortran_order': False, 'shape': (1,)}}",
        "[".repeat(500),
        "]".repeat(500)
    );
    for text in [
        "{'descr': '<f8, 'fortran_order': False, 'shape': (1,)}",
        "{'descr': '<f8', 'fortran_order': False, 'shape': (-1,)}",
        "{'descr': '<f8', 'fortran_order': 0, 'shape': (1,)}",
        "{'descr': '<f8', 'shape': (1,)}",
        "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), 'x': 1}",
        "{'descr': __import__('os'), 'fortran_order': False, 'shape': (1,)}",
        "['descr']",
        &deep,
    ] {
        let err = npy::parse_npy_header(&wrap(text)).expect_err(text);
        assert_eq!(err.kind, K::Malformed, "{text}");
    }
    let mut h = wrap("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }");
    h.truncate(20);
    assert_eq!(npy::parse_npy_header(&h).unwrap_err().kind, K::Truncated);
    assert_eq!(npy::shape_product(&[u64::MAX, 2]), None);
}

#[test]
fn the_writer_refuses_what_it_cannot_write_right() {
    let mut w = ZipWriter::new(0);
    for align in [3, 1 << 20, 8192] {
        let err = w
            .local_header("a", Method::Stored, 0, 0, 0, align)
            .unwrap_err();
        assert_eq!(err.kind, K::Malformed, "align {align}");
    }
    let err = w
        .local_header("big", Method::Stored, 0, u64::MAX, u64::MAX, 1)
        .unwrap_err();
    assert_eq!(err.kind, K::Malformed);
    // A refused entry leaves no trace: its name can be written after all.
    w.local_header("big", Method::Stored, 0, 1, 1, 64).unwrap();
    let err = data::decompress(Method::Deflate, b"", u64::MAX, 0, 0, "x").unwrap_err();
    assert!(matches!(err.kind, K::SizeMismatch | K::Malformed));
}

#[test]
fn npy_headers_with_a_key_twice_are_malformed() {
    let text = "{'descr': '<f8', 'descr': '<i8', 'fortran_order': False, 'shape': (1,)}";
    let mut h = b"\x93NUMPY\x01\x00".to_vec();
    h.extend_from_slice(&(text.len() as u16).to_le_bytes());
    h.extend_from_slice(text.as_bytes());
    assert_eq!(npy::parse_npy_header(&h).unwrap_err().kind, K::Malformed);
}

#[test]
fn entries_compressed_as_they_stream_read_back() {
    let content: Vec<u8> = (0..3_000_000u32)
        .flat_map(|i| (i % 1000).to_le_bytes())
        .collect();
    for method in [Method::Zstd, Method::Deflate] {
        let start = 1000;
        let mut w = ZipWriter::new(start);
        let mut bytes = Vec::new();
        let first = w
            .local_header(
                "a",
                Method::Stored,
                data::crc32(TEXT),
                TEXT.len() as u64,
                TEXT.len() as u64,
                1,
            )
            .unwrap();
        bytes.extend_from_slice(&first);
        bytes.extend_from_slice(TEXT);
        let at = bytes.len();
        let h = w
            .begin_streamed("b.npy", method, content.len() as u64)
            .unwrap();
        bytes.extend_from_slice(&h);
        let mut c = data::StreamCompressor::new(method, None, content.len() as u64, 0).unwrap();
        for piece in content.chunks(333_333) {
            bytes.extend_from_slice(c.write(piece).unwrap());
        }
        let (tail, crc, _) = c.finish().unwrap();
        bytes.extend_from_slice(&tail);
        let stored = (bytes.len() - at - h.len()) as u64;
        // Only the entry being streamed can be closed.
        assert_eq!(
            w.end_streamed("a", crc, stored).unwrap_err().kind,
            K::Malformed
        );
        let last = w.end_streamed("b.npy", crc, stored).unwrap();
        assert_eq!(last.len(), h.len());
        bytes[at..at + last.len()].copy_from_slice(&last);
        assert_eq!(w.position(), start + bytes.len() as u64);
        bytes.extend_from_slice(&w.finish());
        let back = read_all(&Zip { bytes, start }).unwrap();
        assert_eq!(back[0].1, TEXT);
        assert_eq!((back[1].0.compressed_size, back[1].0.crc32), (stored, crc));
        assert_eq!(back[1].1, content, "{method:?}");
    }
}

#[test]
fn the_byte_shuffle_groups_bytes_by_position_and_undoes() {
    let src: Vec<u8> = (0u8..19).collect();
    let mut dst = vec![0u8; src.len()];
    data::shuffle(&src, 4, &mut dst);
    // Four elements of four bytes as four planes; the last three bytes stay.
    assert_eq!(
        dst,
        [0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15, 16, 17, 18]
    );
    for width in data::SHUFFLE_WIDTHS {
        for n in [0, 1, width - 1, width, 3 * width + 1, 1000] {
            let src: Vec<u8> = (0..n).map(|i| (i * 7 + i / 3) as u8).collect();
            let mut mid = vec![0u8; n];
            let mut back = vec![0u8; n];
            data::shuffle(&src, width, &mut mid);
            data::unshuffle(&mid, width, &mut back);
            assert_eq!(back, src, "width {width}, {n} bytes");
        }
    }
}

#[test]
fn shuffled_entries_compress_smaller_and_read_back_whole() {
    // Small integers as int64 across more than one block, with a tail that
    // is not a whole element.
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut content: Vec<u8> = (0..300_000)
        .flat_map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 10_000).to_le_bytes()
        })
        .collect();
    content.extend_from_slice(b"tail!");
    for method in [Method::Zstd, Method::Deflate] {
        let mut sizes = Vec::new();
        for width in [0, 8] {
            let mut c =
                data::StreamCompressor::new(method, None, content.len() as u64, width).unwrap();
            let mut stored = Vec::new();
            for piece in content.chunks(777_777) {
                stored.extend_from_slice(c.write(piece).unwrap());
            }
            let (tail, crc, blake) = c.finish().unwrap();
            stored.extend_from_slice(&tail);
            // Written overlapped (each output handed to a sink on a second
            // thread during the next piece), the bytes are the same.
            let mut c =
                data::StreamCompressor::new(method, None, content.len() as u64, width).unwrap();
            let mut sunk = Vec::new();
            for piece in content.chunks(777_777) {
                c.write_overlapped(piece, |out| {
                    sunk.extend_from_slice(out);
                    Ok::<(), ()>(())
                })
                .unwrap()
                .unwrap();
            }
            let (last, crc2, _) = c.finish().unwrap();
            sunk.extend_from_slice(&last);
            assert_eq!((&sunk, crc2), (&stored, crc));
            // The hash is the content's; the CRC-32 is over what the zip holds.
            assert_eq!(blake, data::blake3_hex(&content));
            let size = content.len() as u64;
            let back = data::decompress(method, &stored, size, crc, width, "e").unwrap();
            assert_eq!(back, content, "{method:?} width {width}");
            let raw = data::decompress(method, &stored, size, crc, 0, "e").unwrap();
            assert_eq!(raw == content, width == 0);
            sizes.push(stored.len());
        }
        assert!(sizes[1] * 10 < sizes[0] * 8, "{method:?}: {sizes:?}");
    }
    let err = data::decompress(Method::Zstd, b"", 0, 0, 3, "odd").unwrap_err();
    assert_eq!(
        (err.kind, err.entry.as_deref()),
        (K::Malformed, Some("odd"))
    );
    assert!(data::StreamCompressor::new(Method::Zstd, None, 8, 5).is_err());
}

#[test]
fn a_sink_that_fails_is_reported_by_the_next_overlapped_write() {
    let content = vec![7u8; 3 << 20];
    let mut c =
        data::StreamCompressor::new(Method::Deflate, Some(0), content.len() as u64, 0).unwrap();
    // Level 0 stores: each piece's output is as large as the piece, so the
    // next call hands it to the sink on the second thread.
    let fail = |_: &[u8]| Err::<(), &str>("disk full");
    assert_eq!(
        c.write_overlapped(&content[..1 << 20], fail).unwrap(),
        Ok(())
    );
    assert_eq!(
        c.write_overlapped(&content[1 << 20..], fail).unwrap(),
        Err("disk full")
    );
}

#[test]
fn an_entry_whose_local_extra_field_runs_into_the_next_is_refused() {
    let z = write(
        &[
            ("a", Method::Stored, TEXT),
            ("b", Method::Stored, TEXT),
            ("c", Method::Deflate, TEXT),
        ],
        0,
        64,
    );
    let tail = &z.bytes[z.bytes.len() - z.bytes.len().min(TAIL_LEN)..];
    let end = read::find_end(tail, z.len()).unwrap();
    let cd = z.at(end.cd_offset, end.cd_size as usize);
    let entries = read::parse_central(cd, &end, &Limits::default()).unwrap();
    let ends = read::span_ends(&entries, end.cd_offset);
    assert_eq!(ends[0], entries[1].header_offset);
    assert_eq!(ends[1], entries[2].header_offset);
    assert_eq!(ends[2], end.cd_offset);
    for (e, &limit) in entries.iter().zip(&ends) {
        let n = read::local_len(z.at(e.header_offset, 30)).unwrap();
        let local = z.at(e.header_offset, n);
        let start = read::data_offset_within(local, e, limit).unwrap();
        assert_eq!(
            start + e.compressed_size,
            limit.min(start + e.compressed_size)
        );
        // A span that ends one byte early: the data would run into the next entry.
        let short = start + e.compressed_size - 1;
        let err = read::data_offset_within(local, e, short).unwrap_err();
        assert_eq!(err.kind, K::Malformed);
        assert_eq!(err.entry.as_deref(), Some(e.name.as_str()));
    }
}
