"""Generated cases for the oracle: requests around every rule upstream checks.

    python3 -m e2e.tools.generate OUT_DIR [--seed N] [--count N]

Writes COUNT case files (tests/README.md's format) made from SEED alone:
Pods and workloads whose static-IP annotations mix addresses, CIDRs, pools
with `,` and `;`, spaces, dual stack, attachment keys, MACs, rates and
families, odd numbers and Unicode digits, over clusters of IP objects and
IPPools; StatefulSet and KubeVirt pods; Subnets, Vpcs, Vips and IPs around
their validation rules, over clusters of Subnets and Vpcs. Each case has no
expected answer of its own (`expect` is a placeholder): `make oracle-generated`
asks upstream and the policy and keeps where they disagree.

`contract` names the contract item whose difference from upstream the
input may show (I3, I4, I7, I8, I13), else `upstream`: there the policy must
answer as upstream does.
"""

import argparse
import json
import random
from pathlib import Path

V4 = ["10.16.0.5", "10.16.0.20", "10.16.0.0", "10.16.255.255", "10.16.0.1", "192.168.1.1", "0.0.0.0",
      "255.255.255.255"]
V6 = ["fd00:10:16::5", "fd00:10:16::20", "fd00:10:16::", "::1", "::", "fd00:10:16:0:0:0:0:5"]
ODD = ["010.16.0.5", "10.16.0.05", " 10.16.0.5", "10.16.0.5 ", "10.16.0", "10.16.0.256", "1.2.3.4.5",
       "10.16.0.5.", "١٠.16.0.5", "１０.16.0.5", "10.16.0.5\n", "0x0a.16.0.5", "10.16.0.+5", "10.16.0.-5",
       "FD00:10:16::5", "fd00:10:16::05", "fd00:0010:0016::5", "::ffff:10.16.0.5", "fd00::1.2.3.4",
       "fe80::1%eth0", ":::1", "fd00:10:16::5::1", "fd00:10:16::5 ", "", " ", "a", "10.16.0.5\u200b",
       "10.16.0.5/16", "10.16.0.5/33", "10.16.0.5/016", "10.16.0.5/ 16", "fd00:10:16::5/64",
       "fd00:10:16::5/129", "10.16.0.5/-1", "10.16.0.5/", "/16", "10.16.0.5/+8", "10.16.0.5/1e1",
       "10.16.0.0/16", "10.16.0.5/32", "10.16.0.5/0", "10.16.0.5\t", "10.16.0.5\u00a0", "10.16.0.5\"",
       "\U0001F600", "10.16.0.5\u0085"]
POOL_NAMES = ["pool-a", "pool-missing", "Pool_A", "pool a", "pool-ä", "1pool", "pool-a ", "p" * 70,
              # Go's %q: escapes, invisible and non-printable runes
              "pool\t", "pool\"x", "pool\\x", "pool\u00e9", "pool\u200b", "\u0001", "pool\u00a0", "\U0001F600pool",
              "pool\u2028", "pool\u007f", "pool\u0085", "pool\ufeff", "pool\U000e0001", "pool\u0301", "pool\ud7ff"]
MACS = ["00:00:00:11:22:33", "00-00-00-11-22-33", "0000.0011.2233", "00:00:00:11:22", "zz:00:00:11:22:33",
        "00:00:00:11:22:33:44:55", "00:00:00:11:22:33 ", "AA:BB:CC:DD:EE:FF",
        "00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00", "0:0:0:11:22:33"]
CIDRS = ["10.16.0.0/16", "10.16.0.0/16,fd00:10:16::/112", "10.16.0.0/33", "bad", "10.16.0.1/16",
         "fd00:10:16::/112", "10.17.0.0/16", " 10.16.0.0/16", "10.16.0.0/16,"]
RATES = ["1", "0", "-1", "+5", "1.5", "1e3", "0x10", " 5", "5 ", "99999999999999999999", "٣", "00", "-0",
         "9223372036854775807", "9223372036854775808", "1_000"]
