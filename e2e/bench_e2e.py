#!/usr/bin/env python3
"""Admission latency through the real policy-server, over TLS.

A generated Kube-OVN cluster (testhost's `bench-data`, the generator of
`make bench`) is served by the API server stand-in with a latency per GET and
per LIST; a policy-server runs the policies of deploy/. For each request kind
(a pod without Kube-OVN annotations: the policy-server's floor; a static-IP
pod, free and conflicting; a Deployment with a pool; a Subnet CREATE) it
reports p50/p99 latency and requests per second at each concurrency, and the
API requests the stand-in saw per decision. Then: the watches the
policy-server holds, the first static-IP request after a restart (cold
watch caches), a first touch of every subnet, the spread steady state
(static-IP pods round robin over every subnet), and the policy-server's peak
RSS. The stand-in runs in a process of its own. The last line:

  bench-e2e: ips= subnets= floor_p50_ms= p50_ms= p99_ms= ratio= api_requests_per_decision= watches= first_ms= rss_mb= stalled= stalled_elsewhere= apiserver=

for the static-IP pod (with logical_switch) at the highest concurrency;
`apiserver` names the API server the policy-server read (stand-in or
kube-apiserver).

A request with no answer within --stall-s (10 s: deploy/'s webhook
timeoutSeconds, after which the API server refuses the request) is stalled:
the client gives up on it, as the API server would, and goes on with its
next request on a new connection. That is the policy-server's
Kubernetes client losing a watch cache's first LIST (docs/stall.md), not a
decision of the policy: stalled first touches are counted (`stalled=`; the
other requests that stalled, `stalled_elsewhere=`), not failed. A wrong
decision, an HTTP error or a broken connection still fails the run.

`--apiserver kube-apiserver` serves the same generated objects from a real
etcd + kube-apiserver instead (e2e/bench_kube_apiserver.py; `make
cluster-bin` builds them): written through the API before the policy-server
starts, read by the policy-server with a token of deploy/'s ServiceAccount,
so deploy/rbac.yaml decides every lookup. The API server's own latency
applies; the stand-in's injected one does not, and its flags
(--delay-get-ms, --delay-list-ms) are refused. API requests are counted from
the API server's audit log (the policy-server's ServiceAccount only).
"""

import argparse
import http.client
import ipaddress
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from policy_server import ROOT, PolicyServer, load_policies, make_certificate  # noqa: E402

STAND_IN, KUBE_APISERVER = "stand-in", "kube-apiserver"
DEFAULT_DELAY_MS = 2.0
# deploy/cluster-admission-policies.yaml's timeoutSeconds: the API server's wait for an answer.
DEFAULT_STALL_S = 10.0


class Stalled(Exception):
    """No answer within the stall bound."""


class Client:
    """One keep-alive HTTPS connection to the policy-server; a request not answered
    within `stall_s` raises Stalled, the connection dropped as the API server drops it."""

    def __init__(self, port, context, stall_s):
        self.port, self.context, self.stall_s = port, context, stall_s
        self.conn = None

    def review(self, pid, body):
        for attempt in (0, 1):
            if self.conn is None:
                self.conn = http.client.HTTPSConnection("127.0.0.1", self.port, context=self.context,
                                                        timeout=self.stall_s)
            try:
                self.conn.request("POST", f"/validate/{pid}", body, {"Content-Type": "application/json"})
                resp = self.conn.getresponse()
                data = resp.read()
                if resp.status != 200:
                    raise RuntimeError(f"HTTP {resp.status}: {data[:300]!r}")
                return json.loads(data)["response"]
            except TimeoutError:
                self.conn.close()
                self.conn = None
                raise Stalled() from None
            except (http.client.HTTPException, ConnectionError):
                self.conn.close()
                self.conn = None
                if attempt:
                    raise


class RemoteStandIn:
    """The API server stand-in in a process of its own, so that its answers do
    not wait for the client's threads (one Python process has one interpreter
    lock: in the client's process a GET waited for the client's TLS work)."""

    def __init__(self, folder, cluster, delay_get_ms, delay_list_ms):
        case = folder / "standin-case.json"
        case.write_text(json.dumps({"cluster": cluster}))
        self.kubeconfig = folder / "standin-kubeconfig"
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve().parent / "apiserver.py"), str(case),
             "--kubeconfig", str(self.kubeconfig),
             "--delay-get-ms", str(delay_get_ms), "--delay-list-ms", str(delay_list_ms)],
            stdout=subprocess.PIPE, text=True,
        )
        line = self.proc.stdout.readline()  # "serving <case> at <url>; kubeconfig <path>"
        if " at " not in line:
            raise RuntimeError(f"the stand-in did not start: {line!r}")
        self.url = line.split(" at ", 1)[1].split(";", 1)[0]
        self.stats = self
        self.name = STAND_IN

    def start(self):
        return self

    def write_kubeconfig(self, path):
        shutil.copyfile(self.kubeconfig, path)

    def processes(self):
        return {"stand-in": self.proc.pid}

    def snapshot(self):
        with urllib.request.urlopen(self.url + "/standin/stats", timeout=30) as r:
            return json.loads(r.read())

    def stop(self):
        self.proc.terminate()
        self.proc.wait(10)


