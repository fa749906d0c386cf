//! Policy evaluation as policy-server does it: one wasmtime engine (with
//! epoch interruption when any limit applies, and a thread that ticks it
//! once a second, lib.rs), one pre-instantiated module per `.wasm`, and a
//! fresh waPC instance for every evaluation (evaluation_environment.rs
//! `rehydrate`) whose epoch deadline is the policy's `timeoutEvalSeconds` or
//! `--policy-timeout`. Host calls go through policy-evaluator's checks
//! (runtimes/callback.rs `host_callback`) to the lookups.

use crate::kube::HostError;
use crate::lookups::{ListFailure, Lookups};
use crate::policies::{ContextAwareResource, HostCapabilities};
use crate::review::{AdmissionResponse, ValidateRequest};
use fakehost::requests::{GetResourceRequest, ListRequest};
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use wapc::WapcHost;
use wasmtime_provider::wasmtime;
use wasmtime_provider::{EpochDeadlines, WasmtimeEngineProviderBuilder, WasmtimeEngineProviderPre};

/// wasmtime-provider's text for a call the epoch deadline interrupted.
const FUNC_INTERRUPTED: &str = "guest code interrupted, execution deadline exceeded";
/// wasmtime-provider's text for an initialisation the deadline interrupted.
const INIT_INTERRUPTED: &str = "init interrupted, execution deadline exceeded";
/// What policy-server answers for either.
pub const TIMEOUT_MESSAGE: &str =
    "Policy execution interrupted because it exceeded the allowed execution time";

/// The wasmtime engine every module is compiled for.
pub struct Engine {
    engine: wasmtime::Engine,
}

impl Engine {
    /// An engine; with `epochs`, epoch interruption on and ticked every second.
    pub fn new(epochs: bool) -> Result<Self, String> {
        let mut config = wasmtime::Config::default();
        config.wasm_function_references(true);
        if epochs {
            config.epoch_interruption(true);
        }
        let engine = wasmtime::Engine::new(&config).map_err(|e| e.to_string())?;
        if epochs {
            let ticking = engine.clone();
            std::thread::Builder::new()
                .name("epoch".into())
                .spawn(move || {
                    loop {
                        std::thread::sleep(Duration::from_secs(1));
                        ticking.increment_epoch();
                    }
                })
                .map_err(|e| e.to_string())?;
        }
        Ok(Engine { engine })
    }

    /// Compiles a module and prepares its instances.
    pub fn load(&self, bytes: &[u8]) -> Result<Arc<WasmtimeEngineProviderPre>, String> {
        let module = wasmtime::Module::new(&self.engine, bytes).map_err(|e| e.to_string())?;
        WasmtimeEngineProviderBuilder::new()
            .engine(self.engine.clone())
            .module(module)
            .build_pre()
            .map(Arc::new)
            .map_err(|e| e.to_string())
    }
}

/// What a policy's host calls may do (policy-evaluator's `EvaluationContext`).
pub struct Grants {
    /// The policy id, for the log.
    pub policy_id: String,
    /// `contextAwareResources`
    pub resources: BTreeSet<ContextAwareResource>,
    /// `hostCapabilities`
    pub capabilities: HostCapabilities,
    /// The lookups, when a kubeconfig was found.
    pub lookups: Option<Arc<Lookups>>,
}

/// One policy, ready to evaluate.
pub struct Loaded {
    pre: Arc<WasmtimeEngineProviderPre>,
    grants: Arc<Grants>,
    /// The epoch deadline in seconds (ticks), if any.
    pub limit: Option<u64>,
    /// The settings given to the policy.
    pub settings: Map<String, Value>,
}

/// An evaluation this long or longer is logged (`slow evaluation`).
pub const SLOW_EVALUATION: Duration = Duration::from_millis(100);

/// A failure to make an instance: policy-server answers HTTP 500
/// "Something went wrong" unless it is the epoch deadline during
/// initialisation.
#[derive(Debug)]
pub struct InstanceError(pub String);

/// The state of one evaluation that host calls share.
struct Evaluation {
    grants: Arc<Grants>,
    deadline: Mutex<Option<Instant>>,
    timed_out: AtomicBool,
}

impl Loaded {
    /// A policy of this module with these grants, limit and settings.
    pub fn new(
        pre: Arc<WasmtimeEngineProviderPre>,
        grants: Grants,
        limit: Option<u64>,
        settings: Map<String, Value>,
    ) -> Self {
        Loaded {
            pre,
            grants: Arc::new(grants),
            limit,
            settings,
        }
    }

