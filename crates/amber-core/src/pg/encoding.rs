//! The client encoding a connection's text travels in.
//!
//! PostgreSQL converts text, names, json and enum labels (but not `"char"`
//! or `bytea`) between the server's encoding and the client's in both
//! directions, binary formats included, so a value's bytes are only text
//! once read in the connection's `client_encoding`. Three cases:
//!
//! - UTF-8: Rust's own strings, the fast path;
//! - `SQL_ASCII`: no encoding at all (the server takes and gives bytes as
//!   they are): text is bytes, as psycopg reads it; a `str` is sent as
//!   UTF-8, as psycopg sends it;
//! - any other: converted by the codec that psycopg maps the encoding to
//!   (the caller's), characters the encoding lacks refused.

/// How a connection's text is read and written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientEncoding {
    Utf8,
    SqlAscii,
    Other,
}

impl ClientEncoding {
    /// The case of a connection whose text psycopg converts with the Python
    /// codec `codec` (psycopg names UTF8 `utf-8` and SQL_ASCII `ascii`; no
    /// other PostgreSQL encoding maps to ASCII).
    pub fn of_codec(codec: &str) -> ClientEncoding {
        let norm: String = codec
            .chars()
            .filter(|c| !matches!(c, '-' | '_' | ' '))
            .flat_map(char::to_lowercase)
            .collect();
        match norm.as_str() {
            "utf8" | "u8" | "utf" => ClientEncoding::Utf8,
            "ascii" | "usascii" | "646" => ClientEncoding::SqlAscii,
            _ => ClientEncoding::Other,
        }
    }

    /// Whether a `str`'s UTF-8 bytes go to the server as they are (UTF-8,
    /// and SQL_ASCII, where psycopg sends a `str` as UTF-8).
    pub fn writes_utf8(self) -> bool {
        !matches!(self, ClientEncoding::Other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codecs_psycopg_names() {
        assert_eq!(ClientEncoding::of_codec("utf-8"), ClientEncoding::Utf8);
        assert_eq!(ClientEncoding::of_codec("UTF8"), ClientEncoding::Utf8);
        assert_eq!(ClientEncoding::of_codec("ascii"), ClientEncoding::SqlAscii);
        assert_eq!(ClientEncoding::of_codec("iso8859-1"), ClientEncoding::Other);
        assert_eq!(ClientEncoding::of_codec("cp1252"), ClientEncoding::Other);
        assert_eq!(ClientEncoding::of_codec("euc_jp"), ClientEncoding::Other);
        assert!(ClientEncoding::SqlAscii.writes_utf8());
        assert!(!ClientEncoding::Other.writes_utf8());
    }
}
