//! Every lookup the policy makes goes through here.
//!
//! Checks see the cluster through the [`Cluster`] trait: the policy-server's
//! host capabilities in production ([`HostCluster`]), an in-memory fake in
//! unit tests. Each lookup is made at most once per evaluation and only when
//! a check needs it; results are memoised for the rest of the evaluation.
//! Kube-OVN's kinds are cluster-scoped, so they are listed with
//! `list_resources_all` (served from the policy-server's watch cache) or
//! fetched with `get_resource` and no namespace.
//!
//! The answers are decoded here rather than by the SDK's typed helpers, so
//! that IP objects are read with borrowed strings and only those of the
//! subnet asked about are kept, and so that the same code runs natively
//! (benchmarks, fuzzing) over any [`Host`].

use crate::k8s::decode;
use crate::k8s::kinds::{self, ApiResource};
use crate::k8s::names::{is_dns1123_subdomain, is_label_value};
use crate::k8s::objects::{
    ConfigMap, Ip, IpPool, IpRef, IptablesEip, IptablesRule, IptablesRuleSpec, Meta, MetaRef,
    Namespace, NetworkAttachmentDefinition, Service, Subnet, SubnetByName, Vpc, VpcReferrer,
};
use crate::k8s::scan;
use crate::upstream::go_strconv::go_quote;
use kubewarden_policy_sdk::host_capabilities::kubernetes::{
    GetResourceRequest, ListAllResourcesRequest,
};
use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::cell::{OnceCell, RefCell};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::marker::PhantomData;
use std::net::IpAddr;

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

/// The answer of a lookup.
type Lookup<T> = Result<T, LookupError>;

