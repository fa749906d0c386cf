//! Kube-OVN's IPAM address ranges (`pkg/ipam` ip.go, ip_range.go,
//! ip_range_list.go, and the `pkg/util` helpers that feed them, at
//! 1533681d7a6b): how kube-ovn-controller reads an IPPool's `spec.ips` and a
//! Subnet's `excludeIps`, and how it prints a set of addresses.
//!
//! Ranges are kept as numbers, never expanded: a `/8` or an IPv6 `/64` is
//! one range. Every address lives in one 128-bit space where IPv4
//! `a.b.c.d` is `::ffff:a.b.c.d`, which is exactly how `IP.cmp` orders
//! addresses (ip.go:52: two IPv4 compare as 4 bytes, anything else as 16),
//! so an IPv4-mapped IPv6 address is the IPv4 address, as upstream treats it.

use crate::upstream::go_net::{GoCidr, format_ip, parse_cidr, parse_ip};
use crate::upstream::go_strconv::go_quote;
use crate::upstream::kubeovn_util::{Protocol, check_protocol, cidr_contain_ip};
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The IPv4-mapped prefix `::ffff:0:0/96`, as a number shifted right by 32.
const MAPPED: u128 = 0xffff;

/// An address as `pkg/ipam`'s `IP` orders and prints it (ip.go:11).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Addr(pub u128);

impl Addr {
    /// The address of a parsed IP (IPv4 in the mapped range).
    pub fn from_ip(ip: IpAddr) -> Self {
        match ip {
            IpAddr::V4(v4) => Addr((MAPPED << 32) | u128::from(u32::from(v4))),
            IpAddr::V6(v6) => Addr(u128::from(v6)),
        }
    }

    /// Whether `IP.To4()` is non-nil: IPv4, or IPv4-mapped IPv6.
    pub fn is_v4(self) -> bool {
        self.0 >> 32 == MAPPED
    }

    /// The address as a std value (IPv4 when mapped).
    pub fn to_ip(self) -> IpAddr {
        if self.is_v4() {
            IpAddr::V4(Ipv4Addr::from(self.0 as u32))
        } else {
            IpAddr::V6(Ipv6Addr::from(self.0))
        }
    }
}

impl fmt::Display for Addr {
    /// Go's `net.IP.String()` (ip.go:98 `IP.String`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_ip(&self.to_ip()))
    }
}

/// An inclusive range of addresses (ip_range.go:13 `IPRange`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Range {
    /// The first address.
    pub start: Addr,
    /// The last address, not below `start`.
    pub end: Addr,
}

impl Range {
    /// The range of one address.
    pub fn single(a: Addr) -> Self {
        Range { start: a, end: a }
    }
}

impl fmt::Display for Range {
    /// ip_range.go:98 `IPRange.String`: `a` for one address, else `a-b`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.start == self.end {
            write!(f, "{}", self.start)
        } else {
            write!(f, "{}-{}", self.start, self.end)
        }
    }
}

/// A set of addresses as `IPRangeList` keeps it after `Merge`
/// (ip_range_list.go:16): ranges in ascending order, disjoint, and with
/// touching ranges joined.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RangeList {
    ranges: Vec<Range>,
}

impl RangeList {
    /// The set these ranges cover, in any order, overlapping or not.
    pub fn from_ranges(mut ranges: Vec<Range>) -> Self {
        ranges.sort_unstable();
        let mut out: Vec<Range> = Vec::with_capacity(ranges.len());
        for r in ranges {
            match out.last_mut() {
                Some(last) if last.end.0 == u128::MAX || r.start.0 <= last.end.0 + 1 => {
                    last.end = last.end.max(r.end);
                }
                _ => out.push(r),
            }
        }
        RangeList { ranges: out }
    }

    /// The ranges, ascending.
    pub fn ranges(&self) -> &[Range] {
        &self.ranges
    }

