"""e2e/harness/webhooks.py against what Kubewarden's controller writes.

    python3 -m pytest e2e/suites/test_webhooks.py [-k NAME]

Each expected object below is written out by hand from the controller's Go
source (kubewarden-controller at 3460bb71; the CRDs are 1.37.2's), with the
file and function it follows; `make e2e-controller` (e2e/suites/test_controller.py)
compares the same rendering with what the controller itself writes.
"""

import base64
import copy
import json
import unittest

from e2e.harness import DEPLOY, POLICY_FILES
from e2e.harness.webhooks import (
    dump_policies_yml,
    load_cluster_admission_policies,
    render_policies_yml,
    render_webhook,
)


def deployed(name):
    for policy in load_cluster_admission_policies(POLICY_FILES):
        if policy["metadata"]["name"] == name:
            return policy
    raise KeyError(name)


# metadata of every webhook configuration: internal/controller/
# policy_subreconciler_webhook.go, reconcileValidatingWebhookConfiguration
# (labels and annotations from internal/constants/constants.go).
def meta(name):
    return {
        "name": "clusterwide-" + name,
        "labels": {"app.kubernetes.io/part-of": "kubewarden"},
        "annotations": {"kubewardenPolicyName": name, "kubewardenPolicyNamespace": ""},
    }


def service(name, policy_server="kube-ovn", namespace="kubewarden"):
    # ServiceReference: the deployments namespace, PolicyServer.NameWithPrefix
    # (api/policies/v1/policyserver_types.go), /validate/<GetUniqueName>,
    # constants.PolicyServerServicePort.
    return {"service": {"namespace": namespace, "name": "policy-server-" + policy_server,
                        "path": "/validate/clusterwide-" + name, "port": 443}}


