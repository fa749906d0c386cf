//! The iptables NAT kinds of a VpcNatGateway: kube-ovn-webhook's hooks for
//! IptablesEIP (CREATE, UPDATE, DELETE) and IptablesDnatRule,
//! IptablesSnatRule and IptablesFIPRule (CREATE, UPDATE). Each first checks
//! the NAT configuration. Every failure is `Errored(400)`, as upstream.

use crate::admission::denial::Denial;
use crate::admission::{Operation, Request};
use crate::checks::nat::gateway::{NAT_GW_NAME_LABEL, NatConfig};
use crate::checks::subnet_address::{self, EipStyle};
use crate::k8s::cluster::Cluster;
use crate::k8s::kinds::{self, ApiResource};
use crate::k8s::names::sort_by_name;
use crate::k8s::objects::{IptablesEip, IptablesRule};
use crate::upstream::go_net::parse_ip;
use crate::upstream::go_strconv::{atoi, go_quote};
use crate::upstream::kubeovn_util::check_cidrs;

/// Admits an IptablesEIP CREATE, UPDATE or DELETE.
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

/// Admits an IptablesDnatRule CREATE or UPDATE.
pub fn admit_dnat(request: &Request<'_>, cluster: &dyn Cluster) -> Result<(), Denial> {
    match request.operation {
        Operation::Create => validate_dnat_create(&request.object()?, cluster),
        Operation::Update => {
            let (new, old) = request.update()?;
            validate_dnat_update(&new, &old, cluster)
        }
        Operation::Delete | Operation::Other => Ok(()),
    }
}

/// Admits an IptablesSnatRule CREATE or UPDATE.
pub fn admit_snat(request: &Request<'_>, cluster: &dyn Cluster) -> Result<(), Denial> {
    admit_rule(request, validate_snat_create, cluster)
}

/// Admits an IptablesFIPRule CREATE or UPDATE.
pub fn admit_fip(request: &Request<'_>, cluster: &dyn Cluster) -> Result<(), Denial> {
    admit_rule(request, validate_fip_create, cluster)
}

/// An SNAT or FIP rule: its CREATE check, run again on an UPDATE that may change it.
fn admit_rule(
    request: &Request<'_>,
    create: fn(&IptablesRule, &dyn Cluster) -> Result<(), Denial>,
    cluster: &dyn Cluster,
) -> Result<(), Denial> {
    match request.operation {
        Operation::Create => create(&request.object()?, cluster),
        Operation::Update => {
            let (new, old) = request.update()?;
            validate_rule_update(&new, &old, create, cluster)
        }
        Operation::Delete | Operation::Other => Ok(()),
    }
}

/// The label kube-ovn-controller puts on a NAT rule naming its EIP's address.
pub const EIP_V4_IP_LABEL: &str = "ovn.kubernetes.io/eip_v4_ip";
/// The label kube-ovn-controller puts on a DNAT rule naming its external port.
pub const DNAT_EXTERNAL_PORT_LABEL: &str = "ovn.kubernetes.io/vpc_dnat_eport";
/// A DNAT rule's type when it names none.
const EXCLUSIVE: &str = "exclusive";
const SHARE: &str = "share";

/// An IptablesEIP CREATE.
pub fn validate_eip_create(eip: &IptablesEip, cluster: &dyn Cluster) -> Result<(), Denial> {
    NatConfig::load(cluster)?;
    validate_eip(eip, cluster)
}

/// An IptablesEIP UPDATE: its gateway is fixed once set; a ready EIP's spec
/// may change only with a new `redo`; a changed spec is checked again.
pub fn validate_eip_update(
    new: &IptablesEip,
    old: &IptablesEip,
    cluster: &dyn Cluster,
) -> Result<(), Denial> {
    let (n, o) = (&new.spec, &old.spec);
    if !o.nat_gw_dp.is_empty() && n.nat_gw_dp != o.nat_gw_dp {
        return Err(Denial::bad_request(format!(
            "IptablesEIP {}: NatGwDp is immutable once set (old: {}, new: {})",
            go_quote(&new.metadata.name),
            o.nat_gw_dp,
            n.nat_gw_dp
        )));
    }
    if n == o {
        return Ok(());
    }
    if old.status.ready && new.status.redo == old.status.redo {
        return Err(Denial::bad_request(format!(
            "IptablesEIP \"{}\" is ready, does not support change",
            new.metadata.name
        )));
    }
    validate_eip_create(new, cluster)
}

