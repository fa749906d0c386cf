//! The cluster of the checks' tests, at the seam the policy-server sees: a
//! [`FakeHost`] answers the `kubewarden/kubernetes/*` host calls from a
//! test's objects (the `fakehost` crate, which testhost serves to
//! `policy.wasm` too), and the checks read it through the real
//! [`HostCluster`], its memo, masks and selectors. The builders make those
//! objects as JSON, as the API server holds them.

use crate::k8s::cluster::{Host, HostCluster};
use crate::k8s::decode;
use crate::k8s::kinds::{self, ApiResource};
use crate::k8s::objects::{InUse, Subnet};
use fakehost::cluster::{ClusterState, Failure};
use serde_json::{Value, json};
use std::cell::RefCell;
use std::collections::BTreeMap;

/// Decodes a `serde_json::Value` as the policy decodes a request's object.
pub fn from_value<T: for<'a> serde::Deserialize<'a>>(value: Value) -> Result<T, decode::Error> {
    decode::from_str(&value.to_string())
}

/// Decodes a builder's object: `typed::<Subnet>(subnet("a", json!({})))`.
pub fn typed<T: for<'a> serde::Deserialize<'a>>(value: Value) -> T {
    from_value(value).unwrap_or_else(|e| panic!("{e}"))
}

/// An object of `kind` named `name`, its other fields (`spec`, `status`,
/// `data`) from `fields`: `object(&kinds::VPC, "vpc-a", json!({"status": {"default": true}}))`.
pub fn object(kind: &ApiResource, name: &str, fields: Value) -> Value {
    let mut value = json!({
        "apiVersion": kind.api_version,
        "kind": kind.kind,
        "metadata": {"name": name},
    });
    if let (Some(all), Value::Object(fields)) = (value.as_object_mut(), fields) {
        for (key, field) in fields {
            match (all.get_mut(&key), field) {
                // `metadata` merges: a name and labels, say.
                (Some(Value::Object(have)), Value::Object(more)) => have.extend(more),
                (_, field) => {
                    all.insert(key, field);
                }
            }
        }
    }
    value
}

/// An object of a namespaced `kind`.
pub fn namespaced(kind: &ApiResource, namespace: &str, name: &str, fields: Value) -> Value {
    let mut value = object(kind, name, fields);
    value["metadata"]["namespace"] = json!(namespace);
    value
}

/// A Subnet and its `spec`: `subnet("net-a", json!({"cidrBlock": "10.0.1.0/24"}))`.
pub fn subnet(name: &str, spec: Value) -> Value {
    object(&kinds::SUBNET, name, json!({ "spec": spec }))
}

/// An IP object and its `spec`, labelled with its subnet as
/// kube-ovn-controller labels it:
/// `ip("a.default", json!({"subnet": "net-a", "ipAddress": "10.0.1.5"}))`.
pub fn ip(name: &str, spec: Value) -> Value {
    let labels = match spec.get("subnet") {
        Some(subnet) => json!({ "ovn.kubernetes.io/subnet": subnet }),
        None => json!({}),
    };
    object(
        &kinds::IP,
        name,
        json!({"metadata": {"labels": labels}, "spec": spec}),
    )
}

/// An IPPool and its `spec`: `ippool("p", json!({"subnet": "s", "ips": ["10.0.1.5"]}))`.
pub fn ippool(name: &str, spec: Value) -> Value {
    object(&kinds::IPPOOL, name, json!({ "spec": spec }))
}

/// A NetworkAttachmentDefinition in `namespace` and its CNI `config`:
/// `nad("default", "attachnet", json!({"type": "kube-ovn", "provider": "attachnet.default.ovn"}))`.
pub fn nad(namespace: &str, name: &str, config: Value) -> Value {
    namespaced(
        &kinds::NETWORK_ATTACHMENT_DEFINITION,
        namespace,
        name,
        json!({"spec": {"config": config.to_string()}}),
    )
}

/// A ConfigMap in `namespace`, and its `data`.
pub fn config_map(namespace: &str, name: &str, data: Value) -> Value {
    namespaced(&kinds::CONFIG_MAP, namespace, name, json!({ "data": data }))
}

/// An object of `kind` carrying these labels, its other fields from `fields`.
pub fn labelled(kind: &ApiResource, name: &str, labels: &[(&str, &str)], fields: Value) -> Value {
    let labels: serde_json::Map<String, Value> = labels
        .iter()
        .map(|(k, v)| (k.to_string(), json!(v)))
        .collect();
    let mut value = object(kind, name, fields);
    value["metadata"]["labels"] = Value::Object(labels);
    value
}

