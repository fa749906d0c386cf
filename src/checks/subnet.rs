//! Subnet admission: kube-ovn-webhook's `SubnetCreateHook`, `SubnetUpdateHook`
//! and `SubnetDeleteHook`, with `util.ValidateSubnet` and
//! `util.ValidateCidrConflict`, plus the contract's I8 (an empty `spec.vpc`
//! is the default VPC), I9 (the apiserver address from the settings or from
//! Service `default/kubernetes`) and I12 (the first overlapping Subnet by name).
//!
//! Codes as upstream: `ValidateSubnet` and the UPDATE/DELETE rules are
//! `Denied` (403), an overlap is `Errored(409)`, the Vpc rules of a CREATE and
//! every lookup failure are `Errored(400)`.

use crate::admission::denial::Denial;
use crate::admission::{Operation, Request};
use crate::k8s::cluster::Cluster;
use crate::k8s::names::sort_by_name;
use crate::k8s::objects::Subnet;
use crate::settings::Settings;
use crate::upstream::go_net::{parse_cidr, parse_ip};
use crate::upstream::go_strconv::go_quote;
use crate::upstream::kubeovn_util::{
    Protocol, check_protocol, cidr_contain_ip, cidr_overlap, contains_uppercase, family, ip_number,
    split_string_ip, validate_network_broadcast,
};
use std::cell::OnceCell;

/// Admits a Subnet CREATE, UPDATE or DELETE.
pub fn admit(
    request: &Request<'_>,
    settings: &Settings,
    cluster: &dyn Cluster,
) -> Result<(), Denial> {
    let context = Context::new(settings, cluster);
    match request.operation {
        Operation::Create => validate_create(&request.object()?, &context),
        Operation::Update => {
            let (new, old) = request.update()?;
            validate_update(&new, &old, &context)
        }
        Operation::Delete => validate_delete(&request.old_object()?),
        Operation::Other => Ok(()),
    }
}

/// Linux drops IPv6 on links below this MTU (RFC 8200).
const IPV6_MIN_MTU: u32 = 1280;

/// The special ranges a Subnet CIDR must not touch, in upstream's order
/// (`util.CIDRGlobalUnicast`), with the words of its message.
const RESERVED_RANGES: [(&str, &str); 9] = [
    ("v4 broadcast", "255.255.255.255/32"),
    ("v4 multicast", "224.0.0.0/4"),
    ("v4 loopback", "127.0.0.1/8"),
    ("v4 localnet", "0.0.0.0/32"),
    ("v4 link local", "169.254.0.0/16"),
    ("v6 unspecified", "::/128"),
    ("v6 loopback", "::1/128"),
    ("v6 multicast", "ff00::/8"),
    ("v6 link local", "FE80::/10"),
];

/// What the Subnet checks need besides the Subnet itself.
pub struct Context<'a> {
    settings: &'a Settings,
    cluster: &'a dyn Cluster,
    apiserver_ips: OnceCell<Result<Vec<String>, Denial>>,
}

impl<'a> Context<'a> {
    /// A context for one evaluation.
    pub fn new(settings: &'a Settings, cluster: &'a dyn Cluster) -> Self {
        Context {
            settings,
            cluster,
            apiserver_ips: OnceCell::new(),
        }
    }

    /// I8: the VPC a Subnet belongs to, an empty `spec.vpc` being the default VPC.
    fn vpc_of<'s>(&'s self, subnet: &'s Subnet) -> &'s str {
        if subnet.spec.vpc.is_empty() {
            self.settings.default_vpc()
        } else {
            &subnet.spec.vpc
        }
    }

    /// I9: the apiserver Service ClusterIPs, from `kubernetesServiceIP` or,
    /// when unset, looked up (once, and only when a check needs them).
    fn apiserver_ips(&self) -> Result<&[String], Denial> {
        self.apiserver_ips
            .get_or_init(|| match &self.settings.kubernetes_service_ip {
                Some(ips) => Ok(ips.split(',').map(str::to_string).collect()),
                None => Ok(self
                    .cluster
                    .kubernetes_service()?
                    .map(|svc| svc.cluster_ips().into_iter().map(str::to_string).collect())
                    .unwrap_or_default()),
            })
            .as_deref()
            .map_err(Clone::clone)
    }
}

