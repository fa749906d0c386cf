use super::*;
use crate::k8s::fake::{FakeHost, from_value, namespaced, object, subnet, typed};
use crate::k8s::kinds;
use crate::k8s::objects::BigInt;
use rstest::rstest;
use serde_json::{Value, json};

fn settings(service_ip: Option<&str>) -> Settings {
    Settings {
        kubernetes_service_ip: service_ip.map(str::to_string),
        ..Settings::default()
    }
}

fn spec_result(spec: Value) -> Result<(), Denial> {
    let settings = settings(Some("10.20.0.1"));
    validate_spec(
        &typed(subnet("s1", spec)),
        &Context::new(&settings, &FakeHost::default().cluster()),
    )
}

#[test]
fn spec_checks_in_upstream_order() {
    let ok: &[Value] = &[
        json!({"cidrBlock": "10.16.0.0/16", "gateway": "10.16.0.1", "excludeIps": ["10.16.0.1", "10.16.0.10..10.16.0.20"]}),
        json!({"cidrBlock": "10.16.0.0/16"}),
        json!({"cidrBlock": "10.16.0.0/16,fd00:10:16::/112", "gateway": "10.16.0.1,fd00:10:16::ffff"}),
        json!({"cidrBlock": "10.16.0.0/31", "gateway": "10.16.0.0"}),
        json!({"cidrBlock": "fd00::/127", "gateway": "fd00::1"}),
        json!({"cidrBlock": "10.1.1.32/24", "gateway": "10.1.1.1"}),
        json!({"vlan": "vlan10", "protocol": "Mac"}),
        json!({"cidrBlock": "10.16.0.0/16", "mtu": 1200}),
        json!({"cidrBlock": "fd00::/112", "mtu": 1280}),
        json!({"cidrBlock": "10.16.0.0/16", "excludeIps": ["10.16.0.9..fd00::1"]}),
        json!({"cidrBlock": "10.16.0.0/16", "vips": ["10.16.0.100"], "externalEgressGateway": "192.168.0.1"}),
        json!({"cidrBlock": "10.16.0.0/16,fd00::/112", "externalEgressGateway": "192.168.0.1"}),
        json!({"cidrBlock": "10.16.0.0/16", "u2oInterconnection": true, "vlan": "v", "u2oFeatures": {"overlayOnlyRouting": true}}),
        json!({"cidrBlock": "10.16.0.0/16", "natOutgoingPolicyRules": [{"match": {"srcIPs": "10.16.0.0/24,10.16.1.5", "dstIPs": " 1.1.1.1 "}}]}),
        json!({"cidrBlock": "10.16.0.0/16", "gateway": "10.16.0.1", "u2oInterconnectionIP": "10.16.0.2"}),
        json!({"cidrBlock": "10.16.0.0/16", "vpc": "ovn-cluster"}),
    ];
    for spec in ok {
        assert_eq!(spec_result(spec.clone()), Ok(()), "{spec}");
    }
    let denied: &[(Value, &str)] = &[
        (
            json!({"vlan": "v", "gateway": "10.0.0.1"}),
            "gateway must be empty for underlay subnet s1 without cidrBlock",
        ),
        (
            json!({"vlan": "v", "excludeIps": ["10.0.0.1"]}),
            "excludeIps must be empty for underlay subnet s1 without cidrBlock",
        ),
        (
            json!({"cidrBlock": "fd00::/64", "gateway": "FD00::1"}),
            "subnet gateway FD00::1 v6 ip address can not contain upper case",
        ),
        (
            json!({"cidrBlock": "10.97.0.0/24", "gateway": "100.16.0.1"}),
            "gateway 100.16.0.1 is not in cidr 10.97.0.0/24",
        ),
        (
            json!({"cidrBlock": "10.16.0.0/16", "gateway": "10.16.255.255"}),
            "validate gateway 10.16.255.255 for cidr 10.16.0.0/16 failed: 10.16.255.255 is the broadcast ip in cidr 10.16.0.0/16",
        ),
        (
            json!({"cidrBlock": "10.16.0.0/16", "gateway": "10.16.0.0"}),
            "validate gateway 10.16.0.0 for cidr 10.16.0.0/16 failed: 10.16.0.0 is the network number ip in cidr 10.16.0.0/16",
        ),
        (
            json!({"cidrBlock": "fd00::/64", "gateway": "fd00::0"}),
            "validate gateway fd00::0 for cidr fd00::/64 failed: fd00:: is the network number ip in cidr fd00::/64",
        ),
        (
            json!({"cidrBlock": "10.16.0.0/32", "gateway": "10.16.0.0"}),
            "validate gateway 10.16.0.0 for cidr 10.16.0.0/32 failed: subnet 10.16.0.0/32 is configured with /32 or /128 netmask",
        ),
        (
            json!({"cidrBlock": "127.0.0.1/8"}),
            "127.0.0.1/8 conflict with v4 loopback cidr 127.0.0.1/8",
        ),
        (
            json!({"cidrBlock": "0.0.0.0/0"}),
            "0.0.0.0/0 conflict with v4 broadcast cidr 255.255.255.255/32",
        ),
        (
            json!({"cidrBlock": "10.0.0.0/24,224.1.0.0/16"}),
            "10.0.0.0/24,224.1.0.0/16 conflict with v4 multicast cidr 224.0.0.0/4",
        ),
        (
            json!({"cidrBlock": "169.254.1.0/24"}),
            "169.254.1.0/24 conflict with v4 link local cidr 169.254.0.0/16",
        ),
        (
            json!({"cidrBlock": "fe80::/64"}),
            "fe80::/64 conflict with v6 link local cidr FE80::/10",
        ),
        (
            json!({"cidrBlock": "ff02::/16"}),
            "ff02::/16 conflict with v6 multicast cidr ff00::/8",
        ),
        (json!({"cidrBlock": ""}), "CIDRBlock: \"\" format error"),
        (
            json!({"cidrBlock": "10.1.1.32/24,"}),
            "CIDRBlock: \"10.1.1.32/24,\" format error",
        ),
        (
            json!({"cidrBlock": "10.300.0.0/24"}),
            "CIDRBlock: \"10.300.0.0/24\" format error",
        ),
        (
            json!({"cidrBlock": "10.16.0.0/16", "excludeIps": ["fd00::A"]}),
            "subnet exclude ip fd00::A can not contain upper case",
        ),
        (
            json!({"cidrBlock": "10.16.0.0/16", "excludeIps": ["a..b..c"]}),
            "a..b..c in excludeIps is not a valid ip range",
        ),
        (
            json!({"cidrBlock": "10.16.0.0/16", "excludeIps": ["10.16.0.1.."]}),
            "ip  in excludeIps is not a valid address",
        ),
        (
            json!({"cidrBlock": "10.16.0.0/16", "excludeIps": ["10.16.0.300"]}),
            "ip 10.16.0.300 in excludeIps is not a valid address",
        ),
        (
            json!({"cidrBlock": "10.16.0.0/16", "excludeIps": ["10.16.0.2..10.16.0.1"]}),
            "10.16.0.2..10.16.0.1 in excludeIps is not a valid ip range",
        ),
        (
            json!({"cidrBlock": "10.0.0.0/24,::/64"}),
            "10.0.0.0/24,::/64 conflict with v6 unspecified cidr ::/128",
        ),
        (
            json!({"cidrBlock": "10.16.0.0/16,2001:Db8::/32"}),
            "subnet cidr block 10.16.0.0/16,2001:Db8::/32 v6 ip address can not contain upper case",
        ),
        (
            json!({"cidrBlock": "0.0.0.0/8"}),
            "0.0.0.0/8 conflict with v4 localnet cidr 0.0.0.0/32",
        ),
        (
            json!({"cidrBlock": "10.230.0.5/32"}),
            "subnet s1 cidr 10.230.0.5/32 mask is invalid, due to invalid network mask 32",
        ),
        (
            json!({"cidrBlock": "fd00::5/128"}),
            "subnet s1 cidr fd00::5/128 mask is invalid, due to invalid network mask 128",
        ),
        (
            json!({"cidrBlock": "10.16.0.0/16", "allowSubnets": ["fd00::/64", "FD01::/64"]}),
            "subnet s1 allow subnet FD01::/64 v6 ip address can not contain upper case",
        ),
        (
            json!({"cidrBlock": "10.16.0.0/16", "allowSubnets": ["10.1.1.302/24"]}),
            "10.1.1.302/24 in allowSubnets is not a valid address",
        ),
        (
            json!({"cidrBlock": "10.16.0.0/16", "gatewayType": "test"}),
            "test is not a valid gateway type",
        ),
        (
            json!({"cidrBlock": "10.16.0.0/16", "protocol": "ipv4"}),
            "ipv4 is not a valid protocol type",
        ),
        (
            json!({"cidrBlock": "10.16.0.0/16,fd00::/112", "mtu": 1279}),
            "subnet s1 mtu 1279 is below the IPv6 minimum 1280",
        ),
        (
            json!({"cidrBlock": "10.16.0.0/16", "vpc": "s1"}),
            "subnet s1 and vpc s1 cannot have the same name",
        ),
        (
            json!({"cidrBlock": "10.20.0.0/24", "vpc": "ovn-cluster"}),
            "subnet s1 cidr 10.20.0.0/24 conflicts with k8s apiserver svc ip 10.20.0.1",
        ),
        (
            json!({"cidrBlock": "10.20.0.0/24"}),
            "subnet s1 cidr 10.20.0.0/24 conflicts with k8s apiserver svc ip 10.20.0.1",
        ),
        (
            json!({"cidrBlock": "10.16.0.0/16", "externalEgressGateway": "1.1.1.1", "natOutgoing": true}),
            "conflict configuration: natOutgoing and externalEgressGateway",
        ),
        (
            json!({"cidrBlock": "10.16.0.0/16", "externalEgressGateway": "1.1.1.1,fd00::A"}),
            "subnet s1 external egress gateway 1.1.1.1,fd00::A v6 ip address can not contain upper case",
        ),
        (
            json!({"cidrBlock": "10.16.0.0/16", "externalEgressGateway": "1.1.1.1,1.1.1.2,fd00::1"}),
            "invalid external egress gateway configuration",
        ),
        (
            json!({"cidrBlock": "10.16.0.0/16", "externalEgressGateway": "192.178..2"}),
            "IP 192.178..2 in externalEgressGateway is not a valid address",
        ),
        (
            json!({"cidrBlock": "10.16.0.0/16", "externalEgressGateway": "fd00::1"}),
            "invalid external egress gateway configuration: address family is conflict with CIDR",
        ),
        (
            json!({"vlan": "v", "vips": ["10.0.0.1"]}),
            "vips are not supported for underlay subnet s1 without cidrBlock",
        ),
        (
            json!({"cidrBlock": "fd00::/112", "vips": ["FD00::5"]}),
            "subnet s1 vips FD00::5 v6 ip address can not contain upper case",
        ),
        (
            json!({"cidrBlock": "10.16.0.0/16", "vips": ["10.17.0.5"]}),
            "vip 10.17.0.5 conflicts with subnet s1 cidr 10.16.0.0/16",
        ),
        (
            json!({"cidrBlock": "10.16.0.0/16", "logicalGateway": true, "u2oInterconnection": true}),
            "logicalGateway and u2oInterconnection can't be opened at the same time",
        ),
        (
            json!({"cidrBlock": "10.16.0.0/16", "u2oFeatures": {"overlayOnlyRouting": true}}),
            "u2oFeatures.overlayOnlyRouting can only be enabled when u2OInterconnection is true",
        ),
        (
            json!({"cidrBlock": "10.16.0.0/16", "u2oInterconnection": true, "u2oFeatures": {"overlayOnlyRouting": true}}),
            "u2oFeatures.overlayOnlyRouting can only be enabled on underlay subnets (vlan must be set)",
        ),
        (
            json!({"cidrBlock": "10.16.0.0/16", "natOutgoingPolicyRules": [{"match": {"srcIPs": "2001:db8::/32,192.168.0.1/24"}}]}),
            "validate nat policy rules src ips 2001:db8::/32,192.168.0.1/24 failed with err match ips 2001:db8::/32,192.168.0.1/24 protocol is not consistent",
        ),
        (
            json!({"cidrBlock": "10.16.0.0/16", "natOutgoingPolicyRules": [{"match": {"dstIPs": "  "}}]}),
            "validate nat policy rules dst ips    failed with err IPStr should not be empty",
        ),
        (
            json!({"cidrBlock": "10.16.0.0/16", "natOutgoingPolicyRules": [{"match": {"srcIPs": " 10.0.0.1, 10.0.0.2"}}]}),
            "validate nat policy rules src ips  10.0.0.1, 10.0.0.2 failed with err match ips 10.0.0.1, 10.0.0.2 is not ip or ipcidr",
        ),
        (
            json!({"cidrBlock": "10.16.0.0/16", "natOutgoingPolicyRules": [{"match": {"srcIPs": "10.0.0.0/8", "dstIPs": "fd00::1"}}]}),
            "Match.SrcIPS protocol IPv4 not equal to Match.DstIPs protocol IPv6",
        ),
        (
            json!({"vlan": "v", "u2oInterconnectionIP": "10.0.0.1"}),
            "u2oInterconnectionIP is not supported for underlay subnet s1 without cidrBlock",
        ),
        (
            json!({"cidrBlock": "fd00::/112", "u2oInterconnectionIP": "FD00::2"}),
            "subnet s1 U2O interconnection ip FD00::2 v6 ip address can not contain upper case",
        ),
        (
            json!({"cidrBlock": "2001:db8::/32", "u2oInterconnectionIP": "3001:db8::2"}),
            "u2oInterconnectionIP 3001:db8::2 is not in subnet s1 cidr 2001:db8::/32",
        ),
        (
            json!({"cidrBlock": "10.16.0.0/16,fd00::/112", "gateway": "10.16.0.1,fd00::1", "u2oInterconnectionIP": "fd00::0:1"}),
            "u2oInterconnectionIP fd00::0:1 conflicts with subnet gateway 10.16.0.1,fd00::1",
        ),
    ];
    for (spec, want) in denied {
        assert_eq!(
            spec_result(spec.clone()),
            Err(Denial::forbidden(*want)),
            "{spec}"
        );
    }
}

