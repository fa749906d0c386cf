"""Smoke test of e2e/harness/controlplane.py against the real binaries.

Starts etcd and kube-apiserver, installs the Kube-OVN and Kubewarden CRDs,
creates an IP object with kubectl and reads it back, checks that RBAC
denies a ServiceAccount without grants (a token, and impersonation), and
stops; every phase is timed. Without the binaries (`make cluster-bin`) it
prints one SKIPPED line.

    python3 -m pytest e2e/suites/test_controlplane.py
"""

import json
import time
from pathlib import Path

import pytest

from e2e.harness.cluster import SEED_IP
from e2e.harness.controlplane import ControlPlane

IP = SEED_IP


class Timer:
    def __init__(self):
        self.phases = []

    def __call__(self, name):
        timer = self

        class Phase:
            def __enter__(self):
                self.t = time.monotonic()

            def __exit__(self, *exc):
                timer.phases.append((name, time.monotonic() - self.t))

        return Phase()


def test_control_plane(checks):
    check = checks.check
    timer = Timer()
    cp = ControlPlane()
    if not cp.apiserver_bin.exists():
        pytest.skip("kube-apiserver not found (make cluster-bin)")
    pids = []
    try:
        with timer("start etcd + kube-apiserver"):
            cp.__enter__()
        pids = [p.pid for p in cp.procs.values()]
        version = json.loads(cp.kubectl("version", "-o", "json").stdout)
        check("kubectl and server are v1.36.3",
              version["clientVersion"]["gitVersion"] == "v1.36.3" and version["serverVersion"]["gitVersion"] == "v1.36.3",
              json.dumps(version))
        svc = json.loads(cp.kubectl("get", "service", "kubernetes", "-n", "default", "-o", "json").stdout)
        check("Service default/kubernetes has a ClusterIP", svc["spec"].get("clusterIP", "").startswith("10.96."),
              json.dumps(svc["spec"]))

        with timer("install CRDs"):
            names = cp.install_crds()
        check("CRDs established", "ips.kubeovn.io" in names and "clusteradmissionpolicies.policies.kubewarden.io" in names,
              str(names))

        with timer("create IP"):
            cp.kubectl("create", "-f", "-", input=json.dumps(IP))
        with timer("get IP"):
            got = json.loads(cp.kubectl("get", "ip", IP["metadata"]["name"], "-o", "json").stdout)
        check("IP read back", got["spec"]["ipAddress"] == "10.16.0.15" and got["spec"]["podName"] == IP["spec"]["podName"],
              json.dumps(got["spec"]))
        meta = got["metadata"]
        check("IP has server metadata", all(isinstance(meta.get(k), str) for k in ("uid", "resourceVersion", "creationTimestamp")),
              json.dumps(meta))

        with timer("ServiceAccount kubeconfig"):
            kc = cp.service_account_kubeconfig("kubewarden", "policy-server", cp.dir / "sa.kubeconfig")
        with timer("RBAC denies"):
            r = cp.kubectl("get", "ips", kubeconfig=kc, check=False)
            r_as = cp.kubectl("get", "ip", IP["metadata"]["name"], check=False,
                              as_user="system:serviceaccount:kubewarden:policy-server")
        print(f"  403 (token, list): {r.stderr.strip()}")
        print(f"  403 (impersonated, get): {r_as.stderr.strip()}")
        want = 'User "system:serviceaccount:kubewarden:policy-server" cannot list resource "ips" in API group "kubeovn.io"'
        check("RBAC denies a ServiceAccount without grants (token)", r.returncode != 0 and want in r.stderr, r.stderr)
        check("RBAC denies it too when impersonated",
              r_as.returncode != 0 and "Forbidden" in r_as.stderr and "cannot get resource" in r_as.stderr, r_as.stderr)
        token = cp.token("kubewarden", "policy-server")
        code, body = cp.request("/apis/kubeovn.io/v1/ips", token=token)
        print(f"  403 Status body: {json.dumps(body)}")
        check("403 is a Status of reason Forbidden", code == 403 and body.get("reason") == "Forbidden", f"{code} {body}")
    finally:
        folder = cp.dir
        with timer("stop"):
            cp.__exit__(None, None, None)
    check("temporary folder removed", folder is not None and not folder.exists(), str(folder))
    check("no process left", pids and not any(Path(f"/proc/{p}").exists() for p in pids), str(pids))
    for name, seconds in timer.phases:
        print(f"  {name:30} {seconds:6.2f} s")

