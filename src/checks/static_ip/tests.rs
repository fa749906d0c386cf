use super::*;
use crate::checks::static_ip::network::{IP_ADDRESS, IP_POOL, LOGICAL_SWITCH};
use crate::checks::static_ip::owner::{WorkloadKind, statefulset_pod};
use crate::checks::static_ip::pools::Pool;
use crate::k8s::fake::{FakeHost, annotations, ip, ippool, object, subnet, typed, with_status};
use crate::k8s::kinds;
use crate::k8s::objects::{Ip, OwnerReference};
use crate::settings::Settings;
use rstest::rstest;
use serde_json::{Value, json};
use std::net::IpAddr;

/// `ovn-default`, `subnet-a`, `p2p`, the IPPool `pool-a`, and these IP objects.
fn cluster(ips: Vec<Value>) -> FakeHost {
    let mut host = FakeHost::new([
        subnet(
            "ovn-default",
            json!({"cidrBlock": "10.16.0.0/16,fd00:10:16::/112", "gateway": "10.16.0.1,fd00:10:16::1", "default": true}),
        ),
        subnet(
            "subnet-a",
            json!({"cidrBlock": "10.70.0.0/24", "gateway": "10.70.0.1"}),
        ),
        subnet("p2p", json!({"cidrBlock": "10.80.0.0/31", "gateway": ""})),
        ippool("pool-a", json!({})),
    ]);
    host.extend(ips);
    host
}

/// The Namespace `default` with these annotations.
fn namespace(pairs: &[(&str, &str)]) -> Value {
    object(
        &kinds::NAMESPACE,
        "default",
        json!({"metadata": {"annotations": annotations(pairs)}}),
    )
}

fn pod(pairs: &[(&str, &str)], cluster: &FakeHost) -> Result<(), Denial> {
    pod_of(pairs, None, cluster)
}

fn pod_of(
    pairs: &[(&str, &str)],
    controller: Option<Workload>,
    cluster: &FakeHost,
) -> Result<(), Denial> {
    pod_named("app-1", pairs, controller, cluster)
}

/// A pod named `name` in `default`, a StatefulSet's when its controller and
/// name say so (I13).
fn pod_named(
    name: &str,
    pairs: &[(&str, &str)],
    controller: Option<Workload>,
    cluster: &FakeHost,
) -> Result<(), Denial> {
    let annotations = annotations(pairs);
    validate(
        &pod_claim(name, &annotations, controller),
        &Settings::default(),
        &cluster.cluster(),
    )
}

fn workload(
    kind: WorkloadKind,
    name: &str,
    pairs: &[(&str, &str)],
    cluster: &FakeHost,
) -> Result<(), Denial> {
    let annotations = annotations(pairs);
    validate(
        &workload_claim(kind, name, &annotations),
        &Settings::default(),
        &cluster.cluster(),
    )
}

/// The claim of a pod named `name` in `default`, a StatefulSet's when its
/// controller and name say so (I13).
fn pod_claim<'a>(
    name: &'a str,
    annotations: &'a BTreeMap<String, String>,
    controller: Option<Workload>,
) -> Claim<'a> {
    let owners: Vec<OwnerReference> = controller
        .iter()
        .filter(|w| w.kind == WorkloadKind::StatefulSet)
        .map(|w| OwnerReference {
            api_version: "apps/v1".into(),
            kind: "StatefulSet".into(),
            name: w.name.clone(),
            controller: true,
        })
        .collect();
    Claim {
        annotations,
        namespace: "default",
        owner_name: name,
        subject: Subject::Pod {
            statefulset: statefulset_pod(name, &owners),
            controller,
            vm: false,
        },
    }
}

/// The claim of a workload named `name` in `default`.
fn workload_claim<'a>(
    kind: WorkloadKind,
    name: &'a str,
    annotations: &'a BTreeMap<String, String>,
) -> Claim<'a> {
    Claim {
        annotations,
        namespace: "default",
        owner_name: name,
        subject: Subject::Workload(Workload {
            kind,
            name: name.into(),
        }),
    }
}

fn conflict(address: &str, cr: &str, stored: &str) -> Result<(), Denial> {
    Err(Denial::forbidden(format!(
        "annotation static-ip {address} is conflict with ip crd {cr}, ip {stored}"
    )))
}

/// The IP object of another pod holding 10.16.0.20 in `ovn-default`.
fn held() -> Vec<Value> {
    vec![ip(
        "other.default",
        json!({"subnet": "ovn-default", "ipAddress": "10.16.0.20", "podName": "other", "namespace": "default"}),
    )]
}

#[rstest]
#[case::free_address(
    vec![(IP_ADDRESS, "10.16.0.21")],
    held(),
    Ok(())
)]
#[case::held_address(
    vec![(IP_ADDRESS, "10.16.0.20")],
    held(),
    conflict("10.16.0.20", "other.default", "10.16.0.20")
)]
#[case::other_subnet_is_no_conflict(
    vec![(IP_ADDRESS, "10.70.0.20"), (LOGICAL_SWITCH, "subnet-a")],
    vec![ip(
        "other.default",
        json!({"subnet": "ovn-default", "ipAddress": "10.70.0.20", "podName": "other", "namespace": "default"}),
    )],
    Ok(())
)]
#[case::own_cr_i2(
    vec![(IP_ADDRESS, "10.16.0.20")],
    vec![ip(
        "app-1.default",
        json!({"subnet": "ovn-default", "ipAddress": "10.16.0.20", "podName": "app-1", "namespace": "default"}),
    )],
    Ok(())
)]
#[case::same_name_other_namespace_i2(
    vec![(IP_ADDRESS, "10.16.0.20")],
    vec![ip(
        "app-1.team-a",
        json!({"subnet": "ovn-default", "ipAddress": "10.16.0.20", "podName": "app-1", "namespace": "team-a"}),
    )],
    conflict("10.16.0.20", "app-1.team-a", "10.16.0.20")
)]
#[case::non_canonical_ipv6_cr_matches_by_value_i1(
    vec![(IP_ADDRESS, "fd00:10:16::20")],
    vec![ip(
        "v6.default",
        json!({"subnet": "ovn-default", "ipAddress": "fd00:10:16:0::20", "podName": "v6", "namespace": "default"}),
    )],
    conflict("fd00:10:16::20", "v6.default", "fd00:10:16:0::20")
)]
#[case::upper_case_ipv6_cr_blocks_nothing_else_i1(
    vec![(IP_ADDRESS, "fd00:10:16::30")],
    vec![ip(
        "legacy.default",
        json!({"subnet": "ovn-default", "ipAddress": "FD00:10:16::5", "podName": "legacy", "namespace": "default"}),
    )],
    Ok(())
)]
#[case::several_holders_first_by_name_i12(
    vec![(IP_ADDRESS, "10.16.0.20")],
    vec![
        ip(
            "zz.default",
            json!({"subnet": "ovn-default", "ipAddress": "10.16.0.20", "podName": "zz", "namespace": "default"}),
        ),
        ip(
            "aa.default",
            json!({"subnet": "ovn-default", "ipAddress": "10.16.0.20", "podName": "aa", "namespace": "default"}),
        ),
    ],
    conflict("10.16.0.20", "aa.default", "10.16.0.20")
)]
#[case::dual_stack_conflict_on_the_v6_part(
    vec![(IP_ADDRESS, "10.16.0.21,fd00:10:16::20")],
    vec![ip(
        "d.default",
        json!({"subnet": "ovn-default", "ipAddress": "10.16.0.20,fd00:10:16::20", "podName": "d", "namespace": "default"}),
    )],
    conflict("fd00:10:16::20", "d.default", "10.16.0.20,fd00:10:16::20")
)]
#[case::two_ipv4(
    vec![(IP_ADDRESS, "10.16.0.2,10.16.0.3")],
    vec![],
    Err(Denial::forbidden(
        "multiple IPv4 addresses in ip_address annotation \"10.16.0.2,10.16.0.3\"",
    ))
)]
#[case::pool_name_exists(
    vec![(IP_POOL, "pool-a")],
    vec![],
    Ok(())
)]
#[case::pool_name_missing(
    vec![(IP_POOL, "pool-b")],
    vec![],
    Err(Denial::forbidden("ippool \"pool-b\" not found"))
)]
#[case::pool_name_not_a_valid_name(
    vec![(IP_POOL, "Pool B")],
    vec![],
    Err(Denial::forbidden("ippool \"Pool B\" not found"))
)]
#[case::pool_entry_held(
    vec![(IP_POOL, "10.16.0.19,10.16.0.20")],
    held(),
    conflict("10.16.0.20", "other.default", "10.16.0.20")
)]
#[case::pool_groups_i4(
    vec![(IP_POOL, "10.16.0.21;10.16.0.20")],
    held(),
    conflict("10.16.0.20", "other.default", "10.16.0.20")
)]
#[case::pool_bad_second_entry(
    vec![(IP_POOL, "10.16.0.21,10.16.0.300")],
    vec![],
    Err(Denial::forbidden(
        "invalid static ip/ippool annotation value: 10.16.0.21,10.16.0.300",
    ))
)]
#[case::format_error_first_400(
    vec![(IP_ADDRESS, "10.16.0.300")],
    held(),
    Err(Denial::bad_request(
        "10.16.0.300 is not a valid ovn.kubernetes.io/ip_address",
    ))
)]
// I16: any tenant can write the annotation; upstream skips the pod.
#[case::migration_annotation_is_no_exemption(
    vec![(IP_ADDRESS, "10.16.0.20"), (MIGRATION_JOB, "job")],
    held(),
    Err(Denial::forbidden(
        "annotation static-ip 10.16.0.20 is conflict with ip crd other.default, ip 10.16.0.20",
    ))
)]
#[case::no_static_ip_no_checks(
    vec![("ovn.kubernetes.io/mac_address", "bad")],
    held(),
    Ok(())
)]
#[case::outside_the_subnet_i6(
    vec![(IP_ADDRESS, "10.17.0.5")],
    vec![],
    Err(Denial::bad_request(
        "static ip 10.17.0.5 is not in subnet ovn-default cidr 10.16.0.0/16,fd00:10:16::/112",
    ))
)]
#[case::the_gateway_i6(
    vec![(IP_ADDRESS, "fd00:10:16::1")],
    vec![],
    Err(Denial::bad_request(
        "static ip fd00:10:16::1 is the gateway of subnet ovn-default",
    ))
)]
#[case::network_address_i6(
    vec![(IP_ADDRESS, "10.70.0.0"), (LOGICAL_SWITCH, "subnet-a")],
    vec![],
    Err(Denial::bad_request(
        "static ip 10.70.0.0 is the network address of subnet subnet-a",
    ))
)]
#[case::broadcast_i6(
    vec![(IP_ADDRESS, "10.70.0.255"), (LOGICAL_SWITCH, "subnet-a")],
    vec![],
    Err(Denial::bad_request(
        "static ip 10.70.0.255 is the broadcast address of subnet subnet-a",
    ))
)]
#[case::ipv6_last_address_i6(
    vec![(IP_ADDRESS, "fd00:10:16::ffff")],
    vec![],
    Err(Denial::bad_request(
        "static ip fd00:10:16::ffff is the last address of subnet ovn-default",
    ))
)]
#[case::ipv6_one_before_the_last_i6(
    vec![(IP_ADDRESS, "fd00:10:16::fffe")],
    vec![],
    Ok(())
)]
#[case::point_to_point_31_ends_are_hosts_i6(
    vec![(IP_ADDRESS, "10.80.0.1"), (LOGICAL_SWITCH, "p2p")],
    vec![],
    Ok(())
)]
#[case::unknown_subnet_no_i6(
    vec![(IP_ADDRESS, "1.2.3.4"), (LOGICAL_SWITCH, "nowhere")],
    vec![],
    Ok(())
)]
#[case::conflict_before_i6(
    vec![(IP_ADDRESS, "10.16.0.1")],
    vec![ip(
        "gw.default",
        json!({"subnet": "ovn-default", "ipAddress": "10.16.0.1", "podName": "gw", "namespace": "default"}),
    )],
    conflict("10.16.0.1", "gw.default", "10.16.0.1")
)]
#[case::attachment_conflict_i7(
    vec![
        ("net1.default.ovn.kubernetes.io/ip_address", "10.70.0.9"),
        ("net1.default.ovn.kubernetes.io/logical_switch", "subnet-a"),
    ],
    vec![ip(
        "x.default.net1.default.ovn",
        json!({"subnet": "subnet-a", "ipAddress": "10.70.0.9", "podName": "x", "namespace": "default"}),
    )],
    conflict("10.70.0.9", "x.default.net1.default.ovn", "10.70.0.9")
)]
#[case::attachment_without_logical_switch_is_not_checked_i7(
    vec![("net1.default.ovn.kubernetes.io/ip_address", "10.70.0.9")],
    vec![ip(
        "x.default.net1.default.ovn",
        json!({"subnet": "subnet-a", "ipAddress": "10.70.0.9", "podName": "x", "namespace": "default"}),
    )],
    Ok(())
)]
#[case::attachment_outside_its_subnet_i6_i7(
    vec![
        ("net1.default.ovn.kubernetes.io/ip_address", "10.71.0.9"),
        ("net1.default.ovn.kubernetes.io/logical_switch", "subnet-a"),
    ],
    vec![],
    Err(Denial::bad_request(
        "static ip 10.71.0.9 is not in subnet subnet-a cidr 10.70.0.0/24",
    ))
)]
fn pod_conflicts(
    #[case] pairs: Vec<(&str, &str)>,
    #[case] ips: Vec<Value>,
    #[case] want: Result<(), Denial>,
) {
    assert_eq!(pod(&pairs, &cluster(ips)), want);
}

