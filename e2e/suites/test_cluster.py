"""The policy judged by a real kube-apiserver (make e2e-cluster, e2e-cluster-kubewarden).

    python3 -m pytest e2e/suites/test_cluster.py [-k "kop-serve and (seed or cases)"]
        [--setting adversary_requests=2000 ...]

Starts etcd and kube-apiserver on 127.0.0.1 (e2e/harness/controlplane.py, binaries
built from Go modules by `make cluster-bin`), installs Kube-OVN's and
Kubewarden's CRDs from ../shared, applies deploy/ as shipped (`kubectl apply -k
deploy/`, then the optional ip-objects-policy.yaml), and serves the
policies of deploy/ to the API server over HTTPS with BINARY: Kubewarden's
policy-server where it is on PATH, or this project's kop-serve (the same
command line; host calls answered from the same API server). The server
reads the cluster with a token of deploy/'s ServiceAccount, so
deploy/rbac.yaml decides every lookup. The ValidatingWebhookConfigurations
are rendered from deploy/'s ClusterAdmissionPolicies as Kubewarden's
controller renders them (e2e/harness/webhooks.py), pointed at the local server.

The server is a parameter: kop-serve (target/host/kop-serve serving
policy.wasm; `make e2e-cluster`, `-k kop-serve`) and Kubewarden's
policy-server (on PATH with kwctl, serving annotated-policy.wasm;
`make e2e-cluster-kubewarden`, `-k policy-server`). The control plane and the
server are started once per server, the tests below run on them in order
(`-k` picks some, as `--only` did), and `--setting NAME=VALUE` changes one of
`SETTINGS` (the adversary's figures, the case folders, `keep`).

Tests, each with exact expectations:

- seed: the IP object `static-7584848b74-fw9dm.default`, then `kubectl apply
  -f pod-static.yaml` (`test_data/`): kubectl exits 1 with the conflict
  message, verbatim
- cases: every conformance case (`tests/conformance`, `tests/cases`): its
  cluster written as kube-ovn-controller's ServiceAccount (which deploy/
  excludes; status through the status subresource), its request made as
  cluster-admin (`harness/replay.py`), decision, code, message and warnings
  compared. Cases with other settings run on a server restarted with them; a
  server is also restarted whenever the objects the policy fetches by name
  change (policy-server keeps a GET's answer 5 s)
- exclusions: pods without a static-IP annotation are created and never reach
  the webhook (the API server's own
  `apiserver_admission_webhook_admission_duration_seconds_count`); conflicting
  pods in `kube-system`, in `kubewarden`, and created as
  `system:serviceaccount:kube-system:ovn` are created; with any label a tenant
  can set (on the pod, or on its namespace) they are refused
- pod_update: a Pod UPDATE reaches the webhook only where kube-ovn-controller
  may allocate after it (I18): never an unrelated update of a running,
  allocated pod, nor any update of a pod being deleted; a real `kubectl
  annotate` hot-plugging an attachment at a held address, or dropping an
  allocated mark at an address reserved for another namespace, is refused;
  the routed updates that need no decision are counted
- failure: the server stopped: a static-IP pod is refused with the API
  server's `connection refused` error, a plain pod created; the port accepting
  and never answering: refused after `timeoutSeconds` (10 s)
- rbac: `scripts/preflight.sh` against the real RBAC; then `get ovn-eips` and
  `list ips` removed in turn: the preflight fails on that line, and the
  request that needs it is measured
  ([docs/missing-rbac.md](docs/missing-rbac.md#on-a-real-api-server))
- overlay: `kubectl kustomize deploy/` gives exactly the objects of its three
  files; `kubectl apply -k overlays/cattle-kubewarden-system` over it:
  `scripts/preflight.sh cattle-kubewarden-system` passes and `kubewarden`'s
  fails (the grants moved), the server restarted with a token of
  `cattle-kubewarden-system`'s ServiceAccount refuses the seed's demo
  verbatim; `kubectl apply -k deploy/` restores the grants
  ([docs/operations.md](docs/operations.md#namespaces-kubectl-apply--k-deploy))
- guard: `deploy/policy-server.yaml`'s ValidatingAdmissionPolicy
  (`harness/guard.py`): a tenant (a ServiceAccount with a token, a Role to
  write policies in its namespace) and a cluster admin; namespaced
  AdmissionPolicies (`v1`, `v1alpha2`) and AdmissionPolicyGroups on `kube-ovn`
  refused with the exact message and 403, created elsewhere; an UPDATE moving
  one there refused; ClusterAdmissionPolicies and ClusterAdmissionPolicyGroups
  on `kube-ovn` created; a policy from before the guard: spec frozen, label
  and deletion allowed
  ([docs/operations.md](docs/operations.md#who-may-use-the-policyserver))
- adversary: a tenant (a ServiceAccount that may create pods and Deployments
  in its namespace only) sends, from three niced processes, 10 000 dry-run
  pods and Deployments (`--adversary-requests`, within `--adversary-seconds`,
  110; at least the first half and 1 000 more must be sent) naming invented
  subnets, IPPools, namespaces and NetworkAttachmentDefinitions, 2
  500-attachment pods, 20 000-address `ip_pool`s, random static addresses, and
  some naming real objects (`harness/adversary.py`), while a legitimate
  static-IP pod is timed every 50 ms. The server is restarted, then warmed one
  request at a time (legitimate ones of every size, one adversarial one of
  each shape). Measured: the policy-server's watches, each by its list, from
  the API server's audit log; the server's VmRSS; the legitimate p50. Every
  list watched since the restart must be kind-wide or narrowed to an object
  that exists, the lists be the kind-wide ones plus the named real objects'
  ones, no list be watched more than once per worker, RSS grow by 5 MiB at
  most over the attack's second half (what large requests need is reached
  within the first thousands; at least 1 000 requests of it) and 64 MiB over
  all of it, the p50 at most double, every adversarial request be answered
  (admitted, or denied with 400 or 403). One line `# adversary: …` gives the
  figures (as below)
- scaffold: last: deploy/'s webhooks removed; the policy Artifact Hub's
  install text makes (`harness/scaffold.py`: kwctl's manifest where kwctl is
  given with `--kwctl`, compared with the one built from `metadata.yml`, which
  is used elsewhere), without and with `--allow-context-aware`, served with
  the `default` PolicyServer's permissions: kube-ovn-controller's IP object
  and a plain pod are created at once, a static-IP pod is refused at once or
  at the webhook timeout
  ([docs/webhooks.md](docs/webhooks.md#a-scaffolded-policy-artifact-hubs-install-box))

`adversary`, measured on 2026-12-05 on two cores that other jobs shared (load
average about 5), 10 000 requests. With the policy of 3e4e816 (lookups bounded
by what exists): kop-serve 45 s (222/s), 8 lists watched (5 kind-wide; Subnets
`adv-legit` and `adv-real` by name, `adv-real`'s IP objects by label), RSS
68.7 → 68.7 MiB over the second half (65.5 after the warm-up), legitimate p50
5.6 ms alone and 9.1 ms during, 15 passed, 75 s in all; policy-server 1.36: 33
s (306/s), the same 8 lists, RSS 114.5 → 110.9 MiB, p50 4.2 and 7.7 ms, 15
passed, 65 s. With b6139db's policy it fails, as it should (7 passed, 8
failed): kop-serve opened 16 143 lists narrowed to names that exist nowhere (2
897 in the warm-up; then no more thread could be started), RSS 484 MiB after
the warm-up and 2 285 MiB after, p50 5.8 → 12.0 ms, 6 731 adversarial and 516
legitimate requests unanswered, 146 s in all; policy-server 1.36 answered only
1 694 requests in the 90 s (18/s), opening 4 324 such lists, RSS 149 → 300
MiB, p50 6.0 → 57.4 ms, 158 s in all.

Of the 257 cases, 238 are replayed and agree, with kop-serve and with
policy-server 1.36. The API server itself refuses 10 before any webhook sees
them, which is a finding about the case, not the policy: objects that
Kube-OVN's CRD schemas refuse (`323`: a status `v4usingIPs` that is a string;
`325`: a numeric `cidrBlock`; `n16`, `n17`: an IptablesDnatRule without
`type`, which the schema's enum refuses), Pods the API server cannot decode or
validate (`310`, `311`, `312`; `018`: a pod update that changes more than
Kubernetes allows), `236` (an IP object whose label key is empty), and `290`
(a dual-stack Service `default/kubernetes`: the API server owns that Service
and gives it one address). 9 cannot be real requests: audit scanner requests
go to the policy-server directly (`297`, `299`, `300`), objects that are no
JSON object (`228`, `308`), requests in `kube-system`, which deploy/ excludes
(`255`, `339`, `p02`), and `k01`, whose forbidden lookup the `rbac` test makes
real.
"""

