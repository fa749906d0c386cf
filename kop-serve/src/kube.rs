//! The Kubernetes API server kop-serve asks, through kube-rs as
//! policy-evaluator asks it: `kube::Client::try_default` (`Config::infer`:
//! `KUBECONFIG` or `~/.kube/config`, else the in-cluster ServiceAccount) on a
//! tokio runtime of kop-serve's own, and kube-rs' errors as `anyhow` hands
//! them to the guest.

use std::error::Error;
use std::sync::Arc;
use tokio::runtime::Runtime;

/// An error as policy-evaluator hands it to the guest: `anyhow`'s debug
/// form, `message`, then `Caused by:` and each source below it, then a
/// backtrace when `RUST_BACKTRACE` (or `RUST_LIB_BACKTRACE`) asks for one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostError {
    /// The error's display form (the first line the guest sees).
    pub message: String,
    /// Its sources' display forms, outermost first.
    pub causes: Vec<String>,
}

impl HostError {
    /// An error without a source (`anyhow!(…)`).
    pub fn plain(message: impl Into<String>) -> Self {
        HostError {
            message: message.into(),
            causes: Vec::new(),
        }
    }

    /// `anyhow::Error::new(e)` (or `?` on it): its display form, and the
    /// display form of each source down its chain.
    pub fn chain(e: &(dyn Error + 'static)) -> Self {
        let mut causes = Vec::new();
        let mut source = e.source();
        while let Some(cause) = source {
            causes.push(cause.to_string());
            source = cause.source();
        }
        HostError {
            message: e.to_string(),
            causes,
        }
    }

    /// What `format!("{e:?}")` of the `anyhow::Error` gives (anyhow's
    /// `fmt.rs`: one cause indented, several numbered). kop-serve does not
    /// capture a backtrace; with `RUST_BACKTRACE` set it writes where one
    /// would be, so that the guest sees as many lines as from policy-server.
    pub fn render(&self) -> String {
        let mut text = self.message.clone();
        if !self.causes.is_empty() {
            text.push_str("\n\nCaused by:");
            let numbered = self.causes.len() > 1;
            for (n, cause) in self.causes.iter().enumerate() {
                text.push('\n');
                for (i, line) in cause.split('\n').enumerate() {
                    match (i, numbered) {
                        (0, true) => text.push_str(&format!("{n: >5}: ")),
                        (0, false) => text.push_str("    "),
                        (_, true) => text.push_str("\n       "),
                        (_, false) => text.push_str("\n    "),
                    }
                    text.push_str(line);
                }
            }
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

/// The tokio runtime the client, its watchers and the lookups run on; the
/// server's own threads wait on it (`Runtime::block_on`).
pub fn runtime() -> Result<Arc<Runtime>, String> {
    tokio::runtime::Builder::new_multi_thread()
        .thread_name("kube")
        .enable_all()
        .build()
        .map(Arc::new)
        .map_err(|e| format!("cannot start the tokio runtime: {e}"))
}

/// lib.rs `PolicyServer::new_from_config`: `kube::Client::try_default()`
/// (`Config::infer`, then the client), and the API server's URL. Nothing is
/// asked of the API server yet.
pub fn connect(runtime: &Runtime) -> Result<(kube::Client, String), String> {
    let config = runtime
        .block_on(kube::Config::infer())
        .map_err(|e| kube::Error::InferConfig(e).to_string())?;
    let url = config.cluster_url.to_string();
    let _entered = runtime.enter();
    let client = kube::Client::try_from(config).map_err(|e| e.to_string())?;
    Ok((client, url))
}

/// A client for `url` with no credentials (the tests' API servers).
#[cfg(test)]
pub fn client_for(runtime: &Runtime, url: &str) -> Result<kube::Client, String> {
    let url = url.parse().map_err(|e| format!("{url}: {e}"))?;
    let _entered = runtime.enter();
    kube::Client::try_from(kube::Config::new(url)).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_like_anyhow() {
        let one = HostError {
            message: "outer".into(),
            causes: vec!["inner".into()],
        };
        assert!(one.render().starts_with("outer\n\nCaused by:\n    inner"));
        let two = HostError {
            message: "outer".into(),
            causes: vec!["middle\nsecond line".into(), "inner".into()],
        };
        assert!(
            two.render().starts_with(
                "outer\n\nCaused by:\n    0: middle\n       second line\n    1: inner"
            ),
            "{}",
            two.render()
        );
        assert_eq!(HostError::plain("x").render().lines().next(), Some("x"));
    }

    #[test]
    fn a_chain_is_every_source() {
        let io = std::io::Error::other("refused");
        let e = HostError::chain(&io);
        assert_eq!(e.message, "refused");
        assert!(e.causes.is_empty());
    }
}