def review_body(request):
    return json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}).encode()


def percentile(samples, q):
    if not samples:  # every request stalled
        return float("nan")
    samples = sorted(samples)
    return samples[min(len(samples) - 1, round((len(samples) - 1) * q))]


def load(server, bodies, concurrency, count, stall_s):
    """`count` requests over `concurrency` connections; latencies (s) and answers of
    those answered, wall (s), errors, and the requests stalled (no answer within
    `stall_s`: given up, not failed)."""
    latencies, answers, errors, stalled = [], [], [], []
    lock = threading.Lock()
    per = [count // concurrency + (1 if i < count % concurrency else 0) for i in range(concurrency)]

    def worker(n, offset):
        client = Client(server.port, server.context, stall_s)
        mine, got, lost = [], [], []
        try:
            for k in range(n):
                pid, body = bodies[(offset + k) % len(bodies)]
                started = time.perf_counter()
                try:
                    got.append(client.review(pid, body))
                except Stalled:
                    lost.append(offset + k)
                    continue
                mine.append(time.perf_counter() - started)
        except Exception as e:  # reported, and the run fails
            with lock:
                errors.append(f"{type(e).__name__}: {e}")
        with lock:
            latencies.extend(mine)
            answers.extend(got)
            stalled.extend(lost)

    threads = [threading.Thread(target=worker, args=(n, sum(per[:i]))) for i, n in enumerate(per)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies, time.perf_counter() - started, answers, errors, stalled


def api_requests(standin):
    stats = standin.stats.snapshot()
    return stats.get("get", 0) + stats.get("list", 0) + stats.get("watch", 0)


def cpu_seconds(processes):
    """CPU time (user + system, s) each process has used so far, by name."""
    tick = os.sysconf("SC_CLK_TCK")
    used = {}
    for name, pid in processes.items():
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        used[name] = (int(fields[11]) + int(fields[12])) / tick  # utime, stime
    return used


def cpu_used(before, after):
    return ", ".join(f"{name} {after[name] - before[name]:.1f} s" for name in after)


def peak_rss_mb(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("policy", help="the annotated module")
    parser.add_argument("--ips", type=int, default=10_000)
    parser.add_argument("--subnets", type=int, default=1_000)
    parser.add_argument("--requests", type=int, default=2_000, help="per request kind and concurrency")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--apiserver", choices=[STAND_IN, KUBE_APISERVER], default=STAND_IN,
                        help="what serves the generated cluster: the stand-in (default), or a real etcd + "
                             "kube-apiserver from `make cluster-bin`, the objects written through its API")
    parser.add_argument("--delay-get-ms", type=float, default=None,
                        help=f"stand-in only: latency added to every GET (default {DEFAULT_DELAY_MS})")
    parser.add_argument("--delay-list-ms", type=float, default=None,
                        help=f"stand-in only: latency added to every LIST (default {DEFAULT_DELAY_MS})")
    parser.add_argument("--load-connections", type=int, default=None,
                        help="kube-apiserver only: connections writing the objects at once (default 16)")
    parser.add_argument("--workers", type=int, default=2, help="policy-server worker threads")
    parser.add_argument("--stall-s", type=float, default=DEFAULT_STALL_S,
                        help="a request with no answer by then is stalled: given up and counted, not failed "
                             f"(default {DEFAULT_STALL_S:g}: deploy/'s webhook timeoutSeconds)")
    parser.add_argument("--touch-subnets", type=int, default=None,
                        help="first touch of this many subnets (default: all)")
    parser.add_argument("--spread-requests", type=int, default=4_000,
                        help="after the first touch: requests round robin over the touched subnets")
    parser.add_argument("--policy-server", default="policy-server")
    parser.add_argument("--bench-data", default=str(ROOT / "target/host/bench-data"))
    args = parser.parse_args()
    if args.apiserver == KUBE_APISERVER:
        # What only the stand-in can do is refused, not ignored.
        for flag in ("delay_get_ms", "delay_list_ms"):
            if getattr(args, flag) is not None:
                parser.error(f"--{flag.replace('_', '-')}: injected latency is the stand-in's; "
                             "kube-apiserver answers at its own speed (drop the flag or use --apiserver stand-in)")
    else:
        if args.load_connections is not None:
            parser.error("--load-connections: only --apiserver kube-apiserver loads objects through an API")
        args.delay_get_ms = DEFAULT_DELAY_MS if args.delay_get_ms is None else args.delay_get_ms
        args.delay_list_ms = DEFAULT_DELAY_MS if args.delay_list_ms is None else args.delay_list_ms
    if shutil.which(args.policy_server) is None:
        sys.exit(f"{args.policy_server}: not found")

    top = Path(tempfile.mkdtemp(prefix="kop-bench-e2e-"))
    subprocess.run([args.bench_data, str(args.ips), str(args.subnets), str(top)], check=True)
    cluster = json.loads((top / "cluster.json").read_text())
    requests = json.loads((top / "requests.json").read_text())
    module = Path(args.policy).resolve()
    policies, _ = load_policies(sorted((ROOT / "deploy").glob("*.yaml")), module)
    cert, key = make_certificate(top)
    standin = None
    try:
        if args.apiserver == KUBE_APISERVER:
            from bench_kube_apiserver import KubeApiServer  # only this mode needs PyYAML and the control plane
            standin = KubeApiServer(top, cluster, connections=args.load_connections or 16,
                                    log=lambda line: print(f"bench-e2e: {line}", flush=True))
            latency = "no injected API latency (the stand-in's --delay-*-ms do not apply): kube-apiserver's own"
        else:
            standin = RemoteStandIn(top, cluster, args.delay_get_ms, args.delay_list_ms)
            latency = f"API latency {args.delay_get_ms} ms per GET, {args.delay_list_ms} ms per LIST"
        server = PolicyServer(args.policy_server, top, policies, None, cert, key, standin=standin,
                              workers=args.workers, backtrace=False)
    except BaseException:  # what started is stopped, and the folder removed
        if standin is not None:
            standin.stop()
        shutil.rmtree(top, ignore_errors=True)
        raise
    print(f"bench-e2e: {args.ips} IPs in {args.subnets} subnets, served by the {standin.name}; {latency}; "
          f"policy-server ready in {server.startup:.2f} s, {args.workers} workers", flush=True)
    failures = []
    try:
        processes = dict(standin.processes(), **{"policy-server": server.proc.pid})
        cpu_start = cpu_seconds(processes)
        by_name = {r["name"]: r for r in requests}
        pid_of = {r["name"]: "clusterwide-" + r["policy"] for r in requests}

        def check(name, answers):
            want = by_name[name]["allowed"]
            wrong = [a for a in answers if a.get("allowed") != want]
            if wrong:
                failures.append(f"{name}: {len(wrong)} answers not allowed={want}, e.g. {wrong[0]}")

        # Cold: the first static-IP decision after the restart fills its caches.
        free = by_name["pod-static-ip-free"]
        client = Client(server.port, server.context, args.stall_s)
        stalled_elsewhere = []  # (what, how many)
        started = time.perf_counter()
        try:
            check("pod-static-ip-free", [client.review(pid_of["pod-static-ip-free"], review_body(free["request"]))])
        except Stalled:
            stalled_elsewhere.append(("the first request", 1))
        first_ms = (time.perf_counter() - started) * 1000

        rows, figures = [], {}
        for r in requests:
            name = r["name"]
            body = [(pid_of[name], review_body(r["request"]))]
            warm = load(server, body, 1, 20, args.stall_s)
            check(name, warm[2])
            if warm[4]:
                stalled_elsewhere.append((f"{name} warm-up", len(warm[4])))
            for c in args.concurrency:
                before = api_requests(standin)
                lat, wall, answers, errors, stalled = load(server, body, c, args.requests, args.stall_s)
                failures += [f"{name} c={c}: {e}" for e in errors[:3]]
                check(name, answers)
                if stalled:
                    stalled_elsewhere.append((f"{name} c={c}", len(stalled)))
                per = (api_requests(standin) - before) / max(1, len(lat))
                p50, p99 = percentile(lat, 0.5) * 1000, percentile(lat, 0.99) * 1000
                figures[(name, c)] = (p50, p99, per)
                rows.append(f"| {name} | {c} | {p50:.2f} | {p99:.2f} | {len(lat) / wall:.0f} | {per:.3f} |")
        watches = standin.stats.snapshot()["watches_open"]
        print("| request | concurrency | p50 ms | p99 ms | req/s | API requests per decision |")
        print("|---|---|---|---|---|---|")
        print("\n".join(rows))
        print(f"watches held after the steady-state runs: {watches}")

        # First touch of many subnets (cold watch caches), then the spread
        # steady state: every request a static-IP pod in another subnet, each
        # with a free address of its own subnet (bench-data's layout: subnet j
        # is 10.0.0.0 + j * 2^14 /18, its IPs from .2 on).
        touch = args.subnets if args.touch_subnets is None else args.touch_subnets
        stalled_touch = []
        if touch:
            base = json.dumps(free["request"])
            free_ip = free["request"]["object"]["metadata"]["annotations"]["ovn.kubernetes.io/ip_address"]

            def in_subnet(j):
                address = str(ipaddress.IPv4Address(int(ipaddress.IPv4Address(free_ip)) + (j << 14)))
                req = base.replace('"subnet-0"', f'"subnet-{j}"').replace(f'"{free_ip}"', f'"{address}"')
                return pid_of["pod-static-ip-free"], review_body(json.loads(req))

            bodies = [in_subnet(j) for j in range(touch)]
            before = api_requests(standin)
            cpu_before = cpu_seconds(processes)
            lat, wall, answers, errors, stalled_touch = load(server, bodies, max(args.concurrency), touch, args.stall_s)
            cpu_touch = cpu_used(cpu_before, cpu_seconds(processes))
            failures += [f"first touch: {e}" for e in errors[:3]]
            check("pod-static-ip-free", answers)
            print(
                f"first touch of {touch} subnets: p50 {percentile(lat, 0.5) * 1000:.1f} ms, "
                f"p99 {percentile(lat, 0.99) * 1000:.1f} ms, max {max(lat, default=0) * 1000:.0f} ms, "
                f"{len(errors)} failed, {len(stalled_touch)} stalled (no answer in {args.stall_s:g} s"
                f"{': subnet-' + ', subnet-'.join(map(str, sorted(stalled_touch)[:10])) if stalled_touch else ''}), "
                f"{(api_requests(standin) - before) / max(1, len(lat)):.2f} API requests "
                f"per decision, watches held {standin.stats.snapshot()['watches_open']}"
            )
            print(f"CPU used in the first touch ({wall:.1f} s): {cpu_touch}")
            if args.spread_requests:
                before = api_requests(standin)
                lat, wall, answers, errors, stalled = load(server, bodies, max(args.concurrency),
                                                           args.spread_requests, args.stall_s)
                failures += [f"spread: {e}" for e in errors[:3]]
                check("pod-static-ip-free", answers)
                if stalled:
                    stalled_elsewhere.append(("spread", len(stalled)))
                spread = (percentile(lat, 0.5) * 1000, percentile(lat, 0.99) * 1000,
                          (api_requests(standin) - before) / max(1, len(lat)), len(lat) / wall)
                print(
                    f"spread steady state, {args.spread_requests} requests over {touch} subnets at concurrency "
                    f"{max(args.concurrency)}: p50 {spread[0]:.2f} ms, p99 {spread[1]:.2f} ms, {spread[3]:.0f} req/s, "
                    f"{spread[2]:.3f} API requests per decision, watches held {standin.stats.snapshot()['watches_open']}"
                )
        rss = peak_rss_mb(server.proc.pid)
        stats = standin.stats.snapshot()
        seen = "API server saw" if standin.name == STAND_IN else "kube-apiserver's audit log: the policy-server made"
        print(f"{seen}: {stats.get('get', 0)} GETs, {stats.get('list', 0)} LISTs, "
              f"{stats.get('watch', 0)} WATCHes; policy-server peak RSS {rss:.0f} MiB")
        print(f"CPU used since the policy-server was ready: {cpu_used(cpu_start, cpu_seconds(processes))}")
        c = max(args.concurrency)
        floor = figures[("floor", c)][0]
        p50, p99, per = figures[("pod-static-ip-free", c)]
        for f in failures:
            print(f"FAIL {f}")
        if stalled_elsewhere:
            print("stalled besides the first touch: " + ", ".join(f"{what} {n}" for what, n in stalled_elsewhere))
        print(
            f"bench-e2e: ips={args.ips} subnets={args.subnets} floor_p50_ms={floor:.2f} p50_ms={p50:.2f} "
            f"p99_ms={p99:.2f} ratio={p50 / floor:.2f} api_requests_per_decision={per:.3f} "
            f"watches={watches} first_ms={first_ms:.0f} rss_mb={rss:.0f} stalled={len(stalled_touch)} "
            f"stalled_elsewhere={sum(n for _, n in stalled_elsewhere)} apiserver={standin.name}"
        )
    finally:
        server.stop()
        shutil.rmtree(top, ignore_errors=True)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
