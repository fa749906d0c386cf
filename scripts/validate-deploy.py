#!/usr/bin/env python3
"""Validate every manifest in deploy/ offline, against Kubewarden 1.37.

    python3 scripts/validate-deploy.py        (or: make validate-deploy)

1. Schemas. Each document is validated by its kind:
   - ClusterAdmissionPolicy and PolicyServer: the v1 openAPIV3Schema of
     Kubewarden 1.37.2's CRDs (admission-controller chart 6.0.2), read from
     $KUBEWARDEN_SCHEMAS (default ../shared/kubewarden beside the checkout:
     crds/*.yaml and admission-controller-values.schema.json), strictly: a
     field the schema does not know is an error, as `kubectl apply`
     (server-side field validation, Strict by default) reports it;
   - built-in kinds (ServiceAccount, PriorityClass, RBAC,
     ValidatingAdmissionPolicy and its binding): the Kubernetes
     JSON schemas shipped by the PyPI package kubernetes-validate, strictly,
     for Kubernetes 1.30 (the oldest release the policies support) and 1.37;
   - deploy/admission-controller-values.yaml: the chart's values.schema.json
     (what `helm install` checks), plus the keys the schema does not list
     (Helm ignores those silently).
2. What no schema can say, read from the same files: each policy runs on a
   PolicyServer defined here, with the module and the lookups metadata.yml
   declares; no policy skips objects by a label a tenant can set; the
   policy-server's ServiceAccount is granted exactly the verbs its lookups
   need (LOOKUPS below, from src/k8s/cluster/), no more; the audit scanner
   may list every kubeovn.io kind it replays; the PolicyServer is highly
   available, and a ValidatingAdmissionPolicy bound with Deny keeps every
   namespaced AdmissionPolicy and AdmissionPolicyGroup (each version the
   CRDs serve) off it, while its ClusterAdmissionPolicies stay allowed;
   and every host call recorded in test_data/session_*.yml is one LOOKUPS
   allows.

Exit status 0 when everything holds; 1 with one line per problem otherwise;
2 when a validator is missing (pip install jsonschema pyyaml kubernetes-validate);
3, with one `SKIPPED:` line, when Kubewarden's schemas are not where
$KUBEWARDEN_SCHEMAS points: nothing was checked.

    python3 scripts/validate-deploy.py --self-test

runs the validator on copies of deploy/ with one known mistake each (a
misspelt field, a wrong type, a verb too many, a missing grant, a tenant
label skip, ...) and fails unless each copy is refused for that mistake.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    import jsonschema
    import yaml
except ImportError as e:
    print(f"validate-deploy: {e.name} is missing: pip install jsonschema pyyaml", file=sys.stderr)
    sys.exit(2)

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
# Kubewarden's CRDs and chart values schema are data of another project:
# read in place, never copied in. The CRDs are in crds/ there.
SCHEMAS = Path(os.environ.get("KUBEWARDEN_SCHEMAS") or ROOT.parent / "shared" / "kubewarden").resolve()
SCHEMA_FILES = [
    "crds/policies.kubewarden.io_clusteradmissionpolicies.yaml",
    "crds/policies.kubewarden.io_policyservers.yaml",
    "admission-controller-values.schema.json",
]
VALUES = DEPLOY / "admission-controller-values.yaml"
KUBERNETES_VERSIONS = ["1.30.0", "1.37.0"]

# Kubewarden's namespace and the audit scanner's ServiceAccount, as the
# admission-controller chart installs them (README, Install).
KUBEWARDEN_NAMESPACE = "kubewarden"
AUDIT_SCANNER_SA = "audit-scanner"

# What the policy looks up, from its own table (src/k8s/kinds.rs, written
# out as kinds.json), by (apiVersion, kind): its plural, and how: "get" is a
# get_resource (an API GET: verb get), "list" a list_resources_all (a watch
# cache: verbs list and watch). A lookup that is confined to names in one
# namespace says so, and is granted through a Role with resourceNames there.
LOOKUPS = {
    (k["apiVersion"], k["kind"]): (k["plural"], set(k["lookups"]))
    + ((k["namespace"], set(k["names"])) if k["namespace"] else ())
    for k in json.loads((ROOT / "kinds.json").read_text())
    if k["lookups"]
}
VERBS = {"get": {"get"}, "list": {"list", "watch"}}

# Label keys only the API server sets: a namespaceSelector on them cannot be
# met or dodged by a tenant.
TRUSTED_NAMESPACE_LABELS = {"kubernetes.io/metadata.name"}

problems = []


def problem(where, what):
    problems.append(f"{where}: {what}")


def load_documents(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def where(path, doc):
    meta = doc.get("metadata") or {}
    name = meta.get("name", "?")
    if meta.get("namespace"):
        name = f"{meta['namespace']}/{name}"
    return f"{path.relative_to(ROOT)}: {doc.get('kind', '?')} {name}"


# --- 1. schemas ---------------------------------------------------------


def structural_to_jsonschema(node):
    """A Kubernetes structural schema as JSON Schema (draft 4), strict.

    nullable becomes a null type, int-or-string an anyOf, and an object
    with properties (and no preserve-unknown-fields) refuses other keys, as
    the API server's strict field validation does. Nothing else changes.
    """
    if isinstance(node, list):
        return [structural_to_jsonschema(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: structural_to_jsonschema(v) for k, v in node.items() if not k.startswith("x-kubernetes-") and k != "nullable"}
    if node.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    if node.get("nullable") and "type" in out:
        out["type"] = [out["type"], "null"]
    if (
        "properties" in node
        and "additionalProperties" not in node
        and not node.get("x-kubernetes-preserve-unknown-fields")
    ):
        out["additionalProperties"] = False
    return out


def crd_validators():
    validators = {}
    for path in sorted((SCHEMAS / "crds").glob("policies.kubewarden.io_*.yaml")):
        crd = yaml.safe_load(path.read_text())
        group = crd["spec"]["group"]
        kind = crd["spec"]["names"]["kind"]
        for version in crd["spec"]["versions"]:
            schema = structural_to_jsonschema(version["schema"]["openAPIV3Schema"])
            jsonschema.Draft4Validator.check_schema(schema)
            validators[(f"{group}/{version['name']}", kind)] = (
                jsonschema.Draft4Validator(schema),
                crd["spec"]["scope"],
            )
    return validators


def error_path(error):
    return ".".join(str(p) for p in error.absolute_path) or "(top)"


def validate_custom(path, doc, validator, scope):
    here = where(path, doc)
    for error in sorted(validator.iter_errors(doc), key=lambda e: list(map(str, e.absolute_path))):
        problem(here, f"{error_path(error)}: {error.message}")
    meta = doc.get("metadata") or {}
    if not meta.get("name"):
        problem(here, "metadata.name is missing")
    if scope == "Cluster" and "namespace" in meta:
        problem(here, "a cluster-scoped object has metadata.namespace")


def validate_builtin(path, doc):
    try:
        import kubernetes_validate
    except ImportError:
        print("validate-deploy: kubernetes-validate is missing: pip install kubernetes-validate", file=sys.stderr)
        sys.exit(2)
    here = where(path, doc)
    for version in KUBERNETES_VERSIONS:
        try:
            kubernetes_validate.validate(doc, version, strict=True)
        except kubernetes_validate.ValidationError as e:
            problem(here, f"Kubernetes {version}: {error_path(e)}: {e.message}")
        except kubernetes_validate.SchemaNotFoundError:
            problem(here, f"Kubernetes {version} has no {doc.get('apiVersion')} {doc.get('kind')}")


def unknown_keys(values, schema, prefix=""):
    """Keys of `values` that the schema does not describe (Helm drops them)."""
    props = schema.get("properties")
    if not isinstance(values, dict) or props is None:
        return []
    out = []
    for key, value in values.items():
        name = f"{prefix}{key}"
        if key not in props:
            out.append(name)
        else:
            out.extend(unknown_keys(value, props[key], name + "."))
    return out


def validate_values():
    schema = json.loads((SCHEMAS / "admission-controller-values.schema.json").read_text())
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    values = yaml.safe_load(VALUES.read_text()) or {}
    here = str(VALUES.relative_to(ROOT))
    for error in cls(schema).iter_errors(values):
        problem(here, f"{error_path(error)}: {error.message}")
    for key in unknown_keys(values, schema):
        problem(here, f"{key}: not a value of the admission-controller chart")
    return values


# --- 2. what the schemas cannot say --------------------------------------


def metadata():
    return yaml.safe_load((ROOT / "metadata.yml").read_text())


def kinds_of(items):
    return {(r.get("apiVersion"), r.get("kind")) for r in items or []}


def subject_matches(subject, sa_namespace, sa_name):
    return (
        subject.get("kind") == "ServiceAccount"
        and subject.get("name") == sa_name
        and subject.get("namespace", "") == sa_namespace
    )


def grants(docs, sa_namespace, sa_name):
    """What the ServiceAccount may do: {(group, resource, verb, namespace, name)}.

    namespace is "*" for a ClusterRoleBinding, name "*" without resourceNames.
    """
    roles = {}
    for _, doc in docs:
        if doc.get("kind") in ("ClusterRole", "Role"):
            meta = doc["metadata"]
            roles[(doc["kind"], meta.get("namespace", ""), meta["name"])] = doc.get("rules") or []
    out = set()
    for _, doc in docs:
        kind = doc.get("kind")
        if kind not in ("ClusterRoleBinding", "RoleBinding"):
            continue
        if not any(subject_matches(s, sa_namespace, sa_name) for s in doc.get("subjects") or []):
            continue
        ref = doc["roleRef"]
        namespace = "*" if kind == "ClusterRoleBinding" else doc["metadata"].get("namespace", "")
        role_ns = "" if ref["kind"] == "ClusterRole" else doc["metadata"].get("namespace", "")
        for rule in roles.get((ref["kind"], role_ns, ref["name"]), []):
            names = rule.get("resourceNames") or ["*"]
            for group in rule.get("apiGroups") or []:
                for resource in rule.get("resources") or []:
                    for verb in rule.get("verbs") or []:
                        for name in names:
                            out.add((group, resource, verb, namespace, name))
    return out


def expected_grants(api_version, kind):
    entry = LOOKUPS[(api_version, kind)]
    plural, how = entry[0], entry[1]
    namespace, names = (entry[2], entry[3]) if len(entry) > 2 else ("*", {"*"})
    group = api_version.rsplit("/", 1)[0] if "/" in api_version else ""
    return {
        (group, plural, verb, namespace, name)
        for way in how
        for verb in VERBS[way]
        for name in names
    }


def check_policies(docs, meta):
    declared = kinds_of(meta.get("contextAwareResources"))
    if declared != set(LOOKUPS):
        problem("metadata.yml", f"contextAwareResources {sorted(declared)} are not the kinds the policy looks up "
                f"(kinds.json): {sorted(LOOKUPS)}")
    annotations = meta.get("annotations") or {}
    module = f"registry://{annotations['io.kubewarden.policy.ociUrl']}:v{annotations['io.kubewarden.policy.version']}"
    servers = {doc["metadata"]["name"]: doc for _, doc in docs if doc.get("kind") == "PolicyServer"}
    used_kinds = set()
    replayed = set()
    for path, doc in docs:
        if doc.get("kind") != "ClusterAdmissionPolicy":
            continue
        here = where(path, doc)
        spec = doc.get("spec") or {}
        if spec.get("module") != module:
            problem(here, f"module {spec.get('module')!r} is not {module!r} (metadata.yml)")
        server = spec.get("policyServer", "default")
        if server not in servers:
            problem(here, f"policyServer {server!r} is not defined in deploy/")
        kinds = kinds_of(spec.get("contextAwareResources"))
        for extra in sorted(kinds - declared):
            problem(here, f"contextAwareResources {extra} is not declared in metadata.yml")
        used_kinds |= kinds
        if spec.get("objectSelector"):
            problem(here, "objectSelector: labels are set by whoever writes the object, a tenant too")
        selector = spec.get("namespaceSelector") or {}
        if selector.get("matchLabels"):
            problem(here, "namespaceSelector.matchLabels is dropped by the Kubewarden controller (it merges matchExpressions only)")
        for expression in selector.get("matchExpressions") or []:
            if expression.get("key") not in TRUSTED_NAMESPACE_LABELS:
                problem(here, f"namespaceSelector on {expression.get('key')!r}, a label namespace owners may be able to set")
        if spec.get("backgroundAudit", True):
            for rule in spec.get("rules") or []:
                if "CREATE" in (rule.get("operations") or []):
                    for group in rule.get("apiGroups") or []:
                        for resource in rule.get("resources") or []:
                            replayed.add((group, resource))
    unused = sorted(k for k in declared - used_kinds)
    if unused:
        problem("deploy/", f"no policy lists these declared lookups in contextAwareResources: {unused}")
    return servers, used_kinds, replayed


def check_policy_servers(docs, servers, used_kinds):
    defined = {(doc.get("kind"), (doc.get("metadata") or {}).get("namespace", ""), doc["metadata"]["name"]) for _, doc in docs}
    for name, server in servers.items():
        path = next(p for p, d in docs if d is server)
        here = where(path, server)
        spec = server.get("spec") or {}
        replicas = spec.get("replicas")
        if not isinstance(replicas, int) or replicas < 2:
            problem(here, "replicas < 2: one pod is a single point of failure for fail-closed policies")
        if spec.get("minAvailable") is None and spec.get("maxUnavailable") is None:
            problem(here, "neither minAvailable nor maxUnavailable: no PodDisruptionBudget")
        priority = spec.get("priorityClassName")
        if not priority:
            problem(here, "no priorityClassName")
        elif not priority.startswith("system-") and ("PriorityClass", "", priority) not in defined:
            problem(here, f"PriorityClass {priority!r} is not defined in deploy/")
        env = {e.get("name"): e.get("value") for e in spec.get("env") or []}
        for variable, value in RUNTIME_ENV.items():
            if env.get(variable) != value:
                problem(here, f"env {variable}={env.get(variable)!r}, not {value!r}: docs/stall.md, "
                        "What an operator can do")
        sa = spec.get("serviceAccountName")
        if not sa or ("ServiceAccount", KUBEWARDEN_NAMESPACE, sa) not in defined:
            problem(here, f"ServiceAccount {KUBEWARDEN_NAMESPACE}/{sa} is not defined in deploy/")
            continue
        granted = grants(docs, KUBEWARDEN_NAMESPACE, sa)
        wanted = set()
        for api_version, kind in sorted(used_kinds):
            if (api_version, kind) not in LOOKUPS:
                problem(here, f"no LOOKUPS entry for {api_version} {kind} in scripts/validate-deploy.py")
                continue
            need = expected_grants(api_version, kind)
            wanted |= need
            for missing in sorted(need - granted):
                problem(here, f"ServiceAccount {sa} lacks {missing} for {kind} lookups")
        for extra in sorted(granted - wanted):
            problem(here, f"ServiceAccount {sa} is granted {extra}, which no lookup needs")


# The policy-server's environment as docs/stall.md decides it: one thread
# for its async runtime, which keeps a new watch cache's first LIST from
# being lost (measured there, with its cost).
RUNTIME_ENV = {"TOKIO_WORKER_THREADS": "1"}


# The namespaced kinds that can name a PolicyServer: any namespace user
# with RBAC on them could place a policy on the fail-closed server.
NAMESPACED_POLICY_KINDS = ("admissionpolicies", "admissionpolicygroups")
CLUSTER_POLICY_KINDS = ("clusteradmissionpolicies", "clusteradmissionpolicygroups")
POLICY_GROUP = "policies.kubewarden.io"


def served_versions(plural):
    """The versions of policies.kubewarden.io/<plural> that Kubewarden's CRD serves."""
    crd = yaml.safe_load((SCHEMAS / "crds" / f"{POLICY_GROUP}_{plural}.yaml").read_text())
    return {v["name"] for v in crd["spec"]["versions"] if v.get("served")}


