//! The COPY BINARY writer and parser together: byte-exact streams, round
//! trips of every type, chunking that does not change the rows, and hostile
//! input (every truncation, bit flips, lying lengths) that gives errors or
//! "need more", never a panic.

use amber_core::pg::copy::{CopyParser, CopyWriter};
use amber_core::pg::error::PgErrorKind;
use amber_core::pg::types::datetime::{Date, Interval, TimeTz, Timestamp};
use amber_core::pg::types::net::Inet;
use amber_core::pg::types::numeric::{decode_numeric, encode_numeric, Numeric};
use amber_core::pg::types::{decode_value, encode_value, PgType, Scalar, Value};

/// xorshift64*: small, deterministic, good enough to pick cases.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// A row as owned data: (offset, value) per field.
type OwnedRow = Vec<(u64, Option<Vec<u8>>)>;

/// Rows of field values, without offsets.
type Values = Vec<Vec<Option<Vec<u8>>>>;

/// Parse `stream` fed in the chunks `cuts` gives; return the rows and the
/// result of `finish`.
fn parse_chunked(
    stream: &[u8],
    mut cuts: impl FnMut(usize) -> usize,
) -> (Vec<OwnedRow>, Result<u64, PgErrorKind>) {
    let mut p = CopyParser::new();
    let mut rows = Vec::new();
    let mut at = 0;
    while at < stream.len() {
        let n = cuts(stream.len() - at).clamp(1, stream.len() - at);
        if let Err(e) = p.feed(&stream[at..at + n]) {
            return (rows, Err(e.kind));
        }
        at += n;
        loop {
            match p.next_row() {
                Ok(Some(row)) => rows.push(
                    row.fields()
                        .map(|f| (f.offset, f.value.map(<[u8]>::to_vec)))
                        .collect(),
                ),
                Ok(None) => break,
                Err(e) => return (rows, Err(e.kind)),
            }
        }
    }
    (rows, p.finish().map_err(|e| e.kind))
}

fn parse_all(stream: &[u8]) -> (Vec<OwnedRow>, Result<u64, PgErrorKind>) {
    parse_chunked(stream, |left| left)
}

const HEADER: &[u8] = b"PGCOPY\n\xff\r\n\0\0\0\0\0\0\0\0\0";

