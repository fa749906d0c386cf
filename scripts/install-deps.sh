#!/usr/bin/env bash
# What `make test` needs besides Rust, on a Debian machine, as root:
# the wasm target and Rust components, Debian's bats, jq, binaryen
# (wasm-opt), openssl and PyYAML, and the PyPI validators of
# `make validate-deploy`. Installs only what is missing.
set -euo pipefail

rustup target add wasm32-wasip1
rustup component add rustfmt clippy

if ! command -v bats >/dev/null || ! command -v jq >/dev/null || ! command -v wasm-opt >/dev/null \
  || ! command -v openssl >/dev/null || ! command -v g++ >/dev/null || ! python3 -c 'import yaml' 2>/dev/null; then
  apt-get update -qq
  apt-get install -y -qq bats jq binaryen openssl g++ python3-yaml >/dev/null
fi
python3 -c 'import jsonschema, yaml, kubernetes_validate' 2>/dev/null \
  || pip install -q jsonschema pyyaml kubernetes-validate
