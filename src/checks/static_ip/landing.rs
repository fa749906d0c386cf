//! I5: the subnet kube-ovn-controller puts a pod's primary NIC in, as
//! `getPodDefaultSubnet`, `getNsAvailableSubnets` and
//! `acquireStaticAddressHelper` decide it (`pkg/controller/pod.go:1967`,
//! `:3124`, `:2629` at 1533681d7a6b): the pod's `logical_switch`; else the
//! subnet of the one IPPool its `ip_pool` names (Kube-OVN #7059); else the
//! subnets of its namespace's `logical_switch` list, in order; a static
//! address is then tried in each of those subnets (`nsNets`) and lands in
//! the first whose range holds it. Where the namespace carries no list
//! (kube-ovn-controller writes one on every namespace it has seen), a
//! Subnet whose `spec.namespaces` lists it, else the default Subnet, else
//! `ovn-default`.

use crate::admission::denial::Denial;
use crate::checks::static_ip::network::{LOGICAL_SWITCH, Nic, annotation};
use crate::checks::static_ip::owner::Claim;
use crate::k8s::cluster::Cluster;
use crate::upstream::go_net::{parse_cidr, parse_ip};
use std::net::IpAddr;

/// The subnet a pod lands in when nothing else names one.
pub const DEFAULT_SUBNET: &str = "ovn-default";

/// The subnets the controller tries for the primary NIC, the one it starts
/// with first and no name twice.
pub fn candidates(
    claim: &Claim<'_>,
    nic: &Nic<'_>,
    cluster: &dyn Cluster,
) -> Result<Vec<String>, Denial> {
    if let Some(subnet) = &nic.logical_switch {
        // `nsNets` is this subnet alone (pod.go:2532).
        return Ok(vec![subnet.to_string()]);
    }
    let mut names: Vec<String> = Vec::new();
    if let Some(pool) = named_pool(nic.ip_pool)
        && let Some(found) = cluster.ippool(pool)?
    {
        names.push(found.spec.subnet);
    }
    for subnet in namespace_subnets(claim, cluster)? {
        if !names.contains(&subnet) {
            names.push(subnet);
        }
    }
    Ok(names)
}

/// The subnet a NIC whose addresses are `addresses` lands in: the first
/// candidate whose CIDR holds every one of them (`acquireStaticAddress`
/// refuses an address outside the subnet's range, and the controller tries
/// the next); the first candidate where none does (I6 names it).
pub fn landing(
    candidates: &[String],
    addresses: &[IpAddr],
    cluster: &dyn Cluster,
) -> Result<String, Denial> {
    let first = candidates
        .first()
        .cloned()
        .unwrap_or_else(|| DEFAULT_SUBNET.to_string());
    if candidates.len() < 2 || addresses.is_empty() {
        return Ok(first);
    }
    for name in candidates {
        let Some(subnet) = cluster.subnet(name)? else {
            continue;
        };
        let blocks: Vec<_> = subnet
            .spec
            .cidr_block
            .split(',')
            .filter_map(parse_cidr)
            .collect();
        if addresses
            .iter()
            .all(|a| blocks.iter().any(|b| b.net.contains(a)))
        {
            return Ok(name.clone());
        }
    }
    Ok(first)
}

/// The IPPool an `ip_pool` names as `getPodDefaultSubnet` reads it
/// (pod.go:1987): trimmed, without `,` or `;`, and no address Go parses.
pub fn named_pool(ip_pool: &str) -> Option<&str> {
    let pool = ip_pool.trim();
    (!pool.is_empty() && !pool.contains([',', ';']) && parse_ip(pool).is_none()).then_some(pool)
}

/// The namespace's subnets: its `ovn.kubernetes.io/logical_switch` list
/// (empty names left out), else a Subnet whose `spec.namespaces` lists it
/// (the first by name), else the default Subnet, else `ovn-default`.
fn namespace_subnets(claim: &Claim<'_>, cluster: &dyn Cluster) -> Result<Vec<String>, Denial> {
    if let Some(ns) = cluster.namespace(claim.namespace)? {
        // Not trimmed: the controller looks each name up as written.
        let listed: Vec<String> = annotation(&ns.metadata.annotations, LOGICAL_SWITCH)
            .split(',')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        if !listed.is_empty() {
            return Ok(listed);
        }
    }
    let mut subnets: Vec<_> = cluster.subnets()?.iter().collect();
    subnets.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    let bound = subnets
        .iter()
        .find(|s| s.spec.namespaces.iter().any(|n| n == claim.namespace));
    let chosen = bound.or_else(|| subnets.iter().find(|s| s.spec.default));
    Ok(vec![
        chosen
            .map_or(DEFAULT_SUBNET, |s| s.metadata.name.as_str())
            .to_string(),
    ])
}