/// An IptablesEIP DELETE: refused while ready and used by a NAT rule.
pub fn validate_eip_delete(eip: &IptablesEip, cluster: &dyn Cluster) -> Result<(), Denial> {
    NatConfig::load(cluster)?;
    if !eip.status.ready {
        return Ok(());
    }
    let labels = [(EIP_V4_IP_LABEL, eip.status.ip.as_str())];
    for using in eip.status.nat.split(',') {
        let kind = match using {
            "fip" => &kinds::IPTABLES_FIP_RULE,
            "snat" => &kinds::IPTABLES_SNAT_RULE,
            "dnat" => &kinds::IPTABLES_DNAT_RULE,
            _ => continue,
        };
        if !cluster.labelled(kind, &labels)?.is_empty() {
            return Err(Denial::bad_request(format!(
                "eip \"{}\" is still in use, you need to delete the {} of eip first",
                eip.metadata.name, eip.status.nat
            )));
        }
    }
    Ok(())
}

/// Upstream's `ValidateIptablesEIP`: a gateway, an existing external subnet,
/// and addresses inside it.
fn validate_eip(eip: &IptablesEip, cluster: &dyn Cluster) -> Result<(), Denial> {
    let spec = &eip.spec;
    if spec.nat_gw_dp.is_empty() {
        return Err(Denial::bad_request("parameter \"natGwDp\" cannot be empty"));
    }
    subnet_address::check_eip(
        &eip.metadata.name,
        &spec.external_subnet,
        &spec.v4ip,
        &spec.v6ip,
        EipStyle::Iptables,
        cluster,
    )
    .map_err(Denial::bad_request)
}

/// The EIP a rule names: it must be named and exist.
fn rule_eip(name: &str, cluster: &dyn Cluster) -> Result<IptablesEip, Denial> {
    if name.is_empty() {
        return Err(Denial::bad_request("parameter \"eip\" cannot be empty"));
    }
    cluster
        .iptables_eip(name)?
        .ok_or_else(|| Denial::bad_request(kinds::IPTABLES_EIP.not_found(name)))
}

/// Upstream's `util.ValidatePort`: a number from 1 to 65535.
fn check_port(which: &str, port: &str) -> Result<(), Denial> {
    let reason = match atoi(port) {
        None => "must be a number",
        Some(1..=65535) => return Ok(()),
        Some(_) => "must be between 1 and 65535",
    };
    Err(Denial::bad_request(format!(
        "{which} {port} is not a valid port: {reason}"
    )))
}

fn dnat_type(rule_type: &str) -> &str {
    if rule_type.is_empty() {
        EXCLUSIVE
    } else {
        rule_type
    }
}

/// An IptablesDnatRule CREATE.
pub fn validate_dnat_create(dnat: &IptablesRule, cluster: &dyn Cluster) -> Result<(), Denial> {
    NatConfig::load(cluster)?;
    validate_dnat(dnat, cluster)
}

/// An IptablesDnatRule UPDATE that changes the spec: the type is fixed, then
/// checked as a CREATE.
pub fn validate_dnat_update(
    new: &IptablesRule,
    old: &IptablesRule,
    cluster: &dyn Cluster,
) -> Result<(), Denial> {
    if new.spec == old.spec {
        return Ok(());
    }
    let (before, after) = (
        dnat_type(&old.spec.rule_type),
        dnat_type(&new.spec.rule_type),
    );
    if before != after {
        return Err(Denial::bad_request(format!(
            "dnat type is immutable after creation: cannot change from {} to {}",
            go_quote(before),
            go_quote(after)
        )));
    }
    validate_dnat_create(new, cluster)
}