FAMILIES = ["ipv4", "ipv6", "IPv4", "dual", "", "ipv4 "]
# Attachment and per-interface keys ValidatePodNetwork reads (pkg/util/validator.go).
ATTACHMENT_KEYS = ["ovn.kubernetes.io/ip_address.eth1", "net1.ns1.kubernetes.io/ip_address",
                   "net1.ns1.ovn.kubernetes.io/ip_address", "net1.ns1.ovn.kubernetes.io/ip_family",
                   "net1.ns1.ovn.eth1.kubernetes.io/ip_family", "net1.ns1.kubernetes.io/ip_address.eth1",
                   "net1.ns1.kubernetes.io/ip_family", "net1.ns1.ovn.kubernetes.io/ip_pool",
                   "net1.ns1.ovn.kubernetes.io/logical_switch", "net1.ns1.kubernetes.io/ingress_rate",
                   "x.kubernetes.io/egress_burst", "net1.ns1.ovn.kubernetes.io/ip_address.eth2",
                   "ovn.kubernetes.io/ip_family"]
SUBNET_CIDRS = ["10.66.0.0/16", "10.66.0.0/24,fd00:66::/112", "10.66.0.1/24", "10.66.0.0/33", "010.66.0.0/16",
                "10.66.0.0/016", "FD00:66::/112", "fd00:66::/112", "0.0.0.0/0", "127.0.0.0/8", "224.0.0.0/4",
                "169.254.0.0/16", "10.66.0.0/16,10.67.0.0/16", "fd00:66::/112,10.66.0.0/16", "", " 10.66.0.0/16",
                "10.66.0.0/16 ", "10.66.0.0/16,", "::/0", "10.66.0.0/32", "10.66.0.0/31", "fd00:66::/128",
                "10.16.0.0/16", "10.16.5.0/24", "10.96.0.0/12", "fd00:66::/64", "10.66.0.0", "10.66.0.0/24/24",
                "fd00:66::/112,fd00:67::/112", "10.66.0.0/+16"]
GATEWAYS = ["", "", "", "", "", "10.66.0.1", "10.66.0.0", "10.66.255.255", "10.67.0.1", "10.66.0.1,fd00:66::1", "FD00:66::1",
            "fd00:66::1", "10.66.0.01", "10.66.0.254", "fd00:66::1,10.66.0.1", "bad", "10.66.0.1 "]
EXCLUDES = ["10.66.0.1", "10.66.0.1..10.66.0.10", "10.66.0.10..10.66.0.1", "10.66.0.1..10.66.0.2..10.66.0.3",
            "FD00:66::1", "fd00:66::1..fd00:66::a", "bad", "10.66.0.1..", "10.66.0.1 ..10.66.0.5", "..",
            "10.66.0.1..fd00:66::1", "010.66.0.1"]
PROTOCOLS = ["", "", "IPv4", "IPv6", "Dual", "ipv4", "MAC", "bogus"]
EGRESS = ["", "", "10.0.0.1", "10.0.0.1,fd00::1", "bad", "FD00::1", "10.0.0.1,10.0.0.2,10.0.0.3", "fd00::1",
          "10.0.0.1,"]
NAT_RULES = [[], [{"action": "forward", "match": {"srcIPs": "10.66.0.0/24", "dstIPs": "10.0.0.1"}}],
             [{"action": "nat", "match": {"srcIPs": "10.66.0.0/24,fd00::/64"}}],
             [{"action": "nat", "match": {"srcIPs": "", "dstIPs": ""}}],
             [{"action": "nat", "match": {"srcIPs": "10.66.0.0/24", "dstIPs": "fd00::1"}}],
             [{"action": "nat", "match": {"srcIPs": "bad"}}]]
ROUTE_CIDRS = ["10.0.0.0/8", "10.0.0.1", "fd00::/64", "bad", "10.0.0.0/33", "0.0.0.0/0", "10.0.0.1/8", ""]
NEXT_HOPS = ["10.0.0.1", "fd00::1", "bad", "", "10.0.0.1,10.0.0.2", "10.0.0.256"]


def pick(rng, items):
    return items[rng.randrange(len(items))]


def address_list(rng, sep, count):
    tokens = []
    for _ in range(count):
        kind = rng.random()
        tokens.append(pick(rng, V4) if kind < 0.45 else pick(rng, V6) if kind < 0.7 else pick(rng, ODD))
    return sep.join(tokens)


def meta(name, namespace=None, **extra):
    m = {"name": name}
    if namespace:
        m["namespace"] = namespace
    m.update(extra)
    return m


