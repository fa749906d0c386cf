//! `kop-serve`: a stand-in for Kubewarden's policy-server, for the subset
//! `e2e/suites/test_policy_server.py` uses. It reads the same command line and
//! `policies.yml`, validates every policy's settings at start-up (and
//! refuses to start on invalid ones), serves `POST /validate/<id>`,
//! `/audit/<id>` and `/validate_raw/<id>` over HTTPS, `GET /readiness` on
//! its own port, and answers the policies' Kubernetes host calls from the API
//! server of `KUBECONFIG`, the way policy-server 1.36 (Kubewarden's monorepo
//! at 3460bb71) does; the source file each behaviour follows is named where
//! it is implemented.

pub mod cli;
pub mod engine;
pub mod http;
pub mod kube;
pub mod lookups;
pub mod policies;
pub mod review;
pub mod watch;

use engine::{Engine, Grants, Loaded};
use http::{Request, Response};
use policies::{HostCapabilities, PolicyMode, PolicyOrPolicyGroup};
use review::{AdmissionReviewRequest, Handling, RawReviewRequest, ValidateRequest};
use std::collections::HashMap;
use std::net::{SocketAddr, TcpListener};
use std::process::ExitCode;
use std::sync::{Arc, Condvar, Mutex};

/// `main` of the `kop-serve` binary.
pub fn main() -> ExitCode {
    let options = match cli::parse(std::env::args().skip(1)) {
        Ok(cli::Command::Run(o)) => o,
        Ok(cli::Command::Print(text)) => {
            print!("{text}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    match run(&options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // As a Rust `main` returning `anyhow::Result` prints it.
            eprintln!("Error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// One policy of `policies.yml`, loaded.
struct Policy {
    loaded: Loaded,
    handling: Handling,
}

/// The server's state: the policies, and the workers' permits.
struct Server {
    policies: HashMap<String, Policy>,
    permits: Permits,
    always_accept_namespace: Option<String>,
}

/// policy-server's semaphore of `--workers` evaluations.
struct Permits {
    free: Mutex<usize>,
    released: Condvar,
}

impl Permits {
    fn acquire(&self) -> Permit<'_> {
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        while *free == 0 {
            free = self.released.wait(free).unwrap_or_else(|e| e.into_inner());
        }
        *free -= 1;
        Permit(self)
    }
}

struct Permit<'a>(&'a Permits);

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        let mut free = self.0.free.lock().unwrap_or_else(|e| e.into_inner());
        *free += 1;
        self.0.released.notify_one();
    }
}

fn run(options: &cli::Options) -> Result<(), String> {
    let addr: SocketAddr = format!("{}:{}", options.addr, options.port)
        .parse()
        .map_err(|e| format!("error parsing arguments: {e}"))?;
    let readiness_addr: SocketAddr = format!("{}:{}", options.addr, options.readiness_probe_port)
        .parse()
        .map_err(|e| format!("error parsing arguments: {e}"))?;
    let entries = policies::load(&options.policies)?;

    // main.rs: the crypto provider before any client (policy-server's is
    // aws-lc-rs, kop-serve's ring).
    let _ = rustls::crypto::ring::default_provider().install_default();
    // lib.rs `PolicyServer::new_from_config`: the kubeconfig first.
    let runtime = kube::runtime()?;
    let lookups = match kube::connect(&runtime) {
        Ok((client, url)) => {
            eprintln!("kop-serve: Kubernetes API server {url}");
            Some(Arc::new(lookups::Lookups::new(runtime.clone(), client)))
        }
        Err(e) => {
            eprintln!("Cannot connect to Kubernetes cluster: {e}");
            if !options.ignore_kubernetes_connection_failure {
                return Err(
                    "Cannot connect to Kubernetes, context aware policies would not work properly"
                        .to_string(),
                );
            }
            eprintln!(
                "Cannot connect to Kubernetes, context aware policies will not work properly"
            );
            None
        }
    };

    let any_limit = entries.values().any(|p| {
        matches!(
            p,
            PolicyOrPolicyGroup::Policy {
                timeout_eval_seconds: Some(_),
                ..
            }
        )
    });
    let engine = Engine::new(options.policy_timeout.is_some() || any_limit)?;
    let mut modules = HashMap::new();
    let mut ids: Vec<&String> = entries.keys().collect();
    ids.sort();
    let mut loaded = HashMap::new();
    for id in ids {
        let PolicyOrPolicyGroup::Policy {
            module,
            policy_mode,
            allowed_to_mutate,
            settings,
            context_aware_resources,
            message,
            timeout_eval_seconds,
            host_capabilities,
        } = &entries[id]
        else {
            return Err(format!("{id}: kop-serve does not serve policy groups"));
        };
        let path = module.strip_prefix("file://").ok_or_else(|| {
            format!("{id}: kop-serve loads modules from file:// URLs only, not {module}")
        })?;
        let pre = match modules.get(path) {
            Some(pre) => Arc::clone(pre),
            None => {
                let bytes =
                    std::fs::read(path).map_err(|e| format!("{id}: cannot read {path}: {e}"))?;
                let pre = engine.load(&bytes).map_err(|e| format!("{id}: {e}"))?;
                modules.insert(path.to_string(), Arc::clone(&pre));
                pre
            }
        };
        let capabilities = HostCapabilities::new(host_capabilities).map_err(|e| {
            format!("bootstrap failure: invalid hostCapabilities pattern for policy {id}: {e}")
        })?;
        let policy = Loaded::new(
            pre,
            Grants {
                policy_id: id.clone(),
                resources: context_aware_resources.clone(),
                capabilities,
                lookups: lookups.clone(),
            },
            timeout_eval_seconds.or(options.policy_timeout),
            settings.clone().unwrap_or_default(),
        );
        // evaluation_environment.rs `bootstrap_policy`: settings validated
        // once, at start-up.
        match policy.validate_settings() {
            Ok(Ok(())) => {}
            Ok(Err(message)) => return Err(format!("Policy settings are invalid: {message}")),
            Err(engine::InstanceError(e)) => return Err(format!("WebAssembly failure: {e}")),
        }
        eprintln!("kop-serve: policy {id} loaded from {path}");
        loaded.insert(
            id.clone(),
            Policy {
                loaded: policy,
                handling: Handling {
                    policy_id: id.clone(),
                    monitor: *policy_mode == PolicyMode::Monitor,
                    allowed_to_mutate: allowed_to_mutate.unwrap_or(false),
                    custom_message: message.clone(),
                },
            },
        );
    }

    let tls = match &options.tls {
        Some((cert, key)) => Some(http::tls_config(cert, key)?),
        None => None,
    };
    let server = Arc::new(Server {
        policies: loaded,
        permits: Permits {
            free: Mutex::new(options.workers),
            released: Condvar::new(),
        },
        always_accept_namespace: options.always_accept_namespace.clone(),
    });
    let listener = TcpListener::bind(addr).map_err(|e| format!("cannot bind {addr}: {e}"))?;
    // lib.rs `run`: the readiness probe answers once the API is bound.
    let readiness = TcpListener::bind(readiness_addr)
        .map_err(|e| format!("cannot bind {readiness_addr}: {e}"))?;
    eprintln!(
        "kop-serve: serving {} on {addr}, readiness on {readiness_addr}, {} workers",
        if tls.is_some() { "HTTPS" } else { "HTTP" },
        options.workers
    );
    std::thread::Builder::new()
        .name("readiness".into())
        .spawn(move || {
            http::serve(
                readiness,
                None,
                0,
                Arc::new(
                    |req: &Request| match (req.method.as_str(), req.path.as_str()) {
                        ("GET", "/readiness") => Response::empty(200),
                        (_, "/readiness") => Response::empty(405),
                        _ => Response::empty(404),
                    },
                ),
            )
        })
        .map_err(|e| e.to_string())?;
    let handler = Arc::new(move |req: &Request| server.handle(req));
    http::serve(listener, tls, review::BODY_LIMIT, handler);
    Ok(())
}

/// How a request reached the server (service.rs `RequestOrigin`, and the
/// raw endpoint).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Endpoint {
    Validate,
    Audit,
    Raw,
}