#[test]
fn hand_written_stream_parses() {
    // Two rows (int4 1, text "ab") and (NULL, text ""), then the trailer.
    let mut s = HEADER.to_vec();
    s.extend([0, 2, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 2, b'a', b'b']);
    s.extend([0, 2, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);
    s.extend([0xff, 0xff]);
    let (rows, end) = parse_all(&s);
    assert_eq!(end, Ok(2));
    assert_eq!(
        rows,
        vec![
            vec![(21, Some(vec![0, 0, 0, 1])), (29, Some(b"ab".to_vec()))],
            vec![(37, None), (41, Some(vec![]))],
        ]
    );
    // The writer makes the same bytes.
    let mut w = CopyWriter::new();
    w.begin_row(2).unwrap();
    w.value(PgType::Scalar(Scalar::Int4), &Value::Int4(1))
        .unwrap();
    w.value(PgType::Scalar(Scalar::Text), &Value::Text("ab"))
        .unwrap();
    w.begin_row(2).unwrap();
    w.null().unwrap();
    w.field_bytes(b"").unwrap();
    w.finish().unwrap();
    assert_eq!(w.bytes(), &s[..]);
}

#[test]
fn header_extension_is_skipped_in_any_chunks() {
    let mut s = b"PGCOPY\n\xff\r\n\0".to_vec();
    s.extend(0x0000_8001u32.to_be_bytes()); // low flag bits: ignored
    s.extend(5u32.to_be_bytes());
    s.extend(b"EXTRA");
    s.extend([0, 1, 0, 0, 0, 1, b'x', 0xff, 0xff]);
    let whole = parse_all(&s);
    assert_eq!(whole.1, Ok(1));
    assert_eq!(whole.0[0], vec![(26, Some(b"x".to_vec()))]);
    for size in 1..s.len() {
        assert_eq!(parse_chunked(&s, |_| size), whole, "chunks of {size}");
    }
}

#[test]
fn header_errors() {
    let cases: Vec<(Vec<u8>, PgErrorKind, u64)> = vec![
        (b"PGCOPX\n".to_vec(), PgErrorKind::Malformed, 5),
        (b"COPY".to_vec(), PgErrorKind::Malformed, 0),
        (
            [&HEADER[..11], &[0, 1, 0, 0, 0, 0, 0, 0]].concat(),
            PgErrorKind::Unsupported,
            11,
        ),
        (
            [&HEADER[..11], &[0x80, 0, 0, 0, 0, 0, 0, 0]].concat(),
            PgErrorKind::Unsupported,
            11,
        ),
        (
            [&HEADER[..11], &[0, 0, 0, 0, 0xff, 0xff, 0xff, 0xfe]].concat(),
            PgErrorKind::Malformed,
            15,
        ),
    ];
    for (s, kind, at) in cases {
        let mut p = CopyParser::new();
        p.feed(&s).unwrap();
        let e = p.next_row().unwrap_err();
        assert_eq!((e.kind, e.offset), (kind, Some(at)), "{s:?}: {e}");
        // Sticky.
        assert_eq!(p.next_row().unwrap_err(), e);
        assert_eq!(p.feed(b"x").unwrap_err(), e);
    }
}

#[test]
fn row_errors_name_row_column_offset() {
    // A field length of -2 in row 1, column 1.
    let mut s = HEADER.to_vec();
    s.extend([0, 2, 0, 0, 0, 0, 0, 0, 0, 0]);
    s.extend([0, 2, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe]);
    let mut p = CopyParser::new();
    p.feed(&s).unwrap();
    assert!(p.next_row().unwrap().is_some());
    let e = p.next_row().unwrap_err();
    assert_eq!(e.kind, PgErrorKind::Malformed);
    assert_eq!((e.offset, e.row, e.column), (Some(35), Some(1), Some(1)));
    assert!(e.to_string().contains("row 1, column 1, at byte 35"), "{e}");

    // A field count that differs from the first row's.
    let mut s = HEADER.to_vec();
    s.extend([0, 1, 0xff, 0xff, 0xff, 0xff, 0, 2]);
    let mut p = CopyParser::new();
    p.feed(&s).unwrap();
    assert!(p.next_row().unwrap().is_some());
    let e = p.next_row().unwrap_err();
    assert_eq!(
        (e.kind, e.offset, e.row),
        (PgErrorKind::Malformed, Some(25), Some(1))
    );

    // A field count other than the one expected.
    let mut p = CopyParser::expecting_fields(3);
    p.feed(&s).unwrap();
    assert_eq!(p.next_row().unwrap_err().offset, Some(19));

    // A negative field count other than -1.
    let mut p = CopyParser::new();
    p.feed(&[HEADER, &[0xff, 0xfe]].concat()).unwrap();
    assert_eq!(p.next_row().unwrap_err().kind, PgErrorKind::Malformed);
}

#[test]
fn data_after_trailer() {
    let s = [HEADER, &[0xff, 0xff, 0]].concat();
    let (_, end) = parse_all(&s);
    assert_eq!(end, Err(PgErrorKind::Malformed));
    let mut p = CopyParser::new();
    p.feed(&[HEADER, &[0xff, 0xff]].concat()).unwrap();
    assert!(p.next_row().unwrap().is_none());
    assert!(p.is_done());
    p.feed(b"").unwrap();
    let e = p.feed(b"z").unwrap_err();
    assert_eq!((e.kind, e.offset), (PgErrorKind::Malformed, Some(21)));
}

#[test]
fn lying_length_only_asks_for_more() {
    // A field claims 2^31-1 bytes; 10 are present.
    let mut s = HEADER.to_vec();
    s.extend([0, 1, 0x7f, 0xff, 0xff, 0xff]);
    s.extend([7; 10]);
    let mut p = CopyParser::new();
    p.feed(&s).unwrap();
    assert!(p.next_row().unwrap().is_none());
    assert_eq!(p.need(), (i32::MAX as u64) - 10);
    assert!(p.buffered() < 64);
    let e = p.finish().unwrap_err();
    assert_eq!(
        (e.kind, e.offset, e.row),
        (PgErrorKind::Truncated, Some(19), Some(0))
    );
    // Many fields that each claim a lot are not allocated either.
    let mut s = HEADER.to_vec();
    s.extend([0x7f, 0xff]);
    for _ in 0..100 {
        s.extend([0xff, 0xff, 0xff, 0xff]);
    }
    let mut p = CopyParser::new();
    p.feed(&s).unwrap();
    assert!(p.next_row().unwrap().is_none());
    assert_eq!(p.need(), 4);
}

/// A stream of many rows of every type, written through the writer.
fn sample_stream(rng: &mut Rng, nrows: usize) -> (Vec<u8>, Values) {
    let types: Vec<PgType> = Scalar::ALL.iter().map(|s| PgType::Scalar(*s)).collect();
    let mut w = CopyWriter::with_capacity(16);
    let mut stream = Vec::new();
    let mut want = Vec::new();
    for _ in 0..nrows {
        w.begin_row(types.len() as u16).unwrap();
        let mut row = Vec::new();
        for ty in &types {
            if rng.below(5) == 0 {
                w.null().unwrap();
                row.push(None);
                continue;
            }
            let v = random_value(rng, *ty);
            let mut bytes = Vec::new();
            encode_value(&mut bytes, *ty, &v).unwrap();
            w.value(*ty, &v).unwrap();
            row.push(Some(bytes));
        }
        want.push(row);
        // Ship in small chunks, even mid-row.
        if w.len() > 100 {
            stream.extend(w.take());
        }
    }
    w.finish().unwrap();
    stream.extend(w.take());
    (stream, want)
}

fn random_value(rng: &mut Rng, ty: PgType) -> Value<'static> {
    const WORDS: [&str; 4] = ["", "héllo", "a b c", "{\"k\": [1, 2]}"];
    let PgType::Scalar(s) = ty else {
        unreachable!()
    };
    let r = rng.next();
    match s {
        Scalar::Bool => Value::Bool(r & 1 == 1),
        Scalar::Int2 => Value::Int2(r as i16),
        Scalar::Int4 => Value::Int4(r as i32),
        Scalar::Int8 => Value::Int8(r as i64),
        Scalar::Oid => Value::Oid(r as u32),
        Scalar::Float4 => Value::Float4(f32::from_bits(r as u32)),
        Scalar::Float8 => Value::Float8(f64::from_bits(r)),
        Scalar::Numeric => Value::Numeric(Numeric::Finite {
            negative: r & 1 == 1,
            digits: (0..1 + rng.below(30))
                .map(|_| rng.below(10) as u8)
                .collect(),
            exponent: rng.below(60) as i32 - 40,
        }),
        Scalar::Text | Scalar::Varchar | Scalar::Bpchar | Scalar::Json | Scalar::Name => {
            Value::Text(WORDS[(r % 4) as usize])
        }
        Scalar::Char => Value::Char(r as u8),
        Scalar::Bytea => Value::Bytea(&b"\x00\x01\xff bytes"[..(r % 10) as usize]),
        Scalar::Date => Value::Date(Date::Days((r % 4_000_000) as i32 - 2_000_000)),
        Scalar::Time => Value::Time((r % 86_400_000_001) as i64),
        Scalar::TimeTz => Value::TimeTz(TimeTz {
            micros: (r % 86_400_000_001) as i64,
            offset_west: (rng.below(115_199) as i32) - 57_599,
        }),
        Scalar::Timestamp | Scalar::TimestampTz => Value::Timestamp(match r % 10 {
            0 => Timestamp::Infinity,
            1 => Timestamp::NegInfinity,
            _ => Timestamp::Micros((r >> 8) as i64 - (1 << 54)),
        }),
        Scalar::Interval => Value::Interval(Interval {
            micros: r as i64,
            days: (r >> 16) as i32,
            months: (r >> 32) as i32,
        }),
        Scalar::Uuid => Value::Uuid([(r % 251) as u8; 16]),
        Scalar::Jsonb => Value::Jsonb(WORDS[(r % 4) as usize]),
        Scalar::Inet => Value::Inet(Inet {
            addr: std::net::IpAddr::from((r as u32).to_be_bytes()),
            bits: (r % 33) as u8,
        }),
        Scalar::Cidr => Value::Inet(Inet {
            addr: std::net::IpAddr::from([10, 0, 0, 0]),
            bits: 8 + (r % 25) as u8,
        }),
    }
}

