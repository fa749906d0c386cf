//! A pod's (or pod template's) network annotations: the NICs they describe,
//! and Kube-OVN's `util.ValidatePodNetwork`, their format checks. Errors are collected, not short-cut, and
//! joined as `k8s.io/apimachinery`'s aggregate error prints them.
//!
//! Upstream walks the annotation map (in Go's random order) for the
//! `ip_family` and bandwidth blocks; we walk it in key order, so a request
//! with several such errors always gets the same message.

use crate::checks::static_ip::pools::{Pool, is_address_pool};
use crate::upstream::go_net::{is_valid_mac, parse_cidr, parse_ip};
use crate::upstream::go_strconv::atoi;
use crate::upstream::kubeovn_util::{Protocol, check_cidrs, check_protocol, cidr_contain_ip};
use std::borrow::Cow;
use std::cell::OnceCell;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::net::IpAddr;
use std::ops::Bound;
use std::rc::Rc;

/// `ovn.kubernetes.io/ip_address`
pub const IP_ADDRESS: &str = "ovn.kubernetes.io/ip_address";
/// `ovn.kubernetes.io/ip_pool`
pub const IP_POOL: &str = "ovn.kubernetes.io/ip_pool";
/// `ovn.kubernetes.io/cidr`
pub const CIDR: &str = "ovn.kubernetes.io/cidr";
/// `ovn.kubernetes.io/mac_address`
pub const MAC_ADDRESS: &str = "ovn.kubernetes.io/mac_address";
/// `ovn.kubernetes.io/ip_family`
pub const IP_FAMILY: &str = "ovn.kubernetes.io/ip_family";
/// `ovn.kubernetes.io/logical_switch`
pub const LOGICAL_SWITCH: &str = "ovn.kubernetes.io/logical_switch";

const FAMILY_SUFFIX: &str = ".kubernetes.io/ip_family";
const BANDWIDTH_SUFFIXES: [&str; 4] = [
    ".kubernetes.io/ingress_rate",
    ".kubernetes.io/egress_rate",
    ".kubernetes.io/ingress_burst",
    ".kubernetes.io/egress_burst",
];

/// One network interface's static addresses: the primary NIC
/// (`ovn.kubernetes.io/…`), or an attachment, from its
/// `<provider>.kubernetes.io/…` annotations (I7) or as kube-ovn-controller
/// finds it from the pod's network selections (I17).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Nic<'a> {
    /// The attachment's provider (`<provider>.kubernetes.io/…`); `None` for
    /// the primary NIC.
    pub provider: Option<Cow<'a, str>>,
    /// The static address(es), as the controller will take them.
    pub ip_address: Cow<'a, str>,
    pub ip_pool: &'a str,
    /// The subnet, when it is known without a lookup (the primary NIC's
    /// annotation, I7) or was found (I17).
    pub logical_switch: Option<Cow<'a, str>>,
    /// `ip_address` and `ip_pool` as parsed, once per evaluation whatever
    /// the number of checks that read them (docs/lookups.md).
    pub parsed: Parsed,
    /// Where the controller may try its addresses besides `logical_switch`
    /// (I5, per address): filled where the NIC was found by a lookup.
    pub tries: Tries,
    /// A NIC of a selection whose NetworkAttachmentDefinition does not exist
    /// or is not Kube-OVN's now, in a form it may take (I20).
    pub hypothetical: bool,
    /// Found from a network selection (I17), not only from
    /// `<provider>.kubernetes.io/…` annotations (I7): the controller
    /// allocates only the NICs of selections (`getPodKubeovnNets`).
    pub selected: bool,
}

/// Where the controller may try a NIC's addresses (I5, per address): one of
/// `pinned` first (a `logical_switch`, an IPPool's subnet, a provider's
/// Subnets, which `subnetsLister.List` gives in no fixed order), then the
/// namespace's `listed` subnets in order (`getNsAvailableSubnets`,
/// `pkg/controller/pod.go:3124`), each address landing in the first that
/// accepts it (`acquireStaticAddressHelper`, pod.go:2649-2656, 2706-2707,
/// 2737-2742). Read by `landing::receiving`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tries {
    pub pinned: Vec<String>,
    pub listed: Vec<String>,
    /// For each listed subnet, whether the controller may pass it over: the
    /// primary NIC's default is the first listed subnet that
    /// `getPodDefaultSubnet` does not skip, and it skips one whose status
    /// shows no free address of a family it has (pod.go:2033-2050; unless
    /// the pod's address is in its `excludeIps`, which is not modelled: a
    /// superset). Then an address is checked in the first listed subnet
    /// that holds it and in each later one that holds it while the ones
    /// before may be passed over. Empty: none is (an attachment's list).
    pub skippable: Vec<bool>,
}

