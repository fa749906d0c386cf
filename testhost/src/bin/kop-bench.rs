//! `kop-bench <policy.wasm> [--quick] [--budget-ms N] [--only PREFIX]`: the
//! cost of one decision (`--only`: the scenarios whose name starts so).
//!
//! Runs `policy.wasm` in this repository's waPC host (wasmtime) on generated
//! clusters, in two modes: a fresh instance per decision, as Kubewarden's
//! policy-server does, and one warm instance reused (the policy's own work).
//! The same logic linked natively, over the same host answers, is the floor
//! for a design that receives JSON. Host answers are computed once per
//! distinct request and then served from memory, as the policy-server serves
//! lists from its watch caches. `bytes_in` is what crosses host → guest for
//! one decision: the ValidationRequest and every lookup's answer.
//!
//! The last line is the headline figure: the non-conflicting Pod with 10 000
//! IP CRs over 1 000 subnets.

use kube_ovn_policy::k8s::cluster::{Host, HostCluster};
use serde_json::{Value, json};
use std::cell::Cell;
use std::collections::HashSet;
use std::net::Ipv4Addr;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};
use testhost::bench::{
    CachedCluster, deployment_request, heavy_cluster, ippool_cluster, ippool_request,
    nic_annotations, pod_address, pod_cluster, pod_request, recorded_pod_cluster, subnet_base,
    subnet_cluster, subnet_name, subnet_request,
};
use testhost::{Backend, BoxError, HostCall, Policy};

struct Scenario {
    name: &'static str,
    ips: usize,
    subnets: usize,
    /// IPPools in the cluster (the IPPool scenarios).
    pools: usize,
    payload: Vec<u8>,
    cluster: Arc<CachedCluster>,
    allowed: bool,
    /// One of the heaviest requests a tenant can send (CONTRACT §4): held
    /// to [`HEAVY_BUDGET`] and to one GET per distinct name.
    heavy: bool,
}

/// CONTRACT §4: no request may hold a policy-server worker for a second;
/// the module's own share of the heaviest ones, warm, stays within this.
const HEAVY_BUDGET_US: f64 = 100_000.0;

/// The figures of one scenario, in microseconds and bytes.
struct Figures {
    fresh: Quantiles,
    warm: Quantiles,
    native: f64,
    bytes_in: usize,
    /// Host calls of one decision: lists, GETs, and the distinct names GET.
    lists: usize,
    gets: usize,
    get_names: usize,
}

/// The native policy's view of the host: the same answers, counted.
struct NativeHost<'a> {
    cluster: &'a CachedCluster,
    bytes: Cell<usize>,
}

impl Host for NativeHost<'_> {
    fn call(&self, operation: &str, payload: &[u8]) -> Result<Vec<u8>, String> {
        let answer = self.cluster.answer(operation, payload)?;
        self.bytes.set(self.bytes.get() + answer.len());
        Ok(answer)
    }
}

fn payload(request: Value, settings: Value) -> Result<Vec<u8>, BoxError> {
    Ok(serde_json::to_vec(
        &json!({"settings": settings, "request": request}),
    )?)
}

