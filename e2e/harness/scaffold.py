"""A scaffolded policy, as Artifact Hub's install text makes it, on the PolicyServer `default`.

`kwctl scaffold manifest -t ClusterAdmissionPolicy [--allow-context-aware]`
gives one ClusterAdmissionPolicy with every rule of metadata.yml, no
failurePolicy, no matchConditions and no namespaceSelector, and
`contextAwareResources` only with `--allow-context-aware`
(crates/kwctl/src/scaffold/manifest.rs, kwctl 3460bb71). The PolicyServer
`default` runs as ServiceAccount `policy-server` with the kubewarden-defaults
chart's permissions (values.yaml `policyServer.permissions`,
templates/policy-server-rbac.yaml): nothing in kubeovn.io.

Used by e2e/suites/test_controller.py (the controller renders the webhook) and by
e2e/suites/test_cluster.py (e2e/harness/webhooks.py renders it; kop-serve or policy-server
serves it). Where kwctl is not found, the manifest is built from
metadata.yml as manifest.rs builds it, and says so.
"""

import json
import subprocess
import time
from pathlib import Path

import yaml

from . import ROOT

NAMESPACE = "kubewarden"
SERVICE_ACCOUNT = "policy-server"
KUBE_OVN_CONTROLLER = "system:serviceaccount:kube-system:ovn"

RBAC = [
    {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": SERVICE_ACCOUNT, "namespace": NAMESPACE}},
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
     "metadata": {"name": "kubewarden-context-watcher"},
     "rules": [{"apiGroups": [""], "resources": ["namespaces", "pods", "services"], "verbs": ["get", "list", "watch"]},
               {"apiGroups": ["networking.k8s.io"], "resources": ["ingresses"], "verbs": ["get", "list", "watch"]},
               {"apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews"], "verbs": ["create"]}]},
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
     "metadata": {"name": "kubewarden-context-watcher"},
     "subjects": [{"kind": "ServiceAccount", "name": SERVICE_ACCOUNT, "namespace": NAMESPACE}],
     "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "kubewarden-context-watcher"}},
]

# (variant, kwctl's flags, whether the install text's grant is applied)
VARIANTS = [("without --allow-context-aware", [], False),
            ("with --allow-context-aware", ["--allow-context-aware"], False),
            ("with --allow-context-aware and the install text's grant", ["--allow-context-aware"], True)]

INSTALL_TEXT = ROOT / "docs" / "artifacthub-install.md"


def install_text_grant():
    """The objects of the install text's ```yaml blocks, exactly as a user copies them."""
    import re
    objects = []
    for block in re.findall(r"```yaml\n(.*?)```", INSTALL_TEXT.read_text(), re.S):
        objects += [d for d in yaml.safe_load_all(block) if d]
    return objects


def registry_module():
    """The module reference Artifact Hub's install text names."""
    meta = yaml.safe_load((ROOT / "metadata.yml").read_text())["annotations"]
    return f"registry://{meta['io.kubewarden.policy.ociUrl']}:v{meta['io.kubewarden.policy.version']}"


def from_metadata(flags):
    """The manifest as manifest.rs builds it from metadata.yml, module aside."""
    meta = yaml.safe_load((ROOT / "metadata.yml").read_text())
    spec = {"module": registry_module(), "settings": {}, "rules": meta["rules"], "mutating": meta["mutating"]}
    if not meta.get("backgroundAudit", True):
        spec["backgroundAudit"] = False
    if flags:
        spec["contextAwareResources"] = meta["contextAwareResources"]
    annotations = {k: v for k, v in meta["annotations"].items()
                   if k in ("io.kubewarden.policy.severity", "io.kubewarden.policy.category")}
    metadata = {"name": meta["annotations"]["io.kubewarden.policy.title"]}
    if annotations:
        metadata["annotations"] = annotations
    return {"apiVersion": "policies.kubewarden.io/v1", "kind": "ClusterAdmissionPolicy",
            "metadata": metadata, "spec": spec}


def manifest(flags, module, kwctl=None):
    """(the scaffolded ClusterAdmissionPolicy, how it was made, kwctl's
    manifest equals from_metadata's or None without kwctl). Its module is the
    registry reference of the install text, whatever file kwctl read."""
    built = from_metadata(flags)
    if not kwctl:
        return built, "built from metadata.yml as kwctl's scaffold/manifest.rs builds it (kwctl not found)", None
    done = subprocess.run([kwctl, "scaffold", "manifest", "-t", "ClusterAdmissionPolicy", *flags,
                           f"file://{Path(module).resolve()}"], capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise RuntimeError(f"kwctl scaffold manifest: {done.stderr.strip()}")
    policy = yaml.safe_load(done.stdout)
    policy["spec"]["module"] = registry_module()
    return policy, "kwctl scaffold manifest", policy == built


def scaffolded(suite, variant, flags, module, kwctl):
    """The variant's manifest (`manifest`), noted in `suite`; where kwctl made
    it, checked against the one built from metadata.yml, which stands in for
    kwctl where it is not found."""
    policy, how, same = manifest(flags, module, kwctl)
    suite.notes.append(f"scaffold {variant}: {how}")
    if same is not None:
        suite.check(f"scaffold {variant}: kwctl's manifest is the one built from metadata.yml where kwctl "
                    "is not found", same, json.dumps(policy))
    return policy


def pod(name, annotations=None):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "annotations": annotations or {}},
            "spec": {"containers": [{"name": "app", "image": "docker.io/library/nginx:alpine"}]}}


