#!/usr/bin/env python3
"""The whole test suite, step by step, then a summary (`make test`).

    python3 scripts/suite.py [STEP ...]

Every step is a target of the Makefile, run in this order whatever the
others gave, its output passed through. A step that exits non-zero has
failed; one that exits 0 after printing a line `SKIPPED: <test>: <why>`
was skipped (a program it needs is not on this machine), not passed,
unless it also printed a closing line `N passed, 0 failed` with N > 0:
then only a part of it was skipped (e2e-certs without the controller), it
passed, and the summary names the skipped part. The
steps that need Kubewarden's own programs (kwctl, policy-server, the
controller, audit-scanner) or Kube-OVN's kube-ovn-controller are the only
ones that may skip; everything else runs wherever `make test` runs.

The last line is `test: N passed, N failed, N skipped`; the exit status is
1 when a step failed.
"""

import re
import subprocess
import sys
import time

# (step, what it proves)
STEPS = [
    ("fmt", "rustfmt"),
    ("lint", "the layer rule, clippy -D warnings (native and wasm)"),
    ("lint-workflows", "actionlint on .github/workflows"),
    ("unit-tests", "the policy's unit and property tests"),
    ("gojson-diff", "upstream/go_json.rs against Go's encoding/json, nadutils and loadNetConf on 100 000 generated inputs"),
    ("host-tests", "the compiled module in our waPC host: every conformance case, sessions, bounds, metadata"),
    ("fidelity", "every case's answer against kube-ovn-webhook's recorded one, docs/differences.md against the records"),
    ("allocator-replay", "tests/allocator: kube-ovn-controller's own allocation in every order it took, recorded by "
     "make allocator-diff, held against the policy's answers"),
    ("fuzz-smoke", "every fuzz target from its seeds"),
    ("bench-quick", "every benchmark scenario's answer"),
    ("validate-deploy", "deploy/ against Kubewarden 1.37's schemas and the lookups"),
    ("preflight-test", "scripts/preflight.sh with kubectl"),
    ("shipped-paths", "no build machine's path in a tracked file or in policy.wasm as built; README.md's links absolute; "
     "Kubewarden's images as its charts name them"),
    ("e2e-unit", "the webhook configurations rendered as Kubewarden's controller renders them"),
    ("e2e-kop-serve", "the test_data/ examples through kop-serve over TLS"),
    ("e2e-oci", "a real registry (Distribution): the module pushed as kwctl pushes it, pulled back, digests and "
     "metadata; kwctl's push byte for byte, policy-server by registry://, a signature verified, where found"),
    ("e2e-controlplane", "etcd and kube-apiserver from Go modules; the API server stand-in compared with it"),
    ("e2e-cluster", "a real kube-apiserver: kubectl apply -k deploy/ and its overlay, the seed demo, every case, "
     "exclusions, failure policy, RBAC, the PolicyServer's guard, an adversary"),
    ("e2e-kube-ovn", "kube-ovn-controller allocates on that control plane: the seed's demo on its allocation, "
     "the lag of its Subnet record"),
    ("conformance-kwctl", "every conformance case in the real kwctl"),
    ("e2e-tests", "the test_data/ sessions through kwctl (bats)"),
    ("e2e-policy-server", "the test_data/ examples through a real policy-server over TLS"),
    ("e2e-cluster-kubewarden", "the same real kube-apiserver, the policy served by the real policy-server"),
    ("e2e-controller", "Kubewarden's controller renders deploy/: its webhooks and policies.yml equal webhooks.py's"),
    ("e2e-certs", "cert-manager issues Kubewarden's CA from an operator's CA; the controller's use of it where found"),
    ("e2e-audit", "audit-scanner reports pre-existing conflicting workloads, passes valid ones"),
]


def run(step):
    """Run one step; its status and the SKIPPED: reason, if any."""
    skipped = None
    checked = False
    proc = subprocess.Popen(
        ["make", "--no-print-directory", step],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
    )
    for line in proc.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
        if line.startswith("SKIPPED:") and skipped is None:
            skipped = line[len("SKIPPED:"):].strip()
        match = re.fullmatch(r"(\d+) passed, 0 failed\s*", line)
        if match and int(match.group(1)) > 0:
            checked = True
    code = proc.wait()
    if code != 0:
        return "failed", f"exit status {code}"
    if skipped is not None and checked:
        return "passed", f"part skipped: {skipped}"
    if skipped is not None:
        return "skipped", skipped
    return "passed", ""


def main(argv):
    known = dict(STEPS)
    wanted = argv or [s for s, _ in STEPS]
    unknown = [s for s in wanted if s not in known]
    if unknown:
        print(f"suite: unknown step(s) {', '.join(unknown)}; steps: {', '.join(known)}", file=sys.stderr)
        return 2
    results = []
    for step in wanted:
        print(f"\n== {step}: {known[step]}", flush=True)
        started = time.monotonic()
        status, why = run(step)
        results.append((step, status, why, time.monotonic() - started))

    count = {s: sum(1 for r in results if r[1] == s) for s in ("passed", "failed", "skipped")}
    print(f"\n== make test: {count['passed'] + count['failed']} ran, {count['skipped']} skipped")
    for step, status, why, seconds in results:
        why = why.removeprefix(f"{step}: ")
        detail = f": {why}" if why and status == "skipped" else (f" ({why})" if why else "")
        print(f"  {status:<8} {step:<18} {seconds:6.0f} s{detail}")
    print(f"test: {count['passed']} passed, {count['failed']} failed, {count['skipped']} skipped")
    return 1 if count["failed"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