#[test]
fn subnet_of_a_pod_without_logical_switch() {
    // I5: namespace annotation, then a Subnet listing the namespace, then the default Subnet.
    let held = vec![ip(
        "o.default",
        json!({"subnet": "ns-subnet", "ipAddress": "10.70.0.9", "podName": "o", "namespace": "default"}),
    )];
    let mut c = cluster(held.clone());
    c.extend([namespace(&[(LOGICAL_SWITCH, "ns-subnet,other")])]);
    assert_eq!(
        pod(&[(IP_ADDRESS, "10.70.0.9")], &c),
        conflict("10.70.0.9", "o.default", "10.70.0.9")
    );

    let mut c = cluster(held.clone());
    c.extend([subnet(
        "ns-subnet",
        json!({"cidrBlock": "10.70.0.0/24", "gateway": "10.70.0.1", "namespaces": ["default"]}),
    )]);
    assert_eq!(
        pod(&[(IP_ADDRESS, "10.70.0.9")], &c),
        conflict("10.70.0.9", "o.default", "10.70.0.9")
    );

    // Nothing binds the namespace: the default subnet, where 10.70.0.9 does not belong.
    assert_eq!(
        pod(&[(IP_ADDRESS, "10.70.0.9")], &cluster(held)),
        Err(Denial::bad_request(
            "static ip 10.70.0.9 is not in subnet ovn-default cidr 10.16.0.0/16,fd00:10:16::/112"
        ))
    );
}

#[test]
fn workload_members_own_their_addresses() {
    use WorkloadKind::*;
    let ips = vec![
        ip(
            "db-0.default",
            json!({"subnet": "ovn-default", "ipAddress": "10.16.0.50", "podName": "db-0", "namespace": "default"}),
        ),
        ip(
            "web-7d4b9c8f5-x2x7q.default",
            json!({"subnet": "ovn-default", "ipAddress": "10.16.0.40", "podName": "web-7d4b9c8f5-x2x7q", "namespace": "default"}),
        ),
        ip(
            "stranger.default",
            json!({"subnet": "ovn-default", "ipAddress": "10.16.0.60", "podName": "stranger", "namespace": "default"}),
        ),
    ];
    let c = cluster(ips);
    assert_eq!(
        workload(StatefulSet, "db", &[(IP_POOL, "10.16.0.50,10.16.0.51")], &c),
        Ok(())
    );
    assert_eq!(
        workload(Deployment, "web", &[(IP_POOL, "10.16.0.40,10.16.0.41")], &c),
        Ok(())
    );
    assert_eq!(
        workload(Deployment, "web", &[(IP_POOL, "10.16.0.40,10.16.0.60")], &c),
        conflict("10.16.0.60", "stranger.default", "10.16.0.60")
    );
    // StatefulSet "db" does not own Deployment-style names, nor "db" another workload's.
    assert_eq!(
        workload(StatefulSet, "web", &[(IP_POOL, "10.16.0.40")], &c),
        conflict("10.16.0.40", "web-7d4b9c8f5-x2x7q.default", "10.16.0.40")
    );
    // ip_address alone does not trigger a workload check (upstream).
    assert_eq!(
        workload(Deployment, "x", &[(IP_ADDRESS, "10.16.0.60")], &c),
        Ok(())
    );
}

#[test]
fn pods_skip_sibling_entries_and_need_a_free_one() {
    let sts = Some(Workload {
        kind: WorkloadKind::StatefulSet,
        name: "db".into(),
    });
    let ips = vec![
        ip(
            "db-0.default",
            json!({"subnet": "ovn-default", "ipAddress": "10.16.0.50", "podName": "db-0", "namespace": "default"}),
        ),
        ip(
            "db-1.default",
            json!({"subnet": "ovn-default", "ipAddress": "fd00:10:16::51", "podName": "db-1", "namespace": "default"}),
        ),
    ];
    let c = cluster(ips);
    assert_eq!(
        pod_of(&[(IP_POOL, "10.16.0.50,10.16.0.51")], sts.clone(), &c),
        Ok(())
    );
    assert_eq!(
        pod_of(&[(IP_POOL, "10.16.0.50")], sts.clone(), &c),
        Err(Denial::forbidden(
            "ip_pool 10.16.0.50 has no free address in subnet ovn-default"
        ))
    );
    // Dual-stack pool: the IPv6 family has no free entry.
    assert_eq!(
        pod_of(&[(IP_POOL, "10.16.0.51,fd00:10:16::51")], sts.clone(), &c),
        Err(Denial::forbidden(
            "ip_pool 10.16.0.51,fd00:10:16::51 has no free address in subnet ovn-default"
        ))
    );
    // A pod not controlled by db: its members' addresses are conflicts.
    assert_eq!(
        pod_of(&[(IP_POOL, "10.16.0.50")], None, &c),
        conflict("10.16.0.50", "db-0.default", "10.16.0.50")
    );
}

