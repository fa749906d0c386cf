//! `kubeovn.io/v1` Vpc ([`crate::k8s::kinds::VPC`]), and the OVN NAT rules
//! as a Vpc DELETE reads them.

use super::Meta;
use serde::Deserialize;

#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Vpc {
    pub metadata: Meta,
    pub spec: VpcSpec,
    pub status: VpcStatus,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct VpcSpec {
    /// Namespaces allowed to use this (custom) VPC.
    pub namespaces: Vec<String>,
    pub static_routes: Vec<StaticRoute>,
    pub policy_routes: Vec<PolicyRoute>,
    pub vpc_peerings: Vec<VpcPeering>,
    /// BFD on the VPC's router (NAT gateways may only enable BFD with it).
    pub enable_bfd: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct StaticRoute {
    /// `policyDst`, `policySrc` or empty.
    pub policy: String,
    /// An IP or a CIDR.
    pub cidr: String,
    #[serde(rename = "nextHopIP")]
    pub next_hop_ip: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct PolicyRoute {
    /// `allow`, `drop` or `reroute`.
    pub action: String,
    /// Comma-separated for ECMP reroutes.
    #[serde(rename = "nextHopIP")]
    pub next_hop_ip: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct VpcPeering {
    /// A CIDR.
    #[serde(rename = "localConnectIP")]
    pub local_connect_ip: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct VpcStatus {
    /// The VPC's router is up.
    pub standby: bool,
    /// The default VPC (`ovn-cluster`).
    pub default: bool,
    /// Subnets in the VPC.
    pub subnets: Vec<String>,
}

/// An OVN NAT rule (OvnDnatRule, OvnSnatRule, OvnFip) as a Vpc DELETE reads
/// it: the VPC it is in.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct VpcReferrer {
    pub metadata: Meta,
    pub spec: VpcField,
    pub status: VpcField,
}

/// A `{"vpc": …}` part of an object.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct VpcField {
    pub vpc: String,
}

impl VpcReferrer {
    /// The VPC the rule is in: `status.vpc`, else `spec.vpc`.
    pub fn vpc(&self) -> &str {
        if self.status.vpc.is_empty() {
            &self.spec.vpc
        } else {
            &self.status.vpc
        }
    }
}