    /// Whether no address is in the set (`Len() == 0`).
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Whether the set holds the address.
    pub fn contains(&self, a: Addr) -> bool {
        self.ranges
            .binary_search_by(|r| {
                if r.end < a {
                    std::cmp::Ordering::Less
                } else if r.start > a {
                    std::cmp::Ordering::Greater
                } else {
                    std::cmp::Ordering::Equal
                }
            })
            .is_ok()
    }

    /// How many addresses the set holds; `None` past `u128::MAX` (the whole
    /// IPv6 space).
    pub fn address_count(&self) -> Option<u128> {
        self.ranges.iter().try_fold(0u128, |n, r| {
            (r.end.0 - r.start.0)
                .checked_add(1)
                .and_then(|size| n.checked_add(size))
        })
    }

    /// The addresses in both sets (ip_range_list.go:310 `Intersect`, which
    /// computes the same set with `Merge` and `Separate`).
    pub fn intersect(&self, other: &RangeList) -> RangeList {
        let (a, b) = (&self.ranges, &other.ranges);
        let (mut i, mut j) = (0, 0);
        let mut out = Vec::new();
        while let (Some(x), Some(y)) = (a.get(i), b.get(j)) {
            let start = x.start.max(y.start);
            let end = x.end.min(y.end);
            if start <= end {
                out.push(Range { start, end });
            }
            if x.end < y.end {
                i += 1;
            } else {
                j += 1;
            }
        }
        RangeList::from_ranges(out)
    }

    /// The addresses of `self` not in `other` (`Separate`).
    pub fn separate(&self, other: &RangeList) -> RangeList {
        let mut out = Vec::new();
        let mut j = 0;
        for r in &self.ranges {
            let mut start = r.start.0;
            let mut done = false;
            while let Some(cut) = other.ranges.get(j) {
                if cut.end.0 < start {
                    j += 1;
                    continue;
                }
                if cut.start.0 > r.end.0 {
                    break;
                }
                if cut.start.0 > start {
                    out.push(Range {
                        start: Addr(start),
                        end: Addr(cut.start.0 - 1),
                    });
                }
                if cut.end.0 >= r.end.0 {
                    done = true;
                    break;
                }
                start = cut.end.0 + 1;
                j += 1;
            }
            if !done {
                out.push(Range {
                    start: Addr(start),
                    end: r.end,
                });
            }
        }
        RangeList::from_ranges(out)
    }
}

impl fmt::Display for RangeList {
    /// ip_range_list.go:315 `IPRangeList.String`: ranges joined by `,`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.ranges.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{r}")?;
        }
        Ok(())
    }
}

/// ip.go:13 `NewIP`: Go's `net.ParseIP`, the text untrimmed, else
/// `invalid IP address %q`.
///
/// ```
/// use kube_ovn_policy::upstream::kubeovn_ipam::new_ip;
/// assert_eq!(new_ip("FD00::A").unwrap().to_string(), "fd00::a");
/// assert_eq!(new_ip(" 10.0.0.1").unwrap_err(), r#"invalid IP address " 10.0.0.1""#);
/// ```
pub fn new_ip(s: &str) -> Result<Addr, String> {
    parse_ip(s)
        .map(Addr::from_ip)
        .ok_or_else(|| format!("invalid IP address {}", go_quote(s)))
}

/// ip_range.go:21 `NewIPRangeFromCIDR`: the masked network to its last
/// address, network and all-ones address included. Its quirk is kept: the
/// start is re-parsed from its text, so an IPv6 block whose network is
/// IPv4-mapped (`::ffff:10.0.0.0/120`) becomes a 4-byte address and only
/// the first 4 bytes of its 16-byte mask apply: the single address.
fn cidr_range(cidr: &GoCidr) -> Range {
    let host_bits = u32::from(cidr.bits.saturating_sub(cidr.prefix));
    let host_mask = if host_bits >= 128 {
        u128::MAX
    } else {
        (1u128 << host_bits) - 1
    };
    let start = Addr::from_ip(cidr.ip).0 & !host_mask;
    if cidr.bits == 128 && Addr(start).is_v4() {
        return Range::single(Addr(start));
    }
    Range {
        start: Addr(start),
        end: Addr(start | host_mask),
    }
}