# namespaceSelector in policy_subreconciler_webhook.go: Kubewarden's own
# namespace first, then the policy's matchExpressions.
NOT_KUBEWARDEN = {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kubewarden"]}

NOT_KUBE_OVN_CONTROLLER = {
    "name": "not-kube-ovn-controller",
    "expression": "request.userInfo.username != 'system:serviceaccount:kube-system:ovn'",
}

STATIC_IP_WEBHOOK = {
    "apiVersion": "admissionregistration.k8s.io/v1",
    "kind": "ValidatingWebhookConfiguration",
    "metadata": meta("kube-ovn-static-ip"),
    "webhooks": [{
        "name": "clusterwide-kube-ovn-static-ip.kubewarden.admission",
        "clientConfig": service("kube-ovn-static-ip"),
        "rules": [
            {"operations": ["CREATE", "UPDATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]},
            {"operations": ["CREATE", "UPDATE"], "apiGroups": ["apps"], "apiVersions": ["v1"],
             "resources": ["deployments", "statefulsets", "daemonsets"]},
            {"operations": ["CREATE", "UPDATE"], "apiGroups": ["batch"], "apiVersions": ["v1"],
             "resources": ["jobs", "cronjobs"]},
        ],
        "failurePolicy": "Fail",
        "namespaceSelector": {"matchExpressions": [
            NOT_KUBEWARDEN,
            {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system"]},
        ]},
        "sideEffects": "None",
        "timeoutSeconds": 10,
        "admissionReviewVersions": ["v1"],
        "matchConditions": [
            NOT_KUBE_OVN_CONTROLLER,
            {
                "name": "has-static-ip-annotation",
                # folded (>-), but the more indented lines keep their breaks
                "expression": (
                    "(request.kind.kind == 'Pod'\n"
                    "  ? object.metadata.?annotations.orValue({})\n"
                    "  : request.kind.kind == 'CronJob'\n"
                    "    ? object.?spec.?jobTemplate.?spec.?template.?metadata.?annotations.orValue({})\n"
                    "    : object.?spec.?template.?metadata.?annotations.orValue({})\n"
                    ").exists(k, k.endsWith('kubernetes.io/ip_address') || k.endsWith('kubernetes.io/ip_pool')\n"
                    "  || k.contains('kubernetes.io/ip_address.')\n"
                    "  || k == 'k8s.v1.cni.cncf.io/networks' || k == 'v1.multus-cni.io/default-network'\n"
                    "  || k == 'ovn.kubernetes.io/vip')"
                ),
            },
            {
                "name": "pod-update-may-allocate",
                "expression": (
                    "request.kind.kind != 'Pod' || request.operation != 'UPDATE'\n"
                    "|| object.metadata.?annotations.orValue({})[?'k8s.v1.cni.cncf.io/networks'] != oldObject.metadata.?annotations.orValue({})[?'k8s.v1.cni.cncf.io/networks']\n"
                    "|| object.metadata.?annotations.orValue({})[?'v1.multus-cni.io/default-network'] != oldObject.metadata.?annotations.orValue({})[?'v1.multus-cni.io/default-network']\n"
                    "|| (!(object.status.?phase.orValue('') == 'Succeeded' && object.spec.?restartPolicy.orValue('') != 'Always')\n"
                    "  && !(object.status.?phase.orValue('') == 'Failed'\n"
                    "    && (object.spec.?restartPolicy.orValue('') == 'Never' || object.status.?reason.orValue('') == 'Evicted'))\n"
                    '  && (!has(object.metadata.deletionTimestamp) || object.metadata.?ownerReferences.orValue([]).exists(o,\n'
                    "    (o.kind == 'StatefulSet' && o.apiVersion.startsWith('apps/'))\n"
                    "    || (o.kind == 'VirtualMachineInstance' && o.apiVersion.startsWith('kubevirt.io/'))))\n"
                    "  && (object.metadata.?annotations.orValue({})[?'ovn.kubernetes.io/allocated'].orValue('') != 'true'\n"
                    "    || object.metadata.?annotations.orValue({}).exists(k, k == 'kubevirt.io/migrationJobName'\n"
                    "      || k == 'k8s.v1.cni.cncf.io/networks' || k == 'v1.multus-cni.io/default-network')))"
                ),
            },
        ],
    }],
}

NETWORKS_WEBHOOK = {
    "apiVersion": "admissionregistration.k8s.io/v1",
    "kind": "ValidatingWebhookConfiguration",
    "metadata": meta("kube-ovn-networks"),
    "webhooks": [{
        "name": "clusterwide-kube-ovn-networks.kubewarden.admission",
        "clientConfig": service("kube-ovn-networks"),
        "rules": [
            {"operations": ["CREATE", "UPDATE", "DELETE"], "apiGroups": ["kubeovn.io"], "apiVersions": ["v1"],
             "resources": ["subnets", "vpcs"]},
            {"operations": ["CREATE", "UPDATE"], "apiGroups": ["kubeovn.io"], "apiVersions": ["v1"],
             "resources": ["vips", "ippools"]},
            {"operations": ["CREATE", "UPDATE", "DELETE"], "apiGroups": ["kubeovn.io"], "apiVersions": ["v1"],
             "resources": ["vpc-nat-gateways", "iptables-eips"]},
            {"operations": ["CREATE", "UPDATE"], "apiGroups": ["kubeovn.io"], "apiVersions": ["v1"],
             "resources": ["iptables-dnat-rules", "iptables-snat-rules", "iptables-fip-rules"]},
            {"operations": ["CREATE", "UPDATE", "DELETE"], "apiGroups": ["kubeovn.io"], "apiVersions": ["v1"],
             "resources": ["ovn-eips"]},
            {"operations": ["CREATE", "UPDATE"], "apiGroups": ["kubeovn.io"], "apiVersions": ["v1"],
             "resources": ["ovn-dnat-rules", "ovn-snat-rules", "ovn-fips"]},
            {"operations": ["CREATE", "UPDATE"], "apiGroups": ["k8s.cni.cncf.io"], "apiVersions": ["v1"],
             "resources": ["network-attachment-definitions"]},
        ],
        "failurePolicy": "Fail",
        # No namespaceSelector in the policy: only Kubewarden's namespace is out.
        "namespaceSelector": {"matchExpressions": [NOT_KUBEWARDEN]},
        "sideEffects": "None",
        "timeoutSeconds": 10,
        "admissionReviewVersions": ["v1"],
        "matchConditions": [
            NOT_KUBE_OVN_CONTROLLER,
            {
                "name": "vip-spec-changed",
                # folded (>-) at one indentation: the lines joined by spaces
                "expression": (
                    "request.kind.kind != 'Vip' || request.operation != 'UPDATE'"
                    " || object.?spec.orValue({}) != oldObject.?spec.orValue({})"
                ),
            },
            {
                "name": "nad-config-changed",
                "expression": (
                    "request.kind.kind != 'NetworkAttachmentDefinition' || request.operation != 'UPDATE'"
                    " || object.?spec.?config.orValue('') != oldObject.?spec.?config.orValue('')"
                ),
            },
        ],
    }],
}

IP_OBJECTS_WEBHOOK = {
    "apiVersion": "admissionregistration.k8s.io/v1",
    "kind": "ValidatingWebhookConfiguration",
    "metadata": meta("kube-ovn-ip-objects"),
    "webhooks": [{
        "name": "clusterwide-kube-ovn-ip-objects.kubewarden.admission",
        "clientConfig": service("kube-ovn-ip-objects"),
        "rules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": ["kubeovn.io"], "apiVersions": ["v1"],
                   "resources": ["ips"]}],
        "failurePolicy": "Ignore",
        "namespaceSelector": {"matchExpressions": [NOT_KUBEWARDEN]},
        "sideEffects": "None",
        "timeoutSeconds": 5,
        "admissionReviewVersions": ["v1"],
        "matchConditions": [NOT_KUBE_OVN_CONTROLLER, {
            "name": "not-kube-ovn-cni",
            "expression": "request.userInfo.username != 'system:serviceaccount:kube-system:kube-ovn-cni'",
        }],
    }],
}


def cars(*pairs):
    return [{"apiVersion": a, "kind": k} for a, k in pairs]


# policies.yml: buildPoliciesMap and policyServerConfigEntry.MarshalJSON in
# internal/controller/policyserver_controller_configmap.go.
DEPLOY_POLICIES_YML = {
    "clusterwide-kube-ovn-ip-objects": {
        "namespacedName": {"Namespace": "", "Name": "kube-ovn-ip-objects"},
        "module": "file:///m/annotated-policy.wasm",
        "policyMode": "protect",
        "allowedToMutate": False,
        "contextAwareResources": cars(("kubeovn.io/v1", "Subnet"), ("kubeovn.io/v1", "Vpc")),
        "settings": {},
        # no timeoutEvalSeconds in the policy: the key is left out
        "hostCapabilities": ["*"],
    },
    "clusterwide-kube-ovn-networks": {
        "namespacedName": {"Namespace": "", "Name": "kube-ovn-networks"},
        "module": "file:///m/annotated-policy.wasm",
        "policyMode": "protect",
        "allowedToMutate": False,
        "contextAwareResources": cars(
            ("kubeovn.io/v1", "Subnet"), ("kubeovn.io/v1", "Vpc"), ("kubeovn.io/v1", "IPPool"),
            ("kubeovn.io/v1", "OvnDnatRule"),
            ("kubeovn.io/v1", "OvnSnatRule"), ("kubeovn.io/v1", "OvnFip"), ("kubeovn.io/v1", "OvnEip"),
            ("kubeovn.io/v1", "IptablesEIP"), ("kubeovn.io/v1", "IptablesDnatRule"),
            ("kubeovn.io/v1", "IptablesSnatRule"), ("kubeovn.io/v1", "IptablesFIPRule"),
            ("kubeovn.io/v1", "QoSPolicy"), ("v1", "Service"), ("v1", "ConfigMap"),
        ),
        "settings": {},
        "timeoutEvalSeconds": 8,
        "hostCapabilities": ["*"],
    },
    "clusterwide-kube-ovn-static-ip": {
        "namespacedName": {"Namespace": "", "Name": "kube-ovn-static-ip"},
        "module": "file:///m/annotated-policy.wasm",
        "policyMode": "protect",
        "allowedToMutate": False,
        "contextAwareResources": cars(
            ("kubeovn.io/v1", "IP"), ("kubeovn.io/v1", "Subnet"), ("kubeovn.io/v1", "Vpc"), ("kubeovn.io/v1", "IPPool"),
            ("kubeovn.io/v1", "Vip"), ("v1", "Namespace"), ("k8s.cni.cncf.io/v1", "NetworkAttachmentDefinition"),
            ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
        ),
        "settings": {},
        "timeoutEvalSeconds": 8,
        "hostCapabilities": ["*"],
    },
}

# A policy that leaves out what deploy/ sets, and sets what deploy/ does not.
AUDIT_POLICY = {
    "apiVersion": "policies.kubewarden.io/v1",
    "kind": "ClusterAdmissionPolicy",
    "metadata": {"name": "audit-only"},
    "spec": {
        # no policyServer, failurePolicy, timeoutSeconds, sideEffects, settings
        "module": "registry://example.org/p:v1",
        "mode": "monitor",
        "mutating": False,
        "matchPolicy": "Exact",
        "message": "audit <only> & more",
        "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"],
                   "operations": ["CREATE"], "scope": "Namespaced"}],
        "namespaceSelector": {
            "matchLabels": {"team": "net"},
            "matchExpressions": [{"key": "tier", "operator": "Exists"}],
        },
        "objectSelector": {"matchLabels": {"app": "x"}},
        "matchConditions": [{"name": "not-dry", "expression": "!request.dryRun"}],
    },
}

