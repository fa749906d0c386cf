//! The Kubernetes and Kube-OVN objects the policy reads, as lean serde
//! structs holding only the fields a check looks at. Unknown fields are
//! skipped while decoding, and `null` reads as absent, so a list of thousands
//! of IP CRs decodes quickly and a field the CRD leaves out never fails it.

use crate::cluster::Kind;
use crate::denial::Denial;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::collections::BTreeMap;

/// Decodes an admission `object` / `oldObject`; `null` or absent is
/// upstream's "there is no content to decode" (400), and so is any object
/// that does not decode (400, with the decoder's reason).
pub fn decode<'a, T: Deserialize<'a>>(
    kind: &str,
    object: Option<&'a RawValue>,
) -> Result<T, Denial> {
    let raw = object.map(RawValue::get).filter(|raw| raw.trim() != "null");
    let Some(raw) = raw else {
        return Err(Denial::bad_request("there is no content to decode"));
    };
    serde_json::from_slice(raw.as_bytes())
        .map_err(|e| Denial::bad_request(format!("cannot decode {kind} object: {e}")))
}

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

/// Implements `k8s_openapi::Resource` and `ListableResource` for a kind,
/// cluster-scoped unless `namespaced` is given.
macro_rules! cluster_resource {
    ($ty:ty, $group:literal, $version:literal, $kind:literal, $plural:literal) => {
        cluster_resource!(
            $ty,
            $group,
            $version,
            $kind,
            $plural,
            k8s_openapi::ClusterResourceScope
        );
    };
    ($ty:ty, $group:literal, $version:literal, $kind:literal, $plural:literal, namespaced) => {
        cluster_resource!(
            $ty,
            $group,
            $version,
            $kind,
            $plural,
            k8s_openapi::NamespaceResourceScope
        );
    };
    ($ty:ty, $group:literal, $version:literal, $kind:literal, $plural:literal, $scope:ty) => {
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
            type Scope = $scope;
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
    /// The MAC address (read by the IP CR's own UPDATE check).
    #[serde(default, deserialize_with = "null_default")]
    pub mac_address: String,
    /// `""`, `StatefulSet` or `VirtualMachine`.
    #[serde(default, deserialize_with = "null_default")]
    pub pod_type: String,
}

cluster_resource!(Ip, "kubeovn.io", "v1", "IP", "ips");

/// An IP CR as an IP list answer holds it, with strings borrowed from the
/// answer where they have no escapes: lists of thousands decode without
/// copying, and only the CRs a check keeps become [`Ip`]s.
#[derive(Debug, Default, Deserialize)]
pub struct IpRef<'a> {
    /// `metadata`
    #[serde(borrow, default, deserialize_with = "null_default")]
    pub metadata: MetaRef<'a>,
    /// `spec`
    #[serde(borrow, default, deserialize_with = "null_default")]
    pub spec: IpSpecRef<'a>,
}

/// The `metadata.name` of a borrowed object.
#[derive(Debug, Default, Deserialize)]
pub struct MetaRef<'a> {
    /// `name`
    #[serde(borrow, default)]
    pub name: Str<'a>,
}

/// The [`IpSpec`] fields, borrowed.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IpSpecRef<'a> {
    /// `podName`
    #[serde(borrow, default)]
    pub pod_name: Str<'a>,
    /// `namespace`
    #[serde(borrow, default)]
    pub namespace: Str<'a>,
    /// `subnet`
    #[serde(borrow, default)]
    pub subnet: Str<'a>,
    /// `ipAddress`
    #[serde(borrow, default)]
    pub ip_address: Str<'a>,
    /// `v4IpAddress`
    #[serde(borrow, default)]
    pub v4_ip_address: Str<'a>,
    /// `v6IpAddress`
    #[serde(borrow, default)]
    pub v6_ip_address: Str<'a>,
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

/// A JSON string borrowed from the input when it has no escapes, copied
/// when it has; `null` reads as empty.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Str<'a>(pub std::borrow::Cow<'a, str>);