/// Every object of each NAT kind read by its labels, by kind.
type LabelledKinds = RefCell<Vec<(&'static str, Lookup<Vec<LabelledRule>>)>>;

/// What the checks may ask of the cluster.
pub trait Cluster {
    /// The `kubeovn.io/v1` IP CRs whose `spec.subnet` is `subnet` and that
    /// hold one of `addresses` (I1, by value), in no particular order. Only
    /// those are decoded whole: in a subnet of 10 000 pods, a request for
    /// one address keeps one object. Not memoised: callers keep what they need.
    fn ips_holding(&self, subnet: &str, addresses: &[IpAddr]) -> Result<Vec<Ip>, LookupError>;
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
    fn subnet(&self, name: &str) -> Result<Option<Subnet>, LookupError>;
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

/// Only `metadata` (which always comes whole): a mask that names no field
/// outside it drops `spec` and `status`. Every Namespace is listed so
/// (for its annotations), and every Subnet, for the names that a name taken
/// from a request is resolved against.
pub const METADATA_FIELD_MASKS: [&str; 1] = ["metadata"];

/// The fields of every IPPool an IPPool CREATE or UPDATE compares itself
/// with (I14): one watch cache of all pools, whatever the subnet asked
/// about (kube-ovn-controller labels no pool with its subnet, and a CRD's
/// `spec.subnet` is no field selector).
pub const IPPOOL_LIST_FIELD_MASKS: [&str; 3] = ["spec.ips", "spec.namespaces", "spec.subnet"];

/// The field of a NetworkAttachmentDefinition a pod's selection reads: its
/// CNI config (I17). Every NAD of every namespace is one watch cache.
pub const NAD_FIELD_MASKS: [&str; 1] = ["spec.config"];

/// The fields kept of the NAT kinds read by their labels: the field the
/// labels mirror, and for IptablesDnatRule what its port check compares;
/// one set per kind, so that each keeps one watch cache.
fn labelled_field_masks(kind: &ApiResource) -> &'static [&'static str] {
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

/// The channel to the policy-server's Kubernetes host capabilities.
pub trait Host {
    /// One `kubewarden/kubernetes/<operation>` call: the request's JSON in,
    /// the answer's bytes out, or the host's error.
    fn call(&self, operation: &str, payload: &[u8]) -> Result<Vec<u8>, String>;
}

/// The waPC host of the policy-server (or of `kwctl`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Wapc;

impl Host for Wapc {
    fn call(&self, operation: &str, payload: &[u8]) -> Result<Vec<u8>, String> {
        wapc_guest::host_call("kubewarden", "kubernetes", operation, payload)
            .map_err(|e| e.to_string())
    }
}

/// The cluster as the policy-server's Kubernetes host capabilities show it.
pub struct HostCluster<H: Host = Wapc> {
    host: H,
    subnets: OnceCell<Result<Vec<Subnet>, LookupError>>,
    ippools: OnceCell<Result<Vec<IpPool>, LookupError>>,
    vpcs: OnceCell<Result<Vec<Vpc>, LookupError>>,
    /// Every Subnet, metadata only: the names a request's are resolved against.
    subnet_names: OnceCell<Lookup<Vec<u8>>>,
    /// Every Namespace, metadata only.
    all_namespaces: OnceCell<Lookup<Vec<u8>>>,
    /// Every IPPool, as [`Self::ippools`] reads them.
    all_ippools: OnceCell<Lookup<Vec<u8>>>,
    /// Every NetworkAttachmentDefinition, of every namespace.
    all_nads: OnceCell<Lookup<Vec<u8>>>,
    /// The same, by namespace and name.
    nads: OnceCell<Lookup<HashMap<(String, String), NetworkAttachmentDefinition>>>,
    /// Subnets by name, as looked up (I15 and I6 read the same one).
    named_subnets: RefCell<Vec<(String, Lookup<Option<Subnet>>)>>,
    /// IP CRs without the subnet label, shared by every subnet asked about.
    unlabelled_ips: RefCell<Option<Vec<u8>>>,
    /// Every IP CR, read where a subnet named does not exist.
    all_ips: RefCell<Option<Vec<u8>>>,
    /// The NAT kinds read by their labels, every object of each.
    labelled: LabelledKinds,
}

impl HostCluster<Wapc> {
    /// A view through the waPC host that has looked nothing up yet.
    pub fn new() -> Self {
        Self::with_host(Wapc)
    }
}

impl Default for HostCluster<Wapc> {
    fn default() -> Self {
        Self::new()
    }
}

impl<H: Host> HostCluster<H> {
    /// A view through any host that has looked nothing up yet.
    pub fn with_host(host: H) -> Self {
        HostCluster {
            host,
            subnets: OnceCell::new(),
            ippools: OnceCell::new(),
            vpcs: OnceCell::new(),
            subnet_names: OnceCell::new(),
            all_namespaces: OnceCell::new(),
            all_ippools: OnceCell::new(),
            all_nads: OnceCell::new(),
            nads: OnceCell::new(),
            named_subnets: RefCell::default(),
            unlabelled_ips: RefCell::new(None),
            all_ips: RefCell::new(None),
            labelled: RefCell::default(),
        }
    }

    /// One `list_resources_all` call; the answer's bytes.
    fn list_raw(
        &self,
        kind: &ApiResource,
        label_selector: Option<String>,
        field_masks: Option<&[&str]>,
    ) -> Result<Vec<u8>, LookupError> {
        self.list_selected(kind, label_selector, None, field_masks)
    }

    /// One `list_resources_all` call with a field selector too.
    fn list_selected(
        &self,
        kind: &ApiResource,
        label_selector: Option<String>,
        field_selector: Option<String>,
        field_masks: Option<&[&str]>,
    ) -> Result<Vec<u8>, LookupError> {
        let request = ListAllResourcesRequest {
            api_version: kind.api_version.to_string(),
            kind: kind.kind.to_string(),
            label_selector,
            field_selector,
            field_masks: masks(field_masks),
        };
        let fail = |why: String| LookupError::list(kind, why);
        let payload = serde_json::to_vec(&request).map_err(|e| fail(e.to_string()))?;
        self.host.call("list_resources_all", &payload).map_err(|e| {
            fail(format!(
                "error invoking host capability kubernetes.list_resources_all: {}",
                host_error_summary(&e)
            ))
        })
    }

    /// Lists every object of a kind, each decoded as `T`.
    fn list_all<T>(
        &self,
        kind: &ApiResource,
        field_masks: Option<&[&str]>,
    ) -> Result<Vec<T>, LookupError>
    where
        T: for<'a> Deserialize<'a>,
    {
        let raw = self.list_raw(kind, None, field_masks)?;
        decode_list::<T>(kind, &raw)
    }

    /// Every object of a cluster-scoped kind, as the bytes of one list
    /// answer read once per evaluation: one watch cache in the policy-server
    /// whatever the requests name.
    fn kind_wide<'s>(
        &self,
        cell: &'s OnceCell<Lookup<Vec<u8>>>,
        kind: &ApiResource,
        field_masks: &[&str],
    ) -> Lookup<&'s [u8]> {
        cell.get_or_init(|| self.list_raw(kind, None, Some(field_masks)))
            .as_deref()
            .map_err(Clone::clone)
    }

    /// The JSON text of an object of a cluster-scoped kind by a name taken
    /// from a request, found in a list of every object of the kind
    /// ([`Self::kind_wide`]): nothing is ever narrowed to a name that may
    /// not exist (CONTRACT §4, bounded by what exists). A name that is not a
    /// valid object name cannot exist and is not looked for.
    fn named<'s>(
        &self,
        cell: &'s OnceCell<Lookup<Vec<u8>>>,
        kind: &ApiResource,
        field_masks: &[&str],
        name: &str,
    ) -> Lookup<Option<&'s [u8]>> {
        if !is_dns1123_subdomain(name) {
            return Ok(None);
        }
        let fail = |e: LookupError| LookupError::get(kind, name, None, e.why);
        let raw = self.kind_wide(cell, kind, field_masks).map_err(fail)?;
        find_named(kind, raw, name).map_err(fail)
    }

    /// A Subnet by a name taken from a request: resolved against every
    /// Subnet's name first, then read from a watch cache narrowed to that
    /// name (a field selector), one per Subnet that exists. A Subnet's
    /// record (I15) and CIDR are read on most static-IP decisions: a narrowed
    /// cache answers one object, where every Subnet's would be hundreds.
    fn subnet_by_name(&self, name: &str) -> Lookup<Option<Subnet>> {
        if !self.subnet_exists(name)? {
            return Ok(None);
        }
        let selector = format!("metadata.name={name}");
        self.list_selected(
            &kinds::SUBNET,
            None,
            Some(selector),
            Some(&SUBNET_GET_FIELD_MASKS),
        )
        .and_then(|raw| decode_list::<SubnetByName>(&kinds::SUBNET, &raw))
        .map(|items| items.into_iter().next().map(Subnet::from))
        .map_err(|e| LookupError::get(&kinds::SUBNET, name, None, e.why))
    }

    /// Whether a Subnet of that name exists. kube-ovn-controller lists every
    /// OVN Subnet of a VPC in the Vpc's `status.subnets` (`getVpcSubnets`,
    /// `pkg/controller/vpc.go` at 1533681d7a6b, after each change of a
    /// Subnet): a few objects, where every Subnet's metadata is hundreds, so
    /// a Subnet in use is found there. A name found in no Vpc (a Subnet of
    /// another provider, one created moments ago, a name that exists
    /// nowhere) is looked for among every Subnet's metadata.
    fn subnet_exists(&self, name: &str) -> Lookup<bool> {
        if !is_dns1123_subdomain(name) {
            return Ok(false);
        }
        if self
            .vpcs()?
            .iter()
            .any(|vpc| vpc.status.subnets.iter().any(|s| s == name))
        {
            return Ok(true);
        }
        self.named(
            &self.subnet_names,
            &kinds::SUBNET,
            &METADATA_FIELD_MASKS,
            name,
        )
        .map(|found| found.is_some())
    }

    /// The objects of a NAT kind carrying every one of these labels, each as
    /// `keep` makes it: every object of the kind is listed once per
    /// evaluation and filtered here, since the label values (a gateway's
    /// name, an EIP's address) come from the request. A value that is not a
    /// valid label value is carried by nothing.
    fn labelled_rules<O>(
        &self,
        kind: &ApiResource,
        labels: &[(&str, &str)],
        keep: impl Fn(&LabelledRule) -> O,
    ) -> Lookup<Vec<O>> {
        if label_selector(labels).is_none() {
            return Ok(Vec::new());
        }
        let mut known = self.labelled.borrow_mut();
        let at = match known.iter().position(|(k, _)| *k == kind.kind) {
            Some(at) => at,
            None => {
                let listed = self
                    .list_raw(kind, None, Some(labelled_field_masks(kind)))
                    .and_then(|raw| decode_list::<LabelledRule>(kind, &raw));
                known.push((kind.kind, listed));
                known.len() - 1
            }
        };
        let rules = known[at].1.as_ref().map_err(Clone::clone)?;
        Ok(rules
            .iter()
            .filter(|rule| rule.carries(labels))
            .map(keep)
            .collect())
    }

    /// Gets an object (`namespace` is `None` for a cluster-scoped kind);
    /// `Ok(None)` when it does not exist. A name that is not a valid object
    /// name cannot exist, so it is not asked for.
    fn get_object<T>(
        &self,
        kind: &ApiResource,
        name: &str,
        namespace: Option<&str>,
        field_masks: Option<&[&str]>,
    ) -> Result<Option<T>, LookupError>
    where
        T: for<'a> Deserialize<'a>,
    {
        let Some(raw) = self.get_raw(kind, name, namespace, field_masks)? else {
            return Ok(None);
        };
        decode::from_slice(&raw).map(Some).map_err(|e| {
            LookupError::get(
                kind,
                name,
                namespace,
                format!("error deserializing get resource response: {e}"),
            )
        })
    }

    /// One `get_resource` call, its answer's type checked; the part of
    /// [`Self::get_object`] that does not depend on the decoded type.
    fn get_raw(
        &self,
        kind: &ApiResource,
        name: &str,
        namespace: Option<&str>,
        field_masks: Option<&[&str]>,
    ) -> Result<Option<Vec<u8>>, LookupError> {
        if !is_dns1123_subdomain(name) {
            return Ok(None);
        }
        let fail = |why: String| LookupError::get(kind, name, namespace, why);
        let request = GetResourceRequest {
            api_version: kind.api_version.to_string(),
            kind: kind.kind.to_string(),
            name: name.to_string(),
            namespace: namespace.map(str::to_string),
            // The policy-server's cache of GETs keeps every name it was
            // asked for (Kubewarden 1.37, adm-controller#1950): only the
            // fixed names (Service `default/kubernetes`, the NAT ConfigMaps)
            // may enter it. A name taken from a request, or one per pod,
            // is fetched afresh each time (CONTRACT §4).
            disable_cache: !is_fixed_name(kind),
            field_masks: masks(field_masks),
        };
        let payload = serde_json::to_vec(&request).map_err(|e| fail(e.to_string()))?;
        match self.host.call("get_resource", &payload) {
            Ok(raw) => {
                let decode_error =
                    |why: String| fail(format!("error deserializing get resource response: {why}"));
                if decode::is_null(&raw) {
                    return Err(decode_error("expected an object, found null".to_string()));
                }
                let head: TypeHead<'_> =
                    decode::from_slice(&raw).map_err(|e| decode_error(e.to_string()))?;
                head.check(kind.api_version, kind.kind, false)
                    .map_err(decode_error)?;
                Ok(Some(raw))
            }
            Err(text) if is_not_found(&text, kind, name, namespace) => Ok(None),
            Err(text) => Err(fail(format!(
                "error invoking host capability kubernetes.get_resource: {}",
                host_error_summary(&text)
            ))),
        }
    }
}