AUDIT_WEBHOOK = {
    "apiVersion": "admissionregistration.k8s.io/v1",
    "kind": "ValidatingWebhookConfiguration",
    "metadata": meta("audit-only"),
    "webhooks": [{
        "name": "clusterwide-audit-only.kubewarden.admission",
        # policyServer defaulted to "default" (CRD default; the defaulting
        # webhook in api/policies/v1/clusteradmissionpolicy_webhook.go).
        "clientConfig": service("audit-only", policy_server="default"),
        "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"],
                   "scope": "Namespaced"}],
        # no failurePolicy: GetFailurePolicy is nil and the controller sets nil
        "matchPolicy": "Exact",
        # the policy's matchLabels are dropped: namespaceSelector() appends
        # only MatchExpressions to its own NotIn.
        "namespaceSelector": {"matchExpressions": [NOT_KUBEWARDEN, {"key": "tier", "operator": "Exists"}]},
        "objectSelector": {"matchLabels": {"app": "x"}},
        "sideEffects": "None",
        # spec.timeoutSeconds: +kubebuilder:default:=10 (api/policies/v1/policy_types.go)
        "timeoutSeconds": 10,
        "admissionReviewVersions": ["v1"],
        "matchConditions": [{"name": "not-dry", "expression": "!request.dryRun"}],
    }],
}


