//! ProtoJSON on the conformance messages, through the generic tree
//! (`DynMessage`): parse then print gives the text protobuf Python's
//! `json_format` gives for the same input (the expected strings below
//! are its `MessageToJson(Parse(text), indent=None)`), errors say where,
//! and hostile input fails cleanly.

mod proto_runtime_common;

use amber_core::proto::json::{self, ParseFailure, ParseOptions, PrintOptions};
use amber_core::proto::runtime::{
    decode_dyn, encode_dyn, DynBuilder, DynMessage, DynSource, Tables,
};

const T3: &str = "protobuf_test_messages.proto3.TestAllTypesProto3";
const T2: &str = "protobuf_test_messages.proto2.TestAllTypesProto2";

fn parse_with(
    t: &Tables,
    ty: &str,
    text: &[u8],
    opts: &ParseOptions,
) -> Result<DynMessage, json::ParseError> {
    let ty = t.message_index(ty).unwrap();
    let mut m =
        json::parse(t, ty, text, &mut DynBuilder { tables: t }, opts).map_err(|e| match e {
            ParseFailure::Json(e) => *e,
            ParseFailure::Build(never) => match never {},
        })?;
    amber_core::proto::runtime::dynamic::dedup_maps(&mut m);
    Ok(m)
}

fn parse(t: &Tables, ty: &str, text: &str) -> Result<DynMessage, json::ParseError> {
    parse_with(t, ty, text.as_bytes(), &ParseOptions::default())
}

fn print_with(t: &Tables, m: &DynMessage, opts: &PrintOptions) -> Result<String, String> {
    json::print(t, m.ty, m, &DynSource, opts).map_err(|e| match e {
        json::PrintFailure::Print(e) => e.to_string(),
        json::PrintFailure::Source(e) => e.to_string(),
    })
}

fn print(t: &Tables, m: &DynMessage) -> String {
    print_with(t, m, &PrintOptions::default()).unwrap()
}

