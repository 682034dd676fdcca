//! A strict JSON tokenizer (RFC 8259) over bytes: whitespace is space,
//! tab, CR and LF; numbers without leading zeros, `+`, `NaN` or
//! `Infinity`; strings checked as UTF-8, without raw control characters,
//! with only the standard escapes and no lone surrogates; no comments and
//! no trailing commas. Strings without escapes are borrowed from the input.

use crate::proto::runtime::error::DecodeKind;
use std::borrow::Cow;

/// A JSON number as written, and whether it is a plain integer (no
/// fraction, no exponent).
#[derive(Debug, Clone, Copy)]
pub struct Number<'a> {
    /// The number's text.
    pub text: &'a str,
    /// No `.` and no exponent.
    pub integer: bool,
}

/// A tokenizer error: what, and at which byte.
#[derive(Debug)]
pub struct LexError {
    /// What kind of problem: truncated (the input ends early), malformed,
    /// or over the nesting limit.
    pub kind: DecodeKind,
    /// Byte offset.
    pub offset: usize,
    /// What is wrong.
    pub message: String,
}

type Res<T> = Result<T, LexError>;

/// The reader.
pub struct Lexer<'a> {
    /// The input.
    pub b: &'a [u8],
    /// The position of the next byte to read.
    pub pos: usize,
}

/// Describe the byte at an error.
fn describe(b: Option<u8>) -> String {
    match b {
        None => "the end of the input".into(),
        Some(c) if (0x21..0x7f).contains(&c) => format!("{:?}", c as char),
        Some(c) => format!("byte 0x{c:02x}"),
    }
}

impl<'a> Lexer<'a> {
    /// A tokenizer over `b`.
    pub fn new(b: &'a [u8]) -> Lexer<'a> {
        Lexer { b, pos: 0 }
    }

    /// An error at `offset`.
    #[cold]
    pub fn err<T>(&self, offset: usize, message: impl Into<String>) -> Res<T> {
        let kind = if offset >= self.b.len() {
            DecodeKind::Truncated
        } else {
            DecodeKind::Malformed
        };
        self.err_kind(kind, offset, message)
    }

    /// An error of kind `kind` at `offset`.
    #[cold]
    pub fn err_kind<T>(
        &self,
        kind: DecodeKind,
        offset: usize,
        message: impl Into<String>,
    ) -> Res<T> {
        Err(LexError {
            kind,
            offset,
            message: message.into(),
        })
    }

    /// An error: `what` expected at the current position.
    #[cold]
    pub fn expected<T>(&self, what: &str) -> Res<T> {
        self.err(
            self.pos,
            format!(
                "expected {what}, found {}",
                describe(self.b.get(self.pos).copied())
            ),
        )
    }

    /// Skip whitespace; the next byte, if any.
    #[inline]
    pub fn peek(&mut self) -> Option<u8> {
        while let Some(&c) = self.b.get(self.pos) {
            if c == b' ' || c == b'\n' || c == b'\r' || c == b'\t' {
                self.pos += 1;
            } else {
                return Some(c);
            }
        }
        None
    }

    /// Skip whitespace and take byte `c`, or fail saying `what` was
    /// expected.
    #[inline]
    pub fn eat(&mut self, c: u8, what: &str) -> Res<()> {
        if self.peek() == Some(c) {
            self.pos += 1;
            Ok(())
        } else {
            self.expected(what)
        }
    }

    /// A string (the next token must be one).
    pub fn string(&mut self) -> Res<Cow<'a, str>> {
        if self.peek() != Some(b'"') {
            return self.expected("a string");
        }
        let start = self.pos;
        self.pos += 1;
        let b = self.b;
        let mut run = self.pos;
        let mut owned: Option<String> = None;
        loop {
            let mut i = self.pos;
            while i < b.len() && b[i] != b'"' && b[i] != b'\\' && b[i] >= 0x20 {
                i += 1;
            }
            self.pos = i;
            let Some(&c) = b.get(i) else {
                return self.err_kind(DecodeKind::Truncated, start, "unterminated string");
            };
            if c < 0x20 {
                return self.err(
                    i,
                    format!(
                        "invalid control character {} in a string",
                        describe(Some(c))
                    ),
                );
            }
            let piece = match simdutf8::basic::from_utf8(&b[run..i]) {
                Ok(s) => s,
                Err(_) => {
                    let bad = std::str::from_utf8(&b[run..i])
                        .err()
                        .map_or(run, |e| run + e.valid_up_to());
                    return self.err(bad, "invalid UTF-8 in a string");
                }
            };
            if c == b'"' {
                self.pos = i + 1;
                return Ok(match owned {
                    None => Cow::Borrowed(piece),
                    Some(mut s) => {
                        s.push_str(piece);
                        Cow::Owned(s)
                    }
                });
            }
            // An escape.
            let s = owned.get_or_insert_with(String::new);
            s.push_str(piece);
            let e = b.get(i + 1).copied();
            self.pos = i + 2;
            match e {
                Some(b'"') => s.push('"'),
                Some(b'\\') => s.push('\\'),
                Some(b'/') => s.push('/'),
                Some(b'b') => s.push('\u{8}'),
                Some(b'f') => s.push('\u{c}'),
                Some(b'n') => s.push('\n'),
                Some(b'r') => s.push('\r'),
                Some(b't') => s.push('\t'),
                Some(b'u') => {
                    let hi = self.hex4(i)?;
                    let ch = if (0xD800..0xDC00).contains(&hi) {
                        if b.get(self.pos) != Some(&b'\\') || b.get(self.pos + 1) != Some(&b'u') {
                            return self.err(i, "lone surrogate in a string (a \\u escape of U+D800 to U+DBFF without its pair)");
                        }
                        let at = self.pos;
                        self.pos += 2;
                        let lo = self.hex4(at)?;
                        if !(0xDC00..0xE000).contains(&lo) {
                            return self.err(i, "lone surrogate in a string (a \\u escape of U+D800 to U+DBFF without its pair)");
                        }
                        0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                    } else if (0xDC00..0xE000).contains(&hi) {
                        return self.err(
                            i,
                            "lone surrogate in a string (a \\u escape of U+DC00 to U+DFFF)",
                        );
                    } else {
                        hi
                    };
                    s.push(char::from_u32(ch).unwrap_or('\u{FFFD}'));
                }
                _ => {
                    return self.err(
                        i,
                        format!(
                            "invalid escape \\{} in a string",
                            e.map_or(String::new(), |c| (c as char).to_string())
                        ),
                    )
                }
            }
            run = self.pos;
        }
    }

