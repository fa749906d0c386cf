//! The Kubernetes and Kube-OVN objects the policy reads, as lean serde
//! structs holding only the fields a check looks at. Unknown fields are
//! skipped while decoding, and `null` reads as absent, so a list of thousands
//! of IP CRs decodes quickly and a field the CRD leaves out never fails it.

use serde::Deserialize;
use std::collections::BTreeMap;

/// The metadata fields the policy reads.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub struct Meta {
    /// `metadata.name`
    #[serde(default, deserialize_with = "null_default")]
    pub name: String,
    /// `metadata.annotations`
    #[serde(default, deserialize_with = "null_default")]
    pub annotations: BTreeMap<String, String>,
}

/// Reads `null` as the type's default, so `"field": null` equals an absent field.
pub fn null_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// Implements `k8s_openapi::Resource` and `ListableResource` for a cluster-scoped kind.
macro_rules! cluster_resource {
    ($ty:ty, $group:literal, $version:literal, $kind:literal, $plural:literal) => {
        impl k8s_openapi::Resource for $ty {
            const API_VERSION: &'static str = if $group.is_empty() {
                $version
            } else {
                concat!($group, "/", $version)
            };
            const GROUP: &'static str = $group;
            const KIND: &'static str = $kind;
            const VERSION: &'static str = $version;
            const URL_PATH_SEGMENT: &'static str = $plural;
            type Scope = k8s_openapi::ClusterResourceScope;
        }
        impl k8s_openapi::ListableResource for $ty {
            const LIST_KIND: &'static str = concat!($kind, "List");
        }
    };
}

/// `kubeovn.io/v1` IP: one address allocation (one pod NIC, node or VIP).
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub struct Ip {
    /// `metadata`
    #[serde(default, deserialize_with = "null_default")]
    pub metadata: Meta,
    /// `spec`
    #[serde(default, deserialize_with = "null_default")]
    pub spec: IpSpec,
}

/// The `spec` fields of an IP CR that decide ownership and conflicts.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct IpSpec {
    /// Owner pod (or VM, or node) name.
    #[serde(default, deserialize_with = "null_default")]
    pub pod_name: String,
    /// Owner namespace.
    #[serde(default, deserialize_with = "null_default")]
    pub namespace: String,
    /// The subnet the address belongs to: the conflict scope.
    #[serde(default, deserialize_with = "null_default")]
    pub subnet: String,
    /// Deprecated combined `v4`, `v6` or `v4,v6`; what upstream compares.
    #[serde(default, deserialize_with = "null_default")]
    pub ip_address: String,
    /// The IPv4 address, when split.
    #[serde(default, deserialize_with = "null_default")]
    pub v4_ip_address: String,
    /// The IPv6 address, when split.
    #[serde(default, deserialize_with = "null_default")]
    pub v6_ip_address: String,
}

cluster_resource!(Ip, "kubeovn.io", "v1", "IP", "ips");

/// `kubeovn.io/v1` Subnet, with the fields the pod checks read.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub struct Subnet {
    /// `metadata`
    #[serde(default, deserialize_with = "null_default")]
    pub metadata: Meta,
    /// `spec`
    #[serde(default, deserialize_with = "null_default")]
    pub spec: SubnetSpec,
}

/// The `spec` fields of a Subnet that the static-IP checks read.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct SubnetSpec {
    /// `a/b` or `v4/x,v6/y`.
    #[serde(default, deserialize_with = "null_default")]
    pub cidr_block: String,
    /// `a` or `v4,v6`.
    #[serde(default, deserialize_with = "null_default")]
    pub gateway: String,
    /// Namespaces bound to this subnet.
    #[serde(default, deserialize_with = "null_default")]
    pub namespaces: Vec<String>,
    /// The cluster's default subnet.
    #[serde(default, deserialize_with = "null_default")]
    pub default: bool,
}

cluster_resource!(Subnet, "kubeovn.io", "v1", "Subnet", "subnets");

/// `kubeovn.io/v1` IPPool: only its existence matters here.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub struct IpPool {
    /// `metadata`
    #[serde(default, deserialize_with = "null_default")]
    pub metadata: Meta,
}

cluster_resource!(IpPool, "kubeovn.io", "v1", "IPPool", "ippools");

/// `v1` Namespace: its `ovn.kubernetes.io/logical_switch` annotation.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub struct Namespace {
    /// `metadata`
    #[serde(default, deserialize_with = "null_default")]
    pub metadata: Meta,
}

cluster_resource!(Namespace, "", "v1", "Namespace", "namespaces");
