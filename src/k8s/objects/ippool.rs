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