/// A NIC's values, parsed on first use.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Parsed {
    items: OnceCell<Vec<Option<IpAddr>>>,
    pool: OnceCell<Option<Pool>>,
}

impl<'a> Nic<'a> {
    /// A NIC of these values, nothing parsed yet.
    pub fn new(
        provider: Option<Cow<'a, str>>,
        ip_address: Cow<'a, str>,
        ip_pool: &'a str,
        logical_switch: Option<Cow<'a, str>>,
    ) -> Self {
        Nic {
            provider,
            ip_address,
            ip_pool,
            logical_switch,
            parsed: Parsed::default(),
            tries: Tries::default(),
            hypothetical: false,
            selected: false,
        }
    }
}

impl Nic<'_> {
    /// The provider as kube-ovn-controller names it: `ovn` for the primary NIC.
    pub fn provider_name(&self) -> &str {
        self.provider.as_deref().unwrap_or(OVN_PROVIDER)
    }

    /// The items of `ip_address` ([`split_items`]); none when it is empty.
    pub fn items(&self) -> &[Option<IpAddr>] {
        self.parsed.items.get_or_init(|| {
            if self.ip_address.is_empty() {
                Vec::new()
            } else {
                split_items(&self.ip_address)
            }
        })
    }

    /// `ip_pool` as a [`Pool`] of addresses, `None` unless it lists
    /// addresses ([`is_address_pool`]).
    pub fn address_pool(&self) -> Option<&Pool> {
        self.parsed
            .pool
            .get_or_init(|| is_address_pool(self.ip_pool).then(|| Pool::parse(self.ip_pool)))
            .as_ref()
    }
}

/// The primary NIC's provider (`util.OvnProvider`).
pub const OVN_PROVIDER: &str = "ovn";

/// An annotation's value, empty when absent.
pub fn annotation<'a>(annotations: &'a BTreeMap<String, String>, key: &str) -> &'a str {
    annotations.get(key).map_or("", String::as_str)
}

/// `<provider>.kubernetes.io/<what>`.
pub fn provider_key(provider: &str, what: &str) -> String {
    format!("{provider}.kubernetes.io/{what}")
}

/// The attachment NICs of the `<provider>.kubernetes.io/…` annotations
/// (I7), by provider name, in name order.
pub fn attachments(annotations: &BTreeMap<String, String>) -> Vec<Nic<'_>> {
    let mut providers: Vec<&str> = annotations
        .iter()
        .filter(|(_, value)| !value.is_empty())
        .filter_map(|(key, _)| {
            key.strip_suffix(".kubernetes.io/ip_address")
                .or_else(|| key.strip_suffix(".kubernetes.io/ip_pool"))
        })
        .filter(|provider| !provider.is_empty() && *provider != OVN_PROVIDER)
        .collect();
    providers.sort_unstable();
    providers.dedup();
    providers
        .into_iter()
        .map(|p| {
            Nic::new(
                Some(Cow::Borrowed(p)),
                Cow::Borrowed(annotation(annotations, &provider_key(p, "ip_address"))),
                annotation(annotations, &provider_key(p, "ip_pool")),
                Some(annotation(annotations, &provider_key(p, "logical_switch")))
                    .filter(|s| !s.is_empty())
                    .map(Cow::Borrowed),
            )
        })
        .collect()
}

/// The primary NIC's annotations (`ovn.kubernetes.io/…`).
pub fn primary(annotations: &BTreeMap<String, String>) -> Nic<'_> {
    Nic::new(
        None,
        Cow::Borrowed(annotation(annotations, IP_ADDRESS)),
        annotation(annotations, IP_POOL),
        Some(annotation(annotations, LOGICAL_SWITCH))
            .filter(|s| !s.is_empty())
            .map(Cow::Borrowed),
    )
}

pub use crate::upstream::kubeovn_util::parse_item;

/// The items of an `ip_address` annotation.
pub fn split_items(value: &str) -> Vec<Option<IpAddr>> {
    value.split(',').map(parse_item).collect()
}

