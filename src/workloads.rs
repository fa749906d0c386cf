//! Pods and workload objects: where their static-IP annotations live, who
//! owns them, and when an UPDATE needs checking (I10).

use crate::cluster::Cluster;
use crate::denial::Denial;
use crate::owner::{OwnerReference, Workload, WorkloadKind, pod_owner_name, pod_workload};
use crate::resources::{decode, null_default};
use crate::static_ip::{self, Request, Subject};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::collections::BTreeMap;

/// The metadata of a Pod, a workload or a pod template.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Metadata {
    #[serde(default, deserialize_with = "null_default")]
    name: String,
    #[serde(default, deserialize_with = "null_default")]
    namespace: String,
    #[serde(default, deserialize_with = "null_default")]
    annotations: BTreeMap<String, String>,
    #[serde(default, deserialize_with = "null_default")]
    owner_references: Vec<OwnerReference>,
}

#[derive(Debug, Default, Deserialize)]
struct Pod {
    #[serde(default, deserialize_with = "null_default")]
    metadata: Metadata,
}

/// Deployment, StatefulSet, DaemonSet and Job keep the template at
/// `spec.template`; CronJob at `spec.jobTemplate.spec.template`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WorkloadSpec {
    #[serde(default, deserialize_with = "null_default")]
    template: Pod,
    #[serde(default, deserialize_with = "null_default")]
    job_template: JobTemplate,
}

#[derive(Debug, Default, Deserialize)]
struct JobTemplate {
    #[serde(default, deserialize_with = "null_default")]
    spec: JobSpec,
}

#[derive(Debug, Default, Deserialize)]
struct JobSpec {
    #[serde(default, deserialize_with = "null_default")]
    template: Pod,
}

#[derive(Debug, Default, Deserialize)]
struct WorkloadObject {
    #[serde(default, deserialize_with = "null_default")]
    metadata: Metadata,
    #[serde(default, deserialize_with = "null_default")]
    spec: WorkloadSpec,
}

impl WorkloadObject {
    fn template_annotations(&self, kind: WorkloadKind) -> &BTreeMap<String, String> {
        match kind {
            WorkloadKind::CronJob => &self.spec.job_template.spec.template.metadata.annotations,
            _ => &self.spec.template.metadata.annotations,
        }
    }
}

/// A Pod CREATE: the pod's own annotations, owner and controlling workload.
pub fn validate_pod(
    object: Option<&RawValue>,
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
    let request = Request {
        annotations: &meta.annotations,
        namespace,
        owner_name: pod_owner_name(name, &meta.owner_references),
        subject: Subject::Pod {
            controller: pod_workload(&meta.owner_references),
        },
    };
    static_ip::validate(&request, cluster)
}

/// A workload CREATE, or an UPDATE whose template static-IP annotations changed (I10).
pub fn validate_workload(
    kind: WorkloadKind,
    object: Option<&RawValue>,
    old_object: Option<&RawValue>,
    request_namespace: &str,
    cluster: &dyn Cluster,
) -> Result<(), Denial> {
    let kind_name = kind.to_string();
    let workload: WorkloadObject = decode(&kind_name, object)?;
    let annotations = workload.template_annotations(kind);
    if let Some(old) = old_object.filter(|raw| raw.get().trim() != "null") {
        let unchanged = decode::<WorkloadObject>(&kind_name, Some(old)).is_ok_and(|old| {
            static_ip_annotations(old.template_annotations(kind))
                == static_ip_annotations(annotations)
        });
        if unchanged {
            return Ok(());
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
    static_ip::validate(&request, cluster)
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
