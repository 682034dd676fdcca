//! What the wire encoder and the printers (ProtoJSON, the text format)
//! refuse, each with its kind, set where the problem is found (never
//! guessed from the message) and the field path.

mod proto_runtime_common;

use amber_core::proto::json::{self, PrintOptions};
use amber_core::proto::runtime::{
    encode, encode_dyn, DynMessage, DynSource, EncodeError, EncodeFailure, EncodeKind,
    EncodeOptions, Tables, Value,
};
use amber_core::proto::text::{print_text, PrintFailure, TextOptions};

const T3: &str = "protobuf_test_messages.proto3.TestAllTypesProto3";
const T2: &str = "protobuf_test_messages.proto2.TestAllTypesProto2";

fn ty(t: &Tables, name: &str) -> u32 {
    t.message_index(name).unwrap()
}

/// The number of field `name` of type `ty`.
fn num(t: &Tables, ty: u32, name: &str) -> u32 {
    t.messages[ty as usize]
        .fields
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no field {name}"))
        .number
}

fn with(t: &Tables, tyname: &str, name: &str, v: Value) -> DynMessage {
    let ty = ty(t, tyname);
    let mut m = DynMessage::new(ty);
    m.set(num(t, ty, name), v);
    m
}

fn wire_err(t: &Tables, m: &DynMessage) -> EncodeError {
    encode_dyn(t, m, false).unwrap_err()
}

fn json_err(t: &Tables, m: &DynMessage) -> EncodeError {
    match json::print(t, m.ty, m, &DynSource, &PrintOptions::default()) {
        Err(json::PrintFailure::Print(e)) => *e,
        Err(json::PrintFailure::Source(e)) => panic!("the source failed: {e}"),
        Ok(s) => panic!("printed {s}"),
    }
}

fn text_err(t: &Tables, m: &DynMessage) -> EncodeError {
    match print_text(t, m.ty, m, &DynSource, TextOptions::default()) {
        Err(PrintFailure::Print(e)) => e,
        Err(PrintFailure::Source(e)) => panic!("the source failed: {e}"),
        Ok(s) => panic!("printed {s}"),
    }
}

/// A chain of `n` messages through `recursive_message`.
fn chain(t: &Tables, n: usize) -> DynMessage {
    let ty = ty(t, T3);
    let rec = num(t, ty, "recursive_message");
    let mut m = DynMessage::new(ty);
    for _ in 0..n {
        let mut outer = DynMessage::new(ty);
        outer.set(rec, Value::Message(Box::new(m)));
        m = outer;
    }
    m
}

#[test]
fn values_of_the_wrong_type_are_type_mismatch() {
    let t = proto_runtime_common::tables();
    let sub = || Value::Message(Box::new(DynMessage::new(ty(&t, T3))));
    let cases = [
        // A string for an integer, an integer for a string.
        (
            with(&t, T3, "optional_int32", Value::Str(b"7".to_vec())),
            "$.optional_int32",
        ),
        (
            with(&t, T3, "optional_string", Value::I32(7)),
            "$.optional_string",
        ),
        (
            with(&t, T3, "optional_bool", Value::F64(1.0)),
            "$.optional_bool",
        ),
        // A message for a scalar, a scalar for a message.
        (with(&t, T3, "optional_int64", sub()), "$.optional_int64"),
        (
            with(&t, T3, "optional_nested_message", Value::I32(1)),
            "$.optional_nested_message",
        ),
        // In a repeated field, with the element's index.
        (
            with(
                &t,
                T3,
                "repeated_int32",
                Value::List(vec![Value::I32(1), Value::Str(vec![])]),
            ),
            "$.repeated_int32[1]",
        ),
        (
            with(&t, T3, "repeated_string", Value::List(vec![Value::I64(1)])),
            "$.repeated_string[0]",
        ),
        // A map's value.
        (
            with(
                &t,
                T3,
                "map_int32_int32",
                Value::Map(vec![(Value::I32(1), Value::Str(b"x".to_vec()))]),
            ),
            "$.map_int32_int32[0]",
        ),
    ];
    for (m, path) in &cases {
        let e = wire_err(&t, m);
        assert_eq!(
            (e.kind, e.path.as_str()),
            (EncodeKind::TypeMismatch, *path),
            "{e}"
        );
        assert_eq!(e.kind.name(), "type_mismatch");
    }
    // The printers say the same of the same values.
    let e = json_err(&t, &cases[0].0);
    assert_eq!(e.kind, EncodeKind::TypeMismatch, "{e}");
    let e = text_err(&t, &cases[4].0);
    assert_eq!(e.kind, EncodeKind::TypeMismatch, "{e}");
    assert_eq!(e.path, "$.optional_nested_message");
}

