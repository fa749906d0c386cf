"""Admission latency through the real policy-server, over TLS.

Generated Kube-OVN clusters (testhost's `bench-data`, the generator of
`make bench`; each Subnet's status holds the record kube-ovn-controller
writes) are served by the API server stand-in with a latency per GET and per
LIST, or by a real kube-apiserver; a policy-server runs the policies of
deploy/, the static-IP one twice: with `useSubnetStatus: false` (every
static-IP decision reads the subnet's IP objects: the rows named after the
request) and as shipped (I15: the rows named `i15 …`); and a probe policy
(tools/probe-policy) that makes exactly the host calls of the free
static-IP pod under each, reading none of the answers: the floor a policy
can reach in this runtime (`probe`, `i15 probe`). Request kinds are measured
in interleaved rounds (--rounds) at each concurrency, on connections kept
from one load to the next; medians over the rounds are reported: p50, p99,
req/s, policy-server CPU per decision, API requests per decision.

Phases:
- spread (--ips in --subnets, default 10 000 in 1 000): every request kind,
  then a first touch of every subnet (cold watch caches) and the spread
  steady state (static-IP pods round robin over every subnet), both to the
  policy as shipped;
- hot (--hot-ips, default 10 000; `--hot-ips 10000 50000` adds 50 000): every
  IP object in one subnet, as `ovn-default` holds them. First I15 alone, only
  free and restart requests (a StatefulSet's pods re-created at the addresses
  their own IP objects hold), the policy-server's peak RSS read before any IP
  list; then the conflict; then every request with the lists, beside the
  probe.
With kube-ovn-webhook (KUBE_OVN_WEBHOOK, built by hand, outside this
repository) and `--apiserver kube-apiserver`, upstream's webhook answers the
same AdmissionReviews from its own informers over the same kube-apiserver.
With `--patched BINARY` (POLICY_SERVER_PATCHED; a policy-server built by hand
with a change to its runtime, docs/upstream/policy-evaluator-serialized-lists.md)
a second policy-server with the same policies runs beside the first over the
same API server, and the hot phase's list rows are measured on both in the
same interleaved rounds (`patched …` rows and a `bench-e2e: patched` line).
`--churn N` (kube-apiserver only) creates and deletes IP objects in the hot
subnet, N writes a second, while the list rows are measured: what a watch
event costs the next list call.

The lines it ends each phase with:

  bench-e2e: ips= subnets= c=8 floor_p50_ms= p50_ms= p99_ms= ratio= probe_p50_ms= module_share= api_requests_per_decision= i15_p50_ms= i15_p99_ms= i15_ratio= watches= first_ms= rss_mb= stalled= stalled_elsewhere= upstream_p50_ms= apiserver=
  bench-e2e: ips= subnets=1 c=1 floor_p50_ms= p50_ms= p99_ms= ratio= probe_p50_ms= module_share= cpu_ms= probe_cpu_ms= restart_p50_ms= conflict_p50_ms= c8_p50_ms= c8_p99_ms= rss_mb= stalled= upstream_p50_ms= apiserver=
  bench-e2e: i15 ips= subnets=1 free_p50_ms= restart_p50_ms= restart_probe_p50_ms= apiserver_get_p50_ms= conflict_p50_ms= rss_mb= watches= upstream_free_p50_ms= upstream_restart_p50_ms= apiserver=

`p50_ms` is the free static-IP pod with the lists, `module_share` =
(p50_ms - probe_p50_ms) / p50_ms: what the module's own work adds.

A request with no answer within --stall-s (10 s: deploy/'s webhook
timeoutSeconds, after which the API server refuses the request) is stalled:
the client gives up on it, as the API server would, and goes on with its
next request on a new connection. That is the policy-server's
Kubernetes client losing a watch cache's first LIST (docs/stall.md), not a
decision of the policy: stalled first touches are counted (`stalled=`; the
other requests that stalled, `stalled_elsewhere=`), not failed. A wrong
decision, an HTTP error or a broken connection still fails the run.

`--apiserver kube-apiserver` serves the same generated objects from a real
etcd + kube-apiserver instead (e2e/harness/kube_apiserver.py; `make
cluster-bin` builds them): written through the API before the policy-server
starts, read by the policy-server with a token of deploy/'s ServiceAccount,
so deploy/rbac.yaml decides every lookup. The API server's own latency
applies; the stand-in's injected one does not, and its flags
(--delay-get-ms, --delay-list-ms) are refused. API requests are counted from
the API server's audit log (the policy-server's ServiceAccount only).
"""

import argparse
import contextlib
import copy
import http.client
import ipaddress
import json
import os
import re
import shutil
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from e2e.harness import DEPLOY, ROOT
from e2e.harness.certificates import self_signed
from e2e.harness.processes import stop_process
from e2e.harness.servers import PolicyServer, load_policies

STAND_IN, KUBE_APISERVER = "stand-in", "kube-apiserver"
DEFAULT_DELAY_MS = 2.0
# deploy/cluster-admission-policies.yaml's timeoutSeconds: the API server's wait for an answer.
DEFAULT_STALL_S = 10.0
# The static-IP policy of deploy/ as measured (useSubnetStatus: false), as shipped (I15), and the probes.
LISTS, I15 = "clusterwide-kube-ovn-static-ip", "clusterwide-kube-ovn-static-ip-i15"
# As shipped but with I19 off (checkIPPoolNamespaces: false): no IPPool read on the free pod's path.
NO_I19 = "clusterwide-kube-ovn-static-ip-i15-no-i19"
PROBE, PROBE_I15, PROBE_RESTART = "clusterwide-probe", "clusterwide-probe-i15", "clusterwide-probe-i15-restart"
# The policy-server of --patched, measured beside the first.
PATCHED = "policy-server-patched"
# The free static-IP pod that names no subnet (I5: its namespace's), where --namespaces makes one, and its probe.
FREE_NS, PROBE_I15_NS = "pod-static-ip-free-ns", "clusterwide-probe-i15-ns"


class Stalled(Exception):
    """No answer within the stall bound."""


class Client:
    """One keep-alive HTTPS connection to a webhook server (`target`: its port, TLS
    context and path per policy); a request not answered within `stall_s` raises
    Stalled, the connection dropped as the API server drops it."""

    def __init__(self, target, stall_s):
        self.target, self.stall_s = target, stall_s
        self.conn = None

    def review(self, pid, body):
        for attempt in (0, 1):
            if self.conn is None:
                self.conn = http.client.HTTPSConnection("127.0.0.1", self.target.port, context=self.target.context,
                                                        timeout=self.stall_s)
            try:
                self.conn.request("POST", self.target.path(pid), body, {"Content-Type": "application/json"})
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


