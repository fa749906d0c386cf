"""A real kube-apiserver serving bench_e2e.py's generated cluster (`--apiserver kube-apiserver`).

In place of the stand-in (e2e/harness/apiserver.py): etcd and kube-apiserver from
`make cluster-bin` (e2e/harness/controlplane.py), Kube-OVN's and Kubewarden's CRDs,
deploy/policy-server.yaml's ServiceAccount and deploy/rbac.yaml applied as
shipped, and the generated objects written through the API: many POSTs at
once, each connection kept alive, as the admin (client certificate); a
Subnet's status through its status subresource. Objects are written without
the server-set metadata the generator gives them (uid, resourceVersion,
creationTimestamp, generation): the API server sets its own, and
managedFields. The policy-server reads the cluster with a token of deploy/'s
ServiceAccount, so deploy/rbac.yaml decides every lookup.

The API requests the policy-server makes are counted from the API server's
audit log, which records that ServiceAccount's requests and nobody else's
(level Metadata): GETs, LISTs and WATCHes on resources (discovery is not
counted, as the stand-in does not count it), a watch when it starts; the
watches open are those started and not yet ended. apiserver_request_total of
/metrics would count the API server's own loopback requests too, and a watch
only when it ends. The object has the stand-in's interface for bench_e2e.py
and servers.PolicyServer: start(), write_kubeconfig(), stats.snapshot()
(get, list, watch, watches_open, watches_peak), processes() (name: pid, for
the CPU they use), stop().
"""

import http.client
import json
import shutil
import threading
import time
import urllib.parse
from datetime import datetime
from pathlib import Path

import yaml

from . import DEPLOY
from .apiserver import BY_KEY, DISCOVERY
from .controlplane import ControlPlane, ControlPlaneError
from .replay import clean, resource_path
NAMESPACE = "kubewarden"
SERVICE_ACCOUNT = "kube-ovn-policy-server"
USER = f"system:serviceaccount:{NAMESPACE}:{SERVICE_ACCOUNT}"
# The order objects are written in: what others refer to first.
LOAD_ORDER = ["customresourcedefinitions", "namespaces", "vpcs", "subnets", "ippools", "ips"]


class Connection:
    """One keep-alive HTTPS connection to the API server, as the admin."""

    def __init__(self, url, context):
        parsed = urllib.parse.urlsplit(url)
        self.host, self.port, self.context = parsed.hostname, parsed.port, context
        self.conn = None

    def request(self, method, path, body=None, content_type="application/json"):
        data = None if body is None else json.dumps(body).encode()
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = content_type
        for attempt in range(5):
            if self.conn is None:
                self.conn = http.client.HTTPSConnection(self.host, self.port, context=self.context, timeout=60)
            try:
                self.conn.request(method, path, data, headers)
                resp = self.conn.getresponse()
                raw = resp.read()
            except (http.client.HTTPException, OSError):
                self.conn.close()
                self.conn = None
                if attempt == 4:
                    raise
                continue
            if resp.status in (429, 500, 503, 504) and attempt < 4:  # the API server asks to come back
                time.sleep(0.2 * (attempt + 1))
                continue
            return resp.status, raw
        raise RuntimeError("unreachable")

    def close(self):
        if self.conn is not None:
            self.conn.close()


def audit_of_policy_server(folder, verbs=None):
    """(the audit log's path, kube-apiserver's arguments) to audit the
    policy-server's requests (`verbs` only, if given) and nobody else's."""
    rule = {"level": "Metadata", "users": [USER]}
    if verbs:
        rule["verbs"] = list(verbs)
    policy = Path(folder) / "audit-policy.yaml"
    policy.write_text(yaml.safe_dump({
        "apiVersion": "audit.k8s.io/v1", "kind": "Policy", "omitStages": ["RequestReceived"],
        "rules": [rule, {"level": "None"}],
    }))
    audit_log = Path(folder) / "audit.log"
    return audit_log, ["--audit-policy-file", policy, "--audit-log-path", audit_log, "--audit-log-format", "json"]


