//! What the checks may ask of the cluster: the [`Cluster`] trait, the
//! [`LookupError`] a lookup fails with, and the OVN NAT kinds a Vpc DELETE
//! looks for.

use crate::k8s::kinds::{self, ApiResource};
use crate::k8s::objects::{
    ConfigMap, Ip, IpPool, IptablesEip, IptablesRule, Namespace, NetworkAttachmentDefinition,
    PodVip, Service, Subnet, SubnetAvailability, Vpc, VpcReferrer,
};
use std::net::IpAddr;
use std::rc::Rc;

/// A lookup that failed: what could not be read, and why. It reads
/// `cannot list kubeovn.io/v1 IP: <why>` or
/// `cannot get v1 Namespace "default": <why>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LookupError {
    /// `list kubeovn.io/v1 IP`, `get v1 Namespace "default"`; `None` for a
    /// failure that says all there is to say (the test fake's).
    pub what: Option<String>,
    /// Why it failed.
    pub why: String,
}

impl LookupError {
    /// A list of a kind failed.
    pub fn list(kind: &ApiResource, why: impl Into<String>) -> Self {
        LookupError {
            what: Some(format!("list {} {}", kind.api_version, kind.kind)),
            why: why.into(),
        }
    }

    /// The lookup of one object failed (`namespace` is `None` for a
    /// cluster-scoped kind).
    pub fn get(
        kind: &ApiResource,
        name: &str,
        namespace: Option<&str>,
        why: impl Into<String>,
    ) -> Self {
        let shown = match namespace {
            Some(ns) => format!("{ns}/{name}"),
            None => name.to_string(),
        };
        LookupError {
            what: Some(format!("get {} {} {shown:?}", kind.api_version, kind.kind)),
            why: why.into(),
        }
    }

    /// A lookup that failed with this text and nothing more.
    pub fn failed(why: impl Into<String>) -> Self {
        LookupError {
            what: None,
            why: why.into(),
        }
    }
}

impl std::fmt::Display for LookupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.what {
            Some(what) => write!(f, "cannot {what}: {}", self.why),
            None => f.write_str(&self.why),
        }
    }
}

/// The addresses a request claims, sorted and without repeats, built once
/// per evaluation and shared: a lookup that keeps what it found for them
/// knows them again by identity, not by comparing every address
/// (docs/lookups.md: no work of NICs × addresses).
#[derive(Clone, Debug)]
pub struct AddressSet(Rc<[IpAddr]>);

impl AddressSet {
    /// The set of these addresses.
    pub fn new(mut addresses: Vec<IpAddr>) -> Self {
        addresses.sort_unstable();
        addresses.dedup();
        AddressSet(addresses.into())
    }

    /// The addresses, sorted.
    pub fn as_slice(&self) -> &[IpAddr] {
        &self.0
    }

