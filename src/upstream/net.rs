//! Address parsing and printing with Go `net` semantics.
//!
//! Kube-OVN's webhook parses with Go's `net.ParseIP`, `net.ParseCIDR` and
//! `net.ParseMAC` and prints with `net.IP.String()`. The messages we must
//! reproduce byte for byte depend on those exact rules (leading zeros, zones,
//! IPv4-mapped IPv6, RFC 5952 printing), so they are ported here rather than
//! borrowed from `std`, whose parser and printer differ at the edges.
//!
//! Everything else in the policy works on the values returned here.

mod go_unicode;

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
/// use kube_ovn_policy::upstream::net::parse_ip;
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
/// use kube_ovn_policy::upstream::net::parse_cidr;
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
/// use kube_ovn_policy::upstream::net::{format_ip, parse_ip};
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
/// use kube_ovn_policy::upstream::net::cidr_overlap;
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
/// use kube_ovn_policy::upstream::net::contains_uppercase;
/// assert!(contains_uppercase("fd00::A"));
/// assert!(contains_uppercase("Ä"));
/// assert!(!contains_uppercase("fd00::a"));
/// assert!(!contains_uppercase("Ⅱ"));
/// ```
pub fn contains_uppercase(s: &str) -> bool {
    s.chars().any(is_upper)
}

/// Go's `unicode.IsUpper` (src/unicode/letter.go): general category Lu, in
/// Go's Unicode version (15.0.0). Its Latin-1 fast path (`properties`) agrees
/// with the Lu table, so the table alone decides.
///
/// ```
/// use kube_ovn_policy::upstream::net::is_upper;
/// assert!(is_upper('A') && is_upper('Σ') && is_upper('Ж'));
/// assert!(!is_upper('a') && !is_upper('Ⅰ') && !is_upper('Ⓐ') && !is_upper('ǅ'));
/// ```
pub fn is_upper(c: char) -> bool {
    let r = u32::from(c);
    let i = go_unicode::UPPER.partition_point(|&(_, last, _)| last < r);
    go_unicode::UPPER
        .get(i)
        .is_some_and(|&(first, _, stride)| first <= r && (r - first) % stride == 0)
}

/// Go's `strconv.IsPrint` (src/strconv/quote.go), the same set as
/// `unicode.IsPrint`: letters, marks, numbers, punctuation, symbols and the
/// ASCII space, in Go's Unicode version (15.0.0). Ported with Go's tables
/// and lookup (src/strconv/isprint.go, generated as Go's makeisprint.go
/// does by scripts/go-unicode-tables.py).
///
/// ```
/// use kube_ovn_policy::upstream::net::is_print;
/// assert!(is_print(' ') && is_print('é') && is_print('中') && is_print('😀'));
/// assert!(!is_print('\u{a0}') && !is_print('\u{ad}') && !is_print('\u{200b}'));
/// assert!(!is_print('\u{e000}') && !is_print('\u{378}'));
/// ```
pub fn is_print(c: char) -> bool {
    use go_unicode::{IS_NOT_PRINT16, IS_NOT_PRINT32, IS_PRINT16, IS_PRINT32};
    let r = u32::from(c);
    if r <= 0xFF {
        // Go's fast path: ASCII space through `~`, and `¡` through `ÿ`
        // except the soft hyphen.
        return (0x20..=0x7E).contains(&r) || ((0xA1..=0xFF).contains(&r) && r != 0xAD);
    }
    if let Ok(r16) = u16::try_from(r) {
        return in_print_ranges(IS_PRINT16, r16) && IS_NOT_PRINT16.binary_search(&r16).is_err();
    }
    if !in_print_ranges(IS_PRINT32, r) {
        return false;
    }
    // Go's tables hold no exception from U+20000 on.
    match u16::try_from(r - 0x10000) {
        Ok(low) => IS_NOT_PRINT32.binary_search(&low).is_err(),
        Err(_) => true,
    }
}

