//! The NAT kinds: VpcNatGateway ([`crate::k8s::kinds::VPC_NAT_GATEWAY`]) and
//! its iptables EIPs and rules, and the OVN EIPs and rules. Each family's
//! three rule kinds are read through one type holding every field of the
//! three specs, each empty where its kind has none; the CRDs prune unknown
//! fields, so comparing such a spec compares the kind's own fields.

use super::Meta;
use serde::Deserialize;

#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct VpcNatGateway {
    pub metadata: Meta,
    pub spec: VpcNatGatewaySpec,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct VpcNatGatewaySpec {
    /// The namespace of its StatefulSet.
    pub namespace: String,
    pub vpc: String,
    pub subnet: String,
    pub lan_ip: String,
    /// 0 means 1.
    pub replicas: i32,
    pub tolerations: Vec<Toleration>,
    pub qos_policy: String,
    pub bfd: Enabled,
}

/// A `corev1.Toleration`: the fields the checks read.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Toleration {
    pub operator: String,
    pub effect: String,
}

/// A `{"enabled": bool}` part of an object.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Enabled {
    pub enabled: bool,
}

/// IptablesEIP ([`crate::k8s::kinds::IPTABLES_EIP`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct IptablesEip {
    pub metadata: Meta,
    pub spec: IptablesEipSpec,
    pub status: NatStatus,
}

/// Every `spec` field: an UPDATE is checked when any changed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct IptablesEipSpec {
    pub v4ip: String,
    pub v6ip: String,
    pub mac_address: String,
    /// The VpcNatGateway it belongs to.
    pub nat_gw_dp: String,
    pub qos_policy: String,
    pub external_subnet: String,
    pub namespace: String,
}

/// The `status` of the iptables NAT kinds.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct NatStatus {
    pub ready: bool,
    /// An EIP's assigned IPv4 address.
    pub ip: String,
    /// The rule kinds using an EIP, `fip,snat,dnat`.
    pub nat: String,
    pub redo: String,
}

/// IptablesDnatRule, IptablesSnatRule or IptablesFIPRule
/// ([`crate::k8s::kinds::IPTABLES_DNAT_RULE`] and its siblings).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct IptablesRule {
    pub metadata: Meta,
    pub spec: IptablesRuleSpec,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct IptablesRuleSpec {
    /// The IptablesEIP the rule uses.
    pub eip: String,
    /// DNAT
    pub external_port: String,
    /// DNAT
    pub protocol: String,
    /// DNAT and FIP
    pub internal_ip: String,
    /// DNAT
    pub internal_port: String,
    /// DNAT: `exclusive` (the default) or `share`.
    #[serde(rename = "type")]
    pub rule_type: String,
    /// SNAT
    #[serde(rename = "internalCIDR")]
    pub internal_cidr: String,
}

/// OvnEip ([`crate::k8s::kinds::OVN_EIP`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct OvnEip {
    pub metadata: Meta,
    pub spec: OvnEipSpec,
    pub status: Ready,
}

/// Every `spec` field.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct OvnEipSpec {
    pub external_subnet: String,
    pub v4_ip: String,
    pub v6_ip: String,
    pub mac_address: String,
    #[serde(rename = "type")]
    pub eip_type: String,
}

/// A `{"ready": bool}` status.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Ready {
    pub ready: bool,
}

/// OvnDnatRule, OvnSnatRule or OvnFip ([`crate::k8s::kinds::OVN_DNAT_RULE`]
/// and its siblings).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct OvnRule {
    pub metadata: Meta,
    pub spec: OvnRuleSpec,
    pub status: Ready,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct OvnRuleSpec {
    pub ovn_eip: String,
    pub ip_type: String,
    pub ip_name: String,
    /// DNAT
    pub internal_port: String,
    /// DNAT
    pub external_port: String,
    /// DNAT
    pub protocol: String,
    pub vpc: String,
    /// DNAT and FIP
    pub v4_ip: String,
    /// DNAT and FIP
    pub v6_ip: String,
    /// SNAT
    pub vpc_subnet: String,
    /// SNAT
    pub v4_ip_cidr: String,
    /// SNAT
    pub v6_ip_cidr: String,
    /// FIP
    #[serde(rename = "type")]
    pub rule_type: String,
}
