"""A Kubernetes API server stand-in for the real Kubewarden runtime.

kwctl and policy-server reach the cluster through kube-rs. This serves
what kube-rs asks for, over plain HTTP on 127.0.0.1, from the objects of a
conformance case's `cluster`, answering as kube-apiserver v1.36 answers
(e2e/suites/test_standin_vs_apiserver.py compares the two):

- discovery: /version, /api, /api/v1, /apis, /apis/kubeovn.io/v1 (and
  /apis/k8s.cni.cncf.io/v1), with the
  real entries (verbs, short names, subresources) of the kinds served;
- LIST in the API server's order (namespace/name), with labelSelector
  (k=v, k==v, k!=v, k, !k, in, notin; 400 for what does not parse) and
  fieldSelector (metadata.name, metadata.namespace and the few fields core
  kinds add; = == !=), limit and continue (with remainingItemCount when
  nothing is selected); resourceVersion=0 answers every object at once, as
  the API server's watch cache does;
- WATCH: from a resourceVersion, held open until timeoutSeconds, with a
  BOOKMARK when the API server would send one; without a resourceVersion
  (or with 0), first an ADDED event per object and the initial-events-end
  BOOKMARK; ended as kube-apiserver ends it, with the last (zero-length)
  chunk, the connection kept alive for the next request;
- GET by name (and the status subresource);
- 404 with a Status of reason NotFound for a missing object, and the API
  server's answers to unknown paths;
- 403 with a Status of reason Forbidden for the kinds listed as forbidden
  (what the API server answers without RBAC);
- an optional delay per GET and per LIST (an etcd quorum read);
- optionally HTTPS with a given certificate (the kubeconfig then carries it
  as `certificate-authority-data`) and a bearer token every request must
  present (401 otherwise), as a real API server wants a ServiceAccount's.

On the wire it behaves as Go's net/http does where a client's timing
depends on it: TCP_NODELAY on every connection, and an answer's status
line, headers and body in one write (written apart, with Nagle's algorithm
on, an answer waited for the client's delayed ACK: 40 ms on Linux).

Objects are served as the case has them. With `stored` (--stored) they are
served as the API server stores them: uid, resourceVersion,
creationTimestamp, generation (custom resources) and managedFields filled
in where missing, and the items of core-kind lists without apiVersion and
kind.

It counts the requests it serves by verb and holds a count of open watches,
for the benchmark (also at /standin/stats). Run alone it serves one case
file and writes a kubeconfig:

    python3 -m e2e.harness.apiserver CASE.json --kubeconfig /tmp/kubeconfig

Only the standard library is used, so a fresh machine needs nothing but
python3.
"""

import argparse
import base64
import binascii
import bisect
import hashlib
import json
import socket
import ssl
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

from . import ROOT

# The kinds a conformance file's `cluster` may hold:
# key, apiVersion, kind, plural, namespaced.
# Every kind the policy reads or the cases load, from the policy's own table
# (src/k8s/kinds.rs, written out as kinds.json): case key, apiVersion, kind,
# plural, namespaced.
KINDS = [
    (k["caseKey"], k["apiVersion"], k["kind"], k["plural"], k["namespaced"])
    for k in json.loads((ROOT / "kinds.json").read_text())
]

BY_KEY = {k[0]: k for k in KINDS}
# The API groups other than the core one, in the order kube-apiserver's /apis
# lists these CRD groups (by name; e2e/suites/test_standin_vs_apiserver.py compares them).
GROUP_VERSIONS = sorted({k[1] for k in KINDS if "/" in k[1]})
BY_PLURAL = {(k[1], k[3]): k for k in KINDS}
RESOURCE_VERSION = "1"

# What kube-apiserver v1.36.3 (e2e/cluster) says of itself.
VERSION = {
    "major": "1", "minor": "36", "emulationMajor": "1", "emulationMinor": "36",
    "minCompatibilityMajor": "1", "minCompatibilityMinor": "35",
    "gitVersion": "v1.36.3", "gitCommit": "", "gitTreeState": "clean", "buildDate": "2026-07-22T18:07:38Z",
    "goVersion": "go1.26.8", "compiler": "gc", "platform": "linux/amd64",
}

