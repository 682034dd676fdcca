//! Hostile input: truncated, mutated and random `.proto` text and descriptor
//! bytes must give an error (or a result), never a panic, a hang or a stack
//! overflow.

use std::path::{Path, PathBuf};

use amber_core::proto::compiler::parser::{parse, MAX_NESTING};
use amber_core::proto::{compile, FileDescriptorSet, Message, ProtoErrorKind};

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/proto")
}

fn files_with_ext(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files_with_ext(&p, ext, out);
        } else if p.extension().and_then(|x| x.to_str()) == Some(ext) {
            out.push(p);
        }
    }
    out.sort();
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Compile `text` as the root `x.proto`, its imports from the test data.
fn compile_text(text: &[u8]) -> Result<FileDescriptorSet, amber_core::proto::ProtoError> {
    let text = text.to_vec();
    let mut loader = move |name: &str| -> Option<Vec<u8>> {
        if name == "x.proto" {
            Some(text.clone())
        } else {
            std::fs::read(data().join(name))
                .or_else(|_| std::fs::read(data().join("conformance").join(name)))
                .ok()
        }
    };
    compile(&["x.proto"], &mut loader, true)
}

fn mutate(rng: &mut Rng, src: &[u8]) -> Vec<u8> {
    let mut t = src.to_vec();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(t.len());
        match rng.below(5) {
            0 => {
                let i = at.min(t.len().saturating_sub(1));
                t[i] = rng.next() as u8;
            }
            1 => {
                let end = (at + rng.below(40)).min(t.len());
                t.drain(at..end);
            }
            2 => {
                let tok: &[u8] = [
                    b"{".as_slice(),
                    b"}",
                    b";",
                    b"\"",
                    b"/*",
                    b"[",
                    b"(",
                    b"=",
                    b"-",
                    b"0x",
                    b"max",
                    b"\xff\xfe",
                    b"\\",
                    b"group",
                    b"map<",
                    b"option",
                    b".",
                ][rng.below(17)];
                t.splice(at..at, tok.iter().copied());
            }
            3 => {
                // Duplicate a slice somewhere else.
                let end = (at + rng.below(200)).min(t.len());
                let chunk = t[at..end].to_vec();
                let to = rng.below(t.len());
                t.splice(to..to, chunk);
            }
            _ => t.truncate(at),
        }
        if t.is_empty() {
            break;
        }
    }
    t
}

#[test]
fn parser_survives_every_truncation() {
    let mut files = Vec::new();
    files_with_ext(&data(), "proto", &mut files);
    for p in &files {
        let src = std::fs::read(p).unwrap();
        let step = (src.len() / 400).max(1);
        for cut in (0..src.len()).step_by(step) {
            let _ = parse("x.proto", &src[..cut]);
        }
    }
}

#[test]
fn compiler_survives_mutations() {
    let mut files = Vec::new();
    files_with_ext(&data(), "proto", &mut files);
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for p in &files {
        let src = std::fs::read(p).unwrap();
        for _ in 0..12 {
            let t = mutate(&mut rng, &src);
            let _ = compile_text(&t);
        }
        let cut = rng.below(src.len());
        let _ = compile_text(&src[..cut]);
    }
}

#[test]
fn random_bytes_and_invalid_utf8() {
    let mut rng = Rng(7);
    for _ in 0..300 {
        let n = rng.below(300);
        let t: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
        assert!(parse("x.proto", &t).is_err() || t.iter().all(|b| b.is_ascii()));
    }
    let e = compile_text(b"syntax = \"proto3\"; message \xc3\x28 {}").unwrap_err();
    assert_eq!((e.line, e.col), (1, 28), "{e}");
    // Bytes that are not UTF-8 in a string default are kept as they are for
    // string fields (as protoc keeps them) and escaped for bytes fields.
    let set = compile_text(
        b"syntax = \"proto2\"; message M { optional string s = 1 [default = \"\\xff\\ud800\"]; }",
    )
    .unwrap();
    let f = &set.file.last().unwrap().message_type[0].field[0];
    assert_eq!(f.default_value.as_deref(), Some(&b"\xff\xed\xa0\x80"[..]));
    let set = compile_text(
        b"syntax = \"proto2\"; message M { optional bytes s = 1 [default = \"\\xff\"]; }",
    )
    .unwrap();
    let f = &set.file.last().unwrap().message_type[0].field[0];
    assert_eq!(f.default_value.as_deref(), Some(&b"\\377"[..]));
}

