"""kube-ovn-controller's own allocation code as a generative judge (`make allocator-diff`).

    python3 -m e2e.tools.allocator_diff --src <kube-ovn checkout> [--seed N] [--count N]
        [--orders N] [--cases <dir or file> ...] [--record] [--keep]

Generates COUNT adversarial Pod cases (tests/README.md's format) from SEED alone, plus the Pod
cases of every --cases path, and for each:

(a) asks the policy (policy.wasm, `make policy.wasm` first) through the conformance binary's
    `--answers`;
(b) runs e2e/allocator/allocator_diff_test.go inside the checkout's pkg/controller (copied in as
    zz_kop_allocator_diff_test.go and removed afterwards): ORDERS fresh fake controllers per case,
    the real enqueueAddPod / enqueueUpdatePod and handleAddOrUpdatePod, the set of outcomes;
(c) holds the policy's answer to the property (`judge`):
    - admitted: no outcome, in any order, has `second_holder`, `reserved_pool`, `foreign_vip`
      or `panic` (a false admission otherwise);
    - refused for a reason of its own (`upstream_refuses` is false): some outcome has one of
      those, or allocated nothing (`nothing`, `error: …`); otherwise a false refusal;
    - refused as upstream's kube-ovn-webhook would refuse: not judged.

`upstream_refuses` approximates upstream (its rules in ../shared/reference/kube-ovn-webhook.md
§2.1-2.5): only a Pod CREATE carrying a non-empty `ovn.kubernetes.io/ip_address` or `ip_pool`
and no `kubevirt.io/migrationJobName` reaches its checks; the message must be one of upstream's
(every backquoted template with a `%` verb in that reference, verbs read as `.*`); and where it is
upstream's conflict message, the IP object it names must be in the subnet upstream compares
(the pod's `ovn.kubernetes.io/logical_switch`, else `ovn-default`).

Each divergence is printed (case, the policy's answer, the outcome set) and written with its
outcome set under `allocator` ({commit, orders, outcomes, input: e2e/harness/cases.case_input})
to target/allocator-divergences/; with --record into tests/allocator/<name>.json as well, where
`make allocator-replay` (scripts/allocator_replay.py) holds it without Go. The last line:
`allocator-diff <commit>: N cases, N orders each, N divergences (N false admissions, N false
refusals), T s`.
"""

import argparse
import copy
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from e2e.harness.cases import case_input  # noqa: E402

GO_TEST = ROOT / "e2e/allocator/allocator_diff_test.go"
GO_COPY = "pkg/controller/zz_kop_allocator_diff_test.go"
REFERENCE = ROOT.parent / "shared/reference/kube-ovn-webhook.md"
DIVERGENCES = ROOT / "target/allocator-divergences"
RECORDED = ROOT / "tests/allocator"
BAD = ("second_holder", "reserved_pool", "foreign_vip", "panic")
# The conformance binary: built by cargo, or the one KOP_CONFORMANCE names (a build of another tree).
CONFORMANCE = ([os.environ["KOP_CONFORMANCE"]] if os.environ.get("KOP_CONFORMANCE") else
               ["cargo", "run", "--locked", "--profile", "host", "-q", "-p", "testhost", "--bin", "conformance", "--"])

# ---------------------------------------------------------------------------------------------
# Objects


def uid(*parts):
    h = hashlib.sha256("/".join(parts).encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-5{h[13:16]}-a{h[17:20]}-{h[20:32]}"


def subnet(name, cidr, provider="ovn", vpc="ovn-cluster", default=False, available=200, exclude=None,
           namespaces=None):
    gw = cidr.rsplit(".", 1)[0] + ".1"
    return {
        "apiVersion": "kubeovn.io/v1", "kind": "Subnet",
        "metadata": {"name": name, "finalizers": ["kubeovn.io/kube-ovn-controller"], "uid": uid("subnet", name)},
        "spec": {"default": default, "protocol": "IPv4", "cidrBlock": cidr, "gateway": gw,
                 "excludeIps": exclude if exclude is not None else [gw], "provider": provider,
                 "gatewayType": "distributed", "gatewayNode": "", "natOutgoing": False, "private": False,
                 "enableLb": True, "vpc": vpc, "namespaces": namespaces or []},
        "status": {"v4availableIPs": available, "v4availableIPrange": "", "v4usingIPs": 0, "v4usingIPrange": "",
                   "v6availableIPs": 0, "v6availableIPrange": "", "v6usingIPs": 0, "v6usingIPrange": "",
                   "conditions": [{"type": "Ready", "status": "True", "reason": "ResourceReady", "message": ""}]},
    }


def vpc(name, subnets):
    return {"apiVersion": "kubeovn.io/v1", "kind": "Vpc", "metadata": {"name": name, "uid": uid("vpc", name)},
            "spec": {}, "status": {"standby": True, "default": name == "ovn-cluster", "router": name,
                                   "subnets": sorted(subnets)}}


def namespace(name, switches):
    ann = {"ovn.kubernetes.io/logical_switch": switches} if switches is not None else {}
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": name, "uid": uid("ns", name), "labels": {"kubernetes.io/metadata.name": name},
                         "annotations": ann},
            "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}


