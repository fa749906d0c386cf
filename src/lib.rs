//! kube-ovn-policy: a Kubewarden policy that takes over kube-ovn-webhook's
//! job. This file holds only the waPC entry points and the dispatch by kind
//! and operation; each check lives in the module named for what it checks.

pub mod cluster;
pub mod denial;
pub mod net;
pub mod owner;
pub mod pod_network;
pub mod resources;
pub mod settings;
pub mod static_ip;
pub mod workloads;

use cluster::{Cluster, HostCluster};
use denial::Denial;
use kubewarden_policy_sdk::{
    accept_request, protocol_version_guest, reject_request, settings::SettingsValidationResponse,
};
use owner::WorkloadKind;
use serde::Deserialize;
use serde_json::value::RawValue;
use settings::Settings;
use wapc_guest::{CallResult, register_function};

/// Registers the policy's functions with the waPC host.
#[unsafe(no_mangle)]
pub extern "C" fn wapc_init() {
    register_function("validate", validate);
    register_function("validate_settings", validate_settings);
    register_function("protocol_version", protocol_version_guest);
}

/// waPC `validate`: a ValidationRequest in, a ValidationResponse out. Every
/// failure is a rejection with a code, never an `Err` (which the
/// policy-server would turn into a 500 internal error).
pub fn validate(payload: &[u8]) -> CallResult {
    match evaluate(payload, &HostCluster::new()) {
        Ok(()) => accept_request(),
        Err(denial) => reject_request(Some(denial.message), Some(denial.code), None, None),
    }
}

/// waPC `validate_settings`: refuses invalid settings with a message naming the field.
pub fn validate_settings(payload: &[u8]) -> CallResult {
    let response = match Settings::from_json(payload) {
        Ok(_) => SettingsValidationResponse {
            valid: true,
            message: None,
        },
        Err(message) => SettingsValidationResponse {
            valid: false,
            message: Some(message),
        },
    };
    Ok(serde_json::to_vec(&response)?)
}

/// `{"settings": …, "request": <AdmissionRequest>}`, the fields read.
#[derive(Deserialize)]
struct ValidationRequest<'a> {
    #[serde(borrow, default)]
    settings: Option<&'a RawValue>,
    #[serde(borrow)]
    request: AdmissionRequest<'a>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct AdmissionRequest<'a> {
    #[serde(default)]
    kind: GroupVersionKind,
    #[serde(default)]
    operation: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    namespace: String,
    #[serde(borrow, default)]
    object: Option<&'a RawValue>,
    #[serde(borrow, default)]
    old_object: Option<&'a RawValue>,
}

#[derive(Default, Deserialize)]
struct GroupVersionKind {
    #[serde(default)]
    group: String,
    #[serde(default)]
    kind: String,
}

/// Decides one ValidationRequest against a view of the cluster.
pub fn evaluate(payload: &[u8], cluster: &dyn Cluster) -> Result<(), Denial> {
    let envelope: ValidationRequest<'_> = serde_json::from_slice(payload)
        .map_err(|e| Denial::bad_request(format!("cannot decode the validation request: {e}")))?;
    let settings = Settings::from_json(envelope.settings.map_or("", RawValue::get).as_bytes())
        .map_err(Denial::bad_request)?;
    dispatch(&envelope.request, &settings, cluster)
}

fn dispatch(
    request: &AdmissionRequest<'_>,
    _settings: &Settings,
    cluster: &dyn Cluster,
) -> Result<(), Denial> {
    let kind = request.kind.kind.as_str();
    let operation = request.operation.as_str();
    match (request.kind.group.as_str(), kind, operation) {
        ("", "Pod", "CREATE") => {
            workloads::validate_pod(request.object, &request.name, &request.namespace, cluster)
        }
        ("apps", "Deployment" | "StatefulSet" | "DaemonSet", "CREATE" | "UPDATE")
        | ("batch", "Job" | "CronJob", "CREATE" | "UPDATE") => {
            match WorkloadKind::from_kind(kind) {
                Some(workload) => workloads::validate_workload(
                    workload,
                    request.object,
                    if operation == "UPDATE" {
                        request.old_object
                    } else {
                        None
                    },
                    &request.namespace,
                    cluster,
                ),
                None => Ok(()),
            }
        }
        _ => Ok(()),
    }
}
