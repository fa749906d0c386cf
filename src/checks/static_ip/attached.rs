//! The attachment NICs of a claim and their static addresses: those the
//! `<provider>.kubernetes.io/…` annotations describe (I7), and those
//! kube-ovn-controller finds from the pod's network selections and their
//! NetworkAttachmentDefinitions (I17), as `getPodAttachmentNet` and
//! `acquireAddress` find them (`pkg/controller/pod.go` at 1533681d7a6b).
//!
//! A selection's NIC replaces the annotations' NIC of the same provider;
//! where the controller cannot allocate a selection (its NAD missing, not
//! Kube-OVN's, no subnet for it) it adds nothing, and the annotations'
//! NIC, if any, is checked as I7 checks it.

use crate::admission::denial::Denial;
use crate::checks::static_ip::network::{Nic, annotation, attachments, provider_key};
use crate::checks::static_ip::networks::{Entry, NadKind, nad_kind};
use crate::k8s::cluster::Cluster;
use crate::k8s::objects::Subnet;
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

/// Every attachment NIC with a static address or pool, by provider name in
/// name order: the annotations' (I7), each replaced by what the controller
/// makes of the pod's selections (I17). `selections` are the pod's network
/// selections, `None` where they do not parse (the controller then
/// attaches nothing).
pub fn attached_nics<'a>(
    annotations: &'a BTreeMap<String, String>,
    selections: Option<&[Entry]>,
    cluster: &dyn Cluster,
) -> Result<Vec<Nic<'a>>, Denial> {
    let mut nics: BTreeMap<String, Nic<'a>> = attachments(annotations)
        .into_iter()
        .map(|nic| (nic.provider_name().to_string(), nic))
        .collect();
    let selections = selections.unwrap_or_default();
    let mut counts: HashMap<String, usize> = HashMap::new();
    for entry in selections {
        *counts.entry(entry.nad_key()).or_default() += 1;
    }
    let mut providers = Providers::default();
    for entry in selections {
        if !has_static_address(annotations, entry) {
            continue; // nothing to check: no lookup
        }
        let twice = counts.get(&entry.nad_key()).is_some_and(|n| *n > 1);
        if let Some(nic) = selection_nic(annotations, entry, twice, cluster, &mut providers)? {
            nics.insert(nic.provider_name().to_string(), nic);
        }
    }
    Ok(nics.into_values().collect())
}

/// The Subnet of each provider (the first by name where several have it),
/// indexed once per evaluation: a pod's selections, however many, cost one
/// pass over the Subnets.
#[derive(Default)]
struct Providers(Option<HashMap<String, String>>);

impl Providers {
    fn subnet(&mut self, cluster: &dyn Cluster, provider: &str) -> Result<Option<String>, Denial> {
        if self.0.is_none() {
            self.0 = Some(by_provider(cluster.subnets()?));
        }
        Ok(self
            .0
            .as_ref()
            .and_then(|index| index.get(provider))
            .cloned())
    }
}

/// Whether a selection asks for a static address or pool in any form the
/// controller reads: its `ips`, the per-interface key, or an annotation of
/// a provider it may have.
pub fn has_static_address(annotations: &BTreeMap<String, String>, entry: &Entry) -> bool {
    !entry.ips.is_empty()
        || entry
            .per_interface_key()
            .is_some_and(|key| !annotation(annotations, &key).is_empty())
        || entry.candidate_providers().iter().any(|p| {
            !annotation(annotations, &provider_key(p, "ip_address")).is_empty()
                || !annotation(annotations, &provider_key(p, "ip_pool")).is_empty()
        })
}

/// The NIC kube-ovn-controller allocates for one selection, `None` where it
/// allocates none. `twice`: the same NAD is selected more than once.
fn selection_nic<'a>(
    annotations: &'a BTreeMap<String, String>,
    entry: &Entry,
    twice: bool,
    cluster: &dyn Cluster,
    providers: &mut Providers,
) -> Result<Option<Nic<'a>>, Denial> {
    let Some(nad) = cluster.network_attachment_definition(&entry.namespace, &entry.name)? else {
        return Ok(None);
    };
    let Some(kind) = nad_kind(&nad.spec.config) else {
        return Ok(None);
    };
    let (provider, subnet) = match kind {
        NadKind::Ovn => {
            // `<nad>.<ns>.ovn`, with `.<if>` when the NAD is selected more
            // than once and this selection names an interface (pod.go:2237).
            let mut provider = format!("{}.{}.ovn", entry.name, entry.namespace);
            if twice && !entry.interface.is_empty() {
                provider = format!("{provider}.{}", entry.interface);
            }
            // Its `logical_switch`, else the Subnet whose provider is the
            // provider without the interface suffix (pod.go:2246-2274).
            let named = annotation(annotations, &provider_key(&provider, "logical_switch"));
            let subnet = if named.is_empty() {
                let bare = provider
                    .strip_suffix(&format!(".{}", entry.interface))
                    .unwrap_or(&provider);
                providers.subnet(cluster, bare)?
            } else {
                cluster.subnet(named)?.map(|s| s.metadata.name)
            };
            (provider, subnet)
        }
        // `<nad>.<ns>`, in the Subnet of that provider; a `logical_switch`
        // annotation is not read (pod.go:2314-2330).
        NadKind::Ipam => {
            let provider = format!("{}.{}", entry.name, entry.namespace);
            let subnet = providers.subnet(cluster, &provider)?;
            (provider, subnet)
        }
    };
    let Some(subnet) = subnet else {
        return Ok(None); // "provider %s is not bound to any subnet"
    };
    // The per-interface key first (`acquireStaticAddressHelper`,
    // pod.go:2637), then the selection's `ips`, which `syncKubeOvnNet`
    // writes over the provider's `ip_address` (pod.go:1617), then that
    // annotation; the pool only where none gives an address.
    let per_interface = entry
        .per_interface_key()
        .map(|key| annotation(annotations, &key))
        .filter(|v| !v.is_empty());
    let ip_address = match per_interface {
        Some(value) => Cow::Borrowed(value),
        None if !entry.ips.is_empty() => Cow::Owned(entry.ips.join(",")),
        None => Cow::Borrowed(annotation(
            annotations,
            &provider_key(&provider, "ip_address"),
        )),
    };
    let ip_pool = annotation(annotations, &provider_key(&provider, "ip_pool"));
    if ip_address.is_empty() && ip_pool.is_empty() {
        return Ok(None);
    }
    Ok(Some(Nic {
        provider: Some(Cow::Owned(provider)),
        ip_address,
        ip_pool,
        logical_switch: Some(Cow::Owned(subnet)),
    }))
}

/// Each provider's Subnet: the first by name where several have it (the
/// controller takes the first its cache lists).
fn by_provider(subnets: &[Subnet]) -> HashMap<String, String> {
    let mut index: HashMap<String, String> = HashMap::new();
    for subnet in subnets {
        let name = &subnet.metadata.name;
        index
            .entry(subnet.spec.provider.clone())
            .and_modify(|first| {
                if name < first {
                    first.clone_from(name);
                }
            })
            .or_insert_with(|| name.clone());
    }
    index
}
