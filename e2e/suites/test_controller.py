"""Kubewarden's controller renders deploy/'s policies; e2e/harness/webhooks.py must agree (make e2e-controller).

    python3 -m pytest e2e/suites/test_controller.py [--setting keep=true]

kubewarden-controller on PATH (else one SKIPPED: line); the serving and
scaffold steps need policy-server and kwctl too, and serve
annotated-policy.wasm. Each step is a test, run in order; after a step stops
on an error, the later ones are not run.

e2e/harness/webhooks.py renders deploy/'s ClusterAdmissionPolicies the way
Kubewarden's controller does, from a reading of its source. Here the
controller itself is the judge: it runs out of cluster against a real
kube-apiserver (e2e/harness/controlplane.py), deploy/ is applied, and what the
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
(e2e/harness/scaffold.py): deploy/'s policies and the probes are deleted, the manifest
`kwctl scaffold manifest` prints is applied through the controller's
webhooks onto the PolicyServer `default` (ServiceAccount `policy-server` with
the kubewarden-defaults chart's permissions, nothing in kubeovn.io) and
served; kube-ovn-controller's IP object and a plain pod must be created at
once, a static-IP pod refused, without and with --allow-context-aware.

Everything runs in temporary folders, removed at the end; every process is
stopped. The last line is `N passed, N failed`.
"""

import base64
import copy
import json
import os
import shutil
import tempfile
import time
import types
from pathlib import Path

import pytest

from e2e.harness import POLICY_FILES, ROOT, scaffold
from e2e.harness.checks import Checks, short
from e2e.harness.cluster import SEED_IP, SEED_REFUSAL
from e2e.harness.controlplane import ControlPlane
from e2e.harness.kubewarden import (
    CA_SECRET,
    FINALIZER,
    NAMESPACE,
    WEBHOOK_CERT_SECRET,
    Rollout,
    b64,
    make_pki,
    policy_path,
    start_controller,
    webhook_path,
)
from e2e.harness.processes import free_port, global_ipv4
from e2e.harness.servers import start_server
from e2e.harness.webhooks import (
    dump_policies_yml,
    load_cluster_admission_policies,
    policy_id,
    render_policies_yml,
    render_webhook,
)

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
            # Required by the CRD (1.37.2's, ../shared): kubectl refuses the policy without it.
            "mutating": False,
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