    /// Whether `other` is this very set (a clone of it), not merely equal.
    pub fn is(&self, other: &AddressSet) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

/// The answer of a lookup.
pub(super) type Lookup<T> = Result<T, LookupError>;

/// What the checks may ask of the cluster.
pub trait Cluster {
    /// The `kubeovn.io/v1` IP CRs whose `spec.subnet` is `subnet` and that
    /// hold one of `addresses` (I1, by value), in no particular order. Only
    /// those are decoded whole: in a subnet of 10 000 pods, a request for
    /// one address keeps one object. Not memoised: callers keep what they need.
    fn ips_holding(&self, subnet: &str, addresses: &AddressSet) -> Result<Vec<Ip>, LookupError>;
    /// Every `kubeovn.io/v1` Subnet.
    fn subnets(&self) -> Result<&[Subnet], LookupError>;
    /// The Namespace of that name, `None` when it does not exist.
    fn namespace(&self, name: &str) -> Result<Option<Namespace>, LookupError>;
    /// Whether the `kubeovn.io/v1` IPPool of that name exists.
    fn ippool_exists(&self, name: &str) -> Result<bool, LookupError> {
        self.ippool(name).map(|pool| pool.is_some())
    }
    /// The `kubeovn.io/v1` IPPool of that name (its subnet, addresses and
    /// namespaces), `None` when it does not exist.
    fn ippool(&self, name: &str) -> Result<Option<IpPool>, LookupError> {
        self.ippools()
            .map(|all| all.iter().find(|p| p.metadata.name == name).cloned())
    }
    /// Every `kubeovn.io/v1` IPPool, its subnet and addresses (I14).
    fn ippools(&self) -> Result<&[IpPool], LookupError>;
    /// The IPPools of `subnet` whose `spec.namespaces` is not empty, in no
    /// particular order: the only ones that reserve addresses (I19).
    fn reserving_ippools(&self, subnet: &str) -> Result<Vec<IpPool>, LookupError> {
        self.ippools().map(|all| {
            all.iter()
                .filter(|p| p.spec.subnet == subnet && !p.spec.namespaces.is_empty())
                .cloned()
                .collect()
        })
    }
    /// Whether an object of a cluster-scoped kind exists (nothing of it is read).
    fn exists(&self, kind: &ApiResource, name: &str) -> Result<bool, LookupError>;
    /// The ConfigMap `namespace/name`, `None` when it does not exist.
    fn config_map(&self, namespace: &str, name: &str) -> Result<Option<ConfigMap>, LookupError>;
    /// The `kubeovn.io/v1` Vpc of that name, `None` when it does not exist.
    fn vpc(&self, name: &str) -> Result<Option<Vpc>, LookupError>;
    /// The `kubeovn.io/v1` IptablesEIP of that name, `None` when it does not exist.
    fn iptables_eip(&self, name: &str) -> Result<Option<IptablesEip>, LookupError>;
    /// The IptablesDnatRules carrying every one of these labels, in no order.
    fn iptables_dnat_rules(
        &self,
        labels: &[(&str, &str)],
    ) -> Result<Vec<IptablesRule>, LookupError>;
    /// The names of the objects of a kind carrying every one of these labels,
    /// in no order.
    fn labelled(
        &self,
        kind: &ApiResource,
        labels: &[(&str, &str)],
    ) -> Result<Vec<String>, LookupError>;
    /// The `kubeovn.io/v1` Subnet of that name (its CIDR, gateway,
    /// `excludeIps` and record of what is in use), `None` when it does not
    /// exist.
    /// Shared: a Subnet's record (I15) can be large, and several checks read it.
    fn subnet(&self, name: &str) -> Result<Option<Rc<Subnet>>, LookupError>;
    /// What `getPodDefaultSubnet` reads of the Subnet of that name to pass
    /// it over (I5), `None` when it does not exist.
    fn subnet_availability(&self, name: &str) -> Result<Option<SubnetAvailability>, LookupError>;
    /// The `kubeovn.io/v1` IP of that name, `None` when it does not exist
    /// (I15: a pod's own, `<pod>.<namespace>[.<provider>]`).
    fn ip(&self, name: &str) -> Result<Option<Ip>, LookupError>;
    /// Every `kubeovn.io/v1` Vpc.
    fn vpcs(&self) -> Result<&[Vpc], LookupError>;
    /// Service `default/kubernetes`, `None` when it does not exist (I9).
    fn kubernetes_service(&self) -> Result<Option<Service>, LookupError>;
    /// Every OVN NAT rule of one kind, with the VPC it is in.
    fn vpc_referrers(&self, kind: OvnNatKind) -> Result<Vec<VpcReferrer>, LookupError>;
    /// The `k8s.cni.cncf.io/v1` NetworkAttachmentDefinition `namespace/name`
    /// (I17), `None` when it does not exist.
    fn network_attachment_definition(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<NetworkAttachmentDefinition>, LookupError>;
    /// The `kubeovn.io/v1` Vip a pod names (I21), `None` when it does not exist.
    fn pod_vip(&self, name: &str) -> Result<Option<PodVip>, LookupError>;
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
        self.as_kind().kind
    }

    /// `kubeovn.io/v1` OvnEip, the address these rules use.
    pub fn eip_kind() -> &'static ApiResource {
        &kinds::OVN_EIP
    }

    /// The kind as lookups name it.
    pub fn as_kind(self) -> &'static ApiResource {
        match self {
            Self::DnatRule => &kinds::OVN_DNAT_RULE,
            Self::SnatRule => &kinds::OVN_SNAT_RULE,
            Self::Fip => &kinds::OVN_FIP,
        }
    }
}
