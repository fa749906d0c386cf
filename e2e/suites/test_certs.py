"""Kubewarden's CA from an operator's PKI through cert-manager, measured (make e2e-certs).

    python3 -m pytest e2e/suites/test_certs.py [--setting certmanager_bin=DIR] [--setting keep=true]

On a real kube-apiserver (e2e/harness/controlplane.py), cert-manager v1.21.2's
controller and cainjector (e2e/certmanager/, built from its Go module) run
out of cluster with the admin kubeconfig. cert-manager's own webhook is not
run: it defaults and validates cert-manager's objects and converts old API
versions, so here an invalid Certificate would be stored and then refused by
the controller instead of by the API server; every object below is valid
cert-manager.io/v1, so nothing else changes. Its CRDs are read in place from
the module's deploy/crds in GOMODCACHE.

cert-manager part (runs wherever the control plane builds):
- the operator's PKI: a SelfSigned ClusterIssuer, a root CA Certificate, a CA
  ClusterIssuer on it (standing in for "your issuer");
- the Certificate for Kubewarden's CA (docs/certificates.md): isCA, ECDSA
  P-256, PKCS1 encoding, into Secret kubewarden/kubewarden-ca-cert-manager;
  its contents (keys, PEM headers, chain to the root), and the PEM header
  each key algorithm and encoding gives;
- the documented copy into kubewarden/kubewarden-ca (ca.crt, ca.key);
- a Certificate aimed at kubewarden-ca itself: what cert-manager does to it;
- Kube-OVN's webhook objects as its chart renders them (v2 chart, commit
  1533681d7a6b, validatingWebhook.enabled=true): the cainjector writes the
  ValidatingWebhookConfiguration's caBundle; then what deleting them (as
  `helm upgrade --set validatingWebhook.enabled=false` does) leaves behind.

Controller part (where kubewarden-controller is on PATH; else one `SKIPPED:`
line and the cert-manager part still counts): the controller runs
as e2e/suites/test_controller.py runs it, deploy/ is applied through its webhooks,
and: the policies' caBundle is the copied CA; the PolicyServer's certificate
chains to the operator's root; what it does with an RSA CA, a PKCS#8 key,
the directly targeted Secret; what a renewal followed by a copy changes, and
when (copy alone, controller restart, PolicyServer secret deleted).

No kube-controller-manager runs: nothing is garbage-collected, which is
stated where it matters. Each step is a test, run in order; after a step
stops on an error, the later ones are not run (xfail).
"""

import base64
import json
import re
import shutil
import subprocess
import tempfile
import time
import types
from pathlib import Path

import pytest

from e2e.harness import DEPLOY, ROOT, kubewarden
from e2e.harness.certificates import openssl
from e2e.harness.checks import Checks
from e2e.harness.controlplane import KUBE_OVN_CRDS, KUBEWARDEN_CRDS, ControlPlane
from e2e.harness.processes import free_port
from e2e.harness.webhooks import load_cluster_admission_policies, policy_id

CM_MODULE_DIR = ROOT / "e2e" / "certmanager"
NS = "kubewarden"
CM_NS = "cert-manager"
KUBE_OVN_NS = "kube-system"
SOURCE_SECRET = "kubewarden-ca-cert-manager"
CA_SECRET = "kubewarden-ca"

# The operator's PKI: a self-signed root, and a CA ClusterIssuer on it.
OPERATOR_PKI = [
    {"apiVersion": "cert-manager.io/v1", "kind": "ClusterIssuer", "metadata": {"name": "selfsigned-root"},
     "spec": {"selfSigned": {}}},
    {"apiVersion": "cert-manager.io/v1", "kind": "Certificate",
     "metadata": {"name": "operator-root-ca", "namespace": CM_NS},
     "spec": {"isCA": True, "commonName": "operator-root-ca", "secretName": "operator-root-ca",
              "duration": "87600h", "privateKey": {"algorithm": "ECDSA", "size": 256},
              "issuerRef": {"kind": "ClusterIssuer", "name": "selfsigned-root", "group": "cert-manager.io"}}},
    {"apiVersion": "cert-manager.io/v1", "kind": "ClusterIssuer", "metadata": {"name": "operator-ca"},
     "spec": {"ca": {"secretName": "operator-root-ca"}}},
]


def kubewarden_ca_certificate(name=SOURCE_SECRET, secret=SOURCE_SECRET, algorithm="ECDSA", size=256,
                              encoding="PKCS1", rotation="Never"):
    """The Certificate for Kubewarden's CA, as docs/certificates.md gives it."""
    return {
        "apiVersion": "cert-manager.io/v1", "kind": "Certificate",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "isCA": True,
            "commonName": "kubewarden-controller-ca",
            "secretName": secret,
            # The controller replaces a CA that expires within 60 days
            # (CertLookahead): renew well before that.
            "duration": "8760h",
            "renewBefore": "2160h",
            "privateKey": {"algorithm": algorithm, "size": size, "encoding": encoding,
                           "rotationPolicy": rotation},
            "issuerRef": {"kind": "ClusterIssuer", "name": "operator-ca", "group": "cert-manager.io"},
        },
    }


