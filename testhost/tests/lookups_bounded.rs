//! CONTRACT §4, bounded by what exists: whatever a request names, the
//! module as built asks the policy-server only for lists it keeps anyway
//! (every object of a kind) or narrowed to an object that exists, and puts
//! no name taken from a request in the policy-server's cache of GETs. The
//! policy-server keeps one watch cache per distinct list and, in Kubewarden
//! 1.37, every GET's name for its lifetime, so anything else here would grow
//! it with each request (e2e/suites/test_cluster.py's `adversary` test counts the
//! watches on a real API server).

use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::PathBuf;
use testhost::bench::{
    deployment_request, pod_address, pod_cluster, pod_request, selectable_ippool_crd, subnet_name,
};
use testhost::cluster::ClusterState;
use testhost::{HostCall, Policy};

fn policy() -> Policy {
    let wasm = std::env::var_os("POLICY_WASM").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../policy.wasm"),
        PathBuf::from,
    );
    Policy::load(&wasm).expect("build it first with `make policy.wasm`")
}

/// Ten subnets of 100 IP objects, a namespace and an IPPool, and the IPPool
/// CRD making `spec.subnet` selectable (so a subnet's IPPools are a list
/// narrowed to it).
fn cluster() -> ClusterState {
    let mut cluster = pod_cluster(1_000, 10).expect("cluster");
    cluster
        .push(
            "namespaces",
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}}),
        )
        .expect("namespace");
    cluster
        .push(
            "ippools",
            json!({"apiVersion": "kubeovn.io/v1", "kind": "IPPool", "metadata": {"name": "pool-a"},
                   "spec": {"subnet": subnet_name(0), "ips": [pod_address(0, 500).to_string()]}}),
        )
        .expect("ippool");
    cluster
        .push(
            "networkattachmentdefinitions",
            json!({"apiVersion": "k8s.cni.cncf.io/v1", "kind": "NetworkAttachmentDefinition",
                   "metadata": {"name": "real-nad", "namespace": "default"},
                   "spec": {"config": r#"{"cniVersion":"0.3.0","type":"kube-ovn","provider":"real-nad.default.ovn"}"#}}),
        )
        .expect("nad");
    cluster
        .push("customresourcedefinitions", selectable_ippool_crd())
        .expect("crd");
    cluster
}

/// The adversary's requests: invented subnets, pools, namespaces and
/// attachments, and a few real names among them.
fn requests() -> Vec<Value> {
    let mut requests = Vec::new();
    for i in 0..20 {
        let free = pod_address(0, 900 + i).to_string();
        requests.push(pod_request(json!({
            "ovn.kubernetes.io/logical_switch": format!("invented-{i}"),
            "ovn.kubernetes.io/ip_address": free,
        })));
        requests.push(pod_request(
            json!({"ovn.kubernetes.io/ip_pool": format!("pool-{i}")}),
        ));
        requests.push(deployment_request(json!({
            "ovn.kubernetes.io/logical_switch": format!("invented-{i}"),
            "ovn.kubernetes.io/ip_pool": format!("pool-{i}"),
        })));
        // A pod in a namespace that does not exist, naming no subnet (I5).
        let mut pod =
            pod_request(json!({"ovn.kubernetes.io/ip_address": pod_address(0, 950).to_string()}));
        pod["namespace"] = json!(format!("ns-{i}"));
        pod["object"]["metadata"]["namespace"] = json!(format!("ns-{i}"));
        requests.push(pod);
    }
    // Thousands of attachments, each naming a subnet of its own.
    let mut attachments = serde_json::Map::new();
    for i in 0..3_000 {
        attachments.insert(
            format!("n{i}.x.kubernetes.io/ip_address"),
            json!("10.99.0.1"),
        );
        attachments.insert(
            format!("n{i}.x.kubernetes.io/logical_switch"),
            json!(format!("s{i}")),
        );
        attachments.insert(
            format!("n{i}.x.kubernetes.io/ip_pool"),
            json!(format!("p{i}")),
        );
    }
    requests.push(pod_request(Value::Object(attachments)));
    // Thousands of network selections (I17): invented NADs in invented
    // namespaces, and one real NAD selected again and again.
    let invented: Vec<Value> = (0..3_000)
        .map(|i| json!({"name": format!("nad-{i}"), "namespace": format!("ns-{i}"), "ips": ["10.99.0.1"]}))
        .collect();
    requests.push(pod_request(
        json!({"k8s.v1.cni.cncf.io/networks": Value::Array(invented).to_string()}),
    ));
    let real: Vec<Value> = (0..3_000)
        .map(|i| json!({"name": "real-nad", "interface": format!("net{i}"), "ips": ["10.99.0.1"]}))
        .collect();
    requests.push(pod_request(
        json!({"k8s.v1.cni.cncf.io/networks": Value::Array(real).to_string()}),
    ));
    // Real names too: the pod's own subnet, and the pool.
    requests.push(pod_request(json!({
        "ovn.kubernetes.io/logical_switch": subnet_name(3),
        "ovn.kubernetes.io/ip_address": pod_address(3, 10).to_string(),
    })));
    requests.push(pod_request(json!({"ovn.kubernetes.io/ip_pool": "pool-a"})));
    requests
}

/// A list request as the policy-server keys its watch caches.
fn list_key(call: &HostCall) -> String {
    let p = &call.payload;
    format!(
        "{} {} label={} field={} masks={}",
        p["api_version"], p["kind"], p["label_selector"], p["field_selector"], p["field_masks"]
    )
}

#[test]
fn lists_are_kind_wide_or_narrowed_to_what_exists() {
    let policy = policy();
    let cluster = cluster();
    let subnets: BTreeSet<String> = (0..10).map(subnet_name).collect();
    let mut lists = BTreeSet::new();
    let mut offenders = Vec::new();
    let mut gets = Vec::new();
    let mut answered = 0;
    for request in requests() {
        let instance = policy.instance(cluster.clone()).expect("instance");
        instance.set_call_log(true);
        instance
            .validate(&request, &json!({}))
            .expect("an answer, not a trap");
        answered += 1;
        for call in instance.take_calls() {
            let p = &call.payload;
            match call.operation.as_str() {
                "list_resources_all" | "list_resources_by_namespace" => {
                    let narrowed_to = |prefix: &str, selector: &Value| {
                        selector
                            .as_str()
                            .and_then(|s| s.strip_prefix(prefix))
                            .map(str::to_string)
                    };
                    let by_name = narrowed_to("metadata.name=", &p["field_selector"]);
                    let by_subnet = narrowed_to("ovn.kubernetes.io/subnet=", &p["label_selector"])
                        .or_else(|| narrowed_to("spec.subnet=", &p["field_selector"]));
                    let exists = match (p["kind"].as_str(), by_name, by_subnet) {
                        (_, None, None) => true,
                        (Some("Subnet"), Some(name), None) => subnets.contains(&name),
                        (Some("IP" | "IPPool"), None, Some(subnet)) => subnets.contains(&subnet),
                        // The one CRD read, by its fixed name.
                        (Some("CustomResourceDefinition"), Some(name), None) => {
                            name == "ippools.kubeovn.io"
                        }
                        _ => false,
                    };
                    let other_label = p["label_selector"].as_str().is_some_and(|s| {
                        !s.starts_with("ovn.kubernetes.io/subnet=")
                            && s != "!ovn.kubernetes.io/subnet"
                    });
                    if !exists || other_label {
                        offenders.push(list_key(&call));
                    }
                    lists.insert(list_key(&call));
                }
                "get_resource" => gets.push(p.clone()),
                other => panic!("unexpected host call {other}"),
            }
        }
    }
    println!("{answered} requests, {} distinct lists:", lists.len());
    for list in &lists {
        println!("  {list}");
    }
    assert_eq!(
        offenders,
        Vec::<String>::new(),
        "lists narrowed to what does not exist"
    );
    // Every IP list is by an existing subnet, without the label, or whole;
    // Subnet lists: every Subnet, and the one subnet named that exists;
    // every Vpc (whose status names its Subnets), every IPPool, Namespace
    // and NetworkAttachmentDefinition (I17); the IPPool CRD, and the
    // IPPools of each subnet that exists that an address was checked in.
    assert!(lists.len() <= 13, "{lists:#?}");
    // I15's own-IP GETs are per pod, I5's Namespace the request's: never
    // cached by the policy-server.
    for get in &gets {
        assert_eq!(get["disable_cache"], json!(true), "{get}");
    }
}