def covers(values, wanted):
    values = values or []
    return "*" in values or wanted in values


def check_guard(docs, servers):
    """Each PolicyServer of deploy/ is kept from namespaced policies by a bound ValidatingAdmissionPolicy."""
    policies = {doc["metadata"]["name"]: (path, doc) for path, doc in docs if doc.get("kind") == "ValidatingAdmissionPolicy"}
    bindings = [(path, doc) for path, doc in docs if doc.get("kind") == "ValidatingAdmissionPolicyBinding"]
    for path, binding in bindings:
        here = where(path, binding)
        spec = binding.get("spec") or {}
        if spec.get("policyName") not in policies:
            problem(here, f"policyName {spec.get('policyName')!r} is not a ValidatingAdmissionPolicy of deploy/")
        if "Deny" not in (spec.get("validationActions") or []):
            problem(here, f"validationActions {spec.get('validationActions')} do not Deny: the guard only warns or audits")
        if spec.get("matchResources"):
            problem(here, "matchResources narrows the guard to some namespaces or objects: a tenant's may be left out")
    bound = {(b.get("spec") or {}).get("policyName") for _, b in bindings
             if "Deny" in ((b.get("spec") or {}).get("validationActions") or [])}
    for server in sorted(servers):
        guards = []
        for name, (path, vap) in sorted(policies.items()):
            spec = vap.get("spec") or {}
            expressions = [v.get("expression", "") for v in (spec.get("variables") or []) + (spec.get("validations") or [])]
            if any(f"'{server}'" in e or f'"{server}"' in e for e in expressions):
                guards.append((name, path, vap))
        if not guards:
            problem("deploy/", f"no ValidatingAdmissionPolicy keeps namespaced policies off PolicyServer {server!r}")
        for name, path, vap in guards:
            here = where(path, vap)
            spec = vap.get("spec") or {}
            if name not in bound:
                problem(here, "no ValidatingAdmissionPolicyBinding with validationActions Deny binds it")
            if spec.get("failurePolicy", "Fail") != "Fail":
                problem(here, f"failurePolicy {spec['failurePolicy']}: an expression that errors lets the policy through")
            rules = ((spec.get("matchConstraints") or {}).get("resourceRules")) or []
            for plural in NAMESPACED_POLICY_KINDS:
                for version in sorted(served_versions(plural)):
                    for operation in ("CREATE", "UPDATE"):
                        if not any(covers(r.get("apiGroups"), POLICY_GROUP) and covers(r.get("apiVersions"), version)
                                   and covers(r.get("resources"), plural) and covers(r.get("operations"), operation)
                                   for r in rules):
                            problem(here, f"does not match {operation} of {POLICY_GROUP}/{version} {plural}")
            for plural in CLUSTER_POLICY_KINDS:
                if any(covers(r.get("apiGroups"), POLICY_GROUP) and covers(r.get("resources"), plural) for r in rules):
                    problem(here, f"matches {plural}: deploy/'s own policies on {server!r} would be refused")


