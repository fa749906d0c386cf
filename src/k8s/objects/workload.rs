//! Pods and the workloads that template them (Deployment, StatefulSet,
//! DaemonSet, Job, CronJob): where static-IP annotations live and who owns
//! a pod.

use serde::{Deserialize, Deserializer};
use std::collections::BTreeMap;

/// The metadata of a Pod, a workload or a pod template.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ObjectMeta {
    pub name: String,
    pub namespace: String,
    pub annotations: BTreeMap<String, String>,
    pub owner_references: Vec<OwnerReference>,
    /// Set once the pod is being deleted (any value; `null` is unset, as
    /// Go's `*metav1.Time` reads it).
    pub deletion_timestamp: Option<serde_json::Value>,
    /// The grace period of a deletion, in seconds (`isPodAlive` adds it to
    /// `deletionTimestamp`); `None` when unset.
    pub deletion_grace_period_seconds: Option<i64>,
}

/// An `ownerReferences` entry.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct OwnerReference {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub controller: bool,
}

/// A Pod, or a pod template.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Pod {
    pub metadata: ObjectMeta,
    pub spec: PodSpec,
    pub status: PodStatus,
}

/// What kube-ovn-controller reads of a pod's spec to tell whether it is
/// alive (`isPodStatusPhaseAlive`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct PodSpec {
    pub restart_policy: String,
}

/// What kube-ovn-controller reads of a pod's status to tell whether it is
/// alive (`isPodStatusPhaseAlive`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct PodStatus {
    pub phase: String,
    pub reason: String,
}

/// A workload: its metadata and where its pod template is.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct WorkloadObject {
    pub metadata: ObjectMeta,
    pub spec: WorkloadSpec,
}

/// Deployment, StatefulSet, DaemonSet and Job keep the template at
/// `spec.template`; CronJob at `spec.jobTemplate.spec.template`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct WorkloadSpec {
    pub template: Pod,
    pub job_template: JobTemplate,
    pub replicas: Replicas,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct JobTemplate {
    pub spec: JobSpec,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct JobSpec {
    pub template: Pod,
}

/// `spec.replicas`, read only to warn (I13): absent or `null` is Kubernetes'
/// default, 1; anything but a whole number is the API server's to refuse,
/// so it is `None` here and never fails the decoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Replicas(pub Option<i64>);

impl Default for Replicas {
    fn default() -> Self {
        Replicas(Some(1))
    }
}

impl<'de> Deserialize<'de> for Replicas {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = <&serde_json::value::RawValue>::deserialize(d)?.get();
        Ok(match raw {
            "null" => Replicas::default(),
            number => Replicas(number.parse().ok()),
        })
    }
}
