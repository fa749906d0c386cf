#!/usr/bin/env python3
"""Kubewarden's controller renders deploy/'s policies; e2e/webhooks.py must agree (make e2e-controller).

    python3 e2e/controller_e2e.py --controller BINARY [--policy-server BINARY --module MODULE] [--keep]

e2e/webhooks.py renders deploy/'s ClusterAdmissionPolicies the way
Kubewarden's controller does, from a reading of its source. Here the
controller itself is the judge: it runs out of cluster against a real
kube-apiserver (e2e/controlplane.py), deploy/ is applied, and what the
controller writes is compared, field by field, with webhooks.py's rendering
of the same policies.

What the Helm chart (admission-controller) would have made first, made here:
- Secret kubewarden/kubewarden-ca (`ca.crt`, `ca.key`: an EC P-256 CA,
  made with openssl; the controller signs each PolicyServer's certificate
  with it and puts `ca.crt` in every webhook's caBundle);
- Secret kubewarden/kubewarden-webhook-server-cert, and the same pair in
  controller-runtime's default certificate folder,
  `$TMPDIR/k8s-webhook-server/serving-certs/`, where the chart mounts it
  (`TMPDIR` names a temporary folder of the test);
- the controller's own webhooks (defaulting and validation of PolicyServers
  and ClusterAdmissionPolicies, paths from the `+kubebuilder:webhook`
  markers of api/policies/v1/*_webhook.go), reached by URL on 127.0.0.1
  instead of the chart's Service, so deploy/ is defaulted and validated by
  the controller as in a cluster.

The controller runs with the chart's flags (cmd/controller/main.go), except
`--leader-elect` (out of cluster it would need a namespace for the lease;
one controller runs), with free ports for its webhook server and probes,
metrics off, and `--always-accept-admission-reviews-on-deployments-namespace`
(deploy/admission-controller-values.yaml).

No kube-controller-manager and no kubelet run. A ClusterAdmissionPolicy's
webhook is written only once its PolicyServer's newest pods are ready
(`isPolicyUniquelyReachable`, internal/controller/policy_subreconciler.go):
the ConfigMap `policy-server-<name>` lists the policy; a ReplicaSet labelled
`kubewarden/policy-server: <name>` has the Deployment's annotation
`deployment.kubernetes.io/revision` and the ConfigMap's resourceVersion as
annotation `kubewarden/config-version`; every pod with that label has the
ReplicaSet's `pod-template-hash` and condition Ready True. `Rollout` below
writes what the deployment and replicaset controllers and the kubelet would:
the Deployment's revision annotation, a ReplicaSet per pod template (the
Deployment's annotations copied, as the deployment controller copies them),
`spec.replicas` pods from it, their status Ready through the status
subresource, the older ReplicaSets scaled to 0 and their pods deleted. Its
pod-template-hash is a hash of the template of its own (the controller only
compares it between ReplicaSet and pods).

Then, field by field: each ValidatingWebhookConfiguration (and the
MutatingWebhookConfiguration of a mutating probe policy), as the API server
returns it, against `render_webhook(policy, ca_bundle=<kubewarden-ca's
ca.crt>, apiserver_defaults=True)`; each webhook as the controller sends
it, before the API server's defaults (the bodies of its patches in the API
server's audit log; see compare_as_sent), against `render_webhook` without
them; each PolicyServer ConfigMap's
`policies.yml`, byte for byte and entry by entry, against
`dump_policies_yml(render_policies_yml(...))`. Two probe policies that are
not deploy/'s, on the PolicyServer `default`, exercise what deploy/ does not
use: a namespaceSelector with matchLabels, an objectSelector, matchPolicy,
sideEffects, monitor mode, a message, no settings, a mutating policy with
allowInsideAdmissionControllerNamespace.

Where policy-server and the module are given, the policies are then served
as the controller configured them: policy-server runs with the
controller-written policies.yml (only each `module` replaced by the local
file), the controller-issued certificate of Secret policy-server-kube-ovn,
and the Deployment's other environment variables, on this machine's first
non-loopback IPv4 address (an EndpointSlice may not name 127.0.0.0/8). The
API server runs with `--enable-aggregator-routing`, so it reaches a Service
through its EndpointSlices; the test writes the slice the endpointslice
controller would, for the controller's Service `policy-server-kube-ovn`, to
that address. The API server then calls the controller's webhook, verifies
the certificate as `policy-server-kube-ovn.kubewarden.svc` against the
controller's caBundle, and the seed's demo (`kubectl apply -f
test_data/pod-static.yaml`) is refused with the conflict message, verbatim.

Where kwctl is given too (--kwctl), Artifact Hub's install box follows
(e2e/scaffold.py): deploy/'s policies and the probes are deleted, the manifest
`kwctl scaffold manifest` prints is applied through the controller's
webhooks onto the PolicyServer `default` (ServiceAccount `policy-server` with
the kubewarden-defaults chart's permissions, nothing in kubeovn.io) and
served; kube-ovn-controller's IP object and a plain pod must be created at
once, a static-IP pod refused, without and with --allow-context-aware.

Everything runs in temporary folders, removed at the end; every process is
stopped. The last line is `N passed, N failed`.
"""