def check_audit(docs, replayed):
    granted = grants(docs, KUBEWARDEN_NAMESPACE, AUDIT_SCANNER_SA)
    # The chart binds the audit scanner to the `view` ClusterRole, which
    # covers the core, apps and batch kinds but no kubeovn.io kind.
    for group, resource in sorted(replayed):
        if group == "kubeovn.io" and (group, resource, "list", "*", "*") not in granted:
            problem("deploy/", f"the audit scanner replays {group}/{resource} but may not list it")


def check_sessions():
    allowed = set()
    for (api_version, kind), entry in LOOKUPS.items():
        for way in entry[1]:
            allowed.add((way, api_version, kind))
    operations = {"KubernetesGetResource": "get", "KubernetesListResourceAll": "list"}
    for path in sorted((ROOT / "test_data").glob("session_*.yml")):
        for exchange in yaml.safe_load(path.read_text()) or []:
            text = exchange.get("request", "")
            tag, _, body = text.partition("\n")
            request = yaml.safe_load(body) or {}
            way = operations.get(tag.strip().lstrip("!"))
            key = (way, request.get("api_version"), request.get("kind"))
            if way is None or key not in allowed:
                problem(str(path.relative_to(ROOT)), f"host call {tag.strip()} {request.get('api_version')} {request.get('kind')} is not in LOOKUPS")


