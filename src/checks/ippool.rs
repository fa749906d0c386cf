//! IPPool admission (I14): a `kubeovn.io/v1` IPPool decided the way
//! kube-ovn-controller's IPAM will take it (`(*Subnet).AddOrUpdateIPPool`,
//! pkg/ipam/subnet.go:768 at 1533681d7a6b). Upstream's webhook never sees
//! IPPools; the controller reports a refusal in the pool's status after it
//! is stored, or silently uses fewer addresses than were written.
//!
//! Per family the subnet has, IPv4 first (subnet.go:790, 810): the entries
//! of that family parse (400, the controller's text), then they do not
//! intersect another pool of the same subnet (403, the other pools in name
//! order, I12). Entries of a family the subnet lacks, which the controller
//! never parses, must parse too (400), after that. The warnings (admitted)
//! say what the controller will never hand out.

use crate::admission::denial::Denial;
use crate::admission::{Operation, Request, Verdict};
use crate::k8s::cluster::Cluster;
use crate::k8s::names::sort_by_name;
use crate::k8s::objects::{IpPool, Subnet};
use crate::upstream::go_net::{GoCidr, parse_cidr};
use crate::upstream::kubeovn_ipam::{
    RangeList, new_ip_range_list_from, reserved, split_ips_by_protocol, usable_range,
};
use crate::upstream::kubeovn_util::{Protocol, check_protocol};

/// Admits an IPPool CREATE or UPDATE; a DELETE is admitted.
pub fn admit(request: &Request<'_>, cluster: &dyn Cluster) -> Verdict {
    match request.operation {
        Operation::Create => validate(&request.object()?, None, request.name.as_str(), cluster),
        Operation::Update => {
            let (new, old) = request.update::<IpPool>()?;
            validate(&new, Some(&old), request.name.as_str(), cluster)
        }
        Operation::Delete | Operation::Other => Ok(Vec::new()),
    }
}

/// An IPPool CREATE (`old` is `None`) or UPDATE, with its lookups: its
/// Subnet by name and every IPPool.
pub fn validate(
    pool: &IpPool,
    old: Option<&IpPool>,
    request_name: &str,
    cluster: &dyn Cluster,
) -> Verdict {
    let name = match pool.metadata.name.as_str() {
        "" => request_name,
        name => name,
    };
    if let Some(old) = old {
        if old.spec.subnet != pool.spec.subnet {
            // The controller never moves a pool (ippool.go:50 does not even
            // enqueue such a change): it would stay in its old subnet.
            return Err(Denial::bad_request(format!(
                "ippool {name}: spec.subnet cannot change from {} to {}",
                old.spec.subnet, pool.spec.subnet
            )));
        }
        if old.spec.ips == pool.spec.ips {
            // Nothing the controller's IPAM reads changed (ippool.go:50).
            return Ok(Vec::new());
        }
    }
    let subnet = cluster.subnet(&pool.spec.subnet)?;
    let pools = cluster.ippools()?;
    decide(name, pool, subnet.as_deref(), pools)
}

/// The families of a subnet as the controller's IPAM holds it
/// (`ipam.NewSubnet`, subnet.go:46).
struct SubnetFamilies {
    /// Whether pools are compared in IPv4 and in IPv6.
    compared: [bool; 2],
    /// The blocks, by family, when the subnet is known well enough to say
    /// what is never allocated.
    blocks: Option<[Option<GoCidr>; 2]>,
}

impl SubnetFamilies {
    /// A subnet that does not exist yet, or whose `cidrBlock` IPAM cannot
    /// read: both families are compared (a conflict is refused whatever the
    /// order in which the pools and the subnet are created), nothing is
    /// said about allocation.
    const UNKNOWN: SubnetFamilies = SubnetFamilies {
        compared: [true, true],
        blocks: None,
    };

