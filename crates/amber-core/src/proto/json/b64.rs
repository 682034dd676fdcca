//! Base64 for `bytes` fields: written standard with padding (as Python's
//! `base64.b64encode`), read standard or URL-safe, padding optional.

const STD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Append the standard base64 of `data`, padded.
pub fn encode(out: &mut Vec<u8>, data: &[u8]) {
    out.reserve(data.len().div_ceil(3) * 4);
    let mut chunks = data.chunks_exact(3);
    for c in &mut chunks {
        let n = (c[0] as u32) << 16 | (c[1] as u32) << 8 | c[2] as u32;
        out.extend_from_slice(&[
            STD[(n >> 18) as usize & 63],
            STD[(n >> 12) as usize & 63],
            STD[(n >> 6) as usize & 63],
            STD[n as usize & 63],
        ]);
    }
    match *chunks.remainder() {
        [a] => {
            let n = (a as u32) << 16;
            out.extend_from_slice(&[STD[(n >> 18) as usize & 63], STD[(n >> 12) as usize & 63]]);
            out.extend_from_slice(b"==");
        }
        [a, b] => {
            let n = (a as u32) << 16 | (b as u32) << 8;
            out.extend_from_slice(&[
                STD[(n >> 18) as usize & 63],
                STD[(n >> 12) as usize & 63],
                STD[(n >> 6) as usize & 63],
            ]);
            out.push(b'=');
        }
        _ => {}
    }
}

fn value(c: u8) -> Option<u32> {
    Some(match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' | b'-' => 62,
        b'/' | b'_' => 63,
        _ => return None,
    } as u32)
}

/// Decode standard or URL-safe base64 (the alphabets may mix, as Python's
/// `urlsafe_b64decode` allows), with or without `=` padding at the end.
pub fn decode(s: &[u8]) -> Result<Vec<u8>, String> {
    let mut end = s.len();
    while end > 0 && s[end - 1] == b'=' {
        end -= 1;
    }
    let data = &s[..end];
    if s.len() - end > 2 {
        return Err("incorrect base64 padding".into());
    }
    if data.len() % 4 == 1 {
        return Err(
            "invalid base64: the number of data characters cannot be 1 more than a multiple of 4"
                .into(),
        );
    }
    let mut out = Vec::with_capacity(data.len() / 4 * 3 + 2);
    let mut acc = 0u32;
    let mut bits = 0;
    for (i, &c) in data.iter().enumerate() {
        let Some(v) = value(c) else {
            return Err(format!("invalid base64 character {:?} at {i}", c as char));
        };
        acc = acc << 6 | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        for n in 0..20 {
            let data: Vec<u8> = (0..n).map(|i| (i * 37 + 250) as u8).collect();
            let mut e = Vec::new();
            encode(&mut e, &data);
            assert_eq!(decode(&e).unwrap(), data);
            let bare: Vec<u8> = e.iter().copied().filter(|&c| c != b'=').collect();
            assert_eq!(decode(&bare).unwrap(), data);
        }
        let mut e = Vec::new();
        encode(&mut e, b"\xfb\xff");
        assert_eq!(e, b"+/8=");
        assert_eq!(decode(b"-_8").unwrap(), b"\xfb\xff");
        assert!(decode(b"a").is_err());
        assert!(decode(b"ab!c").is_err());
        assert!(decode(b"ab===").is_err());
    }
}
