//! A watch cache: what policy-evaluator's `Reflector` (reflector.rs) keeps
//! with kube-rs' `watcher` and `reflector::Store` (kube-runtime 3.1
//! watcher.rs): a paged LIST (`limit=500`), then a WATCH from its
//! `resourceVersion` with bookmarks, re-LISTed from scratch on `410 Gone`,
//! retried after errors with kube-rs' default backoff (0.8 s doubling to
//! 30 s), for the server's lifetime, on a thread of its own. A 403 on the
//! LIST is retried like any error: the cache never fills, and whoever waits
//! for it waits (policy-server: without end; kop-serve: a minute past the
//! evaluation's deadline, longer than any webhook timeout; a slow first LIST
//! that has not failed is waited for as long as it takes).

use crate::kube::{ApiClient, ApiFailure};
use fakehost::answers;
use serde_json::Value;
use serde_json::value::RawValue;
use std::collections::{BTreeSet, HashMap};
use std::io::BufRead;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// What a cache watches.
#[derive(Clone, Debug)]
pub struct Watched {
    /// The collection's path: `/apis/kubeovn.io/v1/ips`,
    /// `/api/v1/namespaces/default/services`.
    pub path: String,
    /// `labelSelector`
    pub label_selector: Option<String>,
    /// `fieldSelector`
    pub field_selector: Option<String>,
    /// The field masks applied to every object kept.
    pub field_masks: Option<BTreeSet<String>>,
    /// For the log: policy-evaluator's reflector id.
    pub id: String,
}

/// The objects by (namespace, name), as kube-rs' store keys them, each kept
/// as its JSON text (what every list answer copies).
type Objects = HashMap<(String, String), Box<RawValue>>;

#[derive(Default)]
struct Store {
    ready: bool,
    /// LISTs that failed (the cache retries them).
    failures: u64,
    objects: Objects,
}

/// Called once, when the cache first fills.
pub type OnFilled = Box<dyn FnOnce(&Arc<WatchCache>) + Send>;

/// The objects of one (kind, namespace, selectors, masks), kept current.
pub struct WatchCache {
    store: Mutex<Store>,
    filled: Condvar,
}

impl WatchCache {
    /// Starts the cache's thread; the first LIST begins at once.
    pub fn start(api: Arc<ApiClient>, watched: Watched, on_filled: OnFilled) -> Arc<Self> {
        let cache = Arc::new(WatchCache {
            store: Mutex::new(Store::default()),
            filled: Condvar::new(),
        });
        let running = cache.clone();
        let name = format!("watch {}", watched.id);
        let spawned = std::thread::Builder::new()
            .name(name)
            .stack_size(512 * 1024)
            .spawn(move || Self::run(&running, &api, &watched, on_filled));
        if let Err(e) = spawned {
            eprintln!("kop-serve: cannot start a watch cache thread: {e}");
        }
        cache
    }

    /// Waits until the first LIST has filled the cache; whether it did. After
    /// `deadline` the wait ends as soon as a LIST has failed (at once if one
    /// already has): a LIST under way is waited for, as policy-server waits.
    pub fn wait_filled(&self, deadline: Option<Instant>) -> bool {
        let Ok(mut store) = self.store.lock() else {
            return false;
        };
        loop {
            if store.ready {
                return true;
            }
            let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
            store = match left {
                Some(left) if left.is_zero() => {
                    if store.failures > 0 {
                        return false;
                    }
                    match self.filled.wait(store) {
                        Ok(s) => s,
                        Err(_) => return false,
                    }
                }
                Some(left) => match self.filled.wait_timeout(store, left) {
                    Ok((s, _)) => s,
                    Err(_) => return false,
                },
                None => match self.filled.wait(store) {
                    Ok(s) => s,
                    Err(_) => return false,
                },
            };
        }
    }

    /// `f` of the objects' JSON texts, in the store's (hash) order; the
    /// store is locked meanwhile.
    pub fn with_objects<R>(&self, f: impl FnOnce(Vec<&RawValue>) -> R) -> Option<R> {
        let store = self.store.lock().ok()?;
        Some(f(store.objects.values().map(AsRef::as_ref).collect()))
    }

    fn replace(&self, objects: Objects) {
        if let Ok(mut store) = self.store.lock() {
            store.objects = objects;
            store.ready = true;
        }
        self.filled.notify_all();
    }

    fn list_failed(&self) {
        if let Ok(mut store) = self.store.lock() {
            store.failures += 1;
        }
        self.filled.notify_all();
    }

