//! The Kubernetes API server kop-serve asks: found the way kube-rs'
//! `Config::infer` finds it (`KUBECONFIG` or `~/.kube/config`, else the
//! in-cluster ServiceAccount), reached over HTTP/1.1 with rustls (ureq), and
//! its failures turned into the errors kube-rs gives policy-evaluator.

use fakehost::answers;
use serde::Deserialize;
use serde_json::{Value, json};
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// An error as policy-evaluator hands it to the guest: `anyhow`'s debug
/// form, `message`, then `Caused by:` when the error has a source, then a
/// backtrace when `RUST_BACKTRACE` (or `RUST_LIB_BACKTRACE`) asks for one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostError {
    /// The error's display form (the first line the guest sees).
    pub message: String,
    /// Its source's display form, if it has one.
    pub cause: Option<String>,
}

impl HostError {
    /// An error without a source (`anyhow!(…)`).
    pub fn plain(message: impl Into<String>) -> Self {
        HostError {
            message: message.into(),
            cause: None,
        }
    }

    /// kube-rs' `Error::Api` for the API server's `Status`: its display form,
    /// and the `Status` (`{message}: {reason}`) as its source.
    pub fn api(status: &Value) -> Self {
        let text = |k: &str| {
            status
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        HostError {
            message: answers::api_error(status),
            cause: Some(format!("{}: {}", text("message"), text("reason"))),
        }
    }

    /// What `format!("{e:?}")` of the `anyhow::Error` gives. kop-serve does
    /// not capture a backtrace; with `RUST_BACKTRACE` set it writes where one
    /// would be, so that the guest sees as many lines as from policy-server.
    pub fn render(&self) -> String {
        let mut text = self.message.clone();
        if let Some(cause) = &self.cause {
            text.push_str("\n\nCaused by:\n    ");
            text.push_str(cause);
        }
        if backtrace_wanted() {
            text.push_str("\n\nStack backtrace:\n   0: <kop-serve does not capture backtraces>");
        }
        text
    }
}

/// std's rule for `Backtrace::capture`.
fn backtrace_wanted() -> bool {
    let set = |name: &str| std::env::var(name).ok().map(|v| v != "0");
    set("RUST_LIB_BACKTRACE")
        .or_else(|| set("RUST_BACKTRACE"))
        .unwrap_or(false)
}

/// A failed request to the API server.
#[derive(Clone, Debug)]
pub enum ApiFailure {
    /// The API server answered with an error `Status` (or kube-rs'
    /// reconstruction of one from a body that is not a `Status`).
    Status(Value),
    /// No answer: connection, TLS, timeout.
    Transport(String),
    /// An answer that is not the JSON expected.
    Decode(String),
}

impl ApiFailure {
    /// The HTTP code of a `Status` failure.
    pub fn code(&self) -> Option<u64> {
        match self {
            ApiFailure::Status(s) => s.get("code").and_then(Value::as_u64),
            _ => None,
        }
    }

    /// kube-rs' `Status::is_not_found`: reason `NotFound` or code 404.
    pub fn is_not_found(&self) -> bool {
        match self {
            ApiFailure::Status(s) => {
                s.get("reason").and_then(Value::as_str) == Some("NotFound")
                    || self.code() == Some(404)
            }
            _ => false,
        }
    }

    /// The `anyhow::Error` that `anyhow::Error::new(kube_error)` makes.
    pub fn to_host_error(&self) -> HostError {
        match self {
            ApiFailure::Status(s) => HostError::api(s),
            ApiFailure::Transport(e) => HostError {
                message: format!("ServiceError: {e}"),
                cause: Some(e.clone()),
            },
            ApiFailure::Decode(e) => HostError {
                message: format!("Error deserializing response: {e}"),
                cause: Some(e.clone()),
            },
        }
    }

    /// kube-rs' `Error` display form (what `anyhow!("…: {e}")` embeds).
    pub fn display(&self) -> String {
        self.to_host_error().message
    }
}

/// How requests authenticate.
#[derive(Clone, Debug)]
enum Auth {
    None,
    Token(String),
    TokenFile(PathBuf),
    Basic(String),
}

/// The API server and the credentials to reach it.
pub struct ApiClient {
    base: String,
    agent: ureq::Agent,
    auth: Auth,
}

impl std::fmt::Debug for ApiClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiClient")
            .field("base", &self.base)
            .finish()
    }
}

