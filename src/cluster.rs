//! Every lookup the policy makes goes through here.
//!
//! Checks see the cluster through the [`Cluster`] trait: the policy-server's
//! host capabilities in production ([`HostCluster`]), an in-memory fake in
//! unit tests. Each lookup is made at most once per evaluation and only when
//! a check needs it; results are memoised for the rest of the evaluation.
//! Kube-OVN's kinds are cluster-scoped, so they are listed with
//! `list_all_resources` (served from the policy-server's watch cache) or
//! fetched with `get_resource` and no namespace.

use crate::denial::Denial;
use crate::net::go_quote;
use crate::resources::{
    Ip, IpPool, Namespace, OvnDnatRule, OvnFip, OvnSnatRule, Service, Subnet, Vpc, VpcReferrer,
};
use kubewarden_policy_sdk::host_capabilities::kubernetes::{
    GetResourceRequest, ListAllResourcesRequest, get_resource, list_all_resources,
};
use std::cell::OnceCell;
use std::collections::BTreeSet;

/// A lookup that failed: what could not be read, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LookupError(pub String);

impl From<LookupError> for Denial {
    fn from(e: LookupError) -> Self {
        Denial::bad_request(e.0)
    }
}

/// What the checks may ask of the cluster.
pub trait Cluster {
    /// Every `kubeovn.io/v1` IP CR.
    fn ips(&self) -> Result<&[Ip], LookupError>;
    /// Every `kubeovn.io/v1` Subnet.
    fn subnets(&self) -> Result<&[Subnet], LookupError>;
    /// The Namespace of that name, `None` when it does not exist.
    fn namespace(&self, name: &str) -> Result<Option<&Namespace>, LookupError>;
    /// Whether the `kubeovn.io/v1` IPPool of that name exists.
    fn ippool_exists(&self, name: &str) -> Result<bool, LookupError>;
    /// The `kubeovn.io/v1` Subnet of that name (its CIDR), `None` when it does not exist.
    fn subnet(&self, name: &str) -> Result<Option<Subnet>, LookupError>;
    /// Every `kubeovn.io/v1` Vpc.
    fn vpcs(&self) -> Result<&[Vpc], LookupError>;
    /// Service `default/kubernetes`, `None` when it does not exist (I9).
    fn kubernetes_service(&self) -> Result<Option<Service>, LookupError>;
    /// Every OVN NAT rule of one kind, with the VPC it is in.
    fn vpc_referrers(&self, kind: OvnNatKind) -> Result<Vec<VpcReferrer>, LookupError>;
}

/// The OVN NAT kinds that keep a Vpc from being deleted, in upstream's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OvnNatKind {
    /// `OvnDnatRule`
    DnatRule,
    /// `OvnSnatRule`
    SnatRule,
    /// `OvnFip`
    Fip,
}

impl OvnNatKind {
    /// All of them, in the order a Vpc DELETE checks them.
    pub const ALL: [OvnNatKind; 3] = [Self::DnatRule, Self::SnatRule, Self::Fip];

    /// The Kubernetes kind.
    pub fn kind(self) -> &'static str {
        match self {
            Self::DnatRule => "OvnDnatRule",
            Self::SnatRule => "OvnSnatRule",
            Self::Fip => "OvnFip",
        }
    }
}

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
/// CIDR, gateway and namespace binding (pods), its VPC, VLAN and egress
/// policy routing (overlap). One set for every Subnet list, so the
/// policy-server keeps a single reflector for them.
pub const SUBNET_FIELD_MASKS: [&str; 8] = [
    "spec.cidrBlock",
    "spec.default",
    "spec.externalEgressGateway",
    "spec.gateway",
    "spec.namespaces",
    "spec.policyRoutingTableID",
    "spec.vlan",
    "spec.vpc",
];

/// The fields of a Vpc a Subnet CREATE reads.
pub const VPC_FIELD_MASKS: [&str; 3] = ["spec.namespaces", "status.default", "status.standby"];

/// The fields of an OVN NAT rule a Vpc DELETE reads.
pub const VPC_REFERRER_FIELD_MASKS: [&str; 2] = ["spec.vpc", "status.vpc"];

/// The cluster as the policy-server's Kubernetes host capabilities show it.
#[derive(Default)]
pub struct HostCluster {
    ips: OnceCell<Result<Vec<Ip>, LookupError>>,
    subnets: OnceCell<Result<Vec<Subnet>, LookupError>>,
    vpcs: OnceCell<Result<Vec<Vpc>, LookupError>>,
    namespace: OnceCell<Result<Option<Namespace>, LookupError>>,
}

