"""What Kubewarden's controller makes of a ClusterAdmissionPolicy.

For each ClusterAdmissionPolicy bound to a PolicyServer, the controller
(kubewarden-controller 1.37; read at 3460bb71, v1.36.0-beta.1, whose CRDs
equal 1.37.2's but for one description) writes two things:

- an entry of `policies.yml` in the PolicyServer's ConfigMap, which the
  policy-server loads: `render_policies_yml`, `dump_policies_yml`;
- a ValidatingWebhookConfiguration (a MutatingWebhookConfiguration for a
  `mutating: true` policy) that sends the API server's requests to the
  policy-server: `render_webhook`.

Both are rendered from the policy as the API server stores it, so the
CRD's defaults are applied first (`with_crd_defaults`). Where the
controller leaves a webhook field unset, the API server defaults it when
the object is created; `render_webhook(..., apiserver_defaults=True)` gives
the object as a GET returns it. docs/webhooks.md lists every rule and the
Go source it comes from. Our own code: nothing here is copied from
Kubewarden. Only the standard library and PyYAML are used.

    python3 -m e2e.harness.webhooks deploy/*.yaml            # the webhooks, as YAML
    python3 -m e2e.harness.webhooks --policies-yml deploy/*.yaml
"""

import argparse
import base64
import copy
import json
import sys
from pathlib import Path

import yaml

# internal/constants/constants.go: PolicyServerServicePort, the port of the
# policy-server's Service that every webhook's clientConfig names.
POLICY_SERVER_SERVICE_PORT = 443
# internal/constants/constants.go: PartOfLabelKey / PartOfLabelValue and the
# two WebhookConfigurationPolicy*AnnotationKey.
PART_OF_LABEL = ("app.kubernetes.io/part-of", "kubewarden")
POLICY_NAME_ANNOTATION = "kubewardenPolicyName"
POLICY_NAMESPACE_ANNOTATION = "kubewardenPolicyNamespace"
# cmd/controller/main.go reads --deployments-namespace: the chart's release
# namespace, where every PolicyServer's Service lives (`kubewarden` in
# deploy/admission-controller-values.yaml's install command).
DEFAULT_NAMESPACE = "kubewarden"

# The CRD's defaults for a ClusterAdmissionPolicy's spec
# (policies.kubewarden.io_clusteradmissionpolicies.yaml, v1: the
# +kubebuilder:default markers of api/policies/v1/policy_types.go), which the
# API server applies when it stores the object. The controller's mutating
# webhook also turns an empty policyServer into "default"
# (api/policies/v1/clusteradmissionpolicy_webhook.go, Default).
CRD_DEFAULTS = {"policyServer": "default", "mode": "protect", "backgroundAudit": True, "timeoutSeconds": 10}
# Spec fields the CRD declares nullable: a null there is kept; any other
# null is pruned by the API server before defaulting, as if absent.
NULLABLE = {"settings"}


def policy_id(policy):
    """The policy's id: `clusterwide-<name>` (GetUniqueName in
    api/policies/v1/clusteradmissionpolicy_types.go). It names the webhook
    configuration, the policies.yml entry and the path /validate/<id>."""
    return "clusterwide-" + policy["metadata"]["name"]


def with_crd_defaults(policy):
    """A copy of the policy as the API server stores it: nulls of non-nullable
    fields dropped, then the CRD's defaults (and the controller's defaulting
    webhook) applied where a field is absent."""
    policy = copy.deepcopy(policy)
    spec = policy.setdefault("spec", {}) or {}
    policy["spec"] = spec
    for key in [k for k, v in spec.items() if v is None and k not in NULLABLE]:
        del spec[key]
    for key, value in CRD_DEFAULTS.items():
        spec.setdefault(key, value)
    if spec["policyServer"] == "":
        spec["policyServer"] = CRD_DEFAULTS["policyServer"]
    return policy


def load_cluster_admission_policies(paths):
    """Every ClusterAdmissionPolicy document of these YAML files, in file and
    document order, as written (no defaults); other documents are skipped."""
    policies = []
    for path in paths:
        for doc in yaml.safe_load_all(Path(path).read_text()):
            if (
                isinstance(doc, dict)
                and doc.get("kind") == "ClusterAdmissionPolicy"
                and str(doc.get("apiVersion", "")).startswith("policies.kubewarden.io/")
            ):
                policies.append(doc)
    return policies


# The controller copies these fields through Go types (k8s.io/api
# admissionregistration/v1, apimachinery meta/v1): unknown keys are lost and
# the `omitempty` ones vanish when empty. These helpers do the same.


def _strings(values):
    return [str(v) for v in values]


def _label_selector(selector):
    """A metav1.LabelSelector as Go serialises it."""
    out = {}
    if selector.get("matchLabels"):
        out["matchLabels"] = {str(k): str(v) for k, v in selector["matchLabels"].items()}
    if selector.get("matchExpressions"):
        out["matchExpressions"] = [_requirement(r) for r in selector["matchExpressions"]]
    return out


