//! Conformance cases (`../shared/conformance/README.md` format): load one,
//! run it through the policy, and compare the answer.

use crate::{BoxError, Policy, Verdict};
use fakehost::cluster::{ClusterState, Failure};
use serde::Deserialize;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The answer a case expects.
#[derive(Clone, Debug, Deserialize)]
pub struct Expect {
    /// Admitted or not.
    pub allowed: bool,
    /// The rejection code.
    #[serde(default)]
    pub code: Option<u16>,
    /// The exact rejection message.
    #[serde(default)]
    pub message: Option<String>,
    /// A text the rejection message must contain.
    #[serde(default)]
    pub message_contains: Option<String>,
    /// The exact admission warnings, in order; absent: not compared.
    #[serde(default)]
    pub warnings: Option<Vec<String>>,
}

/// One conformance case.
#[derive(Clone, Debug, Deserialize)]
pub struct Case {
    /// Short name.
    pub name: String,
    /// The AdmissionRequest.
    pub request: Value,
    /// Cluster objects by key.
    #[serde(default)]
    pub cluster: Value,
    /// Policy settings.
    #[serde(default)]
    pub settings: Value,
    /// The kinds the API server answers 403 for (this project's own
    /// extension of the format; `e2e/harness/apiserver.py` honours it too).
    #[serde(default)]
    pub forbidden: Vec<String>,
    /// The expected answer (absent in plain example files).
    #[serde(default)]
    pub expect: Option<Expect>,
}

impl Case {
    /// Reads a case file.
    pub fn load(path: &Path) -> Result<Self, BoxError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Ok(serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?)
    }

    /// Runs the case in a fresh instance.
    pub fn run(&self, policy: &Policy) -> Result<Verdict, BoxError> {
        let settings = if self.settings.is_null() {
            Value::Object(Default::default())
        } else {
            self.settings.clone()
        };
        let (verdict, _) = policy.validate(&self.request, &settings, self.cluster_state()?)?;
        Ok(verdict)
    }

    /// The cluster the case describes, with its forbidden kinds.
    pub fn cluster_state(&self) -> Result<ClusterState, BoxError> {
        let mut state = ClusterState::from_json(&self.cluster)?;
        for kind in &self.forbidden {
            let found = fakehost::kinds::all()
                .iter()
                .find(|k| k.kind == *kind)
                .ok_or_else(|| format!("unknown forbidden kind {kind:?}"))?;
            state.fail(&found.api_version, &found.kind, Failure::Forbidden);
        }
        Ok(state)
    }
}

impl Expect {
    /// `None` when `got` satisfies the expectation, else why not.
    pub fn mismatch(&self, got: &Verdict) -> Option<String> {
        if got.accepted != self.allowed {
            return Some(format!(
                "allowed={} (code {:?}, message {:?})",
                got.accepted, got.code, got.message
            ));
        }
        // Compared whatever the decision; no warnings count as `[]`.
        if let Some(want) = &self.warnings {
            let warnings = got.warnings.as_deref().unwrap_or_default();
            if warnings != want.as_slice() {
                return Some(format!("warnings {warnings:?}"));
            }
        }
        if self.allowed {
            return None;
        }
        if got.code != self.code {
            return Some(format!("code {:?} (message {:?})", got.code, got.message));
        }
        let message = got.message.as_deref().unwrap_or("");
        match (&self.message, &self.message_contains) {
            (Some(want), _) if want != message => Some(format!("message {message:?}")),
            (None, Some(part)) if !message.contains(part.as_str()) => {
                Some(format!("message {message:?}"))
            }
            _ => None,
        }
    }

    /// The expectation in one line.
    pub fn describe(&self) -> String {
        let decision = if self.allowed {
            "allowed".to_string()
        } else {
            match (&self.message, &self.message_contains) {
                (Some(m), _) => format!("denied {:?} {m:?}", self.code),
                (None, Some(c)) => format!("denied {:?} containing {c:?}", self.code),
                _ => format!("denied {:?}", self.code),
            }
        };
        match &self.warnings {
            Some(w) => format!("{decision} with warnings {w:?}"),
            None => decision,
        }
    }
}

/// Every `*.json` file in a directory, in name order.
pub fn case_files(dir: &Path) -> Result<Vec<PathBuf>, BoxError> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    Ok(files)
}

/// Every `*.json` file of these directories, directory by directory.
pub fn case_files_of(dirs: &[String]) -> Result<Vec<PathBuf>, BoxError> {
    let mut files = Vec::new();
    for dir in dirs {
        files.extend(case_files(Path::new(dir))?);
    }
    Ok(files)
}

/// A case file's name without `.json`: how the tools' reports name a case.
pub fn case_label(file: &Path) -> String {
    file.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(accepted: bool, warnings: Option<&[&str]>) -> Verdict {
        Verdict {
            accepted,
            code: (!accepted).then_some(403),
            message: (!accepted).then(|| "no".to_string()),
            warnings: warnings.map(|w| w.iter().map(|s| s.to_string()).collect()),
        }
    }

    fn expect(allowed: bool, warnings: Option<&[&str]>) -> Expect {
        Expect {
            allowed,
            code: (!allowed).then_some(403),
            message: (!allowed).then(|| "no".to_string()),
            message_contains: None,
            warnings: warnings.map(|w| w.iter().map(|s| s.to_string()).collect()),
        }
    }

    #[test]
    fn warnings_follow_rule_4() {
        let w: &[&str] = &["ip_pool has 2 entries for 3 replicas"];
        let none: &[&str] = &[];
        // (allowed, expected warnings, accepted, answered warnings, whether they match)
        let cases = [
            // Absent: not compared.
            (true, None, true, Some(w), true),
            (true, None, true, None, true),
            // `[]`: none, and none in the response counts as [].
            (true, Some(none), true, None, true),
            (true, Some(none), true, Some(none), true),
            (true, Some(none), true, Some(w), false),
            // Exact list, in order, whatever the decision.
            (true, Some(w), true, Some(w), true),
            (true, Some(w), true, None, false),
            (
                true,
                Some(&["a", "b"][..]),
                true,
                Some(&["b", "a"][..]),
                false,
            ),
            (false, Some(none), false, Some(w), false),
            (false, Some(w), false, Some(w), true),
        ];
        for (allowed, expected, accepted, answered, matches) in cases {
            let mismatch = expect(allowed, expected).mismatch(&verdict(accepted, answered));
            assert_eq!(
                mismatch.is_none(),
                matches,
                "expected {expected:?}, answered {answered:?}: {mismatch:?}"
            );
        }
        assert!(
            serde_json::from_str::<Expect>(r#"{"allowed": true}"#)
                .is_ok_and(|e| e.warnings.is_none())
        );
        assert!(
            serde_json::from_str::<Verdict>(r#"{"accepted": true, "warnings": null}"#)
                .is_ok_and(|v| v.warnings.is_none())
        );
    }
}
