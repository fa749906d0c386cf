//! Conflicts: each static address against the IP objects of its subnet, the
//! way upstream's `checkIPConflict` compares them, with the owner rules of
//! I2 and I3 and the pool groups of I13, and those objects read only where
//! the subnet's record of what is in use does not settle the addresses
//! (I15); and the subnet a pod's primary NIC lands in (I5).

use crate::admission::denial::Denial;
use crate::checks::static_ip::MIGRATION_JOB;
use crate::checks::static_ip::landing::named_pool;
use crate::checks::static_ip::network::{Nic, annotation};
use crate::checks::static_ip::owner::{Claim, StatefulSetPod, Subject};
use crate::checks::static_ip::pools::{Pool, is_pool_name};
use crate::checks::static_ip::status::{Record, Use};
use crate::k8s::cluster::{AddressSet, Cluster};
use crate::k8s::names::sort_by_name;
use crate::k8s::objects::{Ip, IpPool};
use crate::upstream::go_net::{format_ip, parse_cidr, parse_ip};
use crate::upstream::go_strconv::go_quote;
use crate::upstream::kubeovn_ipam::{Addr, RangeList, new_ip_range_list_from};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::rc::Rc;

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

/// The most GETs of a pod's own IP objects one evaluation makes (I15);
/// past them, the subnet's IP objects are read, as without I15.
pub const OWN_IP_GETS: usize = 4;

/// The IP CRs of one subnet by address, each list in name order (I12).
pub type Index = HashMap<IpAddr, Vec<Rc<Ip>>>;

/// The IPPools of one subnet reserved for other namespaces (I19), in name
/// order, each with its addresses as the controller's IPAM reads them.
type Reserving = Rc<Vec<(IpPool, RangeList)>>;

/// The checks of one claim. Whatever a check reads is read and parsed once
/// per evaluation, however many NICs ask for it (docs/lookups.md): the IP
/// objects of each subnet (indexed by address), each subnet's record of
/// what is in use (I15), the pod's own IP object of each NIC, and the
/// IPPools reserving addresses of each subnet (I19).
pub struct Checker<'r, 'c> {
    claim: &'r Claim<'r>,
    cluster: &'c dyn Cluster,
    /// Every address the claim names, on any NIC: only the IP objects that
    /// hold one of them can decide anything, so only those are kept.
    addresses: AddressSet,
    /// I15: whether a subnet's record of what is in use may settle addresses.
    use_record: bool,
    indexes: RefCell<HashMap<String, Rc<Index>>>,
    records: RefCell<HashMap<String, Option<Rc<Record>>>>,
    own_ips: RefCell<HashMap<String, Option<Rc<Ip>>>>,
    reserving: RefCell<HashMap<String, Reserving>>,
}

