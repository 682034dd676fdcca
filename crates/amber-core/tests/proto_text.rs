//! Text-format and ProtoJSON errors say what kind of problem and where:
//! the kind, the byte offset of the token at fault, the field path, and
//! (in the message) `line:col`; repeated occurrences of singular fields are
//! refused or accepted as Google's `text_format.Parse` decides; unknown
//! JSON keys are checked for duplicates in linear time.

use amber_core::proto::compile;
use amber_core::proto::json;
use amber_core::proto::runtime::{DecodeKind, DynBuilder, DynMessage, Tables};
use amber_core::proto::text::{parse_text, ParseOptions, TextError, TextFailure};

const SRC: &str = r#"syntax = "proto3";
package tt;
import "google/protobuf/any.proto";
enum E { E0 = 0; E1 = 1; }
message M {
  M child = 1; int32 n = 2; repeated M items = 3; map<string, M> by = 4;
  repeated int32 nums = 5; optional int32 o = 6; E e = 7;
  oneof pick { int32 a = 8; M b = 9; }
  google.protobuf.Any any = 10; string s = 11; uint32 u = 12;
}
"#;

fn tables() -> Tables {
    let mut files = |name: &str| (name == "t.proto").then(|| SRC.as_bytes().to_vec());
    let set = compile(&["t.proto"], &mut files, true).unwrap();
    Tables::from_set(&set).unwrap()
}

fn text(t: &Tables, s: &str) -> Result<DynMessage, TextError> {
    let ty = t.message_index("tt.M").unwrap();
    parse_text(
        t,
        ty,
        s,
        &mut DynBuilder { tables: t },
        ParseOptions::default(),
    )
    .map_err(|e| match e {
        TextFailure::Syntax(e) => *e,
        TextFailure::Build(never) => match never {},
    })
}

/// (text, kind, the token at the offset, path)
const TEXT_CASES: &[(&str, DecodeKind, &str, &str)] = &[
    (
        "child { child { n: 99999999999 } }",
        DecodeKind::OutOfRange,
        "99999999999",
        "$.child.child.n",
    ),
    (
        "child { child { nope: 1 } }",
        DecodeKind::UnknownField,
        "nope",
        "$.child.child",
    ),
    (
        "child { n: \"x\" }",
        DecodeKind::TypeMismatch,
        "\"x\"",
        "$.child.n",
    ),
    (
        "items { n: 1 } items { n: x }",
        DecodeKind::TypeMismatch,
        "x",
        "$.items[1].n",
    ),
    (
        "nums: 1 nums: [2, 3, x]",
        DecodeKind::TypeMismatch,
        "x",
        "$.nums[3]",
    ),
    (
        "by { key: \"a\" } by { key: \"b\" value { n: t } }",
        DecodeKind::TypeMismatch,
        "t",
        "$.by[1].n",
    ),
    (
        "by { key: \"a\" nokey: 1 }",
        DecodeKind::UnknownField,
        "nokey",
        "$.by[0]",
    ),
    ("child { n: 1 ", DecodeKind::Truncated, "", "$.child"),
    ("n: 1 n: 2", DecodeKind::Duplicate, "n: 2", "$.n"),
    ("a: 1 b { }", DecodeKind::Duplicate, "b { }", "$.b"),
    ("e: E7", DecodeKind::UnknownField, "E7", "$.e"),
    ("u: -1", DecodeKind::OutOfRange, "-1", "$.u"),
    ("n 1", DecodeKind::Malformed, "1", "$.n"),
    (
        "any { [type.googleapis.com/tt.Nope] { } }",
        DecodeKind::UnknownField,
        "[type",
        "$.any",
    ),
    (
        "any { [type.googleapis.com/tt.M] { items { n: x } } }",
        DecodeKind::TypeMismatch,
        "x",
        "$.any.items[0].n",
    ),
    (
        "s: \"\u{e9}\u{e9}\" n: zz",
        DecodeKind::TypeMismatch,
        "zz",
        "$.n",
    ),
    (
        "any { [type.googleapis.com/tt.M] { n: 5 } type_url: \"x\" }",
        DecodeKind::Duplicate,
        "type_url",
        "$.any.type_url",
    ),
];

#[test]
fn text_errors_have_kind_offset_and_path() {
    let t = tables();
    for &(src, kind, token, path) in TEXT_CASES {
        let e = text(&t, src).expect_err(src);
        assert_eq!((e.kind, e.path.as_str()), (kind, path), "{src}: {e}");
        assert!(
            src.as_bytes()[e.offset..].starts_with(token.as_bytes()),
            "{src}: offset {}",
            e.offset
        );
        let before = &src[..e.offset];
        let line = before.matches('\n').count() + 1;
        let col = e.offset - before.rfind('\n').map_or(0, |i| i + 1) + 1;
        assert_eq!((e.line, e.col), (line, col), "{src}");
        assert!(
            e.to_string().starts_with(&format!("{line}:{col} : ")),
            "{e}"
        );
    }
}

#[test]
fn text_depth_limit_is_a_limit() {
    let t = tables();
    let deep = "child { ".repeat(150) + &"}".repeat(150);
    let e = text(&t, &deep).unwrap_err();
    assert_eq!(e.kind, DecodeKind::Limit);
    assert!(e.path.starts_with("$.child.child."), "{}", e.path);
}

