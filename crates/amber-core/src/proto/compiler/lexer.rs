//! The `.proto` tokenizer: identifiers, integers, floats, strings (with
//! every escape, adjacent literals joined by the parser), symbols; `//` and
//! `/* */` comments skipped. Works on bytes: text that is not UTF-8 is an
//! error only inside identifiers or where a string must be UTF-8.

use crate::proto::error::{Pos, ProtoError, ProtoErrorKind};
use crate::proto::escape::{read_escape, Escape, EscapeError};

/// What a token is.
#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    /// An identifier or keyword.
    Ident(String),
    /// An integer literal (decimal, `0x` hex or `0` octal); `None` when it
    /// does not fit in 64 bits.
    Int(Option<u64>),
    /// A decimal integer literal past 64 bits, read as a double: protoc
    /// takes it where a floating-point number may stand (a `double`
    /// default) and refuses it as out of range anywhere else.
    BigInt(f64),
    /// A floating-point literal.
    Float(f64),
    /// A string literal, unescaped (raw bytes).
    Str(Vec<u8>),
    /// One punctuation character.
    Sym(u8),
    /// End of input.
    Eof,
}

/// A token and where it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    /// The token.
    pub tok: Tok,
    /// Its first character.
    pub pos: Pos,
}

/// Split `src` into tokens (the last one is [`Tok::Eof`]).
pub fn tokenize(src: &[u8]) -> Result<Vec<Token>, ProtoError> {
    // A UTF-8 byte order mark at the start is skipped, as protoc does.
    let bom = if src.starts_with(b"\xEF\xBB\xBF") {
        3
    } else {
        0
    };
    let mut lx = Lexer {
        src,
        i: bom,
        line: 1,
        col: 1,
    };
    let mut out = Vec::new();
    loop {
        let t = lx.next()?;
        let end = t.tok == Tok::Eof;
        out.push(t);
        if end {
            return Ok(out);
        }
    }
}

struct Lexer<'a> {
    src: &'a [u8],
    i: usize,
    line: u32,
    col: u32,
}

fn err(msg: impl Into<String>, pos: Pos) -> ProtoError {
    ProtoError::new(ProtoErrorKind::Syntax, msg, pos)
}

