//! The compiled `policy.wasm`, run in a real waPC host (wasmtime), with its
//! Kubernetes host calls answered from test data.
//!
//! Build the module first (`make policy.wasm`); `POLICY_WASM` overrides its path.

use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::OnceLock;
use testhost::case::{Case, case_files};
use testhost::cluster::{ClusterState, Failure};
use testhost::{HostCall, Policy, Verdict};

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn policy() -> &'static Policy {
    static POLICY: OnceLock<Policy> = OnceLock::new();
    POLICY.get_or_init(|| {
        let path = std::env::var_os("POLICY_WASM")
            .map_or_else(|| workspace().join("policy.wasm"), PathBuf::from);
        Policy::load(&path)
            .unwrap_or_else(|e| panic!("{e}: build it first with `make policy.wasm`"))
    })
}

/// The policy's answer to `request` with empty settings, and its host calls.
fn validate(request: &Value, cluster: ClusterState) -> (Verdict, Vec<HostCall>) {
    validate_with(request, &json!({}), cluster)
}

/// The policy's answer to `request` with these settings, and its host calls.
fn validate_with(
    request: &Value,
    settings: &Value,
    cluster: ClusterState,
) -> (Verdict, Vec<HostCall>) {
    policy()
        .validate(request, settings, cluster)
        .expect("answer")
}

/// The policy's answer when every lookup of `(apiVersion, kind)` in
/// `cluster` fails as `failure`: an answer, never a trap.
fn verdict_when_failing(
    request: &Value,
    settings: &Value,
    mut cluster: ClusterState,
    (api_version, kind): (&str, &str),
    failure: &Failure,
) -> Verdict {
    cluster.fail(api_version, kind, failure.clone());
    policy()
        .validate(request, settings, cluster)
        .unwrap_or_else(|e| panic!("{kind} {failure:?}: the policy did not answer: {e}"))
        .0
}

/// Asserts a 400 whose message starts with `prefix`; `context` names the
/// case in the failure's text.
fn assert_400(verdict: &Verdict, prefix: &str, context: &str) {
    let message = verdict.message.as_deref().unwrap_or_default();
    assert_eq!(verdict.code, Some(400), "{context}: {message}");
    assert!(message.starts_with(prefix), "{context}: {message}");
}

/// A rejection's code and message.
fn refusal(verdict: &Verdict) -> (Option<u16>, Option<&str>) {
    (verdict.code, verdict.message.as_deref())
}

/// The field masks of a Subnet read by name (I15's record included).
const SUBNET_BY_NAME_MASKS: &[&str] = &[
    "spec.cidrBlock",
    "spec.excludeIps",
    "spec.gateway",
    "status.v4usingIPrange",
    "status.v4usingIPs",
    "status.v6usingIPrange",
    "status.v6usingIPs",
];

/// The field masks of the IP lists.
const IP_MASKS: &[&str] = &[
    "spec.ipAddress",
    "spec.namespace",
    "spec.podName",
    "spec.subnet",
    "spec.v4IpAddress",
    "spec.v6IpAddress",
];

/// The field masks of the list of every IPPool.
const IPPOOL_MASKS: &[&str] = &["spec.ips", "spec.namespaces", "spec.subnet"];

/// The Pod and workload kinds: those whose IP lookups are narrowed.
const POD_AND_WORKLOAD_KINDS: &[&str] = &[
    "Pod",
    "Deployment",
    "StatefulSet",
    "DaemonSet",
    "Job",
    "CronJob",
];

/// Every public conformance case (`tests/conformance/`, copied from
/// `../shared/conformance/cases`) and every case of the project's own
/// (`tests/cases/`: kinds and checks the public cases leave out).
#[test]
fn conformance_cases() {
    let mut failures = Vec::new();
    let mut passed = 0;
    for dir in ["tests/conformance", "tests/cases"] {
        for file in case_files(&workspace().join(dir)).expect(dir) {
            let case = Case::load(&file).expect("case file");
            let expect = case.expect.clone().expect("expect");
            let verdict = case
                .run(policy())
                .unwrap_or_else(|e| panic!("{}: the policy did not answer: {e}", case.name));
            match expect.mismatch(&verdict) {
                None => passed += 1,
                Some(got) => failures.push(format!(
                    "{}: expected {}, got {got}",
                    case.name,
                    expect.describe()
                )),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failing cases:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(passed >= 217, "only {passed} cases ran");
}

fn pod(annotations: Value) -> Value {
    json!({
        "uid": "0001",
        "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "operation": "CREATE",
        "name": "app-1",
        "namespace": "default",
        "object": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "app-1", "namespace": "default", "annotations": annotations}},
    })
}

/// The policy's answer to a Pod with these annotations in [`cluster`].
fn validate_pod(annotations: Value) -> (Verdict, Vec<HostCall>) {
    validate(&pod(annotations), cluster())
}

fn cluster() -> ClusterState {
    ClusterState::from_json(&cluster_json()).expect("cluster")
}

fn cluster_json() -> Value {
    json!({
        "ips": [{
            "apiVersion": "kubeovn.io/v1", "kind": "IP",
            "metadata": {"name": "static-7584848b74-fw9dm.default", "labels": {"ovn.kubernetes.io/subnet": "ovn-default"}},
            "spec": {"podName": "static-7584848b74-fw9dm", "namespace": "default", "subnet": "ovn-default",
                     "ipAddress": "10.16.0.15", "v4IpAddress": "10.16.0.15", "v6IpAddress": "", "macAddress": "00:00:00:3a:5c:1e"}
        }],
        "subnets": [{
            "apiVersion": "kubeovn.io/v1", "kind": "Subnet", "metadata": {"name": "ovn-default"},
            "spec": {"default": true, "vpc": "ovn-cluster", "cidrBlock": "10.16.0.0/16", "gateway": "10.16.0.1"}
        }],
        "namespaces": [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}}],
        "ippools": [{"apiVersion": "kubeovn.io/v1", "kind": "IPPool", "metadata": {"name": "pool-a"}}],
    })
}

