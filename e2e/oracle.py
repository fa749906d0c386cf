#!/usr/bin/env python3
"""Upstream's answers: every case asked of kube-ovn-webhook itself (`make oracle`).

    KUBE_OVN_WEBHOOK=<binary> python3 e2e/oracle.py [--record] [CASE_DIR_OR_FILE ...]

kube-ovn-webhook (built by hand, outside this repository, from Kube-OVN's
source at 1533681d7a6b: no registry serves it) runs against a real
kube-apiserver with Kube-OVN's CRDs, with a certificate made here by openssl.
For each case the case's cluster is stored through the API (as e2e-cluster
stores it), and the case's AdmissionRequest, unchanged, is POSTed to
upstream's `/validating` as an AdmissionReview: upstream answers the very
request the policy is given.

Without `--record` the live answers are compared with the ones recorded in
the cases (`upstream`, see tests/README.md) and every difference is printed;
with it they are written into the case files. Where a case cannot be asked
(its cluster is refused by the API server, it forbids a lookup), the record
says why. Without the binary it prints one `SKIPPED:` line.

Upstream reads the apiserver address from its own environment
(KUBERNETES_SERVICE_HOST, contract I9): it is given the case's
`kubernetesServiceIP` setting, else the clusterIP of the case's Service
`default/kubernetes`, as a cluster would give it to the webhook's pod; the
webhook is restarted when that changes.
"""

import argparse
import hashlib
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from controlplane import KUBE_OVN_CRDS, ControlPlane, free_port, stop_process  # noqa: E402
from kubeapi import Api  # noqa: E402
from replay import Refused, Replayer  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
COMMIT = "1533681d7a6b"
# controller-runtime's webhook server reads its certificate from here
# (cmd/webhook/server.go: hookServerCertDir); kube-ovn-webhook has no flag for it.
CERT_DIR = Path("/tmp/k8s-webhook-server/serving-certs")
DEFAULT_DIRS = [ROOT / "tests/conformance", ROOT / "tests/cases"]


def case_input(case):
    """What upstream's answer depends on, hashed: a record is stale when the case changed."""
    key = {k: case.get(k) for k in ("request", "cluster", "settings", "forbidden")}
    text = json.dumps(key, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def service_host(case):
    """KUBERNETES_SERVICE_HOST as a cluster would give the webhook's pod: the first address."""
    setting = (case.get("settings") or {}).get("kubernetesServiceIP")
    if isinstance(setting, str) and setting:
        return setting.split(",")[0]
    for svc in (case.get("cluster") or {}).get("services", []):
        meta = svc.get("metadata", {})
        if (meta.get("namespace"), meta.get("name")) == ("default", "kubernetes"):
            spec = svc.get("spec", {})
            return (spec.get("clusterIPs") or [spec.get("clusterIP") or ""])[0]
    return ""


def not_askable(case):
    """Why upstream cannot be asked this case here, or None."""
    if case.get("forbidden"):
        return "it forbids a lookup; kube-ovn-webhook's cache never syncs without the grant (a timeout, failurePolicy Ignore)"
    return None


def cluster_for_upstream(cluster):
    """The case's cluster without Service default/kubernetes: upstream reads its address from the environment."""
    cluster = dict(cluster or {})
    cluster["services"] = [
        s for s in cluster.get("services", [])
        if (s.get("metadata", {}).get("namespace"), s.get("metadata", {}).get("name")) != ("default", "kubernetes")
    ]
    return cluster


class Webhook:
    """kube-ovn-webhook on a free loopback port, restarted when its environment changes."""

    def __init__(self, binary, kubeconfig, folder):
        self.binary, self.kubeconfig, self.folder = binary, kubeconfig, folder
        self.proc = None
        self.env_host = None
        self.port = None
        self.log = None

    def ensure(self, host):
        if self.proc and self.proc.poll() is None and host == self.env_host:
            return
        self.stop()
        self.port, probe = free_port(), free_port()
        env = dict(os.environ)
        env.pop("KUBERNETES_SERVICE_HOST", None)
        if host:
            env["KUBERNETES_SERVICE_HOST"] = host
        env["POD_IP"] = "127.0.0.1"
        self.log = open(self.folder / f"webhook-{self.port}.log", "w")
        self.proc = subprocess.Popen(
            [self.binary, f"--kubeconfig={self.kubeconfig}", f"--port={self.port}",
             f"--health-probe-port={probe}", "-v=3"],
            stdout=self.log, stderr=subprocess.STDOUT, env=env)
        self.env_host = host
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"kube-ovn-webhook exited {self.proc.returncode}: {self.tail()}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError(f"kube-ovn-webhook not listening after 60 s: {self.tail()}")

    def tail(self, lines=20):
        self.log.flush()
        return "\n".join(Path(self.log.name).read_text(errors="replace").splitlines()[-lines:])

    def stop(self):
        stop_process(self.proc)
        self.proc = None

    def ask(self, request):
        """Upstream's answer to one AdmissionRequest: allowed, code, message, warnings."""
        review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}
        req = urllib.request.Request(
            f"https://127.0.0.1:{self.port}/validating", data=json.dumps(review).encode(),
            headers={"Content-Type": "application/json"}, method="POST")
        # Trusted as it is now: controller-runtime reloads the certificate when the file changes.
        tls = ssl.create_default_context(cafile=str(CERT_DIR / "tls.crt"))
        with urllib.request.urlopen(req, context=tls, timeout=30) as r:
            body = json.loads(r.read())
        response = body.get("response") or {}
        status = response.get("status") or {}
        allowed = bool(response.get("allowed"))
        return {
            "allowed": allowed,
            "code": None if allowed else status.get("code"),
            "message": None if allowed else status.get("message", ""),
            "warnings": response.get("warnings") or [],
        }


