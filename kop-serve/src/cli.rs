//! kop-serve's command line: policy-server's flags that `e2e/suites/test_policy_server.py`
//! and `scripts/missing-rbac.py` pass, with policy-server's names, defaults
//! and environment variables (crates/policy-server/src/cli.rs, config.rs), on
//! clap as policy-server's is. Any other flag is an error.

use clap::Parser;
use std::path::PathBuf;

/// What the command line asks for.
#[derive(Clone, Debug)]
pub struct Options {
    /// `--addr`: the address both listeners bind (policy-server: 0.0.0.0).
    pub addr: String,
    /// `--port` (3000).
    pub port: String,
    /// `--readiness-probe-port` (8081).
    pub readiness_probe_port: String,
    /// `--policies` (policies.yml).
    pub policies: PathBuf,
    /// `--cert-file`, `--key-file`: serve HTTPS with this PEM pair.
    pub tls: Option<(PathBuf, PathBuf)>,
    /// `--workers`: evaluations at once (policy-server: one per CPU).
    pub workers: usize,
    /// `--policy-timeout` (2 s) unless `--disable-timeout-protection`: the
    /// limit of a policy without its own `timeoutEvalSeconds`.
    pub policy_timeout: Option<u64>,
    /// `--ignore-kubernetes-connection-failure`
    pub ignore_kubernetes_connection_failure: bool,
    /// `--always-accept-admission-reviews-on-namespace`
    pub always_accept_namespace: Option<String>,
}

/// The outcome of parsing: run, or print this text and exit 0 (a usage
/// error is an `Err`, which `main` prints and exits 2 on).
#[derive(Debug)]
pub enum Command {
    /// Serve.
    Run(Options),
    /// `--help` or `--version`.
    Print(String),
}

/// The flags as clap reads them.
#[derive(Debug, Parser)]
#[command(
    name = "kop-serve",
    version,
    about = "kop-serve: a stand-in for Kubewarden's policy-server (waPC policies, Kubernetes lookups from KUBECONFIG)"
)]
struct Flags {
    /// Bind against ADDRESS
    #[arg(
        long = "addr",
        value_name = "BIND_ADDRESS",
        default_value = "0.0.0.0",
        env = "KUBEWARDEN_BIND_ADDRESS"
    )]
    address: String,
    /// Listen on PORT
    #[arg(
        long,
        value_name = "PORT",
        default_value = "3000",
        env = "KUBEWARDEN_PORT"
    )]
    port: String,
    /// Expose readiness endpoint on READINESS_PROBE_PORT
    #[arg(
        long,
        value_name = "READINESS_PROBE_PORT",
        default_value = "8081",
        env = "KUBEWARDEN_READINESS_PROBE_PORT"
    )]
    readiness_probe_port: String,
    /// Number of worker threads to create
    #[arg(long, value_name = "WORKERS_NUMBER", env = "KUBEWARDEN_WORKERS")]
    workers: Option<String>,
    /// Path to an X.509 certificate file for HTTPS
    #[arg(long, value_name = "CERT_FILE", env = "KUBEWARDEN_CERT_FILE")]
    cert_file: Option<PathBuf>,
    /// Path to an X.509 private key file for HTTPS
    #[arg(long, value_name = "KEY_FILE", env = "KUBEWARDEN_KEY_FILE")]
    key_file: Option<PathBuf>,
    /// YAML file holding the policies to be loaded and their settings
    #[arg(
        long,
        value_name = "POLICIES_FILE",
        default_value = "policies.yml",
        env = "KUBEWARDEN_POLICIES"
    )]
    policies: PathBuf,
    /// Always accept AdmissionReviews that target the given namespace
    #[arg(
        long,
        value_name = "NAMESPACE",
        env = "KUBEWARDEN_ALWAYS_ACCEPT_ADMISSION_REVIEWS_ON_NAMESPACE"
    )]
    always_accept_admission_reviews_on_namespace: Option<String>,
    /// Disable policy timeout protection
    #[arg(long, env = "KUBEWARDEN_DISABLE_TIMEOUT_PROTECTION")]
    disable_timeout_protection: bool,
    /// Interrupt policy evaluation after the given time
    #[arg(
        long,
        value_name = "MAXIMUM_EXECUTION_TIME_SECONDS",
        default_value = "2",
        env = "KUBEWARDEN_POLICY_TIMEOUT"
    )]
    policy_timeout: String,
    /// Start without a kubeconfig (lookups then fail)
    #[arg(long, env = "KUBEWARDEN_IGNORE_KUBERNETES_CONNECTION_FAILURE")]
    ignore_kubernetes_connection_failure: bool,
    /// Accepted, unused (modules are file:// only)
    #[arg(long, value_name = "POLICIES_DOWNLOAD_DIR")]
    policies_download_dir: Option<String>,
    /// Accepted, unused
    #[arg(long, value_name = "SIGSTORE_CACHE_DIR")]
    sigstore_cache_dir: Option<String>,
    /// Accepted, unused
    #[arg(long, value_name = "LOG_LEVEL")]
    log_level: Option<String>,
    /// Accepted, unused
    #[arg(long, value_name = "LOG_FMT")]
    log_fmt: Option<String>,
    /// Accepted, unused
    #[arg(long)]
    log_no_color: bool,
}

