//! Address parsing and printing with Go `net` semantics.
//!
//! Kube-OVN's webhook parses with Go's `net.ParseIP`, `net.ParseCIDR` and
//! `net.ParseMAC` and prints with `net.IP.String()`. The messages we must
//! reproduce byte for byte depend on those exact rules (leading zeros, zones,
//! IPv4-mapped IPv6, RFC 5952 printing), so they are ported here rather than
//! borrowed from `std`, whose parser and printer differ at the edges.
//!
//! Everything else in the policy works on the values returned here.

use ipnet::{IpNet, Ipv4Net, Ipv6Net};
use std::fmt::Write as _;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// An address as Go's `netip.ParseAddr` reads it: 16 bytes, and whether it
/// was written as dotted-quad IPv4 (`Is4`), which decides a CIDR's bit length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct RawAddr {
    bytes: [u8; 16],
    written_as_v4: bool,
}

impl RawAddr {
    /// Go's `IP.To4() != nil`: IPv4, or IPv4-mapped IPv6.
    fn canonical(&self) -> IpAddr {
        let v6 = Ipv6Addr::from(self.bytes);
        match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(v6),
        }
    }
}

/// Go's `net.ParseIP`: `Some` for a valid IPv4 or IPv6 address without a zone.
///
/// IPv4-mapped IPv6 (`::ffff:1.2.3.4`) comes back as IPv4, as Go's `To4()`
/// treats it everywhere.
///
/// ```
/// use kube_ovn_policy::upstream::go_net::parse_ip;
/// assert!(parse_ip("10.16.0.15").is_some());
/// assert!(parse_ip("10.244.000.0").is_none());
/// assert_eq!(parse_ip("::ffff:10.0.0.1"), parse_ip("10.0.0.1"));
/// ```
pub fn parse_ip(s: &str) -> Option<IpAddr> {
    parse_raw(s).map(|raw| raw.canonical())
}

/// What Go's `net.ParseCIDR` returns: the address as written, and its network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GoCidr {
    /// The address before the `/`, host bits kept (`10.1.1.32` of `10.1.1.32/24`).
    pub ip: IpAddr,
    /// The masked network, in the family Go's `IPNet.Contains` compares in.
    pub net: IpNet,
    /// The prefix length as written (Go's `Mask.Size()` ones).
    pub prefix: u8,
    /// The mask length: 32 for dotted IPv4, 128 otherwise (Go's `Mask.Size()` bits).
    pub bits: u8,
}

impl GoCidr {
    /// A host route (`/32`, `/128`): Go's `ones == bits`.
    pub fn is_host(&self) -> bool {
        self.prefix == self.bits
    }

    /// A point-to-point block (`/31`, `/127`): Go's `ones + 1 == bits`.
    pub fn is_point_to_point(&self) -> bool {
        self.prefix + 1 == self.bits
    }
}

/// Go's `net.ParseCIDR` (src/net/ip.go, netip-based): the text is cut at the
/// first `/`; the address is `netip.ParseAddr` without a zone; the prefix is
/// read by `dtoi` (see `go_dtoi`: digits only, leading zeros in any number)
/// and must be within the address length (32 for dotted IPv4, 128
/// otherwise); host bits are allowed. Every CIDR the policy reads goes
/// through here, so `10.0.0.0/000000016` is the same block everywhere.
///
/// ```
/// use kube_ovn_policy::upstream::go_net::parse_cidr;
/// let c = parse_cidr("10.1.1.32/24").unwrap();
/// assert_eq!(c.net.to_string(), "10.1.1.0/24");
/// assert_eq!(parse_cidr("10.0.0.0/000000016").unwrap().prefix, 16);
/// assert!(parse_cidr("10.0.0.0/33").is_none());
/// assert!(parse_cidr("10.0.0.0/+16").is_none());
/// ```
pub fn parse_cidr(s: &str) -> Option<GoCidr> {
    let (addr, mask) = s.split_once('/')?;
    let raw = parse_raw(addr)?;
    let prefix = go_dtoi(mask)?;
    let bits = if raw.written_as_v4 { 32 } else { 128 };
    if prefix > bits {
        return None;
    }
    let ip = raw.canonical();
    let net = match ip {
        IpAddr::V4(v4) if raw.written_as_v4 => IpNet::V4(Ipv4Net::new(v4, prefix as u8).ok()?),
        // An IPv4-mapped address with a 128-bit mask: Go compares it as IPv4
        // when the mask keeps the ::ffff: prefix, and as IPv6 otherwise.
        IpAddr::V4(v4) if prefix >= 96 => IpNet::V4(Ipv4Net::new(v4, (prefix - 96) as u8).ok()?),
        _ => IpNet::V6(Ipv6Net::new(Ipv6Addr::from(raw.bytes), prefix as u8).ok()?),
    }
    .trunc();
    Some(GoCidr {
        ip,
        net,
        prefix: prefix as u8,
        bits: bits as u8,
    })
}