impl AsRef<str> for Str<'_> {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Str<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Str<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Str<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Str(std::borrow::Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Str(std::borrow::Cow::Owned(v.to_string())))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(Str(std::borrow::Cow::Owned(v)))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Str::default())
            }
            fn visit_none<E>(self) -> Result<Self::Value, E> {
                Ok(Str::default())
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

/// `kubeovn.io/v1` Subnet, with the fields the checks read.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub struct Subnet {
    /// `metadata`
    #[serde(default, deserialize_with = "null_default")]
    pub metadata: Meta,
    /// `spec`
    #[serde(default, deserialize_with = "null_default")]
    pub spec: SubnetSpec,
    /// `status`
    #[serde(default, deserialize_with = "null_default")]
    pub status: SubnetStatus,
}

/// The `spec` fields of a Subnet that the checks read.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct SubnetSpec {
    /// `a/b` or `v4/x,v6/y`; empty for a MAC-only underlay subnet.
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
    /// The VPC; empty until kube-ovn-controller fills in `ovn-cluster`.
    #[serde(default, deserialize_with = "null_default")]
    pub vpc: String,
    /// The underlay VLAN, if any.
    #[serde(default, deserialize_with = "null_default")]
    pub vlan: String,
    /// `IPv4`, `IPv6`, `Dual`, `Mac` or empty.
    #[serde(default, deserialize_with = "null_default")]
    pub protocol: String,
    /// Reserved addresses: `ip` or `a..b`.
    #[serde(default, deserialize_with = "null_default")]
    pub exclude_ips: Vec<String>,
    /// CIDRs allowed to reach a private subnet.
    #[serde(default, deserialize_with = "null_default")]
    pub allow_subnets: Vec<String>,
    /// `distributed`, `centralized` or empty.
    #[serde(default, deserialize_with = "null_default")]
    pub gateway_type: String,
    /// Interface MTU; 0 when unset.
    #[serde(default, deserialize_with = "null_default")]
    pub mtu: u32,
    /// SNAT outgoing traffic.
    #[serde(default, deserialize_with = "null_default")]
    pub nat_outgoing: bool,
    /// `ip` or `v4,v6` of an external egress gateway.
    #[serde(default, deserialize_with = "null_default")]
    pub external_egress_gateway: String,
    /// The policy-routing table of the external egress gateway.
    #[serde(
        rename = "policyRoutingTableID",
        default,
        deserialize_with = "null_default"
    )]
    pub policy_routing_table_id: u32,
    /// Virtual IPs that must lie in the CIDR.
    #[serde(default, deserialize_with = "null_default")]
    pub vips: Vec<String>,
    /// Use a logical gateway.
    #[serde(default, deserialize_with = "null_default")]
    pub logical_gateway: bool,
    /// Underlay-to-overlay interconnection.
    #[serde(default, deserialize_with = "null_default")]
    pub u2o_interconnection: bool,
    /// The u2o interconnection address.
    #[serde(
        rename = "u2oInterconnectionIP",
        default,
        deserialize_with = "null_default"
    )]
    pub u2o_interconnection_ip: String,
    /// `u2oFeatures`
    #[serde(default, deserialize_with = "null_default")]
    pub u2o_features: U2oFeatures,
    /// `natOutgoingPolicyRules`
    #[serde(default, deserialize_with = "null_default")]
    pub nat_outgoing_policy_rules: Vec<NatOutgoingPolicyRule>,
}

/// `spec.u2oFeatures`
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct U2oFeatures {
    /// Route only overlay traffic through the u2o port.
    #[serde(default, deserialize_with = "null_default")]
    pub overlay_only_routing: bool,
}

/// One `spec.natOutgoingPolicyRules` entry: only its match is validated.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub struct NatOutgoingPolicyRule {
    /// `match`
    #[serde(rename = "match", default, deserialize_with = "null_default")]
    pub matches: NatOutgoingPolicyMatch,
}

/// `match` of a NAT outgoing policy rule.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub struct NatOutgoingPolicyMatch {
    /// `srcIPs`: comma-separated IPs or CIDRs.
    #[serde(rename = "srcIPs", default, deserialize_with = "null_default")]
    pub src_ips: String,
    /// `dstIPs`: comma-separated IPs or CIDRs.
    #[serde(rename = "dstIPs", default, deserialize_with = "null_default")]
    pub dst_ips: String,
}

