//! A watch cache: policy-evaluator's `Reflector` (reflector.rs
//! `create_and_run`): kube-rs' `watcher` over the kind's `Api<DynamicObject>`
//! with the list's selectors (a paged LIST, then a WATCH from its
//! `resourceVersion` with bookmarks, re-LISTed on `410 Gone`), each object
//! trimmed by `modify_object`, applied to a `reflector::Store` by kube-rs'
//! `reflector`, retried after errors with its `default_backoff`, for the
//! server's lifetime, as a task on the lookups' runtime. A 403 on the LIST is
//! retried like any error: the store never fills, and whoever waits for it
//! waits (policy-server: without end; kop-serve: a minute past the
//! evaluation's deadline, longer than any webhook timeout; a slow first LIST
//! that has not failed is waited for as long as it takes).

use fakehost::answers;
use futures::{StreamExt, TryStreamExt};
use kube::api::{Api, ApiResource, DynamicObject, ObjectList};
use kube::core::TypeMeta;
use kube::runtime::reflector::{self, Store, store::Writer};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, ResourceExt};
use std::collections::BTreeSet;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;
use tokio::runtime::Runtime;

/// What a cache watches.
#[derive(Clone, Debug)]
pub struct Watched {
    /// The kind, as discovery found it.
    pub resource: ApiResource,
    /// The namespace of a `list_resources_by_namespace`.
    pub namespace: Option<String>,
    /// `labelSelector`
    pub label_selector: Option<String>,
    /// `fieldSelector`
    pub field_selector: Option<String>,
    /// The field masks applied to every object kept.
    pub field_masks: Option<BTreeSet<String>>,
}

#[derive(Default)]
struct Filling {
    ready: bool,
    /// LISTs that failed (the watcher retries them).
    failures: u64,
}

/// Called once, when the cache first fills.
pub type OnFilled = Box<dyn FnOnce(&Arc<WatchCache>) + Send>;

/// The objects of one (kind, namespace, selectors, masks), kept current.
pub struct WatchCache {
    store: Store<DynamicObject>,
    filling: Mutex<Filling>,
    filled: Condvar,
}

impl WatchCache {
    /// Starts the cache's watcher on `runtime`; the first LIST begins at once.
    pub fn start(
        runtime: &Runtime,
        client: Client,
        watched: Watched,
        on_filled: OnFilled,
    ) -> Arc<Self> {
        let api = match &watched.namespace {
            Some(ns) => Api::<DynamicObject>::namespaced_with(client, ns, &watched.resource),
            None => Api::<DynamicObject>::all_with(client, &watched.resource),
        };
        let writer = Writer::new(watched.resource.clone());
        let cache = Arc::new(WatchCache {
            store: writer.as_reader(),
            filling: Mutex::new(Filling::default()),
            filled: Condvar::new(),
        });
        let config = watcher::Config {
            label_selector: watched.label_selector.clone(),
            field_selector: watched.field_selector.clone(),
            ..Default::default()
        };
        let masks = watched.field_masks.clone();
        let stream = watcher(api, config)
            .map_ok(move |event| event.modify(|object| modify_object(object, masks.as_ref())));
        let running = cache.clone();
        runtime.spawn(async move {
            let mut on_filled = Some(on_filled);
            let events = reflector::reflector(writer, stream).default_backoff();
            let mut events = std::pin::pin!(events);
            while let Some(event) = events.next().await {
                match event {
                    // Applied to the store before it is handed on.
                    Ok(watcher::Event::InitDone) => {
                        running.mark_filled();
                        if let Some(f) = on_filled.take() {
                            f(&running);
                        }
                    }
                    Ok(_) => {}
                    Err(e) => {
                        let level = if matches!(&e, watcher::Error::InitialListFailed(kube::Error::Api(s)) if s.code == 403) {
                            "WARN"
                        } else {
                            "DEBUG"
                        };
                        eprintln!(
                            "kop-serve: {level} watcher error group={:?} version={:?} kind={:?} namespace={:?} \
                             label_selector={:?} field_selector={:?} error={e:?}",
                            watched.resource.group,
                            watched.resource.version,
                            watched.resource.kind,
                            watched.namespace,
                            watched.label_selector,
                            watched.field_selector,
                        );
                        running.list_failed();
                    }
                }
            }
        });
        cache
    }