/// Runs every check; `Err` holds upstream's aggregate message.
pub fn validate(annotations: &BTreeMap<String, String>) -> Result<(), String> {
    let mut errors = Errors::default();
    check_ip_families(annotations, &mut errors);
    check_ip_address(annotations, &mut errors);
    if let Some(mac) = non_empty(annotations, MAC_ADDRESS)
        && !is_valid_mac(mac)
    {
        errors.push(format!("{mac} is not a valid {MAC_ADDRESS}"));
    }
    check_ip_pool(annotations, &mut errors);
    for (key, value) in annotations {
        if !value.is_empty()
            && BANDWIDTH_SUFFIXES.iter().any(|s| key.ends_with(s))
            && atoi(value).is_none_or(|n| n < 0)
        {
            errors.push(format!("{value} is not a valid {key}"));
        }
    }
    errors.aggregate()
}

fn non_empty<'a>(annotations: &'a BTreeMap<String, String>, key: &str) -> Option<&'a str> {
    annotations
        .get(key)
        .map(String::as_str)
        .filter(|v| !v.is_empty())
}

/// The most messages an aggregate lists (§4); past them, `and %d more`.
pub const SHOWN: usize = 20;

/// `ValidatePodNetwork`'s errors, collected as `utilerrors.NewAggregate`
/// keeps them (repeated texts dropped), the first [`SHOWN`] kept and the
/// rest counted: no request makes a message grow as a product (§4).
#[derive(Default)]
struct Errors {
    shown: Vec<String>,
    /// Every text pushed, to drop repeats; the family checks' texts past
    /// [`SHOWN`] are counted without being made ([`Errors::more`]).
    seen: HashSet<String>,
    more: usize,
}

impl Errors {
    fn push(&mut self, error: String) {
        if self.seen.contains(&error) {
            return;
        }
        if self.shown.len() < SHOWN {
            self.shown.push(error.clone());
        } else {
            self.more += 1;
        }
        self.seen.insert(error);
    }

    fn full(&self) -> bool {
        self.shown.len() >= SHOWN
    }

    /// `utilerrors.NewAggregate(errs).Error()`: one message alone, several
    /// as `[m1, m2]`; more than [`SHOWN`] as `[m1, …, m20, and N more]`.
    fn aggregate(self) -> Result<(), String> {
        match self.shown.as_slice() {
            [] => Ok(()),
            [only] if self.more == 0 => Err(only.to_string()),
            _ if self.more == 0 => Err(format!("[{}]", self.shown.join(", "))),
            _ => Err(format!(
                "[{}, and {} more]",
                self.shown.join(", "),
                self.more
            )),
        }
    }
}

/// The address annotations under one `ip_address` key (the key itself, or
/// `<key>.<suffix>`), in key order, and the distinct items of their values
/// that are not of each family: scanned once per key per evaluation,
/// however many `ip_family` keys govern it (§4).
struct Governed<'a> {
    entries: Vec<(&'a String, &'a String)>,
    /// Distinct items that are not IPv4, and not IPv6.
    not: [HashSet<&'a str>; 2],
}

