//! Shared by the proto_runtime_* tests: the conformance tables and the
//! vectors made by tests/data/proto/runtime/gen_vectors.py.

#![allow(dead_code)]

use std::path::PathBuf;

use amber_core::proto::runtime::Tables;
use amber_core::proto::{compile, DirLoader};

pub fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/proto")
}

/// The three conformance files, compiled by amber's own compiler.
pub fn tables() -> Tables {
    let mut loader = DirLoader {
        include: vec![data().join("conformance")],
    };
    let set = compile(
        &[
            "test_messages_proto3.proto",
            "test_messages_proto2.proto",
            "test_messages_edition2023.proto",
        ],
        &mut loader,
        true,
    )
    .expect("conformance protos compile");
    Tables::from_set(&set).expect("tables")
}

pub struct Vector {
    pub kind: String,
    pub ty: String,
    pub input: Vec<u8>,
    /// `None`: upb refuses the input.
    pub expected: Option<Vec<u8>>,
    pub line: usize,
}

fn unhex(s: &str) -> Vec<u8> {
    if s == "-" {
        return Vec::new();
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// Every vector of `vectors_<syntax>.txt`.
pub fn vectors(syntax: &str) -> Vec<Vector> {
    let p = data().join(format!("runtime/vectors_{syntax}.txt"));
    let text = std::fs::read_to_string(&p).unwrap();
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.starts_with('#') && !l.is_empty())
        .map(|(i, l)| {
            let parts: Vec<&str> = l.split(' ').collect();
            Vector {
                kind: parts[0].to_string(),
                ty: parts[1].to_string(),
                input: unhex(parts[2]),
                expected: (parts[3] != "ERR").then(|| unhex(parts[3])),
                line: i + 1,
            }
        })
        .collect()
}

pub const SYNTAXES: &[&str] = &["proto3", "proto2", "edition2023"];
