//! Address pools: an `ip_pool` that lists addresses, cut into the groups
//! kube-ovn-controller allocates whole (I13).

use crate::upstream::go_net::parse_ip;
use crate::upstream::kubeovn_util::check_protocol;
use crate::upstream::kubeovn_util::parse_item;
use std::net::IpAddr;

/// An `ip_pool` that lists addresses rather than naming an IPPool. A lone
/// entry is trimmed first, as kube-ovn-controller trims it before it tells
/// an address from a pool name (`acquireStaticAddressHelper`).
pub fn is_address_pool(pool: &str) -> bool {
    !pool.is_empty()
        && (pool.contains(',') || pool.contains(';') || parse_ip(pool.trim()).is_some())
}

/// An `ip_pool` that upstream's webhook reads as an IPPool's name: no `,`
/// (nor `;`, which I4 splits) and, as written, no address Go parses
/// (`net.ParseIP(ip_pool) == nil`, `ValidatePodNetwork` and
/// `checkIPConflict`'s caller at 1533681d7a6b). A lone address with spaces
/// around it is one: the webhook refuses it as an IPPool that does not
/// exist before kube-ovn-controller, which trims it, is ever asked.
pub fn is_pool_name(pool: &str) -> bool {
    !pool.is_empty() && !pool.contains([',', ';']) && parse_ip(pool).is_none()
}

/// An `ip_pool` of addresses: every address as upstream's conflict check
/// reads it (I4), and the groups that kube-ovn-controller's
/// `acquireStaticAddressHelper` allocates whole (I13).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pool {
    /// Every address, in annotation order, split on `;` and `,` and trimmed.
    pub items: Vec<Option<IpAddr>>,
    /// The groups as the controller reads them; `None` where it cannot parse
    /// an address, which leaves that group never allocated.
    groups: Vec<Vec<Option<IpAddr>>>,
}

impl Pool {
    /// The controller's split (`pkg/controller/pod.go:2661-2672` at
    /// 1533681d7a6b): on `;` when there is one, else on `,`, where two
    /// entries that `CheckProtocol` gives different families (as written,
    /// untrimmed) stay one group. Each group is trimmed, then its addresses
    /// are parsed as they stand.
    pub fn parse(value: &str) -> Pool {
        let items = value.split([';', ',']).map(parse_item).collect();
        let split: Vec<&str> = if value.contains(';') {
            value.split(';').collect()
        } else {
            match value.split(',').collect::<Vec<_>>().as_slice() {
                [a, b] if check_protocol(a) != check_protocol(b) => vec![value],
                entries => entries.to_vec(),
            }
        };
        let groups = split
            .into_iter()
            .map(|group| group.trim().split(',').map(parse_ip).collect())
            .collect();
        Pool { items, groups }
    }

    /// The number of groups.
    pub fn group_count(&self) -> usize {
        self.groups.len()
    }

    /// Group `i`, if there is one.
    pub fn group(&self, i: usize) -> Option<&[Option<IpAddr>]> {
        self.groups.get(i).map(Vec::as_slice)
    }

    pub fn groups(&self) -> impl Iterator<Item = &[Option<IpAddr>]> {
        self.groups.iter().map(Vec::as_slice)
    }
}
