//! `kubeovn.io/v1` Subnet ([`crate::k8s::kinds::SUBNET`]).

use super::Meta;
use crate::k8s::decode::Raw;
use serde::{Deserialize, Deserializer};

#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Subnet {
    pub metadata: Meta,
    pub spec: SubnetSpec,
    pub status: SubnetStatus,
    /// I15: the status's record of the addresses in use, as the by-name
    /// lookup reads it ([`SubnetByName`]); empty in a request's object.
    #[serde(skip)]
    pub in_use: InUse,
}

/// A Subnet as its by-name lookup answers it: its status is read only for
/// the record of what is in use (I15), leniently, so that nothing in the
/// status can fail the lookup of the spec that other checks read.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct SubnetByName {
    metadata: Meta,
    spec: SubnetSpec,
    status: InUse,
}

impl From<SubnetByName> for Subnet {
    fn from(answer: SubnetByName) -> Self {
        Subnet {
            metadata: answer.metadata,
            spec: answer.spec,
            status: SubnetStatus::default(),
            in_use: answer.status,
        }
    }
}

/// What `getPodDefaultSubnet` reads of a namespace's subnet to pass it
/// over (I5; `pkg/controller/pod.go:2033-2050` at 1533681d7a6b): its
/// protocol and its status's free addresses, read leniently.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct SubnetAvailability {
    pub spec: AvailabilitySpec,
    pub status: AvailabilityStatus,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct AvailabilitySpec {
    pub protocol: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct AvailabilityStatus {
    #[serde(rename = "v4availableIPs")]
    pub v4_available: BigInt,
    #[serde(rename = "v6availableIPs")]
    pub v6_available: BigInt,
}

impl SubnetAvailability {
    /// Whether the status shows no free address of a family the subnet has:
    /// `Dual` either, `IPv4` and `IPv6` their own; any other protocol is
    /// never passed over.
    pub fn shows_none_free(&self) -> bool {
        let (v4, v6) = (&self.status.v4_available, &self.status.v6_available);
        match self.spec.protocol.as_str() {
            "Dual" => v6.is_zero() || v4.is_zero(),
            "IPv4" => v4.is_zero(),
            "IPv6" => v6.is_zero(),
            _ => false,
        }
    }
}

/// I15: what a Subnet's status records in use, per family, as
/// kube-ovn-controller writes it (`calcSubnetStatusIP`,
/// `pkg/controller/subnet_status.go` at 1533681d7a6b).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InUse {
    /// `status.v4usingIPs`, `status.v4usingIPrange`
    pub v4: Using,
    /// `status.v6usingIPs`, `status.v6usingIPrange`
    pub v6: Using,
}

/// One family's record: how many addresses are in use, and which.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Using {
    /// `vNusingIPs` as the controller writes it (a plain integer, maybe
    /// quoted); `None` for anything else.
    pub count: Option<u128>,
    /// `vNusingIPrange`: `a-b` ranges or single addresses, comma-separated;
    /// `None` when it is not a string.
    pub range: Option<String>,
}

impl InUse {
    /// Reads a status object's text; whatever does not have the type the
    /// controller writes is absent, never an error.
    pub fn read(status: &str) -> Self {
        #[derive(Default, Deserialize)]
        #[serde(default)]
        struct Fields<'a> {
            #[serde(rename = "v4usingIPs", borrow)]
            v4_count: Option<Raw<'a>>,
            #[serde(rename = "v4usingIPrange", borrow)]
            v4_range: Option<Raw<'a>>,
            #[serde(rename = "v6usingIPs", borrow)]
            v6_count: Option<Raw<'a>>,
            #[serde(rename = "v6usingIPrange", borrow)]
            v6_range: Option<Raw<'a>>,
        }
        let Ok(fields) = serde_json::from_str::<Fields<'_>>(status) else {
            return InUse::default();
        };
        let using = |count: Option<Raw<'_>>, range: Option<Raw<'_>>| Using {
            count: count.and_then(|raw| plain_count(raw.get())),
            range: range.and_then(|raw| serde_json::from_str::<String>(raw.get()).ok()),
        };
        InUse {
            v4: using(fields.v4_count, fields.v4_range),
            v6: using(fields.v6_count, fields.v6_range),
        }
    }
}

