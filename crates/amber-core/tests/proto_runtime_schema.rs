//! Schema tables: kinds, cardinality, packing, presence, closed enums,
//! UTF-8 rules, delimited encoding, JSON names and defaults, resolved by
//! protobuf's rules for proto2, proto3 and editions (with inheritance).

mod proto_runtime_common;

use amber_core::proto::compile;
use amber_core::proto::runtime::{
    decode_dyn, encode_dyn, Cardinality, DefaultValue, FieldInfo, Kind, Tables, Value,
};
use proto_runtime_common::tables;

fn field<'t>(t: &'t Tables, msg: &str, name: &str) -> &'t FieldInfo {
    let m = t.message(t.message_index(msg).unwrap());
    m.fields.iter().find(|f| f.name == name).unwrap()
}

const P3: &str = "protobuf_test_messages.proto3.TestAllTypesProto3";
const P2: &str = "protobuf_test_messages.proto2.TestAllTypesProto2";
const E23: &str = "protobuf_test_messages.editions.TestAllTypesEdition2023";

#[test]
fn conformance_types_resolve_like_protobuf() {
    let t = tables();
    let packed = |m, n| field(&t, m, n).card;
    for m in [P3, P2, E23] {
        let info = t.message(t.message_index(m).unwrap());
        assert!(info.fields.windows(2).all(|w| w[0].number < w[1].number));
        for f in &info.fields {
            assert_eq!(info.field(f.number).unwrap().name, f.name);
        }
        assert!(info.field(100_000).is_none());
        assert_eq!(
            packed(m, "packed_int32"),
            Cardinality::Repeated { packed: true }
        );
        assert_eq!(
            packed(m, "unpacked_int32"),
            Cardinality::Repeated { packed: false }
        );
        assert_eq!(packed(m, "map_int32_int32"), Cardinality::Map);
        assert_eq!(
            packed(m, "repeated_string"),
            Cardinality::Repeated { packed: false }
        );
        assert_eq!(field(&t, m, "optional_int32").json_name, "optionalInt32");
        assert!(field(&t, m, "oneof_uint32").oneof.is_some());
        assert!(matches!(
            field(&t, m, "optional_nested_message").kind,
            Kind::Message(_)
        ));
    }
    // Repeated scalars: packed in proto3 and editions, expanded in proto2.
    assert_eq!(
        packed(P3, "repeated_int32"),
        Cardinality::Repeated { packed: true }
    );
    assert_eq!(
        packed(E23, "repeated_int32"),
        Cardinality::Repeated { packed: true }
    );
    assert_eq!(
        packed(P2, "repeated_int32"),
        Cardinality::Repeated { packed: false }
    );
    // Presence.
    assert_eq!(
        packed(P3, "optional_int32"),
        Cardinality::Singular { presence: false }
    );
    assert_eq!(
        packed(P2, "optional_int32"),
        Cardinality::Singular { presence: true }
    );
    assert_eq!(
        packed(E23, "optional_int32"),
        Cardinality::Singular { presence: true }
    );
    // Closed enums: proto2's; open: proto3's and editions' default.
    assert!(field(&t, P2, "optional_nested_enum").closed_enum);
    assert!(!field(&t, P3, "optional_nested_enum").closed_enum);
    assert!(!field(&t, E23, "optional_nested_enum").closed_enum);
    // UTF-8.
    assert!(field(&t, P3, "optional_string").utf8_verify);
    assert!(field(&t, E23, "optional_string").utf8_verify);
    assert!(!field(&t, P2, "optional_string").utf8_verify);
    // Groups and DELIMITED (file default in the edition file, overridden
    // per field to LENGTH_PREFIXED).
    assert!(field(&t, P2, "data").delimited);
    assert!(field(&t, E23, "groupliketype").delimited);
    assert!(!field(&t, E23, "optional_nested_message").delimited);
    assert!(!field(&t, P3, "optional_nested_message").delimited);
    // Defaults.
    assert_eq!(
        field(&t, P2, "default_int32").default,
        DefaultValue::Int(-123456789)
    );
    assert_eq!(
        field(&t, P2, "default_uint64").default,
        DefaultValue::Uint(10123456789123456789)
    );
    assert_eq!(
        field(&t, P2, "default_double").default,
        DefaultValue::Float(7e22)
    );
    assert_eq!(
        field(&t, P2, "default_bool").default,
        DefaultValue::Bool(true)
    );
    assert_eq!(
        field(&t, P2, "default_string").default,
        DefaultValue::Str("Rosebud".into())
    );
    assert_eq!(
        field(&t, P2, "default_bytes").default,
        DefaultValue::Bytes(b"joshua".to_vec())
    );
    assert_eq!(
        field(&t, P3, "optional_int32").default,
        DefaultValue::Int(0)
    );
}