/// A pod's annotations: `annotations(&[("ovn.kubernetes.io/ip_address", "10.0.1.5")])`.
pub fn annotations(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The same object with this `status` (a Subnet's record of what is in
/// use, I15, say).
pub fn with_status(mut object: Value, status: Value) -> Value {
    object["status"] = status;
    object
}

impl Subnet {
    /// The same Subnet with the record of what is in use (I15) that its
    /// by-name lookup reads from `status` (a JSON object's text).
    pub fn with_in_use(mut self, status: &str) -> Self {
        self.in_use = InUse::read(status);
        self
    }
}

/// The policy-server's host calls over a test's objects, and the log of the
/// calls made: what the I15 and bound tests count.
#[derive(Debug, Default)]
pub struct FakeHost {
    state: ClusterState,
    /// When set, every call fails with this text.
    fail: Option<String>,
    calls: RefCell<Vec<String>>,
}

impl FakeHost {
    /// A cluster holding these objects (each with its `apiVersion` and `kind`).
    pub fn new(objects: impl IntoIterator<Item = Value>) -> Self {
        let mut host = FakeHost::default();
        host.extend(objects);
        host
    }

    /// Adds objects.
    pub fn extend(&mut self, objects: impl IntoIterator<Item = Value>) {
        for object in objects {
            self.state
                .insert(object)
                .unwrap_or_else(|e| panic!("a test's object: {e}"));
        }
    }

    /// The same objects listed in the reverse order, nothing called yet.
    pub fn reversed(&self) -> Self {
        FakeHost {
            state: self.state.reversed(),
            fail: self.fail.clone(),
            calls: RefCell::default(),
        }
    }

    /// Every call fails with `text`, as the host's error.
    pub fn failing(text: &str) -> Self {
        FakeHost {
            fail: Some(text.to_string()),
            ..FakeHost::default()
        }
    }

    /// Every call for `kind` fails with `text`, as the host's error.
    pub fn fail(&mut self, kind: &ApiResource, text: &str) {
        self.state.fail(
            kind.api_version,
            kind.kind,
            Failure::Error(text.to_string()),
        );
    }

    /// Every call for `kind` is answered with 403 Forbidden, as the API
    /// server answers the policy-server without RBAC for it.
    pub fn forbid(&mut self, kind: &ApiResource) {
        self.state
            .fail(kind.api_version, kind.kind, Failure::Forbidden);
    }

    /// The objects of a kind, to edit in place.
    pub fn objects_mut(&mut self, kind: &ApiResource) -> Vec<&mut Value> {
        self.state.objects_mut(kind.case_key)
    }

    /// A fresh evaluation's view of the cluster: nothing looked up yet.
    pub fn cluster(&self) -> HostCluster<&FakeHost> {
        HostCluster::with_host(self)
    }

    /// The calls made so far, each as `list <Kind> [<labels>] [<fields>]`
    /// or `get <Kind> [<namespace>/]<name>`, and forgets them.
    pub fn take_calls(&self) -> Vec<String> {
        self.calls.take()
    }
}

impl Host for &FakeHost {
    fn call(&self, operation: &str, payload: &[u8]) -> Result<Vec<u8>, String> {
        self.calls.borrow_mut().push(describe(operation, payload));
        if let Some(text) = &self.fail {
            return Err(text.clone());
        }
        self.state
            .answer(operation, payload)
            .map_err(|e| e.to_string())
    }
}

/// A host call in a line: `list IP ovn.kubernetes.io/subnet=net-a`,
/// `get Subnet net-a`, `get ConfigMap kube-system/ovn-vpc-nat-config`.
fn describe(operation: &str, payload: &[u8]) -> String {
    let request: Value = serde_json::from_slice(payload).unwrap_or_default();
    let text = |key: &str| request.get(key).and_then(Value::as_str);
    let verb = match operation {
        "get_resource" => "get",
        "list_resources_all" | "list_resources_by_namespace" => "list",
        other => other,
    };
    let mut line = format!("{verb} {}", text("kind").unwrap_or(""));
    if verb == "get" {
        line.push(' ');
        if let Some(namespace) = text("namespace") {
            line.push_str(namespace);
            line.push('/');
        }
        line.push_str(text("name").unwrap_or(""));
    }
    for selector in ["label_selector", "field_selector"] {
        if let Some(selector) = text(selector) {
            line.push(' ');
            line.push_str(selector);
        }
    }
    line
}