def ip_object(pod, ns, provider, subnet_name, address, pod_type=""):
    name = f"{pod}.{ns}" if provider == "ovn" else f"{pod}.{ns}.{provider}"
    return {"apiVersion": "kubeovn.io/v1", "kind": "IP",
            "metadata": {"name": name, "uid": uid("ip", name),
                         "labels": {"ovn.kubernetes.io/subnet": subnet_name, subnet_name: ""}},
            "spec": {"podName": pod, "namespace": ns, "subnet": subnet_name, "ipAddress": address,
                     "v4IpAddress": address, "v6IpAddress": "", "macAddress": "", "podType": pod_type,
                     "attachSubnets": [], "attachIps": [], "attachMacs": [], "containerID": "", "nodeName": ""}}


def ippool(name, subnet_name, ips, namespaces, available=3):
    return {"apiVersion": "kubeovn.io/v1", "kind": "IPPool",
            "metadata": {"name": name, "uid": uid("ippool", name), "finalizers": ["kubeovn.io/kube-ovn-controller"]},
            "spec": {"subnet": subnet_name, "ips": ips, "namespaces": namespaces},
            "status": {"v4AvailableIPs": available, "v4UsingIPs": 0, "v6AvailableIPs": 0, "v6UsingIPs": 0}}


def vip(name, ns, subnet_name, address, reserved_by=None):
    meta = {"name": name, "uid": uid("vip", name)}
    if reserved_by:
        meta["labels"] = {"ovn.kubernetes.io/ip_reserved": reserved_by}
    return {"apiVersion": "kubeovn.io/v1", "kind": "Vip", "metadata": meta,
            "spec": {"namespace": ns, "subnet": subnet_name, "v4ip": address},
            "status": {"v4ip": address, "mac": "00:00:00:aa:bb:" + hashlib.sha256(name.encode()).hexdigest()[:2]}}


def nad(name, ns, form):
    if form == "kube-ovn":
        config = {"cniVersion": "0.3.0", "type": "kube-ovn", "server_socket": "/run/openvswitch/kube-ovn-daemon.sock",
                  "provider": f"{name}.{ns}.ovn"}
    elif form == "ipam":
        config = {"cniVersion": "0.3.0", "type": "macvlan", "master": "eth0", "mode": "bridge",
                  "ipam": {"type": "kube-ovn", "server_socket": "/run/openvswitch/kube-ovn-daemon.sock",
                           "provider": f"{name}.{ns}"}}
    else:
        config = {"cniVersion": "0.3.0", "type": "bridge", "bridge": "br0",
                  "ipam": {"type": "host-local", "subnet": "192.168.50.0/24"}}
    return {"apiVersion": "k8s.cni.cncf.io/v1", "kind": "NetworkAttachmentDefinition",
            "metadata": {"name": name, "namespace": ns, "uid": uid("nad", ns, name)},
            "spec": {"config": json.dumps(config)}}


def admission(op, pod, old=None):
    meta = pod["metadata"]
    kind = {"group": "", "version": "v1", "kind": "Pod"}
    res = {"group": "", "version": "v1", "resource": "pods"}
    return {"uid": uid("req", meta["namespace"], meta["name"], op, json.dumps(pod, sort_keys=True)),
            "kind": kind, "resource": res, "requestKind": kind, "requestResource": res,
            "name": meta["name"], "namespace": meta["namespace"], "operation": op,
            "userInfo": {"username": "tenant", "groups": ["system:authenticated"]},
            "object": pod, "oldObject": old, "dryRun": False,
            "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions" if op == "CREATE" else "UpdateOptions"}}