def request(kind, group, version, resource, operation, name, namespace, obj, old=None, username="kubernetes-admin"):
    return {
        "uid": "00000000-0000-0000-0000-000000000001",
        "kind": {"group": group, "version": version, "kind": kind},
        "resource": {"group": group, "version": version, "resource": resource},
        "requestKind": {"group": group, "version": version, "kind": kind},
        "requestResource": {"group": group, "version": version, "resource": resource},
        "name": name, "namespace": namespace, "operation": operation,
        "userInfo": {"username": username, "groups": ["system:masters", "system:authenticated"]},
        "object": obj, "oldObject": old, "dryRun": False,
        "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions" if operation == "CREATE" else
                    "UpdateOptions" if operation == "UPDATE" else "DeleteOptions"},
    }


def ip_object(name, pod, namespace, subnet, v4="", v6=""):
    address = ",".join(a for a in (v4, v6) if a)
    return {"apiVersion": "kubeovn.io/v1", "kind": "IP", "metadata": meta(name, labels={"ovn.kubernetes.io/subnet": subnet, subnet: ""} if subnet else {}),
            "spec": {"podName": pod, "namespace": namespace, "subnet": subnet, "ipAddress": address,
                     "v4IpAddress": v4, "v6IpAddress": v6, "macAddress": "00:00:00:aa:bb:cc", "podType": ""}}


def held_ips(rng, pod_name):
    """0-4 IP objects holding canonical addresses an annotation may name."""
    ips = []
    for i in range(rng.randrange(5)):
        v4 = pick(rng, ["10.16.0.5", "10.16.0.20", "192.168.1.1", "10.16.0.1", ""])
        v6 = pick(rng, ["", "", "fd00:10:16::5", "fd00:10:16::20"])
        if not v4 and not v6:
            v4 = "10.16.0.5"
        pod = pick(rng, ["other", "web", pod_name])
        subnet = pick(rng, ["ovn-default", "ovn-default", "ovn-default", "other-subnet"])
        ips.append(ip_object(f"{pod}-{i}.default", pod, "default", subnet, v4, v6))
    return ips


def pod_case(rng):
    name = pick(rng, ["web", "static-1", "db-0", "web-7d4b9c8f5-x2x7q"])
    ann, contract = {}, "upstream"
    if rng.random() < 0.7:
        ann["ovn.kubernetes.io/ip_address"] = address_list(rng, pick(rng, [",", ",", ", ", ";"]), rng.choice([1, 1, 2, 2, 3]))
    if rng.random() < 0.4:
        if rng.random() < 0.4:
            ann["ovn.kubernetes.io/ip_pool"] = pick(rng, POOL_NAMES)
        else:
            ann["ovn.kubernetes.io/ip_pool"] = address_list(rng, pick(rng, [",", ",", ";", ", "]), rng.choice([1, 2, 3]))
    for key, corpus, p in (("mac_address", MACS, 0.2), ("cidr", CIDRS, 0.2), ("ingress_rate", RATES, 0.15),
                           ("egress_rate", RATES, 0.1), ("ingress_burst", RATES, 0.05), ("ip_family", FAMILIES, 0.15),
                           ("logical_switch", ["ovn-default", "other-subnet"], 0.2)):
        if rng.random() < p:
            ann[f"ovn.kubernetes.io/{key}"] = pick(rng, corpus)
    if not ann:
        ann["ovn.kubernetes.io/ip_address"] = address_list(rng, ",", 1)
    attached = rng.random() < 0.25
    if attached:
        for _ in range(rng.choice([1, 2, 3])):
            key = pick(rng, ATTACHMENT_KEYS)
            suffix = key.rsplit("/", 1)[1]
            ann[key] = pick(rng, FAMILIES) if suffix == "ip_family" else pick(rng, RATES) if "_r" in suffix or "_b" in suffix \
                else pick(rng, ["attach-subnet", "ovn-default"]) if suffix == "logical_switch" \
                else address_list(rng, pick(rng, [",", ";"]), rng.choice([1, 2]))
        ann["k8s.v1.cni.cncf.io/networks"] = "ns1/net1"
    owners = []
    r = rng.random()
    if r < 0.08:
        owners = [{"apiVersion": pick(rng, ["kubevirt.io/v1", "kubevirt.io", "kubevirt.io.x/v1"]),
                   "kind": "VirtualMachineInstance", "name": "vm1", "uid": "u1", "controller": True}]
    elif r < 0.13:
        ann["kubevirt.io/migrationJobName"] = pick(rng, ["job1", ""])
    elif r < 0.2 and not attached:
        name = pick(rng, ["db-0", "db-1", "db-01", "db-+1", "db-x", "dbx-0", "db-99999999999999999999"])
        owners = [{"apiVersion": pick(rng, ["apps/v1", "apps/v1beta1", "v1"]), "kind": pick(rng, ["StatefulSet", "statefulset"]),
                   "name": "db", "uid": "u2", "controller": pick(rng, [True, False])}]
    pool = ann.get("ovn.kubernetes.io/ip_pool", "")
    ips = [] if attached else held_ips(rng, "vm1" if owners else name)
    holders = [a for ip in ips if ip["spec"]["subnet"] == "ovn-default" for a in ip["spec"]["ipAddress"].split(",")]
    if ";" in pool:
        contract = "I4"
    elif attached and any(k.endswith(("ip_address", "ip_pool")) for k in ann if not k.startswith("ovn.")):
        contract = "I7"  # an attachment alone makes the pod subject to validation, and is conflict-checked
    elif len(holders) != len(set(holders)):
        contract = "I12"  # several IP objects hold one address: the first in name order is named
    elif "," in pool:
        contract = "I13"  # groups as the controller splits them: one it cannot parse is never free
    elif owners and owners[0]["kind"] != "VirtualMachineInstance" and ips:
        contract = "I3"
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": meta(name, "default", annotations=ann, ownerReferences=owners)
           if owners else meta(name, "default", annotations=ann),
           "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    cluster = {"ips": ips}
    if rng.random() < 0.5:
        cluster["ippools"] = [{"apiVersion": "kubeovn.io/v1", "kind": "IPPool", "metadata": meta("pool-a"),
                               "spec": {"subnet": "ovn-default", "ips": ["10.16.0.50"]}}]
    return request("Pod", "", "v1", "pods", "CREATE", name, "default", pod), cluster, contract