/// Go's range test in `IsPrint`: `i := bsearch(isPrint, x)`, the first
/// entry >= x, is the start or end of the pair that may hold x.
fn in_print_ranges<T: Ord + Copy>(pairs: &[T], x: T) -> bool {
    let i = pairs.partition_point(|&v| v < x);
    match (pairs.get(i & !1), pairs.get(i | 1)) {
        (Some(&first), Some(&last)) => first <= x && x <= last,
        _ => false,
    }
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

/// Go's `strconv.Atoi`: an optional sign and decimal digits fitting an int64.
pub fn atoi(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.strip_prefix('+').unwrap_or(s).parse().ok()
}

/// Go's `%q` (`strconv.Quote`, src/strconv/quote.go `appendQuotedWith` and
/// `appendEscapedRune`) for the names and values echoed in messages: `"` and
/// `\` are backslashed; every rune that `is_print` accepts is kept; the
/// others are escaped as `\a \b \f \n \r \t \v`, as `\xNN` below U+0020
/// and for U+007F, as `\uNNNN` below U+10000, else as `\UNNNNNNNN`
/// (lower-case hex). So a zero width space, a no-break space or a soft
/// hyphen is escaped too, not only control characters. Go's `\xNN` for an
/// invalid UTF-8 byte cannot arise: a `str` is valid UTF-8, and the request
/// reader rejects text that is not.
///
/// ```
/// use kube_ovn_policy::upstream::net::go_quote;
/// assert_eq!(go_quote("pool-a"), r#""pool-a""#);
/// assert_eq!(go_quote("a\u{200b}b\u{1}"), r#""a\u200bb\x01""#);
/// ```
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            c if is_print(c) => out.push(c),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if c < ' ' || c == '\u{7f}' => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            c if u32::from(c) < 0x10000 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => {
                let _ = write!(out, "\\U{:08x}", u32::from(c));
            }
        }
    }
    out.push('"');
    out
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
        // Every CIDR reader shares the parser: Kube-OVN's CheckCidrs,
        // CIDROverlap and CIDRContainIP read a zero-padded block as Go does.
        assert!(check_cidrs("10.0.0.0/000000016,fd00::/0064"));
        assert!(cidr_overlap("10.0.0.0/000000016", "10.0.5.0/24"));
        assert!(!cidr_overlap("10.0.0.0/000000024", "10.0.5.0/24"));
        assert!(cidr_contain_ip("10.16.0.0/0016", "10.16.200.1"));
        assert_eq!(ip_to_string("10.16.0.15/00024"), "10.16.0.15");
    }

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

    #[test]
    fn atoi_follows_go() {
        let cases: &[(&str, Option<i64>)] = &[
            ("3", Some(3)),
            ("+3", Some(3)),
            ("-1", Some(-1)),
            ("-0", Some(0)),
            ("a3", None),
            ("10m", None),
            ("", None),
            ("+", None),
            ("1_000", None),
            (" 1", None),
            ("9223372036854775807", Some(i64::MAX)),
            ("9223372036854775808", None),
            ("-9223372036854775808", Some(i64::MIN)),
        ];
        for (input, want) in cases {
            assert_eq!(atoi(input), *want, "atoi({input:?})");
        }
    }

    /// Go's `strconv.Quote` (what `%q` prints); each expectation is Go 1.25's
    /// output, which follows `appendEscapedRune` and `IsPrint` (Unicode 15.0.0).
    #[test]
    fn quote_follows_go() {
        let cases: &[(&str, &str)] = &[
            ("pool-a", r#""pool-a""#),
            ("", r#""""#),
            ("a\"b\\c", r#""a\"b\\c""#),
            ("it's", r#""it's""#),
            // Go: strconv.Quote("\a\b\f\n\r\t\v") = "\a\b\f\n\r\t\v"
            ("\u{7}\u{8}\u{c}\n\r\t\u{b}", r#""\a\b\f\n\r\t\v""#),
            // Go: other C0 controls and DEL are \xNN, not \u00NN.
            ("a\u{1}b", r#""a\x01b""#),
            ("\u{0}", r#""\x00""#),
            ("\u{1b}[31m", r#""\x1b[31m""#),
            ("\u{7f}", r#""\x7f""#),
            // Go: a C1 control is above ' ', so \u0085.
            ("\u{85}", r#""\u0085""#),
            // Go: format characters (Cf) are not printable.
            ("pod\u{200b}name", r#""pod\u200bname""#),
            ("\u{ad}", r#""\u00ad""#),
            ("\u{200d}", r#""\u200d""#),
            ("\u{feff}", r#""\ufeff""#),
            ("\u{61c}", r#""\u061c""#),
            // Go: spaces other than U+0020 are not printable.
            ("a\u{a0}b", r#""a\u00a0b""#),
            ("\u{3000}", r#""\u3000""#),
            ("\u{2028}", r#""\u2028""#),
            // Go: private use and unassigned code points.
            ("\u{e000}", r#""\ue000""#),
            ("\u{378}", r#""\u0378""#),
            ("\u{f0000}", r#""\U000f0000""#),
            ("\u{e0001}", r#""\U000e0001""#),
            ("\u{10ffff}", r#""\U0010ffff""#),
            // Go 1.25 is Unicode 15.0.0: Nag Mundari (new in 15.0) is
            // printed as is; CJK Extension I (new in 15.1) is escaped.
            ("\u{1e4d0}", "\"\u{1e4d0}\""),
            ("\u{2ebf0}", r#""\U0002ebf0""#),
            // Go: letters, marks, symbols of any script stay as they are.
            ("é中😀\u{301}\u{fffd}", "\"é中😀\u{301}\u{fffd}\""),
        ];
        for (input, want) in cases {
            assert_eq!(go_quote(input), *want, "go_quote({input:?})");
        }
    }

    /// `unicode.IsPrint` and `unicode.IsUpper` in Go 1.25 (Unicode 15.0.0).
    #[test]
    fn unicode_classes_follow_go() {
        let print: &[(char, bool)] = &[
            (' ', true),
            ('~', true),
            ('\u{a1}', true),
            ('\u{ff}', true),
            ('\u{301}', true),   // Mn
            ('\u{fffd}', true),  // So
            ('\u{1f600}', true), // So
            ('\u{1e4d0}', true), // Lo, new in 15.0
            ('\u{31350}', true), // Lo, CJK Extension H (15.0)
            ('\u{1f}', false),
            ('\u{7f}', false),
            ('\u{a0}', false),    // Zs
            ('\u{ad}', false),    // Cf
            ('\u{1680}', false),  // Zs
            ('\u{200b}', false),  // Cf
            ('\u{2029}', false),  // Zp
            ('\u{e000}', false),  // Co
            ('\u{378}', false),   // Cn
            ('\u{fffe}', false),  // Cn
            ('\u{2ebf0}', false), // Cn in 15.0 (Lo from 15.1)
            ('\u{e0001}', false), // Cf
            ('\u{10ffff}', false),
        ];
        for &(c, want) in print {
            assert_eq!(is_print(c), want, "is_print(U+{:04X})", u32::from(c));
        }
        let upper: &[(char, bool)] = &[
            ('A', true),
            ('Z', true),
            ('\u{c4}', true), // Ä
            ('\u{de}', true), // Þ
            ('Σ', true),
            ('Ж', true),
            ('\u{ff21}', true),  // fullwidth A
            ('\u{1d400}', true), // mathematical bold capital A
            ('\u{a7c0}', true),  // Lu, new in 14.0
            ('\u{1e900}', true), // Adlam capital alif
            ('a', false),
            ('\u{d7}', false),    // ×, Sm
            ('\u{df}', false),    // ß, Ll
            ('\u{1c5}', false),   // ǅ, Lt
            ('\u{2160}', false),  // Ⅰ, Nl (Other_Uppercase)
            ('\u{2161}', false),  // Ⅱ
            ('\u{24b6}', false),  // Ⓐ, So (Other_Uppercase)
            ('\u{1f130}', false), // 🄰, So (Other_Uppercase)
            ('\u{a7cb}', false),  // Lu only from Unicode 16.0
            ('\u{1e922}', false),
        ];
        for &(c, want) in upper {
            assert_eq!(is_upper(c), want, "is_upper(U+{:04X})", u32::from(c));
        }
        assert!(contains_uppercase("fd00::1:Ä"));
        assert!(!contains_uppercase("10.0.0.\u{2161}"));
    }

    /// Whole-range consistency with what Rust knows (a newer Unicode):
    /// Lu is inside Rust's Uppercase, and nothing Go prints is a control.
    /// Latin-1 follows Go's `properties` table exactly.
    #[test]
    fn unicode_tables_agree_with_std_where_they_must() {
        for c in (0..=0x10FFFF).filter_map(char::from_u32) {
            if is_upper(c) {
                assert!(
                    c.is_uppercase(),
                    "U+{:04X} Lu but not Uppercase",
                    u32::from(c)
                );
            }
            if is_print(c) {
                assert!(!c.is_control(), "U+{:04X} printable control", u32::from(c));
            }
            if u32::from(c) <= 0xFF {
                let latin_upper =
                    c.is_ascii_uppercase() || ('\u{c0}'..='\u{de}').contains(&c) && c != '\u{d7}';
                assert_eq!(is_upper(c), latin_upper, "U+{:04X}", u32::from(c));
            }
        }
    }

    mod properties {
        use super::super::*;
        use proptest::prelude::*;
        use std::collections::BTreeSet;

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

        /// Go's `strconv.Unquote` for what `Quote` writes, strict about the
        /// form: outside escapes only runes that `IsPrint` accepts (and no
        /// bare `"` or `\`); an escape only for a rune it does not accept
        /// (or for `"` and `\`), in the one form Go picks for it.
        fn go_unquote(quoted: &str) -> Option<String> {
            let inner = quoted.strip_prefix('"')?.strip_suffix('"')?;
            let mut out = String::new();
            let mut chars = inner.chars();
            while let Some(c) = chars.next() {
                if c != '\\' {
                    if c == '"' || !is_print(c) {
                        return None;
                    }
                    out.push(c);
                    continue;
                }
                let kind = chars.next()?;
                let decoded = match kind {
                    '"' | '\\' => kind,
                    'a' => '\u{7}',
                    'b' => '\u{8}',
                    'f' => '\u{c}',
                    'n' => '\n',
                    'r' => '\r',
                    't' => '\t',
                    'v' => '\u{b}',
                    'x' | 'u' | 'U' => {
                        let width = match kind {
                            'x' => 2,
                            'u' => 4,
                            _ => 8,
                        };
                        let hex: String = chars.by_ref().take(width).collect();
                        if hex.len() != width || hex.to_lowercase() != hex {
                            return None;
                        }
                        let c = char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?;
                        let named = "\u{7}\u{8}\u{c}\n\r\t\u{b}".contains(c);
                        let form = if c < ' ' || c == '\u{7f}' {
                            'x'
                        } else if u32::from(c) < 0x10000 {
                            'u'
                        } else {
                            'U'
                        };
                        if is_print(c) || named || form != kind {
                            return None;
                        }
                        c
                    }
                    _ => return None,
                };
                out.push(decoded);
            }
            Some(out)
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
            fn quote_escapes_exactly_what_go_does(
                s in any::<String>(),
                extra in prop::sample::select(vec![
                    '\u{200b}', '\u{a0}', '\u{ad}', '\u{7f}', '\u{1}', '\u{e000}', '\u{10ffff}', '"', '\\', 'é',
                ]),
                at in any::<prop::sample::Index>(),
            ) {
                // Arbitrary text with one rune Go treats specially put in.
                let mut s = s;
                let cut = s
                    .char_indices()
                    .map(|(i, _)| i)
                    .nth(at.index(s.chars().count() + 1))
                    .unwrap_or(s.len());
                s.insert(cut, extra);
                let quoted = go_quote(&s);
                let unquoted = go_unquote(&quoted);
                prop_assert_eq!(unquoted.as_deref(), Some(s.as_str()), "{}", quoted);
            }

            #[test]
            fn ipv4_prints_and_round_trips(octets in any::<[u8; 4]>()) {
                let ip = IpAddr::V4(Ipv4Addr::from(octets));
                prop_assert_eq!(parse_ip(&format_ip(&ip)), Some(ip));
            }

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