/// The `status` counters a Subnet UPDATE or DELETE reads.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub struct SubnetStatus {
    /// `v4usingIPs`
    #[serde(rename = "v4usingIPs", default)]
    pub v4_using_ips: BigInt,
    /// `v6usingIPs`
    #[serde(rename = "v6usingIPs", default)]
    pub v6_using_ips: BigInt,
}

impl SubnetStatus {
    /// Whether any address of either family is in use.
    pub fn ips_in_use(&self) -> bool {
        !self.v4_using_ips.is_zero() || !self.v6_using_ips.is_zero()
    }
}

/// Kube-OVN's `internal.BigInt` counter as JSON carries it: a number or a
/// quoted number, `null` meaning zero. Only whether it is zero matters here.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BigInt {
    nonzero: bool,
}

impl BigInt {
    /// Whether the counter is zero.
    pub fn is_zero(&self) -> bool {
        !self.nonzero
    }

    /// Reads the JSON text as `BigInt.UnmarshalJSON` does: an integer, or a
    /// float with an integral value, optionally quoted; `None` when invalid.
    pub fn parse(json: &str) -> Option<Self> {
        if json == "null" {
            return Some(BigInt::default());
        }
        let text = json
            .strip_prefix('"')
            .and_then(|t| t.strip_suffix('"'))
            .unwrap_or(json);
        decimal_is_zero(text).map(|zero| BigInt { nonzero: !zero })
    }
}

/// Whether a decimal number (`-12`, `7.0`, `1e3`) is zero; `None` when it
/// is not a number or not an integer.
fn decimal_is_zero(text: &str) -> Option<bool> {
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => {
            let exp = &unsigned[at + 1..];
            let digits = exp.strip_prefix(['+', '-']).unwrap_or(exp);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            // Saturate: an exponent beyond any digit count decides the same way.
            let magnitude = digits
                .parse::<i64>()
                .unwrap_or(i64::MAX / 2)
                .min(i64::MAX / 2);
            let exp = if exp.starts_with('-') {
                -magnitude
            } else {
                magnitude
            };
            (&unsigned[..at], exp)
        }
        None => (unsigned, 0),
    };
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = || int_part.bytes().chain(frac_part.bytes());
    if int_part.len() + frac_part.len() == 0 || !digits().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // Digits at or after the decimal point (shifted by the exponent) must be zero.
    let point = i64::try_from(int_part.len())
        .unwrap_or(i64::MAX)
        .saturating_add(exponent);
    let integral = digits()
        .enumerate()
        .all(|(i, b)| b == b'0' || i64::try_from(i).unwrap_or(i64::MAX) < point);
    integral.then(|| digits().all(|b| b == b'0'))
}

impl<'de> Deserialize<'de> for BigInt {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = Box::<serde_json::value::RawValue>::deserialize(deserializer)?;
        BigInt::parse(raw.get())
            .ok_or_else(|| serde::de::Error::custom(format!("invalid big integer: {}", raw.get())))
    }
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

/// `kubeovn.io/v1` Vpc.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub struct Vpc {
    /// `metadata`
    #[serde(default, deserialize_with = "null_default")]
    pub metadata: Meta,
    /// `spec`
    #[serde(default, deserialize_with = "null_default")]
    pub spec: VpcSpec,
    /// `status`
    #[serde(default, deserialize_with = "null_default")]
    pub status: VpcStatus,
}

/// The `spec` fields of a Vpc that the checks read.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct VpcSpec {
    /// Namespaces allowed to use this (custom) VPC.
    #[serde(default, deserialize_with = "null_default")]
    pub namespaces: Vec<String>,
    /// `staticRoutes`
    #[serde(default, deserialize_with = "null_default")]
    pub static_routes: Vec<StaticRoute>,
    /// `policyRoutes`
    #[serde(default, deserialize_with = "null_default")]
    pub policy_routes: Vec<PolicyRoute>,
    /// `vpcPeerings`
    #[serde(default, deserialize_with = "null_default")]
    pub vpc_peerings: Vec<VpcPeering>,
    /// BFD on the VPC's router (NAT gateways may only enable BFD with it).
    #[serde(default, deserialize_with = "null_default")]
    pub enable_bfd: bool,
}