/// A Subnet CREATE: the spec, the overlap with the other Subnets of its VPC,
/// then the Vpc rules (no Vpc of the same name; a custom VPC's namespaces).
pub fn validate_create(subnet: &Subnet, context: &Context<'_>) -> Result<(), Denial> {
    validate_spec(subnet, context)?;
    validate_no_overlap(subnet, context)?;
    let name = &subnet.metadata.name;
    for vpc in context.cluster.vpcs()? {
        if vpc.metadata.name == *name {
            return Err(Denial::bad_request(
                "vpc and subnet cannot have the same name",
            ));
        }
        // A custom VPC that is up admits only the namespaces it lists.
        let custom =
            subnet.spec.vpc == vpc.metadata.name && vpc.status.standby && !vpc.status.default;
        if custom
            && let Some(outside) = subnet
                .spec
                .namespaces
                .iter()
                .find(|ns| !vpc.spec.namespaces.contains(ns))
        {
            return Err(Denial::bad_request(format!(
                "namespace '{outside}' is out of range to custom vpc '{}'",
                vpc.metadata.name
            )));
        }
    }
    Ok(())
}

/// A Subnet UPDATE: the gateway, cidrBlock and vpc transition rules, then the
/// spec and the overlap, as for a CREATE.
pub fn validate_update(new: &Subnet, old: &Subnet, context: &Context<'_>) -> Result<(), Denial> {
    if new.spec.gateway != old.spec.gateway && new.status.ips_in_use() {
        return Err(Denial::forbidden(
            "can't update gateway of cidr when any IPs in Using",
        ));
    }
    if is_underlay_without_cidr(old) && !new.spec.cidr_block.is_empty() {
        return Err(Denial::forbidden(
            "cannot add cidrBlock to an underlay subnet that was created without one",
        ));
    }
    if !old.spec.cidr_block.is_empty() && is_underlay_without_cidr(new) {
        return Err(Denial::forbidden(
            "cannot remove cidrBlock from an underlay subnet that was created with one",
        ));
    }
    let default_vpc = context.settings.default_vpc();
    if new.spec.vpc != old.spec.vpc && (!old.spec.vpc.is_empty() || new.spec.vpc != default_vpc) {
        return Err(Denial::forbidden(format!(
            "vpc can only be changed from empty to {default_vpc}"
        )));
    }
    validate_spec(new, context)?;
    validate_no_overlap(new, context)
}

/// A Subnet DELETE: refused while any address is in use.
pub fn validate_delete(old: &Subnet) -> Result<(), Denial> {
    if old.status.ips_in_use() {
        return Err(Denial::forbidden(
            "can't delete subnet when any IPs in Using",
        ));
    }
    Ok(())
}

/// A VLAN subnet without a CIDR: MAC-only, addresses from an external DHCP.
fn is_underlay_without_cidr(subnet: &Subnet) -> bool {
    !subnet.spec.vlan.is_empty() && subnet.spec.cidr_block.is_empty()
}

/// Upstream's `util.ValidateCidrConflict`, with I8 and I12: no other Subnet
/// of the same VPC and VLAN may overlap the CIDR, nor share the external
/// egress gateway's policy-routing table. A Subnet never conflicts with itself
/// (the audit scanner replays existing Subnets as CREATE, I11).
fn validate_no_overlap(subnet: &Subnet, context: &Context<'_>) -> Result<(), Denial> {
    let spec = &subnet.spec;
    let vpc = context.vpc_of(subnet);
    let mut others: Vec<&Subnet> = context
        .cluster
        .subnets()?
        .iter()
        .filter(|other| {
            other.metadata.name != subnet.metadata.name
                && other.spec.vlan == spec.vlan
                && context.vpc_of(other) == vpc
        })
        .collect();
    sort_by_name(&mut others, |other| other.metadata.name.as_str());
    for other in others {
        if !spec.cidr_block.is_empty()
            && !other.spec.cidr_block.is_empty()
            && cidr_overlap(&other.spec.cidr_block, &spec.cidr_block)
        {
            return Err(Denial::conflict(format!(
                "subnet {} cidr {} is conflict with subnet {} cidr {}",
                subnet.metadata.name, spec.cidr_block, other.metadata.name, other.spec.cidr_block
            )));
        }
        if !spec.external_egress_gateway.is_empty()
            && !other.spec.external_egress_gateway.is_empty()
            && spec.policy_routing_table_id == other.spec.policy_routing_table_id
        {
            return Err(Denial::conflict(format!(
                "subnet {} policy routing table ID {} is conflict with subnet {} policy routing table ID {}",
                subnet.metadata.name,
                spec.policy_routing_table_id,
                other.metadata.name,
                other.spec.policy_routing_table_id
            )));
        }
    }
    Ok(())
}

