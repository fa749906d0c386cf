//! The addresses a Vip or an IP object claims in a Subnet (kube-ovn-webhook's
//! `ValidateVip` and `ValidateIP`): the Subnet must be named and exist, and
//! each address must be valid and inside its CIDR.

use crate::cluster::{Cluster, not_found};
use crate::net::{cidr_contain_ip, contains_uppercase, parse_ip};
use crate::resources::Subnet;

/// An object's claim on addresses of a Subnet, and the words its messages use.
pub struct Claim<'a> {
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

/// Checks a claim in upstream's order; `Err` is the message (upstream
/// answers every failure here with `Errored(400)`).
pub fn check(claim: &Claim<'_>, cluster: &dyn Cluster) -> Result<(), String> {
    if claim.subnet.is_empty() {
        return Err("subnet parameter cannot be empty".to_string());
    }
    let subnet = cluster
        .subnet(claim.subnet)
        .map_err(|e| e.0)?
        .ok_or_else(|| not_found::<Subnet>(claim.subnet))?;
    let cidr = subnet.spec.cidr_block.as_str();
    let name = subnet.metadata.name.as_str();
    if !claim.v4.is_empty() {
        if parse_ip(claim.v4).is_none() {
            return Err(format!("{} is not a valid ip", claim.v4));
        }
        if !cidr_contain_ip(cidr, claim.v4) {
            return Err(format!(
                "the V4ip {} is not in the range of subnet {name}, cidr {cidr}",
                claim.v4
            ));
        }
    }
    if !claim.v6.is_empty() {
        if contains_uppercase(claim.v6) {
            return Err((claim.upper_case_v6)());
        }
        if parse_ip(claim.v6).is_none() {
            return Err(format!("{} is not a valid ip", claim.v6));
        }
        if !cidr_contain_ip(cidr, claim.v6) {
            return Err(format!(
                "the {} {} is not in the range of subnet {name}, cidr {cidr}",
                claim.v6_word, claim.v6
            ));
        }
    }
    Ok(())
}
