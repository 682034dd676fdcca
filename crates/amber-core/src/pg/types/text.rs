//! Text-like and raw-byte types in PostgreSQL's binary send format.
//!
//! - text, varchar, bpchar, json, name, enum labels: the string's bytes, no
//!   terminator, in the connection's client encoding (`textsend` converts
//!   from the server's). The `&str` functions are the UTF-8 case; the
//!   `_bytes` ones take and give the bytes of any encoding (the caller
//!   converts). No PostgreSQL encoding puts a NUL byte in text, so the
//!   encoders refuse one and the decoders refuse one, and the UTF-8 decoder
//!   invalid UTF-8 as well.
//! - name: the same, at most 63 bytes (`NAMEDATALEN` - 1; `namerecv` refuses
//!   longer).
//! - jsonb: a version byte (1, the only one `jsonb_recv` knows) then the JSON
//!   text.
//! - "char": exactly one byte (`charsend`), any value, never converted: 0
//!   is PostgreSQL's empty "char". Its text form (`charout`) writes a byte
//!   from 0x80 as a backslash and three octal digits, which `charin` reads
//!   back: [`char_octal`] and [`char_from_octal`].
//! - bytea: the raw bytes. uuid: the 16 bytes.

use crate::pg::error::{PgError, Res};
use crate::pg::wire::{exact, put_u8};

/// The longest `name` PostgreSQL stores, in bytes.
pub const NAME_MAX_BYTES: usize = 63;

/// The jsonb binary format version written and accepted.
pub const JSONB_VERSION: u8 = 1;

fn check_no_nul(s: &[u8], ty: &str) -> Res<()> {
    match s.iter().position(|&c| c == 0) {
        Some(i) => Err(PgError::invalid_value(format!(
            "{ty} cannot hold a NUL byte (PostgreSQL text has none): NUL at byte {i}"
        ))
        .at(i as u64)),
        None => Ok(()),
    }
}

/// text, varchar, bpchar and json: the UTF-8 bytes; a NUL byte is refused.
pub fn encode_text(out: &mut Vec<u8>, s: &str) -> Res<()> {
    encode_text_bytes(out, s.as_bytes())
}

/// text in any client encoding: the bytes; a NUL byte is refused.
pub fn encode_text_bytes(out: &mut Vec<u8>, b: &[u8]) -> Res<()> {
    check_no_nul(b, "text")?;
    out.extend_from_slice(b);
    Ok(())
}

/// text in any client encoding: the bytes, which hold no NUL.
pub fn decode_text_bytes(b: &[u8]) -> Res<&[u8]> {
    check_no_nul(b, "text").map_err(|e| PgError {
        kind: crate::pg::error::PgErrorKind::Malformed,
        ..e
    })?;
    Ok(b)
}

/// Whether `b` is valid UTF-8 without NUL bytes, as text values must be:
/// a fast check for many values at once (a SIMD validator), whose failure
/// sends the caller to [`decode_text`] value by value to say what is wrong.
pub fn is_clean_text(b: &[u8]) -> bool {
    simdutf8::basic::from_utf8(b).is_ok() && !b.contains(&0)
}

/// text, varchar, bpchar and json: valid UTF-8 without NUL bytes.
pub fn decode_text(b: &[u8]) -> Res<&str> {
    let s = std::str::from_utf8(b).map_err(|e| {
        PgError::malformed(format!(
            "text is not valid UTF-8 at byte {}",
            e.valid_up_to()
        ))
        .at(e.valid_up_to() as u64)
    })?;
    check_no_nul(b, "text").map_err(|e| PgError {
        kind: crate::pg::error::PgErrorKind::Malformed,
        ..e
    })?;
    Ok(s)
}

fn check_name_len(n: usize) -> Res<()> {
    if n > NAME_MAX_BYTES {
        return Err(PgError::out_of_range(format!(
            "name of {n} bytes is longer than PostgreSQL's {NAME_MAX_BYTES}"
        )));
    }
    Ok(())
}