def _requirement(req):
    out = {"key": req.get("key", ""), "operator": req.get("operator", "")}
    if req.get("values"):
        out["values"] = _strings(req["values"])
    return out


def _rule(rule):
    """An admissionregistration/v1 RuleWithOperations as Go serialises it."""
    out = {}
    for key in ("operations", "apiGroups", "apiVersions", "resources"):
        if rule.get(key):
            out[key] = _strings(rule[key])
    if rule.get("scope") is not None:
        out["scope"] = rule["scope"]
    return out


def _match_condition(cond):
    return {"name": cond.get("name", ""), "expression": cond.get("expression", "")}


def _ca_bundle(ca_bundle):
    """caBundle as the API's JSON carries it: base64 of the PEM. PEM text or
    bytes are encoded; any other string is taken as base64 already."""
    if isinstance(ca_bundle, (bytes, bytearray)):
        return base64.b64encode(bytes(ca_bundle)).decode()
    if ca_bundle.lstrip().startswith("-----BEGIN"):
        return base64.b64encode(ca_bundle.encode()).decode()
    base64.b64decode(ca_bundle, validate=True)  # refuses what is neither
    return ca_bundle


def namespace_selector(spec, namespace):
    """The webhook's namespaceSelector (namespaceSelector in
    internal/controller/policy_subreconciler_webhook.go).

    A cluster-wide policy never reaches Kubewarden's own namespace: the
    controller starts from `kubernetes.io/metadata.name NotIn [<namespace>]`
    and appends the policy's matchExpressions. Only its matchExpressions:
    a policy's matchLabels are dropped. With allowInsideAdmissionControllerNamespace
    the policy's selector is used as it is (None: no selector at all)."""
    own = spec.get("namespaceSelector")
    if spec.get("allowInsideAdmissionControllerNamespace"):
        return None if own is None else _label_selector(own)
    expressions = [{"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": [namespace]}]
    if own is not None:
        expressions += [_requirement(r) for r in own.get("matchExpressions") or []]
    return {"matchExpressions": expressions}


def render_webhook(
    policy,
    *,
    namespace=DEFAULT_NAMESPACE,
    service_name=None,
    port=POLICY_SERVER_SERVICE_PORT,
    ca_bundle=None,
    url=None,
    match_conditions=True,
    apiserver_defaults=False,
):
    """The webhook configuration the controller creates for a
    ClusterAdmissionPolicy document (reconcileValidatingWebhookConfiguration /
    reconcileMutatingWebhookConfiguration in
    internal/controller/policy_subreconciler_webhook.go).

    namespace: the controller's --deployments-namespace, where the
    policy-server's Service lives and which the namespaceSelector excludes.
    service_name: default `policy-server-<spec.policyServer>`
    (PolicyServer.NameWithPrefix). port: the Service's port, 443.
    ca_bundle: the CA's PEM (the controller takes `ca.crt` of Secret
    kubewarden-ca); None leaves caBundle out.
    url: a policy-server reached directly (e.g. https://127.0.0.1:8443)
    instead of through a Service; a URL without a path gets the
    controller's path /validate/<id>.
    match_conditions: the controller copies matchConditions only when the
    API server's OpenAPI schema of ValidatingWebhook has the field
    (internal/featuregates); False renders it for an API server without.
    apiserver_defaults: add what the API server fills in when it stores the
    object (SetDefaults_* in kubernetes pkg/apis/admissionregistration/v1/
    defaults.go), i.e. the webhook as read back.
    """
    policy = with_crd_defaults(policy)
    spec = policy["spec"]
    pid = policy_id(policy)
    path = "/validate/" + pid
    if url is None:
        client_config = {
            "service": {
                "namespace": namespace,
                "name": service_name or "policy-server-" + spec["policyServer"],
                "path": path,
                "port": port,
            }
        }
    else:
        base = url.rstrip("/")
        has_path = "/" in base.split("://", 1)[-1]
        client_config = {"url": url if has_path else base + path}
    if ca_bundle is not None:
        client_config["caBundle"] = _ca_bundle(ca_bundle)

    webhook = {"name": pid + ".kubewarden.admission", "clientConfig": client_config}
    rules = [_rule(r) for r in spec.get("rules") or []]
    if rules:
        webhook["rules"] = rules
    # failurePolicy and matchPolicy: the policy's, or unset (the API server
    # then stores Fail and Equivalent).
    for key in ("failurePolicy", "matchPolicy"):
        if spec.get(key) is not None:
            webhook[key] = spec[key]
    selector = namespace_selector(spec, namespace)
    if selector is not None:
        webhook["namespaceSelector"] = selector
    if spec.get("objectSelector") is not None:
        webhook["objectSelector"] = _label_selector(spec["objectSelector"])
    # sideEffects: the policy's, else None (set by the controller itself).
    webhook["sideEffects"] = spec.get("sideEffects") or "None"
    # timeoutSeconds: the policy's, defaulted to 10 by the CRD.
    webhook["timeoutSeconds"] = spec["timeoutSeconds"]
    webhook["admissionReviewVersions"] = ["v1"]
    conditions = [_match_condition(c) for c in spec.get("matchConditions") or []]
    if match_conditions and conditions:
        webhook["matchConditions"] = conditions

    mutating = bool(spec.get("mutating"))
    if apiserver_defaults:
        webhook.setdefault("failurePolicy", "Fail")
        webhook.setdefault("matchPolicy", "Equivalent")
        webhook.setdefault("namespaceSelector", {})
        webhook.setdefault("objectSelector", {})
        for rule in webhook.get("rules", []):
            rule.setdefault("scope", "*")
        if mutating:
            webhook.setdefault("reinvocationPolicy", "Never")

    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration" if mutating else "ValidatingWebhookConfiguration",
        "metadata": {
            "name": pid,
            "labels": {PART_OF_LABEL[0]: PART_OF_LABEL[1]},
            # A ClusterAdmissionPolicy has no namespace: the annotation is
            # there, empty.
            "annotations": {
                POLICY_NAME_ANNOTATION: policy["metadata"]["name"],
                POLICY_NAMESPACE_ANNOTATION: policy["metadata"].get("namespace", ""),
            },
        },
        "webhooks": [webhook],
    }


