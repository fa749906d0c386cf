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
use crate::checks::static_ip::landing;
use crate::checks::static_ip::network::{Nic, Tries, annotation, provider_key};
use crate::checks::static_ip::networks::{Entry, NadKind, joined_ips, nad_kind};
use crate::k8s::cluster::Cluster;
use crate::k8s::objects::Subnet;
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

/// Every attachment NIC with a static address or pool, by provider name in
/// name order: the annotations' (I7, `annotated`: [`super::network::attachments`]), each
/// replaced by what the controller
/// makes of the pod's selections (I17). `selections` are the pod's network
/// selections, `None` where they do not parse (the controller then
/// attaches nothing).
pub fn attached_nics<'a>(
    annotations: &'a BTreeMap<String, String>,
    namespace: &str,
    annotated: Vec<Nic<'a>>,
    selections: Option<&[Entry]>,
    cluster: &dyn Cluster,
) -> Result<Vec<Nic<'a>>, Denial> {
    let mut nics: BTreeMap<String, Nic<'a>> = annotated
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
        for nic in selection_nics(
            annotations,
            namespace,
            entry,
            twice,
            cluster,
            &mut providers,
        )? {
            nics.insert(nic.provider_name().to_string(), nic);
        }
    }
    Ok(nics.into_values().collect())
}

/// The Subnets of each provider, by name, indexed once per evaluation: a
/// pod's selections, however many, cost one pass over the Subnets.
#[derive(Default)]
struct Providers(Option<HashMap<String, Vec<String>>>);

impl Providers {
    fn subnets(&mut self, cluster: &dyn Cluster, provider: &str) -> Result<Vec<String>, Denial> {
        if self.0.is_none() {
            self.0 = Some(by_provider(cluster.subnets()?));
        }
        Ok(self
            .0
            .as_ref()
            .and_then(|index| index.get(provider))
            .cloned()
            .unwrap_or_default())
    }
}

/// Whether a selection asks for a static address or pool in any form the
/// controller reads: its `ips`, the per-interface key, or an annotation of
/// a provider it may have.
pub fn has_static_address(annotations: &BTreeMap<String, String>, entry: &Entry) -> bool {
    !joined_ips(entry).is_empty()
        || entry
            .per_interface_key()
            .is_some_and(|key| !annotation(annotations, &key).is_empty())
        || entry.candidate_providers().iter().any(|p| {
            !annotation(annotations, &provider_key(p, "ip_address")).is_empty()
                || !annotation(annotations, &provider_key(p, "ip_pool")).is_empty()
        })
}

/// The NICs kube-ovn-controller allocates for one selection: the one of its
/// NAD when the NAD is Kube-OVN's; when it does not exist yet or is not
/// Kube-OVN's now (another CNI's, or an empty config the controller skips),
/// one for each provider the selection could have once the NAD is created
/// or retyped, wherever a Subnet for that provider exists (I20: the address
/// is checked before it can ever be handed out). `twice`: the same NAD is
/// selected more than once.
fn selection_nics<'a>(
    annotations: &'a BTreeMap<String, String>,
    namespace: &str,
    entry: &Entry,
    twice: bool,
    cluster: &dyn Cluster,
    providers: &mut Providers,
) -> Result<Vec<Nic<'a>>, Denial> {
    let kind = cluster
        .network_attachment_definition(&entry.namespace, &entry.name)?
        .and_then(|nad| nad_kind(&nad.spec.config));
    let forms: Vec<(String, NadKind)> = match kind {
        Some(NadKind::Ovn) => {
            // `<nad>.<ns>.ovn`, with `.<if>` when the NAD is selected more
            // than once and this selection names an interface (pod.go:2237).
            let mut provider = format!("{}.{}.ovn", entry.name, entry.namespace);
            if twice && !entry.interface.is_empty() {
                provider = format!("{provider}.{}", entry.interface);
            }
            vec![(provider, NadKind::Ovn)]
        }
        Some(NadKind::Ipam) => vec![(format!("{}.{}", entry.name, entry.namespace), NadKind::Ipam)],
        // As if Kube-OVN's, in every form it could take (I20): IPAM-only,
        // and OVN with and without the interface suffix.
        None => {
            let ovn = format!("{}.{}.ovn", entry.name, entry.namespace);
            let mut forms = vec![(format!("{}.{}", entry.name, entry.namespace), NadKind::Ipam)];
            if !entry.interface.is_empty() {
                forms.push((format!("{ovn}.{}", entry.interface), NadKind::Ovn));
            }
            forms.push((ovn, NadKind::Ovn));
            forms
        }
    };
    let mut nics = Vec::new();
    for (provider, form) in forms {
        let named = annotation(annotations, &provider_key(&provider, "logical_switch"));
        let candidates = provider_subnets(entry, &provider, named, form, cluster, providers)?;
        let Some(first) = candidates.first() else {
            continue; // "provider %s is not bound to any subnet"
        };
        if let Some(mut nic) = nic_of(annotations, entry, provider, first.clone()) {
            nic.hypothetical = kind.is_none();
            nic.selected = true;
            // I5: where the address lands; only the namespace's list beside
            // the provider's Subnets where no `logical_switch` is named
            // (`nsNets`, pod.go:2532).
            let namespace = named.is_empty().then_some(namespace);
            if candidates.len() > 1 || namespace.is_some() {
                let landed = landing::attachment_landing(&candidates, &nic, namespace, cluster)?;
                nic.logical_switch = Some(Cow::Owned(landed));
                // Each address in every subnet it may land in (I5).
                nic.tries = Tries {
                    listed: landing::attachment_listed(namespace, cluster)?,
                    pinned: candidates,
                    skippable: Vec::new(),
                };
            }
            nics.push(nic);
        }
    }
    Ok(nics)
}