# The documented copy: tls.crt and tls.key of cert-manager's Secret become
# ca.crt and ca.key of kubewarden-ca (server-side apply: other keys and the
# Helm labels stay).
COPY_TEMPLATE = ('{"apiVersion":"v1","kind":"Secret","metadata":{"name":"kubewarden-ca","namespace":"kubewarden"},'
                 '"data":{"ca.crt":"{{index .data "tls.crt"}}","ca.key":"{{index .data "tls.key"}}"}}')

# Kube-OVN's v2 chart at 1533681d7a6b, templates/webhook/{certificate,webhook}.yaml,
# rendered with its defaults (namespace kube-system, clusterDomain cluster.local)
# and validatingWebhook.enabled=true; the webhook's rules shortened to pods.
KUBE_OVN_WEBHOOK = [
    {"apiVersion": "cert-manager.io/v1", "kind": "Issuer",
     "metadata": {"name": "kube-ovn-webhook-selfsigned-issuer", "namespace": KUBE_OVN_NS},
     "spec": {"selfSigned": {}}},
    {"apiVersion": "cert-manager.io/v1", "kind": "Certificate",
     "metadata": {"name": "kube-ovn-webhook-serving-cert", "namespace": KUBE_OVN_NS},
     "spec": {"dnsNames": ["kube-ovn-webhook.kube-system", "kube-ovn-webhook.kube-system.svc",
                           "kube-ovn-webhook.kube-system.svc.cluster.local"],
              "issuerRef": {"kind": "Issuer", "name": "kube-ovn-webhook-selfsigned-issuer", "group": "cert-manager.io"},
              "secretName": "kube-ovn-webhook-secret"}},
    {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
     "metadata": {"name": "kube-ovn-webhook",
                  "annotations": {"cert-manager.io/inject-ca-from": "kube-system/kube-ovn-webhook-serving-cert"}},
     "webhooks": [{"name": "pod-ip-validating.kube-ovn.io",
                   "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                              "resources": ["pods"]}],
                   # Not reachable here: Ignore, and a selector nothing matches,
                   # so that it never refuses this test's requests.
                   "objectSelector": {"matchLabels": {"kop-e2e/never": "true"}},
                   "failurePolicy": "Ignore", "admissionReviewVersions": ["v1", "v1beta1"],
                   "sideEffects": "None", "timeoutSeconds": 5,
                   "clientConfig": {"service": {"namespace": KUBE_OVN_NS, "name": "kube-ovn-webhook",
                                                "path": "/validating", "port": 443}}}]},
]


def b64d(text):
    return base64.b64decode(text or "")


def pem_blocks(data):
    """The PEM block types in a byte string, in order."""
    return re.findall(rb"-----BEGIN ([A-Z0-9 ]+)-----", data)


def module_dir():
    """cert-manager's module folder in GOMODCACHE, as e2e/certmanager/go.mod pins it."""
    go = shutil.which("go") or "/usr/local/go/bin/go"
    done = subprocess.run([go, "list", "-m", "-json", "github.com/cert-manager/cert-manager"], cwd=CM_MODULE_DIR,
                          capture_output=True, text=True, check=True)
    info = json.loads(done.stdout)
    return Path(info["Dir"]), info["Version"]