class DeployWebhooks(unittest.TestCase):
    maxDiff = None

    def test_static_ip(self):
        self.assertEqual(render_webhook(deployed("kube-ovn-static-ip")), STATIC_IP_WEBHOOK)

    def test_networks(self):
        self.assertEqual(render_webhook(deployed("kube-ovn-networks")), NETWORKS_WEBHOOK)

    def test_ip_objects(self):
        self.assertEqual(render_webhook(deployed("kube-ovn-ip-objects")), IP_OBJECTS_WEBHOOK)

    def test_load_skips_other_documents(self):
        # deploy/policy-server.yaml: a ServiceAccount, a PriorityClass, a
        # PolicyServer; the comment-only head of each file is an empty document.
        paths = sorted(DEPLOY.glob("*.yaml"))
        names = [p["metadata"]["name"] for p in load_cluster_admission_policies(paths)]
        self.assertEqual(names, ["kube-ovn-static-ip", "kube-ovn-networks", "kube-ovn-ip-objects"])

    def test_other_namespace(self):
        # --deployments-namespace names both the Service's namespace and the
        # namespace kept out.
        webhook = render_webhook(deployed("kube-ovn-networks"), namespace="kw")["webhooks"][0]
        self.assertEqual(webhook["clientConfig"]["service"]["namespace"], "kw")
        self.assertEqual(webhook["namespaceSelector"],
                         {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "NotIn",
                                                "values": ["kw"]}]})


