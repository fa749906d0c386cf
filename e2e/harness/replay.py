"""A conformance case replayed on a real API server.

The case's `cluster` is written through the API as kube-ovn-controller's
ServiceAccount, which deploy/'s policies exclude, so every object is stored
as the case has it (status included, through the status subresource), valid
or not. The case's request is then made as cluster-admin, so the API server itself
decodes it, runs its own validation and defaulting, and calls the webhooks
of deploy/: its answer (code, message, Warning headers) is the outcome.
"""

import copy
import datetime
import re

from .apiserver import KINDS

# deploy/cluster-admission-policies.yaml excludes this user's requests
# (matchConditions): what it writes is never checked, as in a cluster.
KUBE_OVN_USER = "system:serviceaccount:kube-system:ovn"
KUBE_OVN_GROUPS = ["system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"]
# Kinds a reset never deletes: namespaces (below), and the CRDs the control
# plane was given (the policy reads the IPPool CRD; the kinds are Kube-OVN's).
KEPT = {"namespaces", "customresourcedefinitions"}

# Namespaces the API server keeps; never deleted.
SYSTEM_NAMESPACES = {"default", "kube-system", "kube-public", "kube-node-lease", "kubewarden"}
# Workload kinds a request may be about: (apiVersion, plural, namespaced).
WORKLOADS = {
    "Pod": ("v1", "pods"),
    "Deployment": ("apps/v1", "deployments"),
    "StatefulSet": ("apps/v1", "statefulsets"),
    "DaemonSet": ("apps/v1", "daemonsets"),
    "Job": ("batch/v1", "jobs"),
    "CronJob": ("batch/v1", "cronjobs"),
}
SERVER_SET = ("resourceVersion", "uid", "creationTimestamp", "managedFields", "generation", "selfLink")


def resource_path(api_version, plural, namespace=None, name=None):
    base = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
    path = base + (f"/namespaces/{namespace}" if namespace else "") + f"/{plural}"
    return path + (f"/{name}" if name else "")


def plural_of(kind):
    for _, api_version, k, plural, namespaced in KINDS:
        if k == kind:
            return api_version, plural, namespaced
    if kind in WORKLOADS:
        return (*WORKLOADS[kind], True)
    raise KeyError(kind)


def clean(obj):
    """The object as a client would send it: no server-set metadata."""
    obj = copy.deepcopy(obj)
    meta = obj.setdefault("metadata", {})
    for key in SERVER_SET:
        meta.pop(key, None)
    return obj


def still_within_grace(meta):
    """Whether deletionTimestamp plus deletionGracePeriodSeconds (when set) is still ahead of now."""
    stamp, grace = meta.get("deletionTimestamp"), meta.get("deletionGracePeriodSeconds")
    if not stamp or grace is None:
        return False
    try:
        deleted = datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return False
    return deleted + datetime.timedelta(seconds=grace) > datetime.datetime.now(datetime.timezone.utc)


class Refused(Exception):
    """The API server refused to store part of the case's cluster."""


