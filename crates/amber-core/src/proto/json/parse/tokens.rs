//! Reading JSON tokens for the parser: errors with kind, offset and path,
//! objects, arrays, keys, skipped values and scalar tokens.

use super::*;

impl<'t, 'a, I: Input<'a>> Parser<'t, 'a, I> {
    #[cold]
    pub(super) fn err<T, E>(
        &self,
        kind: DecodeKind,
        offset: usize,
        msg: impl Into<String>,
    ) -> Res<T, E> {
        let (line, col) = self.inp.line_col(offset);
        Err(ParseFailure::Json(Box::new(ParseError {
            kind,
            offset,
            line,
            col,
            message: msg.into(),
            path: render(&self.path),
        })))
    }

    /// A scalar that did not convert, at `offset`: an enum name that names
    /// no value is an unknown field.
    #[cold]
    pub(super) fn bad<T, E>(&self, offset: usize, bad: Bad) -> Res<T, E> {
        match bad {
            Bad::Msg(kind, msg) => self.err(kind, offset, msg),
            Bad::UnknownEnum(msg) => self.err(DecodeKind::UnknownField, offset, msg),
        }
    }

    #[inline]
    pub(super) fn lex<T, E>(&self, r: Result<T, LexError>) -> Res<T, E> {
        match r {
            Ok(v) => Ok(v),
            Err(e) => self.err(e.kind, e.offset, e.message),
        }
    }

    /// The position of the next token.
    pub(super) fn here(&mut self) -> usize {
        self.inp.pos()
    }

    /// After an object member: true if another follows.
    pub(super) fn next_member<E>(&mut self) -> Res<bool, E> {
        let r = self.inp.next_member();
        self.lex(r)
    }

    /// After an array item: true if another follows.
    pub(super) fn next_item<E>(&mut self) -> Res<bool, E> {
        let r = self.inp.next_item();
        self.lex(r)
    }

    /// The error for a value other than `what`: of kind type when it is a
    /// JSON value (of another type), the lexer's kind otherwise.
    #[cold]
    pub(super) fn wrong<T, E>(&mut self, what: &str) -> Res<T, E> {
        let value = self.inp.peek() != Peek::Other;
        match self.inp.expected(what) {
            Ok(v) => Ok(v),
            Err(mut e) => {
                if value {
                    e.kind = DecodeKind::TypeMismatch;
                }
                self.err(e.kind, e.offset, e.message)
            }
        }
    }

    /// Enter an object; false if it is empty (and left). `what` names
    /// what was expected (made only for the error).
    pub(super) fn open_object<E>(&mut self, what: impl FnOnce() -> String) -> Res<bool, E> {
        if self.inp.peek() != Peek::Object {
            return self.wrong(&what());
        }
        let r = self.inp.open_object("an object");
        self.lex(r)
    }

    /// Enter an array; false if it is empty (and left).
    pub(super) fn open_array<E>(&mut self, what: impl FnOnce() -> String) -> Res<bool, E> {
        if self.inp.peek() != Peek::Array {
            return self.wrong(&what());
        }
        let r = self.inp.open_array("an array");
        self.lex(r)
    }

    pub(super) fn key<E>(&mut self) -> Res<(Cow<'a, str>, usize), E> {
        let at = self.here();
        let k = self.inp.key();
        Ok((self.lex(k)?, at))
    }

    pub(super) fn skip<E>(&mut self) -> Res<(), E> {
        let r = self.inp.skip_value(self.o.max_depth);
        self.lex(r)
    }

    pub(super) fn literal<E>(&mut self) -> Res<(), E> {
        let r = self.inp.literal();
        self.lex(r)
    }

    /// A scalar token (an object or array is an error here).
    pub(super) fn token<E>(&mut self) -> Res<Tok<'a>, E> {
        let at = self.here();
        let r = match self.inp.peek() {
            Peek::String => self.inp.string().map(Tok::Str),
            Peek::True => self.inp.literal().map(|_| Tok::Bool(true)),
            Peek::False => self.inp.literal().map(|_| Tok::Bool(false)),
            Peek::Null => self.inp.literal().map(|_| Tok::Null),
            Peek::Object => {
                return self.err(
                    DecodeKind::TypeMismatch,
                    at,
                    "expected a scalar value, found an object",
                )
            }
            Peek::Array => {
                return self.err(
                    DecodeKind::TypeMismatch,
                    at,
                    "expected a scalar value, found an array",
                )
            }
            Peek::Number => self.inp.number().map(Tok::Num),
            Peek::Other => self.inp.expected("a value"),
        };
        self.lex(r)
    }
}