#[test]
fn nesting_too_deep_is_limit() {
    let t = proto_runtime_common::tables();
    let m = chain(&t, 101);
    let e = wire_err(&t, &m);
    assert_eq!(e.kind, EncodeKind::Limit, "{e}");
    assert!(
        e.path.starts_with("$.recursive_message.recursive_message."),
        "{}",
        e.path
    );
    assert_eq!(e.kind.name(), "limit");
    assert_eq!(json_err(&t, &m).kind, EncodeKind::Limit);
    let e = text_err(&t, &m);
    assert_eq!(e.kind, EncodeKind::Limit);
    assert!(
        e.path.starts_with("$.recursive_message.recursive_message."),
        "{}",
        e.path
    );
    // At the limit, it is written; a configured limit is the same kind.
    assert!(encode_dyn(&t, &chain(&t, 100), false).is_ok());
    let opts = EncodeOptions {
        deterministic: false,
        max_depth: 3,
    };
    match encode(&t, m.ty, &chain(&t, 4), &DynSource, opts) {
        Err(EncodeFailure::Encode(e)) => assert_eq!(e.kind, EncodeKind::Limit),
        _ => panic!("4 levels written under a limit of 3"),
    }
}

#[test]
fn json_values_out_of_range_and_invalid() {
    let t = proto_runtime_common::tables();
    let ts = ty(&t, "google.protobuf.Timestamp");
    let du = ty(&t, "google.protobuf.Duration");
    let msg = |ty: u32, fields: &[(u32, Value)]| {
        let mut m = DynMessage::new(ty);
        for (n, v) in fields {
            m.set(*n, v.clone());
        }
        Value::Message(Box::new(m))
    };
    let out_of_range = [
        // After 9999-12-31, before 0001-01-01, nanos below 0.
        with(
            &t,
            T3,
            "optional_timestamp",
            msg(ts, &[(1, Value::I64(253_402_300_800))]),
        ),
        with(
            &t,
            T3,
            "optional_timestamp",
            msg(ts, &[(1, Value::I64(-62_135_596_801))]),
        ),
        with(
            &t,
            T3,
            "optional_timestamp",
            msg(ts, &[(2, Value::I32(-1))]),
        ),
        // Over 10,000 years, signs that differ.
        with(
            &t,
            T3,
            "optional_duration",
            msg(du, &[(1, Value::I64(315_576_000_001))]),
        ),
        with(
            &t,
            T3,
            "optional_duration",
            msg(du, &[(1, Value::I64(1)), (2, Value::I32(-1))]),
        ),
    ];
    for m in &out_of_range {
        let e = json_err(&t, m);
        assert_eq!(e.kind, EncodeKind::OutOfRange, "{e}");
        assert_eq!(e.kind.name(), "out_of_range");
        assert!(e.path.starts_with("$.optional_"), "{}", e.path);
        // The wire form has no such rule.
        assert!(encode_dyn(&t, m, false).is_ok());
    }
    // A proto2 string is not checked as UTF-8 on the wire; JSON is text.
    for bad in [&b"\xff"[..], b"a\xed\xa0\x80", b"\xc3"] {
        let m = with(&t, T2, "optional_string", Value::Str(bad.to_vec()));
        assert!(encode_dyn(&t, &m, false).is_ok());
        let e = json_err(&t, &m);
        assert_eq!(e.kind, EncodeKind::InvalidValue, "{e}");
        assert_eq!(e.kind.name(), "invalid_value");
        assert_eq!(e.path, "$.optional_string");
        let m = with(
            &t,
            T2,
            "map_string_string",
            Value::Map(vec![(Value::Str(bad.to_vec()), Value::Str(vec![]))]),
        );
        assert_eq!(json_err(&t, &m).kind, EncodeKind::InvalidValue);
    }
}