#[rstest]
#[case::one_address("10.16.0.1", &[1])]
#[case::two_v4("10.16.0.1,10.16.0.2", &[1, 1])]
#[case::three_v4("10.16.0.1,10.16.0.2,10.16.0.3", &[1, 1, 1])]
// One IPv4 and one IPv6 address, in either order: one dual-stack group.
#[case::v4_and_v6("10.16.0.1,fd00::1", &[2])]
#[case::v6_and_v4_spaced("fd00::1, 10.16.0.1", &[2])]
#[case::two_v6("fd00::1,fd00::2", &[1, 1])]
// Three entries are three groups, whatever their families.
#[case::three_mixed("10.16.0.1,fd00::1,10.16.0.2", &[1, 1, 1])]
// A `;` anywhere: `;` separates the groups, `,` the addresses of one.
#[case::semicolon("10.16.0.1;10.16.0.2", &[1, 1])]
#[case::dual_stack_groups("10.16.0.1,fd00::1;10.16.0.2,fd00::2", &[2, 2])]
#[case::pair_and_single("10.16.0.1,10.16.0.2;10.16.0.3", &[2, 1])]
#[case::trailing_semicolon("10.16.0.1;", &[1, 1])]
// Two entries of different families as CheckProtocol reads them,
// untrimmed ("" for what does not parse): one group
// (pod.go:2666, asked of the controller's code).
#[case::v4_and_unparsable("10.16.0.1,x", &[2])]
#[case::space_after_comma("10.16.0.1, 10.16.0.2", &[2])]
#[case::space_before_comma("10.16.0.1 ,10.16.0.2", &[2])]
// Both unparsable as written: the same "" family, two groups.
#[case::both_unparsable(" 10.16.0.1 , fd00::1", &[1, 1])]
// Three entries, or groups split on ';', are trimmed and parse.
#[case::three_trimmed(" 10.16.0.1 , 10.16.0.2 ,10.16.0.3", &[1, 1, 1])]
#[case::groups_trimmed(" 10.16.0.1 ; 10.16.0.2", &[1, 1])]
fn pools_split_into_the_controllers_groups(#[case] value: &str, #[case] sizes: &[usize]) {
    let pool = Pool::parse(value);
    let got: Vec<usize> = pool.groups().map(<[_]>::len).collect();
    assert_eq!(got, sizes);
    assert_eq!(pool.group_count(), sizes.len());
    assert_eq!(pool.items.len(), sizes.iter().sum::<usize>());
    assert_eq!(pool.group(sizes.len()), None);
    assert_eq!(pool.group(usize::MAX), None);
}

#[test]
fn a_group_is_trimmed_but_not_its_addresses() {
    let pool = Pool::parse("10.16.0.1,fd00::1;10.16.0.2,fd00::2");
    assert_eq!(
        pool.group(1),
        Some(&["10.16.0.2".parse::<IpAddr>().ok(), "fd00::2".parse().ok()][..])
    );
    // A group is trimmed, its addresses are not: the controller cannot parse
    // " fd00::2", so that group is never allocated.
    let pool = Pool::parse(" 10.16.0.1,fd00::1 ; 10.16.0.2, fd00::2");
    assert_eq!(
        pool.group(0),
        Some(&["10.16.0.1".parse::<IpAddr>().ok(), "fd00::1".parse().ok()][..])
    );
    assert_eq!(
        pool.group(1),
        Some(&["10.16.0.2".parse::<IpAddr>().ok(), None][..])
    );
    assert_eq!(
        pool.items.iter().flatten().count(),
        4,
        "upstream trims every item"
    );
}

fn statefulset(name: &str) -> Option<Workload> {
    Some(Workload {
        kind: WorkloadKind::StatefulSet,
        name: name.into(),
    })
}

/// The IP objects of StatefulSet `db`'s pods `db-0` and `db-1` (twice).
fn db_ips() -> Vec<Value> {
    vec![
        ip(
            "db-0.default",
            json!({"subnet": "ovn-default", "ipAddress": "10.16.0.51", "podName": "db-0", "namespace": "default"}),
        ),
        ip(
            "db-1.default",
            json!({"subnet": "ovn-default", "ipAddress": "10.16.0.52,fd00:10:16::52", "podName": "db-1", "namespace": "default"}),
        ),
        ip(
            "zz-db-1.default",
            json!({"subnet": "ovn-default", "ipAddress": "10.16.0.52", "podName": "db-1", "namespace": "default"}),
        ),
    ]
}

fn no_entry(pool: &str, ordinal: &str) -> Result<(), Denial> {
    Err(Denial::forbidden(format!(
        "ip_pool {pool} has no entry for ordinal {ordinal} of statefulset db"
    )))
}

#[rstest]
// Its own group, free.
#[case::own_group_free("db-2", "10.16.0.50,10.16.0.51,10.16.0.53", Ok(()))]
// Its own group, held by itself.
#[case::own_group_held_by_itself("db-1", "10.16.0.50;10.16.0.52,fd00:10:16::52", Ok(()))]
// Its group held by a sibling: the first held address, the first CR by name.
#[case::own_group_held_by_a_sibling(
    "db-1",
    "10.16.0.50,10.16.0.51,10.16.0.52",
    conflict("10.16.0.51", "db-0.default", "10.16.0.51")
)]
#[case::ordinal_0_dual_stack(
    "db-0",
    "10.16.0.50,fd00:10:16::51;10.16.0.52,fd00:10:16::52",
    Ok(())
)]
#[case::own_group_v6_held_by_a_sibling(
    "db-2",
    "10.16.0.50;10.16.0.50;10.16.0.53,fd00:10:16::52",
    conflict("fd00:10:16::52", "db-1.default", "10.16.0.52,fd00:10:16::52")
)]
// Another group free does not help.
#[case::another_group_free_does_not_help(
    "db-2",
    "10.16.0.59,10.16.0.60,10.16.0.51",
    conflict("10.16.0.51", "db-0.default", "10.16.0.51")
)]
// Past the last group.
#[case::past_the_last_group(
    "db-3",
    "10.16.0.50,10.16.0.53,10.16.0.54",
    no_entry("10.16.0.50,10.16.0.53,10.16.0.54", "3")
)]
// A v4,v6 comma pair is one group: ordinal 1 has none.
#[case::comma_pair_is_one_group(
    "db-1",
    "10.16.0.60,fd00:10:16::60",
    no_entry("10.16.0.60,fd00:10:16::60", "1")
)]
#[case::comma_pair_at_ordinal_0("db-0", "10.16.0.60,fd00:10:16::60", Ok(()))]
// Two IPv4 addresses are two groups.
#[case::two_v4_are_two_groups("db-1", "10.16.0.60,10.16.0.61", Ok(()))]
// Not a number after the last '-': Atoi's 0, as the controller.
#[case::letter_ordinal_group_0_held(
    "db-x",
    "10.16.0.51,10.16.0.60",
    conflict("10.16.0.51", "db-0.default", "10.16.0.51")
)]
#[case::letter_ordinal_group_0_free("db-x", "10.16.0.60,10.16.0.51", Ok(()))]
// Huge ordinals: past every group, never a panic.
#[case::ordinal_past_i64(
    "db-99999999999999999999",
    "10.16.0.60",
    no_entry("10.16.0.60", "9223372036854775807")
)]
#[case::ordinal_past_u32("db-4294967296", "10.16.0.60", no_entry("10.16.0.60", "4294967296"))]
// A name not starting with the StatefulSet's: any free group will do.
#[case::other_name_any_free_group("other-1", "10.16.0.51,10.16.0.60", Ok(()))]
fn a_statefulset_pod_takes_the_group_at_its_ordinal(
    #[case] name: &str,
    #[case] pool: &str,
    #[case] want: Result<(), Denial>,
) {
    assert_eq!(
        pod_named(
            name,
            &[(IP_POOL, pool)],
            statefulset("db"),
            &cluster(db_ips())
        ),
        want
    );
}

#[test]
fn a_strangers_address_anywhere_conflicts_first() {
    let db = statefulset("db");
    // Upstream's conflict check comes first: a stranger's address anywhere.
    let c = cluster(vec![ip(
        "stranger.default",
        json!({"subnet": "ovn-default", "ipAddress": "10.16.0.70", "podName": "stranger", "namespace": "default"}),
    )]);
    assert_eq!(
        pod_named("db-5", &[(IP_POOL, "10.16.0.60,10.16.0.70")], db, &c),
        conflict("10.16.0.70", "stranger.default", "10.16.0.70")
    );
}

/// Deployment `web`.
fn web() -> Option<Workload> {
    Some(Workload {
        kind: WorkloadKind::Deployment,
        name: "web".into(),
    })
}

/// The IP objects of two of Deployment `web`'s pods, dual stack.
fn web_ips() -> Vec<Value> {
    vec![
        ip(
            "web-7b8c9d4f6-h2n9w.default",
            json!({"subnet": "ovn-default", "ipAddress": "10.16.0.30,fd00:10:16::60", "podName": "web-7b8c9d4f6-h2n9w", "namespace": "default"}),
        ),
        ip(
            "web-7b8c9d4f6-r5x4l.default",
            json!({"subnet": "ovn-default", "ipAddress": "10.16.0.61,fd00:10:16::31", "podName": "web-7b8c9d4f6-r5x4l", "namespace": "default"}),
        ),
    ]
}

fn none_free(pool: &str) -> Result<(), Denial> {
    Err(Denial::forbidden(format!(
        "ip_pool {pool} has no free address in subnet ovn-default"
    )))
}

