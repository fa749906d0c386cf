#!/usr/bin/env bash
# What `make test` needs besides Rust and Go, on a Debian or Ubuntu machine
# (CI runs it on GitHub's ubuntu-latest): the wasm target and Rust
# components, the distribution's bats, jq, binaryen (wasm-opt), openssl,
# g++, PyYAML and openvswitch-common (ovsdb-server for OVN's databases in
# `make e2e-kube-ovn`), and the PyPI validators of `make validate-deploy`.
# Installs only what is missing; as a user other than root, packages through
# sudo and Python modules with pip's --user.
set -euo pipefail

sudo=
[ "$(id -u)" = 0 ] || sudo=sudo

rustup target add wasm32-wasip1
rustup component add rustfmt clippy

if ! command -v bats >/dev/null || ! command -v jq >/dev/null || ! command -v wasm-opt >/dev/null \
  || ! command -v openssl >/dev/null || ! command -v g++ >/dev/null || ! python3 -c 'import yaml' 2>/dev/null \
  || ! command -v ovsdb-tool >/dev/null; then
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq bats jq binaryen openssl g++ python3-yaml openvswitch-common >/dev/null
fi
if ! python3 -c 'import jsonschema, yaml, kubernetes_validate' 2>/dev/null; then
  user=
  [ -n "$sudo" ] && user=--user
  # A distribution's Python may refuse pip outside a virtualenv (PEP 668):
  # these three packages do not clash with its own.
  python3 -m pip install -q $user jsonschema pyyaml kubernetes-validate 2>/dev/null \
    || python3 -m pip install -q $user --break-system-packages jsonschema pyyaml kubernetes-validate
fi