/// Upstream's `util.ValidateSubnet`: the checks in its order, the first
/// failure wins (403). The apiserver address is looked up only if the
/// checks before it pass.
pub fn validate_spec(subnet: &Subnet, context: &Context<'_>) -> Result<(), Denial> {
    check_spec(subnet, context).map_err(|failure| match failure {
        SpecError::Invalid(message) => Denial::forbidden(message),
        SpecError::Lookup(denial) => denial,
    })
}

/// Why a spec check stopped: the spec is invalid, or a lookup failed.
enum SpecError {
    Invalid(String),
    Lookup(Denial),
}

fn invalid(message: impl Into<String>) -> Result<(), SpecError> {
    Err(SpecError::Invalid(message.into()))
}

fn check_spec(subnet: &Subnet, context: &Context<'_>) -> Result<(), SpecError> {
    let name = subnet.metadata.name.as_str();
    let spec = &subnet.spec;
    let cidr = spec.cidr_block.as_str();
    let mac_only = is_underlay_without_cidr(subnet);

    if mac_only {
        if !spec.gateway.is_empty() {
            return invalid(format!(
                "gateway must be empty for underlay subnet {name} without cidrBlock"
            ));
        }
        if !spec.exclude_ips.is_empty() {
            return invalid(format!(
                "excludeIps must be empty for underlay subnet {name} without cidrBlock"
            ));
        }
    } else {
        check_gateway_and_cidr_text(&spec.gateway, cidr)?;
    }
    for range in &spec.exclude_ips {
        check_exclude_range(range)?;
    }
    if !mac_only {
        check_cidr_blocks(name, cidr)?;
    }
    for allowed in &spec.allow_subnets {
        if contains_uppercase(allowed) {
            return invalid(format!(
                "subnet {name} allow subnet {allowed} v6 ip address can not contain upper case"
            ));
        }
        if parse_cidr(allowed).is_none() {
            return invalid(format!("{allowed} in allowSubnets is not a valid address"));
        }
    }
    if !matches!(
        spec.gateway_type.as_str(),
        "" | "distributed" | "centralized"
    ) {
        return invalid(format!("{} is not a valid gateway type", spec.gateway_type));
    }
    if !matches!(
        spec.protocol.as_str(),
        "" | "IPv4" | "IPv6" | "Dual" | "Mac"
    ) {
        return invalid(format!("{} is not a valid protocol type", spec.protocol));
    }
    if spec.mtu > 0
        && spec.mtu < IPV6_MIN_MTU
        && matches!(check_protocol(cidr), Some(Protocol::V6 | Protocol::Dual))
    {
        return invalid(format!(
            "subnet {name} mtu {} is below the IPv6 minimum {IPV6_MIN_MTU}",
            spec.mtu
        ));
    }
    if spec.vpc == name {
        return invalid(format!(
            "subnet {name} and vpc {} cannot have the same name",
            spec.vpc
        ));
    }
    if !mac_only && context.vpc_of(subnet) == context.settings.default_vpc() {
        let apiserver = context.apiserver_ips().map_err(SpecError::Lookup)?;
        if let Some(ip) = apiserver.iter().find(|ip| cidr_contain_ip(cidr, ip)) {
            return invalid(format!(
                "subnet {name} cidr {cidr} conflicts with k8s apiserver svc ip {ip}"
            ));
        }
    }
    check_external_egress_gateway(subnet, mac_only)?;
    if !spec.vips.is_empty() {
        if mac_only {
            return invalid(format!(
                "vips are not supported for underlay subnet {name} without cidrBlock"
            ));
        }
        for vip in &spec.vips {
            if contains_uppercase(vip) {
                return invalid(format!(
                    "subnet {name} vips {vip} v6 ip address can not contain upper case"
                ));
            }
            if !cidr_contain_ip(cidr, vip) {
                return invalid(format!(
                    "vip {vip} conflicts with subnet {name} cidr {cidr}"
                ));
            }
        }
    }
    if spec.logical_gateway && spec.u2o_interconnection {
        return invalid("logicalGateway and u2oInterconnection can't be opened at the same time");
    }
    if spec.u2o_features.overlay_only_routing {
        if !spec.u2o_interconnection {
            return invalid(
                "u2oFeatures.overlayOnlyRouting can only be enabled when u2OInterconnection is true",
            );
        }
        if spec.vlan.is_empty() {
            return invalid(
                "u2oFeatures.overlayOnlyRouting can only be enabled on underlay subnets (vlan must be set)",
            );
        }
    }
    for rule in &spec.nat_outgoing_policy_rules {
        check_nat_policy_rule(&rule.matches.src_ips, &rule.matches.dst_ips)?;
    }
    check_u2o_interconnection_ip(subnet, mac_only)?;
    Ok(())
}