#[rstest]
// One address of each group held: neither group is free.
#[case::one_address_of_each_group_held(
    "10.16.0.30,fd00:10:16::30;10.16.0.31,fd00:10:16::31",
    none_free("10.16.0.30,fd00:10:16::30;10.16.0.31,fd00:10:16::31")
)]
#[case::second_group_free(
    "10.16.0.30,fd00:10:16::30;10.16.0.32,fd00:10:16::32",
    Ok(())
)]
// The comma pair is one group.
#[case::comma_pair_held("10.16.0.30,fd00:10:16::30", none_free("10.16.0.30,fd00:10:16::30"))]
#[case::two_v4_groups_one_free("10.16.0.30,10.16.0.31", Ok(()))]
#[case::both_groups_held("10.16.0.30;10.16.0.61", none_free("10.16.0.30;10.16.0.61"))]
fn other_pods_need_a_wholly_free_group(#[case] pool: &str, #[case] want: Result<(), Denial>) {
    assert_eq!(
        pod_named(
            "web-5c9d8f7b4-qx8zt",
            &[(IP_POOL, pool)],
            web(),
            &cluster(web_ips())
        ),
        want
    );
}

#[test]
fn attachment_pools_need_a_wholly_free_group_too() {
    let web = web();
    let c = cluster(web_ips());
    // Attachment pools alike (I7).
    let pairs = [
        (
            "net1.default.ovn.kubernetes.io/logical_switch",
            "ovn-default",
        ),
        (
            "net1.default.ovn.kubernetes.io/ip_pool",
            "10.16.0.30,fd00:10:16::30;10.16.0.31,fd00:10:16::31",
        ),
    ];
    assert_eq!(
        pod_named("web-5c9d8f7b4-qx8zt", &pairs, web.clone(), &c),
        none_free("10.16.0.30,fd00:10:16::30;10.16.0.31,fd00:10:16::31")
    );
    let pairs = [
        (
            "net1.default.ovn.kubernetes.io/logical_switch",
            "ovn-default",
        ),
        (
            "net1.default.ovn.kubernetes.io/ip_pool",
            "10.16.0.40,10.16.0.41",
        ),
    ];
    let c = cluster(vec![ip(
        "db-0.default.net1.default.ovn",
        json!({"subnet": "ovn-default", "ipAddress": "10.16.0.41", "podName": "db-0", "namespace": "default"}),
    )]);
    assert_eq!(
        pod_named("db-1", &pairs, statefulset("db"), &c),
        conflict("10.16.0.41", "db-0.default.net1.default.ovn", "10.16.0.41")
    );
    assert_eq!(pod_named("db-0", &pairs, statefulset("db"), &c), Ok(()));
}

fn warn(groups: usize, replicas: u64) -> String {
    format!("ip_pool has {groups} entries for {replicas} replicas")
}

/// The pool annotation of attachment `net1` in `default`.
const ATTACHED_POOL: &str = "net1.default.ovn.kubernetes.io/ip_pool";

#[rstest]
#[case::two_groups_three_replicas(
    vec![(IP_POOL, "10.16.0.40,10.16.0.41")],
    3,
    vec![warn(2, 3)]
)]
#[case::two_groups_two_replicas(vec![(IP_POOL, "10.16.0.40,10.16.0.41")], 2, vec![])]
#[case::two_groups_one_replica(vec![(IP_POOL, "10.16.0.40,10.16.0.41")], 1, vec![])]
#[case::two_groups_no_replicas(vec![(IP_POOL, "10.16.0.40,10.16.0.41")], 0, vec![])]
#[case::dual_stack_group_two_replicas(vec![(IP_POOL, "10.16.0.40,fd00::40")], 2, vec![warn(1, 2)])]
#[case::three_groups_four_replicas(
    vec![(IP_POOL, "10.16.0.40;10.16.0.41;10.16.0.42")],
    4,
    vec![warn(3, 4)]
)]
#[case::one_group_one_replica(vec![(IP_POOL, "10.16.0.58")], 1, vec![])]
// An IPPool's name is no list of addresses.
#[case::ippool_name(vec![(IP_POOL, "pool-a")], 5, vec![])]
#[case::no_pool(vec![], 5, vec![])]
// Attachment pools too; the same text once.
#[case::attachment_pool(vec![(ATTACHED_POOL, "10.70.0.5,10.70.0.6")], 3, vec![warn(2, 3)])]
#[case::both_pools_warn(
    vec![(IP_POOL, "10.16.0.40"), (ATTACHED_POOL, "10.70.0.5,10.70.0.6")],
    3,
    vec![warn(1, 3), warn(2, 3)]
)]
#[case::same_text_once(
    vec![
        (IP_POOL, "10.16.0.40,10.16.0.41"),
        (ATTACHED_POOL, "10.70.0.5,10.70.0.6"),
    ],
    3,
    vec![warn(2, 3)]
)]
#[case::u64_max_replicas(
    vec![(IP_POOL, "10.16.0.40")],
    u64::MAX,
    vec![warn(1, u64::MAX)]
)]
fn workloads_warn_when_replicas_outnumber_groups(
    #[case] pairs: Vec<(&str, &str)>,
    #[case] replicas: u64,
    #[case] want: Vec<String>,
) {
    let annotations = annotations(&pairs);
    let (primary, attached) = (primary(&annotations), attachments(&annotations));
    let nics: Vec<&Nic<'_>> = std::iter::once(&primary).chain(&attached).collect();
    assert_eq!(pool_warnings(&nics, replicas), want);
}

#[test]
fn lookup_failures_reject_with_400() {
    let mut c = cluster(vec![]);
    c.fail(&kinds::IP, "boom");
    assert_eq!(
        pod(
            &[(IP_ADDRESS, "10.16.0.5"), (LOGICAL_SWITCH, "ovn-default")],
            &c
        ),
        Err(Denial::bad_request(
            "cannot list kubeovn.io/v1 IP: error invoking host capability kubernetes.list_resources_all: boom"
        ))
    );
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    /// An address of ovn-default (10.16.0.0/16, fd00:10:16::/112) that is
    /// neither its gateway, its network nor its last address (refused in
    /// either family, I6: `ipv6_last_address_i6` above).
    fn v4() -> impl Strategy<Value = String> {
        (1u8..=254, 2u8..=254).prop_map(|(c, d)| format!("10.16.{c}.{d}"))
    }

    fn v6() -> impl Strategy<Value = String> {
        (2u16..=0xfffe).prop_map(|h| format!("fd00:10:16::{h:x}"))
    }

    /// `v4`, `v6` or `v4,v6`, as a static-IP annotation or an IP CR's fields.
    fn addresses() -> impl Strategy<Value = (Option<String>, Option<String>)> {
        prop_oneof![
            v4().prop_map(|a| (Some(a), None)),
            v6().prop_map(|b| (None, Some(b))),
            (v4(), v6()).prop_map(|(a, b)| (Some(a), Some(b))),
        ]
    }

    fn joined((v4, v6): &(Option<String>, Option<String>)) -> String {
        [v4, v6]
            .into_iter()
            .flatten()
            .cloned()
            .collect::<Vec<_>>()
            .join(",")
    }

    /// An IP CR holding `addresses`, written the way the controller does
    /// (split fields) or only in the combined field.
    fn ip_cr(
        name: &str,
        subnet: &str,
        addresses: &(Option<String>, Option<String>),
        pod: &str,
        namespace: &str,
        split: bool,
    ) -> Value {
        let mut cr = ip(
            name,
            json!({"subnet": subnet, "ipAddress": joined(addresses), "podName": pod, "namespace": namespace}),
        );
        if split {
            cr["spec"]["v4IpAddress"] = json!(addresses.0.clone().unwrap_or_default());
            cr["spec"]["v6IpAddress"] = json!(addresses.1.clone().unwrap_or_default());
        }
        cr
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// A request never conflicts with its own IP CRs (the audit scanner
        /// replays running pods as CREATE, I11).
        #[test]
        fn a_pod_never_conflicts_with_its_own_ip_crs(
            mine in addresses(),
            split in any::<bool>(),
            others in proptest::collection::vec((addresses(), "[a-z]{1,6}"), 0..8),
        ) {
            let mut ips = vec![ip_cr("app-1.default", "ovn-default", &mine, "app-1", "default", split)];
            // Other CRs elsewhere: another subnet, or the same subnet at other addresses.
            for (i, (theirs, name)) in others.iter().enumerate() {
                let clash = [&theirs.0, &theirs.1].into_iter().flatten().any(|a| {
                    [&mine.0, &mine.1].into_iter().flatten().any(|m| m == a)
                });
                let subnet = if clash { "subnet-a" } else { "ovn-default" };
                ips.push(ip_cr(&format!("{name}-{i}.default"), subnet, theirs, name, "default", !split));
            }
            let cluster = cluster(ips);
            let annotation = joined(&mine);
            let result = pod(
                &[(IP_ADDRESS, annotation.as_str()), (LOGICAL_SWITCH, "ovn-default")],
                &cluster,
            );
            prop_assert_eq!(result, Ok(()), "{}", annotation);
        }

        /// Adding an IP CR that holds none of the request's addresses in its
        /// subnet never turns an accept into a deny.
        #[test]
        fn an_unrelated_ip_cr_never_turns_an_accept_into_a_deny(
            wanted in addresses(),
            existing in proptest::collection::vec(addresses(), 0..6),
            added in addresses(),
            other_subnet in any::<bool>(),
        ) {
            let held: Vec<&String> = existing.iter().flat_map(|e| [&e.0, &e.1]).flatten().collect();
            let wanted_list: Vec<&String> = [&wanted.0, &wanted.1].into_iter().flatten().collect();
            prop_assume!(wanted_list.iter().all(|w| !held.contains(w)));
            let mut ips: Vec<Value> = existing
                .iter()
                .enumerate()
                .map(|(i, e)| ip_cr(&format!("web-{i}.default"), "ovn-default", e, &format!("web-{i}"), "default", true))
                .collect();
            let annotation = joined(&wanted);
            let pairs = [(IP_ADDRESS, annotation.as_str()), (LOGICAL_SWITCH, "ovn-default")];
            prop_assert_eq!(pod(&pairs, &cluster(ips.clone())), Ok(()));
            let unrelated = if other_subnet {
                true
            } else {
                [&added.0, &added.1].into_iter().flatten().all(|a| !wanted_list.contains(&a))
            };
            prop_assume!(unrelated);
            let subnet = if other_subnet { "subnet-a" } else { "ovn-default" };
            ips.push(ip_cr("newcomer.team-b", subnet, &added, "newcomer", "team-b", true));
            prop_assert_eq!(pod(&pairs, &cluster(ips)), Ok(()));
        }
    }
}