const EDITIONS: &str = r#"
edition = "2023";
package e;
option features.enum_type = CLOSED;
option features.utf8_validation = NONE;
option features.repeated_field_encoding = EXPANDED;
enum Closed { C0 = 0; C1 = 1; }
enum Open { option features.enum_type = OPEN; O0 = 0; O1 = 1; }
message M {
  int32 implicit = 1 [features.field_presence = IMPLICIT];
  int32 explicit = 2 [features.field_presence = EXPLICIT];
  int32 required = 3 [features.field_presence = LEGACY_REQUIRED];
  repeated int32 expanded = 4;
  string s = 5;
  string v = 6 [features.utf8_validation = VERIFY];
  Closed c = 7;
  Open o = 8;
  M child = 9 [features.message_encoding = DELIMITED];
  map<string, M> m = 10;
  message Inner {
    repeated int32 r = 1;
    repeated int32 p = 2 [features.repeated_field_encoding = PACKED];
  }
  oneof k { int32 k1 = 11; string k2 = 12; }
  Bytes b = 13 [default = B2];
  enum Bytes { B0 = 0; B1 = 1; B2 = 2; }
}
"#;

fn edition_tables() -> Tables {
    let mut files = |_: &str| Some(EDITIONS.as_bytes().to_vec());
    let set = compile(&["e.proto"], &mut files, true).unwrap();
    Tables::from_set(&set).unwrap()
}

#[test]
fn editions_features_inherit_from_file_through_messages_to_fields() {
    let t = edition_tables();
    let f = |n| field(&t, "e.M", n);
    assert_eq!(
        f("implicit").card,
        Cardinality::Singular { presence: false }
    );
    assert_eq!(f("explicit").card, Cardinality::Singular { presence: true });
    assert!(f("required").required);
    assert_eq!(f("required").card, Cardinality::Singular { presence: true });
    assert_eq!(f("expanded").card, Cardinality::Repeated { packed: false });
    assert!(!f("s").utf8_verify);
    assert!(f("v").utf8_verify);
    assert!(f("c").closed_enum);
    assert!(!f("o").closed_enum);
    assert!(f("child").delimited);
    assert_eq!(f("m").card, Cardinality::Map);
    assert_eq!(f("k1").card, Cardinality::Singular { presence: true });
    assert_eq!(f("b").default, DefaultValue::Enum(2));
    let r = field(&t, "e.M.Inner", "r");
    assert_eq!(r.card, Cardinality::Repeated { packed: false });
    let p = field(&t, "e.M.Inner", "p");
    assert_eq!(p.card, Cardinality::Repeated { packed: true });
    // Map entry values are length-prefixed whatever the features say.
    let entry = t.message(t.message_index("e.M.MEntry").unwrap());
    assert!(!entry.field(2).unwrap().delimited);
}

