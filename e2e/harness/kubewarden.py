"""Kubewarden's controller (kubewarden-controller, on PATH) out of cluster
against a control plane: its command line, certificates and own webhooks as
the chart makes them, and what kube-controller-manager and the kubelet would
write for the policy-server Deployments it makes (`Rollout`)."""

import base64
import copy
import hashlib
import json
import socket
import ssl
import threading
import time
import urllib.request

from .certificates import openssl, signed_server_certificate
from .checks import short
from .webhooks import policy_id

NAMESPACE = "kubewarden"
# The chart's names (admission-controller 6.0.2, templates/webhooks.yaml).
CA_SECRET = "kubewarden-ca"
WEBHOOK_CERT_SECRET = "kubewarden-webhook-server-cert"
WEBHOOK_SERVICE = "kubewarden-controller-webhook-service"
FINALIZER = "kubewarden.io/finalizer"
# The deployment controller's labels and annotations
# (k8s.io/api/apps/v1: DefaultDeploymentUniqueLabelKey; kubernetes
# pkg/controller/deployment/util: RevisionAnnotation and the others).
HASH_LABEL = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
DESIRED = "deployment.kubernetes.io/desired-replicas"
MAX = "deployment.kubernetes.io/max-replicas"
PS_LABEL = "kubewarden/policy-server"


