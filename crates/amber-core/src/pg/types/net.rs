//! inet and cidr in PostgreSQL's binary send format (`network_send`):
//!
//! ```text
//! uint8 family    2 = PGSQL_AF_INET (IPv4), 3 = PGSQL_AF_INET6 (IPv6)
//! uint8 bits      prefix length, 0..=32 or 0..=128
//! uint8 is_cidr   1 for cidr, 0 for inet (network_recv ignores it)
//! uint8 nb        address length: 4 or 16, matching the family
//! nb bytes        the address
//! ```
//!
//! A cidr may have no bit set to the right of its prefix (`network_recv`
//! refuses "invalid external cidr value"); an inet may (it is a host address
//! with a netmask).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::pg::error::{PgError, Res};
use crate::pg::wire::put_u8;

pub const PGSQL_AF_INET: u8 = 2;
pub const PGSQL_AF_INET6: u8 = 3;

/// An inet or cidr value: an address and a prefix length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Inet {
    pub addr: IpAddr,
    /// Prefix length in bits: at most 32 for IPv4, 128 for IPv6.
    pub bits: u8,
}

impl Inet {
    fn max_bits(&self) -> u8 {
        match self.addr {
            IpAddr::V4(_) => 32,
            IpAddr::V6(_) => 128,
        }
    }
}

impl Inet {
    /// Parse `address` or `address/bits` (as `str()` of Python's
    /// `ipaddress` objects and PostgreSQL's text form give them). A missing
    /// prefix is the full address length. `None` for anything else.
    pub fn parse(text: &str) -> Option<Inet> {
        let (addr, bits) = match text.trim().split_once('/') {
            Some((a, b)) => (a, Some(b)),
            None => (text.trim(), None),
        };
        let addr: IpAddr = addr.parse().ok()?;
        let max = match addr {
            IpAddr::V4(_) => 32,
            IpAddr::V6(_) => 128,
        };
        let bits = match bits {
            Some(b) if !b.is_empty() && b.bytes().all(|c| c.is_ascii_digit()) => {
                b.parse::<u8>().ok().filter(|&n| n <= max)?
            }
            Some(_) => return None,
            None => max,
        };
        Some(Inet { addr, bits })
    }
}

impl std::fmt::Display for Inet {
    /// PostgreSQL's text form: the prefix is shown unless it is the whole
    /// address (for inet; `cidr` output always shows it, see
    /// [`Inet::with_prefix`]).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.bits == self.max_bits() {
            write!(f, "{}", self.addr)
        } else {
            self.with_prefix(f)
        }
    }
}

impl Inet {
    /// `address/bits`, always with the prefix.
    pub fn with_prefix(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.addr, self.bits)
    }

    /// Whether the prefix is the whole address (a host, not a network).
    pub fn is_host(&self) -> bool {
        self.bits == self.max_bits()
    }
}

fn type_name(is_cidr: bool) -> &'static str {
    if is_cidr {
        "cidr"
    } else {
        "inet"
    }
}

/// Whether any address bit to the right of the first `bits` is set.
fn host_bits_set(addr: &[u8], bits: u8) -> bool {
    addr.iter().enumerate().any(|(i, &byte)| {
        let first = i * 8;
        let keep = usize::from(bits).saturating_sub(first).min(8);
        // `keep` high bits of this byte belong to the prefix.
        let host_mask = if keep >= 8 { 0 } else { 0xffu8 >> keep };
        byte & host_mask != 0
    })
}

/// Encode as inet (`is_cidr` false) or cidr. A prefix longer than the
/// address, or a cidr with host bits set, is refused.
pub fn encode_inet(out: &mut Vec<u8>, v: &Inet, is_cidr: bool) -> Res<()> {
    let ty = type_name(is_cidr);
    if v.bits > v.max_bits() {
        return Err(PgError::invalid_value(format!(
            "{ty} prefix /{} is longer than the address ({} bits)",
            v.bits,
            v.max_bits()
        )));
    }
    let (family, bytes): (u8, Vec<u8>) = match v.addr {
        IpAddr::V4(a) => (PGSQL_AF_INET, a.octets().to_vec()),
        IpAddr::V6(a) => (PGSQL_AF_INET6, a.octets().to_vec()),
    };
    if is_cidr && host_bits_set(&bytes, v.bits) {
        return Err(PgError::invalid_value(format!(
            "cidr {}/{} has bits set to the right of its prefix",
            v.addr, v.bits
        )));
    }
    put_u8(out, family);
    put_u8(out, v.bits);
    put_u8(out, u8::from(is_cidr));
    put_u8(out, bytes.len() as u8);
    out.extend_from_slice(&bytes);
    Ok(())
}

