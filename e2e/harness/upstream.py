"""kube-ovn-webhook (Kube-OVN's cmd/webhook, built by hand outside this
repository at cases.UPSTREAM_COMMIT, docs/fidelity.md) on a free loopback
port, asked as the API server asks it."""

import json
import os
import socket
import ssl
import subprocess
import time
import urllib.request
from pathlib import Path

from .cases import UPSTREAM_COMMIT
from .processes import free_port, log_tail, stop_process

# controller-runtime's webhook server reads its certificate from here
# (cmd/webhook/server.go: hookServerCertDir); kube-ovn-webhook has no flag for it.
CERT_DIR = Path("/tmp/k8s-webhook-server/serving-certs")


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
        return log_tail(self.log.name, lines)

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


def webhook_certificate():
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


def not_found(test, program):
    """The `SKIPPED:` line of a test whose Kube-OVN program, built by hand, is missing."""
    print(f"SKIPPED: {test}: {program} (built by hand from Kube-OVN's source at {UPSTREAM_COMMIT}; "
          "docs/fidelity.md)")
