//! Hostile input for the table-driven decoder: truncations, bit flips,
//! deep nesting, bad UTF-8, bad tags and lengths. Nothing may panic; every
//! error names a byte offset and a field path.

mod proto_runtime_common;

use amber_core::proto::runtime::{
    decode, decode_dyn, decode_dyn_with, encode, encode_dyn, encode_into, DecodeKind,
    DecodeOptions, DynSource, EncodeOptions, Failure, FieldInfo, MapValue, MessageBuilder, RawMode,
    Scalar, Tables, Value,
};
use amber_core::proto::wire::WireReader;
use proto_runtime_common::{tables, vectors, SYNTAXES};

const P3: &str = "protobuf_test_messages.proto3.TestAllTypesProto3";
const P2: &str = "protobuf_test_messages.proto2.TestAllTypesProto2";
const E23: &str = "protobuf_test_messages.editions.TestAllTypesEdition2023";

fn ty(t: &Tables, name: &str) -> u32 {
    t.message_index(name).unwrap()
}

fn varint(mut v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
    out
}

fn tag(num: u32, wt: u8) -> Vec<u8> {
    varint(((num as u64) << 3) | wt as u64)
}

fn len_field(num: u32, body: &[u8]) -> Vec<u8> {
    let mut out = tag(num, 2);
    out.extend(varint(body.len() as u64));
    out.extend_from_slice(body);
    out
}

/// Offsets where a top-level field ends (a cut there is a valid message).
fn boundaries(data: &[u8]) -> Vec<usize> {
    let mut r = WireReader::new(data);
    let mut out = vec![0];
    while !r.at_end() {
        let (n, w) = r.tag().unwrap();
        r.skip(n, w, 0).unwrap();
        out.push(r.pos());
    }
    out
}

/// Decode, and if it decodes, encode and check the encoding is stable.
fn roundtrip_stable(t: &Tables, ty: u32, data: &[u8]) {
    if let Ok(m) = decode_dyn(t, ty, data) {
        let a = encode_dyn(t, &m, true).unwrap();
        let m2 = decode_dyn(t, ty, &a).expect("re-decode of our own bytes");
        let b = encode_dyn(t, &m2, true).unwrap();
        assert_eq!(a, b, "encoding not stable for input {data:02x?}");
    }
}

#[test]
fn every_truncation_errors_except_at_field_boundaries() {
    let t = tables();
    for syntax in SYNTAXES {
        for v in vectors(syntax)
            .iter()
            .filter(|v| v.input.len() < 1500)
            .take(6)
        {
            let ty = ty(&t, &v.ty);
            let ok_cuts = boundaries(&v.input);
            for cut in 0..v.input.len() {
                let r = decode_dyn(&t, ty, &v.input[..cut]);
                if ok_cuts.contains(&cut) {
                    assert!(r.is_ok(), "{syntax}:{} cut {cut}: {:?}", v.line, r.err());
                } else {
                    let e = r.expect_err("a cut inside a field must fail");
                    assert!(e.offset <= cut, "{e}");
                    assert!(e.path.starts_with('$'), "{e}");
                }
            }
        }
    }
}

/// A xorshift generator of 64-bit numbers from `seed` (not 0): the same
/// sequence on every run.
fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}

#[test]
fn random_bit_flips_never_panic_and_reencode_stably() {
    let t = tables();
    let mut next = xorshift(0x9E37_79B9_7F4A_7C15);
    let mut decoded = 0;
    for syntax in SYNTAXES {
        for v in vectors(syntax) {
            if v.input.is_empty() {
                continue;
            }
            let ty = ty(&t, &v.ty);
            for _ in 0..40 {
                let mut data = v.input.clone();
                for _ in 0..=(next() % 3) {
                    let i = (next() % data.len() as u64) as usize;
                    data[i] ^= 1 << (next() % 8);
                }
                if decode_dyn(&t, ty, &data).is_ok() {
                    decoded += 1;
                }
                roundtrip_stable(&t, ty, &data);
            }
        }
    }
    assert!(decoded > 0);
}

fn nested(depth: usize) -> Vec<u8> {
    // recursive_message is field 27 in all three types.
    let mut inner = Vec::new();
    for _ in 0..depth {
        inner = len_field(27, &inner);
    }
    inner
}