impl HostCluster {
    /// A view that has looked nothing up yet.
    pub fn new() -> Self {
        Self::default()
    }
}

fn list_all<T>(field_masks: Option<&[&str]>) -> Result<Vec<T>, LookupError>
where
    T: k8s_openapi::ListableResource + serde::de::DeserializeOwned + Clone,
{
    let kind = T::KIND;
    let request = ListAllResourcesRequest {
        api_version: T::API_VERSION.to_string(),
        kind: kind.to_string(),
        label_selector: None,
        field_selector: None,
        field_masks: field_masks.map(|m| m.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>()),
    };
    list_all_resources::<T>(&request)
        .map(|list| list.items)
        .map_err(|e| LookupError(format!("cannot list {} {}: {}", T::API_VERSION, kind, e)))
}

/// Gets an object (`namespace` is `None` for a cluster-scoped kind);
/// `Ok(None)` when it does not exist. A name that is not a valid object name
/// cannot exist, so it is not asked for.
fn get_object<T>(
    name: &str,
    namespace: Option<&str>,
    field_masks: Option<&[&str]>,
) -> Result<Option<T>, LookupError>
where
    T: k8s_openapi::Resource + serde::de::DeserializeOwned + Clone,
{
    let kind = T::KIND;
    if !is_dns1123_subdomain(name) {
        return Ok(None);
    }
    let request = GetResourceRequest {
        api_version: T::API_VERSION.to_string(),
        kind: kind.to_string(),
        name: name.to_string(),
        namespace: namespace.map(str::to_string),
        disable_cache: false,
        field_masks: field_masks.map(|m| m.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>()),
    };
    match get_resource::<T>(&request) {
        Ok(object) => Ok(Some(object)),
        Err(e) => {
            let text = e.to_string();
            if is_not_found(&text) {
                Ok(None)
            } else {
                let shown = match namespace {
                    Some(ns) => format!("{ns}/{name}"),
                    None => name.to_string(),
                };
                Err(LookupError(format!(
                    "cannot get {} {} {:?}: {}",
                    T::API_VERSION,
                    kind,
                    shown,
                    text
                )))
            }
        }
    }
}

/// The text upstream's informer cache gives for a missing object,
/// `<Kind>.<group> "<name>" not found` (`<Kind> "<name>" not found` for the
/// core group); the policy builds it itself, so it is the same whatever the
/// host's wording.
pub fn not_found<T: k8s_openapi::Resource>(name: &str) -> String {
    if T::GROUP.is_empty() {
        format!("{} {} not found", T::KIND, go_quote(name))
    } else {
        format!("{}.{} {} not found", T::KIND, T::GROUP, go_quote(name))
    }
}

/// The policy-server passes the API server's error text through: a missing
/// object reads `… "name" not found` (reason NotFound, code 404).
fn is_not_found(text: &str) -> bool {
    text.contains("not found") || text.contains("NotFound")
}

/// A Kubernetes object name (DNS-1123 subdomain): at most 253 characters of
/// lower-case alphanumerics, `-` and `.`, starting and ending alphanumeric.
pub fn is_dns1123_subdomain(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= 253
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-' || *c == b'.')
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
}

impl Cluster for HostCluster {
    fn ips(&self) -> Result<&[Ip], LookupError> {
        self.ips
            .get_or_init(|| list_all::<Ip>(Some(&IP_FIELD_MASKS)))
            .as_deref()
            .map_err(Clone::clone)
    }

    fn subnets(&self) -> Result<&[Subnet], LookupError> {
        self.subnets
            .get_or_init(|| list_all::<Subnet>(Some(&SUBNET_FIELD_MASKS)))
            .as_deref()
            .map_err(Clone::clone)
    }

    fn namespace(&self, name: &str) -> Result<Option<&Namespace>, LookupError> {
        // An evaluation concerns one namespace (the request's), so one slot is enough.
        self.namespace
            .get_or_init(|| get_object::<Namespace>(name, None, None))
            .as_ref()
            .map(Option::as_ref)
            .map_err(Clone::clone)
    }

    fn ippool_exists(&self, name: &str) -> Result<bool, LookupError> {
        get_object::<IpPool>(name, None, None).map(|pool| pool.is_some())
    }