def schemas_present():
    """Whether Kubewarden's schemas are there; one SKIPPED: line if not."""
    missing = [f for f in SCHEMA_FILES if not (SCHEMAS / f).is_file()]
    if missing:
        print(
            f"SKIPPED: validate-deploy: Kubewarden's schemas not found ({SCHEMAS}/{missing[0]}): "
            "set KUBEWARDEN_SCHEMAS to a folder holding crds/ from Kubewarden's helm-charts "
            "(tag admission-controller-6.0.2, charts/admission-controller/templates/crds/) "
            "and that chart's values.schema.json as admission-controller-values.schema.json"
        )
        return False
    return True


def main():
    if not schemas_present():
        sys.exit(3)
    validators = crd_validators()
    docs = []
    counts = {}
    # kustomization.yaml is kustomize's, not an object (e2e-cluster applies it).
    for path in sorted(DEPLOY.glob("*.yaml")):
        if path == VALUES or path.name == "kustomization.yaml":
            continue
        for doc in load_documents(path):
            docs.append((path, doc))
            key = (doc.get("apiVersion"), doc.get("kind"))
            counts[key[1]] = counts.get(key[1], 0) + 1
            if key in validators:
                validate_custom(path, doc, *validators[key])
            elif (doc.get("apiVersion") or "").startswith("policies.kubewarden.io/"):
                problem(where(path, doc), f"no schema for this kind in {SCHEMAS}/crds")
            else:
                validate_builtin(path, doc)
    validate_values()
    meta = metadata()
    servers, used_kinds, replayed = check_policies(docs, meta)
    check_policy_servers(docs, servers, used_kinds)
    check_guard(docs, servers)
    check_audit(docs, replayed)
    check_sessions()

    summary = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
    for line in problems:
        print(line)
    if problems:
        print(f"validate-deploy: {len(problems)} problem(s) in {summary} and {VALUES.name}")
        sys.exit(1)
    print(f"validate-deploy: {summary} and {VALUES.name} valid "
          f"(Kubewarden 1.37 CRDs, admission-controller 6.0.2 values schema, Kubernetes {' and '.join(KUBERNETES_VERSIONS)})")


