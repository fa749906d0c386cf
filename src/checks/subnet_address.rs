//! The addresses an object claims in a Subnet: a Vip or an IP object in
//! theirs (kube-ovn-webhook's `ValidateVip` and `ValidateIP`), an EIP in its
//! external subnet (`ValidateIptablesEIP`, `ValidateOvnEip`). The Subnet must
//! exist, and each address must be valid and inside its CIDR.

use crate::k8s::cluster::Cluster;
use crate::k8s::kinds;
use crate::upstream::go_net::parse_ip;
use crate::upstream::kubeovn_util::{cidr_contain_ip, contains_uppercase};

/// The addresses an object asks for in a Subnet, and the words its messages use.
pub struct Addresses<'a> {
    /// `spec.subnet`
    pub subnet: &'a str,
    /// The IPv4 address, or empty.
    pub v4: &'a str,
    /// The IPv6 address, or empty.
    pub v6: &'a str,
    /// The message for an upper-case IPv6 address.
    pub upper_case_v6: &'a dyn Fn() -> String,
    /// How the IPv6 out-of-range message names the object: `vip` or `ip`.
    pub v6_word: &'a str,
}

/// Checks the addresses in upstream's order; `Err` is the message (upstream
/// answers every failure here with `Errored(400)`).
pub fn check(addresses: &Addresses<'_>, cluster: &dyn Cluster) -> Result<(), String> {
    if addresses.subnet.is_empty() {
        return Err("subnet parameter cannot be empty".to_string());
    }
    let subnet = cluster
        .subnet(addresses.subnet)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| kinds::SUBNET.not_found(addresses.subnet))?;
    let cidr = subnet.spec.cidr_block.as_str();
    let name = subnet.metadata.name.as_str();
    if !addresses.v4.is_empty() {
        if parse_ip(addresses.v4).is_none() {
            return Err(format!("{} is not a valid ip", addresses.v4));
        }
        if !cidr_contain_ip(cidr, addresses.v4) {
            return Err(format!(
                "the V4ip {} is not in the range of subnet {name}, cidr {cidr}",
                addresses.v4
            ));
        }
    }
    if !addresses.v6.is_empty() {
        if contains_uppercase(addresses.v6) {
            return Err((addresses.upper_case_v6)());
        }
        if parse_ip(addresses.v6).is_none() {
            return Err(format!("{} is not a valid ip", addresses.v6));
        }
        if !cidr_contain_ip(cidr, addresses.v6) {
            return Err(format!(
                "the {} {} is not in the range of subnet {name}, cidr {cidr}",
                addresses.v6_word, addresses.v6
            ));
        }
    }
    Ok(())
}

/// The subnet an EIP comes from when it names none.
pub const DEFAULT_EXTERNAL_SUBNET: &str = "ovn-vpc-external-network";

/// How an EIP kind words its address messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EipStyle {
    /// IptablesEIP: `v4ip … is not a valid`, the subnet name quoted.
    Iptables,
    /// OvnEip: `spec v4Ip … is not a valid`, the subnet name bare.
    Ovn,
}

/// An EIP's addresses in its external subnet (`external`, else
/// `ovn-vpc-external-network`), in upstream's order; `Err` is the message.
pub fn check_eip(
    name: &str,
    external: &str,
    v4: &str,
    v6: &str,
    style: EipStyle,
    cluster: &dyn Cluster,
) -> Result<(), String> {
    let external = if external.is_empty() {
        DEFAULT_EXTERNAL_SUBNET
    } else {
        external
    };
    let subnet = cluster
        .subnet(external)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| kinds::SUBNET.not_found(external))?;
    let cidr = subnet.spec.cidr_block.as_str();
    let shown = match style {
        EipStyle::Iptables => format!("\"{}\"", subnet.metadata.name),
        EipStyle::Ovn => subnet.metadata.name.clone(),
    };
    let out_of_range =
        |ip: &str| format!("the vip {ip} is not in the range of subnet {shown}, cidr {cidr}");
    if !v4.is_empty() {
        if parse_ip(v4).is_none() {
            return Err(match style {
                EipStyle::Iptables => format!("v4ip {v4} is not a valid"),
                EipStyle::Ovn => format!("spec v4Ip {v4} is not a valid"),
            });
        }
        if !cidr_contain_ip(cidr, v4) {
            return Err(out_of_range(v4));
        }
    }
    if !v6.is_empty() {
        if contains_uppercase(v6) {
            return Err(format!(
                "eip {name} v6 ip address {v6} can not contain upper case"
            ));
        }
        if parse_ip(v6).is_none() {
            return Err(match style {
                EipStyle::Iptables => format!("v6ip {v6} is not a valid"),
                EipStyle::Ovn => format!("spec v6ip {v6} is not a valid"),
            });
        }
        if !cidr_contain_ip(cidr, v6) {
            return Err(out_of_range(v6));
        }
    }
    Ok(())
}