/// I15: ovn-default and attach-net with a record of what is in use that
/// agrees with itself, and IP objects that disagree with it where a test
/// needs them to (`stale.default` holds an address the record calls free).
fn recorded(ips: Vec<Value>) -> FakeHost {
    let mut c = cluster(ips);
    default_subnet(&mut c)["status"] = json!({
        "v4usingIPs": 3, "v4usingIPrange": "10.16.0.20-10.16.0.21,10.16.0.30",
        "v6usingIPs": 3, "v6usingIPrange": "fd00:10:16::20-fd00:10:16::21,fd00:10:16::30",
    });
    c.extend([with_status(
        subnet(
            "attach-net",
            json!({"cidrBlock": "172.17.0.0/24", "gateway": "172.17.0.1"}),
        ),
        json!({"v4usingIPs": 2, "v4usingIPrange": "172.17.0.10-172.17.0.11"}),
    )]);
    c
}

/// `ovn-default` as the cluster holds it, to edit.
fn default_subnet(c: &mut FakeHost) -> &mut Value {
    c.objects_mut(&kinds::SUBNET)
        .into_iter()
        .next()
        .expect("ovn-default")
}

/// The IP objects of [`recorded`]'s tests.
fn recorded_ips() -> Vec<Value> {
    vec![
        ip(
            "other.default",
            json!({"subnet": "ovn-default", "ipAddress": "10.16.0.20", "podName": "other", "namespace": "default"}),
        ),
        ip(
            "app-1.default",
            json!({"subnet": "ovn-default", "ipAddress": "10.16.0.21,fd00:10:16::21", "podName": "app-1", "namespace": "default"}),
        ),
        ip(
            "web-0.default",
            json!({"subnet": "ovn-default", "ipAddress": "10.16.0.30", "podName": "web-0", "namespace": "default"}),
        ),
        ip(
            "stale.default",
            json!({"subnet": "ovn-default", "ipAddress": "10.16.0.40", "podName": "stale", "namespace": "default"}),
        ),
        ip(
            "app-1.default.attach.default.ovn",
            json!({"subnet": "attach-net", "ipAddress": "172.17.0.10", "podName": "app-1", "namespace": "default"}),
        ),
        ip(
            "other.default.attach",
            json!({"subnet": "attach-net", "ipAddress": "172.17.0.11", "podName": "other", "namespace": "default"}),
        ),
    ]
}

/// Validates a pod `name` in `default` (a StatefulSet's when `controller`
/// says so) with these settings; the decision and the host calls that read
/// IP objects and Subnet records ([`reads`]).
fn judged(
    name: &str,
    pairs: &[(&str, &str)],
    controller: Option<Workload>,
    settings: &Settings,
    cluster: &FakeHost,
) -> (Result<(), Denial>, Vec<String>) {
    cluster.take_calls();
    let annotations = annotations(pairs);
    let claim = pod_claim(name, &annotations, controller);
    let decision = validate(&claim, settings, &cluster.cluster());
    (decision, reads(cluster.take_calls()))
}

/// Of these host calls, those that read IP objects or a Subnet's record
/// (I15): not the Vpc and Subnet name lists that tell a Subnet exists, nor
/// the IPPool lists of I19.
fn reads(calls: Vec<String>) -> Vec<String> {
    calls
        .into_iter()
        .filter(|c| {
            c.starts_with("get IP ")
                || c.starts_with("list IP ")
                || c.starts_with("list Subnet metadata.name=")
        })
        .collect()
}

const LS: (&str, &str) = (LOGICAL_SWITCH, "ovn-default");

/// The host call that reads a Subnet's record (I15): a list narrowed to
/// its name.
fn record(subnet: &str) -> Vec<String> {
    vec![format!("list Subnet metadata.name={subnet}")]
}

/// The host calls that list the IP objects of a subnet: those labelled with
/// it, and those without the label.
fn ip_list(subnet: &str) -> Vec<String> {
    vec![
        format!("list IP ovn.kubernetes.io/subnet={subnet}"),
        "list IP !ovn.kubernetes.io/subnet".to_string(),
    ]
}

/// The host call that reads an IP object by name.
fn get_ip(name: &str) -> Vec<String> {
    vec![format!("get IP {name}")]
}

/// The calls of [`recorded`]'s tests.
fn ovn_default() -> Vec<String> {
    record("ovn-default")
}
fn own_ip() -> Vec<String> {
    get_ip("app-1.default")
}
fn ips() -> Vec<String> {
    ip_list("ovn-default")
}

#[rstest]
// Free by the record, although a stale IP object holds it (the I15 window).
#[case::stale_ip_object(
    vec![(IP_ADDRESS, "10.16.0.40"), LS],
    Ok(()),
    ovn_default()
)]
// Free by the record, held by nobody.
#[case::free(
    vec![(IP_ADDRESS, "10.16.0.50,fd00:10:16::50"), LS],
    Ok(()),
    ovn_default()
)]
// In use by the pod's own IP object: no list.
#[case::own_ip_object(
    vec![(IP_ADDRESS, "10.16.0.21"), LS],
    Ok(()),
    [ovn_default(), own_ip()].concat()
)]
// Dual stack, both in use by the own IP object.
#[case::own_ip_object_dual_stack(
    vec![(IP_ADDRESS, "10.16.0.21,fd00:10:16::21"), LS],
    Ok(()),
    [ovn_default(), own_ip()].concat()
)]
// In use by another pod: upstream's conflict, from the list.
#[case::another_pods(
    vec![(IP_ADDRESS, "10.16.0.20"), LS],
    conflict("10.16.0.20", "other.default", "10.16.0.20"),
    [ovn_default(), own_ip(), ips()].concat()
)]
// One address in use by another: the whole NIC is listed.
#[case::pool_one_address_another_pods(
    vec![(IP_POOL, "10.16.0.21,10.16.0.20"), LS],
    conflict("10.16.0.20", "other.default", "10.16.0.20"),
    [ovn_default(), own_ip(), ips()].concat()
)]
// The first address of a range.
#[case::first_of_a_range(
    vec![(IP_ADDRESS, "fd00:10:16::20"), LS],
    Ok(()),
    [ovn_default(), own_ip(), ips()].concat()
)]
// A single-address entry.
#[case::single_address_entry(
    vec![(IP_ADDRESS, "10.16.0.30"), LS],
    conflict("10.16.0.30", "web-0.default", "10.16.0.30"),
    [ovn_default(), own_ip(), ips()].concat()
)]
// Just past the last address of a range.
#[case::past_a_range(
    vec![(IP_ADDRESS, "fd00:10:16::22"), LS],
    Ok(()),
    ovn_default()
)]
// A wholly free pool group: no list.
#[case::free_pool_group(
    vec![(IP_POOL, "10.16.0.40;10.16.0.41"), LS],
    Ok(()),
    ovn_default()
)]
// An attachment: its subnet's record and its own IP object.
#[case::attachment_own_ip_object(
    vec![
        ("attach.default.ovn.kubernetes.io/ip_address", "172.17.0.10"),
        (
            "attach.default.ovn.kubernetes.io/logical_switch",
            "attach-net",
        ),
    ],
    Ok(()),
    [record("attach-net"), get_ip("app-1.default.attach.default.ovn")].concat()
)]
// An attachment address in use by another.
#[case::attachment_another_pods(
    vec![
        ("attach.default.ovn.kubernetes.io/ip_address", "172.17.0.11"),
        (
            "attach.default.ovn.kubernetes.io/logical_switch",
            "attach-net",
        ),
    ],
    conflict("172.17.0.11", "other.default.attach", "172.17.0.11"),
    [
        record("attach-net"),
        get_ip("app-1.default.attach.default.ovn"),
        ip_list("attach-net"),
    ]
    .concat()
)]
// An attachment's IPv6 address: no record of that family.
#[case::attachment_v6_no_record(
    vec![
        (
            "attach.default.ovn.kubernetes.io/ip_address",
            "fd00:172:17::5",
        ),
        (
            "attach.default.ovn.kubernetes.io/logical_switch",
            "attach-net",
        ),
    ],
    Err(Denial::bad_request(
        "static ip fd00:172:17::5 is not in subnet attach-net cidr 172.17.0.0/24",
    )),
    [record("attach-net"), ip_list("attach-net")].concat()
)]
fn the_subnets_record_settles_addresses_without_listing_ip_objects(
    #[case] pairs: Vec<(&str, &str)>,
    #[case] want: Result<(), Denial>,
    #[case] calls: Vec<String>,
) {
    let c = recorded(recorded_ips());
    let (got, made) = judged("app-1", &pairs, None, &Settings::default(), &c);
    assert_eq!((got, made), (want, calls));
}