    /// Waits until the first LIST has filled the cache; whether it did. After
    /// `deadline` the wait ends as soon as a LIST has failed (at once if one
    /// already has): a LIST under way is waited for, as policy-server waits.
    pub fn wait_filled(&self, deadline: Option<Instant>) -> bool {
        let Ok(mut filling) = self.filling.lock() else {
            return false;
        };
        loop {
            if filling.ready {
                return true;
            }
            let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
            filling = match left {
                Some(left) if left.is_zero() => {
                    if filling.failures > 0 {
                        return false;
                    }
                    match self.filled.wait(filling) {
                        Ok(s) => s,
                        Err(_) => return false,
                    }
                }
                Some(left) => match self.filled.wait_timeout(filling, left) {
                    Ok((s, _)) => s,
                    Err(_) => return false,
                },
                None => match self.filled.wait(filling) {
                    Ok(s) => s,
                    Err(_) => return false,
                },
            };
        }
    }

    /// client.rs `list_resources_from_reflector`: the store's objects, in its
    /// (hash) order, in an `ObjectList` of `<Kind>List`, as JSON.
    pub fn list_answer(&self, api_version: &str, kind: &str) -> serde_json::Result<Vec<u8>> {
        let list = ObjectList {
            types: TypeMeta {
                api_version: api_version.to_string(),
                kind: format!("{kind}List"),
            },
            metadata: Default::default(),
            items: self
                .store
                .state()
                .iter()
                .map(|object| DynamicObject::clone(object))
                .collect(),
        };
        serde_json::to_vec(&list)
    }

    fn mark_filled(&self) {
        if let Ok(mut filling) = self.filling.lock() {
            filling.ready = true;
        }
        self.filled.notify_all();
    }

    /// An error before the store filled is a failed LIST (the WATCH starts
    /// only after it); after, it changes nothing a waiter sees.
    fn list_failed(&self) {
        if let Ok(mut filling) = self.filling.lock() {
            filling.failures += 1;
        }
        self.filled.notify_all();
    }
}

/// reflector.rs `modify_object`: `managedFields` emptied, the last-applied
/// annotation removed, the field masks applied to the object's data.
fn modify_object(object: &mut DynamicObject, masks: Option<&BTreeSet<String>>) {
    object.managed_fields_mut().clear();
    object
        .annotations_mut()
        .remove("kubectl.kubernetes.io/last-applied-configuration");
    if masks.is_some() {
        object.data = answers::fetched_object(&object.data, masks);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};
    use std::io::{BufReader, Read, Write};
    use std::net::TcpListener;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

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
        let list: Value =
            serde_json::from_slice(&cache.list_answer("kubeovn.io/v1", "IP").unwrap()).unwrap();
        assert_eq!(list["kind"], "IPList");
        list["items"].as_array().unwrap().clone()
    }

    fn ips() -> ApiResource {
        ApiResource {
            group: "kubeovn.io".into(),
            version: "v1".into(),
            api_version: "kubeovn.io/v1".into(),
            kind: "IP".into(),
            plural: "ips".into(),
        }
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
        let runtime = crate::kube::runtime().unwrap();
        let client = crate::kube::client_for(&runtime, &url).unwrap();
        let cache = WatchCache::start(
            &runtime,
            client,
            Watched {
                resource: ips(),
                namespace: None,
                label_selector: Some("ovn.kubernetes.io/subnet=s1".into()),
                field_selector: None,
                field_masks: Some(["spec.ipAddress".to_string()].into()),
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
        // kube-rs' requests, as policy-server sends them: pages of 500 with
        // the selector, then a watch of 290 s with bookmarks from the list's
        // version; after the 410, the list again, page by page.
        let seen = seen.lock().unwrap().clone();
        let has = |i: usize, parts: &[&str]| {
            parts
                .iter()
                .all(|p| seen.get(i).is_some_and(|s| s.contains(p)))
        };
        let selector = "labelSelector=ovn.kubernetes.io%2Fsubnet%3Ds1";
        assert!(
            has(0, &["/apis/kubeovn.io/v1/ips?", "limit=500", selector]),
            "{seen:?}"
        );
        assert!(
            has(
                1,
                &[
                    "watch=true",
                    "timeoutSeconds=290",
                    "allowWatchBookmarks=true",
                    selector,
                    "resourceVersion=1"
                ]
            ),
            "{seen:?}"
        );
        assert!(has(3, &["continue=page"]), "{seen:?}");
        assert!(has(4, &["watch=true", "resourceVersion=10"]), "{seen:?}");
    }

    #[test]
    fn a_cache_that_never_fills_is_waited_for_until_the_deadline() {
        // Nothing listens there: every LIST fails and is retried.
        let runtime = crate::kube::runtime().unwrap();
        let client = crate::kube::client_for(&runtime, "http://127.0.0.1:9").unwrap();
        let cache = WatchCache::start(
            &runtime,
            client,
            Watched {
                resource: ApiResource {
                    group: String::new(),
                    version: "v1".into(),
                    api_version: "v1".into(),
                    kind: "Namespace".into(),
                    plural: "namespaces".into(),
                },
                namespace: None,
                label_selector: None,
                field_selector: None,
                field_masks: None,
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
}
