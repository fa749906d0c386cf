//! The Kubernetes and Kube-OVN objects the policy reads, as lean structs
//! holding only the fields a check looks at, decoded by [`json`].
//! Unknown fields are skipped while decoding, and `null` reads as absent, so
//! a list of thousands of IP CRs decodes quickly and a field the CRD leaves
//! out never fails it.

use json::{self, Decode, Reader};
use std::collections::BTreeMap;

/// Declares an object type once: the struct, each field's JSON key
/// ([`json::json_struct!`]) and, when a kind follows its name, its
/// Kubernetes kind (`group version Kind plural`, then `namespaced` for a
/// namespaced kind):
///
/// ```text
/// object! {
///     /// `kubeovn.io/v1` Vip.
///     #[derive(Clone, Debug, Default, PartialEq, Eq)]
///     pub struct Vip: "kubeovn.io" "v1" "Vip" "vips" {
///         /// `metadata`
///         pub metadata: Meta = "metadata",
///     }
/// }
/// ```
macro_rules! object {
    (
        $(#[$meta:meta])*
        $vis:vis struct $ty:ident: $group:literal $version:literal $kind:literal $plural:literal
            $($scope:ident)? { $($fields:tt)* }
    ) => {
        json::json_struct! { $(#[$meta])* $vis struct $ty { $($fields)* } }
        cluster_resource!($ty, $group, $version, $kind, $plural $(, $scope)?);
    };
    ($($declaration:tt)*) => {
        json::json_struct! { $($declaration)* }
    };
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

object! {
    /// The metadata fields the policy reads.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct Meta {
        /// `metadata.name`
        pub name: String = "name",
        /// `metadata.annotations`
        pub annotations: BTreeMap<String, String> = "annotations",
    }
}

/// A kind as lookups name it. The list and get code takes it as a value, so
/// that it is compiled once per decoded type rather than once per kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kind {
    /// `apiVersion`, e.g. `kubeovn.io/v1`.
    pub api_version: &'static str,
    /// `kind`, e.g. `IP`.
    pub kind: &'static str,
    /// The `kind` of its list, e.g. `IPList`.
    pub list_kind: &'static str,
}

impl Kind {
    /// The kind of a `k8s_openapi` resource type.
    pub const fn of<T: k8s_openapi::ListableResource>() -> Kind {
        Kind {
            api_version: T::API_VERSION,
            kind: T::KIND,
            list_kind: T::LIST_KIND,
        }
    }
}

object! {
    /// `kubeovn.io/v1` IP: one address allocation (one pod NIC, node or VIP).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct Ip: "kubeovn.io" "v1" "IP" "ips" {
        /// `metadata`
        pub metadata: Meta = "metadata",
        /// `spec`
        pub spec: IpSpec = "spec",
    }
}

object! {
    /// The `spec` fields of an IP CR that decide ownership and conflicts.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct IpSpec {
        /// Owner pod (or VM, or node) name.
        pub pod_name: String = "podName",
        /// Owner namespace.
        pub namespace: String = "namespace",
        /// The subnet the address belongs to: the conflict scope.
        pub subnet: String = "subnet",
        /// Deprecated combined `v4`, `v6` or `v4,v6`; what upstream compares.
        pub ip_address: String = "ipAddress",
        /// The IPv4 address, when split.
        pub v4_ip_address: String = "v4IpAddress",
        /// The IPv6 address, when split.
        pub v6_ip_address: String = "v6IpAddress",
        /// The MAC address (read by the IP CR's own UPDATE check).
        pub mac_address: String = "macAddress",
        /// `""`, `StatefulSet` or `VirtualMachine`.
        pub pod_type: String = "podType",
    }
}

object! {
    /// An IP CR as an IP list answer holds it, with strings borrowed from the
    /// answer where they have no escapes: lists of thousands decode without
    /// copying, and only the CRs a check keeps become [`Ip`]s.
    #[derive(Debug, Default)]
    pub struct IpRef<'a> {
        /// `metadata`
        pub metadata: MetaRef<'a> = "metadata",
        /// `spec`
        pub spec: IpSpecRef<'a> = "spec",
    }
}

object! {
    /// The `metadata.name` of a borrowed object.
    #[derive(Debug, Default)]
    pub struct MetaRef<'a> {
        /// `name`
        pub name: Str<'a> = "name",
    }
}

