//! Static-IP admission for Pods and workload templates (kube-ovn-webhook's
//! `static_ip.go`), with the contract's improvements I1–I7, I12 and I13.
//!
//! Order, as upstream and then the new checks: trigger and live-migration
//! bypass, `ValidatePodNetwork` (400), `ip_address` family uniqueness and
//! conflicts (403), `ip_pool` name lookup or conflicts and the group the pod
//! will take (403, I3 and I13), attachment networks (I7, 403), then static IPs
//! against their subnet (I6, 400).

pub mod annotations;
pub mod owner;
pub mod workloads;

use crate::admission::denial::Denial;
use crate::checks::static_ip::owner::{StatefulSetPod, Workload};
use crate::k8s::cluster::Cluster;
use crate::k8s::objects::{Ip, Subnet};
use crate::upstream::go_net::{format_ip, parse_cidr, parse_ip};
use crate::upstream::go_strconv::go_quote;
use crate::upstream::kubeovn_util::family;
use annotations::{IP_ADDRESS, IP_POOL, LOGICAL_SWITCH};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::rc::Rc;

/// The annotation that marks a KubeVirt live-migration target pod.
pub const MIGRATION_JOB: &str = "kubevirt.io/migrationJobName";
/// The subnet a pod lands in when nothing else names one.
pub const DEFAULT_SUBNET: &str = "ovn-default";

/// What is being admitted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Subject {
    /// A Pod, with the workload that controls it, if any (I3).
    Pod {
        /// The controlling workload, from the controller ownerReference.
        controller: Option<Workload>,
        /// Set when kube-ovn-controller allocates it as a StatefulSet's (I13).
        statefulset: Option<StatefulSetPod>,
    },
    /// A workload, checked through its pod template.
    Workload(Workload),
}

/// A static-IP admission request, decoded.
#[derive(Clone, Debug)]
pub struct Request<'a> {
    /// The pod's (or pod template's) annotations.
    pub annotations: &'a BTreeMap<String, String>,
    /// The request's namespace.
    pub namespace: &'a str,
    /// The name upstream compares with `spec.podName`: pod, VM or workload name.
    pub owner_name: &'a str,
    /// Pod or workload.
    pub subject: Subject,
}

/// One network interface's static-IP annotations: the primary NIC
/// (`ovn.kubernetes.io/…`) or an attachment (`<provider>.kubernetes.io/…`).
struct Nic<'a> {
    ip_address: &'a str,
    ip_pool: &'a str,
    logical_switch: Option<&'a str>,
}

fn annotation<'a>(annotations: &'a BTreeMap<String, String>, key: &str) -> &'a str {
    annotations.get(key).map_or("", String::as_str)
}

/// The attachment NICs (I7), by provider name, in name order.
fn attachments(annotations: &BTreeMap<String, String>) -> Vec<Nic<'_>> {
    let mut providers: Vec<&str> = annotations
        .iter()
        .filter(|(_, value)| !value.is_empty())
        .filter_map(|(key, _)| {
            key.strip_suffix(".kubernetes.io/ip_address")
                .or_else(|| key.strip_suffix(".kubernetes.io/ip_pool"))
        })
        .filter(|provider| !provider.is_empty() && *provider != "ovn")
        .collect();
    providers.sort_unstable();
    providers.dedup();
    providers
        .into_iter()
        .map(|p| Nic {
            ip_address: annotation(annotations, &format!("{p}.kubernetes.io/ip_address")),
            ip_pool: annotation(annotations, &format!("{p}.kubernetes.io/ip_pool")),
            logical_switch: Some(annotation(
                annotations,
                &format!("{p}.kubernetes.io/logical_switch"),
            ))
            .filter(|s| !s.is_empty()),
        })
        .collect()
}

