//! kube-ovn-policy: a Kubewarden policy that takes over kube-ovn-webhook's
//! job. This file holds only the waPC entry points and the dispatch by kind;
//! each kind's module under [`checks`] admits its own operations.
//!
//! Layers, each using only those below it (docs/architecture.md,
//! scripts/check-layers.py): [`checks`]; [`admission`] and [`settings`];
//! [`k8s`]; [`upstream`].

pub mod admission;
pub mod checks;
pub mod k8s;
pub mod settings;
pub mod upstream;

use admission::denial::Denial;
use admission::{Request, ValidationRequest, Verdict};
use checks::nat::{gateway, iptables, ovn};
use checks::static_ip;
use checks::{ip, ippool, nad, subnet, vip, vpc};
use k8s::cluster::{Cluster, HostCluster};
use kubewarden_policy_sdk::{protocol_version_guest, settings::SettingsValidationResponse};
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
    Ok(admission::response(&evaluate(
        payload,
        &HostCluster::new(),
    ))?)
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

/// Decides one ValidationRequest against a view of the cluster: admitted
/// with its warnings, or denied.
pub fn evaluate(payload: &[u8], cluster: &dyn Cluster) -> Verdict {
    let envelope: ValidationRequest<'_> = k8s::decode::from_slice(payload)
        .map_err(|e| Denial::bad_request(format!("cannot decode the validation request: {e}")))?;
    let Some(request) = envelope.request else {
        return Err(Denial::bad_request(
            "cannot decode the validation request: missing field `request`",
        ));
    };
    let settings = Settings::from_json(envelope.settings.map_or("", |raw| raw.get()).as_bytes())
        .map_err(Denial::bad_request)?;
    dispatch(&request, &settings, cluster)
}

/// Each kind to the module that admits it; any other kind is admitted.
fn dispatch(request: &Request<'_>, settings: &Settings, cluster: &dyn Cluster) -> Verdict {
    let admitted = match (request.kind.group.as_str(), request.kind.kind.as_str()) {
        ("", "Pod") => static_ip::admit_pod(request, settings, cluster),
        ("apps", "Deployment" | "StatefulSet" | "DaemonSet") | ("batch", "Job" | "CronJob") => {
            return static_ip::admit_workload(request, settings, cluster);
        }
        ("kubeovn.io", "Subnet") => subnet::admit(request, settings, cluster),
        ("kubeovn.io", "Vpc") => vpc::admit(request, cluster),
        ("kubeovn.io", "Vip") => vip::admit(request, cluster),
        ("kubeovn.io", "IP") => ip::admit(request, cluster),
        ("kubeovn.io", "IPPool") => return ippool::admit(request, cluster),
        ("kubeovn.io", "VpcNatGateway") => gateway::admit(request, cluster),
        ("kubeovn.io", "IptablesEIP") => iptables::admit_eip(request, cluster),
        ("kubeovn.io", "IptablesDnatRule") => iptables::admit_dnat(request, cluster),
        ("kubeovn.io", "IptablesSnatRule") => iptables::admit_snat(request, cluster),
        ("kubeovn.io", "IptablesFIPRule") => iptables::admit_fip(request, cluster),
        ("kubeovn.io", "OvnEip") => ovn::admit_eip(request, cluster),
        ("kubeovn.io", "OvnDnatRule") => ovn::admit_dnat(request, cluster),
        ("kubeovn.io", "OvnSnatRule") => ovn::admit_snat(request, cluster),
        ("kubeovn.io", "OvnFip") => ovn::admit_fip(request, cluster),
        ("k8s.cni.cncf.io", "NetworkAttachmentDefinition") => nad::admit(request),
        _ => Ok(()),
    };
    admitted.map(|()| Vec::new())
}