/// Go's `dtoi` (src/net/parse.go) as `ParseCIDR` (src/net/ip.go) calls it,
/// with `ParseCIDR`'s `i != len(mask)` check folded in: the whole text is a
/// run of ASCII digits, at least one, whose value stays below `big`
/// (0xFFFFFF). Leading zeros are allowed in any number (`000000024` is 24);
/// a sign, a space or any other byte is not.
fn go_dtoi(s: &str) -> Option<u32> {
    /// Go's `big`: "bigger than we need, not too big to worry about overflow".
    const BIG: u32 = 0xFF_FFFF;
    if s.is_empty() {
        return None;
    }
    let mut n = 0u32;
    for b in s.bytes() {
        if !b.is_ascii_digit() {
            return None;
        }
        n = n * 10 + u32::from(b - b'0');
        if n >= BIG {
            return None;
        }
    }
    Some(n)
}

/// Go's `net.IP.String()`: dotted quad for IPv4 (and mapped IPv6), RFC 5952
/// for IPv6 (lower case, the longest run of two or more zero groups
/// compressed, the first one on a tie).
///
/// ```
/// use kube_ovn_policy::upstream::go_net::{format_ip, parse_ip};
/// assert_eq!(format_ip(&parse_ip("fd00:10:16:0:0::20").unwrap()), "fd00:10:16::20");
/// assert_eq!(format_ip(&parse_ip("2001:DB8:0:1:0:0:0:1").unwrap()), "2001:db8:0:1::1");
/// ```
pub fn format_ip(ip: &IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return v4.to_string();
            }
            format_v6(v6)
        }
    }
}

fn format_v6(v6: &Ipv6Addr) -> String {
    let groups = v6.segments();
    // Longest run of zero groups (length >= 2), first on a tie.
    let (mut best_start, mut best_len) = (usize::MAX, 0usize);
    let mut i = 0;
    while i < 8 {
        if groups[i] == 0 {
            let start = i;
            while i < 8 && groups[i] == 0 {
                i += 1;
            }
            if i - start > best_len {
                best_start = start;
                best_len = i - start;
            }
        } else {
            i += 1;
        }
    }
    if best_len < 2 {
        best_start = usize::MAX;
    }
    let mut out = String::with_capacity(39);
    let mut i = 0;
    while i < 8 {
        if i == best_start {
            out.push_str("::");
            i += best_len;
            continue;
        }
        if i > 0 && !out.ends_with(':') {
            out.push(':');
        }
        let _ = write!(out, "{:x}", groups[i]);
        i += 1;
    }
    out
}

/// Go's `netip.ParseAddr` without zones (which `net.ParseIP` refuses).
fn parse_raw(s: &str) -> Option<RawAddr> {
    for b in s.bytes() {
        match b {
            b'.' => {
                let v4 = parse_v4_fields(s.as_bytes())?;
                return Some(RawAddr {
                    bytes: Ipv4Addr::from(v4).to_ipv6_mapped().octets(),
                    written_as_v4: true,
                });
            }
            b':' => return parse_v6(s.as_bytes()),
            b'%' => return None,
            _ => {}
        }
    }
    None
}

