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

KUBE_VERSION=v1.36.3
# The release's date (the Go module proxy's time for k8s.io/kubernetes
# v1.36.3), so that the same inputs give the same binaries.
BUILD_DATE=2026-07-22T18:07:38Z

stamp="$out/.build-stamp"
want="$(cd "$here" && cat go.mod go.sum build.sh etcd/main.go | sha256sum | cut -d' ' -f1) $("$GO" env GOVERSION)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] \
  && [ -x "$out/kube-apiserver" ] && [ -x "$out/kubectl" ] && [ -x "$out/etcd" ]; then
  echo "cluster binaries are up to date in $out"
  exit 0
fi

major="${KUBE_VERSION#v}"; major="${major%%.*}"
minor="${KUBE_VERSION#v*.}"; minor="${minor%%.*}"
ldflags="-s -w"
for pkg in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
  ldflags+=" -X '$pkg.gitVersion=$KUBE_VERSION'"
  ldflags+=" -X '$pkg.gitMajor=$major' -X '$pkg.gitMinor=$minor'"
  ldflags+=" -X '$pkg.buildDate=$BUILD_DATE'"
  # The module proxy does not tell the release's commit: leave it empty
  # rather than the source's "$Format:%H$" placeholder.
  ldflags+=" -X '$pkg.gitCommit=' -X '$pkg.gitTreeState=clean'"
done

start=$(date +%s)
mkdir -p "$out"
rm -f "$stamp"
echo "building kube-apiserver, kubectl and etcd into $out ($("$GO" env GOVERSION), GOCACHE=$("$GO" env GOCACHE))"
(cd "$here" && CGO_ENABLED=0 "$GO" build -trimpath -ldflags "$ldflags" -o "$out/" \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kubectl ./etcd)
echo "$want" > "$stamp"
echo "cluster binaries built in $(( $(date +%s) - start )) s"