#[test]
fn written_stream_parses_back_in_any_chunks() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (stream, want) = sample_stream(&mut rng, 40);
    let (rows, end) = parse_all(&stream);
    assert_eq!(end, Ok(40));
    let got: Values = rows
        .iter()
        .map(|r| r.iter().map(|(_, v)| v.clone()).collect())
        .collect();
    assert_eq!(got, want);
    // Offsets point at each field's length word.
    for row in &rows {
        for (off, v) in row {
            let o = *off as usize;
            let len = i32::from_be_bytes(stream[o..o + 4].try_into().unwrap());
            assert_eq!(len, v.as_ref().map_or(-1, |b| b.len() as i32));
        }
    }
    // Byte by byte, and in random chunks: the same rows.
    assert_eq!(parse_chunked(&stream, |_| 1), (rows.clone(), end));
    for seed in 1..20u64 {
        let mut r = Rng(seed);
        assert_eq!(
            parse_chunked(&stream, |_| 1 + r.below(300) as usize),
            (rows.clone(), end)
        );
    }
    // Every field decodes as the type it was written with.
    let mut p = CopyParser::new();
    p.feed(&stream).unwrap();
    while let Some(row) = p.next_row().unwrap() {
        for (f, s) in row.fields().zip(Scalar::ALL) {
            let v = f.decode(PgType::Scalar(s)).unwrap();
            if let Some(v) = v {
                let mut again = Vec::new();
                encode_value(&mut again, PgType::Scalar(s), &v).unwrap();
                assert_eq!(Some(&again[..]), f.value);
            }
        }
    }
}