/// `validateSubnetCIDR`: the gateway lies in the CIDR and is neither its
/// network nor its IPv4 broadcast address; the CIDR avoids the reserved
/// ranges and reads as one or two (dual-stack) blocks.
fn check_gateway_and_cidr_text(gateway: &str, cidr: &str) -> Result<(), SpecError> {
    if !gateway.is_empty() {
        if contains_uppercase(gateway) {
            return invalid(format!(
                "subnet gateway {gateway} v6 ip address can not contain upper case"
            ));
        }
        if !cidr_contain_ip(cidr, gateway) {
            return invalid(format!("gateway {gateway} is not in cidr {cidr}"));
        }
        if let Err(reason) = validate_network_broadcast(cidr, gateway) {
            return invalid(format!(
                "validate gateway {gateway} for cidr {cidr} failed: {reason}"
            ));
        }
    }
    for block in cidr.split(',') {
        if let Some((label, range)) = RESERVED_RANGES
            .iter()
            .find(|(_, range)| cidr_overlap(block, range))
        {
            return invalid(format!("{cidr} conflict with {label} cidr {range}"));
        }
    }
    if check_protocol(cidr).is_none() {
        return invalid(format!("CIDRBlock: {} format error", go_quote(cidr)));
    }
    Ok(())
}

/// One `excludeIps` entry: an address, or a range `a..b` with `a <= b`.
fn check_exclude_range(range: &str) -> Result<(), SpecError> {
    if contains_uppercase(range) {
        return invalid(format!(
            "subnet exclude ip {range} can not contain upper case"
        ));
    }
    let ends: Vec<&str> = range.split("..").collect();
    if ends.len() > 2 {
        return invalid(format!("{range} in excludeIps is not a valid ip range"));
    }
    let mut parsed = Vec::with_capacity(2);
    for end in &ends {
        match parse_ip(end) {
            Some(ip) => parsed.push(ip),
            None => {
                return invalid(format!("ip {end} in excludeIps is not a valid address"));
            }
        }
    }
    // Compared as numbers, as upstream: a mixed-family range passes.
    if let [start, end] = parsed.as_slice()
        && ip_number(start) > ip_number(end)
    {
        return invalid(format!("{range} in excludeIps is not a valid ip range"));
    }
    Ok(())
}

/// `validateSubnetCIDRBlocks`: each block parses, is not the zero or
/// broadcast address, and is not a host route.
fn check_cidr_blocks(name: &str, cidr: &str) -> Result<(), SpecError> {
    for block in cidr.split(',') {
        if contains_uppercase(cidr) {
            return invalid(format!(
                "subnet cidr block {cidr} v6 ip address can not contain upper case"
            ));
        }
        if block.starts_with("0.0.0.0") {
            return invalid(format!("invalid zero cidr {}", go_quote(block)));
        }
        if block.contains("255.255.255.255") {
            return invalid(format!("invalid broadcast cidr {}", go_quote(block)));
        }
        let Some(parsed) = parse_cidr(block) else {
            return invalid(format!(
                "subnet {name} cidr {block} is invalid, due to invalid CIDR address: {block}"
            ));
        };
        if parsed.is_host() {
            return invalid(format!(
                "subnet {name} cidr {block} mask is invalid, due to invalid network mask {}",
                parsed.prefix
            ));
        }
    }
    Ok(())
}

