//! Core `v1` kinds: Namespace ([`crate::k8s::kinds::NAMESPACE`]), Service
//! ([`crate::k8s::kinds::SERVICE`]) and ConfigMap
//! ([`crate::k8s::kinds::CONFIG_MAP`]); and Multus'
//! NetworkAttachmentDefinition
//! ([`crate::k8s::kinds::NETWORK_ATTACHMENT_DEFINITION`]).

use super::Meta;
use serde::Deserialize;
use std::collections::BTreeMap;

/// Its `ovn.kubernetes.io/logical_switch` annotation.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Namespace {
    pub metadata: Meta,
}

/// The apiserver's Service: its ClusterIPs (I9).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Service {
    pub metadata: Meta,
    pub spec: ServiceSpec,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct ServiceSpec {
    #[serde(rename = "clusterIP")]
    pub cluster_ip: String,
    /// One per family.
    #[serde(rename = "clusterIPs")]
    pub cluster_ips: Vec<String>,
}

impl Service {
    /// The ClusterIPs, `clusterIPs` first; headless (`None`) and empty skipped.
    pub fn cluster_ips(&self) -> Vec<&str> {
        let listed: Vec<&str> = if self.spec.cluster_ips.is_empty() {
            vec![self.spec.cluster_ip.as_str()]
        } else {
            self.spec.cluster_ips.iter().map(String::as_str).collect()
        };
        listed
            .into_iter()
            .filter(|ip| !ip.is_empty() && *ip != "None")
            .collect()
    }
}

/// The NAT gateway's configuration in `kube-system`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct ConfigMap {
    pub metadata: Meta,
    pub data: BTreeMap<String, String>,
}

/// A Multus NetworkAttachmentDefinition: its CNI config, which tells
/// whether Kube-OVN allocates its addresses (I17).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct NetworkAttachmentDefinition {
    pub metadata: NamespacedMeta,
    pub spec: NetworkAttachmentDefinitionSpec,
}

/// A namespaced object's name and namespace.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct NamespacedMeta {
    pub name: String,
    pub namespace: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct NetworkAttachmentDefinitionSpec {
    /// The CNI config, JSON as text; empty for a NAD that only names a network.
    pub config: String,
}