object! {
    /// The [`IpSpec`] fields, borrowed.
    #[derive(Debug, Default)]
    pub struct IpSpecRef<'a> {
        /// `podName`
        pub pod_name: Str<'a> = "podName",
        /// `namespace`
        pub namespace: Str<'a> = "namespace",
        /// `subnet`
        pub subnet: Str<'a> = "subnet",
        /// `ipAddress`
        pub ip_address: Str<'a> = "ipAddress",
        /// `v4IpAddress`
        pub v4_ip_address: Str<'a> = "v4IpAddress",
        /// `v6IpAddress`
        pub v6_ip_address: Str<'a> = "v6IpAddress",
    }
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

impl<'a> Decode<'a> for Str<'a> {
    fn decode(reader: &mut Reader<'a>) -> Result<Self, json::Error> {
        std::borrow::Cow::decode(reader).map(Str)
    }
}

object! {
    /// `kubeovn.io/v1` Subnet, with the fields the checks read.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct Subnet: "kubeovn.io" "v1" "Subnet" "subnets" {
        /// `metadata`
        pub metadata: Meta = "metadata",
        /// `spec`
        pub spec: SubnetSpec = "spec",
        /// `status`
        pub status: SubnetStatus = "status",
    }
}

object! {
    /// The `spec` fields of a Subnet that the checks read.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct SubnetSpec {
        /// `a/b` or `v4/x,v6/y`; empty for a MAC-only underlay subnet.
        pub cidr_block: String = "cidrBlock",
        /// `a` or `v4,v6`.
        pub gateway: String = "gateway",
        /// Namespaces bound to this subnet.
        pub namespaces: Vec<String> = "namespaces",
        /// The cluster's default subnet.
        pub default: bool = "default",
        /// The VPC; empty until kube-ovn-controller fills in `ovn-cluster`.
        pub vpc: String = "vpc",
        /// The underlay VLAN, if any.
        pub vlan: String = "vlan",
        /// `IPv4`, `IPv6`, `Dual`, `Mac` or empty.
        pub protocol: String = "protocol",
        /// Reserved addresses: `ip` or `a..b`.
        pub exclude_ips: Vec<String> = "excludeIps",
        /// CIDRs allowed to reach a private subnet.
        pub allow_subnets: Vec<String> = "allowSubnets",
        /// `distributed`, `centralized` or empty.
        pub gateway_type: String = "gatewayType",
        /// Interface MTU; 0 when unset.
        pub mtu: u32 = "mtu",
        /// SNAT outgoing traffic.
        pub nat_outgoing: bool = "natOutgoing",
        /// `ip` or `v4,v6` of an external egress gateway.
        pub external_egress_gateway: String = "externalEgressGateway",
        /// The policy-routing table of the external egress gateway.
        pub policy_routing_table_id: u32 = "policyRoutingTableID",
        /// Virtual IPs that must lie in the CIDR.
        pub vips: Vec<String> = "vips",
        /// Use a logical gateway.
        pub logical_gateway: bool = "logicalGateway",
        /// Underlay-to-overlay interconnection.
        pub u2o_interconnection: bool = "u2oInterconnection",
        /// The u2o interconnection address.
        pub u2o_interconnection_ip: String = "u2oInterconnectionIP",
        /// `u2oFeatures`
        pub u2o_features: U2oFeatures = "u2oFeatures",
        /// `natOutgoingPolicyRules`
        pub nat_outgoing_policy_rules: Vec<NatOutgoingPolicyRule> = "natOutgoingPolicyRules",
    }
}

object! {
    /// `spec.u2oFeatures`
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct U2oFeatures {
        /// Route only overlay traffic through the u2o port.
        pub overlay_only_routing: bool = "overlayOnlyRouting",
    }
}

object! {
    /// One `spec.natOutgoingPolicyRules` entry: only its match is validated.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct NatOutgoingPolicyRule {
        /// `match`
        pub matches: NatOutgoingPolicyMatch = "match",
    }
}

object! {
    /// `match` of a NAT outgoing policy rule.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct NatOutgoingPolicyMatch {
        /// `srcIPs`: comma-separated IPs or CIDRs.
        pub src_ips: String = "srcIPs",
        /// `dstIPs`: comma-separated IPs or CIDRs.
        pub dst_ips: String = "dstIPs",
    }
}