import base64
import copy
import json
import os
import re
import socket
import shutil
import subprocess
import tempfile
import threading
import time
import types
from pathlib import Path

import pytest
import yaml

from e2e.harness import DEPLOY, ROOT, adversary, guard, scaffold
from e2e.harness.cases import CASE_DIRS, case_files, compare
from e2e.harness.cluster import (
    NAMESPACE,
    NETWORKS_WEBHOOK,
    SEED_MESSAGE,
    SEED_IP,
    SEED_REFUSAL,
    SERVICE_ACCOUNT,
    STATIC_IP_WEBHOOK,
    ClusterSuite,
)
from e2e.harness.controlplane import ControlPlane
from e2e.harness.kube_apiserver import AuditCounter, audit_of_policy_server
from e2e.harness.replay import KUBE_OVN_USER, Refused
from e2e.harness.servers import WebhookServer
from e2e.harness.webhooks import policy_id, render_webhook

# Rancher's Kubewarden namespace, and the overlay of that name (overlays/).
OVERLAY_NAMESPACE = "cattle-kubewarden-system"


class Suite(ClusterSuite):
    # --- tests ---------------------------------------------------------

    def test_seed(self):
        """The seed's demo, verbatim: the IP object, then kubectl apply -f pod-static.yaml."""
        self.replayer.reset()
        self.replayer.create(copy.deepcopy(SEED_IP))
        self.settle()
        done, ms = self.seed_demo()
        self.notes.append(f"seed demo: kubectl exit {done.returncode}, {ms:.0f} ms: {done.stderr.strip()}")
        self.check("seed: kubectl apply -f pod-static.yaml", done.returncode != 0 and done.stderr.strip() == SEED_REFUSAL,
                   f"exit {done.returncode}, stderr {done.stderr.strip()!r}")

    def test_ippool(self):
        """I14 as an operator meets it: kubectl apply of IPPools (refused with the message; a warning)."""
        self.replayer.reset()
        self.replayer.create({"apiVersion": "kubeovn.io/v1", "kind": "Subnet", "metadata": {"name": "ovn-default"},
                              "spec": {"cidrBlock": "10.16.0.0/16", "gateway": "10.16.0.1", "protocol": "IPv4",
                                       "vpc": "ovn-cluster", "excludeIps": ["10.16.0.1"]}})
        self.replayer.create({"apiVersion": "kubeovn.io/v1", "kind": "IPPool", "metadata": {"name": "pool-a"},
                              "spec": {"subnet": "ovn-default", "ips": ["10.16.1.10..10.16.1.20"]}})
        self.settle()
        workdir = self.folder / "ippool"
        workdir.mkdir(exist_ok=True)
        for name, subnet, ips in (("pool-b", "ovn-default", "10.16.1.15..10.16.1.30"),
                                  ("pool-c", "later-net", "10.30.0.10..10.30.0.20")):
            (workdir / f"{name}.yaml").write_text(
                f"apiVersion: kubeovn.io/v1\nkind: IPPool\nmetadata:\n  name: {name}\n"
                f"spec:\n  subnet: {subnet}\n  ips:\n  - {ips}\n")
        done = self.kubectl("apply", "-f", "pool-b.yaml", cwd=workdir)
        want = ('Error from server: error when creating "pool-b.yaml": admission webhook '
                f'"{NETWORKS_WEBHOOK}" denied the request: '
                "ippool pool-b has conflict IPs with ippool pool-a: 10.16.1.15-10.16.1.20")
        self.check("ippool: kubectl apply of a pool that overlaps another is refused with the message",
                   done.returncode != 0 and done.stderr.strip() == want, f"exit {done.returncode}, {done.stderr.strip()!r}")
        done = self.kubectl("apply", "-f", "pool-c.yaml", cwd=workdir)
        want = "Warning: ippool pool-c: subnet later-net does not exist yet"
        self.check("ippool: a pool whose subnet does not exist yet is created, with kubectl's Warning: line",
                   done.returncode == 0 and done.stderr.strip() == want and "created" in done.stdout,
                   f"exit {done.returncode}, stdout {done.stdout.strip()!r}, stderr {done.stderr.strip()!r}")
        self.notes.append(f"ippool: {done.stderr.strip()}")

    def test_cases(self):
        """Every conformance case, replayed; grouped by settings (one server start each)."""
        cases = [(path, json.loads(path.read_text())) for path in case_files(self.args.cases)]
        groups = {}
        for path, case in cases:
            groups.setdefault(json.dumps(case.get("settings") or {}, sort_keys=True), []).append((path, case))
        agree = differ = refused = skipped = 0
        for settings, members in sorted(groups.items()):
            last_fetched = None  # a group's first case starts its server with the group's settings
            for path, case in members:
                why = not_replayable(case)
                if why:
                    skipped += 1
                    print(f"not replayed {path.name}: {why}")
                    continue
                self.replayer.reset()
                fingerprint = fetched_by_name(case.get("cluster") or {})
                if fingerprint != last_fetched:
                    # policy-server keeps a GET's answer for 5 s per name: a fresh
                    # server cannot answer this case from the last one's objects.
                    self.server.restart(settings_of(settings))
                    last_fetched = fingerprint
                try:
                    self.replayer.load(case.get("cluster") or {})
                except Refused as e:
                    refused += 1
                    print(f"REFUSED {path.name}: the API server refuses the case's cluster: {e}")
                    continue
                self.settle()
                try:
                    got = self.replayer.send(case["request"])
                except Refused as e:
                    refused += 1
                    print(f"REFUSED {path.name}: the API server refuses the request's old object: {e}")
                    continue
                if got["webhook"] is None and not got["allowed"]:
                    refused += 1
                    print(f"REFUSED {path.name}: the API server refuses the request before any webhook: {got['raw'][:300]}")
                    continue
                response = {"allowed": got["allowed"], "status": {"code": got["code"], "message": got["message"]},
                            "warnings": got["warnings"]}
                problems = compare(case["expect"], response)
                if problems:
                    differ += 1
                    self.check(f"case {path.name}", False, "; ".join(problems) + f" ({got['raw'][:300]})")
                else:
                    agree += 1
        self.server.restart()
        self.notes.append(
            f"cases: {len(cases)}: {agree} agree, {differ} differ, {refused} refused by the API server, "
            f"{skipped} not replayable"
        )
        self.check("cases replayed on kube-apiserver", differ == 0,
                   f"{agree} agree, {differ} differ, {refused} refused by the API server, {skipped} not replayable")


    # --- exclusions ------------------------------------------------------

    def test_exclusions(self):
        """matchConditions, the namespace and user exclusions, and labels a tenant can set."""
        self.seed_conflict()
        static = {"ovn.kubernetes.io/ip_address": "10.16.0.15"}
        denied = f'admission webhook "{STATIC_IP_WEBHOOK}" denied the request: {SEED_MESSAGE}'
        before = self.webhook_calls()
        for name, annotations in [("plain", {}), ("logical-switch-only", {"ovn.kubernetes.io/logical_switch": "ovn-default"})]:
            rc, err, _ = self.create_pod(self.pod(name, annotations=annotations))
            self.check(f"exclusions: a pod with {name.replace('-', ' ')} annotations is created", rc == 0, err)
        after = self.webhook_calls()
        self.check("exclusions: such pods never reach the webhook (API server's call count)", after == before,
                   f"{before} calls before, {after} after")
        for ns in ("kube-system", NAMESPACE):
            rc, err, _ = self.create_pod(self.pod(f"static-in-{ns}", ns, static))
            self.check(f"exclusions: a conflicting static-IP pod in {ns} is created", rc == 0, err)
        rc, err, _ = self.create_pod(self.pod("static-by-ovn", annotations=static), user=KUBE_OVN_USER)
        self.check("exclusions: a conflicting static-IP pod created as kube-ovn-controller is created", rc == 0, err)
        self.check("exclusions: none of those reached the webhook", self.webhook_calls() == after,
                   f"{after} calls before, {self.webhook_calls()} after")
        # Labels a tenant can set: on the pod, and on a namespace it may create.
        self.replayer.ensure_namespace("tenant-a", labels={"kubernetes.io/metadata.name": "kube-system"})
        code, ns, _ = self.api.request("GET", "/api/v1/namespaces/tenant-a")
        self.check("exclusions: the API server sets kubernetes.io/metadata.name itself",
                   ns["metadata"]["labels"].get("kubernetes.io/metadata.name") == "tenant-a", str(ns["metadata"].get("labels")))
        tenant_labels = [
            {}, {"component": "network"}, {"app.kubernetes.io/part-of": "kube-ovn"},
            {"kubewarden.io/exclude": "true"}, {"kubernetes.io/metadata.name": "kube-system"},
        ]
        for i, labels in enumerate(tenant_labels):
            for ns in ("default", "tenant-a"):
                rc, err, _ = self.create_pod(self.pod(f"tenant-{i}", ns, static, labels))
                self.check(f"exclusions: a conflicting pod in {ns} labelled {labels} is refused",
                           rc != 0 and err.endswith(denied), err)
        self.check("exclusions: each of those reached the webhook once",
                   self.webhook_calls() == after + 2 * len(tenant_labels), f"{self.webhook_calls() - after} calls")

    def test_pod_update(self):
        """I18 on the real API server: only an UPDATE after which kube-ovn-controller may allocate
        reaches the webhook (deploy/'s matchCondition pod-update-may-allocate, compiled and run by
        kube-apiserver); kubectl annotating a running pod with an attachment at a held address, or
        dropping its allocated mark at a reserved address, is refused."""
        self.replayer.reset()
        nad_config = {"cniVersion": "0.3.0", "type": "kube-ovn", "provider": "attachnet.default.ovn",
                      "server_socket": "/run/openvswitch/kube-ovn-daemon.sock"}
        for obj in (
            {"apiVersion": "kubeovn.io/v1", "kind": "Subnet", "metadata": {"name": "attach-net"},
             "spec": {"cidrBlock": "172.17.0.0/24", "gateway": "172.17.0.1", "protocol": "IPv4",
                      "provider": "attachnet.default.ovn", "excludeIps": ["172.17.0.1"]}},
            {"apiVersion": "k8s.cni.cncf.io/v1", "kind": "NetworkAttachmentDefinition",
             "metadata": {"name": "attachnet", "namespace": "default"}, "spec": {"config": json.dumps(nad_config)}},
            {"apiVersion": "kubeovn.io/v1", "kind": "IP", "metadata": {"name": "other.default.attachnet.default.ovn",
                                                                     "labels": {"ovn.kubernetes.io/subnet": "attach-net"}},
             "spec": {"podName": "other", "namespace": "default", "subnet": "attach-net",
                      "ipAddress": "172.17.0.11", "v4IpAddress": "172.17.0.11"}},
        ):
            self.replayer.create(obj)
        self.settle()
        # A running pod, as kube-ovn-controller leaves it: its primary NIC allocated.
        running = self.pod("running", annotations={
            "ovn.kubernetes.io/ip_address": "10.16.0.30", "ovn.kubernetes.io/logical_switch": "ovn-default",
            "ovn.kubernetes.io/allocated": "true"})
        rc, err, _ = self.create_pod(running)
        self.check("pod update: a running static-IP pod is created", rc == 0, err)
        before = self.webhook_calls()
        for args in (["label", "pod", "running", "tier=web"],
                     ["annotate", "pod", "running", "example.com/owner=team-b"]):
            done = self.kubectl(*args)
            self.check(f"pod update: kubectl {args[0]} of a running pod succeeds", done.returncode == 0,
                       done.stderr.strip())
        after = self.webhook_calls()
        self.check("pod update: unrelated updates never reach the webhook (API server's call count)",
                   after == before, f"{before} calls before, {after} after")
        held = '[{"name":"attachnet","ips":["172.17.0.11"]}]'
        done = self.kubectl("annotate", "pod", "running", f"k8s.v1.cni.cncf.io/networks={held}")
        want = (f'Error from server: admission webhook "{STATIC_IP_WEBHOOK}" denied the request: '
                "annotation static-ip 172.17.0.11 is conflict with ip crd other.default.attachnet.default.ovn, "
                "ip 172.17.0.11")
        self.check("pod update: hot-plugging an attachment at a held address is refused",
                   done.returncode != 0 and done.stderr.strip() == want,
                   f"exit {done.returncode}, stderr {done.stderr.strip()!r}")
        free = '[{"name":"attachnet","ips":["172.17.0.12"]}]'
        done = self.kubectl("annotate", "pod", "running", f"k8s.v1.cni.cncf.io/networks={free}")
        self.check("pod update: hot-plugging an attachment at a free address is accepted", done.returncode == 0,
                   done.stderr.strip())
        self.check("pod update: each of the two reached the webhook once", self.webhook_calls() == after + 2,
                   f"{self.webhook_calls() - after} calls")
        self.pod_lifecycle()

    def pod_lifecycle(self):
        """The rest of I18's routing: what reaches the webhook, counted on the API server."""
        self.replayer.create({
            "apiVersion": "kubeovn.io/v1", "kind": "IPPool", "metadata": {"name": "team-b-pool"},
            "spec": {"subnet": "ovn-default", "ips": ["10.16.0.32/28"], "namespaces": ["team-b"]}})
        self.settle()
        reserved = "10.16.0.40"
        want = (f'Error from server: admission webhook "{STATIC_IP_WEBHOOK}" denied the request: '
                f"ip {reserved} is reserved by ippool team-b-pool for namespaces team-b")
        # A pod being deleted: a finalizer keeps it; the API server sets its deletionTimestamp.
        leaving = self.pod("leaving", annotations={
            "ovn.kubernetes.io/ip_address": "10.16.0.63", "ovn.kubernetes.io/allocated": "true"})
        leaving["metadata"]["finalizers"] = ["example.com/keep"]
        rc, err, _ = self.create_pod(leaving)
        self.check("pod update: a pod with a finalizer is created", rc == 0, err)
        done = self.kubectl("delete", "pod", "leaving", "--wait=false")
        self.check("pod update: it is being deleted", done.returncode == 0, done.stderr.strip())
        before = self.webhook_calls()
        done = self.kubectl("annotate", "pod", "leaving", "--overwrite", f"ovn.kubernetes.io/ip_address={reserved}",
                            "ovn.kubernetes.io/allocated-")
        self.check("pod update: re-addressing a pod being deleted at a reserved address, its mark dropped, succeeds",
                   done.returncode == 0, done.stderr.strip())
        done = self.kubectl("patch", "pod", "leaving", "--type=merge", "-p", '{"metadata":{"finalizers":null}}')
        self.check("pod update: its finalizer is removed", done.returncode == 0, done.stderr.strip())
        self.check("pod update: neither reached the webhook (the controller allocates nothing for it)",
                   self.webhook_calls() == before, f"{self.webhook_calls() - before} calls")
        # A running pod whose allocated mark is dropped: the controller allocates it again.
        running = self.pod("marked", annotations={
            "ovn.kubernetes.io/ip_address": reserved, "ovn.kubernetes.io/allocated": "true"})
        rc, err, _ = self.create_pod(running)
        self.check("pod update: a pod at a reserved address is refused at CREATE",
                   rc != 0 and err.endswith(want.removeprefix("Error from server: ")), err)
        running["metadata"]["annotations"]["ovn.kubernetes.io/ip_address"] = "10.16.0.60"
        rc, err, _ = self.create_pod(running)
        self.check("pod update: a running pod at a free address is created", rc == 0, err)
        before = self.webhook_calls()
        done = self.kubectl("annotate", "pod", "marked", "--overwrite", f"ovn.kubernetes.io/ip_address={reserved}")
        self.check("pod update: re-addressing an allocated NIC is admitted, unrouted (nothing is allocated)",
                   done.returncode == 0 and self.webhook_calls() == before,
                   f"{done.stderr.strip()}; {self.webhook_calls() - before} calls")
        done = self.kubectl("annotate", "pod", "marked", "ovn.kubernetes.io/allocated-")
        self.check("pod update: dropping its allocated mark, now at a reserved address, is refused",
                   done.returncode != 0 and done.stderr.strip() == want,
                   f"exit {done.returncode}, stderr {done.stderr.strip()!r}")
        done = self.kubectl("annotate", "pod", "marked", "kubevirt.io/migrationJobName=job-1")
        self.check("pod update: adding the migration key at a reserved address is refused",
                   done.returncode != 0 and done.stderr.strip() == want,
                   f"exit {done.returncode}, stderr {done.stderr.strip()!r}")
        # Routed, nothing refused: the superset's cost, counted.
        routed = self.webhook_calls()
        unallocated = self.pod("waiting", annotations={"ovn.kubernetes.io/ip_address": "10.16.0.61"})
        rc, err, _ = self.create_pod(unallocated)
        self.check("pod update: an unallocated static-IP pod is created", rc == 0, err)
        selecting = self.pod("selecting", annotations={
            "ovn.kubernetes.io/ip_address": "10.16.0.62", "ovn.kubernetes.io/allocated": "true",
            "k8s.v1.cni.cncf.io/networks": "attachnet", "attachnet.default.ovn.kubernetes.io/allocated": "true"})
        rc, err, _ = self.create_pod(selecting)
        self.check("pod update: an allocated pod with a network selection is created", rc == 0, err)
        created = self.webhook_calls()
        for name in ("waiting", "selecting", "marked"):
            done = self.kubectl("label", "pod", name, "tier=web")
            self.check(f"pod update: kubectl label of pod {name} succeeds", done.returncode == 0, done.stderr.strip())
        extra = self.webhook_calls() - created
        self.notes.append(f"pod update: of 3 label updates (an unallocated pod, an allocated one with a network "
                          f"selection, an allocated one), {extra} reached the webhook; the 2 CREATEs "
                          f"{created - routed}")
        self.check("pod update: a label update reaches the webhook for the unallocated pod and the one with a "
                   "selection (the superset), not for the allocated one", extra == 2, f"{extra} calls")

    # --- failure policy --------------------------------------------------

    def test_failure(self):
        """failurePolicy Fail with the webhook server stopped, and hung: refused, a plain pod still created."""
        self.seed_conflict()
        free = {"ovn.kubernetes.io/ip_address": "10.16.0.99"}
        self.server.stop()
        try:
            rc, err, ms = self.create_pod(self.pod("failure-stopped", annotations=free))
            refused = re.search(
                rf'Internal error occurred: failed calling webhook "{re.escape(STATIC_IP_WEBHOOK)}": failed to call webhook: '
                rf'Post "{re.escape(self.server.url("clusterwide-kube-ovn-static-ip"))}\?timeout=10s": '
                r"dial tcp 127\.0\.0\.1:\d+: connect: connection refused$", err)
            self.notes.append(f"failure, server stopped: static-IP pod refused in {ms:.0f} ms: {err}")
            self.check("failure: server stopped: a static-IP pod is refused with the API server's error", rc != 0 and refused, err)
            rc, err, plain_ms = self.create_pod(self.pod("failure-plain"))
            self.notes.append(f"failure, server stopped: plain pod created in {plain_ms:.0f} ms")
            self.check("failure: server stopped: a plain pod is created", rc == 0, err)
            # Hung: the port accepts connections and never answers.
            hung = socket.socket()
            hung.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            hung.bind(("127.0.0.1", self.server.port))
            hung.listen(16)
            held = []
            stop = threading.Event()

            def accept():
                hung.settimeout(0.2)
                while not stop.is_set():
                    try:
                        held.append(hung.accept()[0])
                    except OSError:
                        pass

            thread = threading.Thread(target=accept, daemon=True)
            thread.start()
            try:
                rc, err, ms = self.create_pod(self.pod("failure-hung", annotations=free))
            finally:
                stop.set()
                thread.join()
                for c in held:
                    c.close()
                hung.close()
            self.notes.append(f"failure, server hung: static-IP pod refused in {ms:.0f} ms: {err}")
            self.check("failure: server hung: a static-IP pod is refused after the webhook's timeout (10 s)",
                       rc != 0 and "failed calling webhook" in err and 9500 <= ms <= 13000, f"{ms:.0f} ms: {err}")
        finally:
            self.server.start()
            self.wait_for_webhooks()

    # --- RBAC --------------------------------------------------------------

    def preflight(self, namespace=NAMESPACE):
        env = dict(os.environ, KUBECONFIG=str(self.cp.kubeconfig),
                   PATH=f"{Path(self.cp.kubectl_bin).parent}:{os.environ['PATH']}")
        return subprocess.run(["bash", str(ROOT / "scripts/preflight.sh"), namespace], capture_output=True, text=True, env=env)

    def test_rbac(self):
        """scripts/preflight.sh on the real RBAC; then one grant removed at a time, and its effect measured."""
        done = self.preflight()
        lines = done.stdout.splitlines()
        self.check("rbac: preflight passes on deploy/rbac.yaml", done.returncode == 0 and lines and all(l.startswith("ok") for l in lines),
                   f"{len(lines)} checks" if done.returncode == 0 else done.stdout + done.stderr)
        rbac = list(yaml.safe_load_all((DEPLOY / "rbac.yaml").read_text()))
        role = next(d for d in rbac if d and d["kind"] == "ClusterRole" and d["metadata"]["name"] == "kube-ovn-policy-lookups")
        for resource, verb, scenario in RBAC_SCENARIOS:
            reduced = json.loads(json.dumps(role))
            for rule in reduced["rules"]:
                if resource in rule["resources"] and verb in rule["verbs"]:
                    if len(rule["resources"]) > 1:
                        rest = dict(rule, resources=[r for r in rule["resources"] if r != resource])
                        rule["resources"] = [resource]
                        reduced["rules"].append(rest)
                    rule["verbs"] = [v for v in rule["verbs"] if v != verb]
            reduced["rules"] = [r for r in reduced["rules"] if r["verbs"]]
            self.apply(reduced)
            try:
                pf = self.preflight()
                failing = [l for l in pf.stdout.splitlines() if l.startswith("FAIL")]
                self.check(f"rbac: without {verb} {resource}, preflight fails on exactly that",
                           pf.returncode == 1 and len(failing) == 1 and f"{verb} {resource}.kubeovn.io" in failing[0],
                           "; ".join(failing) or pf.stdout)
                self.server.restart()
                self.wait_for_webhooks()
                scenario(self, f"{verb} {resource}")
            finally:
                self.apply(role)
        self.server.restart()
        self.wait_for_webhooks()

    def rbac_static_ip_pod(self, what):
        """A static-IP pod while the IP objects cannot be listed."""
        self.seed_conflict()
        rc, err, ms = self.create_pod(self.pod("rbac-static", annotations={"ovn.kubernetes.io/ip_address": "10.16.0.99"}))
        self.notes.append(f"rbac, no {what}: static-IP pod: exit {rc} in {ms:.0f} ms: {err}")
        # policy-server's watch cache never fills and the evaluation, waiting in
        # a host call, is never interrupted: the API server gives up at the
        # webhook's timeout, and failurePolicy Fail refuses the pod.
        timed_out = re.search(
            rf'Internal error occurred: failed calling webhook "{re.escape(STATIC_IP_WEBHOOK)}": failed to call webhook: '
            r'Post "[^"]+": context deadline exceeded$', err)
        self.check(f"rbac: without {what}, a static-IP pod waits for the webhook's timeout (10 s) and is refused",
                   rc != 0 and timed_out and 9500 <= ms <= 13000, f"{ms:.0f} ms: {err}")

    def rbac_ovn_dnat(self, what):
        """An OvnDnatRule whose OvnEip cannot be fetched: a 400 naming the permission."""
        self.replayer.reset()
        case = json.loads((ROOT / "tests/cases/o06-ovn-dnat-create-allowed.json").read_text())
        self.replayer.load(case["cluster"])
        self.settle()
        started = time.monotonic()
        got = self.replayer.send(case["request"])
        ms = (time.monotonic() - started) * 1000
        self.notes.append(f"rbac, no {what}: OvnDnatRule CREATE: {ms:.0f} ms: {got['raw']}")
        self.check(f"rbac: without {what}, an OvnDnatRule is refused with 400 naming the permission",
                   not got["allowed"] and got["code"] == 400 and "forbidden" in (got["message"] or "").lower(), got["raw"])


    # --- the kustomization -----------------------------------------------

    def test_overlay(self):
        """deploy/ as kubectl's kustomize builds it, and the overlay for Kubewarden in
        cattle-kubewarden-system applied over it: its RBAC passes the preflight there, and the
        policy-server running as that namespace's ServiceAccount decides the seed's demo."""
        built = self.kubectl("kustomize", str(DEPLOY))
        files = [d for f in ("policy-server.yaml", "rbac.yaml", "cluster-admission-policies.yaml")
                 for d in yaml.safe_load_all((DEPLOY / f).read_text()) if d]
        got = [d for d in yaml.safe_load_all(built.stdout) if d] if built.returncode == 0 else None
        self.check("overlay: kubectl kustomize deploy/ gives exactly the objects of its three files, in order",
                   got == files, built.stderr.strip() or f"{len(got or [])} objects")
        self.own_module(files)
        self.kubectl("create", "namespace", OVERLAY_NAMESPACE)
        applied = self.apply_deploy(ROOT / "overlays" / OVERLAY_NAMESPACE)
        self.check(f"overlay: kubectl apply -k overlays/{OVERLAY_NAMESPACE} accepted", applied.returncode == 0,
                   applied.stderr.strip())
        kubeconfig = self.server.kubeconfig
        try:
            done = self.preflight(OVERLAY_NAMESPACE)
            lines = done.stdout.splitlines()
            self.check(f"overlay: preflight passes for {OVERLAY_NAMESPACE}",
                       done.returncode == 0 and lines and all(l.startswith("ok") for l in lines),
                       f"{len(lines)} checks" if done.returncode == 0 else done.stdout + done.stderr)
            done = self.preflight(NAMESPACE)
            self.check(f"overlay: the grants moved: preflight fails for {NAMESPACE}",
                       done.returncode == 1, f"{sum(l.startswith('FAIL') for l in done.stdout.splitlines())} checks fail")
            self.server.kubeconfig = self.cp.service_account_kubeconfig(
                OVERLAY_NAMESPACE, SERVICE_ACCOUNT, self.folder / "overlay-sa.kubeconfig")
            self.server.restart()
            self.wait_for_webhooks()
            self.seed_conflict()
            done, ms = self.seed_demo()
            self.check(f"overlay: served as {OVERLAY_NAMESPACE}'s ServiceAccount, the seed's demo is refused verbatim",
                       done.returncode != 0 and done.stderr.strip() == SEED_REFUSAL, done.stderr.strip())
        finally:
            restored = self.apply_deploy()
            self.check("overlay: kubectl apply -k deploy/ again restores the grants",
                       restored.returncode == 0 and self.preflight().returncode == 0, restored.stderr.strip())
            self.server.kubeconfig = kubeconfig
            self.server.restart()
            self.wait_for_webhooks()

    def own_module(self, files):
        """deploy/module.yaml's module in both policies, patched by an overlay as its header says:
        a component before deploy/set-module; nothing else of deploy/ changes."""
        mine = "registry://registry.example.com:5000/mine/kube-ovn-policy:v0.1.0-dev"
        overlay = self.folder / "module-overlay"
        (overlay / "module").mkdir(parents=True, exist_ok=True)
        (overlay / "module" / "kustomization.yaml").write_text(yaml.safe_dump({
            "apiVersion": "kustomize.config.k8s.io/v1alpha1", "kind": "Component",
            "patches": [{"target": {"kind": "ConfigMap", "name": "kube-ovn-policy-module"},
                         "patch": yaml.safe_dump([{"op": "replace", "path": "/data/module", "value": mine}])}]}))
        deploy = os.path.relpath(DEPLOY, overlay)
        (overlay / "kustomization.yaml").write_text(yaml.safe_dump({
            "apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization",
            "resources": [deploy], "components": ["module", f"{deploy}/set-module"],
            "sortOptions": {"order": "fifo"}}))
        built = self.kubectl("kustomize", str(overlay))
        got = [d for d in yaml.safe_load_all(built.stdout) if d] if built.returncode == 0 else []
        want = copy.deepcopy(files)
        for obj in want:
            if obj["kind"] == "ClusterAdmissionPolicy":
                obj["spec"]["module"] = mine
        self.check("overlay: a module of one's own, patched into deploy/module.yaml's ConfigMap, is the module of "
                   "both ClusterAdmissionPolicies and nothing else changes",
                   got == want and sum(o["kind"] == "ClusterAdmissionPolicy" for o in got) == 2,
                   built.stderr.strip() or f"{len(got)} objects")

    def test_guard(self):
        """deploy/policy-server.yaml's ValidatingAdmissionPolicy: no namespaced policy on kube-ovn (e2e/harness/guard.py)."""
        guard.check(self)

    def test_adversary(self):
        """A tenant's requests against the policy-server's watches, memory and latency (e2e/harness/adversary.py)."""
        try:
            adversary.run(self, self.audit, STATIC_IP_WEBHOOK)
        finally:
            # The attack's watches and workers go with the server.
            self.server.restart()
            self.wait_for_webhooks()

    def test_scaffold(self):
        """Artifact Hub's install box (e2e/harness/scaffold.py): deploy/'s webhooks
        removed, the scaffolded policy's rendered (webhooks.py) and served on
        its own with the PolicyServer `default`'s ServiceAccount and the
        chart's default permissions. Last: deploy/ is not restored."""
        for policy in self.policies:
            self.kubectl("delete", "validatingwebhookconfiguration", "clusterwide-" + policy["metadata"]["name"])
        for obj in scaffold.RBAC:
            self.apply(obj)
        kubeconfig = self.folder / "scaffold.kubeconfig"
        self.cp.service_account_kubeconfig(NAMESPACE, scaffold.SERVICE_ACCOUNT, kubeconfig)
        for n, (variant, flags, granted) in enumerate(scaffold.VARIANTS):
            if granted:
                for obj in scaffold.install_text_grant():
                    self.apply(obj)
            policy = scaffold.scaffolded(self, variant, flags, self.args.module, self.args.kwctl)
            folder = self.folder / f"scaffold-{n}"
            folder.mkdir()
            server = WebhookServer(self.args.server, Path(self.args.module).resolve(), folder, kubeconfig, [policy])
            server.start()
            try:
                pid = policy_id(policy)
                webhook = render_webhook(policy, url=server.url(pid),
                                         ca_bundle=base64.b64encode(server.cert.read_bytes()).decode())
                self.apply(webhook)
                rules = webhook["webhooks"][0]["rules"]
                groups = sorted({g for r in rules for g in r["apiGroups"]})
                self.check(f"scaffold {variant}: its webhook names no Kube-OVN kind",
                           "kubeovn.io" not in groups and bool(rules), f"apiGroups {groups}")
                scaffold.check_requests(self, variant, n, context_aware=bool(flags), granted=granted)
            finally:
                server.stop()
                self.kubectl("delete", "validatingwebhookconfiguration", policy_id(policy))


