#!/usr/bin/env python3
"""Artifact Hub's install text grants what the static-IP checks look up.

    python3 scripts/check-install-text.py [--self-test]   (make lint runs it)

docs/artifacthub-install.md (copied into artifacthub-pkg.yml's `install`)
tells a user who scaffolds the policy which ClusterRole to give its
PolicyServer. That grant must cover every kind the static-IP policy looks
up (deploy/cluster-admission-policies.yaml's `kube-ovn-static-ip`
`contextAwareResources`), each with the verbs deploy/rbac.yaml gives it
(its host call's: get for a GET, list and watch for a watch cache), and
nothing else: a kind added to the lookups without the text is a user's
every static-IP pod refused at the webhook timeout.

Prints one line per problem and exits 1, or one summary line and 0.
"""

import json
import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
TEXT = ROOT / "docs" / "artifacthub-install.md"
POLICIES = ROOT / "deploy" / "cluster-admission-policies.yaml"
RBAC = ROOT / "deploy" / "rbac.yaml"
KINDS = ROOT / "kinds.json"
POLICY = "kube-ovn-static-ip"


def grants(roles):
    """{(group, resource): set of verbs} of ClusterRoles' rules."""
    found = {}
    for role in roles:
        for rule in role.get("rules") or []:
            for group in rule.get("apiGroups") or []:
                for resource in rule.get("resources") or []:
                    found.setdefault((group, resource), set()).update(rule.get("verbs") or [])
    return found


def text_roles(text):
    """The ClusterRoles of the text's ```yaml blocks."""
    roles = []
    for block in re.findall(r"```yaml\n(.*?)```", text, re.S):
        roles += [d for d in yaml.safe_load_all(block) if d and d.get("kind") == "ClusterRole"]
    return roles


def looked_up(policies, kinds):
    """{(group, resource)} the static-IP policy may look up."""
    plural = {(k["apiVersion"].rpartition("/")[0], k["kind"]): k["plural"] for k in kinds}
    wanted = set()
    for policy in policies:
        if policy and policy["metadata"]["name"] == POLICY:
            for r in policy["spec"].get("contextAwareResources") or []:
                group = r["apiVersion"].rpartition("/")[0]
                wanted.add((group, plural.get((group, r["kind"]), r["kind"].lower() + "s")))
    return wanted


def problems(text, policies, rbac, kinds):
    wanted = looked_up(policies, kinds)
    given = grants(text_roles(text))
    deployed = grants([d for d in rbac if d and d.get("kind") == "ClusterRole"])
    out = []
    if not wanted:
        out.append(f"{POLICY} has no contextAwareResources in {POLICIES.name}")
    for key in sorted(wanted):
        need = deployed.get(key, set())
        have = given.get(key, set())
        if have != need:
            out.append(f"the install text grants {key[1] or key} ({key[0] or 'core'}) {sorted(have)}; "
                       f"deploy/rbac.yaml grants {sorted(need)}")
    for key in sorted(set(given) - wanted):
        out.append(f"the install text grants {key[1]} ({key[0] or 'core'}), which the static-IP policy never looks up")
    return out


def self_test():
    kinds = [{"apiVersion": "kubeovn.io/v1", "kind": "IP", "plural": "ips"},
             {"apiVersion": "v1", "kind": "Namespace", "plural": "namespaces"}]
    policies = [{"metadata": {"name": POLICY}, "spec": {"contextAwareResources": [
        {"apiVersion": "kubeovn.io/v1", "kind": "IP"}, {"apiVersion": "v1", "kind": "Namespace"}]}}]
    rbac = [{"kind": "ClusterRole", "rules": [
        {"apiGroups": ["kubeovn.io"], "resources": ["ips"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["list", "watch"]}]}]

    def text(rules):
        return "x\n```yaml\n" + yaml.safe_dump({"kind": "ClusterRole", "rules": rules}) + "```\n"

    good = [{"apiGroups": ["kubeovn.io"], "resources": ["ips"], "verbs": ["get", "list", "watch"]},
            {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["list", "watch"]}]
    cases = [
        ("the deployed grant", good, 0),
        ("a kind missing", good[:1], 1),
        ("a verb missing", [dict(good[0], verbs=["list", "watch"]), good[1]], 1),
        ("a kind never looked up", good + [{"apiGroups": ["kubeovn.io"], "resources": ["vpcs"], "verbs": ["get"]}], 1),
    ]
    failed = 0
    for name, rules, count in cases:
        got = problems(text(rules), policies, rbac, kinds)
        if len(got) != count:
            failed += 1
            print(f"check-install-text self-test: {name}: {len(got)} problems, want {count}: {got}")
    print(f"check-install-text self-test: {len(cases) - failed} passed, {failed} failed")
    return failed


def main():
    if "--self-test" in sys.argv[1:]:
        sys.exit(1 if self_test() else 0)
    found = problems(TEXT.read_text(), list(yaml.safe_load_all(POLICIES.read_text())),
                     list(yaml.safe_load_all(RBAC.read_text())), json.loads(KINDS.read_text()))
    for line in found:
        print(f"check-install-text: {line}")
    if found:
        sys.exit(1)
    print(f"check-install-text: {TEXT.relative_to(ROOT)} grants every lookup of {POLICY} as deploy/rbac.yaml does")


if __name__ == "__main__":
    main()