/// One `spec.staticRoutes` entry.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct StaticRoute {
    /// `policyDst`, `policySrc` or empty.
    #[serde(default, deserialize_with = "null_default")]
    pub policy: String,
    /// An IP or a CIDR.
    #[serde(default, deserialize_with = "null_default")]
    pub cidr: String,
    /// `nextHopIP`
    #[serde(rename = "nextHopIP", default, deserialize_with = "null_default")]
    pub next_hop_ip: String,
}

/// One `spec.policyRoutes` entry.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub struct PolicyRoute {
    /// `allow`, `drop` or `reroute`.
    #[serde(default, deserialize_with = "null_default")]
    pub action: String,
    /// `nextHopIP`: comma-separated for ECMP reroutes.
    #[serde(rename = "nextHopIP", default, deserialize_with = "null_default")]
    pub next_hop_ip: String,
}

/// One `spec.vpcPeerings` entry.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct VpcPeering {
    /// `localConnectIP`: a CIDR.
    #[serde(rename = "localConnectIP", default, deserialize_with = "null_default")]
    pub local_connect_ip: String,
}

/// The `status` fields of a Vpc that the checks read.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub struct VpcStatus {
    /// The VPC's router is up.
    #[serde(default, deserialize_with = "null_default")]
    pub standby: bool,
    /// The default VPC (`ovn-cluster`).
    #[serde(default, deserialize_with = "null_default")]
    pub default: bool,
    /// Subnets in the VPC.
    #[serde(default, deserialize_with = "null_default")]
    pub subnets: Vec<String>,
}

cluster_resource!(Vpc, "kubeovn.io", "v1", "Vpc", "vpcs");

/// `kubeovn.io/v1` Vip.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub struct Vip {
    /// `metadata`
    #[serde(default, deserialize_with = "null_default")]
    pub metadata: Meta,
    /// `spec`
    #[serde(default, deserialize_with = "null_default")]
    pub spec: VipSpec,
    /// `status`
    #[serde(default, deserialize_with = "null_default")]
    pub status: VipStatus,
}

/// Every `spec` field of a Vip: an UPDATE is checked when any of them changed.
/// Lists keep `null` apart from `[]`, as Go's `reflect.DeepEqual` does.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct VipSpec {
    /// `namespace`
    #[serde(default, deserialize_with = "null_default")]
    pub namespace: String,
    /// `subnet`
    #[serde(default, deserialize_with = "null_default")]
    pub subnet: String,
    /// `type`
    #[serde(rename = "type", default, deserialize_with = "null_default")]
    pub vip_type: String,
    /// `v4ip`
    #[serde(default, deserialize_with = "null_default")]
    pub v4ip: String,
    /// `v6ip`
    #[serde(default, deserialize_with = "null_default")]
    pub v6ip: String,
    /// `macAddress`
    #[serde(default, deserialize_with = "null_default")]
    pub mac_address: String,
    /// `selector`
    #[serde(default)]
    pub selector: Option<Vec<String>>,
    /// `attachSubnets`
    #[serde(default)]
    pub attach_subnets: Option<Vec<String>>,
}

/// `status` of a Vip: a MAC is set once it is assigned.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub struct VipStatus {
    /// `mac`
    #[serde(default, deserialize_with = "null_default")]
    pub mac: String,
}

cluster_resource!(Vip, "kubeovn.io", "v1", "Vip", "vips");

/// `v1` Service: the apiserver's ClusterIPs (I9).
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub struct Service {
    /// `metadata`
    #[serde(default, deserialize_with = "null_default")]
    pub metadata: Meta,
    /// `spec`
    #[serde(default, deserialize_with = "null_default")]
    pub spec: ServiceSpec,
}

