//! `bench-data <ips> <subnets> <out-dir> [--ippools N] [--namespaces N] [--selectable-ippools]`:
//! one of `kop-bench`'s generated clusters and its requests as files, for
//! `make bench-e2e` (the real policy-server against the API server stand-in
//! or kube-apiserver). `--ippools` (default 1 000): IPPools, in turn over the subnets;
//! `--namespaces` (default 0): Namespaces annotated as kube-ovn-controller
//! annotates them, besides what the API server has anyway;
//! `--selectable-ippools`: the IPPool CRD declares `spec.subnet` selectable
//! (the policy then lists a subnet's IPPools alone, I19).
//!
//! Writes `<out-dir>/cluster.json` (a conformance file's `cluster` object)
//! and `<out-dir>/requests.json`: `[{"name", "policy", "request",
//! "allowed"}]`, where `policy` is the ClusterAdmissionPolicy of `deploy/`
//! that guards the request.

use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::ExitCode;
use testhost::BoxError;
use testhost::bench::{
    deployment_request, ippool_request, pod_address, pod_request, push_ippools, push_namespaces,
    recorded_pod_cluster, selectable_ippool_crd, subnet_name, subnet_request,
};

/// IPPools in a generated cluster unless `--ippools` says (pool 0 in
/// subnet 0, which the IPPool CREATE overlaps).
const POOLS: usize = 1_000;

/// What the command line asks for.
struct Args {
    ips: usize,
    subnets: usize,
    out: PathBuf,
    pools: usize,
    namespaces: usize,
    selectable_ippools: bool,
}