    fn instance(&self) -> Result<(WapcHost, Arc<Evaluation>), InstanceError> {
        let evaluation = Arc::new(Evaluation {
            grants: self.grants.clone(),
            deadline: Mutex::new(None),
            timed_out: AtomicBool::new(false),
        });
        let engine = self
            .pre
            .rehydrate(self.limit.map(|d| EpochDeadlines {
                wapc_init: d,
                wapc_func: d,
            }))
            .map_err(|e| InstanceError(format!("cannot rehydrate PolicyEvaluatorPre: {e}")))?;
        let shared = evaluation.clone();
        let callback =
            move |_id: u64, binding: &str, namespace: &str, operation: &str, payload: &[u8]| {
                host_callback(&shared, binding, namespace, operation, payload)
            };
        let host = WapcHost::new(Box::new(engine), Some(Box::new(callback))).map_err(|e| {
            InstanceError(format!(
                "cannot rehydrate PolicyEvaluatorPre: {}",
                error_chain(&e)
            ))
        })?;
        Ok((host, evaluation))
    }

    /// Starts the evaluation's clock, as the epoch deadline starts at the call.
    fn start_clock(&self, evaluation: &Evaluation) {
        if let Ok(mut deadline) = evaluation.deadline.lock() {
            *deadline = self.limit.map(|s| Instant::now() + Duration::from_secs(s));
        }
    }

    /// `validate_settings` in a fresh instance (evaluation_environment.rs
    /// `validate_settings`, runtimes/wapc/runtime.rs): valid, or why not.
    pub fn validate_settings(&self) -> Result<Result<(), String>, InstanceError> {
        let (host, evaluation) = self.instance()?;
        self.start_clock(&evaluation);
        let payload = serde_json::to_vec(&self.settings).unwrap_or_default();
        let verdict = match host.call("validate_settings", &payload) {
            Ok(raw) => match serde_json::from_slice::<Value>(&raw) {
                Ok(v) if v.get("valid").and_then(Value::as_bool).is_some() => v,
                Ok(_) => {
                    json!({"valid": false, "message": "error: InvalidResponseWithError(missing field `valid`)"})
                }
                Err(e) => {
                    json!({"valid": false, "message": format!("error: InvalidResponseWithError({e:?})")})
                }
            },
            Err(e) => json!({
                "valid": false,
                "message": format!("Error invoking settings validation callback: {e:?}"),
            }),
        };
        if verdict["valid"] == true {
            return Ok(Ok(()));
        }
        let message = verdict["message"]
            .as_str()
            .unwrap_or("no message")
            .to_string();
        Ok(Err(message))
    }

    /// `validate` in a fresh instance (runtimes/wapc/runtime.rs `validate`).
    pub fn validate(&self, request: &ValidateRequest) -> Result<AdmissionResponse, InstanceError> {
        let uid = request.uid();
        let (host, evaluation) = match self.instance() {
            Ok(i) => i,
            Err(InstanceError(e)) if e.contains(INIT_INTERRUPTED) => {
                return Ok(AdmissionResponse::reject(
                    uid,
                    TIMEOUT_MESSAGE.to_string(),
                    500,
                ));
            }
            Err(e) => return Err(e),
        };
        let request_value = request.to_value();
        let object = match request {
            ValidateRequest::Raw(_) => Some(&request_value),
            ValidateRequest::Admission(_) => request_value.get("object"),
        };
        let payload = json!({"request": &request_value, "settings": &self.settings});
        self.start_clock(&evaluation);
        let started = Instant::now();
        let answer = host.call("validate", payload.to_string().as_bytes());
        let took = started.elapsed();
        // CONTRACT §4: no request may hold a worker for a second. Every
        // evaluation from SLOW_EVALUATION on is logged, so that a test can
        // read the server's side of it (e2e/harness/adversary.py).
        if took >= SLOW_EVALUATION {
            eprintln!(
                "kop-serve: slow evaluation: request {uid} took {} ms",
                took.as_millis()
            );
        }
        // A host call that gave up at the deadline: the policy's code,
        // resumed, is past its epoch deadline too.
        if evaluation.timed_out.load(Ordering::SeqCst) {
            return Ok(AdmissionResponse::reject(
                uid,
                TIMEOUT_MESSAGE.to_string(),
                500,
            ));
        }
        Ok(match answer {
            Ok(raw) => crate::review::from_policy(uid, object, &raw),
            Err(e) if e.to_string().contains(FUNC_INTERRUPTED) => {
                AdmissionResponse::reject(uid, TIMEOUT_MESSAGE.to_string(), 500)
            }
            Err(e) => AdmissionResponse::internal_server_error(uid, e.to_string()),
        })
    }
}