def make_certificate():
    """The webhook's certificate, kept while it has a day left (another oracle may be serving it)."""
    CERT_DIR.mkdir(parents=True, exist_ok=True)
    if (CERT_DIR / "tls.key").exists() and subprocess.run(
            ["openssl", "x509", "-checkend", "86400", "-noout", "-in", str(CERT_DIR / "tls.crt")],
            capture_output=True).returncode == 0:
        return
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
         "-keyout", str(CERT_DIR / "tls.key"), "-out", str(CERT_DIR / "tls.crt")],
        check=True, capture_output=True)


def case_files(paths):
    files = []
    for p in map(Path, paths):
        files += sorted(p.glob("*.json")) if p.is_dir() else [p]
    return files


def record_of(answer, case, why=None):
    record = {"commit": COMMIT, "input": case_input(case)}
    if why:
        record.update({"asked": False, "why": why})
    else:
        record.update(answer)
    return record


def write_record(path, case, record, field="upstream", after="expect"):
    """The case file with its record `field` set right after `after` (key order kept)."""
    out = {}
    for key, value in case.items():
        if key == field:
            continue
        out[key] = value
        if key == after:
            out[field] = record
    if field not in out:
        out[field] = record
    path.write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="*", default=[str(d) for d in DEFAULT_DIRS])
    parser.add_argument("--record", action="store_true", help="write the answers into the case files")
    parser.add_argument("--settle", type=float, default=0.3, help="seconds for the webhook's cache after a write")
    parser.add_argument("--webhook", default=os.environ.get("KUBE_OVN_WEBHOOK", ""))
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (webhook logs)")
    args = parser.parse_args()
    if not args.webhook or not os.access(args.webhook, os.X_OK):
        print("SKIPPED: oracle: KUBE_OVN_WEBHOOK names no kube-ovn-webhook binary (built by hand from Kube-OVN's "
              f"source at {COMMIT}; docs/fidelity.md)")
        return 0
    files = case_files(args.cases)
    cases = [(f, json.loads(f.read_text())) for f in files]
    # Fewest restarts: cases grouped by the environment upstream needs.
    cases.sort(key=lambda fc: (service_host(fc[1]), str(fc[0])))
    folder = Path(tempfile.mkdtemp(prefix="kop-oracle-"))
    started = time.monotonic()
    counts = {"same": 0, "different": 0, "recorded": 0, "not asked": 0, "unrecorded": 0}
    webhook = None
    try:
        make_certificate()
        with ControlPlane() as cp:
            cp.install_crds(KUBE_OVN_CRDS)
            # The cases' clusters are written as kube-ovn-controller's ServiceAccount (e2e/replay.py).
            cp.kubectl("create", "clusterrolebinding", "kube-ovn-controller", "--clusterrole=cluster-admin",
                       "--serviceaccount=kube-system:ovn")
            api = Api(cp.kubeconfig)
            replayer = Replayer(api)
            webhook = Webhook(args.webhook, cp.kubeconfig, folder)
            for path, case in cases:
                why = not_askable(case)
                answer = None
                if why is None:
                    webhook.ensure(service_host(case))
                    replayer.reset()
                    try:
                        replayer.load(cluster_for_upstream(case.get("cluster")))
                    except Refused as e:
                        why = f"the API server refuses its cluster: {e}"
                if why is None:
                    time.sleep(args.settle)
                    answer = webhook.ask(case["request"])
                record = record_of(answer, case, why)
                name = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
                if why:
                    counts["not asked"] += 1
                if args.record:
                    write_record(path, case, record)
                    counts["recorded"] += 1
                    continue
                old = case.get("upstream")
                if old is None:
                    counts["unrecorded"] += 1
                    print(f"unrecorded {name}: upstream {json.dumps(record, ensure_ascii=False)}")
                elif {k: v for k, v in old.items()} == record:
                    counts["same"] += 1
                else:
                    counts["different"] += 1
                    print(f"differs {name}:\n  recorded {json.dumps(old, ensure_ascii=False)}\n"
                          f"  upstream {json.dumps(record, ensure_ascii=False)}")
            webhook.stop()
    finally:
        if webhook:
            webhook.stop()
        if args.keep:
            print(f"# logs in {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"# {len(cases)} cases in {time.monotonic() - started:.0f} s")
    if args.record:
        print(f"oracle: {counts['recorded']} recorded, {counts['not asked']} not asked")
        return 0
    print(f"oracle: {len(cases)} cases, {counts['same']} as recorded, {counts['different']} different, "
          f"{counts['unrecorded']} unrecorded ({counts['not asked']} not asked)")
    return 1 if counts["different"] or counts["unrecorded"] else 0


if __name__ == "__main__":
    sys.exit(main())
