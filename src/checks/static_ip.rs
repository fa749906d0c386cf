//! Static-IP admission for Pods and workload templates (kube-ovn-webhook's
//! `static_ip.go`), with the contract's improvements I1–I7, I10, I12, I13
//! and I15 (named in [`crate::checks`]).
//! The entries ([`admit_pod`], [`admit_workload`]) and the order of the
//! checks ([`validate`]) are here; below, the pieces by what they do:
//! [`network`] (the annotations and `ValidatePodNetwork`), [`conflicts`],
//! [`status`] (the subnet's record of what is in use), [`pools`],
//! [`in_subnet`] and [`owner`].
//!
//! Order, as upstream and then the new checks: trigger and live-migration
//! bypass, `ValidatePodNetwork` (400), `ip_address` family uniqueness and
//! conflicts (403), `ip_pool` name lookup or conflicts and the group the pod
//! will take (403, I3 and I13), attachment networks (I7, 403), then static IPs
//! against their subnet (I6, 400).

pub mod conflicts;
pub mod in_subnet;
pub mod network;
pub mod owner;
pub mod pools;
pub mod status;

use crate::admission::denial::Denial;
use crate::admission::{self, Operation};
use crate::k8s::cluster::Cluster;
use crate::k8s::objects::{Pod, Replicas, WorkloadObject};
use crate::settings::Settings;
use conflicts::Checker;
use in_subnet::check_in_subnet;
use network::{attachments, primary};
use owner::{
    Claim, Subject, Workload, WorkloadKind, pod_owner_name, pod_workload, statefulset_pod,
};
use pools::{is_address_pool, pool_warnings};
use std::collections::BTreeMap;

/// The annotation that marks a KubeVirt live-migration target pod.
pub const MIGRATION_JOB: &str = "kubevirt.io/migrationJobName";

/// Admits a Pod CREATE: the pod's own annotations, its owner and the
/// workload that controls it.
pub fn admit_pod(
    request: &admission::Request<'_>,
    settings: &Settings,
    cluster: &dyn Cluster,
) -> Result<(), Denial> {
    if request.operation != Operation::Create {
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
    let claim = Claim {
        annotations: &meta.annotations,
        namespace,
        owner_name: pod_owner_name(name, &meta.owner_references),
        subject: Subject::Pod {
            controller,
            statefulset,
        },
    };
    validate(&claim, settings, cluster)
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
    let namespace = if request.namespace.is_empty() {
        &workload.metadata.namespace
    } else {
        &request.namespace
    };
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
    validate(&claim, settings, cluster)?;
    let replicas = match (kind, &workload.spec.replicas) {
        (WorkloadKind::Deployment | WorkloadKind::StatefulSet, Replicas(Some(n))) => {
            u64::try_from(*n).unwrap_or(0)
        }
        _ => 0,
    };
    Ok(pool_warnings(annotations, replicas))
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
    let annotations = claim.annotations;
    let primary = primary(annotations);
    let attached = attachments(annotations);
    let triggered = match claim.subject {
        Subject::Pod { .. } => {
            !primary.ip_address.is_empty()
                || !primary.ip_pool.is_empty()
                || attached
                    .iter()
                    .any(|n| !n.ip_address.is_empty() || !n.ip_pool.is_empty())
        }
        // Upstream validates a workload only for its template's ip_pool.
        Subject::Workload(_) => {
            !primary.ip_pool.is_empty() || attached.iter().any(|n| !n.ip_pool.is_empty())
        }
    };
    if !triggered {
        return Ok(());
    }
    if matches!(claim.subject, Subject::Pod { .. }) && annotations.contains_key(MIGRATION_JOB) {
        return Ok(());
    }
    network::validate(annotations).map_err(Denial::bad_request)?;

    let check = Checker::new(claim, cluster, settings.use_subnet_status());
    let primary_subnet = if primary.ip_address.is_empty() && !is_address_pool(primary.ip_pool) {
        None // nothing of the primary NIC is looked up
    } else {
        Some(check.primary_subnet(primary.logical_switch)?)
    };
    if let Some(subnet) = &primary_subnet {
        check.nic(&primary, subnet)?;
    } else {
        check.pool_name(primary.ip_pool)?;
    }
    for nic in &attached {
        match nic.logical_switch {
            Some(subnet) => check.nic(nic, subnet)?,
            None => check.pool_ordinal(nic)?,
        }
    }
    if let Some(subnet) = &primary_subnet {
        check_in_subnet(primary.ip_address, subnet, cluster)?;
    }
    for nic in &attached {
        if let Some(subnet) = nic.logical_switch {
            check_in_subnet(nic.ip_address, subnet, cluster)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
