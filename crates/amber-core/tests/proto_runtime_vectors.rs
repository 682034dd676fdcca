//! Decode Google-made bytes with the table-driven runtime and re-encode
//! them deterministically: the result must equal protobuf's own
//! `SerializeToString(deterministic=True)` byte for byte (vectors made by
//! tests/data/proto/runtime/gen_vectors.py with protobuf's upb).

mod proto_runtime_common;

use amber_core::proto::runtime::{decode_dyn, encode_dyn};
use proto_runtime_common::{tables, vectors, SYNTAXES};

#[test]
fn vectors_reencode_like_protobuf() {
    let t = tables();
    let mut failures = Vec::new();
    let mut n = 0;
    for syntax in SYNTAXES {
        for v in vectors(syntax) {
            n += 1;
            let ty = t.message_index(&v.ty).expect("type");
            let r = decode_dyn(&t, ty, &v.input);
            let Some(expected) = &v.expected else {
                if let Ok(m) = r {
                    let out = encode_dyn(&t, &m, true).unwrap();
                    failures.push(format!(
                        "{syntax}:{} {}: upb refuses it, we decode it (re-encoded: {out:02x?})",
                        v.line, v.kind
                    ));
                }
                continue;
            };
            let m = match r {
                Ok(m) => m,
                Err(e) => {
                    failures.push(format!("{syntax}:{} {} decode: {e}", v.line, v.kind));
                    continue;
                }
            };
            let out = encode_dyn(&t, &m, true).unwrap();
            if &out != expected {
                let at = out.iter().zip(expected).position(|(a, b)| a != b);
                failures.push(format!(
                    "{syntax}:{} {}: got {} bytes, want {}; first difference at {at:?}",
                    v.line,
                    v.kind,
                    out.len(),
                    expected.len()
                ));
                continue;
            }
            // Source order, then deterministic again: the same bytes.
            let loose = encode_dyn(&t, &m, false).unwrap();
            let m3 = decode_dyn(&t, ty, &loose).unwrap();
            assert_eq!(&encode_dyn(&t, &m3, true).unwrap(), expected);
            // Google's deterministic bytes decode to the same bytes again.
            let m2 = decode_dyn(&t, ty, expected).unwrap();
            assert_eq!(&encode_dyn(&t, &m2, true).unwrap(), expected);
        }
    }
    assert!(n > 90, "only {n} vectors");
    assert!(
        failures.is_empty(),
        "{} of {n} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
