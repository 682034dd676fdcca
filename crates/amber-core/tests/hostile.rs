//! The walker on hostile bytes: never a panic, always an error with an offset
//! inside the input, in time linear in the input.

use amber_core::codec::error::ErrorKind;
use amber_core::codec::format as f;
use amber_core::codec::validate::validate;
use amber_core::codec::walker::Limits;
use amber_core::codec::writer as w;

fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = w::Out::new();
    let start = w::begin_frame(&mut out);
    out.extend(body);
    w::finish_frame(&mut out, start);
    out.as_slice().to_vec()
}

/// A frame exercising most tags, written with the writer primitives.
fn sample() -> Vec<u8> {
    let mut b = w::Out::new();
    w::write_dict_header(&mut b, 5);
    w::write_str_def(&mut b, b"ints");
    w::write_list_header(&mut b, 6);
    for v in [0, -1, 300, -70_000, 1 << 40, i64::MIN] {
        w::write_int(&mut b, v);
    }
    w::write_str_def(&mut b, b"text");
    w::write_tuple_header(&mut b, 4);
    w::write_str(&mut b, "héllo".as_bytes());
    w::write_str_ref(&mut b, 0);
    w::write_float(&mut b, f64::NAN);
    w::write_bytes(&mut b, b"raw", false);
    w::write_str_ref(&mut b, 1);
    w::write_counted(&mut b, f::SET, 2);
    w::write_none(&mut b);
    w::write_bigint(&mut b, &[0, 0, 0, 0, 0, 0, 0, 0, 1]);
    w::write_str(&mut b, b"date");
    w::write_date(&mut b, 2024, 2, 29);
    // Records: a shape defined by the first, used by the second.
    w::write_str(&mut b, b"rows");
    w::write_list_header(&mut b, 2);
    w::write_shape_def_header(&mut b, 2);
    w::write_str_def(&mut b, b"k");
    w::write_str_ref(&mut b, 1);
    w::write_int(&mut b, 1);
    w::write_none(&mut b);
    w::write_shaped_header(&mut b, 0);
    w::write_int(&mut b, 2);
    w::write_str_ref(&mut b, 2);
    frame(&b)
}

#[test]
fn sample_is_valid() {
    let stats = validate(&sample(), Limits::default()).expect("valid");
    assert!(stats.items > 10);
}

#[test]
fn every_truncation_fails_with_an_offset_in_range() {
    let data = sample();
    for n in 0..data.len() {
        let err = validate(&data[..n], Limits::default()).expect_err("truncated");
        assert!(err.offset <= n, "offset {} beyond input {n}", err.offset);
        assert_eq!(err.kind(), Some(ErrorKind::Truncated), "{n} bytes: {err}");
    }
}

#[test]
fn every_single_bit_flip_is_handled() {
    let data = sample();
    for i in 0..data.len() {
        for bit in 0..8 {
            let mut d = data.clone();
            d[i] ^= 1 << bit;
            match validate(&d, Limits::default()) {
                // The validator's builder refuses nothing: every error is
                // about the bytes, and says which kind.
                Err(e) => assert!(e.offset <= d.len() && e.kind().is_some(), "{e}"),
                // Each value the walker makes takes at least its tag byte.
                Ok(stats) => assert!(stats.items as usize <= d.len() - f::HEADER_LEN),
            }
        }
    }
}

#[test]
fn random_bodies_never_panic() {
    // xorshift, so the test needs no dependency and is repeatable.
    let mut s: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    for _ in 0..20_000 {
        let len = (next() % 64) as usize;
        let body: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        if let Ok(stats) = validate(&frame(&body), Limits::default()) {
            assert!(stats.items as usize <= body.len(), "more values than bytes");
        }
    }
}

#[test]
fn huge_counts_are_rejected_before_allocating() {
    for tag in [
        f::LIST,
        f::DICT,
        f::SHAPE_DEF,
        f::SET,
        f::TUPLE,
        f::STR,
        f::BYTES,
        f::BIGINT,
    ] {
        let mut b = vec![tag];
        amber_core::bytes::varint::write(&mut b, u64::MAX >> 1);
        let err = validate(&frame(&b), Limits::default()).expect_err("too large");
        assert_eq!(err.offset, f::HEADER_LEN + 1, "tag {tag:#x}");
        // The frame is whole: its item claims more than it holds.
        assert_eq!(err.kind(), Some(ErrorKind::Malformed), "tag {tag:#x}");
    }
}

