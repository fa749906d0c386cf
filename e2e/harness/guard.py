"""Who may use the PolicyServer `kube-ovn`: deploy/policy-server.yaml's guard on a real API server.

The ValidatingAdmissionPolicy `kube-ovn-policy-server-guard` and its binding
refuse every namespaced AdmissionPolicy and AdmissionPolicyGroup naming
`policyServer: kube-ovn` (docs/operations.md, Who may use the PolicyServer).
check(suite) runs, with deploy/ applied as shipped:
- a tenant (a ServiceAccount with a token, allowed by a Role to write
  AdmissionPolicies and AdmissionPolicyGroups in its own namespace) is
  refused on kube-ovn, at every served version, and allowed elsewhere;
- its UPDATE (PUT or merge patch) moving a policy onto kube-ovn is refused;
- a cluster admin's ClusterAdmissionPolicy and ClusterAdmissionPolicyGroup on
  kube-ovn are created, its namespaced policies on kube-ovn are refused;
- a policy put on kube-ovn before the guard: its spec may no longer change,
  its labels may, and its deletion completes (the finalizer removed as the
  Kubewarden controller removes it).
Every outcome is asserted exactly: HTTP code and the Status message.

Used by e2e/suites/test_cluster.py (`-k guard`).
"""

import time

from . import DEPLOY
from .kubeapi import Api

MANIFEST = DEPLOY / "policy-server.yaml"
GUARD = "kube-ovn-policy-server-guard"
# The validation's message in deploy/policy-server.yaml, as a tenant reads it.
MESSAGE = (
    "policyServer kube-ovn is reserved for cluster-wide policies: its webhooks fail closed for Kube-OVN's "
    "network, so no namespaced AdmissionPolicy or AdmissionPolicyGroup may share its workers; "
    "choose another policyServer"
)
GROUP = "policies.kubewarden.io"
TENANT_NAMESPACE = "policy-tenant"
TENANT = "policy-author"
MODULE = "registry://ghcr.io/kubewarden/policies/pod-privileged:v1.0.13"
RULES = [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}]
ACTIVE_WITHIN_S = 30


def denied(plural, name):
    """The API server's Status message for a request the guard refuses."""
    return (f'{plural}.{GROUP} "{name}" is forbidden: ValidatingAdmissionPolicy \'{GUARD}\' '
            f"with binding '{GUARD}' denied request: {MESSAGE}")


def admission_policy(name, server, version="v1", namespace=TENANT_NAMESPACE, **meta):
    spec = {"module": MODULE, "rules": RULES, "mutating": False, "settings": {}}
    if server is not None:
        spec["policyServer"] = server
    return {"apiVersion": f"{GROUP}/{version}", "kind": "AdmissionPolicy",
            "metadata": {"name": name, "namespace": namespace, **meta}, "spec": spec}


def admission_policy_group(name, server, namespace=TENANT_NAMESPACE):
    return {"apiVersion": f"{GROUP}/v1", "kind": "AdmissionPolicyGroup",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"policyServer": server, "rules": RULES, "expression": "privileged()",
                     "message": "privileged pods are refused", "policies": {"privileged": {"module": MODULE}}}}


def cluster_admission_policy(name, server):
    return {"apiVersion": f"{GROUP}/v1", "kind": "ClusterAdmissionPolicy", "metadata": {"name": name},
            "spec": {"policyServer": server, "module": MODULE, "rules": RULES, "mutating": False, "settings": {}}}


def cluster_admission_policy_group(name, server):
    group = admission_policy_group(name, server)
    group["kind"] = "ClusterAdmissionPolicyGroup"
    del group["metadata"]["namespace"]
    return group


def plural(kind):
    return {"AdmissionPolicy": "admissionpolicies", "AdmissionPolicyGroup": "admissionpolicygroups",
            "ClusterAdmissionPolicy": "clusteradmissionpolicies",
            "ClusterAdmissionPolicyGroup": "clusteradmissionpolicygroups"}[kind]


def path_of(obj, name=None):
    """The collection path of obj, or the object's own with `name`."""
    namespace = obj["metadata"].get("namespace")
    path = f"/apis/{obj['apiVersion']}" + (f"/namespaces/{namespace}" if namespace else "") + f"/{plural(obj['kind'])}"
    return f"{path}/{name}" if name else path


def message(body):
    return body.get("message", "") if isinstance(body, dict) else str(body)


