#!/usr/bin/env python3
"""`make allocator-replay`: tests/allocator's recorded outcome sets held against the policy, without Go.

    python3 scripts/allocator_replay.py [--wasm policy.wasm] [--answers FILE] [DIR]

Each case in DIR (default tests/allocator) is a divergence `make allocator-diff` found: a Pod
request, its cluster, and under `allocator` the set of outcomes kube-ovn-controller's own
allocation code gave over N orders (`commit`, `orders`, `outcomes`, `input`). The policy's answer
to every case (the conformance binary's --answers, or FILE) must hold the property of
e2e/tools/allocator_diff.py's `judge`: admitted only where no recorded outcome gives an address a
second holder, another namespace's reserved pool address or Vip, or panics the controller; a
refusal of its own only where some outcome does one of those or allocates nothing. A record whose
`input` is not the case's hash (e2e/harness/cases.case_input) is stale and fails too: run
`make allocator-diff KUBE_OVN_SRC=… ALLOCATOR_FLAGS="--record --cases tests/allocator --count 0"`.

Last line: `allocator-replay: N cases, N hold, N fail`; exit 1 on any failure.
"""

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from e2e.harness.cases import case_input  # noqa: E402
from e2e.tools.allocator_diff import CONFORMANCE, answer_text, describe, judge  # noqa: E402


def answers_of(cases_dir, wasm, answers_file):
    import subprocess

    path = answers_file
    tmp = None
    if path is None:
        tmp = tempfile.NamedTemporaryFile("r", suffix=".jsonl", delete=False)
        path = tmp.name
        subprocess.run(CONFORMANCE + ["--answers", path, str(wasm), str(cases_dir)], cwd=ROOT,
                       capture_output=True, text=True)
    out = {}
    for line in Path(path).read_text().splitlines():
        a = json.loads(line)
        out[Path(a["file"]).stem] = a
    if tmp is not None:
        Path(path).unlink()
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir", nargs="?", default=str(ROOT / "tests/allocator"))
    ap.add_argument("--wasm", default=str(ROOT / "policy.wasm"))
    ap.add_argument("--answers", help="the conformance binary's --answers file, already written")
    args = ap.parse_args(argv)
    cases_dir = Path(args.dir)
    files = sorted(cases_dir.glob("*.json")) if cases_dir.is_dir() else []
    answers = answers_of(cases_dir, args.wasm, args.answers) if files else {}
    hold = fail = 0
    for f in files:
        case = json.loads(f.read_text())
        rec = case.get("allocator") or {}
        answer = answers.get(f.stem)
        problem = None
        if not rec.get("outcomes"):
            problem = "no recorded outcomes"
        elif rec.get("input") != case_input(case):
            problem = f"stale record (input {rec.get('input')}, the case hashes to {case_input(case)})"
        elif answer is None:
            problem = "the policy gave no answer"
        else:
            verdict = judge(case, answer, rec["outcomes"])
            if verdict is not None:
                problem = f"{verdict}: policy {answer_text(answer)}"
        if problem is None:
            hold += 1
            continue
        fail += 1
        print(f"FAIL {f.stem}: {problem}")
        for o in rec.get("outcomes") or []:
            print(f"    {describe(o)}")
    print(f"allocator-replay: {len(files)} cases, {hold} hold, {fail} fail")
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main())