/// Validates a static-IP request; `Ok` admits it.
pub fn validate(request: &Request<'_>, cluster: &dyn Cluster) -> Result<(), Denial> {
    let annotations = request.annotations;
    let primary = Nic {
        ip_address: annotation(annotations, IP_ADDRESS),
        ip_pool: annotation(annotations, IP_POOL),
        logical_switch: Some(annotation(annotations, LOGICAL_SWITCH)).filter(|s| !s.is_empty()),
    };
    let attached = attachments(annotations);
    let triggered = match request.subject {
        Subject::Pod { .. } => {
            !primary.ip_address.is_empty()
                || !primary.ip_pool.is_empty()
                || attached
                    .iter()
                    .any(|n| !n.ip_address.is_empty() || !n.ip_pool.is_empty())
        }
        // Upstream validates a workload only for its template's ip_pool.
        Subject::Workload(_) => {
            !primary.ip_pool.is_empty() || attached.iter().any(|n| !n.ip_pool.is_empty())
        }
    };
    if !triggered {
        return Ok(());
    }
    if matches!(request.subject, Subject::Pod { .. }) && annotations.contains_key(MIGRATION_JOB) {
        return Ok(());
    }
    annotations::validate(annotations).map_err(Denial::bad_request)?;

    let check = Checker {
        request,
        cluster,
        indexes: RefCell::default(),
    };
    let primary_subnet = if primary.ip_address.is_empty() && !is_address_pool(primary.ip_pool) {
        None // nothing of the primary NIC is looked up
    } else {
        Some(check.primary_subnet(primary.logical_switch)?)
    };
    if let Some(subnet) = &primary_subnet {
        check.nic(&primary, subnet)?;
    } else {
        check.pool_name(primary.ip_pool)?;
    }
    for nic in &attached {
        if let Some(subnet) = nic.logical_switch {
            check.nic(nic, subnet)?;
        }
    }
    if let Some(subnet) = &primary_subnet {
        check_in_subnet(primary.ip_address, subnet, cluster)?;
    }
    for nic in &attached {
        if let Some(subnet) = nic.logical_switch {
            check_in_subnet(nic.ip_address, subnet, cluster)?;
        }
    }
    Ok(())
}

/// An `ip_pool` that lists addresses rather than naming an IPPool.
fn is_address_pool(pool: &str) -> bool {
    !pool.is_empty() && (pool.contains(',') || pool.contains(';') || parse_ip(pool).is_some())
}

/// How an IP CR relates to the request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Holder {
    /// The request's own address (I2: same owner name and namespace).
    Own,
    /// Held by another pod of the same workload (I3).
    Member,
    /// Held by anyone else: a conflict.
    Other,
}

/// The IP CRs of one subnet by address, each list in name order (I12).
type Index = HashMap<IpAddr, Vec<Rc<Ip>>>;

struct Checker<'r, 'c> {
    request: &'r Request<'r>,
    cluster: &'c dyn Cluster,
    indexes: RefCell<Vec<(String, Rc<Index>)>>,
}

