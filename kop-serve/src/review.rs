//! The AdmissionReview exchange as policy-server has it: the request as it
//! deserializes it (policy-evaluator's admission_request.rs) and re-serializes
//! it for the policy, the AdmissionResponse built from the policy's answer
//! (admission_response.rs `from_policy_validation_response`), what the policy's
//! mode, `allowedToMutate` and `message` do to it (admission_response_handler.rs
//! `process_response`), and axum's JSON extractor's rejections.

use base64::Engine as _;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};

/// `POST /validate/<id>` and `/audit/<id>`: an AdmissionReview.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionReviewRequest {
    /// `AdmissionReview` (not checked).
    pub kind: Option<String>,
    /// `admission.k8s.io/v1` (not checked).
    pub api_version: Option<String>,
    /// The request.
    pub request: AdmissionRequest,
}

/// `POST /validate_raw/<id>`: any JSON under `request`.
#[derive(Debug, Deserialize)]
pub struct RawReviewRequest {
    /// Given to the policy as is.
    pub request: Value,
}

/// A group, version and kind.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GroupVersionKind {
    /// `""` for the core group.
    pub group: String,
    /// `v1`
    pub version: String,
    /// `Pod`
    pub kind: String,
}

/// A group, version and resource.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GroupVersionResource {
    /// `""` for the core group.
    pub group: String,
    /// `v1`
    pub version: String,
    /// `pods`
    pub resource: String,
}

/// k8s-openapi's `authentication/v1` `UserInfo`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct UserInfo {
    /// Extra attributes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra: Option<BTreeMap<String, Vec<String>>>,
    /// Groups.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub groups: Option<Vec<String>>,
    /// UID.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// User name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
}

/// admission/v1 `AdmissionRequest`, with the fields policy-evaluator keeps.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionRequest {
    /// Copied to the response.
    pub uid: String,
    /// The object's kind.
    pub kind: GroupVersionKind,
    /// The object's resource.
    pub resource: GroupVersionResource,
    /// `status`, `scale`, ...
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sub_resource: Option<String>,
    /// The kind as requested.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_kind: Option<GroupVersionKind>,
    /// The resource as requested.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_resource: Option<GroupVersionResource>,
    /// The subresource as requested.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_sub_resource: Option<String>,
    /// The object's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The object's namespace.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// CREATE, UPDATE, DELETE, CONNECT.
    pub operation: String,
    /// Who asks.
    pub user_info: UserInfo,
    /// The new object (absent for DELETE).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object: Option<Value>,
    /// The old object.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_object: Option<Value>,
    /// Dry run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<bool>,
    /// The operation's options.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub options: Option<Value>,
}

/// What is evaluated: an AdmissionRequest, or raw JSON.
#[derive(Clone, Debug)]
pub enum ValidateRequest {
    /// `/validate_raw`
    Raw(Value),
    /// `/validate`, `/audit`
    Admission(Box<AdmissionRequest>),
}

impl ValidateRequest {
    /// The uid the response carries (a raw request's `uid`, or `""`).
    pub fn uid(&self) -> String {
        match self {
            Self::Raw(v) => v
                .get("uid")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            Self::Admission(r) => r.uid.clone(),
        }
    }

    /// The request as the policy receives it.
    pub fn to_value(&self) -> Value {
        match self {
            Self::Raw(v) => v.clone(),
            Self::Admission(r) => serde_json::to_value(r).unwrap_or(Value::Null),
        }
    }

    /// The namespace of an AdmissionRequest.
    pub fn namespace(&self) -> Option<&str> {
        match self {
            Self::Raw(_) => None,
            Self::Admission(r) => r.namespace.as_deref(),
        }
    }
}

/// A `StatusCause` of the response.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct StatusCause {
    /// Not set here.
    pub reason: Option<String>,
    /// The policy's own message, under a custom one.
    pub message: Option<String>,
    /// Not set here.
    pub field: Option<String>,
}

/// The `details` of a response's status.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct StatusDetails {
    /// Not set here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Not set here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Not set here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Not set here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// The policy's message under a custom one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub causes: Vec<StatusCause>,
    /// Not set here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after_seconds: Option<i32>,
}