# (file, text, replacement, what the validator must then report)
MISTAKES = [
    ("metadata.yml", "  - apiVersion: kubeovn.io/v1\n    kind: QoSPolicy\n", "",
     "are not the kinds the policy looks up"),
    ("deploy/cluster-admission-policies.yaml", "timeoutEvalSeconds: 8", "timeoutEvalSecond: 8",
     "'timeoutEvalSecond' was unexpected"),
    ("deploy/cluster-admission-policies.yaml", "timeoutSeconds: 10", "timeoutSeconds: 60",
     "greater than the maximum of 30"),
    ("deploy/cluster-admission-policies.yaml", "mode: protect", "mode: enforce",
     "'enforce' is not one of"),
    ("deploy/cluster-admission-policies.yaml", "  namespaceSelector:",
     "  objectSelector:\n    matchLabels: {component: network}\n  namespaceSelector:",
     "objectSelector: labels are set by whoever writes the object"),
    ("deploy/cluster-admission-policies.yaml", "policyServer: kube-ovn", "policyServer: kube-ovm",
     "policyServer 'kube-ovm' is not defined"),
    ("deploy/policy-server.yaml", "replicas: 3", "replicas: \"3\"", "'3' is not of type 'integer'"),
    ("deploy/policy-server.yaml", "minAvailable: 2", "minAvailble: 2", "'minAvailble' was unexpected"),
    ("deploy/policy-server.yaml", 'TOKIO_WORKER_THREADS\n      value: "1"', 'TOKIO_WORKER_THREADS\n      value: "2"',
     "env TOKIO_WORKER_THREADS='2', not '1'"),
    ("deploy/policy-server.yaml", "preemptionPolicy: PreemptLowerPriority", "preemptionPolicy: 7",
     "Kubernetes 1.30.0: preemptionPolicy: 7 is not of type"),
    ("deploy/admission-controller-values.yaml", "reportCRDsKind", "reportCrdsKind",
     "auditScanner.reportCrdsKind: not a value of the admission-controller chart"),
    ("deploy/admission-controller-values.yaml", "enable: true", "enable: yes-please",
     "'yes-please' is not of type 'boolean'"),
    ("deploy/policy-server.yaml", 'resources: ["admissionpolicies", "admissionpolicygroups"]',
     'resources: ["admissionpolicies"]', "does not match CREATE of policies.kubewarden.io/v1 admissionpolicygroups"),
    ("deploy/policy-server.yaml", 'apiVersions: ["*"]', 'apiVersions: ["v1"]',
     "does not match CREATE of policies.kubewarden.io/v1alpha2 admissionpolicies"),
    ("deploy/policy-server.yaml", 'operations: ["CREATE", "UPDATE"]', 'operations: ["CREATE"]',
     "does not match UPDATE of policies.kubewarden.io/v1 admissionpolicies"),
    ("deploy/policy-server.yaml", '"admissionpolicies", "admissionpolicygroups"]',
     '"admissionpolicies", "admissionpolicygroups", "clusteradmissionpolicies"]',
     "matches clusteradmissionpolicies: deploy/'s own policies on 'kube-ovn' would be refused"),
    ("deploy/policy-server.yaml", 'validationActions: ["Deny"]', 'validationActions: ["Warn"]',
     "validationActions ['Warn'] do not Deny"),
    ("deploy/policy-server.yaml", "  policyName: kube-ovn-policy-server-guard", "  policyName: kube-ovn-policy-server-gaurd",
     "policyName 'kube-ovn-policy-server-gaurd' is not a ValidatingAdmissionPolicy of deploy/"),
    ("deploy/policy-server.yaml", "object.spec.policyServer == 'kube-ovn'", "object.spec.policyServer == 'kube-ovm'",
     "no ValidatingAdmissionPolicy keeps namespaced policies off PolicyServer 'kube-ovn'"),
    ("deploy/policy-server.yaml", "  failurePolicy: Fail", "  failurePolicy: Ignore",
     "failurePolicy Ignore: an expression that errors lets the policy through"),
    ("deploy/policy-server.yaml", "  validationActions:", "  validationAction:",
     "Kubernetes 1.30.0: spec: Additional properties are not allowed ('validationAction' was unexpected)"),
    ("deploy/rbac.yaml", 'resources: ["ovn-eips", "qos-policies"]\n    verbs: ["get"]',
     'resources: ["ovn-eips", "qos-policies"]\n    verbs: ["get", "list"]',
     "('kubeovn.io', 'ovn-eips', 'list', '*', '*'), which no lookup needs"),
    ("deploy/rbac.yaml", 'resourceNames: ["ovn-vpc-nat-config", ', "resourceNames: [",
     "lacks ('', 'configmaps', 'get', 'kube-system', 'ovn-vpc-nat-config')"),
    ("deploy/rbac.yaml", "      - ovn-fips\n    verbs: [\"list\"]", '    verbs: ["list"]',
     "the audit scanner replays kubeovn.io/ovn-fips but may not list it"),
]


def self_test():
    if not schemas_present():
        sys.exit(3)
    failures = 0
    for file, old, new, expected in MISTAKES:
        with tempfile.TemporaryDirectory() as tmp:
            for part in ("scripts", "deploy", "test_data"):
                shutil.copytree(ROOT / part, Path(tmp) / part)
            shutil.copy(ROOT / "metadata.yml", tmp)
            shutil.copy(ROOT / "kinds.json", tmp)
            target = Path(tmp) / file
            text = target.read_text()
            if old not in text:
                print(f"self-test: {file} no longer contains {old!r}")
                failures += 1
                continue
            target.write_text(text.replace(old, new, 1))
            run = subprocess.run(
                [sys.executable, str(Path(tmp) / "scripts" / "validate-deploy.py")],
                capture_output=True, text=True, env=dict(os.environ, KUBEWARDEN_SCHEMAS=str(SCHEMAS)),
            )
            if run.returncode != 1 or expected not in run.stdout:
                print(f"self-test: {file}: {new!r} was not refused with {expected!r}:\n{run.stdout}{run.stderr}")
                failures += 1
    print(f"validate-deploy self-test: {len(MISTAKES) - failures} passed, {failures} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        self_test()
    main()