impl<'c> Checker<'_, 'c> {
    /// I5: the subnet Kube-OVN will put the pod's primary NIC in.
    fn primary_subnet(&self, annotated: Option<&str>) -> Result<String, Denial> {
        if let Some(subnet) = annotated {
            return Ok(subnet.to_string());
        }
        if let Some(ns) = self.cluster.namespace(self.request.namespace)? {
            let first = annotation(&ns.metadata.annotations, LOGICAL_SWITCH)
                .split(',')
                .next()
                .unwrap_or("")
                .trim();
            if !first.is_empty() {
                return Ok(first.to_string());
            }
        }
        let subnets = sorted_by_name(self.cluster.subnets()?);
        let bound = subnets.iter().find(|s| {
            s.spec
                .namespaces
                .iter()
                .any(|n| n == self.request.namespace)
        });
        let chosen = bound.or_else(|| subnets.iter().find(|s| s.spec.default));
        Ok(chosen
            .map_or(DEFAULT_SUBNET, |s| s.metadata.name.as_str())
            .to_string())
    }

    /// The IP CRs of a subnet by address, looked up once per subnet.
    fn index(&self, subnet: &str) -> Result<Rc<Index>, Denial> {
        if let Some((_, index)) = self
            .indexes
            .borrow()
            .iter()
            .find(|(name, _)| name == subnet)
        {
            return Ok(index.clone());
        }
        let mut index = Index::new();
        for ip in self.cluster.ips_in_subnet(subnet)? {
            let ip = Rc::new(ip);
            for address in ip_cr_addresses(&ip) {
                index.entry(address).or_default().push(ip.clone());
            }
        }
        for holders in index.values_mut() {
            holders.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        }
        let index = Rc::new(index);
        self.indexes
            .borrow_mut()
            .push((subnet.to_string(), index.clone()));
        Ok(index)
    }

    fn holder(&self, ip: &Ip) -> Holder {
        if ip.spec.namespace != self.request.namespace {
            return Holder::Other;
        }
        if ip.spec.pod_name == self.request.owner_name {
            return Holder::Own;
        }
        let workload = match &self.request.subject {
            Subject::Pod { controller, .. } => controller.as_ref(),
            Subject::Workload(w) => Some(w),
        };
        if workload.is_some_and(|w| w.generates(&ip.spec.pod_name)) {
            Holder::Member
        } else {
            Holder::Other
        }
    }

    /// Every check of one NIC whose subnet is known.
    fn nic(&self, nic: &Nic<'_>, subnet: &str) -> Result<(), Denial> {
        if !nic.ip_address.is_empty() {
            check_family_uniqueness(nic.ip_address)?;
            self.conflicts(nic.ip_address, &split_items(nic.ip_address), subnet)?;
        }
        if is_address_pool(nic.ip_pool) {
            let pool = Pool::parse(nic.ip_pool);
            self.conflicts(nic.ip_pool, &pool.items, subnet)?;
            if let Subject::Pod { statefulset, .. } = &self.request.subject {
                self.pool_group(nic.ip_pool, &pool, statefulset.as_ref(), subnet)?;
            }
        } else {
            self.pool_name(nic.ip_pool)?;
        }
        Ok(())
    }

    /// An `ip_pool` naming an IPPool: the IPPool must exist.
    fn pool_name(&self, pool: &str) -> Result<(), Denial> {
        if pool.is_empty() || is_address_pool(pool) {
            return Ok(());
        }
        if self.cluster.ippool_exists(pool)? {
            Ok(())
        } else {
            Err(Denial::forbidden(format!(
                "ippool {} not found",
                go_quote(pool)
            )))
        }
    }

    /// Upstream's `checkIPConflict`: each address, in annotation order,
    /// against the subnet's IP CRs; the first CR held by someone else wins.
    fn conflicts(&self, value: &str, items: &[Option<IpAddr>], subnet: &str) -> Result<(), Denial> {
        let index = self.index(subnet)?;
        for item in items {
            let Some(address) = item else {
                return Err(Denial::forbidden(format!(
                    "invalid static ip/ippool annotation value: {value}"
                )));
            };
            let holders = index.get(address).map_or(&[][..], Vec::as_slice);
            if let Some(other) = holders.iter().find(|ip| self.holder(ip) == Holder::Other) {
                return Err(conflict(address, other));
            }
        }
        Ok(())
    }

    /// I13 (and I3's siblings) for a pod: the pool group kube-ovn-controller
    /// will give it must be wholly free or its own. A StatefulSet pod gets
    /// only the group at its ordinal; any other pod the first free group.
    fn pool_group(
        &self,
        value: &str,
        pool: &Pool,
        statefulset: Option<&StatefulSetPod>,
        subnet: &str,
    ) -> Result<(), Denial> {
        let index = self.index(subnet)?;
        // The first CR, by name, that holds the address for someone else.
        let taken_by = |a: &IpAddr| {
            index
                .get(a)
                .and_then(|hs| hs.iter().find(|ip| self.holder(ip) != Holder::Own))
        };
        let Some(sts) = statefulset else {
            if pool
                .groups()
                .any(|group| group.iter().flatten().all(|a| taken_by(a).is_none()))
            {
                return Ok(());
            }
            return Err(Denial::forbidden(format!(
                "ip_pool {value} has no free address in subnet {subnet}"
            )));
        };
        let Some(group) = usize::try_from(sts.ordinal)
            .ok()
            .and_then(|i| pool.group(i))
        else {
            return Err(Denial::forbidden(format!(
                "ip_pool {value} has no entry for ordinal {} of statefulset {}",
                sts.ordinal, sts.statefulset
            )));
        };
        for address in group.iter().flatten() {
            if let Some(holder) = taken_by(address) {
                return Err(conflict(address, holder));
            }
        }
        Ok(())
    }
}

