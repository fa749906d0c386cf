#!/usr/bin/env python3
"""A Kubernetes API server stand-in for the real Kubewarden runtime.

kwctl and policy-server reach the cluster through kube-rs. This serves
what kube-rs asks for, over plain HTTP on 127.0.0.1, from the objects of a
conformance case's `cluster`:

- discovery: /version, /api, /api/v1, /apis, /apis/kubeovn.io/v1;
- LIST with labelSelector (k=v, k==v, k!=v, k, !k) and fieldSelector
  (metadata.name, metadata.namespace; = == !=), with limit/continue;
- WATCH (held open, a BOOKMARK now and then, until timeoutSeconds);
- GET by name;
- 404 with a Status of reason NotFound for a missing object or resource;
- 403 with a Status of reason Forbidden for the kinds listed as forbidden
  (what the API server answers without RBAC);
- an optional delay per GET and per LIST (an etcd quorum read);
- optionally HTTPS with a given certificate (the kubeconfig then carries it
  as `certificate-authority-data`) and a bearer token every request must
  present (401 otherwise), as a real API server wants a ServiceAccount's.

It counts the requests it serves by verb and holds a count of open watches,
for the benchmark. Run alone it serves one case file and writes a
kubeconfig:

    python3 e2e/apiserver.py CASE.json --kubeconfig /tmp/kubeconfig

Only the standard library is used, so a fresh machine needs nothing but
python3.
"""

import argparse
import base64
import json
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

# The kinds a conformance file's `cluster` may hold:
# key, apiVersion, kind, plural, namespaced, short names.
KINDS = [
    ("ips", "kubeovn.io/v1", "IP", "ips", False),
    ("subnets", "kubeovn.io/v1", "Subnet", "subnets", False),
    ("vpcs", "kubeovn.io/v1", "Vpc", "vpcs", False),
    ("ippools", "kubeovn.io/v1", "IPPool", "ippools", False),
    ("vips", "kubeovn.io/v1", "Vip", "vips", False),
    ("iptablesEips", "kubeovn.io/v1", "IptablesEIP", "iptables-eips", False),
    ("iptablesDnatRules", "kubeovn.io/v1", "IptablesDnatRule", "iptables-dnat-rules", False),
    ("iptablesSnatRules", "kubeovn.io/v1", "IptablesSnatRule", "iptables-snat-rules", False),
    ("iptablesFipRules", "kubeovn.io/v1", "IptablesFIPRule", "iptables-fip-rules", False),
    ("ovnEips", "kubeovn.io/v1", "OvnEip", "ovn-eips", False),
    ("ovnFips", "kubeovn.io/v1", "OvnFip", "ovn-fips", False),
    ("ovnSnatRules", "kubeovn.io/v1", "OvnSnatRule", "ovn-snat-rules", False),
    ("ovnDnatRules", "kubeovn.io/v1", "OvnDnatRule", "ovn-dnat-rules", False),
    ("vpcNatGateways", "kubeovn.io/v1", "VpcNatGateway", "vpc-nat-gateways", False),
    ("qosPolicies", "kubeovn.io/v1", "QoSPolicy", "qos-policies", False),
    ("namespaces", "v1", "Namespace", "namespaces", False),
    ("services", "v1", "Service", "services", True),
    ("configmaps", "v1", "ConfigMap", "configmaps", True),
]

BY_KEY = {k[0]: k for k in KINDS}
BY_PLURAL = {(k[1], k[3]): k for k in KINDS}
VERBS = ["get", "list", "watch", "create", "update", "patch", "delete"]
RESOURCE_VERSION = "1"


def status(code, reason, message, details=None):
    """A metav1.Status, as the API server writes one for an error."""
    body = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if details is not None:
        body["details"] = details
    return code, body


