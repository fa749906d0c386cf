//! I6: a static IP inside its subnet, and not one of the addresses the
//! subnet keeps for itself.

use crate::admission::denial::Denial;
use crate::checks::static_ip::network::Nic;
use crate::k8s::cluster::Cluster;
use crate::upstream::go_net::{format_ip, parse_cidr, parse_ip};
use std::net::IpAddr;

/// I6: a static IP must lie in its subnet's CIDR (per family) and must not be
/// its gateway, network address, IPv4 broadcast address or the last address
/// of an IPv6 block. Applies only when the subnet exists with a readable
/// CIDR; `excludeIps` are allowed. Reads the NIC's addresses as parsed once
/// ([`Nic::items`]).
pub fn check_in_subnet(
    nic: &Nic<'_>,
    subnet_name: &str,
    cluster: &dyn Cluster,
) -> Result<(), Denial> {
    if nic.items().is_empty() {
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
    for &ip in nic.items().iter().flatten() {
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
        if ip == block.net.broadcast() {
            // IPv6 has no broadcast address, but kube-ovn-controller's range
            // ends one before the block's last address (`util.LastIP`,
            // pkg/util/net.go at 1533681d7a6b): a pod given it waits forever.
            let what = match ip {
                IpAddr::V4(_) => "broadcast",
                IpAddr::V6(_) => "last",
            };
            return Err(Denial::bad_request(format!(
                "static ip {shown} is the {what} address of subnet {subnet_name}"
            )));
        }
    }
    Ok(())
}
