//! I14's rules over plain values: the examples of the controller's IPAM
//! (pkg/ipam/subnet.go:768 `AddOrUpdateIPPool` at 1533681d7a6b).

use super::*;
use crate::k8s::fake::{self, FakeHost, typed};
use crate::k8s::kinds;
use rstest::rstest;
use serde_json::{Value, json};

/// A Subnet as the checks read it.
fn subnet(name: &str, spec: Value) -> Subnet {
    typed(fake::subnet(name, spec))
}

/// An IPPool as a request or the cluster holds it.
fn ippool(name: &str, spec: Value) -> IpPool {
    typed(fake::ippool(name, spec))
}

const V4: &str = "10.16.0.0/16";
const DUAL: &str = "10.16.0.0/16,fd00:10:16::/112";
const V6: &str = "fd00:10:16::/112";

/// Another pool's addresses, `10.16.0.10..10.16.0.20`.
const A_10_20: &[&str] = &["10.16.0.10..10.16.0.20"];

/// The decision for `ips` as pool `b` of subnet `s` (cidr `cidr`), with
/// the other pools `(name, ips)` stored.
fn decide_b(cidr: &str, others: &[(&str, &[&str])], ips: &[&str]) -> Verdict {
    let s = subnet("s", json!({"cidrBlock": cidr}));
    let pools: Vec<IpPool> = others
        .iter()
        .map(|(n, ips)| ippool(n, json!({"subnet": "s", "ips": ips})))
        .collect();
    decide(
        "b",
        &ippool("b", json!({"subnet": "s", "ips": ips})),
        Some(&s),
        &pools,
    )
}

/// Another pool of the subnet: its name and `ips`.
fn other<'a>(name: &'a str, ips: &'a [&'a str]) -> (&'a str, &'a [&'a str]) {
    (name, ips)
}

fn denied(code: u16, message: &str) -> Verdict {
    Err(Denial {
        code,
        message: message.to_string(),
    })
}

#[rstest]
#[case::ranges_addresses_and_cidrs(
    V4,
    &["10.16.0.1..10.16.0.5", "10.16.0.6", "10.16.1.0/30"],
    Ok(vec![])
)]
#[case::reversed_range(
    V4,
    &["10.16.0.5..10.16.0.1"],
    denied(
        400,
        r#"invalid ip range "10.16.0.5..10.16.0.1": 10.16.0.5 is greater than 10.16.0.1"#,
    )
)]
#[case::mask_33(
    V4,
    &["10.16.0.0/33"],
    denied(400, "invalid CIDR address: 10.16.0.0/33")
)]
// Ignored by the controller in an IPv4 subnet; refused here all the same.
#[case::octet_out_of_range(
    V4,
    &["10.16.0.300"],
    denied(400, r#"invalid IP address "10.16.0.300""#)
)]
#[case::leading_space(
    DUAL,
    &[" 10.16.0.1"],
    denied(400, r#"invalid IP address " 10.16.0.1""#)
)]
#[case::spaces_around_range_dots(
    DUAL,
    &["10.16.0.1 .. 10.16.0.5"],
    denied(400, r#"invalid IP address "10.16.0.1 ""#)
)]
#[case::range_trailing_text_ignored(V4, &["10.16.0.1..10.16.0.5..garbage"], Ok(vec![]))]
#[case::cidr_as_range_start(
    V4,
    &["10.16.0.0/24..10.16.1.0"],
    denied(400, r#"invalid IP address "10.16.0.0/24""#)
)]
#[case::v6_zone(
    V6,
    &["fe80::1%eth0"],
    denied(400, r#"invalid IP address "fe80::1%eth0""#)
)]
#[case::v6_to_v4_range(
    DUAL,
    &["fd00::1..10.0.0.1"],
    denied(
        400,
        r#"invalid ip range "fd00::1..10.0.0.1": fd00::1 is greater than 10.0.0.1"#,
    )
)]
fn entries_parse_as_the_controller_parses_them(
    #[case] cidr: &str,
    #[case] ips: &[&str],
    #[case] want: Verdict,
) {
    let got = decide_b(cidr, &[], ips).map(|_| vec![]);
    assert_eq!(got, want);
}

