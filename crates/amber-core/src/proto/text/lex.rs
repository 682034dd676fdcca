//! The text format's tokenizer: identifiers, numbers, quoted strings
//! (escapes left in) and symbols, each with its 1-based line and column;
//! whitespace and `#` comments skipped.

/// A token's text and where it starts.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tok<'a> {
    pub(crate) text: &'a [u8],
    /// The byte offset of its start (the input's length at its end).
    pub(crate) offset: usize,
    pub(crate) line: usize,
    pub(crate) col: usize,
}

pub(crate) struct Tokenizer<'a> {
    s: &'a [u8],
    pos: usize,
    line: usize,
    line_start: usize,
}

impl<'a> Tokenizer<'a> {
    pub(crate) fn new(s: &'a [u8]) -> Self {
        Tokenizer {
            s,
            pos: 0,
            line: 1,
            line_start: 0,
        }
    }

    pub(crate) fn skip_space(&mut self) {
        while self.pos < self.s.len() {
            match self.s[self.pos] {
                b'\n' => {
                    self.pos += 1;
                    self.line += 1;
                    self.line_start = self.pos;
                }
                b' ' | b'\t' | b'\r' | 0x0b | 0x0c => self.pos += 1,
                b'#' => {
                    while self.pos < self.s.len() && self.s[self.pos] != b'\n' {
                        self.pos += 1;
                    }
                }
                _ => break,
            }
        }
    }

    pub(crate) fn at_end(&self) -> bool {
        self.pos >= self.s.len()
    }

    /// The next token, without consuming it.
    pub(crate) fn peek(&self) -> Tok<'a> {
        let start = self.pos;
        let col = start - self.line_start + 1;
        let s = self.s;
        let end = if start >= s.len() {
            start
        } else {
            let c = s[start];
            let mut i = start + 1;
            if c.is_ascii_alphabetic() || c == b'_' {
                while i < s.len()
                    && (s[i].is_ascii_alphanumeric() || matches!(s[i], b'_' | b'+' | b'-'))
                {
                    i += 1;
                }
            } else if c.is_ascii_digit()
                || c == b'+'
                || c == b'-'
                || (c == b'.' && s.get(start + 1).is_some_and(|d| d.is_ascii_digit()))
            {
                while i < s.len()
                    && (s[i].is_ascii_alphanumeric() || matches!(s[i], b'_' | b'.' | b'+' | b'-'))
                {
                    i += 1;
                }
            } else if c == b'"' || c == b'\'' {
                while i < s.len() && s[i] != c && s[i] != b'\n' {
                    if s[i] == b'\\' && i + 1 < s.len() && s[i + 1] != b'\n' {
                        i += 1;
                    }
                    i += 1;
                }
                if i < s.len() && s[i] == c {
                    i += 1;
                }
            }
            i
        };
        Tok {
            text: &s[start..end],
            offset: start,
            line: self.line,
            col,
        }
    }

    pub(crate) fn next(&mut self) -> Tok<'a> {
        let t = self.peek();
        self.pos += t.text.len();
        self.skip_space();
        t
    }

    pub(crate) fn try_consume(&mut self, sym: &[u8]) -> bool {
        if self.peek().text == sym {
            self.next();
            true
        } else {
            false
        }
    }
}