    /// Four hex digits at `self.pos` (an escape that began at `at`).
    fn hex4(&mut self, at: usize) -> Res<u32> {
        let Some(h) = self.b.get(self.pos..self.pos + 4) else {
            return self.err(at, "invalid \\u escape");
        };
        let mut v = 0;
        for &c in h {
            let d = match c {
                b'0'..=b'9' => c - b'0',
                b'a'..=b'f' => c - b'a' + 10,
                b'A'..=b'F' => c - b'A' + 10,
                _ => return self.err(at, "invalid \\u escape"),
            };
            v = v * 16 + d as u32;
        }
        self.pos += 4;
        Ok(v)
    }

    /// A number (the next token must be one).
    pub fn number(&mut self) -> Res<Number<'a>> {
        self.peek();
        let b = self.b;
        let start = self.pos;
        let mut i = start;
        if b.get(i) == Some(&b'-') {
            i += 1;
        }
        let digits = |i: &mut usize| {
            let s = *i;
            while b.get(*i).is_some_and(u8::is_ascii_digit) {
                *i += 1;
            }
            *i - s
        };
        match b.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => {
                digits(&mut i);
            }
            _ => {
                self.pos = i;
                return self.expected("a value");
            }
        }
        let mut integer = true;
        if b.get(i) == Some(&b'.') {
            i += 1;
            integer = false;
            if digits(&mut i) == 0 {
                self.pos = i;
                return self.expected("a digit after the decimal point");
            }
        }
        if matches!(b.get(i), Some(b'e' | b'E')) {
            i += 1;
            integer = false;
            if matches!(b.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            if digits(&mut i) == 0 {
                self.pos = i;
                return self.expected("a digit in the exponent");
            }
        }
        self.pos = i;
        // Only ASCII was accepted.
        let text = std::str::from_utf8(&b[start..i]).unwrap_or("0");
        Ok(Number { text, integer })
    }

    /// The literal `word` (`true`, `false`, `null`), whose first byte is
    /// next.
    pub fn literal(&mut self, word: &[u8]) -> Res<()> {
        self.peek();
        if self.b[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(())
        } else {
            self.expected("a value")
        }
    }

    /// Skip one value of any kind, checking it; containers nest at most
    /// `max_depth` deep (an explicit stack: no recursion).
    pub fn skip_value(&mut self, max_depth: usize) -> Res<()> {
        let mut stack: Vec<u8> = Vec::new();
        loop {
            // A value.
            match self.peek() {
                Some(b'{') => {
                    self.pos += 1;
                    if self.peek() == Some(b'}') {
                        self.pos += 1;
                    } else {
                        if stack.len() >= max_depth {
                            return self.err_kind(
                                DecodeKind::Limit,
                                self.pos,
                                format!("JSON nested deeper than {max_depth}"),
                            );
                        }
                        stack.push(b'}');
                        self.string()?;
                        self.eat(b':', "':'")?;
                        continue;
                    }
                }
                Some(b'[') => {
                    self.pos += 1;
                    if self.peek() == Some(b']') {
                        self.pos += 1;
                    } else {
                        if stack.len() >= max_depth {
                            return self.err_kind(
                                DecodeKind::Limit,
                                self.pos,
                                format!("JSON nested deeper than {max_depth}"),
                            );
                        }
                        stack.push(b']');
                        continue;
                    }
                }
                Some(b'"') => {
                    self.string()?;
                }
                Some(b't') => self.literal(b"true")?,
                Some(b'f') => self.literal(b"false")?,
                Some(b'n') => self.literal(b"null")?,
                _ => {
                    self.number()?;
                }
            }
            // After a value: close containers, or go on to the next item.
            loop {
                let Some(&top) = stack.last() else {
                    return Ok(());
                };
                match self.peek() {
                    Some(b',') => {
                        self.pos += 1;
                        if top == b'}' {
                            self.string()?;
                            self.eat(b':', "':'")?;
                        }
                        break;
                    }
                    Some(c) if c == top => {
                        self.pos += 1;
                        stack.pop();
                    }
                    _ => {
                        return self.expected(if top == b'}' {
                            "',' or '}'"
                        } else {
                            "',' or ']'"
                        })
                    }
                }
            }
        }
    }

    /// Line and column (1-based, the column in bytes) of byte `offset`.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let upto = &self.b[..offset.min(self.b.len())];
        let line = upto.iter().filter(|&&c| c == b'\n').count() + 1;
        let col = offset - upto.iter().rposition(|&c| c == b'\n').map_or(0, |p| p + 1) + 1;
        (line, col)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings() {
        let mut l = Lexer::new(br#" "a\u00e9\ud83d\ude00\n" "plain""#);
        assert_eq!(l.string().unwrap(), "a\u{e9}\u{1F600}\n");
        assert!(matches!(l.string().unwrap(), Cow::Borrowed("plain")));
        for bad in [
            &br#""\ud800""#[..],
            br#""\udc00x""#,
            br#""\x""#,
            b"\"a\nb\"",
            b"\"\xff\"",
            b"\"abc",
        ] {
            assert!(Lexer::new(bad).string().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn numbers() {
        for (t, int) in [
            ("0", true),
            ("-12", true),
            ("1.5e-3", false),
            ("2E+10", false),
        ] {
            let n = Lexer::new(t.as_bytes()).number().unwrap();
            assert_eq!((n.text, n.integer), (t, int));
        }
        for bad in ["-", "1.", ".5", "+1", "1e", "NaN"] {
            let mut l = Lexer::new(bad.as_bytes());
            assert!(l.number().is_err() || l.pos != bad.len(), "{bad}");
        }
    }

    #[test]
    fn skipping() {
        let mut l = Lexer::new(br#"{"a": [1, {"b": null}, true, "x"], "c": {}} 5"#);
        l.skip_value(10).unwrap();
        assert_eq!(l.number().unwrap().text, "5");
        for bad in [
            &br#"[1,]"#[..],
            br#"{"a":1,}"#,
            b"[1 2]",
            b"{1: 2}",
            b"[[[[1]]]]",
        ] {
            assert!(Lexer::new(bad).skip_value(3).is_err(), "{bad:?}");
        }
    }
}