fn scenarios(quick: bool) -> Result<Vec<Scenario>, BoxError> {
    let sizes: &[(usize, usize)] = if quick {
        &[(0, 10), (100, 10), (1000, 100)]
    } else {
        &[
            (0, 10),
            (1_000, 10),
            (10_000, 10),
            (100_000, 10),
            (0, 1_000),
            (1_000, 1_000),
            (10_000, 1_000),
            (100_000, 1_000),
        ]
    };
    let mut out = Vec::new();
    for &(ips, subnets) in sizes {
        let cluster = Arc::new(CachedCluster::new(pod_cluster(ips, subnets)?));
        let per_subnet = ips.div_ceil(subnets);
        let subnet = subnet_name(0);
        // A Pod asking for this address in subnet 0.
        let static_ip = |address: Ipv4Addr| {
            let annotations = json!({
                "ovn.kubernetes.io/logical_switch": subnet,
                "ovn.kubernetes.io/ip_address": address.to_string(),
            });
            payload(pod_request(annotations), json!({}))
        };
        out.push(Scenario {
            name: "pod-static-ip-free",
            ips,
            subnets,
            pools: 0,
            payload: static_ip(pod_address(0, per_subnet + 7))?,
            cluster: cluster.clone(),
            allowed: true,
            heavy: false,
        });
        if per_subnet > 0 {
            out.push(Scenario {
                name: "pod-static-ip-conflict",
                ips,
                subnets,
                pools: 0,
                payload: static_ip(pod_address(0, 0))?,
                cluster: cluster.clone(),
                allowed: false,
                heavy: false,
            });
        }
        let pool: Vec<String> = (10..15)
            .map(|i| pod_address(0, per_subnet + i).to_string())
            .collect();
        out.push(Scenario {
            name: "deployment-ip-pool-5",
            ips,
            subnets,
            pools: 0,
            payload: payload(
                deployment_request(json!({
                    "ovn.kubernetes.io/logical_switch": subnet,
                    "ovn.kubernetes.io/ip_pool": pool.join(","),
                })),
                json!({}),
            )?,
            cluster,
            allowed: true,
            heavy: false,
        });
    }
    // A 20 000-address ip_pool in a subnet of 50 000 IP objects: an entry
    // held at the end (a conflict, which only the IP objects can name), or
    // the subnet's gateway in the pool (an excluded address, which the
    // subnet's record leaves to the IP objects). Each claimed address is
    // looked up, so the work is the sum of the two, not their product.
    let (pool_ips, pool_len) = if quick {
        (5_000, 2_000)
    } else {
        (50_000, 20_000)
    };
    let cluster = Arc::new(CachedCluster::new(recorded_pod_cluster(pool_ips, 1)?));
    let free_pool = |len: usize| -> Vec<String> {
        (0..len)
            .map(|k| pod_address(0, pool_ips + k).to_string())
            .collect()
    };
    let mut held_last = free_pool(pool_len - 1);
    held_last.push(pod_address(0, pool_ips - 1).to_string());
    let mut with_gateway = vec![Ipv4Addr::from(subnet_base(0) + 1).to_string()];
    with_gateway.extend(free_pool(pool_len - 1));
    for (name, pool, allowed) in [
        ("pod-ip-pool-held-last", held_last, false),
        ("pod-ip-pool-gateway", with_gateway, true),
    ] {
        out.push(Scenario {
            name,
            ips: pool_ips,
            subnets: 1,
            pools: 0,
            payload: payload(
                pod_request(json!({
                    "ovn.kubernetes.io/logical_switch": subnet_name(0),
                    "ovn.kubernetes.io/ip_pool": pool.join(","),
                })),
                json!({}),
            )?,
            cluster: cluster.clone(),
            allowed,
            heavy: false,
        });
    }
    let overlaps: &[usize] = if quick { &[10] } else { &[10, 1_000] };
    for &subnets in overlaps {
        out.push(Scenario {
            name: "subnet-create",
            ips: 0,
            subnets,
            pools: 0,
            payload: payload(
                subnet_request("172.16.0.0/24", "172.16.0.1"),
                json!({"kubernetesServiceIP": "10.96.0.1"}),
            )?,
            cluster: Arc::new(CachedCluster::new(subnet_cluster(subnets)?)),
            allowed: true,
            heavy: false,
        });
    }
    let pools: &[usize] = if quick { &[10] } else { &[10, 1_000] };
    for &n in pools {
        let cluster = Arc::new(CachedCluster::new(ippool_cluster(n)?));
        // A range in the gap after the last pool: free.
        let (from, to) = (pod_address(0, 16 * n + 1), pod_address(0, 16 * n + 9));
        for (name, ips, allowed) in [
            ("ippool-create-free", vec![format!("{from}..{to}")], true),
            // Overlapping the last pool by name order: every pool is compared first.
            (
                "ippool-create-overlap",
                vec![pod_address(0, 16 * (n - 1) + 3).to_string()],
                false,
            ),
        ] {
            out.push(Scenario {
                name,
                ips: 0,
                subnets: 1,
                pools: n,
                payload: payload(ippool_request(&ips), json!({}))?,
                cluster: cluster.clone(),
                allowed,
                heavy: false,
            });
        }
    }
    out.extend(heavy_scenarios(quick)?);
    Ok(out)
}