/// What [`recorded`]'s record says is free, held by `stale.default`.
const STALE: (&str, &str) = (IP_ADDRESS, "10.16.0.40");

#[test]
fn use_subnet_status_false_reads_no_record() {
    let off = Settings {
        use_subnet_status: Some(false),
        ..Settings::default()
    };
    let (got, made) = judged("app-1", &[STALE, LS], None, &off, &recorded(recorded_ips()));
    assert_eq!(got, conflict("10.16.0.40", "stale.default", "10.16.0.40"));
    assert_eq!(made, ips());
}

/// No record, nothing in use, a count the ranges disagree with, an address
/// in excludeIps (left out of the record): the list decides.
#[rstest]
#[case::no_record(|c: &mut FakeHost| default_subnet(c)["status"] = json!({}))]
#[case::nothing_in_use(|c: &mut FakeHost| {
    let status = &mut default_subnet(c)["status"];
    status["v4usingIPs"] = json!(0);
    status["v4usingIPrange"] = json!("");
})]
#[case::count_disagrees(|c: &mut FakeHost| default_subnet(c)["status"]["v4usingIPs"] = json!(7))]
#[case::exclude_ips(|c: &mut FakeHost| {
    default_subnet(c)["spec"]["excludeIps"] = json!(["10.16.0.1", "10.16.0.40"])
})]
fn without_an_agreeing_record_the_ip_objects_decide_as_before(#[case] unsettle: fn(&mut FakeHost)) {
    let mut c = recorded(recorded_ips());
    unsettle(&mut c);
    let (got, made) = judged("app-1", &[STALE, LS], None, &Settings::default(), &c);
    assert_eq!(got, conflict("10.16.0.40", "stale.default", "10.16.0.40"));
    assert_eq!(made, [ovn_default(), ips()].concat());
}

#[test]
fn an_own_ip_object_of_another_subnet_leaves_the_list_to_decide() {
    let mut elsewhere = recorded_ips();
    elsewhere[1]["spec"]["subnet"] = json!("subnet-a");
    elsewhere[1]["metadata"]["labels"]["ovn.kubernetes.io/subnet"] = json!("subnet-a");
    let (got, made) = judged(
        "app-1",
        &[(IP_ADDRESS, "10.16.0.21"), LS],
        None,
        &Settings::default(),
        &recorded(elsewhere),
    );
    assert_eq!(got, Ok(()));
    assert_eq!(made, [ovn_default(), own_ip(), ips()].concat());
}

#[test]
fn pool_groups_and_siblings_with_the_record() {
    let c = recorded(recorded_ips());
    let on = Settings::default();
    // A StatefulSet pod: group 1 is wholly free, but group 0's 10.16.0.30
    // is in use and web-1 has no IP object yet: the list shows a sibling.
    let pairs = [(IP_POOL, "10.16.0.30;10.16.0.41"), LS];
    let (got, made) = judged("web-1", &pairs, statefulset("web"), &on, &c);
    assert_eq!(got, Ok(()));
    assert_eq!(
        made,
        [ovn_default(), get_ip("web-1.default"), ips()].concat()
    );
    // web-0 again (its pod re-created): its own IP object settles group 0.
    let (got, made) = judged("web-0", &pairs, statefulset("web"), &on, &c);
    assert_eq!(got, Ok(()));
    assert_eq!(made, [ovn_default(), get_ip("web-0.default")].concat());
    // Group 1 in use by another: upstream's conflict for that address.
    let held = [(IP_POOL, "10.16.0.41;10.16.0.20"), LS];
    let (got, _) = judged("web-1", &held, statefulset("web"), &on, &c);
    assert_eq!(got, conflict("10.16.0.20", "other.default", "10.16.0.20"));
    // Any other pod: the first free group, its own address free to it.
    let own_then_free = [(IP_POOL, "10.16.0.21;10.16.0.40"), LS];
    let (got, made) = judged("app-1", &own_then_free, None, &on, &c);
    assert_eq!(got, Ok(()));
    assert_eq!(made, [ovn_default(), own_ip()].concat());
    // A sibling's address is no conflict but not free either (I3): from the list.
    let sibling = Some(Workload {
        kind: WorkloadKind::Deployment,
        name: "web".into(),
    });
    let mut siblings = recorded_ips();
    siblings[2] = ip(
        "web-6f5c8d7b9-q7w2f.default",
        json!({"subnet": "ovn-default", "ipAddress": "10.16.0.30", "podName": "web-6f5c8d7b9-q7w2f", "namespace": "default"}),
    );
    let c2 = recorded(siblings);
    let taken = [(IP_POOL, "10.16.0.30"), LS];
    let (got, made) = judged("web-6f5c8d7b9-bcdfg", &taken, sibling, &on, &c2);
    assert_eq!(
        got,
        Err(Denial::forbidden(
            "ip_pool 10.16.0.30 has no free address in subnet ovn-default"
        ))
    );
    assert_eq!(
        made,
        [ovn_default(), get_ip("web-6f5c8d7b9-bcdfg.default"), ips()].concat()
    );
    // A workload has no IP object: the free-by-record shortcut only.
    let free = [(IP_POOL, "10.16.0.40,10.16.0.41"), LS];
    c.take_calls();
    assert_eq!(
        workload(WorkloadKind::StatefulSet, "web", &free, &c),
        Ok(())
    );
    assert_eq!(reads(c.take_calls()), ovn_default());
    let member = [(IP_POOL, "10.16.0.30,10.16.0.41"), LS];
    assert_eq!(
        workload(WorkloadKind::StatefulSet, "web", &member, &c),
        Ok(())
    );
    assert_eq!(reads(c.take_calls()), [ovn_default(), ips()].concat());
}

mod record_properties {
    use super::*;
    use proptest::prelude::*;

    /// A small space, so that claims and holders meet often.
    fn address(i: u8) -> String {
        if i < 6 {
            format!("10.16.0.{}", 20 + i)
        } else {
            format!("fd00:10:16::{:x}", 0x20 + i)
        }
    }

    /// The record kube-ovn-controller writes for these IP objects: per
    /// family, every address held, and one count per object.
    fn record_of(ips: &[Value]) -> Value {
        let ips: Vec<Ip> = ips.iter().cloned().map(typed).collect();
        let family = |v4: bool| {
            let held: Vec<String> = ips
                .iter()
                .flat_map(Ip::addresses)
                .filter(|a| a.is_ipv4() == v4)
                .map(|a| a.to_string())
                .collect();
            (held.len(), held.join(","))
        };
        let ((v4_count, v4_range), (v6_count, v6_range)) = (family(true), family(false));
        json!({
            "v4usingIPs": v4_count, "v4usingIPrange": v4_range,
            "v6usingIPs": v6_count, "v6usingIPrange": v6_range,
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        /// Where the record and the IP objects agree, I15 decides exactly as
        /// the IP objects alone do.
        #[test]
        fn an_agreeing_record_changes_no_decision(
            holders in proptest::collection::btree_map(0u8..5, (0u8..10, any::<bool>()), 0..5),
            claim in proptest::collection::vec(0u8..10, 1..4),
            pool in any::<bool>(),
            semicolons in any::<bool>(),
            who in 0u8..3,
        ) {
            let pods = ["app-1", "web-0", "web-1", "other", "team-b"];
            let ips: Vec<Value> = holders
                .iter()
                .map(|(pod, (a, dual))| {
                    let pod = pods[usize::from(*pod)];
                    let ns = if pod == "team-b" { "team-b" } else { "default" };
                    let mut held = address(*a);
                    if *dual && *a < 6 {
                        held = format!("{held},{}", address(a + 6));
                    }
                    ip(&format!("{pod}.{ns}"), json!({"subnet": "ovn-default", "ipAddress": held, "podName": pod, "namespace": ns}))
                })
                .collect();
            let mut c = recorded(ips.clone());
            default_subnet(&mut c)["status"] = record_of(&ips);
            let addresses: Vec<String> = claim.iter().map(|a| address(*a)).collect();
            let value = addresses.join(if semicolons { ";" } else { "," });
            let key = if pool { IP_POOL } else { IP_ADDRESS };
            let pairs = [(key, value.as_str()), LS];
            let off = Settings { use_subnet_status: Some(false), ..Settings::default() };
            let (pod, controller) = match who {
                0 => ("app-1", None),
                1 => ("web-1", statefulset("web")),
                _ => ("web-0", statefulset("web")),
            };
            let with = judged(pod, &pairs, controller.clone(), &Settings::default(), &c).0;
            let without = judged(pod, &pairs, controller, &off, &c).0;
            prop_assert_eq!(with, without, "{} {:?}", value, ips);
            let on = workload(WorkloadKind::StatefulSet, "web", &pairs, &c);
            let written = annotations(&pairs);
            let claim = workload_claim(WorkloadKind::StatefulSet, "web", &written);
            prop_assert_eq!(on, validate(&claim, &off, &c.cluster()));
        }
    }
}

/// §4: the NICs of a pod or template, counted before any lookup.
#[rstest]
#[case::primary_only(vec![(IP_ADDRESS, "10.16.0.9")], 0)]
#[case::one_attachment(vec![("a.ns.ovn.kubernetes.io/ip_address", "10.16.0.9")], 1)]
#[case::a_provider_counted_once(
    vec![
        ("a.ns.ovn.kubernetes.io/ip_address", "10.16.0.9"),
        ("a.ns.ovn.kubernetes.io/ip_pool", "p"),
        ("a.ns.ovn.kubernetes.io/logical_switch", "s"),
    ],
    1
)]
#[case::other_keys_are_no_nic(
    vec![
        ("kubectl.kubernetes.io/last-applied-configuration", "{}"),
        ("a.ns.ovn.kubernetes.io/mac_address", "00:00:00:00:00:01"),
        ("kubernetes.io/ip_address", "10.16.0.9"),
    ],
    0
)]
#[case::selections(vec![("k8s.v1.cni.cncf.io/networks", "a,b@eth1,other/c")], 3)]
#[case::a_selections_annotation_is_its_nic(
    vec![
        ("k8s.v1.cni.cncf.io/networks", "a"),
        ("a.default.ovn.kubernetes.io/ip_address", "10.16.0.9"),
        ("b.default.ovn.kubernetes.io/ip_address", "10.16.0.9"),
    ],
    2
)]
fn nics_counted(#[case] pairs: Vec<(&str, &str)>, #[case] want: usize) {
    let annotations = annotations(&pairs);
    let selections = networks::read(&annotations, "default");
    assert_eq!(
        nic_count(
            &annotations,
            selections.entries.as_deref().unwrap_or_default()
        ),
        want
    );
}

