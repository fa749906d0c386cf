//! Kube-OVN's `pkg/util` address helpers (`CheckProtocol`, `CheckCidrs`,
//! `CIDRContainIP`, `CIDROverlap`, `SplitStringIP`, `IPToString`,
//! `ContainsUppercase`), over the Go parsers of [`go_net`](crate::upstream::go_net),
//! with their quirks kept: the messages that quote their results must match.

use crate::upstream::go_net::{format_ip, parse_cidr, parse_ip};
use crate::upstream::go_strconv::is_upper;
use ipnet::IpNet;
use std::net::IpAddr;

/// An address as upstream's `checkIPConflict` reads an annotation item or
/// an IP object's address: `a/n` by `ParseCIDR` (untrimmed), anything else
/// by `ParseIP` of the trimmed text.
pub fn parse_item(item: &str) -> Option<IpAddr> {
    if item.contains('/') {
        parse_cidr(item).map(|c| c.ip)
    } else {
        parse_ip(item.trim())
    }
}

/// An address family as Kube-OVN's `util.CheckProtocol` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// `IPv4`
    V4,
    /// `IPv6`
    V6,
    /// `Dual`: one IPv4 and one IPv6 part.
    Dual,
}

/// Kube-OVN's `util.CheckProtocol`: the family of `a`, `a/n` or `a,b`;
/// `None` for anything it calls `""` (empty, unparsable, 3+ parts).
pub fn check_protocol(address: &str) -> Option<Protocol> {
    if address.is_empty() {
        return None;
    }
    let parts: Vec<&str> = address.split(',').collect();
    if parts.len() == 2 {
        let first = parse_ip(before_slash(parts[0]));
        let second = parse_ip(before_slash(parts[1]));
        return match (first, second) {
            (Some(IpAddr::V4(_)), Some(IpAddr::V6(_)))
            | (Some(IpAddr::V6(_)), Some(IpAddr::V4(_))) => Some(Protocol::Dual),
            _ => None,
        };
    }
    parse_ip(before_slash(address)).map(|ip| family(&ip))
}

fn before_slash(s: &str) -> &str {
    s.split('/').next().unwrap_or(s)
}

impl Protocol {
    /// Kube-OVN's name for the family: `IPv4`, `IPv6` or `Dual`.
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::V4 => "IPv4",
            Protocol::V6 => "IPv6",
            Protocol::Dual => "Dual",
        }
    }
}

/// The family of a parsed address.
pub fn family(ip: &IpAddr) -> Protocol {
    match ip {
        IpAddr::V4(_) => Protocol::V4,
        IpAddr::V6(_) => Protocol::V6,
    }
}

/// Kube-OVN's `util.CheckCidrs`: every comma part parses as a CIDR.
pub fn check_cidrs(cidrs: &str) -> bool {
    cidrs.split(',').all(|c| parse_cidr(c).is_some())
}

/// Kube-OVN's `util.CIDRContainIP(cidrs, ips)`, with its quirks: with a single
/// CIDR every ip must be of its family; otherwise ips of a family the CIDRs
/// lack are ignored.
pub fn cidr_contain_ip(cidrs: &str, ips: &str) -> bool {
    if cidrs.is_empty() {
        return false;
    }
    let cidr_list: Vec<&str> = cidrs.split(',').collect();
    if cidr_list.len() == 1
        && ips
            .split(',')
            .any(|ip| check_protocol(cidrs) != check_protocol(ip))
    {
        return false;
    }
    for cidr in cidr_list {
        let Some(parsed) = parse_cidr(cidr) else {
            return false;
        };
        let cidr_protocol = check_protocol(cidr);
        for ip in ips.split(',') {
            if cidr_protocol != check_protocol(ip) {
                continue;
            }
            match parse_ip(ip) {
                Some(addr) if parsed.net.contains(&addr) => {}
                _ => return false,
            }
        }
    }
    true
}

/// Kube-OVN's `util.CIDROverlap(a, b)`: whether any pair of same-family
/// blocks of `a` and `b` overlap. Two CIDR blocks overlap exactly when one
/// contains the other's network, so this is symmetric; as upstream, a
/// same-family pair that does not parse makes the whole answer `false`.
///
/// ```
/// use kube_ovn_policy::upstream::kubeovn_util::cidr_overlap;
/// assert!(cidr_overlap("10.16.0.0/16", "10.16.10.0/24"));
/// assert!(cidr_overlap("10.1.0.0/24,fd00::/112", "fd00::/120"));
/// assert!(!cidr_overlap("10.16.0.0/24", "10.16.1.0/24"));
/// ```
pub fn cidr_overlap(a: &str, b: &str) -> bool {
    for block_a in a.split(',') {
        for block_b in b.split(',') {
            if check_protocol(block_a) != check_protocol(block_b) {
                continue;
            }
            let (Some(x), Some(y)) = (parse_cidr(block_a), parse_cidr(block_b)) else {
                return false;
            };
            if nets_overlap(&x.net, &y.net) {
                return true;
            }
        }
    }
    false
}