#[derive(Debug, Default, Deserialize)]
struct Kubeconfig {
    #[serde(default)]
    clusters: Vec<NamedCluster>,
    #[serde(default)]
    users: Vec<NamedUser>,
    #[serde(default)]
    contexts: Vec<NamedContext>,
    #[serde(rename = "current-context")]
    current_context: Option<String>,
}

#[derive(Clone, Debug, Deserialize)]
struct NamedCluster {
    name: String,
    cluster: ClusterEntry,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
struct ClusterEntry {
    server: Option<String>,
    certificate_authority: Option<String>,
    certificate_authority_data: Option<String>,
    #[serde(default)]
    insecure_skip_tls_verify: bool,
}

#[derive(Clone, Debug, Deserialize)]
struct NamedUser {
    name: String,
    #[serde(default)]
    user: UserEntry,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
struct UserEntry {
    token: Option<String>,
    #[serde(rename = "tokenFile")]
    token_file: Option<String>,
    client_certificate: Option<String>,
    client_certificate_data: Option<String>,
    client_key: Option<String>,
    client_key_data: Option<String>,
    username: Option<String>,
    password: Option<String>,
    exec: Option<Value>,
    auth_provider: Option<Value>,
}

#[derive(Clone, Debug, Deserialize)]
struct NamedContext {
    name: String,
    context: ContextEntry,
}

#[derive(Clone, Debug, Deserialize)]
struct ContextEntry {
    cluster: String,
    user: Option<String>,
}

/// Where the connection settings come from, resolved.
struct Settings {
    server: String,
    ca_pem: Option<Vec<u8>>,
    insecure: bool,
    client: Option<(Vec<u8>, Vec<u8>)>,
    auth: Auth,
}

const SA_DIR: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

impl ApiClient {
    /// `kube::Client::try_default()`: the kubeconfig of `KUBECONFIG` (its
    /// files merged, first wins) or `~/.kube/config`, else the in-cluster
    /// ServiceAccount. Nothing is asked of the API server yet.
    pub fn from_environment() -> Result<Self, String> {
        let settings = match from_kubeconfig() {
            Ok(s) => s,
            Err(kubeconfig) => from_in_cluster().map_err(|in_cluster| {
                format!(
                    "Failed to infer configuration: failed to infer config: in-cluster: ({in_cluster}), kubeconfig: ({kubeconfig})"
                )
            })?,
        };
        Self::new(settings)
    }

    /// A client for `server` (no certificate authority but the default
    /// roots, no client certificate), with a bearer token if given.
    pub fn with_token(server: &str, token: Option<&str>) -> Result<Self, String> {
        Self::new(Settings {
            server: server.to_string(),
            ca_pem: None,
            insecure: false,
            client: None,
            auth: token.map_or(Auth::None, |t| Auth::Token(t.to_string())),
        })
    }

    fn new(settings: Settings) -> Result<Self, String> {
        use ureq::tls::{ClientCert, PrivateKey, RootCerts, TlsConfig, TlsProvider};
        let mut tls = TlsConfig::builder()
            .provider(TlsProvider::Rustls)
            .disable_verification(settings.insecure);
        if let Some(pem) = &settings.ca_pem {
            let certs = certificates(pem, "the certificate authority")?;
            if certs.is_empty() {
                return Err("the certificate authority holds no certificate".to_string());
            }
            tls = tls.root_certs(RootCerts::new_with_certs(&certs));
        }
        if let Some((cert, key)) = &settings.client {
            let chain = certificates(cert, "the client certificate")?;
            let key = PrivateKey::from_pem(key)
                .map_err(|e| format!("cannot read the client key: {e}"))?;
            tls = tls.client_cert(Some(ClientCert::new_with_certs(&chain, key)));
        }
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .proxy(None)
            .user_agent("kop-serve")
            .timeout_connect(Some(Duration::from_secs(30)))
            .timeout_per_read(Some(Duration::from_secs(295)))
            .timeout_per_write(Some(Duration::from_secs(295)))
            .max_idle_connections_per_host(64)
            // Every watch holds a connection: small buffers (the API server's
            // headers are far below 16 KiB; bodies stream through them).
            .max_response_header_size(16 * 1024)
            .input_buffer_size(16 * 1024)
            .output_buffer_size(16 * 1024)
            .tls_config(tls.build())
            .build();
        Ok(ApiClient {
            base: settings.server.trim_end_matches('/').to_string(),
            agent: config.into(),
            auth: settings.auth,
        })
    }

    /// The API server's URL.
    pub fn server(&self) -> &str {
        &self.base
    }

