#!/usr/bin/env python3
"""Every Kubewarden image a tracked file names is one Kubewarden's charts use.

    python3 scripts/check-images.py              (make shipped-paths)
    python3 scripts/check-images.py --self-test

Since the monorepo, Kubewarden publishes its runtime under
ghcr.io/kubewarden/adm-controller/: the images of the old repositories stop
at the releases before it, so a workflow, a manifest or a document naming
one of those cannot pull the release it pins. Every `ghcr.io/kubewarden/...`
in a tracked file must be one of IMAGES, or a policy module under
`policies/` (Kubewarden's policies, which the chart's recommended policies
pull from there too). Prints one line per other name and exits 1, or one
summary line and 0.
"""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REGISTRY = "ghcr.io/kubewarden/"
# The images of Kubewarden 1.37.2: kubewarden/helm-charts, tag
# admission-controller-6.0.2 (commit 148b1a901434), charts/admission-controller/
# values.yaml (`image.repository`, `auditScanner.image.repository`,
# `policyServer.image.repository`, under `global.cattle.systemDefaultRegistry:
# ghcr.io`) and charts/hauler_manifest.yaml; the same three in the monorepo
# kubewarden/kubewarden-controller at 3460bb71 (charts/*/values.yaml). kwctl
# is published as release binaries, not as an image.
IMAGES = {
    "adm-controller/policy-server": "policy-server",
    "adm-controller/controller": "the controller",
    "adm-controller/audit-scanner": "audit-scanner",
}
POLICY_MODULES = "policies/"
# A name ends where no name character follows (a final `.` ends a sentence);
# a prefix written with its closing `/` (`.../adm-controller/`) names no image.
NAME = re.compile(re.escape(REGISTRY) + r"([A-Za-z0-9][A-Za-z0-9._/-]*[A-Za-z0-9])(?![A-Za-z0-9_/-])")


def problems_in(path, text):
    """One line per Kubewarden image in `text` that the charts do not use."""
    out = []
    for m in NAME.finditer(text):
        repository = m.group(1)
        if repository in IMAGES or repository.startswith(POLICY_MODULES):
            continue
        line = text.count("\n", 0, m.start()) + 1
        program = repository.rsplit("/", 1)[-1].removeprefix("kubewarden-")
        same = [r for r in IMAGES if r.rsplit("/", 1)[-1] == program]
        if same:
            hint = f"{IMAGES[same[0]]} is {REGISTRY}{same[0]}"
        else:
            hint = "its images are " + ", ".join(REGISTRY + r for r in IMAGES)
        out.append(f"{path}:{line}: {REGISTRY}{repository} is not an image Kubewarden's charts use: "
                   f"{hint} (admission-controller 6.0.2)")
    return out


def tracked_files():
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return [name for name in listed.decode().split("\0") if name]


def main():
    found, problems = 0, []
    for name in tracked_files():
        path = ROOT / name
        if not path.is_file():  # deleted in the work tree, or a submodule
            continue
        try:
            text = path.read_text()
        except (UnicodeDecodeError, OSError):
            continue
        found += len(NAME.findall(text))
        problems += problems_in(name, text)
    for line in problems:
        print(line)
    print(f"check-images: {found} Kubewarden image names, {len(problems)} not in the charts")
    return 1 if problems else 0


# (text, how many names it must be refused for, what the first refusal
# says); the old names are written in two parts so that this file itself
# names none.
SAMPLES = [
    ('id=$(docker create "ghcr.io/kubewarden/' + 'policy-server:$KUBEWARDEN_VERSION")', 1,
     "sample:1: ghcr.io/kubewarden/" + "policy-server is not an image Kubewarden's charts use: "
     "policy-server is ghcr.io/kubewarden/adm-controller/policy-server (admission-controller 6.0.2)"),
    ("the image `ghcr.io/kubewarden/" + "policy-server` (its binary is /policy-server)", 1,
     "policy-server is ghcr.io/kubewarden/adm-controller/policy-server"),
    ("image: ghcr.io/kubewarden/" + "kubewarden-controller:v1.37.2\n"
     "image: ghcr.io/kubewarden/" + "audit-scanner:v1.37.2", 2,
     "the controller is ghcr.io/kubewarden/adm-controller/controller"),
    ("ghcr.io/kubewarden/adm-controller/" + "kwctl:v1.37.2", 1, "its images are "),
    ("  image: ghcr.io/kubewarden/adm-controller/policy-server:v1.37.2", 0, ""),
    ("ghcr.io/kubewarden/adm-controller/controller@sha256:1abc and "
     "ghcr.io/kubewarden/adm-controller/audit-scanner.", 0, ""),
    ("module: registry://ghcr.io/kubewarden/policies/pod-privileged:v1.0.13", 0, ""),
    ("its runtime under ghcr.io/kubewarden/adm-controller/: the images", 0, ""),
    ("the old `ghcr.io/kubewarden/" + "policy-server/`", 0, ""),
    ("ghcr.io/kubewarden/" + "policy-server.", 1, "policy-server is ghcr.io/kubewarden/adm-controller/policy-server"),
]


def self_test():
    failures = 0
    for text, expected, says in SAMPLES:
        got = problems_in("sample", text)
        if len(got) != expected or (got and says not in got[0]):
            print(f"self-test: {text!r}: {len(got)} refused, expected {expected} saying {says!r}: {got}")
            failures += 1
    print(f"check-images self-test: {len(SAMPLES) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(self_test() if sys.argv[1:] == ["--self-test"] else main())