#[test]
fn seed_example_is_denied_with_upstreams_message() {
    let (verdict, calls) = validate(
        &pod(
            json!({"ovn.kubernetes.io/ip_address": "10.16.0.15", "ovn.kubernetes.io/logical_switch": "ovn-default"}),
        ),
        cluster(),
    );
    assert!(!verdict.accepted);
    assert_eq!(verdict.code, Some(403));
    assert_eq!(
        verdict.message.as_deref(),
        Some(
            "annotation static-ip 10.16.0.15 is conflict with ip crd static-7584848b74-fw9dm.default, ip 10.16.0.15"
        )
    );
    // The pod names its subnet: its name is looked for in the Vpcs' status
    // (this cluster has none) and found among every Subnet's, then the
    // Subnet (it has no record of what is in use, I15), then two narrow
    // lookups find the conflict: the IPs labelled with the subnet, and
    // those without the label.
    let ops: Vec<(&str, &str, &str)> = calls
        .iter()
        .map(|c| {
            (
                c.operation.as_str(),
                c.payload["kind"].as_str().unwrap_or_default(),
                c.payload["label_selector"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        ops,
        [
            ("list_resources_all", "Vpc", ""),
            ("list_resources_all", "Subnet", ""),
            ("list_resources_all", "Subnet", ""),
            (
                "list_resources_all",
                "IP",
                "ovn.kubernetes.io/subnet=ovn-default"
            ),
            ("list_resources_all", "IP", "!ovn.kubernetes.io/subnet"),
        ]
    );
    assert_eq!(calls[1].payload["field_selector"], Value::Null);
    assert_eq!(calls[1].payload["field_masks"], json!(["metadata"]));
    assert_eq!(
        calls[2].payload["field_selector"],
        json!("metadata.name=ovn-default")
    );
    for call in &calls[3..5] {
        assert_eq!(call.payload["field_masks"], json!(IP_MASKS));
    }
}

#[test]
fn a_free_address_is_admitted_after_looking_up_its_subnet() {
    let (verdict, calls) = validate_pod(json!({"ovn.kubernetes.io/ip_address": "10.16.0.16"}));
    assert!(verdict.accepted, "{verdict:?}");
    // The pod's Subnet is read once, for its record of what is in use (I15;
    // it has none) and for I6; the IPPool CRD, then every IPPool once, for
    // those reserved for other namespaces (I19).
    assert_eq!(
        operations(&calls),
        [
            "get_resource Namespace",
            "list_resources_all Subnet",
            "list_resources_all Vpc",
            "list_resources_all Subnet",
            "list_resources_all Subnet",
            "list_resources_all IP",
            "list_resources_all IP",
            "list_resources_all CustomResourceDefinition",
            "list_resources_all IPPool",
        ]
    );
    // The IPPool CRD by its name, as Kube-OVN ships it (no selectable
    // field): every IPPool.
    assert_eq!(
        calls[7].payload["field_selector"],
        json!("metadata.name=ippools.kubeovn.io")
    );
    assert_eq!(calls[8].payload["field_selector"], Value::Null);
    // The request's own Namespace by a GET (one API request, nothing kept
    // by the policy-server), I5's default from every Subnet, and the pod's
    // Subnet, once its name is found among every Subnet's, from a watch
    // cache narrowed to it.
    assert_eq!(calls[0].payload["name"], json!("default"));
    assert_eq!(calls[0].payload["disable_cache"], json!(true));
    assert_eq!(calls[3].payload["field_masks"], json!(["metadata"]));
    assert_eq!(
        calls[4].payload["field_selector"],
        json!("metadata.name=ovn-default")
    );
}

/// I15: [`cluster`] with ovn-default's record of what is in use (10.16.0.15
/// and 10.16.0.20), the pod `app-1`'s own IP object holding 10.16.0.20, and
/// a stale one holding 10.16.0.30, which the record does not show yet.
fn recorded_cluster() -> ClusterState {
    let mut state = cluster_json();
    state["subnets"][0]["status"] =
        json!({"v4usingIPs": 2, "v4usingIPrange": "10.16.0.15,10.16.0.20"});
    // kube-ovn-controller lists the VPC's Subnets in its status.
    state["vpcs"] = json!([{"apiVersion": "kubeovn.io/v1", "kind": "Vpc",
                             "metadata": {"name": "ovn-cluster"},
                             "status": {"default": true, "standby": true, "subnets": ["ovn-default"]}}]);
    for (name, pod, address) in [
        ("app-1.default", "app-1", "10.16.0.20"),
        ("stale.default", "stale", "10.16.0.30"),
    ] {
        state["ips"].as_array_mut().expect("ips").push(json!({
            "apiVersion": "kubeovn.io/v1", "kind": "IP",
            "metadata": {"name": name, "labels": {"ovn.kubernetes.io/subnet": "ovn-default"}},
            "spec": {"podName": pod, "namespace": "default", "subnet": "ovn-default",
                     "ipAddress": address, "v4IpAddress": address, "v6IpAddress": ""}
        }));
    }
    ClusterState::from_json(&state).expect("cluster")
}

#[test]
fn a_subnets_record_spares_the_ip_lookups() {
    let ask = |address: &str, settings: Value| {
        let (verdict, calls) = validate_with(
            &pod(
                json!({"ovn.kubernetes.io/ip_address": address, "ovn.kubernetes.io/logical_switch": "ovn-default"}),
            ),
            &settings,
            recorded_cluster(),
        );
        let ops: Vec<String> = calls
            .iter()
            .map(|c| {
                let what = c.payload["name"]
                    .as_str()
                    .or(c.payload["label_selector"].as_str())
                    .unwrap_or_default();
                format!(
                    "{} {} {what}",
                    c.operation,
                    c.payload["kind"].as_str().unwrap_or_default()
                )
            })
            .collect();
        (verdict, ops, calls)
    };
    // Free by the record: only the Subnet (its name found in the Vpc's
    // status, so every Subnet's metadata is not read), whose masks carry
    // the record, the IPPool CRD and every IPPool (I19: none reserves the
    // address).
    let (verdict, ops, calls) = ask("10.16.0.30", json!({}));
    assert!(verdict.accepted, "{verdict:?}");
    assert_eq!(
        ops,
        [
            "list_resources_all Vpc ",
            "list_resources_all Subnet ",
            "list_resources_all CustomResourceDefinition ",
            "list_resources_all IPPool "
        ]
    );
    assert_eq!(calls[1].payload["field_masks"], json!(SUBNET_BY_NAME_MASKS));
    // In use by the pod's own IP object: one GET, no IP list, and never
    // kept in the policy-server's cache of GETs (a name per pod).
    let (verdict, ops, calls) = ask("10.16.0.20", json!({}));
    assert!(verdict.accepted, "{verdict:?}");
    assert_eq!(
        ops,
        [
            "list_resources_all Vpc ",
            "list_resources_all Subnet ",
            "get_resource IP app-1.default",
            "list_resources_all CustomResourceDefinition ",
            "list_resources_all IPPool "
        ]
    );
    assert_eq!(calls[2].payload["namespace"], Value::Null);
    assert_eq!(calls[2].payload["disable_cache"], json!(true));
    // In use by another: the lists, and upstream's message.
    let (verdict, ops, _) = ask("10.16.0.15", json!({}));
    assert_eq!(
        verdict.message.as_deref(),
        Some(
            "annotation static-ip 10.16.0.15 is conflict with ip crd static-7584848b74-fw9dm.default, ip 10.16.0.15"
        )
    );
    assert_eq!(
        ops,
        [
            "list_resources_all Vpc ",
            "list_resources_all Subnet ",
            "get_resource IP app-1.default",
            "list_resources_all IP ovn.kubernetes.io/subnet=ovn-default",
            "list_resources_all IP !ovn.kubernetes.io/subnet",
        ]
    );
    // useSubnetStatus: false reads the IP objects, and sees the stale one.
    let (verdict, ops, _) = ask("10.16.0.30", json!({"useSubnetStatus": false}));
    assert_eq!(verdict.code, Some(403), "{verdict:?}");
    assert_eq!(
        ops,
        [
            "list_resources_all Vpc ",
            "list_resources_all IP ovn.kubernetes.io/subnet=ovn-default",
            "list_resources_all IP !ovn.kubernetes.io/subnet",
        ]
    );
}

#[test]
fn pods_without_static_ips_make_no_lookups() {
    let (verdict, calls) = validate_pod(json!({"ovn.kubernetes.io/mac_address": "nonsense"}));
    assert!(verdict.accepted);
    assert!(calls.is_empty(), "{calls:?}");
}

#[test]
fn ippool_name_is_found_among_every_ippool() {
    let (ok, calls) = validate_pod(json!({"ovn.kubernetes.io/ip_pool": "pool-a"}));
    assert!(ok.accepted, "{ok:?}");
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].operation, "list_resources_all");
    assert_eq!(calls[0].payload["kind"], "IPPool");
    assert_eq!(calls[0].payload["field_selector"], Value::Null);
    assert_eq!(calls[0].payload["field_masks"], json!(IPPOOL_MASKS));

    let (missing, _) = validate_pod(json!({"ovn.kubernetes.io/ip_pool": "pool-b"}));
    assert_eq!(
        (missing.accepted, missing.code, missing.message.as_deref()),
        (false, Some(403), Some("ippool \"pool-b\" not found"))
    );

    // Not a valid object name: it cannot exist, so it is not asked for.
    let (odd, calls) = validate_pod(json!({"ovn.kubernetes.io/ip_pool": "Pool B"}));
    assert_eq!(
        refusal(&odd),
        (Some(403), Some("ippool \"Pool B\" not found"))
    );
    assert!(calls.is_empty(), "{calls:?}");
}

#[test]
fn lookup_failures_are_400_rejections_naming_what_failed() {
    let request = pod(
        json!({"ovn.kubernetes.io/ip_address": "10.16.0.16", "ovn.kubernetes.io/logical_switch": "ovn-default"}),
    );
    let scripted: Vec<(Failure, &str)> = vec![
        (Failure::Error("connection refused".into()), "cannot list kubeovn.io/v1 IP: error invoking host capability kubernetes.list_resources_all: "),
        (Failure::Payload(b"not json".to_vec()), "cannot list kubeovn.io/v1 IP: error deserializing list all resources response: "),
        (
            Failure::Payload(br#"{"apiVersion":"kubeovn.io/v1","kind":"IpList","items":[]}"#.to_vec()),
            "cannot list kubeovn.io/v1 IP: error deserializing list all resources response: invalid value: string \"IpList\", expected IPList",
        ),
        (
            Failure::Payload(br#"{"apiVersion":"kubeovn.io/v1","kind":"IPList","items":[{"spec":{"ipAddress":7}}]}"#.to_vec()),
            "cannot list kubeovn.io/v1 IP: error deserializing list all resources response: items[0].spec.ipAddress: invalid type: integer `7`, expected a string at line 1 column 77",
        ),
    ];
    for (failure, want) in scripted {
        let verdict = verdict_when_failing(
            &request,
            &json!({}),
            cluster(),
            ("kubeovn.io/v1", "IP"),
            &failure,
        );
        assert!(!verdict.accepted, "{failure:?}");
        assert_400(&verdict, want, &format!("{failure:?}"));
    }

    let verdict = verdict_when_failing(
        &pod(json!({"ovn.kubernetes.io/ip_address": "10.16.0.16"})),
        &json!({}),
        cluster(),
        ("v1", "Namespace"),
        &Failure::Error("forbidden: cannot get namespaces".into()),
    );
    assert_400(
        &verdict,
        "cannot get v1 Namespace \"default\": ",
        "Namespace",
    );
}

#[test]
fn an_empty_ip_list_finds_no_conflict() {
    let mut cluster = cluster();
    cluster.fail(
        "kubeovn.io/v1",
        "IP",
        Failure::Payload(
            br#"{"apiVersion":"kubeovn.io/v1","kind":"IPList","metadata":{},"items":[]}"#.to_vec(),
        ),
    );
    let request = pod(
        json!({"ovn.kubernetes.io/ip_address": "10.16.0.15", "ovn.kubernetes.io/logical_switch": "ovn-default"}),
    );
    let (verdict, _) = validate(&request, cluster);
    assert!(verdict.accepted, "{verdict:?}");
}

#[test]
fn undecodable_input_is_a_400_rejection_not_a_trap() {
    let instance = policy().instance(cluster()).expect("instance");
    for payload in [&b"not json"[..], b"{}", b"{\"request\": 7}", b"\xff\xfe"] {
        let verdict = instance
            .validate_raw(payload)
            .expect("an answer, not a trap");
        assert!(!verdict.accepted);
        assert_eq!(verdict.code, Some(400));
        assert!(
            verdict
                .message
                .unwrap_or_default()
                .starts_with("cannot decode the validation request: ")
        );
    }
    let mut request = pod(json!({}));
    request["object"]["metadata"]["annotations"] =
        json!(["ovn.kubernetes.io/ip_address=10.16.0.5"]);
    let verdict = instance.validate(&request, &json!({})).expect("answer");
    assert_eq!(verdict.code, Some(400));
    assert!(verdict.message.unwrap_or_default().starts_with(
        "cannot decode Pod object: metadata.annotations: invalid type: sequence, expected a map"
    ));

    request["object"] = Value::Null;
    let verdict = instance.validate(&request, &json!({})).expect("answer");
    assert_eq!(
        refusal(&verdict),
        (Some(400), Some("there is no content to decode"))
    );

    // A value of the wrong type is named by its path; a text that is not
    // JSON by its line and column.
    let subnet = subnet_create("s", json!({"cidrBlock": 7}));
    let verdict = instance.validate(&subnet, &json!({})).expect("answer");
    assert_eq!(
        refusal(&verdict),
        (
            Some(400),
            Some(
                "cannot decode Subnet object: spec.cidrBlock: invalid type: integer `7`, expected a string at line 1 column 91"
            )
        )
    );
    let verdict = instance
        .validate_raw(br#"{"request": {"kind": {"kind": "Pod"}, "operation": "CREATE",}}"#)
        .expect("answer");
    assert_eq!(
        refusal(&verdict),
        (
            Some(400),
            Some("cannot decode the validation request: trailing comma at line 1 column 61")
        )
    );
}

#[test]
fn other_kinds_and_operations_are_accepted() {
    // A Pod UPDATE after which kube-ovn-controller allocates nothing (I18):
    // decided with no lookup.
    let mut request = pod(json!({
        "ovn.kubernetes.io/ip_address": "10.16.0.15",
        "ovn.kubernetes.io/allocated": "true"
    }));
    request["operation"] = json!("UPDATE");
    let (verdict, calls) = validate(&request, cluster());
    assert!(verdict.accepted && calls.is_empty());
    request["operation"] = json!("CREATE");
    request["kind"] = json!({"group": "", "version": "v1", "kind": "Service"});
    let (verdict, calls) = validate(&request, cluster());
    assert!(verdict.accepted && calls.is_empty());
}

#[test]
fn settings_are_validated_with_the_field_named() {
    let cases = [
        (json!({}), None),
        (json!(null), None),
        (
            json!({"defaultVpc": "vpc-a", "kubernetesServiceIP": "10.96.0.1,fd00:10:96::1"}),
            None,
        ),
        (
            json!({"defaultVpc": "Bad Name"}),
            Some("defaultVpc: \"Bad Name\" is not a valid Vpc name"),
        ),
        (
            json!({"kubernetesServiceIP": "10.96.0.300"}),
            Some("kubernetesServiceIP: \"10.96.0.300\" is not an IP address"),
        ),
        (
            json!({"kubernetesServiceIp": "10.96.0.1"}),
            Some("settings are not valid: unknown field `kubernetesServiceIp`"),
        ),
        (
            json!({"defaultVpc": 3}),
            Some("defaultVpc: expected a string, got 3"),
        ),
    ];
    for (settings, want) in cases {
        let verdict = policy().validate_settings(&settings).expect("answer");
        match want {
            None => assert!(verdict.valid, "{settings}: {verdict:?}"),
            Some(prefix) => {
                assert!(!verdict.valid, "{settings}");
                let message = verdict.message.unwrap_or_default();
                assert!(message.starts_with(prefix), "{settings}: {message}");
            }
        }
    }
}

fn subnet_request(operation: &str, object: Value, old_object: Value) -> Value {
    json!({
        "uid": "0002",
        "kind": {"group": "kubeovn.io", "version": "v1", "kind": "Subnet"},
        "resource": {"group": "kubeovn.io", "version": "v1", "resource": "subnets"},
        "operation": operation,
        "name": object["metadata"]["name"].as_str().or(old_object["metadata"]["name"].as_str()),
        "object": object,
        "oldObject": old_object,
    })
}

/// A CREATE of the Subnet `name` with this spec.
fn subnet_create(name: &str, spec: Value) -> Value {
    subnet_request("CREATE", new_subnet(name, spec), Value::Null)
}

fn new_subnet(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "kubeovn.io/v1", "kind": "Subnet", "metadata": {"name": name}, "spec": spec})
}

fn operations(calls: &[HostCall]) -> Vec<String> {
    calls
        .iter()
        .map(|c| {
            format!(
                "{} {}",
                c.operation,
                c.payload["kind"].as_str().unwrap_or_default()
            )
        })
        .collect()
}

#[test]
fn subnet_create_lists_subnets_and_vpcs_with_field_masks() {
    let request = subnet_create(
        "app",
        json!({"vpc": "ovn-cluster", "cidrBlock": "10.17.0.0/24"}),
    );
    let (verdict, calls) = validate_with(
        &request,
        &json!({"kubernetesServiceIP": "10.96.0.1"}),
        cluster(),
    );
    assert!(verdict.accepted, "{verdict:?}");
    assert_eq!(
        operations(&calls),
        ["list_resources_all Subnet", "list_resources_all Vpc"]
    );
    assert_eq!(
        calls[0].payload["field_masks"],
        json!([
            "spec.cidrBlock",
            "spec.default",
            "spec.externalEgressGateway",
            "spec.gateway",
            "spec.namespaces",
            "spec.policyRoutingTableID",
            "spec.provider",
            "spec.vlan",
            "spec.vpc"
        ])
    );
    assert_eq!(
        calls[1].payload["field_masks"],
        json!([
            "spec.namespaces",
            "status.default",
            "status.standby",
            "status.subnets"
        ])
    );

    // Overlap with ovn-default, whose vpc is set, while the new one's is empty (I8).
    let request = subnet_create("app", json!({"cidrBlock": "10.16.8.0/24"}));
    let (verdict, calls) = validate_with(
        &request,
        &json!({"kubernetesServiceIP": "10.96.0.1"}),
        cluster(),
    );
    assert_eq!(
        (verdict.accepted, verdict.code, verdict.message.as_deref()),
        (
            false,
            Some(409),
            Some(
                "subnet app cidr 10.16.8.0/24 is conflict with subnet ovn-default cidr 10.16.0.0/16"
            )
        )
    );
    assert_eq!(operations(&calls), ["list_resources_all Subnet"]);
}

#[test]
fn subnet_apiserver_address_comes_from_the_kubernetes_service() {
    let mut with_service = cluster();
    with_service
        .push(
            "services",
            json!({"apiVersion": "v1", "kind": "Service",
                   "metadata": {"name": "kubernetes", "namespace": "default"},
                   "spec": {"clusterIP": "10.96.0.1", "clusterIPs": ["10.96.0.1"]}}),
        )
        .expect("service");
    let request = subnet_create("svc", json!({"cidrBlock": "10.96.0.0/24"}));
    let (verdict, calls) = validate(&request, with_service);
    assert_eq!(
        refusal(&verdict),
        (
            Some(403),
            Some("subnet svc cidr 10.96.0.0/24 conflicts with k8s apiserver svc ip 10.96.0.1")
        )
    );
    assert_eq!(operations(&calls), ["get_resource Service"]);
    assert_eq!(calls[0].payload["namespace"], "default");
    assert_eq!(calls[0].payload["name"], "kubernetes");

    // The Service lookup failing is a 400 naming what could not be read.
    let forbidden = Failure::Error("forbidden".into());
    let verdict = verdict_when_failing(
        &request,
        &json!({}),
        cluster(),
        ("v1", "Service"),
        &forbidden,
    );
    assert_400(
        &verdict,
        "cannot get v1 Service \"default/kubernetes\": ",
        "Service",
    );
}

#[test]
fn subnet_list_failures_are_400_rejections() {
    let request = subnet_create(
        "app",
        json!({"vpc": "ovn-cluster", "cidrBlock": "10.17.0.0/24"}),
    );
    for (api_version, kind) in [("kubeovn.io/v1", "Subnet"), ("kubeovn.io/v1", "Vpc")] {
        for failure in [
            Failure::Error("connection refused".into()),
            Failure::Payload(b"{".to_vec()),
            Failure::Payload(
                format!(r#"{{"apiVersion":"{api_version}","kind":"List","items":[]}}"#)
                    .into_bytes(),
            ),
        ] {
            let settings = json!({"kubernetesServiceIP": "10.96.0.1"});
            let verdict = verdict_when_failing(
                &request,
                &settings,
                cluster(),
                (api_version, kind),
                &failure,
            );
            let prefix = format!("cannot list {api_version} {kind}: ");
            assert_400(&verdict, &prefix, &format!("{kind} {failure:?}"));
        }
    }
}

#[test]
fn subnet_delete_reads_only_the_old_object() {
    let old = json!({"apiVersion": "kubeovn.io/v1", "kind": "Subnet", "metadata": {"name": "app"},
                     "spec": {"cidrBlock": "10.17.0.0/24"}, "status": {"v4usingIPs": "2", "v6usingIPs": 0}});
    let (verdict, calls) = validate(
        &subnet_request("DELETE", Value::Null, old.clone()),
        cluster(),
    );
    assert_eq!(
        refusal(&verdict),
        (Some(403), Some("can't delete subnet when any IPs in Using"))
    );
    assert!(calls.is_empty(), "{calls:?}");
    let mut free = old;
    free["status"]["v4usingIPs"] = json!(0);
    let (verdict, _) = validate(&subnet_request("DELETE", Value::Null, free), cluster());
    assert!(verdict.accepted, "{verdict:?}");
    let (verdict, _) = validate(
        &subnet_request("DELETE", Value::Null, Value::Null),
        cluster(),
    );
    assert_eq!(
        refusal(&verdict),
        (Some(400), Some("there is no content to decode"))
    );
}

#[test]
fn an_ippool_reads_its_subnet_by_name_and_every_pool_once() {
    let pool = |ips: Value| {
        json!({"apiVersion": "kubeovn.io/v1", "kind": "IPPool", "metadata": {"name": "pool-b"},
               "spec": {"subnet": "ovn-default", "ips": ips}})
    };
    let request = json!({
        "uid": "0005",
        "kind": {"group": "kubeovn.io", "version": "v1", "kind": "IPPool"},
        "operation": "CREATE",
        "name": "pool-b",
        "object": pool(json!(["10.16.1.1..10.16.1.9", "fd00::/64"])),
    });
    let (verdict, calls) = validate(&request, cluster());
    assert!(verdict.accepted, "{verdict:?}");
    assert_eq!(
        verdict.warnings,
        Some(vec![
            "ippool pool-b: fd00::-fd00::ffff:ffff:ffff:ffff never allocated: outside subnet \
             ovn-default cidr 10.16.0.0/16"
                .to_string()
        ])
    );
    assert_eq!(
        operations(&calls),
        [
            "list_resources_all Vpc",
            "list_resources_all Subnet",
            "list_resources_all Subnet",
            "list_resources_all IPPool"
        ]
    );
    assert_eq!(
        calls[2].payload["field_selector"],
        "metadata.name=ovn-default"
    );
    // Every pool, one watch cache whatever the pool or subnet asked about.
    assert_eq!(calls[3].payload["label_selector"], Value::Null);
    assert_eq!(calls[3].payload["field_selector"], Value::Null);
    assert_eq!(calls[3].payload["field_masks"], json!(IPPOOL_MASKS));

    // An UPDATE that leaves spec.ips alone looks nothing up.
    let mut update = request.clone();
    update["operation"] = json!("UPDATE");
    update["oldObject"] = pool(json!(["10.16.1.1..10.16.1.9", "fd00::/64"]));
    let (verdict, calls) = validate(&update, cluster());
    assert!(
        verdict.accepted && verdict.warnings.is_none(),
        "{verdict:?}"
    );
    assert!(calls.is_empty(), "{calls:?}");
}

#[test]
fn vip_and_ip_get_their_subnet_by_name() {
    let vip = json!({
        "uid": "0003",
        "kind": {"group": "kubeovn.io", "version": "v1", "kind": "Vip"},
        "operation": "CREATE",
        "name": "vip-a",
        "object": {"apiVersion": "kubeovn.io/v1", "kind": "Vip", "metadata": {"name": "vip-a"},
                   "spec": {"subnet": "ovn-default", "v4ip": "10.16.0.200"}},
    });
    let (verdict, calls) = validate(&vip, cluster());
    assert!(verdict.accepted, "{verdict:?}");
    // The name is looked for in the Vpcs' status (none here) and found
    // among every Subnet's, then read from a watch cache narrowed to it.
    assert_eq!(
        operations(&calls),
        [
            "list_resources_all Vpc",
            "list_resources_all Subnet",
            "list_resources_all Subnet"
        ]
    );
    assert_eq!(calls[1].payload["field_selector"], Value::Null);
    assert_eq!(calls[1].payload["field_masks"], json!(["metadata"]));
    assert_eq!(
        calls[2].payload["field_selector"],
        "metadata.name=ovn-default"
    );
    // One mask set for every Subnet by name, I15's record included, so
    // each name keeps one watch cache.
    assert_eq!(calls[2].payload["field_masks"], json!(SUBNET_BY_NAME_MASKS));

    // A subnet that does not exist: no watch cache narrowed to its name.
    let mut missing = vip.clone();
    missing["object"]["spec"]["subnet"] = json!("abc");
    let (verdict, calls) = validate(&missing, cluster());
    assert_eq!(
        refusal(&verdict),
        (Some(400), Some("Subnet.kubeovn.io \"abc\" not found"))
    );
    assert_eq!(
        operations(&calls),
        ["list_resources_all Vpc", "list_resources_all Subnet"]
    );
    assert_eq!(calls[1].payload["field_selector"], Value::Null);

    // Not a valid object name: it cannot exist, and it is not asked for.
    let mut odd = vip;
    odd["object"]["spec"]["subnet"] = json!("Sub Net");
    let (verdict, calls) = validate(&odd, cluster());
    assert_eq!(
        refusal(&verdict),
        (Some(400), Some("Subnet.kubeovn.io \"Sub Net\" not found"))
    );
    assert!(calls.is_empty(), "{calls:?}");

    let ip = json!({
        "uid": "0004",
        "kind": {"group": "kubeovn.io", "version": "v1", "kind": "IP"},
        "operation": "UPDATE",
        "name": "web-0.default",
        "object": {"apiVersion": "kubeovn.io/v1", "kind": "IP", "metadata": {"name": "web-0.default"},
                   "spec": {"subnet": "ovn-default", "podName": "web-0", "namespace": "default", "v4IpAddress": "10.16.0.9"}},
        "oldObject": {"apiVersion": "kubeovn.io/v1", "kind": "IP", "metadata": {"name": "web-0.default"},
                   "spec": {"subnet": "ovn-default", "podName": "web-0", "namespace": "default", "v4IpAddress": "10.16.0.8"}},
    });
    let (verdict, _) = validate(&ip, cluster());
    assert_eq!(
        refusal(&verdict),
        (
            Some(400),
            Some("ip web-0.default v4IPAddress can not change")
        )
    );
}

/// The narrowed IP lookups (by the subnet label, plus the unlabelled IPs)
/// find what the full list finds: every Pod and workload case gives the same
/// answer when no IP CR carries the label, and when the host ignores label
/// selectors altogether.
#[test]
fn narrowed_ip_lookups_find_every_conflict_the_full_list_finds() {
    let mut compared = 0;
    for file in case_files(&workspace().join("tests/conformance")).expect("cases") {
        let case = Case::load(&file).expect("case");
        let kind = case.request["kind"]["kind"].as_str().unwrap_or_default();
        if !POD_AND_WORKLOAD_KINDS.contains(&kind) {
            continue;
        }
        let (narrow, _) = validate(
            &case.request,
            ClusterState::from_json(&case.cluster).expect("cluster"),
        );
        let mut unlabelled = ClusterState::from_json(&case.cluster).expect("cluster");
        unlabelled.strip_labels("ips");
        let (without_labels, _) = validate(&case.request, unlabelled);
        assert_eq!(narrow, without_labels, "{}", case.name);
        compared += 1;
    }
    assert!(compared >= 60, "only {compared} cases compared");

    // A subnet name too long for a label value: the whole list is read.
    let long = "s".repeat(70);
    let mut cluster = ClusterState::default();
    cluster
        .push(
            "ips",
            json!({"apiVersion": "kubeovn.io/v1", "kind": "IP", "metadata": {"name": "other.default"},
                   "spec": {"podName": "other", "namespace": "default", "subnet": long, "ipAddress": "10.9.0.5", "v4IpAddress": "10.9.0.5"}}),
        )
        .expect("ip");
    let (verdict, calls) = validate(
        &pod(
            json!({"ovn.kubernetes.io/ip_address": "10.9.0.5", "ovn.kubernetes.io/logical_switch": long}),
        ),
        cluster,
    );
    assert_eq!(
        verdict.message.as_deref(),
        Some("annotation static-ip 10.9.0.5 is conflict with ip crd other.default, ip 10.9.0.5")
    );
    assert_eq!(calls[0].payload["label_selector"], Value::Null);
}

/// Every lookup, failing every way a host can fail, is a 400 that names
/// what could not be read; never a trap, never an accept.
#[test]
fn every_lookup_failure_is_a_400_naming_the_lookup() {
    let with_ns = |annotations: Value| pod(annotations);
    let subnet_create = subnet_create("app", json!({"cidrBlock": "10.17.0.0/24"}));
    let vpc_delete = json!({
        "uid": "0005", "kind": {"group": "kubeovn.io", "version": "v1", "kind": "Vpc"},
        "operation": "DELETE", "name": "vpc-a",
        "oldObject": {"apiVersion": "kubeovn.io/v1", "kind": "Vpc", "metadata": {"name": "vpc-a"}, "status": {"subnets": []}},
    });
    let vip_create = json!({
        "uid": "0006", "kind": {"group": "kubeovn.io", "version": "v1", "kind": "Vip"},
        "operation": "CREATE", "name": "vip-a",
        "object": {"apiVersion": "kubeovn.io/v1", "kind": "Vip", "metadata": {"name": "vip-a"}, "spec": {"subnet": "ovn-default"}},
    });
    // (request, apiVersion, kind, how the message starts)
    let lookups: Vec<(Value, &str, &str, &str)> = vec![
        (
            with_ns(
                json!({"ovn.kubernetes.io/ip_address": "10.16.0.16", "ovn.kubernetes.io/logical_switch": "ovn-default"}),
            ),
            "kubeovn.io/v1",
            "IP",
            "cannot list kubeovn.io/v1 IP: ",
        ),
        (
            with_ns(json!({"ovn.kubernetes.io/ip_address": "10.16.0.16"})),
            "v1",
            "Namespace",
            "cannot get v1 Namespace \"default\": ",
        ),
        (
            with_ns(json!({"ovn.kubernetes.io/ip_pool": "pool-a"})),
            "kubeovn.io/v1",
            "IPPool",
            "cannot get kubeovn.io/v1 IPPool \"pool-a\": ",
        ),
        (
            with_ns(
                json!({"ovn.kubernetes.io/ip_address": "10.16.0.16", "ovn.kubernetes.io/logical_switch": "ovn-default"}),
            ),
            "kubeovn.io/v1",
            "Subnet",
            "cannot get kubeovn.io/v1 Subnet \"ovn-default\": ",
        ),
        (
            subnet_create.clone(),
            "kubeovn.io/v1",
            "Subnet",
            "cannot list kubeovn.io/v1 Subnet: ",
        ),
        (
            subnet_create.clone(),
            "kubeovn.io/v1",
            "Vpc",
            "cannot list kubeovn.io/v1 Vpc: ",
        ),
        (
            subnet_create,
            "v1",
            "Service",
            "cannot get v1 Service \"default/kubernetes\": ",
        ),
        (
            vpc_delete.clone(),
            "kubeovn.io/v1",
            "OvnDnatRule",
            "cannot list kubeovn.io/v1 OvnDnatRule: ",
        ),
        (
            vpc_delete.clone(),
            "kubeovn.io/v1",
            "OvnSnatRule",
            "cannot list kubeovn.io/v1 OvnSnatRule: ",
        ),
        (
            vpc_delete,
            "kubeovn.io/v1",
            "OvnFip",
            "cannot list kubeovn.io/v1 OvnFip: ",
        ),
        (
            vip_create,
            "kubeovn.io/v1",
            "Subnet",
            "cannot get kubeovn.io/v1 Subnet \"ovn-default\": ",
        ),
    ];
    let failures = |kind: &str| -> Vec<Failure> {
        vec![
            Failure::Error("connection refused".into()),
            Failure::Payload(Vec::new()),
            Failure::Payload(b"not json".to_vec()),
            Failure::Payload(b"[1, 2]".to_vec()),
            Failure::Payload(b" null ".to_vec()),
            Failure::Payload(b"{}".to_vec()),
            Failure::Payload(br#"{"kind": "WrongList", "items": []}"#.to_vec()),
            Failure::Payload(
                format!(r#"{{"kind": "{kind}List", "items": [{{"metadata": 7}}]}}"#).into_bytes(),
            ),
            Failure::Payload(br#"{"metadata": {"name": 7}}"#.to_vec()),
            Failure::Payload(b"\xff\xfe\x00".to_vec()),
        ]
    };
    let mut checked = 0;
    for (request, api_version, kind, prefix) in &lookups {
        for failure in failures(kind) {
            let verdict = verdict_when_failing(
                request,
                &json!({}),
                cluster(),
                (api_version, kind),
                &failure,
            );
            // A single object may come without its type: `{}` reads as an
            // empty object of the kind asked for, and of an IPPool only its
            // existence is read. Everything else rejects.
            if verdict.accepted && prefix.starts_with("cannot get ") {
                assert!(
                    matches!(&failure, Failure::Payload(p)
                        if p == b"{}" || (*kind == "IPPool" && p.starts_with(b"{\"metadata\""))),
                    "{kind} {failure:?}: accepted"
                );
                continue;
            }
            assert!(!verdict.accepted, "{kind} {failure:?}: accepted");
            assert_400(&verdict, prefix, &format!("{kind} {failure:?}"));
            checked += 1;
        }
    }
    assert!(
        checked >= lookups.len() * 8,
        "only {checked} failures checked"
    );
}

/// The NAT gateway kinds' lookups, failing every way, are 400s naming the lookup.
#[test]
fn every_nat_lookup_failure_is_a_400_naming_the_lookup() {
    let case = |name: &str| Case::load(&workspace().join("tests/cases").join(name)).expect("case");
    // (case, apiVersion, kind, how the message starts)
    let lookups = [
        (
            "n14-iptables-dnat-share-conflicts-with-exclusive.json",
            "v1",
            "ConfigMap",
            "cannot get v1 ConfigMap \"kube-system/ovn-vpc-nat-config\": ",
        ),
        (
            "n14-iptables-dnat-share-conflicts-with-exclusive.json",
            "kubeovn.io/v1",
            "IptablesEIP",
            "cannot get kubeovn.io/v1 IptablesEIP \"eip-a\": ",
        ),
        (
            "n14-iptables-dnat-share-conflicts-with-exclusive.json",
            "kubeovn.io/v1",
            "IptablesDnatRule",
            "cannot list kubeovn.io/v1 IptablesDnatRule: ",
        ),
        (
            "n16-iptables-dnat-eip-used-by-fip.json",
            "kubeovn.io/v1",
            "IptablesFIPRule",
            "cannot list kubeovn.io/v1 IptablesFIPRule: ",
        ),
        (
            "n07-iptables-eip-delete-ready-unused.json",
            "kubeovn.io/v1",
            "IptablesSnatRule",
            "cannot list kubeovn.io/v1 IptablesSnatRule: ",
        ),
        (
            "n20-natgw-create-qos-policy-present.json",
            "kubeovn.io/v1",
            "Vpc",
            "cannot get kubeovn.io/v1 Vpc \"vpc-a\": ",
        ),
        (
            "n20-natgw-create-qos-policy-present.json",
            "kubeovn.io/v1",
            "QoSPolicy",
            "cannot get kubeovn.io/v1 QoSPolicy \"qos-a\": ",
        ),
        (
            "n23-natgw-delete-with-eip.json",
            "kubeovn.io/v1",
            "IptablesEIP",
            "cannot list kubeovn.io/v1 IptablesEIP: ",
        ),
    ];
    for (file, api_version, kind, prefix) in lookups {
        let case = case(file);
        for failure in [
            Failure::Error("connection refused".into()),
            Failure::Payload(b"not json".to_vec()),
            Failure::Payload(br#"{"kind": "WrongList", "items": [], "apiVersion": "v1"}"#.to_vec()),
        ] {
            let cluster = ClusterState::from_json(&case.cluster).expect("cluster");
            let verdict = verdict_when_failing(
                &case.request,
                &json!({}),
                cluster,
                (api_version, kind),
                &failure,
            );
            assert!(!verdict.accepted, "{file} {kind} {failure:?}: accepted");
            assert_400(&verdict, prefix, &format!("{file} {kind} {failure:?}"));
        }
    }
}