#[test]
fn more_nics_than_the_cap_are_refused_before_any_lookup() {
    let keys: Vec<String> = (0..65)
        .map(|i| format!("net{i}.default.ovn.kubernetes.io/ip_address"))
        .collect();
    let pairs: Vec<(&str, &str)> = keys.iter().map(|k| (k.as_str(), "10.16.0.9")).collect();
    let annotations = annotations(&pairs);
    let refused = Err(Denial::bad_request(
        "65 network interfaces requested, at most 64 are allowed (setting maxNetworksPerPod)",
    ));
    let selections = networks::read(&annotations, "default");
    assert_eq!(
        check_nic_count(&annotations, &selections, &Settings::default()),
        refused
    );
    let raised = Settings {
        max_networks_per_pod: Some(65),
        ..Settings::default()
    };
    assert_eq!(check_nic_count(&annotations, &selections, &raised), Ok(()));
}

/// §4: whatever a check reads is read once per evaluation, however many
/// NICs ask for it: one Subnet lookup and one IP list per subnet, one GET
/// per own IP object's name.
#[test]
fn each_subnet_is_read_once_however_many_nics_name_it() {
    let keys: Vec<(String, String, String)> = (0..40)
        .map(|i| {
            (
                format!("net{i}.default.ovn.kubernetes.io/ip_address"),
                format!("10.70.0.{}", i + 10),
                format!("net{i}.default.ovn.kubernetes.io/logical_switch"),
            )
        })
        .collect();
    let mut pairs: Vec<(&str, &str)> = Vec::new();
    for (key, address, switch) in &keys {
        pairs.push((key, address));
        pairs.push((switch, "subnet-a"));
    }
    let cluster = cluster(held());
    assert_eq!(pod(&pairs, &cluster), Ok(()));
    let calls = cluster.take_calls();
    let count = |what: &str| calls.iter().filter(|l| l.as_str() == what).count();
    assert_eq!(
        count("list IP ovn.kubernetes.io/subnet=subnet-a"),
        1,
        "{calls:?}"
    );
    assert_eq!(count("list Subnet metadata.name=subnet-a"), 1, "{calls:?}");
}

/// I21: a Vip named by `ovn.kubernetes.io/vip`, as `podReuseVip` takes it.
fn vip_pod(name: &str, vip: Value, controller: Option<Workload>, vm: bool) -> Result<(), Denial> {
    let cluster = cluster(vec![vip]);
    let annotations = annotations(&[(vip::VIP, "vip-a")]);
    let mut claim = pod_claim(name, &annotations, controller);
    if let Subject::Pod { vm: is_vm, .. } = &mut claim.subject {
        *is_vm = vm;
    }
    if vm {
        claim.owner_name = "vm-a";
    }
    validate(&claim, &Settings::default(), &cluster.cluster())
}

fn a_vip(namespace: &str, reserved_by: Option<&str>) -> Value {
    let labels = reserved_by.map_or(json!({}), |p| json!({(vip::IP_RESERVED): p}));
    object(
        &kinds::VIP,
        "vip-a",
        json!({"metadata": {"name": "vip-a", "labels": labels}, "spec": {"namespace": namespace}}),
    )
}

#[rstest]
#[case::any_namespace_free(a_vip("", None), "app-1", None, false, Ok(()))]
#[case::own_namespace_free(a_vip("default", None), "app-1", None, false, Ok(()))]
#[case::another_namespace(
    a_vip("team-b", None),
    "app-1",
    None,
    false,
    Err(Denial::forbidden("vip vip-a is reserved for namespace team-b"))
)]
#[case::in_use_by_another_pod(
    a_vip("", Some("other.default")),
    "app-1",
    None,
    false,
    Err(Denial::forbidden("vip 'vip-a' is in use by pod other.default"))
)]
#[case::a_plain_pod_of_the_same_port_is_refused_as_the_controller_refuses_it(
    a_vip("", Some("app-1.default")),
    "app-1",
    None,
    false,
    Err(Denial::forbidden("vip 'vip-a' is in use by pod app-1.default"))
)]
#[case::statefulset_pod_keeps_its_own(
    a_vip("", Some("db-0.default")),
    "db-0",
    Some(Workload { kind: WorkloadKind::StatefulSet, name: "db".into() }),
    false,
    Ok(())
)]
#[case::statefulset_pod_not_another_ones(
    a_vip("", Some("db-1.default")),
    "db-0",
    Some(Workload { kind: WorkloadKind::StatefulSet, name: "db".into() }),
    false,
    Err(Denial::forbidden("vip 'vip-a' is in use by pod db-1.default"))
)]
#[case::vm_pod_keeps_its_vms(a_vip("", Some("vm-a.default")), "virt-launcher-vm-a-x7k2p", None, true, Ok(()))]
fn vips_taken_by_pods_i21(
    #[case] vip: Value,
    #[case] name: &str,
    #[case] controller: Option<Workload>,
    #[case] vm: bool,
    #[case] want: Result<(), Denial>,
) {
    assert_eq!(vip_pod(name, vip, controller, vm), want);
}

#[test]
fn a_missing_vip_is_not_checked_i21() {
    let annotations = annotations(&[(vip::VIP, "nowhere")]);
    assert_eq!(
        validate(
            &pod_claim("app-1", &annotations, None),
            &Settings::default(),
            &cluster(vec![]).cluster()
        ),
        Ok(())
    );
}

#[test]
fn a_workload_naming_another_namespaces_vip_is_refused_i21() {
    let foreign = cluster(vec![a_vip("team-b", None)]);
    assert_eq!(
        workload(
            WorkloadKind::Deployment,
            "web",
            &[(vip::VIP, "vip-a")],
            &foreign
        ),
        Err(Denial::forbidden(
            "vip vip-a is reserved for namespace team-b"
        ))
    );
    let sts = cluster(vec![a_vip("", Some("db-2.default"))]);
    assert_eq!(
        workload(
            WorkloadKind::StatefulSet,
            "db",
            &[(vip::VIP, "vip-a")],
            &sts
        ),
        Ok(())
    );
}

/// I5 as kube-ovn-controller decides it (pod.go:1967, :2532, :2629).
#[test]
fn the_subnet_a_primary_nic_lands_in_i5() {
    let in_a = vec![ip(
        "o.default",
        json!({"subnet": "subnet-a", "ipAddress": "10.70.0.9", "podName": "o", "namespace": "default"}),
    )];
    // A named IPPool puts the pod in its subnet (Kube-OVN #7059): the
    // address is checked there, not in ovn-default.
    let mut c = cluster(in_a.clone());
    c.objects_mut(&kinds::IPPOOL)[0]["spec"] =
        json!({"subnet": "subnet-a", "ips": ["10.70.0.0/26"]});
    assert_eq!(
        pod(&[(IP_ADDRESS, "10.70.0.9"), (IP_POOL, " pool-a ")], &c),
        conflict("10.70.0.9", "o.default", "10.70.0.9")
    );
    // A namespace bound to two subnets: the address lands in the first whose
    // CIDR holds it, the second here.
    let mut c = cluster(in_a.clone());
    c.extend([namespace(&[(LOGICAL_SWITCH, "ovn-default,subnet-a")])]);
    assert_eq!(
        pod(&[(IP_ADDRESS, "10.70.0.9")], &c),
        conflict("10.70.0.9", "o.default", "10.70.0.9")
    );
    assert_eq!(pod(&[(IP_ADDRESS, "10.70.0.10")], &c), Ok(()));
    assert_eq!(pod(&[(IP_ADDRESS, "10.16.0.10")], &c), Ok(()));
    // In none of them: I6 names the first.
    assert_eq!(
        pod(&[(IP_ADDRESS, "10.99.0.1")], &c),
        Err(Denial::bad_request(
            "static ip 10.99.0.1 is not in subnet ovn-default cidr 10.16.0.0/16,fd00:10:16::/112"
        ))
    );
    // The pod's own logical_switch is the only subnet tried.
    assert_eq!(
        pod(
            &[(IP_ADDRESS, "10.70.0.9"), (LOGICAL_SWITCH, "ovn-default")],
            &c
        ),
        Err(Denial::bad_request(
            "static ip 10.70.0.9 is not in subnet ovn-default cidr 10.16.0.0/16,fd00:10:16::/112"
        ))
    );
}

