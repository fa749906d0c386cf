#!/usr/bin/env bash
# Builds kube-controller-manager (Kubernetes v1.36.3) into target/cluster/bin/
# (or $CLUSTER_BIN_DIR) from the modules pinned by this directory's go.mod and
# go.sum, for `make controller-oracle` only (local; not part of `make test`
# nor CI): it makes the pods of the workload cases.
#
# Skips the build when the binary was built from the same go.mod, go.sum,
# build scripts and Go version (../../go-build.sh). Version strings as
# ../build.sh sets them.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
out="${CLUSTER_BIN_DIR:-$root/target/cluster/bin}"
. "$here/../../go-build.sh"
. "$here/../kube-version.sh"

stamp="$out/.build-stamp-controller-manager"
inputs=(go.mod go.sum build.sh ../kube-version.sh ../../go-build.sh)
binaries=(kube-controller-manager)
what=kube-controller-manager be=is
skip_if_up_to_date

start_build kube-controller-manager
(cd "$here" && CGO_ENABLED=0 nice "$GO" build -trimpath -ldflags "$ldflags" -o "$out/" \
  k8s.io/kubernetes/cmd/kube-controller-manager)
finish_build