object! {
    /// The `status` counters a Subnet UPDATE or DELETE reads.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct SubnetStatus {
        /// `v4usingIPs`
        pub v4_using_ips: BigInt = "v4usingIPs",
        /// `v6usingIPs`
        pub v6_using_ips: BigInt = "v6usingIPs",
    }
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

impl<'a> Decode<'a> for BigInt {
    fn decode(reader: &mut Reader<'a>) -> Result<Self, json::Error> {
        let raw = reader.raw()?;
        BigInt::parse(raw)
            .ok_or_else(|| json::Error::invalid(format!("invalid big integer: {raw}")))
    }
}

object! {
    /// `kubeovn.io/v1` IPPool: only its existence matters here.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct IpPool: "kubeovn.io" "v1" "IPPool" "ippools" {
        /// `metadata`
        pub metadata: Meta = "metadata",
    }
}

object! {
    /// `v1` Namespace: its `ovn.kubernetes.io/logical_switch` annotation.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct Namespace: "" "v1" "Namespace" "namespaces" {
        /// `metadata`
        pub metadata: Meta = "metadata",
    }
}

object! {
    /// `kubeovn.io/v1` Vpc.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct Vpc: "kubeovn.io" "v1" "Vpc" "vpcs" {
        /// `metadata`
        pub metadata: Meta = "metadata",
        /// `spec`
        pub spec: VpcSpec = "spec",
        /// `status`
        pub status: VpcStatus = "status",
    }
}

object! {
    /// The `spec` fields of a Vpc that the checks read.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct VpcSpec {
        /// Namespaces allowed to use this (custom) VPC.
        pub namespaces: Vec<String> = "namespaces",
        /// `staticRoutes`
        pub static_routes: Vec<StaticRoute> = "staticRoutes",
        /// `policyRoutes`
        pub policy_routes: Vec<PolicyRoute> = "policyRoutes",
        /// `vpcPeerings`
        pub vpc_peerings: Vec<VpcPeering> = "vpcPeerings",
        /// BFD on the VPC's router (NAT gateways may only enable BFD with it).
        pub enable_bfd: bool = "enableBfd",
    }
}

object! {
    /// One `spec.staticRoutes` entry.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct StaticRoute {
        /// `policyDst`, `policySrc` or empty.
        pub policy: String = "policy",
        /// An IP or a CIDR.
        pub cidr: String = "cidr",
        /// `nextHopIP`
        pub next_hop_ip: String = "nextHopIP",
    }
}

object! {
    /// One `spec.policyRoutes` entry.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct PolicyRoute {
        /// `allow`, `drop` or `reroute`.
        pub action: String = "action",
        /// `nextHopIP`: comma-separated for ECMP reroutes.
        pub next_hop_ip: String = "nextHopIP",
    }
}

object! {
    /// One `spec.vpcPeerings` entry.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct VpcPeering {
        /// `localConnectIP`: a CIDR.
        pub local_connect_ip: String = "localConnectIP",
    }
}

object! {
    /// The `status` fields of a Vpc that the checks read.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct VpcStatus {
        /// The VPC's router is up.
        pub standby: bool = "standby",
        /// The default VPC (`ovn-cluster`).
        pub default: bool = "default",
        /// Subnets in the VPC.
        pub subnets: Vec<String> = "subnets",
    }
}

object! {
    /// `kubeovn.io/v1` Vip.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct Vip: "kubeovn.io" "v1" "Vip" "vips" {
        /// `metadata`
        pub metadata: Meta = "metadata",
        /// `spec`
        pub spec: VipSpec = "spec",
        /// `status`
        pub status: VipStatus = "status",
    }
}

object! {
    /// Every `spec` field of a Vip: an UPDATE is checked when any of them changed.
    /// Lists keep `null` apart from `[]`, as Go's `reflect.DeepEqual` does.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct VipSpec {
        /// `namespace`
        pub namespace: String = "namespace",
        /// `subnet`
        pub subnet: String = "subnet",
        /// `type`
        pub vip_type: String = "type",
        /// `v4ip`
        pub v4ip: String = "v4ip",
        /// `v6ip`
        pub v6ip: String = "v6ip",
        /// `macAddress`
        pub mac_address: String = "macAddress",
        /// `selector`
        pub selector: Option<Vec<String>> = "selector",
        /// `attachSubnets`
        pub attach_subnets: Option<Vec<String>> = "attachSubnets",
    }
}

