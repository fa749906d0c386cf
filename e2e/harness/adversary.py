"""A tenant against the policy-server, on the real API server (e2e/suites/test_cluster.py, test `adversary`).

A ServiceAccount that may only create pods and Deployments in its own
namespace sends, for a bounded time, dry-run pods and Deployments (deploy/'s
webhooks have sideEffects None, so the API server calls them on dry-run
requests too) naming invented subnets, IPPools, namespaces and
NetworkAttachmentDefinitions, thousands of attachments, 20 000-address
ip_pools and random static addresses, and a few that name real objects.
The attackers are processes of their own, niced: they stand for clients on
other machines, so their own CPU should not be what slows the servers.
Beside them, one client in this process sends a legitimate static-IP pod (a
free address in a real subnet) every 50 ms and times it.

What is measured, before and after (CONTRACT §4, "Bounded by what exists"):
- the watches the API server holds for the policy-server's ServiceAccount,
  each by its list (kind, labelSelector, fieldSelector), from the API
  server's audit log (a policy-server keeps one watch per distinct list for
  its lifetime: client.rs `get_reflector_reader`);
- the serving process's VmRSS and VmHWM (/proc/<pid>/status);
- the legitimate requests' p50, without and during the attack.

The watches are counted from a restarted server. Then a warm-up, one at a
time: legitimate requests of every size the attack sends (a 2 500-attachment
pod, a 20 000-address pool, all in a real subnet) and one adversarial request
of each shape; then the legitimate p50 alone. RSS is measured after the
attack's first half (`--adversary-warm`): the memory large requests need
(the module's linear memory, the allocator's arenas, per worker and
connection) reaches its level within the first few thousand requests and
stays; what a tenant's names leave behind grows on.

Checks, exact: every list a watch was started for since the restart (open
or ended: the audit log has both) is kind-wide (no selector, or
`!ovn.kubernetes.io/subnet`) or narrowed to an object that exists; those
lists = the ones open at the restart + the kind-wide ones + the ones
narrowed to a real object the requests named, all still watched at the end;
no list has more watches than the server has workers (policy-server opens a
second watch of a list that two evaluations ask for before it has filled);
RSS growth over the attack's second half <= 5 MiB, over all of it
<= 64 MiB; legitimate p50 during
the attack <= 2x without it; every adversarial request answered (admitted,
or denied by the webhook with 400 or 403: never a timeout, a 500 or the API
server's refusal); every legitimate request admitted; the server still
running; every request asked for sent within the time given.
"""

import http.client
import multiprocessing
import os
import random
import re
import statistics
import threading
import time
import urllib.parse
from collections import Counter
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

from .kubeapi import Api
from .replay import outcome, resource_path

TENANT_NAMESPACE = "adv-tenant"
TENANT = "tenant"
LEGIT_SUBNET = "adv-legit"  # the legitimate pods' subnet
REAL_SUBNET = "adv-real"  # bound to the tenant's namespace; only the attack names it
REAL_POOL = "adv-pool"
# A subnet whose record says more addresses are in use than any IP object
# shows (the controller's queue behind): each NIC asking for one makes the
# policy ask for the pod's own IP object by name (I15).
HEAVY_SUBNET = "adv-heavy"
HEAVY_USED = 100
# The policy's default maxNetworksPerPod (CONTRACT §4), and how many of the
# heaviest requests are sent at once.
NIC_CAP = 64
BURST = 32
BURSTS = 8
# A real subnet's IP objects, and the range its status records in use.
USED = 50
# kube-apiserver refuses annotations over 256 KiB in all (TotalAnnotationSizeLimitB).
ANNOTATIONS_MAX = 250_000
SUBNET_LABEL = "ovn.kubernetes.io/subnet"
# The selectors that read a whole kind: the IP objects without a subnet label.
KIND_WIDE_LABELS = {None, f"!{SUBNET_LABEL}"}
RSS_GROWTH_MAX_KIB = 5 * 1024
# Over the whole attack, what large requests need once (about 17 MiB with
# kop-serve and policy-server 1.36) is allowed too, with room: a server that
# cannot open more watches (kop-serve past its threads) grows no more in the
# second half, but has by then.
RSS_ATTACK_MAX_KIB = 64 * 1024
# The fewest requests of the attack's second half whose RSS reading counts;
# a busy machine may send fewer than asked before --adversary-seconds.
SECOND_HALF_MIN = 1000
# The legitimate client's pause between requests, without and during the attack.
LEGIT_EVERY = 0.05


# --- the cluster -------------------------------------------------------------