# Discovery entries as the API server lists them (Kube-OVN's CRDs, core):
# plural -> singular name, short names, subresources (name, kind or None, verbs).
STATUS = ("status", None, ["get", "patch", "update"])
DISCOVERY = {
    "ips": ("ip", ["ip"], []),
    "subnets": ("subnet", ["subnet"], [STATUS]),
    "vpcs": ("vpc", ["vpc"], [STATUS]),
    "ippools": ("ippool", ["ippool"], [STATUS]),
    "vips": ("vip", ["vip"], []),
    "iptables-eips": ("iptables-eip", ["eip"], [STATUS]),
    "iptables-dnat-rules": ("iptables-dnat-rule", ["dnat"], [STATUS]),
    "iptables-snat-rules": ("iptables-snat-rule", ["snat"], [STATUS]),
    "iptables-fip-rules": ("iptables-fip-rule", ["fip"], [STATUS]),
    "ovn-eips": ("ovn-eip", ["oeip"], [STATUS]),
    "ovn-fips": ("ovn-fip", ["ofip"], [STATUS]),
    "ovn-snat-rules": ("ovn-snat-rule", ["osnat"], [STATUS]),
    "ovn-dnat-rules": ("ovn-dnat-rule", ["odnat"], [STATUS]),
    "vpc-nat-gateways": ("vpc-nat-gateway", ["vpc-nat-gw"], [STATUS]),
    "qos-policies": ("qos-policy", ["qos"], [STATUS]),
    "namespaces": ("namespace", ["ns"], [("finalize", None, ["update"]), STATUS]),
    "services": ("service", ["svc"], [("proxy", "ServiceProxyOptions", ["create", "delete", "get", "patch", "update"]),
                                      STATUS]),
    "configmaps": ("configmap", ["cm"], []),
    "network-attachment-definitions": ("network-attachment-definition", ["net-attach-def"], []),
    "customresourcedefinitions": ("customresourcedefinition", ["crd", "crds"], [STATUS]),
}
CATEGORIES = {"services": ["all"], "customresourcedefinitions": ["api-extensions"]}
# Built-in API groups: their kinds' verbs as the core group's, not a CRD's.
BUILT_IN_GROUPS = {"", "apiextensions.k8s.io"}
CR_VERBS = ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"]
CORE_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
NAMESPACE_VERBS = ["create", "delete", "get", "list", "patch", "update", "watch"]

# Field selectors each kind supports beyond metadata.name (and
# metadata.namespace for a namespaced kind).
EXTRA_FIELDS = {"namespaces": {"status.phase"}, "services": {"spec.clusterIP", "spec.type"}}

# kube-apiserver v1.36 sends a watcher a BOOKMARK when its watch cache has
# moved on, so its times vary (measured: every minute from the first or
# second minute on, one about 2 s before the end of a watch longer than
# 70 s, none in a short watch of a quiet kind). The stand-in, whose objects
# never change, sends them at 120 s, every minute after, and 2 s before the
# end of a watch longer than 70 s.
BOOKMARK_FIRST = 120.0
BOOKMARK_EVERY = 60.0
BOOKMARK_BEFORE_END = 2.0
BOOKMARK_END_AFTER = 70.0

CREATED = "2026-01-01T00:00:00Z"  # creationTimestamp of stored objects that have none
NOT_FOUND = "404 page not found\n"


class PlainText(str):
    """A body sent as text/plain (the API server's answer to an unknown path)."""


def status(code, reason, message, details=None):
    """A metav1.Status, as the API server writes one for an error."""
    body = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
    }
    if details is not None:
        body["details"] = details
    body["code"] = code
    return code, body


def details(name, group, plural):
    """Status details; empty fields are left out, as the API server does."""
    out = {"name": name, "group": group, "kind": plural}
    return {k: v for k, v in out.items() if v}


def storage_version_hash(group, version, kind):
    """The API server's storageVersionHash: sha256 of group/version/kind, 8 bytes, base64."""
    return base64.b64encode(hashlib.sha256(f"{group}/{version}/{kind}".encode()).digest()[:8]).decode()


# -- selectors ---------------------------------------------------------------

BINARY_OPERATORS = "in, notin, =, ==, !=, gt, lt"


