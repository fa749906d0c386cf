//! kube-ovn-policy: a Kubewarden policy that takes over kube-ovn-webhook's
//! job. This file holds only the waPC entry points and the dispatch by kind
//! and operation; each check lives in the module named for what it checks.

pub mod admission;
pub mod checks;
pub mod k8s;
pub mod settings;
pub mod upstream;

use admission::decode;
use admission::denial::Denial;
use checks::static_ip::owner::WorkloadKind;
use checks::static_ip::workloads;
use checks::{ip as ip_object, nat::gateway as nat_gateway, nat::iptables as iptables_nat};
use checks::{nat::ovn as ovn_nat, subnet, vip, vpc};
use json::{Decode, Raw};
use k8s::cluster::{self, Cluster, HostCluster};
use k8s::objects::{
    Ip, IptablesEip, IptablesRule, OvnEip, OvnRule, Subnet, Vip, Vpc, VpcNatGateway,
};
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
    let verdict = evaluate(payload, &HostCluster::new());
    let response = match &verdict {
        Ok(warnings) => ValidationResponse {
            warnings: Some(warnings.as_slice()).filter(|w| !w.is_empty()),
            ..ValidationResponse::default_accept()
        },
        Err(denial) => ValidationResponse {
            accepted: false,
            message: Some(&denial.message),
            code: Some(denial.code),
            ..ValidationResponse::default_accept()
        },
    };
    Ok(serde_json::to_vec(&response)?)
}

/// The SDK's `ValidationResponse`, as `accept_request` / `reject_request`
/// write it, without the `serde_json::Value` of a mutated object a
/// validating policy never sends (and the code to print it). `warnings` are
/// the admission warnings kubectl prints (I13).
#[derive(serde::Serialize)]
struct ValidationResponse<'a> {
    accepted: bool,
    message: Option<&'a str>,
    code: Option<u16>,
    mutated_object: Option<()>,
    audit_annotations: Option<()>,
    warnings: Option<&'a [String]>,
}

impl ValidationResponse<'_> {
    fn default_accept() -> Self {
        ValidationResponse {
            accepted: true,
            message: None,
            code: None,
            mutated_object: None,
            audit_annotations: None,
            warnings: None,
        }
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
#[derive(Default)]
struct ValidationRequest<'a> {
    settings: Option<Raw<'a>>,
    /// Required: `None` when absent or `null`.
    request: Option<AdmissionRequest<'a>>,
}

json::decode_struct!(ValidationRequest<'a> { settings: "settings", request: "request" });

#[derive(Default)]
struct AdmissionRequest<'a> {
    kind: GroupVersionKind,
    operation: String,
    name: String,
    namespace: String,
    object: Option<Raw<'a>>,
    old_object: Option<Raw<'a>>,
}

json::decode_struct!(AdmissionRequest<'a> {
    kind: "kind",
    operation: "operation",
    name: "name",
    namespace: "namespace",
    object: "object",
    old_object: "oldObject",
});

#[derive(Default)]
struct GroupVersionKind {
    group: String,
    kind: String,
}

json::decode_struct!(GroupVersionKind {
    group: "group",
    kind: "kind"
});

/// The `object` and `oldObject` of an UPDATE, decoded in that order.
fn decode_update<'a, T: Decode<'a>>(
    kind: &str,
    object: Option<Raw<'a>>,
    old_object: Option<Raw<'a>>,
) -> Result<(T, T), Denial> {
    Ok((decode(kind, object)?, decode(kind, old_object)?))
}

/// Decides one ValidationRequest against a view of the cluster: admitted
/// with its warnings, or denied.
pub fn evaluate(payload: &[u8], cluster: &dyn Cluster) -> Result<Vec<String>, Denial> {
    let envelope: ValidationRequest<'_> = json::from_slice(payload)
        .map_err(|e| Denial::bad_request(format!("cannot decode the validation request: {e}")))?;
    let Some(request) = envelope.request else {
        return Err(Denial::bad_request(
            "cannot decode the validation request: missing field `request`",
        ));
    };
    let settings = Settings::from_json(envelope.settings.map_or("", |raw| raw.0).as_bytes())
        .map_err(Denial::bad_request)?;
    dispatch(&request, &settings, cluster)
}

