//! Every kind the policy reads or the tests load, declared once, as a value
//! (kube-rs' `ApiResource` is the model): lookups name a kind by its const;
//! testhost serves [`ALL`]; the stand-in API server and `validate-deploy`
//! read `kinds.json`, which a test keeps equal to [`ALL`]; and a test checks
//! that `metadata.yml` and `deploy/rbac.yaml` grant exactly the lookups
//! written here.
//!
//! Adding a kind: its const here and in [`ALL`], its object type in
//! [`crate::k8s::objects`], its lookup in [`crate::k8s::cluster`]; then
//! `make kinds.json` and the grants the test asks for.

use crate::upstream::go_strconv::go_quote;

/// A Kubernetes kind as the API serves it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ApiResource {
    /// `kubeovn.io`; empty for the core group.
    pub group: &'static str,
    /// `kubeovn.io/v1`, or `v1` for the core group.
    pub api_version: &'static str,
    /// `IP`
    pub kind: &'static str,
    /// `ips`: the resource in URLs and RBAC rules.
    pub plural: &'static str,
    /// Namespaced (Service, ConfigMap, NetworkAttachmentDefinition) or
    /// cluster-scoped.
    pub namespaced: bool,
    /// The key a conformance case lists this kind's objects under.
    pub case_key: &'static str,
    /// What the policy asks of the API server for it: `get_resource` (a GET)
    /// and `list_resources_all` (a LIST, then a WATCH for its cache).
    pub lookups: &'static [Lookup],
    /// The names the policy's lookups of the kind are confined to, the only
    /// ones `deploy/rbac.yaml` grants: with their namespace for a namespaced
    /// kind, `*` (granted cluster-wide by name) for a cluster-scoped one.
    pub only: Option<(&'static str, &'static [&'static str])>,
}

/// A host capability the policy calls for a kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Lookup {
    /// `kubernetes/get_resource`
    Get,
    /// `kubernetes/list_resources_all`
    List,
}

impl ApiResource {
    /// The `kind` of its list, `IPList`.
    pub fn is_list_kind(&self, kind: &str) -> bool {
        kind.strip_suffix("List") == Some(self.kind)
    }

    /// The text upstream's informer cache gives for a missing object,
    /// `<Kind>.<group> "<name>" not found` (`<Kind> "<name>" not found` for
    /// the core group); the policy builds it itself, so it is the same
    /// whatever the host's wording.
    pub fn not_found(&self, name: &str) -> String {
        if self.group.is_empty() {
            format!("{} {} not found", self.kind, go_quote(name))
        } else {
            format!("{}.{} {} not found", self.kind, self.group, go_quote(name))
        }
    }
}

/// A cluster-scoped `kubeovn.io/v1` kind.
const fn kube_ovn(
    kind: &'static str,
    plural: &'static str,
    case_key: &'static str,
    lookups: &'static [Lookup],
) -> ApiResource {
    ApiResource {
        group: "kubeovn.io",
        api_version: "kubeovn.io/v1",
        kind,
        plural,
        namespaced: false,
        case_key,
        lookups,
        only: None,
    }
}