def _label_tokens(text):
    """The lexer of k8s.io/apimachinery/pkg/labels: (kind, literal) pairs."""
    tokens, i = [], 0
    special = "!=<>(),"
    while i < len(text):
        c = text[i]
        if c.isspace():
            i += 1
        elif c in special:
            two = text[i:i + 2]
            if two in ("!=", "=="):
                tokens.append((two, two))
                i += 2
            else:
                tokens.append((c, c))
                i += 1
        else:
            j = i
            while j < len(text) and not text[j].isspace() and text[j] not in special:
                j += 1
            word = text[i:j]
            tokens.append((word if word in ("in", "notin") else "id", word))
            i = j
    tokens.append(("end", ""))
    return tokens


def parse_label_selector(text):
    """Requirements (key, op, values) of a label selector; ValueError with the API server's message."""
    tokens = _label_tokens(text or "")
    pos, reqs = 0, []

    def take():
        nonlocal pos
        pos += 1
        return tokens[pos - 1]

    if tokens[0][0] == "end":
        return reqs
    while True:
        kind, lit = take()
        if kind == "!":
            kind, lit = take()
            if kind != "id":
                raise ValueError(f"unable to parse requirement: found '{lit}', expected: identifier")
            reqs.append((lit, "!", ()))
        elif kind == "id":
            key = lit
            op, oplit = tokens[pos]
            if op in ("end", ","):
                reqs.append((key, "exists", ()))
            elif op in ("=", "==", "!="):
                take()
                vkind, vlit = tokens[pos]
                value = ""
                if vkind == "id":
                    take()
                    value = vlit
                elif vkind not in ("end", ","):
                    raise ValueError(f"unable to parse requirement: found '{vlit}', expected: identifier")
                reqs.append((key, "!=" if op == "!=" else "=", (value,)))
            elif op in ("in", "notin"):
                take()
                if take()[0] != "(":
                    raise ValueError(f"unable to parse requirement: found '{tokens[pos - 1][1]}', expected: '('")
                values = []
                while True:
                    vkind, vlit = take()
                    if vkind == "id":
                        values.append(vlit)
                        vkind, vlit = take()
                    if vkind == ")":
                        break
                    if vkind != ",":
                        raise ValueError(f"unable to parse requirement: found '{vlit}', expected: ',', ')' or identifier")
                reqs.append((key, op, tuple(values)))
            elif op in (">", "<"):
                take()
                vkind, vlit = take()
                if vkind != "id" or not vlit.lstrip("-").isdigit():
                    raise ValueError("unable to parse requirement: for 'gt', 'lt' operators, exactly one value is "
                                     "required")
                reqs.append((key, op, (vlit,)))
            else:
                raise ValueError(f"unable to parse requirement: found '{oplit}', expected: {BINARY_OPERATORS}")
        elif kind == "end":
            return reqs
        else:
            raise ValueError(f"found '{lit}', expected: !, identifier, or 'end of string'")
        kind, lit = take()
        if kind == "end":
            return reqs
        if kind != ",":
            raise ValueError(f"found '{lit}', expected: ',' or 'end of string'")
        if tokens[pos][0] not in ("id", "!"):
            raise ValueError(f"found '{tokens[pos][1]}', expected: identifier after ','")


def parse_field_selector(text):
    """Terms (key, op, value) of a field selector; ValueError with the API server's message."""
    terms = []
    for raw in (text or "").split(","):
        if not raw:
            continue
        for op in ("!=", "==", "="):
            if op in raw:
                key, value = raw.split(op, 1)
                terms.append((key.strip(), "!=" if op == "!=" else "=", value))
                break
        else:
            raise ValueError(f"invalid selector: '{text}'; can't understand '{raw}'")
    return terms


def label_matches(obj, reqs):
    labels = (obj.get("metadata") or {}).get("labels") or {}
    for key, op, values in reqs:
        have = labels.get(key)
        if op == "=" and have != values[0]:
            return False
        if op == "!=" and have == values[0]:
            return False
        if op == "exists" and key not in labels:
            return False
        if op == "!" and key in labels:
            return False
        if op == "in" and have not in values:
            return False
        if op == "notin" and have in values:
            return False
        if op in (">", "<"):
            try:
                n = int(have)
            except (TypeError, ValueError):
                return False
            if (op == ">" and not n > int(values[0])) or (op == "<" and not n < int(values[0])):
                return False
    return True