/// CONTRACT §4's heaviest pods: as many attachment NICs as the cap allows
/// (the default 64, and 5 000 raised), against 20 000 IP objects, a
/// 40 000-entry Subnet record and 1 000 IPPools reserved for another
/// namespace. Each NIC names a Subnet that does not exist (the IP list read
/// for it), or the recorded Subnet with an address the record calls free
/// (the record and the pools read for it), or one the record calls in use
/// that no IP object holds (the pod's own IP object asked for by name).
fn heavy_scenarios(quick: bool) -> Result<Vec<Scenario>, BoxError> {
    let (ips, record, pools, raised) = if quick {
        (2_000, 4_000, 100, 500)
    } else {
        (20_000, 40_000, 1_000, 5_000)
    };
    let cluster = Arc::new(CachedCluster::new(heavy_cluster(ips, record, pools)?));
    let mut out = Vec::new();
    for nics in [64, raised] {
        let settings = json!({"maxNetworksPerPod": nics});
        let shapes: [(&'static str, Value); 3] = [
            (
                "heavy-missing-subnets",
                nic_annotations(
                    nics,
                    |i| pod_address(0, 2 * i + 1),
                    |i| format!("missing-{i}"),
                ),
            ),
            (
                "heavy-record",
                nic_annotations(nics, |i| pod_address(0, 2 * i + 1), |_| subnet_name(0)),
            ),
            (
                "heavy-own-ip",
                nic_annotations(nics, |i| pod_address(0, 2 * (ips + i)), |_| subnet_name(0)),
            ),
        ];
        for (name, annotations) in shapes {
            out.push(Scenario {
                name,
                ips,
                subnets: nics,
                pools,
                payload: payload(pod_request(annotations), settings.clone())?,
                cluster: cluster.clone(),
                allowed: true,
                heavy: true,
            });
        }
    }
    out.push(Scenario {
        name: "heavy-ip-family",
        ips,
        subnets: 1,
        pools,
        payload: payload(pod_request(ip_family_product(quick)), json!({}))?,
        cluster,
        allowed: false,
        heavy: true,
    });
    Ok(out)
}

/// CONTRACT §4's `ip_family` shape: a 255 KB pod (the API server's limit
/// is 256 KiB of annotations) of `ip_family` keys that all govern one
/// per-interface address key (`<nad>.<ns>.ovn.<anything>.<if>` governs
/// `<nad>.<ns>.kubernetes.io/ip_address.<if>`, `ValidatePodNetwork`) and as
/// many address keys under it, each of the other family: upstream's check
/// and message grow as their product. No NIC among them, so the NIC cap
/// does not refuse it.
fn ip_family_product(quick: bool) -> Value {
    let half = if quick { 500 } else { 2_800 };
    let mut annotations = serde_json::Map::new();
    annotations.insert("ovn.kubernetes.io/ip_address".into(), json!("10.16.0.5"));
    for i in 0..half {
        annotations.insert(
            format!("n.ns.ovn.x{i}.i0.kubernetes.io/ip_family"),
            json!("ipv6"),
        );
        annotations.insert(
            format!("n.ns.kubernetes.io/ip_address.i0.{i}"),
            json!(pod_address(0, i).to_string()),
        );
    }
    Value::Object(annotations)
}

const MIN_SAMPLES: usize = 15;
const MAX_SAMPLES: usize = 20_000;

/// The median and the 99th percentile, in microseconds.
type Quantiles = (f64, f64);

/// The [`Quantiles`] of samples.
fn quantiles(mut samples: Vec<f64>) -> Quantiles {
    samples.sort_by(f64::total_cmp);
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.99))
}

/// Times `f` until the budget is spent (at least [`MIN_SAMPLES`] runs).
fn time(
    budget: Duration,
    mut f: impl FnMut() -> Result<(), BoxError>,
) -> Result<Quantiles, BoxError> {
    let (a, _) = time_pair(budget, &mut f, &mut || Ok(()))?;
    Ok(a)
}

/// Times `a` and `b` in alternation until the budget is spent, so that
/// both see the same machine (clock speed, the other core's load) and
/// their ratio does not drift with it.
fn time_pair(
    budget: Duration,
    a: &mut dyn FnMut() -> Result<(), BoxError>,
    b: &mut dyn FnMut() -> Result<(), BoxError>,
) -> Result<(Quantiles, Quantiles), BoxError> {
    for _ in 0..3 {
        a()?;
        b()?;
    }
    let (mut of_a, mut of_b) = (Vec::new(), Vec::new());
    let start = Instant::now();
    while of_a.len() < MIN_SAMPLES || (start.elapsed() < budget && of_a.len() < MAX_SAMPLES) {
        let t = Instant::now();
        a()?;
        of_a.push(t.elapsed().as_secs_f64() * 1e6);
        let t = Instant::now();
        b()?;
        of_b.push(t.elapsed().as_secs_f64() * 1e6);
    }
    Ok((quantiles(of_a), quantiles(of_b)))
}