#[test]
fn apiserver_address_is_looked_up_only_when_reached() {
    let cluster = FakeHost::new([namespaced(
        &kinds::SERVICE,
        "default",
        "kubernetes",
        json!({"spec": {"clusterIP": "10.96.0.1", "clusterIPs": ["10.96.0.1", "fd00:10:96::1"]}}),
    )]);
    let unset = settings(None);
    let check = |spec: Value, host: &FakeHost| {
        validate_spec(
            &typed(subnet("s1", spec)),
            &Context::new(&unset, &host.cluster()),
        )
    };
    assert_eq!(
        check(json!({"cidrBlock": "fd00:10:96::/112"}), &cluster),
        Err(Denial::forbidden(
            "subnet s1 cidr fd00:10:96::/112 conflicts with k8s apiserver svc ip fd00:10:96::1"
        ))
    );
    // Another VPC is never compared with the apiserver address.
    assert_eq!(
        check(
            json!({"cidrBlock": "10.96.0.0/24", "vpc": "vpc-a"}),
            &cluster
        ),
        Ok(())
    );
    // With no Service, nothing conflicts.
    assert_eq!(
        check(json!({"cidrBlock": "10.96.0.0/24"}), &FakeHost::default()),
        Ok(())
    );
    // No RBAC for Services: the API server answers 403.
    let mut failing = FakeHost::default();
    failing.forbid(&kinds::SERVICE);
    // An earlier failure wins over the lookup; the lookup failure is a 400.
    assert_eq!(
        check(
            json!({"cidrBlock": "10.96.0.0/24", "gatewayType": "x"}),
            &failing
        ),
        Err(Denial::forbidden("x is not a valid gateway type"))
    );
    assert_eq!(
        check(json!({"cidrBlock": "10.96.0.0/24"}), &failing),
        Err(Denial::bad_request(
            "cannot get v1 Service \"default/kubernetes\": error invoking host capability kubernetes.get_resource: ApiError: services \"kubernetes\" is forbidden: User \"system:serviceaccount:kubewarden:policy-server\" cannot get resource \"services\" in API group \"\" in the namespace \"default\": Forbidden"
        ))
    );
    // A setting is used as given, and no lookup is made.
    let set = settings(Some("10.96.0.1,fd00:10:96::1"));
    assert_eq!(
        validate_spec(
            &typed(subnet("s1", json!({"cidrBlock": "10.96.0.0/24"}))),
            &Context::new(&set, &failing.cluster())
        ),
        Err(Denial::forbidden(
            "subnet s1 cidr 10.96.0.0/24 conflicts with k8s apiserver svc ip 10.96.0.1"
        ))
    );
    // One lookup: the gateway type failed first, the setting needed none.
    assert_eq!(failing.take_calls(), ["get Service default/kubernetes"]);
}

