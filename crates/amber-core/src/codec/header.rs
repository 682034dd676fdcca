//! The frame header (spec §4) and stream framing: what a reader of a stream
//! of frames needs next after the first bytes of one.

use super::error::{header_read, DecodeError, ErrorKind, Res};
use super::format as f;
use crate::bytes::reader::Reader;

/// A parsed frame header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub header_len: usize,
    pub body_len: u64,
}

impl Header {
    /// Header plus body length; `None` if that does not fit in a u64.
    pub fn frame_len(&self) -> Option<u64> {
        self.body_len.checked_add(self.header_len as u64)
    }
}

/// Parse a frame header from the front of `data`, which needs at least
/// [`f::HEADER_LEN`] bytes (16 when the long flag is set).
pub fn parse_header<E>(data: &[u8]) -> Res<Header, E> {
    let mut r = Reader::new(data);
    let magic = r.u8("header").map_err(header_read)?;
    if magic != f::MAGIC {
        let hint = if magic == 0x80 {
            " (this looks like a pickle)"
        } else {
            ""
        };
        return Err(DecodeError::data(
            0,
            ErrorKind::NotAmber,
            format!(
                "not amber data: first byte is 0x{magic:02x}, expected 0x{:02x}{hint}",
                f::MAGIC
            ),
        ));
    }
    let version = r.u8("header").map_err(header_read)?;
    if version != f::VERSION {
        return Err(DecodeError::data(
            1,
            ErrorKind::Unsupported,
            format!(
                "unsupported format version {version} (this build reads version {})",
                f::VERSION
            ),
        ));
    }
    let flags = r.u8("header").map_err(header_read)?;
    if flags & !f::FLAG_LONG != 0 {
        return Err(DecodeError::data(
            2,
            ErrorKind::Unsupported,
            format!("unknown header flags 0x{flags:02x}"),
        ));
    }
    if r.u8("header").map_err(header_read)? != 0 {
        return Err(DecodeError::reserved(3, "a non-zero header byte 3"));
    }
    let short = u32::from_le_bytes(r.array::<4>("header").map_err(header_read)?);
    if flags & f::FLAG_LONG == 0 {
        return Ok(Header {
            header_len: f::HEADER_LEN,
            body_len: short as u64,
        });
    }
    if short != 0 {
        return Err(DecodeError::malformed(
            4,
            "long header must have a zero short length",
        ));
    }
    let long = u64::from_le_bytes(r.array::<8>("header").map_err(header_read)?);
    let header = Header {
        header_len: f::HEADER_LEN_LONG,
        body_len: long,
    };
    if header.frame_len().is_none() {
        return Err(DecodeError::malformed(
            8,
            format!("body length {long} is too large"),
        ));
    }
    Ok(header)
}

/// What a stream reader needs after the first bytes of a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// This many more header bytes.
    More(usize),
    /// The whole frame, of this many bytes (header included).
    Frame(u64),
}

/// Check the first bytes of a frame read from a stream, however few, and
/// say what comes next. Bytes that are already wrong (a first byte that is
/// not the magic) fail at once, so a short stream of other data is named
/// for what it is rather than called truncated.
pub fn frame_need<E>(prefix: &[u8]) -> Res<Need, E> {
    let long = prefix.len() > 2 && prefix[2] & f::FLAG_LONG != 0;
    let header_len = if long {
        f::HEADER_LEN_LONG
    } else {
        f::HEADER_LEN
    };
    if prefix.len() >= header_len {
        let header = parse_header(prefix)?;
        // parse_header refuses lengths whose sum would overflow.
        return Ok(Need::Frame(header.frame_len().unwrap_or(u64::MAX)));
    }
    // The bytes still missing are filled with valid ones, so only the
    // bytes that are there can fail.
    let mut header = [0u8; f::HEADER_LEN_LONG];
    header[..2].copy_from_slice(&[f::MAGIC, f::VERSION]);
    header[..prefix.len()].copy_from_slice(prefix);
    parse_header::<E>(&header[..header_len])?;
    Ok(Need::More(header_len - prefix.len()))
}