fn measure(policy: &Policy, s: &Scenario, budget: Duration) -> Result<Figures, BoxError> {
    let check = |accepted: bool| -> Result<(), BoxError> {
        if accepted == s.allowed {
            Ok(())
        } else {
            Err(format!("{}: expected allowed={}, got {accepted}", s.name, s.allowed).into())
        }
    };
    let probe = policy.instance(Backend::Shared(s.cluster.clone()))?;
    check(probe.validate_raw(&s.payload)?.accepted)?;
    let calls = probe.take_calls();
    let answered: usize = calls.iter().map(|c| c.response_bytes).sum();
    let gets: Vec<&HostCall> = calls
        .iter()
        .filter(|c| c.operation == "get_resource")
        .collect();
    let get_names: HashSet<String> = gets.iter().map(|c| c.payload.to_string()).collect();
    let fresh = time(budget, || {
        let instance = policy.instance(Backend::Shared(s.cluster.clone()))?;
        instance.set_call_log(false);
        check(instance.validate_raw(&s.payload)?.accepted)
    })?;
    let instance = policy.instance(Backend::Shared(s.cluster.clone()))?;
    instance.set_call_log(false);
    // Warm and native alternate: their ratio is the figure compared.
    let (warm, (native, _)) = time_pair(
        budget,
        &mut || check(instance.validate_raw(&s.payload)?.accepted),
        &mut || {
            let host = NativeHost {
                cluster: &s.cluster,
                bytes: Cell::new(0),
            };
            let cluster = HostCluster::with_host(host);
            check(kube_ovn_policy::evaluate(&s.payload, &cluster).is_ok())
        },
    )?;
    Ok(Figures {
        fresh,
        warm,
        native,
        bytes_in: s.payload.len() + answered,
        lists: calls.len() - gets.len(),
        gets: gets.len(),
        get_names: get_names.len(),
    })
}

fn run(wasm: &Path, quick: bool, budget: Duration, only: Option<&str>) -> Result<(), BoxError> {
    let mut faults = Vec::new();
    let policy = Policy::load(wasm)?;
    println!(
        "{:<24} {:>7} {:>7} {:>6} {:>10} {:>10} {:>10} {:>10} {:>10} {:>7} {:>9}",
        "scenario",
        "ips",
        "subnets",
        "pools",
        "fresh_med",
        "fresh_p99",
        "warm_med",
        "warm_p99",
        "native_med",
        "w/n",
        "bytes_in"
    );
    let mut headline = None;
    let wanted = |s: &Scenario| only.is_none_or(|prefix| s.name.starts_with(prefix));
    for s in scenarios(quick)?.into_iter().filter(wanted) {
        let f = measure(&policy, &s, budget)?;
        let ratio = f.warm.0 / f.native;
        println!(
            "{:<24} {:>7} {:>7} {:>6} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>7.2} {:>9}",
            s.name,
            s.ips,
            s.subnets,
            s.pools,
            f.fresh.0,
            f.fresh.1,
            f.warm.0,
            f.warm.1,
            f.native,
            ratio,
            f.bytes_in
        );
        if s.heavy {
            println!(
                "  {} with {} NICs: host calls lists={} gets={} distinct_get_names={}",
                s.name, s.subnets, f.lists, f.gets, f.get_names
            );
            if f.gets > f.get_names {
                faults.push(format!(
                    "{} ({} NICs): {} GETs for {} names",
                    s.name, s.subnets, f.gets, f.get_names
                ));
            }
            // The budget holds for the full bench; --quick checks answers.
            if !quick && f.warm.0 > HEAVY_BUDGET_US {
                faults.push(format!(
                    "{} ({} NICs): {:.0} µs warm, over {HEAVY_BUDGET_US:.0}",
                    s.name, s.subnets, f.warm.0
                ));
            }
        }
        if s.name == "pod-static-ip-free" && s.ips == 10_000 && s.subnets == 1_000 {
            headline = Some((f, ratio));
        }
    }
    println!(
        "(times in µs per decision; wasm module {} bytes)",
        policy.wasm_bytes
    );
    if let Some((f, ratio)) = headline {
        println!(
            "bench: ips=10000 subnets=1000 fresh_median_us={:.0} warm_median_us={:.0} native_median_us={:.0} ratio={ratio:.2} bytes_in={} wasm_bytes={}",
            f.fresh.0, f.warm.0, f.native, f.bytes_in, policy.wasm_bytes
        );
    }
    if faults.is_empty() {
        Ok(())
    } else {
        Err(format!("CONTRACT §4 bounds exceeded: {}", faults.join("; ")).into())
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let budget_ms = args
        .iter()
        .position(|a| a == "--budget-ms")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(if quick { 200 } else { 1_000 });
    let Some(wasm) = args
        .iter()
        .find(|a| !a.starts_with("--") && a.ends_with(".wasm"))
    else {
        eprintln!("usage: kop-bench <policy.wasm> [--quick] [--budget-ms N] [--only PREFIX]");
        return ExitCode::from(2);
    };
    let only = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1))
        .map(String::as_str);
    match run(
        Path::new(wasm),
        quick,
        Duration::from_millis(budget_ms),
        only,
    ) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kop-bench: {e}");
            ExitCode::FAILURE
        }
    }
}