/// Upstream's `ValidateIptablesDnat`.
fn validate_dnat(dnat: &IptablesRule, cluster: &dyn Cluster) -> Result<(), Denial> {
    let spec = &dnat.spec;
    let name = dnat.metadata.name.as_str();
    let eip = rule_eip(&spec.eip, cluster)?;
    if spec.external_port.is_empty() {
        return Err(Denial::bad_request(
            "parameter \"externalPort\" cannot be empty",
        ));
    }
    if spec.internal_port.is_empty() {
        return Err(Denial::bad_request(
            "parameter \"internalPort\" cannot be empty",
        ));
    }
    check_port("externalPort", &spec.external_port)?;
    check_port("internalPort", &spec.internal_port)?;
    if parse_ip(&spec.internal_ip).is_none() {
        return Err(Denial::bad_request(format!(
            "internalIP {} is not a valid ip",
            spec.internal_ip
        )));
    }
    if !spec.protocol.eq_ignore_ascii_case("tcp") && !spec.protocol.eq_ignore_ascii_case("udp") {
        return Err(Denial::bad_request(format!(
            "invalid iptable protocol: {},supported params: \"tcp\", \"udp\"",
            spec.protocol
        )));
    }
    let rule_type = dnat_type(&spec.rule_type);
    // Share-type DNAT is implemented with IPv4-only rules.
    if rule_type == SHARE && eip.spec.v4ip.is_empty() && !eip.spec.v6ip.is_empty() {
        return Err(Denial::bad_request(format!(
            "dnat {} cannot use type=share: EIP {} is IPv6-only, share dnat only supports IPv4",
            go_quote(name),
            go_quote(&spec.eip)
        )));
    }
    if !eip.spec.nat_gw_dp.is_empty() {
        let mut same_port = cluster.iptables_dnat_rules(&[
            (NAT_GW_NAME_LABEL, eip.spec.nat_gw_dp.as_str()),
            (DNAT_EXTERNAL_PORT_LABEL, spec.external_port.as_str()),
        ])?;
        sort_by_name(&mut same_port, |rule| rule.metadata.name.as_str());
        let clash = same_port.iter().find(|existing| {
            existing.metadata.name != name
                && existing.spec.eip == spec.eip
                && existing.spec.protocol == spec.protocol
                && (rule_type != SHARE || dnat_type(&existing.spec.rule_type) != SHARE)
        });
        if let Some(existing) = clash {
            return Err(Denial::bad_request(format!(
                "dnat {} (type={rule_type}) conflicts with existing dnat {} (type={}) sharing the same identity (eip={}, port={}, protocol={}): both must be type=share to coexist",
                go_quote(name),
                go_quote(&existing.metadata.name),
                dnat_type(&existing.spec.rule_type),
                spec.eip,
                spec.external_port,
                spec.protocol
            )));
        }
    }
    not_used_by(&spec.eip, &eip, &kinds::IPTABLES_FIP_RULE, "FIP", cluster)
}

/// A FIP takes all traffic to its EIP, shadowing port DNAT rules: a FIP
/// and a DNAT rule never share an EIP. `other` is the kind that must not
/// use it yet; the first such rule by name is named.
fn not_used_by(
    eip_name: &str,
    eip: &IptablesEip,
    other: &ApiResource,
    word: &str,
    cluster: &dyn Cluster,
) -> Result<(), Denial> {
    if eip.status.ip.is_empty() {
        return Ok(());
    }
    let mut users = cluster.labelled(other, &[(EIP_V4_IP_LABEL, eip.status.ip.as_str())])?;
    users.sort();
    match users.first() {
        None => Ok(()),
        Some(user) => Err(Denial::bad_request(format!(
            "EIP {} is already used by {word} rule {}; floating IP requires exclusive use of the EIP (FIP matches all traffic, shadowing port-specific DNAT rules)",
            go_quote(eip_name),
            go_quote(user)
        ))),
    }
}

/// An IptablesSnatRule CREATE: an existing EIP and a valid internal CIDR.
pub fn validate_snat_create(snat: &IptablesRule, cluster: &dyn Cluster) -> Result<(), Denial> {
    NatConfig::load(cluster)?;
    rule_eip(&snat.spec.eip, cluster)?;
    if !check_cidrs(&snat.spec.internal_cidr) {
        return Err(Denial::bad_request(format!(
            "invalid cidr {}",
            snat.spec.internal_cidr
        )));
    }
    Ok(())
}

/// An IptablesSnatRule or IptablesFIPRule UPDATE: a changed spec is checked
/// with the kind's CREATE check (`create`), an unchanged one admitted.
pub fn validate_rule_update(
    new: &IptablesRule,
    old: &IptablesRule,
    create: fn(&IptablesRule, &dyn Cluster) -> Result<(), Denial>,
    cluster: &dyn Cluster,
) -> Result<(), Denial> {
    if new.spec == old.spec {
        return Ok(());
    }
    create(new, cluster)
}

