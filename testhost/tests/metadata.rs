//! `metadata.yml`, `artifacthub-pkg.yml`, the crate version and the
//! manifests in `deploy/` agree with each other and with what the policy
//! really looks up.

use kube_ovn_policy::k8s::kinds::{ALL, Lookup, find};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::OnceLock;
use testhost::Policy;
use testhost::case::{Case, case_files};
use testhost::cluster::ClusterState;

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn yaml(path: &str) -> Value {
    let text = std::fs::read_to_string(workspace().join(path)).expect(path);
    yaml_serde::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn yaml_documents(path: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(workspace().join(path)).expect(path);
    yaml_serde::Deserializer::from_str(&text)
        .map(|doc| serde::Deserialize::deserialize(doc).unwrap_or_else(|e| panic!("{path}: {e}")))
        .filter(|doc: &Value| !doc.is_null())
        .collect()
}

/// The strings of a YAML list (none when it is not one).
fn strings(list: &Value) -> Vec<String> {
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect()
}

fn metadata() -> &'static Value {
    static METADATA: OnceLock<Value> = OnceLock::new();
    METADATA.get_or_init(|| yaml("metadata.yml"))
}

fn annotation(key: &str) -> &'static str {
    metadata()["annotations"][key]
        .as_str()
        .unwrap_or_else(|| panic!("metadata.yml has no annotation {key}"))
}

fn crate_version() -> String {
    let cargo = std::fs::read_to_string(workspace().join("Cargo.toml")).expect("Cargo.toml");
    cargo
        .lines()
        .find_map(|l| l.strip_prefix("version = "))
        .map(|v| v.trim_matches('"').to_string())
        .expect("version in Cargo.toml")
}

