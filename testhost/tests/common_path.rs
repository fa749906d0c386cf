//! The free static-IP pod's lookups do not grow with the cluster (issue 51).
//!
//! A pod whose `ip_address` is free in its subnet is the common static-IP
//! request. In the policy-server each host call copies and serialises what
//! it answers on every decision, so a lookup that reads every IPPool or
//! every Namespace makes that pod cost what the cluster holds
//! (docs/performance.md). Here the module as built decides that pod, with
//! and without a subnet named (I5: its namespace's), in clusters that
//! differ only in their number of IPPools and Namespaces; its host calls and
//! the bytes they return must be the same in each. `make bench-e2e` prints
//! the same calls and what they cost in the real policy-server.

use serde_json::{Value, json};
use std::path::PathBuf;
use testhost::bench::{
    pod_address, pod_request, push_ippools, push_namespaces, recorded_pod_cluster, subnet_name,
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

/// Subnets, and IP objects in each as `make bench-e2e`'s spread has them.
const SUBNETS: usize = 20;
const IPS: usize = 200;

/// The spread cluster with `pools` IPPools and `namespaces` Namespaces.
fn cluster(pools: usize, namespaces: usize) -> ClusterState {
    let mut cluster = recorded_pod_cluster(IPS, SUBNETS).expect("cluster");
    push_ippools(&mut cluster, pools).expect("ippools");
    push_namespaces(&mut cluster, namespaces, SUBNETS).expect("namespaces");
    cluster
}

/// The free static-IP pod in subnet 0: naming it, or in namespace
/// `bench-ns-0`, whose annotation names it (I5).
fn requests() -> Vec<(&'static str, Value)> {
    let free = pod_address(0, IPS / SUBNETS + 7).to_string();
    let named = pod_request(json!({
        "ovn.kubernetes.io/logical_switch": subnet_name(0),
        "ovn.kubernetes.io/ip_address": free,
    }));
    let mut by_namespace = pod_request(json!({"ovn.kubernetes.io/ip_address": free}));
    by_namespace["namespace"] = json!("bench-ns-0");
    by_namespace["object"]["metadata"]["namespace"] = json!("bench-ns-0");
    vec![
        ("free, logical_switch", named),
        ("free, its namespace's subnet", by_namespace),
    ]
}

/// A host call as the comparison sees it: what was asked, and how many bytes
/// came back.
fn shape(call: &HostCall) -> (String, usize) {
    let p = &call.payload;
    let asked = format!(
        "{} {} {} name={} label={} field={} masks={}",
        call.operation,
        p["kind"],
        p["api_version"],
        p["name"],
        p["label_selector"],
        p["field_selector"],
        p["field_masks"]
    );
    (asked, call.response_bytes)
}

/// The one lookup of the common path that still grows with the cluster:
/// every IPPool, as I19 reads them (Kube-OVN labels no IPPool with its
/// subnet and its CRD makes `spec.subnet` no field selector, so nothing the
/// API server can select on finds a subnet's pools; docs/performance.md,
/// issue 51). Its calls and the bytes of every other call must stay the
/// same; the module decodes only the pools that reserve addresses.
const KNOWN_TO_GROW: [&str; 1] = [
    r#"list_resources_all "IPPool" "kubeovn.io/v1" name=null label=null field=null masks=["spec.ips","spec.namespaces","spec.subnet"]"#,
];

/// The clusters compared: IPPools and Namespaces from few to many.
const SIZES: [(usize, usize); 4] = [(0, 10), (100, 10), (1_000, 10), (1_000, 1_000)];

#[test]
fn the_free_static_ip_pods_lookups_do_not_grow_with_ippools_or_namespaces() {
    let policy = policy();
    let clusters: Vec<_> = SIZES.iter().map(|&(p, n)| cluster(p, n)).collect();
    let mut grew = Vec::new();
    // As shipped (I19 on: the one list of every IPPool may grow), and with
    // I19 off, where nothing may.
    let settings = [
        (json!({}), &KNOWN_TO_GROW[..]),
        (json!({"checkIPPoolNamespaces": false}), &[][..]),
    ];
    for ((what, request), (settings, known_to_grow)) in requests()
        .into_iter()
        .flat_map(|r| settings.iter().map(move |s| (r.clone(), s)))
    {
        let what = format!("{what}, settings {settings}");
        let mut seen: Vec<Vec<(String, usize)>> = Vec::new();
        for (&(pools, namespaces), cluster) in SIZES.iter().zip(&clusters) {
            let (verdict, calls) = policy
                .validate(&request, settings, cluster.clone())
                .expect("an answer, not a trap");
            assert!(verdict.accepted, "{what}: {verdict:?}");
            let calls: Vec<_> = calls.iter().map(shape).collect();
            let bytes: usize = calls.iter().map(|(_, b)| b).sum();
            println!(
                "{what}, {pools} IPPools, {namespaces} Namespaces: {} host calls, {bytes} bytes",
                calls.len()
            );
            for (asked, bytes) in &calls {
                println!("    {asked}: {bytes} bytes");
            }
            seen.push(calls);
        }
        let first = &seen[0];
        for (i, calls) in seen.iter().enumerate().skip(1) {
            let same = calls.len() == first.len()
                && calls.iter().zip(first).all(|((asked, bytes), (was, had))| {
                    asked == was && (bytes == had || known_to_grow.contains(&asked.as_str()))
                });
            if !same {
                grew.push(format!(
                    "{what}: {:?} IPPools/Namespaces made {calls:#?}\nwhere {:?} made {first:#?}",
                    SIZES[i], SIZES[0]
                ));
            }
        }
        // At most the one list of every IPPool grows, read once.
        let growing = first
            .iter()
            .filter(|(asked, _)| known_to_grow.contains(&asked.as_str()))
            .count();
        assert!(growing <= 1, "{what}: {first:#?}");
    }
    assert!(
        grew.is_empty(),
        "the free static-IP pod's host calls or the bytes they return grow with the \
         cluster's IPPools or Namespaces:\n{}",
        grew.join("\n")
    );
}