# ---------------------------------------------------------------------------------------------
# The generator

NS = "team-a"          # the tenant's namespace: every generated pod lives here
OTHER = "team-b"       # another tenant
ADDR_PRIMARY = ["10.70.0.10", "10.70.0.11", "10.70.0.12", "10.70.0.20", "10.71.0.5", "10.16.0.50", "10.16.0.200",
                "10.70.0.201"]
ADDR_ATTACH = ["172.17.0.11", "172.17.0.12", "172.17.0.20", "172.17.0.200"]
ADDR_IPAM = ["172.18.0.11", "172.18.0.12", "172.18.0.200"]
POOL_SEPS = [",", ";", ", ", " ,", "; ", " ;\n", ",\n", ";\n  "]
POOL_NAMES = ["pool-b", " pool-b ", "pool-b\n", "\tpool-b", "pool-a", " pool-a", "pool-missing"]


def gen_case(rng, seed, index):
    tags = []
    subnets = [subnet("ovn-default", "10.16.0.0/16", default=True, available=65000),
               subnet("join", "100.64.0.0/16")]
    # Two Subnets of one provider (ovn) whose CIDRs overlap, in two Vpcs; one full.
    subnets += [subnet("net-a1", "10.70.0.0/24", vpc="vpc-a"), subnet("net-a2", "10.70.0.0/24", vpc="vpc-b"),
                subnet("net-full", "10.71.0.0/24", vpc="vpc-a", available=0,
                       exclude=["10.71.0.1", "10.71.0.5"] if rng.random() < 0.5 else ["10.71.0.1"])]
    overlap_attach = rng.random() < 0.7
    subnets.append(subnet("attach-a", "172.17.0.0/24", provider=f"attachnet.{NS}.ovn", vpc="vpc-a"))
    if overlap_attach:
        subnets.append(subnet("attach-b", "172.17.0.0/24", provider=f"attachnet.{NS}.ovn", vpc="vpc-b"))
    subnets.append(subnet("ipam-a", "172.18.0.0/24", provider=f"ipamnet.{NS}", vpc="vpc-a"))
    if rng.random() < 0.6:
        subnets.append(subnet("ipam-b", "172.18.0.0/24", provider=f"ipamnet.{NS}", vpc="vpc-b"))
    # An attachment subnet of a NAD that a retype may point at.
    subnets.append(subnet("retype-ipam", "172.19.0.0/24", provider=f"attachnet.{NS}", vpc="vpc-b"))
    names = [s["metadata"]["name"] for s in subnets]
    by_vpc = {}
    for s in subnets:
        by_vpc.setdefault(s["spec"]["vpc"], []).append(s["metadata"]["name"])
    vpcs = [vpc(v, ss) for v, ss in sorted(by_vpc.items())]

    ns_switch = rng.choice(["ovn-default", "net-a1", "net-a1,net-a2", "net-a2,net-a1", "net-full,net-a1",
                            "net-full,net-a2", "net-full,net-a1,net-a2", "net-a1,net-a2", "net-full,net-a2",
                            "ovn-default", None])
    namespaces = [namespace("default", "ovn-default"), namespace(NS, ns_switch), namespace(OTHER, "net-a2")]
    if ns_switch and "," in ns_switch:
        tags.append("nslist")

    # IP objects of other pods (and of the pod itself, for UPDATEs below).
    ips = []
    holders = rng.randint(0, 4)
    for i in range(holders):
        s = rng.choice(["net-a1", "net-a2", "net-a2", "attach-a", "attach-b", "ipam-a", "ipam-b", "ovn-default",
                        "net-full"])
        if s not in names:
            continue
        cidr = next(x for x in subnets if x["metadata"]["name"] == s)["spec"]["cidrBlock"]
        pool = {"10.70": ADDR_PRIMARY[:4], "10.71": ["10.71.0.5"], "10.16": ["10.16.0.50"], "172.1": None}
        if cidr.startswith("172.17"):
            cand = ADDR_ATTACH
        elif cidr.startswith("172.18"):
            cand = ADDR_IPAM
        else:
            cand = pool[cidr[:5]]
        prov = next(x for x in subnets if x["metadata"]["name"] == s)["spec"]["provider"]
        owner_ns = rng.choice([OTHER, OTHER, NS])
        ips.append(ip_object(f"other-{i}", owner_ns, prov, s, rng.choice(cand)))
    if ips:
        tags.append("held")

    ippools = []
    if rng.random() < 0.6:
        s = rng.choice(["net-a2", "net-a1", "attach-b" if overlap_attach else "attach-a", "ovn-default"])
        rngs = {"net-a2": ["10.70.0.10..10.70.0.12"], "net-a1": ["10.70.0.10..10.70.0.12"],
                "attach-b": ["172.17.0.11..172.17.0.12"], "attach-a": ["172.17.0.11..172.17.0.12"],
                "ovn-default": ["10.16.0.50"]}[s]
        ippools.append(ippool("pool-b", s, rngs, [OTHER]))
        tags.append("reserved")
    if rng.random() < 0.4:
        ippools.append(ippool("pool-a", rng.choice(["net-a1", "net-a2"]), ["10.70.0.20..10.70.0.29"],
                              rng.choice([[NS], []])))

    vips = []
    if rng.random() < 0.5:
        vips.append(vip("vip-b", OTHER, "ovn-default", "10.16.0.200"))
        vips.append(vip("vip-b2", OTHER, rng.choice(["attach-a", "net-a1"]),
                        "172.17.0.200" if rng.random() < 0.5 else "10.70.0.201"))
    if rng.random() < 0.3:
        vips.append(vip("vip-a", NS, "ovn-default", "10.16.0.201",
                        reserved_by=rng.choice([None, None, f"old.{NS}"])))

    nad_forms = {"attachnet": rng.choice(["kube-ovn", "kube-ovn", "kube-ovn", "kube-ovn", "ipam", "other", None]),
                 "ipamnet": rng.choice(["ipam", "ipam", "ipam", "ipam", "kube-ovn", "other", None]),
                 "othernet": "other"}
    nads = [nad(n, NS, f) for n, f in nad_forms.items() if f]

    # The pod.
    owner = rng.choice([None, None, None, "sts", "vmi"])
    if owner == "sts":
        name = f"web-{rng.choice(['0', '1', '2', '7', '01', 'x'])}"
        owners = [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "uid": uid("sts", "web"),
                   "controller": True, "blockOwnerDeletion": True}]
        tags.append("sts")
    elif owner == "vmi":
        name = "virt-launcher-vm1-" + rng.choice(["abcde", "fghjk"])
        owners = [{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance", "name": "vm1",
                   "uid": uid("vmi", "vm1"), "controller": True, "blockOwnerDeletion": True}]
        tags.append("vmi")
    else:
        name = rng.choice(["app-1", "app-2"])
        owners = []
    ann = {}

    # Primary NIC sources.
    r = rng.random()
    if r < 0.3:
        ann["ovn.kubernetes.io/ip_address"] = rng.choice(ADDR_PRIMARY)
        tags.append("ip")
    elif r < 0.6:
        if rng.random() < 0.55:
            n = rng.randint(1, 3)
            addrs = rng.sample(ADDR_PRIMARY, n)
            ann["ovn.kubernetes.io/ip_pool"] = rng.choice(POOL_SEPS).join(addrs)
        else:
            pools = [p["metadata"]["name"] for p in ippools]
            names_ = [n for n in POOL_NAMES if n.strip() in pools] if pools and rng.random() < 0.85 else POOL_NAMES
            ann["ovn.kubernetes.io/ip_pool"] = rng.choice(names_)
        tags.append("pool")
    if rng.random() < 0.25:
        ann["ovn.kubernetes.io/logical_switch"] = rng.choice(["net-a1", "net-a2", "net-full", "ovn-default"])
    if rng.random() < 0.25:
        have = [v["metadata"]["name"] for v in vips]
        ann["ovn.kubernetes.io/vip"] = rng.choice(have if have and rng.random() < 0.9 else ["vip-missing", "vip-b"])
        tags.append("vip")

    # Attachments.
    entries = []
    for _ in range(rng.choice([0, 0, 1, 1, 2])):
        entries.append({"name": rng.choice(["attachnet"] * 5 + ["ipamnet"] * 3 + ["othernet"] * 2 + ["ghost"]),
                        "ns": rng.choice([None, NS]),
                        "iface": rng.choice([None, None, "eth1", "net2"]),
                        "ips": rng.choice([None, None, [""], [None], [rng.choice(ADDR_ATTACH + ADDR_IPAM)]])})
    if entries:
        tags.append("attach")
        as_json = rng.random() < 0.5 or any(e["ips"] is not None for e in entries)
        if as_json:
            lst = []
            for e in entries:
                d = {"name": e["name"]}
                if e["ns"]:
                    d["namespace"] = e["ns"]
                if e["iface"]:
                    d["interface"] = e["iface"]
                if e["ips"] is not None:
                    d["ips"] = e["ips"]
                lst.append(d)
            ann["k8s.v1.cni.cncf.io/networks"] = json.dumps(lst)
        else:
            parts = []
            for e in entries:
                t = (e["ns"] + "/" if e["ns"] else "") + e["name"] + ("@" + e["iface"] if e["iface"] else "")
                parts.append(t)
            ann["k8s.v1.cni.cncf.io/networks"] = rng.choice([",", ", "]).join(parts)
    if rng.random() < 0.12:
        ann["v1.multus-cni.io/default-network"] = rng.choice([f"{NS}/attachnet", "attachnet", f"{NS}/ipamnet"])
        tags.append("defaultnet")
    providers = [f"attachnet.{NS}.ovn", f"attachnet.{NS}", f"ipamnet.{NS}", f"ipamnet.{NS}.ovn",
                 f"attachnet.{NS}.ovn.eth1"]
    if entries or "v1.multus-cni.io/default-network" in ann:
        for _ in range(rng.randint(0, 2)):
            p = rng.choice(providers)
            pool_addrs = ADDR_IPAM if "ipamnet" in p else ADDR_ATTACH
            k = rng.choice(["ip_address", "ip_address", "ip_pool", "logical_switch"])
            if k == "ip_address":
                ann[f"{p}.kubernetes.io/ip_address"] = rng.choice(pool_addrs)
            elif k == "ip_pool":
                ann[f"{p}.kubernetes.io/ip_pool"] = rng.choice(POOL_SEPS).join(rng.sample(pool_addrs, 2))
            else:
                ann[f"{p}.kubernetes.io/logical_switch"] = rng.choice(
                    ["attach-a", "attach-b", "ipam-a", "ipam-b", "retype-ipam"])
        if rng.random() < 0.2:
            ann[f"attachnet.{NS}.kubernetes.io/ip_address.eth1"] = rng.choice(ADDR_ATTACH)
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": NS, "uid": uid("pod", NS, name), "annotations": ann},
           "spec": {"containers": [{"name": "app", "image": "docker.io/library/nginx:alpine"}]}}
    if owners:
        pod["metadata"]["ownerReferences"] = owners
        if owner == "sts":
            pod["metadata"]["labels"] = {"app": "web"}

    # CREATE, or an UPDATE of a pod the controller allocated before.
    op = "CREATE" if rng.random() < 0.55 else "UPDATE"
    old = None
    key_name = "vm1" if owner == "vmi" else name
    if op == "UPDATE":
        tags.append("update")
        old = copy.deepcopy(pod)
        oa = old["metadata"]["annotations"]
        # What the controller wrote for the primary NIC at the last allocation.
        prev_subnet = ann.get("ovn.kubernetes.io/logical_switch") or (ns_switch or "ovn-default").split(",")[0]
        if prev_subnet == "net-full":
            prev_subnet = "net-a1"
        prev_addr = {"ovn-default": "10.16.0.77", "net-a1": "10.70.0.77", "net-a2": "10.70.0.78"}[prev_subnet]
        oa.setdefault("ovn.kubernetes.io/ip_address", prev_addr)
        oa["ovn.kubernetes.io/logical_switch"] = oa.get("ovn.kubernetes.io/logical_switch", prev_subnet)
        oa["ovn.kubernetes.io/allocated"] = "true"
        oa["ovn.kubernetes.io/routed"] = "true"
        own_type = {"sts": "StatefulSet", "vmi": "VirtualMachine"}.get(owner, "")
        own_addr = oa["ovn.kubernetes.io/ip_address"].split(",")[0]
        ips.append(ip_object(key_name, NS, "ovn", oa["ovn.kubernetes.io/logical_switch"], own_addr, own_type))
        new = copy.deepcopy(old)
        na = new["metadata"]["annotations"]
        for k, v in ann.items():
            na[k] = v
        change = rng.choice(["drop", "drop", "migrate", "relabel", "delete-past", "delete-future"])
        tags.append(change)
        if change == "drop":
            na.pop("ovn.kubernetes.io/allocated", None)
        elif change == "migrate":
            na["kubevirt.io/migrationJobName"] = rng.choice(["job-1", ""])
        elif change == "relabel":
            new["metadata"].setdefault("labels", {})["touched"] = "yes"
        else:
            # Fixed far from any clock the case is run at: past stays past, future future.
            new["metadata"]["deletionTimestamp"] = ("2020-01-01T00:00:00Z" if change == "delete-past"
                                                    else "2099-01-01T00:00:00Z")
            new["metadata"]["deletionGracePeriodSeconds"] = 30
            if rng.random() < 0.5:
                na.pop("ovn.kubernetes.io/allocated", None)
        pod = new
    elif rng.random() < 0.1:
        pod["metadata"]["annotations"]["kubevirt.io/migrationJobName"] = "job-1"
        tags.append("migrate")

    case_name = f"alloc-s{seed}-{index:04d}-" + "-".join(dict.fromkeys(tags)) if tags else f"alloc-s{seed}-{index:04d}"
    case_name = case_name[:120].rstrip("-")
    cluster = {"subnets": subnets, "vpcs": vpcs, "ips": ips, "ippools": ippools, "vips": vips,
               "namespaces": namespaces, "networkattachmentdefinitions": nads}
    return {
        "name": case_name,
        "source": f"generated by e2e/tools/allocator_diff.py --seed {seed} (case {index})",
        "request": admission(op, pod, old),
        "settings": {},
        "cluster": cluster,
        "expect": {"allowed": True, "code": None, "message": None, "message_contains": None},
        "contract": "I5",
        "notes": "",
    }