#[test]
fn deep_nesting_hits_the_limit_at_the_right_byte() {
    let mut body = vec![f::FIXLIST + 1; 100_000];
    body.push(f::FIXLIST);
    let err = validate(&frame(&body), Limits { max_depth: 500 }).expect_err("deep");
    assert_eq!(err.offset, f::HEADER_LEN + 500);
    assert!(err.to_string().contains("max_depth=500"));
    assert_eq!(err.kind(), Some(ErrorKind::Limit));
    assert_eq!(err.path.len(), 500);
}

#[test]
fn shared_references_follow_registration_order() {
    // SHARE [ MEMO_REF 0 ]: a list that contains itself.
    let body = [f::SHARE, f::FIXLIST + 1, f::MEMO_REF, 0];
    validate(&frame(&body), Limits::default()).expect("self reference");
    // A reference to an immutable value still being built is refused.
    let body = [f::SHARE, f::FIXTUPLE + 1, f::MEMO_REF, 0];
    validate(&frame(&body), Limits::default()).expect_err("tuple not yet registered");
    // REPLACE names what its tuple registers while it is decoded.
    let body = [f::REPLACE, 0, 0, f::FIXTUPLE + 1, f::SHARE, f::FIXTUPLE];
    validate(&frame(&body), Limits::default()).expect("replace");
    // REPLACE before anything but an immutable container is refused, so
    // REPLACE chains cannot recurse.
    let body = [f::REPLACE, 0, 0, f::REPLACE, 0, 0, f::FIXTUPLE];
    let err = validate(&frame(&body), Limits::default()).expect_err("chain");
    assert!(err.to_string().contains("replace marker must precede"));
}

#[test]
fn shapes_are_checked() {
    let def = [
        f::SHAPE_DEF,
        2,
        f::FIXSTR + 1,
        b'a',
        f::FIXSTR + 1,
        b'b',
        1,
        2,
    ];
    let stats = validate(&frame(&def), Limits::default()).expect("shape definition");
    assert_eq!(stats.items, 5);
    // A second dict of the shape: one value per key.
    let mut two = vec![f::FIXLIST + 2];
    two.extend_from_slice(&def);
    two.extend_from_slice(&[f::SHAPED, 0, 3, 4]);
    validate(&frame(&two), Limits::default()).expect("shaped dict");
    // An undefined shape.
    let err = validate(&frame(&[f::SHAPED, 0]), Limits::default()).expect_err("undefined");
    assert!(err.to_string().contains("shape reference 0 but only 0"));
    assert_eq!(err.offset, f::HEADER_LEN);
    // Fewer bytes left than the shape has keys: refused before the dict is made.
    let mut short = vec![f::FIXLIST + 2];
    short.extend_from_slice(&def);
    short.extend_from_slice(&[f::SHAPED, 0, 3]);
    let err = validate(&frame(&short), Limits::default()).expect_err("short");
    assert!(err.to_string().contains("shape 0 has 2 keys"), "{err}");
    // A shape is defined once its keys are read, so a value may use it.
    let nested = [f::SHAPE_DEF, 1, f::FIXSTR + 1, b'a', f::SHAPED, 0, 1];
    validate(&frame(&nested), Limits::default()).expect("shape used inside its own value");
    // A dict of a shape counts as a level of nesting.
    let err = validate(&frame(&nested), Limits { max_depth: 1 }).expect_err("depth");
    assert_eq!(err.offset, f::HEADER_LEN + 4);
}

#[test]
fn header_checks() {
    let ok = frame(&[f::NONE]);
    assert!(validate(&ok, Limits::default()).is_ok());
    let mut bad = ok.clone();
    bad[0] = 0x80;
    let err = validate(&bad, Limits::default()).unwrap_err();
    assert!(err.to_string().contains("pickle"));
    assert_eq!(err.kind(), Some(ErrorKind::NotAmber));
    let mut bad = ok.clone();
    bad[1] = 2;
    let err = validate(&bad, Limits::default()).unwrap_err();
    assert_eq!((err.offset, err.kind()), (1, Some(ErrorKind::Unsupported)));
    let mut bad = ok.clone();
    bad[2] = 0x40;
    let err = validate(&bad, Limits::default()).unwrap_err();
    assert_eq!((err.offset, err.kind()), (2, Some(ErrorKind::Unsupported)));
    let mut long = ok.clone();
    long.push(0);
    let err = validate(&long, Limits::default()).unwrap_err();
    assert_eq!(err.kind(), Some(ErrorKind::Malformed));
}

