#!/usr/bin/env python3
"""Nothing in the repository comes from, or builds, another project's code.

    python3 scripts/check-provenance.py        (make lint runs it)

Kubewarden's programs (kwctl, policy-server, the controller, audit-scanner)
and Kube-OVN's are in no package registry these machines reach; they may be
built by hand, outside the repository, to run locally. So no tracked file
may:
- name a build machine's path (`shared/bin`, `/work/`, `/opt/`, `/root/`,
  `/home/`), where such binaries or sources lived;
- hold a recipe that builds them (`cargo build|install` of kwctl,
  policy-server, policy-evaluator or audit-scanner; `go build|install` of
  Kubewarden's or Kube-OVN's modules; a clone of their repositories);
- be a binary program (ELF, Mach-O, PE) or sit in deploy/schemas/, where
  Kubewarden's CRDs used to be copied (they are read from ../shared now).

Prints one line per finding and exits 1, or one summary line and 0.
`--self-test` checks the rules on texts they must and must not match.

    python3 scripts/check-provenance.py --built FILE...   (make shipped-paths)

checks built files that are shipped but not tracked (policy.wasm, whose
dependencies' panic locations name their source folders; the Makefile
remaps them) for a build machine's path.
"""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SELF = "scripts/check-provenance.py"

RULES = [
    ("a build machine's path", re.compile(r"shared/bin\b|(?<![\w.])/(?:work|opt|root|home)/")),
    (
        "a recipe that builds Kubewarden's programs",
        re.compile(
            r"cargo\s+(?:\+\S+\s+)?(?:build\b[^\n`]*?(?:-p|--package|--bin)[ =]|install(?:\s+--?\S+)*\s+)"
            r"(?:kwctl|policy-server|policy-evaluator|audit-scanner)\b"
        ),
    ),
    (
        "a recipe that builds Kubewarden's or Kube-OVN's Go code",
        re.compile(r"go\s+(?:build|install|get|run)\b[^\n]*github\.com/(?:kubewarden|kubeovn)/"),
    ),
    (
        "a clone of Kubewarden's or Kube-OVN's source",
        re.compile(r"git\s+clone\b[^\n]*(?:kubewarden/(?:kubewarden-controller|adm-controller|policy-server|kwctl)|kubeovn/kube-ovn)"),
    ),
]
MAGIC = {b"\x7fELF": "an ELF binary", b"\xcf\xfa\xed\xfe": "a Mach-O binary", b"MZ": "a PE binary"}
# Data that legitimately holds such text: none of it is run.
SKIP_SUFFIXES = (".lock",)


# (text, whether a rule must find it)
SAMPLES = [
    ("PATH=/work/shared/bin:$PATH make test", True),
    ("cargo build --release -p kwctl", True),
    ("cargo build --locked --bin policy-server", True),
    ("cargo +stable install --locked kwctl", True),
    ("go install github.com/kubeovn/kube-ovn/cmd/webhook@v1.15.0", True),
    ("git clone https://github.com/kubewarden/kubewarden-controller", True),
    ("cargo build --target=wasm32-wasip1 --release --locked; then kwctl annotate", False),
    ("python3 e2e/apiserver.py case.json --kubeconfig /tmp/kc", False),
    ("../shared/kubewarden/crds/", False),
]


def self_test():
    wrong = [(t, want) for t, want in SAMPLES if any(r.search(t) for _, r in RULES) != want]
    for text, want in wrong:
        print(f"check-provenance self-test: {text!r} should {'' if want else 'not '}be found")
    print(f"check-provenance self-test: {len(SAMPLES) - len(wrong)} passed, {len(wrong)} failed")
    return 1 if wrong else 0


def tracked():
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return [p for p in out.decode().split("\0") if p]


def built(paths):
    """A build machine's path in built files (the first rule only: a module
    holds no recipe, and is a binary by nature)."""
    what, rule = RULES[0]
    findings = []
    for name in paths:
        text = Path(name).read_bytes().decode("latin-1")
        for m in rule.finditer(text):
            end = text.find("\0", m.start(), m.start() + 200)
            findings.append(f"{name}: {what}: {text[m.start():end if end > 0 else m.start() + 80]!r}")
    for f in findings:
        print(f)
    print(f"check-provenance: {len(paths)} built file(s), {len(findings)} build machine's path(s)")
    return 1 if findings else 0


def main():
    findings = []
    files = tracked()
    for name in files:
        if name.startswith("deploy/schemas/"):
            findings.append(f"{name}: Kubewarden's schemas are read from ../shared/kubewarden, not copied in")
            continue
        path = ROOT / name
        if not path.is_file() or name == SELF or name.endswith(SKIP_SUFFIXES):
            continue
        data = path.read_bytes()
        for magic, what in MAGIC.items():
            if data.startswith(magic) and (magic != b"MZ" or b"PE\0\0" in data[:1024]):
                findings.append(f"{name}: {what}")
        text = data.decode("utf-8", errors="replace")
        for what, rule in RULES:
            for m in rule.finditer(text):
                line = text.count("\n", 0, m.start()) + 1
                findings.append(f"{name}:{line}: {what}: {m.group(0)!r}")
    for f in findings:
        print(f)
    if findings:
        print(f"check-provenance: {len(findings)} finding(s) in {len(files)} tracked files")
        return 1
    print(f"check-provenance: {len(files)} tracked files, no build machine's path, no recipe for outside code, no binary")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--built"]:
        sys.exit(built(sys.argv[2:]))
    sys.exit(self_test() if sys.argv[1:] == ["--self-test"] else main())