fn cluster_of(subnets: Vec<Value>) -> FakeHost {
    FakeHost::new(subnets)
}

/// The decision on creating the Subnet `new` (a builder's object).
fn create(new: &Value, host: &FakeHost) -> Result<(), Denial> {
    let settings = settings(Some("10.96.0.1"));
    validate_create(
        &typed(new.clone()),
        &Context::new(&settings, &host.cluster()),
    )
}

/// Subnets of the default VPC, with and without a vlan, and of `vpc-a`.
fn overlap_cluster() -> FakeHost {
    cluster_of(vec![
        subnet(
            "ovn-default",
            json!({"vpc": "ovn-cluster", "cidrBlock": "10.16.0.0/16"}),
        ),
        subnet(
            "join",
            json!({"vpc": "ovn-cluster", "cidrBlock": "100.64.0.0/16"}),
        ),
        subnet("legacy", json!({"cidrBlock": "10.240.0.0/16"})),
        subnet(
            "other-vpc",
            json!({"vpc": "vpc-a", "cidrBlock": "10.50.0.0/16"}),
        ),
        subnet(
            "underlay",
            json!({"vpc": "ovn-cluster", "vlan": "v10", "cidrBlock": "10.60.0.0/16"}),
        ),
        subnet("mac-only", json!({"vpc": "ovn-cluster", "vlan": "v10"})),
    ])
}