    fn subnet(&self, name: &str) -> Result<Option<Subnet>, LookupError> {
        get_object::<Subnet>(name, None, Some(&["spec.cidrBlock"]))
    }

    fn vpcs(&self) -> Result<&[Vpc], LookupError> {
        self.vpcs
            .get_or_init(|| list_all::<Vpc>(Some(&VPC_FIELD_MASKS)))
            .as_deref()
            .map_err(Clone::clone)
    }

    fn kubernetes_service(&self) -> Result<Option<Service>, LookupError> {
        get_object::<Service>(
            "kubernetes",
            Some("default"),
            Some(&["spec.clusterIP", "spec.clusterIPs"]),
        )
    }

    fn vpc_referrers(&self, kind: OvnNatKind) -> Result<Vec<VpcReferrer>, LookupError> {
        let masks = Some(&VPC_REFERRER_FIELD_MASKS[..]);
        Ok(match kind {
            OvnNatKind::DnatRule => list_all::<OvnDnatRule>(masks)?
                .into_iter()
                .map(|r| r.0)
                .collect(),
            OvnNatKind::SnatRule => list_all::<OvnSnatRule>(masks)?
                .into_iter()
                .map(|r| r.0)
                .collect(),
            OvnNatKind::Fip => list_all::<OvnFip>(masks)?
                .into_iter()
                .map(|r| r.0)
                .collect(),
        })
    }
}

/// An in-memory cluster for tests of the checks.
#[cfg(test)]
#[derive(Default)]
pub struct FakeCluster {
    /// IP CRs.
    pub ips: Vec<Ip>,
    /// Subnets.
    pub subnets: Vec<Subnet>,
    /// Namespaces.
    pub namespaces: Vec<Namespace>,
    /// IPPool names.
    pub ippools: Vec<String>,
    /// Vpcs.
    pub vpcs: Vec<Vpc>,
    /// Service `default/kubernetes`.
    pub kubernetes_service: Option<Service>,
    /// OVN NAT rules by kind.
    pub vpc_referrers: Vec<(OvnNatKind, VpcReferrer)>,
    /// When set, every lookup fails with this text.
    pub fail: Option<String>,
}

#[cfg(test)]
impl Cluster for FakeCluster {
    fn ips(&self) -> Result<&[Ip], LookupError> {
        self.fail
            .clone()
            .map_or(Ok(&self.ips), |e| Err(LookupError(e)))
    }
    fn subnets(&self) -> Result<&[Subnet], LookupError> {
        self.fail
            .clone()
            .map_or(Ok(&self.subnets), |e| Err(LookupError(e)))
    }
    fn namespace(&self, name: &str) -> Result<Option<&Namespace>, LookupError> {
        self.fail.clone().map_or(
            Ok(self.namespaces.iter().find(|n| n.metadata.name == name)),
            |e| Err(LookupError(e)),
        )
    }
    fn ippool_exists(&self, name: &str) -> Result<bool, LookupError> {
        self.fail
            .clone()
            .map_or(Ok(self.ippools.iter().any(|p| p == name)), |e| {
                Err(LookupError(e))
            })
    }
    fn subnet(&self, name: &str) -> Result<Option<Subnet>, LookupError> {
        self.subnets()
            .map(|all| all.iter().find(|s| s.metadata.name == name).cloned())
    }
    fn vpcs(&self) -> Result<&[Vpc], LookupError> {
        self.fail
            .clone()
            .map_or(Ok(&self.vpcs), |e| Err(LookupError(e)))
    }
    fn kubernetes_service(&self) -> Result<Option<Service>, LookupError> {
        self.fail
            .clone()
            .map_or(Ok(self.kubernetes_service.clone()), |e| Err(LookupError(e)))
    }
    fn vpc_referrers(&self, kind: OvnNatKind) -> Result<Vec<VpcReferrer>, LookupError> {
        self.fail.clone().map_or(
            Ok(self
                .vpc_referrers
                .iter()
                .filter(|(k, _)| *k == kind)
                .map(|(_, r)| r.clone())
                .collect()),
            |e| Err(LookupError(e)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_names() {
        for ok in ["pool-a", "a", "a.b-c", "0abc"] {
            assert!(is_dns1123_subdomain(ok), "{ok}");
        }
        for bad in ["", "Pool", "a;b", "-a", "a-", "a b", &"a".repeat(254)] {
            assert!(!is_dns1123_subdomain(bad), "{bad}");
        }
    }
}