def subnet(name, cidr, gateway, used_range, namespaces=(), used=USED):
    return {
        "apiVersion": "kubeovn.io/v1", "kind": "Subnet", "metadata": {"name": name},
        "spec": {"protocol": "IPv4", "cidrBlock": cidr, "gateway": gateway, "excludeIps": [gateway],
                 "provider": "ovn", "vpc": "ovn-cluster", "namespaces": list(namespaces)},
        "status": {"v4usingIPrange": used_range, "v4usingIPs": used},
    }


def ip_object(name, subnet_name, address):
    pod, namespace = name.split(".", 1)
    return {
        "apiVersion": "kubeovn.io/v1", "kind": "IP",
        "metadata": {"name": name, "labels": {SUBNET_LABEL: subnet_name}},
        "spec": {"podName": pod, "namespace": namespace, "subnet": subnet_name,
                 "ipAddress": address, "v4IpAddress": address},
    }


def real_objects():
    """Two subnets (10.7/16 for the legitimate pods, 10.8/16 bound to the
    tenant's namespace), an IPPool, and USED IP objects in each subnet."""
    objects = [
        subnet(LEGIT_SUBNET, "10.7.0.0/16", "10.7.0.1", f"10.7.1.1-10.7.1.{USED}"),
        subnet(REAL_SUBNET, "10.8.0.0/16", "10.8.0.1", f"10.8.2.1-10.8.2.{USED}", [TENANT_NAMESPACE]),
        subnet(HEAVY_SUBNET, "10.6.0.0/16", "10.6.0.1", f"10.6.1.1-10.6.1.{HEAVY_USED}", used=HEAVY_USED),
        {"apiVersion": "kubeovn.io/v1", "kind": "IPPool", "metadata": {"name": REAL_POOL},
         "spec": {"subnet": REAL_SUBNET, "ips": ["10.8.1.0/24"], "namespaces": [TENANT_NAMESPACE]}},
    ]
    for n in range(1, USED + 1):
        objects.append(ip_object(f"legit-{n}.default", LEGIT_SUBNET, f"10.7.1.{n}"))
        objects.append(ip_object(f"used-{n}.default", REAL_SUBNET, f"10.8.2.{n}"))
    return objects


def tenant_rbac():
    """The tenant may create pods and Deployments in its own namespace, nothing else."""
    return [
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
         "metadata": {"name": "create-workloads", "namespace": TENANT_NAMESPACE},
         "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["create"]},
                   {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["create"]}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
         "metadata": {"name": "create-workloads", "namespace": TENANT_NAMESPACE},
         "subjects": [{"kind": "ServiceAccount", "name": TENANT, "namespace": TENANT_NAMESPACE}],
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "create-workloads"}},
    ]


# The lists a request may narrow to a real object the attack names: each
# subnet's Subnet by name and IP objects by label, the pool, the namespace.
# Lists narrowed to a name the policy fixes, never a request: one each,
# whatever is sent (the IPPool CRD, read for whether spec.subnet is
# selectable; docs/lookups.md). Counted with the kind-wide lists.
FIXED_LISTS = {("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", None, "metadata.name=ippools.kubeovn.io")}


def named_real_lists():
    lists = set()
    for s in (LEGIT_SUBNET, REAL_SUBNET, HEAVY_SUBNET):
        lists.add(("/apis/kubeovn.io/v1/subnets", None, f"metadata.name={s}"))
        lists.add(("/apis/kubeovn.io/v1/ips", f"{SUBNET_LABEL}={s}", None))
    lists.add(("/apis/kubeovn.io/v1/ippools", None, f"metadata.name={REAL_POOL}"))
    lists.add(("/api/v1/namespaces", None, f"metadata.name={TENANT_NAMESPACE}"))
    return lists


# --- the requests ------------------------------------------------------------


def pod(name, annotations, namespace=TENANT_NAMESPACE):
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "annotations": annotations},
        "spec": {"containers": [{"name": "app", "image": "docker.io/library/nginx:alpine"}]},
    }


def deployment(name, annotations, replicas=1):
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": TENANT_NAMESPACE},
        "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels, "annotations": annotations},
                              "spec": {"containers": [{"name": "app", "image": "docker.io/library/nginx:alpine"}]}}},
    }


def address(rng, prefix):
    return f"{prefix}.{rng.randrange(0, 256)}.{rng.randrange(1, 255)}"


def pool_of(prefix, n, start=0):
    """n distinct addresses `<prefix>.x.y` from x = start on, none ending in .0."""
    return ",".join(f"{prefix}.{start + k // 254}.{k % 254 + 1}" for k in range(n))