fn run(args: &Args) -> Result<(), BoxError> {
    let (ips, subnets, out) = (args.ips, args.subnets, &args.out);
    std::fs::create_dir_all(out)?;
    // Each Subnet's status holds the record kube-ovn-controller writes (I15).
    let mut cluster = recorded_pod_cluster(ips, subnets)?;
    // Every cluster has it; the Subnet checks read its address (I9).
    cluster.push(
        "services",
        json!({"apiVersion": "v1", "kind": "Service",
               "metadata": {"name": "kubernetes", "namespace": "default"},
               "spec": {"clusterIP": "10.96.0.1", "clusterIPs": ["10.96.0.1"], "type": "ClusterIP",
                        "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}]}}),
    )?;
    push_ippools(&mut cluster, args.pools, 0..subnets)?;
    push_namespaces(&mut cluster, args.namespaces, subnets)?;
    if args.selectable_ippools {
        cluster.push("customresourcedefinitions", selectable_ippool_crd())?;
    }
    std::fs::write(
        out.join("cluster.json"),
        serde_json::to_vec(&cluster.to_json())?,
    )?;
    let per_subnet = ips.div_ceil(subnets.max(1));
    let subnet = subnet_name(0);
    let pod = |name: &str, annotations: Value, allowed: bool| {
        json!({"name": name, "policy": "kube-ovn-static-ip", "request": pod_request(annotations),
               "allowed": allowed})
    };
    let pool: Vec<String> = (10..15)
        .map(|i| pod_address(0, per_subnet + i).to_string())
        .collect();
    let mut requests = vec![
        // No Kube-OVN annotation: the policy answers without a lookup.
        pod("floor", json!({"example.com/owner": "team-a"}), true),
        pod(
            "pod-static-ip-free",
            json!({"ovn.kubernetes.io/logical_switch": subnet,
                   "ovn.kubernetes.io/ip_address": pod_address(0, per_subnet + 7).to_string()}),
            true,
        ),
        json!({"name": "deployment-ip-pool-5", "policy": "kube-ovn-static-ip",
               "request": deployment_request(json!({"ovn.kubernetes.io/logical_switch": subnet,
                                                     "ovn.kubernetes.io/ip_pool": pool.join(",")})),
               "allowed": true}),
        json!({"name": "subnet-create", "policy": "kube-ovn-networks",
               "request": subnet_request("172.16.0.0/24", "172.16.0.1"), "allowed": true}),
        // Among the pools of its subnet, in the gap after the last one.
        json!({"name": "ippool-create", "policy": "kube-ovn-networks",
               "request": ippool_request(&[format!("{}..{}", pod_address(0, 16 * args.pools + 1),
                                                    pod_address(0, 16 * args.pools + 9))]),
               "allowed": true}),
    ];
    if args.namespaces > 0 {
        // I5: no subnet named; the pod lands in its namespace's (bench-ns-0's
        // annotation names subnet 0), at the free pod's address.
        let mut request = pod_request(json!({
            "ovn.kubernetes.io/ip_address": pod_address(0, per_subnet + 7).to_string()}));
        request["namespace"] = json!("bench-ns-0");
        request["object"]["metadata"]["namespace"] = json!("bench-ns-0");
        requests.insert(
            2,
            json!({"name": "pod-static-ip-free-ns", "policy": "kube-ovn-static-ip", "request": request,
                   "allowed": true}),
        );
    }
    if per_subnet > 0 {
        requests.insert(
            2,
            pod(
                "pod-static-ip-conflict",
                json!({"ovn.kubernetes.io/logical_switch": subnet,
                       "ovn.kubernetes.io/ip_address": pod_address(0, 0).to_string()}),
                false,
            ),
        );
        // A StatefulSet's pod re-created at the address its own IP object
        // holds (kube-ovn-controller keeps a StatefulSet pod's IP object).
        let own = per_subnet.min(6) - 1;
        requests.insert(
            3,
            json!({"name": "pod-restart", "policy": "kube-ovn-static-ip",
                   "request": restart_request(&format!("web-0-{own}"), &subnet,
                                              &pod_address(0, own).to_string()),
                   "allowed": true}),
        );
    }
    std::fs::write(
        out.join("requests.json"),
        serde_json::to_vec_pretty(&requests)?,
    )?;
    Ok(())
}

/// The CREATE of StatefulSet `web-0`'s pod `name` with a static address.
fn restart_request(name: &str, subnet: &str, address: &str) -> Value {
    let mut request = pod_request(json!({"ovn.kubernetes.io/logical_switch": subnet,
                                         "ovn.kubernetes.io/ip_address": address}));
    request["name"] = json!(name);
    let metadata = &mut request["object"]["metadata"];
    metadata["name"] = json!(name);
    metadata["labels"] = json!({"app": "web-0", "statefulset.kubernetes.io/pod-name": name});
    metadata["ownerReferences"] = json!([{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web-0",
                                          "uid": "2a9c8e1f-4b3d-4e6a-9f0b-7c5d3e2a1b90",
                                          "controller": true, "blockOwnerDeletion": true}]);
    request
}

/// The command line, or `None` when it is not `<ips> <subnets> <out-dir>`
/// followed by `--ippools N`, `--namespaces N` and `--selectable-ippools`
/// in any order.
fn parse(args: &[String]) -> Option<Args> {
    let [ips, subnets, out, rest @ ..] = args else {
        return None;
    };
    let mut parsed = Args {
        ips: ips.parse().ok()?,
        subnets: subnets.parse().ok()?,
        out: PathBuf::from(out),
        pools: POOLS,
        namespaces: 0,
        selectable_ippools: false,
    };
    let mut rest = rest.iter();
    while let Some(flag) = rest.next() {
        match flag.as_str() {
            "--ippools" => parsed.pools = rest.next()?.parse().ok()?,
            "--namespaces" => parsed.namespaces = rest.next()?.parse().ok()?,
            "--selectable-ippools" => parsed.selectable_ippools = true,
            _ => return None,
        }
    }
    Some(parsed)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(args) = parse(&args) else {
        eprintln!(
            "usage: bench-data <ips> <subnets> <out-dir> [--ippools N] [--namespaces N] \
             [--selectable-ippools]"
        );
        return ExitCode::from(2);
    };
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench-data: {e}");
            ExitCode::FAILURE
        }
    }
}