impl<'r, 'c> Checker<'r, 'c> {
    /// A checker that has looked nothing up yet, for the addresses of
    /// these NICs; `use_record` is the `useSubnetStatus` setting (I15).
    pub fn new(
        claim: &'r Claim<'r>,
        cluster: &'c dyn Cluster,
        use_record: bool,
        nics: &[&Nic<'_>],
    ) -> Self {
        Checker {
            claim,
            cluster,
            addresses: AddressSet::new(claimed_addresses(nics)),
            use_record,
            indexes: RefCell::default(),
            records: RefCell::default(),
            own_ips: RefCell::default(),
            reserving: RefCell::default(),
        }
    }

    /// The IP CRs of a subnet by address, looked up once per subnet.
    fn index(&self, subnet: &str) -> Result<Rc<Index>, Denial> {
        if let Some(index) = self.indexes.borrow().get(subnet) {
            return Ok(index.clone());
        }
        let mut index = Index::new();
        for ip in self.cluster.ips_holding(subnet, &self.addresses)? {
            let ip = Rc::new(ip);
            for address in ip.addresses() {
                index.entry(address).or_default().push(ip.clone());
            }
        }
        for holders in index.values_mut() {
            sort_by_name(holders, |ip| ip.metadata.name.as_str());
        }
        let index = Rc::new(index);
        self.indexes
            .borrow_mut()
            .insert(subnet.to_string(), index.clone());
        Ok(index)
    }

    fn holder(&self, ip: &Ip) -> Holder {
        if ip.spec.namespace != self.claim.namespace {
            return Holder::Other;
        }
        if ip.spec.pod_name == self.claim.owner_name {
            return Holder::Own;
        }
        let workload = match &self.claim.subject {
            Subject::Pod { controller, .. } => controller.as_ref(),
            Subject::Workload(w) => Some(w),
        };
        if workload.is_some_and(|w| w.generates(&ip.spec.pod_name)) {
            Holder::Member
        } else {
            Holder::Other
        }
    }

    /// The IP objects that decide a NIC's addresses in `subnet`: all of the
    /// subnet's, unless its record (I15) settles every address, each free or
    /// held by the pod's own IP object; then only that object.
    fn holders(
        &self,
        nic: &Nic<'_>,
        subnet: &str,
        addresses: &[Option<IpAddr>],
    ) -> Result<Rc<Index>, Denial> {
        match self.settled(nic, subnet, addresses) {
            Some(index) => Ok(Rc::new(index)),
            None => self.index(subnet),
        }
    }

    /// I15: the addresses as the subnet's record and the pod's own IP object
    /// settle them, or `None` where they leave one to the subnet's IP objects
    /// (a failed lookup here too: the IP objects then decide, as without I15).
    fn settled(&self, nic: &Nic<'_>, subnet: &str, addresses: &[Option<IpAddr>]) -> Option<Index> {
        if !self.use_record || self.conflict_check_off(nic) {
            return None;
        }
        let record = self.record(subnet)?;
        let mut in_use = Vec::new();
        for address in addresses {
            let address = (*address)?;
            match record.of_address(address) {
                Use::Free => {}
                Use::InUse => in_use.push(address),
                Use::Unknown => return None,
            }
        }
        let mut index = Index::new();
        if in_use.is_empty() {
            return Some(index);
        }
        let own = self.own_ip(nic, subnet)?;
        let held = own.addresses();
        for address in in_use {
            if !held.contains(&address) {
                return None;
            }
            index.insert(address, vec![own.clone()]);
        }
        Some(index)
    }

    /// Whether the controller allocates this NIC with its IPAM's conflict
    /// check off: an attachment of a pod whose `kubevirt.io/migrationJobName`
    /// is not empty (`AllowLiveMigration`, pod.go:2241, then `!podNet.
    /// AllowLiveMigration` at :2605, :2640, :2722). Then a second holder is
    /// not refused by the IPAM, so the record alone never settles it (I15).
    fn conflict_check_off(&self, nic: &Nic<'_>) -> bool {
        nic.provider.is_some() && !annotation(self.claim.annotations, MIGRATION_JOB).is_empty()
    }

    /// The pod's own IP object for this NIC, when it is in `subnet`:
    /// kube-ovn-controller names it `<pod>.<namespace>`, with `.<provider>`
    /// for an attachment (`ovs.PodNameToPortName`, the pod or VM name as
    /// upstream compares it). A workload has none.
    /// Looked up once per name (docs/lookups.md: one GET per distinct name),
    /// and for [`OWN_IP_GETS`] names at most.
    fn own_ip(&self, nic: &Nic<'_>, subnet: &str) -> Option<Rc<Ip>> {
        let Subject::Pod { .. } = self.claim.subject else {
            return None;
        };
        let mut name = format!("{}.{}", self.claim.owner_name, self.claim.namespace);
        if let Some(provider) = &nic.provider {
            name = format!("{name}.{provider}");
        }
        let known = self.own_ips.borrow().get(&name).cloned();
        let ip = match known {
            Some(ip) => ip,
            // Past a few GETs, the subnet's IP list (one watch cache) answers
            // the same question for every NIC at once: no request makes more
            // than OWN_IP_GETS API requests (docs/lookups.md).
            None if self.own_ips.borrow().len() >= OWN_IP_GETS => return None,
            None => {
                let ip = self.cluster.ip(&name).ok().flatten().map(Rc::new);
                self.own_ips.borrow_mut().insert(name, ip.clone());
                ip
            }
        }?;
        (ip.spec.subnet == subnet && self.holder(&ip) == Holder::Own).then_some(ip)
    }

    /// I15: a subnet's record of what is in use, parsed once per subnet;
    /// `None` where the Subnet does not exist or its lookup failed.
    fn record(&self, subnet: &str) -> Option<Rc<Record>> {
        if let Some(record) = self.records.borrow().get(subnet) {
            return record.clone();
        }
        let record = self
            .cluster
            .subnet(subnet)
            .ok()
            .flatten()
            .map(|s| Rc::new(Record::of(&s)));
        self.records
            .borrow_mut()
            .insert(subnet.to_string(), record.clone());
        record
    }

    /// I19: the IPPools of `subnet` reserved for namespaces other than the
    /// claim's, in name order, read and parsed once per subnet. A pool the
    /// controller's IPAM cannot read reserves nothing.
    fn reserving(&self, subnet: &str) -> Result<Reserving, Denial> {
        if let Some(pools) = self.reserving.borrow().get(subnet) {
            return Ok(pools.clone());
        }
        let mut pools: Vec<(IpPool, RangeList)> = self
            .cluster
            .reserving_ippools(subnet)?
            .into_iter()
            .filter(|p| self.foreign(p))
            .filter_map(|pool| {
                new_ip_range_list_from(pool.spec.ips.iter().map(|ip| ip.as_str()))
                    .ok()
                    .map(|ranges| (pool, ranges))
            })
            .collect();
        sort_by_name(&mut pools, |(pool, _)| pool.metadata.name.as_str());
        let pools = Rc::new(pools);
        self.reserving
            .borrow_mut()
            .insert(subnet.to_string(), pools.clone());
        Ok(pools)
    }

    /// I19: whether a pool is reserved for namespaces other than the claim's.
    fn foreign(&self, pool: &IpPool) -> bool {
        !pool.spec.namespaces.is_empty()
            && !pool
                .spec
                .namespaces
                .iter()
                .any(|n| n == self.claim.namespace)
    }

    /// Every check of one NIC whose subnet is known.
    pub fn nic(&self, nic: &Nic<'_>, subnet: &str) -> Result<(), Denial> {
        if !nic.ip_address.is_empty() {
            check_family_uniqueness(&nic.ip_address)?;
        }
        let items = nic.items();
        let pool = nic.address_pool().filter(|_| !is_pool_name(nic.ip_pool));
        if items.is_empty() && pool.is_none() {
            return self.pool_name(nic.ip_pool);
        }
        let claimed: Vec<Option<IpAddr>> = items
            .iter()
            .chain(pool.iter().flat_map(|p| &p.items))
            .copied()
            .collect();
        let index = self.holders(nic, subnet, &claimed)?;
        if !items.is_empty() {
            self.conflicts(&index, &nic.ip_address, items)?;
        }
        let Some(pool) = pool else {
            return self.pool_name(nic.ip_pool);
        };
        self.conflicts(&index, nic.ip_pool, &pool.items)?;
        // A NIC with an ip_address is given it and never takes from its
        // pool (`acquireStaticAddressHelper`, pod.go:2649).
        if let Subject::Pod { statefulset, .. } = &self.claim.subject
            && nic.ip_address.is_empty()
        {
            self.pool_group(&index, nic.ip_pool, pool, statefulset.as_ref(), subnet)?;
        }
        Ok(())
    }

    /// I13 for an attachment that names no subnet: nothing is looked up, so
    /// only a StatefulSet pod's ordinal past the last group is known.
    pub fn pool_ordinal(&self, nic: &Nic<'_>) -> Result<(), Denial> {
        if let Subject::Pod {
            statefulset: Some(sts),
            ..
        } = &self.claim.subject
            && nic.ip_address.is_empty()
            && let Some(pool) = nic.address_pool()
        {
            statefulset_group(nic.ip_pool, pool, sts)?;
        }
        Ok(())
    }

    /// An `ip_pool` naming an IPPool, as upstream's webhook tells a name
    /// from addresses: the IPPool must exist.
    pub fn pool_name(&self, pool: &str) -> Result<(), Denial> {
        if !is_pool_name(pool) {
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

    /// I19: a NIC's pool, and each address it claims in `subnet`, must not
    /// be reserved by an IPPool for other namespaces (`spec.namespaces`
    /// without the claim's). kube-ovn-controller keeps such a pool's
    /// addresses out of its subnet's other allocations, yet hands them to
    /// any pod that names the pool or one of its addresses (Kube-OVN issue
    /// #3260). `subnet` is `None` where the NIC's subnet is not known: only
    /// a pool named is then checked.
    pub fn reserved(&self, nic: &Nic<'_>, subnet: Option<&str>) -> Result<(), Denial> {
        // A NIC with an `ip_address` is given it and never takes from its
        // pool (`acquireStaticAddressHelper`, pod.go:2649-2656).
        if is_pool_name(nic.ip_pool) && nic.ip_address.is_empty() {
            // The name as the controller reads it, `strings.TrimSpace`d
            // (`getPodDefaultSubnet`, pod.go:1987): `" pool-b "` is pool-b.
            if let Some(name) = named_pool(nic.ip_pool)
                && let Some(pool) = self.cluster.ippool(name)?
                && self.foreign(&pool)
            {
                return Err(Denial::forbidden(format!(
                    "ippool {name} is reserved for namespaces {}",
                    pool.spec.namespaces.join(",")
                )));
            }
            return Ok(());
        }
        let Some(subnet) = subnet else {
            return Ok(());
        };
        self.reserved_in(subnet, &self.given(nic))
    }

    /// I19 in one subnet: no address of `addresses` that may land in it lies
    /// in an IPPool reserved there for other namespaces.
    pub fn reserved_in(&self, subnet: &str, addresses: &[IpAddr]) -> Result<(), Denial> {
        if addresses.is_empty() {
            return Ok(());
        }
        let reserving = self.reserving(subnet)?;
        if reserving.is_empty() {
            return Ok(());
        }
        let owners = first_reserving(&reserving, addresses);
        if let Some((address, pool)) = addresses
            .iter()
            .zip(owners)
            .find_map(|(address, owner)| Some((address, &reserving.get(owner?)?.0)))
        {
            return Err(Denial::forbidden(format!(
                "ip {} is reserved by ippool {} for namespaces {}",
                format_ip(address),
                pool.metadata.name,
                pool.spec.namespaces.join(",")
            )));
        }
        Ok(())
    }

    /// The addresses the controller may give a NIC
    /// (`acquireStaticAddressHelper`, pod.go:2633-2752): its `ip_address`
    /// when it has one (its pool is then never read); else, from a pool of
    /// addresses, a StatefulSet pod's ordinal group alone, anyone else's
    /// every group, as the controller parses them.
    pub fn given(&self, nic: &Nic<'_>) -> Vec<IpAddr> {
        if !nic.ip_address.is_empty() {
            return nic.items().iter().flatten().copied().collect();
        }
        let Some(pool) = nic.address_pool().filter(|_| !is_pool_name(nic.ip_pool)) else {
            return Vec::new();
        };
        match &self.claim.subject {
            Subject::Pod {
                statefulset: Some(sts),
                ..
            } => usize::try_from(sts.ordinal)
                .ok()
                .and_then(|i| pool.group(i))
                .unwrap_or_default()
                .iter()
                .flatten()
                .copied()
                .collect(),
            _ => pool.groups().flatten().flatten().copied().collect(),
        }
    }

    /// The addresses the controller may give a NIC with its conflict check
    /// off ([`Self::conflict_check_off`]): its `ip_address`, or a
    /// StatefulSet pod's ordinal group; never another pool entry, which it
    /// skips when another pod holds it whatever the check
    /// (`IsIPAssignedToOtherPod`, pod.go:2716).
    fn given_unchecked(&self, nic: &Nic<'_>) -> Vec<IpAddr> {
        let statefulset = matches!(
            self.claim.subject,
            Subject::Pod {
                statefulset: Some(_),
                ..
            }
        );
        if !self.conflict_check_off(nic) || (nic.ip_address.is_empty() && !statefulset) {
            return Vec::new();
        }
        self.given(nic)
    }

    /// I5 with the migration key: in each Subnet of its provider that an
    /// address may land in besides the one [`Self::nic`] checked, the
    /// controller's IPAM gives it with its conflict check off (only the
    /// provider's Subnet, `podNet`, allows live migration; the namespace's
    /// do not, pod.go:3150), so a holder there would get a second one.
    pub fn unchecked_in(
        &self,
        nic: &Nic<'_>,
        subnet: &str,
        addresses: &[IpAddr],
    ) -> Result<(), Denial> {
        if !nic.tries.pinned.iter().any(|s| s == subnet) {
            return Ok(());
        }
        let given: HashSet<IpAddr> = self.given_unchecked(nic).into_iter().collect();
        let addresses: Vec<IpAddr> = addresses
            .iter()
            .filter(|a| given.contains(a))
            .copied()
            .collect();
        if addresses.is_empty() {
            return Ok(());
        }
        let index = self.index(subnet)?;
        for address in &addresses {
            let holders = index.get(address).map_or(&[][..], Vec::as_slice);
            if let Some(other) = holders.iter().find(|ip| self.holder(ip) == Holder::Other) {
                return Err(conflict(address, other));
            }
        }
        Ok(())
    }

    /// Upstream's `checkIPConflict`: each address, in annotation order,
    /// against the subnet's IP CRs; the first CR held by someone else wins.
    fn conflicts(
        &self,
        index: &Index,
        value: &str,
        items: &[Option<IpAddr>],
    ) -> Result<(), Denial> {
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
        index: &Index,
        value: &str,
        pool: &Pool,
        statefulset: Option<&StatefulSetPod>,
        subnet: &str,
    ) -> Result<(), Denial> {
        // The first CR, by name, that holds the address for someone else.
        let taken_by = |a: &IpAddr| {
            index
                .get(a)
                .and_then(|hs| hs.iter().find(|ip| self.holder(ip) != Holder::Own))
        };
        let Some(sts) = statefulset else {
            // A group with an address the controller cannot parse is never free.
            let free = |group: &[Option<IpAddr>]| {
                group
                    .iter()
                    .all(|a| a.as_ref().is_some_and(|a| taken_by(a).is_none()))
            };
            if pool.groups().any(free) {
                return Ok(());
            }
            return Err(Denial::forbidden(format!(
                "ip_pool {value} has no free address in subnet {subnet}"
            )));
        };
        let group = statefulset_group(value, pool, sts)?;
        for address in group.iter().flatten() {
            if let Some(holder) = taken_by(address) {
                return Err(conflict(address, holder));
            }
        }
        Ok(())
    }
}

/// For each address, the first pool (by position in `pools`, name order)
/// whose ranges hold it, or `None`. The addresses are sorted once, each
/// pool range finds its addresses by binary search, and an address owned
/// already is skipped in constant time (a "next unowned" forest), so the
/// work is the ranges times log of the addresses plus the addresses, never
/// their product (§4).
fn first_reserving(pools: &[(IpPool, RangeList)], addresses: &[IpAddr]) -> Vec<Option<usize>> {
    let mut sorted: Vec<(Addr, usize)> = addresses
        .iter()
        .enumerate()
        .map(|(i, a)| (Addr::from_ip(*a), i))
        .collect();
    sorted.sort_unstable();
    let mut owners = vec![None; addresses.len()];
    // next[j]: the first position at or after j not owned yet (len: none).
    let mut next: Vec<usize> = (0..=sorted.len()).collect();
    fn find(next: &mut [usize], mut j: usize) -> usize {
        while next[j] != j {
            next[j] = next[next[j]];
            j = next[j];
        }
        j
    }
    for (p, (_, ranges)) in pools.iter().enumerate() {
        for range in ranges.ranges() {
            let mut j = find(&mut next, sorted.partition_point(|(a, _)| *a < range.start));
            while j < sorted.len() && sorted[j].0 <= range.end {
                owners[sorted[j].1] = Some(p);
                next[j] = j + 1;
                j = find(&mut next, j + 1);
            }
        }
    }
    owners
}

/// I13: the group at a StatefulSet pod's ordinal, or the denial for an
/// ordinal past the last group, which the pod can never be given.
fn statefulset_group<'p>(
    value: &str,
    pool: &'p Pool,
    sts: &StatefulSetPod,
) -> Result<&'p [Option<IpAddr>], Denial> {
    usize::try_from(sts.ordinal)
        .ok()
        .and_then(|i| pool.group(i))
        .ok_or_else(|| {
            Denial::forbidden(format!(
                "ip_pool {value} has no entry for ordinal {} of statefulset {}",
                sts.ordinal, sts.statefulset
            ))
        })
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

/// Every address in the `ip_address` and address `ip_pool` of every NIC,
/// as the conflict checks read them (a pool group's addresses are among its
/// items).
fn claimed_addresses(nics: &[&Nic<'_>]) -> Vec<IpAddr> {
    nics.iter()
        .flat_map(|nic| {
            let pool = nic.address_pool().map(|p| p.items.as_slice());
            nic.items().iter().chain(pool.unwrap_or_default())
        })
        .flatten()
        .copied()
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::net::Ipv4Addr;

    fn pool(name: &str, ips: &[String]) -> (IpPool, RangeList) {
        let mut pool = IpPool::default();
        pool.metadata.name = name.to_string();
        let ranges =
            new_ip_range_list_from(ips.iter().map(String::as_str)).expect("a pool's ranges");
        (pool, ranges)
    }

    proptest! {
        /// The first pool holding each address, as scanning every pool for
        /// every address finds it, whatever the overlaps and repeats.
        #[test]
        fn first_reserving_is_the_first_pool_that_holds_each_address(
            pools in prop::collection::vec(prop::collection::vec((0u8..40, 0u8..6), 1..4), 0..8),
            addresses in prop::collection::vec(0u8..50, 0..30),
        ) {
            let at = |n: u8| Ipv4Addr::new(10, 0, 0, n);
            let pools: Vec<(IpPool, RangeList)> = pools
                .iter()
                .enumerate()
                .map(|(p, ranges)| {
                    let ips: Vec<String> = ranges
                        .iter()
                        .map(|(start, len)| format!("{}..{}", at(*start), at(start + len)))
                        .collect();
                    pool(&format!("pool-{p}"), &ips)
                })
                .collect();
            let addresses: Vec<IpAddr> = addresses.iter().map(|n| IpAddr::V4(at(*n))).collect();
            let brute: Vec<Option<usize>> = addresses
                .iter()
                .map(|a| pools.iter().position(|(_, r)| r.contains(Addr::from_ip(*a))))
                .collect();
            prop_assert_eq!(first_reserving(&pools, &addresses), brute);
        }
    }
}
