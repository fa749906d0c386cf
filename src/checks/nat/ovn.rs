//! The OVN NAT kinds: kube-ovn-webhook's hooks for OvnEip (CREATE, UPDATE,
//! DELETE) and OvnDnatRule, OvnSnatRule and OvnFip (CREATE, UPDATE).
//! Upstream has them in code but its manifests never route them; every
//! failure is `Errored(400)`.

use crate::admission::denial::Denial;
use crate::admission::{Operation, Request};
use crate::checks::nat::iptables::EIP_V4_IP_LABEL;
use crate::checks::subnet_address::{self, EipStyle};
use crate::k8s::cluster::{Cluster, OvnNatKind};
use crate::k8s::kinds;
use crate::k8s::objects::{OvnEip, OvnRule};
use crate::upstream::go_strconv::atoi_or_error;
use crate::upstream::kubeovn_util::ipv6_to_label_value;

/// Admits an OvnEip CREATE, UPDATE or DELETE.
pub fn admit_eip(request: &Request<'_>, cluster: &dyn Cluster) -> Result<(), Denial> {
    match request.operation {
        Operation::Create => validate_eip_create(&request.object()?, cluster),
        Operation::Update => {
            let (new, old) = request.update()?;
            validate_eip_update(&new, &old, cluster)
        }
        Operation::Delete => validate_eip_delete(&request.old_object()?, cluster),
        Operation::Other => Ok(()),
    }
}

/// Admits an OvnDnatRule CREATE or UPDATE.
pub fn admit_dnat(request: &Request<'_>, cluster: &dyn Cluster) -> Result<(), Denial> {
    admit_rule(request, "OvnDnat", validate_dnat_create, cluster)
}

/// Admits an OvnSnatRule CREATE or UPDATE.
pub fn admit_snat(request: &Request<'_>, cluster: &dyn Cluster) -> Result<(), Denial> {
    admit_rule(request, "OvnSnat", validate_snat_create, cluster)
}

/// Admits an OvnFip CREATE or UPDATE.
pub fn admit_fip(request: &Request<'_>, cluster: &dyn Cluster) -> Result<(), Denial> {
    admit_rule(request, "OvnFip", validate_fip_create, cluster)
}

/// A rule: its CREATE check, run again on an UPDATE that changes it.
fn admit_rule(
    request: &Request<'_>,
    word: &str,
    create: RuleCheck,
    cluster: &dyn Cluster,
) -> Result<(), Denial> {
    match request.operation {
        Operation::Create => create(&request.object()?, cluster),
        Operation::Update => {
            let (new, old) = request.update()?;
            validate_rule_update(word, &new, &old, create, cluster)
        }
        Operation::Delete | Operation::Other => Ok(()),
    }
}

/// The label kube-ovn-controller puts on an OVN NAT rule naming its EIP's
/// IPv6 address (`:` written as `-`).
pub const EIP_V6_IP_LABEL: &str = "ovn.kubernetes.io/eip_v6_ip";

/// An OvnEip CREATE: an existing external subnet holding its addresses.
pub fn validate_eip_create(eip: &OvnEip, cluster: &dyn Cluster) -> Result<(), Denial> {
    let spec = &eip.spec;
    subnet_address::check_eip(
        &eip.metadata.name,
        &spec.external_subnet,
        &spec.v4_ip,
        &spec.v6_ip,
        EipStyle::Ovn,
        cluster,
    )
    .map_err(Denial::bad_request)
}

/// An OvnEip UPDATE that changes the spec: refused once ready, else checked
/// as a CREATE.
pub fn validate_eip_update(
    new: &OvnEip,
    old: &OvnEip,
    cluster: &dyn Cluster,
) -> Result<(), Denial> {
    if new.spec == old.spec {
        return Ok(());
    }
    if old.status.ready {
        return Err(Denial::bad_request("OvnEip not support change"));
    }
    validate_eip_create(new, cluster)
}

/// An OvnEip DELETE: refused while ready and a DNAT, FIP or SNAT rule is
/// labelled with its addresses.
pub fn validate_eip_delete(eip: &OvnEip, cluster: &dyn Cluster) -> Result<(), Denial> {
    if !eip.status.ready {
        return Ok(());
    }
    let v6 = ipv6_to_label_value(&eip.spec.v6_ip);
    let labels = [
        (EIP_V4_IP_LABEL, eip.spec.v4_ip.as_str()),
        (EIP_V6_IP_LABEL, v6.as_str()),
    ];
    for kind in [OvnNatKind::DnatRule, OvnNatKind::Fip, OvnNatKind::SnatRule] {
        if !cluster.labelled(kind.as_kind(), &labels)?.is_empty() {
            return Err(Denial::bad_request(format!(
                "OvnEip {} is still used by ovn nat",
                eip.metadata.name
            )));
        }
    }
    Ok(())
}

