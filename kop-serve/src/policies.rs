//! `policies.yml` as policy-server reads it (crates/policy-server/src/config.rs
//! `PolicyOrPolicyGroup`), and the `hostCapabilities` allow list
//! (crates/policy-evaluator/src/host_capabilities.rs).

use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;

/// `policyMode`: `protect` unless `monitor`.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum PolicyMode {
    /// Accepts everything; the policy's decision is only logged.
    Monitor,
    /// Answers what the policy decides.
    #[default]
    Protect,
}

/// One `contextAwareResources` entry.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "camelCase")]
pub struct ContextAwareResource {
    /// `v1`, `kubeovn.io/v1`, ...
    pub api_version: String,
    /// `Namespace`, `IP`, ...
    pub kind: String,
}

/// One entry of `policies.yml`. The enum's name is policy-server's, so a
/// file that fits neither variant gets the same serde message.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
#[allow(clippy::large_enum_variant)]
pub enum PolicyOrPolicyGroup {
    /// A single policy.
    #[serde(rename_all = "camelCase")]
    Policy {
        /// Where the module is: `file:///…`.
        module: String,
        /// `protect` or `monitor`.
        #[serde(default)]
        policy_mode: PolicyMode,
        /// Whether a mutation is passed on.
        allowed_to_mutate: Option<bool>,
        /// The policy's settings (absent or null: `{}`).
        settings: Option<Map<String, Value>>,
        /// The kinds the policy may look up.
        #[serde(default)]
        context_aware_resources: BTreeSet<ContextAwareResource>,
        /// A rejection message that replaces the policy's own.
        message: Option<String>,
        /// The evaluation limit in seconds (else `--policy-timeout`).
        timeout_eval_seconds: Option<u64>,
        /// The host capabilities granted (empty: none).
        #[serde(default)]
        host_capabilities: Vec<String>,
    },
    /// A policy group (not served by kop-serve).
    #[serde(rename_all = "camelCase")]
    PolicyGroup {
        /// The group's mode.
        #[serde(default)]
        policy_mode: PolicyMode,
        /// The member policies.
        policies: HashMap<String, Value>,
        /// The expression combining them.
        expression: String,
        /// The group's rejection message.
        message: String,
    },
}

/// Reads `policies.yml`; the errors are policy-server's (`policies`, config.rs).
pub fn load(path: &Path) -> Result<HashMap<String, PolicyOrPolicyGroup>, String> {
    let read = || -> Result<HashMap<String, PolicyOrPolicyGroup>, String> {
        let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
        yaml_serde::from_reader(file).map_err(|e| e.to_string())
    };
    let policies =
        read().map_err(|e| format!("error while loading policies from {path:?}: {e}"))?;
    for name in policies.keys() {
        if name.contains('/') {
            return Err(format!("policy name '{name}' contains a '/' character"));
        }
    }
    Ok(policies)
}

/// Every host capability there is, as `namespace/operation` paths
/// (`CAPABILITY_TREE`).
const CAPABILITIES: &[&str] = &[
    "oci/v1/verify",
    "oci/v1/manifest_digest",
    "oci/v1/oci_manifest",
    "oci/v1/oci_manifest_config",
    "oci/v2/verify",
    "net/v1/dns_lookup_host",
    "crypto/v1/is_certificate_trusted",
    "kubernetes/list_resources_by_namespace",
    "kubernetes/list_resources_all",
    "kubernetes/get_resource",
    "kubernetes/can_i",
];

/// The host capabilities a policy may use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostCapabilities {
    /// `[]`
    DenyAll,
    /// `["*"]`
    AllowAll,
    /// Exact paths and `prefix/*` patterns.
    Patterns {
        /// `oci/` from `oci/*`.
        prefixes: HashSet<String>,
        /// `oci/v1/verify`.
        exact: HashSet<String>,
    },
}

impl HostCapabilities {
    /// Parses the patterns; the errors are `HostCapabilitiesPatternError`'s.
    pub fn new(patterns: &[String]) -> Result<Self, String> {
        let (mut prefixes, mut exact) = (HashSet::new(), HashSet::new());
        for pattern in patterns {
            let trimmed = pattern.trim();
            if trimmed.is_empty() {
                return Err("invalid pattern: pattern must not be empty".to_string());
            }
            if trimmed == "*" {
                return Ok(Self::AllowAll);
            }
            if trimmed.contains('*') && !trimmed.ends_with("/*") {
                return Err(format!(
                    "invalid pattern {pattern:?}: wildcard '*' must be the entire last path segment (e.g. 'oci/*'), not a partial match"
                ));
            }
            validate_against_tree(trimmed)?;
            match trimmed.strip_suffix('*') {
                Some(prefix) => prefixes.insert(prefix.to_string()),
                None => exact.insert(trimmed.to_string()),
            };
        }
        if prefixes.is_empty() && exact.is_empty() {
            return Ok(Self::DenyAll);
        }
        Ok(Self::Patterns { prefixes, exact })
    }