/// A response's `status`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ResponseStatus {
    /// Not set here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// Why the request is rejected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Not set here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The policy's message under a custom one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<StatusDetails>,
    /// The HTTP code the API server reports.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<u16>,
}

/// admission/v1 `AdmissionResponse` as policy-evaluator serializes it
/// (`auditAnnotations` and `warnings` always present, `null` when unset).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionResponse {
    /// The request's uid.
    pub uid: String,
    /// The decision.
    pub allowed: bool,
    /// `JSONPatch` with a patch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch_type: Option<String>,
    /// The base64 JSON patch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch: Option<String>,
    /// Why not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<ResponseStatus>,
    /// Annotations for the audit log.
    pub audit_annotations: Option<HashMap<String, String>>,
    /// Warnings for the client.
    pub warnings: Option<Vec<String>>,
}

/// The AdmissionReview answered (`AdmissionReviewResponse::new`).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AdmissionReviewResponse<'a> {
    kind: &'static str,
    api_version: &'static str,
    response: &'a AdmissionResponse,
}

/// The body of a `/validate` or `/audit` answer.
pub fn admission_review(response: &AdmissionResponse) -> Vec<u8> {
    serde_json::to_vec(&AdmissionReviewResponse {
        kind: "AdmissionReview",
        api_version: "admission.k8s.io/v1",
        response,
    })
    .unwrap_or_default()
}

/// The answer to a raw review (`RawReviewResponse`).
#[derive(Serialize)]
struct RawReviewResponse<'a> {
    response: &'a AdmissionResponse,
}

/// The body of a `/validate_raw` answer.
pub fn raw_review(response: &AdmissionResponse) -> Vec<u8> {
    serde_json::to_vec(&RawReviewResponse { response }).unwrap_or_default()
}