/// Upstream's conflict message: the address and the IP CR that holds it.
fn conflict(address: &IpAddr, holder: &Ip) -> Denial {
    Denial::forbidden(format!(
        "annotation static-ip {} is conflict with ip crd {}, ip {}",
        format_ip(address),
        holder.metadata.name,
        holder.spec.ip_address
    ))
}

/// An `ip_pool` of addresses, in annotation order, cut into the groups that
/// kube-ovn-controller's `acquireAddress` allocates whole (I13): on `;` when
/// there is one, else on `,`, where one IPv4 and one IPv6 address are a
/// single dual-stack group. Every address is kept (I4).
struct Pool {
    items: Vec<Option<IpAddr>>,
    /// Where each group ends in `items`.
    ends: Vec<usize>,
}

impl Pool {
    fn parse(value: &str) -> Pool {
        if value.contains(';') {
            let mut items = Vec::new();
            let mut ends = Vec::new();
            for group in value.split(';') {
                items.extend(group.split(',').map(parse_item));
                ends.push(items.len());
            }
            return Pool { items, ends };
        }
        let items: Vec<Option<IpAddr>> = value.split(',').map(parse_item).collect();
        let dual = matches!(items.as_slice(), [Some(a), Some(b)] if family(a) != family(b));
        let ends = if dual {
            vec![2]
        } else {
            (1..=items.len()).collect()
        };
        Pool { items, ends }
    }

    /// The number of groups.
    fn len(&self) -> usize {
        self.ends.len()
    }

    /// Group `i`, if there is one.
    fn group(&self, i: usize) -> Option<&[Option<IpAddr>]> {
        let start = match i.checked_sub(1) {
            Some(before) => *self.ends.get(before)?,
            None => 0,
        };
        self.items.get(start..*self.ends.get(i)?)
    }

    fn groups(&self) -> impl Iterator<Item = &[Option<IpAddr>]> {
        (0..self.len()).filter_map(|i| self.group(i))
    }
}

/// I13: the warnings for a Deployment's or StatefulSet's template whose
/// address pools have fewer groups than `replicas`: one per distinct count,
/// primary NIC first, then attachments by provider name.
pub fn pool_warnings(annotations: &BTreeMap<String, String>, replicas: u64) -> Vec<String> {
    let attached = attachments(annotations);
    let pools = std::iter::once(annotation(annotations, IP_POOL))
        .chain(attached.iter().map(|nic| nic.ip_pool))
        .filter(|pool| is_address_pool(pool));
    let mut warnings = Vec::new();
    for pool in pools {
        let groups = Pool::parse(pool).len();
        if u64::try_from(groups).is_ok_and(|groups| groups < replicas) {
            let warning = format!("ip_pool has {groups} entries for {replicas} replicas");
            if !warnings.contains(&warning) {
                warnings.push(warning);
            }
        }
    }
    warnings
}

fn sorted_by_name(subnets: &[Subnet]) -> Vec<&Subnet> {
    let mut sorted: Vec<&Subnet> = subnets.iter().collect();
    sorted.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    sorted
}

/// An annotation item as upstream's `checkIPConflict` reads it: `a/n` by
/// `ParseCIDR` (untrimmed), anything else by `ParseIP` of the trimmed text.
fn parse_item(item: &str) -> Option<IpAddr> {
    if item.contains('/') {
        parse_cidr(item).map(|c| c.ip)
    } else {
        parse_ip(item.trim())
    }
}