class Target:
    """Where reviews go: the policy-server (`/validate/<policy id>`) or
    kube-ovn-webhook (`/validating`, one endpoint for everything)."""

    def __init__(self, port, context, path):
        self.port, self.context, self.path = port, context, path
        self.clients = []

    def client(self, i, stall_s):
        """Connection `i`, kept from one load to the next as the API server keeps
        its connections to a webhook: a load measures decisions, not TLS handshakes."""
        while len(self.clients) <= i:
            self.clients.append(Client(self, stall_s))
        return self.clients[i]


class RemoteStandIn:
    """The API server stand-in in a process of its own, so that its answers do
    not wait for the client's threads (one Python process has one interpreter
    lock: in the client's process a GET waited for the client's TLS work)."""

    def __init__(self, folder, cluster, delay_get_ms, delay_list_ms):
        case = folder / "standin-case.json"
        case.write_text(json.dumps({"cluster": cluster}))
        self.kubeconfig = folder / "standin-kubeconfig"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "e2e.harness.apiserver", str(case),
             "--kubeconfig", str(self.kubeconfig),
             "--delay-get-ms", str(delay_get_ms), "--delay-list-ms", str(delay_list_ms)],
            stdout=subprocess.PIPE, text=True, cwd=ROOT,
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

    def get_seconds(self):
        """The API server's own time per GET: kube-apiserver's audit log only."""
        return []

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