def generate(seed, count):
    rng = random.Random(seed)
    return [gen_case(rng, seed, i) for i in range(count)]


# ---------------------------------------------------------------------------------------------
# Upstream's messages and the judge

_TEMPLATES = None


def upstream_templates():
    """Every backquoted text with a %-verb in the kube-ovn-webhook reference, as a regex."""
    global _TEMPLATES
    if _TEMPLATES is None:
        text = REFERENCE.read_text() if REFERENCE.exists() else ""
        pats = []
        for m in re.finditer(r"`([^`\n]*%[sdvqw][^`\n]*)`", text):
            t = m.group(1).strip('"')
            pats.append(re.compile("^" + re.sub(r"%[sdvqw]", ".*", re.escape(t).replace("%", "%")) + "$", re.S))
        _TEMPLATES = pats
    return _TEMPLATES


CONFLICT = re.compile(r"^annotation static-ip (.*) is conflict with ip crd (\S+), ip (.*)$", re.S)


def upstream_refuses(case, answer):
    """Whether kube-ovn-webhook would refuse the request too (approximated; see the module doc)."""
    if answer["allowed"]:
        return False
    req = case["request"]
    if req.get("operation") != "CREATE":
        return False
    ann = ((req.get("object") or {}).get("metadata") or {}).get("annotations") or {}
    if not (ann.get("ovn.kubernetes.io/ip_address") or ann.get("ovn.kubernetes.io/ip_pool")):
        return False
    if "kubevirt.io/migrationJobName" in ann:
        return False
    msg = answer.get("message") or ""
    if not any(p.match(msg) for p in upstream_templates()):
        return False
    m = CONFLICT.match(msg)
    if m:
        want = ann.get("ovn.kubernetes.io/logical_switch") or "ovn-default"
        for ip in (case.get("cluster") or {}).get("ips") or []:
            if ip["metadata"]["name"] == m.group(2):
                return ip["spec"].get("subnet") == want
        return False
    return True