impl<'de> Deserialize<'de> for InUse {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = <Raw<'de>>::deserialize(d)?;
        Ok(InUse::read(raw.get()))
    }
}

/// A count as `BigInt.MarshalJSON` writes it, digits only (quoted too, which
/// `UnmarshalJSON` accepts); `None` for any other form.
fn plain_count(json: &str) -> Option<u128> {
    let digits = json
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or(json);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The `spec` fields the checks read.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct SubnetSpec {
    /// `a/b` or `v4/x,v6/y`; empty for a MAC-only underlay subnet.
    pub cidr_block: String,
    /// `a` or `v4,v6`.
    pub gateway: String,
    /// Namespaces bound to this subnet.
    pub namespaces: Vec<String>,
    /// The cluster's default subnet.
    pub default: bool,
    /// `ovn`, or the provider of a Multus attachment (`<nad>.<ns>.ovn`,
    /// `<nad>.<ns>` for Kube-OVN IPAM only): how a pod's attachment finds
    /// the subnet when it names none (I17).
    pub provider: String,
    /// The VPC; empty until kube-ovn-controller fills in `ovn-cluster`.
    pub vpc: String,
    /// The underlay VLAN, if any.
    pub vlan: String,
    /// `IPv4`, `IPv6`, `Dual`, `Mac` or empty.
    pub protocol: String,
    /// Reserved addresses: `ip` or `a..b`.
    pub exclude_ips: Vec<String>,
    /// CIDRs allowed to reach a private subnet.
    pub allow_subnets: Vec<String>,
    /// `distributed`, `centralized` or empty.
    pub gateway_type: String,
    /// Interface MTU; 0 when unset.
    pub mtu: u32,
    pub nat_outgoing: bool,
    /// `ip` or `v4,v6` of an external egress gateway.
    pub external_egress_gateway: String,
    /// The policy-routing table of the external egress gateway.
    #[serde(rename = "policyRoutingTableID")]
    pub policy_routing_table_id: u32,
    /// Virtual IPs that must lie in the CIDR.
    pub vips: Vec<String>,
    pub logical_gateway: bool,
    /// Underlay-to-overlay interconnection.
    pub u2o_interconnection: bool,
    #[serde(rename = "u2oInterconnectionIP")]
    pub u2o_interconnection_ip: String,
    pub u2o_features: U2oFeatures,
    pub nat_outgoing_policy_rules: Vec<NatOutgoingPolicyRule>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct U2oFeatures {
    /// Route only overlay traffic through the u2o port.
    pub overlay_only_routing: bool,
}

/// Only a rule's match is validated.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct NatOutgoingPolicyRule {
    #[serde(rename = "match")]
    pub matches: NatOutgoingPolicyMatch,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct NatOutgoingPolicyMatch {
    /// Comma-separated IPs or CIDRs.
    #[serde(rename = "srcIPs")]
    pub src_ips: String,
    /// Comma-separated IPs or CIDRs.
    #[serde(rename = "dstIPs")]
    pub dst_ips: String,
}

/// The counters a Subnet UPDATE or DELETE reads.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct SubnetStatus {
    #[serde(rename = "v4usingIPs")]
    pub v4_using_ips: BigInt,
    #[serde(rename = "v6usingIPs")]
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
    /// Read from the value's text, as Go's `BigInt.UnmarshalJSON` reads it.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = <&serde_json::value::RawValue>::deserialize(d)?.get();
        BigInt::parse(raw)
            .ok_or_else(|| serde::de::Error::custom(format!("invalid big integer: {raw}")))
    }
}