fn kinds(list: &Value) -> BTreeSet<(String, String)> {
    list.as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            (
                r["apiVersion"].as_str().unwrap_or_default().to_string(),
                r["kind"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// (apiGroup, resource, operation) triples of a list of webhook rules.
fn rule_triples(rules: &Value) -> BTreeSet<(String, String, String)> {
    let mut out = BTreeSet::new();
    for rule in rules.as_array().into_iter().flatten() {
        for group in strings(&rule["apiGroups"]) {
            for resource in strings(&rule["resources"]) {
                for operation in strings(&rule["operations"]) {
                    out.insert((group.clone(), resource.clone(), operation));
                }
            }
        }
    }
    out
}

#[test]
fn metadata_is_what_kubewarden_expects() {
    let m = metadata();
    assert_eq!(m["mutating"], Value::Bool(false));
    assert_eq!(m["backgroundAudit"], Value::Bool(true));
    assert_eq!(m["executionMode"], "kubewarden-wapc");
    assert_eq!(annotation("io.kubewarden.policy.version"), crate_version());
    let rules = rule_triples(&m["rules"]);
    for (group, resource, operation) in [
        ("", "pods", "CREATE"),
        ("apps", "deployments", "UPDATE"),
        ("apps", "statefulsets", "CREATE"),
        ("batch", "cronjobs", "CREATE"),
    ] {
        assert!(
            rules.contains(&(group.into(), resource.into(), operation.into())),
            "metadata.yml rules lack {group}/{resource} {operation}"
        );
    }
    // `kwctl scaffold manifest` copies these rules into a policy without
    // matchConditions, on a PolicyServer that may not read kubeovn.io:
    // nothing kube-ovn-controller writes (an IP object per new pod) may be
    // among them, nor a pod UPDATE (kube-ovn-controller patches every pod).
    let unsafe_rules: Vec<_> = rules
        .iter()
        .filter(|(group, resource, operation)| {
            group == "kubeovn.io" || (resource == "pods" && operation != "CREATE")
        })
        .collect();
    assert!(
        unsafe_rules.is_empty(),
        "metadata.yml rules a scaffolded policy must not have: {unsafe_rules:?}"
    );
}

#[test]
fn artifacthub_package_agrees_with_metadata() {
    let pkg = yaml("artifacthub-pkg.yml");
    let version = crate_version();
    assert_eq!(pkg["version"], version.as_str());
    assert_eq!(pkg["name"], annotation("io.kubewarden.policy.title"));
    assert_eq!(pkg["displayName"], annotation("io.artifacthub.displayName"));
    assert_eq!(
        pkg["description"],
        annotation("io.kubewarden.policy.description")
    );
    assert_eq!(pkg["license"], annotation("io.kubewarden.policy.license"));
    assert_eq!(pkg["homeURL"], annotation("io.kubewarden.policy.url"));
    let image = format!("{}:v{version}", annotation("io.kubewarden.policy.ociUrl"));
    assert_eq!(pkg["containersImages"][0]["image"], image.as_str());
    // Not kwctl's own install text (scripts/artifacthub-install.py).
    let install = std::fs::read_to_string(workspace().join("docs/artifacthub-install.md"))
        .expect("docs/artifacthub-install.md")
        .replace("{image}", &image);
    assert_eq!(pkg["install"], install.as_str());
    assert!(install.contains("--allow-context-aware") && install.contains("missing-rbac.md"));
    let annotations = &pkg["annotations"];
    assert_eq!(annotations["kubewarden/mutation"], "false");
    assert_eq!(
        annotations["kubewarden/resources"],
        annotation("io.artifacthub.resources")
    );
    let embedded = |key: &str| -> Value {
        yaml_serde::from_str(annotations[key].as_str().unwrap_or_default())
            .unwrap_or_else(|e| panic!("{key}: {e}"))
    };
    assert_eq!(embedded("kubewarden/rules"), metadata()["rules"]);
    assert_eq!(
        kinds(&embedded("kubewarden/contextAwareResources")),
        kinds(&metadata()["contextAwareResources"])
    );
    let keywords: Vec<&str> = annotation("io.artifacthub.keywords")
        .split(',')
        .map(str::trim)
        .collect();
    assert_eq!(
        pkg["keywords"],
        Value::from(keywords.iter().map(|k| Value::from(*k)).collect::<Vec<_>>())
    );
}

#[test]
fn deployment_manifests_stay_within_the_metadata() {
    let declared_kinds = kinds(&metadata()["contextAwareResources"]);
    let declared_rules = rule_triples(&metadata()["rules"]);
    let module = format!(
        "registry://{}:v{}",
        annotation("io.kubewarden.policy.ociUrl"),
        crate_version()
    );
    let mut guarded = BTreeSet::new();
    for file in [
        "deploy/cluster-admission-policies.yaml",
        "deploy/ip-objects-policy.yaml",
    ] {
        for policy in yaml_documents(file) {
            let name = policy["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let spec = &policy["spec"];
            assert_eq!(policy["kind"], "ClusterAdmissionPolicy", "{name}");
            assert_eq!(spec["module"], module.as_str(), "{name}");
            assert!(
                matches!(spec["failurePolicy"].as_str(), Some("Fail" | "Ignore")),
                "{name}: failurePolicy"
            );
            let policy_kinds = kinds(&spec["contextAwareResources"]);
            assert!(
                policy_kinds.is_subset(&declared_kinds),
                "{name}: {:?} not in metadata.yml",
                policy_kinds.difference(&declared_kinds).collect::<Vec<_>>()
            );
            let rules = rule_triples(&spec["rules"]);
            if name == "kube-ovn-static-ip" {
                // metadata.yml's, and Pod UPDATE: deployed only behind
                // deploy/'s matchConditions, which send an update only when
                // kube-ovn-controller may allocate after it (I18).
                let mut expected = declared_rules.clone();
                expected.insert(("".into(), "pods".into(), "UPDATE".into()));
                assert_eq!(rules, expected, "{name}: the rules of metadata.yml");
                let conditions: Vec<&str> = spec["matchConditions"]
                    .as_array()
                    .map(|s| s.iter().filter_map(|c| c["name"].as_str()).collect())
                    .unwrap_or_default();
                assert!(
                    conditions.contains(&"pod-update-may-allocate"),
                    "{name}: Pod UPDATE without its matchCondition"
                );
            } else {
                // Kube-OVN's own kinds: deployed only where deploy/ exempts
                // kube-ovn-controller and grants the lookups; and Multus
                // NetworkAttachmentDefinitions, whose check needs no lookup (I20).
                let beyond: Vec<_> = rules
                    .iter()
                    .filter(|(g, r, _)| {
                        g != "kubeovn.io"
                            && (g, r)
                                != (
                                    &"k8s.cni.cncf.io".to_string(),
                                    &"network-attachment-definitions".to_string(),
                                )
                    })
                    .collect();
                assert!(beyond.is_empty(), "{name}: {beyond:?}");
            }
            guarded.extend(rules);
        }
    }
    assert!(
        declared_rules.is_subset(&guarded),
        "every rule of metadata.yml is deployed somewhere"
    );

    // What deploy/rbac.yaml grants the policy-server's ServiceAccount (the
    // verbs, per lookup, are checked by `make validate-deploy`).
    let docs = yaml_documents("deploy/rbac.yaml");
    let bound: BTreeSet<&str> = docs
        .iter()
        .filter(|d| {
            matches!(
                d["kind"].as_str(),
                Some("ClusterRoleBinding" | "RoleBinding")
            )
        })
        .filter(|d| {
            d["subjects"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|s| s["name"] == "kube-ovn-policy-server")
        })
        .filter_map(|d| d["roleRef"]["name"].as_str())
        .collect();
    let granted: BTreeSet<(String, String)> = docs
        .iter()
        .filter(|d| matches!(d["kind"].as_str(), Some("ClusterRole" | "Role")))
        .filter(|d| {
            d["metadata"]["name"]
                .as_str()
                .is_some_and(|n| bound.contains(n))
        })
        .flat_map(|d| d["rules"].as_array().into_iter().flatten())
        .flat_map(|rule| {
            let resources = strings(&rule["resources"]);
            strings(&rule["apiGroups"])
                .into_iter()
                .flat_map(move |g| resources.clone().into_iter().map(move |r| (g.clone(), r)))
        })
        .collect();
    for (api_version, kind) in &declared_kinds {
        let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
        let plural = kube_ovn_policy::k8s::kinds::ALL
            .iter()
            .find(|k| k.api_version == api_version && k.kind == kind)
            .map(|k| k.plural)
            .expect("a known kind");
        assert!(
            granted.contains(&(group.to_string(), plural.to_string())),
            "deploy/rbac.yaml does not grant {group}/{plural} to the policy-server"
        );
    }
}

#[test]
fn every_kind_the_policy_looks_up_is_declared() {
    let wasm = std::env::var_os("POLICY_WASM")
        .map_or_else(|| workspace().join("policy.wasm"), PathBuf::from);
    let policy = Policy::load(&wasm).expect("build it first with `make policy.wasm`");
    let declared = kinds(&metadata()["contextAwareResources"]);
    let capabilities: BTreeSet<String> = metadata()["hostCapabilities"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect();
    let mut used = BTreeSet::new();
    let mut made = BTreeSet::new();
    let files = ["tests/conformance", "tests/cases"]
        .iter()
        .flat_map(|dir| case_files(&workspace().join(dir)).expect("cases"));
    for file in files {
        let case = Case::load(&file).expect("case");
        let settings = if case.settings.is_null() {
            Value::Object(Default::default())
        } else {
            case.settings.clone()
        };
        let (_, calls) = policy
            .validate(
                &case.request,
                &settings,
                ClusterState::from_json(&case.cluster).expect("cluster"),
            )
            .expect("answer");
        for call in calls {
            assert!(
                capabilities.contains(&format!("kubernetes/{}", call.operation)),
                "{}: host capability {} is not declared",
                case.name,
                call.operation
            );
            let api_version = call.payload["api_version"].as_str().unwrap_or_default();
            let kind = call.payload["kind"].as_str().unwrap_or_default();
            let lookup = match call.operation.as_str() {
                "get_resource" => Lookup::Get,
                _ => Lookup::List,
            };
            assert!(
                find(api_version, kind).is_some_and(|k| k.lookups.contains(&lookup)),
                "{}: {} of {api_version} {kind} is not in src/k8s/kinds.rs",
                case.name,
                call.operation
            );
            used.insert((api_version.to_string(), kind.to_string()));
            made.insert((api_version.to_string(), kind.to_string(), lookup));
        }
    }
    let table: BTreeSet<_> = ALL
        .iter()
        .flat_map(|k| {
            k.lookups
                .iter()
                .map(|l| (k.api_version.to_string(), k.kind.to_string(), *l))
        })
        .collect();
    let never: Vec<_> = table.difference(&made).collect();
    assert!(
        never.is_empty(),
        "lookups in src/k8s/kinds.rs that no case makes: {never:?}"
    );
    let undeclared: Vec<_> = used.difference(&declared).collect();
    assert!(
        undeclared.is_empty(),
        "looked up but not declared: {undeclared:?}"
    );
    let unused: Vec<_> = declared.difference(&used).collect();
    assert!(
        unused.is_empty(),
        "declared but never looked up by any case: {unused:?}"
    );
}