def outcome_bad(o):
    return [f for f in o.get("flags", []) if f in BAD]


def outcome_empty(o):
    return any(f == "nothing" or f.startswith("error: ") for f in o.get("flags", []))


def judge(case, answer, outcomes):
    """None when the property holds, else 'false admission' / 'false refusal'; 'harness' when
    the Go side could not run the case."""
    if any(f.startswith("error: harness") for o in outcomes for f in o.get("flags", [])) or not outcomes:
        return "harness"
    bad = any(outcome_bad(o) for o in outcomes)
    if answer["allowed"]:
        return "false admission" if bad else None
    if upstream_refuses(case, answer):
        return None
    if bad or any(outcome_empty(o) for o in outcomes):
        return None
    return "false refusal"


def describe(o):
    if o.get("nics"):
        nics = ", ".join(f"{n['provider']}={n['ip']}@{n['subnet']}" + (f" [{' '.join(n['flags'])}]" if n.get("flags") else "")
                         for n in o["nics"])
    else:
        nics = "-"
    flags = [f for f in o.get("flags", []) if f not in BAD]
    why = "; ".join(o.get("why", []) + [w for n in o.get("nics", []) for w in n.get("why", [])])
    return nics + (f" ({', '.join(flags)})" if flags else "") + (f" <{why}>" if why else "")


