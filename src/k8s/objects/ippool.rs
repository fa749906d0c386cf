//! `kubeovn.io/v1` IPPool ([`crate::k8s::kinds::IPPOOL`]).

use super::Meta;
use serde::Deserialize;

#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct IpPool {
    pub metadata: Meta,
    pub spec: IpPoolSpec,
}

/// The fields kube-ovn-controller's IPAM reads of a pool.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct IpPoolSpec {
    /// The Subnet the pool carves its addresses from.
    pub subnet: String,
    /// Addresses, `a..b` ranges and CIDRs, as written.
    pub ips: Vec<String>,
    /// The namespaces the pool is reserved for (I19); empty for none.
    pub namespaces: Vec<String>,
}

/// Kube-OVN's IPPool CRD ([`crate::k8s::kinds::CUSTOM_RESOURCE_DEFINITION`]),
/// as much of it as tells whether `kubeovn.io/v1` IPPools can be listed by
/// `spec.subnet` (a `selectableFields` entry, Kubernetes 1.32+).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct IpPoolCrd {
    pub spec: CrdSpec,
}

/// A CRD's versions.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct CrdSpec {
    pub versions: Vec<CrdVersion>,
}

/// One version of a CRD and the fields it declares selectable.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct CrdVersion {
    pub name: String,
    pub selectable_fields: Vec<SelectableField>,
}

/// A selectable field of a CRD version.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct SelectableField {
    pub json_path: String,
}

impl IpPoolCrd {
    /// The field selector that lists `kubeovn.io/v1` IPPools by subnet.
    pub const SUBNET_FIELD: &'static str = "spec.subnet";

    /// Whether the API server selects `kubeovn.io/v1` IPPools by `spec.subnet`.
    pub fn selects_subnet(&self) -> bool {
        self.spec.versions.iter().any(|v| {
            v.name == "v1"
                && v.selectable_fields
                    .iter()
                    .any(|f| f.json_path.strip_prefix('.') == Some(Self::SUBNET_FIELD))
        })
    }
}
