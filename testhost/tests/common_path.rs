//! The free static-IP pod's lookups do not grow with the cluster (issue 51).
//!
//! A pod whose `ip_address` is free in its subnet is the common static-IP
//! request. In the policy-server each host call copies and serialises what
//! it answers on every decision, so a lookup that reads every IPPool or
//! every Namespace makes that pod cost what the cluster holds
//! (docs/performance.md). Here the module as built decides that pod, with
//! and without a subnet named (I5: its namespace's), in clusters that
//! differ only in their number of IPPools (of other subnets) and Namespaces;
//! its host calls and the bytes they return must be the same in each, where
//! the IPPool CRD makes `spec.subnet` selectable (docs/lookups.md). With
//! Kube-OVN's CRD as shipped, the guard is shown to catch the one list that
//! then grows: every IPPool's. `make bench-e2e` prints
//! the same calls and what they cost in the real policy-server.

use serde_json::{Value, json};
use std::path::PathBuf;
use testhost::bench::{
    pod_address, pod_request, push_ippools, push_namespaces, recorded_pod_cluster,
    selectable_ippool_crd, subnet_name,
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

/// The spread cluster with `pools` IPPools (in subnets other than the pod's)
/// and `namespaces` Namespaces; with the IPPool CRD declaring `spec.subnet`
/// selectable where `selectable`.
fn cluster(pools: usize, namespaces: usize, selectable: bool) -> ClusterState {
    let mut cluster = recorded_pod_cluster(IPS, SUBNETS).expect("cluster");
    push_ippools(&mut cluster, pools, 1..SUBNETS).expect("ippools");
    push_namespaces(&mut cluster, namespaces, SUBNETS).expect("namespaces");
    if selectable {
        cluster
            .push("customresourcedefinitions", selectable_ippool_crd())
            .expect("crd");
    }
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

/// The list of every IPPool, as I19 reads them where the IPPool CRD does not
/// make `spec.subnet` selectable (Kube-OVN's as shipped: nothing the API
/// server can select on finds a subnet's pools; docs/performance.md, issue
/// 51). With the CRD amended, a subnet's pools are listed alone.
const EVERY_IPPOOL: &str = r#"list_resources_all "IPPool" "kubeovn.io/v1" name=null label=null field=null masks=["spec.ips","spec.namespaces","spec.subnet"]"#;

/// The clusters compared: IPPools and Namespaces from few to many.
const SIZES: [(usize, usize); 4] = [(0, 10), (100, 10), (1_000, 10), (1_000, 1_000)];

/// Where the free static-IP pod's host calls, or the bytes they return,
/// differ between the clusters of [`SIZES`] (the calls in `known_to_grow`
/// may return more bytes, no more calls); each difference described.
fn growth(policy: &Policy, selectable: bool, known_to_grow: &[&str]) -> Vec<String> {
    let clusters: Vec<_> = SIZES
        .iter()
        .map(|&(p, n)| cluster(p, n, selectable))
        .collect();
    let mut grew = Vec::new();
    // As shipped, and with I19 off, where no IPPool is read.
    let settings = [json!({}), json!({"checkIPPoolNamespaces": false})];
    for ((what, request), settings) in requests()
        .into_iter()
        .flat_map(|r| settings.iter().map(move |s| (r.clone(), s)))
    {
        let what = format!("{what}, settings {settings}, selectable CRD {selectable}");
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
                // The calls that grew, as asked, then the whole of both.
                let differ: Vec<&str> = calls
                    .iter()
                    .filter(|c| !first.contains(c))
                    .map(|(asked, _)| asked.as_str())
                    .collect();
                grew.push(format!(
                    "{what}: grew: {}\n{:?} IPPools/Namespaces made {calls:#?}\nwhere {:?} made {first:#?}",
                    differ.join("; "),
                    SIZES[i],
                    SIZES[0]
                ));
            }
        }
    }
    grew
}

#[test]
fn the_free_static_ip_pods_lookups_do_not_grow_with_ippools_or_namespaces() {
    let grew = growth(&policy(), true, &[]);
    assert!(
        grew.is_empty(),
        "the free static-IP pod's host calls or the bytes they return grow with the \
         cluster's IPPools or Namespaces:\n{}",
        grew.join("\n")
    );
}

/// The guard sees a lookup that reads every IPPool: with Kube-OVN's CRD as
/// shipped, I19 lists them all, and only that list grows.
#[test]
fn the_guard_fails_on_a_list_of_every_ippool() {
    let policy = policy();
    let grew = growth(&policy, false, &[]);
    assert!(
        grew.iter().any(|g| g.contains(EVERY_IPPOOL)),
        "the list of every IPPool went unseen: {grew:#?}"
    );
    assert!(
        grew.iter()
            .all(|g| !g.contains("checkIPPoolNamespaces\":false")),
        "with I19 off nothing grows: {grew:#?}"
    );
    assert_eq!(
        growth(&policy, false, &[EVERY_IPPOOL]),
        Vec::<String>::new(),
        "nothing but that list grows"
    );
}
