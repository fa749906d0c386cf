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
//! `ovn-default`. An attachment NIC with no `logical_switch`: its
//! provider's Subnets, then the namespace's list ([`attachment_landing`]).
//!
//! Per address (the contract's I5 as revised): the controller lands each
//! address on its own, so [`elsewhere`] finds every other Subnet one may
//! land in ([`Tries`]: a provider's Subnets in any order, a namespace
//! default that may be passed over, the next subnet after the IPAM's
//! refusal), where the checks look too.

use crate::admission::denial::Denial;
use crate::checks::static_ip::network::{LOGICAL_SWITCH, Nic, Tries, annotation};
use crate::checks::static_ip::owner::Claim;
use crate::k8s::cluster::Cluster;
use crate::k8s::names::sort_by_name;
use crate::upstream::go_net::{parse_cidr, parse_ip};
use std::net::IpAddr;

/// The subnet a pod lands in when nothing else names one.
pub const DEFAULT_SUBNET: &str = "ovn-default";

/// The subnets the controller tries for the primary NIC, in order, no name
/// twice: its pinned one, then the namespace's.
pub fn candidates(tries: &Tries) -> Vec<String> {
    let mut names = tries.pinned.clone();
    for subnet in &tries.listed {
        if !names.contains(subnet) {
            names.push(subnet.clone());
        }
    }
    names
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
    Ok(holding(candidates, addresses, cluster)?.unwrap_or(first))
}

/// The addresses that decide where a NIC lands: its `ip_address`, else the
/// first address of its pool (the controller tries a pool's entries in
/// order in each subnet, `acquireStaticAddressHelper`).
pub fn lands_by(nic: &Nic<'_>) -> Vec<IpAddr> {
    if !nic.ip_address.is_empty() {
        return nic.items().iter().flatten().copied().collect();
    }
    nic.address_pool()
        .into_iter()
        .flat_map(|p| &p.items)
        .flatten()
        .copied()
        .take(1)
        .collect()
}

/// The subnets other than `own` that `addresses` may land in ([`Tries`]),
/// each with the addresses it may receive, pinned ones first: an address
/// may land in each pinned subnet whose CIDR holds it, and, unless every
/// pinned one does, in the first listed one that holds it, and each later
/// one that holds it while those before may be passed over.
///
/// Output-sensitive (§4): the addresses are sorted once and each subnet's
/// blocks find theirs by binary search, so the work is the subnets' blocks
/// times log of the addresses, plus the pairs found; never every address
/// against every subnet.
///
/// `refused`: the subnets where the address may go because the ones before
/// refused it (the IPAM's conflict, pod.go:2649-2656): every listed one
/// that holds it, in order, the ones a NIC tries until it lands.
pub fn elsewhere(
    tries: &Tries,
    own: Option<&str>,
    addresses: &[IpAddr],
    refused: bool,
    cluster: &dyn Cluster,
) -> Result<Vec<(String, Vec<IpAddr>)>, Denial> {
    let mut sorted: Vec<IpAddr> = addresses.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    if sorted.is_empty() || tries.pinned.len() + tries.listed.len() < 2 {
        return Ok(Vec::new());
    }
    // Which sorted addresses each subnet holds.
    let held = |name: &str| -> Result<Vec<usize>, Denial> {
        let Some(subnet) = cluster.subnet(name)? else {
            return Ok(Vec::new());
        };
        let mut found: Vec<usize> = Vec::new();
        for block in subnet.spec.cidr_block.split(',').filter_map(parse_cidr) {
            let (first, last) = (block.net.network(), block.net.broadcast());
            let from = sorted.partition_point(|a| *a < first);
            let to = sorted.partition_point(|a| *a <= last);
            found.extend(from..to);
        }
        found.sort_unstable();
        found.dedup();
        Ok(found)
    };
    let mut pinned_count = vec![0usize; sorted.len()];
    let mut receives: Vec<(String, Vec<usize>)> = Vec::new();
    for name in &tries.pinned {
        let found = held(name)?;
        for &i in &found {
            pinned_count[i] += 1;
        }
        receives.push((name.clone(), found));
    }
    let reaches_listed: Vec<bool> = pinned_count
        .iter()
        .map(|n| tries.pinned.is_empty() || *n < tries.pinned.len())
        .collect();
    // Whether a listed subnet that holds an address may still receive it:
    // every earlier one holding it may be passed over.
    let mut reach = reaches_listed;
    for (k, name) in tries.listed.iter().enumerate() {
        if tries.pinned.contains(name) {
            continue;
        }
        let skippable = refused || tries.skippable.get(k).copied().unwrap_or(false);
        let holds = held(name)?;
        let found: Vec<usize> = holds.iter().copied().filter(|&i| reach[i]).collect();
        for i in holds {
            reach[i] = reach[i] && skippable;
        }
        receives.push((name.clone(), found));
    }
    Ok(receives
        .into_iter()
        .filter(|(name, found)| Some(name.as_str()) != own && !found.is_empty())
        .map(|(name, found)| (name, found.into_iter().map(|i| sorted[i]).collect()))
        .collect())
}

