//! The kinds a test's cluster may hold: `kinds.json`, which a test of the
//! policy keeps equal to `src/k8s/kinds.rs`'s `ALL`.

use serde::Deserialize;
use std::sync::OnceLock;

/// A Kubernetes kind as the API serves it.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Kind {
    /// `kubeovn.io/v1`, or `v1` for the core group.
    pub api_version: String,
    /// `IP`
    pub kind: String,
    /// `ips`
    pub plural: String,
    /// Namespaced or cluster-scoped.
    pub namespaced: bool,
    /// The key a conformance case lists this kind's objects under.
    pub case_key: String,
}

/// Every kind, in `kinds.json`'s order.
pub fn all() -> &'static [Kind] {
    static ALL: OnceLock<Vec<Kind>> = OnceLock::new();
    ALL.get_or_init(|| {
        serde_json::from_str(include_str!("../../kinds.json"))
            .expect("kinds.json is the policy's kind table (make kinds.json)")
    })
}

/// The kind of an `apiVersion` and `kind`.
pub fn find(api_version: &str, kind: &str) -> Option<&'static Kind> {
    all()
        .iter()
        .find(|k| k.api_version == api_version && k.kind == kind)
}

/// The kind a conformance case lists under `key`.
pub fn by_case_key(key: &str) -> Option<&'static Kind> {
    all().iter().find(|k| k.case_key == key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_read() {
        let ip = find("kubeovn.io/v1", "IP").expect("IP");
        assert_eq!((ip.plural.as_str(), ip.namespaced), ("ips", false));
        assert_eq!(by_case_key("ips"), Some(ip));
        assert!(find("v1", "ConfigMap").expect("ConfigMap").namespaced);
        assert!(find("kubeovn.io/v1", "Nothing").is_none());
    }
}