    /// A GET, its body read as it arrives; an error status is a failure.
    pub fn open(
        &self,
        path_and_query: &str,
    ) -> Result<BufReader<ureq::BodyReader<'static>>, ApiFailure> {
        let url = format!("{}{}", self.base, path_and_query);
        let mut request = self.agent.get(&url).header("Accept", "application/json");
        match &self.auth {
            Auth::None => {}
            Auth::Token(t) => request = request.header("Authorization", format!("Bearer {t}")),
            Auth::TokenFile(path) => {
                // Re-read every time: projected ServiceAccount tokens rotate.
                let token = std::fs::read_to_string(path).map_err(|e| {
                    ApiFailure::Transport(format!("cannot read token file {}: {e}", path.display()))
                })?;
                request = request.header("Authorization", format!("Bearer {}", token.trim()));
            }
            Auth::Basic(b) => request = request.header("Authorization", format!("Basic {b}")),
        }
        let response = request
            .call()
            .map_err(|e| ApiFailure::Transport(e.to_string()))?;
        let code = response.status().as_u16();
        let mut body = BufReader::new(response.into_body().into_reader());
        if code < 400 {
            return Ok(body);
        }
        // kube-rs' `handle_api_errors`: the body as a `Status`, or one made
        // from the text.
        let mut text = String::new();
        let _ = body.read_to_string(&mut text);
        match serde_json::from_str::<Value>(&text) {
            Ok(status @ Value::Object(_)) => Err(ApiFailure::Status(status)),
            _ => Err(ApiFailure::Status(json!({
                "status": "Failure",
                "message": text,
                "reason": "Failed to parse error data",
                "code": code,
            }))),
        }
    }

    /// A GET answered with JSON.
    pub fn get_json(&self, path_and_query: &str) -> Result<Value, ApiFailure> {
        let body = self.open(path_and_query)?;
        serde_json::from_reader(body).map_err(|e| ApiFailure::Decode(e.to_string()))
    }
}

fn home_kubeconfig() -> Option<PathBuf> {
    std::env::var_os("HOME").map(|h| Path::new(&h).join(".kube").join("config"))
}

/// A path in a kubeconfig, relative to the file's folder.
fn resolve(base: &Path, path: &str) -> PathBuf {
    let p = Path::new(path);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    }
}

