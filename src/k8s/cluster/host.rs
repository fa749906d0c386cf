//! The cluster as the policy-server's Kubernetes host capabilities show
//! it: [`HostCluster`] makes the host calls ([`Host`]) and keeps what each
//! answered for the rest of the evaluation.

use crate::k8s::cluster::answers::{
    LabelledRule, TypeHead, decode_list, find_named, holders_by_subnet, host_error_summary,
    ips_of_subnet, is_not_found, names, reserving_pools,
};
use crate::k8s::cluster::bounds::{
    CRD_FIELD_MASKS, IP_FIELD_MASKS, IPPOOL_LIST_FIELD_MASKS, METADATA_FIELD_MASKS,
    NAD_FIELD_MASKS, SUBNET_AVAILABLE_FIELD_MASKS, SUBNET_FIELD_MASKS, SUBNET_GET_FIELD_MASKS,
    SUBNET_LABEL, VIP_FIELD_MASKS, VPC_FIELD_MASKS, VPC_REFERRER_FIELD_MASKS, is_fixed_name,
    label_selector, labelled_field_masks, masks,
};
use crate::k8s::cluster::view::{AddressSet, Cluster, Lookup, LookupError, OvnNatKind};
use crate::k8s::decode;
use crate::k8s::kinds::{self, ApiResource};
use crate::k8s::names::{is_dns1123_subdomain, is_label_value};
use crate::k8s::objects::{
    ConfigMap, Ip, IpPool, IpPoolCrd, IptablesEip, IptablesRule, Meta, Namespace,
    NetworkAttachmentDefinition, PodVip, Service, Subnet, SubnetAvailability, SubnetByName, Vpc,
    VpcReferrer,
};
use kubewarden_policy_sdk::host_capabilities::kubernetes::{
    GetResourceRequest, ListAllResourcesRequest,
};
use serde::Deserialize;
use serde::de::IgnoredAny;
use std::cell::{Cell, OnceCell, RefCell};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// Every object of each NAT kind read by its labels, by kind.
type LabelledKinds = RefCell<Vec<(&'static str, Lookup<Vec<LabelledRule>>)>>;

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

/// Subnet names looked for by a scan of the Vpcs' lists before they go into a set.
const SCANS_BEFORE_A_SET: usize = 8;

/// An IP list answer read once per evaluation, and the IP CRs in it that
/// hold one of the addresses asked about, by `spec.subnet`: however many
/// subnets a request names, the list is scanned once (docs/lookups.md).
struct Holders {
    raw: Vec<u8>,
    /// The addresses `by_subnet` was built for (the checks ask with one set).
    addresses: AddressSet,
    by_subnet: HashMap<String, Vec<Ip>>,
}

/// The cluster as the policy-server's Kubernetes host capabilities show it.
pub struct HostCluster<H: Host = Wapc> {
    host: H,
    subnets: OnceCell<Result<Vec<Subnet>, LookupError>>,
    ippools: OnceCell<Result<Vec<IpPool>, LookupError>>,
    /// The IPPools that reserve addresses (I19), from the same answer.
    reserving_ippools: OnceCell<Lookup<Vec<IpPool>>>,
    /// Whether the IPPool CRD makes `spec.subnet` selectable.
    ippools_by_subnet: OnceCell<bool>,
    /// The IPPools reserving addresses of each subnet asked about (I19).
    subnet_ippools: RefCell<HashMap<String, Lookup<Vec<IpPool>>>>,
    vpcs: OnceCell<Result<Vec<Vpc>, LookupError>>,
    /// Every Subnet, metadata only: the names a request's are resolved against.
    subnet_names: OnceCell<Lookup<Vec<u8>>>,
    /// The Namespace asked for (the request's), as its GET answered.
    namespace: RefCell<Option<(String, Lookup<Option<Namespace>>)>>,
    /// Every IPPool, as [`Self::ippools`] reads them.
    all_ippools: OnceCell<Lookup<Vec<u8>>>,
    /// Every NetworkAttachmentDefinition, of every namespace.
    all_nads: OnceCell<Lookup<Vec<u8>>>,
    /// Every Vip, as a pod naming one reads it (I21).
    all_vips: OnceCell<Lookup<Vec<u8>>>,
    /// The same, by namespace and name.
    nads: OnceCell<Lookup<HashMap<(String, String), NetworkAttachmentDefinition>>>,
    /// Subnets by name, as looked up (I15 and I6 read the same one).
    named_subnets: RefCell<HashMap<String, Lookup<Option<Rc<Subnet>>>>>,
    /// What each namespace Subnet asked about shows free (I5).
    availability: RefCell<HashMap<String, Lookup<Option<SubnetAvailability>>>>,
    /// IP CRs without the subnet label, shared by every subnet asked about.
    unlabelled_ips: RefCell<Option<Holders>>,
    /// Every IP CR, read where a subnet named does not exist.
    all_ips: RefCell<Option<Holders>>,
    /// The Subnets kube-ovn-controller lists in some Vpc's `status.subnets`.
    vpc_subnets: OnceCell<Lookup<HashSet<String>>>,
    /// Every Subnet's name, read where a name is in no Vpc's list.
    subnet_name_set: OnceCell<Lookup<HashSet<String>>>,
    /// How many Subnet names were looked for so far.
    subnet_names_asked: Cell<usize>,
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
            reserving_ippools: OnceCell::new(),
            ippools_by_subnet: OnceCell::new(),
            subnet_ippools: RefCell::default(),
            vpcs: OnceCell::new(),
            subnet_names: OnceCell::new(),
            namespace: RefCell::new(None),
            all_ippools: OnceCell::new(),
            all_nads: OnceCell::new(),
            all_vips: OnceCell::new(),
            nads: OnceCell::new(),
            named_subnets: RefCell::default(),
            availability: RefCell::default(),
            unlabelled_ips: RefCell::new(None),
            all_ips: RefCell::new(None),
            vpc_subnets: OnceCell::new(),
            subnet_name_set: OnceCell::new(),
            subnet_names_asked: Cell::new(0),
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
    /// not exist (docs/lookups.md, bounded by what exists). A name that is not a
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

    /// Whether a subnet's IPPools can be listed by `spec.subnet`: the Subnet
    /// exists (a watch cache per Subnet, never per name a request invents)
    /// and the IPPool CRD declares the field selectable (read by its name,
    /// one watch cache, once per evaluation). Where the CRD cannot be read
    /// (not granted, an older deployment), every IPPool is read as before.
    fn ippools_selectable_by(&self, subnet: &str) -> Lookup<bool> {
        let selectable = *self.ippools_by_subnet.get_or_init(|| {
            self.list_selected(
                &kinds::CUSTOM_RESOURCE_DEFINITION,
                None,
                Some(format!("metadata.name={}", kinds::IPPOOL_CRD_NAME)),
                Some(&CRD_FIELD_MASKS),
            )
            .and_then(|raw| decode_list::<IpPoolCrd>(&kinds::CUSTOM_RESOURCE_DEFINITION, &raw))
            .is_ok_and(|crds| crds.iter().any(IpPoolCrd::selects_subnet))
        });
        Ok(selectable && self.subnet_exists(subnet)?)
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
        // A few names are looked for in the Vpcs' lists as they are; past
        // that, every listed name goes into a set once (a request naming
        // thousands of subnets costs one pass, docs/lookups.md).
        let asked = self.subnet_names_asked.get() + 1;
        self.subnet_names_asked.set(asked);
        let listed = if asked <= SCANS_BEFORE_A_SET {
            self.vpcs()?
                .iter()
                .any(|vpc| vpc.status.subnets.iter().any(|s| s == name))
        } else {
            self.vpc_subnets
                .get_or_init(|| {
                    Ok(self
                        .vpcs()?
                        .iter()
                        .flat_map(|vpc| vpc.status.subnets.iter().cloned())
                        .collect())
                })
                .as_ref()
                .map_err(Clone::clone)?
                .contains(name)
        };
        if listed {
            return Ok(true);
        }
        let fail = |e: &LookupError| LookupError::get(&kinds::SUBNET, name, None, e.why.clone());
        let all = self
            .subnet_name_set
            .get_or_init(|| {
                let raw =
                    self.kind_wide(&self.subnet_names, &kinds::SUBNET, &METADATA_FIELD_MASKS)?;
                names(&kinds::SUBNET, raw)
            })
            .as_ref()
            .map_err(fail)?;
        Ok(all.contains(name))
    }

    /// The IP CRs of `subnet` holding one of `addresses` in the IP list
    /// `selector` narrows to, listed and indexed once per evaluation.
    fn holders_in(
        &self,
        cell: &RefCell<Option<Holders>>,
        selector: Option<String>,
        subnet: &str,
        addresses: &AddressSet,
        found: &mut Vec<Ip>,
    ) -> Lookup<()> {
        let mut known = cell.borrow_mut();
        let raw = match known.take() {
            Some(held) if held.addresses.is(addresses) => {
                found.extend(held.by_subnet.get(subnet).into_iter().flatten().cloned());
                *known = Some(held);
                return Ok(());
            }
            Some(held) => held.raw,
            None => self.list_raw(&kinds::IP, selector, Some(&IP_FIELD_MASKS))?,
        };
        let by_subnet = holders_by_subnet(&raw, addresses.as_slice())?;
        found.extend(by_subnet.get(subnet).into_iter().flatten().cloned());
        *known = Some(Holders {
            raw,
            addresses: addresses.clone(),
            by_subnet,
        });
        Ok(())
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
            // is fetched afresh each time (docs/lookups.md).
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

impl<H: Host> Cluster for HostCluster<H> {
    /// For a Subnet that exists and whose name is a valid label value, two
    /// lists: the IP CRs labelled with the subnet (one watch cache per such
    /// Subnet), and those without the label at all (an IP CR written by
    /// hand, before kube-ovn-controller labels it). Otherwise every IP CR:
    /// a subnet that does not exist still has the IP CRs that name it
    /// checked, as upstream checks them, without a watch cache for it.
    fn ips_holding(&self, subnet: &str, addresses: &AddressSet) -> Result<Vec<Ip>, LookupError> {
        let mut found = Vec::new();
        if !is_label_value(subnet) || subnet.is_empty() || !self.subnet_exists(subnet)? {
            self.holders_in(&self.all_ips, None, subnet, addresses, &mut found)?;
            return Ok(found);
        }
        let labelled = self.list_raw(
            &kinds::IP,
            Some(format!("{SUBNET_LABEL}={subnet}")),
            Some(&IP_FIELD_MASKS),
        )?;
        ips_of_subnet(&labelled, subnet, addresses.as_slice(), &mut found)?;
        self.holders_in(
            &self.unlabelled_ips,
            Some(format!("!{SUBNET_LABEL}")),
            subnet,
            addresses,
            &mut found,
        )?;
        Ok(found)
    }

    fn subnets(&self) -> Result<&[Subnet], LookupError> {
        self.subnets
            .get_or_init(|| self.list_all::<Subnet>(&kinds::SUBNET, Some(&SUBNET_FIELD_MASKS)))
            .as_deref()
            .map_err(Clone::clone)
    }

    /// The request's own Namespace by one GET, instead of every Namespace's
    /// metadata (whose copy and serialisation grew with the cluster's
    /// Namespaces on every I5 decision). Not from the policy-server's cache
    /// of GETs (`disable_cache`): it would answer a Namespace up to 5 s old,
    /// where kube-ovn-controller writes the `logical_switch` annotation
    /// moments after the namespace is created; nothing is kept
    /// (docs/lookups.md). Read once per evaluation and name.
    fn namespace(&self, name: &str) -> Result<Option<Namespace>, LookupError> {
        if let Some((asked, answer)) = &*self.namespace.borrow()
            && asked == name
        {
            return answer.clone();
        }
        let answer = self.get_object::<Namespace>(
            &kinds::NAMESPACE,
            name,
            None,
            Some(&METADATA_FIELD_MASKS),
        );
        *self.namespace.borrow_mut() = Some((name.to_string(), answer.clone()));
        answer
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

    fn pod_vip(&self, name: &str) -> Result<Option<PodVip>, LookupError> {
        // Named by pods: found among every Vip, never narrowed to the name.
        let found = self.named(&self.all_vips, &kinds::VIP, &VIP_FIELD_MASKS, name)?;
        found
            .map(|item| {
                decode::from_slice::<PodVip>(item).map_err(|e| {
                    LookupError::get(
                        &kinds::VIP,
                        name,
                        None,
                        format!("error deserializing list all resources response: {e}"),
                    )
                })
            })
            .transpose()
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

    /// Where the IPPool CRD declares `spec.subnet` selectable, and the
    /// Subnet exists, a list narrowed to the subnet (one watch cache per
    /// Subnet that exists); otherwise the list of every IPPool, without
    /// decoding the pools that reserve nothing (`answers::reserving_pools`).
    /// Either way the API server's own answer, exact (docs/lookups.md).
    fn reserving_ippools(&self, subnet: &str) -> Result<Vec<IpPool>, LookupError> {
        let of_subnet = |pools: &[IpPool]| {
            pools
                .iter()
                .filter(|p| p.spec.subnet == subnet && !p.spec.namespaces.is_empty())
                .cloned()
                .collect::<Vec<_>>()
        };
        if let Some(Ok(all)) = self.ippools.get() {
            return Ok(of_subnet(all));
        }
        if let Some(answer) = self.subnet_ippools.borrow().get(subnet) {
            return answer.clone();
        }
        // Every pool's bytes already read (a pool named): no second list.
        let answer = if self.all_ippools.get().is_none() && self.ippools_selectable_by(subnet)? {
            self.list_selected(
                &kinds::IPPOOL,
                None,
                Some(format!("{}={subnet}", IpPoolCrd::SUBNET_FIELD)),
                Some(&IPPOOL_LIST_FIELD_MASKS),
            )
            .and_then(|raw| reserving_pools(&raw))
            .map(|pools| of_subnet(&pools))
        } else {
            self.reserving_ippools
                .get_or_init(|| {
                    let raw = self.kind_wide(
                        &self.all_ippools,
                        &kinds::IPPOOL,
                        &IPPOOL_LIST_FIELD_MASKS,
                    )?;
                    reserving_pools(raw)
                })
                .as_ref()
                .map(|pools| of_subnet(pools))
                .map_err(Clone::clone)
        };
        self.subnet_ippools
            .borrow_mut()
            .insert(subnet.to_string(), answer.clone());
        answer
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

    fn subnet(&self, name: &str) -> Result<Option<Rc<Subnet>>, LookupError> {
        if let Some(answer) = self.named_subnets.borrow().get(name) {
            return answer.clone();
        }
        let answer = self.subnet_by_name(name).map(|found| found.map(Rc::new));
        self.named_subnets
            .borrow_mut()
            .insert(name.to_string(), answer.clone());
        answer
    }

    fn subnet_availability(&self, name: &str) -> Result<Option<SubnetAvailability>, LookupError> {
        if let Some(answer) = self.availability.borrow().get(name) {
            return answer.clone();
        }
        let answer = if self.subnet_exists(name)? {
            self.list_selected(
                &kinds::SUBNET,
                None,
                Some(format!("metadata.name={name}")),
                Some(&SUBNET_AVAILABLE_FIELD_MASKS),
            )
            .and_then(|raw| decode_list::<SubnetAvailability>(&kinds::SUBNET, &raw))
            .map(|items| items.into_iter().next())
            .map_err(|e| LookupError::get(&kinds::SUBNET, name, None, e.why))
        } else {
            Ok(None)
        };
        self.availability
            .borrow_mut()
            .insert(name.to_string(), answer.clone());
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
    use crate::k8s::fake::{FakeHost, ippool, object};
    use serde_json::{Value, json};

    /// What the guest receives from policy-server 1.36 for a GET of a missing
    /// object (recorded with kwctl against an API server answering 404),
    /// with `RUST_BACKTRACE=1` in the server's environment. (A pod's IPPool is
    /// now a narrowed list; the GET of the same kind still shows the texts.)
    const MISSING_POOL: &str = "Host error: Callback evaluation failure: Cannot find \
        kubeovn.io/v1/IPPool named 'pool-a' inside of namespace 'None'\n\nStack backtrace:\n   0: <unknown>";

    /// A host that answers every call with one text.
    struct Answering(String);

    impl Host for Answering {
        fn call(&self, _: &str, _: &[u8]) -> Result<Vec<u8>, String> {
            Ok(self.0.clone().into_bytes())
        }
    }

    #[test]
    fn a_subnets_pools_are_listed_alone_only_where_the_crd_selects_them() {
        let crd = |fields: Value| {
            object(
                &kinds::CUSTOM_RESOURCE_DEFINITION,
                kinds::IPPOOL_CRD_NAME,
                json!({"spec": {"versions": [{"name": "v1", "selectableFields": fields}]}}),
            )
        };
        let host = |crd: Option<Value>| {
            let mut host = FakeHost::new([
                object(
                    &kinds::VPC,
                    "ovn-cluster",
                    json!({"status": {"subnets": ["s"]}}),
                ),
                ippool(
                    "p",
                    json!({"ips": ["10.0.0.1"], "namespaces": ["x"], "subnet": "s"}),
                ),
            ]);
            match crd {
                Some(crd) => host.extend([crd]),
                None => host.forbid(&kinds::CUSTOM_RESOURCE_DEFINITION),
            }
            host
        };
        let pool_lists = |host: &FakeHost| -> Vec<String> {
            host.take_calls()
                .into_iter()
                .filter(|c| c.starts_with("list IPPool"))
                .collect()
        };
        let selectable = json!([{"jsonPath": ".spec.subnet"}]);
        let cases = [
            (Some(crd(selectable.clone())), "list IPPool spec.subnet=s"),
            (Some(crd(json!([]))), "list IPPool"),
            (Some(crd(json!([{"jsonPath": ".spec.ips"}]))), "list IPPool"),
            (None, "list IPPool"),
        ];
        for (crd, want) in cases {
            let host = host(crd.clone());
            let cluster = host.cluster();
            let found = cluster.reserving_ippools("s").expect("read");
            assert_eq!(found.len(), 1, "{crd:?}");
            // Asked once per evaluation and subnet.
            cluster.reserving_ippools("s").expect("read");
            assert_eq!(pool_lists(&host), [want], "{crd:?}");
        }
        // A subnet that does not exist: never a list narrowed to its name.
        let host = host(Some(crd(selectable)));
        let cluster = host.cluster();
        assert_eq!(cluster.reserving_ippools("invented").expect("read"), []);
        assert_eq!(pool_lists(&host), ["list IPPool"]);
    }

    #[test]
    fn the_pools_that_reserve_are_every_pool_with_namespaces() {
        let pool = |name: &str, namespaces: &str| {
            format!(
                r#"{{"apiVersion":"kubeovn.io/v1","kind":"IPPool","metadata":{{"annotations":{{}},"managedFields":[],"name":"{name}"}},"spec":{{"ips":["10.0.0.1..10.0.0.9"],{namespaces}"subnet":"s"}}}}"#
            )
        };
        let items = [
            pool("a", ""),
            pool("b", r#""namespaces":[],"#),
            pool("c", r#""namespaces":["x"],"#),
            pool("d", r#""namespaces":null,"#),
            pool("e", r#""namespaces":["y","z"],"#),
        ];
        let list = format!(
            r#"{{"apiVersion":"kubeovn.io/v1","kind":"IPPoolList","metadata":{{}},"items":[{}]}}"#,
            items.join(",")
        );
        // The plain answer (scanned) and one with an escape (decoded whole).
        for text in [list.clone(), list.replace(r#""s"}"#, r#""\u0073"}"#)] {
            let cluster = HostCluster::with_host(Answering(text.clone()));
            let reserving: Vec<String> = cluster
                .reserving_ippools("s")
                .expect("read")
                .iter()
                .map(|p| p.metadata.name.clone())
                .collect();
            let every = HostCluster::with_host(Answering(text));
            let want: Vec<String> = every
                .ippools()
                .expect("read")
                .iter()
                .filter(|p| !p.spec.namespaces.is_empty())
                .map(|p| p.metadata.name.clone())
                .collect();
            assert_eq!(reserving, want);
            assert_eq!(reserving, ["c", "e"]);
        }
        // Not a list: the lookup fails, as decoding every pool fails.
        let cluster = HostCluster::with_host(Answering("null".to_string()));
        assert!(cluster.reserving_ippools("s").is_err());
    }

    #[test]
    fn a_missing_object_is_recognised_from_the_policy_servers_answer() {
        let host = FakeHost::failing(MISSING_POOL);
        assert_eq!(host.cluster().exists(&kinds::IPPOOL, "pool-a"), Ok(false));
        let host = FakeHost::failing(
            "Host error: Callback evaluation failure: Cannot find v1/ConfigMap named \
             'ovn-vpc-nat-config' inside of namespace 'Some(\"kube-system\")'",
        );
        let cm = host.cluster();
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
            let host = FakeHost::failing(&text);
            let err = host
                .cluster()
                .exists(&kinds::IPPOOL, "pool-a")
                .expect_err(&text);
            assert!(
                err.to_string()
                    .starts_with("cannot get kubeovn.io/v1 IPPool \"pool-a\": "),
                "{err:?}"
            );
        }
    }

    #[test]
    fn an_api_error_loses_kube_rs_debug_dump() {
        let host = FakeHost::failing(
            "Host error: Callback evaluation failure: ApiError: ippools.kubeovn.io \"pool-a\" is \
             forbidden: User \"u\" cannot get resource \"ippools\" in API group \"kubeovn.io\" at \
             the cluster scope: Forbidden (Status { status: Some(Failure), code: 403, message: \"…\" })",
        );
        assert_eq!(
            host.cluster()
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
        let host = FakeHost::failing(
            "Host error: Callback evaluation failure: connection refused\n\nStack backtrace:\n   0: x",
        );
        assert_eq!(
            host.cluster()
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