import argparse
import base64
import copy
import fcntl
import hashlib
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.request
import ssl
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parent))
from checks import Checks  # noqa: E402
from controlplane import ControlPlane, _die_with_parent, free_port, stop_process  # noqa: E402
import scaffold  # noqa: E402
from policy_server import wait_ready  # noqa: E402
from webhooks import (  # noqa: E402
    dump_policies_yml,
    load_cluster_admission_policies,
    policy_id,
    render_policies_yml,
    render_webhook,
)

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
POLICY_FILES = [DEPLOY / "cluster-admission-policies.yaml", DEPLOY / "ip-objects-policy.yaml"]
NAMESPACE = "kubewarden"
# The chart's names (admission-controller 6.0.2, templates/webhooks.yaml).
CA_SECRET = "kubewarden-ca"
WEBHOOK_CERT_SECRET = "kubewarden-webhook-server-cert"
WEBHOOK_SERVICE = "kubewarden-controller-webhook-service"
STATIC_IP_WEBHOOK = "clusterwide-kube-ovn-static-ip.kubewarden.admission"
SEED_MESSAGE = (
    "annotation static-ip 10.16.0.15 is conflict with ip crd static-7584848b74-fw9dm.default, ip 10.16.0.15"
)
# The deployment controller's labels and annotations
# (k8s.io/api/apps/v1: DefaultDeploymentUniqueLabelKey; kubernetes
# pkg/controller/deployment/util: RevisionAnnotation and the others).
HASH_LABEL = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
DESIRED = "deployment.kubernetes.io/desired-replicas"
MAX = "deployment.kubernetes.io/max-replicas"
PS_LABEL = "kubewarden/policy-server"
FINALIZER = "kubewarden.io/finalizer"

# The PolicyServer `default`, as the kubewarden-defaults chart makes it (its
# name is all the probe policies need).
DEFAULT_POLICY_SERVER = {
    "apiVersion": "policies.kubewarden.io/v1", "kind": "PolicyServer",
    "metadata": {"name": "default"},
    "spec": {"image": "ghcr.io/kubewarden/adm-controller/policy-server:v1.37.2", "replicas": 1,
             "serviceAccountName": scaffold.SERVICE_ACCOUNT},
}
# Probe policies: the rendering paths deploy/ does not take.
PROBES = [
    {
        "apiVersion": "policies.kubewarden.io/v1", "kind": "ClusterAdmissionPolicy",
        "metadata": {"name": "probe-selectors"},
        "spec": {
            "module": "registry://example.org/probe:v1",
            "policyServer": "default",
            "mode": "monitor",
            "backgroundAudit": False,
            "message": "probe <only> & more",
            "failurePolicy": "Ignore",
            "matchPolicy": "Exact",
            "sideEffects": "NoneOnDryRun",
            "timeoutSeconds": 3,
            "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"],
                       "operations": ["CREATE"], "scope": "Namespaced"}],
            "namespaceSelector": {
                "matchLabels": {"team": "a"},
                "matchExpressions": [{"key": "env", "operator": "In", "values": ["prod"]}],
            },
            "objectSelector": {"matchLabels": {"app": "x"},
                               "matchExpressions": [{"key": "tier", "operator": "Exists"}]},
        },
    },
    {
        "apiVersion": "policies.kubewarden.io/v1", "kind": "ClusterAdmissionPolicy",
        "metadata": {"name": "probe-mutating"},
        "spec": {
            "module": "registry://example.org/probe:v1",
            "policyServer": "default",
            "mutating": True,
            "allowInsideAdmissionControllerNamespace": True,
            "timeoutEvalSeconds": 2,
            "settings": {"b": [1, "x&y"], "a": {"d": True, "c": None}},
            "contextAwareResources": [{"apiVersion": "v1", "kind": "Namespace"}],
            "rules": [{"apiGroups": ["batch"], "apiVersions": ["v1"], "resources": ["cronjobs"],
                       "operations": ["CREATE", "UPDATE"]}],
        },
    },
]
# Webhook fields compared one by one (the API server's defaults included),
# then "no other field".
WEBHOOK_FIELDS = [
    "name", "clientConfig.service.name", "clientConfig.service.namespace", "clientConfig.service.path",
    "clientConfig.service.port", "clientConfig.caBundle", "rules", "failurePolicy", "matchPolicy",
    "namespaceSelector", "objectSelector", "sideEffects", "timeoutSeconds", "admissionReviewVersions",
    "matchConditions", "reinvocationPolicy",
]
POLICIES_YML_FIELDS = [
    "namespacedName", "module", "policyMode", "allowedToMutate", "contextAwareResources", "settings",
    "message", "timeoutEvalSeconds", "hostCapabilities",
]
ABSENT = "<absent>"
# The API server's audit log keeps the body of every write to a webhook
# configuration: the object as the controller sent it, before the API
# server's defaults.
AUDIT_POLICY = {
    "apiVersion": "audit.k8s.io/v1", "kind": "Policy", "omitStages": ["RequestReceived"],
    "rules": [
        {"level": "Request", "verbs": ["create", "update", "patch"],
         "resources": [{"group": "admissionregistration.k8s.io",
                        "resources": ["validatingwebhookconfigurations", "mutatingwebhookconfigurations"]}]},
        {"level": "None"},
    ],
}