def selectable_fields(cluster, api_version, plural):
    """The fields a CRD of the cluster declares selectable for a kind's version
    (`spec.versions[].selectableFields`, kube-apiserver 1.32+), without the dot."""
    group, _, version = api_version.rpartition("/")
    out = set()
    for crd in cluster.objects.get(("apiextensions.k8s.io/v1", "customresourcedefinitions"), []):
        if (crd.get("metadata") or {}).get("name") != f"{plural}.{group}":
            continue
        for v in (crd.get("spec") or {}).get("versions") or []:
            if v.get("name") == version:
                out |= {f["jsonPath"].lstrip(".") for f in v.get("selectableFields") or [] if f.get("jsonPath")}
    return out


def field_value(obj, key):
    node = obj
    for part in key.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node if isinstance(node, str) else ""


def field_matches(obj, terms):
    for key, op, value in terms:
        if (op == "=") != (field_value(obj, key) == value):
            return False
    return True


# -- stored objects and continue tokens ------------------------------------------------


def object_key(obj):
    """The object's key under its resource, which the API server lists in."""
    meta = obj.get("metadata") or {}
    ns = meta.get("namespace")
    return f"/{ns}/{meta.get('name', '')}" if ns else f"/{meta.get('name', '')}"


def managed_fields_of(value):
    """A FieldsV1 set naming every field of a value (lists as one field)."""
    if isinstance(value, dict):
        return {f"f:{k}": managed_fields_of(v) for k, v in value.items()}
    return {}


def as_stored(obj, kind, resource_version):
    """The object with the metadata the API server fills in on create."""
    api_version, plural = kind[1], kind[3]
    obj = dict(obj)
    meta = dict(obj.get("metadata") or {})
    ns, name = meta.get("namespace", ""), meta.get("name", "")
    meta.setdefault("uid", str(uuid.uuid5(uuid.NAMESPACE_URL, f"{api_version}/{plural}/{ns}/{name}")))
    meta.setdefault("resourceVersion", str(resource_version))
    meta.setdefault("creationTimestamp", CREATED)
    if "/" in api_version:  # custom resources count generations; these core kinds do not
        meta.setdefault("generation", 1)
    applied = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind", "metadata", "status")}
    applied_meta = {k: meta[k] for k in ("labels", "annotations", "finalizers") if k in meta}
    if applied_meta:
        applied["metadata"] = applied_meta
    meta.setdefault("managedFields", [{
        "manager": "kubectl", "operation": "Apply", "apiVersion": api_version, "time": meta["creationTimestamp"],
        "fieldsType": "FieldsV1", "fieldsV1": managed_fields_of(applied),
    }])
    obj["metadata"] = meta
    return obj


def encode_continue(resource_version, key):
    data = json.dumps({"v": "meta.k8s.io/v1", "rv": int(resource_version), "start": key + "\0"},
                      separators=(",", ":"))
    return base64.urlsafe_b64encode(data.encode()).decode().rstrip("=")


def _go_char(b):
    """A byte as Go's encoding/json quotes it in an error."""
    c = chr(b)
    if c == "'":
        return "'\\''"
    if c.isprintable():
        return f"'{c}'"
    return f"'\\x{b:02x}'" if b < 0x80 else f"'\\u{b:04x}'"


