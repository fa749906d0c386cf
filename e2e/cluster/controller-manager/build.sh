#!/usr/bin/env bash
# Builds kube-controller-manager (Kubernetes v1.36.3) into target/cluster/bin/
# (or $CLUSTER_BIN_DIR) from the modules pinned by this directory's go.mod and
# go.sum, for `make controller-oracle` only (local; not part of `make test`
# nor CI): it makes the pods of the workload cases.
#
# Skips the build when the binary was built from the same go.mod, go.sum,
# this script and Go version (a stamp file records their hash). Version
# strings as ../build.sh sets them.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
out="${CLUSTER_BIN_DIR:-$root/target/cluster/bin}"

GO="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
[ -x "$GO" ] || { echo "build.sh: go not found (PATH or /usr/local/go/bin/go)" >&2; exit 1; }

. "$here/../kube-version.sh"

stamp="$out/.build-stamp-controller-manager"
want="$(cd "$here" && cat go.mod go.sum build.sh ../kube-version.sh | sha256sum | cut -d' ' -f1) $("$GO" env GOVERSION)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$out/kube-controller-manager" ]; then
  echo "kube-controller-manager is up to date in $out"
  exit 0
fi

start=$(date +%s)
mkdir -p "$out"
rm -f "$stamp"
echo "building kube-controller-manager into $out ($("$GO" env GOVERSION), GOCACHE=$("$GO" env GOCACHE))"
(cd "$here" && CGO_ENABLED=0 nice "$GO" build -trimpath -ldflags "$ldflags" -o "$out/" \
  k8s.io/kubernetes/cmd/kube-controller-manager)
echo "$want" > "$stamp"
echo "kube-controller-manager built in $(( $(date +%s) - start )) s"