def parse_selector(text, is_field):
    """Terms of a label or field selector: (key, op, value)."""
    terms = []
    for raw in (text or "").split(","):
        raw = raw.strip()
        if not raw:
            continue
        for op in ("!=", "==", "="):
            if op in raw:
                key, value = raw.split(op, 1)
                terms.append((key.strip(), "!=" if op == "!=" else "=", value.strip()))
                break
        else:
            if is_field:
                raise ValueError(f"invalid field selector term {raw!r}")
            if raw.startswith("!"):
                terms.append((raw[1:].strip(), "!", None))
            else:
                terms.append((raw, "exists", None))
    return terms


def label_matches(obj, terms):
    labels = (obj.get("metadata") or {}).get("labels") or {}
    for key, op, value in terms:
        have = labels.get(key)
        if op == "=" and have != value:
            return False
        if op == "!=" and have == value:
            return False
        if op == "exists" and key not in labels:
            return False
        if op == "!" and key in labels:
            return False
    return True


def field_matches(obj, terms):
    meta = obj.get("metadata") or {}
    for key, op, value in terms:
        if key == "metadata.name":
            have = meta.get("name", "")
        elif key == "metadata.namespace":
            have = meta.get("namespace", "")
        else:
            raise ValueError(f'"{key}" is not a known field selector: only "metadata.name", "metadata.namespace"')
        if (op == "=") != (have == value):
            return False
    return True