#[rstest]
#[case::overlapping_ranges(
    V4,
    &[other("a", A_10_20)],
    &["10.16.0.15..10.16.0.30"],
    Err("ippool b has conflict IPs with ippool a: 10.16.0.15-10.16.0.20")
)]
#[case::range_just_past_the_end(V4, &[other("a", A_10_20)], &["10.16.0.21..10.16.0.30"], Ok(()))]
#[case::range_touching_the_end(
    V4,
    &[other("a", A_10_20)],
    &["10.16.0.20..10.16.0.30"],
    Err("ippool b has conflict IPs with ippool a: 10.16.0.20")
)]
#[case::cidr_against_address_and_range(
    V4,
    &[other("a", &["10.16.0.1", "10.16.0.5..10.16.0.9"])],
    &["10.16.0.0/29"],
    Err("ippool b has conflict IPs with ippool a: 10.16.0.1,10.16.0.5-10.16.0.7")
)]
// Outside the CIDR still conflicts, as upstream.
#[case::outside_the_cidr(
    V4,
    &[other("a", &["192.168.0.1..192.168.0.10"])],
    &["192.168.0.5"],
    Err("ippool b has conflict IPs with ippool a: 192.168.0.5")
)]
// IPv6 is not compared in an IPv4 subnet.
#[case::v6_in_a_v4_subnet(V4, &[other("a", &["fd00::1..fd00::10"])], &["fd00::5"], Ok(()))]
#[case::v6_subnet_compares_v6_only(
    V6,
    &[other("a", &["10.16.0.1", "fd00:10:16::1..fd00:10:16::10"])],
    &["10.16.0.1", "fd00:10:16::8/125"],
    Err("ippool b has conflict IPs with ippool a: fd00:10:16::8-fd00:10:16::f")
)]
#[case::dual_stack_v6_conflict(
    DUAL,
    &[other("a", &["10.16.0.10", "fd00:10:16::10"])],
    &["10.16.0.11", "fd00:10:16::10"],
    Err("ippool b has conflict IPs with ippool a: fd00:10:16::10")
)]
// The IPv4 conflict comes before the bad IPv6 entry.
#[case::v4_conflict_before_bad_v6_entry(
    DUAL,
    &[other("a", &["10.16.0.10", "fd00:10:16::10"])],
    &["10.16.0.10", "abc"],
    Err("ippool b has conflict IPs with ippool a: 10.16.0.10")
)]
#[case::v6_cidr_and_address(
    DUAL,
    &[other("a", &["fd00:10:16::1..fd00:10:16::ff"])],
    &["fd00:10:16::f0/124", "fd00:10:16::5"],
    Err(
        "ippool b has conflict IPs with ippool a: fd00:10:16::5,fd00:10:16::f0-fd00:10:16::ff",
    )
)]
#[case::v4_mapped_v6_address(
    V4,
    &[other("a", &["::ffff:10.16.0.7"])],
    &["10.16.0.5..10.16.0.9"],
    Err("ippool b has conflict IPs with ippool a: 10.16.0.7")
)]
#[case::mixed_family_range(
    V4,
    &[other("a", &["10.16.0.1..fd00::5"])],
    &["10.16.0.200"],
    Err("ippool b has conflict IPs with ippool a: 10.16.0.200")
)]
// Several: the first by name, whatever the list order.
#[case::first_pool_by_name(
    V4,
    &[
        other("z", &["10.16.0.6..10.16.0.9"]),
        other("c", &["10.16.0.1..10.16.0.5"]),
    ],
    &["10.16.0.4..10.16.0.7"],
    Err("ippool b has conflict IPs with ippool c: 10.16.0.4-10.16.0.5")
)]
// A pool that does not parse is not in the controller's IPAM.
#[case::unparsable_pool_ignored(
    V4,
    &[other("a", &["10.16.0.5", "10.16.0.0/33"])],
    &["10.16.0.5"],
    Ok(())
)]
// Its own stored version is no conflict.
#[case::own_stored_version(
    V4,
    &[other("b", &["10.16.0.10..10.16.0.20"])],
    &["10.16.0.15..10.16.0.30"],
    Ok(())
)]
fn overlaps_in_the_subnets_families_name_the_first_pool(
    #[case] cidr: &str,
    #[case] others: &[(&str, &[&str])],
    #[case] ips: &[&str],
    #[case] want: Result<(), &str>,
) {
    let got = decide_b(cidr, others, ips).map(|_| ());
    assert_eq!(got, want.map_err(Denial::forbidden));
}

#[test]
fn pools_of_other_subnets_never_conflict() {
    let s = subnet("s", json!({"cidrBlock": V4}));
    let other = ippool("a", json!({"subnet": "t", "ips": ["10.16.0.5"]}));
    assert_eq!(
        decide(
            "b",
            &ippool("b", json!({"subnet": "s", "ips": ["10.16.0.5"]})),
            Some(&s),
            &[other]
        ),
        Ok(vec![])
    );
}

