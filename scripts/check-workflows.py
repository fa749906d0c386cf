#!/usr/bin/env python3
"""Every workflow job that runs scripts/install-deps.sh sets up Go first.

    python3 scripts/check-workflows.py [--self-test]   (make lint-workflows runs it)

install-deps.sh checks Go >= 1.26 (kube-apiserver, kubectl and etcd are built
from e2e/cluster/go.mod) and exits when it is missing, so a job that calls it
without an earlier `actions/setup-go` step never runs on GitHub's runners.
Prints one line per problem and exits 1, or one summary line and 0.
"""

import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = ROOT / ".github" / "workflows"


def problems(name, workflow):
    out = []
    for job_name, job in ((workflow or {}).get("jobs") or {}).items():
        go = False
        for step in job.get("steps") or []:
            if str(step.get("uses", "")).startswith("actions/setup-go@"):
                go = True
            if "scripts/install-deps.sh" in str(step.get("run", "")) and not go:
                out.append(f"{name}: job {job_name} runs scripts/install-deps.sh before any actions/setup-go step")
    return out


def self_test():
    setup = {"uses": "actions/setup-go@4a3601121dd01d1626a1e23e37211e3254c1c06c"}
    deps = {"run": "scripts/install-deps.sh"}
    cases = [("setup-go first", [setup, deps], 0), ("no setup-go", [deps], 1), ("setup-go after", [deps, setup], 1),
             ("no install-deps", [{"run": "make test"}], 0)]
    failed = 0
    for what, steps, want in cases:
        got = problems("t.yml", {"jobs": {"j": {"steps": steps}}})
        if len(got) != want:
            failed += 1
            print(f"check-workflows self-test: {what}: {got}")
    print(f"check-workflows self-test: {len(cases) - failed} passed, {failed} failed")
    return failed


def main():
    if "--self-test" in sys.argv[1:]:
        sys.exit(1 if self_test() else 0)
    files = sorted(WORKFLOWS.glob("*.yml"))
    found = [p for f in files for p in problems(f.name, yaml.safe_load(f.read_text()))]
    for line in found:
        print(f"check-workflows: {line}")
    if found:
        sys.exit(1)
    print(f"check-workflows: {len(files)} workflow files, every job running install-deps.sh sets up Go first")


if __name__ == "__main__":
    main()