/// Whether the objects of a kind are fetched by names fixed in the policy
/// (never taken from a request), which may stay in the policy-server's
/// cache of GETs.
fn is_fixed_name(kind: &ApiResource) -> bool {
    *kind == kinds::SERVICE || *kind == kinds::CONFIG_MAP
}

fn masks(field_masks: Option<&[&str]>) -> Option<BTreeSet<String>> {
    field_masks.map(|m| m.iter().map(|s| s.to_string()).collect())
}

/// The `apiVersion` and `kind` of an answer, which must be the ones asked
/// for: an answer of another kind is the host's error, and reading it as an
/// object of the kind asked for could admit what the cluster forbids.
#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct TypeHead<'a> {
    #[serde(borrow)]
    api_version: Option<Cow<'a, str>>,
    #[serde(borrow)]
    kind: Option<Cow<'a, str>>,
}

impl TypeHead<'_> {
    /// `required`: whether an absent field is an error (a list's envelope is
    /// always typed by the host; a single object may come without its type).
    fn check(&self, api_version: &str, kind: &str, required: bool) -> Result<(), String> {
        for (field, got, want) in [
            ("kind", &self.kind, kind),
            ("apiVersion", &self.api_version, api_version),
        ] {
            match got.as_deref() {
                Some(got) if got == want => {}
                Some(got) => {
                    return Err(format!(
                        "invalid value: string {}, expected {want}",
                        go_quote(got)
                    ));
                }
                None if required => {
                    return Err(format!("missing field `{field}`, expected {want}"));
                }
                None => {}
            }
        }
        Ok(())
    }
}

/// Decodes a `{Kind}List` answer of `kind`: its kind is checked, its items
/// decoded as `I` (the kind's own type, or a lighter borrowed view of it).
/// `items` is required: an answer without it is not a list, and reading it
/// as an empty one would admit what the cluster forbids.
fn decode_list<'a, I>(kind: &ApiResource, raw: &'a [u8]) -> Result<Vec<I>, LookupError>
where
    I: Deserialize<'a>,
{
    decode_list_kept(kind, raw, Some)
}

/// [`decode_list`], keeping of each item only what `keep` returns: the
/// items are read one by one and never held together, so a list of
/// thousands allocates for the few it keeps.
fn decode_list_kept<'a, I, O>(
    kind: &ApiResource,
    raw: &'a [u8],
    keep: impl FnMut(I) -> Option<O>,
) -> Result<Vec<O>, LookupError>
where
    I: Deserialize<'a>,
{
    let fail = |why: String| {
        LookupError::list(
            kind,
            format!("error deserializing list all resources response: {why}"),
        )
    };
    if decode::is_null(raw) {
        return Err(fail("expected a list, found null".to_string()));
    }
    let seed = ListSeed {
        keep,
        item: PhantomData,
    };
    let (head, items) = decode::from_slice_seed(raw, seed).map_err(|e| fail(e.to_string()))?;
    head.check(kind.api_version, &format!("{}List", kind.kind), true)
        .map_err(fail)?;
    items.ok_or_else(|| fail("missing field `items`".to_string()))
}