/// The `spec` fields of a Service that the checks read.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ServiceSpec {
    /// `clusterIP`
    #[serde(rename = "clusterIP", default, deserialize_with = "null_default")]
    pub cluster_ip: String,
    /// `clusterIPs`: one per family.
    #[serde(rename = "clusterIPs", default, deserialize_with = "null_default")]
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

cluster_resource!(Service, "", "v1", "Service", "services", namespaced);

/// An OVN NAT rule (OvnDnatRule, OvnSnatRule, OvnFip) as a Vpc DELETE reads
/// it: the VPC it is in, from `status.vpc` or else `spec.vpc`.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub struct VpcReferrer {
    /// `metadata`
    #[serde(default, deserialize_with = "null_default")]
    pub metadata: Meta,
    /// `spec.vpc`
    #[serde(default, deserialize_with = "null_default")]
    pub spec: VpcField,
    /// `status.vpc`
    #[serde(default, deserialize_with = "null_default")]
    pub status: VpcField,
}

/// A `{"vpc": …}` part of an object.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub struct VpcField {
    /// `vpc`
    #[serde(default, deserialize_with = "null_default")]
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

/// `v1` ConfigMap: the NAT gateway's configuration in `kube-system`.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub struct ConfigMap {
    /// `metadata`
    #[serde(default, deserialize_with = "null_default")]
    pub metadata: Meta,
    /// `data`
    #[serde(default, deserialize_with = "null_default")]
    pub data: BTreeMap<String, String>,
}

cluster_resource!(ConfigMap, "", "v1", "ConfigMap", "configmaps", namespaced);

/// `kubeovn.io/v1` VpcNatGateway.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub struct VpcNatGateway {
    /// `metadata`
    #[serde(default, deserialize_with = "null_default")]
    pub metadata: Meta,
    /// `spec`
    #[serde(default, deserialize_with = "null_default")]
    pub spec: VpcNatGatewaySpec,
}

/// The `spec` fields of a VpcNatGateway that the checks read.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct VpcNatGatewaySpec {
    /// The namespace of its StatefulSet.
    #[serde(default, deserialize_with = "null_default")]
    pub namespace: String,
    /// `vpc`
    #[serde(default, deserialize_with = "null_default")]
    pub vpc: String,
    /// `subnet`
    #[serde(default, deserialize_with = "null_default")]
    pub subnet: String,
    /// `lanIp`
    #[serde(default, deserialize_with = "null_default")]
    pub lan_ip: String,
    /// `replicas`; 0 means 1.
    #[serde(default, deserialize_with = "null_default")]
    pub replicas: i32,
    /// `tolerations`
    #[serde(default, deserialize_with = "null_default")]
    pub tolerations: Vec<Toleration>,
    /// `qosPolicy`
    #[serde(default, deserialize_with = "null_default")]
    pub qos_policy: String,
    /// `bfd`
    #[serde(default, deserialize_with = "null_default")]
    pub bfd: Enabled,
}

/// A `corev1.Toleration`: the fields the checks read.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub struct Toleration {
    /// `operator`
    #[serde(default, deserialize_with = "null_default")]
    pub operator: String,
    /// `effect`
    #[serde(default, deserialize_with = "null_default")]
    pub effect: String,
}

/// A `{"enabled": bool}` part of an object.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub struct Enabled {
    /// `enabled`
    #[serde(default, deserialize_with = "null_default")]
    pub enabled: bool,
}

cluster_resource!(
    VpcNatGateway,
    "kubeovn.io",
    "v1",
    "VpcNatGateway",
    "vpc-nat-gateways"
);

/// `kubeovn.io/v1` IptablesEIP.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub struct IptablesEip {
    /// `metadata`
    #[serde(default, deserialize_with = "null_default")]
    pub metadata: Meta,
    /// `spec`
    #[serde(default, deserialize_with = "null_default")]
    pub spec: IptablesEipSpec,
    /// `status`
    #[serde(default, deserialize_with = "null_default")]
    pub status: NatStatus,
}