#[test]
fn nesting_past_the_limit_fails_like_upb() {
    let t = tables();
    for name in [P3, P2] {
        let ty = ty(&t, name);
        // upb takes 100 nested messages and refuses 101.
        decode_dyn(&t, ty, &nested(100)).unwrap();
        let e = decode_dyn(&t, ty, &nested(101)).unwrap_err();
        assert_eq!(e.message, "messages nested deeper than 100");
        assert_eq!(e.kind, DecodeKind::Limit);
        assert!(e.path.starts_with("$.recursive_message.recursive_message."));
        assert_eq!(e.offset, nested(101).len() - 3);
        // Configurable.
        let opts = DecodeOptions { max_depth: 5 };
        assert!(decode_dyn_with(&t, ty, &nested(5), opts).is_ok());
        assert!(decode_dyn_with(&t, ty, &nested(6), opts).is_err());
        // Deep but allowed nesting runs on any stack.
        let deep = DecodeOptions { max_depth: 3_000 };
        let input = nested(2_000);
        let m = decode_dyn_with(&t, ty, &input, deep).unwrap();
        // And encodes back (written backwards: linear at any depth).
        let opts = EncodeOptions {
            deterministic: true,
            max_depth: 3_000,
        };
        let out = encode(&t, ty, &m, &DynSource, opts).unwrap();
        assert_eq!(out, input);
        // The default encoder limit is 100, like the decoder's.
        assert!(encode_dyn(&t, &m, true).is_err());
    }
    // Unknown groups nest too.
    let ty = ty(&t, E23);
    let mut g = Vec::new();
    for _ in 0..150 {
        let mut x = tag(9000, 3);
        x.extend(g);
        x.extend(tag(9000, 4));
        g = x;
    }
    let e = decode_dyn(&t, ty, &g).unwrap_err();
    assert_eq!(e.message, "groups nested deeper than 100");
    assert_eq!(e.kind, DecodeKind::Limit);
}

#[test]
fn invalid_utf8_fails_in_proto3_and_editions_and_passes_in_proto2() {
    let t = tables();
    // optional_string = 14; repeated_string = 44.
    let mut bad = tag(1, 0);
    bad.extend(varint(5));
    bad.extend(len_field(14, b"ok\xff"));
    for name in [P3, E23] {
        let e = decode_dyn(&t, ty(&t, name), &bad).unwrap_err();
        assert_eq!(e.offset, 6, "{e}");
        assert_eq!(e.path, "$.optional_string");
        assert_eq!(e.message, "invalid UTF-8 in a string field");
        assert_eq!(e.kind, DecodeKind::Malformed);
    }
    let ty2 = ty(&t, P2);
    let m = decode_dyn(&t, ty2, &bad).unwrap();
    assert_eq!(m.get(14), Some(&Value::Str(b"ok\xff".to_vec())));
    assert_eq!(encode_dyn(&t, &m, true).unwrap(), bad);
    // In a repeated field, a nested message and a map value.
    let mut rep = len_field(44, b"a");
    rep.extend(len_field(44, b"\xc3"));
    let e = decode_dyn(&t, ty(&t, P3), &rep).unwrap_err();
    assert_eq!((e.offset, e.path.as_str()), (7, "$.repeated_string[1]"));
    // map_string_string = 69.
    let mut entry = len_field(1, b"k");
    entry.extend(len_field(2, b"\xe2\x82"));
    let e = decode_dyn(&t, ty(&t, P3), &len_field(69, &entry)).unwrap_err();
    assert_eq!(e.path, "$.map_string_string[0]");
    assert_eq!(e.offset, 8);
}

