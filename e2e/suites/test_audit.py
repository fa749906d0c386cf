"""Kubewarden's audit-scanner reports what was there before the policy (make e2e-audit).

    python3 -m pytest e2e/suites/test_audit.py [--setting show=true] [--setting keep=true]

audit-scanner, policy-server and kwctl on PATH (else one SKIPPED: line);
policy-server serves annotated-policy.wasm. Each step is a test, run in
order; after a step stops on an error, the later ones are not run.

A cluster where Kube-OVN ran before kube-ovn-policy: a real kube-apiserver
(e2e/harness/controlplane.py) with Kube-OVN's and Kubewarden's CRDs from ../shared
(the wgpolicyk8s.io PolicyReport CRDs among them), deploy/ applied as
shipped, Kube-OVN's objects written as kube-ovn-controller (the Subnets and
Vpc of conformance case 297, and the seed's IP object
static-7584848b74-fw9dm.default holding 10.16.0.15), then workloads created
while no webhook exists, as they were before the policy was installed:

- `static-manual` (test_data/pod-static.yaml): a pod asking for 10.16.0.15;
- `static-7584848b74-fw9dm`: the pod that IP object belongs to, same address;
- `web`: a Deployment whose pods ask for the pool 10.16.0.15,10.16.0.16;
- `plain`: a pod without any static-IP annotation;
- the same conflicting pod in kube-system (deploy/'s namespaceSelector
  excludes it) and in kubewarden (the scanner skips its own namespace).

What Kubewarden's controller would have written, written here (no
controller runs): each ClusterAdmissionPolicy's `status.policyStatus:
active` (the scanner audits only active policies:
internal/audit-scanner/policies/client.go, groupPoliciesByGVR) and the
PolicyServer's Service `policy-server-kube-ovn` (the scanner looks it up by
its `app.kubernetes.io/instance` label). The policies are served by
policy-server (or kop-serve) over HTTPS on 127.0.0.1, reading the cluster
with deploy/'s ServiceAccount; audit-scanner runs once, out of cluster, with
`--policy-server-url` naming that server and `--report-kind policyreport`,
as cluster-admin (the chart's audit-scanner RBAC is not in ../shared), and
writes its PolicyReports and ClusterPolicyReports. Each report is then read
and checked exactly: result, message and summary.

`--show` prints the conflicting pod's PolicyReport as the API server
returns it (docs/audit.md shows it). The last line is `N passed, N failed`.
"""

import copy
import json
import shutil
import ssl
import subprocess
import tempfile
import time
import types
import urllib.request
from pathlib import Path

import pytest
import yaml

from e2e.harness import POLICY_FILES, ROOT
from e2e.harness.checks import Checks
from e2e.harness.cluster import NAMESPACE, SEED_MESSAGE, SERVICE_ACCOUNT
from e2e.harness.controlplane import ControlPlane
from e2e.harness.processes import die_with_parent
from e2e.harness.replay import Replayer
from e2e.harness.servers import WebhookServer
from e2e.harness.webhooks import load_cluster_admission_policies

STATIC_IP = "clusterwide-kube-ovn-static-ip"
NETWORKS = "clusterwide-kube-ovn-networks"
IP_OBJECTS = "clusterwide-kube-ovn-ip-objects"
CONFLICT = SEED_MESSAGE
REPORTS = "/apis/wgpolicyk8s.io/v1alpha2"

# The seed's IP object, shaped as kube-ovn-controller writes one (case 297's app-7.default).
SEED_IP = {
    "apiVersion": "kubeovn.io/v1", "kind": "IP",
    "metadata": {"name": "static-7584848b74-fw9dm.default",
                 "labels": {"ovn.kubernetes.io/subnet": "ovn-default", "ovn-default": "",
                            "ovn.kubernetes.io/node-name": "kube-ovn-worker", "ovn.kubernetes.io/ip_reserved": "false"}},
    "spec": {"podName": "static-7584848b74-fw9dm", "namespace": "default", "subnet": "ovn-default",
             "attachSubnets": [], "nodeName": "kube-ovn-worker", "ipAddress": "10.16.0.15", "v4IpAddress": "10.16.0.15",
             "v6IpAddress": "", "attachIps": [], "macAddress": "00:00:00:3a:5c:15", "attachMacs": [], "containerID": "",
             "podType": ""},
}


