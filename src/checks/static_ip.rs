//! Static-IP admission for Pods and workload templates (kube-ovn-webhook's
//! `static_ip.go`), with the contract's improvements I1–I7, I10, I12, I13,
//! I15–I19 and I21 (named in [`crate::checks`]), and §4's cap on NICs.
//! The entries ([`admit_pod`], [`admit_workload`]) and the order of the
//! checks ([`validate`]) are here; below, the pieces by what they do:
//! [`network`] (the annotations and `ValidatePodNetwork`), [`networks`] and
//! [`attached`] (the NICs of a pod's network selections, I17),
//! [`conflicts`], [`status`] (the subnet's record of what is in use),
//! [`pools`], [`in_subnet`], [`owner`] and [`vip`] (I21).
//!
//! Order, as upstream and then the new checks: trigger (no exemption by
//! annotation, I16), `ValidatePodNetwork` (400), `ip_address` family
//! uniqueness and conflicts (403), `ip_pool` name lookup or conflicts and
//! the group the pod will take (403, I3 and I13), attachment networks (I7
//! and I17, 403), pools reserved for other namespaces (I19, 403), the Vip
//! it takes (I21, 403), then static IPs against their subnet (I6, 400).

pub mod attached;
pub mod conflicts;
pub mod in_subnet;
pub mod landing;
pub mod lifecycle;
pub mod network;
pub mod networks;
pub mod owner;
pub mod pools;
pub mod status;
pub mod vip;

use crate::admission::denial::Denial;
use crate::admission::{self, Operation};
use crate::k8s::cluster::Cluster;
use crate::k8s::objects::{Pod, Replicas, WorkloadObject};
use crate::settings::Settings;
use attached::{attached_nics, has_static_address};
use conflicts::Checker;
use in_subnet::check_in_subnet;
use lifecycle::Allocating;
use network::{Nic, OVN_PROVIDER, annotation, attachments, primary};
use networks::{Entry, NadLoad, Selections};
use owner::{
    Claim, Subject, Workload, WorkloadKind, is_vm_pod, pod_owner_name, pod_workload,
    statefulset_pod,
};
use pools::is_address_pool;
use std::collections::{BTreeMap, HashSet};

/// The annotation that marks a KubeVirt live-migration target pod: upstream
/// skips every check of a pod that carries it; the policy does not (I16).
pub const MIGRATION_JOB: &str = "kubevirt.io/migrationJobName";

/// Admits a Pod CREATE: the pod's own annotations, its owner and the
/// workload that controls it. A Pod UPDATE is checked for the NICs
/// kube-ovn-controller will allocate because of it (I18).
pub fn admit_pod(
    request: &admission::Request<'_>,
    settings: &Settings,
    cluster: &dyn Cluster,
) -> Result<(), Denial> {
    if !matches!(request.operation, Operation::Create | Operation::Update) {
        return Ok(());
    }
    let pod: Pod = request.object()?;
    let meta = &pod.metadata;
    let name = if meta.name.is_empty() {
        &request.name
    } else {
        &meta.name
    };
    let namespace = if request.namespace.is_empty() {
        &meta.namespace
    } else {
        &request.namespace
    };
    let controller = pod_workload(&meta.owner_references);
    let statefulset = statefulset_pod(name, &meta.owner_references);
    let owner_name = pod_owner_name(name, &meta.owner_references);
    // `isVMPod` (pod.go:3023): by its ownerReferences, whatever the names.
    let vm = is_vm_pod(&meta.owner_references);
    let selections = networks::read(&meta.annotations, namespace);
    let scope = if request.operation == Operation::Update {
        let owned = statefulset.is_some() || vm;
        let allocating = lifecycle::allocating(&pod, &selections, owned, lifecycle::now());
        // An old object that does not decode: its selections count as changed.
        let old = request.old_object_if_any::<Pod>().ok().flatten();
        let reselected = old.is_none_or(|old| {
            selection_annotations(&old.metadata.annotations)
                != selection_annotations(&meta.annotations)
        });
        // Nothing to allocate and the selections as they were: nothing the
        // controller does after this update differs from before it (an
        // update of a pod being deleted, of a running allocated one).
        if allocating == Allocating::Nothing && !reselected {
            return Ok(());
        }
        Scope::Update(allocating)
    } else {
        Scope::Create
    };
    check_nic_count(&meta.annotations, &selections, settings)?;
    refuse_crashing_selections(&selections, cluster)?;
    let claim = Claim {
        annotations: &meta.annotations,
        namespace,
        owner_name,
        subject: Subject::Pod {
            controller,
            statefulset,
            vm,
        },
    };
    validate_nics(&claim, &selections, settings, cluster, &scope, 0).map(drop)
}

