//! The cluster objects a test serves, and the policy-server's answers to the
//! `kubewarden/kubernetes/*` host calls over them.

use crate::BoxError;
use crate::answers::{
    api_error, cached_object, cluster_wide, fetched_object, list_envelope, not_found, unknown_kind,
};
use crate::kinds;
use crate::requests::{GetResourceRequest, ListRequest};
use serde_json::{Map, Value, json};

/// A scripted failure: every call for this apiVersion/kind is answered with
/// an error text, or with these raw bytes (malformed JSON, a wrong envelope).
#[derive(Clone, Debug)]
pub enum Failure {
    /// The host answers with an error carrying this text.
    Error(String),
    /// The host answers "successfully" with these bytes.
    Payload(Vec<u8>),
    /// The API server answers 403 Forbidden (no RBAC for the kind): a GET
    /// fails with kube-rs' text for it; a list never completes in the real
    /// policy-server (its watch cache waits to fill), so here it fails with
    /// a text that says so.
    Forbidden,
}

/// The ServiceAccount the forbidden texts name, as `e2e/harness/apiserver.py` does.
const POLICY_SERVER_USER: &str = "system:serviceaccount:kubewarden:policy-server";

/// kube-rs' `Error::Api` text for a 403 on a GET, as policy-evaluator
/// passes it on (recorded with kwctl 1.36 against `e2e/harness/apiserver.py`).
fn forbidden_get(api_version: &str, name: &str, namespace: Option<&str>, plural: &str) -> String {
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    let resource = if group.is_empty() {
        plural.to_string()
    } else {
        format!("{plural}.{group}")
    };
    let scope = match namespace {
        Some(ns) => format!("in the namespace \"{ns}\""),
        None => "at the cluster scope".to_string(),
    };
    let message = format!(
        "{resource} \"{name}\" is forbidden: User \"{POLICY_SERVER_USER}\" cannot get resource \"{plural}\" in API group \"{group}\" {scope}"
    );
    api_error(&json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": "Forbidden",
        "details": {"name": name, "group": group, "kind": plural}, "code": 403,
    }))
}

/// The objects of a cluster, in the order given.
#[derive(Clone, Debug, Default)]
pub struct ClusterState {
    objects: Vec<(usize, Value)>,
    failures: Vec<(String, String, Failure)>,
}

impl ClusterState {
    /// A cluster from a conformance file's `cluster` object (key → objects).
    pub fn from_json(cluster: &Value) -> Result<Self, BoxError> {
        let mut state = ClusterState::default();
        let Some(groups) = cluster.as_object() else {
            return Ok(state);
        };
        for (key, objects) in groups {
            let kind = kinds::all()
                .iter()
                .position(|k| k.case_key == *key)
                .ok_or_else(|| format!("unknown cluster key {key:?}"))?;
            for object in objects.as_array().into_iter().flatten() {
                state.objects.push((kind, object.clone()));
            }
        }
        Ok(state)
    }

    /// The objects as a conformance file's `cluster` object (key → objects).
    pub fn to_json(&self) -> Value {
        let mut groups = Map::new();
        for (kind, object) in &self.objects {
            let key = &kinds::all()[*kind].case_key;
            if let Value::Array(items) = groups
                .entry(key)
                .or_insert_with(|| Value::Array(Vec::new()))
            {
                items.push(object.clone());
            }
        }
        Value::Object(groups)
    }

    /// Adds one object under a kind's case key.
    pub fn push(&mut self, key: &str, object: Value) -> Result<(), BoxError> {
        let kind = kinds::all()
            .iter()
            .position(|k| k.case_key == key)
            .ok_or_else(|| format!("unknown cluster key {key:?}"))?;
        self.objects.push((kind, object));
        Ok(())
    }

    /// The objects under a kind's case key, to edit in place (none for an
    /// unknown key).
    pub fn objects_mut(&mut self, key: &str) -> Vec<&mut Value> {
        let Some(kind) = kinds::all().iter().position(|k| k.case_key == key) else {
            return Vec::new();
        };
        self.objects
            .iter_mut()
            .filter(|(k, _)| *k == kind)
            .map(|(_, object)| object)
            .collect()
    }