    fn of(subnet: &Subnet) -> Self {
        let cidr = subnet.spec.cidr_block.as_str();
        if cidr.is_empty() {
            // A MAC-only subnet (`NewMacOnlySubnet`): nothing is compared.
            return SubnetFamilies {
                compared: [false, false],
                blocks: None,
            };
        }
        let Some(parsed) = cidr
            .split(',')
            .map(parse_cidr)
            .collect::<Option<Vec<GoCidr>>>()
        else {
            return Self::UNKNOWN;
        };
        let mut blocks = [None, None];
        match check_protocol(cidr) {
            Some(Protocol::V4) => blocks[0] = parsed.first().copied(),
            Some(Protocol::V6) => blocks[1] = parsed.first().copied(),
            Some(Protocol::Dual) => {
                for block in parsed {
                    let family = usize::from(!matches!(block.net, ipnet::IpNet::V4(_)));
                    blocks[family] = Some(block);
                }
            }
            // Two blocks of one family, or more than two: upstream compares
            // both families and its free lists are its own accident.
            None => return Self::UNKNOWN,
        }
        SubnetFamilies {
            compared: [blocks[0].is_some(), blocks[1].is_some()],
            blocks: Some(blocks),
        }
    }
}

/// The decision for pool `name` in `subnet` (`None`: it does not exist)
/// among all `pools` (the pool's own stored version among them on an UPDATE,
/// which is never a conflict).
pub fn decide(name: &str, pool: &IpPool, subnet: Option<&Subnet>, pools: &[IpPool]) -> Verdict {
    let subnet_name = pool.spec.subnet.as_str();
    let families = subnet.map_or(SubnetFamilies::UNKNOWN, SubnetFamilies::of);
    let (v4, v6) = split_ips_by_protocol(&pool.spec.ips);
    let texts = [v4, v6];
    let mut others: Vec<&IpPool> = pools
        .iter()
        .filter(|p| {
            p.spec.subnet == subnet_name && !p.metadata.name.is_empty() && p.metadata.name != name
        })
        .collect();
    sort_by_name(&mut others, |pool| pool.metadata.name.as_str());

    let mut lists: [RangeList; 2] = Default::default();
    for family in [0, 1].into_iter().filter(|&f| families.compared[f]) {
        let mine = parse(&texts[family])?;
        for other in &others {
            // A pool that does not parse is not in the controller's IPAM.
            let (o4, o6) = split_ips_by_protocol(&other.spec.ips);
            let Ok(theirs) = parse(if family == 0 { &o4 } else { &o6 }) else {
                continue;
            };
            let shared = mine.intersect(&theirs);
            if !shared.is_empty() {
                return Err(Denial::forbidden(format!(
                    "ippool {name} has conflict IPs with ippool {}: {shared}",
                    other.metadata.name
                )));
            }
        }
        lists[family] = mine;
    }
    for family in [0, 1].into_iter().filter(|&f| !families.compared[f]) {
        lists[family] = parse(&texts[family])?;
    }

    let Some(subnet) = subnet else {
        return Ok(vec![format!(
            "ippool {name}: subnet {subnet_name} does not exist yet"
        )]);
    };
    let Some(blocks) = families.blocks else {
        return Ok(Vec::new());
    };
    let cidr = subnet.spec.cidr_block.as_str();
    let reserved = reserved(&subnet.spec.exclude_ips, cidr);
    let mut warnings = Vec::new();
    for (list, block) in lists.iter().zip(blocks.iter()) {
        let (outside, excluded) = match block {
            Some(block) => {
                let whole = RangeList::from_ranges(vec![block_range(block)]);
                let usable = usable_range(block);
                (
                    list.separate(&whole),
                    list.intersect(&usable).intersect(&reserved),
                )
            }
            None => (list.clone(), RangeList::default()),
        };
        if !outside.is_empty() {
            warnings.push(format!(
                "ippool {name}: {outside} never allocated: outside subnet {subnet_name} cidr {cidr}"
            ));
        }
        if !excluded.is_empty() {
            warnings.push(format!(
                "ippool {name}: {excluded} never allocated: in excludeIps of subnet {subnet_name}"
            ));
        }
    }
    Ok(warnings)
}

/// The entries of one family, parsed as the controller parses them (400).
fn parse(entries: &[&str]) -> Result<RangeList, Denial> {
    new_ip_range_list_from(entries.iter().copied()).map_err(Denial::bad_request)
}

/// Every address of a subnet's block, its network and all-ones address
/// included: the controller never hands those two out, but they are not
/// "outside" the block, and a warning about them would be noise.
fn block_range(block: &GoCidr) -> crate::upstream::kubeovn_ipam::Range {
    use crate::upstream::kubeovn_ipam::{Addr, Range};
    let net = block.net;
    Range {
        start: Addr::from_ip(net.network()),
        end: Addr::from_ip(net.broadcast()),
    }
}

#[cfg(test)]
mod tests;