/// Every `spec` field of an IptablesEIP: an UPDATE is checked when any changed.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct IptablesEipSpec {
    /// `v4ip`
    #[serde(default, deserialize_with = "null_default")]
    pub v4ip: String,
    /// `v6ip`
    #[serde(default, deserialize_with = "null_default")]
    pub v6ip: String,
    /// `macAddress`
    #[serde(default, deserialize_with = "null_default")]
    pub mac_address: String,
    /// `natGwDp`: the VpcNatGateway it belongs to.
    #[serde(default, deserialize_with = "null_default")]
    pub nat_gw_dp: String,
    /// `qosPolicy`
    #[serde(default, deserialize_with = "null_default")]
    pub qos_policy: String,
    /// `externalSubnet`
    #[serde(default, deserialize_with = "null_default")]
    pub external_subnet: String,
    /// `namespace`
    #[serde(default, deserialize_with = "null_default")]
    pub namespace: String,
}

/// The `status` fields of the iptables NAT kinds that the checks read.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub struct NatStatus {
    /// `ready`
    #[serde(default, deserialize_with = "null_default")]
    pub ready: bool,
    /// `ip` (an EIP's assigned IPv4 address)
    #[serde(default, deserialize_with = "null_default")]
    pub ip: String,
    /// `nat`: the rule kinds using an EIP, `fip,snat,dnat`.
    #[serde(default, deserialize_with = "null_default")]
    pub nat: String,
    /// `redo`
    #[serde(default, deserialize_with = "null_default")]
    pub redo: String,
}

cluster_resource!(
    IptablesEip,
    "kubeovn.io",
    "v1",
    "IptablesEIP",
    "iptables-eips"
);

/// An iptables NAT rule of a VpcNatGateway (IptablesDnatRule,
/// IptablesSnatRule or IptablesFIPRule), read through one type: every field
/// of the three specs, each empty where its kind has none.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub struct IptablesRule {
    /// `metadata`
    #[serde(default, deserialize_with = "null_default")]
    pub metadata: Meta,
    /// `spec`
    #[serde(default, deserialize_with = "null_default")]
    pub spec: IptablesRuleSpec,
}

/// The `spec` fields of the iptables NAT rules. The CRDs prune unknown
/// fields, so comparing this whole spec compares the kind's own fields.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct IptablesRuleSpec {
    /// `eip`: the IptablesEIP the rule uses.
    #[serde(default, deserialize_with = "null_default")]
    pub eip: String,
    /// DNAT `externalPort`
    #[serde(default, deserialize_with = "null_default")]
    pub external_port: String,
    /// DNAT `protocol`
    #[serde(default, deserialize_with = "null_default")]
    pub protocol: String,
    /// DNAT and FIP `internalIp`
    #[serde(default, deserialize_with = "null_default")]
    pub internal_ip: String,
    /// DNAT `internalPort`
    #[serde(default, deserialize_with = "null_default")]
    pub internal_port: String,
    /// DNAT `type`: `exclusive` (the default) or `share`.
    #[serde(rename = "type", default, deserialize_with = "null_default")]
    pub rule_type: String,
    /// SNAT `internalCIDR`
    #[serde(rename = "internalCIDR", default, deserialize_with = "null_default")]
    pub internal_cidr: String,
}

/// `kubeovn.io/v1` IptablesDnatRule, read as an [`IptablesRule`].
pub const IPTABLES_DNAT_RULE: Kind = Kind {
    api_version: "kubeovn.io/v1",
    kind: "IptablesDnatRule",
    list_kind: "IptablesDnatRuleList",
};

/// `kubeovn.io/v1` IptablesSnatRule, read as an [`IptablesRule`].
pub const IPTABLES_SNAT_RULE: Kind = Kind {
    api_version: "kubeovn.io/v1",
    kind: "IptablesSnatRule",
    list_kind: "IptablesSnatRuleList",
};

/// `kubeovn.io/v1` IptablesFIPRule, read as an [`IptablesRule`].
pub const IPTABLES_FIP_RULE: Kind = Kind {
    api_version: "kubeovn.io/v1",
    kind: "IptablesFIPRule",
    list_kind: "IptablesFIPRuleList",
};