    /// Removes the labels of every object under a kind's case key (an IP CR
    /// written by hand, before kube-ovn-controller labels it).
    pub fn strip_labels(&mut self, key: &str) {
        let Some(kind) = kinds::all().iter().position(|k| k.case_key == key) else {
            return;
        };
        for (_, object) in self.objects.iter_mut().filter(|(k, _)| *k == kind) {
            if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.remove("labels");
            }
        }
    }

    /// Adds one object under its own `apiVersion` and `kind`.
    /// The same objects, listed in the reverse order: a check whose answer
    /// must not depend on the order the policy-server lists them in runs
    /// on both.
    pub fn reversed(&self) -> ClusterState {
        let mut state = self.clone();
        state.objects.reverse();
        state
    }

    pub fn insert(&mut self, object: Value) -> Result<(), BoxError> {
        let api_version = str_at(&object, &["apiVersion"]);
        let kind = str_at(&object, &["kind"]);
        let index = Self::kind_index(api_version, kind)
            .ok_or_else(|| format!("no kind {api_version}/{kind} in kinds.json"))?;
        self.objects.push((index, object));
        Ok(())
    }

    /// Makes every lookup of `api_version`/`kind` fail as scripted.
    pub fn fail(&mut self, api_version: &str, kind: &str, failure: Failure) {
        self.failures
            .push((api_version.to_string(), kind.to_string(), failure));
    }

    fn kind_index(api_version: &str, kind: &str) -> Option<usize> {
        kinds::all()
            .iter()
            .position(|k| k.api_version == api_version && k.kind == kind)
    }

    /// The scripted answer for a kind, if any; `forbidden` gives the text of
    /// a 403 for this very call.
    fn scripted(
        &self,
        api_version: &str,
        kind: &str,
        forbidden: impl FnOnce() -> String,
    ) -> Option<Result<Vec<u8>, BoxError>> {
        self.failures
            .iter()
            .find(|(v, k, _)| v == api_version && k == kind)
            .map(|(_, _, f)| match f {
                Failure::Error(text) => Err(text.clone().into()),
                Failure::Payload(bytes) => Ok(bytes.clone()),
                Failure::Forbidden => Err(forbidden().into()),
            })
    }

    /// Answers one `kubewarden/kubernetes/<operation>` call.
    pub fn answer(&self, operation: &str, payload: &[u8]) -> Result<Vec<u8>, BoxError> {
        match operation {
            "list_resources_all" | "list_resources_by_namespace" => {
                let by_namespace = operation == "list_resources_by_namespace";
                let req = ListRequest::decode(by_namespace, payload)?;
                let forbidden = || {
                    format!(
                        "list of {}/{} forbidden: the policy-server's watch cache never fills \
                         and the evaluation waits until it times out",
                        req.api_version, req.kind
                    )
                };
                if let Some(answer) = self.scripted(&req.api_version, &req.kind, forbidden) {
                    return answer;
                }
                let kind = Self::kind_index(&req.api_version, &req.kind)
                    .ok_or_else(|| unknown_kind(&req.api_version, &req.kind))?;
                let namespaced = kinds::all()[kind].namespaced;
                if by_namespace && !namespaced {
                    return Err(cluster_wide(&req.api_version, &req.kind).into());
                }
                let labels = req
                    .label_selector
                    .as_deref()
                    .map(parse_label_selector)
                    .transpose()?;
                let fields = req
                    .field_selector
                    .as_deref()
                    .map(|text| {
                        let selectable =
                            selectable_fields(&self.objects, &req.api_version, &req.kind);
                        parse_field_selector(text, &selectable)
                    })
                    .transpose()?;
                let items: Vec<Value> = self
                    .objects
                    .iter()
                    .filter(|(k, _)| *k == kind)
                    .map(|(_, o)| o)
                    .filter(|o| {
                        req.namespace
                            .as_deref()
                            .is_none_or(|ns| str_at(o, &["metadata", "namespace"]) == ns)
                    })
                    .filter(|o| {
                        labels
                            .as_ref()
                            .is_none_or(|sel| sel.iter().all(|t| t.matches(o)))
                    })
                    .filter(|o| {
                        fields
                            .as_ref()
                            .is_none_or(|sel| sel.iter().all(|t| t.matches(o)))
                    })
                    .map(|o| cached_object(o, req.field_masks.as_ref()))
                    .collect();
                Ok(serde_json::to_vec(&list_envelope(
                    &req.api_version,
                    &req.kind,
                    items,
                ))?)
            }
            "get_resource" => {
                let req: GetResourceRequest = serde_json::from_slice(payload)?;
                let kind = Self::kind_index(&req.api_version, &req.kind)
                    .ok_or_else(|| unknown_kind(&req.api_version, &req.kind))?;
                let (plural, namespaced) = (
                    kinds::all()[kind].plural.as_str(),
                    kinds::all()[kind].namespaced,
                );
                let forbidden = || {
                    let namespace = req.namespace.as_deref().filter(|_| namespaced);
                    forbidden_get(&req.api_version, &req.name, namespace, plural)
                };
                if let Some(answer) = self.scripted(&req.api_version, &req.kind, forbidden) {
                    return answer;
                }
                let found = self
                    .objects
                    .iter()
                    .filter(|(k, _)| *k == kind)
                    .map(|(_, o)| o)
                    .find(|o| {
                        str_at(o, &["metadata", "name"]) == req.name
                            && (!namespaced
                                || Some(str_at(o, &["metadata", "namespace"]))
                                    == req.namespace.as_deref())
                    });
                match found {
                    Some(object) => Ok(serde_json::to_vec(&fetched_object(
                        object,
                        req.field_masks.as_ref(),
                    ))?),
                    // policy-evaluator reads with kube-rs' get_opt, which
                    // turns the API server's 404 into None, then fails with
                    // this text (`Client::get_resource`, client.rs).
                    None => Err(not_found(
                        &req.api_version,
                        &req.kind,
                        &req.name,
                        req.namespace.as_deref(),
                    )
                    .into()),
                }
            }
            other => Err(format!("unsupported host capability kubernetes/{other}").into()),
        }
    }
}