/// The external egress gateway: not with natOutgoing, one address per
/// family, and of the CIDR's family.
fn check_external_egress_gateway(subnet: &Subnet, mac_only: bool) -> Result<(), SpecError> {
    let spec = &subnet.spec;
    let egw = spec.external_egress_gateway.as_str();
    if egw.is_empty() {
        return Ok(());
    }
    if spec.nat_outgoing {
        return invalid("conflict configuration: natOutgoing and externalEgressGateway");
    }
    if contains_uppercase(egw) {
        return invalid(format!(
            "subnet {} external egress gateway {egw} v6 ip address can not contain upper case",
            subnet.metadata.name
        ));
    }
    let parts: Vec<&str> = egw.split(',').collect();
    if parts.len() > 2 {
        return invalid("invalid external egress gateway configuration");
    }
    if let Some(bad) = parts.iter().find(|ip| parse_ip(ip).is_none()) {
        return invalid(format!(
            "IP {bad} in externalEgressGateway is not a valid address"
        ));
    }
    let cidr_protocol = check_protocol(&spec.cidr_block);
    if !mac_only && check_protocol(egw) != cidr_protocol && cidr_protocol != Some(Protocol::Dual) {
        return invalid(
            "invalid external egress gateway configuration: address family is conflict with CIDR",
        );
    }
    Ok(())
}

/// One NAT outgoing policy rule: its source and destination IPs are valid
/// and of one family each, and the same family as each other.
fn check_nat_policy_rule(src: &str, dst: &str) -> Result<(), SpecError> {
    let mut families = [None, None];
    for (slot, (which, ips)) in families.iter_mut().zip([("src", src), ("dst", dst)]) {
        if ips.is_empty() {
            continue;
        }
        match nat_policy_rule_family(ips) {
            Ok(family) => *slot = family,
            Err(reason) => {
                return invalid(format!(
                    "validate nat policy rules {which} ips {ips} failed with err {reason}"
                ));
            }
        }
    }
    if let [Some(src), Some(dst)] = families
        && src != dst
    {
        return invalid(format!(
            "Match.SrcIPS protocol {} not equal to Match.DstIPs protocol {}",
            src.as_str(),
            dst.as_str()
        ));
    }
    Ok(())
}

/// `validateNatOutgoingPolicyRuleIPs`: the family of a comma-separated list
/// of IPs and CIDRs, which must all be of one family.
fn nat_policy_rule_family(ips: &str) -> Result<Option<Protocol>, String> {
    let ips = ips.trim();
    if ips.is_empty() {
        return Err("IPStr should not be empty".to_string());
    }
    let mut last: Option<Protocol> = None;
    for item in ips.split(',') {
        let family = match parse_cidr(item) {
            Some(block) => Some(family(&block.net.addr())),
            None if parse_ip(item).is_some() => check_protocol(item),
            None => return Err(format!("match ips {ips} is not ip or ipcidr")),
        };
        if last.is_some() && last != family {
            return Err(format!("match ips {ips} protocol is not consistent"));
        }
        last = family;
    }
    Ok(last)
}

/// The u2o interconnection address: only with a CIDR, inside it, and not the gateway.
fn check_u2o_interconnection_ip(subnet: &Subnet, mac_only: bool) -> Result<(), SpecError> {
    let name = subnet.metadata.name.as_str();
    let spec = &subnet.spec;
    let u2o = spec.u2o_interconnection_ip.as_str();
    if u2o.is_empty() {
        return Ok(());
    }
    if mac_only {
        return invalid(format!(
            "u2oInterconnectionIP is not supported for underlay subnet {name} without cidrBlock"
        ));
    }
    if contains_uppercase(u2o) {
        return invalid(format!(
            "subnet {name} U2O interconnection ip {u2o} v6 ip address can not contain upper case"
        ));
    }
    if !cidr_contain_ip(&spec.cidr_block, u2o) {
        return invalid(format!(
            "u2oInterconnectionIP {u2o} is not in subnet {name} cidr {}",
            spec.cidr_block
        ));
    }
    let (gateway_v4, gateway_v6) = split_string_ip(&spec.gateway);
    let (u2o_v4, u2o_v6) = split_string_ip(u2o);
    let same =
        |a: &str, b: &str| matches!((parse_ip(a), parse_ip(b)), (Some(x), Some(y)) if x == y);
    if same(u2o_v4, gateway_v4) || same(u2o_v6, gateway_v6) {
        return invalid(format!(
            "u2oInterconnectionIP {u2o} conflicts with subnet gateway {}",
            spec.gateway
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
