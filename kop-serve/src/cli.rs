//! kop-serve's command line: the policy-server flags that `e2e/suites/test_policy_server.py`
//! and `scripts/missing-rbac.py` pass, with policy-server's defaults
//! (crates/policy-server/src/cli.rs, config.rs). Any other flag is an error.

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

/// The outcome of parsing: run, or print this text and exit 0.
#[derive(Debug)]
pub enum Command {
    /// Serve.
    Run(Options),
    /// `--help` or `--version`.
    Print(String),
}

const USAGE: &str = "kop-serve: a stand-in for Kubewarden's policy-server (waPC policies, \
Kubernetes lookups from KUBECONFIG)

Usage: kop-serve [OPTIONS]

Options:
      --addr <BIND_ADDRESS>               Bind against ADDRESS [default: 0.0.0.0]
      --port <PORT>                       Listen on PORT [default: 3000]
      --readiness-probe-port <PORT>       Expose GET /readiness on PORT [default: 8081]
      --policies <POLICIES_FILE>          YAML file holding the policies [default: policies.yml]
      --cert-file <CERT_FILE>             PEM certificate (chain) for HTTPS
      --key-file <KEY_FILE>               PEM private key for HTTPS
      --workers <WORKERS_NUMBER>          Evaluations at once [default: number of CPUs]
      --policy-timeout <SECONDS>          Interrupt policy evaluation after SECONDS [default: 2]
      --disable-timeout-protection        Disable policy timeout protection
      --ignore-kubernetes-connection-failure
                                          Start without a kubeconfig (lookups fail)
      --always-accept-admission-reviews-on-namespace <NAMESPACE>
                                          Always accept AdmissionReviews that target NAMESPACE
      --policies-download-dir <DIR>       Accepted, unused (modules are file:// only)
      --sigstore-cache-dir <DIR>          Accepted, unused
      --log-level <LOG_LEVEL>             Accepted, unused
      --log-fmt <LOG_FMT>                 Accepted, unused
      --log-no-color                      Accepted, unused
  -h, --help                              Print help
  -V, --version                           Print version
";

/// Parses the arguments (without the program name).
pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Command, String> {
    let mut addr = "0.0.0.0".to_string();
    let mut port = "3000".to_string();
    let mut readiness_probe_port = "8081".to_string();
    let mut policies = PathBuf::from("policies.yml");
    let (mut cert, mut key) = (None, None);
    let mut workers = None;
    let mut policy_timeout = "2".to_string();
    let mut disable_timeout_protection = false;
    let mut ignore_kubernetes_connection_failure = false;
    let mut always_accept_namespace = None;

    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        // `--flag=value` as clap accepts it.
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        let mut value = || {
            inline.clone().or_else(|| args.next()).ok_or_else(|| {
                format!("error: a value is required for '{flag}' but none was supplied")
            })
        };
        match flag.as_str() {
            "--addr" => addr = value()?,
            "--port" => port = value()?,
            "--readiness-probe-port" => readiness_probe_port = value()?,
            "--policies" => policies = value()?.into(),
            "--cert-file" => cert = Some(PathBuf::from(value()?)),
            "--key-file" => key = Some(PathBuf::from(value()?)),
            "--workers" => workers = Some(value()?),
            "--policy-timeout" => policy_timeout = value()?,
            "--always-accept-admission-reviews-on-namespace" => {
                always_accept_namespace = Some(value()?)
            }
            "--policies-download-dir" | "--sigstore-cache-dir" | "--log-level" | "--log-fmt" => {
                value()?;
            }
            "--disable-timeout-protection"
            | "--ignore-kubernetes-connection-failure"
            | "--log-no-color"
                if inline.is_some() =>
            {
                return Err(format!("error: unexpected value for '{flag}'"));
            }
            "--disable-timeout-protection" => disable_timeout_protection = true,
            "--ignore-kubernetes-connection-failure" => ignore_kubernetes_connection_failure = true,
            "--log-no-color" => {}
            "-h" | "--help" => return Ok(Command::Print(USAGE.to_string())),
            "-V" | "--version" => {
                return Ok(Command::Print(format!(
                    "kop-serve {}\n",
                    env!("CARGO_PKG_VERSION")
                )));
            }
            _ => {
                return Err(format!(
                    "error: unexpected argument '{arg}' found\n\nUsage: kop-serve [OPTIONS]\n\nFor more information, try '--help'."
                ));
            }
        }
    }

    let tls = match (cert, key) {
        (Some(c), Some(k)) => Some((c, k)),
        (None, None) => None,
        _ => return Err("both certificate and key must be provided together".to_string()),
    };
    let workers = match workers {
        Some(w) => w
            .parse::<usize>()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| format!("error parsing the number of workers: {w:?}"))?,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let policy_timeout = if disable_timeout_protection {
        None
    } else {
        Some(
            policy_timeout
                .parse::<u64>()
                .map_err(|e| format!("invalid --policy-timeout {policy_timeout:?}: {e}"))?,
        )
    };
    Ok(Command::Run(Options {
        addr,
        port,
        readiness_probe_port,
        policies,
        tls,
        workers,
        policy_timeout,
        ignore_kubernetes_connection_failure,
        always_accept_namespace,
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
