//! I15: the subnet's own record of what is in use. kube-ovn-controller
//! writes each subnet's allocations from its IPAM into
//! `status.v4usingIPrange` / `status.v6usingIPrange`, with the number of
//! addresses in `status.v4usingIPs` / `status.v6usingIPs`
//! (`calcSubnetStatusIP`, `pkg/controller/subnet_status.go` at
//! 1533681d7a6b), after every change of an IP object, Vip or EIP of the
//! subnet. An address the record calls free needs no IP object read.

use crate::k8s::objects::{Subnet, Using};
use crate::upstream::kubeovn_ipam::{Addr, RangeList, new_ip_range_list_from, parse_range_list};
use std::net::IpAddr;

/// What a subnet's record says of one address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Use {
    /// Allocated to nobody: no IP object holds it.
    Free,
    /// Allocated: the IP objects say to whom.
    InUse,
    /// The record does not say: the IP objects decide, as without I15.
    Unknown,
}

/// A subnet's record of the addresses in use, each family kept only when
/// it agrees with itself.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Record {
    v4: Option<RangeList>,
    v6: Option<RangeList>,
    /// `spec.excludeIps`, which the record leaves out
    /// (`GetSubnetIPRangeString` separates them) even where an IP object
    /// holds one (I6 allows them as static IPs); `None` when one does not
    /// parse.
    excluded: Option<RangeList>,
}

impl Record {
    /// The record of a looked-up Subnet.
    pub fn of(subnet: &Subnet) -> Self {
        let excluded = subnet.spec.exclude_ips.iter().map(String::as_str);
        Record {
            v4: agreed(&subnet.in_use.v4, true),
            v6: agreed(&subnet.in_use.v6, false),
            excluded: new_ip_range_list_from(excluded).ok(),
        }
    }

    /// What the record says of `address`.
    pub fn of_address(&self, address: IpAddr) -> Use {
        let a = Addr::from_ip(address);
        let ranges = match address {
            IpAddr::V4(_) => &self.v4,
            // An IPv4-mapped IPv6 address is neither family's to the record.
            IpAddr::V6(_) if a.is_v4() => &None,
            IpAddr::V6(_) => &self.v6,
        };
        match (ranges, &self.excluded) {
            (Some(using), Some(excluded)) if !excluded.contains(a) => {
                if using.contains(a) {
                    Use::InUse
                } else {
                    Use::Free
                }
            }
            _ => Use::Unknown,
        }
    }
}