def workload_case(rng):
    kind, group, resource = pick(rng, [("Deployment", "apps", "deployments"), ("StatefulSet", "apps", "statefulsets"),
                                       ("DaemonSet", "apps", "daemonsets"), ("Job", "batch", "jobs"),
                                       ("CronJob", "batch", "cronjobs")])
    name = pick(rng, ["web", "db"])
    ann = {"ovn.kubernetes.io/ip_pool": address_list(rng, pick(rng, [",", ";", ", "]), rng.choice([1, 2, 3]))}
    if rng.random() < 0.3:
        ann["ovn.kubernetes.io/ip_address"] = address_list(rng, ",", 1)
    if rng.random() < 0.2:
        ann["ovn.kubernetes.io/mac_address"] = pick(rng, MACS)
    template = {"metadata": {"annotations": ann}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    spec = {"selector": {"matchLabels": {"app": name}}, "template": template}
    if kind == "CronJob":
        spec = {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": template}}}
    elif kind == "Job":
        spec = {"template": template}
    elif kind != "DaemonSet":
        spec["replicas"] = 1
    obj = {"apiVersion": f"{group}/v1", "kind": kind, "metadata": meta(name, "default"), "spec": spec}
    ips = held_ips(rng, name)
    contract = "upstream"
    if ";" in ann["ovn.kubernetes.io/ip_pool"]:
        contract = "I4"
    elif ips:
        contract = "I3"
    return request(kind, group, "v1", resource, "CREATE", name, "default", obj), {"ips": ips}, contract


def subnet_spec(rng):
    spec = {"cidrBlock": pick(rng, SUBNET_CIDRS), "gateway": pick(rng, GATEWAYS), "vpc": pick(rng, ["ovn-cluster"] * 4 + ["", "vpc-a"]),
            "protocol": pick(rng, PROTOCOLS), "excludeIps": [pick(rng, EXCLUDES) for _ in range(rng.choice([0, 0, 1, 2]))],
            "natOutgoing": rng.random() < 0.3, "default": False}
    for key, value, p in (("gatewayType", pick(rng, ["distributed", "centralized", "Distributed", "x"]), 0.2),
                          ("externalEgressGateway", pick(rng, EGRESS), 0.2),
                          ("mtu", pick(rng, [1200, 1280, 1500, -1, 0]), 0.15),
                          ("vlan", "vlan1", 0.1),
                          ("allowSubnets", [pick(rng, ["10.0.0.0/8", "bad", "FD00::/8", "fd00::/8", "10.0.0.1/8"])], 0.15),
                          ("vips", [pick(rng, ["10.66.0.5", "10.99.0.5", "FD00:66::5", "fd00:66::5"])], 0.15),
                          ("logicalGateway", True, 0.1), ("u2oInterconnection", True, 0.15),
                          ("u2oInterconnectionIP", pick(rng, ["10.66.0.2", "10.66.0.1", "10.99.0.1", "FD00:66::2"]), 0.1),
                          ("natOutgoingPolicyRules", pick(rng, NAT_RULES), 0.15),
                          ("namespaces", [pick(rng, ["ns1", "ns2"])], 0.2),
                          ("private", True, 0.1)):
        if rng.random() < p:
            spec[key] = value
    return spec


def subnet_object(name, spec, using=0):
    obj = {"apiVersion": "kubeovn.io/v1", "kind": "Subnet", "metadata": meta(name), "spec": spec}
    if using != 0:
        obj["status"] = {"v4usingIPs": using, "v6usingIPs": 0}
    return obj


# status.v{4,6}usingIPs as a client may write them (a BigInt in Go).
USING = [0, 0, 0, 3, 3.0, 1e3, -1, 99999999999999999999999, "3", 0.5, None]


def subnet_case(rng):
    name = pick(rng, ["sub-a", "sub-b", "vpc-a"])
    existing = []
    for i in range(rng.randrange(4)):
        existing.append(subnet_object(f"net-{i}", {"cidrBlock": pick(rng, ["10.16.0.0/16", "10.66.0.0/24", "10.66.128.0/17",
                                                                      "fd00:66::/112", "10.66.0.0/16,fd00:66::/112",
                                                                      "172.20.0.0/16"]),
                                                 "vpc": pick(rng, ["ovn-cluster", "ovn-cluster", "vpc-a", ""]),
                                                 "protocol": "IPv4"}))
    vpcs = []
    if rng.random() < 0.3:
        vpcs.append({"apiVersion": "kubeovn.io/v1", "kind": "Vpc", "metadata": meta("vpc-a"),
                     "spec": {"namespaces": ["ns1"]}, "status": {"standby": True, "default": False}})
    spec = subnet_spec(rng)
    op = pick(rng, ["CREATE", "CREATE", "CREATE", "UPDATE", "DELETE"])
    obj = subnet_object(name, spec, using=pick(rng, USING))
    old = None
    if op == "UPDATE":
        old_spec = dict(spec)
        for key in rng.sample(["gateway", "cidrBlock", "vpc", "vlan", "protocol"], rng.choice([0, 1, 2])):
            old_spec[key] = {"gateway": pick(rng, GATEWAYS), "cidrBlock": pick(rng, SUBNET_CIDRS),
                             "vpc": pick(rng, ["", "ovn-cluster", "vpc-a"]), "vlan": pick(rng, ["", "vlan1"]),
                             "protocol": pick(rng, PROTOCOLS)}[key]
        old = subnet_object(name, old_spec, using=pick(rng, USING))
    elif op == "DELETE":
        old, obj = obj, None
    contract = "upstream"
    if op != "DELETE" and not spec.get("vpc") and existing:
        contract = "I8"
    if spec.get("vpc") in ("", "ovn-cluster") and any(not s["spec"]["vpc"] for s in existing):
        contract = "I8"
    return request("Subnet", "kubeovn.io", "v1", "subnets", op, name, "", obj, old), \
        {"subnets": existing, "vpcs": vpcs}, contract


def vpc_case(rng):
    name = pick(rng, ["vpc-a", "vpc-b", "net-0"])
    spec = {}
    if rng.random() < 0.6:
        spec["staticRoutes"] = [{"cidr": pick(rng, ROUTE_CIDRS), "nextHopIP": pick(rng, NEXT_HOPS),
                                 "policy": pick(rng, ["policyDst", "policySrc", "", "bogus"])}
                                for _ in range(rng.choice([1, 2]))]
    if rng.random() < 0.5:
        spec["policyRoutes"] = [{"action": pick(rng, ["allow", "drop", "reroute", "bogus"]), "priority": pick(rng, [1, 100, 0]),
                                 "match": "ip4.dst == 10.0.0.0/8", "nextHopIP": pick(rng, NEXT_HOPS)}]
    if rng.random() < 0.3:
        spec["namespaces"] = ["ns1"]
    op = pick(rng, ["CREATE", "CREATE", "UPDATE", "DELETE"])
    obj = {"apiVersion": "kubeovn.io/v1", "kind": "Vpc", "metadata": meta(name), "spec": spec}
    old = None
    if op == "UPDATE":
        old = {"apiVersion": "kubeovn.io/v1", "kind": "Vpc", "metadata": meta(name), "spec": {}}
    elif op == "DELETE":
        old, obj = obj, None
    subnets = [subnet_object("net-0", {"cidrBlock": "10.66.0.0/24", "vpc": pick(rng, ["vpc-a", "ovn-cluster"]),
                                       "protocol": "IPv4"})] if rng.random() < 0.5 else []
    return request("Vpc", "kubeovn.io", "v1", "vpcs", op, name, "", obj, old), {"subnets": subnets}, "upstream"


def vip_or_ip_case(rng):
    subnets = [subnet_object("sub-a", {"cidrBlock": pick(rng, ["10.66.0.0/24", "10.66.0.0/24,fd00:66::/112", "fd00:66::/112"]),
                                       "vpc": "ovn-cluster", "protocol": "IPv4"})]
    v4 = pick(rng, ["", "10.66.0.5", "10.99.0.5", "bad", "010.66.0.5", "fd00:66::5", "10.66.0.0"])
    v6 = pick(rng, ["", "", "fd00:66::5", "FD00:66::5", "fd00:99::5", "bad", "10.66.0.5"])
    subnet = pick(rng, ["sub-a", "sub-a", "missing", ""])
    op = pick(rng, ["CREATE", "CREATE", "UPDATE"])
    if rng.random() < 0.5:
        spec = {"subnet": subnet, "v4ip": v4, "v6ip": v6, "macAddress": pick(rng, ["", "00:00:00:11:22:33"])}
        obj = {"apiVersion": "kubeovn.io/v1", "kind": "Vip", "metadata": meta("vip-a"), "spec": spec}
        old = None
        if op == "UPDATE":
            old = {"apiVersion": "kubeovn.io/v1", "kind": "Vip", "metadata": meta("vip-a"),
                   "spec": dict(spec, v4ip=pick(rng, [v4, "10.66.0.9"])),
                   "status": pick(rng, [{}, {"v4ip": "10.66.0.9", "mac": "00:00:00:11:22:33"}])}
        return request("Vip", "kubeovn.io", "v1", "vips", op, "vip-a", "", obj, old), {"subnets": subnets}, "upstream"
    obj = ip_object("web.default", "web", "default", subnet, v4, v6)
    obj["spec"]["podType"] = pick(rng, ["", "", "StatefulSet", "VirtualMachine", "Deployment"])
    old = None
    if op == "UPDATE":
        old = json.loads(json.dumps(obj))
        field = pick(rng, ["subnet", "namespace", "podName", "podType", "v4IpAddress", "v6IpAddress", "macAddress", None])
        if field:
            old["spec"][field] = pick(rng, ["", "changed"])
    return request("IP", "kubeovn.io", "v1", "ips", op, "web.default", "", obj, old), {"subnets": subnets}, "upstream"


PORTS = ["80", "0", "65535", "65536", "-1", "+80", "080", "8o", " 80", "80 ", "80-90", "1e2", "99999999999999999999",
         "٨٠", "", "0x50", "1_000", "8\t0", "8\"0", "8\\0", "8\u00e90", "8\u200b0", "\u0001", "8\u00a00", "😀"]
NAT_IPS = ["10.0.0.5", "fd00::5", "FD00::5", "bad", "", "10.0.0.256", "010.0.0.5", " 10.0.0.5", "10.0.0.0/24"]
NAT_CIDRS = ["10.0.0.0/24", "10.0.0.5", "10.0.0.0/33", "bad", "", "10.0.0.0/24,fd00::/64", "010.0.0.0/24",
             "10.0.0.0/24,bad", "fd00::/64", "10.0.0.1/24"]


def port_label(port):
    """The existing rule's port label: the new rule's port where that is a valid label value."""
    return port if port.isascii() and port.isalnum() else "80"


def nat_config(rng):
    """The ConfigMaps iptables NAT needs, sometimes missing or off."""
    maps = []
    if rng.random() < 0.9:
        maps.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta("ovn-vpc-nat-config", "kube-system"),
                     "data": {"image": pick(rng, ["kubeovn/vpc-nat-gateway:v1.17.0", "kubeovn/vpc-nat-gateway:v1.17.0", ""])}})
    if rng.random() < 0.9:
        maps.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta("ovn-vpc-nat-gw-config", "kube-system"),
                     "data": {"enable-vpc-nat-gw": pick(rng, ["true", "true", "true", "false", "True"])}})
    return maps


