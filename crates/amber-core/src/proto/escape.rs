//! C escapes (`\n`, octal, `\x`, `\u`, `\U`, ...) undone: the text
//! format's strings, and `bytes` defaults as protoc writes them in
//! descriptors.

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
        let Some(&e) = s.get(i) else {
            return Err("Invalid escape at end of string.".into());
        };
        i += 1;
        match e {
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'a' => out.push(7),
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'v' => out.push(11),
            b'?' => out.push(b'?'),
            b'\\' | b'\'' | b'"' => out.push(e),
            b'0'..=b'7' => {
                let mut v = (e - b'0') as u32;
                let mut n = 1;
                while n < 3 && i < s.len() && (b'0'..=b'7').contains(&s[i]) {
                    v = v * 8 + (s[i] - b'0') as u32;
                    i += 1;
                    n += 1;
                }
                if v > 255 {
                    return Err("Invalid octal escape.".into());
                }
                out.push(v as u8);
            }
            b'x' | b'X' => {
                let mut v = 0u32;
                let mut n = 0;
                while n < 2 && i < s.len() && s[i].is_ascii_hexdigit() {
                    v = v * 16 + (s[i] as char).to_digit(16).unwrap_or(0);
                    i += 1;
                    n += 1;
                }
                if n == 0 {
                    return Err("Invalid hex escape.".into());
                }
                out.push(v as u8);
            }
            b'u' | b'U' => {
                let want = if e == b'u' { 4 } else { 8 };
                if i + want > s.len() || !s[i..i + want].iter().all(u8::is_ascii_hexdigit) {
                    return Err("Invalid unicode escape.".into());
                }
                let hex = std::str::from_utf8(&s[i..i + want]).unwrap_or("0");
                let cp = u32::from_str_radix(hex, 16).unwrap_or(0);
                i += want;
                // Surrogates, paired or not, are refused (as protobuf's C++
                // parser does): text escapes give code points, not UTF-16.
                match char::from_u32(cp) {
                    Some(ch) => {
                        let mut buf = [0u8; 4];
                        out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                    }
                    None => {
                        return Err("Invalid unicode escape (a surrogate or out of range).".into())
                    }
                }
            }
            _ => return Err(format!("Invalid escape sequence: \\{}", e as char)),
        }
    }
    Ok(())
}