/// One entry of ip_range_list.go:36 `NewIPRangeListFrom`, with its error
/// text: `a..b` (tested first; only the first two parts of the split are
/// read), else a CIDR (`invalid CIDR address: <s>`, Go's `ParseCIDR`
/// error), else one address.
///
/// ```
/// use kube_ovn_policy::upstream::kubeovn_ipam::parse_entry;
/// assert_eq!(parse_entry("10.0.0.5/24").unwrap().to_string(), "10.0.0.0-10.0.0.255");
/// assert_eq!(
///     parse_entry("10.0.0.5..10.0.0.1").unwrap_err(),
///     r#"invalid ip range "10.0.0.5..10.0.0.1": 10.0.0.5 is greater than 10.0.0.1"#
/// );
/// assert_eq!(parse_entry("10.0.0.0/33").unwrap_err(), "invalid CIDR address: 10.0.0.0/33");
/// ```
pub fn parse_entry(s: &str) -> Result<Range, String> {
    if s.contains("..") {
        let mut parts = s.split("..");
        let start = new_ip(parts.next().unwrap_or(""))?;
        let end = new_ip(parts.next().unwrap_or(""))?;
        if start > end {
            return Err(format!(
                "invalid ip range {}: {start} is greater than {end}",
                go_quote(s)
            ));
        }
        Ok(Range { start, end })
    } else if s.contains('/') {
        parse_cidr(s)
            .map(|c| cidr_range(&c))
            .ok_or_else(|| format!("invalid CIDR address: {s}"))
    } else {
        new_ip(s).map(Range::single)
    }
}

/// ip_range_list.go:36 `NewIPRangeListFrom`: every entry in order, the
/// first error returned as it is; the ranges merged.
pub fn new_ip_range_list_from<'a>(
    entries: impl IntoIterator<Item = &'a str>,
) -> Result<RangeList, String> {
    let ranges = entries
        .into_iter()
        .map(parse_entry)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(RangeList::from_ranges(ranges))
}

/// A set printed by [`RangeList`]'s `Display` (`IPRangeList.String`), read
/// back: `a` or `a-b` entries joined by `,`, the empty text the empty set.
/// This is how kube-ovn-controller writes a Subnet's
/// `status.v4usingIPrange` and `status.v6usingIPrange`
/// (`IPAM.GetSubnetIPRangeString`, ipam.go:502). `None` for any other text:
/// an entry that is no address (Go's `ParseIP`, untrimmed), or a range
/// whose end is below its start.
///
/// ```
/// use kube_ovn_policy::upstream::kubeovn_ipam::parse_range_list;
/// let list = parse_range_list("10.16.0.2-10.16.0.4,10.16.0.9").unwrap();
/// assert_eq!(list.address_count(), Some(4));
/// assert_eq!(list.to_string(), "10.16.0.2-10.16.0.4,10.16.0.9");
/// assert_eq!(parse_range_list("10.16.0.4-10.16.0.2"), None);
/// assert_eq!(parse_range_list("10.16.0.2..10.16.0.4"), None);
/// ```
pub fn parse_range_list(s: &str) -> Option<RangeList> {
    if s.is_empty() {
        return Some(RangeList::default());
    }
    let ranges = s
        .split(',')
        .map(|entry| {
            let (start, end) = entry.split_once('-').unwrap_or((entry, entry));
            let (start, end) = (new_ip(start).ok()?, new_ip(end).ok()?);
            (start <= end).then_some(Range { start, end })
        })
        .collect::<Option<Vec<_>>>()?;
    Some(RangeList::from_ranges(ranges))
}

/// pkg/util/net.go:325 `SplitIpsByProtocol`: an entry whose text before
/// its first `..` is IPv4 to `util.CheckProtocol` goes to the first list,
/// every other one (IPv6, and anything it cannot read) to the second.
pub fn split_ips_by_protocol<S: AsRef<str>>(ips: &[S]) -> (Vec<&str>, Vec<&str>) {
    ips.iter()
        .map(AsRef::as_ref)
        .partition(|ip| check_protocol(ip.split("..").next().unwrap_or("")) == Some(Protocol::V4))
}

