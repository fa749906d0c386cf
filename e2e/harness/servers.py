"""policy-server, or this repository's kop-serve (kop-serve/, the
same command line), serving deploy/'s policies over TLS on this machine."""

import json
import os
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import yaml

from . import DEPLOY
from .apiserver import StandIn
from .certificates import self_signed
from .processes import die_with_parent, free_port, stop_process
from .webhooks import dump_policies_yml, load_cluster_admission_policies, policy_id, render_policies_yml


def deployed_env(path=DEPLOY / "policy-server.yaml"):
    """The environment deploy/'s PolicyServer gives policy-server (`spec.env`):
    the tests run it as shipped. A variable already set in the environment
    wins, so a measurement can set another value (TOKIO_WORKER_THREADS=2)."""
    for doc in yaml.safe_load_all(Path(path).read_text()):
        if doc and doc.get("kind") == "PolicyServer":
            env = {e["name"]: str(e["value"]) for e in doc["spec"].get("env") or [] if "value" in e}
            return {k: v for k, v in env.items() if k not in os.environ}
    return {}


def load_policies(paths, module):
    """policies.yml entries for the ClusterAdmissionPolicies of deploy/ files, as the
    Kubewarden controller writes them (e2e/harness/webhooks.py) but for the module, a
    local file; and each policy's rules, in document order, to route requests."""
    caps = load_cluster_admission_policies(paths)
    policies = render_policies_yml(caps, f"file://{module}")
    rules = {policy_id(c): c["spec"].get("rules") or [] for c in caps}
    return policies, rules


def route(request, rules):
    """The id of the policy whose rules match the request's resource and operation."""
    res = request["resource"]
    for pid, rs in rules.items():
        for r in rs:
            if (
                res.get("group", "") in r.get("apiGroups", [])
                and res.get("version") in r.get("apiVersions", [])
                and res.get("resource") in r.get("resources", [])
                and request["operation"] in r.get("operations", [])
            ):
                return pid
    return None