def nat_case(rng):
    configmaps = nat_config(rng)
    eips = []
    if rng.random() < 0.85:
        v4 = pick(rng, ["172.20.0.10", "", "172.20.0.10"])
        eips.append({"apiVersion": "kubeovn.io/v1", "kind": "IptablesEIP", "metadata": meta("eip-a"),
                     "spec": {"natGwDp": pick(rng, ["gw1", "gw1", ""]), "v4ip": v4, "v6ip": pick(rng, ["", "", "fd00:20::10"])},
                     "status": {"ip": v4, "ready": True}})
    subnets = [subnet_object("ovn-vpc-external-network", {"cidrBlock": "172.20.0.0/16", "vpc": "ovn-cluster", "protocol": "IPv4"}),
               subnet_object("ext", {"cidrBlock": "172.30.0.0/16,fd00:30::/64", "vpc": "ovn-cluster", "protocol": "Dual"})]
    kind = pick(rng, ["IptablesDnatRule", "IptablesDnatRule", "IptablesSnatRule", "IptablesFIPRule", "IptablesEIP"])
    eip = pick(rng, ["eip-a", "eip-a", "eip-missing", ""])
    dnats, fips = [], []
    if kind == "IptablesDnatRule":
        spec = {"eip": eip, "externalPort": pick(rng, PORTS), "internalPort": pick(rng, PORTS), "internalIp": pick(rng, NAT_IPS),
                "protocol": pick(rng, ["tcp", "TCP", "udp", "sctp", ""]), "type": pick(rng, ["", "share", "exclusive", "Share"])}
        if rng.random() < 0.3:
            dnats.append({"apiVersion": "kubeovn.io/v1", "kind": "IptablesDnatRule",
                          "metadata": meta("dnat-old", labels={"ovn.kubernetes.io/vpc-nat-gw-name": "gw1",
                                                               "ovn.kubernetes.io/vpc_dnat_eport": port_label(spec["externalPort"])}),
                          "spec": dict(spec, type=pick(rng, ["exclusive", "share"]))})
        if rng.random() < 0.2:
            fips.append({"apiVersion": "kubeovn.io/v1", "kind": "IptablesFIPRule",
                         "metadata": meta("fip-old", labels={"ovn.kubernetes.io/eip_v4_ip": "172.20.0.10"}),
                         "spec": {"eip": "eip-b", "internalIp": "10.0.0.9"}})
        resource = "iptables-dnat-rules"
    elif kind == "IptablesSnatRule":
        spec = {"eip": eip, "internalCIDR": pick(rng, NAT_CIDRS)}
        resource = "iptables-snat-rules"
    elif kind == "IptablesFIPRule":
        spec = {"eip": eip, "internalIp": pick(rng, NAT_IPS)}
        resource = "iptables-fip-rules"
    else:
        spec = {"natGwDp": pick(rng, ["gw1", ""]), "externalSubnet": pick(rng, ["", "ext", "missing"]),
                "v4ip": pick(rng, ["", "172.20.0.11", "172.30.0.11", "10.0.0.5", "bad", "172.20.0.011"]),
                "v6ip": pick(rng, ["", "", "fd00:30::11", "FD00:30::11", "fd00:99::1", "bad"])}
        resource = "iptables-eips"
    obj = {"apiVersion": "kubeovn.io/v1", "kind": kind, "metadata": meta("rule-a" if kind != "IptablesEIP" else "eip-new"),
           "spec": spec}
    name = obj["metadata"]["name"]
    cluster = {"configmaps": configmaps, "iptablesEips": eips, "subnets": subnets, "iptablesDnatRules": dnats,
               "iptablesFipRules": fips}
    return request(kind, "kubeovn.io", "v1", resource, "CREATE", name, "", obj), cluster, "upstream"