    fn apply(&self, key: (String, String), object: Option<Box<RawValue>>) {
        if let Ok(mut store) = self.store.lock() {
            match object {
                Some(o) => store.objects.insert(key, o),
                None => store.objects.remove(&key),
            };
        }
    }

    fn run(cache: &Arc<Self>, api: &ApiClient, watched: &Watched, on_filled: OnFilled) {
        let mut on_filled = Some(on_filled);
        let mut backoff = Backoff::default();
        loop {
            // LIST, page by page; the store keeps its old objects until the
            // last page is in (kube-rs' `Event::Init` … `InitDone`).
            let (objects, mut version) = match list(api, watched) {
                Ok(listed) => listed,
                Err(e) => {
                    log_failure("watch list error", watched, &e);
                    cache.list_failed();
                    std::thread::sleep(backoff.next_delay());
                    continue;
                }
            };
            cache.replace(objects);
            if let Some(f) = on_filled.take() {
                f(cache);
            }
            backoff.reset();
            // WATCH from the list's version until the API server says it is
            // too old (410): then LIST again.
            loop {
                let url = format!(
                    "{}?&watch=true&timeoutSeconds=290&allowWatchBookmarks=true{}&resourceVersion={}",
                    watched.path,
                    selectors(watched),
                    encode(&version)
                );
                let stream = match api.open(&url) {
                    Ok(s) => s,
                    Err(e) => {
                        log_failure("watch initlist error", watched, &e);
                        if e.code() == Some(410) {
                            break;
                        }
                        std::thread::sleep(backoff.next_delay());
                        continue;
                    }
                };
                match cache.follow(stream, watched, &mut version, &mut backoff) {
                    Follow::Ended => continue,
                    Follow::Relist => break,
                }
            }
        }
    }

    /// Applies a watch's events until it ends or must be re-listed.
    fn follow(
        &self,
        stream: impl BufRead,
        watched: &Watched,
        version: &mut String,
        backoff: &mut Backoff,
    ) -> Follow {
        for line in stream.lines() {
            let line = match line {
                Ok(l) => l,
                Err(e) => {
                    eprintln!("kop-serve: watcher error on {}: {e}", watched.id);
                    std::thread::sleep(backoff.next_delay());
                    return Follow::Ended;
                }
            };
            if line.trim().is_empty() {
                continue;
            }
            let event: Value = match serde_json::from_str(&line) {
                Ok(e) => e,
                Err(e) => {
                    eprintln!("kop-serve: watcher error on {}: {e}", watched.id);
                    std::thread::sleep(backoff.next_delay());
                    continue;
                }
            };
            let object = event.get("object").cloned().unwrap_or(Value::Null);
            let object_version = object
                .pointer("/metadata/resourceVersion")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            match event.get("type").and_then(Value::as_str).unwrap_or("") {
                kind @ ("ADDED" | "MODIFIED" | "DELETED") => {
                    if object_version.is_empty() {
                        eprintln!(
                            "kop-serve: watcher error on {}: no resourceVersion",
                            watched.id
                        );
                        return Follow::Relist;
                    }
                    *version = object_version;
                    let kept = (kind != "DELETED").then(|| keep(&object, watched));
                    self.apply(key_of(&object), kept);
                    backoff.reset();
                }
                "BOOKMARK" => *version = object_version,
                "ERROR" => {
                    let failure = ApiFailure::Status(object);
                    log_failure("watcher watchevent error", watched, &failure);
                    if failure.code() == Some(410) {
                        return Follow::Relist;
                    }
                    std::thread::sleep(backoff.next_delay());
                }
                other => eprintln!(
                    "kop-serve: watcher error on {}: event type {other:?}",
                    watched.id
                ),
            }
        }
        Follow::Ended
    }
}

enum Follow {
    Ended,
    Relist,
}

/// kube-rs' `DefaultBackoff`: 0.8 s, doubling, at most 30 s, with jitter.
#[derive(Default)]
struct Backoff {
    failures: u32,
}

impl Backoff {
    fn next_delay(&mut self) -> Duration {
        let base = 0.8 * 2f64.powi(self.failures.min(6) as i32);
        self.failures += 1;
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let jitter = 0.5 + f64::from(nanos % 1000) / 1000.0;
        Duration::from_secs_f64((base * jitter).min(30.0))
    }

    fn reset(&mut self) {
        self.failures = 0;
    }
}