def answer_text(a):
    if a["allowed"]:
        return "admitted" + (f" warnings={a['warnings']}" if a.get("warnings") else "")
    return f"refused {a.get('code')}: {a.get('message')}"


# ---------------------------------------------------------------------------------------------
# Running the two sides


def policy_answers(cases_dir, wasm):
    """{case name: answer} from the conformance binary's --answers."""
    with tempfile.NamedTemporaryFile("r", suffix=".jsonl", delete=False) as f:
        out = f.name
    try:
        proc = subprocess.run(CONFORMANCE + ["--answers", out, str(wasm), str(cases_dir)], cwd=ROOT,
                              capture_output=True, text=True)
        answers = {}
        for line in Path(out).read_text().splitlines():
            a = json.loads(line)
            answers[Path(a["file"]).stem] = a
        if not answers:
            sys.stderr.write(proc.stdout[-3000:] + proc.stderr[-3000:])
            raise SystemExit("allocator-diff: the conformance binary gave no answers")
        for line in proc.stdout.splitlines():
            if "did not answer" in line:
                print(line)
        return answers
    finally:
        os.unlink(out)


def go_outcomes(src, cases, orders, work):
    """{case name: [outcome, ...]} from TestKopAllocatorDiff run inside the checkout."""
    src = Path(src).resolve()
    target = src / GO_COPY
    if not target.parent.is_dir():
        raise SystemExit(f"allocator-diff: {src} has no pkg/controller: not a Kube-OVN checkout")
    cases_file = work / "allocator-cases.json"
    out_file = work / "allocator-out.json"
    cases_file.write_text(json.dumps(cases))
    if out_file.exists():
        out_file.unlink()
    env = dict(os.environ, KOP_ALLOCATOR_CASES=str(cases_file), KOP_ALLOCATOR_OUT=str(out_file),
               KOP_ALLOCATOR_ORDERS=str(orders))
    shutil.copyfile(GO_TEST, target)
    try:
        proc = subprocess.run(["go", "test", "-count=1", "-timeout", "3h", "-run", "TestKopAllocatorDiff",
                               "./pkg/controller/"], cwd=src, env=env, capture_output=True, text=True)
    finally:
        target.unlink(missing_ok=True)
    if not out_file.exists():
        sys.stderr.write(proc.stdout[-5000:] + proc.stderr[-5000:])
        raise SystemExit("allocator-diff: the Go test wrote no outcomes")
    if proc.returncode != 0:
        fails = [line for line in proc.stdout.splitlines() if line.strip().startswith("--- FAIL")]
        print(f"allocator-diff: go test exited {proc.returncode} ({len(fails)} failing runs; outcomes kept)")
    return json.loads(out_file.read_text())