/// One family's ranges, when the record agrees with itself: the count is
/// above 0 and equals the number of addresses the ranges cover (the
/// controller reports a count without ranges as an inconsistency,
/// `checkSubnetUsingIPs`), and every range is of the family.
fn agreed(using: &Using, v4: bool) -> Option<RangeList> {
    let count = using.count.filter(|n| *n > 0)?;
    let ranges = parse_range_list(using.range.as_deref()?)?;
    let of_family = ranges
        .ranges()
        .iter()
        .all(|r| r.start.is_v4() == v4 && r.end.is_v4() == v4);
    (of_family && ranges.address_count() == Some(count)).then_some(ranges)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::k8s::fake::{self, typed};
    use crate::k8s::objects::Subnet;
    use serde_json::{Value, json};

    fn subnet(name: &str, spec: Value) -> Subnet {
        typed(fake::subnet(name, spec))
    }

    fn says(record: &Record, address: &str) -> Use {
        record.of_address(address.parse().expect("address"))
    }

    #[test]
    fn a_record_that_agrees_with_itself_says_free_or_in_use() {
        let record = Record::of(
            &subnet(
                "",
                json!({"excludeIps": ["10.16.0.1", "10.16.0.100..10.16.0.110", "fd00::1"]}),
            )
            .with_in_use(
                r#"{"v4usingIPs": 4, "v4usingIPrange": "10.16.0.2-10.16.0.4,10.16.0.9",
                "v6usingIPs": "3", "v6usingIPrange": "fd00::2-fd00::4"}"#,
            ),
        );
        for (address, want) in [
            ("10.16.0.2", Use::InUse),
            ("10.16.0.4", Use::InUse),
            ("10.16.0.9", Use::InUse),
            ("10.16.0.5", Use::Free),
            ("10.16.0.10", Use::Free),
            ("10.17.0.1", Use::Free),
            ("fd00::2", Use::InUse),
            ("fd00::4", Use::InUse),
            ("fd00::5", Use::Free),
            // excludeIps are left out of the record, held or not.
            ("10.16.0.1", Use::Unknown),
            ("10.16.0.105", Use::Unknown),
            ("fd00::1", Use::Unknown),
            ("::ffff:10.16.0.5", Use::Unknown),
        ] {
            assert_eq!(says(&record, address), want, "{address}");
        }
    }

    #[test]
    fn a_record_that_does_not_agree_with_itself_says_nothing() {
        let v4_only = |status: &str| {
            says(
                &Record::of(&subnet("", json!({})).with_in_use(status)),
                "10.16.0.5",
            )
        };
        for status in [
            "{}",
            "null",
            "[]",
            r#"{"v4usingIPs": 0, "v4usingIPrange": ""}"#,
            r#"{"v4usingIPs": 7, "v4usingIPrange": ""}"#,
            r#"{"v4usingIPs": 2, "v4usingIPrange": "10.16.0.2-10.16.0.4"}"#,
            r#"{"v4usingIPs": 4, "v4usingIPrange": "10.16.0.2-10.16.0.4"}"#,
            r#"{"v4usingIPrange": "10.16.0.2-10.16.0.4"}"#,
            r#"{"v4usingIPs": null, "v4usingIPrange": "10.16.0.2-10.16.0.4"}"#,
            r#"{"v4usingIPs": 3.0, "v4usingIPrange": "10.16.0.2-10.16.0.4"}"#,
            r#"{"v4usingIPs": -3, "v4usingIPrange": "10.16.0.2-10.16.0.4"}"#,
            r#"{"v4usingIPs": "abc", "v4usingIPrange": "10.16.0.2-10.16.0.4"}"#,
            r#"{"v4usingIPs": 3, "v4usingIPrange": 7}"#,
            r#"{"v4usingIPs": 3, "v4usingIPrange": "10.16.0.4-10.16.0.2"}"#,
            r#"{"v4usingIPs": 3, "v4usingIPrange": "10.16.0.2..10.16.0.4"}"#,
            r#"{"v4usingIPs": 3, "v4usingIPrange": "10.16.0.2-10.16.0.4,"}"#,
            r#"{"v4usingIPs": 3, "v6usingIPrange": "10.16.0.2-10.16.0.4"}"#,
            r#"{"v4usingIPs": 1, "v4usingIPrange": "fd00::2"}"#,
            r#"{"v4usingIPs": 3, "v4usingIPrange": "10.16.0.2-10.16.0.4", "v4usingIPs": 3}"#,
        ] {
            assert_eq!(v4_only(status), Use::Unknown, "{status}");
        }
        assert_eq!(
            v4_only(r#"{"v4usingIPs": 3, "v4usingIPrange": "10.16.0.2-10.16.0.4"}"#),
            Use::Free
        );
        assert_eq!(
            v4_only(r#"{"v4usingIPs": "3", "v4usingIPrange": "10.16.0.2-10.16.0.4"}"#),
            Use::Free
        );
        // One family's record says nothing of the other's addresses.
        let v6 = Record::of(
            &subnet("", json!({}))
                .with_in_use(r#"{"v4usingIPs": 3, "v4usingIPrange": "10.16.0.2-10.16.0.4"}"#),
        );
        assert_eq!(says(&v6, "fd00::5"), Use::Unknown);
        // An excludeIps entry that does not parse leaves the record unread.
        let bad = Record::of(
            &subnet("", json!({"excludeIps": ["10.16.0.300"]}))
                .with_in_use(r#"{"v4usingIPs": 3, "v4usingIPrange": "10.16.0.2-10.16.0.4"}"#),
        );
        assert_eq!(says(&bad, "10.16.0.5"), Use::Unknown);
    }
}