class Guard:
    def __init__(self, suite):
        self.suite, self.admin = suite, suite.api
        self.created = []

    def expect(self, what, got, code, text=None):
        """got is (code, body, warnings); text None: any message (a success)."""
        status, body, _ = got
        ok = status == code and (text is None or message(body) == text)
        detail = f"HTTP {status}" + (f": {message(body)}" if status >= 400 else "")
        return self.suite.check(f"guard: {what}", ok, detail)

    def create(self, api, obj, **kw):
        got = api.request("POST", path_of(obj), obj, **kw)
        if got[0] in (200, 201) and not kw.get("params"):
            self.created.append(obj)
        return got

    def probe(self):
        """A cluster admin's dry-run AdmissionPolicy on kube-ovn: (code, message)."""
        got = self.admin.request("POST", path_of(admission_policy("guard-probe", "kube-ovn")),
                                 admission_policy("guard-probe", "kube-ovn"), params={"dryRun": "All"})
        return got[0], message(got[1])

    def wait(self, active):
        """Until the API server enforces the guard (active) or no longer does: the probe's answer.

        A new or deleted binding reaches the admission plugin through its
        informers, a moment after the write.
        """
        started = time.monotonic()
        while True:
            code, text = self.probe()
            if (code == 403 and text == denied("admissionpolicies", "guard-probe")) if active else code == 201:
                return time.monotonic() - started
            if time.monotonic() - started > ACTIVE_WITHIN_S:
                raise RuntimeError(f"guard {'not active' if active else 'still active'} after {ACTIVE_WITHIN_S} s: "
                                   f"the probe got {code} {text}")
            time.sleep(0.1)

    def tenant(self):
        """An Api authenticated as the tenant's ServiceAccount, allowed to write policies in its namespace."""
        kubeconfig = self.suite.folder / "tenant.kubeconfig"
        self.suite.cp.service_account_kubeconfig(TENANT_NAMESPACE, TENANT, kubeconfig)
        for obj in (
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
             "metadata": {"name": "policy-author", "namespace": TENANT_NAMESPACE},
             "rules": [{"apiGroups": [GROUP], "resources": ["admissionpolicies", "admissionpolicygroups"],
                        "verbs": ["create", "get", "list", "watch", "update", "patch", "delete"]}]},
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
             "metadata": {"name": "policy-author", "namespace": TENANT_NAMESPACE},
             "subjects": [{"kind": "ServiceAccount", "name": TENANT, "namespace": TENANT_NAMESPACE}],
             "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "policy-author"}},
        ):
            self.suite.apply(obj)
        return Api(kubeconfig)

    def run(self):
        suite = self.suite
        tenant = self.tenant()  # its namespace first: the probe is a policy there
        try:
            waited = self.wait(active=True)
        except RuntimeError as e:
            suite.check("guard: deploy/'s guard is enforced", False, str(e))
            return
        suite.notes.append(f"guard: enforced {waited:.1f} s after the tenant's namespace was made")

        # (a) the tenant, on kube-ovn: refused, at each version the CRDs serve.
        for version in ("v1", "v1alpha2"):
            name = f"on-kube-ovn-{version}"
            got = self.create(tenant, admission_policy(name, "kube-ovn", version))
            self.expect(f"a tenant's AdmissionPolicy ({version}) on kube-ovn is refused",
                        got, 403, denied("admissionpolicies", name))
        suite.notes.append(f"guard: a tenant's AdmissionPolicy on kube-ovn: HTTP {got[0]}: {message(got[1])}")
        # (b) elsewhere: created; without policyServer the CRD's default is `default`.
        self.expect("a tenant's AdmissionPolicy on default is created",
                    self.create(tenant, admission_policy("on-default", "default")), 201)
        got = self.create(tenant, admission_policy("no-server", None))
        self.expect("a tenant's AdmissionPolicy naming no policyServer is created", got, 201)
        server = got[1].get("spec", {}).get("policyServer") if got[0] == 201 else None
        suite.check("guard: ... and its policyServer is the CRD's default, `default`", server == "default", str(server))
        # (c) AdmissionPolicyGroup.
        self.expect("a tenant's AdmissionPolicyGroup on kube-ovn is refused",
                    self.create(tenant, admission_policy_group("group-on-kube-ovn", "kube-ovn")),
                    403, denied("admissionpolicygroups", "group-on-kube-ovn"))
        self.expect("a tenant's AdmissionPolicyGroup on default is created",
                    self.create(tenant, admission_policy_group("group-on-default", "default")), 201)
        # (d) UPDATE moving a policy onto kube-ovn, as PUT and as a merge patch.
        path = path_of(admission_policy("on-default", "default"), "on-default")
        _, current, _ = tenant.request("GET", path)
        current["spec"]["policyServer"] = "kube-ovn"
        self.expect("a tenant's PUT moving its AdmissionPolicy to kube-ovn is refused",
                    tenant.request("PUT", path, current), 403, denied("admissionpolicies", "on-default"))
        self.expect("a tenant's merge patch moving its AdmissionPolicy to kube-ovn is refused",
                    tenant.request("PATCH", path, {"spec": {"policyServer": "kube-ovn"}},
                                   content_type="application/merge-patch+json"),
                    403, denied("admissionpolicies", "on-default"))
        _, after, _ = tenant.request("GET", path)
        suite.check("guard: ... and the policy is still on default", after["spec"]["policyServer"] == "default",
                    after["spec"]["policyServer"])
        self.expect("a tenant's merge patch moving its AdmissionPolicyGroup to kube-ovn is refused",
                    tenant.request("PATCH", path_of(admission_policy_group("g", "default"), "group-on-default"),
                                   {"spec": {"policyServer": "kube-ovn"}}, content_type="application/merge-patch+json"),
                    403, denied("admissionpolicygroups", "group-on-default"))
        # (e) a cluster admin's cluster-wide policies on kube-ovn: created.
        self.expect("a cluster admin's ClusterAdmissionPolicy on kube-ovn is created",
                    self.create(self.admin, cluster_admission_policy("guard-cluster-policy", "kube-ovn")), 201)
        self.expect("a cluster admin's ClusterAdmissionPolicyGroup on kube-ovn is created",
                    self.create(self.admin, cluster_admission_policy_group("guard-cluster-group", "kube-ovn")), 201)
        # (f) a cluster admin's namespaced policies on kube-ovn: refused as a tenant's.
        self.expect("a cluster admin's AdmissionPolicy on kube-ovn is refused",
                    self.create(self.admin, admission_policy("admin-on-kube-ovn", "kube-ovn")),
                    403, denied("admissionpolicies", "admin-on-kube-ovn"))
        self.expect("a cluster admin's AdmissionPolicyGroup on kube-ovn is refused",
                    self.create(self.admin, admission_policy_group("admin-group-on-kube-ovn", "kube-ovn")),
                    403, denied("admissionpolicygroups", "admin-group-on-kube-ovn"))
        self.before_the_guard(tenant)
        for obj in reversed(self.created):
            self.admin.request("DELETE", path_of(obj, obj["metadata"]["name"]))

    def before_the_guard(self, tenant):
        """A policy on kube-ovn from before the guard: frozen spec, labels and deletion still work."""
        suite = self.suite
        binding = f"/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings/{GUARD}"
        code, body, _ = self.admin.request("DELETE", binding)
        if code != 200:
            raise RuntimeError(f"deleting the guard's binding: {code} {message(body)}")
        try:
            self.wait(active=False)
            old = admission_policy("before-the-guard", "kube-ovn", finalizers=["kubewarden.io/finalizer"])
            code, body, _ = self.admin.request("POST", path_of(old), old)
            if code != 201:
                raise RuntimeError(f"creating a policy without the guard: {code} {message(body)}")
        finally:
            applied = suite.kubectl("apply", "--server-side", "-f", str(MANIFEST))
            if applied.returncode != 0:
                raise RuntimeError(f"re-applying {MANIFEST.name}: {applied.stderr}")
        waited = self.wait(active=True)
        suite.notes.append(f"guard: binding re-applied, enforced {waited:.1f} s later")
        path = path_of(old, "before-the-guard")
        merge = "application/merge-patch+json"
        self.expect("a tenant's spec change of a policy on kube-ovn from before the guard is refused",
                    tenant.request("PATCH", path, {"spec": {"module": MODULE.replace("v1.0.13", "v1.0.10")}},
                                   content_type=merge),
                    403, denied("admissionpolicies", "before-the-guard"))
        self.expect("a tenant's label on that policy is accepted (its spec unchanged)",
                    tenant.request("PATCH", path, {"metadata": {"labels": {"team": "a"}}}, content_type=merge), 200)
        self.expect("the tenant may delete it", tenant.request("DELETE", path), 200)
        code, body, _ = self.admin.request("GET", path)
        suite.check("guard: ... which waits for the controller's finalizer",
                    code == 200 and bool(body["metadata"].get("deletionTimestamp")), f"HTTP {code}")
        self.expect("removing the finalizer, as the Kubewarden controller does, is accepted",
                    self.admin.request("PATCH", path, {"metadata": {"finalizers": None}}, content_type=merge), 200)
        code, _, _ = self.admin.request("GET", path)
        suite.check("guard: ... and the policy is gone", code == 404, f"HTTP {code}")


def check(suite):
    """Every guard check, counted by the suite."""
    Guard(suite).run()
