#!/usr/bin/env bash
# Builds the registry and client of `make e2e-oci` into target/oci/bin/ (or
# $OCI_BIN_DIR): Distribution's registry (v3.1.2, ./registry: its
# filesystem and in-memory storage only) and the oras CLI (v1.3.4), from the
# modules pinned by this directory's go.mod and go.sum.
#
# Skips the build when the binaries were built from the same go.mod, go.sum,
# build scripts and Go version (../go-build.sh).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${OCI_BIN_DIR:-$root/target/oci/bin}"
. "$here/../go-build.sh"

stamp="$out/.build-stamp"
inputs=(go.mod go.sum build.sh ../go-build.sh registry/main.go)
binaries=(registry oras)
what="OCI binaries"
skip_if_up_to_date

start_build "Distribution's registry and oras"
(cd "$here" && CGO_ENABLED=0 "$GO" build -trimpath -ldflags "-s -w" -o "$out/" \
  ./registry oras.land/oras/cmd/oras)
finish_build