#[test]
fn warnings_say_what_is_never_allocated() {
    let s = subnet(
        "s",
        json!({"cidrBlock": "10.16.0.0/24", "excludeIps": [
            "10.15.255.250..10.16.0.5",
            "10.16.0.0",
            "10.16.0.255",
            "10.16.1.9",
            "10.16.0.0/28",
            "10.16.0.100",
        ]}),
    );
    let p = ippool(
        "p",
        json!({"subnet": "s", "ips": [
            "10.16.0.0..10.16.0.10",
            "10.16.0.100",
            "10.16.0.250..10.16.1.3",
            "fd00::1",
        ]}),
    );
    assert_eq!(
        decide("p", &p, Some(&s), &[]),
        Ok(vec![
            "ippool p: 10.16.1.0-10.16.1.3 never allocated: outside subnet s cidr 10.16.0.0/24"
                .to_string(),
            "ippool p: 10.16.0.1-10.16.0.5,10.16.0.100 never allocated: in excludeIps of subnet s"
                .to_string(),
            "ippool p: fd00::1 never allocated: outside subnet s cidr 10.16.0.0/24".to_string(),
        ])
    );
    // A subnet that does not exist yet: both families compared, one warning.
    let a = ippool("a", json!({"subnet": "later", "ips": ["fd00::5"]}));
    assert_eq!(
        decide(
            "p",
            &ippool("p", json!({"subnet": "later", "ips": ["fd00::1..fd00::9"]})),
            None,
            std::slice::from_ref(&a)
        ),
        Err(Denial::forbidden(
            "ippool p has conflict IPs with ippool a: fd00::5"
        ))
    );
    assert_eq!(
        decide(
            "p",
            &ippool("p", json!({"subnet": "later", "ips": ["10.0.0.1"]})),
            None,
            &[a]
        ),
        Ok(vec![
            "ippool p: subnet later does not exist yet".to_string()
        ])
    );
}

#[test]
fn huge_blocks_and_lists_stay_cheap() {
    let s = subnet("s", json!({"cidrBlock": "10.0.0.0/8,fd00::/64"}));
    let others = [ippool(
        "a",
        json!({"subnet": "s", "ips": ["fd00::/64", "10.0.0.0/8"]}),
    )];
    assert_eq!(
        decide(
            "b",
            &ippool("b", json!({"subnet": "s", "ips": ["::/0"]})),
            Some(&s),
            &others
        ),
        Err(Denial::forbidden(
            "ippool b has conflict IPs with ippool a: fd00::-fd00::ffff:ffff:ffff:ffff"
        ))
    );
    let many: Vec<String> = (0..20_000)
        .map(|i| format!("10.{}.{}.1", i / 256, i % 256))
        .collect();
    let refs: Vec<&str> = many.iter().map(String::as_str).collect();
    assert!(
        decide(
            "b",
            &ippool("b", json!({"subnet": "s", "ips": &refs})),
            Some(&s),
            &others
        )
        .is_err()
    );
}

#[test]
fn updates_keep_their_subnet_and_skip_unchanged_addresses() {
    let host = FakeHost::new([
        fake::subnet("s", json!({"cidrBlock": V4})),
        fake::ippool("a", json!({"subnet": "s", "ips": ["10.16.0.5"]})),
        fake::ippool("b", json!({"subnet": "s", "ips": ["10.16.0.5"]})),
    ]);
    let old = ippool("b", json!({"subnet": "s", "ips": ["10.16.0.5"]}));
    assert_eq!(
        validate(
            &ippool("b", json!({"subnet": "t", "ips": ["10.16.0.5"]})),
            Some(&old),
            "b",
            &host.cluster()
        ),
        Err(Denial::bad_request(
            "ippool b: spec.subnet cannot change from s to t"
        ))
    );
    // Stored before the policy: a change of anything else is not re-decided.
    assert_eq!(validate(&old, Some(&old), "b", &host.cluster()), Ok(vec![]));
    assert_eq!(
        validate(
            &ippool(
                "b",
                json!({"subnet": "s", "ips": ["10.16.0.5", "10.16.0.6"]})
            ),
            Some(&old),
            "b",
            &host.cluster()
        ),
        Err(Denial::forbidden(
            "ippool b has conflict IPs with ippool a: 10.16.0.5"
        ))
    );
    let mut failing = FakeHost::new([fake::subnet("s", json!({"cidrBlock": V4}))]);
    failing.fail(&kinds::IPPOOL, "boom");
    assert_eq!(
        validate(
            &ippool("c", json!({"subnet": "s", "ips": ["10.16.0.7"]})),
            None,
            "c",
            &failing.cluster()
        ),
        Err(Denial::bad_request(
            "cannot list kubeovn.io/v1 IPPool: error invoking host capability kubernetes.list_resources_all: boom"
        ))
    );
}