/// The annotations that make a pod's network selections.
fn selection_annotations(annotations: &BTreeMap<String, String>) -> [Option<&String>; 2] {
    [
        annotations.get(networks::NETWORKS),
        annotations.get(networks::DEFAULT_NETWORK),
    ]
}

/// Which NICs of a claim a decision checks, and how.
enum Scope {
    /// A CREATE, or a workload: every NIC, with every rule.
    Create,
    /// A Pod UPDATE (I18): the NICs kube-ovn-controller allocates after it.
    /// The primary NIC's address conflicts are left to the controller's
    /// IPAM, which refuses them itself on that NIC (the conflict check is
    /// off only for an attachment with the migration key, pod.go:2241 and
    /// :2764), as upstream leaves every Pod UPDATE (public case 018).
    Update(Allocating),
}

impl Scope {
    /// Whether the controller allocates any NIC after this decision.
    fn allocates(&self) -> bool {
        !matches!(self, Scope::Update(Allocating::Nothing))
    }

    fn checks(&self, provider: &str) -> bool {
        match self {
            Scope::Create => true,
            Scope::Update(Allocating::Nothing) => false,
            Scope::Update(Allocating::Every) => true,
            Scope::Update(Allocating::Only(providers)) => providers.contains(provider),
        }
    }
}

/// §4, before any lookup: a pod or template asking for more NICs than
/// `maxNetworksPerPod` is refused (400), so that no request's NICs can
/// hold a policy-server worker. Linear in the annotations (at most 256 KiB).
fn check_nic_count(
    annotations: &BTreeMap<String, String>,
    selections: &Selections<'_>,
    settings: &Settings,
) -> Result<(), Denial> {
    let max = settings.max_networks_per_pod();
    let count = nic_count(
        annotations,
        selections.entries.as_deref().unwrap_or_default(),
    );
    if u64::try_from(count).unwrap_or(u64::MAX) > max {
        return Err(Denial::bad_request(format!(
            "{count} network interfaces requested, at most {max} are allowed (setting maxNetworksPerPod)"
        )));
    }
    Ok(())
}

/// The NICs a pod or template asks for besides the primary one: every
/// network selection, and every provider of a
/// `<provider>.kubernetes.io/{ip_address,ip_pool,logical_switch}`
/// annotation that is neither the primary NIC's nor one a selection may
/// have (such an annotation describes the selection's NIC).
fn nic_count(annotations: &BTreeMap<String, String>, selections: &[Entry]) -> usize {
    let selected: HashSet<String> = selections
        .iter()
        .flat_map(Entry::candidate_providers)
        .collect();
    let providers: HashSet<&str> = annotations
        .keys()
        .filter_map(|key| {
            ["ip_address", "ip_pool", "logical_switch"]
                .iter()
                .find_map(|what| key.strip_suffix(what)?.strip_suffix(".kubernetes.io/"))
        })
        .filter(|p| !p.is_empty() && *p != OVN_PROVIDER && !selected.contains(*p))
        .collect();
    selections.len() + providers.len()
}