fn read(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

fn decode64(text: &str, what: &str) -> Result<Vec<u8>, String> {
    use base64::Engine as _;
    let compact: String = text.split_whitespace().collect();
    base64::engine::general_purpose::STANDARD
        .decode(compact)
        .map_err(|e| format!("{what} is not base64: {e}"))
}

/// The certificates of a PEM text, anything else in it skipped; `what` names
/// the text in the error.
fn certificates(pem: &[u8], what: &str) -> Result<Vec<ureq::tls::Certificate<'static>>, String> {
    ureq::tls::parse_pem(pem)
        .filter_map(|item| match item {
            Ok(ureq::tls::PemItem::Certificate(c)) => Some(Ok(c)),
            Ok(_) => None,
            Err(e) => Some(Err(e)),
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("cannot read {what}: {e}"))
}

fn from_kubeconfig() -> Result<Settings, String> {
    let files: Vec<PathBuf> = match std::env::var_os("KUBECONFIG") {
        Some(list) if !list.is_empty() => std::env::split_paths(&list).collect(),
        _ => home_kubeconfig().into_iter().collect(),
    };
    // Every file's entries, with the folder its relative paths start from.
    let mut merged = Kubeconfig::default();
    let mut folders: Vec<(String, PathBuf)> = Vec::new();
    let mut found = false;
    for file in &files {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        found = true;
        let config: Kubeconfig = yaml_serde::from_str(&text)
            .map_err(|e| format!("failed to parse kubeconfig {}: {e}", file.display()))?;
        let folder = file.parent().map(Path::to_path_buf).unwrap_or_default();
        if merged.current_context.is_none() {
            merged.current_context = config.current_context.filter(|c| !c.is_empty());
        }
        for c in config.clusters {
            if !merged.clusters.iter().any(|m| m.name == c.name) {
                folders.push((format!("cluster/{}", c.name), folder.clone()));
                merged.clusters.push(c);
            }
        }
        for u in config.users {
            if !merged.users.iter().any(|m| m.name == u.name) {
                folders.push((format!("user/{}", u.name), folder.clone()));
                merged.users.push(u);
            }
        }
        for c in config.contexts {
            if !merged.contexts.iter().any(|m| m.name == c.name) {
                merged.contexts.push(c);
            }
        }
    }
    if !found {
        return Err(format!("no kubeconfig found in {files:?}"));
    }
    let folder_of = |key: String| {
        folders
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, f)| f.clone())
            .unwrap_or_default()
    };
    let current = merged
        .current_context
        .clone()
        .ok_or("failed to determine current context")?;
    let context = merged
        .contexts
        .iter()
        .find(|c| c.name == current)
        .ok_or_else(|| format!("failed to load current context: {current}"))?
        .context
        .clone();
    let cluster = merged
        .clusters
        .iter()
        .find(|c| c.name == context.cluster)
        .ok_or_else(|| format!("failed to load cluster of context: {}", context.cluster))?
        .cluster
        .clone();
    let cluster_folder = folder_of(format!("cluster/{}", context.cluster));
    let user = match &context.user {
        Some(name) => merged
            .users
            .iter()
            .find(|u| u.name == *name)
            .map(|u| u.user.clone())
            .ok_or_else(|| format!("failed to find named user: {name}"))?,
        None => UserEntry::default(),
    };
    let user_folder = context
        .user
        .as_ref()
        .map(|n| folder_of(format!("user/{n}")))
        .unwrap_or_default();
    let server = cluster
        .server
        .clone()
        .ok_or("kubeconfig: cluster url is missing on selected cluster")?;
    let ca_pem = match (
        &cluster.certificate_authority_data,
        &cluster.certificate_authority,
    ) {
        (Some(data), _) => Some(decode64(data, "certificate-authority-data")?),
        (None, Some(file)) => Some(read(&resolve(&cluster_folder, file))?),
        (None, None) => None,
    };
    if user.exec.is_some() || user.auth_provider.is_some() {
        return Err("kop-serve does not run kubeconfig exec or auth-provider plugins".to_string());
    }
    let cert = match (&user.client_certificate_data, &user.client_certificate) {
        (Some(d), _) => Some(decode64(d, "client-certificate-data")?),
        (None, Some(f)) => Some(read(&resolve(&user_folder, f))?),
        _ => None,
    };
    let key = match (&user.client_key_data, &user.client_key) {
        (Some(d), _) => Some(decode64(d, "client-key-data")?),
        (None, Some(f)) => Some(read(&resolve(&user_folder, f))?),
        _ => None,
    };
    let client = match (cert, key) {
        (Some(c), Some(k)) => Some((c, k)),
        (None, None) => None,
        _ => {
            return Err(
                "kubeconfig: a client certificate needs its key, and a key its certificate"
                    .to_string(),
            );
        }
    };
    let auth = if let Some(token) = user.token.filter(|t| !t.is_empty()) {
        Auth::Token(token)
    } else if let Some(file) = &user.token_file {
        Auth::TokenFile(resolve(&user_folder, file))
    } else if let (Some(u), Some(p)) = (&user.username, &user.password) {
        use base64::Engine as _;
        Auth::Basic(base64::engine::general_purpose::STANDARD.encode(format!("{u}:{p}")))
    } else {
        Auth::None
    };
    Ok(Settings {
        server,
        ca_pem,
        insecure: cluster.insecure_skip_tls_verify,
        client,
        auth,
    })
}

fn from_in_cluster() -> Result<Settings, String> {
    let host = std::env::var("KUBERNETES_SERVICE_HOST")
        .map_err(|e| format!("KUBERNETES_SERVICE_HOST: {e}"))?;
    let port = std::env::var("KUBERNETES_SERVICE_PORT")
        .map_err(|e| format!("KUBERNETES_SERVICE_PORT: {e}"))?;
    let host = match host.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V6(ip)) => format!("[{ip}]"),
        _ => host,
    };
    let server = if port == "443" {
        format!("https://{host}")
    } else {
        format!("https://{host}:{port}")
    };
    let dir = Path::new(SA_DIR);
    Ok(Settings {
        server,
        ca_pem: Some(read(&dir.join("ca.crt"))?),
        insecure: false,
        client: None,
        auth: Auth::TokenFile(dir.join("token")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_like_anyhow() {
        let e = HostError {
            message: "outer".into(),
            cause: Some("inner".into()),
        };
        let text = e.render();
        assert!(text.starts_with("outer\n\nCaused by:\n    inner"));
        assert_eq!(HostError::plain("x").render().lines().next(), Some("x"));
    }

    #[test]
    fn not_found_is_reason_or_code() {
        assert!(ApiFailure::Status(json!({"reason": "NotFound"})).is_not_found());
        assert!(ApiFailure::Status(json!({"code": 404})).is_not_found());
        assert!(!ApiFailure::Status(json!({"code": 403, "reason": "Forbidden"})).is_not_found());
    }
}
