"""The allocator's answers: every pod, workload and IPPool case played on kube-ovn-controller itself.

    python3 -m e2e.tools.controller_oracle [--record] [--wait S] [CASE_DIR_OR_FILE ...]

kube-ovn-controller (Kube-OVN's cmd/controller at 1533681d7a6b, built by hand
outside this repository: no registry serves it) runs out of cluster against
a real kube-apiserver with OVN's databases in ovsdb-server, as
`make e2e-kube-ovn` runs it (e2e/suites/test_kube_ovn.py). No webhook is registered:
nothing stands between a request and the allocator.

For each case about a Pod (CREATE, UPDATE) the case's cluster is built
through the controller itself: its Namespaces, Subnets (the controller must
make them Ready), IPPools and NetworkAttachmentDefinitions are stored, and
each IP object is reproduced by a holder pod, named as the IP object's
`spec.podName` in its `spec.namespace` (a VM's: a KubeVirt launcher pod of
that VM), asking for exactly that address in
that subnet, one at a time, until the controller has allocated it. Then the
request's pod is created (an UPDATE: its oldObject first, then the change of
annotations) and the controller's outcome is read within a bounded wait:

- `allocated`: every NIC annotated allocated, its address per provider in
  `nics` (`any` for an address the pod did not name: the IPAM's pick), and no
  address of it with a second holder;
- `double`: allocated, and an address now has two holders in its subnet (two
  IP objects, or two pods annotated with it): `second_holder`;
- `refused`: a Warning event on the pod and no allocation a second later
  (`event`: the latest one's reason and message);
- `waiting`: none of these within the wait.

A workload case (Deployment, StatefulSet, DaemonSet, Job, CronJob) is played
with kube-controller-manager out of cluster (`make controller-manager-bin`,
target/cluster/bin or $KUBE_CONTROLLER_MANAGER) making its pods: the outcome
of each pod it makes (an UPDATE: of the new template's), allocated pods
reported Running and Ready as a kubelet would; recorded as the worst of them
(double, refused, waiting: a pod never made counts as waiting) with every
pod's in `pods`. A DaemonSet's pods are made for two Nodes; a CronJob's by a
Job of its template (`kubectl create job --from=cronjob/…`).

An IPPool case (CREATE, UPDATE): over its Subnets and IPPools, the request's
pool is created (an UPDATE: written over the stored one) and its Ready
condition read: `ready` (with what its status counts `available`), `failed`
(the condition's reason and message) or `waiting`.

Cases whose cluster the controller cannot reproduce are recorded with
`asked: false` and why.

Without `--record` the live outcomes are compared with the recorded ones
(`controller`, tests/README.md) and every difference is printed; with it they
are written into the case files. Cases are grouped by the default network
they need (ovn-default's and join's CIDRs, the controller's flags), each
group on a fresh control plane. Without kube-ovn-controller on PATH it prints
one `SKIPPED:` line.

With `--release <tag>` (`make controller-oracle ORACLE_RELEASE=v1.16.2`, the
kube-ovn-controller on PATH or in $KUBE_OVN_CONTROLLER built from that tag)
the outcomes are those of a Kube-OVN release users run: recorded in, and
compared with, tests/releases/<tag>.json, never in the case files
(docs/compatibility.md).
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
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
from e2e.harness.controlplane import KUBE_OVN_CRDS, ControlPlane, bin_path
from e2e.harness.kubeapi import Api
from e2e.harness.kubeovn import (
    ALLOCATED,
    CONTROLLER_ACCOUNT,
    CONTROLLER_NAMESPACE,
    DEFAULT_CIDR,
    JOIN_CIDR,
    Controller,
    Ovsdb,
)
from e2e.harness.processes import stop_process
from e2e.harness.replay import Refused, Replayer, clean, plural_of, resource_path
from e2e.harness.upstream import not_found
OWN_SUBNETS = ("ovn-default", "join")  # made by the controller's init, from its flags
PROBE_NAMESPACE = "kube-ovn-oracle-probe"
WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob")
# What kube-controller-manager runs to make the workloads' pods (and the `default` ServiceAccounts, and
# the garbage collection that takes a deleted workload's ReplicaSets and pods away).
MANAGER_CONTROLLERS = ("serviceaccount", "deployment", "replicaset", "statefulset", "daemonset", "job", "cronjob",
                       "garbage-collector")
# The Nodes a DaemonSet's pods are made for (no kubelet: they never run).
NODES = ("kube-ovn-worker", "kube-ovn-worker2")
ALLOCATED_SUFFIX = ".kubernetes.io/allocated"
IP_RESERVED = "ovn.kubernetes.io/ip_reserved"  # the port a Vip is reserved by (I21)


def network_of(case):
    """(ovn-default's CIDR, join's CIDR) the case needs: the controller's --default-cidr and --node-switch-cidr."""
    found = {s["metadata"]["name"]: s.get("spec", {}).get("cidrBlock")
             for s in (case.get("cluster") or {}).get("subnets", [])}
    return (found.get("ovn-default") or DEFAULT_CIDR, found.get("join") or JOIN_CIDR)


def provider_of(ip):
    """The provider of an IP object from its name (`<pod>.<ns>` primary, `<pod>.<ns>.<provider>`), or None."""
    spec = ip.get("spec", {})
    prefix = f"{spec.get('podName')}.{spec.get('namespace')}"
    name = ip["metadata"]["name"]
    if name == prefix:
        return "ovn"
    if name.startswith(prefix + "."):
        return name[len(prefix) + 1:]
    return None


def nad_of(provider):
    """(namespace, name) of the NetworkAttachmentDefinition a provider `<name>.<ns>[.ovn]` names, or None."""
    parts = provider.split(".")
    if parts[-1] == "ovn":
        parts = parts[:-1]
    return (parts[1], parts[0]) if len(parts) == 2 else None


def named(address, text):
    """Whether `text` names `address` (not merely a longer address that starts or ends with it)."""
    return re.search(rf"(?<![0-9A-Fa-f:.]){re.escape(address)}(?![0-9A-Fa-f:.])", text) is not None


def allocated_nics(pod, asked):
    """Each allocated NIC's address by provider. An address the pod did not name (`asked`: its
    annotations as text) is the IPAM's pick, which depends on what earlier cases released:
    recorded as `any`, so that the record is the same on every run."""
    annotations = pod["metadata"].get("annotations") or {}
    nics = {}
    for key, value in sorted(annotations.items()):
        if key.endswith(ALLOCATED_SUFFIX) and value == "true":
            provider = key[:-len(ALLOCATED_SUFFIX)]
            address = annotations.get(f"{provider}.kubernetes.io/ip_address", "")
            nics[provider] = ",".join(a if named(a, asked) else "any" for a in address.split(","))
    return nics