#[test]
fn errors_name_the_path_through_repeated_and_nested_fields() {
    let t = tables();
    let ty = ty(&t, P3);
    // repeated_nested_message = 48; NestedMessage { a = 1; corecursive = 2 }.
    let mut data = Vec::new();
    for _ in 0..3 {
        data.extend(len_field(48, &[0x08, 0x01]));
    }
    // Element 3: corecursive { optional_int32: a varint cut by the end }.
    let core = [0x08u8, 0x80];
    let elem = len_field(2, &core);
    let start = data.len();
    data.extend(len_field(48, &elem));
    let e = decode_dyn(&t, ty, &data).unwrap_err();
    assert_eq!(
        e.path,
        "$.repeated_nested_message[3].corecursive.optional_int32"
    );
    assert_eq!(e.message, "truncated varint");
    assert_eq!(e.kind, DecodeKind::Truncated);
    assert_eq!(e.offset, start + 3 + 2 + 1);
    // Packed elements count too: repeated_int32 = 31.
    let mut packed = tag(31, 2);
    packed.extend([3, 1, 2, 0x80]);
    let e = decode_dyn(&t, ty, &packed).unwrap_err();
    assert_eq!(e.path, "$.repeated_int32[2]");
    assert_eq!(e.kind, DecodeKind::Truncated);
}

#[test]
fn bad_tags_lengths_and_groups_fail_with_offsets() {
    let t = tables();
    let ty3 = ty(&t, P3);
    // The kinds: the input ends early, or its bytes break the format.
    use DecodeKind::{Malformed as M, Truncated as T};
    let cases: Vec<(Vec<u8>, usize, &str, DecodeKind)> = vec![
        // Field number 0.
        (vec![0x08, 0x01, 0x00, 0x01], 2, "invalid field number 0", M),
        // Field number 2^29 (one past the largest).
        (
            [varint((1u64 << 29) << 3), vec![0x01]].concat(),
            0,
            "invalid field number 536870912",
            M,
        ),
        // Wire types 6 and 7.
        (vec![0x0e], 0, "invalid wire type 6", M),
        (vec![0x0f], 0, "invalid wire type 7", M),
        // A length claiming 4 GiB with 1 byte there (nothing allocated).
        (
            vec![0x72, 0xff, 0xff, 0xff, 0xff, 0x0f, b'a'],
            1,
            "length 4294967295 is larger than the 1 bytes left",
            T,
        ),
        // A varint of 11 bytes.
        (
            [vec![0x08], vec![0xff; 10], vec![0x01]].concat(),
            1,
            "varint longer than 10 bytes",
            M,
        ),
        // An end-group tag with no group open.
        (vec![0x0c], 0, "unexpected end-group tag", M),
        // An unknown group closed by the wrong number.
        (
            vec![0xcb, 0x3e, 0xd4, 0x3e],
            2,
            "mismatched group end tag",
            M,
        ),
        // An unknown group never closed.
        (
            vec![0xcb, 0x3e, 0x08, 0x01],
            4,
            "group without its end tag",
            T,
        ),
        // A truncated fixed64 (optional_double = 12).
        (
            vec![0x61, 1, 2, 3],
            1,
            "truncated field: needs 8 bytes, 3 left",
            T,
        ),
    ];
    for (data, offset, msg, kind) in cases {
        let e = decode_dyn(&t, ty3, &data).unwrap_err();
        assert_eq!((e.offset, e.message.as_str()), (offset, msg), "{data:02x?}");
        assert_eq!(e.kind, kind, "{data:02x?}");
    }
    // Editions: a delimited field (groupliketype = 201) closed by another number.
    let ty23 = ty(&t, E23);
    let mut g = tag(201, 3);
    g.extend(tag(202, 4));
    let e = decode_dyn(&t, ty23, &g).unwrap_err();
    assert_eq!(
        (e.message.as_str(), e.path.as_str()),
        ("mismatched group end tag", "$.groupliketype")
    );
}

#[test]
fn wrong_wire_type_for_a_known_field_is_kept_as_unknown() {
    let t = tables();
    let ty = ty(&t, P3);
    // optional_int32 (1) written as LEN: protobuf keeps it as unknown.
    let data = len_field(1, b"xy");
    let m = decode_dyn(&t, ty, &data).unwrap();
    assert_eq!(m.get(1), None);
    assert_eq!(m.unknown, data);
    assert_eq!(encode_dyn(&t, &m, true).unwrap(), data);
}