/// Bad input (400): network selections kube-ovn-controller would crash on
/// or cannot read, whatever else the pod asks for: a selection that is
/// `null` ([`networks::null_selection`]), a list Go cannot decode
/// ([`networks::unreadable`], §5), or one naming a
/// NetworkAttachmentDefinition whose config it panics on or cannot load
/// ([`networks::nad_load`]; `getPodAttachmentNet` reads every selected
/// NAD's config, static address or not).
fn refuse_crashing_selections(
    selections: &Selections<'_>,
    cluster: &dyn Cluster,
) -> Result<(), Denial> {
    if let Some((key, value)) = selections.null {
        return Err(Denial::bad_request(format!(
            "{value} is not a valid {key}: a network selection is null"
        )));
    }
    // §5: a list Go cannot read fails every network of the pod in the
    // controller (`getPodAttachmentNet`, pod.go:2109); never "nothing to check".
    if let Some((key, value)) = selections.unreadable {
        return Err(Denial::bad_request(format!(
            "{value} is not a valid {key}: kube-ovn-controller cannot read it as network selections"
        )));
    }
    let mut seen = HashSet::new();
    for entry in selections.entries.as_deref().unwrap_or_default() {
        if !seen.insert((entry.namespace.clone(), entry.name.clone())) {
            continue;
        }
        let Some(nad) = cluster.network_attachment_definition(&entry.namespace, &entry.name)?
        else {
            continue;
        };
        // An empty config is skipped by the controller (pod.go:2215).
        let why = match networks::nad_load(&nad.spec.config) {
            _ if nad.spec.config.is_empty() => continue,
            NadLoad::Panic => "its plugins list is empty or holds a null",
            NadLoad::Error => "it is not a CNI config or config list Go decodes",
            NadLoad::Kind(_) | NadLoad::Other => continue,
        };
        return Err(Denial::bad_request(format!(
            "network-attachment-definition {}/{} cannot be selected: kube-ovn-controller cannot read its config ({why})",
            entry.namespace, entry.name
        )));
    }
    Ok(())
}

/// Admits a Deployment, StatefulSet, DaemonSet, Job or CronJob CREATE, or an
/// UPDATE whose template's static-IP annotations changed (I10). Admitted, it
/// returns its warnings (I13): the only check that warns.
pub fn admit_workload(
    request: &admission::Request<'_>,
    settings: &Settings,
    cluster: &dyn Cluster,
) -> Result<Vec<String>, Denial> {
    let Some(kind) = WorkloadKind::from_kind(&request.kind.kind) else {
        return Ok(Vec::new());
    };
    if !matches!(request.operation, Operation::Create | Operation::Update) {
        return Ok(Vec::new());
    }
    let workload: WorkloadObject = request.object()?;
    let annotations = template_annotations(&workload, kind);
    let namespace = if request.namespace.is_empty() {
        &workload.metadata.namespace
    } else {
        &request.namespace
    };
    let selections = networks::read(annotations, namespace);
    check_nic_count(annotations, &selections, settings)?;
    refuse_crashing_selections(&selections, cluster)?;
    if request.operation == Operation::Update {
        // An old object that does not decode counts as changed.
        let old = request.old_object_if_any::<WorkloadObject>().ok().flatten();
        if old.is_some_and(|old| {
            static_ip_annotations(template_annotations(&old, kind))
                == static_ip_annotations(annotations)
        }) {
            return Ok(Vec::new());
        }
    }
    let name = workload.metadata.name.as_str();
    let claim = Claim {
        annotations,
        namespace,
        owner_name: name,
        subject: Subject::Workload(Workload {
            kind,
            name: name.to_string(),
        }),
    };
    let replicas = match (kind, &workload.spec.replicas) {
        (WorkloadKind::Deployment | WorkloadKind::StatefulSet, Replicas(Some(n))) => {
            u64::try_from(*n).unwrap_or(0)
        }
        _ => 0,
    };
    validate_nics(
        &claim,
        &selections,
        settings,
        cluster,
        &Scope::Create,
        replicas,
    )
}