fn str_at<'a>(object: &'a Value, path: &[&str]) -> &'a str {
    path.iter()
        .try_fold(object, |v, key| v.get(key))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// One term of a label selector.
enum LabelTerm {
    Equals(String, String),
    NotEquals(String, String),
    Exists(String),
    NotExists(String),
}

impl LabelTerm {
    fn matches(&self, object: &Value) -> bool {
        let label = |k: &str| {
            object
                .get("metadata")
                .and_then(|m| m.get("labels"))
                .and_then(|l| l.get(k))
        };
        match self {
            LabelTerm::Equals(k, v) => label(k).and_then(Value::as_str) == Some(v),
            LabelTerm::NotEquals(k, v) => label(k).and_then(Value::as_str) != Some(v),
            LabelTerm::Exists(k) => label(k).is_some(),
            LabelTerm::NotExists(k) => label(k).is_none(),
        }
    }
}

fn parse_label_selector(selector: &str) -> Result<Vec<LabelTerm>, BoxError> {
    selector
        .split(',')
        .filter(|t| !t.trim().is_empty())
        .map(|term| {
            let term = term.trim();
            if let Some((k, v)) = term.split_once("!=") {
                Ok(LabelTerm::NotEquals(k.trim().into(), v.trim().into()))
            } else if let Some((k, v)) = term.split_once("==").or_else(|| term.split_once('=')) {
                Ok(LabelTerm::Equals(k.trim().into(), v.trim().into()))
            } else if let Some(k) = term.strip_prefix('!') {
                Ok(LabelTerm::NotExists(k.trim().into()))
            } else if term.contains(' ') {
                Err(format!("unsupported label selector term {term:?}").into())
            } else {
                Ok(LabelTerm::Exists(term.into()))
            }
        })
        .collect()
}

/// One term of a field selector: `metadata.name` or `metadata.namespace`.
struct FieldTerm {
    path: Vec<String>,
    value: String,
    equal: bool,
}

impl FieldTerm {
    fn matches(&self, object: &Value) -> bool {
        let path: Vec<&str> = self.path.iter().map(String::as_str).collect();
        (str_at(object, &path) == self.value) == self.equal
    }
}

/// The fields a CRD among the objects declares selectable for a kind
/// (`spec.versions[].selectableFields[].jsonPath`, as `spec.subnet`), as
/// kube-apiserver 1.32+ serves them.
fn selectable_fields(objects: &[(usize, Value)], api_version: &str, kind: &str) -> Vec<String> {
    let Some((group, version)) = api_version.split_once('/') else {
        return Vec::new();
    };
    let plural = kinds::all()
        .iter()
        .find(|k| k.api_version == api_version && k.kind == kind)
        .map(|k| k.plural.as_str())
        .unwrap_or_default();
    let crd = format!("{plural}.{group}");
    objects
        .iter()
        .filter(|(k, o)| {
            kinds::all()[*k].kind == "CustomResourceDefinition"
                && str_at(o, &["metadata", "name"]) == crd
        })
        .filter_map(|(_, o)| o.pointer("/spec/versions")?.as_array())
        .flatten()
        .filter(|v| str_at(v, &["name"]) == version)
        .filter_map(|v| v.get("selectableFields")?.as_array())
        .flatten()
        .filter_map(|f| {
            f.get("jsonPath")?
                .as_str()?
                .strip_prefix('.')
                .map(str::to_string)
        })
        .collect()
}

