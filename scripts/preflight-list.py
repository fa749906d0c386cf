#!/usr/bin/env python3
"""The preflight list, written from the lookups, in every place that shows it.

    python3 scripts/preflight-list.py            check (make preflight-test)
    python3 scripts/preflight-list.py --update   rewrite the blocks

What the policy-server must be allowed comes from the policy's own table of
lookups (kinds.json, written from src/k8s/kinds.rs: a get_resource needs
`get`, a list_resources_all `list` and `watch`; a lookup confined to names
in one namespace is checked by name there), and what the audit scanner must
list from deploy/rbac.yaml (scripts/validate-deploy.py checks that against
the policies' rules). scripts/validate-deploy.py checks deploy/rbac.yaml
against the same table, and scripts/test-preflight.py runs the script
against that RBAC, so the list, the RBAC and the lookups cannot disagree.

The list is written between marker lines into scripts/preflight.sh (as
`check` calls) and docs/operations.md (as `kubectl auth can-i`
commands). Without --update, exits 1 naming each block that differs.
"""

import importlib.util
import sys
from pathlib import Path

from verdict import verdict

ROOT = Path(__file__).resolve().parent.parent
BEGIN = "preflight-list.py writes the lines below"
END = "preflight-list.py writes the lines above"


def load_validator():
    spec = importlib.util.spec_from_file_location("validate_deploy", ROOT / "scripts/validate-deploy.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def checks(validate):
    """[(verbs, resources, flags, subject)] in kinds.json's order, grouped by verbs.

    resources are `plural[.group]` or `plural/name`; subject is "SA" (the
    policy-server) or "AS" (the audit scanner).
    """
    groups = {}
    named = []
    for (api_version, kind), entry in validate.LOOKUPS.items():
        plural, ways = entry[0], entry[1]
        group = api_version.rsplit("/", 1)[0] if "/" in api_version else ""
        verbs = tuple(v for v in ("get", "list", "watch") if any(v in validate.VERBS[w] for w in ways))
        resource = f"{plural}.{group}" if group else plural
        if len(entry) > 2:
            # "*": a cluster-scoped kind granted by name.
            where = "" if entry[2] == "*" else f"-n {entry[2]}"
            for name in sorted(entry[3]):
                named.append((verbs, (f"{resource if group else plural}/{name}",), where, "SA"))
        else:
            groups.setdefault(verbs, []).append(resource)
    out = [(verbs, tuple(resources), "", "SA") for verbs, resources in sorted(groups.items(), key=lambda g: -len(g[0]))]
    out += named
    docs = [(p, d) for p in sorted((ROOT / "deploy").glob("*.yaml")) if p.name != "admission-controller-values.yaml"
            for d in validate.load_documents(p)]
    audit = sorted({(g, r) for g, r, v, ns, name in validate.grants(docs, validate.KUBEWARDEN_NAMESPACE, validate.AUDIT_SCANNER_SA)
                    if v == "list" and g in ("kubeovn.io", "k8s.cni.cncf.io")})
    out.append((("list",), tuple(f"{r}.{g}" for g, r in audit), "", "AS"))
    return out


def wrap(head, words, width=96):
    """`head words...`, continued with a backslash before width."""
    lines, line = [], head
    for word in words:
        if len(line) + 1 + len(word) > width - 2:
            lines.append(line + " \\")
            line = "   "
        line += " " + word
    return "\n".join(lines + [line])


def render(lines, call):
    """Shell lines: `for` loops where a group has several verbs or resources."""
    out = []
    for verbs, resources, flags, subject in lines:
        flags = f" {flags}" if flags else ""
        v = "$v" if len(verbs) > 1 else verbs[0]
        r = "$r" if len(resources) > 1 else resources[0]
        cmd = call(v, r, flags, subject)
        if len(verbs) > 1:
            cmd = f"for v in {' '.join(verbs)}; do {cmd}; done"
        if len(resources) > 1:
            cmd = f"{wrap('for r in', resources)}; do\n  {cmd}\ndone"
        out.append(cmd)
    return "\n".join(out) + "\n"


def blocks(validate):
    lines = checks(validate)
    script = render(lines, lambda v, r, f, s: f"check yes {v} {r}{f} --as=${'ps' if s == 'SA' else 'audit'}")
    by_hand = (
        "SA=system:serviceaccount:kubewarden:kube-ovn-policy-server\n"
        "AS=system:serviceaccount:kubewarden:audit-scanner\n"
        + render(lines, lambda v, r, f, s: f"kubectl auth can-i {v} {r}{f} --as=${s}")
    )
    return {
        "scripts/preflight.sh": (f"# {BEGIN}\n", script, f"# {END}\n"),
        "docs/operations.md": (f"<!-- {BEGIN} -->\n```sh\n", by_hand, f"```\n<!-- {END} -->\n"),
    }


def main(argv):
    update = argv == ["--update"]
    wrong = []
    places = blocks(load_validator())
    for name, (head, body, tail) in places.items():
        path = ROOT / name
        text = path.read_text()
        start, end = text.find(head), text.find(tail)
        if start < 0 or end < start:
            wrong.append(f"{name}: no block between the lines {head.strip()!r} and {tail.strip()!r}")
            continue
        new = text[: start + len(head)] + body + text[end:]
        if new != text:
            if update:
                path.write_text(new)
                print(f"preflight-list: {name} rewritten")
            else:
                wrong.append(f"{name}: the preflight list differs from the lookups (python3 scripts/preflight-list.py --update)")
    return verdict(wrong, f"preflight-list: {len(places)} places, {len(wrong)} out of date")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
