#!/usr/bin/env python3
"""The policies of deploy/ in a real policy-server, over TLS.

For every example of test_data/examples.txt: the example's cluster is served
by the API server stand-in (e2e/apiserver.py); a policy-server is started on
127.0.0.1 with a throwaway self-signed certificate and a policies.yml made
from the ClusterAdmissionPolicies of deploy/, byte for byte as the Kubewarden
controller writes it (e2e/webhooks.py) but for the module, the local file;
the example's AdmissionReview is POSTed over HTTPS (the certificate verified) to
/validate/<id> of the policy whose rules match the request.

The answer must equal kwctl's for the same request, settings and cluster
(kwctl is checked against every conformance case by conformance_kwctl.py),
and the case's expectation where the case's settings are the deployed ones.
Examples that share a cluster share a policy-server. The last line is
`N passed, N failed`.
"""

import argparse
import concurrent.futures
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
from apiserver import Cluster, StandIn  # noqa: E402
from conformance_kwctl import compare  # noqa: E402
from webhooks import dump_policies_yml, load_cluster_admission_policies, policy_id, render_policies_yml  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def load_policies(paths, module):
    """policies.yml entries for the ClusterAdmissionPolicies of deploy/ files, as the
    Kubewarden controller writes them (e2e/webhooks.py) but for the module, a
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


def make_certificate(folder):
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
            "-keyout", str(key), "-out", str(cert), "-subj", "/CN=policy-server",
            "-addext", "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


class PolicyServer:
    """A policy-server process on its own ports, with its own stand-in."""

    def __init__(self, binary, folder, policies, cluster, cert, key, standin=None, workers=2, backtrace=True):
        self.folder = folder
        self.standin = (standin or StandIn(cluster)).start()
        kubeconfig = folder / "kubeconfig"
        self.standin.write_kubeconfig(kubeconfig)
        (folder / "policies.yml").write_text(dump_policies_yml(policies))
        self.port, self.ready_port = free_port(), free_port()
        self.log = open(folder / "policy-server.log", "w")
        # With RUST_BACKTRACE=1 a failed host call carries a backtrace:
        # messages must stay one line. Capturing one costs milliseconds, so
        # the benchmark turns it off.
        env = dict(os.environ, KUBECONFIG=str(kubeconfig), NO_COLOR="1", RUST_BACKTRACE="1" if backtrace else "0")
        started = time.monotonic()
        self.proc = subprocess.Popen(
            [
                binary, "--addr", "127.0.0.1", "--port", str(self.port),
                "--readiness-probe-port", str(self.ready_port),
                "--policies", str(folder / "policies.yml"),
                "--policies-download-dir", str(folder),
                "--sigstore-cache-dir", str(folder / "sigstore"),
                "--cert-file", str(cert), "--key-file", str(key),
                "--workers", str(workers), "--log-no-color",
            ],
            cwd=folder, env=env, stdout=self.log, stderr=subprocess.STDOUT,
        )
        self.wait_ready()
        self.startup = time.monotonic() - started
        self.context = ssl.create_default_context(cafile=str(cert))

    def wait_ready(self, timeout=120):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"policy-server exited {self.proc.returncode}: {self.tail()}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.ready_port}/readiness", timeout=1) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"policy-server not ready in {timeout} s: {self.tail()}")

    def tail(self):
        self.log.flush()
        return (self.folder / "policy-server.log").read_text()[-3000:]

    def review(self, pid, request):
        body = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}).encode()
        req = urllib.request.Request(
            f"https://127.0.0.1:{self.port}/validate/{pid}",
            data=body,
            headers={"Content-Type": "application/json"},
        )
        started = time.monotonic()
        with urllib.request.urlopen(req, context=self.context, timeout=60) as r:
            answer = json.loads(r.read())
        return answer["response"], time.monotonic() - started

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.standin.stop()
        self.log.close()


def kwctl_answer(kwctl, module, folder, request, settings, cluster):
    """kwctl's answer for the request, with these settings, against the same cluster."""
    standin = StandIn(cluster).start()
    try:
        standin.write_kubeconfig(folder / "kwctl-kubeconfig")
        (folder / "request.json").write_text(json.dumps(request))
        env = dict(os.environ, KUBECONFIG=str(folder / "kwctl-kubeconfig"), NO_COLOR="1")
        done = subprocess.run(
            [kwctl, "run", "--allow-context-aware", "-r", str(folder / "request.json"),
             "--settings-json", json.dumps(settings), str(module)],
            capture_output=True, text=True, env=env, timeout=120,
        )
        if done.returncode != 0:
            raise RuntimeError(f"kwctl exited {done.returncode}: {done.stderr[-2000:]}")
        return json.loads(done.stdout.strip().splitlines()[-1])
    finally:
        standin.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("policy", help="the annotated module")
    parser.add_argument("--deploy", nargs="+", default=sorted(str(p) for p in (ROOT / "deploy").glob("*.yaml")),
                        help="files holding ClusterAdmissionPolicies (default: every deploy/*.yaml)")
    parser.add_argument("--examples", default=str(ROOT / "test_data/examples.txt"))
    parser.add_argument("--policy-server", default="policy-server")
    parser.add_argument("--kwctl", default="kwctl")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    for tool in (args.policy_server, args.kwctl):
        if shutil.which(tool) is None:
            sys.exit(f"{tool}: not found")

    module = Path(args.policy).resolve()
    policies, rules = load_policies(args.deploy, module)
    examples = []
    for line in Path(args.examples).read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, case = line.split()
            examples.append((name, json.loads((ROOT / f"{case}.json").read_text())))
    groups = {}
    for name, case in examples:
        key = json.dumps([case.get("cluster") or {}, case.get("forbidden") or []], sort_keys=True)
        groups.setdefault(key, []).append((name, case))

    top = Path(tempfile.mkdtemp(prefix="kop-policy-server-"))
    cert, key = make_certificate(top)

    def run_group(index, members):
        folder = top / f"g{index}"
        folder.mkdir()
        first = members[0][1]
        cluster_json, forbidden = first.get("cluster") or {}, first.get("forbidden") or ()
        server = PolicyServer(args.policy_server, folder, policies, Cluster(cluster_json, forbidden), cert, key)
        results = []
        try:
            for name, case in members:
                request = case["request"]
                pid = route(request, rules)
                if pid is None:
                    results.append((name, ["no policy of deploy/ matches the request"], 0, server.startup))
                    continue
                answer, seconds = server.review(pid, request)
                settings = policies[pid]["settings"] or {}  # null: the policy has none
                problems = []
                if "uid" in request and answer.get("uid") != request["uid"]:
                    problems.append(f"uid {answer.get('uid')!r}")
                reference = kwctl_answer(
                    args.kwctl, module, folder, request, settings, Cluster(cluster_json, forbidden)
                )
                for field in ("allowed", "status", "warnings"):
                    ours, theirs = answer.get(field), reference.get(field)
                    if field == "status" and answer.get("allowed"):
                        continue
                    if (ours or None) != (theirs or None):
                        problems.append(f"{field} {ours!r}, kwctl {theirs!r}")
                if case.get("expect") and (case.get("settings") or {}) == settings:
                    problems += compare(case["expect"], answer)
                results.append((name, problems, seconds, server.startup))
        except Exception as e:  # one line per example, whatever went wrong
            results += [(n, [f"{type(e).__name__}: {e}"], 0, server.startup) for n, _ in members[len(results):]]
        finally:
            server.stop()
        return results

    started = time.monotonic()
    failed, latencies, startups = [], [], []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(run_group, i, m) for i, m in enumerate(groups.values())]
        for fut in futures:
            for name, problems, seconds, startup in fut.result():
                latencies.append(seconds)
                startups.append(startup)
                if problems:
                    failed.append(name)
                    print(f"FAIL {name}: " + "; ".join(problems), flush=True)
    shutil.rmtree(top, ignore_errors=True)
    latencies.sort()
    print(
        f"e2e-policy-server: {len(examples)} examples, {len(groups)} policy-servers, "
        f"median startup {sorted(startups)[len(startups) // 2]:.2f} s, "
        f"median answer {latencies[len(latencies) // 2] * 1000:.1f} ms, "
        f"wall {time.monotonic() - started:.1f} s"
    )
    print(f"{len(examples) - len(failed)} passed, {len(failed)} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
