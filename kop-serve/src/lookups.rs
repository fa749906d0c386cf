//! The `kubewarden/kubernetes/*` host calls as policy-evaluator answers them
//! (callback_handler.rs, callback_handler/kubernetes.rs, kubernetes/client.rs):
//! the kind's plural and scope by API discovery, cached; `get_resource` a GET,
//! its successes cached 5 s per (apiVersion, kind, name, namespace) behind one
//! lock (`#[cached(time = 5, sync_writes = "default")]`), the field masks applied
//! after; the lists from watch caches made on first use per (apiVersion, kind,
//! namespace, label selector, field selector, field masks) and kept once
//! filled, for the server's life.
//!
//! Both caches keep what they hold for the process's life, as
//! policy-server's do, so that a test through kop-serve sees the state a
//! request leaves behind (CONTRACT §4, "Bounded by what exists"):
//! - watch caches: client.rs `get_reflector_reader` inserts each filled
//!   `Reflector` into `reflectors` by `Reflector::compute_id`
//!   (reflector.rs:67-78) and nothing ever removes one;
//! - `get_resource`'s cache: kubernetes.rs:101-117 at 3460bb71 (1.36) is
//!   `#[cached(time = 5, result = true, sync_writes = "default", key =
//!   "String", ...)]`, a `cached` 0.59 `TimedCache`: an expired entry is
//!   dropped only when that same key is looked up again (stores/timed.rs
//!   `cache_get`, `Status::Expired`), never otherwise, and nothing bounds
//!   its size; `result = true` stores only an `Ok` (cached_proc_macro 0.27
//!   cached.rs:171-176), so a failed GET (a 404 included) is never kept.
//!   1.37's `#[cached(ttl = 5, ...)]` (`cached` 2.0 `TtlCache`) does the same:
//!   every distinct key stays in memory for the process's life
//!   (kubewarden/adm-controller#1950). 1.38 (1.38.0-rc.1, #1952) evicts
//!   each entry after its 5 s; kop-serve keeps 1.36's and 1.37's
//!   behaviour, the releases users run. `disable_cache`
//!   calls `get_resource` itself (callback_handler.rs:263-291): it neither
//!   reads nor writes the cache.

use crate::kube::HostError;
use crate::watch::{WatchCache, Watched};
use fakehost::answers;
use fakehost::requests::{GetResourceRequest, ListRequest};
use kube::api::{Api, ApiResource, DynamicObject};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};
use tokio::runtime::Runtime;

/// How long past the evaluation's deadline a list whose cache cannot fill
/// is waited for: longer than any webhook timeout (30 s at most), so that,
/// as with policy-server, the API server never gets an answer.
const NEVER_ANSWERED: Duration = Duration::from_secs(60);

/// A kind as discovery describes it (policy-evaluator's `KubeResource`).
#[derive(Clone, Debug)]
pub struct Resource {
    /// Group, version, kind and plural.
    pub api: ApiResource,
    /// Namespaced or cluster-scoped.
    pub namespaced: bool,
}

/// Why a list has no answer.
#[derive(Debug)]
pub enum ListFailure {
    /// The call fails with this error.
    Failed(HostError),
    /// The watch cache did not fill before the evaluation's deadline.
    TimedOut,
}

/// The lookups of every policy, sharing one client and its caches.
pub struct Lookups {
    runtime: Arc<Runtime>,
    client: kube::Client,
    resources: RwLock<HashMap<(String, String), Resource>>,
    /// `get_resource`'s cache: every key once fetched, with when (see above).
    gets: Mutex<HashMap<String, (Instant, Value)>>,
    /// How long a cached GET answers: `GET_CACHE_TTL` (shorter in tests).
    get_ttl: Duration,
    /// The watch caches that have filled, by `Reflector::compute_id`.
    caches: Arc<Mutex<HashMap<String, Arc<WatchCache>>>>,
}

const GET_CACHE_TTL: Duration = Duration::from_secs(5);