def attachments(i, n, rng, subnet_of, pools=False):
    """n attachment NICs `a<j>.n<i>.kubernetes.io/…` (an invented namespace
    `n<i>` in every provider), each with a static address, or a pool name
    with `pools`, in the subnet subnet_of(j)."""
    annotations = {}
    for j in range(n):
        provider = f"a{j}.n{i}"
        if pools:
            annotations[f"{provider}.kubernetes.io/ip_pool"] = f"p{i}-{j}"
        else:
            annotations[f"{provider}.kubernetes.io/ip_address"] = address(rng, "10.4")
        annotations[f"{provider}.kubernetes.io/logical_switch"] = subnet_of(j)
    return annotations


def legitimate(n, rng):
    """A pod with a free static address in the legitimate subnet."""
    return "pods", pod(f"legit-{n}", {"ovn.kubernetes.io/logical_switch": LEGIT_SUBNET,
                                      "ovn.kubernetes.io/ip_address": f"10.7.{rng.randrange(100, 250)}.{rng.randrange(1, 255)}"})


def warm_up_requests(attached):
    """Legitimate requests as large as the attack's largest, all in the legitimate subnet."""
    rng = random.Random(1)
    wide = {f"a{j}.legit.kubernetes.io/ip_address": f"10.7.{10 + j // 250}.{j % 250 + 1}" for j in range(attached)}
    wide.update({f"a{j}.legit.kubernetes.io/logical_switch": LEGIT_SUBNET for j in range(attached)})
    return [
        legitimate(-1, rng),
        ("pods", pod("warm-attachments", wide)),
        ("pods", pod("warm-pool", {"ovn.kubernetes.io/logical_switch": LEGIT_SUBNET,
                                   "ovn.kubernetes.io/ip_pool": pool_of("10.7", 20_000, start=20)})),
        ("deployments", deployment("warm-pool", {"ovn.kubernetes.io/logical_switch": LEGIT_SUBNET,
                                                 "ovn.kubernetes.io/ip_pool": pool_of("10.7", 20_000, start=20)},
                                   replicas=20_000)),
    ]


# The adversarial requests' shapes: (name, the object of request i, named
# adv-<i>, from its random numbers and the largest pods' attachments).
SMALL_SHAPES = [
    ("invented-subnet", lambda i, rng, a: pod(f"adv-{i}", {
        "ovn.kubernetes.io/logical_switch": f"x{i}", "ovn.kubernetes.io/ip_address": address(rng, "10.1")})),
    ("invented-pool", lambda i, rng, a: pod(f"adv-{i}", {"ovn.kubernetes.io/ip_pool": f"pool-x{i}"})),
    # No subnet named: the tenant's namespace's (REAL_SUBNET's spec.namespaces).
    ("namespace-subnet", lambda i, rng, a: pod(f"adv-{i}", {"ovn.kubernetes.io/ip_address": address(rng, "10.8")})),
    ("invented-nad", lambda i, rng, a: pod(f"adv-{i}", {
        "k8s.v1.cni.cncf.io/networks": f"nsx{i}/nad{i}",
        f"nad{i}.nsx{i}.ovn.kubernetes.io/ip_address": address(rng, "10.2"),
        f"nad{i}.nsx{i}.ovn.kubernetes.io/logical_switch": f"x{i}",
        f"nad{i}.nsx{i}.ovn.kubernetes.io/ip_pool": f"pool-x{i}"})),
    ("deployment-invented-pool", lambda i, rng, a: deployment(f"adv-{i}", {"ovn.kubernetes.io/ip_pool": f"pool-x{i}"})),
    ("deployment-pool-invented-subnet", lambda i, rng, a: deployment(f"adv-{i}", {
        "ovn.kubernetes.io/logical_switch": f"x{i}",
        "ovn.kubernetes.io/ip_pool": ",".join(address(rng, "10.3") for _ in range(20))})),
    ("attachments-10", lambda i, rng, a: pod(f"adv-{i}", attachments(i, 10, rng, lambda j: f"s{i}-{j}", pools=i % 2 == 1))),
    # Random addresses in a real subnet, inside its record of what is in use and past it.
    ("real-subnet-random-address", lambda i, rng, a: pod(f"adv-{i}", {
        "ovn.kubernetes.io/logical_switch": REAL_SUBNET,
        "ovn.kubernetes.io/ip_address": f"10.8.2.{rng.randrange(1, 2 * USED)}"})),
    ("real-pool", lambda i, rng, a: pod(f"adv-{i}", {"ovn.kubernetes.io/ip_pool": REAL_POOL})),
    ("deployment-real-pool", lambda i, rng, a: deployment(f"adv-{i}", {"ovn.kubernetes.io/ip_pool": REAL_POOL})),
    ("legit-subnet-random-address", lambda i, rng, a: pod(f"adv-{i}", {
        "ovn.kubernetes.io/logical_switch": LEGIT_SUBNET, "ovn.kubernetes.io/ip_address": address(rng, "10.7")})),
]
BIG_SHAPES = [
    ("attachments", lambda i, rng, a: pod(f"adv-{i}", attachments(i, a, rng, lambda j: f"s{i}-{j}"))),
    ("attachment-pools", lambda i, rng, a: pod(f"adv-{i}", attachments(i, a, rng, lambda j: f"s{i}-{j}", pools=True))),
    ("pool-20000-invented-subnet", lambda i, rng, a: pod(f"adv-{i}", {
        "ovn.kubernetes.io/logical_switch": f"x{i}", "ovn.kubernetes.io/ip_pool": pool_of("10.5", 20_000)})),
    ("pool-20000-real-subnet", lambda i, rng, a: deployment(f"adv-{i}", {
        "ovn.kubernetes.io/logical_switch": REAL_SUBNET,
        "ovn.kubernetes.io/ip_pool": pool_of("10.8", 20_000, start=3)}, replicas=20_000)),
]