def _sorted_keys(value):
    """A JSON value with every object's keys sorted, as the API server
    returns a custom resource's free-form fields (settings)."""
    if isinstance(value, dict):
        return {k: _sorted_keys(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted_keys(v) for v in value]
    return value


def render_policies_yml(policies, module_url=None, *, policy_server=None):
    """The policies.yml mapping the controller writes into the PolicyServer's
    ConfigMap (`policy-server-<name>`, key policies.yml) for these
    ClusterAdmissionPolicy documents (buildPoliciesMap and
    policyServerConfigEntry.MarshalJSON in
    internal/controller/policyserver_controller_configmap.go).

    module_url replaces every policy's module (tests run a local file:
    `file:///…/annotated-policy.wasm`); None keeps spec.module.
    policy_server keeps only the policies bound to that PolicyServer (the
    controller lists them by spec.policyServer); None keeps all.
    Keys are in the order Go writes them: ids sorted, fields as declared.
    """
    entries = {}
    for policy in policies:
        policy = with_crd_defaults(policy)
        spec = policy["spec"]
        if policy_server is not None and spec["policyServer"] != policy_server:
            continue
        entry = {
            # types.NamespacedName has no json tags: its keys are the Go
            # field names.
            "namespacedName": {"Namespace": policy["metadata"].get("namespace", ""), "Name": policy["metadata"]["name"]},
            "module": module_url if module_url is not None else spec.get("module", ""),
            "policyMode": spec["mode"],
            "allowedToMutate": bool(spec.get("mutating", False)),
        }
        resources = [{"apiVersion": r.get("apiVersion", ""), "kind": r.get("kind", "")}
                     for r in spec.get("contextAwareResources") or []]
        if resources:
            entry["contextAwareResources"] = resources
        # settings is a RawExtension: always written, null when the policy
        # has none.
        entry["settings"] = _sorted_keys(spec["settings"]) if spec.get("settings") is not None else None
        if spec.get("message"):
            entry["message"] = spec["message"]
        if spec.get("timeoutEvalSeconds") is not None:
            entry["timeoutEvalSeconds"] = spec["timeoutEvalSeconds"]
        # hostCapabilitiesForPolicy: a cluster-wide policy may call every
        # host capability.
        entry["hostCapabilities"] = ["*"]
        entries[policy_id(policy)] = entry
    return {k: entries[k] for k in sorted(entries)}


def dump_policies_yml(mapping):
    """policies.yml's text, byte for byte as the controller writes it: Go's
    json.Marshal (compact, UTF-8, <, > and & escaped as \\u003c, \\u003e,
    \\u0026, U+2028/U+2029 escaped). JSON is YAML: the policy-server reads it."""
    text = json.dumps(mapping, separators=(",", ":"), ensure_ascii=False)
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                          ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(char, escaped)
    return text


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", help="YAML files holding ClusterAdmissionPolicies")
    parser.add_argument("--namespace", default=DEFAULT_NAMESPACE)
    parser.add_argument("--policies-yml", action="store_true", help="print policies.yml instead")
    parser.add_argument("--module-url", help="replaces every policy's module in policies.yml")
    parser.add_argument("--apiserver-defaults", action="store_true", help="the webhooks as read back")
    args = parser.parse_args()
    policies = load_cluster_admission_policies(args.files)
    if args.policies_yml:
        print(dump_policies_yml(render_policies_yml(policies, args.module_url)))
        return
    docs = [render_webhook(p, namespace=args.namespace, apiserver_defaults=args.apiserver_defaults) for p in policies]
    yaml.safe_dump_all(docs, sys.stdout, sort_keys=False, width=1000)


if __name__ == "__main__":
    main()