/// Decode an inet (`is_cidr` false) or cidr, checking that family, prefix
/// and address length agree and, for cidr, that no host bit is set.
pub fn decode_inet(b: &[u8], is_cidr: bool) -> Res<Inet> {
    let ty = type_name(is_cidr);
    let [family, bits, flag, nb, addr @ ..] = b else {
        return Err(PgError::malformed(format!(
            "{ty} value of {} bytes is shorter than its 4-byte header",
            b.len()
        ))
        .at(0));
    };
    let (want_nb, max_bits) = match *family {
        PGSQL_AF_INET => (4usize, 32u8),
        PGSQL_AF_INET6 => (16, 128),
        f => {
            return Err(PgError::malformed(format!(
                "{ty} address family {f} is neither 2 (IPv4) nor 3 (IPv6)"
            ))
            .at(0))
        }
    };
    if *bits > max_bits {
        return Err(PgError::malformed(format!(
            "{ty} prefix /{bits} is longer than the address ({max_bits} bits)"
        ))
        .at(1));
    }
    if *flag > 1 {
        return Err(
            PgError::malformed(format!("{ty} is_cidr byte {flag} is neither 0 nor 1")).at(2),
        );
    }
    if usize::from(*nb) != want_nb {
        return Err(PgError::malformed(format!(
            "{ty} address length {nb} does not match its family (needs {want_nb})"
        ))
        .at(3));
    }
    if addr.len() != want_nb {
        return Err(PgError::malformed(format!(
            "{ty} value has {} address bytes, its header says {want_nb}",
            addr.len()
        ))
        .at(4));
    }
    if is_cidr && host_bits_set(addr, *bits) {
        return Err(PgError::malformed(format!(
            "cidr value has bits set to the right of its /{bits} prefix"
        ))
        .at(4));
    }
    let ip = if want_nb == 4 {
        let mut a = [0u8; 4];
        a.copy_from_slice(addr);
        IpAddr::V4(Ipv4Addr::from(a))
    } else {
        let mut a = [0u8; 16];
        a.copy_from_slice(addr);
        IpAddr::V6(Ipv6Addr::from(a))
    };
    Ok(Inet {
        addr: ip,
        bits: *bits,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v4(a: [u8; 4], bits: u8) -> Inet {
        Inet {
            addr: IpAddr::V4(Ipv4Addr::from(a)),
            bits,
        }
    }

    #[test]
    fn inet_v4_bytes() {
        let mut out = Vec::new();
        encode_inet(&mut out, &v4([192, 168, 0, 1], 24), false).unwrap();
        assert_eq!(out, [2, 24, 0, 4, 192, 168, 0, 1]);
        assert_eq!(decode_inet(&out, false).unwrap(), v4([192, 168, 0, 1], 24));
        // The same bytes are not a valid cidr: host bits are set.
        assert!(decode_inet(&out, true).is_err());
    }

    #[test]
    fn cidr_v6_bytes() {
        let net = Inet {
            addr: "2001:db8::".parse().unwrap(),
            bits: 32,
        };
        let mut out = Vec::new();
        encode_inet(&mut out, &net, true).unwrap();
        let mut want = vec![3, 32, 1, 16, 0x20, 0x01, 0x0d, 0xb8];
        want.extend([0; 12]);
        assert_eq!(out, want);
        assert_eq!(decode_inet(&out, true).unwrap(), net);
        let host = Inet {
            addr: "2001:db8::1".parse().unwrap(),
            bits: 32,
        };
        assert!(encode_inet(&mut out, &host, true).is_err());
    }

    #[test]
    fn inconsistent_headers_are_refused() {
        for bad in [
            &[4u8, 32, 0, 4, 1, 2, 3, 4][..], // family
            &[2, 33, 0, 4, 1, 2, 3, 4],       // bits
            &[2, 32, 2, 4, 1, 2, 3, 4],       // is_cidr byte
            &[2, 32, 0, 16, 1, 2, 3, 4],      // length vs family
            &[2, 32, 0, 4, 1, 2, 3],          // short address
            &[2, 32, 0, 4, 1, 2, 3, 4, 5],    // long address
            &[2, 32, 0],                      // short header
        ] {
            assert!(decode_inet(bad, false).is_err(), "{bad:?}");
        }
        assert!(encode_inet(&mut Vec::new(), &v4([1, 2, 3, 4], 33), false).is_err());
        assert!(!host_bits_set(&[10, 0, 0, 0], 8));
        assert!(host_bits_set(&[10, 128, 0, 0], 8));
        assert!(!host_bits_set(&[10, 128, 0, 0], 9));
        assert!(!host_bits_set(&[0, 0, 0, 0], 0));
    }

    #[test]
    fn parses_and_prints_text() {
        let a = Inet::parse("10.1.2.3/8").unwrap();
        assert_eq!((a.addr.to_string(), a.bits), ("10.1.2.3".into(), 8));
        assert_eq!(a.to_string(), "10.1.2.3/8");
        let h = Inet::parse("::1").unwrap();
        assert_eq!(h.bits, 128);
        assert!(h.is_host());
        assert_eq!(h.to_string(), "::1");
        for bad in ["", "10.0.0.0/33", "10.0.0/8", "1.2.3.4/", "1.2.3.4/+8", "x"] {
            assert_eq!(Inet::parse(bad), None, "{bad}");
        }
    }
}