/// A core `v1` kind.
const fn core(
    kind: &'static str,
    plural: &'static str,
    lookups: &'static [Lookup],
    only: Option<(&'static str, &'static [&'static str])>,
) -> ApiResource {
    ApiResource {
        group: "",
        api_version: "v1",
        kind,
        plural,
        namespaced: only.is_some(),
        case_key: plural,
        lookups,
        only,
    }
}

use Lookup::{Get, List};

/// One address allocation (one pod NIC, node or VIP): a static IP's
/// conflicts; a pod's own, by name (I15).
pub const IP: ApiResource = kube_ovn("IP", "ips", "ips", &[Get, List]);
/// A Subnet: a pod's CIDR, and every other Subnet for overlaps.
pub const SUBNET: ApiResource = kube_ovn("Subnet", "subnets", "subnets", &[List]);
/// A Vpc: a Subnet's VPC, a NAT gateway's.
pub const VPC: ApiResource = kube_ovn("Vpc", "vpcs", "vpcs", &[Get, List]);
/// An IPPool named by a pod's `ip_pool`; every one, for an IPPool's overlaps (I14).
pub const IPPOOL: ApiResource = kube_ovn("IPPool", "ippools", "ippools", &[List]);
/// A Vip: checked at admission; every one, for the Vip a pod names (I21).
pub const VIP: ApiResource = kube_ovn("Vip", "vips", "vips", &[List]);
/// The EIP of a VpcNatGateway's iptables NAT rules.
pub const IPTABLES_EIP: ApiResource =
    kube_ovn("IptablesEIP", "iptables-eips", "iptablesEips", &[Get, List]);
/// An iptables DNAT rule.
pub const IPTABLES_DNAT_RULE: ApiResource = kube_ovn(
    "IptablesDnatRule",
    "iptables-dnat-rules",
    "iptablesDnatRules",
    &[List],
);
/// An iptables SNAT rule.
pub const IPTABLES_SNAT_RULE: ApiResource = kube_ovn(
    "IptablesSnatRule",
    "iptables-snat-rules",
    "iptablesSnatRules",
    &[List],
);
/// An iptables floating IP.
pub const IPTABLES_FIP_RULE: ApiResource = kube_ovn(
    "IptablesFIPRule",
    "iptables-fip-rules",
    "iptablesFipRules",
    &[List],
);
/// The EIP of the OVN NAT rules.
pub const OVN_EIP: ApiResource = kube_ovn("OvnEip", "ovn-eips", "ovnEips", &[Get]);
/// An OVN floating IP.
pub const OVN_FIP: ApiResource = kube_ovn("OvnFip", "ovn-fips", "ovnFips", &[List]);
/// An OVN SNAT rule.
pub const OVN_SNAT_RULE: ApiResource =
    kube_ovn("OvnSnatRule", "ovn-snat-rules", "ovnSnatRules", &[List]);
/// An OVN DNAT rule.
pub const OVN_DNAT_RULE: ApiResource =
    kube_ovn("OvnDnatRule", "ovn-dnat-rules", "ovnDnatRules", &[List]);
/// A VpcNatGateway: checked at admission, never looked up.
pub const VPC_NAT_GATEWAY: ApiResource =
    kube_ovn("VpcNatGateway", "vpc-nat-gateways", "vpcNatGateways", &[]);
/// A QoSPolicy named by a NAT gateway or EIP.
pub const QOS_POLICY: ApiResource = kube_ovn("QoSPolicy", "qos-policies", "qosPolicies", &[Get]);
/// A Namespace: its `logical_switch` annotation.
pub const NAMESPACE: ApiResource = core("Namespace", "namespaces", &[Get], None);
/// Service `default/kubernetes`: the apiserver's ClusterIPs (I9).
pub const SERVICE: ApiResource = core(
    "Service",
    "services",
    &[Get],
    Some(("default", &["kubernetes"])),
);
/// Kube-OVN's NAT gateway configuration in `kube-system`.
pub const CONFIG_MAP: ApiResource = core(
    "ConfigMap",
    "configmaps",
    &[Get],
    Some((
        "kube-system",
        &["ovn-vpc-nat-config", "ovn-vpc-nat-gw-config"],
    )),
);

/// A Multus NetworkAttachmentDefinition named by a pod's network selections
/// (I17): every one, in every namespace, read from one watch cache, so a
/// name in a request never narrows a lookup.
pub const NETWORK_ATTACHMENT_DEFINITION: ApiResource = ApiResource {
    group: "k8s.cni.cncf.io",
    api_version: "k8s.cni.cncf.io/v1",
    kind: "NetworkAttachmentDefinition",
    plural: "network-attachment-definitions",
    namespaced: true,
    case_key: "networkattachmentdefinitions",
    lookups: &[List],
    only: None,
};

/// The name of Kube-OVN's IPPool CRD.
pub const IPPOOL_CRD_NAME: &str = "ippools.kubeovn.io";

/// The IPPool CRD, read by its name alone: whether it declares `spec.subnet`
/// a selectable field, so that a subnet's IPPools can be listed by it (I19).
pub const CUSTOM_RESOURCE_DEFINITION: ApiResource = ApiResource {
    group: "apiextensions.k8s.io",
    api_version: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    plural: "customresourcedefinitions",
    namespaced: false,
    case_key: "customresourcedefinitions",
    lookups: &[List],
    only: Some(("*", &[IPPOOL_CRD_NAME])),
};

/// Every kind, in the order conformance files list them.
pub const ALL: [ApiResource; 20] = [
    IP,
    SUBNET,
    VPC,
    IPPOOL,
    VIP,
    IPTABLES_EIP,
    IPTABLES_DNAT_RULE,
    IPTABLES_SNAT_RULE,
    IPTABLES_FIP_RULE,
    OVN_EIP,
    OVN_FIP,
    OVN_SNAT_RULE,
    OVN_DNAT_RULE,
    VPC_NAT_GATEWAY,
    QOS_POLICY,
    NAMESPACE,
    SERVICE,
    CONFIG_MAP,
    NETWORK_ATTACHMENT_DEFINITION,
    CUSTOM_RESOURCE_DEFINITION,
];

/// The kind of that `apiVersion` and `kind`.
pub fn find(api_version: &str, kind: &str) -> Option<&'static ApiResource> {
    ALL.iter()
        .find(|k| k.api_version == api_version && k.kind == kind)
}

/// [`ALL`] as `kinds.json` holds it, for the tools outside Rust.
pub fn to_json() -> String {
    let kinds: Vec<serde_json::Value> = ALL
        .iter()
        .map(|k| {
            serde_json::json!({
                "apiVersion": k.api_version,
                "kind": k.kind,
                "plural": k.plural,
                "namespaced": k.namespaced,
                "caseKey": k.case_key,
                "lookups": k.lookups.iter().map(|l| match l {
                    Lookup::Get => "get",
                    Lookup::List => "list",
                }).collect::<Vec<_>>(),
                "namespace": k.only.map(|(ns, _)| ns),
                "names": k.only.map(|(_, names)| names),
            })
        })
        .collect();
    let mut text = serde_json::to_string_pretty(&kinds).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_json_is_the_table() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/kinds.json");
        if std::env::var_os("UPDATE_KINDS_JSON").is_some() {
            std::fs::write(path, to_json()).expect("kinds.json");
        }
        let written = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            written == to_json(),
            "kinds.json is not src/k8s/kinds.rs's ALL: run `make kinds.json`"
        );
    }

    #[test]
    fn each_kind_once() {
        for (i, a) in ALL.iter().enumerate() {
            for b in &ALL[i + 1..] {
                assert_ne!((a.api_version, a.kind), (b.api_version, b.kind));
                assert_ne!(a.case_key, b.case_key);
            }
        }
        assert_eq!(find("kubeovn.io/v1", "IP"), Some(&IP));
        assert_eq!(find("v1", "IP"), None);
        assert!(IP.is_list_kind("IPList") && !IP.is_list_kind("IP"));
    }

    #[test]
    fn not_found_names_the_group() {
        assert_eq!(SUBNET.not_found("a"), "Subnet.kubeovn.io \"a\" not found");
        assert_eq!(NAMESPACE.not_found("a"), "Namespace \"a\" not found");
    }
}
