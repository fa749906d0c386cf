//! stall-check: how many kube-rs watch caches never become ready.
//!
//! Creates `--caches` watch caches of Kube-OVN IP objects, one per label
//! selector `ovn.kubernetes.io/subnet=subnet-<i>`, the way Kubewarden's
//! policy-evaluator creates one on a list host call's first use (a reflector
//! over `watcher(Api::<DynamicObject>::all_with(..), Config { label_selector })`,
//! `default_backoff()`, spawned on the multi-threaded tokio runtime, then
//! `Store::wait_until_ready()`), `--concurrency` at a time, on one
//! `kube::Client` as the policy-server has one. A cache not ready within
//! `--bound-s` is counted and left running; the next one starts. After the
//! run, a second cache of each selector not ready is created
//! (`second_ready=`: how many of those were ready within the bound).
//!
//! hyper 1.9.0's HTTP/1 client can hand a connection that carries a WATCH
//! back to the pool (docs/stall.md); the next LIST queued on it is written
//! only when that watch ends, so its cache is not ready until then. The count
//! is a measurement: the exit status is 0 whatever it is, non-zero only when
//! the program itself fails (no API server, no IP kind).
//!
//! ```text
//! KUBECONFIG=<file> [TOKIO_WORKER_THREADS=<n>] stall-check [--caches 1000] [--concurrency 8]
//!     [--bound-s 10] [--apiserver <name>]
//! stall-check: hyper=1.9.0 caches=1000 c=8 not_ready=7 bound_s=10 apiserver=stand-in ...
//! ```

use std::{
    process::ExitCode,
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use futures::{StreamExt, TryStreamExt, future::ready};
use kube::{
    Api, Client, ResourceExt,
    api::{ApiResource, ListParams},
    core::DynamicObject,
    runtime::{WatchStreamExt, reflector::store::Writer, watcher},
};

/// The versions this binary was built with, read from its Cargo.lock.
const LOCK: &str = include_str!("../Cargo.lock");

const GROUP_VERSION: &str = "kubeovn.io/v1";
const KIND: &str = "IP";
const LABEL: &str = "ovn.kubernetes.io/subnet";

struct Args {
    caches: usize,
    concurrency: usize,
    bound: Duration,
    apiserver: String,
}

fn usage() -> String {
    "usage: stall-check [--caches N] [--concurrency C] [--bound-s S] [--apiserver NAME]".into()
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        caches: 1000,
        concurrency: 8,
        bound: Duration::from_secs(10),
        apiserver: "unnamed".into(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it
            .next()
            .ok_or_else(|| format!("{flag}: a value is missing\n{}", usage()))?;
        let number = || {
            value
                .parse::<usize>()
                .map_err(|e| format!("{flag} {value}: {e}"))
        };
        match flag.as_str() {
            "--caches" => args.caches = number()?,
            "--concurrency" => args.concurrency = number()?.max(1),
            "--bound-s" => {
                let s: f64 = value.parse().map_err(|e| format!("{flag} {value}: {e}"))?;
                args.bound = Duration::from_secs_f64(s);
            }
            "--apiserver" => args.apiserver = value,
            _ => return Err(format!("unknown flag {flag}\n{}", usage())),
        }
    }
    Ok(args)
}

/// The version of `name` in the lock file this binary was built from, with
/// `+local` when it came from a path (a `[patch]`), not from crates.io.
fn locked_version(name: &str) -> String {
    let wanted = format!("name = \"{name}\"\nversion = \"");
    let Some(rest) = LOCK.find(&wanted).map(|at| &LOCK[at + wanted.len()..]) else {
        return "?".into();
    };
    let version = rest.split('"').next().unwrap_or("?");
    let from_registry = rest
        .lines()
        .nth(1)
        .is_some_and(|l| l.starts_with("source = \"registry+"));
    if from_registry {
        version.into()
    } else {
        format!("{version}+local")
    }
}

/// One watch cache, as policy-evaluator's `Reflector::create_and_run` makes
/// it: the watcher's objects stripped of managedFields, applied to the
/// store, the stream driven by a task of its own; then the wait until the
/// store has its first full list.
async fn create_cache(
    client: Client,
    resource: &ApiResource,
    selector: String,
) -> Result<(), String> {
    let api = Api::<DynamicObject>::all_with(client, resource);
    let mut writer = Writer::new(resource.clone());
    let reader = writer.as_reader();
    let config = watcher::Config {
        label_selector: Some(selector),
        ..Default::default()
    };
    let stream = watcher(api, config)
        .map_ok(|ev| ev.modify(|obj| obj.managed_fields_mut().clear()))
        .inspect_ok(move |ev| writer.apply_watcher_event(ev));
    tokio::spawn(async move {
        stream
            .default_backoff()
            .touched_objects()
            .for_each(|_| ready(()))
            .await
    });
    reader.wait_until_ready().await.map_err(|e| e.to_string())
}

/// The IP kind as policy-evaluator finds it: from the group's discovery.
async fn ip_resource(client: &Client) -> Result<ApiResource, String> {
    let list = client
        .list_api_group_resources(GROUP_VERSION)
        .await
        .map_err(|e| format!("discovery of {GROUP_VERSION}: {e}"))?;
    let found = list
        .resources
        .iter()
        .find(|r| r.kind == KIND)
        .ok_or_else(|| format!("{GROUP_VERSION} has no kind {KIND}"))?;
    Ok(ApiResource {
        group: "kubeovn.io".into(),
        version: "v1".into(),
        api_version: GROUP_VERSION.into(),
        kind: KIND.into(),
        plural: found.name.clone(),
    })
}

struct Outcome {
    not_ready: Vec<usize>,
    ready_ms: Vec<f64>,
    /// Of the caches not ready, how many a second cache of the same selector,
    /// created after the run, filled within the bound: what the next request
    /// for that selector meets (policy-evaluator registers a cache only once
    /// it is ready, so the next request creates one of its own).
    second_ready: usize,
}

async fn run(args: &Args) -> Result<Outcome, String> {
    let client = Client::try_default()
        .await
        .map_err(|e| format!("kube client (KUBECONFIG): {e}"))?;
    let resource = ip_resource(&client).await?;
    // One plain LIST first: an API server that cannot serve the kind is the
    // program's failure, not a stall.
    Api::<DynamicObject>::all_with(client.clone(), &resource)
        .list(&ListParams::default().limit(1))
        .await
        .map_err(|e| format!("LIST {}: {e}", resource.plural))?;

    let next = Arc::new(AtomicUsize::new(0));
    let outcome = Arc::new(Mutex::new(Outcome {
        not_ready: Vec::new(),
        ready_ms: Vec::new(),
        second_ready: 0,
    }));
    let mut tasks = Vec::new();
    for _ in 0..args.concurrency {
        let (client, resource, next, outcome) = (
            client.clone(),
            resource.clone(),
            next.clone(),
            outcome.clone(),
        );
        let (caches, bound) = (args.caches, args.bound);
        tasks.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= caches {
                    return Ok::<(), String>(());
                }
                let started = Instant::now();
                let selector = format!("{LABEL}=subnet-{i}");
                let waited =
                    tokio::time::timeout(bound, create_cache(client.clone(), &resource, selector))
                        .await;
                let mut outcome = outcome.lock().map_err(|_| "a task panicked".to_string())?;
                match waited {
                    Ok(Ok(())) => outcome
                        .ready_ms
                        .push(started.elapsed().as_secs_f64() * 1000.0),
                    Ok(Err(e)) => return Err(format!("cache {i}: {e}")),
                    Err(_) => outcome.not_ready.push(i),
                }
            }
        }));
    }
    for task in tasks {
        task.await.map_err(|e| e.to_string())??;
    }
    let (not_ready, ready_ms) = {
        let mut outcome = outcome.lock().map_err(|_| "a task panicked".to_string())?;
        (
            std::mem::take(&mut outcome.not_ready),
            std::mem::take(&mut outcome.ready_ms),
        )
    };
    let mut second_ready = 0;
    for &i in &not_ready {
        let selector = format!("{LABEL}=subnet-{i}");
        let second = create_cache(client.clone(), &resource, selector);
        if let Ok(Ok(())) = tokio::time::timeout(args.bound, second).await {
            second_ready += 1;
        }
    }
    Ok(Outcome {
        not_ready,
        ready_ms,
        second_ready,
    })
}

