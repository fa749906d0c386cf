//! `kwctl`'s replay sessions (`--replay-host-capabilities-interactions`): a
//! YAML list of exchanges, each a host request (a YAML document tagged with
//! its `CallbackRequestType` variant) and the answer the guest receives.
//!
//! [`Session`] replays one the way `kwctl`'s proxy does: requests must come
//! in the recorded order and be equal, field for field, to the recorded
//! ones. [`record`] writes the calls of a run in the same format, so the
//! sessions in `test_data/` are the policy's real calls, and `kwctl` reads
//! them unchanged.

use crate::BoxError;
use fakehost::requests::{
    GetResourceRequest, ListAllResourcesRequest, ListResourcesByNamespaceRequest,
};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, VecDeque};
use std::path::Path;
use std::sync::Mutex;

/// The Kubernetes variants of policy-evaluator's `CallbackRequestType`,
/// with its variant and field names, so both sides read the same YAML.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
pub enum CallbackRequest {
    /// `list_resources_by_namespace`
    KubernetesListResourceNamespace {
        /// `apiVersion` of the kind
        api_version: String,
        /// the kind
        kind: String,
        /// the namespace
        namespace: String,
        /// label selector
        label_selector: Option<String>,
        /// field selector
        field_selector: Option<String>,
        /// field masks
        #[serde(default)]
        field_masks: Option<BTreeSet<String>>,
    },
    /// `list_resources_all`
    KubernetesListResourceAll {
        /// `apiVersion` of the kind
        api_version: String,
        /// the kind
        kind: String,
        /// label selector
        label_selector: Option<String>,
        /// field selector
        field_selector: Option<String>,
        /// field masks
        #[serde(default)]
        field_masks: Option<BTreeSet<String>>,
    },
    /// `get_resource`
    KubernetesGetResource {
        /// `apiVersion` of the kind
        api_version: String,
        /// the kind
        kind: String,
        /// object name
        name: String,
        /// namespace, `None` for cluster-scoped kinds
        namespace: Option<String>,
        /// bypass the host's 5 s cache
        disable_cache: bool,
        /// field masks
        #[serde(default)]
        field_masks: Option<BTreeSet<String>>,
    },
}

impl CallbackRequest {
    /// The request a `kubewarden/kubernetes/<operation>` host call carries,
    /// as the policy-server turns it into a callback request.
    pub fn from_host_call(operation: &str, payload: &[u8]) -> Result<Self, BoxError> {
        Ok(match operation {
            "list_resources_all" => {
                let r: ListAllResourcesRequest = serde_json::from_slice(payload)?;
                CallbackRequest::KubernetesListResourceAll {
                    api_version: r.api_version,
                    kind: r.kind,
                    label_selector: r.label_selector,
                    field_selector: r.field_selector,
                    field_masks: r.field_masks,
                }
            }
            "list_resources_by_namespace" => {
                let r: ListResourcesByNamespaceRequest = serde_json::from_slice(payload)?;
                CallbackRequest::KubernetesListResourceNamespace {
                    api_version: r.api_version,
                    kind: r.kind,
                    namespace: r.namespace,
                    label_selector: r.label_selector,
                    field_selector: r.field_selector,
                    field_masks: r.field_masks,
                }
            }
            "get_resource" => {
                let r: GetResourceRequest = serde_json::from_slice(payload)?;
                CallbackRequest::KubernetesGetResource {
                    api_version: r.api_version,
                    kind: r.kind,
                    name: r.name,
                    namespace: r.namespace,
                    disable_cache: r.disable_cache,
                    field_masks: r.field_masks,
                }
            }
            other => return Err(format!("unsupported host capability kubernetes/{other}").into()),
        })
    }

    /// The `kubewarden/kubernetes/<operation>` host call that becomes this
    /// request: the operation and the SDK's JSON payload (the variant's
    /// fields, which carry the SDK's names).
    pub fn to_host_call(&self) -> Result<(&'static str, serde_json::Value), BoxError> {
        let operation = match self {
            CallbackRequest::KubernetesListResourceAll { .. } => "list_resources_all",
            CallbackRequest::KubernetesListResourceNamespace { .. } => {
                "list_resources_by_namespace"
            }
            CallbackRequest::KubernetesGetResource { .. } => "get_resource",
        };
        // Externally tagged: {"<Variant>": {<fields>}}.
        let tagged = serde_json::to_value(self)?;
        let fields = tagged.as_object().and_then(|m| m.values().next()).cloned();
        Ok((operation, fields.ok_or("a request without fields")?))
    }
}

/// Reads a session file's exchanges, each request parsed.
pub fn exchanges(path: &Path) -> Result<Vec<(CallbackRequest, Response)>, BoxError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    parse_exchanges(&text).map_err(|e| format!("{}: {e}", path.display()).into())
}

/// A session's YAML text as exchanges, each request parsed.
fn parse_exchanges(text: &str) -> Result<Vec<(CallbackRequest, Response)>, BoxError> {
    let exchanges: Option<Vec<Exchange>> = yaml_serde::from_str(text)?;
    exchanges
        .unwrap_or_default()
        .into_iter()
        .map(|Exchange::Exchange { request, response }| {
            Ok((yaml_serde::from_str(&request)?, response))
        })
        .collect()
}

