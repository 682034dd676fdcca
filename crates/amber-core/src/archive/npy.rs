//! NumPy's `.npy` header (NEP 1, `numpy.lib.format`), written as NumPy
//! writes it and read without evaluating anything: the header's Python
//! literal is parsed by a small strict parser that knows only strings,
//! integers, True/False/None, tuples, lists and dicts.

use super::error::{ArchiveError, ArchiveErrorKind, Res};
use crate::bytes::reader::Reader;

pub const MAGIC: &[u8; 6] = b"\x93NUMPY";
/// NumPy pads headers so that data starts at a multiple of this.
pub const ALIGN: usize = 64;
/// NumPy leaves room for the growth axis's length to reach this many digits.
const GROWTH_AXIS_MAX_DIGITS: usize = 21;
const MAX_DEPTH: usize = 64;

/// A Python literal from an npy header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Literal {
    Str(String),
    /// An integer, as its decimal text when it does not fit an i64.
    Int(i64),
    BigInt(String),
    Bool(bool),
    None,
    Tuple(Vec<Literal>),
    List(Vec<Literal>),
    Dict(Vec<(String, Literal)>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NpyHeader {
    pub version: (u8, u8),
    pub descr: Literal,
    pub fortran_order: bool,
    pub shape: Vec<u64>,
    /// Where the array's bytes start.
    pub data_offset: usize,
}

/// The header of an array: `descr` is the Python literal NumPy writes for
/// the dtype (`repr(numpy.lib.format.dtype_to_descr(dtype))`).
pub fn npy_header(descr: &str, fortran_order: bool, shape: &[u64]) -> Vec<u8> {
    let shape_text = match shape {
        [] => "()".to_string(),
        [n] => format!("({n},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let fortran = if fortran_order { "True" } else { "False" };
    let mut text =
        format!("{{'descr': {descr}, 'fortran_order': {fortran}, 'shape': {shape_text}, }}");
    if let Some(&growth) = if fortran_order {
        shape.last()
    } else {
        shape.first()
    } {
        text.push_str(&" ".repeat(GROWTH_AXIS_MAX_DIGITS.saturating_sub(growth.to_string().len())));
    }
    // NumPy's choice: version 1.0 (latin-1, 2-byte length) when it fits,
    // 2.0 (4-byte length) when it does not, 3.0 (UTF-8) for other text. The
    // padding is 1 to 64 spaces before the newline, never 0.
    let latin1: Option<Vec<u8>> = text.chars().map(|c| u8::try_from(c as u32).ok()).collect();
    let (bytes, len_bytes, major) = match latin1 {
        Some(b) if MAGIC.len() + 4 + b.len() + 1 + ALIGN <= u16::MAX as usize => (b, 2, 1),
        Some(b) => (b, 4, 2),
        None => (text.into_bytes(), 4, 3),
    };
    let prefix = MAGIC.len() + 2 + len_bytes;
    let pad = ALIGN - (prefix + bytes.len() + 1) % ALIGN;
    let hlen = bytes.len() + pad + 1;
    let mut out = Vec::with_capacity(prefix + hlen);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[major, 0]);
    if len_bytes == 2 {
        out.extend_from_slice(&(hlen as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(hlen as u32).to_le_bytes());
    }
    out.extend_from_slice(&bytes);
    out.resize(out.len() + pad, b' ');
    out.push(b'\n');
    out
}

fn bad(msg: impl Into<String>, offset: usize) -> ArchiveError {
    ArchiveError::new(ArchiveErrorKind::Malformed, msg).at(offset as u64)
}

pub fn parse_npy_header(data: &[u8]) -> Res<NpyHeader> {
    let mut r = Reader::new(data);
    let rd = |e| ArchiveError::read(e, 0);
    if r.take(6, "npy magic").map_err(rd)? != MAGIC {
        return Err(bad("not an .npy file (no \\x93NUMPY magic)", 0));
    }
    let version = (
        r.u8("npy version").map_err(rd)?,
        r.u8("npy version").map_err(rd)?,
    );
    let hlen = match version {
        (1, 0) => r.u16_le("npy header length").map_err(rd)? as usize,
        (2, 0) | (3, 0) => r.u32_le("npy header length").map_err(rd)? as usize,
        (a, b) => {
            return Err(ArchiveError::new(
                ArchiveErrorKind::Unsupported,
                format!("npy format version {a}.{b}"),
            )
            .at(6))
        }
    };
    let start = r.pos();
    let raw = r.take(hlen, "npy header").map_err(rd)?;
    let text: String = if version.0 == 3 {
        std::str::from_utf8(raw)
            .map_err(|_| bad("npy header is not UTF-8", start))?
            .to_string()
    } else {
        raw.iter().map(|&b| b as char).collect()
    };
    let mut p = Parser {
        text: text.as_bytes(),
        pos: 0,
        base: start,
    };
    let value = p.value(0)?;
    p.skip_space();
    if p.pos != p.text.len() {
        return Err(bad("text after the npy header's dict", start + p.pos));
    }
    let Literal::Dict(fields) = value else {
        return Err(bad("the npy header is not a dict", start));
    };
    header_fields(fields, version, start + hlen, start)
}

fn header_fields(
    fields: Vec<(String, Literal)>,
    version: (u8, u8),
    data_offset: usize,
    at: usize,
) -> Res<NpyHeader> {
    let (mut descr, mut fortran, mut shape) = (None, None, None);
    for (k, v) in fields {
        match (k.as_str(), v) {
            ("descr", v) => descr = Some(v),
            ("fortran_order", Literal::Bool(b)) => fortran = Some(b),
            ("shape", Literal::Tuple(items)) => {
                let dims: Option<Vec<u64>> = items
                    .into_iter()
                    .map(|d| match d {
                        Literal::Int(n) => u64::try_from(n).ok(),
                        _ => None,
                    })
                    .collect();
                shape = Some(
                    dims.ok_or_else(|| bad("npy shape holds something other than sizes", at))?,
                );
            }
            (other, _) => {
                return Err(bad(
                    format!("unexpected npy header key or value for {other:?}"),
                    at,
                ))
            }
        }
    }
    match (descr, fortran, shape) {
        (Some(descr), Some(fortran_order), Some(shape)) => Ok(NpyHeader {
            version,
            descr,
            fortran_order,
            shape,
            data_offset,
        }),
        _ => Err(bad(
            "the npy header needs descr, fortran_order and shape",
            at,
        )),
    }
}

/// The product of an array's dimensions, or None on overflow.
pub fn shape_product(shape: &[u64]) -> Option<u64> {
    shape.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d))
}

struct Parser<'a> {
    text: &'a [u8],
    pos: usize,
    base: usize,
}