class Suite(Checks):
    SHOWN = 160

    # --- plumbing -----------------------------------------------------------

    def note(self, text):
        print(f"# {text}", flush=True)

    def secret(self, ns, name):
        return self.get(f"/api/v1/namespaces/{ns}/secrets/{name}")

    def secret_data(self, ns, name):
        s = self.secret(ns, name)
        return {k: b64d(v) for k, v in ((s or {}).get("data") or {}).items()}

    def certificate(self, ns, name):
        return self.get(f"/apis/cert-manager.io/v1/namespaces/{ns}/certificates/{name}")

    def openssl(self, *args, input=None):
        return openssl(self.folder, *args, input=input)

    def write(self, name, data):
        path = self.folder / name
        path.write_bytes(data)
        return path

    def verify(self, leaf, anchors, untrusted=None, partial=False, hostname=None):
        """openssl verify of a PEM leaf against PEM anchors: (ok, output)."""
        args = ["verify"]
        if partial:
            # As Go's crypto/x509 (the API server) does: any certificate in
            # the roots is a trust anchor, self-signed or not.
            args.append("-partial_chain")
        if hostname:
            args += ["-verify_hostname", hostname]
        args += ["-CAfile", self.write(f"anchors-{time.monotonic_ns()}.pem", anchors)]
        if untrusted:
            args += ["-untrusted", self.write(f"untrusted-{time.monotonic_ns()}.pem", untrusted)]
        args.append(self.write(f"leaf-{time.monotonic_ns()}.pem", leaf))
        done = self.openssl(*args)
        return done.returncode == 0, (done.stdout + done.stderr).strip().replace(str(self.folder) + "/", "")

    def x509(self, pem, *fields):
        done = self.openssl("x509", "-noout", *fields, input=pem.decode())
        return done.stdout.strip()

    def cert_text(self, pem):
        return self.openssl("x509", "-noout", "-text", input=pem.decode()).stdout

    # --- cert-manager ---------------------------------------------------------

    def start_cert_manager(self):
        bin_dir = Path(self.args.certmanager_bin)
        self.cp.ensure_namespace(CM_NS)
        self.start("cert-manager-controller", [bin_dir / "cert-manager-controller",
                                               f"--cluster-resource-namespace={CM_NS}", "--v=2"])
        self.start("cert-manager-cainjector", [bin_dir / "cert-manager-cainjector", "--v=2"])

    def wait_ready(self, ns, name, revision=None, timeout=60):
        def ready():
            c = self.certificate(ns, name)
            if not c:
                return None
            conds = {x["type"]: x for x in (c.get("status") or {}).get("conditions") or []}
            if conds.get("Ready", {}).get("status") != "True":
                return None
            if revision is not None and (c["status"].get("revision") or 0) < revision:
                return None
            return c
        return self.wait(f"Certificate {ns}/{name} Ready", ready, timeout)

    def condition(self, ns, name, kind="Ready"):
        c = self.certificate(ns, name) or {}
        return next((x for x in (c.get("status") or {}).get("conditions") or [] if x["type"] == kind), {})

    def operator_pki(self):
        started = time.monotonic()
        self.apply(*OPERATOR_PKI)
        self.wait_ready(CM_NS, "operator-root-ca")
        self.wait("ClusterIssuer operator-ca Ready", lambda: any(
            c["type"] == "Ready" and c["status"] == "True"
            for c in ((self.get("/apis/cert-manager.io/v1/clusterissuers/operator-ca") or {}).get("status") or {})
            .get("conditions") or []))
        self.root = self.secret_data(CM_NS, "operator-root-ca")["tls.crt"]
        self.check("operator PKI: self-signed root CA issued, CA ClusterIssuer operator-ca Ready", True,
                   f"{time.monotonic() - started:.1f} s; root {self.x509(self.root, '-subject')}")

    def kubewarden_ca(self):
        """The documented Certificate; its Secret's contents."""
        self.cp.ensure_namespace(NS)
        started = time.monotonic()
        self.apply(kubewarden_ca_certificate())
        cert = self.wait_ready(NS, SOURCE_SECRET)
        self.note(f"Certificate {NS}/{SOURCE_SECRET} Ready in {time.monotonic() - started:.1f} s, "
                  f"revision {cert['status'].get('revision')}, notAfter {cert['status'].get('notAfter')}, "
                  f"renewalTime {cert['status'].get('renewalTime')}")
        s = self.secret(NS, SOURCE_SECRET)
        data = {k: b64d(v) for k, v in s["data"].items()}
        self.source = data
        self.check("its Secret: type kubernetes.io/tls, keys ca.crt tls.crt tls.key (no ca.key)",
                   s.get("type") == "kubernetes.io/tls" and sorted(data) == ["ca.crt", "tls.crt", "tls.key"],
                   f"type {s.get('type')}, keys {sorted(data)}")
        self.check("tls.key: one PEM block `EC PRIVATE KEY` (what the controller requires)",
                   pem_blocks(data["tls.key"]) == [b"EC PRIVATE KEY"], str(pem_blocks(data["tls.key"])))
        text = self.cert_text(data["tls.crt"])
        self.check("tls.crt: one certificate, CA:TRUE, Certificate Sign, EC P-256",
                   pem_blocks(data["tls.crt"]) == [b"CERTIFICATE"] and "CA:TRUE" in text and "Certificate Sign" in text
                   and "prime256v1" in text, f"{len(pem_blocks(data['tls.crt']))} block(s)")
        self.check("ca.crt: the operator's root (the issuer's certificate), not tls.crt", data["ca.crt"] == self.root
                   and data["ca.crt"] != data["tls.crt"], self.x509(data["ca.crt"], "-subject"))
        ok, out = self.verify(data["tls.crt"], self.root)
        self.check("tls.crt verifies against the operator's root", ok, out)
        ok, out = self.verify(data["tls.crt"], data["tls.crt"])
        self.check("tls.crt alone is no anchor for a strict verifier (openssl without -partial_chain)", not ok,
                   out.splitlines()[-1] if out else "")

    def key_headers(self):
        """The PEM header of tls.key for each algorithm and encoding."""
        cases = [("ECDSA", 256, "PKCS1"), ("ECDSA", 256, "PKCS8"), ("RSA", 2048, "PKCS1"), ("RSA", 2048, "PKCS8")]
        names = {}
        for algorithm, size, encoding in cases:
            name = f"probe-{algorithm.lower()}-{encoding.lower()}"
            names[name] = (algorithm, size, encoding)
            self.apply(kubewarden_ca_certificate(name=name, secret=name, algorithm=algorithm, size=size,
                                                 encoding=encoding))
        self.probes = {}
        for name, (algorithm, size, encoding) in names.items():
            self.wait_ready(NS, name)
            data = self.secret_data(NS, name)
            self.probes[(algorithm, encoding)] = data
            headers = [h.decode() for h in pem_blocks(data["tls.key"])]
            want = {("ECDSA", "PKCS1"): "EC PRIVATE KEY", ("RSA", "PKCS1"): "RSA PRIVATE KEY"}.get(
                (algorithm, encoding), "PRIVATE KEY")
            self.check(f"privateKey {algorithm} {size} encoding {encoding}: tls.key is `{want}`", headers == [want],
                       str(headers))

    def copy(self, label="copy"):
        """The documented copy step, run as documented (kubectl get | kubectl apply)."""
        get = self.kubectl("-n", NS, "get", "secret", SOURCE_SECRET, "-o", f"go-template={COPY_TEMPLATE}")
        if get.returncode != 0:
            raise RuntimeError(f"{label}: kubectl get: {get.stderr}")
        done = self.kubectl("apply", "--server-side", "--field-manager=kubewarden-ca-copy", "--force-conflicts",
                            "-f", "-", input=get.stdout)
        if done.returncode != 0:
            raise RuntimeError(f"{label}: kubectl apply: {done.stderr}")
        return self.secret_data(NS, CA_SECRET)

    def first_copy(self):
        """Before the controller's install: kubewarden-ca made by the copy step."""
        data = self.copy("first copy")
        self.ca_crt, self.ca_key = data["ca.crt"], data["ca.key"]
        self.check("copy: kubewarden-ca has ca.crt = cert-manager's tls.crt, ca.key = its tls.key",
                   data.get("ca.crt") == self.source["tls.crt"] and data.get("ca.key") == self.source["tls.key"],
                   f"keys {sorted(data)}")
        s = self.secret(NS, CA_SECRET)
        self.check("copy: kubewarden-ca is type Opaque, as the chart's (a kubernetes.io/tls Secret would need "
                   "tls.crt and tls.key)", s.get("type") == "Opaque", str(s.get("type")))
        # The documented ownership metadata for Helm's adoption, then the
        # copy once more (as after a renewal): the metadata must survive it.
        for cmd in (["label", "secret", CA_SECRET, "app.kubernetes.io/managed-by=Helm"],
                    ["annotate", "secret", CA_SECRET, "meta.helm.sh/release-name=admission-controller",
                     "meta.helm.sh/release-namespace=kubewarden"]):
            done = self.kubectl("-n", NS, *cmd)
            if done.returncode != 0:
                raise RuntimeError(f"kubectl {cmd[0]}: {done.stderr}")
        self.copy("copy after adoption")
        meta = self.secret(NS, CA_SECRET)["metadata"]
        self.check("copy again after the Helm labels and annotations: they stay",
                   (meta.get("labels") or {}).get("app.kubernetes.io/managed-by") == "Helm"
                   and (meta.get("annotations") or {}).get("meta.helm.sh/release-name") == "admission-controller"
                   and (meta.get("annotations") or {}).get("meta.helm.sh/release-namespace") == "kubewarden",
                   f"labels {meta.get('labels')}")

    def direct_target(self):
        """A Certificate whose secretName is kubewarden-ca itself, against a
        kubewarden-ca as the chart makes it (Opaque, ca.crt and ca.key), in a
        namespace of its own so that the copied one stays untouched."""
        ns = "direct-target"
        self.cp.ensure_namespace(ns)
        for cmd in (["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "chart-ca.key"],
                    ["req", "-x509", "-new", "-key", "chart-ca.key", "-out", "chart-ca.crt", "-days", "3650",
                     "-subj", "/CN=kubewarden-controller-ca"]):
            done = self.openssl(*cmd)
            if done.returncode != 0:
                raise RuntimeError(done.stderr)
        chart = {"ca.crt": (self.folder / "chart-ca.crt").read_bytes(), "ca.key": (self.folder / "chart-ca.key").read_bytes()}
        self.apply({"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                    "metadata": {"name": CA_SECRET, "namespace": ns},
                    "data": {k: base64.b64encode(v).decode() for k, v in chart.items()}})
        cert = kubewarden_ca_certificate(name="direct", secret=CA_SECRET)
        cert["metadata"]["namespace"] = ns
        self.apply(cert)
        # Either it becomes Ready or, after 30 s, cert-manager's conditions,
        # events and log say why not.
        deadline = time.monotonic() + 30
        while self.condition(ns, "direct").get("status") != "True" and time.monotonic() < deadline:
            time.sleep(0.3)
        cond = self.condition(ns, "direct")
        issuing = self.condition(ns, "direct", "Issuing")
        s = self.secret(ns, CA_SECRET)
        data = {k: b64d(v) for k, v in (s.get("data") or {}).items()}
        events = self.kubectl("-n", ns, "get", "events", "-o", "json")
        messages = sorted({e.get("message", "") for e in json.loads(events.stdout or "{}").get("items", [])
                           if e.get("type") == "Warning"})
        log = self.procs["cert-manager-controller"][1].read_text(errors="replace")
        errors = sorted({m.group(0)[:220] for m in re.finditer(r"[^\n]*immutable[^\n]*|[^\n]*kubewarden-ca[^\n]*error[^\n]*", log)
                         if "direct-target" in m.group(0)})
        self.direct = {"ready": cond, "issuing": issuing, "keys": sorted(data), "type": s.get("type"),
                       "warnings": messages, "log": errors[:3]}
        self.note(f"direct target: Ready={cond.get('status')} ({cond.get('reason')}: {cond.get('message', '')[:160]}); "
                  f"Issuing={issuing.get('status')} ({issuing.get('reason')}); Secret type {s.get('type')}, keys {sorted(data)}")
        for m in messages[:3]:
            self.note(f"direct target: Warning event: {m[:240]}")
        for m in errors[:2]:
            self.note(f"direct target: controller log: {m}")
        unchanged = data.get("ca.crt") == chart["ca.crt"] and data.get("ca.key") == chart["ca.key"]
        if cond.get("status") == "True":
            mismatch = data.get("ca.crt") != data.get("tls.crt")
            self.check("direct target: cert-manager writes tls.crt, tls.key and ca.crt into kubewarden-ca; ca.crt "
                       "becomes the issuer's root, ca.key stays the old key (a pair that does not match)",
                       mismatch and data.get("ca.key") == chart["ca.key"], f"keys {sorted(data)}")
        else:
            self.check("direct target: cert-manager does not issue into the chart's Opaque kubewarden-ca "
                       "(a Secret's type is immutable); the Secret is left as it was",
                       unchanged and s.get("type") == "Opaque", f"keys {sorted(data)}, type {s.get('type')}")

    def kube_ovn_webhook(self):
        """Kube-OVN's chart objects: the cainjector fills the caBundle; then
        what deleting them leaves."""
        self.cp.ensure_namespace(KUBE_OVN_NS)
        started = time.monotonic()
        self.apply(*KUBE_OVN_WEBHOOK)
        self.wait_ready(KUBE_OVN_NS, "kube-ovn-webhook-serving-cert")
        secret = self.secret_data(KUBE_OVN_NS, "kube-ovn-webhook-secret")
        path = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/kube-ovn-webhook"

        def injected():
            vwc = self.get(path)
            bundle = b64d(vwc["webhooks"][0]["clientConfig"].get("caBundle"))
            return bundle if bundle else None
        bundle = self.wait("the cainjector's caBundle", injected, 60)
        self.check("cainjector: kube-ovn-webhook's caBundle = ca.crt of kube-ovn-webhook-secret (inject-ca-from)",
                   bundle == secret["ca.crt"], f"{time.monotonic() - started:.1f} s from apply")
        self.check("kube-ovn-webhook-secret: self-signed (ca.crt = tls.crt)", secret["ca.crt"] == secret["tls.crt"])
        s = self.secret(KUBE_OVN_NS, "kube-ovn-webhook-secret")
        crs = [c for c in (self.get(f"/apis/cert-manager.io/v1/namespaces/{KUBE_OVN_NS}/certificaterequests") or {})
               .get("items", []) if any(o.get("kind") == "Certificate" and o.get("name") == "kube-ovn-webhook-serving-cert"
                                        for o in c["metadata"].get("ownerReferences") or [])]
        # What `helm upgrade --set validatingWebhook.enabled=false` deletes:
        # every object its templates/webhook rendered.
        for kind, name in (("certificate", "kube-ovn-webhook-serving-cert"),
                           ("issuer", "kube-ovn-webhook-selfsigned-issuer")):
            self.kubectl("-n", KUBE_OVN_NS, "delete", kind, name, "--wait=true")
        self.kubectl("delete", "validatingwebhookconfiguration", "kube-ovn-webhook")
        time.sleep(2)
        left = self.secret(KUBE_OVN_NS, "kube-ovn-webhook-secret")
        owners = (left or {}).get("metadata", {}).get("ownerReferences")
        self.check("after the chart's objects are deleted, Secret kube-ovn-webhook-secret is still there, with no "
                   "ownerReferences (cert-manager's --enable-certificate-owner-ref is off by default): "
                   "garbage collection would not remove it either",
                   left is not None and not owners and s is not None, f"ownerReferences {owners}")
        self.check("its CertificateRequest names the Certificate as owner (kube-controller-manager's garbage "
                   "collector removes it in a cluster; none runs here)", len(crs) >= 1,
                   f"{len(crs)} CertificateRequest(s)")
        done = self.kubectl("-n", KUBE_OVN_NS, "delete", "secret", "kube-ovn-webhook-secret")
        self.check("cleanup: kubectl -n kube-system delete secret kube-ovn-webhook-secret", done.returncode == 0,
                   done.stdout.strip() or done.stderr.strip())

    # --- Kubewarden's controller -----------------------------------------------

    def controller_part(self):
        ControllerRun(self).run()


class ControllerRun:
    """Kubewarden's controller on the copied CA (the controller's helpers from e2e.harness.kubewarden, as test_controller uses them)."""

    def __init__(self, suite):
        self.s = suite

    def run(self):
        s = self.s
        s.cp.install_crds(files=KUBE_OVN_CRDS + KUBEWARDEN_CRDS)
        self.webhook_cert()
        self.start_controller()
        self.rollout = kubewarden.Rollout(s.api, NS).start()
        try:
            self.apply_deploy()
            self.wait_active()
            self.check_trust()
            self.renewal()
            self.bad_keys()
            self.direct_consequence()
        finally:
            self.rollout.stop()
            if self.rollout.errors:
                s.note(f"rollout errors: {self.rollout.errors[:3]}")

    # The controller's own webhook server certificate, signed with the copied
    # CA, as the chart signs it (genSignedCertWithKey with kubewarden-ca).
    def webhook_cert(self):
        s = self.s
        s.write("ca.crt", s.ca_crt)
        s.write("ca.key", s.ca_key)
        kubewarden.webhook_certificate(s.folder)
        self.webhook_ca = s.ca_crt
        self.tls_crt, self.tls_key = (s.folder / "tls.crt").read_bytes(), (s.folder / "tls.key").read_bytes()
        s.apply({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "kubewarden-webhook-server-cert",
                                                                    "namespace": NS},
                 "data": {"tls.crt": base64.b64encode(self.tls_crt).decode(),
                          "tls.key": base64.b64encode(self.tls_key).decode()}})

    def start_controller(self):
        s = self.s
        if not hasattr(self, "webhook_port"):
            self.webhook_port, self.probe_port = free_port(), free_port()
        started = time.monotonic()
        # The chart renders its own webhooks' caBundle from kubewarden-ca at
        # install (and at each `helm upgrade`): the CA that signed tls.crt.
        kubewarden.start_controller(s, s.args.controller, self.tls_crt, self.tls_key, self.webhook_ca,
                                    self.webhook_port, self.probe_port)
        return time.monotonic() - started

    def restart_controller(self):
        self.s.stop_process("kubewarden-controller")
        return self.start_controller()

    def apply_deploy(self):
        s = self.s
        done = s.apply_deploy(retry_s=30, ip_objects=False)
        s.check("deploy/ applied through the controller's own webhooks: the API server verified the controller's "
                "certificate against a caBundle holding only the copied intermediate", done.returncode == 0,
                done.stderr.strip()[:400])
        if done.returncode != 0:
            raise RuntimeError("deploy/ not applied")
        self.policies = load_cluster_admission_policies([DEPLOY / "cluster-admission-policies.yaml"])

    def webhook_bundles(self):
        out = {}
        for p in self.policies:
            vwc = self.s.get(kubewarden.webhook_path(p))
            if vwc:
                out[policy_id(p)] = b64d(vwc["webhooks"][0]["clientConfig"].get("caBundle"))
        return out

    def wait_active(self):
        s = self.s
        started = time.monotonic()
        s.wait("every policy's webhook", lambda: len(self.webhook_bundles()) == len(self.policies), 120)
        s.note(f"controller: every policy's webhook written in {time.monotonic() - started:.1f} s")

    def ps_secret(self):
        return self.s.secret_data(NS, "policy-server-kube-ovn")

    def check_trust(self):
        s = self.s
        bundles = self.webhook_bundles()
        s.check("every policy webhook's caBundle = the copied ca.crt (the cert-manager-issued intermediate)",
                all(b == s.ca_crt for b in bundles.values()), f"{len(bundles)} webhooks")
        leaf = self.ps_secret()["tls.crt"]
        host = "policy-server-kube-ovn.kubewarden.svc"
        ok, out = s.verify(leaf, s.root, untrusted=s.ca_crt, hostname=host)
        s.check("Secret policy-server-kube-ovn: its certificate chains to the operator's root through the copied CA",
                ok, out)
        ok, out = s.verify(leaf, s.ca_crt, partial=True, hostname=host)
        s.check(f"and verifies for {host} against the webhooks' caBundle alone (the intermediate as anchor, as "
                "the API server's Go verifier takes it)", ok, out)
        s.note(f"policy-server-kube-ovn certificate: {s.x509(leaf, '-issuer', '-enddate')}")

    def touch_policy_server(self, value):
        done = self.s.kubectl("annotate", "policyserver", "kube-ovn", f"kop-e2e/touch={value}", "--overwrite")
        if done.returncode != 0:
            raise RuntimeError(f"kubectl annotate policyserver: {done.stderr.strip()}")

    def cert_condition(self):
        ps = self.s.get("/apis/policies.kubewarden.io/v1/policyservers/kube-ovn") or {}
        return next((c for c in (ps.get("status") or {}).get("conditions") or []
                     if c["type"] == "CertSecretReconciled"), {})

    def renewal(self):
        """Renew the Certificate (as `cmctl renew` does), copy, and see what follows."""
        s = self.s
        for rotation in ("Never", "Always"):
            old_leaf = self.ps_secret()["tls.crt"]
            old_ca = s.secret_data(NS, CA_SECRET)["ca.crt"]
            cert = s.certificate(NS, SOURCE_SECRET)
            cert["spec"]["privateKey"]["rotationPolicy"] = rotation
            s.apply({k: cert[k] for k in ("apiVersion", "kind", "spec")} | {
                "metadata": {"name": SOURCE_SECRET, "namespace": NS}})
            revision = (s.certificate(NS, SOURCE_SECRET)["status"].get("revision") or 0) + 1
            self.renew(SOURCE_SECRET)
            s.wait_ready(NS, SOURCE_SECRET, revision=revision)
            source = s.secret_data(NS, SOURCE_SECRET)
            same_key = source["tls.key"] == s.source["tls.key"]
            s.check(f"renewal (rotationPolicy {rotation}): a new CA certificate, "
                    f"{'the same' if rotation == 'Never' else 'a new'} private key",
                    source["tls.crt"] != old_ca and same_key == (rotation == "Never"),
                    f"revision {revision}, key {'kept' if same_key else 'new'}")
            s.source = source
            copied = s.copy(f"re-copy ({rotation})")
            s.ca_crt = copied["ca.crt"]
            time.sleep(5)
            bundles = self.webhook_bundles()
            s.check(f"{rotation}: 5 s after the re-copy, the webhooks still hold the previous CA (the controller "
                    "watches no Secret)", all(b == old_ca for b in bundles.values()),
                    f"{sum(b == old_ca for b in bundles.values())} of {len(bundles)} old")
            restart = self.restart_controller()
            s.wait("caBundle after restart", lambda: all(b == s.ca_crt for b in self.webhook_bundles().values()), 60)
            s.check(f"{rotation}: after a controller restart, every webhook's caBundle is the new CA", True,
                    f"restart {restart:.1f} s")
            leaf = self.ps_secret()["tls.crt"]
            s.check(f"{rotation}: the restart leaves the PolicyServer's certificate as it was (re-issued only when "
                    "missing or on the 12 h ticker)", leaf == old_leaf)
            ok, out = s.verify(leaf, s.ca_crt, partial=True, hostname="policy-server-kube-ovn.kubewarden.svc")
            if rotation == "Never":
                s.check("Never: the old PolicyServer certificate verifies against the renewed CA (same key, same "
                        "subject): no gap", ok, out)
            else:
                s.check("Always: the old PolicyServer certificate does NOT verify against the new caBundle (the API "
                        "server would refuse the policy-server until its certificate is re-issued)", not ok,
                        out.splitlines()[-1] if out else "")
                s.kubectl("-n", NS, "delete", "secret", "policy-server-kube-ovn")
                time.sleep(3)
                missing = s.secret(NS, "policy-server-kube-ovn") is None
                s.check("Always: deleting Secret policy-server-kube-ovn alone does not bring it back (the "
                        "PolicyServer controller does not watch Secrets)", missing)
                started = time.monotonic()
                self.touch_policy_server("renewal")
                s.wait("policy-server secret", lambda: s.secret(NS, "policy-server-kube-ovn"), 60)
                leaf = self.ps_secret()["tls.crt"]
                ok, out = s.verify(leaf, s.ca_crt, partial=True, hostname="policy-server-kube-ovn.kubewarden.svc")
                s.check("Always: a change to the PolicyServer re-creates it, signed by the new CA", ok,
                        f"{time.monotonic() - started:.1f} s; {out}")

    def renew(self, name):
        """What `cmctl renew` does: condition Issuing=True, reason ManuallyTriggered."""
        s = self.s
        cert = s.certificate(NS, name)
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        conds = [c for c in cert["status"].get("conditions") or [] if c["type"] != "Issuing"]
        conds.append({"type": "Issuing", "status": "True", "reason": "ManuallyTriggered",
                      "message": "Certificate re-issuance manually triggered", "lastTransitionTime": now,
                      "observedGeneration": cert["metadata"]["generation"]})
        code, body, _ = s.api.request("PATCH", f"/apis/cert-manager.io/v1/namespaces/{NS}/certificates/{name}/status",
                                      {"status": {"conditions": conds}},
                                      content_type="application/merge-patch+json")
        if code != 200:
            raise RuntimeError(f"renew {name}: {code} {body}")

    def with_ca(self, label, crt, key):
        """kubewarden-ca set to (crt, key); the PolicyServer's Secret deleted and
        the PolicyServer touched: what the controller then does (its
        condition, the Secret, the errors it logs meanwhile)."""
        s = self.s
        mark = len(s.procs["kubewarden-controller"][1].read_text(errors="replace"))
        s.apply({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": CA_SECRET, "namespace": NS},
                 "data": {"ca.crt": base64.b64encode(crt).decode(), "ca.key": base64.b64encode(key).decode()}})
        s.kubectl("-n", NS, "delete", "secret", "policy-server-kube-ovn")
        self.touch_policy_server(label)
        time.sleep(6)
        cond = self.cert_condition()
        secret = s.secret(NS, "policy-server-kube-ovn")
        data = {k: b64d(v) for k, v in ((secret or {}).get("data") or {}).items()}
        errors = []
        for line in s.procs["kubewarden-controller"][1].read_text(errors="replace")[mark:].splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if entry.get("level") == "error" and entry.get("controller") == "policyserver":
                errors.append(entry.get("error", "").replace("\n", "; ").replace("\n", "; "))
        return cond, data, errors

    def bad_keys(self):
        s = self.s
        good = (s.ca_crt, s.secret_data(NS, CA_SECRET)["ca.key"])
        for (algorithm, encoding), label in ((("RSA", "PKCS1"), "rsa"), (("ECDSA", "PKCS8"), "pkcs8")):
            data = s.probes[(algorithm, encoding)]
            cond, secret, errors = self.with_ca(label, data["tls.crt"], data["tls.key"])
            last = errors[-1].replace("\n", "; ") if errors else ""
            s.note(f"{algorithm} {encoding} CA: {len(errors)} PolicyServer reconcile errors in 6 s, the last: {last}; "
                   f"condition CertSecretReconciled stays {cond.get('status')}")
            s.check(f"{algorithm} CA, {encoding} key ({pem_blocks(data['tls.key'])[0].decode()}): the controller "
                    "cannot sign the PolicyServer's certificate (x509.ParseECPrivateKey), retries, and no Secret "
                    "policy-server-kube-ovn exists", not secret.get("tls.crt") and errors
                    and all("error parsing ca root private key" in e for e in errors), last[:200])
        cond, secret, errors = self.with_ca("restored", *good)
        ok, out = s.verify(secret.get("tls.crt", b""), good[0], partial=True)
        s.check("the copied ECDSA/PKCS1 CA put back: the PolicyServer's certificate is issued again",
                ok and not errors, out)

    def direct_consequence(self):
        """kubewarden-ca as the directly targeted Certificate left it (ca.crt =
        the issuer's root, ca.key = the chart's old key): what the controller
        signs, and whether it verifies against the caBundle it writes."""
        s = self.s
        d = s.secret_data("direct-target", CA_SECRET)
        if not d.get("tls.crt"):
            s.note("direct target: cert-manager did not write kubewarden-ca, so the controller sees no change")
            return
        cond, secret, errors = self.with_ca("direct", d["ca.crt"], d["ca.key"])
        last = errors[-1] if errors else ""
        s.note(f"direct target in kubewarden-ca: {len(errors)} PolicyServer reconcile errors in 6 s, the last: {last}")
        s.check("direct target: with ca.crt = the issuer's root and ca.key = the chart's old key, the controller "
                "cannot sign the PolicyServer's certificate (x509: provided PrivateKey doesn't match parent's "
                "PublicKey); no Secret policy-server-kube-ovn",
                not secret.get("tls.crt") and any("doesn't match parent's PublicKey" in e for e in errors), last[:200])
        self.restart_controller()
        s.wait("caBundle after restart", lambda: all(b == d["ca.crt"] for b in self.webhook_bundles().values()), 60)
        s.check("direct target: after a restart every policy webhook's caBundle is the operator's root (ca.crt as "
                "cert-manager wrote it), which signed no certificate the policy-server could hold", True)
        good = (s.ca_crt, s.source["tls.key"])
        self.with_ca("restored-2", *good)
        self.restart_controller()