pub fn encode_name(out: &mut Vec<u8>, s: &str) -> Res<()> {
    encode_name_bytes(out, s.as_bytes())
}

pub fn decode_name(b: &[u8]) -> Res<&str> {
    check_name_len(b.len())?;
    decode_text(b)
}

/// name in any client encoding: at most 63 bytes, no NUL.
pub fn encode_name_bytes(out: &mut Vec<u8>, b: &[u8]) -> Res<()> {
    check_name_len(b.len())?;
    encode_text_bytes(out, b)
}

pub fn decode_name_bytes(b: &[u8]) -> Res<&[u8]> {
    check_name_len(b.len())?;
    decode_text_bytes(b)
}

/// "char": one byte.
pub fn encode_char(out: &mut Vec<u8>, c: u8) {
    put_u8(out, c);
}

pub fn decode_char(b: &[u8]) -> Res<u8> {
    exact::<1>(b, "\"char\"").map(|[c]| c)
}

/// A "char" byte from 0x80 in PostgreSQL's text form: a backslash and three
/// octal digits (`charout`), `\303` for 0xC3.
pub fn char_octal(c: u8) -> [u8; 4] {
    [b'\\', b'0' + (c >> 6), b'0' + (c >> 3 & 7), b'0' + (c & 7)]
}

/// The byte of a "char" text form `\ooo` (what `charin` reads as one byte),
/// else `None`.
pub fn char_from_octal(s: &[u8]) -> Option<u8> {
    match s {
        [b'\\', a @ b'0'..=b'3', b @ b'0'..=b'7', c @ b'0'..=b'7'] => {
            Some((a - b'0') << 6 | (b - b'0') << 3 | (c - b'0'))
        }
        _ => None,
    }
}

/// jsonb: version byte 1, then the JSON text (not checked as JSON).
pub fn encode_jsonb(out: &mut Vec<u8>, s: &str) -> Res<()> {
    encode_jsonb_bytes(out, s.as_bytes())
}

/// jsonb with its JSON text in any client encoding.
pub fn encode_jsonb_bytes(out: &mut Vec<u8>, b: &[u8]) -> Res<()> {
    check_no_nul(b, "jsonb")?;
    put_u8(out, JSONB_VERSION);
    out.extend_from_slice(b);
    Ok(())
}

pub fn decode_jsonb(b: &[u8]) -> Res<&str> {
    let rest = jsonb_text(b)?;
    decode_text(rest).map_err(|e| e.rebase(1))
}

/// jsonb's JSON text in any client encoding (no NUL).
pub fn decode_jsonb_bytes(b: &[u8]) -> Res<&[u8]> {
    let rest = jsonb_text(b)?;
    decode_text_bytes(rest).map_err(|e| e.rebase(1))
}

fn jsonb_text(b: &[u8]) -> Res<&[u8]> {
    match b.split_first() {
        None => Err(PgError::malformed("jsonb value without its version byte").at(0)),
        Some((&JSONB_VERSION, rest)) => Ok(rest),
        Some((&v, _)) => {
            Err(PgError::unsupported(format!("jsonb version {v}: only 1 is known")).at(0))
        }
    }
}

pub fn encode_bytea(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(b);
}

/// bytea: any bytes.
pub fn decode_bytea(b: &[u8]) -> &[u8] {
    b
}

pub fn encode_uuid(out: &mut Vec<u8>, u: &[u8; 16]) {
    out.extend_from_slice(u);
}