class Defaults(unittest.TestCase):
    maxDiff = None

    def test_monitor_policy_without_failure_policy(self):
        self.assertEqual(render_webhook(AUDIT_POLICY), AUDIT_WEBHOOK)

    def test_apiserver_defaults(self):
        # kubernetes pkg/apis/admissionregistration/v1/defaults.go:
        # SetDefaults_ValidatingWebhook, SetDefaults_Rule.
        got = render_webhook(AUDIT_POLICY, apiserver_defaults=True)["webhooks"][0]
        want = copy.deepcopy(AUDIT_WEBHOOK["webhooks"][0])
        want["failurePolicy"] = "Fail"
        self.assertEqual(got, want)  # scope, matchPolicy, selectors and timeout were set

        minimal = {"kind": "ClusterAdmissionPolicy", "apiVersion": "policies.kubewarden.io/v1",
                   "metadata": {"name": "m"},
                   "spec": {"module": "m", "mutating": False, "allowInsideAdmissionControllerNamespace": True,
                            "rules": [{"apiGroups": ["kubeovn.io"], "apiVersions": ["v1"],
                                       "resources": ["subnets"], "operations": ["*"]}]}}
        self.assertEqual(render_webhook(minimal)["webhooks"][0], {
            "name": "clusterwide-m.kubewarden.admission",
            "clientConfig": service("m", policy_server="default"),
            "rules": [{"operations": ["*"], "apiGroups": ["kubeovn.io"], "apiVersions": ["v1"],
                       "resources": ["subnets"]}],
            "sideEffects": "None",
            "timeoutSeconds": 10,
            "admissionReviewVersions": ["v1"],
        })
        self.assertEqual(render_webhook(minimal, apiserver_defaults=True)["webhooks"][0], {
            "name": "clusterwide-m.kubewarden.admission",
            "clientConfig": service("m", policy_server="default"),
            "rules": [{"operations": ["*"], "apiGroups": ["kubeovn.io"], "apiVersions": ["v1"],
                       "resources": ["subnets"], "scope": "*"}],
            "failurePolicy": "Fail",
            "matchPolicy": "Equivalent",
            "namespaceSelector": {},
            "objectSelector": {},
            "sideEffects": "None",
            "timeoutSeconds": 10,
            "admissionReviewVersions": ["v1"],
        })

    def test_timeout_seconds(self):
        policy = copy.deepcopy(AUDIT_POLICY)
        for value, want in ((None, 10), (2, 2), (30, 30)):
            # a null of a non-nullable field is pruned, then defaulted
            policy["spec"]["timeoutSeconds"] = value
            self.assertEqual(render_webhook(policy)["webhooks"][0]["timeoutSeconds"], want)

    def test_allow_inside_admission_controller_namespace(self):
        # namespaceSelector(): the policy's selector unchanged, nil stays nil.
        policy = copy.deepcopy(AUDIT_POLICY)
        policy["spec"]["allowInsideAdmissionControllerNamespace"] = True
        self.assertEqual(render_webhook(policy)["webhooks"][0]["namespaceSelector"],
                         AUDIT_POLICY["spec"]["namespaceSelector"])
        del policy["spec"]["namespaceSelector"]
        self.assertNotIn("namespaceSelector", render_webhook(policy)["webhooks"][0])

    def test_side_effects(self):
        policy = copy.deepcopy(AUDIT_POLICY)
        policy["spec"]["sideEffects"] = "NoneOnDryRun"
        self.assertEqual(render_webhook(policy)["webhooks"][0]["sideEffects"], "NoneOnDryRun")

    def test_match_conditions_gate(self):
        # featureGateAdmissionWebhookMatchConditions false: none copied.
        self.assertNotIn("matchConditions", render_webhook(AUDIT_POLICY, match_conditions=False)["webhooks"][0])

    def test_mutating(self):
        # reconcileMutatingWebhookConfiguration: same webhook, path /validate too.
        policy = copy.deepcopy(AUDIT_POLICY)
        policy["spec"]["mutating"] = True
        got = render_webhook(policy)
        self.assertEqual(got["kind"], "MutatingWebhookConfiguration")
        self.assertEqual(got["webhooks"], AUDIT_WEBHOOK["webhooks"])
        self.assertEqual(render_webhook(policy, apiserver_defaults=True)["webhooks"][0]["reinvocationPolicy"], "Never")

    def test_input_unchanged(self):
        before = copy.deepcopy(AUDIT_POLICY)
        render_webhook(AUDIT_POLICY, apiserver_defaults=True)
        render_policies_yml([AUDIT_POLICY])
        self.assertEqual(AUDIT_POLICY, before)


