//! C escapes (`\n`, octal, `\x`, `\u`, `\U`, ...) undone: the text
//! format's strings, and `bytes` defaults as protoc writes them in
//! descriptors.

/// One C escape, as read by [`read_escape`]: what the caller pushes
/// depends on its own rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Escape {
    /// A byte: a simple escape (`\n`, `\\`, ...) or `\x` with one or two
    /// hex digits.
    Byte(u8),
    /// `\` with one to three octal digits: up to 511, which the `.proto`
    /// lexer truncates to a byte (as protoc does) and the text format
    /// refuses.
    Octal(u32),
    /// `\u` with four hex digits or `\U` with eight: a code point not yet
    /// checked (it may be a surrogate or past U+10FFFF).
    Unicode(u32),
}

/// Why an escape could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EscapeError {
    /// The backslash ends the input.
    End,
    /// `\x` without a hex digit.
    Hex,
    /// `\u` or `\U` without its four or eight hex digits.
    Unicode,
    /// A letter that is no escape (`\q`), or a line break.
    Unknown(u8),
}

/// Read one C escape from `s`, which starts just after its backslash:
/// the escape and how many bytes it took, or what is wrong with it and
/// how many bytes in that is (for the caller's position). Shared by the
/// `.proto` lexer's string literals and the text format's strings; each
/// keeps its own messages and limits.
pub fn read_escape(s: &[u8]) -> Result<(Escape, usize), (EscapeError, usize)> {
    let Some(&e) = s.first() else {
        return Err((EscapeError::End, 0));
    };
    let byte = |b: u8| Ok((Escape::Byte(b), 1));
    match e {
        b'n' => byte(b'\n'),
        b'r' => byte(b'\r'),
        b't' => byte(b'\t'),
        b'a' => byte(7),
        b'b' => byte(8),
        b'f' => byte(12),
        b'v' => byte(11),
        b'?' | b'\\' | b'\'' | b'"' => byte(e),
        b'0'..=b'7' => {
            let mut v = (e - b'0') as u32;
            let mut n = 1;
            while n < 3 && s.get(n).is_some_and(|c| (b'0'..=b'7').contains(c)) {
                v = v * 8 + (s[n] - b'0') as u32;
                n += 1;
            }
            Ok((Escape::Octal(v), n))
        }
        b'x' | b'X' => {
            let mut v = 0u32;
            let mut n = 1;
            while n < 3 && s.get(n).is_some_and(u8::is_ascii_hexdigit) {
                v = v * 16 + hex_val(s[n]);
                n += 1;
            }
            if n == 1 {
                return Err((EscapeError::Hex, 0));
            }
            Ok((Escape::Byte(v as u8), n))
        }
        b'u' | b'U' => {
            let want = if e == b'u' { 4 } else { 8 };
            let mut v = 0u32;
            for k in 1..=want {
                match s.get(k) {
                    Some(c) if c.is_ascii_hexdigit() => {
                        v = v.saturating_mul(16).saturating_add(hex_val(*c));
                    }
                    _ => return Err((EscapeError::Unicode, 0)),
                }
            }
            Ok((Escape::Unicode(v), want + 1))
        }
        _ => Err((EscapeError::Unknown(e), 0)),
    }
}

fn hex_val(c: u8) -> u32 {
    (c as char).to_digit(16).unwrap_or(0)
}

/// Undo C escaping (`\n`, octal, `\x`, `\u`, `\U`, ...) of a string's
/// contents onto `out`: text format strings, and `bytes` defaults as
/// protoc writes them in descriptors.
pub fn unescape_body(s: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        i += 1;
        if c != b'\\' {
            out.push(c);
            continue;
        }
        let (esc, n) = read_escape(&s[i..]).map_err(|(e, _)| match e {
            EscapeError::End => "Invalid escape at end of string.".to_string(),
            EscapeError::Hex => "Invalid hex escape.".into(),
            EscapeError::Unicode => "Invalid unicode escape.".into(),
            EscapeError::Unknown(b) => format!("Invalid escape sequence: \\{}", b as char),
        })?;
        i += n;
        match esc {
            Escape::Byte(b) => out.push(b),
            Escape::Octal(v) if v > 255 => return Err("Invalid octal escape.".into()),
            Escape::Octal(v) => out.push(v as u8),
            // Surrogates, paired or not, are refused (as protobuf's C++
            // parser does): text escapes give code points, not UTF-16.
            Escape::Unicode(cp) => match char::from_u32(cp) {
                Some(ch) => {
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                }
                None => return Err("Invalid unicode escape (a surrogate or out of range).".into()),
            },
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    type Read = Result<(Escape, usize), (EscapeError, usize)>;

    #[test]
    fn each_kind_of_escape() {
        let cases: &[(&[u8], Read)] = &[
            (b"n", Ok((Escape::Byte(b'\n'), 1))),
            (b"v", Ok((Escape::Byte(11), 1))),
            (b"?", Ok((Escape::Byte(b'?'), 1))),
            (b"'", Ok((Escape::Byte(b'\''), 1))),
            (b"7", Ok((Escape::Octal(7), 1))),
            (b"12x", Ok((Escape::Octal(10), 2))),
            (b"1234", Ok((Escape::Octal(83), 3))),
            (b"777", Ok((Escape::Octal(511), 3))),
            (b"x4", Ok((Escape::Byte(4), 2))),
            (b"XfF0", Ok((Escape::Byte(255), 3))),
            (b"u00e9", Ok((Escape::Unicode(0xe9), 5))),
            (b"ud800", Ok((Escape::Unicode(0xd800), 5))),
            (b"UFFFFFFFF", Ok((Escape::Unicode(u32::MAX), 9))),
            (b"", Err((EscapeError::End, 0))),
            (b"xg", Err((EscapeError::Hex, 0))),
            (b"u12", Err((EscapeError::Unicode, 0))),
            (b"U0000004g", Err((EscapeError::Unicode, 0))),
            (b"q", Err((EscapeError::Unknown(b'q'), 0))),
            (b"\n", Err((EscapeError::Unknown(b'\n'), 0))),
        ];
        for (s, want) in cases {
            assert_eq!(read_escape(s), *want, "{:?}", String::from_utf8_lossy(s));
        }
    }

    #[test]
    fn text_format_limits() {
        let un = |s: &[u8]| {
            let mut out = Vec::new();
            unescape_body(s, &mut out).map(|()| out)
        };
        assert_eq!(un(br"a\101\x42\u00e9").unwrap(), b"aAB\xc3\xa9");
        assert_eq!(un(br"\377").unwrap(), [255]);
        assert_eq!(un(br"\400").unwrap_err(), "Invalid octal escape.");
        assert!(un(br"\ud800").is_err());
        assert!(un(br"\U00110000").is_err());
        assert_eq!(un(br"\x").unwrap_err(), "Invalid hex escape.");
        assert_eq!(un(b"\\").unwrap_err(), "Invalid escape at end of string.");
        assert_eq!(un(br"\q").unwrap_err(), "Invalid escape sequence: \\q");
    }
}