def pod(name, namespace, annotations=None):
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "annotations": annotations or {}},
        "spec": {"containers": [{"name": "app", "image": "docker.io/library/nginx:alpine",
                                 "command": ["sleep", "infinity"]}]},
    }


WEB = {
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "default"},
    "spec": {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}, "annotations": {"ovn.kubernetes.io/ip_pool": "10.16.0.15,10.16.0.16"}},
            "spec": {"containers": [{"name": "app", "image": "docker.io/library/nginx:alpine"}]},
        },
    },
}
STATIC = {"ovn.kubernetes.io/ip_address": "10.16.0.15"}
# (namespace, kind, name, {policy id: (result, message)}): every namespaced
# report expected, exactly. A pass carries no message.
EXPECTED = [
    ("default", "Pod", "static-manual", {STATIC_IP: ("fail", CONFLICT)}),
    ("default", "Pod", "static-7584848b74-fw9dm", {STATIC_IP: ("pass", None)}),
    ("default", "Deployment", "web", {STATIC_IP: ("fail", CONFLICT)}),
    ("default", "Pod", "plain", {STATIC_IP: ("pass", None)}),
]
# The cluster-wide objects, each audited by the policy whose rules name it.
EXPECTED_CLUSTER = [
    ("Subnet", "ovn-default", {NETWORKS: ("pass", None)}),
    ("Subnet", "join", {NETWORKS: ("pass", None)}),
    ("Vpc", "ovn-cluster", {NETWORKS: ("pass", None)}),
    ("IP", "app-7.default", {IP_OBJECTS: ("pass", None)}),
    ("IP", "static-7584848b74-fw9dm.default", {IP_OBJECTS: ("pass", None)}),
]