# The adversary test's requests by default: issue 37's target. With lookups
# bounded by what exists they take about 30 s on two busy cores (the test
# about 50 s in all, kop-serve or policy-server); without, the attack stops
# at --adversary-seconds.
ADVERSARY_REQUESTS = 10000


def settings_of(key):
    """A settings group's settings for the server: None (deploy/'s own) for the defaults."""
    return None if key == "{}" else json.loads(key)


# The kinds the policy fetches by name (get_resource): their objects in a case's cluster.
FETCHED_BY_NAME = ("vpcs", "iptablesEips", "ovnEips", "qosPolicies", "services", "configmaps")


def fetched_by_name(cluster):
    """What of a case's cluster the policy may fetch by name, comparable between cases.

    A pod's own IP object is fetched by name (I15) only where a Subnet has a
    record of the addresses in use: then the IP objects count too.
    """
    fetched = {k: cluster.get(k) for k in FETCHED_BY_NAME}
    statuses = [s.get("status") for s in cluster.get("subnets", []) if isinstance(s, dict)]
    if any(isinstance(st, dict) and (st.get("v4usingIPrange") or st.get("v6usingIPrange")) for st in statuses):
        fetched["ips"] = cluster.get("ips")
    return json.dumps(fetched, sort_keys=True)


# (resource, verb removed from deploy/rbac.yaml's ClusterRole, what is then tried)
RBAC_SCENARIOS = [
    ("ovn-eips", "get", Suite.rbac_ovn_dnat),
    ("ips", "list", Suite.rbac_static_ip_pod),
]