def checkout_commit(src):
    try:
        return subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=src, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (subprocess.CalledProcessError, FileNotFoundError):
        return "unknown"


def load_cases(paths):
    out = []
    for p in paths:
        p = Path(p)
        files = sorted(p.glob("*.json")) if p.is_dir() else [p]
        for f in files:
            c = json.loads(f.read_text())
            items = c if isinstance(c, list) else [c]
            for case in items:
                obj = (case.get("request") or {}).get("object") or {}
                if (case.get("request") or {}).get("kind", {}).get("kind") == "Pod" and isinstance(obj, dict):
                    case = copy.deepcopy(case)
                    case["name"] = f.stem if not isinstance(c, list) else case["name"]
                    out.append(case)
    return out


def record_for(case, outcomes, commit, orders):
    return {"commit": commit, "orders": orders, "outcomes": outcomes, "input": case_input(case)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src", required=True, help="a Kube-OVN checkout (KUBE_OVN_SRC)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=300)
    ap.add_argument("--orders", type=int, default=20)
    ap.add_argument("--cases", nargs="*", default=[], help="more case files or folders (Pod cases only)")
    ap.add_argument("--record", action="store_true", help="write divergences into tests/allocator/")
    ap.add_argument("--wasm", default=str(ROOT / "policy.wasm"))
    ap.add_argument("--outcomes", help="judge again on a Go outcome file an earlier run wrote "
                                       "(target/allocator-diff/allocator-out.json) instead of running Go")
    args = ap.parse_args(argv)
    start = time.time()
    commit = checkout_commit(args.src)
    cases = generate(args.seed, args.count) + load_cases(args.cases)
    names = [c["name"] for c in cases]
    if len(set(names)) != len(names):
        raise SystemExit("allocator-diff: two cases share a name")
    work = ROOT / "target/allocator-diff"
    shutil.rmtree(work, ignore_errors=True)
    (work / "cases").mkdir(parents=True)
    for c in cases:
        (work / "cases" / f"{c['name']}.json").write_text(json.dumps(c, indent=2, ensure_ascii=False) + "\n")
    answers = policy_answers(work / "cases", args.wasm)
    if args.outcomes:
        outcomes = json.loads(Path(args.outcomes).read_text())
        (work / "allocator-out.json").write_text(json.dumps(outcomes))
    else:
        outcomes = go_outcomes(args.src, cases, args.orders, work)

    DIVERGENCES.mkdir(parents=True, exist_ok=True)
    counts = {"false admission": 0, "false refusal": 0, "harness": 0}
    for c in cases:
        a = answers.get(c["name"])
        os_ = [json.loads(json.dumps(o)) for o in outcomes.get(c["name"], [])]
        if a is None:
            print(f"NO ANSWER {c['name']}")
            counts["harness"] += 1
            continue
        verdict = judge(c, a, os_)
        if verdict is None:
            continue
        counts[verdict] += 1
        print(f"{verdict.upper()} {c['name']}: policy {answer_text(a)}")
        for o in os_:
            print(f"    {describe(o)}")
        if verdict == "harness":
            continue
        rec = copy.deepcopy(c)
        rec["allocator"] = record_for(c, os_, commit, args.orders)
        rec["expect"] = {"allowed": verdict == "false refusal", "code": None if verdict == "false refusal" else 403,
                         "message": None, "message_contains": None}
        rec["notes"] = (f"allocator-diff at {commit}: {verdict}; the policy answered {answer_text(a)}. "
                        + rec.get("notes", "")).strip()
        text = json.dumps(rec, indent=2, ensure_ascii=False) + "\n"
        (DIVERGENCES / f"{c['name']}.json").write_text(text)
        if args.record:
            # A case recorded at another commit (the pin, a release) keeps that record.
            RECORDED.mkdir(parents=True, exist_ok=True)
            dest = RECORDED / f"{c['name']}.json"
            if not dest.exists() or json.loads(dest.read_text()).get("allocator", {}).get("commit") == commit:
                dest.write_text(text)
    div = counts["false admission"] + counts["false refusal"]
    several = sum(1 for c in cases if len(outcomes.get(c["name"], [])) > 1)
    print(f"allocator-diff: {several} of {len(cases)} cases had more than one outcome over {args.orders} orders")
    if counts["harness"]:
        print(f"allocator-diff: {counts['harness']} cases the harness could not judge")
    print(f"allocator-diff {commit}: {len(cases)} cases, {args.orders} orders each, {div} divergences "
          f"({counts['false admission']} false admissions, {counts['false refusal']} false refusals), "
          f"{time.time() - start:.0f} s")
    return 1 if div else 0


if __name__ == "__main__":
    sys.exit(main())