def make_pki(folder):
    """The chart's CA and the controller's webhook certificate, with openssl.

    The CA key is SEC1 (`EC PRIVATE KEY`): the controller reads it with
    x509.ParseECPrivateKey (internal/certs/certs.go, GenerateCert)."""
    openssl(folder, "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "ca.key", check=True)
    openssl(folder, "req", "-x509", "-new", "-key", "ca.key", "-out", "ca.crt", "-days", "2",
            "-subj", "/CN=kubewarden-controller-ca",
            "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,digitalSignature,keyEncipherment", check=True)
    webhook_certificate(folder)
    return {name: (folder / name).read_bytes() for name in ("ca.crt", "ca.key", "tls.crt", "tls.key")}


def webhook_certificate(folder):
    """The controller's webhook server certificate, tls.crt and tls.key, signed by ca.crt and ca.key
    of `folder` as the chart signs it (genSignedCertWithKey with kubewarden-ca). The chart's names
    the Service only; the URL form of the controller's webhooks here needs 127.0.0.1 too."""
    return signed_server_certificate(folder, f"{WEBHOOK_SERVICE}.{NAMESPACE}.svc")


def serving_folder(folder, tls_crt, tls_key):
    """A TMPDIR for the controller holding its webhook server's certificate where
    controller-runtime reads it (k8s-webhook-server/serving-certs)."""
    tmp = folder / "controller-tmp"
    certs = tmp / "k8s-webhook-server" / "serving-certs"
    certs.mkdir(parents=True, exist_ok=True)
    (certs / "tls.crt").write_bytes(tls_crt)
    (certs / "tls.key").write_bytes(tls_key)
    return tmp


def b64(data):
    return base64.b64encode(data).decode()


def webhook_path(policy):
    """The API path of the webhook configuration the controller writes for a policy."""
    plural = "mutatingwebhookconfigurations" if policy["spec"].get("mutating") else "validatingwebhookconfigurations"
    return f"/apis/admissionregistration.k8s.io/v1/{plural}/{policy_id(policy)}"


def policy_path(name):
    return f"/apis/policies.kubewarden.io/v1/clusteradmissionpolicies/{name}"


def controller_command(binary, webhook_port, probe_port):
    """The controller's command line: the chart's flags (cmd/controller/main.go)
    but --leader-elect, free ports for its webhook server and probes, no metrics."""
    return [
        binary,
        f"--deployments-namespace={NAMESPACE}",
        f"--webhook-service-name={WEBHOOK_SERVICE}",
        f"--webhook-server-port={webhook_port}",
        f"--health-probe-bind-address=127.0.0.1:{probe_port}",
        "--metrics-bind-address=0",
        "--always-accept-admission-reviews-on-deployments-namespace",
        "--zap-log-level=info",
    ]


def controller_ready(probe_port):
    """Whether the controller's /readyz answers 200."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{probe_port}/readyz", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


def controller_webhooks(port, ca_pem):
    """The controller's own webhooks for the kinds deploy/ uses, as the chart
    registers them (templates/webhooks.yaml), by URL instead of Service."""
    def hook(prefix, plural, kind, versions):
        return {
            "name": f"{prefix}{kind}.kb.io",
            "admissionReviewVersions": versions,
            "clientConfig": {"url": f"https://127.0.0.1:{port}/{'mutate' if prefix == 'm' else 'validate'}"
                                    f"-policies-kubewarden-io-v1-{kind}", "caBundle": b64(ca_pem)},
            "failurePolicy": "Fail",
            "sideEffects": "None",
            "rules": [{"apiGroups": ["policies.kubewarden.io"], "apiVersions": ["v1"],
                       "operations": ["CREATE", "UPDATE"], "resources": [plural]}],
        }

    mutating, validating = [], []
    for plural, kind in (("policyservers", "policyserver"), ("clusteradmissionpolicies", "clusteradmissionpolicy")):
        mutating.append(hook("m", plural, kind, ["v1", "v1beta1"]))
        validating.append(hook("v", plural, kind, ["v1"] if plural == "policyservers" else ["v1", "v1beta1"]))
    labels = {"app.kubernetes.io/part-of": "kubewarden-e2e"}  # not the policies' label
    return [
        {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
         "metadata": {"name": "kubewarden-controller-mutating-webhook-configuration", "labels": labels},
         "webhooks": mutating},
        {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
         "metadata": {"name": "kubewarden-controller-validating-webhook-configuration", "labels": labels},
         "webhooks": validating},
    ]


class Rollout:
    """What kube-controller-manager and the kubelet would write for the
    controller's policy-server Deployments: a thread, until stopped."""

    def __init__(self, api, namespace):
        self.api, self.namespace = api, namespace
        self.stop_event = threading.Event()
        self.errors = []
        self.rollouts = 0
        self.thread = threading.Thread(target=self.run, daemon=True)

    def start(self):
        self.thread.start()
        return self

    def stop(self):
        self.stop_event.set()
        self.thread.join(30)

    def run(self):
        while not self.stop_event.is_set():
            try:
                self.step()
            except Exception as e:  # noqa: BLE001 - reported by the test
                self.errors.append(f"{type(e).__name__}: {e}")
            self.stop_event.wait(0.3)

    def call(self, method, path, body=None, ok=(200, 201), **kw):
        code, got, _ = self.api.request(method, path, body, **kw)
        if code not in ok:
            raise RuntimeError(f"{method} {path}: {code} {short(got, 400)}")
        return got

    def step(self):
        ns = self.namespace
        deployments = self.call("GET", f"/apis/apps/v1/namespaces/{ns}/deployments")["items"]
        for deployment in deployments:
            if PS_LABEL in (deployment["metadata"].get("labels") or {}):
                self.reconcile(deployment)

    def reconcile(self, deployment):
        ns, name = self.namespace, deployment["metadata"]["name"]
        server = deployment["metadata"]["labels"][PS_LABEL]
        template = deployment["spec"]["template"]
        replicas = deployment["spec"].get("replicas", 1)
        pod_hash = template_hash(template)
        selector = f"{PS_LABEL}={server}"
        sets = self.call("GET", f"/apis/apps/v1/namespaces/{ns}/replicasets", params={"labelSelector": selector})["items"]
        current = next((s for s in sets if s["metadata"]["labels"].get(HASH_LABEL) == pod_hash), None)
        annotations = deployment["metadata"].get("annotations") or {}
        if current is None:
            revision = 1 + max([int(s["metadata"].get("annotations", {}).get(REVISION, "0")) for s in sets] or [0])
            current = self.new_replica_set(deployment, pod_hash, revision, replicas)
            self.rollouts += 1
        revision = current["metadata"]["annotations"][REVISION]
        # The deployment controller keeps the newest ReplicaSet's annotations
        # equal to the Deployment's (SetNewReplicaSetAnnotations).
        wanted = self.copied_annotations(annotations, revision, replicas)
        if any(current["metadata"]["annotations"].get(k) != v for k, v in wanted.items()):
            self.call("PATCH", f"/apis/apps/v1/namespaces/{ns}/replicasets/{current['metadata']['name']}",
                      {"metadata": {"annotations": wanted}}, content_type="application/merge-patch+json")
        if annotations.get(REVISION) != revision:
            self.call("PATCH", f"/apis/apps/v1/namespaces/{ns}/deployments/{name}",
                      {"metadata": {"annotations": {REVISION: revision}}}, content_type="application/merge-patch+json")
        for old in sets:
            if old["metadata"]["name"] != current["metadata"]["name"] and old["spec"].get("replicas", 1) != 0:
                self.call("PATCH", f"/apis/apps/v1/namespaces/{ns}/replicasets/{old['metadata']['name']}",
                          {"spec": {"replicas": 0}}, content_type="application/merge-patch+json")
        pods = self.call("GET", f"/api/v1/namespaces/{ns}/pods", params={"labelSelector": selector})["items"]
        live = []
        for pod in pods:
            if pod["metadata"]["labels"].get(HASH_LABEL) != pod_hash:
                self.call("DELETE", f"/api/v1/namespaces/{ns}/pods/{pod['metadata']['name']}", ok=(200, 202, 404))
            elif not pod["metadata"].get("deletionTimestamp"):
                live.append(pod)
        for _ in range(replicas - len(live)):
            live.append(self.new_pod(current))
        for pod in live[replicas:]:
            self.call("DELETE", f"/api/v1/namespaces/{ns}/pods/{pod['metadata']['name']}", ok=(200, 202, 404))
        live = live[:replicas]
        for pod in live:
            if not pod_ready(pod):
                self.mark_ready(pod)
        status = {"replicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas,
                  "fullyLabeledReplicas": replicas, "observedGeneration": current["metadata"].get("generation", 1)}
        if current.get("status", {}) != status:
            self.call("PATCH", f"/apis/apps/v1/namespaces/{ns}/replicasets/{current['metadata']['name']}/status",
                      {"status": status}, content_type="application/merge-patch+json")
        dstatus = {"replicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas,
                   "updatedReplicas": replicas, "observedGeneration": deployment["metadata"].get("generation", 1)}
        if any(deployment.get("status", {}).get(k) != v for k, v in dstatus.items()):
            self.call("PATCH", f"/apis/apps/v1/namespaces/{ns}/deployments/{name}/status",
                      {"status": dstatus}, content_type="application/merge-patch+json")

    @staticmethod
    def copied_annotations(annotations, revision, replicas):
        # The deployment controller copies all but kubectl's last-applied
        # configuration and its own bookkeeping (skipCopyAnnotation).
        copied = {k: v for k, v in annotations.items()
                  if k not in ("kubectl.kubernetes.io/last-applied-configuration", REVISION, DESIRED, MAX,
                               "deployment.kubernetes.io/revision-history")}
        copied.update({REVISION: revision, DESIRED: str(replicas), MAX: str(replicas + max(1, replicas // 4))})
        return copied

    def new_replica_set(self, deployment, pod_hash, revision, replicas):
        meta = deployment["metadata"]
        template = copy.deepcopy(deployment["spec"]["template"])
        template["metadata"].setdefault("labels", {})[HASH_LABEL] = pod_hash
        selector = copy.deepcopy(deployment["spec"]["selector"])
        selector.setdefault("matchLabels", {})[HASH_LABEL] = pod_hash
        replica_set = {
            "apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {
                "name": f"{meta['name']}-{pod_hash}", "namespace": self.namespace,
                "labels": dict(template["metadata"]["labels"]),
                "annotations": self.copied_annotations(meta.get("annotations") or {}, str(revision), replicas),
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": meta["name"],
                                     "uid": meta["uid"], "controller": True, "blockOwnerDeletion": True}],
            },
            "spec": {"replicas": replicas, "selector": selector, "template": template},
        }
        return self.call("POST", f"/apis/apps/v1/namespaces/{self.namespace}/replicasets", replica_set)

    def new_pod(self, replica_set):
        meta = replica_set["metadata"]
        template = replica_set["spec"]["template"]
        pod = {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {
                "generateName": meta["name"] + "-", "namespace": self.namespace,
                "labels": dict(template["metadata"].get("labels") or {}),
                "annotations": dict(template["metadata"].get("annotations") or {}),
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": meta["name"],
                                     "uid": meta["uid"], "controller": True, "blockOwnerDeletion": True}],
            },
            "spec": template["spec"],
        }
        return self.call("POST", f"/api/v1/namespaces/{self.namespace}/pods", pod)

    def mark_ready(self, pod):
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        status = {
            "phase": "Running", "podIP": "10.0.0.2", "hostIP": "10.0.0.1", "startTime": now,
            "conditions": [{"type": t, "status": "True", "lastTransitionTime": now}
                           for t in ("PodScheduled", "Initialized", "ContainersReady", "Ready")],
        }
        self.call("PATCH", f"/api/v1/namespaces/{self.namespace}/pods/{pod['metadata']['name']}/status",
                  {"status": status}, content_type="application/merge-patch+json")