#[test]
fn many_repeated_map_keys_take_linear_time() {
    let t = tables();
    let ty = ty(&t, P3);
    // 200,000 entries of map_int32_int32 (56), keys 0..1000 repeated.
    let mut data = Vec::new();
    for i in 0..200_000u64 {
        let mut entry = tag(1, 0);
        entry.extend(varint(i % 1000));
        entry.extend(tag(2, 0));
        entry.extend(varint(i));
        data.extend(len_field(56, &entry));
    }
    let m = decode_dyn(&t, ty, &data).unwrap();
    let Some(Value::Map(entries)) = m.get(56) else {
        panic!("no map")
    };
    assert_eq!(entries.len(), 1000);
    // The last value wins, at the first position.
    assert_eq!(entries[7], (Value::I32(7), Value::I32(199_007)));
}

#[test]
fn random_garbage_never_panics() {
    let t = tables();
    let mut next = xorshift(0x2545_F491_4F6C_DD1D);
    // Bytes biased toward tags of real fields, lengths and group markers.
    let alphabet: Vec<u8> = vec![
        0x08, 0x10, 0x12, 0x1a, 0x0b, 0x0c, 0x72, 0x7a, 0xc2, 0x03, 0xda, 0x01, 0xcb, 0x0c, 0xcc,
        0x98, 0x03, 0x80, 0xff, 0x00, 0x01, 0x02, 0x05, 0x7f, 0x4d, 0x61,
    ];
    let mut ok = 0;
    for name in [P3, P2, E23] {
        let ty = ty(&t, name);
        for _ in 0..4000 {
            let n = (next() % 48) as usize;
            let data: Vec<u8> = (0..n)
                .map(|_| {
                    if next() % 4 == 0 {
                        next() as u8
                    } else {
                        alphabet[(next() % alphabet.len() as u64) as usize]
                    }
                })
                .collect();
            if decode_dyn(&t, ty, &data).is_ok() {
                ok += 1;
            }
            roundtrip_stable(&t, ty, &data);
        }
    }
    assert!(ok > 0);
}

#[test]
fn encoding_into_a_kept_buffer_gives_the_same_bytes() {
    // One buffer for every message, never cleared: it starts too small to
    // hold most of them and ends holding leftovers of the others.
    let t = tables();
    let opts = EncodeOptions {
        deterministic: true,
        ..EncodeOptions::default()
    };
    let mut kept = vec![0xAAu8; 3];
    let mut n = 0;
    for v in SYNTAXES.iter().flat_map(|s| vectors(s)) {
        let ty = ty(&t, &v.ty);
        let Ok(m) = decode_dyn(&t, ty, &v.input) else {
            continue;
        };
        let want = encode(&t, ty, &m, &DynSource, opts).unwrap();
        let start = encode_into(&t, ty, &m, &DynSource, opts, &mut kept).unwrap();
        assert_eq!(&kept[start..], &want[..], "{}", v.ty);
        n += 1;
    }
    assert!(n > 100, "only {n} vectors decoded");
}

/// A builder that keeps every sub-message as its bytes, checked by the
/// decoder (`RawMode::Check`), as amber.proto's parse does; it keeps
/// nothing else.
struct KeepChecked;

impl MessageBuilder for KeepChecked {
    type Msg = ();
    type Err = std::convert::Infallible;
    fn start(&mut self, _: u32) -> Result<(), Self::Err> {
        Ok(())
    }
    fn set(&mut self, _: &mut (), _: &FieldInfo, _: Scalar<'_>) -> Result<(), Self::Err> {
        Ok(())
    }
    fn push(&mut self, _: &mut (), _: &FieldInfo, _: Scalar<'_>) -> Result<(), Self::Err> {
        Ok(())
    }
    fn begin(&mut self, _: &mut (), _: &FieldInfo, _: u32) -> Result<(), Self::Err> {
        Ok(())
    }
    fn end(&mut self, _: &mut (), _: &FieldInfo, _: ()) -> Result<(), Self::Err> {
        Ok(())
    }
    fn map_entry(
        &mut self,
        _: &mut (),
        _: &FieldInfo,
        _: Scalar<'_>,
        _: MapValue<'_, ()>,
    ) -> Result<(), Self::Err> {
        Ok(())
    }
    fn unknown(&mut self, _: &mut (), _: &[u8]) -> Result<(), Self::Err> {
        Ok(())
    }
    fn raw_mode(&self) -> RawMode {
        RawMode::Check
    }
    fn raw(&mut self, _: &mut (), _: &FieldInfo, _: u32, _: &[u8]) -> Result<bool, Self::Err> {
        Ok(true)
    }
    fn raw_entry(
        &mut self,
        _: &mut (),
        _: &FieldInfo,
        _: Scalar<'_>,
        _: u32,
        _: &[u8],
    ) -> Result<bool, Self::Err> {
        Ok(true)
    }
}

