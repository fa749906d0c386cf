//! A waPC host for kube-ovn-policy's compiled `policy.wasm`.
//!
//! It loads the module with wasmtime (as Kubewarden's policy-server does),
//! calls `validate` / `validate_settings`, and answers the policy's
//! `kubewarden/kubernetes/*` host calls from a set of cluster objects: label
//! and field selectors, field masks, get-by-name, "not found", and the
//! `{Kind}List` envelope, the way the policy-server answers them.

pub mod bench;
pub mod case;
pub mod e2e;
pub mod session;

/// The cluster objects a test serves and their answers (the `fakehost` crate).
pub use fakehost::cluster;

use cluster::ClusterState;
use serde::Deserialize;
use session::Session;
use std::error::Error;
use std::sync::{Arc, Mutex};
use wapc::WapcHost;
use wasmtime_provider::{WasmtimeEngineProviderBuilder, WasmtimeEngineProviderPre};

/// A boxed error, as the host's API returns them.
pub type BoxError = Box<dyn Error + Send + Sync>;

/// One host call the guest made: operation and request payload.
#[derive(Clone, Debug)]
pub struct HostCall {
    /// `list_resources_all`, `list_resources_by_namespace`, `get_resource`, …
    pub operation: String,
    /// The request JSON the guest sent.
    pub payload: serde_json::Value,
    /// The number of bytes answered (0 for an error).
    pub response_bytes: usize,
    /// The answer: the text the guest received, or the host error.
    pub response: Result<String, String>,
}

/// Where a host call's answer comes from.
pub enum Backend {
    /// Computed from cluster objects, as the policy-server would.
    Cluster(ClusterState),
    /// Replayed from a kwctl session, in order.
    Session(Session),
    /// Computed once per distinct request and shared by many instances.
    Shared(Arc<bench::CachedCluster>),
}

impl Backend {
    fn answer(&self, operation: &str, payload: &[u8]) -> Result<Vec<u8>, BoxError> {
        match self {
            Backend::Cluster(cluster) => cluster.answer(operation, payload),
            Backend::Session(session) => session.answer(operation, payload),
            Backend::Shared(cached) => cached.answer(operation, payload).map_err(Into::into),
        }
    }
}

impl From<ClusterState> for Backend {
    fn from(cluster: ClusterState) -> Self {
        Backend::Cluster(cluster)
    }
}

impl From<Session> for Backend {
    fn from(session: Session) -> Self {
        Backend::Session(session)
    }
}

/// The policy's answer, as `validate` returned it.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub struct Verdict {
    /// Whether the request is admitted.
    pub accepted: bool,
    /// The rejection code, when given.
    #[serde(default)]
    pub code: Option<u16>,
    /// The rejection message, when given.
    #[serde(default)]
    pub message: Option<String>,
    /// The admission warnings, when given.
    #[serde(default)]
    pub warnings: Option<Vec<String>>,
}

/// `validate_settings`'s answer.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub struct SettingsVerdict {
    /// Whether the settings are accepted.
    pub valid: bool,
    /// Why not.
    #[serde(default)]
    pub message: Option<String>,
}

/// The compiled policy, ready to be instantiated.
pub struct Policy {
    pre: WasmtimeEngineProviderPre,
    /// The module's size in bytes.
    pub wasm_bytes: usize,
}

/// What the host callback shares with the test: the backend and a call log.
struct HostState {
    backend: Backend,
    calls: Vec<HostCall>,
    log_calls: bool,
}

/// A running instance with its own cluster view; reusable across calls.
pub struct Instance {
    host: WapcHost,
    state: Arc<Mutex<HostState>>,
}

impl Policy {
    /// Loads and compiles a `.wasm` file.
    pub fn load(path: &std::path::Path) -> Result<Self, BoxError> {
        let bytes =
            std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Self::from_bytes(&bytes)
    }