/// The Subnets a selection's provider may start in, by name: none where the
/// controller finds none ("provider %s is not bound to any subnet").
fn provider_subnets(
    entry: &Entry,
    provider: &str,
    named: &str,
    form: NadKind,
    cluster: &dyn Cluster,
    providers: &mut Providers,
) -> Result<Vec<String>, Denial> {
    match form {
        // Its `logical_switch`, else a Subnet whose provider is the
        // provider without the interface suffix (pod.go:2246-2274): the
        // first the controller's cache lists, so any of them.
        NadKind::Ovn if !named.is_empty() => Ok(cluster
            .subnet(named)?
            .map(|s| vec![s.metadata.name.clone()])
            .unwrap_or_default()),
        NadKind::Ovn => {
            let bare = provider
                .strip_suffix(&format!(".{}", entry.interface))
                .unwrap_or(provider);
            providers.subnets(cluster, bare)
        }
        // `<nad>.<ns>`, in a Subnet of that provider; a `logical_switch`
        // annotation does not choose it (pod.go:2314-2330).
        NadKind::Ipam => providers.subnets(cluster, provider),
    }
}

/// The NIC of a selection with this provider in this subnet, `None` where it
/// asks for no static address or pool. The per-interface key first
/// (`acquireStaticAddressHelper`, pod.go:2637), then the selection's `ips`,
/// which `syncKubeOvnNet` writes over the provider's `ip_address`
/// (pod.go:1617), then that annotation; the pool only where none gives an
/// address.
fn nic_of<'a>(
    annotations: &'a BTreeMap<String, String>,
    entry: &Entry,
    provider: String,
    subnet: String,
) -> Option<Nic<'a>> {
    let per_interface = entry
        .per_interface_key()
        .map(|key| annotation(annotations, &key))
        .filter(|v| !v.is_empty());
    // `"ips": [""]` or `[null]` joins to nothing, and the controller reads
    // the provider's `ip_address` then (pod.go:1617 writes only a non-empty
    // join).
    let joined = joined_ips(entry);
    let ip_address = match per_interface {
        Some(value) => Cow::Borrowed(value),
        None if !joined.is_empty() => Cow::Owned(joined),
        None => Cow::Borrowed(annotation(
            annotations,
            &provider_key(&provider, "ip_address"),
        )),
    };
    let ip_pool = annotation(annotations, &provider_key(&provider, "ip_pool"));
    if ip_address.is_empty() && ip_pool.is_empty() {
        return None;
    }
    Some(Nic::new(
        Some(Cow::Owned(provider)),
        ip_address,
        ip_pool,
        Some(Cow::Owned(subnet)),
    ))
}

