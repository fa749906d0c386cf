"""The API server stand-in (e2e/harness/apiserver.py) against a real kube-apiserver.

For a few conformance cases, the case's `cluster` is loaded into a real
control plane (e2e/harness/controlplane.py, Kubernetes v1.36.3) with kubectl, its
statuses through the status subresource, and served by the stand-in; then
the same requests go to both and every answer the project relies on is
compared: discovery, LIST with label selectors (k=v, k==v, k!=v, k, !k) and
field selectors (metadata.name, metadata.namespace), paging (limit and
continue, also with resourceVersion=0), WATCH events and bookmarks, how a
WATCH ends (the last chunk, the connection kept alive), GET, and the 404,
400 and 403 answers (403: a ServiceAccount token without grants,
against the stand-in's `forbidden` kinds).

Answers are compared structurally: status code, media type, and the JSON
body key by key. Values the server makes up (resourceVersion, uid,
creationTimestamp, managedFields, continue tokens, storageVersionHash,
addresses, build details) are compared by presence and type only. Where the
real server stores a case's object differently from the case (CRD defaults,
pruning), that is printed once as a `data:` note and the real object's data
is taken as the case's for the comparisons: those notes are about the case
files, not the stand-in. The objects that kube-apiserver makes by itself
(namespace kube-system, ConfigMaps there, Service default/kubernetes) are
left out of its answers unless the case has them too.

Periodic BOOKMARKs come when the real server's watch cache has moved on,
which nothing here controls: they are compared by shape, their times
printed. The stand-in is compared in its `stored` mode (objects as the API
server stores them); its default mode serves the case objects as they are,
and what that changes is listed once, as notes.

Each difference is printed under its check. One test per case; needs
`make cluster-bin`, without the binaries it prints one SKIPPED line.

    python3 -m pytest e2e/suites/test_standin_vs_apiserver.py [-k CASE] [--long-watch SECONDS]
"""

import copy
import http.client
import json
import threading
import time
from pathlib import Path
from urllib.parse import quote

import pytest

from e2e.harness import ROOT, apiserver
from e2e.harness.checks import short
from e2e.harness.controlplane import KUBE_OVN_CRDS, ControlPlane, ControlPlaneError

CASES = [
    "tests/conformance/303-i12-several-ip-crs-first-in-name-order.json",  # IPs with labels, paging
    "tests/conformance/265-i5-subnet-namespaces-list-without-namespace-annotation.json",  # two namespaces
    "tests/cases/n12-iptables-fip-create-eip-used-by-dnat.json",  # ConfigMaps in kube-system, NAT kinds
    "tests/conformance/287-i9-apiserver-ip-from-service-lookup.json",  # Service default/kubernetes
    "tests/conformance/043-pod-ip-address-and-pool-both-checked.json",  # an IPPool
]
SA_NAMESPACE, SA_NAME = "kubewarden", "policy-server"  # the user the stand-in's 403s name

# Values compared by presence and type only.
VOLATILE = {
    "resourceVersion", "uid", "creationTimestamp", "managedFields", "storageVersionHash",
    "serverAddress", "buildDate", "goVersion", "gitCommit", "gitTreeState", "compiler", "platform",
}
# metadata the server fills in; every other metadata key is the object's data.
SERVER_META = {"name", "namespace", "uid", "resourceVersion", "creationTimestamp", "generation", "managedFields"}
ENVELOPE = {"apiVersion", "kind", "metadata"}


# -- comparing -------------------------------------------------------------------

