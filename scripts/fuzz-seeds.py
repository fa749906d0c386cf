#!/usr/bin/env python3
"""Seed corpora for the fuzz targets, from the conformance cases (public and own).

    python3 scripts/fuzz-seeds.py      (make fuzz runs it)

Writes fuzz/seeds/<target>/ (not committed): for `validate`, each case's
ValidationRequest and cluster; for `decode`, the ValidationRequest;
for `pod_annotations`, its pod (or template)
annotations; for `go_json`, its network selections and NAD configs; for `net_parsers` and `overlap`, the addresses and CIDRs it holds.
"""
import hashlib
import json
import pathlib

root = pathlib.Path(__file__).resolve().parent.parent
cases = sorted((root / "tests" / "conformance").glob("*.json")) + sorted(
    (root / "tests" / "cases").glob("*.json")
)
seeds = root / "fuzz" / "seeds"


def write(target, data):
    folder = seeds / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / hashlib.sha1(data).hexdigest()).write_bytes(data)


def annotations_of(obj):
    if not isinstance(obj, dict):
        return {}
    spec = obj.get("spec") or {}
    for meta in (
        ((spec.get("jobTemplate") or {}).get("spec") or {}).get("template", {}).get("metadata"),
        (spec.get("template") or {}).get("metadata"),
        obj.get("metadata"),
    ):
        if isinstance(meta, dict) and isinstance(meta.get("annotations"), dict):
            return meta["annotations"]
    return {}


def strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


def configs(value):
    """Every NetworkAttachmentDefinition's spec.config under a value."""
    if isinstance(value, dict):
        spec = value.get("spec")
        if isinstance(spec, dict) and isinstance(spec.get("config"), str):
            yield spec["config"]
        for v in value.values():
            yield from configs(v)
    elif isinstance(value, list):
        for v in value:
            yield from configs(v)


for path in cases:
    case = json.loads(path.read_text())
    request = case.get("request", {})
    payload = json.dumps({"settings": case.get("settings") or {}, "request": request})
    cluster = json.dumps(case.get("cluster") or {})
    write("validate", payload.encode() + b"\0" + cluster.encode())
    write("decode", payload.encode())
    annotations = annotations_of(request.get("object"))
    if annotations:
        lines = "\n".join(f"{k}={v}" for k, v in annotations.items() if isinstance(v, str))
        write("pod_annotations", lines.encode())
    for key in ("k8s.v1.cni.cncf.io/networks", "v1.multus-cni.io/default-network"):
        if isinstance(annotations.get(key), str):
            write("go_json", annotations[key].encode())
    for config in configs(case.get("cluster")):
        write("go_json", config.encode())
    texts = [s for s in strings(request.get("object")) if any(c in s for c in ".:/")]
    for text in texts[:20]:
        write("net_parsers", text.encode())
    cidrs = [s for s in strings([request.get("object"), case.get("cluster")]) if "/" in s and len(s) < 80]
    for a, b in zip(cidrs, cidrs[1:]):
        write("overlap", f"{a}|{b}".encode())
print(f"seeds written to {seeds} from {len(cases)} cases")
