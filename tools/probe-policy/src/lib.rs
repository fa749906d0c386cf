//! The probe of `make bench-e2e` (e2e/tools/bench_e2e.py): the floor a
//! context-aware policy can reach in the policy-server.
//!
//! Its settings list host calls (`{"calls": [{"operation", "payload"}]}`,
//! recorded from kube-ovn-policy's own evaluation of a request). For every
//! request it makes exactly those calls, in order, reads none of their
//! answers, and accepts. Whatever a decision of the policy costs beyond the
//! probe's is the module's own work: decoding and checking. In a payload,
//! `{name}` and `{namespace}` stand for the request's own (a pod's IP object
//! is `<pod>.<namespace>`): each request then fetches its own object, as the
//! policy does, and not one the policy-server keeps for 5 s.

use serde::Deserialize;
use serde_json::value::RawValue;
use wapc_guest::{CallResult, register_function};

#[unsafe(no_mangle)]
pub extern "C" fn wapc_init() {
    register_function("validate", validate);
    register_function("validate_settings", validate_settings);
    register_function(
        "protocol_version",
        kubewarden_policy_sdk::protocol_version_guest,
    );
}

#[derive(Deserialize)]
struct Call<'a> {
    operation: String,
    #[serde(borrow)]
    payload: &'a RawValue,
}

#[derive(Deserialize)]
struct Settings<'a> {
    #[serde(borrow, default)]
    calls: Vec<Call<'a>>,
}

#[derive(Deserialize)]
struct ValidationRequest<'a> {
    #[serde(borrow)]
    settings: Settings<'a>,
    #[serde(borrow)]
    request: Request<'a>,
}

/// What of the AdmissionRequest a payload may name; the rest is skipped.
#[derive(Deserialize)]
struct Request<'a> {
    #[serde(borrow, default)]
    name: &'a str,
    #[serde(borrow, default)]
    namespace: &'a str,
}

fn validate(payload: &[u8]) -> CallResult {
    let request: ValidationRequest = match serde_json::from_slice(payload) {
        Ok(request) => request,
        Err(e) => return Ok(reject(&format!("probe: cannot read the request: {e}"))),
    };
    let own = &request.request;
    for call in &request.settings.calls {
        let raw = call.payload.get();
        let payload = if raw.contains("{name}") || raw.contains("{namespace}") {
            std::borrow::Cow::Owned(
                raw.replace("{name}", own.name)
                    .replace("{namespace}", own.namespace),
            )
        } else {
            std::borrow::Cow::Borrowed(raw)
        };
        let answer = wapc_guest::host_call(
            "kubewarden",
            "kubernetes",
            &call.operation,
            payload.as_bytes(),
        );
        if let Err(e) = answer {
            return Ok(reject(&format!("probe: {} failed: {e}", call.operation)));
        }
    }
    Ok(br#"{"accepted":true}"#.to_vec())
}

fn validate_settings(payload: &[u8]) -> CallResult {
    Ok(match serde_json::from_slice::<Settings>(payload) {
        Ok(_) => br#"{"valid":true}"#.to_vec(),
        Err(e) => {
            serde_json::to_vec(&serde_json::json!({"valid": false, "message": e.to_string()}))?
        }
    })
}

fn reject(message: &str) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({"accepted": false, "message": message, "code": 500}))
        .unwrap_or_default()
}
