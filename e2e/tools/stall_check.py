"""How many kube-rs watch caches never become ready (`make stall-check`, docs/stall.md).

Runs tools/stall-check (a kube-rs client on the policy-server's own locked
versions of kube, hyper, hyper-util and tokio, creating watch caches as
Kubewarden's policy-evaluator creates them) against an API server holding
one Kube-OVN IP object per label value `ovn.kubernetes.io/subnet=subnet-<i>`,
once per concurrency and run, and passes its line through (several
binaries, built with different hyper releases, take turns in each run
against the same server):

  stall-check: hyper=1.9.0 caches=1000 c=8 not_ready=7 bound_s=10 apiserver=stand-in ...

then a total per binary: `stall-check: total not_ready=N second_ready=N caches=N runs=N ...`
(second_ready: of the caches not ready, those whose selector got a cache
within the bound when asked again after the run).

The API server:
- `stand-in` (default): e2e/harness/apiserver.py over plain HTTP, a fresh one per run;
- `stand-in-tls`: the same over HTTPS with a bearer token;
- `kube-apiserver`: a real etcd + kube-apiserver from `make cluster-bin`
  (Go's net/http over TLS), the objects written through its API once, read
  with a token of deploy/'s ServiceAccount.

The count is a measurement: the exit status is 0 whatever it is, non-zero
only when something fails to run.

    python3 -m e2e.tools.stall_check target/stall-check/release/stall-check [BINARY ...] \
        [--apiserver stand-in] [--caches 1000] [--concurrency 1 8] [--bound-s 10] [--runs 1]
"""

import argparse
import ipaddress
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from e2e.harness.apiserver import Cluster, StandIn
from e2e.harness.certificates import self_signed

STAND_IN, STAND_IN_TLS, KUBE_APISERVER = "stand-in", "stand-in-tls", "kube-apiserver"


def ip_objects(count):
    """One IP object per subnet label value, as kube-ovn-controller writes one."""
    out = []
    for i in range(count):
        address = str(ipaddress.IPv4Address(int(ipaddress.IPv4Address("10.0.0.2")) + (i << 14)))
        subnet = f"subnet-{i}"
        out.append({
            "apiVersion": "kubeovn.io/v1", "kind": "IP",
            "metadata": {"name": f"pod-{i}.default", "labels": {"ovn.kubernetes.io/subnet": subnet, subnet: ""}},
            "spec": {"podName": f"pod-{i}", "namespace": "default", "subnet": subnet, "attachSubnets": [],
                     "nodeName": "node-0", "ipAddress": address, "v4IpAddress": address, "v6IpAddress": "",
                     "attachIps": [], "macAddress": "00:00:00:00:00:01", "attachMacs": [], "containerID": "",
                     "podType": ""},
        })
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binaries", nargs="+", metavar="binary", help="tools/stall-check's binary (or several)")
    parser.add_argument("--apiserver", choices=[STAND_IN, STAND_IN_TLS, KUBE_APISERVER], default=STAND_IN)
    parser.add_argument("--caches", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--bound-s", type=float, default=10.0, help="a cache not ready by then is counted")
    parser.add_argument("--runs", type=int, default=1, help="runs of every concurrency")
    parser.add_argument("--workers", type=int, default=None,
                        help="tokio worker threads, set as TOKIO_WORKER_THREADS (default: one per core)")
    args = parser.parse_args()
    for binary in args.binaries:
        if not Path(binary).is_file():
            sys.exit(f"stall-check: {binary}: not found (make stall-check builds it)")

    top = Path(tempfile.mkdtemp(prefix="kop-stall-check-"))
    objects = ip_objects(args.caches)
    real = None
    totals = {b: {"not_ready": 0, "second_ready": 0, "caches": 0, "runs": 0, "hyper": "?"} for b in args.binaries}
    try:
        if args.apiserver == KUBE_APISERVER:
            from e2e.harness.kube_apiserver import KubeApiServer  # PyYAML and `make cluster-bin`

            real = KubeApiServer(top, {"ips": objects}, log=lambda line: print(f"stall-check: {line}", flush=True))
        tls = self_signed(top, cn="stand-in") if args.apiserver == STAND_IN_TLS else None
        kubeconfig = top / "kubeconfig"
        for run in range(args.runs):
            for c, binary in ((c, b) for c in args.concurrency for b in args.binaries):
                standin = None
                if real is None:
                    standin = StandIn(Cluster({"ips": objects}), tls=tls,
                                      token="stall-check" if tls else None).start()
                    standin.write_kubeconfig(kubeconfig)
                else:
                    real.write_kubeconfig(kubeconfig)
                try:
                    cmd = [binary, "--caches", str(args.caches), "--concurrency", str(c),
                           "--bound-s", f"{args.bound_s:g}", "--apiserver", args.apiserver]
                    env = {"KUBECONFIG": str(kubeconfig), "PATH": "/usr/bin:/bin"}
                    if args.workers:  # as an operator would set it on the policy-server
                        env["TOKIO_WORKER_THREADS"] = str(args.workers)
                    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
                finally:
                    if standin is not None:
                        standin.stop()
                sys.stderr.write(proc.stderr)
                sys.stdout.write(proc.stdout)
                sys.stdout.flush()
                if proc.returncode != 0:
                    sys.exit(f"stall-check: the client failed (exit status {proc.returncode})")
                total = totals[binary]
                for key in ("not_ready", "second_ready"):
                    found = re.search(rf"\b{key}=(\d+)", proc.stdout)
                    total[key] += int(found.group(1)) if found else 0
                hyper = re.search(r"\bhyper=(\S+)", proc.stdout)
                total["hyper"] = hyper.group(1) if hyper else "?"
                total["caches"] += args.caches
                total["runs"] += 1
        for total in totals.values():
            print(f"stall-check: total not_ready={total['not_ready']} second_ready={total['second_ready']} "
                  f"caches={total['caches']} runs={total['runs']} "
                  f"concurrency={','.join(map(str, args.concurrency))} hyper={total['hyper']} "
                  f"apiserver={args.apiserver}")
    finally:
        if real is not None:
            real.stop()
        shutil.rmtree(top, ignore_errors=True)


if __name__ == "__main__":
    main()