/// `kubeovn.io/v1` QoSPolicy: only its existence matters here.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub struct QosPolicy {
    /// `metadata`
    #[serde(default, deserialize_with = "null_default")]
    pub metadata: Meta,
}

cluster_resource!(QosPolicy, "kubeovn.io", "v1", "QoSPolicy", "qos-policies");

/// Any object, by name only: what a list read for its members' names keeps.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub struct Named {
    /// `metadata`
    #[serde(default, deserialize_with = "null_default")]
    pub metadata: Meta,
}

/// `kubeovn.io/v1` OvnEip.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub struct OvnEip {
    /// `metadata`
    #[serde(default, deserialize_with = "null_default")]
    pub metadata: Meta,
    /// `spec`
    #[serde(default, deserialize_with = "null_default")]
    pub spec: OvnEipSpec,
    /// `status`
    #[serde(default, deserialize_with = "null_default")]
    pub status: Ready,
}

/// Every `spec` field of an OvnEip.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct OvnEipSpec {
    /// `externalSubnet`
    #[serde(default, deserialize_with = "null_default")]
    pub external_subnet: String,
    /// `v4Ip`
    #[serde(default, deserialize_with = "null_default")]
    pub v4_ip: String,
    /// `v6Ip`
    #[serde(default, deserialize_with = "null_default")]
    pub v6_ip: String,
    /// `macAddress`
    #[serde(default, deserialize_with = "null_default")]
    pub mac_address: String,
    /// `type`
    #[serde(rename = "type", default, deserialize_with = "null_default")]
    pub eip_type: String,
}

/// A `{"ready": bool}` status.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub struct Ready {
    /// `ready`
    #[serde(default, deserialize_with = "null_default")]
    pub ready: bool,
}

cluster_resource!(OvnEip, "kubeovn.io", "v1", "OvnEip", "ovn-eips");

/// An OVN NAT rule (OvnDnatRule, OvnSnatRule or OvnFip) read through one
/// type: every field of the three specs, each empty where its kind has none.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub struct OvnRule {
    /// `metadata`
    #[serde(default, deserialize_with = "null_default")]
    pub metadata: Meta,
    /// `spec`
    #[serde(default, deserialize_with = "null_default")]
    pub spec: OvnRuleSpec,
    /// `status`
    #[serde(default, deserialize_with = "null_default")]
    pub status: Ready,
}

/// The `spec` fields of the OVN NAT rules (the CRDs prune unknown fields).
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct OvnRuleSpec {
    /// `ovnEip`
    #[serde(default, deserialize_with = "null_default")]
    pub ovn_eip: String,
    /// `ipType`
    #[serde(default, deserialize_with = "null_default")]
    pub ip_type: String,
    /// `ipName`
    #[serde(default, deserialize_with = "null_default")]
    pub ip_name: String,
    /// DNAT `internalPort`
    #[serde(default, deserialize_with = "null_default")]
    pub internal_port: String,
    /// DNAT `externalPort`
    #[serde(default, deserialize_with = "null_default")]
    pub external_port: String,
    /// DNAT `protocol`
    #[serde(default, deserialize_with = "null_default")]
    pub protocol: String,
    /// `vpc`
    #[serde(default, deserialize_with = "null_default")]
    pub vpc: String,
    /// DNAT and FIP `v4Ip`
    #[serde(default, deserialize_with = "null_default")]
    pub v4_ip: String,
    /// DNAT and FIP `v6Ip`
    #[serde(default, deserialize_with = "null_default")]
    pub v6_ip: String,
    /// SNAT `vpcSubnet`
    #[serde(default, deserialize_with = "null_default")]
    pub vpc_subnet: String,
    /// SNAT `v4IpCidr`
    #[serde(default, deserialize_with = "null_default")]
    pub v4_ip_cidr: String,
    /// SNAT `v6IpCidr`
    #[serde(default, deserialize_with = "null_default")]
    pub v6_ip_cidr: String,
    /// FIP `type`
    #[serde(rename = "type", default, deserialize_with = "null_default")]
    pub rule_type: String,
}
