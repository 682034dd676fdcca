//! A bounds-checked cursor over the input. Every read either succeeds or
//! returns a [`ReadError`] carrying the offset; nothing here can panic. Each
//! part converts `ReadError` into its own error type.

use std::fmt;

use crate::bytes::varint::{self, VarintError};

/// Why a read failed, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadError {
    /// Byte offset in the input.
    pub offset: usize,
    pub kind: ReadErrorKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadErrorKind {
    /// `what` needed `need` bytes and only `left` were there.
    Truncated {
        what: &'static str,
        need: usize,
        left: usize,
    },
    /// A varint that is too long or not in the form required.
    InvalidVarint { what: &'static str },
    /// A count of `n` things that each take at least one byte, with only
    /// `left` bytes left.
    CountTooLarge {
        what: &'static str,
        n: u64,
        left: usize,
    },
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ReadErrorKind::Truncated { what, need, left } => {
                write!(f, "truncated {what}: needs {need} bytes, {left} left")
            }
            ReadErrorKind::InvalidVarint { what } => write!(f, "invalid varint in {what}"),
            ReadErrorKind::CountTooLarge { what, n, left } => {
                write!(
                    f,
                    "{what} {n} is larger than the {left} bytes left could hold"
                )
            }
        }
    }
}

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
    fn truncated(&self, what: &'static str, need: usize) -> ReadError {
        ReadError {
            offset: self.pos,
            kind: ReadErrorKind::Truncated {
                what,
                need,
                left: self.remaining(),
            },
        }
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
    pub fn u8(&mut self, what: &'static str) -> Result<u8, ReadError> {
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
    pub fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], ReadError> {
        if n <= self.remaining() {
            let s = &self.data[self.pos..self.pos + n];
            self.pos += n;
            Ok(s)
        } else {
            Err(self.truncated(what, n))
        }
    }

    #[inline(always)]
    pub fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], ReadError> {
        let s = self.take(N, what)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    /// Little-endian fixed-width integers (zip and npy headers).
    pub fn u16_le(&mut self, what: &'static str) -> Result<u16, ReadError> {
        self.array::<2>(what).map(u16::from_le_bytes)
    }

    pub fn u32_le(&mut self, what: &'static str) -> Result<u32, ReadError> {
        self.array::<4>(what).map(u32::from_le_bytes)
    }

    pub fn u64_le(&mut self, what: &'static str) -> Result<u64, ReadError> {
        self.array::<8>(what).map(u64::from_le_bytes)
    }

    /// Big-endian fixed-width integers (PostgreSQL's binary formats).
    pub fn u16_be(&mut self, what: &'static str) -> Result<u16, ReadError> {
        self.array::<2>(what).map(u16::from_be_bytes)
    }

    pub fn u32_be(&mut self, what: &'static str) -> Result<u32, ReadError> {
        self.array::<4>(what).map(u32::from_be_bytes)
    }

    pub fn u64_be(&mut self, what: &'static str) -> Result<u64, ReadError> {
        self.array::<8>(what).map(u64::from_be_bytes)
    }

    #[inline(always)]
    pub fn varint(&mut self, what: &'static str) -> Result<u64, ReadError> {
        match varint::read(&self.data[self.pos..]) {
            Ok((v, n)) => {
                self.pos += n;
                Ok(v)
            }
            Err(VarintError::Truncated) => Err(self.truncated(what, 1)),
            Err(VarintError::Invalid) => Err(ReadError {
                offset: self.pos,
                kind: ReadErrorKind::InvalidVarint { what },
            }),
        }
    }

    /// A count of things that each take at least `min_bytes` bytes of input.
    /// Counts that could not fit in what is left are rejected up front.
    #[inline(always)]
    pub fn count(&mut self, what: &'static str, min_bytes: usize) -> Result<usize, ReadError> {
        let at = self.pos;
        let n = self.varint(what)?;
        let max = (self.remaining() / min_bytes.max(1)) as u64;
        if n > max {
            return Err(ReadError {
                offset: at,
                kind: ReadErrorKind::CountTooLarge {
                    what,
                    n,
                    left: self.remaining(),
                },
            });
        }
        Ok(n as usize)
    }
}