impl<'a> Governed<'a> {
    fn scan(annotations: &'a BTreeMap<String, String>, key: &str) -> Self {
        let mut entries = Vec::new();
        let mut not: [HashSet<&'a str>; 2] = Default::default();
        let from = (Bound::Included(key), Bound::Unbounded);
        for (address_key, addresses) in annotations.range::<str, _>(from) {
            let Some(rest) = address_key.strip_prefix(key) else {
                break;
            };
            if !(rest.is_empty() || rest.starts_with('.')) {
                continue;
            }
            entries.push((address_key, addresses));
            if addresses.is_empty() {
                continue;
            }
            for ip in addresses.split(',') {
                let protocol = check_protocol(ip);
                if protocol != Some(Protocol::V4) {
                    not[0].insert(ip);
                }
                if protocol != Some(Protocol::V6) {
                    not[1].insert(ip);
                }
            }
        }
        Governed { entries, not }
    }
}

/// Block A: every `…kubernetes.io/ip_family` must be `ipv4`/`ipv6` and match
/// the addresses of its NIC.
fn check_ip_families(annotations: &BTreeMap<String, String>, errors: &mut Errors) {
    let mut governed: HashMap<String, Rc<Governed<'_>>> = HashMap::new();
    for (key, family) in annotations {
        if family.is_empty() || !(key == IP_FAMILY || key.ends_with(FAMILY_SUFFIX)) {
            continue;
        }
        let wanted = match family.as_str() {
            "ipv4" => 0,
            "ipv6" => 1,
            _ => {
                errors.push(format!("{family} is not a valid {key}"));
                continue;
            }
        };
        let scans: Vec<Rc<Governed<'_>>> = ip_address_keys_for_family(key)
            .into_iter()
            .map(|k| {
                governed
                    .entry(k)
                    .or_insert_with_key(|k| Rc::new(Governed::scan(annotations, k)))
                    .clone()
            })
            .collect();
        // How many distinct texts this key gives: its items of the other
        // family, counted across both keys once.
        let count = match scans.as_slice() {
            [one] => one.not[wanted].len(),
            [a, b] => {
                let (small, large) = if a.not[wanted].len() <= b.not[wanted].len() {
                    (a, b)
                } else {
                    (b, a)
                };
                large.not[wanted].len()
                    + small.not[wanted]
                        .iter()
                        .filter(|ip| !large.not[wanted].contains(*ip))
                        .count()
            }
            _ => 0,
        };
        if count == 0 {
            continue;
        }
        if errors.full() {
            errors.more += count;
            continue;
        }
        // The texts in upstream's order (address keys in key order, items
        // in value order) until the list is full; the rest counted.
        let mut matched: Vec<(&String, &String)> = scans
            .iter()
            .flat_map(|g| g.entries.iter().copied())
            .collect();
        matched.sort_unstable();
        matched.dedup();
        let mut made: HashSet<&str> = HashSet::new();
        'entries: for (_, addresses) in matched {
            if addresses.is_empty() {
                continue;
            }
            for ip in addresses.split(',') {
                if scans.iter().any(|g| g.not[wanted].contains(ip)) && made.insert(ip) {
                    errors.push(format!("{ip} does not match {key} {family}"));
                    if errors.full() {
                        break 'entries;
                    }
                }
            }
        }
        errors.more += count - made.len();
    }
}

/// The `ip_address` keys an `ip_family` key governs: its own NIC's, plus the
/// per-interface key of a same-NAD multi-NIC pod (`<nad>.<ns>.ovn.<if>`).
fn ip_address_keys_for_family(family_key: &str) -> Vec<String> {
    let base = family_key.strip_suffix("/ip_family").unwrap_or(family_key);
    let mut keys = vec![format!("{base}/ip_address")];
    if let Some(provider) = family_key.strip_suffix(FAMILY_SUFFIX) {
        let parts: Vec<&str> = provider.split('.').collect();
        if parts.len() > 3
            && parts[2] == "ovn"
            && let Some(interface) = parts.last()
        {
            keys.push(format!(
                "{}.{}.kubernetes.io/ip_address.{}",
                parts[0], parts[1], interface
            ));
        }
    }
    keys
}

/// Block B: each `ip_address` item parses (no trimming) and, with a `cidr`
/// annotation, lies inside it.
fn check_ip_address(annotations: &BTreeMap<String, String>, errors: &mut Errors) {
    let Some(value) = non_empty(annotations, IP_ADDRESS) else {
        return;
    };
    for ip in value.split(',') {
        let valid = if ip.contains('/') {
            parse_cidr(ip).is_some()
        } else {
            parse_ip(ip).is_some()
        };
        if !valid {
            errors.push(format!("{ip} is not a valid {IP_ADDRESS}"));
            continue;
        }
        if let Some(cidr) = non_empty(annotations, CIDR) {
            if !check_cidrs(cidr) {
                errors.push(format!("invalid cidr {cidr}"));
            } else if !cidr_contain_ip(cidr, ip) {
                errors.push(format!("{ip} not in cidr {cidr}"));
            }
        }
    }
}

