"""The policies of deploy/ in a real policy-server, over TLS.

For every example of test_data/examples.txt: the example's cluster is served
by the API server stand-in (e2e/harness/apiserver.py); a policy-server is started on
127.0.0.1 with a throwaway self-signed certificate and a policies.yml made
from the ClusterAdmissionPolicies of deploy/, byte for byte as the Kubewarden
controller writes it (e2e/harness/webhooks.py) but for the module, the local file;
the example's AdmissionReview is POSTed over HTTPS (the certificate verified) to
/validate/<id> of the policy whose rules match the request.

The answer must equal kwctl's for the same request, settings and cluster
(kwctl is checked against every conformance case by e2e/suites/test_conformance_kwctl.py),
and the case's expectation where the case's settings are the deployed ones.
Examples that share a cluster share a policy-server. Each example is a
check.

One test, parametrized over the server binary: Kubewarden's `policy-server`
(on PATH, with kwctl: `make e2e-policy-server`, `-k policy-server`), or this
repository's stand-in for it, `kop-serve` (`cargo build --profile host -p
kop-serve`, target/host/kop-serve: `make e2e-kop-serve`, `-k kop-serve`),
which takes the same command line and policies.yml. policy-server runs
annotated-policy.wasm, kop-serve policy.wasm (`--policy` names another).
Where kwctl is not on PATH (or the module is not annotated, which kwctl
needs), the reference answer is `kop-run`'s (our waPC host, lookups answered
from the case's cluster) instead of kwctl's. With kop-serve the stand-in
serves HTTPS with the throwaway certificate (the kubeconfig carries it as
`certificate-authority-data`) and requires the kubeconfig's bearer token.

Besides the examples, checks of the server's own protocol, each one line
like an example: an unknown policy id, a body that is not JSON, not labelled
JSON, not an AdmissionReview, over 2 MiB, a GET; copies of the policy of the
first example in monitor mode, without contextAwareResources, without
hostCapabilities, with a custom rejection message; and, for kop-serve only, a list the API server forbids (policy-server waits
for it without end; kop-serve until the policy's `timeoutEvalSeconds`, then
answers as an evaluation that ran out of time).

kop-serve (`make e2e-kop-serve`): policy-server is not available everywhere (not in
CI), so `kop-serve/` builds
`kop-serve`, a stand-in for it (`cargo build --profile host -p kop-serve`):
policy-server's command line (the flags this suite passes,
`--policy-timeout`, `--disable-timeout-protection` and a few more; any other
is an error) and `policies.yml`, settings validated at start-up (it refuses to
start as policy-server does), `POST /validate|/audit|/validate_raw/<id>` over
HTTPS, `GET /readiness`, and the policies' lookups answered from the API
server of `KUBECONFIG` (server, `certificate-authority-data` or `-authority`,
a bearer `token` or `tokenFile`, client certificates; else the in-cluster
ServiceAccount), the way policy-evaluator answers them: discovery,
`get_resource` cached 5 s, lists from watch caches (LIST, WATCH with
bookmarks, re-LIST on 410). Each behaviour names the policy-server or
policy-evaluator source file it follows. Both caches keep what they hold as
policy-server's do: one watch cache per distinct list for the process's life,
and every key a successful cached `get_resource` ever stored (answered from
only within 5 s; an expired key goes only when asked for again; a failed GET
and a `disable_cache` call are never stored), as `cached`'s `TimedCache` does
in 1.36 and `TtlCache` in 1.37 (adm-controller#1950;
`kop-serve/src/lookups.rs`). Kubewarden 1.38 (1.38.0-rc.1, #1952) evicts a
GET's entry after its 5 s; kop-serve keeps 1.36's and 1.37's behaviour, the
releases users run.

`make e2e-kop-serve` runs this suite with it, over TLS, with the
stand-in serving HTTPS (`--standin-tls`: the throwaway certificate as the
kubeconfig's `certificate-authority-data`, and a token it requires). The
reference answer is kwctl's where kwctl is on `PATH` and the module annotated,
otherwise `kop-run`'s (our waPC host, answering from the case's cluster). One
more check runs for kop-serve only: a list the API server forbids: no answer
within `timeoutEvalSeconds` + 4 s. policy-server waits for such a list without
end (below; its deadline cannot interrupt a host call); kop-serve waits a
minute past the deadline, longer than any webhook timeout, so the API server
sees the same (`make e2e-cluster`, test `rbac`: `context deadline exceeded`
after 10 s with either). A LIST that is slow but has not failed is waited for
as long as it takes, as policy-server waits. As in policy-server, a watch
cache is kept once it has filled, and every list that finds none filled starts
another one.

What kop-serve does not do: policy groups, modules other than `file://`, the
`oci`, `net`, `crypto` and `kubernetes/can_i` host capabilities (they fail),
metrics, tracing, mTLS, the policy metadata checks (it also runs a module
`kwctl annotate` has not annotated), kubeconfig `exec` plugins. A mutation is
passed on as one `replace` of the whole object rather than json-patch's diff.
An evaluation holds its worker until it ends, even when its caller has gone
(policy-server frees the worker when the caller disconnects). Each watch cache
is a thread of its own (policy-server's are tokio tasks): past about 16 000
watches on this machine no thread can be started, lookups or connections
needing one fail, and kop-serve may abort.
"""

