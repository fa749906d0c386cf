//! `kubeovn.io/v1` IP ([`crate::k8s::kinds::IP`]): one address allocation
//! (one pod NIC, node or VIP).

use super::Meta;
use crate::upstream::kubeovn_util::parse_item;
use serde::Deserialize;
use std::borrow::Cow;
use std::net::IpAddr;

#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Ip {
    pub metadata: Meta,
    pub spec: IpSpec,
}

/// The fields that decide ownership and conflicts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct IpSpec {
    /// The owner: a pod, a KubeVirt VM or a node.
    pub pod_name: String,
    /// The owner's namespace.
    pub namespace: String,
    /// The subnet the address belongs to: the scope of a conflict.
    pub subnet: String,
    /// Deprecated combined `v4`, `v6` or `v4,v6`; what upstream compares.
    pub ip_address: String,
    pub v4_ip_address: String,
    pub v6_ip_address: String,
    /// Read by the IP object's own UPDATE check.
    pub mac_address: String,
    /// `""`, `StatefulSet` or `VirtualMachine`.
    pub pod_type: String,
}

impl Ip {
    /// The addresses it holds (I1).
    pub fn addresses(&self) -> Vec<IpAddr> {
        let spec = &self.spec;
        held_addresses(&spec.ip_address, &spec.v4_ip_address, &spec.v6_ip_address).collect()
    }
}

/// I1: the addresses an IP object holds, by value: `v4IpAddress` and
/// `v6IpAddress`, or `ipAddress` split on `,` when neither is set; what
/// does not parse holds nothing.
fn held_addresses<'s>(
    ip_address: &'s str,
    v4_ip_address: &'s str,
    v6_ip_address: &'s str,
) -> impl Iterator<Item = IpAddr> + 's {
    let combined = v4_ip_address.is_empty() && v6_ip_address.is_empty();
    let (split, pair) = if combined {
        (Some(ip_address.split(',')), None)
    } else {
        (None, Some([v4_ip_address, v6_ip_address]))
    };
    split
        .into_iter()
        .flatten()
        .chain(pair.into_iter().flatten())
        .filter_map(parse_item)
}

/// An IP as an IP list answer holds it, its strings borrowed from the answer
/// where they have no escapes: lists of thousands decode without copying,
/// and only the objects a check keeps become [`Ip`]s.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct IpRef<'a> {
    #[serde(borrow)]
    pub metadata: MetaRef<'a>,
    #[serde(borrow)]
    pub spec: IpSpecRef<'a>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct MetaRef<'a> {
    #[serde(borrow)]
    pub name: Cow<'a, str>,
}

/// The [`IpSpec`] fields a conflict reads, borrowed.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct IpSpecRef<'a> {
    #[serde(borrow)]
    pub pod_name: Cow<'a, str>,
    #[serde(borrow)]
    pub namespace: Cow<'a, str>,
    #[serde(borrow)]
    pub subnet: Cow<'a, str>,
    #[serde(borrow)]
    pub ip_address: Cow<'a, str>,
    #[serde(borrow)]
    pub v4_ip_address: Cow<'a, str>,
    #[serde(borrow)]
    pub v6_ip_address: Cow<'a, str>,
}

impl IpRef<'_> {
    /// Whether it holds one of these addresses (I1), given sorted: each of
    /// its addresses is looked up, so a long claim costs its logarithm.
    pub fn holds_any(&self, addresses: &[IpAddr]) -> bool {
        let spec = &self.spec;
        held_addresses(&spec.ip_address, &spec.v4_ip_address, &spec.v6_ip_address)
            .any(|a| addresses.binary_search(&a).is_ok())
    }

    /// The owned [`Ip`] with the same fields.
    pub fn to_owned(&self) -> Ip {
        let spec = &self.spec;
        Ip {
            metadata: Meta {
                name: self.metadata.name.to_string(),
                ..Meta::default()
            },
            spec: IpSpec {
                pod_name: spec.pod_name.to_string(),
                namespace: spec.namespace.to_string(),
                subnet: spec.subnet.to_string(),
                ip_address: spec.ip_address.to_string(),
                v4_ip_address: spec.v4_ip_address.to_string(),
                v6_ip_address: spec.v6_ip_address.to_string(),
                ..IpSpec::default()
            },
        }
    }
}