impl AdmissionResponse {
    /// `AdmissionResponse::reject`
    pub fn reject(uid: String, message: String, code: u16) -> Self {
        AdmissionResponse {
            uid,
            allowed: false,
            status: Some(ResponseStatus {
                message: Some(message),
                code: Some(code),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    /// `AdmissionResponse::reject_internal_server_error`
    pub fn internal_server_error(uid: String, message: String) -> Self {
        Self::reject(uid, format!("internal server error: {message}"), 500)
    }
}

/// The policy's answer to `validate` (the SDK's `ValidationResponse`).
#[derive(Debug, Deserialize)]
struct ValidationResponse {
    accepted: bool,
    message: Option<String>,
    code: Option<u16>,
    mutated_object: Option<Value>,
    audit_annotations: Option<HashMap<String, String>>,
    warnings: Option<Vec<String>>,
}

/// The response for what `validate` returned (runtimes/wapc/runtime.rs
/// `validate`, then `from_policy_validation_response`). `object` is the
/// request's `object` (the whole request for a raw one).
pub fn from_policy(uid: String, object: Option<&Value>, answer: &[u8]) -> AdmissionResponse {
    let answer: ValidationResponse = match serde_json::from_slice(answer) {
        Ok(a) => a,
        Err(e) => {
            return AdmissionResponse::internal_server_error(
                uid,
                format!("invalid response from policy: {e}"),
            );
        }
    };
    if answer.mutated_object.is_some() && object.is_none() {
        return AdmissionResponse {
            uid,
            status: Some(ResponseStatus {
                message: Some(
                    "Incoming object is null, which happens only with DELETE operations, but the policy is attempting a mutation. This is not allowed"
                        .to_string(),
                ),
                ..Default::default()
            }),
            ..Default::default()
        };
    }
    // policy-evaluator writes json_patch's diff; this writes one `replace`
    // of the whole object, which the API server applies the same way.
    let patch = match (&answer.mutated_object, object) {
        (Some(mutated), Some(object)) if mutated != object => {
            let ops = serde_json::json!([{"op": "replace", "path": "", "value": mutated}]);
            Some(base64::engine::general_purpose::STANDARD.encode(ops.to_string()))
        }
        _ => None,
    };
    let status = (answer.message.is_some() || answer.code.is_some()).then(|| ResponseStatus {
        message: answer.message.clone(),
        code: answer.code,
        ..Default::default()
    });
    AdmissionResponse {
        uid,
        allowed: answer.accepted,
        patch_type: patch.as_ref().map(|_| "JSONPatch".to_string()),
        patch,
        status,
        audit_annotations: answer.audit_annotations,
        warnings: answer.warnings,
    }
}

/// What the policy's entry in `policies.yml` does to its answers.
#[derive(Clone, Debug)]
pub struct Handling {
    /// The policy id, named in a mutation refusal.
    pub policy_id: String,
    /// `policyMode: monitor`
    pub monitor: bool,
    /// `allowedToMutate`
    pub allowed_to_mutate: bool,
    /// `message`: replaces a rejection's message.
    pub custom_message: Option<String>,
}

impl Handling {
    /// `AdmissionResponseHandler::process_response`: monitor mode, then the
    /// mutation constraint, then the custom rejection message.
    pub fn process(&self, response: AdmissionResponse) -> AdmissionResponse {
        let mut response = response;
        if self.monitor {
            eprintln!(
                "kop-serve: policy {} (monitor mode) would answer {}",
                self.policy_id,
                serde_json::to_string(&response).unwrap_or_default()
            );
            response = AdmissionResponse {
                allowed: true,
                patch_type: None,
                patch: None,
                status: None,
                ..response
            };
        } else if !self.allowed_to_mutate && response.patch.is_some() {
            response = AdmissionResponse {
                allowed: false,
                status: Some(ResponseStatus {
                    message: Some(format!(
                        "Request rejected by policy {}. The policy attempted to mutate the request, but it is currently configured to not allow mutations.",
                        self.policy_id
                    )),
                    ..Default::default()
                }),
                patch: None,
                patch_type: None,
                ..response
            };
        }
        if response.allowed {
            return response;
        }
        let Some(custom) = &self.custom_message else {
            return response;
        };
        let status = response.status.take().unwrap_or_default();
        let mut details = status.details.clone().unwrap_or_default();
        details.causes.push(StatusCause {
            message: Some(status.message.clone().unwrap_or_default()),
            ..Default::default()
        });
        AdmissionResponse {
            status: Some(ResponseStatus {
                message: Some(custom.clone()),
                details: Some(details),
                ..status
            }),
            ..response
        }
    }
}

/// An answer that is not an AdmissionReview: HTTP status and body text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    /// 400, 413, 415 or 422.
    pub status: u16,
    /// axum's `body_text()`.
    pub text: String,
}

/// The request body limit of axum's `Bytes` extractor (2 MiB).
pub const BODY_LIMIT: usize = 2_097_152;

/// axum's `Json<T>` extractor: the content type, the body limit, then the
/// JSON (syntax errors 400, data errors 422 with `serde_path_to_error`'s path).
pub fn extract_json<T: DeserializeOwned>(
    content_type: Option<&str>,
    body: Option<&[u8]>,
) -> Result<T, Rejection> {
    if !is_json(content_type) {
        return Err(Rejection {
            status: 415,
            text: "Expected request with `Content-Type: application/json`".to_string(),
        });
    }
    let Some(body) = body else {
        return Err(Rejection {
            status: 413,
            text: "Failed to buffer the request body: length limit exceeded".to_string(),
        });
    };
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    let value: T = serde_path_to_error::deserialize(&mut deserializer).map_err(|e| {
        let data = e.inner().classify() == serde_json::error::Category::Data;
        Rejection {
            status: if data { 422 } else { 400 },
            text: if data {
                format!("Failed to deserialize the JSON body into the target type: {e}")
            } else {
                format!("Failed to parse the request body as JSON: {e}")
            },
        }
    })?;
    deserializer.end().map_err(|e| Rejection {
        status: 400,
        text: format!("Failed to parse the request body as JSON: {e}"),
    })?;
    Ok(value)
}

/// `application/json` or `application/*+json`, parameters allowed.
fn is_json(content_type: Option<&str>) -> bool {
    let Some(essence) = content_type.and_then(|c| c.split(';').next()) else {
        return false;
    };
    let Some((kind, subtype)) = essence.trim().split_once('/') else {
        return false;
    };
    let subtype = subtype.to_ascii_lowercase();
    kind.eq_ignore_ascii_case("application") && (subtype == "json" || subtype.ends_with("+json"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn handling(monitor: bool, custom: Option<&str>) -> Handling {
        Handling {
            policy_id: "p".into(),
            monitor,
            allowed_to_mutate: false,
            custom_message: custom.map(String::from),
        }
    }

    #[test]
    fn rejection_as_policy_evaluator_serializes_it() {
        let r = from_policy(
            "u".into(),
            Some(&json!({})),
            br#"{"accepted":false,"message":"no","code":403}"#,
        );
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"uid": "u", "allowed": false, "status": {"message": "no", "code": 403},
                   "auditAnnotations": null, "warnings": null})
        );
        let review: Value = serde_json::from_slice(&admission_review(&r)).unwrap();
        assert_eq!(review["kind"], "AdmissionReview");
        assert_eq!(review["apiVersion"], "admission.k8s.io/v1");
    }

    #[test]
    fn monitor_mode_accepts_and_keeps_warnings() {
        let r = from_policy(
            "u".into(),
            Some(&json!({})),
            br#"{"accepted":false,"message":"no","code":403,"warnings":["w"]}"#,
        );
        let m = handling(true, None).process(r);
        assert!(m.allowed);
        assert_eq!(m.status, None);
        assert_eq!(m.warnings, Some(vec!["w".to_string()]));
    }

    #[test]
    fn custom_message_keeps_the_policy_one_as_a_cause() {
        let r = AdmissionResponse::reject("u".into(), "orig".into(), 400);
        let c = handling(false, Some("custom")).process(r);
        let status = c.status.unwrap();
        assert_eq!(status.message.as_deref(), Some("custom"));
        assert_eq!(status.code, Some(400));
        assert_eq!(
            status.details.unwrap().causes[0].message.as_deref(),
            Some("orig")
        );
    }

    #[test]
    fn mutation_refused_unless_allowed() {
        let r = from_policy(
            "u".into(),
            Some(&json!({"a": 1})),
            br#"{"accepted":true,"mutated_object":{"a":2}}"#,
        );
        assert!(r.patch.is_some());
        let refused = handling(false, None).process(r);
        assert!(!refused.allowed);
        assert!(
            refused
                .status
                .unwrap()
                .message
                .unwrap()
                .contains("not allow mutations")
        );
    }

    #[test]
    fn bad_policy_answer_is_a_500() {
        let r = from_policy("u".into(), None, b"nope");
        let status = r.status.unwrap();
        assert_eq!(status.code, Some(500));
        assert!(
            status
                .message
                .unwrap()
                .starts_with("internal server error: invalid response from policy: ")
        );
    }

    #[test]
    fn json_extractor_rejections() {
        let ok: Result<Value, _> =
            extract_json(Some("application/json; charset=utf-8"), Some(b"{}"));
        assert!(ok.is_ok());
        let r = extract_json::<Value>(Some("text/plain"), Some(b"{}")).unwrap_err();
        assert_eq!(r.status, 415);
        let r = extract_json::<Value>(Some("application/json"), Some(b"not json")).unwrap_err();
        assert_eq!(
            r,
            Rejection {
                status: 400,
                text: "Failed to parse the request body as JSON: expected ident at line 1 column 2"
                    .into()
            }
        );
        let r = extract_json::<AdmissionReviewRequest>(
            Some("application/json"),
            Some(br#"{"request":{}}"#),
        )
        .unwrap_err();
        assert_eq!(r.status, 422);
        assert_eq!(
            r.text,
            "Failed to deserialize the JSON body into the target type: request: missing field `uid` at line 1 column 13"
        );
        let r = extract_json::<Value>(Some("application/json"), None).unwrap_err();
        assert_eq!(r.status, 413);
    }
}
