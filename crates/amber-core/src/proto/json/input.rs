//! What the parser reads: JSON text (through the [`Lexer`]) or, at the
//! Python edge, Python objects (dicts, lists, strings, numbers, `None`)
//! read in place, so `from_dict` needs no text in between.

use std::borrow::Cow;

use crate::proto::json::lex::{LexError, Lexer, Number};

/// The kind of the next value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peek {
    /// An object.
    Object,
    /// An array.
    Array,
    /// A string.
    String,
    /// A number.
    Number,
    /// `true`.
    True,
    /// `false`.
    False,
    /// `null`.
    Null,
    /// Nothing valid (the end of the text, a stray character, an object
    /// of another type).
    Other,
}

/// A number as the input has it.
#[derive(Debug, Clone, Copy)]
pub enum Num<'a> {
    /// JSON text.
    Text(Number<'a>),
    /// An integer (Python `int`).
    Int(i128),
    /// A float (Python `float`, or an `int` beyond `i128`).
    Float(f64),
}

type Res<T> = Result<T, LexError>;

/// A JSON document being read, value by value.
pub trait Input<'a> {
    /// A saved position ([`Input::reset`] returns to it).
    type Mark;
    /// The kind of the next value.
    fn peek(&mut self) -> Peek;
    /// The position of the next value, for errors (a byte offset; 0 when
    /// the input has no text).
    fn pos(&mut self) -> usize;
    /// Line and column of `offset` (0, 0 when the input has no text).
    fn line_col(&self, offset: usize) -> (usize, usize);
    /// Whether the whole input has been read (only whitespace is left).
    fn at_end(&mut self) -> bool;
    /// Enter the object that is the next value (`what`: what was
    /// expected, for the error); false if it is empty (and left).
    fn open_object(&mut self, what: &str) -> Res<bool>;
    /// The next member's key (then its value is next).
    fn key(&mut self) -> Res<Cow<'a, str>>;
    /// After a member's value: true if another member follows, false at
    /// the object's end (which is left).
    fn next_member(&mut self) -> Res<bool>;
    /// Enter the array that is the next value; false if it is empty.
    fn open_array(&mut self, what: &str) -> Res<bool>;
    /// After an item: true if another follows, false at the array's end.
    fn next_item(&mut self) -> Res<bool>;
    /// The next value, a string.
    fn string(&mut self) -> Res<Cow<'a, str>>;
    /// The next value, a number.
    fn number(&mut self) -> Res<Num<'a>>;
    /// Pass the next value, `true`, `false` or `null` (as peeked).
    fn literal(&mut self) -> Res<()>;
    /// Pass the next value, whatever it is (containers nest at most
    /// `max_depth` deep).
    fn skip_value(&mut self, max_depth: usize) -> Res<()>;
    /// The position of the next value, to come back to.
    fn mark(&mut self) -> Self::Mark;
    /// Go back to a mark.
    fn reset(&mut self, mark: Self::Mark);
    /// An error: `what` expected at the next value.
    fn expected<T>(&mut self, what: &str) -> Res<T>;
}

impl<'a> Input<'a> for Lexer<'a> {
    type Mark = usize;

    #[inline]
    fn peek(&mut self) -> Peek {
        match Lexer::peek(self) {
            Some(b'{') => Peek::Object,
            Some(b'[') => Peek::Array,
            Some(b'"') => Peek::String,
            Some(b'-' | b'0'..=b'9') => Peek::Number,
            Some(b't') => Peek::True,
            Some(b'f') => Peek::False,
            Some(b'n') => Peek::Null,
            _ => Peek::Other,
        }
    }

    #[inline]
    fn pos(&mut self) -> usize {
        Lexer::peek(self);
        self.pos
    }

    fn line_col(&self, offset: usize) -> (usize, usize) {
        Lexer::line_col(self, offset)
    }

    fn at_end(&mut self) -> bool {
        Lexer::peek(self).is_none()
    }

    fn open_object(&mut self, what: &str) -> Res<bool> {
        self.open(b'{', b'}', what)
    }

    #[inline]
    fn key(&mut self) -> Res<Cow<'a, str>> {
        let k = Lexer::string(self)?;
        self.eat(b':', "':'")?;
        Ok(k)
    }

    #[inline]
    fn next_member(&mut self) -> Res<bool> {
        self.after(b'}')
    }

    fn open_array(&mut self, what: &str) -> Res<bool> {
        self.open(b'[', b']', what)
    }

    #[inline]
    fn next_item(&mut self) -> Res<bool> {
        self.after(b']')
    }

    #[inline]
    fn string(&mut self) -> Res<Cow<'a, str>> {
        Lexer::string(self)
    }

    #[inline]
    fn number(&mut self) -> Res<Num<'a>> {
        Lexer::number(self).map(Num::Text)
    }

    fn literal(&mut self) -> Res<()> {
        match Lexer::peek(self) {
            Some(b't') => Lexer::literal(self, b"true"),
            Some(b'f') => Lexer::literal(self, b"false"),
            _ => Lexer::literal(self, b"null"),
        }
    }

    fn skip_value(&mut self, max_depth: usize) -> Res<()> {
        Lexer::skip_value(self, max_depth)
    }

    fn mark(&mut self) -> usize {
        self.pos()
    }

    fn reset(&mut self, mark: usize) {
        self.pos = mark;
    }

    fn expected<T>(&mut self, what: &str) -> Res<T> {
        Lexer::expected(self, what)
    }
}

impl Lexer<'_> {
    fn open(&mut self, c: u8, close: u8, what: &str) -> Res<bool> {
        if Lexer::peek(self) != Some(c) {
            return Lexer::expected(self, what);
        }
        self.pos += 1;
        if Lexer::peek(self) == Some(close) {
            self.pos += 1;
            return Ok(false);
        }
        Ok(true)
    }

    #[inline]
    fn after(&mut self, close: u8) -> Res<bool> {
        match Lexer::peek(self) {
            Some(b',') => {
                self.pos += 1;
                Ok(true)
            }
            Some(c) if c == close => {
                self.pos += 1;
                Ok(false)
            }
            _ => Lexer::expected(
                self,
                if close == b'}' {
                    "',' or '}'"
                } else {
                    "',' or ']'"
                },
            ),
        }
    }
}