/// Each provider's Subnets, by name (the controller takes the first its
/// cache lists, in no order the policy can know).
fn by_provider(subnets: &[Subnet]) -> HashMap<String, Vec<String>> {
    let mut index: HashMap<String, Vec<String>> = HashMap::new();
    for subnet in subnets {
        index
            .entry(subnet.spec.provider.clone())
            .or_default()
            .push(subnet.metadata.name.clone());
    }
    for names in index.values_mut() {
        names.sort_unstable();
    }
    index
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::static_ip::network::attachments;
    use crate::checks::static_ip::networks::entries;
    use crate::k8s::fake::{FakeHost, annotations, nad, namespaced, object, subnet};
    use crate::k8s::kinds;
    use rstest::rstest;
    use serde_json::json;

    /// The NADs and Subnets of tests/cases/v01-v22: `attachnet` Kube-OVN's
    /// own (provider `attachnet.default.ovn`, Subnet `attach-net`, and
    /// `attach-z` after it by name), `ipamnet` another CNI with Kube-OVN's
    /// IPAM (provider `ipamnet.default`), `macvlan` another CNI's alone,
    /// `unbound` Kube-OVN's with no Subnet of its provider, `empty` a NAD
    /// without a config.
    fn host() -> FakeHost {
        let ovn = |name: &str| json!({"cniVersion": "0.3.0", "type": "kube-ovn", "provider": format!("{name}.default.ovn")});
        FakeHost::new([
            nad("default", "attachnet", ovn("attachnet")),
            nad("default", "unbound", ovn("unbound")),
            nad(
                "default",
                "ipamnet",
                json!({"type": "macvlan", "ipam": {"type": "kube-ovn", "provider": "ipamnet.default"}}),
            ),
            nad(
                "default",
                "macvlan",
                json!({"type": "macvlan", "ipam": {"type": "host-local", "subnet": "172.17.0.0/24"}}),
            ),
            namespaced(
                &kinds::NETWORK_ATTACHMENT_DEFINITION,
                "default",
                "empty",
                json!({}),
            ),
            subnet(
                "ovn-default",
                json!({"cidrBlock": "10.16.0.0/16", "provider": "ovn"}),
            ),
            subnet(
                "attach-z",
                json!({"cidrBlock": "172.17.0.0/24", "provider": "attachnet.default.ovn"}),
            ),
            subnet(
                "attach-net",
                json!({"cidrBlock": "172.17.0.0/24", "provider": "attachnet.default.ovn"}),
            ),
            subnet(
                "attach-b",
                json!({"cidrBlock": "172.17.0.0/24", "provider": "other"}),
            ),
            subnet(
                "ipam-net",
                json!({"cidrBlock": "172.18.0.0/24", "provider": "ipamnet.default"}),
            ),
        ])
    }

    /// Provider, address, pool and Subnet of each NIC.
    type Found = Vec<(String, String, String, Option<String>)>;

    fn nic(provider: &str, address: &str, pool: &str, subnet: Option<&str>) -> Found {
        vec![(
            provider.into(),
            address.into(),
            pool.into(),
            subnet.map(String::from),
        )]
    }

    #[rstest]
    // v01: the text form, the provider's `ip_address`, the Subnet by provider
    // (the first by name of two).
    #[case::provider_ip_address_subnet_by_provider(
        &[("k8s.v1.cni.cncf.io/networks", "default/attachnet"), ("attachnet.default.ovn.kubernetes.io/ip_address", "172.17.0.11")],
        nic("attachnet.default.ovn", "172.17.0.11", "", Some("attach-net")),
    )]
    // v02/v03: the selection's `ips`, its namespace the pod's by default.
    #[case::selection_ips(
        &[("k8s.v1.cni.cncf.io/networks", r#"[{"name":"attachnet","ips":["172.17.0.12"]}]"#)],
        nic("attachnet.default.ovn", "172.17.0.12", "", Some("attach-net")),
    )]
    #[case::selection_ips_joined(
        &[("k8s.v1.cni.cncf.io/networks", r#"[{"name":"attachnet","ips":["172.17.0.12","fd00::12"]}]"#)],
        nic("attachnet.default.ovn", "172.17.0.12,fd00::12", "", Some("attach-net")),
    )]
    // v04: the per-interface key before the provider's `ip_address`.
    #[case::per_interface_key_before_provider_ip_address(
        &[
            ("k8s.v1.cni.cncf.io/networks", r#"[{"name":"attachnet","namespace":"default","interface":"net1"}]"#),
            ("attachnet.default.kubernetes.io/ip_address.net1", "172.17.0.11"),
            ("attachnet.default.ovn.kubernetes.io/ip_address", "172.17.0.12"),
        ],
        nic("attachnet.default.ovn", "172.17.0.11", "", Some("attach-net")),
    )]
    #[case::per_interface_key_before_selection_ips(
        &[
            ("k8s.v1.cni.cncf.io/networks", r#"[{"name":"attachnet","interface":"net1","ips":["172.17.0.13"]}]"#),
            ("attachnet.default.kubernetes.io/ip_address.net1", "172.17.0.11"),
        ],
        nic("attachnet.default.ovn", "172.17.0.11", "", Some("attach-net")),
    )]
    #[case::selection_ips_before_provider_ip_address(
        &[
            ("k8s.v1.cni.cncf.io/networks", r#"[{"name":"attachnet","ips":["172.17.0.13"]}]"#),
            ("attachnet.default.ovn.kubernetes.io/ip_address", "172.17.0.12"),
        ],
        nic("attachnet.default.ovn", "172.17.0.13", "", Some("attach-net")),
    )]
    // v15: the text form's `@<if>` names the interface.
    #[case::text_form_interface_per_interface_key(
        &[("k8s.v1.cni.cncf.io/networks", "default/attachnet@net1"), ("attachnet.default.kubernetes.io/ip_address.net1", "172.17.0.11")],
        nic("attachnet.default.ovn", "172.17.0.11", "", Some("attach-net")),
    )]
    // The pool only where no address is given; an address leaves the pool beside it.
    #[case::provider_pool(
        &[("k8s.v1.cni.cncf.io/networks", "attachnet"), ("attachnet.default.ovn.kubernetes.io/ip_pool", "172.17.0.20,172.17.0.21")],
        nic("attachnet.default.ovn", "", "172.17.0.20,172.17.0.21", Some("attach-net")),
    )]
    #[case::address_and_pool(
        &[
            ("k8s.v1.cni.cncf.io/networks", "attachnet"),
            ("attachnet.default.ovn.kubernetes.io/ip_address", "172.17.0.11"),
            ("attachnet.default.ovn.kubernetes.io/ip_pool", "p"),
        ],
        nic("attachnet.default.ovn", "172.17.0.11", "p", Some("attach-net")),
    )]
    // v05: no NAD: no NIC from the selection, nor from annotations it has not.
    #[case::nad_missing(
        &[("k8s.v1.cni.cncf.io/networks", r#"[{"name":"missing","ips":["172.17.0.11"]}]"#)],
        vec![],
    )]
    // v06: another CNI's NAD: nothing to allocate.
    #[case::nad_not_kube_ovn(
        &[("k8s.v1.cni.cncf.io/networks", r#"[{"name":"macvlan","ips":["172.17.0.11"]}]"#)],
        vec![],
    )]
    #[case::nad_without_config(
        &[("k8s.v1.cni.cncf.io/networks", r#"[{"name":"empty","ips":["172.17.0.11"]}]"#)],
        vec![],
    )]
    // No Subnet of the provider: "provider %s is not bound to any subnet".
    #[case::provider_bound_to_no_subnet(
        &[("k8s.v1.cni.cncf.io/networks", r#"[{"name":"unbound","ips":["172.17.0.11"]}]"#)],
        vec![],
    )]
    // An unallocated selection leaves the annotations' NIC as I7 reads it.
    #[case::nad_missing_keeps_the_annotations_nic(
        &[("k8s.v1.cni.cncf.io/networks", "missing"), ("missing.default.ovn.kubernetes.io/ip_address", "172.17.0.11")],
        nic("missing.default.ovn", "172.17.0.11", "", None),
    )]
    // v07: Kube-OVN's IPAM in another CNI: provider `<nad>.<ns>`.
    #[case::ipam_only_nad(
        &[("k8s.v1.cni.cncf.io/networks", "ipamnet"), ("ipamnet.default.kubernetes.io/ip_address", "172.18.0.11")],
        nic("ipamnet.default", "172.18.0.11", "", Some("ipam-net")),
    )]
    // An IPAM-only NAD reads no `logical_switch`.
    #[case::ipam_only_nad_ignores_logical_switch(
        &[
            ("k8s.v1.cni.cncf.io/networks", "ipamnet"),
            ("ipamnet.default.kubernetes.io/ip_address", "172.18.0.11"),
            ("ipamnet.default.kubernetes.io/logical_switch", "attach-b"),
        ],
        nic("ipamnet.default", "172.18.0.11", "", Some("ipam-net")),
    )]
    // v08: a NAD selected twice: the interface joins the provider, the
    // Subnet is still the bare provider's.
    #[case::nad_selected_twice_interface_provider(
        &[("k8s.v1.cni.cncf.io/networks", r#"[{"name":"attachnet","interface":"net1"},{"name":"attachnet","interface":"net2","ips":["172.17.0.11"]}]"#)],
        nic("attachnet.default.ovn.net2", "172.17.0.11", "", Some("attach-net")),
    )]
    // v09: the default network's selection is a selection too.
    #[case::default_network_selection(
        &[("v1.multus-cni.io/default-network", r#"[{"name":"attachnet","namespace":"default","ips":["172.17.0.11"]}]"#)],
        nic("attachnet.default.ovn", "172.17.0.11", "", Some("attach-net")),
    )]
    // v12: `logical_switch` names the Subnet, whatever its provider.
    #[case::logical_switch_named_subnet_wins(
        &[
            ("k8s.v1.cni.cncf.io/networks", "attachnet"),
            ("attachnet.default.ovn.kubernetes.io/logical_switch", "attach-b"),
            ("attachnet.default.ovn.kubernetes.io/ip_address", "172.17.0.11"),
        ],
        nic("attachnet.default.ovn", "172.17.0.11", "", Some("attach-b")),
    )]
    // A `logical_switch` naming no Subnet: the selection is not allocated,
    // the annotations' NIC stays as I7 reads it.
    #[case::logical_switch_names_a_missing_subnet(
        &[
            ("k8s.v1.cni.cncf.io/networks", "attachnet"),
            ("attachnet.default.ovn.kubernetes.io/logical_switch", "gone"),
            ("attachnet.default.ovn.kubernetes.io/ip_address", "172.17.0.11"),
        ],
        nic("attachnet.default.ovn", "172.17.0.11", "", Some("gone")),
    )]
    // v11: selections that do not parse: the controller attaches nothing,
    // and the annotations' NIC stays.
    #[case::selections_unparsable(
        &[("k8s.v1.cni.cncf.io/networks", "[{"), ("attachnet.default.ovn.kubernetes.io/ip_address", "172.17.0.11")],
        nic("attachnet.default.ovn", "172.17.0.11", "", None),
    )]
    // A selection with nothing static is not looked up.
    #[case::selection_without_static_address(
        &[("k8s.v1.cni.cncf.io/networks", "attachnet")],
        vec![],
    )]
    fn nics_of_the_selections(#[case] pairs: &[(&str, &str)], #[case] want: Found) {
        let annotations = annotations(pairs);
        let selections = entries(&annotations, "default");
        let found: Found = attached_nics(
            &annotations,
            "default",
            attachments(&annotations),
            selections.as_deref(),
            &host().cluster(),
        )
        .unwrap_or_else(|e| panic!("{e:?}"))
        .into_iter()
        .map(|nic| {
            (
                nic.provider_name().to_string(),
                nic.ip_address.into_owned(),
                nic.ip_pool.to_string(),
                nic.logical_switch.map(Cow::into_owned),
            )
        })
        .collect();
        assert_eq!(found, want);
    }

    /// I5 for an attachment with no `logical_switch`: any Subnet of its
    /// provider (the controller's cache order is no order), then the
    /// namespace's list (`nsNets`, pod.go:2532, :3124), where the address
    /// lands in the first whose CIDR holds it.
    #[rstest]
    #[case::the_provider_subnet_that_holds_it("172.19.0.5", "attach-y")]
    #[case::the_first_by_name_where_several_do("172.17.0.11", "attach-net")]
    #[case::the_namespace_subnet_where_none_of_the_provider_does("10.16.0.50", "ovn-default")]
    #[case::the_first_provider_subnet_where_none_does("192.0.2.1", "attach-net")]
    fn where_an_attachment_lands(#[case] address: &str, #[case] subnet_name: &str) {
        let mut host = host();
        host.extend([
            subnet(
                "attach-y",
                json!({"cidrBlock": "172.19.0.0/24", "provider": "attachnet.default.ovn"}),
            ),
            object(
                &kinds::NAMESPACE,
                "default",
                json!({"metadata": {"annotations": {
                    "ovn.kubernetes.io/logical_switch": "ovn-default"}}}),
            ),
        ]);
        let annotations = annotations(&[(
            "k8s.v1.cni.cncf.io/networks",
            &format!(r#"[{{"name":"attachnet","ips":["{address}"]}}]"#),
        )]);
        let selections = entries(&annotations, "default");
        let nics = attached_nics(
            &annotations,
            "default",
            attachments(&annotations),
            selections.as_deref(),
            &host.cluster(),
        )
        .unwrap_or_else(|e| panic!("{e:?}"));
        let landed: Vec<_> = nics.iter().map(|n| n.logical_switch.as_deref()).collect();
        assert_eq!(landed, vec![Some(subnet_name)]);
    }

    #[test]
    fn a_selection_without_static_address_costs_no_lookup() {
        let host = host();
        let annotations = annotations(&[("k8s.v1.cni.cncf.io/networks", "attachnet,ipamnet")]);
        let selections = entries(&annotations, "default");
        assert_eq!(
            attached_nics(
                &annotations,
                "default",
                attachments(&annotations),
                selections.as_deref(),
                &host.cluster()
            ),
            Ok(vec![])
        );
        assert_eq!(host.take_calls(), Vec::<String>::new());
    }
}