#[test]
fn wrapper_chains_count_as_nesting() {
    // FRACTION FRACTION ... and REPLACE 0 REPLACE 0 ...: recursion without
    // containers must hit the same limit.
    for unit in [
        vec![f::FRACTION],
        vec![f::TZ_ZONE],
        vec![f::ENUM],
        vec![f::FIXTUPLE + 1],
    ] {
        let body: Vec<u8> = unit
            .iter()
            .copied()
            .cycle()
            .take(unit.len() * 100_000)
            .collect();
        let err = validate(&frame(&body), Limits::default()).expect_err("deep chain");
        assert!(err.to_string().contains("max_depth=1000"), "{err}");
        assert_eq!(err.kind(), Some(ErrorKind::Limit));
    }
}

#[test]
fn very_deep_nesting_is_safe_on_a_small_stack() {
    let depth = 30_000;
    let mut body = vec![f::FIXLIST + 1; depth];
    body.push(f::FIXLIST);
    let data = frame(&body);
    let handle = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || {
            validate(
                &data,
                Limits {
                    max_depth: depth + 1,
                },
            )
            .map(|s| s.containers)
        })
        .expect("spawn");
    let containers = handle.join().expect("no overflow").expect("valid");
    assert_eq!(containers, depth as u64 + 1);
}

#[test]
fn long_header_length_near_u64_max_is_refused() {
    // Found by the `decode` fuzz target: header + body length overflowed.
    for body_len in [u64::MAX, u64::MAX - 3, u64::MAX - 15] {
        let mut data = vec![f::MAGIC, f::VERSION, f::FLAG_LONG, 0, 0, 0, 0, 0];
        data.extend_from_slice(&body_len.to_le_bytes());
        let err = validate(&data, Limits::default()).expect_err("too large");
        assert_eq!(err.offset, 8);
        assert!(err.to_string().contains("too large"), "{err}");
    }
}

#[test]
fn replace_marker_shifts_by_a_multiple_of_eight() {
    for idx in [0usize, 1, 127, 128, 1 << 20] {
        let mut out = w::Out::new();
        out.extend(&[f::FIXTUPLE, 0xAA]);
        let at = w::write_share(&mut out);
        out.push(0xBB);
        w::replace_share(&mut out, at, idx);
        let m = &out.as_slice()[at..out.len() - 1];
        assert_eq!(out.as_slice()[out.len() - 1], 0xBB);
        assert_eq!(&out.as_slice()[..at], &[f::FIXTUPLE, 0xAA]);
        assert_eq!((m.len() - 1) % f::REPLACE_ALIGN, 0, "idx {idx}");
        // It decodes: REPLACE idx pad, then the tuple that registers entry 0.
        if idx == 0 {
            let mut body = m.to_vec();
            body.extend_from_slice(&[f::FIXTUPLE + 1, f::SHARE, f::FIXTUPLE]);
            validate(&frame(&body), Limits::default()).expect("padded replace");
        }
    }
    let bad = [f::REPLACE, 0, 1, 7, f::FIXTUPLE];
    let err = validate(&frame(&bad), Limits::default()).expect_err("nonzero pad");
    assert!(err.to_string().contains("replace padding"));
}

#[test]
fn memo_numbering_follows_the_tag_not_the_registry() {
    // OBJECT_FILL registers before its state, so its state may refer to it;
    // OBJECT registers after, so the same reference is refused.
    let name = [f::FIXSTR + 1, b'C'];
    let mut fill = vec![f::SHARE, f::OBJECT_FILL];
    fill.extend_from_slice(&name);
    fill.extend_from_slice(&[f::MEMO_REF, 0]);
    validate(&frame(&fill), Limits::default()).expect("self reference through OBJECT_FILL");
    let mut build = vec![f::SHARE, f::OBJECT];
    build.extend_from_slice(&name);
    build.extend_from_slice(&[f::MEMO_REF, 0]);
    validate(&frame(&build), Limits::default()).expect_err("OBJECT is not registered yet");
}

