//! UTF-8 checks for the short strings messages mostly hold: ASCII is
//! checked a word at a time first, which costs a fraction of a full
//! validation on a few dozen bytes.

/// `b` as text, when it is UTF-8.
#[inline]
pub fn str(b: &[u8]) -> Result<&str, std::str::Utf8Error> {
    if b.is_ascii() {
        // SAFETY: ASCII bytes are valid UTF-8.
        Ok(unsafe { std::str::from_utf8_unchecked(b) })
    } else {
        std::str::from_utf8(b)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn ascii_other_utf8_and_invalid_bytes() {
        assert_eq!(super::str(b"plain").unwrap(), "plain");
        assert_eq!(super::str("é😀".as_bytes()).unwrap(), "é😀");
        assert_eq!(super::str(b"ab\xffcd").unwrap_err().valid_up_to(), 2);
        assert_eq!(super::str(b"").unwrap(), "");
    }
}