object! {
    /// `status` of a Vip: a MAC is set once it is assigned.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct VipStatus {
        /// `mac`
        pub mac: String = "mac",
    }
}

object! {
    /// `v1` Service: the apiserver's ClusterIPs (I9).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct Service: "" "v1" "Service" "services" namespaced {
        /// `metadata`
        pub metadata: Meta = "metadata",
        /// `spec`
        pub spec: ServiceSpec = "spec",
    }
}

object! {
    /// The `spec` fields of a Service that the checks read.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct ServiceSpec {
        /// `clusterIP`
        pub cluster_ip: String = "clusterIP",
        /// `clusterIPs`: one per family.
        pub cluster_ips: Vec<String> = "clusterIPs",
    }
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

object! {
    /// An OVN NAT rule (OvnDnatRule, OvnSnatRule, OvnFip) as a Vpc DELETE reads
    /// it: the VPC it is in, from `status.vpc` or else `spec.vpc`.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct VpcReferrer {
        /// `metadata`
        pub metadata: Meta = "metadata",
        /// `spec.vpc`
        pub spec: VpcField = "spec",
        /// `status.vpc`
        pub status: VpcField = "status",
    }
}

object! {
    /// A `{"vpc": …}` part of an object.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct VpcField {
        /// `vpc`
        pub vpc: String = "vpc",
    }
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

object! {
    /// `v1` ConfigMap: the NAT gateway's configuration in `kube-system`.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct ConfigMap: "" "v1" "ConfigMap" "configmaps" namespaced {
        /// `metadata`
        pub metadata: Meta = "metadata",
        /// `data`
        pub data: BTreeMap<String, String> = "data",
    }
}

object! {
    /// `kubeovn.io/v1` VpcNatGateway.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct VpcNatGateway: "kubeovn.io" "v1" "VpcNatGateway" "vpc-nat-gateways" {
        /// `metadata`
        pub metadata: Meta = "metadata",
        /// `spec`
        pub spec: VpcNatGatewaySpec = "spec",
    }
}

object! {
    /// The `spec` fields of a VpcNatGateway that the checks read.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct VpcNatGatewaySpec {
        /// The namespace of its StatefulSet.
        pub namespace: String = "namespace",
        /// `vpc`
        pub vpc: String = "vpc",
        /// `subnet`
        pub subnet: String = "subnet",
        /// `lanIp`
        pub lan_ip: String = "lanIp",
        /// `replicas`; 0 means 1.
        pub replicas: i32 = "replicas",
        /// `tolerations`
        pub tolerations: Vec<Toleration> = "tolerations",
        /// `qosPolicy`
        pub qos_policy: String = "qosPolicy",
        /// `bfd`
        pub bfd: Enabled = "bfd",
    }
}

object! {
    /// A `corev1.Toleration`: the fields the checks read.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct Toleration {
        /// `operator`
        pub operator: String = "operator",
        /// `effect`
        pub effect: String = "effect",
    }
}

object! {
    /// A `{"enabled": bool}` part of an object.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct Enabled {
        /// `enabled`
        pub enabled: bool = "enabled",
    }
}

object! {
    /// `kubeovn.io/v1` IptablesEIP.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct IptablesEip: "kubeovn.io" "v1" "IptablesEIP" "iptables-eips" {
        /// `metadata`
        pub metadata: Meta = "metadata",
        /// `spec`
        pub spec: IptablesEipSpec = "spec",
        /// `status`
        pub status: NatStatus = "status",
    }
}

object! {
    /// Every `spec` field of an IptablesEIP: an UPDATE is checked when any changed.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct IptablesEipSpec {
        /// `v4ip`
        pub v4ip: String = "v4ip",
        /// `v6ip`
        pub v6ip: String = "v6ip",
        /// `macAddress`
        pub mac_address: String = "macAddress",
        /// `natGwDp`: the VpcNatGateway it belongs to.
        pub nat_gw_dp: String = "natGwDp",
        /// `qosPolicy`
        pub qos_policy: String = "qosPolicy",
        /// `externalSubnet`
        pub external_subnet: String = "externalSubnet",
        /// `namespace`
        pub namespace: String = "namespace",
    }
}

object! {
    /// The `status` fields of the iptables NAT kinds that the checks read.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct NatStatus {
        /// `ready`
        pub ready: bool = "ready",
        /// `ip` (an EIP's assigned IPv4 address)
        pub ip: String = "ip",
        /// `nat`: the rule kinds using an EIP, `fip,snat,dnat`.
        pub nat: String = "nat",
        /// `redo`
        pub redo: String = "redo",
    }
}