fn log_failure(what: &str, watched: &Watched, failure: &ApiFailure) {
    let level = if failure.code() == Some(403) {
        "WARN"
    } else {
        "DEBUG"
    };
    let code = failure
        .code()
        .map_or(String::new(), |c| format!(" with {c}"));
    eprintln!(
        "kop-serve: {level} {what}{code} on {}: {}",
        watched.id,
        failure.display()
    );
}

/// An object as the cache keeps it: policy-evaluator's `modify_object`, as
/// JSON text.
fn keep(object: &Value, watched: &Watched) -> Box<RawValue> {
    let kept = answers::cached_object(object, watched.field_masks.as_ref());
    serde_json::value::to_raw_value(&kept).unwrap_or_else(|_| RawValue::NULL.to_owned())
}

fn key_of(object: &Value) -> (String, String) {
    let text = |p: &str| {
        object
            .pointer(p)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    (text("/metadata/namespace"), text("/metadata/name"))
}

/// `&labelSelector=…&fieldSelector=…` for the query.
fn selectors(watched: &Watched) -> String {
    let mut query = String::new();
    if let Some(f) = &watched.field_selector {
        query.push_str(&format!("&fieldSelector={}", encode(f)));
    }
    if let Some(l) = &watched.label_selector {
        query.push_str(&format!("&labelSelector={}", encode(l)));
    }
    query
}

/// `application/x-www-form-urlencoded`, as kube-rs' `form_urlencoded` writes it.
pub fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'*' | b'-' | b'.' | b'_' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// Every page of the LIST; the objects as the cache keeps them, and the
/// list's `resourceVersion`.
fn list(api: &ApiClient, watched: &Watched) -> Result<(Objects, String), ApiFailure> {
    let mut objects = HashMap::new();
    let mut token: Option<String> = None;
    loop {
        let mut url = format!("{}?&limit=500{}", watched.path, selectors(watched));
        if let Some(t) = &token {
            url.push_str(&format!("&continue={}", encode(t)));
        }
        let page = api.get_json(&url)?;
        for object in page
            .get("items")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            objects.insert(key_of(object), keep(object, watched));
        }
        let meta = |k: &str| {
            page.pointer(&format!("/metadata/{k}"))
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(String::from)
        };
        token = meta("continue");
        if token.is_none() {
            return match meta("resourceVersion") {
                Some(version) => Ok((objects, version)),
                None => Err(ApiFailure::Decode(
                    "no resourceVersion in the list".to_string(),
                )),
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::io::{BufReader, Read, Write};
    use std::net::TcpListener;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn object(name: &str, version: &str) -> Value {
        json!({"apiVersion": "kubeovn.io/v1", "kind": "IP",
               "metadata": {"name": name, "resourceVersion": version, "managedFields": [{"manager": "x"}]},
               "spec": {"ipAddress": "10.0.0.1", "macAddress": "m"}})
    }

    /// An API server that answers a script: a LIST, a WATCH with events
    /// ending in 410 Gone, a paged re-LIST, then a WATCH held open.
    fn scripted_api_server(seen: Arc<Mutex<Vec<String>>>) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let lists = Arc::new(AtomicUsize::new(0));
        let watches = Arc::new(AtomicUsize::new(0));
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let mut stream = stream.unwrap();
                let (seen, lists, watches) = (seen.clone(), lists.clone(), watches.clone());
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    let mut head = String::new();
                    while !head.ends_with("\r\n\r\n") {
                        let mut byte = [0u8];
                        if reader.read(&mut byte).unwrap_or(0) == 0 {
                            return;
                        }
                        head.push(byte[0] as char);
                    }
                    let target = head.split(' ').nth(1).unwrap_or("").to_string();
                    seen.lock().unwrap().push(target.clone());
                    if target.contains("watch=true") {
                        let body = if watches.fetch_add(1, Ordering::SeqCst) == 0 {
                            [
                                json!({"type": "ADDED", "object": object("c", "2")}),
                                json!({"type": "MODIFIED", "object": object("a", "3")}),
                                json!({"type": "DELETED", "object": object("b", "4")}),
                                json!({"type": "BOOKMARK", "object": {"kind": "IP", "metadata": {"resourceVersion": "5"}}}),
                                json!({"type": "ERROR", "object": {"kind": "Status", "code": 410, "reason": "Expired", "message": "too old"}}),
                            ]
                            .iter()
                            .map(|e| e.to_string() + "\n")
                            .collect::<String>()
                        } else {
                            std::thread::sleep(Duration::from_secs(30));
                            String::new()
                        };
                        let _ = write!(
                            stream,
                            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{body}"
                        );
                        return;
                    }
                    let body = match (lists.fetch_add(1, Ordering::SeqCst), target.contains("continue=")) {
                        (0, _) => json!({"metadata": {"resourceVersion": "1"}, "items": [object("a", "1"), object("b", "1")]}),
                        (_, false) => json!({"metadata": {"continue": "page 2"}, "items": [object("x", "9")]}),
                        (_, true) => json!({"metadata": {"resourceVersion": "10"}, "items": [object("y", "10")]}),
                    }
                    .to_string();
                    let _ = write!(
                        stream,
                        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                });
            }
        });
        url
    }

    fn objects(cache: &WatchCache) -> Vec<Value> {
        cache
            .with_objects(|items| {
                items
                    .iter()
                    .map(|i| serde_json::from_str(i.get()).unwrap())
                    .collect()
            })
            .unwrap()
    }

    fn names(cache: &WatchCache) -> Vec<String> {
        let mut names: Vec<String> = objects(cache)
            .iter()
            .map(|o| o["metadata"]["name"].as_str().unwrap_or("").to_string())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn lists_watches_and_relists_on_gone() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let url = scripted_api_server(seen.clone());
        let api = Arc::new(ApiClient::with_token(&url, Some("t")).unwrap());
        let cache = WatchCache::start(
            api,
            Watched {
                path: "/apis/kubeovn.io/v1/ips".into(),
                label_selector: Some("ovn.kubernetes.io/subnet=s1".into()),
                field_selector: None,
                field_masks: Some(["spec.ipAddress".to_string()].into()),
                id: "test".into(),
            },
            Box::new(|_| {}),
        );
        assert!(cache.wait_filled(Some(Instant::now() + Duration::from_secs(10))));
        let deadline = Instant::now() + Duration::from_secs(10);
        while names(&cache) != ["x", "y"] && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(
            names(&cache),
            ["x", "y"],
            "re-listed after 410 Gone, every page"
        );
        let kept = &objects(&cache)[0];
        assert_eq!(kept["metadata"]["managedFields"], json!([]));
        assert_eq!(kept["spec"], json!({"ipAddress": "10.0.0.1"}));
        let seen = seen.lock().unwrap().clone();
        assert_eq!(
            seen[0],
            "/apis/kubeovn.io/v1/ips?&limit=500&labelSelector=ovn.kubernetes.io%2Fsubnet%3Ds1"
        );
        assert_eq!(
            seen[1],
            "/apis/kubeovn.io/v1/ips?&watch=true&timeoutSeconds=290&allowWatchBookmarks=true\
             &labelSelector=ovn.kubernetes.io%2Fsubnet%3Ds1&resourceVersion=1"
        );
        assert!(seen[3].ends_with("&continue=page+2"), "{seen:?}");
        assert!(seen[4].ends_with("&resourceVersion=10"), "{seen:?}");
    }

    #[test]
    fn a_cache_that_never_fills_is_waited_for_until_the_deadline() {
        // Nothing listens there: every LIST fails and is retried.
        let api = Arc::new(ApiClient::with_token("http://127.0.0.1:9", None).unwrap());
        let cache = WatchCache::start(
            api,
            Watched {
                path: "/api/v1/namespaces".into(),
                label_selector: None,
                field_selector: None,
                field_masks: None,
                id: "never".into(),
            },
            Box::new(|_| panic!("never filled")),
        );
        let started = Instant::now();
        assert!(!cache.wait_filled(Some(started + Duration::from_millis(300))));
        assert!(started.elapsed() >= Duration::from_millis(300));
        // Its LIST has failed already: past the deadline, no wait.
        let again = Instant::now();
        assert!(!cache.wait_filled(Some(again)));
        assert!(again.elapsed() < Duration::from_millis(100));
    }

    #[test]
    fn encodes_like_form_urlencoded() {
        assert_eq!(
            encode("ovn.kubernetes.io/subnet=s1,a!=b"),
            "ovn.kubernetes.io%2Fsubnet%3Ds1%2Ca%21%3Db"
        );
        assert_eq!(encode("a b"), "a+b");
    }

    #[test]
    fn backoff_grows_to_thirty_seconds() {
        let mut b = Backoff::default();
        let first = b.next_delay();
        assert!(first >= Duration::from_millis(400) && first <= Duration::from_millis(1200));
        for _ in 0..10 {
            b.next_delay();
        }
        assert!(b.next_delay() <= Duration::from_secs(30));
        b.reset();
        assert!(b.next_delay() <= Duration::from_millis(1200));
    }
}