/// Parses the arguments (without the program name).
pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Command, String> {
    let flags = match Flags::try_parse_from(std::iter::once("kop-serve".to_string()).chain(args)) {
        Ok(flags) => flags,
        Err(e) if !e.use_stderr() => return Ok(Command::Print(e.to_string())),
        Err(e) => return Err(e.to_string().trim_end().to_string()),
    };
    // config.rs: the pair, then the workers, then the timeout.
    let tls = match (flags.cert_file, flags.key_file) {
        (Some(c), Some(k)) => Some((c, k)),
        (None, None) => None,
        _ => return Err("both certificate and key must be provided together".to_string()),
    };
    let workers = match flags.workers {
        Some(w) => w
            .parse::<usize>()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| format!("error parsing the number of workers: {w:?}"))?,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let policy_timeout = if flags.disable_timeout_protection {
        None
    } else {
        Some(
            flags
                .policy_timeout
                .parse::<u64>()
                .map_err(|e| format!("invalid --policy-timeout {:?}: {e}", flags.policy_timeout))?,
        )
    };
    Ok(Command::Run(Options {
        addr: flags.address,
        port: flags.port,
        readiness_probe_port: flags.readiness_probe_port,
        policies: flags.policies,
        tls,
        workers,
        policy_timeout,
        ignore_kubernetes_connection_failure: flags.ignore_kubernetes_connection_failure,
        always_accept_namespace: flags.always_accept_admission_reviews_on_namespace,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> Result<Options, String> {
        match parse(args.iter().map(|s| s.to_string()))? {
            Command::Run(o) => Ok(o),
            Command::Print(_) => Err("printed".into()),
        }
    }

    #[test]
    fn policy_server_flags() {
        let o = run(&[
            "--addr",
            "127.0.0.1",
            "--port=8443",
            "--readiness-probe-port",
            "9",
            "--policies",
            "p.yml",
            "--policies-download-dir",
            "/tmp",
            "--sigstore-cache-dir",
            "/tmp/s",
            "--cert-file",
            "c.pem",
            "--key-file",
            "k.pem",
            "--workers",
            "3",
            "--log-no-color",
        ])
        .unwrap();
        assert_eq!((o.addr.as_str(), o.port.as_str()), ("127.0.0.1", "8443"));
        assert_eq!(o.workers, 3);
        assert_eq!(o.policy_timeout, Some(2));
        assert!(o.tls.is_some());
        assert_eq!(
            run(&["--disable-timeout-protection"])
                .unwrap()
                .policy_timeout,
            None
        );
    }

    #[test]
    fn refuses_what_it_does_not_know() {
        assert!(
            run(&["--enable-metrics"])
                .unwrap_err()
                .contains("unexpected argument")
        );
        assert!(
            run(&["--cert-file", "c.pem"])
                .unwrap_err()
                .contains("together")
        );
        assert!(run(&["--workers", "x"]).is_err());
        assert!(
            run(&["--port"])
                .unwrap_err()
                .contains("a value is required")
        );
    }
}