impl Server {
    /// The routes of lib.rs: `POST /audit/{id}`, `/validate/{id}`,
    /// `/validate_raw/{id}`; anything else 404, another method 405.
    fn handle(&self, req: &Request) -> Response {
        let route = [
            ("/validate/", Endpoint::Validate),
            ("/audit/", Endpoint::Audit),
            ("/validate_raw/", Endpoint::Raw),
        ]
        .into_iter()
        .find_map(|(prefix, endpoint)| {
            let id = req.path.strip_prefix(prefix)?;
            (!id.is_empty() && !id.contains('/')).then_some((id, endpoint))
        });
        let Some((raw_id, endpoint)) = route else {
            return Response::empty(404);
        };
        if req.method != "POST" {
            let mut r = Response::empty(405);
            r.headers.push(("allow", "POST".to_string()));
            return r;
        }
        let id = percent_decode(raw_id);
        let content_type = req.header("content-type");
        let request = match endpoint {
            Endpoint::Raw => {
                review::extract_json::<RawReviewRequest>(content_type, req.body.as_deref())
                    .map(|r| ValidateRequest::Raw(r.request))
            }
            _ => review::extract_json::<AdmissionReviewRequest>(content_type, req.body.as_deref())
                .map(|r| ValidateRequest::Admission(Box::new(r.request))),
        };
        let request = match request {
            Ok(r) => r,
            // The validate handler's `JsonExtractor` answers an `ApiError`
            // as JSON; the others keep axum's plain-text rejection.
            Err(rejection) if endpoint == Endpoint::Validate => {
                return api_error(rejection.status, &rejection.text);
            }
            Err(rejection) => return Response::text(rejection.status, rejection.text),
        };
        let _permit = self.permits.acquire();
        match self.evaluate(&id, &request, endpoint) {
            Ok(response) => Response::json(
                200,
                match endpoint {
                    Endpoint::Raw => review::raw_review(&response),
                    _ => review::admission_review(&response),
                },
            ),
            Err(EvaluationError::NotFound) => api_error(404, &format!("unknown policy: {id}")),
            Err(EvaluationError::Failed(e)) => {
                eprintln!("kop-serve: Evaluation error: {e}");
                api_error(500, "Something went wrong")
            }
        }
    }

