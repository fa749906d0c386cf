//! `kubeovn.io/v1` IP ([`crate::k8s::kinds::IP`]): one address allocation
//! (one pod NIC, node or VIP).

use super::Meta;
use serde::Deserialize;
use std::borrow::Cow;

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
