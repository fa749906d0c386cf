#!/usr/bin/env python3
"""Run scripts/preflight.sh with the real kubectl against a stand-in API server.

    python3 scripts/test-preflight.py

The stand-in (e2e/harness/apiserver.py, for discovery) also answers kubectl's
SelfSubjectAccessReviews, for the impersonated user, from the RBAC in
deploy/*.yaml as scripts/validate-deploy.py computes it: so this checks the
preflight's commands (kubectl accepts them, they ask what they mean to ask)
and that deploy/rbac.yaml passes them. It is not Kubernetes' RBAC
authorizer: resourceNames, namespaces and verbs are matched as that does,
aggregation and wildcards are not needed here and not modelled.
A second run removes one grant and expects the preflight to fail.
"""

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from e2e_harness import harness

ROOT = Path(__file__).resolve().parent.parent


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


apiserver = harness("apiserver")
validate = load("validate_deploy", ROOT / "scripts/validate-deploy.py")


def rbac_docs(drop=None):
    docs = []
    for path in sorted((ROOT / "deploy").glob("*.yaml")):
        if path.name == "admission-controller-values.yaml":
            continue
        for doc in validate.load_documents(path):
            if drop and doc.get("kind") == "ClusterRole" and doc["metadata"]["name"] == drop[0]:
                for rule in doc["rules"]:
                    rule["resources"] = [r for r in rule["resources"] if r != drop[1]]
            docs.append((path, doc))
    return docs


def proto_fields(data):
    """{field number: [bytes]} of the length-delimited fields of a protobuf message."""
    fields, i = {}, 0
    def varint():
        nonlocal i
        shift = value = 0
        while True:
            b = data[i]
            i += 1
            value |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return value
    while i < len(data):
        key = varint()
        number, wire = key >> 3, key & 7
        if wire == 2:
            n = varint()
            fields.setdefault(number, []).append(data[i:i + n])
            i += n
        elif wire == 0:
            varint()
        else:
            raise ValueError(f"wire type {wire}")
    return fields


def resource_attributes(body):
    """ResourceAttributes of a SelfSubjectAccessReview, from JSON or from
    Kubernetes' protobuf envelope ("k8s\\0", runtime.Unknown{raw: 2})."""
    if body.lstrip().startswith(b"{"):
        return (json.loads(body).get("spec") or {}).get("resourceAttributes") or {}
    raw = proto_fields(body[4:])[2][0]
    spec = proto_fields(proto_fields(raw)[2][0])
    attrs = proto_fields(spec[1][0]) if 1 in spec else {}
    names = {1: "namespace", 2: "verb", 3: "group", 4: "version", 5: "resource", 6: "subresource", 7: "name"}
    return {names[k]: v[0].decode() for k, v in attrs.items() if k in names}


class Handler(apiserver.Handler):
    def do_POST(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            body = b""
            while True:
                size = int(self.rfile.readline().strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                body += self.rfile.read(size)
                self.rfile.readline()
        else:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        attrs = resource_attributes(body)
        user = self.headers.get("Impersonate-User", "")
        allowed = False
        if user.startswith("system:serviceaccount:"):
            _, _, namespace, name = user.split(":", 3)
            for group, resource, verb, ns, obj in validate.grants(self.server.docs, namespace, name):
                if (
                    group == attrs.get("group", "")
                    and resource == attrs.get("resource")
                    and verb == attrs.get("verb")
                    and ns in ("*", attrs.get("namespace", ""))
                    and obj in ("*", attrs.get("name", ""))
                ):
                    allowed = True
        self.send_json(201, {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": attrs},
            "status": {"allowed": allowed},
        })


def run(docs):
    server = apiserver.StandIn()
    server.RequestHandlerClass = Handler
    server.docs = docs
    server.start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            kubeconfig = Path(tmp) / "kubeconfig"
            server.write_kubeconfig(kubeconfig)
            env = dict(os.environ, KUBECONFIG=str(kubeconfig))
            return subprocess.run(
                ["bash", str(ROOT / "scripts/preflight.sh")],
                capture_output=True, text=True, env=env, timeout=300,
            )
    finally:
        server.stop()


def main():
    if not shutil.which("kubectl"):
        print("test-preflight skipped: kubectl is not installed")
        return
    good = run(rbac_docs())
    print(good.stdout, end="")
    print(good.stderr, end="", file=sys.stderr)
    bad = run(rbac_docs(drop=("kube-ovn-policy-lookups", "ips")))
    failing = [l for l in bad.stdout.splitlines() if l.startswith("FAIL")]
    ok = good.returncode == 0 and bad.returncode == 1 and failing and all(" ips.kubeovn.io " in l for l in failing)
    print(f"preflight with deploy/rbac.yaml: exit {good.returncode}; without get/list/watch on ips: "
          f"exit {bad.returncode}, {len(failing)} failing line(s): {failing}")
    print(f"test-preflight: {1 if ok else 0} passed, {0 if ok else 1} failed")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