def not_replayable(case):
    """Why a case cannot be a real request here, or None."""
    request = case["request"]
    if case.get("forbidden") or (case.get("cluster") or {}).get("forbidden"):
        return "it forbids a lookup: the RBAC test removes real grants instead"
    for key in ("object", "oldObject"):
        if request.get(key) is not None and not isinstance(request[key], dict):
            return f"its {key} is no JSON object: bad input that an API server never sends"
    if request.get("userInfo", {}).get("username", "").endswith(":audit-scanner"):
        return "an audit scanner request: it goes to the policy-server directly, never through the API server"
    if request.get("namespace") in ("kube-system", NAMESPACE):
        return f"namespace {request['namespace']} is excluded by deploy/ (the exclusions test covers it)"
    return None


# The suite's settings (`--setting NAME=VALUE`).
SETTINGS = {
    "cases": [str(d) for d in CASE_DIRS],  # case files or folders, comma-separated
    "settle": 0.15,  # seconds for watch caches after a write
    "keep": False,  # keep the temporary folder
    "adversary_requests": ADVERSARY_REQUESTS,  # adversarial requests to send (issue 37's target)
    "adversary_seconds": 110.0,  # the most the attack may take (what it has not sent by then fails the test)
    "adversary_clients": 3,  # adversarial clients at once
    "adversary_warm": 0,  # the attack's first requests, after which the server's RSS is measured (0: half)
    "adversary_rate": 0.0,  # adversarial requests a second, at most (0: no bound)
    "adversary_attachments": 2500,  # attachments of the largest pods
    "adversary_big_every": 100,  # one request in this many is a large one
    "adversary_baseline": 40,  # legitimate requests timed without the attack
}

