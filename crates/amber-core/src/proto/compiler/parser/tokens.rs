//! The parser's token helpers: looking ahead, eating symbols and words,
//! and reading identifiers, strings and integers with protoc's messages.

use super::*;

impl Parser {
    pub(super) fn peek(&self) -> &Token {
        &self.toks[self.i.min(self.toks.len() - 1)]
    }

    pub(super) fn peek_at(&self, k: usize) -> &Tok {
        &self.toks[(self.i + k).min(self.toks.len() - 1)].tok
    }

    pub(super) fn pos(&self) -> Pos {
        self.peek().pos
    }

    pub(super) fn advance(&mut self) -> Token {
        let t = self.peek().clone();
        if self.i < self.toks.len() - 1 {
            self.i += 1;
        }
        t
    }

    pub(super) fn is_sym(&self, c: u8) -> bool {
        self.peek().tok == Tok::Sym(c)
    }

    pub(super) fn is_word(&self, w: &str) -> bool {
        matches!(&self.peek().tok, Tok::Ident(s) if s == w)
    }

    pub(super) fn eat_sym(&mut self, c: u8) -> bool {
        if self.is_sym(c) {
            self.advance();
            true
        } else {
            false
        }
    }

    pub(super) fn eat_word(&mut self, w: &str) -> bool {
        if self.is_word(w) {
            self.advance();
            true
        } else {
            false
        }
    }

    pub(super) fn describe(&self) -> String {
        match &self.peek().tok {
            Tok::Ident(s) => format!("\"{s}\""),
            Tok::Int(_) | Tok::BigInt(_) | Tok::Float(_) => "a number".into(),
            Tok::Str(_) => "a string".into(),
            Tok::Sym(c) => format!("\"{}\"", *c as char),
            Tok::Eof => "end of input".into(),
        }
    }

    pub(super) fn expected(&self, what: &str) -> ProtoError {
        syntax(
            format!("Expected {what}, found {}.", self.describe()),
            self.pos(),
        )
    }

    pub(super) fn expect_sym(&mut self, c: u8) -> R<()> {
        if self.eat_sym(c) {
            Ok(())
        } else {
            Err(self.expected(&format!("\"{}\"", c as char)))
        }
    }

    pub(super) fn expect_word(&mut self, w: &str) -> R<()> {
        if self.eat_word(w) {
            Ok(())
        } else {
            Err(self.expected(&format!("\"{w}\"")))
        }
    }

    pub(super) fn ident(&mut self, what: &str) -> R<(String, Pos)> {
        let pos = self.pos();
        match &self.peek().tok {
            Tok::Ident(s) => {
                let s = s.clone();
                self.advance();
                Ok((s, pos))
            }
            _ => Err(self.expected(what)),
        }
    }

    /// A possibly dotted name, with an optional leading dot.
    pub(super) fn dotted(&mut self, what: &str) -> R<(String, Pos)> {
        let pos = self.pos();
        let mut s = String::new();
        if self.eat_sym(b'.') {
            s.push('.');
        }
        let (first, _) = self.ident(what)?;
        s.push_str(&first);
        while self.eat_sym(b'.') {
            let (n, _) = self.ident(what)?;
            s.push('.');
            s.push_str(&n);
        }
        Ok((s, pos))
    }

    /// One or more adjacent string literals, joined.
    pub(super) fn strings(&mut self, what: &str) -> R<(Vec<u8>, Pos)> {
        let pos = self.pos();
        let mut out = match &self.peek().tok {
            Tok::Str(b) => b.clone(),
            _ => return Err(self.expected(what)),
        };
        self.advance();
        while let Tok::Str(b) = &self.peek().tok {
            out.extend_from_slice(b);
            self.advance();
        }
        Ok((out, pos))
    }

    pub(super) fn utf8_string(&mut self, what: &str) -> R<(String, Pos)> {
        let (b, pos) = self.strings(what)?;
        let s = String::from_utf8(b).map_err(|_| syntax("String is not valid UTF-8.", pos))?;
        Ok((s, pos))
    }

    /// An integer, optionally negative, within `min..=max`.
    pub(super) fn int(&mut self, what: &str, min: i64, max: i64) -> R<(i64, Pos)> {
        let pos = self.pos();
        let neg = self.eat_sym(b'-');
        let v = match self.peek().tok {
            Tok::Int(Some(v)) => v,
            Tok::Int(None) | Tok::BigInt(_) => return Err(syntax("Integer out of range.", pos)),
            _ => return Err(self.expected(what)),
        };
        self.advance();
        let v = if neg {
            if v > (1u64 << 63) {
                return Err(syntax("Integer out of range.", pos));
            }
            (v as i64).wrapping_neg()
        } else {
            i64::try_from(v).map_err(|_| syntax("Integer out of range.", pos))?
        };
        if v < min || v > max {
            return Err(syntax("Integer out of range.", pos));
        }
        Ok((v, pos))
    }

    pub(super) fn end_statement(&mut self) -> R<()> {
        self.expect_sym(b';')
    }
}