/// The network address and the host mask of a block.
fn block_bounds(cidr: &GoCidr) -> (u128, u128, u32) {
    let host_bits = u32::from(cidr.net.max_prefix_len() - cidr.net.prefix_len());
    let host_mask = if host_bits >= 128 {
        u128::MAX
    } else {
        (1u128 << host_bits) - 1
    };
    (Addr::from_ip(cidr.net.network()).0, host_mask, host_bits)
}

/// pkg/util/net.go:111,126 `FirstIP`..`LastIP`: the addresses a subnet's
/// block hands out. Its network and all-ones address are left out (IPv6
/// too); a `/31` or `/127` gives both; a `/32` or `/128` gives none.
pub fn usable_range(cidr: &GoCidr) -> RangeList {
    let (net, host_mask, host_bits) = block_bounds(cidr);
    let range = match host_bits {
        0 => None,
        1 => Some((net, net | 1)),
        _ => Some((net + 1, (net | host_mask) - 1)),
    };
    RangeList::from_ranges(
        range
            .map(|(s, e)| Range {
                start: Addr(s),
                end: Addr(e),
            })
            .into_iter()
            .collect(),
    )
}

/// The subnet's reserved addresses as `ipam.NewSubnet` (subnet.go:46) reads
/// `excludeIps` through pkg/util/net.go:448 `ExpandExcludeIPs`: a range
/// `a..b` (exactly two parts of one family, `a <= b`) clipped to each
/// same-family block's `FirstIP`..`LastIP`; a single address kept when a
/// same-family block contains it and it is not that block's network or
/// all-ones address (compared as text, as upstream); anything else (CIDRs,
/// garbage) dropped.
pub fn reserved(exclude_ips: &[String], cidr_block: &str) -> RangeList {
    let blocks: Vec<(&str, GoCidr)> = cidr_block
        .split(',')
        .filter_map(|b| parse_cidr(b).map(|c| (b, c)))
        .collect();
    let mut out = Vec::new();
    for entry in exclude_ips {
        if entry.contains("..") {
            let parts: Vec<&str> = entry.split("..").collect();
            let [a, b] = parts.as_slice() else { continue };
            if check_protocol(a) != check_protocol(b) {
                continue;
            }
            let (Some(a), Some(b)) = (parse_ip(a), parse_ip(b)) else {
                continue;
            };
            let (a, b) = (Addr::from_ip(a), Addr::from_ip(b));
            if a > b {
                continue;
            }
            for (text, block) in &blocks {
                if check_protocol(text) != Some(family_of(a)) {
                    continue;
                }
                let window = usable_range(block);
                let clipped =
                    RangeList::from_ranges(vec![Range { start: a, end: b }]).intersect(&window);
                out.extend_from_slice(clipped.ranges());
            }
        } else {
            let Some(ip) = parse_ip(entry) else { continue };
            let ip = Addr::from_ip(ip);
            for (text, block) in &blocks {
                if check_protocol(text) != check_protocol(entry) {
                    continue;
                }
                let (net, host_mask, host_bits) = block_bounds(block);
                let (number, last) = if host_bits == 1 {
                    (String::new(), String::new())
                } else {
                    (Addr(net).to_string(), Addr(net | host_mask).to_string())
                };
                if cidr_contain_ip(text, entry) && *entry != number && *entry != last {
                    out.push(Range::single(ip));
                    break;
                }
            }
        }
    }
    RangeList::from_ranges(out)
}