def create(api, path, obj, **kw):
    """(code, the refusal's message or "", seconds) of one POST."""
    started = time.monotonic()
    code, body, _ = api.request("POST", path, obj, timeout=40, **kw)
    message = (body or {}).get("message", "") if code >= 300 and isinstance(body, dict) else ""
    return code, message, time.monotonic() - started


def wait_until_called(api, n, timeout=30):
    """Until the API server reaches the webhook: a pod without static IP
    passes a dry run (before, failurePolicy Fail refuses it: no endpoints, or
    no connection)."""
    deadline = time.monotonic() + timeout
    while True:
        code, message, _ = create(api, "/api/v1/namespaces/default/pods", pod(f"probe-{n}"),
                                  params={"dryRun": "All"})
        if code == 201:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"the scaffolded policy's webhook not reached within {timeout} s: {code} {message}")
        time.sleep(0.3)


def check_requests(suite, variant, n, context_aware, granted=False):
    """What Kube-OVN and users send, through the scaffolded policy's webhook
    (`suite` has check(name, ok, detail), api and notes). `granted`: the
    install text's grant applied, so every lookup is answered."""
    pods = "/api/v1/namespaces/default/pods"
    wait_until_called(suite.api, n)
    address = f"10.16.0.{50 + n}"
    ip = {"apiVersion": "kubeovn.io/v1", "kind": "IP", "metadata": {"name": f"scaffold-{n}.default"},
          "spec": {"podName": f"scaffold-{n}", "namespace": "default", "subnet": "ovn-default",
                   "ipAddress": address, "v4IpAddress": address, "podType": "", "attachSubnets": [],
                   "attachIps": [], "macAddress": "", "containerID": "", "nodeName": ""}}
    code, message, seconds = create(suite.api, "/apis/kubeovn.io/v1/ips", ip, user=KUBE_OVN_CONTROLLER,
                                    groups=["system:serviceaccounts", "system:authenticated"])
    suite.notes.append(f"scaffold {variant}: IP object by kube-ovn-controller: {code} in {seconds * 1000:.0f} ms")
    suite.check(f"scaffold {variant}: kube-ovn-controller creates a pod's IP object at once",
                code == 201 and seconds < 2, f"{code} in {seconds:.2f} s {message}")
    code, message, seconds = create(suite.api, pods, pod(f"plain-{n}"))
    suite.check(f"scaffold {variant}: a pod without static IP is created at once",
                code == 201 and seconds < 2, f"{code} in {seconds:.2f} s {message}")
    code, message, seconds = create(suite.api, pods, pod(f"static-{n}", {"ovn.kubernetes.io/ip_address": "10.16.0.90"}))
    suite.notes.append(f"scaffold {variant}: static-IP pod: {code} in {seconds:.2f} s: {message}")
    if granted:
        ok = code == 201 and seconds < 2
    elif context_aware:
        # The policy may look up, its ServiceAccount may not list IP objects:
        # the evaluation waits (docs/missing-rbac.md) and the API server gives
        # up after the webhook's timeoutSeconds (10 s).
        ok = code >= 400 and message.endswith("context deadline exceeded") and 9 <= seconds <= 13
    else:
        # No contextAwareResources: the policy-server refuses every lookup.
        ok = code == 400 and "Policy has not been granted access to Kubernetes v1/Namespace resources" in message \
            and seconds < 2
    what = "admitted at once" if granted else "refused " + ("at the webhook timeout" if context_aware else "at once")
    suite.check(f"scaffold {variant}: a static-IP pod at a free address is {what}", ok,
                f"{code} in {seconds:.2f} s {message}")
    if granted:
        # Held by the IP object above: refused with upstream's message. A pod with a network
        # entry: its NetworkAttachmentDefinitions and Subnets are read, and it is answered.
        code, message, seconds = create(suite.api, pods, pod(f"held-{n}", {"ovn.kubernetes.io/ip_address": address}))
        want = f"annotation static-ip {address} is conflict with ip crd scaffold-{n}.default, ip {address}"
        suite.check(f"scaffold {variant}: a static-IP pod at a held address is refused at once",
                    code == 403 and message.endswith(want) and seconds < 2, f"{code} in {seconds:.2f} s {message}")
        entry = json.dumps([{"name": "scaffold-net", "ips": ["172.30.0.5"]}])
        code, message, seconds = create(suite.api, pods, pod(f"entry-{n}", {"k8s.v1.cni.cncf.io/networks": entry}))
        suite.notes.append(f"scaffold {variant}: pod with a network entry: {code} in {seconds:.2f} s {message}")
        suite.check(f"scaffold {variant}: a pod with a network entry is answered at once",
                    code == 201 and seconds < 2, f"{code} in {seconds:.2f} s {message}")
    code, message, seconds = create(suite.api, pods, pod(f"plain-after-{n}"))
    suite.check(f"scaffold {variant}: then a pod without static IP is still created at once",
                code == 201 and seconds < 2, f"{code} in {seconds:.2f} s {message}")
