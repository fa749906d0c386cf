#!/usr/bin/env bash
# Builds the e2e control plane into target/cluster/bin/ (or $CLUSTER_BIN_DIR):
# kube-apiserver and kubectl (Kubernetes v1.36.3) and etcd (v3.6.8), from the
# modules pinned by this directory's go.mod and go.sum.
#
# Skips the build when the binaries were built from the same go.mod, go.sum,
# sources, this script and Go version (a stamp file records their hash).
# Version strings are set as Kubernetes' hack/lib/version.sh sets them, so
# `kubectl version` says v1.36.3.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${CLUSTER_BIN_DIR:-$root/target/cluster/bin}"

GO="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
[ -x "$GO" ] || { echo "build.sh: go not found (PATH or /usr/local/go/bin/go)" >&2; exit 1; }

. "$here/kube-version.sh"

stamp="$out/.build-stamp"
want="$(cd "$here" && cat go.mod go.sum build.sh kube-version.sh etcd/main.go | sha256sum | cut -d' ' -f1) $("$GO" env GOVERSION)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] \
  && [ -x "$out/kube-apiserver" ] && [ -x "$out/kubectl" ] && [ -x "$out/etcd" ]; then
  echo "cluster binaries are up to date in $out"
  exit 0
fi

start=$(date +%s)
mkdir -p "$out"
rm -f "$stamp"
echo "building kube-apiserver, kubectl and etcd into $out ($("$GO" env GOVERSION), GOCACHE=$("$GO" env GOCACHE))"
(cd "$here" && CGO_ENABLED=0 "$GO" build -trimpath -ldflags "$ldflags" -o "$out/" \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kubectl ./etcd)
echo "$want" > "$stamp"
echo "cluster binaries built in $(( $(date +%s) - start )) s"