def load(target, bodies, concurrency, count, stall_s, start=0):
    """`count` requests over `concurrency` connections, bodies taken in turn from
    `start` on; latencies (s) and answers of those answered, wall (s), errors, and
    the requests stalled (no answer within `stall_s`: given up, not failed)."""
    latencies, answers, errors, stalled = [], [], [], []
    lock = threading.Lock()
    per = [count // concurrency + (1 if i < count % concurrency else 0) for i in range(concurrency)]

    def worker(i, n, offset):
        client = target.client(i, stall_s)
        mine, got, lost = [], [], []
        try:
            for k in range(n):
                pid, body = bodies[(start + offset + k) % len(bodies)]
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

    threads = [threading.Thread(target=worker, args=(i, n, sum(per[:i]))) for i, n in enumerate(per)]
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


def median(values):
    values = sorted(v for v in values if v == v)  # NaN (every request stalled) left out
    return values[len(values) // 2] if values else float("nan")


def host_calls(kop_run, module, request, cluster, settings, folder):
    """The host calls kube-ovn-policy makes for `request` (kop-run in this
    repository's waPC host, answered from `cluster`), in order: the probe's settings."""
    case, calls = folder / "probe-case.json", folder / "probe-calls.json"
    case.write_text(json.dumps({"request": request, "cluster": cluster, "settings": settings}))
    subprocess.run([str(kop_run), str(module), str(case), "--calls", str(calls)], check=True,
                   stdout=subprocess.DEVNULL)
    return json.loads(calls.read_text())


def describe_call(call):
    """One recorded host call in a few words: operation, kind, selectors."""
    payload = call.get("payload") or {}
    what = [call.get("operation", "?"), payload.get("kind", "?")]
    what += [f"{k}={payload[k]}" for k in ("name", "label_selector", "field_selector") if payload.get(k)]
    return " ".join(what)


class Phase:
    """One generated cluster (`bench-data`), its API server, and a fresh
    policy-server holding deploy/'s policies and the variants measured beside
    them:

    - `clusterwide-kube-ovn-static-ip` with `useSubnetStatus: false`: every
      static-IP decision reads the IP objects (the rows of docs/performance.md
      before I15, the module's decoding);
    - `clusterwide-kube-ovn-static-ip-i15`: deploy/'s settings (I15 on);
    - `clusterwide-probe` and `clusterwide-probe-i15`: the probe policy
      (tools/probe-policy) making exactly the host calls the free static-IP
      pod's decision makes under each, reading none of the answers.
    """

    def __init__(self, args, ips, subnets, module):
        self.ips, self.subnets = ips, subnets
        self.top = Path(tempfile.mkdtemp(prefix="kop-bench-e2e-"))
        self.standin = self.server = None
        try:
            self._start(args, module)
        except BaseException:  # what started is stopped, and the folder removed
            self.stop()
            raise

    def _start(self, args, module):
        top = self.top
        subprocess.run([args.bench_data, str(self.ips), str(self.subnets), str(top),
                        "--ippools", str(args.ippools), "--namespaces", str(args.namespaces)]
                       + (["--selectable-ippools"] if args.selectable_ippools else []), check=True)
        self.cluster = json.loads((top / "cluster.json").read_text())
        self.requests = json.loads((top / "requests.json").read_text())
        self.by_name = {r["name"]: r for r in self.requests}
        policies, _ = load_policies(sorted(DEPLOY.glob("*.yaml")), module)
        static = policies[LISTS]
        shipped = dict(static.get("settings") or {})
        policies[I15] = copy.deepcopy(static)
        policies[I15]["namespacedName"]["Name"] += "-i15"
        static["settings"] = dict(shipped, useSubnetStatus=False)
        if args.i19_off_rows:
            policies[NO_I19] = copy.deepcopy(policies[I15])
            policies[NO_I19]["namespacedName"]["Name"] = NO_I19.removeprefix("clusterwide-")
            policies[NO_I19]["settings"] = dict(shipped, checkIPPoolNamespaces=False)
        free = self.by_name["pod-static-ip-free"]["request"]
        restart = self.by_name["pod-restart"]["request"]
        probes = [(PROBE, static["settings"], free), (PROBE_I15, shipped, free), (PROBE_RESTART, shipped, restart)]
        if FREE_NS in self.by_name:
            probes.append((PROBE_I15_NS, shipped, self.by_name[FREE_NS]["request"]))
        for pid, settings, request in probes:
            calls = host_calls(args.kop_run, module, request, self.cluster, settings, top)
            if pid == PROBE_RESTART:
                # Each restart fetches its own pod's IP object: the probe too.
                own = json.dumps(f"{restart['name']}.{restart['namespace']}")
                calls = [dict(c, payload=json.loads(json.dumps(c["payload"]).replace(own, '"{name}.{namespace}"')))
                         for c in calls]
                if "{name}" not in json.dumps(calls):
                    raise RuntimeError(f"the restart's calls do not fetch its own IP object {own}: {calls}")
            probe = copy.deepcopy(static)
            probe["namespacedName"]["Name"] = pid.removeprefix("clusterwide-")
            probe["module"] = f"file://{Path(args.probe).resolve()}"
            probe["settings"] = {"calls": calls}
            policies[pid] = probe
            if pid in (PROBE_I15, PROBE_I15_NS):
                which = "(its namespace's subnet, I5)" if pid == PROBE_I15_NS else "(logical_switch)"
                print(f"bench-e2e: the free static-IP pod's host calls as shipped {which}, {args.ippools} IPPools, "
                      f"{args.namespaces} Namespaces: {len(calls)}: " + "; ".join(describe_call(c) for c in calls),
                      flush=True)
        self.probe_calls = {pid: len(policies[pid]["settings"]["calls"]) for pid in (PROBE, PROBE_I15, PROBE_RESTART)}
        self.pid_of = {r["name"]: "clusterwide-" + r["policy"] for r in self.requests}
        cert, key = self_signed(top)
        self.policies, self.cert, self.key, self.others = policies, cert, key, []
        if args.apiserver == KUBE_APISERVER:
            from e2e.harness.kube_apiserver import KubeApiServer  # only this mode needs PyYAML and the control plane
            self.standin = KubeApiServer(top, self.cluster, connections=args.load_connections or 16,
                                         log=lambda line: print(f"bench-e2e: {line}", flush=True))
            self.latency = "no injected API latency (the stand-in's --delay-*-ms do not apply): kube-apiserver's own"
        else:
            self.standin = RemoteStandIn(top, self.cluster, args.delay_get_ms, args.delay_list_ms)
            self.latency = f"API latency {args.delay_get_ms} ms per GET, {args.delay_list_ms} ms per LIST"
        self.server = PolicyServer(args.policy_server, top, policies, None, cert, key, standin=self.standin,
                                   workers=args.workers, backtrace=False)
        self.target = Target(self.server.port, self.server.context, lambda pid: f"/validate/{pid}")
        self.processes = dict(self.standin.processes(), **{"policy-server": self.server.proc.pid})
        print(f"bench-e2e: {self.ips} IPs in {self.subnets} subnet{'s' if self.subnets != 1 else ''}, served by the "
              f"{self.standin.name}; {self.latency}; policy-server ready in {self.server.startup:.2f} s, "
              f"{args.workers} workers; probe calls {self.probe_calls[PROBE]} (lists), "
              f"{self.probe_calls[PROBE_I15]} (I15), {self.probe_calls[PROBE_RESTART]} (I15 restart)", flush=True)

    def body(self, name, pid=None):
        return pid or self.pid_of[name], review_body(self.by_name[name]["request"])

    def restarts(self, pid):
        """The StatefulSet pods of subnet 0, each re-created at the address its own IP object holds."""
        template = self.by_name["pod-restart"]["request"]
        name = template["name"]
        address = template["object"]["metadata"]["annotations"]["ovn.kubernetes.io/ip_address"]
        first = int(ipaddress.IPv4Address(address)) - int(name.rsplit("-", 1)[1])
        text = json.dumps(template)
        held = min(self.ips // max(1, self.subnets), 20_000)
        return [(pid, review_body(json.loads(
            text.replace(f'"{name}"', f'"web-0-{i}"').replace(f'"{address}"', f'"{ipaddress.IPv4Address(first + i)}"'))))
            for i in range(held)]

    def other_server(self, args, binary, label):
        """Another policy-server binary with the same policies over the same API server: its own
        folder, port, watch caches and process."""
        folder = self.top / label
        folder.mkdir()
        server = PolicyServer(binary, folder, self.policies, None, self.cert, self.key, standin=self.standin,
                              workers=args.workers, backtrace=False)
        self.others.append(server)
        print(f"bench-e2e: {label} policy-server {binary} ready in {server.startup:.2f} s", flush=True)
        return server, Target(server.port, server.context, lambda pid: f"/validate/{pid}")

    def stop(self):
        for other in getattr(self, "others", []):
            stop_process(other.proc)
        if self.server is not None:
            self.server.stop()
        elif self.standin is not None:
            self.standin.stop()
        shutil.rmtree(self.top, ignore_errors=True)


class Upstream:
    """kube-ovn-webhook (built by hand from Kube-OVN at cases.UPSTREAM_COMMIT, outside this
    repository) against the phase's kube-apiserver, with its own informer cache."""

    def __init__(self, binary, phase):
        from e2e.harness.upstream import CERT_DIR, Webhook, webhook_certificate
        webhook_certificate()
        self.webhook = Webhook(binary, phase.standin.cp.kubeconfig, phase.top)
        self.webhook.ensure("")
        self.target = Target(self.webhook.port, ssl.create_default_context(cafile=str(CERT_DIR / "tls.crt")),
                             lambda _pid: "/validating")
        self.pid = self.webhook.proc.pid

    def stop(self):
        self.webhook.stop()


class Runner:
    """Measures request kinds in interleaved rounds and checks every answer."""

    def __init__(self, phase, args):
        self.phase, self.args = phase, args
        self.failures, self.stalled_elsewhere, self.notes = [], [], []
        self.results = {}  # key -> [round results]
        self.upstream = None  # kube-ovn-webhook, where start_upstream started it
        self.pids = {}  # the processes measured besides the policy-server, by name

    def check(self, name, answers, who="policy"):
        want = self.phase.by_name[name]["allowed"]
        wrong = [a for a in answers if a.get("allowed") != want]
        if wrong and who == "policy":
            self.failures.append(f"{name}: {len(wrong)} answers not allowed={want}, e.g. {wrong[0]}")
        elif wrong:
            self.notes.append(f"{who} answered {name} allowed={wrong[0].get('allowed')} "
                              f"({len(wrong)} of {len(answers)}): {wrong[0].get('status')}")

    def warm(self, name, bodies, target=None, who="policy"):
        """A few requests on every connection the loads use, answers checked, figures dropped."""
        c = max(self.args.concurrency)
        self.check(name, load(target or self.phase.target, bodies, c, 2 * c, self.args.stall_s)[2], who)

    def run(self, key, name, bodies, c, count, target=None, process="policy-server", start=0, who="policy"):
        """One load; its figures appended to `key`'s rounds."""
        phase = self.phase
        target = target or phase.target
        processes = phase.processes if process == "policy-server" else {process: self.pids[process]}
        before, cpu_before = api_requests(phase.standin), cpu_seconds(processes)
        lat, wall, answers, errors, stalled = load(target, bodies, c, count, self.args.stall_s, start)
        cpu = cpu_seconds(processes)[process] - cpu_before[process]
        self.failures += [f"{key} c={c}: {e}" for e in errors[:3]]
        self.check(name, answers, who)
        if stalled:
            self.stalled_elsewhere.append((f"{key} c={c}", len(stalled)))
        figures = {
            "p50": percentile(lat, 0.5) * 1000, "p99": percentile(lat, 0.99) * 1000,
            "rps": len(lat) / wall, "cpu_ms": cpu * 1000 / max(1, len(lat)),
            "api": (api_requests(phase.standin) - before) / max(1, len(lat)),
        }
        self.results.setdefault((key, c), []).append(figures)
        return figures

    def rounds(self, plan, rounds):
        """`plan`: (key, name, bodies, count, kwargs); every key at every concurrency, round after round."""
        offsets = {}
        for _ in range(rounds):
            for key, name, bodies, count, kwargs in plan:
                for c in self.args.concurrency:
                    start = offsets.get(key, 0)
                    self.run(key, name, bodies, c, count, start=start, **kwargs)
                    offsets[key] = start + count

    def summary(self, key, c):
        """Medians over the rounds: p50, p99, req/s, CPU ms per decision, API requests per decision."""
        rs = self.results.get((key, c), [])
        return {f: median([r[f] for r in rs]) for f in ("p50", "p99", "rps", "cpu_ms", "api")}

    def table(self, keys):
        print(f"| request | concurrency | p50 ms | p99 ms | req/s | CPU ms per decision | API requests per decision |"
              f" (medians of {self.args.rounds} interleaved rounds)")
        print("|---|---|---|---|---|---|---|")
        for key in keys:
            for c in self.args.concurrency:
                if (key, c) in self.results:
                    f = self.summary(key, c)
                    print(f"| {key} | {c} | {f['p50']:.2f} | {f['p99']:.2f} | {f['rps']:.0f} | "
                          f"{f['cpu_ms']:.2f} | {f['api']:.3f} |")

    def report(self):
        for f in self.failures:
            print(f"FAIL {f}")
        for n in self.notes:
            print(f"note: {n}")
        if self.stalled_elsewhere:
            print("stalled besides the first touch: " + ", ".join(f"{what} {n}" for what, n in self.stalled_elsewhere))


def start_upstream(args, phase, runner):
    """kube-ovn-webhook beside the policy-server, or None with the reason printed."""
    if not args.upstream:
        print("SKIPPED: upstream side by side: no kube-ovn-webhook (KUBE_OVN_WEBHOOK or --upstream; built by hand "
              "from Kube-OVN's source, docs/fidelity.md)")
        return None
    if args.apiserver != KUBE_APISERVER:
        print("SKIPPED: upstream side by side: kube-ovn-webhook's informers need a real API server "
              "(BENCH_E2E_APISERVER=kube-apiserver)")
        return None
    upstream = runner.upstream = Upstream(args.upstream, phase)
    runner.pids["kube-ovn-webhook"] = upstream.pid
    # Its informers fill on the first request (controller-runtime's lazy cache).
    started = time.perf_counter()
    client = Client(upstream.target, 120)
    client.review("", phase.body("pod-static-ip-free")[1])
    print(f"kube-ovn-webhook: first answer (its informers filled) after {time.perf_counter() - started:.1f} s")
    return upstream


class Churn:
    """IP objects of the hot subnet created through kube-apiserver, `per_s` a second, each
    followed by the delete of the one created 16 before: two watch events per creation for every
    cache of the subnet's IP objects, at addresses no request asks for and no object holds."""

    LIVE = 16

    def __init__(self, phase, per_s):
        from e2e.harness.kube_apiserver import Connection
        from e2e.harness.replay import clean, resource_path
        self.per_s, self.clean, self.path = per_s, clean, resource_path
        self.conn = Connection(phase.standin.cp.url, phase.standin.cp.ssl_context())
        self.template = phase.cluster["ips"][0]
        subnet = self.template["spec"]["subnet"]
        cidr = next(s["spec"]["cidrBlock"] for s in phase.cluster["subnets"] if s["metadata"]["name"] == subnet)
        taken = {ip["spec"].get("ipAddress") for ip in phase.cluster["ips"]}
        taken |= set(re.findall(r"\d+\.\d+\.\d+\.\d+", json.dumps(phase.requests)))
        top = ipaddress.ip_network(cidr).broadcast_address
        self.free = [str(a) for a in (top - k for k in range(1, 4 * self.LIVE + 200)) if str(a) not in taken]
        self.free = self.free[:4 * self.LIVE]
        self.created = self.writes = 0
        self.errors = []
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _ip(self, i):
        obj = self.clean(copy.deepcopy(self.template))
        name = f"churn-{i}"
        obj["metadata"]["name"] = f"{name}.default"
        obj["metadata"].pop("finalizers", None)  # no kube-ovn-controller here to remove it on delete
        address = self.free[i % len(self.free)]
        obj["spec"].update(podName=name, ipAddress=address, v4IpAddress=address,
                           macAddress=f"00:00:00:ff:{i // 256 % 256:02x}:{i % 256:02x}")
        return obj

    def _write(self, method, path, body=None):
        code, raw = self.conn.request(method, path, body)
        self.writes += 1
        if code not in (200, 201):
            self.errors.append(f"{method} {path}: {code} {raw[:200]!r}")

    def _run(self):
        api = self.path("kubeovn.io/v1", "ips", None)
        started = time.monotonic()
        while not self.stopping.is_set() and len(self.errors) < 5:
            i = self.created
            self._write("POST", api, self._ip(i))
            if i >= self.LIVE:
                self._write("DELETE", self.path("kubeovn.io/v1", "ips", None, f"churn-{i - self.LIVE}.default"))
            self.created += 1
            self.stopping.wait(max(0.0, started + self.created / self.per_s - time.monotonic()))

    def __enter__(self):
        self.started = time.monotonic()
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stopping.set()
        self.thread.join(30)
        self.seconds = time.monotonic() - self.started
        for i in range(max(0, self.created - self.LIVE), self.created):  # the cluster as it was
            self._write("DELETE", self.path("kubeovn.io/v1", "ips", None, f"churn-{i}.default"))
        self.conn.close()


def churn_rows(args, phase, runner, plan, count):
    """The conflict and the free pod (lists) again, on each server, while IP objects churn."""
    if args.apiserver != KUBE_APISERVER:
        print("SKIPPED: churn: IP objects are written through a real API server (--apiserver kube-apiserver)")
        return {}
    keys = {"pod-static-ip-conflict", "pod-static-ip-free", "patched pod-static-ip-conflict",
            "patched pod-static-ip-free", "patched i15 conflict", "i15 conflict, same rounds"}
    rows = [(f"{key}, churn", name, bodies, n, kw) for key, name, bodies, n, kw in plan if key in keys]
    with Churn(phase, args.churn) as churn:
        runner.rounds(rows, args.rounds)
    runner.table([key for key, *_ in rows])
    rate = churn.created / churn.seconds
    print(f"churn: {churn.created} IP objects created ({rate:.1f}/s) and {churn.writes - churn.created} deleted "
          f"in {churn.seconds:.0f} s; errors: {churn.errors[:2] or 'none'}", flush=True)
    if churn.errors:
        runner.failures.append(f"churn: {churn.errors[0]}")
    figures = {"per_s": f"{rate:.1f}"}
    for key, *_ in rows:
        got = runner.summary(key, 1)
        figures[key.replace(", churn", "").replace(" ", "_").replace(",", "") + "_p50/p99"] = \
            f"{got['p50']:.2f}/{got['p99']:.2f}"
    return figures


def patched_server(args, phase, runner):
    """The --patched policy-server beside the phase's: the `run` arguments that measure it."""
    server, target = phase.other_server(args, args.patched, "patched")
    runner.pids[PATCHED] = server.proc.pid
    return {"target": target, "process": PATCHED}


def first_request(runner, name, pid=None):
    """The first decision of a kind: its caches are created (ms), or None when it stalled."""
    phase = runner.phase
    client = Client(phase.target, runner.args.stall_s)
    started = time.perf_counter()
    try:
        runner.check(name, [client.review(*phase.body(name, pid))])
    except Stalled:
        return None
    return (time.perf_counter() - started) * 1000


@contextlib.contextmanager
def measured(args, ips, subnets, module):
    """A phase and its runner; on the way out kube-ovn-webhook, where it was started, and the phase stopped."""
    phase = Phase(args, ips, subnets, module)
    runner = Runner(phase, args)
    try:
        yield phase, runner
    finally:
        if runner.upstream:
            runner.upstream.stop()
        phase.stop()


def spread_phase(args, module):
    """The spread cluster (default 10 000 IPs in 1 000 subnets): every request kind,
    the probe, a first touch of every subnet and the spread steady state."""
    with measured(args, args.ips, args.subnets, module) as (phase, runner):
        cpu_start = cpu_seconds(phase.processes)
        first_ms = first_request(runner, "pod-static-ip-free")
        if first_ms is None:
            runner.stalled_elsewhere.append(("the first request", 1))
        plan = []
        for r in phase.requests:
            name = r["name"]
            plan.append((name, name, [phase.body(name)], args.requests // args.rounds, {}))
        plan.insert(2, ("probe", "pod-static-ip-free", [phase.body("pod-static-ip-free", PROBE)],
                        args.requests // args.rounds, {}))
        plan.insert(3, ("i15 free", "pod-static-ip-free", [phase.body("pod-static-ip-free", I15)],
                        args.requests // args.rounds, {}))
        plan.insert(4, ("i15 probe", "pod-static-ip-free", [phase.body("pod-static-ip-free", PROBE_I15)],
                        args.requests // args.rounds, {}))
        if FREE_NS in phase.by_name:
            # As shipped (I15), beside its probe; not with the lists.
            plan = [p for p in plan if p[0] != FREE_NS]
            plan.insert(5, ("i15 free ns", FREE_NS, [phase.body(FREE_NS, I15)], args.requests // args.rounds, {}))
            plan.insert(6, ("i15 probe ns", FREE_NS, [phase.body(FREE_NS, PROBE_I15_NS)],
                            args.requests // args.rounds, {}))
            if args.i19_off_rows:
                plan.insert(7, ("no-i19 free ns", FREE_NS, [phase.body(FREE_NS, NO_I19)],
                                args.requests // args.rounds, {}))
        if args.i19_off_rows:
            plan.insert(5, ("no-i19 free", "pod-static-ip-free", [phase.body("pod-static-ip-free", NO_I19)],
                            args.requests // args.rounds, {}))
        beside = []
        if args.patched:  # the common path on the patched runtime, in the same rounds
            kw = patched_server(args, phase, runner)
            beside = [(f"patched {key}", name, bodies, n, kw) for key, name, bodies, n, _ in plan
                      if key in ("floor", "i15 free", "i15 probe", "i15 free ns", "no-i19 free")]
        for key, name, bodies, _, kw in plan + beside:
            runner.warm(name, bodies, kw.get("target"))
        runner.rounds(plan + beside, args.rounds)
        watches = phase.standin.stats.snapshot()["watches_open"]
        runner.table([key for key, *_ in plan + beside])
        if beside:
            c1 = min(args.concurrency)
            print(f"bench-e2e: patched common ippools={args.ippools} namespaces={args.namespaces} c={c1} "
                  "(stock/patched p50 ms) "
                  + " ".join(f"{key[8:].replace(' ', '_')}={runner.summary(key[8:], c1)['p50']:.2f}/"
                             f"{runner.summary(key, c1)['p50']:.2f}" for key, *_ in beside)
                  + f" apiserver={phase.standin.name}", flush=True)
        print(f"watches held after the steady-state runs: {watches}")

        # First touch of many subnets (cold watch caches), then the spread
        # steady state: every request a static-IP pod in another subnet, each
        # with a free address of its own subnet (bench-data's layout: subnet j
        # is 10.0.0.0 + j * 2^14 /18, its IPs from .2 on), to the policy as
        # shipped (I15: the Subnet's cache, no IP-object cache).
        touch = args.subnets if args.touch_subnets is None else args.touch_subnets
        stalled_touch = []
        free = phase.by_name["pod-static-ip-free"]
        if touch:
            base = json.dumps(free["request"])
            free_ip = free["request"]["object"]["metadata"]["annotations"]["ovn.kubernetes.io/ip_address"]

            def in_subnet(j):
                address = str(ipaddress.IPv4Address(int(ipaddress.IPv4Address(free_ip)) + (j << 14)))
                req = base.replace('"subnet-0"', f'"subnet-{j}"').replace(f'"{free_ip}"', f'"{address}"')
                return I15, review_body(json.loads(req))

            bodies = [in_subnet(j) for j in range(touch)]
            before = api_requests(phase.standin)
            cpu_before = cpu_seconds(phase.processes)
            c = max(args.concurrency)
            lat, wall, answers, errors, stalled_touch = load(phase.target, bodies, c, touch, args.stall_s)
            cpu_touch = cpu_used(cpu_before, cpu_seconds(phase.processes))
            runner.failures += [f"first touch: {e}" for e in errors[:3]]
            runner.check("pod-static-ip-free", answers)
            print(
                f"first touch of {touch} subnets: p50 {percentile(lat, 0.5) * 1000:.1f} ms, "
                f"p99 {percentile(lat, 0.99) * 1000:.1f} ms, max {max(lat, default=0) * 1000:.0f} ms, "
                f"{len(errors)} failed, {len(stalled_touch)} stalled (no answer in {args.stall_s:g} s"
                f"{': subnet-' + ', subnet-'.join(map(str, sorted(stalled_touch)[:10])) if stalled_touch else ''}), "
                f"{(api_requests(phase.standin) - before) / max(1, len(lat)):.2f} API requests "
                f"per decision, watches held {phase.standin.stats.snapshot()['watches_open']}"
            )
            print(f"CPU used in the first touch ({wall:.1f} s): {cpu_touch}")
            if args.spread_requests:
                before = api_requests(phase.standin)
                lat, wall, answers, errors, stalled = load(phase.target, bodies, c, args.spread_requests,
                                                           args.stall_s)
                runner.failures += [f"spread: {e}" for e in errors[:3]]
                runner.check("pod-static-ip-free", answers)
                if stalled:
                    runner.stalled_elsewhere.append(("spread", len(stalled)))
                spread = (percentile(lat, 0.5) * 1000, percentile(lat, 0.99) * 1000,
                          (api_requests(phase.standin) - before) / max(1, len(lat)), len(lat) / wall)
                print(
                    f"spread steady state, {args.spread_requests} requests over {touch} subnets at concurrency "
                    f"{c}: p50 {spread[0]:.2f} ms, p99 {spread[1]:.2f} ms, {spread[3]:.0f} req/s, "
                    f"{spread[2]:.3f} API requests per decision, watches held "
                    f"{phase.standin.stats.snapshot()['watches_open']}"
                )
        rss = peak_rss_mb(phase.server.proc.pid)
        stats = phase.standin.stats.snapshot()
        seen = "API server saw" if phase.standin.name == STAND_IN else \
            "kube-apiserver's audit log: the policy-server made"
        print(f"{seen}: {stats.get('get', 0)} GETs, {stats.get('list', 0)} LISTs, "
              f"{stats.get('watch', 0)} WATCHes; policy-server peak RSS {rss:.0f} MiB")
        print(f"CPU used since the policy-server was ready: {cpu_used(cpu_start, cpu_seconds(phase.processes))}")

        upstream = start_upstream(args, phase, runner)
        up = {}
        if upstream:
            pods = [n for n in ("pod-static-ip-free", "pod-static-ip-conflict") if n in phase.by_name]
            for n in pods:
                runner.warm(n, [phase.body(n)], upstream.target, "kube-ovn-webhook")
            runner.rounds([(f"upstream {n}", n, [phase.body(n)], args.requests // args.rounds,
                            {"target": upstream.target, "process": "kube-ovn-webhook", "who": "kube-ovn-webhook"})
                           for n in pods], args.rounds)
            runner.table([f"upstream {n}" for n in pods])
            up = {c: runner.summary("upstream pod-static-ip-free", c) for c in args.concurrency}
            print(f"kube-ovn-webhook peak RSS {peak_rss_mb(upstream.pid):.0f} MiB")
        runner.report()
        c = max(args.concurrency)
        floor = runner.summary("floor", c)["p50"]
        f = runner.summary("pod-static-ip-free", c)
        probe = runner.summary("probe", c)["p50"]
        i15 = runner.summary("i15 free", c)
        print(
            f"bench-e2e: ips={args.ips} subnets={args.subnets} c={c} floor_p50_ms={floor:.2f} p50_ms={f['p50']:.2f} "
            f"p99_ms={f['p99']:.2f} ratio={f['p50'] / floor:.2f} probe_p50_ms={probe:.2f} "
            f"module_share={(f['p50'] - probe) / f['p50']:.2f} api_requests_per_decision={f['api']:.3f} "
            f"i15_p50_ms={i15['p50']:.2f} i15_p99_ms={i15['p99']:.2f} i15_ratio={i15['p50'] / floor:.2f} "
            f"watches={watches} first_ms={first_ms or float('nan'):.0f} rss_mb={rss:.0f} "
            f"stalled={len(stalled_touch)} stalled_elsewhere={sum(n for _, n in runner.stalled_elsewhere)} "
            f"upstream_p50_ms={up[c]['p50'] if up else float('nan'):.2f} apiserver={phase.standin.name}",
            flush=True,
        )
        # The common path as shipped, at each concurrency: p50 / CPU ms per decision.
        nan = float("nan")
        common = []
        for key in ("floor", "i15 free", "i15 probe", "i15 free ns", "i15 probe ns", "no-i19 free", "no-i19 free ns"):
            for cc in args.concurrency:
                got = runner.summary(key, cc) if (key, cc) in runner.results else {"p50": nan, "p99": nan,
                                                                                   "cpu_ms": nan}
                common.append(f"{key.replace(' ', '_')}_c{cc}={got['p50']:.2f}/{got['p99']:.2f}/{got['cpu_ms']:.2f}")
        spread_figures = f"spread_c{c}={spread[0]:.2f}/{spread[1]:.2f}" if touch and args.spread_requests else ""
        print(f"bench-e2e: common ippools={args.ippools} namespaces={args.namespaces} (p50/p99/cpu ms) "
              + " ".join(common) + f" {spread_figures} apiserver={phase.standin.name}", flush=True)
        return not runner.failures


def hot_phase(args, module, ips):
    """One subnet holding every IP object (`ovn-default` of a real cluster):
    first I15 as shipped, with only free and restart requests (no IP list, no
    IP-object cache), then the conflict, then every request with the lists
    (`useSubnetStatus: false`) beside the probe."""
    count = args.hot_requests // args.rounds
    with measured(args, ips, 1, module) as (phase, runner):
        stalled = 0
        firsts = {}
        for key, name, pid in (("i15 free", "pod-static-ip-free", I15), ("i15 restart", "pod-restart", I15)):
            firsts[key] = first_request(runner, name, pid)
            stalled += firsts[key] is None
        restarts = phase.restarts(I15)
        quick = max(count, args.requests // args.rounds)
        runner.warm("pod-static-ip-free", [phase.body("pod-static-ip-free", I15)])
        runner.rounds([("i15 free", "pod-static-ip-free", [phase.body("pod-static-ip-free", I15)], quick, {}),
                       ("i15 restart", "pod-restart", restarts, quick, {})], args.rounds)
        rss_i15 = peak_rss_mb(phase.server.proc.pid)
        watches_i15 = phase.standin.stats.snapshot()["watches_open"]
        print(f"I15, free and restart only: policy-server peak RSS {rss_i15:.0f} MiB, watches held {watches_i15}, "
              f"first free {firsts['i15 free'] or float('nan'):.0f} ms, first restart "
              f"{firsts['i15 restart'] or float('nan'):.0f} ms")
        firsts["i15 conflict"] = first_request(runner, "pod-static-ip-conflict", I15)
        stalled += firsts["i15 conflict"] is None
        runner.rounds([("i15 conflict", "pod-static-ip-conflict", [phase.body("pod-static-ip-conflict", I15)],
                        count, {})], args.rounds)
        # The restart's floor in this runtime: the probe making the same two
        # host calls, each request fetching its own pod's IP object, beside
        # more rounds of the policy (after the peak RSS of I15 was read). The
        # policy-server keeps a GET's answer 5 s: each side re-creates pods
        # the other has not fetched lately.
        quarter = len(restarts) // 4
        probe_restarts = phase.restarts(PROBE_RESTART)
        gets_before = len(phase.standin.stats.get_seconds())
        runner.rounds([("i15 restart", "pod-restart", restarts[quarter:] + restarts[:quarter], quick, {}),
                       ("i15 restart probe", "pod-restart", probe_restarts[3 * quarter:] + probe_restarts[:3 * quarter],
                        quick, {})], args.rounds)
        get_ms = [s * 1000 for s in phase.standin.stats.get_seconds()[gets_before:]]

        lists = [("floor", "floor", [phase.body("floor")], quick, {}),
                 ("probe", "pod-static-ip-free", [phase.body("pod-static-ip-free", PROBE)], count, {}),
                 ("pod-static-ip-free", "pod-static-ip-free", [phase.body("pod-static-ip-free")], count, {}),
                 ("pod-restart", "pod-restart", phase.restarts(LISTS), count, {}),
                 ("pod-static-ip-conflict", "pod-static-ip-conflict", [phase.body("pod-static-ip-conflict")],
                  count, {})]
        first_lists = first_request(runner, "pod-static-ip-free")
        stalled += first_lists is None
        for key, name, bodies, _, _ in lists:
            runner.warm(name, bodies)
        # The same rows on the patched policy-server, in the same rounds.
        beside = []
        if args.patched:
            kw = patched_server(args, phase, runner)
            conflict_i15 = [phase.body("pod-static-ip-conflict", I15)]
            beside = [("i15 conflict, same rounds", "pod-static-ip-conflict", conflict_i15, count, {}),
                      ("patched i15 conflict", "pod-static-ip-conflict", conflict_i15, count, kw)]
            beside += [(f"patched {key}", name, bodies, n, kw) for key, name, bodies, n, _ in lists]
            for key, name, bodies, _, kw_ in beside:
                runner.warm(name, bodies, kw_.get("target"))
        runner.rounds(lists + beside, args.rounds)
        rss = peak_rss_mb(phase.server.proc.pid)
        runner.table(["i15 free", "i15 restart", "i15 restart probe", "i15 conflict"] + [key for key, *_ in lists]
                     + [key for key, *_ in beside])
        churned = churn_rows(args, phase, runner, lists + beside, count) if args.churn else {}
        print(f"with the lists too: policy-server peak RSS {rss:.0f} MiB, watches held "
              f"{phase.standin.stats.snapshot()['watches_open']}, first free (lists) "
              f"{first_lists or float('nan'):.0f} ms")

        upstream = start_upstream(args, phase, runner)
        up = {}
        if upstream:
            kw = {"target": upstream.target, "process": "kube-ovn-webhook", "who": "kube-ovn-webhook"}
            for n in ("pod-static-ip-free", "pod-restart", "pod-static-ip-conflict"):
                runner.warm(n, [phase.body(n)], upstream.target, "kube-ovn-webhook")
            runner.rounds([("upstream free", "pod-static-ip-free", [phase.body("pod-static-ip-free")], count, kw),
                           ("upstream restart", "pod-restart", phase.restarts(LISTS), count, kw),
                           ("upstream conflict", "pod-static-ip-conflict", [phase.body("pod-static-ip-conflict")],
                            count, kw)], args.rounds)
            runner.table(["upstream free", "upstream restart", "upstream conflict"])
            up = {key: runner.summary(f"upstream {key}", 1)["p50"] for key in ("free", "restart", "conflict")}
            print(f"kube-ovn-webhook peak RSS {peak_rss_mb(upstream.pid):.0f} MiB")
        runner.report()
        nan = float("nan")
        f, floor, probe = (runner.summary(k, 1) for k in ("pod-static-ip-free", "floor", "probe"))
        c8 = runner.summary("pod-static-ip-free", max(args.concurrency))
        print(
            f"bench-e2e: ips={ips} subnets=1 c=1 floor_p50_ms={floor['p50']:.2f} p50_ms={f['p50']:.2f} "
            f"p99_ms={f['p99']:.2f} ratio={f['p50'] / floor['p50']:.2f} probe_p50_ms={probe['p50']:.2f} "
            f"module_share={(f['p50'] - probe['p50']) / f['p50']:.2f} cpu_ms={f['cpu_ms']:.1f} "
            f"probe_cpu_ms={probe['cpu_ms']:.1f} restart_p50_ms={runner.summary('pod-restart', 1)['p50']:.2f} "
            f"conflict_p50_ms={runner.summary('pod-static-ip-conflict', 1)['p50']:.2f} "
            f"c8_p50_ms={c8['p50']:.2f} c8_p99_ms={c8['p99']:.2f} rss_mb={rss:.0f} stalled={stalled} "
            f"upstream_p50_ms={up.get('free', nan):.2f} apiserver={phase.standin.name}",
            flush=True,
        )
        if args.patched:
            pr = {key: runner.summary(key, 1)["p50"] for key, *_ in lists + beside}
            pc8 = {key: runner.summary(key, max(args.concurrency))["p50"] for key, *_ in lists + beside}
            print(
                f"bench-e2e: patched ips={ips} subnets=1 c=1 (stock/patched p50 ms) "
                + " ".join(f"{key.replace(' ', '_')}={pr[key]:.2f}/{pr['patched ' + key]:.2f}"
                           for key, *_ in lists)
                + f" i15_conflict={pr['i15 conflict, same rounds']:.2f}/{pr['patched i15 conflict']:.2f}"
                + f" c{max(args.concurrency)}_conflict={pc8['pod-static-ip-conflict']:.2f}/"
                  f"{pc8['patched pod-static-ip-conflict']:.2f}"
                + f" rss_mb={rss:.0f}/{peak_rss_mb(runner.pids[PATCHED]):.0f}"
                + "".join(f" churn_{k}={v}" for k, v in churned.items())
                + f" upstream_conflict_p50_ms={up.get('conflict', nan):.2f} apiserver={phase.standin.name}",
                flush=True,
            )
        print(
            f"bench-e2e: i15 ips={ips} subnets=1 "
            f"free_p50_ms={runner.summary('i15 free', 1)['p50']:.2f} "
            f"restart_p50_ms={runner.summary('i15 restart', 1)['p50']:.2f} "
            f"restart_probe_p50_ms={runner.summary('i15 restart probe', 1)['p50']:.2f} "
            f"apiserver_get_p50_ms={percentile(get_ms, 0.5):.2f} "
            f"conflict_p50_ms={runner.summary('i15 conflict', 1)['p50']:.2f} rss_mb={rss_i15:.0f} "
            f"watches={watches_i15} upstream_free_p50_ms={up.get('free', nan):.2f} "
            f"upstream_restart_p50_ms={up.get('restart', nan):.2f} apiserver={phase.standin.name}",
            flush=True,
        )
        return not runner.failures


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("policy", help="the annotated module")
    parser.add_argument("--ips", type=int, default=10_000, help="the spread cluster's IP objects (0: no spread phase)")
    parser.add_argument("--subnets", type=int, default=1_000, help="the spread cluster's subnets")
    parser.add_argument("--hot-ips", type=int, nargs="*", default=[10_000],
                        help="one hot-subnet phase per size: every IP object in one subnet (none: no hot phase)")
    parser.add_argument("--requests", type=int, default=2_000,
                        help="per request kind and concurrency, over all rounds (spread phase; I15's free and "
                             "restart in the hot phase)")
    parser.add_argument("--hot-requests", type=int, default=150,
                        help="per request kind and concurrency over all rounds, hot phase, where a decision "
                             "reads the subnet's IP objects")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds; medians over them are reported")
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
    parser.add_argument("--ippools", type=int, default=1_000,
                        help="IPPools in the generated clusters (bench-data: in turn over the subnets)")
    parser.add_argument("--selectable-ippools", action="store_true",
                        help="the IPPool CRD declares spec.subnet selectable (kube-apiserver: the installed CRD "
                             "amended): the policy lists the free pod's subnet's IPPools alone (I19)")
    parser.add_argument("--namespaces", type=int, default=0,
                        help="Namespaces in the generated clusters besides the API server's own (bench-data: "
                             "annotated as kube-ovn-controller annotates them)")
    parser.add_argument("--i19-off-rows", action=argparse.BooleanOptionalAction, default=True,
                        help="also the free pods with checkIPPoolNamespaces: false (no IPPool read); "
                             "--no-i19-off-rows for a module older than I19, which refuses the setting")
    parser.add_argument("--workers", type=int, default=2, help="policy-server worker threads")
    parser.add_argument("--stall-s", type=float, default=DEFAULT_STALL_S,
                        help="a request with no answer by then is stalled: given up and counted, not failed "
                             f"(default {DEFAULT_STALL_S:g}: deploy/'s webhook timeoutSeconds)")
    parser.add_argument("--touch-subnets", type=int, default=None,
                        help="first touch of this many subnets (default: all)")
    parser.add_argument("--spread-requests", type=int, default=4_000,
                        help="after the first touch: requests round robin over the touched subnets")
    parser.add_argument("--policy-server", default="policy-server")
    parser.add_argument("--patched", default=os.environ.get("POLICY_SERVER_PATCHED") or None,
                        help="a second policy-server binary (built by hand with a runtime change), measured beside "
                             "the first on the hot phase's list rows (default: $POLICY_SERVER_PATCHED)")
    parser.add_argument("--churn", type=float, default=0,
                        help="kube-apiserver only: IP objects created (and older ones deleted) per second in the "
                             "hot subnet while the list rows are measured again")
    parser.add_argument("--upstream", default=os.environ.get("KUBE_OVN_WEBHOOK") or shutil.which("kube-ovn-webhook"),
                        help="kube-ovn-webhook, measured beside the policy (with --apiserver kube-apiserver)")
    parser.add_argument("--bench-data", default=str(ROOT / "target/host/bench-data"))
    parser.add_argument("--kop-run", default=str(ROOT / "target/host/kop-run"))
    parser.add_argument("--probe", default=str(ROOT / "target/probe-policy.wasm"),
                        help="the probe policy, annotated (make bench-e2e builds it)")
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
    if args.rounds < 1:
        parser.error("--rounds: at least 1")
    if any(n < 10 for n in args.hot_ips):
        parser.error("--hot-ips: at least 10 IP objects in the hot subnet (none: no hot phase)")
    for binary in (args.policy_server, args.patched):
        if binary and shutil.which(binary) is None:
            sys.exit(f"{binary}: not found")
    module = Path(args.policy).resolve()
    started = time.monotonic()
    ok = True
    if args.ips:
        ok &= spread_phase(args, module)
    for ips in args.hot_ips:
        ok &= hot_phase(args, module, ips)
    print(f"bench-e2e: done in {time.monotonic() - started:.0f} s")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