def ovn_nat_case(rng):
    eips = []
    if rng.random() < 0.85:
        eips.append({"apiVersion": "kubeovn.io/v1", "kind": "OvnEip", "metadata": meta("oeip-a"),
                     "spec": {"externalSubnet": "", "v4Ip": "172.20.0.20", "type": pick(rng, ["nat", "lrp", ""])},
                     "status": {"v4Ip": "172.20.0.20", "ready": True}})
    subnets = [subnet_object("ovn-vpc-external-network", {"cidrBlock": "172.20.0.0/16,fd00:20::/64", "vpc": "ovn-cluster",
                                                          "protocol": "Dual"})]
    kind = pick(rng, ["OvnDnatRule", "OvnDnatRule", "OvnSnatRule", "OvnFip", "OvnEip"])
    eip = pick(rng, ["oeip-a", "oeip-a", "oeip-missing", ""])
    some = lambda corpus, p=0.5: pick(rng, corpus) if rng.random() < p else ""  # noqa: E731
    if kind == "OvnDnatRule":
        spec = {"ovnEip": eip, "ipName": some(["web.default", "x"]), "v4Ip": some(NAT_IPS, 0.3),
                "v6Ip": some(NAT_IPS, 0.2), "externalPort": pick(rng, PORTS), "internalPort": pick(rng, PORTS),
                "protocol": pick(rng, ["tcp", "TCP", "udp", "sctp", ""])}
        resource = "ovn-dnat-rules"
    elif kind == "OvnSnatRule":
        spec = {"ovnEip": eip, "vpcSubnet": some(["sub-a"]), "ipName": some(["web.default"], 0.3), "vpc": some(["vpc-a"]),
                "v4IpCidr": some(NAT_CIDRS), "v6IpCidr": some(NAT_CIDRS, 0.3)}
        resource = "ovn-snat-rules"
    elif kind == "OvnFip":
        spec = {"ovnEip": eip, "ipName": some(["web.default"]), "v4Ip": some(NAT_IPS, 0.3), "v6Ip": some(NAT_IPS, 0.2)}
        resource = "ovn-fips"
    else:
        spec = {"externalSubnet": pick(rng, ["", "missing", "ovn-vpc-external-network"]),
                "v4Ip": pick(rng, ["", "172.20.0.21", "10.0.0.5", "bad", "172.20.0.021"]),
                "v6Ip": pick(rng, ["", "", "fd00:20::21", "FD00:20::21", "fd00:99::1", "bad"]), "type": "nat"}
        resource = "ovn-eips"
    name = "oeip-new" if kind == "OvnEip" else "rule-a"
    obj = {"apiVersion": "kubeovn.io/v1", "kind": kind, "metadata": meta(name), "spec": spec}
    return request(kind, "kubeovn.io", "v1", resource, "CREATE", name, "", obj), \
        {"ovnEips": eips, "subnets": subnets}, "upstream"


