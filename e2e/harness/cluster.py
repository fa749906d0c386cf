"""deploy/ on a real control plane, behind its webhooks: the base of the
suites that judge the policy through a real kube-apiserver (e2e-cluster,
e2e-kube-ovn).

`ClusterSuite.setup()` installs Kube-OVN's and Kubewarden's CRDs from
../shared, applies deploy/ as shipped, serves deploy/'s policies over HTTPS
with the suite's `--server` (Kubewarden's policy-server or kop-serve; the
same command line), reading the cluster with a token of deploy/'s
ServiceAccount, so deploy/rbac.yaml decides every lookup, and registers
the ValidatingWebhookConfigurations rendered from deploy/'s
ClusterAdmissionPolicies as Kubewarden's controller renders them
(webhooks.py), pointed at the local server."""

import base64
import shutil
import time
from pathlib import Path

from . import POLICY_FILES, ROOT
from .checks import Checks
from .replay import Replayer
from .servers import WebhookServer
from .webhooks import load_cluster_admission_policies, render_webhook

NAMESPACE = "kubewarden"
SERVICE_ACCOUNT = "kube-ovn-policy-server"
STATIC_IP_WEBHOOK = "clusterwide-kube-ovn-static-ip.kubewarden.admission"
NETWORKS_WEBHOOK = "clusterwide-kube-ovn-networks.kubewarden.admission"
SEED_MESSAGE = (
    "annotation static-ip 10.16.0.15 is conflict with ip crd static-7584848b74-fw9dm.default, ip 10.16.0.15"
)
# The seed's IP object, as the seed's demo writes it: 10.16.0.15 is taken.
SEED_IP = {
    "apiVersion": "kubeovn.io/v1", "kind": "IP",
    "metadata": {"name": "static-7584848b74-fw9dm.default"},
    "spec": {
        "podName": "static-7584848b74-fw9dm", "namespace": "default", "subnet": "ovn-default",
        "ipAddress": "10.16.0.15", "v4IpAddress": "10.16.0.15", "podType": "",
        "attachSubnets": [], "attachIps": [], "macAddress": "", "containerID": "", "nodeName": "",
    },
}
# What kubectl prints for the seed's demo. No "(Forbidden)" after "Error from
# server": kubectl prints the Status reason, which kube-ovn-webhook's Denied
# sets and Kubewarden's policy-server never does (docs/differences.md).
SEED_REFUSAL = ('Error from server: error when creating "pod-static.yaml": admission webhook '
                f'"{STATIC_IP_WEBHOOK}" denied the request: {SEED_MESSAGE}')


class ClusterSuite(Checks):
    SHOWN = 100

    def setup(self):
        started = time.monotonic()
        self.cp.install_crds()
        crds_s = time.monotonic() - started
        self.kubectl("create", "namespace", NAMESPACE)
        applied = self.apply_deploy()
        self.check("deploy/ applied as shipped: kubectl apply -k deploy/, -f ip-objects-policy.yaml", applied.returncode == 0, applied.stderr.strip() or f"CRDs {crds_s:.1f} s")
        if applied.returncode != 0:
            raise SystemExit(1)
        self.sa_kubeconfig = self.folder / "sa.kubeconfig"
        self.cp.service_account_kubeconfig(NAMESPACE, SERVICE_ACCOUNT, self.sa_kubeconfig)
        self.policies = load_cluster_admission_policies(POLICY_FILES)
        self.server = WebhookServer(
            self.args.server, Path(self.args.module).resolve(), self.folder, self.sa_kubeconfig, self.policies
        ).start()
        ca = base64.b64encode(self.server.cert.read_bytes()).decode()
        for policy in self.policies:
            pid = "clusterwide-" + policy["metadata"]["name"]
            self.apply(render_webhook(policy, url=self.server.url(pid), ca_bundle=ca))
        # kube-ovn-controller's ServiceAccount may do anything, as Kube-OVN's install lets it
        # (the cases' clusters are written as that user, which deploy/ excludes).
        self.kubectl("create", "clusterrolebinding", "kube-ovn-controller", "--clusterrole=cluster-admin",
                     "--serviceaccount=kube-system:ovn")
        self.replayer = Replayer(self.api)
        for ns in ("default", "kube-system", NAMESPACE):
            self.replayer.ensure_namespace(ns)
        self.wait_for_webhooks()

    def stop(self):
        if getattr(self, "server", None):
            self.server.stop()
        super().stop()

    def wait_for_webhooks(self):
        """Until the API server calls the webhooks: a pod with a malformed address is refused."""
        probe = {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "webhook-probe", "namespace": "default",
                         "annotations": {"ovn.kubernetes.io/ip_address": "not-an-address"}},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]},
        }
        self.replayer.ensure_namespace("default")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            code, body, _ = self.api.request("POST", "/api/v1/namespaces/default/pods", probe, params={"dryRun": "All"})
            if code == 400 and STATIC_IP_WEBHOOK in (body or {}).get("message", ""):
                return
            time.sleep(0.2)
        raise RuntimeError(f"the API server did not call the webhook within 30 s (last: {code} {body})")

    def settle(self):
        """Let the server's watch caches see what was just written (policy-server's have no sync point)."""
        time.sleep(self.args.settle)

    def webhook_calls(self, webhook=STATIC_IP_WEBHOOK):
        """How many admission calls the API server has made to a webhook (its own /metrics)."""
        code, text, _ = self.api.request("GET", "/metrics")
        total = 0.0
        for line in (text if isinstance(text, str) else "").splitlines():
            if line.startswith("apiserver_admission_webhook_admission_duration_seconds_count{") and f'name="{webhook}"' in line:
                total += float(line.rsplit(" ", 1)[1])
        return int(total)

    def pod(self, name, namespace="default", annotations=None, labels=None):
        return {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "annotations": annotations or {}, "labels": labels or {}},
            "spec": {"containers": [{"name": "app", "image": "docker.io/library/nginx:alpine"}]},
        }

    def create_pod(self, pod, user=None):
        """kubectl create of a pod: (exit status, stderr, milliseconds)."""
        done, ms = self.kubectl_file("create", pod, user=user)
        return done.returncode, done.stderr.strip(), ms

    def seed_conflict(self):
        """The seed's IP object, so that 10.16.0.15 is taken."""
        self.replayer.reset()
        self.replayer.create({
            "apiVersion": "kubeovn.io/v1", "kind": "IP", "metadata": {"name": "static-7584848b74-fw9dm.default"},
            "spec": {"podName": "static-7584848b74-fw9dm", "namespace": "default", "subnet": "ovn-default",
                     "ipAddress": "10.16.0.15", "v4IpAddress": "10.16.0.15"},
        })
        self.settle()

    def seed_demo(self):
        """The seed's demo, verbatim: `kubectl apply -f pod-static.yaml` (test_data/) in a folder of
        its own: (CompletedProcess, milliseconds)."""
        workdir = self.folder / "seed"
        workdir.mkdir(exist_ok=True)
        shutil.copy(ROOT / "test_data" / "pod-static.yaml", workdir / "pod-static.yaml")
        started = time.monotonic()
        done = self.kubectl("apply", "-f", "pod-static.yaml", cwd=workdir)
        return done, (time.monotonic() - started) * 1000