/// The EIP a rule names must exist (nothing of it is read).
fn eip_exists(name: &str, cluster: &dyn Cluster) -> Result<(), Denial> {
    if cluster.exists(OvnNatKind::eip_kind(), name)? {
        Ok(())
    } else {
        Err(Denial::bad_request(kinds::OVN_EIP.not_found(name)))
    }
}

/// An OvnDnatRule CREATE.
pub fn validate_dnat_create(dnat: &OvnRule, cluster: &dyn Cluster) -> Result<(), Denial> {
    let spec = &dnat.spec;
    if spec.ovn_eip.is_empty() {
        return Err(Denial::bad_request("should set spec ovnEip"));
    }
    if spec.ip_name.is_empty() && spec.v4_ip.is_empty() && spec.v6_ip.is_empty() {
        return Err(Denial::bad_request("should set spec ipName or v4 or v6 Ip"));
    }
    eip_exists(&spec.ovn_eip, cluster)?;
    if spec.external_port.is_empty() {
        return Err(Denial::bad_request("should set spec externalPort"));
    }
    if spec.internal_port.is_empty() {
        return Err(Denial::bad_request("should set spec internalPort"));
    }
    for (which, port) in [
        ("externalPort", &spec.external_port),
        ("internalPort", &spec.internal_port),
    ] {
        match atoi_or_error(port) {
            Err(why) => {
                return Err(Denial::bad_request(format!(
                    "failed to parse spec {which} {port}: {why}"
                )));
            }
            Ok(0..=65535) => {}
            Ok(_) => {
                return Err(Denial::bad_request(format!(
                    "spec {which} {port} is not a valid port"
                )));
            }
        }
    }
    if !spec.protocol.eq_ignore_ascii_case("tcp") && !spec.protocol.eq_ignore_ascii_case("udp") {
        return Err(Denial::bad_request(format!(
            "invalid dnat protocol: {}, support tcp or udp",
            spec.protocol
        )));
    }
    Ok(())
}

/// An OvnSnatRule CREATE.
pub fn validate_snat_create(snat: &OvnRule, cluster: &dyn Cluster) -> Result<(), Denial> {
    let spec = &snat.spec;
    if spec.ovn_eip.is_empty() {
        return Err(Denial::bad_request("should set spec OvnEip"));
    }
    if !spec.vpc_subnet.is_empty() && !spec.ip_name.is_empty() {
        return Err(Denial::bad_request(
            "should not set spec vpcSubnet and ipName at the same time",
        ));
    }
    let (v4, v6) = (spec.v4_ip_cidr.is_empty(), spec.v6_ip_cidr.is_empty());
    if !spec.vpc.is_empty() && v4 && v6 {
        return Err(Denial::bad_request(
            "should set spec v4 or v6 IpCidr (subnet cidr or ip address) when spec vpc is set",
        ));
    }
    if spec.vpc.is_empty() && !v4 && !v6 {
        return Err(Denial::bad_request(
            "should set spec vpc while spec v4 or v6 IpCidr is not set",
        ));
    }
    if spec.vpc_subnet.is_empty() && spec.ip_name.is_empty() && spec.vpc.is_empty() && v4 && v6 {
        return Err(Denial::bad_request(
            "should set spec vpcSubnet or ipName or vpc and v4 and v6 IpCidr at least",
        ));
    }
    eip_exists(&spec.ovn_eip, cluster)
}

/// An OvnFip CREATE.
pub fn validate_fip_create(fip: &OvnRule, cluster: &dyn Cluster) -> Result<(), Denial> {
    let spec = &fip.spec;
    if spec.ovn_eip.is_empty() {
        return Err(Denial::bad_request("should set spec ovnEip"));
    }
    if spec.ip_name.is_empty() && spec.v4_ip.is_empty() && spec.v6_ip.is_empty() {
        return Err(Denial::bad_request("should set spec ipName or ip"));
    }
    eip_exists(&spec.ovn_eip, cluster)
}

/// A CREATE check of one OVN NAT rule kind.
type RuleCheck = fn(&OvnRule, &dyn Cluster) -> Result<(), Denial>;

