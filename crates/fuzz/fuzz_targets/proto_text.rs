//! The protobuf text format parser on arbitrary text, for the same message
//! type as `proto_wire` (every kind of field, and extensions), as `Message.from_text` reads
//! it.
//!
//! Checks: nothing panics or hangs; text that parses prints to text that
//! parses to the same message (compared through the wire form).
#![no_main]

use std::sync::OnceLock;

use amber_core::proto::compile;
use amber_core::proto::runtime::{dynamic::DynSource, encode_dyn, DynBuilder, Tables};
use amber_core::proto::text::{parse_text, print_text, ParseOptions, TextOptions};
use libfuzzer_sys::fuzz_target;

const SCHEMA: &str = r#"
syntax = "proto2";
package f;
import "google/protobuf/any.proto";
enum Closed { A = 1; B = 2; }
message M {
  optional int32 i32 = 1; optional int64 i64 = 2; optional uint32 u32 = 3;
  optional uint64 u64 = 4; optional sint32 s32 = 5; optional float fl = 11;
  optional double db = 12; optional bool b = 13; optional string s = 14;
  optional bytes by = 15; optional Closed e = 16; optional M child = 17;
  repeated int32 ri = 18; repeated string rs = 20; repeated M rm = 21;
  map<string, int32> ms = 23; map<int64, M> mm = 24;
  optional group G = 26 { optional int32 gi = 27; }
  oneof o { int32 oi = 28; string os = 29; M om = 30; }
  optional google.protobuf.Any any = 31;
  extensions 100 to 199;
}
extend M {
  optional int32 ext_i = 100; repeated string ext_s = 101; optional M ext_m = 102;
  optional group ExtG = 103 { optional int32 x = 1; }
}
"#;

fn tables() -> &'static (Tables, u32) {
    static T: OnceLock<(Tables, u32)> = OnceLock::new();
    T.get_or_init(|| {
        let mut files = |n: &str| (n == "f.proto").then(|| SCHEMA.as_bytes().to_vec());
        let set = compile(&["f.proto"], &mut files, true).expect("the fuzz schema compiles");
        let t = Tables::from_set(&set).expect("tables");
        let ty = t.message_index("f.M").expect("f.M");
        (t, ty)
    })
}

fuzz_target!(|input: &[u8]| {
    let Ok(text) = std::str::from_utf8(input) else {
        return;
    };
    let (t, ty) = tables();
    let opts = ParseOptions::default();
    let Ok(mut m) = parse_text(t, *ty, text, &mut DynBuilder { tables: t }, opts) else {
        return;
    };
    amber_core::proto::runtime::dynamic::dedup_maps(&mut m);
    let printed = print_text(t, *ty, &m, &DynSource, TextOptions::default()).expect("prints");
    let Ok(mut again) = parse_text(t, *ty, &printed, &mut DynBuilder { tables: t }, opts) else {
        panic!("printed text does not parse:\n{printed}");
    };
    amber_core::proto::runtime::dynamic::dedup_maps(&mut again);
    assert_eq!(
        encode_dyn(t, &again, true).expect("encodes"),
        encode_dyn(t, &m, true).expect("encodes")
    );
});