class Replayer:
    def __init__(self, api):
        self.api = api
        self.namespaces = set()
        self._subresources = {}

    def as_ovn(self, method, path, body=None):
        return self.api.request(method, path, body, user=KUBE_OVN_USER, groups=KUBE_OVN_GROUPS)

    # --- cluster state -------------------------------------------------

    def reset(self):
        """Delete what earlier cases left: every kind of KINDS but namespaces, and workloads.

        Objects keep the finalizers a case gives them (Kube-OVN's controller
        sets some); nothing here would remove them, so they are dropped first.
        Namespaced kinds: only what a case created (the API server's own
        Service default/kubernetes stays).
        """
        for key, api_version, kind, plural, namespaced in KINDS:
            if key in KEPT:
                continue
            for ns in sorted(self.namespaces | {"default", "kube-system"}) if namespaced else [None]:
                self._delete_all(api_version, plural, ns, "kube-ovn-policy.e2e/case" if namespaced else None)
        for api_version, plural in WORKLOADS.values():
            for ns in sorted(self.namespaces | {"default", "kube-system", "kubewarden"}):
                self._delete_all(api_version, plural, ns, None)

    def _delete_all(self, api_version, plural, ns, selector):
        path = resource_path(api_version, plural, ns)
        code, body, _ = self.api.request("GET", path, params={"labelSelector": selector} if selector else None)
        for item in (body or {}).get("items", []) if code == 200 else []:
            item_path = resource_path(api_version, plural, ns, item["metadata"]["name"])
            if item["metadata"].get("finalizers"):
                self.api.request("PATCH", item_path, {"metadata": {"finalizers": None}},
                                 user=KUBE_OVN_USER, groups=KUBE_OVN_GROUPS, content_type="application/merge-patch+json")
            self.as_ovn("DELETE", item_path)

    def ensure_namespace(self, name, labels=None, annotations=None):
        """The namespace exists with exactly these labels and annotations (namespaces are never deleted)."""
        path = resource_path("v1", "namespaces", name=name)
        code, current, _ = self.api.request("GET", path)
        body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        if code == 404:
            self._store(resource_path("v1", "namespaces"), body, "POST")
            code, current, _ = self.api.request("GET", path)
        meta = current["metadata"]
        wanted_labels = dict(labels or {})
        wanted_labels["kubernetes.io/metadata.name"] = name
        if meta.get("labels", {}) != wanted_labels or meta.get("annotations", {}) != (annotations or {}):
            meta["labels"], meta["annotations"] = wanted_labels, dict(annotations or {})
            self._store(path, current, "PUT")
        if name not in SYSTEM_NAMESPACES:
            self.namespaces.add(name)
        # The ServiceAccount admission plugin wants the pod's ServiceAccount.
        sa = resource_path("v1", "serviceaccounts", name, "default")
        if self.api.request("GET", sa)[0] == 404:
            self._store(
                resource_path("v1", "serviceaccounts", name),
                {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}},
                "POST",
            )

    def _store(self, path, body, method):
        code, answer, _ = self.as_ovn(method, path, body)
        if code not in (200, 201):
            message = answer.get("message") if isinstance(answer, dict) else answer
            raise Refused(f"{method} {path}: {code} {message}")
        return answer

    def create(self, obj):
        """Store one object as the case has it, status included."""
        api_version, plural, namespaced = plural_of(obj["kind"])
        obj = clean(obj)
        ns = obj["metadata"].get("namespace") if namespaced else None
        if namespaced:
            ns = ns or "default"
            obj["metadata"]["namespace"] = ns
            obj["metadata"].setdefault("labels", {})["kube-ovn-policy.e2e/case"] = "true"
            if ns not in getattr(self, "loaded", ()):
                self.ensure_namespace(ns)  # the case's own namespaces keep their annotations
        if (obj["kind"], ns, obj["metadata"]["name"]) == ("Service", "default", "kubernetes"):
            # The API server's own: it can only be as the API server made it.
            code, real, _ = self.api.request("GET", resource_path("v1", "services", "default", "kubernetes"))
            if real["spec"].get("clusterIPs") == obj.get("spec", {}).get("clusterIPs", [obj.get("spec", {}).get("clusterIP")]):
                return real
            raise Refused(f"Service default/kubernetes is the API server's own, with clusterIPs {real['spec'].get('clusterIPs')}")
        status = obj.get("status")
        stored = self._store(resource_path(api_version, plural, ns), obj, "POST")
        if status and self.has_status_subresource(api_version, plural):
            stored["status"] = status
            stored = self._store(resource_path(api_version, plural, ns, obj["metadata"]["name"]) + "/status", stored, "PUT")
        return stored

    def has_status_subresource(self, api_version, plural):
        """Whether status is written apart (a CRD's status subresource); without one it is stored with the object."""
        if api_version not in self._subresources:
            base = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
            code, body, _ = self.api.request("GET", base)
            self._subresources[api_version] = {r["name"] for r in (body or {}).get("resources", [])} if code == 200 else set()
        return f"{plural}/status" in self._subresources[api_version] and api_version != "v1"

    def store_old(self, old):
        """The request's oldObject as the stored object: replaced when the case's cluster already has it."""
        api_version, plural, namespaced = plural_of(old["kind"])
        ns = (old["metadata"].get("namespace") or "default") if namespaced else None
        path = resource_path(api_version, plural, ns, old["metadata"]["name"])
        code, current, _ = self.api.request("GET", path)
        if code == 404:
            return self.create(old)
        obj = clean(old)
        if namespaced:
            obj["metadata"]["namespace"] = ns
            obj["metadata"].setdefault("labels", {})["kube-ovn-policy.e2e/case"] = "true"
        obj["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
        stored = self._store(path, obj, "PUT")
        if old.get("status") and self.has_status_subresource(api_version, plural):
            stored["status"] = old["status"]
            stored = self._store(path + "/status", stored, "PUT")
        return stored

    def pod_lifecycle(self, old, stored, path):
        """The oldObject's place in the pod's life, which a create cannot give: its status phase
        (written to pods/status, as the kubelet writes it) and its deletion (a DELETE; a finalizer,
        the case's or one of ours, keeps the pod, and reset() removes it). The stored pod after."""
        status = {k: v for k, v in (old.get("status") or {}).items() if k in ("phase", "reason")}
        if status.get("phase"):
            stored = copy.deepcopy(stored)
            stored.setdefault("status", {}).update(status)
            stored = self._store(path + "/status", stored, "PUT")
        if old["metadata"].get("deletionTimestamp"):
            # The API server deletes a pod bound to no Node at once (grace 0): the deletion is past
            # its grace period as soon as it is made, which replays a case's deletion only where
            # the case's own deadline has passed too (isPodAlive reads the clock).
            if still_within_grace(old["metadata"]):
                raise Refused("the pod's deletion is still within its grace period, which an unbound "
                              "pod's DELETE (grace 0) cannot give")
            if not stored["metadata"].get("finalizers"):
                self.api.request("PATCH", path, {"metadata": {"finalizers": ["kube-ovn-policy.e2e/hold"]}},
                                 user=KUBE_OVN_USER, groups=KUBE_OVN_GROUPS,
                                 content_type="application/merge-patch+json")
            self.as_ovn("DELETE", path)
            code, stored, _ = self.api.request("GET", path)
            if code != 200 or not stored["metadata"].get("deletionTimestamp"):
                raise Refused(f"the pod is not kept being deleted: {code}")
        return stored

    def load(self, cluster):
        self.loaded = set()
        for ns in cluster.get("namespaces", []):
            meta = ns.get("metadata", {})
            self.ensure_namespace(meta["name"], meta.get("labels"), meta.get("annotations"))
            self.loaded.add(meta["name"])
        if cluster.get("customresourcedefinitions"):
            raise Refused("a case's CustomResourceDefinitions are not replayed: the control plane's are "
                          "Kube-OVN's as installed")
        for key, *_ in KINDS:
            if key in KEPT:
                continue
            for obj in cluster.get(key, []):
                self.create(obj)

    # --- the request ---------------------------------------------------

    def send(self, request):
        """Make the case's request as cluster-admin: a dict with allowed, code, message, warnings, webhook, raw.

        Through the API rather than kubectl: kubectl prints a denial's code only
        as the Status reason, which Kubewarden's policy-server never sets (the
        seed test shows what kubectl prints).
        """
        operation = request["operation"]
        kind = request["kind"]["kind"]
        api_version, plural, namespaced = plural_of(kind)
        ns = (request.get("namespace") or "default") if namespaced else None
        if namespaced and ns not in getattr(self, "loaded", ()):
            self.ensure_namespace(ns)  # the case's own namespaces keep their labels and annotations
        name = request.get("name") or (request.get("object") or {}).get("metadata", {}).get("name")
        if operation == "CREATE":
            obj = clean(request["object"])
            if namespaced and kind not in WORKLOADS:
                # A namespaced object a CREATE leaves (a NetworkAttachmentDefinition,
                # I20) is the case's, removed with the rest by reset().
                obj["metadata"].setdefault("labels", {})["kube-ovn-policy.e2e/case"] = "true"
            code, body, warnings = self.api.request("POST", resource_path(api_version, plural, ns), obj)
        elif operation == "UPDATE":
            stored = self.store_old(request["oldObject"])
            if kind == "Pod":
                stored = self.pod_lifecycle(request["oldObject"], stored, resource_path(api_version, plural, ns, name))
            obj = clean(request["object"])
            if kind == "Pod":
                # A pod's spec is immutable past what the API server defaulted
                # at creation: the update is the stored pod with the request's
                # labels and annotations, as `kubectl annotate` makes it.
                meta = obj["metadata"]
                obj = copy.deepcopy(stored)
                for field in ("labels", "annotations"):
                    obj["metadata"][field] = meta.get(field) or {}
                obj["metadata"].setdefault("labels", {})["kube-ovn-policy.e2e/case"] = "true"
            obj["metadata"]["resourceVersion"] = stored["metadata"]["resourceVersion"]
            code, body, warnings = self.api.request("PUT", resource_path(api_version, plural, ns, name), obj)
        elif operation == "DELETE":
            self.store_old(request["oldObject"])
            code, body, warnings = self.api.request("DELETE", resource_path(api_version, plural, ns, name))
        else:
            raise Refused(f"operation {operation} is not replayed")
        return outcome(code, body, warnings)


WEBHOOK_DENIAL = re.compile(r'^admission webhook "(?P<webhook>[^"]+)" denied the request: (?P<message>.*)$', re.S)


def outcome(code, body, warnings):
    """What the API server answered: allowed, the webhook's code and message, warnings, and the raw Status."""
    if code in (200, 201, 202):
        return {"allowed": True, "code": None, "message": None, "warnings": warnings, "webhook": None, "raw": ""}
    message = body.get("message", "") if isinstance(body, dict) else str(body)
    raw = f"{code} {body.get('reason', '') if isinstance(body, dict) else ''}: {message}"
    m = WEBHOOK_DENIAL.match(message)
    if m:
        return {"allowed": False, "code": code, "message": m["message"], "warnings": warnings,
                "webhook": m["webhook"], "raw": raw}
    return {"allowed": False, "code": code, "message": None, "warnings": warnings, "webhook": None, "raw": raw}