def template_hash(template):
    """A pod-template-hash for a template: 10 characters of the alphabet the
    deployment controller's hashes use (rand.SafeEncodeString); not its value."""
    digest = hashlib.sha256(json.dumps(template, sort_keys=True).encode()).digest()
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    return "".join(alphabet[b % len(alphabet)] for b in digest[:10])


def pod_ready(pod):
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


def webhook_server_up(port, ca_pem):
    """Whether the controller's webhook server completes a TLS handshake, its certificate signed by `ca_pem`.
    `ca_pem` is a trust anchor even when it is an intermediate (e2e-certs' cert-manager-issued CA),
    as in the API server's Go verifier; OpenSSL needs PARTIAL_CHAIN for that (Python sets it by
    default only from 3.13)."""
    ctx = ssl.create_default_context(cadata=ca_pem.decode())
    ctx.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as raw:
            with ctx.wrap_socket(raw, server_hostname="127.0.0.1"):
                return True
    except OSError:
        return False


def start_controller(suite, binary, tls_crt, tls_key, ca_pem, webhook_port, probe_port):
    """The controller as the suite's process `kubewarden-controller`, its webhook server
    certificate `tls_crt`, `tls_key` (signed by `ca_pem`); once its /readyz answers and
    its webhook server does, its own webhooks registered, their caBundle `ca_pem`, as the
    chart renders them from kubewarden-ca at install (and at each `helm upgrade`)."""
    tmp = serving_folder(suite.folder, tls_crt, tls_key)
    suite.start("kubewarden-controller", controller_command(binary, webhook_port, probe_port),
                env={"TMPDIR": str(tmp)})
    suite.wait("the controller's /readyz", lambda: controller_ready(probe_port), 60)
    suite.wait("the controller's webhook server", lambda: webhook_server_up(webhook_port, ca_pem), 60)
    suite.apply(*controller_webhooks(webhook_port, ca_pem))
