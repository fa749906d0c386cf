//! `kop-run`: evaluates one request the way `kwctl run` does, in this
//! repository's waPC host, and prints the AdmissionResponse.
//!
//! ```text
//! kop-run [options] <policy.wasm> [<request.json>]
//!   -r, --request-path FILE    an AdmissionRequest, an AdmissionReview, or a case file
//!                              (`request`, `cluster`, `settings`: lookups answered from `cluster`;
//!                              the kinds of its `forbidden` answered as a 403 would be)
//!   --replay-host-capabilities-interactions FILE   answer lookups from a kwctl session
//!   --record-host-capabilities-interactions FILE   write the lookups made as a kwctl session
//!   -s, --settings-path FILE   settings, YAML or JSON
//!   --settings-json JSON       settings as JSON text
//!   --allow-context-aware      accepted for kwctl compatibility (lookups are always allowed)
//!   --save-request FILE        also write the bare AdmissionRequest (to make test_data/ files)
//!   --calls FILE               write the host calls made, `[{"operation", "payload"}]` in order
//!                              (the probe policy's settings in `make bench-e2e`)
//!   --fail API_VERSION/KIND=TEXT   every lookup of that kind fails with TEXT (with `cluster`)
//! ```
//!
//! As `kwctl run`, it exits 0 whether the request is accepted or rejected,
//! and 1 with `Provided settings are not valid: …` when the settings are.

use kube_ovn_policy::k8s::kinds::ALL as KINDS;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use testhost::cluster::{ClusterState, Failure};
use testhost::session::{self, CallbackRequest, Response, Session};
use testhost::{Backend, BoxError, Policy};

#[derive(Default)]
struct Options {
    wasm: Option<PathBuf>,
    request: Option<PathBuf>,
    replay: Option<PathBuf>,
    record: Option<PathBuf>,
    settings_path: Option<PathBuf>,
    settings_json: Option<String>,
    save_request: Option<PathBuf>,
    calls: Option<PathBuf>,
    failures: Vec<(String, String, String)>,
}

fn parse_args() -> Result<Options, BoxError> {
    let mut options = Options::default();
    let mut args = std::env::args().skip(1);
    let mut positional = Vec::new();
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "-r" | "--request-path" => options.request = Some(value()?.into()),
            "--replay-host-capabilities-interactions" => options.replay = Some(value()?.into()),
            "--record-host-capabilities-interactions" => options.record = Some(value()?.into()),
            "-s" | "--settings-path" => options.settings_path = Some(value()?.into()),
            "--settings-json" => options.settings_json = Some(value()?),
            "--save-request" => options.save_request = Some(value()?.into()),
            "--calls" => options.calls = Some(value()?.into()),
            "--fail" => {
                let spec = value()?;
                let (kind, text) = spec.split_once('=').ok_or("--fail API_VERSION/KIND=TEXT")?;
                let (api_version, kind) = kind
                    .rsplit_once('/')
                    .ok_or("--fail API_VERSION/KIND=TEXT")?;
                options.failures.push((
                    api_version.to_string(),
                    kind.to_string(),
                    text.to_string(),
                ));
            }
            "--allow-context-aware" => {}
            other if other.starts_with('-') => return Err(format!("unknown option {other}").into()),
            _ => positional.push(PathBuf::from(arg)),
        }
    }
    let mut positional = positional.into_iter();
    options.wasm = positional.next();
    if options.request.is_none() {
        options.request = positional.next();
    }
    Ok(options)
}

/// The AdmissionRequest, and the case's cluster, settings and forbidden
/// kinds if it is a case file.
fn read_request(path: &Path) -> Result<(Value, Value, Value, Value), BoxError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let file: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    if file["kind"] == "AdmissionReview" {
        return Ok((
            file["request"].clone(),
            Value::Null,
            Value::Null,
            Value::Null,
        ));
    }
    if file.get("request").is_some() {
        let field = |k: &str| file.get(k).cloned().unwrap_or(Value::Null);
        return Ok((
            file["request"].clone(),
            field("cluster"),
            field("settings"),
            field("forbidden"),
        ));
    }
    Ok((file, Value::Null, Value::Null, Value::Null))
}

fn run(options: &Options) -> Result<Result<Value, String>, BoxError> {
    let (Some(wasm), Some(request_path)) = (&options.wasm, &options.request) else {
        return Err("usage: kop-run [options] <policy.wasm> -r <request.json>".into());
    };
    let policy = Policy::load(wasm)?;
    let (request, cluster, case_settings, forbidden) = read_request(request_path)?;
    if let Some(path) = &options.save_request {
        std::fs::write(path, serde_json::to_string_pretty(&request)? + "\n")?;
    }
    let settings: Value = match (&options.settings_json, &options.settings_path) {
        (Some(text), _) => serde_json::from_str(text)?,
        (None, Some(path)) => yaml_serde::from_str(
            &std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?,
        )?,
        (None, None) if case_settings.is_null() => json!({}),
        (None, None) => case_settings,
    };
    let check = policy.validate_settings(&settings)?;
    if !check.valid {
        return Ok(Err(format!(
            "Provided settings are not valid: {}",
            check.message.unwrap_or_default()
        )));
    }
    let backend: Backend = match &options.replay {
        Some(path) => Session::load(path)?.into(),
        None => {
            let mut state = ClusterState::from_json(&cluster)?;
            for kind in forbidden.as_array().into_iter().flatten() {
                let kind = kind.as_str().unwrap_or_default();
                let found = KINDS
                    .iter()
                    .find(|k| k.kind == kind)
                    .ok_or_else(|| format!("unknown forbidden kind {kind:?}"))?;
                state.fail(found.api_version, kind, Failure::Forbidden);
            }
            for (api_version, kind, text) in &options.failures {
                state.fail(api_version, kind, Failure::Error(text.clone()));
            }
            state.into()
        }
    };
    let (verdict, calls) = policy.validate(&request, &settings, backend)?;
    if let Some(path) = &options.record {
        let exchanges = calls
            .iter()
            .map(|call| {
                let request = CallbackRequest::from_host_call(
                    &call.operation,
                    &serde_json::to_vec(&call.payload)?,
                )?;
                let response = match &call.response {
                    Ok(payload) => Response::Success {
                        payload: payload.clone(),
                    },
                    Err(message) => Response::Error {
                        message: message.clone(),
                    },
                };
                Ok((request, response))
            })
            .collect::<Result<Vec<_>, BoxError>>()?;
        session::record(path, &exchanges)?;
    }
    if let Some(path) = &options.calls {
        let made: Vec<Value> = calls
            .iter()
            .map(|call| json!({"operation": call.operation, "payload": call.payload}))
            .collect();
        std::fs::write(path, serde_json::to_vec_pretty(&made)?)?;
    }
    let mut response = json!({"uid": request["uid"], "allowed": verdict.accepted});
    if !verdict.accepted {
        response["status"] = json!({"message": verdict.message, "code": verdict.code});
    }
    if let Some(warnings) = &verdict.warnings {
        response["warnings"] = json!(warnings);
    }
    Ok(Ok(response))
}

fn main() -> ExitCode {
    let outcome = parse_args().and_then(|options| run(&options));
    match outcome {
        Ok(Ok(response)) => {
            println!("{response}");
            ExitCode::SUCCESS
        }
        Ok(Err(settings_error)) => {
            eprintln!("{settings_error}");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("kop-run: {e}");
            ExitCode::from(2)
        }
    }
}
