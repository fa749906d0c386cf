//! Large inputs stay bounded: each decision finishes, answers, and prints
//! what it took (`cargo test --test bounds -- --nocapture` shows the figures).

use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use testhost::bench::{CachedCluster, pod_address, pod_cluster, pod_request, subnet_name};
use testhost::cluster::ClusterState;
use testhost::{Backend, Policy, Verdict};

fn policy() -> Policy {
    let wasm = std::env::var_os("POLICY_WASM").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../policy.wasm"),
        PathBuf::from,
    );
    Policy::load(&wasm).expect("build it first with `make policy.wasm`")
}

/// Decides in a fresh instance, as the policy-server does, with the host's
/// answers already in memory (as its watch caches hold them); the answer and
/// the time the decision took.
fn decide(policy: &Policy, annotations: Value, cluster: ClusterState) -> (Verdict, Duration) {
    let request = pod_request(annotations);
    let cluster = Arc::new(CachedCluster::new(cluster));
    let first = policy
        .instance(Backend::Shared(cluster.clone()))
        .expect("instance")
        .validate(&request, &json!({}))
        .expect("an answer, not a trap");
    let instance = policy.instance(Backend::Shared(cluster)).expect("instance");
    instance.set_call_log(false);
    let start = Instant::now();
    let verdict = instance
        .validate(&request, &json!({}))
        .expect("an answer, not a trap");
    let took = start.elapsed();
    assert_eq!(first, verdict);
    (verdict, took)
}

/// Far above what these take; below what would hang an admission.
const LIMIT: Duration = Duration::from_secs(10);

#[test]
fn a_hundred_thousand_ip_crs_in_the_pods_subnet() {
    let policy = policy();
    let cluster = pod_cluster(100_000, 1).expect("cluster");
    let free = pod_address(0, 100_005).to_string();
    let (verdict, took) = decide(
        &policy,
        json!({"ovn.kubernetes.io/logical_switch": subnet_name(0), "ovn.kubernetes.io/ip_address": free}),
        cluster.clone(),
    );
    println!("100 000 IP CRs in the pod's subnet, free address: {took:?}");
    assert!(verdict.accepted, "{verdict:?}");
    assert!(took < LIMIT, "{took:?}");

    let held = pod_address(0, 99_999).to_string();
    let (verdict, took) = decide(
        &policy,
        json!({"ovn.kubernetes.io/logical_switch": subnet_name(0), "ovn.kubernetes.io/ip_address": held}),
        cluster,
    );
    println!("100 000 IP CRs in the pod's subnet, held address: {took:?}");
    assert_eq!(
        verdict.message.as_deref(),
        Some(
            format!(
                "annotation static-ip {held} is conflict with ip crd web-0-99999.default, ip {held}"
            )
            .as_str()
        )
    );
    assert!(took < LIMIT, "{took:?}");
}

#[test]
fn a_ten_thousand_entry_ip_pool() {
    let policy = policy();
    let cluster = pod_cluster(10_000, 1).expect("cluster");
    let pool: Vec<String> = (10_000..20_000)
        .map(|i| pod_address(0, i).to_string())
        .collect();
    let (verdict, took) = decide(
        &policy,
        json!({"ovn.kubernetes.io/logical_switch": subnet_name(0), "ovn.kubernetes.io/ip_pool": pool.join(",")}),
        cluster.clone(),
    );
    println!("10 000-entry ip_pool, 10 000 IP CRs, all free: {took:?}");
    assert!(verdict.accepted, "{verdict:?}");
    assert!(took < LIMIT, "{took:?}");

    // Every entry held: each is checked, and the first holder is named.
    let taken: Vec<String> = (0..10_000).map(|i| pod_address(0, i).to_string()).collect();
    let (verdict, took) = decide(
        &policy,
        json!({"ovn.kubernetes.io/logical_switch": subnet_name(0), "ovn.kubernetes.io/ip_pool": taken.join(";")}),
        cluster,
    );
    println!("10 000-entry ip_pool, every entry held: {took:?}");
    assert_eq!(verdict.code, Some(403), "{verdict:?}");
    assert!(took < LIMIT, "{took:?}");
}