/// The answer of one exchange.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(tag = "type")]
pub enum Response {
    /// The guest receives these bytes.
    Success {
        /// The JSON text the guest receives.
        payload: String,
    },
    /// The host call fails with this message.
    Error {
        /// The error text.
        message: String,
    },
}

/// One recorded host call.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(tag = "type")]
pub enum Exchange {
    /// kwctl's only exchange type.
    Exchange {
        /// The request, a YAML document of a tagged [`CallbackRequest`].
        request: String,
        /// The answer.
        response: Response,
    },
}

/// A replay session being consumed.
#[derive(Debug, Default)]
pub struct Session {
    pending: Mutex<VecDeque<(CallbackRequest, Response)>>,
}

impl Session {
    /// Reads a session file.
    pub fn load(path: &Path) -> Result<Self, BoxError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Self::parse(&text).map_err(|e| format!("{}: {e}", path.display()).into())
    }

    /// Parses a session's YAML text.
    pub fn parse(text: &str) -> Result<Self, BoxError> {
        Ok(Session {
            pending: Mutex::new(parse_exchanges(text)?.into()),
        })
    }

    /// Answers one host call with the next exchange, as kwctl does.
    pub fn answer(&self, operation: &str, payload: &[u8]) -> Result<Vec<u8>, BoxError> {
        let request = CallbackRequest::from_host_call(operation, payload)?;
        let mut pending = self.pending.lock().map_err(|_| "session poisoned")?;
        let Some((expected, response)) = pending.pop_front() else {
            return Err("the list of recorded responses is empty".into());
        };
        if expected != request {
            return Err(format!(
                "Replay error: unexpected request. Was expecting {expected:?}, got {request:?} instead"
            )
            .into());
        }
        match response {
            Response::Success { payload } => Ok(payload.into_bytes()),
            Response::Error { message } => Err(message.into()),
        }
    }

    /// How many recorded exchanges were not asked for.
    pub fn remaining(&self) -> usize {
        self.pending.lock().map_or(0, |p| p.len())
    }
}

/// Writes host calls and their answers as a kwctl session file.
pub fn record(path: &Path, exchanges: &[(CallbackRequest, Response)]) -> Result<(), BoxError> {
    let exchanges = exchanges
        .iter()
        .map(|(request, response)| {
            Ok(Exchange::Exchange {
                request: yaml_serde::to_string(request)?,
                response: response.clone(),
            })
        })
        .collect::<Result<Vec<_>, BoxError>>()?;
    std::fs::write(path, yaml_serde::to_string(&exchanges)?)
        .map_err(|e| format!("cannot write {}: {e}", path.display()).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SESSION: &str = r#"
- type: Exchange
  request: |
    !KubernetesListResourceAll
    api_version: kubeovn.io/v1
    kind: IP
    label_selector: null
    field_selector: null
  response:
    type: Success
    payload: '{"apiVersion":"kubeovn.io/v1","kind":"IPList","items":[]}'
- type: Exchange
  request: |
    !KubernetesGetResource
    api_version: kubeovn.io/v1
    kind: Subnet
    name: ovn-default
    namespace: null
    disable_cache: false
  response:
    type: Error
    message: 'boom'
"#;

    #[test]
    fn replays_in_order_and_compares_every_field() {
        let session = Session::parse(SESSION).unwrap();
        let list = br#"{"api_version":"kubeovn.io/v1","kind":"IP","label_selector":null,"field_selector":null,"field_masks":null}"#;
        assert!(session.answer("list_resources_all", list).is_ok());
        let get = br#"{"api_version":"kubeovn.io/v1","kind":"Subnet","name":"ovn-default","namespace":null,"disable_cache":false,"field_masks":null}"#;
        assert_eq!(
            session.answer("get_resource", get).unwrap_err().to_string(),
            "boom"
        );
        assert!(
            session
                .answer("get_resource", get)
                .unwrap_err()
                .to_string()
                .contains("empty")
        );

        let masked = Session::parse(SESSION).unwrap();
        let with_masks = br#"{"api_version":"kubeovn.io/v1","kind":"IP","label_selector":null,"field_selector":null,"field_masks":["spec.subnet"]}"#;
        assert!(
            masked
                .answer("list_resources_all", with_masks)
                .unwrap_err()
                .to_string()
                .starts_with("Replay error: unexpected request.")
        );
    }

    #[test]
    fn recorded_sessions_read_back() {
        let dir = std::env::temp_dir().join(format!("kop-session-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("s.yml");
        let request = CallbackRequest::KubernetesGetResource {
            api_version: "v1".into(),
            kind: "Service".into(),
            name: "kubernetes".into(),
            namespace: Some("default".into()),
            disable_cache: false,
            field_masks: Some(["spec.clusterIP".to_string()].into()),
        };
        record(
            &path,
            &[(
                request.clone(),
                Response::Success {
                    payload: "{}".into(),
                },
            )],
        )
        .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("!KubernetesGetResource"), "{text}");
        let session = Session::load(&path).unwrap();
        let payload = br#"{"api_version":"v1","kind":"Service","name":"kubernetes","namespace":"default","disable_cache":false,"field_masks":["spec.clusterIP"]}"#;
        assert_eq!(session.answer("get_resource", payload).unwrap(), b"{}");
        assert_eq!(session.remaining(), 0);
        std::fs::remove_dir_all(&dir).ok();
    }
}