#[rstest]
#[case::inside_ovn_default(
    json!({"vpc": "ovn-cluster", "cidrBlock": "10.16.10.0/24"}),
    Err(
        "subnet new cidr 10.16.10.0/24 is conflict with subnet ovn-default cidr 10.16.0.0/16",
    )
)]
// Either way round: the new one may contain the old one.
#[case::containing_ovn_default(
    json!({"vpc": "ovn-cluster", "cidrBlock": "10.16.0.0/12"}),
    Err(
        "subnet new cidr 10.16.0.0/12 is conflict with subnet ovn-default cidr 10.16.0.0/16",
    )
)]
// I8: an empty vpc is the default VPC, on either side.
#[case::empty_vpc_is_the_default(
    json!({"cidrBlock": "10.16.10.0/24"}),
    Err(
        "subnet new cidr 10.16.10.0/24 is conflict with subnet ovn-default cidr 10.16.0.0/16",
    )
)]
#[case::inside_legacy_without_vpc(
    json!({"vpc": "ovn-cluster", "cidrBlock": "10.240.1.0/24"}),
    Err("subnet new cidr 10.240.1.0/24 is conflict with subnet legacy cidr 10.240.0.0/16")
)]
#[case::inside_join(
    json!({"vpc": "ovn-cluster", "cidrBlock": "100.64.0.0/24"}),
    Err("subnet new cidr 100.64.0.0/24 is conflict with subnet join cidr 100.64.0.0/16")
)]
#[case::free_range(
    json!({"vpc": "ovn-cluster", "cidrBlock": "10.17.0.0/16"}),
    Ok(())
)]
#[case::other_vpcs_range(
    json!({"vpc": "ovn-cluster", "cidrBlock": "10.50.0.0/24"}),
    Ok(())
)]
#[case::other_vpc(json!({"vpc": "vpc-a", "cidrBlock": "10.16.0.0/24"}), Ok(()))]
#[case::other_vlan(
    json!({"vpc": "ovn-cluster", "vlan": "v20", "cidrBlock": "10.60.0.0/24"}),
    Ok(())
)]
#[case::same_vlan(
    json!({"vpc": "ovn-cluster", "vlan": "v10", "cidrBlock": "10.60.0.0/24"}),
    Err("subnet new cidr 10.60.0.0/24 is conflict with subnet underlay cidr 10.60.0.0/16")
)]
#[case::same_vlan_without_cidr(json!({"vpc": "ovn-cluster", "vlan": "v10"}), Ok(()))]
// Host bits do not hide an overlap.
#[case::host_bits(
    json!({"vpc": "ovn-cluster", "cidrBlock": "10.16.200.7/24"}),
    Err(
        "subnet new cidr 10.16.200.7/24 is conflict with subnet ovn-default cidr 10.16.0.0/16",
    )
)]
fn overlap_is_checked_within_the_vpc_and_vlan(#[case] spec: Value, #[case] want: Result<(), &str>) {
    assert_eq!(
        create(&subnet("new", spec), &overlap_cluster()),
        want.map_err(Denial::conflict)
    );
}