class Cluster:
    """The objects served, indexed by (apiVersion, plural); immutable once built."""

    def __init__(self, cluster=None, forbidden=()):
        self.objects = {(k[1], k[3]): [] for k in KINDS}
        self.forbidden = set(forbidden)  # kinds ("IP", "ConfigMap", ...) answered 403
        for key, items in (cluster or {}).items():
            kind = BY_KEY.get(key)
            if kind is None:
                raise ValueError(f"unknown cluster key {key!r}")
            for obj in items or []:
                obj = dict(obj)
                obj.setdefault("apiVersion", kind[1])
                obj.setdefault("kind", kind[2])
                self.objects[(kind[1], kind[3])].append(obj)
        # Serialised once: a list of 100 000 IP objects is answered often.
        self.encoded = {}


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.counts = {}
        self.watches_open = 0
        self.watches_peak = 0

    def count(self, verb):
        with self.lock:
            self.counts[verb] = self.counts.get(verb, 0) + 1

    def watch(self, delta):
        with self.lock:
            self.watches_open += delta
            self.watches_peak = max(self.watches_peak, self.watches_open)

    def snapshot(self):
        with self.lock:
            return dict(self.counts, watches_open=self.watches_open, watches_peak=self.watches_peak)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "kube-apiserver-standin"

    def setup(self):
        if isinstance(self.request, ssl.SSLSocket):
            self.request.do_handshake()  # deferred from accept() to this thread
        super().setup()

    def log_message(self, fmt, *args):
        if self.server.verbose:
            sys.stderr.write("standin: " + (fmt % args) + "\n")

    def send_json(self, code, body):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        try:
            code, body = self.route()
        except (BrokenPipeError, ConnectionResetError):
            return
        except Exception as e:  # a bug in the stand-in must not look like an answer
            code, body = status(500, "InternalError", f"stand-in error: {e}")
        if code is not None:
            self.send_json(code, body)

    def route(self):
        token = self.server.token
        if token is not None and self.headers.get("Authorization") != f"Bearer {token}":
            return status(401, "Unauthorized", "Unauthorized")
        url = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        parts = [p for p in url.path.split("/") if p]
        if parts == ["standin", "stats"]:  # the stand-in's own counters, for a client in another process
            return 200, self.server.stats.snapshot()
        if parts == ["version"]:
            return 200, {"major": "1", "minor": "33", "gitVersion": "v1.33.0-standin", "platform": "linux/amd64"}
        if parts == ["api"]:
            return 200, {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": []}
        if parts == ["apis"]:
            return 200, {
                "kind": "APIGroupList",
                "apiVersion": "v1",
                "groups": [{
                    "name": "kubeovn.io",
                    "versions": [{"groupVersion": "kubeovn.io/v1", "version": "v1"}],
                    "preferredVersion": {"groupVersion": "kubeovn.io/v1", "version": "v1"},
                }],
            }
        if parts == ["api", "v1"]:
            return 200, self.resource_list("v1")
        if parts == ["apis", "kubeovn.io", "v1"]:
            return 200, self.resource_list("kubeovn.io/v1")
        if parts[:2] == ["api", "v1"]:
            return self.resource_request("v1", parts[2:], query)
        if parts[:3] == ["apis", "kubeovn.io", "v1"]:
            return self.resource_request("kubeovn.io/v1", parts[3:], query)
        return status(404, "NotFound", "the server could not find the requested resource")

    def resource_list(self, api_version):
        return {
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": api_version,
            "resources": [
                {"name": k[3], "singularName": k[2].lower(), "namespaced": k[4], "kind": k[2], "verbs": VERBS}
                for k in KINDS
                if k[1] == api_version
            ],
        }

    def resource_request(self, api_version, parts, query):
        namespace = None
        if len(parts) >= 2 and parts[0] == "namespaces" and (len(parts) > 2 or api_version != "v1"):
            namespace, parts = parts[1], parts[2:]
        if not parts or len(parts) > 2:
            return status(404, "NotFound", "the server could not find the requested resource")
        kind = BY_PLURAL.get((api_version, parts[0]))
        if kind is None:
            return status(404, "NotFound", "the server could not find the requested resource")
        _, _, kind_name, plural, namespaced = kind
        if namespace is not None and not namespaced:
            return status(404, "NotFound", "the server could not find the requested resource")
        group = api_version.split("/")[0] if "/" in api_version else ""
        resource = f"{plural}.{group}" if group else plural
        name = parts[1] if len(parts) == 2 else None
        verb = "get" if name else ("watch" if query.get("watch") in ("true", "1") else "list")
        server = self.server
        server.stats.count(verb)
        cluster = server.cluster
        if kind_name in cluster.forbidden:
            scope = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
            what = f'resource "{plural}" in API group "{group}"'
            return status(
                403,
                "Forbidden",
                f'{resource}{" " + json.dumps(name) if name else ""} is forbidden: User '
                f'"system:serviceaccount:kubewarden:policy-server" cannot {verb} {what} {scope}',
                {"name": name, "group": group, "kind": plural} if name else {"group": group, "kind": plural},
            )
        if verb in ("get", "list") and server.delay.get(verb):
            time.sleep(server.delay[verb])
        objects = cluster.objects[(api_version, plural)]
        if namespace is not None:
            objects = [o for o in objects if (o.get("metadata") or {}).get("namespace") == namespace]
        if name is not None:
            for obj in objects:
                if (obj.get("metadata") or {}).get("name") == name:
                    return 200, obj
            return status(
                404,
                "NotFound",
                f'{resource} "{name}" not found',
                {"name": name, "group": group, "kind": plural},
            )
        try:
            labels = parse_selector(query.get("labelSelector"), False)
            fields = parse_selector(query.get("fieldSelector"), True)
        except ValueError as e:
            return status(400, "BadRequest", str(e))
        if verb == "watch":
            self.hold_watch(query)
            return None, None
        selected = [o for o in objects if label_matches(o, labels) and field_matches(o, fields)]
        start = int(query.get("continue") or 0)
        limit = int(query.get("limit") or 0)
        end = start + limit if limit > 0 else len(selected)
        meta = {"resourceVersion": RESOURCE_VERSION}
        if end < len(selected):
            meta["continue"] = str(end)
        page = selected[start:end]
        if not labels and not fields and start == 0 and end >= len(selected):
            key = (api_version, plural, namespace)
            body = cluster.encoded.get(key)
            if body is None:
                body = json.dumps({"kind": kind_name + "List", "apiVersion": api_version, "metadata": meta, "items": page}).encode()
                cluster.encoded[key] = body
            return 200, body
        return 200, {"kind": kind_name + "List", "apiVersion": api_version, "metadata": meta, "items": page}

    def hold_watch(self, query):
        """A watch that sees no change: open until its timeout or the server stops."""
        server = self.server
        timeout = float(query.get("timeoutSeconds") or 290)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        server.stats.watch(+1)
        try:
            self.wfile.flush()
            deadline = time.monotonic() + timeout
            bookmark = json.dumps({
                "type": "BOOKMARK",
                "object": {"kind": "Bookmark", "apiVersion": "v1", "metadata": {"resourceVersion": RESOURCE_VERSION}},
            }).encode() + b"\n"
            while time.monotonic() < deadline and not server.stopping.wait(min(30.0, deadline - time.monotonic())):
                if query.get("allowWatchBookmarks") == "true":
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(bookmark), bookmark))
                    self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass
        finally:
            server.stats.watch(-1)
            self.close_connection = True