#[test]
fn object_state_registers_after_its_base_and_before_its_state() {
    let name = [f::FIXSTR + 1, b'C'];
    let object_state = |base: &[u8], state: &[u8]| {
        let mut body = vec![f::SHARE, f::OBJECT_STATE];
        body.extend_from_slice(&name);
        body.extend_from_slice(base);
        body.extend_from_slice(state);
        frame(&body)
    };
    let limits = Limits::default();
    // The state may refer to the object: it is registered by then.
    validate(&object_state(&[f::NONE], &[f::MEMO_REF, 0]), limits).expect("state refers to it");
    let tuple = [f::FIXTUPLE + 1, 1];
    validate(&object_state(&tuple, &[f::MEMO_REF, 0]), limits).expect("after a tuple base");
    // Its base may not: the object is made from the base.
    let self_base = [f::FIXTUPLE + 1, f::MEMO_REF, 0];
    validate(&object_state(&self_base, &[f::NONE]), limits).expect_err("base refers to it");
    // A missing state is a truncation; REPLACE may wrap an OBJECT_STATE.
    let short = object_state(&[f::NONE], &[]);
    let err = validate(&short, limits).expect_err("no state");
    assert_eq!(err.offset, short.len());
    let mut replaced = w::Out::new();
    let at = w::write_share(&mut replaced);
    w::replace_share(&mut replaced, at, 0);
    replaced.extend(&[f::OBJECT_STATE, f::FIXSTR + 1, b'C']);
    replaced.extend(&[f::FIXTUPLE + 1, f::SHARE, f::FIXLIST, f::NONE]);
    validate(&frame(replaced.as_slice()), limits).expect("REPLACE before OBJECT_STATE");
}

#[test]
fn arrow_items_are_framed_like_arrays() {
    // ARROW kind 2, extras None, described, in band: the stream starts
    // 8-aligned.
    let stream = b"not really arrow, but the walker does not look inside";
    let mut out = w::Out::new();
    let start = w::begin_frame(&mut out);
    w::write_list_header(&mut out, 2);
    w::write_arrow_header(&mut out, f::ARROW_PD_FRAME);
    w::write_none(&mut out);
    w::write_arrow_flags(&mut out, None, true);
    w::write_ndarray_data(&mut out, start, stream);
    w::write_arrow_header(&mut out, f::ARROW_PA_TABLE);
    w::write_none(&mut out);
    w::write_arrow_flags(&mut out, Some(3), false);
    w::finish_frame(&mut out, start);
    let data = out.as_slice().to_vec();
    let at = data
        .windows(stream.len())
        .position(|s| s == stream)
        .expect("in band");
    assert_eq!(at % f::ND_ALIGN, 0);
    let stats = validate(&data, Limits::default()).expect("valid");
    assert_eq!(stats.items, 5);
    for n in 0..data.len() {
        let err = validate(&data[..n], Limits::default()).expect_err("truncated");
        assert_eq!(err.kind(), Some(ErrorKind::Truncated));
    }
    // The first item, a pandas frame, is described (flag 0x04).
    assert_eq!(data[12], f::ARROW_DESCRIBED);
    // A reserved kind and a reserved flag are refused where they stand, as
    // a later amber's (spec §12); so is "described" on a kind other than
    // pandas' (kind 0 with flags 0x04).
    for (at, i, v) in [
        (10, 10, f::ARROW_KINDS),
        (12, 12, 0x08),
        (12, 10, f::ARROW_PA_TABLE),
    ] {
        let mut bad = data.clone();
        bad[i] = v;
        let err = validate(&bad, Limits::default()).expect_err("refused");
        assert_eq!((err.offset, err.kind()), (at, Some(ErrorKind::Unsupported)));
    }
}

/// Every value the format reserves for later additions (spec §12) is refused
/// as a later amber's (`Unsupported`), at its own byte.
#[test]
fn reserved_values_are_refused_as_a_later_amber() {
    let h = f::HEADER_LEN;
    let mut cases: Vec<(Vec<u8>, usize)> = (0xD9..=0xDF).map(|t| (frame(&[t]), h)).collect();
    cases.extend([
        (frame(&[f::TIME, 0x04]), h + 1),
        (frame(&[f::DATETIME, 0x80]), h + 1),
        (frame(&[f::NDARRAY, f::NONE, 0, 0x08]), h + 3),
        (frame(&[f::NDARRAY, f::NONE, 0, 0x80]), h + 3),
        (frame(&[f::DEFAULTDICT, 16]), h + 1),
        (frame(&[f::DEFAULTDICT, 255]), h + 1),
        (frame(&[&[f::UUID][..], &[0; 16], &[3]].concat()), h + 17),
        (frame(&[f::ARROW, f::ARROW_KINDS]), h + 1),
        (frame(&[f::ARROW, 0, f::NONE, 0x04]), h + 3),
    ]);
    let mut byte3 = frame(&[f::NONE]);
    byte3[3] = 1;
    cases.push((byte3, 3));
    for (data, at) in cases {
        let err = validate(&data, Limits::default()).expect_err("reserved");
        assert_eq!(
            (err.offset, err.kind()),
            (at, Some(ErrorKind::Unsupported)),
            "{data:02x?}: {err}"
        );
        assert!(
            err.to_string().contains("reserved for a later amber"),
            "{err}"
        );
    }
}