#[test]
fn overlap_names_the_first_subnet_by_name_and_never_itself() {
    let cluster = cluster_of(vec![
        subnet(
            "zz",
            json!({"vpc": "ovn-cluster", "cidrBlock": "10.16.0.0/16"}),
        ),
        subnet(
            "aa",
            json!({"vpc": "ovn-cluster", "cidrBlock": "10.16.5.0/24"}),
        ),
        subnet(
            "me",
            json!({"vpc": "ovn-cluster", "cidrBlock": "10.16.4.0/22"}),
        ),
    ]);
    assert_eq!(
        create(
            &subnet(
                "new",
                json!({"vpc": "ovn-cluster", "cidrBlock": "10.16.4.0/22"})
            ),
            &cluster
        ),
        Err(Denial::conflict(
            "subnet new cidr 10.16.4.0/22 is conflict with subnet aa cidr 10.16.5.0/24"
        ))
    );
    let alone = cluster_of(vec![subnet(
        "me",
        json!({"vpc": "ovn-cluster", "cidrBlock": "10.16.4.0/22"}),
    )]);
    assert_eq!(
        create(
            &subnet(
                "me",
                json!({"vpc": "ovn-cluster", "cidrBlock": "10.16.4.0/22"})
            ),
            &alone
        ),
        Ok(())
    );
}