class StandIn(ThreadingHTTPServer):
    """One stand-in API server on 127.0.0.1; its cluster can be swapped between cases."""

    daemon_threads = True
    request_queue_size = 1024

    def __init__(self, cluster=None, port=0, delay_get=0.0, delay_list=0.0, verbose=False, tls=None, token=None):
        """`tls`: (certificate, key) PEM files to serve HTTPS with; `token`: the
        bearer token every request must carry (None: any or none)."""
        super().__init__(("127.0.0.1", port), Handler)
        self.tls = tls
        self.token = token
        if tls is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(str(tls[0]), str(tls[1]))
            # The handshake happens in the request's thread, not in accept().
            self.socket = context.wrap_socket(self.socket, server_side=True, do_handshake_on_connect=False)
        self.cluster = cluster or Cluster()
        self.stats = Stats()
        self.delay = {"get": delay_get, "list": delay_list}
        self.verbose = verbose
        self.stopping = threading.Event()
        self.thread = None

    @property
    def url(self):
        scheme = "https" if self.tls is not None else "http"
        return f"{scheme}://127.0.0.1:{self.server_address[1]}"

    def start(self):
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()
        return self

    def stop(self):
        self.stopping.set()
        self.shutdown()
        self.server_close()

    def write_kubeconfig(self, path):
        """A kubeconfig naming this server, with a token kube-rs sends as is
        (and, over HTTPS, the server's certificate as the authority)."""
        authority = ""
        if self.tls is not None:
            with open(self.tls[0], "rb") as f:
                authority = f"    certificate-authority-data: {base64.b64encode(f.read()).decode()}\n"
        text = (
            "apiVersion: v1\nkind: Config\n"
            f"clusters:\n- name: standin\n  cluster:\n    server: {self.url}\n{authority}"
            f"users:\n- name: standin\n  user:\n    token: {self.token or 'standin'}\n"
            "contexts:\n- name: standin\n  context:\n    cluster: standin\n    user: standin\n"
            "current-context: standin\n"
        )
        with open(path, "w") as f:
            f.write(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("case", help="a conformance case file (its `cluster` is served)")
    parser.add_argument("--kubeconfig", required=True, help="where to write the kubeconfig")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--forbid", action="append", default=[], help="a kind answered 403 (repeatable)")
    parser.add_argument("--delay-get-ms", type=float, default=0.0)
    parser.add_argument("--delay-list-ms", type=float, default=0.0)
    parser.add_argument("-v", "--verbose", action="store_true", help="log every request")
    args = parser.parse_args()
    with open(args.case) as f:
        case = json.load(f)
    server = StandIn(
        Cluster(case.get("cluster"), args.forbid),
        args.port,
        args.delay_get_ms / 1000,
        args.delay_list_ms / 1000,
        args.verbose,
    )
    server.write_kubeconfig(args.kubeconfig)
    print(f"serving {args.case} at {server.url}; kubeconfig {args.kubeconfig}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
