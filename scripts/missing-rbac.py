#!/usr/bin/env python3
"""What the real policy-server does when its ServiceAccount may not read a kind.

    make annotated-policy.wasm      (kwctl and policy-server on PATH)
    python3 scripts/missing-rbac.py [--policy-server PATH] [--workers N] [--out FILE]

Runs Kubewarden's policy-server (plain HTTP on 127.0.0.1) with
annotated-policy.wasm, against the API server stand-in of e2e/harness/apiserver.py
serving a conformance case's cluster, and POSTs AdmissionReviews to
/validate/<policy> as the API server would. The stand-in answers 403
Forbidden for the kinds a scenario forbids, as an API server does for a
ServiceAccount without RBAC. For each scenario it prints what a webhook
caller sees (time to answer, HTTP status, the response's allowed/code/
message), whether a request that needs no lookup is answered meanwhile,
how many requests the policy-server sends to the stand-in, and the
policy-server's log lines about it. Every request and wait is bounded;
the processes it starts are stopped at the end.

The policy runs with timeoutEvalSeconds 8 (as in deploy/) and the
policy-server's default --policy-timeout 2; a webhook caller is given
35 s, more than the longest webhook timeout the API server allows (30 s).
"""

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from e2e_harness import harness

ROOT = Path(__file__).resolve().parent.parent
CALLER_TIMEOUT = 35.0
WEBHOOK_TIMEOUT = 10.0  # timeoutSeconds of the policies in deploy/
ANSI = re.compile(r"\x1b\[[0-9;]*m")

# The two fail-closed policies of deploy/cluster-admission-policies.yaml and
# a conformance case for each: its request, and the cluster served.
STATIC_IP = ("clusterwide-kube-ovn-static-ip", ROOT / "tests/conformance/008-pod-default-subnet-conflict.json")
NETWORKS = ("clusterwide-kube-ovn-networks", ROOT / "tests/conformance/159-subnet-overlap-ovn-default-same-vpc.json")
NAT_GW = ("clusterwide-kube-ovn-networks", ROOT / "tests/conformance/218-natgw-create-allowed.json")
EIP = ("clusterwide-kube-ovn-networks", ROOT / "tests/cases/k01-ovn-dnat-eip-lookup-forbidden.json")


apiserver = harness("apiserver")
free_port = harness("processes").free_port
webhooks = harness("webhooks")


class CountingHandler(apiserver.Handler):
    """The stand-in's handler, recording (time, path, status) of each request."""

    def log_message(self, fmt, *args):
        if len(args) >= 2:
            self.server.seen.append((time.monotonic(), self.path, str(args[1])))


def review(request, uid):
    request = json.loads(json.dumps(request))
    request["uid"] = uid
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


def post(url, body, timeout=CALLER_TIMEOUT):
    """POST an AdmissionReview as the API server does; (seconds, HTTP status, response)."""
    data = json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    start = time.monotonic()
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            payload = json.loads(r.read())
            return time.monotonic() - start, r.status, payload.get("response", payload)
    except urllib.error.HTTPError as e:
        return time.monotonic() - start, e.code, e.read().decode(errors="replace")[:300]
    except (TimeoutError, socket.timeout):
        return time.monotonic() - start, None, f"no answer within {timeout:.0f} s"
    except urllib.error.URLError as e:
        return time.monotonic() - start, None, f"connection error: {e.reason}"


def show(label, result):
    seconds, status, response = result
    if isinstance(response, dict):
        st = response.get("status") or {}
        what = f"allowed={response.get('allowed')} code={st.get('code')} message={st.get('message')!r}"
    else:
        what = str(response)
    return f"  {label}: {seconds:6.2f} s, HTTP {status}, {what}"


def policies_from_deploy(module):
    """policies.yml for the policy-server, as the Kubewarden controller writes it
    from deploy/cluster-admission-policies.yaml (module replaced by a local file;
    e2e/harness/webhooks.py renders it)."""
    caps = webhooks.load_cluster_admission_policies([ROOT / "deploy/cluster-admission-policies.yaml"])
    return webhooks.render_policies_yml(caps, f"file://{module}")