/// An error and its sources, as one line.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let next = s.to_string();
        if !text.contains(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        source = s.source();
    }
    text
}

type CallResult = Result<Vec<u8>, Box<dyn std::error::Error + Send + Sync>>;

/// policy-evaluator's `host_callback`: the binding, the host capability,
/// the payload, the kind's grant, then the lookup; a failed lookup reaches
/// the guest as `Callback evaluation failure: {error:?}`.
fn host_callback(
    evaluation: &Evaluation,
    binding: &str,
    namespace: &str,
    operation: &str,
    payload: &[u8],
) -> CallResult {
    let grants = &evaluation.grants;
    if binding != "kubewarden" {
        return Err(format!("unknown binding: {binding}").into());
    }
    if namespace != "tracing" {
        let path = format!("{namespace}/{operation}");
        if !grants.capabilities.is_allowed(&path) {
            eprintln!(
                "kop-serve: policy {} tried to use host capability {path} it has not been granted",
                grants.policy_id
            );
            return Err(format!(
                "Policy has not been granted access to the '{path}' host capability. The violation has been reported."
            )
            .into());
        }
    }
    let unknown_operation =
        || -> CallResult { Err(format!("unknown operation: {operation}").into()) };
    match namespace {
        "tracing" => match operation {
            "log" => Ok(Vec::new()),
            _ => unknown_operation(),
        },
        "kubernetes" => match operation {
            "list_resources_by_namespace" | "list_resources_all" => {
                let by_namespace = operation == "list_resources_by_namespace";
                let req = ListRequest::decode(by_namespace, payload)?;
                granted(grants, &req.api_version, &req.kind)?;
                let answer = lookups(grants)?.list(&req, deadline(evaluation));
                list_answer(evaluation, answer)
            }
            "get_resource" => {
                let req: GetResourceRequest = serde_json::from_slice(payload)?;
                granted(grants, &req.api_version, &req.kind)?;
                let lookups = lookups(grants)?;
                match lookups.get(&req) {
                    Ok(object) => Ok(serde_json::to_vec(&object)?),
                    Err(e) => Err(callback_failure(&e).into()),
                }
            }
            "can_i" => Err(callback_failure(&HostError::plain(
                "kop-serve does not implement kubernetes/can_i",
            ))
            .into()),
            _ => unknown_operation(),
        },
        "oci" | "net" | "crypto" => match format!("{namespace}/{operation}").as_str() {
            "oci/v1/verify"
            | "oci/v2/verify"
            | "oci/v1/manifest_digest"
            | "oci/v1/oci_manifest"
            | "oci/v1/oci_manifest_config"
            | "net/v1/dns_lookup_host"
            | "crypto/v1/is_certificate_trusted" => Err(callback_failure(&HostError::plain(
                format!("kop-serve does not implement {namespace}/{operation}"),
            ))
            .into()),
            _ => unknown_operation(),
        },
        _ => Err(format!("unknown namespace: {namespace}").into()),
    }
}

fn deadline(evaluation: &Evaluation) -> Option<Instant> {
    evaluation.deadline.lock().ok().and_then(|d| *d)
}

fn callback_failure(e: &HostError) -> String {
    format!("Callback evaluation failure: {}", e.render())
}

/// `can_access_kubernetes_resource`
fn granted(grants: &Grants, api_version: &str, kind: &str) -> Result<(), String> {
    let wanted = ContextAwareResource {
        api_version: api_version.to_string(),
        kind: kind.to_string(),
    };
    if grants.resources.contains(&wanted) {
        return Ok(());
    }
    eprintln!(
        "kop-serve: policy {} tried to access Kubernetes {api_version}/{kind}, not in its contextAwareResources",
        grants.policy_id
    );
    Err(format!(
        "Policy has not been granted access to Kubernetes {api_version}/{kind} resources. The violation has been reported."
    ))
}

fn lookups(grants: &Grants) -> Result<&Lookups, String> {
    grants.lookups.as_deref().ok_or_else(|| {
        callback_failure(&HostError::plain(
            "kube::Client was not initialized properly",
        ))
    })
}

fn list_answer(evaluation: &Evaluation, answer: Result<Vec<u8>, ListFailure>) -> CallResult {
    match answer {
        Ok(list) => Ok(list),
        Err(ListFailure::Failed(e)) => Err(callback_failure(&e).into()),
        Err(ListFailure::TimedOut) => {
            evaluation.timed_out.store(true, Ordering::SeqCst);
            Err("kop-serve: the watch cache did not fill before the evaluation's deadline".into())
        }
    }
}