fn parse_field_selector(selector: &str, selectable: &[String]) -> Result<Vec<FieldTerm>, BoxError> {
    selector
        .split(',')
        .filter(|t| !t.trim().is_empty())
        .map(|term| {
            let (key, value, equal) = if let Some((k, v)) = term.split_once("!=") {
                (k, v, false)
            } else if let Some((k, v)) = term.split_once("==").or_else(|| term.split_once('=')) {
                (k, v, true)
            } else {
                return Err(format!("invalid field selector term {term:?}").into());
            };
            let key = key.trim();
            if !matches!(key, "metadata.name" | "metadata.namespace")
                && !selectable.iter().any(|f| f == key)
            {
                return Err(format!("unsupported field selector {key:?}").into());
            }
            Ok(FieldTerm {
                path: key.split('.').map(str::to_string).collect(),
                value: value.trim().to_string(),
                equal,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cluster() -> ClusterState {
        ClusterState::from_json(&json!({
            "ips": [
                {"apiVersion": "kubeovn.io/v1", "kind": "IP",
                 "metadata": {"name": "a.default", "labels": {"ovn.kubernetes.io/subnet": "s1"}, "managedFields": [{}]},
                 "spec": {"subnet": "s1", "ipAddress": "10.0.0.1", "macAddress": "x"}},
                {"apiVersion": "kubeovn.io/v1", "kind": "IP",
                 "metadata": {"name": "b.default", "labels": {"ovn.kubernetes.io/subnet": "s2"}},
                 "spec": {"subnet": "s2", "ipAddress": "10.0.0.2"}}
            ],
            "services": [{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "kubernetes", "namespace": "default"}}]
        }))
        .unwrap()
    }

    fn list(op: &str, req: Value) -> Result<Value, BoxError> {
        Ok(serde_json::from_slice(
            &cluster().answer(op, &serde_json::to_vec(&req)?)?,
        )?)
    }

    #[test]
    fn lists_with_selectors_and_masks() {
        let all = list(
            "list_resources_all",
            json!({"api_version": "kubeovn.io/v1", "kind": "IP"}),
        )
        .unwrap();
        assert_eq!(all["kind"], "IPList");
        assert_eq!(all["items"].as_array().unwrap().len(), 2);
        // The watch cache empties managedFields and keeps the field.
        assert_eq!(all["items"][0]["metadata"]["managedFields"], json!([]));
        assert_eq!(all["items"][0]["metadata"]["annotations"], json!({}));

        let s2 = list(
            "list_resources_all",
            json!({"api_version": "kubeovn.io/v1", "kind": "IP", "label_selector": "ovn.kubernetes.io/subnet=s2"}),
        )
        .unwrap();
        assert_eq!(s2["items"].as_array().unwrap().len(), 1);
        assert_eq!(s2["items"][0]["metadata"]["name"], "b.default");

        let masked = list(
            "list_resources_all",
            json!({"api_version": "kubeovn.io/v1", "kind": "IP", "field_selector": "metadata.name=a.default",
                   "field_masks": ["spec.ipAddress"]}),
        )
        .unwrap();
        assert_eq!(masked["items"][0]["spec"], json!({"ipAddress": "10.0.0.1"}));

        let err = list(
            "list_resources_by_namespace",
            json!({"api_version": "kubeovn.io/v1", "kind": "IP", "namespace": "x"}),
        );
        assert!(err.unwrap_err().to_string().contains("is cluster wide"));
    }

    #[test]
    fn forbidden_get_is_kube_rs_text() {
        // As kwctl recorded it (test_data/session_ovn-dnat-eip-lookup-forbidden.yml).
        let recorded = r#"ApiError: ovn-eips.kubeovn.io "eip-a" is forbidden: User "system:serviceaccount:kubewarden:policy-server" cannot get resource "ovn-eips" in API group "kubeovn.io" at the cluster scope: Forbidden (Status { status: Some(Failure), code: 403, message: "ovn-eips.kubeovn.io \"eip-a\" is forbidden: User \"system:serviceaccount:kubewarden:policy-server\" cannot get resource \"ovn-eips\" in API group \"kubeovn.io\" at the cluster scope", metadata: Some(ListMeta { continue_: None, remaining_item_count: None, resource_version: None, self_link: None }), reason: "Forbidden", details: Some(StatusDetails { name: "eip-a", group: "kubeovn.io", kind: "ovn-eips", uid: "", causes: [], retry_after_seconds: 0 }) })"#;
        assert_eq!(
            forbidden_get("kubeovn.io/v1", "eip-a", None, "ovn-eips"),
            recorded
        );
    }

    #[test]
    fn gets_by_name() {
        let svc = list(
            "get_resource",
            json!({"api_version": "v1", "kind": "Service", "name": "kubernetes", "namespace": "default", "disable_cache": false}),
        );
        assert_eq!(svc.unwrap()["metadata"]["name"], "kubernetes");
        let missing = list(
            "get_resource",
            json!({"api_version": "kubeovn.io/v1", "kind": "IPPool", "name": "p", "disable_cache": false}),
        );
        assert!(
            missing.unwrap_err().to_string()
                == "Cannot find kubeovn.io/v1/IPPool named 'p' inside of namespace 'None'"
        );
    }
}
