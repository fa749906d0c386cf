#!/usr/bin/env bash
# Builds the e2e control plane into target/cluster/bin/ (or $CLUSTER_BIN_DIR):
# kube-apiserver and kubectl (Kubernetes v1.36.3) and etcd (v3.6.8), from the
# modules pinned by this directory's go.mod and go.sum.
#
# Skips the build when the binaries were built from the same go.mod, go.sum,
# sources, build scripts and Go version (../go-build.sh). Version strings are
# set as Kubernetes' hack/lib/version.sh sets them, so `kubectl version` says
# v1.36.3.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${CLUSTER_BIN_DIR:-$root/target/cluster/bin}"
. "$here/../go-build.sh"
. "$here/kube-version.sh"

stamp="$out/.build-stamp"
inputs=(go.mod go.sum build.sh kube-version.sh ../go-build.sh etcd/main.go)
binaries=(kube-apiserver kubectl etcd)
what="cluster binaries"
skip_if_up_to_date

start_build "kube-apiserver, kubectl and etcd"
(cd "$here" && CGO_ENABLED=0 "$GO" build -trimpath -ldflags "$ldflags" -o "$out/" \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kubectl ./etcd)
finish_build