class AuditCounter:
    """The policy-server's requests, read from the audit log as it grows."""

    def __init__(self, path):
        self.path = Path(path)
        self.offset = 0
        self.counts = {}
        self.started = {}  # audit ID: requestURI, of each watch open
        self.opened = []  # requestURI of every watch started, in the log's order
        self.watches_open = self.watches_peak = 0
        self.gets = []  # seconds from request received to response complete, per GET
        self.lock = threading.Lock()

    def snapshot(self):
        with self.lock:
            try:
                with open(self.path, "rb") as f:
                    f.seek(self.offset)
                    chunk = f.read()
            except FileNotFoundError:
                chunk = b""
            end = chunk.rfind(b"\n") + 1  # whole lines only: the API server may be writing one
            self.offset += end
            for line in chunk[:end].splitlines():
                self._event(json.loads(line))
            return dict(self.counts, watches_open=self.watches_open, watches_peak=self.watches_peak)

    def open_watches(self):
        """The requestURI of every watch open now (its query names the list)."""
        self.snapshot()
        with self.lock:
            return list(self.started.values())

    def watches_started(self, since=0):
        """The requestURI of every watch started (from the `since`-th on), open or ended."""
        self.snapshot()
        with self.lock:
            return self.opened[since:]

    def get_seconds(self):
        """The API server's own time of every GET so far, in the log's order."""
        self.snapshot()
        with self.lock:
            return list(self.gets)

    def _event(self, event):
        if event.get("user", {}).get("username") != USER or not event.get("objectRef"):
            return  # another user's, or discovery (no resource)
        verb, stage, audit_id = event["verb"], event["stage"], event["auditID"]
        if verb == "watch":
            if stage == "ResponseStarted":
                self.counts["watch"] = self.counts.get("watch", 0) + 1
                self.started[audit_id] = event.get("requestURI", "")
                self.opened.append(self.started[audit_id])
                self.watches_open += 1
                self.watches_peak = max(self.watches_peak, self.watches_open)
            elif stage in ("ResponseComplete", "Panic"):
                if audit_id in self.started:
                    del self.started[audit_id]
                    self.watches_open -= 1
                else:  # refused before it started: a watch request all the same
                    self.counts["watch"] = self.counts.get("watch", 0) + 1
        elif stage in ("ResponseComplete", "Panic"):
            self.counts[verb] = self.counts.get(verb, 0) + 1
            if verb == "get" and stage == "ResponseComplete":
                received = datetime.fromisoformat(event["requestReceivedTimestamp"])
                self.gets.append((datetime.fromisoformat(event["stageTimestamp"]) - received).total_seconds())