    /// Compiles a module held in memory.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, BoxError> {
        let pre = WasmtimeEngineProviderBuilder::new()
            .module_bytes(bytes)
            .build_pre()?;
        Ok(Policy {
            pre,
            wasm_bytes: bytes.len(),
        })
    }

    /// A fresh instance (what the policy-server does for every evaluation)
    /// whose host calls are answered by `backend`.
    pub fn instance(&self, backend: impl Into<Backend>) -> Result<Instance, BoxError> {
        let state = Arc::new(Mutex::new(HostState {
            backend: backend.into(),
            calls: Vec::new(),
            log_calls: true,
        }));
        let shared = state.clone();
        let callback =
            move |_id: u64, binding: &str, namespace: &str, operation: &str, payload: &[u8]| {
                let mut state = shared.lock().map_err(|_| "host state poisoned")?;
                let answer =
                    answer_host_call(&state.backend, binding, namespace, operation, payload);
                if state.log_calls && binding == "kubewarden" && namespace == "kubernetes" {
                    state.calls.push(HostCall {
                        operation: operation.to_string(),
                        payload: serde_json::from_slice(payload).unwrap_or(serde_json::Value::Null),
                        response_bytes: answer.as_ref().map_or(0, Vec::len),
                        response: match &answer {
                            Ok(bytes) => Ok(String::from_utf8_lossy(bytes).into_owned()),
                            Err(e) => Err(e.to_string()),
                        },
                    });
                }
                answer
            };
        let engine = self.pre.rehydrate(None)?;
        let host = WapcHost::new(Box::new(engine), Some(Box::new(callback)))?;
        Ok(Instance { host, state })
    }

    /// Evaluates one admission request in a fresh instance.
    pub fn validate(
        &self,
        request: &serde_json::Value,
        settings: &serde_json::Value,
        backend: impl Into<Backend>,
    ) -> Result<(Verdict, Vec<HostCall>), BoxError> {
        let instance = self.instance(backend)?;
        let verdict = instance.validate(request, settings)?;
        Ok((verdict, instance.take_calls()))
    }

    /// Runs `validate_settings` in a fresh instance.
    pub fn validate_settings(
        &self,
        settings: &serde_json::Value,
    ) -> Result<SettingsVerdict, BoxError> {
        let instance = self.instance(ClusterState::default())?;
        let raw = instance
            .host
            .call("validate_settings", &serde_json::to_vec(settings)?)?;
        Ok(serde_json::from_slice(&raw)?)
    }
}

impl Instance {
    /// Calls `validate` with `{"settings": …, "request": …}`.
    pub fn validate(
        &self,
        request: &serde_json::Value,
        settings: &serde_json::Value,
    ) -> Result<Verdict, BoxError> {
        let payload =
            serde_json::to_vec(&serde_json::json!({ "settings": settings, "request": request }))?;
        self.validate_raw(&payload)
    }

    /// Calls `validate` with a payload as given, valid JSON or not.
    pub fn validate_raw(&self, payload: &[u8]) -> Result<Verdict, BoxError> {
        let raw = self.host.call("validate", payload)?;
        Ok(serde_json::from_slice(&raw)?)
    }

    /// Exchanges of a replayed session that were never asked for (0 for a cluster).
    pub fn unused_exchanges(&self) -> usize {
        self.state.lock().map_or(0, |s| match &s.backend {
            Backend::Session(session) => session.remaining(),
            Backend::Cluster(_) | Backend::Shared(_) => 0,
        })
    }

    /// Whether host calls are logged (on by default; a benchmark turns the
    /// copying off).
    pub fn set_call_log(&self, on: bool) {
        if let Ok(mut state) = self.state.lock() {
            state.log_calls = on;
        }
    }

    /// The host calls made so far, emptying the log.
    pub fn take_calls(&self) -> Vec<HostCall> {
        self.state
            .lock()
            .map(|mut s| std::mem::take(&mut s.calls))
            .unwrap_or_default()
    }
}

fn answer_host_call(
    backend: &Backend,
    binding: &str,
    namespace: &str,
    operation: &str,
    payload: &[u8],
) -> Result<Vec<u8>, BoxError> {
    match (binding, namespace) {
        // The policy-server hands a failed callback to the guest as
        // `Callback evaluation failure: {error:?}` (runtimes/callback.rs).
        ("kubewarden", "kubernetes") => backend
            .answer(operation, payload)
            .map_err(|e| format!("Callback evaluation failure: {e}").into()),
        // Logging goes to the host's log; tests have nothing to do with it.
        ("kubewarden", "tracing") => Ok(Vec::new()),
        _ => Err(format!("unknown host capability {binding}/{namespace}/{operation}").into()),
    }
}