#[test]
fn editions_round_trip_closed_enums_groups_and_oneofs() {
    let t = edition_tables();
    let ty = t.message_index("e.M").unwrap();
    // c = 5 (closed, undeclared): kept as unknown, written after the known
    // fields; o = 5 (open): kept as the field's value.
    let data = [0x38, 0x05, 0x40, 0x05];
    let m = decode_dyn(&t, ty, &data).unwrap();
    assert_eq!(m.get(7), None);
    assert_eq!(m.get(8), Some(&Value::Enum(5)));
    assert_eq!(m.unknown, [0x38, 0x05]);
    assert_eq!(encode_dyn(&t, &m, true).unwrap(), [0x40, 0x05, 0x38, 0x05]);
    // child as a group, with implicit zero skipped on re-encode.
    let data = [0x4b, 0x08, 0x00, 0x10, 0x00, 0x4c];
    let m = decode_dyn(&t, ty, &data).unwrap();
    assert_eq!(encode_dyn(&t, &m, true).unwrap(), [0x4b, 0x10, 0x00, 0x4c]);
    // Oneof: the last member on the wire wins.
    let data = [0x58, 0x01, 0x62, 0x01, b'x', 0x58, 0x02];
    let m = decode_dyn(&t, ty, &data).unwrap();
    assert_eq!(m.get(11), Some(&Value::I32(2)));
    assert_eq!(m.get(12), None);
    // Non-deterministic mode keeps map entries in wire order.
    let e = |k: u8| vec![0x52, 0x05, 0x0a, 0x01, k, 0x12, 0x00];
    let data = [e(b'b'), e(b'a')].concat();
    let m = decode_dyn(&t, ty, &data).unwrap();
    assert_eq!(encode_dyn(&t, &m, false).unwrap(), data);
    assert_eq!(
        encode_dyn(&t, &m, true).unwrap(),
        [e(b'a'), e(b'b')].concat()
    );
}

#[test]
fn every_golden_descriptor_set_compiles_to_tables() {
    use amber_core::proto::{FileDescriptorSet, Message};
    let dir = proto_runtime_common::data().join("golden");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.extension().and_then(|e| e.to_str()) != Some("pb") {
            continue;
        }
        let set = FileDescriptorSet::decode(&std::fs::read(&p).unwrap()).unwrap();
        let t = Tables::from_set(&set).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        for m in &t.messages {
            for f in &m.fields {
                assert_eq!(m.field(f.number).map(|g| &g.name), Some(&f.name));
                if f.card == Cardinality::Map {
                    let Kind::Message(e) = f.kind else { panic!() };
                    assert!(t.message(e).map_entry);
                }
            }
        }
        n += 1;
    }
    assert!(n > 20, "{n} goldens");
}

const EXTENSIONS: &str = r#"
syntax = "proto2";
package x;
message Base {
  optional int32 a = 1;
  extensions 100 to 199;
}
extend Base {
  optional int32 top = 100;
  repeated string names = 101;
  optional group Grp = 102 { optional int32 g = 1; }
}
message Scope {
  extend Base { optional Scope nested = 150; }
  optional string s = 1;
}
"#;

