//! Protobuf wire decoding on arbitrary bytes, for a message type with every
//! kind of field (scalars, strings, bytes, open and closed enums, nested and
//! recursive messages, groups, packed and unpacked repeated fields, maps,
//! oneofs, extensions, a `MessageSet`), as `amber.proto` parses bytes from
//! the network.
//!
//! Checks: nothing panics or hangs; bytes that decode re-encode, and the
//! re-encoded bytes decode to the same tree and encode to the same bytes.
#![no_main]

use std::sync::OnceLock;

use amber_core::proto::compile;
use amber_core::proto::runtime::{decode_dyn, encode_dyn, Tables};
use libfuzzer_sys::fuzz_target;

const SCHEMA: &str = r#"
syntax = "proto2";
package f;
enum Closed { Z = 0; A = 1; B = 2; }
message M {
  optional int32 i32 = 1; optional int64 i64 = 2; optional uint32 u32 = 3;
  optional uint64 u64 = 4; optional sint32 s32 = 5; optional sint64 s64 = 6;
  optional fixed32 f32 = 7; optional fixed64 f64 = 8; optional sfixed32 sf32 = 9;
  optional sfixed64 sf64 = 10; optional float fl = 11; optional double db = 12;
  optional bool b = 13; optional string s = 14; optional bytes by = 15;
  optional Closed e = 16; optional M child = 17;
  repeated int32 ri = 18; repeated int64 rp = 19 [packed = true];
  repeated string rs = 20; repeated M rm = 21; repeated Closed re = 22;
  map<string, int32> ms = 23; map<int64, M> mm = 24; map<bool, Closed> me = 25;
  optional group G = 26 { optional int32 gi = 27; }
  oneof o { int32 oi = 28; string os = 29; M om = 30; }
  optional Set set = 31;
  extensions 100 to 199;
}
message Set { option message_set_wire_format = true; extensions 1 to max; }
extend M {
  optional int32 ext_i = 100; repeated string ext_s = 101; optional M ext_m = 102;
  optional group ExtG = 103 { optional int32 x = 1; }
}
extend Set { optional M in_set = 1; optional Set set_in_set = 1000; }
"#;

fn tables() -> &'static (Tables, u32) {
    static T: OnceLock<(Tables, u32)> = OnceLock::new();
    T.get_or_init(|| {
        let mut files = |_: &str| Some(SCHEMA.as_bytes().to_vec());
        let set = compile(&["f.proto"], &mut files, true).expect("the fuzz schema compiles");
        let t = Tables::from_set(&set).expect("tables");
        let ty = t.message_index("f.M").expect("f.M");
        (t, ty)
    })
}

fuzz_target!(|input: &[u8]| {
    let (t, ty) = tables();
    if let Ok(m) = decode_dyn(t, *ty, input) {
        let bytes = encode_dyn(t, &m, true).expect("a decoded message encodes");
        let again = decode_dyn(t, *ty, &bytes).expect("re-encoded bytes decode");
        assert_eq!(encode_dyn(t, &again, true).expect("encodes again"), bytes);
    }
});
