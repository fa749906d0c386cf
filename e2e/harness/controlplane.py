"""A real Kubernetes control plane on 127.0.0.1: etcd and kube-apiserver.

The binaries come from `make cluster-bin` (e2e/cluster/build.sh): Kubernetes
v1.36.3 and etcd v3.6.8, in target/cluster/bin/ unless KUBE_BIN_DIR names
another folder (or ETCD_BIN, KUBE_APISERVER_BIN, KUBECTL_BIN name each one).

    with ControlPlane() as cp:
        cp.install_crds()
        cp.kubectl("get", "subnets")
        cp.service_account_kubeconfig("kubewarden", "policy-server", "/tmp/kc")

Everything lives in one temporary folder (etcd's data, certificates made with
openssl, logs, the admin kubeconfig) that stop() removes with the processes;
stop() runs on leaving the `with` block, on an exception, Ctrl-C or SIGTERM.
The children also get SIGKILL if the thread that started them dies, so a
killed test leaves no server behind; the next start removes its folder.

No controller-manager runs: namespaces are not finalized when deleted, and
a new namespace gets no `default` ServiceAccount (service_account_kubeconfig
creates the one it needs). Only the standard library and PyYAML are used.
"""

import base64
import json
import os
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import yaml

from . import ROOT, SHARED
from .certificates import openssl
from .processes import die_with_parent, free_port, log_tail, stop_process
# Kube-OVN's own, and Multus' NetworkAttachmentDefinition, which its
# controller reads for a pod's attachments (I17).
KUBE_OVN_CRDS = [SHARED / "kube-ovn/crds/kube-ovn-crd.yaml", SHARED / "multus/crds/network-attachment-definitions.yaml"]
KUBEWARDEN_CRDS = sorted((SHARED / "kubewarden/crds").glob("*.yaml"))
SERVICE_CIDR = "10.96.0.0/16"
FOLDER_PREFIX = "kop-controlplane-"


def bin_path(name, env):
    """A binary's path: $<env>, else $KUBE_BIN_DIR/<name>, else target/cluster/bin/<name>."""
    if os.environ.get(env):
        return Path(os.environ[env])
    return Path(os.environ.get("KUBE_BIN_DIR", ROOT / "target/cluster/bin")) / name


class ControlPlaneError(RuntimeError):
    pass