/// An UPDATE of an OVN NAT rule that changes the spec: refused once ready
/// (`OvnDnat|OvnSnat|OvnFip not support change`), else checked as a CREATE.
pub fn validate_rule_update(
    word: &str,
    new: &OvnRule,
    old: &OvnRule,
    create: RuleCheck,
    cluster: &dyn Cluster,
) -> Result<(), Denial> {
    if new.spec == old.spec {
        return Ok(());
    }
    if old.status.ready {
        return Err(Denial::bad_request(format!("{word} not support change")));
    }
    create(new, cluster)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::k8s::fake::{FakeHost, labelled, object, subnet, typed};
    use rstest::rstest;
    use serde_json::{Value, json};

    fn host() -> FakeHost {
        FakeHost::new([
            subnet(
                "ovn-vpc-external-network",
                json!({"cidrBlock": "10.5.204.0/24,fd00:5::/120"}),
            ),
            object(OvnNatKind::eip_kind(), "eip-a", json!({})),
        ])
    }

    fn eip(spec: Value, ready: bool) -> OvnEip {
        typed(object(
            OvnNatKind::eip_kind(),
            "eip-a",
            json!({"spec": spec, "status": {"ready": ready}}),
        ))
    }

    /// A DNAT rule: one that passes, with `extra`'s fields over its spec.
    fn dnat(extra: Value) -> OvnRule {
        let mut spec = json!({"ovnEip": "eip-a", "v4Ip": "10.0.1.5", "externalPort": "0", "internalPort": "65535", "protocol": "UDP"});
        if let (Some(s), Some(e)) = (spec.as_object_mut(), extra.as_object()) {
            s.extend(e.clone());
        }
        rule(spec, false)
    }

    fn rule(spec: Value, ready: bool) -> OvnRule {
        typed(object(
            OvnNatKind::DnatRule.as_kind(),
            "r",
            json!({"spec": spec, "status": {"ready": ready}}),
        ))
    }

    #[rstest]
    #[case::dual_stack_addresses(json!({"v4Ip": "10.5.204.3", "v6Ip": "fd00:5::3"}), Ok(()))]
    #[case::external_subnet_missing(
        json!({"externalSubnet": "ext-b"}),
        Err("Subnet.kubeovn.io \"ext-b\" not found")
    )]
    #[case::v4_not_an_ip(
        json!({"v4Ip": "10.5.204"}),
        Err("spec v4Ip 10.5.204 is not a valid")
    )]
    #[case::v6_upper_case(
        json!({"v6Ip": "FD00:5::3"}),
        Err("eip eip-a v6 ip address FD00:5::3 can not contain upper case")
    )]
    #[case::v6_not_an_ip(
        json!({"v6Ip": "fd00:5::x"}),
        Err("spec v6ip fd00:5::x is not a valid")
    )]
    #[case::v6_outside_subnet(
        json!({"v6Ip": "fd00:6::3"}),
        Err(
            "the vip fd00:6::3 is not in the range of subnet ovn-vpc-external-network, cidr 10.5.204.0/24,fd00:5::/120",
        )
    )]
    fn eip_fields(#[case] spec: Value, #[case] want: Result<(), &str>) {
        assert_eq!(
            validate_eip_create(&eip(spec, false), &host().cluster()),
            want.map_err(Denial::bad_request)
        );
    }

    #[test]
    fn eip_checks() {
        let ready = eip(json!({"v4Ip": "10.5.204.3"}), true);
        assert_eq!(
            validate_eip_update(&ready, &ready, &host().cluster()),
            Ok(())
        );
        assert_eq!(
            validate_eip_update(
                &eip(json!({"v4Ip": "10.5.204.4"}), true),
                &ready,
                &host().cluster()
            ),
            Err(Denial::bad_request("OvnEip not support change"))
        );
        let mut used = host();
        assert_eq!(validate_eip_delete(&ready, &used.cluster()), Ok(()));
        used.extend([labelled(
            OvnNatKind::SnatRule.as_kind(),
            "snat-a",
            &[(EIP_V4_IP_LABEL, "10.5.204.3"), (EIP_V6_IP_LABEL, "")],
            json!({"spec": {"ovnEip": "eip-a"}}),
        )]);
        assert_eq!(
            validate_eip_delete(&ready, &used.cluster()),
            Err(Denial::bad_request("OvnEip eip-a is still used by ovn nat"))
        );
        assert_eq!(
            validate_eip_delete(&eip(json!({"v4Ip": "10.5.204.3"}), false), &used.cluster()),
            Ok(())
        );
    }

    #[test]
    fn ipv6_label_values() {
        assert_eq!(ipv6_to_label_value(""), "");
        assert_eq!(ipv6_to_label_value("fd00::5"), "fd00--5");
        assert_eq!(ipv6_to_label_value("::1"), "0--1");
        assert_eq!(ipv6_to_label_value("fd00::"), "fd00--0");
    }

    #[rstest]
    #[case::defaults(json!({}), Ok(()))]
    #[case::eip_empty(json!({"ovnEip": ""}), Err("should set spec ovnEip"))]
    #[case::address_empty(
        json!({"v4Ip": ""}),
        Err("should set spec ipName or v4 or v6 Ip")
    )]
    #[case::eip_missing(
        json!({"ovnEip": "eip-x"}),
        Err("OvnEip.kubeovn.io \"eip-x\" not found")
    )]
    #[case::external_port_empty(
        json!({"externalPort": ""}),
        Err("should set spec externalPort")
    )]
    #[case::internal_port_empty(
        json!({"internalPort": ""}),
        Err("should set spec internalPort")
    )]
    #[case::external_port_not_a_number(
        json!({"externalPort": "8o"}),
        Err(
            "failed to parse spec externalPort 8o: strconv.Atoi: parsing \"8o\": invalid syntax",
        )
    )]
    #[case::external_port_out_of_range(
        json!({"externalPort": "99999999999999999999"}),
        Err(
            "failed to parse spec externalPort 99999999999999999999: strconv.Atoi: parsing \"99999999999999999999\": value out of range",
        )
    )]
    #[case::internal_port_negative(
        json!({"internalPort": "-1"}),
        Err("spec internalPort -1 is not a valid port")
    )]
    #[case::protocol_icmp(
        json!({"protocol": "icmp"}),
        Err("invalid dnat protocol: icmp, support tcp or udp")
    )]
    fn dnat_fields(#[case] extra: Value, #[case] want: Result<(), &str>) {
        assert_eq!(
            validate_dnat_create(&dnat(extra), &host().cluster()),
            want.map_err(Denial::bad_request)
        );
    }

    #[rstest]
    #[case::ip_name(
        json!({"ovnEip": "eip-a", "ipName": "web-0.default"}),
        Ok(())
    )]
    #[case::vpc_and_cidr(
        json!({"ovnEip": "eip-a", "vpc": "vpc-a", "v4IpCidr": "10.0.1.0/24"}),
        Ok(())
    )]
    #[case::eip_empty(json!({}), Err("should set spec OvnEip"))]
    #[case::subnet_and_ip_name_together(
        json!({"ovnEip": "eip-a", "ipName": "a", "vpcSubnet": "b"}),
        Err("should not set spec vpcSubnet and ipName at the same time")
    )]
    #[case::vpc_without_cidr(
        json!({"ovnEip": "eip-a", "vpc": "vpc-a"}),
        Err(
            "should set spec v4 or v6 IpCidr (subnet cidr or ip address) when spec vpc is set",
        )
    )]
    #[case::cidr_without_vpc(
        json!({"ovnEip": "eip-a", "v4IpCidr": "10.0.1.0/24", "v6IpCidr": "fd00::/64"}),
        Err("should set spec vpc while spec v4 or v6 IpCidr is not set")
    )]
    #[case::nothing_to_translate(
        json!({"ovnEip": "eip-a"}),
        Err("should set spec vpcSubnet or ipName or vpc and v4 and v6 IpCidr at least")
    )]
    #[case::eip_missing(
        json!({"ovnEip": "eip-x", "ipName": "a"}),
        Err("OvnEip.kubeovn.io \"eip-x\" not found")
    )]
    fn snat_fields(#[case] spec: Value, #[case] want: Result<(), &str>) {
        assert_eq!(
            validate_snat_create(&rule(spec, false), &host().cluster()),
            want.map_err(Denial::bad_request)
        );
    }

    #[test]
    fn rule_checks() {
        assert_eq!(
            validate_fip_create(
                &rule(json!({"ovnEip": "eip-a", "v6Ip": "fd00::5"}), false),
                &host().cluster()
            ),
            Ok(())
        );
        assert_eq!(
            validate_fip_create(&rule(json!({"ovnEip": "eip-a"}), false), &host().cluster()),
            Err(Denial::bad_request("should set spec ipName or ip"))
        );
        let ready = rule(json!({"ovnEip": "eip-a", "ipName": "a"}), true);
        let changed = rule(json!({"ovnEip": "eip-a", "ipName": "b"}), true);
        for (word, create) in [
            ("OvnDnat", validate_dnat_create as RuleCheck),
            ("OvnSnat", validate_snat_create),
            ("OvnFip", validate_fip_create),
        ] {
            assert_eq!(
                validate_rule_update(word, &ready, &ready, create, &host().cluster()),
                Ok(())
            );
            assert_eq!(
                validate_rule_update(word, &changed, &ready, create, &host().cluster()),
                Err(Denial::bad_request(format!("{word} not support change")))
            );
        }
    }
}