#[test]
fn every_truncation_is_an_error_or_need_more() {
    let mut rng = Rng(7);
    let (stream, _) = sample_stream(&mut rng, 6);
    let (full, _) = parse_all(&stream);
    for cut in 0..stream.len() {
        let (rows, end) = parse_all(&stream[..cut]);
        assert_eq!(end, Err(PgErrorKind::Truncated), "cut at {cut}");
        assert_eq!(rows[..], full[..rows.len()]);
    }
}

#[test]
fn bit_flips_never_panic() {
    let mut rng = Rng(11);
    let (stream, _) = sample_stream(&mut rng, 3);
    for i in 0..stream.len() {
        for bit in [0, 3, 7] {
            let mut s = stream.clone();
            s[i] ^= 1 << bit;
            let mut p = CopyParser::new();
            if p.feed(&s).is_err() {
                continue;
            }
            while let Ok(Some(row)) = p.next_row() {
                for f in row.fields() {
                    for ty in Scalar::ALL {
                        let _ = f.decode(PgType::Scalar(ty));
                        let _ = f.decode(PgType::Array(ty));
                    }
                }
            }
            let _ = p.finish();
        }
    }
}

#[test]
fn decode_errors_carry_stream_position() {
    let mut w = CopyWriter::new();
    w.begin_row(2).unwrap();
    w.null().unwrap();
    w.field_bytes(&[2]).unwrap(); // not a bool
    w.finish().unwrap();
    let mut p = CopyParser::new();
    p.feed(w.bytes()).unwrap();
    let row = p.next_row().unwrap().unwrap();
    let f = row.fields().nth(1).unwrap();
    let e = f.decode(PgType::Scalar(Scalar::Bool)).unwrap_err();
    assert_eq!(
        (e.offset, e.row, e.column),
        (Some(19 + 2 + 4 + 4), Some(0), Some(1))
    );
    assert_eq!(
        row.fields()
            .next()
            .unwrap()
            .decode(PgType::Scalar(Scalar::Bool)),
        Ok(None)
    );
}

/// Parse a decimal literal into `Decimal.as_tuple()` form.
fn as_tuple(s: &str) -> (bool, Vec<u8>, i32) {
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let (mant, exp) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], s[i + 1..].parse::<i32>().unwrap()),
        None => (s, 0),
    };
    let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
    let digits = format!("{int}{frac}").bytes().map(|b| b - b'0').collect();
    (neg, digits, exp - frac.len() as i32)
}