def diff(real, stand, path="$", names=("real", "stand-in")):
    """Differences between two JSON values, as lines; VOLATILE keys by type only."""
    a, b = names
    key = path.rsplit(".", 1)[-1]
    if key in VOLATILE:
        if type(real) is not type(stand):
            return [f"{path}: type {type(real).__name__} ({a}) vs {type(stand).__name__} ({b})"]
        return []
    if key == "continue":  # a token: only whether there is one
        if bool(real) != bool(stand) or type(real) is not type(stand):
            return [f"{path}: {a} {short(real)}, {b} {short(stand)}"]
        return []
    if isinstance(real, dict) and isinstance(stand, dict):
        out = []
        for k in real.keys() - stand.keys():
            out.append(f"{path}.{k}: missing in the {b} ({a} {short(real[k])})")
        for k in stand.keys() - real.keys():
            out.append(f"{path}.{k}: only in the {b} ({short(stand[k])})")
        for k in sorted(real.keys() & stand.keys()):
            out += diff(real[k], stand[k], f"{path}.{k}", names)
        return sorted(out)
    if isinstance(real, list) and isinstance(stand, list):
        out = []
        if len(real) != len(stand):
            out.append(f"{path}: {len(real)} items ({a}) vs {len(stand)} ({b})")
        for i, (x, y) in enumerate(zip(real, stand)):
            out += diff(x, y, f"{path}[{i}]", names)
        return out
    if type(real) is not type(stand) or real != stand:
        return [f"{path}: {a} {short(real)}, {b} {short(stand)}"]
    return []


def ident(obj):
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def data_of(obj):
    """An object without its envelope and server-filled metadata."""
    out = {k: v for k, v in obj.items() if k not in ENVELOPE}
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in SERVER_META}
    if meta:
        out["metadata"] = meta
    return out


def with_data(real_obj, case_obj):
    """The real object with the case object's data: compares envelope and server metadata only."""
    out = {k: v for k, v in real_obj.items() if k in ENVELOPE}
    meta = {k: v for k, v in (real_obj.get("metadata") or {}).items() if k in SERVER_META}
    meta.update({k: v for k, v in (case_obj.get("metadata") or {}).items() if k not in SERVER_META})
    out["metadata"] = meta
    out.update({k: copy.deepcopy(v) for k, v in case_obj.items() if k not in ENVELOPE})
    return out


# -- HTTP ------------------------------------------------------------------------

class Endpoint:
    """GET and WATCH against one server, as one client (admin, token, or none)."""

    def __init__(self, url, ssl_context=None, token=None):
        self.host, port = url.split("://", 1)[1].split(":")
        self.port = int(port)
        self.ssl = ssl_context
        self.headers = {"Accept": "application/json"}
        if token:
            self.headers["Authorization"] = f"Bearer {token}"

    def _conn(self, timeout):
        if self.ssl is not None:
            return http.client.HTTPSConnection(self.host, self.port, context=self.ssl, timeout=timeout)
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def get(self, path):
        """(status, media type, body: JSON if it parses, else text); a 429 is retried as told."""
        for _ in range(20):
            conn = self._conn(30)
            try:
                conn.request("GET", path, headers=self.headers)
                r = conn.getresponse()
                raw = r.read()
                media = (r.getheader("Content-Type") or "").split(";")[0]
            finally:
                conn.close()
            if r.status != 429:
                break
            time.sleep(float(r.getheader("Retry-After") or 1))
        try:
            return r.status, media, json.loads(raw)
        except ValueError:
            return r.status, media, raw.decode(errors="replace")

    def watch(self, path, limit):
        """(status, media type, [(seconds, event)], seconds until the server ended it)."""
        conn = self._conn(limit + 15)
        start = time.monotonic()
        events = []
        try:
            conn.request("GET", path, headers=self.headers)
            r = conn.getresponse()
            media = (r.getheader("Content-Type") or "").split(";")[0]
            if r.status != 200:
                raw = r.read()
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = raw.decode(errors="replace")
                return r.status, media, body, time.monotonic() - start
            while True:
                line = r.readline()
                if not line:
                    break
                if line.strip():
                    events.append((time.monotonic() - start, json.loads(line)))
        finally:
            conn.close()
        return r.status, media, events, time.monotonic() - start


    def watch_end(self, path, limit):
        """How the server ends a watch, read off the socket: (status, the response's
        Connection header, whether the last chunk came, seconds until it came, what
        a second request on the same connection got: "answered <status>" or "closed")."""
        import socket

        sock = socket.create_connection((self.host, self.port), timeout=limit + 15)
        if self.ssl is not None:
            sock = self.ssl.wrap_socket(sock, server_hostname=self.host)
        try:
            extra = "".join(f"{k}: {v}\r\n" for k, v in self.headers.items())
            started = time.monotonic()
            sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {self.host}\r\n{extra}\r\n".encode())
            reader = sock.makefile("rb")
            status = int(reader.readline().split()[1])
            headers = {}
            while (line := reader.readline()) not in (b"\r\n", b""):
                k, _, v = line.decode().partition(":")
                headers[k.strip().lower()] = v.strip()
            last_chunk, ended = False, 0.0
            if headers.get("transfer-encoding") == "chunked":
                while size_line := reader.readline():
                    size = int(size_line.split(b";")[0], 16)
                    if size == 0:
                        reader.readline()  # the CRLF after the last chunk (no trailers)
                        last_chunk, ended = True, time.monotonic() - started
                        break
                    reader.read(size + 2)
            else:
                reader.read(int(headers.get("content-length", 0)))
            sock.sendall(f"GET /version HTTP/1.1\r\nHost: {self.host}\r\n{extra}\r\n".encode())
            line = reader.readline()
            after = f"answered {int(line.split()[1])}" if line else "closed"
            return status, headers.get("connection"), last_chunk, ended, after
        finally:
            sock.close()


