//! The golden vectors that pin the encoder's bytes (tests/golden/vectors.txt)
//! are all valid frames for the pure-Rust walker, and their truncations are not.

use amber_core::codec::validate::validate;
use amber_core::codec::walker::Limits;

fn vectors() -> Vec<(String, Vec<u8>)> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/golden/vectors.txt"
    );
    let text = std::fs::read_to_string(path).expect("tests/golden/vectors.txt");
    text.lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (name, hex) = l.split_once(' ').expect("name hex");
            let bytes = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
                .collect();
            (name.to_string(), bytes)
        })
        .collect()
}

#[test]
fn golden_vectors_validate() {
    let v = vectors();
    assert!(v.len() > 50);
    for (name, bytes) in &v {
        if let Err(e) = validate(bytes, Limits::default()) {
            panic!("{name}: {e}");
        }
    }
}

#[test]
fn golden_vector_truncations_fail() {
    for (name, bytes) in vectors() {
        for n in 0..bytes.len() {
            assert!(
                validate(&bytes[..n], Limits::default()).is_err(),
                "{name} cut at {n}"
            );
        }
    }
}