/// The family of an address.
fn family_of(a: Addr) -> Protocol {
    if a.is_v4() {
        Protocol::V4
    } else {
        Protocol::V6
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(entries: &[&str]) -> RangeList {
        new_ip_range_list_from(entries.iter().copied()).expect("list")
    }

    #[test]
    fn entries_parse_as_new_ip_range_list_from() {
        let cases: &[(&str, Result<&str, &str>)] = &[
            ("10.16.0.1..10.16.0.5..garbage", Ok("10.16.0.1-10.16.0.5")),
            ("10.16.0.5/24", Ok("10.16.0.0-10.16.0.255")),
            ("FD00:10:16::A", Ok("fd00:10:16::a")),
            ("fd00::1/64", Ok("fd00::-fd00::ffff:ffff:ffff:ffff")),
            ("::ffff:10.0.0.0/120", Ok("10.0.0.0")),
            ("::ffff:10.16.0.7", Ok("10.16.0.7")),
            ("10.0.0.1..fd00::5", Ok("10.0.0.1-fd00::5")),
            (
                "10.16.0.0/24..10.16.1.0",
                Err(r#"invalid IP address "10.16.0.0/24""#),
            ),
            ("10.0.0.1...", Err(r#"invalid IP address ".""#)),
            ("..x", Err(r#"invalid IP address """#)),
            ("fe80::1%eth0", Err(r#"invalid IP address "fe80::1%eth0""#)),
            (
                "fd00::1..10.0.0.1",
                Err(r#"invalid ip range "fd00::1..10.0.0.1": fd00::1 is greater than 10.0.0.1"#),
            ),
            (
                "FD00::A..fd00::1",
                Err(r#"invalid ip range "FD00::A..fd00::1": fd00::a is greater than fd00::1"#),
            ),
            ("10.0.0.0/", Err("invalid CIDR address: 10.0.0.0/")),
            ("1.2.3.4/+8", Err("invalid CIDR address: 1.2.3.4/+8")),
            ("0.0.0.0/0", Ok("0.0.0.0-255.255.255.255")),
            ("::/0", Ok("::-ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff")),
        ];
        for (entry, want) in cases {
            let got = parse_entry(entry).map(|r| r.to_string());
            assert_eq!(got.as_deref().map_err(String::as_str), *want, "{entry}");
        }
    }

    #[test]
    fn lists_merge_touching_ranges_and_intersect_exactly() {
        assert_eq!(
            list(&["10.16.0.1..10.16.0.5", "10.16.0.6", "10.16.1.0/30"]).to_string(),
            "10.16.0.1-10.16.0.6,10.16.1.0-10.16.1.3"
        );
        let a = list(&["10.16.0.1", "10.16.0.5..10.16.0.9"]);
        let b = list(&["10.16.0.0/29"]);
        assert_eq!(a.intersect(&b).to_string(), "10.16.0.1,10.16.0.5-10.16.0.7");
        let touching = list(&["10.16.0.21..10.16.0.30"]);
        assert!(
            list(&["10.16.0.10..10.16.0.20"])
                .intersect(&touching)
                .is_empty()
        );
        let v6 = list(&["fd00:10:16::1..fd00:10:16::ff"]);
        let other = list(&["fd00:10:16::f0/124", "fd00:10:16::5"]);
        assert_eq!(
            other.intersect(&v6).to_string(),
            "fd00:10:16::5,fd00:10:16::f0-fd00:10:16::ff"
        );
        // The mixed-family range upstream accepts covers the IPv4 addresses above its start.
        let mixed = list(&["10.16.0.1..fd00::5"]);
        assert_eq!(
            mixed.intersect(&list(&["10.16.0.200"])).to_string(),
            "10.16.0.200"
        );
        assert_eq!(
            list(&[
                "10.16.0.0..10.16.0.10",
                "10.16.0.100",
                "10.16.0.250..10.16.1.3"
            ])
            .separate(&list(&["10.16.0.1..10.16.0.254"]))
            .to_string(),
            "10.16.0.0,10.16.0.255-10.16.1.3"
        );
    }

    #[test]
    fn using_ranges_read_back_as_the_controller_prints_them() {
        let cases: &[(&str, Option<(&str, u128)>)] = &[
            ("", Some(("", 0))),
            ("10.16.0.2", Some(("10.16.0.2", 1))),
            (
                "10.16.0.2-10.16.0.4,10.16.0.9",
                Some(("10.16.0.2-10.16.0.4,10.16.0.9", 4)),
            ),
            (
                "fd00:10:16::2-fd00:10:16::ff",
                Some(("fd00:10:16::2-fd00:10:16::ff", 254)),
            ),
            // Touching and unordered entries are one set, counted once.
            (
                "10.16.0.5,10.16.0.2-10.16.0.4",
                Some(("10.16.0.2-10.16.0.5", 4)),
            ),
            (
                "10.16.0.2-10.16.0.4,10.16.0.3",
                Some(("10.16.0.2-10.16.0.4", 3)),
            ),
            (
                "::-ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe",
                Some(("::-ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe", u128::MAX)),
            ),
            ("10.16.0.4-10.16.0.2", None),
            ("10.16.0.2..10.16.0.4", None),
            ("10.16.0.2-10.16.0.4-10.16.0.6", None),
            ("10.16.0.0/24", None),
            (" 10.16.0.2", None),
            ("10.16.0.2,", None),
            ("10.16.0.2-", None),
            ("abc", None),
        ];
        for (text, want) in cases {
            let got = parse_range_list(text);
            assert_eq!(
                got.as_ref().map(|l| l.to_string()).as_deref(),
                want.map(|(s, _)| s),
                "{text}"
            );
            if let (Some(list), Some((_, count))) = (got, want) {
                assert_eq!(list.address_count(), Some(*count), "{text}");
            }
        }
        let whole = parse_range_list("::-ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff").expect("list");
        assert_eq!(whole.address_count(), None, "2^128 addresses");
        let list = parse_range_list("10.16.0.2-10.16.0.4,10.16.0.9").expect("list");
        for (a, want) in [
            ("10.16.0.1", false),
            ("10.16.0.2", true),
            ("10.16.0.4", true),
            ("10.16.0.5", false),
            ("10.16.0.9", true),
            ("10.16.0.10", false),
            ("::ffff:10.16.0.3", true),
            ("fd00::2", false),
        ] {
            assert_eq!(list.contains(new_ip(a).expect("ip")), want, "{a}");
        }
    }

    #[test]
    fn a_huge_block_is_one_range() {
        let whole = list(&["::/0", "0.0.0.0/0"]);
        assert_eq!(whole.ranges().len(), 1);
        assert_eq!(whole.separate(&whole), RangeList::default());
        let v6 = list(&["fd00::/8"]);
        assert_eq!(v6.separate(&list(&["fd00::5"])).ranges().len(), 2);
    }

    #[test]
    fn usable_and_reserved_as_the_controller_reads_a_subnet() {
        let cidr = |s| parse_cidr(s).expect("cidr");
        assert_eq!(
            usable_range(&cidr("10.16.0.0/24")).to_string(),
            "10.16.0.1-10.16.0.254"
        );
        assert_eq!(
            usable_range(&cidr("10.16.0.0/31")).to_string(),
            "10.16.0.0-10.16.0.1"
        );
        assert!(usable_range(&cidr("10.16.0.0/32")).is_empty());
        assert_eq!(
            usable_range(&cidr("fd00::/112")).to_string(),
            "fd00::1-fd00::fffe"
        );
        let exclude: Vec<String> = [
            "10.15.255.250..10.16.0.5",
            "10.16.0.0",
            "10.16.0.255",
            "10.16.1.9",
            "10.16.0.0/28",
            "10.16.0.100",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            reserved(&exclude, "10.16.0.0/24").to_string(),
            "10.16.0.1-10.16.0.5,10.16.0.100"
        );
    }

    #[test]
    fn entries_split_by_family_as_upstream() {
        let ips = [
            "10.0.0.1",
            "fd00::1",
            "abc",
            "10.0.0.0/33",
            "10.0.0.1..fd00::5",
            " 10.0.0.1",
            "10.0.0.1,10.0.0.2",
        ];
        let (v4, v6) = split_ips_by_protocol(&ips);
        assert_eq!(v4, ["10.0.0.1", "10.0.0.0/33", "10.0.0.1..fd00::5"]);
        assert_eq!(v6, ["fd00::1", "abc", " 10.0.0.1", "10.0.0.1,10.0.0.2"]);
    }
}