/// Reads a `{Kind}List` answer: its type, and what `keep` keeps of each of
/// its items (`None` when it has no `items`). Other keys are skipped; a
/// repeated one is refused, as serde's derived readers refuse it.
struct ListSeed<F, I> {
    keep: F,
    item: PhantomData<fn() -> I>,
}

type ListRead<'a, O> = (TypeHead<'a>, Option<Vec<O>>);

impl<'de, I, O, F> DeserializeSeed<'de> for ListSeed<F, I>
where
    I: Deserialize<'de>,
    F: FnMut(I) -> Option<O>,
{
    type Value = ListRead<'de, O>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_struct("List", &["apiVersion", "kind", "items"], self)
    }
}

impl<'de, I, O, F> Visitor<'de> for ListSeed<F, I>
where
    I: Deserialize<'de>,
    F: FnMut(I) -> Option<O>,
{
    type Value = ListRead<'de, O>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("struct List")
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut head = TypeHead::default();
        let mut items = None;
        let (mut saw_api_version, mut saw_kind) = (false, false);
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            let (field, seen) = match key.as_ref() {
                "apiVersion" => ("apiVersion", &mut saw_api_version),
                "kind" => ("kind", &mut saw_kind),
                "items" => {
                    if items.is_some() {
                        return Err(de::Error::duplicate_field("items"));
                    }
                    items = Some(map.next_value_seed(ItemsSeed {
                        keep: &mut self.keep,
                        item: PhantomData,
                    })?);
                    continue;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            if std::mem::replace(seen, true) {
                return Err(de::Error::duplicate_field(field));
            }
            let value = map.next_value::<Option<Cow<'de, str>>>()?;
            match field {
                "kind" => head.kind = value,
                _ => head.api_version = value,
            }
        }
        Ok((head, items.flatten()))
    }
}

/// A list's `items`, `null` read as absent, each item passed to `keep`.
struct ItemsSeed<'k, F, I> {
    keep: &'k mut F,
    item: PhantomData<fn() -> I>,
}

impl<'de, I, O, F> DeserializeSeed<'de> for ItemsSeed<'_, F, I>
where
    I: Deserialize<'de>,
    F: FnMut(I) -> Option<O>,
{
    type Value = Option<Vec<O>>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_option(self)
    }
}

impl<'de, I, O, F> Visitor<'de> for ItemsSeed<'_, F, I>
where
    I: Deserialize<'de>,
    F: FnMut(I) -> Option<O>,
{
    type Value = Option<Vec<O>>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a sequence")
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut kept = Vec::new();
        while let Some(item) = seq.next_element::<I>()? {
            kept.extend((self.keep)(item));
        }
        Ok(Some(kept))
    }
}

/// The IP CRs of `subnet` holding one of `addresses` (sorted) in a raw IP
/// list answer, read with borrowed strings; only those kept are copied.
fn ips_of_subnet(
    raw: &[u8],
    subnet: &str,
    addresses: &[IpAddr],
    into: &mut Vec<Ip>,
) -> Result<(), LookupError> {
    let keep = |ip: IpRef<'_>| {
        (ip.spec.subnet.as_ref() == subnet && ip.holds_any(addresses)).then(|| ip.to_owned())
    };
    // Most lists hold none of the addresses, and the others one or two:
    // only the items that may hold one are read.
    if let Some(found) = scan::holders(raw, addresses)
        && decode_list_kept(&kinds::IP, &found.head, |_: IgnoredAny| None::<Ip>).is_ok()
    {
        let kept: Result<Vec<Ip>, _> = found
            .items
            .iter()
            .filter_map(|item| decode::from_slice::<IpRef<'_>>(item).map(keep).transpose())
            .collect();
        // An item that does not decode: the whole list's decoding names it.
        if let Ok(kept) = kept {
            into.extend(kept);
            return Ok(());
        }
    }
    into.extend(decode_list_kept(&kinds::IP, raw, keep)?);
    Ok(())
}

/// The JSON text of the object named `name` in a `{Kind}List` answer of
/// `kind`: searched for without decoding the list where it has the plain
/// shape the policy-server writes (`scan::item_named`), else found by
/// decoding every item's name. The list's head is checked either way.
fn find_named<'r>(kind: &ApiResource, raw: &'r [u8], name: &str) -> Lookup<Option<&'r [u8]>> {
    let head_ok = scan::plain_head(raw)
        .is_some_and(|head| decode_list_kept(kind, &head, |_: IgnoredAny| None::<()>).is_ok());
    if head_ok {
        match scan::item_named(raw, kind.api_version, kind.kind, name) {
            scan::Item::Absent => return Ok(None),
            scan::Item::Found(item) => return Ok(Some(item)),
            scan::Item::Unknown => {}
        }
    }
    let mut error = None;
    let found = decode_list_kept(
        kind,
        raw,
        |item: decode::Raw<'r>| match decode::from_slice::<NameRef<'_>>(item.get().as_bytes()) {
            Ok(named) => (named.metadata.name == name).then_some(item),
            Err(e) => {
                error.get_or_insert(e);
                None
            }
        },
    )?;
    match (found.first(), error) {
        (Some(item), _) => Ok(Some(item.get().as_bytes())),
        (None, Some(e)) => Err(LookupError::list(
            kind,
            format!("error deserializing list all resources response: {e}"),
        )),
        (None, None) => Ok(None),
    }
}

/// Any object, by its name alone, borrowed from the answer.
#[derive(Default, Deserialize)]
#[serde(default)]
struct NameRef<'a> {
    #[serde(borrow)]
    metadata: MetaRef<'a>,
}

