//! Entry names: which are safe to read and write, and the CP437 decoding
//! of names written without the UTF-8 flag.

use crate::archive::error::{ArchiveError, ArchiveErrorKind, Res};

/// Refuse names that could escape a folder they were extracted into or
/// that mean different things to different tools: empty names, NUL, a
/// leading `/` or drive (`C:`), backslashes, `.` or `..` segments, and empty
/// segments (a trailing `/`, for a folder entry, is allowed).
pub fn check(name: &str) -> Res<()> {
    let bad = |why: &str| {
        Err(ArchiveError::new(
            ArchiveErrorKind::UnsafeName,
            format!("unsafe entry name: {why}"),
        )
        .entry(name))
    };
    if name.is_empty() {
        return bad("empty");
    }
    if name.contains('\0') {
        return bad("holds a NUL byte");
    }
    if name.contains('\\') {
        return bad("holds a backslash");
    }
    if name.starts_with('/') {
        return bad("absolute");
    }
    let bytes = name.as_bytes();
    if bytes.len() >= 2 && bytes[1] == b':' && bytes[0].is_ascii_alphabetic() {
        return bad("starts with a drive");
    }
    let body = name.strip_suffix('/').unwrap_or(name);
    for segment in body.split('/') {
        match segment {
            "" => return bad("has an empty segment"),
            "." | ".." => return bad("has a '.' or '..' segment"),
            _ => {}
        }
    }
    Ok(())
}

/// Code page 437's characters for bytes 0x80 to 0xFF, as the zip format
/// reads names without the UTF-8 flag.
const CP437_HIGH: &str = "ÇüéâäàåçêëèïîìÄÅÉæÆôöòûùÿÖÜ¢£¥₧ƒáíóúñÑªº¿⌐¬½¼¡«»░▒▓│┤╡╢╖╕╣║╗╝╜╛┐└┴┬├─┼╞╟╚╔╩╦╠═╬╧╨╤╥╙╘╒╓╫╪┘┌█▄▌▐▀αßΓπΣσµτΦΘΩδ∞φε∩≡±≥≤⌠⌡÷≈°∙·√ⁿ²■\u{a0}";

pub fn decode_cp437(raw: &[u8]) -> String {
    raw.iter()
        .map(|&b| {
            if b < 0x80 {
                b as char
            } else {
                CP437_HIGH.chars().nth((b - 0x80) as usize).unwrap_or('?')
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_and_unsafe_names() {
        for ok in [
            "a",
            "a/b.npy",
            "dir/",
            "a..b",
            ".amber/manifest.json",
            "ü/ñ",
        ] {
            assert!(check(ok).is_ok(), "{ok}");
        }
        for bad in [
            "", "/a", "a/../b", "..", "a\\b", "C:x", "a//b", "./a", "a\0b", "a/./b",
        ] {
            let err = check(bad).expect_err(bad);
            assert_eq!(err.kind, ArchiveErrorKind::UnsafeName, "{bad}");
        }
    }

    #[test]
    fn cp437_has_128_high_characters() {
        assert_eq!(CP437_HIGH.chars().count(), 128);
        assert_eq!(decode_cp437(b"a\x81\xff"), "aü\u{a0}");
    }
}