/// The runtime's worker threads, as tokio counts them.
fn workers() -> String {
    match std::env::var("TOKIO_WORKER_THREADS") {
        Ok(n) => n,
        Err(_) => format!(
            "{}(cores)",
            std::thread::available_parallelism().map_or(1, |n| n.get())
        ),
    }
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let at = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted.get(at).copied().unwrap_or(0.0)
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(e) => {
            eprintln!("stall-check: {e}");
            return ExitCode::from(2);
        }
    };
    // As `#[tokio::main]` builds the policy-server's: multi-threaded, one
    // worker per core, or TOKIO_WORKER_THREADS.
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("stall-check: tokio runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let started = Instant::now();
    let outcome = runtime.block_on(run(&args));
    let wall = started.elapsed().as_secs_f64();
    // The caches' tasks (and a stalled LIST's wait) are not waited for.
    runtime.shutdown_background();
    match outcome {
        Ok(mut o) => {
            o.ready_ms.sort_by(f64::total_cmp);
            if !o.not_ready.is_empty() {
                let shown: Vec<String> = o
                    .not_ready
                    .iter()
                    .take(20)
                    .map(|i| format!("subnet-{i}"))
                    .collect();
                eprintln!(
                    "stall-check: not ready within the bound: {}",
                    shown.join(" ")
                );
            }
            println!(
                "stall-check: hyper={} caches={} c={} not_ready={} bound_s={} apiserver={} \
                 second_ready={} hyper_util={} want={} kube={} tokio={} workers={} ready_p50_ms={:.1} \
                 ready_p99_ms={:.1} ready_max_ms={:.0} wall_s={:.1}",
                locked_version("hyper"),
                args.caches,
                args.concurrency,
                o.not_ready.len(),
                args.bound.as_secs_f64(),
                args.apiserver,
                o.second_ready,
                locked_version("hyper-util"),
                locked_version("want"),
                locked_version("kube-runtime"),
                locked_version("tokio"),
                workers(),
                percentile(&o.ready_ms, 0.5),
                percentile(&o.ready_ms, 0.99),
                o.ready_ms.last().copied().unwrap_or(0.0),
                wall,
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("stall-check: {e}");
            ExitCode::from(1)
        }
    }
}