def decode_continue(token):
    """The key a continue token starts after; ValueError with the API server's message."""
    prefix = "invalid continue token: continue key is not valid: "
    for i, c in enumerate(token):
        if not (c.isascii() and (c.isalnum() or c in "-_")):
            raise ValueError(f"{prefix}illegal base64 data at input byte {i}")
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    except (binascii.Error, ValueError):
        raise ValueError(f"{prefix}illegal base64 data at input byte {len(token) - 1}") from None
    try:
        data = json.loads(raw)
    except ValueError:
        stripped = raw.lstrip()
        what = f"invalid character {_go_char(stripped[0])} looking for beginning of value" if stripped \
            else "unexpected end of JSON input"
        raise ValueError(prefix + what) from None
    if not isinstance(data, dict) or data.get("v") != "meta.k8s.io/v1" or not isinstance(data.get("start"), str):
        raise ValueError(f"{prefix}incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
    return data["start"].rstrip("\0")


class Cluster:
    """The objects served, indexed by (apiVersion, plural), in key order; immutable once built
    except `forbidden`."""

    def __init__(self, cluster=None, forbidden=(), stored=False):
        self.objects = {(k[1], k[3]): [] for k in KINDS}
        self.forbidden = set(forbidden)  # kinds ("IP", "ConfigMap", ...) answered 403
        self.stored = stored
        resource_version = 100
        for key, items in (cluster or {}).items():
            kind = BY_KEY.get(key)
            if kind is None:
                raise ValueError(f"unknown cluster key {key!r}")
            for obj in items or []:
                obj = dict(obj)
                obj.setdefault("apiVersion", kind[1])
                obj.setdefault("kind", kind[2])
                if stored:
                    resource_version += 1
                    obj = as_stored(obj, kind, resource_version)
                self.objects[(kind[1], kind[3])].append(obj)
        for objects in self.objects.values():
            objects.sort(key=object_key)
        self.resource_version = str(resource_version) if stored else RESOURCE_VERSION
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
        # TCP_NODELAY on every accepted connection, as Go's net/http sets it.
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if isinstance(self.request, ssl.SSLSocket):
            self.request.do_handshake()  # deferred from accept() to this thread
        super().setup()

    def log_message(self, fmt, *args):
        if self.server.verbose:
            sys.stderr.write("standin: " + (fmt % args) + "\n")

    def send_json(self, code, body):
        if isinstance(body, PlainText):
            data, media = body.encode(), "text/plain; charset=utf-8"
        else:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            media = "application/json"
        self.send_response(code)
        self.send_header("Content-Type", media)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers_with(data)

    def end_headers_with(self, data):
        """Ends the headers and sends them with `data` in one write, as Go's net/http
        sends a small answer: headers and body written apart met the client's delayed
        ACK (Nagle's algorithm holds the second write until the first is acknowledged)."""
        self._headers_buffer.append(b"\r\n" + data)
        self.flush_headers()

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
        parts = [unquote(p) for p in url.path.split("/") if p]
        if parts == ["standin", "stats"]:  # the stand-in's own counters, for a client in another process
            return 200, self.server.stats.snapshot()
        if parts == ["version"]:
            return 200, VERSION
        if parts == ["api"]:
            return 200, {
                "kind": "APIVersions",
                "versions": ["v1"],
                "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": self.server.address}],
            }
        if parts == ["apis"]:
            return 200, {
                "kind": "APIGroupList",
                "apiVersion": "v1",
                "groups": [{
                    "name": gv.split("/")[0],
                    "versions": [{"groupVersion": gv, "version": gv.split("/")[1]}],
                    "preferredVersion": {"groupVersion": gv, "version": gv.split("/")[1]},
                } for gv in GROUP_VERSIONS],
            }
        if parts == ["api", "v1"]:
            return 200, self.resource_list("v1")
        if parts[:2] == ["api", "v1"]:
            return self.resource_request("v1", parts[2:], query)
        for gv in GROUP_VERSIONS:
            if parts == ["apis", *gv.split("/")]:
                return 200, self.resource_list(gv)
            if parts[:3] == ["apis", *gv.split("/")]:
                return self.resource_request(gv, parts[3:], query)
        return 404, PlainText(NOT_FOUND)

    def resource_list(self, api_version):
        group, _, version = api_version.rpartition("/")
        resources = []
        for _, av, kind, plural, namespaced in sorted(KINDS, key=lambda k: k[3]):
            if av != api_version:
                continue
            singular, short_names, subresources = DISCOVERY[plural]
            verbs = CR_VERBS if group not in BUILT_IN_GROUPS else NAMESPACE_VERBS if plural == "namespaces" \
                else CORE_VERBS
            entry = {"name": plural, "singularName": singular, "namespaced": namespaced, "kind": kind,
                     "verbs": verbs, "shortNames": short_names}
            if plural in CATEGORIES:
                entry["categories"] = CATEGORIES[plural]
            entry["storageVersionHash"] = storage_version_hash(group, version, kind)
            resources.append(entry)
            for sub, sub_kind, sub_verbs in subresources:
                resources.append({"name": f"{plural}/{sub}", "singularName": "", "namespaced": namespaced,
                                  "kind": sub_kind or kind, "verbs": sub_verbs})
        body = {"kind": "APIResourceList", "groupVersion": api_version, "resources": resources}
        if group:  # the core group's list has no apiVersion
            body = {"kind": "APIResourceList", "apiVersion": "v1", **body}
        return body

    def resource_request(self, api_version, parts, query):
        group = api_version.split("/")[0] if "/" in api_version else ""
        # An unknown path: the core group answers with a Status, others as the mux does.
        unknown = status(404, "NotFound", "the server could not find the requested resource", {}) if not group \
            else (404, PlainText(NOT_FOUND))
        namespace = None
        if len(parts) >= 2 and parts[0] == "namespaces" and (len(parts) > 2 or api_version != "v1"):
            namespace, parts = parts[1], parts[2:]
        subresource = None
        if len(parts) == 3 and parts[2] == "status":
            parts, subresource = parts[:2], "status"
        if not parts or len(parts) > 2:
            return unknown
        kind = BY_PLURAL.get((api_version, parts[0]))
        if kind is None:
            return unknown
        _, _, kind_name, plural, namespaced = kind
        if namespace is not None and not namespaced:
            return unknown
        if subresource and STATUS not in DISCOVERY[plural][2]:
            return unknown
        resource = f"{plural}.{group}" if group else plural
        name = parts[1] if len(parts) == 2 else None
        verb = "get" if name else ("watch" if query.get("watch") in ("true", "1") else "list")
        server = self.server
        server.stats.count(verb)
        cluster = server.cluster
        if kind_name in cluster.forbidden:
            # A Namespace is its own namespace to the authorizer.
            scope_ns = name if plural == "namespaces" and name else namespace
            scope = f'in the namespace "{scope_ns}"' if scope_ns else "at the cluster scope"
            what = f'resource "{plural}" in API group "{group}"'
            return status(
                403,
                "Forbidden",
                f'{resource}{" " + json.dumps(name) if name else ""} is forbidden: User '
                f'"system:serviceaccount:kubewarden:policy-server" cannot {verb} {what} {scope}',
                details(name, group, plural),
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
            return status(404, "NotFound", f'{resource} "{name}" not found', details(name, group, plural))
        try:
            labels = parse_label_selector(query.get("labelSelector"))
            fields = parse_field_selector(query.get("fieldSelector"))
        except ValueError as e:
            return status(400, "BadRequest", str(e))
        supported = {"metadata.name"} | ({"metadata.namespace"} if namespaced else set()) \
            | EXTRA_FIELDS.get(plural, set()) | selectable_fields(cluster, api_version, plural)
        for key, _, _ in fields:
            if key not in supported:
                if plural == "configmaps":  # its own wording
                    return status(400, "BadRequest", f'"{key}" is not a known field selector: '
                                                     f'only "metadata.name", "metadata.namespace"')
                return status(400, "BadRequest", f"field label not supported: {key}")
        selected = objects
        if labels or fields:
            selected = [o for o in objects if label_matches(o, labels) and field_matches(o, fields)]
        if verb == "watch":
            self.hold_watch(kind, selected, query)
            return None, None
        return self.list_page(kind, namespace, selected, bool(labels or fields), query)

    def list_page(self, kind, namespace, selected, filtered, query):
        """One page of a LIST, as the API server pages (or not, for resourceVersion=0)."""
        api_version, kind_name, plural = kind[1], kind[2], kind[3]
        cluster = self.server.cluster
        start = 0
        if query.get("continue"):
            try:
                after = decode_continue(query["continue"])
            except ValueError as e:
                return status(400, "BadRequest", str(e))
            start = bisect.bisect_right(selected, after, key=object_key)
        limit = int(query.get("limit") or 0)
        if query.get("resourceVersion") == "0" and not query.get("continue"):
            limit = 0  # served from the watch cache, which does not page
        end = start + limit if limit > 0 else len(selected)
        meta = {"resourceVersion": cluster.resource_version}
        custom = api_version.rpartition("/")[0] not in BUILT_IN_GROUPS
        if custom:  # custom resource lists always carry the field; built-in ones omit it empty
            meta["continue"] = ""
        if end < len(selected):
            meta["continue"] = encode_continue(cluster.resource_version, object_key(selected[end - 1]))
            if not filtered:
                meta["remainingItemCount"] = len(selected) - end
        page = selected[start:end]
        if cluster.stored and not custom:  # built-in list items carry no apiVersion and kind
            page = [{k: v for k, v in o.items() if k not in ("apiVersion", "kind")} for o in page]
        if not filtered and start == 0 and end >= len(selected):
            key = (api_version, plural, namespace)
            body = cluster.encoded.get(key)
            if body is None:
                body = json.dumps({"kind": kind_name + "List", "apiVersion": api_version, "metadata": meta,
                                   "items": page}).encode()
                cluster.encoded[key] = body
            return 200, body
        return 200, {"kind": kind_name + "List", "apiVersion": api_version, "metadata": meta, "items": page}

    def bookmark(self, kind, annotations=None):
        api_version, kind_name = kind[1], kind[2]
        meta = {"resourceVersion": self.server.cluster.resource_version}
        if annotations:
            meta["annotations"] = annotations
        obj = {"apiVersion": api_version, "kind": kind_name, "metadata": meta}
        if kind_name == "Namespace":  # a typed empty object
            obj.update(spec={}, status={})
        elif kind_name == "Service":
            obj.update(spec={}, status={"loadBalancer": {}})
        return {"type": "BOOKMARK", "object": obj}

    @staticmethod
    def bookmark_times(timeout):
        """Seconds into a watch of this timeout at which the API server sends a BOOKMARK."""
        times = []
        t = BOOKMARK_FIRST
        while t < timeout - BOOKMARK_BEFORE_END:
            times.append(t)
            t += BOOKMARK_EVERY
        if timeout > BOOKMARK_END_AFTER:
            times.append(timeout - BOOKMARK_BEFORE_END)
        return times

    def hold_watch(self, kind, selected, query):
        """A watch that sees no change: the initial events if asked, bookmarks, until its timeout."""
        server = self.server
        timeout = float(query.get("timeoutSeconds") or 1800)
        bookmarks = query.get("allowWatchBookmarks") == "true"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        server.stats.watch(+1)

        def chunk(event):
            data = json.dumps(event).encode() + b"\n"
            return b"%x\r\n%s\r\n" % (len(data), data)

        try:
            start = time.monotonic()
            # The headers and the current state (if asked) in one write, then
            # one write per event: the API server flushes when no event is queued.
            initial = []
            if query.get("resourceVersion", "") in ("", "0"):  # the current state first
                initial = [chunk({"type": "ADDED", "object": obj}) for obj in selected]
                if bookmarks:
                    initial.append(chunk(self.bookmark(kind, {"k8s.io/initial-events-end": "true"})))
            self.end_headers_with(b"".join(initial))
            for at in (self.bookmark_times(timeout) if bookmarks else []):
                if server.stopping.wait(max(0.0, start + at - time.monotonic())):
                    break
                self.wfile.write(chunk(self.bookmark(kind)))
            server.stopping.wait(max(0.0, start + timeout - time.monotonic()))
            # The end of the stream, as kube-apiserver ends a watch at its
            # timeout: the last (zero-length) chunk, and the connection kept
            # for the client's next request (e2e/suites/test_standin_vs_apiserver.py
            # compares the two).
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError, OSError):
            self.close_connection = True
        finally:
            server.stats.watch(-1)
            if server.stopping.is_set():
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

    def handle_error(self, request, client_address):
        """A client gone mid-handshake or mid-request (a kube-rs client that exits with
        connections still opening) is the client's business, not a stand-in error."""
        if isinstance(sys.exc_info()[1], OSError):
            return
        super().handle_error(request, client_address)

    @property
    def address(self):
        return f"127.0.0.1:{self.server_address[1]}"

    @property
    def url(self):
        scheme = "https" if self.tls is not None else "http"
        return f"{scheme}://{self.address}"

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
    parser.add_argument("--stored", action="store_true",
                        help="serve objects as the API server stores them (uid, resourceVersion, ... filled in)")
    parser.add_argument("--delay-get-ms", type=float, default=0.0)
    parser.add_argument("--delay-list-ms", type=float, default=0.0)
    parser.add_argument("-v", "--verbose", action="store_true", help="log every request")
    args = parser.parse_args()
    with open(args.case) as f:
        case = json.load(f)
    server = StandIn(
        Cluster(case.get("cluster"), args.forbid, args.stored),
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