class Run:
    """One stand-in serving a case's cluster and one policy-server, fresh for a scenario."""

    def __init__(self, args, case_file, forbid, tmp, delay_list=0.0, eval_timeout="deploy"):
        cluster = json.loads(case_file.read_text()).get("cluster") or {}
        # Every cluster has Service default/kubernetes (read for I9 when the
        # kubernetesServiceIP setting is unset, as in deploy/).
        if not cluster.get("services"):
            cluster["services"] = [{
                "metadata": {"name": "kubernetes", "namespace": "default"},
                "spec": {"clusterIP": "10.96.0.1", "clusterIPs": ["10.96.0.1"]},
            }]
        self.server = apiserver.StandIn(apiserver.Cluster(cluster, forbid), delay_list=delay_list)
        self.server.RequestHandlerClass = CountingHandler
        self.server.verbose = True
        self.server.seen = []
        self.server.start()
        kubeconfig = tmp / "kubeconfig"
        self.server.write_kubeconfig(kubeconfig)
        self.policies = policies_from_deploy(args.policy.resolve())
        if eval_timeout != "deploy":
            for policy in self.policies.values():
                policy["timeoutEvalSeconds"] = eval_timeout
        (tmp / "policies.yml").write_text(json.dumps(self.policies))
        self.port, ready = free_port(), free_port()
        self.log_path = tmp / "policy-server.log"
        self.log = open(self.log_path, "w")
        env = dict(os.environ, KUBECONFIG=str(kubeconfig), NO_COLOR="1")
        # As in Kubewarden's container image: no RUST_BACKTRACE (with it, every
        # host error text, and so the denial message, carries a stack trace).
        env.pop("RUST_BACKTRACE", None)
        env.pop("RUST_LIB_BACKTRACE", None)
        self.proc = subprocess.Popen(
            [
                args.policy_server, "--addr", "127.0.0.1", "--port", str(self.port),
                "--readiness-probe-port", str(ready), "--policies", str(tmp / "policies.yml"),
                "--policies-download-dir", str(tmp), "--workers", str(args.workers),
                "--log-no-color",
            ],
            stdout=self.log, stderr=subprocess.STDOUT, env=env, cwd=tmp,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{ready}/readiness", timeout=1)
                break
            except OSError:
                time.sleep(0.2)
        else:
            self.stop()
            raise SystemExit(f"policy-server did not get ready; log: {self.log_path}")

    def url(self, policy):
        return f"http://127.0.0.1:{self.port}/validate/{policy}"

    def send(self, which, uid, timeout=CALLER_TIMEOUT):
        policy, case_file = which
        request = json.loads(case_file.read_text())["request"]
        return post(self.url(policy), review(request, uid), timeout)

    def send_no_lookup(self, uid, timeout=CALLER_TIMEOUT):
        """A pod without any static-IP annotation: admitted without a lookup."""
        policy, case_file = STATIC_IP
        body = review(json.loads(case_file.read_text())["request"], uid)
        body["request"]["object"]["metadata"].pop("annotations", None)
        return post(self.url(policy), body, timeout)

    def calls(self, since=0.0, until=None, pattern=""):
        until = until or time.monotonic()
        return [c for c in self.server.seen if since <= c[0] <= until and pattern in c[1]]

    def log_lines(self, *needles):
        text = ANSI.sub("", self.log_path.read_text(errors="replace"))
        return [l for l in text.splitlines() if any(n in l for n in needles)]

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        self.server.stop()


def concurrently(*jobs):
    """Run each (delay, label, fn) in its own thread, started `delay` s from now."""
    results = {}
    threads = []
    for delay, label, fn in jobs:
        def run(delay=delay, label=label, fn=fn):
            time.sleep(delay)
            results[label] = fn()
        t = threading.Thread(target=run)
        t.start()
        threads.append(t)
    for t in threads:
        t.join()
    return results


def short(line, width=300):
    line = re.sub(r"^\S+Z\s+", "", line)
    return line if len(line) <= width else line[:width] + " …"


def paths(calls):
    """Distinct request paths, in first-seen order, with counts and statuses."""
    seen = {}
    for _, path, code in calls:
        path = re.sub(r"[?&](limit|resourceVersion|allowWatchBookmarks|timeoutSeconds)=[^&]*", "", path)
        entry = seen.setdefault(path, [0, set()])
        entry[0] += 1
        entry[1].add(code)
    return [f"{n} x {p} ({', '.join(sorted(c))})" for p, (n, c) in seen.items()]


def scenario_baseline(run, out):
    for label, which in (("static-IP pod", STATIC_IP), ("Subnet CREATE", NETWORKS)):
        t0 = time.monotonic()
        out.append(show(label, run.send(which, label)))
        for line in paths(run.calls(t0)):
            out.append(f"      {line}")
    out.append(show("pod without static IP", run.send_no_lookup("b")))


def scenario_forbidden_list(run, out, which, kind_path):
    t0 = time.monotonic()
    r = concurrently(
        (0.0, "A", lambda: run.send(which, "a", CALLER_TIMEOUT)),
        (1.0, "C", lambda: run.send(which, "c", WEBHOOK_TIMEOUT)),
        (3.0, "B", lambda: run.send_no_lookup("b", WEBHOOK_TIMEOUT)),
    )
    out.append(show(f"A at 0 s, caller waits {CALLER_TIMEOUT:.0f} s", r["A"]))
    out.append(show(f"C same as A at 1 s, caller waits {WEBHOOK_TIMEOUT:.0f} s", r["C"]))
    out.append(show(f"B pod without static IP at 3 s, caller waits {WEBHOOK_TIMEOUT:.0f} s", r["B"]))
    t1 = time.monotonic()
    out.append(show("E pod without static IP once every caller gave up", run.send_no_lookup("e", WEBHOOK_TIMEOUT)))
    during = run.calls(t0, t1, kind_path)
    out.append(f"  stand-in requests for {kind_path} while callers waited ({t1 - t0:.0f} s): "
               f"{len(during)}, answered {', '.join(sorted({c[2] for c in during})) or '-'}")
    time.sleep(20)
    after = run.calls(time.monotonic() - 20, time.monotonic(), kind_path)
    out.append(f"  … in the next 20 s, with no request open: {len(after)}")
    reflectors = run.log_lines("creating new reflector")
    out.append(f"  policy-server log: {len(reflectors)} 'creating new reflector', "
               f"{len(run.log_lines('watcher error'))} 'watcher error', "
               f"{len(run.log_lines('finished processing request'))} 'finished processing request' lines")
    for line in reflectors:
        out.append(f"    {short(line)}")
    warns = run.log_lines("watcher error")
    if warns:
        out.append(f"    {short(warns[0], 700)}")
    for line in run.log_lines("finished processing request"):
        out.append(f"    {short(line)}")
    for line in run.log_lines("ERROR", "timed out", "timeout exceeded", "interrupted")[:2]:
        out.append(f"    {short(line, 700)}")
    # The kind allowed (RBAC fixed), the policy-server left running.
    run.server.cluster.forbidden.clear()
    t2 = time.monotonic()
    out.append("  RBAC then fixed, policy-server not restarted:")
    out.append(show("D same as A", run.send(which, "d", WEBHOOK_TIMEOUT)))
    time.sleep(5)
    out.append(f"  stand-in requests for {kind_path} since the fix: {len(run.calls(t2, time.monotonic(), kind_path))}; "
               f"watches open now: {run.server.stats.snapshot()['watches_open']}")


def scenario_repeated(run, out, which, kind_path, count=5):
    """Requests one after another, each caller giving up after the webhook timeout."""
    t0 = time.monotonic()
    for i in range(count):
        out.append(show(f"request {i + 1} of {count}", run.send(which, f"r{i}", WEBHOOK_TIMEOUT)))
    t1 = time.monotonic()
    time.sleep(20)
    out.append(f"  'creating new reflector' lines: {len(run.log_lines('creating new reflector'))}; "
               f"stand-in requests for {kind_path}: {len(run.calls(t0, t1, kind_path))} in the {t1 - t0:.0f} s of "
               f"requests, {len(run.calls(time.monotonic() - 20, time.monotonic(), kind_path))} in the 20 s after")


def scenario_slow_list(run, out):
    """Every LIST answered after a delay: a first lookup on a large cluster."""
    out.append(show("static-IP pod (first lookups: LISTs)", run.send(STATIC_IP, "a", WEBHOOK_TIMEOUT)))
    out.append(show("the same pod again (watch caches filled)", run.send(STATIC_IP, "b", WEBHOOK_TIMEOUT)))
    for line in run.log_lines("ERROR", "timed out", "timeout exceeded", "interrupted")[:2]:
        out.append(f"    {short(line, 500)}")


def scenario_forbidden_get(run, out, which, label):
    t0 = time.monotonic()
    out.append(show(label, run.send(which, "a")))
    for line in paths(run.calls(t0)):
        out.append(f"      {line}")
    out.append(show("pod without static IP", run.send_no_lookup("b")))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policy", type=Path, default=ROOT / "annotated-policy.wasm")
    parser.add_argument("--policy-server", default=shutil.which("policy-server") or "policy-server")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--out", type=Path, help="also write the report here")
    args = parser.parse_args()
    if not args.policy.exists():
        raise SystemExit(f"{args.policy} is missing: make annotated-policy.wasm (needs kwctl)")
    version = subprocess.run([args.policy_server, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    out = [
        f"# {version}, --workers {args.workers}, --policy-timeout 2 (default); policies as in deploy/",
        f"# (timeoutEvalSeconds 8); requests from {STATIC_IP[1].name} (a pod with a static IP),",
        f"# {NETWORKS[1].name} (a Subnet CREATE), {NAT_GW[1].name} (a VpcNatGateway CREATE),",
        f"# {EIP[1].name} (an OvnDnatRule CREATE naming an OvnEip)",
    ]
    scenarios = [
        ("nothing forbidden", STATIC_IP, [], scenario_baseline),
        ("list of IPs forbidden", STATIC_IP, ["IP"],
         lambda run, o: scenario_forbidden_list(run, o, STATIC_IP, "/ips")),
        ("list of Subnets forbidden", NETWORKS, ["Subnet"],
         lambda run, o: scenario_forbidden_list(run, o, NETWORKS, "/subnets")),
        ("list of IPs forbidden, five static-IP pods in a row", STATIC_IP, ["IP"],
         lambda run, o: scenario_repeated(run, o, STATIC_IP, "/ips")),
        ("get of an OvnEip forbidden", EIP, ["OvnEip"],
         lambda run, o: scenario_forbidden_get(run, o, EIP, "OvnDnatRule CREATE")),
        ("get of a ConfigMap forbidden", NAT_GW, ["ConfigMap"],
         lambda run, o: scenario_forbidden_get(run, o, NAT_GW, "VpcNatGateway CREATE")),
        ("every LIST takes 3 s, timeoutEvalSeconds 8 (deploy/)", STATIC_IP, [], lambda run, o: scenario_slow_list(run, o), 3.0),
        ("every LIST takes 3 s, no timeoutEvalSeconds (the policy-server's 2 s)", STATIC_IP, [],
         lambda run, o: scenario_slow_list(run, o), 3.0, None),
    ]
    for title, (_, case_file), forbid, fn, *extra in scenarios:
        out.append(f"\n## {title}" + (f" (the stand-in answers 403 for {', '.join(forbid)})" if forbid else ""))
        with tempfile.TemporaryDirectory() as tmp:
            run = Run(args, case_file, forbid, Path(tmp), *extra)
            try:
                fn(run, out)
            finally:
                run.stop()
        print(f"done: {title}", file=sys.stderr)
    text = "\n".join(out) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