# -- the run ---------------------------------------------------------------------

class Results:
    """A case's comparisons, each a check (its differences the detail), and its data notes."""

    def __init__(self, checks):
        self.checks = checks
        self.notes = 0

    def check(self, name, differences):
        self.checks.check(name, not differences, "".join(f"\n     {d}" for d in differences))

    def note(self, text):
        self.notes += 1
        print(f"  data: {text}")


def kind_rows():
    """The stand-in's kinds: key -> (apiVersion, Kind, plural, namespaced, URL prefix)."""
    rows = {}
    for key, api_version, kind, plural, namespaced in apiserver.KINDS:
        prefix = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
        rows[key] = (api_version, kind, plural, namespaced, prefix)
    return rows


KIND_ROWS = kind_rows()


def crd_status_plurals():
    """kubeovn.io plurals whose CRD has a status subresource."""
    import yaml

    out = set()
    for f in KUBE_OVN_CRDS:
        for d in yaml.safe_load_all(f.read_text()):
            if d and d.get("kind") == "CustomResourceDefinition":
                if any("status" in (v.get("subresources") or {}) for v in d["spec"]["versions"]):
                    out.add(d["spec"]["names"]["plural"])
    return out | {"namespaces", "services"}


class CaseRun:
    """One case: a real control plane and two stand-ins (open, and every kind forbidden)."""

    def __init__(self, case_path, results, discovery, long_watch):
        self.path = case_path
        self.case = json.loads((ROOT / case_path).read_text())
        self.name = Path(case_path).stem[:48]
        self.results = results
        self.discovery = discovery
        self.long_watch = long_watch
        self.cluster = {k: v for k, v in (self.case.get("cluster") or {}).items() if v}
        # (plural, namespace, name) -> the case's object
        self.objects = {}
        for key, items in self.cluster.items():
            plural = KIND_ROWS[key][2]
            for obj in items:
                meta = obj.get("metadata") or {}
                self.objects[(plural, meta.get("namespace", ""), meta["name"])] = obj

    def check(self, what, differences):
        self.results.check(f"{self.name}: {what}", differences)

    # -- loading --------------------------------------------------------------

    def load(self, cp, status_plurals):
        """The case's objects into the real server (statuses through the status
        subresource); prints where it stores one differently from the case."""
        order = sorted(self.cluster, key=lambda k: k != "namespaces")
        for key in order:
            api_version, kind, plural, namespaced, prefix = KIND_ROWS[key]
            for obj in self.cluster[key]:
                obj = copy.deepcopy(obj)
                obj.setdefault("apiVersion", api_version)
                obj.setdefault("kind", kind)
                status = obj.pop("status", None)
                for k in SERVER_META - {"name", "namespace"}:
                    obj["metadata"].pop(k, None)
                cp.kubectl("apply", "--server-side", "--force-conflicts", "-f", "-", input=json.dumps(obj))
                url = self.url_of(key, obj["metadata"])
                if status is not None and plural in status_plurals:
                    code, stored = cp.request(url)
                    stored["status"] = status
                    code, body = cp.request(url + "/status", method="PUT", body=stored)
                    if code != 200:
                        raise ControlPlaneError(f"status of {plural} {ident(obj)}: {code} {short(body, 400)}")
        # What the real server stores against what the case says.
        for (plural, ns, name), obj in sorted(self.objects.items()):
            key = next(k for k, row in KIND_ROWS.items() if row[2] == plural)
            _, stored = cp.request(self.url_of(key, obj["metadata"]))
            for d in diff(data_of(stored), data_of(obj), "$", ("stored", "case")):
                self.results.note(f"{self.name}: {plural} {ns + '/' if ns else ''}{name}: {d}")

    @staticmethod
    def url_of(key, meta):
        _, _, plural, namespaced, prefix = KIND_ROWS[key]
        ns = f"/namespaces/{meta['namespace']}" if namespaced else ""
        return f"{prefix}{ns}/{plural}/{quote(meta['name'])}"

    # -- normalising real answers -------------------------------------------------

    @staticmethod
    def plural_of_path(path):
        """The resource a request path names (None for discovery)."""
        parts = path.split("?")[0].strip("/").split("/")
        parts = parts[2:] if parts[0] == "api" else parts[3:]
        if len(parts) > 2 and parts[0] == "namespaces":
            parts = parts[2:]
        return parts[0] if parts else None

    def align(self, plural, obj):
        """A real object with the case's data; None for an object only the real server has."""
        meta = obj.get("metadata") or {}
        case_obj = self.objects.get((plural, meta.get("namespace", ""), meta.get("name")))
        if case_obj is None:
            return None
        return with_data(obj, case_obj)

    def align_body(self, plural, body):
        if not isinstance(body, dict) or plural is None:
            return body
        if isinstance(body.get("items"), list):
            body = dict(body)
            body["items"] = [o for o in (self.align(plural, i) for i in body["items"]) if o is not None]
            return body
        if (body.get("metadata") or {}).get("name") and body.get("kind") != "Status":
            return self.align(plural, body) or body
        return body

    # -- comparisons ------------------------------------------------------------

    def compare_get(self, what, path, real, stand, stand_path=None):
        rs, rm, rb = real.get(path)
        ss, sm, sb = stand.get(stand_path or path)
        out = []
        if rs != ss:
            out.append(f"status {rs} (real) vs {ss} (stand-in)")
        if rm != sm:
            out.append(f"Content-Type {rm!r} (real) vs {sm!r} (stand-in)")
        rb = self.align_body(self.plural_of_path(path), rb)
        if isinstance(rb, dict) and isinstance(rb.get("items"), list) and isinstance(sb, dict):
            rids, sids = [ident(o) for o in rb["items"]], [ident(o) for o in sb.get("items") or []]
            if rids != sids:
                out.append(f"items {rids} (real) vs {sids} (stand-in)")
        out += diff(rb, sb)
        self.check(f"{what} GET {path}", out)
        return rb, sb

    def compare_discovery(self, real, stand):
        plurals = {row[2] for row in KIND_ROWS.values()}
        self.compare_get("discovery", "/version", real, stand)
        self.compare_get("discovery", "/api", real, stand)
        for path in ("/apis", "/api/v1", "/apis/kubeovn.io/v1", "/apis/k8s.cni.cncf.io/v1"):
            rs, rm, rb = real.get(path)
            ss, sm, sb = stand.get(path)
            out = [] if (rs, rm) == (ss, sm) else [f"{rs} {rm} (real) vs {ss} {sm} (stand-in)"]
            if path == "/apis":
                names = {g["name"] for g in sb.get("groups", [])}
                rb = dict(rb, groups=[g for g in rb["groups"] if g["name"] in names])
            else:  # the stand-in's kinds and their subresources, by name
                rb = dict(rb, resources={r["name"]: r for r in rb["resources"] if r["name"].split("/")[0] in plurals})
                sb = dict(sb, resources={r["name"]: r for r in sb.get("resources", [])})
            out += diff(rb, sb)
            self.check(f"discovery GET {path} (the stand-in's groups and kinds)", out)

    def selectors(self, key):
        """Label and field selectors that select something, nothing, or not all."""
        items = self.cluster.get(key) or []
        labels, fields = [], []
        labelled = [o for o in items if (o.get("metadata") or {}).get("labels")]
        if labelled:
            keys = sorted({k for o in labelled for k in o["metadata"]["labels"]})
            k = "ovn.kubernetes.io/subnet" if "ovn.kubernetes.io/subnet" in keys else keys[0]
            v = next(o["metadata"]["labels"][k] for o in labelled if k in o["metadata"]["labels"])
            other = next((x for x in keys if x != k), None)
            labels = [f"{k}={v}", f"{k}=={v}", f"{k}!={v}", k, f"!{k}", f"{k}=no-such-value", "!no-such-label"]
            if other:
                labels.append(f"{k}={v},{other}")
        labels.append("a b")  # not a selector: 400
        if items:
            meta = items[0]["metadata"]
            n = meta["name"]
            fields = [f"metadata.name={n}", f"metadata.name=={n}", f"metadata.name!={n}", "metadata.name=no-such-name"]
            ns = meta.get("namespace")
            fields.append(f"metadata.namespace={ns}" if ns else "metadata.namespace=default")
            if labels[:-1]:
                fields.append(f"metadata.name={n}&labelSelector={quote(labels[3])}")
        fields.append("spec.x=1")  # not a field of any kind: 400
        return labels, fields

    def compare_lists(self, real, stand):
        for key, (api_version, kind, plural, namespaced, prefix) in KIND_ROWS.items():
            base = f"{prefix}/{plural}"
            self.compare_get("LIST", base, real, stand)
            if namespaced:
                for ns in sorted({o["metadata"]["namespace"] for o in self.cluster.get(key, [])} | {"default"}):
                    self.compare_get("LIST", f"{prefix}/namespaces/{ns}/{plural}", real, stand)
            if key not in self.cluster:
                continue
            labels, fields = self.selectors(key)
            for sel in labels:
                self.compare_get("LIST", f"{base}?labelSelector={quote(sel)}", real, stand)
            for sel in fields:
                first, _, rest = sel.partition("&")
                self.compare_get("LIST", f"{base}?fieldSelector={quote(first)}{'&' + rest if rest else ''}", real, stand)
            if api_version != "v1" and len(self.cluster[key]) >= 2:  # no object of kube-apiserver's own
                self.compare_paging(base, real, stand)
                for query in ("limit=1&resourceVersion=0", "limit=1&resourceVersion=0&resourceVersionMatch=NotOlderThan"):
                    self.compare_get("LIST (any resourceVersion)", f"{base}?{query}", real, stand)
                if labels[:-1]:
                    self.compare_paging(f"{base}?labelSelector={quote(labels[3])}", real, stand)
                self.compare_get("LIST", f"{base}?limit=1&continue=not-a-token", real, stand)

    def compare_paging(self, path, real, stand):
        """Walks both servers page by page (limit=1), each with its own continue tokens."""
        path += ("&" if "?" in path else "?") + "limit=1"
        rtoken = stoken = ""
        for page in range(1, 10):
            rb, sb = self.compare_get(
                f"paging, page {page}:", path + (f"&continue={quote(rtoken)}" if rtoken else ""), real, stand,
                stand_path=path + (f"&continue={quote(stoken)}" if stoken else ""))
            rtoken = (rb.get("metadata") or {}).get("continue") if isinstance(rb, dict) else ""
            stoken = (sb.get("metadata") or {}).get("continue") if isinstance(sb, dict) else ""
            if not rtoken or not stoken:
                break

    def compare_watches(self, real, stand, real_rv, stand_rv):
        """Every watch of the case at once, on both servers; then each compared."""
        specs = []
        for key in ("ips", "subnets", "vpcs", "namespaces", "configmaps", "services"):
            if key not in self.cluster:
                continue
            _, _, plural, _, prefix = KIND_ROWS[key]
            base = f"{prefix}/{plural}?watch=true"
            specs += [
                (f"{base}&resourceVersion={{rv}}&allowWatchBookmarks=true&timeoutSeconds=3", 3),
                (f"{base}&allowWatchBookmarks=true&timeoutSeconds=2", 2),
                (f"{base}&resourceVersion=0&allowWatchBookmarks=true&timeoutSeconds=2", 2),
                (f"{base}&timeoutSeconds=2", 2),
            ]
            labels, fields = self.selectors(key)
            if labels[:-1]:
                specs.append((f"{base}&labelSelector={quote(labels[0])}&allowWatchBookmarks=true&timeoutSeconds=2", 2))
            specs.append((f"{base}&fieldSelector={quote(fields[0])}&timeoutSeconds=2", 2))
        if self.long_watch:
            _, _, plural, _, prefix = KIND_ROWS["subnets"]
            specs.append((f"{prefix}/{plural}?watch=true&resourceVersion={{rv}}&allowWatchBookmarks=true"
                          f"&timeoutSeconds={self.long_watch}", self.long_watch))
        answers = {}

        def run(side, endpoint, path, limit):
            try:
                answers[(side, path)] = endpoint.watch(path, limit)
            except Exception as e:  # noqa: BLE001 - reported as a difference
                answers[(side, path)] = (0, "", f"{type(e).__name__}: {e}", 0.0)

        threads = []
        for path, limit in specs:
            for side, endpoint, rv in (("real", real, real_rv), ("stand", stand, stand_rv)):
                t = threading.Thread(target=run, args=(side, endpoint, path.replace("{rv}", rv), limit))
                t.start()
                threads.append(t)
        for t in threads:
            t.join()
        for path, limit in specs:
            r = answers[("real", path.replace("{rv}", real_rv))]
            s = answers[("stand", path.replace("{rv}", stand_rv))]
            differences, info = self.watch_diff(path, r, s)
            self.check(f"WATCH {path.replace('{rv}', '<list RV>')}", differences)
            if info:
                print(f"     {info}")

    def watch_diff(self, path, r, s):
        """(differences, note) of two watches. A periodic BOOKMARK comes when the real
        server's watch cache has moved on, which nothing here controls: those are compared
        by shape only, and their times noted."""
        out = []
        if r[:2] != s[:2]:
            out.append(f"status/type {r[:2]} (real) vs {s[:2]} (stand-in)")
        if not isinstance(r[2], list) or not isinstance(s[2], list):
            return out + diff(r[2], s[2]), None
        plural = self.plural_of_path(path)
        revents = []
        for t, e in r[2]:
            if e["type"] in ("ADDED", "MODIFIED", "DELETED"):
                obj = self.align(plural, e["object"])
                if obj is None:  # made by kube-apiserver itself
                    continue
                e = dict(e, object=obj)
            revents.append((t, e))

        def periodic(e):
            return e["type"] == "BOOKMARK" and not (e["object"].get("metadata") or {}).get("annotations")

        rmain = [(t, e) for t, e in revents if not periodic(e)]
        smain = [(t, e) for t, e in s[2] if not periodic(e)]
        rtypes, stypes = [e["type"] for _, e in rmain], [e["type"] for _, e in smain]
        if rtypes != stypes:
            out.append(f"events {rtypes} (real) vs {stypes} (stand-in)")
        else:
            for i, ((_, a), (_, b)) in enumerate(zip(rmain, smain)):
                out += diff(a, b, f"$[{i}]")
        rmarks = [(t, e) for t, e in revents if periodic(e)]
        smarks = [(t, e) for t, e in s[2] if periodic(e)]
        if rmarks and smarks:
            out += diff(rmarks[0][1], smarks[0][1], "$.bookmark")
        if abs(r[3] - s[3]) > 1.5:
            out.append(f"stream ended after {r[3]:.1f} s (real) vs {s[3]:.1f} s (stand-in)")
        info = None
        if rmarks or smarks:
            info = (f"periodic bookmarks at {[round(t, 1) for t, _ in rmarks]} s (real), "
                    f"{[round(t, 1) for t, _ in smarks]} s (stand-in)")
        return out, info

    def compare_watch_end(self, real, stand):
        """A watch ends at its timeoutSeconds the same way on both: the last chunk, no
        `Connection: close`, and the connection kept for the next request (hyper's client
        pool counts on it: a connection closed after a watch ended looked reusable, and
        the request sent on it failed with IncompleteMessage)."""
        for path in ("/apis/kubeovn.io/v1/ips?watch=true&allowWatchBookmarks=true&timeoutSeconds=2",
                     "/apis/kubeovn.io/v1/ips?watch=true&resourceVersion=0&timeoutSeconds=2"):
            answers = {}

            def run(side, endpoint):
                try:
                    answers[side] = endpoint.watch_end(path, 2)
                except Exception as e:  # noqa: BLE001 - reported as a difference
                    answers[side] = f"{type(e).__name__}: {e}"

            threads = [threading.Thread(target=run, args=a) for a in (("real", real), ("stand", stand))]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            r, s = answers["real"], answers["stand"]
            out = []
            if isinstance(r, str) or isinstance(s, str):
                out.append(f"{r} (real) vs {s} (stand-in)")
            else:
                names = ("status", "Connection header", "last chunk", None, "then")
                for name, a, b in zip(names, r, s):
                    if name and a != b:
                        out.append(f"{name}: {a!r} (real) vs {b!r} (stand-in)")
                if abs(r[3] - s[3]) > 1.5:
                    out.append(f"last chunk after {r[3]:.1f} s (real) vs {s[3]:.1f} s (stand-in)")
            self.check(f"WATCH end {path}", out)
            if not out:
                print(f"     last chunk after {r[3]:.1f} s (real), {s[3]:.1f} s (stand-in); "
                      f"Connection header {r[1]!r}; then a GET on the same connection: {r[4]}")

    def compare_forbidden(self, real_sa, stand_forbidden):
        for key, (api_version, kind, plural, namespaced, prefix) in KIND_ROWS.items():
            items = self.cluster.get(key) or []
            name = items[0]["metadata"]["name"] if items else "missing"
            ns = items[0]["metadata"].get("namespace", "default") if items else "default"
            paths = [f"{prefix}/{plural}", f"{prefix}/{plural}?watch=true&timeoutSeconds=1",
                     f"{prefix}/{plural}?labelSelector=a%3Db"]
            if namespaced:
                paths += [f"{prefix}/namespaces/{ns}/{plural}", f"{prefix}/namespaces/{ns}/{plural}/{quote(name)}"]
            else:
                paths.append(f"{prefix}/{plural}/{quote(name)}")
            for path in paths:
                self.compare_get("403", path, real_sa, stand_forbidden)

    def compare_missing(self, real, stand):
        paths = ["/apis/kubeovn.io/v1/ips/no-such-ip", "/api/v1/namespaces/no-such-namespace",
                 "/api/v1/namespaces/default/configmaps/no-such-configmap",
                 "/api/v1/namespaces/no-such-namespace/configmaps/x",
                 "/apis/kubeovn.io/v1/no-such-kinds", "/apis/kubeovn.io/v1/namespaces/default/ips",
                 "/api/v1/no-such-kinds", "/apis/no-such-group.io/v1/things", "/no-such-path"]
        for path in paths:
            self.compare_get("404", path, real, stand)
        for key, obj in ((k, o) for k, items in self.cluster.items() for o in items):
            self.compare_get("GET", self.url_of(key, obj["metadata"]), real, stand)

    # -- the case -----------------------------------------------------------------

    def run(self, status_plurals):
        print(f"== {self.path}")
        started = time.monotonic()
        with ControlPlane() as cp:
            cp.install_crds(KUBE_OVN_CRDS)
            self.load(cp, status_plurals)
            token = cp.token(SA_NAMESPACE, SA_NAME)
            real = Endpoint(cp.url, cp.ssl_context())
            real_sa = Endpoint(cp.url, cp.ssl_context(client_cert=False), token)
            # The objects kube-apiserver made itself are dropped from its
            # answers by align().
            cluster = apiserver.Cluster(self.case.get("cluster"), (), stored=True)
            every_kind = [row[1] for row in KIND_ROWS.values()]
            forbidden = apiserver.Cluster(self.case.get("cluster"), every_kind, stored=True)
            with _serving(cluster) as s_open, _serving(forbidden) as s_forbidden:
                stand = Endpoint(s_open.url)
                if self.discovery:
                    self.compare_discovery(real, stand)
                self.compare_lists(real, stand)
                self.compare_missing(real, stand)
                self.compare_forbidden(real_sa, Endpoint(s_forbidden.url))
                real_rv = cp.request("/apis/kubeovn.io/v1/subnets")[1]["metadata"]["resourceVersion"]
                stand_rv = stand.get("/apis/kubeovn.io/v1/subnets")[2]["metadata"]["resourceVersion"]
                self.compare_watches(real, stand, real_rv, stand_rv)
                if self.discovery:
                    self.compare_watch_end(real, stand)
                    self.default_mode_notes(stand)
        print(f"   ({time.monotonic() - started:.1f} s)")

    def default_mode_notes(self, stand):
        """What the stand-in's default mode serves differently from its stored mode."""
        with _serving(apiserver.Cluster(self.case.get("cluster"))) as s_default:
            default = Endpoint(s_default.url)
            for key in self.cluster:
                _, _, plural, _, prefix = KIND_ROWS[key]
                _, _, stored = stand.get(f"{prefix}/{plural}")
                _, _, plain = default.get(f"{prefix}/{plural}")
                fields = sorted({d.split(":", 1)[0].split("]", 1)[-1].lstrip(".") + (
                    " (only there)" if "only in the" in d else " (not there)" if "missing in the" in d else "")
                    for d in diff(stored, plain, "$", ("stored", "default mode"))})
                if fields:
                    print(f"  default mode, {plural} list items: {', '.join(fields)}")


class _serving:
    def __init__(self, cluster):
        self.server = apiserver.StandIn(cluster)

    def __enter__(self):
        return self.server.start()

    def __exit__(self, *exc):
        self.server.stop()


@pytest.mark.parametrize("index", range(len(CASES)), ids=[Path(c).stem[:48] for c in CASES])
def test_the_standin_answers_as_kube_apiserver(index, checks, request):
    """One case's cluster in both; discovery, the watch's end and a long watch with the first."""
    if not ControlPlane().apiserver_bin.exists():
        pytest.skip("kube-apiserver not found (make cluster-bin)")
    long_watch = request.config.getoption("long_watch") if index == 0 else 0
    results = Results(checks)
    CaseRun(CASES[index], results, discovery=index == 0, long_watch=long_watch).run(crd_status_plurals())
    print(f"   {results.notes} data notes (the real server stores the case's objects differently)")
