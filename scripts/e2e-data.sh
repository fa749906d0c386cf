#!/usr/bin/env bash
# Regenerates the e2e requests and replay sessions in test_data/ with the real
# runtime: for every line of test_data/examples.txt (<name> <case>), kwctl
# evaluates the case's AdmissionRequest against the API server stand-in
# serving the case's cluster (e2e/suites/test_conformance_kwctl.py), recording its host
# calls. test_data/<name>.json is the request, test_data/session_<name>.yml
# the session kwctl recorded, unchanged.
#
#   make e2e-data            (needs kwctl on PATH)
#
# The settings_*.yaml files are written by hand and not touched here.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v kwctl >/dev/null || { echo "kwctl is not on PATH (README, Development)"; exit 1; }

recorded=$(mktemp -d)
trap 'rm -rf "$recorded"' EXIT
mapfile -t lines < <(grep -v '^#' test_data/examples.txt | grep .)
cases=()
for line in "${lines[@]}"; do
  read -r _ case <<<"$line"
  cases+=("$case.json")
done
# The answers are compared with the cases' expectations on the way.
python3 -m pytest e2e/suites/test_conformance_kwctl.py --policy annotated-policy.wasm \
  --cases "${cases[@]}" --sessions "$recorded"
for line in "${lines[@]}"; do
  read -r name case <<<"$line"
  jq .request "$case.json" > "test_data/$name.json"
  cp "$recorded/$(basename "$case").yml" "test_data/session_$name.yml"
  echo "test_data/$name.json, test_data/session_$name.yml"
done