#[test]
fn extensions_join_the_fields_of_the_type_they_extend() {
    let mut files = |_: &str| Some(EXTENSIONS.as_bytes().to_vec());
    let set = compile(&["x.proto"], &mut files, true).unwrap();
    let t = Tables::from_set(&set).unwrap();
    let ty = t.message_index("x.Base").unwrap();
    let info = t.message(ty);
    let names: Vec<&str> = info.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        ["a", "[x.top]", "[x.names]", "[x.grp]", "[x.Scope.nested]"]
    );
    assert!(info.fields[1..]
        .iter()
        .all(|f| f.extension && f.json_name == f.name));
    assert!(!info.fields[0].extension);
    // Unset extensions are not printed by ProtoJSON's "always print" option.
    assert_eq!(info.decl_order, [0]);
    assert_eq!(info.field(150).unwrap().name, "[x.Scope.nested]");
    assert!(info.field(102).unwrap().delimited);
    // On the wire they are fields like the others, no longer unknown.
    let data = [
        0x08, 0x01, // a = 1
        0xa0, 0x06, 0x07, // [x.top] = 7
        0xaa, 0x06, 0x01, b'n', // [x.names] = "n"
        0xb3, 0x06, 0x08, 0x02, 0xb4, 0x06, // [x.grp] { g: 2 }
        0xb2, 0x09, 0x03, 0x0a, 0x01, b's', // [x.Scope.nested] { s: "s" }
    ];
    let m = decode_dyn(&t, ty, &data).unwrap();
    assert!(m.unknown.is_empty());
    assert_eq!(m.get(100), Some(&Value::I32(7)));
    assert_eq!(encode_dyn(&t, &m, true).unwrap(), data);
    // A descriptor set (not compiled here) giving two extensions one number is refused.
    let mut twice = set.clone();
    let mut again = twice.file[0].extension[0].clone();
    again.name = Some("again".into());
    twice.file[0].extension.push(again);
    let err = Tables::from_set(&twice).unwrap_err();
    assert!(
        err.contains("[x.top] and [x.again] both use field number 100"),
        "{err}"
    );
}

#[test]
fn message_set_members_travel_as_items() {
    let src = "syntax = \"proto2\"; package s;
        message Set { option message_set_wire_format = true; extensions 4 to max; }
        message M { extend Set { optional M m = 1000; } optional int32 i = 1; }";
    let mut files = |_: &str| Some(src.as_bytes().to_vec());
    let set = compile(&["s.proto"], &mut files, true).unwrap();
    let t = Tables::from_set(&set).unwrap();
    let ty = t.message_index("s.Set").unwrap();
    let info = t.message(ty);
    assert!(info.message_set && info.fields[0].set_item);
    let canonical = [0x0b, 0x10, 0xe8, 0x07, 0x1a, 0x02, 0x08, 0x05, 0x0c];
    let m = decode_dyn(&t, ty, &canonical).unwrap();
    assert!(m.unknown.is_empty());
    assert_eq!(encode_dyn(&t, &m, true).unwrap(), canonical);
    // The bytes before the id, another field in between: written back canonically.
    let swapped = [
        0x0b, 0x1a, 0x02, 0x08, 0x05, 0x28, 0x01, 0x10, 0xe8, 0x07, 0x0c,
    ];
    let m = decode_dyn(&t, ty, &swapped).unwrap();
    assert_eq!(encode_dyn(&t, &m, true).unwrap(), canonical);
    // An id no member has stays unknown, as an item; a half item is dropped.
    let other = [
        0x0b, 0x1a, 0x01, 0x00, 0x10, 0x07, 0x0c, 0x0b, 0x10, 0x07, 0x0c,
    ];
    let m = decode_dyn(&t, ty, &other).unwrap();
    assert_eq!(m.unknown, [0x0b, 0x10, 0x07, 0x1a, 0x01, 0x00, 0x0c]);
    assert_eq!(encode_dyn(&t, &m, true).unwrap(), m.unknown);
    let err = decode_dyn(&t, ty, &[0x0b, 0x10, 0x07]).unwrap_err();
    assert_eq!(err.to_string(), "group without its end tag at byte 3 ($)");
    // Group 1 is an item even where a member has number 1.
    let src = src
        .replace("4 to max", "1 to max")
        .replace("m = 1000", "m = 1");
    let mut files = |_: &str| Some(src.as_bytes().to_vec());
    let t = Tables::from_set(&compile(&["s.proto"], &mut files, true).unwrap()).unwrap();
    let ty = t.message_index("s.Set").unwrap();
    let item = [0x0b, 0x10, 0x01, 0x1a, 0x02, 0x08, 0x05, 0x0c];
    let m = decode_dyn(&t, ty, &item).unwrap();
    assert!(m.unknown.is_empty());
    assert_eq!(encode_dyn(&t, &m, true).unwrap(), item);
}
