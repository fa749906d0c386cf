//! The whole `validate` entry on an arbitrary ValidationRequest and an
//! arbitrary cluster: `<request JSON>\0<cluster JSON>`, the cluster in the
//! conformance cases' format (`{"ips": [...], "subnets": [...], ...}`). A
//! cluster part that is no such object is sent back as the answer to every
//! lookup. Nothing may panic: every input gets an answer.
#![no_main]

use kube_ovn_policy::k8s::cluster::{Host, HostCluster};
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};

const KINDS: &[(&str, &str, &str)] = &[
    ("ips", "kubeovn.io/v1", "IP"),
    ("subnets", "kubeovn.io/v1", "Subnet"),
    ("vpcs", "kubeovn.io/v1", "Vpc"),
    ("ippools", "kubeovn.io/v1", "IPPool"),
    ("namespaces", "v1", "Namespace"),
    ("services", "v1", "Service"),
    ("ovnDnatRules", "kubeovn.io/v1", "OvnDnatRule"),
    ("ovnSnatRules", "kubeovn.io/v1", "OvnSnatRule"),
    ("ovnFips", "kubeovn.io/v1", "OvnFip"),
];

struct Cluster<'a> {
    objects: Option<Value>,
    raw: &'a [u8],
}

impl Host for Cluster<'_> {
    fn call(&self, operation: &str, payload: &[u8]) -> Result<Vec<u8>, String> {
        let Some(objects) = &self.objects else {
            return Ok(self.raw.to_vec());
        };
        let request: Value = serde_json::from_slice(payload).map_err(|e| e.to_string())?;
        let kind = request["kind"].as_str().unwrap_or_default();
        let Some((key, api_version, _)) = KINDS.iter().find(|(_, _, k)| *k == kind) else {
            return Err(format!("unknown kind {kind}"));
        };
        let items = objects[key].as_array().cloned().unwrap_or_default();
        match operation {
            "get_resource" => items
                .into_iter()
                .find(|o| o["metadata"]["name"] == request["name"])
                .map(|o| o.to_string().into_bytes())
                .ok_or_else(|| "not found".to_string()),
            _ => Ok(
                json!({"apiVersion": api_version, "kind": format!("{kind}List"), "items": items})
                    .to_string()
                    .into_bytes(),
            ),
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let (payload, cluster) = match data.iter().position(|b| *b == 0) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &b""[..]),
    };
    let objects = serde_json::from_slice::<Value>(cluster)
        .ok()
        .filter(Value::is_object);
    let host = Cluster {
        objects,
        raw: cluster,
    };
    let _ = kube_ovn_policy::evaluate(payload, &HostCluster::with_host(host));
});
