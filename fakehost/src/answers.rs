//! policy-evaluator's answers to the `kubewarden/kubernetes/*` host calls,
//! as text and as objects: its error messages, the `<Kind>List` envelope,
//! and an object as its watch cache keeps it or a GET hands it over. kop-serve
//! answers with them from a real API server, [`crate::cluster::ClusterState`]
//! from a test's objects, so both say the same thing.

use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// kube-rs' `Error::Api` for a `Status` the API server answered with:
/// `ApiError: {message}: {reason} ({status:?})`, the `Status` in Rust's
/// debug form of kube-core's struct (fields absent from the JSON at their
/// defaults).
pub fn api_error(status: &Value) -> String {
    let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("").to_string();
    let number = |v: Option<&Value>| v.and_then(Value::as_u64).unwrap_or(0);
    let opt_text = |v: Option<&Value>| match v.and_then(Value::as_str) {
        Some(s) => format!("Some({s:?})"),
        None => "None".to_string(),
    };
    let summary = match status.get("status").and_then(Value::as_str) {
        Some("Success") => "Some(Success)",
        Some("Failure") => "Some(Failure)",
        _ => "None",
    };
    let metadata = match status.get("metadata") {
        Some(m) if m.is_object() => format!(
            "Some(ListMeta {{ continue_: {}, remaining_item_count: {}, resource_version: {}, self_link: {} }})",
            opt_text(m.get("continue")),
            m.get("remainingItemCount")
                .and_then(Value::as_i64)
                .map_or("None".to_string(), |n| format!("Some({n})")),
            opt_text(m.get("resourceVersion")),
            opt_text(m.get("selfLink")),
        ),
        _ => "None".to_string(),
    };
    let details = match status.get("details") {
        Some(d) if d.is_object() => {
            let causes: Vec<String> = d
                .get("causes")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|c| {
                    format!(
                        "StatusCause {{ reason: {:?}, message: {:?}, field: {:?} }}",
                        text(c.get("reason")),
                        text(c.get("message")),
                        text(c.get("field"))
                    )
                })
                .collect();
            format!(
                "Some(StatusDetails {{ name: {:?}, group: {:?}, kind: {:?}, uid: {:?}, causes: [{}], retry_after_seconds: {} }})",
                text(d.get("name")),
                text(d.get("group")),
                text(d.get("kind")),
                text(d.get("uid")),
                causes.join(", "),
                number(d.get("retryAfterSeconds")),
            )
        }
        _ => "None".to_string(),
    };
    let (message, reason) = (text(status.get("message")), text(status.get("reason")));
    format!(
        "ApiError: {message}: {reason} (Status {{ status: {summary}, code: {}, message: {message:?}, \
         metadata: {metadata}, reason: {reason:?}, details: {details} }})",
        number(status.get("code"))
    )
}

/// The answer to a list host call: policy-evaluator's `ObjectList` of the
/// watch cache's objects (`list_resources_from_reflector`, client.rs), in
/// whatever order they are given: `{"apiVersion", "kind": "<Kind>List",
/// "metadata": {}, "items"}`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListEnvelope<'a, T> {
    api_version: &'a str,
    kind: String,
    metadata: Map<String, Value>,
    items: Vec<T>,
}

/// The envelope of these items (objects, or their JSON text).
pub fn list_envelope<'a, T: Serialize>(
    api_version: &'a str,
    kind: &str,
    items: Vec<T>,
) -> ListEnvelope<'a, T> {
    ListEnvelope {
        api_version,
        kind: format!("{kind}List"),
        metadata: Map::new(),
        items,
    }
}

/// policy-evaluator's error for a `get_resource` the API server answered
/// 404: kube-rs' `get_opt` reads it as "absent" (`Client::get_resource`,
/// client.rs). The namespace is printed in its debug form: `None`,
/// `Some("kube-system")`.
pub fn not_found(api_version: &str, kind: &str, name: &str, namespace: Option<&str>) -> String {
    format!("Cannot find {api_version}/{kind} named '{name}' inside of namespace '{namespace:?}'")
}

/// policy-evaluator's error for `list_resources_by_namespace` on a
/// cluster-scoped kind (`Client::list_resources_by_namespace`).
pub fn cluster_wide(api_version: &str, kind: &str) -> String {
    format!(
        "resource {api_version}/{kind} is cluster wide. Cannot search for it inside of a namespace"
    )
}

/// policy-evaluator's error for a kind API discovery does not list
/// (`Client::build_kube_resource`).
pub fn unknown_kind(api_version: &str, kind: &str) -> String {
    format!("Cannot find resource {api_version}/{kind}")
}

/// An object as the policy-server's watch cache keeps it (`modify_object`,
/// reflector.rs): `managedFields` emptied and the last-applied annotation
/// removed (both fields left present, `[]` and `{}`), then the field masks
/// applied.
pub fn cached_object(object: &Value, masks: Option<&BTreeSet<String>>) -> Value {
    strip(object, masks, true)
}

/// An object fetched by a GET, as the policy-server hands it over: as the
/// API server sent it, with the field masks applied.
pub fn fetched_object(object: &Value, masks: Option<&BTreeSet<String>>) -> Value {
    strip(object, masks, false)
}

/// With field masks, everything outside `apiVersion`, `kind` and `metadata`
/// is pruned to the masked paths (policy-evaluator prunes `DynamicObject`'s
/// `data`, which holds everything else).
fn strip(object: &Value, masks: Option<&BTreeSet<String>>, reflector: bool) -> Value {
    let mut out = object.clone();
    if reflector && let Some(meta) = out.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.insert("managedFields".to_string(), Value::Array(Vec::new()));
        let annotations = meta
            .entry("annotations")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(annotations) = annotations.as_object_mut() {
            annotations.remove("kubectl.kubernetes.io/last-applied-configuration");
        }
    }
    if let (Some(masks), Some(map)) = (masks, out.as_object_mut()) {
        let mask = FieldMask::new(masks);
        map.retain(|key, value| match key.as_str() {
            "apiVersion" | "kind" | "metadata" => true,
            _ => mask.children.get(key).is_some_and(|child| {
                child.prune(value);
                true
            }),
        });
    }
    out
}

/// policy-evaluator's `FieldMaskNode`: the masked paths as a tree.
#[derive(Default)]
struct FieldMask {
    children: BTreeMap<String, FieldMask>,
}

impl FieldMask {
    fn new(paths: &BTreeSet<String>) -> Self {
        let mut root = FieldMask::default();
        for path in paths {
            let mut node = &mut root;
            for part in path.split('.') {
                node = node.children.entry(part.to_string()).or_default();
            }
        }
        root
    }

    /// `prune_in_place`: a leaf keeps everything below it; objects keep
    /// the masked keys; arrays apply the same node to every item.
    fn prune(&self, value: &mut Value) {
        if self.children.is_empty() {
            return;
        }
        match value {
            Value::Object(map) => map.retain(|key, value| {
                self.children.get(key).is_some_and(|child| {
                    child.prune(value);
                    true
                })
            }),
            Value::Array(items) => items.iter_mut().for_each(|item| self.prune(item)),
            _ => {}
        }
    }
}