# The servers: (binary, module, kwctl for the scaffold test's manifest).
SERVERS = {
    "kop-serve": (str(ROOT / "target/host/kop-serve"), ROOT / "policy.wasm", None),
    "policy-server": ("policy-server", ROOT / "annotated-policy.wasm", "kwctl"),
}

TESTS = ["seed", "ippool", "cases", "exclusions", "pod_update", "failure", "rbac", "overlay", "guard", "adversary",
         "scaffold"]


@pytest.fixture(scope="module", params=[
    pytest.param("kop-serve", id="kop-serve"),
    pytest.param("policy-server", id="policy-server", marks=pytest.mark.requires("kwctl", "policy-server")),
])
def cluster(request, settings):
    """The control plane, deploy/ applied and the server serving it, once per server."""
    binary, module, kwctl = SERVERS[request.param]
    args = types.SimpleNamespace(**settings(SETTINGS))
    args.cases = args.cases.split(",") if isinstance(args.cases, str) else args.cases
    args.adversary_warm = args.adversary_warm or None
    server = shutil.which(binary)
    if server is None:
        pytest.fail(f"{binary}: not found")
    args.server, args.module = str(Path(server).resolve()), str(module)
    args.kwctl = shutil.which(kwctl) if kwctl else None
    folder = Path(tempfile.mkdtemp(prefix="kop-cluster-e2e-"))
    started = time.monotonic()
    # The API server's audit log records the policy-server's watches (adversary).
    with ControlPlane(apiserver_args=audit_of_policy_server(folder, verbs=["watch"])[1], keep=args.keep) as cp:
        suite = Suite(args, cp, folder)
        suite.audit = AuditCounter(folder / "audit.log")
        try:
            suite.setup()
            yield suite
        finally:
            if suite.failed:
                suite.failure_logs()
            suite.stop()
            for note in suite.notes:
                print(f"# {note}")
    print(f"# {request.param}, {time.monotonic() - started:.0f} s in all")
    if args.keep:
        print(f"# kept {folder}")
    else:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("test", TESTS)
def test_cluster(cluster, counted, test):
    started = time.monotonic()
    getattr(counted(cluster), f"test_{test}")()
    cluster.notes.append(f"{test}: {time.monotonic() - started:.1f} s")