/// The primary NIC's [`Tries`]: its `logical_switch` alone; else the subnet
/// of the IPPool its `ip_pool` names, then the namespace's subnets.
pub fn primary_tries(
    claim: &Claim<'_>,
    nic: &Nic<'_>,
    cluster: &dyn Cluster,
) -> Result<Tries, Denial> {
    if let Some(subnet) = &nic.logical_switch {
        return Ok(Tries {
            pinned: vec![subnet.to_string()],
            ..Tries::default()
        });
    }
    let mut pinned = Vec::new();
    if let Some(pool) = named_pool(nic.ip_pool)
        && let Some(found) = cluster.ippool(pool)?
    {
        pinned.push(found.spec.subnet);
    }
    let listed = namespace_subnets(claim, cluster)?;
    // Only the default is chosen so (no pool's subnet first), and only a
    // list of more than one subnet can pass one over: no lookup otherwise.
    let mut skippable = Vec::new();
    if pinned.is_empty() && listed.len() > 1 {
        for name in &listed {
            let shown = cluster.subnet_availability(name)?;
            // A listed subnet that does not exist stops the controller
            // (`getPodDefaultSubnet` returns the error): nothing lands.
            skippable.push(shown.is_none_or(|s| s.shows_none_free()));
        }
    }
    Ok(Tries {
        pinned,
        listed,
        skippable,
    })
}

/// The namespace's `logical_switch` list as an attachment NIC with no
/// `logical_switch` tries it after its provider's Subnet; none when it names
/// one (`nsNets` is then that subnet alone, pod.go:2532).
pub fn attachment_listed(
    namespace: Option<&str>,
    cluster: &dyn Cluster,
) -> Result<Vec<String>, Denial> {
    Ok(match namespace {
        Some(namespace) => cluster
            .namespace(namespace)?
            .map(|ns| listed_subnets(&ns.metadata.annotations))
            .unwrap_or_default(),
        None => Vec::new(),
    })
}

/// The subnet an attachment NIC with no `logical_switch` lands in
/// (`acquireAddress`, pod.go:2526-2535, and `getNsAvailableSubnets`,
/// :3124): the controller starts with a Subnet of its provider (the first
/// its cache lists: any of them, so each is tried here, by name), then
/// tries the subnets of the namespace's `logical_switch` list; the address
/// lands in the first whose CIDR holds it. The namespace (`None`: the NIC
/// names its `logical_switch`, and the controller tries no other) is read
/// only when no Subnet of the provider holds it. Where none does, the
/// provider's first Subnet (I6 names it).
pub fn attachment_landing(
    provider_subnets: &[String],
    nic: &Nic<'_>,
    namespace: Option<&str>,
    cluster: &dyn Cluster,
) -> Result<String, Denial> {
    let first = provider_subnets.first().cloned().unwrap_or_default();
    let addresses = lands_by(nic);
    if addresses.is_empty() {
        return Ok(first);
    }
    if let Some(found) = holding(provider_subnets, &addresses, cluster)? {
        return Ok(found);
    }
    let listed = match namespace {
        Some(namespace) => cluster
            .namespace(namespace)?
            .map(|ns| listed_subnets(&ns.metadata.annotations))
            .unwrap_or_default(),
        None => Vec::new(),
    };
    Ok(holding(&listed, &addresses, cluster)?.unwrap_or(first))
}

/// The first of `names` whose CIDR holds every one of `addresses`.
fn holding(
    names: &[String],
    addresses: &[IpAddr],
    cluster: &dyn Cluster,
) -> Result<Option<String>, Denial> {
    for name in names {
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
            return Ok(Some(name.clone()));
        }
    }
    Ok(None)
}

/// A namespace's `ovn.kubernetes.io/logical_switch` list, empty names left
/// out; not trimmed: the controller looks each name up as written.
fn listed_subnets(annotations: &std::collections::BTreeMap<String, String>) -> Vec<String> {
    annotation(annotations, LOGICAL_SWITCH)
        .split(',')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
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
        let listed = listed_subnets(&ns.metadata.annotations);
        if !listed.is_empty() {
            return Ok(listed);
        }
    }
    let mut subnets: Vec<_> = cluster.subnets()?.iter().collect();
    sort_by_name(&mut subnets, |subnet| subnet.metadata.name.as_str());
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