/// An IptablesFIPRule CREATE: an existing EIP no DNAT rule uses, and a valid
/// internal address.
pub fn validate_fip_create(fip: &IptablesRule, cluster: &dyn Cluster) -> Result<(), Denial> {
    NatConfig::load(cluster)?;
    let spec = &fip.spec;
    let eip = rule_eip(&spec.eip, cluster)?;
    if parse_ip(&spec.internal_ip).is_none() {
        return Err(Denial::bad_request(format!(
            "internalIP {} is not a valid",
            spec.internal_ip
        )));
    }
    not_used_by(&spec.eip, &eip, &kinds::IPTABLES_DNAT_RULE, "DNAT", cluster)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::nat::gateway::enabled_config_maps;
    use crate::k8s::fake::{FakeHost, labelled, object, subnet, typed};
    use rstest::rstest;
    use serde_json::{Value, json};

    /// The IptablesEIP `eip-a`, as the cluster holds it.
    fn eip_object(spec: Value, status: Value) -> Value {
        object(
            &kinds::IPTABLES_EIP,
            "eip-a",
            json!({"spec": spec, "status": status}),
        )
    }

    fn eip(spec: Value, status: Value) -> IptablesEip {
        typed(eip_object(spec, status))
    }

    fn rule(name: &str, spec: Value) -> IptablesRule {
        typed(object(
            &kinds::IPTABLES_DNAT_RULE,
            name,
            json!({"spec": spec}),
        ))
    }

    /// A cluster whose `eip-a` is this one.
    fn host_with(eip: Value) -> FakeHost {
        let mut host = FakeHost::new(enabled_config_maps());
        host.extend([
            subnet(
                "ovn-vpc-external-network",
                json!({"cidrBlock": "10.5.204.0/24,fd00:5::/120"}),
            ),
            eip,
        ]);
        host
    }

    fn host() -> FakeHost {
        host_with(eip_object(
            json!({"v4ip": "10.5.204.10", "natGwDp": "gw1"}),
            json!({"ready": true, "ip": "10.5.204.10"}),
        ))
    }

    #[rstest]
    #[case::dual_stack_addresses(
        json!({"natGwDp": "gw1", "v4ip": "10.5.204.20", "v6ip": "fd00:5::20"}),
        Ok(())
    )]
    #[case::no_address(json!({"natGwDp": "gw1"}), Ok(()))]
    #[case::gateway_empty(json!({}), Err("parameter \"natGwDp\" cannot be empty"))]
    #[case::external_subnet_missing(
        json!({"natGwDp": "gw1", "externalSubnet": "ext-b"}),
        Err("Subnet.kubeovn.io \"ext-b\" not found")
    )]
    #[case::v4_not_an_ip(
        json!({"natGwDp": "gw1", "v4ip": "10.5.204"}),
        Err("v4ip 10.5.204 is not a valid")
    )]
    #[case::v4_outside_subnet(
        json!({"natGwDp": "gw1", "v4ip": "10.5.205.1"}),
        Err(
            "the vip 10.5.205.1 is not in the range of subnet \"ovn-vpc-external-network\", cidr 10.5.204.0/24,fd00:5::/120",
        )
    )]
    #[case::v6_upper_case(
        json!({"natGwDp": "gw1", "v6ip": "FD00:5::20"}),
        Err("eip eip-a v6 ip address FD00:5::20 can not contain upper case")
    )]
    #[case::v6_not_an_ip(
        json!({"natGwDp": "gw1", "v6ip": "fd00:5::g"}),
        Err("v6ip fd00:5::g is not a valid")
    )]
    #[case::v6_outside_subnet(
        json!({"natGwDp": "gw1", "v6ip": "fd00:6::20"}),
        Err(
            "the vip fd00:6::20 is not in the range of subnet \"ovn-vpc-external-network\", cidr 10.5.204.0/24,fd00:5::/120",
        )
    )]
    fn eip_checks(#[case] spec: Value, #[case] want: Result<(), &str>) {
        assert_eq!(
            validate_eip_create(&eip(spec, json!({})), &host().cluster()),
            want.map_err(Denial::bad_request)
        );
    }

    #[test]
    fn eip_updates_and_deletes() {
        let ready = eip(
            json!({"natGwDp": "gw1", "v4ip": "10.5.204.10"}),
            json!({"ready": true, "ip": "10.5.204.10", "redo": "1"}),
        );
        let moved = eip(
            json!({"natGwDp": "gw1", "v4ip": "10.5.204.11"}),
            json!({"ready": true, "ip": "10.5.204.10", "redo": "1"}),
        );
        let redone = eip(
            json!({"natGwDp": "gw1", "v4ip": "10.5.204.11"}),
            json!({"ready": true, "ip": "10.5.204.10", "redo": "2"}),
        );
        assert_eq!(
            validate_eip_update(&ready, &ready, &host().cluster()),
            Ok(())
        );
        assert_eq!(
            validate_eip_update(&moved, &ready, &host().cluster()),
            Err(Denial::bad_request(
                "IptablesEIP \"eip-a\" is ready, does not support change"
            ))
        );
        assert_eq!(
            validate_eip_update(&redone, &ready, &host().cluster()),
            Ok(())
        );
        let elsewhere = eip(json!({"natGwDp": "gw2", "v4ip": "10.5.204.10"}), json!({}));
        assert_eq!(
            validate_eip_update(&elsewhere, &ready, &host().cluster()),
            Err(Denial::bad_request(
                "IptablesEIP \"eip-a\": NatGwDp is immutable once set (old: gw1, new: gw2)"
            ))
        );

        let in_use = eip(
            json!({"natGwDp": "gw1"}),
            json!({"ready": true, "ip": "10.5.204.10", "nat": "dnat,snat"}),
        );
        let mut used = host();
        assert_eq!(validate_eip_delete(&in_use, &used.cluster()), Ok(()));
        used.extend([labelled(
            &kinds::IPTABLES_SNAT_RULE,
            "snat-a",
            &[(EIP_V4_IP_LABEL, "10.5.204.10")],
            json!({"spec": {"eip": "eip-a"}}),
        )]);
        assert_eq!(
            validate_eip_delete(&in_use, &used.cluster()),
            Err(Denial::bad_request(
                "eip \"eip-a\" is still in use, you need to delete the dnat,snat of eip first"
            ))
        );
        let not_ready = eip(
            json!({"natGwDp": "gw1"}),
            json!({"ready": false, "ip": "10.5.204.10", "nat": "snat"}),
        );
        assert_eq!(validate_eip_delete(&not_ready, &used.cluster()), Ok(()));
    }

    /// A DNAT rule's spec: one that passes, with `extra`'s fields over it.
    fn dnat_spec(extra: Value) -> Value {
        let mut s = json!({"eip": "eip-a", "externalPort": "8080", "internalPort": "80", "internalIp": "10.0.1.5", "protocol": "TCP"});
        if let (Some(s), Some(extra)) = (s.as_object_mut(), extra.as_object()) {
            s.extend(extra.clone());
        }
        s
    }

    #[rstest]
    #[case::defaults(json!({}), Ok(()))]
    #[case::ports_at_the_bounds_protocol_lower_case(
        json!({"externalPort": "1", "internalPort": "65535", "protocol": "udp"}),
        Ok(())
    )]
    #[case::eip_empty(json!({"eip": ""}), Err("parameter \"eip\" cannot be empty"))]
    #[case::eip_missing(
        json!({"eip": "eip-x"}),
        Err("IptablesEIP.kubeovn.io \"eip-x\" not found")
    )]
    #[case::external_port_empty(
        json!({"externalPort": ""}),
        Err("parameter \"externalPort\" cannot be empty")
    )]
    #[case::internal_port_empty(
        json!({"internalPort": ""}),
        Err("parameter \"internalPort\" cannot be empty")
    )]
    #[case::external_port_not_a_number(
        json!({"externalPort": "http"}),
        Err("externalPort http is not a valid port: must be a number")
    )]
    #[case::external_port_zero(
        json!({"externalPort": "0"}),
        Err("externalPort 0 is not a valid port: must be between 1 and 65535")
    )]
    #[case::internal_port_too_big(
        json!({"internalPort": "65536"}),
        Err("internalPort 65536 is not a valid port: must be between 1 and 65535")
    )]
    #[case::internal_ip_not_an_ip(
        json!({"internalIp": "10.0.1"}),
        Err("internalIP 10.0.1 is not a valid ip")
    )]
    #[case::protocol_empty(
        json!({"protocol": ""}),
        Err("invalid iptable protocol: ,supported params: \"tcp\", \"udp\"")
    )]
    fn dnat_fields(#[case] extra: Value, #[case] want: Result<(), &str>) {
        assert_eq!(
            validate_dnat_create(&rule("dnat-a", dnat_spec(extra)), &host().cluster()),
            want.map_err(Denial::bad_request)
        );
    }

    #[test]
    fn dnat_checks() {
        // Share needs an IPv4 EIP.
        let v6 = host_with(eip_object(json!({"v6ip": "fd00:5::9"}), json!({})));
        assert_eq!(
            validate_dnat_create(
                &rule("dnat-a", dnat_spec(json!({"type": "share"}))),
                &v6.cluster()
            ),
            Err(Denial::bad_request(
                "dnat \"dnat-a\" cannot use type=share: EIP \"eip-a\" is IPv6-only, share dnat only supports IPv4"
            ))
        );
        // Clashes with rules of the same gateway, port, EIP and protocol; never with itself.
        let mut clash = host();
        let labels = [
            (NAT_GW_NAME_LABEL, "gw1"),
            (DNAT_EXTERNAL_PORT_LABEL, "8080"),
        ];
        clash.extend([
            labelled(
                &kinds::IPTABLES_DNAT_RULE,
                "dnat-z",
                &labels,
                json!({"spec": dnat_spec(json!({"type": "share"}))}),
            ),
            labelled(
                &kinds::IPTABLES_DNAT_RULE,
                "dnat-a",
                &labels,
                json!({"spec": dnat_spec(json!({}))}),
            ),
        ]);
        assert_eq!(
            validate_dnat_create(
                &rule("dnat-a", dnat_spec(json!({"type": "share"}))),
                &clash.cluster()
            ),
            Ok(())
        );
        assert_eq!(
            validate_dnat_create(&rule("dnat-b", dnat_spec(json!({}))), &clash.cluster()),
            Err(Denial::bad_request(
                "dnat \"dnat-b\" (type=exclusive) conflicts with existing dnat \"dnat-a\" (type=exclusive) sharing the same identity (eip=eip-a, port=8080, protocol=TCP): both must be type=share to coexist"
            ))
        );
        assert_eq!(
            validate_dnat_create(
                &rule("dnat-b", dnat_spec(json!({"protocol": "udp"}))),
                &clash.cluster()
            ),
            Ok(())
        );
        assert_eq!(
            validate_dnat_update(
                &rule("dnat-a", dnat_spec(json!({"type": "share"}))),
                &rule("dnat-a", dnat_spec(json!({}))),
                &host().cluster()
            ),
            Err(Denial::bad_request(
                "dnat type is immutable after creation: cannot change from \"exclusive\" to \"share\""
            ))
        );
    }

    #[test]
    fn snat_and_fip_checks() {
        let snat = |cidr: &str| rule("snat-a", json!({"eip": "eip-a", "internalCIDR": cidr}));
        assert_eq!(
            validate_snat_create(&snat("10.0.1.0/24,fd00::/64"), &host().cluster()),
            Ok(())
        );
        assert_eq!(
            validate_snat_create(&snat(""), &host().cluster()),
            Err(Denial::bad_request("invalid cidr "))
        );
        assert_eq!(
            validate_rule_update(
                &snat(""),
                &snat(""),
                validate_snat_create,
                &host().cluster()
            ),
            Ok(())
        );
        let fip = |ip: &str| rule("fip-a", json!({"eip": "eip-a", "internalIp": ip}));
        assert_eq!(
            validate_fip_create(&fip("10.0.1.5"), &host().cluster()),
            Ok(())
        );
        assert_eq!(
            validate_fip_create(&fip("x"), &host().cluster()),
            Err(Denial::bad_request("internalIP x is not a valid"))
        );
        let mut used = host();
        for name in ["dnat-z", "dnat-b"] {
            used.extend([labelled(
                &kinds::IPTABLES_DNAT_RULE,
                name,
                &[(EIP_V4_IP_LABEL, "10.5.204.10")],
                json!({"spec": {"eip": "eip-a"}}),
            )]);
        }
        assert_eq!(
            validate_fip_create(&fip("10.0.1.5"), &used.cluster()),
            Err(Denial::bad_request(
                "EIP \"eip-a\" is already used by DNAT rule \"dnat-b\"; floating IP requires exclusive use of the EIP (FIP matches all traffic, shadowing port-specific DNAT rules)"
            ))
        );
    }
}