/// Decoding with sub-messages kept and checked refuses exactly what a full
/// build refuses, with the same error (kind, offset, path, text).
fn check_agrees_with_build(t: &Tables, ty: u32, data: &[u8], opts: DecodeOptions) -> bool {
    let built = decode_dyn_with(t, ty, data, opts);
    let checked = decode(t, ty, data, &mut KeepChecked, opts).map_err(|e| match e {
        Failure::Wire(e) => *e,
        Failure::Build(never) => match never {},
    });
    match (&built, &checked) {
        (Ok(_), Ok(())) => true,
        (Err(a), Err(b)) => {
            assert_eq!(
                (a.kind, a.offset, &a.path, &a.message),
                (b.kind, b.offset, &b.path, &b.message),
                "input {data:02x?}"
            );
            false
        }
        _ => panic!(
            "a build gives {:?}, a check {:?}, for input {data:02x?}",
            built.err(),
            checked.err()
        ),
    }
}

#[test]
fn sub_messages_kept_as_bytes_are_refused_as_a_build_refuses_them() {
    // Every vector, cut short, with bits flipped, and put one to three
    // levels down (in `recursive_message`, field 27, of the same type), so
    // that the check of kept sub-messages walks it; near the depth limit
    // too. The check takes a fast scan for the common fields and the
    // decoder's own walk for the rest and for every error: the two must
    // agree with a build wherever the scan stops.
    let t = tables();
    let mut next = xorshift(0x2545_F491_4F6C_DD1D);
    let (mut good, mut bad) = (0, 0);
    let mut tally = |ok: bool| if ok { good += 1 } else { bad += 1 };
    for syntax in SYNTAXES {
        for v in vectors(syntax) {
            let ty = ty(&t, &v.ty);
            let mut inputs = vec![v.input.clone()];
            for _ in 0..8 {
                let mut data = v.input.clone();
                if data.is_empty() {
                    break;
                }
                for _ in 0..=(next() % 3) {
                    let i = (next() % data.len() as u64) as usize;
                    data[i] ^= 1 << (next() % 8);
                }
                inputs.push(data);
            }
            if !v.input.is_empty() {
                let cut = (next() % v.input.len() as u64) as usize;
                inputs.push(v.input[..cut].to_vec());
            }
            for data in inputs {
                let mut wrapped = data.clone();
                for levels in 0..3 {
                    tally(check_agrees_with_build(
                        &t,
                        ty,
                        &wrapped,
                        DecodeOptions::default(),
                    ));
                    if levels == 0 {
                        // The limit falls inside the vector's own nesting.
                        let tight = DecodeOptions { max_depth: 2 };
                        tally(check_agrees_with_build(
                            &t,
                            ty,
                            &len_field(27, &wrapped),
                            tight,
                        ));
                    }
                    wrapped = len_field(27, &wrapped);
                    // A field after the sub-message: the walk goes back up.
                    wrapped.extend(tag(1, 0));
                    wrapped.extend(varint(next() % 300));
                }
            }
        }
    }
    // Chains of sub-messages at and past the depth limit, with a value at
    // the bottom (the scan counts levels as the decoder does).
    for name in [P3, P2] {
        let ty = ty(&t, name);
        for limit in [1usize, 2, 3, 7, 100] {
            for n in limit.saturating_sub(1)..=limit + 2 {
                let mut chain = tag(1, 0);
                chain.extend(varint(7));
                for _ in 0..n {
                    chain = len_field(27, &chain);
                }
                let opts = DecodeOptions { max_depth: limit };
                assert_eq!(check_agrees_with_build(&t, ty, &chain, opts), n <= limit);
            }
        }
    }
    assert!(
        good > 1_000 && bad > 1_000,
        "{good} accepted, {bad} refused"
    );
}