/// A NAT object as a kind-wide list holds it: its name, its labels (what
/// the checks select it by), and the spec fields the masks keep.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
struct LabelledRule {
    metadata: LabelledMeta,
    spec: IptablesRuleSpec,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
struct LabelledMeta {
    name: String,
    labels: BTreeMap<String, String>,
}

impl LabelledRule {
    /// Whether it carries every one of these labels with that value, as the
    /// API server's equality selector `k1=v1,k2=v2` matches it.
    fn carries(&self, labels: &[(&str, &str)]) -> bool {
        labels
            .iter()
            .all(|(key, value)| self.metadata.labels.get(*key).map(String::as_str) == Some(*value))
    }
}

/// The addresses in order, without repeats, as the scans look them up.
fn sorted(addresses: &[IpAddr]) -> Cow<'_, [IpAddr]> {
    if addresses.windows(2).all(|w| w[0] < w[1]) {
        Cow::Borrowed(addresses)
    } else {
        let mut owned = addresses.to_vec();
        owned.sort_unstable();
        owned.dedup();
        Cow::Owned(owned)
    }
}

/// `k1=v1,k2=v2`, or `None` when a value is no valid label value: no object
/// can carry it, so nothing is asked.
fn label_selector(labels: &[(&str, &str)]) -> Option<String> {
    labels
        .iter()
        .map(|(key, value)| is_label_value(value).then(|| format!("{key}={value}")))
        .collect::<Option<Vec<_>>>()
        .map(|terms| terms.join(","))
}

/// Whether a failed `get_resource` means the object does not exist.
///
/// policy-evaluator reads the object with kube-rs' `Api::get_opt`, which
/// turns the API server's 404 into `None`, and then fails the call with
/// `Cannot find <apiVersion>/<Kind> named '<name>' inside of namespace
/// '<namespace as Rust's Debug of Option<&str>>'` (`client.rs`,
/// `Client::get_resource`, Kubewarden 1.36). The host call carries no
/// structured error, so that text, for exactly the object asked for, is the
/// only signal; any other failure (403, a missing CRD, a timeout) stays a
/// failed lookup.
fn is_not_found(text: &str, kind: &ApiResource, name: &str, namespace: Option<&str>) -> bool {
    let missing = format!(
        "Cannot find {}/{} named '{name}' inside of namespace '{namespace:?}'",
        kind.api_version, kind.kind
    );
    host_error_summary(text).ends_with(&missing)
}

/// A host error as a rejection message shows it: its first line (with
/// `RUST_BACKTRACE` set, the policy-server appends a backtrace), without the
/// debug dump of the API server's Status that kube-rs appends to an API
/// error (`… at the cluster scope: Forbidden (Status { status: … })`).
fn host_error_summary(text: &str) -> &str {
    let line = text.lines().next().unwrap_or("").trim_end();
    [" (Status { ", " (ErrorResponse { "]
        .iter()
        .filter_map(|dump| line.find(dump))
        .min()
        .map_or(line, |end| &line[..end])
}

impl<H: Host> Cluster for HostCluster<H> {
    /// For a Subnet that exists and whose name is a valid label value, two
    /// lists: the IP CRs labelled with the subnet (one watch cache per such
    /// Subnet), and those without the label at all (an IP CR written by
    /// hand, before kube-ovn-controller labels it). Otherwise every IP CR:
    /// a subnet that does not exist still has the IP CRs that name it
    /// checked, as upstream checks them, without a watch cache for it.
    fn ips_holding(&self, subnet: &str, addresses: &[IpAddr]) -> Result<Vec<Ip>, LookupError> {
        let addresses = sorted(addresses);
        let mut found = Vec::new();
        if !is_label_value(subnet) || subnet.is_empty() || !self.subnet_exists(subnet)? {
            let mut all = self.all_ips.borrow_mut();
            if all.is_none() {
                *all = Some(self.list_raw(&kinds::IP, None, Some(&IP_FIELD_MASKS))?);
            }
            if let Some(raw) = all.as_deref() {
                ips_of_subnet(raw, subnet, &addresses, &mut found)?;
            }
            return Ok(found);
        }
        let labelled = self.list_raw(
            &kinds::IP,
            Some(format!("{SUBNET_LABEL}={subnet}")),
            Some(&IP_FIELD_MASKS),
        )?;
        ips_of_subnet(&labelled, subnet, &addresses, &mut found)?;
        let mut unlabelled = self.unlabelled_ips.borrow_mut();
        if unlabelled.is_none() {
            *unlabelled = Some(self.list_raw(
                &kinds::IP,
                Some(format!("!{SUBNET_LABEL}")),
                Some(&IP_FIELD_MASKS),
            )?);
        }
        if let Some(raw) = unlabelled.as_deref() {
            ips_of_subnet(raw, subnet, &addresses, &mut found)?;
        }
        Ok(found)
    }

    fn subnets(&self) -> Result<&[Subnet], LookupError> {
        self.subnets
            .get_or_init(|| self.list_all::<Subnet>(&kinds::SUBNET, Some(&SUBNET_FIELD_MASKS)))
            .as_deref()
            .map_err(Clone::clone)
    }

    fn namespace(&self, name: &str) -> Result<Option<Namespace>, LookupError> {
        let found = self.named(
            &self.all_namespaces,
            &kinds::NAMESPACE,
            &METADATA_FIELD_MASKS,
            name,
        )?;
        found
            .map(|item| {
                decode::from_slice::<Namespace>(item).map_err(|e| {
                    LookupError::get(
                        &kinds::NAMESPACE,
                        name,
                        None,
                        format!("error deserializing list all resources response: {e}"),
                    )
                })
            })
            .transpose()
    }

    fn ippool_exists(&self, name: &str) -> Result<bool, LookupError> {
        // Named by pods and workloads: found among every IPPool.
        self.named(
            &self.all_ippools,
            &kinds::IPPOOL,
            &IPPOOL_LIST_FIELD_MASKS,
            name,
        )
        .map(|object| object.is_some())
    }

    fn ippool(&self, name: &str) -> Result<Option<IpPool>, LookupError> {
        let found = self.named(
            &self.all_ippools,
            &kinds::IPPOOL,
            &IPPOOL_LIST_FIELD_MASKS,
            name,
        )?;
        found
            .map(|item| {
                decode::from_slice::<IpPool>(item).map_err(|e| {
                    LookupError::get(
                        &kinds::IPPOOL,
                        name,
                        None,
                        format!("error deserializing list all resources response: {e}"),
                    )
                })
            })
            .transpose()
    }