pub fn decode_uuid(b: &[u8]) -> Res<[u8; 16]> {
    exact(b, "uuid")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pg::error::PgErrorKind;

    #[test]
    fn text_is_its_utf8_bytes() {
        let mut out = Vec::new();
        encode_text(&mut out, "héllo").unwrap();
        assert_eq!(out, b"h\xc3\xa9llo");
        assert_eq!(decode_text(&out).unwrap(), "héllo");
        assert_eq!(decode_text(b"").unwrap(), "");
    }

    #[test]
    fn nul_is_refused() {
        let mut out = vec![7];
        let e = encode_text(&mut out, "a\0b").unwrap_err();
        assert_eq!(e.kind, PgErrorKind::InvalidValue);
        assert_eq!(e.offset, Some(1));
        assert_eq!(out, [7]);
        assert_eq!(
            decode_text(b"a\0").unwrap_err().kind,
            PgErrorKind::Malformed
        );
        assert!(encode_jsonb(&mut out, "\0").is_err());
    }

    #[test]
    fn invalid_utf8_names_the_byte() {
        let e = decode_text(b"ab\xffc").unwrap_err();
        assert_eq!(e.offset, Some(2));
        assert_eq!(e.kind, PgErrorKind::Malformed);
    }

    #[test]
    fn name_length() {
        let mut out = Vec::new();
        encode_name(&mut out, &"x".repeat(63)).unwrap();
        assert_eq!(decode_name(&out).unwrap().len(), 63);
        assert!(encode_name(&mut out, &"x".repeat(64)).is_err());
        assert!(decode_name(&[b'x'; 64]).is_err());
    }

    #[test]
    fn jsonb_version_byte() {
        let mut out = Vec::new();
        encode_jsonb(&mut out, "{\"a\":1}").unwrap();
        assert_eq!(out, b"\x01{\"a\":1}");
        assert_eq!(decode_jsonb(&out).unwrap(), "{\"a\":1}");
        assert_eq!(
            decode_jsonb(b"\x02{}").unwrap_err().kind,
            PgErrorKind::Unsupported
        );
        assert!(decode_jsonb(b"").is_err());
        assert_eq!(decode_jsonb(b"\x01a\xff").unwrap_err().offset, Some(2));
    }

    #[test]
    fn bytes_in_any_encoding() {
        let mut out = Vec::new();
        encode_text_bytes(&mut out, b"caf\xe9").unwrap();
        assert_eq!(out, b"caf\xe9");
        assert_eq!(decode_text_bytes(b"caf\xe9").unwrap(), b"caf\xe9");
        assert_eq!(
            decode_text_bytes(b"a\0").unwrap_err().kind,
            PgErrorKind::Malformed
        );
        assert!(encode_text_bytes(&mut out, b"\0").is_err());
        assert!(encode_name_bytes(&mut out, &[0xe9; 64]).is_err());
        assert_eq!(decode_name_bytes(&[0xe9; 63]).unwrap().len(), 63);
        let mut j = Vec::new();
        encode_jsonb_bytes(&mut j, b"\"\xe9\"").unwrap();
        assert_eq!(decode_jsonb_bytes(&j).unwrap(), b"\"\xe9\"");
        assert_eq!(decode_jsonb_bytes(b"\x01a\0").unwrap_err().offset, Some(2));
    }

    #[test]
    fn char_text_form() {
        assert_eq!(&char_octal(0xc3), b"\\303");
        assert_eq!(&char_octal(0x80), b"\\200");
        assert_eq!(&char_octal(0xff), b"\\377");
        for c in 0..=255u8 {
            assert_eq!(char_from_octal(&char_octal(c)), Some(c));
        }
        assert_eq!(char_from_octal(b"\\400"), None);
        assert_eq!(char_from_octal(b"\\38"), None);
        assert_eq!(char_from_octal(b"303"), None);
        assert_eq!(char_from_octal(b"\\3031"), None);
    }

    #[test]
    fn char_bytea_uuid() {
        let mut out = Vec::new();
        encode_char(&mut out, b'x');
        encode_bytea(&mut out, &[0, 255]);
        encode_uuid(&mut out, &[0xab; 16]);
        assert_eq!(out.len(), 19);
        assert_eq!(decode_char(&out[..1]).unwrap(), b'x');
        assert_eq!(decode_char(&[0]).unwrap(), 0);
        assert!(decode_char(b"").is_err());
        assert_eq!(decode_bytea(&out[1..3]), [0, 255]);
        assert_eq!(decode_uuid(&out[3..]).unwrap(), [0xab; 16]);
        assert!(decode_uuid(&out[2..]).is_err());
    }
}