/// `text_format.Parse`'s answers (protobuf 7.36) for singular fields given
/// more than once.
#[test]
fn singular_fields_given_twice_as_google_parse() {
    let t = tables();
    let accepted = [
        "n: 0 n: 1",
        "n: 0 n: 0 n: 7",
        "e: E0 e: E1",
        "s: \"\" s: \"x\"",
        "nums: 1 nums: 2",
        "by { key: \"a\" } by { key: \"a\" }",
        "child { n: 0 n: 1 }",
        "any { type_url: \"type.googleapis.com/tt.M\" [type.googleapis.com/tt.M] { n: 1 } }",
        "any { [type.googleapis.com/tt.M] { n: 1 } [type.googleapis.com/tt.M] { n: 2 } }",
        "any { [type.googleapis.com/tt.M] { } value: \"x\" }",
        "any { value: \"x\" [type.googleapis.com/tt.M] { } value: \"y\" }",
    ];
    for src in accepted {
        text(&t, src).unwrap_or_else(|e| panic!("{src}: {e}"));
    }
    let refused = [
        "n: 1 n: 0",
        "n: 1 n: 1",
        "e: E1 e: E0",
        "s: \"x\" s: \"\"",
        "o: 0 o: 1",
        "child {} child {}",
        "a: 0 a: 1",
        "a: 1 b {}",
        "b {} a: 0",
        "any { [type.googleapis.com/tt.M] { n: 5 } type_url: \"x\" }",
        "any { [type.googleapis.com/tt.M] { n: 5 } value: \"x\" }",
    ];
    for src in refused {
        let e = text(&t, src).expect_err(src);
        assert_eq!(e.kind, DecodeKind::Duplicate, "{src}: {e}");
    }
}

fn json_err(t: &Tables, src: &str, ignore: bool) -> json::ParseError {
    let ty = t.message_index("tt.M").unwrap();
    let opts = json::ParseOptions {
        ignore_unknown_fields: ignore,
        ..Default::default()
    };
    match json::parse(t, ty, src.as_bytes(), &mut DynBuilder { tables: t }, &opts) {
        Ok(_) => panic!("{src} parsed"),
        Err(json::ParseFailure::Json(e)) => *e,
        Err(json::ParseFailure::Build(never)) => match never {},
    }
}

#[test]
fn json_errors_have_kinds() {
    let t = tables();
    let cases: &[(&str, DecodeKind, &str)] = &[
        (r#"{"n": "x"}"#, DecodeKind::TypeMismatch, "$.n"),
        (r#"{"n": 1e20}"#, DecodeKind::OutOfRange, "$.n"),
        (r#"{"nope": 1}"#, DecodeKind::UnknownField, "$"),
        (r#"{"e": "E9"}"#, DecodeKind::UnknownField, "$.e"),
        (r#"{"n": 1, "n": 2}"#, DecodeKind::Duplicate, "$"),
        (r#"{"a": 1, "b": {}}"#, DecodeKind::Duplicate, "$.b"),
        (r#"{"child": {"n": 1"#, DecodeKind::Truncated, "$.child"),
        (r#"{"s": "ab"#, DecodeKind::Truncated, "$.s"),
        (r#"{"n": 1,}"#, DecodeKind::Malformed, "$"),
        (
            r#"{"nums": [1, null]}"#,
            DecodeKind::TypeMismatch,
            "$.nums[1]",
        ),
    ];
    for &(src, kind, path) in cases {
        let e = json_err(&t, src, false);
        assert_eq!((e.kind, e.path.as_str()), (kind, path), "{src}: {e}");
    }
    let deep = "{\"child\": ".repeat(150) + "{}" + &"}".repeat(150);
    assert_eq!(json_err(&t, &deep, false).kind, DecodeKind::Limit);
}

#[test]
fn json_unknown_keys_duplicates_found() {
    let t = tables();
    for (src, key) in [
        (r#"{"k1": 1, "k2": 2, "k1": 3}"#, "\"k1\""),
        (r#"{"child": {"x": {}, "y": [], "x": 1}}"#, "\"x\""),
        (r#"{"k": 1, "child": {"k": 1}, "n": 2, "k": 2}"#, "\"k\""),
    ] {
        // The second occurrence of the key: its last in the text.
        let at = src.rfind(key).unwrap();
        let e = json_err(&t, src, true);
        assert_eq!(
            (e.kind, e.offset),
            (DecodeKind::Duplicate, at),
            "{src}: {e}"
        );
    }
    // Many distinct unknown keys: accepted, in linear time (200,000 keys
    // took minutes when each was looked for in a list of those seen).
    let many = format!(
        "{{{}}}",
        (0..200_000)
            .map(|i| format!("\"k{i}\": 1"))
            .collect::<Vec<_>>()
            .join(",")
    );
    let ty = t.message_index("tt.M").unwrap();
    let opts = json::ParseOptions {
        ignore_unknown_fields: true,
        ..Default::default()
    };
    let start = std::time::Instant::now();
    assert!(json::parse(
        &t,
        ty,
        many.as_bytes(),
        &mut DynBuilder { tables: &t },
        &opts
    )
    .is_ok());
    assert!(start.elapsed().as_secs() < 20, "{:?}", start.elapsed());
}