#[test]
fn deep_nesting_is_an_error_not_an_overflow() {
    let n = 100_000;
    let mut t = b"syntax = \"proto2\";\n".to_vec();
    for _ in 0..n {
        t.extend_from_slice(b"message M {");
    }
    let e = compile_text(&t).unwrap_err();
    assert_eq!(e.kind, ProtoErrorKind::TooDeep, "{e}");
    assert!(e.message.contains(&MAX_NESTING.to_string()));

    let mut t = b"syntax = \"proto2\"; import \"google/protobuf/descriptor.proto\";
        extend google.protobuf.MessageOptions { optional M o = 5000; }
        message M { optional M m = 1; option (o) = "
        .to_vec();
    for _ in 0..n {
        t.extend_from_slice(b"{ m ");
    }
    let e = compile_text(&t).unwrap_err();
    assert_eq!(e.kind, ProtoErrorKind::TooDeep, "{e}");

    // Nesting within the limit is fine, including through groups.
    let mut t = b"syntax = \"proto2\";\n".to_vec();
    for i in 0..MAX_NESTING - 1 {
        t.extend_from_slice(format!("message M{i} {{ optional group G{i} = 1 {{ ").as_bytes());
    }
    let _ = compile_text(&t);
}

#[test]
fn huge_numbers() {
    for src in [
        &b"syntax = \"proto3\"; message M { int32 a = 18446744073709551616; }"[..],
        b"syntax = \"proto3\"; message M { int32 a = -1; }",
        b"syntax = \"proto3\"; message M { int32 a = 0x7FFFFFFFFFFFFFFFFFFF; }",
        b"syntax = \"proto2\"; message M { optional int32 a = 1 [default = 2147483648]; }",
        b"syntax = \"proto2\"; message M { optional uint64 a = 1 [default = -1]; }",
        b"syntax = \"proto2\"; message M { extensions 1 to 99999999999; }",
        b"syntax = \"proto2\"; enum E { A = 2147483648; }",
    ] {
        assert!(
            compile_text(src).is_err(),
            "{}",
            String::from_utf8_lossy(src)
        );
    }
    let set = compile_text(b"syntax = \"proto2\"; message M { optional double a = 1 [default = 1e400]; optional float b = 2 [default = -1e-400]; }").unwrap();
    let m = &set.file.last().unwrap().message_type[0];
    assert_eq!(m.field[0].default_value.as_deref(), Some(&b"inf"[..]));
    assert_eq!(m.field[1].default_value.as_deref(), Some(&b"-0"[..]));
}

#[test]
fn decoder_survives_truncation_and_mutation() {
    let mut files = Vec::new();
    files_with_ext(&data().join("golden"), "pb", &mut files);
    let mut rng = Rng(99);
    for p in &files {
        let b = std::fs::read(p).unwrap();
        let step = (b.len() / 2000).max(1);
        for cut in (0..b.len()).step_by(step) {
            let _ = FileDescriptorSet::decode(&b[..cut]);
        }
        for _ in 0..300 {
            let mut m = b.clone();
            for _ in 0..1 + rng.below(3) {
                let at = rng.below(m.len());
                m[at] = rng.next() as u8;
            }
            if let Ok(set) = FileDescriptorSet::decode(&m) {
                // Whatever decodes re-encodes and decodes to the same thing.
                assert_eq!(FileDescriptorSet::decode(&set.encode()).unwrap(), set);
            }
        }
    }
    // A length claiming far more than is there: an error with the offset,
    // nothing allocated for it.
    let e = FileDescriptorSet::decode(&[0x0A, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 1, 2]).unwrap_err();
    assert_eq!(e.offset, 1);
    assert!(e.to_string().contains("at byte 1"), "{e}");
}

#[test]
fn long_import_chains_do_not_overflow() {
    // f0 imports f1 imports ... f1999: every file loads, in order.
    let n = 2000;
    let mut loader = move |name: &str| -> Option<Vec<u8>> {
        let i: usize = name
            .strip_prefix('f')?
            .strip_suffix(".proto")?
            .parse()
            .ok()?;
        let mut t = format!("syntax = \"proto3\"; package p{i}; message M {{}}\n");
        if i + 1 < n {
            t.push_str(&format!("import \"f{}.proto\";\n", i + 1));
        }
        Some(t.into_bytes())
    };
    let set = compile(&["f0.proto"], &mut loader, true).unwrap();
    assert_eq!(set.file.len(), n);
    assert_eq!(set.file[0].name.as_deref(), Some("f1999.proto"));
}