#[rstest]
#[case::a_name("pool-a", Some("pool-a"))]
#[case::trimmed(" pool-a\t", Some("pool-a"))]
#[case::an_address("10.16.0.9", None)]
#[case::a_spaced_address(" 10.16.0.9 ", None)]
#[case::a_list("pool-a,pool-b", None)]
#[case::groups("pool-a;pool-b", None)]
#[case::empty("  ", None)]
fn an_ip_pool_names_a_pool_as_the_controller_reads_it_i5(
    #[case] value: &str,
    #[case] want: Option<&str>,
) {
    assert_eq!(landing::named_pool(value), want);
}

/// I5 per address (the contract as revised on 2026-12-07): two Subnets of the
/// attachment's provider with overlapping CIDRs in different Vpcs, `net-a`
/// and `net-b`; the namespace lists `ovn-default` then `spill`, which
/// overlaps `ovn-default`. `team-b` reserves 172.17.0.9 in `net-b` and
/// 10.16.0.9 in `spill`; another pod of `team-b` holds 172.17.0.8 in `net-b`.
fn overlapping() -> FakeHost {
    overlapping_with(0)
}

/// [`overlapping`], with `ovn-default`'s status showing `available` free
/// IPv4 addresses (0: `getPodDefaultSubnet` passes it over).
fn overlapping_with(available: u64) -> FakeHost {
    let mut host = FakeHost::new([
        with_status(
            subnet(
                "ovn-default",
                json!({"cidrBlock": "10.16.0.0/16", "gateway": "10.16.0.1", "default": true, "protocol": "IPv4"}),
            ),
            json!({"v4availableIPs": available}),
        ),
        subnet(
            "spill",
            json!({"cidrBlock": "10.16.0.0/24", "gateway": "10.16.0.1", "vpc": "vpc-b"}),
        ),
        subnet(
            "net-a",
            json!({"cidrBlock": "172.17.0.0/24", "gateway": "172.17.0.1", "provider": "attachnet.default.ovn"}),
        ),
        subnet(
            "net-b",
            json!({"cidrBlock": "172.17.0.0/24", "gateway": "172.17.0.1", "provider": "attachnet.default.ovn", "vpc": "vpc-b"}),
        ),
        crate::k8s::fake::nad(
            "default",
            "attachnet",
            json!({"cniVersion": "0.3.0", "type": "kube-ovn", "provider": "attachnet.default.ovn"}),
        ),
        ippool(
            "pool-b",
            json!({"subnet": "net-b", "ips": ["172.17.0.9"], "namespaces": ["team-b"]}),
        ),
        ippool(
            "pool-spill",
            json!({"subnet": "spill", "ips": ["10.16.0.9"], "namespaces": ["team-b"]}),
        ),
        ip(
            "db-0.team-b.attachnet.team-b.ovn",
            json!({"subnet": "net-b", "ipAddress": "172.17.0.8", "podName": "db-0", "namespace": "team-b"}),
        ),
    ]);
    host.extend([namespace(&[(LOGICAL_SWITCH, "ovn-default,spill")])]);
    host
}

#[rstest]
// The controller may start in either Subnet of the provider (a map walk):
// net-b hands out team-b's reserved address.
#[case::attachment_reserved_in_the_other_provider_subnet(
    &[("k8s.v1.cni.cncf.io/networks", "attachnet"), ("attachnet.default.ovn.kubernetes.io/ip_address", "172.17.0.9")],
    Err(Denial::forbidden("ip 172.17.0.9 is reserved by ippool pool-b for namespaces team-b".to_string())),
)]
#[case::attachment_pool_entry_reserved_in_the_other_provider_subnet(
    &[("k8s.v1.cni.cncf.io/networks", "attachnet"), ("attachnet.default.ovn.kubernetes.io/ip_pool", "172.17.0.20,172.17.0.9")],
    Err(Denial::forbidden("ip 172.17.0.9 is reserved by ippool pool-b for namespaces team-b".to_string())),
)]
// Without the migration key the IPAM refuses a held address in net-b, and
// the controller moves on: no second holder, nothing to refuse.
#[case::attachment_held_in_the_other_provider_subnet_conflict_check_on(
    &[("k8s.v1.cni.cncf.io/networks", "attachnet"), ("attachnet.default.ovn.kubernetes.io/ip_address", "172.17.0.8")],
    Ok(()),
)]
// With it, net-b's holder would get a second one (AllowLiveMigration).
#[case::attachment_held_in_the_other_provider_subnet_migration(
    &[("k8s.v1.cni.cncf.io/networks", "attachnet"), ("attachnet.default.ovn.kubernetes.io/ip_address", "172.17.0.8"), (MIGRATION_JOB, "job")],
    conflict("172.17.0.8", "db-0.team-b.attachnet.team-b.ovn", "172.17.0.8"),
)]
// The primary NIC: `spill` may come first when `ovn-default` shows no free
// address (getPodDefaultSubnet skips it).
#[case::primary_reserved_in_a_later_namespace_subnet(
    &[(IP_ADDRESS, "10.16.0.9")],
    Err(Denial::forbidden("ip 10.16.0.9 is reserved by ippool pool-spill for namespaces team-b".to_string())),
)]
#[case::primary_elsewhere_free(&[(IP_ADDRESS, "10.16.0.10")], Ok(()))]
// `ovn-default` shows free addresses: it is the default, and 10.16.0.9
// lands there, never in `spill`.
#[case::primary_in_a_namespace_subnet_never_passed_over(&[(IP_ADDRESS, "10.16.0.9"), ("test/available", "10")], Ok(()))]
// An address outside `spill` lands only in ovn-default.
#[case::primary_outside_the_overlap(&[(IP_ADDRESS, "10.16.1.9")], Ok(()))]
fn every_subnet_an_address_may_land_in(
    #[case] pairs: &[(&str, &str)],
    #[case] want: Result<(), Denial>,
) {
    let available = pairs
        .iter()
        .find(|(k, _)| *k == "test/available")
        .map_or(0, |(_, v)| v.parse().unwrap_or(0));
    let host = overlapping_with(available);
    assert_eq!(pod(pairs, &host), want);
    // The answer does not depend on the order the cluster lists objects in.
    let reversed = host.reversed();
    assert_eq!(pod(pairs, &reversed), want);
}

/// I19 with the controller's precedence (`acquireStaticAddressHelper`): an
/// `ip_address` is given and the pool never read; a StatefulSet pod takes
/// only its ordinal's group.
#[rstest]
#[case::ip_address_precedes_a_reserved_pool_entry("app-1", &[(IP_ADDRESS, "10.16.0.10"), (IP_POOL, "10.16.0.9,10.16.0.11")], None, Ok(()))]
#[case::statefulset_ordinal_group_free("db-1", &[(IP_POOL, "10.16.0.9;10.16.0.11")], Some("db"), Ok(()))]
#[case::statefulset_ordinal_group_reserved("db-0", &[(IP_POOL, "10.16.0.9;10.16.0.11")], Some("db"),
    Err(Denial::forbidden("ip 10.16.0.9 is reserved by ippool pool-spill for namespaces team-b".to_string())))]
#[case::any_other_pod_every_group("app-1", &[(IP_POOL, "10.16.0.11;10.16.0.9")], None,
    Err(Denial::forbidden("ip 10.16.0.9 is reserved by ippool pool-spill for namespaces team-b".to_string())))]
fn reserved_addresses_the_controller_may_give(
    #[case] name: &str,
    #[case] pairs: &[(&str, &str)],
    #[case] statefulset: Option<&str>,
    #[case] want: Result<(), Denial>,
) {
    let mut pairs = pairs.to_vec();
    pairs.push((LOGICAL_SWITCH, "spill"));
    let controller = statefulset.map(|name| Workload {
        kind: WorkloadKind::StatefulSet,
        name: name.into(),
    });
    assert_eq!(pod_named(name, &pairs, controller, &overlapping()), want);
}

/// I19 reads a named pool as the controller does, trimmed.
#[test]
fn a_pool_name_is_read_trimmed() {
    let host = overlapping();
    let claim_annotations = annotations(&[(IP_POOL, " pool-b ")]);
    let claim = pod_claim("app-1", &claim_annotations, None);
    let view = host.cluster();
    let check = Checker::new(&claim, &view, true, &[]);
    let nic = primary(&claim_annotations);
    assert_eq!(
        check.reserved(&nic, None),
        Err(Denial::forbidden(
            "ippool pool-b is reserved for namespaces team-b".to_string()
        ))
    );
}