GENERATORS = [(pod_case, 0.32), (workload_case, 0.1), (subnet_case, 0.23), (vpc_case, 0.07), (vip_or_ip_case, 0.1),
              (nat_case, 0.1), (ovn_nat_case, 0.08)]


def generate(seed, count):
    rng = random.Random(seed)
    makers = [g for g, _ in GENERATORS]
    weights = [w for _, w in GENERATORS]
    for i in range(count):
        maker = rng.choices(makers, weights)[0]
        req, cluster, contract = maker(rng)
        yield {
            "name": f"gen-{seed}-{i:04d}-{maker.__name__.removesuffix('_case')}",
            "source": f"e2e/tools/generate.py --seed {seed}",
            "request": req,
            "settings": {},
            "cluster": {k: v for k, v in cluster.items() if v},
            "expect": {"allowed": True, "code": None, "message": None, "message_contains": None},
            "contract": contract,
            "notes": "generated: the expected answer is upstream's (make oracle-generated)",
        }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=500)
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("gen-*.json"):
        old.unlink()
    for case in generate(args.seed, args.count):
        (out / f"{case['name']}.json").write_text(json.dumps(case, indent=2, ensure_ascii=False) + "\n")
    print(f"generate: {args.count} cases, seed {args.seed}, in {out}")


if __name__ == "__main__":
    main()