#[test]
fn egress_gateways_need_their_own_routing_table() {
    let cluster = cluster_of(vec![subnet(
        "egw-a",
        json!({"vpc": "ovn-cluster", "cidrBlock": "10.70.0.0/24", "externalEgressGateway": "192.168.0.1"}),
    )]);
    let new = |table: u32| {
        subnet(
            "egw-b",
            json!({"vpc": "ovn-cluster", "cidrBlock": "10.71.0.0/24", "externalEgressGateway": "192.168.0.1", "policyRoutingTableID": table}),
        )
    };
    assert_eq!(
        create(&new(0), &cluster),
        Err(Denial::conflict(
            "subnet egw-b policy routing table ID 0 is conflict with subnet egw-a policy routing table ID 0"
        ))
    );
    assert_eq!(create(&new(1000), &cluster), Ok(()));
}

#[test]
fn create_checks_vpc_names_and_custom_vpc_namespaces() {
    let vpc = |name: &str, namespaces: Value, standby: bool, default: bool| {
        let status = json!({"standby": standby, "default": default});
        object(
            &kinds::VPC,
            name,
            json!({"spec": {"namespaces": namespaces}, "status": status}),
        )
    };
    let cluster = FakeHost::new([
        vpc("ovn-cluster", json!([]), true, true),
        vpc("vpc-a", json!(["ns-a"]), true, false),
        vpc("vpc-b", json!([]), false, false),
        vpc("clash", json!([]), true, false),
    ]);
    let new = |name: &str, vpc: &str, namespaces: Value| {
        subnet(
            name,
            json!({"vpc": vpc, "cidrBlock": "10.80.0.0/24", "namespaces": namespaces}),
        )
    };
    assert_eq!(
        create(&new("s", "vpc-a", json!(["ns-a"])), &cluster),
        Ok(())
    );
    assert_eq!(
        create(&new("s", "vpc-a", json!(["ns-a", "ns-b"])), &cluster),
        Err(Denial::bad_request(
            "namespace 'ns-b' is out of range to custom vpc 'vpc-a'"
        ))
    );
    // The default VPC and a VPC that is not up yet restrict nothing.
    assert_eq!(
        create(&new("s", "ovn-cluster", json!(["x"])), &cluster),
        Ok(())
    );
    assert_eq!(create(&new("s", "vpc-b", json!(["x"])), &cluster), Ok(()));
    assert_eq!(
        create(&new("clash", "vpc-a", json!([])), &cluster),
        Err(Denial::bad_request(
            "vpc and subnet cannot have the same name"
        ))
    );
}