def dig(obj, dotted):
    for key in dotted.split("."):
        if not isinstance(obj, dict) or key not in obj:
            return ABSENT
        obj = obj[key]
    return obj


def short(value, limit=160):
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= limit else text[:limit] + "…"


def openssl(folder, *args):
    subprocess.run(["openssl", *map(str, args)], cwd=folder, check=True, capture_output=True)


def make_pki(folder):
    """The chart's CA and the controller's webhook certificate, with openssl.

    The CA key is SEC1 (`EC PRIVATE KEY`): the controller reads it with
    x509.ParseECPrivateKey (internal/certs/certs.go, GenerateCert)."""
    openssl(folder, "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "ca.key")
    openssl(folder, "req", "-x509", "-new", "-key", "ca.key", "-out", "ca.crt", "-days", "2",
            "-subj", "/CN=kubewarden-controller-ca",
            "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,digitalSignature,keyEncipherment")
    dns = f"{WEBHOOK_SERVICE}.{NAMESPACE}.svc"
    openssl(folder, "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "tls.key")
    openssl(folder, "req", "-new", "-key", "tls.key", "-out", "tls.csr", "-subj", f"/CN={dns}")
    # The chart's certificate names the Service only; the URL form of the
    # controller's webhooks here needs 127.0.0.1 too.
    (folder / "tls.ext").write_text(
        "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
        f"extendedKeyUsage=serverAuth\nsubjectAltName=DNS:{dns},IP:127.0.0.1\n")
    openssl(folder, "x509", "-req", "-in", "tls.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
            "-days", "2", "-sha256", "-extfile", "tls.ext", "-out", "tls.crt")
    return {name: (folder / name).read_bytes() for name in ("ca.crt", "ca.key", "tls.crt", "tls.key")}


def b64(data):
    return base64.b64encode(data).decode()


def webhook_path(policy):
    """The API path of the webhook configuration the controller writes for a policy."""
    plural = "mutatingwebhookconfigurations" if policy["spec"].get("mutating") else "validatingwebhookconfigurations"
    return f"/apis/admissionregistration.k8s.io/v1/{plural}/{policy_id(policy)}"


def policy_path(name):
    return f"/apis/policies.kubewarden.io/v1/clusteradmissionpolicies/{name}"


def free_port_on(address):
    with socket.socket() as s:
        s.bind((address, 0))
        return s.getsockname()[1]


def global_ipv4():
    """This machine's first IPv4 address outside 127.0.0.0/8 and 169.254.0.0/16, or None."""
    for _, name in socket.if_nameindex():
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            try:
                packed = fcntl.ioctl(s.fileno(), 0x8915, struct.pack("256s", name[:15].encode()))  # SIOCGIFADDR
            except OSError:
                continue
        address = socket.inet_ntoa(packed[20:24])
        if not address.startswith(("127.", "169.254.", "0.")):
            return address
    return None


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


def webhook_diff(got, want, prefix="webhooks[0]."):
    """The fields where two webhooks differ, each as `field: controller …, webhooks.py …`."""
    problems = []
    for key in sorted(set(got) | set(want)):
        g, w = got.get(key, ABSENT), want.get(key, ABSENT)
        if key == "clientConfig" and isinstance(g, dict) and isinstance(w, dict):
            problems += webhook_diff(g, w, prefix + "clientConfig.")
        elif g != w:
            problems.append(f"{prefix}{key}: controller {short(g)}, webhooks.py {short(w)}")
    return problems


def template_hash(template):
    """A pod-template-hash for a template: 10 characters of the alphabet the
    deployment controller's hashes use (rand.SafeEncodeString); not its value."""
    digest = hashlib.sha256(json.dumps(template, sort_keys=True).encode()).digest()
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    return "".join(alphabet[b % len(alphabet)] for b in digest[:10])


def pod_ready(pod):
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


class Suite(Checks):
    def __init__(self, args, cp, folder):
        super().__init__(args, cp, folder)
        self.procs = []
        self.rollout = None

    def kubectl(self, *args, timeout=60, cwd=None):
        cmd = [str(self.cp.kubectl_bin), "--kubeconfig", str(self.cp.kubeconfig), *map(str, args)]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=cwd)

    def apply(self, obj):
        path = self.folder / f"{obj['kind']}-{obj['metadata']['name']}.json"
        path.write_text(json.dumps(obj))
        done = self.kubectl("apply", "--server-side", "--force-conflicts", "-f", path)
        if done.returncode != 0:
            raise RuntimeError(f"kubectl apply {path.name}: {done.stderr.strip()}")

    def get(self, path):
        code, body, _ = self.api.request("GET", path)
        return body if code == 200 else None

    def wait_for(self, what, probe, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            got = probe()
            if got:
                return got
            if self.controller.poll() is not None:
                raise RuntimeError(f"the controller exited with {self.controller.returncode}:\n{self.log_tail()}")
            time.sleep(0.3)
        raise RuntimeError(f"{what}: not within {timeout} s\n{self.log_tail()}")

    def log_tail(self, lines=25):
        try:
            return "\n".join((self.folder / "controller.log").read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    # --- what the chart makes, and the controller --------------------------

    def start_controller(self):
        pki = make_pki(self.folder)
        self.ca_pem = pki["ca.crt"]
        self.cp.ensure_namespace(NAMESPACE)
        for name, data in ((CA_SECRET, {"ca.crt": pki["ca.crt"], "ca.key": pki["ca.key"]}),
                           (WEBHOOK_CERT_SECRET, {"tls.crt": pki["tls.crt"], "tls.key": pki["tls.key"]})):
            self.apply({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": NAMESPACE},
                        "data": {k: b64(v) for k, v in data.items()}})
        tmp = self.folder / "controller-tmp"
        certs = tmp / "k8s-webhook-server" / "serving-certs"
        certs.mkdir(parents=True)
        (certs / "tls.crt").write_bytes(pki["tls.crt"])
        (certs / "tls.key").write_bytes(pki["tls.key"])
        self.webhook_port, probe_port = free_port(), free_port()
        args = controller_command(self.args.controller, self.webhook_port, probe_port)
        env = dict(os.environ, KUBECONFIG=str(self.cp.kubeconfig), TMPDIR=str(tmp))
        self.controller_log = open(self.folder / "controller.log", "w")
        self.controller = subprocess.Popen(args, stdout=self.controller_log, stderr=subprocess.STDOUT, env=env,
                                           cwd=self.folder, preexec_fn=_die_with_parent)
        self.procs.append(self.controller)
        started = time.monotonic()
        self.wait_for("the controller's /readyz", lambda: controller_ready(probe_port), 60)
        # The webhook server answers once the manager has started it.
        ctx = ssl.create_default_context(cadata=self.ca_pem.decode())

        def webhook_server():
            try:
                with socket.create_connection(("127.0.0.1", self.webhook_port), timeout=2) as raw:
                    with ctx.wrap_socket(raw, server_hostname="127.0.0.1"):
                        return True
            except OSError:
                return False

        self.wait_for("the controller's webhook server", webhook_server, 60)
        self.notes.append(f"controller ready in {time.monotonic() - started:.1f} s")
        for obj in controller_webhooks(self.webhook_port, self.ca_pem):
            self.apply(obj)
        self.rollout = Rollout(self.api, NAMESPACE).start()

    def apply_deploy(self):
        """deploy/ as shipped, through the controller's own webhooks (retried
        while the API server's webhook configuration is not in effect yet)."""
        files = [DEPLOY / "policy-server.yaml", DEPLOY / "rbac.yaml", *POLICY_FILES]
        deadline = time.monotonic() + 30
        while True:
            done = self.kubectl("apply", "--server-side", *[a for f in files for a in ("-f", f)])
            if done.returncode == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        self.check("deploy/ applied as shipped, through the controller's webhooks", done.returncode == 0,
                   done.stderr.strip())
        if done.returncode != 0:
            raise SystemExit(1)
        for obj in scaffold.RBAC:
            self.apply(obj)
        self.apply(DEFAULT_POLICY_SERVER)
        for probe in PROBES:
            self.apply(probe)
        self.deployed = load_cluster_admission_policies(POLICY_FILES)
        self.policies = self.deployed + copy.deepcopy(PROBES)
        stored = {p["metadata"]["name"]: self.get(policy_path(p["metadata"]["name"])) for p in self.policies}
        finalized = [n for n, p in stored.items() if p and FINALIZER in (p["metadata"].get("finalizers") or [])]
        self.check("every policy carries the controller's finalizer (its defaulting webhook ran)",
                   len(finalized) == len(self.policies), f"{len(finalized)} of {len(self.policies)}: {finalized}")
        validated = set()
        for line in (self.folder / "controller.log").read_text(errors="replace").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if entry.get("msg") == "Validating ClusterAdmissionPolicy creation":
                validated.add(entry.get("name"))
        names = [p["metadata"]["name"] for p in self.policies]
        self.check("the controller's validating webhook accepted every policy (its log)",
                   set(names) <= validated, f"validated {sorted(validated)}")

    def wait_for_controller(self):
        """Until the controller has written every webhook configuration and
        marked every policy active."""
        started = time.monotonic()

        def written():
            for policy in self.policies:
                if self.get(webhook_path(policy)) is None:
                    return False
                stored = self.get(policy_path(policy["metadata"]["name"]))
                if (stored or {}).get("status", {}).get("policyStatus") != "active":
                    return False
            return True

        try:
            self.wait_for("the controller's webhook configurations", written, self.args.timeout)
        finally:
            if self.rollout.errors:
                print("# rollout errors:\n" + "\n".join(f"#   {e}" for e in self.rollout.errors[-5:]))
        seconds = time.monotonic() - started
        self.notes.append(f"webhooks written {seconds:.1f} s after deploy/ was applied "
                          f"({self.rollout.rollouts} rollouts written for the controller)")
        self.check("the controller wrote every webhook configuration and marked every policy active",
                   True, f"{len(self.policies)} policies, {seconds:.1f} s")

    # --- the comparison ------------------------------------------------

    def compare_webhooks(self):
        for policy in self.policies:
            pid = policy_id(policy)
            mutating = bool(policy["spec"].get("mutating"))
            got = self.get(webhook_path(policy))
            want = render_webhook(policy, ca_bundle=self.ca_pem, apiserver_defaults=True)
            self.check(f"{pid}: kind", got["kind"] == want["kind"], f"{got['kind']} vs {want['kind']}")
            for key in ("name", "labels", "annotations"):
                g, w = got["metadata"].get(key, ABSENT), want["metadata"].get(key, ABSENT)
                self.check(f"{pid}: metadata.{key}", g == w, f"controller {short(g)}, webhooks.py {short(w)}")
            self.check(f"{pid}: one webhook", len(got["webhooks"]) == 1 == len(want["webhooks"]),
                       f"{len(got['webhooks'])}")
            g_hook, w_hook = got["webhooks"][0], want["webhooks"][0]
            for field in WEBHOOK_FIELDS:
                g, w = dig(g_hook, field), dig(w_hook, field)
                if field == "reinvocationPolicy" and not mutating:
                    continue
                self.check(f"{pid}: webhooks[0].{field}", g == w, f"controller {short(g)}, webhooks.py {short(w)}")
            if policy["metadata"]["name"] == "probe-selectors":
                self.notes.append(f"{pid}: the policy's namespaceSelector {short(policy['spec']['namespaceSelector'])}; "
                                  f"the controller's {short(g_hook.get('namespaceSelector'))}")
                self.check(f"{pid}: the controller drops the policy's namespaceSelector.matchLabels, keeps its "
                           "matchExpressions after its own NotIn",
                           g_hook.get("namespaceSelector") == {"matchExpressions": [
                               {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": [NAMESPACE]},
                               {"key": "env", "operator": "In", "values": ["prod"]}]},
                           short(g_hook.get("namespaceSelector")))
            g_config, w_config = g_hook.get("clientConfig", {}), w_hook.get("clientConfig", {})
            extra = sorted((set(g_hook) ^ set(w_hook)) | {f"clientConfig.{k}" for k in set(g_config) ^ set(w_config)})
            self.check(f"{pid}: no other webhook field", not extra, f"only on one side: {extra}")

    def compare_as_sent(self):
        """Each webhook as the controller builds it, before the API server's
        defaults, against render_webhook without them.

        The API server's audit log keeps the body of each write. A create's
        body is logged decoded, defaults already applied, but a patch's as
        sent: controller-runtime's CreateOrPatch builds the object afresh on
        every reconciliation and sends a JSON merge patch from the stored
        object to it, in which `webhooks`, a list, is written whole. Where
        the controller's object equals the stored one (every defaulted field
        set by the policy), it sends no patch: then the stored webhook is
        the controller's. A reconciliation follows each creation (the
        controller watches its webhook configurations), so this waits until
        each policy has a patch or needs none."""
        def observe():
            events = [json.loads(line) for line in (self.folder / "audit.log").read_text().splitlines() if line.strip()]
            seen = {}
            for policy in self.policies:
                pid = policy_id(policy)
                patches = [e["requestObject"] for e in events
                           if e["verb"] == "patch" and (e.get("objectRef") or {}).get("name") == pid
                           and "webhooks" in (e.get("requestObject") or {})]
                stored = self.get(webhook_path(policy))
                seen[pid] = (policy, patches, stored)
            return seen

        def settled(seen):
            return all(patches or not webhook_diff(stored["webhooks"][0],
                                                   render_webhook(policy, ca_bundle=self.ca_pem)["webhooks"][0])
                       for policy, patches, stored in seen.values())

        deadline = time.monotonic() + 10
        seen = observe()
        while not settled(seen) and time.monotonic() < deadline:
            time.sleep(0.3)
            seen = observe()
        for pid, (policy, patches, stored) in seen.items():
            want = render_webhook(policy, ca_bundle=self.ca_pem)["webhooks"]
            if patches:
                problems = [p for body in patches for p in webhook_diff(body["webhooks"][0], want[0])]
                problems += [f"{len(body['webhooks'])} webhooks" for body in patches if len(body["webhooks"]) != 1]
                self.check(f"{pid}: as the controller sends it (its {len(patches)} patch(es)), equal to render_webhook "
                           "without the API server's defaults", not problems, "; ".join(problems))
            else:
                problems = webhook_diff(stored["webhooks"][0], want[0])
                self.check(f"{pid}: the controller sent no patch (its webhook is the stored one), equal to "
                           "render_webhook without the API server's defaults", not problems, "; ".join(problems))

    def compare_policies_yml(self):
        for server in ("kube-ovn", "default"):
            cm = self.get(f"/api/v1/namespaces/{NAMESPACE}/configmaps/policy-server-{server}")
            text = (cm or {}).get("data", {}).get("policies.yml", "")
            want_map = render_policies_yml(self.policies, policy_server=server)
            want = dump_policies_yml(want_map)
            self.check(f"policies.yml of policy-server-{server}: byte for byte", text == want,
                       f"{len(text)} bytes" if text == want else f"\ncontroller  {text}\nwebhooks.py {want}")
            got_map = json.loads(text) if text else {}
            self.check(f"policies.yml of policy-server-{server}: policy ids", list(got_map) == list(want_map),
                       f"{list(got_map)} vs {list(want_map)}")
            for pid in want_map:
                for field in POLICIES_YML_FIELDS:
                    g, w = dig(got_map.get(pid, {}), field), dig(want_map[pid], field)
                    self.check(f"policies.yml {pid}: {field}", g == w, f"controller {short(g)}, webhooks.py {short(w)}")
                extra = sorted(set(got_map.get(pid, {})) - set(POLICIES_YML_FIELDS))
                self.check(f"policies.yml {pid}: no other key", not extra, str(extra))
            self.notes.append(f"policy-server-{server} ConfigMap keys: {sorted((cm or {}).get('data', {}))}; "
                              f"sources.yml: {(cm or {}).get('data', {}).get('sources.yml')}")

    # --- serving through the controller's webhooks ---------------------

    def start_policy_server(self, name, folder, keep=None):
        """policy-server for PolicyServer `name` as the controller configured
        it: its policies.yml (only `keep`'s entries, when given; each
        `module` replaced by the local file), certificate, the Deployment's
        environment and ServiceAccount, on this machine's first non-loopback
        IPv4 address, with the EndpointSlice the endpointslice controller
        would write for its Service. None when there is no such address."""
        address = global_ipv4()
        if address is None:
            self.notes.append(f"serve {name}: not run: no IPv4 address outside 127.0.0.0/8 "
                              "(an EndpointSlice may not name loopback)")
            return None
        folder.mkdir()
        full = f"policy-server-{name}"
        secret = self.get(f"/api/v1/namespaces/{NAMESPACE}/secrets/{full}")
        (folder / "tls.crt").write_bytes(base64.b64decode(secret["data"]["tls.crt"]))
        (folder / "tls.key").write_bytes(base64.b64decode(secret["data"]["tls.key"]))
        cm = self.get(f"/api/v1/namespaces/{NAMESPACE}/configmaps/{full}")
        policies = json.loads(cm["data"]["policies.yml"])
        if keep is not None:
            policies = {k: v for k, v in policies.items() if k in keep}
        for entry in policies.values():
            entry["module"] = f"file://{Path(self.args.module).resolve()}"
        (folder / "policies.yml").write_text(json.dumps(policies))
        deployment = self.get(f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments/{full}")
        container = deployment["spec"]["template"]["spec"]["containers"][0]
        # The Deployment's environment, but for the files and ports, which
        # the command line names here.
        replaced = {"KUBEWARDEN_CERT_FILE", "KUBEWARDEN_KEY_FILE", "KUBEWARDEN_PORT", "KUBEWARDEN_READINESS_PROBE_PORT",
                    "KUBEWARDEN_POLICIES_DOWNLOAD_DIR", "KUBEWARDEN_POLICIES", "KUBEWARDEN_SIGSTORE_CACHE_DIR"}
        env = {e["name"]: e["value"] for e in container.get("env", []) if "value" in e and e["name"] not in replaced}
        self.notes.append(f"serve {name}: policy-server with the Deployment's env {sorted(env)}")
        sa_kubeconfig = folder / "sa.kubeconfig"
        self.cp.service_account_kubeconfig(NAMESPACE, deployment["spec"]["template"]["spec"]["serviceAccountName"],
                                           sa_kubeconfig)
        # policy-server binds its readiness probe to --addr too.
        port, ready = free_port_on(address), free_port_on(address)
        log = open(folder / "policy-server.log", "w")
        proc = subprocess.Popen(
            [self.args.policy_server, "--addr", address, "--port", str(port), "--readiness-probe-port", str(ready),
             "--policies", str(folder / "policies.yml"), "--cert-file", str(folder / "tls.crt"),
             "--key-file", str(folder / "tls.key"), "--policies-download-dir", str(folder),
             "--sigstore-cache-dir", str(folder / "sigstore"), "--workers", "2", "--log-no-color"],
            stdout=log, stderr=subprocess.STDOUT, cwd=folder, preexec_fn=_die_with_parent,
            env=dict(os.environ, **env, KUBECONFIG=str(sa_kubeconfig), RUST_BACKTRACE="1", NO_COLOR="1"),
        )
        log.close()
        self.procs.append(proc)
        try:
            wait_ready(proc, ready, lambda: (folder / "policy-server.log").read_text()[-3000:], host=address)
            service = self.get(f"/api/v1/namespaces/{NAMESPACE}/services/{full}")
            port_name = service["spec"]["ports"][0]["name"]
            self.apply({
                "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                "metadata": {"name": f"{full}-e2e", "namespace": NAMESPACE,
                             "labels": {"kubernetes.io/service-name": full,
                                        "endpointslice.kubernetes.io/managed-by": "kop-e2e"}},
                "addressType": "IPv4",
                "endpoints": [{"addresses": [address], "conditions": {"ready": True}}],
                "ports": [{"name": port_name, "port": port, "protocol": "TCP"}],
            })
        except BaseException:
            stop_process(proc)
            raise
        return proc

    def serve(self):
        proc = self.start_policy_server("kube-ovn", self.folder / "serve")
        if proc is None:
            return
        try:
            self.seed_demo(self.folder / "serve")
        finally:
            stop_process(proc)

    def seed_demo(self, folder):
        ip = {
            "apiVersion": "kubeovn.io/v1", "kind": "IP",
            "metadata": {"name": "static-7584848b74-fw9dm.default"},
            "spec": {"podName": "static-7584848b74-fw9dm", "namespace": "default", "subnet": "ovn-default",
                     "ipAddress": "10.16.0.15", "v4IpAddress": "10.16.0.15", "podType": "", "attachSubnets": [],
                     "attachIps": [], "macAddress": "", "containerID": "", "nodeName": ""},
        }
        # Written as kube-ovn-controller (cluster-admin here, as Kube-OVN's
        # install lets it write IP objects), whose requests deploy/ does not send.
        self.kubectl("create", "clusterrolebinding", "kube-ovn-controller", "--clusterrole=cluster-admin",
                     "--serviceaccount=kube-system:ovn")
        code, body, _ = self.api.request("POST", "/apis/kubeovn.io/v1/ips", ip,
                                         user="system:serviceaccount:kube-system:ovn",
                                         groups=["system:serviceaccounts", "system:authenticated"])
        if code != 201:
            raise RuntimeError(f"the IP object: {code} {short(body, 400)}")
        self.cp.ensure_namespace("default")
        shutil.copy(ROOT / "test_data" / "pod-static.yaml", folder / "pod-static.yaml")
        want = ('Error from server: error when creating "pod-static.yaml": admission webhook '
                f'"{STATIC_IP_WEBHOOK}" denied the request: {SEED_MESSAGE}')
        # The API server learns the EndpointSlice through its informer: until
        # then the call fails ("no endpoints available") and the pod is refused
        # with that error instead.
        deadline = time.monotonic() + 30
        while True:
            done = self.kubectl("apply", "--dry-run=server", "-f", "pod-static.yaml", cwd=folder)
            if "denied the request" in done.stderr or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        started = time.monotonic()
        done = self.kubectl("apply", "-f", "pod-static.yaml", cwd=folder)
        ms = (time.monotonic() - started) * 1000
        self.notes.append(f"serve: kubectl exit {done.returncode} in {ms:.0f} ms: {done.stderr.strip()}")
        self.check("serve: through the controller's webhook, Service and certificate, kubectl apply -f "
                   "pod-static.yaml is refused with the conflict message",
                   done.returncode != 0 and done.stderr.strip() == want, f"exit {done.returncode}, {done.stderr.strip()!r}")

    # --- Artifact Hub's install box ---------------------------------------

    def scaffold(self):
        """Artifact Hub's install box (e2e/scaffold.py): the manifest `kwctl
        scaffold manifest` prints, applied unchanged but for its module,
        through the controller's webhooks onto the PolicyServer `default`,
        after deploy/'s policies and the probes are deleted; then served."""
        names = [p["metadata"]["name"] for p in self.policies]
        self.kubectl("delete", "clusteradmissionpolicies", *names, "--wait=true", timeout=120)
        self.wait_for("deploy/'s webhooks removed",
                      lambda: all(self.get(webhook_path(p)) is None for p in self.policies), 60)
        self.cp.ensure_namespace("default")
        for n, (variant, flags) in enumerate(scaffold.VARIANTS):
            policy = scaffold.scaffolded(self, variant, flags, self.args.module, self.args.kwctl)
            self.apply(policy)
            self.wait_for(f"scaffold {variant}: its webhook", lambda: self.get(webhook_path(policy)) and (
                self.get(policy_path(policy["metadata"]["name"])) or {}).get("status", {}).get("policyStatus")
                == "active", self.args.timeout)
            hook = self.get(webhook_path(policy))["webhooks"][0]
            groups = sorted({g for r in hook["rules"] for g in r["apiGroups"]})
            self.check(f"scaffold {variant}: its webhook names no Kube-OVN kind",
                       "kubeovn.io" not in groups and bool(hook["rules"]),
                       f"apiGroups {groups}, failurePolicy {hook['failurePolicy']}, "
                       f"contextAwareResources {len(policy['spec'].get('contextAwareResources', []))}")
            proc = self.start_policy_server("default", self.folder / f"scaffold-{n}", keep={policy_id(policy)})
            if proc is None:
                return
            try:
                scaffold.check_requests(self, variant, n, context_aware=bool(flags))
            finally:
                stop_process(proc)
            self.kubectl("delete", "clusteradmissionpolicy", policy["metadata"]["name"], "--wait=true", timeout=120)
            self.wait_for("the scaffolded policy's webhook removed", lambda: self.get(webhook_path(policy)) is None, 60)

    def stop(self):
        if self.rollout:
            self.rollout.stop()
        for proc in reversed(self.procs):
            stop_process(proc, 15)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--controller", required=True, help="Kubewarden's controller (cmd/controller)")
    parser.add_argument("--policy-server", help="policy-server, to serve the controller's configuration")
    parser.add_argument("--module", help="the policy module for policy-server (annotated-policy.wasm)")
    parser.add_argument("--kwctl", help="kwctl, to scaffold a manifest as Artifact Hub's install text says")
    parser.add_argument("--timeout", type=float, default=90, help="seconds to wait for the controller")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="kop-controller-e2e-"))
    started = time.monotonic()
    suite = None
    try:
        (folder / "audit-policy.yaml").write_text(json.dumps(AUDIT_POLICY))
        apiserver_args = [
            "--enable-aggregator-routing=true",
            f"--audit-policy-file={folder / 'audit-policy.yaml'}",
            f"--audit-log-path={folder / 'audit.log'}",
        ]
        with ControlPlane(apiserver_args=apiserver_args, keep=args.keep) as cp:
            suite = Suite(args, cp, folder)
            try:
                cp.install_crds()
                suite.start_controller()
                suite.apply_deploy()
                suite.wait_for_controller()
                suite.compare_webhooks()
                suite.compare_as_sent()
                suite.compare_policies_yml()
                if args.policy_server and args.module:
                    suite.serve()
                    if args.kwctl:
                        suite.scaffold()
                    else:
                        suite.notes.append("scaffold: not run: no --kwctl")
                else:
                    suite.notes.append("serve: not run: no --policy-server and --module (make e2e-controller "
                                       "passes them where policy-server and kwctl are found)")
            except (RuntimeError, subprocess.CalledProcessError) as e:
                traceback.print_exc()
                suite.check("the test ran to its end", False, str(e))
            finally:
                suite.stop()
    finally:
        if args.keep:
            print(f"# kept {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)
    for note in suite.notes if suite else []:
        print(f"# {note}")
    print(f"# {time.monotonic() - started:.0f} s in all")
    print(f"{suite.passed if suite else 0} passed, {suite.failed if suite else 1} failed")
    return 1 if (suite is None or suite.failed) else 0


if __name__ == "__main__":
    sys.exit(main())