/// Go's `parseIPv4Fields`: four decimal fields, no leading zeros, each <= 255.
fn parse_v4_fields(s: &[u8]) -> Option<[u8; 4]> {
    let mut fields = [0u8; 4];
    let (mut val, mut pos, mut digits) = (0u32, 0usize, 0usize);
    for (i, &c) in s.iter().enumerate() {
        if c.is_ascii_digit() {
            if digits == 1 && val == 0 {
                return None; // leading zero
            }
            val = val * 10 + u32::from(c - b'0');
            digits += 1;
            if val > 255 {
                return None;
            }
        } else if c == b'.' {
            if i == 0 || i == s.len() - 1 || s[i - 1] == b'.' || pos == 3 {
                return None;
            }
            fields[pos] = val as u8;
            pos += 1;
            val = 0;
            digits = 0;
        } else {
            return None;
        }
    }
    if pos < 3 {
        return None;
    }
    fields[3] = val as u8;
    Some(fields)
}

/// Go's `parseIPv6` (zones refused).
fn parse_v6(input: &[u8]) -> Option<RawAddr> {
    if input.contains(&b'%') {
        return None;
    }
    let mut ip = [0u8; 16];
    let mut ellipsis: Option<usize> = None;
    let mut s = input;
    if s.len() >= 2 && s[0] == b':' && s[1] == b':' {
        ellipsis = Some(0);
        s = &s[2..];
        if s.is_empty() {
            return Some(RawAddr {
                bytes: ip,
                written_as_v4: false,
            });
        }
    }
    let mut i = 0usize;
    while i < 16 {
        let mut off = 0usize;
        let mut acc = 0u32;
        while off < s.len() {
            let digit = match s[off] {
                c @ b'0'..=b'9' => c - b'0',
                c @ b'a'..=b'f' => c - b'a' + 10,
                c @ b'A'..=b'F' => c - b'A' + 10,
                _ => break,
            };
            acc = (acc << 4) + u32::from(digit);
            if off > 3 || acc > 0xffff {
                return None;
            }
            off += 1;
        }
        if off == 0 {
            return None;
        }
        if off < s.len() && s[off] == b'.' {
            // Trailing embedded IPv4: must fill the last 32 bits.
            if (ellipsis.is_none() && i != 12) || i + 4 > 16 {
                return None;
            }
            let v4 = parse_v4_fields(s)?;
            ip[i..i + 4].copy_from_slice(&v4);
            s = &[];
            i += 4;
            break;
        }
        ip[i] = (acc >> 8) as u8;
        ip[i + 1] = acc as u8;
        i += 2;
        s = &s[off..];
        if s.is_empty() {
            break;
        }
        if s[0] != b':' || s.len() == 1 {
            return None;
        }
        s = &s[1..];
        if s[0] == b':' {
            if ellipsis.is_some() {
                return None;
            }
            ellipsis = Some(i);
            s = &s[1..];
            if s.is_empty() {
                break;
            }
        }
    }
    if !s.is_empty() {
        return None;
    }
    if i < 16 {
        let e = ellipsis?;
        let n = 16 - i;
        for j in (e..i).rev() {
            ip[j + n] = ip[j];
        }
        ip[e..e + n].fill(0);
    } else if ellipsis.is_some() {
        return None; // "::" must stand for at least one group
    }
    Some(RawAddr {
        bytes: ip,
        written_as_v4: false,
    })
}