fn dispatch(
    request: &AdmissionRequest<'_>,
    settings: &Settings,
    cluster: &dyn Cluster,
) -> Result<Vec<String>, Denial> {
    let kind = request.kind.kind.as_str();
    let operation = request.operation.as_str();
    let (object, old_object) = (request.object, request.old_object);
    match (request.kind.group.as_str(), kind, operation) {
        ("", "Pod", "CREATE") => {
            workloads::validate_pod(object, &request.name, &request.namespace, cluster)
        }
        ("apps", "Deployment" | "StatefulSet" | "DaemonSet", "CREATE" | "UPDATE")
        | ("batch", "Job" | "CronJob", "CREATE" | "UPDATE") => {
            // The only check that warns (I13).
            return match WorkloadKind::from_kind(kind) {
                Some(workload) => workloads::validate_workload(
                    workload,
                    object,
                    if operation == "UPDATE" {
                        old_object
                    } else {
                        None
                    },
                    &request.namespace,
                    cluster,
                ),
                None => Ok(Vec::new()),
            };
        }
        ("kubeovn.io", "Subnet", _) => {
            let context = subnet::Context::new(settings, cluster);
            match operation {
                "CREATE" => subnet::validate_create(&decode::<Subnet>(kind, object)?, &context),
                "UPDATE" => {
                    let (new, old): (Subnet, Subnet) = decode_update(kind, object, old_object)?;
                    subnet::validate_update(&new, &old, &context)
                }
                "DELETE" => subnet::validate_delete(&decode(kind, old_object)?),
                _ => Ok(()),
            }
        }
        ("kubeovn.io", "Vpc", "CREATE") => {
            vpc::validate_create(&decode::<Vpc>(kind, object)?, cluster)
        }
        ("kubeovn.io", "Vpc", "UPDATE") => vpc::validate_update(&decode::<Vpc>(kind, object)?),
        ("kubeovn.io", "Vpc", "DELETE") => {
            vpc::validate_delete(&decode::<Vpc>(kind, old_object)?, cluster)
        }
        ("kubeovn.io", "Vip", "CREATE") => {
            vip::validate_create(&decode::<Vip>(kind, object)?, cluster)
        }
        ("kubeovn.io", "Vip", "UPDATE") => {
            let old: Vip = decode(kind, old_object)?;
            vip::validate_update(&decode(kind, object)?, &old, cluster)
        }
        ("kubeovn.io", "IP", "CREATE") => {
            ip_object::validate_create(&decode::<Ip>(kind, object)?, cluster)
        }
        ("kubeovn.io", "IP", "UPDATE") => {
            let old: Ip = decode(kind, old_object)?;
            ip_object::validate_update(&decode(kind, object)?, &old, cluster)
        }
        ("kubeovn.io", "VpcNatGateway", "CREATE" | "UPDATE") => {
            let gw: VpcNatGateway = decode(kind, object)?;
            let old = old_object
                .map(|raw| decode::<VpcNatGateway>(kind, Some(raw)))
                .transpose()?;
            nat_gateway::validate(&gw, old.as_ref(), cluster)
        }
        ("kubeovn.io", "VpcNatGateway", "DELETE") => {
            nat_gateway::validate_delete(&request.name, cluster)
        }
        ("kubeovn.io", "IptablesEIP", "CREATE") => {
            iptables_nat::validate_eip_create(&decode::<IptablesEip>(kind, object)?, cluster)
        }
        ("kubeovn.io", "IptablesEIP", "UPDATE") => {
            let (new, old): (IptablesEip, IptablesEip) = decode_update(kind, object, old_object)?;
            iptables_nat::validate_eip_update(&new, &old, cluster)
        }
        ("kubeovn.io", "IptablesEIP", "DELETE") => {
            iptables_nat::validate_eip_delete(&decode::<IptablesEip>(kind, old_object)?, cluster)
        }
        ("kubeovn.io", "IptablesDnatRule", "CREATE") => {
            iptables_nat::validate_dnat_create(&decode::<IptablesRule>(kind, object)?, cluster)
        }
        ("kubeovn.io", "IptablesDnatRule", "UPDATE") => {
            let (new, old): (IptablesRule, IptablesRule) = decode_update(kind, object, old_object)?;
            iptables_nat::validate_dnat_update(&new, &old, cluster)
        }
        ("kubeovn.io", "IptablesSnatRule", "CREATE") => {
            iptables_nat::validate_snat_create(&decode::<IptablesRule>(kind, object)?, cluster)
        }
        ("kubeovn.io", "IptablesSnatRule", "UPDATE") => {
            let (new, old): (IptablesRule, IptablesRule) = decode_update(kind, object, old_object)?;
            iptables_nat::validate_rule_update(
                &new,
                &old,
                iptables_nat::validate_snat_create,
                cluster,
            )
        }
        ("kubeovn.io", "IptablesFIPRule", "CREATE") => {
            iptables_nat::validate_fip_create(&decode::<IptablesRule>(kind, object)?, cluster)
        }
        ("kubeovn.io", "IptablesFIPRule", "UPDATE") => {
            let (new, old): (IptablesRule, IptablesRule) = decode_update(kind, object, old_object)?;
            iptables_nat::validate_rule_update(
                &new,
                &old,
                iptables_nat::validate_fip_create,
                cluster,
            )
        }
        ("kubeovn.io", "OvnEip", "CREATE") => {
            ovn_nat::validate_eip_create(&decode::<OvnEip>(kind, object)?, cluster)
        }
        ("kubeovn.io", "OvnEip", "UPDATE") => {
            let (new, old): (OvnEip, OvnEip) = decode_update(kind, object, old_object)?;
            ovn_nat::validate_eip_update(&new, &old, cluster)
        }
        ("kubeovn.io", "OvnEip", "DELETE") => {
            ovn_nat::validate_eip_delete(&decode::<OvnEip>(kind, old_object)?, cluster)
        }
        ("kubeovn.io", "OvnDnatRule", "CREATE") => {
            ovn_nat::validate_dnat_create(&decode::<OvnRule>(kind, object)?, cluster)
        }
        ("kubeovn.io", "OvnSnatRule", "CREATE") => {
            ovn_nat::validate_snat_create(&decode::<OvnRule>(kind, object)?, cluster)
        }
        ("kubeovn.io", "OvnFip", "CREATE") => {
            ovn_nat::validate_fip_create(&decode::<OvnRule>(kind, object)?, cluster)
        }
        ("kubeovn.io", "OvnDnatRule" | "OvnSnatRule" | "OvnFip", "UPDATE") => {
            let rule_kind = match kind {
                "OvnDnatRule" => cluster::OvnNatKind::DnatRule,
                "OvnSnatRule" => cluster::OvnNatKind::SnatRule,
                _ => cluster::OvnNatKind::Fip,
            };
            let (new, old): (OvnRule, OvnRule) = decode_update(kind, object, old_object)?;
            ovn_nat::validate_rule_update(rule_kind, &new, &old, cluster)
        }
        _ => Ok(()),
    }
    .map(|()| Vec::new())
}
