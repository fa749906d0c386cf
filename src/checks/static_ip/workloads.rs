//! Pods and workload objects: where their static-IP annotations live, who
//! owns them, when an UPDATE needs checking (I10), and how many replicas
//! their pools must serve (I13).

use crate::admission::denial::Denial;
use crate::admission::{self, Operation, decode};
use crate::checks::static_ip::owner::{
    Workload, WorkloadKind, pod_owner_name, pod_workload, statefulset_pod,
};
use crate::checks::static_ip::{self, Request, Subject};
use crate::k8s::cluster::Cluster;
use crate::k8s::decode::Raw;
use crate::k8s::objects::{Pod, Replicas, WorkloadObject};
use std::collections::BTreeMap;

/// Where a workload of that kind keeps its pod template's annotations.
fn template_annotations(
    workload: &WorkloadObject,
    kind: WorkloadKind,
) -> &BTreeMap<String, String> {
    match kind {
        WorkloadKind::CronJob => {
            &workload
                .spec
                .job_template
                .spec
                .template
                .metadata
                .annotations
        }
        _ => &workload.spec.template.metadata.annotations,
    }
}

/// Admits a Pod CREATE.
pub fn admit_pod(request: &admission::Request<'_>, cluster: &dyn Cluster) -> Result<(), Denial> {
    match request.operation {
        Operation::Create => {
            validate_pod(request.object, &request.name, &request.namespace, cluster)
        }
        _ => Ok(()),
    }
}

/// Admits a Deployment, StatefulSet, DaemonSet, Job or CronJob CREATE or
/// UPDATE, with its warnings: the only check that warns (I13).
pub fn admit(
    request: &admission::Request<'_>,
    cluster: &dyn Cluster,
) -> Result<Vec<String>, Denial> {
    let Some(kind) = WorkloadKind::from_kind(&request.kind.kind) else {
        return Ok(Vec::new());
    };
    let namespace = &request.namespace;
    match request.operation {
        Operation::Create => validate_workload(kind, request.object, None, namespace, cluster),
        Operation::Update => {
            validate_workload(kind, request.object, request.old_object, namespace, cluster)
        }
        Operation::Delete | Operation::Other => Ok(Vec::new()),
    }
}

/// A Pod CREATE: the pod's own annotations, owner and controlling workload.
fn validate_pod(
    object: Option<Raw<'_>>,
    request_name: &str,
    request_namespace: &str,
    cluster: &dyn Cluster,
) -> Result<(), Denial> {
    let pod: Pod = decode("Pod", object)?;
    let meta = &pod.metadata;
    let name = if meta.name.is_empty() {
        request_name
    } else {
        &meta.name
    };
    let namespace = if request_namespace.is_empty() {
        &meta.namespace
    } else {
        request_namespace
    };
    let controller = pod_workload(&meta.owner_references);
    let statefulset = statefulset_pod(name, controller.as_ref());
    let request = Request {
        annotations: &meta.annotations,
        namespace,
        owner_name: pod_owner_name(name, &meta.owner_references),
        subject: Subject::Pod {
            controller,
            statefulset,
        },
    };
    static_ip::validate(&request, cluster)
}

/// A workload CREATE, or an UPDATE whose template static-IP annotations
/// changed (I10). Admitted, it returns its warnings (I13).
fn validate_workload(
    kind: WorkloadKind,
    object: Option<Raw<'_>>,
    old_object: Option<Raw<'_>>,
    request_namespace: &str,
    cluster: &dyn Cluster,
) -> Result<Vec<String>, Denial> {
    let kind_name = kind.to_string();
    let workload: WorkloadObject = decode(&kind_name, object)?;
    let annotations = template_annotations(&workload, kind);
    if let Some(old) = old_object {
        let unchanged = decode::<WorkloadObject>(&kind_name, Some(old)).is_ok_and(|old| {
            static_ip_annotations(template_annotations(&old, kind))
                == static_ip_annotations(annotations)
        });
        if unchanged {
            return Ok(Vec::new());
        }
    }
    let namespace = if request_namespace.is_empty() {
        &workload.metadata.namespace
    } else {
        request_namespace
    };
    let name = workload.metadata.name.as_str();
    let request = Request {
        annotations,
        namespace,
        owner_name: name,
        subject: Subject::Workload(Workload {
            kind,
            name: name.to_string(),
        }),
    };
    static_ip::validate(&request, cluster)?;
    let replicas = match (kind, &workload.spec.replicas) {
        (WorkloadKind::Deployment | WorkloadKind::StatefulSet, Replicas(Some(n))) => {
            u64::try_from(*n).unwrap_or(0)
        }
        _ => 0,
    };
    Ok(static_ip::pool_warnings(annotations, replicas))
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