/// Go's `net.ParseMAC`: 6-, 8- or 20-byte addresses as `xx:xx:…`,
/// `xx-xx-…` or `xxxx.xxxx.…`, hex digits of either case.
pub fn is_valid_mac(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 14 {
        return false;
    }
    let hex2 = |x: &[u8]| x.len() >= 2 && x[0].is_ascii_hexdigit() && x[1].is_ascii_hexdigit();
    if b[2] == b':' || b[2] == b'-' {
        if !(b.len() + 1).is_multiple_of(3) {
            return false;
        }
        let n = (b.len() + 1) / 3;
        if n != 6 && n != 8 && n != 20 {
            return false;
        }
        (0..n).all(|i| {
            let x = &b[i * 3..];
            hex2(x) && (x.len() == 2 || x[2] == b[2])
        })
    } else if b[4] == b'.' {
        if !(b.len() + 1).is_multiple_of(5) {
            return false;
        }
        let n = 2 * (b.len() + 1) / 5;
        if n != 6 && n != 8 && n != 20 {
            return false;
        }
        (0..n / 2).all(|i| {
            let x = &b[i * 5..];
            hex2(x) && hex2(&x[2..]) && (x.len() == 4 || x[4] == b'.')
        })
    } else {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_ip_follows_go() {
        let cases: &[(&str, Option<&str>)] = &[
            ("10.16.0.15", Some("10.16.0.15")),
            ("0.0.0.0", Some("0.0.0.0")),
            ("255.255.255.255", Some("255.255.255.255")),
            ("10.244.000.0", None),
            ("01.2.3.4", None),
            ("1.2.3.256", None),
            ("1.2.3", None),
            ("1.2.3.4.5", None),
            ("1..2.3", None),
            (".1.2.3", None),
            ("1.2.3.", None),
            (" 10.0.0.1", None),
            ("10.0.0.1 ", None),
            ("10.0.0.1\n", None),
            ("", None),
            ("abc", None),
            ("::", Some("::")),
            ("::1", Some("::1")),
            ("fd00:10:16:0:0::20", Some("fd00:10:16::20")),
            ("FD00:10:16::5", Some("fd00:10:16::5")),
            ("fd00::1%eth0", None),
            ("fd00::1%", None),
            ("%eth0", None),
            ("::ffff:10.0.0.1", Some("10.0.0.1")),
            ("::ffff:010.0.0.1", None),
            ("::10.0.0.1", Some("::a00:1")),
            ("1:2:3:4:5:6:1.2.3.4", Some("1:2:3:4:5:6:102:304")),
            ("1:2:3:4:5:1.2.3.4", None),
            ("1:2:3:4:5:6:7:1.2.3.4", None),
            ("1:2:3:4:5:6:7:8", Some("1:2:3:4:5:6:7:8")),
            ("1:2:3:4:5:6:7:8:9", None),
            ("1:2:3:4:5:6:7::", Some("1:2:3:4:5:6:7:0")),
            ("1:2:3:4::5:6:7:8", None),
            ("1::2::3", None),
            ("12345::", None),
            ("00001::", None),
            ("0001::", Some("1::")),
            (":1::", None),
            ("1:", None),
            ("1::g", None),
            ("2001:250:207::eff2::2", None),
            ("2001:db8:0:1:0:0:0:1", Some("2001:db8:0:1::1")),
            ("2001:0:0:1:0:0:0:1", Some("2001:0:0:1::1")),
            ("1:0:1:0:1:0:1:0", Some("1:0:1:0:1:0:1:0")),
            ("0:0:1:0:0:0:1:0", Some("0:0:1::1:0")),
        ];
        for (input, want) in cases {
            let got = parse_ip(input).map(|ip| format_ip(&ip));
            assert_eq!(got.as_deref(), *want, "parse_ip({input:?})");
        }
    }

    #[test]
    fn parse_cidr_follows_go() {
        let cases: &[(&str, Option<(&str, &str)>)] = &[
            ("10.1.1.32/24", Some(("10.1.1.32", "10.1.1.0/24"))),
            ("10.0.0.0/024", Some(("10.0.0.0", "10.0.0.0/24"))),
            ("10.0.0.0/33", None),
            ("10.0.0.0/", None),
            ("10.0.0.0/+8", None),
            ("10.0.0.0/8/9", None),
            ("10.0.0.0", None),
            ("10.244.000.0/16", None),
            (
                "fd00:10:244:0:2::/80",
                Some(("fd00:10:244:0:2::", "fd00:10:244:0:2::/80")),
            ),
            ("fd00::/129", None),
            ("::ffff:10.1.2.3/104", Some(("10.1.2.3", "10.0.0.0/8"))),
            ("::ffff:10.1.2.3/33", Some(("10.1.2.3", "::/33"))),
            ("192.168.1.0/invalid", None),
        ];
        for (input, want) in cases {
            let got = parse_cidr(input).map(|c| (format_ip(&c.ip), c.net.to_string()));
            let want = want.map(|(a, b)| (a.to_string(), b.to_string()));
            assert_eq!(got, want, "parse_cidr({input:?})");
        }
    }

    /// The prefix length is Go's `dtoi` (src/net/parse.go) with ParseCIDR's
    /// `i != len(mask)` and `n > BitLen()` checks (src/net/ip.go).
    #[test]
    fn cidr_prefix_is_read_as_go_dtoi() {
        let many_zeros = format!("10.0.0.0/{}8", "0".repeat(100));
        let cases: &[(&str, Option<u8>)] = &[
            // Go: net.ParseCIDR("10.0.0.0/024") = 10.0.0.0/24
            ("10.0.0.0/024", Some(24)),
            // Go: net.ParseCIDR("10.0.0.0/000000024") = 10.0.0.0/24
            ("10.0.0.0/000000024", Some(24)),
            // Go: net.ParseCIDR("10.0.0.0/000000016") = 10.0.0.0/16
            ("10.0.0.0/000000016", Some(16)),
            // Go: leading zeros never reach dtoi's `big`, in any number.
            (&many_zeros, Some(8)),
            ("10.0.0.0/0", Some(0)),
            ("10.0.0.0/00", Some(0)),
            ("10.0.0.0/032", Some(32)),
            ("fd00::/0000064", Some(64)),
            ("fd00::/00128", Some(128)),
            // Go: "invalid CIDR address" for each of these.
            ("10.0.0.0/0033", None),
            ("fd00::/000129", None),
            ("10.0.0.0/16777215", None),
            ("10.0.0.0/99999999999999999999", None),
            ("10.0.0.0/", None),
            ("10.0.0.0/+24", None),
            ("10.0.0.0/-0", None),
            ("10.0.0.0/ 24", None),
            ("10.0.0.0/24 ", None),
            ("10.0.0.0/24x", None),
            ("10.0.0.0/0x18", None),
            ("10.0.0.0/24/", None),
            ("10.0.0.0//24", None),
            ("10.0.0.0/\u{ff12}\u{ff14}", None),
            ("10.0.0.0/2\u{200b}4", None),
        ];
        for (input, want) in cases {
            assert_eq!(
                parse_cidr(input).map(|c| c.prefix),
                *want,
                "parse_cidr({input:?})"
            );
        }
    }

    #[test]
    fn mac_follows_go() {
        let cases: &[(&str, bool)] = &[
            ("00:00:00:54:17:2A", true),
            ("00-00-00-54-17-2a", true),
            ("0000.5417.2a2b", true),
            ("00:00:00:54:17:2A:00:01", true),
            ("00:00:54:17:2A", false),
            ("00:00:00:54:17-2A", false),
            ("00:00:00:54:17:2G", false),
            ("0000.5417.2a2b.", false),
            ("", false),
            ("00:00:00:54:17:2A:", false),
        ];
        for (input, want) in cases {
            assert_eq!(is_valid_mac(input), *want, "is_valid_mac({input:?})");
        }
    }

    mod properties {
        use super::super::*;
        use proptest::prelude::*;

        /// The reference for Go's `net.ParseIP` (§2.8): `std`'s parsers
        /// follow the same text rules (no leading zeros, no zones, embedded
        /// IPv4 only at the end), and Go reads IPv4-mapped IPv6 as IPv4.
        fn reference(s: &str) -> Option<IpAddr> {
            if let Ok(v4) = s.parse::<Ipv4Addr>() {
                return Some(IpAddr::V4(v4));
            }
            let v6 = s.parse::<Ipv6Addr>().ok()?;
            Some(match v6.to_ipv4_mapped() {
                Some(v4) => IpAddr::V4(v4),
                None => IpAddr::V6(v6),
            })
        }

        /// Text that looks like addresses, often is one, often almost.
        fn address_text() -> impl Strategy<Value = String> {
            prop_oneof![
                "[0-9]{1,4}(\\.[0-9]{1,4}){0,4}",
                "[0-9a-fA-F]{0,5}(:{1,2}[0-9a-fA-F]{0,5}){0,8}",
                "[0-9a-f]{0,4}(:[0-9a-f]{0,4}){0,6}:[0-9]{1,3}(\\.[0-9]{1,3}){3}",
                "::ffff:[0-9]{1,3}(\\.[0-9]{1,3}){3}",
                "[0-9a-fA-F:.%/ g-]{0,20}",
                any::<[u8; 4]>().prop_map(|o| Ipv4Addr::from(o).to_string()),
                any::<[u16; 8]>().prop_map(|g| Ipv6Addr::from(g).to_string()),
            ]
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(4000))]

            #[test]
            fn parse_ip_agrees_with_the_reference(s in address_text()) {
                prop_assert_eq!(parse_ip(&s), reference(&s), "{:?}", s);
            }

            #[test]
            fn printing_is_rfc5952_and_round_trips(groups in any::<[u16; 8]>(), zeros in any::<u8>()) {
                // Runs of zero groups are what RFC 5952 is about: make them common.
                let mut groups = groups;
                for (i, g) in groups.iter_mut().enumerate() {
                    if zeros & (1 << i) != 0 {
                        *g = 0;
                    }
                }
                let ip = IpAddr::V6(Ipv6Addr::from(groups));
                let text = format_ip(&ip);
                prop_assert_eq!(parse_ip(&text), reference(&text));
                prop_assert_eq!(parse_ip(&text).map(|p| format_ip(&p)), Some(text.clone()));
                prop_assert_eq!(text.to_lowercase(), text.clone());
                if let IpAddr::V6(v6) = ip
                    && v6.to_ipv4_mapped().is_none()
                {
                    // std prints RFC 5952 for everything but IPv4-mapped addresses.
                    prop_assert_eq!(&text, &v6.to_string());
                    prop_assert_eq!(parse_ip(&text), Some(ip));
                }
            }

            #[test]
            fn zero_padded_prefix_is_the_same_prefix(
                host in any::<[u8; 4]>(), prefix in 0u32..=140, zeros in 0usize..40, v6 in any::<bool>(),
            ) {
                let addr = if v6 {
                    Ipv6Addr::from(0xfd00_u128 << 112 | u128::from(u32::from_be_bytes(host))).to_string()
                } else {
                    Ipv4Addr::from(host).to_string()
                };
                let plain = parse_cidr(&format!("{addr}/{prefix}"));
                let padded = parse_cidr(&format!("{addr}/{}{prefix}", "0".repeat(zeros)));
                prop_assert_eq!(padded, plain);
                prop_assert_eq!(plain.is_some(), prefix <= if v6 { 128 } else { 32 });
            }

            #[test]
            fn prefix_with_anything_but_digits_is_refused(
                prefix in 0u32..=32, junk in "[^0-9]", at in 0usize..4,
            ) {
                let mut text = prefix.to_string();
                let at = at.min(text.len());
                text.insert_str(at, &junk);
                prop_assert_eq!(parse_cidr(&format!("10.0.0.0/{text}")), None);
            }

            #[test]
            fn ipv4_prints_and_round_trips(octets in any::<[u8; 4]>()) {
                let ip = IpAddr::V4(Ipv4Addr::from(octets));
                prop_assert_eq!(parse_ip(&format_ip(&ip)), Some(ip));
            }
        }
    }
}