#[test]
fn numeric_round_trips_psycopg_cases() {
    // The values psycopg's test_dump_numeric_binary checks against a server.
    for expr in [
        "1",
        "1.0",
        "-1",
        "0.0",
        "0.01",
        "11",
        "1.1",
        "1.01",
        "0",
        "0.00",
        "0.0000000",
        "0.00001",
        "1.00001",
        "-1.00000000000000",
        "-2.00000000000000",
        "1000000000.12345",
        "100.123456790000000000000000",
        "1.0e-1000",
        "1e1000",
        "0.000000000000000000000000001",
        "1.0000000000000000000000001",
        "1000000000000000000000000.001",
        "1000000000000000000000000000.001",
        "9999999999999999999999999999.9",
    ] {
        let (neg, digits, exp) = as_tuple(expr);
        let mut out = Vec::new();
        encode_numeric(&mut out, neg, &digits, exp).unwrap();
        let Numeric::Finite {
            negative,
            digits: d,
            exponent,
        } = decode_numeric(&out).unwrap()
        else {
            panic!("{expr}")
        };
        // Same value, same scale when the exponent is negative.
        let first = digits.iter().position(|&x| x != 0);
        let mut want: Vec<u8> = first.map_or(vec![0], |i| digits[i..].to_vec());
        let mut want_exp = exp;
        if exp > 0 && want != [0] {
            want.extend(std::iter::repeat_n(0, exp as usize));
            want_exp = 0;
        }
        if exp > 0 && want == [0] {
            want_exp = 0;
        }
        assert_eq!(
            (negative && want != [0], d, exponent),
            (neg && want != [0], want, want_exp),
            "{expr}"
        );
    }
}

#[test]
fn numeric_random_round_trips() {
    let mut rng = Rng(3);
    for _ in 0..3000 {
        let n = 1 + rng.below(40) as usize;
        let digits: Vec<u8> = (0..n).map(|_| rng.below(10) as u8).collect();
        let exp = rng.below(200) as i32 - 150;
        let neg = rng.below(2) == 1;
        let mut out = Vec::new();
        encode_numeric(&mut out, neg, &digits, exp).unwrap();
        let v = decode_numeric(&out).unwrap();
        let Numeric::Finite {
            digits: d,
            exponent,
            ..
        } = &v
        else {
            panic!()
        };
        // Value equality: strip leading zeros, pad a positive exponent.
        let mut want: Vec<u8> = digits.iter().copied().skip_while(|&x| x == 0).collect();
        let mut want_exp = exp;
        if want.is_empty() {
            want.push(0);
            want_exp = exp.min(0);
        } else if exp > 0 {
            want.extend(std::iter::repeat_n(0, exp as usize));
            want_exp = 0;
        }
        assert_eq!((d, *exponent), (&want, want_exp), "{digits:?}e{exp}");
        // And the text form agrees with the digits.
        assert_eq!(
            v.to_string()
                .replace(['-', '.'], "")
                .trim_start_matches('0'),
            {
                let s: String = want.iter().map(|x| char::from(b'0' + x)).collect();
                s.trim_start_matches('0').to_string()
            }
        );
    }
}

#[test]
fn random_bytes_through_every_decoder() {
    let mut rng = Rng(99);
    for _ in 0..20_000 {
        let n = rng.below(40) as usize;
        let b: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
        for s in Scalar::ALL {
            let _ = decode_value(PgType::Scalar(s), &b);
            let _ = decode_value(PgType::Array(s), &b);
        }
    }
}

#[test]
fn fuzz_seeds_are_valid_streams() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/seeds/copy_parse");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let seed = std::fs::read(entry.unwrap().path()).unwrap();
        // The first byte picks the fuzz target's split; the rest is a stream.
        let (rows, end) = parse_all(&seed[1..]);
        assert_eq!(end, Ok(rows.len() as u64));
        assert!(!rows.is_empty());
        n += 1;
    }
    assert!(n >= 3);
}