pytestmark = pytest.mark.incremental

# The suite's settings (`--setting NAME=VALUE`).
SETTINGS = {
    "certmanager_bin": str(ROOT / "target/certmanager/bin"),  # cert-manager-controller and -cainjector
    "keep": False,  # keep the temporary folder
}

STEPS = ["operator_pki", "kubewarden_ca", "key_headers", "first_copy", "direct_target", "kube_ovn_webhook"]


@pytest.fixture(scope="module")
def certs(settings):
    """The control plane, cert-manager's CRDs and cert-manager running, for the steps in order."""
    args = types.SimpleNamespace(**settings(SETTINGS), controller=shutil.which("kubewarden-controller"))
    crd_dir, version = module_dir()
    crds = sorted((crd_dir / "deploy" / "crds").glob("*.yaml"))
    folder = Path(tempfile.mkdtemp(prefix="kop-certs-e2e-"))
    started = time.monotonic()
    with ControlPlane(keep=args.keep) as cp:
        suite = Suite(args, cp, folder)
        try:
            suite.note(f"cert-manager {version}: CRDs from {len(crds)} files of its module (GOMODCACHE)")
            suite.cp.install_crds(files=crds)
            suite.start_cert_manager()
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
def test_cert_manager(certs, counted, step):
    getattr(counted(certs), step)()


@pytest.mark.requires("kubewarden-controller")
def test_controller(certs, counted):
    counted(certs).controller_part()