/// Subnet `s` with this spec and status.
fn subnet_with(spec: Value, status: Value) -> Subnet {
    typed(object(
        &kinds::SUBNET,
        "s",
        json!({"spec": spec, "status": status}),
    ))
}

/// Subnet `s` of the default VPC with a gateway and three IPv4 addresses in use.
fn gateway_in_use() -> Subnet {
    subnet_with(
        json!({"vpc": "ovn-cluster", "cidrBlock": "10.80.0.0/24", "gateway": "10.80.0.1"}),
        json!({"v4usingIPs": 3}),
    )
}

#[rstest]
#[case::gateway_change_while_in_use(
    subnet_with(
        json!({"vpc": "ovn-cluster", "cidrBlock": "10.80.0.0/24", "gateway": "10.80.0.2"}),
        json!({"v4usingIPs": "3"}),
    ),
    gateway_in_use(),
    Err(Denial::forbidden(
        "can't update gateway of cidr when any IPs in Using",
    ))
)]
#[case::gateway_change_while_none_in_use(
    subnet_with(
        json!({"vpc": "ovn-cluster", "cidrBlock": "10.80.0.0/24", "gateway": "10.80.0.2"}),
        json!({"v4usingIPs": 0, "v6usingIPs": "0"}),
    ),
    gateway_in_use(),
    Ok(())
)]
#[case::cidr_added_to_underlay(
    subnet_with(json!({"vlan": "v", "cidrBlock": "10.81.0.0/24"}), json!({})),
    subnet_with(json!({"vlan": "v"}), json!({})),
    Err(Denial::forbidden(
        "cannot add cidrBlock to an underlay subnet that was created without one",
    ))
)]
#[case::cidr_removed_from_underlay(
    subnet_with(json!({"vlan": "v"}), json!({})),
    subnet_with(json!({"vlan": "v", "cidrBlock": "10.81.0.0/24"}), json!({})),
    Err(Denial::forbidden(
        "cannot remove cidrBlock from an underlay subnet that was created with one",
    ))
)]
#[case::vpc_set_to_ovn_cluster(
    subnet_with(
        json!({"vpc": "ovn-cluster", "cidrBlock": "10.80.0.0/24"}),
        json!({}),
    ),
    subnet_with(json!({"cidrBlock": "10.80.0.0/24"}), json!({})),
    Ok(())
)]
#[case::vpc_set_to_another(
    subnet_with(
        json!({"vpc": "vpc-a", "cidrBlock": "10.80.0.0/24"}),
        json!({}),
    ),
    subnet_with(json!({"cidrBlock": "10.80.0.0/24"}), json!({})),
    Err(Denial::forbidden(
        "vpc can only be changed from empty to ovn-cluster",
    ))
)]
#[case::vpc_cleared(
    subnet_with(json!({"cidrBlock": "10.80.0.0/24"}), json!({})),
    subnet_with(
        json!({"vpc": "ovn-cluster", "cidrBlock": "10.80.0.0/24"}),
        json!({}),
    ),
    Err(Denial::forbidden(
        "vpc can only be changed from empty to ovn-cluster",
    ))
)]
#[case::spec_checks_after_update_rules(
    subnet_with(
        json!({"vpc": "ovn-cluster", "cidrBlock": "10.80.0.0/24", "excludeIps": ["x"]}),
        json!({}),
    ),
    subnet_with(
        json!({"vpc": "ovn-cluster", "cidrBlock": "10.80.0.0/24"}),
        json!({}),
    ),
    Err(Denial::forbidden(
        "ip x in excludeIps is not a valid address",
    ))
)]
fn update_rules_come_first(
    #[case] new: Subnet,
    #[case] old: Subnet,
    #[case] want: Result<(), Denial>,
) {
    let settings = settings(Some("10.96.0.1"));
    assert_eq!(
        validate_update(
            &new,
            &old,
            &Context::new(&settings, &FakeHost::default().cluster())
        ),
        want
    );
}