impl Lookups {
    /// Lookups through this client, whose tasks run on `runtime`.
    pub fn new(runtime: Arc<Runtime>, client: kube::Client) -> Self {
        Lookups {
            runtime,
            client,
            resources: RwLock::new(HashMap::new()),
            gets: Mutex::new(HashMap::new()),
            get_ttl: GET_CACHE_TTL,
            caches: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    /// `Client::build_kube_resource`: `list_core_api_resources` or
    /// `list_api_group_resources`, the first resource of that kind; kept
    /// once found.
    pub fn resource(&self, api_version: &str, kind: &str) -> Result<Resource, HostError> {
        let key = (api_version.to_string(), kind.to_string());
        if let Some(r) = self
            .resources
            .read()
            .ok()
            .and_then(|m| m.get(&key).cloned())
        {
            return Ok(r);
        }
        let list = if api_version == "v1" {
            self.runtime
                .block_on(self.client.list_core_api_resources(api_version))
                .map_err(|e| HostError::chain(&e))?
        } else {
            self.runtime
                .block_on(self.client.list_api_group_resources(api_version))
                .map_err(|e| {
                    HostError::plain(format!(
                        "error finding resource {api_version} / {kind}: {e}"
                    ))
                })?
        };
        let found = list
            .resources
            .into_iter()
            .find(|r| r.kind == kind)
            .ok_or_else(|| HostError::plain(answers::unknown_kind(api_version, kind)))?;
        let (group, version) = if api_version == "v1" {
            ("", "v1")
        } else {
            api_version.split_once('/').ok_or_else(|| {
                HostError::plain(format!(
                    "cannot determine group and version for {api_version}"
                ))
            })?
        };
        let resource = Resource {
            api: ApiResource {
                group: group.to_string(),
                version: version.to_string(),
                api_version: api_version.to_string(),
                kind: kind.to_string(),
                plural: found.name,
            },
            namespaced: found.namespaced,
        };
        if let Ok(mut known) = self.resources.write() {
            known.insert(key, resource.clone());
        }
        Ok(resource)
    }

    /// `get_resource`: cached unless `disable_cache`, masks applied after.
    pub fn get(&self, req: &GetResourceRequest) -> Result<Value, HostError> {
        let object = if req.disable_cache {
            self.fetch(req)?
        } else {
            let key = format!(
                "get_resource_cached({},{}),{},{:?}",
                req.api_version,
                req.kind,
                req.name,
                req.namespace.as_deref()
            );
            // The lock is held while the API server answers, as `cached`'s
            // `sync_writes` holds its own: one cached GET at a time.
            let mut gets = self
                .gets
                .lock()
                .map_err(|_| HostError::plain("get_resource cache poisoned"))?;
            // `TimedCache::cache_get`: an expired entry goes only when its own
            // key is asked for again; every other key stays, expired or not.
            match gets.get(&key) {
                Some((at, object)) if at.elapsed() < self.get_ttl => object.clone(),
                _ => {
                    gets.remove(&key);
                    // Only a success is kept (`result = true`).
                    let object = self.fetch(req)?;
                    gets.insert(key, (Instant::now(), object.clone()));
                    object
                }
            }
        };
        Ok(answers::fetched_object(&object, req.field_masks.as_ref()))
    }

    /// How many `get_resource` answers the cache holds, expired or not.
    pub fn cached_gets(&self) -> usize {
        self.gets.lock().map(|g| g.len()).unwrap_or(0)
    }

    /// `Client::get_resource`: kube-rs' `get_opt`, a 404 being "absent".
    fn fetch(&self, req: &GetResourceRequest) -> Result<Value, HostError> {
        let resource = self.resource(&req.api_version, &req.kind)?;
        let client = self.client.clone();
        let api = if resource.namespaced {
            let namespace = req.namespace.as_deref().ok_or_else(|| {
                HostError::plain(format!(
                    "Resource {}/{} is namespaced, but no namespace was provided",
                    req.api_version, req.kind
                ))
            })?;
            Api::<DynamicObject>::namespaced_with(client, namespace, &resource.api)
        } else {
            Api::<DynamicObject>::all_with(client, &resource.api)
        };
        match self.runtime.block_on(api.get_opt(&req.name)) {
            Ok(Some(object)) => {
                serde_json::to_value(object).map_err(|e| HostError::plain(e.to_string()))
            }
            Ok(None) => Err(HostError::plain(answers::not_found(
                &req.api_version,
                &req.kind,
                &req.name,
                req.namespace.as_deref(),
            ))),
            Err(e) => Err(HostError::chain(&e)),
        }
    }

    /// `list_resources_all` (`namespace` None) or `list_resources_by_namespace`:
    /// the watch cache's objects, once it has filled, in the `<Kind>List`
    /// envelope, as JSON. The wait ends at `deadline`, if any.
    pub fn list(
        &self,
        req: &ListRequest,
        deadline: Option<Instant>,
    ) -> Result<Vec<u8>, ListFailure> {
        let ListRequest {
            api_version,
            kind,
            namespace,
            label_selector,
            field_selector,
            field_masks,
        } = req;
        let resource = self
            .resource(api_version, kind)
            .map_err(ListFailure::Failed)?;
        if namespace.is_some() && !resource.namespaced {
            return Err(ListFailure::Failed(HostError::plain(
                answers::cluster_wide(api_version, kind),
            )));
        }
        // `Reflector::compute_id`
        let id = format!(
            "{api_version}|{kind}|{:?}|{label_selector:?}|{field_selector:?}|{field_masks:?}",
            namespace.as_deref()
        );
        // client.rs `get_reflector_reader`: a cache is kept once it has
        // filled; until then every list that needs it starts another one
        // (so a list that was forbidden starts afresh once RBAC allows it).
        let filled = self.caches.lock().ok().and_then(|c| c.get(&id).cloned());
        let cache = match filled {
            Some(cache) => cache,
            None => {
                eprintln!("kop-serve: creating new reflector {id}");
                let caches = self.caches.clone();
                WatchCache::start(
                    &self.runtime,
                    self.client.clone(),
                    Watched {
                        resource: resource.api,
                        namespace: namespace.clone(),
                        label_selector: label_selector.clone(),
                        field_selector: field_selector.clone(),
                        field_masks: field_masks.clone(),
                    },
                    Box::new(move |cache| {
                        if let Ok(mut caches) = caches.lock() {
                            caches.insert(id, cache.clone());
                        }
                    }),
                )
            }
        };
        // policy-server waits for a cache whose LIST keeps failing (a 403)
        // without end: the evaluation's deadline cannot interrupt a host
        // call, and the API server gives up first (a webhook waits 30 s at
        // most). kop-serve waits that long past the deadline, then answers,
        // so that its worker is not held for ever.
        if !cache.wait_filled(deadline.map(|d| d + NEVER_ANSWERED)) {
            return Err(ListFailure::TimedOut);
        }
        cache
            .list_answer(api_version, kind)
            .map_err(|e| ListFailure::Failed(HostError::plain(e.to_string())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::BTreeSet;
    use std::io::{BufRead, BufReader, Write};
    use std::net::TcpListener;

    /// An API server answering each path (query dropped) from a table, and
    /// counting the requests.
    fn api_server(routes: Vec<(&'static str, u16, Value)>) -> (String, Arc<Mutex<Vec<String>>>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let mut stream = stream.unwrap();
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                let path = line
                    .split(' ')
                    .nth(1)
                    .unwrap_or("")
                    .split('?')
                    .next()
                    .unwrap_or("")
                    .to_string();
                loop {
                    let mut header = String::new();
                    if reader.read_line(&mut header).unwrap_or(0) == 0 || header.trim().is_empty() {
                        break;
                    }
                }
                log.lock().unwrap().push(path.clone());
                let (status, body) = routes
                    .iter()
                    .find(|(p, ..)| *p == path)
                    .map(|(_, s, b)| (*s, b.to_string()))
                    .unwrap_or((404, "404 page not found".to_string()));
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        (url, seen)
    }

    fn lookups_for(url: &str) -> Lookups {
        let runtime = crate::kube::runtime().unwrap();
        let client = crate::kube::client_for(&runtime, url).unwrap();
        Lookups::new(runtime, client)
    }

    fn get(
        name: &str,
        kind: &str,
        api_version: &str,
        namespace: Option<&str>,
    ) -> GetResourceRequest {
        GetResourceRequest {
            api_version: api_version.into(),
            kind: kind.into(),
            name: name.into(),
            namespace: namespace.map(String::from),
            disable_cache: false,
            field_masks: None,
        }
    }

    #[test]
    fn get_resource_as_policy_evaluator_answers() {
        let forbidden = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "ovn-eips.kubeovn.io \"eip-a\" is forbidden: no", "reason": "Forbidden",
            "details": {"name": "eip-a", "group": "kubeovn.io", "kind": "ovn-eips"}, "code": 403});
        let (url, seen) = api_server(vec![
            (
                "/api/v1",
                200,
                json!({"resources": [
                {"name": "configmaps", "kind": "ConfigMap", "namespaced": true},
                {"name": "namespaces", "kind": "Namespace", "namespaced": false}]}),
            ),
            (
                "/apis/kubeovn.io/v1",
                200,
                json!({"resources": [
                {"name": "ippools", "kind": "IPPool", "namespaced": false},
                {"name": "ovn-eips", "kind": "OvnEip", "namespaced": false}]}),
            ),
            (
                "/api/v1/namespaces/kube-system/configmaps/nat",
                200,
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "nat"}, "data": {"a": "1", "b": "2"}}),
            ),
            (
                "/apis/kubeovn.io/v1/ippools/pool-missing",
                404,
                json!({"kind": "Status", "apiVersion": "v1",
                "status": "Failure", "message": "ippools.kubeovn.io \"pool-missing\" not found", "reason": "NotFound", "code": 404}),
            ),
            ("/apis/kubeovn.io/v1/ovn-eips/eip-a", 403, forbidden.clone()),
        ]);
        let lookups = lookups_for(&url);

        let missing = lookups
            .get(&get("pool-missing", "IPPool", "kubeovn.io/v1", None))
            .unwrap_err();
        assert_eq!(
            missing.render().lines().next(),
            Some(
                "Cannot find kubeovn.io/v1/IPPool named 'pool-missing' inside of namespace 'None'"
            )
        );

        let denied = lookups
            .get(&get("eip-a", "OvnEip", "kubeovn.io/v1", None))
            .unwrap_err();
        assert_eq!(denied.message, answers::api_error(&forbidden));
        assert_eq!(
            denied.causes,
            ["ovn-eips.kubeovn.io \"eip-a\" is forbidden: no: Forbidden"]
        );

        let mut masked = get("nat", "ConfigMap", "v1", Some("kube-system"));
        masked.field_masks = Some(BTreeSet::from(["data.a".to_string()]));
        assert_eq!(lookups.get(&masked).unwrap()["data"], json!({"a": "1"}));
        // Cached 5 s: the same object again without asking, whatever the masks.
        assert_eq!(
            lookups
                .get(&get("nat", "ConfigMap", "v1", Some("kube-system")))
                .unwrap()["data"]["b"],
            "2"
        );
        let no_ns = lookups
            .get(&get("nat", "ConfigMap", "v1", None))
            .unwrap_err();
        assert_eq!(
            no_ns.message,
            "Resource v1/ConfigMap is namespaced, but no namespace was provided"
        );
        let unknown = lookups
            .get(&get("x", "Secret", "v1", Some("a")))
            .unwrap_err();
        assert_eq!(unknown.message, "Cannot find resource v1/Secret");
        let no_group = lookups
            .get(&get("x", "Thing", "nope.io/v1", None))
            .unwrap_err();
        assert!(no_group.message.starts_with("error finding resource nope.io/v1 / Thing: ApiError: 404 page not found: Failed to parse error data"), "{}", no_group.message);

        let seen = seen.lock().unwrap().clone();
        assert_eq!(
            seen.iter()
                .filter(|p| p.ends_with("/configmaps/nat"))
                .count(),
            1,
            "{seen:?}"
        );
        // Discovery is kept per (apiVersion, kind) found: ConfigMap once, then
        // Secret (never found, so asked for again each time).
        assert_eq!(
            seen.iter().filter(|p| *p == "/api/v1").count(),
            2,
            "{seen:?}"
        );

        let by_namespace = ListRequest {
            api_version: "kubeovn.io/v1".into(),
            kind: "IPPool".into(),
            namespace: Some("default".into()),
            label_selector: None,
            field_selector: None,
            field_masks: None,
        };
        let wide = lookups.list(&by_namespace, None).unwrap_err();
        match wide {
            ListFailure::Failed(e) => assert_eq!(
                e.message,
                "resource kubeovn.io/v1/IPPool is cluster wide. Cannot search for it inside of a namespace"
            ),
            ListFailure::TimedOut => panic!("not a wait"),
        }
    }

    #[test]
    fn get_resource_cache_keeps_every_key_and_answers_within_its_ttl() {
        let (url, seen) = api_server(vec![
            (
                "/api/v1",
                200,
                json!({"resources": [{"name": "configmaps", "kind": "ConfigMap", "namespaced": true}]}),
            ),
            (
                "/api/v1/namespaces/a/configmaps/one",
                200,
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "one"}}),
            ),
            (
                "/api/v1/namespaces/a/configmaps/two",
                200,
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "two"}}),
            ),
            (
                "/api/v1/namespaces/a/configmaps/three",
                200,
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "three"}}),
            ),
            (
                "/api/v1/namespaces/a/configmaps/missing",
                404,
                json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                "message": "configmaps \"missing\" not found", "reason": "NotFound", "code": 404}),
            ),
        ]);
        let mut lookups = lookups_for(&url);
        lookups.get_ttl = Duration::from_millis(300);
        let asked = |name: &str| {
            let path = format!("/api/v1/namespaces/a/configmaps/{name}");
            seen.lock().unwrap().iter().filter(|p| **p == path).count()
        };
        let one = get("one", "ConfigMap", "v1", Some("a"));
        lookups.get(&one).unwrap();
        lookups.get(&one).unwrap();
        assert_eq!(asked("one"), 1, "answered from the cache within its TTL");
        lookups
            .get(&get("two", "ConfigMap", "v1", Some("a")))
            .unwrap();
        assert_eq!(lookups.cached_gets(), 2);

        // A failed GET is not kept (`result = true`): asked again each time.
        let missing = get("missing", "ConfigMap", "v1", Some("a"));
        assert!(lookups.get(&missing).is_err());
        assert!(lookups.get(&missing).is_err());
        assert_eq!(asked("missing"), 2);
        // `disable_cache` neither reads nor writes the cache.
        let mut uncached = get("one", "ConfigMap", "v1", Some("a"));
        uncached.disable_cache = true;
        lookups.get(&uncached).unwrap();
        assert_eq!(asked("one"), 2);
        let mut three = get("three", "ConfigMap", "v1", Some("a"));
        three.disable_cache = true;
        lookups.get(&three).unwrap();
        assert_eq!(lookups.cached_gets(), 2, "disable_cache adds no key");

        // Past the TTL every key is still held (1.37 forgets none,
        // adm-controller#1950); the one asked for again is fetched again.
        std::thread::sleep(Duration::from_millis(400));
        assert_eq!(lookups.cached_gets(), 2);
        lookups.get(&one).unwrap();
        assert_eq!(asked("one"), 3);
        assert_eq!(asked("two"), 1);
        assert_eq!(lookups.cached_gets(), 2);
    }
}