impl Parser<'_> {
    fn err(&self, msg: &str) -> ArchiveError {
        bad(format!("npy header: {msg}"), self.base + self.pos)
    }

    fn skip_space(&mut self) {
        while self
            .text
            .get(self.pos)
            .is_some_and(|c| c.is_ascii_whitespace())
        {
            self.pos += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        self.skip_space();
        if self.text.get(self.pos) == Some(&c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn value(&mut self, depth: usize) -> Res<Literal> {
        if depth > MAX_DEPTH {
            return Err(self.err("nested too deeply"));
        }
        self.skip_space();
        match self.text.get(self.pos) {
            Some(b'\'' | b'"') => self.string().map(Literal::Str),
            Some(b'(') => self.items(b')', depth).map(Literal::Tuple),
            Some(b'[') => self.items(b']', depth).map(Literal::List),
            Some(b'{') => self.dict(depth),
            Some(b'-' | b'+' | b'0'..=b'9') => self.int(),
            Some(_) => self.word(),
            None => Err(self.err("unexpected end")),
        }
    }

    fn items(&mut self, close: u8, depth: usize) -> Res<Vec<Literal>> {
        self.pos += 1;
        let mut out = Vec::new();
        loop {
            if self.eat(close) {
                return Ok(out);
            }
            out.push(self.value(depth + 1)?);
            if !self.eat(b',') {
                return if self.eat(close) {
                    Ok(out)
                } else {
                    Err(self.err("expected ',' or a closing bracket"))
                };
            }
        }
    }

    fn dict(&mut self, depth: usize) -> Res<Literal> {
        self.pos += 1;
        let mut out = Vec::new();
        loop {
            if self.eat(b'}') {
                return Ok(Literal::Dict(out));
            }
            self.skip_space();
            let key = match self.value(depth + 1)? {
                Literal::Str(s) => s,
                _ => return Err(self.err("dict keys must be strings")),
            };
            if !self.eat(b':') {
                return Err(self.err("expected ':'"));
            }
            if out.iter().any(|(k, _)| *k == key) {
                return Err(self.err("a dict key appears twice"));
            }
            out.push((key, self.value(depth + 1)?));
            if !self.eat(b',') {
                return if self.eat(b'}') {
                    Ok(Literal::Dict(out))
                } else {
                    Err(self.err("expected ',' or '}'"))
                };
            }
        }
    }

    fn string(&mut self) -> Res<String> {
        let quote = self.text[self.pos];
        self.pos += 1;
        let mut out = String::new();
        loop {
            let Some(&c) = self.text.get(self.pos) else {
                return Err(self.err("unterminated string"));
            };
            self.pos += 1;
            match c {
                _ if c == quote => return Ok(out),
                b'\\' => out.push(self.escape()?),
                b'\n' => return Err(self.err("newline in a string")),
                _ if c < 0x80 => out.push(c as char),
                _ => {
                    // A UTF-8 sequence (version 3 headers): copy it whole.
                    let start = self.pos - 1;
                    let len = match c {
                        0xC0..=0xDF => 2,
                        0xE0..=0xEF => 3,
                        _ => 4,
                    };
                    let bytes = self
                        .text
                        .get(start..start + len)
                        .ok_or_else(|| self.err("cut UTF-8"))?;
                    out.push_str(
                        std::str::from_utf8(bytes).map_err(|_| self.err("invalid UTF-8"))?,
                    );
                    self.pos = start + len;
                }
            }
        }
    }

    fn escape(&mut self) -> Res<char> {
        let Some(&c) = self.text.get(self.pos) else {
            return Err(self.err("unterminated escape"));
        };
        self.pos += 1;
        let hex = |p: &mut Self, n: usize| -> Res<char> {
            let digits = p
                .text
                .get(p.pos..p.pos + n)
                .ok_or_else(|| p.err("short escape"))?;
            let s = std::str::from_utf8(digits).map_err(|_| p.err("bad escape"))?;
            let v = u32::from_str_radix(s, 16).map_err(|_| p.err("bad escape"))?;
            p.pos += n;
            char::from_u32(v).ok_or_else(|| p.err("bad escape"))
        };
        Ok(match c {
            b'\\' | b'\'' | b'"' => c as char,
            b'n' => '\n',
            b't' => '\t',
            b'r' => '\r',
            b'0' => '\0',
            b'x' => hex(self, 2)?,
            b'u' => hex(self, 4)?,
            b'U' => hex(self, 8)?,
            _ => return Err(self.err("unknown escape")),
        })
    }

    fn int(&mut self) -> Res<Literal> {
        let start = self.pos;
        if matches!(self.text[self.pos], b'-' | b'+') {
            self.pos += 1;
        }
        while self.text.get(self.pos).is_some_and(u8::is_ascii_digit) {
            self.pos += 1;
        }
        let digits =
            std::str::from_utf8(&self.text[start..self.pos]).map_err(|_| self.err("bad number"))?;
        if self.text.get(self.pos) == Some(&b'L') {
            self.pos += 1; // Python 2's long suffix, in old files
        }
        if digits.len() > 400 {
            return Err(self.err("number too long"));
        }
        match digits.parse::<i64>() {
            Ok(n) => Ok(Literal::Int(n)),
            Err(_)
                if digits
                    .trim_start_matches(['-', '+'])
                    .bytes()
                    .all(|b| b.is_ascii_digit())
                    && digits.len() > 1 =>
            {
                Ok(Literal::BigInt(digits.to_string()))
            }
            Err(_) => Err(self.err("bad number")),
        }
    }

    fn word(&mut self) -> Res<Literal> {
        for (w, v) in [
            ("True", Literal::Bool(true)),
            ("False", Literal::Bool(false)),
            ("None", Literal::None),
        ] {
            if self.text[self.pos..].starts_with(w.as_bytes()) {
                self.pos += w.len();
                return Ok(v);
            }
        }
        Err(self.err("unexpected text"))
    }
}