#[test]
fn delete_is_refused_while_addresses_are_in_use() {
    let with =
        |status: Value| -> Subnet { typed(object(&kinds::SUBNET, "s", json!({"status": status}))) };
    let in_use = Err(Denial::forbidden(
        "can't delete subnet when any IPs in Using",
    ));
    assert_eq!(validate_delete(&with(json!({}))), Ok(()));
    assert_eq!(
        validate_delete(&with(json!({"v4usingIPs": 0, "v6usingIPs": null}))),
        Ok(())
    );
    assert_eq!(
        validate_delete(&with(json!({"v4usingIPs": "0", "v6usingIPs": 0.0}))),
        Ok(())
    );
    assert_eq!(validate_delete(&with(json!({"v4usingIPs": 7}))), in_use);
    assert_eq!(validate_delete(&with(json!({"v6usingIPs": "2"}))), in_use);
    assert_eq!(validate_delete(&with(json!({"v6usingIPs": "-1"}))), in_use);
    let undecodable = from_value::<Subnet>(json!({"status": {"v4usingIPs": "abc"}}));
    assert!(undecodable.is_err());
}

#[rstest]
#[case::zero("0", Some(true))]
#[case::null("null", Some(true))]
#[case::zero_string("\"0\"", Some(true))]
#[case::minus_zero("-0", Some(true))]
#[case::seven("7", Some(false))]
#[case::seven_string("\"7\"", Some(false))]
#[case::plus_seven("+7", Some(false))]
#[case::beyond_u64("123456789012345678901234567890", Some(false))]
#[case::zero_point_zero("0.0", Some(true))]
#[case::seven_point_zero("7.0", Some(false))]
#[case::exponent("1e3", Some(false))]
#[case::zero_exponent("0e5", Some(true))]
#[case::fraction("1.5", None)]
#[case::negative_exponent("1e-3", None)]
#[case::fraction_by_exponent("15e-1", None)]
#[case::whole_by_exponent("150e-1", Some(false))]
#[case::empty_string("\"\"", None)]
#[case::letters("\"abc\"", None)]
#[case::boolean("true", None)]
#[case::exponent_without_digits("1e", None)]
#[case::underscores("\"1_000\"", None)]
fn big_int_reads_numbers_as_go_does(#[case] json: &str, #[case] want: Option<bool>) {
    assert_eq!(BigInt::parse(json).map(|b| b.is_zero()), want);
}

#[rstest]
#[case::no_cidr("", "10.0.0.1", Ok(()))]
#[case::no_gateway("10.0.0.0/24", "", Ok(()))]
#[case::gateway_inside("10.0.0.0/24", "10.0.0.1", Ok(()))]
#[case::gateway_is_broadcast(
    "10.0.0.0/24",
    "10.0.0.255",
    Err("10.0.0.255 is the broadcast ip in cidr 10.0.0.0/24")
)]
#[case::gateway_is_network_number(
    "10.0.0.0/24",
    "10.0.0.0",
    Err("10.0.0.0 is the network number ip in cidr 10.0.0.0/24")
)]
#[case::v4_31_network_number("10.0.0.0/31", "10.0.0.0", Ok(()))]
#[case::v4_31_last_address("10.0.0.0/31", "10.0.0.1", Ok(()))]
#[case::v6_127_network_number("fd00::/127", "fd00::", Ok(()))]
#[case::v6_64_last_address("fd00::/64", "fd00::ffff:ffff:ffff:ffff", Ok(()))]
#[case::dual_stack_v6_network_number(
    "10.0.0.0/24,fd00::/64",
    "fd00::",
    Err("fd00:: is the network number ip in cidr fd00::/64")
)]
#[case::v6_128_netmask(
    "fd00::/128",
    "fd00::",
    Err("subnet fd00::/128 is configured with /32 or /128 netmask")
)]
#[case::other_family_ignored("10.0.0.0/24", "fd00::1", Ok(()))]
fn network_broadcast_follows_kube_ovn(
    #[case] cidr: &str,
    #[case] ip: &str,
    #[case] want: Result<(), &str>,
) {
    assert_eq!(
        validate_network_broadcast(cidr, ip),
        want.map_err(str::to_string)
    );
}
