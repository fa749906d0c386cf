//! Address pools: an `ip_pool` that lists addresses, cut into the groups
//! kube-ovn-controller allocates whole (I13), and the warnings for a
//! workload whose pool is smaller than its replicas.

use crate::checks::static_ip::network::{IP_POOL, annotation, attachments, parse_item};
use crate::upstream::go_net::parse_ip;
use crate::upstream::kubeovn_util::family;
use std::collections::BTreeMap;
use std::net::IpAddr;

/// An `ip_pool` that lists addresses rather than naming an IPPool.
pub fn is_address_pool(pool: &str) -> bool {
    !pool.is_empty() && (pool.contains(',') || pool.contains(';') || parse_ip(pool).is_some())
}

/// An `ip_pool` of addresses, in annotation order, cut into the groups that
/// kube-ovn-controller's `acquireAddress` allocates whole (I13): on `;` when
/// there is one, else on `,`, where one IPv4 and one IPv6 address are a
/// single dual-stack group. Every address is kept (I4).
pub struct Pool {
    pub items: Vec<Option<IpAddr>>,
    /// Where each group ends in `items`.
    ends: Vec<usize>,
}

impl Pool {
    pub fn parse(value: &str) -> Pool {
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
    pub fn group_count(&self) -> usize {
        self.ends.len()
    }

    /// Group `i`, if there is one.
    pub fn group(&self, i: usize) -> Option<&[Option<IpAddr>]> {
        let start = match i.checked_sub(1) {
            Some(before) => *self.ends.get(before)?,
            None => 0,
        };
        self.items.get(start..*self.ends.get(i)?)
    }

    pub fn groups(&self) -> impl Iterator<Item = &[Option<IpAddr>]> {
        (0..self.group_count()).filter_map(|i| self.group(i))
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
        let groups = Pool::parse(pool).group_count();
        if u64::try_from(groups).is_ok_and(|groups| groups < replicas) {
            let warning = format!("ip_pool has {groups} entries for {replicas} replicas");
            if !warnings.contains(&warning) {
                warnings.push(warning);
            }
        }
    }
    warnings
}