    /// service.rs `evaluate`.
    fn evaluate(
        &self,
        id: &str,
        request: &ValidateRequest,
        endpoint: Endpoint,
    ) -> Result<review::AdmissionResponse, EvaluationError> {
        if let (Some(always), Some(namespace)) =
            (&self.always_accept_namespace, request.namespace())
            && always == namespace
        {
            if !self.policies.contains_key(id) {
                return Err(EvaluationError::NotFound);
            }
            return Ok(review::AdmissionResponse {
                uid: request.uid(),
                allowed: true,
                ..Default::default()
            });
        }
        let policy = self.policies.get(id).ok_or(EvaluationError::NotFound)?;
        let response = policy
            .loaded
            .validate(request)
            .map_err(|engine::InstanceError(e)| {
                EvaluationError::Failed(format!("WebAssembly failure: {e}"))
            })?;
        Ok(match endpoint {
            Endpoint::Audit => response,
            Endpoint::Validate | Endpoint::Raw => policy.handling.process(response),
        })
    }
}

enum EvaluationError {
    NotFound,
    Failed(String),
}

/// api_error.rs `ApiError`: `{"message": …, "status": …}` with that status.
fn api_error(status: u16, message: &str) -> Response {
    Response::json(
        status,
        serde_json::to_vec(&serde_json::json!({"message": message, "status": status}))
            .unwrap_or_default(),
    )
}

/// A path segment percent-decoded, as axum hands it to the handler.
fn percent_decode(segment: &str) -> String {
    let bytes = segment.as_bytes();
    let hex = |b: u8| (b as char).to_digit(16);
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let (Some(&h), Some(&l)) = (bytes.get(i + 1), bytes.get(i + 2))
            && let (Some(h), Some(l)) = (hex(h), hex(l))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_path_segments() {
        assert_eq!(percent_decode("clusterwide-a%2Fb"), "clusterwide-a/b");
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz"), "%zz");
    }
}