    fn network_attachment_definition(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<NetworkAttachmentDefinition>, LookupError> {
        let kind = &kinds::NETWORK_ATTACHMENT_DEFINITION;
        if !is_dns1123_subdomain(name) || !is_dns1123_subdomain(namespace) {
            return Ok(None);
        }
        let fail = |e: &LookupError| LookupError::get(kind, name, Some(namespace), e.why.clone());
        // Every NAD, indexed once per evaluation: a pod's selections, however
        // many, cost one pass over the list.
        let index = self
            .nads
            .get_or_init(|| {
                let raw = self.kind_wide(&self.all_nads, kind, &NAD_FIELD_MASKS)?;
                let all = decode_list::<NetworkAttachmentDefinition>(kind, raw)?;
                Ok(all
                    .into_iter()
                    .map(|nad| {
                        let key = (nad.metadata.namespace.clone(), nad.metadata.name.clone());
                        (key, nad)
                    })
                    .collect())
            })
            .as_ref()
            .map_err(fail)?;
        Ok(index
            .get(&(namespace.to_string(), name.to_string()))
            .cloned())
    }

    fn ippools(&self) -> Result<&[IpPool], LookupError> {
        self.ippools
            .get_or_init(|| {
                let raw =
                    self.kind_wide(&self.all_ippools, &kinds::IPPOOL, &IPPOOL_LIST_FIELD_MASKS)?;
                decode_list::<IpPool>(&kinds::IPPOOL, raw)
            })
            .as_deref()
            .map_err(Clone::clone)
    }

    fn exists(&self, kind: &ApiResource, name: &str) -> Result<bool, LookupError> {
        // Only its existence matters: nothing of it is decoded.
        self.get_object::<IgnoredAny>(kind, name, None, None)
            .map(|object| object.is_some())
    }

    fn config_map(&self, namespace: &str, name: &str) -> Result<Option<ConfigMap>, LookupError> {
        self.get_object::<ConfigMap>(&kinds::CONFIG_MAP, name, Some(namespace), None)
    }

    fn vpc(&self, name: &str) -> Result<Option<Vpc>, LookupError> {
        self.get_object::<Vpc>(&kinds::VPC, name, None, Some(&["spec.enableBfd"]))
    }

    fn iptables_eip(&self, name: &str) -> Result<Option<IptablesEip>, LookupError> {
        self.get_object::<IptablesEip>(&kinds::IPTABLES_EIP, name, None, None)
    }

    fn iptables_dnat_rules(
        &self,
        labels: &[(&str, &str)],
    ) -> Result<Vec<IptablesRule>, LookupError> {
        self.labelled_rules(&kinds::IPTABLES_DNAT_RULE, labels, |rule| IptablesRule {
            metadata: Meta {
                name: rule.metadata.name.clone(),
                ..Meta::default()
            },
            spec: rule.spec.clone(),
        })
    }

    fn labelled(
        &self,
        kind: &ApiResource,
        labels: &[(&str, &str)],
    ) -> Result<Vec<String>, LookupError> {
        self.labelled_rules(kind, labels, |rule| rule.metadata.name.clone())
    }

    fn subnet(&self, name: &str) -> Result<Option<Subnet>, LookupError> {
        let mut known = self.named_subnets.borrow_mut();
        if let Some((_, answer)) = known.iter().find(|(n, _)| n == name) {
            return answer.clone();
        }
        let answer = self.subnet_by_name(name);
        known.push((name.to_string(), answer.clone()));
        answer
    }

    /// A GET, one API request each time: IP names are per pod, too many for a
    /// watch cache each, and for the policy-server's cache of GETs, which
    /// keeps every name (`disable_cache`).
    fn ip(&self, name: &str) -> Result<Option<Ip>, LookupError> {
        self.get_object::<Ip>(&kinds::IP, name, None, Some(&IP_FIELD_MASKS))
    }

    fn vpcs(&self) -> Result<&[Vpc], LookupError> {
        self.vpcs
            .get_or_init(|| self.list_all::<Vpc>(&kinds::VPC, Some(&VPC_FIELD_MASKS)))
            .as_deref()
            .map_err(Clone::clone)
    }

    fn kubernetes_service(&self) -> Result<Option<Service>, LookupError> {
        self.get_object::<Service>(
            &kinds::SERVICE,
            "kubernetes",
            Some("default"),
            Some(&["spec.clusterIP", "spec.clusterIPs"]),
        )
    }

    fn vpc_referrers(&self, kind: OvnNatKind) -> Result<Vec<VpcReferrer>, LookupError> {
        self.list_all::<VpcReferrer>(kind.as_kind(), Some(&VPC_REFERRER_FIELD_MASKS))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A host that fails every call with one text.
    struct Failing(&'static str);

    impl Host for Failing {
        fn call(&self, _: &str, _: &[u8]) -> Result<Vec<u8>, String> {
            Err(self.0.to_string())
        }
    }

    /// What the guest receives from policy-server 1.36 for a GET of a missing
    /// object (recorded with kwctl against an API server answering 404),
    /// with `RUST_BACKTRACE=1` in the server's environment. (A pod's IPPool is
    /// now a narrowed list; the GET of the same kind still shows the texts.)
    const MISSING_POOL: &str = "Host error: Callback evaluation failure: Cannot find \
        kubeovn.io/v1/IPPool named 'pool-a' inside of namespace 'None'\n\nStack backtrace:\n   0: <unknown>";

    /// An IP list answer with these items.
    fn ip_list(items: &str) -> String {
        format!(
            r#"{{"apiVersion":"kubeovn.io/v1","kind":"IPList","metadata":{{"resourceVersion":"7"}},"items":{items}}}"#
        )
    }

    fn ip_item(name: &str, subnet: &str, v4: &str) -> String {
        format!(
            r#"{{"apiVersion":"kubeovn.io/v1","kind":"IP","metadata":{{"name":"{name}","labels":{{"x":"y"}}}},"spec":{{"subnet":"{subnet}","v4IpAddress":"{v4}","ipAddress":"{v4}","namespace":"ns","podName":"{name}"}}}}"#
        )
    }

    fn kept(raw: &str, subnet: &str, addresses: &[&str]) -> Result<Vec<String>, String> {
        let addresses: Vec<IpAddr> = addresses.iter().map(|a| a.parse().unwrap()).collect();
        let addresses = sorted(&addresses);
        let mut found = Vec::new();
        ips_of_subnet(raw.as_bytes(), subnet, &addresses, &mut found).map_err(|e| e.to_string())?;
        Ok(found.into_iter().map(|ip| ip.metadata.name).collect())
    }

    #[test]
    fn only_the_ip_objects_of_the_subnet_holding_an_address_asked_for_are_kept() {
        let raw = ip_list(&format!(
            "[{},{},{},{}]",
            ip_item("a", "net1", "10.0.0.1"),
            ip_item("b", "net1", "10.0.0.2"),
            ip_item("c", "net2", "10.0.0.2"),
            ip_item("d", "net1", "not-an-ip"),
        ));
        assert_eq!(kept(&raw, "net1", &["10.0.0.2"]), Ok(vec!["b".to_string()]));
        assert_eq!(
            kept(&raw, "net1", &["10.0.0.1", "10.0.0.2"]),
            Ok(vec!["a".to_string(), "b".to_string()])
        );
        assert_eq!(kept(&raw, "net1", &["10.0.0.9"]), Ok(vec![]));
        assert_eq!(kept(&raw, "net1", &[]), Ok(vec![]));
        // Held through the combined field, written as a CIDR (I1 by value).
        let cidr =
            ip_item("e", "net1", "").replace(r#""ipAddress":"""#, r#""ipAddress":"10.0.0.3/24""#);
        assert_eq!(
            kept(&ip_list(&format!("[{cidr}]")), "net1", &["10.0.0.3"]),
            Ok(vec!["e".to_string()])
        );
    }

    #[test]
    fn a_list_answer_that_is_not_a_list_is_refused_whatever_it_holds() {
        let why = |raw: &str| kept(raw, "net1", &["10.0.0.1"]).expect_err(raw);
        let prefix =
            "cannot list kubeovn.io/v1 IP: error deserializing list all resources response: ";
        for (raw, message) in [
            (ip_list("null"), "missing field `items`"),
            (
                r#"{"apiVersion":"kubeovn.io/v1","kind":"IPList"}"#.to_string(),
                "missing field `items`",
            ),
            ("null".to_string(), "expected a list, found null"),
            (
                ip_list("[]").replace("IPList", "SubnetList"),
                "invalid value: string \"SubnetList\", expected IPList",
            ),
            (
                r#"{"apiVersion":"kubeovn.io/v1","items":[]}"#.to_string(),
                "missing field `kind`, expected IPList",
            ),
            // Where the items are read (one may hold the address).
            (
                ip_list(r#"[{"spec":{"ipAddress":"10.0.0.1"}}],"items":[]"#),
                "items: duplicate field `items` at line 1 column 132",
            ),
            (
                ip_list("[]").replace(r#""kind":"IPList""#, r#""kind":"IPList","kind":"IPList""#),
                "kind: duplicate field `kind` at line 1 column 52",
            ),
            (
                ip_list("5"),
                "items: invalid type: integer `5`, expected a sequence at line 1 column 90",
            ),
            // An item that may hold the address is read in full.
            (
                ip_list(r#"[{"spec":{"subnet":7,"ipAddress":"10.0.0.1"}}]"#),
                "items[0].spec.subnet: invalid type: integer `7`, expected a string at line 1 column 109",
            ),
            (
                ip_list(r#"[{"spec":{"ipAddress":7}}]"#),
                "items[0].spec.ipAddress: invalid type: integer `7`, expected a string at line 1 column 112",
            ),
            (
                ip_list(r#"[{"spec":{"ipAddress":"10.0.0.1"}}"#),
                "expected `,` or `]` at line 1 column 124",
            ),
        ] {
            assert_eq!(why(&raw), format!("{prefix}{message}"), "{raw}");
        }
    }

    #[test]
    fn items_that_cannot_hold_an_address_asked_for_are_not_read() {
        // No key an IP holds an address in carries one asked for: the items
        // are not decoded, so what else they hold is not judged.
        let raw = ip_list(&format!(
            r#"[{},{{"spec":{{"subnet":7,"v4IpAddress":"10.0.0.8"}}}}]"#,
            ip_item("a", "net1", "10.0.0.1")
        ));
        assert_eq!(kept(&raw, "net1", &["10.0.0.2"]), Ok(vec![]));
        assert!(kept(&raw, "net1", &["10.0.0.8"]).is_err());
    }

    mod scanned_as_decoded {
        use super::*;
        use proptest::prelude::*;

        /// Address texts an IP object may carry, in many forms of a few addresses.
        const TEXTS: [&str; 14] = [
            "10.0.0.5",
            "10.0.0.50",
            "110.0.0.5",
            "10.0.0.5/24",
            " 10.0.0.5",
            "10.0.0.05",
            "::ffff:10.0.0.5",
            "::ffff:a00:5",
            "fd00::5",
            "FD00:0::5",
            "fd00::5/64",
            "10.0.0.5,fd00::5",
            "",
            "not-an-ip",
        ];

        /// An item, as the policy-server writes one or (`bare`) not: only
        /// the former's items are read one by one.
        fn item(subnet: &str, key: &str, text: &str, bare: bool) -> String {
            let start = if bare {
                ""
            } else {
                r#""apiVersion":"kubeovn.io/v1","kind":"IP","#
            };
            format!(
                r#"{{{start}"metadata":{{"name":"{text}","labels":{{"k":"{{"}}}},"spec":{{"subnet":"{subnet}","{key}":"{text}"}}}}"#
            )
        }

        proptest! {
            /// The scan never changes what is kept: every list gives what
            /// decoding all of its items gives.
            #[test]
            fn whatever_the_list(
                items in proptest::collection::vec(
                    (0..2usize, 0..3usize, 0..TEXTS.len(), proptest::bool::weighted(0.2)), 0..6),
                asked in proptest::collection::vec(0..4usize, 0..3),
            ) {
                let keys = ["ipAddress", "v4IpAddress", "v6IpAddress"];
                let raw = ip_list(&format!("[{}]", items.iter()
                    .map(|&(s, k, t, bare)| item(["net1", "net2"][s], keys[k], TEXTS[t], bare))
                    .collect::<Vec<_>>().join(",")));
                let addresses: Vec<IpAddr> = asked.iter()
                    .map(|&a| ["10.0.0.5", "fd00::5", "10.0.0.50", "::ffff:10.0.0.5"][a].parse().unwrap())
                    .collect();
                let addresses = sorted(&addresses);
                let mut scanned = Vec::new();
                ips_of_subnet(raw.as_bytes(), "net1", &addresses, &mut scanned).unwrap();
                let decoded = decode_list_kept(&kinds::IP, raw.as_bytes(), |ip: IpRef<'_>| {
                    (ip.spec.subnet.as_ref() == "net1" && ip.holds_any(&addresses))
                        .then(|| ip.metadata.name.to_string())
                }).unwrap();
                let names: Vec<String> = scanned.into_iter().map(|ip| ip.metadata.name).collect();
                prop_assert_eq!(names, decoded);
            }
        }
    }

    #[test]
    fn the_scan_finds_every_form_an_address_is_held_in() {
        // Each list must give what decoding every item gives.
        let with = |spec: &str| {
            ip_list(&format!(
                r#"[{},{{"metadata":{{"name":"x"}},"spec":{{"subnet":"net1",{spec}}}}}]"#,
                ip_item("a", "net1", "10.0.0.1")
            ))
        };
        for (raw, asked) in [
            // Whitespace around the colon, a CIDR, a dual-stack pair.
            (with(r#""ipAddress" : "10.0.0.5""#), "10.0.0.5"),
            (with(r#""ipAddress":"10.0.0.5/24""#), "10.0.0.5"),
            (with(r#""ipAddress":"10.0.0.5,fd00::5""#), "fd00::5"),
            // IPv6 not as the request writes it.
            (with(r#""v6IpAddress":"FD00:0:0::0005""#), "fd00::5"),
            (with(r#""v4IpAddress":" 10.0.0.5 ""#), "10.0.0.5"),
            // Escapes: the scan cannot see through them.
            (with(r#""ip\u0041ddress":"10.0.0.5""#), "10.0.0.5"),
            (with(r#""ipAddress":"10.0.0.\u0035""#), "10.0.0.5"),
        ] {
            let addresses: Vec<IpAddr> = vec![asked.parse().unwrap()];
            let mut scanned = Vec::new();
            let got = ips_of_subnet(raw.as_bytes(), "net1", &addresses, &mut scanned).map(|()| {
                scanned
                    .iter()
                    .map(|ip| ip.metadata.name.clone())
                    .collect::<Vec<_>>()
            });
            let decoded = decode_list_kept(&kinds::IP, raw.as_bytes(), |ip: IpRef<'_>| {
                (ip.spec.subnet.as_ref() == "net1" && ip.holds_any(&addresses))
                    .then(|| ip.metadata.name.to_string())
            });
            assert_eq!(
                got.map_err(|e| e.to_string()),
                decoded.map_err(|e| e.to_string()),
                "{raw}"
            );
        }
    }

    #[test]
    fn a_missing_object_is_recognised_from_the_policy_servers_answer() {
        let cluster = HostCluster::with_host(Failing(MISSING_POOL));
        assert_eq!(cluster.exists(&kinds::IPPOOL, "pool-a"), Ok(false));
        let cm = HostCluster::with_host(Failing(
            "Host error: Callback evaluation failure: Cannot find v1/ConfigMap named \
             'ovn-vpc-nat-config' inside of namespace 'Some(\"kube-system\")'",
        ));
        assert_eq!(cm.config_map("kube-system", "ovn-vpc-nat-config"), Ok(None));
    }

    #[test]
    fn only_the_object_asked_for_counts_as_missing() {
        // Another object's text, another kind's, a missing CRD, a 403 and a
        // 404 text that does not come from policy-evaluator: lookup failures.
        for text in [
            MISSING_POOL.replace("pool-a", "pool-b"),
            MISSING_POOL.replace("IPPool", "Vpc"),
            MISSING_POOL.replace("'None'", "'Some(\"default\")'"),
            "Host error: Callback evaluation failure: Cannot find resource kubeovn.io/v1/IPPool"
                .into(),
            "Host error: Callback evaluation failure: ApiError: ippools.kubeovn.io \"pool-a\" is \
             forbidden: Forbidden (Status { code: 403 })"
                .into(),
            "ippools.kubeovn.io \"pool-a\" not found".into(),
        ] {
            let text: &'static str = Box::leak(text.into_boxed_str());
            let cluster = HostCluster::with_host(Failing(text));
            let err = cluster.exists(&kinds::IPPOOL, "pool-a").expect_err(text);
            assert!(
                err.to_string()
                    .starts_with("cannot get kubeovn.io/v1 IPPool \"pool-a\": "),
                "{err:?}"
            );
        }
    }

    #[test]
    fn an_api_error_loses_kube_rs_debug_dump() {
        let cluster = HostCluster::with_host(Failing(
            "Host error: Callback evaluation failure: ApiError: ippools.kubeovn.io \"pool-a\" is \
             forbidden: User \"u\" cannot get resource \"ippools\" in API group \"kubeovn.io\" at \
             the cluster scope: Forbidden (Status { status: Some(Failure), code: 403, message: \"…\" })",
        ));
        assert_eq!(
            cluster
                .exists(&kinds::IPPOOL, "pool-a")
                .map_err(|e| e.to_string()),
            Err(
                "cannot get kubeovn.io/v1 IPPool \"pool-a\": error invoking host capability \
                 kubernetes.get_resource: Host error: Callback evaluation failure: ApiError: \
                 ippools.kubeovn.io \"pool-a\" is forbidden: User \"u\" cannot get resource \
                 \"ippools\" in API group \"kubeovn.io\" at the cluster scope: Forbidden"
                    .to_string()
            )
        );
    }

    #[test]
    fn a_host_error_is_cut_to_its_first_line() {
        let cluster = HostCluster::with_host(Failing(
            "Host error: Callback evaluation failure: connection refused\n\nStack backtrace:\n   0: x",
        ));
        assert_eq!(
            cluster
                .subnets()
                .map(<[Subnet]>::len)
                .map_err(|e| e.to_string()),
            Err(
                "cannot list kubeovn.io/v1 Subnet: error invoking host capability \
                 kubernetes.list_resources_all: Host error: Callback evaluation failure: \
                 connection refused"
                    .to_string()
            )
        );
    }
}