class KubeApiServer:
    """etcd + kube-apiserver holding a bench-data cluster, and the policy-server's view of it."""

    name = "kube-apiserver"

    def __init__(self, folder, cluster, connections=16, log=print):
        self.folder = Path(folder)
        audit_log, args = audit_of_policy_server(self.folder)
        self.cp = ControlPlane(apiserver_args=args)
        self.stats = AuditCounter(audit_log)
        started = time.monotonic()
        self.cp.__enter__()  # stop() leaves it; the children die with this process
        try:
            self.cp.install_crds()
            self.cp.kubectl("create", "namespace", NAMESPACE)
            self.cp.kubectl("apply", "--server-side", "-f", DEPLOY / "policy-server.yaml", "-f", DEPLOY / "rbac.yaml")
            self.kubeconfig = self.cp.service_account_kubeconfig(NAMESPACE, SERVICE_ACCOUNT,
                                                                 self.folder / "sa.kubeconfig")
            self.setup_seconds = time.monotonic() - started
            log(f"kube-apiserver {self.cp.url}: started, CRDs and deploy/'s ServiceAccount and RBAC "
                f"in {self.setup_seconds:.1f} s")
            self.loaded = self.load(cluster, connections, log)
        except BaseException:
            self.stop()
            raise

    def load(self, cluster, connections, log):
        """Writes every object of the cluster through the API; per kind (written, already there)."""
        plan = []  # (key, plural, object)
        for key in sorted(cluster, key=lambda k: (LOAD_ORDER.index(k) if k in LOAD_ORDER else len(LOAD_ORDER), k)):
            if key not in BY_KEY:
                raise ControlPlaneError(f"cluster.json: unknown kind {key!r}")
            plan += [(key, obj) for obj in cluster[key]]
        results = {}
        errors = []
        lock = threading.Lock()
        jobs = iter(plan)
        context = self.cp.ssl_context()

        def worker():
            conn = Connection(self.cp.url, context)
            try:
                while not errors:
                    with lock:
                        job = next(jobs, None)
                    if job is None:
                        return
                    outcome = self._write(conn, *job)
                    with lock:
                        results.setdefault(job[0], [0, 0])[outcome] += 1
            except Exception as e:
                with lock:
                    errors.append(f"{type(e).__name__}: {e}")
            finally:
                conn.close()

        started = time.monotonic()
        threads = [threading.Thread(target=worker) for _ in range(connections)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        seconds = time.monotonic() - started
        if errors:
            raise ControlPlaneError(f"loading the cluster: {errors[0]}")
        self.check_counts(cluster)
        written = sum(w for w, _ in results.values())
        kinds = ", ".join(f"{w} {key}" if not there else f"{there} {key} already there"
                          if not w else f"{w} {key} ({there} already there)" for key, (w, there) in results.items())
        log(f"loaded {written} objects ({kinds}) through the API in {seconds:.1f} s "
            f"({written / max(seconds, 1e-9):.0f}/s, {connections} keep-alive connections; each status "
            f"through the status subresource)")
        self.load_seconds = seconds
        return results

    def _write(self, conn, key, obj):
        """POSTs one object (and its status): 0 written, 1 already there and the same where it matters."""
        _, api_version, kind, plural, namespaced = BY_KEY[key]
        namespace = obj["metadata"].get("namespace") if namespaced else None
        body = clean(obj)
        body.setdefault("apiVersion", api_version)
        body.setdefault("kind", kind)
        if key == "customresourcedefinitions":
            return self._amend_crd(conn, obj)
        if key == "services":
            # The API server's own Service default/kubernetes (a POST of it is refused for its
            # address before its name): the generated one must match it.
            code, raw = conn.request("GET", resource_path(api_version, plural, namespace, obj["metadata"]["name"]))
            if code == 200:
                there = json.loads(raw).get("spec", {}).get("clusterIPs")
                if there != obj.get("spec", {}).get("clusterIPs"):
                    raise ControlPlaneError(f"Service {namespace}/{obj['metadata']['name']} is {there}, "
                                            f"the cluster has {obj.get('spec', {}).get('clusterIPs')}")
                return 1
        code, raw = conn.request("POST", resource_path(api_version, plural, namespace), body)
        if code != 201:
            raise ControlPlaneError(f"POST {kind} {obj['metadata'].get('name')}: {code} {raw[:300]!r}")
        if obj.get("status") and any(s[0] == "status" for s in DISCOVERY[plural][2]):
            path = resource_path(api_version, plural, namespace, obj["metadata"]["name"]) + "/status"
            code, raw = conn.request("PATCH", path, {"status": obj["status"]}, "application/merge-patch+json")
            if code != 200:
                raise ControlPlaneError(f"PATCH {kind} {obj['metadata']['name']}/status: {code} {raw[:300]!r}")
        return 0

    def _amend_crd(self, conn, obj):
        """A CRD of the cluster is one install_crds applied: only what the case
        adds to a version (its `selectableFields`) is written into it; 1."""
        path = resource_path("apiextensions.k8s.io/v1", "customresourcedefinitions", None, obj["metadata"]["name"])
        code, raw = conn.request("GET", path)
        if code != 200:
            raise ControlPlaneError(f"GET CRD {obj['metadata']['name']}: {code} {raw[:300]!r}")
        crd = json.loads(raw)
        wanted = {v["name"]: v for v in obj.get("spec", {}).get("versions", [])}
        for version in crd["spec"]["versions"]:
            if "selectableFields" in wanted.get(version["name"], {}):
                version["selectableFields"] = wanted[version["name"]]["selectableFields"]
        code, raw = conn.request("PUT", path, crd)
        if code != 200:
            raise ControlPlaneError(f"PUT CRD {obj['metadata']['name']}: {code} {raw[:300]!r}")
        return 1

    def check_counts(self, cluster):
        """Every kind holds as many objects as the cluster has (a consistent LIST from etcd)."""
        for key, objects in cluster.items():
            _, api_version, _, plural, _ = BY_KEY[key]
            code, body = self.cp.request(resource_path(api_version, plural) + "?limit=1")
            if code != 200:
                raise ControlPlaneError(f"LIST {plural}: {code} {body}")
            have = len(body["items"]) + (body["metadata"].get("remainingItemCount") or 0)
            if have < len(objects):
                raise ControlPlaneError(f"{plural}: {have} stored, the cluster has {len(objects)}")

    # -- the stand-in's interface ------------------------------------------

    def start(self):
        return self

    def processes(self):
        return {name: proc.pid for name, proc in self.cp.procs.items()}

    def write_kubeconfig(self, path):
        shutil.copyfile(self.kubeconfig, path)

    def stop(self):
        if self.cp is not None:
            self.cp.__exit__(None, None, None)
            self.cp = None