class ControlPlane:
    """etcd + kube-apiserver on free loopback ports, with an admin kubeconfig.

    Attributes once started: `url` (https://127.0.0.1:PORT), `kubeconfig`
    (admin, O=system:masters), `dir` (the temporary folder), `ca_file`.
    """

    def __init__(self, verbose=False, keep=False, apiserver_args=(), start_timeout=120):
        self.etcd_bin = bin_path("etcd", "ETCD_BIN")
        self.apiserver_bin = bin_path("kube-apiserver", "KUBE_APISERVER_BIN")
        self.kubectl_bin = bin_path("kubectl", "KUBECTL_BIN")
        self.verbose = verbose
        self.keep = keep  # keep the folder (logs) after stop(), for debugging
        self.apiserver_args = list(apiserver_args)
        self.start_timeout = start_timeout
        self.dir = None
        self.ca_file = None
        self.url = None
        self.kubeconfig = None
        self.procs = {}
        self._logs = []
        self._old_sigterm = None

    # -- lifecycle ---------------------------------------------------------

    def __enter__(self):
        self._trap_sigterm()
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def _trap_sigterm(self):
        """SIGTERM raises SystemExit, so that `with` blocks clean up (main thread only)."""
        try:
            if signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None):
                self._old_sigterm = signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
        except ValueError:  # not the main thread
            pass

    def start(self):
        """Starts etcd, then kube-apiserver, and waits until /readyz answers ok."""
        for b in (self.etcd_bin, self.apiserver_bin, self.kubectl_bin):
            if not os.access(b, os.X_OK):
                raise ControlPlaneError(f"{b} not found: run `make cluster-bin` (or set KUBE_BIN_DIR)")
        _remove_stale_folders()
        self.dir = Path(tempfile.mkdtemp(prefix=FOLDER_PREFIX))
        (self.dir / "owner.pid").write_text(str(os.getpid()))
        self._certificates()
        for attempt in range(3):  # a port picked free may be taken before it is bound
            try:
                self._start_etcd()
                self._start_apiserver()
                break
            except ControlPlaneError as e:
                if "address already in use" not in str(e) or attempt == 2:
                    raise
                self._stop_processes()
        self._write_admin_kubeconfig()
        return self

    def stop(self):
        """Stops kube-apiserver and etcd and removes the temporary folder."""
        self._stop_processes()
        for f in self._logs:
            f.close()
        self._logs = []
        if self.dir is not None and not self.keep:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None
        if self._old_sigterm is not None:
            try:
                signal.signal(signal.SIGTERM, self._old_sigterm)
            except ValueError:
                pass
            self._old_sigterm = None

    def _stop_processes(self):
        for name in ("kube-apiserver", "etcd"):  # the API server first: it needs etcd to stop cleanly
            stop_process(self.procs.pop(name, None), timeout=15)

    def _spawn(self, name, args):
        log = open(self.dir / f"{name}.log", "ab")
        self._logs.append(log)
        if self.verbose:
            print(f"controlplane: {' '.join(map(str, args))}", file=sys.stderr)
        self.procs[name] = subprocess.Popen(
            [str(a) for a in args],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=self.dir,
            start_new_session=True,  # Ctrl-C reaches Python, which stops them in order
            preexec_fn=die_with_parent,
        )
        return self.procs[name]

    def log_tail(self, name, lines=30):
        """The last lines of a component's log ("etcd" or "kube-apiserver")."""
        return log_tail(self.dir / f"{name}.log", lines) if self.dir else ""

    def _wait(self, name, probe, timeout):
        """Polls probe() until it returns true; fails early if the process died."""
        proc = self.procs[name]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise ControlPlaneError(f"{name} exited with {proc.returncode}:\n{self.log_tail(name)}")
            if probe():
                return
            time.sleep(0.2)
        raise ControlPlaneError(f"{name} not ready after {timeout} s:\n{self.log_tail(name)}")

    # -- certificates ------------------------------------------------------

    def _openssl(self, *args):
        openssl(self.dir, *args, check=True)

    def _signed(self, name, subject, extensions):
        """An EC key and a certificate for it signed by the CA."""
        self._openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                      "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", subject)
        (self.dir / f"{name}.ext").write_text("\n".join(extensions) + "\n")
        self._openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                      "-days", "2", "-sha256", "-extfile", f"{name}.ext", "-out", f"{name}.crt")

    def _certificates(self):
        self._openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                      "-keyout", "ca.key", "-out", "ca.crt", "-days", "2", "-subj", "/CN=kop-e2e-ca",
                      "-addext", "basicConstraints=critical,CA:TRUE",
                      "-addext", "keyUsage=critical,keyCertSign,cRLSign")
        self._signed("apiserver", "/CN=kube-apiserver", [
            "basicConstraints=CA:FALSE",
            "keyUsage=critical,digitalSignature,keyEncipherment",
            "extendedKeyUsage=serverAuth",
            "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,"
            "DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local",
        ])
        self._signed("admin", "/O=system:masters/CN=kubernetes-admin", [
            "basicConstraints=CA:FALSE",
            "keyUsage=critical,digitalSignature,keyEncipherment",
            "extendedKeyUsage=clientAuth",
        ])
        self._openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "sa.key")
        self._openssl("pkey", "-in", "sa.key", "-pubout", "-out", "sa.pub")
        self.ca_file = self.dir / "ca.crt"

    # -- etcd and kube-apiserver --------------------------------------------

    def _start_etcd(self):
        client, peer = free_port(), free_port()
        self.etcd_url = f"http://127.0.0.1:{client}"
        shutil.rmtree(self.dir / "etcd-data", ignore_errors=True)
        self._spawn("etcd", [
            self.etcd_bin,
            "--name", "e2e",
            "--data-dir", self.dir / "etcd-data",
            "--listen-client-urls", self.etcd_url,
            "--advertise-client-urls", self.etcd_url,
            "--listen-peer-urls", f"http://127.0.0.1:{peer}",
            "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
            "--initial-cluster", f"e2e=http://127.0.0.1:{peer}",
            "--log-level", "warn",
            "--unsafe-no-fsync",  # a throwaway store: no need to wait for the disk
        ])

        def healthy():
            try:
                with urllib.request.urlopen(self.etcd_url + "/health", timeout=2) as r:
                    return json.load(r).get("health") == "true"
            except (OSError, ValueError):
                return False

        self._wait("etcd", healthy, self.start_timeout)

    def _start_apiserver(self):
        port = free_port()
        self.url = f"https://127.0.0.1:{port}"
        d = self.dir
        self._spawn("kube-apiserver", [
            self.apiserver_bin,
            "--etcd-servers", self.etcd_url,
            "--bind-address", "127.0.0.1",
            "--advertise-address", "127.0.0.1",
            "--secure-port", port,
            "--tls-cert-file", d / "apiserver.crt",
            "--tls-private-key-file", d / "apiserver.key",
            "--client-ca-file", d / "ca.crt",
            "--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
            "--service-account-key-file", d / "sa.pub",
            "--service-account-signing-key-file", d / "sa.key",
            "--service-cluster-ip-range", SERVICE_CIDR,
            "--authorization-mode", "RBAC",
            # No kubelet answers for 127.0.0.1: keep the `kubernetes`
            # Service's endpoints out of it.
            "--endpoint-reconciler-type", "none",
            "--profiling=false",
            *self.apiserver_args,
        ])
        ctx = self.ssl_context()

        def ready():
            try:
                with urllib.request.urlopen(self.url + "/readyz", timeout=5, context=ctx) as r:
                    return r.status == 200
            except (OSError, ValueError):
                return False

        try:
            self._wait("kube-apiserver", ready, self.start_timeout)
        except ControlPlaneError as e:
            if "address already in use" in self.log_tail("kube-apiserver", 200):
                raise ControlPlaneError(f"address already in use: {e}") from None
            raise

    def ssl_context(self, client_cert=True):
        """TLS trusting the CA, presenting the admin certificate unless told not to."""
        ctx = ssl.create_default_context(cafile=str(self.dir / "ca.crt"))
        if client_cert:
            ctx.load_cert_chain(str(self.dir / "admin.crt"), str(self.dir / "admin.key"))
        return ctx

    def _write_admin_kubeconfig(self):
        self.kubeconfig = self.dir / "admin.kubeconfig"
        self._write_kubeconfig(self.kubeconfig, "admin", {
            "client-certificate-data": _b64(self.dir / "admin.crt"),
            "client-key-data": _b64(self.dir / "admin.key"),
        })

    def _write_kubeconfig(self, path, user, credentials):
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "e2e", "cluster": {
                "server": self.url,
                "certificate-authority-data": _b64(self.dir / "ca.crt"),
            }}],
            "users": [{"name": user, "user": credentials}],
            "contexts": [{"name": user, "context": {"cluster": "e2e", "user": user}}],
            "current-context": user,
        }
        Path(path).write_text(yaml.safe_dump(config, sort_keys=False))
        os.chmod(path, 0o600)

    # -- clients -----------------------------------------------------------

    def kubectl(self, *args, input=None, as_user=None, check=True, kubeconfig=None, cwd=None, timeout=120):
        """Runs kubectl against this server (admin unless `kubeconfig` or `as_user`), in `cwd`.

        Returns the CompletedProcess (text); with check, a non-zero exit
        raises ControlPlaneError carrying stderr.
        """
        cmd = [str(self.kubectl_bin), "--kubeconfig", str(kubeconfig or self.kubeconfig),
               "--cache-dir", str(self.dir / "kubectl-cache")]
        if as_user:
            cmd.append(f"--as={as_user}")
        cmd += [str(a) for a in args]
        r = subprocess.run(cmd, input=input, capture_output=True, text=True, cwd=cwd, timeout=timeout)
        if check and r.returncode != 0:
            raise ControlPlaneError(f"kubectl {' '.join(map(str, args))}: exit {r.returncode}: {r.stderr.strip()}")
        return r

    def request(self, path, method="GET", body=None, token=None, timeout=30):
        """One HTTP request: (status, parsed JSON body). Admin unless a bearer token is given."""
        headers = {"Accept": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        ctx = self.ssl_context(client_cert=token is None)
        try:
            with urllib.request.urlopen(req, timeout=timeout, context=ctx) as r:
                return r.status, json.loads(r.read() or b"null")
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                return e.code, json.loads(raw)
            except ValueError:
                return e.code, raw.decode(errors="replace")

    def install_crds(self, files=None, timeout=120):
        """Applies the Kube-OVN and Kubewarden CRDs (server-side) and waits until each is served."""
        files = [Path(f) for f in (files or KUBE_OVN_CRDS + KUBEWARDEN_CRDS)]
        crds = []
        for f in files:
            if not f.exists():
                raise ControlPlaneError(f"{f} not found (SHARED_DIR names the shared folder)")
            crds += [d for d in yaml.safe_load_all(f.read_text()) if d and d.get("kind") == "CustomResourceDefinition"]
        args = ["apply", "--server-side", "--force-conflicts"]
        for f in files:
            args += ["-f", f]
        self.kubectl(*args, timeout=timeout)
        names = [c["metadata"]["name"] for c in crds]
        self.kubectl("wait", "--for=condition=Established", f"--timeout={timeout}s",
                     *[f"crd/{n}" for n in names], timeout=timeout + 10)
        # Established precedes discovery by a moment, and a kind's first
        # LISTs are 429 "storage is (re)initializing" while its watch cache
        # fills: wait until every served version is listed and lists.
        deadline = time.monotonic() + timeout
        for crd in crds:
            group, plural = crd["spec"]["group"], crd["spec"]["names"]["plural"]
            for v in crd["spec"]["versions"]:
                if not v.get("served"):
                    continue
                while True:
                    code, body = self.request(f"/apis/{group}/{v['name']}")
                    if code == 200 and any(r["name"] == plural for r in body.get("resources", [])):
                        code, body = self.request(f"/apis/{group}/{v['name']}/{plural}?limit=1")
                        if code == 200:
                            break
                    if time.monotonic() > deadline:
                        raise ControlPlaneError(f"{plural}.{group}/{v['name']} not served after {timeout} s: {code}")
                    time.sleep(0.2)
        return names

    def ensure_namespace(self, namespace):
        """Creates a namespace (and its `default` ServiceAccount) unless it exists."""
        manifest = {"apiVersion": "v1", "kind": "List", "items": [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default", "namespace": namespace}},
        ]}
        self.kubectl("apply", "--server-side", "-f", "-", input=json.dumps(manifest))

    def token(self, namespace, name, duration="8760h"):
        """A ServiceAccount token (TokenRequest); creates the account if missing."""
        self.ensure_namespace(namespace)
        self.kubectl("apply", "--server-side", "-f", "-", input=json.dumps(
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name, "namespace": namespace}}))
        return self.kubectl("create", "token", name, "-n", namespace, f"--duration={duration}").stdout.strip()

    def service_account_kubeconfig(self, namespace, name, path, duration="8760h"):
        """Writes a kubeconfig authenticating as ServiceAccount namespace/name with a token; returns path."""
        self._write_kubeconfig(path, f"{namespace}-{name}", {"token": self.token(namespace, name, duration)})
        return Path(path)


def _remove_stale_folders():
    """Removes the folders of control planes whose Python process was killed."""
    for folder in Path(tempfile.gettempdir()).glob(FOLDER_PREFIX + "*"):
        try:
            pid = int((folder / "owner.pid").read_text())
        except (OSError, ValueError):
            continue
        if not Path(f"/proc/{pid}").exists():
            shutil.rmtree(folder, ignore_errors=True)


def _b64(path):
    return base64.b64encode(Path(path).read_bytes()).decode()


if __name__ == "__main__":
    # Alone (python3 -m e2e.harness.controlplane): start a control plane, print how to reach it, stop on Ctrl-C.
    with ControlPlane(verbose=True) as cp:
        cp.install_crds()
        print(f"API server {cp.url}\nexport KUBECONFIG={cp.kubeconfig}\n(Ctrl-C stops it)", flush=True)
        try:
            while all(p.poll() is None for p in cp.procs.values()):
                time.sleep(1)
        except KeyboardInterrupt:
            pass