def wait_ready(proc, ready_port, tail, timeout=120, host="127.0.0.1"):
    """Until a policy-server (or kop-serve) answers its readiness probe (on
    its --addr, `host`); its log's tail if it exits or never does."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"policy-server exited {proc.returncode}: {tail()}")
        try:
            with urllib.request.urlopen(f"http://{host}:{ready_port}/readiness", timeout=1) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"policy-server not ready in {timeout} s: {tail()}")


def start_server(binary, folder, policies, cert, key, env, *, log, port=None, address="127.0.0.1", workers=2,
                 cwd=None, die_with_thread=False, timeout=120, extra_args=()):
    """policy-server or kop-serve on `address` with the policies.yml file `policies`, the
    certificate and the environment `env`, its output appended to `log`; once ready:
    (process, port). `die_with_thread`: killed when the thread that started it dies.
    `extra_args` follow the others (policy-server's --sources-path, --verification-path)."""
    port = port or free_port(address)
    ready = free_port(address)  # policy-server binds its readiness probe to --addr too
    with open(log, "a") as out:
        proc = subprocess.Popen(
            [
                str(binary), "--addr", address, "--port", str(port), "--readiness-probe-port", str(ready),
                "--policies", str(policies), "--cert-file", str(cert), "--key-file", str(key),
                "--policies-download-dir", str(folder), "--sigstore-cache-dir", str(folder / "sigstore"),
                "--workers", str(workers), "--log-no-color", *map(str, extra_args),
            ],
            stdout=out, stderr=subprocess.STDOUT, cwd=cwd, env=env,
            preexec_fn=die_with_parent if die_with_thread else None,
        )
    try:
        wait_ready(proc, ready, lambda: Path(log).read_text(errors="replace")[-3000:], timeout, host=address)
    except BaseException:
        stop_process(proc)
        raise
    return proc, port


class PolicyServer:
    """A policy-server process on its own ports, with its own stand-in."""

    def __init__(self, binary, folder, policies, cluster, cert, key, standin=None, workers=2, backtrace=True,
                 standin_tls=False, extra_args=()):
        self.folder = folder
        if standin is None:
            tls = (cert, key) if standin_tls else None
            standin = StandIn(cluster, tls=tls, token="kop-e2e-token" if standin_tls else None)
        self.standin = standin.start()
        kubeconfig = folder / "kubeconfig"
        self.standin.write_kubeconfig(kubeconfig)
        (folder / "policies.yml").write_text(dump_policies_yml(policies))
        # With RUST_BACKTRACE=1 a failed host call carries a backtrace:
        # messages must stay one line. Capturing one costs milliseconds, so
        # the benchmark turns it off.
        env = dict(os.environ, **deployed_env(), KUBECONFIG=str(kubeconfig), NO_COLOR="1",
                   RUST_BACKTRACE="1" if backtrace else "0")
        started = time.monotonic()
        self.log = folder / "policy-server.log"
        self.log.write_text("")
        try:
            self.proc, self.port = start_server(binary, folder, folder / "policies.yml", cert, key, env, log=self.log,
                                                workers=workers, cwd=folder, extra_args=extra_args)
        except BaseException:
            self.standin.stop()
            raise
        self.startup = time.monotonic() - started
        self.context = ssl.create_default_context(cafile=str(cert))

    def tail(self):
        return self.log.read_text(errors="replace")[-3000:]

    def review(self, pid, request):
        body = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}).encode()
        started = time.monotonic()
        status, answer = self.post(pid, body)
        if status != 200:
            raise RuntimeError(f"HTTP {status}: {answer}")
        return answer["response"], time.monotonic() - started

    def post(self, pid, body, content_type="application/json", timeout=60):
        """POSTs raw bytes to /validate/<pid>: the HTTP status and the JSON answer."""
        status, answer = self.send("POST", f"/validate/{pid}", body, content_type, timeout)
        return status, json.loads(answer or b"null")

    def send(self, method, path, body=None, content_type=None, timeout=60):
        """Any request: the HTTP status and the body."""
        headers = {"Content-Type": content_type} if content_type else {}
        req = urllib.request.Request(f"https://127.0.0.1:{self.port}{path}", data=body, method=method,
                                     headers=headers)
        try:
            with urllib.request.urlopen(req, context=self.context, timeout=timeout) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def stop(self):
        stop_process(self.proc)
        self.standin.stop()


class WebhookServer:
    """policy-server or kop-serve with deploy/'s policies, on one port for its whole life,
    reading the cluster of `kubeconfig` (a real API server)."""

    def __init__(self, binary, module, folder, kubeconfig, policies):
        self.binary, self.module, self.folder, self.kubeconfig = binary, module, folder, kubeconfig
        self.policies = policies
        self.cert, self.key = self_signed(folder)
        self.port = free_port()
        self.workers = 2
        self.proc = None
        self.log = folder / f"{Path(binary).name}.log"

    def start(self, settings=None):
        """Start with each policy's settings, or `settings` for every policy."""
        rendered = render_policies_yml(self.policies, f"file://{self.module}")
        if settings is not None:
            for entry in rendered.values():
                entry["settings"] = settings
        (self.folder / "policies.yml").write_text(yaml.safe_dump(rendered))
        env = dict(os.environ, **deployed_env(), KUBECONFIG=str(self.kubeconfig), RUST_BACKTRACE="1")
        self.proc, _ = start_server(self.binary, self.folder, self.folder / "policies.yml", self.cert, self.key, env,
                                    log=self.log, port=self.port, workers=self.workers)
        return self

    def stop(self):
        stop_process(self.proc)
        self.proc = None

    def restart(self, settings=None):
        self.stop()
        return self.start(settings)

    def url(self, policy_id):
        return f"https://127.0.0.1:{self.port}/validate/{policy_id}"