#[test]
fn a_one_mebibyte_annotation() {
    let policy = policy();
    let junk = "x".repeat(1 << 20);
    let (verdict, took) = decide(
        &policy,
        json!({"ovn.kubernetes.io/ip_address": junk}),
        ClusterState::default(),
    );
    println!("1 MiB ip_address of junk: {took:?}");
    assert_eq!(verdict.code, Some(400));
    assert_eq!(
        verdict.message.as_deref().map(str::len),
        Some((1 << 20) + " is not a valid ovn.kubernetes.io/ip_address".len())
    );
    assert!(took < LIMIT, "{took:?}");

    // About 70 000 valid addresses: the family rule refuses it first.
    let mut many = String::new();
    let mut i = 0;
    while many.len() < 1 << 20 {
        if i > 0 {
            many.push(',');
        }
        many.push_str(&pod_address(0, i).to_string());
        i += 1;
    }
    let (verdict, took) = decide(
        &policy,
        json!({"ovn.kubernetes.io/logical_switch": subnet_name(0), "ovn.kubernetes.io/ip_address": many}),
        pod_cluster(1_000, 1).expect("cluster"),
    );
    println!("1 MiB ip_address of {i} addresses: {took:?}");
    assert_eq!(verdict.code, Some(403));
    assert!(verdict.message.as_deref().is_some_and(|m| {
        m.starts_with("multiple IPv4 addresses in ip_address annotation \"10.0.0.2,10.0.0.3,")
    }));
    assert!(took < LIMIT, "{took:?}");

    // A 1 MiB ip_pool of addresses, checked entry by entry.
    let (verdict, took) = decide(
        &policy,
        json!({"ovn.kubernetes.io/logical_switch": subnet_name(0), "ovn.kubernetes.io/ip_pool": many.replace(',', ";")}),
        pod_cluster(1_000, 1).expect("cluster"),
    );
    println!("1 MiB ip_pool of {i} addresses: {took:?}");
    assert_eq!(verdict.code, Some(403), "{verdict:?}");
    assert!(took < LIMIT, "{took:?}");
}

/// A Pod's annotations: `ip_address` 10.0.0.9 and, for each of 5 000
/// attachment networks `n{i}.d.kubernetes.io`, these (key, value) pairs.
fn five_thousand_networks(per_network: &[(&str, &str)]) -> Value {
    let mut annotations = serde_json::Map::new();
    annotations.insert("ovn.kubernetes.io/ip_address".into(), json!("10.0.0.9"));
    for i in 0..5_000 {
        for (key, value) in per_network {
            annotations.insert(format!("n{i}.d.kubernetes.io/{key}"), json!(value));
        }
    }
    Value::Object(annotations)
}

#[test]
fn five_thousand_attachment_networks() {
    // Annotations are capped at 256 KiB by the API server: about 5 000
    // attachment networks each with an ip_family and an ip_address.
    let annotations = five_thousand_networks(&[("ip_family", "ipv4"), ("ip_address", "10.1.0.1")]);
    let (verdict, took) = decide(&policy(), annotations, pod_cluster(10, 1).expect("cluster"));
    println!("5 000 attachment networks with ip_family: {took:?}");
    assert!(verdict.code.is_some() || verdict.accepted, "{verdict:?}");
    assert!(took < LIMIT, "{took:?}");
}

#[test]
fn five_thousand_invalid_annotations() {
    // Each one an error of its own: the aggregate message stays linear to build.
    let annotations = five_thousand_networks(&[("ingress_rate", "fast")]);
    let (verdict, took) = decide(&policy(), annotations, pod_cluster(10, 1).expect("cluster"));
    println!("5 000 invalid bandwidth annotations: {took:?}");
    assert_eq!(verdict.code, Some(400));
    assert!(
        verdict.message.as_deref().is_some_and(
            |m| m.starts_with("[fast is not a valid n0.d.kubernetes.io/ingress_rate, ")
        )
    );
    assert!(took < LIMIT, "{took:?}");
}