class Suite(Checks):
    def __init__(self, args, cp, folder):
        super().__init__(args, cp, folder)
        self.server = None

    def stop(self):
        if self.server:
            self.server.stop()

    def setup(self):
        self.cp.install_crds()
        self.cp.ensure_namespace(NAMESPACE)
        done = self.apply_deploy()
        self.check("deploy/ applied as shipped (no controller, so no webhook)", done.returncode == 0, done.stderr.strip())
        if done.returncode != 0:
            raise SystemExit(1)
        # kube-ovn-controller writes Kube-OVN's objects (cluster-admin here).
        self.kubectl("create", "clusterrolebinding", "kube-ovn-controller", "--clusterrole=cluster-admin",
                     "--serviceaccount=kube-system:ovn")
        replayer = Replayer(self.api)
        case = json.loads((ROOT / "tests/conformance/297-i11-audit-replay-running-pod-own-ip.json").read_text())
        cluster = copy.deepcopy(case["cluster"])
        cluster["ips"].append(copy.deepcopy(SEED_IP))
        replayer.load(cluster)
        names = {k: [o["metadata"]["name"] for o in v] for k, v in cluster.items() if v}
        self.check("Kube-OVN's objects written as kube-ovn-controller", True, json.dumps(names))
        for ns in ("default", "kube-system"):  # and their `default` ServiceAccount
            self.cp.ensure_namespace(ns)
        workloads = [
            yaml.safe_load((ROOT / "test_data/pod-static.yaml").read_text()),
            pod("static-7584848b74-fw9dm", "default", STATIC),
            WEB,
            pod("plain", "default"),
            pod("static-in-kube-system", "kube-system", STATIC),
            pod("static-in-kubewarden", NAMESPACE, STATIC),
        ]
        for obj in workloads:
            done, _ = self.kubectl_file("create", obj)  # as a user did before the policy existed
            meta = obj["metadata"]
            self.check(f"{obj['kind']} {meta['namespace']}/{meta['name']} created while no webhook exists",
                       done.returncode == 0, done.stderr.strip())

    def controller_state(self):
        """What Kubewarden's controller would have written and the scanner reads."""
        for policy in load_cluster_admission_policies(POLICY_FILES):
            name = policy["metadata"]["name"]
            code, body, _ = self.api.request(
                "PATCH", f"/apis/policies.kubewarden.io/v1/clusteradmissionpolicies/{name}/status",
                {"status": {"policyStatus": "active", "mode": policy["spec"].get("mode", "protect")}},
                content_type="application/merge-patch+json")
            if code != 200:
                raise RuntimeError(f"status of {name}: {code} {body}")
        # As internal/controller/policyserver_controller_service.go makes it.
        service = {
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "policy-server-kube-ovn", "namespace": NAMESPACE, "labels": {
                "kubewarden/policy-server": "kube-ovn", "app.kubernetes.io/component": "policy-server",
                "app.kubernetes.io/instance": "policy-server-kube-ovn", "app.kubernetes.io/part-of": "kubewarden",
                "app.kubernetes.io/managed-by": "kubewarden-controller"}},
            "spec": {"ports": [{"name": "policy-server", "port": 443, "targetPort": 8443, "protocol": "TCP"}],
                     "selector": {"app.kubernetes.io/instance": "policy-server-kube-ovn",
                                  "app.kubernetes.io/part-of": "kubewarden"}},
        }
        code, body, _ = self.api.request("POST", f"/api/v1/namespaces/{NAMESPACE}/services", service)
        if code != 201:
            raise RuntimeError(f"Service policy-server-kube-ovn: {code} {body}")

    def serve(self):
        sa = self.folder / "sa.kubeconfig"
        self.cp.service_account_kubeconfig(NAMESPACE, SERVICE_ACCOUNT, sa)
        self.server = WebhookServer(self.args.server, Path(self.args.module).resolve(), self.folder, sa,
                                    load_cluster_admission_policies(POLICY_FILES)).start()
        self.warm()

    def warm(self):
        """One admission request per policy first, as a cluster's traffic would have made them.

        The policy-server creates each lookup's watch cache on its first use;
        a hundred audit requests arriving at once on cold caches can wait past
        audit-scanner's timeout (a pod then reads `error`, not its result).
        """
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": "warm-up", "namespace": "default", "annotations": {"ovn.kubernetes.io/ip_address": "10.16.0.254"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
        subnet = {"apiVersion": "kubeovn.io/v1", "kind": "Subnet", "metadata": {"name": "warm-up"},
                  "spec": {"cidrBlock": "10.254.0.0/16", "vpc": "ovn-cluster", "protocol": "IPv4"}}
        tls = ssl.create_default_context(cafile=str(self.server.cert))
        for policy, obj, group, resource in (("clusterwide-kube-ovn-static-ip", pod, "", "pods"),
                                             ("clusterwide-kube-ovn-networks", subnet, "kubeovn.io", "subnets")):
            version = "v1"
            review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
                "uid": "warm-up", "kind": {"group": group, "version": version, "kind": obj["kind"]},
                "resource": {"group": group, "version": version, "resource": resource},
                "name": obj["metadata"]["name"], "namespace": obj["metadata"].get("namespace", ""),
                "operation": "CREATE", "userInfo": {"username": "warm-up"}, "object": obj}}
            request = urllib.request.Request(self.server.url(policy), data=json.dumps(review).encode(),
                                             headers={"Content-Type": "application/json"}, method="POST")
            started = time.monotonic()
            with urllib.request.urlopen(request, context=tls, timeout=60) as answer:
                answer.read()
            self.notes.append(f"warm-up {policy}: {time.monotonic() - started:.2f} s")

    def scan(self):
        started = time.monotonic()
        log = self.folder / "audit-scanner.log"
        with open(log, "w") as out:
            done = subprocess.run(
                [self.args.audit_scanner, "--kubewarden-namespace", NAMESPACE,
                 "--policy-server-url", f"https://127.0.0.1:{self.server.port}",
                 "--extra-ca", str(self.server.cert), "--report-kind", "policyreport", "--loglevel", "info"],
                stdout=out, stderr=subprocess.STDOUT, cwd=self.folder, timeout=self.args.timeout,
                env={"KUBECONFIG": str(self.cp.kubeconfig), "PATH": "/usr/bin:/bin", "HOME": str(self.folder)},
                preexec_fn=die_with_parent,
            )
        seconds = time.monotonic() - started
        lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
        errors = [line for line in lines if line.get("level") == "error"]
        counts = [line for line in lines if line.get("message") in ("policy count", "cluster admission policies count")]
        for c in counts:
            self.notes.append("audit-scanner: " + ", ".join(f"{k}={v}" for k, v in c.items()
                                                            if k in ("message", "namespace", "policies-to-evaluate",
                                                                     "policies-skipped", "policies-errored")))
        self.notes.append(f"audit-scanner ran {seconds:.1f} s")
        self.check("audit-scanner runs once and exits 0, logging no error", done.returncode == 0 and not errors,
                   f"exit {done.returncode}, {len(errors)} errors: {errors[:3]}")

    def results(self, report):
        return {r["policy"]: (r["result"], r.get("message")) for r in report.get("results") or []}

    def check_reports(self):
        code, body, _ = self.api.request("GET", f"{REPORTS}/policyreports")
        reports = body.get("items", []) if code == 200 else []
        by_subject = {(r["scope"]["namespace"], r["scope"]["kind"], r["scope"]["name"]): r for r in reports}
        for namespace, kind, name, want in EXPECTED:
            report = by_subject.get((namespace, kind, name))
            got = self.results(report) if report else None
            verdicts = [v[0] for v in want.values()]
            summary = {"pass": verdicts.count("pass"), "fail": verdicts.count("fail"), "warn": 0, "error": 0, "skip": 0}
            self.check(f"{kind} {namespace}/{name}: " + ", ".join(f"{p} {r}" for p, (r, _) in want.items()),
                       got == want and report["summary"] == summary,
                       f"results {got}, summary {report and report.get('summary')}")
            if report and name == "static-manual":
                self.conflict_report = report
        others = sorted(set(by_subject) - {(n, k, m) for n, k, m, _ in EXPECTED})
        self.check("no other PolicyReport (none for kube-system, which deploy/ excludes, nor for kubewarden, "
                   "which the scanner skips)", not others, str(others))
        code, body, _ = self.api.request("GET", f"{REPORTS}/clusterpolicyreports")
        reports = body.get("items", []) if code == 200 else []
        by_subject = {(r["scope"]["kind"], r["scope"]["name"]): r for r in reports}
        for kind, name, want in EXPECTED_CLUSTER:
            report = by_subject.get((kind, name))
            got = self.results(report) if report else None
            self.check(f"{kind} {name}: " + ", ".join(f"{p} {r}" for p, (r, _) in want.items()),
                       got == want, f"results {got}, summary {report and report.get('summary')}")
        others = sorted(set(by_subject) - {(k, n) for k, n, _ in EXPECTED_CLUSTER})
        self.check("no other ClusterPolicyReport", not others, str(others))

    def show(self):
        report = copy.deepcopy(getattr(self, "conflict_report", None))
        if report is None:
            return
        report["metadata"].pop("managedFields", None)
        print("# the PolicyReport of Pod default/static-manual, as the API server returns it:")
        print(yaml.safe_dump(report, sort_keys=False, width=1000), end="")