def nics(i, n, subnet_name, address_of):
    """n attachment NICs `a<j>.h<i>.kubernetes.io/…` in subnet_name, NIC j asking for address_of(j)."""
    annotations = {}
    for j in range(n):
        annotations[f"a{j}.h{i}.kubernetes.io/ip_address"] = address_of(j)
        annotations[f"a{j}.h{i}.kubernetes.io/logical_switch"] = subnet_name
    return annotations


# CONTRACT §4's heaviest pods, at the NIC cap and just under it: every NIC
# naming an invented subnet (the IP list read for them), the real subnet's
# record and pools (free addresses), or the heavy subnet's record (in use,
# no IP object: the pod's own IP object asked for by name, once a NIC); and
# one NIC over the cap (refused before any lookup).
HEAVY_SHAPES = [
    shape
    for n in (NIC_CAP, NIC_CAP - 1)
    for shape in (
        (f"cap{n}-invented-subnets", lambda i, rng, n=n: pod(f"heavy-{i}", attachments(i, n, rng, lambda j: f"h{i}-{j}"))),
        (f"cap{n}-record-and-pools", lambda i, rng, n=n: pod(f"heavy-{i}", nics(i, n, REAL_SUBNET, lambda j: f"10.8.3.{j + 1}"))),
        (f"cap{n}-own-ip-objects", lambda i, rng, n=n: pod(f"heavy-{i}", nics(i, n, HEAVY_SUBNET, lambda j: f"10.6.1.{j + 1}"))),
    )
] + [("cap-exceeded", lambda i, rng: pod(f"heavy-{i}", nics(i, NIC_CAP + 1, HEAVY_SUBNET, lambda j: f"10.6.1.{j + 1}")))]