def second_holders(holders, namespace, name, nics):
    """Who else holds an address of pod namespace/name (`holders`: each address's holders), sorted."""
    me = f"pod {namespace}/{name}"
    own_ips = {f"IP {name}.{namespace}" + ("" if p == "ovn" else f".{p}") for p in nics}
    return sorted(h for hs in holders.values() if me in hs and len(hs - own_ips) > 1 for h in hs - own_ips - {me})


class CasePlayer:
    """One control plane with kube-ovn-controller for a default network; cases played one at a time."""

    def __init__(self, cp, folder, binary, network, wait, manager=None):
        self.cp, self.folder, self.wait = cp, folder, wait
        self.manager = None
        self.default_cidr, self.join_cidr = network
        self.api = Api(cp.kubeconfig)
        self.replayer = Replayer(self.api)
        cp.install_crds(KUBE_OVN_CRDS)
        cp.kubectl("create", "clusterrolebinding", "kube-ovn-controller", "--clusterrole=cluster-admin",
                   f"--serviceaccount={CONTROLLER_NAMESPACE}:{CONTROLLER_ACCOUNT}")
        for ns in ("default", "kube-system", PROBE_NAMESPACE):
            self.replayer.ensure_namespace(ns)
        kubeconfig = cp.service_account_kubeconfig(CONTROLLER_NAMESPACE, CONTROLLER_ACCOUNT,
                                                   folder / "kube-ovn-controller.kubeconfig")
        self.ovsdb = Ovsdb(folder).start()
        self.controller = Controller(binary, folder, kubeconfig, self.ovsdb, self.default_cidr, self.join_cidr).start()
        probe = self.pod_object("probe", PROBE_NAMESPACE, {})
        self.api.request("POST", f"/api/v1/namespaces/{PROBE_NAMESPACE}/pods", probe)
        if self.allocation("probe", PROBE_NAMESPACE, 120)[0] != "allocated":
            raise RuntimeError(f"kube-ovn-controller never allocated (network {network}):\n{self.controller.tail()}")
        self.manager_binary = manager  # started at the first workload case, after every pod case: its
        # garbage collector deletes pods whose owner does not exist, as the pod cases' often do

    def start_manager(self, binary):
        """kube-controller-manager out of cluster (admin credentials, no leader election, no server)."""
        self.manager_log = open(self.folder / "kube-controller-manager.log", "ab")
        self.manager = subprocess.Popen(
            [str(binary), "--kubeconfig", str(self.cp.kubeconfig), "--leader-elect=false", "--secure-port=0",
             "--use-service-account-credentials=false",
             "--controllers=" + ",".join(f"{c}-controller" for c in MANAGER_CONTROLLERS)],
            stdin=subprocess.DEVNULL, stdout=self.manager_log, stderr=subprocess.STDOUT, cwd=self.folder,
            start_new_session=True)

    def stop(self):
        if self.manager:
            stop_process(self.manager, timeout=15)
            self.manager = None
            self.manager_log.close()
        self.controller.stop()
        self.ovsdb.stop()

    @staticmethod
    def pod_object(name, namespace, annotations):
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": namespace, "annotations": annotations},
                "spec": {"containers": [{"name": "app", "image": "docker.io/library/nginx:alpine"}]}}

    # --- reading the controller --------------------------------------------

    def warnings(self, namespace, uid):
        code, body, _ = self.api.request("GET", f"/api/v1/namespaces/{namespace}/events",
                                         params={"fieldSelector": f"involvedObject.uid={uid},type=Warning"})
        items = sorted((body or {}).get("items", []) if code == 200 else [],
                       key=lambda e: (e.get("lastTimestamp") or e.get("eventTime") or "", e["metadata"]["name"]))
        return [f"{e.get('reason')}: {e.get('message')}" for e in items]

    def warning_count(self, namespace, uid):
        """How many times Warning events were recorded for an object (the recorder aggregates repeats in `count`)."""
        code, body, _ = self.api.request("GET", f"/api/v1/namespaces/{namespace}/events",
                                         params={"fieldSelector": f"involvedObject.uid={uid},type=Warning"})
        return sum(e.get("count") or 1 for e in (body or {}).get("items", [])) if code == 200 else 0

    def allocations(self, namespace, uid):
        """How many times the controller allocated the pod's NICs: its Normal `PodNetworkAllocated`
        events (pod.go:583, one per allocation that needed any NIC, counted by the recorder)."""
        code, body, _ = self.api.request("GET", f"/api/v1/namespaces/{namespace}/events",
                                         params={"fieldSelector": f"involvedObject.uid={uid},type=Normal,"
                                                                  "reason=PodNetworkAllocated"})
        return sum(e.get("count") or 1 for e in (body or {}).get("items", [])) if code == 200 else 0

    def allocation(self, name, namespace, wait, skip_warnings=0, since=None, allocated_before=None):
        """(state, pod, warnings) within `wait` s: allocated (every NIC annotated), refused (a Warning event
        past the first `skip_warnings`, the pod still unallocated a moment later), or waiting.

        `since`: the annotations before an update; a NIC counts once its allocated annotation is new, or
        (`allocated_before`: the pod's allocations before the update) once the controller allocated
        again, a NIC already marked included (the migration key, a renamed provider)."""
        deadline = time.monotonic() + wait
        refused_at = None
        while True:
            code, pod, _ = self.api.request("GET", f"/api/v1/namespaces/{namespace}/pods/{name}")
            if code != 200:
                return "gone", None, []
            annotations = pod["metadata"].get("annotations") or {}
            done = [k for k, v in annotations.items() if k.endswith(ALLOCATED_SUFFIX) and v == "true"
                    and (since is None or (since or {}).get(k) != "true")]
            if done or (allocated_before is not None
                         and self.allocations(namespace, pod["metadata"]["uid"]) > allocated_before):
                return "allocated", pod, []
            warnings = self.warnings(namespace, pod["metadata"]["uid"])[skip_warnings:]
            now = time.monotonic()
            if warnings:
                refused_at = refused_at or now
                if now - refused_at > 1.5:  # its retry may succeed (a subnet not yet ready)
                    return "refused", pod, warnings
            if now > deadline:
                return ("refused" if warnings else "waiting"), pod, warnings
            time.sleep(0.1)

    def holders(self):
        """{(subnet, address): sorted holders}: every IP object and every pod annotated with an address."""
        found = {}
        code, ips, _ = self.api.request("GET", "/apis/kubeovn.io/v1/ips")
        for ip in ips.get("items", []) if code == 200 else []:
            spec = ip.get("spec", {})
            for a in (spec.get("v4IpAddress"), spec.get("v6IpAddress")):
                if a:
                    found.setdefault((spec.get("subnet"), a), set()).add(f"IP {ip['metadata']['name']}")
        code, pods, _ = self.api.request("GET", "/api/v1/pods")
        for pod in pods.get("items", []) if code == 200 else []:
            annotations = pod["metadata"].get("annotations") or {}
            for key, value in annotations.items():
                if not key.endswith(ALLOCATED_SUFFIX) or value != "true":
                    continue
                provider = key[:-len(ALLOCATED_SUFFIX)]
                subnet = annotations.get(f"{provider}.kubernetes.io/logical_switch")
                for a in (annotations.get(f"{provider}.kubernetes.io/ip_address") or "").split(","):
                    if a:
                        found.setdefault((subnet, a), set()).add(
                            f"pod {pod['metadata']['namespace']}/{pod['metadata']['name']}")
        return found

    # --- building a case's cluster -----------------------------------------

    def reset(self):
        """Deletes every pod but the probe, then what the last case stored; waits for the controller's release."""
        for api_version, plural in [plural_of(kind)[:2] for kind in WORKLOAD_KINDS] + [("apps/v1", "replicasets")]:
            code, items, _ = self.api.request("GET", f"/apis/{api_version}/{plural}")
            for item in items.get("items", []) if code == 200 else []:
                meta = item["metadata"]
                self.api.request("DELETE", resource_path(api_version, plural, meta["namespace"], meta["name"]),
                                 {"propagationPolicy": "Background"})
        deadline = time.monotonic() + 20
        while True:  # a workload's controller may make a pod while its workload goes away
            code, pods, _ = self.api.request("GET", "/api/v1/pods")
            left = [p["metadata"] for p in (pods.get("items", []) if code == 200 else [])
                    if p["metadata"]["namespace"] != PROBE_NAMESPACE]
            if not left or time.monotonic() > deadline:
                break
            for meta in left:
                pod_path = f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}"
                if meta.get("finalizers"):  # a case's pod being deleted: let it go
                    self.api.request("PATCH", pod_path, {"metadata": {"finalizers": None}},
                                     content_type="application/merge-patch+json")
                self.api.request("DELETE", pod_path, {"gracePeriodSeconds": 0})
            time.sleep(0.2)
        self.until_only_probe_ips()
        for plural, keep in (("vips", ()), ("ippools", ()), ("subnets", OWN_SUBNETS), ("vpcs", ("ovn-cluster",))):
            self.delete_all(f"/apis/kubeovn.io/v1/{plural}", keep)
        code, nads, _ = self.api.request("GET", "/apis/k8s.cni.cncf.io/v1/network-attachment-definitions")
        for nad in nads.get("items", []) if code == 200 else []:
            meta = nad["metadata"]
            self.api.request("DELETE", f"/apis/k8s.cni.cncf.io/v1/namespaces/{meta['namespace']}"
                                       f"/network-attachment-definitions/{meta['name']}")

    def until_only_probe_ips(self, timeout=20):
        deadline = time.monotonic() + timeout
        while True:
            code, ips, _ = self.api.request("GET", "/apis/kubeovn.io/v1/ips")
            left = [i["metadata"]["name"] for i in ips.get("items", [])
                    if i.get("spec", {}).get("namespace") not in (PROBE_NAMESPACE, "")
                    and i.get("spec", {}).get("podType") != "node"] if code == 200 else ["?"]
            if not left:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"the controller did not release {left} within {timeout} s")
            time.sleep(0.1)

    def delete_all(self, path, keep, timeout=20):
        """Deletes a cluster-scoped collection's objects but `keep`; waits until the controller let them go."""
        code, items, _ = self.api.request("GET", path)
        names = [i["metadata"]["name"] for i in items.get("items", []) if i["metadata"]["name"] not in keep] \
            if code == 200 else []
        for name in names:
            self.api.request("DELETE", f"{path}/{name}")
        deadline = time.monotonic() + timeout
        for name in names:
            while self.api.request("GET", f"{path}/{name}")[0] == 200:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{path}/{name} not deleted within {timeout} s")
                time.sleep(0.1)

    def build(self, case, own):
        """The case's cluster through the controller: None, or why it cannot be built.

        `own`: (namespace, name) of the request's pods; their own IP objects are
        left to the request: a pod of that name cannot exist twice, and the
        controller gives a pod back what its name holds (IPAM keys addresses by
        `<namespace>/<pod>`), so the request's pod (an UPDATE's oldObject)
        asks for them itself."""
        cluster = case.get("cluster") or {}
        for ns in cluster.get("namespaces", []):
            meta = ns.get("metadata", {})
            self.namespace(meta["name"], meta.get("labels"), meta.get("annotations"))
        for vpc in cluster.get("vpcs", []):
            if vpc["metadata"]["name"] != "ovn-cluster":
                why = self.store(vpc)
                if why:
                    return why
        for subnet in cluster.get("subnets", []):
            name = subnet["metadata"]["name"]
            if name in OWN_SUBNETS:
                continue
            why = self.store(subnet) or self.until_ready("subnets", name)
            if why:
                return f"the controller refuses Subnet {name}: {why}"
        for pool in cluster.get("ippools", []):
            why = self.store(pool) or self.until_ready("ippools", pool["metadata"]["name"])
            if why:
                return f"the controller refuses IPPool {pool['metadata']['name']}: {why}"
        for nad in cluster.get("networkattachmentdefinitions", []):
            why = self.store(nad)
            if why:
                return why
        for vip in cluster.get("vips", []):
            why = self.store(vip) or self.vip_as_the_case_has_it(vip)
            if why:
                return f"the controller refuses Vip {vip['metadata']['name']}: {why}"
        holders = {}
        for ip in cluster.get("ips", []):
            spec = ip.get("spec", {})
            provider = provider_of(ip)
            if provider is None:
                return f"IP {ip['metadata']['name']} is not named as the controller names it (<pod>.<ns>[.<provider>])"
            address = spec.get("ipAddress") or ",".join(
                a for a in (spec.get("v4IpAddress"), spec.get("v6IpAddress")) if a)
            vm = spec.get("podType") == "VirtualMachine"
            nic = (provider, address, spec.get("subnet"))
            holders.setdefault((spec["namespace"], spec["podName"], vm), []).append(nic)
        for (namespace, name, vm), nics in holders.items():
            if (namespace, name) in own and not vm:
                continue
            why = self.hold(namespace, name, nics, cluster, vm)
            if why:
                return why
        return None

    def namespace(self, name, labels=None, annotations=None):
        """The namespace as the case has it; retried, since the controller annotates namespaces too."""
        for attempt in range(20):
            try:
                return self.replayer.ensure_namespace(name, labels, annotations)
            except Refused as e:
                if " 409 " not in str(e) or attempt == 19:
                    raise
                time.sleep(0.1)

    def store(self, obj):
        obj = clean(obj)
        obj.pop("status", None)
        obj["metadata"].pop("finalizers", None)
        try:
            self.replayer.create(obj)
        except Refused as e:
            return f"the API server refuses it: {e}"
        return None

    def vip_as_the_case_has_it(self, vip, timeout=15):
        """None once the controller gave the Vip its address and, where the case's
        Vip is reserved by a port (`ovn.kubernetes.io/ip_reserved`, I21), that
        label is on it: the controller writes it empty at creation, a pod's
        allocation sets it, so it is patched here as a pod would have left it."""
        name = vip["metadata"]["name"]
        path = f"/apis/kubeovn.io/v1/vips/{name}"
        deadline = time.monotonic() + timeout
        while True:
            code, obj, _ = self.api.request("GET", path)
            if code == 200 and (obj.get("status") or {}).get("v4ip"):
                break
            if time.monotonic() > deadline:
                return f"no address within {timeout} s"
            time.sleep(0.1)
        reserved = (vip["metadata"].get("labels") or {}).get(IP_RESERVED, "")
        if not reserved:
            return None
        while True:
            patch = {"metadata": {"labels": {IP_RESERVED: reserved}}}
            code, obj, _ = self.api.request("PATCH", path, patch,
                                            content_type="application/merge-patch+json")
            time.sleep(0.3)
            code, obj, _ = self.api.request("GET", path)
            if code == 200 and (obj["metadata"].get("labels") or {}).get(IP_RESERVED) == reserved:
                return None
            if time.monotonic() > deadline:
                return f"the label {IP_RESERVED}={reserved} does not stay"

    def until_ready(self, plural, name, timeout=15):
        """None once the controller set the object's Ready condition True, else its conditions."""
        deadline = time.monotonic() + timeout
        while True:
            code, obj, _ = self.api.request("GET", f"/apis/kubeovn.io/v1/{plural}/{name}")
            conditions = (obj or {}).get("status", {}).get("conditions") or [] if code == 200 else []
            if any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions):
                return None
            if time.monotonic() > deadline:
                return "not Ready within %d s: %s" % (timeout, "; ".join(
                    f"{c.get('type')}={c.get('status')} {c.get('reason', '')} {c.get('message', '')}".strip()
                    for c in conditions) or "no conditions")
            time.sleep(0.1)

    def hold(self, namespace, name, nics, cluster, vm=False):
        """A holder pod asking for exactly these addresses; None once the controller allocated them all.

        `vm`: the addresses are VM `name`'s; the holder is a KubeVirt launcher
        pod of it (controller ownerReference VirtualMachineInstance `name`),
        whose IP objects the controller names after the VM."""
        self.namespace(namespace)
        annotations, networks, made = {}, [], []
        for provider, address, subnet in nics:
            annotations[f"{provider}.kubernetes.io/ip_address"] = address
            annotations[f"{provider}.kubernetes.io/logical_switch"] = subnet
            if provider != "ovn":
                nad = nad_of(provider)
                if nad is None:
                    return f"the provider {provider} names no NetworkAttachmentDefinition"
                known = {(n["metadata"].get("namespace", "default"), n["metadata"]["name"])
                         for n in cluster.get("networkattachmentdefinitions", [])}
                if nad not in known:
                    # The holder's own, as the IP object's provider says: gone once it is allocated.
                    why = self.store(self.attachment(nad, provider))
                    if why:
                        return why
                    made.append(nad)
                networks.append(f"{nad[0]}/{nad[1]}")
        if networks:
            annotations["k8s.v1.cni.cncf.io/networks"] = ",".join(networks)
        pod = self.pod_object(name, namespace, annotations)
        if vm:
            pod["metadata"]["ownerReferences"] = [{
                "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance", "name": name,
                "uid": "00000000-0000-4000-8000-00000000cafe", "controller": True}]
            name = pod["metadata"]["name"] = f"virt-launcher-{name}-holder"
        code, body, _ = self.api.request("POST", f"/api/v1/namespaces/{namespace}/pods", pod)
        if code != 201:
            return f"holder pod {namespace}/{name}: HTTP {code} {(body or {}).get('message')}"
        state, got, warnings = self.allocation(name, namespace, self.wait)
        wanted = {p: a for p, a, _ in nics}
        annotations = (got or {}).get("metadata", {}).get("annotations") or {}
        if state != "allocated" or any(annotations.get(f"{p}.kubernetes.io/allocated") != "true" for p in wanted):
            return f"the controller did not allocate holder pod {namespace}/{name} {wanted}: {state} {warnings[:1]}"
        for nad_namespace, nad_name in made:
            self.api.request("DELETE", f"/apis/k8s.cni.cncf.io/v1/namespaces/{nad_namespace}"
                                       f"/network-attachment-definitions/{nad_name}")
        return None

    @staticmethod
    def attachment(nad, provider):
        """A NetworkAttachmentDefinition Kube-OVN allocates for, with this provider."""
        config = {"cniVersion": "0.3.0", "type": "kube-ovn", "server_socket": "/run/openvswitch/kube-ovn-daemon.sock",
                  "provider": provider}
        return {"apiVersion": "k8s.cni.cncf.io/v1", "kind": "NetworkAttachmentDefinition",
                "metadata": {"name": nad[1], "namespace": nad[0]}, "spec": {"config": json.dumps(config)}}

    # --- the request -------------------------------------------------------

    def play(self, case):
        """The controller's outcome for the case's request: a record without commit and input."""
        request = case["request"]
        if not isinstance(request.get("object"), dict) or not isinstance(request["object"].get("metadata", {}), dict):
            return {"asked": False, "why": "its object does not decode as a Pod: the API server never stores it"}
        obj = clean(request["object"])
        namespace = request.get("namespace") or obj["metadata"].get("namespace") or "default"
        obj["metadata"]["namespace"] = namespace
        name = obj["metadata"].get("name") or request.get("name")
        self.reset()
        why = self.build(case, {(namespace, name)})
        if why:
            return {"asked": False, "why": why}
        self.namespace(namespace)
        path = f"/api/v1/namespaces/{namespace}/pods"
        since, skip = None, 0
        if request["operation"] == "UPDATE":
            old = clean(request["oldObject"])
            old["metadata"]["namespace"] = namespace
            why = self.own_statefulset(old, obj, namespace)
            if why:
                return {"asked": False, "why": why}
            old_annotations = old["metadata"].get("annotations") or {}
            # Created as new: the controller allocates what the old pod holds.
            old["metadata"]["annotations"] = {k: v for k, v in old_annotations.items()
                                              if not k.endswith(ALLOCATED_SUFFIX)}
            code, body, _ = self.api.request("POST", path, old)
            if code != 201:
                why = f"the API server refuses the oldObject: {code} {(body or {}).get('message')}"
                return {"asked": False, "why": why}
            state, stored, warnings = self.allocation(name, namespace, self.wait)
            if state != "allocated":
                return {"asked": False, "why": f"the controller did not allocate the oldObject: {state} {warnings[:1]}"}
            since = stored["metadata"].get("annotations") or {}
            skip = len(warnings)
            before = self.allocations_settled(namespace, stored["metadata"]["uid"])
            why = self.lifecycle(obj, f"{path}/{name}")
            if why:
                return {"asked": False, "why": why}
            new_annotations = obj["metadata"].get("annotations") or {}
            change = {k: v for k, v in new_annotations.items() if old_annotations.get(k) != v}
            change.update({k: None for k in old_annotations if k not in new_annotations})
            code, body, _ = self.api.request("PATCH", f"{path}/{name}", {"metadata": {"annotations": change}},
                                             content_type="application/merge-patch+json")
            if code in (200, 201):
                state, pod, warnings = self.allocation(name, namespace, self.wait, skip, since, before)
        else:
            code, body, _ = self.api.request("POST", path, obj)
            if code in (200, 201):
                state, pod, warnings = self.allocation(name, namespace, self.wait, skip, since)
        if code not in (200, 201):
            return {"asked": False, "why": f"the API server refuses the object: {code} {(body or {}).get('message')}"}
        if state == "refused":
            return {"outcome": "refused", "event": warnings[-1]}  # the latest: a retry may fail otherwise
        if state != "allocated":
            return {"outcome": "waiting"}
        nics = allocated_nics(pod, json.dumps(obj["metadata"].get("annotations") or {}))
        second = second_holders(self.holders(), namespace, name, nics)
        if second:
            return {"outcome": "double", "nics": nics, "second_holder": second[0]}
        return {"outcome": "allocated", "nics": nics}

    def allocations_settled(self, namespace, uid, timeout=5):
        """The pod's allocations once the first one's event is stored (the recorder sends it late)."""
        deadline = time.monotonic() + timeout
        while (count := self.allocations(namespace, uid)) == 0 and time.monotonic() < deadline:
            time.sleep(0.1)
        return count

    def own_statefulset(self, old, new, namespace):
        """A pod owned by a StatefulSet: the StatefulSet made first (none of its pods made: no
        kube-controller-manager runs for pod cases), its uid in both objects' ownerReference, so that
        kube-ovn-controller finds the pod's StatefulSet alive (`isStatefulSetPodToDel`, pod.go:1742)."""
        refs = [r for r in old["metadata"].get("ownerReferences") or []
                if r.get("kind") == "StatefulSet" and str(r.get("apiVersion", "")).startswith("apps/")]
        if not refs:
            return None
        ref = refs[0]
        sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": ref["name"], "namespace": namespace},
               "spec": {"replicas": 1, "serviceName": ref["name"], "selector": {"matchLabels": {"app": ref["name"]}},
                        "template": {"metadata": {"labels": {"app": ref["name"]}},
                                     "spec": {"containers": [{"name": "app", "image": "docker.io/library/nginx:alpine"}]}}}}
        code, body, _ = self.api.request("POST", f"/apis/apps/v1/namespaces/{namespace}/statefulsets", sts)
        if code != 201:
            return f"the API server refuses the StatefulSet: {code} {(body or {}).get('message')}"
        for obj in (old, new):
            for r in obj["metadata"].get("ownerReferences") or []:
                if r.get("kind") == "StatefulSet" and r.get("name") == ref["name"]:
                    r["uid"] = body["metadata"]["uid"]
        return None

    def lifecycle(self, new, pod_path):
        """The new object's place in the pod's life, before its annotations change: its status phase
        (written to pods/status, as the kubelet writes it) and its deletion (a DELETE with its grace
        period; a finalizer keeps the pod, as the case's does)."""
        status = {k: v for k, v in (new.get("status") or {}).items() if k in ("phase", "reason")}
        if status:
            code, body, _ = self.api.request("PATCH", f"{pod_path}/status", {"status": status},
                                             content_type="application/merge-patch+json")
            if code != 200:
                return f"the API server refuses the status: {code} {(body or {}).get('message')}"
        meta = new["metadata"]
        if meta.get("deletionTimestamp"):
            # Bound to a Node, as a running pod is: the API server deletes an unbound pod at once
            # (grace 0), which the controller no longer counts as alive.
            self.nodes()
            name = pod_path.rsplit("/", 1)[1]
            code, body, _ = self.api.request("POST", f"{pod_path}/binding", {
                "apiVersion": "v1", "kind": "Binding", "metadata": {"name": name},
                "target": {"apiVersion": "v1", "kind": "Node", "name": NODES[0]}})
            if code != 201:
                return f"the API server refuses the binding: {code} {(body or {}).get('message')}"
            code, body, _ = self.api.request("PATCH", pod_path,
                                             {"metadata": {"finalizers": ["kube-ovn-policy.test/hold"]}},
                                             content_type="application/merge-patch+json")
            if code != 200:
                return f"the API server refuses the finalizer: {code} {(body or {}).get('message')}"
            grace = meta.get("deletionGracePeriodSeconds", 30)
            code, body, _ = self.api.request("DELETE", pod_path, {"gracePeriodSeconds": grace})
            if code not in (200, 202):
                return f"the API server refuses the deletion: {code} {(body or {}).get('message')}"
        return None

    # --- a workload: the pods kube-controller-manager makes of it ----------

    def nodes(self):
        """The Nodes a DaemonSet's pods are made for, schedulable (the API server taints a new Node
        not-ready until a kubelet reports; none will)."""
        for name in NODES:
            code, node, _ = self.api.request("GET", f"/api/v1/nodes/{name}")
            if code == 404:
                code, node, _ = self.api.request("POST", "/api/v1/nodes", {
                    "apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {
                        "kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}}})
            for _ in range(50):  # kube-ovn-controller annotates Nodes too: retried on a conflict
                if not (node or {}).get("spec", {}).get("taints"):
                    break
                node["spec"]["taints"] = []
                if self.api.request("PUT", f"/api/v1/nodes/{name}", node)[0] == 200:
                    break
                time.sleep(0.1)
                node = self.api.request("GET", f"/api/v1/nodes/{name}")[1]
            else:
                raise RuntimeError(f"Node {name} keeps its taints")
        return len(NODES)

    def workload_pods(self, namespace, holders):
        """{name: pod} of the namespace's pods but the holders (by name or uid; and those going away)."""
        code, pods, _ = self.api.request("GET", f"/api/v1/namespaces/{namespace}/pods")
        return {p["metadata"]["name"]: p for p in (pods.get("items", []) if code == 200 else [])
                if not {p["metadata"]["name"], p["metadata"]["uid"]} & holders
                and not p["metadata"].get("deletionTimestamp")}

    def settle(self, namespace, holders, expected, wait):
        """{name: (state, pod, warnings)} of the workload's pods once settled: at least `expected` pods,
        each allocated or refused (a Warning event 1.5 s old, no allocation), nothing new for 2 s; or
        at `wait`. An allocated pod is reported Running and Ready as its kubelet would, once the CNI had
        its address (a StatefulSet makes its next pod, a Deployment rolls on, only then)."""
        deadline = time.monotonic() + wait
        first_warning, last_change, last = {}, time.monotonic(), None
        while True:
            now = time.monotonic()
            states = {}
            for name, pod in self.workload_pods(namespace, holders).items():
                annotations = pod["metadata"].get("annotations") or {}
                if any(k.endswith(ALLOCATED_SUFFIX) and v == "true" for k, v in annotations.items()):
                    states[name] = ("allocated", pod, [])
                    if pod.get("status", {}).get("phase") != "Running":
                        self.api.request("PATCH", f"/api/v1/namespaces/{namespace}/pods/{name}/status", {
                            "status": {"phase": "Running", "conditions": [
                                {"type": "Ready", "status": "True"}, {"type": "ContainersReady", "status": "True"}]}},
                            content_type="application/strategic-merge-patch+json")
                    continue
                warnings = self.warnings(namespace, pod["metadata"]["uid"])
                if warnings:
                    first_warning.setdefault(name, now)
                    if now - first_warning[name] > 1.5:
                        states[name] = ("refused", pod, warnings)
                        continue
                states[name] = ("waiting", pod, warnings)
            seen = {n: st[0] for n, st in states.items()}
            if seen != last:
                last, last_change = seen, now
            decided = all(st != "waiting" for st in seen.values())
            if (len(seen) >= expected and decided and now - last_change > 2) \
                    or (decided and "refused" in seen.values() and now - last_change > 3) or now > deadline:
                return states
            time.sleep(0.2)

    def play_workload(self, case):
        """The controller's outcome for each pod kube-controller-manager makes of the case's workload."""
        request = case["request"]
        kind = request["kind"]["kind"]
        obj = clean(request["object"])
        namespace = request.get("namespace") or obj["metadata"].get("namespace") or "default"
        obj["metadata"]["namespace"] = namespace
        name = obj["metadata"].get("name") or request.get("name")
        api_version, plural, _ = plural_of(kind)
        self.reset()
        if self.manager is None:
            self.start_manager(self.manager_binary)
        spec = obj.get("spec") or {}
        template_spec = (spec.get("jobTemplate") or {}).get("spec") or {} if kind == "CronJob" else spec
        if kind == "DaemonSet":
            expected = self.nodes()
        elif kind in ("Job", "CronJob"):
            expected = min(template_spec.get("parallelism", 1), template_spec.get("completions") or 1 << 30)
        else:
            expected = spec.get("replicas", 1)
        # A StatefulSet's pods are named: what their names hold is theirs (the IPAM gives it back).
        old_replicas = ((request.get("oldObject") or {}).get("spec") or {}).get("replicas", 1)
        own = {(namespace, f"{name}-{i}") for i in range(max(expected, old_replicas))} \
            if kind == "StatefulSet" else set()
        why = self.build(case, own)
        if why:
            return {"asked": False, "why": why}
        self.namespace(namespace)
        holders = set(self.workload_pods(namespace, set()))
        path = resource_path(api_version, plural, namespace)
        exclude = holders
        if request["operation"] == "UPDATE":
            old = clean(request["oldObject"])
            old["metadata"]["namespace"] = namespace
            code, body, _ = self.api.request("POST", path, old)
            if code != 201:
                why = f"the API server refuses the oldObject: {code} {(body or {}).get('message')}"
                return {"asked": False, "why": why}
            self.settle(namespace, holders, 0 if kind == "CronJob" else 1, self.wait * 3)
            if template_of(old) != template_of(obj):  # the request's pods are the new template's
                exclude = holders | {p["metadata"]["uid"] for p in self.workload_pods(namespace, holders).values()}
            code, stored, _ = self.api.request("GET", f"{path}/{name}")
            obj["metadata"]["resourceVersion"] = stored["metadata"]["resourceVersion"]
            code, body, _ = self.api.request("PUT", f"{path}/{name}", obj)
        else:
            code, body, _ = self.api.request("POST", path, obj)
        if code not in (200, 201):
            return {"asked": False, "why": f"the API server refuses the object: {code} {(body or {}).get('message')}"}
        if kind == "CronJob":
            # Its schedule is not waited for: a Job of its template, as `kubectl create job --from=cronjob/…`.
            job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {
                "name": f"{name}-manual", "namespace": namespace,
                "annotations": {"cronjob.kubernetes.io/instantiate": "manual"},
                "labels": ((spec.get("jobTemplate") or {}).get("metadata") or {}).get("labels") or {},
                "ownerReferences": [{"apiVersion": "batch/v1", "kind": "CronJob", "name": name,
                                     "uid": body["metadata"]["uid"], "controller": True}]},
                "spec": template_spec}
            code, made, _ = self.api.request("POST", resource_path("batch/v1", "jobs", namespace), job)
            if code != 201:
                return {"asked": False, "why": f"the API server refuses its Job: {code} {(made or {}).get('message')}"}
        states = self.settle(namespace, exclude, expected, self.wait * 4)
        template = (template_spec.get("template") or {}).get("metadata") or {}
        asked = json.dumps(template.get("annotations") or {})
        everyone = self.holders()
        pods, outcomes = [], []
        for pod_name, (state, pod, warnings) in sorted(states.items()):
            meta = pod["metadata"]
            # A StatefulSet's pod by its name; another's by its generated prefix (the rest is random).
            label = pod_name if kind == "StatefulSet" else f"{meta.get('generateName') or pod_name}*"
            if state == "refused":
                outcomes.append(("refused", warnings[-1]))
                pods.append(f"{label}: refused: {warnings[-1]}")
                continue
            if state == "waiting":
                outcomes.append(("waiting", None))
                pods.append(f"{label}: waiting")
                continue
            nics = allocated_nics(pod, asked)
            second = second_holders(everyone, namespace, pod_name, nics)
            text = ", ".join(f"{p} {a}" for p, a in nics.items())
            if second:
                outcomes.append(("double", second[0]))
                pods.append(f"{label}: double {text}, second holder {second[0]}")
            else:
                outcomes.append(("allocated", None))
                pods.append(f"{label}: allocated {text}")
        missing = max(0, expected - len(states))
        pods += ["(not made): waiting"] * missing
        if missing:
            outcomes.append(("waiting", None))
        record = {"outcome": "allocated", "pods": sorted(pods)}
        for worst in ("double", "refused", "waiting"):
            found = [d for o, d in outcomes if o == worst]
            if found:
                record["outcome"] = worst
                if worst == "double":
                    record["second_holder"] = found[0]
                elif worst == "refused":
                    record["event"] = found[0]
                break
        return record

    # --- an IPPool: what the controller's IPAM makes of it (I14) -----------

    def play_ippool(self, case):
        """The controller's outcome for the request's IPPool over the case's Subnets and IPPools: `ready`
        (its IPAM took it: status Ready, with what it counts available) or `failed` (a condition not
        Ready: its reason and message), or `waiting` (no condition within the wait)."""
        request = case["request"]
        obj = clean(request["object"])
        if not isinstance(obj.get("spec"), dict) or not isinstance(obj["spec"].get("ips", []), list):
            return {"asked": False, "why": "its object does not decode as an IPPool: the API server never stores it"}
        name = obj["metadata"].get("name") or request.get("name")
        obj["metadata"]["name"] = name
        self.reset()
        why = self.build(case, set())
        if why:
            return {"asked": False, "why": why}
        path = f"/apis/kubeovn.io/v1/ippools/{name}"
        if request["operation"] == "UPDATE":
            code, stored, _ = self.api.request("GET", path)
            if code != 200:
                return {"asked": False, "why": "the oldObject is not among the case's IPPools"}
            obj["metadata"]["resourceVersion"] = stored["metadata"]["resourceVersion"]
            obj["metadata"]["finalizers"] = stored["metadata"].get("finalizers")
            code, body, _ = self.api.request("PUT", path, obj)
        else:
            code, body, _ = self.api.request("POST", "/apis/kubeovn.io/v1/ippools", obj)
        if code not in (200, 201):
            return {"asked": False, "why": f"the API server refuses the object: {code} {(body or {}).get('message')}"}
        if request["operation"] == "UPDATE":
            time.sleep(2)  # its Ready condition is the old version's until the controller handled the change
        deadline = time.monotonic() + self.wait
        seen = None
        while True:
            code, pool, _ = self.api.request("GET", path)
            status = (pool or {}).get("status") or {}
            ready = next((c for c in status.get("conditions") or [] if c.get("type") == "Ready"), None)
            now = time.monotonic()
            if ready and ready.get("status") == "True":
                # The statistics follow the condition: read them a moment later.
                time.sleep(0.5)
                status = (self.api.request("GET", path)[1] or {}).get("status") or {}
                counts = {k: status.get(k) for k in ("v4AvailableIPs", "v4AvailableIPRange",
                                                     "v6AvailableIPs", "v6AvailableIPRange") if status.get(k)}
                return {"outcome": "ready", "available": counts}
            if ready and ready.get("status") == "False" and ready.get("reason") not in (None, "", "Init"):
                seen = seen or now
                if now - seen > 1.5:  # a retry may succeed
                    return {"outcome": "failed", "condition": f"{ready.get('reason')}: {ready.get('message')}"}
            if now > deadline:
                if ready and ready.get("status") == "False":
                    return {"outcome": "failed", "condition": f"{ready.get('reason')}: {ready.get('message')}"}
                return {"outcome": "waiting"}
            time.sleep(0.1)


def race(player, rounds, wait):
    """Two pods asking for the same free static address, created at the same moment, `rounds` times.

    No webhook stands in the way (every webhook admits both: the address is
    free when each is asked). Printed: how many rounds ended each way; how far
    apart the two creates were answered; when (after both creates were
    answered) the winner was annotated allocated and the loser got its first
    Warning event; what the loser shows `wait` s later; and whether, once
    the winner is deleted, the loser (still retried) gets the address.
    """
    outcomes, apart_ms, won_ms, lost_ms, retries, after = {}, [], [], [], [], []
    for r in range(rounds):
        player.reset()
        address = f"10.16.{100 + r // 200}.{10 + r % 200}"
        names = (f"race-a-{r}", f"race-b-{r}")
        barrier = threading.Barrier(2)
        answered = [None, None]

        def create(k):
            pod = player.pod_object(names[k], "default", {"ovn.kubernetes.io/ip_address": address})
            barrier.wait()
            code, body, _ = player.api.request("POST", "/api/v1/namespaces/default/pods", pod)
            answered[k] = (code, time.monotonic(), (body or {}).get("metadata", {}).get("uid"))

        threads = [threading.Thread(target=create, args=(k,)) for k in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if any(a[0] != 201 for a in answered):
            outcomes["a create failed"] = outcomes.get("a create failed", 0) + 1
            continue
        apart_ms.append(abs(answered[0][1] - answered[1][1]) * 1000)
        both = max(a[1] for a in answered)
        seen = {}  # name -> (state, ms)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and len(seen) < 2:
            for k, name in enumerate(names):
                if name in seen:
                    continue
                code, pod, _ = player.api.request("GET", f"/api/v1/namespaces/default/pods/{name}")
                if (pod or {}).get("metadata", {}).get("annotations", {}).get(ALLOCATED) == "true":
                    seen[name] = ("allocated", (time.monotonic() - both) * 1000)
                elif player.warnings("default", answered[k][2]):
                    seen[name] = ("refused", (time.monotonic() - both) * 1000)
            time.sleep(0.02)
        time.sleep(1.0)  # a refusal retried into an allocation would show now
        final = {}
        for k, name in enumerate(names):
            code, pod, _ = player.api.request("GET", f"/api/v1/namespaces/default/pods/{name}")
            annotations = (pod or {}).get("metadata", {}).get("annotations", {})
            final[name] = ("allocated" if annotations.get(ALLOCATED) == "true" else "not allocated",
                           player.warnings("default", answered[k][2]))
        holders = player.holders().get(("ovn-default", address), set())
        allocated = [n for n in names if final[n][0] == "allocated"]
        if len(allocated) == 2 or len(holders) > 2:
            key = f"both allocated: holders {sorted(holders)}"
        elif len(allocated) == 1 and final[names[1 - names.index(allocated[0])]][1]:
            loser = names[1 - names.index(allocated[0])]
            key = f"one allocated, the other refused: {final[loser][1][0]}"
            won_ms.append(seen.get(allocated[0], ("", float("nan")))[1])
            lost_ms.append(seen.get(loser, ("", float("nan")))[1])
            time.sleep(wait)  # what the loser shows later: its retries
            retries.append(player.warning_count("default", answered[names.index(loser)][2]))
            # The winner goes away: does the loser, still retried, get the address?
            player.api.request("DELETE", f"/api/v1/namespaces/default/pods/{allocated[0]}", {"gracePeriodSeconds": 0})
            t0 = time.monotonic()
            state = player.allocation(loser, "default", wait * 4)[0]
            after.append((state, (time.monotonic() - t0) * 1000))
        else:
            key = "other: " + ", ".join(f"{n} {final[n][0]} {final[n][1][:1]}" for n in names)
        outcomes[key] = outcomes.get(key, 0) + 1
        print(f"# race round {r}: {key}", flush=True)
    for key, n in sorted(outcomes.items(), key=lambda kv: -kv[1]):
        print(f"# race: {n} of {rounds} rounds: {key}")
    if apart_ms:
        print(f"# race: the two creates answered {statistics.median(apart_ms):.1f} ms apart (median), "
              f"{max(apart_ms):.1f} ms at most")
    if won_ms:
        print(f"# race: after both creates, the winner allocated in {statistics.median(won_ms):.0f} ms (median; "
              f"max {max(won_ms):.0f}), the loser's first Warning event in {statistics.median(lost_ms):.0f} ms "
              f"(max {max(lost_ms):.0f})")
    if retries:
        print(f"# race: the loser, {wait + 1:.0f} s after its first refusal: still Pending without an address, "
              f"{min(retries)}-{max(retries)} Warning events (the controller retries with back-off)")
        got = [ms for state, ms in after if state == "allocated"]
        print(f"# race: the winner deleted, the loser allocated the address in {len(got)} of {len(after)} rounds "
              f"within {wait * 4:.0f} s"
              + (f" (median {statistics.median(got):.0f} ms, max {max(got):.0f})" if got else ""))
    return outcomes


def template_of(obj):
    """A workload's pod template (a CronJob's, of its Job template)."""
    spec = obj.get("spec") or {}
    return ((spec.get("jobTemplate") or {}).get("spec") or {}).get("template") if obj.get("kind") == "CronJob" \
        else spec.get("template")


def kind_of(case):
    return ((case.get("request") or {}).get("kind") or {}).get("kind")


# The pin's record of a case that stops kube-ovn-controller (its `why` starts so; docs/fidelity.md):
# a release's controller is not asked it either, lest every later case of its group fail.
STOPS_CONTROLLER = "not asked: it stops kube-ovn-controller"


def stops_controller(case):
    """The pin's record says this case stops kube-ovn-controller: its `why`, else None."""
    record = case.get("controller") or {}
    why = record.get("why") or ""
    return why if record.get("asked") is False and why.startswith(STOPS_CONTROLLER) else None


def workload(case):
    return kind_of(case) in WORKLOAD_KINDS


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="*", default=[str(d) for d in CASE_DIRS])
    parser.add_argument("--record", action="store_true", help="write the outcomes into the case files")
    parser.add_argument("--wait", type=float, default=6.0, help="seconds the controller has to allocate or refuse")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (the controller's logs)")
    parser.add_argument("--race", type=int, metavar="ROUNDS",
                        help="instead of the cases: two pods asking for the same free address at once, ROUNDS times")
    parser.add_argument("--release", default=os.environ.get("ORACLE_RELEASE", ""),
                        help=f"the controller is this Kube-OVN release's ({', '.join(RELEASES)}): "
                             "its records are tests/releases/<release>.json")
    args = parser.parse_args()
    if args.release:
        release_path(args.release)  # an unknown release stops here
    binary = os.environ.get("KUBE_OVN_CONTROLLER") or shutil.which("kube-ovn-controller")
    if not binary:
        not_found("controller-oracle", "kube-ovn-controller not found")
        return 0
    if args.race:
        folder = Path(tempfile.mkdtemp(prefix="kop-controller-race-"))
        try:
            started = time.monotonic()
            with ControlPlane() as cp:
                player = CasePlayer(cp, folder, binary, (DEFAULT_CIDR, JOIN_CIDR), args.wait)
                try:
                    outcomes = race(player, args.race, args.wait)
                finally:
                    player.stop()
            print(f"# race: {args.race} rounds in {time.monotonic() - started:.0f} s")
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        both = sum(n for k, n in outcomes.items() if k.startswith("both"))
        print(f"controller-race: {args.race} rounds, {both} with both pods allocated")
        return 0
    cases, groups = [], {}
    for path in case_files(args.cases):
        case = json.loads(path.read_text())
        kind = ((case.get("request") or {}).get("kind") or {}).get("kind")
        if kind == "Pod" and case["request"].get("operation") in ("CREATE", "UPDATE"):
            groups.setdefault(network_of(case), []).append((path, case))
        elif kind in (*WORKLOAD_KINDS, "IPPool") and case["request"].get("operation") in ("CREATE", "UPDATE"):
            groups.setdefault(network_of(case), []).append((path, case))
    manager = bin_path("kube-controller-manager", "KUBE_CONTROLLER_MANAGER")
    if any(workload(c) for members in groups.values() for _, c in members) and not manager.exists():
        print(f"controller-oracle: {manager} not found: make controller-manager-bin", file=sys.stderr)
        return 2
    folder = Path(tempfile.mkdtemp(prefix="kop-controller-oracle-"))
    started = time.monotonic()
    try:
        for network, members in sorted(groups.items()):
            t0 = time.monotonic()
            sub = folder / f"net-{len(list(folder.iterdir()))}"
            sub.mkdir()
            # The pods first: kube-controller-manager, started at the first workload, stays, as do their Nodes.
            members.sort(key=lambda m: workload(m[1]))
            with ControlPlane() as cp:
                player = CasePlayer(cp, sub, binary, network, args.wait,
                                    manager if any(workload(c) for _, c in members) else None)
                try:
                    for path, case in members:
                        if args.release and stops_controller(case):
                            result = {"asked": False, "why": stops_controller(case) + " (on the pin: not played)"}
                            cases.append((path, case, result))
                            print(f"# {path.name}: {json.dumps(result, ensure_ascii=False)}", flush=True)
                            continue
                        try:
                            result = player.play_workload(case) if workload(case) else \
                                player.play_ippool(case) if kind_of(case) == "IPPool" else player.play(case)
                        except (RuntimeError, Refused) as e:
                            result = {"asked": False, "why": f"not reproducible here: {e}"}
                        cases.append((path, case, result))
                        print(f"# {path.name}: {json.dumps(result, ensure_ascii=False)}", flush=True)
                finally:
                    player.stop()
            print(f"# network {network}: {len(members)} cases in {time.monotonic() - t0:.0f} s", flush=True)
    finally:
        if args.keep:
            print(f"# logs in {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)
    counts = {}
    different = 0
    released = load_release(args.release)["controller"] if args.release else None
    fresh = {}
    for path, case, result in sorted(cases, key=lambda c: str(c[0])):
        record = record_of(case, result, RELEASES[args.release]) if args.release else record_of(case, result)
        counts[result.get("outcome", "not asked")] = counts.get(result.get("outcome", "not asked"), 0) + 1
        old = released.get(case_key(path)) if args.release else case.get("controller")
        if args.record and args.release:
            fresh[case_key(path)] = record
        elif args.record:
            write_record(path, case, record, field="controller", after="upstream")
        elif old != record:
            different += 1
            print(f"differs {case_name(path)}:\n"
                  f"  recorded   {json.dumps(old, ensure_ascii=False)}\n"
                  f"  controller {json.dumps(record, ensure_ascii=False)}")
    print(f"# {len(cases)} cases in {time.monotonic() - started:.0f} s: "
          + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
    if fresh:
        write_release_records(args.release, "controller", fresh)
    if args.record:
        print(f"controller-oracle: {len(cases)} recorded")
        return 0
    print(f"controller-oracle: {len(cases)} cases, {len(cases) - different} as recorded, {different} different")
    return 1 if different else 0


if __name__ == "__main__":
    sys.exit(main())