pytestmark = [pytest.mark.incremental, pytest.mark.requires("audit-scanner", "policy-server", "kwctl")]

# The suite's settings (`--setting NAME=VALUE`).
SETTINGS = {
    "timeout": 300.0,  # seconds for audit-scanner's run
    "show": False,  # print the conflicting pod's PolicyReport
    "keep": False,  # keep the temporary folder
}

STEPS = ["setup", "controller_state", "serve", "scan", "check_reports"]


@pytest.fixture(scope="module")
def audit(settings):
    """The control plane, for the steps in order."""
    args = types.SimpleNamespace(**settings(SETTINGS), module=str(ROOT / "annotated-policy.wasm"),
                                 audit_scanner=shutil.which("audit-scanner"), server=shutil.which("policy-server"))
    folder = Path(tempfile.mkdtemp(prefix="kop-audit-e2e-"))
    started = time.monotonic()
    with ControlPlane(keep=args.keep) as cp:
        suite = Suite(args, cp, folder)
        try:
            yield suite
        finally:
            if suite.failed:
                suite.failure_logs()
            suite.stop()
    print(f"# {time.monotonic() - started:.0f} s in all")
    if args.keep:
        print(f"# kept {folder}")
    else:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("step", STEPS)
def test_audit(audit, counted, step):
    getattr(counted(audit), step)()
    if step == STEPS[-1] and audit.args.show:
        audit.show()