#[test]
fn scalars_match_json_format() {
    let t = proto_runtime_common::tables();
    let m = parse(&t, T3, r#"{"optionalInt32": -5, "optional_int64": "123456789012345", "optionalUint64": 18446744073709551615, "optionalFloat": 0.1, "optionalDouble": 1e-5, "optionalBool": true, "optionalString": "h\u00e9\ud83d\ude00\"", "optionalBytes": "-_8", "optionalNestedEnum": "BAZ", "optionalForeignEnum": 7, "optionalNestedMessage": {"a": 1, "corecursive": {}}, "repeatedInt64": ["1", -2, 3e2], "repeatedDouble": ["NaN", "Infinity", "-Infinity", 1e16, 0], "mapBoolBool": {"true": true}, "mapInt32Int32": {"-1": 2}, "oneofUint32": 0}"#).unwrap();
    assert_eq!(
        print(&t, &m),
        r#"{"optionalInt32": -5, "optionalInt64": "123456789012345", "optionalUint64": "18446744073709551615", "optionalFloat": 0.1, "optionalDouble": 1e-05, "optionalBool": true, "optionalString": "h\u00e9\ud83d\ude00\"", "optionalBytes": "+/8=", "optionalNestedMessage": {"a": 1, "corecursive": {}}, "optionalNestedEnum": "BAZ", "optionalForeignEnum": 7, "repeatedInt64": ["1", "-2", "300"], "repeatedDouble": ["NaN", "Infinity", "-Infinity", 1e+16, 0.0], "mapInt32Int32": {"-1": 2}, "mapBoolBool": {"true": true}, "oneofUint32": 0}"#
    );
    // The same through the wire: JSON -> tree -> bytes -> tree -> JSON.
    let bytes = encode_dyn(&t, &m, true).unwrap();
    let back = decode_dyn(&t, m.ty, &bytes).unwrap();
    assert_eq!(print(&t, &back), print(&t, &m));
}

#[test]
fn well_known_types_match_json_format() {
    let t = proto_runtime_common::tables();
    let m = parse(&t, T3, r#"{"optionalTimestamp": "1972-01-01T10:00:20.021-05:00", "optionalDuration": "-0.5s", "optionalFieldMask": "fooBar,baz", "optionalStruct": {"a": [1, "x", null, true, {"b": {}}]}, "optionalValue": null, "optionalNullValue": null, "optionalAny": {"optionalInt32": 5, "@type": "type.googleapis.com/protobuf_test_messages.proto3.TestAllTypesProto3"}, "repeatedAny": [{"@type": "x/google.protobuf.Duration", "value": "1.000000001s"}, {}], "optionalInt64Wrapper": "0", "optionalBytesWrapper": "AA==", "repeatedValue": [null, 1.5, []], "repeatedListValue": [[]], "repeatedFloatWrapper": [3.4028234663852886e38]}"#).unwrap();
    assert_eq!(
        print(&t, &m),
        r#"{"optionalInt64Wrapper": "0", "optionalBytesWrapper": "AA==", "repeatedFloatWrapper": [3.4028235e+38], "optionalDuration": "-0.500s", "optionalTimestamp": "1972-01-01T15:00:20.021Z", "optionalFieldMask": "fooBar,baz", "optionalStruct": {"a": [1.0, "x", null, true, {"b": {}}]}, "optionalAny": {"@type": "type.googleapis.com/protobuf_test_messages.proto3.TestAllTypesProto3", "optionalInt32": 5}, "optionalValue": null, "repeatedAny": [{"@type": "x/google.protobuf.Duration", "value": "1.000000001s"}, {}], "repeatedValue": [null, 1.5, []], "repeatedListValue": [[]]}"#
    );
}

#[test]
fn options_and_layout() {
    let t = proto_runtime_common::tables();
    let m = parse(&t, T3, r#"{"optionalInt32": 1, "optionalNestedEnum": "BAR", "mapStringString": {"b": "1", "a": "2"}}"#).unwrap();
    let o = PrintOptions {
        preserving_proto_field_name: true,
        use_integers_for_enums: true,
        indent: Some(2),
        sort_keys: true,
        ..PrintOptions::default()
    };
    assert_eq!(
        print_with(&t, &m, &o).unwrap(),
        "{\n  \"map_string_string\": {\n    \"a\": \"2\",\n    \"b\": \"1\"\n  },\n  \"optional_int32\": 1,\n  \"optional_nested_enum\": 1\n}"
    );
    // Fields without presence at their defaults, after the set ones.
    let empty = parse(&t, "protobuf_test_messages.proto3.ForeignMessage", "{}").unwrap();
    let o = PrintOptions {
        always_print_fields_with_no_presence: true,
        ..PrintOptions::default()
    };
    assert_eq!(print_with(&t, &empty, &o).unwrap(), r#"{"c": 0}"#);
    let full = print_with(&t, &m, &o).unwrap();
    assert!(full.starts_with(r#"{"optionalInt32": 1, "optionalNestedEnum": "BAR", "mapStringString": {"b": "1", "a": "2"}, "optionalInt64": "0","#), "{full}");
    assert!(full.contains(r#""optionalNullValue": null"#) && full.contains(r#""repeatedAny": []"#));
    // proto2: fields with presence only.
    let p2 = parse(&t, T2, "{}").unwrap();
    assert_eq!(
        print_with(&t, &p2, &o).unwrap().len(),
        print_with(&t, &p2, &o).unwrap().len()
    );
}

#[test]
fn errors_say_what_and_where() {
    let t = proto_runtime_common::tables();
    let cases: &[(&str, &str, usize)] = &[
        (r#"{"optionalFloat": 3.5e38}"#, "Float value too large", 18),
        (r#"{"optionalInt32": 1.5}"#, "non-integer", 18),
        (r#"{"optionalInt32": 2147483648}"#, "out of range", 18),
        (
            r#"{"oneofUint32": 1, "oneofString": "a"}"#,
            "multiple \"oneof_field\"",
            34,
        ),
        (
            r#"{"optionalNestedEnum": "NOPE"}"#,
            "Invalid enum value NOPE",
            23,
        ),
        (
            r#"{"optionalTimestamp": "10000-01-01T00:00:00Z"}"#,
            "RFC 3339",
            22,
        ),
        (
            r#"{"optionalInt32": 1, "optionalInt32": 2}"#,
            "duplicate key",
            21,
        ),
        (r#"{"nope": 1}"#, "no field named \"nope\"", 1),
        (r#"{"optionalInt32": 1,}"#, "expected a string", 20),
        (r#"{"optionalInt32": 01}"#, "expected ',' or '}'", 19),
        (r#"{"optionalDouble": NaN}"#, "expected a value", 19),
        ("{\"optionalString\": \"\\ud800\"}", "lone surrogate", 20),
        ("{\"optionalString\": \"a\\qb\"}", "invalid escape", 21),
        (r#"{} x"#, "extra data", 3),
        (
            r#"{"repeatedNestedMessage": [{}, {"a": "x"}]}"#,
            "Couldn't parse integer",
            37,
        ),
        (
            r#"{"mapStringString": {"a": "1", "a": "2"}}"#,
            "duplicate key",
            31,
        ),
        (
            r#"{"optionalAny": {"optionalInt32": 1}}"#,
            "@type is missing",
            16,
        ),
        (
            r#"{"optionalAny": {"@type": "x/nope.Nope"}}"#,
            "Can not find message descriptor",
            16,
        ),
    ];
    for (text, what, offset) in cases {
        let e = parse(&t, T3, text).expect_err(text);
        assert!(e.message.contains(what), "{text}: {e}");
        assert_eq!(e.offset, *offset, "{text}: {e}");
    }
    let e = parse(&t, T3, r#"{"repeatedNestedMessage": [{}, {"a": "x"}]}"#).unwrap_err();
    assert_eq!(e.path, "$.repeated_nested_message[1].a");
    assert_eq!((e.line, e.col), (1, 38));
    let e = parse(&t, T3, "{\n  \"mapInt32Int32\": {\"1\": 1, \"x\": 2}\n}").unwrap_err();
    assert_eq!(
        (e.path.as_str(), e.line, e.col),
        ("$.map_int32_int32[1]", 2, 29)
    );
    // Unknown fields and enum names are skipped when asked.
    let o = ParseOptions {
        ignore_unknown_fields: true,
        ..ParseOptions::default()
    };
    let m = parse_with(&t, T3, br#"{"nope": [1, {"x": null}], "optionalNestedEnum": "NOPE", "repeatedNestedEnum": ["FOO", "NOPE", 1], "optionalInt32": 3}"#, &o).unwrap();
    assert_eq!(
        print(&t, &m),
        r#"{"optionalInt32": 3, "repeatedNestedEnum": ["FOO", "BAR"]}"#
    );
}

#[test]
fn printer_errors() {
    let t = proto_runtime_common::tables();
    let ty = t.message_index(T3).unwrap();
    // optional_timestamp (302) { seconds (1): 253402300800 }: one second too late.
    let bytes = [0xf2, 0x12, 0x07, 0x08, 0x80, 0x83, 0xd1, 0xff, 0xaf, 0x07];
    let m = decode_dyn(&t, ty, &bytes).unwrap();
    let e = print_with(&t, &m, &PrintOptions::default()).unwrap_err();
    assert!(
        e.contains("Timestamp is not valid") && e.ends_with("($.optional_timestamp)"),
        "{e}"
    );
    let m = parse(&t, T3, r#"{"optionalValue": 1e400}"#).unwrap();
    let e = print_with(&t, &m, &PrintOptions::default()).unwrap_err();
    assert!(e.contains("Infinity for Value.number_value"), "{e}");
}

#[test]
fn hostile_input_fails_cleanly() {
    let t = proto_runtime_common::tables();
    // Deep nesting: messages, Struct values, skipped values, bare arrays.
    for depth in [99usize, 100, 101, 5000] {
        let text = format!(
            "{}{}",
            "{\"recursiveMessage\": ".repeat(depth),
            "{}".to_string() + &"}".repeat(depth)
        );
        let r = parse(&t, T3, &text);
        assert_eq!(r.is_ok(), depth < 100, "{depth}");
        let text = format!(
            "{{\"optionalValue\": {}1{}}}",
            "[".repeat(depth),
            "]".repeat(depth)
        );
        assert_eq!(parse(&t, T3, &text).is_ok(), depth < 50, "{depth}");
        let text = format!("{{\"x\": {}1{}}}", "[".repeat(depth), "]".repeat(depth));
        let o = ParseOptions {
            ignore_unknown_fields: true,
            ..ParseOptions::default()
        };
        assert_eq!(
            parse_with(&t, T3, text.as_bytes(), &o).is_ok(),
            depth <= 100,
            "{depth}"
        );
    }
    // Huge numbers, long digit strings, truncations of a valid text.
    for text in [
        format!("{{\"optionalInt64\": {}}}", "9".repeat(100_000)),
        format!("{{\"optionalDouble\": 1{}}}", "0".repeat(100_000)),
        format!("{{\"optionalInt32\": \"1e{}\"}}", "9".repeat(1000)),
        "{\"optionalUint64\": -1}".to_string(),
    ] {
        assert!(parse(&t, T3, &text).is_err());
    }
    let full = r#"{"optionalInt32": 1, "mapStringString": {"a": "\u00e9"}, "optionalAny": {"@type": "x/google.protobuf.Struct", "value": {"k": [1, {"z": null}]}}}"#;
    assert!(parse(&t, T3, full).is_ok());
    for i in 0..full.len() {
        assert!(
            parse_with(&t, T3, &full.as_bytes()[..i], &ParseOptions::default()).is_err(),
            "{i}"
        );
    }
    let e = parse_with(
        &t,
        T3,
        b"{\"optionalString\": \"a\xff\"}",
        &ParseOptions::default(),
    )
    .unwrap_err();
    assert!(e.message.contains("invalid UTF-8") && e.offset == 21, "{e}");
    for bad in [
        &b"\xff"[..],
        b"",
        b"   ",
        b"\xef\xbb\xbf{}",
        b"[]",
        b"null",
        b"{\"optionalString\": \"\x01\"}",
    ] {
        assert!(
            parse_with(&t, T3, bad, &ParseOptions::default()).is_err(),
            "{bad:?}"
        );
    }
}