    /// Whether `namespace/operation` may be called.
    pub fn is_allowed(&self, path: &str) -> bool {
        match self {
            Self::AllowAll => true,
            Self::DenyAll => false,
            Self::Patterns { prefixes, exact } => {
                exact.contains(path) || prefixes.iter().any(|p| path.starts_with(p.as_str()))
            }
        }
    }
}

/// `validate_against_tree`: every segment before a `*` must be a known
/// node, and an exact path must end on a leaf.
fn validate_against_tree(pattern: &str) -> Result<(), String> {
    let parts: Vec<&str> = pattern.split('/').collect();
    let leaves: Vec<Vec<&str>> = CAPABILITIES
        .iter()
        .map(|c| c.split('/').collect())
        .collect();
    for (i, part) in parts.iter().enumerate() {
        if *part == "*" {
            return Ok(());
        }
        let prefix = &parts[..i];
        let below: Vec<&Vec<&str>> = leaves
            .iter()
            .filter(|l| l.len() > i && l[..i] == *prefix)
            .collect();
        if !below.iter().any(|l| l[i] == *part) {
            let valid: BTreeSet<&str> = below.iter().map(|l| l[i]).collect();
            return Err(format!(
                "invalid pattern {pattern:?}: unknown segment {part:?}, valid options at this level are: {}",
                valid.into_iter().collect::<Vec<_>>().join(", ")
            ));
        }
        let is_leaf = below.iter().any(|l| l.len() == i + 1 && l[i] == *part);
        if is_leaf {
            if i != parts.len() - 1 {
                return Err(format!(
                    "invalid pattern {pattern:?}: unknown segment {:?}, valid options at this level are: ",
                    parts[i + 1]
                ));
            }
            return Ok(());
        }
        if i == parts.len() - 1 {
            return Err(format!(
                "invalid pattern {pattern:?}: not a complete capability path; use {:?} to allow all capabilities under it",
                format!("{pattern}/*")
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caps(patterns: &[&str]) -> Result<HostCapabilities, String> {
        HostCapabilities::new(&patterns.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn patterns() {
        assert_eq!(caps(&[]).unwrap(), HostCapabilities::DenyAll);
        assert_eq!(caps(&["*"]).unwrap(), HostCapabilities::AllowAll);
        let k = caps(&["kubernetes/*"]).unwrap();
        assert!(k.is_allowed("kubernetes/get_resource"));
        assert!(!k.is_allowed("oci/v1/verify"));
        let exact = caps(&["kubernetes/list_resources_all"]).unwrap();
        assert!(!exact.is_allowed("kubernetes/get_resource"));
        assert!(caps(&["oci*"]).unwrap_err().contains("wildcard"));
        assert!(caps(&["kubernetes"]).unwrap_err().contains("kubernetes/*"));
        assert_eq!(
            caps(&["nope/x"]).unwrap_err(),
            "invalid pattern \"nope/x\": unknown segment \"nope\", valid options at this level are: crypto, kubernetes, net, oci"
        );
    }

    #[test]
    fn reads_policies_yml() {
        let dir = std::env::temp_dir().join(format!("kop-serve-policies-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("policies.yml");
        std::fs::write(
            &path,
            "p:\n  module: file:///x.wasm\n  policyMode: monitor\n  settings: null\n  \
             contextAwareResources: [{apiVersion: v1, kind: Namespace}]\n  timeoutEvalSeconds: 8\n",
        )
        .unwrap();
        let policies = load(&path).unwrap();
        match &policies["p"] {
            PolicyOrPolicyGroup::Policy {
                policy_mode,
                settings,
                context_aware_resources,
                timeout_eval_seconds,
                host_capabilities,
                ..
            } => {
                assert_eq!(*policy_mode, PolicyMode::Monitor);
                assert!(settings.is_none());
                assert_eq!(context_aware_resources.len(), 1);
                assert_eq!(*timeout_eval_seconds, Some(8));
                assert!(host_capabilities.is_empty());
            }
            PolicyOrPolicyGroup::PolicyGroup { .. } => panic!("not a group"),
        }
        std::fs::write(&path, "p:\n  policyMode: sideways\n").unwrap();
        assert!(
            load(&path)
                .unwrap_err()
                .contains("error while loading policies from")
        );
        std::fs::remove_dir_all(&dir).ok();
    }
}