/// I13: the warnings for a Deployment's or StatefulSet's template whose
/// address pools have fewer groups than `replicas`: one per distinct count,
/// primary NIC first, then attachments by provider name. Read from the NICs
/// the checks already parsed.
pub fn pool_warnings(nics: &[&Nic<'_>], replicas: u64) -> Vec<String> {
    let mut warnings = Vec::new();
    if replicas == 0 {
        return warnings;
    }
    for pool in nics.iter().filter_map(|nic| nic.address_pool()) {
        let groups = pool.group_count();
        if u64::try_from(groups).is_ok_and(|groups| groups < replicas) {
            let warning = format!("ip_pool has {groups} entries for {replicas} replicas");
            if !warnings.contains(&warning) {
                warnings.push(warning);
            }
        }
    }
    warnings
}

/// The `…kubernetes.io/ip_address` and `…kubernetes.io/ip_pool` annotations.
fn static_ip_annotations(annotations: &BTreeMap<String, String>) -> Vec<(&String, &String)> {
    annotations
        .iter()
        .filter(|(k, _)| {
            k.ends_with("kubernetes.io/ip_address") || k.ends_with("kubernetes.io/ip_pool")
        })
        .collect()
}

/// Where a workload of that kind keeps its pod template's annotations.
fn template_annotations(
    workload: &WorkloadObject,
    kind: WorkloadKind,
) -> &BTreeMap<String, String> {
    let template = match kind {
        WorkloadKind::CronJob => &workload.spec.job_template.spec.template,
        _ => &workload.spec.template,
    };
    &template.metadata.annotations
}

/// Validates a claim, its checks in upstream's order; `Ok` admits it.
pub fn validate(
    claim: &Claim<'_>,
    settings: &Settings,
    cluster: &dyn Cluster,
) -> Result<(), Denial> {
    let selections = networks::read(claim.annotations, claim.namespace);
    validate_nics(claim, &selections, settings, cluster, &Scope::Create, 0).map(drop)
}

/// [`validate`], for the NICs of a [`Scope`]; admitted, the warnings of a
/// template with `replicas` ([`pool_warnings`], I13; none for 0).
fn validate_nics(
    claim: &Claim<'_>,
    selections: &Selections<'_>,
    settings: &Settings,
    cluster: &dyn Cluster,
    scope: &Scope,
    replicas: u64,
) -> Result<Vec<String>, Denial> {
    let annotations = claim.annotations;
    let primary = primary(annotations);
    let selections = selections.entries.as_deref();
    let annotated = attachments(annotations);
    if !triggered(claim, &primary, &annotated, selections) {
        return Ok(Vec::new());
    }
    network::validate(annotations).map_err(Denial::bad_request)?;

    let attached: Vec<Nic<'_>> =
        attached_nics(annotations, claim.namespace, annotated, selections, cluster)?
            .into_iter()
            .filter(|nic| scope.checks(nic.provider_name()))
            .collect();
    let mut primary = scope.checks(OVN_PROVIDER).then_some(primary);
    let mut primary_subnet = match &mut primary {
        Some(p) if !p.ip_address.is_empty() || is_address_pool(p.ip_pool) => {
            p.tries = landing::primary_tries(claim, p, cluster)?;
            Some(landing::landing(
                &landing::candidates(&p.tries),
                &landing::lands_by(p),
                cluster,
            )?)
        }
        _ => None, // nothing of the primary NIC is looked up
    };
    let nics: Vec<&Nic<'_>> = primary.iter().chain(&attached).collect();
    let check = Checker::new(claim, cluster, settings.use_subnet_status(), &nics);
    // I5, per address: the other subnets each NIC's addresses may land in.
    let elsewhere = |nic: &Nic<'_>, own: Option<&str>| {
        landing::elsewhere(&nic.tries, own, &check.given(nic), false, cluster)
    };
    // Each NIC lands in the first subnet that may receive its addresses and
    // takes them (the controller tries the next on the IPAM's refusal,
    // pod.go:2649-2656, 2706-2720): only where none does is it refused,
    // with the first one's reason.
    let land = |nic: &Nic<'_>, subnet: &str| -> Result<String, Denial> {
        let mut chosen = check.nic(nic, subnet).map(|()| subnet.to_string());
        if chosen.is_err() {
            let refused =
                landing::elsewhere(&nic.tries, Some(subnet), &check.given(nic), true, cluster)?;
            for (other, _) in refused {
                if check.nic(nic, &other).is_ok() {
                    chosen = Ok(other);
                    break;
                }
            }
        }
        chosen
    };
    if let Some(p) = primary.as_ref().filter(|_| matches!(scope, Scope::Create)) {
        match &primary_subnet {
            Some(subnet) => primary_subnet = Some(land(p, subnet)?),
            None => check.pool_name(p.ip_pool)?,
        }
    }
    let mut landed: Vec<Option<String>> = Vec::with_capacity(attached.len());
    for nic in &attached {
        let Some(subnet) = &nic.logical_switch else {
            // I13's ordinal needs no lookup, but only a selection's NIC is
            // ever allocated (`getPodKubeovnNets`): the code wins.
            if nic.selected {
                check.pool_ordinal(nic)?;
            }
            landed.push(None);
            continue;
        };
        let chosen = land(nic, subnet)?;
        for (other, addresses) in elsewhere(nic, Some(&chosen))? {
            check.unchecked_in(nic, &other, &addresses)?;
        }
        landed.push(Some(chosen));
    }
    if settings.check_ippool_namespaces() {
        if let Some(p) = &primary {
            check.reserved(p, primary_subnet.as_deref())?;
            for (other, addresses) in elsewhere(p, primary_subnet.as_deref())? {
                check.reserved_in(&other, &addresses)?;
            }
        }
        for (nic, subnet) in attached.iter().zip(&landed) {
            check.reserved(nic, subnet.as_deref())?;
            for (other, addresses) in elsewhere(nic, subnet.as_deref())? {
                check.reserved_in(&other, &addresses)?;
            }
        }
    }
    // Every NIC the controller allocates takes the Vip (`acquireAddress`
    // → `podReuseVip`, pod.go:2494-2507, per NIC): checked whenever this
    // decision allocates any NIC, an attachment alone included.
    if scope.allocates() {
        vip::check_vip(claim, cluster)?;
    }
    if let (Some(p), Some(subnet)) = (&primary, &primary_subnet) {
        check_in_subnet(p, subnet, cluster)?;
    }
    // Not for a NIC of a selection whose NAD is not Kube-OVN's yet (I20):
    // nothing allocates it now, and an address outside the subnet of a
    // later form is only refused by the controller then.
    for (nic, subnet) in attached.iter().zip(&landed) {
        if let Some(subnet) = subnet.as_ref().filter(|_| !nic.hypothetical) {
            check_in_subnet(nic, subnet, cluster)?;
        }
    }
    Ok(pool_warnings(&nics, replicas))
}

/// Whether a claim asks for any static address, pool or Vip (I21).
/// Upstream validates a workload only for its template's `ip_pool`; a pod
/// for any NIC's address or pool, including those only its network
/// selections give (I17). No annotation exempts a pod (I16).
fn triggered(
    claim: &Claim<'_>,
    primary: &Nic<'_>,
    attached: &[Nic<'_>],
    selections: Option<&[Entry]>,
) -> bool {
    if !annotation(claim.annotations, vip::VIP).is_empty() {
        return true; // I21
    }
    match claim.subject {
        Subject::Pod { .. } => {
            !primary.ip_address.is_empty()
                || !primary.ip_pool.is_empty()
                || attached
                    .iter()
                    .any(|n| !n.ip_address.is_empty() || !n.ip_pool.is_empty())
                || selections
                    .unwrap_or_default()
                    .iter()
                    .any(|entry| has_static_address(claim.annotations, entry))
        }
        Subject::Workload(_) => {
            !primary.ip_pool.is_empty() || attached.iter().any(|n| !n.ip_pool.is_empty())
        }
    }
}

#[cfg(test)]
mod tests;