/// The items of an `ip_address` annotation.
fn split_items(value: &str) -> Vec<Option<IpAddr>> {
    value.split(',').map(parse_item).collect()
}

/// I1: the addresses an IP CR holds, by value: `v4IpAddress`/`v6IpAddress`,
/// or `ipAddress` split on `,` when neither is set.
pub fn ip_cr_addresses(ip: &Ip) -> Vec<IpAddr> {
    let spec = &ip.spec;
    let split: Vec<&str> = if spec.v4_ip_address.is_empty() && spec.v6_ip_address.is_empty() {
        spec.ip_address.split(',').collect()
    } else {
        vec![spec.v4_ip_address.as_str(), spec.v6_ip_address.as_str()]
    };
    split.into_iter().filter_map(parse_item).collect()
}

/// Upstream's `checkIPAddressFamilyUniqueness`: at most one IPv4 and one IPv6
/// in `ip_address`; an unparsable item leaves the value to other checks.
fn check_family_uniqueness(value: &str) -> Result<(), Denial> {
    let (mut v4, mut v6) = (0, 0);
    for item in value.split(',') {
        let item = item.trim();
        let parsed = if item.contains('/') {
            parse_cidr(item).map(|c| c.ip)
        } else {
            parse_ip(item)
        };
        match parsed {
            Some(IpAddr::V4(_)) => v4 += 1,
            Some(IpAddr::V6(_)) => v6 += 1,
            None => return Ok(()),
        }
    }
    if v4 > 1 {
        return Err(Denial::forbidden(format!(
            "multiple IPv4 addresses in ip_address annotation {}",
            go_quote(value)
        )));
    }
    if v6 > 1 {
        return Err(Denial::forbidden(format!(
            "multiple IPv6 addresses in ip_address annotation {}",
            go_quote(value)
        )));
    }
    Ok(())
}

/// I6: a static IP must lie in its subnet's CIDR (per family) and must not be
/// its gateway, network address or IPv4 broadcast address. Applies only when
/// the subnet exists with a readable CIDR; `excludeIps` are allowed.
fn check_in_subnet(value: &str, subnet_name: &str, cluster: &dyn Cluster) -> Result<(), Denial> {
    if value.is_empty() {
        return Ok(());
    }
    let Some(subnet) = cluster.subnet(subnet_name)? else {
        return Ok(());
    };
    let cidr = subnet.spec.cidr_block.as_str();
    let Some(blocks) = cidr
        .split(',')
        .map(parse_cidr)
        .collect::<Option<Vec<_>>>()
        .filter(|_| !cidr.is_empty())
    else {
        return Ok(());
    };
    let gateways: Vec<IpAddr> = subnet
        .spec
        .gateway
        .split(',')
        .filter_map(|g| parse_ip(g.trim()))
        .collect();
    for ip in value.split(',').filter_map(parse_item) {
        let shown = format_ip(&ip);
        let Some(block) = blocks.iter().find(|b| b.net.contains(&ip)) else {
            return Err(Denial::bad_request(format!(
                "static ip {shown} is not in subnet {subnet_name} cidr {cidr}"
            )));
        };
        if gateways.contains(&ip) {
            return Err(Denial::bad_request(format!(
                "static ip {shown} is the gateway of subnet {subnet_name}"
            )));
        }
        // Point-to-point (/31, /127) and host (/32, /128) blocks have no
        // network or broadcast address to avoid.
        if block.net.max_prefix_len() - block.net.prefix_len() < 2 {
            continue;
        }
        if ip == block.net.network() {
            return Err(Denial::bad_request(format!(
                "static ip {shown} is the network address of subnet {subnet_name}"
            )));
        }
        if matches!(ip, IpAddr::V4(_)) && ip == block.net.broadcast() {
            return Err(Denial::bad_request(format!(
                "static ip {shown} is the broadcast address of subnet {subnet_name}"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