impl Lexer<'_> {
    fn pos(&self) -> Pos {
        Pos {
            line: self.line,
            col: self.col,
        }
    }

    fn peek(&self, k: usize) -> u8 {
        self.src.get(self.i + k).copied().unwrap_or(0)
    }

    fn bump(&mut self) -> u8 {
        let c = self.peek(0);
        self.i += 1;
        match c {
            b'\n' => {
                self.line = self.line.saturating_add(1);
                self.col = 1;
            }
            b'\t' => self.col = ((self.col - 1) / 8 + 1) * 8 + 1,
            // UTF-8 continuation bytes do not start a new column.
            0x80..=0xBF => {}
            _ => self.col = self.col.saturating_add(1),
        }
        c
    }

    fn at_end(&self) -> bool {
        self.i >= self.src.len()
    }

    fn skip_space(&mut self) -> Result<(), ProtoError> {
        loop {
            match self.peek(0) {
                b' ' | b'\t' | b'\n' | b'\r' | 0x0B | 0x0C if !self.at_end() => {
                    self.bump();
                }
                b'/' if self.peek(1) == b'/' => {
                    while !self.at_end() && self.peek(0) != b'\n' {
                        self.bump();
                    }
                }
                b'/' if self.peek(1) == b'*' => {
                    self.bump();
                    self.bump();
                    loop {
                        if self.at_end() {
                            return Err(err("End-of-file inside block comment.", self.pos()));
                        }
                        if self.peek(0) == b'*' && self.peek(1) == b'/' {
                            self.bump();
                            self.bump();
                            break;
                        }
                        self.bump();
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn next(&mut self) -> Result<Token, ProtoError> {
        self.skip_space()?;
        let pos = self.pos();
        if self.at_end() {
            return Ok(Token { tok: Tok::Eof, pos });
        }
        let c = self.peek(0);
        let tok = if c.is_ascii_alphabetic() || c == b'_' {
            let s = self.i;
            while self.peek(0).is_ascii_alphanumeric() || self.peek(0) == b'_' {
                self.bump();
            }
            Tok::Ident(String::from_utf8_lossy(&self.src[s..self.i]).into_owned())
        } else if c.is_ascii_digit() || (c == b'.' && self.peek(1).is_ascii_digit()) {
            self.number(pos)?
        } else if c == b'"' || c == b'\'' {
            self.string(pos)?
        } else if c.is_ascii_graphic() {
            self.bump();
            Tok::Sym(c)
        } else {
            return Err(err(
                format!("Invalid control characters or non-ASCII byte 0x{c:02x} in the text."),
                pos,
            ));
        };
        Ok(Token { tok, pos })
    }

    fn number(&mut self, pos: Pos) -> Result<Tok, ProtoError> {
        let s = self.i;
        if self.peek(0) == b'0' && matches!(self.peek(1), b'x' | b'X') {
            self.bump();
            self.bump();
            let ds = self.i;
            while self.peek(0).is_ascii_hexdigit() {
                self.bump();
            }
            if ds == self.i {
                return Err(err("\"0x\" must be followed by hex digits.", pos));
            }
            self.no_trailing_letter()?;
            let digits = std::str::from_utf8(&self.src[ds..self.i]).unwrap_or("");
            return Ok(Tok::Int(u64::from_str_radix(digits, 16).ok()));
        }
        let mut is_float = false;
        while self.peek(0).is_ascii_digit() {
            self.bump();
        }
        if self.peek(0) == b'.' {
            is_float = true;
            self.bump();
            while self.peek(0).is_ascii_digit() {
                self.bump();
            }
        }
        if matches!(self.peek(0), b'e' | b'E') {
            is_float = true;
            self.bump();
            if matches!(self.peek(0), b'+' | b'-') {
                self.bump();
            }
            if !self.peek(0).is_ascii_digit() {
                return Err(err("\"e\" must be followed by exponent.", pos));
            }
            while self.peek(0).is_ascii_digit() {
                self.bump();
            }
        }
        self.no_trailing_letter()?;
        let text = std::str::from_utf8(&self.src[s..self.i]).unwrap_or("0");
        if is_float {
            let v: f64 = text
                .parse()
                .map_err(|_| err(format!("Invalid float literal \"{text}\"."), pos))?;
            return Ok(Tok::Float(v));
        }
        if text.len() > 1 && text.starts_with('0') {
            if let Some(k) = text.bytes().position(|b| b > b'7') {
                // At the first digit that is not octal, as protoc reports it.
                let at = Pos {
                    line: pos.line,
                    col: pos.col + k as u32,
                };
                return Err(err(
                    "Numbers starting with leading zero must be in octal.",
                    at,
                ));
            }
            return Ok(Tok::Int(u64::from_str_radix(&text[1..], 8).ok()));
        }
        Ok(match text.parse() {
            Ok(v) => Tok::Int(Some(v)),
            Err(_) => Tok::BigInt(text.parse().unwrap_or(f64::INFINITY)),
        })
    }

    fn no_trailing_letter(&self) -> Result<(), ProtoError> {
        let c = self.peek(0);
        if c.is_ascii_alphabetic() || c == b'_' || c == b'.' {
            // At the letter, as protoc reports it.
            return Err(err("Need space between number and identifier.", self.pos()));
        }
        Ok(())
    }

    fn string(&mut self, pos: Pos) -> Result<Tok, ProtoError> {
        let quote = self.bump();
        let mut out = Vec::new();
        loop {
            if self.at_end() {
                return Err(err("Unexpected end of string.", pos));
            }
            let c = self.peek(0);
            if c == b'\n' {
                // protoc's words, at the line break.
                return Err(err(
                    "Multiline strings are not allowed. Did you miss a \"?.",
                    self.pos(),
                ));
            }
            self.bump();
            if c == quote {
                return Ok(Tok::Str(out));
            }
            if c != b'\\' {
                out.push(c);
                continue;
            }
            let epos = self.pos();
            // The shared C-escape reader; the messages are protoc's, and an
            // octal escape above 255 keeps its low byte, as protoc's does.
            let (esc, n) =
                read_escape(&self.src[self.i.min(self.src.len())..]).map_err(|(e, _)| match e {
                    EscapeError::End => err("Unexpected end of string.", pos),
                    EscapeError::Hex | EscapeError::Unicode => {
                        err("Expected hex digits for escape sequence.", epos)
                    }
                    EscapeError::Unknown(_) => {
                        err("Invalid escape sequence in string literal.", epos)
                    }
                })?;
            for _ in 0..n {
                self.bump();
            }
            match esc {
                Escape::Byte(b) => out.push(b),
                Escape::Octal(v) => out.push(v as u8),
                Escape::Unicode(v) if (0xd800..0xe000).contains(&v) => {
                    // As protoc: a lead surrogate escape followed by a
                    // trail surrogate escape is one code point; any other
                    // surrogate is kept as its three-byte form, which is
                    // not UTF-8 (a string default holding one reads as
                    // bytes, as in Google's runtime).
                    let rest = &self.src[self.i.min(self.src.len())..];
                    let trail = match rest {
                        [b'\\', b'u', ..] if v < 0xdc00 => match read_escape(&rest[1..]) {
                            Ok((Escape::Unicode(t), 5)) if (0xdc00..0xe000).contains(&t) => Some(t),
                            _ => None,
                        },
                        _ => None,
                    };
                    match trail {
                        Some(t) => {
                            for _ in 0..6 {
                                self.bump();
                            }
                            let cp = 0x10000 + ((v - 0xd800) << 10) + (t - 0xdc00);
                            push_code_point(&mut out, cp);
                        }
                        None => push_code_point(&mut out, v),
                    }
                }
                Escape::Unicode(v) => {
                    if char::from_u32(v).is_none() {
                        return Err(err(format!("Invalid Unicode code point \\{}.", v), epos));
                    }
                    push_code_point(&mut out, v);
                }
            }
        }
    }
}

/// A code point in UTF-8's byte form, surrogates too (as protoc writes
/// them).
fn push_code_point(out: &mut Vec<u8>, cp: u32) {
    match cp {
        0..=0x7f => out.push(cp as u8),
        0x80..=0x7ff => out.extend_from_slice(&[0xc0 | (cp >> 6) as u8, 0x80 | (cp & 0x3f) as u8]),
        0x800..=0xffff => out.extend_from_slice(&[
            0xe0 | (cp >> 12) as u8,
            0x80 | ((cp >> 6) & 0x3f) as u8,
            0x80 | (cp & 0x3f) as u8,
        ]),
        _ => out.extend_from_slice(&[
            0xf0 | (cp >> 18) as u8,
            0x80 | ((cp >> 12) & 0x3f) as u8,
            0x80 | ((cp >> 6) & 0x3f) as u8,
            0x80 | (cp & 0x3f) as u8,
        ]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok> {
        tokenize(s.as_bytes())
            .unwrap()
            .into_iter()
            .map(|t| t.tok)
            .collect()
    }

    #[test]
    fn numbers_strings_comments() {
        assert_eq!(
            toks("a 0x1F 017 1.5 1e3 // x\n /* y */ 'a\\n\\101\\x41\\u00e9' ;"),
            vec![
                Tok::Ident("a".into()),
                Tok::Int(Some(31)),
                Tok::Int(Some(15)),
                Tok::Float(1.5),
                Tok::Float(1000.0),
                Tok::Str(b"a\nAA\xc3\xa9".to_vec()),
                Tok::Sym(b';'),
                Tok::Eof
            ]
        );
        assert_eq!(toks("99999999999999999999")[0], Tok::BigInt(1e20));
        assert_eq!(toks("0x1ffffffffffffffff")[0], Tok::Int(None));
    }

    #[test]
    fn escapes_as_protoc_reads_them() {
        // Octal above 255 keeps its low byte (protoc 35.1 writes "\400" as
        // 0x00 and "\777" as 0xff); every other escape as in C.
        assert_eq!(
            toks(r#""\400\777\1\12\x7\xfF\a\b\f\v\?\'\"\\\U0001F600""#)[0],
            Tok::Str(b"\x00\xff\x01\n\x07\xff\x07\x08\x0c\x0b?'\"\\\xf0\x9f\x98\x80".to_vec())
        );
        let msg = |s: &str| tokenize(s.as_bytes()).unwrap_err().to_string();
        assert_eq!(
            msg(r#"x "\xg""#),
            ":1:5: Expected hex digits for escape sequence."
        );
        assert_eq!(
            msg(r#"x "\u12""#),
            ":1:5: Expected hex digits for escape sequence."
        );
        assert_eq!(
            msg(r#"x "\q""#),
            ":1:5: Invalid escape sequence in string literal."
        );
        assert_eq!(
            msg(r#"x "\U00110000""#),
            ":1:5: Invalid Unicode code point \\1114112."
        );
        assert_eq!(msg("x \"\\"), ":1:3: Unexpected end of string.");
    }

    #[test]
    fn surrogate_escapes_as_protoc() {
        let one = |s: &str| match &toks(s)[..] {
            [Tok::Str(b), Tok::Eof] => b.clone(),
            t => panic!("{t:?}"),
        };
        assert_eq!(one(r#""\ud83d\ude00""#), "\u{1f600}".as_bytes());
        assert_eq!(one(r#""\ud800x""#), b"\xed\xa0\x80x");
        assert_eq!(one(r#""\udc00\ud800""#), b"\xed\xb0\x80\xed\xa0\x80");
        assert_eq!(one(r#""\ud800\u0041""#), b"\xed\xa0\x80A");
        assert_eq!(one(r#""\u00e9\U0001F600""#), "\u{e9}\u{1f600}".as_bytes());
    }

    #[test]
    fn errors_have_positions() {
        let e = tokenize(b"x\n  \"abc").unwrap_err();
        assert_eq!((e.line, e.col), (2, 3));
        assert!(tokenize(b"/* never closed").is_err());
        assert!(tokenize(b"'\\q'").is_err());
        assert!(tokenize(b"\xff").is_err());
        assert_eq!(
            tokenize(b"\xEF\xBB\xBFx").unwrap()[0].tok,
            Tok::Ident("x".into())
        );
    }
}
