//! The bounds of every lookup (docs/lookups.md): the fields each one reads
//! (one set of field masks per kind, so the policy-server keeps one watch
//! cache for it), the label selectors built from a request, and which names
//! may stay in the policy-server's cache of GETs.

use crate::k8s::kinds::{self, ApiResource};
use crate::k8s::names::is_label_value;
use std::collections::BTreeSet;

/// The fields of an IP CR the policy reads; the policy-server prunes the rest
/// of `spec` before the list crosses into the guest (metadata always comes).
pub const IP_FIELD_MASKS: [&str; 6] = [
    "spec.ipAddress",
    "spec.namespace",
    "spec.podName",
    "spec.subnet",
    "spec.v4IpAddress",
    "spec.v6IpAddress",
];

/// The fields of a Subnet that any check reads of *other* Subnets: its
/// CIDR, gateway, namespace binding and provider (pods, I5 and I17), its
/// VPC, VLAN and egress policy routing (overlap). One set for every Subnet list, so the
/// policy-server keeps a single reflector for them.
pub const SUBNET_FIELD_MASKS: [&str; 9] = [
    "spec.cidrBlock",
    "spec.default",
    "spec.externalEgressGateway",
    "spec.gateway",
    "spec.namespaces",
    "spec.policyRoutingTableID",
    "spec.provider",
    "spec.vlan",
    "spec.vpc",
];

/// The fields of a Subnet fetched by name: what I6, the Vip and IP checks
/// and an IPPool (I14, `excludeIps` too) read, and the record of the
/// addresses in use (I15). One set for every such lookup, so each subnet
/// name keeps a single watch cache.
pub const SUBNET_GET_FIELD_MASKS: [&str; 7] = [
    "spec.cidrBlock",
    "spec.excludeIps",
    "spec.gateway",
    "status.v4usingIPrange",
    "status.v4usingIPs",
    "status.v6usingIPrange",
    "status.v6usingIPs",
];

/// The fields of a namespace's Subnet that `getPodDefaultSubnet` reads to
/// pass it over (I5): its protocol and the free addresses its status
/// counts. Read by name, and only where a pod's address may land in more
/// than one of its namespace's subnets: a watch cache per such Subnet.
pub const SUBNET_AVAILABLE_FIELD_MASKS: [&str; 3] = [
    "spec.protocol",
    "status.v4availableIPs",
    "status.v6availableIPs",
];

/// Only `metadata` (which always comes whole): a mask that names no field
/// outside it drops `spec` and `status`. Every Namespace is listed so
/// (for its annotations), and every Subnet, for the names that a name taken
/// from a request is resolved against.
pub const METADATA_FIELD_MASKS: [&str; 1] = ["metadata"];

/// The fields of every IPPool an IPPool CREATE or UPDATE compares itself
/// with (I14), and of a subnet's pools (I19): one watch cache of all pools,
/// and one per Subnet where the IPPool CRD makes `spec.subnet` selectable
/// (kube-ovn-controller labels no pool with its subnet, and Kube-OVN's CRD
/// declares no selectable field: an operator may add it).
pub const IPPOOL_LIST_FIELD_MASKS: [&str; 3] = ["spec.ips", "spec.namespaces", "spec.subnet"];

/// The fields of the IPPool CRD read: whether a version declares
/// `spec.subnet` selectable.
pub const CRD_FIELD_MASKS: [&str; 2] = ["spec.versions.name", "spec.versions.selectableFields"];

/// The field of a NetworkAttachmentDefinition a pod's selection reads: its
/// CNI config (I17). Every NAD of every namespace is one watch cache.
pub const NAD_FIELD_MASKS: [&str; 1] = ["spec.config"];

/// The field of a Vip a pod naming it reads (I21): the namespace it is meant
/// for (its labels, in `metadata`, always come). Every Vip is one watch cache.
pub const VIP_FIELD_MASKS: [&str; 1] = ["spec.namespace"];

/// The fields kept of the NAT kinds read by their labels: the field the
/// labels mirror, and for IptablesDnatRule what its port check compares;
/// one set per kind, so that each keeps one watch cache.
pub(super) fn labelled_field_masks(kind: &ApiResource) -> &'static [&'static str] {
    if *kind == kinds::IPTABLES_EIP {
        &["spec.natGwDp"]
    } else if *kind == kinds::IPTABLES_DNAT_RULE {
        &["spec.eip", "spec.protocol", "spec.type"]
    } else if kind.kind.starts_with("Ovn") {
        &["spec.ovnEip"]
    } else {
        &["spec.eip"]
    }
}

/// The label kube-ovn-controller puts on every IP CR it writes, naming its subnet.
pub const SUBNET_LABEL: &str = "ovn.kubernetes.io/subnet";

/// The fields of a Vpc a Subnet CREATE reads, and the Subnets
/// kube-ovn-controller lists in its status (a Subnet named by a request is
/// looked for there first).
pub const VPC_FIELD_MASKS: [&str; 4] = [
    "spec.namespaces",
    "status.default",
    "status.standby",
    "status.subnets",
];

/// The fields of an OVN NAT rule a Vpc DELETE reads.
pub const VPC_REFERRER_FIELD_MASKS: [&str; 2] = ["spec.vpc", "status.vpc"];

/// Whether the objects of a kind are fetched by names fixed in the policy
/// (never taken from a request), which may stay in the policy-server's
/// cache of GETs.
pub(super) fn is_fixed_name(kind: &ApiResource) -> bool {
    *kind == kinds::SERVICE || *kind == kinds::CONFIG_MAP
}

/// Field masks as the SDK's requests carry them.
pub(super) fn masks(field_masks: Option<&[&str]>) -> Option<BTreeSet<String>> {
    field_masks.map(|m| m.iter().map(|s| s.to_string()).collect())
}

/// `k1=v1,k2=v2`, or `None` when a value is no valid label value: no object
/// can carry it, so nothing is asked.
pub(super) fn label_selector(labels: &[(&str, &str)]) -> Option<String> {
    labels
        .iter()
        .map(|(key, value)| is_label_value(value).then(|| format!("{key}={value}")))
        .collect::<Option<Vec<_>>>()
        .map(|terms| terms.join(","))
}