/// Whether two networks share an address (one contains the other).
pub fn nets_overlap(a: &IpNet, b: &IpNet) -> bool {
    a.contains(&b.network()) || b.contains(&a.network())
}

/// Kube-OVN's `util.IP2BigInt`: the address as a number (4 bytes for IPv4,
/// 16 for IPv6), so an IPv4 address is below every non-mapped IPv6 one.
pub fn ip_number(ip: &IpAddr) -> u128 {
    match ip {
        IpAddr::V4(v4) => u128::from(u32::from(*v4)),
        IpAddr::V6(v6) => u128::from(*v6),
    }
}

/// Kube-OVN's `util.SplitStringIP`: the IPv4 and IPv6 parts of `a`, `b` or
/// `a,b` (empty when absent or when the value is not one of those forms).
pub fn split_string_ip(value: &str) -> (&str, &str) {
    match check_protocol(value) {
        Some(Protocol::Dual) => {
            let (mut v4, mut v6) = ("", "");
            for part in value.split(',') {
                if check_protocol(part) == Some(Protocol::V4) {
                    v4 = part;
                } else {
                    v6 = part;
                }
            }
            (v4, v6)
        }
        Some(Protocol::V4) => (value, ""),
        Some(Protocol::V6) => ("", value),
        None => ("", ""),
    }
}

/// Kube-OVN's `util.IPToString`: the address of `a` or `a/n` as Go prints
/// it, or `""` when neither parses.
pub fn ip_to_string(value: &str) -> String {
    parse_cidr(value)
        .map(|c| c.ip)
        .or_else(|| parse_ip(value))
        .map_or_else(String::new, |ip| format_ip(&ip))
}

/// Kube-OVN's `util.ContainsUppercase`: any rune for which Go's
/// `unicode.IsUpper` holds, i.e. of general category Lu (Unicode 15.0.0).
///
/// Not Rust's `char::is_uppercase`, which is the wider Uppercase property
/// (Lu plus Other_Uppercase: Roman numerals such as `Ⅱ` U+2161, circled
/// letters such as `Ⓐ` U+24B6) of a newer Unicode version.
///
/// ```
/// use kube_ovn_policy::upstream::kubeovn_util::contains_uppercase;
/// assert!(contains_uppercase("fd00::A"));
/// assert!(contains_uppercase("Ä"));
/// assert!(!contains_uppercase("fd00::a"));
/// assert!(!contains_uppercase("Ⅱ"));
/// ```
pub fn contains_uppercase(s: &str) -> bool {
    s.chars().any(is_upper)
}

/// Kube-OVN's `util.IPv6ToLabelValue`: `:` as `-`, padded with `0` where
/// the value would start or end with `-`.
pub fn ipv6_to_label_value(ip: &str) -> String {
    if ip.is_empty() {
        return String::new();
    }
    let mut v = ip.replace(':', "-");
    if v.starts_with('-') {
        v.insert(0, '0');
    }
    if v.ends_with('-') {
        v.push('0');
    }
    v
}

