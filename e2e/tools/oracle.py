"""Upstream's answers: every case asked of kube-ovn-webhook itself (`make oracle`).

    KUBE_OVN_WEBHOOK=<binary> python3 -m e2e.tools.oracle [--record] [CASE_DIR_OR_FILE ...]

kube-ovn-webhook (built by hand, outside this repository, from Kube-OVN's
source at 1533681d7a6b: no registry serves it) runs against a real
kube-apiserver with Kube-OVN's CRDs, with a certificate made here by openssl.
For each case the case's cluster is stored through the API (as e2e-cluster
stores it), and the case's AdmissionRequest, unchanged, is POSTed to
upstream's `/validating` as an AdmissionReview: upstream answers the very
request the policy is given.

Without `--record` the live answers are compared with the ones recorded in
the cases (`upstream`, see tests/README.md) and every difference is printed;
with it they are written into the case files. Where a case cannot be asked
(its cluster is refused by the API server, it forbids a lookup), the record
says why. Without the binary it prints one `SKIPPED:` line.

With `--release <tag>` (`make oracle ORACLE_RELEASE=v1.16.2`, KUBE_OVN_WEBHOOK
the webhook built from that tag) the answers are those of a Kube-OVN release
users run: recorded in, and compared with, tests/releases/<tag>.json (keyed
by case, each record with the same `input` hash as the pin's), never in the
case files (docs/compatibility.md).

Upstream reads the apiserver address from its own environment
(KUBERNETES_SERVICE_HOST, contract I9): it is given the case's
`kubernetesServiceIP` setting, else the clusterIP of the case's Service
`default/kubernetes`, as a cluster would give it to the webhook's pod; the
webhook is restarted when that changes.
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from e2e.harness.cases import (
    CASE_DIRS,
    RELEASES,
    case_files,
    case_key,
    case_name,
    load_release,
    record_of,
    release_path,
    write_record,
    write_release_records,
)
from e2e.harness.controlplane import KUBE_OVN_CRDS, ControlPlane
from e2e.harness.kubeapi import Api
from e2e.harness.replay import Refused, Replayer
from e2e.harness.upstream import Webhook, not_found, webhook_certificate


def service_host(case):
    """KUBERNETES_SERVICE_HOST as a cluster would give the webhook's pod: the first address."""
    setting = (case.get("settings") or {}).get("kubernetesServiceIP")
    if isinstance(setting, str) and setting:
        return setting.split(",")[0]
    for svc in (case.get("cluster") or {}).get("services", []):
        meta = svc.get("metadata", {})
        if (meta.get("namespace"), meta.get("name")) == ("default", "kubernetes"):
            spec = svc.get("spec", {})
            return (spec.get("clusterIPs") or [spec.get("clusterIP") or ""])[0]
    return ""


def not_askable(case):
    """Why upstream cannot be asked this case here, or None."""
    if case.get("forbidden"):
        return "it forbids a lookup; kube-ovn-webhook's cache never syncs without the grant (a timeout, failurePolicy Ignore)"
    return None


def cluster_for_upstream(cluster):
    """The case's cluster without Service default/kubernetes: upstream reads its address from the environment."""
    cluster = dict(cluster or {})
    cluster["services"] = [
        s for s in cluster.get("services", [])
        if (s.get("metadata", {}).get("namespace"), s.get("metadata", {}).get("name")) != ("default", "kubernetes")
    ]
    return cluster


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="*", default=[str(d) for d in CASE_DIRS])
    parser.add_argument("--record", action="store_true", help="write the answers into the case files")
    parser.add_argument("--settle", type=float, default=0.3, help="seconds for the webhook's cache after a write")
    parser.add_argument("--webhook", default=os.environ.get("KUBE_OVN_WEBHOOK")
                        or shutil.which("kube-ovn-webhook") or "",
                        help="kube-ovn-webhook: $KUBE_OVN_WEBHOOK, else the one on PATH")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (webhook logs)")
    parser.add_argument("--release", default=os.environ.get("ORACLE_RELEASE", ""),
                        help=f"the webhook is this Kube-OVN release's ({', '.join(RELEASES)}): "
                             "its records are tests/releases/<release>.json")
    args = parser.parse_args()
    if args.release:
        release_path(args.release)  # an unknown release stops here
    released = load_release(args.release)["upstream"] if args.release else None
    commit = RELEASES[args.release] if args.release else None
    fresh = {}
    if not args.webhook or not os.access(args.webhook, os.X_OK):
        not_found("oracle", "no kube-ovn-webhook: neither KUBE_OVN_WEBHOOK nor PATH names one")
        return 0
    files = case_files(args.cases)
    cases = [(f, json.loads(f.read_text())) for f in files]
    # Fewest restarts: cases grouped by the environment upstream needs.
    cases.sort(key=lambda fc: (service_host(fc[1]), str(fc[0])))
    folder = Path(tempfile.mkdtemp(prefix="kop-oracle-"))
    started = time.monotonic()
    counts = {"same": 0, "different": 0, "recorded": 0, "not asked": 0, "unrecorded": 0}
    webhook = None
    try:
        webhook_certificate()
        with ControlPlane() as cp:
            cp.install_crds(KUBE_OVN_CRDS)
            # The cases' clusters are written as kube-ovn-controller's ServiceAccount (e2e/harness/replay.py).
            cp.kubectl("create", "clusterrolebinding", "kube-ovn-controller", "--clusterrole=cluster-admin",
                       "--serviceaccount=kube-system:ovn")
            api = Api(cp.kubeconfig)
            replayer = Replayer(api)
            webhook = Webhook(args.webhook, cp.kubeconfig, folder)
            for path, case in cases:
                why = not_askable(case)
                answer = None
                if why is None:
                    webhook.ensure(service_host(case))
                    replayer.reset()
                    try:
                        replayer.load(cluster_for_upstream(case.get("cluster")))
                    except Refused as e:
                        why = f"the API server refuses its cluster: {e}"
                if why is None:
                    time.sleep(args.settle)
                    answer = webhook.ask(case["request"])
                result = {"asked": False, "why": why} if why else answer
                record = record_of(case, result, commit) if commit else record_of(case, result)
                name = case_name(path)
                if why:
                    counts["not asked"] += 1
                if args.record:
                    if args.release:
                        fresh[case_key(path)] = record
                    else:
                        write_record(path, case, record)
                    counts["recorded"] += 1
                    continue
                old = released.get(case_key(path)) if args.release else case.get("upstream")
                if old is None:
                    counts["unrecorded"] += 1
                    print(f"unrecorded {name}: upstream {json.dumps(record, ensure_ascii=False)}")
                elif {k: v for k, v in old.items()} == record:
                    counts["same"] += 1
                else:
                    counts["different"] += 1
                    print(f"differs {name}:\n  recorded {json.dumps(old, ensure_ascii=False)}\n"
                          f"  upstream {json.dumps(record, ensure_ascii=False)}")
            webhook.stop()
    finally:
        if webhook:
            webhook.stop()
        if args.keep:
            print(f"# logs in {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"# {len(cases)} cases in {time.monotonic() - started:.0f} s")
    if fresh:
        write_release_records(args.release, "upstream", fresh)
    if args.record:
        print(f"oracle: {counts['recorded']} recorded, {counts['not asked']} not asked")
        return 0
    print(f"oracle: {len(cases)} cases, {counts['same']} as recorded, {counts['different']} different, "
          f"{counts['unrecorded']} unrecorded ({counts['not asked']} not asked)")
    return 1 if counts["different"] or counts["unrecorded"] else 0


if __name__ == "__main__":
    sys.exit(main())