class Suite(Checks):
    def __init__(self, args, cp, folder):
        super().__init__(args, cp, folder)
        self.rollout = None

    # --- what the chart makes, and the controller --------------------------

    def start_controller(self):
        pki = make_pki(self.folder)
        self.ca_pem = pki["ca.crt"]
        self.cp.ensure_namespace(NAMESPACE)
        for name, data in ((CA_SECRET, {"ca.crt": pki["ca.crt"], "ca.key": pki["ca.key"]}),
                           (WEBHOOK_CERT_SECRET, {"tls.crt": pki["tls.crt"], "tls.key": pki["tls.key"]})):
            self.apply({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": NAMESPACE},
                        "data": {k: b64(v) for k, v in data.items()}})
        self.webhook_port, probe_port = free_port(), free_port()
        started = time.monotonic()
        start_controller(self, self.args.controller, pki["tls.crt"], pki["tls.key"], self.ca_pem, self.webhook_port,
                         probe_port)
        self.notes.append(f"controller ready in {time.monotonic() - started:.1f} s")
        self.rollout = Rollout(self.api, NAMESPACE).start()

    def apply_deploy(self):
        """deploy/ as shipped, through the controller's own webhooks (retried
        while the API server's webhook configuration is not in effect yet)."""
        done = super().apply_deploy(retry_s=30)
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
        for line in self.procs["kubewarden-controller"][1].read_text(errors="replace").splitlines():
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
            self.wait("the controller's webhook configurations", written, self.args.timeout)
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
        log = folder / "policy-server.log"
        proc, port = start_server(self.args.policy_server, folder, folder / "policies.yml", folder / "tls.crt",
                                  folder / "tls.key", dict(os.environ, **env, KUBECONFIG=str(sa_kubeconfig),
                                                           RUST_BACKTRACE="1", NO_COLOR="1"),
                                  log=log, address=address, cwd=folder, die_with_thread=True)
        self.procs[full] = (proc, log)
        try:
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
            self.stop_process(full)
            raise
        return full

    def serve(self):
        server = self.start_policy_server("kube-ovn", self.folder / "serve")
        if server is None:
            return
        try:
            self.seed_demo(self.folder / "serve")
        finally:
            self.stop_process(server)

    def seed_demo(self, folder):
        # Written as kube-ovn-controller (cluster-admin here, as Kube-OVN's
        # install lets it write IP objects), whose requests deploy/ does not send.
        self.kubectl("create", "clusterrolebinding", "kube-ovn-controller", "--clusterrole=cluster-admin",
                     "--serviceaccount=kube-system:ovn")
        code, body, _ = self.api.request("POST", "/apis/kubeovn.io/v1/ips", SEED_IP,
                                         user="system:serviceaccount:kube-system:ovn",
                                         groups=["system:serviceaccounts", "system:authenticated"])
        if code != 201:
            raise RuntimeError(f"the IP object: {code} {short(body, 400)}")
        self.cp.ensure_namespace("default")
        shutil.copy(ROOT / "test_data" / "pod-static.yaml", folder / "pod-static.yaml")
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
                   done.returncode != 0 and done.stderr.strip() == SEED_REFUSAL, f"exit {done.returncode}, {done.stderr.strip()!r}")

    # --- Artifact Hub's install box ---------------------------------------

    def scaffold(self):
        """Artifact Hub's install box (e2e/harness/scaffold.py): the manifest `kwctl
        scaffold manifest` prints, applied unchanged but for its module,
        through the controller's webhooks onto the PolicyServer `default`,
        after deploy/'s policies and the probes are deleted; then served."""
        names = [p["metadata"]["name"] for p in self.policies]
        self.kubectl("delete", "clusteradmissionpolicies", *names, "--wait=true", timeout=120)
        self.wait("deploy/'s webhooks removed",
                      lambda: all(self.get(webhook_path(p)) is None for p in self.policies), 60)
        self.cp.ensure_namespace("default")
        for n, (variant, flags, granted) in enumerate(scaffold.VARIANTS):
            if granted:
                for obj in scaffold.install_text_grant():
                    self.apply(obj)
            policy = scaffold.scaffolded(self, variant, flags, self.args.module, self.args.kwctl)
            self.apply(policy)
            self.wait(f"scaffold {variant}: its webhook", lambda: self.get(webhook_path(policy)) and (
                self.get(policy_path(policy["metadata"]["name"])) or {}).get("status", {}).get("policyStatus")
                == "active", self.args.timeout)
            hook = self.get(webhook_path(policy))["webhooks"][0]
            groups = sorted({g for r in hook["rules"] for g in r["apiGroups"]})
            self.check(f"scaffold {variant}: its webhook names no Kube-OVN kind",
                       "kubeovn.io" not in groups and bool(hook["rules"]),
                       f"apiGroups {groups}, failurePolicy {hook['failurePolicy']}, "
                       f"contextAwareResources {len(policy['spec'].get('contextAwareResources', []))}")
            server = self.start_policy_server("default", self.folder / f"scaffold-{n}", keep={policy_id(policy)})
            if server is None:
                return
            try:
                scaffold.check_requests(self, variant, n, context_aware=bool(flags), granted=granted)
            finally:
                self.stop_process(server)
            self.kubectl("delete", "clusteradmissionpolicy", policy["metadata"]["name"], "--wait=true", timeout=120)
            self.wait("the scaffolded policy's webhook removed", lambda: self.get(webhook_path(policy)) is None, 60)

    def stop(self):
        if self.rollout:
            self.rollout.stop()
        super().stop()


pytestmark = [pytest.mark.incremental, pytest.mark.requires("kubewarden-controller")]

# The suite's settings (`--setting NAME=VALUE`).
SETTINGS = {
    "timeout": 90.0,  # seconds to wait for the controller
    "keep": False,  # keep the temporary folder
}

STEPS = ["start_controller", "apply_deploy", "wait_for_controller", "compare_webhooks", "compare_as_sent",
         "compare_policies_yml"]


@pytest.fixture(scope="module")
def controller(settings):
    """The control plane (with an audit log) and the CRDs, for the steps in order."""
    serves = shutil.which("policy-server") and shutil.which("kwctl")
    args = types.SimpleNamespace(
        **settings(SETTINGS), controller=shutil.which("kubewarden-controller"),
        policy_server=shutil.which("policy-server") if serves else None,
        module=str(ROOT / "annotated-policy.wasm") if serves else None,
        kwctl=shutil.which("kwctl") if serves else None,
    )
    folder = Path(tempfile.mkdtemp(prefix="kop-controller-e2e-"))
    (folder / "audit-policy.yaml").write_text(json.dumps(AUDIT_POLICY))
    apiserver_args = ["--enable-aggregator-routing=true", f"--audit-policy-file={folder / 'audit-policy.yaml'}",
                      f"--audit-log-path={folder / 'audit.log'}"]
    started = time.monotonic()
    with ControlPlane(apiserver_args=apiserver_args, keep=args.keep) as cp:
        suite = Suite(args, cp, folder)
        try:
            suite.cp.install_crds()
            yield suite
        finally:
            if suite.failed:
                suite.failure_logs()
            suite.stop()
            for note in suite.notes:
                print(f"# {note}")
    print(f"# {time.monotonic() - started:.0f} s in all")
    if args.keep:
        print(f"# kept {folder}")
    else:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("step", STEPS)
def test_controller(controller, counted, step):
    getattr(counted(controller), step)()


@pytest.mark.requires("policy-server", "kwctl")
def test_serve(controller, counted):
    counted(controller).serve()


@pytest.mark.requires("policy-server", "kwctl")
def test_scaffold(controller, counted):
    counted(controller).scaffold()
