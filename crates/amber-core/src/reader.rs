//! A bounds-checked cursor over the input. Every read either succeeds or
//! returns a format error carrying the offset; nothing here can panic.

use crate::error::DecodeError;
use crate::varint::{self, VarintError};

pub struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Reader { data, pos: 0 }
    }

    #[inline(always)]
    pub fn pos(&self) -> usize {
        self.pos
    }

    #[inline(always)]
    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.pos == self.data.len()
    }

    #[cold]
    fn truncated<E>(&self, what: &str, need: usize) -> DecodeError<E> {
        DecodeError::format(
            self.pos,
            format!(
                "truncated {what}: needs {need} bytes, {} left",
                self.remaining()
            ),
        )
    }

    /// Step over `n` bytes the caller has checked are there.
    #[inline(always)]
    pub fn skip(&mut self, n: usize) {
        debug_assert!(n <= self.remaining());
        self.pos += n;
    }

    /// The next byte, without consuming it.
    #[inline(always)]
    pub fn peek(&self) -> Option<u8> {
        self.data.get(self.pos).copied()
    }

    #[inline(always)]
    pub fn u8<E>(&mut self, what: &str) -> Result<u8, DecodeError<E>> {
        match self.data.get(self.pos) {
            Some(&b) => {
                self.pos += 1;
                Ok(b)
            }
            None => Err(self.truncated(what, 1)),
        }
    }

    /// The next `n` bytes. `n` is checked against what is left before any use,
    /// so a lying length never causes an allocation.
    #[inline(always)]
    pub fn take<E>(&mut self, n: usize, what: &str) -> Result<&'a [u8], DecodeError<E>> {
        if n <= self.remaining() {
            let s = &self.data[self.pos..self.pos + n];
            self.pos += n;
            Ok(s)
        } else {
            Err(self.truncated(what, n))
        }
    }

    #[inline(always)]
    pub fn array<const N: usize, E>(&mut self, what: &str) -> Result<[u8; N], DecodeError<E>> {
        let s = self.take(N, what)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    #[inline(always)]
    pub fn varint<E>(&mut self, what: &str) -> Result<u64, DecodeError<E>> {
        match varint::read(&self.data[self.pos..]) {
            Ok((v, n)) => {
                self.pos += n;
                Ok(v)
            }
            Err(VarintError::Truncated) => Err(self.truncated(what, 1)),
            Err(VarintError::Invalid) => Err(DecodeError::format(
                self.pos,
                format!("invalid varint in {what}"),
            )),
        }
    }

    /// A count of things that each take at least `min_bytes` bytes of input.
    /// Counts that could not fit in what is left are rejected up front.
    #[inline(always)]
    pub fn count<E>(&mut self, what: &str, min_bytes: usize) -> Result<usize, DecodeError<E>> {
        let at = self.pos;
        let n = self.varint(what)?;
        let max = (self.remaining() / min_bytes.max(1)) as u64;
        if n > max {
            return Err(DecodeError::format(
                at,
                format!(
                    "{what} {n} is larger than the {} bytes left could hold",
                    self.remaining()
                ),
            ));
        }
        Ok(n as usize)
    }
}