/// Block D: an `ip_pool` that is a list (or a single address) has, in each
/// `;` group, an entry inside the `cidr` annotation; entries are
/// format-checked up to the first one found.
fn check_ip_pool(annotations: &BTreeMap<String, String>, errors: &mut Errors) {
    let Some(pool) = non_empty(annotations, IP_POOL) else {
        return;
    };
    if !(pool.contains(';') || pool.contains(',') || parse_ip(pool).is_some()) {
        return; // an IPPool name
    }
    let cidr = non_empty(annotations, CIDR);
    for group in pool.split(';') {
        let mut found = false;
        for ip in group.split(',') {
            if parse_ip(ip.trim()).is_none() {
                errors.push(format!("{ip} in {IP_POOL} is not a valid address"));
            }
            if cidr.is_none_or(|c| cidr_contain_ip(c, ip)) {
                found = true;
                break;
            }
        }
        if !found {
            errors.push(format!("{group} not in cidr {}", cidr.unwrap_or_default()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn run(pairs: &[(&str, &str)]) -> Result<(), String> {
        validate(
            &pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    // TestValidatePodNetwork of kube-ovn, plus edge cases of each block.
    #[rstest]
    #[case::upstream_valid(
        &[
            (IP_ADDRESS, "10.16.0.15"),
            (MAC_ADDRESS, "00:00:00:54:17:2A"),
            (IP_POOL, "10.16.0.15,10.16.0.16"),
            (CIDR, "10.16.0.0/16"),
        ],
        None
    )]
    #[case::ip_address_cidrs(&[(IP_ADDRESS, "10.244.0.0/16,fd00:10:244:0:2::/80")], None)]
    #[case::ip_address_leading_zeros(
        &[(IP_ADDRESS, "10.244.000.0/16,fd00:10:244:0:2::/80")],
        Some("10.244.000.0/16 is not a valid ovn.kubernetes.io/ip_address")
    )]
    #[case::ip_address_space_after_comma(
        &[(IP_ADDRESS, "10.0.0.1, fd00::1")],
        Some(" fd00::1 is not a valid ovn.kubernetes.io/ip_address")
    )]
    #[case::ip_address_mask_33(
        &[(IP_ADDRESS, "10.16.0.5/33")],
        Some("10.16.0.5/33 is not a valid ovn.kubernetes.io/ip_address")
    )]
    #[case::ip_address_outside_cidr(
        &[(IP_ADDRESS, "10.99.1.11"), (CIDR, "10.99.0.0/24")],
        Some("10.99.1.11 not in cidr 10.99.0.0/24")
    )]
    #[case::invalid_cidr(
        &[
            (IP_ADDRESS, "10.244.0.0/16,fd00::/80"),
            (IP_POOL, "10.16.0.15,10.16.0.16"),
            (CIDR, "10.16.0/16"),
        ],
        Some("[invalid cidr 10.16.0/16, 10.16.0.15,10.16.0.16 not in cidr 10.16.0/16]")
    )]
    #[case::mac_address_too_short(
        &[(IP_ADDRESS, "10.16.0.15"), (MAC_ADDRESS, "00:00:54:17:2A")],
        Some("00:00:54:17:2A is not a valid ovn.kubernetes.io/mac_address")
    )]
    #[case::ip_pool_first_invalid(
        &[(IP_POOL, "10.16.0.300,10.16.0.60")],
        Some("10.16.0.300 in ovn.kubernetes.io/ip_pool is not a valid address")
    )]
    #[case::ip_pool_second_invalid(&[(IP_POOL, "10.16.0.60,10.16.0.300")], None)]
    #[case::ip_pool_name(&[(IP_POOL, "pool-a")], None)]
    #[case::ip_pool_groups_invalid(
        &[(IP_POOL, "a;b")],
        Some(
            "[a in ovn.kubernetes.io/ip_pool is not a valid address, b in ovn.kubernetes.io/ip_pool is not a valid address]",
        )
    )]
    #[case::ip_pool_outside_cidr(
        &[(IP_POOL, "10.99.1.8,10.99.1.18"), (CIDR, "10.99.0.0/24")],
        Some("10.99.1.8,10.99.1.18 not in cidr 10.99.0.0/24")
    )]
    #[case::ip_pool_partly_inside_cidr(
        &[(IP_POOL, "10.99.1.8,10.99.0.18"), (CIDR, "10.99.0.0/24")],
        None
    )]
    #[case::ingress_rate_letters(
        &[("ovn.kubernetes.io/ingress_rate", "a3")],
        Some("a3 is not a valid ovn.kubernetes.io/ingress_rate")
    )]
    #[case::egress_burst_negative(
        &[("ovn.kubernetes.io/egress_burst", "-1")],
        Some("-1 is not a valid ovn.kubernetes.io/egress_burst")
    )]
    #[case::egress_rate_plus_sign(&[("ovn.kubernetes.io/egress_rate", "+10")], None)]
    #[case::attachment_egress_rate_unit(
        &[("net1.ns1.kubernetes.io/egress_rate", "10m")],
        Some("10m is not a valid net1.ns1.kubernetes.io/egress_rate")
    )]
    #[case::ip_family_upper_case(
        &[(IP_FAMILY, "IPv4")],
        Some("IPv4 is not a valid ovn.kubernetes.io/ip_family")
    )]
    #[case::ip_family_dual(
        &[(IP_FAMILY, "dual")],
        Some("dual is not a valid ovn.kubernetes.io/ip_family")
    )]
    #[case::ip_family_ipv4_matching(&[(IP_FAMILY, "ipv4"), (IP_ADDRESS, "10.16.0.15")], None)]
    #[case::ip_family_ipv6_mismatch(
        &[(IP_FAMILY, "ipv6"), (IP_ADDRESS, "10.16.0.15")],
        Some("10.16.0.15 does not match ovn.kubernetes.io/ip_family ipv6")
    )]
    #[case::ip_family_ipv4_dual_address(
        &[(IP_FAMILY, "ipv4"), (IP_ADDRESS, "10.16.0.15,fd00::1")],
        Some("fd00::1 does not match ovn.kubernetes.io/ip_family ipv4")
    )]
    #[case::attachment_ip_family_matching(
        &[
            ("net1.ns1.ovn.kubernetes.io/ip_family", "ipv6"),
            ("net1.ns1.ovn.kubernetes.io/ip_address", "fd00::15"),
        ],
        None
    )]
    #[case::attachment_ip_family_mismatch(
        &[
            ("net1.ns1.ovn.kubernetes.io/ip_family", "ipv4"),
            ("net1.ns1.ovn.kubernetes.io/ip_address", "fd00::15"),
        ],
        Some("fd00::15 does not match net1.ns1.ovn.kubernetes.io/ip_family ipv4")
    )]
    #[case::per_interface_ip_family_mismatch(
        &[
            ("net1.ns1.ovn.net1.kubernetes.io/ip_family", "ipv4"),
            ("net1.ns1.kubernetes.io/ip_address.net1", "fd00::15"),
        ],
        Some("fd00::15 does not match net1.ns1.ovn.net1.kubernetes.io/ip_family ipv4")
    )]
    fn validate_pod_network_table(
        #[case] annotations: &[(&str, &str)],
        #[case] want: Option<&str>,
    ) {
        assert_eq!(run(annotations).err().as_deref(), want);
    }

    /// The texts upstream's loop makes, in key order, before §4's limit:
    /// every `ip_family` key against every address key it governs.
    fn product_texts(pairs: &[(String, String)]) -> Vec<String> {
        let annotations: BTreeMap<String, String> = pairs.iter().cloned().collect();
        let mut texts = Vec::new();
        for (key, family) in &annotations {
            if !key.ends_with(FAMILY_SUFFIX) {
                continue;
            }
            let prefixes = ip_address_keys_for_family(key);
            for (address_key, addresses) in &annotations {
                let governed = prefixes.iter().any(|p| {
                    address_key
                        .strip_prefix(p.as_str())
                        .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
                });
                for ip in addresses.split(',').filter(|_| governed) {
                    let text = format!("{ip} does not match {key} {family}");
                    if !texts.contains(&text) {
                        texts.push(text);
                    }
                }
            }
        }
        texts
    }

    /// §4: `ip_family` keys that all govern one per-interface address key
    /// make M × K texts; the message lists the first 20 as upstream's loop
    /// makes them (in key order) and counts the rest, each distinct text
    /// once (a repeated address in one key counts once).
    #[rstest]
    #[case::one_key_under_the_limit(1, 5)]
    #[case::product_past_the_limit(7, 6)]
    #[case::repeats_counted_once(4, 9)]
    fn ip_family_product_lists_twenty_and_counts_the_rest(#[case] m: usize, #[case] k: usize) {
        let mut pairs: Vec<(String, String)> = (0..m)
            .map(|i| {
                (
                    format!("n.ns.ovn.x{i}.i0.kubernetes.io/ip_family"),
                    "ipv6".to_string(),
                )
            })
            .collect();
        for j in 0..k {
            // Every third address key repeats an earlier address.
            let address = format!("10.0.0.{}", if j % 3 == 2 { j - 1 } else { j });
            pairs.push((format!("n.ns.kubernetes.io/ip_address.i0.{j}"), address));
        }
        let texts = product_texts(&pairs);
        let want = match texts.len() {
            0 => None,
            1 => Some(texts[0].clone()),
            n if n <= SHOWN => Some(format!("[{}]", texts.join(", "))),
            n => Some(format!(
                "[{}, and {} more]",
                texts[..SHOWN].join(", "),
                n - SHOWN
            )),
        };
        let annotations: BTreeMap<String, String> = pairs.into_iter().collect();
        assert_eq!(validate(&annotations).err(), want);
    }
}