class ClientConfig(unittest.TestCase):
    PEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"

    def test_ca_bundle(self):
        b64 = base64.b64encode(self.PEM.encode()).decode()
        for given in (self.PEM, self.PEM.encode(), b64):
            config = render_webhook(AUDIT_POLICY, ca_bundle=given)["webhooks"][0]["clientConfig"]
            self.assertEqual(config["caBundle"], b64)
            self.assertIn("service", config)
        with self.assertRaises(ValueError):
            render_webhook(AUDIT_POLICY, ca_bundle="not base64!")

    def test_url(self):
        config = render_webhook(AUDIT_POLICY, url="https://127.0.0.1:8443", ca_bundle=self.PEM)["webhooks"][0]
        self.assertEqual(config["clientConfig"], {
            "url": "https://127.0.0.1:8443/validate/clusterwide-audit-only",
            "caBundle": base64.b64encode(self.PEM.encode()).decode(),
        })
        full = "https://127.0.0.1:8443/somewhere/else"
        self.assertEqual(render_webhook(AUDIT_POLICY, url=full)["webhooks"][0]["clientConfig"], {"url": full})

    def test_service_name_and_port(self):
        config = render_webhook(AUDIT_POLICY, service_name="ps", port=8443)["webhooks"][0]["clientConfig"]
        self.assertEqual(config, {"service": {"namespace": "kubewarden", "name": "ps",
                                              "path": "/validate/clusterwide-audit-only", "port": 8443}})


class PoliciesYml(unittest.TestCase):
    maxDiff = None

    def test_deploy(self):
        got = render_policies_yml(load_cluster_admission_policies(POLICY_FILES), "file:///m/annotated-policy.wasm")
        self.assertEqual(got, DEPLOY_POLICIES_YML)
        self.assertEqual(list(got), sorted(got))  # Go writes map keys sorted

    def test_module_kept(self):
        got = render_policies_yml([deployed("kube-ovn-ip-objects")])
        self.assertEqual(got["clusterwide-kube-ovn-ip-objects"]["module"],
                         "registry://ghcr.io/kube-ovn-policy/kube-ovn-policy:v0.1.0")

    def test_monitor_policy(self):
        # settings is a RawExtension (always written; null when unset);
        # message and timeoutEvalSeconds are omitempty, allowedToMutate is not.
        self.assertEqual(render_policies_yml([AUDIT_POLICY]), {"clusterwide-audit-only": {
            "namespacedName": {"Namespace": "", "Name": "audit-only"},
            "module": "registry://example.org/p:v1",
            "policyMode": "monitor",
            "allowedToMutate": False,
            "settings": None,
            "message": "audit <only> & more",
            "hostCapabilities": ["*"],
        }})

    def test_policy_server_filter(self):
        policies = load_cluster_admission_policies(POLICY_FILES) + [AUDIT_POLICY]
        self.assertEqual(list(render_policies_yml(policies, policy_server="default")), ["clusterwide-audit-only"])
        self.assertEqual(len(render_policies_yml(policies, policy_server="kube-ovn")), 3)

    def test_text(self):
        # json.Marshal: compact, struct fields in declaration order, map keys
        # (ids, and settings as the API server returns them) sorted, HTML
        # characters escaped.
        policy = copy.deepcopy(AUDIT_POLICY)
        policy["spec"]["settings"] = {"b": [1, "x&y"], "a": {"d": True, "c": None}}
        policy["spec"]["contextAwareResources"] = [{"apiVersion": "v1", "kind": "Namespace"}]
        policy["spec"]["timeoutEvalSeconds"] = 3
        text = dump_policies_yml(render_policies_yml([policy]))
        self.assertEqual(text, (
            '{"clusterwide-audit-only":{"namespacedName":{"Namespace":"","Name":"audit-only"},'
            '"module":"registry://example.org/p:v1","policyMode":"monitor","allowedToMutate":false,'
            '"contextAwareResources":[{"apiVersion":"v1","kind":"Namespace"}],'
            '"settings":{"a":{"c":null,"d":true},"b":[1,"x\\u0026y"]},'
            '"message":"audit \\u003conly\\u003e \\u0026 more","timeoutEvalSeconds":3,"hostCapabilities":["*"]}}'
        ))
        self.assertEqual(json.loads(text), render_policies_yml([policy]))