object! {
    /// An iptables NAT rule of a VpcNatGateway (IptablesDnatRule,
    /// IptablesSnatRule or IptablesFIPRule), read through one type: every field
    /// of the three specs, each empty where its kind has none.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct IptablesRule {
        /// `metadata`
        pub metadata: Meta = "metadata",
        /// `spec`
        pub spec: IptablesRuleSpec = "spec",
    }
}

object! {
    /// The `spec` fields of the iptables NAT rules. The CRDs prune unknown
    /// fields, so comparing this whole spec compares the kind's own fields.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct IptablesRuleSpec {
        /// `eip`: the IptablesEIP the rule uses.
        pub eip: String = "eip",
        /// DNAT `externalPort`
        pub external_port: String = "externalPort",
        /// DNAT `protocol`
        pub protocol: String = "protocol",
        /// DNAT and FIP `internalIp`
        pub internal_ip: String = "internalIp",
        /// DNAT `internalPort`
        pub internal_port: String = "internalPort",
        /// DNAT `type`: `exclusive` (the default) or `share`.
        pub rule_type: String = "type",
        /// SNAT `internalCIDR`
        pub internal_cidr: String = "internalCIDR",
    }
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

object! {
    /// `kubeovn.io/v1` QoSPolicy: only its existence matters here.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct QosPolicy: "kubeovn.io" "v1" "QoSPolicy" "qos-policies" {
        /// `metadata`
        pub metadata: Meta = "metadata",
    }
}

object! {
    /// Any object, by name only: what a list read for its members' names keeps.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct Named {
        /// `metadata`
        pub metadata: Meta = "metadata",
    }
}

object! {
    /// `kubeovn.io/v1` OvnEip.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct OvnEip: "kubeovn.io" "v1" "OvnEip" "ovn-eips" {
        /// `metadata`
        pub metadata: Meta = "metadata",
        /// `spec`
        pub spec: OvnEipSpec = "spec",
        /// `status`
        pub status: Ready = "status",
    }
}

object! {
    /// Every `spec` field of an OvnEip.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct OvnEipSpec {
        /// `externalSubnet`
        pub external_subnet: String = "externalSubnet",
        /// `v4Ip`
        pub v4_ip: String = "v4Ip",
        /// `v6Ip`
        pub v6_ip: String = "v6Ip",
        /// `macAddress`
        pub mac_address: String = "macAddress",
        /// `type`
        pub eip_type: String = "type",
    }
}

object! {
    /// A `{"ready": bool}` status.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct Ready {
        /// `ready`
        pub ready: bool = "ready",
    }
}

object! {
    /// An OVN NAT rule (OvnDnatRule, OvnSnatRule or OvnFip) read through one
    /// type: every field of the three specs, each empty where its kind has none.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct OvnRule {
        /// `metadata`
        pub metadata: Meta = "metadata",
        /// `spec`
        pub spec: OvnRuleSpec = "spec",
        /// `status`
        pub status: Ready = "status",
    }
}

object! {
    /// The `spec` fields of the OVN NAT rules (the CRDs prune unknown fields).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct OvnRuleSpec {
        /// `ovnEip`
        pub ovn_eip: String = "ovnEip",
        /// `ipType`
        pub ip_type: String = "ipType",
        /// `ipName`
        pub ip_name: String = "ipName",
        /// DNAT `internalPort`
        pub internal_port: String = "internalPort",
        /// DNAT `externalPort`
        pub external_port: String = "externalPort",
        /// DNAT `protocol`
        pub protocol: String = "protocol",
        /// `vpc`
        pub vpc: String = "vpc",
        /// DNAT and FIP `v4Ip`
        pub v4_ip: String = "v4Ip",
        /// DNAT and FIP `v6Ip`
        pub v6_ip: String = "v6Ip",
        /// SNAT `vpcSubnet`
        pub vpc_subnet: String = "vpcSubnet",
        /// SNAT `v4IpCidr`
        pub v4_ip_cidr: String = "v4IpCidr",
        /// SNAT `v6IpCidr`
        pub v6_ip_cidr: String = "v6IpCidr",
        /// FIP `type`
        pub rule_type: String = "type",
    }
}