def adversarial(i, attached, big_every):
    """The i-th adversarial request: (plural, object, shape). The small
    shapes in turn; every big_every-th request one of the large ones."""
    if big_every and i % big_every == big_every - 1:
        shape, make = BIG_SHAPES[(i // big_every) % len(BIG_SHAPES)]
    else:
        shape, make = SMALL_SHAPES[i % len(SMALL_SHAPES)]
    obj = make(i, random.Random(i), attached)
    if annotations_size(obj) > ANNOTATIONS_MAX:
        raise ValueError(f"request {i} ({shape}): {annotations_size(obj)} bytes of annotations, more than the API server takes")
    plural = "pods" if obj["kind"] == "Pod" else "deployments"
    return plural, obj, shape


def annotations_size(obj):
    meta = obj["metadata"] if obj["kind"] == "Pod" else obj["spec"]["template"]["metadata"]
    return sum(len(k) + len(v) for k, v in meta.get("annotations", {}).items())


# --- the watches -------------------------------------------------------------


def watched_list(request_uri):
    """A watch's list: (collection path, labelSelector, fieldSelector)."""
    parts = urllib.parse.urlsplit(request_uri)
    query = urllib.parse.parse_qs(parts.query)
    return parts.path, (query.get("labelSelector") or [None])[0], (query.get("fieldSelector") or [None])[0]


def narrowed_to(listed):
    """What a list is narrowed to: None for a whole kind, else the path of
    the object that must exist for the list to be bounded by what exists,
    or "" when its selector is no name of anything."""
    path, label, field = listed
    segments = path.strip("/").split("/")
    namespace = segments[-2] if len(segments) >= 2 and segments[-3:-2] == ["namespaces"] else None
    if label in KIND_WIDE_LABELS and field is None:
        return resource_path("v1", "namespaces", name=namespace) if namespace else None
    if label is None and field and field.startswith("metadata.name=") and "," not in field:
        return f"{path}/{field.split('=')[-1]}"
    if field is None and label and path.endswith("/ips"):
        key, _, value = label.replace("==", "=").partition("=")
        if key == SUBNET_LABEL and value and "," not in value:
            return resource_path("kubeovn.io/v1", "subnets", name=value)
    return ""


def describe(listed):
    path, label, field = listed
    return path + "".join(f" {k}={v}" for k, v in (("labelSelector", label), ("fieldSelector", field)) if v)


# --- the test ----------------------------------------------------------------


def memory(proc):
    """(VmRSS, VmHWM) of a running process in KiB; NaN once it has ended."""
    values = {}
    try:
        for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines():
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                values[key] = int(rest.split()[0])
    except OSError:
        pass
    return values.get("VmRSS", float("nan")), values.get("VmHWM", float("nan"))


def settled_memory(proc, seconds=2.0):
    """(VmRSS, VmHWM) once the attack has paused: the least RSS over a few
    seconds, not what a large request in flight holds for a moment."""
    samples = []
    deadline = time.monotonic() + seconds
    while True:
        samples.append(memory(proc))
        if time.monotonic() >= deadline:
            break
        time.sleep(0.2)
    return min(rss for rss, _ in samples), samples[-1][1]


def answered(got, webhook):
    """Admitted, or denied by the webhook with its own 400 or 403."""
    return got["allowed"] or (got["webhook"] == webhook and got["code"] in (400, 403))


def send(api, plural, obj, timeout=30):
    started = time.monotonic()
    path = resource_path("v1" if plural == "pods" else "apps/v1", plural, TENANT_NAMESPACE)
    try:
        code, body, warnings = api.request("POST", path, obj, params={"dryRun": "All"}, timeout=timeout)
        got = outcome(code, body, warnings)
    except (OSError, http.client.HTTPException) as e:  # the client's own timeout, a connection lost
        got = {"allowed": False, "code": None, "message": None, "webhook": None, "raw": f"no answer: {e}"}
    return got, (time.monotonic() - started) * 1000


def legitimate_client(kubeconfig, rng, n, stop, during, failed):
    """A legitimate static-IP pod every LEGIT_EVERY until `stop`, pods `legit-<n>` on:
    each time into `during`, each refusal into `failed`."""
    api = Api(kubeconfig, keep_alive=True)
    while not stop.wait(LEGIT_EVERY):
        got, ms = send(api, *legitimate(n, rng))
        during.append(ms)
        if not got["allowed"]:
            failed.append(got["raw"])
        n += 1


def run(suite, audit, webhook):
    """The test; `suite` is test_cluster's Suite, `audit` an AuditCounter of the policy-server's watches."""
    args, cp = suite.args, suite.cp
    suite.replayer.reset()
    suite.replayer.ensure_namespace(TENANT_NAMESPACE)
    for obj in real_objects():
        suite.replayer.create(obj)
    for obj in tenant_rbac():
        suite.apply(obj)
    kubeconfig = cp.service_account_kubeconfig(TENANT_NAMESPACE, TENANT, suite.folder / "tenant.kubeconfig")
    tenant = Api(kubeconfig, keep_alive=True)
    code, body, _ = tenant.request("POST", resource_path("v1", "pods", "default"), pod("x", {}, "default"), params={"dryRun": "All"})
    suite.check("adversary: the tenant may not create pods outside its namespace", code == 403,
                f"{code} {body.get('message') if isinstance(body, dict) else body}")
    code, body, _ = tenant.request("POST", resource_path("kubeovn.io/v1", "subnets"),
                                   subnet("mine", "10.9.0.0/16", "10.9.0.1", ""), params={"dryRun": "All"})
    suite.check("adversary: the tenant may not create Subnets", code == 403, str(code))

    # A fresh server: only its own watches, from now on.
    suite.server.stop()
    deadline = time.monotonic() + 20
    while audit.open_watches() and time.monotonic() < deadline:
        time.sleep(0.2)
    left = audit.open_watches()
    suite.server.start()
    suite.wait_for_webhooks()
    time.sleep(1)
    before = Counter(watched_list(u) for u in audit.open_watches())
    mark = len(audit.watches_started())
    # The warm-up: legitimate requests of every size, then one adversarial
    # request of each shape (its lists are judged with the attack's).
    rng = random.Random(0)
    warm = [answered(send(tenant, *r)[0], webhook) for r in warm_up_requests(args.adversary_attachments)]
    suite.check("adversary: legitimate requests of every size are admitted or denied by the webhook",
                all(warm), f"{warm}; {len(left)} watches of the stopped server still open")
    shapes = [adversarial(i, args.adversary_attachments, big_every)
              for big_every, n in ((0, len(SMALL_SHAPES)), (1, len(BIG_SHAPES))) for i in range(n)]
    warm = [answered(send(tenant, plural, obj)[0], webhook) for plural, obj, _ in shapes]
    suite.check(f"adversary: one adversarial request of each shape ({len(shapes)}) is answered",
                all(warm), f"{warm}")
    # The large shapes again, as many at once as the attack sends, so that
    # every worker and several connections meet them.
    big = shapes[len(SMALL_SHAPES):]
    with ThreadPoolExecutor(args.adversary_clients + 1) as threads:
        for plural, obj, _ in big:
            list(threads.map(lambda _: send(Api(kubeconfig), plural, obj), range(args.adversary_clients + 1)))
    for n in range(10):
        send(tenant, *legitimate(n, rng))
    baseline, legit_failed = [], []
    for n in range(args.adversary_baseline):
        time.sleep(LEGIT_EVERY)
        got, ms = send(tenant, *legitimate(100 + n, rng))
        baseline.append(ms)
        if not got["allowed"]:
            legit_failed.append(got["raw"])
    time.sleep(1)  # let any watch the warm-up opened show in the log
    warmed = Counter(watched_list(u) for u in audit.open_watches())
    rss_start, _ = settled_memory(suite.server.proc)

    # The attack, from processes of its own (niced: the attackers stand for
    # clients elsewhere, so their own CPU should not slow the servers), and
    # the legitimate client beside it, in this process.
    total, seconds, clients = args.adversary_requests, args.adversary_seconds, args.adversary_clients
    stop = threading.Event()
    during = []

    legit = threading.Thread(target=legitimate_client, args=(kubeconfig, rng, 1000, stop, during, legit_failed),
                             daemon=True)
    started = time.monotonic()
    rate = args.adversary_rate / clients if args.adversary_rate else 0
    # After the warm-up's names, so that every name the attack gives is new.
    first = len(SMALL_SHAPES) + len(BIG_SHAPES)
    warm_n = total // 2 if args.adversary_warm is None else min(args.adversary_warm, total)
    results = []
    with ProcessPoolExecutor(clients, mp_context=multiprocessing.get_context("spawn")) as pool:
        legit.start()
        for start, end in ((first, first + warm_n), (first + warm_n, first + total)):
            shares = [pool.submit(attacker, kubeconfig, range(start + k, end, clients), started + seconds, rate,
                                  args.adversary_attachments, args.adversary_big_every, webhook)
                      for k in range(clients)]
            results += [share.result() for share in shares]
            if start == first:
                # The attack's first half has met every worker and connection
                # with each shape many times: what large requests leave (the
                # module's linear memory, the allocator's arenas: kop-serve
                # grows by about 18 MiB over the first few thousand requests
                # with bounded lookups, then stays) is reached, and RSS is
                # measured from here. State kept per name grows on.
                rss_warm, hwm_warm = settled_memory(suite.server.proc)
    attack_s = time.monotonic() - started
    stop.set()
    legit.join(timeout=40)
    sent = sum((r[0] for r in results), Counter())
    second = sum(sum(r[0].values()) for r in results[clients:])
    failures = [f for r in results for f in r[1]]
    time.sleep(1)
    after = Counter(watched_list(u) for u in audit.open_watches())
    # Every list a watch was started for since the restart, open or ended
    # (a server that died has none open).
    opened = {watched_list(u) for u in audit.watches_started(mark)} | set(before)
    rss_after, hwm_after = settled_memory(suite.server.proc)

    # The lists opened, each judged; the count.
    names = {}  # collection path: the names of its objects (one LIST each)

    def exists(target):
        collection, _, name = target.rpartition("/")
        if collection not in names:
            code, body, _ = suite.api.request("GET", collection)
            names[collection] = {o["metadata"]["name"] for o in body.get("items", [])} if code == 200 else set()
        return name in names[collection]

    offenders, other, kind_wide, real = judge(opened - set(before), exists)
    # policy-server opens a second watch of a list when two evaluations ask
    # for it before its first has filled (client.rs `get_reflector_reader`
    # holds no lock between looking and inserting; the replaced reflector's
    # task runs on): at most one per worker.
    workers = suite.server.workers
    doubled = sorted(f"{describe(k)} x{n}" for k, n in after.items() if n > 1)
    too_many = [f"{describe(k)} x{n}" for k, n in after.items() if n > workers]
    lists_before, lists_after = len(before), len(opened)
    closed = sorted(describe(k) for k in opened - set(after))
    possible = len(named_real_lists() - set(before))
    requests = sum(sent.values())
    p50_base = statistics.median(baseline)
    p50_during = statistics.median(during) if during else float("inf")
    figures = (f"adversary: {requests} requests in {attack_s:.0f} s ({requests / attack_s:.0f}/s, {len(failures)} "
               f"unanswered); watches {sum(before.values())} at start, {sum(warmed.values())} warmed, "
               f"{sum(after.values())} after; lists {lists_before} -> {len(warmed)} -> "
               f"{lists_after} watched, {len(after)} still ({len(kind_wide)} kind-wide new, {len(real)} narrowed to named real objects, "
               f"{len(offenders)} not bounded by what exists); RSS {rss_start / 1024:.1f} MiB warmed, "
               f"{rss_warm / 1024:.1f} after the attack's first {warm_n}, {rss_after / 1024:.1f} after (HWM "
               f"{hwm_warm / 1024:.1f} -> {hwm_after / 1024:.1f}); legitimate p50 {p50_base:.1f} ms "
               f"alone, {p50_during:.1f} ms during ({len(during)} sent)")
    print(f"# {figures}", flush=True)
    suite.notes.append(figures)
    suite.notes.append("adversary shapes: " + ", ".join(f"{k} {v}" for k, v in sorted(sent.items())))
    if len(opened) <= 20:
        suite.notes.append(f"adversary: lists watched: {', '.join(sorted(describe(k) for k in opened))}")
    if doubled:
        suite.notes.append(f"adversary: lists watched more than once: {', '.join(doubled[:10])}")
    shown = 20
    suite.check("adversary: every watch opened is kind-wide or narrowed to an object that exists",
                not offenders, f"{len(offenders)} lists: " + "; ".join(offenders[:shown])
                + (f"; … {len(offenders) - shown} more" if len(offenders) > shown else ""))
    suite.check("adversary: lists after = before + new kind-wide lists + the named real objects' lists not watched before, all kept",
                lists_after == lists_before + len(kind_wide) + len(real) and len(real) <= possible and not closed,
                f"{lists_before} before, {lists_after} after, {len(kind_wide)} kind-wide new, {len(real)} narrowed "
                f"to named real objects (of {possible} possible); other narrowed: {other[:5]}; "
                f"{len(closed)} no longer watched: {closed[:5]}")
    suite.check(f"adversary: no list is watched more than once per worker ({workers})", not too_many,
                "; ".join(too_many[:shown]))
    exited = suite.server.proc.poll()
    suite.check("adversary: the server is still running", exited is None,
                f"exited with {exited}: {suite.server.log.read_text(errors='replace')[-500:]}")
    suite.check(f"adversary: the serving process's RSS grows by 5 MiB at most over the attack's second half "
                f"(at least {min(SECOND_HALF_MIN, total - warm_n)} requests)",
                rss_after - rss_warm <= RSS_GROWTH_MAX_KIB and second >= min(SECOND_HALF_MIN, total - warm_n),
                f"{rss_warm} KiB -> {rss_after} KiB (+{(rss_after - rss_warm) / 1024:.1f} MiB) over {second} requests")
    suite.check("adversary: the serving process's RSS grows by 64 MiB at most over the whole attack",
                rss_after - rss_start <= RSS_ATTACK_MAX_KIB,
                f"{rss_start} KiB -> {rss_after} KiB (+{(rss_after - rss_start) / 1024:.1f} MiB)")
    suite.check("adversary: legitimate p50 during the attack is within 2x of its p50 without",
                p50_during <= 2 * p50_base, f"{p50_base:.1f} ms -> {p50_during:.1f} ms")
    suite.check("adversary: every adversarial request is answered (admitted, or denied with 400 or 403)",
                not failures and requests > 0, f"{len(failures)} of {requests}: " + "; ".join(failures[:5]))
    suite.check("adversary: every legitimate request is admitted", not legit_failed,
                f"{len(legit_failed)}: " + "; ".join(legit_failed[:3]))
    # A busy machine may not send them all in time: what was sent is judged,
    # the first half and enough of the second for its RSS reading at least.
    wanted = min(total, warm_n + SECOND_HALF_MIN)
    suite.check(f"adversary: at least {wanted} of the {total} requests asked for were sent", requests >= wanted,
                f"{requests} of {total} within {seconds:.0f} s")
    heavy_burst(suite, kubeconfig, webhook, p50_base)


SLOW = re.compile(r"kop-serve: slow evaluation: request \S+ took (\d+) ms")


def heavy_burst(suite, kubeconfig, webhook, p50_base):
    """CONTRACT §4: BURSTS bursts of BURST of the heaviest requests at once
    (HEAVY_SHAPES in turn), beside the legitimate client; every one answered
    (the over-the-cap one with 400), legitimate p50 within 2x of its p50
    without, no legitimate request refused, and no evaluation of a second or
    more on the server's side: kop-serve logs every evaluation of 100 ms or
    more (`slow evaluation`); policy-server logs none, so with it the
    slowest end-to-end time is reported and no bound is checked."""
    rng = random.Random(7)
    log_from = suite.server.log.stat().st_size
    stop = threading.Event()
    during, legit_failed = [], []

    def heavy(i):
        shape, make = HEAVY_SHAPES[i % len(HEAVY_SHAPES)]
        got, ms = send(Api(kubeconfig), "pods", make(i, random.Random(i)))
        over = shape == "cap-exceeded"
        ok = (got["webhook"] == webhook and got["code"] == 400) if over else answered(got, webhook)
        return shape, ok, ms, got["raw"][:200]

    legit = threading.Thread(target=legitimate_client, args=(kubeconfig, rng, 50_000, stop, during, legit_failed),
                             daemon=True)
    legit.start()
    results = []
    started = time.monotonic()
    with ThreadPoolExecutor(BURST) as threads:
        for b in range(BURSTS):
            results += list(threads.map(heavy, range(b * BURST, (b + 1) * BURST)))
            time.sleep(LEGIT_EVERY * 4)
    took = time.monotonic() - started
    stop.set()
    legit.join(timeout=40)
    slow = [int(ms) for ms in SLOW.findall(suite.server.log.read_bytes()[log_from:].decode(errors="replace"))]
    kop_serve = suite.server.log.name.startswith("kop-serve")
    p50 = statistics.median(during) if during else float("inf")
    slowest = max(ms for _, _, ms, _ in results)
    failed = [f"{shape} ({ms:.0f} ms): {raw}" for shape, ok, ms, raw in results if not ok]
    figures = (f"adversary heavy: {len(results)} requests at and under the NIC cap ({NIC_CAP}), {BURST} at once, "
               f"in {took:.1f} s; slowest end to end {slowest:.0f} ms; "
               + (f"server side: {len(slow)} evaluations of 100 ms or more, the longest {max(slow, default=0)} ms; "
                  if kop_serve else "server side: not logged by policy-server; ")
               + f"legitimate p50 {p50_base:.1f} ms alone, {p50:.1f} ms beside them ({len(during)} sent)")
    print(f"# {figures}", flush=True)
    suite.notes.append(figures)
    suite.check("adversary heavy: every request at the NIC cap answered, the one over it refused with 400",
                not failed, f"{len(failed)} of {len(results)}: " + "; ".join(failed[:3]))
    suite.check("adversary heavy: legitimate p50 beside them within 2x of its p50 without",
                p50 <= 2 * p50_base, f"{p50_base:.1f} ms -> {p50:.1f} ms")
    suite.check("adversary heavy: every legitimate request beside them admitted", not legit_failed,
                f"{len(legit_failed)}: " + "; ".join(legit_failed[:3]))
    if kop_serve:
        suite.check("adversary heavy: no evaluation took a second or more (kop-serve's log)",
                    all(ms < 1000 for ms in slow), f"{sorted(slow)[-5:]}")


def judge(opened, exists):
    """The lists opened, judged: (not bounded by what exists, narrowed to
    an existing object the attack did not name, kind-wide, narrowed to a
    real object the attack named); each list described."""
    offenders, other, kind_wide, real = [], [], [], []
    for listed in sorted(opened, key=describe):
        target = narrowed_to(listed)
        if target is None or listed in FIXED_LISTS:
            kind_wide.append(describe(listed))
        elif not (target and exists(target)):
            offenders.append(describe(listed))
        elif listed in named_real_lists():
            real.append(describe(listed))
        else:
            other.append(describe(listed))
    return offenders, other, kind_wide, real


def attacker(kubeconfig, indices, deadline, rate, attached, big_every, webhook):
    """One adversarial client, in a process of its own: the requests of
    `indices` in turn, `rate` a second at most, until the deadline (of
    time.monotonic(), which every process shares); (requests by shape, the
    unanswered ones)."""
    os.nice(10)
    api = Api(kubeconfig, keep_alive=True)
    started = time.monotonic()
    sent, failures = Counter(), []
    for n, i in enumerate(indices):
        if time.monotonic() >= deadline:
            break
        if rate:
            time.sleep(max(0.0, started + n / rate - time.monotonic()))
        plural, obj, shape = adversarial(i, attached, big_every)
        got, ms = send(api, plural, obj)
        sent[shape] += 1
        if not answered(got, webhook):
            failures.append(f"#{i} {shape} ({ms:.0f} ms): {got['raw'][:300]}")
    return sent, failures