import concurrent.futures
import json
import os
import shutil
import subprocess
import tempfile
import time
import types
from pathlib import Path

import pytest

from e2e.harness import DEPLOY, ROOT
from e2e.harness.apiserver import Cluster, StandIn
from e2e.harness.cases import compare
from e2e.harness.certificates import self_signed
from e2e.harness.servers import PolicyServer, load_policies, route


def kop_run_answer(kop_run, module, folder, request, settings, cluster_json, forbidden):
    """kop-run's answer (our waPC host, lookups answered from the cluster objects)."""
    case = {"request": request, "cluster": cluster_json, "forbidden": list(forbidden)}
    (folder / "case.json").write_text(json.dumps(case))
    done = subprocess.run(
        [kop_run, str(module), "-r", str(folder / "case.json"), "--settings-json", json.dumps(settings)],
        capture_output=True, text=True, timeout=120,
    )
    if done.returncode != 0:
        raise RuntimeError(f"kop-run exited {done.returncode}: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


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


# What policy-server 1.36 answers, measured with it (kop-serve must answer the same).
UNKNOWN_POLICY = "kop-e2e-no-such-policy"
MONITOR_POLICY = "kop-e2e-monitor"
NO_GRANTS_POLICY = "kop-e2e-no-context-aware-resources"
NO_CAPABILITIES_POLICY = "kop-e2e-no-host-capabilities"
CUSTOM_MESSAGE_POLICY = "kop-e2e-custom-message"
CUSTOM_MESSAGE = "kop-e2e: rejected"


# The servers: (binary, module, the stand-in over HTTPS with a token).
SERVERS = {
    "kop-serve": (str(ROOT / "target/host/kop-serve"), ROOT / "policy.wasm", True),
    "policy-server": ("policy-server", ROOT / "annotated-policy.wasm", False),
}


@pytest.mark.parametrize("server", [
    pytest.param("kop-serve", id="kop-serve"),
    pytest.param("policy-server", id="policy-server", marks=pytest.mark.requires("kwctl", "policy-server")),
])
def test_the_examples_through_the_server(server, checks, request):
    binary, module, standin_tls = SERVERS[server]
    policy = request.config.getoption("policy")
    examples(checks.check, types.SimpleNamespace(
        policy=policy or module, server=binary, standin_tls=standin_tls,
        deploy=sorted(str(p) for p in DEPLOY.glob("*.yaml")), examples=str(ROOT / "test_data/examples.txt"),
        kwctl="kwctl", reference="auto", kop_run=str(ROOT / "target/host/kop-run"), jobs=2,
    ))


def examples(check, args):
    """Every example and protocol check through `args.server`, each one `check`."""
    if shutil.which(args.server) is None:
        pytest.fail(f"{args.server}: not found")
    args.server = str(Path(shutil.which(args.server)).resolve())  # the server runs in its own folder
    module = Path(args.policy).resolve()
    reference = args.reference
    if reference == "auto":
        # kwctl runs only an annotated module (kwctl annotate writes this custom section).
        annotated = b"io.kubewarden.metadata" in module.read_bytes()
        reference = "kwctl" if shutil.which(args.kwctl) and annotated else "kop-run"
    if reference == "kwctl" and shutil.which(args.kwctl) is None:
        pytest.fail(f"{args.kwctl}: not found")
    if reference == "kop-run":
        if shutil.which(args.kop_run) is None:
            pytest.fail(f"{args.kop_run}: not found (cargo build --profile host -p testhost --bin kop-run)")
        args.kop_run = str(Path(shutil.which(args.kop_run)).resolve())
    kop_serve = "kop-serve" in Path(args.server).name

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

    # The protocol checks use the first example, a denial, and a monitor-mode
    # copy of the policy it is routed to.
    probe_name, probe = examples[0]
    probe_pid = route(probe["request"], rules)
    if probe_pid is None or (probe.get("expect") or {}).get("allowed", True):
        pytest.fail(f"the first example ({probe_name}) must be a denial by a policy of deploy/")
    policies[MONITOR_POLICY] = dict(policies[probe_pid], policyMode="monitor")
    policies[NO_GRANTS_POLICY] = dict(policies[probe_pid], contextAwareResources=[])
    policies[NO_CAPABILITIES_POLICY] = dict(policies[probe_pid], hostCapabilities=[])
    policies[CUSTOM_MESSAGE_POLICY] = dict(policies[probe_pid], message=CUSTOM_MESSAGE)

    top = Path(tempfile.mkdtemp(prefix="kop-policy-server-"))
    cert, key = self_signed(top)
    print(f"e2e-policy-server: server {args.server}, reference {reference}"
          f"{', stand-in over HTTPS with a token' if args.standin_tls else ''}", flush=True)

    def reference_answer(folder, request, settings, cluster_json, forbidden):
        if reference == "kwctl":
            return kwctl_answer(args.kwctl, module, folder, request, settings, Cluster(cluster_json, forbidden))
        return kop_run_answer(args.kop_run, module, folder, request, settings, cluster_json, forbidden)

    def start(folder, cluster_json, forbidden):
        return PolicyServer(args.server, folder, policies, Cluster(cluster_json, forbidden), cert, key,
                            standin_tls=args.standin_tls)

    def run_group(index, members):
        folder = top / f"g{index}"
        folder.mkdir()
        first = members[0][1]
        cluster_json, forbidden = first.get("cluster") or {}, first.get("forbidden") or ()
        server = start(folder, cluster_json, forbidden)
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
                theirs_all = reference_answer(folder, request, settings, cluster_json, forbidden)
                for field in ("allowed", "status", "warnings"):
                    ours, theirs = answer.get(field), theirs_all.get(field)
                    if field == "status" and answer.get("allowed"):
                        continue
                    if (ours or None) != (theirs or None):
                        problems.append(f"{field} {ours!r}, {reference} {theirs!r}")
                if case.get("expect") and (case.get("settings") or {}) == settings:
                    problems += compare(case["expect"], answer)
                results.append((name, problems, seconds, server.startup))
        except Exception as e:  # one line per example, whatever went wrong
            results += [(n, [f"{type(e).__name__}: {e}"], 0, server.startup) for n, _ in members[len(results):]]
        finally:
            server.stop()
        return results

    def protocol_checks():
        """The server's answers that are not a policy's decision."""
        folder = top / "protocol"
        folder.mkdir()
        request = probe["request"]
        review = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                             "request": request}).encode()
        checks = []
        expect = probe["expect"]
        # (name, method, path, body, content type, HTTP status, JSON answer or None for no body)
        exchanges = [
            ("protocol-unknown-policy", "POST", f"/validate/{UNKNOWN_POLICY}", review, "application/json",
             404, {"message": f"unknown policy: {UNKNOWN_POLICY}", "status": 404}),
            ("protocol-not-json", "POST", f"/validate/{probe_pid}", b"not json", "application/json",
             400, {"message": "Failed to parse the request body as JSON: expected ident at line 1 column 2",
                   "status": 400}),
            ("protocol-not-json-content-type", "POST", f"/validate/{probe_pid}", review, "text/plain",
             415, {"message": "Expected request with `Content-Type: application/json`", "status": 415}),
            ("protocol-not-an-admission-request", "POST", f"/validate/{probe_pid}", b'{"request": {"uid": "x"}}',
             "application/json", 422,
             {"message": "Failed to deserialize the JSON body into the target type: request: missing field `kind` "
                         "at line 1 column 24", "status": 422}),
            ("protocol-body-over-2-mib", "POST", f"/validate/{probe_pid}",
             b'{"request": "' + b"x" * 2_200_000 + b'"}', "application/json",
             413, {"message": "Failed to buffer the request body: length limit exceeded", "status": 413}),
            ("protocol-get", "GET", f"/validate/{probe_pid}", None, None, 405, None),
        ]
        # (name, policy id, what the answer's status must be, given the probe's own)
        decisions = [
            (MONITOR_POLICY, lambda st: st is None),
            (NO_GRANTS_POLICY, lambda st: st.get("code") == 400 and st.get("message", "").endswith(
                "Host error: Policy has not been granted access to Kubernetes v1/Namespace resources. "
                "The violation has been reported.")),
            # The probe's first lookup is its Namespace's GET (I5).
            (NO_CAPABILITIES_POLICY, lambda st: st.get("code") == 400 and st.get("message", "").endswith(
                "Host error: Policy has not been granted access to the 'kubernetes/get_resource' host "
                "capability. The violation has been reported.")),
            (CUSTOM_MESSAGE_POLICY, lambda st: st == {
                "message": CUSTOM_MESSAGE, "code": expect["code"],
                "details": {"causes": [{"reason": None, "message": expect["message"], "field": None}]}}),
        ]
        server = start(folder, probe.get("cluster") or {}, probe.get("forbidden") or ())
        try:
            for name, method, path, body, content_type, want_status, want in exchanges:
                try:
                    status, answer = server.send(method, path, body, content_type)
                    got = json.loads(answer) if answer else None
                    checks.append((name, [] if (status, got) == (want_status, want)
                                   else [f"{status} {got!r}, expected {want_status} {want!r}"]))
                except Exception as e:
                    checks.append((name, [f"{type(e).__name__}: {e}"]))
            for pid, status_ok in decisions:
                name = "protocol-" + pid.removeprefix("kop-e2e-")
                try:
                    response, _ = server.review(pid, request)
                    problems = []
                    if response.get("uid") != request.get("uid"):
                        problems.append(f"uid {response.get('uid')!r}")
                    if response.get("allowed") is not (pid == MONITOR_POLICY) or response.get("patch") is not None:
                        problems.append(f"allowed {response.get('allowed')!r}, patch {response.get('patch')!r}")
                    if not status_ok(response.get("status") if pid == MONITOR_POLICY else response.get("status") or {}):
                        problems.append(f"status {response.get('status')!r}")
                    checks.append((name, problems))
                except Exception as e:
                    checks.append((name, [f"{type(e).__name__}: {e}"]))
        finally:
            server.stop()
        if kop_serve:
            # A list the API server forbids: the probe pod's lists (its Namespace is a GET, which
            # the API server answers at once either way, so it stays allowed).
            kinds = sorted({k for k in ("IP", "Subnet", "IPPool")
                            if {"apiVersion": "v1" if k == "Namespace" else "kubeovn.io/v1", "kind": k}
                            in policies[probe_pid]["contextAwareResources"]})
            folder = top / "forbidden"
            folder.mkdir()
            server = start(folder, probe.get("cluster") or {}, kinds)
            limit = policies[probe_pid].get("timeoutEvalSeconds") or 2
            # policy-server never answers: the evaluation waits in the host
            # call, which its deadline cannot interrupt (the API server gives
            # up at the webhook's timeout; e2e/suites/test_cluster.py's rbac test).
            body = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                               "request": request}).encode()
            try:
                status, answer = server.post(probe_pid, body, timeout=limit + 4)
                checks.append(("protocol-forbidden-list", [f"answered within {limit + 4} s: {status} {answer!r}"]))
            except TimeoutError:
                checks.append(("protocol-forbidden-list", []))
            except Exception as e:
                checks.append(("protocol-forbidden-list", [f"{type(e).__name__}: {e}"]))
            finally:
                server.stop()
        return [(name, problems, 0, 0) for name, problems in checks]

    started = time.monotonic()
    latencies, startups, total = [], [], 0
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(run_group, i, m) for i, m in enumerate(groups.values())]
        checks = pool.submit(protocol_checks)
        for fut in futures:
            for name, problems, seconds, startup in fut.result():
                total += 1
                latencies.append(seconds)
                startups.append(startup)
                check(name, not problems, "; ".join(problems))
        for name, problems, _, _ in checks.result():
            total += 1
            check(name, not problems, "; ".join(problems))
    shutil.rmtree(top, ignore_errors=True)
    latencies.sort()
    print(
        f"e2e-policy-server: {len(examples)} examples and {total - len(examples)} protocol checks, "
        f"{len(groups)} servers, median startup {sorted(startups)[len(startups) // 2]:.2f} s, "
        f"median answer {latencies[len(latencies) // 2] * 1000:.1f} ms, "
        f"wall {time.monotonic() - started:.1f} s"
    )