/// Upstream's `util.ValidateNetworkBroadcast(cidr, ip)`: for every block and
/// address of the same family, the block is not a host route, and the
/// address is not its network number nor (IPv4 only) its broadcast address.
/// Point-to-point blocks (`/31`, `/127`) have neither.
pub fn validate_network_broadcast(cidr: &str, ip: &str) -> Result<(), String> {
    if cidr.is_empty() || ip.is_empty() {
        return Ok(());
    }
    for block in cidr.split(',') {
        for address in ip.split(',') {
            if check_protocol(block) != check_protocol(address) {
                continue;
            }
            let Some(parsed) = parse_cidr(block) else {
                continue;
            };
            if parsed.is_host() {
                return Err(format!(
                    "subnet {block} is configured with /32 or /128 netmask"
                ));
            }
            if parsed.is_point_to_point() {
                continue;
            }
            let shown = ip_to_string(address);
            if check_protocol(block) == Some(Protocol::V4)
                && format_ip(&parsed.net.broadcast()) == shown
            {
                return Err(format!("{shown} is the broadcast ip in cidr {block}"));
            }
            if format_ip(&parsed.net.network()) == shown {
                return Err(format!("{shown} is the network number ip in cidr {block}"));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_protocol_follows_kube_ovn() {
        let cases: &[(&str, Option<Protocol>)] = &[
            ("", None),
            ("10.0.0.1", Some(Protocol::V4)),
            ("10.0.0.0/24", Some(Protocol::V4)),
            ("fd00::1", Some(Protocol::V6)),
            ("10.0.0.1,fd00::1", Some(Protocol::Dual)),
            ("fd00::/64,10.0.0.0/8", Some(Protocol::Dual)),
            ("10.0.0.1,10.0.0.2", None),
            ("10.0.0.1,fd00::1,fd00::2", None),
            ("::ffff:1.2.3.4", Some(Protocol::V4)),
            ("x", None),
        ];
        for (input, want) in cases {
            assert_eq!(check_protocol(input), *want, "check_protocol({input:?})");
        }
    }

    #[test]
    fn cidr_contain_ip_follows_kube_ovn() {
        let cases: &[(&str, &str, bool)] = &[
            ("", "10.0.0.1", false),
            ("10.16.0.0/16", "10.16.0.15", true),
            ("10.16.0.0/16", "10.17.0.15", false),
            ("10.16.0.0/16", "fd00::1", false),
            ("10.16.0.0/16", "10.16.0.15/24", false),
            ("10.16.0/16", "10.16.0.15", false),
            ("10.16.0.0/16,fd00::/64", "fd00::1", true),
            ("10.16.0.0/16,fd00::/64", "10.16.0.1,fd00::1", true),
            ("10.16.0.0/16,fd00::/64", "10.17.0.1", false),
            ("10.16.0.0/16,fd00::/64", "junk", true),
        ];
        for (cidr, ip, want) in cases {
            assert_eq!(
                cidr_contain_ip(cidr, ip),
                *want,
                "cidr_contain_ip({cidr:?}, {ip:?})"
            );
        }
    }

    /// Upper case is Go's `unicode.IsUpper` (Lu), not Rust's wider Uppercase.
    #[test]
    fn contains_uppercase_follows_kube_ovn() {
        assert!(contains_uppercase("fd00::1:Ä"));
        assert!(!contains_uppercase("10.0.0.\u{2161}"));
    }

    /// Every CIDR reader shares the parser: Kube-OVN's CheckCidrs,
    /// CIDROverlap and CIDRContainIP read a zero-padded block as Go does.
    #[test]
    fn cidr_readers_read_a_zero_padded_prefix_as_go() {
        assert!(check_cidrs("10.0.0.0/000000016,fd00::/0064"));
        assert!(cidr_overlap("10.0.0.0/000000016", "10.0.5.0/24"));
        assert!(!cidr_overlap("10.0.0.0/000000024", "10.0.5.0/24"));
        assert!(cidr_contain_ip("10.16.0.0/0016", "10.16.200.1"));
        assert_eq!(ip_to_string("10.16.0.15/00024"), "10.16.0.15");
    }

    mod properties {
        use super::super::*;
        use proptest::prelude::*;
        use std::collections::BTreeSet;
        use std::net::{Ipv4Addr, Ipv6Addr};

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(4000))]

            #[test]
            fn overlap_is_symmetric_and_agrees_with_brute_force(
                a in (any::<u8>(), 26u8..=32), b in (any::<u8>(), 26u8..=32),
                v6 in any::<bool>(),
            ) {
                // Blocks inside one /26 (64 addresses), host bits kept as written.
                let (text, addresses): (Vec<String>, Vec<BTreeSet<u32>>) = [a, b]
                    .iter()
                    .map(|&(host, prefix)| {
                        let host = u32::from(host % 64);
                        let size = 1u32 << (32 - prefix);
                        let first = host & !(size - 1);
                        let text = if v6 {
                            format!("{}/{}", Ipv6Addr::from(0xfd00_u128 << 112 | u128::from(host)), u32::from(prefix) + 96)
                        } else {
                            format!("{}/{prefix}", Ipv4Addr::from(0x0a00_0000 | host))
                        };
                        (text, (first..first + size).collect())
                    })
                    .unzip();
                let brute = !addresses[0].is_disjoint(&addresses[1]);
                prop_assert_eq!(cidr_overlap(&text[0], &text[1]), brute, "{} {}", text[0], text[1]);
                prop_assert_eq!(cidr_overlap(&text[1], &text[0]), brute);
                // Another family never overlaps; a dual-stack pair overlaps per family.
                prop_assert!(!cidr_overlap(&text[0], "fe00::/7,11.0.0.0/8"));
                prop_assert_eq!(cidr_overlap(&format!("192.168.0.0/16,{}", text[0]), &text[1]), brute);
            }
        }
    }
}
